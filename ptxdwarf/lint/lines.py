"""The ``.loc`` directives: file numbers ``.file`` declares, and the inline form ptxas takes
(quirks loc-file-undeclared and inline-loc)."""

from __future__ import annotations

import re

from ..ptx.lexer import LineIndex
from ..ptx.statements import FUNCTION_NAME, INLINED_AT, LOC
from .context import LintContext

__all__ = ["check_locs"]


class _LineOf:
    """The 1-based line of an offset, counted only when a finding needs it."""

    __slots__ = ("lines", "offset")

    def __init__(self, lines: LineIndex, offset: int) -> None:
        self.lines, self.offset = lines, offset

    def __int__(self) -> int:
        return self.lines.line(self.offset)


def check_locs(ctx: LintContext) -> None:
    """loc-file-undeclared, inline-loc."""
    module = ctx.module
    text = module.text
    if ".loc" not in text:
        return
    declared = {f.index for f in module.files}
    found_lines = ctx.loc_lines
    str_labels = ctx.images[".debug_str"].labels if ".debug_str" in ctx.images else {}
    reported_files: set[int] = set()
    used: set[tuple[int, int, int]] = set()  # locations of the .loc directives so far, in text order
    inlining = "inlined_at" in module.masked  # else no .loc has an inlined_at to check against those used
    for found in found_lines:
        directive = found.group()
        m = LOC.match(directive)
        if m is None:
            continue
        file = int(m.group(1))
        if file not in declared and file not in reported_files:
            reported_files.add(file)
            ctx.add(
                "loc-file-undeclared",
                f".loc {file} ...: no .file {file} declares that file; ptxas takes it, and the line table's "
                "rows then name a file its table lacks (a debugger shows no source)",
                line=module.lines.line(found.start()),
            )
        if not inlining:
            continue
        inlined = INLINED_AT.search(directive)
        if inlined is not None:
            _check_inlined(ctx, directive, inlined, used, str_labels, _LineOf(module.lines, found.start()))
        used.add((file, int(m.group(2)), int(m.group(3) or 0)))


def _check_inlined(
    ctx: LintContext,
    loc: str,
    inlined: re.Match[str],
    used: set[tuple[int, int, int]],
    str_labels: dict[str, int],
    line: _LineOf,
) -> None:
    name = FUNCTION_NAME.search(loc)
    if name is None:
        ctx.add(
            "inline-loc",
            'inlined_at without function_name: ptxas reads it as a syntax error ("Parsing error near '
            "'inlined_at'\")",
            line=int(line),
        )
        return
    site = (int(inlined.group(1)), int(inlined.group(2)), int(inlined.group(3) or 0))
    if site not in used:
        ctx.add(
            "inline-loc",
            f"inlined_at {site[0]} {site[1]} {site[2]}: no preceding .loc used that location; "
            "ptxas: 'Source location ... used in inlined_at directive must be used in a preceding .loc directive'",
            line=int(line),
        )
    label = name.group(1)
    if label not in str_labels:
        where = next((n for n, img in ctx.images.items() if label in img.labels), None)
        what = (
            f"is defined in {where}, not .debug_str (ptxas -c: fatal 'reference to deleted symbol')"
            if where is not None
            else "is not a label of .debug_str (ptxas: 'Unresolved label ... used in function_name attribute')"
        )
        ctx.add("inline-loc", f"function_name {label} {what}", line=int(line))
