"""The outside corpus (``fixtures/corpus``): ptxdwarf against real tools on other producers' PTX.

Every file was written by a producer other than ptxdwarf (nvcc 12.4, 13.0 and 13.5, numba-cuda,
Triton, clang 14, llc 14, 19 and 22, Warp, CUTLASS DSL, ...; recipes in
``fixtures/corpus/README.md``; the cubin producers' output is read by ``test_corpus_cubins.py``).
Each check runs the CLI and the real ptxas, every llvm-dwarfdump the tests know of
(:func:`conftest.every_dwarfdump`: 14, 19, and 22 where ``$PTXDWARF_TEST_DWARFDUMP`` names it)
and eu-readelf:

``dump``
    ``ptxdwarf dump --json`` of the PTX against ``llvm-dwarfdump --debug-info`` of the cubin
    ``ptxas -g`` makes of it (ptxas keeps ``.debug_info`` byte for byte, so DIE offsets line
    up). Compared: every DIE's offset, depth and tag, the names of its attributes in order,
    and the values both tools print comparably. Normalisation: strings are compared as
    text (llvm-dwarfdump's C escapes undone); references by the offset of the DIE they name
    (ptxdwarf's ``ref``); constants and flags as integers, or by the ``DW_*`` name
    llvm-dwarfdump prints for enumerated values (ptxdwarf's ``meaning``); expressions by
    their sequence of ``DW_OP`` names and numeric operands (``DW_OP_nop`` dropped, and
    ``DW_OP_fbreg`` in the cubin taken for the ``DW_OP_addr __local_depotN`` ptxas turns
    into it; a symbol's operand, relocated in the cubin, is not compared). Not compared, because the two tools print them
    differently by design: addresses (``DW_AT_low_pc``/``high_pc`` are symbols in PTX and
    relocated values in the cubin), section offsets (``DW_AT_stmt_list``, location-list
    offsets) and file numbers (llvm-dwarfdump prints the file's path).
``rewrite-STYLE``
    ``ptxdwarf rewrite --style STYLE`` -> ``ptxas -g`` gives the same bytes in every debug
    section (``.debug_*``, ``.nv_debug_*``) and in the relocation sections that apply to them
    as the input compiled. Normalisation: ``.nv_debug_ptx_txt.HASH`` is the PTX text itself
    and is left out; ``.nv_debug_line_sass`` names it, HASH being a hash of the text, so the
    name reads ``.nv_debug_ptx_txt.N`` there, the length fields its length changes are
    blanked and the relocation offsets after it move by the change; ``.nv_debug.shared`` (in
    ``-c`` cubins: section headers, string table sizes and file offsets included) is compared
    only when both names have as many digits and both texts are as long.
``lint``
    no error-severity finding on a file ``ptxas -g`` compiles; on the files of
    :data:`LINT_MUST_FIND` (a fault a debugger gets wrong), an error finding that names it.
``check``
    ``ptxdwarf check`` says consistent (exit 0); on the files of :data:`PTXAS_FAULTS`, where
    ptxas drops labels the debug info uses, it reports exactly those labels.
``attach``, ``attach-rename``, ``attach-nodebugtarget``
    on files without any debug info: ``ptxdwarf attach`` (default, ``--rename-registers``,
    ``--no-debug-target``) -> ``ptxas -g`` accepts the output, ``lint`` gives no finding at
    all (with ``--no-debug-target``, only the target-not-debug warning, which is true: without
    ``-g`` ptxas drops the .debug_info, measured in case target-not-debug.dropped) and ``check``
    says consistent.

Every check first compiles the file with the first ptxas found that takes its ``.version``
(nvcc 13.5 and NVVM 13.5 write 9.5, which ptxas 13.0 refuses). Where ptxas refuses the file
(LLVM 14's two-string ``.file``; such files are named ``NAME.rejected.ptx`` where the producer's
output is kept next to a repaired copy), lint must report an error, and the check ends there.

What fails today is listed in :data:`KNOWN` and runs as a strict xfail: fixing the library
turns it into an unexpected pass, and the entry must then go.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from contextlib import redirect_stdout
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS as FILES
from conftest import (
    GOOD_FIXTURES,
    MOVED_LABELS,
    ROOT,
    every_dwarfdump,
    every_ptxas,
    fixture_id,
    ptxas_id,
    run_dwarfdump,
)
from elftools.elf.elffile import ELFFile
from line_tools import eu_die_differences, line_differences, unescape

from ptxdwarf.check import check as run_check
from ptxdwarf.cli import main
from ptxdwarf.cuda.ptxas import Ptxas, PtxasFailed, find_ptxas
from ptxdwarf.errors import ToolError
from ptxdwarf.ptx import needs_compile_only, parse_ptx
from ptxdwarf.ptx.module import PtxModule
from tools.ptxas_facts import within_reach

CORPUS = ROOT / "fixtures" / "corpus"
STYLES = ("nvcc", "readable", "compact")


def _rel(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def _has_sections(path: Path) -> bool:
    return re.search(r"^\s*\.section\s+\.debug_", path.read_text(), re.M) is not None


def _has_debug(path: Path) -> bool:
    text = path.read_text()
    return _has_sections(path) or re.search(r"^\s*\.loc\s", text, re.M) is not None


WITH_SECTIONS = [p for p in FILES if _has_sections(p)]
WITHOUT_DEBUG = [p for p in FILES if not _has_debug(p)]


#: (file relative to fixtures/corpus, check) -> why it fails today. Strict xfail.
KNOWN: dict[tuple[str, str], str] = {}

#: Files with a fault a debugger gets wrong and ptxas does not refuse: lint must report an
#: error finding whose message names the DIE (here: the variable).
LINT_MUST_FIND: dict[str, str] = {
    "llvm-tests/debug-addr-space.O0.ptx75.fixed.ptx": "'g'",
    # clang 19 names its format string .str, which the module defines as _$_str: ptxas writes 0
    "clang-19/hello.O0-g.sm_75.ptx": ".str",
    "clang-19/hello.O3-noopt-g.sm_75.ptx": ".str",
    # LLVM 19 still gives the .shared variable class 5 (global); LLVM 22 gives 8
    "llc-19/debug-addr-space.O0.ptx75.fixed.ptx": "'g'",
}

#: Files on which ptxas gets the debug info wrong, and what check must report exactly: the
#: labels ptxas drops or leaves at 0 (lint warns: label-at-line-zero), the ranges whose end
#: ptxas placed before their begin (it moved the early-return block; no lint can see that), and
#: the .b64 numbers of 2**32 or more whose high half it drops (lint warns: wide-value).
PTXAS_FAULTS: dict[str, set[str]] = {
    # LLVM 14 writes the DWARF 2 bit offset -1 of a packed bit field as .b64 0xffffffffffffffff
    "llvm-tests/packed_bitfields.O0.fixed.ptx": {"0xffffffffffffffff"},
    "llvm-tests/packed_bitfields.O2.fixed.ptx": {"0xffffffffffffffff"},
    "numba-nvvm-13.5/clip_copy.debugopt.ptx": {"[$L__tmp5, $L__tmp7)", "[$L__tmp6, $L__tmp8)"},
    # the label a dropped one's block leads to is relocated to that one's place (lint: label-at-line-zero)
    "numba-nvvm-13.5/clip_copy.debug.ptx": {"$L__tmp6"},
    "numba/local_hist.debug.sm_75.ptx": {"$L__tmp4"},
    "numba-nvvm-13.5/loops.debug.ptx": {"$L__tmp27", "$L__tmp28"},
    # both labels of one entry dropped: 0, 0 ends the cubin's list early
    "numba-nvvm-13.5/loops.debugopt.ptx": {
        "$L__tmp34",
        "$L__tmp38",
        "$L__tmp29",
        "$L__tmp50",
        # relocated to the very start of the code above them (lint names them too)
        "$L__tmp35",
        "$L__tmp39",
    },
    "numba-nvvm-13.5/shared_local.debugopt.ptx": {"$L__tmp7", "$L__tmp8"},
    "clang-19/templates.O3-noopt-g.sm_75.ptx": {"$L__tmp18", "$L__tmp33", "$L__tmp48"},
    # the undefined .str (lint: undefined-symbol; fix renames it to _$_str)
    "clang-19/hello.O0-g.sm_75.ptx": {"DW_OP_addr .str"},
    "clang-19/hello.O3-noopt-g.sm_75.ptx": {"DW_OP_addr .str"},
    # the same (lint: label-at-line-zero), in LLVM 22's -O2 saxpy and in Warp's -G kernels
    "llc-22/debug-info.O2.ptx": {"$L__tmp10"},
    "warp/kernels.debug.ptx": {"$L__tmp92", "$L__tmp129", "$L__tmp166", "$L__tmp209"},
}


#: ``.rejected.`` files that older ptxas releases take: the first release that refuses each.
#: Warp's trailing NUL byte: ptxas 12.0, 12.4 and 12.9 take it, 13.0 to 13.5 end with
#: "Unexpected EOF" (measured 2026-12-02).
REFUSED_FROM: dict[str, tuple[int, int]] = {"warp/kernels.release.rejected.ptx": (13, 0)}

#: (file, ptxas release) -> what check reports on that release alone, where it differs from
#: :data:`PTXAS_FAULTS` (label-at-line-zero in ptxas 12.9's placement of LLVM 22's -O0 code).
RELEASE_FAULTS: dict[tuple[str, str], set[str]] = {
    ("llc-22/debug-bool-const-location.O0.ptx", "12.9"): {"$L__tmp3"},
}


def _params(paths: list[Path], check: str) -> list[Any]:
    out = []
    for path in paths:
        reason = KNOWN.get((_rel(path), check))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(path, id=_rel(path), marks=marks))
    return out


# --- tools -----------------------------------------------------------------------------


@cache
def _ptxas_for_version(version: tuple[int, int] | None) -> Ptxas:
    return find_ptxas(version=version)


def ptxas_for(text: str) -> Ptxas:
    """The first ptxas found that takes this PTX's ``.version``."""
    return _ptxas_for_version(parse_ptx(text).version)


