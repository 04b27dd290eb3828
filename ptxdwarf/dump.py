"""Showing decoded debug info: a text tree in the spirit of llvm-dwarfdump, and JSON.

The JSON is the ``ptxdwarf-dump/1`` format, every key of which is documented in
``docs/formats.md`` (a test keeps the two equal).

Both writers walk the tree without recursion, so a DIE nested 100 000 deep is
no problem; the JSON is produced as a stream of chunks for the same reason
(``json.dumps`` of such a tree would hit the recursion limit).
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any, TextIO

from ._native import twin
from .cuda.cubin import register_map, tileir_texts, undecoded_sections, unread_line_images
from .cuda.regmap import SASS_SECTION, FunctionRegisters
from .dwarf.constants import (
    AT,
    ENUMERATED_ATTRIBUTES,
    FORM,
    address_class_name,
    at_name,
    ate_name,
    enumerated_value_name,
    form_name,
    lang_name,
    tag_name,
)
from .dwarf.expr import ExpressionError, Op, decode_expression
from .dwarf.image import Block, Symbol
from .dwarf.lines import LineOpcodes, LineProgram, LineRow, call_sites, iter_line_programs, with_call_sites
from .dwarf.model import DIE, Attribute, DebugInfo, LocationList, Unit
from .dwarf.typenames import type_name

__all__ = [
    "DUMP_FORMAT",
    "SECTIONS",
    "attribute_json",
    "dump_json",
    "dump_text",
    "iter_json",
    "iter_line_text",
    "iter_text",
    "write_json",
]

#: The ``format`` field of ``dump --json`` output.
DUMP_FORMAT = "ptxdwarf-dump/1"

#: The sections a dump can be limited to (``dump --debug-info`` ...), in the order the full
#: dump shows them: ``.debug_info``, ``.debug_loc``, the source line tables (``.debug_line``,
#: cuTile's ``.nv.tileir.debug_line``), ptxas's SASS line table (``.nv_debug_line_sass``),
#: ptxas's register map (``.nv_debug_info_reg_sass``). Each name is llvm-dwarfdump's option
#: for the same section where it has one.
SECTIONS = ("debug-info", "debug-loc", "debug-line", "debug-line-sass", "register-map")

#: The line-table section ``dump --debug-line-sass`` shows; ``--debug-line`` shows the others.
_SASS_LINES = ".nv_debug_line_sass"

#: The debug sections of a cubin that each block of :data:`SECTIONS` is made from (the DIEs
#: show their location lists; the location lists are found and sized through the DIEs).
_CUBIN_SECTIONS: dict[str, tuple[str, ...]] = {
    "debug-info": (
        ".debug_info",
        ".debug_abbrev",
        ".debug_str",
        ".debug_line_str",
        ".debug_loc",
        ".debug_ranges",
    ),
    "debug-loc": (".debug_info", ".debug_abbrev", ".debug_str", ".debug_loc"),
    "debug-line": (".debug_line", ".debug_str", ".debug_line_str", ".nv.tileir.debug_line"),
    "debug-line-sass": (_SASS_LINES, ".debug_str"),
    "register-map": (),
}


def cubin_sections(sections: Collection[str] | None) -> frozenset[str] | None:
    """The debug sections a cubin is read with for a dump of ``sections`` (None: every section,
    for the full dump): what :func:`~ptxdwarf.cuda.read_cubin` takes as ``only``."""
    if sections is None:
        return None
    return frozenset(name for section in sections for name in _CUBIN_SECTIONS[section])


_MAX_INDENT = 40

#: A line-number program as a dump shows it: the program, and the opcodes its rows are read
#: from each time they are shown (None: the program's own rows).
_LineTable = tuple[LineProgram, LineOpcodes | None]

#: How many lines of a unit or of a line table the text dump makes at a time.
_CHUNK_LINES = 4096

#: How many rows of a line table one text of ``dump --json`` holds (about 10 KB).
_JSON_ROWS = 64

#: How many location lists of ``.debug_loc`` the text dump makes at a time (a list's line can
#: be a few hundred characters: about 100 KB).
_LOC_LISTS = 256


class _Dump:
    """What one dump of ``info`` shows (``sections``: the selected ones; None: everything),
    with the parts decoded on first use read now, so that an error of the input comes before
    any output."""

    def __init__(self, info: DebugInfo, sections: Collection[str] | None) -> None:
        if sections is not None and not set(sections) <= set(SECTIONS):
            raise ValueError(f"unknown sections {sorted(set(sections) - set(SECTIONS))}; known: {SECTIONS}")
        self.sections = None if sections is None else frozenset(sections)
        if self.shows("debug-info") or self.shows("debug-loc"):
            _ = info.locations
        if self.shows("other"):
            _ = info.pubnames, info.pubtypes, info.aranges, info.ranges, info.raw
        self.lines = (
            _line_tables(info, self.shows("debug-line"), self.shows("debug-line-sass"))
            if self.shows_lines()
            else None
        )
        self.functions = register_map(info) if self.shows("register-map") else None

    def shows(self, section: str) -> bool:
        """Whether the dump shows ``section`` (``"other"``: the blocks only the full dump has)."""
        return self.sections is None or section in self.sections

    def shows_lines(self) -> bool:
        """Whether the dump shows line tables (``--debug-line`` or ``--debug-line-sass``)."""
        return self.shows("debug-line") or self.shows("debug-line-sass")

    def release_functions(self) -> Iterator[FunctionRegisters]:
        """The register map's functions, each let go once the next is asked for (a function
        keeps its decoded entries)."""
        functions = self.functions or []
        self.functions = None
        functions.reverse()
        while functions:
            yield functions.pop()


def _num(info: DebugInfo, value: int | Symbol | Any) -> Any:
    if isinstance(value, Symbol):
        if value.value is not None:
            return value.value
        return info.resolver(value) if info.resolver else value.addend
    return value


def _expr_json(ops: list[Op]) -> list[dict[str, Any]]:
    out = []
    for op in ops:
        item: dict[str, Any] = {
            "op": op.name,
            "args": [list(a) if isinstance(a, bytes) else a for a in op.args],
        }
        reg = op.register
        if reg is not None:
            item["register"] = reg
        if op.symbol is not None:
            item["symbol"] = op.symbol.name
            item["addend"] = op.symbol.addend
        out.append(item)
    return out


def _expression(attr: Attribute, address_size: int) -> tuple[list[Op] | None, str | None]:
    try:
        return decode_expression(attr.value, address_size), None
    except ExpressionError as exc:
        return None, str(exc)


def attribute_json(attr: Attribute, address_size: int, info: DebugInfo | None = None) -> dict[str, Any]:  # noqa: C901 - run per attribute of the JSON dump: one function, no call per case
    """The JSON object of one attribute (``docs/formats.md``, format ``ptxdwarf-dump/1``)."""
    value = attr.value
    if isinstance(value, Attribute):
        inner = attribute_json(value, address_size, info)
        inner["indirect_form"] = inner["form"]
        inner["form"] = form_name(attr.form) if attr.form is not None else None
        return inner
    out: dict[str, Any] = {
        "name": at_name(attr.name),
        "form": form_name(attr.form) if attr.form is not None else None,
    }
    if isinstance(value, Block):
        out["value"] = list(value)
    elif isinstance(value, DIE):
        out["value"] = value.offset
        out["ref"] = value.offset
    elif isinstance(value, Symbol):
        out["value"] = value.value if value.value is not None else value.addend
    elif isinstance(value, LocationList):
        out["value"] = value.offset
    elif isinstance(value, (bytes, bytearray)):
        out["value"] = list(value)
    elif isinstance(value, list):
        out["value"] = [str(op) for op in value]
    else:
        out["value"] = value
    sym = attr.symbol
    if sym is not None:
        out["symbol"] = sym.name
        out["addend"] = sym.addend
    if attr.form == FORM.strp and isinstance(attr.target, int):
        out["offset"] = attr.target
    elif attr.is_reference and isinstance(attr.target, int):
        out["ref"] = attr.target
    if attr.name == AT.address_class and isinstance(value, int):
        out["meaning"] = address_class_name(value)
    elif attr.name == AT.encoding and isinstance(value, int):
        out["meaning"] = ate_name(value)
    elif attr.name == AT.language and isinstance(value, int):
        out["meaning"] = lang_name(value)
    elif isinstance(value, int) and (named := enumerated_value_name(attr.name, value)) is not None:
        out["meaning"] = named
    if isinstance(value, Block) and attr.is_expression:
        ops, error = _expression(attr, address_size)
        if ops is not None:
            out["expr"] = _expr_json(ops)
        else:
            out["expr_error"] = error
    elif (
        info is not None
        and attr.name in (AT.location, AT.frame_base)
        and attr.form in (FORM.data4, FORM.sec_offset, FORM.data8)
        and info.locations is not None
    ):
        loc = info.location_list_at(
            _num(info, value)
            if not attr.relocs
            else info.resolver(attr.relocs[0].symbol)
            if info.resolver
            else value
        )
        if loc is not None:
            out["loclist"] = _loclist_json(info, loc, address_size)
    return out


def _loclist_json(info: DebugInfo, loc: LocationList, address_size: int) -> list[dict[str, Any]]:
    entries = []
    for begin, end, expr in loc.entries:
        item: dict[str, Any] = {"begin": _num(info, begin), "end": _num(info, end)}
        for key, v in (("begin", begin), ("end", end)):
            if isinstance(v, Symbol):
                item[key + "_symbol"] = str(v)
        if expr is not None:
            try:
                item["expr"] = _expr_json(decode_expression(expr, address_size))
            except ExpressionError as exc:
                item["expr_error"] = str(exc)
        else:
            item["base_address"] = True
        entries.append(item)
    return entries


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)


def _die_head(die: DIE) -> str:
    return '{"offset": %d, "tag": %s, "attributes": ' % (die.offset, _dumps(tag_name(die.tag)))


def _unit_json_chunks(info: DebugInfo, unit: Unit) -> Iterator[str]:
    head = {
        "offset": unit.offset,
        "length": unit.length,
        "version": unit.version,
        "abbrev_offset": _num(info, unit.abbrev_offset),
        "address_size": unit.address_size,
    }
    yield _dumps(head)[:-1] + ', "die": '
    if unit.die is None:
        yield "null}"
        return
    asize = unit.address_size
    # Explicit stack: each entry is a DIE whose children are being written.
    stack: list[tuple[DIE, int]] = []
    die: DIE | None = unit.die
    while True:
        if die is not None:
            yield _die_head(die)
            yield _dumps([attribute_json(a, asize, info) for a in die.attributes])
            if die.children:
                yield ', "children": ['
                stack.append((die, 0))
                die = die.children[0]
                continue
            yield ', "children": []}'
            die = None
        if not stack:
            break
        parent, index = stack.pop()
        index += 1
        if index < len(parent.children):
            stack.append((parent, index))
            yield ", "
            die = parent.children[index]
        else:
            yield "]}"
    yield "}"


def _json_list(items: Iterable[Any]) -> Iterator[str]:
    """A JSON array, item by item, as ``json.dumps`` of the whole list writes it."""
    yield "["
    for i, item in enumerate(items):
        yield ", " + _dumps(item) if i else _dumps(item)
    yield "]"


def _sets_json(info: DebugInfo, dump: _Dump) -> Iterator[tuple[str, Iterator[str]]]:
    """(key, chunks of its value) of the document's members after ``units``."""
    show = dump.shows
    if show("other"):
        for key, sets in (("pubnames", info.pubnames), ("pubtypes", info.pubtypes)):
            if sets is None:
                continue
            yield (
                key,
                _json_list(
                    {
                        "unit_offset": _num(info, ns.unit_offset),
                        "unit_length": ns.unit_length,
                        "entries": [{"die_offset": off, "name": name} for off, name in ns.entries],
                    }
                    for ns in sets
                ),
            )
        if info.aranges is not None:
            yield (
                "aranges",
                _json_list(
                    {
                        "unit_offset": _num(info, a.unit_offset),
                        "address_size": a.address_size,
                        "ranges": [
                            {
                                "begin": _num(info, b),
                                "length": _num(info, e),
                                **({"symbol": str(b)} if isinstance(b, Symbol) else {}),
                            }
                            for b, e in a.tuples
                        ],
                    }
                    for a in info.aranges
                ),
            )
    if show("debug-loc") and info.locations is not None:
        asize = _list_address_size(info)
        yield (
            "locations",
            _json_list(
                {"offset": loc.offset, "entries": _loclist_json(info, loc, asize)} for loc in info.locations
            ),
        )
    if show("other"):
        if info.ranges is not None:
            yield (
                "ranges",
                _json_list(
                    {
                        "offset": r.offset,
                        "entries": [{"begin": _num(info, b), "end": _num(info, e)} for b, e in r.entries],
                    }
                    for r in info.ranges
                ),
            )
        if info.strings is not None:
            yield (
                "strings",
                _json_list(
                    {
                        "offset": off,
                        "string": raw.decode("utf-8", "surrogateescape")
                        .encode("utf-8", "backslashreplace")
                        .decode("utf-8"),
                    }
                    for off, raw in zip(info.strings.offsets, info.strings.strings, strict=False)
                ),
            )
        others = _other_sections(info)
        if others:
            yield "other_sections", _json_list({"name": name, "size": size} for name, size in others)
    if dump.shows_lines() and dump.lines is not None:
        yield "lines", _json_list_of_chunks(_line_program_json(info, p, opcodes) for p, opcodes in dump.lines)
    texts = tileir_texts(info)
    if show("debug-line") and texts:
        yield (
            "tile_ir",
            _json_list({"section": name, "lines": _text_lines(text)} for name, text in texts.items()),
        )
    if show("register-map") and dump.functions is not None:
        yield "register_map", _register_map_json(dump.release_functions())


