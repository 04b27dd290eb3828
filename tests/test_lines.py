"""A cubin's line table (``.debug_line``) read by ptxdwarf, against llvm-dwarfdump and the PTX."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, nvdisasm, run_dwarfdump
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.dwarf
import ptxdwarf.ptx
from ptxdwarf.cli import main
from ptxdwarf.cuda.cubin import CubinImages
from ptxdwarf.cuda.ptxas import Ptxas
from ptxdwarf.dwarf.forms import sleb_bytes, uleb_bytes
from ptxdwarf.dwarf.image import SectionImage
from ptxdwarf.dwarf.lines import line_starts, read_line_programs
from ptxdwarf.errors import DwarfError

_LOC_INLINED = re.compile(
    r"^\s*\.loc\s+\d+\s+\d+\s+\d+\s*,\s*function_name\s+(\S+?)\s*,\s*inlined_at\s+(\d+)\s+(\d+)", re.M
)


@pytest.fixture(scope="module")
def rich_lineinfo(ptxas_tool: Ptxas, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """nvcc -lineinfo's rich module (inlined templates and an inlined atomicAdd), compiled
    with -lineinfo."""
    text = (FIXTURES / "nvcc" / "rich.lineinfo.sm_75.ptx").read_text()
    cubin = tmp_path_factory.mktemp("lines") / "rich.cubin"
    cubin.write_bytes(ptxas_tool.compile(text, arch="sm_75", debug=False, extra=["-lineinfo"]).cubin)
    return text, cubin


@pytest.mark.ptxas
def test_inlined_rows_name_the_call_the_ptx_gives(rich_lineinfo: tuple[str, Path]) -> None:
    """Each row of inlined code names its function and its call row; the call row's file and
    line are those of the ``inlined_at`` of a ``.loc`` that names that function."""
    text, cubin = rich_lineinfo
    module = ptxdwarf.ptx.parse_ptx(text)
    labels = module.images()[".debug_str"].labels
    strings = module.images()[".debug_str"].data
    expected = set()
    for label, file, line in _LOC_INLINED.findall(text):
        start = labels[label]
        expected.add((strings[start : strings.index(0, start)].decode(), int(file), int(line)))
    info = ptxdwarf.read(cubin)
    assert info.lines is not None and info.strings is not None
    seen = set()
    for program in (p for p in info.lines if p.section == ".debug_line"):
        for row, at in zip(program.rows, program.call_sites(), strict=True):
            if not row.context:
                continue
            assert at is not None, row
            call = program.rows[at]
            name = info.strings.lookup(row.function_name or 0)
            assert name is not None
            seen.add((name.decode(), call.file, call.line))
    assert seen and seen <= expected


def test_rows_equal_llvm_dwarfdump(rich_lineinfo: tuple[str, Path], llvm_dwarfdump: str) -> None:
    _, cubin = rich_lineinfo
    theirs = run_dwarfdump(llvm_dwarfdump, cubin, "--debug-line")
    rows = re.findall(r"^0x([0-9a-f]{16})\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s*(.*)$", theirs, re.M)
    info = ptxdwarf.read(cubin)
    assert info.lines is not None
    ours = [
        (r.address, r.line, r.column, r.file, r.end_sequence)
        for p in info.lines
        if p.section == ".debug_line"
        for r in p.rows
    ]
    assert ours == [
        (int(a, 16), int(l), int(c), int(f), "end_sequence" in flags) for a, l, c, f, flags in rows
    ]
    assert len(ours) > 100
    # ptxas's header ends with the 4-byte .debug_str offset llvm-dwarfdump does not know
    assert "unknown data in line table prologue" in theirs or info.lines[0].str_offset is not None


def test_dump_debug_line(rich_lineinfo: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, cubin = rich_lineinfo
    assert main(["dump", "--debug-line", str(cubin)]) == 0
    out = capsys.readouterr().out
    assert ".debug_line contents:" in out and ".debug_info" not in out
    assert re.search(r"_ZNK3VecIdLi2EE3dotERKS0_ inlined at file 1 line 197$", out, re.M)
    assert main(["dump", "--debug-line", str(FIXTURES / "nvcc" / "rich.sm_75.ptx")]) == 0
    assert "ptxdwarf reads no PTX .debug_line" in capsys.readouterr().out


@pytest.mark.parametrize("cut", [3, 9, 20, 40])
def test_a_cut_program_is_one_error(rich_lineinfo: tuple[str, Path], cut: int) -> None:
    info = ptxdwarf.read(rich_lineinfo[1])
    assert info.sections is not None
    data = info.sections[".debug_line"].data
    # the unit length still claims the whole program
    with pytest.raises(DwarfError, match=r"\.debug_line"):
        read_line_programs(SectionImage(".debug_line", data[:cut] if cut < 10 else data[: len(data) // cut]))


def test_version_5_is_refused() -> None:
    data = bytearray(40)
    data[0:4] = (36).to_bytes(4, "little")
    data[4:6] = (5).to_bytes(2, "little")
    with pytest.raises(DwarfError, match="version 5"):
        read_line_programs(SectionImage(".debug_line", bytes(data)))


# --- the Python API ------------------------------------------------------------------------

_KERNEL = """\
.version 7.0
.target sm_75
.address_size 64
.file 1 "/src/k.cu"

