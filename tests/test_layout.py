"""The layout engine (ptxdwarf.layout) against nvcc's DWARF and the rules of spec ch. 1.

Ground truth is ``fixtures/layout``: ``cases.py`` describes each type as written in
``types.cu`` (source only) and ``expected.json`` holds what nvcc -G wrote into DWARF.
Every case is rebuilt here from its source description with the layout engine and
compared with nvcc's numbers; the expected values come only from ``expected.json``.
The focused tests below take their numbers from the spec text (1.2, 1.3 and its
figures) or from the C ABI examples the figures reproduce.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ptxdwarf.errors import LayoutError
from ptxdwarf.layout import (
    Field,
    Layout,
    Placed,
    array_layout,
    layout_struct,
    layout_union,
    vector_layout,
)

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "layout"


def _load_cases() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ptxdwarf_layout_fixture_cases", FIXTURE / "cases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = _load_cases()
EXPECTED: dict[str, Any] = json.loads((FIXTURE / "expected.json").read_text())
BY_NAME: dict[str, dict[str, Any]] = {case["name"]: case for case in CASES.CASES}


# ---------------------------------------------------------------------------
# adapter: cases.py C spellings -> (size, align), aggregates via the engine
# ---------------------------------------------------------------------------

#: spec 1.1 sizes (= alignments); long is the host's (LP64: 8 bytes).
FUNDAMENTAL = {
    "char": 1,
    "signed char": 1,
    "unsigned char": 1,
    "bool": 1,
    "short": 2,
    "unsigned short": 2,
    "int": 4,
    "unsigned int": 4,
    "float": 4,
    "long": 8,
    "unsigned long": 8,
    "long long": 8,
    "unsigned long long": 8,
    "double": 8,
}
POINTER_SIZE = 8  # .address_size 64
VECTOR_MEMBERS = ("x", "y", "z", "w")


def type_layout(spelling: str | dict[str, Any]) -> tuple[int, int]:
    """(size, align) of a type spelled as in cases.py."""
    if isinstance(spelling, dict):  # anonymous aggregate member
        lay = aggregate_layout(spelling)
        return lay.size, lay.align
    if spelling.endswith("*"):
        return POINTER_SIZE, POINTER_SIZE
    if spelling in FUNDAMENTAL:
        return FUNDAMENTAL[spelling], FUNDAMENTAL[spelling]
    if spelling in CASES.TYPEDEFS:
        return type_layout(CASES.TYPEDEFS[spelling])
    if spelling.startswith("enum "):
        return type_layout(CASES.ENUMS[spelling[len("enum ") :]]["underlying"])
    if spelling.startswith(("struct ", "union ")):
        lay = named_layout(spelling.split(" ", 1)[1])
        return lay.size, lay.align
    if spelling in CASES.CUDA_TYPES:
        lay = cuda_type_layout(spelling)
        return lay.size, lay.align
    raise KeyError(f"no size known for {spelling!r}")


@cache
def cuda_type_layout(name: str) -> Layout:
    """A CUDA header type as the struct nvcc describes it (members x, y, z, w)."""
    entry = CASES.CUDA_TYPES[name]
    if entry["kind"] == "scalar":  # __half: struct __align__(2) { unsigned short __x; }
        fields = [Field(n, *type_layout(t)) for n, t in entry["header_members"]]
        return layout_struct(fields, align=entry["header_align"], name=name)
    element = type_layout(entry["elem"])
    fields = [Field(VECTOR_MEMBERS[i], *element) for i in range(entry["count"])]
    if entry["native"]:  # spec 1.2 native vector rule decides size and alignment
        size, align = vector_layout(*element, entry["count"])
        return layout_struct(fields, align=align, size=size, name=name)
    # not a PTX native vector: a plain struct with the header's __align__
    return layout_struct(fields, align=entry["header_align"], name=name)


def member_field(member: dict[str, Any]) -> Field:
    """The engine's Field for a cases.py member."""
    size, align = type_layout(member["type"])
    if member.get("dims"):
        size, align = array_layout(size, align, member["dims"])
    return Field(
        member["name"],
        size,
        align,
        bit_size=member.get("bits"),
        align_override=member.get("align"),
    )


