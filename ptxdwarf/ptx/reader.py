"""Reading PTX text: the debug sections as section images, and the module around them.

:func:`parse_ptx` finds every ``.section`` block and turns its directives
(``.b8``/``.b16``/``.b32``/``.b64`` lists of numbers, labels, ``label+N``,
``label1-label2``) into a :class:`~ptxdwarf.dwarf.image.SectionImage`. It also records
``.version``, ``.target``, ``.address_size``, ``.file`` directives and the
functions with their labels, for features that check debug info against code.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import accumulate, compress, count, repeat
from operator import add, itemgetter, mul
from typing import Any

from ..dwarf.image import Reloc, SectionImage, Symbol, gc_paused
from ..errors import PtxSyntaxError
from .symbols import SymbolTable, symbol_table

__all__ = [
    "FileDirective",
    "PtxFunction",
    "PtxModule",
    "PtxVariable",
    "SectionBlock",
    "mask_comments",
    "parse_declaration",
    "parse_ptx",
]


@dataclass(slots=True)
class FileDirective:
    """``.file INDEX "path"`` (LLVM 14 writes ``.file INDEX "dir" "name"``)."""

    index: int
    path: str
    line: int
    directory: str | None = None
    timestamp: int | None = None
    size: int | None = None

    @property
    def full_path(self) -> str:
        if self.directory and not self.path.startswith("/"):
            return self.directory.rstrip("/") + "/" + self.path
        return self.path


@dataclass(slots=True)
class PtxVariable:
    """A declared name: a parameter, register, or variable of some state space.

    ``count`` is set for a register range (``.reg .b32 %r<4>`` declares ``%r0`` to
    ``%r3``: name ``%r``, count 4); ``dims`` for arrays (``.b8 x[24]``, ``[]`` is -1).
    """

    name: str
    space: str
    type: str | None
    line: int
    align: int | None = None
    dims: tuple[int, ...] = ()
    count: int | None = None
    pointer_space: str | None = None
    text: str = ""
    initialized: bool = False
    """Declared with an initializer (``= 1``, ``= {1, 2}``)."""

    def names(self) -> list[str]:
        """Every name declared (each register of a range)."""
        if self.count is None:
            return [self.name]
        return [f"{self.name}{i}" for i in range(self.count)]

    def declares(self, name: str) -> bool:
        if self.count is None:
            return name == self.name
        rest = name[len(self.name) :]
        return (
            name.startswith(self.name)
            and rest.isdigit()
            and int(rest) < self.count
            and (rest == "0" or rest[0] != "0")
        )

    @property
    def byte_size(self) -> int | None:
        """Size in bytes of the declared object, where the type says it."""
        size = _TYPE_SIZES.get(self.type or "")
        if size is None:
            return None
        for d in self.dims:
            if d < 0:
                return None
            size *= d
        return size


_TYPE_SIZES = {
    ".b8": 1,
    ".s8": 1,
    ".u8": 1,
    ".pred": 1,
    ".b16": 2,
    ".s16": 2,
    ".u16": 2,
    ".f16": 2,
    ".bf16": 2,
    ".b32": 4,
    ".s32": 4,
    ".u32": 4,
    ".f32": 4,
    ".f16x2": 4,
    ".bf16x2": 4,
    ".tf32": 4,
    ".b64": 8,
    ".s64": 8,
    ".u64": 8,
    ".f64": 8,
    ".b128": 16,
    ".texref": 8,
    ".samplerref": 8,
    ".surfref": 8,
}


@dataclass(slots=True)
class PtxFunction:
    """A ``.entry`` or ``.func`` with a body: name, text span, labels defined in it."""

    name: str
    kind: str
    line: int
    header_start: int
    body_start: int = -1
    body_end: int = -1
    end_line: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    """Label name to the line that defines it."""
    params: list[PtxVariable] = field(default_factory=list)
    returns: list[PtxVariable] = field(default_factory=list)
    declarations: list[PtxVariable] = field(default_factory=list)
    """``.reg``, ``.local``, ``.shared``, ``.param`` declared in the body."""

    @property
    def is_kernel(self) -> bool:
        return self.kind == "entry"

    def declares(self, name: str) -> bool:
        """Whether ``name`` is a parameter, label or declared name of this function."""
        if name in self.labels:
            return True
        return any(v.declares(name) for v in (*self.params, *self.returns, *self.declarations))

    def register(self, name: str) -> PtxVariable | None:
        """The ``.reg`` declaration that declares register ``name`` (a linear search; the
        module's symbol table, ``PtxModule.symbols.register``, looks it up by name)."""
        for v in self.declarations:
            if v.space == "reg" and v.declares(name):
                return v
        return None


@dataclass(slots=True)
class SectionText:
    """What a section block's text says beyond its bytes: its labels, label differences,
    ``label+N`` values, and values ptxas cannot parse (none of which the image keeps)."""

    labels: list[tuple[str, int]] = field(default_factory=list)
    """Labels defined in the block, with their lines."""
    differences: list[tuple[str, str, int]] = field(default_factory=list)
    """``a-b`` values: the two labels and the line."""
    addends: list[tuple[str, int]] = field(default_factory=list)
    """``label+N`` values as written, with their offsets in the block's image."""
    syntax: list[tuple[str, int]] = field(default_factory=list)
    """Values ptxas cannot parse: what is wrong, and the line."""


@dataclass(slots=True)
class SectionBlock:
    """One ``.section NAME { ... }`` block: its place in the text and its image.

    The image is read from the text on first use (``image``), so that sections a
    reader does not need (``.debug_loc`` when only DIEs are wanted) cost nothing.
    """

    name: str
    start: int
    end: int
    line: int
    end_line: int
    loader: Callable[[], SectionImage] | None = field(default=None, repr=False)
    labels_possible: bool = True
    _image: SectionImage | None = field(default=None, repr=False)
    _text: SectionText | None = field(default=None, repr=False)
    dwarf_lines: bool = False
    """Written as ``@@DWARF`` lines (PTX ISA before 2.0), not as a ``.section`` block."""

    @property
    def image(self) -> SectionImage:
        if self._image is None:
            assert self.loader is not None
            self._image, self.loader = self.loader(), None
        return self._image

    @property
    def text(self) -> SectionText:
        """What the block's text says beyond its bytes (read with the image)."""
        _ = self.image
        return self._text if self._text is not None else SectionText()


@dataclass
class PtxModule:
    """A PTX module as far as debug info cares."""

    text: str
    filename: str
    version: tuple[int, int] | None = None
    version_line: int = 0
    target: list[str] = field(default_factory=list)
    target_span: tuple[int, int] | None = None
    target_line: int = 0
    address_size: int | None = None
    files: list[FileDirective] = field(default_factory=list)
    sections: list[SectionBlock] = field(default_factory=list)
    _functions: list[PtxFunction] = field(default_factory=list, repr=False)
    _variables: list[PtxVariable] = field(default_factory=list, repr=False)
    _prototypes: list[str] = field(default_factory=list, repr=False)
    _pending: Callable[[], PtxModule] | None = field(default=None, repr=False, compare=False)
    _symbols: SymbolTable | None = field(default=None, repr=False, compare=False)

    def _complete(self) -> None:
        # The functions, their declarations and labels are read on first use:
        # reading the debug sections does not need them.
        if self._pending is not None:
            full, self._pending = self._pending, None
            other = full()
            self._functions, self._variables, self._prototypes = (
                other._functions,
                other._variables,
                other._prototypes,
            )

    @property
    def functions(self) -> list[PtxFunction]:
        """Functions with a body (``.entry``, ``.func``), with parameters, declarations, labels."""
        self._complete()
        return self._functions

    @property
    def variables(self) -> list[PtxVariable]:
        """Module-level ``.global``, ``.const``, ``.shared`` ... variables."""
        self._complete()
        return self._variables

    @property
    def prototypes(self) -> list[str]:
        """Functions declared without a body (``.extern .func``)."""
        self._complete()
        return self._prototypes

    @property
    def has_debug_target(self) -> bool:
        """``.target`` lists ``debug``."""
        return "debug" in self.target

    def images(self, *, debug_only: bool = False) -> LazyImages:
        """Section images by name, each read on first use; blocks of the same name are joined in order.

        ``debug_only``: only the ``.debug_*`` sections."""
        groups: dict[str, list[SectionBlock]] = {}
        for block in self.sections:
            if not debug_only or block.name.startswith(".debug_"):
                groups.setdefault(block.name, []).append(block)

        def loader(blocks: list[SectionBlock]) -> Callable[[], SectionImage]:
            def load() -> SectionImage:
                image = blocks[0].image
                for block in blocks[1:]:
                    image = _join(image, block.image)
                return image

            return load

        return LazyImages(
            {name: loader(blocks) for name, blocks in groups.items()},
            {name: any(b.labels_possible for b in blocks) for name, blocks in groups.items()},
        )

    def read_sections(self) -> PtxModule:
        """Read every section block's text now (raising its errors now); ``self``."""
        for block in self.sections:
            _ = block.image
        return self

    @property
    def symbols(self) -> SymbolTable:
        """What each name of the module stands for (made on first use, then kept)."""
        return symbol_table(self)

    def declares(self, name: str) -> bool:
        """Whether ``name`` is a function, prototype, module variable, code label, or a
        parameter or non-register name declared in a function."""
        return self.symbols.declares(name)

    def variable(self, name: str) -> PtxVariable | None:
        """The module-level variable ``name``."""
        return self.symbols.variables.get(name)

    def function(self, name: str) -> PtxFunction | None:
        return self.symbols.functions.get(name)

    def function_of_label(self, label: str) -> PtxFunction | None:
        """The function whose body defines ``label``."""
        return self.symbols.code_labels.get(label)


class LazyImages(Mapping[str, SectionImage]):
    """Section images by name, each made by its loader on first access."""

    def __init__(
        self, loaders: dict[str, Callable[[], SectionImage]], labels_possible: dict[str, bool] | None = None
    ) -> None:
        self._loaders = dict(loaders)
        self._images: dict[str, SectionImage] = {}
        self._labels_possible = labels_possible or {}

    def __getitem__(self, name: str) -> SectionImage:
        image = self._images.get(name)
        if image is None:
            image = self._images[name] = self._loaders[name]()
        return image

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)

    def loaded(self, name: str) -> bool:
        return name in self._images

    def may_define_labels(self, name: str) -> bool:
        """Whether section ``name`` may define labels (read it only then, for a label lookup)."""
        if name in self._images:
            return bool(self._images[name].labels)
        return self._labels_possible.get(name, True)


