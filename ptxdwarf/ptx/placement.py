"""Where ptxas ``-g`` places a function's code labels, where that is not where they stand
(measured; see the quirk registry, :mod:`ptxdwarf.cuda.quirks`)."""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from typing import NamedTuple

from .lexer import IDENTIFIER, NAME
from .module import PtxFunction, PtxModule
from .statements import INLINED_AT, LOC, BodyStatements, Stmt
from .symbols import symbol_table

__all__ = [
    "Anchor",
    "LocRow",
    "first_instruction",
    "first_label_anchors",
    "first_label_at_zero",
    "labels_dropped",
    "line_rows",
]

_LOC = re.compile(r"(?<![\w$.])\.loc\b")
_LINE_LABEL = re.compile(rf"^[ \t]*(?:{IDENTIFIER})[ \t]*:(?!:)", re.MULTILINE)
_BRANCH = re.compile(rf"(?:@!?{NAME}\s+)?(?:bra|brx)\b")


def _statements(masked: str, function: PtxFunction, body: BodyStatements | None) -> BodyStatements:
    """``body``, the statements of ``function`` a caller shares between rules, or new ones."""
    return body if body is not None else BodyStatements(masked, function.body_start, function.body_end)


def first_label_at_zero(
    masked: str, function: PtxFunction, *, line_info: bool | None = None, body: BodyStatements | None = None
) -> str | None:
    """The label of ``function`` (in ``masked``, its module's comment-masked text,
    :attr:`PtxModule.masked <ptxdwarf.ptx.module.PtxModule.masked>`) that ptxas places at offset 0
    though code precedes it (quirk first-label-at-zero), or None: the function's first
    label, when an instruction precedes it and another follows it, no branch (``bra``,
    ``brx.idx``) precedes it, and the function has line information (``.loc``; ``line_info``
    True: it will have, written by the caller, as ``attach(..., lines=...)`` does; ``body``: its
    statements, when the caller shares them between rules)."""
    if function.body_start < 0 or not function.labels:
        return None
    start, end = function.body_start, function.body_end
    statements = _statements(masked, function, body)
    m = _LINE_LABEL.search(masked, start, end)
    if m is not None:
        # The common case, a label at the top of the body (nvcc's $L__func_begin), from the
        # statements up to the first line that starts with a label.
        for stmt in statements.head(m.end()):
            if stmt.kind == "instr" or stmt.start >= m.end():
                break
            if stmt.kind == "label":
                return None
    if not line_info and not _LOC.search(masked, start, end):
        return None
    code_before = False
    first: str | None = None
    for stmt in statements.all:
        if stmt.kind == "label":
            if first is None:
                if not code_before:
                    return None
                first = stmt.text
        elif stmt.kind == "instr":
            if first is not None:
                return first
            if _BRANCH.match(stmt.text):
                return None
            code_before = True
    return None


def first_instruction(
    masked: str, function: PtxFunction, *, body: BodyStatements | None = None
) -> int | None:
    """Offset of the first instruction of ``function``'s body in ``masked`` (its module's
    comment-masked text), or None (``body``: its statements, when the caller shares them)."""
    if function.body_start < 0:
        return None
    for stmt in _statements(masked, function, body).all:
        if stmt.kind == "instr":
            return stmt.start
    return None


class Anchor(NamedTuple):
    """A label to put before a function's first instruction so that ptxas places the label
    after it right (quirk first-label-at-zero)."""

    function: PtxFunction
    label: str
    """The label ptxas would place at offset 0, which becomes the function's second."""
    at: int
    """The offset of the first instruction in the module's text."""
    name: str
    """The new label (``$L__ptxdwarf_topN``), declared nowhere in the module."""


def first_label_anchors(
    module: PtxModule,
    functions: Iterable[PtxFunction],
    used: Container[str],
    taken: set[str],
    *,
    line_info: bool | None = None,
) -> list[Anchor]:
    """The anchors of those of ``functions`` whose first label is in ``used`` (the labels the
    debug sections refer to) and is one ptxas places at offset 0 (:func:`first_label_at_zero`,
    ``line_info`` as there); each new name is kept out of ``taken`` and added to it."""
    masked = module.masked
    table = symbol_table(module)
    anchors = []
    for f in functions:
        body = module.kept_statements.get(id(f)) or BodyStatements(masked, f.body_start, f.body_end)
        label = first_label_at_zero(masked, f, line_info=line_info, body=body)
        if label is None or label not in used:
            continue
        at = first_instruction(masked, f, body=body)
        if at is not None:
            anchors.append(Anchor(f, label, at, table.fresh("$L__ptxdwarf_top", taken)))
    return anchors


class LocRow(NamedTuple):
    """A line-table row a function's ``.loc`` directives make: the offset of the first
    ``.loc`` that gives it, and of each instruction those ``.loc`` directives govern."""

    at: int
    code: tuple[int, ...]


