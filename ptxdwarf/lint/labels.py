"""Checks of the symbols the debug sections name: each is defined, ptxas resolves it
where it is used, and code labels belong to the function their DIE describes."""

from __future__ import annotations

import bisect
import re
from collections.abc import Container, Iterable
from typing import Any

from ..dwarf.constants import AT, TAG, at_name
from ..dwarf.image import Symbol
from ..dwarf.model import DIE, Attribute, DebugInfo, RangeList
from ..ptx.lexer import is_dotted_name
from ..ptx.module import PtxFunction
from ..ptx.placement import first_label_at_zero, labels_dropped
from ..ptx.statements import BodyStatements
from ..ptx.symbols import (
    CODE_LABEL,
    DATA_LABEL,
    DEPOT,
    DEVICE_PARAM,
    REGISTER,
    SECTION,
    UNDEFINED,
)
from .context import PC_ATTRS, LintContext

__all__ = ["DieLabels", "check_label_in", "check_relocations"]

_CODE_TAGS = frozenset({TAG.subprogram, TAG.lexical_block, TAG.inlined_subroutine, TAG.label})
#: The place of each pc attribute in PC_ATTRS, by its code.
_PC_SLOT = {int(code): i for i, code in enumerate(PC_ATTRS)}
_RANGES = int(AT.ranges)
#: Sections ptxas makes itself, which a symbolic value may name without the module writing them.
_PTXAS_SECTIONS = frozenset({".debug_line", ".debug_frame"})


def check_relocations(ctx: LintContext) -> None:
    """undefined-symbol, symbol-outside-info, symbol-addend, func-param-address,
    strp-label-reused, label-at-line-zero, first-label-at-zero: every symbolic value of the
    debug sections."""
    strp_uses: dict[str, int] = {}
    code_labels: dict[str, tuple[str, int]] = {}
    lookup = ctx.symbols.lookup
    plain = ctx.symbols.code_label_names
    for name, image in ctx.images.items():
        if not name.startswith(".debug_"):
            continue
        in_info = name == ".debug_info"
        for offset, _size, sym in image.relocs:
            if not sym.addend and sym.name in plain:
                if sym.name not in code_labels:
                    code_labels[sym.name] = (name, offset)
                continue  # the common case: nothing to say
            found = lookup(sym.name)
            kind = found.kind
            if kind == UNDEFINED and is_dotted_name(sym.name):
                continue  # ptxas cannot parse it at all: a ptxas-syntax finding says so
            if kind in (UNDEFINED, REGISTER) or (
                kind == SECTION and sym.name not in ctx.symbols.sections and sym.name not in _PTXAS_SECTIONS
            ):
                what = "section" if kind == SECTION else "symbol"
                ctx.add(
                    "undefined-symbol",
                    f"{what} {sym} used in {name} is not defined in this module; ptxas silently writes 0"
                    if kind != REGISTER
                    else f"{sym} used in {name} is a register, which ptxas cannot resolve: it silently writes 0",
                    die=ctx.die_containing(offset) if in_info else None,
                    section=name,
                    offset=offset,
                )
                continue
            if not in_info:
                _check_outside_info(ctx, name, offset, sym, kind, found.section)
            elif sym.addend and kind in (CODE_LABEL, DEPOT):
                what = (
                    "ptxas writes label+N in place but relocates against the label alone"
                    if kind == CODE_LABEL
                    else "ptxas drops the +N of a __local_depot"
                )
                ctx.add(
                    "symbol-addend",
                    f"{sym} in .debug_info: {what}; use a label at the address itself",
                    die=ctx.die_containing(offset) if in_info else None,
                    section=name,
                    offset=offset,
                )
            if kind == CODE_LABEL and sym.name not in code_labels:
                code_labels[sym.name] = (name, offset)
            if kind == DEVICE_PARAM and found.function is not None:
                ctx.add(
                    "func-param-address",
                    f"{sym} is a parameter of .func {found.function.name}: ptxas writes 0 for it (only kernel "
                    "parameters have an address); describe the register or stack slot that holds it",
                    die=ctx.die_containing(offset) if in_info else None,
                    section=name,
                    offset=offset,
                )
            if in_info and kind == DATA_LABEL and found.section == ".debug_str":
                if sym.name in strp_uses:
                    ctx.add(
                        "strp-label-reused",
                        f".debug_str label {sym.name} is referenced again (first at "
                        f"{image.source(strp_uses[sym.name])}); ptxas resolves the second reference to 0: "
                        "give every reference its own label or write .debug_str+N",
                        die=ctx.die_containing(offset) if in_info else None,
                        section=name,
                        offset=offset,
                    )
                else:
                    strp_uses[sym.name] = offset
    check_label_placement(ctx, code_labels)


