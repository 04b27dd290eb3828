"""ptxdwarf.attach.attach and ptxdwarf.autodebug.attach_ptx edit the text once: the module is read once,
every edit is made at offsets of the original text."""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

import pytest
from conftest import ROOT, CubinPath

from ptxdwarf import AttachError, DebugInfoBuilder, loc
from ptxdwarf.autodebug import attach_ptx
from ptxdwarf.ptx.reader import parse_ptx

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_emit import generate_plain_ptx

attach_module = importlib.import_module("ptxdwarf.attach")


def _described(functions: int) -> tuple[str, DebugInfoBuilder]:
    ptx = generate_plain_ptx(functions)
    dbg = DebugInfoBuilder("gen.ptx", producer="test")
    u32 = dbg.named_type(".u32")
    for i in range(functions):
        f = dbg.function(f"dev{i}", line=i + 1)
        f.parameter("a", u32, line=i + 1, location=loc.register("%r0"))
        f.variable("%r4", u32, line=i + 1, location=loc.register("%r4"))
    return ptx, dbg


def test_attach_reads_the_module_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(text: str, filename: str = "<ptx>") -> Any:
        calls.append(filename)
        return parse_ptx(text, filename)

    monkeypatch.setattr(attach_module, "parse_ptx", counting)
    ptx, dbg = _described(30)
    text = attach_module.attach(ptx, dbg, filename="gen.ptx")
    assert calls == ["gen.ptx"]
    out = parse_ptx(text)
    assert len(out.functions) == 30
    for i, f in enumerate(out.functions):
        assert f"$L__ptxdwarf_end{i}" in f.labels
    assert text.startswith('.version 7.0\n.target sm_75, debug\n.address_size 64\n.file 1 "gen.ptx"\n')
    assert {".debug_abbrev", ".debug_info"} <= {b.name for b in out.sections}


def test_attach_keeps_every_other_byte() -> None:
    ptx, dbg = _described(5)
    text = attach_module.attach(ptx, dbg)
    code = text[: text.index("\n.section")] + "\n"
    code = code.replace(", debug", "").replace('.file 1 "gen.ptx"\n', "")
    assert re.sub(r"\$L__ptxdwarf_end\d+:\n", "", code) == ptx


def test_attach_ptx_numbers_lines_of_a_large_module() -> None:
    """Every .loc names the line of the output it stands before (+1, the instruction)."""
    result = attach_ptx(generate_plain_ptx(300), output_name="big.ptx")
    lines = result.text.split("\n")
    locs = [(i, line) for i, line in enumerate(lines) if line.startswith("\t.loc")]
    assert len(locs) == 300 * 6
    for i, line in locs:
        target = int(line.split()[2])
        assert target - 1 > i and not lines[target - 1].startswith(("\t.loc", "$L"))
        assert lines[target - 1].strip().endswith(";")


