"""The comparison's kernels against their references: :func:`ptxdwarf.check.sections.placed_entries`
(the same count and indexes, the same labels put in ``placed`` in the same order) and
:func:`ptxdwarf.check.lines.labels_apart` (the same labels found), on generated input and on what
check compares for every PTX fixture; a decline where the reference fails."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, GOOD_FIXTURES, CubinPath
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import native_of, same

import ptxdwarf.check.lines as lines
import ptxdwarf.check.sections as sections
import ptxdwarf.check.walk as walk
from ptxdwarf.check.comparison import compare
from ptxdwarf.check.lines import labels_apart
from ptxdwarf.check.plan import LocalPlaces
from ptxdwarf.check.report import CheckReport
from ptxdwarf.check.sections import Entry, placed_entries
from ptxdwarf.dwarf.image import Block, Reloc, Symbol
from ptxdwarf.dwarf.model import DIE, Attribute
from ptxdwarf.errors import PtxDwarfError
from ptxdwarf.ptx.debug import decode_module
from ptxdwarf.ptx.reader import parse_ptx

Functions = list[tuple[str | None, str | None]]


def _both(entries: list[Entry], got: list[Entry], functions: Functions, placed: dict[str, Symbol]) -> Any:
    """Run the kernel and the reference, each on its own copy of ``placed``; assert the same
    result and the same ``placed`` (its items in order), which ``placed`` then holds."""
    native = native_of(placed_entries)
    mine = dict(placed)
    expected = placed_entries.reference(entries, got, functions, mine)
    theirs = dict(placed)
    result = native(entries, got, functions, theirs)
    assert result is not None, "the kernel declines input the reference takes"
    assert result == expected
    assert list(theirs.items()) == list(mine.items())
    assert [type(v) for v in theirs.values()] == [type(v) for v in mine.values()]
    placed.clear()
    placed.update(mine)
    return expected


_NAMES = ["f", "g", "$L__a", "$L__b", ".debug_loc"]
_SYMBOLS = st.builds(Symbol, st.sampled_from(_NAMES), st.sampled_from([0, 1, 4, 8, 0x40, -1]))
_LABELS = st.builds(Symbol, st.sampled_from(["$L__a", "$L__b", "$L__c", "$L__d"]), st.just(0))
_VALUES = st.one_of(_SYMBOLS, st.integers(0, 0x50))
_RELOC = Reloc(0, 8, Symbol("f", 4))
_EXPRESSIONS = st.one_of(
    st.none(),
    st.builds(Block, st.sampled_from([b"", b"\x90\xb1\xe4\x02", b"\x50", b"\x51"])),
    st.builds(lambda data: Block(data, [_RELOC]), st.sampled_from([b"\x03" + bytes(8), b"\x50"])),
)
_FUNCTION = st.sampled_from(["f", "g", None])


@st.composite
def _lists(draw: st.DrawFn) -> tuple[list[Entry], list[Entry], Functions, dict[str, Symbol]]:
    n = draw(st.integers(0, 12))
    entries: list[Entry] = [(draw(_LABELS), draw(_LABELS), draw(_EXPRESSIONS)) for _ in range(n)]
    got: list[Entry] = [
        (draw(_VALUES), draw(_VALUES), draw(_EXPRESSIONS)) for _ in range(draw(st.integers(0, n)))
    ]
    functions = [(draw(_FUNCTION), draw(_FUNCTION)) for _ in range(draw(st.integers(0, n + 1)))]
    placed = {
        name: Symbol("f", 8) for name in draw(st.lists(st.sampled_from(["$L__a", "$L__c"]), max_size=2))
    }
    return entries, got, functions, placed


@settings(max_examples=500, deadline=None)
@given(_lists())
def test_generated_lists(case: tuple[list[Entry], list[Entry], Functions, dict[str, Symbol]]) -> None:
    _both(*case)


def test_a_worked_example() -> None:
    a, b, c = Symbol("$L__a"), Symbol("$L__b"), Symbol("$L__c")
    same = Block(b"\x50")
    entries: list[Entry] = [(a, b, same), (b, c, same), (a, c, Block(b"\x51")), (c, a, None)]
    got: list[Entry] = [
        (Symbol("f", 0x10), Symbol("f", 0x20), Block(b"\x50")),  # in order, the same expression
        (Symbol("f", 0x20), Symbol("f", 0x10), Block(b"\x50")),  # inverted: left to look at
        (Symbol("f", 0x10), Symbol("f", 0x30), Block(b"\x52")),  # in order, another expression
        (Symbol("f", 0), Symbol("f", 0x30), None),  # at 0: a label ptxas dropped
    ]
    functions: Functions = [("f", "f")] * 4
    placed: dict[str, Symbol] = {}
    assert _both(entries, got, functions, placed) == (4, [1, 2, 3])
    assert placed == {"$L__a": Symbol("f", 0x10), "$L__b": Symbol("f", 0x20), "$L__c": Symbol("f", 0x30)}


class _OtherSymbol(Symbol):
    __slots__ = ()


@pytest.mark.parametrize(
    "entry, theirs",
    [
        ((Symbol("$L__a"), Symbol("$L__b"), b"\x50"), (Symbol("f", 1), Symbol("f", 2), Block(b"\x50"))),
        ((7, Symbol("$L__b"), None), (Symbol("f", 1), Symbol("f", 2), None)),
        ((Symbol("$L__a"), Symbol("$L__b")), (Symbol("f", 1), Symbol("f", 2), None)),
    ],
    ids=["plain bytes", "a number as a label", "a pair"],
)
def test_input_the_reference_fails_on_is_declined(entry: Any, theirs: Any) -> None:
    native = native_of(placed_entries)
    with pytest.raises((AttributeError, ValueError, TypeError)):
        placed_entries.reference([entry], [theirs], [("f", "f")], {})
    assert native([entry], [theirs], [("f", "f")], {}) is None


def test_a_label_of_another_class_is_left_to_the_reference() -> None:
    entries: list[Entry] = [(_OtherSymbol("$L__a"), Symbol("$L__b"), None)]
    got: list[Entry] = [(Symbol("f", 1), Symbol("f", 2), None)]
    assert native_of(placed_entries)(entries, got, [("f", "f")], {}) is None
    placed: dict[str, Symbol] = {}
    assert placed_entries(entries, got, [("f", "f")], placed) == (2, [])
    assert placed == {"$L__a": Symbol("f", 1), "$L__b": Symbol("f", 2)}


_LINES = st.integers(1, 40)


@st.composite
def _functions(draw: st.DrawFn) -> tuple[Any, ...]:
    names = [f"$L__{i}" for i in range(draw(st.integers(0, 10)))]
    labels = {name: draw(_LINES) for name in names}
    placed = {
        name: Symbol(draw(st.sampled_from(["f", "f", "g"])), draw(st.integers(0, 0x90)))
        for name in names
        if draw(st.booleans()) or draw(st.booleans())
    }
    named = set(draw(st.lists(st.sampled_from([*names, "x"]), max_size=2)))
    found = draw(st.dictionaries(_LINES, st.integers(0, 0x90), min_size=1, max_size=12))
    end = draw(st.sampled_from([0, 0x40, 0x80, *placed_addends(placed)]))
    return labels, placed, "f", named, found, end, draw(st.integers(0, 20))


def placed_addends(placed: dict[str, Symbol]) -> list[int]:
    return [symbol.addend for symbol in placed.values()]


@settings(max_examples=500, deadline=None)
@given(_functions())
def test_generated_functions(case: tuple[Any, ...]) -> None:
    same(labels_apart, *case)


def test_a_worked_function() -> None:
    labels = {"$L__a": 10, "$L__b": 12, "$L__c": 14, "$L__d": 16, "$L__e": 3}
    placed = {
        "$L__a": Symbol("f", 0x10),  # where the code of line 9 starts: at that code
        "$L__b": Symbol("f", 0x08),  # before the code of line 11, at 0x20
        "$L__c": Symbol("f", 0x30),  # after the code of line 13: as it should be
        "$L__d": Symbol("f", 0x80),  # the end of f's code, with line 18's code after it
        "$L__e": Symbol("f", 0x00),  # above the body's line: the prologue's
    }
    found = {2: 0x0, 9: 0x10, 11: 0x20, 13: 0x28, 18: 0x70}
    expected = [
        ("$L__a", 10, placed["$L__a"], lines.AT_CODE, 9),
        ("$L__b", 12, placed["$L__b"], lines.BEFORE_CODE, 11),
        ("$L__d", 16, placed["$L__d"], lines.AT_END, 0),
    ]
    assert same(labels_apart, labels, placed, "f", set(), found, 0x80, 5) == expected
    assert same(labels_apart, labels, placed, "f", {"$L__a"}, found, 0x80, 5) == expected[1:]
    assert same(labels_apart, labels, placed, "g", set(), found, 0x80, 5) == []


def test_a_function_without_code_lines_is_left_to_the_reference() -> None:
    labels, placed = {"$L__a": 3}, {"$L__a": Symbol("f", 0x40)}
    with pytest.raises(IndexError):
        labels_apart.reference(labels, placed, "f", set(), {}, 0x40, 0)
    assert native_of(labels_apart)(labels, placed, "f", set(), {}, 0x40, 0) is None
    assert same(labels_apart, labels, placed, "f", set(), {}, 0, 0) == []


def _compared(path: Path, cubin: bytes, monkeypatch: pytest.MonkeyPatch) -> int:
    """Compare ``path``'s module with its ``cubin`` as check does, in this process, every call of
    the kernel held to the reference; the number of calls."""
    calls = [0]
    apart = labels_apart

    def held_apart(*args: Any) -> Any:
        calls[0] += 1
        return same(apart, *args)

    def held(
        entries: list[Entry],
        got: list[Entry],
        functions: Functions,
        placed: dict[str, Symbol],
    ) -> Any:
        calls[0] += 1
        return _both(entries, got, functions, placed)

    monkeypatch.setenv("PTXDWARF_JOBS", "1")
    monkeypatch.setattr(sections, "placed_entries", held)
    monkeypatch.setattr(lines, "labels_apart", held_apart)
    module = parse_ptx(path.read_text(), path.name)
    info = decode_module(module)
    assert info.locations, "the fixture's .debug_loc holds no list"
    compare(module, info, cubin, CheckReport(path.name, "sm_75", "ptxas", "13.0", debug="dwarf"))
    return calls[0]


def _cubin_of(path: Path, cubin_path: CubinPath) -> bytes:
    """The cubin ptxas makes of ``path`` (the test skipped where ptxas does not compile it)."""
    try:
        return cubin_path(path.read_text(), path.name).read_bytes()
    except PtxDwarfError:
        pytest.skip("ptxas does not compile it for this machine")


_WITH_LISTS = [
    p
    for p in GOOD_FIXTURES
    if re.search(r"\.section\s+\.debug_loc\s*\{\s*\.b", p.read_text(errors="replace"))
]


@pytest.mark.slow
@pytest.mark.ptxas
@pytest.mark.parametrize("path", _WITH_LISTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_location_lists_of_the_ptx_fixtures(
    path: Path, cubin_path: CubinPath, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _compared(path, _cubin_of(path, cubin_path), monkeypatch) > 0


def test_fixtures_with_location_lists_are_there() -> None:
    assert len(_WITH_LISTS) >= 5


# --- walk_by_sites ---------------------------------------------------------------------

_NAMES = ["f", "g", ".debug_loc"]
_LOCAL: LocalPlaces = (b"\x03\x00", ((1, 8, 0),))


@st.composite
def _value(draw: st.DrawFn) -> Any:
    """An attribute's value as the decoder makes them: a number, a string, a block."""
    return draw(
        st.one_of(
            st.integers(0, 6),
            st.sampled_from(["s", ""]),
            st.builds(Block, st.sampled_from([b"", b"\x03\x00", b"\x91\x08"]), st.just(())),
            st.builds(
                Block,
                st.just(b"\x03\x00\x00\x00\x00"),
                st.just((Reloc(1, 4, Symbol("v", 0)),)),
            ),
        )
    )


