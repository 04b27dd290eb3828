"""Two pieces of work at once, on a second processor, where the platform allows it.

:func:`run_beside` runs one callable in a forked child process while this process runs the
other, and brings the child's result back pickled. ``lint`` uses it: the checks of the
``.loc`` lines and symbolic values beside the decoding and the checks of the DIEs.
Where forking is not safe or would not help (no ``fork``, one processor, ``PTXDWARF_JOBS=1``
in the environment, other threads alive, which a fork would leave holding their locks, or
less than :data:`MIN_WORK` of input), the two run here one after the other; a child that
fails in any way is run again here, so the results are the same either way.
"""

from __future__ import annotations

import atexit
import os
import pickle
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["MIN_WORK", "can_fork", "run_beside"]

T = TypeVar("T")
U = TypeVar("U")

_OK = b"\x01"

MIN_WORK = 1 << 20
"""The least input (bytes of PTX text) worth a fork: a fork costs 2-3 ms in a small process
and more in a large one, while lint reads about 7 MB of PTX a second."""


def _processors() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _jobs() -> int:
    """``$PTXDWARF_JOBS``, the most processes a command may use (1: never fork); 2 if unset."""
    value = os.environ.get("PTXDWARF_JOBS", "")
    return int(value) if value.isdigit() else 2


def can_fork() -> bool:
    """Whether :func:`run_beside` would fork here: ``os.fork`` exists, this process may run
    on two processors or more, ``$PTXDWARF_JOBS`` is not 1 (or 0), and no other thread is
    alive."""
    return hasattr(os, "fork") and min(_processors(), _jobs()) > 1 and threading.active_count() == 1


def run_beside(
    child: Callable[[], T], parent: Callable[[], U], *, work: int = MIN_WORK, fork: bool | None = None
) -> tuple[T, U]:
    """``(child(), parent())``, ``child`` run in a forked process meanwhile when
    :func:`can_fork` and ``work`` (the size of the input) is at least :data:`MIN_WORK`, or
    when ``fork`` says so. ``child``'s result must pickle;
    its side effects stay in the child. An exception either raises here as it would have
    without a fork: a child that fails is run again here."""
    _reap_all()
    if fork is None:
        fork = work >= MIN_WORK and can_fork()
    if not (fork and hasattr(os, "fork")):
        first = child()
        return first, parent()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(read_end)
        status = 1
        try:
            data = _OK + pickle.dumps(child(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        second = parent()
    except BaseException:
        os.close(read_end)
        _reap(pid)
        raise
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    if data[:1] == _OK:
        # the whole result came (the child writes it and then closes the pipe): the child is
        # reaped later, not waited for while it unmaps its copy of this process's memory
        try:
            first = pickle.loads(data[1:])
        except Exception:  # a result that does not load is computed here
            _reap(pid)
        else:
            _reap_later(pid)
            return first, second
    else:
        _reap(pid)
    return child(), second


def _reap(pid: int) -> None:
    """Wait for the child to exit."""
    os.waitpid(pid, 0)


_unreaped: list[int] = []
"""Children whose result came and that had not yet exited when it did."""


def _reap_later(pid: int) -> None:
    """Reap ``pid`` now if it has exited, else at the next :func:`run_beside` or at exit."""
    if os.waitpid(pid, os.WNOHANG)[0] == 0:
        _unreaped.append(pid)


def _reap_all() -> None:
    """Reap the children :func:`_reap_later` left (waiting for them)."""
    while _unreaped:
        pid = _unreaped.pop()
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:  # reaped elsewhere
            pass


atexit.register(_reap_all)
