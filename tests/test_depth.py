"""Deep input: DIE trees nested tens of thousands of levels and DW_FORM_indirect chains go
through every entry point without RecursionError (scaling was measured by hand: lint of
100,000 levels takes about 0.5 s of CPU, as dump does)."""

from __future__ import annotations

import pytest

import ptxdwarf
import ptxdwarf.dump
import ptxdwarf.ptx
from ptxdwarf.errors import PtxDwarfError
from ptxdwarf.lint import lint

_HEAD = ".version 7.5\n.target sm_75, debug\n.address_size 64\n\n.visible .entry k()\n{\nret;\n}\n"
_ABBREV = (
    ".section .debug_abbrev\n{\n.b8 1, 0x11, 1, 3, 8, 0, 0\n.b8 2, 0x0b, 1, 0, 0\n.b8 3, 0x34, 0, 3, 0x16, 0, 0\n"
    ".b8 0\n}\n"
)


def _module(body: list[int]) -> str:
    body = [1, ord("t"), 0, *body, 0]
    lines = [".section .debug_info", "{", f".b32 {7 + len(body)}", ".b16 2", ".b32 .debug_abbrev", ".b8 8"]
    lines += [".b8 " + ", ".join(map(str, body[i : i + 64])) for i in range(0, len(body), 64)]
    return _HEAD + _ABBREV + "\n".join(lines) + "\n}\n"


def nested_blocks(depth: int) -> str:
    """``depth`` lexical blocks, each inside the one before."""
    return _module([2] * depth + [0] * depth)


def indirect_chain(levels: int) -> str:
    """A variable whose name is DW_FORM_indirect ``levels`` times, then DW_FORM_string."""
    return _module([3] + [0x16] * (levels - 1) + [8, ord("v"), 0])


def test_deep_tree_everywhere() -> None:
    text = nested_blocks(30_000)
    info = ptxdwarf.read(text=text)
    assert sum(1 for _ in info.iter_dies()) == 30_001
    assert lint(text) == []
    assert ptxdwarf.dump.dump_text(info).count("DW_TAG_lexical_block") == 30_000
    assert ptxdwarf.dump.dump_json(info)
    assert ptxdwarf.rewrite(text, style="compact")


def test_indirect_chain_within_the_limit_is_read_and_flagged() -> None:
    text = indirect_chain(64)
    info = ptxdwarf.read(text=text)
    assert [d.name for d in info.iter_dies()] == ["t", "v"]
    assert ptxdwarf.dump.dump_text(info) and ptxdwarf.dump.dump_json(info)
    again = ptxdwarf.ptx.parse_ptx(ptxdwarf.rewrite(text)).images()[".debug_info"].data
    assert again == ptxdwarf.ptx.parse_ptx(text).images()[".debug_info"].data
    assert {f.rule for f in lint(text)} == {"dwarf4-form"}
    assert lint(indirect_chain(1)) == []


@pytest.mark.parametrize("levels", [66, 3000])
def test_indirect_chain_past_the_limit_is_one_error(levels: int) -> None:
    text = indirect_chain(levels)
    for call in (
        lambda: ptxdwarf.read(text=text, filename="deep.ptx"),
        lambda: ptxdwarf.rewrite(text, filename="deep.ptx"),
    ):
        with pytest.raises(PtxDwarfError, match=r"deep\.ptx:\d+ .*DW_FORM_indirect nested more than 64 deep"):
            call()
    assert [f.rule for f in lint(text, filename="deep.ptx")] == ["structure"]


@pytest.mark.parametrize("count", [1, 127, 128, 129, 300])
def test_wide_abbreviation(count: int) -> None:
    """An abbreviation with many attributes (data1 and data2 in turn) is read by several
    compiled readers in turn past 128 attributes; every value lands on its attribute."""
    specs = [b for i in range(count) for b in (0x3A, 0x0B if i % 2 == 0 else 0x05)]
    abbrev = ".section .debug_abbrev\n{\n.b8 1, 0x11, 0, " + ", ".join(map(str, specs)) + ", 0, 0\n.b8 0\n}\n"
    values = [b for i in range(count) for b in ((i % 256,) if i % 2 == 0 else (i % 256, i // 256))]
    body = [1, *values]
    lines = [".section .debug_info", "{", f".b32 {7 + len(body)}", ".b16 2", ".b32 .debug_abbrev", ".b8 8"]
    lines += [".b8 " + ", ".join(map(str, body[i : i + 64])) for i in range(0, len(body), 64)]
    info = ptxdwarf.read(text=_HEAD + abbrev + "\n".join(lines) + "\n}\n").load_all()
    die = info.units[0].die
    assert die is not None
    assert [a.value for a in die.attributes] == [i % 256 if i % 2 == 0 else i for i in range(count)]
