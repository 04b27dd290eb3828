"""Running ptxas: what it prints comes back whatever its bytes."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import FIXTURES

from ptxdwarf.check import check
from ptxdwarf.cuda.ptxas import Ptxas, PtxasCancelled, _run, find_ptxas
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


def test_started_is_set_once_ptxas_runs_or_cannot(ptxas_tool: Ptxas, tmp_path: Path) -> None:
    """check waits for ``started`` before reading the PTX side (so that the thread starting ptxas
    is not held up); it is set when ptxas runs, and when ptxas cannot be started at all."""
    text = (FIXTURES / "spec" / "example.ptx").read_text()
    started = threading.Event()
    ptxas_tool.compile(text, arch="sm_75", started=started)
    assert started.is_set()
    started = threading.Event()
    with pytest.raises(ToolError):
        Ptxas(str(tmp_path / "no-ptxas")).compile(text, arch="sm_75", started=started)
    assert started.is_set()
    with pytest.raises(ToolError):  # and check does not wait for it forever
        check(text, ptxas=Ptxas(str(tmp_path / "no-ptxas")))


def test_a_child_that_ends_at_once_and_one_stopped_midway() -> None:
    """The cancellable run returns what the child said, and a stop kills a child that runs on."""
    quick = [sys.executable, "-c", "import sys; sys.stderr.write('done\\n')"]
    assert _run(quick, timeout=60, cancel=threading.Event()) == (0, "done\n")
    cancel = threading.Event()
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    timer = threading.Timer(0.2, cancel.set)
    timer.start()
    with pytest.raises(PtxasCancelled):
        _run(sleeper, timeout=60, cancel=cancel)
    timer.join()


def test_each_ptxas_is_probed_once_per_process(ptxas_tool: Ptxas) -> None:
    """``find_ptxas`` gives the same object for the same file, so a run over many modules asks
    ptxas for its version and architectures once."""
    assert find_ptxas(ptxas_tool.path) is find_ptxas(ptxas_tool.path)


def test_check_loads_the_comparison_after_it_starts_ptxas() -> None:
    """Importing ``check`` (what the command line does before it starts ptxas) does not load the
    comparison code or the DWARF decoder; ``compare`` is still found where it was."""
    code = (
        "import sys, importlib; m = importlib.import_module('ptxdwarf.check');"
        "heavy = [n for n in ('ptxdwarf.check.comparison', 'ptxdwarf.dwarf.decode', 'ptxdwarf.api') if n in sys.modules];"
        "assert not heavy, heavy;"
        "from ptxdwarf.check import compare, expected_rows, die_and_attribute_at, explain_failure;"
        "assert compare.__module__ == 'ptxdwarf.check.comparison'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
