"""The text dump's DIE printer, its ``.debug_loc`` block and its expressions against their
references, ``ptxdwarf.dump._die_lines``, ``_loc_lines`` and ``_decoded_text``: generated trees,
location lists and expressions of every kind of value they write themselves or ask the
reference for, in chunks of every size, and every fixture's units and location lists."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twins import native_of

import ptxdwarf
from ptxdwarf import dump
from ptxdwarf._native import Twin
from ptxdwarf.dwarf import expr
from ptxdwarf.dwarf.constants import AT, FORM, TAG
from ptxdwarf.dwarf.forms import sleb_bytes, uleb_bytes
from ptxdwarf.dwarf.image import Block, Reloc, Symbol
from ptxdwarf.dwarf.model import DIE, Attribute, DebugInfo, LocationList, Unit
from ptxdwarf.errors import PtxDwarfError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DIE_LINES = dump._die_lines

Stack = list[tuple[DIE | None, int]]
Chunk = Callable[[Any, Stack, int], tuple[int, str]]


def lines(made: tuple[int, str] | None) -> list[str] | None:
    """The lines a printer's ``(count, text)`` holds, each ended by a newline (None: it
    declined), checked against the count."""
    if made is None:
        return None
    count, text = made
    split = text.split("\n")
    assert split[-1] == "" and len(split) == count + 1
    return split[:-1]


def lines_of(chunk: Chunk, info: DebugInfo, unit: Unit, limit: int) -> tuple[list[str], str | None]:
    """Every line of ``unit``'s DIEs made ``limit`` at a time by ``chunk``, and the type of the
    error that stopped it (None: none)."""
    printer = dump._UnitPrinter(info, unit)
    stack: Stack = [(unit.die, 0)]
    out: list[str] = []
    try:
        while stack:
            made = lines(chunk(printer, stack, limit))
            assert made is not None
            out += made
    except Exception as exc:  # the two sides must fail alike
        return out, type(exc).__name__
    return out, None


def check(info: DebugInfo, limit: int = dump._CHUNK_LINES) -> list[str]:
    """Each unit's lines by the kernel (the reference taking what it declines) and by the
    reference alone: the same lines, the same error."""
    paired = Twin(DIE_LINES.reference, native_of(DIE_LINES))
    lines: list[str] = []
    for unit in info.units:
        if unit.die is None:
            continue
        expected = lines_of(DIE_LINES.reference, info, unit, limit)
        got = lines_of(paired, info, unit, limit)
        assert got == expected
        lines += expected[0]
    return lines


# --- generated trees -----------------------------------------------------------------------

NAMES = st.sampled_from(["x", "func_begin0", "$L__tmp3", ".debug_line", "_Z1fv"])
SYMBOLS = st.builds(
    Symbol,
    NAMES,
    st.sampled_from([0, 1, -1, 16, -(2**63), 2**63, 2**70]),
    st.none() | st.sampled_from([0, 0x40, 2**64 - 1, -3, 2**65]),
)
TEXTS = st.sampled_from(
    ["", "i", 'say "hi"', "back\\slash", "tab\there", "line\n", "\x7f", "é", "日本", "\udc80x"]
)
INTS = st.sampled_from([0, 1, 7, 0x28, 255, 2**32, 2**64 - 1, 2**64, -1, -(2**63), 2**100])
EXPRESSIONS = st.sampled_from(
    [
        b"",
        b"\x90\xb1\xe4\x02",
        b"\x91\x10",
        b"\x03" + bytes(8),
        b"\x93\x08",
        b"\x90",
        b"\xff\x01",
        b"\x0c\x00",
    ]
)


@st.composite
def blocks(draw: st.DrawFn) -> Block:
    data = draw(EXPRESSIONS | st.binary(max_size=12))
    relocs = [Reloc(draw(st.sampled_from([0, 1])), 8, draw(SYMBOLS))] if draw(st.booleans()) and data else []
    return Block(data, relocs)


@st.composite
def location_list(draw: st.DrawFn, offset: int) -> LocationList:
    ends = st.integers(0, 2**64 - 1) | st.sampled_from([-1, 2**64]) | SYMBOLS
    entries: list[Any] = [
        (draw(ends), draw(ends), draw(st.none() | blocks() | EXPRESSIONS))
        for _ in range(draw(st.integers(0, 4)))
    ]
    if draw(st.integers(0, 40)) == 0:
        entries.append((1, 2))  # not a triple: the reference raises, the kernel asks it
    return LocationList(offset, entries)


REFERENCE_FORMS = [FORM.ref4, FORM.ref1, FORM.ref_udata, FORM.ref_addr]
SCALAR_FORMS = [
    FORM.data1,
    FORM.data4,
    FORM.data8,
    FORM.sdata,
    FORM.udata,
    FORM.sec_offset,
    FORM.addr,
    FORM.flag,
]
ATTRIBUTE_NAMES = [AT.name, AT.type, AT.containing_type, AT.location, AT.frame_base, AT.low_pc, AT.byte_size]
NAMED = [AT.address_class, AT.encoding, AT.language, AT.inline, AT.accessibility, AT.visibility]


class OtherAttribute(Attribute):
    """An attribute of another class: the kernel asks the reference for its value."""

    __slots__ = ()


@st.composite
def attributes(draw: st.DrawFn, offsets: list[int]) -> Attribute:
    kind = draw(st.integers(0, 12))
    name = draw(st.sampled_from(ATTRIBUTE_NAMES))
    relocs: tuple[Reloc, ...] = ()
    if draw(st.integers(0, 3)) == 0:
        symbol: Any = draw(SYMBOLS | st.none())  # None: a relocation naming nothing
        relocs = (Reloc(draw(st.sampled_from([0, 0, 4])), 8, symbol),)
    if kind == 0:
        return Attribute(name, draw(st.sampled_from([FORM.string, FORM.strp, None])), draw(TEXTS))
    if kind == 1:
        form = draw(st.sampled_from([*SCALAR_FORMS, None]))
        return Attribute(name, form, draw(INTS), relocs)
    if kind == 2:
        target: Any = draw(st.sampled_from(offsets) | st.integers(0, 400) | st.sampled_from([None, True, -4]))
        return Attribute(name, draw(st.sampled_from(REFERENCE_FORMS)), 0, target=target)
    if kind == 3:
        form = draw(st.sampled_from([FORM.exprloc, FORM.block1, FORM.block, FORM.string, None]))
        return Attribute(
            draw(st.sampled_from([AT.location, AT.frame_base, AT.name, AT.const_value])), form, draw(blocks())
        )
    if kind == 4:
        name = draw(st.sampled_from([AT.location, AT.frame_base]))
        form = draw(st.sampled_from([FORM.data4, FORM.sec_offset, FORM.data8]))
        return Attribute(name, form, draw(st.sampled_from([0, 16, 32, 999])), relocs)
    if kind == 5:
        return Attribute(
            draw(st.sampled_from(NAMED)), draw(st.sampled_from([FORM.data1, FORM.sdata])), draw(INTS), relocs
        )
    if kind == 6:
        return Attribute(
            AT.external, draw(st.sampled_from([FORM.flag_present, FORM.flag])), draw(st.booleans())
        )
    if kind == 7:
        inner = draw(attributes(offsets))
        return Attribute(inner.name, FORM.indirect, inner)
    if kind == 8:
        return Attribute(
            name, draw(st.sampled_from(SCALAR_FORMS)), draw(st.sampled_from([[1, 2], b"ab", None, 1.5j]))
        )
    if kind == 9:
        return OtherAttribute(name, FORM.data4, draw(INTS))
    if kind == 10:
        return Attribute(draw(st.integers(0, 0x3FFF)), draw(st.integers(0, 0x30)), draw(INTS))
    if kind == 11:
        return Attribute(name, FORM.data4, draw(st.sampled_from([True, False])))
    return Attribute(AT.type, FORM.ref4, DIE(TAG.base_type, [Attribute(AT.name, FORM.string, draw(TEXTS))]))


@st.composite
def debug_infos(draw: st.DrawFn) -> DebugInfo:
    """A unit of DIEs of every kind of value, some nested past the printer's deepest indent."""
    count = draw(st.integers(1, 14))
    offsets = [
        draw(st.integers(-1, 2**40)) if draw(st.integers(0, 8)) == 0 else 11 + 7 * i for i in range(count)
    ]
    dies = [
        DIE(draw(st.sampled_from([TAG.variable, TAG.subprogram, TAG.base_type, 0x4109])), offset=offset)
        for offset in offsets
    ]
    for die in dies:
        die.attributes = [draw(attributes(offsets)) for _ in range(draw(st.integers(0, 5)))]
        die.has_children = draw(st.booleans())
    root = DIE(TAG.compile_unit, [Attribute(AT.producer, FORM.string, "gen")], offset=11)
    parent = root
    for die in dies:
        if draw(st.booleans()):
            parent = root
        parent.children.append(die)
        parent = die
    if draw(st.booleans()):
        chain = DIE(TAG.lexical_block, offset=1000)
        root.children.append(chain)
        for depth in range(45):
            chain.children.append(
                DIE(TAG.lexical_block, [Attribute(AT.low_pc, FORM.addr, depth)], offset=1001 + depth)
            )
            chain = chain.children[0]
    if draw(st.booleans()):  # codes as a decoded tree holds them (ints, not the enums' members)
        for die in root.iter_subtree():
            die.tag = int(die.tag)
            for a in die.attributes:
                a.name = int(a.name)
                a.form = None if a.form is None else int(a.form)
    unit = Unit(version=2, address_size=draw(st.sampled_from([4, 8])), die=root, offset=0, length=100)
    lists = [draw(location_list(offset)) for offset in (0, 16, 32)]
    return DebugInfo(units=[unit], _locations=lists)


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

