"""``ptxdwarf attach``: source-level debugging of PTX that has no debug info.

The PTX itself becomes the source. :func:`attach_ptx` reads a module without
debug info (hand-written, or from a generator that writes no DWARF) and writes:

- ``.target ..., debug`` and ``.file 1 "OUTPUT"``, naming the output file itself;
- ``.loc 1 N 1`` before the first line of every instruction, N being that line's
  number in the output (the ``.loc`` lines themselves shift the lines; the debug
  sections are appended at the end, so they shift nothing);
- labels ``$L__ptxdwarf_beginK`` / ``$L__ptxdwarf_endK`` at each function's first
  instruction and before its closing brace (the begin label right after the first
  ``.loc``, so ptxas puts it at offset 0, not after a kernel's prologue);
- a compile unit named after the output file, producer ``ptxdwarf attach``, with a
  subprogram per ``.entry``/``.func`` (linkage name = the PTX symbol, name = the
  demangled C++ name when the symbol is Itanium-mangled, type = the return
  parameter's type), formal parameters, a variable per declared register
  (address class 2), ``.local`` (6) and ``.shared`` (8) object of each function,
  and per module ``.global`` (5), ``.const`` (4), ``.shared`` (8), ``.texref``
  (10), ``.samplerref`` (11) and ``.surfref`` (9) variable; base types named after
  the PTX types (``.u32``: 4 bytes unsigned, ``.f32`` float, ``.pred`` boolean),
  arrays for ``x[24]``, pointers (with the state space as address class) for
  ``.ptr`` kernel parameters.

Parameters. A kernel's parameter is its ``.param`` symbol (``DW_OP_addr``, class 7;
ptxas turns it into the constant-bank offset). A device function's parameter has no
address ptxas can keep (it writes 0 for a ``.func`` parameter's ``DW_OP_addr``), so it
is described by the register(s) its ``ld.param`` loads go to (class 2): the register
when one ``ld.param`` loads it (or all loads of it go to the same register at offset
0); ``DW_OP_regx``/``DW_OP_piece`` pieces when loads of disjoint parts go to
different registers (an aggregate loaded field by field), with empty pieces for the
bytes never loaded; and no location at all (a warning names it) when it is never
loaded by ``ld.param`` from its symbol or the loads disagree (two registers for the
same bytes). The location names where the value was loaded; it does not follow
later writes to that register.

Registers. ``DW_OP_regx`` can carry at most 8 characters of a register name
(:data:`ptxdwarf.expr.MAX_REGISTER_NAME`). Longer names are skipped with one warning
that counts them, unless ``rename_registers`` renames every long-named register
(all registers of a ``<N>`` range together, the same long name to the same short
name across functions) to ``%Ra0...`` (ranges) or ``%Sa`` (single registers), names
the module does not use; the map is :attr:`AttachResult.renamed`. Only the names
change: ptxas makes the same code.

ptxas 13.0 does not parse ``DW_OP_piece`` operands; pieces are sized so that it does
not trip over them (see :data:`_BAD_PIECE_SIZES`).

``.target ..., debug`` makes ptxas compile the module as with ``-g`` (unoptimized)
even when ``-g`` is not given; ``debug_target=False`` leaves ``.target`` alone, for
output that compiles without ``-g`` to exactly the input's code.

A module that already has debug info (a ``.debug_*`` section, ``.loc``, ``.file`` or
``.target ..., debug``) is refused unless ``replace``: then those are removed
first (and labels an earlier ``attach`` inserted).
"""

from __future__ import annotations

import bisect
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .api import replace_debug_sections
from .builder import PTX_TYPES, DebugInfoBuilder, Type
from .dwarf.constants import AddressClass
from .demangle import demangle
from .dwarf.encode import encode
from .errors import AttachError
from .dwarf.expr import MAX_REGISTER_NAME, Op, register_number
from .dwarf.image import DEBUG_SECTION_NAMES
from .loc import Location, address, expression, local, param, register
from .ptx.reader import PtxFunction, PtxModule, PtxVariable, mask_comments, parse_ptx
from .ptx.writer import Style

__all__ = ["AttachResult", "attach_ptx", "default_output_name", "main_attach"]

PRODUCER = "ptxdwarf attach"

# --- small helpers ---------------------------------------------------------------------

