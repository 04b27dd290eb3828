"""Section images to the DIE model.

:func:`decode_sections` is the one boundary where low-level parse errors
(Construct's, ``struct``'s, index errors) become :class:`~ptxdwarf.errors.DwarfError`
naming the section, offset, PTX line and DIE.
"""

from __future__ import annotations

import bisect
import io
import struct
from collections.abc import Callable, Mapping
from typing import Any

from .._native import kernel, twin
from ..errors import DwarfError
from .constants import AT, FORM, at_name, tag_name
from .forms import (
    RELOCATABLE_FORMS,
    fixed_formats,
    read_uleb,
    reader_for,
)
from .image import Block, Reloc, SectionImage, Symbol, end_of_list, gc_paused
from .lines import read_line_programs
from .model import (
    DIE,
    REFERENCE_FORMS,
    AbbrevDecl,
    AbbrevTable,
    ArangeSet,
    Attribute,
    DebugInfo,
    LocationList,
    MacinfoUnit,
    NameSet,
    RangeList,
    StringTable,
    Unit,
)
from .plain import lists_shape, units_shape

__all__ = ["decode_sections", "locations_like", "make_resolver"]


#: How deep ``DW_FORM_indirect`` may nest inside itself (ptxas refuses any nesting: exit 1,
#: case ``dwarf4-form.indirect-nested``); deeper is a :class:`DwarfError`, not a deep model.
MAX_INDIRECT = 64


def make_resolver(images: Mapping[str, SectionImage]) -> Callable[[Symbol], int]:
    """Numbers for symbols of PTX text: a debug-section label is its offset there,
    a section name is 0, anything else (function labels, parameters) is unknown: 0.

    Sections are read for their labels only when a symbol is not found yet, and only
    those whose text may define labels."""
    return Resolver(images)


class Resolver:
    """:func:`make_resolver`'s resolver: ``labels`` holds the labels read so far, ``pending``
    the sections not read yet (the DIE decoder's kernel looks labels up there itself once
    ``pending`` is empty)."""

    __slots__ = ("images", "labels", "pending")

    def __init__(self, images: Mapping[str, SectionImage]) -> None:
        self.images = images
        self.labels: dict[str, int] = {}
        may = getattr(images, "may_define_labels", None)
        self.pending = [name for name in images if may is None or may(name)]

    def __call__(self, symbol: Symbol) -> int:
        if symbol.value is not None:
            return symbol.value
        name = symbol.name
        if name[0] == ".":
            return symbol.addend
        labels, pending = self.labels, self.pending
        offset = labels.get(name)
        while offset is None and pending:
            labels.update(self.images[pending.pop(0)].labels)
            offset = labels.get(name)
        return (offset or 0) + symbol.addend


def _fail(image: SectionImage, offset: int, message: str) -> DwarfError:
    return DwarfError(message, section=image.name, offset=offset, source=image.source(offset))


def _parse(schema: Any, image: SectionImage, pos: int, what: str, **params: Any) -> tuple[Any, int]:
    from construct import ConstructError

    stream = io.BytesIO(image.data)
    stream.seek(pos)
    try:
        value = schema.parse_stream(
            stream,
            relocs=image.reloc_map,
            applied=image.relocs_applied,
            unresolved=image.unresolved,
            base=0,
            **params,
        )
    except ConstructError as exc:
        reason = str(exc).splitlines()[-1].strip() if str(exc) else type(exc).__name__
        if "stream read less" in reason or "could not read" in reason or "expected" in reason:
            reason = f"truncated {what} ({reason})"
        else:
            reason = f"bad {what} ({reason})"
        raise _fail(image, pos, reason) from None
    return value, stream.tell()


#: A declaration of an abbreviation table as :func:`abbrev_entries` gives it: its offset in the
#: section, code, tag, children flag (the byte as it is) and (attribute, form) pairs.
AbbrevEntry = tuple[int, int, int, int, tuple[tuple[int, int], ...]]


@twin("decode")
def abbrev_entries(data: bytes, pos: int) -> tuple[list[AbbrevEntry], int] | None:
    """The declarations of the abbreviation table at ``pos`` of ``data`` (as the schema
    :data:`~ptxdwarf.dwarf.schemas.ABBREV_TABLE` reads them, without the code-0 terminator)
    and the offset after the table; None when the section ends inside the table."""
    from construct import ConstructError

    from .schemas import compiled_abbrev_table

    stream = io.BytesIO(data)
    stream.seek(pos)
    try:
        parsed = compiled_abbrev_table().parse_stream(stream)
    except (ConstructError, struct.error, ValueError, IndexError):
        return None
    entries = [
        (
            e.offset,
            e.code,
            e.decl.tag,
            e.decl.children,
            tuple((s.name, s.form) for s in e.decl.attr_specs[:-1]),
        )
        for e in parsed[:-1]
    ]
    return entries, stream.tell()


