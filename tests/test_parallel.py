"""ptxdwarf.parallel: the child's result comes back, and a child that fails changes nothing."""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from ptxdwarf.check import check
from ptxdwarf.parallel import MIN_WORK, can_fork, run_beside

FIXTURES = Path(__file__).parent.parent / "fixtures"

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The children :func:`os.fork` makes during the test, by pid."""
    pids: list[int] = []
    fork = os.fork

    def recording_fork() -> int:
        pid = fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recording_fork)
    return pids


@needs_fork
def test_child_runs_in_another_process() -> None:
    child_pid, parent_pid = run_beside(os.getpid, os.getpid, fork=True)
    assert parent_pid == os.getpid()
    assert child_pid != os.getpid()


def test_without_fork_both_run_here_child_first() -> None:
    order: list[str] = []

    def child() -> int:
        order.append("child")
        return 1

    def parent() -> int:
        order.append("parent")
        return 2

    result = run_beside(child, parent, fork=False)
    assert result == (1, 2)
    assert order == ["child", "parent"]


@needs_fork
def test_child_side_effects_stay_in_the_child() -> None:
    seen: list[int] = []
    run_beside(lambda: seen.append(1), lambda: None, fork=True)
    assert seen == []


@needs_fork
def test_a_child_that_raises_is_run_again_here() -> None:
    calls: list[int] = []

    def child() -> str:
        calls.append(os.getpid())
        if len(calls) == 1 and os.getpid() == calls[0] and calls[0] != MAIN:
            raise RuntimeError("only in the child")
        return "again"

    MAIN = os.getpid()
    assert run_beside(child, lambda: "parent", fork=True) == ("again", "parent")
    assert calls == [MAIN]  # the child's own call is not seen here


@needs_fork
def test_an_exception_of_the_work_raises_here() -> None:
    def child() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        run_beside(child, lambda: None, fork=True)


@needs_fork
def test_a_result_that_does_not_pickle_is_computed_here() -> None:
    here = os.getpid()

    def child() -> Callable[[], int]:
        return lambda: os.getpid()

    result, _ = run_beside(child, lambda: None, fork=True)
    assert result() == here


@needs_fork
def test_a_child_that_dies_is_run_again_here() -> None:
    here = os.getpid()

    def child() -> int:
        if os.getpid() != here:
            os._exit(3)
        return 7

    assert run_beside(child, lambda: 8, fork=True) == (7, 8)


@needs_fork
def test_the_parent_failing_reaps_the_child(forked: list[int]) -> None:

    def parent() -> None:
        raise KeyError("parent")

    with pytest.raises(KeyError):
        run_beside(lambda: 1, parent, fork=True)
    assert len(forked) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0], os.WNOHANG)


def test_small_work_is_not_worth_a_fork() -> None:
    here = os.getpid()
    assert run_beside(os.getpid, os.getpid, work=MIN_WORK - 1) == (here, here)
    if can_fork():
        assert run_beside(os.getpid, os.getpid, work=MIN_WORK)[0] != here


def test_jobs_1_in_the_environment_keeps_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXDWARF_JOBS", "1")
    assert not can_fork()
    here = os.getpid()
    assert run_beside(os.getpid, os.getpid, work=MIN_WORK) == (here, here)


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not can_fork()
    finally:
        stop.set()
        t.join()


def _force(monkeypatch: pytest.MonkeyPatch, module: object, fork: bool) -> None:
    """``module`` forks (or not) whatever the size of its work."""

    def forced(
        child: Callable[[], object],
        parent: Callable[[], object],
        work: int = 0,  # noqa: ARG001 - run_beside's keyword, which the callers pass
    ) -> tuple[object, object]:
        return run_beside(child, parent, fork=fork)

    monkeypatch.setattr(module, "run_beside", forced)


@pytest.mark.ptxas
def test_check_compares_in_its_own_process(forked: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Forking for check's comparison lost time: the child copied most of the pages it read
    while ptxas was still running on the other processor (docs/performance.md)."""
    import ptxdwarf.parallel

    monkeypatch.setattr(ptxdwarf.parallel, "MIN_WORK", 0)
    name = "nvcc/readable.G.sm_75.ptx"
    report = check((FIXTURES / name).read_text(), filename=name)
    assert report.dies > 0 and report.registers
    assert forked == []


lint_run = importlib.import_module("ptxdwarf.lint.run")
PTX_FIXTURES = sorted(FIXTURES.rglob("*.ptx"))


@pytest.mark.slow
def test_lint_finds_the_same_with_and_without_a_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over every fixture: lint's checks of relocations and of the DWARF run side by side."""
    from ptxdwarf.errors import PtxDwarfError
    from ptxdwarf.lint import lint

    assert len(PTX_FIXTURES) > 300
    differ = []
    for path in PTX_FIXTURES:
        results = []
        for fork in (True, False):
            _force(monkeypatch, lint_run, fork)
            try:
                results.append([str(f) for f in lint(path.read_text(errors="replace"), filename=str(path))])
            except PtxDwarfError as exc:
                results.append([f"error: {exc}"])
        if results[0] != results[1]:
            differ.append(path.name)
    assert differ == []


_COUNTING_FORKS = """
import os, sys
forks = []
fork = os.fork

def counting_fork():
    pid = fork()
    if pid:
        forks.append(pid)
    return pid

os.fork = counting_fork
_exit = os._exit

def exit_counting(code):
    print("forks", len(forks), file=sys.stderr)
    _exit(code)

os._exit = exit_counting
from ptxdwarf.cli import run
sys.argv = ["ptxdwarf", *sys.argv[1:]]
run()
"""


@pytest.mark.slow
def test_the_console_script_forks_on_a_large_module_and_finds_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real threshold and the real process: lint of a 1.5 MB module."""
    import subprocess
    import sys

    import test_bad_input

    monkeypatch.setattr(test_bad_input, "WIDE", 300_000)
    text, _count = test_bad_input.extreme_ptx("wide")
    assert len(text) >= MIN_WORK
    path = tmp_path / "wide.ptx"
    path.write_text(text)
    runs = {}
    for jobs in ("2", "1"):
        env = {**os.environ, "PTXDWARF_JOBS": jobs}
        runs[jobs] = subprocess.run(
            [sys.executable, "-c", _COUNTING_FORKS, "lint", "--json", str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
    if can_fork():
        assert "forks 1" in runs["2"].stderr
    assert "forks 0" in runs["1"].stderr
    assert (runs["2"].returncode, runs["2"].stdout) == (runs["1"].returncode, runs["1"].stdout)
    assert runs["1"].returncode in (0, 1) and runs["1"].stdout.startswith("[")


@needs_fork
def test_a_child_whose_result_came_is_reaped_by_the_next_call(forked: list[int]) -> None:
    assert run_beside(lambda: 1, lambda: 2, fork=True) == (1, 2)
    assert run_beside(lambda: 3, lambda: 4, fork=False) == (3, 4)
    assert len(forked) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0], os.WNOHANG)