.visible .entry _Z1kPi(.param .u64 _Z1kPi_param_0)
{
\t.reg .b32 %r<3>;
\t.reg .b64 %rd<2>;
\t.loc 1 5 3
\tld.param.u64 %rd1, [_Z1kPi_param_0];
\t.loc 1 6 3
\tld.global.u32 %r1, [%rd1];
\t.loc 1 7 3
\tadd.s32 %r2, %r1, 1;
\t.loc 1 8 3
\tst.global.u32 [%rd1], %r2;
\t.loc 1 9 1
\tret;
}
"""


def test_function_lines_without_a_gpu(ptxas_tool: Ptxas) -> None:
    from ptxdwarf.testing import assert_function_lines, compile_ptx

    cubin = compile_ptx(_KERNEL, ptxas=ptxas_tool, debug=False, line_info=True)
    table = cubin.line_table()
    assert table.functions() == ["_Z1kPi"]
    lines = {r.line for r in table.lines_of("_Z1kPi")}
    # ptxas -lineinfo optimises: which lines keep a row is its choice; each row is a .loc's
    assert lines and lines <= {5, 6, 7, 8, 9}
    assert_function_lines(cubin, "_Z1kPi", lines, file="k.cu")
    with pytest.raises(AssertionError, match=r"lines missing \[42\]"):
        assert_function_lines(cubin, "_Z1kPi", {*lines, 42})
    with pytest.raises(AssertionError, match="no line-table rows for nosuch"):
        assert_function_lines(cubin, "nosuch", {5})
    for line in lines:
        assert all(fn == "_Z1kPi" for fn, _ in table.addresses_of(line, "k.cu"))
    debug = compile_ptx(_KERNEL, ptxas=ptxas_tool)  # ptxas -g: unoptimised, a row for every .loc
    assert_function_lines(debug, "_Z1kPi", {5, 6, 7, 8, 9})


# --- check compares the line table ------------------------------------------------------------


def test_check_counts_the_line_rows(ptxas_tool: Ptxas, llvm_dwarfdump: str, tmp_path: Path) -> None:
    """``line_rows``: the (file, line) rows of each function, as llvm-dwarfdump reads the cubin."""
    text = (FIXTURES / "nvcc" / "call_example.sm_75.ptx").read_text()
    report = ptxdwarf.check.check(text, ptxas=ptxas_tool)
    assert report.consistent
    cubin = tmp_path / "c.cubin"
    cubin.write_bytes(ptxas_tool.compile(text, arch="sm_75", relocatable=True).cubin)
    out = run_dwarfdump(llvm_dwarfdump, cubin, "--debug-line")
    sequences, current = [], set()
    for m in re.finditer(r"^0x[0-9a-f]{16}\s+(\d+)\s+\d+\s+(\d+)\s+\d+\s+\d+\s*(.*)$", out, re.M):
        if int(m.group(1)):
            current.add((int(m.group(2)), int(m.group(1))))
        if "end_sequence" in m.group(3):
            sequences.append(current)
            current = set()
    assert report.line_rows == sum(len(s) for s in sequences) > 0
    assert '"line_rows": %d' % report.line_rows in report.to_json()


def test_check_notes_a_line_without_a_row(ptxas_tool: Ptxas) -> None:
    """A .loc whose code compiles to nothing (a load of a register loaded again) has no row: a
    note names the PTX line."""
    text = (FIXTURES / "nvcc" / "call_example.sm_75.ptx").read_text()
    at = text.index("$L__func_end0:")
    text = text[:at] + "\t.loc\t1 43 1\n" + text[at:]  # no code follows: no row, and none expected
    assert not [n for n in ptxdwarf.check.check(text, ptxas=ptxas_tool).notes if "no line-table row" in n]
    first = text.index("\tld.param.u32")
    line = text.count("\n", 0, first) + 1
    twice = (
        text[:first]
        + "\t.loc\t1 44 1\n"
        + text[first : text.index("\n", first) + 1]
        + "\t.loc\t1 1 0\n"
        + text[first:]
    )
    notes = [n for n in ptxdwarf.check.check(twice, ptxas=ptxas_tool).notes if "no line-table row" in n]
    assert notes == [
        f"<ptx>:{line}: no line-table row for .loc 1 44 in _Z3fooii (its code compiled to nothing)"
    ]


def test_a_row_lost_with_code_is_a_difference(ptxas_tool: Ptxas) -> None:
    """The rows check expects, with one more that ptxas cannot have made (line 999) whose
    .loc governs an instruction that did compile: a difference, naming the PTX lines with SASS;
    the same line governing nothing compiled is a note."""
    from ptxdwarf.check import CheckReport, compare, expected_rows
    from ptxdwarf.ptx.placement import LocRow

    text = (FIXTURES / "nvcc" / "call_example.sm_75.ptx").read_text()
    module = ptxdwarf.ptx.parse_ptx(text)
    cubin = ptxas_tool.compile(text, arch="sm_75", relocatable=True).cubin
    rows = expected_rows(module)
    add = text.index("\tadd.s32")
    add_line = text.count("\n", 0, add) + 1
    rows["_Z3fooii"][(1, 999)] = LocRow(add, (add,))
    report = compare(
        module, ptxdwarf.read(text=text), cubin, CheckReport("c.ptx", "sm_75", "", ""), rows=rows
    )
    (diff,) = report.differences
    assert (diff.path, diff.ptx, diff.cubin) == ("_Z3fooii", "1:999", "no row")
    assert f"PTX line(s) {add_line} have SASS" in diff.message
    rows["_Z3fooii"][(1, 999)] = LocRow(add, ())
    report = compare(
        module, ptxdwarf.read(text=text), cubin, CheckReport("c.ptx", "sm_75", "", ""), rows=rows
    )
    assert report.consistent and any("in _Z3fooii (its code compiled to nothing)" in n for n in report.notes)


def test_sass_rows_point_at_instructions_of_the_ptx_text(ptxas_tool: Ptxas) -> None:
    """``.nv_debug_line_sass``: each SASS address's row names a line of ``.nv_debug_ptx_txt``
    that holds an instruction (ptxas keeps the text line for line, comments blanked), or, for
    a kernel's prologue (its first row), the ``{`` that opens the function."""
    for name in ("call_example.sm_75.ptx", "rich.sm_75.ptx"):
        text = (FIXTURES / "nvcc" / name).read_text()
        info = ptxdwarf.cuda.read_cubin(ptxas_tool.compile(text, arch="sm_75", relocatable=True).cubin)
        found = info.module
        assert isinstance(found, CubinImages)
        assert info.lines is not None and found.ptx_text is not None
        ptx_lines = found.ptx_text.split(b"\0")
        (program,) = [p for p in info.lines if p.section == ".nv_debug_line_sass"]
        assert program.files[0][0].startswith(b".nv_debug_ptx_txt.")
        checked = 0
        first = True
        for i, row in enumerate(program.rows):
            nxt = program.rows[i + 1] if i + 1 < len(program.rows) else None
            starts, first = first, row.end_sequence
            if row.end_sequence or (nxt is not None and nxt.address == row.address):
                continue  # no instruction of its own
            line = ptx_lines[row.line - 1].strip()
            if starts and line == b"{":
                continue  # a kernel's prologue
            assert line and not line.startswith((b".", b"{", b"}", b"//")) and not line.endswith(b":"), (
                row,
                line,
            )
            assert line == text.split("\n")[row.line - 1].strip().encode()
            checked += 1
        assert checked > 10


