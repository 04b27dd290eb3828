"""The native DIE encoder (``_native/encode.c``) against its reference, ``write_dies``.

Both sides encode the same model: builder-made modules (the kernel's input), built DIEs
with values of any type, and the decoded model of every fixture (the ``rewrite`` path,
which the kernel hands to the reference). The section images must be the same byte for
byte, relocations, fields, breaks and labels included, and so must the DIE offsets and the
error, where the reference raises one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_builder import rich
from twins import native_of

import ptxdwarf
import ptxdwarf.dwarf.encode as encode_module
from ptxdwarf import DebugInfoBuilder, loc
from ptxdwarf.dwarf import AT, FORM, TAG, AddressClass, EncodeOptions, Op
from ptxdwarf.dwarf.built import BuiltDIE, shape_of
from ptxdwarf.dwarf.forms import AUTO_EXPR, AUTO_FLAG, AUTO_FORM, AUTO_REF, AUTO_SECTION, AUTO_STRING
from ptxdwarf.dwarf.image import Symbol
from ptxdwarf.dwarf.model import LocationList
from ptxdwarf.errors import PtxDwarfError
from ptxdwarf.ptx.debug import decode_module
from ptxdwarf.ptx.reader import parse_ptx

write_dies = encode_module.write_dies


@contextmanager
def _side(native: Any) -> Iterator[list[Any]]:
    """Encode with ``native`` as write_dies' kernel (None: the reference alone); the kernel's answers."""
    answers: list[Any] = []
    saved = write_dies.native

    def spy(enc: Any, root: ptxdwarf.DIE, kept: Any) -> bool | None:
        answer: bool | None = native(enc, root, kept)
        answers.append(answer)
        return answer

    write_dies.native = spy if native is not None else None
    try:
        yield answers
    finally:
        write_dies.native = saved


def _outcome(info: ptxdwarf.DebugInfo, options: EncodeOptions) -> Any:
    """What encoding gives: every image and where each DIE went, or the error."""
    try:
        encoded = encode_module.encode(info, options)
    except Exception as exc:  # any error: both sides raise the same
        return type(exc).__name__, str(exc)
    images = {
        name: (img.data, img.relocs, list(img.fields.items()), img.breaks, img.labels)
        for name, img in encoded.images.items()
    }
    return images, encoded.offsets, encoded.unit_offsets


def _both(info: ptxdwarf.DebugInfo, options: EncodeOptions) -> tuple[Any, list[Any]]:
    """Encode ``info`` with the kernel and with the reference alone: the same outcome, and
    the kernel's answers (True: it wrote the unit; None: it handed it to the reference)."""
    native = native_of(write_dies)
    with _side(native) as answers:
        got = _outcome(info, options)
    with _side(None):
        expected = _outcome(info, options)
    assert got == expected
    assert all(answer is None or answer is True for answer in answers)
    return expected, answers


_OPTIONS = st.builds(
    EncodeOptions,
    strings=st.sampled_from(["inline", "strp"]),
    string_labels=st.booleans(),
    dwarf4_forms=st.booleans(),
)


@pytest.mark.parametrize("dwarf4_forms", [False, True])
@pytest.mark.parametrize("strings,labels", [("inline", False), ("strp", False), ("strp", True)])
@pytest.mark.parametrize("address_size", [4, 8])
@pytest.mark.parametrize("version", [2, 3, 4])
def test_a_rich_builder_module(
    version: int, address_size: int, strings: str, labels: bool, dwarf4_forms: bool
) -> None:
    dbg = rich(version, address_size, strings)
    k = dbg.function("kern", linkage_name="_Z4kernv", line=70, kernel=True)
    k.abi_parameter("xs", dbg.slice_type(dbg.named_type("float")), line=70)
    k.variable(
        "moving", dbg.named_type("int"), location=loc.location_list([("$L1", "$L2", loc.register("%r1"))])
    )
    outcome, answers = _both(dbg.finish(), EncodeOptions(strings, labels, dwarf4_forms=dwarf4_forms))
    assert isinstance(outcome[0], dict) and answers == [True]


