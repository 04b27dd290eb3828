"""The lookups of :mod:`ptxdwarf.testing`'s queries, against llvm-dwarfdump's reading of the
same cubins (names, abbreviation shapes, member offsets, locations, address classes) and
against the sources of the fixtures (function names)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import FIXTURES, run_dwarfdump

from ptxdwarf import DIE, Attribute, DebugInfo, Unit
from ptxdwarf.dwarf import AddressClass
from ptxdwarf.dwarf.constants import AT, FORM
from ptxdwarf.testing import PtxCompiler, QueryDIE, query

NUMBA_13_5 = FIXTURES / "corpus" / "numba-nvvm-13.5"
CUBINS = [
    FIXTURES / "clang" / "rich.O0.sm_75.ptx",
    NUMBA_13_5 / "axpy.debug.ptx",
    NUMBA_13_5 / "tuples.debug.ptx",
    FIXTURES / "nvcc" / "rich.sm_75.ptx",
]

_ENTRY = re.compile(r"^0x([0-9a-f]+):\s+(DW_TAG_\w+)", re.M)
#: An attribute's line (a location list's value goes on over the next lines).
_ATTRIBUTE = re.compile(r"^\s+(DW_AT_\w+)\s+\[(DW_FORM_\w+)\]\s+\((.*?)\)?$", re.M)


def dwarfdump_dies(text: str) -> dict[int, tuple[str, list[tuple[str, str, str]]]]:
    """Offset -> (tag, [(attribute, form, value as printed)]) of every DIE of
    ``llvm-dwarfdump --debug-info --show-form``."""
    found = {}
    starts = list(_ENTRY.finditer(text))
    for m, after in zip(starts, [*starts[1:], None], strict=True):
        body = text[m.end() : after.start() if after else len(text)]
        found[int(m.group(1), 16)] = (m.group(2), _ATTRIBUTE.findall(body))
    return found


def _first_offset(printed: str) -> int | None:
    """The first offset operand llvm-dwarfdump prints in an expression."""
    m = re.search(r"DW_OP_(?:fbreg|breg\d+|bregx \S+|plus_uconst) (-?(?:0x[0-9a-f]+|\d+))", printed)
    return int(m.group(1), 0) if m else None


@pytest.mark.parametrize("path", CUBINS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_lookups_agree_with_llvm_dwarfdump(
    path: Path, ptxdwarf_compile: PtxCompiler, llvm_dwarfdump: str, tmp_path: Path
) -> None:
    cubin = ptxdwarf_compile(path.read_text())
    (tmp_path / "k.cubin").write_bytes(cubin.data)
    dumped = dwarfdump_dies(
        run_dwarfdump(llvm_dwarfdump, tmp_path / "k.cubin", "--debug-info", "--show-form")
    )
    q = cubin.debug_info()
    everything = {d.die.offset: d for d in q.find_all()}
    assert set(everything) == {o for o, (tag, _) in dumped.items() if tag != "DW_TAG_null"}
    checked = {"member": 0, "location": 0}
    for offset, (tag, attributes) in dumped.items():
        if tag == "DW_TAG_null":
            continue
        d = everything[offset]
        assert d.tag == tag
        assert d.shape == tuple((a, f) for a, f, _ in attributes)
        printed = {a: v for a, _, v in attributes}
        if "DW_AT_name" in printed:
            assert printed["DW_AT_name"] == f'"{d.name}"'
        if "DW_AT_address_class" in printed:
            assert d.address_class == int(printed["DW_AT_address_class"], 16)
        if tag == "DW_TAG_member" and "DW_AT_data_member_location" in printed:
            value = printed["DW_AT_data_member_location"]
            assert d.member_offset == (_first_offset(value) if "DW_OP" in value else int(value, 0))
            checked["member"] += 1
        if printed.get("DW_AT_location", "").startswith("DW_OP"):
            loc = d.location
            value = printed["DW_AT_location"]
            assert loc.offset == _first_offset(value)
            m = re.match(r"DW_OP_addr (0x[0-9a-f]+)", value)
            if (
                loc.attribute is not None and not loc.attribute.relocs
            ):  # llvm-dwarfdump applies no CUDA relocation
                assert loc.address == (int(m.group(1), 16) if m else None)
            checked["location"] += 1
    assert all(checked.values()), checked


def test_members_offsets_and_lists_on_clang_output(ptxdwarf_compile: PtxCompiler) -> None:
    """fixtures/src/rich.cu: struct Rect { Point lo; Point hi; Color color; } of two floats each."""
    q = ptxdwarf_compile((FIXTURES / "clang" / "rich.O0.sm_75.ptx").read_text()).debug_info()
    rect = q.one("structure_type", "Rect")
    assert [m.name for m in rect.members] == ["lo", "hi", "color"]
    assert rect.member("hi").type is not None and rect.member("hi").type.name == "Point"  # type: ignore[union-attr]
    q.none("structure_type", "NoSuchStruct")
    with pytest.raises(AssertionError, match=r"expected exactly one DW_TAG_member 'lo' in .*, found 2"):
        q.one("member", "lo")  # Rect's and the union's anonymous struct's
    with pytest.raises(AssertionError, match=r"expected no DW_TAG_structure_type 'Rect' in .*found 1"):
        q.none("structure_type", "Rect")
    assert q.unit.tag == "DW_TAG_compile_unit" and q.unit.name is not None and q.unit.name.endswith("rich.cu")
    area = q.function(re.compile(r"rect_area"))
    assert [p.name for p in area.parameters] == ["r"]


def test_numba_names_by_pattern_and_one_module_per_kernel(ptxdwarf_compile: PtxCompiler) -> None:
    """numba names a subprogram by the Python function's qualified name; the six kernels of
    make_numba.py, one PTX each, queried as one set."""
    kernels = ["axpy", "loops", "shared_local", "tuples", "atomics", "clip_copy"]
    cubins = [ptxdwarf_compile((NUMBA_13_5 / f"{k}.debug.ptx").read_text()) for k in kernels]
    q = query(c.debug_info().info for c in cubins)
    assert len(q.units) == 6
    with pytest.raises(AssertionError, match="exactly one unit in 6 modules, found 6"):
        _ = q.unit
    for kernel in kernels:
        f = q.one("subprogram", re.compile(rf"\b{kernel}$"))
        assert f.info is q.infos[kernels.index(kernel)]
    axpy = q.function(re.compile(r"\baxpy$"))
    assert [p.name for p in axpy.parameters] == ["out", "a", "x"]
    a = axpy.parameter("a")
    assert a.address_class is AddressClass.PARAM and a.location.address is not None
    assert a.location.address_class is AddressClass.PARAM
    assert "i" in {v.name for v in axpy.variables}


def _die(tag: str, *attributes: tuple[int, int, object], children: list[DIE] | None = None) -> DIE:
    return DIE(tag, [Attribute(a, f, v) for a, f, v in attributes], children or [])


def test_members_through_variant_parts() -> None:
    """A Rust enum's layout: the discriminant and each variant's members inside
    DW_TAG_variant_part / DW_TAG_variant."""
    some = _die(
        "variant",
        children=[_die("member", (AT.name, FORM.string, "value"), (AT.data_member_location, FORM.data1, 8))],
    )
    part = _die(
        "variant_part",
        children=[
            _die("member", (AT.name, FORM.string, "tag"), (AT.data_member_location, FORM.data1, 0)),
            some,
        ],
    )
    enum = _die("structure_type", (AT.name, FORM.string, "Option"), children=[part])
    info = DebugInfo(
        units=[Unit(die=_die("compile_unit", (AT.name, FORM.string, "lib.rs"), children=[enum]))]
    )
    q = query(info)
    option: QueryDIE = q.type("Option")
    assert [(m.name, m.member_offset) for m in option.members] == [("tag", 0), ("value", 8)]
    assert option.member("value").member_offset == 8
    assert len(q.find_all("member")) == 2 and q.unit.name == "lib.rs"