def aggregate_layout(aggregate: dict[str, Any]) -> Layout:
    fields = [member_field(m) for m in aggregate["members"]]
    if aggregate["kind"] == "union":
        return layout_union(fields, align=aggregate.get("align"), name=aggregate.get("name"))
    return layout_struct(fields, align=aggregate.get("align"), name=aggregate.get("name"))


@cache
def named_layout(name: str) -> Layout:
    return aggregate_layout(BY_NAME[name])


# ---------------------------------------------------------------------------
# every case against nvcc
# ---------------------------------------------------------------------------


def compare(where: str, aggregate: dict[str, Any], lay: Layout, exp: dict[str, Any]) -> int:
    """Assert ``lay`` matches nvcc's ``exp``; return how many members were compared."""
    assert aggregate["kind"] == exp["kind"], where
    assert lay.size == exp["byte_size"], f"{where}: size {lay.size}, nvcc {exp['byte_size']}"
    assert len(lay.members) == len(exp["members"]), where
    compared = 0
    for member, placed, e in zip(aggregate["members"], lay.members, exp["members"], strict=False):
        at = f"{where}.{member['name']}"
        assert placed.name == member["name"] == e["name"], at
        assert placed.size == e["type_byte_size"], f"{at}: size {placed.size}, nvcc {e['type_byte_size']}"
        loc = e["data_member_location"]
        assert placed.offset == loc, f"{at}: offset {placed.offset}, nvcc {loc}"
        if "bit_size" in e:
            got = (
                placed.size,
                placed.bit_size,
                placed.dwarf2_bit_offset,
                placed.bit_position,
                placed.data_bit_offset,
            )
            want = (e["byte_size"], e["bit_size"], e["bit_offset"], e["bit_position"], e["bit_position"])
            assert got == want, (
                f"{at}: (byte_size, bit_size, bit_offset, bit_position, data_bit_offset) {got}, nvcc {want}"
            )
        elif placed.is_bit_field:
            # nvcc writes a full-width bit field as an ordinary member
            assert placed.full_width, f"{at}: nvcc wrote no bit attributes for a {placed.bit_size}-bit field"
            assert placed.bit_position == 8 * loc, at
            assert placed.dwarf2_bit_offset == 0, at
        else:
            assert placed.bit_position is None and placed.dwarf2_bit_offset is None, at
        compared += 1
        if isinstance(member["type"], dict):
            inner = aggregate_layout(member["type"])
            compared += compare(at, member["type"], inner, e["anonymous_aggregate"])
    return compared


def test_fixture_covers_every_case() -> None:
    assert sorted(BY_NAME) == sorted(EXPECTED["cases"])
    assert len(BY_NAME) == 61


@pytest.mark.parametrize("name", list(BY_NAME))
def test_case_matches_nvcc(name: str) -> None:
    compare(name, BY_NAME[name], named_layout(name), EXPECTED["cases"][name])


def _expected_members(aggregate: dict[str, Any]) -> list[dict[str, Any]]:
    """Every member nvcc describes in ``aggregate``, anonymous aggregates' members included."""
    out: list[dict[str, Any]] = []
    for member in aggregate["members"]:
        out.append(member)
        if "anonymous_aggregate" in member:
            out.extend(_expected_members(member["anonymous_aggregate"]))
    return out


def test_every_member_of_every_case_is_compared() -> None:
    compared = sum(
        compare(name, BY_NAME[name], named_layout(name), EXPECTED["cases"][name]) for name in BY_NAME
    )
    members = [m for case in EXPECTED["cases"].values() for m in _expected_members(case)]
    assert compared == len(members) == 282
    assert sum("bit_size" in m for m in members) == 81  # with DWARF bit attributes
    full_width = [
        (name, placed.name) for name in BY_NAME for placed in named_layout(name).members if placed.full_width
    ]
    assert len(full_width) == 6  # L22.d, L23.d, L50.a-d: written by nvcc as plain members