@st.composite
def _attribute(draw: st.DrawFn) -> Attribute:
    relocs: tuple[Reloc, ...] = ()
    if draw(st.booleans()):
        relocs = (Reloc(0, 8, Symbol(draw(st.sampled_from(_NAMES)), draw(st.integers(0, 3)))),)
    return Attribute(0x11, 1, draw(_value()), relocs)


@st.composite
def _walk(draw: st.DrawFn) -> tuple[Any, ...]:
    """A plan of a unit and the cubin's DIEs it is walked against."""
    theirs = [
        DIE(0x34, draw(st.lists(_attribute(), min_size=1, max_size=5)))
        for _ in range(draw(st.integers(0, 6)))
    ]
    order = draw(st.permutations(range(len(theirs))))[: draw(st.integers(0, len(theirs)))]
    attributes = []
    pcs: list[Any] = []
    for i in order:
        width = len(theirs[i].attributes)
        planned = st.tuples(
            st.integers(0, width - 1),
            st.sampled_from([None, *_NAMES]),
            st.sampled_from([None, 0, 2, 5]),
            st.sampled_from(["L1", "L2", "L3"]),
            st.sampled_from([None, _LOCAL]),
        )
        attributes.append(draw(st.lists(planned, max_size=4)))
        pc = st.tuples(st.integers(0, width - 1), st.integers(0, width - 1), st.just(("lo", "hi")))
        pcs.append(draw(st.one_of(st.none(), pc)))
    placed = draw(
        st.dictionaries(st.sampled_from(["L1", "L2"]), st.builds(Symbol, st.just("h"), st.integers(0, 2)))
    )
    counts = {}
    for content in (b"\x03\x00", b"\x91\x08"):
        count = draw(st.sampled_from([None, 0, 2, "absent"]))
        if count != "absent":
            counts[(_LOCAL[0], content, _LOCAL[1], 8)] = count
    return theirs, order, attributes, pcs, placed, counts, draw(st.booleans())


