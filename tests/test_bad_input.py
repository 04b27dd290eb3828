"""Bad input is refused cleanly; extreme but valid input is read.

Acceptance point: truncated sections, unknown forms or abbreviation codes, unit
lengths that overrun, unterminated strings, unclosed sections, garbage directives,
values that do not fit their directive, random bytes, an empty file ... give ONE
line ``ptxdwarf: error: ...`` on stderr naming the place (``file.ptx:NN`` or
``.debug_xxx+0xNN``), exit code 2, no traceback, no hang, bounded memory; and valid
but extreme input (100k-deep DIE nesting, a million DIEs) is read without hitting
Python's recursion limit.

Every expected place (line number, section offset) is computed here from how the
input was built, with a small reader of PTX debug sections of our own
(:func:`oracle_sections`), never from ptxdwarf.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import io
import os
import random
import re
import signal
import struct
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import CubinPath
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxdwarf
import ptxdwarf.cuda
from ptxdwarf import CubinError, DebugInfo, DwarfError, PtxDwarfError, PtxSyntaxError
from ptxdwarf.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
EXAMPLE = (FIXTURES / "spec" / "example.ptx").read_text()
NVCC_CALL = (FIXTURES / "nvcc" / "call_example.sm_75.ptx").read_text()
NUMBA_LOC = (FIXTURES / "numba" / "kernel_arrays+scalar_mix.sm_75.ptx").read_text()

MB = 1 << 20
HUGE = 0x0C800000  # 200 MB, claimed by a length field of a tiny section


# =============================================================================
# Guard: no hang
# =============================================================================


class Hang(BaseException):
    """Raised by :func:`time_limit`; a BaseException so no ``except Exception`` swallows it."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail (raise :class:`Hang`) if the block runs longer than ``seconds``."""

    def on_alarm(_signum: int, _frame: object) -> None:
        raise Hang(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# =============================================================================
# An independent reader of PTX debug sections (the oracle for offsets and lines)
# =============================================================================

_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def _blank_comments(text: str) -> str:
    def blank(m: re.Match[str]) -> str:
        s = m.group(0)
        return s if s.startswith('"') else re.sub(r"[^\n]", " ", s)

    return _COMMENT_OR_STRING.sub(blank, text)


@dataclass
class Item:
    """One value of a ``.bN`` list: its PTX line, byte offset, width, number or symbol."""

    line: int
    offset: int
    width: int
    value: int | str

    def to_bytes(self) -> bytes:
        if isinstance(self.value, str):
            return bytes(self.width)  # a symbol: zeros in the image
        return (self.value & ((1 << (8 * self.width)) - 1)).to_bytes(self.width, "little")


@dataclass
class OSection:
    name: str
    open_line: int
    close_line: int
    items: list[Item]

    @functools.cached_property
    def data(self) -> bytes:
        return b"".join(i.to_bytes() for i in self.items)

    @functools.cached_property
    def size(self) -> int:
        return sum(i.width for i in self.items)

    def lines_of(self, offset: int) -> set[int]:
        """The PTX line(s) a message about byte ``offset`` should name."""
        if offset >= self.size:  # just past the end: the last value or the closing brace
            return {self.items[-1].line if self.items else self.open_line, self.close_line}
        index = bisect.bisect_right(self.items, offset, key=lambda i: i.offset) - 1
        return {self.items[index].line}

    def tokens(self) -> list[int | tuple[str, int]]:
        """Bytes as ints, symbols as (name, width): the material of the fuzzers."""
        out: list[int | tuple[str, int]] = []
        for i in self.items:
            if isinstance(i.value, str):
                out.append((i.value, i.width))
            else:
                out.extend(i.to_bytes())
        return out


_SECTION_OPEN = re.compile(r"\.section\s+(\S+?)\s*\{")
_DIRECTIVE = re.compile(r"\.b(8|16|32|64)\s+(.*)")
_LABEL_DEF = re.compile(r"([$%\w.]+)\s*:\s*")


@functools.lru_cache(maxsize=16)
def oracle_sections(text: str) -> dict[str, OSection]:
    """Every ``.section`` of ``text``: items with their lines and offsets (cached: do not mutate)."""
    clean = _blank_comments(text)
    out: dict[str, OSection] = {}
    for m in _SECTION_OPEN.finditer(clean):
        name = m.group(1)
        close = clean.index("}", m.end())
        first_line = clean.count("\n", 0, m.end()) + 1
        items: list[Item] = []
        offset = 0
        for k, line in enumerate(clean[m.end() : close].split("\n")):
            for stmt in line.split(";"):
                stmt = stmt.strip()
                while (lm := _LABEL_DEF.match(stmt)) is not None and not stmt.startswith(".b"):
                    stmt = stmt[lm.end() :]
                if not stmt:
                    continue
                dm = _DIRECTIVE.fullmatch(stmt)
                assert dm is not None, f"oracle cannot read {stmt!r}"
                width = int(dm.group(1)) // 8
                for tok in dm.group(2).split(","):
                    tok = tok.strip()
                    try:
                        value: int | str = int(tok, 0)
                    except ValueError:
                        value = tok
                    items.append(Item(first_line + k, offset, width, value))
                    offset += width
        out[name] = OSection(
            name,
            clean.count("\n", 0, m.start()) + 1,
            clean.count("\n", 0, close) + 1,
            items,
        )
    return out


# --- text edits ----------------------------------------------------------------


def line_no(text: str, content: str, after: int = 0) -> int:
    """Number of the first line after line ``after`` whose stripped text is ``content``."""
    for n, line in enumerate(text.split("\n"), 1):
        if n > after and line.strip() == content:
            return n
    raise AssertionError(f"no line {content!r}")


def replace_line(text: str, n: int, new: str) -> str:
    lines = text.split("\n")
    lines[n - 1] = new
    return "\n".join(lines)


def _render(items: list[Item]) -> str:
    widths = {i.width for i in items}
    if len(widths) == 1:
        return f".b{8 * widths.pop()} " + ", ".join(str(i.value) for i in items)
    return ".b8 " + ", ".join(str(b) for i in items for b in i.to_bytes())


def set_value(text: str, section: str, offset: int, value: int | str) -> str:
    """``text`` with the value that starts at ``offset`` of ``section`` replaced (same width)."""
    sec = oracle_sections(text)[section]
    (target,) = [i for i in sec.items if i.offset == offset]
    same_line = [
        Item(i.line, i.offset, i.width, value if i is target else i.value)
        for i in sec.items
        if i.line == target.line
    ]
    return replace_line(text, target.line, _render(same_line))


def truncate(text: str, section: str, n: int) -> str:
    """``text`` with the last ``n`` bytes of ``section`` removed (line numbers kept)."""
    sec = oracle_sections(text)[section]
    keep = sec.size - n
    assert keep >= 0
    by_line: dict[int, list[Item]] = {}
    for i in sec.items:
        by_line.setdefault(i.line, []).append(i)
    for line, items in by_line.items():
        start, end = items[0].offset, items[-1].offset + items[-1].width
        if end <= keep:
            continue
        if start >= keep:
            text = replace_line(text, line, "")
            continue
        whole = [i for i in items if i.offset + i.width <= keep]
        if whole and whole[-1].offset + whole[-1].width == keep:
            text = replace_line(text, line, _render(whole))
        else:  # a value is cut in the middle: write the line as bytes
            raw = b"".join(i.to_bytes() for i in items)[: keep - start]
            text = replace_line(text, line, ".b8 " + ", ".join(map(str, raw)))
    return text


def blank_section(text: str, section: str) -> str:
    """``text`` with a whole section removed (its lines left empty)."""
    sec = oracle_sections(text)[section]
    for n in range(sec.open_line, sec.close_line + 1):
        text = replace_line(text, n, "")
    return text


# --- building PTX by hand ------------------------------------------------------

PREAMBLE = ".version 7.5\n.target sm_75, debug\n.address_size 64\n\n"


def uleb(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


# DWARF numbers used by the hand-made inputs
TAG_compile_unit, TAG_lexical_block, TAG_base_type = 0x11, 0x0B, 0x24
AT_location, AT_name, AT_byte_size = 0x02, 0x03, 0x0B
FORM_block4, FORM_string, FORM_block, FORM_block1, FORM_data1 = 0x04, 0x08, 0x09, 0x0A, 0x0B
FORM_strp, FORM_udata, FORM_indirect = 0x0E, 0x0F, 0x16


def decl(code: int, tag: int, children: bool, *specs: tuple[int, int]) -> bytes:
    return (
        uleb(code)
        + uleb(tag)
        + bytes([int(children)])
        + b"".join(uleb(a) + uleb(f) for a, f in specs)
        + b"\0\0"
    )


def abbrev_table(*decls: bytes) -> bytes:
    return b"".join(decls) + b"\0"


class Section:
    """A debug section written row by row (each row one PTX line)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rows: list[tuple[str, int]] = []

    @property
    def size(self) -> int:
        return sum(n for _, n in self.rows)

    def b8(self, data: bytes | Sequence[int], per_line: int = 16) -> Section:
        data = bytes(data)
        for k in range(0, len(data), per_line):
            chunk = data[k : k + per_line]
            self.rows.append((".b8 " + ", ".join(map(str, chunk)), len(chunk)))
        return self

    def b16(self, v: int | str) -> Section:
        self.rows.append((f".b16 {v}", 2))
        return self

    def b32(self, v: int | str) -> Section:
        self.rows.append((f".b32 {v}", 4))
        return self

    def b64(self, v: int | str) -> Section:
        self.rows.append((f".b64 {v}", 8))
        return self

    def unit(self, body: bytes, *, length: int | None = None, version: int = 2, address_size: int = 8) -> int:
        """A .debug_info unit header and ``body``; returns the unit's offset."""
        start = self.size
        self.b32(7 + len(body) if length is None else length)
        self.b8([version & 0xFF, version >> 8]).b32(".debug_abbrev").b8([address_size])
        self.b8(body)
        return start

    def tokens(self, tokens: Sequence[int | tuple[str, int]]) -> Section:
        """Bytes and (symbol, width) pairs, as the fuzzers make them."""
        run: list[int] = []
        for t in tokens:
            if isinstance(t, tuple):
                self.b8(run)
                run = []
                self.rows.append((f".b{8 * t[1]} {t[0]}", t[1]))
            else:
                run.append(t)
        return self.b8(run)

    def text(self) -> str:
        return f".section {self.name} {{\n" + "".join(r + "\n" for r, _ in self.rows) + "}\n"


def ptx(*sections: Section, preamble: str = PREAMBLE) -> str:
    return preamble + "".join(s.text() for s in sections)


# A compile unit whose DW_AT_name is a DW_FORM_string; a base type with a data1 size.
CU_STRING = abbrev_table(decl(1, TAG_compile_unit, False, (AT_name, FORM_string)))


def one_decl(*specs: tuple[int, int]) -> Section:
    return Section(".debug_abbrev").b8(abbrev_table(decl(1, TAG_compile_unit, False, *specs)))


# =============================================================================
# The table of bad inputs
# =============================================================================


@dataclass
class Case:
    """A bad input and where its error must point.

    kind ``syntax``: a PtxSyntaxError naming ``file:line`` with line in ``lines``;
    ``dwarf``: a DwarfError naming ``section+0xoffset`` in ``places`` and the PTX
    ``file:line`` that holds that byte; ``file``: any PtxDwarfError naming the file
    (and, if it names a line, one in ``lines``); ``cubin``: a CubinError naming the file.
    ``bounded``: a length field claims far more than there is; also check time and memory.
    """

    id: str
    data: str | bytes
    kind: str
    lines: frozenset[int] = frozenset()
    places: frozenset[tuple[str, int]] = frozenset()
    bounded: bool = False
    says: str | None = None
    """A regex (case-insensitive) the message must match: it states the right problem."""

    @property
    def text(self) -> str:
        if isinstance(self.data, bytes):
            return self.data.decode("utf-8", "surrogateescape")
        return self.data

    @property
    def raw(self) -> bytes:
        if isinstance(self.data, bytes):
            return self.data
        return self.data.encode("utf-8", "surrogateescape")

    def write(self, directory: Path) -> Path:
        path = directory / ("bad.cubin" if self.kind == "cubin" else "bad.ptx")
        path.write_bytes(self.raw)
        return path


def syntax(id: str, text: str, *lines: int, says: str | None = None) -> Case:
    return Case(id, text, "syntax", lines=frozenset(lines), says=says)


def dwarf(
    id: str, text: str, *places: tuple[str, int], bounded: bool = False, says: str | None = None
) -> Case:
    return Case(id, text, "dwarf", places=frozenset(places), bounded=bounded, says=says)


INFO, ABBREV, PUB, STR, LOC, ARANGES = (
    ".debug_info",
    ".debug_abbrev",
    ".debug_pubnames",
    ".debug_str",
    ".debug_loc",
    ".debug_aranges",
)

EX = oracle_sections(EXAMPLE)
EX_INFO_OPEN = EX[INFO].open_line
EX_LEN_LINE = EX[INFO].lines_of(0).pop()  # .b32 262
EX_VERSION_LINE = EX[INFO].lines_of(4).pop()  # .b8 2, 0
EX_LAST_INFO_LINE = EX[INFO].items[-1].line  # .b8 12, 0
EX_PUB_LEN_LINE = EX[PUB].lines_of(0).pop()  # .b32 41
EX_PUB_LAST_LINE = EX[PUB].items[-1].line  # .b32 0
EX_V75 = replace_line(EXAMPLE, line_no(EXAMPLE, ".version 4.2"), ".version 7.5")  # labels need >= 7.0/7.5


def _abbrev_walk(data: bytes) -> list[dict[str, Any]]:
    """Declarations of an abbreviation table: start, code, children-flag offset, (attr, form, form offset)."""

    def rd(pos: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            b = data[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value, pos

    out: list[dict[str, Any]] = []
    pos = 0
    while True:
        start = pos
        code, pos = rd(pos)
        if code == 0:
            return out
        _tag, pos = rd(pos)
        d: dict[str, Any] = {"start": start, "code": code, "children_at": pos, "specs": []}
        pos += 1
        while True:
            attr, pos = rd(pos)
            form_at = pos
            form, pos = rd(pos)
            if attr == 0 and form == 0:
                break
            d["specs"].append((attr, form, form_at))
        out.append(d)


EX_DECLS = _abbrev_walk(EX[ABBREV].data)
EX_DECL4 = next(d for d in EX_DECLS if d["code"] == 4)  # DW_TAG_base_type, used by the DIE at 0xa4
EX_DECL4_ENCODING_FORM = next(f_at for a, _f, f_at in EX_DECL4["specs"] if a == 0x3E)
EX_LAST_DECL = EX_DECLS[-1]["start"]
EX_PUB_RECORDS = [0, 14, 27, 41]  # header, "_Z3fooii", "_Z4testPi", terminating 0
EX_BASE_TYPE_DIE = 0xA4


def _loc_lists(sec: OSection) -> tuple[list[int], list[int]]:
    """Starts of the location lists and of their entries (64-bit addresses)."""
    toks = sec.tokens()
    sizes = [t[1] if isinstance(t, tuple) else 1 for t in toks]
    offs = [sum(sizes[:k]) for k in range(len(toks))]
    at = {o: t for o, t in zip(offs, toks, strict=False)}

    def zero(o: int, n: int) -> bool:
        if isinstance(at.get(o), tuple):
            return False
        return all(not isinstance(at.get(o + k), tuple) and at.get(o + k, 0) == 0 for k in range(n))

    lists, entries, pos, fresh = [], [], 0, True
    while pos < sec.size:
        if fresh:
            lists.append(pos)
        entries.append(pos)
        if zero(pos, 16):
            pos, fresh = pos + 16, True
            continue
        length = cast(int, at[pos + 16]) | (cast(int, at[pos + 17]) << 8)
        pos, fresh = pos + 18 + length, False
    return lists, entries


FIT = r"fit|range|too (large|big)"
UNCLOSED = r"clos|unterminated|missing \}"


def _syntax_cases() -> list[Case]:
    v = EX_VERSION_LINE
    on_version_line = [
        # garbage directives
        ("directive-b7", ".b7 2, 0", None),
        ("directive-unknown", ".foo 2, 0", None),
        ("directive-2byte", ".2byte 2, 0", None),
        ("word-value", ".b8 abc, 0", None),
        ("no-values", ".b8", None),
        ("missing-comma", ".b8 2 0", None),
        ("bad-hex", ".b8 0x, 0", None),
        ("float-value", ".b8 2.5, 0", None),
        ("plain-words", "hello world", None),
        ("empty-item", ".b8 2,,0", r"empty|missing"),
        ("leading-comma", ".b8 ,2, 0", r"empty|missing"),
        # values that do not fit their directive
        ("b8-256", ".b8 256, 0", FIT),
        ("b8-minus-129", ".b8 -129, 0", FIT),
        ("b8-0x100", ".b8 0x100, 0", FIT),
        ("b16-65536", ".b16 65536", FIT),
        ("b16-minus-32769", ".b16 -32769", FIT),
        ("b32-2^32", ".b32 4294967296", FIT),
        ("b64-2^64", ".b64 18446744073709551616", FIT),
        ("b8-5000-digits", ".b8 2, " + "9" * 5000, FIT),
        # a label where a byte is
        ("label-on-b8", ".b8 foo, 0", r"label|symbol"),
        ("label-on-b16", ".b16 foo", r"label|symbol"),
        # NUL byte and unterminated comment inside a section
        ("nul-in-section", ".b8 2,\0 0", r"NUL"),
        ("unterminated-comment-in-section", ".b8 2, 0 /* no end", r"comment"),
    ]
    cases = [syntax(name, replace_line(EXAMPLE, v, new), v, says=says) for name, new, says in on_version_line]
    # a list ending with a comma: before the next directive, and at the end of the section
    cases.append(
        syntax("trailing-comma-mid-section", replace_line(EXAMPLE, v, ".b8 2, 0,"), v, v + 1, says="comma")
    )
    cases.append(
        syntax(
            "trailing-comma-end-of-section",
            replace_line(EXAMPLE, EX_LAST_INFO_LINE, ".b8 12, 0,"),
            EX_LAST_INFO_LINE,
            EX[INFO].close_line,
            says="comma",
        )
    )
    # labels (PTX ISA 7.5 so that they are allowed at all)
    diff = replace_line(EX_V75, EX_PUB_LEN_LINE, ".b32 $L__pub_end-$L__pub_start")
    cases.append(
        syntax("label-difference-both-undefined", diff, EX_PUB_LEN_LINE, says=r"\$L__pub_(end|start)")
    )
    cases.append(
        syntax(
            "label-difference-one-undefined",
            replace_line(diff, EX_PUB_LAST_LINE, "$L__pub_start: .b32 0"),
            EX_PUB_LEN_LINE,
            says=r"\$L__pub_end",
        )
    )
    twice = replace_line(EX_V75, v, "$L__x: .b8 2, 0")
    twice = replace_line(twice, v + 1, "$L__x: .b32 .debug_abbrev")
    cases.append(syntax("label-defined-twice", twice, v + 1, says=r"\$L__x.*(twice|already|duplicate)"))
    # unclosed sections, stray braces, comments, NUL bytes in code
    cases.append(
        syntax(
            "unclosed-debug_info",
            replace_line(EXAMPLE, EX[INFO].close_line, ""),
            EX_INFO_OPEN,
            EX[ABBREV].open_line,
            says=UNCLOSED,
        )
    )
    no_end = replace_line(EXAMPLE, EX[PUB].close_line, "")
    n_lines = no_end.count("\n") + 1
    cases.append(
        syntax("unclosed-last-section", no_end, EX[PUB].open_line, n_lines - 1, n_lines, says=UNCLOSED)
    )
    cases.append(
        syntax(
            "section-without-brace",
            replace_line(EXAMPLE, EX_INFO_OPEN, ".section .debug_info"),
            EX_INFO_OPEN,
            EX_INFO_OPEN + 1,
        )
    )
    stray = EX_INFO_OPEN - 1
    assert EXAMPLE.split("\n")[stray - 1] == ""
    cases.append(syntax("close-brace-without-section", replace_line(EXAMPLE, stray, "}"), stray, says=r"\}"))
    cases.append(syntax("close-brace-at-end", EXAMPLE + "}\n", EXAMPLE.count("\n") + 1, says=r"\}"))
    reg = line_no(EXAMPLE, ".reg .s32 %r<4>;")
    cases.append(
        syntax(
            "unterminated-comment-in-code",
            replace_line(EXAMPLE, reg, ".reg .s32 %r<4>; /* x"),
            reg,
            says="comment",
        )
    )
    ld = line_no(EXAMPLE, "ld.param.u32 %r1, [_Z3fooii_param_0]; // load 1st param")
    cases.append(
        syntax(
            "nul-in-code",
            replace_line(EXAMPLE, ld, "ld.param.u32 %r1,\0 [_Z3fooii_param_0];"),
            ld,
            says="NUL",
        )
    )
    return cases


def _file_cases() -> list[Case]:
    rng = random.Random(20240601)
    noise = bytes(rng.randrange(256) for _ in range(4096))
    noise = b"\x00" + noise[1:] if noise[:4] == b"\x7fELF" else noise
    first_nul = noise.count(b"\n", 0, noise.index(b"\0")) + 1
    no_nul = noise.replace(b"\0", b"\x01")
    ctrl = re.search(rb"[\x00-\x08\x0e-\x1f\x7f]", no_nul)
    assert ctrl is not None
    first_ctrl = no_nul.count(b"\n", 0, ctrl.start()) + 1
    return [
        Case("empty-file", b"", "file", lines=frozenset({1})),
        Case("whitespace-only", b" \n\t\n   \n\n", "file", lines=frozenset(range(1, 6))),
        Case("random-bytes", noise, "file", lines=frozenset(range(1, first_nul + 1))),
        Case("random-bytes-without-nul", no_nul, "file", lines=frozenset(range(1, first_ctrl + 1))),
        Case("elf-magic-only", b"\x7fELF", "cubin"),
        Case("elf-ident-only", b"\x7fELF\x02\x01\x01" + bytes(9), "cubin"),
        Case("elf-magic-then-garbage", b"\x7fELF" + noise[:2000], "cubin"),
    ]


def _example_dwarf_cases() -> list[Case]:
    cases = []
    # .debug_info cut short: the unit length then overruns the section
    for n in (1, 2, 9, 100, 255):
        cases.append(dwarf(f"debug_info-cut-{n}", truncate(EXAMPLE, INFO, n), (INFO, 0)))
    cases.append(dwarf("debug_info-header-cut", truncate(EXAMPLE, INFO, 260), (INFO, 0)))
    # bytes after the last unit, too few for a header
    extra = replace_line(EXAMPLE, EX_LAST_INFO_LINE, ".b8 12, 0, 7, 0, 0")
    cases.append(dwarf("debug_info-trailing-bytes", extra, (INFO, 266)))
    cases.append(dwarf("unit-length-200MB", set_value(EXAMPLE, INFO, 0, HUGE), (INFO, 0), bounded=True))
    cases.append(
        dwarf("unit-length-max-32bit", set_value(EXAMPLE, INFO, 0, 0xFFFFFFEF), (INFO, 0), bounded=True)
    )
    cases.append(dwarf("unit-length-64bit-dwarf", set_value(EXAMPLE, INFO, 0, 0xFFFFFFFF), (INFO, 0)))
    cases.append(dwarf("unit-length-reserved", set_value(EXAMPLE, INFO, 0, 0xFFFFFFF0), (INFO, 0)))
    # the unit is shorter than its DIEs: the compile unit runs past the unit's end (0x18)
    cases.append(
        dwarf("unit-length-too-small", set_value(EXAMPLE, INFO, 0, 20), (INFO, 0), (INFO, 0xB), (INFO, 0x1C))
    )
    for version in (0, 1, 5, 0xFFFF):
        text = set_value(EXAMPLE, INFO, 4, version & 0xFF)
        text = set_value(text, INFO, 5, version >> 8)
        cases.append(dwarf(f"unit-version-{version}", text, (INFO, 0), (INFO, 4)))
    for size in (0, 2, 3, 255):
        cases.append(dwarf(f"address-size-{size}", set_value(EXAMPLE, INFO, 10, size), (INFO, 0), (INFO, 10)))
    for code in (9, 0x7F):
        cases.append(
            dwarf(
                f"abbrev-code-{code}-not-in-table",
                set_value(EXAMPLE, INFO, EX_BASE_TYPE_DIE, code),
                (INFO, EX_BASE_TYPE_DIE),
            )
        )
    cases.append(dwarf("root-abbrev-code-not-in-table", set_value(EXAMPLE, INFO, 0xB, 9), (INFO, 0xB)))
    cases.append(
        dwarf("abbrev-offset-mid-table", set_value(EXAMPLE, INFO, 6, ".debug_abbrev+5"), (INFO, 0), (INFO, 6))
    )
    cases.append(dwarf("abbrev-offset-past-section", set_value(EXAMPLE, INFO, 6, 1000), (INFO, 0), (INFO, 6)))
    cases.append(dwarf("debug_abbrev-missing", blank_section(EXAMPLE, ABBREV), (INFO, 0), (INFO, 6)))
    # abbreviation tables
    for n in (1, 2, 40):
        cut = truncate(EXAMPLE, ABBREV, n)
        new_len = EX[ABBREV].size - n
        starts = [d["start"] for d in EX_DECLS if d["start"] < new_len]
        cases.append(
            dwarf(f"debug_abbrev-cut-{n}", cut, (ABBREV, 0), (ABBREV, starts[-1]), (ABBREV, new_len))
        )
    for form in (0x7F, 0x1A, 0x1F21):
        if form < 0x80:
            text = set_value(EXAMPLE, ABBREV, EX_DECL4_ENCODING_FORM, form)
        else:  # a two-byte ULEB form code: rewrite the whole line of that byte
            sec = oracle_sections(EXAMPLE)[ABBREV]
            line = sec.lines_of(EX_DECL4_ENCODING_FORM).pop()
            vals = [i for i in sec.items if i.line == line]
            body: list[int | str] = []
            for i in vals:
                body.extend(uleb(form) if i.offset == EX_DECL4_ENCODING_FORM else [i.value])
            text = replace_line(EXAMPLE, line, ".b8 " + ", ".join(map(str, body)))
            # the table grew by one byte; it is the only table, so nothing else moves
        cases.append(
            dwarf(
                f"unknown-form-0x{form:x}",
                text,
                (ABBREV, 0),
                (ABBREV, EX_DECL4["start"]),
                (ABBREV, EX_DECL4_ENCODING_FORM),
                (INFO, 0),
                (INFO, EX_BASE_TYPE_DIE),
            )
        )
    cases.append(
        dwarf(
            "abbrev-children-flag-2",
            set_value(EXAMPLE, ABBREV, EX_DECL4["children_at"], 2),
            (ABBREV, 0),
            (ABBREV, EX_DECL4["start"]),
            (ABBREV, EX_DECL4["children_at"]),
        )
    )
    # .debug_pubnames
    for n in (1, 4, 10, 30):
        new_len = EX[PUB].size - n
        record = max(r for r in EX_PUB_RECORDS if r < new_len)
        cases.append(
            dwarf(
                f"debug_pubnames-cut-{n}", truncate(EXAMPLE, PUB, n), (PUB, 0), (PUB, record), (PUB, new_len)
            )
        )
    cases.append(dwarf("pubnames-length-200MB", set_value(EXAMPLE, PUB, 0, HUGE), (PUB, 0), bounded=True))
    # .debug_loc of a real numba module
    loc = oracle_sections(NUMBA_LOC)[LOC]
    lists, entries = _loc_lists(loc)
    for n in (3, 8, 16, 20):
        new_len = loc.size - n
        places = {
            (LOC, max(x for x in lists if x < new_len)),
            (LOC, max(x for x in entries if x < new_len)),
            (LOC, new_len),
        }
        cases.append(dwarf(f"debug_loc-cut-{n}", truncate(NUMBA_LOC, LOC, n), *places))
    # the nvcc module: .debug_info cut, nvcc layout (one value per line, '{' on its own line)
    nv = oracle_sections(NVCC_CALL)
    cases.append(dwarf("nvcc-debug_info-cut-5", truncate(NVCC_CALL, INFO, 5), (INFO, 0)))
    cases.append(
        dwarf(
            "nvcc-debug_abbrev-cut-1",
            truncate(NVCC_CALL, ABBREV, 1),
            (ABBREV, 0),
            (ABBREV, _abbrev_walk(nv[ABBREV].data)[-1]["start"]),
            (ABBREV, nv[ABBREV].size - 1),
        )
    )
    return cases


def _hand_dwarf_cases() -> list[Case]:
    cases = []
    die, attr = 0xB, 0xC  # the first DIE of a unit at 0 and its first attribute

    # DW_FORM_strp
    ab = one_decl((AT_name, FORM_strp))
    info = Section(INFO)
    info.unit(b"\x01\0\0\0\0")
    cases.append(dwarf("strp-without-debug_str", ptx(ab, info), (INFO, die), (INFO, attr)))
    for value, bounded in ((3, False), (HUGE, True)):
        info = Section(INFO)
        info.unit(b"\x01" + struct.pack("<I", value))
        strs = Section(STR).b8(b"ab\0")
        cases.append(
            dwarf(
                f"strp-outside-debug_str-{value:#x}",
                ptx(ab, info, strs),
                (INFO, die),
                (INFO, attr),
                bounded=bounded,
            )
        )

    # DW_FORM_string without its 0
    ab = Section(ABBREV).b8(CU_STRING)
    info = Section(INFO)
    info.unit(b"\x01abc")
    cases.append(dwarf("string-unterminated-at-end-of-unit", ptx(ab, info), (INFO, die), (INFO, attr)))
    info.unit(b"\x01x\0")  # a later unit holds a 0: the string must not run into it
    cases.append(dwarf("string-unterminated-before-next-unit", ptx(ab, info), (INFO, die), (INFO, attr)))

    # .debug_str without its final 0
    info = Section(INFO)
    info.unit(b"\x01\0\0\0\0")
    strs = Section(STR).b8(b"ab\0cd")
    cases.append(
        dwarf("debug_str-unterminated", ptx(one_decl((AT_name, FORM_strp)), info, strs), (STR, 3), (STR, 5))
    )

    # blocks longer than their unit (the section goes on: a second unit follows)
    for name, form, length, bounded in (
        ("block1", FORM_block1, bytes([200]), False),
        ("block4-200MB", FORM_block4, struct.pack("<I", HUGE), True),
        ("block-uleb-2^64", FORM_block, uleb(1 << 64), True),
    ):
        info = Section(INFO)
        info.unit(b"\x01" + length + b"\x01\x02\x03")
        info.unit(b"\x01" + bytes([3]) + bytes(300))
        ab = one_decl((AT_location, form))
        cases.append(
            dwarf(f"{name}-runs-past-unit", ptx(ab, info), (INFO, die), (INFO, attr), bounded=bounded)
        )

    # a ULEB128 that never ends inside its unit; an abbreviation code of 100 000 bytes
    info = Section(INFO)
    info.unit(b"\x01" + b"\x80" * 50)
    info.unit(b"\x01\x05")
    cases.append(
        dwarf(
            "uleb-unterminated-in-unit",
            ptx(one_decl((AT_byte_size, FORM_udata)), info),
            (INFO, die),
            (INFO, attr),
        )
    )
    info = Section(INFO)
    info.unit(b"\x80" * 100_000 + b"\x01", length=None)
    cases.append(
        dwarf(
            "abbrev-code-100k-byte-uleb", ptx(Section(ABBREV).b8(CU_STRING), info), (INFO, die), bounded=True
        )
    )

    # an abbreviation table that ends right after a declaration's tag
    info = Section(INFO)
    info.unit(b"\x01x\0")
    cases.append(
        dwarf(
            "debug_abbrev-ends-after-tag",
            ptx(Section(ABBREV).b8([1, TAG_compile_unit]), info),
            (ABBREV, 0),
            (ABBREV, 2),
        )
    )

    # DW_FORM_indirect naming an unknown form
    info = Section(INFO)
    info.unit(b"\x01\x7f\x01\x02")
    cases.append(
        dwarf(
            "indirect-unknown-form",
            ptx(one_decl((AT_name, FORM_indirect)), info),
            (INFO, die),
            (INFO, attr),
            (INFO, attr + 1),
        )
    )

    # a 1 MB section of good units, then a unit whose length overruns
    info = Section(INFO)
    for _ in range(100):
        info.unit(b"\x01" + b"x" * 10_000 + b"\0")
    last = info.unit(b"\x01ok\0", length=HUGE)
    cases.append(
        dwarf(
            "unit-length-overrun-after-1MB",
            ptx(Section(ABBREV).b8(CU_STRING), info),
            (INFO, last),
            bounded=True,
        )
    )

    # .debug_loc (64-bit addresses): a list without its end, an expression past the end
    loc = Section(LOC).b64(1).b64(2).b16(1).b8([0x50]).b64(0)
    cases.append(dwarf("debug_loc-without-end-entry", ptx(loc), (LOC, 0), (LOC, 19), (LOC, 27)))
    loc = Section(LOC).b64(1).b64(2).b16(4096).b8([0x50])
    cases.append(dwarf("debug_loc-expression-past-end", ptx(loc), (LOC, 0), (LOC, 16), (LOC, 18), (LOC, 19)))

    # .debug_aranges cut short
    ar = Section(ARANGES).b32(44).b8([2, 0]).b32(0).b8([8, 0]).b8([0, 0, 0, 0]).b64(0)
    cases.append(dwarf("debug_aranges-cut", ptx(ar), (ARANGES, 0), (ARANGES, 16), (ARANGES, 24)))
    return cases


#: What the message must say (a case-insensitive regex), by case id: the right problem, not just the place.
REASONS = [
    (r"^(nvcc-)?debug_info-cut-\d|^unit-length-(200MB|max-32bit|overrun)", r"length|past|overrun|truncat"),
    (r"^debug_info-(header-cut|trailing-bytes)", r"header|truncat"),
    (r"^unit-length-(64bit|reserved)", r"64-bit|0xfffffff"),
    (r"^unit-length-too-small", r"past|end of (its|the) unit|overrun"),
    (r"^unit-version-", r"version"),
    (r"^address-size-", r"address size"),
    (r"abbrev-code-|^root-abbrev-code", r"abbreviation code"),
    (r"^abbrev-offset-", r"abbreviation table|\.debug_abbrev"),
    (r"^debug_abbrev-missing", r"\.debug_abbrev"),
    (r"debug_abbrev-(cut-|ends-)", r"truncat|terminat|past"),
    (r"^unknown-form-|^indirect-unknown-form", r"form"),
    (r"^abbrev-children-flag", r"children"),
    (r"^debug_pubnames-cut|^pubnames-length", r"truncat|past|length"),
    (r"^debug_loc-", r"truncat|past|end|terminat"),
    (r"^debug_aranges-", r"truncat|past"),
    (r"^strp-", r"strp|\.debug_str"),
    (r"^string-unterminated|^debug_str-unterminated", r"string|terminat|past"),
    (r"-runs-past-unit$|^uleb-unterminated", r"past|end of (its|the) unit|overrun|truncat"),
    (r"^empty-file|^whitespace-only", r"empty|no PTX"),
]


def _with_reasons(cases: list[Case]) -> list[Case]:
    for case in cases:
        for pattern, says in REASONS:
            if case.says is None and re.search(pattern, case.id):
                case.says = says
    return cases


SYNTAX_CASES = _syntax_cases()
FILE_CASES = _with_reasons(_file_cases())
DWARF_CASES = _with_reasons(_example_dwarf_cases() + _hand_dwarf_cases())
ALL_CASES = SYNTAX_CASES + FILE_CASES + DWARF_CASES
PTX_CASES = [c for c in ALL_CASES if c.kind != "cubin"]
BOUNDED_CASES = [c for c in ALL_CASES if c.bounded]

assert len({c.id for c in ALL_CASES}) == len(ALL_CASES)


def _ids(cases: list[Case]) -> list[str]:
    return [c.id for c in cases]


# =============================================================================
# Checking an error
# =============================================================================

_PLACE = re.compile(r"(\.debug_[a-z_]+)\+0x([0-9a-fA-F]+)")


def check_place(message: str, case: Case, filename: str) -> None:
    """``message`` names the place ``case`` says, computed from the input."""
    file_line = re.search(re.escape(filename) + r":(\d+)", message)
    if case.says is not None:
        assert re.search(case.says, message, re.IGNORECASE), (
            f"message does not say /{case.says}/: {message!r}"
        )
    if case.kind == "syntax":
        assert file_line, f"no {filename}:LINE in {message!r}"
        assert int(file_line.group(1)) in case.lines, (
            f"wrong line in {message!r}: expected one of {sorted(case.lines)}"
        )
    elif case.kind == "dwarf":
        place = _PLACE.search(message)
        assert place, f"no .debug_xxx+0xOFFSET in {message!r}"
        section, offset = place.group(1), int(place.group(2), 16)
        assert (section, offset) in case.places, (
            f"wrong place {section}+0x{offset:x} in {message!r}: expected one of "
            + ", ".join(f"{s}+0x{o:x}" for s, o in sorted(case.places))
        )
        assert file_line, f"no PTX {filename}:LINE in {message!r}"
        expected = oracle_sections(case.text)[section].lines_of(offset)
        assert int(file_line.group(1)) in expected, (
            f"wrong line in {message!r}: {section}+0x{offset:x} is on line(s) {sorted(expected)}"
        )
    else:
        assert filename in message, f"file {filename} not named in {message!r}"
        if file_line and case.lines:
            assert int(file_line.group(1)) in case.lines, (
                f"wrong line in {message!r}: expected one of {sorted(case.lines)}"
            )


def check_error_output(code: int, err: str, case: Case, filename: str) -> None:
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.endswith("\n"), f"stderr is not exactly one line: {err!r}"
    assert err.startswith("ptxdwarf: error: "), err
    assert "internal error" not in err, err
    check_place(err, case, filename)
    assert code == 2, f"exit code {code}, stderr {err!r}"


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str], seconds: float = 30) -> tuple[int, str, str]:
    with time_limit(seconds):
        code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# =============================================================================
# Tests: the table, through the CLI and the library
# =============================================================================

COMMANDS = {"dump": ["dump"], "dump-json": ["dump", "--json"], "rewrite": ["rewrite"]}


@pytest.mark.parametrize("command", list(COMMANDS), ids=list(COMMANDS))
@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_cli_bad_input(case: Case, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = case.write(tmp_path)
    argv = COMMANDS[command] + [str(path)]
    if command == "rewrite":
        argv += ["-o", str(tmp_path / "out.ptx")]
    code, out, err = run_cli(argv, capsys)
    check_error_output(code, err, case, str(path))
    if command != "rewrite":
        assert out == "", "a dump wrote before the error"


LOC_CASES = [c for c in ALL_CASES if c.id.startswith("debug_loc-")]


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("case", LOC_CASES, ids=_ids(LOC_CASES))
def test_cli_bad_input_of_a_selected_section(
    case: Case, as_json: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A section the dump is limited to that cannot be read is the one error line, and
    nothing is written before it."""
    path = case.write(tmp_path)
    code, out, err = run_cli(["dump", *(["--json"] if as_json else []), "--debug-loc", str(path)], capsys)
    check_error_output(code, err, case, str(path))
    assert out == ""


@pytest.mark.parametrize("case", PTX_CASES, ids=_ids(PTX_CASES))
def test_read_ptx_bad_input(case: Case) -> None:
    with time_limit(30), pytest.raises(PtxDwarfError) as info:
        # Sections other than .debug_info/.debug_abbrev/.debug_str are decoded on first use.
        ptxdwarf.read(text=case.text, filename="bad.ptx").load_all()
    exc = info.value
    message = str(exc)
    assert "\n" not in message, message
    check_place(message, case, "bad.ptx")
    if case.kind == "syntax":
        assert isinstance(exc, PtxSyntaxError), f"{type(exc).__name__}: {message}"
        assert exc.filename == "bad.ptx" and exc.line in case.lines, (exc.filename, exc.line)
    elif case.kind == "dwarf":
        assert isinstance(exc, DwarfError), f"{type(exc).__name__}: {message}"
        assert (exc.section, exc.offset) in case.places, (exc.section, exc.offset)
        assert exc.offset is not None
        lines = oracle_sections(case.text)[exc.section].lines_of(exc.offset)
        assert exc.source in {f"bad.ptx:{n}" for n in lines}, (exc.source, sorted(lines))


@pytest.mark.parametrize(
    "case", [c for c in ALL_CASES if c.kind == "cubin"], ids=_ids([c for c in ALL_CASES if c.kind == "cubin"])
)
def test_read_cubin_bad_input(case: Case) -> None:
    with time_limit(30), pytest.raises(CubinError) as info:
        ptxdwarf.cuda.read_cubin(case.raw)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("case", BOUNDED_CASES, ids=_ids(BOUNDED_CASES))
@pytest.mark.slow
def test_claimed_sizes_fail_fast_in_bounded_memory(case: Case) -> None:
    """A length field claiming 200 MB (or a 100 000-byte ULEB) fails at once, allocating little."""
    text = case.text
    start = time.perf_counter()
    with time_limit(10), pytest.raises(PtxDwarfError):
        ptxdwarf.read(text=text, filename="bad.ptx").load_all()
    elapsed = time.perf_counter() - start
    tracemalloc.start()  # a second run, traced (tracing slows it down: not timed)
    try:
        with time_limit(60), pytest.raises(PtxDwarfError):
            ptxdwarf.read(text=text, filename="bad.ptx").load_all()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    limit = 64 * MB + 16 * len(text)
    print(f"\n{case.id}: {elapsed:.3f} s, peak {peak / 1024:.0f} KB traced (input {len(text) / 1024:.0f} KB)")
    assert peak < limit, f"peak {peak / MB:.1f} MB for a {len(text) / MB:.2f} MB input"
    assert elapsed < 5, f"{elapsed:.1f} s"


SUBPROCESS_CASES = [
    c
    for c in ALL_CASES
    if c.id
    in {
        "empty-file",
        "random-bytes",
        "random-bytes-without-nul",
        "elf-magic-then-garbage",
        "nul-in-code",
        "unclosed-debug_info",
        "b8-256",
        "label-defined-twice",
        "debug_info-cut-9",
        "unit-length-200MB",
        "unknown-form-0x7f",
        "abbrev-code-9-not-in-table",
        "strp-without-debug_str",
        "debug_abbrev-missing",
        "debug_loc-cut-8",
    }
]


@pytest.mark.parametrize("case", SUBPROCESS_CASES, ids=_ids(SUBPROCESS_CASES))
def test_python_m_ptxdwarf_bad_input(case: Case, tmp_path: Path) -> None:
    """The real process: stderr holds one line and no traceback, exit code 2."""
    path = case.write(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PTXDWARF_DEBUG"}
    proc = subprocess.run(
        [sys.executable, "-m", "ptxdwarf", "dump", str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    check_error_output(proc.returncode, proc.stderr, case, str(path))


# --- valid edge cases that must NOT be refused ----------------------------------


def test_one_megabyte_line_is_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A single 1 MB line ``.b8 1,1,1,...`` (a DW_FORM_string of 350 000 bytes) is read, dumped, rewritten."""
    n = 350_000
    body = b"\x01" + b"\x01" * n + b"\0"
    line = ".b8 " + ", ".join(["1"] * (n + 1)) + ", 0"
    assert len(line) > MB
    text = (
        PREAMBLE
        + Section(ABBREV).b8(CU_STRING).text()
        + f".section {INFO} {{\n.b32 {7 + len(body)}\n.b8 2, 0\n.b32 .debug_abbrev\n.b8 8\n{line}\n}}\n"
    )
    start = time.perf_counter()
    with time_limit(30):
        info = ptxdwarf.read(text=text, filename="long.ptx")
    print(f"\n1 MB line: read in {time.perf_counter() - start:.2f} s")
    (die,) = list(info.iter_dies())
    assert die.name == "\x01" * n
    path = tmp_path / "long.ptx"
    path.write_text(text)
    code, out, err = run_cli(["dump", str(path)], capsys)
    assert code == 0 and err == "", err
    assert "DW_TAG_compile_unit" in out
    out_path = tmp_path / "out.ptx"
    code, _, err = run_cli(["rewrite", str(path), "-o", str(out_path)], capsys)
    assert code == 0 and err == "", err
    assert oracle_sections(out_path.read_text())[INFO].data == oracle_sections(text)[INFO].data


# =============================================================================
# Fuzzing with hypothesis: only PtxDwarfError, never anything else, never a hang
# =============================================================================

#: Deterministic (same examples every run, no example database written into the repository).
FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PER_EXAMPLE_SECONDS = 10


def read_or_refuse(text: str) -> None:
    """``read_ptx`` returns a DebugInfo or raises a one-line PtxDwarfError; dumps of it work."""
    with time_limit(PER_EXAMPLE_SECONDS):
        try:
            info = ptxdwarf.read(text=text, filename="fuzz.ptx").load_all()
        except PtxDwarfError as exc:
            assert "\n" not in str(exc)
            if isinstance(exc, DwarfError) and exc.offset is not None:
                sections = oracle_sections(text)
                assert exc.section in sections and exc.offset <= sections[exc.section].size, str(exc)
            return
        assert isinstance(info, DebugInfo)
        for _ in info.iter_dies():
            pass


def base_tokens(text: str) -> dict[str, list[int | tuple[str, int]]]:
    return {name: sec.tokens() for name, sec in oracle_sections(text).items()}


BASES = {
    "spec": base_tokens(EXAMPLE),
    "nvcc": base_tokens(NVCC_CALL),
    "numba": base_tokens(NUMBA_LOC),
}


def module_from(tokens: dict[str, list[int | tuple[str, int]]]) -> str:
    return ptx(*(Section(name).tokens(toks) for name, toks in tokens.items()))


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 1 << 20), st.integers(1, 255)),
    st.tuples(st.just("insert"), st.integers(0, 1 << 20), st.integers(0, 255)),
    st.tuples(st.just("delete"), st.integers(0, 1 << 20), st.integers(1, 16)),
    st.tuples(st.just("truncate"), st.integers(0, 1 << 20), st.just(0)),
)


def mutate(
    tokens: list[int | tuple[str, int]], ops: list[tuple[str, int, int]]
) -> list[int | tuple[str, int]]:
    tokens = list(tokens)
    for op, pos, arg in ops:
        if not tokens and op != "insert":
            continue
        pos %= len(tokens) + (op == "insert")
        if op == "flip":
            t = tokens[pos]
            tokens[pos] = (0 ^ arg) if isinstance(t, tuple) else t ^ arg
        elif op == "insert":
            tokens.insert(pos, arg)
        elif op == "delete":
            del tokens[pos : pos + arg]
        else:
            del tokens[pos:]
    return tokens


@FUZZ
@given(
    data=st.binary(max_size=400),
    framing=st.sampled_from(["raw", "header", "header-wrong-length"]),
    length=st.integers(0, 0xFFFFFFFF),
)
def test_fuzz_random_debug_info(data: bytes, framing: str, length: int) -> None:
    """Random bytes as the .debug_info of the spec example (with its real abbreviations)."""
    info = Section(INFO)
    if framing == "raw":
        info.b8(data)
    else:
        info.unit(data, length=None if framing == "header" else length)
    read_or_refuse(ptx(Section(ABBREV).tokens(BASES["spec"][ABBREV]), info))


@FUZZ
@given(data=st.binary(max_size=200))
def test_fuzz_random_debug_abbrev(data: bytes) -> None:
    """Random bytes as the .debug_abbrev of the spec example (with its real .debug_info)."""
    read_or_refuse(ptx(Section(ABBREV).b8(data), Section(INFO).tokens(BASES["spec"][INFO])))


@FUZZ
@given(
    base=st.sampled_from(sorted(BASES)),
    section=st.sampled_from([INFO, ABBREV, PUB, LOC, ".debug_macinfo"]),
    ops=st.lists(mutation, min_size=1, max_size=5),
)
def test_fuzz_mutated_real_sections(base: str, section: str, ops: list[tuple[str, int, int]]) -> None:
    """Flip/insert/delete/truncate bytes of one section of a real module."""
    tokens = dict(BASES[base])
    if section not in tokens:
        section = INFO
    tokens[section] = mutate(tokens[section], ops)
    read_or_refuse(module_from(tokens))


_PTX_PIECES = st.sampled_from(
    [
        ".b8 ",
        ".b16 ",
        ".b32 ",
        ".b64 ",
        ".b7 ",
        "1",
        "0",
        "255",
        "256",
        "-1",
        "0x",
        "0xff",
        "65536",
        "4294967296",
        "abc",
        "$L__a",
        "$L__a:",
        "$L__b:",
        "$L__a-$L__b",
        "foo+4",
        ".debug_abbrev",
        ", ",
        ",",
        ";",
        ":",
        "\n",
        " ",
        "{",
        "}",
        "/*",
        "*/",
        "//",
        '"',
        "\0",
        "\t",
        "-",
        "+",
        ".section .debug_info {",
        ".section .debug_str {",
    ]
)


@FUZZ
@given(pieces=st.lists(_PTX_PIECES, max_size=40))
def test_fuzz_ptx_like_text(pieces: list[str]) -> None:
    """Random PTX-ish text inside and around a section: refused with a line in range, or read."""
    body = "".join(pieces)
    text = PREAMBLE + ".section .debug_str {\n" + body + "\n}\n"
    n_lines = text.count("\n") + 1
    with time_limit(PER_EXAMPLE_SECONDS):
        try:
            ptxdwarf.read(text=text, filename="fuzz.ptx").load_all()
        except PtxSyntaxError as exc:
            assert "\n" not in str(exc)
            assert exc.line is None or 1 <= exc.line <= n_lines, (exc.line, n_lines)
        except PtxDwarfError as exc:
            assert "\n" not in str(exc)


@settings(
    FUZZ, max_examples=25, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    base=st.sampled_from(sorted(BASES)),
    section=st.sampled_from([INFO, ABBREV, LOC]),
    ops=st.lists(mutation, min_size=1, max_size=3),
    command=st.sampled_from(list(COMMANDS)),
)
def test_fuzz_cli_never_crashes(
    base: str, section: str, ops: list[tuple[str, int, int]], command: str, tmp_path: Path
) -> None:
    """The CLI on mutated modules: exit 0, or exit 2 with one located error line."""
    tokens = dict(BASES[base])
    if section not in tokens:
        section = INFO
    tokens[section] = mutate(tokens[section], ops)
    path = tmp_path / "fuzz.ptx"
    path.write_text(module_from(tokens))
    out, err = io.StringIO(), io.StringIO()
    argv = (
        COMMANDS[command] + [str(path)] + (["-o", str(tmp_path / "out.ptx")] if command == "rewrite" else [])
    )
    with time_limit(PER_EXAMPLE_SECONDS), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    message = err.getvalue()
    if code == 0:
        assert message == "", message
        return
    assert code == 2, (code, message)
    assert message.count("\n") == 1 and message.startswith("ptxdwarf: error: "), message
    assert "Traceback" not in message and "internal error" not in message, message
    assert re.search(re.escape(str(path)) + r":\d+", message) or _PLACE.search(message), message


# --- cubins --------------------------------------------------------------------


@pytest.fixture(scope="module")
def cubins(cubin_path: CubinPath) -> dict[str, bytes]:
    return {
        "spec": cubin_path(EXAMPLE, "example.ptx").read_bytes(),
        "nvcc": cubin_path(NVCC_CALL, "call_example.ptx").read_bytes(),
    }


def _section_ranges(blob: bytes) -> dict[str, tuple[int, int]]:
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(blob))
    return {
        s.name: (s["sh_offset"], s["sh_size"]) for s in elf.iter_sections() if s.name.startswith(".debug_")
    }


