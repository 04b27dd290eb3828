"""The benchmark scripts still run (on small inputs): they are the only place the
performance targets are measured, so they must not rot. No timing is asserted here."""

from __future__ import annotations

import glob
import shutil
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_check
import bench_cli
import bench_dump
import bench_emit
import bench_parse

SMALL_NVCC = FIXTURES / "nvcc" / "call_example.sm_75.ptx"


def test_bench_emit_builder_part(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        bench_emit.main(["--functions", "24", "--repeat", "1", "--no-llvm", "--attach-functions", "0"]) == 0
    )
    out = capsys.readouterr().out
    assert "builder module: 24 functions" in out
    assert "builder encode+write:" in out and "builder build+encode+write:" in out


def test_bench_emit_llvm_part(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    llc = (
        shutil.which("llc-14")
        or shutil.which("llc")
        or next(iter(sorted(glob.glob("/usr/lib/llvm-14/bin/llc"))), None)
    )
    if llc is None:
        pytest.fail("llc (LLVM 14) is not on PATH: install llvm-14 (the emit benchmark's part 2 needs it)")
    assert (
        bench_emit.main(
            [
                "--functions",
                "6",
                "--repeat",
                "1",
                "--cache",
                str(tmp_path),
                "--llc",
                llc,
                "--attach-functions",
                "0",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "re-emit ratio, keep_abbrevs=False:" in out


def test_bench_emit_attach_part(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_emit.main(["--size", "small", "--no-builder", "--no-llvm"]) == 0
    out = capsys.readouterr().out
    assert "3. attach:" in out and "40 functions" in out and "160 functions" in out
    assert "attach end to end:" in out and "builder" not in out


@pytest.mark.ptxas
def test_bench_parse_on_a_fixture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_parse.main(["--ptx", str(SMALL_NVCC), "--runs", "1", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "same" in out and "parse ratio:" in out and "rewrite_ptx style=readable" in out


@pytest.mark.ptxas
def test_bench_check_on_a_fixture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_check.main(["--ptx", str(SMALL_NVCC), "--runs", "1", "--cache", str(tmp_path)]) == 0
    assert "check ratio:" in capsys.readouterr().out


@pytest.mark.ptxas
def test_bench_cli_on_a_fixture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import _llvm_dwarfdump

    reader = _llvm_dwarfdump()
    assert reader is not None, "llvm-dwarfdump is not installed (the test set-up needs it)"
    args = ["--ptx", str(SMALL_NVCC), "--pairs", "1", "--cache", str(tmp_path), "--llvm-dwarfdump", reader]
    assert bench_cli.main(args) == 0
    out = capsys.readouterr().out
    assert "lint ratio:" in out and "check ratio:" in out and "dump ratio:" in out and "stats ratio:" in out


@pytest.mark.ptxas
def test_bench_dump_on_a_fixture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import _llvm_dwarfdump

    reader = _llvm_dwarfdump()
    assert reader is not None, "llvm-dwarfdump is not installed (the test set-up needs it)"
    args = ["--ptx", str(SMALL_NVCC), "--pairs", "1", "--cache", str(tmp_path), "--llvm-dwarfdump", reader]
    assert bench_dump.main(args) == 0
    out = capsys.readouterr().out
    for ratio in (
        "debug-info",
        "debug-line",
        "debug-loc",
        "three",
        "json",
        "memory (dump)",
        "memory (dump --json)",
    ):
        assert f"{ratio} ratio:" in out
