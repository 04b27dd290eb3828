"""The builder: the README example, every location kind and address class, the
version x address-size x strings x style matrix, pubnames/aranges, and wrong use.

Everything built here goes through the real ptxas; the cubin is read back with
ptxdwarf's cubin reader and, where it matters, llvm-dwarfdump and pyelftools.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import FIXTURES, CubinPath, run_dwarfdump
from elftools.elf.elffile import ELFFile

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.dwarf
from ptxdwarf import AttachError, BuilderError, DebugInfoBuilder, LayoutError, RegisterNameError, loc
from ptxdwarf.dwarf import AT, TAG, AddressClass, Op
from ptxdwarf.dwarf.expr import register_number

ALL_SPACES = (FIXTURES / "handwritten" / "all_spaces.ptx").read_text()


def spec_program_without_debug() -> str:
    """The guide's example program with its debug info, labels and .loc lines removed."""
    text = (FIXTURES / "spec" / "example.ptx").read_text()
    text = text[: text.index(".section")]
    text = text.replace(".target sm_20, debug", ".target sm_20")
    text = re.sub(r"^\s*\.(loc|file)\b.*\n", "", text, flags=re.M)
    return re.sub(r"^\s*func_(begin|end)\d:\s*\n", "", text, flags=re.M)


def readme_example(ptx_text: str) -> tuple[str, DebugInfoBuilder, dict[str, Any]]:
    # -- the contract of the builder issue, verbatim --
    import ptxdwarf
    from ptxdwarf import DebugInfoBuilder, loc
    from ptxdwarf.dwarf import AddressClass

    dbg = DebugInfoBuilder(name="call_example.cu", comp_dir="/home/user/test", producer="mycodegen 1.0")
    int_t = dbg.base_type("int", byte_size=4, encoding="signed")
    void_t = dbg.unspecified_type("void")
    int_ptr = dbg.pointer_type(int_t, address_class=AddressClass.GENERIC)

    foo = dbg.function("foo", linkage_name="_Z3fooii", line=1, type=int_t)
    foo.parameter("i", int_t, line=1, location=loc.register("%r1"))
    foo.parameter("j", int_t, line=1, location=loc.register("%r2"))

    test = dbg.function("test", linkage_name="_Z4testPi", line=6, type=void_t)
    test.parameter("p", int_ptr, line=6, location=loc.param("_Z4testPi_param_0"))

    ptx_with_debug = ptxdwarf.attach.attach(ptx_text, dbg)  # ptx_text: the module without debug info

    # types a code generator also needs; layout follows the PTX ABI unless told otherwise
    char_t = dbg.base_type("char", byte_size=1, encoding="signed_char")
    float_t = dbg.base_type("float", byte_size=4, encoding="float")
    pair_t = dbg.struct_type("Pair", [("a", int_t), ("tag", dbg.array_type(char_t, 3)), ("flags", int_t, 3)])
    float4_t = dbg.vector_type(float_t, 4)
    bits_t = dbg.union_type("Bits", [("f", float_t), ("u", int_t)])
    # -- end of the contract --
    return ptx_with_debug, dbg, {"pair": pair_t, "float4": float4_t, "bits": bits_t}


def test_readme_example_through_ptxas(cubin_path: CubinPath, llvm_dwarfdump: str) -> None:
    text, _dbg, types = readme_example(spec_program_without_debug())
    assert ".target sm_20, debug" in text
    assert '.file 1 "/home/user/test/call_example.cu"' in text
    cubin = cubin_path(text, "readme.ptx")
    out = run_dwarfdump(llvm_dwarfdump, cubin, "--debug-info")
    blocks = out.split("\n\n")

    def die(name: str) -> str:
        return next(b for b in blocks if f'DW_AT_name\t("{name}")' in b)

    for name, reg in (("i", "0x257231"), ("j", "0x257232")):
        assert f"DW_OP_regx {reg}" in die(name)
        assert "DW_AT_address_class\t(0x02)" in die(name)
    p = die("p")
    assert "DW_AT_address_class\t(0x07)" in p
    assert re.search(r"DW_OP_addr 0x[0-9a-f]+", p)  # the parameter's constant-bank offset
    assert re.search(
        r"DW_TAG_pointer_type\s+DW_AT_type\s+\(0x[0-9a-f]+ \"int\"\)\s+DW_AT_address_class\s+\(0x0c\)", out
    )
    foo = die("foo")
    assert "DW_AT_high_pc" in foo and 'DW_AT_MIPS_linkage_name\t("_Z3fooii")' in foo
    # Types built after attach are not in that text, but their layout is computed.
    assert types["pair"].byte_size == 8 and types["float4"].byte_size == 16 and types["float4"].align == 16
    assert types["bits"].byte_size == 4