def test_attach_ptx_reads_the_module_once(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = importlib.import_module("ptxdwarf.autodebug.entry")
    calls: list[str] = []

    def counting(text: str, filename: str = "<ptx>") -> Any:
        calls.append(filename)
        return parse_ptx(text, filename)

    monkeypatch.setattr(entry, "parse_ptx", counting)
    result = attach_ptx(generate_plain_ptx(20), output_name="gen.debug.ptx", filename="gen.ptx")
    assert calls == ["gen.ptx"]
    out = parse_ptx(result.text)
    assert [sorted(f.labels) for f in out.functions] == [
        [f"$L__ptxdwarf_begin{i}", f"$L__ptxdwarf_end{i}"] for i in range(20)
    ]
    calls.clear()
    long_names = generate_plain_ptx(3).replace("%r", "%a_long_register")
    result = attach_ptx(long_names, output_name="gen.debug.ptx", filename="gen.ptx", rename_registers=True)
    assert calls == ["gen.ptx"]
    assert result.renamed == {f"%a_long_register{i}": f"%Ra{i}" for i in range(5)}
    assert "%a_long_register" not in result.text and result.text.count("%Ra") > 3 * 5
    # the parameters are described by the registers they are loaded into, under their new names
    assert result.warnings == []
    plain = attach_ptx(long_names, output_name="gen.debug.ptx")
    assert sum("described without a location" in w for w in plain.warnings) == 3


_TWO = """.version 7.0
.target sm_75
.address_size 64

.visible .entry a(.param .u64 a_p)
{
\t.reg .b32 %r<2>;
$A:
\tret;
}

.visible .func b(.param .b32 b_p)
{
\tret;
}
"""


def _two_functions(begin: str = "$a_begin", end: str = "$a_end") -> DebugInfoBuilder:
    dbg = DebugInfoBuilder("two.ptx", producer="test")
    u64 = dbg.named_type(".u64")
    f = dbg.function("a", kernel=True, line=5, low_pc=begin, high_pc=end)
    f.parameter("a_p", u64, line=5, location=loc.param("a_p"))
    return dbg


def test_check_symbols_counts_planned_labels_in_their_function() -> None:
    module = parse_ptx(_TWO, "two.ptx")
    a, b = module.functions
    check = attach_module.check_symbols
    check(module, _two_functions(), {"$a_begin": a, "$a_end": a})
    check(module, _two_functions("$A", "$a_end"), {"$a_end": a})
    with pytest.raises(AttachError, match=r"label \$a_end of function a is not defined in that function"):
        check(module, _two_functions(), {"$a_begin": a, "$a_end": b})
    with pytest.raises(AttachError, match=r"label \$a_begin of function a is not defined"):
        check(module, _two_functions(), {"$a_end": a})
    with pytest.raises(AttachError, match=r"label \$A of function a is not defined in that function"):
        check(module, _two_functions("$A", "$a_end"), {"$A": b, "$a_end": a})


def test_check_symbols_refuses_an_undeclared_symbol() -> None:
    module = parse_ptx(_TWO, "two.ptx")
    a = module.functions[0]
    planned = {"$a_begin": a, "$a_end": a}
    dbg = _two_functions()
    dbg.functions[0].variable("x", dbg.named_type(".u32"), line=6, location=loc.param("b_q"))
    with pytest.raises(AttachError, match="symbol b_q named by the debug info is not declared"):
        attach_module.check_symbols(module, dbg, planned)
    dbg = _two_functions()
    dbg.functions[0].variable("x", dbg.named_type(".u32"), line=6, location=loc.param("b_p"))
    attach_module.check_symbols(module, dbg, planned)


def test_check_symbols_refuses_a_function_without_body() -> None:
    module = parse_ptx(_TWO.replace("(.param .b32 b_p)\n{\n\tret;\n}\n", "(.param .b32 b_p)\n"), "two.ptx")
    dbg = DebugInfoBuilder("two.ptx", producer="test")
    dbg.function("b", line=12)
    with pytest.raises(AttachError, match=r"function b \(b\) has no body in the module"):
        attach_module.check_symbols(module, dbg)
    with pytest.raises(AttachError, match=r"two\.ptx: function b \(b\) has no body"):
        attach_module.attach(module.text, dbg, filename="two.ptx")


_SCOPED = _TWO.replace("\t.reg .b32 %r<2>;\n", "\t.reg .b32 %r<2>;\n\t.global .b32 g[2] = {1, 2};\n")


def test_both_attach_paths_refuse_an_initialized_global_in_a_body(cubin_path: CubinPath) -> None:
    """ptxas -g dies on it (quirk scoped-initializer): attach never writes such a module."""
    import ptxdwarf

    with pytest.raises(
        AttachError, match=r"two\.ptx:8: \.global g has an initializer inside a: ptxas -g crashes"
    ):
        attach_ptx(_SCOPED, output_name="two.ptx", filename="two.ptx")
    dbg = DebugInfoBuilder("two.ptx", producer="test")
    dbg.kernel("a", line=5)
    with pytest.raises(AttachError, match=r"two\.ptx:8: \.global g has an initializer inside a"):
        ptxdwarf.attach.attach(_SCOPED, dbg, filename="two.ptx")
    # without the initializer both attach, and ptxas -g compiles the result
    plain = _SCOPED.replace(" = {1, 2}", "")
    cubin_path(attach_ptx(plain, output_name="two.ptx", filename="two.ptx").text, "two.ptx")


def test_attach_refuses_a_func_returning_two_values() -> None:
    """ptxas -g: 'Function with multiple return values is not allowed with ABI' (quirk multiple-returns)."""
    text = _TWO.replace(
        ".visible .func b(.param .b32 b_p)", ".func (.reg .u32 r, .reg .pred q) b(.param .b32 b_p)"
    )
    with pytest.raises(AttachError, match=r"two\.ptx:12: \.func b returns 2 values: ptxas -g refuses it"):
        attach_ptx(text, output_name="two.ptx", filename="two.ptx")
