"""The ptxas quirk registry: each trap of ptxas's debug-section handling in one place.

A :class:`Quirk` ties together what ptxas does (the measured fact and the ptxas
releases it was measured on), the harness cases that measure it
(``tools/ptxas_facts`` in the repository, ``python -m tools.ptxas_facts --ptxas PATH``), where
ptxdwarf's writers work around it, the lint rule that detects it in someone else's PTX
(an id of ``ptxdwarf.lint.RULES``), and the repairs of the ``fix`` command that fix such
PTX. docs/ptxas-facts.md explains each fact at length.

The registry sits below the features: it names the code of the layers it builds on
(:mod:`ptxdwarf.dwarf`, :mod:`ptxdwarf.ptx`) itself, while the features' workarounds
register themselves with :func:`workaround` and the repairs with
:func:`ptxdwarf.repair.registry.repair`; a quirk names each by its qualified name, and
:meth:`Quirk.workarounds` refuses to answer while one of them is not registered (its
module not imported).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeVar

from ..dwarf import encode, forms
from ..ptx import debug, placement, sections, statements, writer

__all__ = [
    "ERROR",
    "MEASURED_ON",
    "MISREAD_PIECE_SIZES",
    "QUIRKS",
    "RULE_EVIDENCE",
    "WARNING",
    "Quirk",
    "markdown_table",
    "quirk",
    "quirks_for_rule",
    "rule_evidence",
    "rule_severity",
    "workaround",
]

#: The ptxas releases the harness was run on for this registry.
MEASURED_ON = ("12.0", "12.4", "12.9", "13.0", "13.4", "13.5")

#: DW_OP_piece sizes ptxas misreads (quirks piece-size and depot-in-pieces), each with the
#: bytes of operand the opcode it is misread as wants (0: an address). ptxas's expression
#: walker does not know the operand of DW_OP_piece and reads it as the next opcode: 0x03
#: (addr), 0x0c (const4u), 0x10 (constu) and 0x23 (plus_uconst) then want operand bytes, and
#: where the block ends first ptxas dies ("Checked Data was Invalid", or "Attempted to
#: Dereference Out of Bounds"). Measured: a trailing empty piece of these sizes, a piece of 3
#: anywhere and a 16-byte register piece (12.9-13.5); a piece of these sizes after a
#: __local_depot address with fewer bytes after it than that operand (12.9 and 13.0).
MISREAD_PIECE_SIZES: Mapping[int, int] = MappingProxyType({3: 0, 12: 4, 16: 1, 35: 1})

Code = Callable[..., object]
"""A workaround: a function, method or class."""

_C = TypeVar("_C", bound=Code)

#: The features' workarounds, by quirk id, as :func:`workaround` registered them.
_REGISTERED: dict[str, list[Code]] = {}


@dataclass(frozen=True)
class Quirk:
    """One ptxas trap.

    ``holds_on`` lists the releases of ``measured_on`` where every case of ``cases``
    found the fact (empty: the fact, seen once in a larger module, is not reproduced
    by the harness). ``workaround`` holds the code of the layers below the registry
    (:mod:`ptxdwarf.dwarf`, :mod:`ptxdwarf.ptx`) that keeps ptxdwarf's own output clear of
    the trap, ``feature_workarounds`` the qualified names of the features' code that does
    (registered with :func:`workaround`); ``workaround_note`` says what that code does, or
    why there is none. ``lint_rule`` is None only with a ``lint_note`` saying why.
    ``repairs`` names the repairs of the ``fix`` command (registered with
    :func:`ptxdwarf.repair.registry.repair`).
    """

    id: str
    fact: str
    cases: tuple[str, ...]
    holds_on: tuple[str, ...]
    workaround: tuple[Code, ...]
    workaround_note: str
    lint_rule: str | None
    lint_note: str | None = None
    measured_on: tuple[str, ...] = MEASURED_ON
    repairs: tuple[str, ...] = ()
    feature_workarounds: tuple[str, ...] = ()

    def workarounds(self) -> tuple[Code, ...]:
        """``workaround`` and the features' registered workarounds, in the order
        ``feature_workarounds`` names them. LookupError while one of those is not registered
        (import the feature's module first)."""
        registered = {code.__qualname__: code for code in _REGISTERED.get(self.id, ())}
        missing = [name for name in self.feature_workarounds if name not in registered]
        if missing:
            raise LookupError(f"quirk {self.id}: workaround {', '.join(missing)} not registered")
        return self.workaround + tuple(registered[name] for name in self.feature_workarounds)

    def holds_for(self, release: str | None) -> bool:
        """Whether the fact holds for ptxas ``release`` (``"13.0"``; None: for some release
        measured). A release that was not measured takes its measured neighbours' answer:
        one before the first or after the last is taken as that one, one between two as
        holding if it holds on either."""
        if release is None:
            return bool(self.holds_on)
        if release in self.measured_on:
            return release in self.holds_on
        key = _release_key(release)
        measured = sorted(self.measured_on, key=_release_key)
        before = [r for r in measured if _release_key(r) < key]
        after = [r for r in measured if _release_key(r) > key]
        return any(r in self.holds_on for r in (before[-1:] + after[:1]))


def _release_key(release: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in release.split("."))
    except ValueError:
        raise ValueError(f"ptxas release {release!r}: expected MAJOR.MINOR, such as 13.0") from None


def _q(
    id: str,
    fact: str,
    cases: tuple[str, ...],
    workaround: tuple[Code, ...],
    workaround_note: str,
    lint_rule: str | None,
    *,
    holds_on: tuple[str, ...] = MEASURED_ON,
    lint_note: str | None = None,
    repairs: tuple[str, ...] = (),
    feature_workarounds: tuple[str, ...] = (),
) -> Quirk:
    return Quirk(
        id,
        fact,
        cases,
        holds_on,
        workaround,
        workaround_note,
        lint_rule,
        lint_note,
        repairs=repairs,
        feature_workarounds=feature_workarounds,
    )


QUIRKS: tuple[Quirk, ...] = (
    _q(
        "wide-literal-truncated",
        "A non-negative literal is reduced mod 2**32 before the range check: .b64/.quad numbers of 2**32 "
        "or more keep only their low 32 bits, silently (negative .b64 literals are exact).",
        (
            "wide.b64-hex",
            "wide.b64-2pow32",
            "wide.b64-max",
            "wide.quad",
            "wide.in-info-v70",
            "wide.b32-2pow32",
            "wide.b8-mod",
        ),
        (writer._width_of, sections._as_ptxas_keeps),
        "the writer emits a value of 2**32 or more as two .b32 (low word first); the reader keeps what ptxas "
        "keeps (the low 32 bits), so dump and rewrite show what the cubin gets, and check reports each",
        "wide-value",
        repairs=("whole_wide_values",),
    ),
    _q(
        "info-label-difference",
        "A difference of two .debug_info labels inside .debug_info (unit_length as $L__end-$L__start) is fatal: "
        "'Attempted to truncate larger than current size'; differences of .debug_str labels work.",
        ("info-label-difference.unit-length",),
        (encode._InfoEncoder.encode_unit,),
        "the encoder writes unit lengths and DIE offsets as numbers",
        "info-label-difference",
        repairs=("encode_again",),
        holds_on=("13.0", "13.4", "13.5"),
    ),
    _q(
        "symbol-outside-info",
        "Outside .debug_info a data label, a section name or symbol+N becomes 0, with no error and no relocation.",
        ("symbol-outside-info.section-plus-n", "symbol-outside-info.data-label"),
        (encode._encode,),
        "unit offsets in .debug_pubnames/.debug_aranges past offset 0 are written as numbers",
        "symbol-outside-info",
        repairs=("numbers_outside_info",),
    ),
    _q(
        "symbol-addend",
        "In .debug_info, +N on a code label is added in place but not to the RELA addend, +N on a function "
        "symbol goes to the addend only, and +N on __local_depot is dropped.",
        ("symbol-addend.code-label", "symbol-addend.function", "symbol-addend.depot"),
        (),
        "offsets from a symbol are written as DW_OP_plus_uconst after DW_OP_addr, never as symbol+N",
        "symbol-addend",
        feature_workarounds=("_addr_plus",),
    ),
    _q(
        "ptxas-syntax",
        "A symbolic value must be the only value of its .b32/.b64 directive (a label in a comma list is a "
        "syntax error); .b8/.b16 with a symbol is 'Illegal type for dwarf data'; a name with a '.' inside "
        "(not a section name) is \"Parsing error near '.'\".",
        (
            "ptxas-syntax.label-in-list",
            "ptxas-syntax.section-in-list",
            "ptxas-syntax.b8-label",
            "ptxas-syntax.label-minus-n",
            "ptxas-syntax.dotted-symbol",
        ),
        (writer._Lines.segment, writer._readable),
        "every writer style puts a symbol alone on its directive",
        "ptxas-syntax",
        repairs=("rename_dotted_symbols", "encode_again"),
    ),
    _q(
        "undefined-symbol",
        "An undefined label or symbol in a debug section is silently 0.",
        ("undefined-symbol.label",),
        (),
        "attach refuses debug info naming a symbol the module does not declare",
        "undefined-symbol",
        repairs=("rename_mangled_references",),
        feature_workarounds=("check_symbols",),
    ),
    _q(
        "abbrev-code-order",
        "Abbreviation codes must be 1..N in table order: a DIE reference to a DIE whose code is past the "
        "table is fatal ('Attempted to Dereference Out of Bounds').",
        ("abbrev-code-order.gap", "abbrev-code-order.dense"),
        (encode._AbbrevAllocator,),
        "the encoder numbers new abbreviations densely in table order",
        "abbrev-code-order",
        repairs=("renumber_abbrevs",),
        holds_on=("12.9", "13.0", "13.4", "13.5"),
    ),
    _q(
        "dwarf4-form",
        "Forms 0x17 and up (flag_present, exprloc, sec_offset ...) in a DWARF 2-4 unit: 'Error in "
        "get_form_value default', exit code 1. A DW_FORM_indirect whose value is DW_FORM_indirect again: exit "
        "code 1 and no message (one DW_FORM_indirect is fine).",
        (
            "dwarf4-form.flag-present-v4",
            "dwarf4-form.flag-v4",
            "dwarf4-form.indirect",
            "dwarf4-form.indirect-nested",
        ),
        (encode.choose_form, encode.EncodeOptions),
        "the builder writes DWARF 2 by default; DWARF 4 units get flag, block1 and data4 unless "
        "EncodeOptions(dwarf4_forms=True)",
        "dwarf4-form",
        repairs=("dwarf2_forms",),
        feature_workarounds=("DebugInfoBuilder",),
    ),
    _q(
        "ref-addr-size",
        "DW_FORM_ref_addr is read as 8 bytes in every DWARF version; 4 bytes in a version 3 unit: "
        "'Attempted to Dereference Out of Bounds'.",
        ("ref-addr-size.fixture",),
        (encode.choose_form,),
        "the encoder writes DIE references as DW_FORM_ref4",
        "ref-addr-size",
        repairs=("ref4_references",),
    ),
    _q(
        "reloc-width",
        "A .b32 DW_FORM_addr value in a unit with 8-byte addresses was seen to fail with 'Attempted to "
        "Dereference Out of Bounds'; the harness's module does not reproduce it (accepted). Written as the low "
        "half of the field with a 0 high half, ptxas relocates it right (lint does not report that shape). As the "
        "operand of DW_OP_addr __local_depot, a .b32 value is fatal to the expression: ptxas rewrites 5 of its 9 "
        "bytes into DW_OP_fbreg and nops and leaves 4 zero bytes, which no reader decodes. Of a kernel parameter "
        "or a .shared variable, '.b32 X' + '.b32 0' reads right (ptxas writes the offset, as for .b64); of a "
        ".global or .const variable it is relocated R_CUDA_32/G32, the low 32 bits of the address.",
        (
            "reloc-width.addr-b32",
            "reloc-width.low-half",
            "reloc-width.depot-b32",
            "reloc-width.param-b32",
            "reloc-width.shared-b32",
            "reloc-width.global-b32",
        ),
        (forms.fixed_formats,),
        "DW_FORM_addr values are as wide as the unit's address size",
        "reloc-width",
        holds_on=(),
    ),
    _q(
        "address-size",
        "A module with .address_size 32 cannot be compiled with -g ('must match with .address_size of 32 bits "
        "for -g compilation'); CU address_size 4 in a 64-bit module is fine.",
        ("address-size.32-debug",),
        (),
        "attach refuses a module whose .address_size is not 64",
        "address-size",
        feature_workarounds=("attach_ptx", "attach"),
    ),
    _q(
        "address-size-default",
        "Without .address_size, ptxas of CUDA 12 compiling for sm_50, sm_52 or sm_53 takes the module as "
        "32-bit and refuses -g as for .address_size 32 ('must match with .address_size of 32 bits for -g "
        "compilation'); for sm_60 and later the same module is 64-bit and compiles. ptxas of CUDA 13 has no "
        "sm_5x.",
        (
            "address-size-default.sm_50",
            "address-size-default.sm_52",
            "address-size-default.sm_53",
            "address-size-default.fixture",
        ),
        (),
        "attach refuses a module whose .address_size is not 64",
        "address-size-default",
        holds_on=("12.0", "12.4", "12.9"),
        feature_workarounds=("attach_ptx", "attach"),
    ),
    _q(
        "address-class-as-written",
        "ptxas writes DW_AT_address_class as given, whatever the state space of the variable DW_OP_addr "
        "names: class 5 (global) at a .shared variable stays 5 and the operand becomes the variable's offset "
        "in the shared window (no relocation), which a debugger reads as an address of global memory; class "
        "12 (generic) at a .global variable stays 12 and the operand is relocated to the variable's address "
        "(R_CUDA_64), which is also its generic address (whether a debugger reads that right is not measured: "
        "no GPU here).",
        ("address-class-as-written.shared-as-global", "address-class-as-written.global-as-generic"),
        (),
        "the builder gives a variable at a module variable's address the class of its state space",
        "address-class-space",
        repairs=("class_of_state_space",),
    ),
    _q(
        "func-param-address",
        "The address of a .func parameter (.b64 _Z3addii_param_1) is written as 0, no relocation.",
        ("func-param-address.zero",),
        (),
        "attach describes a device function's parameters by the registers ld.param loads them into",
        "func-param-address",
        feature_workarounds=("device_param_location",),
    ),
    _q(
        "duplicate-section",
        "A second block of .debug_str or .debug_abbrev is dropped (labels in it read 0); a second .debug_info "
        "block becomes a second ELF section of that name; a second block of .debug_loc, .debug_ranges, "
        ".debug_pubnames, .debug_pubtypes, .debug_aranges or .debug_macinfo is laid over the first at offset 0: "
        "where they overlap the bytes must be equal, else ptxas fails ('Internal error: overlapping "
        "non-identical data'); a label there compares as its offset in its function.",
        (
            "duplicate-section.second-str-dropped",
            "duplicate-section.second-abbrev-dropped",
            "duplicate-section.second-info",
            "duplicate-section.pubnames-differ",
            "duplicate-section.pubnames-identical",
            "duplicate-section.loc-overlay",
            "duplicate-section.loc-differ",
            "duplicate-section.loc-label-offsets",
            "duplicate-section.loc-label-vs-number",
        ),
        (writer.format_sections,),
        "the writer emits one block per section image",
        "duplicate-section",
        repairs=("merge_blocks",),
    ),
    _q(
        "producer-debug-line",
        "A producer's .debug_line is discarded; ptxas writes its own from .file/.loc.",
        ("producer-debug-line.discarded",),
        (),
        "ptxdwarf writes no .debug_line: line information is .file/.loc (attach writes them)",
        "producer-debug-line",
    ),
    _q(
        "producer-debug-frame",
        "A non-empty .debug_frame block is fatal: 'Internal error: overlapping non-identical data'.",
        ("producer-debug-frame.fatal", "sections.debug-frame-empty"),
        (),
        "ptxdwarf writes no .debug_frame",
        "producer-debug-frame",
    ),
    _q(
        "long-list-quadratic",
        "ptxas takes time quadratic in the length of one comma list (60,000 values: seconds; the same bytes "
        "64 values per directive: hundredths).",
        ("long-list.one-list", "long-list.short-lists"),
        (writer._Lines,),
        "at most 64 values per directive",
        None,
        lint_note="a cost, not a fault: the cubin is right; lint reports what ptxas gets wrong",
    ),
    _q(
        "file-index",
        "ptxas numbers the file_names table densely but rows keep the .loc file numbers: .file indices "
        "with gaps point the line table at the wrong files; a repeated index is an error.",
        ("file-index.gaps", "file-index.duplicate"),
        (),
        "attach writes a single .file 1",
        "file-index",
        feature_workarounds=("attach", "attach_ptx"),
    ),
    _q(
        "loc-file-undeclared",
        "A .loc naming a file number no .file declares is accepted silently; the line table's rows keep the "
        "number, which its file table lacks.",
        ("loc-file-undeclared.accepted",),
        (),
        "attach writes .file 1 and .loc 1 only",
        "loc-file-undeclared",
        feature_workarounds=("attach",),
    ),
    _q(
        "inline-loc",
        "'.loc F L C, function_name LABEL, inlined_at F2 L2 C2' needs PTX ISA 7.0 ('Line information of inline "
        "functions'); without function_name it is a syntax error; F2 L2 C2 must be the location of a preceding "
        ".loc (of any function); LABEL must be a .debug_str label ('Unresolved label'; a label of another debug "
        "section: fatal 'reference to deleted symbol' under -c).",
        (
            "inline-loc.accepted",
            "inline-loc.version-6.5",
            "inline-loc.without-function-name",
            "inline-loc.call-site-unused",
            "inline-loc.call-site-in-earlier-function",
            "inline-loc.unresolved-name",
            "inline-loc.name-outside-str",
        ),
        (),
        "ptxdwarf writes no inlined_at; lint and the version rule (7.0, repaired by fix) see producers' ones",
        "inline-loc",
    ),
    _q(
        "file-two-strings",
        'LLVM\'s two-string .file INDEX "dir" "name" is a syntax error.',
        ("file-two-strings.llvm",),
        (),
        'attach writes .file INDEX "path"',
        "file-two-strings",
        repairs=("join_file_strings",),
        feature_workarounds=("attach",),
    ),
    _q(
        "non-ascii",
        "A non-ASCII byte outside comments (a .file name) is fatal: 'Unexpected non-ASCII character "
        "encountered'; a .file name has no escapes (a backslash separates directories).",
        ("non-ascii.file-name", "non-ascii.file-name-escaped"),
        (writer.format_section,),
        "the section writer's output is ASCII; attach refuses a non-ASCII output name for .file",
        "non-ascii",
        holds_on=("12.4", "12.9", "13.0", "13.4", "13.5"),
        feature_workarounds=("_check_output_name",),
    ),
    _q(
        "non-ascii-comment",
        "A non-ASCII byte in a comment is fatal on 13.0 ('Unexpected non-ASCII character encountered'); "
        "13.4 and 13.5 accept it.",
        ("non-ascii.comment",),
        (),
        "ptxdwarf's own comments are ASCII",
        "non-ascii",
        holds_on=("12.9", "13.0"),
        repairs=("escape_comments",),
    ),
    _q(
        "trailing-nul",
        "A NUL byte after the last line (NVRTC's PTX, as NVIDIA Warp writes it to disk) is fatal on 13.0, "
        "13.4 and 13.5: 'Unexpected EOF encountered'; 12.0, 12.4 and 12.9 accept it.",
        ("trailing-nul.end", "trailing-nul.end-no-newline"),
        (),
        "ptxdwarf writes no NUL byte; attach drops a producer's trailing NUL (rewrite keeps it: it is lossless)",
        "trailing-nul",
        holds_on=("13.0", "13.4", "13.5"),
        repairs=("drop_trailing_nul",),
        feature_workarounds=("without_trailing_nul",),
    ),
    _q(
        "version-too-low",
        "Labels in sections need PTX ISA 7.0 and label differences 7.5 ('Feature ... requires PTX ISA "
        ".version 7.0/7.5 or later'); a debug target needs 3.0.",
        ("version-too-low.labels-7.0", "version-too-low.difference-7.5", "version-too-low.difference-at-7.5"),
        (encode.EncodeOptions,),
        "strings go to .debug_str+offset (any ISA) unless string_labels; attach checks 7.0 for string labels "
        "and 3.0 for the debug target",
        "version-too-low",
        repairs=("raise_version", "no_section_labels"),
        feature_workarounds=("attach", "attach_ptx"),
    ),
    _q(
        "strp-label-reused",
        "A second reference to the same .debug_str label from .debug_info resolves to 0; in a few runs in a "
        "hundred ptxas fails instead with \"label '<garbage bytes>' invalid\" (about 3 % of 400 runs, 13.0 and 13.5).",
        ("strp-label-reused.second-zero",),
        (encode._StringPool.symbol,),
        "every strp reference gets a label of its own (or is .debug_str+offset)",
        "strp-label-reused",
        repairs=("strp_own_values",),
    ),
    _q(
        "bitfield-member-order",
        "A bit-field DW_TAG_member whose DW_AT_name is DW_FORM_strp and comes before DW_AT_bit_size, with "
        "DW_AT_data_member_location after the bit attributes (nvcc's order): 'Checked Data was Invalid' "
        "('Attempted to Dereference Out of Bounds' without DW_AT_bit_offset). data_member_location before the "
        "bit attributes, the name last, or DW_FORM_string: compiles. .debug_loc symbols beside strp values "
        "are fine.",
        (
            "bitfield-member-order.fixture",
            "bitfield-member-order.location-first",
            "bitfield-member-order.name-string",
        ),
        (),
        "the builder writes DW_AT_data_member_location before the bit attributes",
        "bitfield-member-order",
        repairs=("bitfield_location_first",),
        holds_on=("12.9", "13.0", "13.4", "13.5"),
        feature_workarounds=("TypeConstructors._member",),
    ),
    _q(
        "orphan-depot-list",
        "A .debug_loc list no DIE refers to, holding a __local_depot address, was reported to fail with "
        "'Attempted to Dereference Out of Bounds'; no release measured fails on one, with or without a "
        "DW_OP_piece after the address (lint reports nothing: a list is no trap).",
        ("orphan-depot-list.fatal", "orphan-depot-list.pieces"),
        (),
        "a rewrite keeps the producer's lists; the builder writes a list only as a variable's location",
        None,
        lint_note="no rule: the trap was not reproduced, and a rule would be a false alarm on modules ptxas compiles",
        holds_on=(),
    ),
    _q(
        "name-before-linkage-name",
        "A subprogram with a __local_depot location in its subtree whose DW_AT_name precedes its "
        "DW_AT_MIPS_linkage_name kills ptxas (SIGSEGV). Where DW_AT_low_pc sits does not matter; "
        "DW_AT_linkage_name (0x6e), no linkage name, or no __local_depot location: no crash.",
        (
            "name-before-linkage-name.fixture",
            "name-before-linkage-name.mips",
            "name-before-linkage-name.after-low-pc",
            "name-before-linkage-name.nvcc11",
            "name-before-linkage-name.no-linkage",
            "name-before-linkage-name.dwarf4-linkage",
            "name-before-linkage-name.no-depot",
        ),
        (),
        "the builder writes the linkage name before the name, as nvcc does",
        "name-before-linkage-name",
        repairs=("linkage_name_first",),
        feature_workarounds=("DebugInfoBuilder.function",),
    ),
    _q(
        "depot-needs-subprogram-name",
        "ptxas rewrites DW_OP_addr __local_depotN into DW_OP_fbreg only inside a subprogram that has a "
        "DW_AT_name; without one the address is left 0, silently.",
        ("depot-needs-subprogram-name.nameless",),
        (),
        "every subprogram the builder writes has a name",
        None,
        lint_note="no rule yet (found while writing the harness)",
        feature_workarounds=("DebugInfoBuilder.function",),
    ),
    _q(
        "piece-size",
        "ptxas reads a DW_OP_piece operand as an opcode: a piece of 3 bytes (also 12, 16, 35 in places) is "
        "fatal ('Checked Data was Invalid' or 'Dereference Out of Bounds').",
        ("piece-size.three", "piece-size.four"),
        (),
        "attach splits pieces to avoid those sizes",
        None,
        lint_note="no rule yet: which sizes fail depends on where the piece sits, which the harness only samples",
        holds_on=("12.9", "13.0", "13.4", "13.5"),
        feature_workarounds=("_empty_pieces",),
    ),
    _q(
        "depot-in-pieces",
        "A DW_OP_piece of 3, 12, 16 or 35 bytes right after DW_OP_addr __local_depotN (and its "
        "DW_OP_plus_uconst) in a DW_AT_location, with fewer bytes after it than the opcode its operand is "
        "misread as wants (8 for 3, 4 for 12, 1 for 16 and 35), is fatal ('Attempted to Dereference Out of "
        "Bounds', or 'Checked Data was Invalid'): ptxas rewrites the depot address and misreads the piece "
        "(quirk piece-size). A piece of 4 bytes, enough bytes after it, a DW_OP_piece 3 before the address, or "
        "the same expression in a .debug_loc list compiles; a DW_OP_piece 16 before the address compiled in "
        "clang's module and failed in the harness's. clang -O1's by-value kernel parameters are described so.",
        (
            "depot-in-pieces.three",
            "depot-in-pieces.sixteen",
            "depot-in-pieces.four",
            "depot-in-pieces.after-piece-three",
            "depot-in-pieces.list",
            "depot-in-pieces.clang",
            "depot-in-pieces.fixture",
        ),
        (),
        "ptxdwarf's local() locations are a single DW_OP_addr depot; DW_OP_plus_uconst",
        "depot-in-pieces",
        holds_on=("12.9", "13.0"),
    ),
    _q(
        "label-at-end",
        "A function with no label after its last instruction can have a code label relocated to the end of "
        "its code (the size of its .text section), past the instructions that follow the label: the last "
        "label before a final ret in straight-line code, and 24 of the 699 labels of 200 random kernels "
        "(not always the last one). With a label after the last instruction, no label is.",
        ("label-at-end.last-label", "label-at-end.end-label", "label-at-end.random-kernels"),
        (),
        "attach ends every function with a label after its last instruction (as nvcc, NVVM and LLVM do); "
        "check reports a label relocated to its function's end with code after it",
        None,
        lint_note="which label moves is not predictable from the text alone (the random kernels' moved labels "
        "are not simply each function's last); only hand-written PTX lacks an end label",
        feature_workarounds=("_place_locs",),
    ),
    _q(
        "first-label-at-zero",
        "A function's first label, with code before it and after it, no branch before it and a .loc in the "
        "function, is placed at the function's start (offset 0); with a label at the top of the body (nvcc's "
        "$L__func_begin) it is placed right.",
        (
            "first-label-at-zero.entry-block",
            "first-label-at-zero.before-ret",
            "first-label-at-zero.label-at-top",
            "first-label-at-zero.after-branch",
            "first-label-at-zero.at-end",
        ),
        (),
        "attach puts a label before the first instruction of a function whose first label the DIEs use and "
        "ptxas would misplace; check reports such a label",
        "first-label-at-zero",
        repairs=("anchor_first_labels",),
        feature_workarounds=("_anchor_first_labels",),
    ),
    _q(
        "label-at-line-zero",
        "A code label whose first instruction is at line 0 (.loc F 0 C, or no .loc before it) is dropped when "
        "the block it starts "
        "(up to the next label, or the instruction after a branch, a call or a return) holds no barrier or "
        "warp-synchronous instruction (bar., barrier., shfl., vote., match.) and leads to a label not "
        "named before it whose first instruction has a line (the next label, or a branch target in the "
        "block): references to it read 0 (an undefined symbol, or no relocation), and the label the block "
        "leads to is relocated to its place.",
        (
            "label-at-line-zero.fixture",
            "label-at-line-zero.leads-to-a-line",
            "label-at-line-zero.leads-to-line-zero",
            "label-at-line-zero.named-before",
            "label-at-line-zero.doubled",
            "label-at-line-zero.next-moves",
            "label-at-line-zero.next-padded",
            "label-at-line-zero.call-then-label",
            "label-at-line-zero.call-then-code",
            "label-at-line-zero.branch-target-moves",
            "label-at-line-zero.branch-padded",
            "label-at-line-zero.branch-to-pad",
            "label-at-line-zero.random-kernels",
            "label-at-line-zero.random-kernels-barriers",
        ),
        (placement.labels_dropped,),
        "attach never writes line 0; lint predicts the labels ptxas drops (labels_dropped) and names the label "
        "each one's block leads to; check names every dropped label and every label moved before its code "
        "(.nv_debug_line_sass)",
        "label-at-line-zero",
        repairs=("double_dropped_labels",),
    ),
    _q(
        "target-not-debug",
        "Without -g and without ', debug' in .target, ptxas drops .debug_info (the line table it makes from "
        ".loc stays: what line-tables-only producers want); '.target ..., debug' keeps it and compiles as with -g.",
        (
            "target-not-debug.dropped",
            "target-not-debug.line-table-kept",
            "target-not-debug.debug-target",
            "target-not-debug.g-keeps-info",
        ),
        (),
        "attach adds ', debug' to .target (attach_ptx unless debug_target=False)",
        "target-not-debug",
        feature_workarounds=("attach", "attach_ptx"),
    ),
    _q(
        "debug-target-without-info",
        "'.target ..., debug' with no debug section: 'Debug information not found in presence of .target debug'.",
        ("debug-target-without-info.error",),
        (),
        "attach adds ', debug' only together with the debug sections",
        "debug-target-without-info",
    ),
    _q(
        "dwarf-lines",
        "Below PTX ISA 2.0 debug sections are @@DWARF lines (.section NAME, .byte, .4byte, .quad), and a "
        ".section block is refused ('requires PTX ISA .version 2.0'); from 2.0 on @@DWARF lines are refused "
        "('Deprecated feature'). Both forms give the same bytes.",
        ("dwarf-lines.isa-1", "dwarf-lines.isa-2", "dwarf-lines.section-isa-1", "dwarf-lines.section-isa-2"),
        (debug.edit_debug_sections, writer.format_dwarf_lines),
        "the reader reads both forms; a rewrite writes @@DWARF lines in a module below .version 2.0",
        "dwarf-lines-isa",
    ),
    _q(
        "scoped-initializer",
        "A .global or .const variable declared with an initializer inside a function body makes ptxas -g (or a "
        "'.target ..., debug' module) die with SIGSEGV, debug sections or not; without the initializer, at "
        "module scope, or without -g it compiles.",
        (
            "scoped-initializer.global",
            "scoped-initializer.const-scalar",
            "scoped-initializer.with-info",
            "scoped-initializer.no-initializer",
            "scoped-initializer.without-g",
        ),
        (),
        "attach (both paths) refuses such a module, naming the variable",
        "not-debuggable",
        feature_workarounds=("check_debuggable",),
    ),
    _q(
        "multiple-returns",
        "A .func returning more than one value compiles without -g (ptxas disables the ABI for it, with a "
        "warning) but not with -g or a debug target: 'Function with multiple return values is not allowed "
        "with ABI'.",
        ("multiple-returns.g", "multiple-returns.without-g"),
        (),
        "attach (both paths) refuses such a module, naming the function",
        "not-debuggable",
        feature_workarounds=("check_debuggable",),
    ),
    _q(
        "register-unused",
        "ptxas -g maps only the registers the code uses: a register described by DW_OP_regx that no "
        "instruction names (the %r0 a '.reg .b32 %r<N>' declaration creates, and numba never uses) is not in "
        ".nv_debug_info_reg_sass, so a debugger shows it as unavailable. Registers the code uses can be "
        "missing too, when ptxas folds their values away.",
        ("register-unused.declared-only", "register-unused.used"),
        (statements.used_names,),
        "attach describes only the registers the code uses; attach --only-mapped compiles once and leaves out "
        "(or makes empty pieces of) the registers the map lacks",
        None,
        lint_note="describing a register in vain does no harm to the cubin; check lists every described register "
        "the map lacks (unmapped_registers), which lint cannot know without ptxas",
        feature_workarounds=("_registers",),
    ),
    _q(
        "predicate-count",
        "With -g, a function whose subprogram (named after it) describes 52 or more .pred registers by "
        "DW_OP_regx kills ptxas (SIGSEGV) when those predicates guard branches; 51 such never did. Only predicates "
        "count (300 .u16/.u32/.u64/.f32 registers compile), and only those ptxas keeps: 13.5 sometimes survives "
        "52 to 60 (by layout), and 13.5 crashes on 200 predicates guarding instructions where 13.0 does not. "
        "Fewer can crash too, depending on the code: attach's output for a reduced Triton kernel describing "
        "31 predicates and one .b32 register kills 12.9 to 13.5 (and without the .b32, 13.4 and 13.5); the "
        "whole kernel crashed 13.0 with 8 of its predicates described.",
        (
            "predicate-count.52",
            "predicate-count.51",
            "predicate-count.51-of-60",
            "predicate-count.triton.fixture",
            "predicate-count.triton-no-predicates.fixture",
        ),
        (),
        "attach describes no predicate register unless asked (--predicates N, at most 51 per function, the "
        "first declared, with a warning naming the rest); no producer in the corpus describes one",
        "predicate-count",
        holds_on=("12.9", "13.0", "13.4", "13.5"),
        feature_workarounds=("_registers",),
    ),
    _q(
        "described-registers-memory",
        "With -g, ptxas keeps each register a variable describes by a single location live over the variable's "
        "whole scope, and its memory grows with the number of such registers N of a function times its "
        "register operands W: about 6.1 bytes x N x W + 25 bytes x N^2 beyond the code's own, within 6% on a "
        "chain of dependent add.f32 and on cuda-samples' cudaTensorCoreGemm (13.0), and up to 2 KB more per "
        "register per branch or call (numba's opt=False code, 13.5); 1000 described sums of a "
        "chain take over 200 registers and spill where 10 do without. Registers described by a location "
        "list or in a lexical block covering only where they live cost next to nothing.",
        ("described-registers-memory.1000-described", "described-registers-memory.none-described"),
        (),
        "attach describes per function at most the registers cuda.memory.register_budgets allows (ptxas -g "
        "within twice the memory of the code alone; up to 256 per function always), the longest-lived first, with a "
        "warning naming the rest; --max-registers N or all describes more",
        "ptxas-memory",
        feature_workarounds=("_registers",),
    ),
)

_BY_ID: Mapping[str, Quirk] = MappingProxyType({q.id: q for q in QUIRKS})


def quirk(id: str) -> Quirk:
    """The quirk called ``id``; KeyError naming the known ids otherwise."""
    try:
        return _BY_ID[id]
    except KeyError:
        raise KeyError(f"no ptxas quirk {id!r} (known: {', '.join(_BY_ID)})") from None


def quirks_for_rule(rule: str) -> list[Quirk]:
    """The quirks a lint rule detects."""
    return [q for q in QUIRKS if q.lint_rule == rule]


def workaround(*quirk_ids: str) -> Callable[[_C], _C]:
    """Register the decorated function, method or class as a feature's workaround of the
    quirks ``quirk_ids`` (each names it in its ``feature_workarounds``)."""
    for id in quirk_ids:
        quirk(id)

    def register(code: _C) -> _C:
        for id in quirk_ids:
            if code.__qualname__ not in quirk(id).feature_workarounds:
                raise ValueError(f"quirk {id} does not name the workaround {code.__qualname__}")
            _REGISTERED.setdefault(id, []).append(code)
        return code

    return register


def _name(code: Code) -> str:
    return f"{code.__module__}.{code.__qualname__}"


def markdown_table() -> str:
    """The registry as the Markdown table docs/ptxas-facts.md shows (the features'
    workarounds registered: see :meth:`Quirk.workarounds`)."""
    lines = ["| quirk | lint rule | workaround | repair | cases | holds on |", "|---|---|---|---|---|---|"]
    for q in QUIRKS:
        lint = f"`{q.lint_rule}`" if q.lint_rule else f"none: {q.lint_note}"
        refs = ", ".join(f"`{_name(code)}`" for code in q.workarounds()) or "none"
        cases = ", ".join(f"`{c}`" for c in q.cases)
        holds = ", ".join(q.holds_on) or "not reproduced"
        repairs = ", ".join(f"`{r}`" for r in q.repairs) or "none"
        lines.append(f"| `{q.id}` | {lint} | {refs}: {q.workaround_note} | {repairs} | {cases} | {holds} |")
    return "\n".join(lines) + "\n"


ERROR = "error"
WARNING = "warning"

_INVALID = (
    "the DWARF is invalid: ptxas keeps .debug_info and its neighbours byte for byte but for relocation "
    "sites (the corpus's rewrite comparisons, ptxas 12.0-13.5), so every reader of the cubin gets it so"
)

#: Each lint rule's severity, and what its consequence was measured on where no quirk of the rule
#: (with its cases and releases) says it (None: the rule's quirks say). A rule is an error only
#: where the consequence was measured (a ptxas failure or what lands in the cubin) or the DWARF is
#: invalid; what a debugger would do, unmeasured here (no GPU), is a warning. Some rules report a
#: milder case as a warning (the text says which).
RULE_EVIDENCE: Mapping[str, tuple[str, str | None]] = MappingProxyType(
    {
        "missing-address-class": (
            WARNING,
            "not measured: what cuda-gdb makes of a location without a class (LLVM 22 writes none on "
            "register parameters) needs a GPU",
        ),
        "address-class-range": (
            WARNING,
            "not measured: ptxas keeps any code (quirk address-class-as-written); what a debugger does with "
            "a code outside the guide's 1-12 needs a GPU",
        ),
        "address-class-space": (ERROR, None),
        "regx-undeclared": (
            ERROR,
            "quirk register-unused (12.0-13.5): a register no instruction names is not in "
            ".nv_debug_info_reg_sass, so the variable is unavailable",
        ),
        "regx-too-long": (
            ERROR,
            "a name of 9 or more characters does not fit the 64-bit number DW_OP_regx's ULEB128 operand "
            "is read into (llvm-dwarfdump, ptxdwarf): the DWARF cannot say it",
        ),
        "undefined-symbol": (ERROR, None),
        "label-wrong-function": (
            ERROR,
            "quirk symbol-addend (12.0-13.5): ptxas relocates a code label against the function that defines "
            "it, so the range lies in another function's code",
        ),
        "target-not-debug": (WARNING, None),
        "file-two-strings": (ERROR, None),
        "loc-file-undeclared": (ERROR, None),
        "inline-loc": (ERROR, None),
        "version-too-low": (ERROR, None),
        "bad-reference": (ERROR, _INVALID),
        "names-unit-offset": (ERROR, _INVALID),
        "names-unit-length": (ERROR, _INVALID),
        "names-entry": (ERROR, _INVALID),
        "aranges-unit-offset": (ERROR, _INVALID),
        "unit-length": (WARNING, "not measured: readers differ on bytes after a unit's DIE tree"),
        "structure": (ERROR, _INVALID),
        "abbrev-code-order": (ERROR, None),
        "dwarf4-form": (ERROR, None),
        "ref-addr-size": (ERROR, None),
        "reloc-width": (
            ERROR,
            "case reloc-width.depot-b32 (12.0-13.5): a .b32 __local_depot operand leaves 4 zero bytes in the "
            "expression, which no reader decodes; the other shapes are in the quirk",
        ),
        "bad-loclist-offset": (ERROR, _INVALID),
        "wide-value": (WARNING, None),
        "strp-label-reused": (ERROR, None),
        "symbol-outside-info": (WARNING, None),
        "symbol-addend": (WARNING, None),
        "func-param-address": (WARNING, None),
        "duplicate-section": (WARNING, None),
        "producer-debug-line": (WARNING, None),
        "producer-debug-frame": (ERROR, None),
        "file-index": (WARNING, None),
        "ptxas-syntax": (ERROR, None),
        "info-label-difference": (ERROR, None),
        "address-size": (ERROR, None),
        "address-size-default": (ERROR, None),
        "dwarf-lines-isa": (ERROR, None),
        "not-debuggable": (ERROR, None),
        "non-ascii": (ERROR, None),
        "trailing-nul": (ERROR, None),
        "debug-target-without-info": (ERROR, None),
        "bitfield-member-order": (ERROR, None),
        "depot-in-pieces": (ERROR, None),
        "name-before-linkage-name": (ERROR, None),
        "label-at-line-zero": (WARNING, None),
        "first-label-at-zero": (WARNING, None),
        "predicate-count": (WARNING, None),
        "ptxas-memory": (WARNING, None),
    }
)


def rule_severity(rule: str) -> str:
    """The severity of lint rule ``rule`` (:data:`RULE_EVIDENCE`); KeyError for an unknown rule."""
    return RULE_EVIDENCE[rule][0]


def rule_evidence(rule: str) -> str:
    """What the consequence of lint rule ``rule`` was measured on, in one line: its own entry of
    :data:`RULE_EVIDENCE`, else its quirks' cases and the releases they hold on."""
    text = RULE_EVIDENCE[rule][1]
    if text is not None:
        return text
    parts = []
    for q in quirks_for_rule(rule):
        holds = ", ".join(q.holds_on) or "not reproduced"
        parts.append(f"quirk {q.id} (ptxas {holds}; cases {', '.join(q.cases)})")
    return "; ".join(parts) or "nothing"
