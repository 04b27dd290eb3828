"""What a debugger can show: check's join of the DWARF with ptxas's register map, attach
--only-mapped, the testing helpers and the dump of the map."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest
from conftest import FIXTURES, fixture_id
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxdwarf.api import read_ptx
from ptxdwarf.autodebug import attach_ptx
from ptxdwarf.check import check
from ptxdwarf.cuda.cubin import cubin_images
from ptxdwarf.cuda.regmap import FunctionRegisters, RegisterMapEntry
from ptxdwarf.dwarf.constants import AT, FORM, OP, TAG
from ptxdwarf.dwarf.expr import decode_expression, register_number
from ptxdwarf.dwarf.forms import uleb_bytes
from ptxdwarf.dwarf.image import Block, Reloc, Symbol
from ptxdwarf.dwarf.model import DIE, Attribute, DebugInfo, Unit, die_path
from ptxdwarf.ptx.reader import parse_ptx
from ptxdwarf.testing import assert_readable, compile_ptx, readable_variables
from ptxdwarf.visibility import RegisterLocation, register_locations
from tools.ptxas_facts.cases.registers import _unused_register

NUMBA_NODEBUG = [
    FIXTURES / "nodebug" / "saxpy.numba.sm_75.ptx",
    *sorted(FIXTURES.glob("corpus/numba/*.nodebug.sm_75.ptx")),
]
#: attach's inputs whose output describes registers ptxas -g folds away (measured).
WITH_UNMAPPED = [
    FIXTURES / "corpus" / "numba" / "polar.nodebug.sm_75.ptx",
    FIXTURES / "nodebug" / "handwritten.ptx",
    FIXTURES / "nodebug" / "rich.nvcc.O3.sm_75.ptx",
]


def _subprogram(die: DIE) -> str:
    while die.tag != TAG.subprogram:
        assert die.parent is not None
        die = die.parent
    return str(die.get(AT.linkage_name) or die.get(AT.MIPS_linkage_name) or die.name)


def _described_by_die(ptx: str) -> list[tuple[str, str]]:
    """(function, register) of each DW_OP_regx in each location of the PTX's own DWARF."""
    info = read_ptx(ptx)
    names: list[tuple[str, str]] = []
    for die in info.iter_dies():
        value = die.get(AT.location)
        if die.tag in (TAG.variable, TAG.formal_parameter) and isinstance(value, Block):
            registers = [op.register for op in decode_expression(value, 8) if op.register]
            names.extend((_subprogram(die), r) for r in dict.fromkeys(registers))
    return names


def _described(ptx: str) -> set[tuple[str, str]]:
    return set(_described_by_die(ptx))


def _in_map(cubin: bytes, functions: list[str]) -> set[tuple[str, str]]:
    """(function, register) of the raw ``.nv_debug_info_reg_sass`` bytes: each function's part
    starts with its name (one of ``functions``, or a ``__cuda_sm20_...`` helper ptxas adds),
    each register name (``%...``) follows a u32 whose high byte is 0."""
    raw = cubin_images(cubin).reg_sass or b""
    names = "|".join(re.escape(f) for f in sorted(functions, key=len, reverse=True))
    found = set()
    function = None
    for m in re.finditer(
        rb"(?:(?<=\x00)(%[A-Za-z0-9_$]+)|(__cuda[A-Za-z0-9_$]*|" + names.encode() + rb"))\x00", raw
    ):
        if m.group(2):
            function = m.group(2).decode()
        else:
            assert function is not None
            found.add((function, m.group(1).decode()))
    return found


def _absent(out: str) -> set[tuple[str, str]]:
    return _described(out) - _in_map(compile_ptx(out).data, [f.name for f in parse_ptx(out).functions])


@pytest.mark.parametrize("path", NUMBA_NODEBUG + WITH_UNMAPPED[1:], ids=fixture_id)
@pytest.mark.ptxas
def test_check_lists_exactly_the_registers_absent_from_the_map(path: Path) -> None:
    out = attach_ptx(path.read_text(), output_name="/tmp/module.debug.ptx", filename=str(path)).text
    absent = _absent(out)
    assert bool(absent) == (path in WITH_UNMAPPED)
    report = check(out, filename=str(path))
    assert report.consistent
    assert {(r.function, r.register) for r in report.unmapped_registers} == absent
    data = json.loads(report.to_json())
    assert {(r["function"], r["register"]) for r in data["unmapped_registers"]} == absent
    assert data["registers_described"] == len(_described_by_die(out))


