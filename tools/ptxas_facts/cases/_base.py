"""What every group of cases shares: the case list and the module shapes cases vary."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ptxdwarf.dwarf.model import DebugInfo

from .. import harness as h
from ..case import Case
from ..harness import ABBREV, Run, b8, die, info, module, section, subprogram

__all__ = [
    "CASES",
    "ZERO8",
    "case",
    "custom_abbrev",
    "depot_pair",
    "in_str",
    "info_case",
    "reencoded",
    "value_in_info",
    "with_info",
]

CASES: list[Case] = []

ZERO8 = bytes(8)


def case(
    id: str,
    fact: str,
    expected: str,
    ptx: Callable[[], str | bytes],
    check: Callable[[Run], tuple[bool, str]],
    **kw: Any,
) -> None:
    CASES.append(Case(id, fact, expected, ptx, check, **kw))


def reencoded(fixture: str, edit: Callable[[DebugInfo], None]) -> str:
    """The fixture ``fixture`` (one block per debug section) with its DWARF decoded, changed by
    ``edit`` and encoded again (abbreviations derived anew); the rest of the text kept."""
    from ptxdwarf.dwarf.decode import decode_sections
    from ptxdwarf.dwarf.encode import EncodeOptions, encode_sections
    from ptxdwarf.ptx import parse_ptx
    from ptxdwarf.ptx.writer import format_section

    module = parse_ptx(h.fixture(fixture).decode(), "x.ptx")
    info = decode_sections(module.images(debug_only=True), source="ptx").load_all()
    edit(info)
    images = encode_sections(info, EncodeOptions(keep_abbrevs=False))
    text = module.text
    for block in sorted(module.sections, key=lambda b: -b.start):
        if block.name in images:
            text = (
                text[: block.start]
                + format_section(images[block.name], "nvcc").rstrip("\n")
                + text[block.end :]
            )
    return text


def with_info(*sections: str, **kw: Any) -> str:
    """A module with the abbrev table, an empty CU and ``sections``."""
    return module(ABBREV, info()[0], *sections, **kw)


def in_str(body: str, **kw: Any) -> Callable[[], str]:
    """A module whose ``.debug_str`` is ``body`` (the value under test is at offset 0)."""
    return lambda: with_info(section(".debug_str", body), **kw)


def value_in_info(directive_text: str, code: int = h.VAR_DATA8, *extra: str, **kw: Any) -> tuple[str, int]:
    """A module with one CU-level DIE ``code`` holding ``directive_text`` (mark ``v``), and its offset."""
    text, marks = info(die(code, "v:" + directive_text), **kw)
    return module(ABBREV, text, *extra), marks["v"]


def info_case(
    id: str,
    fact: str,
    expected: str,
    directive_text: str,
    make_check: Callable[[int], Callable[[Run], tuple[bool, str]]],
    code: int = h.VAR_DATA8,
    *extra: str,
) -> None:
    ptx, offset = value_in_info(directive_text, code, *extra)
    case(id, fact, expected, lambda: ptx, make_check(offset))


def custom_abbrev(
    rows: list[tuple[int, int, int, list[tuple[int, int]]]],
    *dies: h.Die,
    version: int = 2,
    address_size: int = 8,
) -> str:
    """A module with the abbreviation table ``rows`` and one CU holding ``dies``."""
    text, _ = info(*dies, version=version, address_size=address_size)
    return module(h.abbrev_table(rows), text)


def depot_pair() -> tuple[str, int, int]:
    """A module whose kernel subprogram has DW_OP_addr __local_depot1 and __local_depot1+8
    variables, and the offsets of the two symbols."""
    text, marks = info(
        subprogram(h.depot_var(), die(h.VAR_BLOCK, b8(11, 0x03), "d8:.b64 __local_depot1+8", b8(0x23, 0)))
    )
    return module(ABBREV, text), marks["depot"], marks["d8"]
