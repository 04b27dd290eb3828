"""``rewrite``: decode every debug section, encode it again, and ptxas sees no difference.

For every fixture and style, the cubin that ``ptxas -g`` makes of the rewritten
PTX has the same debug sections and relocations as the original's cubin, and the
text outside the debug sections is unchanged byte for byte.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from conftest import GOOD_FIXTURES, MOVED_LABELS, ROOT, CubinPath, fixture_id
from elftools.elf.elffile import ELFFile

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.dump
import ptxdwarf.dwarf
import ptxdwarf.ptx
import ptxdwarf.ptx.writer
from ptxdwarf.cli import main
from ptxdwarf.cuda.ptxas import Ptxas

STYLES = ("nvcc", "readable", "compact")
COMPARED = (
    ".debug_info",
    ".debug_abbrev",
    ".debug_loc",
    ".debug_pubnames",
    ".debug_str",
    ".debug_aranges",
    ".debug_macinfo",
)


def debug_contents(cubin: Path) -> dict[str, bytes]:
    """Bytes of the compared debug sections and of the relocation sections that apply to them."""
    out: dict[str, bytes] = {}
    with open(cubin, "rb") as f:
        elf = ELFFile(io.BytesIO(f.read()))
        for section in elf.iter_sections():
            name = section.name
            for prefix in ("", ".rel", ".rela"):
                if prefix and not name.startswith(prefix + "."):
                    continue
                if name[len(prefix) :] in COMPARED:
                    out[name] = section.data()
    return out


def outside_debug_sections(text: str) -> str:
    module = ptxdwarf.ptx.parse_ptx(text)
    pieces = []
    pos = 0
    for block in module.sections:
        pieces.append(text[pos : block.start].rstrip())
        pos = block.end
    pieces.append(text[pos:].strip())
    return "\n".join(p for p in pieces if p)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("path", GOOD_FIXTURES, ids=fixture_id)
@pytest.mark.slow
def test_rewrite_keeps_the_cubin_debug_sections(
    path: Path, style: str, tmp_path: Path, cubin_path: CubinPath
) -> None:
    original = path.read_text()
    out = tmp_path / f"rewritten.{style}.ptx"
    assert main(["rewrite", str(path), "-o", str(out), "--style", style]) == 0
    rewritten = out.read_text()
    assert rewritten.isascii()
    assert outside_debug_sections(rewritten) == outside_debug_sections(original)
    before = debug_contents(cubin_path(original, path.name))
    after = debug_contents(cubin_path(rewritten, out.name))
    assert before.keys() == after.keys()
    for name in before:
        assert before[name] == after[name], f"{name} differs after rewrite --style {style}"


def test_rewrite_is_not_a_copy() -> None:
    """Rewriting in another style changes the text: the sections really were re-encoded."""
    path = next(p for p in GOOD_FIXTURES if p.name.startswith("call_example") and p.parent.name == "nvcc")
    text = path.read_text()
    compact = ptxdwarf.rewrite(text, style="compact")
    readable = ptxdwarf.rewrite(text, style="readable")
    assert compact != text and readable != text and compact != readable
    assert len(compact) < len(readable) < len(text)
    # and it reads back to the same model
    a = ptxdwarf.read(text=text)
    b = ptxdwarf.read(text=compact)
    assert [(d.offset, d.tag, [(x.name, x.form, x.value) for x in d.attributes]) for d in a.iter_dies()] == [
        (d.offset, d.tag, [(x.name, x.form, x.value) for x in d.attributes]) for d in b.iter_dies()
    ]


def test_rewrite_of_an_edited_model_moves_references() -> None:
    """A decoded tree that is edited re-encodes with fresh abbreviations and patched references."""
    path = next(p for p in GOOD_FIXTURES if p.name.startswith("call_example") and p.parent.name == "nvcc")
    info = ptxdwarf.read(text=path.read_text())
    cu = info.units[0].die
    assert cu is not None
    first = cu.children[0]
    first.add("DW_AT_artificial", True, form="flag")
    images = ptxdwarf.dwarf.encode_sections(info)
    text = ".version 7.0\n.target sm_75, debug\n.address_size 64\n" + ptxdwarf.ptx.writer.format_sections(
        images.values()
    )
    back = ptxdwarf.read(text=text)
    before = {d.name: d for d in info.iter_dies() if d.name}
    for die in back.iter_dies():
        ref = die.attr("DW_AT_type")
        if ref is not None and die.name:
            target = back.die_at(ref.target)
            original = before[die.name].attr("DW_AT_type")
            assert target is not None and original is not None
            assert target.tag == info.die_at(original.target).tag  # type: ignore[union-attr]  # a None here fails the test, as it should
    assert back.units[0].die.children[0].get("DW_AT_artificial") == 1  # type: ignore[union-attr]  # a None here fails the test, as it should


WITH_INFO = [
    p
    for p in GOOD_FIXTURES
    if ".section .debug_info" in p.read_text() or ".section\t.debug_info" in p.read_text()
]


@pytest.mark.parametrize("path", WITH_INFO[::3], ids=fixture_id)
def test_derived_abbreviations_replace_the_read_ones(path: Path, ptxas_tool: Ptxas) -> None:
    """``keep_abbrevs=False``: one table, derived from the DIEs, and nothing of the old ones left."""
    info = ptxdwarf.read(text=path.read_text())
    assert info.units
    module = ptxdwarf.ptx.parse_ptx(path.read_text())
    images = ptxdwarf.dwarf.encode_sections(info, ptxdwarf.dwarf.EncodeOptions(keep_abbrevs=False))
    text = ptxdwarf.ptx.debug.replace_debug_sections(module, images)
    back = ptxdwarf.read(text=text)
    assert [t.offset for t in back.abbrev_tables] == [0]
    assert len(back.abbrev_tables[0].decls) == len(
        {(d.tag, bool(d.children), tuple((a.name, a.form) for a in d.attributes)) for d in info.iter_dies()}
    )
    assert [u.abbrev_offset for u in back.units] == [ptxdwarf.dwarf.Symbol(".debug_abbrev", 0)] * len(
        info.units
    )
    report = ptxdwarf.check.check(text, filename=path.name, ptxas=ptxas_tool)
    moved = MOVED_LABELS.get(fixture_id(path), set())
    assert {d.ptx for d in report.differences if d.what == "address"} == moved
    assert report.consistent or moved, "\n".join(map(str, report.differences))
    assert len(report.differences) == len(moved), "\n".join(map(str, report.differences))


@pytest.mark.parametrize("with_loc", [False, True], ids=["ranges-only", "ranges-and-loc"])
def test_rewrite_keeps_debug_ranges(with_loc: bool) -> None:
    """``.debug_ranges`` (hand-written: no producer here writes one) is re-encoded pair for pair,
    symbols included, whether or not ``.debug_loc`` is there too."""
    text = (ROOT / "fixtures" / "spec" / "example.ptx").read_text()
    extra = "\n.section .debug_ranges\n{\n.b64 func_begin0, func_end0, func_begin1, func_end1, 0, 0\n.b64 8, 24, 0, 0\n}\n"
    if with_loc:
        extra += "\n.section .debug_loc\n{\n.b64 func_begin0, func_end0\n.b16 1\n.b8 0x50\n.b64 0, 0\n}\n"
    original = ptxdwarf.read(text=text + extra)
    assert original.ranges is not None
    rewritten = ptxdwarf.read(text=ptxdwarf.rewrite(text + extra))
    assert rewritten.ranges is not None
    got = [(r.offset, r.entries) for r in rewritten.ranges]
    assert got == [(r.offset, r.entries) for r in original.ranges]
    assert [len(r.entries) for r in rewritten.ranges] == [2, 1]
    assert str(rewritten.ranges[0].entries[1][0]) == "func_begin1"


def _same_debug_bytes(original: str, compile_ptx: Any, name: str) -> None:
    """Every style's rewrite of ``original`` compiles to the debug bytes (relocations included)
    that ``original`` compiles to."""
    before = debug_contents(compile_ptx(original, name))
    for style in STYLES:
        rewritten = ptxdwarf.rewrite(original, style=style)
        after = debug_contents(compile_ptx(rewritten, f"{style}.{name}"))
        assert before == after, f"rewrite --style {style} of {name} compiles to other debug bytes"


def test_rewrite_keeps_what_ptxas_makes_of_a_wide_b64() -> None:
    """ptxas keeps the low 32 bits of ``.b64 4294967301``; the rewrite compiles to the same
    bytes (not to the two ``.b32`` the number as written would need), and lint names it."""
    text = (
        (ROOT / "fixtures" / "spec" / "example.ptx").read_text().replace(".b64 0\n", ".b64 4294967301\n", 1)
    )
    info = ptxdwarf.read(text=text)
    assert info.units[0].die is not None
    assert info.units[0].die.get(ptxdwarf.dwarf.AT.low_pc) == 5
    assert [f.rule for f in ptxdwarf.lint.lint(text) if f.rule == "wide-value"] == ["wide-value"]


@pytest.mark.parametrize(
    "old, new",
    [
        (".b64 0\n", ".b64 4294967301\n"),  # the CU's low_pc
        (".b64 0\n", ".b64 0x123456789abcdef0\n"),
    ],
)
def test_rewrite_of_a_wide_b64_compiles_to_the_same_bytes(old: str, new: str, cubin_path: Any) -> None:
    text = (ROOT / "fixtures" / "spec" / "example.ptx").read_text().replace(old, new, 1)
    _same_debug_bytes(text, cubin_path, "wide.ptx")


def test_rewrite_keeps_a_ref_addr_written_as_a_section_symbol(cubin_path: Any) -> None:
    """LLVM writes a DW_FORM_ref_addr as ``.b64 .debug_info+322``; ptxas relocates it, and the
    rewrite keeps the symbol and its relocation."""
    path = ROOT / "fixtures" / "corpus" / "llvm-tests" / "debug-loc-offset.O0.fixed.ptx"
    text = path.read_text()
    assert ".b64 .debug_info+322" in text
    for style in STYLES:
        assert ".debug_info+322" in ptxdwarf.rewrite(text, style=style)
    _same_debug_bytes(text, cubin_path, path.name)


def test_rewrite_keeps_a_dangling_reference_dangling() -> None:
    """A padded abbreviation code (``0x82, 0x00`` for 2) moves the DIEs after it by one byte, so
    the references ``0xa4`` to "int" point at no DIE. The rewrite writes the code in one byte;
    the references must still point at no DIE, not at "int", which is now at 0xa4."""
    text = (
        (ROOT / "fixtures" / "spec" / "example.ptx")
        .read_text()
        .replace("116, 0, 2, 95, 90, 51", "116, 0, 130, 0, 95, 90, 51", 1)
        .replace(".b32 262", ".b32 263", 1)
    )

    def types(ptx: str) -> list[str]:
        lines = ptxdwarf.dump.dump_text(ptxdwarf.read(text=ptx)).splitlines()
        return [line.split("\t")[1] for line in lines if "DW_AT_type" in line]

    assert types(text)[:3] == ["(0x000000a4 <no DIE there>)"] * 3
    for style in STYLES:
        got = types(ptxdwarf.rewrite(text, style=style))
        assert got and all("<no DIE there>" in t for t in got[:3]), (style, got)
