"""Built DIEs (compact attributes), encoded per shape.

The encoder writes a built DIE from its shape's specs and values; a DIE whose
Attribute objects were made goes the way of any DIE: both must give the same sections
byte for byte, relocations, fields and breaks included.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_builder import rich

import ptxdwarf
import ptxdwarf.dwarf
import ptxdwarf.dwarf.encode
from ptxdwarf import BuilderError, DebugInfoBuilder, EncodeError, loc
from ptxdwarf.dwarf import AT, FORM, TAG, AddressClass, EncodeOptions
from ptxdwarf.dwarf.built import BuiltDIE, shape_of
from ptxdwarf.dwarf.forms import AUTO_FORM, AUTO_STRING


def _materialize(info: ptxdwarf.DebugInfo) -> int:
    """Turn every built DIE into an ordinary one; the number turned."""
    count = 0
    for die in info.iter_dies():
        if type(die) is BuiltDIE and die.specs is not None:
            die.attributes  # noqa: B018 - the property makes the Attribute objects
            count += 1
    return count


def _sections(images: dict[str, ptxdwarf.dwarf.SectionImage]) -> dict[str, Any]:
    return {
        name: (img.data, img.relocs, sorted(img.fields.items()), img.breaks, img.labels)
        for name, img in images.items()
    }


def _more_shapes(dbg: DebugInfoBuilder) -> None:
    """Kernels with ABI parameters, handles, slices, function types, artificial and
    file-less variables: shapes rich() does not have."""
    int_t = dbg.named_type("int")
    k = dbg.function("kern", linkage_name="_Z4kernv", line=70, kernel=True)
    k.abi_parameter("xs", dbg.slice_type(dbg.named_type("float")), line=70)
    k.abi_parameter("tex", dbg.handle_type(), line=70)
    k.variable("this", int_t, location=loc.register("%r9"), artificial=True)
    k.variable("unplaced", int_t)
    k.parameter("far", int_t, line=70, file=300, location=loc.register("%r8"))
    k.variable("deep", int_t, line=100_000, location=loc.register("%r7"))
    fn_t = dbg.subroutine_type(int_t, [int_t, dbg.named_type("float")])
    dbg.pointer_type(fn_t, address_class=ptxdwarf.dwarf.AddressClass.GENERIC, name="fp")
    dbg.volatile_type(int_t)
    dbg.global_variable(
        "g_static",
        int_t,
        line=5,
        location=loc.address("g_static", ptxdwarf.dwarf.AddressClass.GLOBAL),
        external=False,
    )


@pytest.mark.parametrize("dwarf4_forms", [False, True])
@pytest.mark.parametrize("strings,labels", [("inline", False), ("strp", False), ("strp", True)])
@pytest.mark.parametrize("address_size", [4, 8])
@pytest.mark.parametrize("version", [2, 3, 4])
def test_shape_writers_match_the_general_path(
    version: int, address_size: int, strings: str, labels: bool, dwarf4_forms: bool
) -> None:
    dbg = rich(version, address_size, strings)
    _more_shapes(dbg)
    info = dbg.finish()
    options = EncodeOptions(strings=strings, string_labels=labels, dwarf4_forms=dwarf4_forms)
    fast = _sections(ptxdwarf.dwarf.encode.encode(info, options).images)
    assert _materialize(info) > 50
    general = _sections(ptxdwarf.dwarf.encode.encode(info, options).images)
    assert fast.keys() == general.keys()
    for name in general:
        assert fast[name] == general[name], name


def test_materialized_attributes_keep_the_encoders_choice_open() -> None:
    """Forms the builder chose for itself read back as None; forms it was told stay."""
    dbg = DebugInfoBuilder("a.cu")
    int_t = dbg.base_type("int", byte_size=4, encoding="signed")
    f = dbg.function("f", line=3, type=int_t)
    v = f.variable("x", int_t, line=70_000, location=loc.register("%r1"))
    die = v.die
    assert die.get(AT.decl_line) == 70_000 and AT.location in die and AT.byte_size not in die
    assert die.specs is not None  # reading values does not make Attribute objects
    forms = {a.name: a.form for a in die.attributes}
    assert die.specs is None
    assert forms[AT.name] is None and forms[AT.decl_line] is None and forms[AT.type] is None
    assert forms[AT.location] is None and forms[AT.address_class] is None
    assert {a.name: a.form for a in f.die.attributes}[AT.low_pc] == FORM.addr  # told "addr"
    # an ordinary DIE from here on
    die.add(AT.artificial, True)
    v.set_location(loc.register("%r2"))
    assert [a.name for a in die.attributes][-3:] == [AT.artificial, AT.address_class, AT.location]


def test_compact_edits() -> None:
    """put at a position, without, and a value the compact form cannot hold."""
    die = BuiltDIE(TAG.variable)
    die.put(AT.name, "x")
    die.put(AT.type, BuiltDIE(TAG.base_type))
    die.put(AT.decl_line, 4, position=1)
    assert [n for n, _ in die.specs or ()] == [AT.name, AT.decl_line, AT.type]
    die.without((AT.decl_line,))
    assert die.values[0] == "x" and len(die.values) == 2
    same = BuiltDIE(TAG.variable)
    same.put(AT.name, "y")
    same.put(AT.type, die.values[1])
    assert same.specs is die.specs  # one shared shape
    die.put(AT.const_value, object())  # not a value the compact form knows: Attribute objects
    assert die.specs is None and die.attributes[-1].name == AT.const_value


def test_a_value_a_writer_does_not_expect_goes_the_general_way() -> None:
    """A name holding NUL: the general path's error, naming the DIE."""
    dbg = DebugInfoBuilder("a.cu")
    int_t = dbg.base_type("int", byte_size=4, encoding="signed")
    f = dbg.function("f", line=3, type=int_t)
    f.variable("good", int_t, line=4, location=loc.register("%r1"))
    f.variable("bad\0name", int_t, line=5, location=loc.register("%r2"))
    with pytest.raises(EncodeError, match=r"NUL.*DW_TAG_variable"):
        ptxdwarf.dwarf.encode.encode(dbg.finish())
    # and a bad decl line never gets that far
    with pytest.raises(BuilderError, match=r"f/y: decl file 1 and line .ten. must be numbers"):
        f.variable("y", int_t, line="ten")  # type: ignore[arg-type]  # the wrong type is what the test passes


