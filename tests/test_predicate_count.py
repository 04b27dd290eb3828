"""ptxas 12.9-13.5 ``-g`` dies on a function whose debug info describes 52 or more predicates,
and on some with fewer (quirk ``predicate-count``): attach describes none unless asked, and
never more than 51; lint warns about modules over 51; the harness measures it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptxdwarf.api import read_ptx
from ptxdwarf.autodebug import attach_ptx
from ptxdwarf.cli import main
from ptxdwarf.cuda.ptxas import Ptxas, find_ptxas, wheel_ptxas
from ptxdwarf.dwarf import TAG
from ptxdwarf.errors import AttachError
from ptxdwarf.lint import lint
from tools.ptxas_facts.cases.registers import predicates


def _kernel(count: int) -> str:
    """A kernel whose ``count`` predicates each guard a branch (ptxas keeps them all)."""
    body = []
    for i in range(count):
        body += [
            f"\tsetp.gt.u32 %p{i}, %r1, {i};",
            f"\t@%p{i} bra $L{i};",
            f"\tadd.u32 %r2, %r2, {i};",
            f"$L{i}:",
        ]
    return "\n".join(
        [
            ".version 8.0",
            ".target sm_75",
            ".address_size 64",
            ".visible .entry k(.param .u64 p)",
            "{",
            "\t.reg .b32 %r<4>;",
            "\t.reg .b64 %rd<3>;",
            f"\t.reg .pred %p<{count}>;",
            "\tld.param.u64 %rd1, [p];",
            "\tcvta.to.global.u64 %rd2, %rd1;",
            "\tld.global.u32 %r1, [%rd2];",
            "\tmov.u32 %r2, 0;",
            *body,
            "\tst.global.u32 [%rd2], %r2;",
            "\tret;",
            "}",
            "",
        ]
    )


def _ptxases() -> list[Ptxas]:
    wheel = wheel_ptxas()
    assert wheel, "the nvidia-cuda-nvcc wheel's ptxas is not installed"
    return [find_ptxas(), Ptxas(wheel[0])]


def _described_predicates(text: str) -> list[str]:
    info = read_ptx(text)
    return [
        d.name or "" for d in info.iter_dies() if d.tag == TAG.variable and (d.name or "").startswith("%p")
    ]


def test_attach_describes_no_predicate_by_default() -> None:
    result = attach_ptx(_kernel(60), output_name="k.debug.ptx")
    assert _described_predicates(result.text) == []
    assert not [w for w in result.warnings if "predicate" in w]
    dies = list(read_ptx(result.text).iter_dies())
    assert not [d for d in dies if d.tag == TAG.base_type and d.name == ".pred"]
    assert {"%r1", "%r2", "%rd1", "%rd2"} <= {d.name for d in dies if d.tag == TAG.variable}


@pytest.mark.parametrize("count", [52, 60])
@pytest.mark.ptxas
def test_attach_output_compiles_with_many_predicates(count: int) -> None:
    result = attach_ptx(_kernel(count), output_name="k.debug.ptx", predicates=51)
    names = _described_predicates(result.text)
    assert names == [f"%p{i}" for i in range(51)]
    (warning,) = [w for w in result.warnings if "predicate" in w]
    assert f"{count - 51} predicate register(s) not described (k: {count - 51} of {count}, %p51" in warning
    assert "at most 51 asked for per function" in warning
    for ptxas in _ptxases():
        ptxas.compile(result.text, arch="sm_75", filename="k.debug.ptx")  # PtxasFailed if it crashes
    assert lint(result.text, filename="k.debug.ptx") == []


@pytest.mark.parametrize("asked", [1, 51])
def test_attach_describes_as_many_predicates_as_asked(asked: int) -> None:
    result = attach_ptx(_kernel(51), output_name="k.debug.ptx", predicates=asked)
    assert _described_predicates(result.text) == [f"%p{i}" for i in range(asked)]
    warned = [w for w in result.warnings if "predicate" in w]
    assert (warned == []) == (asked == 51)


@pytest.mark.parametrize("asked", [-1, 52])
def test_attach_refuses_a_predicate_count_ptxas_crashes_on(asked: int) -> None:
    with pytest.raises(AttachError, match=r"predicates: -?\d+ is not in 0-51"):
        attach_ptx(_kernel(4), output_name="k.debug.ptx", predicates=asked)


def test_lint_warns_from_52_described_predicates() -> None:
    over = [f for f in lint(predicates(52, 52)(), filename="t.ptx") if f.rule == "predicate-count"]
    assert len(over) == 1 and over[0].severity == "warning"
    assert "52 predicate registers of entry _Z4testPi" in over[0].message
    assert not [f for f in lint(predicates(60, 51)(), filename="t.ptx") if f.rule == "predicate-count"]


def test_command_line_predicates_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "k.ptx"
    src.write_text(_kernel(5))
    out = tmp_path / "k.debug.ptx"
    assert main(["attach", "--predicates", "3", str(src), "-o", str(out)]) == 0
    assert _described_predicates(out.read_text()) == ["%p0", "%p1", "%p2"]
    assert "2 predicate register(s) not described (k: 2 of 5, %p3, %p4)" in capsys.readouterr().err
    assert main(["attach", str(src), "-o", str(out)]) == 0
    assert _described_predicates(out.read_text()) == []
    assert main(["attach", "--predicates", "52", str(src), "-o", str(out)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("ptxdwarf: error: ") and "predicates: 52 is not in 0-51" in line
