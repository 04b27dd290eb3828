"""Cases on the DWARF ptxas parses: abbreviations, forms, headers, strings, location lists, pieces."""

from __future__ import annotations

import re
from collections.abc import Callable

from ptxdwarf.dwarf.constants import AT, FORM, TAG
from ptxdwarf.dwarf.model import DebugInfo

from .. import harness as h
from ..case import accepts, bytes_at, crashes, fails, rejects, relocated, show
from ..harness import ABBREV, Run, b8, cstring, die, info, module, section, subprogram
from ._base import case, custom_abbrev, reencoded, with_info

__all__: list[str] = []

# --- abbreviations, forms, headers -------------------------------------------------------------


def _typed_var(
    type_code: int, rows: list[tuple[int, int, int, list[tuple[int, int]]]], version: int = 2
) -> str:
    """A depot variable (code 9: location block1, type ref4) whose type is a base type DIE of code ``type_code``."""
    rows = [
        *rows,
        (9, 0x34, 0, [(0x02, 0x0A), (0x49, 0x13)]),
        (type_code, 0x24, 0, [(0x03, 0x08), (0x3E, 0x0B), (0x0B, 0x0B)]),
    ]

    def tree(ref: int) -> list[h.Die]:
        var = die(9, b8(11, 0x03), ".b64 __local_depot1", b8(0x23, 0), f".b32 {ref}")
        base = [h.Entry(".b8", str(type_code), "type"), cstring("int"), b8(5, 4)]
        return [subprogram(var), base]

    _, marks = info(*tree(0), version=version)
    text, _ = info(*tree(marks["type"]), version=version)
    return module(h.abbrev_table(rows), text)


case(
    "abbrev-code-order.gap",
    "abbrev-code-order",
    "a type reference to a DIE of code 12 in a table of 10 codes -> fatal 'Attempted to Dereference Out of Bounds'",
    lambda: _typed_var(12, list(h.ABBREV_BYTES)),
    rejects("Attempted to Dereference Out of Bounds"),
    holds_on=("12.9", "13.0", "13.4", "13.5"),
)
case(
    "abbrev-code-order.dense",
    "abbrev-code-order",
    "the same module with codes 1..10 -> accepted",
    lambda: _typed_var(10, list(h.ABBREV_BYTES)),
    accepts(),
)


def _form_case(form: int, version: int) -> Callable[[], str]:
    """A subprogram whose abbreviation adds DW_AT_external with ``form`` (flag: 1 byte; flag_present: none)."""
    attrs = [*h.ABBREV_BYTES[h.SUBPROGRAM - 1][3], (0x3F, form)]
    rows = [r if r[0] != h.SUBPROGRAM else (h.SUBPROGRAM, 0x2E, 1, attrs) for r in h.ABBREV_BYTES]
    values: list[h.Entry | str] = [".b64 $L__func_begin1", ".b64 $L__func_end1", b8(1, 0x9C), cstring("f")]
    if form == 0x0C:
        values.append(b8(1))
    sub = die(h.SUBPROGRAM, *values, children=[h.depot_var()])
    return lambda: custom_abbrev(rows, sub, version=version)


case(
    "dwarf4-form.flag-present-v4",
    "dwarf4-form",
    "DW_FORM_flag_present on a subprogram in a version 4 unit -> 'Error in get_form_value default', exit 1",
    _form_case(0x19, 4),
    rejects("Error in get_form_value default", exit_code=1),
)
case(
    "dwarf4-form.flag-v4",
    "dwarf4-form",
    "the same with DW_FORM_flag -> accepted",
    _form_case(0x0C, 4),
    accepts(),
)
case(
    "header.dwarf5",
    "header.dwarf5",
    "a version 5 unit (v5 header) with a __local_depot variable -> accepted, depot rewritten",
    lambda: module(ABBREV, info(subprogram(h.depot_var()), version=5)[0]),
    lambda run: (
        run.returncode == 0 and run.cubin is not None and b"\x91" in (run.cubin.get(".debug_info") or b""),
        run.summary(),
    ),
    holds_on=("12.0", "12.4", "13.0"),
)


case(
    "reloc-width.addr-b32",
    "reloc-width",
    "address_size 8 and a .b32 DW_FORM_addr value -> 'Attempted to Dereference Out of Bounds'",
    lambda: module(
        ABBREV, info(subprogram(die(h.LABEL_ADDR, ".b32 $L__func_end1"), h.depot_var(), h.depot_var()))[0]
    ),
    rejects("Attempted to Dereference Out of Bounds"),
    holds_on=(),
)


def _low_half(run: Run) -> tuple[bool, str]:
    """R_CUDA_32 against the function at .debug_info+15, and the 4 bytes after it still 0."""
    if run.cubin is None:
        return False, run.summary()
    data = run.cubin.get(".debug_info") or b""
    r = run.cubin.relocation_at(".debug_info", 15)
    observed = f"in place {show(data[15:23])}, " + (
        f"reloc type {r.type} {r.symbol}" if r else "no relocation"
    )
    return r is not None and r.type == 1 and r.symbol == "_Z3addii" and data[19:23] == bytes(4), observed


case(
    "reloc-width.low-half",
    "reloc-width",
    "address_size 8, a DW_FORM_addr written '.b32 $L__func_end0' + '.b32 0' -> R_CUDA_32 on the low half, the "
    "high half 0: the field reads as the label's address",
    lambda: module(ABBREV, info(die(h.LABEL_ADDR, ".b32 $L__func_end0", ".b32 0"))[0]),
    _low_half,
)


def _depot_b32(run: Run) -> tuple[bool, str]:
    """The variable's block at .debug_info+0x25 rewritten to DW_OP_fbreg and nops, 4 zero bytes left."""
    if run.cubin is None:
        return False, run.summary()
    block = (run.cubin.get(".debug_info") or b"")[0x25 : 0x25 + 11]
    return block[:1] == b"\x91" and block[5:9] == bytes(4), f"block {show(block)}"


