"""Reading the ``@@DWARF`` form of debug sections (PTX ISA before 2.0): each
``@@DWARF .section NAME`` line and the ``@@DWARF`` directive lines after it, as a section
block."""

from __future__ import annotations

import re

from ..dwarf.image import SectionImage
from ..errors import PtxSyntaxError
from .lexer import SYMBOL, LineIndex
from .module import SectionBlock
from .sections import SectionParser

__all__ = ["dwarf_line_blocks"]

#: A line of the ``@@DWARF`` form of debug sections (PTX ISA 1.x): the marker, then one
#: ``.section``, ``.byte``, ``.4byte`` or ``.quad`` directive.
_DWARF_LINE = re.compile(r"(?m)^([ \t]*@@DWARF\b)([^\n]*)")
_DWARF_SECTION = re.compile(r"\s*\.section\s+(" + SYMBOL + r")\s*(?:,[^\n]*)?$")


def dwarf_line_blocks(masked: str, filename: str, lines: LineIndex) -> tuple[str, list[SectionBlock]]:
    """The sections written as ``@@DWARF`` lines in ``masked`` (comment-masked text, whose
    ``lines`` these are), and
    that text with those lines blanked (so the module scan does not see their ``.section``).

    Each ``@@DWARF .section NAME, ...`` line starts a block; the ``@@DWARF`` lines after it,
    up to the next such line, are its directives, read like a ``.section`` body.
    """
    groups: list[tuple[str, int, int, list[re.Match[str]]]] = []
    for m in _DWARF_LINE.finditer(masked):
        line = lines.line(m.start())
        head = _DWARF_SECTION.match(m.group(2))
        if head is not None:
            groups.append((head.group(1), m.start(), line, []))
        elif not groups:
            raise PtxSyntaxError("@@DWARF data before any @@DWARF .section", filename=filename, line=line)
        else:
            groups[-1][3].append(m)
    blocks = []
    for name, start, first_line, directives in groups:
        head_end = masked.find("\n", start)
        head_end = len(masked) if head_end < 0 else head_end
        end = directives[-1].end() if directives else head_end
        body = masked[head_end:end]
        # The body keeps its lines (for line numbers): markers become spaces, other lines blanks.
        kept = {m.start() - head_end: m for m in directives}
        parts = []
        offset = 0
        for raw in body.split("\n"):
            line_match = kept.get(offset)
            parts.append(
                " " * len(line_match.group(1)) + line_match.group(2) if line_match is not None else ""
            )
            offset += len(raw) + 1
        end_line = lines.line(end)
        blocks.append(_line_block(name, start, end, first_line, end_line, "\n".join(parts), filename))
    blanked = _DWARF_LINE.sub(lambda m: " " * (m.end() - m.start()), masked)
    return blanked, blocks


def _line_block(
    name: str, start: int, end: int, line: int, end_line: int, body: str, filename: str
) -> SectionBlock:
    block = SectionBlock(name, start, end, line, end_line, None, False, dwarf_lines=True)

    def load() -> SectionImage:
        parser = SectionParser(name, filename)
        image = parser.parse_lines(body, line)
        block._text = parser.text
        return image

    block.loader = load
    return block
