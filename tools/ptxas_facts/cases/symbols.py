"""Cases on labels, symbols and section names: what ptxas writes for them, in place and as relocations."""

from __future__ import annotations

import re
from collections.abc import Callable

from .. import harness as h
from ..case import bytes_at, rejects, relocated, show
from ..harness import ABBREV, Run, b8, die, info, module, section, subprogram
from ._base import ZERO8, case, depot_pair, in_str, info_case, value_in_info, with_info

__all__: list[str] = []

# --- labels and symbols ------------------------------------------------------------------------


def _info_labels_diff() -> str:
    text, _ = info()
    text = re.sub(r"\{\n\.b32 \d+\n", "{\n.b32 $L__ie-$L__is\n$L__is:\n", text, count=1)
    return module(ABBREV, text.replace("\n}\n", "\n$L__ie:\n}\n"))


case(
    "info-label-difference.unit-length",
    "info-label-difference",
    "unit_length as $L__end-$L__start (both .debug_info labels) -> fatal 'Attempted to truncate larger than current size'",
    _info_labels_diff,
    rejects("Attempted to truncate larger than current size"),
    holds_on=("13.0", "13.4", "13.5"),
)
_strs = section(".debug_str", "$L__a: .b8 97, 0\n$L__b: .b8 98, 99, 0")
info_case(
    "label-difference.str-labels",
    "label-difference",
    ".b32 $L__b-$L__a (.debug_str labels) in .debug_info -> 2",
    ".b32 $L__b-$L__a",
    lambda off: bytes_at(".debug_info", off, bytes.fromhex("02000000")),
    h.VAR_DATA4,
    _strs,
)

case(
    "symbol-outside-info.section-plus-n",
    "symbol-outside-info",
    ".b32 .debug_info+4 in .debug_pubnames -> 0, no relocation",
    lambda: with_info(section(".debug_pubnames", ".b32 .debug_info+4")),
    relocated(".debug_pubnames", 0, 0, None, None, 0, width=4),
)
case(
    "symbol-outside-info.data-label",
    "symbol-outside-info",
    ".b32 $L__b (a .debug_str label at 2) in .debug_loc -> 0",
    lambda: with_info(_strs, section(".debug_loc", ".b32 $L__b")),
    relocated(".debug_loc", 0, 0, None, None, 0, width=4),
)
info_case(
    "sections.section-plus-n-in-info",
    "sections.section-plus-n",
    ".b32 .debug_str+1 in .debug_info -> 1",
    ".b32 .debug_str+1",
    lambda off: bytes_at(".debug_info", off, bytes.fromhex("01000000")),
    h.VAR_DATA4,
)


def _addend_plus(off: int) -> Callable[[Run], tuple[bool, str]]:
    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        r = run.cubin.relocation_at(".debug_info", off)
        value = int.from_bytes((run.cubin.get(".debug_info") or b"")[off : off + 8], "little")
        ok = r is not None and r.addend is not None and value == r.addend + 8
        return ok, f"in place 0x{value:x}, addend {None if r is None else hex(r.addend or 0)}"

    return check


info_case(
    "symbol-addend.code-label",
    "symbol-addend",
    ".b64 $L__func_end0+8 -> in place = RELA addend + 8",
    ".b64 $L__func_end0+8",
    _addend_plus,
)
info_case(
    "symbol-addend.function",
    "symbol-addend",
    ".b64 _Z3addii+16 -> in place 0, RELA addend 16",
    ".b64 _Z3addii+16",
    lambda off: relocated(".debug_info", off, 2, "_Z3addii", 16, 0),
)


_dp, _d0, _d8 = depot_pair()


def _same_depot(run: Run) -> tuple[bool, str]:
    data = run.cubin.get(".debug_info") if run.cubin else None
    if data is None:
        return False, run.summary()
    a, b = data[_d0 - 1 : _d0 + 8], data[_d8 - 1 : _d8 + 8]  # from the DW_OP_addr byte
    return a == b and a[0] == 0x91, f"plain {show(a)}; +8 {show(b)}"


case(
    "symbol-addend.depot",
    "symbol-addend",
    "DW_OP_addr __local_depot1+8 -> the same DW_OP_fbreg as without +8",
    lambda: _dp,
    _same_depot,
)

case(
    "ptxas-syntax.label-in-list",
    "ptxas-syntax",
    ".b32 1, $L__func_end0 -> syntax error",
    in_str(".b32 1, $L__func_end0"),
    rejects("Parsing error|syntax error"),
)
case(
    "ptxas-syntax.section-in-list",
    "ptxas-syntax",
    ".b32 .debug_abbrev, 5 -> syntax error",
    in_str(".b32 .debug_abbrev, 5"),
    rejects("Parsing error|syntax error"),
)
case(
    "ptxas-syntax.b8-label",
    "ptxas-syntax",
    ".b8 $L__func_end0 -> 'Illegal type for dwarf data'",
    in_str(".b8 $L__func_end0"),
    rejects("Illegal type for dwarf data"),
)
info_case(
    "undefined-symbol.label",
    "undefined-symbol",
    ".b64 $L__nosuch -> 0, accepted without a diagnostic",
    ".b64 $L__nosuch",
    lambda off: bytes_at(".debug_info", off, ZERO8),
)