case(
    "reloc-width.depot-b32",
    "reloc-width",
    "DW_OP_addr whose operand is written '.b32 __local_depot1' + '.b32 0' -> compiled, but only 5 of its 9 bytes "
    "rewritten (DW_OP_fbreg and nops): 4 zero bytes are left in the expression, which no reader decodes",
    lambda: module(
        ABBREV,
        info(subprogram(die(h.VAR_BLOCK, b8(11, 0x03), ".b32 __local_depot1", ".b32 0", b8(0x23, 0))))[0],
    ),
    _depot_b32,
)


def _addr_b32(want: bytes, reloc: tuple[int, str] | None) -> Callable[[Run], tuple[bool, str]]:
    """The DW_OP_addr operand at .debug_info+0x26 reads ``want`` in place, relocated as
    ``reloc`` (type, symbol) or not at all."""

    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        block = (run.cubin.get(".debug_info") or b"")[0x25 : 0x25 + 11]
        r = run.cubin.relocation_at(".debug_info", 0x26)
        seen = f"block {show(block)}, " + (f"reloc type {r.type} {r.symbol}" if r else "no relocation")
        got = None if r is None else (r.type, r.symbol)
        return block[1:9] == want and got == reloc, seen

    return check


def _addr_b32_module(operand: str, code: str = h.CODE) -> str:
    """A variable at DW_OP_addr ``operand`` written '.b32 operand' + '.b32 0'."""
    var = die(h.VAR_BLOCK, b8(11, 0x03), f".b32 {operand}", ".b32 0", b8(0x23, 0))
    return module(ABBREV, info(subprogram(var))[0], code=code)


_TWO_SHARED = h.CODE.replace(
    ".shared .align 4 .u32 sh1;", ".shared .align 4 .u32 sh0;\n.shared .align 4 .u32 sh1;"
).replace("\tst.shared.u32 [sh1], %r1;", "\tst.shared.u32 [sh0], %r2;\n\tst.shared.u32 [sh1], %r1;")

case(
    "reloc-width.param-b32",
    "reloc-width",
    "DW_OP_addr whose operand is written '.b32 _Z4testPi_param_0' + '.b32 0' -> the 8 bytes read the "
    "parameter's constant-bank offset (0x160 on sm_75), no relocation: as for .b64",
    lambda: _addr_b32_module("_Z4testPi_param_0"),
    _addr_b32((0x160).to_bytes(8, "little"), None),
)
case(
    "reloc-width.shared-b32",
    "reloc-width",
    "the same for a .shared variable (sh0, at 4 in the shared window) -> the 8 bytes read 4, no relocation: "
    "as for .b64",
    lambda: _addr_b32_module("sh0", _TWO_SHARED),
    _addr_b32((4).to_bytes(8, "little"), None),
)
case(
    "reloc-width.global-b32",
    "reloc-width",
    "the same for a .global variable (g1) -> R_CUDA_32 on the low 4 bytes, the high 4 stay 0: the field "
    "holds the low 32 bits of g1's address (.b64: R_CUDA_64)",
    lambda: _addr_b32_module("g1"),
    _addr_b32(bytes(8), (1, "g1")),
)

case(
    "header.cu-address-size-4",
    "header.cu-address-size-4",
    "CU address_size 4, .b32 $L__func_end0 as DW_FORM_addr -> R_CUDA_32",
    lambda: module(ABBREV, info(die(h.LABEL_ADDR, ".b32 $L__func_end0"), address_size=4)[0]),
    relocated(".debug_info", 15, 1, "_Z3addii", None, None, width=4),
)
case(
    "address-size.32-debug",
    "address-size",
    ".address_size 32 with -g -> fatal '.address_size of 32 bits for -g compilation'",
    lambda: with_info(address_size=".address_size 32"),
    rejects("address_size of 32 bits for -g compilation"),
)
case(
    "header.address-size-missing",
    "header.address-size-missing",
    "no .address_size with -g -> compiled, .debug_info kept",
    lambda: with_info(address_size=None),
    accepts(lambda run: run.cubin is not None and run.cubin.get(".debug_info") is not None),
)


def _no_address_size(arch: str) -> Callable[[], str]:
    """The module with an empty unit, no .address_size and ``.target arch``."""
    return lambda: with_info(address_size=None, target=arch)


for _arch in ("sm_50", "sm_52", "sm_53"):
    case(
        f"address-size-default.{_arch}",
        "address-size-default",
        f"no .address_size, .target {_arch}, -g -arch={_arch} -> fatal '.address_size of 32 bits for -g "
        "compilation' (ptxas of CUDA 13 has no sm_5x: 'not defined for option')",
        _no_address_size(_arch),
        rejects("address_size of 32 bits for -g compilation"),
        args=("-g", f"-arch={_arch}"),
        holds_on=("12.0", "12.4", "12.9"),
    )
case(
    "header.address-size-missing.sm_60",
    "header.address-size-missing",
    "no .address_size, .target sm_60, -g -arch=sm_60 -> compiled, .debug_info kept (ptxas of CUDA 13 has "
    "no sm_60)",
    _no_address_size("sm_60"),
    accepts(lambda run: run.cubin is not None and run.cubin.get(".debug_info") is not None),
    args=("-g", "-arch=sm_60"),
    holds_on=("12.0", "12.4", "12.9"),
)

# --- unit lengths -----------------------------------------------------------------------------------


def _unit(tail: str, extra: int, drop_close: bool = False) -> Callable[[], str]:
    """The one-subprogram unit with ``tail`` after its DIE tree and its length grown by ``extra``
    (``drop_close``: without the compile unit's closing null, so a child list stays open)."""

    def make() -> str:
        text, _ = info(subprogram(h.depot_var()))
        size = int(text.split(".b32 ", 1)[1].split("\n", 1)[0])
        body = text.rstrip().removesuffix("}").rstrip()
        if drop_close:
            body = body.removesuffix(".b8 0").rstrip()
        body = body.replace(f".b32 {size}", f".b32 {size + extra}", 1)
        return module(ABBREV, body + ("\n" + tail if tail else "") + "\n}\n")

    return make


def _info_size(size: int) -> Callable[[Run], bool]:
    return lambda run: run.cubin is not None and len(run.cubin.get(".debug_info") or b"") == size


