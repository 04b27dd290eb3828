"""The repairs of the ``fix`` command, and the phases they run in.

A repair is a function marked with :func:`repairer`; the quirks of
:mod:`ptxdwarf.cuda.quirks` that it repairs name it (a dotted reference in ``repairs``),
so the measured fact, the lint rule that finds it and its repair are one registry
entry. Repairs run in phases: ``text`` repairs edit the PTX text around the
debug sections (:class:`TextJob`); ``image`` repairs change the section images before
they are decoded and ``model`` repairs the decoded DIEs (:class:`SectionJob`), after
which the sections are encoded again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..dwarf.encode import EncodeOptions
from ..dwarf.image import SectionImage
from ..dwarf.model import DebugInfo
from ..ptx.edits import TextEdits
from ..ptx.module import PtxModule

__all__ = ["PHASES", "REPAIRERS", "Repair", "Repairer", "SectionJob", "TextJob", "repairer"]

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

    def where(self, section: str | None = None, offset: int | None = None) -> str:
        """``file:line`` of a section offset (of the text as read), else the file."""
        if section is not None and offset is not None:
            block = next((b for b in self.module.sections if b.name == section), None)
            where = block.image.source(offset) if block is not None else None
            if where is not None:
                return where
        return self.module.filename


_F = TypeVar("_F", bound=Callable[..., list[Repair]])


@dataclass(frozen=True)
class Repairer:
    """A repair as the ``fix`` command runs it: the quirk it repairs, its phase, the function."""

    quirk: str
    phase: str
    apply: Callable[..., list[Repair]]
    ref: str


#: Every repair function, by its dotted reference, with its phase.
REPAIRERS: dict[str, str] = {}


def repairer(phase: str) -> Callable[[_F], _F]:
    """Make the decorated function a repair of ``phase``; the quirks it repairs name it
    in their ``repairs`` (:mod:`ptxdwarf.cuda.quirks`)."""
    if phase not in PHASES:
        raise ValueError(f"unknown repair phase {phase!r}")

    def register(fn: _F) -> _F:
        REPAIRERS[f"{fn.__module__}.{fn.__qualname__}"] = phase
        return fn

    return register
