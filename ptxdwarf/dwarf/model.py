"""The DIE model both sides meet in: units, DIEs, attributes, and the other sections.

Decoding fills it from section bytes; the builder fills it from a code
generator's description; encoding turns it back into bytes. Attribute values are
plain Python values typed by their form (see :class:`Attribute`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

from .._native import twin
from .constants import (
    AT,
    EXPRESSION_ATTRIBUTES,
    FORM,
    TAG,
    at_code,
    at_name,
    form_code,
    form_name,
    tag_code,
    tag_name,
)
from .image import Block, Reloc, SectionImage, Symbol
from .reprs import at, counted, short

if TYPE_CHECKING:
    from .lines import LineProgram, LineTable

__all__ = [
    "DIE",
    "REFERENCE_FORMS",
    "AbbrevDecl",
    "AbbrevTable",
    "ArangeSet",
    "Attribute",
    "DebugInfo",
    "DebugSource",
    "LocationList",
    "MacinfoUnit",
    "NameSet",
    "RangeList",
    "StringTable",
    "Unit",
    "die_path",
]

#: Forms whose value is an offset of a DIE in the same unit.
REFERENCE_FORMS = frozenset({FORM.ref1, FORM.ref2, FORM.ref4, FORM.ref8, FORM.ref_udata})
STRING_FORMS = frozenset({FORM.string, FORM.strp})

_AT_CACHE: dict[str, int] = {}


_FORM_CACHE: dict[str, int] = {}


def cached_form_code(name: str) -> int:
    """:func:`~.constants.form_code` of ``name``, remembered."""
    code = _FORM_CACHE.get(name)
    if code is None:
        code = _FORM_CACHE[name] = form_code(name)
    return code


def cached_at_code(name: str | int) -> int:
    """:func:`~.constants.at_code` of ``name`` (a code as it is), remembered."""
    if isinstance(name, int):
        return name
    code = _AT_CACHE.get(name)
    if code is None:
        code = _AT_CACHE[name] = at_code(name)
    return code


class Attribute:
    """One attribute of a DIE.

    ``name`` and ``form`` are DWARF codes (``form`` may be None in a built tree:
    the encoder then picks one from the value). ``value`` by form class:

    - address, constant, flag, section offset: ``int`` (an address that is a symbol
      holds the number the symbol stands for where known, else its addend);
    - string and strp: ``str`` (bytes that are not UTF-8 are kept as surrogate escapes);
    - block and exprloc: :class:`~ptxdwarf.dwarf.schemas.Block` (bytes with their relocations);
    - reference: ``int`` as stored (unit-relative), or the target :class:`DIE` in a built tree;
      ``target`` then holds the absolute ``.debug_info`` offset;
    - ``flag_present``: ``True``;
    - ``indirect``: the inner :class:`Attribute`, which has the real form.

    ``relocs`` are the symbols in the value, offsets relative to the value's first byte.

    ``offset`` is where the attribute's bytes start in ``.debug_info`` when it was
    decoded (-1 otherwise); for ``indirect``, the form code's, while the inner
    attribute's is its value's (see :attr:`value_offset`).
    """

    __slots__ = ("form", "name", "offset", "relocs", "target", "value")

    def __init__(
        self,
        name: int,
        form: int | None,
        value: Any,
        relocs: tuple[Reloc, ...] = (),
        target: Any = None,
        offset: int = -1,
    ) -> None:
        self.name = name
        self.form = form
        self.value = value
        self.relocs = relocs
        self.target = target
        self.offset = offset

    @property
    def name_str(self) -> str:
        """``DW_AT_name``."""
        return at_name(self.name)

    @property
    def form_str(self) -> str:
        """``DW_FORM_string`` (``None`` when the form is left to the encoder)."""
        return form_name(self.form) if self.form is not None else "None"

    @property
    def innermost(self) -> Attribute:
        """The attribute with the real form, past any ``DW_FORM_indirect``."""
        a = self
        while isinstance(a.value, Attribute):
            a = a.value
        return a

    @property
    def value_offset(self) -> int:
        """Where the value proper starts in ``.debug_info`` (past any ``DW_FORM_indirect``
        form codes); -1 when the attribute was not decoded."""
        return self.innermost.offset

    @property
    def symbol(self) -> Symbol | None:
        """The symbol a scalar value is (``func_begin0``, ``.debug_line``), if any."""
        if self.relocs and self.relocs[0].offset == 0 and not isinstance(self.value, Block):
            return self.relocs[0].symbol
        return None

    @property
    def is_reference(self) -> bool:
        """True for a reference to a DIE (ref1/2/4/8/udata, ref_addr, or a DIE value)."""
        return self.form in REFERENCE_FORMS or self.form == FORM.ref_addr or isinstance(self.value, DIE)

    @property
    def is_expression(self) -> bool:
        """True when the value is a block holding a DWARF expression."""
        return (
            isinstance(self.value, (bytes, bytearray))
            and (self.form == FORM.exprloc or self.name in EXPRESSION_ATTRIBUTES)
            and self.form not in STRING_FORMS
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Attribute):
            return NotImplemented
        return (
            self.name == other.name
            and self.form == other.form
            and self.value == other.value
            and self.relocs == other.relocs
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        value = self.value
        if isinstance(value, DIE):
            shown = f"-> {value!r}"
        elif isinstance(value, bytes):
            shown = f"<{counted(len(value), 'byte')}>"
        else:
            shown = short(repr(value))
        extra = f", {counted(len(self.relocs), 'reloc')}" if self.relocs else ""
        return f"Attribute({self.name_str}, {self.form_str}, {shown}{extra})"


class DIE:
    """A debugging information entry: tag, ordered attributes, children.

    ``offset`` is the DIE's offset in ``.debug_info`` (that of its abbreviation
    code; -1 when built), ``size`` the number of bytes of its code and attributes,
    children not included (-1 when built). ``abbrev_code`` is the abbreviation it
    was read with or must be written with (None: the encoder picks).
    ``has_children`` says whether the abbreviation has children, which a DIE may
    have with none.
    """

    __slots__ = ("abbrev_code", "attributes", "children", "has_children", "offset", "parent", "size", "tag")

    def __init__(
        self,
        tag: int | str,
        attributes: Sequence[Attribute] | None = None,
        children: Sequence[DIE] | None = None,
        *,
        offset: int = -1,
        abbrev_code: int | None = None,
        has_children: bool | None = None,
    ) -> None:
        self.tag = tag_code(tag) if isinstance(tag, str) else tag
        self.attributes: list[Attribute] = list(attributes or ())
        self.children: list[DIE] = list(children or ())
        self.offset = offset
        self.size = -1
        self.abbrev_code = abbrev_code
        self.has_children = bool(self.children) if has_children is None else has_children
        self.parent: DIE | None = None
        for child in self.children:
            child.parent = self

    @property
    def tag_str(self) -> str:
        """``DW_TAG_subprogram``."""
        return tag_name(self.tag)

    def attr(self, name: str | int) -> Attribute | None:
        """The attribute ``name`` (``"DW_AT_name"``, ``"name"`` or a code), or None."""
        code = cached_at_code(name)
        for a in self.attributes:
            if a.name == code:
                return a
        return None

    def get(self, name: str | int, default: Any = None) -> Any:
        """The value of attribute ``name`` (through ``DW_FORM_indirect``), or ``default``."""
        a = self.attr(name)
        if a is None:
            return default
        return a.innermost.value

    def __getitem__(self, name: str | int) -> Any:
        if self.attr(name) is None:
            raise KeyError(name)
        return self.get(name)

    def __contains__(self, name: str | int) -> bool:
        return self.attr(name) is not None

    @property
    def name(self) -> str | None:
        """``DW_AT_name`` if it is a string."""
        value = self.get(AT.name)
        return value if isinstance(value, str) else None

    @property
    def address_class(self) -> int | None:
        """``DW_AT_address_class``, if present."""
        value = self.get(AT.address_class)
        return value if isinstance(value, int) else None

    def add(self, name: str | int, value: Any, form: str | int | None = None) -> Attribute:
        """Append an attribute; ``form`` None lets the encoder choose."""
        if form is not None and not isinstance(form, int):
            form = cached_form_code(form)
        attr = Attribute(name if isinstance(name, int) else cached_at_code(name), form, value)
        self.attributes.append(attr)
        return attr

    def add_child(self, child: DIE) -> DIE:
        """Append ``child`` and return it."""
        child.parent = self
        self.children.append(child)
        self.has_children = True
        return child

    def value_spans(self) -> list[tuple[int, int]]:
        """``(offset, size)`` in ``.debug_info`` of each attribute's value (past any
        ``DW_FORM_indirect`` form codes), in order; empty when the DIE was not decoded."""
        attrs = self.attributes
        if self.size < 0 or any(a.offset < 0 for a in attrs):
            return []
        ends = [a.offset for a in attrs[1:]]
        ends.append(self.offset + self.size)
        spans = []
        for a, end in zip(attrs, ends, strict=False):
            start = a.value_offset
            spans.append((start, end - start))
        return spans

    def iter_subtree(self) -> Iterator[DIE]:
        """This DIE and all below it, depth first, without recursion."""
        stack = [self]
        while stack:
            die = stack.pop()
            yield die
            stack.extend(reversed(die.children))

    def __repr__(self) -> str:
        return f"<DIE {self._shown(short)}>"

    def describe(self) -> str:
        """``DW_TAG_formal_parameter 'p' at 0xac`` for messages."""
        return self._shown(str)

    def _shown(self, name_text: Callable[[str], str]) -> str:
        name = self.name
        at = f" at 0x{self.offset:x}" if self.offset >= 0 else ""
        return f"{self.tag_str}{' ' + repr(name_text(name)) if name else ''}{at}"


def die_path(die: DIE, parent_path: str | None = None) -> str:
    """``_Z4testPi/p``: the names from the unit down (linkage names for functions).
    ``parent_path``: the path of ``die.parent``, when the caller has it."""
    if die.parent is None:
        return die.name or f"<{tag_name(die.tag)[7:]} 0x{die.offset:x}>"
    if parent_path is None:
        parts = []
        d: DIE | None = die.parent
        while d is not None and d.parent is not None:
            parts.append(_path_part(d))
            d = d.parent
        parent_path = "/".join(reversed(parts))
    part = _path_part(die)
    return f"{parent_path}/{part}" if parent_path else part


def _path_part(die: DIE) -> str:
    name = die.get(AT.linkage_name) or die.get(AT.MIPS_linkage_name) if die.tag == TAG.subprogram else None
    return str(name or die.name or f"<{tag_name(die.tag)[7:]} 0x{die.offset:x}>")


@dataclass(frozen=True, slots=True)
class AbbrevDecl:
    """An abbreviation declaration."""

    code: int
    tag: int
    has_children: bool
    specs: tuple[tuple[int, int], ...]
    """(attribute, form) pairs in order."""
    offset: int = field(default=-1, compare=False)
    """Where the declaration starts in ``.debug_abbrev`` when it was decoded, else -1."""

    def __repr__(self) -> str:
        children = ", children" if self.has_children else ""
        return (
            f"<AbbrevDecl {self.code} {tag_name(self.tag)}{children}: "
            f"{counted(len(self.specs), 'attribute')}{at(self.offset)}>"
        )


@dataclass(slots=True)
class AbbrevTable:
    """An abbreviation table at ``offset`` in ``.debug_abbrev``."""

    offset: int = 0
    decls: list[AbbrevDecl] = field(default_factory=list)

    def by_code(self) -> dict[int, AbbrevDecl]:
        return {d.code: d for d in self.decls}

    def __repr__(self) -> str:
        return f"<AbbrevTable at 0x{self.offset:x}: {counted(len(self.decls), 'declaration')}>"


@dataclass(slots=True)
class Unit:
    """A ``.debug_info`` unit: header fields and its root DIE.

    ``abbrev_offset`` may be a :class:`Symbol` (``.debug_abbrev`` in PTX text).
    ``length`` is the stored ``unit_length``; ``tail`` holds bytes after the DIE
    tree inside that length, ``open_scopes`` the number of child lists the unit
    ended without closing; both are kept so a rewrite is exact.
    """

    version: int = 2
    address_size: int = 8
    abbrev_offset: int | Symbol = 0
    die: DIE | None = None
    offset: int = -1
    length: int = 0
    abbrevs: AbbrevTable | None = None
    tail: bytes = b""
    open_scopes: int = 0

    def iter_dies(self) -> Iterator[DIE]:
        """Every DIE of the unit, depth first."""
        if self.die is not None:
            yield from self.die.iter_subtree()

    @property
    def end(self) -> int:
        """Offset just past the unit."""
        return self.offset + 4 + self.length

    def __repr__(self) -> str:
        root = f": {self.die!r}" if self.die is not None else ""
        return f"<Unit v{self.version}{at(self.offset)}, {counted(self.length, 'byte')}{root}>"


@dataclass(slots=True)
class StringTable:
    """``.debug_str``: strings in order with their offsets."""

    offsets: list[int] = field(default_factory=list)
    strings: list[bytes] = field(default_factory=list)
    size: int = 0

    def add(self, raw: bytes) -> int:
        """Append a string; return its offset."""
        offset = self.size
        self.offsets.append(offset)
        self.strings.append(raw)
        self.size += len(raw) + 1
        return offset

    def lookup(self, offset: int) -> bytes | None:
        """The string at ``offset`` (which may point inside a stored string)."""
        i = bisect.bisect_right(self.offsets, offset) - 1
        if i < 0 or offset >= self.size:
            return None
        return self.strings[i][offset - self.offsets[i] :]

    def __repr__(self) -> str:
        return f"<StringTable {counted(len(self.strings), 'string')}, {counted(self.size, 'byte')}>"


@dataclass(slots=True)
class LocationList:
    """A ``.debug_loc`` list: entries (begin, end, expression); an entry whose
    expression is None selects a base address."""

    offset: int = -1
    entries: list[tuple[int | Symbol, int | Symbol, Block | None]] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<LocationList{at(self.offset)}: {counted(len(self.entries), 'entry', 'entries')}>"


@dataclass(slots=True)
class RangeList:
    """A ``.debug_ranges`` list of (begin, end) pairs."""

    offset: int = -1
    entries: list[tuple[int | Symbol, int | Symbol]] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<RangeList{at(self.offset)}: {counted(len(self.entries), 'range')}>"


@dataclass(slots=True)
class NameSet:
    """A ``.debug_pubnames`` or ``.debug_pubtypes`` set."""

    unit_offset: int | Symbol | Unit = 0
    unit_length: int | None = None
    entries: list[tuple[int | DIE, str]] = field(default_factory=list)
    version: int = 2
    offset: int = -1
    rest: bytes = b""

    def __repr__(self) -> str:
        return f"<NameSet{at(self.offset)}: {counted(len(self.entries), 'name')}>"


@dataclass(slots=True)
class ArangeSet:
    """A ``.debug_aranges`` set: (begin address, length) tuples for one unit."""

    unit_offset: int | Symbol | Unit = 0
    tuples: list[tuple[int | Symbol, int | Symbol]] = field(default_factory=list)
    version: int = 2
    address_size: int = 8
    segment_size: int = 0
    padding: bytes | None = None
    offset: int = -1
    rest: bytes = b""

    def __repr__(self) -> str:
        return f"<ArangeSet{at(self.offset)}: {counted(len(self.tuples), 'range')}>"


@dataclass(slots=True)
class MacinfoUnit:
    """The ``.debug_macinfo`` entries of one unit, as (type, fields) pairs."""

    offset: int = -1
    entries: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<MacinfoUnit{at(self.offset)}: {counted(len(self.entries), 'entry', 'entries')}>"


_T = TypeVar("_T")


class _Lazy(Generic[_T]):
    """A part of :class:`DebugInfo` decoded on first use: by the loader that
    ``DebugInfo._lazy`` holds under the part's name, into ``DebugInfo._<name>``.
    Setting the part drops its loader."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self.name = self.slot = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.slot = name, "_" + name

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> _Lazy[_T]: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> _T: ...
    def __get__(self, obj: object | None, objtype: type | None = None) -> _T | _Lazy[_T]:
        if obj is None:
            return self
        loader = obj._lazy.pop(self.name, None)  # type: ignore[attr-defined]
        if loader is not None:
            setattr(obj, self.slot, loader())
        return getattr(obj, self.slot)  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: _T) -> None:
        obj._lazy.pop(self.name, None)  # type: ignore[attr-defined]
        setattr(obj, self.slot, value)


