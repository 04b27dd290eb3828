"""The measurement harness behind docs/ptxas-facts.md: re-run it against any ptxas.

``python -m tools.ptxas_facts [--ptxas PATH [--ptxas PATH2]] [--only ID ...] [--timing] [--json]``
compiles every case of :data:`CASES` and prints, per case, the fact it measures, what
ptxas must do, what it did, and whether the fact holds for that ptxas (one column
per ptxas when several are given).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ptxdwarf.cuda.ptxas import Ptxas

from .case import Case
from .cases import CASES
from .harness import run_ptxas

__all__ = ["CASES", "Case", "Outcome", "cases_for", "run_cases", "within_reach"]


@dataclass(frozen=True)
class Outcome:
    """What one case found with one ptxas."""

    case: str
    fact: str
    expected: str
    observed: str
    holds: bool


def cases_for(fact: str) -> list[Case]:
    """The cases that measure ``fact``."""
    return [c for c in CASES if c.fact == fact]


def _run_one(tool: Ptxas, c: Case) -> Outcome:
    try:
        ptx = c.ptx()
    except OSError as exc:
        return Outcome(c.id, c.fact, c.expected, f"no input: {exc}", False)
    lowered = None
    if c.any_version:
        ptx, lowered = within_reach(ptx, tool.max_version)
    run = run_ptxas(tool, ptx, c.args)
    try:
        holds, observed = c.check(run)
    except (IndexError, ValueError) as exc:  # the cubin is not what the check can read
        holds, observed = False, f"{run.summary()}; unreadable: {exc}"
    if lowered is not None:
        observed = f"{observed} (at .version {lowered})"
    return Outcome(c.id, c.fact, c.expected, observed, holds)


_VERSION_LINE = re.compile(rb"^([ \t]*\.version[ \t]+)(\d+)\.(\d+)", re.MULTILINE)


def within_reach(ptx: str | bytes, newest: tuple[int, int]) -> tuple[str | bytes, str | None]:
    """``ptx`` with its ``.version`` lowered to ``newest`` when it is newer, and the version
    written (None: left as it was)."""
    data = ptx.encode("utf-8", "surrogateescape") if isinstance(ptx, str) else ptx
    m = _VERSION_LINE.search(data)
    if m is None or newest == (0, 0) or (int(m.group(2)), int(m.group(3))) <= newest:
        return ptx, None
    version = f"{newest[0]}.{newest[1]}"
    data = data[: m.start(2)] + version.encode() + data[m.end(3) :]
    return (data.decode("utf-8", "surrogateescape") if isinstance(ptx, str) else data), version


def run_cases(ptxas: str, cases: Iterable[Case] | None = None, *, jobs: int = 2) -> list[Outcome]:
    """Run ``cases`` (default: every case that is not a timing case) against ``ptxas``, in order."""
    chosen = [c for c in CASES if not c.timing] if cases is None else list(cases)
    if any(c.timing for c in chosen):
        jobs = 1  # timing cases measure run time: no other ptxas beside them
    tool = Ptxas(ptxas)  # its newest .version is asked for by the first case that needs it, then kept
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda c: _run_one(tool, c), chosen))