def line_rows(
    masked: str, function: PtxFunction, *, body: BodyStatements | None = None
) -> dict[tuple[int, int], LocRow]:
    """The (file, line) rows ptxas ``-g`` makes for ``function``'s ``.loc`` directives
    (offsets in ``masked``, its module's comment-masked text): a ``.loc`` that an instruction follows before the next ``.loc``,
    or a label that code follows (line 0 excepted: ptxas folds it into the row before), and
    the call site an ``inlined_at F L`` names. Measured on the corpus (403 functions of nvcc,
    clang, numba, Triton, LLVM's tests, nvopencc): every row of the cubin is one of these,
    and in one function lines whose code compiled to nothing have none. ``body``: the function's
    statements, when the caller shares them between rules."""
    if function.body_start < 0:
        return {}
    first: dict[tuple[int, int], int] = {}
    code: dict[tuple[int, int], list[int]] = {}
    pending: tuple[tuple[int, int], int] | None = None
    at_labels: list[tuple[tuple[int, int], int]] = []  # .loc rows a label holds until code follows
    current: tuple[int, int] | None = None  # the line the instructions now belong to
    for stmt in _statements(masked, function, body).all:
        if stmt.kind == "directive":
            m = LOC.match(stmt.text)
            if m is not None:
                at = stmt.start
                pending = ((int(m.group(1)), int(m.group(2))), at)
                inlined = INLINED_AT.search(stmt.text)
                if inlined is not None:
                    first.setdefault((int(inlined.group(1)), int(inlined.group(2))), at)
        elif stmt.kind == "label":
            if pending is not None:
                at_labels.append(pending)
                pending = None
        else:
            if pending is not None:
                at_labels.append(pending)
                current = pending[0] if pending[0][1] else current
                pending = None
            for key, at in at_labels:
                if key[1]:
                    first.setdefault(key, at)
            at_labels.clear()
            if current is not None:
                code.setdefault(current, []).append(stmt.start)
    return {key: LocRow(at, tuple(code.get(key, ()))) for key, at in first.items()}


_JUMP = re.compile(rf"(@!?{NAME}\s+)?bra(?:\.uni)?\s+({NAME})")


#: An instruction after which a new block starts (with the branches of _JUMP; group 1), or a
#: barrier or warp-synchronous one, which keeps the label of the block that holds it (group 2).
_ENDS_OR_SYNC = re.compile(rf"(?:@!?{NAME}\s+)?(?:(call|ret|exit)\b|(bar|barrier|shfl|vote|match)\.)")


class _Token(NamedTuple):
    """A label (``label`` set) or an instruction (its line, whether a block ends after it,
    the label it branches to, whether it is a barrier or warp-synchronous) of a function body."""

    label: str | None
    line: int | None = None
    ends_block: bool = False
    target: str | None = None
    sync: bool = False


def labels_dropped(
    masked: str, function: PtxFunction, *, body: BodyStatements | None = None
) -> dict[str, str]:
    """The labels of ``function`` (in ``masked``, its module's comment-masked text) that ptxas drops (quirk label-at-line-zero), each with
    the label that makes it so, which ptxas moves to where the dropped one belonged: a label
    whose first instruction is at line 0 (or has no line yet: no ``.loc`` before it) is
    dropped when the block it starts (up to the next label, or the instruction after a
    branch, a call or a return) holds no barrier or warp-synchronous instruction and leads to
    a label not named before it (as a definition or a branch target) whose first instruction
    has a line other than 0: the next label, or the target of a branch in the block,
    whichever comes first. ``body``: the function's statements, when the caller shares them
    between rules."""
    if function.body_start < 0 or not function.labels:
        return {}
    tokens, first_line = _tokens(_statements(masked, function, body).all)
    dropped: dict[str, str] = {}
    named: set[str] = set()
    for i, token in enumerate(tokens):
        if token.label is None:
            if token.target is not None:
                named.add(token.target)
            continue
        named.add(token.label)
        if token.label not in first_line or first_line[token.label]:
            continue
        cause = _leads_to_a_line(tokens, i + 1, named, first_line)
        if cause is not None:
            dropped[token.label] = cause
    return dropped


def _tokens(statements: list[Stmt]) -> tuple[list[_Token], dict[str, int | None]]:
    """The labels and instructions of a function body's ``statements``, and each label's first line."""
    tokens: list[_Token] = []
    line: int | None = None
    first_line: dict[str, int | None] = {}
    pending: list[str] = []
    plain: dict[int | None, _Token] = {}  # the token of an instruction that does not branch, by line
    for stmt in statements:
        if stmt.kind == "label":
            tokens.append(_Token(stmt.text))
            pending.append(stmt.text)
        elif stmt.kind == "directive":
            m = LOC.match(stmt.text)
            if m is not None:
                line = int(m.group(2))
        else:
            m = _JUMP.match(stmt.text) if "bra" in stmt.text else None
            if m is not None:
                tokens.append(_Token(None, line, True, m.group(2)))
            elif (m := _ENDS_OR_SYNC.match(stmt.text)) is not None:
                tokens.append(_Token(None, line, m.group(1) is not None, sync=m.group(2) is not None))
            else:
                token = plain.get(line)
                if token is None:
                    token = plain[line] = _Token(None, line)
                tokens.append(token)
            for name in pending:
                first_line[name] = line
            pending = []
    return tokens, first_line


def _leads_to_a_line(
    tokens: list[_Token], start: int, named: set[str], first_line: dict[str, int | None]
) -> str | None:
    """The first label the block from ``tokens[start]`` leads to that was not named before
    and whose first instruction has a line other than 0, or None."""
    seen: set[str] = set()
    after_end = False
    for token in tokens[start:]:
        if token.label is None:
            if after_end or token.sync:
                return None  # the block is followed by code without a label, or holds a barrier
            after_end = token.ends_block
        target = token.label or token.target
        if target is not None and target not in named and target not in seen:
            seen.add(target)
            if first_line.get(target):
                return target
        if token.label is not None:
            return None
    return None