case(
    "unit-length.zero-tail",
    "unit-length",
    "unit length 3 past the DIE tree, '.b8 0, 0, 0' there -> compiled, the 3 bytes kept",
    _unit(".b8 0, 0, 0", 3),
    accepts(_info_size(53)),
)
case(
    "unit-length.junk-tail",
    "unit-length",
    "unit length 1 past the DIE tree, '.b8 5' there -> compiled, the byte kept",
    _unit(".b8 5", 1),
    accepts(_info_size(51)),
    holds_on=("12.0", "12.4", "13.0", "13.4", "13.5"),
)
case(
    "unit-length.open-scope",
    "unit-length",
    "the compile unit's closing null left out (length 1 shorter) -> compiled",
    _unit("", -1, drop_close=True),
    accepts(_info_size(49)),
)
case(
    "unit-length.past-data",
    "unit-length",
    "unit length 1 past the section's end -> fatal 'Attempted to truncate larger than current size' "
    "(ptxas 12.0 and 12.4: 'Lengths of individual units do not add up to the total length')",
    _unit("", 1),
    rejects("Attempted to truncate larger than current size|Lengths of individual units do not add up"),
)

# --- @@DWARF lines (PTX ISA 1.x) ------------------------------------------------------------------

_LEGACY_CODE = """\
.file 1 "t.cu"

.entry k
{
$LDWbegin_k:
.loc 1 5 0
exit;
$LDWend_k:
}
"""
#: A compile unit "t" holding a subprogram "k" (low_pc, high_pc), as (directive, operands) rows.
_LEGACY_ABBREV = [
    (".byte", "1, 0x11, 1, 0x03, 0x08, 0, 0, 2, 0x2e, 0, 0x11, 0x01, 0x12, 0x01, 0x03, 0x08, 0, 0, 0")
]
_LEGACY_INFO = [
    (".byte", "30, 0, 0, 0, 2, 0"),
    (".4byte", ".debug_abbrev"),
    (".byte", "8, 1, 0x74, 0, 2"),
    (".quad", "$LDWbegin_k"),
    (".quad", "$LDWend_k"),
    (".byte", "0x6b, 0, 0"),
]
_LEGACY_BYTES = (
    bytes.fromhex("1e0000000200000000000801740002") + bytes(8) + bytes.fromhex("8000000000000000") + b"k\0\0"
)


def _legacy(version: str, dwarf_lines: bool) -> Callable[[], str]:
    def make() -> str:
        out = []
        for name, rows in ((".debug_abbrev", _LEGACY_ABBREV), (".debug_info", _LEGACY_INFO)):
            if dwarf_lines:
                out.append(f'@@DWARF .section {name}, "",@progbits')
                out.extend(f"@@DWARF {d} {v}" for d, v in rows)
            else:
                out.append(section(name, "\n".join(f"{d} {v}" for d, v in rows)))
        return f".version {version}\n.target sm_10\n\n{_LEGACY_CODE}\n" + "\n".join(out) + "\n"

    return make


case(
    "dwarf-lines.isa-1",
    "dwarf-lines",
    "debug sections as @@DWARF lines (.section NAME, .byte, .4byte, .quad) in .version 1.4 -> compiled, "
    "the bytes the same .section blocks give at 2.0",
    _legacy("1.4", True),
    bytes_at(".debug_info", 0, _LEGACY_BYTES),
)
case(
    "dwarf-lines.isa-2",
    "dwarf-lines",
    "the same at .version 2.0 -> \"Deprecated feature: '@@DWARF directive' not supported as of PTX version 2.0\"",
    _legacy("2.0", True),
    rejects("@@DWARF directive' not supported"),
)
case(
    "dwarf-lines.section-isa-1",
    "dwarf-lines",
    ".section blocks at .version 1.4 -> \"Feature '.section directive' requires PTX ISA .version 2.0\"",
    _legacy("1.4", False),
    rejects("'.section directive' requires PTX ISA .version 2.0"),
)
case(
    "dwarf-lines.section-isa-2",
    "dwarf-lines",
    "the same .section blocks at .version 2.0 -> compiled, the same bytes",
    _legacy("2.0", False),
    bytes_at(".debug_info", 0, _LEGACY_BYTES),
)

# --- strings, location lists, subprograms ---------------------------------------------------------

_STR = section(".debug_str", ".b8 97, 0\n$L__B: .b8 98, 0")


def _strp_twice() -> tuple[str, int, int]:
    text, marks = info(die(h.VAR_STRP, "s1:.b32 $L__B"), die(h.VAR_STRP, "s2:.b32 $L__B"))
    return module(ABBREV, text, _STR), marks["s1"], marks["s2"]


_sp, _s1, _s2 = _strp_twice()


def _strp_check(run: Run) -> tuple[bool, str]:
    # ptxas reads freed memory here: in a few runs in a hundred it fails instead, naming a
    # label of garbage bytes. Both outcomes are the fact.
    if run.returncode > 0 and re.search(r"label '[^']*' invalid", run.stderr):
        return True, run.summary()
    data = run.cubin.get(".debug_info") if run.cubin else None
    if data is None:
        return False, run.summary()
    a, b = data[_s1 : _s1 + 4], data[_s2 : _s2 + 4]
    return a == b"\x02\0\0\0" and b == bytes(4), f"first {show(a)}, second {show(b)}"


case(
    "strp-label-reused.second-zero",
    "strp-label-reused",
    "two .b32 $L__B (a .debug_str label at 2) in .debug_info -> 2, then 0; or, in a few runs in a hundred, "
    "'label '<garbage>' invalid'",
    lambda: _sp,
    _strp_check,
)


def _depot_list(*after: int) -> str:
    """A .debug_loc list over f: DW_OP_addr __local_depot1, then the bytes ``after``."""
    body = ", ".join(map(str, after))
    return section(
        ".debug_loc",
        f".b64 $L__func_begin1\n.b64 $L__func_end1\n.b16 11\n.b8 3\n.b64 __local_depot1\n.b8 {body}\n.b64 0\n.b64 0",
    )


def _orphan(loc: str) -> Callable[[], str]:
    """``loc`` beside a variable at the depot that does not refer to it."""
    return lambda: module(ABBREV, info(subprogram(h.depot_var()))[0], loc)