def _register_map_json(functions: Iterable[FunctionRegisters]) -> Iterator[str]:
    """The JSON array of the register map's ``functions`` (their ``to_json``), a function at
    a time."""
    yield "["
    for i, f in enumerate(functions):
        yield '%s{"function": %s, "entries": [' % (", " if i else "", _dumps(f.function))
        yield f.entries_json(_dumps)
        yield "]}"
    yield "]"


def _other_sections(info: DebugInfo) -> list[tuple[str, int]]:
    """(name, size) of every debug section the dump does not decode: the ``.debug_*`` ones
    without a schema (a cubin's ``.debug_line`` among them), ``.debug_macinfo`` (read, not
    shown), then a cubin's others."""
    found = [(name, len(img.data)) for name, img in info.raw.items()]
    for name in _NOT_SHOWN:
        image = (info.sections or {}).get(name)
        if image is not None and name not in info.raw:
            found.append((name, len(image.data)))
    return found + undecoded_sections(info)


#: Sections ptxdwarf reads that the dump does not show.
_NOT_SHOWN = (".debug_macinfo",)


def _text_lines(text: bytes) -> list[str]:
    """The lines of a text section (Tile IR), a trailing NUL byte dropped."""
    return (
        text.rstrip(b"\0")
        .decode("utf-8", "surrogateescape")
        .encode("utf-8", "backslashreplace")
        .decode()
        .split("\n")
    )


