"""Attribute values written by form: the encoder's writers.

:func:`value_writers` gives, for one unit's encoding, a writer per form: ``write(x, a)``
appends value ``x`` of attribute ``a`` to the section. ``a`` is the decoded or made
:class:`~.model.Attribute` (its relocations and targets say how a decoded value was
written), or, for a built DIE's value, a constant attribute naming the spec (no
relocations, no target). Numbers out of a form's range raise ``struct.error``,
``ValueError`` or ``OverflowError``, values of no such kind ``TypeError``; the encoder
turns them into an :class:`~ptxdwarf.errors.EncodeError` naming the attribute and DIE.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import EncodeError
from .constants import FORM, at_name, form_name
from .expr import Op, encode_expression
from .forms import fixed_formats, sleb_bytes, uleb_bytes
from .image import Block, Reloc, Symbol
from .model import DIE, Attribute, LocationList

__all__ = ["ExpressionCache", "Writer", "WriterHelpers", "block_of", "value_writers"]

#: ``write(value, attribute)`` appends one value.
Writer = Callable[[Any, Attribute], None]

_REF_FORMS = frozenset(int(f) for f in (FORM.ref1, FORM.ref2, FORM.ref4, FORM.ref8, FORM.ref_addr))


def _string_bytes(x: Any, a: Attribute) -> bytes:
    """The bytes a string form holds for value ``x``: a str in UTF-8, or bytes."""
    if isinstance(x, str):
        return x.encode("utf-8", "surrogateescape")
    if isinstance(x, (bytes, bytearray)):
        return bytes(x)
    raise EncodeError(f"{at_name(a.name)}: a string form cannot hold {type(x).__name__} {x!r:.60}")


_BLOCK_LENGTHS = {int(FORM.block1): 1, int(FORM.block2): 2, int(FORM.block4): 4}
_BLOCK_FORMS = frozenset((*_BLOCK_LENGTHS, int(FORM.block), int(FORM.exprloc)))
_PACK = {1: struct.Struct("<B").pack, 2: struct.Struct("<H").pack, 4: struct.Struct("<I").pack}
_PACK[8] = struct.Struct("<Q").pack


def block_of(value: Any, address_size: int) -> Block:
    """A block or expression value as the bytes (and relocations) it is written as."""
    if isinstance(value, Block):
        return value
    if isinstance(value, (bytes, bytearray)):
        return Block(bytes(value))
    if isinstance(value, (list, tuple)) and all(isinstance(op, Op) for op in value):
        return encode_expression(value, address_size)
    raise TypeError(f"not a block or expression: {value!r}")


class ExpressionCache:
    """:func:`block_of`, remembered by the identity of an operation tuple (kept alive here)."""

    def __init__(self, address_size: int) -> None:
        self.address_size = address_size
        self.by_id: dict[int, tuple[Any, Block]] = {}

    def get(self, value: Any) -> Block:
        found = self.by_id.get(id(value))
        if found is not None and found[0] is value:
            return found[1]
        block = block_of(value, self.address_size)
        if type(value) is tuple:  # lists may change between DIEs
            self.by_id[id(value)] = (value, block)
        return block


def _sym(symbol: Symbol) -> Symbol:
    """The symbol as a relocation holds it (name and addend only)."""
    if type(symbol) is not Symbol:
        raise TypeError(f"not a symbol: {symbol!r}")
    return symbol if symbol.value is None else Symbol(symbol.name, symbol.addend)


@dataclass
class WriterHelpers:
    """What the writers ask the encoder: ``strp(raw)`` the relocation symbol of a
    ``.debug_str`` string; ``lookup(offset)`` the string at an offset of the decoded
    ``.debug_str``; ``location(value, at, size)`` writes a location list reference;
    ``block(value)`` a block or expression as :func:`block_of` gives it, which
    ``expressions`` (an :class:`ExpressionCache`'s ``by_id``) may hold already; ``target(value,
    attribute)`` the DIE a reference points to (or None); ``dangling(attribute, at, size,
    base, unit_start)`` takes a decoded reference that points at no DIE (True) or declines;
    ``choose(attribute)`` the form of an attribute left open."""

    strp: Callable[[bytes], Symbol]
    lookup: Callable[[int], bytes | None]
    location: Callable[[LocationList, int, int], None]
    block: Callable[[Any], Block]
    expressions: dict[int, tuple[Any, Block]]
    target: Callable[[Any, Attribute], DIE | None]
    dangling: Callable[[Attribute, int, int, int, int], bool]
    choose: Callable[[Attribute], int]


def value_writers(  # noqa: C901 - one small writer per form family, sharing the unit's state
    version: int,
    address_size: int,
    unit_start: int,
    out: bytearray,
    fields: dict[int, int],
    fixups: list[tuple[int, int, DIE, int, Attribute]],
    relocs: list[Reloc],
    offsets: dict[int, int],
    helpers: WriterHelpers,
) -> dict[int, Writer]:
    """The writer of every form ptxdwarf writes, by form code, for the unit at
    ``unit_start``: they append to ``out`` and record multi-byte ``fields``,
    references to patch (``fixups``: position, size, target, base, attribute) and
    ``relocs``; ``offsets`` maps ``id(die)`` to the offsets of the DIEs written so far."""
    block, target, location = helpers.block, helpers.target, helpers.location
    put = out.extend
    expressions = helpers.expressions

    def number(size: int) -> Writer:
        """A fixed-size number, or a symbol, or a location list reference."""
        pack, zeros = _PACK[size], bytes(size)

        def write(x: Any, a: Attribute) -> None:
            at = len(out)
            if size > 1:
                fields[at] = size
            if type(x) is int and not a.relocs:
                put(pack(x))
            elif isinstance(x, Symbol):
                r = a.relocs[0] if a.relocs else None
                width = min(r.size, size) if r is not None and r.symbol == x else size
                relocs.append(Reloc(at, width, Symbol(x.name, x.addend)))
                put(zeros)
            elif isinstance(x, LocationList):
                location(x, at, size)
            elif a.relocs:
                r = a.relocs[0]
                relocs.append(Reloc(at, min(r.size, size), Symbol(r.symbol.name, r.symbol.addend)))
                put(zeros)
            else:
                put(pack(x))

        return write

    def reference(size: int, base: int) -> Writer:
        """A reference to a DIE, written once the DIE's offset is known; or a number."""
        plain = number(size)
        pack, zeros, limit = _PACK[size], bytes(size), 1 << (8 * size)

        def write(x: Any, a: Attribute) -> None:
            t = x if isinstance(x, DIE) else target(x, a)
            if t is None:
                at = len(out)
                if helpers.dangling(a, at, size, base, unit_start):
                    if size > 1:
                        fields[at] = size
                    put(zeros)
                else:
                    plain(x, a)
                return
            at = len(out)
            if size > 1:
                fields[at] = size
            o = offsets.get(id(t))
            # A DIE written already (types usually come first) is referred to right away.
            if o is not None and not a.relocs and 0 <= o - base < limit:
                put(pack(o - base))
            else:
                fixups.append((at, size, t, base, a))
                put(zeros)

        return write

    def strp(x: Any, a: Attribute) -> None:
        at = len(out)
        fields[at] = 4
        raw = _string_bytes(x, a)
        t = a.target
        if isinstance(t, int) and helpers.lookup(t) == raw:  # a decoded strp whose string is still there
            if a.relocs:
                s = a.relocs[0].symbol
                relocs.append(Reloc(at, 4, Symbol(s.name, s.addend)))
                put(b"\0\0\0\0")
            else:
                put(_PACK[4](t))
            return
        relocs.append(Reloc(at, 4, helpers.strp(raw)))
        put(b"\0\0\0\0")

    def string(x: Any, a: Attribute) -> None:
        raw = _string_bytes(x, a)
        if b"\0" in raw:
            raise EncodeError(f"{at_name(a.name)}: string holds a NUL byte")
        put(raw)
        out.append(0)

    def udata(x: Any, _a: Attribute) -> None:
        put(uleb_bytes(x))

    def sdata(x: Any, _a: Attribute) -> None:
        put(sleb_bytes(x))

    def ref_udata(x: Any, a: Attribute) -> None:
        t = target(x, a)
        if t is not None:
            o = offsets.get(id(t))
            if o is None:
                raise EncodeError(f"{at_name(a.name)}: DW_FORM_ref_udata can only refer backwards")
            x = o - unit_start
        put(uleb_bytes(x))

    def flag_present(x: Any, a: Attribute) -> None:
        if x is not True and x != 1:
            raise EncodeError(f"{at_name(a.name)}: DW_FORM_flag_present can only hold True")

    def block_form(form: int) -> Writer:
        width = _BLOCK_LENGTHS.get(form)  # of the length; None: ULEB128
        limit = 1 << (8 * width) if width is not None and width < 4 else None

        def write(x: Any, a: Attribute) -> None:
            found = expressions.get(id(x))
            b = found[1] if found is not None and found[0] is x else block(x)
            n = len(b)
            if limit is not None and n >= limit:
                raise EncodeError(f"{at_name(a.name)}: {n} bytes do not fit {form_name(form)}")
            put(uleb_bytes(n) if width is None else _PACK[width](n))
            first = len(out)
            put(b)
            for r in b.relocs:
                relocs.append(Reloc(first + r.offset, r.size, _sym(r.symbol)))

        return write

    writers: dict[int, Writer] = {}

    def indirect(x: Any, a: Attribute) -> None:
        # The value is the inner attribute (decoded), or a plain value whose form is chosen.
        inner = x if isinstance(x, Attribute) else Attribute(a.name, None, x)
        f = inner.form if inner.form is not None else helpers.choose(inner)
        put(uleb_bytes(f))
        w = writers.get(f)
        if w is None:
            raise EncodeError(f"{at_name(inner.name)}: cannot encode {form_name(f)}")
        w(inner.value, inner)

    for form, fmt in fixed_formats(version, address_size).items():
        size = struct.calcsize("<" + fmt)
        if form in _REF_FORMS:
            writers[int(form)] = reference(size, 0 if form == FORM.ref_addr else unit_start)
        else:
            writers[int(form)] = number(size)
    writers[int(FORM.strp)] = strp
    writers[int(FORM.string)] = string
    writers[int(FORM.udata)] = udata
    writers[int(FORM.sdata)] = sdata
    writers[int(FORM.ref_udata)] = ref_udata
    writers[int(FORM.flag_present)] = flag_present
    writers[int(FORM.indirect)] = indirect
    for form in _BLOCK_FORMS:
        writers[form] = block_form(form)
    return writers