def _walked(kernel: Any, case: tuple[Any, ...], order_kind: str) -> tuple[Any, ...]:
    """``kernel`` on its own copy of the case's state, with callbacks that record their calls
    and (``busy``) change that state as the comparison's do: the result, the calls, ``placed``."""
    from array import array

    theirs, order, attributes, pcs, placed, counts, busy = case
    placed, counts = dict(placed), dict(counts)
    calls: list[tuple[Any, ...]] = []

    def differ(i: int, k: int, y: Attribute) -> None:
        calls.append(("differ", i, k, id(y)))
        if busy:
            placed.setdefault(f"L{1 + (i + k) % 3}", Symbol("d", i))
            counts[(_LOCAL[0], b"\x03\x00", _LOCAL[1], 8)] = k

    def invert(i: int, ptx: tuple[object, object], begin: Symbol, end: Symbol) -> None:
        calls.append(("invert", i, ptx, begin, end))

    sequence: Any = array("q", order) if order_kind == "array" else list(order)
    try:
        result: Any = kernel(theirs, sequence, attributes, pcs, placed, counts, 8, differ, invert)
    except Exception as exc:
        result = ("raised", type(exc))
    return result, calls, list(placed.items())


@settings(max_examples=500, deadline=None)
@given(_walk(), st.sampled_from(["array", "list"]))
def test_generated_walks(case: tuple[Any, ...], order_kind: str) -> None:
    native = native_of(walk.walk_by_sites)
    got = _walked(native, case, order_kind)
    assert got[0] is not None, "the kernel declines input the reference takes"
    assert got == _walked(walk.walk_by_sites.reference, case, order_kind)


