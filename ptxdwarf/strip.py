"""``strip``: remove the debug information of a PTX module, or all of it but the line table."""

from __future__ import annotations

import re

from .ptx.edits import TextEdits
from .ptx.reader import parse_ptx
from .ptx.statements import line_directive_spans, line_directives

__all__ = ["strip"]

_FUNCTION_NAME = re.compile(r"\bfunction_name\b")
_DEBUG_ITEM = re.compile(r"[ \t]*,[ \t]*debug\b")


def strip(text: str, *, keep_lines: bool = False, filename: str = "<ptx>") -> str:
    """``text`` without its debug information: the DWARF sections (``.section .debug_*``
    blocks and ``@@DWARF`` lines), ``debug`` in ``.target``, and unless ``keep_lines`` the
    ``.loc`` and ``.file`` directives. Nothing else changes.

    With ``keep_lines`` ptxas optimises the code and, with ``-lineinfo``, still writes a
    line table from the ``.loc`` directives; ``.debug_str`` stays when a ``.loc`` names an
    inlined function by one of its labels (``function_name $L__info_string0``: ptxas
    fails on the label otherwise).
    Raises :class:`~ptxdwarf.errors.PtxSyntaxError` when the text is not PTX ptxdwarf can read.
    """
    from .ptx.debug import edit_debug_sections

    module = parse_ptx(text, filename)
    edits = TextEdits(text, where=filename)
    if module.has_debug_target and module.target_span is not None:
        start, end = module.target_span
        m = _DEBUG_ITEM.search(text, start, end)
        if m is not None:
            edits.delete(m.start(), m.end())
    masked = module.masked
    keep: tuple[str, ...] = ()
    if not keep_lines:
        for start, end in line_directive_spans(masked):
            edits.delete(start, end)
    elif any(_FUNCTION_NAME.search(m.group()) for m in line_directives(masked)):
        keep = (".debug_str",)
    edit_debug_sections(edits, module, {}, keep=keep)
    return edits.apply()
