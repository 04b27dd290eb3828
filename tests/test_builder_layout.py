"""The builder's types against nvcc: the 61 definitions of ``fixtures/layout``.

Every case of ``cases.py`` (the source, no numbers from nvcc) is built with
``DebugInfoBuilder``, attached to a small module, compiled with ptxas, and read
back from the cubin with pyelftools. Sizes, member offsets, bit sizes and bit
offsets must equal ``expected.json``, which holds what nvcc -G wrote.
"""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

from conftest import CubinPath
from elftools.elf.elffile import ELFFile

import ptxdwarf
from ptxdwarf import DebugInfoBuilder, Type

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "layout"
ALL_SPACES = (
    Path(__file__).resolve().parent.parent / "fixtures" / "handwritten" / "all_spaces.ptx"
).read_text()


def _cases() -> Any:
    spec = importlib.util.spec_from_file_location("ptxdwarf_layout_cases_b", FIXTURE / "cases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = _cases()
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())["cases"]
BY_NAME = {c["name"]: c for c in CASES.CASES}


class Types:
    """cases.py spellings to builder types."""

    def __init__(self, dbg: DebugInfoBuilder) -> None:
        self.dbg = dbg
        self.made: dict[str, Type] = {}

    def get(self, spelling: str | dict[str, Any]) -> Type:
        dbg = self.dbg
        if isinstance(spelling, dict):
            return self.aggregate(None, spelling)
        if spelling in self.made:
            return self.made[spelling]
        if spelling.endswith("*"):
            target = spelling[:-1].strip()
            pointee = (
                dbg.unspecified_type("void")
                if target in ("void", "const void")
                else self.get(target.replace("const ", ""))
            )
            t = dbg.pointer_type(pointee, address_class=12)
        elif spelling in CASES.TYPEDEFS:
            t = dbg.typedef(spelling, self.get(CASES.TYPEDEFS[spelling]))
        elif spelling.startswith("enum "):
            e = CASES.ENUMS[spelling[5:]]
            t = dbg.enum_type(spelling[5:], e["enumerators"], underlying=self.get(e["underlying"]))
        elif spelling.startswith(("struct ", "union ")):
            t = self.aggregate(spelling.split(" ", 1)[1], BY_NAME[spelling.split(" ", 1)[1]])
        elif spelling in CASES.CUDA_TYPES:
            t = self.cuda(spelling)
        else:
            t = dbg.named_type(spelling)
        self.made[spelling] = t
        return t

    def cuda(self, name: str) -> Type:
        entry = CASES.CUDA_TYPES[name]
        dbg = self.dbg
        if entry["kind"] == "scalar":
            members = [(n, self.get(t)) for n, t in entry["header_members"]]
            return dbg.struct_type(name, members, align=entry["header_align"])
        element = self.get(entry["elem"])
        if entry["native"]:
            return dbg.vector_type(element, entry["count"], name=name)
        members = [("xyzw"[i], element) for i in range(entry["count"])]
        return dbg.struct_type(name, members, align=entry["header_align"])

    def aggregate(self, name: str | None, case: dict[str, Any]) -> Type:
        members = []
        for m in case["members"]:
            t = self.get(m["type"])
            if m.get("dims"):
                t = self.dbg.array_type(t, m["dims"])
            members.append(ptxdwarf.Member(m["name"], t, m.get("bits"), align=m.get("align")))
        if case["kind"] == "union":
            return self.dbg.union_type(name, members, align=case.get("align"))
        return self.dbg.struct_type(name, members, align=case.get("align"))


def _location(die: Any) -> int | None:
    attr = die.attributes.get("DW_AT_data_member_location")
    if attr is None:
        return None
    if isinstance(attr.value, list):  # block: DW_OP_plus_uconst ULEB
        raw = bytes(attr.value)
        assert raw[0] == 0x23
        value, shift = 0, 0
        for byte in raw[1:]:
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        return value
    return int(attr.value)


def test_builder_types_equal_nvcc_layout(cubin_path: CubinPath) -> None:
    dbg = DebugInfoBuilder(name="types.cu", pubnames=False, aranges=False)
    types = Types(dbg)
    for case in CASES.CASES:
        types.get(("union " if case["kind"] == "union" else "struct ") + case["name"])
    text = ptxdwarf.attach.attach(ALL_SPACES, dbg, filename="types.ptx")
    cubin = cubin_path(text, "types.ptx")
    with open(cubin, "rb") as f:
        dwarf = ELFFile(io.BytesIO(f.read())).get_dwarf_info(relocate_dwarf_sections=False)
    found: dict[str, Any] = {}
    for cu in dwarf.iter_CUs():
        for die in cu.iter_DIEs():
            if die.tag in ("DW_TAG_structure_type", "DW_TAG_union_type") and "DW_AT_name" in die.attributes:
                found.setdefault(die.attributes["DW_AT_name"].value.decode(), die)
    compared = 0
    for name, exp in EXPECTED.items():
        die = found[exp.get("dwarf_name", name)]
        assert die.attributes["DW_AT_byte_size"].value == exp["byte_size"], name
        members = [c for c in die.iter_children() if c.tag == "DW_TAG_member"]
        assert len(members) == len(exp["members"]), name
        for got, want in zip(members, exp["members"], strict=False):
            where = f"{name}.{want['name']}"
            assert _location(got) == want["data_member_location"], where
            if "bit_size" in want:
                assert got.attributes["DW_AT_bit_size"].value == want["bit_size"], where
                assert got.attributes["DW_AT_bit_offset"].value == want["bit_offset"], where
                assert got.attributes["DW_AT_byte_size"].value == want["byte_size"], where
            else:
                assert "DW_AT_bit_size" not in got.attributes, where
            compared += 1
    assert len(EXPECTED) >= 25 and compared > 200