_NAMES = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=12)
_ODD_NAMES = st.sampled_from(["a\0b", "\udcff", "x" * 300])
_LOCATIONS = st.one_of(
    st.none(),
    st.sampled_from(["%r1", "%rd12", "%f3", "%p1"]).map(loc.register),
    st.tuples(st.sampled_from(["k_param_0", "k_param_1"]), st.integers(0, 300)).map(lambda t: loc.param(*t)),
    st.tuples(st.sampled_from(["__local_depot0"]), st.integers(0, 2**20)).map(lambda t: loc.local(*t)),
    st.sampled_from(list(AddressClass)).map(lambda c: loc.address("g", c)),
    st.just("list"),
)


def _builder_module(draw: Any) -> tuple[DebugInfoBuilder, EncodeOptions]:
    options = draw(_OPTIONS)
    version = draw(st.sampled_from([2, 3, 4]))
    dbg = DebugInfoBuilder("h.cu", version=version, strings=options.strings)
    scalars = [dbg.named_type(n) for n in ("int", "float", "char")]
    structs = []
    for s in range(draw(st.integers(0, 3))):
        members = [(f"m{j}", draw(st.sampled_from(scalars))) for j in range(draw(st.integers(0, 4)))]
        structs.append(dbg.struct_type(f"S{s}", members, line=draw(st.integers(1, 2**17))))
        dbg.pointer_type(structs[-1], address_class=AddressClass.GENERIC)
    types = scalars + structs
    for i in range(draw(st.integers(0, 4))):
        f = dbg.function(f"f{i}", line=draw(st.integers(1, 2**33)), type=draw(st.sampled_from(types)))
        for j in range(draw(st.integers(0, 5))):
            where = draw(_LOCATIONS)
            if where == "list":
                where = loc.location_list(
                    [("$La", "$Lb", loc.register("%r2")), ("$Lb", "$Lc", loc.register("%r3"))]
                )
            name = draw(_ODD_NAMES if draw(st.integers(0, 40)) == 0 else _NAMES) + str(j)
            line = draw(st.none() | st.integers(0, 2**40))
            file = draw(st.none() | st.integers(0, 70_000))
            if draw(st.booleans()):
                f.parameter(name, draw(st.sampled_from(types)), line=line, file=file, location=where)
            else:
                f.variable(name, draw(st.sampled_from(types)), line=line, file=file, location=where)
    return dbg, options


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_builder_modules(data: st.DataObject) -> None:
    """Names of any script (a NUL, a lone surrogate: the reference's error or its bytes),
    lines and files of any size, every location kind, every encoding option."""
    dbg, options = _builder_module(data.draw)
    _both(dbg.finish(), options)


# Built DIEs made by hand: any spec, any value; where the reference raises, both raise.
_SPEC_NAMES = st.sampled_from(
    [int(AT.name), int(AT.const_value), int(AT.location), int(AT.low_pc), int(AT.type)]
)
_KINDS = st.sampled_from(
    [AUTO_STRING, AUTO_REF, AUTO_EXPR, AUTO_FLAG, AUTO_SECTION]
    + [int(f) | AUTO_FORM for f in (FORM.addr, FORM.data1, FORM.data2, FORM.data4, FORM.data8, FORM.sdata)]
    + [int(f) for f in FORM if f not in (FORM.indirect,)]
    + [0x99]
)
_VALUES = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(0, 300),
    st.text(max_size=5),
    st.binary(max_size=300),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.just((Op(0x90, (3,)),)),
    st.just([Op(0x03, (0,), Symbol("g"))]),
    st.just((1, 2)),
    st.builds(Symbol, st.sampled_from(["g", ".debug_loc", ".debug_str"]), st.integers(-5, 2**33)),
    st.builds(Symbol, st.just("g"), st.just(0), st.just(7)),
    st.builds(LocationList, st.integers(-1, 2**33)),
    st.just("earlier"),
    st.just("later"),
)


