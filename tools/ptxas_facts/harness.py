"""The pieces every measurement is made of: a test module, one ptxas run, the cubin it wrote.

:func:`module` writes the test PTX: a header, a device function ``_Z3addii`` and a
kernel ``_Z4testPi`` (labels ``$L__func_begin0/1`` and ``$L__func_end0/1``, a
``__local_depot1``, module variables ``g1`` (global), ``c1`` (const), ``sh1``
(shared)), ``.file 1 "t.cu"`` and the debug sections the case gives.
:func:`info` assembles a ``.debug_info`` block from DIEs and computes the unit
length itself (ptxas cannot take a difference of two ``.debug_info`` labels), and
:data:`ABBREV` is the abbreviation table the DIEs use. :func:`run_ptxas` compiles a
module and reads back what a case looks at (:class:`Run`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ptxdwarf.cuda.cubin import ElfContents, elf_contents
from ptxdwarf.cuda.ptxas import Ptxas, PtxasFailed, PtxasMessage
from ptxdwarf.dwarf.lines import line_files as _line_files

__all__ = [
    "ABBREV",
    "Die",
    "Entry",
    "Run",
    "b8",
    "cstring",
    "die",
    "fixture",
    "info",
    "line_files",
    "module",
    "run_ptxas",
    "section",
]

#: The kernel and device function every test module has. ``__local_depot1`` is the
#: kernel's stack; ``g1``, ``c1`` and ``sh1`` are used so that ptxas keeps them.
CODE = """\
.global .align 4 .u32 g1;
.const .align 4 .u32 c1;
.shared .align 4 .u32 sh1;

.func (.param .b32 func_retval0) _Z3addii(.param .b32 _Z3addii_param_0, .param .b32 _Z3addii_param_1)
{
\t.reg .b32 %r<4>;
$L__func_begin0:
\t.loc 1 1 0
\tld.param.u32 %r1, [_Z3addii_param_0];
\tld.param.u32 %r2, [_Z3addii_param_1];
\tadd.s32 %r3, %r1, %r2;
\tst.param.b32 [func_retval0], %r3;
\tret;
$L__func_end0:
}

