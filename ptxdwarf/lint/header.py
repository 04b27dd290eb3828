"""Checks of the text around and inside the debug sections: the characters, ``.target``,
``.address_size``, ``.version``, ``.file``, repeated or producer-made sections, and
values ptxas reads wrongly or cannot parse."""

from __future__ import annotations

import re

from ..cuda.debuggable import not_debuggable
from ..cuda.ptxas import ADDRESS_SIZE_32_BY_DEFAULT
from ..cuda.quirks import quirk
from ..dwarf.constants import AT, TAG
from ..dwarf.image import SectionImage
from ..dwarf.model import DebugInfo
from ..ptx.module import PtxModule, SectionBlock
from ..ptx.statements import INLINED_AT, line_directives
from .context import LintContext
from .rules import ERROR, WARNING

__all__ = [
    "check_debug_target",
    "check_end",
    "check_files",
    "check_header",
    "check_not_debuggable",
    "check_section_form",
    "check_sections",
    "check_syntax",
    "check_text",
    "version_needs",
]

_ADDRESS_SIZE = re.compile(r"^[ \t]*\.address_size\b", re.MULTILINE)


def check_text(ctx: LintContext) -> None:
    """non-ascii: ptxas rejects a byte above 127 outside comments (quirk non-ascii), and 12.9 and
    13.0 in comments too (quirk non-ascii-comment)."""
    text = ctx.module.text
    if text.isascii():
        return
    masked = ctx.module.masked
    in_comments = quirk("non-ascii-comment").holds_for(ctx.ptxas_version)
    bad = [i for i, ch in enumerate(text) if ord(ch) > 127 and (in_comments or masked[i] == ch)]
    if not bad:
        return
    line = ctx.module.lines.line(bad[0])
    lines = {ctx.module.lines.line(i) for i in bad[:1000]}
    where = "anywhere, comments included" if in_comments else "outside comments"
    ctx.add(
        "non-ascii",
        f"{len(bad)} non-ASCII character(s) on {len(lines)}{'+' if len(bad) > 1000 else ''} line(s), first on "
        f"line {line}; ptxas{' ' + ctx.ptxas_version if ctx.ptxas_version else ''} rejects them {where} "
        "(write names as numbers, keep comments ASCII)",
        line=line,
    )


def check_end(ctx: LintContext) -> None:
    """trailing-nul: the text ends with NUL bytes, which ptxas 13.0 and later refuse (quirk
    trailing-nul)."""
    text = ctx.module.text
    end = len(text.rstrip("\0"))
    if end == len(text):
        return
    releases = ", ".join(quirk("trailing-nul").holds_on)
    who = f"ptxas {ctx.ptxas_version} refuses" if ctx.ptxas_version else f"ptxas {releases} refuse"
    ctx.add(
        "trailing-nul",
        f"the text ends with {len(text) - end} NUL byte(s) (NVRTC's C string end); {who} it "
        "('Unexpected EOF'): drop it",
        line=ctx.module.lines.line(end),
    )


def _has_info(ctx: LintContext) -> bool:
    return any(b.image.data for b in ctx.section_blocks.get(".debug_info", ()))


def check_header(ctx: LintContext) -> None:
    """debug-target-without-info, address-size, address-size-default."""
    module = ctx.module
    has_info = _has_info(ctx)
    debug_blocks = [b for b in module.sections if b.name.startswith(".debug_")]
    if module.has_debug_target and not debug_blocks:
        ctx.add(
            "debug-target-without-info",
            "the .target lists debug but there is no debug section (ptxas: 'Debug information not found in "
            "presence of .target debug')",
            line=module.target_line or None,
        )
    if not (debug_blocks and has_info):
        return
    if module.address_size == 32:
        m = _ADDRESS_SIZE.search(module.text)
        line = module.lines.line(m.start()) if m else None
        ctx.add(
            "address-size",
            ".address_size 32 with debug info: ptxas -g needs .address_size 64",
            line=line or module.version_line or None,
        )
    elif module.address_size is None:
        # Without .address_size the module is 64-bit for ptxas, except for sm_5x on CUDA 12. An
        # older .target says nothing of the architecture it is compiled for.
        old = next((t for t in module.target if t in ADDRESS_SIZE_32_BY_DEFAULT), None)
        if old is not None:
            ctx.add(
                "address-size-default",
                f"no .address_size in a module for {old}: ptxas of CUDA 12 takes it as 32-bit for {old} and "
                "refuses -g ('must match with .address_size of 32 bits'); write .address_size 64 after .target "
                "(PTX ISA 2.3 or later) or compile for sm_60 or later",
                line=module.target_line or module.version_line or None,
            )


_DATA_TAGS = frozenset({TAG.variable, TAG.formal_parameter})


