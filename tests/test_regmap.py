"""ptxas's register map (``.nv_debug_info_reg_sass``/``_type``): the decoder against controlled
ptxas experiments and against nvdisasm's disassembly of every cubin the fixtures make."""

from __future__ import annotations

import io
import re
import struct
import subprocess
from functools import cache
from pathlib import Path

import pytest
from conftest import FIXTURES, fixture_id, nvdisasm
from elftools.elf.elffile import ELFFile
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxdwarf.cuda.cubin import cubin_images
from ptxdwarf.cuda.regmap import FunctionRegisters, RegisterMapEntry, read_register_map
from ptxdwarf.errors import CubinError
from ptxdwarf.testing import CompiledCubin, compile_ptx

# --- nvdisasm ---------------------------------------------------------------------------


_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def disassemble(cubin: bytes, tmp: Path) -> dict[str, list[tuple[int, str]]]:
    """nvdisasm's instructions of each function: (offset, text)."""
    path = tmp / "module.cubin"
    path.write_bytes(cubin)
    out = subprocess.run([nvdisasm(), "-c", str(path)], capture_output=True, text=True, check=True).stdout
    functions: dict[str, list[tuple[int, str]]] = {}
    current: list[tuple[int, str]] | None = None
    for line in out.splitlines():
        stripped = line.strip()
        if stripped.startswith(".text.") and stripped.endswith(":"):
            current = functions.setdefault(stripped[len(".text.") : -1], [])
            continue
        m = _INSTRUCTION.search(line)
        if m and current is not None:
            current.append((int(m.group(1), 16), m.group(2)))
    return functions


# Instructions that read or write a 64-bit register pair named by its first register.
_WIDE = re.compile(r"\.64\b|\.128\b|WIDE|F64|\bD(?:ADD|MUL|FMA|SETP|MNMX)\b|\.U64|\.S64|\bCS2R\b")


def touches(text: str, entry: RegisterMapEntry) -> bool:
    """Whether the SASS instruction ``text`` names the register of ``entry``."""
    if entry.register_class == 2:
        return re.search(rf"\bP{entry.number}\b", text) is not None
    if entry.register_class == 4:  # half registers: R(n/2)
        return re.search(rf"\bR{entry.number // 2}\b", text) is not None
    if re.search(rf"\bR{entry.number}\b", text):
        return True
    wide = _WIDE.search(text) is not None
    return wide and any(
        re.search(rf"\bR{entry.number - k}\b", text) for k in (1, 2, 3) if entry.number - k >= 0
    )


def disagreements(functions: list[FunctionRegisters], code: dict[str, list[tuple[int, str]]]) -> list[str]:
    """The entries the disassembly does not bear out. An entry agrees when its SASS register is
    read or written by an instruction in [low_pc, high_pc]; or, for a range the value only
    lives through (a loop's back edge), when the same PTX and SASS registers agree in another
    entry of the function."""
    bad: list[str] = []
    for f in functions:
        instructions = code.get(f.function)
        assert instructions is not None, f"{f.function}: no code in the disassembly"
        size = instructions[-1][0] + 16
        agreed: set[tuple[str, int, int]] = set()
        pending = []
        for e in f.entries:
            assert e.high_pc <= size, f"{f.function}: {e} past the function's code ({size:#x})"
            if e.empty:
                continue
            if any(e.low_pc <= a <= e.high_pc and touches(t, e) for a, t in instructions):
                agreed.add((e.ptx, e.register_class, e.number))
            else:
                pending.append(e)
        bad.extend(f"{f.function}: {e}" for e in pending if (e.ptx, e.register_class, e.number) not in agreed)
    return bad


# --- the fixtures' cubins against nvdisasm -------------------------------------------------