.visible .entry _Z4testPi(.param .u64 _Z4testPi_param_0)
{
\t.local .align 8 .b8 __local_depot1[16];
\t.reg .b64 %SP;
\t.reg .b64 %SPL;
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<4>;
$L__func_begin1:
\t.loc 1 5 0
\tmov.u64 %SPL, __local_depot1;
\tcvta.local.u64 %SP, %SPL;
\tld.param.u64 %rd1, [_Z4testPi_param_0];
\tcvta.to.global.u64 %rd2, %rd1;
\tld.global.u32 %r1, [g1];
\tld.const.u32 %r2, [c1];
\tst.shared.u32 [sh1], %r1;
\tst.local.u32 [%SPL], %r2;
\tld.local.u32 %r4, [%SPL];
\t{
\t.param .b32 param0;
\tst.param.b32 [param0], %r1;
\t.param .b32 param1;
\tst.param.b32 [param1], %r4;
\t.param .b32 retval0;
\tcall.uni (retval0), _Z3addii, (param0, param1);
\tld.param.b32 %r3, [retval0];
\t}
\tst.global.u32 [%rd2], %r3;
\tret;
$L__func_end1:
}
"""

#: Abbreviation codes of :data:`ABBREV`, by what the DIE carries.
CU, VAR_BLOCK, VAR_DATA4, VAR_DATA8, SUBPROGRAM, LABEL_ADDR, VAR_STRP, VAR_LOCLIST = range(1, 9)

#: A ``.debug_abbrev`` block: 1 compile unit (children; name string), 2 variable
#: (location block1), 3 variable (const_value data4), 4 variable (const_value data8),
#: 5 subprogram (children; low_pc addr, high_pc addr, frame_base block1, name string:
#: without a name ptxas does not rewrite its ``__local_depot`` locations), 6 label
#: (low_pc addr), 7 variable (name strp), 8 variable (location data4: a list).
ABBREV_BYTES = (
    (1, 0x11, 1, [(0x03, 0x08)]),
    (2, 0x34, 0, [(0x02, 0x0A)]),
    (3, 0x34, 0, [(0x1C, 0x06)]),
    (4, 0x34, 0, [(0x1C, 0x07)]),
    (5, 0x2E, 1, [(0x11, 0x01), (0x12, 0x01), (0x40, 0x0A), (0x03, 0x08)]),
    (6, 0x0A, 0, [(0x11, 0x01)]),
    (7, 0x34, 0, [(0x03, 0x0E)]),
    (8, 0x34, 0, [(0x02, 0x06)]),
)


def section(name: str, body: str) -> str:
    return f".section {name}\n{{\n{body}\n}}\n"


def abbrev_table(decls: Iterable[tuple[int, int, int, Sequence[tuple[int, int]]]]) -> str:
    """A ``.debug_abbrev`` block from (code, tag, children, [(attribute, form)]) rows (all below 128)."""
    rows = []
    for code, tag, children, attrs in decls:
        values = [code, tag, children] + [v for pair in attrs for v in pair] + [0, 0]
        rows.append(".b8 " + ", ".join(map(str, values)))
    return section(".debug_abbrev", "\n".join(rows) + "\n.b8 0")


ABBREV = abbrev_table(ABBREV_BYTES)

_WIDTH = {".b8": 1, ".b16": 2, ".b32": 4, ".b64": 8}


@dataclass(frozen=True)
class Entry:
    """One value of a section: a directive, its operand text, and a mark naming its offset."""

    directive: str
    text: str
    mark: str | None = None

    @property
    def size(self) -> int:
        return _WIDTH[self.directive] * (self.text.count(",") + 1)


Die = list[Entry]


def b8(*values: int) -> Entry:
    return Entry(".b8", ", ".join(map(str, values)))


def cstring(text: str) -> Entry:
    """A NUL-terminated string as ``.b8`` bytes."""
    return b8(*text.encode("ascii"), 0)


def die(code: int, *values: Entry | str, children: Sequence[Die] = ()) -> Die:
    """A DIE: its code, its values (a string ``".b64 text"`` is one entry, ``"m:.b64 text"`` one marked ``m``), its children."""
    out: Die = [b8(code)]
    for v in values:
        if isinstance(v, str):
            mark = None
            if not v.startswith("."):
                mark, v = v.split(":", 1)
            directive, _, text = v.partition(" ")
            out.append(Entry(directive, text, mark))
        else:
            out.append(v)
    if children:
        for child in children:
            out.extend(child)
        out.append(b8(0))
    return out


def subprogram(*children: Die, function: int = 1) -> Die:
    """A subprogram DIE of the kernel (``function=1``) or the device function (0)."""
    return die(
        SUBPROGRAM,
        f".b64 $L__func_begin{function}",
        f".b64 $L__func_end{function}",
        b8(1, 0x9C),  # DW_OP_call_frame_cfa
        cstring("f"),
        children=children or [[]],
    )


def depot_var(operand: str = "__local_depot1", code: int = VAR_BLOCK) -> Die:
    """A variable at ``DW_OP_addr operand; DW_OP_plus_uconst 0`` (a block of 11 bytes)."""
    return die(code, b8(11, 0x03), f"depot:.b64 {operand}", b8(0x23, 0))


def info(
    *dies: Die,
    version: int = 2,
    address_size: int = 8,
    abbrev: str = ".b32 .debug_abbrev",
    length: int | None = None,
) -> tuple[str, dict[str, int]]:
    """A ``.debug_info`` block holding one CU (name "t") with ``dies`` as children, and the
    ``.debug_info`` offset of every marked entry. Versions 5 and up use the v5 header."""
    body: list[Entry] = [b8(CU), cstring("t")]
    for d in dies:
        body.extend(d)
    body.append(b8(0))
    if version >= 5:
        head = [Entry(".b16", str(version)), b8(1, address_size), Entry(*abbrev.split(" ", 1))]
    else:
        head = [Entry(".b16", str(version)), Entry(*abbrev.split(" ", 1)), b8(address_size)]
    size = sum(e.size for e in head + body)
    entries = [Entry(".b32", str(size if length is None else length)), *head, *body]
    marks: dict[str, int] = {}
    pos = 0
    lines = []
    for e in entries:
        if e.mark:
            marks[e.mark] = pos
        pos += e.size
        lines.append(f"{e.directive} {e.text}")
    return section(".debug_info", "\n".join(lines)), marks


def module(
    *sections: str,
    version: str = "7.5",
    target: str = "sm_75",
    address_size: str | None = ".address_size 64",
    files: str = '.file 1 "t.cu"',
    code: str = CODE,
) -> str:
    """A test module: header, :data:`CODE`, ``files`` and the given section blocks."""
    head = [f".version {version}", f".target {target}"]
    if address_size:
        head.append(address_size)
    return "\n".join(head) + "\n\n" + code + "\n" + files + "\n" + "".join(sections)


@dataclass
class Run:
    """What one ptxas run did: its exit status (negative: killed by that signal), its
    messages, the cubin it wrote as the file has it, and how long it took."""

    returncode: int
    messages: list[PtxasMessage]
    cubin: ElfContents | None
    seconds: float = 0.0

    @property
    def crashed(self) -> bool:
        """Killed by a signal (SIGSEGV ...)."""
        return self.returncode < 0

    @property
    def stderr(self) -> str:
        """ptxas's messages, one a line (``in.ptx, line 5; error : ...``; an unprefixed line as it was)."""
        return "\n".join(_message_line(m) for m in self.messages)

    def summary(self) -> str:
        """One line: ``ok`` or the exit status and ptxas's first error."""
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        if self.crashed:
            return f"signal {-self.returncode}" + (f": {lines[0]}" if lines else "")
        first = next((line for line in lines if re.search(r"error|fatal", line)), lines[0] if lines else "")
        if self.returncode == 0:
            return "ok" + (f" ({first})" if first else "")
        return f"exit {self.returncode}: {first}" if first else f"exit {self.returncode}"


