"""Reading PTX text: the debug sections as section images, and the module around them.

:func:`parse_ptx` finds every ``.section`` block and turns its directives
(``.b8``/``.b16``/``.b32``/``.b64`` lists of numbers, labels, ``label+N``,
``label1-label2``) into a :class:`~ptxdwarf.image.SectionImage`. It also records
``.version``, ``.target``, ``.address_size``, ``.file`` directives and the
functions with their labels, for features that check debug info against code.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Iterator

from .errors import PtxSyntaxError
from .image import Reloc, SectionImage, Symbol

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

    def names(self) -> list[str]:
        """Every name declared (each register of a range)."""
        if self.count is None:
            return [self.name]
        return [f"{self.name}{i}" for i in range(self.count)]

    def declares(self, name: str) -> bool:
        if self.count is None:
            return name == self.name
        rest = name[len(self.name) :]
        return name.startswith(self.name) and rest.isdigit() and int(rest) < self.count and (rest == "0" or rest[0] != "0")

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
    ".b8": 1, ".s8": 1, ".u8": 1, ".pred": 1,
    ".b16": 2, ".s16": 2, ".u16": 2, ".f16": 2, ".bf16": 2,
    ".b32": 4, ".s32": 4, ".u32": 4, ".f32": 4, ".f16x2": 4, ".bf16x2": 4, ".tf32": 4,
    ".b64": 8, ".s64": 8, ".u64": 8, ".f64": 8,
    ".b128": 16,
    ".texref": 8, ".samplerref": 8, ".surfref": 8,
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
        """The ``.reg`` declaration that declares register ``name``."""
        for v in self.declarations:
            if v.space == "reg" and v.declares(name):
                return v
        return None


@dataclass(slots=True)
class SectionBlock:
    """One ``.section NAME { ... }`` block: its place in the text and its image."""

    name: str
    start: int
    end: int
    line: int
    end_line: int
    image: SectionImage


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
    functions: list[PtxFunction] = field(default_factory=list)
    sections: list[SectionBlock] = field(default_factory=list)
    variables: list[PtxVariable] = field(default_factory=list)
    """Module-level ``.global``, ``.const``, ``.shared`` ... variables."""
    prototypes: list[str] = field(default_factory=list)
    """Functions declared without a body (``.extern .func``)."""

    @property
    def has_debug_target(self) -> bool:
        """``.target`` lists ``debug``."""
        return "debug" in self.target

    def images(self) -> dict[str, SectionImage]:
        """Section images by name; blocks of the same name are joined in order."""
        out: dict[str, SectionImage] = {}
        for block in self.sections:
            img = block.image
            if img.name not in out:
                out[img.name] = img
                continue
            out[img.name] = _join(out[img.name], img)
        return out

    def declares(self, name: str) -> bool:
        """Whether ``name`` is a function, prototype, module variable or a name inside a function."""
        if any(f.name == name for f in self.functions) or name in self.prototypes:
            return True
        if any(v.declares(name) for v in self.variables):
            return True
        return any(f.declares(name) for f in self.functions)

    def variable(self, name: str) -> PtxVariable | None:
        """The module-level variable ``name``."""
        for v in self.variables:
            if v.name == name:
                return v
        return None

    def function(self, name: str) -> PtxFunction | None:
        for f in self.functions:
            if f.name == name:
                return f
        return None

    def function_of_label(self, label: str) -> PtxFunction | None:
        """The function whose body defines ``label``."""
        for f in self.functions:
            if label in f.labels:
                return f
        return None


def _join(a: SectionImage, b: SectionImage) -> SectionImage:
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
        wide_values=a.wide_values + [o + shift for o in b.wide_values],
        filename=a.filename,
    )


# --- comments -------------------------------------------------------------

_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)


def mask_comments(text: str, filename: str = "<ptx>") -> str:
    """``text`` with every comment replaced by spaces (newlines kept), strings untouched."""
    if "/" not in text:
        return text

    def blank(m: re.Match[str]) -> str:
        s = m.group(0)
        if s[0] == '"':
            return s
        if s.startswith("/*"):
            return re.sub(r"[^\n]", " ", s)
        return " " * len(s)

    masked = _COMMENT_OR_STRING.sub(blank, text)
    pos = masked.find("/*")
    if pos >= 0:
        raise PtxSyntaxError("unterminated /* comment", filename=filename, line=masked.count("\n", 0, pos) + 1)
    return masked


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

_RANGES = {1: (-0x80, 0xFF), 2: (-0x8000, 0xFFFF), 4: (-0x80000000, 0xFFFFFFFF), 8: (-(1 << 63), (1 << 64) - 1)}
_PACK = {1: "B", 2: "H", 4: "I", 8: "Q"}


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
        self.labels: dict[str, int] = {}
        self.label_lines: dict[str, int] = {}
        self.differences: list[tuple[int, int, str, str, int, int]] = []
        self.wide_values: list[int] = []
        self.line_offsets: list[int] = []
        self.line_numbers: list[int] = []
        self.width = 0  # width of the directive whose list continues on the next line
        self.last_width = 0  # width of the last directive, for a list continued with a leading comma
        self.lineno = 0

    def error(self, message: str) -> PtxSyntaxError:
        return PtxSyntaxError(f"{message} in {self.name}", filename=self.filename, line=self.lineno)

    def parse(self, body: str, first_line: int) -> SectionImage:
        data = self.data
        simple = _SIMPLE.fullmatch
        pack = struct.pack
        line_offsets = self.line_offsets
        line_numbers = self.line_numbers
        lineno = first_line - 1
        for line in body.split("\n"):
            lineno += 1
            s = line.strip()
            if not s:
                continue
            self.lineno = lineno
            line_offsets.append(len(data))
            line_numbers.append(lineno)
            if not self.width:
                m = simple(s)
                if m is not None:
                    bits = m.group(1)
                    try:
                        if bits == "8":
                            data += bytes(map(int, m.group(2).split(",")))
                            self.last_width = 1
                            continue
                        else:
                            values = [int(v) for v in m.group(2).split(",")]
                            if bits == "64":
                                start = len(data)
                                self.wide_values.extend(start + 8 * i for i, v in enumerate(values) if v >> 32)
                            data += pack("<%d%s" % (len(values), _PACK[int(bits) // 8]), *values)
                        self.last_width = int(bits) // 8
                        continue
                    except (ValueError, struct.error):
                        pass  # out of range: the general path names the value
            self.parse_line(s)
        self.lineno = lineno
        if self.width:
            raise self.error("list ends with a comma")
        self.resolve_differences()
        return SectionImage(
            self.name,
            bytes(data),
            self.relocs,
            self.labels,
            line_offsets=line_offsets,
            line_numbers=line_numbers,
            wide_values=self.wide_values,
            filename=self.filename,
        )

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
            self.add_value(item, width)
        # A list that ends with a comma continues on the next line.
        self.width = width if trailing else 0

    def add_value(self, item: str, width: int) -> None:
        m = _ITEM.fullmatch(item)
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

    def resolve_differences(self) -> None:
        for offset, width, a, b, addend, line in self.differences:
            for name in (a, b):
                if name not in self.labels:
                    self.lineno = line
                    raise self.error(f"label difference {a}-{b}: {name} is not a label of this section")
            value = self.labels[a] - self.labels[b] + addend
            self.data[offset : offset + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the module -----------------------------------------------------------

_TOP = re.compile(
    r"(?P<section>\.section\b)"
    r"|(?P<version>\.version\b)"
    r"|(?P<target>\.target\b)"
    r"|(?P<address_size>\.address_size\b)"
    r"|(?P<file>\.file\b)"
    r"|(?P<func>\.(?:entry|func)\b)"
    r"|(?P<decl>(?<![\w$.%])\.(?:reg|local|shared|global|const|param|tex|texref|samplerref|surfref)\b)"
    r"|(?P<open>\{)|(?P<close>\})"
    r"|(?P<label>(?<![\w$.%])" + _SYM + r"(?=\s*:(?!:)))"
    r'|(?P<string>"(?:[^"\\\n]|\\.)*")'
)
_SECTION_HEAD = re.compile(r"\.section\s+(" + _SYM + r")\s*")
_VERSION = re.compile(r"\.version\s+(\d+)\.(\d+)")
_TARGET = re.compile(r"\.target\s+([^\n;]*)")
_ADDRESS_SIZE = re.compile(r"\.address_size\s+(\d+)")
_FILE = re.compile(r'\.file\s+(\d+)\s+("(?:[^"\\\n]|\\.)*")(?:\s+("(?:[^"\\\n]|\\.)*"))?(?:\s*,\s*(\d+)\s*,\s*(\d+))?')
_FUNC_NAME = re.compile(r"\.(entry|func)\s*(?:\([^)]*\)\s*)?(" + _SYM + r")")


_DECLARATOR = re.compile(
    r"(?P<name>" + _SYM + r")\s*(?:<\s*(?P<count>\d+)\s*>)?(?P<dims>(?:\s*\[\s*\d*\s*\])*)\s*$"
)
_TYPES = frozenset(_TYPE_SIZES) | {".v2", ".v4", ".v8"}


def parse_declaration(text: str, line: int) -> list[PtxVariable]:
    """The names a declaration statement (``.reg .b32 %r<4>``, ``.param .align 8 .b8 p[24]``,
    ``.global .u32 g = 1``) declares; no ``;``."""
    text = text.split("=", 1)[0].strip()
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
            if w in _TYPES or w in _TYPE_SIZES or re.fullmatch(r"\.[busf]\d+(x2)?|\.pred|\.b128", w):
                if not w.startswith(".v"):
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
        dims = tuple(int(x) if x.strip() else -1 for x in re.findall(r"\[\s*(\d*)\s*\]", dm.group("dims") or ""))
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
            )
        )
    return out


def _unquote(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s[1:-1])


class _ModuleParser:
    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self.masked = mask_comments(text, filename)
        self.module = PtxModule(text, filename)
        self._line_pos = 0
        self._line = 1

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
        while True:
            m = _TOP.search(masked, pos)
            if m is None:
                break
            kind = m.lastgroup
            pos = m.end()
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
            elif kind == "label":
                if function is not None:
                    function.labels.setdefault(m.group("label"), self.line_at(m.start()))
            elif kind == "string":
                continue
            elif kind == "decl":
                end = masked.find(";", m.start())
                if end < 0:
                    raise self.error(f"declaration {m.group('decl')} without ';'", m.start())
                nested = re.search(r"[{}]", masked[m.start() : end].split("=", 1)[0])
                if nested is not None:
                    # not a declaration statement (e.g. the name of a state space in an instruction)
                    continue
                found = parse_declaration(masked[m.start() : end], self.line_at(m.start()))
                if function is not None:
                    function.declarations.extend(found)
                elif depth == 0:
                    module.variables.extend(found)
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
                            module.prototypes.append(pending.name)
                            pending = None
                            pos = -pos
                        else:
                            module.functions.append(pending)
                elif kind == "version":
                    vm = _VERSION.match(masked, m.start())
                    if vm is None:
                        raise self.error("bad .version directive", m.start())
                    module.version = (int(vm.group(1)), int(vm.group(2)))
                    module.version_line = self.line_at(m.start())
                    pos = vm.end()
                elif kind == "target":
                    tm = _TARGET.match(masked, m.start())
                    assert tm is not None
                    module.target = [t.strip() for t in tm.group(1).split(",") if t.strip()]
                    module.target_span = (m.start(), tm.end())
                    module.target_line = self.line_at(m.start())
                    pos = tm.end()
                elif kind == "address_size":
                    am = _ADDRESS_SIZE.match(masked, m.start())
                    if am is None or am.group(1) not in ("32", "64"):
                        raise self.error("bad .address_size directive (32 or 64)", m.start())
                    module.address_size = int(am.group(1))
                    pos = am.end()
                elif kind == "file":
                    self.file_directive(m.start())
            elif kind == "file":
                self.file_directive(m.start())
        if depth != 0:
            raise self.error("unclosed { at the end of the file", len(masked))
        return module

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
        stray = re.search(r"\.section\b", body)
        if stray is not None:
            raise PtxSyntaxError(
                f"section {name} opened here is never closed", filename=self.filename, line=line
            )
        image = _SectionParser(name, self.filename).parse(body, body_line)
        end_line = self.line_at(close)
        self.module.sections.append(SectionBlock(name, start, close + 1, line, end_line, image))
        return close + 1


_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def parse_ptx(text: str, filename: str = "<ptx>") -> PtxModule:
    """Read a PTX module's debug sections and the directives around them.

    Raises :class:`~ptxdwarf.errors.PtxSyntaxError` naming file and line on text
    that is not PTX ptxas would read.
    """
    if not text.strip():
        raise PtxSyntaxError("empty file: no PTX", filename=filename)
    bad = _CONTROL.search(text)
    if bad is not None:
        raise PtxSyntaxError(
            ("NUL byte" if bad.group(0) == "\0" else f"control character 0x{ord(bad.group(0)):02x}")
            + " in the text: this is not PTX",
            filename=filename,
            line=text.count("\n", 0, bad.start()) + 1,
        )
    return _ModuleParser(text, filename).parse()


def iter_debug_sections(module: PtxModule) -> Iterator[SectionBlock]:
    """The blocks of sections whose names start with ``.debug_``."""
    return (b for b in module.sections if b.name.startswith(".debug_"))
