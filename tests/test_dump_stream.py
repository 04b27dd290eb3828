"""``dump`` limited to sections (``--debug-info``, ``--debug-loc``, ``--debug-line``,
``--register-map``), and dumps written as they are made."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from conftest import CORPUS_CUBINS, FIXTURES, CubinPath
from elftools.elf.elffile import ELFFile
from line_tools import minimal_elf

import ptxdwarf
from ptxdwarf.cli import _DUMP_SECTIONS, main
from ptxdwarf.cuda import read_cubin
from ptxdwarf.cuda.regmap import FunctionRegisters
from ptxdwarf.dump import SECTIONS, cubin_sections, dump_json, dump_text, iter_json, iter_text

#: The section each block of the text dump belongs to, by the block's first line.
BLOCKS = {
    ".debug_info contents:": "debug-info",
    ".debug_loc contents:": "debug-loc",
    ".debug_line contents:": "debug-line",
    ".nv_debug_line_sass contents:": "debug-line-sass",
    ".nv_debug_info_reg_sass contents:": "register-map",
}
_BLOCK_START = re.compile(r"^\S+ contents:$|^\S+: \d+ bytes \(not decoded\)$")


@pytest.fixture(scope="module")
def rich_cubin(cubin_path: CubinPath) -> Path:
    """nvcc -G's rich module compiled with ptxas -g: DIEs, location lists, line tables and a
    register map."""
    return cubin_path((FIXTURES / "nvcc" / "rich.sm_75.ptx").read_text(), "rich.ptx")


def blocks(text: str) -> tuple[str, list[tuple[str | None, list[str]]]]:
    """The head line of a text dump and its blocks (each from the blank line before its
    title), with the section each belongs to (None: one only the full dump shows)."""
    lines = text.splitlines()
    found: list[tuple[str | None, list[str]]] = []
    for i, line in enumerate(lines[1:], 1):
        if line == "" and i + 1 < len(lines) and _BLOCK_START.match(lines[i + 1]):
            found.append((BLOCKS.get(lines[i + 1]), []))
        if found:
            found[-1][1].append(line)
    return lines[0], found


def dump(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["dump", *args]) == 0
    return capsys.readouterr().out


def test_the_options_are_the_sections() -> None:
    assert tuple(_DUMP_SECTIONS) == SECTIONS


@pytest.mark.ptxas
def test_a_selection_is_those_blocks_of_the_full_dump(
    rich_cubin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head, full = blocks(dump(capsys, str(rich_cubin)))
    assert {section for section, _ in full} >= set(SECTIONS)
    for n in range(1, len(SECTIONS) + 1):
        for chosen in itertools.combinations(SECTIONS, n):
            out = dump(capsys, *(f"--{name}" for name in reversed(chosen)), str(rich_cubin))
            expected = [head, *(line for section, lines in full if section in chosen for line in lines)]
            assert out == "\n".join(expected) + "\n", chosen


@pytest.mark.ptxas
def test_a_json_selection_is_those_members_of_the_full_document(
    rich_cubin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = json.loads(dump(capsys, "--json", str(rich_cubin)))
    members = {
        "debug-info": "units",
        "debug-loc": "locations",
        "debug-line": "lines",
        "debug-line-sass": "lines",
        "register-map": "register_map",
    }
    sass = ".nv_debug_line_sass"
    assert {p["section"] for p in full["lines"]} == {".debug_line", sass}
    for chosen in (
        ("debug-info",),
        ("debug-loc", "register-map"),
        ("debug-info", "debug-line"),
        ("debug-line-sass",),
        ("debug-line-sass", "debug-line"),
        SECTIONS,
    ):
        out = json.loads(dump(capsys, "--json", *(f"--{name}" for name in chosen), str(rich_cubin)))
        keep = {"format", "source", "file", *(members[name] for name in chosen)}
        expected = {key: value for key, value in full.items() if key in keep}
        if "lines" in expected:
            shown = {"debug-line-sass": {sass}, "debug-line": {".debug_line"}}
            sections = set().union(*(shown.get(name, set()) for name in chosen))
            expected["lines"] = [p for p in full["lines"] if p["section"] in sections]
        assert out == expected, chosen


@pytest.mark.ptxas
def test_a_line_table_the_cubin_lacks_is_one_line(
    rich_cubin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--debug-line`` and ``--debug-line-sass`` each say when the cubin has none of their
    tables: here a cubin with only ``.nv_debug_line_sass``, then one with only ``.debug_line``."""
    for present, absent, option in (
        (".nv_debug_line_sass", ".debug_line", "--debug-line"),
        (".debug_line", ".nv_debug_line_sass", "--debug-line-sass"),
    ):
        with rich_cubin.open("rb") as f:
            section = ELFFile(f).get_section_by_name(present)
            assert section is not None
            data = section.data()
        only = tmp_path / f"only{present}.cubin"
        only.write_bytes(minimal_elf({present: data}))
        lines = dump(capsys, option, str(only)).splitlines()
        assert lines[1:] == [f"(no {absent})"], lines
        other = "--debug-line-sass" if option == "--debug-line" else "--debug-line"
        assert f"{present} contents:" in dump(capsys, other, str(only)).splitlines()


