"""The PTX Interoperability guide's own example, rebuilt from a DIE tree.

The expected bytes are the numbers printed in the guide (chapter "Example"),
copied here by hand; the tree is built in the test with the guide's forms and
abbreviation codes, encoded by ptxdwarf, and must give those bytes exactly.
"""

from __future__ import annotations

import pytest
from conftest import CubinPath

import ptxdwarf
import ptxdwarf.dwarf
import ptxdwarf.ptx
import ptxdwarf.ptx.writer
from ptxdwarf import DIE, Attribute, DebugInfo, Unit
from ptxdwarf.dwarf import AT, TAG, NameSet, Op, Symbol
from ptxdwarf.dwarf.constants import at_code, form_code
from ptxdwarf.dwarf.expr import register_number

# .section .debug_info of the guide, as printed (symbolic values are zeros here).
SPEC_INFO = [
    *(262).to_bytes(4, "little"),
    2,
    0,
    *(0).to_bytes(4, "little"),
    8,
    1,
    108,
    103,
    101,
    110,
    102,
    101,
    58,
    32,
    69,
    68,
    71,
    32,
    52,
    46,
    57,
    0,
    4,
    99,
    97,
    108,
    108,
    49,
    46,
    99,
    117,
    0,
    *(0).to_bytes(8, "little"),
    *(0).to_bytes(4, "little"),
    47,
    104,
    111,
    109,
    101,
    47,
    109,
    109,
    117,
    114,
    112,
    104,
    121,
    47,
    116,
    101,
    115,
    116,
    0,
    2,
    95,
    90,
    51,
    102,
    111,
    111,
    105,
    105,
    0,
    95,
    90,
    51,
    102,
    111,
    111,
    105,
    105,
    0,
    *(1).to_bytes(4, "little"),
    *(1).to_bytes(4, "little"),
    *(164).to_bytes(4, "little"),
    1,
    *(0).to_bytes(8, "little"),
    *(0).to_bytes(8, "little"),
    1,
    156,
    3,
    105,
    0,
    *(1).to_bytes(4, "little"),
    *(1).to_bytes(4, "little"),
    *(164).to_bytes(4, "little"),
    5,
    144,
    177,
    228,
    149,
    1,
    2,
    3,
    106,
    0,
    *(1).to_bytes(4, "little"),
    *(1).to_bytes(4, "little"),
    *(164).to_bytes(4, "little"),
    5,
    144,
    178,
    228,
    149,
    1,
    2,
    0,
    4,
    105,
    110,
    116,
    0,
    5,
    *(4).to_bytes(4, "little"),
    2,
    95,
    90,
    52,
    116,
    101,
    115,
    116,
    80,
    105,
    0,
    95,
    90,
    52,
    116,
    101,
    115,
    116,
    80,
    105,
    0,
    *(1).to_bytes(4, "little"),
    *(6).to_bytes(4, "little"),
    *(253).to_bytes(4, "little"),
    1,
    *(0).to_bytes(8, "little"),
    *(0).to_bytes(8, "little"),
    1,
    156,
    3,
    112,
    0,
    *(1).to_bytes(4, "little"),
    *(6).to_bytes(4, "little"),
    *(259).to_bytes(4, "little"),
    9,
    3,
    *(0).to_bytes(8, "little"),
    7,
    0,
    5,
    118,
    111,
    105,
    100,
    0,
    6,
    *(164).to_bytes(4, "little"),
    12,
    0,
]

SPEC_ABBREV = [
    1,
    17,
    1,
    37,
    8,
    19,
    11,
    3,
    8,
    17,
    1,
    16,
    6,
    27,
    8,
    0,
    0,
    2,
    46,
    1,
    135,
    64,
    8,
    3,
    8,
    58,
    6,
    59,
    6,
    73,
    19,
    63,
    12,
    17,
    1,
    18,
    1,
    64,
    10,
    0,
    0,
    3,
    5,
    0,
    3,
    8,
    58,
    6,
    59,
    6,
    73,
    19,
    2,
    10,
    51,
    11,
    0,
    0,
    4,
    36,
    0,
    3,
    8,
    62,
    11,
    11,
    6,
    0,
    0,
    5,
    59,
    0,
    3,
    8,
    0,
    0,
    6,
    15,
    0,
    73,
    19,
    51,
    11,
    0,
    0,
    0,
]

