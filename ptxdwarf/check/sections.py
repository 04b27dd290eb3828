"""The sections besides ``.debug_info``, and the ``.b64`` numbers ptxas truncates in any of them."""

from __future__ import annotations

from typing import TypeAlias

from .._native import twin
from ..dwarf.constants import at_name
from ..dwarf.image import Block, Symbol
from ..dwarf.model import DebugInfo, die_path
from ..ptx.module import PtxModule
from .expect import Expectations, placed_in_order, plain_value
from .report import CheckReport, Difference
from .show import attribute_title, die_and_attribute_at, show

__all__ = ["compare_sections", "truncated_numbers"]


def compare_sections(c: Expectations) -> None:
    """The sections besides ``.debug_info``: each as ptxas should have written it."""
    _compare_bytes(c)
    _compare_name_sets(c)
    _compare_aranges(c)
    _compare_location_lists(c)
    _compare_range_lists(c)


def _compare_bytes(c: Expectations) -> None:
    """``.debug_abbrev`` and ``.debug_str``: byte for byte."""
    mine = c.ptx.sections or {}
    theirs = c.cubin.sections or {}
    for name in (".debug_abbrev", ".debug_str"):
        a, b = mine.get(name), theirs.get(name)
        if a is None or not a.data:
            continue
        if b is None:
            c.differ(name, "section", f"{len(a.data)} bytes", "missing")
        elif a.data != b.data:
            at = next(
                (i for i, (p, q) in enumerate(zip(a.data, b.data, strict=False)) if p != q),
                min(len(a.data), len(b.data)),
            )
            c.differ(
                f"{name}+0x{at:x}",
                "bytes",
                f"{len(a.data)} bytes",
                f"{len(b.data)} bytes",
                "the section changed",
            )


def _compare_name_sets(c: Expectations) -> None:
    """``.debug_pubnames`` and ``.debug_pubtypes``: unit offsets and entries."""
    for key in ("pubnames", "pubtypes"):
        sets_a = getattr(c.ptx, key) or []
        sets_b = getattr(c.cubin, key) or []
        if len(sets_a) != len(sets_b):
            c.differ(f".debug_{key}", "sets", len(sets_a), len(sets_b))
            continue
        for i, (x, y) in enumerate(zip(sets_a, sets_b, strict=False)):
            where = f".debug_{key}[{i}]"
            if isinstance(x.unit_offset, Symbol):
                c.expect_symbol(
                    where,
                    "unit offset",
                    x.unit_offset,
                    y.unit_offset if isinstance(y.unit_offset, Symbol) else None,
                    plain_value(y.unit_offset),
                )
            elif x.unit_offset != plain_value(y.unit_offset):
                c.differ(where, "unit offset", x.unit_offset, y.unit_offset)
            if x.entries != y.entries or x.unit_length != y.unit_length:
                c.differ(where, "entries", x.entries[:4], y.entries[:4])


def _compare_aranges(c: Expectations) -> None:
    """``.debug_aranges``: each tuple's begin and length."""
    if c.ptx.aranges:
        b_sets = c.cubin.aranges or []
        for i, x in enumerate(c.ptx.aranges):
            where = f".debug_aranges[{i}]"
            if i >= len(b_sets):
                c.differ(where, "set", "present", "missing")
                continue
            y = b_sets[i]
            for j, ((b0, l0), (b1, l1)) in enumerate(zip(x.tuples, y.tuples, strict=False)):
                for label, p, q in (("begin", b0, b1), ("length", l0, l1)):
                    c.expect_value(f"{where}[{j}]", label, p, q)


def _compare_location_lists(c: Expectations) -> None:
    """``.debug_loc``: each list's ranges and expressions."""
    if c.ptx.locations:
        lists_b = {lst.offset: lst for lst in c.cubin.locations or []}
        asize = c.ptx.units[0].address_size if c.ptx.units else 8
        placed = c.placed
        symbols = 0
        for loc, functions in zip(c.ptx.locations, c.comparison_plan().lists, strict=True):
            where = f".debug_loc+0x{loc.offset:x}"
            other = lists_b.get(loc.offset)
            if other is None or len(other.entries) > len(loc.entries):
                c.differ(
                    where,
                    "list",
                    f"{len(loc.entries)} entries",
                    "missing" if other is None else f"{len(other.entries)} entries",
                )
                continue
            count, rest = placed_entries(loc.entries, other.entries, functions, placed)
            symbols += count
            for k in rest:
                (b0, e0, x0), (b1, e1, x1), (fb, fe) = loc.entries[k], other.entries[k], functions[k]
                if not placed_in_order(fb, fe, b1, e1):
                    for label, p, q in (("begin", b0, b1), ("end", e0, e1)):
                        c.expect_value(f"{where}[{k}]", label, p, q)
                    c.inverted(f"{where}[{k}]", "range", (b0, e0), b1, e1)
                if x0 is not None and x1 is not None and _expression_to_compare(x0, x1):
                    c.expect_expression(f"{where}[{k}]", "expression", x0, x1, asize)
            if len(other.entries) < len(loc.entries):
                c.list_ends_early(where, loc, len(other.entries))
        c.report.symbols += symbols