# --- what ptxas writes in place of symbols ---------------------------------------------------------

info_case(
    "func-param-address.zero",
    "func-param-address",
    ".b64 _Z3addii_param_1 (a .func parameter) -> 0, no relocation",
    ".b64 _Z3addii_param_1",
    lambda off: relocated(".debug_info", off, 0, None, None, 0),
)
info_case(
    "rewrite.kernel-param",
    "rewrite.kernel-param",
    ".b64 _Z4testPi_param_0 -> its constant-bank offset (0x160 on sm_75), no relocation",
    ".b64 _Z4testPi_param_0",
    lambda off: relocated(".debug_info", off, 0, None, None, 0x160),
)
info_case(
    "rewrite.global",
    "rewrite.global",
    ".b64 g1 (.global) -> 0 in place, R_CUDA_64 against g1",
    ".b64 g1",
    lambda off: relocated(".debug_info", off, 2, "g1", 0, 0),
)
info_case(
    "rewrite.const",
    "rewrite.const",
    ".b64 c1 (.const) -> 0 in place, R_CUDA_G64 (type 4) against c1",
    ".b64 c1",
    lambda off: relocated(".debug_info", off, 4, "c1", 0, 0),
)
info_case(
    "rewrite.shared",
    "rewrite.shared",
    ".b64 sh1 (.shared) -> its offset in the shared window, no relocation",
    ".b64 sh1",
    lambda off: relocated(".debug_info", off, 0, None, None, None),
)
info_case(
    "rewrite.code-label",
    "rewrite.code-label",
    ".b64 $L__func_end1 -> R_CUDA_64 against _Z4testPi, addend = in place value",
    ".b64 $L__func_end1",
    lambda off: lambda run: _same_addend(run, off),
)


def _same_addend(run: Run, off: int) -> tuple[bool, str]:
    if run.cubin is None:
        return False, run.summary()
    r = run.cubin.relocation_at(".debug_info", off)
    value = int.from_bytes((run.cubin.get(".debug_info") or b"")[off : off + 8], "little")
    ok = r is not None and r.type == 2 and r.symbol == "_Z4testPi" and r.addend == value and value > 0
    return ok, f"in place 0x{value:x}, " + (
        f"reloc type {r.type} {r.symbol} addend 0x{r.addend or 0:x}" if r else "no relocation"
    )


def _depot_rewrite(run: Run) -> tuple[bool, str]:
    data = run.cubin.get(".debug_info") if run.cubin else None
    if data is None:
        return False, run.summary()
    got = data[_d0 - 1 : _d0 + 8]
    n = 2 if got[1] < 0x80 else 3
    return got[0] == 0x91 and set(got[n:]) == {0x96}, show(got)


case(
    "rewrite.depot",
    "rewrite.depot",
    "DW_OP_addr __local_depot1 (9 bytes) -> DW_OP_fbreg -framesize, DW_OP_nop up to 9 bytes",
    lambda: _dp,
    _depot_rewrite,
)


# --- more labels and relocations ---------------------------------------------------------------------

