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
from array import array
from typing import NamedTuple

from ..dwarf.image import Block
from ..dwarf.model import DIE, DebugInfo, Unit

__all__ = ["InfoSites", "UnitSites"]


class UnitSites(NamedTuple):
    """One unit of the PTX: its DIEs in tree order, their offsets, by DIE index the indices of
    the attributes that hold a relocation site, and the byte spans of the blocks that hold
    one."""

    dies: list[DIE]
    offsets: array[int]
    relocated: dict[int, list[int]]
    blocks: dict[int, list[tuple[int, int]]]
    """By DIE index, the [start, end) in ``.debug_info`` of each block that holds a site (its
    bytes, not its length)."""


class InfoSites:
    """The relocation sites of a PTX module's ``.debug_info`` and the bytes between them.
    Offsets are kept in arrays and the bytes in one object: a forked process that reads them
    copies few of this one's pages."""

    def __init__(self, info: DebugInfo) -> None:
        image = (info.sections or {}).get(".debug_info")
        self.size = len(image.data) if image is not None else -1
        relocs = sorted(image.relocs, key=operator.itemgetter(0)) if image is not None else []
        self.sites = frozenset(r.offset for r in relocs)
        """The offsets where a relocation site starts."""
        self.data = image.data if image is not None else b""
        """The PTX's ``.debug_info`` bytes."""
        self.segments = array("q")
        """Each run of bytes between two sites: its start and end, one after the other."""
        if image is not None:
            pos = 0
            for offset, size, _ in relocs:
                if offset > pos:
                    self.segments.extend((pos, offset))
                pos = max(pos, offset + size)
            if pos < len(self.data):
                self.segments.extend((pos, len(self.data)))
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
        mine, segments = self.data, self.segments
        startswith = data.startswith
        for k in range(0, len(segments), 2):
            start, end = segments[k], segments[k + 1]
            segment = mine[start:end]
            if not startswith(segment, start):
                _find_differences(segment, data, start, found)
        return found

    def in_site_block(self, unit: UnitSites, offset: int) -> bool:
        """Whether ``offset`` is inside the bytes of a block (not its length) that holds a
        relocation site: a change there leaves the tree's shape as it is."""
        i = bisect.bisect_right(unit.offsets, offset) - 1
        return i >= 0 and any(start <= offset < end for start, end in unit.blocks.get(i, ()))


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
    relocated = {i: sorted(found) for i, found in held.items()}
    blocks = {}
    for i, indices in relocated.items():
        die = dies[i]
        attrs = die.attributes
        spans = []
        for k in indices:
            value = attrs[k].innermost.value
            if isinstance(value, Block):
                end = attrs[k + 1].offset if k + 1 < len(attrs) else die.offset + die.size
                spans.append((end - len(value), end))
        if spans:
            blocks[i] = spans
    return UnitSites(dies, array("q", offsets), relocated, blocks)


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