# --- writing line tables: attach(lines=...) ------------------------------------------------


def _example() -> tuple[str, Any, dict[int, Any]]:
    """The README's example: a kernel mapped to two source files, one call inlined."""
    from ptxdwarf import DebugInfoBuilder, loc
    from ptxdwarf.attach import SourceLoc

    ptx = (FIXTURES / "handwritten" / "scale.ptx").read_text()
    dbg = DebugInfoBuilder(name="kernel.cu", comp_dir="/src", producer="example")
    f32 = dbg.base_type("float", byte_size=4, encoding="float")
    kernel = dbg.function("scale", linkage_name="scale", line=4, kernel=True)
    kernel.parameter("f", f32, line=4, location=loc.param("scale_f"))
    call = SourceLoc("/src/kernel.cu", 7, 5)
    lines: dict[int, Any] = {
        10: ("/src/kernel.cu", 5),
        11: ("/src/kernel.cu", 5),
        12: ("/src/kernel.cu", 6),
        13: ("/src/kernel.cu", 6),
        14: ("/src/kernel.cu", 6),
        15: SourceLoc("/src/math.h", 3, 10, function="mul", inlined_at=call),
        16: SourceLoc("/src/math.h", 3, 12, function="mul", inlined_at=call),
        17: ("/src/kernel.cu", 8),
        18: ("/src/kernel.cu", 9),
    }
    return ptx, dbg, lines