def _json_list_of_chunks(items: Iterable[Iterator[str]]) -> Iterator[str]:
    """A JSON array of items each given as chunks."""
    yield "["
    for i, item in enumerate(items):
        if i:
            yield ", "
        yield from item
    yield "]"


def _line_program_json(info: DebugInfo, p: LineProgram, opcodes: LineOpcodes | None) -> Iterator[str]:
    head = {
        "section": p.section,
        "offset": p.offset,
        "version": p.version,
        "files": [
            {
                "name": f[0].decode("utf-8", "surrogateescape"),
                "dir": p.directory(i),
                "mtime": f[2],
                "length": f[3],
            }
            for i, f in enumerate(p.files, 1)
        ],
    }
    yield _dumps(head)[:-1] + ', "rows": ['
    if opcodes is None:
        yield from _rows_json(p.rows, info.string_at, _dumps, _JSON_ROWS)
    else:
        yield from _program_rows_json(opcodes, p, info.string_at, _dumps, _JSON_ROWS)
    yield "]}"


@twin("cubin", checkable=False)
def _program_rows_json(
    opcodes: LineOpcodes,
    p: LineProgram,
    string_at: Callable[[int | None], str | None],
    encode: Callable[[Any], str],
    chunk: int,
) -> Iterator[str]:
    """:func:`_rows_json` of the rows ``opcodes`` of program ``p`` make, read now (DwarfError
    where they cannot be)."""
    return _rows_json(opcodes.rows(p), string_at, encode, chunk)