def build_all_spaces(version: int = 2, address_size: int = 8, strings: str = "inline") -> DebugInfoBuilder:
    dbg = DebugInfoBuilder(
        name="all_spaces.ptx", comp_dir="/src", version=version, address_size=address_size, strings=strings
    )
    u32 = dbg.named_type(".u32")
    int_t = dbg.named_type("int")
    foo = dbg.function("foo", linkage_name="_Z3fooii", line=17, type=int_t)
    foo.parameter("a", int_t, line=17, location=loc.register("%r1"))
    foo.parameter("b", int_t, line=17, location=loc.register("%r2"))
    foo.variable(
        "sum",
        int_t,
        line=26,
        location=loc.location_list(
            [
                ("_Z3fooii", "$L__foo_mid", loc.register("%r1")),
                ("$L__foo_mid", foo.high_pc, loc.register("%r3")),
            ]
        ),
    )
    test = dbg.function("test", linkage_name="_Z4testPi", line=31, type=dbg.unspecified_type("void"))
    test.parameter(
        "out",
        dbg.pointer_type(u32, address_class=AddressClass.GENERIC),
        line=31,
        location=loc.param("_Z4testPi_param_0"),
    )
    test.variable("tid", u32, line=42, location=loc.register("%r1"))
    if address_size == 8:  # ptxas can rewrite a depot location only with 8-byte addresses
        test.variable("slot", u32, line=43, location=loc.local("__local_depot0", 0))
    test.variable(
        "tid_sreg",
        u32,
        line=42,
        location=loc.expression([Op.make("regx", register_number("%tid.x"))], AddressClass.SREG),
    )
    test.variable("code", u32, line=31, location=loc.address("_Z3fooii", AddressClass.CODE))
    block = test.lexical_block(low_pc="$L__test_block_begin", high_pc="$L__test_block_end")
    block.variable("total", u32, line=48, location=loc.register("%r5"))
    for name, cls, line in (
        ("g_global", AddressClass.GLOBAL, 10),
        ("g_shared", AddressClass.SHARED, 11),
        ("g_const", AddressClass.CONST, 12),
        ("g_tex", AddressClass.TEX, 13),
        ("g_sampler", AddressClass.TEX_SAMPLER, 14),
        ("g_surf", AddressClass.SURF, 15),
    ):
        dbg.global_variable(name, u32, line=line, location=loc.address(name, cls))
    dbg.global_variable(
        "g_generic", u32, line=10, location=loc.address("g_global", AddressClass.GENERIC), external=False
    )
    return dbg


EXPECTED_CLASSES = {
    "a": 2,
    "b": 2,
    "out": 7,
    "tid": 2,
    "slot": 6,
    "tid_sreg": 3,
    "code": 1,
    "total": 2,
    "g_global": 5,
    "g_shared": 8,
    "g_const": 4,
    "g_tex": 10,
    "g_sampler": 11,
    "g_surf": 9,
    "g_generic": 12,
}


