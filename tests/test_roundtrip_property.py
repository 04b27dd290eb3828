"""Random DIE trees over every form survive encode -> PTX text -> parse -> decode, in every style."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxdwarf
import ptxdwarf.dwarf
import ptxdwarf.ptx
import ptxdwarf.ptx.writer
from ptxdwarf import DIE, Attribute, DebugInfo, Unit
from ptxdwarf.dwarf import FORM, Op, Reloc, Symbol
from ptxdwarf.dwarf.model import REFERENCE_FORMS

SYMBOLS = st.sampled_from(["func_begin0", "$L__func_end3", "_Z4testPi_param_0", "__local_depot0", "g_x"])
ATTRS = st.sampled_from([0x03, 0x3A, 0x3B, 0x49, 0x02, 0x33, 0x11, 0x12, 0x2007, 0x3E01, 0x1F, 0x7F])
TAGS = st.sampled_from([0x11, 0x2E, 0x05, 0x34, 0x24, 0x13, 0x0B, 0x4109, 0x7F])
SIMPLE_FORMS = [
    FORM.addr,
    FORM.block1,
    FORM.block2,
    FORM.block4,
    FORM.block,
    FORM.exprloc,
    FORM.data1,
    FORM.data2,
    FORM.data4,
    FORM.data8,
    FORM.sdata,
    FORM.udata,
    FORM.string,
    FORM.strp,
    FORM.flag,
    FORM.flag_present,
    FORM.sec_offset,
    FORM.ref_sig8,
]
REF_FORMS = [FORM.ref1, FORM.ref2, FORM.ref4, FORM.ref8, FORM.ref_udata, FORM.ref_addr]


@st.composite
def values(draw: st.DrawFn, form: int, asize: int) -> Any:
    if form == FORM.addr:
        if draw(st.booleans()):
            return Symbol(draw(SYMBOLS), draw(st.integers(0, 4096)))
        return draw(st.integers(0, 2 ** (8 * asize) - 1))
    if form in (FORM.data4, FORM.sec_offset):
        if draw(st.booleans()):
            return Symbol(
                draw(st.sampled_from([".debug_line", ".debug_loc", "g_x"])), draw(st.integers(0, 64))
            )
        return draw(st.integers(0, 2**32 - 1))
    if form == FORM.data8:
        if draw(st.booleans()):
            return Symbol(draw(SYMBOLS))
        return draw(st.integers(0, 2**64 - 1))
    if form in (FORM.data1, FORM.flag):
        return draw(st.integers(0, 255))
    if form == FORM.data2:
        return draw(st.integers(0, 2**16 - 1))
    if form == FORM.ref_sig8:
        return draw(st.integers(0, 2**64 - 1))
    if form == FORM.sdata:
        return draw(st.integers(-(2**63), 2**63 - 1))
    if form == FORM.udata:
        return draw(st.integers(0, 2**64))
    if form in (FORM.string, FORM.strp):
        return draw(
            st.text(st.characters(blacklist_characters="\0", blacklist_categories=["Cs"]), max_size=12)
        )
    if form == FORM.flag_present:
        return True
    if form == FORM.block1 and draw(st.booleans()):
        # an expression with a symbol inside
        return [
            Op.make("addr", Symbol(draw(SYMBOLS), draw(st.integers(0, 16)))),
            Op.make("plus_uconst", draw(st.integers(0, 300))),
        ]
    size = 255 if form == FORM.block1 else 300
    return draw(st.binary(max_size=size))


@st.composite
def trees(draw: st.DrawFn) -> DebugInfo:
    version = draw(st.sampled_from([2, 3, 4]))
    asize = draw(st.sampled_from([4, 8]))
    count = draw(st.integers(1, 12))
    dies: list[DIE] = []
    for i in range(count):
        die = DIE(draw(TAGS), has_children=draw(st.booleans()) if i else True)
        for _ in range(draw(st.integers(0, 5))):
            form = draw(st.sampled_from([*SIMPLE_FORMS, FORM.indirect]))
            if form == FORM.indirect:
                inner_form = draw(st.sampled_from([FORM.data1, FORM.udata, FORM.string, FORM.block1]))
                inner = Attribute(draw(ATTRS), inner_form, draw(values(inner_form, asize)))
                die.attributes.append(Attribute(inner.name, FORM.indirect, inner))
            else:
                die.attributes.append(Attribute(draw(ATTRS), form, draw(values(form, asize))))
        if dies:
            parents = [d for d in dies if d.has_children]
            draw(st.sampled_from(parents)).add_child(die)
        dies.append(die)
    # References: the root (ref1 always fits), any DIE (ref2/ref4/ref8/ref_addr),
    # an ancestor or earlier DIE for ref_udata (it cannot be patched later).
    order = list(dies[0].iter_subtree())
    for index, die in enumerate(order):
        for _ in range(draw(st.integers(0, 2))):
            form = draw(st.sampled_from(REF_FORMS))
            if form == FORM.ref1:
                target = order[0]
            elif form == FORM.ref_udata:
                target = draw(st.sampled_from(order[: index + 1]))
            else:
                target = draw(st.sampled_from(order))
            die.attributes.append(Attribute(draw(ATTRS), form, target))
    unit = Unit(version=version, address_size=asize, die=dies[0])
    return DebugInfo(units=[unit])


def canonical(info: DebugInfo) -> list[Any]:
    """A comparable picture of a tree: built (symbols, DIE values) and decoded alike."""
    order = list(info.units[0].die.iter_subtree())  # type: ignore[union-attr]  # a None here fails the test, as it should
    index_of_die = {id(d): i for i, d in enumerate(order)}
    index_of_offset = {d.offset: i for i, d in enumerate(order)}
    asize = info.units[0].address_size

    def value(attr: Attribute) -> Any:
        v = attr.value
        if isinstance(v, Attribute):
            return ("indirect", v.form, value(v))
        if isinstance(v, DIE):
            return ("ref", index_of_die[id(v)])
        if attr.form in REFERENCE_FORMS or attr.form == FORM.ref_addr:
            return ("ref", index_of_offset[attr.target])
        if isinstance(v, Symbol):
            return ("sym", v.name, v.addend)
        if isinstance(v, str):
            return v
        if isinstance(v, list):
            v = ptxdwarf.dwarf.encode_expression(v, asize)
        if isinstance(v, (bytes, bytearray)):
            relocs = getattr(v, "relocs", ())
            return (
                "block",
                bytes(v),
                tuple((r.offset, r.size, r.symbol.name, r.symbol.addend) for r in relocs),
            )
        if attr.symbol is not None:
            return ("sym", attr.symbol.name, attr.symbol.addend)
        return v

    return [
        (
            d.tag,
            d.has_children or bool(d.children),
            len(d.children),
            [(a.name, a.form, value(a)) for a in d.attributes],
        )
        for d in order
    ]


def header(asize: int) -> str:
    return f".version 7.0\n.target sm_75, debug\n.address_size {asize * 8}\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.sampled_from(["nvcc", "readable", "compact"]), st.booleans())
def test_random_trees_round_trip(info: DebugInfo, style: str, string_labels: bool) -> None:
    expected = canonical(info)
    options = ptxdwarf.dwarf.EncodeOptions(string_labels=string_labels)
    images = ptxdwarf.dwarf.encode_sections(info, options)
    text = header(info.units[0].address_size) + ptxdwarf.ptx.writer.format_sections(images.values(), style)
    assert text.isascii()
    back = ptxdwarf.read(text=text)
    assert canonical(back) == expected
    # Parsing the text gives back the very images that were written.
    parsed = ptxdwarf.ptx.parse_ptx(text).images()
    for name, image in images.items():
        assert parsed[name].data == image.data
        assert [(r.offset, r.size, r.symbol) for r in parsed[name].relocs] == [
            (r.offset, r.size, r.symbol) for r in image.relocs
        ]
    # And a decoded tree encodes to the same bytes again.
    again = ptxdwarf.dwarf.encode_sections(back, options)
    for name, image in images.items():
        assert again[name].data == image.data
        assert again[name].relocs == image.relocs


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=200),
    st.lists(
        st.tuples(st.integers(0, 190), st.sampled_from([4, 8]), SYMBOLS, st.integers(0, 2**20)), max_size=4
    ),
    st.dictionaries(
        st.from_regex(r"\$L__[a-z]{1,6}[0-9]{0,3}", fullmatch=True), st.integers(0, 200), max_size=3
    ),
    st.sampled_from(["nvcc", "readable", "compact"]),
)
@pytest.mark.slow
def test_any_image_round_trips_through_text(
    data: bytes, relocs: list[Any], labels: dict[str, int], style: str
) -> None:
    """Any bytes with symbols and labels give the same image after writing and reading."""
    placed: list[Reloc] = []
    taken: set[int] = set()
    raw = bytearray(data)
    for offset, size, name, addend in sorted(relocs):
        span = set(range(offset, offset + size))
        if offset + size > len(raw) or span & taken:
            continue
        taken |= span
        raw[offset : offset + size] = bytes(size)
        placed.append(Reloc(offset, size, Symbol(name, addend)))
    inside = {o for r in placed for o in range(r.offset + 1, r.offset + r.size)}
    labels = {k: min(v, len(raw)) for k, v in labels.items() if min(v, len(raw)) not in inside}
    image = ptxdwarf.dwarf.SectionImage(".debug_info", bytes(raw), placed, labels)
    text = header(8) + ptxdwarf.ptx.writer.format_section(image, style)
    back = ptxdwarf.ptx.parse_ptx(text).images()[".debug_info"]
    assert back.data == image.data
    assert back.relocs == image.relocs
    assert back.labels == image.labels


def test_label_inside_a_symbolic_value_is_refused() -> None:
    image = ptxdwarf.dwarf.SectionImage(
        ".debug_info", bytes(4), [Reloc(0, 4, Symbol("func_begin0"))], {"$L__a": 1}
    )
    import pytest

    with pytest.raises(ptxdwarf.EncodeError, match=r"\$L__a at .debug_info\+0x1 falls inside"):
        ptxdwarf.ptx.writer.format_section(image, "nvcc")
