"""The native DIE decoder against its reference, ``dwarf.decode.decode_units``: the same units,
DIE for DIE and attribute for attribute, or the reference's error where the kernel declines."""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_roundtrip_property import trees
from twins import native_of, same

import ptxdwarf
import ptxdwarf._native
import ptxdwarf.dwarf
from ptxdwarf._native import Twin
from ptxdwarf.dwarf import FORM, TAG, decode
from ptxdwarf.dwarf.forms import uleb_bytes
from ptxdwarf.dwarf.image import Reloc, SectionImage, Symbol
from ptxdwarf.dwarf.model import DIE, DebugInfo, LocationList, Unit, die_index
from ptxdwarf.dwarf.plain import lists_shape, units_shape
from ptxdwarf.errors import PtxDwarfError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def shape(units: list[Unit] | None) -> Any:
    return units_shape(units)


def _shaped(function: Callable[..., list[Unit] | None]) -> Callable[..., Any]:
    return lambda *args: shape(function(*args))


DECODE_UNITS = decode.decode_units
READ_LOCATION_LISTS = decode.read_location_lists


def shaped_twin() -> Twin[Any, Any]:
    """decode_units with both sides giving :func:`shape` s, for :func:`twins.same`."""
    return Twin(_shaped(DECODE_UNITS.reference), _shaped(native_of(DECODE_UNITS)))


def inputs(images: dict[str, SectionImage]) -> tuple[Any, ...]:
    """decode_units' arguments for the sections ``images``."""
    abbrev = images.get(".debug_abbrev")
    tables = decode._decode_abbrev(abbrev) if abbrev is not None else []
    strings = decode._decode_strings(images[".debug_str"]) if ".debug_str" in images else None
    return (images[".debug_info"], tables, strings, decode.make_resolver(images))


def _uses_indirect(args: tuple[Any, ...]) -> bool:
    return any(form == FORM.indirect for t in args[1] for d in t.decls for _, form in d.specs)


def _past_64_bits(units: list[Unit]) -> bool:
    """Whether a value of ``units`` does not fit 64 bits (a long ULEB128 or SLEB128)."""
    return any(
        type(a.innermost.value) is int and not -(2**63) <= a.innermost.value < 2**64
        for u in units
        for d in u.iter_dies()
        for a in d.attributes
    )


def check(args: tuple[Any, ...]) -> None:
    """Both sides on ``args`` (:func:`twins.same`); the kernel declines DW_FORM_indirect and
    values past 64 bits, which the reference reads."""
    pair = shaped_twin()
    try:
        units = DECODE_UNITS.reference(*args)
    except PtxDwarfError:
        units = None
    if units is None or not (_uses_indirect(args) or _past_64_bits(units)):
        same(pair, *args)
        return
    got = pair.native(*args)  # type: ignore[misc]
    assert got is None or got == shape(units)


def _applied(image: SectionImage, resolve: Callable[[Any], int]) -> SectionImage:
    """``image`` as a cubin holds it: each relocation's value written into the bytes."""
    data = bytearray(image.data)
    for r in image.relocs:
        value = resolve(r.symbol) & ((1 << (8 * r.size)) - 1)
        data[r.offset : r.offset + r.size] = value.to_bytes(r.size, "little")
    return dataclasses.replace(image, data=bytes(data), relocs_applied=True)


def _encoded(info: DebugInfo, string_labels: bool) -> dict[str, SectionImage]:
    return ptxdwarf.dwarf.encode_sections(info, ptxdwarf.dwarf.EncodeOptions(string_labels=string_labels))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.booleans(), st.booleans())
def test_generated_units(info: DebugInfo, string_labels: bool, applied: bool) -> None:
    images = _encoded(info, string_labels)
    args = inputs(images)
    if applied:
        args = (_applied(args[0], args[3]), *args[1:])
    check(args)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.data())
def test_mutated_and_truncated_units(info: DebugInfo, data: st.DataObject) -> None:
    images = _encoded(info, data.draw(st.booleans()))
    args = inputs(images)
    raw = bytearray(args[0].data)
    for _ in range(data.draw(st.integers(1, 4))):
        what = data.draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        at = data.draw(st.integers(0, max(len(raw) - 1, 0)))
        if what == "flip" and raw:
            raw[at] = data.draw(st.integers(0, 255))
        elif what == "cut":
            del raw[at:]
        elif what == "insert":
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=4))
        elif raw:
            del raw[at]
    image = dataclasses.replace(args[0], data=bytes(raw), _reloc_map=None, _reloc_offsets=None)
    check((image, *args[1:]))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=60))
def test_random_bytes(info: bytes, abbrev: bytes) -> None:
    images = {
        ".debug_info": SectionImage(".debug_info", info),
        ".debug_abbrev": SectionImage(".debug_abbrev", abbrev),
    }
    try:
        args = inputs(images)
    except PtxDwarfError:
        return
    check(args)