def test_attach_writes_the_line_table(ptxas_tool: Ptxas, llvm_dwarfdump: str, tmp_path: Path) -> None:
    ptx, dbg, lines = _example()
    out = ptxdwarf.attach.attach(ptx, dbg, lines=lines)
    cubin = tmp_path / "scale.cubin"
    cubin.write_bytes(ptxas_tool.compile(out, arch="sm_75", relocatable=True).cubin)
    theirs = run_dwarfdump(llvm_dwarfdump, cubin, "--debug-line")
    rows = {
        (int(f), int(line))
        for line, f, flags in re.findall(
            r"^0x[0-9a-f]{16}\s+(\d+)\s+\d+\s+(\d+)\s+\d+\s+\d+\s*(.*)$", theirs, re.M
        )
        if "end_sequence" not in flags
    }
    assert rows == {(1, 5), (1, 6), (1, 7), (1, 8), (1, 9), (2, 3)}
    # ptxas splits each path into an include directory and a name
    assert re.findall(r'name: "([^"]*)"', theirs) == ["kernel.cu", "math.h"]
    assert 'include_directories[  1] = "/src"' in theirs
    info = ptxdwarf.read(cubin)
    table = info.line_table
    assert {(r.file, r.line) for r in table.lines_of("scale")} == {
        ("/src/kernel.cu", 5),
        ("/src/kernel.cu", 6),
        ("/src/kernel.cu", 7),
        ("/src/kernel.cu", 8),
        ("/src/kernel.cu", 9),
        ("/src/math.h", 3),
    }
    (inlined,) = [r for r in table if r.inlined]
    assert (inlined.file, inlined.line, inlined.inlined) == ("/src/math.h", 3, "mul")
    (program,) = [p for p in info.lines or [] if p.section == ".debug_line"]
    sites = program.call_sites()
    (at,) = [sites[i] for i, row in enumerate(program.rows) if row.context]
    assert at is not None and program.rows[at].line == 7
    report = ptxdwarf.check.check(out, ptxas=ptxas_tool)
    assert report.consistent and report.line_rows == 6
    assert ptxdwarf.lint.lint(out) == []