_PRODUCERS = (
    "nvcc/*.ptx",
    "numba/*.ptx",
    "nodebug/*.ptx",
    "clang/*.O*.ptx",
    "corpus/nvcc-12.4/*.ptx",
    "corpus/nvcc-13.0/*.ptx",
    "corpus/nvcc-13.5/*.ptx",
    "corpus/numba/*.ptx",
    "corpus/numba-nvvm-13.5/*.ptx",
    "corpus/nvrtc-13.5/*.ptx",
    "corpus/clang-14/*.ptx",
    "corpus/triton/*.ptx",
    "corpus/tinygrad/*.ptx",
)
MAPPED = sorted(
    p
    for pattern in _PRODUCERS
    for p in FIXTURES.glob(pattern)
    if "ptxas-crash" not in p.name and "rejected" not in p.name
) + sorted(p for p in FIXTURES.glob("corpus/llvm-tests/*.ptx") if "rejected" not in p.name)


@cache
def _compiled(path: Path) -> CompiledCubin:
    return compile_ptx(path.read_text())


@pytest.mark.parametrize("path", MAPPED, ids=fixture_id)
@pytest.mark.ptxas
@pytest.mark.slow
def test_map_agrees_with_disassembly(path: Path, tmp_path: Path) -> None:
    cubin = _compiled(path)
    images = cubin_images(cubin.data)
    functions = images.register_map()
    if not functions:
        assert not images.reg_sass  # no -G code (or no register): the section is absent or empty
        return
    assert not disagreements(functions, disassemble(cubin.data, tmp_path))


