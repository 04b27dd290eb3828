"""Running ptxas: what it prints comes back whatever its bytes."""

from __future__ import annotations

import sys
import threading

import pytest

from ptxdwarf.cuda.ptxas import _run

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