def test_attach_lines_refuses_what_it_cannot_write() -> None:
    ptx, dbg, lines = _example()
    with pytest.raises(ptxdwarf.AttachError, match=r"<ptx>:8: lines= maps a line that starts no instruction"):
        ptxdwarf.attach.attach(ptx, dbg, lines={8: ("/src/kernel.cu", 1)})
    with pytest.raises(ptxdwarf.AttachError, match=r"lines count from 1"):
        ptxdwarf.attach.attach(ptx, dbg, lines={10: ("/src/kernel.cu", 0)})
    with pytest.raises(ptxdwarf.AttachError, match=r"needs PTX ISA 7.0"):
        ptxdwarf.attach.attach(ptx.replace(".version 7.5", ".version 6.4"), dbg, lines=lines)


def test_attach_without_debug_target(ptxas_tool: Ptxas) -> None:
    ptx, dbg, lines = _example()
    out = ptxdwarf.attach.attach(ptx, dbg, lines=lines, debug_target=False)
    assert ".target sm_75\n" in out
    # without -g ptxas drops .debug_info but keeps the line table (quirk target-not-debug)
    info = ptxdwarf.cuda.read_cubin(
        ptxas_tool.compile(out, arch="sm_75", debug=False, relocatable=True).cubin
    )
    assert {r.line for r in info.line_table.lines_of("scale")} == {5, 6, 7, 8, 9, 3}


def test_check_reports_an_undeclared_loc_file(ptxas_tool: Ptxas) -> None:
    text = (FIXTURES / "lint" / "faults" / "loc-file-undeclared.ptx").read_text()
    report = ptxdwarf.check.check(text, ptxas=ptxas_tool)
    assert [(d.what, d.ptx) for d in report.differences] == [("file 2", "no .file of that number")]


def test_check_reports_a_planted_lost_line(ptxas_tool: Ptxas) -> None:
    """The cubin of the module without one of its .loc lines, compared with the module: that
    line's instruction compiled (to the row before), and the line table has no row for it."""
    from ptxdwarf.check import CheckReport, compare

    text = (FIXTURES / "nvcc" / "call_example.sm_75.ptx").read_text()
    at = text.index("\tadd.s32")
    line = text.count("\n", 0, at) + 1
    planted = text[:at] + "\t.loc\t1 2 9\n" + text[at:]
    cubin = ptxas_tool.compile(text, arch="sm_75", relocatable=True).cubin  # no row for 1:2
    module = ptxdwarf.ptx.parse_ptx(planted)
    report = compare(module, ptxdwarf.read(text=planted), cubin, CheckReport("p.ptx", "sm_75", "", ""))
    (diff,) = [d for d in report.differences if d.what == ".debug_line"]
    assert (diff.path, diff.ptx, diff.cubin) == ("_Z3fooii", "1:2", "no row")
    assert f"p.ptx:{line}: ptxas compiled the code of this .loc" in diff.message.replace("<ptx>", "p.ptx")


_FLAGS = ("is_stmt", "prologue_end", "epilogue_begin", "end_sequence")


def _rows_against_llvm(cubin: Path, llvm_dwarfdump: str) -> list[tuple[int, int, int, int, tuple[bool, ...]]]:
    """The .debug_line rows ptxdwarf reads from ``cubin``, asserted equal to llvm-dwarfdump's,
    flags included."""
    info = ptxdwarf.read(cubin)
    ours: list[tuple[int, int, int, int, tuple[bool, ...]]] = [
        (r.address, r.line, r.column, r.file, (r.is_stmt, r.prologue_end, r.epilogue_begin, r.end_sequence))
        for p in info.lines or []
        if p.section == ".debug_line"
        for r in p.rows
    ]
    theirs = run_dwarfdump(llvm_dwarfdump, cubin, "--debug-line")
    rows = re.findall(r"^0x([0-9a-f]{16})\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s*(.*)$", theirs, re.M)
    assert ours == [
        (int(a, 16), int(l), int(c), int(f), tuple(flag in fl.split() for flag in _FLAGS))
        for a, l, c, f, fl in rows
    ]
    return ours


