"""Attribute readers compiled per abbreviation: the decoder's hot path.

An abbreviation fixes the names and forms of its DIEs' attributes, so the code that
reads them is written out once per abbreviation (one ``struct`` unpack per run of
fixed-size forms, each attribute's handling known in advance) and compiled, as the
encoder compiles a writer per DIE shape. :func:`compile_plan` makes a factory; the
decoder binds it to a unit and calls the reader once per DIE.
"""

from __future__ import annotations

import functools
import struct
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from .constants import FORM
from .forms import RELOCATABLE_FORMS, fixed_formats, read_uleb, reader_for
from .image import Reloc
from .model import REFERENCE_FORMS, AbbrevDecl, Attribute
from .schemas import Block

__all__ = ["AttributeReader", "Plan"]

#: ``reader(data, pos, end, attrs) -> pos``: appends the DIE's attributes read at
#: ``pos`` to ``attrs``; raises IndexError, ValueError or struct.error past ``end``.
AttributeReader = Callable[[bytes, int, int, list[Attribute]], int]

_BLOCK_FORMS = (FORM.block1, FORM.block2, FORM.block4, FORM.block, FORM.exprloc)
_VARIABLE_FORMS = frozenset({FORM.string, FORM.indirect, FORM.udata, FORM.ref_udata, *_BLOCK_FORMS})

# Names the compiled code finds in its globals.
_GLOBALS: dict[str, Any] = {
    "new_attr": Attribute.__new__,
    "Attribute": Attribute,
    "Reloc": Reloc,
    "Block": Block,
    "new_bytes": bytes.__new__,
    "bisect_left": bisect_left,
}


class Plan:
    """How the DIEs of one abbreviation are read (see the module docstring)."""

    __slots__ = ("address_size", "children", "code", "specs", "tag", "version")

    def __init__(self, decl: AbbrevDecl, version: int, address_size: int) -> None:
        """Raises KeyError with the form code of a form it does not know. The reader is
        compiled when a DIE first uses the abbreviation."""
        self.code = decl.code
        self.tag = decl.tag
        self.children = decl.has_children
        self.specs = tuple(decl.specs)
        self.version = version
        self.address_size = address_size
        formats = fixed_formats(version, address_size)
        for _name, form in self.specs:
            if (
                form not in formats
                and form not in _VARIABLE_FORMS
                and reader_for(form, version, address_size) is None
            ):
                raise KeyError(form)

    def bind(
        self,
        unit_offset: int,
        rmap: dict[int, Reloc] | None,
        applied: bool,
        resolve: Callable[[Any], int],
        string_at: Callable[[int, int], str],
        reloc_offsets: list[int],
        relocs: list[Reloc],
        indirect: Callable[[int, bytes, int, list[Attribute]], int],
    ) -> AttributeReader:
        """The reader of this abbreviation's attributes in one unit."""
        factory = compile_plan(self.specs, self.version, self.address_size)
        return factory(unit_offset, rmap, applied, resolve, string_at, reloc_offsets, relocs, indirect)


