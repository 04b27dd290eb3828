"""Writers compiled per DIE shape, for the DIEs the builder makes.

A builder-made module has a few dozen distinct shapes (tag, children, attribute
names and forms) over hundreds of thousands of DIEs. For each shape met, the
encoder compiles one small function that writes a DIE's values in order, with
the forms settled for the encoding at hand (as gimli's writer does per
abbreviation). Each writer mirrors what the general path of
:class:`ptxdwarf.encode._InfoEncoder` writes for the same attributes: same bytes,
relocations, fields and record breaks. A value a writer does not expect raises,
and the encoder then writes that DIE the general way, errors included.
"""

from __future__ import annotations

import struct
from typing import Any, Callable

from .constants import FORM
from .expr import Op, encode_expression
from .forms import sleb_bytes, uleb_bytes
from .image import Reloc, Symbol
from .model import AUTO_EXPR, AUTO_FLAG, AUTO_FORM, AUTO_REF, AUTO_SECTION, AUTO_STRING, Attribute, BuiltDIE, DIE
from .schemas import Block

__all__ = ["ExpressionCache", "ShapeWriter", "block_of", "compile_shape", "resolve_form"]

#: ``writer(values, out, fields, fixups, relocs, unit_start, offsets)`` appends one DIE's
#: attribute values; ``offsets`` maps ``id(die)`` to the offsets of the DIEs already written.
ShapeWriter = Callable[[tuple[Any, ...], bytearray, dict[int, int], list[Any], list[Reloc], int, dict[int, int]], None]


def resolve_form(kind: int, version: int, strings: str, dwarf4_forms: bool) -> int:
    """The form a built spec is written with in this encoding."""
    if kind >= 0:
        return kind & ~AUTO_FORM
    modern = version >= 4 and dwarf4_forms
    if kind == AUTO_STRING:
        return int(FORM.strp) if strings == "strp" else int(FORM.string)
    if kind == AUTO_FLAG:
        return int(FORM.flag_present) if modern else int(FORM.flag)
    if kind == AUTO_REF:
        return int(FORM.ref4)
    if kind == AUTO_EXPR:
        return int(FORM.exprloc) if modern else int(FORM.block1)
    if kind == AUTO_SECTION:
        return int(FORM.sec_offset) if modern else int(FORM.data4)
    raise ValueError(f"unknown built form placeholder {kind}")


def _sym(symbol: Symbol) -> Symbol:
    """The symbol as a relocation holds it (name and addend only)."""
    if type(symbol) is not Symbol:
        raise TypeError(f"not a symbol: {symbol!r}")
    return symbol if symbol.value is None else Symbol(symbol.name, symbol.addend)


def block_of(value: Any, address_size: int) -> Block:
    """A block or expression value as the bytes (and relocations) it is written as."""
    if isinstance(value, Block):
        return value
    if isinstance(value, (bytes, bytearray)):
        return Block(bytes(value))
    if isinstance(value, (list, tuple)) and all(isinstance(op, Op) for op in value):
        return encode_expression(value, address_size)
    raise TypeError(f"not a block or expression: {value!r}")


class ExpressionCache:
    """:func:`block_of`, remembered by the identity of an operation tuple (kept alive here)."""

    def __init__(self, address_size: int) -> None:
        self.address_size = address_size
        self.by_id: dict[int, tuple[Any, Block]] = {}

    def get(self, value: Any) -> Block:
        found = self.by_id.get(id(value))
        if found is not None and found[0] is value:
            return found[1]
        block = block_of(value, self.address_size)
        if type(value) is tuple:  # lists may change between DIEs
            self.by_id[id(value)] = (value, block)
        return block


