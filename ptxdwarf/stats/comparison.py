"""Two reports side by side: per function matched by name, the change of each share."""

from __future__ import annotations

from dataclasses import dataclass

from .report import FunctionStats, StatsReport

__all__ = ["Change", "compare"]


@dataclass
class Change:
    """One function of the old report, the new, or both (matched by symbol)."""

    name: str
    old: FunctionStats | None
    new: FunctionStats | None

    @property
    def covered_change(self) -> float | None:
        return _change(_covered(self.old), _covered(self.new))

    @property
    def readable_change(self) -> float | None:
        """The new readable share less the old (None when the old has none; a share the
        new lacks counts as 0)."""
        return _change(_readable(self.old), _readable(self.new))

    def dropped(self, threshold: float = 0.0) -> bool:
        """Whether the readable share fell by more than ``threshold`` (a fraction: 0.05 is
        5 percentage points)."""
        change = self.readable_change
        return change is not None and -change > threshold + 1e-12

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "old": None if self.old is None else _shares(self.old),
            "new": None if self.new is None else _shares(self.new),
            "covered_change": self.covered_change,
            "readable_change": self.readable_change,
        }


def compare(old: StatsReport, new: StatsReport) -> list[Change]:
    """The functions of ``old`` and ``new`` matched by symbol: those of ``old`` in its
    order, then those only ``new`` has."""
    olds = _by_name(old)
    news = _by_name(new)
    changes = [Change(name, f, news.get(name)) for name, f in olds.items()]
    changes.extend(Change(name, None, f) for name, f in news.items() if name not in olds)
    return changes


def _by_name(report: StatsReport) -> dict[str, FunctionStats]:
    found: dict[str, FunctionStats] = {}
    for module in report.modules:
        for f in module.functions:
            found.setdefault(f.name, f)
    return found


def _change(old: float | None, new: float | None) -> float | None:
    """``new - old``; a share the new side lacks (the function, or every variable with a
    scope, is gone) counts as 0."""
    if old is None:
        return None
    return (new or 0.0) - old


def _shares(f: FunctionStats) -> dict[str, object]:
    return {
        "scope_bytes": f.scope_bytes,
        "covered_share": f.covered_share,
        "readable_share": f.readable_share,
    }


def _covered(f: FunctionStats | None) -> float | None:
    return None if f is None else f.covered_share


def _readable(f: FunctionStats | None) -> float | None:
    return None if f is None else f.readable_share
