"""Construct descriptions of every DWARF record ptxdwarf reads or writes.

Where they are the codec and where the reference: abbreviation tables,
``.debug_ranges``, ``.debug_macinfo`` and the name and aranges sets when read are
parsed and built through these schemas (compiled where Construct can). The records
counted per DIE or per function have plain-Python twins on the hot path, and the
schemas are the reference those are tested against: attribute values and unit
headers (the decoder's readers in :mod:`ptxdwarf.dwarf.forms` and plan of fixed
fields, the encoder's writers in :mod:`ptxdwarf.dwarf.writers`; the tests encode and
decode through them and compare with :attr:`DwarfSchemas.form_values` and
:attr:`DwarfSchemas.unit_header`), location lists (read and written plainly, read
through the schema when the plain reader cannot), and the name, aranges and location
list builders below.

One schema serves parse and build. Schemas that depend on the encoding (DWARF
version, address size) are made once per encoding by :func:`schemas_for` and
cached, as pyelftools does with its ``DWARFStructs``.

Fields that may hold a PTX symbol (addresses, section offsets, blocks holding
``DW_OP_addr``) are wrapped in :class:`Symbolic` / :class:`SymbolicBlock`:
parsing takes the relocations of the section as the parameter ``relocs``
(``{offset: Reloc}``; ``base`` is the section offset of the data's first byte)
and returns a :class:`~ptxdwarf.dwarf.image.Symbol` where one is; building writes
zeros for a symbol and appends a :class:`~ptxdwarf.dwarf.image.Reloc` to the list
given as ``out_relocs``.
"""

from __future__ import annotations

import functools
import io
import struct
from typing import Any

from construct import (
    Bytes,
    Construct,
    ConstructError,
    Error,
    GreedyBytes,
    GreedyRange,
    If,
    Int8ul,
    Int16ul,
    Int32ul,
    Int64ul,
    IntegerError,
    LazyBound,
    NullTerminated,
    Pass,
    RepeatUntil,
    SizeofError,
    StreamError,
    Struct,
    Subconstruct,
    Switch,
    Tell,
    VarInt,
    obj_,
    stream_read,
    stream_tell,
    stream_write,
    this,
)

from .constants import FORM
from .image import Block, Reloc, Symbol, end_of_list

__all__ = [
    "ABBREV_DECL",
    "ABBREV_TABLE",
    "MACINFO",
    "SLEB128",
    "STRING_TABLE",
    "ULEB128",
    "CStringBytes",
    "DwarfSchemas",
    "Symbolic",
    "SymbolicBlock",
    "build_aranges_set",
    "build_location_list",
    "build_name_set",
    "compiled_abbrev_table",
    "schemas_for",
]


#: Unsigned LEB128 (Construct's ``VarInt`` is exactly that encoding).
ULEB128 = VarInt


class _SLEB128(Construct):  # type: ignore[misc]
    """Signed LEB128."""

    def _parse(self, stream: Any, _context: Any, path: str) -> int:
        result = 0
        shift = 0
        while True:
            byte = stream_read(stream, 1, path)[0]
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        if byte & 0x40:
            result -= 1 << shift
        return int(result)

    def _build(self, obj: Any, stream: Any, _context: Any, path: str) -> int:
        if not isinstance(obj, int):
            raise IntegerError(f"value {obj!r} is not an integer", path=path)
        out = bytearray()
        value = obj
        while True:
            byte = value & 0x7F
            value >>= 7
            if (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40):
                out.append(byte)
                break
            out.append(byte | 0x80)
        stream_write(stream, bytes(out), len(out), path)
        return obj

    def _sizeof(self, _context: Any, path: str) -> int:
        raise SizeofError(path=path)


#: Signed LEB128.
SLEB128 = _SLEB128()


class SymbolError(ConstructError):  # type: ignore[misc]
    """A symbol was given where no relocation list was passed to ``build``."""


def _params(context: Any) -> Any:
    return context._params


