"""The statements of a PTX function body, in order: instructions, directives and labels."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["INLINED_AT", "LABEL_AT", "LOC", "Stmt", "scan_body"]

LABEL_AT = re.compile(r"(?:[A-Za-z][\w$]*|[_$%][\w$]+)\s*:(?!:)")
#: A ``.loc`` directive's file, line and column (a statement's text, from its start).
LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)(?:\s+(\d+))?")
#: The call site of an inlined ``.loc``: ``inlined_at FILE LINE [COLUMN]``.
INLINED_AT = re.compile(r"\binlined_at\s+(\d+)\s+(\d+)(?:\s+(\d+))?")
_SKIP = re.compile(r"[\s{};]*")
_STATEMENT_STOP = re.compile(r'[;"]')


@dataclass
class Stmt:
    """A statement of a function body: ``kind`` "instr", "directive" or "label" (``text`` is
    then the label's name)."""

    start: int
    end: int
    text: str
    kind: str


def scan_body(masked: str, start: int, end: int, *, labels: bool = False) -> list[Stmt]:
    """The statements of a function body (``masked``: the module's text with comments
    blanked): instructions and directives, and with ``labels`` the label definitions; no
    braces."""
    out: list[Stmt] = []
    pos = start
    n = end
    while pos < n:
        skip = _SKIP.match(masked, pos, n)
        assert skip is not None  # it matches the empty string
        pos = skip.end()
        if pos >= n:
            break
        c = masked[pos]
        m = LABEL_AT.match(masked, pos)
        if m is not None and m.end() <= n:
            if labels:
                out.append(Stmt(pos, m.end(), masked[pos : m.end() - 1].rstrip(), "label"))
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
    while True:
        m = _STATEMENT_STOP.search(masked, i, end)
        if m is None:
            return end
        if m.group() == ";":
            return m.start()
        close = masked.find('"', m.start() + 1, end)
        if close < 0:
            return end
        i = close + 1


_REG_DECLARATION = re.compile(r"\.reg\b[^;]*;")
_NAME = re.compile(r"[%A-Za-z_$][\w$]*")


def used_names(masked: str, start: int, end: int) -> frozenset[str]:
    """The identifiers the statements between ``start`` and ``end`` of ``masked`` (text with
    comments blanked) name, ``.reg`` declarations left out: the registers the code uses
    (ptxas ``-g`` maps no other, quirk ``register-unused``). Linear in the text."""
    code = _REG_DECLARATION.sub(";", masked[start:end])
    return frozenset(_NAME.findall(code))