def _join(a: SectionImage, b: SectionImage) -> SectionImage:
    a.ensure_lines()
    b.ensure_lines()
    shift = len(a.data)
    labels = dict(a.labels)
    labels.update({k: v + shift for k, v in b.labels.items()})
    return SectionImage(
        a.name,
        a.data + b.data,
        a.relocs + [r.moved(shift) for r in b.relocs],
        labels,
        fields={**a.fields, **{k + shift: v for k, v in b.fields.items()}},
        breaks=a.breaks + [o + shift for o in b.breaks],
        line_offsets=a.line_offsets + [o + shift for o in b.line_offsets],
        line_numbers=a.line_numbers + b.line_numbers,
        wide_values={**a.wide_values, **{o + shift: v for o, v in b.wide_values.items()}},
        filename=a.filename,
    )


# --- comments -------------------------------------------------------------

_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)


def mask_comments(text: str, filename: str = "<ptx>") -> str:
    """``text`` with every comment replaced by spaces (newlines kept), strings untouched."""
    if "/" not in text:
        return text
    # The pattern is tried only where a '/' or '"' stands: a search for either character
    # set visits every character, a literal find does not.
    match = _COMMENT_OR_STRING.match
    find = text.find
    pieces: list[str] = []
    done = 0
    slash, quote = find("/"), find('"')
    while slash >= 0:
        start = slash if quote < 0 or slash < quote else quote
        m = match(text, start)
        pos = start + 1
        if m is not None:
            pos = m.end()
            if text[start] == "/":
                pieces.append(text[done:start])
                pieces.append(_blank_comment(m.group()))
                done = pos
        if slash < pos:
            slash = find("/", pos)
        if 0 <= quote < pos:
            quote = find('"', pos)
    masked = "".join(pieces) + text[done:] if pieces else text
    pos = masked.find("/*")
    if pos >= 0:
        raise PtxSyntaxError(
            "unterminated /* comment", filename=filename, line=masked.count("\n", 0, pos) + 1
        )
    return masked