def compile_text(text: str, out: Path) -> Path:
    """The cubin ``ptxas -g`` makes of the text (the arch from ``.target``), written to ``out``."""
    ptxas = ptxas_for(text)
    module = parse_ptx(text)
    arch, _note = ptxas.choose_arch(module.target, None)
    out.write_bytes(ptxas.compile(text, arch=arch, relocatable=needs_compile_only(module)).cubin)
    return out


def compiled_or_refused(path: Path, out: Path) -> Path | None:
    """The cubin ``ptxas -g`` makes of the file; None when ptxas refuses it, after checking
    that lint reports an error for it (a refusal lint does not see is a missed trap)."""
    try:
        cubin: Path | None = compile_text(path.read_text(), out)
    except PtxasFailed as exc:
        assert _errors(path), f"ptxas refuses {path.name} ({exc}) but lint finds no error"
        cubin = None
    assert (cubin is None) == (".rejected." in path.name), "NAME.rejected.ptx: ptxas refuses it"
    return cubin


def cli(*args: str) -> tuple[int, str]:
    """Exit code and standard output of ``ptxdwarf ARGS``."""
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(list(args))
    return code, buf.getvalue()


_HASHED_NAME = re.compile(rb"\.nv_debug_ptx_txt\.\d+")


def _line_sass(data: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """``.nv_debug_line_sass`` with the hashed name and the unit and header lengths blanked.

    Also the (offset, change in length) of each name, to move relocation offsets alike.
    """
    raw = bytearray(data)
    pos = 0
    while pos + 10 <= len(raw):  # DWARF 2 line programs: unit_length, version, header_length
        length = int.from_bytes(raw[pos : pos + 4], "little")
        raw[pos : pos + 4] = raw[pos + 6 : pos + 10] = bytes(4)
        pos += 4 + length
    shifts = [(m.start(), len(b".nv_debug_ptx_txt.N") - len(m.group())) for m in _HASHED_NAME.finditer(raw)]
    return _HASHED_NAME.sub(b".nv_debug_ptx_txt.N", bytes(raw)), shifts


def _moved_relocations(data: bytes, shifts: list[tuple[int, int]], entry_size: int) -> bytes:
    """Elf64_Rel (16-byte) or Elf64_Rela (24-byte) entries with each offset moved past the
    renamed names before it."""
    out = bytearray(data)
    for at in range(0, len(data) - entry_size + 1, entry_size):
        offset = int.from_bytes(data[at : at + 8], "little")
        offset += sum(delta for where, delta in shifts if where < offset)
        out[at : at + 8] = offset.to_bytes(8, "little")
    return bytes(out)


def debug_sections(cubin: Path) -> dict[str, bytes]:
    """Bytes of the debug sections of a cubin and of the relocation sections that apply to them.

    ``.nv_debug_ptx_txt.HASH`` (the PTX text itself, which a rewrite changes) is not compared:
    the key ``.nv_debug_ptx_txt`` holds its name and size. The name, which ``.nv_debug_line_sass``
    quotes, is blanked there (see :func:`_line_sass`).
    """
    out: dict[str, bytes] = {}
    elf = ELFFile(io.BytesIO(cubin.read_bytes()))
    for section in elf.iter_sections():
        name = section.name
        base = re.sub(r"^\.rela?(?=\.)", "", name)
        if base.startswith(".nv_debug_ptx_txt"):
            out[".nv_debug_ptx_txt"] = f"{name} {section.data_size}".encode()
        elif base.startswith((".debug_", ".nv_debug")):
            out[name] = section.data()
    if ".nv_debug_line_sass" in out:
        out[".nv_debug_line_sass"], shifts = _line_sass(out[".nv_debug_line_sass"])
        for name, size in ((".rel.nv_debug_line_sass", 16), (".rela.nv_debug_line_sass", 24)):
            if name in out:
                out[name] = _moved_relocations(out[name], shifts, size)
    return out


# --- llvm-dwarfdump's text -------------------------------------------------------------

_DIE = re.compile(r"^0x([0-9a-f]{8}):( *)(DW_TAG_\w+|NULL)")
_ATTR = re.compile(r"^\s+(DW_AT_\w+)\s+\((.*)$")
Die = tuple[int, int, str, list[tuple[str, Any]]]


def parse_llvm_dwarfdump(text: str) -> list[Die]:
    """(offset, depth, tag, [(attribute, raw value or None if on several lines)]) of every DIE."""
    dies: list[Die] = []
    current: list[tuple[str, Any]] | None = None
    for line in text.splitlines():
        m = _DIE.match(line)
        if m is not None:
            current = None
            if m.group(3) != "NULL":
                current = []
                dies.append((int(m.group(1), 16), len(m.group(2)) // 2, m.group(3), current))
            continue
        m = _ATTR.match(line)
        if m is not None and current is not None:
            rest = m.group(2)
            current.append((m.group(1), rest[:-1] if rest.endswith(")") else None))
    return dies


def _walk(die: dict[str, Any]) -> Iterator[tuple[int, int, dict[str, Any]]]:
    stack = [(die, 0)]
    while stack:
        node, depth = stack.pop()
        yield node["offset"], depth, node
        stack.extend((child, depth + 1) for child in reversed(node["children"]))


_NUMBER = re.compile(r"0x[0-9a-f]+|[+-]?\d+")
_NOT_COMPARED = {"DW_AT_low_pc", "DW_AT_high_pc", "DW_AT_stmt_list", "DW_AT_decl_file", "DW_AT_call_file"}


def comparable(ours: dict[str, Any], theirs: str | None) -> tuple[Any, Any] | None:
    """(ptxdwarf's value, llvm-dwarfdump's value) normalised alike, or None if not comparable."""
    name, value = ours["name"], ours.get("value")
    if theirs is None or name in _NOT_COMPARED or ("symbol" in ours and "expr" not in ours):
        return None
    if "expr" in ours:
        # ptxas turns DW_OP_addr __local_depotN into DW_OP_fbreg padded with DW_OP_nop (which
        # a cubin read by both tools then holds on both sides).
        expr = [op for op in ours["expr"] if op["op"] != "DW_OP_nop"]
        depot = {
            i
            for i, op in enumerate(expr)
            if op["op"] == "DW_OP_addr" and str(op.get("symbol", "")).startswith("__local_depot")
        }
        parsed = [part.split() for part in theirs.split(", ")]
        parsed = [p for p in parsed if p and p[0] != "DW_OP_nop"]
        mine: list[tuple[str, Any]] = []
        seen: list[tuple[str, Any]] = []
        for i, op in enumerate(expr):
            other = parsed[i] if i < len(parsed) else ["<none>"]
            if i in depot and other[0] == "DW_OP_fbreg":
                other = ["DW_OP_addr"]
            # operands: numbers, unless the PTX wrote a symbol (relocated in the cubin)
            if "symbol" in op or i in depot or not all(isinstance(a, int) for a in op["args"]):
                mine.append((op["op"], None))
                seen.append((other[0], None))
            else:
                mine.append((op["op"], [a % (1 << 64) for a in op["args"]]))
                seen.append((other[0], [int(x, 0) % (1 << 64) for x in other[1:] if _NUMBER.fullmatch(x)]))
        seen += [(p[0], None) for p in parsed[len(mine) :]]
        return mine, seen
    if "ref" in ours:
        m = re.match(r"0x([0-9a-f]+)", theirs)
        return ours["ref"], int(m.group(1), 16) if m else theirs
    if isinstance(value, str):
        m = re.match(r'^"(.*)"$', theirs, re.S)
        return value, unescape(m.group(1)) if m else theirs
    if isinstance(value, bool | int):
        if theirs in ("true", "false"):
            return bool(value), theirs == "true"
        if theirs.startswith("DW_") and "meaning" in ours:
            return ours["meaning"], theirs
        m = re.fullmatch(r"(0x[0-9a-f]+|-?\d+)", theirs)
        if m:
            number = int(m.group(1), 0)
            if number != int(value) and number >> 63:
                number -= 1 << 64
            return int(value), number
    return None


def dump_differences(ptx_doc: dict[str, Any], llvm_text: str) -> list[str]:
    """What differs between ptxdwarf's reading of the PTX and llvm-dwarfdump's of the cubin."""
    ours = [entry for unit in ptx_doc["units"] if unit.get("die") for entry in _walk(unit["die"])]
    theirs = parse_llvm_dwarfdump(llvm_text)
    problems: list[str] = []
    if len(ours) != len(theirs):
        problems.append(f"{len(ours)} DIEs in the PTX, {len(theirs)} in the cubin")
    for (offset, depth, node), (t_offset, t_depth, t_tag, t_attrs) in zip(ours, theirs, strict=False):
        where = f"DIE 0x{offset:x}"
        if (offset, depth, node["tag"]) != (t_offset, t_depth, t_tag):
            problems.append(
                f"{where}: {node['tag']} at depth {depth}, llvm: {t_tag} 0x{t_offset:x} depth {t_depth}"
            )
            break
        names = [a["name"] for a in node["attributes"]]
        if names != [n for n, _v in t_attrs]:
            problems.append(f"{where}: attributes {names}, llvm: {[n for n, _v in t_attrs]}")
            continue
        for attr, (_n, raw) in zip(node["attributes"], t_attrs, strict=True):
            pair = comparable(attr, raw)
            if pair is not None and pair[0] != pair[1]:
                problems.append(f"{where} {attr['name']}: {pair[0]!r}, llvm: {pair[1]!r}")
    return problems


# --- the checks ------------------------------------------------------------------------


@pytest.mark.parametrize("path", _params(FILES, "dump"))
@pytest.mark.ptxas
@pytest.mark.slow
def test_dump_equals_llvm_dwarfdump(path: Path, tmp_path: Path, eu_readelf: str) -> None:
    """:func:`dump_differences` against every llvm-dwarfdump the tests know of (14, 19, 22
    where installed), and :func:`line_tools.eu_die_differences` against eu-readelf."""
    code, out = cli("dump", "--json", str(path))
    assert code == 0
    cubin = compiled_or_refused(path, tmp_path / "in.cubin")
    if cubin is None:
        return
    doc = json.loads(out)
    problems = [
        f"{tool}: {problem}"
        for tool in every_dwarfdump()
        for problem in dump_differences(doc, run_dwarfdump(tool, cubin, "--debug-info"))
    ]
    if doc["units"]:
        text = run_dwarfdump(eu_readelf, cubin, "--debug-dump=info")
        problems += [f"eu-readelf: {problem}" for problem in eu_die_differences(doc, text)]
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("path", _params([p for p in FILES if _has_debug(p)], "lines"))
@pytest.mark.ptxas
@pytest.mark.slow
def test_line_table_equals_llvm_dwarfdump(path: Path, tmp_path: Path, eu_readelf: str) -> None:
    """The cubin's line programs (``.debug_line``, ``.nv_debug_line_sass``) as ``dump --json``
    reads them (``lines``) against every llvm-dwarfdump the tests know of (14, 19, 22 where
    installed) and eu-readelf (:func:`line_tools.line_differences`): every row (address, line,
    column, file, is_stmt, end_sequence) and every file name. Neither tool applies CUDA
    relocations; the relocated values are the function-relative addresses they print (each
    function has a section of its own)."""
    cubin = compiled_or_refused(path, tmp_path / "in.cubin")
    if cubin is None:
        return
    code, out = cli("dump", "--json", str(cubin))
    assert code == 0
    doc = json.loads(out)
    problems = line_differences(cubin.read_bytes(), doc, every_dwarfdump(), eu_readelf, tmp_path)
    assert not problems, "\n".join(problems[:10])
    rows = [r for p in doc.get("lines", []) if p["section"] == ".debug_line" for r in p["rows"]]
    assert rows or not re.search(r"^\s*\.loc\s", path.read_text(), re.M)


def _style_params() -> list[Any]:
    out = []
    for style in STYLES:
        for param in _params(WITH_SECTIONS, f"rewrite-{style}"):
            out.append(pytest.param(param.values[0], style, id=f"{param.id}-{style}", marks=param.marks))
    return out


@pytest.mark.parametrize(("path", "style"), _style_params())
@pytest.mark.ptxas
@pytest.mark.slow
def test_rewrite_compiles_to_the_same_debug_sections(path: Path, style: str, tmp_path: Path) -> None:
    out = tmp_path / "rewritten.ptx"
    assert cli("rewrite", str(path), "-o", str(out), "--style", style)[0] == 0
    cubin = compiled_or_refused(path, tmp_path / "in.cubin")
    if cubin is None:
        return
    before = debug_sections(cubin)
    after = debug_sections(compile_text(out.read_text(), tmp_path / "out.cubin"))
    text_before, text_after = (
        before.pop(".nv_debug_ptx_txt", b"").split(),
        after.pop(".nv_debug_ptx_txt", b"").split(),
    )
    if [len(part) for part in text_before[:1]] != [len(part) for part in text_after[:1]] or text_before[
        1:
    ] != text_after[1:]:
        # section headers whose string table sizes count the hashed name's digits, whose file
        # offsets count the text's bytes
        before.pop(".nv_debug.shared", None)
        after.pop(".nv_debug.shared", None)
    assert sorted(before) == sorted(after)
    differ = [name for name in before if before[name] != after[name]]
    assert not differ, f"differ after rewrite --style {style}: {differ}"


def _errors(path: Path) -> list[dict[str, Any]]:
    code, out = cli("lint", "--json", str(path))
    assert code in (0, 1)
    return [f for f in json.loads(out) if f["severity"] == "error"]


@pytest.mark.parametrize("path", _params([p for p in FILES if _rel(p) not in LINT_MUST_FIND], "lint"))
@pytest.mark.ptxas
@pytest.mark.slow
def test_lint_finds_no_error_in_what_ptxas_compiles(path: Path, tmp_path: Path) -> None:
    if compiled_or_refused(path, tmp_path / "in.cubin") is None:
        return
    errors = _errors(path)
    assert not errors, json.dumps(errors[:5], indent=1)


def _check(path: Path) -> dict[str, Any]:
    ptxas = ptxas_for(path.read_text())
    code, out = cli("check", "--json", "--ptxas", ptxas.path, str(path))
    doc: dict[str, Any] = json.loads(out)
    assert code == 0, json.dumps({k: doc[k] for k in ("status", "notes", "differences")}, indent=1)[:3000]
    return doc


@pytest.mark.parametrize("path", _params([CORPUS / rel for rel in sorted(LINT_MUST_FIND)], "lint-finds"))
@pytest.mark.ptxas
def test_lint_reports_what_a_debugger_gets_wrong(path: Path, tmp_path: Path) -> None:
    assert compiled_or_refused(path, tmp_path / "in.cubin") is not None
    wanted = LINT_MUST_FIND[_rel(path)]
    assert any(wanted in f["message"] for f in _errors(path)), f"no error finding names {wanted}"


@pytest.mark.parametrize("path", _params([p for p in FILES if _rel(p) not in PTXAS_FAULTS], "check"))
@pytest.mark.ptxas
@pytest.mark.slow
def test_check_says_consistent(path: Path, tmp_path: Path) -> None:
    if compiled_or_refused(path, tmp_path / "in.cubin") is None:
        return
    report = _check(path)
    assert report["consistent"]
    # a file with line information has its rows matched (line 0 alone makes none)
    if re.search(r"^\s*\.loc\s+\d+\s+[1-9]", path.read_text(), re.M):
        assert report["line_rows"] > 0


@pytest.mark.parametrize("rel", sorted(PTXAS_FAULTS))
@pytest.mark.ptxas
def test_check_reports_what_ptxas_gets_wrong(rel: str) -> None:
    path = CORPUS / rel
    ptxas = ptxas_for(path.read_text())
    code, out = cli("check", "--json", "--ptxas", ptxas.path, str(path))
    doc = json.loads(out)
    assert (code, doc["status"]) == (1, "differences")
    assert {d["ptx"] for d in doc["differences"]} == PTXAS_FAULTS[rel]


def _release(version: str) -> tuple[int, int]:
    """``13.0`` as (13, 0); (0, 0) for a release ptxas did not name."""
    major, _, minor = version.partition(".")
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else (0, 0)


def _newer_than(tool: Ptxas, module: PtxModule) -> bool:
    """Whether the module's ``.target`` is newer than every architecture ``tool`` has."""
    try:
        tool.choose_arch(module.target, None, address_size=module.address_size)
    except ToolError:
        return True
    return False


@pytest.mark.parametrize("release_ptxas", every_ptxas(), ids=ptxas_id)
@pytest.mark.ptxas
@pytest.mark.slow
def test_check_says_the_same_on_every_release(release_ptxas: str) -> None:
    """check on every corpus file and every fixture of ptxas-accepted PTX, with each ptxas the
    tests know of (in CI, CUDA 12.0 to 13.5), the file lowered to a ``.version`` that ptxas
    reads: consistent, or on the files of :data:`PTXAS_FAULTS` exactly those faults; ptxas
    refuses the ``.rejected.`` files. Files whose ``.target`` is newer than every architecture
    of that ptxas are left out (nvcc 13.0's sm_100 files on CUDA 12), and counted."""
    tool = Ptxas(release_ptxas)
    problems: list[str] = []
    newer = 0
    paths = [*FILES, *GOOD_FIXTURES]
    for path in paths:
        text, _lowered = within_reach(path.read_text(), tool.max_version)
        assert isinstance(text, str)
        module = parse_ptx(text)
        if _newer_than(tool, module):
            newer += 1
            continue
        rel = _rel(path) if path.is_relative_to(CORPUS) else fixture_id(path)
        release = tool.version
        refused = ".rejected." in rel and _release(release) >= REFUSED_FROM.get(rel, (0, 0))
        try:
            report = run_check(text, filename=path.name, ptxas=tool)
        except PtxasFailed as exc:
            if not refused:
                problems.append(f"{rel}: refused: {exc}")
            continue
        if refused:
            problems.append(f"{rel}: compiled, though ptxas {find_ptxas().version} refuses it")
        got = {d.ptx for d in report.differences}
        want = RELEASE_FAULTS.get((rel, release)) or PTXAS_FAULTS.get(rel) or MOVED_LABELS.get(rel, set())
        if got != want:
            problems.append(f"{rel}: {sorted(got)[:4]}, expected {sorted(want)}")
    assert not problems, "\n".join(problems)
    assert newer < len(paths) // 2, (
        f"{newer} of {len(paths)} files newer than every architecture of {tool.path}"
    )


_ATTACH = {
    "attach": (),
    "attach-rename": ("--rename-registers",),
    "attach-nodebugtarget": ("--no-debug-target",),
}


def _attach_params() -> list[Any]:
    out = []
    for check in _ATTACH:
        for param in _params(WITHOUT_DEBUG, check):
            out.append(pytest.param(param.values[0], check, id=f"{param.id}-{check}", marks=param.marks))
    return out


@pytest.mark.parametrize(("path", "check"), _attach_params())
@pytest.mark.ptxas
@pytest.mark.slow
def test_attach_gives_what_ptxas_lint_and_check_accept(path: Path, check: str, tmp_path: Path) -> None:
    out = tmp_path / f"{path.stem}.debug.ptx"
    assert cli("attach", str(path), "-o", str(out), *_ATTACH[check])[0] == 0
    try:
        compile_text(out.read_text(), tmp_path / "out.cubin")
    except PtxasFailed as exc:
        pytest.fail(f"ptxas -g rejects the attach output: {exc}")
    code, findings = cli("lint", "--json", str(out))
    found = [(f["rule"], f["severity"]) for f in json.loads(findings)]
    expected = [("target-not-debug", "warning")] if check == "attach-nodebugtarget" else []
    assert (code, found) == (1 if expected else 0, expected), findings[:3000]
    assert _check(out)["consistent"]


_LOC_LINE = re.compile(r"^\s*\.loc\s[^\n]*", re.M)


def _line_info_only(path: Path) -> bool:
    """Line information without DWARF that describes variables: .loc, and no variable DIE."""
    text = path.read_text()
    if not _LOC_LINE.search(text) or ".rejected." in path.name:
        return False
    return not re.search(r"DW_TAG_(?:variable|formal_parameter)", cli("dump", str(path))[1])


LINE_INFO = [p for p in FILES if _line_info_only(p)]


@pytest.mark.parametrize("path", _params(LINE_INFO, "attach-lines"))
@pytest.mark.ptxas
@pytest.mark.slow
def test_attach_keeps_the_line_information(path: Path, tmp_path: Path) -> None:
    """attach, no flags, on line-info PTX (nvcc -lineinfo, Triton, numba lineinfo=True, clang
    line tables): every .loc of the input stays, in order; ptxas -g accepts; lint finds no error;
    check is consistent, line table included."""
    out = tmp_path / f"{path.stem}.debug.ptx"
    assert cli("attach", str(path), "-o", str(out))[0] == 0
    text = out.read_text()
    assert [m.strip() for m in _LOC_LINE.findall(text)] == [
        m.strip() for m in _LOC_LINE.findall(path.read_text())
    ]
    try:
        compile_text(text, tmp_path / "out.cubin")
    except PtxasFailed as exc:
        pytest.fail(f"ptxas -g rejects the attach output: {exc}")
    assert not [f for f in _errors(out)], _errors(out)[:3]
    report = _check(out)
    assert report["consistent"] and report["line_rows"] > 0, report["differences"][:3]


def test_corpus_size() -> None:
    """The corpus holds at least 80 files from at least 6 producers, and stays small."""
    producers = {p.parent.name for p in FILES}
    assert len(FILES) >= 80 and len(producers) >= 6, (len(FILES), sorted(producers))
    assert WITHOUT_DEBUG and any(".rejected." in p.name for p in FILES)
    sizes = {_rel(p): p.stat().st_size for p in FILES}
    assert max(sizes.values()) < 512 * 1024
    assert sum(sizes.values()) < 8 * 1024 * 1024
    readme = (CORPUS / "README.md").read_text()
    for producer in producers:
        assert f"`{producer}/`" in readme, f"{producer}: no recipe in fixtures/corpus/README.md"