_LOC_PIECE = _depot_list(0x93, 3)
case(
    "orphan-depot-list.fatal",
    "orphan-depot-list",
    "a .debug_loc list with a __local_depot address no DIE refers to -> 'Attempted to Dereference Out of Bounds'",
    _orphan(_depot_list(0x23, 0)),
    rejects("Attempted to Dereference Out of Bounds"),
    holds_on=(),
)
case(
    "orphan-depot-list.pieces",
    "orphan-depot-list",
    "the same list with DW_OP_piece 3 after the address -> 'Attempted to Dereference Out of Bounds'",
    _orphan(_LOC_PIECE),
    rejects("Attempted to Dereference Out of Bounds"),
    holds_on=(),
)
case(
    "depot-in-pieces.list",
    "depot-in-pieces",
    "a variable whose .debug_loc list says DW_OP_addr __local_depot1; DW_OP_piece 3 -> compiled",
    lambda: module(ABBREV, info(subprogram(die(h.VAR_LOCLIST, ".b32 .debug_loc")))[0], _LOC_PIECE),
    accepts(),
)


def _piece(size: int) -> Callable[[], str]:
    # DW_OP_regx %r1 (a 3-byte ULEB of the name, as nvcc writes), DW_OP_piece size
    expr = [0x90, 0xB2, 0xE4, 0x01, 0x93, size]
    return lambda: module(ABBREV, info(subprogram(die(h.VAR_BLOCK, b8(len(expr), *expr))))[0])


case(
    "piece-size.three",
    "piece-size",
    "DW_OP_regx; DW_OP_piece 3 -> fatal ('Checked Data was Invalid' or 'Dereference Out of Bounds')",
    _piece(3),
    rejects("Checked Data was Invalid|Dereference Out of Bounds"),
    holds_on=("12.9", "13.0", "13.4", "13.5"),
)
case("piece-size.four", "piece-size", "DW_OP_regx; DW_OP_piece 4 -> accepted", _piece(4), accepts())


def _depot_block(*ops: int, before: tuple[int, ...] = ()) -> Callable[[], str]:
    """A variable at ``before``, DW_OP_addr __local_depot1, then ``ops``."""
    size = len(before) + 9 + len(ops)
    return lambda: module(
        ABBREV,
        info(subprogram(die(h.VAR_BLOCK, b8(size, *before, 0x03), ".b64 __local_depot1", b8(*ops))))[0],
    )


case(
    "depot-in-pieces.three",
    "depot-in-pieces",
    "DW_OP_addr __local_depot1; DW_OP_piece 3 -> fatal 'Attempted to Dereference Out of Bounds'",
    _depot_block(0x93, 3),
    rejects("Attempted to Dereference Out of Bounds"),
    holds_on=("12.9", "13.0"),
)
case(
    "depot-in-pieces.sixteen",
    "depot-in-pieces",
    "DW_OP_addr __local_depot1; DW_OP_plus_uconst 8; DW_OP_piece 16 -> fatal 'Checked Data was Invalid'",
    _depot_block(0x23, 8, 0x93, 16),
    rejects("Checked Data was Invalid|Attempted to Dereference Out of Bounds"),
    holds_on=("12.9", "13.0"),
)
case(
    "depot-in-pieces.four",
    "depot-in-pieces",
    "DW_OP_addr __local_depot1; DW_OP_piece 4 -> compiled",
    _depot_block(0x93, 4),
    accepts(),
)
case(
    "depot-in-pieces.after-piece-three",
    "depot-in-pieces",
    "DW_OP_piece 3; DW_OP_addr __local_depot1; DW_OP_piece 3 -> compiled",
    _depot_block(0x93, 3, before=(0x93, 3)),
    accepts(),
)


def _fault(rule: str) -> Callable[[], bytes]:
    return lambda: h.fixture(f"lint/faults/{rule}.ptx")


def _bitfield(edit: str) -> Callable[[], str]:
    """The bitfield-member-order fault fixture with its member Flags/b edited: ``location-first``
    moves DW_AT_data_member_location before the bit attributes, ``name-string`` writes the name
    as DW_FORM_string. Every other strp value and .debug_loc symbol stays."""

    def make() -> str:
        return reencoded("lint/faults/bitfield-member-order.ptx", change)

    def change(info: DebugInfo) -> None:
        member = next(
            d for d in info.iter_dies() if d.tag == TAG.member and d.attr(AT.bit_size) and d.name == "b"
        )
        attrs = list(member.attributes)
        if edit == "location-first":
            where = next(i for i, a in enumerate(attrs) if a.name == AT.data_member_location)
            first = next(
                i for i, a in enumerate(attrs) if a.name in (AT.byte_size, AT.bit_size, AT.bit_offset)
            )
            attrs.insert(first, attrs.pop(where))
        else:
            name = next(a for a in attrs if a.name == AT.name)
            name.form, name.relocs = int(FORM.string), ()
        member.attributes = attrs
        member.abbrev_code = None

    return make


case(
    "bitfield-member-order.fixture",
    "bitfield-member-order",
    "fixtures/lint/faults/bitfield-member-order.ptx (nvcc module; the bit-field member Flags/b named by DW_FORM_strp, "
    "DW_AT_data_member_location after the bit attributes) -> fatal 'Checked Data was Invalid'",
    _fault("bitfield-member-order"),
    rejects("Checked Data was Invalid"),
    any_version=True,
    holds_on=("12.9", "13.0", "13.4", "13.5"),
)
case(
    "bitfield-member-order.location-first",
    "bitfield-member-order",
    "the same with Flags/b's DW_AT_data_member_location before its bit attributes (its .debug_loc symbols and "
    "strp names kept) -> accepted",
    _bitfield("location-first"),
    accepts(),
    any_version=True,
)
case(
    "bitfield-member-order.name-string",
    "bitfield-member-order",
    "the same with Flags/b's name as DW_FORM_string, nvcc's order kept -> accepted",
    _bitfield("name-string"),
    accepts(),
    any_version=True,
)
case(
    "ref-addr-size.fixture",
    "ref-addr-size",
    "fixtures/lint/faults/ref-addr-size.ptx (DW_FORM_ref_addr as 4 bytes, version 3) -> 'Attempted to Dereference "
    "Out of Bounds' (ptxas 12.0 and 12.4: killed by a signal)",
    _fault("ref-addr-size"),
    fails("Attempted to Dereference Out of Bounds"),
    any_version=True,
)
case(
    "address-size-default.fixture",
    "address-size-default",
    "fixtures/lint/faults/address-size-default.ptx (nvcc module, .address_size removed, .target sm_52), "
    "-g -arch=sm_52 -> fatal '.address_size of 32 bits for -g compilation'",
    _fault("address-size-default"),
    rejects("address_size of 32 bits for -g compilation"),
    args=("-g", "-arch=sm_52"),
    holds_on=("12.0", "12.4", "12.9"),
    any_version=True,
)
case(
    "name-before-linkage-name.fixture",
    "name-before-linkage-name",
    "fixtures/lint/faults/name-before-linkage-name.ptx (nvcc module, the name of a subprogram with "
    "__local_depot variables moved first) -> killed by a signal",
    _fault("name-before-linkage-name"),
    crashes(),
    any_version=True,
)

