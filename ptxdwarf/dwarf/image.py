"""Section images: the bytes of one debug section with its symbolic values.

A value written in PTX as a label or a section name (``func_begin0``,
``_Z4testPi_param_0``, ``$L__str3+4``, ``.debug_abbrev``) is a :class:`Symbol`.
In a :class:`SectionImage` its bytes are zeros and a :class:`Reloc` records where
it goes; labels defined inside the section are kept by name and offset. The same
model holds a cubin's sections, whose relocations name ELF symbols.
"""

from __future__ import annotations

import bisect
import gc
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .reprs import counted, short

__all__ = ["DEBUG_SECTION_NAMES", "Block", "Reloc", "SectionImage", "Symbol", "end_of_list"]

#: The debug sections a PTX producer may write, in the order producers write them.
DEBUG_SECTION_NAMES = (
    ".debug_abbrev",
    ".debug_info",
    ".debug_loc",
    ".debug_ranges",
    ".debug_aranges",
    ".debug_pubnames",
    ".debug_pubtypes",
    ".debug_str",
    ".debug_macinfo",
    ".debug_line",
    ".debug_frame",
)


class Symbol:
    """A PTX label, symbol or section name plus a byte addend.

    ``value`` is the number the symbol stood for where that is known (a cubin whose
    relocations were applied); it takes no part in comparisons. Symbols are values:
    equal by name and addend, hashable, not to be changed.
    """

    __slots__ = ("addend", "name", "value")

    def __init__(self, name: str, addend: int = 0, value: int | None = None) -> None:
        self.name = name
        self.addend = addend
        self.value = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Symbol):
            return NotImplemented
        return self.name == other.name and self.addend == other.addend

    def __hash__(self) -> int:
        return hash((self.name, self.addend))

    def __repr__(self) -> str:
        value = f", value={self.value}" if self.value is not None else ""
        return f"Symbol({short(self.name)!r}, {self.addend}{value})"

    @property
    def is_section(self) -> bool:
        """True for a section name such as ``.debug_abbrev``."""
        return self.name.startswith(".")

    def __str__(self) -> str:
        if self.addend > 0:
            return f"{self.name}+{self.addend}"
        if self.addend < 0:
            return f"{self.name}-{-self.addend}"
        return self.name


class Reloc(NamedTuple):
    """A symbolic value of ``size`` bytes (4 or 8) at ``offset`` in its section."""

    offset: int
    size: int
    symbol: Symbol

    def moved(self, delta: int) -> Reloc:
        """The same relocation ``delta`` bytes further on."""
        return Reloc(self.offset + delta, self.size, self.symbol)

    def __repr__(self) -> str:
        return f"<Reloc at 0x{self.offset:x}, {self.size} bytes: {short(self.symbol)}>"


class Block(bytes):
    """The bytes of a block or expression, with the relocations inside it.

    ``relocs`` offsets are relative to the block's first byte.
    """

    relocs: tuple[Reloc, ...]

    def __new__(cls, data: bytes = b"", relocs: Any = ()) -> Block:
        self = super().__new__(cls, data)
        self.relocs = tuple(relocs)
        return self

    def __repr__(self) -> str:
        if self.relocs:
            return f"Block({bytes(self)!r}, relocs={self.relocs!r})"
        return f"Block({bytes(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Block):
            return bytes(self) == bytes(other) and self.relocs == other.relocs
        return bytes.__eq__(self, other)

    def __hash__(self) -> int:
        return bytes.__hash__(self)


def end_of_list(begin: object, end: object, unresolved: frozenset[str] = frozenset()) -> bool:
    """Whether a location or range list's (begin, end) pair is its (0, 0) end mark: two zeros,
    or relocations that resolved to 0 against local symbols nothing defines (``unresolved``,
    :attr:`~ptxdwarf.dwarf.image.SectionImage.unresolved`: labels ptxas dropped, which read 0
    wherever the cubin is loaded). A PTX label is never 0, though its bytes are."""
    return _reads_zero(begin, unresolved) and _reads_zero(end, unresolved)


def _reads_zero(value: object, unresolved: frozenset[str]) -> bool:
    if type(value) is int:
        return value == 0
    return type(value) is Symbol and value.value == 0 and value.name in unresolved