def test_a_worked_walk() -> None:
    """Each way an attribute holds its symbol, the one that does not, and an inverted range."""
    f1, f0 = Symbol("f", 16), Symbol("f", 0)
    theirs = [
        DIE(
            0x2E,
            [
                Attribute(0x11, 1, 0, (Reloc(0, 8, f1),)),  # low_pc: f+16, where it must be
                Attribute(0x12, 1, 0, (Reloc(0, 8, Symbol("f", 8)),)),  # high_pc before it
                Attribute(0x10, 6, 5, (Reloc(0, 4, Symbol(".debug_line", 5)),)),  # the offset
                Attribute(0x02, 10, Block(b"\x03\x00"), ()),  # a local expression seen before
                Attribute(0x11, 1, 0, (Reloc(0, 8, f0),)),  # f+0: compared, not taken
            ],
        )
    ]
    attributes = [
        [
            (0, "f", None, "L1", None),
            (2, None, 5, ".debug_line", None),
            (3, None, None, "x", _LOCAL),
            (4, "f", None, "L2", None),
        ]
    ]
    placed: dict[str, Symbol] = {}
    counts: dict[tuple[object, ...], int] = {(_LOCAL[0], b"\x03\x00", _LOCAL[1], 8): 2}
    differed: list[tuple[int, int]] = []
    inverted: list[tuple[Any, ...]] = []
    for kernel in (native_of(walk.walk_by_sites), walk.walk_by_sites.reference):
        placed.clear()
        differed.clear()
        inverted.clear()
        found = kernel(
            theirs,
            [0],
            attributes,
            [(0, 1, ("lo", "hi"))],
            placed,
            counts,
            8,
            lambda i, k, _y: differed.append((i, k)),
            lambda i, ptx, begin, end: inverted.append((i, ptx, begin, end)),
        )
        assert found == 1 + 1 + 2
        assert placed == {"L1": f1, ".debug_line": Symbol(".debug_line", 5)}
        assert differed == [(0, 4)]
        assert inverted == [(0, ("lo", "hi"), f1, Symbol("f", 8))]


