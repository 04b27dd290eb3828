"""Cases on labels, symbols and section names: what ptxas writes for them, in place and as relocations."""

from __future__ import annotations

import re
from collections.abc import Callable

from .. import harness as h
from ..case import bytes_at, rejects, relocated, show
from ..harness import ABBREV, Run, info, module, section
from ._base import ZERO8, case, depot_pair, in_str, info_case, with_info

__all__: list[str] = []

# --- labels and symbols ------------------------------------------------------------------------


def _info_labels_diff() -> str:
    text, _ = info()
    text = re.sub(r"\{\n\.b32 \d+\n", "{\n.b32 $L__ie-$L__is\n$L__is:\n", text, count=1)
    return module(ABBREV, text.replace("\n}\n", "\n$L__ie:\n}\n"))


case("info-label-difference.unit-length", "info-label-difference",
     "unit_length as $L__end-$L__start (both .debug_info labels) -> fatal 'Attempted to truncate larger than current size'",
     _info_labels_diff, rejects("Attempted to truncate larger than current size"))
_strs = section(".debug_str", "$L__a: .b8 97, 0\n$L__b: .b8 98, 99, 0")
info_case("label-difference.str-labels", "label-difference", ".b32 $L__b-$L__a (.debug_str labels) in .debug_info -> 2",
          ".b32 $L__b-$L__a", lambda off: bytes_at(".debug_info", off, bytes.fromhex("02000000")), h.VAR_DATA4, _strs)

case("symbol-outside-info.section-plus-n", "symbol-outside-info",
     ".b32 .debug_info+4 in .debug_pubnames -> 0, no relocation",
     lambda: with_info(section(".debug_pubnames", ".b32 .debug_info+4")),
     relocated(".debug_pubnames", 0, 0, None, None, 0, width=4))
case("symbol-outside-info.data-label", "symbol-outside-info",
     ".b32 $L__b (a .debug_str label at 2) in .debug_loc -> 0",
     lambda: with_info(_strs, section(".debug_loc", ".b32 $L__b")), relocated(".debug_loc", 0, 0, None, None, 0, width=4))
info_case("sections.section-plus-n-in-info", "sections.section-plus-n", ".b32 .debug_str+1 in .debug_info -> 1",
          ".b32 .debug_str+1", lambda off: bytes_at(".debug_info", off, bytes.fromhex("01000000")), h.VAR_DATA4)


def _addend_plus(off: int) -> Callable[[Run], tuple[bool, str]]:
    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        r = run.cubin.reloc_at(".debug_info", off)
        value = int.from_bytes((run.cubin.get(".debug_info") or b"")[off : off + 8], "little")
        ok = r is not None and r.addend is not None and value == r.addend + 8
        return ok, f"in place 0x{value:x}, addend {None if r is None else hex(r.addend or 0)}"

    return check


info_case("symbol-addend.code-label", "symbol-addend", ".b64 $L__func_end0+8 -> in place = RELA addend + 8",
          ".b64 $L__func_end0+8", _addend_plus)
info_case("symbol-addend.function", "symbol-addend", ".b64 _Z3addii+16 -> in place 0, RELA addend 16",
          ".b64 _Z3addii+16", lambda off: relocated(".debug_info", off, 2, "_Z3addii", 16, 0))


_dp, _d0, _d8 = depot_pair()


def _same_depot(run: Run) -> tuple[bool, str]:
    data = run.cubin.get(".debug_info") if run.cubin else None
    if data is None:
        return False, run.summary()
    a, b = data[_d0 - 1 : _d0 + 8], data[_d8 - 1 : _d8 + 8]  # from the DW_OP_addr byte
    return a == b and a[0] == 0x91, f"plain {show(a)}; +8 {show(b)}"


case("symbol-addend.depot", "symbol-addend", "DW_OP_addr __local_depot1+8 -> the same DW_OP_fbreg as without +8",
     lambda: _dp, _same_depot)

case("ptxas-syntax.label-in-list", "ptxas-syntax", ".b32 1, $L__func_end0 -> syntax error",
     in_str(".b32 1, $L__func_end0"), rejects("Parsing error|syntax error"))
case("ptxas-syntax.section-in-list", "ptxas-syntax", ".b32 .debug_abbrev, 5 -> syntax error",
     in_str(".b32 .debug_abbrev, 5"), rejects("Parsing error|syntax error"))
case("ptxas-syntax.b8-label", "ptxas-syntax", ".b8 $L__func_end0 -> 'Illegal type for dwarf data'",
     in_str(".b8 $L__func_end0"), rejects("Illegal type for dwarf data"))
info_case("undefined-symbol.label", "undefined-symbol", ".b64 $L__nosuch -> 0, accepted without a diagnostic",
          ".b64 $L__nosuch", lambda off: bytes_at(".debug_info", off, ZERO8))

# --- what ptxas writes in place of symbols ---------------------------------------------------------

info_case("func-param-address.zero", "func-param-address", ".b64 _Z3addii_param_1 (a .func parameter) -> 0, no relocation",
          ".b64 _Z3addii_param_1", lambda off: relocated(".debug_info", off, 0, None, None, 0))
info_case("rewrite.kernel-param", "rewrite.kernel-param", ".b64 _Z4testPi_param_0 -> its constant-bank offset (0x160 on sm_75), no relocation",
          ".b64 _Z4testPi_param_0", lambda off: relocated(".debug_info", off, 0, None, None, 0x160))
info_case("rewrite.global", "rewrite.global", ".b64 g1 (.global) -> 0 in place, R_CUDA_64 against g1",
          ".b64 g1", lambda off: relocated(".debug_info", off, 2, "g1", 0, 0))
info_case("rewrite.const", "rewrite.const", ".b64 c1 (.const) -> 0 in place, R_CUDA_G64 (type 4) against c1",
          ".b64 c1", lambda off: relocated(".debug_info", off, 4, "c1", 0, 0))
info_case("rewrite.shared", "rewrite.shared", ".b64 sh1 (.shared) -> its offset in the shared window, no relocation",
          ".b64 sh1", lambda off: relocated(".debug_info", off, 0, None, None, None))
info_case("rewrite.code-label", "rewrite.code-label", ".b64 $L__func_end1 -> R_CUDA_64 against _Z4testPi, addend = in place value",
          ".b64 $L__func_end1", lambda off: (lambda run: _same_addend(run, off)))


def _same_addend(run: Run, off: int) -> tuple[bool, str]:
    if run.cubin is None:
        return False, run.summary()
    r = run.cubin.reloc_at(".debug_info", off)
    value = int.from_bytes((run.cubin.get(".debug_info") or b"")[off : off + 8], "little")
    ok = r is not None and r.type == 2 and r.symbol == "_Z4testPi" and r.addend == value and value > 0
    return ok, f"in place 0x{value:x}, " + (f"reloc type {r.type} {r.symbol} addend 0x{r.addend or 0:x}" if r else "no relocation")


def _depot_rewrite(run: Run) -> tuple[bool, str]:
    data = run.cubin.get(".debug_info") if run.cubin else None
    if data is None:
        return False, run.summary()
    got = data[_d0 - 1 : _d0 + 8]
    n = 2 if got[1] < 0x80 else 3
    return got[0] == 0x91 and set(got[n:]) == {0x96}, show(got)


case("rewrite.depot", "rewrite.depot", "DW_OP_addr __local_depot1 (9 bytes) -> DW_OP_fbreg -framesize, DW_OP_nop up to 9 bytes",
     lambda: _dp, _depot_rewrite)

