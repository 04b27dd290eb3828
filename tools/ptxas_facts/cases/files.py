"""Cases on sections, .file, characters, .version/.target and the -g/debug switches."""

from __future__ import annotations

from collections.abc import Callable

from .. import harness as h
from ..case import accepts, bytes_at, fails, rejects
from ..harness import ABBREV, Run, die, info, module, section
from ._base import case, in_str, with_info

__all__: list[str] = []

# --- sections --------------------------------------------------------------------------------------

case(
    "duplicate-section.second-str-dropped",
    "duplicate-section",
    "a second .debug_str block -> silently dropped",
    lambda: with_info(section(".debug_str", ".b8 1, 2"), section(".debug_str", ".b8 3, 4")),
    bytes_at(".debug_str", 0, b"\x01\x02", size=4),
)
case(
    "duplicate-section.second-info",
    "duplicate-section",
    "a second .debug_info block -> a second ELF section named .debug_info",
    lambda: module(ABBREV, info()[0], info()[0]),
    lambda run: (
        run.cubin is not None and run.cubin.count(".debug_info") == 2,
        f"{run.cubin.count('.debug_info')} .debug_info sections" if run.cubin else run.summary(),
    ),
)
_PUBNAMES = ".b32 18\n.b16 2\n.b32 .debug_info\n.b32 12\n.b32 11\n.b8 {},0\n.b32 0"
case(
    "duplicate-section.pubnames-differ",
    "duplicate-section",
    "two .debug_pubnames blocks that differ (LLVM writes one per compile unit) -> fatal "
    "'overlapping non-identical data'",
    lambda: with_info(
        section(".debug_pubnames", _PUBNAMES.format(102)), section(".debug_pubnames", _PUBNAMES.format(103))
    ),
    rejects("overlapping non-identical data"),
)
case(
    "duplicate-section.pubnames-identical",
    "duplicate-section",
    "two identical .debug_pubnames blocks -> accepted",
    lambda: with_info(
        section(".debug_pubnames", _PUBNAMES.format(102)), section(".debug_pubnames", _PUBNAMES.format(102))
    ),
    accepts(),
)
case(
    "duplicate-section.loc-overlay",
    "duplicate-section",
    "a second .debug_loc block, longer, equal where they overlap -> laid over the first at offset 0 "
    "(the section is the longer one)",
    lambda: with_info(section(".debug_loc", ".b64 0, 0"), section(".debug_loc", ".b64 0, 0, 7")),
    bytes_at(".debug_loc", 16, b"\x07" + bytes(7)),
)
case(
    "duplicate-section.loc-differ",
    "duplicate-section",
    "two .debug_loc blocks that differ where they overlap -> fatal 'overlapping non-identical data'",
    lambda: with_info(section(".debug_loc", ".b64 0, 0"), section(".debug_loc", ".b64 1, 0")),
    rejects("overlapping non-identical data"),
)
case(
    "duplicate-section.loc-label-offsets",
    "duplicate-section",
    "two .debug_loc blocks with different labels at one place, both at offset 0 of their functions -> "
    "accepted (ptxas compares each label's offset in its function)",
    lambda: with_info(
        section(".debug_loc", ".b64 $L__func_begin1\n.b64 0"),
        section(".debug_loc", ".b64 $L__func_begin0\n.b64 0"),
    ),
    accepts(),
)
case(
    "duplicate-section.loc-label-vs-number",
    "duplicate-section",
    "a label past its function's start over a number 0 in a second .debug_loc block -> fatal "
    "'overlapping non-identical data'",
    lambda: with_info(
        section(".debug_loc", ".b64 $L__func_end0\n.b64 0"), section(".debug_loc", ".b64 0\n.b64 0")
    ),
    rejects("overlapping non-identical data"),
)
case(
    "duplicate-section.second-abbrev-dropped",
    "duplicate-section",
    "a second .debug_abbrev block that differs -> silently dropped",
    lambda: with_info(section(".debug_abbrev", ".b8 9, 17, 0, 0, 0, 0")),
    accepts(),
)
case(
    "producer-debug-line.discarded",
    "producer-debug-line",
    "a producer's .debug_line -> discarded, ptxas writes its own",
    lambda: with_info(section(".debug_line", ".b8 1, 2, 3, 4")),
    bytes_at(".debug_line", 0, lambda got: got[:4] != b"\x01\x02\x03\x04", size=4),
)
case(
    "producer-debug-frame.fatal",
    "producer-debug-frame",
    "a non-empty .debug_frame -> fatal 'overlapping non-identical data'",
    lambda: with_info(section(".debug_frame", ".b8 1, 2, 3, 4")),
    rejects("overlapping non-identical data"),
)
case(
    "sections.debug-frame-empty",
    "producer-debug-frame",
    "an empty .debug_frame block -> accepted",
    lambda: with_info(section(".debug_frame", "")),
    accepts(),
)
case(
    "sections.unknown-name",
    "sections.any-name",
    ".section .debug_foo -> copied to the cubin as given",
    lambda: with_info(section(".debug_foo", ".b8 7, 8")),
    bytes_at(".debug_foo", 0, b"\x07\x08"),
)
case(
    "sections.no-abbrev",
    "sections.no-abbrev",
    ".debug_info without .debug_abbrev -> the CU is skipped with a warning",
    lambda: module(info()[0]),
    lambda run: (run.returncode == 0 and "debug_abbrev section not found" in run.stderr, run.summary()),
)