def _decode_abbrev(image: SectionImage) -> list[AbbrevTable]:
    tables = []
    pos = 0
    data = image.data
    while pos < len(data):
        start = pos
        read = abbrev_entries(data, pos)
        if read is None:
            raise _fail(image, start, "truncated abbreviation table (no terminating 0 code)")
        entries, pos = read
        decls = []
        seen: set[int] = set()
        for offset, code, tag, children, specs in entries:
            if children not in (0, 1):
                raise _fail(image, start, f"abbreviation {code}: children flag {children} is not 0 or 1")
            if code in seen:
                raise _fail(image, start, f"abbreviation code {code} declared twice in one table")
            seen.add(code)
            decls.append(AbbrevDecl(code, tag, bool(children), specs, offset))
        tables.append(AbbrevTable(start, decls))
    return tables


def _decode_strings(image: SectionImage) -> StringTable:
    data = image.data
    table = StringTable()
    if data and data[-1] != 0:
        start = data.rfind(b"\0") + 1
        raise _fail(image, start, "unterminated string at the end of the section")
    pos = 0
    offsets = table.offsets
    strings = table.strings
    for raw in data.split(b"\0")[:-1]:
        offsets.append(pos)
        strings.append(raw)
        pos += len(raw) + 1
    table.size = pos
    return table


# How the attributes of an abbreviation are read: steps of these kinds.
_RUN = 0  # fixed-size forms read with one struct unpack: (_RUN, its unpack_from, fields, size)
_STRING = 1  # (_STRING, name, form, None)
_BLOCK = 2  # (_BLOCK, name, form, reader of the block; None for block1, whose length byte is read inline)
_OTHER = 3  # a variable-size form read by its reader in forms.py: (_OTHER, name, form, reader)
_INDIRECT = 4  # (_INDIRECT, name, form, None)

# What the value of a fixed-size attribute needs once read (the last item of its field).
_PLAIN = 0
_SYMBOLIC = 1  # it may be a symbol
_REF = 2  # an offset in the unit: target is unit + value
_REF_ADDR = 3  # an offset in .debug_info, which may be a symbol: target is the value
_STRP = 4  # an offset in .debug_str, which may be a symbol: target is the offset, value the string

_REF_UDATA = int(FORM.ref_udata)
_BLOCK_FORMS = frozenset({FORM.block1, FORM.block2, FORM.block4, FORM.block, FORM.exprloc})


class _Plan:
    """How the DIEs of one abbreviation are read: its tag, children flag and attribute steps
    (consecutive fixed-size forms are one step, ``(name, form, offset in the run, use)`` each)."""

    __slots__ = ("children", "code", "steps", "tag")

    def __init__(self, decl: AbbrevDecl, version: int, address_size: int) -> None:
        """Raises KeyError with the form code of a form it does not know."""
        self.code = decl.code
        self.tag = decl.tag
        self.children = decl.has_children
        formats = fixed_formats(version, address_size)
        steps: list[tuple[int, Any, Any, Any]] = []
        run: list[tuple[int, int, int, int]] = []
        run_format = "<"
        for name, form in decl.specs:
            fmt = formats.get(form)
            if fmt is not None:
                run.append((name, form, struct.calcsize(run_format), _field_use(form)))
                run_format += fmt
                continue
            if run:
                steps.append(_run(run, run_format))
                run, run_format = [], "<"
            if form == FORM.string:
                steps.append((_STRING, name, form, None))
            elif form == FORM.indirect:
                steps.append((_INDIRECT, name, form, None))
            else:
                reader = reader_for(form, version, address_size)
                if reader is None:
                    raise KeyError(form)
                if form in _BLOCK_FORMS:
                    steps.append((_BLOCK, name, form, None if form == FORM.block1 else reader))
                else:
                    steps.append((_OTHER, name, form, reader))
        if run:
            steps.append(_run(run, run_format))
        self.steps = tuple(steps)