case(
    "labels.duplicate",
    "labels.duplicate",
    "the same label defined twice -> 'Duplicate definition of label'",
    in_str("$L__x: .b8 1\n$L__x: .b8 2"),
    rejects("Duplicate definition of label '\\$L__x'"),
)
case(
    "labels.end-of-section",
    "labels.end-of-section",
    "a label at the end of .debug_str, referenced from .debug_info -> the section size",
    lambda: module(
        ABBREV, info(die(h.VAR_DATA4, ".b32 $L__e"))[0], section(".debug_str", ".b8 1, 2, 3\n$L__e:")
    ),
    bytes_at(".debug_info", 15, bytes.fromhex("03000000")),
)
case(
    "labels.info-label-absolute",
    "labels.info-label-absolute",
    "a .debug_info label referenced from .debug_info -> its absolute .debug_info offset",
    lambda: module(ABBREV, info(die(h.VAR_DATA4, ".b32 $L__d"))[0].replace("\n}\n", "\n$L__d:\n}\n")),
    bytes_at(".debug_info", 15, lambda got: int.from_bytes(got, "little") == 20, size=4),
)
case(
    "labels.different-sections",
    "labels.different-sections",
    "$L__x-$L__s across two sections -> 'must be defined in the same section'",
    lambda: with_info(
        section(".debug_str", "$L__s: .b8 1"), section(".debug_loc", "$L__x: .b8 1\n.b32 $L__x-$L__s")
    ),
    rejects("must be defined in the same section"),
)
case(
    "labels.code-label-difference",
    "labels.code-label-difference",
    "$L__func_end1-$L__func_begin1 -> \"label '$L__func_end1' invalid\"",
    in_str(".b32 $L__func_end1-$L__func_begin1"),
    rejects("label '\\$L__func_end1' invalid"),
)
case(
    "labels.shadow-code-label",
    "labels.shadow-code-label",
    "a section label named like a code label ($L__func_begin0:) -> accepted; references get the section label",
    lambda: module(
        ABBREV,
        info(die(h.VAR_DATA4, ".b32 $L__func_begin0"))[0],
        section(".debug_str", ".b8 1, 2\n$L__func_begin0: .b8 3"),
    ),
    bytes_at(".debug_info", 15, bytes.fromhex("02000000")),
)
case(
    "ptxas-syntax.dotted-symbol",
    "ptxas-syntax",
    ".b64 __PRETTY_FUNCTION__._Z3foov in .debug_info (LLVM 14 writes such names) -> \"Parsing error near '.'\"",
    lambda: value_in_info(".b64 __PRETTY_FUNCTION__._Z3foov")[0],
    rejects("Parsing error near '.'"),
)
case(
    "ptxas-syntax.label-minus-n",
    "ptxas-syntax",
    "$L__b-8 -> syntax error",
    in_str("$L__b: .b8 1\n.b32 $L__b-8"),
    rejects("Parsing error"),
)
case(
    "sections.missing-section-ref",
    "sections.no-existence-check",
    ".b32 .debug_foo+4 (no such section) in .debug_info -> 4",
    lambda: value_in_info(".b32 .debug_foo+4", h.VAR_DATA4)[0],
    bytes_at(".debug_info", 15, bytes.fromhex("04000000")),
)
case(
    "sections.no-section-difference",
    "sections.no-section-difference",
    ".b32 .debug_str-1 -> Parsing error near '-'",
    in_str(".b32 .debug_str-1"),
    rejects("Parsing error near '-'"),
)
info_case(
    "rewrite.code-label-b32",
    "rewrite.code-label",
    ".b32 $L__func_end1 in .debug_info -> R_CUDA_32 against _Z4testPi",
    ".b32 $L__func_end1",
    lambda off: relocated(".debug_info", off, 1, "_Z4testPi", None, None, width=4),
    h.VAR_DATA4,
)
info_case(
    "rewrite.code-label-wide-addend",
    "rewrite.code-label",
    ".b64 $L__func_end1+0x100000000 -> the same as without +N (N reduced mod 2^32)",
    ".b64 $L__func_end1+0x100000000",
    lambda off: lambda run: _same_addend(run, off),
)
case(
    "rewrite.code-label-in-loc",
    "rewrite.code-label",
    ".b64 $L__func_end0 in .debug_loc -> REL (no addend) type 2 against _Z3addii, label offset in place",
    lambda: with_info(section(".debug_loc", ".b64 $L__func_end0")),
    lambda run: _rel_in_place(run, ".debug_loc", 0, "_Z3addii"),
)
case(
    "rewrite.kernel-param-in-loc",
    "rewrite.kernel-param",
    ".b64 _Z4testPi_param_0 in .debug_loc -> 0x160, no relocation",
    lambda: with_info(section(".debug_loc", ".b64 _Z4testPi_param_0")),
    relocated(".debug_loc", 0, 0, None, None, 0x160),
)
case(
    "rewrite.const-in-loc",
    "rewrite.const",
    ".b64 c1 in .debug_loc -> its offset in place, no relocation",
    lambda: with_info(section(".debug_loc", ".b64 c1")),
    relocated(".debug_loc", 0, 0, None, None, None),
)
case(
    "rewrite.global-in-loc",
    "rewrite.global",
    ".b64 g1 in .debug_loc -> R_CUDA_64 against g1",
    lambda: with_info(section(".debug_loc", ".b64 g1")),
    relocated(".debug_loc", 0, 2, "g1", None, 0),
)
case(
    "rewrite.depot-in-loc",
    "rewrite.depot",
    "DW_OP_addr (0x03) __local_depot1 in .debug_loc -> DW_OP_fbreg + nops over the 9 bytes",
    lambda: with_info(section(".debug_loc", ".b8 3\n.b64 __local_depot1")),
    bytes_at(".debug_loc", 0, lambda got: got[0] == 0x91 and got[-1] == 0x96, size=9),
)
case(
    "rewrite.depot-in-loc-no-op",
    "rewrite.depot",
    ".b64 __local_depot1 in .debug_loc after a byte other than 0x03 -> 0",
    lambda: with_info(section(".debug_loc", ".b8 4\n.b64 __local_depot1")),
    bytes_at(".debug_loc", 1, ZERO8),
)
case(
    "rewrite.regx-verbatim",
    "rewrite.regx",
    "DW_OP_regx with a 10-byte ULEB -> kept verbatim",
    lambda: module(ABBREV, info(subprogram(die(h.VAR_BLOCK, b8(11, 0x90, *([0x80] * 9), 0x01))))[0]),
    bytes_at(".debug_info", 0, lambda got: bytes([0x90, *([0x80] * 9), 0x01]) in got, size=200),
)