def test_the_fixture_cubin_agrees(tmp_path: Path) -> None:
    data = (FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin").read_bytes()
    functions = cubin_images(data).register_map()
    assert functions and sum(len(f.entries) for f in functions) > 100
    assert not disagreements(functions, disassemble(data, tmp_path))


@pytest.mark.ptxas
def test_most_fixtures_have_a_map() -> None:
    """The agreement test above is not vacuous: ptxas -g writes a map for the -G producers."""
    assert len(MAPPED) > 150
    with_map = [p for p in MAPPED[:40] if cubin_images(_compiled(p).data).register_map()]
    assert len(with_map) >= 30


# --- controlled experiments ------------------------------------------------------------------

_TYPES = """
.version 8.3
.target sm_80
.address_size 64
.visible .entry t(.param .u64 out)
{
  .reg .b8 %a<2>; .reg .u8 %b<2>; .reg .s8 %c<2>;
  .reg .b16 %d<2>; .reg .u16 %e<2>; .reg .s16 %g<2>; .reg .f16 %h<2>; .reg .f16x2 %i<2>;
  .reg .b32 %k<2>; .reg .u32 %l<2>; .reg .s32 %m<2>; .reg .f32 %n<2>;
  .reg .b64 %o<2>; .reg .u64 %q<2>; .reg .s64 %s<2>; .reg .f64 %t<2>; .reg .pred %u<2>;
  .reg .b128 %w<2>;
  ld.param.u64 %o1, [out];
  mov.u32 %l1, %tid.x;
  cvt.u16.u32 %e1, %l1; cvt.s16.u16 %g1, %e1; mov.b16 %d1, %g1;
  cvt.rn.f16.u32 %h1, %l1; mov.b32 %i1, {%h1, %h1};
  cvt.s32.s16 %m1, %g1; add.s32 %k1, %m1, %l1; cvt.rn.f32.s32 %n1, %k1;
  cvt.u64.u32 %q1, %k1; cvt.s64.s32 %s1, %m1; cvt.f64.f32 %t1, %n1; setp.gt.s32 %u1, %m1, 3;
  cvt.u8.u32 %b1, %l1; cvt.s8.s32 %c1, %m1; ld.global.b8 %a1, [%o1+60];
  st.global.u8 [%o1], %b1; st.global.s8 [%o1+1], %c1; st.global.b16 [%o1+2], %d1;
  st.global.b16 [%o1+4], %h1; st.global.b32 [%o1+8], %i1; st.global.b32 [%o1+16], %k1;
  st.global.f32 [%o1+20], %n1; st.global.u64 [%o1+24], %q1; st.global.s64 [%o1+32], %s1;
  st.global.f64 [%o1+40], %t1; st.global.b8 [%o1+61], %a1;
  ld.global.b128 %w1, [%o1+64]; st.global.b128 [%o1+96], %w1;
  @%u1 st.global.u32 [%o1+52], %l1;
  ret;
}
"""


@pytest.fixture(scope="module")
def types_cubin() -> CompiledCubin:
    return compile_ptx(_TYPES)


@pytest.mark.ptxas
def test_type_codes_are_the_declared_types(types_cubin: CompiledCubin) -> None:
    declared = {m.group(2): m.group(1) for m in re.finditer(r"\.reg \.(\w+) (%\w)<2>", _TYPES)}
    (function,) = cubin_images(types_cubin.data).register_map()
    seen: dict[str, set[str | None]] = {}
    for e in function.entries:
        seen.setdefault(e.ptx, set()).add(e.ptx_type)
    assert len(seen) == len(declared)
    for reg, types in seen.items():
        assert types == {declared[reg[:2]]}, reg


@pytest.mark.ptxas
def test_register_classes_and_pieces(types_cubin: CompiledCubin) -> None:
    (function,) = cubin_images(types_cubin.data).register_map()
    for e in function.entries:
        if e.ptx_type == "pred":
            assert e.sass.startswith("P")
        elif e.ptx_type in ("b64", "u64", "s64", "f64"):
            assert e.piece in (0, 1)
        elif e.ptx_type == "b128":
            assert e.piece in (0, 1, 2)
        elif e.register_class == 5:
            assert e.piece == 0, e
    wide = {e.piece for e in function.entries if e.ptx == "%t1"}
    assert wide == {0, 1}


_HALVES = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry halves(.param .u64 out, .param .u64 in)
{
  .reg .b32 %r<3>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd3, [out];
  ld.global.u64 %rd2, [%rd1];
  mov.b64 {%r1, %r2}, %rd2;
  st.global.u32 [%rd3], %r2;
  st.global.u32 [%rd3+4], %r1;
  ret;
}
"""


@pytest.mark.ptxas
def test_piece_zero_is_the_low_half(tmp_path: Path) -> None:
    """``ld.global.u64 %rd2`` becomes ``LDG.E.64 Rn``, which writes the low 32 bits to Rn and the
    high to Rn+1: the map's entries of %rd2 starting there give piece 0 to Rn, piece 1 to Rn+1."""
    cubin = compile_ptx(_HALVES)
    (function,) = cubin_images(cubin.data).register_map()
    loads = [(a, t) for a, t in disassemble(cubin.data, tmp_path)["halves"] if t.startswith("LDG.E.64 ")]
    assert len(loads) == 1
    address, text = loads[0]
    n = int(re.match(r"LDG\.E\.64 R(\d+),", text).group(1))  # type: ignore[union-attr]  # a None here fails the test, as it should
    pieces = {e.piece: e.number for e in function.of("%rd2") if e.low_pc == address}
    assert pieces == {0: n, 1: n + 1}


_TWO = """
.version 8.0
.target sm_80
.address_size 64
.func (.reg .b32 r) twice(.reg .b32 x)
{
  .reg .b32 %r<3>;
  add.s32 %r1, x, x;
  mul.lo.s32 %r2, %r1, 3;
  mov.b32 r, %r2;
  ret;
}
.visible .entry main(.param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  { .param .b32 a; .param .b32 b; st.param.b32 [a], %r1;
    call.uni (b), twice, (a); ld.param.b32 %r2, [b]; }
  st.global.u32 [%rd1], %r2;
  ret;
}
"""


@pytest.mark.ptxas
def test_ranges_are_offsets_in_each_function() -> None:
    cubin = compile_ptx(_TWO)
    functions = {f.function: f for f in cubin_images(cubin.data).register_map()}
    assert set(functions) == {"twice", "main"}
    elf = ELFFile(io.BytesIO(cubin.data))
    for name, f in functions.items():
        text = elf.get_section_by_name(f".text.{name}")
        assert text is not None
        size = text.data_size
        assert all(e.high_pc <= size for e in f.entries)
        assert {"%r1", "%r2"} <= f.registers()
    assert any(e.low_pc < 0x40 for e in functions["twice"].entries)


@pytest.mark.ptxas
def test_no_map_without_g() -> None:
    cubin = compile_ptx(_TWO, debug=False, line_info=True)
    assert cubin_images(cubin.data).register_map() == []


# --- bad input -------------------------------------------------------------------------------


def _section(function: bytes, entries: list[tuple[int, bytes, int, int, int]]) -> bytes:
    out = function + b"\0" + struct.pack("<I", len(entries))
    for piece, name, reg, low, high in entries:
        out += struct.pack("<I", piece) + name + b"\0" + struct.pack("<III", reg, low, high)
    return out


def test_decoder_reads_a_made_section() -> None:
    data = _section(b"f", [(0, b"%rd1", 0x05000004, 0x50, 0x100), (1, b"%rd1", 0x05000005, 0x60, 0x110)])
    types = b"f\0" + struct.pack("<I", 2) + bytes([3, 3])
    (f,) = read_register_map(data, types)
    assert [(e.ptx, e.sass, e.low_pc, e.high_pc, e.piece, e.ptx_type) for e in f.entries] == [
        ("%rd1", "R4", 0x50, 0x100, 0, "b64"),
        ("%rd1", "R5", 0x60, 0x110, 1, "b64"),
    ]


@pytest.mark.parametrize(
    ("data", "types", "message"),
    [
        (b"f", None, "function name runs past the end"),
        (b"f\0\x01\0\0", None, "entry count runs past the end"),
        (b"f\0\x01\0\0\0" + bytes(20), None, "empty register name"),
        (b"f\0\xff\xff\xff\x7f", None, "entry count 2147483647 does not fit"),
        (_section(b"f", [(0, b"%r1", 5, 0, 4)])[:-2], None, "entry runs past the end"),
        (_section(b"f", [(0, b"\xe9", 5, 0, 4)]), None, "register name is not ASCII"),
        (_section(b"f", [(0, b"%r1", 5, 0, 4)]), b"f\0\x02\0\0\0\x02\x02", "has 2 types for 1"),
        (_section(b"f", [(0, b"%r1", 5, 0, 4)]), b"f\0\x01\0\0\0\x02f\0\x01\0\0\0\x02", "given twice"),
    ],
)
def test_bad_sections_are_one_line_errors(data: bytes, types: bytes | None, message: str) -> None:
    with pytest.raises(CubinError, match=message) as info:
        for f in read_register_map(data, types, where="x.cubin"):
            assert f.entries
    assert str(info.value).startswith("x.cubin: ") and "\n" not in str(info.value)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.one_of(st.none(), st.binary(max_size=40)))