LOC_LINES = dump._loc_lines


def loc_lines_of(
    chunk: Callable[..., tuple[int, str]], locations: list[LocationList], limit: int
) -> tuple[list[str], str | None]:
    """Every line of the ``.debug_loc`` block of ``locations`` made ``limit`` lists at a time
    by ``chunk`` (as ``dump._loc_text`` asks), or none and the type of the error that stopped it."""
    printer = dump._LocationPrinter(8)
    out: list[str] = []
    try:
        while len(out) < len(locations):
            made = lines(chunk(printer, locations, len(out), limit))
            assert made is not None and 0 < len(made) <= limit
            out += made
    except (
        Exception
    ) as exc:  # the two sides must fail alike (the kernel may have made more lines of the chunk)
        return [], type(exc).__name__
    return out, None


def check_locations(locations: list[LocationList], limit: int = dump._CHUNK_LINES) -> list[str]:
    """The ``.debug_loc`` lines by the kernel (the reference taking what it declines) and by the
    reference alone: the same lines, the same error."""
    expected = loc_lines_of(LOC_LINES.reference, locations, limit)
    assert loc_lines_of(Twin(LOC_LINES.reference, native_of(LOC_LINES)), locations, limit) == expected
    return expected[0]


@SETTINGS
@given(debug_infos(), st.sampled_from([1, 2, 3, 7, 50, 4096]))
def test_generated_trees_are_printed_alike(info: DebugInfo, limit: int) -> None:
    check(info, limit)