_IDENT = re.compile(r"(?<![\w$%.])([A-Za-z_$%][\w$]*)")
_LABEL_AT = re.compile(r"(?:[A-Za-z][\w$]*|[_$%][\w$]+)\s*:(?!:)")
_LD_PARAM = re.compile(
    r"ld\.param(?:::\w+)?((?:\.\w+)*)\s+(.*?)\s*,\s*\[\s*([A-Za-z_$%][\w$]*)\s*(?:\+\s*(\d+))?\s*\]\s*",
    re.DOTALL,
)
_WIDTHS = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
_SPACE_CLASS = {
    "global": AddressClass.GLOBAL,
    "const": AddressClass.CONST,
    "shared": AddressClass.SHARED,
    "local": AddressClass.LOCAL,
    "param": AddressClass.PARAM,
    "tex": AddressClass.TEX,
}
_HANDLE_CLASS = {".texref": AddressClass.TEX, ".samplerref": AddressClass.TEX_SAMPLER, ".surfref": AddressClass.SURF}
#: PTX types the builder's table lacks: name -> (byte size, encoding).
_EXTRA_TYPES = {".bf16": (2, "float"), ".tf32": (4, "float"), ".b128": (16, "unsigned")}
#: Packed types: described as an array of their element.
_PACKED_TYPES = {".f16x2": (".f16", 2), ".bf16x2": (".bf16", 2)}


def _fits(name: str) -> bool:
    try:
        return 0 < len(name.encode("ascii")) <= MAX_REGISTER_NAME
    except UnicodeEncodeError:
        return False


