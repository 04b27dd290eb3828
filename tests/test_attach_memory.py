"""attach's register budget (quirk ``described-registers-memory``): ptxas -g keeps each described
register live through its function, so attach describes by default only the longest-lived
registers that keep ptxas -g within twice the memory of the code alone, names the rest, and
describes more when asked; lint warns on debug info that will cost far more."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, FIXTURES, ROOT, every_ptxas

from ptxdwarf.autodebug import attach_ptx
from ptxdwarf.cli import main
from ptxdwarf.cuda.ptxas import Ptxas, find_ptxas
from ptxdwarf.errors import AttachError
from ptxdwarf.lint import lint
from ptxdwarf.ptx import needs_compile_only, parse_ptx
from ptxdwarf.ptx.debug import decode_module
from ptxdwarf.strip import strip

sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_attach_memory import arch_of, chain, gemm, peak_rss

#: Triton 3.9's tiled matmul with a K loop (fixtures/corpus/triton/make.py): 1,340 registers
#: attach would describe, which took ptxas 13.0 -g to 2.5 times the memory of the code alone.
TRITON = FIXTURES / "corpus" / "triton" / "matmul_kloop.nolines.sm_80.ptx"
OUT = "/tmp/t.debug.ptx"


def _described(text: str) -> list[str]:
    """The register names (``%...``) the debug info describes."""
    info = decode_module(parse_ptx(text, "t.ptx"))
    return [d.name for d in info.iter_dies() if d.name and d.name.startswith("%")]


def test_a_budget_is_respected_the_longest_lived_first() -> None:
    # Counted in register operands: %rd2 lives from the cvta to the final st, %rd1 1 (ld.param
    # to cvta), %f0 3 (its ld.global to the first add), each sum 3 (its add to the next add, or
    # to the st).
    result = attach_ptx(chain(300), output_name=OUT, max_registers=1)
    assert _described(result.text) == ["%rd2"]
    assert len(result.left_out["chain"]) == 302
    assert "%rd2" not in result.left_out["chain"]
    result = attach_ptx(chain(300), output_name=OUT, max_registers=3)
    # Equal lifetimes go in order of first use: %f0, then %f1.
    assert sorted(_described(result.text)) == ["%f0", "%f1", "%rd2"]


def test_the_note_names_what_was_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "chain.ptx"
    src.write_text(chain(300))
    assert main(["attach", str(src), "-o", str(tmp_path / "out.ptx"), "--max-registers", "5"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: .*chain\.ptx: 298 register\(s\) not described \(chain: 298 of 303, ", err), (
        err
    )
    assert "--max-registers N or all" in err
    assert main(["attach", str(src), "-o", str(tmp_path / "all.ptx"), "--max-registers", "all"]) == 0
    assert "not described" not in capsys.readouterr().err
    assert len(_described((tmp_path / "all.ptx").read_text())) == 303


def test_by_default_an_ordinary_kernel_is_described_whole() -> None:
    result = attach_ptx(chain(300), output_name=OUT)
    assert not result.left_out and not result.warnings
    assert len(_described(result.text)) == 303


def test_the_default_budget_cuts_a_large_kernel() -> None:
    result = attach_ptx(TRITON.read_text(), output_name=OUT)
    left = result.left_out["matmul_kloop"]
    assert 0 < len(_described(result.text)) < 600 and len(left) > 700
    assert any("not described" in w and "twice the memory" in w for w in result.warnings)


def test_max_registers_is_checked() -> None:
    with pytest.raises(AttachError, match="max_registers: -1 is not a count"):
        attach_ptx(chain(10), output_name=OUT, max_registers=-1)


def test_lint_warns_on_attach_output_describing_everything() -> None:
    everything = attach_ptx(TRITON.read_text(), output_name=OUT, max_registers="all").text
    found = [f for f in lint(everything, filename="t.ptx") if f.rule == "ptxas-memory"]
    assert len(found) == 1 and found[0].severity == "warning"
    assert "matmul_kloop" in str(found[0])
    budgeted = attach_ptx(TRITON.read_text(), output_name=OUT).text
    assert not [f for f in lint(budgeted, filename="t.ptx") if f.rule == "ptxas-memory"]


def _ratio(ptxas: str, source: str, attached: str, tmp_path: Path) -> float | None:
    """Peak RSS of ptxas -g on ``attached`` over that on ``source`` (None: ptxas refuses ``source``)."""
    (tmp_path / "in.ptx").write_text(source)
    (tmp_path / "out.ptx").write_text(attached)
    args = ["-g", arch_of(source)]
    if needs_compile_only(parse_ptx(source)):
        args.append("-c")
    base, _, rc = peak_rss(ptxas, str(tmp_path / "in.ptx"), *args, limit_gb=8)
    if rc != 0:
        return None
    kb, _, rc = peak_rss(ptxas, str(tmp_path / "out.ptx"), *args, limit_gb=8)
    assert rc == 0, f"ptxas -g exit {rc} (over 8 GB?)"
    return kb / base


@pytest.mark.ptxas
def test_triton_output_compiles_within_twice_the_memory(ptxas_tool: Ptxas, tmp_path: Path) -> None:
    text = TRITON.read_text()
    ratio = _ratio(ptxas_tool.path, text, attach_ptx(text, output_name=OUT).text, tmp_path)
    assert ratio is not None and ratio <= 2


@pytest.mark.ptxas
@pytest.mark.slow
def test_a_10000_register_kernel_compiles_within_twice_the_memory(tmp_path: Path) -> None:
    text = chain(10000)
    result = attach_ptx(text, output_name=OUT)
    assert result.left_out
    for path in every_ptxas():
        ratio = _ratio(path, text, result.text, tmp_path)
        assert ratio is not None and ratio <= 2, path


@pytest.mark.ptxas
@pytest.mark.slow
def test_cuda_tensor_core_gemm_compiles_within_twice_the_memory(ptxas_tool: Ptxas, tmp_path: Path) -> None:
    text = gemm()
    result = attach_ptx(text, output_name=OUT)
    assert len(result.left_out["_Z12compute_gemmPK6__halfS1_PKfPfff"]) > 30000
    ratio = _ratio(ptxas_tool.path, text, result.text, tmp_path)
    assert ratio is not None and ratio <= 2


@pytest.mark.ptxas
@pytest.mark.slow
def test_every_corpus_attach_output_compiles_within_twice_the_memory(tmp_path: Path) -> None:
    """attach of each corpus file (``--replace`` where it has debug info) against its code alone."""
    over = []
    for path in CORPUS:
        text = path.read_text()
        try:
            out = attach_ptx(text, output_name=os.fspath(tmp_path / "out.ptx"), replace=True).text
        except AttachError:
            continue
        code = strip(text)
        ptxas = find_ptxas(version=parse_ptx(text).version).path
        ratio = _ratio(ptxas, code, out, tmp_path)
        if ratio is not None and ratio > 2:
            over.append(f"{path.relative_to(FIXTURES)}: {ratio:.2f}")
    assert not over, over
