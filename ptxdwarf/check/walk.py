"""The two ``.debug_info`` trees walked side by side: the PTX's DIEs against the cubin's."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from .._native import twin
from ..dwarf.constants import AT, FORM, tag_name
from ..dwarf.image import Block, Symbol
from ..dwarf.model import DIE, Attribute, Unit
from .expect import Expectations
from .plan import SCALAR_RELOC_FORMS, LocalPlaces, label_of
from .show import attribute_names, show, show_hex

__all__ = ["DieWalk", "walk_by_sites"]


_LOW_PC, _HIGH_PC = int(AT.low_pc), int(AT.high_pc)
_PC_RANGE = "DW_AT_low_pc..DW_AT_high_pc"


class DieWalk(Expectations):
    """The two DIE trees walked side by side, each attribute against what it must have become."""

    _differing: list[int] | bool | None = False

    def compare_units(self) -> None:
        mine, theirs = self.ptx.units, self.cubin.units
        if len(mine) != len(theirs):
            self.differ("<module>", ".debug_info", f"{len(mine)} unit(s)", f"{len(theirs)} unit(s)")
        for a, b in zip(mine, theirs, strict=False):
            self.report.units += 1
            where = f"<unit at 0x{a.offset:x}>"
            for field_name in ("offset", "length", "version", "address_size"):
                if getattr(a, field_name) != getattr(b, field_name):
                    self.differ(where, field_name, getattr(a, field_name), getattr(b, field_name))
            if a.die is not None and b.die is not None:
                self.compare_tree(a, b)

    def compare_tree(self, unit: Unit, other: Unit) -> None:
        unchanged = self.unchanged_dies(unit, other)
        if unchanged is not None and self.compare_by_sites(unit, other):
            return
        stack = [(unit.die, other.die)]
        dies = 0
        while stack:
            a, b = stack.pop()
            assert a is not None and b is not None
            dies += 1
            path = a
            if a.offset != b.offset or a.tag != b.tag:
                self.differ(
                    path,
                    "DIE",
                    f"{tag_name(a.tag)} at 0x{a.offset:x}",
                    f"{tag_name(b.tag)} at 0x{b.offset:x}",
                )
                continue
            if unchanged is None or not unchanged(a, b):
                self.compare_attributes(path, a, b, unit.address_size)
                self.inverted_pc(a, b)
            if len(a.children) != len(b.children):
                self.differ(path, "children", len(a.children), len(b.children))
            if a.children and b.children:
                stack.extend(reversed(list(zip(a.children, b.children, strict=False))))
        self.report.dies += dies

    def compare_by_sites(self, unit: Unit, other: Unit) -> bool:
        """:meth:`compare_tree` by relocation site (:mod:`.sites`), when the cubin's bytes differ
        from the PTX's only at the sites and inside the blocks that hold one: the attributes
        that hold a site compared, in the same order and with the same results as a walk of
        every DIE. False, having done nothing, when the cubin is not so."""
        sites = self.site_table()
        mine = sites.units.get(unit.offset)
        differing = self.differing()
        if mine is None or differing is None:
            return False
        lo = bisect.bisect_left(differing, unit.offset)
        hi = bisect.bisect_left(differing, unit.end)
        if not all(sites.in_site_block(mine, at) for at in differing[lo:hi]):
            return False
        theirs = list(other.iter_dies())
        dies = mine.dies
        plan = self.comparison_plan().units[unit.offset]
        if len(theirs) != len(dies) or any(
            theirs[i].offset != offset for i, offset in zip(plan.order, plan.offsets, strict=True)
        ):
            return False
        asize = unit.address_size

        def differ(i: int, k: int, y: Attribute) -> None:
            a = dies[i]
            self.compare_attribute(a, a.attributes[k], y, asize)

        def invert(i: int, ptx: tuple[object, object], begin: Symbol, end: Symbol) -> None:
            self.inverted(dies[i], _PC_RANGE, ptx, begin, end)

        symbols = walk_by_sites(
            theirs,
            plan.order,
            plan.attributes,
            plan.pcs,
            self.placed,
            self._local_expressions,
            asize,
            differ,
            invert,
        )
        self.report.symbols += symbols
        self.report.dies += len(dies)
        return True

    def differing(self) -> list[int] | None:
        """:meth:`~.sites.InfoSites.differing` of the cubin's ``.debug_info`` (found once)."""
        if self._differing is False:
            image = (self.cubin.sections or {}).get(".debug_info")
            self._differing = (
                None
                if image is None
                else self.site_table().differing(image.data, [r.offset for r in image.relocs])
            )
        return self._differing  # type: ignore[return-value]

    def unchanged_dies(self, unit: Unit, other: Unit) -> Callable[[DIE, DIE], bool] | None:
        """A test for a DIE pair whose attributes cannot differ: the same bytes, and no
        relocation in them on either side. None when the two units do not decode their
        bytes alike (header, abbreviations or strings differ)."""
        mine, theirs = self.ptx.sections or {}, self.cubin.sections or {}
        info_a, info_b = mine.get(".debug_info"), theirs.get(".debug_info")
        if info_a is None or info_b is None:
            return None
        for name in (".debug_abbrev", ".debug_str"):
            a, b = mine.get(name), theirs.get(name)
            if (a.data if a is not None else b"") != (b.data if b is not None else b""):
                return None
        if (unit.offset, unit.version, unit.address_size, unit.abbrevs) != (
            other.offset,
            other.version,
            other.address_size,
            other.abbrevs,
        ):
            return None
        data_a, data_b = info_a.data, info_b.data
        sites_a = [r.offset for r in info_a.relocs]
        sites_b = [r.offset for r in info_b.relocs]

        def unchanged(a: DIE, b: DIE) -> bool:
            start, end = a.offset, a.offset + a.size
            if a.size <= 0 or b.size != a.size or data_a[start:end] != data_b[start:end]:
                return False
            # a relocation of up to 8 bytes that starts before the DIE may reach into it
            for sites in (sites_a, sites_b):
                i = bisect.bisect_left(sites, start - 7)
                if i < len(sites) and sites[i] < end:
                    return False
            return True

        return unchanged

    def inverted_pc(self, a: DIE, b: DIE) -> None:
        """DW_AT_low_pc/DW_AT_high_pc of the cubin's ``b`` inverted (see :meth:`inverted`)."""
        low = high = None
        for attr in b.attributes:
            if attr.name == _LOW_PC and low is None:
                low = attr
            elif attr.name == _HIGH_PC and high is None:
                high = attr
        if low is None or high is None or not low.relocs or not high.relocs:
            return
        mine = (label_of(a.attr(AT.low_pc)), label_of(a.attr(AT.high_pc)))
        self.inverted(a, _PC_RANGE, mine, low.relocs[0].symbol, high.relocs[0].symbol)

    def compare_attributes(self, path: str | DIE, a: DIE, b: DIE, asize: int) -> None:
        if [(x.name, x.form) for x in a.attributes] != [(y.name, y.form) for y in b.attributes]:
            self.differ(path, "attributes", attribute_names(a), attribute_names(b))
            return
        for x, y in zip(a.attributes, b.attributes, strict=False):
            self.compare_attribute(path, x, y, asize)

    def compare_attribute(self, path: str | DIE, x: Attribute, y: Attribute, asize: int) -> None:
        """One attribute of the PTX (``x``) and the same of the cubin (``y``)."""
        outer = x
        while isinstance(x.value, Attribute) and isinstance(y.value, Attribute):
            x, y = x.value, y.value
        if isinstance(x.value, Block):
            if x.relocs or x.is_expression:
                self.expect_expression(path, outer, x.value, y.value, asize)
            elif bytes(x.value) != bytes(y.value):
                self.differ(path, outer, list(x.value), list(y.value))
            return
        if x.form == FORM.strp or isinstance(x.value, str):
            if x.relocs:
                before = len(self.report.differences)
                self.expect_symbol(
                    path, outer, x.relocs[0].symbol, None, y.target if y.target is not None else -1
                )
                if len(self.report.differences) > before:
                    wrong = self.report.differences.pop()
                    self.differ(
                        path,
                        outer,
                        repr(x.value),
                        repr(y.value),
                        f"{wrong.ptx} became {wrong.cubin}: {wrong.message}",
                    )
                    return
            if x.value != y.value:
                self.differ(path, outer, repr(x.value), repr(y.value))
            return
        if x.relocs and x.form in SCALAR_RELOC_FORMS:
            got = y.relocs[0].symbol if y.relocs else None
            self.expect_symbol(path, outer, x.relocs[0].symbol, got, y.value)
            if got is not None:
                self.placed.setdefault(x.relocs[0].symbol.name, got)
            return
        if x.is_reference:
            if x.target != y.target:
                self.differ(path, outer, show_hex(x.target), show_hex(y.target))
            return
        if x.value != y.value:
            self.differ(path, outer, show(x.value), show(y.value))


