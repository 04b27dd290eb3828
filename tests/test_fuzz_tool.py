"""The project's fuzzer (tools/fuzz.py) on a short budget with a fixed seed: no finding."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT


@pytest.mark.slow
@pytest.mark.ptxas
def test_short_fuzz_run_finds_nothing(tmp_path: Path) -> None:
    out = tmp_path / "findings"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "fuzz.py"),
            "--budget",
            "3000",
            "--seed",
            "7",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = sorted(p.read_text() for p in out.glob("*.txt")) if out.exists() else []
    assert proc.returncode == 0 and not found, proc.stdout + proc.stderr + "\n".join(found[:3])
    assert proc.stdout.startswith("3000 inputs")


def test_memory_blow_up_is_a_finding() -> None:
    """An input that makes the worker grow by more than --memory MB is interrupted and kept
    as a finding (the kernel's OOM killer would take the input with the worker)."""
    script = f"""
import sys, time
sys.path.insert(0, {str(ROOT / "tools")!r})
import fuzz
watch = fuzz._MemoryWatch(20 * 1024 * 1024)
watch.base = fuzz._rss()
hoard = []
try:
    for _ in range(400):
        hoard.append(bytearray(1 << 20))
        time.sleep(0.005)
except fuzz.BlowUp:
    print("blow-up after", len(hoard), "MB")
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.stdout.startswith("blow-up after"), proc.stdout + proc.stderr
    assert int(proc.stdout.split()[2]) < 400