@pytest.mark.parametrize("name", list(CASES.CUDA_TYPES))
def test_cuda_type_matches_nvcc(name: str) -> None:
    lay = cuda_type_layout(name)
    exp = EXPECTED["vector_types"][name]
    assert lay.size == exp["byte_size"]
    assert [p.name for p in lay.members] == [e["name"] for e in exp["members"]]
    assert [p.offset for p in lay.members] == [e["data_member_location"] for e in exp["members"]]


@pytest.mark.parametrize(
    "name", [n for n, d in CASES.CUDA_TYPES.items() if d["kind"] == "vector" and d["native"]]
)
def test_native_vector_rule_agrees_with_header_align(name: str) -> None:
    """Where vector_types.h states an __align__, the spec 1.2 rule gives the same."""
    entry = CASES.CUDA_TYPES[name]
    _, align = vector_layout(*type_layout(entry["elem"]), entry["count"])
    if entry["header_align"] is not None:
        assert align == entry["header_align"]
    else:  # odd counts: the header gives none, the element's alignment applies
        assert entry["count"] % 2 == 1


def test_fundamental_and_enum_sizes_match_nvcc() -> None:
    for name, base in EXPECTED["base_types"].items():
        if name in FUNDAMENTAL:
            assert FUNDAMENTAL[name] == base["byte_size"], name
    for name in CASES.ENUMS:
        assert type_layout(f"enum {name}")[0] == EXPECTED["enums"][name]["byte_size"], name


# ---------------------------------------------------------------------------
# spec 1.2: aggregates, unions, native vectors, arrays
# ---------------------------------------------------------------------------

CHAR = (1, 1)
SHORT = (2, 2)
INT = (4, 4)
LONG_LONG = (8, 8)
DOUBLE = (8, 8)


def offsets(lay: Layout) -> list[int]:
    return [p.offset for p in lay.members]


def test_members_at_lowest_aligned_offset_and_tail_padding() -> None:
    lay = layout_struct([Field("c", *CHAR), Field("i", *INT), Field("s", *SHORT)])
    assert offsets(lay) == [0, 4, 8]
    assert (lay.size, lay.align) == (12, 4)
    lay = layout_struct([Field("d", *DOUBLE), Field("c", *CHAR)])
    assert (lay.size, lay.align) == (16, 8)


def test_union_is_as_big_and_aligned_as_its_largest_member() -> None:
    lay = layout_union([Field("c", *CHAR), Field("d", *DOUBLE), Field("s", 6, 2)])
    assert offsets(lay) == [0, 0, 0]
    assert (lay.size, lay.align) == (8, 8)
    lay = layout_union([Field("c", 5, 1), Field("i", *INT)])
    assert (lay.size, lay.align) == (8, 4)


@pytest.mark.parametrize(
    ("element", "count", "expected"),
    [
        (CHAR, 1, (1, 1)),
        (CHAR, 2, (2, 2)),
        (CHAR, 3, (3, 1)),
        (CHAR, 4, (4, 4)),
        (SHORT, 3, (6, 2)),
        (SHORT, 4, (8, 8)),
        (INT, 1, (4, 4)),
        (INT, 2, (8, 8)),
        (INT, 3, (12, 4)),
        (INT, 4, (16, 16)),
        (DOUBLE, 1, (8, 8)),
        (DOUBLE, 2, (16, 16)),
    ],
)
def test_vector_odd_count_aligns_like_element_even_count_n_times(
    element: tuple[int, int], count: int, expected: tuple[int, int]
) -> None:
    assert vector_layout(*element, count) == expected


@pytest.mark.parametrize(
    ("element", "count"), [(DOUBLE, 3), (DOUBLE, 4), (INT, 5), (CHAR, 0), (LONG_LONG, 0)]
)
def test_vector_counts_outside_spec_are_rejected(element: tuple[int, int], count: int) -> None:
    with pytest.raises(LayoutError, match=f"not {count}"):
        vector_layout(*element, count)


def test_vector_element_errors() -> None:
    with pytest.raises(LayoutError, match="alignment 3"):
        vector_layout(4, 3, 2)
    with pytest.raises(LayoutError, match="negative size"):
        vector_layout(-4, 4, 2)


