"""The PTX's ``.debug_info`` by relocation site, found before the cubin is there.

ptxas copies the debug sections of a PTX module into the cubin and changes only the bytes
at their relocation sites (and, for a local-depot address, the expression around it). When
the cubin's ``.debug_info`` is so, the DIE walk (:mod:`.walk`) looks only at the
attributes that hold a site: the others cannot differ. :class:`InfoSites` holds what that
needs of the PTX side, and finds where a cubin's bytes differ outside the sites.
"""

from __future__ import annotations

import bisect
import operator
from typing import NamedTuple

from ..dwarf.model import DIE, DebugInfo, Unit
from ..dwarf.schemas import Block

__all__ = ["InfoSites", "UnitSites"]


class UnitSites(NamedTuple):
    """One unit of the PTX: its DIEs in tree order, their offsets, and by DIE index the
    indices of the attributes that hold a relocation site."""

    dies: list[DIE]
    offsets: list[int]
    relocated: dict[int, list[int]]


class InfoSites:
    """The relocation sites of a PTX module's ``.debug_info`` and the bytes between them."""

    def __init__(self, info: DebugInfo) -> None:
        image = (info.sections or {}).get(".debug_info")
        self.size = len(image.data) if image is not None else -1
        relocs = sorted(image.relocs, key=operator.itemgetter(0)) if image is not None else []
        self.sites = frozenset(r.offset for r in relocs)
        """The offsets where a relocation site starts."""
        self.segments: list[tuple[int, bytes]] = []
        """Each run of bytes between two sites: (offset, bytes)."""
        if image is not None:
            data, pos = image.data, 0
            for offset, size, _ in relocs:
                if offset > pos:
                    self.segments.append((pos, data[pos:offset]))
                pos = max(pos, offset + size)
            if pos < len(data):
                self.segments.append((pos, data[pos:]))
        self.units: dict[int, UnitSites] = {}
        spans = [(r.offset, r.size) for r in relocs]
        for unit in info.units:
            self.units[unit.offset] = _unit_sites(unit, spans)

    def differing(self, data: bytes, relocated_at: list[int]) -> list[int] | None:
        """The offsets, in order, where ``data`` (a cubin's ``.debug_info``, with relocations at
        ``relocated_at``) differs from the PTX's bytes outside the sites; None when the sizes
        differ or the cubin has a relocation where the PTX has no site."""
        if len(data) != self.size or not self.sites.issuperset(relocated_at):
            return None
        found: list[int] = []
        startswith = data.startswith
        for offset, segment in self.segments:
            if not startswith(segment, offset):
                _find_differences(segment, data, offset, found)
        return found

    def in_site_block(self, unit: UnitSites, offset: int) -> bool:
        """Whether ``offset`` is inside the bytes of a block (not its length) that holds a
        relocation site: a change there leaves the tree's shape as it is."""
        i = bisect.bisect_right(unit.offsets, offset) - 1
        if i < 0 or i not in unit.relocated:
            return False
        die = unit.dies[i]
        attrs = die.attributes
        for k in unit.relocated[i]:
            value = attrs[k].innermost.value
            if not isinstance(value, Block):
                continue
            end = attrs[k + 1].offset if k + 1 < len(attrs) else die.offset + die.size
            if end - len(value) <= offset < end:
                return True
        return False


def _unit_sites(unit: Unit, sites: list[tuple[int, int]]) -> UnitSites:
    """``unit``'s :class:`UnitSites`; ``sites``: (offset, size) of every site, in order."""
    dies = list(unit.iter_dies())
    offsets = [d.offset for d in dies]
    held: dict[int, set[int]] = {}
    if dies:
        lo = bisect.bisect_left(sites, (offsets[0], 0))
        hi = bisect.bisect_left(sites, (unit.end, 0))
        i, starts = -1, []
        for site, size in sites[lo:hi]:
            at = bisect.bisect_right(offsets, site, max(i, 0)) - 1
            if at != i:
                i, starts = at, [a.offset for a in dies[at].attributes]
            # every attribute the site's bytes meet, whether or not the decoder took it as a symbol
            first = max(bisect.bisect_right(starts, site) - 1, 0)
            held.setdefault(i, set()).update(range(first, bisect.bisect_left(starts, site + size)))
    return UnitSites(dies, offsets, {i: sorted(found) for i, found in held.items()})


def _find_differences(segment: bytes, data: bytes, offset: int, found: list[int]) -> None:
    """Append the offsets where ``data`` differs from ``segment`` placed at ``offset``."""
    pending = [(0, len(segment))]
    while pending:
        start, end = pending.pop()
        if data.startswith(segment[start:end], offset + start):
            continue
        if end - start <= 16:
            found.extend(offset + i for i in range(start, end) if data[offset + i] != segment[i])
        else:
            middle = (start + end) // 2
            pending.append((middle, end))
            pending.append((start, middle))