def test_any_bytes_read_or_fail_cleanly(data: bytes, types: bytes | None) -> None:
    try:
        for f in read_register_map(data, types):
            for e in f.entries:
                assert e.ptx and f.of(e.ptx)
                e.to_json()
    except CubinError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_made_sections_read_back(data: st.DataObject) -> None:
    entries = data.draw(
        st.lists(
            st.tuples(
                st.integers(0, 3),
                st.from_regex(rb"\A%[a-z]{1,3}[0-9]{0,3}\Z"),
                st.integers(0, 2**32 - 1),
                st.integers(0, 2**32 - 1),
                st.integers(0, 2**32 - 1),
            ),
            max_size=8,
        )
    )
    (f,) = read_register_map(_section(b"_Z1fv", entries))
    assert [
        (e.piece, e.ptx.encode(), e.register_class << 24 | e.number, e.low_pc, e.high_pc) for e in f.entries
    ] == entries


@pytest.mark.ptxas
def test_a_debug_target_makes_the_map_without_g() -> None:
    """nvcc -G output says ``.target sm_75, debug``: plain ptxas writes the map for it too."""
    ptx = (FIXTURES / "nvcc" / "readable.G.sm_75.ptx").read_text()
    assert ".target sm_75, debug" in ptx
    with_g = cubin_images(compile_ptx(ptx).data).register_map()
    without = cubin_images(compile_ptx(ptx, debug=False).data).register_map()
    assert [f.entries for f in without] == [f.entries for f in with_g] and with_g