@settings(max_examples=300, deadline=None)
@given(
    dies=st.lists(st.lists(st.tuples(_SPEC_NAMES, _KINDS, _VALUES), max_size=5), min_size=1, max_size=6),
    options=_OPTIONS,
    version=st.sampled_from([2, 3, 4]),
    address_size=st.sampled_from([4, 8]),
)
def test_built_dies_of_any_values(
    dies: list[Any], options: EncodeOptions, version: int, address_size: int
) -> None:
    root = BuiltDIE(TAG.compile_unit, shape_of(((int(AT.name), AUTO_STRING),)), ("cu",))
    made = [BuiltDIE(TAG.variable) for _ in dies]
    for die, attrs in zip(made, dies, strict=True):
        values = []
        for i, (_, _, value) in enumerate(attrs):
            if value == "earlier":
                value = root
            elif value == "later":
                value = made[-1]
            values.append(value if i or value is not None else "v")
        die.specs = shape_of(tuple((n, k) for n, k, _ in attrs))
        die.values = tuple(values)
        root.add_child(die)
    info = ptxdwarf.DebugInfo(units=[ptxdwarf.Unit(version, address_size, die=root)])
    _both(info, options)


@settings(max_examples=200, deadline=None)
@given(
    dies=st.lists(st.lists(st.tuples(_SPEC_NAMES, _VALUES), max_size=5), min_size=1, max_size=6),
    options=_OPTIONS,
    version=st.sampled_from([2, 3, 4]),
)
def test_built_dies_made_from_values(dies: list[Any], options: EncodeOptions, version: int) -> None:
    """Each spec the kind of its value (as the builder makes them), forms left to the encoder."""
    root = BuiltDIE.make(TAG.compile_unit, [(AT.name, "cu", None)])
    made: list[ptxdwarf.DIE] = []
    for attrs in dies:
        items = []
        for name, value in attrs:
            if value == "earlier":
                value = made[-1] if made else root
            elif value == "later":
                continue
            items.append((name, value, None))
        made.append(BuiltDIE.make(TAG.variable, items))
        root.add_child(made[-1])
    info = ptxdwarf.DebugInfo(units=[ptxdwarf.Unit(version, 8, die=root)])
    _both(info, options)


def test_a_shape_met_first_by_a_die_the_kernel_does_not_take() -> None:
    """A NUL in the first DIE of a shape: the reference's error; a lone surrogate escape: the
    reference writes the unit, and the shape's code is the reference's."""
    for name in ("bad\0name", "\udcffx"):
        dbg = DebugInfoBuilder("a.cu")
        int_t = dbg.named_type("int")
        f = dbg.function("f", line=3, type=int_t)
        f.variable(name, int_t, line=5, location=loc.register("%r2"))
        f.variable("good", int_t, line=4, location=loc.register("%r1"))
        outcome, answers = _both(dbg.finish(), EncodeOptions())
        assert answers == [None]
        assert isinstance(outcome[0], dict) == (name != "bad\0name")


def test_a_tree_that_is_not_one() -> None:
    """A DIE that is its own grandchild's sibling twice over: the kernel declines."""
    root = BuiltDIE(TAG.compile_unit, shape_of(((int(AT.name), AUTO_STRING),)), ("cu",))
    child = BuiltDIE(TAG.variable, shape_of(((int(AT.name), AUTO_STRING),)), ("v",))
    root.add_child(child)
    root.children.append(child)
    native = native_of(write_dies)
    with _side(native) as answers:
        encode_module.encode(ptxdwarf.DebugInfo(units=[ptxdwarf.Unit(die=root)]))
    assert answers == [None]


def _fixture_modules() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.ptx"))


@pytest.mark.parametrize("keep_abbrevs", [True, False])
def test_every_fixtures_model_reencoded(keep_abbrevs: bool) -> None:
    """The ``rewrite`` path: each fixture's decoded model encoded by both sides."""
    count = 0
    for path in _fixture_modules():
        try:
            info = decode_module(parse_ptx(path.read_text(errors="surrogateescape"), str(path)))
        except (PtxDwarfError, UnicodeError):
            continue
        if not info.units:
            continue
        for options in (
            EncodeOptions(keep_abbrevs=keep_abbrevs),
            EncodeOptions("strp", keep_abbrevs=keep_abbrevs),
        ):
            _both(info, options)
        count += 1
    assert count > 100
