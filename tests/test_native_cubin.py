"""The kernel module ``cubin`` against its Python references: relocations applied
(:func:`ptxdwarf.cuda.cubin._applied`), its section headers and symbols
(:func:`~ptxdwarf.cuda.cubin._section_list`, :func:`~ptxdwarf.cuda.cubin._symbol_list`), the rows of line-number programs
(:func:`ptxdwarf.dwarf.lines._rows`) and their text in a dump and in ``dump --json``
(:func:`ptxdwarf.dump._program_lines`, :func:`~ptxdwarf.dump._program_rows_json`), the lowest address of their lines
(:func:`ptxdwarf.dwarf.lines._scan_starts`) and the entries of register maps
(:func:`ptxdwarf.cuda.regmap._entries`, :func:`~ptxdwarf.cuda.regmap._entries_json`,
:func:`~ptxdwarf.cuda.regmap._sass_functions`), on generated sections (valid, truncated, mutated,
random) and on every cubin, fatbin and host object of the fixtures."""

from __future__ import annotations

import copy
import json
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, GOOD_FIXTURES, CubinPath
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twins import native_of, same

import ptxdwarf
from ptxdwarf import dump
from ptxdwarf.cuda import cubin, regmap
from ptxdwarf.cuda.cubin import CubinImages, register_map
from ptxdwarf.dwarf import lines
from ptxdwarf.dwarf.forms import sleb_bytes, uleb_bytes
from ptxdwarf.dwarf.image import Reloc, Symbol
from ptxdwarf.errors import PtxDwarfError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# What the references raise on bytes cut short, before their callers name the place.
_CUT_SHORT = (PtxDwarfError, IndexError, ValueError, struct.error)


def _same_or_declined(function: Any, *args: Any, strict: bool = True, native: Any = None) -> Any:
    """Like :func:`twins.same` for a reference whose caller turns IndexError and ValueError
    (bytes cut short) into its error: the kernel declines there (and, unless ``strict``, may
    decline unusual input: numbers past 64 bits). ``native``: the kernel, if not the twin's."""
    native = native or native_of(function)
    try:
        expected = function.reference(*copy.deepcopy(args))  # the kernel's arguments stay as given
    except _CUT_SHORT:
        unchanged = copy.deepcopy(args)
        assert native(*args) is None, "the kernel takes input the reference rejects"
        assert args == unchanged, "the kernel changed its arguments and declined"
        return None
    got = native(*args)
    if got is None and not strict:
        return expected
    assert got is not None, "the kernel declines input the reference takes"
    assert got == expected
    assert [type(x) for x in got] == [type(x) for x in expected]
    if isinstance(expected, dict):
        assert [list(v) for v in got.values()] == [list(v) for v in expected.values()], "another order"
    return got


# --- line-number programs ---------------------------------------------------------------


@st.composite
def _opcode(draw: st.DrawFn, opcode_base: int, lengths: list[int]) -> bytes:
    uleb = st.integers(0, 2**32).map(uleb_bytes) | st.integers(0, 300).map(uleb_bytes)
    kind = draw(st.sampled_from(["special", "standard", "extended", "random"]))
    if kind == "special" and opcode_base <= 255:
        return bytes([draw(st.integers(opcode_base, 255))])
    if kind == "standard" and opcode_base > 1:
        op = draw(st.integers(1, opcode_base - 1))
        if op in (2, 4, 5):
            return bytes([op]) + draw(uleb)
        if op == 3:
            return bytes([op]) + sleb_bytes(draw(st.integers(-(2**31), 2**31) | st.integers(-70, 70)))
        if op == 9:
            return bytes([op]) + struct.pack("<H", draw(st.integers(0, 0xFFFF)))
        count = lengths[op - 1] if op - 1 < len(lengths) else 0
        return bytes([op]) + b"".join(draw(uleb) for _ in range(min(count, 4)))
    if kind == "extended":
        sub = draw(st.sampled_from([1, 2, 0x90, 0x91, 3, 0x80]))
        if sub == 2:
            body = draw(st.binary(min_size=8, max_size=8) | st.binary(max_size=8))
            body += bytes(draw(st.integers(0, 2)))  # an address of more bytes, all 0 past the 8th
        elif sub == 0x90:
            body = draw(uleb) + draw(uleb)
        elif sub == 0x91:
            body = draw(uleb)
        else:
            body = draw(st.binary(max_size=6))
        size = len(body) + 1 if draw(st.integers(0, 9)) else draw(st.integers(0, 2**65))
        return b"\0" + uleb_bytes(size) + bytes([sub]) + body
    return draw(st.binary(min_size=1, max_size=4))