def _rows_json(
    rows: list[LineRow],
    string_at: Callable[[int | None], str | None],
    encode: Callable[[Any], str],
    chunk: int,
) -> Iterator[str]:
    """The items of the JSON array of a program's ``rows`` (without its brackets), each written
    by ``encode`` (``json.dumps``), ``chunk`` rows at a time, each text after the first from
    its separator."""
    items = map(encode, _line_rows_json(string_at, rows))
    separator = ""
    while batch := list(itertools.islice(items, chunk)):
        yield separator + ", ".join(batch)
        separator = ", "


def _line_rows_json(
    string_at: Callable[[int | None], str | None], rows: Iterable[LineRow]
) -> Iterator[dict[str, Any]]:
    for row, at in with_call_sites(rows):
        item: dict[str, Any] = {
            "address": row.address,
            "file": row.file,
            "line": row.line,
            "column": row.column,
            "is_stmt": row.is_stmt,
            "prologue_end": row.prologue_end,
            "epilogue_begin": row.epilogue_begin,
            "end_sequence": row.end_sequence,
        }
        if row.symbol is not None:
            item["symbol"] = row.symbol
        if row.context:
            item["context"] = row.context
            if at is not None:
                item["inlined_at"] = at
            name = string_at(row.function_name)
            if name is not None:
                item["function"] = name
        yield item


def iter_json(info: DebugInfo, sections: Collection[str] | None = None) -> Iterator[str]:
    """The ``dump --json`` document of ``info`` as a stream of text chunks, written as they
    are made; ``sections`` (names of :data:`SECTIONS`) keeps only their members. Everything
    that can fail to decode is read before the first chunk."""
    dump = _Dump(info, sections)
    yield '{"format": %s, "source": %s' % (_dumps(DUMP_FORMAT), _dumps(info.source))
    if info.filename:
        yield ', "file": %s' % _dumps(info.filename)
    if dump.shows("debug-info"):
        yield ', "units": ['
        for i, unit in enumerate(info.units):
            if i:
                yield ", "
            yield from _unit_json_chunks(info, unit)
        yield "]"
    for key, chunks in _sets_json(info, dump):
        yield ", %s: " % _dumps(key)
        yield from chunks
    yield "}\n"


def dump_json(info: DebugInfo, sections: Collection[str] | None = None) -> str:
    """The ``dump --json`` document of ``info`` (``sections``: as :func:`iter_json`)."""
    return "".join(iter_json(info, sections))


def write_json(info: DebugInfo, stream: TextIO, sections: Collection[str] | None = None) -> None:
    """Write the ``dump --json`` document to ``stream`` as it is made (``sections``: as
    :func:`iter_json`)."""
    for chunk in iter_json(info, sections):
        stream.write(chunk)


# --- text -----------------------------------------------------------------


def _quote(s: str) -> str:
    return '"' + s.encode("unicode_escape", "backslashreplace").decode("ascii").replace('"', '\\"') + '"'


def _target_label(info: DebugInfo, unit: Unit, name: int, target: DIE, types: dict[int, str]) -> str:
    """What follows a reference: the type's spelling after DW_AT_type (as llvm-dwarfdump
    shows it; ``types`` keeps those of the unit's DIEs by id), else the DIE's name."""
    if name in (AT.type, AT.containing_type):
        spelled = types.get(id(target))
        if spelled is None:
            spelled = types[id(target)] = f" {_quote(type_name(info, target, unit.die))}"
        return spelled
    return f" {_quote(target.name)}" if target.name else ""


#: The attributes whose integer values the text dump shows by name (``DW_ATE_signed``).
_NAMED_VALUES = frozenset({AT.address_class, AT.encoding, AT.language, *ENUMERATED_ATTRIBUTES})


