"""``ptxdwarf attach`` (:mod:`ptxdwarf.autodebug`): PTX without debug info gets a line
table pointing at itself and DWARF for every function, parameter, register and module
variable, functions named by :mod:`ptxdwarf.demangle` (tested in ``test_demangle.py``).

For each fixture of ``fixtures/nodebug`` (nvcc -O3, clang-14 -O2, numba-cuda opt,
hand-written, long register names): ``ptxas -g`` accepts the output, ``check`` finds it
consistent, the cubin's DWARF lists every function, parameter, declared register and
module variable with its address class and a location, every ``.loc`` names its
instruction's own line, ``lint`` has nothing to say, and the edits change no code.
"""

from __future__ import annotations

import argparse
import functools
import io
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest
from conftest import FIXTURES
from elftools.elf.elffile import ELFFile

from ptxdwarf import AttachError
from ptxdwarf.api import read_ptx
from ptxdwarf.autodebug import (
    AttachResult,
    attach_ptx,
    default_output_name,
)
from ptxdwarf.builder import DebugInfoBuilder
from ptxdwarf.check import check
from ptxdwarf.cli import main_attach
from ptxdwarf.cuda import read_cubin
from ptxdwarf.cuda.ptxas import Ptxas
from ptxdwarf.demangle import demangle
from ptxdwarf.dwarf import AT, TAG, AddressClass
from ptxdwarf.dwarf.expr import MAX_REGISTER_NAME, Op, decode_expression
from ptxdwarf.dwarf.model import DIE
from ptxdwarf.lint import Finding
from ptxdwarf.ptx import PtxFunction, PtxModule, mask_comments, needs_compile_only, parse_ptx

NODEBUG = FIXTURES / "nodebug"
ALL_SPACES = "../handwritten/all_spaces.ptx"  # every state space, texref/samplerref/surfref included
FIXTURE_NAMES = [
    "rich.nvcc.O3.sm_75.ptx",
    "rich.clang.O2.sm_75.ptx",
    "saxpy.numba.sm_75.ptx",
    "handwritten.ptx",
    "long_registers.ptx",
    ALL_SPACES,
]
CASES = [(name, False) for name in FIXTURE_NAMES] + [
    ("long_registers.ptx", True),
    ("rich.nvcc.O3.sm_75.ptx", True),
]
CASE_IDS = [f"{Path(name).name}{'-renamed' if rename else ''}" for name, rename in CASES]


def _lint() -> Callable[..., list[Finding]]:
    """``ptxdwarf.lint.lint``, imported when used (lint.py is written by a colleague)."""
    from ptxdwarf.lint import lint

    return lint


@functools.cache
def attached(name: str, rename: bool = False, debug_target: bool = True) -> AttachResult:
    text = (NODEBUG / name).read_text()
    return attach_ptx(
        text,
        output_name=default_output_name(Path(name).name),
        filename=name,
        rename_registers=rename,
        debug_target=debug_target,
    )


def compile_text(ptxas: Ptxas, text: str, *, debug: bool) -> bytes:
    module = parse_ptx(text)
    arch, _note = ptxas.choose_arch(module.target)
    return ptxas.compile(text, arch=arch, debug=debug, relocatable=needs_compile_only(module)).cubin


def text_sections(cubin: bytes) -> dict[str, bytes]:
    elf = ELFFile(io.BytesIO(cubin))
    return {s.name: s.data() for s in elf.iter_sections() if s.name.startswith(".text")}


def warned_count(result: AttachResult, pattern: str) -> int:
    for w in result.warnings:
        m = re.search(pattern, w)
        if m:
            return int(m.group(1))
    return 0


def params_without_location(result: AttachResult) -> set[str]:
    out: set[str] = set()
    for w in result.warnings:
        m = re.search(r"described without a location: (.*)$", w)
        if m:
            out.update(re.findall(r"([\w$%]+) \(", m.group(1)))
    return out


# --- the line table --------------------------------------------------------------------

_LABEL_ONLY = re.compile(r"^\s*[\w$%]+\s*:\s*$")
_LOC = re.compile(r"^\s*\.loc\s+1\s+(\d+)\s+1\s*$")


