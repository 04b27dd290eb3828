"""The cubin's line table against the ``.file`` and ``.loc`` directives of the PTX."""

from __future__ import annotations

import bisect

from .._native import twin
from ..cuda.cubin import CubinImages
from ..dwarf.image import Symbol
from ..dwarf.lines import LineProgram, line_starts
from ..errors import DwarfError
from ..ptx.module import PtxFunction, PtxModule
from ..ptx.placement import LocRow, first_label_at_zero, labels_dropped, line_rows
from ..ptx.statements import BodyStatements
from .report import CheckReport, Difference

__all__ = [
    "SassLines",
    "body_lines",
    "compare_label_places",
    "compare_line_files",
    "compare_line_rows",
    "expected_from_code",
    "expected_rows",
]


class SassLines:
    """A cubin's ``.nv_debug_line_sass`` (SASS addresses to PTX lines), read when first asked:
    per function, per PTX line, the address where its code starts
    (:func:`~ptxdwarf.dwarf.lines.line_starts`). None without the section, or when it cannot
    be read: a note in the report says so."""

    def __init__(self, found: CubinImages, report: CheckReport) -> None:
        self._found = found
        self._report = report
        self._read = False
        self._starts: dict[str, dict[int, int]] | None = None

    def end_of(self, function: str) -> int:
        """The size of ``function``'s code in the cubin (0: unknown)."""
        symbol = self._found.symbols.get(function)
        return symbol.size if symbol is not None else 0

    def starts(self) -> dict[str, dict[int, int]] | None:
        """Per function, per PTX line with SASS of its own, its first address."""
        if not self._read:
            self._read = True
            if self._found.line_sass is not None:
                try:
                    self._starts = line_starts(self._found.line_sass)
                except DwarfError as exc:
                    self._report.notes.append(f"cubin: .nv_debug_line_sass cannot be read ({exc})")
        return self._starts


def expected_rows(module: PtxModule) -> dict[str, dict[tuple[int, int], LocRow]]:
    """Per function with a body, the (file, line) rows its ``.loc`` directives make, each
    with the offset of the first ``.loc`` that gives it (:func:`~ptxdwarf.ptx.placement.line_rows`)."""
    if ".loc" not in module.text:
        return {}
    masked = module.masked
    return {f.name: line_rows(masked, f) for f in module.functions if f.body_start >= 0}


def expected_from_code(
    module: PtxModule,
) -> tuple[dict[str, dict[tuple[int, int], LocRow]], dict[int, str | None]]:
    """What the comparison asks of the function bodies, found before the cubin is there, from
    one split of each body into statements: :func:`expected_rows`, and
    :func:`~ptxdwarf.ptx.placement.first_label_at_zero` of each function, by ``id``."""
    masked = module.masked
    has_loc = ".loc" in module.text
    rows: dict[str, dict[tuple[int, int], LocRow]] = {}
    first_labels: dict[int, str | None] = {}
    for f in module.functions:
        body = BodyStatements(masked, f.body_start, f.body_end)
        first_labels[id(f)] = first_label_at_zero(masked, f, body=body)
        if has_loc and f.body_start >= 0:
            rows[f.name] = line_rows(masked, f, body=body)
    return rows, first_labels


def compare_line_rows(
    module: PtxModule,
    programs: list[LineProgram],
    report: CheckReport,
    rows: dict[str, dict[tuple[int, int], LocRow]],
    sass: SassLines,
) -> None:
    """The cubin's line-table rows against the ``.loc`` directives: each function's rows are
    those its ``.loc`` directives make, and no row belongs to a function the module does not
    define. A line with no row is a difference naming the PTX line when SASS came of its
    code (``.nv_debug_line_sass`` maps SASS to PTX lines), else a note: ptxas -g drops the
    rows of code it eliminates too (a load whose register is loaded again)."""
    got: dict[str, set[tuple[int, int]]] = {}
    for program in programs:
        for row in program.rows:
            if not row.end_sequence and row.line and row.symbol is not None:
                got.setdefault(row.symbol, set()).add((row.file, row.line))
    index = module.lines
    for name, expected in rows.items():
        found = got.get(name, set())
        missing = expected.keys() - found
        report.line_rows += len(expected) - len(missing)
        for file, line in sorted(missing):
            loc = expected[(file, line)]
            with_sass = sass.starts()  # read when a row is missing, not before (it is large)
            ptx_line = index.line(loc.at)
            code_lines = {index.line(at) for at in loc.code}
            lines = with_sass.get(name) if with_sass is not None else None
            if lines is not None and code_lines & lines.keys():
                report.differences.append(
                    Difference(
                        name,
                        ".debug_line",
                        f"{file}:{line}",
                        "no row",
                        f"{module.filename}:{ptx_line}: ptxas compiled the code of this .loc (PTX line(s) "
                        f"{', '.join(map(str, sorted(code_lines & lines.keys())[:5]))} have SASS) but made no "
                        "line-table row for it: a debugger cannot stop at that line",
                    )
                )
                continue
            why = (
                "its code compiled to nothing" if lines is not None else "no .nv_debug_line_sass to tell why"
            )
            report.notes.append(
                f"{module.filename}:{ptx_line}: no line-table row for .loc {file} {line} in {name} ({why})"
            )
    for name in sorted(set(got) - set(rows)):
        report.differences.append(
            Difference(
                "<cubin>",
                ".debug_line",
                "rows of the module's functions",
                f"{len(got[name])} row(s) for {name}",
                "the line table has rows for a function the PTX does not define",
            )
        )