_FIXTURES_WITH_LINES = sorted(
    p
    for p in FIXTURES.glob("*/*.ptx")
    if p.parent.name not in ("corpus", "fragment")
    and re.search(r"^\s*\.loc\s", p.read_text(errors="replace"), re.M)
)


@pytest.mark.parametrize("path", _FIXTURES_WITH_LINES, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.ptxas
def test_fixture_line_tables_equal_llvm_dwarfdump(path: Path, llvm_dwarfdump: str, tmp_path: Path) -> None:
    """As the corpus test does, on the repository's own fixtures: every .debug_line row of the
    cubin ptxas -g makes, read by dump --json, equals llvm-dwarfdump's."""
    from ptxdwarf.cuda.ptxas import PtxasFailed, find_ptxas
    from ptxdwarf.ptx import needs_compile_only

    text = path.read_text()
    try:
        module = ptxdwarf.ptx.parse_ptx(text)
    except ptxdwarf.PtxDwarfError:
        return  # a fixture of bad input
    tool = find_ptxas(version=module.version)
    arch, _ = tool.choose_arch(module.target, None)
    try:
        cubin_bytes = tool.compile(text, arch=arch, relocatable=needs_compile_only(module)).cubin
    except PtxasFailed:
        assert any(f.severity == "error" for f in ptxdwarf.lint.lint(text)), (
            "ptxas refuses it, lint finds no error"
        )
        return
    cubin = tmp_path / "f.cubin"
    cubin.write_bytes(cubin_bytes)
    ours = _rows_against_llvm(cubin, llvm_dwarfdump)
    assert ours, "a module with .loc gives rows"


@pytest.mark.parametrize("path", sorted((FIXTURES / "cubins").glob("*.cubin")), ids=lambda p: p.name)
def test_stored_cubin_line_tables_equal_llvm_dwarfdump(path: Path, llvm_dwarfdump: str) -> None:
    assert _rows_against_llvm(path, llvm_dwarfdump)


def test_attach_writes_an_inlined_at_chain(ptxas_tool: Ptxas) -> None:
    """inner() inlined into outer() inlined into the kernel: each call site comes first, and the
    innermost row's call row is outer's line, whose own call row is the kernel's."""
    from ptxdwarf.attach import SourceLoc

    ptx, dbg, _ = _example()
    outer = SourceLoc("/src/outer.h", 20, 3, function="outer", inlined_at=SourceLoc("/src/kernel.cu", 7, 5))
    lines: dict[int, SourceLoc | tuple[str, int]] = {
        10: ("/src/kernel.cu", 5),
        15: SourceLoc("/src/inner.h", 30, 1, function="inner", inlined_at=outer),
    }
    out = ptxdwarf.attach.attach(ptx, dbg, lines=lines)
    assert ".loc\t2 20 3, function_name $L__ptxdwarf_inl0, inlined_at 1 7 5" in out
    assert ".loc\t3 30 1, function_name $L__ptxdwarf_inl1, inlined_at 2 20 3" in out
    info = ptxdwarf.cuda.read_cubin(ptxas_tool.compile(out, arch="sm_75", relocatable=True).cubin)
    (program,) = [p for p in info.lines or [] if p.section == ".debug_line"]
    sites = program.call_sites()
    (inner,) = [i for i, r in enumerate(program.rows) if r.line == 30 and not r.end_sequence]
    at_outer = sites[inner]
    assert at_outer is not None and program.rows[at_outer].line == 20
    at_kernel = sites[at_outer]
    assert at_kernel is not None and program.rows[at_kernel].line == 7
    assert {r.inlined for r in info.line_table if r.inlined} == {"inner", "outer"}


# --- line_starts: the rows' first addresses, read without making the rows ------------------


def _starts_of_rows(image: SectionImage) -> dict[str, dict[int, int]]:
    """What line_starts should give, from the rows read_line_programs makes."""
    out: dict[str, dict[int, int]] = {}
    for program in read_line_programs(image):
        rows = program.rows
        for i, row in enumerate(rows):
            if row.symbol is None or row.end_sequence:
                continue
            nxt = rows[i + 1] if i + 1 < len(rows) else None
            if nxt is not None and nxt.address == row.address and not nxt.end_sequence:
                continue
            lines = out.setdefault(row.symbol, {})
            lines[row.line] = min(lines.get(row.line, row.address), row.address)
    return out


@pytest.mark.parametrize(
    "source",
    [
        "nvcc/rich.sm_75.ptx",
        "corpus/numba-nvvm-13.5/shared_local.debugopt.ptx",
        "cubins/loops.debugopt.sm_75.cubin",
    ],
)
@pytest.mark.ptxas
def test_line_starts_equal_the_rows(source: str, tmp_path: Path) -> None:
    """On ptxas's .nv_debug_line_sass, line by line, the first address of each line's code
    is the one the rows give and the one nvdisasm -gp shows."""
    from ptxdwarf.cuda.cubin import cubin_images
    from ptxdwarf.cuda.ptxas import find_ptxas

    path = FIXTURES / source
    if path.suffix == ".cubin":
        data = path.read_bytes()
    else:
        text = path.read_text()
        module = ptxdwarf.ptx.parse_ptx(text)
        tool = find_ptxas(version=module.version)
        arch, _ = tool.choose_arch(module.target, None)
        data = tool.compile(text, arch=arch).cubin
    image = cubin_images(data).line_sass
    assert image is not None
    got = line_starts(image)
    assert got == _starts_of_rows(image)
    assert sum(map(len, got.values())) > 20
    cubin = tmp_path / "module.cubin"
    cubin.write_bytes(data)
    assert got == _nvdisasm_starts(cubin)


_PTX_LINE = re.compile(r'^\s*//## File "\.nv_debug_ptx_txt(?:\.\d+)?", line (\d+)')
_TEXT_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+),")
_AT = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/")