@twin("compare", checkable=False)
def walk_by_sites(
    theirs: list[DIE],
    order: Sequence[int],
    attributes: list[list[tuple[int, str | None, int | None, str, LocalPlaces | None]]],
    pcs: list[tuple[int, int, tuple[object, object]] | None],
    placed: dict[str, Symbol],
    local_counts: dict[tuple[object, ...], int],
    asize: int,
    differ: Callable[[int, int, Attribute], None],
    invert: Callable[[int, tuple[object, object], Symbol, Symbol], None],
) -> int:
    """The loop of :meth:`DieWalk.compare_by_sites` over a unit's plan (``order``,
    ``attributes``, ``pcs``: a :class:`~.plan.UnitPlan`'s) against the cubin's DIEs ``theirs``, in
    tree order: the symbols it finds where they must be (recording each code label's
    relocation in ``placed``, first found first; ``local_counts``: the symbols of expressions of
    local-space variables compared before, by expression). ``differ(i, k, y)`` compares any
    other attribute ``k`` of DIE ``i`` with the cubin's ``y``; ``invert(i, ptx, begin, end)``
    says DIE ``i``'s code range ends before it begins."""
    symbols = 0
    for i, attrs, pc in zip(order, attributes, pcs, strict=True):
        attrs_b = theirs[i].attributes
        for k, function, offset, label, local in attrs:
            y = attrs_b[k]
            # what compare_attribute asks of a code label or a section offset, and records;
            # an expression of local-space variables the like of which was compared before
            if function is not None and y.relocs:
                got = y.relocs[0].symbol
                if got.name == function and got.addend != 0:
                    symbols += 1
                    placed.setdefault(label, got)
                    continue
            elif offset is not None and y.value == offset:
                symbols += 1
                if y.relocs:
                    placed.setdefault(label, y.relocs[0].symbol)
                continue
            elif local is not None and type(y.value) is Block and not y.value.relocs:
                counted = local_counts.get((local[0], bytes(y.value), local[1], asize))
                if counted is not None:
                    symbols += counted
                    continue
            differ(i, k, y)
        if pc is not None:
            low, high = attrs_b[pc[0]].relocs, attrs_b[pc[1]].relocs
            if low and high:
                begin, end = low[0].symbol, high[0].symbol
                if begin.name == end.name and begin.addend > end.addend:  # else inverted finds nothing
                    invert(i, pc[2], begin, end)
    return symbols
