"""The lint rules: each rule's id, default severity and what it checks.

The severities come from the quirk registry (:data:`ptxdwarf.cuda.quirks.RULE_EVIDENCE`),
which says for each rule what its consequence was measured on."""

from __future__ import annotations

from ..cuda.quirks import ERROR, WARNING, rule_severity

__all__ = ["ERROR", "RULES", "SEVERITY_RANK", "WARNING"]

#: Every rule: id -> what it checks (its severity is the registry's).
_CHECKS: dict[str, str] = {
    # --- the list ---------------------------------------------------------
    "missing-address-class": (
        "a variable or parameter DIE whose DW_AT_location is one expression has no DW_AT_address_class "
        "(location lists need none)"
    ),
    "address-class-range": (
        "DW_AT_address_class is not one of the guide's codes 1-12 (13-16 are cuda-gdb's own codes)"
    ),
    "address-class-space": (
        "DW_AT_address_class contradicts the state space of the variable its DW_OP_addr names (a .shared "
        "variable described as global: a debugger reads another memory; generic for a .global variable, "
        "which ptxas relocates to an address that is also generic: warning)"
    ),
    "regx-undeclared": (
        "DW_OP_regx/bregx names no register declared (.reg) in the PTX function of the enclosing subprogram"
    ),
    "regx-too-long": ("DW_OP_regx names a register of more than 8 characters, which cuda-gdb cannot look up"),
    "undefined-symbol": (
        "a symbolic value names no section, debug-section label, function, variable, parameter or label "
        "(ptxas silently writes 0)"
    ),
    "label-wrong-function": (
        "a code label used by a subprogram, lexical block, inlined subroutine or location/range list is "
        "defined in another PTX function"
    ),
    "target-not-debug": (
        ".debug_info describes variables but .target does not list debug: kept only when ptxas runs with -g "
        "(line-tables-only DWARF is not reported)"
    ),
    "file-two-strings": ('.file INDEX "dir" "name" (LLVM 14); ptxas accepts only .file INDEX "path"'),
    "loc-file-undeclared": (
        "a .loc names a file number no .file declares (ptxas takes it; the line table then names a file it lacks)"
    ),
    "inline-loc": (
        "a .loc with inlined_at that ptxas refuses: no function_name, a call site no preceding .loc used, or a "
        "function_name that is not a .debug_str label"
    ),
    "version-too-low": (
        ".version is too low for what the sections use (debug target 3.0, label+N 3.2, "
        "labels in sections 7.0, inline .loc 7.0, label differences 7.5)"
    ),
    "bad-reference": ("a DIE reference does not point at the start of a DIE of its unit"),
    "names-unit-offset": ("a .debug_pubnames/.debug_pubtypes set's unit offset is not the start of a unit"),
    "names-unit-length": ("a .debug_pubnames/.debug_pubtypes set's unit length is not its unit's length"),
    "names-entry": (
        "a .debug_pubnames/.debug_pubtypes entry is not a DIE of its unit (warning: names a DIE of another name)"
    ),
    "aranges-unit-offset": ("a .debug_aranges set's unit offset is not the start of a unit"),
    "unit-length": (
        "a unit's length does not end where its DIE tree ends (child lists left open, or bytes after the tree "
        "that are not zero padding)"
    ),
    "structure": (
        "DWARF that cannot be decoded (bad unit length, unknown abbreviation code, bad expression ...)"
    ),
    # --- ptxas 13.0 traps (docs/ptxas-facts.md) -------------------------------------
    "abbrev-code-order": (
        "abbreviation codes are not 1..N in table order (ptxas: 'Attempted to Dereference Out of Bounds')"
    ),
    "dwarf4-form": (
        "a form >= 0x17 (sec_offset, exprloc, flag_present ...) used in a DWARF 2-4 unit; ptxas rejects it"
    ),
    "ref-addr-size": ("DW_FORM_ref_addr that is not 8 bytes; ptxas always reads 8"),
    "reloc-width": (
        "a symbolic .b32/.b64 value in .debug_info does not fill exactly one relocatable attribute value or "
        "DW_OP_addr operand"
    ),
    "bad-loclist-offset": ("a location-list pointer is not the start of a .debug_loc list"),
    "wide-value": ("a .b64 number of 2**32 or more; ptxas keeps only its low 32 bits"),
    "strp-label-reused": (
        "the same .debug_str label is referenced twice from .debug_info; ptxas resolves the second to 0, "
        "or now and then fails ('label ... invalid')"
    ),
    "symbol-outside-info": (
        "a data label, section name or symbol+N used outside .debug_info; ptxas writes 0 there"
    ),
    "symbol-addend": ("+N on a code label or __local_depot in .debug_info; ptxas mangles or drops it"),
    "func-param-address": ("the address of a .func parameter; ptxas writes 0"),
    "duplicate-section": (
        "a section given twice; ptxas drops the second block (error for .debug_info: a second ELF section)"
    ),
    "producer-debug-line": ("a non-empty .debug_line from the producer; ptxas discards it and makes its own"),
    "producer-debug-frame": (
        "a non-empty .debug_frame from the producer; ptxas fails ('overlapping non-identical data')"
    ),
    "file-index": (
        ".file indices are not 1..N (the line table then names the wrong files; a duplicate index is an error)"
    ),
    "ptxas-syntax": (
        "a symbolic value ptxas cannot parse: in a comma list, label-N, or a label difference with +N"
    ),
    "info-label-difference": (
        "a difference of two .debug_info labels inside .debug_info (ptxas: 'Attempted to truncate larger than current size')"
    ),
    "address-size": ("debug info in a module of .address_size 32 (ptxas cannot compile it with -g)"),
    "address-size-default": (
        "debug info in a module for sm_50, sm_52 or sm_53 without .address_size (ptxas of CUDA 12 takes it "
        "as 32-bit and cannot compile it with -g)"
    ),
    "dwarf-lines-isa": (
        "debug sections in the form the .version does not take: @@DWARF lines need .version below 2.0, "
        ".section blocks 2.0 or later"
    ),
    "not-debuggable": (
        "code ptxas cannot compile with -g: a .global/.const with an initializer inside a function body "
        "(SIGSEGV), a .func returning several values ('not allowed with ABI')"
    ),
    "non-ascii": (
        "a non-ASCII byte outside comments (ptxas rejects it; 12.0 takes it in a .file name), or in a comment "
        "(ptxas 12.9 and 13.0 reject it; 12.0, 12.4, 13.4 and 13.5 do not)"
    ),
    "trailing-nul": (
        "the text ends with a NUL byte (NVRTC's output as written to disk); ptxas 13.0 and later refuse it "
        "('Unexpected EOF'), 12.0, 12.4 and 12.9 do not"
    ),
    "debug-target-without-info": (".target lists debug but the module has no debug section"),
    "bitfield-member-order": (
        "a bit-field DW_TAG_member whose DW_FORM_strp name precedes DW_AT_bit_size, which precedes "
        "DW_AT_data_member_location (nvcc's order); ptxas fails ('Checked Data was Invalid')"
    ),
    "depot-in-pieces": (
        "a DW_AT_location with DW_OP_piece 3, 12, 16 or 35 right after DW_OP_addr __local_depot (and its "
        "DW_OP_plus_uconst) and too few bytes after it; ptxas 12.9 and 13.0 fail ('Dereference Out of Bounds')"
    ),
    "name-before-linkage-name": (
        "a subprogram with __local_depot locations has DW_AT_name before DW_AT_MIPS_linkage_name (ptxas crashes)"
    ),
    "label-at-line-zero": (
        "a code label the debug sections use whose first instruction is at line 0 (.loc F 0 C); ptxas "
        "usually drops the label and references to it read 0"
    ),
    "first-label-at-zero": (
        "a code label the debug sections use that is its function's first label, after code and before any "
        "branch; ptxas places it at the function's start"
    ),
    "predicate-count": (
        "a subprogram describes 52 or more predicate (.pred) registers by DW_OP_regx; ptxas 13 -g crashes "
        "(SIGSEGV) on such a function when they guard branches"
    ),
    "ptxas-memory": (
        "the debug info describes so many registers over whole functions that ptxas -g will need far more "
        "memory than for the code alone (by the model of quirk described-registers-memory, more than twice the "
        "least the code takes, beyond it): ptxas keeps each described register live through its function"
    ),
}

#: Every rule: id -> (default severity, what it checks). Some rules report a milder
#: or harsher case with another severity (the message says which case it is).
RULES: dict[str, tuple[str, str]] = {rule: (rule_severity(rule), text) for rule, text in _CHECKS.items()}

SEVERITY_RANK = {ERROR: 0, WARNING: 1}
