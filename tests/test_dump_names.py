"""dump names what references point at and enumerated values as llvm-dwarfdump does:
type spellings after DW_AT_type (``"int *"``, ``"const int (*)[4]"``), DW_INL_* and
DW_ACCESS_* values, DW_AT_LLVM_sysroot."""

from __future__ import annotations

import re
import subprocess
from itertools import pairwise
from pathlib import Path

import pytest
from conftest import FIXTURES

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.dwarf
from ptxdwarf.cuda import read_cubin
from ptxdwarf.cuda.ptxas import Ptxas
from ptxdwarf.dump import dump_json, dump_text
from ptxdwarf.dwarf import AT, TAG
from ptxdwarf.dwarf.constants import at_name, enumerated_value_name
from ptxdwarf.dwarf.model import DIE, Attribute, DebugInfo
from ptxdwarf.dwarf.typenames import MAX_STEPS, type_name

_LINE = re.compile(
    r"^\s*(DW_AT_(?:type|containing_type|inline|accessibility|LLVM_sysroot))(?: \[[^\]]*\])?\s*\((.*)\)$"
)
SOURCES = ["nvcc/rich.sm_75.ptx", "clang/rich.O0.sm_75.ptx", "dump/nvcc/types.sm_75.ptx"]


def _values(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for line in text.splitlines() if (m := _LINE.match(line))]


@pytest.mark.parametrize("source", SOURCES)
def test_names_agree_with_llvm_dwarfdump(
    source: str, tmp_path: Path, ptxas_tool: Ptxas, llvm_dwarfdump: str
) -> None:
    cubin = tmp_path / "t.cubin"
    cubin.write_bytes(ptxas_tool.compile((FIXTURES / source).read_text(), arch="sm_75").cubin)
    theirs = subprocess.run(
        [llvm_dwarfdump, "--debug-info", str(cubin)], capture_output=True, text=True, check=True
    ).stdout
    ours = _values(dump_text(read_cubin(cubin)))
    assert ours == _values(theirs)
    assert any('"' in v and "*" in v for _, v in ours)  # the pointers are there to compare


def test_the_pointer_types_of_the_types_fixture(ptxas_tool: Ptxas, tmp_path: Path) -> None:
    cubin = tmp_path / "t.cubin"
    cubin.write_bytes(
        ptxas_tool.compile((FIXTURES / "dump/nvcc/types.sm_75.ptx").read_text(), arch="sm_75").cubin
    )
    names = {v.split(" ", 1)[1] for a, v in _values(dump_text(read_cubin(cubin))) if a == "DW_AT_type"}
    for expected in (
        '"int *"',
        '"const int *const"',
        '"int (*)(int, float)"',
        '"const int (*)[4]"',
        '"int &"',
    ):
        assert expected in names


def _ref(name: int, target: DIE) -> Attribute:
    return Attribute(name, None, target)


def test_pointer_to_member_and_arrays_without_a_language() -> None:
    info = DebugInfo()
    cu = DIE(TAG.compile_unit)
    s = cu.add_child(DIE(TAG.structure_type, [Attribute(AT.name, None, "S")]))
    i = cu.add_child(DIE(TAG.base_type, [Attribute(AT.name, None, "int")]))
    member = cu.add_child(DIE(TAG.ptr_to_member_type, [_ref(AT.type, i), _ref(AT.containing_type, s)]))
    array = cu.add_child(DIE(TAG.array_type, [_ref(AT.type, i)]))
    array.add_child(DIE(TAG.subrange_type, [Attribute(AT.count, None, 3)]))
    unnamed = s.add_child(DIE(TAG.union_type))
    assert type_name(info, member) == "int S::*"
    assert type_name(info, array) == "int[[?, ? + 3)]"  # no DW_AT_language: no default lower bound
    assert type_name(info, unnamed) == "S::union "
    cu.add(AT.language, 4)
    assert type_name(info, array) == "int[3]"


def test_a_cycle_of_types_ends() -> None:
    info = DebugInfo()
    cu = DIE(TAG.compile_unit)
    a = cu.add_child(DIE(TAG.pointer_type))
    b = cu.add_child(DIE(TAG.const_type, [_ref(AT.type, a)]))
    a.add(AT.type, b)
    assert type_name(info, a).startswith("... *const")  # cut at MAX_DEPTH, no RecursionError


def test_enumerated_values_and_sysroot() -> None:
    assert enumerated_value_name(AT.inline, 3) == "DW_INL_declared_inlined"
    assert enumerated_value_name(AT.accessibility, 1) == "DW_ACCESS_public"
    assert enumerated_value_name(AT.accessibility, 9) is None
    assert enumerated_value_name(AT.name, 1) is None
    assert enumerated_value_name(AT.calling_convention, 5) == "DW_CC_pass_by_value"
    assert enumerated_value_name(AT.virtuality, 2) == "DW_VIRTUALITY_pure_virtual"
    assert enumerated_value_name(AT.visibility, 1) == "DW_VIS_local"
    assert at_name(0x3E02) == "DW_AT_LLVM_sysroot"
    assert (
        AT["LLVM_isysroot"] == AT.LLVM_sysroot and int(AT.LLVM_sysroot) == 0x3E02
    )  # pyelftools' name still parses


def test_json_meaning_of_inline_and_accessibility(ptxas_tool: Ptxas, tmp_path: Path) -> None:
    cubin = tmp_path / "t.cubin"
    cubin.write_bytes(
        ptxas_tool.compile((FIXTURES / "clang/rich.O0.sm_75.ptx").read_text(), arch="sm_75").cubin
    )
    text = dump_json(read_cubin(cubin))
    assert '"name": "DW_AT_inline", "form": "DW_FORM_data1", "value": 1, "meaning": "DW_INL_inlined"' in text
    assert '"meaning": "DW_ACCESS_private"' in text


def test_naming_a_deep_chain_of_types_is_linear() -> None:
    """20,000 array types, each of the next: every name stops after MAX_STEPS steps."""
    info = DebugInfo()
    cu = DIE(TAG.compile_unit)
    parent, chain = cu, []
    for _ in range(20_000):
        array = parent.add_child(DIE(TAG.array_type))
        array.add_child(DIE(TAG.subrange_type, [Attribute(AT.count, None, 2)]))
        chain.append(array)
        parent = array
    for a, b in pairwise(chain):
        a.add(AT.type, b)
    names = [type_name(info, d, cu) for d in chain]
    assert all("..." in n and len(n) < 8 * MAX_STEPS for n in names)


def test_signed_operands_as_llvm_dwarfdump_shows_them() -> None:
    """Signed operands in decimal with their sign (``DW_OP_fbreg -16``), unsigned ones in hex."""
    block = bytes([0x91, 0x70, 0x11, 0x05, 0x23, 0x10, 0x92, 0xB1, 0xE4, 0x95, 0x01, 0x08])
    ops = [str(op) for op in ptxdwarf.dwarf.decode_expression(block, 8)]
    assert ops == ["DW_OP_fbreg -16", "DW_OP_consts +5", "DW_OP_plus_uconst 0x10", "DW_OP_bregx %r1 +8"]