def check_debug_target(ctx: LintContext, info: DebugInfo | None) -> None:
    """target-not-debug: DWARF that describes variables, in a module whose .target does not list
    debug: ptxas keeps .debug_info only under -g. Line-tables-only DWARF (no variables: Triton,
    -lineinfo producers) leaves debug out on purpose and gets no finding, nor does a fragment,
    whose .target is the module's it goes into."""
    module = ctx.module
    if module.has_debug_target or info is None or module.is_fragment:
        return
    described = next(
        (
            d
            for d in info.iter_dies()
            if d.tag in _DATA_TAGS and (d.attr(AT.location) or d.attr(AT.const_value))
        ),
        None,
    )
    if described is None:
        return
    fix = (
        "compile with -g, or write .target ..., debug"
        if (module.version or (0, 0)) >= (3, 0)
        else ("compile with -g (.target cannot list debug below .version 3.0)")
    )
    ctx.add(
        "target-not-debug",
        f".target {', '.join(module.target) or '(none)'} does not list debug, but .debug_info describes variables "
        f"({described.describe()}): without -g ptxas drops .debug_info and keeps only the line table; {fix}",
        line=module.target_line or None,
    )


def check_not_debuggable(ctx: LintContext) -> None:
    """not-debuggable: code ptxas cannot compile with -g, in a module with debug info."""
    module = ctx.module
    if not (module.has_debug_target or any(b.name.startswith(".debug_") for b in module.sections)):
        return
    for line, what in not_debuggable(module):
        ctx.add("not-debuggable", what, line=line)


def check_section_form(ctx: LintContext) -> None:
    """dwarf-lines-isa: ptxas takes ``@@DWARF`` lines only below PTX ISA 2.0, ``.section`` only from 2.0."""
    version = ctx.module.version
    if version is None:
        return
    old_isa = version < (2, 0)
    wrong = next((b for b in ctx.module.sections if b.dwarf_lines != old_isa), None)
    if wrong is None:
        return
    shown = f"{version[0]}.{version[1]}"
    if old_isa:
        message = (
            f'section {wrong.name} is a .section block in a .version {shown} module; ptxas: "Feature '
            "'.section directive' requires PTX ISA .version 2.0 or later\" (write @@DWARF lines, or raise .version)"
        )
    else:
        message = (
            f'section {wrong.name} is written as @@DWARF lines in a .version {shown} module; ptxas: "Deprecated '
            "feature: '@@DWARF directive' not supported as of PTX version 2.0\" (write a .section block)"
        )
    ctx.add("dwarf-lines-isa", message, line=wrong.line)


def check_files(ctx: LintContext) -> None:
    """file-two-strings, file-index."""
    module = ctx.module
    seen: dict[int, int] = {}
    for f in module.files:
        if f.directory is not None:
            ctx.add(
                "file-two-strings",
                f'.file {f.index} "{f.directory}" "{f.path}" has two strings; ptxas accepts only one path '
                f'(.file {f.index} "{f.full_path}")',
                line=f.line,
            )
        if f.index in seen:
            ctx.add(
                "file-index",
                f".file {f.index} given twice (first on line {seen[f.index]}); ptxas: 'Duplicate file index'",
                line=f.line,
                severity=ERROR,
            )
        else:
            seen[f.index] = f.line
    indices = sorted(seen)
    if indices and indices != list(range(1, len(indices) + 1)):
        expected = set(range(1, len(indices) + 1))
        wrong = [i for i in indices if i not in expected]
        first = min((seen[i] for i in wrong), default=module.files[0].line)
        ctx.add(
            "file-index",
            f".file indices {_ranges(indices)} are not 1..{len(indices)}: ptxas numbers its file table densely "
            "but keeps the .loc indices, so lines point at the wrong files",
            line=first,
        )


def check_sections(ctx: LintContext) -> None:
    """duplicate-section, producer-debug-line, producer-debug-frame, wide-value."""
    for name, blocks in ctx.section_blocks.items():
        for block in blocks[1:]:
            if name == ".debug_info":
                what = "ptxas makes it a second ELF section also named .debug_info"
                severity = ERROR
            elif name not in _OVERLAID:
                what = "ptxas silently drops this second block (its labels resolve to 0)"
                severity = WARNING
            else:
                overlap = _overlap(blocks[0].image, block.image)
                what = "ptxas lays it over the first block at offset 0"
                severity = WARNING
                if overlap == "differ":
                    what += (
                        " and, as they differ where they overlap, fails "
                        "('Internal error: overlapping non-identical data')"
                    )
                    severity = ERROR
                elif overlap == "labels":
                    what += (
                        " and fails ('Internal error: overlapping non-identical data') unless the labels that "
                        "differ between them lie at the same offset in their functions"
                    )
                else:
                    what += " (they agree where they overlap)"
            ctx.add(
                "duplicate-section",
                f"section {name} given again (first on line {blocks[0].line}): {what}; write one block",
                line=block.line,
                severity=severity,
            )
    for block in ctx.section_blocks.get(".debug_line", ()):
        if block.image.data or block.image.relocs:
            ctx.add(
                "producer-debug-line",
                "the producer's .debug_line is discarded by ptxas, which makes its own from .file/.loc",
                line=block.line,
            )
    for block in ctx.section_blocks.get(".debug_frame", ()):
        if block.image.data or block.image.relocs:
            ctx.add(
                "producer-debug-frame",
                "a non-empty .debug_frame from the producer makes ptxas fail ('Internal error: overlapping "
                "non-identical data'); leave it out",
                line=block.line,
            )
    for block in ctx.module.sections:
        image = block.image
        for off, value in image.wide_values.items():
            ctx.add(
                "wide-value",
                f".b64 {value:#x} in {block.name}: ptxas 13.0 keeps only the low 32 bits ({value & 0xFFFFFFFF:#x}); "
                "write it as two .b32 (low word first)",
                where=image.source(off),
                section=block.name,
                offset=off,
            )