def instruction_lines(text: str) -> set[int]:
    """0-based lines of ``text`` on which an instruction starts, found independently of
    attach's scanner: in a function body, after a label, a line starting with ``@`` or a
    lowercase opcode whose previous code line ended a statement."""
    masked = mask_comments(text)
    module = parse_ptx(text)
    lines = masked.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    out: set[int] = set()
    for f in module.functions:
        first = masked.count("\n", 0, f.body_start)
        last = masked.count("\n", 0, f.body_end)
        previous_end = True
        for i in range(first, last + 1):
            lo = max(starts[i], f.body_start)
            hi = min(starts[i] + len(lines[i]), f.body_end)
            code = masked[lo:hi].strip()
            if not code or _LOC.match(code) or _LABEL_ONLY.match(code):
                continue
            body = re.sub(r"^[\w$%]+\s*:\s*", "", code)
            if previous_end and re.match(r"(@|[a-z])", body):
                out.add(i)
            previous_end = code.endswith((";", "{", "}"))
    return out


def assert_line_table(text: str) -> int:
    """Every ``.loc 1 N 1`` is followed (after labels) by line N, which starts an
    instruction; every instruction line has one. Returns the number of ``.loc``."""
    lines = text.split("\n")
    covered: set[int] = set()
    for i, line in enumerate(lines):
        m = _LOC.match(line)
        if m is None:
            continue
        j = i + 1
        while _LABEL_ONLY.match(lines[j]):
            j += 1
        assert int(m.group(1)) == j + 1, (
            f"line {i + 1}: {line.strip()} but the instruction is on line {j + 1}"
        )
        covered.add(j)
    expected = instruction_lines(text)
    assert covered == expected, (
        f"instruction lines without .loc: {sorted(x + 1 for x in expected - covered)[:10]}; "
        f".loc on lines that start no instruction: {sorted(x + 1 for x in covered - expected)[:10]}"
    )
    return len(covered)


# --- what the cubin must describe --------------------------------------------------------


def _expr(die: DIE, asize: int = 8) -> list[Op]:
    loc = die.attr(AT.location)
    if loc is None or loc.value is None:
        return []
    return decode_expression(loc.value, asize)


def _assert_parameters(
    f: PtxFunction, children: dict[str | None, DIE], unlocated: set[str], counts: dict[str, int]
) -> None:
    """Each parameter of ``f`` is a child of its subprogram, located as its kind says."""
    for p in f.params:
        die = children.get(p.name)
        assert die is not None and die.tag == TAG.formal_parameter, f"{f.name}: no parameter {p.name}"
        counts["parameters"] += 1
        if p.name in unlocated:
            assert die.attr(AT.location) is None
            continue
        ops = _expr(die)
        assert ops, f"{f.name}/{p.name}: no location"
        if f.is_kernel:
            assert die.address_class == AddressClass.PARAM
            assert ops[0].code == 0x03 and cast(int, ops[0].args[0]) > 0  # the constant-bank offset
        else:
            assert die.address_class == AddressClass.REG
            assert any(op.register for op in ops)


def _assert_objects(f: PtxFunction, children: dict[str | None, DIE], counts: dict[str, int]) -> None:
    """Each ``.local`` and ``.shared`` declaration of ``f`` is a variable in its space."""
    for v in f.declarations:
        if v.space not in ("local", "shared"):
            continue
        die = children.get(v.name)
        assert die is not None and die.tag == TAG.variable, f"{f.name}: no variable {v.name}"
        counts["objects"] += 1
        ops = _expr(die)
        assert ops
        if v.space == "local":
            assert die.address_class == AddressClass.LOCAL and ops[0].code == 0x91  # DW_OP_fbreg
        else:
            assert die.address_class == AddressClass.SHARED and ops[0].code == 0x03


def _assert_registers(
    module: PtxModule, f: PtxFunction, children: dict[str | None, DIE], counts: dict[str, int]
) -> int:
    """Each register the code of ``f`` names is a variable located in it, unless attach leaves
    it out (unused, too long a name, a predicate); the number left out for a long name."""
    skipped = 0
    seen: set[str] = set()
    code = re.sub(r"\.reg\b[^;]*;", "", mask_comments(module.text)[f.body_start : f.body_end])
    used = set(re.findall(r"%?[A-Za-z_$][\w$]*", code))
    for v in f.declarations:
        if v.space != "reg":
            continue
        for reg in v.names():
            if reg in seen:
                continue
            seen.add(reg)
            if reg not in used:  # ptxas -g would not map it (quirk register-unused)
                assert reg not in children, f"{f.name}: {reg} described, though no instruction names it"
                counts["unused registers"] += 1
            elif len(reg) > MAX_REGISTER_NAME:
                assert reg not in children
                skipped += 1
            elif v.type == ".pred":  # not described by default (quirk predicate-count)
                assert reg not in children, f"{f.name}: predicate {reg} described"
                counts["predicates"] += 1
            else:
                die = children.get(reg)
                assert die is not None and die.tag == TAG.variable, (
                    f"{f.name}: no variable for register {reg}"
                )
                assert die.address_class == AddressClass.REG
                ops = _expr(die)
                assert ops and ops[0].register == reg
                counts["registers"] += 1
    return skipped


