"""ptxas's register map: where each PTX register lives in SASS, per function.

``ptxas -g`` writes two undocumented sections beside the DWARF. Their layout was
established by measurement (``docs/register-map.md``: the experiments, and what
stays unknown):

``.nv_debug_info_reg_sass``
    For each function: its name (NUL-terminated), a little-endian ``u32`` count, then
    that many entries of ``u32 piece``, the PTX register name (NUL-terminated), ``u32``
    SASS register (number in the low 24 bits, register class in the high 8) and ``u32``
    low and high PC (byte offsets in the function's ``.text`` section).
``.nv_debug_info_reg_type``
    For each function: its name, a ``u32`` count, then one byte per entry of the first
    section, in the same order: the PTX type of the register.

A debugger reads a PTX register ``%r5`` of function ``f`` at a SASS address only from
an entry of ``f`` for ``%r5`` whose range holds that address; a register no entry
names is shown as unavailable.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import CubinError

__all__ = [
    "REGISTER_CLASSES",
    "PTX_TYPES",
    "FunctionRegisters",
    "RegisterMapEntry",
    "read_register_map",
]

#: The register classes measured, by the high byte of an entry's SASS register: predicates,
#: 32-bit registers, and 16-bit halves (number ``n`` is half ``n % 2`` of ``R(n // 2)``).
REGISTER_CLASSES: dict[int, str] = {2: "P", 4: "R.H", 5: "R"}

#: The PTX types measured, by their ``.nv_debug_info_reg_type`` byte (``.reg .b8`` is 0).
PTX_TYPES: dict[int, str] = {
    0: "b8",
    1: "b16",
    2: "b32",
    3: "b64",
    4: "u8",
    5: "u16",
    6: "u32",
    7: "u64",
    8: "s8",
    9: "s16",
    10: "s32",
    11: "s64",
    12: "f16",
    13: "f16x2",
    14: "f32",
    15: "f64",
    16: "pred",
    17: "b128",
}

SASS_SECTION = ".nv_debug_info_reg_sass"
TYPE_SECTION = ".nv_debug_info_reg_type"

_U32 = struct.Struct("<I")
_REG_RANGE = struct.Struct("<III")


@dataclass(frozen=True, slots=True)
class RegisterMapEntry:
    """One entry of the map: PTX register ``ptx`` is in SASS register ``sass`` from
    ``low_pc`` up to ``high_pc`` (offsets in its function's code)."""

    ptx: str
    register_class: int
    number: int
    low_pc: int
    high_pc: int
    piece: int
    """The ``u32`` before the name: for a 64-bit register the 32-bit half the SASS register
    holds (0 low, 1 high, measured); for ``.b128`` the four registers read 0, 1, 1, 2 (not
    understood)."""
    type_code: int | None = None
    """The ``.nv_debug_info_reg_type`` byte (None when the cubin has no such section)."""

    @property
    def sass(self) -> str:
        """``R4``, ``P0``, ``R9.H1``; ``class7:3`` for a class not measured."""
        name = REGISTER_CLASSES.get(self.register_class)
        if name == "R.H":
            return f"R{self.number // 2}.H{self.number % 2}"
        return f"{name}{self.number}" if name else f"class{self.register_class}:{self.number}"

    @property
    def ptx_type(self) -> str | None:
        """``b32``, ``f64``, ...; ``type 42`` for a code not measured; None without the section."""
        if self.type_code is None:
            return None
        return PTX_TYPES.get(self.type_code, f"type {self.type_code}")

    @property
    def empty(self) -> bool:
        """Whether the range holds no address (ptxas writes some ``0, 0`` entries)."""
        return self.high_pc <= self.low_pc

    def covers(self, low: int, high: int) -> bool:
        """Whether this entry's range meets the address range [low, high)."""
        return not self.empty and self.low_pc < high and low < self.high_pc

    def to_json(self) -> dict[str, object]:
        return {
            "ptx": self.ptx,
            "sass": self.sass,
            "low_pc": self.low_pc,
            "high_pc": self.high_pc,
            "piece": self.piece,
            "type": self.ptx_type,
        }


@dataclass(frozen=True)
class FunctionRegisters:
    """The register map of one function."""

    function: str
    entries: tuple[RegisterMapEntry, ...]

    def of(self, ptx: str) -> list[RegisterMapEntry]:
        """The entries of PTX register ``ptx``, in the order ptxas wrote them."""
        return [e for e in self.entries if e.ptx == ptx]

    def registers(self) -> set[str]:
        """The PTX registers that have an entry with a nonempty range."""
        return {e.ptx for e in self.entries if not e.empty}

    def to_json(self) -> dict[str, object]:
        return {"function": self.function, "entries": [e.to_json() for e in self.entries]}


class _Reader:
    """Cursor over one section's bytes; errors name the section and offset."""

    def __init__(self, data: bytes, section: str, where: str) -> None:
        self.data = data
        self.pos = 0
        self.section = section
        self.where = where

    def fail(self, what: str, at: int) -> CubinError:
        return CubinError(f"{self.section}+0x{at:x}: {what}", where=self.where)

    def name(self, what: str) -> str:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise self.fail(f"{what} runs past the end of the section", self.pos)
        raw = self.data[self.pos : end]
        if not raw.isascii():
            raise self.fail(f"{what} is not ASCII", self.pos)
        self.pos = end + 1
        return raw.decode("ascii")

    def unpack(self, shape: struct.Struct, what: str) -> tuple[Any, ...]:
        if self.pos + shape.size > len(self.data):
            raise self.fail(f"{what} runs past the end of the section", self.pos)
        values = shape.unpack_from(self.data, self.pos)
        self.pos += shape.size
        return values

    def count(self, what: str, each: int) -> int:
        (n,) = self.unpack(_U32, what)
        if n * each > len(self.data) - self.pos:
            raise self.fail(f"{what} {n} does not fit in the section", self.pos - 4)
        return int(n)


_RawEntry = tuple[int, str, int, int, int]


def _sass_functions(data: bytes, where: str) -> Iterator[tuple[str, list[_RawEntry]]]:
    r = _Reader(data, SASS_SECTION, where)
    while r.pos < len(data):
        function = r.name("function name")
        n = r.count("entry count", 4 + 2 + _REG_RANGE.size)
        entries: list[_RawEntry] = []
        for _ in range(n):
            at = r.pos
            (piece,) = r.unpack(_U32, "entry")
            name = r.name("register name")
            reg, low, high = r.unpack(_REG_RANGE, "entry")
            if not name:
                raise r.fail("entry with an empty register name", at)
            entries.append((piece, name, reg, low, high))
        yield function, entries


def _type_functions(data: bytes, where: str) -> Iterator[tuple[str, bytes, int]]:
    r = _Reader(data, TYPE_SECTION, where)
    while r.pos < len(data):
        at = r.pos
        function = r.name("function name")
        n = r.count("type count", 1)
        yield function, data[r.pos : r.pos + n], at
        r.pos += n


def read_register_map(
    sass: bytes, types: bytes | None = None, *, where: str = "<cubin>"
) -> list[FunctionRegisters]:
    """The functions of ``.nv_debug_info_reg_sass`` (``sass``), with the types of
    ``.nv_debug_info_reg_type`` (``types``) when given; ``where`` names the cubin in errors
    (:class:`~ptxdwarf.errors.CubinError`, naming section and offset)."""
    typed: dict[str, bytes] = {}
    if types is not None:
        for function, found, at in _type_functions(types, where):
            if function in typed:
                raise _Reader(types, TYPE_SECTION, where).fail(f"function {function} given twice", at)
            typed[function] = found
    result: list[FunctionRegisters] = []
    for function, raw in _sass_functions(sass, where):
        codes = typed.get(function)
        if codes is not None and len(codes) != len(raw):
            raise CubinError(
                f"{TYPE_SECTION}: function {function} has {len(codes)} types for {len(raw)} "
                f"{SASS_SECTION} entries",
                where=where,
            )
        result.append(
            FunctionRegisters(
                function,
                tuple(
                    RegisterMapEntry(
                        name,
                        reg >> 24,
                        reg & 0xFFFFFF,
                        low,
                        high,
                        piece,
                        None if codes is None else codes[i],
                    )
                    for i, (piece, name, reg, low, high) in enumerate(raw)
                ),
            )
        )
    return result