def test_arrays() -> None:
    assert array_layout(2, 2, [2, 3]) == (12, 2)
    assert array_layout(8, 8, [2, 1, 2]) == (32, 8)
    assert array_layout(4, 4, [0]) == (0, 4)
    assert array_layout(4, 4, []) == (4, 4)
    with pytest.raises(LayoutError, match="dimension -1"):
        array_layout(4, 4, [2, -1])
    with pytest.raises(LayoutError, match="alignment 6"):
        array_layout(4, 6, [2])


# ---------------------------------------------------------------------------
# spec 1.3: bit fields
# ---------------------------------------------------------------------------


def bits(name: str | None, type_: tuple[int, int], width: int) -> Field:
    return Field(name, *type_, bit_size=width)


def test_fig2_allocated_from_least_significant_bit() -> None:
    """Fig. 2: struct { int j:5; int k:6; int m:7; } -- one int, j in bits 0..4."""
    lay = layout_struct([bits("j", INT, 5), bits("k", INT, 6), bits("m", INT, 7)])
    assert (lay.size, lay.align) == (4, 4)
    assert [p.bit_position for p in lay.members] == [0, 5, 11]
    assert offsets(lay) == [0, 0, 0]
    # DWARF 2 counts from the unit's most significant bit
    assert [p.dwarf2_bit_offset for p in lay.members] == [27, 21, 14]
    assert [p.data_bit_offset for p in lay.members] == [0, 5, 11]


def test_fig3_boundary_alignment() -> None:
    """Fig. 3: { short s:9; int j:9; char c; short t:9; short u:9; char d; } sizeof 12."""
    lay = layout_struct(
        [
            bits("s", SHORT, 9),
            bits("j", INT, 9),
            Field("c", *CHAR),
            bits("t", SHORT, 9),
            bits("u", SHORT, 9),
            Field("d", *CHAR),
        ]
    )
    assert (lay.size, lay.align) == (12, 4)
    assert [p.bit_position for p in lay.members] == [0, 9, None, 32, 48, None]
    assert offsets(lay) == [0, 0, 3, 4, 6, 8]


def test_field_never_crosses_its_unit() -> None:
    lay = layout_struct([bits("a", INT, 30), bits("b", INT, 4)])
    assert lay.member("b").bit_position == 32
    assert lay.member("b").offset == 4
    assert lay.size == 8
    lay = layout_struct([bits("a", CHAR, 5), bits("b", CHAR, 4)])
    assert [p.offset for p in lay.members] == [0, 1]


def test_fig4_sharing_a_unit_with_a_plain_member() -> None:
    """Fig. 4: struct { char c; short s:8; } -- s shares the short unit with c."""
    lay = layout_struct([Field("c", *CHAR), bits("s", SHORT, 8)])
    s = lay.member("s")
    assert (s.offset, s.size, s.bit_position, s.dwarf2_bit_offset) == (0, 2, 8, 0)
    assert (lay.size, lay.align) == (2, 2)


def test_unit_is_the_naturally_aligned_block_holding_the_cursor() -> None:
    # char c[3]; int x:16 -- bits 24..39 would cross the int at 0: x moves to 32
    lay = layout_struct([Field("c", 3, 1), bits("x", INT, 16)])
    assert (lay.member("x").bit_position, lay.member("x").offset) == (32, 4)
    # char c; short s:9 -- 8..16 crosses the short at 0: s moves to 16
    lay = layout_struct([Field("c", *CHAR), bits("s", SHORT, 9)])
    assert lay.member("s").bit_position == 16


def test_plain_member_after_bit_fields_takes_next_suitable_byte() -> None:
    lay = layout_struct([bits("a", INT, 3), Field("c", *CHAR)])
    assert lay.member("c").offset == 1
    assert (lay.size, lay.align) == (4, 4)


def test_fig5_union_allocation() -> None:
    """Fig. 5: union { char c; short s:8; } -- 2-byte aligned, sizeof 2."""
    lay = layout_union([Field("c", *CHAR), bits("s", SHORT, 8)])
    assert (lay.size, lay.align) == (2, 2)
    assert lay.member("s").bit_position == 0
    assert lay.member("s").dwarf2_bit_offset == 8