def _check_outside_info(
    ctx: LintContext, name: str, offset: int, sym: Symbol, kind: str, section: str | None
) -> None:
    """symbol-outside-info: ptxas resolves data labels and section names only in .debug_info."""
    intended = None
    if kind == SECTION:
        intended = sym.addend
    elif kind == DATA_LABEL and section is not None:
        intended = ctx.images[section].labels.get(sym.name, 0) + sym.addend
    if intended:
        ctx.add(
            "symbol-outside-info",
            f"{sym} in {name} stands for {intended:#x}, but ptxas resolves data labels and section "
            "names only inside .debug_info and writes 0 here; write the number",
            section=name,
            offset=offset,
        )
    elif sym.addend and kind not in (SECTION, DATA_LABEL):
        ctx.add(
            "symbol-outside-info",
            f"{sym} in {name}: outside .debug_info ptxas writes 0 for symbol+N (no relocation)",
            section=name,
            offset=offset,
        )


#: A ``.loc`` directive of line 0.
_LINE_ZERO_LOC = re.compile(r"\.loc[ \t]+\d+[ \t]+0(?!\d)")


def _before_any_loc(text: str, f: PtxFunction, labels: list[str]) -> bool:
    """Whether one of ``labels`` may stand before the first ``.loc`` of ``f``'s body (its code
    has no line yet, which ptxas takes as line 0); a quick test, exact where it says no."""
    first_loc = text.find(".loc", f.body_start, f.body_end)
    if first_loc < 0:
        return False  # no line anywhere: ptxas keeps every label
    return any(text.find(label, f.body_start, first_loc) >= 0 for label in labels)


def check_label_placement(ctx: LintContext, used: dict[str, tuple[str, int]]) -> None:
    """label-at-line-zero, first-label-at-zero: code labels used by the debug sections that
    ptxas drops, or places at their function's start."""
    code_labels = ctx.symbols.code_labels
    by_function: dict[int, tuple[PtxFunction, list[str]]] = {}
    for label in used:
        f = code_labels[label]
        entry = by_function.get(id(f))
        if entry is None:
            entry = by_function[id(f)] = (f, [])
        entry[1].append(label)
    text, masked = ctx.module.text, ctx.module.masked
    zero_locs = [m.start() for m in ctx.loc_lines if _LINE_ZERO_LOC.match(m.group())]
    for f, labels in by_function.values():
        if f.body_start < 0:
            continue
        body = BodyStatements(masked, f.body_start, f.body_end)
        reported = len(ctx.findings)
        dropped: dict[str, str] = {}
        i = bisect.bisect_left(zero_locs, f.body_start)
        if (i < len(zero_locs) and zero_locs[i] < f.body_end) or _before_any_loc(text, f, labels):
            dropped = labels_dropped(masked, f, body=body)
        for label, cause in dropped.items():
            if label not in used:
                if cause in used and cause not in dropped:
                    _at_use(
                        ctx,
                        "label-at-line-zero",
                        f"{cause} (line {f.labels.get(cause, '?')}, in {f.name}) is used by {used[cause][0]}, but "
                        f"ptxas drops {label} (its first instruction is at line 0 and its block leads to "
                        f"{cause}) and relocates {cause} to where {label} belonged, before code that "
                        f"precedes {cause}: a range that starts or ends there is wrong; give {label}'s "
                        "instruction a line or remove the label",
                        used[cause],
                    )
                continue
            if label in used:
                _at_use(
                    ctx,
                    "label-at-line-zero",
                    f"{label} (line {f.labels.get(label, '?')}, in {f.name}) is used by {used[label][0]}, but its "
                    f"first instruction is at line 0 (.loc F 0 C, or no .loc before it) and its block leads to "
                    f"{cause}, whose code has a line: ptxas drops such a label, leaving an undefined symbol that "
                    "reads 0 in the cubin; give the instruction a line or move the label"
                    + _cause_moved(label, cause, used),
                    used[label],
                )
        misplaced = first_label_at_zero(masked, f, body=body)
        if misplaced is not None and misplaced in used and misplaced not in dropped:
            _at_use(
                ctx,
                "first-label-at-zero",
                f"{misplaced} (line {f.labels.get(misplaced, '?')}) is the first label of {f.name} and no branch "
                "precedes it: ptxas places it at the function's start though code comes before it, so a range "
                "that starts or ends there is wrong; put a label at the top of the body (as nvcc's "
                "$L__func_begin)",
                used[misplaced],
            )
        if ctx.keep_statements and len(ctx.findings) > reported:
            ctx.module.kept_statements[id(f)] = body


