"""The section writer's kernel against its reference, ``ptxdwarf.ptx.writer.format_section``:
generated section images in every style, and every fixture's debug sections as read and as
encoded again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twins import native_of, same

from ptxdwarf.dwarf.encode import encode_sections
from ptxdwarf.dwarf.image import Reloc, SectionImage, Symbol
from ptxdwarf.errors import EncodeError, PtxDwarfError
from ptxdwarf.ptx import writer
from ptxdwarf.ptx.debug import decode_module
from ptxdwarf.ptx.reader import parse_ptx
from ptxdwarf.ptx.writer import Style, format_section

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
STYLES = [style.value for style in Style]
NAMES = st.sampled_from([".debug_info", ".debug_loc", ".debug_str", ".nv_debug_info_ptx", ".debug_abbrev"])


def symbols() -> st.SearchStrategy[Symbol]:
    names = st.sampled_from(["func_begin0", "$L__tmp3", ".debug_abbrev", "_Z4testPi_param_0", "x"])
    return st.builds(Symbol, names, st.integers(-(2**40), 2**40) | st.just(0))


@st.composite
def images(draw: st.DrawFn) -> SectionImage:
    """A section image the kernel takes: relocations of 4 or 8 bytes in order and apart, at
    aligned or unaligned offsets; labels in the bytes and outside every symbolic value; fields
    and record breaks anywhere (or none)."""
    data = draw(
        st.binary(max_size=400)
        | st.lists(st.sampled_from([0, 1, 9, 10, 99, 100, 255]), max_size=400).map(bytes)
        | st.binary(min_size=8, max_size=64).map(lambda b: b * 20)
    )
    n = len(data)
    relocs: list[Reloc] = []
    pos = 0
    for gap, size, symbol in draw(
        st.lists(st.tuples(st.integers(0, 40), st.sampled_from([4, 8]), symbols()))
    ):
        at = pos + gap
        if draw(st.booleans()):
            at += -at % size
        if at + size > n:
            break
        relocs.append(Reloc(at, size, symbol))
        pos = at + size
    inside = {r.offset + k for r in relocs for k in range(1, r.size)}
    offsets = [p for p in range(n + 1) if p not in inside]
    labels = {
        f"$L__lab{i}": draw(st.sampled_from(offsets)) for i in range(draw(st.integers(0, 6))) if offsets
    }
    fields = draw(st.dictionaries(st.integers(-2, n + 2), st.sampled_from([1, 2, 4, 8]), max_size=60))
    breaks = draw(st.lists(st.integers(-2, n + 2), max_size=30))
    if draw(st.booleans()):
        breaks.sort()
    name = draw(NAMES)
    return SectionImage(name, data, relocs, labels, fields, breaks)


SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(images(), st.sampled_from(STYLES))
def test_generated_images_are_written_alike(image: SectionImage, style: str) -> None:
    same(format_section, image, style)


@SETTINGS
@given(images(), st.sampled_from(STYLES))
def test_images_without_hints_are_written_alike(image: SectionImage, style: str) -> None:
    image.fields, image.breaks = {}, []
    same(format_section, image, style)


def test_wide_values_and_large_numbers() -> None:
    data = (2**40 + 5).to_bytes(8, "little") + (7).to_bytes(8, "little") + bytes([255] * 12) + b"\x01\x02\x03"
    fields = {0: 8, 8: 8, 16: 4, 20: 8, 28: 2, 30: 2}
    for style in STYLES:
        same(format_section, SectionImage(".debug_info", data, fields=fields), style)
        same(format_section, SectionImage(".debug_info", data * 50, fields=fields, breaks=[3]), style)


def test_a_label_inside_a_symbolic_value_is_the_references_error() -> None:
    image = SectionImage(".debug_info", bytes(12), [Reloc(2, 8, Symbol("f"))], {"$L__in": 5})
    for style in STYLES:
        assert same(format_section, image, style) is None


@pytest.mark.parametrize(
    "image",
    [
        SectionImage(".debug_info", bytes(16), [Reloc(8, 4, Symbol("b")), Reloc(0, 4, Symbol("a"))]),
        SectionImage(".debug_info", bytes(16), [Reloc(0, 8, Symbol("a")), Reloc(4, 4, Symbol("b"))]),
        SectionImage(".debug_info", bytes(4), [Reloc(2, 4, Symbol("a"))]),
        SectionImage(".debug_info", bytes(4), labels={"$L__past": 9}),
        SectionImage(".debug_info", bytes(8), fields={0: 3}),
        SectionImage(".debug_info", bytes(8), labels={"$L__é": 1}),
        SectionImage(".debug_\u00e9", bytes(8)),
        SectionImage(".debug_info", bytearray(8)),  # type: ignore[arg-type]
    ],
)
def test_unusual_images_are_left_to_the_reference(image: SectionImage) -> None:
    native = native_of(format_section)
    for style in STYLES:
        assert native(image, style) is None


def test_an_unknown_style_is_left_to_the_reference() -> None:
    native = native_of(format_section)
    image = SectionImage(".debug_info", b"\x01\x02")
    assert native(image, "wide") is None
    assert native(image, None) is None
    assert native(image) == format_section.reference(image)
    assert native(image, style=Style.NVCC) == format_section.reference(image, Style.NVCC)


def test_a_symbol_whose_text_raises_is_left_to_the_reference() -> None:
    class Bad:
        def __str__(self) -> str:
            raise ValueError("no text")

    native = native_of(format_section)
    image = SectionImage(".debug_info", bytes(8), [Reloc(0, 4, Bad())])  # type: ignore[arg-type]
    assert native(image, "nvcc") is None


def test_a_symbol_text_that_empties_the_image_changes_nothing_written() -> None:
    class Emptying:
        def __init__(self, image: SectionImage) -> None:
            self.image = image

        def __str__(self) -> str:
            self.image.relocs.clear()
            self.image.labels.clear()
            return "gone"

    image = SectionImage(".debug_info", bytes(16), labels={"$L__a": 4})
    image.relocs += [Reloc(0, 4, Emptying(image)), Reloc(8, 8, Symbol("kept"))]  # type: ignore[arg-type]
    text = native_of(format_section)(image, "readable")
    assert text == ".section .debug_info\n{\n.b32 gone\n$L__a:\n.b8 0,0,0,0\n.b64 kept\n}\n"


def test_the_layout_numbers_are_the_references() -> None:
    kernel: Any = native_of(format_section).__self__
    assert (kernel.LINE, kernel.MAX_VALUES, kernel.SWITCH) == (
        writer._LINE,
        writer._MAX_VALUES,
        writer._SWITCH,
    )
    assert kernel.B64_LIMIT == writer.B64_LIMIT


def _debug_images(path: Path) -> list[SectionImage]:
    """The fixture's debug sections as read, and as decoded and encoded again."""
    try:
        module = parse_ptx(path.read_text(encoding="utf-8", errors="replace"), str(path))
        read = list(module.images(debug_only=True).values())
        if not read:
            return []
        return read + list(encode_sections(decode_module(module)).values())
    except PtxDwarfError:
        return []


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.ptx")), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixtures_debug_sections_are_written_alike(path: Path) -> None:
    native_of(format_section)
    for image in _debug_images(path):
        for style in STYLES:
            same(format_section, image, style)