_NAMES = st.text(
    st.characters(blacklist_characters="\0", blacklist_categories=["Cs"]), min_size=1, max_size=40
)
_LOCATIONS = st.one_of(
    st.none(),
    st.sampled_from(["%r1", "%rd12", "%f3", "%p1", "%fd100"]).map(loc.register),
    st.tuples(st.sampled_from(["k_param_0", "k_param_1"]), st.integers(0, 300)).map(lambda t: loc.param(*t)),
    st.tuples(st.sampled_from(["__local_depot0", "__local_depot1"]), st.integers(0, 2**20)).map(
        lambda t: loc.local(*t)
    ),
    st.tuples(st.sampled_from(["g", "s"]), st.sampled_from(list(AddressClass))).map(
        lambda t: loc.address(*t)
    ),
)
_VARIABLES = st.lists(
    st.tuples(
        _NAMES, st.one_of(st.none(), st.integers(0, 2**33)), st.integers(1, 70_000), _LOCATIONS, st.booleans()
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(
    variables=_VARIABLES,
    version=st.sampled_from([2, 3, 4]),
    address_size=st.sampled_from([4, 8]),
    strings=st.sampled_from(["inline", "strp"]),
)
def test_shape_writers_match_the_general_path_on_any_values(
    variables: list[Any], version: int, address_size: int, strings: str
) -> None:
    """Names in any script, lines and files of any size, every location kind: the
    built path and the Attribute path agree."""
    dbg = DebugInfoBuilder("p.cu", version=version, address_size=address_size, strings=strings)
    int_t = dbg.named_type("int")
    f = dbg.function("f", linkage_name="_Z1fv", line=1, type=int_t)
    for i, (name, line, file, where, param) in enumerate(variables):
        if address_size == 4 and where is not None and where.address_class == AddressClass.LOCAL:
            where = None  # needs 8-byte addresses (a BuilderError, tested elsewhere)
        if param:
            f.parameter(name, int_t, line=line, file=file, location=where)
        else:
            f.variable(f"{name}{i}", int_t, line=line, file=file, location=where)
    info = dbg.finish()
    options = EncodeOptions(strings=strings)
    fast = _sections(ptxdwarf.dwarf.encode.encode(info, options).images)
    _materialize(info)
    assert fast == _sections(ptxdwarf.dwarf.encode.encode(info, options).images)


def test_specs_and_values_that_do_not_pair_up() -> None:
    die = BuiltDIE(TAG.variable, ((int(AT.name), -1),), ("a", "b"))
    with pytest.raises(BuilderError, match="1 attribute specs but 2 values"):
        die.attributes  # noqa: B018


def _odd_values_module(strings: str) -> DebugInfoBuilder:
    """Built DIEs with values of unusual types after a string and a relocation: an
    IntEnum member where a ULEB128 goes, bytes for a string."""
    dbg = DebugInfoBuilder("fb.cu", strings=strings)
    int_t = dbg.named_type("int")
    f = dbg.function("f", line=1, type=int_t)
    f.variable("before", int_t, line=2, location=loc.address("g", AddressClass.GLOBAL))
    odd = f.variable("odd", int_t, line=3, location=loc.address("h", AddressClass.GLOBAL)).die
    odd.put(AT.encoding, ptxdwarf.dwarf.ATE.signed, "udata")
    assert isinstance(odd, BuiltDIE) and odd.specs is not None
    raw = f.variable("raw", int_t, line=4, location=loc.address("i", AddressClass.GLOBAL)).die
    raw.put(AT.producer, b"bytes", "string")
    f.variable("after", int_t, line=5, location=loc.address("j", AddressClass.GLOBAL))
    return dbg


@pytest.mark.parametrize(
    "strings,labels", [("inline", False), ("inline", True), ("strp", False), ("strp", True)]
)
def test_unusual_values_encode_as_their_attributes_do(strings: str, labels: bool) -> None:
    """A built DIE encodes the same whether or not its attributes were read: the
    string pool, labels and relocations the same."""
    options = EncodeOptions(strings=strings, string_labels=labels)
    info = _odd_values_module(strings).finish()
    fast = ptxdwarf.dwarf.encode.encode(info, options)
    _materialize(info)
    general = ptxdwarf.dwarf.encode.encode(info, options)
    assert _sections(fast.images) == _sections(general.images)
    if strings == "strp" and labels:
        names = [n for n in fast.images[".debug_str"].labels]
        assert names == [f"$L__str{i}" for i in range(len(names))]


def test_a_value_of_another_kind_than_its_spec_says_is_written_in_the_specs_form() -> None:
    """The encoder takes a built DIE's specs at their word (the builder makes each spec from its
    value): bytes where the spec says a small number do not fit the number's form."""
    kind_data1 = int(FORM.data1) | AUTO_FORM
    odd = BuiltDIE(
        TAG.variable,
        shape_of(((int(AT.name), AUTO_STRING), (int(AT.const_value), kind_data1))),
        ("x", b"\1\2"),
    )
    root = BuiltDIE(TAG.compile_unit)
    root.add_child(odd)
    info = ptxdwarf.DebugInfo(units=[ptxdwarf.Unit(die=root)])
    with pytest.raises(
        EncodeError,
        match=r"DW_AT_const_value: value b'\\x01\\x02' does not fit DW_FORM_data1.*DW_TAG_variable",
    ):
        ptxdwarf.dwarf.encode.encode(info)


@pytest.mark.parametrize("strings", ["inline", "strp"])
def test_a_die_under_a_string_form_is_an_encode_error_every_time(strings: str) -> None:
    """DW_AT_name given a DIE: the string forms take str or bytes only (bytes() of a DIE raised
    KeyError, and a second encode of the same model then took another form)."""
    root = BuiltDIE(TAG.compile_unit, shape_of(((int(AT.name), AUTO_STRING),)), ("cu",))
    die = BuiltDIE(TAG.variable)
    die.specs = shape_of(((int(AT.name), -1),))
    die.values = (die,)
    root.add_child(die)
    info = ptxdwarf.DebugInfo(units=[ptxdwarf.Unit(4, 8, die=root)])
    for _ in range(2):
        with pytest.raises(EncodeError, match="DW_AT_name: a string form cannot hold BuiltDIE"):
            ptxdwarf.dwarf.encode_sections(info, EncodeOptions(strings=strings))