def assert_cubin_describes(module: PtxModule, cubin: bytes, result: AttachResult) -> dict[str, int]:
    """The cubin's DWARF has every function, parameter, register and variable of ``module``."""
    info = read_cubin(cubin)
    subprograms: dict[str, DIE] = {}
    module_vars: dict[str, DIE] = {}
    die: DIE | None
    for unit in info.units:
        assert unit.die is not None
        for die in unit.die.children:
            if die.tag == TAG.subprogram:
                subprograms[cast(str, die.get(AT.MIPS_linkage_name) or die.name)] = die
            elif die.tag == TAG.variable:
                module_vars[cast(str, die.name)] = die
    counts = {
        "functions": 0,
        "parameters": 0,
        "registers": 0,
        "unused registers": 0,
        "objects": 0,
        "module variables": 0,
        "predicates": 0,
    }
    unlocated = params_without_location(result)
    skipped = 0
    for f in module.functions:
        sub = subprograms.get(f.name)
        assert sub is not None, f"no subprogram for {f.name}"
        counts["functions"] += 1
        assert sub.name == (demangle(f.name) or f.name)
        low, high = sub.attr(AT.low_pc), sub.attr(AT.high_pc)
        assert low is not None and high is not None
        assert low.relocs and low.relocs[0].symbol.name == f.name and low.relocs[0].symbol.addend == 0, (
            f"{f.name}: low_pc is not the function's first byte"
        )
        assert high.relocs and high.relocs[0].symbol.name == f.name and high.relocs[0].symbol.addend > 0
        children = {c.name: c for c in sub.children}
        _assert_parameters(f, children, unlocated, counts)
        _assert_objects(f, children, counts)
        skipped += _assert_registers(module, f, children, counts)
    assert skipped == warned_count(result, r"(\d+) register\(s\) not described")
    classes = {"global": AddressClass.GLOBAL, "const": AddressClass.CONST, "shared": AddressClass.SHARED}
    handles = {
        ".texref": AddressClass.TEX,
        ".samplerref": AddressClass.TEX_SAMPLER,
        ".surfref": AddressClass.SURF,
    }
    for v in module.variables:
        die = module_vars.get(v.name)
        assert die is not None, f"no variable {v.name}"
        assert die.address_class == handles.get(v.type or "", classes[v.space])
        assert _expr(die), f"{v.name}: no location"
        counts["module variables"] += 1
    return counts


# --- the fixtures ---------------------------------------------------------------------


@pytest.mark.parametrize("name,rename", CASES, ids=CASE_IDS)
def test_attach_fixture(name: str, rename: bool, ptxas_tool: Ptxas) -> None:
    result = attached(name, rename)
    text = result.text
    module_in = parse_ptx((NODEBUG / name).read_text())
    module_out = parse_ptx(text)
    assert module_out.has_debug_target
    assert [(f.index, f.path) for f in module_out.files] == [(1, default_output_name(Path(name).name))]
    assert [f.name for f in module_out.functions] == [f.name for f in module_in.functions]
    assert sum(1 for b in module_out.sections if b.name == ".debug_info") == 1
    assert_line_table(text)

    report = check(text, filename=default_output_name(name), ptxas=ptxas_tool)
    assert report.consistent, "\n".join(map(str, report.differences))

    described = parse_ptx(text)  # registers under their (possibly new) names
    counts = assert_cubin_describes(described, compile_text(ptxas_tool, text, debug=True), result)
    assert counts["functions"] == len(module_in.functions) and counts["registers"] > 0
    assert _lint()(text) == []
    if rename:
        assert not any("not described" in w for w in result.warnings)
        assert result.renamed