def _run(fields: list[tuple[int, int, int, int]], run_format: str) -> tuple[int, Any, Any, Any]:
    layout = struct.Struct(run_format)
    return (_RUN, layout.unpack_from, tuple(fields), layout.size)


def _field_use(form: int) -> int:
    if form in REFERENCE_FORMS:
        return _REF
    if form == FORM.ref_addr:
        return _REF_ADDR
    if form == FORM.strp:
        return _STRP
    return _SYMBOLIC if form in RELOCATABLE_FORMS else _PLAIN


_KERNEL = kernel("decode")
if _KERNEL is not None:
    _KERNEL.model(DIE, Attribute, Unit, Block, Reloc, Symbol, LocationList, Resolver)


@twin("decode", compare=units_shape)
def decode_units(
    image: SectionImage,
    tables: list[AbbrevTable],
    strings: StringTable | None,
    resolve: Callable[[Symbol], int],
) -> list[Unit]:
    """The units of ``.debug_info`` ``image``, with their DIE trees, read with the abbreviation
    ``tables`` of ``.debug_abbrev``, the strings of ``.debug_str`` and ``resolve`` giving the
    number of a symbol whose relocation is not applied."""
    return _InfoDecoder(image, tables, strings, resolve).decode()


class _InfoDecoder:
    def __init__(
        self,
        image: SectionImage,
        tables: list[AbbrevTable],
        strings: StringTable | None,
        resolve: Callable[[Symbol], int],
    ) -> None:
        self.image = image
        self.tables = {t.offset: t for t in tables}
        self.strings = strings
        self.resolve = resolve
        self.plans: dict[tuple[int, int, int], dict[int, _Plan]] = {}
        self.blocks: dict[bytes, Block] = {}
        """One block for each content without relocations (they are values: equal blocks are one)."""

    def plans_for(self, table: AbbrevTable, version: int, address_size: int, at: int) -> dict[int, _Plan]:
        key = (table.offset, version, address_size)
        plans = self.plans.get(key)
        if plans is None:
            plans = {}
            for decl in table.decls:
                try:
                    plans[decl.code] = _Plan(decl, version, address_size)
                except KeyError as exc:
                    raise _fail(
                        self.image,
                        at,
                        f"abbreviation {decl.code} ({tag_name(decl.tag)}) at .debug_abbrev+0x{table.offset:x} "
                        f"uses unknown form 0x{exc.args[0]:x}",
                    ) from None
            self.plans[key] = plans
        return plans

    def decode(self) -> list[Unit]:
        image = self.image
        data = image.data
        units = []
        pos = 0
        size = len(data)
        while pos < size:
            units.append(self.decode_unit(pos))
            pos = units[-1].end
        return units

    def decode_unit(self, start: int) -> Unit:
        image = self.image
        data = image.data
        if start + 11 > len(data):
            raise _fail(image, start, f"truncated unit header ({len(data) - start} bytes left, 11 needed)")
        length, version = struct.unpack_from("<IH", data, start)
        if length >= 0xFFFFFFF0:
            raise _fail(image, start, f"64-bit DWARF (unit length 0x{length:x}) is not supported")
        if version not in (2, 3, 4):
            raise _fail(image, start + 4, f"unit version {version} is not supported (2, 3 or 4)")
        end = start + 4 + length
        if end > len(data):
            raise _fail(
                image,
                start,
                f"unit length {length} runs past the end of the section ({len(data) - start - 4} bytes left)",
            )
        stored: int = struct.unpack_from("<I", data, start + 6)[0]
        abbrev_offset: int | Symbol = stored
        table_offset = stored
        reloc = image.reloc_map.get(start + 6) if image.relocs else None
        if reloc is not None:
            sym = reloc.symbol
            abbrev_offset = Symbol(sym.name, sym.addend, stored if image.relocs_applied else None)
            table_offset = stored if image.relocs_applied else self.resolve(sym)
        address_size = data[start + 10]
        if address_size not in (4, 8):
            raise _fail(image, start + 10, f"address size {address_size} is not supported (4 or 8)")
        table = self.tables.get(table_offset)
        if table is None:
            raise _fail(image, start + 6, f"no abbreviation table at .debug_abbrev+0x{table_offset:x}")
        unit = Unit(version, address_size, abbrev_offset, None, start, length, table)
        plans = self.plans_for(table, version, address_size, start)
        self.decode_dies(unit, plans, start + 11, end)
        return unit

    def decode_dies(self, unit: Unit, plans: dict[int, _Plan], pos: int, end: int) -> None:  # noqa: C901 - one loop over a unit's DIEs and their attributes, run per attribute: kept inline for speed
        image = self.image
        data = image.data
        rmap = image.reloc_map if image.relocs else None
        applied = image.relocs_applied
        resolve = self.resolve
        unit_offset = unit.offset
        parent: DIE | None = None
        stack: list[DIE | None] = []
        root: DIE | None = None
        die_start = pos
        new_die = DIE.__new__
        blocks = self.blocks
        new_attr = Attribute.__new__
        new_block = bytes.__new__
        relocs = image.relocs
        reloc_offsets = image.reloc_offsets if rmap is not None else []
        nrelocs = len(reloc_offsets)
        bisect_left = bisect.bisect_left
        string_at = self.string_at
        try:
            while pos < end:
                die_start = pos
                code = data[pos]
                if code < 0x80:
                    pos += 1
                else:
                    code, pos = read_uleb(data, pos)
                if code == 0:
                    if not stack:
                        if root is None:
                            raise _fail(image, die_start, "unit starts with a null entry")
                        unit.tail = data[die_start:end]
                        pos = end
                        break
                    parent = stack.pop()
                    if not stack:
                        # The root's children are closed; what is left is padding.
                        unit.tail = data[pos:end]
                        pos = end
                        break
                    continue
                if root is not None and parent is None:
                    unit.tail = data[die_start:end]
                    pos = end
                    break
                plan = plans.get(code)
                if plan is None:
                    shown = str(code) if code.bit_length() <= 64 else f"of {code.bit_length()} bits"
                    raise _fail(
                        image,
                        die_start,
                        f"abbreviation code {shown} is not in the table at .debug_abbrev+0x"
                        f"{unit.abbrevs.offset if unit.abbrevs else 0:x}",
                    )
                die = new_die(DIE)
                die.tag = plan.tag
                die.offset = die_start
                die.abbrev_code = code
                die.has_children = plan.children
                die.parent = parent
                die.children = []
                attrs: list[Attribute] = []
                die.attributes = attrs
                append = attrs.append
                for kind, one, two, three in plan.steps:
                    if kind == _RUN:
                        # the fields and the values have the same length (a keyword costs a parse per call)
                        for (name, form, rel, use), value in zip(two, one(data, pos)):  # noqa: B905
                            a = new_attr(Attribute)
                            a.name = name
                            a.form = form
                            a.relocs = ()
                            a.target = None
                            a.offset = at = pos + rel
                            if use != _PLAIN:
                                if use != _REF and rmap is not None:
                                    r = rmap.get(at)
                                    if r is not None:
                                        # the width the text gave (a .b32 label in an 8-byte field stays 4)
                                        a.relocs = (Reloc(0, r.size, r.symbol),)
                                        if not applied:
                                            value = resolve(r.symbol)
                                if use == _REF:
                                    a.target = unit_offset + value
                                elif use == _REF_ADDR:
                                    a.target = value
                                elif use == _STRP:
                                    a.target = value
                                    value = string_at(value, at)
                            a.value = value
                            append(a)
                        pos += three
                    elif kind == _STRING:
                        stop = data.index(b"\0", pos, end)
                        a = new_attr(Attribute)
                        a.name = one
                        a.form = two
                        a.value = data[pos:stop].decode("utf-8", "surrogateescape")
                        a.relocs = ()
                        a.target = None
                        a.offset = pos
                        append(a)
                        pos = stop + 1
                    elif kind == _BLOCK:
                        if three is None:
                            first = pos + 1
                            newpos = first + data[pos]
                            if newpos > len(data):
                                raise IndexError
                            raw = data[first:newpos]
                        else:
                            raw, newpos = three(data, pos)
                            first = newpos - len(raw)
                        inner: tuple[Reloc, ...] = ()
                        if rmap is not None:
                            lo = bisect_left(reloc_offsets, first)
                            if lo < nrelocs and reloc_offsets[lo] < newpos:
                                hi = bisect_left(reloc_offsets, newpos, lo)
                                inner = tuple([r.moved(-first) for r in relocs[lo:hi]])
                        if inner:
                            block = new_block(Block, raw)
                            block.relocs = inner
                        elif raw in blocks:
                            block = blocks[raw]
                        else:
                            block = blocks[raw] = new_block(Block, raw)
                            block.relocs = ()
                        a = new_attr(Attribute)
                        a.name = one
                        a.form = two
                        a.value = block
                        a.relocs = inner
                        a.target = None
                        a.offset = pos
                        append(a)
                        pos = newpos
                    elif kind == _OTHER:
                        value, newpos = three(data, pos)
                        a = new_attr(Attribute)
                        a.name = one
                        a.form = form = two
                        a.value = value
                        a.relocs = ()
                        a.target = unit_offset + value if form == _REF_UDATA else None
                        a.offset = pos
                        append(a)
                        pos = newpos
                    else:
                        pos = self.read_indirect(unit, one, data, pos, attrs)
                    if pos > end:
                        raise IndexError
                die.size = pos - die_start
                if parent is None:
                    root = die
                    unit.die = die
                else:
                    parent.children.append(die)
                if plan.children:
                    stack.append(parent)
                    parent = die
        except (IndexError, struct.error, ValueError):
            tag = ""
            plan = plans.get(code) if "code" in locals() else None
            if plan is not None:
                tag = f" ({tag_name(plan.tag)})"
            raise _fail(image, die_start, f"DIE{tag} runs past the end of its unit at 0x{end:x}") from None
        if pos > end:
            raise _fail(image, die_start, f"DIE runs past the end of its unit at 0x{end:x}")
        if root is None:
            raise _fail(image, unit.offset, "unit has no DIE")
        unit.open_scopes = len(stack)

    def string_at(self, offset: int, where: int) -> str:
        strings = self.strings
        if strings is None:
            raise _fail(self.image, where, "DW_FORM_strp but the module has no .debug_str section")
        raw = strings.lookup(offset)
        if raw is None:
            raise _fail(
                self.image,
                where,
                f"DW_FORM_strp offset 0x{offset:x} is outside .debug_str ({strings.size} bytes)",
            )
        return raw.decode("utf-8", "surrogateescape")

    def read_indirect(self, unit: Unit, name: int, data: bytes, pos: int, attrs: list[Attribute]) -> int:
        """Read a ``DW_FORM_indirect`` value: its form, then a value of that form.

        The attribute keeps the form ``indirect``; its value is the inner
        :class:`Attribute` (itself ``indirect`` again where the data nests them).
        """
        wrappers: list[Attribute] = []
        first = pos
        form, pos = read_uleb(data, pos)
        while form == FORM.indirect:
            if len(wrappers) == MAX_INDIRECT:
                raise _fail(
                    self.image,
                    pos,
                    f"DW_FORM_indirect nested more than {MAX_INDIRECT} deep ({at_name(name)})",
                )
            wrappers.append(Attribute(name, FORM.indirect, None, offset=pos))
            form, pos = read_uleb(data, pos)
        reader = reader_for(form, unit.version, unit.address_size)
        if reader is None:
            raise _fail(self.image, pos, f"unknown form 0x{form:x} in DW_FORM_indirect ({at_name(name)})")
        start = pos
        value, pos = reader(data, pos)
        inner = Attribute(name, form, value, offset=start)
        image = self.image
        if form in (FORM.block1, FORM.block2, FORM.block4, FORM.block, FORM.exprloc):
            body = pos - len(value)
            relocs = tuple(r.moved(-body) for r in image.relocs_in(body, pos))
            inner.value = Block(value, relocs)
            inner.relocs = relocs
        elif form == FORM.string:
            inner.value = value.decode("utf-8", "surrogateescape")
        else:
            if form in RELOCATABLE_FORMS and image.relocs:
                r = image.reloc_map.get(start)
                if r is not None:
                    inner.relocs = (Reloc(0, pos - start, r.symbol),)
                    if not image.relocs_applied:
                        inner.value = self.resolve(r.symbol)
            if form in REFERENCE_FORMS:
                inner.target = unit.offset + inner.value
            elif form == FORM.ref_addr:
                inner.target = inner.value
            elif form == FORM.strp:
                inner.target = inner.value
                inner.value = self.string_at(inner.value, start)
        outer = inner
        for wrapper in reversed(wrappers):
            wrapper.value = outer
            outer = wrapper
        attrs.append(Attribute(name, FORM.indirect, outer, offset=first))
        return pos