# --- .file, characters, header ---------------------------------------------------------------------

_FILES = '.file 1 "a.cu"\n.file 3 "c.cu"\n.file 7 "g.cu"'


def _file_gaps(run: Run) -> tuple[bool, str]:
    data = run.cubin.get(".debug_line") if run.cubin else None
    if data is None:
        return False, run.summary()
    _, files, used = h.line_files(data)
    names = [f[0].decode() for f in files]
    return names == [
        "a.cu",
        "c.cu",
        "g.cu",
    ] and 7 in used, f"file_names {names}; rows use files {sorted(used)}"


case(
    "file-index.gaps",
    "file-index",
    ".file 1, 3, 7 and .loc 7 -> file_names [a, c, g] numbered 1-3, rows still say 7",
    lambda: with_info(files=_FILES, code=h.CODE.replace(".loc 1 5 0", ".loc 7 5 0")),
    _file_gaps,
)
case(
    "file-index.duplicate",
    "file-index",
    "two .file 1 -> 'Duplicate file index'",
    lambda: with_info(files='.file 1 "a.cu"\n.file 1 "b.cu"'),
    rejects("Duplicate file index"),
)
case(
    "file-two-strings.llvm",
    "file-two-strings",
    '.file 1 "dir" "name" -> parse error',
    lambda: with_info(files='.file 1 "/tmp" "t.cu"'),
    rejects("Parsing error"),
)
case(
    "non-ascii.comment",
    "non-ascii-comment",
    "a non-ASCII byte in a comment -> fatal 'Unexpected non-ASCII character'",
    lambda: with_info().encode("ascii") + "// caf\u00e9\n".encode("utf-8"),
    rejects("non-ASCII character"),
    holds_on=("12.9", "13.0"),
)
case(
    "non-ascii.file-name",
    "non-ascii",
    "a non-ASCII .file name -> fatal 'Unexpected non-ASCII character' (ptxas 12.4: killed by a signal)",
    lambda: with_info(files='.file 1 "caf\u00e9.cu"').encode("utf-8"),
    fails("non-ASCII character"),
    holds_on=("12.4", "12.9", "13.0", "13.4", "13.5"),
)


def _file_names(run: Run) -> tuple[bool, str]:
    if run.cubin is None or run.cubin.get(".debug_line") is None:
        return False, run.summary()
    _dirs, files, _used = h.line_files(run.cubin.get(".debug_line") or b"")
    names = [f[0] for f in files]
    return names == [b"251.cu"], f"file names {names}"


case(
    "non-ascii.file-name-escaped",
    "non-ascii",
    '.file 1 "caf\\303\\251.cu" (the bytes as octal escapes) -> accepted, but the name is "251.cu": a '
    "backslash separates directories, there is no escape",
    lambda: with_info(files='.file 1 "caf\\303\\251.cu"'),
    _file_names,
)
case(
    "syntax.nul-in-comment",
    "syntax.nul",
    "a NUL byte in a comment -> fatal 'Unexpected EOF' (ptxas 12: 'unexpected EOF while scanning')",
    lambda: with_info().encode("ascii") + b"// a\x00b\n",
    rejects("(?i)unexpected EOF"),
)
case(
    "trailing-nul.end",
    "trailing-nul",
    "a NUL byte after the last line (NVRTC's output as written to disk) -> fatal 'Unexpected EOF'",
    lambda: with_info().encode("ascii") + b"\x00",
    rejects("(?i)unexpected EOF"),
    holds_on=("13.0", "13.4", "13.5"),
)
case(
    "trailing-nul.end-no-newline",
    "trailing-nul",
    "a NUL byte right after the last '}' (no line end) -> fatal 'Unexpected EOF'",
    lambda: with_info().rstrip().encode("ascii") + b"\x00",
    rejects("(?i)unexpected EOF"),
    holds_on=("13.0", "13.4", "13.5"),
)
case(
    "syntax.crlf",
    "syntax.crlf",
    "CRLF line ends -> accepted",
    lambda: with_info(section(".debug_str", ".b8 1")).replace("\n", "\r\n"),
    accepts(),
)