@pytest.mark.parametrize("name", FIXTURE_NAMES, ids=lambda n: Path(n).name)
def test_attach_changes_no_code(name: str, ptxas_tool: Ptxas) -> None:
    """Compiled without -g, the code is the input's, byte for byte.

    ptxas treats ``.target ..., debug`` as ``-g`` (it refuses it with ``-O3``:
    "Optimized debugging not supported"), so the comparison is made on the output
    written with ``debug_target=False``; it differs from the default output only in
    ``.target``, and the default output compiles to the same code with or without -g.
    """
    source = (NODEBUG / name).read_text()
    plain = attached(name, False, debug_target=False).text
    default = attached(name).text
    assert plain == default.replace(", debug\n", "\n", 1)
    before = text_sections(compile_text(ptxas_tool, source, debug=False))
    after = text_sections(compile_text(ptxas_tool, plain, debug=False))
    assert before.keys() == after.keys() and before == after
    assert text_sections(compile_text(ptxas_tool, default, debug=False)) == text_sections(
        compile_text(ptxas_tool, default, debug=True)
    )


def test_rename_is_consistent(ptxas_tool: Ptxas) -> None:
    source = (NODEBUG / "long_registers.ptx").read_text()
    result = attached("long_registers.ptx", True)
    renamed = result.renamed
    assert renamed["%my_long_register3"] == "%Rc3" and renamed["%abcdef10"] == "%Rb10"
    assert renamed["%accumulator"] == "%Sa" and renamed["%scale_input"] == "%Sb"
    assert "%Ra" not in {re.sub(r"\d+$", "", new) for new in renamed.values()}  # taken by the module
    assert all(len(new) <= MAX_REGISTER_NAME for new in renamed.values())
    code = mask_comments(result.text)
    for old in renamed:
        assert not re.search(re.escape(old) + r"(?![\w$])", code), f"{old} is still used"

    # Without what attach adds, the output is the input with the names replaced, token by token.
    def rename(m: re.Match[str]) -> str:
        tok = m.group(0)
        if tok in renamed:
            return renamed[tok]
        if source[m.end() : m.end() + 1] == "<" and tok + "0" in renamed:
            return renamed[tok + "0"][:-1]
        return tok

    masked = mask_comments(source)  # names in comments stay
    expected, pos = "", 0
    for m in re.finditer(r"(?<![\w$%.])[A-Za-z_$%][\w$]*", masked):
        expected += source[pos : m.start()] + rename(m)
        pos = m.end()
    expected += source[pos:]
    body = result.text[: result.text.index("\n.section .debug")] + "\n"
    body = body.replace(", debug\n", "\n", 1)
    body = "".join(
        l for l in body.splitlines(True) if not re.match(r"\s*(\.loc\b|\.file\b|\$L__ptxdwarf_\w+:)", l)
    )
    assert body == expected
    plain = attach_ptx(source, output_name="x.ptx", rename_registers=True, debug_target=False).text
    assert text_sections(compile_text(ptxas_tool, source, debug=False)) == text_sections(
        compile_text(ptxas_tool, plain, debug=False)
    )
    # nvcc's temp_param_reg, declared in three call sequences, becomes one short name
    nvcc = attached("rich.nvcc.O3.sm_75.ptx", True)
    assert nvcc.renamed == {"temp_param_reg": "%Sa"}


def test_long_names_without_rename_are_counted() -> None:
    result = attached("long_registers.ptx")
    assert warned_count(result, r"(\d+) register\(s\) not described") == 8
    assert params_without_location(result) == {"scale_param_0"}
    names = {d.name for d in read_ptx(result.text).iter_dies()}
    assert "%abcdef1" in names and "%abcdef10" not in names and "%my_long_register0" not in names
    assert "%abcdef9" not in names  # fits, but no instruction names it


# --- device-function parameters --------------------------------------------------------

DEVICE_PARAMS = """\
.version 7.0
.target sm_75
.address_size 64

.visible .func (.param .b32 f_ret) f(
	.param .b32 f_a,
	.param .b32 f_b,
	.param .b32 f_c,
	.param .align 4 .b8 f_d[12],
	.param .b64 f_e,
	.param .align 4 .b8 f_g[24]
)
{
	.reg .b32 %r<9>;
	.reg .b64 %rd<2>;

	ld.param.u32 %r1, [f_a];
	ld.param.u32 %r2, [f_c];
	ld.param.u32 %r3, [f_c];
	ld.param.u32 %r4, [f_d+4];
	ld.param.u64 %rd1, [f_e];
	ld.param.u64 %rd1, [f_e];
	ld.param.u32 %r7, [f_g];
	ld.param.u32 %r8, [f_g+4];
	add.s32 %r5, %r1, %r2;
	add.s32 %r5, %r5, %r3;
	add.s32 %r6, %r5, %r4;
	st.param.b32 [f_ret+0], %r6;
	ret;
}
"""