def _letters(k: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa ... (no digits, so a base followed by digits is unambiguous)."""
    out = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def _fresh_names(prefix: str, taken: Callable[[str], bool]) -> Iterator[str]:
    """``prefix`` + a, b, ... z, aa, ...: those for which ``taken`` is false, in order."""
    k = 0
    while True:
        new = prefix + _letters(k)
        k += 1
        if not taken(new):
            yield new


def _find_name(text: str, name: str) -> int:
    """Offset of ``name`` as a whole identifier in ``text``, or -1."""
    at = text.find(name)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(name)] if at + len(name) < len(text) else " "
        if not (before.isalnum() or before in "_$%") and not (after.isalnum() or after in "_$"):
            return at
        at = text.find(name, at + 1)
    return -1


def _vector_count(v: PtxVariable) -> int | None:
    m = re.search(r"(?<![\w$])\.v(2|4|8)\b", v.text)
    return int(m.group(1)) if m else None


@dataclass
class AttachResult:
    """What :func:`attach_ptx` made: the new text, the warnings, the register renames."""

    text: str
    warnings: list[str]
    renamed: dict[str, str]
    dies: int = 0
    """DIEs in the compile unit (for reports)."""


@dataclass
class _Stmt:
    start: int
    end: int
    text: str
    kind: str  # "instr" or "directive"


@dataclass
class _Func:
    func: PtxFunction
    index: int
    statements: list[_Stmt] = field(default_factory=list)
    instrs: list[_Stmt] = field(default_factory=list)


class _Lines:
    """Line starts of a text, for offset -> (line index, column)."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        pos = text.find("\n")
        while pos >= 0:
            self.starts.append(pos + 1)
            pos = text.find("\n", pos + 1)

    def at(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.starts, offset) - 1
        return i, offset - self.starts[i]


# --- reading the module ----------------------------------------------------------------


def _scan_body(masked: str, start: int, end: int) -> list[_Stmt]:
    """The statements of a function body: instructions and directives, without labels and braces."""
    out: list[_Stmt] = []
    pos = start
    n = end
    while pos < n:
        c = masked[pos]
        if c.isspace() or c in "{};":
            pos += 1
            continue
        m = _LABEL_AT.match(masked, pos)
        if m is not None and m.end() <= n:
            pos = m.end()
            continue
        if masked.startswith((".loc", ".file", "@@"), pos):
            stop = masked.find("\n", pos, n)
            stop = n if stop < 0 else stop
            out.append(_Stmt(pos, stop, masked[pos:stop], "directive"))
            pos = stop
            continue
        stop = _statement_end(masked, pos, n)
        text = masked[pos:stop]
        out.append(_Stmt(pos, stop + 1, text, "directive" if c == "." else "instr"))
        pos = stop + 1
    return out


def _statement_end(masked: str, pos: int, end: int) -> int:
    """Offset of the ``;`` ending the statement at ``pos`` (strings skipped)."""
    i = pos
    while i < end:
        c = masked[i]
        if c == ";":
            return i
        if c == '"':
            close = masked.find('"', i + 1, end)
            i = end if close < 0 else close + 1
            continue
        i += 1
    return end


def _existing_debug(module: PtxModule, masked: str) -> tuple[str, int] | None:
    """(what, line) of the first piece of debug info in the module, or None."""
    found: list[tuple[int, str]] = []
    for block in module.sections:
        if block.name.startswith(".debug_"):
            found.append((block.line, f"a {block.name} section"))
    if module.has_debug_target:
        found.append((module.target_line, ".target ... debug"))
    for f in module.files:
        found.append((f.line, f".file {f.index}"))
    m = re.search(r"(?<![\w$.])\.loc\b", masked)
    if m is not None:
        found.append((masked.count("\n", 0, m.start()) + 1, ".loc directives"))
    if not found:
        return None
    line, what = min(found)
    return what, line


def _strip_debug(text: str, module: PtxModule, masked: str) -> str:
    """``text`` without debug sections, ``.loc``/``.file`` directives and attach's own labels."""
    cuts: list[tuple[int, int]] = []
    for block in module.sections:
        if block.name.startswith(".debug_"):
            cuts.append((block.start, block.end))
    for m in re.finditer(r"(?<![\w$.])\.(?:loc|file)\b[^\n]*", masked):
        cuts.append((m.start(), m.end()))
    code = masked
    for start, end in cuts:  # the debug sections, which refer to the labels
        code = code[:start] + " " * (end - start) + code[end:]
    for m in re.finditer(r"(?m)^[ \t]*(\$L__ptxdwarf\w*_(?:begin|end)\d+)[ \t]*:[ \t]*$", code):
        if len(re.findall(re.escape(m.group(1)) + r"(?![\w$])", code)) == 1:  # defined, never used
            cuts.append((m.start(1), m.end()))
    # Whole lines go when nothing but the cut text (and blanks, comments) is on them.
    widened = []
    for start, end in cuts:
        line_start = masked.rfind("\n", 0, start) + 1
        line_end = masked.find("\n", end)
        line_end = len(masked) if line_end < 0 else line_end
        if not masked[line_start:start].strip() and not masked[end:line_end].strip():
            start, end = line_start, min(line_end + 1, len(masked))
        widened.append((start, end))
    widened.sort()
    pieces: list[str] = []
    pos = 0
    for start, end in widened:
        if start < pos:
            start = pos
            if end <= pos:
                continue
        pieces.append(text[pos:start])
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _identifiers(masked: str) -> set[str]:
    return {m.group(1) for m in _IDENT.finditer(masked)}


# --- register renaming -----------------------------------------------------------------


def _rename_registers(text: str, module: PtxModule, masked: str) -> tuple[str, dict[str, str], list[str]]:
    """Rename every register whose name (or a range member's) exceeds 8 characters."""
    long_ranges: dict[str, int] = {}  # base -> largest count
    long_scalars: set[str] = set()
    for f in module.functions:
        for v in f.declarations:
            if v.space != "reg":
                continue
            if v.count is not None:
                if v.count and not _fits(f"{v.name}{v.count - 1}"):
                    long_ranges[v.name] = max(long_ranges.get(v.name, 0), v.count)
            elif not _fits(v.name):
                long_scalars.add(v.name)
    if not long_ranges and not long_scalars:
        return text, {}, []
    tokens = _identifiers(masked)
    declared_bases = {v.name for f in module.functions for v in f.declarations if v.space == "reg" and v.count is not None}
    warnings: list[str] = []
    base_map: dict[str, str] = {}
    names = _fresh_names(
        "%R",
        lambda new: new in declared_bases or any(t == new or (t.startswith(new) and t[len(new):].isdigit()) for t in tokens),
    )
    for base in sorted(long_ranges):
        new = next(names)
        if not _fits(f"{new}{long_ranges[base] - 1}"):
            warnings.append(f"register range {base}<{long_ranges[base]}> is too large to rename to names of 8 characters")
            continue
        base_map[base] = new
    scalar_map: dict[str, str] = {}
    bases = declared_bases | set(base_map.values())
    names = _fresh_names("%S", lambda new: new in tokens or any(new.startswith(b) and new[len(b):].isdigit() for b in bases))
    for name in sorted(long_scalars):
        scalar_map[name] = next(names)
    renamed: dict[str, str] = {}
    edits: list[tuple[int, int, str]] = []
    for f in module.functions:
        ranges = {v.name: v.count for v in f.declarations if v.space == "reg" and v.count is not None and v.name in base_map}
        scalars = {v.name for v in f.declarations if v.space == "reg" and v.count is None and v.name in scalar_map}
        if not ranges and not scalars:
            continue
        for m in _IDENT.finditer(masked, f.body_start, f.body_end):
            tok = m.group(1)
            if tok in scalars:
                new = scalar_map[tok]
                renamed[tok] = new
                edits.append((m.start(1), m.end(1), new))
                continue
            if tok in ranges and masked[m.end(1):].lstrip().startswith("<"):
                edits.append((m.start(1), m.end(1), base_map[tok]))
                continue
            for base, count in ranges.items():
                rest = tok[len(base):]
                if tok.startswith(base) and rest.isdigit() and (rest == "0" or rest[0] != "0") and int(rest) < (count or 0):
                    new = base_map[base] + rest
                    renamed[tok] = new
                    edits.append((m.start(1), m.end(1), new))
                    break
    for base, count in ((b, c) for b, c in long_ranges.items() if b in base_map):
        for i in range(count):
            renamed.setdefault(f"{base}{i}", f"{base_map[base]}{i}")
    pieces = []
    pos = 0
    for start, end, new in sorted(edits):
        pieces.append(text[pos:start])
        pieces.append(new)
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces), dict(sorted(renamed.items())), warnings