def _cause_moved(label: str, cause: str, used: Container[str]) -> str:
    """What a finding of dropped ``label`` adds when the label its block leads to (``cause``)
    is one the debug sections use: ptxas relocates that one to where ``label`` belonged
    (measured, docs/ptxas-facts.md, label-at-line-zero)."""
    if cause not in used:
        return ""
    return (
        f"; ptxas also relocates {cause}, the label its block leads to, to where {label} belonged, before "
        f"code that precedes {cause}, so a range that starts or ends at {cause} is wrong too"
    )


def _at_use(ctx: LintContext, rule: str, message: str, use: tuple[str, int]) -> None:
    """A finding at the first use of a label: ``use`` is (section, offset)."""
    section, offset = use
    ctx.add(
        rule,
        message,
        where=ctx.images[section].source(offset),
        die=ctx.die_containing(offset) if section == ".debug_info" else None,
        section=section,
        offset=offset,
    )


def check_label_in(
    ctx: LintContext, value: Any, f: PtxFunction, die: DIE, attr: Attribute, context: str
) -> None:
    """label-wrong-function: ``value``, used for ``f``'s code, is a label of another function."""
    if not isinstance(value, Symbol):
        return
    name = value.name
    symbols = ctx.symbols
    other = ctx.owners.get(name)
    if other is None or other is f or name in symbols.data_labels:
        return
    what = (
        "function"
        if name in symbols.functions
        else f"label of {other.kind} {other.name} (line {other.labels.get(name)})"
    )
    ctx.add_attr(
        "label-wrong-function",
        f"{context} uses {name}, a {what}, but the subprogram describes {f.kind} {f.name}",
        die,
        attr,
    )


class DieLabels:
    """label-wrong-function for the pc attributes and range list of each code DIE of ``info``."""

    def __init__(self, ctx: LintContext, info: DebugInfo) -> None:
        self.ctx = ctx
        self.ranges: dict[int, list[RangeList]] | None = None
        """The .debug_ranges lists by offset (None: the module has no .debug_ranges)."""
        if info.ranges is not None:
            self.ranges = {}
            for rl in info.ranges:
                self.ranges.setdefault(rl.offset, []).append(rl)

    def check(self, die: DIE, sp: DIE | None) -> None:
        """The checks of ``die``, whose enclosing subprogram is ``sp``."""
        if sp is None:
            return
        code_die = die.tag in _CODE_TAGS
        if not code_die and self.ranges is None:
            return
        pcs: list[Attribute | None] = [None] * len(PC_ATTRS)  # the first of each, in one pass
        ranges = None
        for attr in die.attributes:
            slot = _PC_SLOT.get(attr.name)
            if slot is not None:
                if pcs[slot] is None:
                    pcs[slot] = attr
            elif attr.name == _RANGES and ranges is None:
                ranges = attr
        if code_die:
            f = self.ctx.subprogram_function(sp)
            if f is not None:
                for pc in pcs:
                    if pc is not None and pc.symbol is not None:
                        check_label_in(self.ctx, pc.symbol, f, die, pc, at_name(pc.name))
        if ranges is not None and self.ranges is not None and isinstance(ranges.value, int):
            self._check_ranges(die, sp, ranges, self.ranges.get(ranges.value, ()))

    def _check_ranges(self, die: DIE, sp: DIE, attr: Attribute, lists: Iterable[RangeList]) -> None:
        """The labels of the range lists ``die``'s DW_AT_ranges ``attr`` points at."""
        f = self.ctx.subprogram_function(sp)
        if f is None:
            return
        for rl in lists:
            for begin, end in rl.entries:
                for v in (begin, end):
                    check_label_in(self.ctx, v, f, die, attr, "DW_AT_ranges entry")