def _nvdisasm_starts(cubin: Path) -> dict[str, dict[int, int]]:
    """Per function, per PTX line, the first address nvdisasm -gp annotates with that line (it
    reads .nv_debug_line_sass itself)."""
    out = subprocess.run(
        [nvdisasm(), "-gp", "-c", str(cubin)], capture_output=True, text=True, check=True
    ).stdout
    starts: dict[str, dict[int, int]] = {}
    lines: dict[int, int] | None = None
    line: int | None = None
    for text in out.splitlines():
        if m := _TEXT_SECTION.match(text):
            lines, line = starts.setdefault(m.group(1), {}), None
        elif m := _PTX_LINE.match(text):
            line = int(m.group(1))
        elif (m := _AT.match(text)) and lines is not None and line is not None:
            lines[line] = min(lines.get(line, int(m.group(1), 16)), int(m.group(1), 16))
            line = None
    return {name: found for name, found in starts.items() if found}


_OPS = st.one_of(
    st.tuples(st.just("special"), st.integers(13, 255)),
    st.tuples(st.just("line"), st.integers(-300, 300)),
    st.tuples(st.just("pc"), st.sampled_from([0, 1, 16, 127, 128, 400])),
    st.tuples(st.just("copy"), st.just(0)),
    st.tuples(st.just("end"), st.just(0)),
    st.tuples(st.just("address"), st.integers(0, 3)),
    st.tuples(st.just("other"), st.sampled_from([4, 5, 6, 7, 8, 9, 10, 11, 12])),
)


def _program(ops: list[tuple[str, int]]) -> tuple[bytes, list[int]]:
    """A version 2 program of ``ops`` (opcode_base 13, line_base -5, line_range 14) and where
    its DW_LNE_set_address operands are."""
    body, addresses = bytearray(), []
    for kind, n in ops:
        if kind == "special":
            body.append(n)
        elif kind == "line":
            body += b"\x03" + sleb_bytes(n)
        elif kind == "pc":
            body += b"\x02" + uleb_bytes(n)
        elif kind == "copy":
            body.append(1)
        elif kind == "end":
            body += b"\x00\x01\x01"
        elif kind == "address":
            body += b"\x00\x09\x02"
            addresses.append(len(body))
            body += (n * 0x100).to_bytes(8, "little")
        else:
            body += bytes([n]) + (b"\x10\x00" if n == 9 else b"\x05" if n in (4, 5, 10, 12) else b"")
    lengths = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])
    header = bytes([1, 1, 0xFB, 14, 13]) + lengths + b"\x00" + b"k.cu\x00\x00\x00\x00\x00"
    unit = (2).to_bytes(2, "little") + len(header).to_bytes(4, "little") + header
    start = 4 + len(unit)
    return (len(unit) + len(body)).to_bytes(4, "little") + unit + bytes(body), [start + a for a in addresses]