def _fixtures() -> list[Path]:
    suffixes = {".ptx", ".cubin", ".fatbin", ".o"}
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in suffixes and p.is_file())


def _read_every_fixture() -> None:
    """Read the DIEs and location lists of every fixture (those that cannot be read stop at their error)."""
    for path in _fixtures():
        try:
            for _, info in ptxdwarf.read_all(path):
                info.locations  # noqa: B018 - decoded on first use
        except PtxDwarfError:
            pass


def test_symbols_are_resolved_as_the_resolver_resolves_them() -> None:
    """The kernel looks labels up in the resolver's own table once every section's labels are
    read: a label of a section not read yet (read on the way), a label no section defines (0),
    an addend on both, a section name (its addend), a symbol with a value (the value)."""
    abbrev = bytes(
        [1, 0x11, 0, 0x02, 0x17, 0x11, 0x01, 0x12, 0x01, 0x10, 0x17, 0x40, 0x17, 0x55, 0x17, 0, 0, 0]
    )
    info = (40).to_bytes(4, "little") + bytes([4, 0, 0, 0, 0, 0, 8, 1]) + bytes(32)
    relocs = [
        Reloc(12, 4, Symbol("$L__loc1", 4)),
        Reloc(16, 8, Symbol("$L__func_begin0")),
        Reloc(24, 8, Symbol("$L__func_begin0", 16)),
        Reloc(32, 4, Symbol(".debug_line", 2)),
        Reloc(36, 4, Symbol("$L__frame", 0, 40)),
        Reloc(40, 4, Symbol("$L__loc1", 2)),
    ]
    images = {
        ".debug_abbrev": SectionImage(".debug_abbrev", abbrev),
        ".debug_info": SectionImage(".debug_info", info, relocs),
        ".debug_loc": SectionImage(".debug_loc", bytes(16), labels={"$L__loc1": 8}),
    }
    expected = [12, 0, 16, 2, 40, 10]
    for side in (native_of(DECODE_UNITS), DECODE_UNITS.reference):
        units = side(*inputs(images))
        assert units is not None and units[0].die is not None
        assert [a.value for a in units[0].die.attributes] == expected