@dataclass(slots=True)
class SectionImage:
    """One section: bytes, relocations (sorted by offset), labels defined in it.

    ``fields`` maps offsets of multi-byte scalars to their width (2, 4 or 8) and
    ``breaks`` lists offsets where a new record starts; writers use both to lay
    out the text, readers of the bytes may ignore them. ``lines`` maps byte
    offsets back to the PTX lines they came from (sorted pairs), for messages.
    ``relocs_applied`` says the bytes at relocations already hold the resolved
    values (a cubin), rather than zeros (PTX text).
    """

    name: str
    data: bytes = b""
    relocs: list[Reloc] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    fields: dict[int, int] = field(default_factory=dict)
    breaks: list[int] = field(default_factory=list)
    line_offsets: array[int] = field(default_factory=lambda: array("q"))
    line_numbers: array[int] = field(default_factory=lambda: array("q"))
    wide_values: dict[int, int] = field(default_factory=dict)
    """Offset -> number as written, of each ``.b64``/``.quad`` number of 2**32 or more in the
    text: ptxas keeps only its low 32 bits, and so does the image (quirk wide-literal-truncated)."""
    filename: str | None = None
    relocs_applied: bool = False
    unresolved: frozenset[str] = frozenset()
    """The local symbols its relocations name that nothing defines (a cubin's labels ptxas
    dropped): each reads 0 wherever the cubin is loaded."""
    line_loader: Callable[[], tuple[array[int], array[int]]] | None = field(
        default=None, repr=False, compare=False
    )
    """Computes ``line_offsets``/``line_numbers`` on first use (the fast reader skips them)."""
    _reloc_offsets: list[int] | None = field(default=None, repr=False, compare=False)
    _reloc_map: dict[int, Reloc] | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        return (
            f"<SectionImage {short(self.name)}: {counted(len(self.data), 'byte')}, "
            f"{counted(len(self.relocs), 'reloc')}, {counted(len(self.labels), 'label')}>"
        )

    @property
    def reloc_map(self) -> dict[int, Reloc]:
        """Relocations by offset."""
        if self._reloc_map is None:
            self._reloc_map = {r.offset: r for r in self.relocs}
        return self._reloc_map

    @property
    def reloc_offsets(self) -> list[int]:
        """The offsets of :attr:`relocs`, in their order (by offset)."""
        if self._reloc_offsets is None:
            self._reloc_offsets = [r.offset for r in self.relocs]
        return self._reloc_offsets

    def relocs_in(self, start: int, end: int) -> list[Reloc]:
        """Relocations whose offset lies in ``[start, end)``."""
        if not self.relocs:
            return []
        offsets = self.reloc_offsets
        lo = bisect.bisect_left(offsets, start)
        hi = bisect.bisect_left(offsets, end, lo)
        return self.relocs[lo:hi]

    def ensure_lines(self) -> None:
        """Fill ``line_offsets``/``line_numbers`` if they were left for later."""
        if self.line_loader is not None:
            loader, self.line_loader = self.line_loader, None
            self.line_offsets, self.line_numbers = loader()

    def source_line(self, offset: int) -> int | None:
        """The PTX line that wrote the byte at ``offset``, when known."""
        self.ensure_lines()
        if not self.line_offsets:
            return None
        i = bisect.bisect_right(self.line_offsets, offset) - 1
        return self.line_numbers[i] if i >= 0 else None

    def source(self, offset: int) -> str | None:
        """``file:line`` of the byte at ``offset``; only the file (a cubin's name) when no line is
        known; None when neither is."""
        line = self.source_line(offset)
        if line is None:
            return self.filename
        return f"{self.filename or '<ptx>'}:{line}"

    def labels_by_offset(self) -> dict[int, list[str]]:
        """Label names grouped by offset, in definition order."""
        out: dict[int, list[str]] = {}
        for name, off in self.labels.items():
            out.setdefault(off, []).append(name)
        return out


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large model is built.

    Building a DIE tree allocates hundreds of thousands of objects that all stay
    alive; each generation-2 collection on the way walks all of them again. On the
    way out the collector sees them once, as young objects, so that what became
    garbage meanwhile (DIE trees are cycles) is collected as usual: a process that
    reads module after module keeps only what it holds.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