def _address_size(units: list[Unit], default: int) -> int:
    return units[0].address_size if units else default


def _version(units: list[Unit]) -> int:
    return units[0].version if units else 2


def _decode_loc(
    image: SectionImage,
    address_size: int,
    referenced: Callable[[], set[int]] | None = None,
    notes: list[str] | None = None,
) -> list[LocationList]:
    """The location lists of ``.debug_loc``, back to back from offset 0. Bytes that hold no
    complete list where no DIE refers (``referenced``: the offsets DIEs point at; left where
    ptxas dropped a label and its 0 ended a list early) are skipped with a note; a list a DIE
    refers to that cannot be read is an error, and so is any unreadable list when no DIE
    refers to a list at all."""
    lists: list[LocationList] = []
    size = len(image.data)
    refs: set[int] | None = None
    pos = 0
    while pos < size:
        read, pos = read_location_lists(image, address_size, pos, None)
        lists.extend(read)
        if pos >= size:
            break
        start = pos
        if refs is None:
            refs = referenced() if referenced is not None else set()
        if start in refs or not refs:
            raise _fail(image, start, f"truncated location list ({_truncation(image, address_size, start)})")
        after = [r for r in refs if r > start]
        pos = min(after) if after else size
        if notes is not None:
            notes.append(
                f".debug_loc+0x{start:x}: {pos - start} byte(s) that no DIE refers to and that hold no complete "
                "location list (what is left after ptxas ends a list early where it dropped a label); skipped"
            )
    if refs:
        starts = {loc.offset for loc in lists}
        for r in sorted(refs - starts):
            if 0 <= r < size:
                try:
                    _read_location_list(image, address_size, r, lists)
                except _Truncated:
                    pass
        lists.sort(key=lambda loc: loc.offset)
    return lists


