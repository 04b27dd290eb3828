"""The committed DWARF code tables equal what their generator makes of pyelftools' tables."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from ptxdwarf.dwarf import AT, FORM, OP, TAG
from ptxdwarf.dwarf.constants import at_name, op_name, tag_name

GENERATOR = Path(__file__).resolve().parent.parent / "tools" / "gen_dwarf_codes.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_dwarf_codes", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_tables_match_the_generator() -> None:
    gen = _generator()
    assert gen.TARGET.read_text() == gen.render(), "run python tools/gen_dwarf_codes.py"


def test_codes_are_the_standard_numbers() -> None:
    # Numbers from the DWARF 4 standard, section 7, not from pyelftools.
    assert (TAG.compile_unit, TAG.subprogram, TAG.formal_parameter) == (0x11, 0x2E, 0x05)
    assert (AT.name, AT.location, AT.address_class, AT.linkage_name) == (0x03, 0x02, 0x33, 0x6E)
    assert (FORM.data4, FORM.strp, FORM.exprloc, FORM.ref4) == (0x06, 0x0E, 0x18, 0x13)
    assert (OP.addr, OP.regx, OP["and"], OP.plus_uconst) == (0x03, 0x90, 0x1A, 0x23)
    assert tag_name(0x2F) == "DW_TAG_template_type_parameter"
    assert at_name(0x3FF0) == "DW_AT_0x3ff0" and op_name(0xE5) == "DW_OP_0xe5"
