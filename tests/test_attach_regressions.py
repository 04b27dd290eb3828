"""attach on inputs that once broke it: one error line naming the file and place, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from ptxdwarf.cli import main


def test_entry_without_body_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "regressions" / "entry-without-body.badptx"
    assert main(["attach", str(path), "-o", str(tmp_path / "out.ptx")]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"ptxdwarf: error: {path}:5: .entry Z has no body and is not a declaration ending with ';'\n"
    )
    assert not (tmp_path / "out.ptx").exists()