@pytest.mark.ptxas
def test_a_described_register_no_instruction_uses_is_absent() -> None:
    """The harness case register-unused.declared-only: %r0 is described, used by no instruction."""
    text = _unused_register(False)()
    assert _absent(text) == {("_Z4testPi", "%r0")}
    report = check(text)
    assert [(r.function, r.register) for r in report.unmapped_registers] == [("_Z4testPi", "%r0")]


def test_attach_describes_only_the_registers_the_code_uses() -> None:
    """numba declares %r<N> from %r0 (and %rd, %f, %p), and uses none of the 0th: attach leaves
    them out, so that on most of numba's kernels every described register is mapped."""
    text = NUMBA_NODEBUG[0].read_text()
    assert re.search(r"\.reg \.b32\s+%r<\d+>;", text) and not re.search(r"%r0\b", text.split("{", 1)[1])
    out = attach_ptx(text, output_name="/tmp/module.debug.ptx").text
    assert {r for _, r in _described(out)} >= {"%r1", "%rd1"}
    assert not {r for _, r in _described(out)} & {"%r0", "%rd0", "%f0", "%p0"}


@pytest.mark.parametrize("path", WITH_UNMAPPED, ids=fixture_id)
@pytest.mark.ptxas
def test_attach_only_mapped_describes_what_a_debugger_can_show(path: Path) -> None:
    text = path.read_text()
    result = attach_ptx(text, output_name="/tmp/module.debug.ptx", filename=str(path), only_mapped=True)
    assert any("register map does not place them" in w for w in result.warnings)
    report = check(result.text, filename=str(path))
    assert report.consistent
    assert report.registers and not report.unmapped_registers
    full = attach_ptx(text, output_name="/tmp/module.debug.ptx", filename=str(path)).text
    assert _described(result.text) == _described(full) - _absent(full)


@pytest.fixture(scope="module")
def nvcc_g() -> str:
    """nvcc -G of fixtures/src/readable.cu: line 3 sets i, 4 acc, 5 loops over j, 6 stores."""
    return (FIXTURES / "nvcc" / "readable.G.sm_75.ptx").read_text()


@pytest.mark.ptxas
def test_readable_variables_follow_the_source(nvcc_g: str) -> None:
    cubin = compile_ptx(nvcc_g)
    assert readable_variables(cubin, "_Z1kPfPKfi", 3, file="readable.cu") == {}
    at5 = readable_variables(cubin, "_Z1kPfPKfi", 5, file="readable.cu")
    assert set(at5) == {"i", "acc"}
    at6 = readable_variables(cubin, "_Z1kPfPKfi", 6, file="readable.cu")
    assert set(at6) == {"i", "acc", "j"}
    assert all(re.fullmatch(r"R\d+", r) for regs in at6.values() for r in regs)
    assert assert_readable(cubin, "_Z1kPfPKfi", "acc", 5, file="readable.cu") == at5["acc"]
    with pytest.raises(AssertionError, match=r"j is not readable at line 3: .*\(readable there: none\)"):
        assert_readable(cubin, "_Z1kPfPKfi", "j", 3, file="readable.cu")
    with pytest.raises(AssertionError, match="no register location"):
        assert_readable(cubin, "_Z1kPfPKfi", "nothing", 5, file="readable.cu")
    with pytest.raises(AssertionError, match="no code for line 1 "):
        readable_variables(cubin, "_Z1kPfPKfi", 1, file="readable.cu")


@pytest.mark.ptxas
def test_dump_prints_the_map(nvcc_g: str, tmp_path: Path) -> None:
    path = tmp_path / "k.cubin"
    path.write_bytes(compile_ptx(nvcc_g).data)
    run = [sys.executable, "-m", "ptxdwarf", "dump"]
    text = subprocess.run([*run, str(path)], capture_output=True, text=True, check=True).stdout
    assert ".nv_debug_info_reg_sass contents:" in text
    assert re.search(r"function _Z1kPfPKfi: \d+ entries", text)
    assert re.search(r"  %rd1 +R\d+ +0x[0-9a-f]{8} 0x[0-9a-f]{8} +[01]  b64", text)
    doc = json.loads(
        subprocess.run([*run, "--json", str(path)], capture_output=True, text=True, check=True).stdout
    )
    (function,) = doc["register_map"]
    assert function["function"] == "_Z1kPfPKfi"
    assert set(function["entries"][0]) == {"ptx", "sass", "low_pc", "high_pc", "piece", "type"}