@SETTINGS
@given(
    st.lists(st.integers(0, 2**64 - 1), max_size=8).flatmap(
        lambda offsets: st.tuples(*(location_list(offset) for offset in offsets))
    ),
    st.sampled_from([1, 2, 3, 4096]),
)
def test_generated_location_lists_are_printed_alike(locations: tuple[LocationList, ...], limit: int) -> None:
    check_locations(list(locations), limit)


def test_a_location_list_the_kernel_does_not_take_is_left_to_the_reference() -> None:
    """A list whose entries are not a list, or whose offset is not an int: the kernel stops
    before it (or declines it at once) and the reference prints it."""
    native = native_of(LOC_LINES)
    printer = dump._LocationPrinter(8)
    good = LocationList(16, [(0, 8, Block(b"\x90\xb1\xe4\x02")), (8, 8, None)])
    odd = LocationList(32, (((0, 4, b"\x91\x10"),)))  # type: ignore[arg-type]
    expected = lines(LOC_LINES.reference(printer, [good, odd, good], 0, 10))
    assert expected is not None
    assert expected[0] == "0x00000010: [0x0, 0x8): DW_OP_regx 0xb231 [base address 0x8]"
    assert lines(native(printer, [good, odd, good], 0, 10)) == expected[:1]
    assert native(printer, [good, odd, good], 1, 10) is None
    assert lines(native(printer, [good, odd, good], 2, 10)) == expected[2:]
    assert native(printer, [LocationList(True, [])], 0, 10) is None  # an offset not exactly an int
    assert native(printer, [good], 0, 0) is None
    assert native(printer, [good], 5, 10) == (0, "")