def test_device_parameter_locations(ptxas_tool: Ptxas) -> None:
    result = attach_ptx(DEVICE_PARAMS, output_name="params.ptx")
    assert params_without_location(result) == {"f_b", "f_c"}
    warning = next(w for w in result.warnings if "without a location" in w)
    assert "f_b (never loaded by ld.param)" in warning and "loaded into both %r2 and %r3" in warning
    assert check(result.text, ptxas=ptxas_tool).consistent
    assert _lint()(result.text) == []
    info = read_cubin(compile_text(ptxas_tool, result.text, debug=True))
    params = {d.name: d for d in info.iter_dies() if d.tag == TAG.formal_parameter}
    assert [str(op) for op in _expr(params["f_a"])] == ["DW_OP_regx %r1"]
    assert [str(op) for op in _expr(params["f_e"])] == ["DW_OP_regx %rd1"]  # loaded twice, same register
    assert [str(op) for op in _expr(params["f_d"])] == [
        "DW_OP_piece 4",
        "DW_OP_regx %r4",
        "DW_OP_piece 4",
        "DW_OP_piece 4",
    ]
    assert params["f_d"].address_class == AddressClass.REG
    # 16 bytes never loaded: not one DW_OP_piece 16, which ptxas 13.0 misreads
    # (its operand byte 0x10 taken for DW_OP_constu: "Checked Data was Invalid")
    assert [str(op) for op in _expr(params["f_g"])] == [
        "DW_OP_regx %r7",
        "DW_OP_piece 4",
        "DW_OP_regx %r8",
        "DW_OP_piece 4",
        "DW_OP_piece 0xf",
        "DW_OP_piece 1",
    ]


NARROW_LOADS = """\
.version 7.0
.target sm_75
.address_size 64

.visible .func (.param .b32 f_retval) f(
\t.param .b64 f_param_0,
\t.param .align 4 .b8 f_param_1[8],
\t.param .b32 f_param_2
)
{
\t.reg .b16 %rs<2>;
\t.reg .b32 %r<6>;

\tld.param.u32 %r1, [f_param_0];
\tld.param.u32 %r2, [f_param_1];
\tld.param.s8 %rs1, [f_param_2];
\tcvt.s32.s16 %r3, %rs1;
\tadd.s32 %r4, %r1, %r2;
\tadd.s32 %r4, %r4, %r3;
\tst.param.b32 [f_retval+0], %r4;
\tret;
}
"""


def test_a_parameter_loaded_in_part_is_described_in_part(ptxas_tool: Ptxas) -> None:
    """One ld.param of fewer bytes than the parameter: the register holds those bytes only,
    the rest is an empty piece (a debugger reading 8 bytes from the 4-byte %r1 showed half of
    the value and a neighbour's bits)."""
    result = attach_ptx(NARROW_LOADS, output_name="narrow.ptx")
    info = read_cubin(compile_text(ptxas_tool, result.text, debug=True))
    params = {d.name: d for d in info.iter_dies() if d.tag == TAG.formal_parameter}
    for name, register in (("f_param_0", "%r1"), ("f_param_1", "%r2")):
        assert [str(op) for op in _expr(params[name])] == [
            f"DW_OP_regx {register}",
            "DW_OP_piece 4",
            "DW_OP_piece 4",
        ]
    assert [str(op) for op in _expr(params["f_param_2"])][:2] == ["DW_OP_regx %rs1", "DW_OP_piece 1"]
    assert sum(cast(int, op.args[0]) for op in _expr(params["f_param_2"]) if op.name == "DW_OP_piece") == 4
    assert check(result.text, ptxas=ptxas_tool).consistent
    assert _lint()(result.text) == []