_OVERLAID = frozenset(
    {".debug_loc", ".debug_ranges", ".debug_pubnames", ".debug_pubtypes", ".debug_aranges", ".debug_macinfo"}
)
"""Sections whose repeated blocks ptxas lays over each other at offset 0 (quirk duplicate-section)."""


def _overlap(first: SectionImage, other: SectionImage) -> str:
    """How two blocks laid over each other compare where they overlap: ``"equal"``,
    ``"differ"`` (a byte outside symbolic values), or ``"labels"`` (only symbolic values
    differ: ptxas compares each label's offset in its function, which only compiling tells)."""
    end = min(len(first.data), len(other.data))
    masked = bytearray(end)
    for image in (first, other):
        for r in image.relocs_in(0, end):
            masked[r.offset : r.offset + r.size] = b"\xff" * r.size
    for i in range(end):
        if not masked[i] and first.data[i] != other.data[i]:
            return "differ"
    a = {r.offset: (r.size, str(r.symbol)) for r in first.relocs_in(0, end)}
    b = {r.offset: (r.size, str(r.symbol)) for r in other.relocs_in(0, end)}
    return "equal" if a == b else "labels"


def _first_addend(block: SectionBlock) -> tuple[str, int] | None:
    addends = block.text.addends
    if not addends:
        return None
    text, offset = addends[0]
    return text, block.image.source_line(offset) or block.line


def version_needs(module: PtxModule) -> list[tuple[tuple[int, int], str, int]]:
    """What the module's debug text needs of the PTX ISA (quirk version-too-low): each
    (version, what needs it, line)."""
    needs: list[tuple[tuple[int, int], str, int]] = []
    if module.has_debug_target:
        needs.append(((3, 0), "a debug target (.target ..., debug)", module.target_line))
    inlined = (
        next(
            (m for m in line_directives(module.masked) if INLINED_AT.search(m.group())),
            None,
        )
        if "inlined_at" in module.text
        else None
    )
    if inlined is not None:
        needs.append(
            (
                (7, 0),
                "line information of inline functions (.loc ..., inlined_at)",
                module.lines.line(inlined.start()),
            )
        )
    for block in module.sections:
        if not block.name.startswith(".debug_"):
            continue
        text = block.text
        if text.labels:
            name, line = text.labels[0]
            more = len(text.labels) - 1
            others = f" and {more} more label{'s' if more > 1 else ''}" if more else ""
            needs.append(((7, 0), f"defining labels in a section ({name}:{others} in {block.name})", line))
        if text.differences:
            a, b, line = text.differences[0]
            needs.append(((7, 5), f"a label difference ({a}-{b} in {block.name})", line))
        if text.addends and module.version is not None and module.version < (3, 2):
            first = _first_addend(block)
            assert first is not None
            needs.append(((3, 2), f"label+N ({first[0]} in {block.name})", first[1]))
    return needs


def check_syntax(ctx: LintContext) -> None:
    """version-too-low, ptxas-syntax, info-label-difference: what the section text writes."""
    module = ctx.module
    for block in module.sections:
        if not block.name.startswith(".debug_"):
            continue
        text = block.text
        for what, line in text.syntax:
            ctx.add("ptxas-syntax", f"ptxas cannot parse {what} in {block.name}", line=line)
        if block.name == ".debug_info":
            info_labels = block.image.labels
            for a, b, line in text.differences:
                if a in info_labels and b in info_labels:
                    ctx.add(
                        "info-label-difference",
                        f"{a}-{b}: a difference of two .debug_info labels inside .debug_info makes ptxas fail "
                        "('Attempted to truncate larger than current size'); write the number",
                        line=line,
                    )
    if module.version is None:
        return
    for version, what, line in version_needs(module):
        if module.version < version:
            ctx.add(
                "version-too-low",
                f"{what} needs PTX ISA .version {version[0]}.{version[1]} or later; the module says "
                f".version {module.version[0]}.{module.version[1]}",
                line=line or module.version_line or None,
            )


def _ranges(values: list[int]) -> str:
    return ", ".join(map(str, values[:12])) + (", ..." if len(values) > 12 else "")
