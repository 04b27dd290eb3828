"""Parameter passing: the builder's ``.param`` declarations against nvcc's, and through ptxas."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import pytest
from conftest import FIXTURES, CubinPath

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.dwarf
import ptxdwarf.ptx
from ptxdwarf import DebugInfoBuilder, Type
from ptxdwarf.abi import ParamDecl
from ptxdwarf.dwarf import AT, AddressClass


def source_types(dbg: DebugInfoBuilder) -> list[tuple[str, Type]]:
    """The parameters of fixtures/src/abi.cu, built as a code generator would."""
    c = dbg.named_type
    int_t = c("int")
    s3 = dbg.struct_type("S3", [("a", c("char")), ("b", c("char")), ("c", c("char"))])
    s12 = dbg.struct_type("S12", [("a", int_t), ("b", c("float")), ("c", c("char"))])
    a16 = dbg.struct_type("A16", [("d", c("double")), ("i", int_t)], align=16)
    un = dbg.union_type("U", [("f", c("float")), ("i", int_t), ("s", dbg.array_type(c("short"), 3))])
    e8 = dbg.enum_type("E8", {"E8_A": 0, "E8_B": 1}, underlying=c("unsigned char"))
    return [
        ("c", c("char")),
        ("uc", c("unsigned char")),
        ("s", c("short")),
        ("us", c("unsigned short")),
        ("b", c("bool")),
        ("i", int_t),
        ("u", c("unsigned int")),
        ("ll", c("long long")),
        ("ull", c("unsigned long long")),
        ("f", c("float")),
        ("d", c("double")),
        ("p", dbg.pointer_type(int_t, address_class=AddressClass.GENERIC)),
        ("s3", s3),
        ("s12", s12),
        ("a16", a16),
        ("un", un),
        ("v4", dbg.vector_type(int_t, 4, name="int4")),
        ("v3", dbg.vector_type(c("float"), 3, name="float3")),
        ("e8", e8),
        ("big", c("__int128")),
        ("h", c("__half")),
    ]


def shape(ptx_type: str | None, align: int | None, dims: tuple[int, ...] | int | None) -> tuple[object, ...]:
    """What the ABI fixes: a scalar's width, or a byte array's alignment and size."""
    if dims:
        size = dims[0] if isinstance(dims, tuple) else dims
        return ("bytes", align, size)
    assert ptx_type is not None
    return ("scalar", int(ptx_type.lstrip(".bsuf")))


@pytest.mark.parametrize("function,kernel", [("dev", False), ("kern", True)])
def test_declarations_match_nvcc(function: str, kernel: bool) -> None:
    module = ptxdwarf.ptx.parse_ptx((FIXTURES / "nvcc" / "abi.sm_75.ptx").read_text())
    nvcc = module.function(function)
    assert nvcc is not None
    theirs = [shape(p.type, p.align, p.dims) for p in nvcc.params]
    dbg = DebugInfoBuilder(name="abi.cu")
    f = dbg.function(function, kernel=kernel)
    params = source_types(dbg)
    if kernel:
        params.append(("tex", dbg.handle_type()))
    for name, t in params:
        f.abi_parameter(name, t)
    ours = [shape(d.ptx_type, d.align, d.size) for d in f.ptx_params]
    assert ours == theirs
    assert [d.name for d in f.ptx_params] == [p.name for p in nvcc.params]
    if not kernel:
        # the guide's note A: narrower integers are widened to 32 bits
        assert [d.ptx_type for d in f.ptx_params[:6]] == [".s32", ".u32", ".s32", ".u32", ".u32", ".s32"]


def test_rust_abi_slices_zsts_and_u128() -> None:
    dbg = DebugInfoBuilder(name="lib.rs", language="rust")
    r: Callable[[str], Type] = lambda n: dbg.named_type(n, language="rust")  # noqa: E731
    foo = dbg.struct_type("Foo", [("a", r("u16")), ("b", r("u64")), ("c", r("u128"))])
    k = dbg.kernel("kernel", linkage_name="kernel")
    k.abi_parameter("a", foo)
    k.abi_parameter("s", dbg.slice_type(r("u8")))
    k.abi_parameter("z", dbg.struct_type("Zst", [], byte_size=0))
    k.abi_parameter("x", r("i8"))
    assert k.ptx_params == [
        # the Rust-CUDA page's own example: .param .align 16 .b8 kernel_param_0[32]
        ParamDecl("kernel_param_0", ".b8", 16, 32),
        ParamDecl("kernel_param_1", ".u64", part="data"),
        ParamDecl("kernel_param_2", ".u64", part="len"),
        ParamDecl("kernel_param_3", ".s8"),
    ]
    assert [p.name for p in k.parameters] == ["a", "s", "z", "x"]
    assert k.parameters[2].die.attr(AT.location) is None  # a ZST lives nowhere


def test_abi_parameters_through_ptxas(cubin_path: CubinPath) -> None:
    dbg = DebugInfoBuilder(name="abi.rs", language="rust")
    r: Callable[[str], Type] = lambda n: dbg.named_type(n, language="rust")  # noqa: E731
    k = dbg.kernel("scale", linkage_name="scale")
    k.abi_parameter("data", dbg.slice_type(r("f32")), line=3)
    k.abi_parameter("factor", r("f32"), line=3)
    k.abi_parameter("pair", dbg.struct_type("Pair", [("a", r("u16")), ("b", r("u64"))]), line=3)
    ptx = "\n".join(
        [".version 7.0", ".target sm_75", ".address_size 64", k.ptx_signature(), "{", "\tret;", "}", ""]
    )
    text = ptxdwarf.attach.attach(ptx, dbg, filename="abi.ptx")
    info = ptxdwarf.cuda.read_cubin(cubin_path(text, "abi.ptx"))
    dies = {d.name: d for d in info.iter_dies() if d.tag == ptxdwarf.dwarf.TAG.formal_parameter}
    assert {n: d.address_class for n, d in dies.items()} == {"data": 7, "factor": 7, "pair": 7}
    data = ptxdwarf.dwarf.decode_expression(dies["data"][AT.location], 8)
    assert [op.name for op in data] == ["DW_OP_addr", "DW_OP_piece", "DW_OP_addr", "DW_OP_piece"]
    # ptxas put the two constant-bank offsets in, 8 bytes apart
    first, second = cast(int, data[0].args[0]), cast(int, data[2].args[0])
    assert second - first == 8 and first > 0
    factor = cast(int, ptxdwarf.dwarf.decode_expression(dies["factor"][AT.location], 8)[0].args[0])
    pair = cast(int, ptxdwarf.dwarf.decode_expression(dies["pair"][AT.location], 8)[0].args[0])
    assert factor == first + 16 and pair == factor + 8  # Pair is 8-aligned