@pytest.mark.parametrize(
    ("relocs", "labels", "message"),
    [
        (
            [Reloc(8, 4, Symbol("x"))],
            {},
            r"symbolic value at \.debug_info\+0x8 lies outside the section's 6 bytes",
        ),
        ([Reloc(4, 4, Symbol("x"))], {}, r"\+0x4 lies outside the section's 6 bytes"),
        ([Reloc(-1, 4, Symbol("x"))], {}, r"\.debug_info-0x1 lies outside"),
        ([Reloc(0, 4, Symbol("x")), Reloc(2, 4, Symbol("y"))], {}, r"\+0x2 overlaps the one before it"),
        ([Reloc(2, 4, Symbol("x")), Reloc(0, 4, Symbol("y"))], {}, r"\+0x2 overlaps the one before it"),
        ([Reloc(0, 3, Symbol("x"))], {}, r"a 3-byte symbolic value at \.debug_info\+0x0"),
        ([], {"L": 7}, r"label L at \.debug_info\+0x7 lies outside the section's 6 bytes"),
        (
            [Reloc(0, 4, Symbol("x"))],
            {"L": 2},
            r"label L at \.debug_info\+0x2 falls inside the symbolic value at 0x0",
        ),
    ],
)
@pytest.mark.parametrize("style", list(Style))
def test_an_image_that_cannot_be_written(
    relocs: list[Reloc], labels: dict[str, int], message: str, style: Style
) -> None:
    """Each once gave a block that silently dropped, moved or cut a value (or label)."""
    image = SectionImage(".debug_info", b"\x01\x02\x03\x04\x05\x06", relocs=relocs, labels=labels)
    for write in (format_section, format_section.reference):
        with pytest.raises(EncodeError, match=message):
            write(image, style)
    with pytest.raises(EncodeError):
        writer.format_dwarf_lines(image)


def test_an_image_with_relocations_out_of_order_is_written_in_offset_order() -> None:
    image = SectionImage(
        ".debug_info",
        b"\x01\x02\x03\x04\x05\x06",
        relocs=[Reloc(2, 4, Symbol("x")), Reloc(0, 2, Symbol("y"))],
        labels={"L": 6},
    )
    expected = ".section .debug_info\n{\n.b16 y\n.b32 x\nL:\n}\n"
    assert (
        format_section(image, Style.READABLE) == format_section.reference(image, Style.READABLE) == expected
    )