class Symbolic(Subconstruct):  # type: ignore[misc]
    """A fixed-size number that may be a symbol (see the module docstring).

    With the parse parameter ``applied=True`` (a cubin whose relocations were
    applied) the parsed :class:`Symbol` carries the stored number as its ``value``.
    """

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        params = _params(context)
        relocs = params.get("relocs")
        at = stream_tell(stream, path) + params.get("base", 0)
        value = self.subcon._parsereport(stream, context, path)
        if relocs:
            reloc = relocs.get(at)
            if reloc is not None:
                sym = reloc.symbol
                return Symbol(sym.name, sym.addend, value if params.get("applied") else None)
        return value

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        if isinstance(obj, Symbol):
            params = _params(context)
            out = params.get("out_relocs")
            if out is None:
                raise SymbolError(f"symbol {obj} where no relocation can be recorded", path=path)
            at = stream_tell(stream, path) + params.get("base", 0)
            out.append(Reloc(at, self.subcon.sizeof(), Symbol(obj.name, obj.addend)))
            self.subcon._build(0, stream, context, path)
            return obj
        return self.subcon._build(obj, stream, context, path)

    def _sizeof(self, context: Any, path: str) -> int:
        return int(self.subcon._sizeof(context, path))


class SymbolicBlock(Construct):  # type: ignore[misc]
    """A length-prefixed block (``lengthfield`` then bytes) whose bytes may hold symbols."""

    def __init__(self, lengthfield: Any) -> None:
        super().__init__()
        self.lengthfield = lengthfield

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        params = _params(context)
        length = self.lengthfield._parsereport(stream, context, path)
        first = stream_tell(stream, path) + params.get("base", 0)
        data = stream_read(stream, length, path)
        relocs = params.get("relocs")
        inner = []
        if relocs:
            for off in range(first, first + length):
                reloc = relocs.get(off)
                if reloc is not None:
                    inner.append(reloc.moved(-first))
        return Block(data, inner)

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        data = bytes(obj)
        self.lengthfield._build(len(data), stream, context, path)
        inner = getattr(obj, "relocs", ())
        if inner:
            params = _params(context)
            out = params.get("out_relocs")
            if out is None:
                raise SymbolError("block with symbols where no relocation can be recorded", path=path)
            at = stream_tell(stream, path) + params.get("base", 0)
            out.extend(r.moved(at) for r in inner)
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, _context: Any, path: str) -> int:
        raise SizeofError(path=path)


class _Located(Construct):  # type: ignore[misc]
    """``Prefixed(lengthfield, subcon)`` whose body knows its offsets in the section.

    The length field must have a fixed size. Parsing reads exactly the stated number
    of bytes (a length that overruns the data is an error, never a large read).
    """

    def __init__(self, lengthfield: Any, subcon: Any) -> None:
        super().__init__()
        self.lengthfield = lengthfield
        self.subcon = subcon

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        length = self.lengthfield._parsereport(stream, context, path)
        start = stream_tell(stream, path)
        data = stream_read(stream, length, path)
        params = _params(context)
        saved = params.get("base", 0)
        params["base"] = saved + start
        try:
            return self.subcon._parsereport(io.BytesIO(data), context, path)
        finally:
            params["base"] = saved

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        params = _params(context)
        saved = params.get("base", 0)
        params["base"] = saved + stream_tell(stream, path) + self.lengthfield.sizeof()
        body = io.BytesIO()
        try:
            result = self.subcon._build(obj, body, context, path)
        finally:
            params["base"] = saved
        data = body.getvalue()
        self.lengthfield._build(len(data), stream, context, path)
        stream_write(stream, data, len(data), path)
        return result

    def _sizeof(self, _context: Any, path: str) -> int:
        raise SizeofError(path=path)


#: A NUL-terminated byte string, kept as bytes (names need not be UTF-8).
CStringBytes = NullTerminated(GreedyBytes)

_ATTR_SPEC = Struct("name" / ULEB128, "form" / ULEB128)