def test_unnamed_bit_fields_do_not_affect_alignment() -> None:
    lay = layout_struct([Field("a", *CHAR), bits(None, INT, 5), Field("b", *CHAR)])
    assert (lay.size, lay.align) == (3, 1)
    assert lay.members[1].bit_position == 8
    lay = layout_union([Field("c", *CHAR), bits(None, INT, 20)])
    assert (lay.size, lay.align) == (3, 1)


def test_named_bit_field_contributes_its_type_alignment() -> None:
    lay = layout_struct([Field("c", *CHAR), bits("x", LONG_LONG, 3)])
    assert (lay.size, lay.align) == (8, 8)
    assert lay.member("x").bit_position == 8


def test_fig6_unnamed_and_zero_length_bit_fields() -> None:
    """Fig. 6: { char c; int :0; char d; short :9; char e; char :0; } sizeof 9, align 1."""
    lay = layout_struct(
        [
            Field("c", *CHAR),
            bits(None, INT, 0),
            Field("d", *CHAR),
            bits(None, SHORT, 9),
            Field("e", *CHAR),
            bits(None, CHAR, 0),
        ]
    )
    assert (lay.size, lay.align) == (9, 1)
    assert offsets(lay) == [0, 4, 4, 6, 8, 9]
    assert [p.bit_position for p in lay.members] == [None, 32, None, 48, None, 72]
    zero = lay.members[1]
    assert (zero.bit_size, zero.dwarf2_bit_offset) == (0, 32)


def test_zero_length_forces_next_member_to_boundary_without_external_alignment() -> None:
    lay = layout_struct([Field("a", *CHAR), bits(None, INT, 0), Field("b", *CHAR)])
    assert lay.member("b").offset == 4
    assert (lay.size, lay.align) == (5, 1)
    # between bit fields: the next one starts a new unit
    lay = layout_struct([bits("a", INT, 3), bits(None, INT, 0), bits("b", INT, 3)])
    assert lay.member("b").bit_position == 32
    # already on the boundary: nothing moves
    lay = layout_struct([Field("a", *CHAR), bits(None, CHAR, 0), Field("b", *CHAR)])
    assert offsets(lay) == [0, 1, 1]
    # trailing: the struct ends at the boundary (g++, clang and nvcc: sizeof 4)
    assert layout_struct([Field("a", *CHAR), bits(None, INT, 0)]).size == 4


def test_full_width_bit_field_is_laid_out_like_a_plain_member() -> None:
    lay = layout_struct([bits("a", CHAR, 8), bits("b", SHORT, 16), bits("c", INT, 32)])
    assert offsets(lay) == [0, 2, 4]
    assert all(p.full_width for p in lay.members)
    assert [p.dwarf2_bit_offset for p in lay.members] == [0, 0, 0]
    assert [p.bit_size for p in lay.members] == [8, 16, 32]  # kept; a writer may drop them
    assert not layout_struct([bits("a", INT, 31)]).members[0].full_width


def test_bit_fields_of_different_types_share_a_region() -> None:
    """long long a:4; char b; int c:4; short d:4 -- each in its own type's unit."""
    lay = layout_struct([bits("a", LONG_LONG, 4), Field("b", *CHAR), bits("c", INT, 4), bits("d", SHORT, 4)])
    assert [p.bit_position for p in lay.members] == [0, None, 16, 20]
    assert offsets(lay) == [0, 1, 0, 2]
    assert lay.member("d").dwarf2_bit_offset == 8
    assert (lay.size, lay.align) == (8, 8)


# ---------------------------------------------------------------------------
# what the input language decides
# ---------------------------------------------------------------------------


def test_empty_class() -> None:
    assert layout_struct([]).size == 1
    assert layout_struct([bits(None, INT, 0)]).size == 1
    assert layout_struct([], cxx_empty_size=False).size == 0
    assert layout_union([]).size == 1
    assert layout_struct([], align=16).size == 16  # struct alignas(16) {}
    # a zero-length array is a data member: no empty-class byte (g++: sizeof 0)
    assert layout_struct([Field("a", 0, 4)]).size == 0


