"""The Construct schemas, and the fast per-form path checked against them."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from construct import ConstructError, StreamError
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxdwarf
import ptxdwarf.dwarf
import ptxdwarf.dwarf.encode
from ptxdwarf.dwarf import AT, FORM, TAG, Reloc, Symbol
from ptxdwarf.dwarf.built import BuiltDIE
from ptxdwarf.dwarf.forms import read_sleb, read_uleb, sleb_bytes, uleb_bytes
from ptxdwarf.dwarf.image import Block
from ptxdwarf.dwarf.schemas import (
    ABBREV_TABLE,
    MACINFO,
    SLEB128,
    STRING_TABLE,
    ULEB128,
    build_aranges_set,
    build_location_list,
    build_name_set,
    schemas_for,
)

ENCODINGS = [(v, a) for v in (2, 3, 4) for a in (4, 8)]


def check(schema: Any, data: bytes, expected: Any = None, **params: Any) -> Any:
    """Parse ``data``, build it back, and do the same with the compiled schema where it compiles."""
    parsed = schema.parse(data, **params)
    if expected is not None:
        assert parsed == expected
    relocs: list[Reloc] = []
    assert schema.build(parsed, out_relocs=relocs, **params) == data
    try:
        compiled = schema.compile()
    except Exception:  # schemas with Python predicates do not compile
        compiled = None
    if compiled is not None:
        assert compiled.parse(data, **params) == parsed
        assert compiled.build(parsed, out_relocs=[], **params) == data
    return parsed


@given(st.integers(min_value=0, max_value=2**70))
def test_uleb128(value: int) -> None:
    raw = uleb_bytes(value)
    assert ULEB128.build(value) == raw
    assert ULEB128.parse(raw) == value
    assert read_uleb(raw + b"\xff", 0) == (value, len(raw))


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_sleb128(value: int) -> None:
    raw = sleb_bytes(value)
    assert SLEB128.build(value) == raw
    assert SLEB128.parse(raw) == value
    assert read_sleb(raw + b"\xff", 0) == (value, len(raw))


def test_leb128_known_values() -> None:
    # DWARF 4 standard, figures 22 and 23
    assert uleb_bytes(127) == b"\x7f"
    assert uleb_bytes(128) == b"\x80\x01"
    assert uleb_bytes(12857) == b"\xb9\x64"
    assert sleb_bytes(-2) == b"\x7e"
    assert sleb_bytes(-127) == b"\x81\x7f"
    assert sleb_bytes(-128) == b"\x80\x7f"
    assert sleb_bytes(129) == b"\x81\x01"
    # the %r1 register name of the guide's example
    assert list(uleb_bytes(0x257231)) == [177, 228, 149, 1]


def _form_values(form: int, version: int, asize: int) -> st.SearchStrategy[Any]:
    fixed: dict[int, int] = {
        FORM.data1: 1,
        FORM.flag: 1,
        FORM.ref1: 1,
        FORM.data2: 2,
        FORM.ref2: 2,
        FORM.data4: 4,
        FORM.ref4: 4,
        FORM.strp: 4,
        FORM.sec_offset: 4,
        FORM.data8: 8,
        FORM.ref8: 8,
        FORM.ref_sig8: 8,
        FORM.addr: asize,
        FORM.ref_addr: asize if version == 2 else 4,
    }
    if form in fixed:
        return st.integers(min_value=0, max_value=2 ** (8 * fixed[form]) - 1)
    if form in (FORM.udata, FORM.ref_udata):
        return st.integers(min_value=0, max_value=2**64)
    if form == FORM.sdata:
        return st.integers(min_value=-(2**63), max_value=2**63)
    if form == FORM.string:
        return st.binary(max_size=40).map(lambda b: b.replace(b"\0", b"x"))
    if form == FORM.block1:
        return st.binary(max_size=255)
    if form in (FORM.block2, FORM.block4, FORM.block, FORM.exprloc):
        return st.binary(max_size=300)
    if form == FORM.flag_present:
        return st.just(True)
    raise AssertionError(form)


FORMS = [
    FORM.addr,
    FORM.block2,
    FORM.block4,
    FORM.data2,
    FORM.data4,
    FORM.data8,
    FORM.string,
    FORM.block,
    FORM.block1,
    FORM.data1,
    FORM.flag,
    FORM.sdata,
    FORM.strp,
    FORM.udata,
    FORM.ref_addr,
    FORM.ref1,
    FORM.ref2,
    FORM.ref4,
    FORM.ref8,
    FORM.ref_udata,
    FORM.sec_offset,
    FORM.exprloc,
    FORM.flag_present,
    FORM.ref_sig8,
]


def _encode_one(form: int, value: Any, version: int, asize: int, built: bool) -> tuple[Any, Any]:
    """Encode a unit whose root DIE has one attribute (made as an Attribute, or as a
    built DIE's spec and value), and decode it again: the section images and
    the decoded attribute."""
    name = AT.name if form in (FORM.string, FORM.strp) else AT.const_value
    if built:
        root: ptxdwarf.DIE = BuiltDIE.make(TAG.compile_unit, [(name, value, form)])
        assert isinstance(root, BuiltDIE) and root.specs is not None
    else:
        root = ptxdwarf.DIE(TAG.compile_unit, [ptxdwarf.Attribute(name, form, value)])
    info = ptxdwarf.DebugInfo(units=[ptxdwarf.Unit(version, asize, die=root)])
    encoded = ptxdwarf.dwarf.encode.encode(
        info, ptxdwarf.dwarf.EncodeOptions(strings="strp" if form == FORM.strp else "inline")
    )
    decoded = ptxdwarf.dwarf.decode_sections(encoded.images)
    die = decoded.units[0].die
    assert die is not None
    return encoded.images, die.attributes[0]


@pytest.mark.parametrize("built", [False, True], ids=["general", "shape"])
@pytest.mark.parametrize("version,asize", ENCODINGS)
@pytest.mark.parametrize("form", FORMS, ids=lambda f: FORM(f).name)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
@pytest.mark.slow
def test_encoder_and_decoder_match_schema(
    form: int, version: int, asize: int, built: bool, data: st.DataObject
) -> None:
    """The encoder's writers and the decoder, as production runs them, give the bytes
    and values the form's schema does."""
    schema = schemas_for(version, asize).form_values[form]
    value = data.draw(_form_values(form, version, asize))
    if form == FORM.string:
        value = value.decode("utf-8", "surrogateescape")
    elif form == FORM.strp:
        value = data.draw(
            st.text(st.characters(blacklist_characters="\0", blacklist_categories=["Cs"]), max_size=20)
        )
    elif form in (FORM.block1, FORM.block2, FORM.block4, FORM.block, FORM.exprloc):
        value = Block(value)
    images, attr = _encode_one(form, value, version, asize, built)
    image = images[".debug_info"]
    raw = image.data[attr.offset :]
    relocs: list[Reloc] = []
    if form == FORM.strp:
        symbol = Symbol(".debug_str", attr.target)
        built_bytes = schema.build(symbol, out_relocs=relocs, base=attr.offset)
        assert relocs == [r for r in image.relocs if r.offset == attr.offset]
        assert images[".debug_str"].data[attr.target :].split(b"\0")[0] == value.encode()
    else:
        built_bytes = schema.build(
            None
            if form == FORM.flag_present
            else value.encode("utf-8", "surrogateescape")
            if form == FORM.string
            else value
        )
    assert raw[: len(built_bytes)] == built_bytes
    parsed = schema.parse(raw, relocs=image.reloc_map, base=attr.offset)
    if form == FORM.flag_present:
        assert parsed is None and attr.value is True
    elif form == FORM.strp:
        assert parsed == symbol and attr.value == value
    elif form == FORM.string:
        assert parsed == value.encode("utf-8", "surrogateescape") and attr.value == value
    else:
        assert parsed == attr.value == value
    assert attr.form == form


@pytest.mark.parametrize("version,asize", ENCODINGS)
def test_unit_header_matches_schema(version: int, asize: int) -> None:
    """The header the encoder writes and the decoder reads is the schema's."""
    images, _attr = _encode_one(FORM.data1, 7, version, asize, False)
    image = images[".debug_info"]
    header = schemas_for(version, asize).unit_header.parse(image.data, relocs=image.reloc_map)
    unit = ptxdwarf.dwarf.decode_sections(images).units[0]
    assert (header.unit_length, header.version, header.address_size) == (unit.length, version, asize)
    assert header.debug_abbrev_offset == Symbol(".debug_abbrev") == unit.abbrev_offset
    assert header.unit_length == len(image.data) - 4


@pytest.mark.parametrize("version,asize", ENCODINGS)
def test_indirect_and_unknown_forms(version: int, asize: int) -> None:
    s = schemas_for(version, asize)
    raw = bytes([FORM.data2]) + struct.pack("<H", 0x1234)
    parsed = check(s.form_values[FORM.indirect], raw)
    assert parsed.form == FORM.data2 and parsed.value == 0x1234
    with pytest.raises(ConstructError):
        s.attribute_value.parse(b"\x00", form=0x7F)
    with pytest.raises(StreamError):
        s.form_values[FORM.indirect].parse(b"\x7f\x00")


def test_truncated_values_are_errors() -> None:
    s = schemas_for(2, 8)
    for form, raw in (
        (FORM.data4, b"\x01\x02"),
        (FORM.block1, b"\x05\x01"),
        (FORM.string, b"abc"),
        (FORM.addr, b"\x00" * 7),
    ):
        with pytest.raises(ConstructError):
            s.form_values[form].parse(raw)


def test_abbreviation_table_of_the_guide() -> None:
    raw = bytes([1, 17, 1, 37, 8, 19, 11, 0, 0, 2, 46, 0, 135, 64, 8, 0, 0, 0])
    table = check(ABBREV_TABLE, raw)
    assert [e.code for e in table] == [1, 2, 0]
    assert table[0].decl.tag == 17 and table[0].decl.children == 1
    assert [(a.name, a.form) for a in table[1].decl.attr_specs] == [(0x2007, 8), (0, 0)]
    with pytest.raises(ConstructError):
        ABBREV_TABLE.parse(raw[:-1])


def test_unit_header_with_symbol() -> None:
    s = schemas_for(2, 8)
    raw = struct.pack("<IHIB", 262, 2, 0, 8)
    header = check(s.unit_header, raw, relocs={6: Reloc(6, 4, Symbol(".debug_abbrev"))})
    assert header.debug_abbrev_offset == Symbol(".debug_abbrev")
    out: list[Reloc] = []
    assert s.unit_header.build(header, out_relocs=out) == raw
    assert out == [Reloc(6, 4, Symbol(".debug_abbrev"))]


def test_pubnames_set_of_the_guide() -> None:
    s = schemas_for(2, 8)
    raw = (
        struct.pack("<IHII", 41, 2, 0, 262)
        + struct.pack("<I", 69)
        + b"_Z3fooii\0"
        + struct.pack("<I", 174)
        + b"_Z4testPi\0"
        + struct.pack("<I", 0)
    )
    parsed = check(s.pubnames_set, raw, relocs={6: Reloc(6, 4, Symbol(".debug_info"))})
    assert parsed.debug_info_offset == Symbol(".debug_info")
    assert [(e.die_offset, e.name) for e in parsed.entries] == [
        (69, b"_Z3fooii"),
        (174, b"_Z4testPi"),
        (0, None),
    ]
    with pytest.raises(ConstructError):
        s.pubnames_set.parse(struct.pack("<I", 0x0C800000) + raw[4:])


@pytest.mark.parametrize("asize", [4, 8])
def test_aranges_set(asize: int) -> None:
    s = schemas_for(2, asize)
    fmt = "<Q" if asize == 8 else "<I"
    pad = (-12) % (2 * asize)
    body = (
        struct.pack("<HIBB", 2, 0, asize, 0)
        + bytes(pad)
        + struct.pack(fmt, 0)
        + struct.pack(fmt, 0x100)
        + bytes(2 * asize)
    )
    raw = struct.pack("<I", len(body)) + body
    first = 4 + 8 + pad
    parsed = check(s.aranges_set, raw, relocs={first: Reloc(first, asize, Symbol("func_begin0"))})
    assert parsed.tuples[0].begin == Symbol("func_begin0") and parsed.tuples[0].end == 0x100


@pytest.mark.parametrize("asize", [4, 8])
def test_location_list_symbols_are_not_end_markers(asize: int) -> None:
    s = schemas_for(2, asize)
    fmt = "<Q" if asize == 8 else "<I"
    # A list whose first entry's bounds are labels (zeros in PTX text), then the end pair.
    raw = struct.pack(fmt, 0) + struct.pack(fmt, 0) + struct.pack("<H", 2) + b"\x90\x01" + bytes(2 * asize)
    relocs = {0: Reloc(0, asize, Symbol("$L__tmp0")), asize: Reloc(asize, asize, Symbol("$L__tmp1"))}
    parsed = check(s.location_list, raw, relocs=relocs)
    assert len(parsed) == 2
    assert parsed[0].begin == Symbol("$L__tmp0") and parsed[0].expr == b"\x90\x01"
    # Without the relocations the first pair ends the list.
    assert len(s.location_list.parse(raw)) == 1
    # A base-address selection entry has no expression.
    base = struct.pack(fmt, 2 ** (8 * asize) - 1) + struct.pack(fmt, 0x40) + bytes(2 * asize)
    parsed = check(s.location_list, base)
    assert parsed[0].expr is None


def test_expression_block_carries_symbols() -> None:
    s = schemas_for(2, 8)
    raw = bytes([9, 3]) + bytes(8)
    parsed = check(s.form_values[FORM.block1], raw, relocs={2: Reloc(2, 8, Symbol("_Z4testPi_param_0"))})
    assert parsed.relocs == (Reloc(1, 8, Symbol("_Z4testPi_param_0")),)


def test_string_table_and_macinfo() -> None:
    check(STRING_TABLE, b"abc\0\0de\0")
    check(MACINFO, b"\x01\x05X 1\0\x03\x00\x01\x04\x00")
    with pytest.raises(ConstructError):
        MACINFO.parse(b"\x09")


_NAMES = st.binary(min_size=0, max_size=12).filter(lambda b: b"\0" not in b)
_OFFSETS = st.one_of(
    st.integers(0, 2**32 - 1), st.builds(Symbol, st.sampled_from([".debug_info", "x"]), st.integers(0, 64))
)


def _schema_build(schema: Any, obj: Any, base: int) -> tuple[bytes, list[Reloc]]:
    relocs: list[Reloc] = []
    return schema.build(obj, out_relocs=relocs, base=base), relocs


@settings(max_examples=60, deadline=None)
@given(
    offset=_OFFSETS,
    length=st.integers(0, 2**32 - 1),
    names=st.lists(st.tuples(st.integers(1, 2**32 - 1), _NAMES), max_size=5),
    base=st.integers(0, 1000),
    rest=st.binary(max_size=3),
)
def test_plain_name_set_builder_matches_schema(
    offset: Any, length: int, names: list[Any], base: int, rest: bytes
) -> None:
    """build_name_set writes what the pubnames schema writes, relocations included."""
    entries: list[dict[str, Any]] = [{"die_offset": o, "name": n} for o, n in names] + [
        {"die_offset": 0, "name": None}
    ]
    obj = {
        "version": 2,
        "debug_info_offset": offset,
        "debug_info_length": length,
        "entries": entries,
        "rest": rest,
    }
    relocs: list[Reloc] = []
    assert (
        build_name_set(obj, base, relocs)
        == _schema_build(schema_set := schemas_for(2, 8).pubnames_set, obj, base)[0]
    )
    assert relocs == _schema_build(schema_set, obj, base)[1]


@pytest.mark.parametrize("asize", [4, 8])
@settings(max_examples=40, deadline=None)
@given(
    offset=_OFFSETS,
    tuples=st.lists(st.tuples(_OFFSETS, st.integers(1, 2**32 - 1)), max_size=4),
    base=st.integers(0, 1000),
)
def test_plain_aranges_builder_matches_schema(asize: int, offset: Any, tuples: list[Any], base: int) -> None:
    """build_aranges_set writes what the aranges schema writes, relocations included."""
    obj = {
        "version": 2,
        "debug_info_offset": offset,
        "address_size": asize,
        "segment_size": 0,
        "padding": bytes((-12) % (2 * asize)),
        "tuples": [{"begin": b, "end": e} for b, e in tuples] + [{"begin": 0, "end": 0}],
        "rest": b"",
    }
    relocs: list[Reloc] = []
    built = build_aranges_set(obj, base, relocs, address_size=asize)
    assert (built, relocs) == _schema_build(schemas_for(2, asize).aranges_set, obj, base)


def test_plain_builders_leave_the_unusual_to_the_schema() -> None:
    """No terminator, a name with a NUL, a value that does not fit: None, and the schema decides."""
    ok = {"version": 2, "debug_info_offset": 0, "debug_info_length": 0, "rest": b""}
    assert build_name_set({**ok, "entries": [{"die_offset": 5, "name": b"a"}]}, 0, []) is None
    assert (
        build_name_set({**ok, "entries": [{"die_offset": 5, "name": b"a\0b"}, {"die_offset": 0}]}, 0, [])
        is None
    )
    assert build_name_set({**ok, "debug_info_length": 2**32, "entries": [{"die_offset": 0}]}, 0, []) is None
    relocs: list[Reloc] = []
    assert (
        build_name_set(
            {**ok, "debug_info_offset": Symbol("x"), "entries": [{"die_offset": 2**33, "name": b"a"}]},
            0,
            relocs,
        )
        is None
    )
    assert relocs == []  # nothing recorded for a record the schema builds instead


_EXPRS = st.one_of(
    st.binary(max_size=6).map(Block),
    st.tuples(st.binary(min_size=8, max_size=8), st.sampled_from(["x", "__local_depot0"])).map(
        lambda t: Block(t[0], [Reloc(0, 8, Symbol(t[1]))])
    ),
)


@pytest.mark.parametrize("asize", [4, 8])
@settings(max_examples=40, deadline=None)
@given(
    ranges=st.lists(st.tuples(_OFFSETS, _OFFSETS, _EXPRS, st.booleans()), max_size=4),
    base=st.integers(0, 1000),
)
def test_plain_location_list_builder_matches_schema(asize: int, ranges: list[Any], base: int) -> None:
    """build_location_list writes what the location-list schema writes, base selections included."""
    top = (1 << (8 * asize)) - 1
    entries: list[dict[str, Any]] = []
    for begin, end, expr, select_base in ranges:
        if type(begin) is int:
            begin %= top
        if type(end) is int:
            end %= top
        if type(begin) is int and type(end) is int and begin == end == 0:
            end = 1
        entries.append(
            {"begin": top, "end": end, "expr": None}
            if select_base
            else {"begin": begin, "end": end, "expr": expr}
        )
    entries.append({"begin": 0, "end": 0, "expr": None})
    relocs: list[Reloc] = []
    built = build_location_list(entries, base, relocs, address_size=asize)
    assert (built, relocs) == _schema_build(schemas_for(2, asize).location_list, entries, base)
