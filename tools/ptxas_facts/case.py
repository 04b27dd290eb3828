"""A harness case: a PTX input, how ptxas is run on it, and what ptxas must do with it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ptxdwarf.cuda.quirks import MEASURED_ON

from .harness import Run

__all__ = ["Case", "Check", "accepts", "bytes_at", "crashes", "fails", "rejects", "relocated", "show"]

#: Judges a run: (does the fact hold, what was observed in one line).
Check = Callable[[Run], tuple[bool, str]]


@dataclass(frozen=True)
class Case:
    """One measurement: ``ptx`` compiled with ``ptxas ARGS``, judged by ``check``.

    ``fact`` is the fact the case measures (a quirk id of :mod:`ptxdwarf.cuda.quirks`
    for the traps, a ``syntax.``/``rewrite.``/... id for the plain facts);
    ``expected`` says in words what ptxas must do for the fact to hold; ``holds_on``
    lists the ptxas releases it was found to hold on (of those the registry was
    measured on). ``timing`` cases compare run times and are left out unless asked for.
    ``any_version``: what the case measures does not depend on the PTX ISA version, so a
    ``.version`` newer than the ptxas takes (the fault fixtures are nvcc 13.0 output, 9.0)
    is lowered to the newest it takes, and the observation says so.
    """

    id: str
    fact: str
    expected: str
    ptx: Callable[[], str | bytes]
    check: Check
    args: Sequence[str] = ("-g", "-arch=sm_75")
    timing: bool = False
    holds_on: tuple[str, ...] = MEASURED_ON
    any_version: bool = False


def show(data: bytes | None) -> str:
    return "-" if data is None else data.hex(" ")


def accepts(extra: Callable[[Run], bool] | None = None) -> Check:
    """ptxas succeeds (and ``extra`` holds of the run)."""

    def check(run: Run) -> tuple[bool, str]:
        ok = run.returncode == 0 and run.cubin is not None
        return ok and (extra is None or extra(run)), run.summary()

    return check


def rejects(pattern: str, *, exit_code: int | None = None) -> Check:
    """ptxas fails without crashing and prints something matching ``pattern``."""

    def check(run: Run) -> tuple[bool, str]:
        ok = run.returncode > 0 and re.search(pattern, run.stderr) is not None
        if exit_code is not None:
            ok = ok and run.returncode == exit_code
        return ok, run.summary()

    return check


def fails(pattern: str) -> Check:
    """ptxas fails: it prints something matching ``pattern``, or it is killed by a signal."""
    rejected = rejects(pattern)

    def check(run: Run) -> tuple[bool, str]:
        ok, observed = rejected(run)
        return ok or run.crashed, observed

    return check


def crashes() -> Check:
    """ptxas is killed by a signal."""

    def check(run: Run) -> tuple[bool, str]:
        return run.crashed, run.summary()

    return check


def bytes_at(
    section: str, offset: int, expected: bytes | Callable[[bytes], bool], size: int | None = None
) -> Check:
    """ptxas succeeds and ``section`` holds ``expected`` at ``offset`` (or the bytes there satisfy it)."""
    width = size if size is not None else len(expected) if isinstance(expected, bytes) else 8

    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        data = run.cubin.get(section)
        got = None if data is None else data[offset : offset + width]
        if got is None:
            return False, f"no {section}"
        ok = got == expected if isinstance(expected, bytes) else expected(got)
        return ok, f"{section}+{offset}: {show(got)}"

    return check


def relocated(
    section: str,
    offset: int,
    rtype: int,
    symbol: str | None,
    addend: int | None,
    in_place: int | None,
    width: int = 8,
) -> Check:
    """ptxas succeeds, relocates ``section+offset`` with this type (symbol, addend: None = any)
    and leaves ``in_place`` there (None: any value); ``rtype`` 0 means no relocation."""

    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        data = run.cubin.get(section) or b""
        value = int.from_bytes(data[offset : offset + width], "little")
        r = run.cubin.relocation_at(section, offset)
        observed = f"in place 0x{value:x}, " + (
            f"reloc type {r.type} {r.symbol} addend {r.addend}" if r else "no relocation"
        )
        if rtype == 0:
            ok = r is None
        else:
            ok = (
                r is not None
                and r.type == rtype
                and (symbol is None or r.symbol == symbol)
                and (addend is None or r.addend == addend)
            )
        return ok and (in_place is None or value == in_place), observed

    return check