def _value_text(info: DebugInfo, unit: Unit, attr: Attribute, types: dict[int, str]) -> str:  # noqa: C901 - run per attribute of the text dump: one function, no call per case
    value = attr.value
    name = attr.name
    if isinstance(value, Attribute):
        return f"{form_name(value.form or 0)} {_value_text(info, unit, value, types)}"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, DIE):
        return f"0x{value.offset:08x}{_target_label(info, unit, name, value, types)}"
    if attr.is_reference and isinstance(attr.target, int):
        target = info.die_at(attr.target)
        label = _target_label(info, unit, name, target, types) if target is not None else " <no DIE there>"
        return f"0x{attr.target:08x}{label}"
    if isinstance(value, Block):
        if attr.is_expression:
            ops, error = _expression_text(value, unit.address_size)
            if error is None:
                return ops or "<empty>"
            return f"<bad expression: {error}> " + " ".join(f"{b:02x}" for b in value)
        return "<" + " ".join(f"0x{b:02x}" for b in value) + ">"
    if value is True and attr.form == FORM.flag_present:
        return "true"
    sym = attr.symbol
    if isinstance(value, int):
        if name in _NAMED_VALUES:
            if name == AT.address_class:
                return f"0x{value:02x} {address_class_name(value)}"
            if name == AT.encoding:
                return ate_name(value)
            if name == AT.language:
                return lang_name(value)
            named = enumerated_value_name(name, value)
            if named is not None:
                return named
        text = f"0x{value:x}" if attr.form != FORM.sdata else str(value)
        if sym is not None:
            text += f" <{sym}>"
        if name in (AT.location, AT.frame_base) and attr.form in (FORM.data4, FORM.sec_offset):
            loc = info.location_list_at(value)
            if loc is not None:
                text += ": " + _loclist_text(loc, unit.address_size)
        return text
    return repr(value)


def _expression_text(expr: bytes, address_size: int) -> tuple[str, str | None]:
    """The operations of an expression as the text dump shows them, or why it cannot be read
    (text "", the reason)."""
    if getattr(expr, "relocs", None):
        return _decoded_text(expr, address_size)
    return _plain_expression_text(bytes(expr), address_size)


@functools.lru_cache(maxsize=1 << 12)
def _plain_expression_text(expr: bytes, address_size: int) -> tuple[str, str | None]:
    """:func:`_expression_text` of an expression without relocations (they repeat: a
    register, a frame offset)."""
    return _decoded_text(expr, address_size)


@twin("dumptext")
def _decoded_text(expr: bytes, address_size: int) -> tuple[str, str | None]:
    """The operations of ``expr`` joined for the dump, or why they cannot be read."""
    try:
        return ", ".join(str(op) for op in decode_expression(expr, address_size)), None
    except ExpressionError as exc:
        return "", str(exc)


def _loclist_text(loc: LocationList, address_size: int) -> str:
    parts = []
    for begin, end, expr in loc.entries:
        if expr is None:
            parts.append(f"[base address {_addr_text(end)}]")
            continue
        ops, error = _expression_text(expr, address_size)
        if error is not None:
            ops = f"<bad expression: {error}>"
        parts.append(f"[{_addr_text(begin)}, {_addr_text(end)}): {ops}")
    return " ".join(parts) if parts else "<empty list>"


def _addr_text(value: int | Symbol) -> str:
    if isinstance(value, Symbol):
        return str(value) if value.value is None else f"0x{value.value:x} <{value}>"
    return f"0x{value:x}"


def iter_text(info: DebugInfo, sections: Collection[str] | None = None) -> Iterator[str]:
    """Lines of a readable dump of ``info``, made as they are written; ``sections`` (names
    of :data:`SECTIONS`) keeps only their blocks, each as the full dump shows it, or one line
    saying the input has none. Everything that can fail to decode is read before the first
    line."""
    return _flat(_text_pieces(info, sections))