# --- types ------------------------------------------------------------------------------


class _Types:
    """Base types named after the PTX types, arrays, vectors and pointers, each made once."""

    def __init__(self, dbg: DebugInfoBuilder) -> None:
        self.dbg = dbg
        self.cache: dict[Any, Type] = {}

    def base(self, ptype: str) -> Type:
        key = ("base", ptype)
        t = self.cache.get(key)
        if t is not None:
            return t
        if ptype in PTX_TYPES:
            t = self.dbg.named_type(ptype)
        elif ptype in _EXTRA_TYPES:
            size, enc = _EXTRA_TYPES[ptype]
            t = self.dbg.base_type(ptype, byte_size=size, encoding=enc)
        elif ptype in _PACKED_TYPES:
            element, count = _PACKED_TYPES[ptype]
            t = self.dbg.array_type(self.base(element), count)
        elif ptype in _HANDLE_CLASS:
            t = self.dbg.handle_type(ptype)
        else:
            raise KeyError(ptype)
        self.cache[key] = t
        return t

    def of(self, v: PtxVariable, *, pointer: bool = False) -> Type | None:
        """The type of a declaration, or None when its PTX type is unknown."""
        if v.type is None:
            return None
        try:
            t = self.base(v.type)
        except KeyError:
            return None
        vector = _vector_count(v)
        if vector:
            t = self.array(t, (vector,))
        dims = tuple(d for d in v.dims if d >= 0)
        if dims and len(dims) == len(v.dims):
            t = self.array(t, dims)
        if pointer and re.search(r"(?<![\w$])\.ptr\b", v.text):
            cls = _SPACE_CLASS.get(v.pointer_space or "", AddressClass.GENERIC)
            key = ("ptr", int(cls))
            found = self.cache.get(key)
            if found is None:
                found = self.dbg.pointer_type(self.base(".b8"), address_class=cls)
                self.cache[key] = found
            t = found
        return t

    def array(self, element: Type, dims: tuple[int, ...]) -> Type:
        key = ("array", id(element), dims)
        t = self.cache.get(key)
        if t is None:
            t = self.dbg.array_type(element, list(dims))
            self.cache[key] = t
        return t


# --- parameters of device functions ---------------------------------------------------


@dataclass
class _Load:
    offset: int
    width: int
    register: str | None  # None: a sink ("_")


def _param_loads(instrs: Iterable[_Stmt], names: set[str]) -> dict[str, list[list[_Load]]]:
    """Parameter name -> the loads of each ``ld.param`` instruction that reads it."""
    out: dict[str, list[list[_Load]]] = {}
    for s in instrs:
        text = s.text.strip()
        if not text.startswith("ld.param"):
            continue
        m = _LD_PARAM.fullmatch(text)
        if m is None or m.group(3) not in names:
            continue
        suffixes = [x for x in m.group(1).split(".") if x]
        width = None
        count = 1
        for x in suffixes:
            vm = re.fullmatch(r"v(\d+)", x)
            if vm:
                count = int(vm.group(1))
            tm = re.fullmatch(r"[bsuf](8|16|32|64|128)", x)
            if tm:
                width = _WIDTHS[tm.group(1)]
        if width is None:
            continue
        dest = m.group(2).strip()
        if dest.startswith("{") and dest.endswith("}"):
            regs = [r.strip() for r in dest[1:-1].split(",")]
        else:
            regs = [dest]
        if len(regs) != count:
            continue
        base = int(m.group(4) or 0)
        loads = [_Load(base + i * width, width, None if r == "_" else r) for i, r in enumerate(regs)]
        out.setdefault(m.group(3), []).append(loads)
    return out


#: DW_OP_piece sizes ptxas 13.0 cannot take. Its expression walker does not know the
#: operand of DW_OP_piece and reads it as the next opcode: 0x03 (addr), 0x0c (const4u),
#: 0x10 (constu) and 0x23 (plus_uconst) then want operand bytes, and where the block
#: ends first ptxas dies with "Checked Data was Invalid" (measured: a trailing empty
#: piece of 3, 12, 16 or 35 bytes; a piece of 3 anywhere; a 16-byte register piece).
_BAD_PIECE_SIZES = frozenset({3, 12, 16, 35})
_MAX_PIECE = 64  # one ULEB byte that is no opcode with operands (0x40 = DW_OP_lit16)


def _empty_pieces(size: int) -> list[Op]:
    """``DW_OP_piece`` ops without a location covering ``size`` bytes, in sizes ptxas reads."""
    ops = []
    while size > 0:
        n = min(size, _MAX_PIECE)
        if n in _BAD_PIECE_SIZES:
            n -= 1
        ops.append(Op.make("piece", n))
        size -= n
    return ops