def test_every_location_kind_and_address_class(cubin_path: CubinPath) -> None:
    dbg = build_all_spaces()
    text = ptxdwarf.attach.attach(ALL_SPACES, dbg, filename="all_spaces.ptx")
    info = ptxdwarf.cuda.read_cubin(cubin_path(text, "all_spaces.ptx"))
    seen = {}
    for die in info.iter_dies():
        if die.tag in (TAG.variable, TAG.formal_parameter) and die.name:
            seen[die.name] = die
    assert {
        name: die.address_class for name, die in seen.items() if name in EXPECTED_CLASSES
    } == EXPECTED_CLASSES
    assert set(range(1, 13)) == set(EXPECTED_CLASSES.values())
    for name, die in seen.items():
        location = die.attr(AT.location)
        assert location is not None, name
    # What ptxas made of the locations:
    ops = {
        name: ptxdwarf.dwarf.decode_expression(d[AT.location], 8) for name, d in seen.items() if name != "sum"
    }
    assert ops["a"][0].register == "%r1"
    assert (
        ops["out"][0].name == "DW_OP_addr" and cast(int, ops["out"][0].args[0]) >= 0x100
    )  # constant-bank offset
    assert ops["slot"][0].name == "DW_OP_fbreg"  # the local depot rewrite
    assert ops["tid_sreg"][0].register == "%tid.x"
    # The location list moved to the cubin's .debug_loc with its two ranges.
    sum_loc = seen["sum"].attr(AT.location)
    assert sum_loc is not None and sum_loc.form == ptxdwarf.dwarf.FORM.data4
    lists = info.locations or []
    assert [len(x.entries) for x in lists] == [2]
    regs = [ptxdwarf.dwarf.decode_expression(e[2], 8)[0].register for e in lists[0].entries]  # type: ignore[arg-type]  # a list entry with no expression fails the test, as it should
    assert regs == ["%r1", "%r3"]
    assert lists[0].entries[0][1] == lists[0].entries[1][0]  # $L__foo_mid ends one range and starts the next


def _canonical(info: ptxdwarf.DebugInfo) -> list[Any]:
    """Tags, nesting, names and the attributes ptxas keeps as they are (symbols and
    locations only by form, since ptxas resolves them)."""
    out = []
    for unit in info.units:
        assert unit.die is not None
        stack = [(unit.die, 0)]
        order = {d.offset: i for i, d in enumerate(unit.iter_dies())}
        while stack:
            die, depth = stack.pop()
            attrs: list[tuple[Any, ...]] = []
            for a in die.attributes:
                if isinstance(a.value, str):
                    attrs.append((a.name, a.form, a.value))
                elif a.relocs or a.name in (AT.location, AT.frame_base, AT.stmt_list):
                    attrs.append((a.name, a.form))
                elif a.is_reference:
                    attrs.append((a.name, a.form, order.get(a.target)))
                else:
                    attrs.append((a.name, a.form, a.value))
            out.append((depth, die.tag, attrs))
            stack.extend((c, depth + 1) for c in reversed(die.children))
    return out


def rich(version: int, address_size: int, strings: str) -> DebugInfoBuilder:
    dbg = build_all_spaces(version, address_size, strings)
    int_t = dbg.named_type("int")
    uchar = dbg.named_type("unsigned char")
    color = dbg.enum_type("Color", {"RED": 0, "GREEN": 1, "BLUE": -2}, underlying=uchar)
    inner = dbg.struct_type("Inner", [("x", dbg.named_type("float")), ("tag", dbg.array_type(uchar, (2, 3)))])
    node = dbg.struct_type("Node")
    node.define(
        [
            ("next", dbg.pointer_type(node, address_class=12)),
            ("inner", inner),
            ("flag", int_t, 3),
            (None, int_t, 0),
            ("c", color),
        ]
    )
    dbg.typedef("node_t", dbg.const_type(node))
    dbg.union_type(
        "Bits",
        [
            ("f", dbg.named_type("float")),
            ("u", dbg.named_type("unsigned int")),
            ("lo", dbg.named_type("unsigned int"), 12),
        ],
    )
    dbg.vector_type(dbg.named_type("float"), 3)
    return dbg