#: One abbreviation declaration (code 0 ends a table and has nothing after it);
#: ``offset`` is where it starts in the stream, when parsed.
ABBREV_DECL = Struct(
    "offset" / Tell,
    "code" / ULEB128,
    "decl"
    / If(
        this.code != 0,
        Struct(
            "tag" / ULEB128,
            "children" / Int8ul,
            "attr_specs" / RepeatUntil((obj_.name == 0) & (obj_.form == 0), _ATTR_SPEC),
        ),
    ),
)

#: An abbreviation table: declarations up to and including the code-0 terminator.
ABBREV_TABLE = RepeatUntil(obj_.code == 0, ABBREV_DECL)


@functools.cache
def compiled_abbrev_table() -> Any:
    """:data:`ABBREV_TABLE` compiled, made on first use."""
    return ABBREV_TABLE.compile()


#: ``.debug_str``: NUL-terminated strings end to end.
STRING_TABLE = GreedyRange(CStringBytes)

#: ``.debug_macinfo`` (DWARF 2-4) entry; type 0 ends a unit's entries.
MACINFO_ENTRY = Struct(
    "type" / Int8ul,
    "body"
    / Switch(
        this.type,
        {
            0: Pass,
            1: Struct("line" / ULEB128, "text" / CStringBytes),
            2: Struct("line" / ULEB128, "text" / CStringBytes),
            3: Struct("line" / ULEB128, "file" / ULEB128),
            4: Pass,
            255: Struct("constant" / ULEB128, "text" / CStringBytes),
        },
        default=Error,
    ),
)
#: A ``.debug_macinfo`` unit: entries up to and including type 0.
MACINFO = RepeatUntil(obj_.type == 0, MACINFO_ENTRY)


def _end_pair(entry: Any, context: Any) -> bool:
    return end_of_list(entry["begin"], entry["end"], _params(context).get("unresolved") or frozenset())


def _form_values(version: int, addr: Any, offset: Any) -> dict[int, Any]:
    """:attr:`DwarfSchemas.form_values`, ``DW_FORM_indirect`` included."""
    forms: dict[int, Any] = {
        FORM.addr: addr,
        FORM.block2: SymbolicBlock(Int16ul),
        FORM.block4: SymbolicBlock(Int32ul),
        FORM.data2: Int16ul,
        FORM.data4: Symbolic(Int32ul),
        FORM.data8: Symbolic(Int64ul),
        FORM.string: CStringBytes,
        FORM.block: SymbolicBlock(ULEB128),
        FORM.block1: SymbolicBlock(Int8ul),
        FORM.data1: Int8ul,
        FORM.flag: Int8ul,
        FORM.sdata: SLEB128,
        FORM.strp: offset,
        FORM.udata: ULEB128,
        FORM.ref_addr: addr if version == 2 else offset,
        FORM.ref1: Int8ul,
        FORM.ref2: Int16ul,
        FORM.ref4: Int32ul,
        FORM.ref8: Int64ul,
        FORM.ref_udata: ULEB128,
        FORM.sec_offset: offset,
        FORM.exprloc: SymbolicBlock(ULEB128),
        FORM.flag_present: Pass,
        FORM.ref_sig8: Int64ul,
    }
    forms[FORM.indirect] = Struct(
        "form" / ULEB128,
        "value" / Switch(this.form, forms, default=LazyBound(lambda: _UNKNOWN_FORM)),
    )
    return forms


def _name_set(offset: Any) -> Any:
    """:attr:`DwarfSchemas.pubnames_set`."""
    return _Located(
        Int32ul,
        Struct(
            "version" / Int16ul,
            "debug_info_offset" / offset,
            "debug_info_length" / Int32ul,
            "entries"
            / RepeatUntil(
                obj_.die_offset == 0,
                Struct("die_offset" / Int32ul, "name" / If(this.die_offset != 0, CStringBytes)),
            ),
            "rest" / GreedyBytes,
        ),
    )