def _device_param_location(size: int | None, loads: list[list[_Load]]) -> tuple[Location | None, str | None]:
    """The location of a device-function parameter from its ``ld.param`` loads, or (None, why)."""
    if not loads:
        return None, "never loaded by ld.param"
    flat = [x for group in loads for x in group]
    whole = [x for x in flat if x.offset == 0 and x.register is not None]
    chosen: str | None
    if len(loads) == 1 and len(flat) == 1 and flat[0].offset == 0 and flat[0].register is not None:
        chosen = flat[0].register
    elif len(whole) == len(flat) and len({x.register for x in whole}) == 1 and len({x.width for x in whole}) == 1:
        chosen = whole[0].register
    else:
        chosen = None
    if chosen is not None:
        if not _fits(chosen):
            return None, f"loaded into {chosen}, whose name is longer than {MAX_REGISTER_NAME} characters"
        return register(chosen), None
    # Pieces: each offset loaded into one register, no overlaps.
    by_offset: dict[int, _Load] = {}
    for x in flat:
        if x.register is None:
            continue
        seen = by_offset.get(x.offset)
        if seen is not None and (seen.register != x.register or seen.width != x.width):
            return None, f"bytes {x.offset}.. are loaded into both {seen.register} and {x.register}"
        by_offset[x.offset] = x
    ops: list[Op] = []
    pos = 0
    described = 0
    for offset in sorted(by_offset):
        x = by_offset[offset]
        if offset < pos:
            return None, f"loads overlap at byte {offset}"
        ops.extend(_empty_pieces(offset - pos))
        if _fits(x.register or "") and x.width not in _BAD_PIECE_SIZES:
            ops.append(Op.make("regx", register_number(x.register or "")))
            ops.append(Op.make("piece", x.width))
            described += 1
        else:
            ops.extend(_empty_pieces(x.width))
        pos = offset + x.width
    if size is not None and pos > size:
        return None, f"loads reach byte {pos} of a {size}-byte parameter"
    if not described:
        return None, "loaded only into registers that cannot be described (long names, 16-byte loads)"
    if size is not None and pos < size:
        ops.extend(_empty_pieces(size - pos))
    return expression(ops, AddressClass.REG), None


# --- the edit plan ---------------------------------------------------------------------


class _Plan:
    """Lines of the output: the input's lines, split where needed, with lines inserted before them."""

    LOC = object()

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = _Lines(text)
        self.raw = text.split("\n")
        self.crlf = "\r\n" in text
        if self.crlf:
            self.raw = [line.removesuffix("\r") for line in self.raw]
        self.splits: dict[int, set[int]] = {}
        self.before: dict[tuple[int, int], list[object]] = {}
        self.replace: dict[int, str] = {}
        self.out_index: dict[tuple[int, int], int] = {}

    def split_at(self, offset: int) -> None:
        line, col = self.lines.at(offset)
        if 0 < col < len(self.raw[line]):
            self.splits.setdefault(line, set()).add(col)

    def segment_of(self, offset: int) -> tuple[int, int]:
        line, col = self.lines.at(offset)
        cols = sorted(self.splits.get(line, ()))
        return line, bisect.bisect_right(cols, col)

    def insert_before(self, offset: int, item: object, *, first: bool = False) -> None:
        key = self.segment_of(offset)
        items = self.before.setdefault(key, [])
        if first:
            items.insert(0, item)
        else:
            items.append(item)

    def build(self) -> tuple[list[str], list[tuple[int, tuple[int, int]]]]:
        out: list[str] = []
        locs: list[tuple[int, tuple[int, int]]] = []
        for i, raw in enumerate(self.raw):
            line = self.replace.get(i, raw)
            cols = sorted(self.splits.get(i, ()))
            bounds = [0, *cols, len(line)]
            for seg in range(len(bounds) - 1):
                piece = line[bounds[seg] : bounds[seg + 1]]
                key = (i, seg)
                for item in self.before.get(key, ()):
                    if item is _Plan.LOC:
                        locs.append((len(out), key))
                        out.append("")
                    else:
                        out.append(str(item))
                self.out_index[key] = len(out)
                if seg > 0:
                    # keep the piece's column: indent it as far as its start
                    piece = "\t" + piece.lstrip() if piece.strip() else piece
                out.append(piece)
        return out, locs

    def out_line(self, offset: int) -> int:
        """1-based line in the output of the input ``offset``."""
        return self.out_index[self.segment_of(offset)] + 1

    def out_line_of_input_line(self, line: int) -> int:
        return self.out_index[(line - 1, 0)] + 1


# --- the main work ---------------------------------------------------------------------


def _check_output_name(output_name: str) -> None:
    if not output_name:
        raise AttachError("the output name for .file is empty")
    if not output_name.isascii() or any(c in output_name for c in '"\n\r\0'):
        raise AttachError(
            f"the output name {output_name!r} cannot be written in .file "
            "(ptxas 13.0 accepts only ASCII without quotes or newlines)"
        )