def test_an_item_the_kernel_does_not_take_is_left_to_the_reference() -> None:
    """A stack item of another shape, a DIE of another class, a negative depth: the kernel
    stops before it (or declines it at once) and the reference prints it."""
    native = native_of(DIE_LINES)

    class OtherDIE(DIE):
        __slots__ = ()

    info = DebugInfo()
    unit = Unit(die=DIE(TAG.compile_unit, offset=0))
    printer = dump._UnitPrinter(info, unit)
    die = DIE(TAG.variable, [Attribute(AT.name, FORM.string, "v")], offset=4)
    stack: Stack = [(OtherDIE(TAG.variable, offset=9), 0), (die, 1)]
    assert lines(native(printer, stack, 100)) == [
        "0x00000004:   DW_TAG_variable",
        '                DW_AT_name [DW_FORM_string]\t("v")',
        "",
    ]
    assert len(stack) == 1 and native(printer, stack, 100) is None
    assert native(printer, [(die, -1)], 100) is None
    assert native(printer, [(die, 1, 2)], 100) is None
    assert native(printer, [], 100) == (0, "")


def test_expressions_are_kept_by_block_while_the_block_lives() -> None:
    """Two Blocks of the same bytes, one with a relocation: each gets its own text."""
    native = native_of(DIE_LINES)
    plain = Block(b"\x03" + bytes(8))
    moved = Block(b"\x03" + bytes(8), [Reloc(1, 8, Symbol("g", 4))])
    die = DIE(
        TAG.variable,
        [Attribute(AT.location, FORM.exprloc, plain), Attribute(AT.location, FORM.exprloc, moved)],
        offset=0,
    )
    unit = Unit(die=die)
    made = lines(native(dump._UnitPrinter(DebugInfo(units=[unit]), unit), [(die, 0)], 10))
    assert made is not None
    assert made[1].endswith("(DW_OP_addr 0)") and made[2].endswith("(DW_OP_addr g+4)")


# --- fixtures ------------------------------------------------------------------------------


def _fixtures() -> list[Path]:
    suffixes = {".ptx", ".cubin", ".fatbin", ".o"}
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in suffixes and p.is_file())


def test_every_fixture() -> None:
    """Every PTX, cubin, fatbin and host object under fixtures/ (each module's units)."""
    native_of(DIE_LINES)
    printed = located = 0
    for path in _fixtures():
        try:
            modules = list(ptxdwarf.read_all(path))
        except PtxDwarfError:
            continue
        for _, info in modules:
            try:
                _ = info.locations
            except PtxDwarfError:
                continue
            printed += len(check(info))
            if info.locations:
                located += len(check_locations(info.locations))
    assert printed > 100_000 and located > 250


@pytest.mark.parametrize("limit", [1, 5])
def test_a_fixture_in_small_chunks(limit: int) -> None:
    info = ptxdwarf.read(FIXTURES / "nvcc" / "readable.G.sm_75.ptx")
    assert len(check(info, limit)) > 100


def test_a_named_value_with_a_relocation_is_not_taken_from_one_without() -> None:
    """The kernel keeps the text of a named value by (name, form, value) only for attributes
    without relocations: one with a symbol shows it."""
    native = native_of(DIE_LINES)
    bare = Attribute(int(AT.inline), int(FORM.data4), 99)
    placed = Attribute(int(AT.inline), int(FORM.data4), 99, (Reloc(0, 4, Symbol("s", 2)),))
    known = Attribute(int(AT.inline), int(FORM.data4), 1, (Reloc(0, 4, Symbol("s", 2)),))
    die = DIE(int(TAG.subprogram), [bare, placed, bare, known], offset=0)
    unit = Unit(die=die)
    made = lines(native(dump._UnitPrinter(DebugInfo(units=[unit]), unit), [(die, 0)], 10))
    assert made is not None
    assert [line.split("\t")[1] for line in made[1:5]] == [
        "(0x63)",
        "(0x63 <s+2>)",
        "(0x63)",
        "(DW_INL_inlined)",
    ]


# --- expressions ---------------------------------------------------------------------------

DECODED_TEXT = dump._decoded_text