def test_every_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every PTX, cubin, fatbin and host object under fixtures/: the units each decodes, and
    its location lists."""
    native_of(DECODE_UNITS)
    seen: list[str] = []

    def units(*args: Any) -> list[Unit]:
        check(args)
        seen.append("units")
        return DECODE_UNITS.reference(*args)

    def lists(*args: Any) -> tuple[list[LocationList], int]:
        same(shaped_lists(args[3]), *args)
        seen.append("lists")
        return READ_LOCATION_LISTS.reference(*args)

    monkeypatch.setattr(decode, "decode_units", units)
    monkeypatch.setattr(decode, "read_location_lists", lists)
    _read_every_fixture()
    assert seen.count("units") > 100 and seen.count("lists") > 20


# --- .debug_loc -----------------------------------------------------------------------


def list_shape(result: tuple[list[LocationList], int] | None, model: list[LocationList] | None) -> Any:
    return lists_shape(result, model=model)


def shaped_lists(model: list[LocationList] | None) -> Twin[Any, Any]:
    """read_location_lists with both sides giving :func:`list_shape` s."""
    native = native_of(READ_LOCATION_LISTS)
    return Twin(
        lambda *args: list_shape(READ_LOCATION_LISTS.reference(*args), model),
        lambda *args: list_shape(native(*args), model),
    )


SYMBOL_NAMES = st.sampled_from(["$L__tmp1", "$L__tmp2", "func_begin0", "$L__dropped"])


@st.composite
def location_sections(draw: st.DrawFn) -> tuple[SectionImage, int]:
    """Lists of random entries back to back, with relocations at some begins, ends and inside
    expressions, as PTX (zeros) or a cubin (values applied) holds them; sometimes cut short."""
    asize = draw(st.sampled_from([4, 8]))
    applied = draw(st.booleans())
    data = bytearray()
    relocs: list[Reloc] = []
    for _ in range(draw(st.integers(0, 4))):
        for _ in range(draw(st.integers(0, 4))):
            for _ in range(2):
                value = draw(st.sampled_from([0, 1, 0x40, (1 << (8 * asize)) - 1]))
                if draw(st.booleans()):
                    symbol = Symbol(draw(SYMBOL_NAMES), draw(st.integers(0, 8)))
                    symbol.value = draw(st.sampled_from([None, value, 0])) if applied else None
                    relocs.append(Reloc(len(data), asize, symbol))
                    value = value if applied else 0
                data += value.to_bytes(asize, "little")
            if int.from_bytes(data[-2 * asize : -asize], "little") == (1 << (8 * asize)) - 1 and draw(
                st.booleans()
            ):
                continue
            expr = draw(st.binary(max_size=12))
            data += len(expr).to_bytes(2, "little")
            if len(expr) >= 4 and draw(st.booleans()):
                relocs.append(Reloc(len(data), 4, Symbol(draw(SYMBOL_NAMES))))
            data += expr
        data += bytes(2 * asize)
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    unresolved = frozenset(["$L__dropped"]) if draw(st.booleans()) else frozenset()
    image = SectionImage(".debug_loc", bytes(data), relocs, relocs_applied=applied, unresolved=unresolved)
    return image, asize


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(location_sections(), st.integers(0, 40))
def test_location_lists(section: tuple[SectionImage, int], start: int) -> None:
    image, asize = section
    pos = min(start, len(image.data)) if start % 3 else 0
    same(shaped_lists(None), image, asize, pos, None)
    # Read again with the first reading as the model: its expressions are reused where the bytes are the same.
    model, _ = READ_LOCATION_LISTS.reference(image, asize, pos, None)
    same(shaped_lists(model), image, asize, pos, model)


def test_the_kernel_declines_an_unknown_form() -> None:
    image = SectionImage(".debug_info", bytes([7, 0, 0, 0, 2, 0, 0, 0, 0, 0, 8, 1, 0]))
    abbrev = SectionImage(".debug_abbrev", bytes([1, 0x11, 0, 0x03, 0x7F, 0, 0, 0]))
    args = inputs({".debug_info": image, ".debug_abbrev": abbrev})
    assert native_of(decode.decode_units)(*args) is None
    with pytest.raises(PtxDwarfError, match="unknown form 0x7f"):
        decode.decode_units(*args)


# --- the collector --------------------------------------------------------------------


def _live(kind: type) -> int:
    """Instances of ``kind`` the cyclic collector tracks."""
    return sum(type(o) is kind for o in gc.get_objects())


def test_a_decoded_tree_given_a_cycle_through_an_attribute_is_collected() -> None:
    """A DIE made the value of one of its own decoded attributes (a cycle through the
    attribute) is freed with its tree when dropped, whichever core decoded it."""
    gc.collect()
    before = _live(DIE)
    info = ptxdwarf.read(FIXTURES / "nvcc" / "readable.G.sm_75.ptx")
    dies = list(info.iter_dies())
    assert len(dies) > 10
    for die in dies:
        for attr in die.attributes:
            attr.value = die
    assert _live(DIE) >= before + len(dies)
    del info, dies, die, attr
    gc.collect()
    assert _live(DIE) == before


def test_native_decoded_attributes_are_not_walked_by_the_collector() -> None:
    """The native decoder's attributes and their relocations are left out of the cyclic
    collector's walks (they cannot be in a cycle); an assignment brings one back in."""
    native_of(DECODE_UNITS)
    if ptxdwarf._native.CHECK:
        pytest.skip("PTXDWARF_NATIVE_CHECK=1 keeps the reference's objects")
    info = ptxdwarf.read(FIXTURES / "nvcc" / "readable.G.sm_75.ptx")
    attrs = [a for die in info.iter_dies() for a in die.attributes]
    relocs = [r for a in attrs for r in a.relocs]
    assert attrs and relocs
    assert not any(gc.is_tracked(a) for a in attrs)
    assert not any(gc.is_tracked(r) for r in relocs)
    attrs[0].form = attrs[0].form
    assert gc.is_tracked(attrs[0]) and not gc.is_tracked(attrs[1])


# --- .debug_abbrev --------------------------------------------------------------------

ABBREV_ENTRIES = decode.abbrev_entries

#: Numbers of an abbreviation table: small ones, the edges of one to nine ULEB128 bytes, and
#: some past 64 bits (which the kernel declines).
_ABBREV_NUMBERS = st.one_of(
    st.integers(0, 0x90),
    st.sampled_from([0x7F, 0x80, 0x3FFF, 0x4000, 2**32, 2**63, 2**64 - 1, 2**64, 2**70]),
)


def _uleb(value: int, padding: int = 0) -> bytes:
    """``value`` in ULEB128, with ``padding`` needless 0x80 groups before its last byte."""
    raw = bytearray(uleb_bytes(value))
    for _ in range(padding):
        raw[-1] |= 0x80
        raw.append(0)
    return bytes(raw)