_S = section(".debug_str", "$L__a: .b8 97, 0\n$L__b: .b8 98, 0\n.b32 $L__b-$L__a")
case(
    "version-too-low.labels-7.0",
    "version-too-low",
    "a label in a section at .version 6.5 -> 'requires PTX ISA .version 7.0'",
    lambda: with_info(section(".debug_str", "$L__a: .b8 97, 0"), version="6.5"),
    rejects(r"Defining labels in \.section' requires PTX ISA \.version 7\.0"),
)
case(
    "version-too-low.difference-7.5",
    "version-too-low",
    "$L__b-$L__a at .version 7.4 -> 'requires PTX ISA .version 7.5'",
    lambda: with_info(_S, version="7.4"),
    rejects(r"labels1 - labels2 expression in \.section' requires PTX ISA \.version 7\.5"),
)
case(
    "version-too-low.difference-at-7.5",
    "version-too-low",
    "$L__b-$L__a at .version 7.5 -> accepted",
    lambda: with_info(_S, version="7.5"),
    accepts(),
)
case(
    "header.max-version-9.0",
    "header.max-version",
    ".version 9.1 -> 'Unsupported .version 9.1' (13.0 reads up to 9.0)",
    lambda: with_info(version="9.1"),
    rejects(r"Unsupported \.version 9\.1"),
    holds_on=("12.4", "12.9", "13.0"),
)
case(
    "target-not-debug.dropped",
    "target-not-debug",
    "no -g and .target without debug -> no .debug_info in the cubin",
    lambda: with_info(),
    accepts(lambda r: r.cubin is not None and r.cubin.get(".debug_info") is None),
    args=("-arch=sm_75",),
)
case(
    "target-not-debug.line-table-kept",
    "target-not-debug",
    "no -g and .target without debug -> the cubin still has the .debug_line ptxas makes from .loc",
    lambda: with_info(),
    accepts(
        lambda r: (
            r.cubin is not None
            and r.cubin.get(".debug_info") is None
            and r.cubin.get(".debug_line") is not None
        )
    ),
    args=("-arch=sm_75",),
)
case(
    "target-not-debug.debug-target",
    "target-not-debug",
    "no -g, .target sm_75, debug -> .debug_info kept",
    lambda: with_info(target="sm_75, debug"),
    accepts(lambda r: r.cubin is not None and r.cubin.get(".debug_info") is not None),
    args=("-arch=sm_75",),
)
case(
    "debug-target-without-info.error",
    "debug-target-without-info",
    ".target sm_75, debug and no debug section -> 'Debug information not found'",
    lambda: module(target="sm_75, debug"),
    rejects("Debug information not found in presence of .target debug"),
)


# --- more .file ------------------------------------------------------------------------------------


def _line_table(
    want: Callable[[list[bytes], list[tuple[bytes, int, int, int]]], bool],
) -> Callable[[Run], tuple[bool, str]]:
    def check(run: Run) -> tuple[bool, str]:
        data = run.cubin.get(".debug_line") if run.cubin else None
        if data is None:
            return False, run.summary()
        dirs, files, _ = h.line_files(data)
        return want(
            dirs, files
        ), f"dirs {[d.decode() for d in dirs]}, files {[(f[0].decode(), f[1], f[2], f[3]) for f in files]}"

    return check


