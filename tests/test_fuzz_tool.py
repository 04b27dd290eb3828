"""The project's fuzzer (tools/fuzz.py) on a short budget with a fixed seed: no finding."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT


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