class _Truncated(Exception):
    """A location list that runs past the end of its section (the message says which read)."""


@twin("decode", compare=lists_shape)
def read_location_lists(
    image: SectionImage, address_size: int, pos: int, model: list[LocationList] | None
) -> tuple[list[LocationList], int]:
    """The location lists of ``image`` back to back from ``pos``, and the offset where they
    stop: the end of the section, or the start of a list the section ends inside. The n-th list
    reuses the expressions of ``model``'s n-th where their bytes are the same (see
    :func:`locations_like`)."""
    lists: list[LocationList] = []
    known = model or []
    size = len(image.data)
    shared: dict[bytes, Block] = {}
    while pos < size:
        like = known[len(lists)] if len(lists) < len(known) else None
        try:
            pos = _read_location_list(image, address_size, pos, lists, like, shared)
        except _Truncated:
            break
    return lists, pos


def _read_location_list(
    image: SectionImage,
    address_size: int,
    pos: int,
    lists: list[LocationList],
    like: LocationList | None = None,
    shared: dict[bytes, Block] | None = None,
) -> int:
    """Decode the list at ``pos`` onto ``lists`` and give the offset after it; raise
    :class:`_Truncated` if the section ends inside it. An expression with the bytes of the
    same entry of ``like`` and no relocation is ``like``'s own block; else one of ``shared``
    (bytes to block) where it has no relocation."""
    data = image.data
    size = len(data)
    pair = struct.Struct("<QQ" if address_size == 8 else "<II")
    psize = pair.size
    unpack = pair.unpack_from
    max_addr = (1 << (8 * address_size)) - 1
    rmap = image.reloc_map if image.relocs else None
    applied = image.relocs_applied
    unresolved = image.unresolved
    known = like.entries if like is not None else ()
    offsets = image.reloc_offsets if rmap is not None else []
    count = len(offsets)
    at = bisect.bisect_left(offsets, pos) if count else 0  # the first relocation not passed yet
    start = pos
    entries: list[tuple[Any, Any, Block | None]] = []
    while True:
        if pos + psize > size:
            read = pos if pos + address_size > size else pos + address_size  # the begin's or the end's
            raise _Truncated(_short_read(address_size, read, size))
        begin, end = unpack(data, pos)
        if rmap is not None:
            r = rmap.get(pos)
            if r is not None:
                begin = _symbol(r.symbol, begin, applied)
            r = rmap.get(pos + address_size)
            if r is not None:
                end = _symbol(r.symbol, end, applied)
        pos += psize
        if begin == 0 and end == 0 and type(begin) is int and type(end) is int:
            break
        if unresolved and end_of_list(begin, end, unresolved):
            break
        if type(begin) is int and begin == max_addr:
            entries.append((begin, end, None))
            continue
        if pos + 2 > size:
            raise _Truncated(_short_read(2, pos, size))
        length = data[pos] | data[pos + 1] << 8
        first = pos + 2
        pos = first + length
        if pos > size:
            raise _Truncated(_short_read(length, first, size))
        inner: tuple[Reloc, ...] = ()
        while at < count and offsets[at] < first:
            at += 1
        if at < count and offsets[at] < pos:
            inner = tuple(r.moved(-first) for r in image.relocs_in(first, pos))
        expr = known[len(entries)][2] if len(entries) < len(known) else None
        if inner or expr is None or expr.relocs or len(expr) != length or not data.startswith(expr, first):
            expr = _block(data[first:pos], inner, shared)
        entries.append((begin, end, expr))
    lists.append(LocationList(start, entries))
    return pos


