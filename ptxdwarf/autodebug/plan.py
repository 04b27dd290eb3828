"""Where attach's lines go: ``.loc`` before each instruction's line, labels at each
function's first instruction and closing brace, ``.file`` after the header,
``, debug`` on ``.target``, instructions split off lines they share with a brace or
a declaration; and the output line of every input line."""

from __future__ import annotations

import bisect

from ..cuda.quirks import workaround
from ..ptx.edits import TextEdits
from ..ptx.lexer import LineIndex, directive_re
from ..ptx.module import PtxFunction, PtxModule
from .scan import Func

_HEADER = directive_re("version", "target", "address_size")


class Plan:
    """The input's lines, split where needed, with lines inserted before them; made
    into edits of the input by :meth:`edit`, which also numbers the output lines."""

    LOC = object()

    def __init__(self, text: str, lines: LineIndex, keep_lines: bool = False) -> None:
        self.text = text
        self.keep_lines = keep_lines
        """The input's own ``.file``/``.loc`` stay: no ``.loc`` of PTX lines, no declaration lines."""
        self.lines = lines
        """The line index of ``text``."""
        self.raw = text.split("\n")
        self.crlf = "\r\n" in text
        self.lf_only: set[int] = set()  # lines a CRLF output ends with CRLF, the input with LF
        if self.crlf:
            self.lf_only = {i for i, line in enumerate(self.raw[:-1]) if not line.endswith("\r")}
            self.raw = [line.removesuffix("\r") for line in self.raw]
        self.splits: dict[int, set[int]] = {}
        self.before: dict[tuple[int, int], list[object]] = {}
        self.inline: dict[int, str] = {}
        self.out_index: dict[tuple[int, int], int] = {}
        self.labels: dict[str, PtxFunction] = {}
        """Labels the plan inserts -> the function whose body they go in."""

    def at(self, offset: int) -> tuple[int, int]:
        """(0-based line, column) of ``offset``."""
        line = self.lines.line(offset)
        return line - 1, offset - self.lines.start(line)

    def split_at(self, offset: int) -> None:
        """Start a new line at ``offset`` (not at a line's start or end)."""
        line, col = self.at(offset)
        if 0 < col < len(self.raw[line]):
            self.splits.setdefault(line, set()).add(col)

    def segment_of(self, offset: int) -> tuple[int, int]:
        """(line, segment) of ``offset``: segment k is the line's text after its k-th split."""
        line, col = self.at(offset)
        cols = sorted(self.splits.get(line, ()))
        return line, bisect.bisect_right(cols, col)

    def insert_before(self, offset: int, item: object) -> None:
        """A line (``item``, or a ``.loc`` for :data:`LOC`) before the segment of ``offset``."""
        self.before.setdefault(self.segment_of(offset), []).append(item)

    def insert_label(self, offset: int, label: str, function: PtxFunction) -> None:
        """A line defining ``label`` before the segment of ``offset``, in ``function``'s body."""
        self.insert_before(offset, f"{label}:")
        self.labels[label] = function

    def insert_inline(self, offset: int, text: str) -> None:
        """``text`` at ``offset``, within its line (one per line)."""
        self.inline[offset] = text

    def edit(self, where: str) -> TextEdits:
        """The edits that make the output, the ``.loc`` lines numbered; fills :attr:`out_index`."""
        edits = TextEdits(self.text, where=where)
        nl = "\r\n" if self.crlf else "\n"
        for offset, text in self.inline.items():
            edits.insert(offset, text)
        out = 0
        for i, line in enumerate(self.raw):
            start = self.lines.start(i + 1)
            if i not in self.splits and (i, 0) not in self.before:
                self.out_index[(i, 0)] = out
                out += 1
            else:
                out = self._edit_line(edits, i, out, nl)
            if i in self.lf_only:
                edits.insert(start + len(line), "\r")
        return edits

    def _edit_line(self, edits: TextEdits, i: int, out: int, nl: str) -> int:
        """The edits of line ``i``, whose first segment is output line ``out`` (0-based,
        before its inserted lines); the output line after it."""
        line = self.raw[i]
        start = self.lines.start(i + 1)
        bounds = [0, *sorted(self.splits.get(i, ())), len(line)]
        for seg in range(len(bounds) - 1):
            key = (i, seg)
            items = self.before.get(key, ())
            out += len(items)
            self.out_index[key] = out
            out += 1
            loc = f"\t.loc\t1 {out} 1"
            added = "".join((loc if item is Plan.LOC else str(item)) + nl for item in items)
            if seg == 0:
                if added:
                    edits.insert(start, added)
                continue
            at = start + bounds[seg]
            piece = line[bounds[seg] : bounds[seg + 1]]
            if piece.strip():  # the piece keeps its column: indented as far as its start
                edits.replace(at, at + len(piece) - len(piece.lstrip()), nl + added + "\t")
            else:
                edits.insert(at, nl + added)
        return out

    def out_line(self, offset: int) -> int | None:
        """1-based line in the output of the input ``offset`` (None when the source lines
        are the input's own ``.loc``: no line of the PTX is a declaration line then)."""
        return None if self.keep_lines else self.out_index[self.segment_of(offset)] + 1

    def out_line_of_input_line(self, line: int) -> int | None:
        """1-based line in the output of the input's 1-based ``line`` (None as :meth:`out_line`)."""
        return None if self.keep_lines else self.out_index[(line - 1, 0)] + 1


