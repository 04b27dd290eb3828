"""Every real producer's PTX: our reading of the PTX equals llvm-dwarfdump's reading of the cubin.

For each fixture, ``ptxdwarf dump --json`` of the PTX and ``llvm-dwarfdump
--debug-info`` of the cubin ``ptxas -g`` makes from it must give the same DIE
tree: offsets, nesting, tags, names, address classes and declaration lines
(ptxas keeps ``.debug_info`` bytes and offsets as they were written).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import GOOD_FIXTURES, CubinPath, fixture_id, run_dwarfdump

from ptxdwarf.cli import main

_DIE = re.compile(r"^0x([0-9a-f]{8}):( *)(DW_TAG_\w+|NULL)")
_ATTR = re.compile(r"^\s+(DW_AT_\w+)\s+\((.*)\)$")

# The attributes compared, and how to read llvm-dwarfdump's rendering of each.
_COMPARED = ("DW_AT_name", "DW_AT_address_class", "DW_AT_decl_line")


def _llvm_value(name: str, text: str) -> Any:
    if name == "DW_AT_name":
        m = re.match(r'^"(.*)"$', text)
        return m.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape") if m else text
    m = re.match(r"^(0x[0-9a-f]+|\d+)", text)
    return int(m.group(1), 0) if m else text


def parse_llvm_dwarfdump(text: str) -> list[tuple[int, int, str, dict[str, Any]]]:
    """(offset, depth, tag, compared attributes) of every DIE llvm-dwarfdump printed."""
    dies: list[tuple[int, int, str, dict[str, Any]]] = []
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        m = _DIE.match(line)
        if m is not None:
            if m.group(3) == "NULL":
                current = None
                continue
            current = {}
            dies.append((int(m.group(1), 16), len(m.group(2)) // 2, m.group(3), current))
            continue
        m = _ATTR.match(line)
        if m is not None and current is not None and m.group(1) in _COMPARED:
            current[m.group(1)] = _llvm_value(m.group(1), m.group(2))
    return dies


def _walk_json(die: dict[str, Any], depth: int = 0) -> Iterator[tuple[int, int, str, dict[str, Any]]]:
    stack = [(die, depth)]
    while stack:
        node, d = stack.pop()
        attrs = {a["name"]: a["value"] for a in node["attributes"] if a["name"] in _COMPARED}
        yield node["offset"], d, node["tag"], attrs
        stack.extend((child, d + 1) for child in reversed(node["children"]))


def dump_json(path: Path) -> dict[str, Any]:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["dump", "--json", str(path)]) == 0
    return cast(dict[str, Any], json.loads(out.getvalue()))


@pytest.mark.parametrize("path", GOOD_FIXTURES, ids=fixture_id)
def test_dump_json_equals_llvm_dwarfdump_of_cubin(
    path: Path, cubin_path: CubinPath, llvm_dwarfdump: str
) -> None:
    doc = dump_json(path)
    assert doc["format"] == "ptxdwarf-dump/1"
    assert doc["source"] == "ptx"
    ours = [entry for unit in doc["units"] for entry in _walk_json(unit["die"])]
    cubin = cubin_path(path.read_text(), path.name)
    theirs = parse_llvm_dwarfdump(run_dwarfdump(llvm_dwarfdump, cubin, "--debug-info"))
    if not ours:
        # Line-info-only and DWARF-less modules: the cubin must have no DIEs either.
        assert theirs == []
        return
    assert len(ours) == len(theirs)
    for mine, other in zip(ours, theirs, strict=False):
        assert mine == other, f"{path.name}: DIE at 0x{mine[0]:x}"


@pytest.mark.parametrize("path", GOOD_FIXTURES, ids=fixture_id)
def test_cubin_dump_equals_ptx_dump(path: Path, cubin_path: CubinPath) -> None:
    """``dump`` of the cubin gives the same tree as the PTX it came from."""
    ptx_doc = dump_json(path)
    cubin = cubin_path(path.read_text(), path.name)
    cubin_doc = dump_json(cubin)
    assert cubin_doc["source"] == "cubin"
    ptx_dies = [e for u in ptx_doc["units"] for e in _walk_json(u["die"])]
    cubin_dies = [e for u in cubin_doc["units"] for e in _walk_json(u["die"])]
    assert ptx_dies == cubin_dies


def test_fixture_coverage() -> None:
    """The fixtures cover what the foundation issue asks for, from three producers."""
    producers = {p.parent.name for p in GOOD_FIXTURES}
    assert {"nvcc", "clang", "numba"} <= producers
    seen_tags: set[str] = set()
    seen_classes: set[int] = set()
    sections: set[str] = set()
    for path in GOOD_FIXTURES:
        doc = dump_json(path)
        for unit in doc["units"]:
            for _off, _depth, tag, attrs in _walk_json(unit["die"]):
                seen_tags.add(tag)
                if "DW_AT_address_class" in attrs:
                    seen_classes.add(attrs["DW_AT_address_class"])
        sections.update(k for k in ("locations", "pubnames", "strings") if doc.get(k))
        if '"DW_AT_bit_size"' in json.dumps(doc):
            sections.add("bit fields")
    for tag in (
        "DW_TAG_structure_type",
        "DW_TAG_union_type",
        "DW_TAG_enumeration_type",
        "DW_TAG_member",
        "DW_TAG_lexical_block",
        "DW_TAG_variable",
        "DW_TAG_template_type_parameter",
    ):
        assert tag in seen_tags
    # shared 8, constant 4, global 5, local 6, param 7, register 2, generic 12
    assert {2, 4, 5, 6, 7, 8, 12} <= seen_classes
    assert {"locations", "bit fields"} <= sections