def _block(raw: bytes, relocs: tuple[Reloc, ...], shared: dict[bytes, Block] | None) -> Block:
    """A block of ``raw``: the one of ``shared`` where it has no ``relocs``."""
    if relocs or shared is None:
        return Block(raw, relocs)
    found = shared.get(raw)
    if found is None:
        found = shared[raw] = Block(raw)
    return found


def _truncation(image: SectionImage, address_size: int, pos: int) -> str:
    """Which read of the list at ``pos`` the section ends inside."""
    try:
        _read_location_list(image, address_size, pos, [])
    except _Truncated as exc:
        return str(exc)
    return "the section ends inside it"


def _short_read(wanted: int, pos: int, size: int) -> str:
    """What the reference schemas say of a read of ``wanted`` bytes at ``pos`` that the section ends inside."""
    return f"stream read less than specified amount, expected {wanted}, found {size - pos}"


def locations_like(
    image: SectionImage, model: list[LocationList], address_size: int
) -> list[LocationList] | None:
    """The location lists of ``image`` (a cubin's ``.debug_loc``) read at the places of
    ``model`` (the PTX's lists of the same section), reusing the model's expressions where
    their bytes are the same: what :func:`decode_sections` decodes when ``image`` holds lists
    back to back at the model's offsets, which is what ptxas makes of a PTX module. None when
    ``image`` is not so (or a list of it ends early, where ptxas dropped both labels of an
    entry): decode it then."""
    lists, pos = read_location_lists(image, address_size, 0, model)
    if pos != len(image.data) or len(lists) != len(model):
        return None
    if any(got.offset != loc.offset for got, loc in zip(lists, model, strict=True)):
        return None
    return lists


