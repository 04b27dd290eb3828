"""Repairs of the PTX text around the debug sections: ``.file``, ``.version``, comments,
symbol names."""

from __future__ import annotations

import re

from ..cuda.quirks import quirk
from ..lint.finding import Finding
from ..lint.header import version_needs
from ..ptx.lexer import COMMENT_OR_STRING, DOTTED, NAME_CHAR, STRING, VERSION, is_dotted_name
from ..ptx.module import PtxFunction
from ..ptx.placement import first_label_anchors, labels_dropped
from ..ptx.symbols import UNDEFINED, ptx_valid_name, symbol_table
from .registry import Repair, TextJob, repair

__all__ = [
    "anchor_first_labels",
    "double_dropped_labels",
    "drop_trailing_nul",
    "escape_comments",
    "join_file_strings",
    "raise_version",
    "rename_dotted_symbols",
    "rename_mangled_references",
]

_TWO_STRINGS = re.compile(rf"[ \t]*\.file[ \t]+(\d+)[ \t]+({STRING})[ \t]*({STRING})")


@repair("file-two-strings", phase="text")
def join_file_strings(job: TextJob, findings: list[Finding]) -> list[Repair]:
    """``.file N "dir" "name"`` -> ``.file N "dir/name"`` on the lines of ``findings`` (a
    name that is absolute stays as it is)."""
    repairs = []
    text = job.module.text
    for line in job.lines_of(findings):
        start, end = job.line_span(line)
        m = _TWO_STRINGS.match(text, start, end)
        if m is None:
            continue
        directory, name = m.group(2)[1:-1], m.group(3)[1:-1]
        path = name if name.startswith("/") or not directory else directory.rstrip("/") + "/" + name
        job.edits.replace(m.start(2), m.end(3), f'"{path}"')
        repairs.append(
            Repair(
                "file-two-strings",
                job.where(line),
                f'.file {int(m.group(1))} {m.group(2)} {m.group(3)} -> "{path}"',
            )
        )
    return repairs


