"""The kernel of :mod:`ptxdwarf._native.visibility` against its reference: the join of a cubin's
variables with ptxas's register map (:func:`ptxdwarf.visibility._join`), on generated DIE trees
(scopes of every kind, locations that are expressions or location lists, symbols of functions
with and without a map) and on the DWARF and register map of every cubin of the fixtures."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from conftest import FIXTURES, GOOD_FIXTURES, CubinPath
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twins import native_of

from ptxdwarf import visibility
from ptxdwarf.cuda.cubin import cubin_images
from ptxdwarf.cuda.regmap import FunctionRegisters
from ptxdwarf.dwarf.constants import AT, FORM, OP, TAG
from ptxdwarf.dwarf.decode import decode_sections
from ptxdwarf.dwarf.expr import register_number
from ptxdwarf.dwarf.forms import uleb_bytes
from ptxdwarf.dwarf.image import Block, Reloc, Symbol
from ptxdwarf.dwarf.model import DIE, Attribute, DebugInfo, LocationList, Unit
from ptxdwarf.errors import PtxDwarfError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_FUNCTIONS = ["f", "g", "h"]
_REGISTERS = ["%r1", "%rd2", "%f3", "%p1"]
_SCOPES = [TAG.subprogram, TAG.lexical_block, TAG.inlined_subroutine]


def _regx(register: str) -> bytes:
    return bytes([OP.regx]) + uleb_bytes(register_number(register))


@st.composite
def _expression(draw: st.DrawFn) -> Block:
    kind = draw(st.sampled_from(["regx", "pieces", "empty piece", "other", "cut"]))
    register = draw(st.sampled_from(_REGISTERS))
    if kind == "regx":
        return Block(_regx(register))
    if kind == "pieces":
        other = draw(st.sampled_from(_REGISTERS))
        return Block(_regx(register) + bytes([OP.piece, 4]) + _regx(other) + bytes([OP.piece, 4]))
    if kind == "empty piece":
        return Block(bytes([OP.piece, 4]) + _regx(register) + bytes([OP.piece, 4]))
    if kind == "other":
        return Block(bytes([OP.lit0 + draw(st.integers(0, 31))]))
    return Block(_regx(register)[:-1] if len(_regx(register)) > 1 else b"\x90")


@st.composite
def _address(draw: st.DrawFn) -> int | Symbol:
    if draw(st.booleans()):
        return Symbol(draw(st.sampled_from([*_FUNCTIONS, "$L__x", "k"])), draw(st.integers(0, 96)))
    return draw(st.integers(0, 96))


@st.composite
def _map(draw: st.DrawFn, function: str) -> FunctionRegisters:
    """A function's register map: entries of some of the registers, empty ranges among them."""
    data = bytearray()
    spans = []
    for _ in range(draw(st.integers(0, 10))):
        name = draw(st.sampled_from([*_REGISTERS, "%r9"])).encode()
        low = draw(st.integers(0, 96))
        high = max(0, low + draw(st.sampled_from([0, 16, -16, 64])))
        data += struct.pack("<I", draw(st.integers(0, 1)))
        spans.append((len(data), len(data) + len(name)))
        data += name + b"\0" + struct.pack("<III", draw(st.integers(0, 200)), low, high)
    return FunctionRegisters(function, bytes(data), spans, None)


