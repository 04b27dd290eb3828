"""A producer's debug-info tests written on the public API and the pytest plugin only, in the
spirit of numba-cuda's test_debuginfo/test_lineinfo, Triton's test_line_info and LLVM's
DebugInfo/NVPTX tests, on their real output (fixtures/corpus: numba-cuda 0.30.4 with NVVM
13.5, Triton 3.9.0, llc 14). Every line check is held against ``nvdisasm -g`` (the oracle:
its annotation of each SASS instruction), which the suite itself never needs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES, nvdisasm

from ptxdwarf import AddressClass
from ptxdwarf.testing import (
    CompiledCubin,
    PtxCompiler,
    assert_lines,
    assert_no_lines,
    ptx_lines_of,
    read_locs,
    source_lines,
    source_of_ptx_line,
)

CORPUS = FIXTURES / "corpus"
NUMBA = CORPUS / "numba-nvvm-13.5"
TRITON = CORPUS / "triton"
LLVM = CORPUS / "llvm-tests"

#: make_numba.py: each kernel's ``def`` line and the lines of its body.
NUMBA_KERNELS = {"axpy": (30, {31, 32, 33})}

NUMBA_ALL = ("axpy", "loops", "shared_local", "tuples", "atomics", "clip_copy")
CASES = [
    *(NUMBA / f"{k}.{mode}.ptx" for k in NUMBA_ALL for mode in ("debug", "debugopt", "lineinfo")),
    *(
        TRITON / f"{k}.lines.sm_{cc}.ptx"
        for k in ("add", "softmax_row", "matmul", "matmul_kloop")
        for cc in (80, 90)
    ),
    *(
        LLVM / f"{k}.ptx"
        for k in (
            "inlinedAt_1.O0",
            "inlinedAt_2.O2",
            "debug-info.O0.fixed",
            "debug-info.O2.fixed",
            "debug-loc-offset.O2.fixed",
            "dbg-declare-alloca.O0.fixed",
        )
    ),
    CORPUS / "nvcc-13.5" / "classes.lineinfo.sm_75.ptx",  # inlined code
]


def _compile(compile_ptx: PtxCompiler, path: Path) -> CompiledCubin:
    """Compiled as the producer meant: ``-g`` for a ``.target ..., debug`` module, else ``-lineinfo``."""
    text = path.read_text()
    target = re.search(r"^\s*\.target\s+([^\n]*)", text, re.M)
    debug = target is not None and "debug" in target.group(1)
    return compile_ptx(text, debug=debug, line_info=not debug)


_TEXT_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+),")
_SOURCE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
_AT = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/")


def nvdisasm_lines(cubin: CompiledCubin, tmp_path: Path) -> dict[str, dict[int, tuple[str, int]]]:
    """Per function, per SASS address, the (file, line) ``nvdisasm -g`` shows for it."""
    path = tmp_path / "case.cubin"
    path.write_bytes(cubin.data)
    out = subprocess.run(
        [nvdisasm(), "-g", "-c", str(path)], capture_output=True, text=True, check=True
    ).stdout
    found: dict[str, dict[int, tuple[str, int]]] = {}
    current: dict[int, tuple[str, int]] | None = None
    where: tuple[str, int] | None = None
    for line in out.splitlines():
        if m := _TEXT_SECTION.match(line):
            current, where = found.setdefault(m.group(1), {}), None
        elif m := _SOURCE.match(line):
            where = (m.group(1), int(m.group(2)))
        elif (m := _AT.match(line)) and current is not None and where is not None:
            current[int(m.group(1), 16)] = where
    return found


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_line_checks_agree_with_nvdisasm(path: Path, ptxdwarf_compile: PtxCompiler, tmp_path: Path) -> None:
    """What a debugger shows at each address, the lines with code of each function, and the
    PTX lines of each source line, against nvdisasm -g."""
    cubin = _compile(ptxdwarf_compile, path)
    shown = nvdisasm_lines(cubin, tmp_path)
    table = cubin.line_table()
    assert shown, "nvdisasm shows no line"
    for function, by_address in shown.items():
        for address, (file, line) in by_address.items():
            row = table.line_at(function, address)
            assert row is not None and (row.file, row.line) == (file, line), f"{function}+0x{address:x}"
        assert source_lines(cubin, function=function) == {line for _, line in by_address.values() if line}
        for line in {line for _, line in by_address.values() if line}:
            ptx = ptx_lines_of(cubin, line, function=function)
            assert ptx, f"{function}: no PTX line of source line {line}"
            assert all(
                any(r.line == line for r in source_of_ptx_line(cubin, p, function=function)) for p in ptx
            )
    # every line with code is one the PTX's .loc directives give
    locs = read_locs(cubin.ptx)
    assert source_lines(cubin) <= locs.source_lines()


@pytest.mark.ptxas
def test_numba_kernel_described(ptxdwarf_compile: PtxCompiler) -> None:
    """In the spirit of numba-cuda's test_debuginfo: the kernel is named by its qualified
    name, its arguments are parameters of the types numba gave them, the locals are variables."""
    cubin = ptxdwarf_compile((NUMBA / "axpy.debug.ptx").read_text())
    q = cubin.debug_info()
    kernel = q.one("subprogram", re.compile(r"\.axpy$"))
    assert kernel["DW_AT_decl_line"] == NUMBA_KERNELS["axpy"][0]
    assert [p.name for p in kernel.parameters] == ["out", "a", "x"]
    a = kernel.parameter("a")
    assert a.type is not None and a.type.name == "float32"
    assert a.address_class is AddressClass.PARAM and a.location.address is not None
    out = kernel.parameter("out")
    assert (
        out.type is not None and out.type.name is not None and out.type.name.startswith("array(float32, 1d")
    )
    assert [m.name for m in out.type.members][:2] == ["meminfo", "parent"]
    assert {"i"} <= {v.name for v in kernel.variables}
    q.none("subprogram", re.compile(r"\.loops$"))  # one PTX per kernel
    _, body = NUMBA_KERNELS["axpy"]
    assert_lines(cubin, body, function=re.compile(r"axpy"), file="make_numba.py")


@pytest.mark.ptxas
def test_numba_lineinfo_without_debug(ptxdwarf_compile: PtxCompiler) -> None:
    """In the spirit of numba-cuda's test_lineinfo: -lineinfo gives line rows for the body and
    no DIE but the unit's."""
    cubin = ptxdwarf_compile((NUMBA / "axpy.lineinfo.ptx").read_text(), debug=False, line_info=True)
    def_line, body = NUMBA_KERNELS["axpy"]
    assert_lines(cubin, body, file="make_numba.py")
    assert_no_lines(cubin, [def_line - 1, max(body) + 1], file="make_numba.py")
    with pytest.raises(
        AssertionError,
        match=r"file make_numba.py: lines without code \[34\] \(lines with code: \[30, 31, 32, 33\]\)",
    ):
        assert_lines(cubin, {33, 34}, file="make_numba.py")
    with pytest.raises(AssertionError, match=r"lines without code \[\], lines not expected \[30\]"):
        assert_lines(cubin, body, file="make_numba.py", exact=True)
    with pytest.raises(AssertionError, match=r"lines with code \[31\], expected none of them"):
        assert_no_lines(cubin, {31, 40}, file="make_numba.py")
    locs = read_locs(cubin.ptx)
    (kernel,) = locs.functions()
    assert locs.source_lines(kernel, instructions=True) == {def_line, *body}


