"""The corpus's cubins (``fixtures/corpus/*/*.cubin``: cuTile, cuda.core) against the real tools.

Producers that write no PTX offline give cubins: cuTile (tileiras, with ``.nv.tileir.debug_line``,
a line program from SASS addresses to lines of the Tile IR text kept in
``.nv.tileir.debug_txt.HASH``) and cuda.core (NVRTC; its PTX path needs the driver). Each cubin:
``dump`` and ``dump --json`` read it; its DIEs equal what every llvm-dwarfdump reads
(:func:`test_corpus.dump_differences`); every line program equals what every llvm-dwarfdump and
eu-readelf read from the same bytes (:func:`line_tools.line_differences`); every debug section
is decoded or listed in ``other_sections``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS_CUBINS, FIXTURES, every_dwarfdump, run_dwarfdump
from elftools.elf.elffile import ELFFile
from line_tools import line_differences
from test_corpus import cli, dump_differences

CORPUS = FIXTURES / "corpus"
TILE = sorted(CORPUS.glob("cutile/*.cubin"))


def _id(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def _doc(path: Path) -> dict[str, Any]:
    code, out = cli("dump", "--json", str(path))
    assert code == 0
    doc: dict[str, Any] = json.loads(out)
    return doc


@pytest.mark.parametrize("path", CORPUS_CUBINS, ids=_id)
def test_dump_reads_the_cubin(path: Path) -> None:
    code, text = cli("dump", str(path))
    assert code == 0 and "(not decoded)" in text
    assert _doc(path)["source"] == "cubin"


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS_CUBINS, ids=_id)
def test_dies_and_line_programs_equal_llvm_dwarfdump_and_eu_readelf(
    path: Path, tmp_path: Path, eu_readelf: str
) -> None:
    doc = _doc(path)
    tools = every_dwarfdump()
    problems = line_differences(path.read_bytes(), doc, tools, eu_readelf, tmp_path)
    if doc["units"]:
        problems += [
            f"{tool}: {p}"
            for tool in tools
            for p in dump_differences(doc, run_dwarfdump(tool, path, "--debug-info"))
        ]
    assert not problems, "\n".join(problems[:10])


#: The debug sections dump decodes, by the document member that shows them (a section whose
#: name starts with the key's string).
_SHOWN = {
    ".debug_info": "units",
    ".debug_abbrev": "units",
    ".debug_str": "strings",
    ".debug_loc": "locations",
    ".nv_debug_line_sass": "lines",
    ".nv.tileir.debug_line": "lines",
    ".nv.tileir.debug_txt.": "tile_ir",
    ".nv_debug_info_reg_sass": "register_map",
    ".nv_debug_info_reg_type": "register_map",
}


@pytest.mark.parametrize("path", CORPUS_CUBINS, ids=_id)
def test_every_debug_section_is_decoded_or_listed(path: Path) -> None:
    """Each section whose name says debug (relocation sections aside: they are applied) is
    shown by the member of the dump that decodes it, or listed in ``other_sections``."""
    doc = _doc(path)
    listed = {s["name"]: s["size"] for s in doc.get("other_sections", [])}
    elf = ELFFile(io.BytesIO(path.read_bytes()))
    missing = []
    for section in elf.iter_sections():
        name = section.name
        if "debug" not in name or section["sh_type"] in ("SHT_REL", "SHT_RELA"):
            continue
        member = next((m for prefix, m in _SHOWN.items() if name.startswith(prefix)), None)
        if name in listed:
            assert listed[name] == section.data_size, name
        elif member is None or member not in doc:
            missing.append(name)
    assert not missing
    assert any(name.startswith(".nv.merc.") for name in listed) == any(
        s.name.startswith(".nv.merc.") for s in elf.iter_sections()
    )


@pytest.mark.parametrize("path", TILE, ids=_id)
def test_tile_ir_text_and_line_program(path: Path) -> None:
    """cuTile: the Tile IR text is the section's text line by line, the ``.nv.tileir.debug_line``
    program names it as a file, and every row's line is a line of it."""
    doc = _doc(path)
    elf = ELFFile(io.BytesIO(path.read_bytes()))
    texts = {s.name: s.data() for s in elf.iter_sections() if s.name.startswith(".nv.tileir.debug_txt.")}
    assert {t["section"]: t["lines"] for t in doc["tile_ir"]} == {
        name: data.decode().split("\n") for name, data in texts.items()
    }
    (program,) = [p for p in doc["lines"] if p["section"] == ".nv.tileir.debug_line"]
    files = [f["name"] for f in program["files"]]
    assert set(texts) <= set(files)
    (lines,) = [t["lines"] for t in doc["tile_ir"]]
    for row in program["rows"]:
        assert files[row["file"] - 1] in texts
        assert 0 < row["line"] <= len(lines)
    code, text = cli("dump", "--debug-line", str(path))
    assert code == 0
    assert ".nv.tileir.debug_line contents:" in text
    assert f"{len(lines):6} {lines[-1]}".rstrip() in text.splitlines()