def test_large_register_range_is_described_by_the_names_used(ptxas_tool: Ptxas) -> None:
    """Two ranges of 1000 registers, 49 of them used: those 49 are described (ptxas -g maps
    no other), read from the body once, not name by name."""
    body = "\n".join(f"\tmov.u32 %r{i}, {i};" for i in range(1, 50))
    text = (
        ".version 7.0\n.target sm_75\n.address_size 64\n"
        ".visible .entry big(.param .u32 big_n)\n{\n\t.reg .b32 %r<1000>;\n\t.reg .b64 %rd<1000>;\n"
        f"{body}\n\tret;\n}}\n"
    )
    result = attach_ptx(text, output_name="big.ptx")
    assert sum(1 for line in result.text.split("\n") if ".loc" in line) == 50
    names = {d.name for d in read_ptx(result.text).iter_dies() if d.tag == TAG.variable}
    assert names == {f"%r{i}" for i in range(1, 50)}
    report = check(result.text, ptxas=ptxas_tool)
    assert report.consistent and not report.unmapped_registers


EDGES = """\
.version 7.0
.target sm_75
.address_size 64
.visible .func f1() { ret; }
.visible .func f2()
{
}
.visible .entry k1(.param .u32 k1_p) { .reg .b32 %r<3>; ld.param.u32 %r1, [k1_p];
	add.s32 %r2, %r1, 1; ret; }
.visible .entry k2()
{	.reg .b32 %r<2>; mov.u32 %r1, 1; mov.u32 %r0,
	2; mov.u32 %r1, 3;
	.reg .b32 %q<2>; mov.u32 %q1, 1;
	ret;
}
"""


def test_odd_layouts(ptxas_tool: Ptxas) -> None:
    """Bodies on the header's line, instructions after declarations and braces, an
    empty body, a statement over two lines with another after it on its last line."""
    result = attach_ptx(EDGES, output_name="edges.ptx")
    text = result.text
    assert "\t.reg .b32 %r<3>; \n\t.loc\t1 20 1\n$L__ptxdwarf_begin2:\n\tld.param.u32 %r1, [k1_p];\n" in text
    assert "\tret; \n$L__ptxdwarf_end0:\n\t}\n" in text
    assert "{\n$L__ptxdwarf_begin1:\n$L__ptxdwarf_end1:\n}" in text
    assert "\t2; mov.u32 %r1, 3;\n" in text  # no .loc inside the two-line statement
    assert check(text, ptxas=ptxas_tool).consistent
    assert _lint()(text) == []
    plain = attach_ptx(EDGES, output_name="edges.ptx", debug_target=False).text
    assert text_sections(compile_text(ptxas_tool, EDGES, debug=False)) == text_sections(
        compile_text(ptxas_tool, plain, debug=False)
    )


# --- refusing and replacing existing debug info -------------------------------------------------


def test_line_information_is_kept(ptxas_tool: Ptxas) -> None:
    """Line-info PTX (nvcc -lineinfo: .file/.loc, inlined functions named in .debug_str): attach
    keeps its .file/.loc and its .debug_str, names the compile unit after .file 1, and adds the
    DIEs; --replace still gives PTX lines instead."""
    path = "nvcc/rich.lineinfo.sm_75.ptx"
    text = (FIXTURES / path).read_text()
    result = attach_ptx(text, output_name="out.ptx", filename=path)
    locs = [line.strip() for line in text.splitlines() if line.strip().startswith(".loc")]
    assert [line.strip() for line in result.text.splitlines() if line.strip().startswith(".loc")] == locs
    module = parse_ptx(result.text)
    assert [f.path for f in module.files] == [f.path for f in parse_ptx(text).files]
    assert {b.name for b in module.sections} >= {".debug_info", ".debug_abbrev", ".debug_str"}
    info = read_ptx(result.text)
    assert info.units[0].die is not None and info.units[0].die.name == parse_ptx(text).files[0].full_path
    report = check(result.text, ptxas=ptxas_tool)
    assert report.consistent and report.line_rows > 50
    replaced = attach_ptx(text, output_name="out.ptx", filename=path, replace=True)
    assert [f.path for f in parse_ptx(replaced.text).files] == ["out.ptx"]