@st.composite
def _program(draw: st.DrawFn) -> tuple[bytes, lines.LineProgram, list[int], dict[int, str]]:
    """Opcodes, the program they belong to, its operand counts and relocated offsets."""
    opcode_base = draw(st.sampled_from([13, 10, 11, 12, 14, 1, 4, 0, 255]))
    lengths = [0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1][: max(opcode_base - 1, 0)]
    lengths += [draw(st.integers(0, 3)) for _ in range(opcode_base - 1 - len(lengths))]
    if draw(st.booleans()):
        lengths = [draw(st.integers(0, 2)) if draw(st.integers(0, 4)) == 0 else n for n in lengths]
    if draw(st.integers(0, 9)) == 0:
        lengths = lengths[: draw(st.integers(0, len(lengths)))]
    program = lines.LineProgram(
        0,
        draw(st.integers(2, 4)),
        minimum_instruction_length=draw(st.sampled_from([1, 4, 16, 0, 255])),
        default_is_stmt=draw(st.booleans()),
        line_base=draw(st.sampled_from([-5, -1, 0, 1, -128, 127])),
        line_range=draw(st.sampled_from([14, 1, 0, 255])),
        opcode_base=opcode_base,
        str_offset=draw(st.none() | st.integers(0, 0xFFFFFFFF)),
    )
    ops = draw(st.lists(_opcode(opcode_base, lengths), max_size=60))
    data = b"".join(ops)
    if data and draw(st.integers(0, 3)) == 0:
        data = data[: draw(st.integers(0, len(data) - 1))]
    offsets = draw(st.lists(st.integers(0, max(len(data), 1)), max_size=8))
    symbols = {offset: f"_Z{offset}f" for offset in offsets}
    return data, program, lengths, symbols


@SETTINGS
@given(_program(), st.integers(0, 3), st.integers(-3, 0))
def test_rows_of_generated_programs(
    case: tuple[bytes, lines.LineProgram, list[int], dict[int, str]], skip: int, cut: int
) -> None:
    data, program, lengths, symbols = case
    _same_or_declined(lines._rows, lines.LineRow, data, 0, len(data), program, lengths, symbols)
    start, end = min(skip, len(data)), max(len(data) + cut, 0)
    _same_or_declined(lines._rows, lines.LineRow, data, start, end, program, lengths, symbols)


@SETTINGS
@given(_program(), st.booleans())
def test_starts_of_generated_programs(
    case: tuple[bytes, lines.LineProgram, list[int], dict[int, str]], known: bool
) -> None:
    data, program, lengths, symbols = case
    starts = {"_Z0f": {1: 5, 2: 0}} if known else {}
    _same_or_declined(lines._scan_starts, data, 0, len(data), program, lengths, symbols, starts)


@SETTINGS
@given(st.binary(max_size=200), st.integers(0, 255), st.integers(-128, 127), st.integers(0, 255))
def test_rows_of_random_bytes(data: bytes, opcode_base: int, line_base: int, line_range: int) -> None:
    program = lines.LineProgram(
        0, 2, line_base=line_base, line_range=line_range, opcode_base=opcode_base, str_offset=7
    )
    lengths = list(range(max(opcode_base - 1, 0)))[:255]
    lengths = [n % 3 for n in lengths]
    _same_or_declined(
        lines._rows, lines.LineRow, data, 0, len(data), program, lengths, {1: "f"}, strict=False
    )
    _same_or_declined(lines._scan_starts, data, 0, len(data), program, lengths, {1: "f"}, {}, strict=False)