def _ascii(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept as a surrogate escape
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


@repair("non-ascii-comment", phase="text")
def escape_comments(job: TextJob, findings: list[Finding]) -> list[Repair]:
    """Non-ASCII characters in comments written as ASCII escapes (``\\u00e9``), for a ptxas
    that rejects them (13.0, and any when the version is not known), from the first line
    of ``findings`` (lint names the first line that has one). Those in strings (``.file``
    names) have no repair: ptxas reads no escapes there."""
    lines = job.lines_of(findings)
    if not lines or not quirk("non-ascii-comment").holds_for(job.ptxas_version):
        return []
    text = job.module.text
    repairs = []
    for m in COMMENT_OR_STRING.finditer(text, _scan_start(job, lines[0])):
        s = m.group(0)
        if s[0] == '"' or s.isascii():
            continue
        job.edits.replace(m.start(), m.end(), "".join(ch if ch.isascii() else _ascii(ch) for ch in s))
        line = job.line_of(m.start())
        count = sum(1 for ch in s if not ch.isascii())
        repairs.append(
            Repair("non-ascii", job.where(line), f"{count} non-ASCII character(s) in a comment escaped")
        )
    return repairs


@repair("trailing-nul", phase="text")
def drop_trailing_nul(job: TextJob, findings: list[Finding]) -> list[Repair]:
    """The NUL bytes that end the text dropped, for a ptxas that refuses them (13.0 and
    later, and any when the version is not known)."""
    if not findings or not quirk("trailing-nul").holds_for(job.ptxas_version):
        return []
    text = job.module.text
    end = len(text.rstrip("\0"))
    if end == len(text):
        return []
    job.edits.delete(end, len(text))
    return [
        Repair("trailing-nul", job.where(job.line_of(end)), f"{len(text) - end} trailing NUL byte(s) dropped")
    ]


def _scan_start(job: TextJob, line: int) -> int:
    """Where a scan of comments and strings may start that sees those from ``line`` on: the
    line's start (no string goes past its line) or, when a comment holds it, the start of a
    comment before it with only comments and blanks in between."""
    text, masked = job.module.text, job.module.masked
    offset = start = job.line_start(line)
    while start > 0 and masked[start - 1].isspace():
        start -= 1  # back over blanks, comments blanked included, to code
    return next((i for i in range(start, offset) if text[i] != masked[i]), offset)


@repair("version-too-low", phase="text")
def raise_version(job: TextJob, findings: list[Finding]) -> list[Repair]:
    """``.version`` raised to the lowest PTX ISA that what ``findings`` name in the debug
    text needs."""
    module = job.module
    if module.version is None or not module.version_line:
        return []
    named = set(job.lines_of(findings))
    needs = [n for n in version_needs(module) if (n[2] or module.version_line) in named]
    if not needs:
        return []
    need, what, _line = max(needs, key=lambda n: n[0])
    if module.version >= need:
        return []
    if job.max_version is not None and need > job.max_version:
        return []  # the sections are written without labels instead (sections.no_section_labels)
    start, end = job.line_span(module.version_line)
    m = VERSION.search(module.text, start, end)
    if m is None:
        return []
    new = f"{need[0]}.{need[1]}"
    job.edits.replace(m.start(1), m.end(2), new)
    old = f"{module.version[0]}.{module.version[1]}"
    return [Repair("version-too-low", job.where(module.version_line), f".version {old} -> {new} ({what})")]


@repair("ptxas-syntax", phase="text")
def rename_dotted_symbols(job: TextJob, findings: list[Finding]) -> list[Repair]:
    """A name with a '.' in a debug section (``__PRETTY_FUNCTION__._Z3foov``, which ptxas
    cannot parse) on the lines of ``findings`` -> the name the module defines for it
    (``__PRETTY_FUNCTION___$__Z3foov``)."""
    module = job.module
    table = symbol_table(module)
    text = module.text
    masked = module.masked
    repairs = []
    for line in job.lines_of(findings):
        start, end = job.line_span(line)
        block = next((b for b in module.sections if b.start <= start < b.end), None)
        if block is None or not block.name.startswith(".debug_") or block.dwarf_lines:
            continue
        body_start = masked.find("{", block.start, block.end) + 1
        for m in DOTTED.finditer(masked, max(start, body_start), min(end, block.end)):
            name = m.group(0)
            if m.start() > 0 and text[m.start() - 1] in "._$%\\":
                continue
            if not is_dotted_name(name):
                continue
            valid = ptx_valid_name(name)
            if table.lookup(valid).kind == UNDEFINED:
                continue
            job.edits.replace(m.start(), m.end(), valid)
            line = job.line_of(m.start())
            repairs.append(
                Repair("ptxas-syntax", job.where(line), f"{name} -> {valid} (the name the module defines)")
            )
    return repairs


@repair("undefined-symbol", phase="text")
def rename_mangled_references(job: TextJob, findings: list[Finding]) -> list[Repair]:
    """A reference to a name with a '.' the module does not define (LLVM 19's ``.b64 .str``)
    -> the name the module defines for it under LLVM's mangling (``_$_str``, its '.' as
    ``_$_``), on the lines of ``findings``."""
    module = job.module
    table = symbol_table(module)
    masked = module.masked
    repairs = []
    for f in findings:
        line = f.line
        if line is None:
            continue
        start, end = job.line_span(line)
        for name in sorted(job.labels_of([f])):
            valid = ptx_valid_name(name)
            if valid == name or not table.lookup(valid).addressable:
                continue
            pattern = rf"(?<![\w$.%]){re.escape(name)}(?![\w$.])"
            for m in re.finditer(pattern, masked[start:end]):
                job.edits.replace(start + m.start(), start + m.end(), valid)
                repairs.append(
                    Repair(
                        "undefined-symbol",
                        job.where(line),
                        f"{name} -> {valid} (the name the module defines for it, LLVM's '.' as '_$_')",
                    )
                )
    return repairs


def _used_labels(job: TextJob) -> set[str]:
    """The names the debug sections refer to."""
    return {r.symbol.name for image in job.module.images(debug_only=True).values() for r in image.relocs}


def _functions_of(job: TextJob, labels: set[str]) -> list[PtxFunction]:
    """The functions whose bodies define ``labels``, in text order."""
    table = symbol_table(job.module)
    owners = {id(f) for label in labels if (f := table.code_labels.get(label)) is not None}
    return [f for f in job.module.functions if id(f) in owners]


@repair("first-label-at-zero", phase="text")
def anchor_first_labels(job: TextJob, findings: list[Finding]) -> list[Repair]:
    """A label before the first instruction of each function whose first label a finding
    of ``findings`` names (where the debug sections use it) and ptxas would place at the
    function's start: that label is then the second, and placed right."""
    module = job.module
    named = job.labels_of(findings)
    repairs = []
    for anchor in first_label_anchors(module, _functions_of(job, named), named, set()):
        job.edits.insert(anchor.at, f"{anchor.name}: ")
        repairs.append(
            Repair(
                "first-label-at-zero",
                job.where(job.line_of(anchor.at)),
                f"{anchor.name} put before the first instruction of {anchor.function.name}, "
                f"so that {anchor.label} is not its first label",
            )
        )
    return repairs


@repair("label-at-line-zero", phase="text")
def double_dropped_labels(job: TextJob, findings: list[Finding]) -> list[Repair]:
    """A second label right after each label ptxas would drop (its code at line 0, its
    block leading to a line) that a finding of ``findings`` names (where the debug sections
    use it): the first then leads to the second, whose code is at line 0 too, and is kept
    (case label-at-line-zero.doubled). And a label right before the label a dropped one's
    block leads to, when the debug sections use that one and a finding names it or the
    dropped one: ptxas moves that label to where the dropped one belonged, and the inserted
    label takes that place instead (case label-at-line-zero.next-padded); the block's
    branches to the label go to the inserted one, else the block still leads to the label
    (cases label-at-line-zero.branch-padded and .branch-to-pad)."""
    module = job.module
    named = job.labels_of(findings)
    used = _used_labels(job)
    taken: set[str] = set()
    repairs = []
    masked = module.masked
    for f in _functions_of(job, named):
        dropped = labels_dropped(masked, f, body=module.kept_statements.get(id(f)))
        if not dropped:
            continue
        order = list(f.labels)

        def insert(
            label: str, stem: str, before: bool, why: str, f: PtxFunction = f, masked: str = masked
        ) -> str | None:
            m = _label_definition(masked, label, f)
            if m is None:
                return None
            name = symbol_table(module).fresh(stem, taken)
            job.edits.insert(m.start() if before else m.end(), f"{name}:\n" if before else f"\n{name}:")
            where = "before" if before else "after"
            repairs.append(
                Repair(
                    "label-at-line-zero",
                    job.where(job.line_of(m.start())),
                    f"{name} put right {where} {label}, {why}",
                )
            )
            return name

        for label, cause in dropped.items():
            if label in named:
                insert(label, "$L__ptxdwarf_keep", False, "which ptxas would drop")
            if cause not in used or cause in dropped or not {label, cause} & named:
                continue
            pad = insert(cause, "$L__ptxdwarf_pad", True, f"which ptxas would move to where {label} belonged")
            if pad is None:
                continue
            branches = _branches_in_block(masked, f, order, label, cause)
            for start, end in branches:
                job.edits.replace(start, end, pad)
            if branches:
                repairs.append(
                    Repair(
                        "label-at-line-zero",
                        job.where(job.line_of(branches[0][0])),
                        f"the branch to {cause} in the block of {label} sent to {pad}, so that the block "
                        f"leads to {pad}",
                    )
                )
    return repairs


def _branches_in_block(
    masked: str, f: PtxFunction, order: list[str], label: str, target: str
) -> list[tuple[int, int]]:
    """Where ``target`` is named by the branches between ``label``'s definition and the next
    label's (the span of each name)."""
    m = _label_definition(masked, label, f)
    if m is None:
        return []
    at = order.index(label) if label in order else -1
    after = _label_definition(masked, order[at + 1], f) if 0 <= at < len(order) - 1 else None
    end = after.start() if after is not None else f.body_end
    branch = re.compile(rf"\bbra(?:\.uni)?\s+({re.escape(target)})(?!{NAME_CHAR})")
    return [b.span(1) for b in branch.finditer(masked, m.end(), end)]


def _label_definition(masked: str, label: str, f: PtxFunction) -> re.Match[str] | None:
    """Where ``label:`` is defined in ``f``'s body."""
    return re.compile(rf"(?<!{NAME_CHAR}){re.escape(label)}[ \t]*:").search(masked, f.body_start, f.body_end)
