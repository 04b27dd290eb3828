"""Running ptxas: what it prints comes back whatever its bytes."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from conftest import FIXTURES

from ptxdwarf.check import check
from ptxdwarf.cuda.ptxas import Ptxas, _run
from ptxdwarf.errors import ToolError

# ptxas 13.0 and 13.5 now and then print a label of garbage bytes (quirk strp-label-reused:
# "label '<bytes>' invalid"); a child that writes bytes that are not UTF-8 stands in for it.
_GARBAGE = [
    sys.executable,
    "-c",
    "import sys; sys.stderr.buffer.write(b\"label '\\x88\\xfe' invalid\\n\"); sys.exit(255)",
]


@pytest.mark.parametrize("cancel", [None, threading.Event()], ids=["plain", "cancellable"])
def test_stderr_that_is_not_utf8(cancel: threading.Event | None) -> None:
    code, stderr = _run(_GARBAGE, timeout=60, cancel=cancel)
    assert code == 255
    assert stderr == "label '\\x88\\xfe' invalid\n"


def test_started_is_set_once_ptxas_runs_or_cannot(ptxas: Ptxas, tmp_path: Path) -> None:
    """check waits for ``started`` before reading the PTX side (so that the thread starting ptxas
    is not held up); it is set when ptxas runs, and when ptxas cannot be started at all."""
    text = (FIXTURES / "spec" / "example.ptx").read_text()
    started = threading.Event()
    ptxas.compile(text, arch="sm_75", started=started)
    assert started.is_set()
    started = threading.Event()
    with pytest.raises(ToolError):
        Ptxas(str(tmp_path / "no-ptxas")).compile(text, arch="sm_75", started=started)
    assert started.is_set()
    with pytest.raises(ToolError):  # and check does not wait for it forever
        check(text, ptxas=Ptxas(str(tmp_path / "no-ptxas")))
