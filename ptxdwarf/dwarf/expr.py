"""DWARF location expressions: decode, encode, and PTX register names.

CUDA describes a value in a PTX register with ``DW_OP_regx`` whose operand is the
register's name, ASCII, read as a big-endian number (``%r1`` is 0x257231).
``DW_OP_addr`` operands may be symbols (a kernel parameter, a ``__local_depot``,
a global variable); they are carried as :class:`~ptxdwarf.dwarf.image.Symbol`.
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import PtxDwarfError, RegisterNameError
from .constants import OP, op_code, op_name
from .forms import read_sleb, read_uleb, sleb_bytes, uleb_bytes
from .image import Block, Reloc, Symbol

__all__ = [
    "IDENTIFIER",
    "MAX_REGISTER_NAME",
    "ExpressionError",
    "Op",
    "decode_expression",
    "encode_expression",
    "register_name",
    "register_number",
]

#: The longest PTX register name a ULEB128 ``DW_OP_regx`` operand can carry for cuda-gdb.
MAX_REGISTER_NAME = 8


class ExpressionError(PtxDwarfError):
    """A location expression that cannot be decoded or encoded."""


# Operand kinds: a = address (may be a symbol), 1u/1s/2u/2s/4u/4s/8u/8s fixed,
# u = ULEB128, s = SLEB128, o = 32-bit section offset, B = ULEB128 length + bytes,
# b = 1-byte length + bytes.
_OPERANDS: dict[int, tuple[str, ...]] = {
    0x03: ("a",),  # addr
    0x08: ("1u",),  # const1u
    0x09: ("1s",),
    0x0A: ("2u",),
    0x0B: ("2s",),
    0x0C: ("4u",),
    0x0D: ("4s",),
    0x0E: ("8u",),
    0x0F: ("8s",),
    0x10: ("u",),  # constu
    0x11: ("s",),  # consts
    0x15: ("1u",),  # pick
    0x23: ("u",),  # plus_uconst
    0x28: ("2s",),  # bra
    0x2F: ("2s",),  # skip
    0x90: ("u",),  # regx
    0x91: ("s",),  # fbreg
    0x92: ("u", "s"),  # bregx
    0x93: ("u",),  # piece
    0x94: ("1u",),  # deref_size
    0x95: ("1u",),  # xderef_size
    0x98: ("2u",),  # call2
    0x99: ("4u",),  # call4
    0x9A: ("o",),  # call_ref
    0x9D: ("u", "u"),  # bit_piece
    0x9E: ("B",),  # implicit_value
    0xA0: ("o", "s"),  # implicit_pointer
    0xA1: ("u",),  # addrx
    0xA2: ("u",),  # constx
    0xA3: ("B",),  # entry_value
    0xA4: ("u", "b"),  # const_type
    0xA5: ("u", "u"),  # regval_type
    0xA6: ("1u", "u"),  # deref_type
    0xA7: ("1u", "u"),  # xderef_type
    0xA8: ("u",),  # convert
    0xA9: ("u",),  # reinterpret
    0xF2: ("o", "s"),  # GNU_implicit_pointer
    0xF3: ("B",),  # GNU_entry_value
    0xF4: ("u", "b"),  # GNU_const_type
    0xF5: ("u", "u"),  # GNU_regval_type
    0xF6: ("1u", "u"),  # GNU_deref_type
    0xF7: ("u",),  # GNU_convert
    0xF9: ("u",),  # GNU_reinterpret
    0xFA: ("4u",),  # GNU_parameter_ref
    0xFB: ("u",),  # GNU_addr_index
    0xFC: ("u",),  # GNU_const_index
    0xFD: ("o",),  # GNU_variable_value
}
for _c in range(0x70, 0x90):  # breg0..breg31
    _OPERANDS[_c] = ("s",)

_FIXED = {
    "1u": struct.Struct("<B"),
    "1s": struct.Struct("<b"),
    "2u": struct.Struct("<H"),
    "2s": struct.Struct("<h"),
    "4u": struct.Struct("<I"),
    "4s": struct.Struct("<i"),
    "8u": struct.Struct("<Q"),
    "8s": struct.Struct("<q"),
    "o": struct.Struct("<I"),
}

_KNOWN = frozenset(int(op) for op in OP)


def register_number(name: str) -> int:
    """The ``DW_OP_regx`` operand of a PTX register name (``%r1`` -> 0x257231)."""
    try:
        raw = name.encode("ascii")
    except UnicodeEncodeError:
        raise RegisterNameError(f"register name {name!r} is not ASCII") from None
    if not raw:
        raise RegisterNameError("empty register name")
    if len(raw) > MAX_REGISTER_NAME:
        raise RegisterNameError(
            f"register name {name!r} has {len(raw)} characters; DWARF for cuda-gdb can name "
            f"at most {MAX_REGISTER_NAME} (rename the register)"
        )
    return int.from_bytes(raw, "big")


#: A PTX identifier (``%r1``, ``temp``, ``p``, ``__x``), the one home of the pattern (here, the
#: lowest layer that reads one; :mod:`ptxdwarf.ptx.lexer` takes it from here).
IDENTIFIER = r"[A-Za-z][\w$]*|[_$%][\w$]+"
#: A register name a ``DW_OP_regx`` operand spells: an ASCII identifier, or ``%`` and any
#: printable characters; ptxas maps such a name to a machine register whether or not it
#: starts with ``%`` (cases ``regx.*``).
_REGISTER_NAME = re.compile(("%[!-~]+|" + IDENTIFIER).encode("ascii"))


@functools.lru_cache(maxsize=1 << 16)
def register_name(number: int) -> str | None:
    """The PTX register name a ``DW_OP_regx`` operand spells, or None if it spells none
    (remembered: a module names each register many times)."""
    if number <= 0:
        return None
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    if _REGISTER_NAME.fullmatch(raw) is None:
        return None
    return raw.decode("ascii")


@dataclass(frozen=True, slots=True)
class Op:
    """One operation of a location expression.

    ``args`` are the operands as numbers (bytes for block operands). A
    ``DW_OP_addr`` operand that is a symbol has it in ``symbol``; ``args[0]`` is
    then the number the bytes hold (0 in PTX text).
    """

    code: int
    args: tuple[int | bytes, ...] = ()
    symbol: Symbol | None = None
    offset: int = 0

    @property
    def name(self) -> str:
        """``DW_OP_regx``."""
        return op_name(self.code)

    @property
    def register(self) -> str | None:
        """The PTX register of ``DW_OP_regx`` / ``DW_OP_bregx``, if the operand spells one."""
        if self.code in (0x90, 0x92) and self.args and isinstance(self.args[0], int):
            return register_name(self.args[0])
        return None

    def __str__(self) -> str:
        parts = [self.name]
        kinds = _OPERANDS.get(self.code, ())
        signed = [k.endswith("s") for k in kinds] + [False] * len(self.args)
        reg = self.register
        if reg is not None:
            parts.append(reg)
            parts.extend(_fmt_arg(a, s) for a, s in zip(self.args[1:], signed[1:], strict=False))
        elif self.symbol is not None:
            parts.append(str(self.symbol))
        else:
            parts.extend(_fmt_arg(a, s) for a, s in zip(self.args, signed, strict=False))
        return " ".join(parts)

    @classmethod
    def make(cls, name: str | int, *args: int | bytes | Symbol) -> Op:
        """``Op.make("regx", 0x257231)``, ``Op.make("addr", Symbol("x"))``."""
        code = op_code(name)
        if code == 0x03 and args and isinstance(args[0], Symbol):
            return cls(code, (0,), args[0])
        return cls(code, tuple(a for a in args if not isinstance(a, Symbol)))


def _fmt_arg(arg: int | bytes, signed: bool = False) -> str:
    """An operand as llvm-dwarfdump shows it: a signed one in decimal with its sign
    (``-16``, ``+8``), others in hex from 10 on."""
    if isinstance(arg, bytes):
        return "0x" + arg.hex() if arg else "<empty>"
    if signed:
        return f"{arg:+d}"
    return f"0x{arg:x}" if arg >= 10 else str(arg)


def decode_expression(block: bytes, address_size: int) -> list[Op]:
    """The operations of an expression. Relocations in a :class:`Block` become symbols."""
    relocs = {r.offset: r for r in getattr(block, "relocs", ())}
    data = bytes(block)
    end = len(data)
    pos = 0
    ops: list[Op] = []
    while pos < end:
        start = pos
        code = data[pos]
        pos += 1
        kinds = _OPERANDS.get(code, ())
        if not kinds and code not in _KNOWN:
            raise ExpressionError(f"unknown operation 0x{code:02x} at byte {start} of the expression")
        args: list[int | bytes] = []
        symbol = None
        try:
            for kind in kinds:
                if kind == "a":
                    fmt = _FIXED["8u"] if address_size == 8 else _FIXED["4u"]
                    if pos + fmt.size > end:
                        raise IndexError
                    reloc = relocs.get(pos)
                    if reloc is not None:
                        symbol = reloc.symbol
                    args.append(fmt.unpack_from(data, pos)[0])
                    pos += fmt.size
                elif kind == "u":
                    value, pos = read_uleb(data, pos)
                    args.append(value)
                elif kind == "s":
                    value, pos = read_sleb(data, pos)
                    args.append(value)
                elif kind in ("B", "b"):
                    if kind == "B":
                        size, pos = read_uleb(data, pos)
                    else:
                        if pos >= end:
                            raise IndexError
                        size = data[pos]
                        pos += 1
                    if pos + size > end:
                        raise IndexError
                    args.append(data[pos : pos + size])
                    pos += size
                else:
                    fmt = _FIXED[kind]
                    if pos + fmt.size > end:
                        raise IndexError
                    args.append(fmt.unpack_from(data, pos)[0])
                    pos += fmt.size
        except IndexError:
            raise ExpressionError(
                f"{op_name(code)} at byte {start} of the expression runs past its end ({end} bytes)"
            ) from None
        ops.append(Op(code, tuple(args), symbol, start))
    return ops


# Operations with one ULEB operand, and DW_OP_addr: the common cases of encode_expression.
_ONE_ULEB = frozenset(code for code, kinds in _OPERANDS.items() if kinds == ("u",))
_ADDR = 0x03


def encode_expression(ops: Iterable[Op], address_size: int) -> Block:
    """The bytes of an expression; symbols become relocations of the block."""
    out = bytearray()
    relocs: list[Reloc] = []
    for op in ops:
        code = op.code
        operands = op.args
        if code in _ONE_ULEB and len(operands) == 1 and type(operands[0]) is int and operands[0] >= 0:
            out.append(code)
            out += uleb_bytes(operands[0])
            continue
        if code == _ADDR and op.symbol is not None and len(operands) <= 1:
            size = 8 if address_size == 8 else 4
            out.append(code)
            relocs.append(Reloc(len(out), size, op.symbol))
            out += bytes(size)
            continue
        kinds = _OPERANDS.get(op.code, ())
        if not kinds and op.code not in _KNOWN:
            raise ExpressionError(f"unknown operation 0x{op.code:02x}")
        if len(op.args) != len(kinds) and not (kinds == ("a",) and op.symbol is not None):
            raise ExpressionError(f"{op.name} takes {len(kinds)} operand(s), got {len(op.args)}")
        out.append(op.code)
        args: Sequence[int | bytes] = op.args or (0,)
        for kind, arg in zip(kinds, args, strict=False):
            try:
                if kind == "a":
                    size = 8 if address_size == 8 else 4
                    if op.symbol is not None:
                        relocs.append(Reloc(len(out), size, op.symbol))
                        arg = 0
                    out += _FIXED["8u" if size == 8 else "4u"].pack(_int(arg))
                elif kind == "u":
                    if _int(arg) < 0:
                        raise ExpressionError(f"{op.name} operand {arg!r} is negative")
                    out += uleb_bytes(_int(arg))
                elif kind == "s":
                    out += sleb_bytes(_int(arg))
                elif kind in ("B", "b"):
                    raw = bytes(arg) if isinstance(arg, (bytes, bytearray)) else b""
                    out += uleb_bytes(len(raw)) if kind == "B" else bytes([len(raw)])
                    out += raw
                else:
                    out += _FIXED[kind].pack(_int(arg))
            except struct.error:
                raise ExpressionError(f"{op.name} operand {arg!r} does not fit {kind}") from None
    return Block(bytes(out), relocs)


def _int(arg: int | bytes) -> int:
    if isinstance(arg, int):
        return arg
    raise ExpressionError(f"expected a number, got {arg!r}")
