"""Debug info a module already has: finding it, and removing it for ``replace``."""

from __future__ import annotations

import re
from collections import Counter

from ..ptx.debug import edit_debug_sections
from ..ptx.edits import TextEdits
from ..ptx.lexer import directive_re
from ..ptx.module import PtxModule
from ..ptx.statements import line_directive_spans

_LOC = directive_re("loc")


def existing_debug(module: PtxModule, masked: str) -> tuple[str, int] | None:
    """(what, line) of the first piece of debug info in the module, or None.

    Empty debug sections (LLVM 19 writes ``.section .debug_loc { }`` into every module with a
    compile unit, even one that describes nothing) are no debug info, nor is ``.target ...,
    debug`` with nothing else: attach drops the one and keeps the other."""
    found: list[tuple[int, str]] = []
    for block in module.sections:
        if block.name.startswith(".debug_") and (block.image.data or block.image.relocs):
            found.append((block.line, f"a {block.name} section"))
    for f in module.files:
        found.append((f.line, f".file {f.index}"))
    m = _LOC.search(masked)
    if m is not None:
        found.append((module.lines.line(m.start()), ".loc directives"))
    if not found:
        return None
    if module.has_debug_target:
        found.append((module.target_line, ".target ... debug"))
    line, what = min(found)
    return what, line


def strip_debug(text: str, module: PtxModule, masked: str) -> str:
    """``text`` without debug sections, ``.loc``/``.file`` directives and attach's own labels."""
    edits = TextEdits(text, where=module.filename)
    directives = line_directive_spans(masked)
    for start, end in directives:
        edits.delete(start, end)
    edit_debug_sections(edits, module, {})
    # attach's own labels go where nothing uses them but the debug sections just removed
    sections = [(b.start, b.end) for b in module.sections if b.name.startswith(".debug_")]
    code = _blank(masked, sections + directives)
    uses = Counter(m.group() for m in re.finditer(r"\$\w+(?![\w$])", code))
    for m in re.finditer(r"(?m)^[ \t]*(\$L__ptxdwarf\w*_(?:begin|end)\d+)[ \t]*:[ \t]*$", code):
        if uses[m.group(1)] != 1:  # defined and used
            continue
        start, end = m.start(1), code.index(":", m.end(1)) + 1
        line_start = masked.rfind("\n", 0, start) + 1
        line_end = masked.find("\n", end)
        line_end = len(masked) if line_end < 0 else line_end
        if not masked[line_start:start].strip() and not masked[end:line_end].strip():
            start, end = line_start, min(line_end + 1, len(masked))  # the label is alone on its line
        edits.delete(start, end)
    return edits.apply()


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted disjoint ranges covering the same offsets as ``ranges``."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        elif end > start:
            out.append((start, end))
    return out


def _blank(text: str, ranges: list[tuple[int, int]]) -> str:
    """``text`` with spaces over ``ranges``."""
    pieces: list[str] = []
    pos = 0
    for start, end in _union(ranges):
        pieces.append(text[pos:start])
        pieces.append(" " * (end - start))
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)