@pytest.mark.ptxas
def test_cubin_fixture_reads(cubins: dict[str, bytes]) -> None:
    for blob in cubins.values():
        info = ptxdwarf.cuda.read_cubin(blob)
        assert sum(1 for _ in info.iter_dies()) > 5


def _elf_layout(blob: bytes) -> dict[str, int]:
    """Where things are in a cubin, read with pyelftools (not with ptxdwarf)."""
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(blob))
    out = {"shoff": elf["e_shoff"], "shentsize": elf["e_shentsize"], "shnum": elf["e_shnum"]}
    for index, sec in enumerate(elf.iter_sections()):
        if sec.name in (INFO, ABBREV):
            out[sec.name] = sec["sh_offset"]
            out[sec.name + ".size"] = sec["sh_size"]
            out[sec.name + ".header"] = elf["e_shoff"] + index * elf["e_shentsize"]
    return out


CUBIN_CUTS: dict[str, Callable[[dict[str, int]], int]] = {
    "in-elf-header": lambda _: 20,
    "after-elf-header": lambda _: 64,
    "in-debug_abbrev": lambda L: L[ABBREV] + 40,
    "in-debug_info": lambda L: L[INFO] + 100,
    "in-section-headers": lambda L: L["shoff"] + 5 * L["shentsize"] + 7,
    "last-section-header-byte": lambda L: L["shoff"] + L["shnum"] * L["shentsize"] - 1,
}


