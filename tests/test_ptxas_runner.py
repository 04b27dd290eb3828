"""Running ptxas: what it prints comes back whatever its bytes."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import FIXTURES

from ptxdwarf.check import check
from ptxdwarf.cuda.ptxas import Ptxas, PtxasCancelled, PtxasFailed, _Child, find_ptxas
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
    code, stderr = _Child(_GARBAGE).wait(60, cancel)
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
    assert _Child(quick).wait(60, threading.Event()) == (0, "done\n")
    cancel = threading.Event()
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    timer = threading.Timer(0.2, cancel.set)
    timer.start()
    with pytest.raises(PtxasCancelled):
        _Child(sleeper).wait(60, cancel)
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


def _fake_ptxas(tmp_path: Path, body: str) -> Ptxas:
    """A ptxas that runs ``body`` with ``out`` (its ``-o`` path) and ``cubin`` (a real cubin's bytes)."""
    script = tmp_path / "ptxas"
    cubin = FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, time\n"
        "out = sys.argv[sys.argv.index('-o') + 1]\n"
        f"cubin = open({str(cubin)!r}, 'rb').read()\n" + body
    )
    script.chmod(0o755)
    return Ptxas(str(script))


def test_the_cubin_is_read_once_written_while_ptxas_runs_on(tmp_path: Path) -> None:
    """``written`` gives the cubin once all of it is there, while ptxas still frees its memory;
    ``wait`` gives the same bytes when ptxas ends well."""
    tool = _fake_ptxas(
        tmp_path,
        "with open(out, 'wb') as fh:\n"
        "    fh.write(cubin[:1000]); fh.flush(); time.sleep(0.2); fh.write(cubin[1000:])\n"
        "time.sleep(0.5)\n",
    )
    with tool.start(".version 8.0\n", arch="sm_75") as run:
        early = run.written()
        assert early == (FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin").read_bytes()
        assert run.wait().cubin == early


def test_wait_gives_the_bytes_the_cubin_is_and_no_others(tmp_path: Path) -> None:
    """``same_as``: the result holds those bytes themselves where the file holds them, and the
    file's where it does not (a byte changed, one more, one less, across the buffer's pieces)."""
    cubin = (FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin").read_bytes()
    tool = _fake_ptxas(tmp_path, "open(out, 'wb').write(cubin)\n")
    big = cubin * (1 + (3 << 20) // len(cubin))  # more than three of the buffer's pieces
    for expected in (cubin, bytes(bytearray(cubin))):  # the same bytes, another object
        with tool.start(".version 8.0\n", arch="sm_75") as run:
            assert run.wait(same_as=expected).cubin is expected
    changed = bytearray(cubin)
    changed[len(cubin) // 2] ^= 1
    for other in (bytes(changed), cubin + b"\0", cubin[:-1], b"", big):
        with tool.start(".version 8.0\n", arch="sm_75") as run:
            got = run.wait(same_as=other).cubin
            assert got == cubin and got is not other
    (tmp_path / "big").mkdir()
    large = _fake_ptxas(tmp_path / "big", "open(out, 'wb').write(cubin * (1 + (3 << 20) // len(cubin)))\n")
    for other in (big, big[:-1] + b"x", b"y" + big[1:]):
        with large.start(".version 8.0\n", arch="sm_75") as run:
            got = run.wait(same_as=other).cubin
            assert got == big and (got is other) == (other is big)


def test_no_early_cubin_when_ptxas_ends_first(tmp_path: Path) -> None:
    """A cubin shorter than its headers say, or none: ``written`` waits for ptxas to end and
    gives None; ``wait`` says what ptxas did."""
    short = _fake_ptxas(tmp_path, "open(out, 'wb').write(cubin[:-10])\n")
    with short.start(".version 8.0\n", arch="sm_75") as run:
        assert run.written() is None
        assert (
            len(run.wait().cubin)
            == len((FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin").read_bytes()) - 10
        )
    (tmp_path / "none").mkdir()
    failing = _fake_ptxas(tmp_path / "none", "sys.stderr.write('ptxas fatal   : no\\n'); sys.exit(1)\n")
    with failing.start(".version 8.0\n", arch="sm_75") as run:
        assert run.written() is None
        with pytest.raises(PtxasFailed, match="no"):
            run.wait()


def test_check_stands_on_the_cubin_ptxas_leaves(ptxas_tool: Ptxas, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cubin read early that is not what ptxas leaves (another module's, or bytes that are not
    a cubin) does not change the report: the comparison is made again on the final bytes."""
    from ptxdwarf.cuda.ptxas import PtxasRun

    text = (FIXTURES / "spec" / "example.ptx").read_text()
    expected = check(text, filename="example.ptx", ptxas=ptxas_tool).to_json()
    other = (FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin").read_bytes()
    for early in (other, b"\x7fELF" + b"\0" * 60, other[:5000]):
        monkeypatch.setattr(PtxasRun, "written", lambda _self, early=early: early)
        assert check(text, filename="example.ptx", ptxas=ptxas_tool).to_json() == expected


def test_check_compares_once_when_the_early_cubin_stands(
    ptxas_tool: Ptxas, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ptxdwarf.check.comparison as comparison
    from ptxdwarf.cuda.ptxas import PtxasRun

    text = (FIXTURES / "spec" / "example.ptx").read_text()
    final = ptxas_tool.compile(text, arch="sm_75").cubin
    calls: list[bytes] = []
    compare = comparison.compare

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args[2])  # type: ignore[arg-type]
        return compare(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(comparison, "compare", counted)
    monkeypatch.setattr(PtxasRun, "written", lambda _self: final)
    report = check(text, filename="example.ptx", ptxas=ptxas_tool)
    assert report.consistent and calls == [final]
