"""A function's first label, after code and before any branch, in a function with line
information: ptxas -g places it at the function's start (quirk first-label-at-zero, cases ``first-label-at-zero.*``). lint warns,
check reports it, attach anchors it with a label at the top of the body."""

from __future__ import annotations

import pytest

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.ptx
from ptxdwarf import DebugInfoBuilder
from ptxdwarf.check import check
from ptxdwarf.cuda.ptxas import Ptxas
from ptxdwarf.ptx.placement import first_instruction, first_label_at_zero
from ptxdwarf.ptx.reader import parse_ptx
from ptxdwarf.testing import compile_ptx

KERNEL = """\
.version 7.5
.target sm_75
.address_size 64

.visible .entry _Z1kPii(.param .u64 _Z1kPii_param_0, .param .u32 _Z1kPii_param_1)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<3>;
	.loc 1 1 0
	ld.param.u64 %rd1, [_Z1kPii_param_0];
	ld.param.u32 %r1, [_Z1kPii_param_1];
	mov.u32 %r2, %tid.x;  // $L__not_a_label:
	cvta.to.global.u64 %rd2, %rd1;
$L__block_begin:
	setp.ge.s32 %p1, %r2, %r1;
	@%p1 bra $L__done;
	st.global.u32 [%rd2], %r2;
$L__done:
$L__block_end:
	ret;
}
"""


def _placement(text: str) -> str | None:
    module = parse_ptx(text, "k.ptx")
    return first_label_at_zero(module.masked, module.function("_Z1kPii"))  # type: ignore[arg-type]  # KERNEL defines _Z1kPii


@pytest.mark.parametrize(
    "edit, expected",
    [
        ((), "$L__block_begin"),
        (("\t.loc 1 1 0\n", ""), None),  # no line information: ptxas places it right
        (("\tld.param.u64", "$L__top:\n\tld.param.u64"), None),  # a label at the top comes first
        (
            (
                "$L__block_begin:\n\tsetp.ge.s32 %p1, %r2, %r1;\n\t@%p1 bra",
                "\tsetp.ge.s32 %p1, %r2, %r1;\n\t@%p1 bra",
            ),
            None,
        ),
        (("\tcvta.to", "\tbra.uni $L__next;\n$L__next:\n\tcvta.to"), None),  # after a branch
        (("$L__done:\n$L__block_end:\n\tret;\n", "\tret;\n$L__done:\n$L__block_end:\n"), "$L__block_begin"),
    ],
)
def test_which_label_ptxas_places_at_zero(edit: tuple[str, str], expected: str | None) -> None:
    text = KERNEL.replace(*edit) if edit else KERNEL
    assert _placement(text) == expected


def test_first_instruction() -> None:
    module = parse_ptx(KERNEL, "k.ptx")
    at = first_instruction(module.masked, module.function("_Z1kPii"))  # type: ignore[arg-type]  # KERNEL defines _Z1kPii
    assert at is not None and KERNEL[at:].startswith("ld.param.u64 %rd1")


def _described() -> DebugInfoBuilder:
    dbg = DebugInfoBuilder(name="k.cu", comp_dir="/tmp")
    k = dbg.function("k", linkage_name="_Z1kPii", kernel=True, line=1)
    k.lexical_block(low_pc="$L__block_begin", high_pc="$L__block_end")
    return dbg


def _block_low_pc(cubin: bytes) -> tuple[str, int]:
    info = ptxdwarf.cuda.read_cubin(cubin).load_all()
    (block,) = [d for d in info.iter_dies() if d.tag_str == "DW_TAG_lexical_block"]
    low = block.attr("DW_AT_low_pc")
    assert low is not None and low.relocs
    return low.relocs[0].symbol.name, low.relocs[0].symbol.addend