case(
    "file.absolute-path",
    "file.split",
    '.file 1 "/a/b/t.cu" -> include directory /a/b, file t.cu in directory 1',
    lambda: with_info(files='.file 1 "/a/b/t.cu"'),
    _line_table(lambda d, f: d == [b"/a/b"] and f[0][:2] == (b"t.cu", 1)),
)
case(
    "file.no-escapes",
    "file.split",
    '.file 1 "C:\\\\x\\\\t.cu" -> directory C:\\\\x\\ (no escape processing), file t.cu',
    lambda: with_info(files='.file 1 "C:\\\\x\\\\t.cu"'),
    _line_table(lambda d, f: d == [b"C:\\\\x\\"] and f[0][0] == b"t.cu"),
)
case(
    "file.empty-name",
    "file.empty-name",
    '.file 1 "" -> no file entry at all',
    lambda: with_info(files='.file 1 ""'),
    _line_table(lambda _d, f: f == []),
)
case(
    "file.time-and-length",
    "file.time-and-length",
    '.file 1 "t.cu", 123, 456 -> mod_time 123, length 456',
    lambda: with_info(files='.file 1 "t.cu", 123, 456'),
    _line_table(lambda _d, f: f[0][2:] == (123, 456)),
)
case(
    "file.md5",
    "file.md5",
    ".file 1 \"t.cu\" md5 0x... (DWARF 5 style) -> Parsing error near 'md5'",
    lambda: with_info(files='.file 1 "t.cu" md5 0x0123456789abcdef0123456789abcdef'),
    rejects("Parsing error near 'md5'"),
)
case(
    "file.none",
    "file.none",
    "no .file at all -> the warning '.loc directive without .file directive'",
    lambda: with_info(files=""),
    lambda run: (
        run.returncode == 0 and ".loc directive without .file directive" in run.stderr,
        run.summary(),
    ),
    holds_on=("12.4", "12.9", "13.0", "13.4", "13.5"),
)

# --- characters --------------------------------------------------------------------------------------

case(
    "syntax.vertical-tab",
    "syntax.vertical-tab",
    "a vertical tab as whitespace -> Parsing error near ''",
    in_str(".b8\v1"),
    rejects("Parsing error near '\v?'"),
)
case(
    "syntax.control-in-comment",
    "syntax.control-in-comment",
    "0x01 and 0x7f in a comment -> accepted",
    lambda: with_info() + "// a\x01b\x7fc\n",
    accepts(),
)
case(
    "syntax.no-final-newline",
    "syntax.no-final-newline",
    "no newline at the end of the file -> accepted",
    lambda: with_info().rstrip("\n"),
    accepts(),
)

# --- .version, .target, -arch ----------------------------------------------------------------------------

case(
    "header.target-sm73",
    "header.target",
    ".target sm_73 -> 'Unsupported .target'",
    lambda: with_info(target="sm_73"),
    rejects("Unsupported .target 'sm_73'"),
)
case(
    "header.version-6.2-sm75",
    "header.target",
    ".version 6.2 with .target sm_75 -> 'does not support .target sm_75'",
    lambda: with_info(version="6.2"),
    rejects("PTX .version 6.2 does not support .target sm_75"),
)
case(
    "header.target-newer-than-arch",
    "header.target",
    ".target sm_80 compiled with -arch=sm_75 -> 'SM version specified by .target is higher'",
    lambda: with_info(target="sm_80"),
    rejects("SM version specified by .target is higher"),
)
case(
    "header.old-target",
    "header.target",
    ".version 3.0, .target sm_30, debug, compiled with -arch=sm_75 -> accepted",
    lambda: module(ABBREV, info()[0], version="3.0", target="sm_30, debug"),
    accepts(),
)
case(
    "header.arch-sm52",
    "header.arch",
    "-arch=sm_52 -> \"Value 'sm_52' is not defined for option 'gpu-name'\"",
    lambda: with_info(),
    rejects("Value 'sm_52' is not defined for option 'gpu-name'"),
    args=("-g", "-arch=sm_52"),
    holds_on=("13.0", "13.4", "13.5"),
)
case(
    "target-not-debug.g-keeps-info",
    "target-not-debug",
    "-g with a .target without debug -> .debug_info kept",
    lambda: with_info(),
    accepts(lambda r: r.cubin is not None and r.cubin.get(".debug_info") is not None),
)
case(
    "sections.empty-info",
    "sections.empty-info",
    "an empty .debug_info block -> accepted, an empty section",
    lambda: module(ABBREV, section(".debug_info", "")),
    accepts(),
)
case(
    "sections.no-dot",
    "sections.no-dot",
    ".section debug_str -> Parsing error near 'debug_str'",
    lambda: with_info(section("debug_str", ".b8 1")),
    rejects("Parsing error near 'debug_str'"),
)
case(
    "sections.dwo",
    "sections.dwo",
    ".section .debug_info.dwo -> Parsing error near '.dwo'",
    lambda: with_info(section(".debug_info.dwo", ".b8 1")),
    rejects("Parsing error near '.dwo'"),
)
case(
    "sections.order",
    "sections.order",
    ".debug_info before .debug_abbrev -> accepted",
    lambda: module(info(die(h.VAR_DATA4, ".b32 7"))[0], ABBREV),
    bytes_at(".debug_info", 15, bytes.fromhex("07000000")),
)