def _symbol(sym: Symbol, stored: int, applied: bool) -> Symbol:
    if (sym.value == stored) if applied else (sym.value is None):
        return sym
    return Symbol(sym.name, sym.addend, stored if applied else None)


def _decode_ranges(image: SectionImage, address_size: int, version: int) -> list[RangeList]:
    from .schemas import schemas_for

    schema = schemas_for(version, address_size).range_list
    lists = []
    pos = 0
    while pos < len(image.data):
        parsed, end = _parse(schema, image, pos, "range list")
        lists.append(RangeList(pos, [(e.begin, e.end) for e in parsed[:-1]]))
        pos = end
    return lists


def _decode_names(image: SectionImage, address_size: int) -> list[NameSet]:
    from .schemas import schemas_for

    schema = schemas_for(2, address_size).pubnames_set
    sets = []
    pos = 0
    data = image.data
    while pos < len(data):
        parsed, end = _parse(schema, image, pos, "name set")
        entries = [(e.die_offset, e.name.decode("utf-8", "surrogateescape")) for e in parsed.entries[:-1]]
        sets.append(
            NameSet(
                parsed.debug_info_offset, parsed.debug_info_length, entries, parsed.version, pos, parsed.rest
            )
        )
        pos = end
    return sets


def _decode_aranges(image: SectionImage) -> list[ArangeSet]:
    from .schemas import schemas_for

    sets = []
    pos = 0
    data = image.data
    while pos < len(data):
        if pos + 11 > len(data):
            raise _fail(image, pos, "truncated aranges set header")
        set_size = data[pos + 10]
        if set_size not in (4, 8):
            raise _fail(image, pos + 10, f"address size {set_size} is not supported (4 or 8)")
        schema = schemas_for(2, set_size).aranges_set
        parsed, end = _parse(schema, image, pos, "aranges set")
        tuples = [(t.begin, t.end) for t in parsed.tuples[:-1]]
        sets.append(
            ArangeSet(
                parsed.debug_info_offset,
                tuples,
                parsed.version,
                parsed.address_size,
                parsed.segment_size,
                parsed.padding,
                pos,
                parsed.rest,
            )
        )
        pos = end
    return sets