@pytest.mark.parametrize("style", ["nvcc", "readable", "compact"])
@pytest.mark.parametrize("strings", ["inline", "strp"])
@pytest.mark.parametrize("address_size", [4, 8])
@pytest.mark.parametrize("version", [2, 3, 4])
def test_matrix_through_ptxas(
    version: int, address_size: int, strings: str, style: str, cubin_path: CubinPath
) -> None:
    """ptxas accepts every combination and the cubin's DIE tree equals the built one.

    CUDA 13 ptxas no longer compiles ``.address_size 32`` modules; 4-byte DWARF
    addresses are tested inside the 64-bit module, which ptxas accepts.
    """
    dbg = rich(version, address_size, strings)
    text = ptxdwarf.attach.attach(ALL_SPACES, dbg, filename="all_spaces.ptx", style=style)
    built = ptxdwarf.read(text=text)
    assert built.units[0].version == version and built.units[0].address_size == address_size
    assert (built.strings is not None) == (strings == "strp")
    cubin = ptxdwarf.cuda.read_cubin(
        cubin_path(text, f"matrix-{version}-{address_size}-{strings}-{style}.ptx")
    )
    assert _canonical(cubin) == _canonical(built)
    # and the built tree is what the builder made
    names = [d.name for d in dbg.iter_dies()]
    assert [d.name for d in built.iter_dies()] == names


def test_pubnames_and_aranges_on_the_cubin(cubin_path: CubinPath, llvm_dwarfdump: str) -> None:
    dbg = build_all_spaces()
    text = ptxdwarf.attach.attach(ALL_SPACES, dbg, filename="all_spaces.ptx")
    cubin = cubin_path(text, "pub.ptx")
    out = run_dwarfdump(llvm_dwarfdump, cubin, "--debug-info", "--debug-pubnames", "--debug-aranges")
    dies = {
        int(m.group(1), 16): m.group(2) for m in re.finditer(r"^0x([0-9a-f]{8}):\s+(DW_TAG_\w+)", out, re.M)
    }
    pub = re.search(r"\.debug_pubnames contents:\n(.*?)(\n\n|\Z)", out, re.S)
    assert pub is not None
    entries = re.findall(r"^0x([0-9a-f]{8}) \"([^\"]+)\"", pub.group(1), re.M)
    names = {name for _, name in entries}
    assert {"_Z3fooii", "_Z4testPi", "g_global", "g_shared", "g_const"} <= names
    assert "g_generic" not in names  # not external
    for offset, _name in entries:
        assert dies[int(offset, 16)] in ("DW_TAG_subprogram", "DW_TAG_variable")
    header = re.search(r"unit_offset = 0x([0-9a-f]+), unit_size = 0x([0-9a-f]+)", pub.group(1))
    cu = re.search(r"Compile Unit: length = 0x([0-9a-f]+)", out)
    assert header is not None and cu is not None
    assert int(header.group(1), 16) == 0 and int(header.group(2), 16) == int(cu.group(1), 16) + 4
    # aranges: each function's [low_pc, high_pc) as llvm-dwarfdump reads the DIEs
    subprograms = [b for b in out.split("\n\n") if "DW_TAG_subprogram" in b]
    pcs = [
        re.search(r"DW_AT_low_pc\s+\((0x[0-9a-f]+)\)\s+DW_AT_high_pc\s+\((0x[0-9a-f]+)\)", b).groups()  # type: ignore[union-attr]  # a None here fails the test, as it should
        for b in subprograms
    ]
    assert len(pcs) == 2
    ranges = re.findall(r"\[(0x[0-9a-f]+), (0x[0-9a-f]+)\)", out.split(".debug_aranges contents:")[1])
    assert [(int(a, 16), int(b, 16)) for a, b in pcs] == [
        (int(a, 16), int(b, 16)) for a, b in ranges[: len(pcs)]
    ]
    assert all(b > a for a, b in pcs)
    # pyelftools, the second reader, agrees on the offsets.
    with open(cubin, "rb") as f:
        dwarf = ELFFile(io.BytesIO(f.read())).get_dwarf_info(relocate_dwarf_sections=False)
    pubnames = dwarf.get_pubnames()
    assert pubnames is not None
    by_name = {name: entry.die_ofs for name, entry in pubnames.items()}
    offsets = {d.offset: d for cu_ in dwarf.iter_CUs() for d in cu_.iter_DIEs()}
    for name, die_offset in by_name.items():
        die = offsets[die_offset]
        linkage = die.attributes.get("DW_AT_MIPS_linkage_name") or die.attributes.get("DW_AT_name")
        assert linkage is not None and linkage.value.decode() == name
    aranges = dwarf.get_aranges()
    assert aranges is not None
    assert [(e.begin_addr, e.length) for e in aranges.entries][:2] == [
        (int(a, 16), int(b, 16) - int(a, 16)) for a, b in pcs
    ]


