"""The DIE model to section images.

Abbreviations are derived and deduplicated here (or kept, when a decoded unit's
DIEs still match the table they were read with); references are patched once
every unit is written; strings go inline or into ``.debug_str``; symbols become
zeros plus :class:`~ptxdwarf.dwarf.image.Reloc` records, as in gimli's ``write``
module. The other sections are built through the Construct schemas.

Encoding does not change the model: new DIE offsets are reported in
:attr:`Encoded.offsets`.
"""

from __future__ import annotations

import bisect
import functools
import io
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._native import kernel, twin
from ..errors import EncodeError
from .built import BuiltDIE
from .constants import FORM, at_name, form_name
from .forms import fixed_formats, form_table, uleb_bytes, value_kind
from .image import Block, Reloc, SectionImage, Symbol, gc_paused
from .model import (
    DIE,
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
from .writers import ExpressionCache, Writer, WriterHelpers, block_of, value_writers

if TYPE_CHECKING:
    from .schemas import DwarfSchemas

__all__ = ["EncodeOptions", "Encoded", "choose_form", "encode", "encode_sections"]


_AbbrevKey = tuple[int, bool, tuple[tuple[int, int], ...]]


@dataclass(frozen=True)
class EncodeOptions:
    """How to encode a model.

    ``strings``: ``"inline"`` (``DW_FORM_string``) or ``"strp"`` (``.debug_str``),
    for string attributes whose form is left to the encoder. ``string_labels``:
    point strp values at labels in ``.debug_str`` (``$L__str0``, one per reference;
    PTX ISA 7.0 and later) rather than at ``.debug_str+offset`` (any ISA version,
    the default). ``keep_abbrevs``: reuse a decoded
    unit's abbreviation table while its DIEs still match it (exact rewrites).
    ``dwarf4_forms``: let DWARF 4 units use ``DW_FORM_flag_present``, ``exprloc`` and
    ``sec_offset``; off by default because ptxas 13.0 rejects all three ("Error in
    get_form_value default") and reads ``flag``, ``block1`` and ``data4`` in their place.
    """

    strings: str = "inline"
    string_labels: bool = False
    keep_abbrevs: bool = True
    dwarf4_forms: bool = False


@dataclass
class Encoded:
    """The result of :func:`encode`: section images and where each DIE went."""

    images: dict[str, SectionImage]
    offsets: dict[int, int] = field(default_factory=dict)
    """``id(die)`` to the DIE's offset in the new ``.debug_info``."""
    unit_offsets: dict[int, tuple[int, int]] = field(default_factory=dict)
    """``id(unit)`` to (offset, total length) in the new ``.debug_info``."""


def choose_form(attr: Attribute, version: int, options: EncodeOptions) -> int:
    """The form an attribute is written with when its form is left open."""
    return _form_in(form_table(version, options.strings, options.dwarf4_forms), attr)


def _form_in(forms: dict[int, int], attr: Attribute) -> int:
    """The form of ``attr``'s value kind in ``forms`` (a :func:`form_table`)."""
    kind = value_kind(attr.name, attr.value)
    if kind is None:
        raise EncodeError(
            f"{at_name(attr.name)}: no DWARF form for a value of type {type(attr.value).__name__}"
        )
    return forms[kind]


class _StringPool:
    """``.debug_str`` under construction: a decoded table kept as is, new strings appended."""

    def __init__(self, base: StringTable | None, labels: dict[str, int], use_labels: bool) -> None:
        self.table = StringTable()
        self.index: dict[bytes, int] = {}
        self.labels: dict[str, int] = dict(labels)
        self.serial = 0
        self.use_labels = use_labels
        if base is not None:
            for raw in base.strings:
                self.index.setdefault(raw, self.table.add(raw))
        self.used = base is not None

    def symbol(self, raw: bytes) -> Symbol:
        """The symbol a new strp reference to ``raw`` is written with.

        Without labels: ``.debug_str+offset``. With labels, every reference gets a
        label of its own: ptxas 13.0 resolves a second reference to the same
        ``.debug_str`` label to 0.
        """
        self.used = True
        off = self.index.get(raw)
        if off is None:
            off = self.table.add(raw)
            self.index[raw] = off
        if not self.use_labels:
            return Symbol(".debug_str", off)
        label = f"$L__str{self.serial}"
        while label in self.labels:
            self.serial += 1
            label = f"$L__str{self.serial}"
        self.serial += 1
        self.labels[label] = off
        return Symbol(label)

    def mark(self) -> tuple[int, int, int, bool]:
        """The state :meth:`rollback` returns to."""
        return len(self.table.strings), self.serial, len(self.labels), self.used

    def rollback(self, mark: tuple[int, int, int, bool]) -> None:
        """Forget the strings and labels added since ``mark``."""
        count, self.serial, labels, self.used = mark
        table = self.table
        for raw in table.strings[count:]:
            del self.index[raw]
        if count < len(table.strings):
            table.size = table.offsets[count]
            del table.strings[count:]
            del table.offsets[count:]
        while len(self.labels) > labels:
            self.labels.popitem()

    def image(self) -> SectionImage:
        data = b"".join(s + b"\0" for s in self.table.strings)
        labels = dict(sorted(self.labels.items(), key=lambda kv: kv[1]))
        return SectionImage(".debug_str", data, labels=labels, breaks=list(self.table.offsets))


class _AbbrevAllocator:
    """Derived abbreviation codes, one per distinct (tag, children, specs)."""

    def __init__(self) -> None:
        self.codes: dict[_AbbrevKey, int] = {}
        self.by_code: dict[int, _AbbrevKey] = {}
        self.next = 1

    def code(self, key: _AbbrevKey, wanted: int | None) -> int:
        if wanted is None:
            code = self.codes.get(key)
            if code is not None:
                return code
            while self.next in self.by_code:
                self.next += 1
            code = self.next
            self.codes[key] = code
            self.by_code[code] = key
            return code
        other = self.by_code.get(wanted)
        if other is None:
            self.by_code[wanted] = key
            self.codes.setdefault(key, wanted)
        elif other != key:
            raise EncodeError(f"abbreviation code {wanted} is asked for by DIEs of different shapes")
        return wanted

    def forget(self, key: _AbbrevKey) -> None:
        """Take back the code just given to ``key``."""
        code = self.codes.pop(key)
        del self.by_code[code]
        self.next = min(self.next, code)

    def table(self, offset: int) -> AbbrevTable:
        decls = [AbbrevDecl(c, k[0], k[1], k[2]) for c, k in sorted(self.by_code.items())]
        return AbbrevTable(offset, decls)


def encode_abbrev_table(table: AbbrevTable) -> bytes:
    """The bytes of one abbreviation table, terminator included."""
    obj = []
    for d in table.decls:
        specs = [{"name": n, "form": f} for n, f in d.specs] + [{"name": 0, "form": 0}]
        obj.append(
            {"code": d.code, "decl": {"tag": d.tag, "children": int(d.has_children), "attr_specs": specs}}
        )
    obj.append({"code": 0, "decl": None})
    from .schemas import compiled_abbrev_table

    return bytes(compiled_abbrev_table().build(obj))


class _InfoEncoder:
    """Writes ``.debug_info``."""

    def __init__(self, info: DebugInfo, options: EncodeOptions, pool: _StringPool) -> None:
        self.info = info
        self.options = options
        self.pool = pool
        self.out = bytearray()
        self.relocs: list[Reloc] = []
        self.fields: dict[int, int] = {}
        self.breaks: list[int] = []
        self.offsets: dict[int, int] = {}  # id(die) -> new offset
        self.unit_offsets: dict[int, tuple[int, int]] = {}
        self.moved: dict[int, int] = {}  # old offset -> new offset, for decoded DIEs and units
        self.derived = _AbbrevAllocator()
        self.derived_at: list[int] = []
        self.kept_any = False  # whether some unit still uses a table it was read with
        self.fixups: list[tuple[int, int, DIE, int, Attribute]] = []
        # Decoded references that point at no DIE: (position, size, old offset, base, unit start)
        self.dangling: list[tuple[int, int, int, int, int]] = []
        self.old_index: dict[int, DIE] = {}
        self.loc_offsets: dict[int, int] = {}  # id(LocationList) -> offset in the new .debug_loc
        # Per unit encoding: the form of each value kind, sizes of the fixed-size forms,
        # encoded expressions, the writer of each form, whether codes were read with a table
        self.forms: dict[int, int] = {}
        self.sizes: dict[int, int] = {}
        self.expressions = ExpressionCache(8)
        self.writers: dict[int, Writer] = {}
        self.decoded_abbrevs = False
        self.unit_start = 0
        # Built DIEs: (tag, children, id(specs)) -> _Shape, per unit encoding
        self.shapes: dict[tuple[int, bool, int], _Shape] = {}
        self.shape_refs: list[Any] = []  # the specs whose ids are keys of shapes, kept alive
        if info.source != "built" and any(d.offset >= 0 for u in info.units[:1] for d in u.iter_dies()):
            self.old_index = {d.offset: d for d in info.iter_dies() if d.offset >= 0}

    def encode(self) -> None:
        for unit in self.info.units:
            self.encode_unit(unit)
        for pos, size, target, base, attr in self.fixups:
            new = self.offsets.get(id(target))
            if new is None:
                raise EncodeError(
                    f"{at_name(attr.name)} refers to {target.describe()}, which is in no unit being encoded"
                )
            value = new - base
            symbolic = attr.relocs[0].symbol if attr.form == FORM.ref_addr and attr.relocs else None
            if symbolic is not None:
                # Written as a symbol (``.debug_info+322``, LLVM): ptxas relocates it, so it stays
                # one, on the target's new offset when the symbol is the section itself.
                if symbolic.name == ".debug_info":
                    symbolic = Symbol(symbolic.name, value)
                self.relocs.append(Reloc(pos, size, symbolic))
                continue
            try:
                self.out[pos : pos + size] = value.to_bytes(size, "little")
            except OverflowError:
                raise EncodeError(
                    f"{at_name(attr.name)}: offset {value} does not fit {form_name(attr.form or 0)}"
                ) from None
        if self.dangling:
            self.place_dangling()
        self.relocs.sort(key=lambda r: r.offset)

    def dangling_ref(self, attr: Attribute, at: int, size: int, base: int, unit_start: int) -> bool:
        """Take ``attr``, a decoded reference to no DIE, to be placed once the layout is known."""
        if not isinstance(attr.target, int) or not self.old_index or attr.relocs:
            return False
        self.dangling.append((at, size, attr.target, base, unit_start))
        return True

    def place_dangling(self) -> None:
        """Write each reference that pointed at no DIE so that it still points at none: at the
        same distance from the DIE before it, or else at its unit's header."""
        starts = set(self.offsets.values())
        old = sorted(self.moved)
        for pos, size, target, base, unit_start in self.dangling:
            i = bisect.bisect_right(old, target) - 1
            new = self.moved[old[i]] + target - old[i] if i >= 0 else target
            if new in starts or new < unit_start or new - base >= 1 << (8 * size):
                new = unit_start
            self.out[pos : pos + size] = (new - base).to_bytes(size, "little")

    def kept_table(self, unit: Unit) -> dict[int, AbbrevDecl] | None:
        """The decoded table of ``unit`` if every DIE still matches its declaration."""
        if not self.options.keep_abbrevs or unit.abbrevs is None:
            return None
        decls = unit.abbrevs.by_code()
        for die in unit.iter_dies():
            d = decls.get(die.abbrev_code) if die.abbrev_code is not None else None
            if (
                d is None
                or d.tag != die.tag
                or d.has_children != (die.has_children or bool(die.children))
                or len(d.specs) != len(die.attributes)
                or any(
                    a.form is None or (a.name, a.form) != s
                    for a, s in zip(die.attributes, d.specs, strict=False)
                )
            ):
                return None
        return decls

    def encode_unit(self, unit: Unit) -> None:
        out = self.out
        start = len(out)
        if unit.offset >= 0:
            self.moved[unit.offset] = start
        if unit.die is None:
            raise EncodeError("unit has no DIE")
        self.breaks.append(start)
        kept = self.kept_table(unit)
        self.kept_any = self.kept_any or kept is not None
        out += struct.pack("<IH", 0, unit.version)
        abbrev_at = len(out)
        out += bytes(4)
        out.append(unit.address_size)
        self.fields[start] = 4
        self.fields[start + 4] = 2
        if kept is not None:
            off = unit.abbrev_offset
            if isinstance(off, Symbol):
                self.relocs.append(Reloc(abbrev_at, 4, Symbol(off.name, off.addend)))
            else:
                struct.pack_into("<I", out, abbrev_at, off)
                self.fields[abbrev_at] = 4
        else:
            self.derived_at.append(abbrev_at)
        self.begin_encoding(unit, start)
        write_dies(self, unit.die, kept)
        if unit.open_scopes:
            del out[len(out) - unit.open_scopes :]
        out += unit.tail
        struct.pack_into("<I", out, start, len(out) - start - 4)
        self.unit_offsets[id(unit)] = (start, len(out) - start)

    def begin_encoding(self, unit: Unit, unit_start: int) -> None:
        """Set up the forms, writers and caches of the encoding of ``unit``, at ``unit_start``."""
        options = self.options
        self.release()
        self.unit_start = unit_start
        self.decoded_abbrevs = unit.abbrevs is not None
        self.forms = form_table(unit.version, options.strings, options.dwarf4_forms)
        self.shapes = {}
        self.expressions = ExpressionCache(unit.address_size)
        self.sizes = {
            int(form): struct.calcsize("<" + fmt)
            for form, fmt in fixed_formats(unit.version, unit.address_size).items()
        }
        helpers = WriterHelpers(
            strp=self.pool.symbol,
            lookup=self.pool.table.lookup,
            location=self.location_value,
            block=self.expressions.get,
            expressions=self.expressions.by_id,
            target=self.target_of,
            dangling=self.dangling_ref,
            choose=self.form_of,
        )
        self.writers = value_writers(
            unit.version,
            unit.address_size,
            unit_start,
            self.out,
            self.fields,
            self.fixups,
            self.relocs,
            self.offsets,
            helpers,
        )

    def release(self) -> None:
        """Let the last unit's writers go: they hold this encoder's methods, and the writer of
        ``DW_FORM_indirect`` their table, so that they and the relocations they made would
        otherwise wait for the cyclic collector."""
        self.writers.clear()
        self.shapes.clear()

    def form_of(self, attr: Attribute) -> int:
        """The form of an attribute whose form is left open, in the current encoding."""
        return _form_in(self.forms, attr)

    def shape(self, tag: int, has_children: bool, specs: tuple[tuple[int, int], ...]) -> _Shape:
        """The shape of built DIEs with these ``specs``, in the current encoding."""
        key = (tag, has_children, id(specs))
        shape = self.shapes.get(key)
        if shape is None:
            shape = self.shapes[key] = _Shape(tag, has_children, specs, self.forms, self.writers)
            self.shape_refs.append(specs)
        return shape

    def shape_code(self, shape: _Shape) -> bytes:
        """The abbreviation code of a built shape, given on first use."""
        code = shape.code
        if code is None:
            code = shape.code = uleb_bytes(self.derived.code(shape.key, None))
        return code

    def native_shape(
        self, tag: int, has_children: bool, specs: tuple[tuple[int, int], ...]
    ) -> tuple[_Shape, tuple[tuple[int, int, Attribute], ...]]:
        """What the native writer needs of a built shape: the shape (for :meth:`shape_code`),
        and per attribute its form, fixed size (0: none) and constant attribute."""
        shape = self.shape(tag, has_children, specs)
        sizes = self.sizes
        return shape, tuple((f, sizes.get(f, 0), a) for f, a in zip(shape.forms, shape.attrs, strict=True))

    def write_die(self, die: DIE, kept: dict[int, AbbrevDecl] | None) -> None:
        """Write ``die`` (not its children) from its :class:`Attribute` objects."""
        out = self.out
        pos = len(out)
        if die.offset >= 0:
            self.moved.setdefault(die.offset, pos)
        self.offsets[id(die)] = pos
        self.breaks.append(pos)
        attrs = die.attributes
        forms = [a.form if a.form is not None else self.form_of(a) for a in attrs]
        if kept is not None:
            code = die.abbrev_code
            assert code is not None
        else:
            has_children = die.has_children or bool(die.children)
            key = (die.tag, has_children, tuple([(a.name, f) for a, f in zip(attrs, forms, strict=False)]))
            # Codes read with a table that no longer fits are not wishes; a built DIE's are.
            code = self.derived.code(key, die.abbrev_code if not self.decoded_abbrevs else None)
        if code < 0x80:
            out.append(code)
        else:
            out += uleb_bytes(code)
        writers = self.writers
        attr, form = None, 0
        try:
            for attr, form in zip(attrs, forms, strict=True):
                write = writers.get(form)
                if write is None:
                    raise EncodeError(f"{at_name(attr.name)}: cannot encode {form_name(form)}")
                write(attr.value, attr)
        except (struct.error, ValueError, TypeError, OverflowError, EncodeError) as exc:
            assert attr is not None
            raise _value_error(die, attr, form, attr.value, exc) from None

    def location_value(self, value: LocationList, at: int, size: int) -> None:
        """Write a reference to a location list, ``size`` bytes at ``at``."""
        out = self.out
        offset = self.loc_offsets.get(id(value), value.offset)
        if self.options.strings == "strp":
            # A number needs no relocation: ptxas keeps .debug_loc as it is. (A ".debug_loc"
            # symbol beside strp values is fine too: case bitfield-member-order.location-first.)
            out += offset.to_bytes(size, "little")
            return
        self.relocs.append(Reloc(at, size, Symbol(".debug_loc", offset)))
        out += bytes(size)

    def target_of(self, value: Any, attr: Attribute) -> DIE | None:
        """The DIE a reference ``attr`` of ``value`` points to, or None."""
        if isinstance(value, DIE):
            return value
        if isinstance(attr.target, DIE):
            return attr.target
        if isinstance(attr.target, int):
            return self.old_index.get(attr.target)
        return None


@twin("encode", checkable=False)
def write_dies(enc: _InfoEncoder, root: DIE, kept: dict[int, AbbrevDecl] | None) -> bool:
    """Append the DIE tree at ``root`` to ``enc``'s ``.debug_info``, in the encoding of its
    unit, whose kept abbreviation table is ``kept`` (None: codes derived). True."""
    # Pre-order walk without recursion; a null entry closes each child list.
    stack: list[tuple[DIE, int]] = []
    die: DIE | None = root
    out, offsets, breaks, shapes = enc.out, enc.offsets, enc.breaks, enc.shapes
    while True:
        if die is not None:
            specs, values = (die.specs, die.values) if type(die) is BuiltDIE else (None, ())
            if specs is None or kept is not None or die.abbrev_code is not None or len(values) != len(specs):
                enc.write_die(die, kept)
            else:  # a built DIE: written by its shape (forms, code, writers) from its values
                has_children = die.has_children or bool(die.children)
                shape = shapes.get((die.tag, has_children, id(specs))) or enc.shape(
                    die.tag, has_children, specs
                )
                pos = len(out)
                offsets[id(die)] = pos
                breaks.append(pos)
                out += shape.code or enc.shape_code(shape)
                attr, value = None, None
                try:
                    for write, attr, value in zip(shape.writers, shape.attrs, values, strict=True):
                        write(value, attr)
                except (struct.error, ValueError, TypeError, OverflowError, EncodeError) as exc:
                    assert attr is not None and attr.form is not None
                    raise _value_error(die, attr, attr.form, value, exc) from None
            if die.children:
                stack.append((die, 0))
                die = die.children[0]
                continue
            if die.has_children:
                out.append(0)
            die = None
        if not stack:
            return True
        parent, index = stack.pop()
        index += 1
        if index < len(parent.children):
            stack.append((parent, index))
            die = parent.children[index]
        else:
            out.append(0)


def _cannot_encode(_value: Any, attr: Attribute) -> None:
    """The writer of a built attribute whose form the encoder does not write."""
    raise EncodeError(f"{at_name(attr.name)}: cannot encode {form_name(attr.form or 0)}")


def _value_error(die: DIE, attr: Attribute, form: int, value: Any, exc: Exception) -> EncodeError:
    """The error of a value of ``die`` that a writer of ``form`` did not take."""
    if isinstance(exc, EncodeError):
        return EncodeError(f"{exc.message} (in {die.describe()})")
    return EncodeError(
        f"{at_name(attr.name)}: value {value!r} does not fit {form_name(form)} ({exc}) (in {die.describe()})"
    )


_native = kernel("encode")
if _native is not None:
    _native.bind(
        BuiltDIE,
        DIE,
        Symbol,
        Reloc,
        LocationList,
        Block,
    )


class _Shape:
    """Built DIEs of one tag, children flag and specs, in one encoding: their forms,
    abbreviation key (and code once given), writers and constant attributes."""

    __slots__ = ("attrs", "code", "forms", "key", "writers")

    def __init__(
        self,
        tag: int,
        has_children: bool,
        specs: tuple[tuple[int, int], ...],
        forms: dict[int, int],
        writers: dict[int, Writer],
    ) -> None:
        settled = tuple(forms.get(k, k) for _, k in specs)
        self.forms = settled
        self.key: _AbbrevKey = (
            tag,
            has_children,
            tuple((n, f) for (n, _), f in zip(specs, settled, strict=True)),
        )
        self.attrs = tuple(Attribute(n, f, None) for (n, _), f in zip(specs, settled, strict=True))
        self.writers = tuple(writers.get(f, _cannot_encode) for f in settled)
        self.code: bytes | None = None


def _build(schema: Any, obj: Any, section: str, what: str, base: int, relocs: list[Reloc]) -> bytes:
    from construct import ConstructError

    stream = io.BytesIO()
    try:
        schema.build_stream(obj, stream, out_relocs=relocs, base=base)
    except ConstructError as exc:
        raise EncodeError(f"{section}: cannot encode {what}: {str(exc).splitlines()[-1]}") from None
    return stream.getvalue()


class _RecordWriter:
    """A section made of records built through schemas, old offsets tracked."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.data = bytearray()
        self.relocs: list[Reloc] = []
        self.breaks: list[int] = []
        self.moved: dict[int, int] = {}

    def add(self, schema: Any, obj: Any, what: str, old_offset: int, plain: Any = None) -> None:
        """Append a record; ``plain(obj, base, relocs)`` may build it without the schema
        (it returns None when the schema must)."""
        if old_offset >= 0:
            self.moved[old_offset] = len(self.data)
        self.breaks.append(len(self.data))
        built = plain(obj, len(self.data), self.relocs) if plain is not None else None
        if built is None:
            built = _build(schema, obj, self.name, what, len(self.data), self.relocs)
        self.data += built

    def image(self) -> SectionImage:
        return SectionImage(self.name, bytes(self.data), self.relocs, breaks=self.breaks)


def _place_labels(
    image: SectionImage, old: dict[str, int], moved: dict[int, int], old_size: int | None
) -> None:
    """Put labels read from a section where the records they marked went."""
    if not old:
        return
    unchanged = old_size == len(image.data) and all(k == v for k, v in moved.items())
    for name, off in old.items():
        if name in image.labels:
            continue
        if off in moved:
            image.labels[name] = moved[off]
        elif off == old_size:
            image.labels[name] = len(image.data)
        elif unchanged:
            image.labels[name] = off
        else:
            raise EncodeError(f"label {name} at {image.name}+0x{off:x} is inside a record that moved")
    image.labels = dict(sorted(image.labels.items(), key=lambda kv: kv[1]))


def encode(info: DebugInfo, options: EncodeOptions | None = None) -> Encoded:
    """Encode every section ``info`` holds; see :class:`Encoded`."""
    # Encoding allocates an object or more per attribute and frees nothing cyclic;
    # generation-2 collections on the way would walk the whole model again and again.
    with gc_paused():
        return _encode(info, options)


def _encode(info: DebugInfo, options: EncodeOptions | None = None) -> Encoded:
    from .schemas import schemas_for

    options = options or EncodeOptions()
    out = _Output(info)
    pool = _StringPool(info.strings, out.labels.get(".debug_str", {}), options.string_labels)
    enc = _InfoEncoder(info, options, pool)
    asize = info.units[0].address_size if info.units else 8
    version = info.units[0].version if info.units else 2
    s = schemas_for(version, asize)
    # Location lists first: .debug_info points into them.
    loc_image = _location_lists(info.locations, enc, s, asize, out) if info.locations is not None else None
    enc.encode()
    enc.release()
    abbrev_image = _abbreviations(info, enc, out)
    if abbrev_image is not None:
        out.images[".debug_abbrev"] = abbrev_image
    if info.units or ".debug_info" in out.old_sizes:
        img = SectionImage(".debug_info", bytes(enc.out), enc.relocs, fields=enc.fields, breaks=enc.breaks)
        out.images[".debug_info"] = out.place(img, enc.moved)
    if loc_image is not None:
        out.images[".debug_loc"] = loc_image
    refs = _UnitRefs(info, enc)
    if info.ranges is not None:
        out.images[".debug_ranges"] = _range_lists(info.ranges, s, out)
    if info.aranges is not None:
        out.images[".debug_aranges"] = _aranges(info.aranges, refs, out)
    for name, sets in ((".debug_pubnames", info.pubnames), (".debug_pubtypes", info.pubtypes)):
        if sets is not None:
            out.images[name] = _name_sets(name, sets, refs, s, out)
    if pool.used:
        out.images[".debug_str"] = pool.image()
    if info.macinfo is not None:
        out.images[".debug_macinfo"] = _macinfo(info.macinfo, out)
    for name, raw in info.raw.items():
        out.images[name] = SectionImage(name, raw.data, list(raw.relocs), dict(raw.labels))
    return Encoded(out.images, enc.offsets, enc.unit_offsets)


class _Output:
    """The section images made so far, in output order, and the labels and sizes of
    the sections the model was read from."""

    def __init__(self, info: DebugInfo) -> None:
        self.labels = info.labels
        self.old_sizes = {name: len(img.data) for name, img in (info.sections or {}).items()}
        self.images: dict[str, SectionImage] = {}

    def place(self, image: SectionImage, moved: dict[int, int]) -> SectionImage:
        """``image`` with the labels read from its section where the records they marked went."""
        _place_labels(image, self.labels.get(image.name, {}), moved, self.old_sizes.get(image.name))
        return image

    def records(self, w: _RecordWriter) -> SectionImage:
        """The image of a section of records, labels placed."""
        return self.place(w.image(), w.moved)


class _UnitRefs:
    """Units and DIEs that name and aranges sets point at, at their new offsets."""

    def __init__(self, info: DebugInfo, enc: _InfoEncoder) -> None:
        self.info = info
        self.enc = enc
        self.unit_by_old = {u.offset: u for u in info.units if u.offset >= 0}

    def unit(self, value: int | Symbol | Unit) -> tuple[int | Symbol, Unit | None]:
        """The new ``.debug_info`` offset of a unit named by a set, and the unit."""
        enc = self.enc
        if isinstance(value, Unit):
            # ptxas resolves section names only inside .debug_info; elsewhere
            # ".debug_info+N" becomes 0, so a unit past offset 0 is written as a number.
            offset = enc.unit_offsets[id(value)][0]
            return (Symbol(".debug_info") if offset == 0 else offset), value
        if isinstance(value, Symbol):
            old = self.info.resolver(value) if self.info.resolver else value.addend
            unit = self.unit_by_old.get(old)
            if value.name == ".debug_info":
                return Symbol(".debug_info", enc.moved.get(value.addend, value.addend)), unit
            return Symbol(value.name, value.addend), unit
        return enc.moved.get(value, value), self.unit_by_old.get(value)

    def die(self, entry: int | DIE, unit: Unit | None) -> int:
        """The new offset in its unit of a DIE named by a set entry."""
        enc = self.enc
        if isinstance(entry, DIE):
            if unit is None:
                raise EncodeError(f"name set entry {entry.describe()} without its unit")
            return enc.offsets[id(entry)] - enc.unit_offsets[id(unit)][0]
        if unit is not None and unit.offset >= 0:
            new = enc.moved.get(unit.offset + entry)
            if new is not None:
                return new - enc.unit_offsets[id(unit)][0]
        return entry


def _location_lists(
    lists: list[LocationList], enc: _InfoEncoder, s: DwarfSchemas, asize: int, out: _Output
) -> SectionImage:
    """``.debug_loc``; each list's new offset goes to ``enc.loc_offsets``."""
    from .schemas import build_location_list

    w = _RecordWriter(".debug_loc")
    plain_list = functools.partial(build_location_list, address_size=asize)
    for loc in lists:
        entries = [
            {"begin": b, "end": e, "expr": block_of(x, asize) if x is not None else None}
            for b, e, x in loc.entries
        ]
        entries.append({"begin": 0, "end": 0, "expr": None})
        enc.loc_offsets[id(loc)] = len(w.data)
        w.add(s.location_list, entries, "location list", loc.offset, plain_list)
    return out.records(w)


def _abbreviations(info: DebugInfo, enc: _InfoEncoder, out: _Output) -> SectionImage | None:
    """``.debug_abbrev`` once the units are encoded: the tables kept from the module read,
    then the derived one (``enc.relocs`` get the references to it); None if no table."""
    # Tables read with the module stay (at their offsets) while a unit uses one of them.
    tables = list(info.abbrev_tables) if enc.kept_any or not info.units else []
    if enc.derived_at:
        end = max((t.offset + len(encode_abbrev_table(t)) for t in tables), default=0)
        derived = enc.derived.table(end)
        tables.append(derived)
        for at in enc.derived_at:
            enc.relocs.append(Reloc(at, 4, Symbol(".debug_abbrev", derived.offset)))
        enc.relocs.sort(key=lambda r: r.offset)
    if not tables:
        return None
    data = bytearray()
    breaks = []
    for t in sorted(tables, key=lambda t: t.offset):
        if len(data) != t.offset:
            raise EncodeError(f"abbreviation table at 0x{t.offset:x} would land at 0x{len(data):x}")
        breaks.append(len(data))
        data += encode_abbrev_table(t)
    img = SectionImage(".debug_abbrev", bytes(data), breaks=breaks)
    moved = {t.offset: t.offset for t in tables}
    if not enc.kept_any:  # labels of the tables left out mark the one that replaces them
        moved = {t.offset: 0 for t in info.abbrev_tables} | moved
    return out.place(img, moved)


def _range_lists(lists: list[RangeList], s: DwarfSchemas, out: _Output) -> SectionImage:
    """``.debug_ranges``."""
    w = _RecordWriter(".debug_ranges")
    for rl in lists:
        pairs: list[dict[str, Any]] = [{"begin": b, "end": e} for b, e in rl.entries]
        pairs.append({"begin": 0, "end": 0})
        w.add(s.range_list, pairs, "range list", rl.offset)
    return out.records(w)


def _aranges(sets: list[ArangeSet], refs: _UnitRefs, out: _Output) -> SectionImage:
    """``.debug_aranges``."""
    from .schemas import build_aranges_set, schemas_for

    w = _RecordWriter(".debug_aranges")
    for a in sets:
        ref, _unit = refs.unit(a.unit_offset)
        pad = a.padding if a.padding is not None else bytes((-12) % (2 * a.address_size))
        obj: dict[str, Any] = {
            "version": a.version,
            "debug_info_offset": ref,
            "address_size": a.address_size,
            "segment_size": a.segment_size,
            "padding": pad,
            "tuples": [{"begin": b, "end": e} for b, e in a.tuples] + [{"begin": 0, "end": 0}],
            "rest": a.rest,
        }
        w.add(
            schemas_for(2, a.address_size).aranges_set,
            obj,
            "aranges set",
            a.offset,
            functools.partial(build_aranges_set, address_size=a.address_size),
        )
    return out.records(w)


def _name_sets(
    name: str, sets: list[NameSet], refs: _UnitRefs, s: DwarfSchemas, out: _Output
) -> SectionImage:
    """``.debug_pubnames`` or ``.debug_pubtypes`` (``name``)."""
    from .schemas import build_name_set

    w = _RecordWriter(name)
    die_ref = refs.die
    for ns in sets:
        ref, unit = refs.unit(ns.unit_offset)
        length = ns.unit_length
        if unit is not None and (length is None or (unit.offset >= 0 and length == unit.length + 4)):
            length = refs.enc.unit_offsets[id(unit)][1]
        names: list[dict[str, Any]] = [
            {"die_offset": die_ref(off, unit), "name": text.encode("utf-8", "surrogateescape")}
            for off, text in ns.entries
        ]
        names.append({"die_offset": 0, "name": None})
        obj = {
            "version": ns.version,
            "debug_info_offset": ref,
            "debug_info_length": length,
            "entries": names,
            "rest": ns.rest,
        }
        w.add(s.pubnames_set, obj, "name set", ns.offset, build_name_set)
    return out.records(w)


def _macinfo(units: list[MacinfoUnit], out: _Output) -> SectionImage:
    """``.debug_macinfo``."""
    from .schemas import MACINFO

    w = _RecordWriter(".debug_macinfo")
    for mu in units:
        w.add(MACINFO, [{"type": t, "body": b or None} for t, b in mu.entries], "macinfo entries", mu.offset)
    return out.records(w)


def encode_sections(info: DebugInfo, options: EncodeOptions | None = None) -> dict[str, SectionImage]:
    """Section images of everything ``info`` holds, keyed by section name."""
    return encode(info, options).images