@pytest.mark.ptxas
def test_triton_line_info(ptxdwarf_compile: PtxCompiler) -> None:
    """In the spirit of Triton's test_line_info: the lines of the kernel's body have code.
    The source lines come from the PTX's own .loc directives (the kernel as Triton saw it)."""
    text = (TRITON / "add.lines.sm_80.ptx").read_text()
    cubin = ptxdwarf_compile(text, debug=False, line_info=True)
    locs = read_locs(text)
    (kernel,) = locs.functions()
    assert_lines(
        cubin, locs.source_lines(kernel, instructions=True), function=kernel, file="make.py", exact=True
    )
    # each tl.load becomes an ld.global: the source rows its SASS belongs to
    loads = [i for i in locs.instructions(kernel) if re.search(r"\bld\.global", i.text)]
    assert loads
    for load in loads:
        rows = source_of_ptx_line(cubin, load.ptx_line, function=kernel)
        assert rows and load.loc is not None
        assert {r.line for r in rows} == {load.loc.line}, (load, rows)


@pytest.mark.ptxas
def test_inline_context(ptxdwarf_compile: PtxCompiler) -> None:
    """The PTX's inlined .loc directives carry function_name and inlined_at (nvcc 13.5: llc 14
    writes none), and the cubin's rows keep the inline context: the inlined function's name
    and the call site."""
    text = (CORPUS / "nvcc-13.5" / "classes.lineinfo.sm_75.ptx").read_text()
    locs = read_locs(text)
    inlined = [loc for f in locs.functions() for loc in locs.locs(f) if loc.inlined_at is not None]
    assert inlined and all(loc.function_name for loc in inlined)
    cubin = ptxdwarf_compile(text, debug=False, line_info=True)
    rows = [r for r in cubin.line_table() if r.inlined]
    assert rows and {r.inlined for r in rows} <= {loc.function_name for loc in inlined}
    sites = {loc.inlined_at.line for loc in inlined if loc.inlined_at}
    assert all(r.inlined_at is not None and r.inlined_at[1] in sites for r in rows)
    # ptxas writes column 0 in every row: the columns are the PTX's
    assert {r.column for r in rows} == {0}
    assert all(loc.inlined_at and loc.inlined_at.column and loc.column for loc in inlined)


@pytest.mark.ptxas
def test_llvm_address_classes(ptxdwarf_compile: PtxCompiler) -> None:
    """In the spirit of LLVM's DebugInfo/NVPTX/debug-addr-class.ll: a .global variable is
    described in address class 5, a .shared one in 8, each at its symbol."""
    cubin = ptxdwarf_compile((LLVM / "debug-addr-class.O0.fixed.ptx").read_text())
    for info in (cubin.ptx_debug_info(), cubin.debug_info()):
        glob, shared = info.one("variable", "GLOBAL"), info.one("variable", "SHARED")
        assert (glob.address_class, shared.address_class) == (AddressClass.GLOBAL, AddressClass.SHARED)
    ptx = cubin.ptx_debug_info()
    assert ptx.one("variable", "GLOBAL").location.symbol == "GLOBAL"
    assert ptx.one("variable", "SHARED").location.symbol == "SHARED"