def test_rows_decline_what_they_do_not_take() -> None:
    native = native_of(lines._rows)
    program = lines.LineProgram(0, 2, line_range=14, opcode_base=13)
    ops = b"\x01\x02\x05\x01"
    assert native(lines.LineRow, ops, 0, 4, program, [0] * 12, {}) == lines._rows.reference(
        lines.LineRow, ops, 0, 4, program, [0] * 12, {}
    )
    assert native(lines.LineRow, ops, 0, 99, program, [0] * 12, {}) is None  # end past the data
    assert native(lines.LineRow, ops, -1, 4, program, [0] * 12, {}) is None
    assert native(lines.LineRow, ops, 0, 4, program, [300] * 12, {}) is None
    assert native(lines.LineRow, ops, 0, 4, program, (0,) * 12, {}) is None
    assert native(int, ops, 0, 4, program, [0] * 12, {}) is None
    wide = lines.LineProgram(0, 2, line_range=14, opcode_base=13, minimum_instruction_length=4)
    huge = b"\x02" + uleb_bytes(2**63) + b"\x01"  # an address past 64 bits: the reference's
    assert native(lines.LineRow, huge, 0, len(huge), wide, [0] * 12, {}) is None
    assert lines._rows(lines.LineRow, huge, 0, len(huge), wide, [0] * 12, {})[0].address == 2**65


@pytest.mark.parametrize("value", [2**63 - 2, 2**63, 2**64 + 5, -(2**63) + 1, -(2**63) - 1, -(2**64), 2**70])
def test_lines_of_numbers_near_64_bits(value: int) -> None:
    program = lines.LineProgram(0, 2, line_range=14, opcode_base=13)
    ops = b"\x03" + sleb_bytes(value) + b"\x01"
    _same_or_declined(lines._rows, lines.LineRow, ops, 0, len(ops), program, [0] * 12, {}, strict=False)
    _same_or_declined(lines._scan_starts, ops, 0, len(ops), program, [0] * 12, {}, {}, strict=False)


#: Names a line table's rows may give: of a symbol, of an inlined function (None: no string).
_NAMES = st.sampled_from(["_Z1fv", "", "f\u00e9", "g ", " \t", "h\n", "\u3000", "k\u3000", None])


def _lines_of(chunks: Any) -> list[str]:
    return list(chunks)


