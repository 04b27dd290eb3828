"""Reading a ``.section`` body: its ``.b8``/``.b16``/``.b32``/``.b64`` directives (lists of
numbers, labels, ``label+N``, ``label1-label2``) as a section image and what its text says
beyond the bytes.

:class:`SectionParser` is the reference reader, line by line (it names the line of any
error); :func:`bulk_pieces` reads the bodies producers write in bulk and leaves every
other body to it.
"""

from __future__ import annotations

import json
import re
import struct
from array import array
from itertools import accumulate, compress, repeat
from operator import add, mul
from typing import Any, TypeAlias

from .._native import twin
from ..dwarf.image import Reloc, SectionImage, Symbol
from ..errors import PtxSyntaxError
from .lexer import DOTTED, SYMBOL
from .module import SectionText

__all__ = ["ALIASES", "WIDTHS", "SectionParser", "bulk_pieces", "bulk_section"]

#: Each data directive's width in bytes: the one width table of the section readers.
WIDTHS = {".b8": 1, ".b16": 2, ".b32": 4, ".b64": 8}
#: ptxas's aliases of ``.b8``, ``.b32`` and ``.b64``.
ALIASES = {".byte": ".b8", ".4byte": ".b32", ".quad": ".b64"}
#: The :mod:`struct` format character of each width.
_FORMAT = {1: "B", 2: "H", 4: "I", 8: "Q"}
#: Each directive's format character.
_DIRECTIVE_CHAR = {d: _FORMAT[w] for d, w in WIDTHS.items()}
#: The values a width holds: signed or unsigned.
_RANGES = {w: (-(1 << (8 * w - 1)), (1 << (8 * w)) - 1) for w in WIDTHS.values()}

_SYM = SYMBOL
_INT = r"(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uU]?"
_ITEM = re.compile(
    rf"(?P<neg>-?)\s*(?P<num>{_INT})"
    rf"|(?P<sym>{_SYM})(?:\s*-\s*(?P<sym2>{_SYM}))?(?:\s*(?P<op>[-+])\s*(?P<add>{_INT}))?"
)
_LABEL = re.compile(rf"\s*({_SYM})\s*:")
# .byte, .4byte and .quad are ptxas's aliases of .b8, .b32 and .b64.
_DIRECTIVE = re.compile(r"\.(?:b(8|16|32|64)|(byte|4byte|quad))(?![\w$.])")


def _directive_width(m: re.Match[str]) -> int:
    return WIDTHS[".b" + m.group(1) if m.group(1) else ALIASES["." + m.group(2)]]


_SIMPLE = re.compile(r"\.b(8|16|32|64)[ \t]+((?:0|[1-9][0-9]*)(?:[ \t]*,[ \t]*(?:0|[1-9][0-9]*))*)[ \t]*")

_NUMLIST = r"(?:0|[1-9][0-9]*)(?:[ \t]*,[ \t]*(?:0|[1-9][0-9]*))*"
_RUN_LINE_TAIL = r"[ \t]+" + _NUMLIST + r"[ \t\r]*(?:\n|\Z)"
#: Whole lines (1 to 1024: bounded memory) that are each one directive of decimal
#: numbers, all of the same width (group 1).
_RUN = re.compile(
    r"[ \t]*\.b(8|16|32|64)" + _RUN_LINE_TAIL + r"(?:[ \t]*\.b\1" + _RUN_LINE_TAIL + r"){0,1023}"
)
#: 1 to 4096 whole lines that are each a directive and its items: decimal numbers
#: (any width), or one symbol (``.b32``/``.b64``); read with a few ``split`` and one
#: ``struct.pack``.
_RUN1 = re.compile(
    r"(?:[ \t]*\.b(?:(?:8|16|32|64)[ \t]+"
    + _NUMLIST
    + r"|(?:32|64)[ \t]+(?!\.b(?:8|16|32|64)(?![\w$.]))"
    + _SYM
    + r")[ \t\r]*(?:\n|\Z)){1,4096}"
)

_WIDE = 1 << 32