def attach_ptx(
    text: str,
    *,
    output_name: str,
    filename: str = "<ptx>",
    rename_registers: bool = False,
    replace: bool = False,
    style: str = "readable",
    debug_target: bool = True,
) -> AttachResult:
    """Give PTX ``text`` without debug info a line table pointing at itself and DWARF for
    every function, parameter, register and module variable (see the module docstring).

    ``output_name`` is the file the result will be written to: ``.file 1`` and the
    compile unit name it, so the ``.loc`` line numbers refer to that file. Raises
    :class:`~ptxdwarf.errors.AttachError` (one line, naming what and where) on a
    module it will not change.

    ``debug_target=False`` leaves ``.target`` as it is. ptxas treats ``.target ...,
    debug`` like ``-g`` (no optimization: "Optimized debugging not supported" with
    ``-O3``), so only without it does the module compile, without ``-g``, to exactly
    the code of the input; ``ptxas -g`` still finds the debug info (but ``ptxdwarf
    lint`` reports ``target-not-debug``).
    """
    _check_output_name(output_name)
    try:
        style = Style(style).value
    except ValueError:
        raise AttachError(f"unknown style {style!r} (nvcc, readable or compact)") from None
    warnings: list[str] = []
    module = parse_ptx(text, filename)
    masked = mask_comments(text, filename)
    existing = _existing_debug(module, masked)
    if existing is not None:
        what, line = existing
        if not replace:
            raise AttachError(
                f"the module already has debug info ({what}); use --replace to replace it",
                where=f"{filename}:{line}",
            )
        text = _strip_debug(text, module, masked)
        module = parse_ptx(text, filename)
        masked = mask_comments(text, filename)
    if module.address_size != 64:
        size = module.address_size or "none (32)"
        raise AttachError(
            f".address_size is {size}: ptxas compiles debug info only for .address_size 64",
            where=f"{filename}:{module.target_line or 1}",
        )
    if module.target_span is None:
        raise AttachError("the module has no .target directive", where=filename)
    if module.version is None or module.version < (3, 0):
        version = ".".join(map(str, module.version)) if module.version else "none"
        raise AttachError(
            f".version is {version}: .target ..., debug needs PTX ISA 3.0 or later",
            where=f"{filename}:{module.version_line or 1}",
        )
    if not module.functions:
        raise AttachError("the module defines no function (.entry or .func with a body)", where=filename)

    renamed: dict[str, str] = {}
    if rename_registers:
        text, renamed, more = _rename_registers(text, module, masked)
        warnings.extend(more)
        if renamed:
            module = parse_ptx(text, filename)
            masked = mask_comments(text, filename)

    funcs = [_Func(f, i) for i, f in enumerate(module.functions)]
    for fn in funcs:
        fn.statements = _scan_body(masked, fn.func.body_start, fn.func.body_end)
        fn.instrs = [s for s in fn.statements if s.kind == "instr"]

    # Labels of our own, not clashing with any name in the module.
    tokens = _identifiers(masked)
    prefix = "$L__ptxdwarf_"
    n = 0
    while any(t.startswith(prefix) for t in tokens):
        n += 1
        prefix = f"$L__ptxdwarf{n}_"

    plan = _Plan(text)
    lines = plan.lines
    # Splits: an instruction on the line of a function's opening brace or after a
    # declaration goes to a line of its own, and so does a closing brace after code.
    for fn in funcs:
        f = fn.func
        open_brace = f.body_start - 1
        if fn.instrs and lines.at(fn.instrs[0].start)[0] == lines.at(open_brace)[0]:
            plan.split_at(f.body_start)
        for before, s in zip(fn.statements, fn.statements[1:]):
            if s.kind == "instr" and before.kind == "directive" and lines.at(before.end)[0] == lines.at(s.start)[0]:
                plan.split_at(s.start)
        close_line, close_col = lines.at(f.body_end)
        if plan.raw[close_line][:close_col].strip():
            plan.split_at(f.body_end)
    # .loc before the first line of each instruction (once per line; not inside another statement).
    for fn in funcs:
        f = fn.func
        statements = fn.statements
        earlier_end = -1  # where the statements of earlier segments end, at the latest
        segment, segment_end = None, -1
        seen_segments: set[tuple[int, int]] = set()
        first = True
        for s in statements:
            seg = plan.segment_of(s.start)
            if seg != segment:
                earlier_end = max(earlier_end, segment_end)
                segment, segment_end = seg, -1
            seg_start = lines.starts[seg[0]] + (sorted(plan.splits.get(seg[0], ()))[seg[1] - 1] if seg[1] else 0)
            segment_end = max(segment_end, s.end)
            # not in the middle of a statement that began on an earlier line
            if s.kind != "instr" or earlier_end > seg_start or seg in seen_segments:
                continue
            seen_segments.add(seg)
            plan.insert_before(s.start, _Plan.LOC)
            if first:
                plan.insert_before(s.start, f"{prefix}begin{fn.index}:")
                first = False
        if first:  # no instruction: the begin label goes with the end label
            plan.insert_before(f.body_end, f"{prefix}begin{fn.index}:")
        plan.insert_before(f.body_end, f"{prefix}end{fn.index}:")
    # .target ..., debug
    assert module.target_span is not None  # checked above
    t_start, t_end = module.target_span
    t_line, t_col = lines.at(t_start)
    target_text = text[t_start:t_end].rstrip()
    raw = plan.raw[t_line]
    if debug_target and not module.has_debug_target:
        end_col = t_col + len(target_text)
        plan.replace[t_line] = raw[:end_col] + ", debug" + raw[end_col:]
    # .file 1 after the header
    anchor_line = max(
        (lines.at(m.start())[0] for m in re.finditer(r"(?<![\w$.])\.(?:version|target|address_size)\b", masked)),
        default=0,
    )
    plan.before.setdefault((anchor_line + 1, 0), []).insert(0, f'.file 1 "{output_name}"')
    out_lines, locs = plan.build()
    for index, key in locs:
        out_lines[index] = f"\t.loc\t1 {plan.out_index[key] + 1} 1"
    edited = ("\r\n" if plan.crlf else "\n").join(out_lines)

    dbg, dies, more = _describe(module, funcs, plan, masked, output_name, prefix)
    warnings.extend(more)
    # What ptxdwarf.attach does, less its edits (they are made above; with
    # debug_target=False it would add ", debug" to .target).
    edited_module = parse_ptx(edited, output_name)
    _check_symbols(edited_module, dbg, filename)
    images = encode(dbg.finish(), dbg.encode_options()).images
    ordered = {name: images[name] for name in DEBUG_SECTION_NAMES if name in images}
    ordered.update({k: v for k, v in images.items() if k not in ordered})
    result = replace_debug_sections(edited_module, ordered, style)
    return AttachResult(result, warnings, renamed, dies)