# --- .loc: inlined code and file numbers ------------------------------------------------------------

_ADD = "\tadd.s32 %r3, %r1, %r2;\n"
_NAME = section(".debug_str", "$L__fn0: .b8 102, 0")


def _inlined(
    loc: str, version: str = "7.5", names: str = _NAME, call_site: str = "\t.loc 1 2 0\n"
) -> Callable[[], str]:
    """_Z3addii with its add.s32 at ``loc`` (an inlined ``.loc``), after a ``.loc 1 2 0`` row."""
    code = h.CODE.replace(_ADD, f"{call_site}\tmov.u32 %r3, %r3;\n\t{loc}\n{_ADD}", 1)
    return lambda: module(names, version=version, code=code)


case(
    "inline-loc.accepted",
    "inline-loc",
    ".loc 1 12 1, function_name $L__fn0 (a .debug_str label), inlined_at 1 2 0 (a location a preceding .loc "
    "used), .version 7.0 -> accepted",
    _inlined(".loc 1 12 1, function_name $L__fn0, inlined_at 1 2 0", version="7.0"),
    accepts(),
)
case(
    "inline-loc.version-6.5",
    "inline-loc",
    "the same at .version 6.5 -> 'Line information of inline functions' requires PTX ISA .version 7.0",
    _inlined(".loc 1 12 1, function_name $L__fn0, inlined_at 1 2 0", version="6.5"),
    rejects(r"Line information of inline functions' requires PTX ISA \.version 7\.0"),
)
case(
    "inline-loc.without-function-name",
    "inline-loc",
    ".loc 1 12 1, inlined_at 1 2 0 (no function_name) -> syntax error",
    _inlined(".loc 1 12 1, inlined_at 1 2 0"),
    rejects(r"Parsing error near 'inlined_at'"),
)
case(
    "inline-loc.call-site-unused",
    "inline-loc",
    "inlined_at 1 3 0, a location no preceding .loc used -> 'must be used in a preceding .loc directive'",
    _inlined(".loc 1 12 1, function_name $L__fn0, inlined_at 1 3 0"),
    rejects(r"used in inlined_at directive must be used in a preceding \.loc directive"),
)
_ST = "\tst.global.u32 [%rd2], %r3;\n"
case(
    "inline-loc.call-site-in-earlier-function",
    "inline-loc",
    "inlined_at 1 1 0 in _Z4testPi, a location only _Z3addii (earlier in the text) used -> accepted (the "
    "preceding .loc may be in another function)",
    lambda: module(
        _NAME, code=h.CODE.replace(_ST, "\t.loc 1 12 1, function_name $L__fn0, inlined_at 1 1 0\n" + _ST, 1)
    ),
    accepts(),
    args=("-g", "-c", "-arch=sm_75"),
)
case(
    "inline-loc.unresolved-name",
    "inline-loc",
    "function_name $L__nosuch (defined nowhere) -> 'Unresolved label ... used in function_name attribute'",
    _inlined(".loc 1 12 1, function_name $L__nosuch, inlined_at 1 2 0"),
    rejects(r"Unresolved label '\$L__nosuch' used in function_name attribute"),
)
case(
    "inline-loc.name-outside-str",
    "inline-loc",
    "function_name $L__fn0 defined in .debug_loc (a unit in .debug_info beside it), not .debug_str, -g -c -> "
    "fatal 'reference to deleted symbol' (without -c it compiles)",
    _inlined(
        ".loc 1 12 1, function_name $L__fn0, inlined_at 1 2 0",
        names=ABBREV + info()[0] + section(".debug_loc", "$L__fn0: .b8 102, 0"),
    ),
    rejects(r"reference to deleted symbol"),
    args=("-g", "-c", "-arch=sm_75"),
)


def _file_numbers(run: Run) -> tuple[bool, str]:
    if run.cubin is None or run.cubin.get(".debug_line") is None:
        return False, run.summary()
    _dirs, files, used = h.line_files(run.cubin.get(".debug_line") or b"")
    return 3 in used and len(files) == 1, f"{len(files)} file(s) in the table, rows use {sorted(used)}"


case(
    "loc-file-undeclared.accepted",
    "loc-file-undeclared",
    ".loc 3 12 1 with only .file 1 -> accepted; the line table's rows use file 3, which its one-file table "
    "lacks",
    lambda: module(code=h.CODE.replace(_ADD, "\t.loc 3 12 1\n" + _ADD, 1)),
    _file_numbers,
)