@SETTINGS
@given(_program(), st.lists(_NAMES, min_size=1, max_size=4), st.sampled_from([1, 2, 3, 7, 4096]))
def test_text_of_generated_programs(
    case: tuple[bytes, lines.LineProgram, list[int], dict[int, str]], names: list[str | None], chunk: int
) -> None:
    data, program, lengths, symbols = case
    symbols = {offset: names[i % len(names)] or "" for i, offset in enumerate(symbols)}
    opcodes = lines.LineOpcodes(data, 0, len(data), lengths, symbols)
    calls: list[int | None] = []

    def string_at(offset: int | None) -> str | None:
        calls.append(offset)
        return names[(offset or 0) % len(names)]

    native = native_of(dump._program_lines)
    try:
        expected = _lines_of(dump._program_lines.reference(opcodes, program, string_at, chunk))
    except _CUT_SHORT:
        assert native(opcodes, program, string_at, chunk) is None, (
            "the kernel takes input the reference rejects"
        )
        return
    asked, calls[:] = list(calls), []
    got = native(opcodes, program, string_at, chunk)
    if got is None:  # numbers past 64 bits: the reference's
        return
    assert _lines_of(got) == expected
    assert calls == asked
    lines_made = len(opcodes.rows(program)) + 3  # the heading's two, the empty line after the rows
    assert len(expected) == -(-lines_made // chunk)
    assert all(text.endswith("\n") for text in expected)


@SETTINGS
@given(
    _program(),
    st.lists(_NAMES, min_size=1, max_size=4),
    st.sampled_from([1, 2, 3, 7, 4096]),
    st.booleans(),
)
def test_json_of_generated_programs(
    case: tuple[bytes, lines.LineProgram, list[int], dict[int, str]],
    names: list[str | None],
    chunk: int,
    unnamed: bool,
) -> None:
    data, program, lengths, symbols = case
    symbols = {offset: names[i % len(names)] or "" for i, offset in enumerate(symbols)}
    opcodes = lines.LineOpcodes(data, 0, len(data), lengths, symbols)
    calls: list[int | None] = []

    def string_at(offset: int | None) -> str | None:
        calls.append(offset)
        return None if unnamed and offset is None else names[(offset or 0) % len(names)]

    native = native_of(dump._program_rows_json)
    try:
        expected = list(dump._program_rows_json.reference(opcodes, program, string_at, dump._dumps, chunk))
    except _CUT_SHORT:
        assert native(opcodes, program, string_at, dump._dumps, chunk) is None, (
            "the kernel takes input the reference rejects"
        )
        return
    asked, calls[:] = set(calls), []
    got = native(opcodes, program, string_at, dump._dumps, chunk)
    if got is None:  # numbers past 64 bits: the reference's
        return
    assert list(got) == expected
    assert set(calls) == asked  # the kernel asks once for each name
    rows = json.loads("[" + "".join(expected) + "]")
    assert len(rows) == len(opcodes.rows(program))
    assert all(text.count("{") == chunk for text in expected[:-1])


def test_json_names_the_call_site_in_each_sequence() -> None:
    """Two sequences, each with code inlined at its own first row: ``inlined_at`` counts rows
    from the program's start, and each sequence's contexts from its own first row."""
    inlined = b"\x00\x03\x90\x01\x05"  # DW_LNE_NVIDIA_inlined_call: context 1, name 5
    end = b"\x00\x01\x01"  # DW_LNE_end_sequence
    data = (b"\x01" + inlined + b"\x01" + end) * 2
    program = lines.LineProgram(0, 2, line_range=14, opcode_base=13, line_base=-5)
    opcodes = lines.LineOpcodes(data, 0, len(data), [0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1], {})
    names = {5: "inlined_fn"}
    for made in (native_of(dump._program_rows_json), dump._program_rows_json.reference):
        chunks = made(opcodes, program, lambda offset: names.get(offset or 0), dump._dumps, 4)
        assert chunks is not None
        rows = json.loads("[" + "".join(chunks) + "]")
        assert [row.get("inlined_at") for row in rows] == [None, 0, 0, None, 3, 3]
        assert [row.get("function") for row in rows] == [None, *["inlined_fn"] * 2] * 2
        assert [row["end_sequence"] for row in rows] == [False, False, True] * 2


def test_text_declines_what_it_does_not_take() -> None:
    native = native_of(dump._program_lines)
    program = lines.LineProgram(0, 2, line_range=14, opcode_base=13)
    ops = lines.LineOpcodes(b"\x01\x02\x05\x01", 0, 4, [0] * 12, {})
    assert _lines_of(native(ops, program, lambda _: None, 10)) == _lines_of(
        dump._program_lines.reference(ops, program, lambda _: None, 10)
    )
    assert native(ops, program, lambda _: None, 0) is None
    assert native(ops._replace(end=99), program, lambda _: None, 10) is None
    assert native(ops._replace(lengths=(0,) * 12), program, lambda _: None, 10) is None  # type: ignore[arg-type]
    assert native((1, 2), program, lambda _: None, 10) is None
    rows_json = native_of(dump._program_rows_json)
    assert list(rows_json(ops, program, lambda _: None, dump._dumps, 1)) == list(
        dump._program_rows_json.reference(ops, program, lambda _: None, dump._dumps, 1)
    )
    assert rows_json(ops, program, lambda _: None, dump._dumps, 0) is None
    assert rows_json(ops, program, lambda _: None, None, 1) is None
    assert rows_json(ops._replace(end=99), program, lambda _: None, dump._dumps, 1) is None


def test_line_tables_of_every_device_file_of_the_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    """The text and JSON dumps of the line tables are the same made by the kernels and by
    their references."""
    made: list[str] = []

    def counted(kernel: Any, name: str) -> Any:
        def call(*args: Any) -> Any:
            got = kernel(*args)
            if got is not None:
                made.append(name)
            return got

        return call

    twins: list[Any] = [dump._program_lines, dump._program_rows_json]
    kernels = [counted(native_of(function), function.__name__) for function in twins]
    for path in DEVICE_FILES:
        shown = []
        for native in (True, False):
            for function, kernel in zip(twins, kernels, strict=True):
                monkeypatch.setattr(function, "native", kernel if native else None)
            try:
                infos = ptxdwarf.read_all(path)
                shown.append(
                    [
                        dump.dump_text(info, ["debug-line"]) + dump.dump_json(info, ["debug-line"])
                        for _, info in infos
                    ]
                )
            except PtxDwarfError as exc:
                shown.append([str(exc)])
        assert shown[0] == shown[1], path
    assert {"_program_lines", "_program_rows_json"} <= set(made)


# --- register maps ------------------------------------------------------------------------


@st.composite
def _register_map(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """``.nv_debug_info_reg_sass`` and ``.nv_debug_info_reg_type`` of a few functions."""
    sass, types = bytearray(), bytearray()
    names = st.sampled_from([b"%r1", b"%rd12", b"%p3", b"%f7", b"%r\xc3\xa9", b"x" * 40, b"%fd1"])
    for k in range(draw(st.integers(0, 4))):
        function = b"_Z%df" % k
        entries = draw(
            st.lists(
                st.tuples(st.integers(0, 2**32 - 1), names, st.integers(0, 2**32 - 1), st.integers(0, 2**16)),
                max_size=12,
            )
        )
        sass += function + b"\0" + struct.pack("<I", len(entries))
        for piece, name, reg, low in entries:
            sass += struct.pack("<I", piece) + name + b"\0" + struct.pack("<III", reg, low, low + 16)
        codes = draw(st.binary(min_size=len(entries), max_size=len(entries)))
        types += function + b"\0" + struct.pack("<I", len(codes)) + codes
    return bytes(sass), bytes(types)


@SETTINGS
@given(_register_map(), st.booleans())
def test_entries_of_generated_maps(sections: tuple[bytes, bytes], typed: bool) -> None:
    sass, types = sections
    for f in regmap.read_register_map(sass, types if typed else None, where="gen.cubin"):
        same(regmap._entries, regmap.RegisterMapEntry, f._data, f._spans, f._types, f._where)


@SETTINGS
@given(_register_map(), st.booleans())
def test_entries_json_of_generated_maps(sections: tuple[bytes, bytes], typed: bool) -> None:
    sass, types = sections
    for f in regmap.read_register_map(sass, types if typed else None, where="gen.cubin"):
        args = (regmap.RegisterMapEntry, f._data, f._spans, f._types, f._where, dump._dumps)
        got = same(regmap._entries_json, *args)
        if got is not None:
            assert json.loads(f"[{got}]") == [entry.to_json() for entry in f.entries]


def test_entries_json_declines_what_it_does_not_take() -> None:
    native = native_of(regmap._entries_json)
    data = struct.pack("<I", 0) + b"%r1\0" + struct.pack("<III", (1 << 24) | 3, 16, 32)
    spans = struct.pack("<QQ", 4, 7)
    args: list[Any] = [regmap.RegisterMapEntry, data, spans, b"\x05", "x", dump._dumps]
    assert native(*args) == regmap._entries_json.reference(*args)
    assert native(*args[:5], None) is None
    assert native(int, *args[1:]) is None
    assert native(*args[:3], b"", *args[4:]) is None  # fewer types than entries
    assert native(*args[:2], spans[:-1], *args[3:]) is None

    def failing(value: object) -> str:
        raise ValueError(f"no {value!r}")

    with pytest.raises(ValueError, match="no '%r1'"):
        native(*args[:5], failing)


@SETTINGS
@given(_register_map(), st.integers(0, 2**16), st.binary(max_size=3), st.binary(max_size=60))
def test_functions_of_maps(sections: tuple[bytes, bytes], at: int, put: bytes, noise: bytes) -> None:
    sass, _types = sections
    same(regmap._sass_functions, sass, "gen.cubin")
    cut = at % (len(sass) + 1)
    same(regmap._sass_functions, sass[:cut], "gen.cubin")
    same(regmap._sass_functions, sass[:cut] + put + sass[cut + len(put) :], "gen.cubin")
    same(regmap._sass_functions, noise, "gen.cubin")


@SETTINGS
@given(
    st.binary(min_size=0, max_size=120),
    st.lists(st.tuples(st.integers(0, 130), st.integers(0, 130)), max_size=6),
    st.none() | st.binary(max_size=8),
)
def test_entries_of_any_spans(data: bytes, pairs: list[tuple[int, int]], types: bytes | None) -> None:
    native = native_of(regmap._entries)
    spans = b"".join(struct.pack("<QQ", start, end) for start, end in pairs)
    got = native(regmap.RegisterMapEntry, data, spans, types, "x")
    text = native_of(regmap._entries_json)(regmap.RegisterMapEntry, data, spans, types, "x", dump._dumps)
    try:
        expected = regmap._entries.reference(regmap.RegisterMapEntry, data, spans, types, "x")
    except _CUT_SHORT:
        assert got is None and text is None
        return
    assert got is None or got == expected  # unusual spans (before the data's start) it may decline
    assert (text is None) == (got is None)
    if text is not None:
        assert text == regmap._entries_json.reference(
            regmap.RegisterMapEntry, data, spans, types, "x", dump._dumps
        )


# --- relocations -------------------------------------------------------------------------


@st.composite
def _relocation_section(draw: st.DrawFn) -> tuple[Any, ...]:
    """The arguments of :func:`cubin._applied`: a section, a REL or RELA section for it and a
    symbol table."""
    elf64, rela = draw(st.booleans()), draw(st.booleans())
    raw = draw(st.binary(min_size=0, max_size=64))
    count = draw(st.integers(0, 6))
    values = draw(
        st.lists(st.sampled_from([0, 0x40, 2**32 - 4, 2**63, 2**64 - 1]), min_size=count, max_size=count)
    )
    names = [f"f{i}" for i in range(count)]
    fmt = ("<QQq" if rela else "<QQ") if elf64 else ("<IIi" if rela else "<II")
    shift, limit = (32, 2**64) if elf64 else (8, 2**32)
    entries = bytearray()
    for _ in range(draw(st.integers(0, 12))):
        offset = draw(st.integers(0, len(raw) + 2) | st.sampled_from([limit - 1, limit - 8]))
        rtype = draw(st.sampled_from([1, 2, 3, 4, 2, 2, 0, 5, 0x30]))
        index = draw(st.integers(0, count + 1))
        info = (index << shift) | rtype
        if rela:
            addend = draw(st.integers(-8, 8) | st.sampled_from([2**31 - 1, -(2**31)]))
            entries += struct.pack(fmt, offset, info, addend)
        else:
            entries += struct.pack(fmt, offset, info)
    if entries and draw(st.integers(0, 9)) == 0:
        entries = entries[:-1]
    decoded = draw(st.booleans())
    return (
        Reloc,
        Symbol,
        raw,
        bytes(entries),
        rela,
        elf64,
        True,
        values,
        names,
        decoded,
        (".x", ".rel.x", "f"),
    )


def _relocations_in_full(relocs: list[Reloc]) -> list[tuple[int, int, str, int, int | None]]:
    """The relocations with their symbols' values (which take no part in comparisons)."""
    return [(r.offset, r.size, r.symbol.name, r.symbol.addend, r.symbol.value) for r in relocs]


@SETTINGS
@given(_relocation_section())
def test_applied_relocations(args: tuple[Any, ...]) -> None:
    expected = same(cubin._applied, *args)
    if expected is not None:
        got = native_of(cubin._applied)(*args)
        assert _relocations_in_full(got[1]) == _relocations_in_full(expected[1])
        assert list(got[2].items()) == list(expected[2].items())


def test_applied_declines_what_it_does_not_take() -> None:
    native = native_of(cubin._applied)
    args: list[Any] = [
        Reloc,
        Symbol,
        b"\0" * 8,
        struct.pack("<QQ", 0, (0 << 32) | 2),
        False,
        True,
        True,
        [4],
        ["f"],
        True,
    ]
    where = (".x", ".rel.x", "f")
    reference: Any = cubin._applied.reference
    assert native(*args, where) == reference(*args, where)
    assert native(*args[:6], False, *args[7:], where) is None  # big-endian
    # A built-in symbol type (whose instances the kernel must not untrack: slice's
    # deallocator once crashed the process on them).
    assert native(Reloc, slice, *args[2:], where) is None

    class Loose(Symbol):  # instances with a __dict__, which the kernel does not make
        pass

    assert native(Reloc, Loose, *args[2:], where) is None
    made = native(*args, where)[1][0].symbol
    assert type(made) is Symbol and (made.name, made.addend, made.value) == ("f", 0, 4)
    assert native(*args[:7], [-1], *args[8:], where) is None
    assert native(*args[:7], [4, 5], *args[8:], where) is None  # names and values differ in number


# --- section headers and symbol tables ---------------------------------------------------------


#: Names a string table may hold: plain, empty, not UTF-8, a function's.
_ELF_NAMES = st.sampled_from([b"", b".text", b".debug_info", b"\xff\xfe", b"caf\xc3\xa9", b"_Z1fv"])


@st.composite
def _string_table(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    """A string table and offsets into it: of its names, inside a name, at and past its end."""
    table, starts = bytearray(), []
    for name in draw(st.lists(_ELF_NAMES, max_size=6)):
        starts.append(len(table))
        table += name + b"\0"
    if draw(st.booleans()):
        table += draw(_ELF_NAMES)  # a last name without its NUL
    pick = st.sampled_from(starts) if starts else st.just(0)
    offsets = draw(st.lists(pick | st.integers(0, len(table) + 2) | st.just(2**32 - 1), max_size=8))
    return bytes(table), offsets


@st.composite
def _section_headers(draw: st.DrawFn) -> tuple[Any, ...]:
    """The arguments of :func:`cubin._section_list`: a section header table and its names."""
    elf64, little = draw(st.booleans()), draw(st.booleans())
    names, offsets = draw(_string_table())
    size = draw(st.integers(0, 4096))
    e = "<" if little else ">"
    fmt = e + ("IIQQQQIIQQ" if elf64 else "IIIIIIIIII")
    word = 2**64 - 1 if elf64 else 2**32 - 1
    table = bytearray()
    for name in offsets:
        kind = draw(st.sampled_from([0, 1, 2, 3, 4, 8, 9, 0x70000000]))
        offset = draw(st.integers(0, size + 2) | st.sampled_from([word, word - 3]))
        length = draw(st.integers(0, size + 2) | st.sampled_from([word, 1]))
        link, info = draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 2**32 - 1))
        table += struct.pack(fmt, name, kind, 0, 0, offset, length, link, info, 1, 0)
    file = cubin._Bytes(b"\0" * size)
    return cubin._Section, bytes(table), names, elf64, little, file, size, "f.cubin"


def _same_list(function: Any, *args: Any, native: Any = None) -> Any:
    """:func:`twins.same` for the ELF table kernels, whose records hold the file object given
    (so the arguments are not copied): the same records, or an error where the kernel declines."""
    native = native or native_of(function)
    try:
        expected = function.reference(*args)
    except PtxDwarfError:
        assert native(*args) is None, "the kernel takes input the reference rejects"
        return None
    got = native(*args)
    assert got is not None, "the kernel declines input the reference takes"
    assert got == expected
    assert all(
        type(g) is type(e) and list(map(type, g)) == list(map(type, e))
        for g, e in zip(got, expected, strict=True)
    )
    return got


@SETTINGS
@given(_section_headers())
def test_section_lists_of_generated_tables(args: tuple[Any, ...]) -> None:
    _same_list(cubin._section_list, *args)


@SETTINGS
@given(
    st.booleans(),
    st.booleans(),
    _string_table(),
    st.lists(
        st.tuples(st.integers(0, 255), st.integers(0, 2**16 - 1), st.integers(0, 2**64 - 1)), max_size=8
    ),
    st.lists(st.sampled_from([".text", "", ".debug_line", "caf\udcc3"]), max_size=5),
    st.integers(0, 23),
)
def test_symbol_lists_of_generated_tables(
    elf64: bool,
    little: bool,
    strings: tuple[bytes, list[int]],
    fields: list[tuple[int, int, int]],
    sections: list[str],
    cut: int,
) -> None:
    strtab, offsets = strings
    e = "<" if little else ">"
    data = bytearray()
    for name, (info, shndx, value) in zip(offsets, fields, strict=False):
        if elf64:
            data += struct.pack(
                e + "IBBHQQ",
                name,
                info,
                0,
                shndx % len(sections) if sections and info % 3 else shndx,
                value,
                value >> 3,
            )
        else:
            data += struct.pack(e + "IIIBBH", name, value & 0xFFFFFFFF, value >> 40, info, 0, shndx)
    _same_list(
        cubin._symbol_list,
        cubin._RawSymbol,
        bytes(data) + b"\1" * (cut % 24),
        strtab,
        elf64,
        little,
        sections,
    )


def test_elf_table_kernels_decline_what_they_do_not_take() -> None:
    sections = native_of(cubin._section_list)
    table = struct.pack("<IIQQQQIIQQ", 0, 1, 0, 0, 0, 8, 0, 0, 1, 0) * 2
    file = cubin._Bytes(b"\0" * 8)
    made = sections(cubin._Section, table, b"\0", True, True, file, 8, "f")
    assert made == cubin._section_list.reference(cubin._Section, table, b"\0", True, True, file, 8, "f")
    assert made[1].file is file and made[1][7:] == (0, 8)
    assert sections(cubin._Section, table, b"\0", True, True, file, 7, "f") is None  # runs past the file
    assert sections(cubin._Section, table[:-1], b"\0", True, True, file, 8, "f") is None  # not whole headers
    assert sections(tuple, table, b"\0", True, True, file, 8, "f") is None
    assert sections(cubin._Section, table, b"\0", True, True, file, 2**70, "f") is None
    symbols = native_of(cubin._symbol_list)
    entry = struct.pack("<IBBHQQ", 0, 3, 0, 1, 16, 0)
    assert symbols(cubin._RawSymbol, entry, b"\0", True, True, ["", ".text"]) == [
        cubin._RawSymbol(".text", 16, 0, 3, 1, 0)
    ]
    assert symbols(cubin._RawSymbol, entry, b"\0", True, True, ("", ".text")) is None


# --- every device image of the fixtures -------------------------------------------------------


def _is_device_file(path: Path) -> bool:
    with path.open("rb") as fh:
        magic = fh.read(4)
    return magic in (b"\x7fELF", b"\x50\xed\x55\xba")


DEVICE_FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and _is_device_file(p))