def make_plan(
    text: str,
    module: PtxModule,
    masked: str,
    funcs: list[Func],
    prefix: str,
    output_name: str,
    debug_target: bool,
    keep_lines: bool = False,
) -> Plan:
    """The plan of ``text`` (see the module docstring); labels are ``prefix`` +
    ``beginK``/``endK``. ``keep_lines``: the input's ``.file``/``.loc`` stay and no
    ``.loc``/``.file`` is added."""
    plan = Plan(text, module.lines, keep_lines)
    _split_lines(plan, funcs)
    for fn in funcs:
        _place_locs(plan, fn, prefix)
    assert module.target_span is not None  # the caller checks
    t_start, t_end = module.target_span
    if debug_target and not module.has_debug_target:
        plan.insert_inline(t_start + len(text[t_start:t_end].rstrip()), ", debug")
    anchor_line = max(
        (plan.at(m.start())[0] for m in _HEADER.finditer(masked)),
        default=0,
    )
    if not keep_lines:
        plan.before.setdefault((anchor_line + 1, 0), []).insert(0, f'.file 1 "{output_name}"')
    return plan


def _split_lines(plan: Plan, funcs: list[Func]) -> None:
    """An instruction on the line of a function's opening brace or after a declaration
    goes to a line of its own, and so does a closing brace after code."""
    for fn in funcs:
        f = fn.func
        open_brace = f.body_start - 1
        if fn.instrs and plan.at(fn.instrs[0].start)[0] == plan.at(open_brace)[0]:
            plan.split_at(f.body_start)
        for before, s in zip(fn.statements, fn.statements[1:], strict=False):
            if (
                s.kind == "instr"
                and before.kind == "directive"
                and plan.at(before.end)[0] == plan.at(s.start)[0]
            ):
                plan.split_at(s.start)
        close_line, close_col = plan.at(f.body_end)
        if plan.raw[close_line][:close_col].strip():
            plan.split_at(f.body_end)


@workaround("label-at-end")
def _place_locs(plan: Plan, fn: Func, prefix: str) -> None:
    """``.loc`` before the first line of each instruction of ``fn`` (once per line, not
    inside another statement), the begin label after the first, the end label last."""
    f = fn.func
    earlier_end = -1  # where the statements of earlier segments end, at the latest
    segment: tuple[int, int] | None = None
    segment_end = -1
    seen_segments: set[tuple[int, int]] = set()
    first = True
    for s in fn.statements:
        seg = plan.segment_of(s.start)
        if seg != segment:
            earlier_end = max(earlier_end, segment_end)
            segment, segment_end = seg, -1
        seg_start = plan.lines.start(seg[0] + 1) + (
            sorted(plan.splits.get(seg[0], ()))[seg[1] - 1] if seg[1] else 0
        )
        segment_end = max(segment_end, s.end)
        if s.kind != "instr" or earlier_end > seg_start or seg in seen_segments:
            continue
        seen_segments.add(seg)
        if not plan.keep_lines:
            plan.insert_before(s.start, Plan.LOC)
        if first:
            plan.insert_label(s.start, f"{prefix}begin{fn.index}", f)
            first = False
    if first:  # no instruction: the begin label goes with the end label
        plan.insert_label(f.body_end, f"{prefix}begin{fn.index}", f)
    plan.insert_label(f.body_end, f"{prefix}end{fn.index}", f)