@pytest.mark.parametrize("where", list(CUBIN_CUTS), ids=list(CUBIN_CUTS))
def test_truncated_cubin(
    where: str, cubins: dict[str, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cubin cut inside its header, a debug section or the section header table."""
    blob = cubins["spec"]
    path = tmp_path / "cut.cubin"
    path.write_bytes(blob[: CUBIN_CUTS[where](_elf_layout(blob))])
    code, _, err = run_cli(["dump", str(path)], capsys)
    check_error_output(code, err, Case("cubin-cut", b"", "cubin"), str(path))
    with time_limit(30), pytest.raises(CubinError):
        ptxdwarf.cuda.read_cubin(path.read_bytes())


def _patched_cubin(blob: bytes, what: str) -> bytes:
    layout = _elf_layout(blob)
    out = bytearray(blob)
    info, size_field = layout[INFO], layout[INFO + ".header"] + 32  # Elf64_Shdr.sh_size
    if what == "unit-length-200MB":
        out[info : info + 4] = struct.pack("<I", HUGE)
    elif what == "unit-version-5":
        out[info + 4 : info + 6] = b"\x05\x00"
    elif what == "abbrev-code-9":
        out[info + EX_BASE_TYPE_DIE] = 9
    elif what == "debug_info-sh_size-minus-10":  # the section itself is cut short
        out[size_field : size_field + 8] = struct.pack("<Q", layout[INFO + ".size"] - 10)
    elif what == "debug_abbrev-sh_size-minus-1":
        field = layout[ABBREV + ".header"] + 32
        out[field : field + 8] = struct.pack("<Q", layout[ABBREV + ".size"] - 1)
    return bytes(out)


CUBIN_EDITS = {
    # edit: acceptable places
    "unit-length-200MB": {(INFO, 0)},
    "unit-version-5": {(INFO, 0), (INFO, 4)},
    "abbrev-code-9": {(INFO, EX_BASE_TYPE_DIE)},
    "debug_info-sh_size-minus-10": {(INFO, 0)},
    "debug_abbrev-sh_size-minus-1": {(ABBREV, 0), (ABBREV, EX_LAST_DECL), (ABBREV, EX[ABBREV].size - 1)},
}


@pytest.mark.parametrize("what", list(CUBIN_EDITS), ids=list(CUBIN_EDITS))
def test_cubin_bad_debug_sections_name_offset(
    what: str, cubins: dict[str, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ptxas keeps .debug_info as written, so the same edits in a cubin name the same offsets."""
    blob = cubins["spec"]
    assert _elf_layout(blob)[INFO + ".size"] == EX[INFO].size
    path = tmp_path / f"{what}.cubin"
    path.write_bytes(_patched_cubin(blob, what))
    code, _, err = run_cli(["dump", str(path)], capsys)
    assert "Traceback" not in err and "internal error" not in err, err
    assert err.count("\n") == 1 and err.startswith("ptxdwarf: error: "), err
    m = _PLACE.search(err)
    assert m and (m.group(1), int(m.group(2), 16)) in CUBIN_EDITS[what], (
        f"{err!r}: expected one of " + ", ".join(f"{s}+0x{o:x}" for s, o in sorted(CUBIN_EDITS[what]))
    )
    assert code == 2
    with time_limit(30), pytest.raises(DwarfError) as info:
        ptxdwarf.cuda.read_cubin(path.read_bytes())
    assert (info.value.section, info.value.offset) in CUBIN_EDITS[what]


def test_fuzz_mutated_cubin(cubins: dict[str, bytes]) -> None:
    """Mutated cubins (bytes flipped in the debug sections, the ELF header or anywhere; cut short):
    ``read_cubin`` returns or raises a PtxDwarfError, nothing else, and never hangs."""
    layouts = {name: [r for r in _section_ranges(blob).values() if r[1]] for name, blob in cubins.items()}

    @settings(FUZZ, max_examples=60)
    @given(
        base=st.sampled_from(sorted(cubins)),
        where=st.sampled_from(["debug", "anywhere", "header"]),
        ops=st.lists(st.tuples(st.integers(0, 1 << 30), st.integers(1, 255)), min_size=1, max_size=8),
        cut=st.one_of(st.none(), st.integers(0, 1 << 30)),
    )
    def mutated(base: str, where: str, ops: list[tuple[int, int]], cut: int | None) -> None:
        blob = bytearray(cubins[base])
        if where == "debug":
            spots = [start + k for start, size in layouts[base] for k in range(size)]
        elif where == "header":
            spots = list(range(64))
        else:
            spots = list(range(len(blob)))
        for pos, x in ops:
            blob[spots[pos % len(spots)]] ^= x
        if cut is not None:
            del blob[cut % (len(blob) + 1) :]
        with time_limit(PER_EXAMPLE_SECONDS):
            try:
                info = ptxdwarf.cuda.read_cubin(bytes(blob))
            except PtxDwarfError as exc:
                assert "\n" not in str(exc)
                return
        for _ in info.iter_dies():
            pass

    mutated()


# =============================================================================
# Extreme but valid input
# =============================================================================

DEEP = 100_000
WIDE = 1_000_000


def _rows(body: bytes, per_line: int = 1000) -> str:
    return "".join(
        ".b8 " + ",".join(map(str, body[k : k + per_line])) + "\n" for k in range(0, len(body), per_line)
    )


def extreme_ptx(kind: str) -> tuple[str, int]:
    """PTX text of a deep or wide DIE tree and the number of DIEs it holds."""
    if kind == "deep":  # compile unit > 100 000 nested lexical blocks, each closed by a null entry
        abbrev = abbrev_table(decl(1, TAG_compile_unit, True), decl(2, TAG_lexical_block, True))
        body = b"\x01" + b"\x02" * DEEP + b"\x00" * (DEEP + 1)
        count = DEEP + 1
    else:  # compile unit > 1 000 000 base types with DW_AT_byte_size
        abbrev = abbrev_table(
            decl(1, TAG_compile_unit, True), decl(2, TAG_base_type, False, (AT_byte_size, FORM_data1))
        )
        body = b"\x01" + b"\x02\x04" * WIDE + b"\x00"
        count = WIDE + 1
    text = (
        PREAMBLE
        + f".section {ABBREV} {{\n{_rows(abbrev)}}}\n"
        + f".section {INFO} {{\n.b32 {7 + len(body)}\n.b8 2, 0\n.b32 .debug_abbrev\n.b8 8\n{_rows(body)}}}\n"
    )
    return text, count


#: The ``extreme`` fixture: kind -> (path of the PTX file, its text, how deep or long it is).
Extreme = Callable[[str], tuple[Path, str, int]]


@pytest.fixture(scope="module")
def extreme(tmp_path_factory: pytest.TempPathFactory) -> Extreme:
    cache: dict[str, tuple[Path, str, int]] = {}

    def get(kind: str) -> tuple[Path, str, int]:
        if kind not in cache:
            text, count = extreme_ptx(kind)
            path = tmp_path_factory.mktemp("extreme") / f"{kind}.ptx"
            path.write_text(text)
            cache[kind] = (path, text, count)
        return cache[kind]

    return get


def _same_debug_bytes(a: str, b: str) -> None:
    """Two PTX texts carry the same .debug_info and .debug_abbrev bytes and symbols (by our own reader)."""
    sa, sb = oracle_sections(a), oracle_sections(b)
    for name in (ABBREV, INFO):
        assert sa[name].data == sb[name].data, f"{name} differs"
        syms_a = {i.offset: i.value for i in sa[name].items if isinstance(i.value, str)}
        syms_b = {i.offset: i.value for i in sb[name].items if isinstance(i.value, str)}
        assert syms_a == syms_b, f"{name} symbols differ: {syms_a} vs {syms_b}"


@pytest.mark.parametrize("kind", ["deep", "wide"])
def test_extreme_read_ptx(kind: str, extreme: Extreme) -> None:
    _, text, count = extreme(kind)
    start = time.perf_counter()
    with time_limit(120):
        info = ptxdwarf.read(text=text, filename=f"{kind}.ptx")
        dies = list(info.iter_dies())
    elapsed = time.perf_counter() - start
    print(
        f"\nread_ptx {kind}: {len(dies)} DIEs in {elapsed:.2f} s (recursion limit {sys.getrecursionlimit()})"
    )
    assert len(dies) == count
    if kind == "deep":
        depth, die = 0, dies[0]
        while die.children:
            assert len(die.children) == 1
            die = die.children[0]
            depth += 1
        assert depth == DEEP
    else:
        assert len(dies[0].children) == WIDE
    assert elapsed < 60


def test_deep_dump_text(extreme: Extreme, capsys: pytest.CaptureFixture[str]) -> None:
    path, _, count = extreme("deep")
    start = time.perf_counter()
    code, out, err = run_cli(["dump", str(path)], capsys, seconds=120)
    elapsed = time.perf_counter() - start
    print(f"\ndump deep: {len(out) / MB:.1f} MB of text in {elapsed:.2f} s")
    assert code == 0 and err == "", err
    tags = re.findall(r"^0x[0-9a-f]{8}: .*(DW_TAG_\w+)$", out, re.MULTILINE)
    assert len(tags) == count
    assert tags.count("DW_TAG_lexical_block") == DEEP
    assert elapsed < 60


def test_deep_dump_json(extreme: Extreme, capsys: pytest.CaptureFixture[str]) -> None:
    path, _, count = extreme("deep")
    start = time.perf_counter()
    code, out, err = run_cli(["dump", "--json", str(path)], capsys, seconds=120)
    elapsed = time.perf_counter() - start
    print(f"\ndump --json deep: {len(out) / MB:.1f} MB in {elapsed:.2f} s")
    assert code == 0 and err == "", err
    # json.loads would itself hit the recursion limit: count instead
    assert out.count('"tag": "DW_TAG_lexical_block"') == DEEP
    assert out.count('"tag": ') == count
    assert out.count('"offset": ') >= count
    assert out.count("{") == out.count("}") and out.count("[") == out.count("]")
    assert elapsed < 60


@pytest.mark.parametrize("style", ["readable", "nvcc", "compact"])
@pytest.mark.slow
def test_deep_rewrite(
    style: str, extreme: Extreme, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, text, _ = extreme("deep")
    out_path = tmp_path / "out.ptx"
    start = time.perf_counter()
    code, _, err = run_cli(["rewrite", str(path), "-o", str(out_path), "--style", style], capsys, seconds=120)
    elapsed = time.perf_counter() - start
    print(f"\nrewrite deep --style {style}: {elapsed:.2f} s")
    assert code == 0 and err == "", err
    _same_debug_bytes(text, out_path.read_text())
    assert elapsed < 60


# ``python -m ptxdwarf`` in a child that reports its own peak RSS (VmHWM, which, unlike
# ru_maxrss, does not inherit the pytest parent's high-water mark across fork+exec), as
# it exits: the console script ends with os._exit.
_MEASURED_MAIN = """
import os, runpy, sys

def report_peak():
    with open("/proc/self/status") as f:
        hwm = next(line for line in f if line.startswith("VmHWM:"))
    with open(os.environ["PEAK_FILE"], "w") as f:
        f.write(hwm.split()[1])

_exit = os._exit

def exit_reporting_peak(code):
    report_peak()
    _exit(code)

os._exit = exit_reporting_peak
try:
    sys.argv = ["ptxdwarf", *sys.argv[1:]]
    runpy.run_module("ptxdwarf", run_name="__main__", alter_sys=True)
finally:
    report_peak()
"""


def _run_measured(args: list[str], cwd: Path, stdout_path: Path) -> tuple[int, str, float, float]:
    """Run ``python -m ptxdwarf ARGS``; return exit code, stderr, wall seconds, peak RSS in MB."""
    peak_file = cwd / "peak.txt"
    env = {k: v for k, v in os.environ.items() if k != "PTXDWARF_DEBUG"}
    env["PEAK_FILE"] = str(peak_file)
    with open(stdout_path, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", _MEASURED_MAIN, *args],
            check=False,
            stdout=out,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            timeout=180,
        )
        elapsed = time.perf_counter() - start
    return proc.returncode, proc.stderr.decode(errors="replace"), elapsed, int(peak_file.read_text()) / 1024


@pytest.mark.parametrize(
    "kind, command",
    [("deep", ["dump", "--json"]), ("deep", ["rewrite"]), ("wide", ["rewrite"])],
    ids=["deep-dump-json", "deep-rewrite", "wide-rewrite"],
)
@pytest.mark.slow
def test_extreme_time_and_memory(kind: str, command: list[str], extreme: Extreme, tmp_path: Path) -> None:
    """``python -m ptxdwarf`` on the extreme modules: time and the process's own peak memory."""
    path, text, count = extreme(kind)
    out_path = tmp_path / "out.txt"
    code, err, elapsed, peak_mb = _run_measured([*command, str(path)], tmp_path, out_path)
    print(
        f"\n{kind} {' '.join(command)}: {elapsed:.2f} s, peak RSS {peak_mb:.0f} MB ({count} DIEs, input {len(text) / MB:.1f} MB)"
    )
    assert code == 0 and err == "", err
    if command[0] == "rewrite":
        _same_debug_bytes(text, out_path.read_text())
    else:
        assert out_path.read_text().count('"tag": ') == count
    assert elapsed < 60, f"{elapsed:.1f} s"
    assert peak_mb < 2048, f"peak RSS {peak_mb:.0f} MB"


def test_cli_reader_that_goes_away() -> None:
    """``ptxdwarf dump BIG | head -1``: the closed pipe is not reported as an error."""
    path = Path(__file__).resolve().parent.parent / "fixtures" / "nvcc" / "rich.sm_75.ptx"
    child = subprocess.Popen(
        [sys.executable, "-m", "ptxdwarf", "dump", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.readline().endswith(b": debug info from ptx\n")
    child.stdout.close()  # far more than a pipe buffer is still to come
    errors = child.stderr.read().decode()
    assert child.wait(timeout=60) == 0 and errors == ""


# =============================================================================
# Regression inputs found by fuzzing (fixtures/regressions)
# =============================================================================

REGRESSIONS = {
    "cubin-shnum0-shoff-past-end.cubin": "section header 0 at 0xf4240 lies past the end",
    "host-huge-fatbin-size.o": ".nv_fatbin runs past the end",
    "host-max-shoff.o": "not a readable ELF file",
    "zstd-raw-size-max.fatbin": "claims 18446744073709551615 bytes uncompressed",
    "host-zstd-frame-too-large.o": "zstd decompress error: Frame requires too much memory",
    "bare-target.badptx": ":2: bad .target directive",
    "bare-target-semi.badptx": ":2: bad .target directive",
    "bare-target-eof.badptx": ":2: bad .target directive",
    "fatbin-section-name-with-newlines.fatbin": "runs past its container",
}


def test_a_name_read_from_the_input_keeps_the_message_on_one_line() -> None:
    """A mutated cubin's section name full of line breaks, quoted in the error (once a message
    of 26 lines): every PtxDwarfError escapes control characters."""
    path = FIXTURES / "regressions" / "fatbin-section-name-with-newlines.fatbin"
    with pytest.raises(PtxDwarfError) as caught:
        for _label, info in ptxdwarf.read_all(path):
            info.load_all()
    message = str(caught.value)
    assert "\n" not in message and "\\n" in message and "runs past the end of the file" in message, message
    assert "\n" not in caught.value.message


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression_input_refused(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Each input once crashed with struct.error, OverflowError, AssertionError or MemoryError."""
    path = FIXTURES / "regressions" / name
    code, _, err = run_cli(["dump", str(path)], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("ptxdwarf: error: "), err
    assert "internal error" not in err and REGRESSIONS[name] in err, err
    with time_limit(30), pytest.raises(PtxDwarfError):
        ptxdwarf.read_all(path)