def test_attach_anchors_the_first_label(ptxas_tool: Ptxas) -> None:
    out = ptxdwarf.attach.attach(KERNEL, _described(), filename="k.ptx")
    assert "$L__ptxdwarf_top0: ld.param.u64 %rd1" in out
    assert not [f for f in ptxdwarf.lint.lint(out) if f.rule == "first-label-at-zero"]
    symbol, addend = _block_low_pc(compile_ptx(out, ptxas=ptxas_tool).data)
    assert symbol == "_Z1kPii" and addend > 0
    assert check(out, filename="k.ptx", ptxas=ptxas_tool).consistent


def test_attach_anchors_the_first_label_when_it_writes_the_lines(ptxas_tool: Ptxas) -> None:
    """A module without .loc gets its line information from attach (``lines=``): the .loc
    lines attach writes are what make ptxas move the first label, so it anchors it too."""
    text = _NO_LOC
    lines = {
        n: ("k.cu", 10 + n)
        for n, line in enumerate(text.split("\n"), 1)
        if line.startswith("\t") and not line.strip().startswith((".", "{", "}"))
    }
    out = ptxdwarf.attach.attach(text, _described(), filename="k.ptx", lines=lines)
    assert "$L__ptxdwarf_top0: " in out
    symbol, addend = _block_low_pc(compile_ptx(out, ptxas=ptxas_tool).data)
    assert symbol == "_Z1kPii" and addend > 0
    assert check(out, filename="k.ptx", ptxas=ptxas_tool).consistent
    assert not [f for f in ptxdwarf.lint.lint(out) if f.rule == "first-label-at-zero"]


def test_lint_and_check_report_the_label_ptxas_moves(ptxas_tool: Ptxas) -> None:
    """The same module with the anchor taken out: ptxas places $L__block_begin at offset 0."""
    out = ptxdwarf.attach.attach(KERNEL, _described(), filename="k.ptx").replace("$L__ptxdwarf_top0: ", "")
    (finding,) = [f for f in ptxdwarf.lint.lint(out) if f.rule == "first-label-at-zero"]
    assert "$L__block_begin" in finding.message and finding.severity == "warning"
    assert _block_low_pc(compile_ptx(out, ptxas=ptxas_tool).data) == ("_Z1kPii", 0)
    report = check(out, filename="k.ptx", ptxas=ptxas_tool)
    assert [(d.ptx, d.cubin) for d in report.differences] == [("$L__block_begin", "_Z1kPii (= 0x0)")]
    assert "first-label-at-zero" in report.differences[0].message


_NO_LOC = KERNEL.replace("\t.loc 1 1 0\n", "")


@pytest.mark.parametrize(
    "edit, expected",
    [
        ((), None),  # no .loc in the function: ptxas places every label right
        (("\tld.param.u64 %rd1", "\t.loc 1 1 0\n\tld.param.u64 %rd1"), "first-label-at-zero"),
        (("$L__block_begin:", "$L__block_begin:\n\t.loc 1 2 0"), "first-label-at-zero"),
        (("\tst.global", "\t.loc 1 3 0\n\tst.global"), "label-at-line-zero"),  # no line yet: dropped
        (("\tret;", "\t.loc 1 3 0\n\tret;"), "label-at-line-zero"),
    ],
    ids=["no-loc", "loc-at-top", "loc-after-label", "loc-later", "loc-before-ret"],
)
def test_lint_says_what_ptxas_does_with_the_first_label(
    edit: tuple[str, str], expected: str | None, ptxas_tool: Ptxas
) -> None:
    """Measured on ptxas 13.0 and 13.5: lint's warning about $L__block_begin is what check
    finds ptxas did with it (placed at the start, dropped, or nothing)."""
    out = ptxdwarf.attach.attach(_NO_LOC, _described(), filename="k.ptx").replace("$L__ptxdwarf_top0: ", "")
    text = out.replace(*edit) if edit else out
    rules = [
        f.rule for f in ptxdwarf.lint.lint(text) if f.rule in ("label-at-line-zero", "first-label-at-zero")
    ]
    assert rules == ([expected] if expected else [])
    found = check(text, filename="k.ptx", ptxas=ptxas_tool).differences
    assert [d.ptx for d in found] == (["$L__block_begin"] if expected else [])
    if expected == "label-at-line-zero":
        assert "dropped" in found[0].message
