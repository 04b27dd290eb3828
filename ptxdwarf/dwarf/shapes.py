"""Attribute values written by form: the encoder's writers.

How each form's value is written is said once, as the source lines of
:func:`_form_lines`, and compiled two ways for an encoding (version, address size):

- the *general writer* of each form (:func:`general_writers`), which writes any
  attribute, decoded ones with their relocations and targets included;
- for the DIEs the builder makes, one function per DIE shape that writes a DIE's
  values in order, the forms settled for the encoding (:func:`compile_shape`). A
  builder-made module has a few dozen shapes over hundreds of thousands of DIEs;
  gimli's writer likewise works per abbreviation.

A shape writer raises :class:`UnexpectedValue` for a value it does not expect (a
type the form's built values do not have, a number out of range). The encoder then
takes back everything it wrote and writes that DIE with the general writers, which
say what is wrong where something is.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Any

from ..errors import EncodeError
from .built import BuiltDIE
from .constants import FORM, at_name, form_name
from .expr import Op, encode_expression
from .forms import fixed_formats, sleb_bytes, uleb_bytes
from .image import Reloc, Symbol
from .model import DIE, Attribute, LocationList
from .schemas import Block

__all__ = [
    "ExpressionCache",
    "GeneralWriter",
    "ShapeWriter",
    "UnexpectedValue",
    "block_of",
    "compile_shape",
    "general_writers",
]

#: ``writer(values, out, fields, fixups, relocs, unit_start, offsets)`` appends one DIE's
#: attribute values; ``offsets`` maps ``id(die)`` to the offsets of the DIEs already written.
ShapeWriter = Callable[
    [tuple[Any, ...], bytearray, dict[int, int], list[Any], list[Reloc], int, dict[int, int]], None
]
#: ``writer(value, attribute, out, fields, fixups, relocs, unit_start, offsets)`` appends one value.
GeneralWriter = Callable[
    [Any, Attribute, bytearray, dict[int, int], list[Any], list[Reloc], int, dict[int, int]], None
]


class UnexpectedValue(Exception):
    """A shape writer met a value it does not write; the general path must."""


def _sym(symbol: Symbol) -> Symbol:
    """The symbol as a relocation holds it (name and addend only)."""
    if type(symbol) is not Symbol:
        raise TypeError(f"not a symbol: {symbol!r}")
    return symbol if symbol.value is None else Symbol(symbol.name, symbol.addend)


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


def _err(attr: Attribute, message: str) -> EncodeError:
    return EncodeError(f"{at_name(attr.name)}: {message}")


_PACKS = {fmt: struct.Struct("<" + fmt).pack for fmt in "BHIQ"}
_REF_FORMS = frozenset(int(f) for f in (FORM.ref1, FORM.ref2, FORM.ref4, FORM.ref8, FORM.ref_addr))
_BLOCK_LENGTHS = {int(FORM.block1): "B", int(FORM.block2): "H", int(FORM.block4): "I"}
_BLOCK_FORMS = frozenset((*_BLOCK_LENGTHS, int(FORM.block), int(FORM.exprloc)))


def _fixed(version: int, address_size: int) -> dict[int, tuple[int, str]]:
    """Size and ``struct`` letter of each fixed-size form."""
    return {
        int(form): (struct.calcsize("<" + fmt), fmt)
        for form, fmt in fixed_formats(version, address_size).items()
    }


def _number_lines(size: int, fmt: str, general: bool) -> list[str]:
    """Write ``x``, a number that may be a symbol or a location list, at ``at``."""
    pack = f"_p{fmt}"
    zeros = repr(bytes(size))
    if general:
        return [
            f"if type(x) is int and not a.relocs: out += {pack}(x)",
            "elif isinstance(x, Symbol):",
            "    r = a.relocs[0] if a.relocs else None",
            f"    w = min(r.size, {size}) if r is not None and r.symbol == x else {size}",
            "    relocs.append(Reloc(at, w, Symbol(x.name, x.addend)))",
            f"    out += {zeros}",
            f"elif isinstance(x, LocationList): _loc(x, at, {size}, out, relocs)",
            "elif a.relocs:",
            "    r = a.relocs[0]",
            f"    relocs.append(Reloc(at, min(r.size, {size}), Symbol(r.symbol.name, r.symbol.addend)))",
            f"    out += {zeros}",
            f"else: out += {pack}(x)",
        ]
    return [
        "if type(x) is int: " + ("out.append(x)" if size == 1 else f"out += {pack}(x)"),
        f"elif type(x) is Symbol: relocs.append(Reloc(len(out), {size}, _sym(x))); out += {zeros}",
        f"elif type(x) is LocationList: _loc(x, len(out), {size}, out, relocs)",
        f"else: out += {pack}(x)",
    ]


def _fixed_form_lines(form: int, size: int, fmt: str, general: bool) -> list[str]:
    """The lines of :func:`_form_lines` for a fixed-size form (``size`` bytes, ``struct`` letter ``fmt``)."""
    zeros = repr(bytes(size))
    # A built one-byte number needs no offset (no field is recorded for one byte).
    lines = [] if size == 1 and not general and form not in _REF_FORMS else ["at = len(out)"]
    if size > 1:
        lines.append(f"fields[at] = {size}")
    if form == FORM.strp:
        if not general:
            return [
                "if type(x) is not str: raise _U",
                *lines,
                "relocs.append(Reloc(at, 4, _strp(x.encode('utf-8', 'surrogateescape'))))",
                f"out += {zeros}",
            ]
        return [
            *lines,
            "raw = x.encode('utf-8', 'surrogateescape') if isinstance(x, str) else bytes(x)",
            "t = a.target",
            "if isinstance(t, int) and _lookup(t) == raw:",  # a decoded strp whose string is still there
            "    if a.relocs:",
            "        s = a.relocs[0].symbol",
            f"        relocs.append(Reloc(at, 4, Symbol(s.name, s.addend))); out += {zeros}",
            "    else: out += _pI(t)",
            f"else: relocs.append(Reloc(at, 4, _strp(raw))); out += {zeros}",
        ]
    if form in _REF_FORMS:
        base = "0" if form == FORM.ref_addr else "unit_start"
        if general:
            lines += [
                "t = _target(a)",
                "if t is not None:",
                f"    fixups.append((at, {size}, t, {base}, a)); out += {zeros}",
                f"elif _dangling(a, at, {size}, {base}, unit_start):",
                f"    out += {zeros}",
                "else:",
            ]
            return lines + ["    " + line for line in _number_lines(size, fmt, True)]
        # A DIE written already (types usually come first) is referred to right away;
        # others wait for the encoder's fixups.
        return [
            *lines,
            f"if type(x) is int: out += _p{fmt}(x)",
            "else:",
            "    o = offsets.get(id(x))",
            f"    if o is not None: out += _p{fmt}(o - {base})",
            f"    elif isinstance(x, DIE): fixups.append((at, {size}, x, {base}, a)); out += {zeros}",
            "    else: raise _U",
        ]
    return lines + _number_lines(size, fmt, general)


def _form_lines(form: int, version: int, address_size: int, general: bool) -> list[str] | None:
    """The source lines writing value ``x`` of ``form`` at the end of ``out``: for any
    attribute ``a`` (``general``), or for a built value (then ``a`` is a constant
    attribute naming it, and an unexpected value raises ``_U``). None for a form
    that has no such lines."""

    def fail(message: str) -> str:
        return f"raise _err(a, {message})" if general else "raise _U"

    fixed = _fixed(version, address_size).get(form)
    if fixed is not None:
        return _fixed_form_lines(form, *fixed, general)
    if form == FORM.string:
        if general:
            return [
                "raw = x.encode('utf-8', 'surrogateescape') if isinstance(x, str) else bytes(x)",
                "if b'\\0' in raw: " + fail("'string holds a NUL byte'"),
                "out += raw",
                "out.append(0)",
            ]
        return [
            "if type(x) is not str: raise _U",
            "raw = x.encode('utf-8', 'surrogateescape')",
            "if b'\\0' in raw: raise _U",
            "out += raw",
            "out.append(0)",
        ]
    if form in (FORM.udata, FORM.sdata):
        code = "_uleb" if form == FORM.udata else "_sleb"
        return ([] if general else ["if type(x) is not int: raise _U"]) + [f"out += {code}(x)"]
    if form == FORM.ref_udata:
        target = "_target(a)" if general else "None if type(x) is int else x"
        return [
            f"t = {target}",
            "if t is not None:",
            "    o = offsets.get(id(t))",
            "    if o is None: " + fail("'DW_FORM_ref_udata can only refer backwards'"),
            "    x = o - unit_start",
            "out += _uleb(x)",
        ]
    if form == FORM.flag_present:
        test = "x is not True and x != 1" if general else "x is not True"
        return [f"if {test}: " + fail("'DW_FORM_flag_present can only hold True'")]
    if form in _BLOCK_FORMS:
        lines = [
            "f = _by_id.get(id(x))",
            "b = f[1] if f is not None and f[0] is x else _block(x)",
            "n = len(b)",
        ]
        length = _BLOCK_LENGTHS.get(form)
        if length == "B":
            lines += ["if n > 0xFF: " + fail("f'{n} bytes do not fit DW_FORM_block1'"), "out.append(n)"]
        elif length == "H":
            lines += ["if n > 0xFFFF: " + fail("f'{n} bytes do not fit DW_FORM_block2'"), "out += _pH(n)"]
        elif length == "I":
            lines.append("out += _pI(n)")
        else:
            lines.append("out += _uleb(n)")
        return [
            *lines,
            "first = len(out)",
            "out += b",
            "for r in b.relocs: relocs.append(Reloc(first + r.offset, r.size, _sym(r.symbol)))",
        ]
    if form == FORM.indirect and general:
        # The value is the inner attribute (decoded), or a plain value whose form is chosen.
        return [
            "inner = x if isinstance(x, Attribute) else Attribute(a.name, None, x)",
            "f = inner.form if inner.form is not None else _choose(inner)",
            "out += _uleb(f)",
            "w = _writers.get(f)",
            "if w is None: raise _err(inner, 'cannot encode ' + form_name(f))",
            "w(inner.value, inner, out, fields, fixups, relocs, unit_start, offsets)",
        ]
    return None


#: What the compiled writers see besides their arguments.
_GLOBALS: dict[str, Any] = {
    "Attribute": Attribute,
    "BuiltDIE": BuiltDIE,
    "DIE": DIE,
    "LocationList": LocationList,
    "Reloc": Reloc,
    "Symbol": Symbol,
    "_U": UnexpectedValue,
    "_err": _err,
    "_sleb": sleb_bytes,
    "_struct_error": struct.error,
    "_sym": _sym,
    "_uleb": uleb_bytes,
    "form_name": form_name,
    **{f"_p{fmt}": pack for fmt, pack in _PACKS.items()},
}
#: The helpers an encoder lends the compiled writers: ``_strp(raw)`` the relocation
#: symbol of a ``.debug_str`` string; ``_lookup(offset)`` the string at an offset of the
#: decoded ``.debug_str``; ``_loc(value, at, size, out, relocs)`` writes a location list
#: reference; ``_block`` and ``_by_id`` are an :class:`ExpressionCache`'s ``get`` and
#: ``by_id``; ``_target(attr)`` the DIE a reference attribute points to;
#: ``_dangling(attr, at, size, base, unit_start)`` takes a decoded reference that points at
#: no DIE (True) or declines (False); ``_choose(attr)`` the form of an attribute left open.
_HELPERS = ("_strp", "_lookup", "_loc", "_block", "_by_id", "_target", "_dangling", "_choose")


def _factory(source: list[str], name: str) -> Callable[..., Any]:
    namespace = dict(_GLOBALS)
    exec(compile("\n".join(source), name, "exec"), namespace)  # generated above
    return namespace["_make"]  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=64)  # keyed by values read from the input: bounded
def _general_factory(version: int, address_size: int) -> Callable[..., dict[int, GeneralWriter]]:
    source = [f"def _make({', '.join(_HELPERS)}):", "    _writers = {}"]
    forms = sorted(
        {
            *_fixed(version, address_size),
            *_BLOCK_FORMS,
            int(FORM.string),
            int(FORM.udata),
            int(FORM.sdata),
            int(FORM.ref_udata),
            int(FORM.flag_present),
            int(FORM.indirect),
        }
    )
    for form in forms:
        lines = _form_lines(form, version, address_size, True)
        assert lines is not None
        source.append(f"    def _w{form}(x, a, out, fields, fixups, relocs, unit_start, offsets):")
        source += ["        " + line for line in lines]
        source.append(f"    _writers[{form}] = _w{form}")
    source.append("    return _writers")
    return _factory(source, f"<ptxdwarf general writers {version}/{address_size}>")


def general_writers(version: int, address_size: int, **helpers: Any) -> dict[int, GeneralWriter]:
    """The general writer of every form ptxdwarf writes, by form code, in an encoding,
    bound to an encoder's ``helpers`` (see ``_HELPERS``)."""
    return _general_factory(version, address_size)(*(helpers[name] for name in _HELPERS))