@st.composite
def _tree(draw: st.DrawFn) -> tuple[DebugInfo, list[FunctionRegisters]]:
    """A unit of nested scopes and variables, its location lists, and maps of some functions."""
    lists: list[LocationList] = []

    def pc(name: int, usual: str) -> Attribute | None:
        kind = draw(st.sampled_from([usual, usual, usual, "none", "symbol", "number", "length", "no form"]))
        if kind == "none":
            return None
        if kind == "symbol":
            symbol = Symbol(draw(st.sampled_from([*_FUNCTIONS, "$L__x"])), draw(st.integers(0, 64)))
            return Attribute(name, FORM.addr, symbol.addend, (Reloc(0, 8, symbol),))
        form = {"number": FORM.addr, "length": FORM.data4, "no form": None}[kind]
        return Attribute(name, form, draw(st.integers(0, 64)))

    def location() -> Attribute:
        if draw(st.booleans()):
            return Attribute(AT.location, FORM.exprloc, draw(_expression()))
        if not lists or draw(st.booleans()):
            entries = [
                (draw(_address()), draw(_address()), draw(st.one_of(st.none(), _expression())))
                for _ in range(draw(st.integers(0, 4)))
            ]
            lists.append(LocationList(len(lists) * 16, entries))
        offset = draw(st.sampled_from([loc.offset for loc in lists] + [999]))
        return Attribute(AT.location, FORM.sec_offset, offset)

    def node(depth: int) -> DIE:
        tags = [*_SCOPES, TAG.variable, TAG.variable, TAG.formal_parameter, TAG.structure_type]
        tag = TAG.subprogram if depth == 1 and draw(st.integers(0, 4)) else draw(st.sampled_from(tags))
        attributes = []
        for name in draw(
            st.lists(st.sampled_from([AT.name, AT.linkage_name, AT.MIPS_linkage_name]), max_size=2)
        ):
            attributes.append(Attribute(name, FORM.string, draw(st.sampled_from(["", "a", *_FUNCTIONS]))))
        for name, usual in ((AT.low_pc, "symbol"), (AT.high_pc, "length")):
            found = pc(name, usual)
            if found is not None:
                attributes.append(found)
        if tag in (TAG.variable, TAG.formal_parameter) and draw(st.integers(0, 5)):
            attributes.append(location())
        children = [node(depth + 1) for _ in range(draw(st.integers(0, 3 if depth < 4 else 0)))]
        return DIE(tag, attributes, children, offset=draw(st.integers(0, 999)))

    root = DIE(TAG.compile_unit, [], [node(1) for _ in range(draw(st.integers(1, 3)))])
    info = DebugInfo(units=[Unit(die=root)])
    info.locations = lists
    maps = [
        draw(_map(f))
        for f in draw(st.lists(st.sampled_from(_FUNCTIONS), min_size=draw(st.integers(0, 1)), max_size=3))
    ]
    return info, maps


def _same(info: DebugInfo, maps: list[FunctionRegisters]) -> list[visibility.RegisterLocation]:
    native = native_of(visibility._join)
    expected = visibility._join.reference(info, maps)
    got = native(info, maps)
    assert got is not None, "the kernel declines input the reference takes"
    assert got == expected
    assert [loc.spans() for loc in got] == [loc.spans() for loc in expected]
    assert [loc.pieces for loc in got] == [loc.pieces for loc in expected]
    return expected


@SETTINGS
@given(_tree())
def test_generated_trees(tree: tuple[DebugInfo, list[FunctionRegisters]]) -> None:
    _same(*tree)


def test_input_it_does_not_take_is_declined() -> None:
    """A form the kernel does not read, a tree the model would not make, a path deeper than it
    builds: None, and the reference's answer stands."""
    native = native_of(visibility._join)
    variable = DIE(
        TAG.variable,
        [Attribute(AT.name, FORM.string, "x"), Attribute(AT.location, FORM.exprloc, Block(_regx("%r1")))],
    )
    sub = DIE(
        TAG.subprogram, [Attribute(AT.name, FORM.string, "f"), Attribute(AT.low_pc, FORM.addr, 0)], [variable]
    )
    info = DebugInfo(units=[Unit(die=DIE(TAG.compile_unit, [], [sub]))])
    assert [loc.path for loc in native(info, [])] == ["f/x"]
    indirect = Attribute(AT.name, FORM.indirect, Attribute(AT.name, FORM.string, "f"))
    sub.attributes[0] = indirect
    assert native(info, []) is None
    assert visibility._join.reference(info, [])[0].path == "f/x"
    sub.attributes[0] = Attribute(AT.name, FORM.string, "f")
    sub.children = (variable,)  # type: ignore[assignment]
    assert native(info, []) is None
    sub.children = [variable]
    deep = variable
    for _ in range(500):
        deep = DIE(TAG.lexical_block, [Attribute(AT.name, FORM.string, "b")], [deep])
    sub.children = []
    sub.add_child(deep)
    assert native(info, []) is None
    assert visibility._join.reference(info, [])[0].path.count("/") == 501


def _cubins() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.cubin") if p.is_file())


def _joined(cubin: bytes, name: str) -> int:
    try:
        images = cubin_images(cubin, name=name)
        info = decode_sections(images.images, source="cubin", filename=name)
        maps = images.register_map() if images.reg_sass is not None else []
        info.load_all()
    except PtxDwarfError:
        return 0
    return len(_same(info, list(maps)))


def test_the_cubins_of_the_fixtures() -> None:
    assert sum(_joined(path.read_bytes(), path.name) for path in _cubins()) > 0


@pytest.mark.slow
@pytest.mark.ptxas
@pytest.mark.parametrize("path", GOOD_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_cubins_of_the_ptx_fixtures(path: Path, cubin_path: CubinPath) -> None:
    try:
        cubin = cubin_path(path.read_text(), path.name)
    except PtxDwarfError:
        pytest.skip("ptxas does not compile it for this machine")
    _joined(cubin.read_bytes(), cubin.name)
