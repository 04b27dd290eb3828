"""Reading a module's text for attach: the statements of function bodies, line
starts, identifiers."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from ..ptx.reader import PtxFunction

IDENT = re.compile(r"(?<![\w$%.])([A-Za-z_$%][\w$]*)")
LABEL_AT = re.compile(r"(?:[A-Za-z][\w$]*|[_$%][\w$]+)\s*:(?!:)")


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
class Stmt:
    """A statement of a function body: ``kind`` "instr" or "directive"."""

    start: int
    end: int
    text: str
    kind: str  # "instr" or "directive"


@dataclass
class Func:
    """A function of the module, its index and the statements of its body."""

    func: PtxFunction
    index: int
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


def scan_body(masked: str, start: int, end: int) -> list[Stmt]:
    """The statements of a function body: instructions and directives, without labels and braces."""
    out: list[Stmt] = []
    pos = start
    n = end
    while pos < n:
        c = masked[pos]
        if c.isspace() or c in "{};":
            pos += 1
            continue
        m = LABEL_AT.match(masked, pos)
        if m is not None and m.end() <= n:
            pos = m.end()
            continue
        if masked.startswith((".loc", ".file", "@@"), pos):
            stop = masked.find("\n", pos, n)
            stop = n if stop < 0 else stop
            out.append(Stmt(pos, stop, masked[pos:stop], "directive"))
            pos = stop
            continue
        stop = _statement_end(masked, pos, n)
        text = masked[pos:stop]
        out.append(Stmt(pos, stop + 1, text, "directive" if c == "." else "instr"))
        pos = stop + 1
    return out


def _statement_end(masked: str, pos: int, end: int) -> int:
    """Offset of the ``;`` ending the statement at ``pos`` (strings skipped)."""
    i = pos
    while i < end:
        c = masked[i]
        if c == ";":
            return i
        if c == '"':
            close = masked.find('"', i + 1, end)
            i = end if close < 0 else close + 1
            continue
        i += 1
    return end


def identifiers(masked: str) -> set[str]:
    """Every identifier in ``masked`` (comments blanked)."""
    return {m.group(1) for m in IDENT.finditer(masked)}
