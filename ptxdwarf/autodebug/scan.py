"""Reading a module's text for attach: functions and identifiers (the statements of a
body come from :mod:`ptxdwarf.ptx.statements`, the patterns from :mod:`ptxdwarf.ptx.lexer`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ptx.lexer import NAME, NAME_CHAR
from ..ptx.module import PtxFunction
from ..ptx.statements import Stmt

IDENT = re.compile(rf"(?<!{NAME_CHAR})({NAME})")
_IDENT_TAIL = re.compile(r"[\w$]*")
_IDENT_BEFORE = re.compile(NAME_CHAR)


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
