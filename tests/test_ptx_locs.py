"""The ``.loc`` reader: each form a producer writes, read per function and per instruction."""

from __future__ import annotations

from ptxdwarf.ptx.statements import LocDirective
from ptxdwarf.testing import PtxLoc, read_locs

MODULE = """.version 7.0
.target sm_75
.address_size 64

.visible .entry k()
{
	.reg .b32 %r<3>;
	mov.u32 %r1, 0;
	.loc	1 5 3
	mov.u32 %r1, 1;
$L__tmp0:
	.loc	2 7 10, function_name $L__info_string0, inlined_at 1 6 5
	add.s32 %r2, %r1, %r1;  .loc 1 8
	ret;
}
	.file	1 "/src/k.cu"
	.file	2 "/src/math.h"
	.section	.debug_str
	{
$L__info_string0:
.b8 109,117,108,0
	}
"""


def test_each_form_of_loc() -> None:
    assert LocDirective.read(".loc 1 5 3") == LocDirective(1, 5, 3)
    assert LocDirective.read(".loc 1 8") == LocDirective(1, 8, 0)
    assert LocDirective.read(".loc 2 7 10, function_name $L__info_string0, inlined_at 1 6 5") == LocDirective(
        2, 7, 10, "$L__info_string0", (1, 6, 5)
    )
    assert LocDirective.read('.file 1 "x"') is None


def test_per_function_and_instruction() -> None:
    locs = read_locs(MODULE)
    assert locs.functions() == ["k"]
    first = PtxLoc(1, "/src/k.cu", 5, 3, 9)
    inlined = PtxLoc(2, "/src/math.h", 7, 10, 12, "mul", PtxLoc(1, "/src/k.cu", 6, 5))
    last = PtxLoc(1, "/src/k.cu", 8, 0, 13)
    assert locs.locs("k") == [first, inlined, last]
    assert [(i.ptx_line, i.text, i.loc) for i in locs.instructions("k")] == [
        (8, "mov.u32 %r1, 0", None),
        (10, "mov.u32 %r1, 1", first),
        (13, "add.s32 %r2, %r1, %r1", inlined),
        (14, "ret", last),
    ]
    assert locs.source_lines("k") == {5, 6, 7, 8}
    assert locs.source_lines("k", file="math.h") == {7}
    assert locs.source_lines("k", instructions=True) == {5, 7, 8}
