"""The measurements behind docs/ptxas-facts.md, one :class:`~.case.Case` each.

Case ids are ``<fact>.<variant>`` where the fact is a quirk of
:mod:`ptxdwarf.cuda.quirks`; plain facts (syntax ptxas takes, rewrites it makes) have
ids of their own (``syntax.*``, ``rewrite.*``, ``header.*``, ``sections.*``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import harness as h
from .case import Case, accepts, bytes_at, crashes, rejects, relocated, show
from .harness import ABBREV, Run, b8, cstring, die, info, module, section, subprogram

__all__ = ["CASES"]

CASES: list[Case] = []

_ZERO8 = bytes(8)


def case(id: str, fact: str, expected: str, ptx: Callable[[], str | bytes], check: Callable[[Run], tuple[bool, str]], **kw: object) -> None:
    CASES.append(Case(id, fact, expected, ptx, check, **kw))  # type: ignore[arg-type]


def with_info(*sections: str, **kw: object) -> str:
    """A module with the abbrev table, an empty CU and ``sections``."""
    return module(ABBREV, info()[0], *sections, **kw)  # type: ignore[arg-type]


def in_str(body: str, **kw: object) -> Callable[[], str]:
    """A module whose ``.debug_str`` is ``body`` (the value under test is at offset 0)."""
    return lambda: with_info(section(".debug_str", body), **kw)


def value_in_info(directive_text: str, code: int = h.VAR_DATA8, *extra: str, **kw: object) -> tuple[str, int]:
    """A module with one CU-level DIE ``code`` holding ``directive_text`` (mark ``v``), and its offset."""
    text, marks = info(die(code, "v:" + directive_text), **kw)  # type: ignore[arg-type]
    return module(ABBREV, text, *extra), marks["v"]


def info_case(id: str, fact: str, expected: str, directive_text: str, make_check: Callable[[int], Callable[[Run], tuple[bool, str]]], code: int = h.VAR_DATA8, *extra: str) -> None:
    ptx, offset = value_in_info(directive_text, code, *extra)
    case(id, fact, expected, lambda: ptx, make_check(offset))


# --- wide literals -----------------------------------------------------------------------

F = "wide-literal-truncated"
case("wide.b64-hex", F, ".b64 0x123456789abcdef0 -> f0 de bc 9a 00 00 00 00", in_str(".b64 0x123456789abcdef0"),
     bytes_at(".debug_str", 0, bytes.fromhex("f0debc9a00000000")))
case("wide.b64-2pow32", F, ".b64 4294967296 -> 8 zero bytes", in_str(".b64 4294967296"), bytes_at(".debug_str", 0, _ZERO8))
case("wide.b64-max", F, ".b64 18446744073709551615 -> ff ff ff ff 00 00 00 00", in_str(".b64 18446744073709551615"),
     bytes_at(".debug_str", 0, bytes.fromhex("ffffffff00000000")))
case("wide.quad", F, ".quad 0x123456789abcdef0 -> f0 de bc 9a 00 00 00 00", in_str(".quad 0x123456789abcdef0"),
     bytes_at(".debug_str", 0, bytes.fromhex("f0debc9a00000000")))
info_case("wide.in-info-v70", F, ".b64 0x123456789abcdef0 in .debug_info at .version 7.0 -> low 32 bits",
          ".b64 0x123456789abcdef0", lambda off: bytes_at(".debug_info", off, bytes.fromhex("f0debc9a00000000")))
case("wide.b32-2pow32", F, ".b32 4294967296 -> 00 00 00 00, no error", in_str(".b32 4294967296"), bytes_at(".debug_str", 0, bytes(4)))
case("wide.b8-mod", F, ".b8 4294967297 -> 01 (reduced mod 2^32 before the range check)", in_str(".b8 4294967297"),
     bytes_at(".debug_str", 0, b"\x01"))
case("syntax.negative-b64-exact", "syntax.negative", ".b64 -4294967296 -> 00 00 00 00 ff ff ff ff (exact)",
     in_str(".b64 -4294967296"), bytes_at(".debug_str", 0, bytes.fromhex("00000000ffffffff")))
case("syntax.b8-out-of-range", "syntax.range", ".b8 256 -> 'Value out of range for type .b8'", in_str(".b8 256"),
     rejects(r"Value out of range for type \.b8 256"))

# --- syntax ptxas takes in debug sections ----------------------------------------------------

for cid, body, want in (
    ("syntax.octal", ".b8 017", "0f"),
    ("syntax.binary", ".b8 0b101, 0B101", "0505"),
    ("syntax.u-suffix", ".b8 1U, 2U", "0102"),
    ("syntax.aliases", ".byte 1\n.4byte 2\n.quad 3", "01" + "02000000" + "0300000000000000"),
    ("syntax.same-line", ".b8 1 .b32 2", "0102000000"),
    ("syntax.continuation", ".b8 1, 2,\n3, 4", "01020304"),
    ("syntax.leading-comma", ".b8 1, 2\n, 3, 4", "01020304"),
    ("syntax.packed", ".b8 1\n.b16 2\n.b32 3\n.b64 4", "01" + "0200" + "03000000" + "0400000000000000"),
):
    case(cid, cid, f"{body!r} -> {want}", in_str(body), bytes_at(".debug_str", 0, bytes.fromhex(want)))
for cid, body, near in (
    ("syntax.no-semicolon", ".b8 1;", ";"),
    ("syntax.no-lowercase-u", ".b8 1u, 2", ","),
    ("syntax.no-expressions", ".b8 1+2", r"\+"),
    ("syntax.no-trailing-comma", ".b8 1, 2,", "}"),
    ("syntax.no-char-literal", ".b8 'a'", "'"),
):
    case(cid, cid, f"{body!r} -> Parsing error near '{near}'", in_str(body), rejects(f"Parsing error near '{near}"))
case("syntax.empty-section", "syntax.empty-section", "an empty .debug_str block -> no .debug_str in the cubin",
     lambda: with_info(section(".debug_str", "")),
     accepts(lambda r: r.cubin is not None and r.cubin.get(".debug_str") is None))

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


def _depot_pair() -> tuple[str, int, int]:
    text, marks = info(subprogram(h.depot_var(), die(h.VAR_BLOCK, b8(11, 0x03), "d8:.b64 __local_depot1+8", b8(0x23, 0))))
    return module(ABBREV, text), marks["depot"], marks["d8"]


_dp, _d0, _d8 = _depot_pair()


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
          ".b64 $L__nosuch", lambda off: bytes_at(".debug_info", off, _ZERO8))

# --- abbreviations, forms, headers -------------------------------------------------------------


def _custom_abbrev(rows: list[tuple[int, int, int, list[tuple[int, int]]]], *dies: h.Die, version: int = 2, address_size: int = 8) -> str:
    text, _ = info(*dies, version=version, address_size=address_size)
    return module(h.abbrev_table(rows), text)


def _typed_var(type_code: int, rows: list[tuple[int, int, int, list[tuple[int, int]]]], version: int = 2) -> str:
    """A depot variable (code 9: location block1, type ref4) whose type is a base type DIE of code ``type_code``."""
    rows = [*rows, (9, 0x34, 0, [(0x02, 0x0A), (0x49, 0x13)]), (type_code, 0x24, 0, [(0x03, 0x08), (0x3E, 0x0B), (0x0B, 0x0B)])]

    def tree(ref: int) -> list[h.Die]:
        var = die(9, b8(11, 0x03), ".b64 __local_depot1", b8(0x23, 0), f".b32 {ref}")
        base = [h.Entry(".b8", str(type_code), "type"), cstring("int"), b8(5, 4)]
        return [subprogram(var), base]

    _, marks = info(*tree(0), version=version)
    text, _ = info(*tree(marks["type"]), version=version)
    return module(h.abbrev_table(rows), text)


case("abbrev-code-order.gap", "abbrev-code-order",
     "a type reference to a DIE of code 12 in a table of 10 codes -> fatal 'Attempted to Dereference Out of Bounds'",
     lambda: _typed_var(12, list(h.ABBREV_BYTES)), rejects("Attempted to Dereference Out of Bounds"))
case("abbrev-code-order.dense", "abbrev-code-order", "the same module with codes 1..10 -> accepted",
     lambda: _typed_var(10, list(h.ABBREV_BYTES)), accepts())



def _form_case(form: int, version: int) -> Callable[[], str]:
    """A subprogram whose abbreviation adds DW_AT_external with ``form`` (flag: 1 byte; flag_present: none)."""
    attrs = [*h.ABBREV_BYTES[h.SUBPROGRAM - 1][3], (0x3F, form)]
    rows = [r if r[0] != h.SUBPROGRAM else (h.SUBPROGRAM, 0x2E, 1, attrs) for r in h.ABBREV_BYTES]
    values: list[h.Entry | str] = [".b64 $L__func_begin1", ".b64 $L__func_end1", b8(1, 0x9C), cstring("f")]
    if form == 0x0C:
        values.append(b8(1))
    sub = die(h.SUBPROGRAM, *values, children=[h.depot_var()])
    return lambda: _custom_abbrev(rows, sub, version=version)


case("dwarf4-form.flag-present-v4", "dwarf4-form",
     "DW_FORM_flag_present on a subprogram in a version 4 unit -> 'Error in get_form_value default', exit 1",
     _form_case(0x19, 4), rejects("Error in get_form_value default", exit_code=1))
case("dwarf4-form.flag-v4", "dwarf4-form", "the same with DW_FORM_flag -> accepted", _form_case(0x0C, 4), accepts())
case("header.dwarf5", "header.dwarf5", "a version 5 unit (v5 header) with a __local_depot variable -> accepted, depot rewritten",
     lambda: module(ABBREV, info(subprogram(h.depot_var()), version=5)[0]),
     lambda run: (run.returncode == 0 and run.cubin is not None and b"\x91" in (run.cubin.get(".debug_info") or b""), run.summary()))


case("reloc-width.addr-b32", "reloc-width", "address_size 8 and a .b32 DW_FORM_addr value -> 'Attempted to Dereference Out of Bounds'",
     lambda: module(ABBREV, info(subprogram(die(h.LABEL_ADDR, ".b32 $L__func_end1"), h.depot_var(), h.depot_var()))[0]),
     rejects("Attempted to Dereference Out of Bounds"))
case("header.cu-address-size-4", "header.cu-address-size-4", "CU address_size 4, .b32 $L__func_end0 as DW_FORM_addr -> R_CUDA_32",
     lambda: module(ABBREV, info(die(h.LABEL_ADDR, ".b32 $L__func_end0"), address_size=4)[0]),
     relocated(".debug_info", 15, 1, "_Z3addii", None, None, width=4))
case("address-size.32-debug", "address-size", ".address_size 32 with -g -> fatal '.address_size of 32 bits for -g compilation'",
     lambda: with_info(address_size=".address_size 32"), rejects("address_size of 32 bits for -g compilation"))
case("header.address-size-missing", "header.address-size-missing", "no .address_size with -g -> the same fatal error",
     lambda: with_info(address_size=None), rejects("address_size of 32 bits for -g compilation"))

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

# --- sections --------------------------------------------------------------------------------------

case("duplicate-section.second-str-dropped", "duplicate-section", "a second .debug_str block -> silently dropped",
     lambda: with_info(section(".debug_str", ".b8 1, 2"), section(".debug_str", ".b8 3, 4")),
     bytes_at(".debug_str", 0, b"\x01\x02", size=4))
case("duplicate-section.second-info", "duplicate-section", "a second .debug_info block -> a second ELF section named .debug_info",
     lambda: module(ABBREV, info()[0], info()[0]),
     lambda run: (run.cubin is not None and run.cubin.count(".debug_info") == 2,
                  f"{run.cubin.count('.debug_info')} .debug_info sections" if run.cubin else run.summary()))
case("producer-debug-line.discarded", "producer-debug-line", "a producer's .debug_line -> discarded, ptxas writes its own",
     lambda: with_info(section(".debug_line", ".b8 1, 2, 3, 4")),
     bytes_at(".debug_line", 0, lambda got: got[:4] != b"\x01\x02\x03\x04", size=4))
case("producer-debug-frame.fatal", "producer-debug-frame", "a non-empty .debug_frame -> fatal 'overlapping non-identical data'",
     lambda: with_info(section(".debug_frame", ".b8 1, 2, 3, 4")), rejects("overlapping non-identical data"))
case("sections.debug-frame-empty", "producer-debug-frame", "an empty .debug_frame block -> accepted",
     lambda: with_info(section(".debug_frame", "")), accepts())
case("sections.unknown-name", "sections.any-name", ".section .debug_foo -> copied to the cubin as given",
     lambda: with_info(section(".debug_foo", ".b8 7, 8")), bytes_at(".debug_foo", 0, b"\x07\x08"))
case("sections.no-abbrev", "sections.no-abbrev", ".debug_info without .debug_abbrev -> the CU is skipped with a warning",
     lambda: module(info()[0]), lambda run: (run.returncode == 0 and "debug_abbrev section not found" in run.stderr, run.summary()))

# --- .file, characters, header ---------------------------------------------------------------------

_FILES = '.file 1 "a.cu"\n.file 3 "c.cu"\n.file 7 "g.cu"'


def _file_gaps(run: Run) -> tuple[bool, str]:
    data = run.cubin.get(".debug_line") if run.cubin else None
    if data is None:
        return False, run.summary()
    _, files, used = h.line_files(data)
    names = [f[0].decode() for f in files]
    return names == ["a.cu", "c.cu", "g.cu"] and 7 in used, f"file_names {names}; rows use files {sorted(used)}"


case("file-index.gaps", "file-index", ".file 1, 3, 7 and .loc 7 -> file_names [a, c, g] numbered 1-3, rows still say 7",
     lambda: with_info(files=_FILES, code=h.CODE.replace(".loc 1 5 0", ".loc 7 5 0")), _file_gaps)
case("file-index.duplicate", "file-index", "two .file 1 -> 'Duplicate file index'",
     lambda: with_info(files='.file 1 "a.cu"\n.file 1 "b.cu"'), rejects("Duplicate file index"))
case("file-two-strings.llvm", "file-two-strings", '.file 1 "dir" "name" -> parse error',
     lambda: with_info(files='.file 1 "/tmp" "t.cu"'), rejects("Parsing error"))
case("non-ascii.comment", "non-ascii", "a non-ASCII byte in a comment -> fatal 'Unexpected non-ASCII character'",
     lambda: with_info().encode("ascii") + "// caf\u00e9\n".encode("utf-8"), rejects("non-ASCII character"))
case("non-ascii.file-name", "non-ascii", "a non-ASCII .file name -> fatal 'Unexpected non-ASCII character'",
     lambda: with_info(files='.file 1 "caf\u00e9.cu"').encode("utf-8"), rejects("non-ASCII character"))
case("syntax.nul-in-comment", "syntax.nul", "a NUL byte in a comment -> fatal 'Unexpected EOF'",
     lambda: with_info().encode("ascii") + b"// a\x00b\n", rejects("Unexpected EOF"))
case("syntax.crlf", "syntax.crlf", "CRLF line ends -> accepted",
     lambda: with_info(section(".debug_str", ".b8 1")).replace("\n", "\r\n"), accepts())

_S = section(".debug_str", "$L__a: .b8 97, 0\n$L__b: .b8 98, 0\n.b32 $L__b-$L__a")
case("version-too-low.labels-7.0", "version-too-low", "a label in a section at .version 6.5 -> 'requires PTX ISA .version 7.0'",
     lambda: with_info(section(".debug_str", "$L__a: .b8 97, 0"), version="6.5"), rejects(r"Defining labels in \.section' requires PTX ISA \.version 7\.0"))
case("version-too-low.difference-7.5", "version-too-low", "$L__b-$L__a at .version 7.4 -> 'requires PTX ISA .version 7.5'",
     lambda: with_info(_S, version="7.4"), rejects(r"labels1 - labels2 expression in \.section' requires PTX ISA \.version 7\.5"))
case("version-too-low.difference-at-7.5", "version-too-low", "$L__b-$L__a at .version 7.5 -> accepted",
     lambda: with_info(_S, version="7.5"), accepts())
case("header.max-version-9.0", "header.max-version", ".version 9.1 -> 'Unsupported .version 9.1' (13.0 reads up to 9.0)",
     lambda: with_info(version="9.1"), rejects(r"Unsupported \.version 9\.1"))
case("target-not-debug.dropped", "target-not-debug", "no -g and .target without debug -> no .debug_info in the cubin",
     lambda: with_info(), accepts(lambda r: r.cubin is not None and r.cubin.get(".debug_info") is None), args=("-arch=sm_75",))
case("target-not-debug.debug-target", "target-not-debug", "no -g, .target sm_75, debug -> .debug_info kept",
     lambda: with_info(target="sm_75, debug"), accepts(lambda r: r.cubin is not None and r.cubin.get(".debug_info") is not None), args=("-arch=sm_75",))
case("debug-target-without-info.error", "debug-target-without-info", ".target sm_75, debug and no debug section -> 'Debug information not found'",
     lambda: module(target="sm_75, debug"), rejects("Debug information not found in presence of .target debug"))

# --- strings, location lists, subprograms ---------------------------------------------------------

_STR = section(".debug_str", ".b8 97, 0\n$L__B: .b8 98, 0")


def _strp_twice() -> tuple[str, int, int]:
    text, marks = info(die(h.VAR_STRP, "s1:.b32 $L__B"), die(h.VAR_STRP, "s2:.b32 $L__B"))
    return module(ABBREV, text, _STR), marks["s1"], marks["s2"]


_sp, _s1, _s2 = _strp_twice()


def _strp_check(run: Run) -> tuple[bool, str]:
    data = run.cubin.get(".debug_info") if run.cubin else None
    if data is None:
        return False, run.summary()
    a, b = data[_s1 : _s1 + 4], data[_s2 : _s2 + 4]
    return a == b"\x02\0\0\0" and b == bytes(4), f"first {show(a)}, second {show(b)}"


case("strp-label-reused.second-zero", "strp-label-reused", "two .b32 $L__B (a .debug_str label at 2) in .debug_info -> 2, then 0",
     lambda: _sp, _strp_check)

_LOC = section(".debug_loc", ".b64 $L__func_begin1\n.b64 $L__func_end1\n.b16 11\n.b8 3\n.b64 __local_depot1\n.b8 35, 0\n.b64 0\n.b64 0")
case("orphan-depot-list.fatal", "orphan-depot-list", "a .debug_loc list with a __local_depot address no DIE refers to -> 'Attempted to Dereference Out of Bounds'",
     lambda: module(ABBREV, info(subprogram(h.depot_var()))[0], _LOC), rejects("Attempted to Dereference Out of Bounds"))


def _piece(size: int) -> Callable[[], str]:
    # DW_OP_regx %r1 (a 3-byte ULEB of the name, as nvcc writes), DW_OP_piece size
    expr = [0x90, 0xB2, 0xE4, 0x01, 0x93, size]
    return lambda: module(ABBREV, info(subprogram(die(h.VAR_BLOCK, b8(len(expr), *expr))))[0])


case("piece-size.three", "piece-size", "DW_OP_regx; DW_OP_piece 3 -> fatal ('Checked Data was Invalid' or 'Dereference Out of Bounds')",
     _piece(3), rejects("Checked Data was Invalid|Dereference Out of Bounds"))
case("piece-size.four", "piece-size", "DW_OP_regx; DW_OP_piece 4 -> accepted", _piece(4), accepts())
case("depot-in-pieces.fatal", "depot-in-pieces", "DW_OP_addr __local_depot1; DW_OP_piece 4 -> fatal 'Attempted to Dereference Out of Bounds'",
     lambda: module(ABBREV, info(subprogram(die(h.VAR_BLOCK, b8(11, 0x03), ".b64 __local_depot1", b8(0x93, 4))))[0]),
     rejects("Attempted to Dereference Out of Bounds"))



def _fault(rule: str) -> Callable[[], bytes]:
    return lambda: h.fixture(f"lint/faults/{rule}.ptx")


case("loclist-symbol-with-strp.fixture", "loclist-symbol-with-strp",
     "fixtures/lint/faults/loclist-symbol-with-strp.ptx (nvcc module, .b32 .debug_loc pointers and strp names) -> ptxas fails",
     _fault("loclist-symbol-with-strp"), lambda run: (run.returncode != 0, run.summary()))
case("ref-addr-size.fixture", "ref-addr-size",
     "fixtures/lint/faults/ref-addr-size.ptx (DW_FORM_ref_addr as 4 bytes, version 3) -> 'Attempted to Dereference Out of Bounds'",
     _fault("ref-addr-size"), rejects("Attempted to Dereference Out of Bounds"))
case("name-before-low-pc.fixture", "name-before-low-pc",
     "fixtures/lint/faults/name-before-low-pc.ptx (nvcc module, name moved before low_pc) -> killed by a signal",
     _fault("name-before-low-pc"), crashes())
case("orphan-depot-list.fixture", "orphan-depot-list",
     "fixtures/lint/faults/orphan-depot-list.ptx -> fatal 'Attempted to Dereference Out of Bounds'",
     _fault("orphan-depot-list"), rejects("Attempted to Dereference Out of Bounds"))
case("depot-in-pieces.fixture", "depot-in-pieces",
     "fixtures/lint/faults/depot-in-pieces.ptx -> fatal 'Attempted to Dereference Out of Bounds'",
     _fault("depot-in-pieces"), rejects("Attempted to Dereference Out of Bounds"))
case("label-at-line-zero.fixture", "label-at-line-zero",
     "fixtures/lint/faults/label-at-line-zero.ptx ($L__tmp12: then .loc 1 0 5) -> $L__tmp12 is an undefined symbol of the cubin",
     _fault("label-at-line-zero"),
     lambda run: (run.cubin is not None and run.cubin.symbols.get("$L__tmp12", (0, 1))[1] == 0,
                  run.summary() if run.cubin is None else f"$L__tmp12: {run.cubin.symbols.get('$L__tmp12')}"))

# --- timing ----------------------------------------------------------------------------------------

_N = 60000
case("long-list.one-list", "long-list-quadratic",
     f"one .b8 list of {_N} values takes over 1 s (the same bytes 64 per directive: well under 0.1 s)",
     lambda: with_info(section(".debug_str", ".b8 " + ", ".join(["1"] * _N))),
     lambda run: (run.returncode == 0 and run.seconds > 1.0, f"{run.summary()} in {run.seconds:.2f} s"), timing=True)
case("long-list.short-lists", "long-list-quadratic", f"{_N} values 64 per directive take under 1 s",
     lambda: with_info(section(".debug_str", "\n".join([".b8 " + ", ".join(["1"] * 64)] * (_N // 64)))),
     lambda run: (run.returncode == 0 and run.seconds < 1.0, f"{run.summary()} in {run.seconds:.2f} s"), timing=True)