class _Writer:
    """Lines of the reader being written, and the constants it names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {}

    def const(self, value: Any) -> str:
        if type(value) is int:
            return repr(value)
        name = f"K{len(self.names)}"
        self.names[name] = value
        return name

    def emit(self, line: str) -> None:
        self.lines.append("        " + line)

    def attribute(self, name: int, form: int, value: str, offset: str) -> None:
        self.emit("a = new_attr(Attribute)")
        self.emit(f"a.name = {self.const(name)}")
        self.emit(f"a.form = {self.const(form)}")
        self.emit(f"a.value = {value}")
        self.emit("a.relocs = ()")
        self.emit("a.target = None")
        self.emit(f"a.offset = {offset}")


def _emit_fixed_run(w: _Writer, run: list[tuple[int, int, int]], run_fmt: str) -> None:
    """Code reading a run of fixed-size attributes (``(name, form, offset in the run)``) with one
    ``struct`` unpack."""
    unpack = struct.Struct("<" + run_fmt)
    targets = ", ".join(f"v{i}" for i in range(len(run)))
    w.emit(f"{targets}, = {w.const(unpack.unpack_from)}(data, pos)")
    for i, (name, form, rel) in enumerate(run):
        at = f"pos + {rel}" if rel else "pos"
        w.attribute(name, form, f"v{i}", at)
        if form in RELOCATABLE_FORMS:
            w.emit("if rmap is not None:")
            w.emit(f"    r = rmap.get({at})")
            w.emit("    if r is not None:")
            w.emit("        a.relocs = (Reloc(0, r.size, r.symbol),)")
            w.emit("        if not applied:")
            w.emit(f"            a.value = v{i} = resolve(r.symbol)")
        if form in REFERENCE_FORMS:
            w.emit(f"a.target = unit_offset + v{i}")
        elif form == FORM.ref_addr:
            w.emit(f"a.target = v{i}")
        elif form == FORM.strp:
            w.emit(f"a.target = v{i}")
            w.emit(f"a.value = string_at(v{i}, {at})")
        w.emit("app(a)")
    w.emit(f"pos += {unpack.size}")
    w.emit("if pos > end: raise IndexError")


def _emit_block(w: _Writer, name: int, form: int, version: int, address_size: int) -> None:
    """Code reading a block or exprloc attribute, with the relocations inside it."""
    if form in (FORM.exprloc, FORM.block1, FORM.block):
        # the length (one byte, or a ULEB128 of one byte), inline
        w.emit("first = data[pos]")
        if form == FORM.block1:
            w.emit("newpos = pos + 1 + first")
            w.emit("first = pos + 1")
        else:
            w.emit("if first < 0x80:")
            w.emit("    newpos = pos + 1 + first")
            w.emit("    first = pos + 1")
            w.emit("else:")
            w.emit(f"    first, newpos = {w.const(read_uleb)}(data, pos)")
            w.emit("    first, newpos = newpos, newpos + first")
        w.emit("if newpos > len(data): raise IndexError")
        w.emit("raw = data[first:newpos]")
    else:
        w.emit(f"raw, newpos = {w.const(reader_for(form, version, address_size))}(data, pos)")
        w.emit("first = newpos - len(raw)")
    w.emit("inner = ()")
    w.emit("if rmap is not None:")
    w.emit("    lo = bisect_left(reloc_offsets, first)")
    w.emit("    if lo < len(reloc_offsets) and reloc_offsets[lo] < newpos:")
    w.emit("        hi = bisect_left(reloc_offsets, newpos, lo)")
    w.emit("        inner = tuple([r.moved(-first) for r in relocs[lo:hi]])")
    w.emit("block = new_bytes(Block, raw)")
    w.emit("block.relocs = inner")
    w.attribute(name, form, "block", "pos")
    w.emit("a.relocs = inner")
    w.emit("app(a)")
    w.emit("pos = newpos")


def _emit_variable(w: _Writer, name: int, form: int, version: int, address_size: int) -> None:
    """Code reading an attribute of a variable-size form other than a block."""
    if form == FORM.string:
        w.emit("stop = data.index(b'\\0', pos, end)")
        w.attribute(name, form, "data[pos:stop].decode('utf-8', 'surrogateescape')", "pos")
        w.emit("app(a)")
        w.emit("pos = stop + 1")
    elif form in _BLOCK_FORMS:
        _emit_block(w, name, form, version, address_size)
    elif form == FORM.indirect:
        w.emit(f"pos = indirect({w.const(name)}, data, pos, attrs)")
    elif form in (FORM.udata, FORM.ref_udata):
        w.emit("value = data[pos]")
        w.emit("if value < 0x80:")
        w.emit("    newpos = pos + 1")
        w.emit("else:")
        w.emit(f"    value, newpos = {w.const(reader_for(form, version, address_size))}(data, pos)")
        w.attribute(name, form, "value", "pos")
        if form == FORM.ref_udata:
            w.emit("a.target = unit_offset + value")
        w.emit("app(a)")
        w.emit("pos = newpos")
    else:
        reader = reader_for(form, version, address_size)
        if reader is None:
            raise KeyError(form)
        w.emit(f"value, newpos = {w.const(reader)}(data, pos)")
        w.attribute(name, form, "value", "pos")
        w.emit("app(a)")
        w.emit("pos = newpos")
    w.emit("if pos > end: raise IndexError")


#: Attributes per compiled reader; a longer abbreviation (only garbage has one) is read by
#: several readers in turn, so that no generated function grows without bound.
_CHUNK = 128


@functools.lru_cache(maxsize=1024)
def compile_plan(
    specs: tuple[tuple[int, int], ...], version: int, address_size: int
) -> Callable[..., AttributeReader]:
    """The reader factory of attributes ``specs`` (``(name, form)`` pairs); KeyError
    with the form code of a form it does not know."""
    if len(specs) > _CHUNK:
        parts = [
            compile_plan(specs[i : i + _CHUNK], version, address_size) for i in range(0, len(specs), _CHUNK)
        ]

        def chained(*args: Any) -> AttributeReader:
            readers = [part(*args) for part in parts]

            def read(data: bytes, pos: int, end: int, attrs: list[Attribute]) -> int:
                for reader in readers:
                    pos = reader(data, pos, end, attrs)
                return pos

            return read

        return chained
    formats = fixed_formats(version, address_size)
    w = _Writer()
    run: list[tuple[int, int, int]] = []  # (name, form, offset in the run) of fixed-size forms
    run_fmt = ""
    for name, form in specs:
        fmt = formats.get(form)
        if fmt is not None:
            run.append((name, form, struct.calcsize("<" + run_fmt)))
            run_fmt += fmt
            continue
        if run:
            _emit_fixed_run(w, run, run_fmt)
            run, run_fmt = [], ""
        _emit_variable(w, name, form, version, address_size)
    if run:
        _emit_fixed_run(w, run, run_fmt)
    source = "\n".join(
        [
            "def factory(unit_offset, rmap, applied, resolve, string_at, reloc_offsets, relocs, indirect):",
            "    def read(data, pos, end, attrs):",
            "        app = attrs.append",
            *w.lines,
            "        return pos",
            "    return read",
        ]
    )
    namespace = dict(_GLOBALS, **w.names)
    exec(compile(source, "<ptxdwarf attribute reader>", "exec"), namespace)
    return namespace["factory"]  # type: ignore[no-any-return]