def _decode_macinfo(image: SectionImage) -> list[MacinfoUnit]:
    from .schemas import MACINFO

    units = []
    pos = 0
    while pos < len(image.data):
        parsed, end = _parse(MACINFO, image, pos, "macinfo entries")
        entries = []
        for e in parsed:
            body = dict(e.body) if e.body else {}
            body.pop("_io", None)
            entries.append((e.type, body))
        units.append(MacinfoUnit(pos, entries))
        pos = end
    return units


def decode_sections(
    images: Mapping[str, SectionImage],
    *,
    source: str = "ptx",
    filename: str | None = None,
    address_size: int = 8,
    resolver: Callable[[Symbol], int] | None = None,
) -> DebugInfo:
    """The DIE model of the debug sections in ``images`` (keyed by section name).

    ``address_size`` is used for sections read before any unit says its own.
    """
    with gc_paused():
        return _decode_sections(
            images, source=source, filename=filename, address_size=address_size, resolver=resolver
        )


def _decode_sections(
    images: Mapping[str, SectionImage],
    *,
    source: str,
    filename: str | None,
    address_size: int,
    resolver: Callable[[Symbol], int] | None,
) -> DebugInfo:
    info = DebugInfo(source=source, filename=filename, sections=images)
    resolve = resolver or make_resolver(images)
    info.resolver = resolve
    info._lazy["labels"] = lambda: {name: dict(img.labels) for name, img in images.items() if img.labels}
    abbrev = images.get(".debug_abbrev")
    tables = _decode_abbrev(abbrev) if abbrev is not None else []
    info.abbrev_tables = tables
    if ".debug_str" in images:
        info.strings = _decode_strings(images[".debug_str"])
    if ".debug_info" in images:
        image = images[".debug_info"]
        if abbrev is None and image.data:
            at = 6 if len(image.data) >= 10 else 0
            raise _fail(image, at, "the module has .debug_info but no .debug_abbrev section")
        info.units = decode_units(image, tables, info.strings, resolve)
    asize = _address_size(info.units, address_size)
    version = _version(info.units)
    # The other sections are decoded on first use (pyelftools does the same with
    # location lists): reading the DIEs does not need them.
    decoders: dict[str, tuple[str, Callable[[SectionImage], Any]]] = {
        ".debug_loc": (
            "locations",
            lambda image: _decode_loc(image, asize, lambda: _list_offsets(info), info.notes),
        ),
        ".debug_ranges": ("ranges", lambda image: _decode_ranges(image, asize, version)),
        ".debug_pubnames": ("pubnames", lambda image: _decode_names(image, asize)),
        ".debug_pubtypes": ("pubtypes", lambda image: _decode_names(image, asize)),
        ".debug_aranges": ("aranges", lambda image: _decode_aranges(image)),
        ".debug_macinfo": ("macinfo", _decode_macinfo),
    }
    handled = {".debug_abbrev", ".debug_info", ".debug_str"}
    others = [name for name in images if name not in handled and name not in decoders]
    for name in images:
        if name in decoders:
            part, decoder = decoders[name]
            info._lazy[part] = _loader(decoder, images, name)
    if others:
        info._lazy["raw"] = lambda: {name: images[name] for name in others}
    if ".debug_line" in images and source != "ptx":
        info._lazy["lines"] = lambda: read_line_programs(images[".debug_line"])
    return info


def _list_offsets(info: DebugInfo) -> set[int]:
    """The ``.debug_loc`` offsets the DIEs of ``info`` point at (location and frame base lists)."""
    found: set[int] = set()
    for die in info.iter_dies():
        for attr in die.attributes:
            if attr.name in (AT.location, AT.frame_base):
                inner = attr
                while inner.form == FORM.indirect and isinstance(inner.value, Attribute):
                    inner = inner.value
                if inner.form in _LIST_POINTER_FORMS and isinstance(inner.value, int):
                    found.add(inner.value)
    return found


_LIST_POINTER_FORMS = frozenset({FORM.data4, FORM.data8, FORM.sec_offset})


def _loader(
    decoder: Callable[[SectionImage], Any], images: Mapping[str, SectionImage], name: str
) -> Callable[[], Any]:
    def load() -> Any:
        with gc_paused():
            return decoder(images[name])

    return load
