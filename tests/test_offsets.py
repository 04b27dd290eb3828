"""Where each decoded DIE, attribute and abbreviation declaration is, checked against
pyelftools reading the same section bytes."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from conftest import GOOD_FIXTURES, fixture_id
from elftools.dwarf.dwarfinfo import DebugSectionDescriptor, DwarfConfig, DWARFInfo

import ptxdwarf
import ptxdwarf.dwarf
from ptxdwarf.check import die_and_attribute_at
from ptxdwarf.dwarf import AT, FORM, TAG
from ptxdwarf.dwarf.image import SectionImage
from ptxdwarf.dwarf.model import DebugInfo


def _section(info: DebugInfo, name: str) -> DebugSectionDescriptor | None:
    image = (info.sections or {}).get(name)
    if image is None:
        return None
    data = bytearray(image.data)
    if name == ".debug_info":
        # pyelftools reads the stored abbreviation offsets; PTX text gives labels (zeros there)
        for unit in info.units:
            assert unit.abbrevs is not None
            struct.pack_into("<I", data, unit.offset + 6, unit.abbrevs.offset)
    return DebugSectionDescriptor(io.BytesIO(bytes(data)), name, None, len(data), 0)


def _elftools(info: DebugInfo) -> DWARFInfo:
    asize = info.units[0].address_size
    names = (
        "debug_info",
        "debug_aranges",
        "debug_abbrev",
        "debug_frame",
        "eh_frame",
        "debug_str",
        "debug_loc",
        "debug_ranges",
        "debug_line",
        "debug_pubtypes",
        "debug_pubnames",
        "debug_addr",
        "debug_str_offsets",
        "debug_line_str",
        "debug_loclists",
        "debug_rnglists",
        "debug_sup",
        "gnu_debugaltlink",
        "debug_types",
    )
    sections = {
        n: (_section(info, "." + n) if n in ("debug_info", "debug_abbrev", "debug_str") else None)
        for n in names
    }
    config = DwarfConfig(little_endian=True, machine_arch="", default_address_size=asize)
    return DWARFInfo(config=config, **{f"{n}_sec": s for n, s in sections.items()})


# Fixtures small enough to walk attribute by attribute, from each producer (those with DIEs:
# line-tables-only modules have no .debug_info to compare).
_SAMPLE = [p for p in GOOD_FIXTURES if p.stat().st_size < 400_000 and ".debug_info" in p.read_text()]


@pytest.mark.parametrize("path", _SAMPLE, ids=fixture_id)
def test_offsets_equal_pyelftools(path: Path) -> None:
    info = ptxdwarf.read(text=path.read_text())
    assert info.units
    ours = list(info.iter_dies())
    theirs = [d for cu in _elftools(info).iter_CUs() for d in cu.iter_DIEs() if not d.is_null()]
    assert [d.offset for d in ours] == [d.offset for d in theirs]
    for die, other in zip(ours, theirs, strict=False):
        assert die.size == other.size, die
        offsets = [a.offset for a in other.attributes.values()]
        assert [a.value_offset for a in die.attributes] == offsets, die
        for attr, (start, size) in zip(die.attributes, die.value_spans(), strict=False):
            assert start == attr.offset
            assert size >= 0
            if size:
                assert info.attribute_at(start) == (die, attr)
                assert info.attribute_at(start + size - 1) == (die, attr)
                assert die_and_attribute_at(info, start + size - 1) == (die, attr.name)
        assert info.die_containing(die.offset) is die
        assert info.attribute_at(die.offset) is None
        assert die_and_attribute_at(info, die.offset) == (die, None)


def test_abbreviation_offsets() -> None:
    path = next(p for p in GOOD_FIXTURES if p.parent.name == "nvcc")
    info = ptxdwarf.read(text=path.read_text())
    dwarf = _elftools(info)
    assert dwarf.debug_abbrev_sec is not None
    for table in info.abbrev_tables:
        stream = dwarf.debug_abbrev_sec.stream
        for decl in table.decls:
            stream.seek(decl.offset)
            assert stream.read(1)[0] == decl.code  # codes below 128 are one byte
        assert table.decls[0].offset == table.offset


def test_indirect_attribute_offsets() -> None:
    """The attribute starts at its form code; its value after it."""
    die = ptxdwarf.DIE("DW_TAG_compile_unit")
    die.attributes.append(ptxdwarf.Attribute(0x03, FORM.indirect, ptxdwarf.Attribute(0x03, FORM.string, "x")))
    die.add("DW_AT_language", 4, "data1")
    built = DebugInfo(units=[ptxdwarf.Unit(die=die)])
    read = ptxdwarf.dwarf.decode_sections(ptxdwarf.dwarf.encode_sections(built))
    root = read.units[0].die
    assert root is not None
    name, language = root.attributes
    assert name.offset == root.offset + 1
    assert name.value_offset == name.offset + 1
    assert language.offset == name.value_offset + 2
    assert root.value_spans() == [(name.offset + 1, 2), (language.offset, 1)]
    assert read.attribute_at(name.offset) == (root, name)
    assert read.attribute_at(root.offset + root.size) is None


def test_built_dies_have_no_offsets() -> None:
    die = ptxdwarf.DIE("DW_TAG_compile_unit")
    attr = die.add("DW_AT_language", 4, "data1")
    assert (attr.offset, attr.value_offset, die.size, die.value_spans()) == (-1, -1, -1, [])


def test_nested_indirect_forms() -> None:
    """An indirect form naming indirect again: one wrapper per form code, rewritten exactly."""
    abbrev = bytes([1, TAG.compile_unit, 0, AT.const_value, FORM.indirect, 0, 0, 0])
    body = bytes([1, FORM.indirect, FORM.data1, 5])
    data = struct.pack("<IHIB", 7 + len(body), 2, 0, 8) + body
    images = {
        ".debug_abbrev": SectionImage(".debug_abbrev", abbrev),
        ".debug_info": SectionImage(".debug_info", data),
    }
    info = ptxdwarf.dwarf.decode_sections(images)
    root = info.units[0].die
    assert root is not None
    attr = root.attributes[0]
    assert attr.form == FORM.indirect and attr.offset == 12
    assert attr.value.form == FORM.indirect and attr.value.offset == 13
    assert attr.value.value.form == FORM.data1 and attr.value.value.value == 5
    assert attr.value_offset == 14 and root.value_spans() == [(14, 1)]
    assert ptxdwarf.dwarf.encode_sections(info)[".debug_info"].data == data