@settings(max_examples=300, deadline=None)
@given(st.lists(_OPS, max_size=40), st.integers(0, 3))
def test_line_starts_equal_the_rows_of_any_program(ops: list[tuple[str, int]], cut: int) -> None:
    """Made-up programs, whole or cut short: the same first addresses, or the same error."""
    from ptxdwarf.dwarf.image import Reloc, Symbol

    data, addresses = _program(ops)
    if cut:
        data = data[: len(data) - cut]
    relocs = [Reloc(a, 8, Symbol(f"f{i % 2}")) for i, a in enumerate(addresses)]
    image = SectionImage(".nv_debug_line_sass", data, relocs)
    try:
        want = _starts_of_rows(image)
    except DwarfError:
        with pytest.raises(DwarfError):
            line_starts(image)
        return
    assert line_starts(image) == want


@pytest.mark.ptxas
def test_prologue_end_as_llvm_dwarfdump_reads_it(llvm_dwarfdump: str, tmp_path: Path) -> None:
    """ptxas 13.5 writes version 3 line programs and marks where each function's prologue ends
    (DW_LNS_set_prologue_end); dump reads the flag where llvm-dwarfdump does, in both tables."""
    from ptxdwarf.cuda.ptxas import wheel_ptxas

    wheel = wheel_ptxas()
    assert wheel, "the nvidia-cuda-nvcc wheel's ptxas is not installed"
    cubin = tmp_path / "rich.cubin"
    ptx = FIXTURES / "nvcc" / "rich.sm_75.ptx"
    subprocess.run([wheel[0], "-arch", "sm_75", "-g", str(ptx), "-o", str(cubin)], check=True)
    rows = _rows_against_llvm(cubin, llvm_dwarfdump)
    assert any(flags[1] for *_, flags in rows), "no row of ptxas 13.5's .debug_line ends a prologue"
    info = ptxdwarf.read(cubin)
    sass = [p for p in info.lines or [] if p.section == ".nv_debug_line_sass"]
    assert sass and {p.version for p in sass} == {3}
    assert any(r.prologue_end for p in sass for r in p.rows)
    text = "\n".join(_dump_text_lines(cubin))
    assert re.search(r"^0x[0-9a-f]{16} +\d+ +\d+ +\d+ is_stmt prologue_end +_Z", text, re.M)


def _dump_text_lines(cubin: Path) -> list[str]:
    from ptxdwarf.dump import iter_line_text

    return list(iter_line_text(ptxdwarf.read(cubin)))


def test_many_programs_read_in_linear_time() -> None:
    """A section of 120,000 small programs: each once copied the rest of the section to see
    whether only padding was left (time quadratic in the programs: half a minute here)."""
    import signal
    import struct

    from ptxdwarf.dwarf import lines
    from ptxdwarf.dwarf.image import SectionImage

    # Version 2, min_inst_length 1, default_is_stmt 1, line_base -5, line_range 14,
    # opcode_base 10, no directories or files; then one DW_LNE_end_sequence.
    header = bytes([1, 1, 0xFB, 14, 10, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0])
    unit = struct.pack("<HI", 2, len(header)) + header + bytes([0, 1, 1])
    image = SectionImage(".debug_line", (struct.pack("<I", len(unit)) + unit) * 120_000 + bytes(64))

    def stop(*_: object) -> None:
        raise TimeoutError("the line programs were not read in 20 s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    try:
        assert sum(1 for _ in lines.iter_line_programs(image)) == 120_000
        assert len(lines.read_line_programs(image)) == 120_000
        assert lines.line_starts(image) == {}
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
