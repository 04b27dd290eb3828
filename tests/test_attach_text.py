"""ptxdwarf.attach and ptxdwarf.attach_ptx edit the text once: the module is read once,
every edit is made at offsets of the original text."""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

import pytest
from conftest import ROOT

from ptxdwarf import DebugInfoBuilder, loc
from ptxdwarf.autodebug import attach_ptx
from ptxdwarf.ptx.reader import parse_ptx

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_emit import generate_plain_ptx  # noqa: E402

attach_module = importlib.import_module("ptxdwarf.attach")


def _described(functions: int) -> tuple[str, DebugInfoBuilder]:
    ptx = generate_plain_ptx(functions)
    dbg = DebugInfoBuilder("gen.ptx", producer="test")
    u32 = dbg.named_type(".u32")
    for i in range(functions):
        f = dbg.function(f"dev{i}", line=i + 1)
        f.parameter("a", u32, line=i + 1, location=loc.register("%r0"))
        f.variable("%r4", u32, line=i + 1, location=loc.register("%r4"))
    return ptx, dbg


def test_attach_reads_the_module_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(text: str, filename: str = "<ptx>") -> Any:
        calls.append(filename)
        return parse_ptx(text, filename)

    monkeypatch.setattr(attach_module, "parse_ptx", counting)
    ptx, dbg = _described(30)
    text = attach_module.attach(ptx, dbg, filename="gen.ptx")
    assert calls == ["gen.ptx"]
    out = parse_ptx(text)
    assert len(out.functions) == 30
    for i, f in enumerate(out.functions):
        assert f"$L__ptxdwarf_end{i}" in f.labels
    assert text.startswith(".version 7.0\n.target sm_75, debug\n.address_size 64\n.file 1 \"gen.ptx\"\n")
    assert {".debug_abbrev", ".debug_info"} <= {b.name for b in out.sections}


def test_attach_keeps_every_other_byte() -> None:
    ptx, dbg = _described(5)
    text = attach_module.attach(ptx, dbg)
    code = text[: text.index("\n.section")] + "\n"
    code = code.replace(", debug", "").replace('.file 1 "gen.ptx"\n', "")
    assert re.sub(r"\$L__ptxdwarf_end\d+:\n", "", code) == ptx


def test_attach_ptx_numbers_lines_of_a_large_module() -> None:
    """Every .loc names the line of the output it stands before (+1, the instruction)."""
    result = attach_ptx(generate_plain_ptx(300), output_name="big.ptx")
    lines = result.text.split("\n")
    locs = [(i, line) for i, line in enumerate(lines) if line.startswith("\t.loc")]
    assert len(locs) == 300 * 6
    for i, line in locs:
        target = int(line.split()[2])
        assert target - 1 > i and not lines[target - 1].startswith(("\t.loc", "$L"))
        assert lines[target - 1].strip().endswith(";")