_LOW = (0x11, 0x01, ".b64 $L__func_begin1")
_HIGH = (0x12, 0x01, ".b64 $L__func_end1")
_FRAME = (0x40, 0x0A, "b8:1, 0x9c")
_NAME = (0x03, 0x08, "b8:0x66, 0")
_MIPS = (0x2007, 0x08, "b8:0x6b, 0")
_LINKAGE = (0x6E, 0x08, "b8:0x6b, 0")
_CONST = [(0x1C, 0x0B)]


def _ordered(*attrs: tuple[int, int, str], depot: bool = True) -> Callable[[], str]:
    """The kernel's subprogram with ``attrs`` in this order (attribute, form, value), holding a
    variable at ``DW_OP_addr __local_depot1`` (``depot``) or one with a constant value."""

    def uleb(n: int) -> list[int]:
        out = []
        while True:
            byte, n = n & 0x7F, n >> 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                return out

    def make() -> str:
        spec = [v for a, f, _ in attrs for v in (*uleb(a), f)]
        var = [0x02, 0x0A] if depot else [0x1C, 0x0B]
        rows = [[1, 0x11, 1, 0x03, 0x08, 0, 0], [2, 0x2E, 1, *spec, 0, 0], [3, 0x34, 0, *var, 0, 0], [0]]
        abbrev = section(".debug_abbrev", "\n".join(".b8 " + ", ".join(map(str, r)) for r in rows))
        values = [v if v.startswith(".") else ".b8 " + v.removeprefix("b8:") for _, _, v in attrs]
        child = h.depot_var(code=3) if depot else die(3, b8(5))
        return module(abbrev, info(die(2, *values, children=[child]))[0])

    return make


case(
    "name-before-linkage-name.mips",
    "name-before-linkage-name",
    "subprogram name, DW_AT_MIPS_linkage_name, low_pc, high_pc, frame_base; a __local_depot variable -> "
    "killed by a signal",
    _ordered(_NAME, _MIPS, _LOW, _HIGH, _FRAME),
    crashes(),
)
case(
    "name-before-linkage-name.after-low-pc",
    "name-before-linkage-name",
    "low_pc, high_pc, frame_base, name, DW_AT_MIPS_linkage_name -> killed by a signal (low_pc first does not help)",
    _ordered(_LOW, _HIGH, _FRAME, _NAME, _MIPS),
    crashes(),
)
case(
    "name-before-linkage-name.nvcc11",
    "name-before-linkage-name",
    "DW_AT_MIPS_linkage_name, name, low_pc, high_pc, frame_base (nvcc 11.0's order) -> compiled",
    _ordered(_MIPS, _NAME, _LOW, _HIGH, _FRAME),
    accepts(),
)
case(
    "name-before-linkage-name.no-linkage",
    "name-before-linkage-name",
    "name, low_pc, high_pc, frame_base (no linkage name) -> compiled",
    _ordered(_NAME, _LOW, _HIGH, _FRAME),
    accepts(),
)
case(
    "name-before-linkage-name.dwarf4-linkage",
    "name-before-linkage-name",
    "name, DW_AT_linkage_name (0x6e), low_pc, high_pc, frame_base -> compiled",
    _ordered(_NAME, _LINKAGE, _LOW, _HIGH, _FRAME),
    accepts(),
)
case(
    "name-before-linkage-name.no-depot",
    "name-before-linkage-name",
    "name, DW_AT_MIPS_linkage_name, ... with a constant-valued variable instead -> compiled",
    _ordered(_NAME, _MIPS, _LOW, _HIGH, _FRAME, depot=False),
    accepts(),
)
case(
    "depot-in-pieces.fixture",
    "depot-in-pieces",
    "fixtures/lint/faults/depot-in-pieces.ptx (clang's parameter kernel_struct/out as DW_OP_piece 5 and "
    "DW_OP_piece 3 of its depot address) -> fatal 'Attempted to Dereference Out of Bounds'",
    _fault("depot-in-pieces"),
    rejects("Attempted to Dereference Out of Bounds"),
    any_version=True,
    holds_on=("12.9", "13.0"),
)
case(
    "depot-in-pieces.clang",
    "depot-in-pieces",
    "fixtures/clang/rich.O1.ptxas-crash.sm_75.ptx (clang -O1: parameter r is DW_OP_piece 17; DW_OP_addr "
    "__local_depot5; DW_OP_piece 3) -> fatal 'Attempted to Dereference Out of Bounds'",
    lambda: h.fixture("clang/rich.O1.ptxas-crash.sm_75.ptx"),
    rejects("Attempted to Dereference Out of Bounds"),
    holds_on=("12.9", "13.0"),
)
case(
    "label-at-line-zero.fixture",
    "label-at-line-zero",
    "fixtures/lint/faults/label-at-line-zero.ptx ($L__tmp12: then .loc 1 0 5) -> $L__tmp12 is an undefined symbol of the cubin",
    _fault("label-at-line-zero"),
    lambda run: (
        run.cubin is not None and run.cubin.symbols.get("$L__tmp12", (0, 1))[1] == 0,
        run.summary() if run.cubin is None else f"$L__tmp12: {run.cubin.symbols.get('$L__tmp12')}",
    ),
    any_version=True,
)