def _check_symbols(module: PtxModule, dbg: DebugInfoBuilder, filename: str) -> None:
    """What :func:`ptxdwarf.attach.check_symbols` checks, in linear time (that one asks
    :meth:`PtxModule.declares` per symbol, which walks every declaration of the module)."""
    names = {f.name for f in module.functions} | set(module.prototypes) | {v.name for v in module.variables}
    for f in module.functions:
        names.update(v.name for v in (*f.params, *f.returns, *f.declarations) if v.count is None)
    by_name = {f.name: f for f in module.functions}
    for sub in dbg.functions:
        found = by_name.get(sub.linkage_name)
        if found is None or sub.low_pc not in found.labels or sub.high_pc not in found.labels:
            raise AttachError(f"internal error: function {sub.linkage_name} or its labels are missing", where=filename)
    missing = sorted(dbg.symbols_used - names)
    if missing:
        raise AttachError(f"internal error: symbol {missing[0]} is not declared in the module", where=filename)


def _describe(
    module: PtxModule,
    funcs: list[_Func],
    plan: _Plan,
    masked: str,
    output_name: str,
    prefix: str,
) -> tuple[DebugInfoBuilder, int, list[str]]:
    warnings: list[str] = []
    mangled = any(f.name.startswith("_Z") for f in module.functions)
    dbg = DebugInfoBuilder(
        output_name,
        producer=PRODUCER,
        language="c++" if mangled else "c",
        file=output_name,
    )
    types = _Types(dbg)
    skipped_long: list[str] = []
    untyped: list[str] = []

    def linkage_words(offset: int) -> str:
        start = max(masked.rfind(c, 0, offset) for c in (";", "}", "\n")) + 1
        return masked[start:offset]

    # Module variables.
    for v in module.variables:
        cls = _HANDLE_CLASS.get(v.type or "") or _SPACE_CLASS.get(v.space)
        if cls is None or cls in (AddressClass.LOCAL, AddressClass.PARAM):
            warnings.append(f"module variable {v.name} (.{v.space}) is not described: no address class fits it")
            continue
        t = types.of(v)
        if t is None:
            untyped.append(v.name)
            continue
        line_text = plan.raw[v.line - 1] if 0 < v.line <= len(plan.raw) else ""
        external = bool(re.search(r"\.(?:visible|extern|weak|common)\b", line_text))
        dbg.global_variable(
            v.name, t, location=address(v.name, cls), line=plan.out_line_of_input_line(v.line), external=external
        )

    for fn in funcs:
        f = fn.func
        header = masked[f.header_start : f.body_start]
        words = linkage_words(f.header_start)
        external = bool(re.search(r"\.(?:visible|extern|weak|common)\b", words))
        ret_type = None
        if len(f.returns) == 1:
            ret_type = types.of(f.returns[0])
        name = demangle(f.name) or f.name
        sub = dbg.function(
            name,
            linkage_name=f.name,
            line=plan.out_line(f.header_start),
            type=ret_type,
            kernel=f.is_kernel,
            external=external,
            low_pc=f"{prefix}begin{fn.index}",
            high_pc=f"{prefix}end{fn.index}",
        )
        # Parameters.
        loads = {} if f.is_kernel else _param_loads(fn.instrs, {p.name for p in f.params})
        no_location: list[str] = []
        for p in f.params:
            t = types.of(p, pointer=f.is_kernel)
            if t is None:
                untyped.append(p.name)
                continue
            at = _find_name(header, p.name)
            line = plan.out_line(f.header_start + (max(at, 0)))
            if f.is_kernel:
                sub.parameter(p.name, t, line=line, location=param(p.name))
                continue
            where, why = _device_param_location(p.byte_size, loads.get(p.name, []))
            if where is None:
                no_location.append(f"{p.name} ({why})")
            sub.parameter(p.name, t, line=line, location=where)
        if no_location:
            warnings.append(
                f"{f.name}: {len(no_location)} parameter(s) described without a location: " + "; ".join(no_location)
            )
        # .local / .shared objects of the function.
        seen: set[str] = set()
        for v in f.declarations:
            if v.space not in ("local", "shared", "global", "const") or v.name in seen:
                continue
            seen.add(v.name)
            t = types.of(v)
            if t is None:
                untyped.append(v.name)
                continue
            line = plan.out_line_of_input_line(v.line)
            if v.space == "local":
                where = local(v.name, 0)
            else:
                where = address(v.name, _SPACE_CLASS[v.space])
            sub.variable(v.name, t, line=line, location=where)
        # Registers.
        for v in f.declarations:
            if v.space != "reg":
                continue
            t = types.of(v)
            if t is None:
                untyped.append(v.name)
                continue
            line = plan.out_line_of_input_line(v.line)
            for reg in v.names():
                if reg in seen:
                    continue
                seen.add(reg)
                if not _fits(reg):
                    skipped_long.append(reg)
                    continue
                sub.variable(reg, t, line=line, location=register(reg))
    if skipped_long:
        names = list(dict.fromkeys(skipped_long))
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        warnings.append(
            f"{len(skipped_long)} register(s) not described: names longer than {MAX_REGISTER_NAME} "
            f"characters cannot be named by DW_OP_regx ({shown}); --rename-registers renames them"
        )
    if untyped:
        shown = ", ".join(untyped[:3]) + (", ..." if len(untyped) > 3 else "")
        warnings.append(f"{len(untyped)} declaration(s) of a type ptxdwarf cannot describe were skipped ({shown})")
    dies = sum(1 for _ in dbg.iter_dies())
    return dbg, dies, warnings