def _as_ptxas_keeps(name: str, data: bytes, wide: list[int], **rest: Any) -> SectionImage:
    """The image of ``data`` as ptxas compiles it: each ``.b64`` number at an offset in ``wide``
    (2**32 or more) keeps only its low 32 bits (quirk wide-literal-truncated); the numbers as
    written go to :attr:`SectionImage.wide_values` (lint rule wide-value, check)."""
    written: dict[int, int] = {}
    if wide:
        out = bytearray(data)
        for offset in wide:
            written[offset] = int.from_bytes(out[offset : offset + 8], "little")
            out[offset + 4 : offset + 8] = bytes(4)
        data = bytes(out)
    return SectionImage(name, data, wide_values=written, **rest)


def _int_literal(text: str) -> int:
    t = text.rstrip("uU")
    if len(t) > 70:  # longer than any 64-bit literal; also keeps int() from refusing huge strings
        raise ValueError(text)
    if t[:2] in ("0x", "0X"):
        return int(t[2:], 16)
    if t[:2] in ("0b", "0B"):
        return int(t[2:], 2)
    if len(t) > 1 and t[0] == "0":
        return int(t[1:], 8)
    return int(t)


class SectionParser:
    """Turns one section body into a :class:`SectionImage`."""

    def __init__(self, name: str, filename: str) -> None:
        self.name = name
        self.filename = filename
        self.data = bytearray()
        self.relocs: list[Reloc] = []
        self.symbols: dict[str, Symbol] = {}
        self.labels: dict[str, int] = {}
        self.label_lines: dict[str, int] = {}
        self.differences: list[tuple[int, int, str, str, int, int]] = []
        self.wide_values: list[int] = []
        self.line_offsets = array("q")
        self.line_numbers = array("q")
        self.width = 0  # width of the directive whose list continues on the next line
        self.last_width = 0  # width of the last directive, for a list continued with a leading comma
        self.lineno = 0
        self.text = SectionText()
        # The directive being read: its number of values, its first symbolic value
        # (text, line) and the syntax problems of its values.
        self.items = 0
        self.first_symbol: tuple[str, int] | None = None
        self.pending: list[tuple[str, int]] = []

    def error(self, message: str) -> PtxSyntaxError:
        return PtxSyntaxError(f"{message} in {self.name}", filename=self.filename, line=self.lineno)

    def parse(self, body: str, first_line: int) -> SectionImage:
        """The image of a section body whose first line is ``first_line``."""
        addends: list[tuple[str, int]] = []
        bulk = bulk_section(self.name, body, self.filename, addends)
        if bulk is not None:
            self.text.addends = addends
            name, filename = self.name, self.filename

            def lines() -> tuple[array[int], array[int]]:
                found = _one_directive_a_line(body, first_line, bulk.data)
                if found is not None:
                    return found
                image = SectionParser(name, filename).parse_lines(body, first_line)
                return image.line_offsets, image.line_numbers

            bulk.line_loader = lines
            return bulk
        return self.parse_lines(body, first_line)

    def parse_lines(self, body: str, first_line: int) -> SectionImage:
        """:meth:`parse` keeping the line of every directive; names the line of any error."""
        # Runs of whole lines that are plain directives (all of nvcc's output but
        # `label+N` lines) are read a run at a time with split/struct.pack; any
        # other line, and any run with a value out of range, goes line by line.
        run_match = _RUN.match
        run1_match = _RUN1.match
        lineno = first_line  # line of the text at pos
        pos = 0
        n = len(body)
        while pos < n:
            if not self.width:
                m = run1_match(body, pos)
                if m is not None:
                    self.end_directive(1)
                    end = m.end()
                    run = body[pos:end]
                    count = self.add_run1(run, lineno)
                    if count < 0:
                        count = self.slow_lines(run, lineno)
                    pos = end
                    lineno += count
                    continue
                m = run_match(body, pos)
                if m is not None:
                    self.end_directive(1)
                    end = m.end()
                    run = body[pos:end]
                    count = self.add_run(run, m.group(1), lineno)
                    if count < 0:
                        count = self.slow_lines(run, lineno)
                    pos = end
                    lineno += count
                    continue
            nl = body.find("\n", pos)
            if nl < 0:
                nl = n
            self.slow_line(body[pos:nl], lineno)
            pos = nl + 1
            lineno += 1
        self.lineno = first_line + body.count("\n")
        if self.width:
            raise self.error("list ends with a comma")
        self.end_directive(0)
        self.resolve_differences()
        return _as_ptxas_keeps(
            self.name,
            bytes(self.data),
            self.wide_values,
            relocs=self.relocs,
            labels=self.labels,
            line_offsets=self.line_offsets,
            line_numbers=self.line_numbers,
            filename=self.filename,
        )

    def add_run1(self, run: str, lineno: int) -> int:
        """Append a run of whole lines (see ``_RUN1``); the number of lines, or -1 if a
        value is out of range (nothing appended)."""
        counts = None
        if "," not in run:  # one item a line, as nvcc writes
            toks = run.split()  # directive, item, directive, item, ...
            dirs = toks[0::2]
            rests = items = toks[1::2]
            fmt = "".join(map(_DIRECTIVE_CHAR.__getitem__, dirs))
            sizes = map(WIDTHS.__getitem__, dirs)
        else:
            lines = run.split("\n")
            if run.endswith("\n"):
                lines.pop()
            parts = [line.split(None, 1) for line in lines]
            dirs = [p[0] for p in parts]
            rests = [p[1] for p in parts]
            counts = [r.count(",") + 1 for r in rests]
            fmt = "".join(map(mul, map(_DIRECTIVE_CHAR.__getitem__, dirs), counts))
            sizes = map(mul, map(WIDTHS.__getitem__, dirs), counts)
            items = ",".join(rests).split(",")
        syms = [i for i, r in enumerate(rests) if not r[0].isdigit()]
        names = [rests[i].rstrip() for i in syms]
        first = list(accumulate(counts, initial=0)) if counts is not None else range(len(items))
        if syms:
            items = list(items)
            for i in syms:
                items[first[i]] = "0"  # a symbol: zeros and a relocation
        try:
            packed = struct.pack("<" + fmt, *map(int, items))
        except (ValueError, struct.error):  # ValueError: int() refuses over 4300 digits
            return -1
        data = self.data
        offsets = list(accumulate(sizes, initial=len(data)))
        offsets.pop()
        data += packed
        if syms:
            symbols = self.symbols
            relocs = self.relocs
            for i, name in zip(syms, names, strict=False):
                sym = symbols.get(name)
                if sym is None:
                    sym = symbols[name] = Symbol(name, 0)
                relocs.append(Reloc(offsets[i], WIDTHS[dirs[i]], sym))
        if ".b64" in run:
            # .b64 numbers of 2**32 or more: ptxas keeps their low 32 bits.
            wide = self.wide_values
            symset = set(syms)
            for i, d in enumerate(dirs):
                if d == ".b64" and i not in symset:
                    k = 1 if counts is None else counts[i]
                    wide.extend(offsets[i] + 8 * j for j in range(k) if int(items[first[i] + j]) >= _WIDE)
        self.last_width = WIDTHS[dirs[-1]]
        self.line_offsets.extend(offsets)
        self.line_numbers.extend(range(lineno, lineno + len(dirs)))
        return len(dirs)

    def add_run(self, run: str, bits: str, lineno: int) -> int:
        """Append a run of whole lines of ``.b<bits>`` numbers; the number of lines, or
        -1 if a value is out of range (nothing appended)."""
        data = self.data
        start = len(data)
        items = run.replace(".b" + bits, "").replace("\n", ",").split(",")
        if run.endswith("\n"):
            items.pop()
        try:
            if bits == "8":
                data += bytes(map(int, items))  # int() ignores the spaces around
            else:
                data += struct.pack("<%d%s" % (len(items), _DIRECTIVE_CHAR[".b" + bits]), *map(int, items))
        except (ValueError, struct.error):
            del data[start:]
            return -1
        width = WIDTHS[".b" + bits]
        if bits == "64":
            self.wide_values.extend(start + 8 * i for i, v in enumerate(items) if int(v) >= _WIDE)
        self.last_width = width
        if "," not in run:
            self.line_offsets.extend(range(start, len(data), width))
            self.line_numbers.extend(range(lineno, lineno + len(items)))
            return len(items)
        lines = run.split("\n")
        if run.endswith("\n"):
            lines.pop()
        offsets = list(accumulate([(line.count(",") + 1) * width for line in lines], initial=start))
        offsets.pop()
        self.line_offsets.extend(offsets)
        self.line_numbers.extend(range(lineno, lineno + len(lines)))
        return len(lines)

    def slow_lines(self, run: str, lineno: int) -> int:
        """Read a run line by line (so that the error names the line); the number of lines."""
        lines = run.split("\n")
        if run.endswith("\n"):
            lines.pop()
        for line in lines:
            self.slow_line(line, lineno)
            lineno += 1
        return len(lines)

    def slow_line(self, line: str, lineno: int) -> None:
        """One line, as the reader read every line before runs."""
        s = line.strip()
        if not s:
            return
        self.lineno = lineno
        data = self.data
        self.line_offsets.append(len(data))
        self.line_numbers.append(lineno)
        if not self.width:
            m = _SIMPLE.fullmatch(s)
            if m is not None:
                self.end_directive(m.group(2).count(",") + 1)
                bits = m.group(1)
                try:
                    if bits == "8":
                        data += bytes(map(int, m.group(2).split(",")))
                        self.last_width = 1
                        return
                    else:
                        values = [int(v) for v in m.group(2).split(",")]
                        if bits == "64":
                            start = len(data)
                            self.wide_values.extend(start + 8 * i for i, v in enumerate(values) if v >= _WIDE)
                        data += struct.pack("<%d%s" % (len(values), _FORMAT[int(bits) // 8]), *values)
                    self.last_width = int(bits) // 8
                    return
                except (ValueError, struct.error):
                    pass  # out of range: the general path names the value
        self.parse_line(s)

    def parse_line(self, s: str) -> None:
        if ";" in s:
            raise self.error("';' is not allowed in a debug section (ptxas rejects it)")
        statement = s.strip()
        if statement.startswith(",") and not self.width and self.last_width:
            # A list continued on the next line with a leading comma.
            self.width = self.last_width
            statement = statement[1:].strip()
            if not statement:
                raise self.error("empty value in a list")
        while statement:
            m = _LABEL.match(statement)
            if m is not None and not _DIRECTIVE.match(statement):
                self.define_label(m.group(1))
                statement = statement[m.end() :].strip()
                continue
            m = _DIRECTIVE.match(statement)
            if m is not None:
                if self.width:
                    raise self.error("list ends with a comma before a new directive")
                self.end_directive(0)
                self.width = self.last_width = _directive_width(m)
                rest = statement[m.end() :]
                if not rest.strip():
                    raise self.error(f"{m.group(0)} without values")
            elif self.width:
                rest = statement
            else:
                raise self.error(f"unexpected {_shorten(statement)!r}")
            nxt = _DIRECTIVE.search(rest)
            if nxt is not None:
                values, statement = rest[: nxt.start()], rest[nxt.start() :].strip()
            else:
                values, statement = rest, ""
            self.parse_values(values)

    def parse_values(self, text: str) -> None:
        width = self.width
        items = text.split(",")
        trailing = items[-1].strip() == ""
        if trailing:
            items.pop()
        for item in items:
            item = item.strip()
            if not item:
                raise self.error("empty value in a list")
            self.items += 1
            self.add_value(item, width)
        # A list that ends with a comma continues on the next line.
        self.width = width if trailing else 0

    def add_value(self, item: str, width: int) -> None:
        m = _ITEM.fullmatch(item)
        if m is None and width in (4, 8) and DOTTED.fullmatch(item):
            if self.first_symbol is None:
                self.first_symbol = (item, self.lineno)
            self.pending.append((f"{item!r} (a '.' inside a name: \"Parsing error near '.'\")", self.lineno))
            self.relocs.append(Reloc(len(self.data), width, Symbol(item)))
            self.data += bytes(width)
            return
        if m is None:
            raise self.error(f"bad value {_shorten(item)!r} for .b{width * 8}")
        data = self.data
        if m.group("num") is not None:
            try:
                value = _int_literal(m.group("num"))
            except ValueError:
                raise self.error(f"value {_shorten(item)} does not fit .b{width * 8}") from None
            if m.group("neg") == "-":
                value = -value
            lo, hi = _RANGES[width]
            if not lo <= value <= hi:
                raise self.error(f"value {item} does not fit .b{width * 8} ({lo}..{hi})")
            if width == 8 and value >= 1 << 32:
                self.wide_values.append(len(data))
            data += (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
            return
        if width not in (4, 8):
            raise self.error(f"a label needs .b32 or .b64, not .b{width * 8} ({item})")
        addend = 0
        if m.group("add") is not None:
            try:
                addend = _int_literal(m.group("add"))
            except ValueError:
                raise self.error(f"addend of {_shorten(item)} is too large") from None
            if m.group("op") == "-":
                addend = -addend
        name = m.group("sym")
        other = m.group("sym2")
        self.note_symbol(item, m, self.lineno, len(data))
        if other is not None:
            self.differences.append((len(data), width, name, other, addend, self.lineno))
        else:
            self.relocs.append(Reloc(len(data), width, Symbol(name, addend)))
        data += bytes(width)

    def define_label(self, name: str) -> None:
        if name in self.labels:
            raise self.error(f"label {name} defined twice (first at line {self.label_lines[name]})")
        self.labels[name] = len(self.data)
        self.label_lines[name] = self.lineno
        self.text.labels.append((name, self.lineno))

    def note_symbol(self, item: str, m: re.Match[str], line: int, offset: int) -> None:
        """Keep what the text of symbolic value ``item`` says (see :class:`SectionText`)."""
        if self.first_symbol is None:
            self.first_symbol = (item, line)
        if m.group("sym2") is not None:
            self.text.differences.append((m.group("sym"), m.group("sym2"), line))
            if m.group("add") is not None:
                self.pending.append((f"{item!r} (a label difference cannot take +N)", line))
        elif m.group("op") == "-":
            self.pending.append((f"{item!r} (label-N; write the value as a number)", line))
        elif "+" in item:
            self.text.addends.append((item, offset))

    def end_directive(self, items: int) -> None:
        """The directive read so far is complete; the next one starts with ``items`` values."""
        if self.first_symbol is not None:
            if self.items > 1:
                item, line = self.first_symbol
                self.text.syntax.append(
                    (f"{item!r} in a list of {self.items} values (one symbolic value per directive)", line)
                )
            self.first_symbol = None
        if self.pending:
            self.text.syntax.extend(self.pending)
            self.pending = []
        self.items = items

    def resolve_differences(self) -> None:
        for offset, width, a, b, addend, line in self.differences:
            for name in (a, b):
                if name not in self.labels:
                    self.lineno = line
                    raise self.error(f"label difference {a}-{b}: {name} is not a label of this section")
            value = self.labels[a] - self.labels[b] + addend
            self.data[offset : offset + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")


#: Symbols the bulk reader takes, each on a line: a symbol that is not a directive, and at
#: most a small ``+N``.
_BULK_SYMBOLS = re.compile(rf"(?:(?!\.b(?:8|16|32|64)(?![\w$.])){SYMBOL}(?:\+(?:[1-9][0-9]{{0,9}}|0))?\n)*")

_WIDE_B64 = re.compile(r"\.b64[ \t]+[0-9]{10}")


def _symbol_of(symbol: type[Symbol], text: str) -> Symbol:
    if "+" in text:
        name, _, addend = text.partition("+")
        return symbol(name, int(addend))
    return symbol(text)


# The bulk reader reads a body written one directive a line: each directive becomes the
# separator before its items (a .b8 list's own commas stay), a wide one marked as holding
# a symbol when its item does not start with a digit.
_LINE_SEPARATORS = (("\n.b8 ", "\x06"), ("\n.b16 ", "\x03"), ("\n.b32 ", "\x01"), ("\n.b64 ", "\x02"))
_SYMBOL_SEPARATORS = ((re.compile("\x01(?![0-9])"), "\x04"), (re.compile("\x02(?![0-9])"), "\x05"))
#: The characters the separators take.
_SEPARATORS = "\x01\x02\x03\x04\x05\x06"
#: Splits at each symbolic item: text before, its separator, the symbol.
_SYMBOL_ITEM = re.compile("([\x04\x05])([^,\x01-\x06]*)")
#: Separator -> kind of item: B, H, I, Q a number of that width, i, q a symbol.
_KIND_TABLE = bytes.maketrans(b",\x06\x03\x01\x02\x04\x05", b"BBHIQiq")
_NOT_SEPARATOR = bytes(c for c in range(256) if c not in b",\x01\x02\x03\x04\x05\x06")
_ONE_WIDE = bytes.maketrans(b"HIQiq", b"WWWWW")
#: Kind of a wide item -> its size.
_WIDE_SIZE = {**{ord(c): w for w, c in _FORMAT.items() if w > 1}, ord("i"): 4, ord("q"): 8}
#: Kind of a symbolic item -> its size.
_SYMBOL_SIZE = bytes.maketrans(b"iq", b"\x04\x08")
_SYMBOL_MASK = bytes.maketrans(b"HIQiq", b"\x00\x00\x00\x01\x01")
_TO_COMMA = str.maketrans("\x01\x02\x03\x06", ",,,,")
#: A list on a .b16/.b32/.b64 directive.
_WIDE_LIST = re.compile("[\x01-\x03][^,\x01-\x06]*,")


#: Blanks at a line's start or end.
_LINE_BLANKS = re.compile(r"[ \t]*\n[ \t]*")


def _without_line_blanks(text: str) -> str | None:
    """``text`` without the blanks around its line breaks, or None when it has none. The bulk
    readers try a body as it is first (a blank left makes them give up), so that the bodies
    producers write, which have none, are not searched for them."""
    if " \n" in text or "\t\n" in text or "\n " in text or "\n\t" in text:
        return _LINE_BLANKS.sub("\n", text)
    return None


#: What :func:`bulk_pieces` reads: the bytes; the offset, size (one byte each) and text of
#: each symbolic value; its distinct texts, in the order of their first use; the offset of
#: each ``.b64`` number of 2**32 or more (in the bytes as written).
Pieces: TypeAlias = tuple[bytes, list[int], bytes, list[str], dict[str, None], list[int]]


@twin("sections")
def bulk_pieces(body: str) -> Pieces | None:
    """The :data:`Pieces` of an ASCII section body written the way producers write it: one
    directive a line, ``.bN``, one space and its values (a number, a ``.b8`` list such as
    ``97,98,0``, or on ``.b32``/``.b64`` one symbol such as ``label`` or ``.debug_loc+8``),
    blanks around lines allowed. None for anything else (labels, spaces in a list, negative,
    hex or octal numbers, values out of range), which :class:`SectionParser` reads line by
    line and names. The reference is read with a few whole-text operations; its native twin
    is ``ptxdwarf/_native/sections.c``."""
    if not body.isascii():
        return None
    text = body.strip()
    pieces = _bulk_pieces(text)
    if pieces is None:
        plain = _without_line_blanks(text)
        if plain is not None:
            pieces = _bulk_pieces(plain)
    return pieces


def bulk_section(
    name: str, body: str, filename: str, addends: list[tuple[str, int]] | None = None
) -> SectionImage | None:
    """The image (without its lines) of a body :func:`bulk_pieces` reads; None for any other.
    ``addends`` receives each ``label+N`` value with its offset."""
    pieces = bulk_pieces(body)
    if pieces is None:
        return None
    data, offsets, sizes, texts, distinct, wide = pieces
    relocs: list[Reloc] = []
    if texts:
        relocs = bulk_relocs(Symbol, Reloc, offsets, sizes, texts, distinct)
        if addends is not None and "+" in body:
            addends.extend((t, offset) for t, offset in zip(texts, offsets, strict=False) if "+" in t)
    return _as_ptxas_keeps(name, data, wide, relocs=relocs, labels={}, filename=filename)


@twin("sections")
def bulk_relocs(
    symbol: type[Symbol],
    reloc: type[Reloc],
    offsets: list[int],
    sizes: bytes,
    texts: list[str],
    distinct: dict[str, None],
) -> list[Reloc]:
    """The relocations of the symbolic values :func:`bulk_pieces` read (their ``offsets``,
    ``sizes`` and ``texts``, ``name`` or ``name+N``), as ``reloc`` s of one ``symbol`` for each
    text of ``distinct``. Its native twin is in ``ptxdwarf/_native/sections.c``."""
    if any("+" in text for text in distinct):
        made = [_symbol_of(symbol, text) for text in distinct]
    else:
        made = list(map(symbol, distinct))
    symbols = dict(zip(distinct, made, strict=False))
    return list(
        map(tuple.__new__, repeat(reloc), zip(offsets, sizes, map(symbols.__getitem__, texts), strict=False))
    )


def _bulk_pieces(text: str) -> Pieces | None:
    """:func:`bulk_pieces` of a body already stripped of the blanks around it."""
    if not text or "/" in text or ":" in text or ";" in text or "-" in text:
        return None
    if any(separator in text for separator in _SEPARATORS):
        return None
    s = "\n" + text
    for line_start, separator in _LINE_SEPARATORS:
        s = s.replace(line_start, separator)
    if "\n" in s or " " in s or "\t" in s or "\r" in s or "\x0b" in s or "\x0c" in s:
        return None
    if "," in s and _WIDE_LIST.search(s) is not None:
        return None
    for pattern, separator in _SYMBOL_SEPARATORS:
        s = pattern.sub(separator, s)
    kinds = s.encode("ascii").translate(_KIND_TABLE, _NOT_SEPARATOR)
    parts = _SYMBOL_ITEM.split(s)
    texts = parts[2::3]
    numbers = ",0".join(parts[0::3]).translate(_TO_COMMA)
    if numbers.encode("ascii").translate(None, b"0123456789,"):
        return None  # a symbol on .b8/.b16, a sign, a suffix, ...
    try:
        # json reads exactly the plain decimals (no leading zeros: 017 is octal in PTX)
        values = json.loads("[" + numbers[1:] + "]")
        data = struct.pack(b"<" + kinds.upper(), *values)
    except (ValueError, struct.error):
        return None
    symbol_offsets: list[int] = []
    sizes = b""
    distinct: dict[str, None] = {}
    wide: list[int] = []
    wide_b64 = _WIDE_B64.search(text) is not None
    if texts or wide_b64:
        runs = kinds.translate(_ONE_WIDE).split(b"W")
        wide_kinds = kinds.translate(None, b"B")
        steps = map(add, map(_WIDE_SIZE.__getitem__, wide_kinds), map(len, runs[1:]))
        offsets = list(accumulate(steps, initial=len(runs[0])))
        if texts:
            distinct = dict.fromkeys(texts)
            if _BULK_SYMBOLS.fullmatch("\n".join(distinct) + "\n") is None:
                return None
            symbol_offsets = list(compress(offsets, wide_kinds.translate(_SYMBOL_MASK)))
            sizes = wide_kinds.translate(_SYMBOL_SIZE, b"HIQ")
        if wide_b64:
            index = list(accumulate(map(len, runs[1:]), add, initial=len(runs[0])))
            # the k-th wide item is item index[k] + k
            wide = [
                offsets[k]
                for k, kind in enumerate(wide_kinds)
                if kind == 81 and values[index[k] + k] >= _WIDE  # 81: "Q"
            ]
    return data, symbol_offsets, sizes, texts, distinct, wide


def _one_directive_a_line(body: str, first_line: int, data: bytes) -> tuple[array[int], array[int]] | None:
    """The line offsets and numbers of a body :func:`bulk_section` read, when each of its
    lines holds exactly one directive (as producers write); None otherwise."""
    if not body.isascii() or "\x0b" in body or "\x0c" in body:
        return None
    stripped = body.strip()
    if not stripped:
        return None
    lead = body[: len(body) - len(body.lstrip())].count("\n")
    start = first_line + lead
    offsets = _plain_line_offsets(stripped)
    if offsets is None:
        plain = _without_line_blanks(stripped)
        offsets = None if plain is None else _plain_line_offsets(plain)
    if offsets is None or offsets.pop() != len(data):
        return None
    return offsets, array("q", range(start, start + len(offsets)))


#: A line's directive (its separator, see ``_LINE_SEPARATORS``) -> its size; a comma of a
#: ``.b8`` list -> 1 more byte.
_ITEM_SIZE = bytes.maketrans(b"\x06\x03\x01\x02,", b"\x01\x02\x04\x08\x01")
_LINE_START = bytes.maketrans(b"\x06\x03\x01\x02,", b"\x01\x01\x01\x01\x00")
_NOT_ITEM = bytes(c for c in range(256) if c not in b",\x01\x02\x03\x06")
_NO_VALUE = re.compile("[\x01\x02\x03\x06][\x01\x02\x03\x06]")


def _plain_line_offsets(stripped: str) -> array[int] | None:
    """The offset of each line of an ASCII section body (stripped, no blanks at its line breaks) and then its
    size, when every line is a directive, one space and its values with no blank (as nvcc
    writes; only ``.b8`` lists), read with a few whole-text operations; None for anything else."""
    s = "\n" + stripped
    for line_start, separator in _LINE_SEPARATORS:
        s = s.replace(line_start, separator)
    if "\n" in s or " " in s or "\t" in s or "\r" in s or _NO_VALUE.search(s) is not None:
        return None
    if "," in s and _WIDE_LIST.search(s) is not None:
        return None
    items = s.encode("ascii").translate(None, _NOT_ITEM)
    sums = array("q", accumulate(items.translate(_ITEM_SIZE), initial=0))
    if "," not in s:
        return sums
    offsets = array("q", compress(sums, items.translate(_LINE_START)))
    offsets.append(sums[-1])
    return offsets


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