def test_builder_layout_matches_nvcc() -> None:
    """The builder's DIEs for the readme's types carry the PTX-ABI layout."""
    dbg = DebugInfoBuilder(name="t.cu")
    int_t = dbg.named_type("int")
    char_t = dbg.named_type("char")
    pair = dbg.struct_type("Pair", [("a", int_t), ("tag", dbg.array_type(char_t, 3)), ("flags", int_t, 3)])
    members = {m.name: m for m in pair.die.children}
    assert pair.die.get(AT.byte_size) == 8
    assert members["flags"].get(AT.bit_size) == 3
    assert members["flags"].get(AT.bit_offset) == 32 - (56 - 32) - 3
    dbg4 = DebugInfoBuilder(name="t.cu", version=4)
    pair4 = dbg4.struct_type("Pair", [("a", dbg4.named_type("int")), ("flags", dbg4.named_type("int"), 3)])
    flags4 = pair4.die.children[1]
    assert flags4.get(AT.data_bit_offset) == 32 and flags4.get(AT.bit_size) == 3
    assert flags4.attr(AT.data_member_location) is None


# --- wrong use ------------------------------------------------------------


def test_register_name_over_8_characters() -> None:
    with pytest.raises(RegisterNameError, match="%my_long_reg"):
        loc.register("%my_long_reg")


def test_missing_label_or_symbol_names_it() -> None:
    dbg = build_all_spaces()
    f = dbg.functions[0]
    f.variable("ghost", dbg.named_type("int"), location=loc.local("__local_depot9", 4))
    with pytest.raises(AttachError, match="__local_depot9"):
        ptxdwarf.attach.attach(ALL_SPACES, dbg, filename="all_spaces.ptx")
    dbg = build_all_spaces()
    dbg.functions[1].lexical_block(low_pc="$L__nowhere", high_pc="$L__test_block_end")
    with pytest.raises(AttachError, match=r"\$L__nowhere"):
        ptxdwarf.attach.attach(ALL_SPACES, dbg, filename="all_spaces.ptx")
    dbg = DebugInfoBuilder(name="x.cu")
    dbg.function("bar", linkage_name="_Z3barv")
    with pytest.raises(AttachError, match="_Z3barv"):
        ptxdwarf.attach.attach(ALL_SPACES, dbg)


@pytest.mark.parametrize("code", [0, 13, 16, 99, -1])
def test_address_class_outside_the_spec(code: int) -> None:
    with pytest.raises(BuilderError, match=f"address class {code}"):
        loc.address("g_global", code)
    dbg = DebugInfoBuilder(name="x.cu")
    with pytest.raises(BuilderError, match="pointer_type"):
        dbg.pointer_type(dbg.named_type("int"), address_class=code)


def test_type_from_another_builder() -> None:
    a = DebugInfoBuilder(name="a.cu")
    b = DebugInfoBuilder(name="b.cu")
    int_a = a.named_type("int")
    with pytest.raises(BuilderError, match="another DebugInfoBuilder"):
        b.pointer_type(int_a)
    f = b.function("f")
    with pytest.raises(BuilderError, match="f/x"):
        f.parameter("x", int_a)
    with pytest.raises(BuilderError, match=r"S.m"):
        b.struct_type("S", [("m", int_a)])


def test_members_that_do_not_fit_the_declared_size() -> None:
    dbg = DebugInfoBuilder(name="x.cu")
    int_t = dbg.named_type("int")
    with pytest.raises(LayoutError, match="'b'"):
        dbg.struct_type("S", [("a", int_t), ("b", int_t)], byte_size=6)
    with pytest.raises(LayoutError, match="'w'"):
        dbg.struct_type("T", [("w", int_t, 33)])