def test_aggregate_align_raises_alignment_and_size() -> None:
    lay = layout_struct([Field("c", *CHAR), Field("i", *INT)], align=16)
    assert (lay.size, lay.align) == (16, 16)
    lay = layout_struct([Field("d", *DOUBLE)], align=4)  # alignas never lowers
    assert lay.align == 8


def test_member_alignas() -> None:
    lay = layout_struct([Field("c", *CHAR), Field("i", *INT, align_override=16), Field("d", *CHAR)])
    assert offsets(lay) == [0, 16, 20]
    assert (lay.size, lay.align) == (32, 16)


def test_explicit_size() -> None:
    lay = layout_struct([Field("i", *INT)], size=12)
    assert (lay.size, lay.align) == (12, 4)


def test_packed() -> None:
    """GCC __attribute__((packed)); the numbers are g++'s and clang's."""
    lay = layout_struct([Field("c", *CHAR), Field("i", *INT), bits("s", SHORT, 9)], packed=True)
    assert offsets(lay)[:2] == [0, 1]
    assert lay.member("s").bit_position == 40
    assert (lay.size, lay.align) == (7, 1)
    # bit fields may cross their unit; zero-length ones still round up
    lay = layout_struct([bits("a", CHAR, 3), bits("x", INT, 30), Field("b", *CHAR)], packed=True)
    x = lay.member("x")
    assert (x.bit_position, lay.member("b").offset, lay.size) == (3, 5, 6)
    assert x.dwarf2_bit_offset == -1  # no 4-byte unit holds bits 3..32: use data_bit_offset
    lay = layout_struct([Field("a", *CHAR), bits(None, INT, 0), Field("b", *CHAR)], packed=True)
    assert (lay.member("b").offset, lay.size) == (4, 5)
    # packed(2): packed plus align
    lay = layout_struct([Field("c", *CHAR), Field("i", *INT)], packed=True, align=2)
    assert (lay.size, lay.align) == (6, 2)


def test_explicit_offsets_for_languages_with_their_own_layout() -> None:
    """Rust repr(Rust) may reorder: (u8, u32, u16) at offsets 6, 0, 4."""
    lay = layout_struct(
        [Field("0", *CHAR, offset=6), Field("1", *INT, offset=0), Field("2", *SHORT, offset=4)]
    )
    assert offsets(lay) == [6, 0, 4]
    assert (lay.size, lay.align) == (8, 4)
    # members after an explicit one follow the furthest end placed so far
    lay = layout_struct([Field("a", *INT, offset=8), Field("b", *CHAR)])
    assert offsets(lay) == [8, 12]


def test_explicit_bit_offsets() -> None:
    lay = layout_struct([Field("x", *INT, bit_size=5, bit_offset=9)])
    x = lay.member("x")
    assert (x.offset, x.bit_position, x.dwarf2_bit_offset) == (0, 9, 18)
    lay = layout_struct([Field("y", *SHORT, bit_size=4, bit_offset=36)])
    assert (lay.member("y").offset, lay.member("y").dwarf2_bit_offset) == (4, 8)
    lay = layout_struct([Field("z", *INT, bit_size=8, offset=4, bit_offset=40)])
    assert (lay.member("z").offset, lay.member("z").dwarf2_bit_offset) == (4, 16)
    lay = layout_struct([Field("w", *INT, bit_size=3, offset=4)])
    assert lay.member("w").bit_position == 32


def test_placed_properties_for_plain_members() -> None:
    p = Placed("c", 0, 1, None, None)
    assert p.dwarf2_bit_offset is None and p.data_bit_offset is None
    assert not p.is_bit_field and not p.full_width
    with pytest.raises(KeyError):
        layout_struct([Field("c", *CHAR)]).member("nope")


