"""Where a device function's parameters are: the registers its ``ld.param`` loads go to.

A device function's parameter has no address ptxas can keep, so it is described by
the register(s) its ``ld.param`` loads go to (see :mod:`ptxdwarf.autodebug`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from ..cuda.quirks import MISREAD_PIECE_SIZES, workaround
from ..dwarf.constants import AddressClass
from ..dwarf.expr import MAX_REGISTER_NAME, Op, register_number
from ..loc import Location, expression, register
from ..ptx.lexer import NAME
from ..ptx.statements import Stmt
from .registers import fits

_LD_PARAM = re.compile(
    r"ld\.param(?:::\w+)?((?:\.\w+)*)\s+(.*?)\s*,\s*\[\s*(" + NAME + r")\s*(?:\+\s*(\d+))?\s*\]\s*",
    re.DOTALL,
)
_WIDTHS = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}


@dataclass
class Load:
    """Bytes ``offset..offset+width`` of a parameter loaded into ``register``."""

    offset: int
    width: int
    register: str | None  # None: a sink ("_")


def param_loads(
    instrs: Iterable[Stmt], names: set[str], renamed: Mapping[str, str] | None = None
) -> dict[str, list[list[Load]]]:
    """Parameter name -> the loads of each ``ld.param`` instruction that reads it; the
    registers under their new names (``renamed``)."""
    renamed = renamed or {}
    out: dict[str, list[list[Load]]] = {}
    for s in instrs:
        text = s.text.strip()
        if not text.startswith("ld.param"):
            continue
        m = _LD_PARAM.fullmatch(text)
        if m is None or m.group(3) not in names:
            continue
        suffixes = [x for x in m.group(1).split(".") if x]
        width = None
        count = 1
        for x in suffixes:
            vm = re.fullmatch(r"v(\d+)", x)
            if vm:
                count = int(vm.group(1))
            tm = re.fullmatch(r"[bsuf](8|16|32|64|128)", x)
            if tm:
                width = _WIDTHS[tm.group(1)]
        if width is None:
            continue
        dest = m.group(2).strip()
        if dest.startswith("{") and dest.endswith("}"):
            regs = [r.strip() for r in dest[1:-1].split(",")]
        else:
            regs = [dest]
        if len(regs) != count:
            continue
        base = int(m.group(4) or 0)
        loads = [
            Load(base + i * width, width, None if r == "_" else renamed.get(r, r)) for i, r in enumerate(regs)
        ]
        out.setdefault(m.group(3), []).append(loads)
    return out


_MAX_PIECE = 64  # one ULEB byte that is no opcode with operands (0x40 = DW_OP_lit16)


@workaround("piece-size")
def _empty_pieces(size: int) -> list[Op]:
    """``DW_OP_piece`` ops without a location covering ``size`` bytes, in sizes ptxas reads."""
    ops = []
    while size > 0:
        n = min(size, _MAX_PIECE)
        if n in MISREAD_PIECE_SIZES:
            n -= 1
        ops.append(Op.make("piece", n))
        size -= n
    return ops


#: A parameter larger than this is not described piece by piece (``.b8 p[2147483648]`` would
#: take 33 million empty pieces).
MAX_PIECED_SIZE = 65536


@workaround("func-param-address")
def device_param_location(
    size: int | None, loads: list[list[Load]], mapped: Collection[str] | None = None
) -> tuple[Location | None, str | None]:
    """The location of a device-function parameter from its ``ld.param`` loads, or (None, why);
    ``mapped``: the only registers to name (the others become empty pieces)."""
    if not loads:
        return None, "never loaded by ld.param"
    if size is not None and size > MAX_PIECED_SIZE:
        return None, f"{size} bytes: too large to describe piece by piece"
    if any(x.offset + x.width > MAX_PIECED_SIZE for group in loads for x in group):
        return None, f"loads past byte {MAX_PIECED_SIZE}: too far to describe piece by piece"
    flat = [x for group in loads for x in group]
    chosen = _whole_register(size, flat)
    if chosen is not None:
        if not fits(chosen):
            return None, f"loaded into {chosen}, whose name is longer than {MAX_REGISTER_NAME} characters"
        if mapped is not None and chosen not in mapped:
            return None, f"loaded into {chosen}, which ptxas's register map does not place"
        return register(chosen), None
    return _pieces(size, flat, mapped)


def _whole_register(size: int | None, flat: list[Load]) -> str | None:
    """The one register that holds the whole parameter: where every load is of all its bytes
    into the same register."""
    whole = [
        x for x in flat if x.offset == 0 and x.register is not None and (size is None or x.width >= size)
    ]
    if (
        whole
        and len(whole) == len(flat)
        and len({x.register for x in whole}) == 1
        and len({x.width for x in whole}) == 1
    ):
        return whole[0].register
    return None


def _pieces(
    size: int | None, flat: list[Load], mapped: Collection[str] | None
) -> tuple[Location | None, str | None]:
    """The parameter piece by piece: each offset loaded into one register, no overlaps."""
    by_offset: dict[int, Load] = {}
    for x in flat:
        if x.register is None:
            continue
        seen = by_offset.get(x.offset)
        if seen is not None and (seen.register != x.register or seen.width != x.width):
            return None, f"bytes {x.offset}.. are loaded into both {seen.register} and {x.register}"
        by_offset[x.offset] = x
    ops: list[Op] = []
    pos = 0
    described = 0
    for offset in sorted(by_offset):
        x = by_offset[offset]
        if offset < pos:
            return None, f"loads overlap at byte {offset}"
        ops.extend(_empty_pieces(offset - pos))
        if (
            fits(x.register or "")
            and x.width not in MISREAD_PIECE_SIZES
            and (mapped is None or x.register in mapped)
        ):
            ops.append(Op.make("regx", register_number(x.register or "")))
            ops.append(Op.make("piece", x.width))
            described += 1
        else:
            ops.extend(_empty_pieces(x.width))
        pos = offset + x.width
    if size is not None and pos > size:
        return None, f"loads reach byte {pos} of a {size}-byte parameter"
    if not described:
        return (
            None,
            "loaded only into registers that cannot be described (long names, 16-byte loads, unmapped)",
        )
    if size is not None and pos < size:
        ops.extend(_empty_pieces(size - pos))
    return expression(ops, AddressClass.REG), None