class _Block:
    """Lines of a dump, each ended by a newline, as the printers make them a chunk at a time
    (written as they are: a chunk of the DIEs is megabytes of text)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


#: A piece of a text dump: a line, a list of lines or a block of them.
_Piece = str | list[str] | _Block


def _flat(pieces: Iterable[_Piece]) -> Iterator[str]:
    """The lines of ``pieces``."""
    for piece in pieces:
        if isinstance(piece, str):
            yield piece
        elif isinstance(piece, _Block):
            yield from piece.text.split("\n")[:-1]
        else:
            yield from piece


def iter_text_chunks(info: DebugInfo, sections: Collection[str] | None = None) -> Iterator[str]:
    """The lines of :func:`iter_text`, each ended by a newline, a line or a block of them at a
    time (what ``dump`` writes)."""
    for piece in _text_pieces(info, sections):
        if isinstance(piece, str):
            yield piece + "\n"
        elif isinstance(piece, _Block):
            yield piece.text
        else:
            yield "\n".join(piece) + "\n"


def _text_pieces(info: DebugInfo, sections: Collection[str] | None) -> Iterator[_Piece]:
    """The lines of :func:`iter_text`, each a line, a list of them (a chunk of a line table's
    rows, a function's register map) or a :class:`_Block` of them (the DIEs of a part of a unit,
    location lists, the rows of a cubin's line table)."""
    dump = _Dump(info, sections)
    empty = sections is None and not info.units and not info.section_names()
    yield f"{info.filename or '<input>'}: debug info from {info.source}"
    if empty:
        yield "(no debug sections)"
        return
    if sections is not None:
        yield from _selected_text(info, dump)
        return
    yield from _info_text(info)
    yield from _other_text(info)
    yield from _line_text(dump.lines or [], info.string_at)
    yield from _tileir_text(info)
    for name, size in _other_sections(info):
        if name == ".debug_line" and dump.lines is not None:
            continue
        yield ""
        yield f"{name}: {size} bytes (not decoded)"
    yield from _register_map_text(dump)


def _tileir_text(info: DebugInfo) -> Iterator[_Piece]:
    """Each Tile IR text of a cubin, its lines numbered as ``.nv.tileir.debug_line``'s rows
    name them."""
    for name, text in tileir_texts(info).items():
        yield ""
        yield f"{name} contents:"
        yield [f"{i:6} {line}".rstrip() for i, line in enumerate(_text_lines(text), 1)]


def _selected_text(info: DebugInfo, dump: _Dump) -> Iterator[_Piece]:
    if dump.shows("debug-info"):
        yield from _info_text(info) if info.units else iter(["(no .debug_info)"])
    if dump.shows("debug-loc"):
        yield from _loc_text(info) if info.locations else iter(["(no .debug_loc)"])
    if dump.shows_lines():
        if dump.lines is None:
            yield "(no line tables: ptxas writes the line table of a cubin; ptxdwarf reads no PTX .debug_line)"
        else:
            missing = ".debug_line" if dump.shows("debug-line") else _SASS_LINES
            yield from _line_text(dump.lines, info.string_at) if dump.lines else iter([f"(no {missing})"])
            if dump.shows("debug-line"):
                yield from _tileir_text(info)
    if dump.shows("register-map"):
        yield from _register_map_text(dump) if dump.functions is not None else iter(["(no register map)"])


def _info_text(info: DebugInfo) -> Iterator[_Piece]:
    """The ``.debug_info contents:`` block: every unit's DIEs, unit by unit."""
    if not info.units:
        return
    yield ""
    yield ".debug_info contents:"
    for unit in info.units:
        yield from _unit_text(info, unit)


def _unit_text(info: DebugInfo, unit: Unit) -> Iterator[_Piece]:
    """A unit's lines, about :data:`_CHUNK_LINES` at a time."""
    abbrev = _num(info, unit.abbrev_offset)
    yield [
        f"0x{unit.offset:08x}: Compile Unit: length = 0x{unit.length:08x}, version = 0x{unit.version:04x}, "
        f"abbr_offset = 0x{abbrev:04x}, addr_size = 0x{unit.address_size:02x} (next unit at 0x{unit.end:08x})",
        "",
    ]
    if unit.die is None:
        return
    printer = _UnitPrinter(info, unit)
    stack: list[tuple[DIE | None, int]] = [(unit.die, 0)]
    while stack:
        yield _Block(_die_lines(printer, stack, _CHUNK_LINES)[1])


class _LocationPrinter:
    """What the text dump of location lists keeps from one to the next: the address size and
    the memo of the native :func:`_loc_lines` and :func:`_die_lines` (an expression's text by
    its Block's id, beside the Block)."""

    __slots__ = ("address_size", "expressions")

    def __init__(self, address_size: int) -> None:
        self.address_size = address_size
        self.expressions: dict[int, tuple[Block, tuple[str, str | None]]] = {}

    def expression_text(self, expr: bytes) -> tuple[str, str | None]:
        """:func:`_expression_text` in the address size."""
        return _expression_text(expr, self.address_size)


class _UnitPrinter(_LocationPrinter):
    """What the text dump of one unit's DIEs keeps from one DIE to the next: the spellings of
    the types met (by the DIE's id), the names of codes, and the memos of the native
    :func:`_die_lines` (the reference makes each value's text anew)."""

    __slots__ = ("ats", "forms", "info", "references", "tags", "types", "unit", "values")

    def __init__(self, info: DebugInfo, unit: Unit) -> None:
        super().__init__(unit.address_size)
        self.info = info
        self.unit = unit
        self.types: dict[int, str] = {}
        self.tags: dict[int, str] = {}
        self.ats: dict[int, str] = {}
        self.forms: dict[int, str] = {}
        #: The text of a reference's value by whether it names a type and the target's offset
        #: (the kernel's own keys: ``offset << 1 | typed``, or the pair).
        self.references: dict[int | tuple[bool, int], str] = {}
        #: The text of a named value (an attribute without relocations) by (name, form, value).
        self.values: dict[tuple[int, int | None, int], str] = {}

    def value_text(self, attr: Attribute) -> str:
        """What the dump shows between the parentheses after an attribute's form."""
        return _value_text(self.info, self.unit, attr, self.types)

    def tag_text(self, code: int) -> str:
        """``DW_TAG_subprogram``."""
        return _named(self.tags, tag_name, code)

    def at_text(self, code: int) -> str:
        """``DW_AT_name``."""
        return _named(self.ats, at_name, code)

    def form_text(self, code: int) -> str:
        """``DW_FORM_data4``."""
        return _named(self.forms, form_name, code)


def _named(cache: dict[int, str], name_of: Callable[[int], str], code: int) -> str:
    """``name_of(code)``, kept in ``cache``."""
    text = cache.get(code)
    if text is None:
        text = cache[code] = name_of(code)
    return text


@twin("dumptext", checkable=False)
def _die_lines(printer: _UnitPrinter, stack: list[tuple[DIE | None, int]], limit: int) -> tuple[int, str]:
    """How many lines of the DIEs taken from the end of ``stack`` (each with its depth; None:
    the null entry that closes a list of children) were made, until ``limit`` or more, and
    those lines, each ended by a newline; each DIE's children are pushed in its place."""
    out: list[str] = []
    append = out.append
    while stack and len(out) < limit:
        item, depth = stack.pop()
        indent = " " * (2 * min(depth, _MAX_INDENT))
        deep = f"[depth {depth}] " if depth > _MAX_INDENT else ""
        if item is None:
            append(f"{' ' * 12}{indent}{deep}NULL")
            append("")
            continue
        die = item
        append(f"0x{die.offset:08x}: {indent}{deep}{printer.tag_text(die.tag)}")
        for attr in die.attributes:
            form = printer.form_text(attr.form) if attr.form is not None else "?"
            append(
                f"              {indent}{printer.at_text(attr.name)} [{form}]\t({printer.value_text(attr)})"
            )
        append("")
        if die.children:
            stack.append((None, depth + 1))
            stack.extend(zip(reversed(die.children), itertools.repeat(depth + 1)))
        elif die.has_children:
            stack.append((None, depth + 1))
    return len(out), "".join(line + "\n" for line in out)


def _other_text(info: DebugInfo) -> Iterator[_Piece]:
    """The blocks between ``.debug_info`` and the line tables: name sets, address ranges,
    location lists, range lists, strings."""
    for key, sets in (("pubnames", info.pubnames), ("pubtypes", info.pubtypes)):
        if not sets:
            continue
        yield ""
        yield f".debug_{key} contents:"
        for ns in sets:
            yield (
                f"length = 0x{_set_length(ns):08x}, version = 0x{ns.version:04x}, "
                f"unit_offset = 0x{_num(info, ns.unit_offset):08x}, unit_size = 0x{ns.unit_length or 0:08x}"
            )
            yield "Offset     Name"
            for off, name in ns.entries:
                yield f"0x{off:08x} {_quote(name)}"
    if info.aranges:
        yield ""
        yield ".debug_aranges contents:"
        for a in info.aranges:
            yield f"Address Range Header: version = 0x{a.version:04x}, cu_offset = 0x{_num(info, a.unit_offset):08x}, addr_size = 0x{a.address_size:02x}"
            for b, e in a.tuples:
                yield f"[{_addr_text(b)}, +{_addr_text(e)})"
    yield from _loc_text(info)
    if info.ranges:
        yield ""
        yield ".debug_ranges contents:"
        for r in info.ranges:
            yield f"0x{r.offset:08x}: " + " ".join(
                f"[{_addr_text(b)}, {_addr_text(e)})" for b, e in r.entries
            )
    if info.strings is not None and info.strings.strings:
        yield ""
        yield ".debug_str contents:"
        for off, raw in zip(info.strings.offsets, info.strings.strings, strict=False):
            yield f"0x{off:08x}: {_quote(raw.decode('utf-8', 'surrogateescape'))}"


def _loc_text(info: DebugInfo) -> Iterator[_Piece]:
    """The ``.debug_loc contents:`` block, :data:`_LOC_LISTS` lists at a time."""
    locations = info.locations
    if not locations:
        return
    yield ""
    yield ".debug_loc contents:"
    printer = _LocationPrinter(_list_address_size(info))
    start = 0
    while start < len(locations):
        count, text = _loc_lines(printer, locations, start, _LOC_LISTS)
        yield _Block(text)
        start += count


@twin("dumptext", checkable=False)
def _loc_lines(
    printer: _LocationPrinter, locations: list[LocationList], start: int, limit: int
) -> tuple[int, str]:
    """How many of ``locations[start : start + limit]`` have their line of the ``.debug_loc``
    block made (the kernel may make fewer, not none), and those lines, each ended by a newline."""
    asize = printer.address_size
    lines = [f"0x{loc.offset:08x}: {_loclist_text(loc, asize)}\n" for loc in locations[start : start + limit]]
    return len(lines), "".join(lines)


def _list_address_size(info: DebugInfo) -> int:
    """The address size of the location lists (the first unit's)."""
    return info.units[0].address_size if info.units else 8


def iter_register_map_text(info: DebugInfo) -> Iterator[str]:
    """ptxas's register map of a cubin, function by function: each PTX register, the SASS
    register holding it and the code range (offsets in the function) where it does."""
    return _flat(_register_map_text(_Dump(info, ("register-map",))))


def _register_map_text(dump: _Dump) -> Iterator[_Piece]:
    """The register map's lines, a function's at a time."""
    if dump.functions is None:
        return
    yield ""
    yield f"{SASS_SECTION} contents:"
    for f in dump.release_functions():
        yield [
            f"function {f.function}: {len(f.entries)} entries",
            "  PTX        SASS       low_pc     high_pc    piece  type",
            *(
                f"  {e.ptx:10} {e.sass:10} 0x{e.low_pc:08x} 0x{e.high_pc:08x} {e.piece:5}  {e.ptx_type or '-'}".rstrip()
                for e in f.entries
            ),
        ]


def iter_line_text(info: DebugInfo) -> Iterator[str]:
    """The line tables of ``info`` (a cubin's ``.debug_line``) in the manner of
    ``llvm-dwarfdump --debug-line``; each row of inlined code names the function and the row
    it was inlined at."""
    yield from _flat(_line_text(_line_tables(info) or [], info.string_at))


def _line_tables(info: DebugInfo, source: bool = True, sass: bool = True) -> list[_LineTable] | None:
    """The line-number programs of ``info`` (None: it has no line tables), those of the source
    line tables if ``source`` and of ptxas's SASS line table if ``sass``, their rows read now
    to meet their errors; the rows of a cubin's programs are not kept, but read again for
    each showing (a large module has hundreds of thousands)."""

    def chosen(section: str) -> bool:
        return sass if section == _SASS_LINES else source

    images = unread_line_images(info)
    if images is None:
        return None if info.lines is None else [(p, None) for p in info.lines if chosen(p.section)]
    tables: list[_LineTable] = []
    for image in (image for image in images if chosen(image.name)):
        for program, opcodes in iter_line_programs(image):
            _table_lines(program, opcodes, info.string_at)  # read again when shown
            tables.append((program, opcodes))
    return tables


def _line_text(tables: list[_LineTable], string_at: Callable[[int | None], str | None]) -> Iterator[_Piece]:
    """The lines of :func:`iter_line_text` of ``tables``, the rows of each program as one list."""
    section = None
    for p, opcodes in tables:
        if p.section != section:
            section = p.section
            yield ""
            yield f"{section} contents:"
        yield f"debug_line[0x{p.offset:08x}]"
        yield f"Line table prologue: version: {p.version}, files: {len(p.files)}"
        for i, raw_dir in enumerate(p.directories, 1):
            yield f"include_directories[{i:3}] = {_quote(raw_dir.decode('utf-8', 'surrogateescape'))}"
        for i, (raw_name, index, mtime, length) in enumerate(p.files, 1):
            yield (
                f"file_names[{i:3}]: {_quote(raw_name.decode('utf-8', 'surrogateescape'))} dir_index: {index} "
                f"mod_time: 0x{mtime:08x} length: 0x{length:08x}"
            )
        yield ""
        yield from _table_lines(p, opcodes, string_at)


def _table_lines(
    p: LineProgram, opcodes: LineOpcodes | None, string_at: Callable[[int | None], str | None]
) -> Iterator[list[str] | _Block]:
    """The rows of program ``p`` (read now from ``opcodes`` when given: DwarfError where they
    cannot be) as the text dump shows them, under their heading, with the empty line after
    them, :data:`_CHUNK_LINES` lines at a time."""
    if opcodes is None:
        return _rows_lines(p.rows, string_at, _CHUNK_LINES)
    return map(_Block, _program_lines(opcodes, p, string_at, _CHUNK_LINES))


@twin("cubin", checkable=False)
def _program_lines(
    opcodes: LineOpcodes, p: LineProgram, string_at: Callable[[int | None], str | None], chunk: int
) -> Iterator[str]:
    """:func:`_rows_lines` of the rows ``opcodes`` of program ``p`` make, read now (DwarfError
    where they cannot be), each chunk as one text of lines ended by newlines."""
    return (
        "".join(line + "\n" for line in batch) for batch in _rows_lines(opcodes.rows(p), string_at, chunk)
    )


def _rows_lines(
    rows: list[LineRow], string_at: Callable[[int | None], str | None], chunk: int
) -> Iterator[list[str]]:
    """The lines of :func:`_row_lines` in lists of ``chunk`` (the last: what is left), made as
    they are asked for."""
    lines = _row_lines(rows, string_at)
    while batch := list(itertools.islice(lines, chunk)):
        yield batch


def _row_lines(rows: list[LineRow], string_at: Callable[[int | None], str | None]) -> Iterator[str]:
    """The lines of a line-number program's ``rows`` under their heading, the empty line after
    them; the function of inlined code is named by its ``.debug_str`` offset (``string_at``)."""
    flags_of = [_flags_text(r.is_stmt, r.prologue_end, r.epilogue_begin, r.end_sequence) for r in rows]
    width = max([19, *map(len, flags_of)])
    yield f"Address            Line   Column File   {'Flags':{width}} Function"
    yield f"------------------ ------ ------ ------ {'-' * width} --------"
    sites = call_sites(rows)
    for i, row in enumerate(rows):
        flags = flags_of[i]
        where = row.symbol or ""
        if row.context:
            function = string_at(row.function_name) or "?"
            at = sites[i]
            call = rows[at] if at is not None else None
            where = (
                f"{function} inlined at file {call.file} line {call.line}"
                if call is not None
                else f"{function} (context {row.context})"
            )
        yield f"0x{row.address:016x} {row.line:6} {row.column:6} {row.file:6} {flags:{width}} {where}".rstrip()
    yield ""


@functools.cache  # 16 combinations
def _flags_text(is_stmt: bool, prologue_end: bool, epilogue_begin: bool, end_sequence: bool) -> str:
    """A row's flags as llvm-dwarfdump names them."""
    return " ".join(
        name
        for name, on in (
            ("is_stmt", is_stmt),
            ("prologue_end", prologue_end),
            ("epilogue_begin", epilogue_begin),
            ("end_sequence", end_sequence),
        )
        if on
    )


def _set_length(ns: Any) -> int:
    return (
        2
        + 4
        + 4
        + sum(4 + len(n.encode("utf-8", "surrogateescape")) + 1 for _, n in ns.entries)
        + 4
        + len(ns.rest)
    )


def dump_text(info: DebugInfo, sections: Collection[str] | None = None) -> str:
    """A readable dump of ``info`` (``sections``: as :func:`iter_text`)."""
    return "".join(line + "\n" for line in iter_text(info, sections))
