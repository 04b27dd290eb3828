"""Reading a module's text for attach: functions, line starts, identifiers (the
statements of a body come from :mod:`ptxdwarf.ptx.statements`)."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from ..ptx.module import PtxFunction
from ..ptx.statements import Stmt

IDENT = re.compile(r"(?<![\w$%.])([A-Za-z_$%][\w$]*)")
_IDENT_TAIL = re.compile(r"[\w$]*")
_IDENT_BEFORE = re.compile(r"[\w$%.]")


def directive_re(*names: str) -> re.Pattern[str]:
    """The directives ``.name`` (each of ``names``), not within another token."""
    # The dot comes before the look-behind: a pattern that starts with a look-behind is
    # tried at every offset of the text.
    return re.compile(r"\.(?<![\w$.]\.)(?:" + "|".join(map(re.escape, names)) + r")\b")


def find_name(text: str, name: str) -> int:
    """Offset of ``name`` as a whole identifier in ``text``, or -1."""
    at = text.find(name)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(name)] if at + len(name) < len(text) else " "
        if not (before.isalnum() or before in "_$%") and not (after.isalnum() or after in "_$"):
            return at
        at = text.find(name, at + 1)
    return -1


@dataclass
class Func:
    """A function of the module, its index and the statements of its body."""

    func: PtxFunction
    index: int
    renamed: dict[str, str] = field(default_factory=dict)
    """Its registers' new names (``rename_registers``)."""
    statements: list[Stmt] = field(default_factory=list)
    instrs: list[Stmt] = field(default_factory=list)


class Lines:
    """Line starts of a text, for offset -> (line index, column)."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        pos = text.find("\n")
        while pos >= 0:
            self.starts.append(pos + 1)
            pos = text.find("\n", pos + 1)

    def at(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.starts, offset) - 1
        return i, offset - self.starts[i]


def identifiers(masked: str) -> set[str]:
    """Every identifier in ``masked`` (comments blanked)."""
    return {m.group(1) for m in IDENT.finditer(masked)}


def identifiers_starting(masked: str, prefix: str) -> set[str]:
    """The identifiers in ``masked`` that start with ``prefix`` (itself the start of an
    identifier): those of :func:`identifiers`, found from the occurrences of ``prefix``."""
    found: set[str] = set()
    at = masked.find(prefix)
    while at >= 0:
        if not at or _IDENT_BEFORE.match(masked, at - 1) is None:
            tail = _IDENT_TAIL.match(masked, at + len(prefix))
            assert tail is not None  # [\w$]* matches anywhere
            found.add(masked[at : tail.end()])
        at = masked.find(prefix, at + 1)
    return found