SPEC_PUBNAMES = [
    *(41).to_bytes(4, "little"),
    2,
    0,
    *(0).to_bytes(4, "little"),
    *(262).to_bytes(4, "little"),
    *(69).to_bytes(4, "little"),
    95,
    90,
    51,
    102,
    111,
    111,
    105,
    105,
    0,
    *(174).to_bytes(4, "little"),
    95,
    90,
    52,
    116,
    101,
    115,
    116,
    80,
    105,
    0,
    *(0).to_bytes(4, "little"),
]


def _attr(name: str, form: str, value: object) -> Attribute:
    return Attribute(at_code(name), form_code(form), value)


def build_spec_tree() -> tuple[DebugInfo, dict[str, DIE]]:
    """The guide's DIE tree with its forms and abbreviation codes."""
    int_t = DIE(
        TAG.base_type,
        [_attr("name", "string", "int"), _attr("encoding", "data1", 5), _attr("byte_size", "data4", 4)],
        abbrev_code=4,
    )
    void_t = DIE(TAG.unspecified_type, [_attr("name", "string", "void")], abbrev_code=5)
    ptr_t = DIE(
        TAG.pointer_type, [_attr("type", "ref4", int_t), _attr("address_class", "data1", 12)], abbrev_code=6
    )

    def param(name: str, line: int, type_: DIE, location: list[Op], aclass: int) -> DIE:
        return DIE(
            TAG.formal_parameter,
            [
                _attr("name", "string", name),
                _attr("decl_file", "data4", 1),
                _attr("decl_line", "data4", line),
                _attr("type", "ref4", type_),
                _attr("location", "block1", location),
                _attr("address_class", "data1", aclass),
            ],
            abbrev_code=3,
        )

    def function(name: str, line: int, type_: DIE, begin: str, end: str, params: list[DIE]) -> DIE:
        return DIE(
            TAG.subprogram,
            [
                _attr("MIPS_linkage_name", "string", name),
                _attr("name", "string", name),
                _attr("decl_file", "data4", 1),
                _attr("decl_line", "data4", line),
                _attr("type", "ref4", type_),
                _attr("external", "flag", 1),
                _attr("low_pc", "addr", Symbol(begin)),
                _attr("high_pc", "addr", Symbol(end)),
                _attr("frame_base", "block1", [Op.make("call_frame_cfa")]),
            ],
            params,
            abbrev_code=2,
        )

    foo = function(
        "_Z3fooii",
        1,
        int_t,
        "func_begin0",
        "func_end0",
        [
            param("i", 1, int_t, [Op.make("regx", register_number("%r1"))], 2),
            param("j", 1, int_t, [Op.make("regx", register_number("%r2"))], 2),
        ],
    )
    test = function(
        "_Z4testPi",
        6,
        void_t,
        "func_begin1",
        "func_end1",
        [param("p", 6, ptr_t, [Op.make("addr", Symbol("_Z4testPi_param_0"))], 7)],
    )
    cu = DIE(
        TAG.compile_unit,
        [
            _attr("producer", "string", "lgenfe: EDG 4.9"),
            _attr("language", "data1", 4),
            _attr("name", "string", "call1.cu"),
            _attr("low_pc", "addr", 0),
            _attr("stmt_list", "data4", Symbol(".debug_line")),
            _attr("comp_dir", "string", "/home/mmurphy/test"),
        ],
        [foo, int_t, test, void_t, ptr_t],
        abbrev_code=1,
    )
    unit = Unit(version=2, address_size=8, die=cu)
    info = DebugInfo(units=[unit])
    # The guide gives the unit's size as 262 (its unit_length), not 266.
    info.pubnames = [
        NameSet(unit_offset=unit, unit_length=262, entries=[(foo, "_Z3fooii"), (test, "_Z4testPi")])
    ]
    return info, {"foo": foo, "test": test}