def compile_shape(
    specs: tuple[tuple[int, int], ...],
    forms: list[int],
    *,
    address_size: int,
    version: int,
    string_symbol: Callable[[bytes], Symbol],
    location_value: Callable[[Any, int, int, bytearray, list[Reloc]], None],
    blocks: ExpressionCache,
) -> ShapeWriter | None:
    """The writer of a shape's values (``forms`` settled), or None for forms it does not handle.

    ``string_symbol`` gives the relocation symbol of a ``.debug_str`` string;
    ``location_value(value, at, size, out, relocs)`` writes a location list reference.
    """
    addr = "Q" if address_size == 8 else "I"
    sizes = {
        int(FORM.addr): (address_size, addr),
        int(FORM.data2): (2, "H"),
        int(FORM.data4): (4, "I"),
        int(FORM.data8): (8, "Q"),
        int(FORM.sec_offset): (4, "I"),
    }
    ns: dict[str, Any] = {
        "Reloc": Reloc,
        "Symbol": Symbol,
        "_sym": _sym,
        "_strp": string_symbol,
        "_loc": location_value,
        "_block": blocks.get,
        "_by_id": blocks.by_id,
        "_pack_ref": struct.Struct("<I").pack,
        "_uleb": uleb_bytes,
        "_sleb": sleb_bytes,
    }
    lines = ["def _write(v, out, fields, fixups, relocs, unit_start, offsets):"]
    emit = lines.append
    for i, ((name, _kind), form) in enumerate(zip(specs, forms)):
        x = f"v[{i}]"
        if form == FORM.string:
            emit(f"    s = {x}.encode('utf-8', 'surrogateescape')")
            emit("    if b'\\0' in s: raise ValueError('NUL in string')")
            emit("    out += s")
            emit("    out.append(0)")
        elif form == FORM.strp:
            emit("    at = len(out)")
            emit("    fields[at] = 4")
            emit(f"    relocs.append(Reloc(at, 4, _strp({x}.encode('utf-8', 'surrogateescape'))))")
            emit("    out += b'\\0\\0\\0\\0'")
        elif form in (FORM.data1, FORM.flag):
            emit(f"    x = {x}")
            emit("    if type(x) is not int and type(x) is not bool: raise TypeError")
            emit("    out.append(x)")
        elif form == FORM.flag_present:
            emit(f"    if {x} is not True: raise ValueError('flag_present holds True only')")
        elif form in sizes:
            size, fmt = sizes[form]
            pack = f"_pack{i}"
            ns[pack] = struct.Struct("<" + fmt).pack
            emit(f"    x = {x}")
            emit("    at = len(out)")
            emit(f"    fields[at] = {size}")
            emit(f"    if type(x) is int: out += {pack}(x)")
            emit(f"    elif type(x) is Symbol: relocs.append(Reloc(at, {size}, _sym(x))); out += bytes({size})")
            if form in (FORM.data4, FORM.sec_offset):
                emit(f"    else: _loc(x, at, {size}, out, relocs)")
            else:
                emit("    else: raise TypeError")
        elif form == FORM.ref4:
            attr = f"_attr{i}"
            ns[attr] = Attribute(name, int(FORM.ref4), None)
            # A DIE written already (types usually come first) is referred to right away;
            # others wait for the encoder's fixups.
            emit(f"    x = {x}")
            emit("    at = len(out)")
            emit("    fields[at] = 4")
            emit("    o = offsets.get(id(x))")
            emit("    if o is not None: out += _pack_ref(o - unit_start)")
            emit("    elif type(x) is not BuiltDIE and type(x) is not DIE: raise TypeError")
            emit(f"    else: fixups.append((at, 4, x, unit_start, {attr})); out += b'\\0\\0\\0\\0'")
        elif form == FORM.sdata:
            emit(f"    out += _sleb({x})")
        elif form == FORM.udata:
            emit(f"    out += _uleb({x})")
        elif form in (FORM.block1, FORM.exprloc):
            emit(f"    x = {x}")
            emit("    f = _by_id.get(id(x))")
            emit("    b = f[1] if f is not None and f[0] is x else _block(x)")
            emit("    n = len(b)")
            if form == FORM.block1:
                emit("    if n > 0xFF: raise ValueError('block1 too long')")
                emit("    out.append(n)")
            else:
                emit("    out += _uleb(n)")
            emit("    first = len(out)")
            emit("    out += b")
            emit("    for r in b.relocs: relocs.append(Reloc(first + r.offset, r.size, _sym(r.symbol)))")
        else:
            return None
    emit("    return None")
    ns["BuiltDIE"] = BuiltDIE
    ns["DIE"] = DIE
    exec(compile("\n".join(lines), f"<ptxdwarf shape {version}/{address_size}>", "exec"), ns)
    return ns["_write"]  # type: ignore[no-any-return]