@pytest.mark.ptxas
def test_check_text_names_unavailable_registers(tmp_path: Path) -> None:
    path = FIXTURES / "nodebug" / "handwritten.ptx"
    out = tmp_path / "handwritten.debug.ptx"
    out.write_text(attach_ptx(path.read_text(), output_name=str(out), filename=str(path)).text)
    proc = subprocess.run(
        [sys.executable, "-m", "ptxdwarf", "check", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(
        r"registers: (\d+) of (\d+) described registers are in ptxas's register map", proc.stdout
    )
    assert re.search(
        r"registers: mix: 2 of \d+ unavailable to a debugger: mix_param_2 \(%f2\), %f2\n", proc.stdout
    )


NVCC_G = [
    *(p for p in sorted(FIXTURES.glob("nvcc/*.ptx")) if "lineinfo" not in p.name),
    *sorted(FIXTURES.glob("corpus/nvcc-1[23].*/*.G.*.ptx")),
    *sorted(FIXTURES.glob("corpus/nvrtc-13.5/*.G.ptx")),
]


@pytest.mark.parametrize("path", NVCC_G, ids=fixture_id)
@pytest.mark.ptxas
def test_nvcc_g_describes_only_mapped_registers(path: Path) -> None:
    report = check(path.read_text(), filename=str(path))
    assert report.registers
    assert not report.unmapped_registers


@pytest.mark.ptxas
def test_a_list_entry_whose_begin_label_ptxas_dropped_stays_in_its_function() -> None:
    """ptxas drops $L__tmp12, the begin of an entry of acc's list in _Z3mixcsixfdbht (quirk
    label-at-line-zero), and relocates against the label itself: the register is still that
    function's, its start unknown, and the map has it (read from the raw bytes)."""
    text = (FIXTURES / "lint" / "faults" / "label-at-line-zero.ptx").read_text()
    report = check(text, filename="line0.ptx")
    functions = {f.name for f in parse_ptx(text).functions}
    assert {r.function for r in report.registers} <= functions
    (acc,) = [r for r in report.registers if r.name == "acc" and r.register == "%fd6"]
    assert (acc.function, acc.low_pc) == ("_Z3mixcsixfdbht", None)
    assert ("_Z3mixcsixfdbht", "%fd6") in _in_map(compile_ptx(text).data, sorted(functions))
    assert acc.mapped and not report.unmapped_registers
    # the start is unknown, the end is not: placements after the end do not meet the range
    assert acc.high_pc is not None and acc.entries
    assert all(e.low_pc < acc.high_pc for e in acc.entries)
    (summary,) = report.register_summary()
    assert re.fullmatch(r"registers: (\d+) of \1 described registers are in ptxas's register map", summary)


def test_a_range_with_one_bound_unknown_is_bounded_by_the_other() -> None:
    """A list entry whose end label ptxas dropped: its placements and readable addresses stop
    at its known start (and the other way round)."""
    before = RegisterMapEntry("%r1", 5, 11, 0xB40, 0xB50, 0)
    after = RegisterMapEntry("%r1", 5, 12, 0xB50, 0xDB0, 0)

    class Map:
        def entry(self, index: int) -> RegisterMapEntry:
            return (before, after)[index]

    ranges = b"".join(
        struct.pack("<4I", i, e.low_pc, e.high_pc, e.piece) for i, e in enumerate((before, after))
    )
    for low, high, placed in ((0xB60, None, ["R12"]), (None, 0xB48, ["R11"]), (None, None, ["R11", "R12"])):
        loc = RegisterLocation("f/acc", "f", "%r1", low, high, (), True)
        loc._entries, loc._ranges = (
            None,
            (cast(FunctionRegisters, Map()), ranges),
        )  # as register_locations leaves it
        assert [e.sass for e in loc.entries] == placed, (low, high)
    open_end = RegisterLocation("f/acc", "f", "%r1", 0xB60, None, (before, after), True)
    assert not open_end.readable_at(0xB48) and open_end.readable_at(0xB60)
    open_start = RegisterLocation("f/acc", "f", "%r1", None, 0xB48, (before, after), True)
    assert open_start.readable_at(0xB40) and not open_start.readable_at(0xB60)


def test_a_64_bit_value_is_readable_only_where_both_halves_are() -> None:
    low = RegisterMapEntry("%rd1", 5, 4, 0x10, 0x40, 0)
    high = RegisterMapEntry("%rd1", 5, 5, 0x20, 0x30, 1)
    loc = RegisterLocation("f/x", "f", "%rd1", 0x0, 0x50, (low, high), True, frozenset({0, 1}))
    assert [loc.readable_at(a) for a in (0x10, 0x20, 0x2F, 0x30, 0x40)] == [False, True, True, False, False]
    assert [e.sass for e in loc.entries_at(0x20)] == ["R4", "R5"]
    only_low = RegisterLocation("f/x", "f", "%rd1", 0x0, 0x50, (low,), True, frozenset({0, 1}))
    assert not only_low.readable_at(0x20)
    assert not loc.readable_at(0x60)  # outside the variable's range


# --- the scopes of register_locations, against their definition -----------------------------

_SCOPED = [TAG.subprogram, TAG.lexical_block, TAG.inlined_subroutine]


def _defined_scope(die: DIE) -> tuple[str, int | None, int | None] | None:
    """The scope a variable whose parent is ``die`` has, by its definition: the nearest
    subprogram with a low_pc above (its code symbol), and the range of the innermost lexical
    block or inlined subroutine on the way that has one in that function, else its own."""
    from ptxdwarf import visibility

    low: int | None = None
    high: int | None = None
    d: DIE | None = die
    while d is not None:
        if d.tag == TAG.subprogram and AT.low_pc in d:
            function = visibility._function_name(d)
            if function is None:
                return None
            if low is None:
                low, high = visibility._range(d, function)
            return function, low, high
        if low is None and d.tag in _SCOPED[1:] and AT.low_pc in d:
            sub = d.parent
            while sub is not None and not (sub.tag == TAG.subprogram and AT.low_pc in sub):
                sub = sub.parent
            name = visibility._function_name(sub) if sub is not None else None
            if name is not None:
                low, high = visibility._range(d, name)
        d = d.parent
    return None


@st.composite
def _scope_tree(draw: st.DrawFn) -> DebugInfo:
    """A unit of nested subprograms, blocks and variables, with ranges of every kind."""
    symbols = ["f", "g", "$L__x"]

    def pc(name: int) -> Attribute | None:
        kind = draw(st.sampled_from(["none", "symbol", "number", "length"]))
        if kind == "none":
            return None
        if kind == "symbol":
            symbol = Symbol(draw(st.sampled_from(symbols)), draw(st.integers(0, 64)))
            return Attribute(name, FORM.addr, symbol.addend, (Reloc(0, 8, symbol),))
        form = FORM.addr if kind == "number" else FORM.data4
        return Attribute(name, form, draw(st.integers(0, 64)))

    def node(depth: int) -> DIE:
        tag = draw(st.sampled_from([*_SCOPED, TAG.variable, TAG.formal_parameter, TAG.structure_type]))
        attributes = [Attribute(AT.name, FORM.string, draw(st.sampled_from(["a", "b", "f"])))]
        for name in (AT.low_pc, AT.high_pc):
            found = pc(name)
            if found is not None:
                attributes.append(found)
        if tag in (TAG.variable, TAG.formal_parameter):
            register = draw(st.sampled_from(["%r1", "%rd2"]))
            expr = bytes([OP.regx]) + uleb_bytes(register_number(register))
            attributes.append(Attribute(AT.location, FORM.exprloc, Block(expr)))
        children = [node(depth + 1) for _ in range(draw(st.integers(0, 3 if depth < 3 else 0)))]
        return DIE(tag, attributes, children)

    root = DIE(TAG.compile_unit, [], [node(1) for _ in range(draw(st.integers(1, 3)))])
    return DebugInfo(units=[Unit(die=root)])


@settings(max_examples=300, deadline=None)
@given(_scope_tree())
def test_the_scopes_of_register_locations_are_those_defined(info: DebugInfo) -> None:
    got = [(r.path, r.function, r.register, r.low_pc, r.high_pc) for r in register_locations(info, [])]
    expected = []
    for die in info.iter_dies():
        if die.tag not in (TAG.variable, TAG.formal_parameter) or die.parent is None:
            continue
        scope = _defined_scope(die.parent)
        if scope is not None:
            register = decode_expression(die.get(AT.location), 8)[0].register
            expected.append((die_path(die), scope[0], register, scope[1], scope[2]))
    assert got == expected


def test_the_spans_of_a_register_location_are_its_entries() -> None:
    import ptxdwarf
    from ptxdwarf.cuda.cubin import register_map
    from ptxdwarf.visibility import register_locations

    info = ptxdwarf.read(FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin")
    locations = register_locations(info, register_map(info) or [])
    assert any(loc.spans() for loc in locations)
    for loc in locations:
        before = loc.spans()  # from the packed ranges
        entries = loc.entries
        assert before == [(e.piece, e.low_pc, e.high_pc) for e in entries] == loc.spans()