@pytest.fixture
def both_sides(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """While it is active, each call of a kernel of ``cubin`` runs both sides and compares them;
    the list gains the name of each kernel called."""
    called: list[str] = []
    for function in (
        lines._rows,
        lines._scan_starts,
        regmap._entries,
        regmap._entries_json,
        regmap._sass_functions,
        cubin._applied,
        cubin._section_list,
        cubin._symbol_list,
    ):
        native = native_of(function)
        compared = _same_list if function in (cubin._section_list, cubin._symbol_list) else _same_or_declined

        def check(
            *args: Any,
            _function: Any = function,
            _native: Callable[..., Any] = native,
            _compared: Any = compared,
        ) -> Any:
            called.append(_function.__name__)
            return _compared(_function, *args, native=_native)

        monkeypatch.setattr(function, "native", check)
    yield called


def _read_everything(data: bytes, name: str) -> None:
    try:
        infos = ptxdwarf.read_all(data=data, filename=name)
    except PtxDwarfError:
        return
    for _label, info in infos:
        try:
            info.lines  # noqa: B018 - reads the line programs
            if isinstance(info.module, CubinImages) and info.module.line_sass is not None:
                lines.line_starts(info.module.line_sass)
            for f in register_map(info) or []:
                f.entries  # noqa: B018 - decodes the entries
                f.entries_json(dump._dumps)
        except PtxDwarfError:
            pass


@pytest.mark.usefixtures("both_sides")
@pytest.mark.parametrize("path", DEVICE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_device_file_of_the_fixtures(path: Path) -> None:
    _read_everything(path.read_bytes(), path.name)


def test_the_fixtures_reach_both_kernels(both_sides: list[str]) -> None:
    for path in DEVICE_FILES:
        _read_everything(path.read_bytes(), path.name)
    assert {
        "_rows",
        "_scan_starts",
        "_entries",
        "_entries_json",
        "_sass_functions",
        "_applied",
        "_section_list",
        "_symbol_list",
    } <= set(both_sides)


@pytest.mark.slow
@pytest.mark.ptxas
@pytest.mark.usefixtures("both_sides")
@pytest.mark.parametrize("path", GOOD_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_cubins_of_the_ptx_fixtures(path: Path, cubin_path: CubinPath) -> None:
    try:
        cubin = cubin_path(path.read_text(), path.name)
    except PtxDwarfError:
        pytest.skip("ptxas does not compile it for this machine")
    _read_everything(cubin.read_bytes(), cubin.name)
