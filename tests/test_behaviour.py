"""What every command prints and writes for every fixture is what tools/behaviour.json
recorded (on the code before the restructuring of the reader, the checker and the public
surface): a change of behaviour is a new record, made on purpose."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.ptxas
def test_every_command_on_every_fixture_is_as_recorded() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "behaviour.py"),
            "--compare",
            str(ROOT / "tools" / "behaviour.json"),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "behaviour: 0 differences" in proc.stdout
