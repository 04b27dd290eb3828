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
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from .._native import twin
from ..errors import CubinError

__all__ = [
    "PTX_TYPES",
    "REGISTER_CLASSES",
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
#: Where one entry's name starts and where its NUL is, as :class:`FunctionRegisters` keeps them.
_SPAN = struct.Struct("<QQ")
_NO_RANGES: tuple[bytes, frozenset[int]] = (b"", frozenset())


class RegisterMapEntry(NamedTuple):
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
        return self.low_pc < high and low < self.high_pc and self.low_pc < self.high_pc

    def to_json(self) -> dict[str, object]:
        return {
            "ptx": self.ptx,
            "sass": self.sass,
            "low_pc": self.low_pc,
            "high_pc": self.high_pc,
            "piece": self.piece,
            "type": self.ptx_type,
        }


class FunctionRegisters:
    """The register map of one function; entries are decoded when first asked for."""

    def __init__(
        self,
        function: str,
        data: bytes,
        spans: Sequence[tuple[int, int]] | bytes,
        types: bytes | None,
        where: str = "<cubin>",
    ) -> None:
        self.function = function
        self._data = data
        self._spans = spans if isinstance(spans, bytes) else b"".join(_SPAN.pack(*span) for span in spans)
        """Per entry, where its name starts and its NUL is (its piece is the 4 bytes before), as
        two little-endian ``u64`` (a tuple each would be 20 times the size)."""
        self._types = types
        self._where = where
        self._entries: tuple[RegisterMapEntry, ...] | None = None
        self._index: dict[bytes, list[int]] | None = None

    def __len__(self) -> int:
        return len(self._spans) // _SPAN.size

    def __repr__(self) -> str:
        return f"<FunctionRegisters {self.function} ({len(self)} entries)>"

    @property
    def entries(self) -> tuple[RegisterMapEntry, ...]:
        """Every entry, in the order ptxas wrote them."""
        if self._entries is None:
            self._entries = _entries(RegisterMapEntry, self._data, self._spans, self._types, self._where)
        return self._entries

    def _indices(self, ptx: str) -> list[int]:
        if self._index is None:
            data = self._data
            index: dict[bytes, list[int]] = {}
            for i, name in enumerate([data[start:end] for start, end in _SPAN.iter_unpack(self._spans)]):
                found = index.get(name)
                if found is None:
                    index[name] = [i]
                else:
                    found.append(i)
            self._index = index
        return self._index.get(ptx.encode("ascii", "replace")) or []

    def of(self, ptx: str) -> list[RegisterMapEntry]:
        """The entries of PTX register ``ptx``, in the order ptxas wrote them."""
        return [self.entry(i) for i in self._indices(ptx)]

    def ranges_of(self, ptx: str) -> list[tuple[int, int, int, int]]:
        """(index, low PC, high PC, piece) of each entry of PTX register ``ptx``, without
        making the entries (:meth:`entry` makes one)."""
        data = self._data
        span = _SPAN.unpack_from
        spans = self._spans
        result = []
        for i in self._indices(ptx):
            start, end = span(spans, i * _SPAN.size)
            _reg, low, high = _REG_RANGE.unpack_from(data, end + 1)
            result.append((i, low, high, _U32.unpack_from(data, start - 4)[0]))
        return result

    def register_ranges(self, registers: Iterable[str]) -> dict[str, tuple[bytes, frozenset[int]]]:
        """:meth:`ranges_of` each of ``registers``, packed (:func:`range_records` reads them: a
        large module's register locations have hundreds of thousands), and the pieces of its
        entries whose range is nonempty."""
        keys = {ptx: ptx.encode("ascii", "replace") for ptx in registers}
        found = _register_ranges(self._data, self._spans, set(keys.values()))
        return {ptx: found.get(key) or _NO_RANGES for ptx, key in keys.items()}

    def entry(self, index: int) -> RegisterMapEntry:
        """Entry ``index`` (0-based, in the order ptxas wrote them)."""
        if self._entries is not None:
            return self._entries[index]
        at = range(len(self))[index]
        types = None if self._types is None else self._types[at : at + 1]
        span = self._spans[at * _SPAN.size : (at + 1) * _SPAN.size]
        return _entries(RegisterMapEntry, self._data, span, types, self._where)[0]

    def registers(self) -> set[str]:
        """The PTX registers that have an entry with a nonempty range."""
        return {e.ptx for e in self.entries if not e.empty}

    def to_json(self) -> dict[str, object]:
        return {"function": self.function, "entries": [e.to_json() for e in self.entries]}

    def entries_json(self, encode: Callable[[object], str]) -> str:
        """The items of the JSON array of :meth:`to_json`'s ``entries``, each written by
        ``encode`` (``json.dumps``), made without keeping the entries."""
        return _entries_json(RegisterMapEntry, self._data, self._spans, self._types, self._where, encode)


@twin("regmap")
def _register_ranges(
    data: bytes, spans: bytes, names: set[bytes]
) -> dict[bytes, tuple[bytes, frozenset[int]]]:
    """Per register name of ``names`` (its bytes) that an entry of one function names, the
    entries' names at ``spans`` of ``data`` (``.nv_debug_info_reg_sass``; ``spans``: the start
    and end of each as two little-endian ``u64``): the records of its entries, in the order
    ptxas wrote them (:func:`range_records` reads them), and the pieces of those whose range
    is nonempty."""
    found: dict[bytes, bytearray] = {}
    pieces: dict[bytes, set[int]] = {}
    u32, reg_range, record = _U32.unpack_from, _REG_RANGE.unpack_from, _RANGE_RECORD.pack
    for index, (start, end) in enumerate(_SPAN.iter_unpack(spans)):
        name = data[start:end]
        if name in names:
            _reg, low, high = reg_range(data, end + 1)
            (piece,) = u32(data, start - 4)
            if name not in found:
                found[name], pieces[name] = bytearray(), set()
            found[name] += record(index, low, high, piece)
            if low < high:
                pieces[name].add(piece)
    return {name: (bytes(records), frozenset(pieces[name])) for name, records in found.items()}


_RANGE_RECORD = struct.Struct("<4I")


def range_records(records: bytes) -> Iterator[tuple[int, int, int, int]]:
    """(index, low PC, high PC, piece) of each entry in records of
    :meth:`FunctionRegisters.register_ranges` (four little-endian ``u32`` each)."""
    return _RANGE_RECORD.iter_unpack(records)


# Entries are made by the thousand: tuple.__new__ skips NamedTuple's Python-level __new__.
_new_entry = tuple.__new__


@twin("cubin")
def _entries(
    kind: type[RegisterMapEntry], data: bytes, spans: bytes, types: bytes | None, where: str
) -> tuple[RegisterMapEntry, ...]:
    """The entries (as ``kind``) of one function whose entries' names are at ``spans`` of
    ``data`` (``.nv_debug_info_reg_sass``; ``spans``: the start and end of each as two
    little-endian ``u64``), of types ``types``, in the order ptxas wrote them; ``where`` names
    the cubin in errors."""
    names: dict[bytes, str] = {}
    entries: list[RegisterMapEntry] = []
    append = entries.append
    u32, reg_range = _U32.unpack_from, _REG_RANGE.unpack_from
    for index, (start, end) in enumerate(_SPAN.iter_unpack(spans)):
        raw = data[start:end]
        name = names.get(raw)
        if name is None:
            if not raw.isascii():
                raise CubinError(f"{SASS_SECTION}+0x{start:x}: register name is not ASCII", where=where)
            name = names[raw] = raw.decode("ascii")
        reg, low, high = reg_range(data, end + 1)
        (piece,) = u32(data, start - 4)
        code = None if types is None else types[index]
        append(_new_entry(kind, (name, reg >> 24, reg & 0xFFFFFF, low, high, piece, code)))
    return tuple(entries)


@twin("cubin")
def _entries_json(
    kind: type[RegisterMapEntry],
    data: bytes,
    spans: bytes,
    types: bytes | None,
    where: str,
    encode: Callable[[object], str],
) -> str:
    """The entries of :func:`_entries` as the items of a JSON array: the list of the ``to_json``
    of each written by ``encode``, without its brackets."""
    return encode([entry.to_json() for entry in _entries(kind, data, spans, types, where)])[1:-1]


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

    def count(self, what: str, each: int) -> int:
        if self.pos + 4 > len(self.data):
            raise self.fail(f"{what} runs past the end of the section", self.pos)
        (n,) = _U32.unpack_from(self.data, self.pos)
        self.pos += 4
        if n * each > len(self.data) - self.pos:
            raise self.fail(f"{what} {n} does not fit in the section", self.pos - 4)
        return int(n)


@twin("cubin")
def _sass_functions(data: bytes, where: str) -> list[tuple[str, bytes]]:
    """(function, where each entry's name starts and ends, as two little-endian ``u64``) of
    ``.nv_debug_info_reg_sass``, checked whole."""
    functions = []
    r = _Reader(data, SASS_SECTION, where)
    find = data.find
    size = len(data)
    while r.pos < size:
        function = r.name("function name")
        n = r.count("entry count", 4 + 2 + _REG_RANGE.size)
        spans = bytearray()
        pos = r.pos
        for _ in range(n):
            start = pos + 4
            end = find(b"\0", start)
            if end < 0 or end + 13 > size:
                raise r.fail("entry runs past the end of the section", pos)
            if end == start:
                raise r.fail("entry with an empty register name", pos)
            spans += _SPAN.pack(start, end)
            pos = end + 13
        r.pos = pos
        functions.append((function, bytes(spans)))
    return functions


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
    (:class:`~ptxdwarf.errors.CubinError`, naming section and offset). The layout is checked
    whole here; entries are decoded when asked for."""
    typed: dict[str, bytes] = {}
    if types is not None:
        for function, found, at in _type_functions(types, where):
            if function in typed:
                raise _Reader(types, TYPE_SECTION, where).fail(f"function {function} given twice", at)
            typed[function] = found
    result: list[FunctionRegisters] = []
    for function, spans in _sass_functions(sass, where):
        codes = typed.get(function)
        count = len(spans) // _SPAN.size
        if codes is not None and len(codes) != count:
            raise CubinError(
                f"{TYPE_SECTION}: function {function} has {len(codes)} types for {count} "
                f"{SASS_SECTION} entries",
                where=where,
            )
        result.append(FunctionRegisters(function, sass, spans, codes, where))
    return result