def test_a_plan_of_lists_of_other_lengths_is_left_to_the_reference() -> None:
    args: list[Any] = [[DIE(0x34, [])], [0], [[]], [], {}, {}, 8, print, print]
    with pytest.raises(ValueError, match="zip"):
        walk.walk_by_sites.reference(*args)
    assert native_of(walk.walk_by_sites)(*args) is None


def _walks_held(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every call of walk_by_sites from here on held to the reference (each on its own copy of
    the state, with callbacks that record), then done by the reference; the calls, counted."""
    calls = [0]
    reference = walk.walk_by_sites.reference
    native = native_of(walk.walk_by_sites)

    def held(theirs: Any, order: Any, attributes: Any, pcs: Any, placed: Any, counts: Any, *rest: Any) -> int:
        calls[0] += 1
        case = (theirs, list(order), attributes, pcs, placed, counts, False)
        assert _walked(native, case, "array") == _walked(reference, case, "array")
        return reference(theirs, order, attributes, pcs, placed, counts, *rest)

    monkeypatch.setattr(walk, "walk_by_sites", held)
    return calls


_WITH_DWARF = [p for p in GOOD_FIXTURES if ".debug_info" in p.read_text(errors="replace")]


def _compare_as_check(path: Path, cubin: bytes) -> None:
    module = parse_ptx(path.read_text(), path.name)
    report = CheckReport(path.name, "sm_75", "ptxas", "13.0", debug="dwarf")
    compare(module, decode_module(module), cubin, report)


@pytest.mark.slow
@pytest.mark.ptxas
@pytest.mark.parametrize("path", _WITH_DWARF, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_walks_of_the_ptx_fixtures(
    path: Path, cubin_path: CubinPath, monkeypatch: pytest.MonkeyPatch
) -> None:
    cubin = _cubin_of(path, cubin_path)
    _walks_held(monkeypatch)
    _compare_as_check(path, cubin)  # each walk by sites held to the reference on the way


@pytest.mark.ptxas
def test_a_fixture_is_walked_by_sites(cubin_path: CubinPath, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's fixture test is not empty: check walks by sites where ptxas changed only
    the sites."""
    path = FIXTURES / "nvcc" / "readable.G.sm_75.ptx"
    cubin = _cubin_of(path, cubin_path)
    calls = _walks_held(monkeypatch)
    _compare_as_check(path, cubin)
    assert calls[0] == 1