def test_self_containing_struct_and_void_member() -> None:
    dbg = DebugInfoBuilder(name="x.cu")
    s = dbg.struct_type("S")
    with pytest.raises(LayoutError, match="cannot contain itself"):
        s.define([("me", s)])
    with pytest.raises(LayoutError, match="no size"):
        dbg.struct_type("V", [("v", dbg.unspecified_type("void"))])


def test_local_depot_needs_8_byte_addresses() -> None:
    dbg = DebugInfoBuilder(name="x.cu", address_size=4)
    f = dbg.function("test", linkage_name="_Z4testPi")
    with pytest.raises(BuilderError, match="test/slot: a __local_depot location needs 8-byte"):
        f.variable("slot", dbg.named_type("int"), location=loc.local("__local_depot0", 0))


def test_string_labels_need_isa_7() -> None:
    dbg = build_all_spaces(strings="strp")
    old = ALL_SPACES.replace(".version 7.0", ".version 6.5")
    with pytest.raises(AttachError, match=r"7.0"):
        ptxdwarf.attach.attach(old, dbg, string_labels=True)
    # .debug_str+offset needs no labels: fine on 6.5
    assert ".debug_str+" in ptxdwarf.attach.attach(old, build_all_spaces(strings="strp"))


def test_attach_replaces_existing_debug_info(cubin_path: CubinPath) -> None:
    nvcc = (FIXTURES / "nvcc" / "call_example.sm_75.ptx").read_text()
    dbg = DebugInfoBuilder(name="call.cu", producer="replacement")
    int_t = dbg.named_type("int")
    dbg.function("foo", linkage_name="_Z3fooii", type=int_t).parameter(
        "i", int_t, location=loc.register("%r1")
    )
    text = ptxdwarf.attach.attach(nvcc, dbg)
    assert text.count(".section .debug_info") + text.count(".section\t.debug_info") == 1
    info = ptxdwarf.cuda.read_cubin(cubin_path(text, "replaced.ptx"))
    assert info.units[0].die.get(AT.producer) == "replacement"  # type: ignore[union-attr]  # a None here fails the test, as it should


def test_pathless_helpers() -> None:
    dbg = build_all_spaces()
    text = dbg.sections_text("compact")
    assert ".section .debug_info" in text and text.isascii()


def test_readme_builder_example_runs_verbatim(cubin_path: CubinPath) -> None:
    """The README's builder example, as printed there, attaches and compiles."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("## Python API: writing debug info for a code generator", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {"ptx_text": spec_program_without_debug()}
    exec(compile(code, "README.md", "exec"), namespace)
    text = namespace["ptx_with_debug"]
    assert isinstance(text, str)
    info = ptxdwarf.cuda.read_cubin(cubin_path(text, "readme-verbatim.ptx"))
    assert {d.name for d in info.iter_dies() if d.tag == TAG.formal_parameter} == {"i", "j", "p"}


def _cyclic_garbage_of_encoding(functions: int) -> int:
    """The objects an encoding of a module of ``functions`` leaves for the cyclic collector."""
    import gc

    from ptxdwarf.dwarf.encode import encode

    dbg = DebugInfoBuilder("m.ptx", comp_dir="/tmp", producer="t")
    u32 = dbg.named_type(".u32")
    for i in range(functions):
        f = dbg.function(f"dev{i}", line=5 + i)
        f.parameter(f"dev{i}_param_0", u32, line=6, location=loc.register("%r1"))
        f.variable("%r2", u32, line=7, location=loc.register("%r2"))
    info = dbg.finish()
    encode(info, dbg.encode_options())  # the schemas' caches, made once
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        images = encode(info, dbg.encode_options()).images
        assert images[".debug_info"].relocs
        del images
        return gc.collect()
    finally:
        if enabled:
            gc.enable()


def test_an_encoding_leaves_no_more_cyclic_garbage_for_a_larger_module() -> None:
    assert _cyclic_garbage_of_encoding(200) == _cyclic_garbage_of_encoding(20)