def compare_line_files(module: PtxModule, table: LineProgram, report: CheckReport) -> None:
    """The line table ptxas made against the ``.file`` directives: each file number its rows
    use names the file the directive of that number names (quirk file-index: ptxas numbers
    its table densely, the rows keep the ``.loc`` numbers)."""
    declared = {f.index: f.full_path for f in module.files}
    for number in sorted({row.file for row in table.rows}):
        want = declared.get(number)
        got = table.path(number)
        if want is None:
            report.differences.append(
                Difference(
                    ".debug_line",
                    f"file {number}",
                    "no .file of that number",
                    got if got is not None else f"none ({len(table.files)} file(s) in the table)",
                    "the line table's rows use a file number no .file declares (a .loc names it): a "
                    "debugger finds no source for them (lint: loc-file-undeclared)",
                )
            )
            continue
        if got == want:
            continue
        report.differences.append(
            Difference(
                ".debug_line",
                f"file {number}",
                want,
                got if got is not None else f"none ({len(table.files)} file(s) in the table)",
                "the line table's rows use this file number, which the table gives to another file or to "
                "none: ptxas numbers its table densely, so .file numbers with gaps miss (lint: file-index)",
            )
        )


def body_lines(module: PtxModule) -> list[tuple[PtxFunction, int]]:
    """The functions of ``module`` in the order of their bodies, each with the line of its
    ``body_start`` (its body's ``{``; 0 for a function without a body)."""
    bodies = sorted(module.functions, key=lambda f: f.body_start)
    return [(f, module.lines.line(f.body_start) if f.body_start >= 0 else 0) for f in bodies]


AT_END, AT_CODE, BEFORE_CODE = 0, 1, 2
"""What :func:`labels_apart` found of a label: relocated to the end of its function's code with
code after it; to the very start of the code of the line above it; before that code."""


@twin("compare")
def labels_apart(
    labels: dict[str, int],
    placed: dict[str, Symbol],
    function: str,
    named: set[str],
    found_lines: dict[int, int],
    end: int,
    body_line: int,
) -> list[tuple[str, int, Symbol, int, int]]:
    """The code ``labels`` of ``function`` (name -> PTX line) whose relocation in the cubin
    (``placed``; those ``named`` already left out) lies apart from the code of their lines, by
    ``found_lines`` (PTX line -> its code's first address, :meth:`SassLines.starts`), ``end`` (the
    size of the function's code, 0 if unknown) and ``body_line`` (the line of its body's ``{``:
    code above it is the prologue's): each ``(label, line, relocation, kind, line above)``, of
    kind :data:`AT_END` (line above 0), :data:`AT_CODE` or :data:`BEFORE_CODE`, in the order of
    ``labels``. Its native twin is in ``ptxdwarf/_native/compare.c``."""
    out: list[tuple[str, int, Symbol, int, int]] = []
    with_code: list[int] | None = None
    for label, line in labels.items():
        got = placed.get(label)
        if got is None or got.name != function or label in named:
            continue
        if with_code is None:
            with_code = sorted(found_lines)
        if end and got.addend == end and with_code[-1] > line:
            out.append((label, line, got, AT_END, 0))
            continue
        i = bisect.bisect_left(with_code, line) - 1
        if i < 0 or with_code[i] <= body_line:
            continue
        above = with_code[i]
        code = found_lines[above]
        if got.addend == code:
            out.append((label, line, got, AT_CODE, above))
        elif got.addend < code:
            out.append((label, line, got, BEFORE_CODE, above))
    return out


def compare_label_places(
    module: PtxModule,
    placed: dict[str, Symbol],
    sass: SassLines,
    report: CheckReport,
    bodies: list[tuple[PtxFunction, int]] | None = None,
) -> None:
    """Each code label the DIEs and location lists use (``placed``: its relocation in the cubin) against
    ``.nv_debug_line_sass``: a label relocated before the code of the instruction above it is
    one ptxas moved (the label a dropped one's block leads to takes that one's place, quirk
    label-at-line-zero). One relocated to the very start of that code is one ptxas moved when
    :func:`~ptxdwarf.ptx.placement.labels_dropped` says so: ptxas 12.0 and 12.4 also put a label
    that did not move there. One relocated to the end of its function's code, with code after
    it, is one ptxas moved there (quirk label-at-end). ``bodies``: :func:`body_lines`, found
    here when not given."""
    starts = sass.starts() if placed else None
    if not starts:
        return
    named = {d.ptx for d in report.differences}  # a label reported already (first-label-at-zero)
    pos = 0
    for f, body_line in bodies if bodies is not None else body_lines(module):
        found_lines = starts.get(f.name)
        if not found_lines or f.body_start < pos:
            continue
        moving: set[str] | None = None
        end = sass.end_of(f.name)
        pos = f.body_start
        for label, line, got, kind, above in labels_apart(
            f.labels, placed, f.name, named, found_lines, end, body_line
        ):
            if kind == AT_END:
                why = (
                    f"to 0x{end:x}, the end of {f.name}'s code, past the code after it (quirk label-at-end: "
                    "the function has no label after its last instruction)"
                )
            else:
                if kind == AT_CODE:
                    if moving is None:
                        moving = set(labels_dropped(module.masked, f).values())
                    if label not in moving:
                        continue
                why = (
                    f"to 0x{got.addend:x}, before the code of line {above} above it (at 0x{found_lines[above]:x} in "
                    ".nv_debug_line_sass): the label a dropped one's block leads to takes that one's place "
                    "(quirk label-at-line-zero; `ptxdwarf lint` warns of it)"
                )
            report.differences.append(
                Difference(
                    f"{f.name}+{label}",
                    "address",
                    label,
                    f"{got} (= 0x{got.addend:x})",
                    f"ptxas relocated {label} (line {line}) {why}, so a range that starts or ends there is wrong",
                )
            )