def _rel_in_place(run: Run, section_name: str, off: int, symbol: str) -> tuple[bool, str]:
    if run.cubin is None:
        return False, run.summary()
    r = run.cubin.relocation_at(section_name, off)
    value = int.from_bytes((run.cubin.get(section_name) or b"")[off : off + 8], "little")
    ok = r is not None and r.addend is None and r.type == 2 and r.symbol == symbol and value > 0
    return ok, f"in place 0x{value:x}, " + (
        f"{'REL' if r.addend is None else 'RELA'} type {r.type} {r.symbol}" if r else "no relocation"
    )


# --- where ptxas places a function's first label -------------------------------------------------

_FIRST_LABEL_CODE = """\
.visible .entry _Z1kPii(.param .u64 _Z1kPii_param_0, .param .u32 _Z1kPii_param_1)
{
\t.reg .pred %p<2>;
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<3>;
\t.loc 1 1 0
TOP\tld.param.u64 %rd1, [_Z1kPii_param_0];
\tld.param.u32 %r1, [_Z1kPii_param_1];
\tmov.u32 %r2, %tid.x;
\tcvta.to.global.u64 %rd2, %rd1;
ENTRY\tsetp.ge.s32 %p1, %r2, %r1;
\t@%p1 bra $L__done;
AFTER\tst.global.u32 [%rd2], %r2;
$L__done:
\tret;
}
"""
_NO_BRANCH_CODE = """\
.visible .entry _Z1kPii(.param .u64 _Z1kPii_param_0, .param .u32 _Z1kPii_param_1)
{
\t.reg .b32 %r<2>;
\t.reg .b64 %rd<3>;
\t.loc 1 1 0
\tld.param.u64 %rd1, [_Z1kPii_param_0];
\tld.param.u32 %r1, [_Z1kPii_param_1];
\tcvta.to.global.u64 %rd2, %rd1;
\tst.global.u32 [%rd2], %r1;
LAST\tret;
END}
"""


def _first_label(**at: str) -> Callable[[], tuple[str, int]]:
    """A kernel with ``$L__x:`` (and other labels) where ``at`` says (TOP, ENTRY, AFTER; or,
    in a kernel without branches, LAST or END) and a DIE holding ``.b64 $L__x``; the module
    and that value's offset."""

    def make() -> tuple[str, int]:
        code = _NO_BRANCH_CODE if "last" in at or "end" in at else _FIRST_LABEL_CODE
        for mark in ("TOP", "ENTRY", "AFTER", "LAST", "END"):
            code = code.replace(mark, at.get(mark.lower(), ""))
        text, marks = info(die(h.VAR_DATA8, "v:.b64 $L__x"))
        return module(ABBREV, text, code=code), marks["v"]

    return make


def _first_label_case(id: str, expected: str, at_zero: bool, **at: str) -> None:
    make = _first_label(**at)
    offset = make()[1]

    def check(run: Run) -> tuple[bool, str]:
        r = run.cubin.relocation_at(".debug_info", offset) if run.cubin else None
        if r is None:
            return False, run.summary() if run.cubin is None else "no relocation"
        seen = f"{r.symbol}+{r.addend}"
        return r.symbol == "_Z1kPii" and (r.addend == 0) == at_zero, seen

    case(id, "first-label-at-zero", expected, lambda: make()[0], check)


_first_label_case(
    "first-label-at-zero.entry-block",
    "the function's first label after 4 instructions, before the first branch -> placed at offset 0",
    True,
    entry="$L__x:\n",
)
_first_label_case(
    "first-label-at-zero.before-ret",
    "the first label before the last instruction of a function without branches -> offset 0",
    True,
    last="$L__x:\n",
)
_first_label_case(
    "first-label-at-zero.label-at-top",
    "the same label with another label at the top of the body (nvcc's $L__func_begin) -> its own offset",
    False,
    top="$L__top:\n",
    entry="$L__x:\n",
)
_first_label_case(
    "first-label-at-zero.after-branch",
    "the function's first label after a branch -> its own offset",
    False,
    after="$L__x:\n",
)
_first_label_case(
    "first-label-at-zero.at-end",
    "the function's first label after its last instruction (nothing follows) -> its own offset",
    False,
    end="$L__x:\n",
)