@pytest.mark.parametrize(
    "path,what",
    [
        ("nvcc/call_example.sm_75.ptx", ".target ... debug"),
        ("numba/kernel_locals.sm_75.ptx", ".target ... debug"),
    ],
)
def test_existing_debug_info(path: str, what: str, ptxas_tool: Ptxas) -> None:
    text = (FIXTURES / path).read_text()
    with pytest.raises(AttachError) as info:
        attach_ptx(text, output_name="out.ptx", filename=path)
    message = str(info.value)
    assert message.startswith(f"{path}:") and what in message and "--replace" in message
    assert "\n" not in message
    result = attach_ptx(text, output_name="out.ptx", filename=path, replace=True)
    module = parse_ptx(result.text)
    assert [f.path for f in module.files] == ["out.ptx"]
    assert [b.name for b in module.sections if b.name == ".debug_info"] == [".debug_info"]
    assert_line_table(result.text)
    assert check(result.text, ptxas=ptxas_tool).consistent
    assert _lint()(result.text) == []
    # attach's own output: refused again, and replaced by the same text
    with pytest.raises(AttachError):
        attach_ptx(result.text, output_name="out.ptx")
    assert attach_ptx(result.text, output_name="out.ptx", replace=True).text == result.text


def test_empty_debug_sections_are_no_debug_info(ptxas_tool: Ptxas) -> None:
    """clang 19 -g of a kernel marked nodebug: '.target sm_75, debug' and an empty
    '.section .debug_loc { }', nothing else. attach describes it as a module without debug
    info: the empty block goes, the debug target stays (once), ptxas, lint and check accept."""
    path = "corpus/clang-19/nodebug.O0-g.sm_75.ptx"
    text = (FIXTURES / path).read_text()
    assert re.search(r"\.section\s+\.debug_loc\s*\{\s*\}", text)
    result = attach_ptx(text, output_name="out.ptx", filename=path)
    module = parse_ptx(result.text)
    assert sorted(b.name for b in module.sections) == [
        ".debug_abbrev",
        ".debug_aranges",
        ".debug_info",
        ".debug_pubnames",
    ]
    assert all(b.image.data for b in module.sections)
    assert result.text.count(", debug") == 1 and module.has_debug_target
    assert _lint()(result.text) == []
    report = check(result.text, ptxas=ptxas_tool)
    assert report.consistent and report.line_rows > 0
    # an empty block beside real debug info does not hide it
    with pytest.raises(AttachError, match="already has debug info"):
        attach_ptx((FIXTURES / "corpus/clang-19/tiny.O0-g.sm_75.ptx").read_text(), output_name="out.ptx")


def test_bad_input() -> None:
    source = (NODEBUG / "handwritten.ptx").read_text()
    with pytest.raises(AttachError, match="address_size is 32"):
        attach_ptx(source.replace(".address_size 64", ".address_size 32"), output_name="x.ptx")
    with pytest.raises(AttachError, match=r"cannot be written in \.file"):
        attach_ptx(source, output_name='my "file".ptx')
    with pytest.raises(AttachError, match="no function"):
        attach_ptx(".version 7.0\n.target sm_75\n.address_size 64\n.global .u32 x;\n", output_name="x.ptx")


def test_crlf_and_styles(ptxas_tool: Ptxas) -> None:
    source = (NODEBUG / "handwritten.ptx").read_text().replace("\n", "\r\n")
    result = attach_ptx(source, output_name="crlf.ptx")
    assert "\r\n.file 1" in result.text.split(".section")[0]
    assert_line_table(result.text.replace("\r\n", "\n"))
    assert check(result.text, ptxas=ptxas_tool).consistent
    for style in ("nvcc", "compact"):
        other = attach_ptx((NODEBUG / "handwritten.ptx").read_text(), output_name="h.ptx", style=style)
        assert check(other.text, ptxas=ptxas_tool).consistent