@st.composite
def abbrev_sections(draw: st.DrawFn) -> bytes:
    """Tables of declarations with random codes (some 0, which ends a table early), tags,
    children bytes (not only 0 and 1) and (attribute, form) pairs (some with one of the two 0),
    some numbers padded, the whole sometimes cut short or followed by noise."""
    data = bytearray()
    for _ in range(draw(st.integers(0, 3))):
        for _ in range(draw(st.integers(0, 4))):
            data += _uleb(draw(_ABBREV_NUMBERS), draw(st.integers(0, 2)))
            data += _uleb(draw(_ABBREV_NUMBERS), draw(st.integers(0, 1)))
            data.append(draw(st.sampled_from([0, 1, 2, 0xFF])))
            for _ in range(draw(st.integers(0, 4))):
                name, form = draw(_ABBREV_NUMBERS), draw(_ABBREV_NUMBERS)
                data += _uleb(name) + _uleb(form, draw(st.integers(0, 1)))
            data += b"\0\0"
        data.append(0)
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    if draw(st.booleans()):
        data += draw(st.binary(max_size=20))
    return bytes(data)


def check_abbrev(data: bytes, pos: int) -> None:
    """The kernel gives the reference's declarations, or declines where the reference finds
    the table cut short (None) or reads a number past 64 bits."""
    native = native_of(ABBREV_ENTRIES)
    expected = ABBREV_ENTRIES.reference(data, pos)
    got = native(data, pos)
    if got is None:
        past = expected is not None and any(
            n >= 2**64
            for entry in expected[0]
            for n in (*entry[1:4], *(x for pair in entry[4] for x in pair))
        )
        assert expected is None or past, "the kernel declines a table the reference reads"
        return
    assert got == expected


@settings(max_examples=500, deadline=None)
@given(abbrev_sections(), st.data())
def test_abbreviation_tables(data: bytes, draw: st.DataObject) -> None:
    check_abbrev(data, draw.draw(st.integers(0, max(0, len(data) - 1))))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80))
def test_abbreviation_tables_of_random_bytes(data: bytes) -> None:
    check_abbrev(data, 0)


def test_a_number_past_64_bits_is_declined_and_read_by_the_reference() -> None:
    data = _uleb(1) + _uleb(2**64) + b"\0" + b"\0\0" + b"\0"
    assert native_of(ABBREV_ENTRIES)(data, 0) is None
    assert ABBREV_ENTRIES(data, 0) == ([(0, 1, 2**64, 0, ())], len(data))


def test_every_fixture_abbreviation_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The abbreviation tables of every PTX, cubin, fatbin and host object under fixtures/."""
    native_of(ABBREV_ENTRIES)
    seen: list[int] = []

    def entries(data: bytes, pos: int) -> Any:
        check_abbrev(data, pos)
        seen.append(pos)
        return ABBREV_ENTRIES.reference(data, pos)

    monkeypatch.setattr(decode, "abbrev_entries", entries)
    _read_every_fixture()
    assert len(seen) > 100


# --- the DIEs by offset -----------------------------------------------------------------

DIE_INDEX = die_index


def check_index(units: list[Unit]) -> None:
    """The kernel's index is the reference's: the same offsets in the same order, each the same DIE."""
    expected = DIE_INDEX.reference(units)
    got = native_of(DIE_INDEX)(units)
    assert got is not None
    assert list(got) == list(expected) and all(got[k] is expected[k] for k in expected)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.integers(-2, 40) | st.sampled_from([2**63, 2**70, -(2**70)]), min_size=1, max_size=30),
    st.data(),
)
def test_die_index_of_generated_trees(offsets: list[int], data: st.DataObject) -> None:
    """Trees of DIEs at random offsets (some negative, some repeated) under one or two units."""
    dies = [DIE(TAG.variable, offset=offset) for offset in offsets]
    roots = [dies[0]]
    for i, die in enumerate(dies[1:], 1):
        parent = dies[data.draw(st.integers(0, i - 1))]
        if data.draw(st.integers(0, 5)) == 0:
            roots.append(die)
        else:
            parent.children.append(die)
    units = [Unit(die=root) for root in roots] + [Unit()]
    check_index(units)


def test_die_index_of_every_fixture() -> None:
    seen = 0
    for path in _fixtures():
        try:
            for _, info in ptxdwarf.read_all(path):
                check_index(info.units)
                seen += len(info.units)
        except PtxDwarfError:
            pass
    assert seen > 100


def test_die_index_declines_what_it_does_not_know() -> None:
    class OtherDIE(DIE):
        __slots__ = ()

    class OtherUnit(Unit):
        pass

    native = native_of(DIE_INDEX)
    odd = DIE(TAG.variable, offset=4)
    odd.children = ()  # type: ignore[assignment]
    cases: list[list[Unit]] = [
        [Unit(die=DIE(TAG.compile_unit, [], [OtherDIE(TAG.variable)], offset=0))],
        [OtherUnit(die=DIE(TAG.compile_unit, offset=0))],
        [Unit(die=odd)],
        [Unit(die=DIE(TAG.compile_unit, offset=True))],
    ]
    for units in cases:
        assert native(units) is None
        assert DIE_INDEX(units) == DIE_INDEX.reference(units)