# --- timing ----------------------------------------------------------------------------------------

_N = 60000
case(
    "long-list.one-list",
    "long-list-quadratic",
    f"one .b8 list of {_N} values takes over 1 s (the same bytes 64 per directive: well under 0.1 s)",
    lambda: with_info(section(".debug_str", ".b8 " + ", ".join(["1"] * _N))),
    lambda run: (run.returncode == 0 and run.seconds > 1.0, f"{run.summary()} in {run.seconds:.2f} s"),
    timing=True,
)
case(
    "long-list.short-lists",
    "long-list-quadratic",
    f"{_N} values 64 per directive take under 1 s",
    lambda: with_info(section(".debug_str", "\n".join([".b8 " + ", ".join(["1"] * 64)] * (_N // 64)))),
    lambda run: (run.returncode == 0 and run.seconds < 1.0, f"{run.summary()} in {run.seconds:.2f} s"),
    timing=True,
)


def _nameless_subprogram() -> tuple[str, int]:
    rows = [r if r[0] != h.SUBPROGRAM else (h.SUBPROGRAM, 0x2E, 1, r[3][:3]) for r in h.ABBREV_BYTES]
    sub = die(
        h.SUBPROGRAM, ".b64 $L__func_begin1", ".b64 $L__func_end1", b8(1, 0x9C), children=[h.depot_var()]
    )
    text, marks = info(sub)
    return module(h.abbrev_table(rows), text), marks["depot"]


_nameless, _nameless_depot = _nameless_subprogram()
case(
    "depot-needs-subprogram-name.nameless",
    "depot-needs-subprogram-name",
    "a subprogram without DW_AT_name -> its DW_OP_addr __local_depot1 is left as is (0, not DW_OP_fbreg)",
    lambda: _nameless,
    bytes_at(".debug_info", _nameless_depot - 1, b"\x03" + bytes(8)),
)

# --- code ptxas -g cannot compile -------------------------------------------------------------------


def _scoped(declaration: str, use: str, *, debug: bool = False) -> Callable[[], str]:
    """A kernel declaring ``declaration`` in its body (no debug section unless ``debug``)."""
    code = f""".visible .entry k(.param .u64 out)
{{
\t{declaration}
\t.reg .u64 %rd<3>;
\t.reg .b32 %r<2>;
\tld.param.u64 %rd1, [out];
\t{use}
\tst.global.u32 [%rd1], %r1;
\tret;
}}
"""
    return lambda: module(*((ABBREV, info()[0]) if debug else ()), version="7.0", code=code)


case(
    "scoped-initializer.global",
    "scoped-initializer",
    "'.global .b32 g[1] = {7};' inside a kernel, no debug section, -g -> killed by SIGSEGV",
    _scoped(".global .b32 g[1] = {7};", "ld.global.u32 %r1, [g];"),
    crashes(),
)
case(
    "scoped-initializer.const-scalar",
    "scoped-initializer",
    "'.const .b32 g = 7;' inside a kernel, -g -> killed by SIGSEGV",
    _scoped(".const .b32 g = 7;", "ld.const.u32 %r1, [g];"),
    crashes(),
)
case(
    "scoped-initializer.with-info",
    "scoped-initializer",
    "the .global one with debug sections -> killed by SIGSEGV",
    _scoped(".global .b32 g[1] = {7};", "ld.global.u32 %r1, [g];", debug=True),
    crashes(),
)
case(
    "scoped-initializer.no-initializer",
    "scoped-initializer",
    "'.global .b32 g[1];' (no initializer) inside a kernel, -g -> compiled",
    _scoped(".global .b32 g[1];", "ld.global.u32 %r1, [g];"),
    accepts(),
)
case(
    "scoped-initializer.without-g",
    "scoped-initializer",
    "the .global one without -g -> compiled",
    _scoped(".global .b32 g[1] = {7};", "ld.global.u32 %r1, [g];"),
    accepts(),
    args=("-arch=sm_75",),
)

# --- DW_FORM_indirect ---------------------------------------------------------------------------------


def _indirect(levels: int) -> Callable[[], str]:
    """A CU-level variable whose name has form DW_FORM_indirect in the abbreviation, with
    ``levels - 1`` more DW_FORM_indirect codes in the data before DW_FORM_string "v"."""
    rows = [(1, 0x11, 1, [(0x03, 0x08)]), (2, 0x34, 0, [(0x03, 0x16)])]
    var = die(2, b8(*([0x16] * (levels - 1)), 0x08, 0x76, 0))
    return lambda: custom_abbrev(rows, var)


case(
    "dwarf4-form.indirect",
    "dwarf4-form",
    "DW_AT_name as DW_FORM_indirect -> DW_FORM_string in a version 2 unit -> accepted, the name kept",
    _indirect(1),
    bytes_at(".debug_info", 15, bytes([0x08, 0x76, 0])),
)
case(
    "dwarf4-form.indirect-nested",
    "dwarf4-form",
    "DW_FORM_indirect -> DW_FORM_indirect -> DW_FORM_string -> exit 1, no message",
    _indirect(2),
    lambda run: (run.returncode == 1 and run.cubin is None, run.summary()),
)

_TWO_RETURNS = """.func (.reg .u32 a, .reg .pred b) two(.reg .u32 x)
{
\tadd.u32 a, x, 1;
\tsetp.eq.u32 b, x, 0;
\tret;
}

.visible .entry k(.param .u64 out)
{
\t.reg .u64 %rd<2>;
\t.reg .u32 %r<3>;
\t.reg .pred %p<2>;
\tld.param.u64 %rd1, [out];
\tmov.u32 %r1, 5;
\tcall (%r2, %p1), two, (%r1);
\tst.global.u32 [%rd1], %r2;
\tret;
}
"""

case(
    "multiple-returns.g",
    "multiple-returns",
    "a .func returning two values, -g -> 'Function with multiple return values is not allowed with ABI'",
    lambda: module(version="7.0", code=_TWO_RETURNS),
    rejects("multiple return values is not allowed with ABI"),
)
case(
    "multiple-returns.without-g",
    "multiple-returns",
    "the same without -g -> compiled (warning: 'disabling ABI')",
    lambda: module(version="7.0", code=_TWO_RETURNS),
    accepts(),
    args=("-arch=sm_75",),
)

# --- which labels at line 0 ptxas drops ----------------------------------------------------------

_LINE_ZERO_CODE = """\
.visible .entry _Z1kPi(.param .u64 _Z1kPi_param_0)
{
\t.reg .pred %p<2>;
\t.reg .b32 %r<2>;
\t.reg .b64 %rd<2>;
\t.loc 1 1 5
$L__top:
\tld.param.u64 %rd1, [_Z1kPi_param_0];
\tld.global.u32 %r1, [%rd1];
BRANCH$L__x:
\t.loc 1 0 5
\tst.global.u32 [%rd1+4], %r1;
\t.loc 1 10 5
\tst.global.u32 [%rd1+8], %r1;
$L__next:
\t.loc 1 NEXT 5
\tst.global.u32 [%rd1+12], %r1;
\t.loc 1 20 5
\tret;
}
"""


_CALLEE = """
.func _Z1vv()
{
\tret;
}
"""
_LINE_TEN = "\t.loc 1 10 5\n\tst.global.u32 [%rd1+8], %r1;\n"


def _line_zero_case(
    id: str,
    expected: str,
    dropped: bool,
    next_line: int,
    branch: str = "",
    after: str = "",
    line_ten: str | None = None,
    prelude: str = "",
) -> None:
    """``$L__x`` (code at line 0) used by a DIE: dropped or not. ``line_ten`` replaces the
    code at line 10; ``prelude`` goes before the kernel."""

    def make() -> tuple[str, int]:
        code = _LINE_ZERO_CODE.replace("BRANCH", branch).replace("NEXT", str(next_line))
        code = code.replace("$L__x:\n", "$L__x:\n" + after)
        if line_ten is not None:
            code = code.replace(_LINE_TEN, line_ten)
        text, marks = info(die(h.VAR_DATA8, "v:.b64 $L__x"))
        return module(ABBREV, text, code=prelude + code), marks["v"]

    offset = make()[1]

    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        r = run.cubin.relocation_at(".debug_info", offset)
        seen = f"{r.symbol}+{r.addend}" if r else "no relocation"
        return (r is None) == dropped, seen

    case(id, "label-at-line-zero", expected, lambda: make()[0], check)


_line_zero_case(
    "label-at-line-zero.leads-to-a-line",
    "a label whose code is at line 0 and whose block leads to a new label with code at line 11 -> dropped "
    "(no relocation, reads 0)",
    True,
    11,
)
_line_zero_case(
    "label-at-line-zero.leads-to-line-zero",
    "the same, the next label's code at line 0 too -> kept",
    False,
    0,
)
_line_zero_case(
    "label-at-line-zero.named-before",
    "the same with a branch to the next label before the label -> kept (the next label was named before)",
    False,
    11,
    "\tsetp.eq.s32 %p1, %r1, 0;\n\t@%p1 bra $L__next;\n",
)
_line_zero_case(
    "label-at-line-zero.doubled",
    "the first case with a second label right after the label -> kept, at its own offset (the label's block "
    "now leads to a label whose code is at line 0; the second label is the one dropped)",
    False,
    11,
    after="$L__y:\n",
)


def _moved_next_case(id: str, expected: str, pad: str, moved: bool) -> None:
    """``_Z1kPi`` drops ``$L__x`` (its code at line 0; nothing refers to it) and ``_Z1jPi``, a
    copy with line 9 instead, keeps it: ``$L__next`` of the first is relocated to where
    ``$L__x`` is in the second when ``moved``, else to where ``$L__next`` is there."""

    def make() -> tuple[str, dict[str, int]]:
        dropping = _LINE_ZERO_CODE.replace("BRANCH", "").replace("NEXT", "11")
        dropping = dropping.replace("$L__next:\n", pad + "$L__next:\n")
        keeping = (
            _LINE_ZERO_CODE.replace("BRANCH", "").replace("NEXT", "11").replace(".loc 1 0 5", ".loc 1 9 5")
        )
        keeping = keeping.replace("_Z1kPi", "_Z1jPi").replace("$L__", "$L__j_")
        text, marks = info(
            die(h.VAR_DATA8, "next:.b64 $L__next"),
            die(h.VAR_DATA8, "x:.b64 $L__j_x"),
            die(h.VAR_DATA8, "j_next:.b64 $L__j_next"),
        )
        return module(ABBREV, text, code=dropping + "\n" + keeping), marks

    check = _addends_check(
        make()[1], lambda a: a["x"] != a["j_next"] and a["next"] == (a["x"] if moved else a["j_next"])
    )
    case(id, "label-at-line-zero", expected, lambda: make()[0], check)


def _addends_check(
    marks: dict[str, int], verdict: Callable[[dict[str, int]], bool]
) -> Callable[[Run], tuple[bool, str]]:
    """A case's check: the addend of the relocation at each of ``marks`` (name -> offset in
    ``.debug_info``), all of which must have one, judged by ``verdict``."""

    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        got = {m: run.cubin.relocation_at(".debug_info", offset) for m, offset in marks.items()}
        seen = ", ".join(
            f"{m}: {r.symbol}+{r.addend}" if r else f"{m}: no relocation" for m, r in sorted(got.items())
        )
        addends = {m: r.addend for m, r in got.items() if r is not None and r.addend is not None}
        return len(addends) == len(got) and verdict(addends), seen

    return check


_moved_next_case(
    "label-at-line-zero.next-moves",
    "the label after a dropped one ($L__x, which nothing refers to) -> relocated to where $L__x would be "
    "(next = x of a copy that keeps $L__x), before the code between them",
    "",
    True,
)
_moved_next_case(
    "label-at-line-zero.next-padded",
    "the same with a label inserted right before the next one (fix's $L__ptxdwarf_pad) -> the next label "
    "keeps its place (next = j_next of the copy)",
    "$L__pad:\n",
    False,
)


_line_zero_case(
    "label-at-line-zero.call-then-label",
    "a label whose code is at line 0, its block a call at line 10 right before a label with code at line 11 "
    "-> dropped (the block leads to that label)",
    True,
    11,
    line_ten="\t.loc 1 10 5\n\tcall.uni _Z1vv, ();\n",
    prelude=_CALLEE,
)
_line_zero_case(
    "label-at-line-zero.call-then-code",
    "the same with an instruction between the call and the label -> kept (a call ends the block as a "
    "conditional branch does: it leads to code without a label)",
    False,
    11,
    line_ten="\t.loc 1 10 5\n\tcall.uni _Z1vv, ();\n\tst.global.u32 [%rd1+8], %r1;\n",
    prelude=_CALLEE,
)

#: The dropped label's block branches over ``$L__next`` (code at line 11) to ``$L__far`` (line 15).
_BRANCHING_CODE = (
    _LINE_ZERO_CODE.replace("NEXT", "11")
    .replace(
        "\tst.global.u32 [%rd1+8], %r1;\n$L__next:",
        "\tst.global.u32 [%rd1+8], %r1;\n\tbra.uni $L__far;\n$L__next:",
    )
    .replace(
        "\t.loc 1 20 5\n\tret;",
        "$L__far:\n\t.loc 1 15 5\n\tst.global.u32 [%rd1+16], %r1;\n\t.loc 1 20 5\n\tret;",
    )
)


def _moved_target_case(id: str, expected: str, edit: Callable[[str], str], moved: str, kept: str) -> None:
    """``_Z1kPi`` drops ``$L__x``; ``_Z1jPi``, a copy with line 9 instead of 0, keeps it. Of
    ``moved`` and ``kept``, labels of the first, the one must be relocated to where ``$L__x`` is in
    the second, the other to where it is itself in the second."""

    def make() -> tuple[str, dict[str, int]]:
        dropping = edit(_BRANCHING_CODE.replace("BRANCH", ""))
        keeping = (
            dropping.replace(".loc 1 0 5", ".loc 1 9 5").replace("_Z1kPi", "_Z1jPi").replace("$L__", "$L__j_")
        )
        text, marks = info(
            die(h.VAR_DATA8, f"moved:.b64 {moved}"),
            die(h.VAR_DATA8, f"kept:.b64 {kept}"),
            die(h.VAR_DATA8, "x:.b64 $L__j_x"),
            die(h.VAR_DATA8, f"j_kept:.b64 {kept.replace('$L__', '$L__j_')}"),
        )
        return module(ABBREV, text, code=dropping + "\n" + keeping), marks

    check = _addends_check(
        make()[1], lambda a: a["moved"] == a["x"] and a["kept"] == a["j_kept"] and a["x"] != a["j_kept"]
    )
    case(id, "label-at-line-zero", expected, lambda: make()[0], check)


_moved_target_case(
    "label-at-line-zero.branch-target-moves",
    "a dropped label whose block ends with a bra.uni over the next label ($L__next, line 11) to $L__far "
    "(line 15) -> $L__far is relocated to where $L__x would be, $L__next keeps its place",
    lambda code: code,
    "$L__far",
    "$L__next",
)
_moved_target_case(
    "label-at-line-zero.branch-padded",
    "the same with a label inserted right before $L__far -> $L__far still moves (the block still leads to "
    "it), the inserted label keeps its place",
    lambda code: code.replace("$L__far:\n", "$L__pad:\n$L__far:\n"),
    "$L__far",
    "$L__pad",
)
_moved_target_case(
    "label-at-line-zero.branch-to-pad",
    "the same with the bra.uni sent to the inserted label -> the inserted label moves, $L__far keeps its "
    "place (what fix does)",
    lambda code: code.replace("$L__far:\n", "$L__pad:\n$L__far:\n").replace(
        "bra.uni $L__far", "bra.uni $L__pad"
    ),
    "$L__pad",
    "$L__far",
)


#: A variable with DW_AT_address_class (data1) before DW_AT_location (block1).
_CLASS_ROWS = [(1, 0x11, 1, [(0x03, 0x08)]), (2, 0x34, 0, [(0x33, 0x0B), (0x02, 0x0A)])]
#: Where that variable's class and DW_OP_addr operand land (header 11, CU DIE 3, code 1).
_CLASS_AT, _OPERAND_AT = 15, 18


def _class_module(address_class: int, symbol: str) -> str:
    var = die(2, b8(address_class), b8(9, 0x03), f".b64 {symbol}")
    text, _ = info(var)
    return module(h.abbrev_table(_CLASS_ROWS), text, code=_TWO_SHARED)


def _class_kept(address_class: int, reloc: tuple[int, str] | None) -> Callable[[Run], tuple[bool, str]]:
    """The class byte reads ``address_class`` in the cubin; the operand is relocated as ``reloc``
    (type, symbol), or not at all and not 0 (an offset in the shared window)."""

    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        data = run.cubin.get(".debug_info") or b""
        got = data[_CLASS_AT] if len(data) > _CLASS_AT else None
        operand = int.from_bytes(data[_OPERAND_AT : _OPERAND_AT + 8], "little")
        r = run.cubin.relocation_at(".debug_info", _OPERAND_AT)
        seen = f"class {got}, operand 0x{operand:x}, " + (
            f"reloc type {r.type} {r.symbol}" if r else "no relocation"
        )
        placed = (r is not None and (r.type, r.symbol) == reloc) if reloc else (r is None and operand != 0)
        return got == address_class and placed, seen

    return check


case(
    "address-class-as-written.shared-as-global",
    "address-class-as-written",
    "a variable of class 5 (global) at DW_OP_addr sh0, a .shared variable (LLVM 14's description) -> "
    "compiled; the class stays 5 and the operand is sh0's offset in the shared window (4), no relocation: "
    "an offset a debugger would read as an address of global memory",
    lambda: _class_module(5, "sh0"),
    _class_kept(5, None),
)
case(
    "address-class-as-written.global-as-generic",
    "address-class-as-written",
    "a variable of class 12 (generic) at DW_OP_addr g1, a .global variable (LLVM 22's description) -> "
    "compiled; the class stays 12 and the operand is relocated R_CUDA_64 against g1: g1's address, which "
    "is also its generic address",
    lambda: _class_module(12, "g1"),
    _class_kept(12, (2, "g1")),
)