def _blank_comment(comment: str) -> str:
    if comment.startswith("/*"):
        return re.sub(r"[^\n]", " ", comment)
    return " " * len(comment)


# --- numbers and symbols --------------------------------------------------

_SYM = r"(?:\.[A-Za-z_][\w$.]*|[A-Za-z][\w$]*|[_$%][\w$]+)"
_INT = r"(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uU]?"
_ITEM = re.compile(
    rf"(?P<neg>-?)\s*(?P<num>{_INT})"
    rf"|(?P<sym>{_SYM})(?:\s*-\s*(?P<sym2>{_SYM}))?(?:\s*(?P<op>[-+])\s*(?P<add>{_INT}))?"
)
_LABEL = re.compile(rf"\s*({_SYM})\s*:")
# .byte, .4byte and .quad are ptxas's aliases of .b8, .b32 and .b64.
_DIRECTIVE = re.compile(r"\.(?:b(8|16|32|64)|(byte|4byte|quad))(?![\w$.])")
_ALIAS_WIDTH = {"byte": 1, "4byte": 4, "quad": 8}


def _directive_width(m: re.Match[str]) -> int:
    return int(m.group(1)) // 8 if m.group(1) else _ALIAS_WIDTH[m.group(2)]


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
_PACK_DIR = {".b8": "B", ".b16": "H", ".b32": "I", ".b64": "Q"}
_SIZE_DIR = {".b8": 1, ".b16": 2, ".b32": 4, ".b64": 8}
_PACK_BITS = {"8": "B", "16": "H", "32": "I", "64": "Q"}
_BYTES_BITS = {"8": 1, "16": 2, "32": 4, "64": 8}

_RANGES = {
    1: (-0x80, 0xFF),
    2: (-0x8000, 0xFFFF),
    4: (-0x80000000, 0xFFFFFFFF),
    8: (-(1 << 63), (1 << 64) - 1),
}
_PACK = {1: "B", 2: "H", 4: "I", 8: "Q"}


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