@functools.lru_cache(maxsize=4096)
def _shape_factory(
    specs: tuple[tuple[int, int], ...], forms: tuple[int, ...], version: int, address_size: int
) -> Callable[..., ShapeWriter] | None:
    body = []
    consts = []
    for i, ((name, _kind), form) in enumerate(zip(specs, forms, strict=False)):
        lines = _form_lines(form, version, address_size, False)
        if lines is None:
            return None
        body.append(f"      x = v[{i}]")
        if form in _REF_FORMS:  # the fixup names the attribute in its messages
            consts.append(f"  _a{i} = Attribute({name}, {form}, None)")
            body.append(f"      a = _a{i}")
        body += ["      " + line for line in lines]
    source = [
        f"def _make({', '.join(_HELPERS)}):",
        *consts,
        "  def _write(v, out, fields, fixups, relocs, unit_start, offsets):",
        "    try:",
        *(body or ["      pass"]),
        "    except (_struct_error, TypeError, ValueError, OverflowError):",
        "      raise _U from None",
        "  return _write",
    ]
    return _factory(source, f"<ptxdwarf shape writer {version}/{address_size}>")


def compile_shape(
    specs: tuple[tuple[int, int], ...],
    forms: list[int],
    *,
    address_size: int,
    version: int,
    **helpers: Any,
) -> ShapeWriter | None:
    """The writer of a built shape's values (``forms`` settled), bound to an encoder's
    ``helpers`` (see ``_HELPERS``); None for a form it does not write (``indirect``)."""
    factory = _shape_factory(specs, tuple(forms), version, address_size)
    if factory is None:
        return None
    return factory(*(helpers.get(name) for name in _HELPERS))
