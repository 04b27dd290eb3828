"""The repairs of the ``fix`` command, and the phases they run in.

A repair is a function registered with :func:`repair` for the quirks of
:mod:`ptxdwarf.cuda.quirks` it repairs, each of which names it in its ``repairs``: so
the measured fact, the lint rule that finds it and its repair are one registry entry.
A repair is given the lint findings it answers and repairs what they name. Repairs run
in phases: ``text`` repairs edit the PTX text around the debug sections
(:class:`TextJob`); ``image`` repairs change the section images before they are decoded
and ``model`` repairs the decoded DIEs (:class:`SectionJob`), after which the sections
are encoded again.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..cuda.quirks import Quirk, quirk
from ..dwarf.encode import EncodeOptions
from ..dwarf.image import SectionImage
from ..dwarf.model import DIE, Attribute, DebugInfo
from ..lint.finding import Finding
from ..ptx.edits import TextEdits
from ..ptx.module import PtxModule

__all__ = ["PHASES", "Repair", "Repairer", "SectionJob", "TextJob", "repair", "repairs_of"]

PHASES = ("text", "image", "model")


@dataclass(frozen=True)
class Repair:
    """One change ``fix`` made: the lint rule it answers, where (PTX ``file:line``) and what."""

    rule: str
    where: str
    change: str

    def __str__(self) -> str:
        return f"{self.where}: fixed[{self.rule}]: {self.change}"

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "where": self.where, "change": self.change}


@dataclass
class TextJob:
    """A text repair's work: the parsed module and the edits of its text."""

    module: PtxModule
    edits: TextEdits
    ptxas_version: str | None = None
    max_version: tuple[int, int] | None = None
    """The newest PTX ISA the target ptxas takes (None: any)."""

    def line_start(self, line: int) -> int:
        """The offset in the text where 1-based ``line`` starts."""
        return self.module.lines.start(line)

    def line_of(self, offset: int) -> int:
        """The 1-based line of ``offset``."""
        return self.module.lines.line(offset)

    def line_span(self, line: int) -> tuple[int, int]:
        """The offsets of 1-based ``line`` (its newline not included)."""
        return self.module.lines.span(line)

    def where(self, line: int | None) -> str:
        return f"{self.module.filename}:{line}" if line else self.module.filename

    def lines_of(self, findings: list[Finding]) -> list[int]:
        """The lines ``findings`` name, in order, each once."""
        return sorted({line for f in findings if (line := f.line) is not None})

    def labels_of(self, findings: list[Finding]) -> set[str]:
        """The names of the symbolic values at the section offsets of ``findings`` (the label
        a finding at a use of a label names)."""
        images = self.module.images(debug_only=True)
        names: set[str] = set()
        for f in findings:
            if f.section is not None and f.section in images and f.offset is not None:
                names.update(r.symbol.name for r in images[f.section].relocs_in(f.offset, f.offset + 1))
        return names


@dataclass
class SectionJob:
    """A section repair's work: the images (``image`` phase), then the decoded DWARF
    (``model`` phase) and the options it is encoded again with."""

    module: PtxModule
    images: dict[str, SectionImage]
    info: DebugInfo | None = None
    options: EncodeOptions = field(default_factory=lambda: EncodeOptions(keep_abbrevs=True))
    ptxas_version: str | None = None
    max_version: tuple[int, int] | None = None
    no_labels: bool = False
    """Write every reference to a label of a debug section as its number, and define no
    label in them (none that the code names): PTX ISA below 7.0 takes no labels there."""
    _dies: list[DIE] | None = field(default=None, repr=False)

    def where(self, section: str | None = None, offset: int | None = None) -> str:
        """``file:line`` of a section offset (of the text as read), else the file."""
        if section is not None and offset is not None:
            block = next((b for b in self.module.sections if b.name == section), None)
            where = block.image.source(offset) if block is not None else None
            if where is not None:
                return where
        return self.module.filename

    def die_of(self, finding: Finding) -> DIE | None:
        """The DIE of :attr:`info` that ``finding`` names by its ``.debug_info`` offset: the one
        with an attribute value there, else the one whose bytes hold it."""
        found = self.attribute_of(finding)
        if found is not None:
            return found[0]
        around = self._dies_around(finding)
        return around[-1] if around else None

    def attribute_of(self, finding: Finding) -> tuple[DIE, Attribute] | None:
        """The DIE and the attribute whose value is at the ``.debug_info`` offset of ``finding``
        (a value of no bytes, ``DW_FORM_flag_present``, may lie where the next DIE starts)."""
        for die in self._dies_around(finding):
            attr = next((a for a in die.attributes if a.value_offset == finding.offset), None)
            if attr is not None:
                return die, attr
        return None

    def _dies_around(self, finding: Finding) -> list[DIE]:
        """The DIE whose bytes hold the offset of ``finding`` in ``.debug_info``, after the DIE
        before it."""
        if self.info is None or finding.section != ".debug_info" or finding.offset is None:
            return []
        if self._dies is None:
            self._dies = sorted((d for d in self.info.iter_dies() if d.offset >= 0), key=lambda d: d.offset)
        i = bisect.bisect_right(self._dies, finding.offset, key=lambda d: d.offset)
        return self._dies[max(i - 2, 0) : i]


_F = TypeVar("_F", bound=Callable[..., list[Repair]])


@dataclass(frozen=True)
class Repairer:
    """A repair as the ``fix`` command runs it: the quirk it repairs, its phase, the function."""

    quirk: str
    phase: str
    apply: Callable[..., list[Repair]]

    @property
    def name(self) -> str:
        """The repair's name, as the quirk names it in its ``repairs``."""
        return self.apply.__name__


#: The registered repairs of each quirk, by quirk id.
_REPAIRERS: dict[str, list[Repairer]] = {}


def repair(*quirk_ids: str, phase: str) -> Callable[[_F], _F]:
    """Make the decorated function the ``phase`` repair of the quirks ``quirk_ids`` (each
    names it in its ``repairs``, :mod:`ptxdwarf.cuda.quirks`)."""
    if phase not in PHASES:
        raise ValueError(f"unknown repair phase {phase!r}")
    for id in quirk_ids:
        quirk(id)

    def register(fn: _F) -> _F:
        for id in quirk_ids:
            if fn.__name__ not in quirk(id).repairs:
                raise ValueError(f"quirk {id} does not name the repair {fn.__name__}")
            _REPAIRERS.setdefault(id, []).append(Repairer(id, phase, fn))
        return fn

    return register


def repairs_of(q: Quirk) -> list[Repairer]:
    """The repairs of quirk ``q``, in the order it names them. LookupError while one of them
    is not registered (its module, :mod:`.text` or :mod:`.sections`, not imported)."""
    registered = {r.name: r for r in _REPAIRERS.get(q.id, ())}
    missing = [name for name in q.repairs if name not in registered]
    if missing:
        raise LookupError(f"quirk {q.id}: repair {', '.join(missing)} not registered")
    return [registered[name] for name in q.repairs]