class _SectionParser:
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
        self.line_offsets: list[int] = []
        self.line_numbers: list[int] = []
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
        fast = _fast_section(self.name, body, self.filename, addends)
        if fast is not None:
            self.text.addends = addends
            name, filename = self.name, self.filename

            def lines() -> tuple[list[int], list[int]]:
                found = _one_directive_a_line(body, first_line, fast.data)
                if found is not None:
                    return found
                image = _SectionParser(name, filename).parse_lines(body, first_line)
                return image.line_offsets, image.line_numbers

            fast.line_loader = lines
            return fast
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
            fmt = "".join(map(_PACK_DIR.__getitem__, dirs))
            sizes = map(_SIZE_DIR.__getitem__, dirs)
        else:
            lines = run.split("\n")
            if run.endswith("\n"):
                lines.pop()
            parts = [line.split(None, 1) for line in lines]
            dirs = [p[0] for p in parts]
            rests = [p[1] for p in parts]
            counts = [r.count(",") + 1 for r in rests]
            fmt = "".join(map(mul, map(_PACK_DIR.__getitem__, dirs), counts))
            sizes = map(mul, map(_SIZE_DIR.__getitem__, dirs), counts)
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
                relocs.append(Reloc(offsets[i], _SIZE_DIR[dirs[i]], sym))
        if ".b64" in run:
            # .b64 numbers of 2**32 or more: ptxas keeps their low 32 bits.
            wide = self.wide_values
            symset = set(syms)
            for i, d in enumerate(dirs):
                if d == ".b64" and i not in symset:
                    k = 1 if counts is None else counts[i]
                    wide.extend(offsets[i] + 8 * j for j in range(k) if int(items[first[i] + j]) >= _WIDE)
        self.last_width = _SIZE_DIR[dirs[-1]]
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
                data += struct.pack("<%d%s" % (len(items), _PACK_BITS[bits]), *map(int, items))
        except (ValueError, struct.error):
            del data[start:]
            return -1
        width = _BYTES_BITS[bits]
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
                        data += struct.pack("<%d%s" % (len(values), _PACK[int(bits) // 8]), *values)
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
        if m is None and width in (4, 8) and _DOTTED.fullmatch(item):
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


_DIRECTIVE_CHAR = {".b8": "B", ".b16": "H", ".b32": "I", ".b64": "Q"}
_DIRECTIVE_SIZE = {".b8": 1, ".b16": 2, ".b32": 4, ".b64": 8}
_NOT_DIGIT_CHAR = frozenset(chr(c) for c in range(128) if not chr(c).isdigit()).__contains__
_FAST_SYMBOLS = re.compile(r"(?:(?:\.[A-Za-z_][\w$.]*|[A-Za-z_$%][\w$]*)(?:\+(?:[1-9][0-9]{0,9}|0))?\n)*")
#: A name with a '.' inside that is not a section name (``__PRETTY_FUNCTION__._Z3foov``):
#: ptxas cannot parse it, but it is read as one symbol.
_DOTTED = re.compile(r"[A-Za-z_$%][\w$]*(?:\.[\w$]+)+")


def is_dotted_name(name: str) -> bool:
    """A symbol name with a '.' inside that is not a section name: ptxas cannot parse it
    in a debug section (the reader keeps it, with a syntax note)."""
    return _DOTTED.fullmatch(name) is not None


_WIDE_B64 = re.compile(r"\.b64[ \t]+[0-9]{10}")


def _symbol_of(text: str) -> Symbol:
    if "+" in text:
        name, _, addend = text.partition("+")
        return Symbol(name, int(addend))
    return Symbol(text)


_OCTAL = re.compile(r",0[0-9]")
_B64_ITEM = re.compile("Q")
_CHAR_SIZE = {"B": 1, "H": 2, "I": 4, "Q": 8}


# The one-directive-a-line reader: each directive becomes the separator before its
# items (a .b8 list's own commas stay), a wide one marked as holding a symbol when
# its item does not start with a digit.
_LINE_SEPARATORS = (("\n.b8 ", "\x06"), ("\n.b16 ", "\x03"), ("\n.b32 ", "\x01"), ("\n.b64 ", "\x02"))
_SYMBOL_SEPARATORS = ((re.compile("\x01(?![0-9])"), "\x04"), (re.compile("\x02(?![0-9])"), "\x05"))
#: Splits at each symbolic item: text before, its separator, the symbol.
_SYMBOL_ITEM = re.compile("([\x04\x05])([^,\x01-\x06]*)")
#: Separator -> kind of item: B, H, I, Q a number of that width, i, q a symbol.
_KIND_TABLE = bytes.maketrans(b",\x06\x03\x01\x02\x04\x05", b"BBHIQiq")
_NOT_SEPARATOR = bytes(c for c in range(256) if c not in b",\x01\x02\x03\x04\x05\x06")
_ONE_WIDE = bytes.maketrans(b"HIQiq", b"WWWWW")
_WIDE_SIZE = {ord("H"): 2, ord("I"): 4, ord("Q"): 8, ord("i"): 4, ord("q"): 8}
_SYMBOL_MASK = bytes.maketrans(b"HIQiq", b"\x00\x00\x00\x01\x01")
_TO_COMMA = str.maketrans("\x01\x02\x03\x06", ",,,,")
#: A list on a .b16/.b32/.b64 directive.
_WIDE_LIST = re.compile("[\x01-\x03][^,\x01-\x06]*,")


def _line_section(
    name: str, body: str, filename: str, addends: list[tuple[str, int]] | None = None
) -> SectionImage | None:
    """:func:`_fast_section` of a body written one directive a line, each line
    ``.bN`` and one space and its values (as nvcc writes), read with a few whole-text
    operations; None for anything else."""
    text = body.strip()
    if not text or not text.isascii() or "/" in text or ":" in text or ";" in text or "-" in text:
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
    relocs: list[Reloc] = []
    wide: list[int] = []
    if texts or _WIDE_B64.search(text) is not None:
        runs = kinds.translate(_ONE_WIDE).split(b"W")
        wide_kinds = kinds.translate(None, b"B")
        steps = map(add, map(_WIDE_SIZE.__getitem__, wide_kinds), map(len, runs[1:]))
        offsets = list(accumulate(steps, initial=len(runs[0])))
        if texts:
            unique = list(dict.fromkeys(texts))
            if _FAST_SYMBOLS.fullmatch("\n".join(unique) + "\n") is None:
                return None
            plus = "+" in text
            cache = dict(zip(unique, map(_symbol_of if plus else Symbol, unique), strict=False))
            mask = wide_kinds.translate(_SYMBOL_MASK)
            sizes = map(_WIDE_SIZE.__getitem__, wide_kinds.translate(None, b"HIQ"))
            relocs = list(
                map(
                    tuple.__new__,
                    repeat(Reloc),
                    zip(compress(offsets, mask), sizes, map(cache.__getitem__, texts), strict=False),
                )
            )
            if plus and addends is not None:
                addends.extend((t, r.offset) for t, r in zip(texts, relocs, strict=False) if "+" in t)
        if _WIDE_B64.search(text) is not None:
            index = list(accumulate(map(len, runs[1:]), add, initial=len(runs[0])))
            # the k-th wide item is item index[k] + k
            wide = [
                offsets[k]
                for k, kind in enumerate(wide_kinds)
                if kind == 81 and values[index[k] + k] >= _WIDE  # 81: "Q"
            ]
    return _as_ptxas_keeps(name, data, wide, relocs=relocs, labels={}, filename=filename)


def _fast_section(
    name: str, body: str, filename: str, addends: list[tuple[str, int]] | None = None
) -> SectionImage | None:
    """The image of a section written the way producers write (each directive with one
    token of values: ``.b8 1``, ``.b8 97,98,0``, ``.b64 label``, ``.b32 .debug_loc+8``),
    in bulk string operations; None when the body has anything else (labels, comments,
    spaces in lists, negative, hex or octal numbers, values out of range), which the
    line-by-line reader then handles and names. ``addends`` receives each ``label+N``
    value with its offset."""
    image = _line_section(name, body, filename, addends)
    if image is not None:
        return image
    if "/" in body or ":" in body or ";" in body or "-" in body:
        return None
    tokens = body.split()
    if not tokens or len(tokens) % 2:
        return None
    directives = tokens[0::2]
    values = tokens[1::2]
    if not set(directives) <= _DIRECTIVE_CHAR.keys():
        return None  # a label, a list with spaces, ...: not this simple form
    # Symbols are the values that do not start with a digit.
    symbols = list(compress(count(), map(_NOT_DIGIT_CHAR, map(itemgetter(0), values))))
    joined = "," + ",".join(values)
    if _OCTAL.search(joined) is not None:
        return None  # 017 is octal in PTX, and int() would read it as 17
    if "," in body:
        counts: list[int] | None = list(map(str.count, values, repeat(",", len(values))))
        assert counts is not None
        repeats = list(map(add, counts, repeat(1)))
        fmt = "".join(map(mul, map(_DIRECTIVE_CHAR.__getitem__, directives), repeats))
        items: list[str] = joined[1:].split(",")
        sizes = list(map(mul, map(_DIRECTIVE_SIZE.__getitem__, directives), repeats))
    else:
        counts = None
        fmt = "".join(map(_DIRECTIVE_CHAR.__getitem__, directives))
        items = values
        sizes = list(map(_DIRECTIVE_SIZE.__getitem__, directives))
    relocs: list[Reloc] = []
    offsets: list[int] | None = None
    if symbols:
        items = list(items)
        offsets = list(accumulate(sizes, initial=0))
        pick = itemgetter(*symbols) if len(symbols) > 1 else (lambda seq: (seq[symbols[0]],))
        texts = pick(values)
        widths = pick(sizes)
        if not set(widths) <= {4, 8}:
            return None  # a symbol on .b8/.b16, or in a list
        unique = list(dict.fromkeys(texts))
        if _FAST_SYMBOLS.fullmatch("\n".join(unique) + "\n") is None:
            return None
        cache = (
            dict(zip(unique, map(_symbol_of, unique), strict=False))
            if "+" in joined
            else dict(zip(unique, map(Symbol, unique), strict=False))
        )
        relocs = list(
            map(
                tuple.__new__,
                repeat(Reloc),
                zip(pick(offsets), widths, map(cache.__getitem__, texts), strict=False),
            )
        )
        if "+" in joined and addends is not None:
            addends.extend((t, r.offset) for t, r in zip(texts, relocs, strict=False) if "+" in t)
        if counts is not None:
            first = list(accumulate(repeats, initial=0))
            for i in symbols:
                items[first[i]] = "0"
        else:
            for i in symbols:
                items[i] = "0"
    try:
        data = struct.pack("<" + fmt, *map(int, items))
    except (ValueError, struct.error):
        return None  # hex, suffixes, values out of range: the careful reader names them
    wide: list[int] = []
    if _WIDE_B64.search(body) is not None:
        # .b64 numbers of 2**32 or more (ptxas keeps their low 32 bits); at least 10 digits
        big = [
            m.start()
            for m in _B64_ITEM.finditer(fmt)
            if len(items[m.start()]) >= 10 and int(items[m.start()]) >= _WIDE
        ]
        if big:
            starts = list(accumulate(map(_CHAR_SIZE.__getitem__, fmt), initial=0))
            wide = [starts[k] for k in big]
    return _as_ptxas_keeps(name, data, wide, relocs=relocs, labels={}, filename=filename)


#: A line that is blank or does not start with a directive.
_NOT_DIRECTIVE_LINE = re.compile(r"\n[ \t\r]*(?!\.b(?:8|16|32|64)[ \t])")


def _one_directive_a_line(body: str, first_line: int, data: bytes) -> tuple[list[int], list[int]] | None:
    """The line offsets and numbers of a body the bulk reader read, when each of its
    lines holds exactly one directive (as producers write); None otherwise."""
    if not body.isascii() or "\x0b" in body or "\x0c" in body:
        return None
    stripped = body.strip()
    if not stripped:
        return None
    lead = body[: len(body) - len(body.lstrip())].count("\n")
    start = first_line + lead
    offsets = _plain_line_offsets(stripped)
    if offsets is not None:
        if offsets.pop() != len(data):
            return None
        return offsets, list(range(start, start + len(offsets)))
    if _NOT_DIRECTIVE_LINE.search(stripped) is not None:
        return None
    tokens = stripped.split()
    directives = tokens[0::2]
    if stripped.count("\n") + 1 != len(directives):
        return None
    values = tokens[1::2]
    sizes = list(map(_DIRECTIVE_SIZE.__getitem__, directives))
    if "," in stripped:
        sizes = [size * (value.count(",") + 1) for size, value in zip(sizes, values, strict=False)]
    offsets = list(accumulate(sizes, initial=0))
    if offsets.pop() != len(data):
        return None
    return offsets, list(range(start, start + len(directives)))


#: A line's directive (its separator, see ``_LINE_SEPARATORS``) -> its size; a comma of a
#: ``.b8`` list -> 1 more byte.
_ITEM_SIZE = bytes.maketrans(b"\x06\x03\x01\x02,", b"\x01\x02\x04\x08\x01")
_LINE_START = bytes.maketrans(b"\x06\x03\x01\x02,", b"\x01\x01\x01\x01\x00")
_NOT_ITEM = bytes(c for c in range(256) if c not in b",\x01\x02\x03\x06")
_NO_VALUE = re.compile("[\x01\x02\x03\x06][\x01\x02\x03\x06]")


def _plain_line_offsets(stripped: str) -> list[int] | None:
    """The offset of each line of an ASCII section body (no blanks around it) and then its
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
    sums = list(accumulate(items.translate(_ITEM_SIZE), initial=0))
    if "," not in s:
        return sums
    offsets = list(compress(sums, items.translate(_LINE_START)))
    offsets.append(sums[-1])
    return offsets


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the module -----------------------------------------------------------

#: Everything the module scan stops at but labels: a directive word (``_TOKEN_WORD``),
#: a brace or a string.
_DECL_WORDS = ("reg", "local", "shared", "global", "const", "param", "tex", "texref", "samplerref", "surfref")
_TOKEN_WORD = re.compile(
    r"\.(?:section|version|target|address_size|file|entry|func|" + "|".join(_DECL_WORDS) + r")\b"
)
_TOKEN = re.compile(_TOKEN_WORD.pattern + r'|[{}]|"(?:[^"\\\n]|\\.)*"')
_TOKEN_KIND = {
    ".section": "section",
    ".version": "version",
    ".target": "target",
    ".address_size": "address_size",
    ".file": "file",
    ".entry": "func",
    ".func": "func",
    "{": "open",
    "}": "close",
    **{"." + w: "decl" for w in _DECL_WORDS},
}
_IDENT_CHAR = re.compile(r"[\w$.%]")
#: A label name just before the end of the searched span.
_LABEL_BEFORE = re.compile(r"(?<![\w$.%])(" + _SYM + r")\Z")
_SECTION_HEAD = re.compile(r"\.section\s+(" + _SYM + r")\s*")
_VERSION = re.compile(r"\.version\s+(\d+)\.(\d+)")
_TARGET = re.compile(r"\.target[ \t]*([^\n;]*)")
_ADDRESS_SIZE = re.compile(r"\.address_size\s+(\d+)")
_FILE = re.compile(
    r'\.file\s+(\d+)\s+("(?:[^"\\\n]|\\.)*")(?:\s+("(?:[^"\\\n]|\\.)*"))?(?:\s*,\s*(\d+)\s*,\s*(\d+))?'
)
_FUNC_NAME = re.compile(r"\.(entry|func)\s*(?:\([^)]*\)\s*)?(" + _SYM + r")")


_DECLARATOR = re.compile(
    r"(?P<name>" + _SYM + r")\s*(?:<\s*(?P<count>\d+)\s*>)?(?P<dims>(?:\s*\[\s*\d*\s*\])*)\s*$"
)
_TYPES = frozenset(_TYPE_SIZES) | {".v2", ".v4", ".v8"}
#: ``.reg .b32 %r<4>``, ``.local .align 8 .b8 __local_depot0[16]``: one name, one type,
#: at most an alignment and a count or one dimension.
_SIMPLE_DECLARATION = re.compile(
    r"\.(" + "|".join(_DECL_WORDS) + r")\s+(?:\.align\s+([1-9][0-9]*)\s+)?(\.\w+)\s+(" + _SYM + r")"
    r"(?:\s*<\s*([0-9]+)\s*>|\s*\[\s*([0-9]+)\s*\])?"
)


def parse_declaration(text: str, line: int) -> list[PtxVariable]:
    """The names a declaration statement (``.reg .b32 %r<4>``, ``.param .align 8 .b8 p[24]``,
    ``.global .u32 g = 1``) declares; no ``;``."""
    text, equals, _ = text.partition("=")
    text = text.strip()
    initialized = bool(equals)
    simple = _SIMPLE_DECLARATION.fullmatch(text)
    if simple is not None and simple.group(3) in _TYPE_SIZES:
        groups: tuple[str, str | None, str, str, str | None, str | None] = simple.groups()  # type: ignore[assignment]
        space_word, align_word, type_word, name, count, dim = groups
        return [
            PtxVariable(
                name,
                space_word,
                type_word,
                line,
                int(align_word) if align_word else None,
                (int(dim),) if dim else (),
                int(count) if count else None,
                None,
                text,
                initialized,
            )
        ]
    m = re.match(r"\.(\w+)", text)
    if m is None:
        return []
    space = m.group(1)
    rest = text[m.end() :]
    type_: str | None = None
    align: int | None = None
    pointer_space: str | None = None
    words = rest.replace(",", " , ").split()
    declarators: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == ".align" and i + 1 < len(words):
            try:
                align = int(words[i + 1], 0)
            except ValueError:
                pass
            i += 2
            continue
        if w == ".ptr":
            i += 1
            continue
        if w in (".global", ".shared", ".const", ".local") and type_ is not None:
            pointer_space = w[1:]
            i += 1
            continue
        if w.startswith(".") and not current:
            if (
                w in _TYPES or w in _TYPE_SIZES or re.fullmatch(r"\.[busf]\d+(x2)?|\.pred|\.b128", w)
            ) and not w.startswith(".v"):
                type_ = w
            i += 1
            continue
        if w == ",":
            declarators.append(" ".join(current))
            current = []
        else:
            current.append(w)
        i += 1
    if current:
        declarators.append(" ".join(current))
    out = []
    for d in declarators:
        dm = _DECLARATOR.match(d.strip())
        if dm is None:
            continue
        dims = tuple(
            int(x) if x.strip() else -1 for x in re.findall(r"\[\s*(\d*)\s*\]", dm.group("dims") or "")
        )
        out.append(
            PtxVariable(
                dm.group("name"),
                space,
                type_,
                line,
                align,
                dims,
                int(dm.group("count")) if dm.group("count") else None,
                pointer_space,
                text,
                initialized,
            )
        )
    return out


def _unquote(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s[1:-1])


class _Tokens:
    """The tokens of ``_TOKEN`` in comment-masked text, in order. The pattern is tried only
    where a token may start (found with literal searches): a search for the whole pattern
    tries it at every character."""

    __slots__ = ("_i", "_match", "_starts", "_text")

    def __init__(self, masked: str) -> None:
        starts = [m.start() for m in _TOKEN_WORD.finditer(masked)]
        find = masked.find
        for c in '{}"':
            pos = find(c)
            while pos >= 0:
                starts.append(pos)
                pos = find(c, pos + 1)
        starts.sort()
        self._starts = starts
        self._i = 0
        self._text = masked
        self._match = _TOKEN.match

    def next(self, pos: int) -> re.Match[str] | None:
        """The first token at or after ``pos`` (never before the last one returned)."""
        starts, i, text, match = self._starts, self._i, self._text, self._match
        while i < len(starts):
            start = starts[i]
            i += 1
            if start >= pos:
                m = match(text, start)
                if m is not None:
                    self._i = i
                    return m
        self._i = i
        return None


class _ModuleParser:
    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self.masked = mask_comments(text, filename)
        self.module = PtxModule(text, filename)
        self._line_pos = 0
        self._line = 1
        self.dwarf_blocks: list[SectionBlock] = []
        if "@@DWARF" in self.masked:
            self.masked, self.dwarf_blocks = _dwarf_line_blocks(self.masked, filename)

    def line_at(self, pos: int) -> int:
        # Positions are visited in increasing order, so count newlines incrementally.
        if pos < self._line_pos:
            self._line_pos, self._line = 0, 1
        self._line += self.masked.count("\n", self._line_pos, pos)
        self._line_pos = pos
        return self._line

    def error(self, message: str, pos: int) -> PtxSyntaxError:
        return PtxSyntaxError(message, filename=self.filename, line=self.line_at(pos))

    def parse(self) -> PtxModule:
        masked = self.masked
        module = self.module
        depth = 0
        function: PtxFunction | None = None
        pending: PtxFunction | None = None
        pos = 0
        next_token = _Tokens(masked).next
        find = masked.find
        # Labels are found from their colons (a scan for every identifier of the
        # instructions is slow); each is handled, in text order, before the token
        # that follows it.
        colon = find(":")
        while True:
            m = next_token(pos)
            if m is None:
                break
            start = m.start()
            tok = m.group()
            if 0 <= colon < start:
                if function is not None:
                    while 0 <= colon < start:
                        self.label_at(colon, pos, function)
                        colon = find(":", colon + 1)
                else:
                    colon = find(":", start)
            pos = m.end()
            kind = _TOKEN_KIND.get(tok, "string")
            if kind == "decl" and start and _IDENT_CHAR.match(masked, start - 1):
                continue  # .param in ld.param.u64: not a declaration
            if kind == "section":
                pos = self.section(m.start())
            elif kind == "open":
                depth += 1
                if depth == 1 and pending is not None:
                    function = pending
                    function.body_start = m.end()
                    pending = None
            elif kind == "close":
                depth -= 1
                if depth < 0:
                    raise self.error("unmatched }", m.start())
                if depth == 0 and function is not None:
                    function.body_end = m.start()
                    function.end_line = self.line_at(m.start())
                    function = None
            elif kind == "string":
                pass
            elif kind == "decl":
                end = masked.find(";", m.start())
                if end < 0:
                    raise self.error(f"declaration {tok} without ';'", m.start())
                nested = re.search(r"[{}]", masked[m.start() : end].split("=", 1)[0])
                if nested is not None:
                    # not a declaration statement (e.g. the name of a state space in an instruction)
                    pass
                else:
                    found = parse_declaration(masked[m.start() : end], self.line_at(m.start()))
                    if function is not None:
                        function.declarations.extend(found)
                    elif depth == 0:
                        module._variables.extend(found)
                    pos = end + 1
            elif depth == 0:
                if kind == "func":
                    fm = _FUNC_NAME.match(masked, m.start())
                    if fm is not None:
                        pending = PtxFunction(fm.group(2), fm.group(1), self.line_at(m.start()), m.start())
                        returns = re.match(r"\.(?:entry|func)\s*\(([^)]*)\)", masked[m.start() : fm.end()])
                        if returns is not None:
                            pending.returns = self.param_list(returns.group(1), m.start())
                        pos = self.signature(fm.end(), pending)
                        if pos < 0:
                            module._prototypes.append(pending.name)
                            pending = None
                            pos = -pos
                        else:
                            module._functions.append(pending)
                elif kind in ("version", "target", "address_size"):
                    pos = self.directive(kind, m.start())
                elif kind == "file":
                    self.file_directive(m.start())
            elif kind == "file":
                self.file_directive(m.start())
            if 0 <= colon < pos:
                colon = find(":", pos)
        if depth != 0:
            raise self.error("unclosed { at the end of the file", len(masked))
        _add_blocks(module, self.dwarf_blocks)
        return module

    def directive(self, kind: str, start: int) -> int:
        """Read ``.version``, ``.target`` or ``.address_size`` at ``start``; the end."""
        masked = self.masked
        module = self.module
        if kind == "version":
            vm = _VERSION.match(masked, start)
            if vm is None:
                raise self.error("bad .version directive", start)
            module.version = (int(vm.group(1)), int(vm.group(2)))
            module.version_line = self.line_at(start)
            return vm.end()
        if kind == "target":
            tm = _TARGET.match(masked, start)
            targets = [t.strip() for t in tm.group(1).split(",") if t.strip()] if tm else []
            if tm is None or not targets:
                raise self.error("bad .target directive (no target named)", start)
            module.target = targets
            module.target_span = (start, tm.end())
            module.target_line = self.line_at(start)
            return tm.end()
        am = _ADDRESS_SIZE.match(masked, start)
        if am is None or am.group(1) not in ("32", "64"):
            raise self.error("bad .address_size directive (32 or 64)", start)
        module.address_size = int(am.group(1))
        return am.end()

    def label_at(self, colon: int, floor: int, function: PtxFunction) -> None:
        """Record the label ended by the colon at ``colon``, if one is (not ``::``)."""
        masked = self.masked
        if masked.startswith(":", colon + 1) or colon == 0:
            return
        end = colon
        while end > floor and masked[end - 1].isspace():
            end -= 1
        lo = max(floor, masked.rfind("\n", 0, end) + 1)
        m = _LABEL_BEFORE.search(masked, lo, end)
        if m is not None:
            function.labels.setdefault(m.group(1), self.line_at(m.start()))

    def param_list(self, text: str, at: int) -> list[PtxVariable]:
        line = self.line_at(at)
        out: list[PtxVariable] = []
        for part in text.split(","):
            part = part.strip()
            if part:
                out.extend(parse_declaration(part, line))
        return out

    def signature(self, pos: int, function: PtxFunction) -> int:
        """Read the parameter list after a function name; a negative position marks a prototype."""
        masked = self.masked
        m = re.compile(r"\s*(?:\(([^)]*)\)\s*)?").match(masked, pos)
        if m is not None:
            if m.group(1) is not None:
                function.params = self.param_list(m.group(1), pos)
            pos = m.end()
        tail = re.compile(r"[^{;]*").match(masked, pos)
        end = tail.end() if tail else pos
        if end < len(masked) and masked[end] == ";":
            return -(end + 1)
        return pos

    def file_directive(self, start: int) -> None:
        fm = _FILE.match(self.masked, start)
        if fm is None:
            raise self.error("bad .file directive", start)
        line = self.line_at(start)
        first = _unquote(fm.group(2))
        second = _unquote(fm.group(3)) if fm.group(3) else None
        entry = FileDirective(
            int(fm.group(1)),
            second if second is not None else first,
            line,
            directory=first if second is not None else None,
            timestamp=int(fm.group(4)) if fm.group(4) else None,
            size=int(fm.group(5)) if fm.group(5) else None,
        )
        self.module.files.append(entry)

    def section(self, start: int) -> int:
        masked = self.masked
        head = _SECTION_HEAD.match(masked, start)
        if head is None:
            raise self.error("bad .section directive", start)
        name = head.group(1)
        pos = head.end()
        if pos >= len(masked) or masked[pos] != "{":
            raise self.error(f"expected {{ after .section {name}", start)
        close = masked.find("}", pos + 1)
        nested = masked.find("{", pos + 1)
        line = self.line_at(start)
        if close < 0 or (0 <= nested < close):
            raise PtxSyntaxError(
                f"section {name} opened here is never closed", filename=self.filename, line=line
            )
        body = masked[pos + 1 : close]
        body_line = line + masked.count("\n", start, pos + 1)
        stray = re.search(r"\.section\b", body) if ".section" in body else None
        if stray is not None:
            raise PtxSyntaxError(
                f"section {name} opened here is never closed", filename=self.filename, line=line
            )
        filename = self.filename
        end_line = self.line_at(close)
        block = SectionBlock(name, start, close + 1, line, end_line, None, ":" in body)

        def load() -> SectionImage:
            with gc_paused():
                parser = _SectionParser(name, filename)
                image = parser.parse(body, body_line)
                block._text = parser.text
                return image

        block.loader = load
        self.module.sections.append(block)
        return close + 1


#: A line of the ``@@DWARF`` form of debug sections (PTX ISA 1.x): the marker, then one
#: ``.section``, ``.byte``, ``.4byte`` or ``.quad`` directive.
_DWARF_LINE = re.compile(r"(?m)^([ \t]*@@DWARF\b)([^\n]*)")
_DWARF_SECTION = re.compile(r"\s*\.section\s+(" + _SYM + r")\s*(?:,[^\n]*)?$")


def _dwarf_line_blocks(masked: str, filename: str) -> tuple[str, list[SectionBlock]]:
    """The sections written as ``@@DWARF`` lines in ``masked`` (comment-masked text), and
    that text with those lines blanked (so the module scan does not see their ``.section``).

    Each ``@@DWARF .section NAME, ...`` line starts a block; the ``@@DWARF`` lines after it,
    up to the next such line, are its directives, read like a ``.section`` body.
    """
    groups: list[tuple[str, int, int, list[re.Match[str]]]] = []
    line, pos = 1, 0
    for m in _DWARF_LINE.finditer(masked):
        line += masked.count("\n", pos, m.start())
        pos = m.start()
        head = _DWARF_SECTION.match(m.group(2))
        if head is not None:
            groups.append((head.group(1), m.start(), line, []))
        elif not groups:
            raise PtxSyntaxError("@@DWARF data before any @@DWARF .section", filename=filename, line=line)
        else:
            groups[-1][3].append(m)
    blocks = []
    for name, start, first_line, lines in groups:
        head_end = masked.find("\n", start)
        head_end = len(masked) if head_end < 0 else head_end
        end = lines[-1].end() if lines else head_end
        body = masked[head_end:end]
        # The body keeps its lines (for line numbers): markers become spaces, other lines blanks.
        kept = {m.start() - head_end: m for m in lines}
        parts = []
        offset = 0
        for raw in body.split("\n"):
            line_match = kept.get(offset)
            parts.append(
                " " * len(line_match.group(1)) + line_match.group(2) if line_match is not None else ""
            )
            offset += len(raw) + 1
        blocks.append(_line_block(name, start, end, first_line, masked, "\n".join(parts), filename))
    blanked = _DWARF_LINE.sub(lambda m: " " * (m.end() - m.start()), masked)
    return blanked, blocks


def _line_block(
    name: str, start: int, end: int, line: int, masked: str, body: str, filename: str
) -> SectionBlock:
    end_line = line + masked.count("\n", start, end)
    block = SectionBlock(name, start, end, line, end_line, None, False, dwarf_lines=True)

    def load() -> SectionImage:
        parser = _SectionParser(name, filename)
        image = parser.parse_lines(body, line)
        block._text = parser.text
        return image

    block.loader = load
    return block


def _add_blocks(module: PtxModule, blocks: list[SectionBlock]) -> None:
    """Add ``blocks`` to the module's sections, in text order."""
    if blocks:
        module.sections = sorted(module.sections + blocks, key=lambda b: b.start)


_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])
#: Everything but the characters :func:`_marks` keeps.
_UNMARKED = bytes(c for c in range(256) if c not in _CONTROL_BYTES + b"{}/*")


def _marks(text: str) -> bytes | None:
    """The control characters, braces, slashes and stars of ASCII ``text``, in order,
    in one pass (None for other text): what :func:`parse_ptx` checks the whole text for."""
    if not text.isascii():
        return None
    return text.encode("ascii").translate(None, _UNMARKED)


def _directives_at(text: str, word: str) -> list[int]:
    """Where ``word`` (``.section``) starts a line's first token, not a longer word."""
    found = []
    size = len(word)
    pos = text.find(word)
    while pos >= 0:
        after = text[pos + size : pos + size + 1]
        if not (after.isalnum() or after == "_") and _at_line_start(text, pos):
            found.append(pos)
        pos = text.find(word, pos + size)
    return found


def _at_line_start(text: str, pos: int) -> bool:
    start = text.rfind("\n", 0, pos) + 1
    return not text[start:pos].strip()


def _quick(text: str, filename: str, marks: bytes | None = None) -> PtxModule | None:
    """The module's header directives and debug sections, without reading the code;
    None when the text needs the careful reader (block comments, unbalanced braces).
    ``marks``: :func:`_marks` of the text, if known."""
    if marks is not None:
        if (b"/*" in marks and "/*" in text) or marks.count(b"{") != marks.count(b"}"):
            return None
    elif "/*" in text or text.count("{") != text.count("}"):
        return None
    parser = _ModuleParser.__new__(_ModuleParser)
    parser.text = text
    parser.filename = filename
    parser.module = module = PtxModule(text, filename)
    parser._line_pos = 0
    parser._line = 1
    starts = _directives_at(text, ".section")
    tail = starts[0] if starts else len(text)
    # Comments matter only in the debug sections, and there only when some are written.
    if text.find("/", tail) >= 0:
        parser.masked = text[:tail] + mask_comments(text[tail:], filename)
    else:
        parser.masked = text
    dwarf_blocks: list[SectionBlock] = []
    if "@@DWARF" in text:
        parser.masked, dwarf_blocks = _dwarf_line_blocks(mask_comments(text, filename), filename)
    head_end = text.find("{")
    head = text if head_end < 0 else text[:head_end]
    for name, _pattern in (("version", _VERSION), ("target", _TARGET), ("address_size", _ADDRESS_SIZE)):
        for m in re.finditer(r"\." + name + r"\b", head):
            if _at_line_start(text, m.start()):
                parser.directive(name, m.start())
                break
    for start in _directives_at(text, ".file"):
        parser.file_directive(start)
    pos = 0
    for start in starts:
        if start >= pos:
            pos = parser.section(start)
    _add_blocks(module, dwarf_blocks)
    module._pending = lambda: _parse_paused(text, filename)
    return module


def _parse_paused(text: str, filename: str) -> PtxModule:
    with gc_paused():
        return _ModuleParser(text, filename).parse()


def parse_ptx(text: str, filename: str = "<ptx>") -> PtxModule:
    """Read a PTX module's debug sections and the directives around them.

    Raises :class:`~ptxdwarf.errors.PtxSyntaxError` naming file and line on text
    that is not PTX ptxas would read.
    """
    if not text.strip():
        raise PtxSyntaxError("empty file: no PTX", filename=filename)
    marks = _marks(text)
    bad = _CONTROL.search(text) if marks is None or marks.translate(None, b"{}/*") else None
    if bad is not None:
        raise PtxSyntaxError(
            ("NUL byte" if bad.group(0) == "\0" else f"control character 0x{ord(bad.group(0)):02x}")
            + " in the text: this is not PTX",
            filename=filename,
            line=text.count("\n", 0, bad.start()) + 1,
        )
    with gc_paused():
        quick = _quick(text, filename, marks)
        if quick is not None:
            return quick
        return _ModuleParser(text, filename).parse()


def iter_debug_sections(module: PtxModule) -> Iterator[SectionBlock]:
    """The blocks of sections whose names start with ``.debug_``."""
    return (b for b in module.sections if b.name.startswith(".debug_"))