def check_expression(data: bytes, address_size: int, *, declines: bool = False) -> tuple[str, str | None]:
    """The kernel's text of an expression against the reference's: the same, or declined where
    the reference says the expression cannot be read (or, with ``declines``, where an operand
    passes 64 bits)."""
    native = native_of(DECODED_TEXT)
    expected = DECODED_TEXT.reference(data, address_size)
    got = native(data, address_size)
    if got is None:
        assert expected[1] is not None or declines, (data.hex(), expected)
    else:
        assert got == expected, data.hex()
    return expected


def _operand(kind: str, address_size: int) -> st.SearchStrategy[bytes]:
    """The bytes of one operand of ``kind`` (``expr._OPERANDS``), any value it can hold."""
    fixed = {"1": 1, "2": 2, "4": 4, "8": 8, "o": 4}
    if kind == "a":
        return st.binary(min_size=address_size, max_size=address_size)
    if kind[0] in fixed:
        size = fixed[kind[0]]
        return st.binary(min_size=size, max_size=size)
    if kind == "u":
        return st.integers(0, 2**64 - 1).map(uleb_bytes)
    if kind == "s":
        return st.integers(-(2**63), 2**63 - 1).map(sleb_bytes)
    if kind == "B":
        return st.binary(max_size=6).map(lambda b: uleb_bytes(len(b)) + b)
    return st.binary(max_size=6).map(lambda b: bytes([len(b)]) + b)


@st.composite
def _expression(draw: st.DrawFn, address_size: int) -> bytes:
    """An expression of known operations with their operands, among them registers ptxas names."""
    codes = sorted(expr._KNOWN)
    out = b""
    for _ in range(draw(st.integers(0, 5))):
        code = draw(st.sampled_from([0x90, 0x92, 0x91, 0x23, 0x96, *codes]))
        out += bytes([code])
        kinds = expr._OPERANDS.get(code, ())
        for i, kind in enumerate(kinds):
            if code in (0x90, 0x92) and i == 0 and draw(st.booleans()):
                name = draw(st.sampled_from(["%r1", "%rd12", "%f3", "p", "_x", "%!~", "9a", "a b"]))
                out += uleb_bytes(int.from_bytes(name.encode(), "big"))
            else:
                out += draw(_operand(kind, address_size))
    return out


@SETTINGS
@given(st.sampled_from([4, 8]).flatmap(lambda size: st.tuples(_expression(size), st.just(size))))
def test_generated_expressions_are_printed_alike(case: tuple[bytes, int]) -> None:
    check_expression(*case)


@SETTINGS
@given(st.binary(max_size=24), st.sampled_from([4, 8]))
def test_any_bytes_as_an_expression(data: bytes, address_size: int) -> None:
    check_expression(data, address_size, declines=True)


def test_expressions_the_kernel_leaves_to_the_reference() -> None:
    native = native_of(DECODED_TEXT)
    regx = b"\x90" + uleb_bytes(int.from_bytes(b"%r1", "big"))
    assert native(regx, 8) == ("DW_OP_regx %r1", None)
    assert native(Block(regx), 8) is None  # a Block: it may hold relocations
    assert native(b"\x10" + b"\xff" * 10 + b"\x01", 8) is None  # past 64 bits
    assert native(b"\x91", 8) is None and DECODED_TEXT.reference(b"\x91", 8)[1]  # cut short
    assert native(b"\x01", 8) is None and DECODED_TEXT.reference(b"\x01", 8)[1]  # unknown
    assert native(b"", 8) == ("", None)


def test_every_expression_of_the_fixtures() -> None:
    """Each expression of a DIE or a location list of every fixture, as the dump prints it."""
    seen: set[tuple[bytes, int]] = set()
    for path in _fixtures():
        try:
            modules = list(ptxdwarf.read_all(path))
            for _, info in modules:
                for unit in info.units:
                    for die in unit.iter_dies():
                        for attr in die.attributes:
                            if isinstance(attr.value, Block) and attr.is_expression and not attr.value.relocs:
                                seen.add((bytes(attr.value), unit.address_size))
                for loc in info.locations or []:
                    for _b, _e, block in loc.entries:
                        if block is not None and not block.relocs:
                            seen.add((bytes(block), 8))
        except PtxDwarfError:
            continue
    native = native_of(DECODED_TEXT)
    for data, address_size in seen:
        check_expression(data, address_size, declines=True)  # a register name of 9 characters or more
    taken = sum(native(data, size) is not None for data, size in seen)
    assert len(seen) > 1000 and taken > 0.95 * len(seen)