def test_spec_example_bytes_are_reproduced() -> None:
    info, _ = build_spec_tree()
    images = ptxdwarf.dwarf.encode_sections(info)
    assert list(images[".debug_abbrev"].data) == SPEC_ABBREV
    assert list(images[".debug_info"].data) == SPEC_INFO
    assert list(images[".debug_pubnames"].data) == SPEC_PUBNAMES
    relocs = {r.offset: (r.size, str(r.symbol)) for r in images[".debug_info"].relocs}
    # Offsets counted by hand from the guide's bytes: header 11, producer 12..27,
    # language 28, name 29..37, low_pc 38, stmt_list 46; foo at 69 (the guide's
    # pubnames), its low_pc after 32 bytes of attributes; test at 174; p at 226.
    assert relocs == {
        6: (4, ".debug_abbrev"),
        46: (4, ".debug_line"),
        101: (8, "func_begin0"),
        109: (8, "func_end0"),
        208: (8, "func_begin1"),
        216: (8, "func_end1"),
        243: (8, "_Z4testPi_param_0"),
    }
    assert {r.offset: str(r.symbol) for r in images[".debug_pubnames"].relocs} == {6: ".debug_info"}


def test_spec_example_is_accepted_by_ptxas(cubin_path: CubinPath, llvm_dwarfdump: str) -> None:
    from conftest import FIXTURES, run_dwarfdump

    info, _ = build_spec_tree()
    images = ptxdwarf.dwarf.encode_sections(info)
    fixed = (FIXTURES / "spec" / "example.ptx").read_text()
    module = ptxdwarf.ptx.parse_ptx(fixed)
    text = ptxdwarf.ptx.debug.replace_debug_sections(module, images)
    cubin = cubin_path(text, "spec-built.ptx")
    out = run_dwarfdump(llvm_dwarfdump, cubin, "--debug-info", "--debug-pubnames")
    assert "DW_OP_regx 0x257231" in out
    assert '"_Z4testPi"' in out


@pytest.mark.parametrize("style", ["nvcc", "readable", "compact"])
def test_spec_fixture_parses_to_the_guide_bytes(style: str) -> None:
    from conftest import FIXTURES

    text = (FIXTURES / "spec" / "example.ptx").read_text()
    rewritten = ptxdwarf.rewrite(text, style=style)
    images = ptxdwarf.ptx.parse_ptx(rewritten).images()
    assert list(images[".debug_info"].data) == SPEC_INFO
    assert list(images[".debug_abbrev"].data) == SPEC_ABBREV
    assert list(images[".debug_pubnames"].data) == SPEC_PUBNAMES


def test_spec_example_reads_back() -> None:
    info, _ = build_spec_tree()
    images = ptxdwarf.dwarf.encode_sections(info)
    text = ".version 7.0\n.target sm_75, debug\n.address_size 64\n" + ptxdwarf.ptx.writer.format_sections(
        images.values()
    )
    back = ptxdwarf.read(text=text)
    names = [(d.tag_str, d.name) for d in back.iter_dies()]
    assert names == [
        ("DW_TAG_compile_unit", "call1.cu"),
        ("DW_TAG_subprogram", "_Z3fooii"),
        ("DW_TAG_formal_parameter", "i"),
        ("DW_TAG_formal_parameter", "j"),
        ("DW_TAG_base_type", "int"),
        ("DW_TAG_subprogram", "_Z4testPi"),
        ("DW_TAG_formal_parameter", "p"),
        ("DW_TAG_unspecified_type", "void"),
        ("DW_TAG_pointer_type", None),
    ]
    p = next(d for d in back.iter_dies() if d.name == "p")
    ops = ptxdwarf.dwarf.decode_expression(p[AT.location], 8)
    assert ops[0].symbol == Symbol("_Z4testPi_param_0")
    i = next(d for d in back.iter_dies() if d.name == "i")
    assert ptxdwarf.dwarf.decode_expression(i[AT.location], 8)[0].register == "%r1"
    i_type = i.attr(AT.type)
    assert i_type is not None and i_type.target == 0xA4
    assert back.pubnames is not None and back.pubnames[0].entries == [(69, "_Z3fooii"), (174, "_Z4testPi")]
