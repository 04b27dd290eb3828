"""The kernel of :mod:`ptxdwarf._native.regmap` against its reference: the ranges of the register
map's entries by register (:func:`ptxdwarf.cuda.regmap._register_ranges`), on generated maps
(valid, with spans that do not lie inside the data, with names asked for that no entry names)
and on the register map of every cubin the fixtures make."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from conftest import FIXTURES, GOOD_FIXTURES, CubinPath
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twins import native_of

from ptxdwarf.cuda import regmap
from ptxdwarf.cuda.cubin import cubin_images
from ptxdwarf.errors import PtxDwarfError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_NAMES = [b"%r1", b"%rd12", b"%p3", b"%f7", b"%r\xc3\xa9", b"x" * 40, b"%fd1", b"%r11"]


@st.composite
def _function_map(draw: st.DrawFn) -> tuple[bytes, list[tuple[int, int]]]:
    """One function's entries (the bytes after its count) and where each entry's name is."""
    data = bytearray()
    spans = []
    for _ in range(draw(st.integers(0, 14))):
        piece, name = draw(st.integers(0, 2**32 - 1)), draw(st.sampled_from(_NAMES))
        low, length = draw(st.integers(0, 2**32 - 1)), draw(st.sampled_from([0, 16, -16]))
        high = max(0, min(2**32 - 1, low + length))
        data += struct.pack("<I", piece)
        spans.append((len(data), len(data) + len(name)))
        data += name + b"\0" + struct.pack("<III", draw(st.integers(0, 2**32 - 1)), low, high)
    return bytes(data), spans


def _packed(spans: list[tuple[int, int]]) -> bytes:
    """Spans as the register map keeps them: two little-endian ``u64`` each."""
    return b"".join(struct.pack("<QQ", *span) for span in spans)


def _same(data: bytes, spans: bytes | list[tuple[int, int]], names: set[bytes]) -> None:
    if isinstance(spans, list):
        spans = _packed(spans)
    native = native_of(regmap._register_ranges)
    expected = regmap._register_ranges.reference(data, spans, set(names))
    got = native(data, spans, set(names))
    assert got == expected
    assert list(got) == list(expected), "another order"


@SETTINGS
@given(_function_map(), st.sets(st.sampled_from([*_NAMES, b"", b"%r"])))
def test_ranges_of_generated_maps(function: tuple[bytes, list[tuple[int, int]]], names: set[bytes]) -> None:
    data, spans = function
    _same(data, spans, names)
    _same(data, spans, set(_NAMES))
    _same(data, spans, set())


_ANY_OFFSET = st.one_of(st.integers(0, 130), st.sampled_from([2**63, 2**64 - 1]))


@SETTINGS
@given(
    st.binary(min_size=0, max_size=120),
    st.lists(st.tuples(_ANY_OFFSET, _ANY_OFFSET), max_size=6),
    st.sets(st.binary(max_size=3), max_size=4),
)
def test_ranges_of_any_spans(data: bytes, spans: list[tuple[int, int]], names: set[bytes]) -> None:
    """Spans outside the data: the kernel declines them, or gives what the reference gives."""
    native = native_of(regmap._register_ranges)
    packed = _packed(spans)
    got = native(data, packed, set(names))
    try:
        expected = regmap._register_ranges.reference(data, packed, set(names))
    except (struct.error, OverflowError):  # spans past any bytes (the reader makes none)
        assert got is None
        return
    assert got is None or got == expected


def test_input_it_does_not_take_is_declined() -> None:
    native = native_of(regmap._register_ranges)
    data = struct.pack("<I", 0) + b"%r1\0" + struct.pack("<III", 0, 0, 16)
    span = _packed([(4, 7)])
    assert native(data, span, {b"%r1"}) == {b"%r1": (struct.pack("<4I", 0, 0, 16, 0), frozenset({0}))}
    assert native(data, span, {"%r1"}) is None  # names that are not bytes
    assert native(data, [(4, 7)], {b"%r1"}) is None  # spans that are not packed
    assert native(data, span[:-1], {b"%r1"}) is None  # nor whole pairs
    assert native(data, _packed([(4, 2**63)]), {b"%r1"}) is None
    assert native(bytearray(data), span, {b"%r1"}) is None
    assert native(data, span, frozenset({b"%r1"})) == native(data, span, {b"%r1"})


def test_pieces_of_any_number() -> None:
    """Pieces past the few every register has (0, 1) and past 31, in one function."""
    data = bytearray()
    spans = []
    for piece in (0, 1, 7, 8, 31, 32, 2**32 - 1, 1, 9):
        data += struct.pack("<I", piece)
        spans.append((len(data), len(data) + 3))
        data += b"%r1\0" + struct.pack("<III", 5, 16, 32 if piece != 9 else 16)
    _same(bytes(data), spans, {b"%r1"})
    native = native_of(regmap._register_ranges)
    got = native(bytes(data), _packed(spans), {b"%r1"})
    assert got is not None
    assert got[b"%r1"][1] == frozenset({0, 1, 7, 8, 31, 32, 2**32 - 1})
    assert len(got[b"%r1"][0]) == 16 * len(spans)


def _maps_of(cubin: bytes, name: str) -> list[regmap.FunctionRegisters]:
    try:
        return cubin_images(cubin, name=name).register_map()
    except PtxDwarfError:
        return []


def _every_register(functions: list[regmap.FunctionRegisters]) -> None:
    for f in functions:
        registers = {e.ptx for e in f.entries}
        _same(f._data, f._spans, {r.encode("ascii") for r in registers} | {b"%nothing"})
        by_register = f.register_ranges([*registers, "%nothing"])
        for ptx in registers:
            assert list(regmap.range_records(by_register[ptx][0])) == f.ranges_of(ptx)
            assert by_register[ptx][1] == frozenset(e.piece for e in f.of(ptx) if not e.empty)
        assert by_register["%nothing"] == (b"", frozenset())


def test_the_register_maps_of_the_fixtures() -> None:
    cubins = [p for p in FIXTURES.rglob("*.cubin") if p.is_file()]
    seen = 0
    for path in cubins:
        functions = _maps_of(path.read_bytes(), path.name)
        seen += len(functions)
        _every_register(functions)
    assert seen


@pytest.mark.slow
@pytest.mark.ptxas
@pytest.mark.parametrize("path", GOOD_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_register_maps_of_the_ptx_fixtures(path: Path, cubin_path: CubinPath) -> None:
    try:
        cubin = cubin_path(path.read_text(), path.name)
    except PtxDwarfError:
        pytest.skip("ptxas does not compile it for this machine")
    _every_register(_maps_of(cubin.read_bytes(), cubin.name))