# --- command line ------------------------------------------------------------------------


def default_output_name(input_path: str) -> str:
    """``kernel.ptx`` -> ``kernel.debug.ptx`` (what ``.file`` names when writing to standard output)."""
    root, ext = os.path.splitext(input_path)
    return root + ".debug.ptx" if ext == ".ptx" else input_path + ".debug.ptx"


def main_attach(args: Any) -> int:
    """``ptxdwarf attach IN.ptx [-o OUT.ptx] [--rename-registers] [--replace] [--style S]``.

    ``args`` has ``path`` (or ``file``), ``output``, ``rename_registers``, ``replace``,
    ``style`` and optionally ``debug_target`` (default True; ``--no-debug-target``).
    Warnings go to standard error as ``ptxdwarf: warning: ...``; the result to
    ``output`` or standard output. ``.file`` names the absolute path of
    ``output``, or of ``IN.debug.ptx`` beside the input when writing to standard
    output (redirect there so that a debugger finds the text its line table names).
    Errors raise (the caller prints them and exits with 2).
    """
    from .api import load_text

    path = str(getattr(args, "path", None) or args.file)
    output: str | None = getattr(args, "output", None)
    to_stdout = output is None or output == "-"
    output_name = os.path.abspath(default_output_name(path) if output is None or to_stdout else output)
    text = load_text(path)
    result = attach_ptx(
        text,
        output_name=output_name,
        filename=path,
        rename_registers=bool(getattr(args, "rename_registers", False)),
        replace=bool(getattr(args, "replace", False)),
        style=getattr(args, "style", None) or "readable",
        debug_target=getattr(args, "debug_target", True),
    )
    for w in result.warnings:
        print(f"ptxdwarf: warning: {w}", file=sys.stderr)
    if output is None or to_stdout:
        sys.stdout.write(result.text)
    else:
        with open(output, "w", encoding="ascii", errors="surrogateescape", newline="") as fh:
            fh.write(result.text)
    return 0