Entry: TypeAlias = tuple[Symbol | int, Symbol | int, Block | None]


def _expression_to_compare(ptx: Block, cubin: Block) -> bool:
    """Whether a location list entry's two expressions need a look: either has relocations, or
    their bytes differ."""
    return bool(ptx.relocs or cubin.relocs) or bytes.__ne__(ptx, cubin)


@twin("compare", checkable=False)
def placed_entries(
    entries: list[Entry],
    got: list[Entry],
    functions: list[tuple[str | None, str | None]],
    placed: dict[str, Symbol],
) -> tuple[int, list[int]]:
    """A location list's ``entries`` against the cubin's (``got``, as many or fewer; the
    ``functions`` of each entry's labels, :class:`~.plan.ComparisonPlan`): each range whose labels
    ptxas placed in order in their functions (:func:`placed_in_order`) puts its two labels in
    ``placed`` (label name -> the cubin's :class:`Symbol`). The number of labels put, and the indexes
    of the entries left to look at: ranges not placed in order, and expressions to compare.
    Its native twin is in ``ptxdwarf/_native/compare.c``."""
    count = 0
    rest: list[int] = []
    for k, ((b0, e0, x0), (b1, e1, x1), (fb, fe)) in enumerate(zip(entries, got, functions, strict=False)):
        in_order = placed_in_order(fb, fe, b1, e1)
        if in_order:
            count += 2
            # placed_in_order: b1 and e1 are symbols; b0 and e0 too (code labels)
            placed[b0.name] = b1  # type: ignore[union-attr,assignment]
            placed[e0.name] = e1  # type: ignore[union-attr,assignment]
        if not in_order or (x0 is not None and x1 is not None and _expression_to_compare(x0, x1)):
            rest.append(k)
    return count, rest


def _compare_range_lists(c: Expectations) -> None:
    """``.debug_ranges``: each list's ranges."""
    if c.ptx.ranges:
        ranges_b = {lst.offset: lst for lst in c.cubin.ranges or []}
        for rng in c.ptx.ranges:
            where = f".debug_ranges+0x{rng.offset:x}"
            got = ranges_b.get(rng.offset)
            if got is None or len(got.entries) != len(rng.entries):
                c.differ(
                    where,
                    "list",
                    f"{len(rng.entries)} entries",
                    "missing" if got is None else f"{len(got.entries)} entries",
                )
                continue
            for k, ((b0, e0), (b1, e1)) in enumerate(zip(rng.entries, got.entries, strict=False)):
                for label, p, q in (("begin", b0, b1), ("end", e0, e1)):
                    c.expect_value(f"{where}[{k}]", label, p, q)
                c.inverted(f"{where}[{k}]", "range", (b0, e0), b1, e1)


def truncated_numbers(module: PtxModule, info: DebugInfo, report: CheckReport) -> None:
    """A difference for each ``.b64`` number of 2**32 or more: the PTX image holds what ptxas
    keeps (its low 32 bits, quirk wide-literal-truncated), the text said more."""
    for block in module.sections:
        image = block.image
        for offset, written in sorted(image.wide_values.items()):
            path, what = block.name, f"{block.name}+0x{offset:x}"
            if block.name == ".debug_info":
                die, attr = die_and_attribute_at(info, offset)
                if die is not None:
                    path = die_path(die)
                if attr is not None and die is not None:
                    found = next((a for a in die.attributes if a.name == attr), None)
                    what = attribute_title(found) if found is not None else at_name(attr)
            report.differences.append(
                Difference(
                    path,
                    what,
                    show(written),
                    show(written & 0xFFFFFFFF),
                    f"{image.source(offset) or block.name}: "
                    "ptxas keeps only the low 32 bits of a .b64 number (lint: wide-value)",
                )
            )