def _aranges_set(addr: Any, offset: Any, address_size: int) -> Any:
    """:attr:`DwarfSchemas.aranges_set`."""
    pad = (-(4 + 2 + 4 + 1 + 1)) % (2 * address_size)
    return _Located(
        Int32ul,
        Struct(
            "version" / Int16ul,
            "debug_info_offset" / offset,
            "address_size" / Int8ul,
            "segment_size" / Int8ul,
            "padding" / Bytes(pad),
            "tuples"
            / RepeatUntil(
                lambda e, _lst, ctx: _end_pair(e, ctx),
                Struct("begin" / addr, "end" / addr),
            ),
            "rest" / GreedyBytes,
        ),
    )


def _location_list(addr: Any, address_size: int) -> Any:
    """:attr:`DwarfSchemas.location_list`."""
    max_addr = (1 << (8 * address_size)) - 1
    return RepeatUntil(
        lambda e, _lst, ctx: _end_pair(e, ctx),
        Struct(
            "begin" / addr,
            "end" / addr,
            "expr"
            / If(lambda ctx: not _end_pair(ctx, ctx) and ctx["begin"] != max_addr, SymbolicBlock(Int16ul)),
        ),
    )


class DwarfSchemas:
    """The schemas of one encoding: DWARF ``version`` 2-4, 32-bit, ``address_size`` 4 or 8."""

    def __init__(self, version: int, address_size: int) -> None:
        if version not in (2, 3, 4):
            raise ValueError(f"DWARF version {version} is not supported (2, 3 or 4)")
        if address_size not in (4, 8):
            raise ValueError(f"address size {address_size} is not supported (4 or 8)")
        self.version = version
        self.address_size = address_size
        addr = Symbolic(Int64ul if address_size == 8 else Int32ul)
        offset = Symbolic(Int32ul)
        #: A target address (``DW_FORM_addr``, list entries).
        self.address = addr
        #: A 32-bit section offset.
        self.offset = offset

        #: The header of a ``.debug_info`` unit (32-bit DWARF, versions 2-4).
        self.unit_header = Struct(
            "unit_length" / Int32ul,
            "version" / Int16ul,
            "debug_abbrev_offset" / offset,
            "address_size" / Int8ul,
        )

        forms = _form_values(version, addr, offset)
        #: Attribute value schemas by form code (DWARF 2-4; an unknown form is an error).
        self.form_values: dict[int, Any] = forms
        #: An attribute value of the form given as the parameter ``form``.
        self.attribute_value = Switch(this._params.form, forms, default=Error)

        #: A ``.debug_pubnames`` / ``.debug_pubtypes`` set.
        self.pubnames_set = _name_set(offset)
        #: A ``.debug_aranges`` set; tuples are (begin address, length).
        self.aranges_set = _aranges_set(addr, offset, address_size)
        #: A ``.debug_loc`` list: entries up to the (0, 0) end pair. An entry whose
        #: begin is the largest address selects a base address and has no expression.
        self.location_list = _location_list(addr, address_size)
        #: A ``.debug_ranges`` list: (begin, end) pairs up to the (0, 0) end pair.
        self.range_list = RepeatUntil(
            lambda e, _lst, ctx: _end_pair(e, ctx), Struct("begin" / addr, "end" / addr)
        )


class _UnknownForm(Construct):  # type: ignore[misc]
    def _parse(self, _stream: Any, context: Any, path: str) -> Any:
        raise StreamError(f"unknown form 0x{context.form:x} in DW_FORM_indirect", path=path)

    def _build(self, _obj: Any, _stream: Any, context: Any, path: str) -> Any:
        raise StreamError(f"unknown form 0x{context.form:x} in DW_FORM_indirect", path=path)


_UNKNOWN_FORM = _UnknownForm()


@functools.lru_cache(maxsize=64)  # keyed by values read from the input: bounded
def schemas_for(version: int, address_size: int) -> DwarfSchemas:
    """The cached :class:`DwarfSchemas` of an encoding."""
    return DwarfSchemas(version, address_size)