# ---------------------------------------------------------------------------
# errors: each names the member
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ([bits("wide", INT, 33)], "bit field 'wide' is 33 bits wide.*storage unit"),
        ([Field("neg", -1, 1)], "member 'neg' has a negative size"),
        ([bits("negw", INT, -1)], "bit field 'negw' has a negative width"),
        ([Field("odd", 4, 3)], "member 'odd' has alignment 3, which is not a power of two"),
        ([Field("zero", 4, 0)], "member 'zero' has alignment 0"),
        ([Field("al", *INT, align_override=12)], "member 'al' has alignas\\(12\\)"),
        ([bits("z", INT, 0)], "bit field 'z' has width 0; a zero-length bit field must be unnamed"),
        ([Field("ab", *INT, bit_size=3, align_override=8)], "bit field 'ab' has alignas"),
        ([Field("nb", 0, 1, bit_size=3)], "bit field 'nb' has a type of size 0"),
        ([Field("bo", *INT, bit_offset=8)], "member 'bo' has a bit_offset but is not a bit field"),
        ([Field("no", *INT, offset=-4)], "member 'no' has a negative offset"),
        ([Field("nbo", *INT, bit_size=3, bit_offset=-1)], "bit field 'nbo' has a negative bit offset"),
        (
            [Field("out", *INT, bit_size=8, offset=0, bit_offset=28)],
            "bit field 'out' at bit 28 \\(8 bits\\) is not inside its 4-byte storage unit at offset 0",
        ),
        ([Field("c", *CHAR), bits(None, CHAR, 9)], "unnamed bit field #2 is 9 bits wide"),
    ],
)
def test_member_errors_name_the_member(fields: list[Field], match: str) -> None:
    with pytest.raises(LayoutError, match=match):
        layout_struct(fields)


def test_unnamed_zero_size_bit_field_type() -> None:
    with pytest.raises(LayoutError, match="unnamed bit field #1 has a type of size 0"):
        layout_struct([Field(None, 0, 1, bit_size=0)])


def test_union_member_errors() -> None:
    with pytest.raises(LayoutError, match="bit field 's' is 17 bits wide"):
        layout_union([Field("c", *CHAR), bits("s", SHORT, 17)], name="U")
    with pytest.raises(LayoutError, match=r"^union 'U': "):
        layout_union([Field("c", *CHAR), bits("s", SHORT, 17)], name="U")


def test_declared_size_too_small() -> None:
    with pytest.raises(
        LayoutError, match=r"member 'x' at offset 8 \(4 bytes\) does not fit a declared size of 10"
    ):
        layout_struct([Field("a", *DOUBLE), Field("x", *INT)], size=10)
    with pytest.raises(
        LayoutError, match=r"bit field 'b' at bit 9 \(8 bits\) does not fit a declared size of 2"
    ):
        layout_struct([bits("a", INT, 9), bits("b", INT, 8)], size=2)
    with pytest.raises(
        LayoutError, match="member 'd' at offset 0 \\(8 bytes\\) does not fit a declared size of 4"
    ):
        layout_union([Field("c", *CHAR), Field("d", *DOUBLE)], size=4)


def test_overlapping_explicit_offsets() -> None:
    with pytest.raises(
        LayoutError,
        match=r"member 'b' at offset 2 \(4 bytes\) overlaps member 'a' at offset 0 \(4 bytes\)",
    ):
        layout_struct([Field("a", *INT, offset=0), Field("b", *INT, offset=2)])
    with pytest.raises(LayoutError, match=r"bit field 'y' at bit 4 \(4 bits\) overlaps bit field 'x'"):
        layout_struct(
            [Field("x", *INT, bit_size=6, bit_offset=0), Field("y", *INT, bit_size=4, bit_offset=4)]
        )
    with pytest.raises(LayoutError, match=r"member 'c' at offset 4 \(1 bytes\) overlaps member 'a'"):
        layout_struct([Field("a", *DOUBLE, offset=0), Field("c", *CHAR, offset=4)], name="S")
    # a rule-placed member after explicit ones never lands on them; unions may overlap
    layout_struct([Field("a", *INT, offset=4), Field("b", *INT, offset=0), Field("c", *CHAR)])
    layout_union([Field("a", *INT, offset=0), Field("b", *INT, offset=2)])
    # members of size 0 overlap nothing
    layout_struct([Field("a", *INT, offset=0), Field("e", 0, 4, offset=0)])


def test_aggregate_errors() -> None:
    with pytest.raises(LayoutError, match=r"^struct 'S': declared alignment 3 is not a power of two"):
        layout_struct([], align=3, name="S")
    with pytest.raises(LayoutError, match="declared size -1 is negative"):
        layout_union([], size=-1)
