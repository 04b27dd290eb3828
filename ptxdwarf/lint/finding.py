"""One lint finding: which rule, how bad, where."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from .rules import SEVERITY_RANK

__all__ = ["Finding", "sort_key"]


@dataclass(frozen=True)
class Finding:
    """One problem: which rule, how bad, where (PTX ``file:line``), and the DIE."""

    rule: str
    severity: str
    message: str
    where: str
    die: str | None = None
    section: str | None = None
    offset: int | None = None

    def __str__(self) -> str:
        text = f"{self.where}: {self.severity}[{self.rule}]: {self.message}"
        if self.die:
            text += f" ({self.die})"
        elif self.section is not None and self.offset is not None:
            text += f" ({self.section}+0x{self.offset:x})"
        return text

    @property
    def line(self) -> int | None:
        """The line :attr:`where` names, if it names one."""
        m = _LINE.search(self.where)
        return int(m.group(1)) if m else None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_LINE = re.compile(r":(\d+)$")


def sort_key(f: Finding) -> tuple[int, int, str]:
    """Findings are listed by line, errors before warnings, then by rule."""
    return (f.line or 0, SEVERITY_RANK.get(f.severity, 2), f.rule)