# --- plain builders of the records the builder makes by the thousand -----------------
#
# The schemas above stay the one description of each record; these write the same
# bytes without Construct's per-field overhead, for the records whose count grows with
# the module (tests check them against the schemas). Anything unusual returns None and
# goes through the schema, which also gives the error messages.

_PLAIN_ERRORS = (struct.error, TypeError, KeyError, ValueError, OverflowError)
_U16 = struct.Struct("<H").pack
_U32 = struct.Struct("<I").pack
_U64 = struct.Struct("<Q").pack


def _put_symbolic(value: Any, size: int, out: bytearray, at: int, relocs: list[Reloc]) -> None:
    if type(value) is int:
        out += _U64(value) if size == 8 else _U32(value)
    elif type(value) is Symbol:
        relocs.append(Reloc(at + len(out), size, Symbol(value.name, value.addend)))
        out += bytes(size)
    else:
        raise TypeError(value)


def build_name_set(obj: dict[str, Any], base: int, relocs: list[Reloc]) -> bytes | None:
    """``DwarfSchemas.pubnames_set.build`` of ``obj`` at section offset ``base``, its
    relocations appended to ``relocs``; None when the schema must build it."""
    found: list[Reloc] = []
    try:
        body = bytearray(_U16(obj["version"]))
        _put_symbolic(obj["debug_info_offset"], 4, body, base + 4, found)
        body += _U32(obj["debug_info_length"])
        for entry in obj["entries"]:
            offset = entry["die_offset"]
            body += _U32(offset)
            if offset == 0:
                break
            name = entry["name"]
            if type(name) is not bytes or b"\0" in name:
                return None
            body += name
            body.append(0)
        else:
            return None  # no terminator: the schema says what is wrong
        body += obj["rest"]
    except _PLAIN_ERRORS:
        return None
    relocs += found
    return _U32(len(body)) + bytes(body)


def build_aranges_set(
    obj: dict[str, Any], base: int, relocs: list[Reloc], *, address_size: int
) -> bytes | None:
    """``schemas_for(2, address_size).aranges_set.build`` of ``obj``; see :func:`build_name_set`."""
    found: list[Reloc] = []
    try:
        if address_size not in (4, 8) or len(obj["padding"]) != (-12) % (2 * address_size):
            return None
        body = bytearray(_U16(obj["version"]))
        _put_symbolic(obj["debug_info_offset"], 4, body, base + 4, found)
        body.append(obj["address_size"])
        body.append(obj["segment_size"])
        body += obj["padding"]
        for entry in obj["tuples"]:
            begin, end = entry["begin"], entry["end"]
            _put_symbolic(begin, address_size, body, base + 4, found)
            _put_symbolic(end, address_size, body, base + 4, found)
            if type(begin) is int and type(end) is int and begin == 0 and end == 0:
                break
        else:
            return None
        body += obj["rest"]
    except _PLAIN_ERRORS:
        return None
    relocs += found
    return _U32(len(body)) + bytes(body)


def build_location_list(
    entries: list[dict[str, Any]], base: int, relocs: list[Reloc], *, address_size: int
) -> bytes | None:
    """``schemas_for(v, address_size).location_list.build`` of ``entries``; see :func:`build_name_set`."""
    found: list[Reloc] = []
    max_addr = (1 << (8 * address_size)) - 1
    try:
        if address_size not in (4, 8):
            return None
        body = bytearray()
        for entry in entries:
            begin, end = entry["begin"], entry["end"]
            _put_symbolic(begin, address_size, body, base, found)
            _put_symbolic(end, address_size, body, base, found)
            if type(begin) is int and type(end) is int and begin == 0 and end == 0:
                break
            if begin == max_addr and type(begin) is int:
                continue  # a base address selection: no expression
            expr = entry["expr"]
            if expr is None:
                return None
            data = bytes(expr)
            body += _U16(len(data))
            at = base + len(body)
            found.extend(r.moved(at) for r in getattr(expr, "relocs", ()))
            body += data
        else:
            return None
    except _PLAIN_ERRORS:
        return None
    relocs += found
    return bytes(body)
