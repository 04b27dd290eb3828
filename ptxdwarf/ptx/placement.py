"""Where ptxas ``-g`` places a function's code labels, where that is not where they stand
(measured; see the quirk registry, :mod:`ptxdwarf.cuda.quirks`)."""

from __future__ import annotations

import re

from .reader import PtxFunction, mask_comments
from .statements import scan_body

__all__ = ["first_instruction", "first_label_at_zero"]

_LOC = re.compile(r"(?<![\w$.])\.loc\b")
_BRANCH = re.compile(r"(?:@!?[%\w$]+\s+)?(?:bra|brx)\b")


def first_label_at_zero(text: str, function: PtxFunction) -> str | None:
    """The label of ``function`` (in the module ``text``) that ptxas places at offset 0
    though code precedes it (quirk first-label-at-zero), or None: the function's first
    label, when an instruction precedes it and another follows it, no branch (``bra``,
    ``brx.idx``) precedes it, and the function has line information (``.loc``)."""
    if function.body_start < 0 or not function.labels:
        return None
    body = mask_comments(text[function.body_start : function.body_end])
    if not _LOC.search(body):
        return None
    code_before = False
    first: str | None = None
    for stmt in scan_body(body, 0, len(body), labels=True):
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


def first_instruction(text: str, function: PtxFunction) -> int | None:
    """Offset in ``text`` of the first instruction of ``function``'s body, or None."""
    if function.body_start < 0:
        return None
    body = mask_comments(text[function.body_start : function.body_end])
    for stmt in scan_body(body, 0, len(body)):
        if stmt.kind == "instr":
            return function.body_start + stmt.start
    return None