def _message_line(m: PtxasMessage) -> str:
    if m.line is not None:
        return f"ptxas in.ptx, line {m.line}; {m.severity} : {m.text}"
    return m.text if m.severity == "info" else f"ptxas {m.severity} : {m.text}"


def run_ptxas(
    ptxas: Ptxas, ptx: str | bytes, args: Sequence[str] = ("-g", "-arch=sm_75"), timeout: float = 600
) -> Run:
    """Compile ``ptx`` with ``ptxas ARGS``: ``-arch=`` is required; ``-g``, ``-c`` and any
    other option are passed on."""
    arch = next((a.partition("=")[2] for a in args if a.startswith("-arch=")), None)
    if arch is None:
        raise ValueError(f"ptxas {' '.join(args)}: no -arch=")
    extra = [a for a in args if a not in ("-g", "-c") and not a.startswith("-arch=")]
    text = ptx.decode("utf-8", "surrogateescape") if isinstance(ptx, bytes) else ptx
    start = time.monotonic()
    try:
        result = ptxas.compile(
            text,
            arch=arch,
            debug="-g" in args,
            relocatable="-c" in args,
            extra=extra,
            filename="in.ptx",
            timeout=timeout,
        )
    except PtxasFailed as exc:
        return Run(exc.returncode, exc.messages, None, time.monotonic() - start)
    seconds = time.monotonic() - start
    return Run(0, result.messages, elf_contents(result.cubin, name="out.cubin"), seconds)


#: The repository's fixtures (the lint fault fixtures some cases compile).
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def fixture(path: str) -> bytes:
    """The bytes of a file under the repository's ``fixtures/``."""
    return (FIXTURES / path).read_bytes()


def line_files(data: bytes) -> tuple[list[bytes], list[tuple[bytes, int, int, int]], set[int]]:
    """Of the first unit of a ``.debug_line``: the include directories, the file entries
    (name, dir, mod_time, length) and the file numbers its rows use."""
    found = _line_files(data)
    return found.directories, found.files, found.used
