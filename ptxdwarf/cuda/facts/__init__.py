"""The measurement harness behind docs/ptxas-facts.md: re-run it against any ptxas.

``python -m ptxdwarf.cuda.facts [--ptxas PATH [--ptxas PATH2]] [--only ID ...] [--timing] [--json]``
compiles every case of :data:`CASES` and prints, per case, the fact it measures, what
ptxas must do, what it did, and whether the fact holds for that ptxas (one column
per ptxas when several are given).
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .case import Case
from .cases import CASES
from .harness import run_ptxas

__all__ = ["CASES", "Case", "Outcome", "cases_for", "run_cases"]


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


def _run_one(ptxas: str, c: Case) -> Outcome:
    try:
        ptx = c.ptx()
    except OSError as exc:
        return Outcome(c.id, c.fact, c.expected, f"no input: {exc}", False)
    run = run_ptxas(ptxas, ptx, c.args)
    try:
        holds, observed = c.check(run)
    except (IndexError, ValueError) as exc:  # the cubin is not what the check can read
        holds, observed = False, f"{run.summary()}; unreadable: {exc}"
    return Outcome(c.id, c.fact, c.expected, observed, holds)


def run_cases(ptxas: str, cases: Iterable[Case] | None = None, *, jobs: int = 2) -> list[Outcome]:
    """Run ``cases`` (default: every case that is not a timing case) against ``ptxas``, in order."""
    chosen = [c for c in CASES if not c.timing] if cases is None else list(cases)
    if any(c.timing for c in chosen):
        jobs = 1  # timing cases measure run time: no other ptxas beside them
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda c: _run_one(ptxas, c), chosen))