def test_main_attach(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "long.ptx"
    shutil.copy(NODEBUG / "long_registers.ptx", src)
    out = tmp_path / "long.out.ptx"
    args = argparse.Namespace(
        path=str(src), output=str(out), rename_registers=False, replace=False, style="readable"
    )
    assert main_attach(args) == 0
    err = capsys.readouterr().err
    assert f"ptxdwarf: warning: {src}: 8 register(s) not described" in err
    assert f'.file 1 "{out}"' in out.read_text()
    args = argparse.Namespace(
        path=str(src), output=None, rename_registers=True, replace=False, style="compact"
    )
    assert main_attach(args) == 0
    captured = capsys.readouterr()
    assert f'.file 1 "{tmp_path / "long.debug.ptx"}"' in captured.out
    assert "not described" not in captured.err


def test_cli_attach_when_wired(tmp_path: Path) -> None:
    from ptxdwarf import cli

    if "attach" not in cli._parser().format_help():
        pytest.skip("ptxdwarf attach is not wired into ptxdwarf.cli yet")
    out = tmp_path / "h.ptx"
    assert cli.main(["attach", str(NODEBUG / "handwritten.ptx"), "-o", str(out)]) == 0
    assert ".section .debug_info" in out.read_text()


# --- the labels the plan places ------------------------------------------------------------------


@pytest.mark.parametrize("name", [*FIXTURE_NAMES, "edges", "crlf"], ids=lambda n: Path(n).name)
def test_planned_labels_land_in_their_function(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The labels attach checks the DIEs against without reading its output again are
    the labels the output defines, each in the function the plan says."""
    from ptxdwarf.attach import check_symbols
    from ptxdwarf.autodebug import entry

    planned: dict[str, str] = {}

    def recording(module: PtxModule, dbg: DebugInfoBuilder, labels: dict[str, PtxFunction]) -> None:
        planned.update({label: f.name for label, f in labels.items()})
        check_symbols(module, dbg, labels)

    monkeypatch.setattr(entry, "check_symbols", recording)
    if name == "edges":
        text = EDGES
    elif name == "crlf":
        text = (NODEBUG / "handwritten.ptx").read_text().replace("\n", "\r\n")
    else:
        text = (NODEBUG / name).read_text()
    out = parse_ptx(attach_ptx(text, output_name="out.ptx", rename_registers=True).text)
    defined = {label: f.name for f in out.functions for label in f.labels if label.startswith("$L__ptxdwarf")}
    assert planned == defined
    assert len(planned) == 2 * len(out.functions)


def test_entry_without_body() -> None:
    header = ".version 7.0\n.target sm_75\n.address_size 64\n\n"
    body = ".visible .entry k()\n{\n\tret;\n}\n"
    for text, where in (
        (header + ".visible .entry z(.param .u64 p)\n", "5: .entry"),
        (header + ".visible .entry z(.param .u64 p)\n\n" + body, "5: .entry"),
        (header + body + "\n.func z\n", "10: .func"),
    ):
        with pytest.raises(AttachError) as info:
            attach_ptx(text, output_name="x.ptx", filename="in.ptx")
        assert str(info.value) == f"in.ptx:{where} z has no body and is not a declaration ending with ';'"


def test_identifiers_starting_agrees_with_identifiers() -> None:
    from ptxdwarf.autodebug.scan import identifiers, identifiers_starting

    masked = "$L__x1: a$L__x2 .$L__x3 %$L__x4 $$L__x5 ($L__x6+1) [$L__x7] $L__x8$y $L__ $L_x"
    expected = {t for t in identifiers(masked) if t.startswith("$L__")}
    assert (
        identifiers_starting(masked, "$L__") == expected == {"$L__x1", "$L__x6", "$L__x7", "$L__x8$y", "$L__"}
    )
    for name in FIXTURE_NAMES:
        text = mask_comments((NODEBUG / name).read_text())
        for prefix in ("$L__", "%r", "_Z"):
            assert identifiers_starting(text, prefix) == {
                t for t in identifiers(text) if t.startswith(prefix)
            }


def test_directive_re_skips_directive_names_within_tokens() -> None:
    from ptxdwarf.ptx.lexer import directive_re

    text = ".loc 1\nld.loc x; $.loc; a.loc; ..loc; .local; .loc\t1;.file"
    assert [m.start() for m in directive_re("loc").finditer(text)] == [0, text.rindex(".loc")]
    assert [m.group() for m in directive_re("loc", "file").finditer(text)] == [".loc", ".loc", ".file"]


def test_renamed_bases_avoid_names_the_module_uses() -> None:
    """``%Ra`` is taken by ``%Ra7`` (a base followed by digits), ``%Rb`` by itself."""
    text = (
        ".version 7.0\n.target sm_75\n.address_size 64\n\n"
        ".visible .entry k()\n{\n\t.reg .b32 %a_long_register<3>;\n\t.reg .b32 %Ra7;\n\t.reg .b32 %Rb;\n"
        "\tmov.u32 %a_long_register2, 1;\n\tmov.u32 %Ra7, %Rb;\n\tret;\n}\n"
    )
    result = attach_ptx(text, output_name="x.ptx", rename_registers=True)
    assert result.renamed == {f"%a_long_register{i}": f"%Rc{i}" for i in range(3)}
    assert "\t.reg .b32 %Rc<3>;\n" in result.text and "\tmov.u32 %Rc2, 1;\n" in result.text
