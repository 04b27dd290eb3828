"""The statements of a PTX function body, in order: instructions, directives and labels."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from .._native import twin
from .lexer import LABEL_AT, NAME

__all__ = [
    "FUNCTION_NAME",
    "INLINED_AT",
    "LOC",
    "BodyStatements",
    "LocDirective",
    "Stmt",
    "instruction_locs",
    "line_directive_spans",
    "line_directives",
    "register_spans",
    "register_uses",
    "scan_body",
]

#: A ``.loc`` directive's file, line and column (a statement's text, from its start).
LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)(?:\s+(\d+))?")
#: The call site of an inlined ``.loc``: ``inlined_at FILE LINE [COLUMN]``.
INLINED_AT = re.compile(r"\binlined_at\s+(\d+)\s+(\d+)(?:\s+(\d+))?")
#: The inlined function's name of a ``.loc``: ``function_name LABEL`` (a label of ``.debug_str``).
FUNCTION_NAME = re.compile(r"\bfunction_name\s+([^\s,]+)")
#: One statement after the blanks, braces and ``;`` before it: a label definition, a
#: directive that ends with its line (``.loc``, ``.file``, ``@@``), or a statement up to
#: its ``;`` (strings skipped; up to the end when no ``;`` or closing quote follows).
_LOC_TO_LINE_END = re.compile(r"\.loc\b[^\n]*")
_LOC_OR_FILE_TO_LINE_END = re.compile(r"\.(?:loc|file)\b[^\n]*")
_STATEMENT = re.compile(
    r"[\s{};]*((?P<label>" + LABEL_AT.pattern + r')|(?P<line>(?:\.loc|\.file|@@)[^\n]*)|(?:[^;"]+|"[^"]*")*)'
)


@dataclass(slots=True)
class Stmt:
    """A statement of a function body: ``kind`` "instr", "directive" or "label" (``text`` is
    then the label's name)."""

    start: int
    end: int
    text: str
    kind: str


def scan_body(
    masked: str, start: int, end: int, *, labels: bool = False, until: int | None = None
) -> list[Stmt]:
    """The statements of a function body (``masked``: the module's text with comments
    blanked; ``end``: the body's closing brace, or the end of ``masked``): instructions and directives, and with ``labels``
    the label definitions; no braces. With ``until``, only those up to the first that ends
    at or after it: a scan from where that one ends finds the rest."""
    return _split(Stmt, masked, start, end, labels, until)


@twin("scan")
def _split(
    stmt: type[Stmt], masked: str, start: int, end: int, labels: bool, until: int | None
) -> list[Stmt]:
    """:func:`scan_body`, each statement made by ``stmt``. Its native twin is in
    ``ptxdwarf/_native/scan.c``."""
    out: list[Stmt] = []
    append = out.append
    match = _STATEMENT.match
    pos = start
    stop_at = end if until is None else min(until, end)
    while pos < stop_at:
        m = match(masked, pos, end)
        assert m is not None  # it matches the empty string
        first, stop = m.span(1)
        if first >= end:
            break
        if m.group("label") is not None:
            if labels:
                append(stmt(first, stop, masked[first : stop - 1].rstrip(), "label"))
            pos = stop
        elif m.group("line") is not None:
            append(stmt(first, stop, masked[first:stop], "directive"))
            pos = stop
        else:
            if stop < end and masked[stop] != ";":
                stop = end  # a quote that no other closes
            append(
                stmt(first, stop + 1, masked[first:stop], "directive" if masked[first] == "." else "instr")
            )
            pos = stop + 1
    return out


class BodyStatements:
    """The statements of one function body, labels included (:func:`scan_body`), split as far
    as they are asked for and kept, so that the rules that read them split them once."""

    __slots__ = ("_end", "_masked", "_pos", "_split")

    def __init__(self, masked: str, start: int, end: int) -> None:
        self._masked = masked
        self._end = end
        self._pos = start
        self._split: list[Stmt] = []

    def head(self, until: int) -> list[Stmt]:
        """The statements split so far, at least up to the first that ends at or after
        ``until``."""
        if self._pos < min(until, self._end):
            more = scan_body(self._masked, self._pos, self._end, labels=True, until=until)
            self._split += more
            # A scan that stops short of ``until`` has reached the body's end.
            self._pos = more[-1].end if more and more[-1].end >= until else self._end
        return self._split

    @property
    def all(self) -> list[Stmt]:
        """Every statement of the body."""
        return self.head(self._end)


class LocDirective(NamedTuple):
    """What one ``.loc`` says: file number, line, column (0 when not given), the label of
    ``.debug_str`` that names the inlined function (``function_name``) and the call site
    (``inlined_at FILE LINE COLUMN``)."""

    file: int
    line: int
    column: int
    function_name: str | None = None
    inlined_at: tuple[int, int, int] | None = None

    @classmethod
    def read(cls, text: str) -> LocDirective | None:
        """The ``.loc`` directive ``text`` starts with; None if it is not one."""
        m = LOC.match(text)
        if m is None:
            return None
        name = FUNCTION_NAME.search(text)
        at = INLINED_AT.search(text)
        return cls(
            int(m.group(1)),
            int(m.group(2)),
            int(m.group(3) or 0),
            name.group(1) if name else None,
            (int(at.group(1)), int(at.group(2)), int(at.group(3) or 0)) if at else None,
        )


def instruction_locs(masked: str, start: int, end: int) -> tuple[list[Stmt], list[tuple[Stmt, Stmt | None]]]:
    """The ``.loc`` directives of the function body ``masked[start:end]`` (comment-masked
    text), and each instruction with the one that governs it: the last before it in the body
    (None before the first)."""
    locs: list[Stmt] = []
    instructions: list[tuple[Stmt, Stmt | None]] = []
    for stmt in scan_body(masked, start, end):
        if stmt.kind == "instr":
            instructions.append((stmt, locs[-1] if locs else None))
        elif LOC.match(stmt.text) is not None:
            locs.append(stmt)
    return locs, instructions


def line_directives(text: str, *, files: bool = False) -> Iterator[re.Match[str]]:
    """The ``.loc`` directives (with ``files``, the ``.file`` ones too) of comment-masked
    ``text`` that begin a statement, each to the end of its line: at a line's start after
    blanks, or after the ``;``, brace or label colon that ends what comes before it on the
    line (ptxas reads ``mov.u32 %r1, 1; .loc 1 4 0``)."""
    # A search for ".loc" skips ahead quickly; one anchored at statement starts tries every character.
    for m in (_LOC_OR_FILE_TO_LINE_END if files else _LOC_TO_LINE_END).finditer(text):
        i = m.start() - 1
        while i >= 0 and text[i] in " \t":
            i -= 1
        if i < 0 or text[i] in "\n;{}:":
            yield m


def line_directive_spans(masked: str) -> list[tuple[int, int]]:
    """What removing the ``.loc`` and ``.file`` directives :func:`line_directives` finds takes
    out of ``masked``: the whole line of one alone on its line, else the directive and the
    blanks before it."""
    spans = []
    for m in line_directives(masked, files=True):
        start, end = m.span()
        line_start = masked.rfind("\n", 0, start) + 1
        if not masked[line_start:start].strip(" \t"):
            start, end = line_start, min(end + 1, len(masked))
        else:
            while masked[start - 1] in " \t":
                start -= 1
        spans.append((start, end))
    return spans


_REG_DECLARATION = re.compile(r"\.reg\b[^;]*;")
_NAME = re.compile(NAME)


def used_names(masked: str, start: int, end: int) -> frozenset[str]:
    """The identifiers the statements between ``start`` and ``end`` of ``masked`` (text with
    comments blanked) name, ``.reg`` declarations left out: the registers the code uses
    (ptxas ``-g`` maps no other, quirk ``register-unused``). Linear in the text."""
    code = _REG_DECLARATION.sub(";", masked[start:end])
    return frozenset(_NAME.findall(code))


@twin("scan")
def register_spans(masked: str, start: int, end: int) -> tuple[dict[str, tuple[int, int]], int, int]:
    """Of the statements between ``start`` and ``end`` (``.reg`` declarations left out): each
    ``%`` name's first and last place, counted in ``%`` names from the start; how many ``%``
    names they hold in all (the register operands, special registers included); and how many
    branches and calls (``bra``, ``brx``, ``call``). Linear in the text. Its native twin is in
    ``ptxdwarf/_native/scan.c``."""
    code = _REG_DECLARATION.sub(";", masked[start:end])
    spans: dict[str, tuple[int, int]] = {}
    count = jumps = 0
    for name in _NAME.findall(code):
        if name[0] != "%":
            jumps += name in _JUMPS
            continue
        first = spans.get(name)
        spans[name] = (count, count) if first is None else (first[0], count)
        count += 1
    return spans, count, jumps


@twin("scan")
def register_uses(masked: str, start: int, end: int) -> tuple[str, int, int]:
    """The ``%`` names :func:`register_spans` finds, in the order of their first use, each
    between two NUL characters (``"\\0%r1\\0%rd2\\0"``: a name is used when ``"\\0" + name +
    "\\0"`` is in it), and its two counts: one string where a large module has hundreds of
    thousands of spans. Its native twin is in ``ptxdwarf/_native/scan.c``."""
    spans, count, jumps = register_spans(masked, start, end)
    return "".join(f"\0{name}" for name in spans) + "\0", count, jumps


_JUMPS = frozenset({"bra", "brx", "call"})