def test_a_section_the_input_lacks_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    ptx = str(FIXTURES / "spec" / "example.ptx")
    out = dump(capsys, "--debug-loc", "--debug-line", "--register-map", ptx)
    assert out.splitlines() == [
        f"{ptx}: debug info from ptx",
        "(no .debug_loc)",
        "(no line tables: ptxas writes the line table of a cubin; ptxdwarf reads no PTX .debug_line)",
        "(no register map)",
    ]
    info = ptxdwarf.read(ptx)
    assert dump(capsys, "--debug-info", ptx) == dump_text(info, ["debug-info"])
    assert json.loads(dump_json(info, ["debug-loc"])) == {
        "format": "ptxdwarf-dump/1",
        "source": "ptx",
        "file": ptx,
    }
    with pytest.raises(ValueError, match="unknown sections"):
        dump_text(info, ["debug-frame"])


@pytest.mark.ptxas
def test_the_text_dump_is_made_as_it_is_written(rich_cubin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first lines come before any register map entry is decoded, and the map is decoded
    function by function as it is written."""
    decoded: list[str] = []
    entries = vars(FunctionRegisters)["entries"].fget

    def counted(self: FunctionRegisters) -> object:
        decoded.append(self.function)
        return entries(self)

    monkeypatch.setattr(FunctionRegisters, "entries", property(counted))
    lines = iter_text(ptxdwarf.read(rich_cubin))
    assert next(lines).endswith("debug info from cubin")
    assert [next(lines) for _ in range(3)][1] == ".debug_info contents:"
    assert decoded == []
    functions = []
    for line in lines:
        if line.startswith("function "):
            functions.append(line.split()[1].rstrip(":"))
            assert set(decoded) <= set(functions)
    assert len(functions) > 1 and set(decoded) == set(functions)


@pytest.mark.ptxas
def test_the_json_document_is_made_in_small_chunks(rich_cubin: Path) -> None:
    info = ptxdwarf.read(rich_cubin)
    chunks = list(iter_json(info))
    document = "".join(chunks)
    assert json.loads(document)["lines"] and document == dump_json(info)
    assert max(map(len, chunks)) < len(document) / 10  # a function of the register map at most


#: The selections a dump reads a cubin for: each block alone, llvm-dwarfdump's three, the line
#: tables with the register map.
_CHOSEN = [
    *((section,) for section in SECTIONS),
    ("debug-info", "debug-line", "debug-loc"),
    ("debug-line", "register-map"),
]


@pytest.mark.parametrize(
    "cubin",
    [*CORPUS_CUBINS, *sorted((FIXTURES / "cubins").glob("*.cubin"))],
    ids=lambda path: f"{path.parent.name}/{path.name}",
)
def test_a_cubin_read_for_some_blocks_shows_them_as_the_whole_reading_does(cubin: Path) -> None:
    """``dump --debug-line`` and the other selections read only the sections their blocks are
    made from (``cubin_sections``): what they show is what the whole reading shows."""
    whole = read_cubin(cubin)
    for chosen in _CHOSEN:
        only = cubin_sections(chosen)
        assert only is not None
        alone = read_cubin(cubin, only=only)
        assert set(alone.section_names()) <= only, chosen
        if ".debug_info" not in only:
            assert alone.units == []
        assert dump_text(alone, chosen) == dump_text(whole, chosen), chosen
        assert dump_json(alone, chosen) == dump_json(whole, chosen), chosen


@pytest.mark.ptxas
def test_the_line_tables_of_a_cubin_with_a_broken_debug_info_are_shown(
    rich_cubin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Like ``llvm-dwarfdump --debug-line``, ``dump --debug-line`` does not read ``.debug_info``:
    a unit that runs past its section is an error only for a dump that shows the DIEs."""
    raw = bytearray(rich_cubin.read_bytes())
    with rich_cubin.open("rb") as f:
        section = ELFFile(f).get_section_by_name(".debug_info")
        assert section is not None
        offset = section["sh_offset"]
    raw[offset : offset + 4] = (0x7FFFFFF0).to_bytes(4, "little")
    broken = tmp_path / "broken.cubin"
    broken.write_bytes(raw)
    expected = dump(capsys, "--debug-line", "--register-map", str(rich_cubin))
    assert dump(capsys, "--debug-line", "--register-map", str(broken)) == expected.replace(
        str(rich_cubin), str(broken)
    )
    for option in ("--debug-info", "--debug-loc"):
        assert main(["dump", option, str(broken)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"ptxdwarf: error: {broken} (.debug_info+0x0): "), err
        assert err.count("\n") == 1, err