class DebugSource(Protocol):
    """What a :class:`DebugInfo` was read from: a PTX module
    (:class:`~ptxdwarf.ptx.reader.PtxModule`) or a cubin's sections
    (:class:`~ptxdwarf.cuda.cubin.CubinImages`). The model asks only its name; a caller
    that wants more asks which of the two it is (``isinstance``)."""

    @property
    def filename(self) -> str:
        """The file it came from, as messages name it."""
        ...


@twin("decode")
def die_index(units: list[Unit]) -> dict[int, DIE]:
    """The DIEs of ``units`` that have an offset, by offset (of two at one offset, the later
    one in the walk of each unit's DIEs)."""
    return {d.offset: d for unit in units for d in unit.iter_dies() if d.offset >= 0}


@dataclass
class DebugInfo:
    """Everything the debug sections of one PTX module or cubin say.

    ``sections`` keeps the images the model was read from (None for a built
    model); ``raw`` holds sections ptxdwarf has no schema for, kept as they are.
    """

    units: list[Unit] = field(default_factory=list)
    abbrev_tables: list[AbbrevTable] = field(default_factory=list)
    strings: StringTable | None = None
    sections: Mapping[str, SectionImage] | None = None
    _locations: list[LocationList] | None = field(default=None, repr=False)
    _ranges: list[RangeList] | None = field(default=None, repr=False)
    _pubnames: list[NameSet] | None = field(default=None, repr=False)
    _pubtypes: list[NameSet] | None = field(default=None, repr=False)
    _aranges: list[ArangeSet] | None = field(default=None, repr=False)
    _macinfo: list[MacinfoUnit] | None = field(default=None, repr=False)
    _lines: list[LineProgram] | None = field(default=None, repr=False)
    _raw: dict[str, SectionImage] = field(default_factory=dict, repr=False)
    _labels: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)
    _lazy: dict[str, Callable[[], Any]] = field(default_factory=dict, repr=False)
    """Loaders of the parts decoded on first use (location lists, name sets, ...)."""
    source: str = "built"
    filename: str | None = None
    module: DebugSource | None = None
    """What the model was read from (None for a built model)."""
    resolver: Callable[[Symbol], int] | None = field(default=None, repr=False)
    _by_offset: dict[int, DIE] | None = field(default=None, repr=False)
    _starts: tuple[list[int], list[DIE]] | None = field(default=None, repr=False)
    _loc_index: tuple[list[LocationList], int, dict[int, LocationList]] | None = field(
        default=None, repr=False, compare=False
    )
    """The lists :meth:`location_list_at` indexed, their number then, and the index."""
    notes: list[str] = field(default_factory=list)
    """What the reader noticed and worked around, not an error (bytes of ``.debug_loc`` no DIE
    refers to and no list can be read from, skipped)."""

    def iter_dies(self) -> Iterator[DIE]:
        """Every DIE of every unit, depth first, in section order."""
        for unit in self.units:
            yield from unit.iter_dies()

    def __repr__(self) -> str:
        name = f" {short(self.filename)!r}" if self.filename else ""
        sections = f", {counted(len(self.sections), 'section')}" if self.sections is not None else ""
        return f"<DebugInfo {self.source}{name}: {counted(len(self.units), 'unit')}{sections}>"

    locations = _Lazy[list[LocationList] | None]("``.debug_loc``: the location lists, in section order.")
    ranges = _Lazy[list[RangeList] | None]("``.debug_ranges``: the range lists.")
    pubnames = _Lazy[list[NameSet] | None]("``.debug_pubnames`` sets.")
    pubtypes = _Lazy[list[NameSet] | None]("``.debug_pubtypes`` sets.")
    aranges = _Lazy[list[ArangeSet] | None]("``.debug_aranges`` sets.")
    macinfo = _Lazy[list[MacinfoUnit] | None]("``.debug_macinfo`` units.")
    lines = _Lazy["list[LineProgram] | None"](
        "A cubin's line-number programs: ``.debug_line``, then ``.nv_debug_line_sass`` (None for PTX, "
        "whose producer's ``.debug_line`` ptxas discards; it stays in ``raw``)."
    )
    raw = _Lazy[dict[str, SectionImage]]("Sections ptxdwarf has no schema for, kept as they are.")
    labels = _Lazy[dict[str, dict[str, int]]](
        "Labels defined in each section: ``{section: {label: offset}}``."
    )

    @property
    def line_table(self) -> LineTable:
        """The rows of the line programs (a cubin's ``.debug_line``; empty for PTX), with
        queries: :meth:`~ptxdwarf.dwarf.lines.LineTable.lines_of` a function,
        :meth:`~ptxdwarf.dwarf.lines.LineTable.addresses_of` a source line."""

        from .lines import LineTable  # not at the top: lines imports forms, which imports this module

        programs = self.lines or []
        return LineTable(
            [p for p in programs if p.section == ".debug_line"],
            self.string_at,
            [p for p in programs if p.section == ".nv_debug_line_sass"],
        )

    def string_at(self, offset: int | None) -> str | None:
        """The ``.debug_str`` string at ``offset`` (None: no string starts there)."""
        raw = self.strings.lookup(offset) if self.strings is not None and offset is not None else None
        return None if raw is None else raw.decode("utf-8", "surrogateescape")

    def load_all(self) -> DebugInfo:
        """Decode now whatever is left for first use (and raise its errors now)."""
        for name in list(self._lazy):
            getattr(self, name)
        return self

    def die_at(self, offset: int) -> DIE | None:
        """The DIE at ``offset`` in ``.debug_info``, if one starts there."""
        if self._by_offset is None:
            self._by_offset = die_index(self.units)
        return self._by_offset.get(offset)

    def die_containing(self, offset: int) -> DIE | None:
        """The decoded DIE whose own bytes (abbreviation code and attributes, not its
        children) hold ``offset`` in ``.debug_info``."""
        if self._starts is None:
            dies = sorted(
                (d for d in self.iter_dies() if d.offset >= 0 and d.size >= 0), key=lambda d: d.offset
            )
            self._starts = ([d.offset for d in dies], dies)
        starts, dies = self._starts
        i = bisect.bisect_right(starts, offset) - 1
        if i < 0:
            return None
        die = dies[i]
        return die if offset < die.offset + die.size else None

    def attribute_at(self, offset: int) -> tuple[DIE, Attribute] | None:
        """The decoded DIE and the attribute (one of ``die.attributes``) whose bytes
        hold ``offset`` in ``.debug_info``; None when no attribute's do (an abbreviation
        code, a null entry, a unit header)."""
        die = self.die_containing(offset)
        if die is None:
            return None
        found = None
        for a in die.attributes:
            if 0 <= a.offset <= offset:
                found = a
            else:
                break
        return (die, found) if found is not None else None

    def target(self, attr: Attribute) -> DIE | None:
        """The DIE a reference attribute points to."""
        if isinstance(attr.value, DIE):
            return attr.value
        if isinstance(attr.target, int):
            return self.die_at(attr.target)
        return None

    def unit_of(self, die: DIE) -> Unit | None:
        """The unit holding ``die``."""
        root = die
        while root.parent is not None:
            root = root.parent
        for unit in self.units:
            if unit.die is root:
                return unit
        return None

    def location_list_at(self, offset: int) -> LocationList | None:
        """The ``.debug_loc`` list at ``offset`` (of two at one offset, the later)."""
        lists = self.locations or []
        index = self._loc_index
        if index is None or index[0] is not lists or index[1] != len(lists):
            index = self._loc_index = (lists, len(lists), {loc.offset: loc for loc in lists})
        return index[2].get(offset)

    def section_names(self) -> list[str]:
        """Names of the debug sections this model has."""
        names = []
        if self.abbrev_tables or self.units:
            names.append(".debug_abbrev")
        if self.units:
            names.append(".debug_info")
        for name, value in (
            (".debug_loc", self.locations),
            (".debug_ranges", self.ranges),
            (".debug_aranges", self.aranges),
            (".debug_pubnames", self.pubnames),
            (".debug_pubtypes", self.pubtypes),
            (".debug_str", self.strings),
            (".debug_macinfo", self.macinfo),
        ):
            if value is not None:
                names.append(name)
        names.extend(n for n in self.raw if n not in names)
        return names
