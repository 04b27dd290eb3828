"""Static checks of a PTX module's debug sections against the PTX around them.

:func:`lint` reads PTX text (no ptxas needed) and returns a list of
:class:`Finding`, each naming a rule, the PTX line and, where there is one, the DIE.
The rules are the PTX Interoperability guide's requirements (every variable and
parameter has a CUDA address class, registers named by ``DW_OP_regx`` exist, ...)
plus the traps of ptxas 13.0 that can be seen without running it (see
``docs/ptxas-facts.md``): forms ptxas rejects, values it truncates or zeroes,
abbreviation codes it cannot walk. :data:`RULES` lists every rule id with its
default severity and a one-line description.

PTX that cannot be read at all raises :class:`~ptxdwarf.errors.PtxSyntaxError`
(bad input); DWARF that cannot be decoded is a finding of rule ``structure``.
"""

from __future__ import annotations

import bisect
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from .dwarf.constants import (
    AT,
    CUDA_GDB_ADDRESS_CLASSES,
    FORM,
    OP,
    TAG,
    address_class_name,
    at_name,
    form_name,
)
from .dwarf.decode import decode_sections
from .errors import DwarfError, PtxDwarfError
from .dwarf.expr import MAX_REGISTER_NAME, Op, decode_expression, register_name
from .dwarf.forms import RELOCATABLE_FORMS, read_uleb, reader_for
from .dwarf.image import SectionImage, Symbol
from .dwarf.model import (
    DIE,
    REFERENCE_FORMS,
    Attribute,
    DebugInfo,
    LocationList,
    NameSet,
    Unit,
)
from .ptx.reader import (
    PtxFunction,
    PtxModule,
    PtxVariable,
    SectionBlock,
    mask_comments,
    parse_ptx,
)

__all__ = ["RULES", "Finding", "lint", "lint_module", "main_lint"]

ERROR = "error"
WARNING = "warning"

#: Every rule: id -> (default severity, what it checks). Some rules report a milder
#: or harsher case with another severity (the message says which case it is).
RULES: dict[str, tuple[str, str]] = {
    # --- the list ---------------------------------------------------------
    "missing-address-class": (
        ERROR,
        "a variable or parameter DIE whose DW_AT_location is one expression has no DW_AT_address_class "
        "(location lists need none)",
    ),
    "address-class-range": (
        ERROR,
        "DW_AT_address_class is not one of the guide's codes 1-12 (13-16, cuda-gdb's own codes: warning)",
    ),
    "regx-undeclared": (
        ERROR,
        "DW_OP_regx/bregx names no register declared (.reg) in the PTX function of the enclosing subprogram",
    ),
    "regx-too-long": (ERROR, "DW_OP_regx names a register of more than 8 characters, which cuda-gdb cannot look up"),
    "undefined-symbol": (
        ERROR,
        "a symbolic value names no section, debug-section label, function, variable, parameter or label "
        "(ptxas silently writes 0)",
    ),
    "label-wrong-function": (
        ERROR,
        "a code label used by a subprogram, lexical block, inlined subroutine or location/range list is "
        "defined in another PTX function",
    ),
    "target-not-debug": (ERROR, "the module has .debug_info but .target does not list debug"),
    "file-two-strings": (ERROR, '.file INDEX "dir" "name" (LLVM 14); ptxas accepts only .file INDEX "path"'),
    "version-too-low": (
        ERROR,
        ".version is too low for what the sections use (debug target 3.0, label+N 3.2, "
        "labels in sections 7.0, label differences 7.5)",
    ),
    "bad-reference": (ERROR, "a DIE reference does not point at the start of a DIE of its unit"),
    "names-unit-offset": (ERROR, "a .debug_pubnames/.debug_pubtypes set's unit offset is not the start of a unit"),
    "names-unit-length": (ERROR, "a .debug_pubnames/.debug_pubtypes set's unit length is not its unit's length"),
    "names-entry": (
        ERROR,
        "a .debug_pubnames/.debug_pubtypes entry is not a DIE of its unit (warning: names a DIE of another name)",
    ),
    "aranges-unit-offset": (ERROR, "a .debug_aranges set's unit offset is not the start of a unit"),
    "unit-length": (ERROR, "a unit's length does not end where its DIE tree ends"),
    "structure": (ERROR, "DWARF that cannot be decoded (bad unit length, unknown abbreviation code, bad expression ...)"),
    # --- ptxas 13.0 traps (docs/ptxas-facts.md) -------------------------------------
    "abbrev-code-order": (
        ERROR,
        "abbreviation codes are not 1..N in table order (ptxas: 'Attempted to Dereference Out of Bounds')",
    ),
    "dwarf4-form": (ERROR, "a form >= 0x17 (sec_offset, exprloc, flag_present ...) used in a DWARF 2-4 unit; ptxas rejects it"),
    "ref-addr-size": (ERROR, "DW_FORM_ref_addr that is not 8 bytes; ptxas always reads 8"),
    "reloc-width": (
        ERROR,
        "a symbolic .b32/.b64 value in .debug_info does not fill exactly one relocatable attribute value or "
        "DW_OP_addr operand",
    ),
    "bad-loclist-offset": (ERROR, "a location-list pointer is not the start of a .debug_loc list"),
    "wide-value": (WARNING, "a .b64 number of 2**32 or more; ptxas keeps only its low 32 bits"),
    "strp-label-reused": (
        WARNING,
        "the same .debug_str label is referenced twice from .debug_info; ptxas resolves the second to 0",
    ),
    "symbol-outside-info": (
        WARNING,
        "a data label, section name or symbol+N used outside .debug_info; ptxas writes 0 there",
    ),
    "symbol-addend": (WARNING, "+N on a code label or __local_depot in .debug_info; ptxas mangles or drops it"),
    "func-param-address": (WARNING, "the address of a .func parameter; ptxas writes 0"),
    "duplicate-section": (
        WARNING,
        "a section given twice; ptxas drops the second block (error for .debug_info: a second ELF section)",
    ),
    "producer-debug-line": (WARNING, "a non-empty .debug_line from the producer; ptxas discards it and makes its own"),
    "producer-debug-frame": (ERROR, "a non-empty .debug_frame from the producer; ptxas fails ('overlapping non-identical data')"),
    "file-index": (
        WARNING,
        ".file indices are not 1..N (the line table then names the wrong files; a duplicate index is an error)",
    ),
    "ptxas-syntax": (
        ERROR,
        "a symbolic value ptxas cannot parse: in a comma list, label-N, or a label difference with +N",
    ),
    "info-label-difference": (
        ERROR,
        "a difference of two .debug_info labels inside .debug_info (ptxas: 'Attempted to truncate larger than current size')",
    ),
    "address-size": (ERROR, "debug info in a module whose .address_size is not 64 (ptxas cannot compile it with -g)"),
    "non-ascii": (ERROR, "a non-ASCII byte in the text; ptxas 13.0 rejects it anywhere, comments included"),
    "debug-target-without-info": (ERROR, ".target lists debug but the module has no debug section"),
    "orphan-depot-list": (
        ERROR,
        "a .debug_loc list no DIE refers to holds a __local_depot address (ptxas: 'Dereference Out of Bounds')",
    ),
    "loclist-symbol-with-strp": (
        ERROR,
        "a location-list pointer written as a .debug_loc symbol in a unit that uses DW_FORM_strp (ptxas crashes)",
    ),
    "depot-in-pieces": (
        ERROR,
        "a location expression with DW_OP_piece around DW_OP_addr __local_depot (ptxas: 'Dereference Out of Bounds')",
    ),
    "name-before-low-pc": (
        ERROR,
        "a subprogram with __local_depot locations has DW_AT_name before DW_AT_low_pc (ptxas crashes)",
    ),
    "label-at-line-zero": (
        WARNING,
        "a code label the debug sections use whose first instruction is at line 0 (.loc F 0 C); ptxas "
        "usually drops the label and references to it read 0",
    ),
}

_SEVERITY_RANK = {ERROR: 0, WARNING: 1}


class _Max:
    """Sorts after every DIE (for bisecting (offset, DIE) pairs)."""

    def __lt__(self, other: object) -> bool:
        return False

    def __gt__(self, other: object) -> bool:
        return True


_MAX_DIE: Any = _Max()


@dataclass(frozen=True)
class Finding:
    """One problem: which rule, how bad, where (PTX ``file:line``), and the DIE."""

    rule: str
    severity: str
    message: str
    where: str
    die: str | None = None
    section: str | None = None
    offset: int | None = None

    def __str__(self) -> str:
        text = f"{self.where}: {self.severity}[{self.rule}]: {self.message}"
        if self.die:
            text += f" ({self.die})"
        elif self.section is not None and self.offset is not None:
            text += f" ({self.section}+0x{self.offset:x})"
        return text

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# --- PTX text helpers -----------------------------------------------------------

_SYM = r"(?:\.[A-Za-z_][\w$.]*|[A-Za-z][\w$]*|[_$%][\w$]+)"
_INT = r"(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uU]?"
_NUMBER_ITEM = re.compile(rf"-?\s*{_INT}")
_DIRECTIVE = re.compile(r"\.(?:b8|b16|b32|b64|byte|4byte|quad)(?![\w$.])")
_LABEL_DEF = re.compile(rf"(?<![\w$.%])({_SYM})\s*:")
_DIFFERENCE = re.compile(rf"^({_SYM})\s*-\s*({_SYM})(\s*[-+]\s*{_INT})?$")
_SYM_MINUS_INT = re.compile(rf"^{_SYM}\s*-\s*{_INT}$")
_ADDRESS_SIZE = re.compile(r"^[ \t]*\.address_size\b", re.MULTILINE)

_CODE_TAGS = frozenset({TAG.subprogram, TAG.lexical_block, TAG.inlined_subroutine, TAG.label})
_PC_ATTRS = (AT.low_pc, AT.high_pc, AT.entry_pc)
_VARIABLE_TAGS = frozenset({TAG.variable, TAG.formal_parameter})
_BLOCK_FORMS = frozenset({FORM.block1, FORM.block2, FORM.block4, FORM.block, FORM.exprloc})
_LIST_FORMS = frozenset({FORM.data4, FORM.data8, FORM.sec_offset})
_LINKAGE = tuple(a for a in ("linkage_name", "MIPS_linkage_name") if a in AT.__members__)
_DWARF2_FORMS_MAX = 0x16


@dataclass
class _BlockScan:
    """What a re-scan of one section block's text found (the image keeps only numbers)."""

    labels: list[tuple[str, int]]
    """Labels defined in the block, with their lines."""
    differences: list[tuple[str, str, int]]
    """``a-b`` values with their lines."""
    addends: list[tuple[str, int]]
    """``label+N`` values with their lines."""
    syntax: list[tuple[str, int]]
    """Values ptxas cannot parse, with their lines."""


_SYMBOL_START = re.compile(
    r"(?<![\w$.%])(?:[A-Za-z_$%]|\.(?!(?:b8|b16|b32|b64|byte|4byte|quad)(?![\w$.]))[A-Za-z_])"
)


def _scan_block(module: PtxModule, block: SectionBlock) -> _BlockScan:
    text = mask_comments(module.text[block.start : block.end], module.filename)
    brace = text.find("{")
    body_start = brace + 1 if brace >= 0 else 0
    close = text.rfind("}")
    body = text[body_start:close] if close > body_start else text[body_start:]
    first_line = block.line + text.count("\n", 0, body_start)
    scan = _BlockScan([], [], [], [])

    newlines: list[int] | None = None

    def line_of(pos: int) -> int:
        nonlocal newlines
        if newlines is None:
            newlines = [m.start() for m in re.finditer("\n", body)]
        return first_line + bisect.bisect_left(newlines, pos)

    if ":" in body:
        for m in _LABEL_DEF.finditer(body):
            scan.labels.append((m.group(1), line_of(m.start())))
        # Blank out label definitions so they do not read as values.
        body = _LABEL_DEF.sub(lambda m: " " * len(m.group(0)), body)
    # Only the directives holding a symbol need a look: find symbols, then their directive.
    statements: dict[int, int] = {}
    for m in _SYMBOL_START.finditer(body):
        pos = m.start()
        if _DIRECTIVE.match(body, pos - 1 if pos and body[pos - 1] == "." else pos):
            continue
        start = pos
        while True:
            start = body.rfind(".", 0, start)
            if start < 0 or _DIRECTIVE.match(body, start):
                break
        if start < 0:
            continue  # a value before any directive: the reader reports that
        if start in statements:
            continue
        nxt = _DIRECTIVE.search(body, pos)
        statements[start] = nxt.start() if nxt is not None else len(body)
    for start, end in sorted(statements.items()):
        head = _DIRECTIVE.match(body, start)
        assert head is not None
        values = body[head.end() : end]
        items = []
        pos = head.end()
        for v in values.split(","):
            if v.strip():
                items.append((v.strip(), pos + len(v) - len(v.lstrip())))
            pos += len(v) + 1
        symbolic = [(v, p) for v, p in items if not _NUMBER_ITEM.fullmatch(v)]
        if symbolic and len(items) > 1:
            v, p = symbolic[0]
            scan.syntax.append((f"{v!r} in a list of {len(items)} values (one symbolic value per directive)", line_of(p)))
        for v, p in symbolic:
            d = _DIFFERENCE.match(v)
            if d is not None:
                scan.differences.append((d.group(1), d.group(2), line_of(p)))
                if d.group(3):
                    scan.syntax.append((f"{v!r} (a label difference cannot take +N)", line_of(p)))
            elif _SYM_MINUS_INT.fullmatch(v):
                scan.syntax.append((f"{v!r} (label-N; write the value as a number)", line_of(p)))
            elif "+" in v:
                scan.addends.append((v, line_of(p)))
    return scan


# --- the linter -------------------------------------------------------------------


class _Linter:
    def __init__(self, module: PtxModule) -> None:
        self.module = module
        self.filename = module.filename
        self.findings: list[Finding] = []
        self.info: DebugInfo | None = None
        self.images: dict[str, SectionImage] = {}
        self.section_blocks: dict[str, list[SectionBlock]] = {}
        for block in module.sections:
            self.section_blocks.setdefault(block.name, []).append(block)
        # Symbols.
        self.data_labels: dict[str, str] = {}
        for block in module.sections:
            for name in block.image.labels:
                self.data_labels.setdefault(name, block.name)
        self.functions = {f.name: f for f in module.functions}
        self.label_function: dict[str, PtxFunction] = {}
        for f in module.functions:
            for label in f.labels:
                self.label_function.setdefault(label, f)
        self.module_variables = {v.name: v for v in module.variables}
        self.local_names: dict[str, tuple[PtxFunction, PtxVariable]] = {}
        for f in module.functions:
            for v in (*f.params, *f.returns, *f.declarations):
                if v.count is None:
                    self.local_names.setdefault(v.name, (f, v))
        self.function_params = {v.name: f for f in module.functions for v in f.params}
        self._attr_spans: dict[int, list[tuple[int, int]]] = {}
        self._sp_function: dict[int, PtxFunction | None] = {}
        self._die_offsets: list[tuple[int, Any]] = []
        self._lists: dict[int, LocationList] | None = None
        self._readers: dict[tuple[int, int, int], Any] = {}

    # --- reporting ---

    def add(
        self,
        rule: str,
        message: str,
        *,
        line: int | None = None,
        where: str | None = None,
        die: DIE | None = None,
        section: str | None = None,
        offset: int | None = None,
        severity: str | None = None,
    ) -> None:
        if where is None:
            where = f"{self.filename}:{line}" if line else None
        if where is None and section is not None and offset is not None:
            image = self.images.get(section)
            if image is not None:
                where = image.source(min(offset, max(len(image.data) - 1, 0)))
        if where is None and die is not None and die.offset >= 0:
            image = self.images.get(".debug_info")
            if image is not None:
                where = image.source(die.offset)
        if die is not None and section is None:
            section, offset = ".debug_info", die.offset if offset is None else offset
        self.findings.append(
            Finding(
                rule,
                severity or RULES[rule][0],
                message,
                where or self.filename,
                _describe(die) if die is not None else None,
                section,
                offset,
            )
        )

    # --- driver ---

    def run(self) -> list[Finding]:
        module = self.module
        self.images = {name: img for name, img in module.images().items()}
        self.check_text()
        self.check_header()
        self.check_sections()
        scans = {id(b): _scan_block(module, b) for b in module.sections if b.name.startswith(".debug_")}
        self.check_scans(scans)
        debug_images = {n: img for n, img in self.images.items() if n.startswith(".debug_")}
        self.info = self.decode(debug_images)
        if self.info is not None:
            self._die_offsets = sorted(
                (d.offset, d) for d in self.info.iter_dies() if d.offset >= 0
            )
        self.check_relocations()
        if self.info is not None:
            self.check_dwarf(self.info)
        return sorted(self.findings, key=_sort_key)

    def die_containing(self, offset: int) -> DIE | None:
        """The DIE whose bytes hold ``offset`` in .debug_info (the last DIE starting at or before it)."""
        if not self._die_offsets:
            return None
        i = bisect.bisect_right(self._die_offsets, (offset, _MAX_DIE)) - 1
        if i < 0:
            return None
        die = self._die_offsets[i][1]
        unit = self.info.unit_of(die) if self.info is not None else None
        if unit is not None and not unit.offset <= offset < unit.end:
            return None
        return die

    def decode(self, images: dict[str, SectionImage]) -> DebugInfo | None:
        """Decode, dropping sections that fail on their own (each failure is a finding)."""
        images = dict(images)
        while True:
            try:
                info = decode_sections(
                    images,
                    source="ptx",
                    filename=self.filename,
                    address_size=4 if self.module.address_size == 32 else 8,
                ).load_all()
            except DwarfError as exc:
                self.add(
                    "structure",
                    exc.message,
                    where=exc.source,
                    section=exc.section,
                    offset=exc.offset,
                )
                if exc.section in images and exc.section not in (".debug_info", ".debug_abbrev", ".debug_str"):
                    del images[exc.section]
                    continue
                return None
            info.module = self.module
            return info

    # --- text and header ---

    def check_text(self) -> None:
        text = self.module.text
        if text.isascii():
            return
        bad = [i for i, ch in enumerate(text) if ord(ch) > 127]
        line = text.count("\n", 0, bad[0]) + 1
        lines = {text.count("\n", 0, i) + 1 for i in bad[:1000]}
        self.add(
            "non-ascii",
            f"{len(bad)} non-ASCII character(s) on {len(lines)}{'+' if len(bad) > 1000 else ''} line(s), first on "
            f"line {line}; ptxas 13.0 rejects them anywhere (write names as numbers, keep comments ASCII)",
            line=line,
        )

    def has_info(self) -> bool:
        return any(b.image.data for b in self.section_blocks.get(".debug_info", ()))

    def check_header(self) -> None:
        module = self.module
        has_info = self.has_info()
        debug_blocks = [b for b in module.sections if b.name.startswith(".debug_")]
        if has_info and not module.has_debug_target:
            self.add(
                "target-not-debug",
                f".target {', '.join(module.target) or '(none)'} does not list debug, but the module has .debug_info "
                "(write .target ..., debug)",
                line=module.target_line or None,
            )
        if module.has_debug_target and not debug_blocks:
            self.add(
                "debug-target-without-info",
                "the .target lists debug but there is no debug section (ptxas: 'Debug information not found in "
                "presence of .target debug')",
                line=module.target_line or None,
            )
        if debug_blocks and has_info and module.address_size != 64:
            m = _ADDRESS_SIZE.search(module.text)
            line = module.text.count("\n", 0, m.start()) + 1 if m else None
            said = f".address_size {module.address_size}" if module.address_size else "no .address_size (32)"
            self.add(
                "address-size",
                f"{said} with debug info: ptxas -g needs .address_size 64",
                line=line or module.version_line or None,
            )
        # .file
        seen: dict[int, int] = {}
        for f in module.files:
            if f.directory is not None:
                self.add(
                    "file-two-strings",
                    f'.file {f.index} "{f.directory}" "{f.path}" has two strings; ptxas accepts only one path '
                    f'(.file {f.index} "{f.full_path}")',
                    line=f.line,
                )
            if f.index in seen:
                self.add(
                    "file-index",
                    f".file {f.index} given twice (first on line {seen[f.index]}); ptxas: 'Duplicate file index'",
                    line=f.line,
                    severity=ERROR,
                )
            else:
                seen[f.index] = f.line
        indices = sorted(seen)
        if indices and indices != list(range(1, len(indices) + 1)):
            expected = set(range(1, len(indices) + 1))
            wrong = [i for i in indices if i not in expected]
            first = min((seen[i] for i in wrong), default=module.files[0].line)
            self.add(
                "file-index",
                f".file indices {_ranges(indices)} are not 1..{len(indices)}: ptxas numbers its file table densely "
                "but keeps the .loc indices, so lines point at the wrong files",
                line=first,
            )

    def check_sections(self) -> None:
        for name, blocks in self.section_blocks.items():
            for block in blocks[1:]:
                if name == ".debug_info":
                    what = "ptxas makes it a second ELF section also named .debug_info"
                    severity = ERROR
                else:
                    what = "ptxas silently drops this second block (its labels resolve to 0)"
                    severity = WARNING
                self.add(
                    "duplicate-section",
                    f"section {name} given again (first on line {blocks[0].line}): {what}; write one block",
                    line=block.line,
                    severity=severity,
                )
        for block in self.section_blocks.get(".debug_line", ()):
            if block.image.data or block.image.relocs:
                self.add(
                    "producer-debug-line",
                    "the producer's .debug_line is discarded by ptxas, which makes its own from .file/.loc",
                    line=block.line,
                )
        for block in self.section_blocks.get(".debug_frame", ()):
            if block.image.data or block.image.relocs:
                self.add(
                    "producer-debug-frame",
                    "a non-empty .debug_frame from the producer makes ptxas fail ('Internal error: overlapping "
                    "non-identical data'); leave it out",
                    line=block.line,
                )
        for block in self.module.sections:
            image = block.image
            for off in image.wide_values:
                value = int.from_bytes(image.data[off : off + 8], "little")
                self.add(
                    "wide-value",
                    f".b64 {value:#x} in {block.name}: ptxas 13.0 keeps only the low 32 bits ({value & 0xFFFFFFFF:#x}); "
                    "write it as two .b32 (low word first)",
                    where=image.source(off),
                    section=block.name,
                    offset=off,
                )

    def check_scans(self, scans: dict[int, _BlockScan]) -> None:
        module = self.module
        needs: list[tuple[tuple[int, int], str, int]] = []
        if module.has_debug_target:
            needs.append(((3, 0), "a debug target (.target ..., debug)", module.target_line))
        for block in module.sections:
            scan = scans.get(id(block))
            if scan is None:
                continue
            if scan.labels:
                name, line = scan.labels[0]
                needs.append(((7, 0), f"defining labels in a section ({name}: in {block.name})", line))
            if scan.differences:
                a, b, line = scan.differences[0]
                needs.append(((7, 5), f"a label difference ({a}-{b} in {block.name})", line))
            if scan.addends:
                v, line = scan.addends[0]
                needs.append(((3, 2), f"label+N ({v} in {block.name})", line))
            for text, line in scan.syntax:
                self.add("ptxas-syntax", f"ptxas cannot parse {text} in {block.name}", line=line)
            if block.name == ".debug_info":
                info_labels = block.image.labels
                for a, b, line in scan.differences:
                    if a in info_labels and b in info_labels:
                        self.add(
                            "info-label-difference",
                            f"{a}-{b}: a difference of two .debug_info labels inside .debug_info makes ptxas fail "
                            "('Attempted to truncate larger than current size'); write the number",
                            line=line,
                        )
        if module.version is None:
            return
        for version, what, line in needs:
            if module.version < version:
                self.add(
                    "version-too-low",
                    f"{what} needs PTX ISA .version {version[0]}.{version[1]} or later; the module says "
                    f".version {module.version[0]}.{module.version[1]}",
                    line=line or module.version_line or None,
                )

    # --- symbols ---

    def classify(self, name: str) -> tuple[str, Any]:
        """What a symbol is: (kind, detail)."""
        if name.startswith("."):
            return "section", name
        if name in self.data_labels:
            return "data-label", self.data_labels[name]
        if name in self.functions:
            return "function", self.functions[name]
        if name in self.module.prototypes:
            return "prototype", name
        if name in self.module_variables:
            return "variable", self.module_variables[name]
        if name in self.label_function:
            return "code-label", self.label_function[name]
        if name in self.local_names:
            f, v = self.local_names[name]
            if name in self.function_params and v in f.params:
                return "param", f
            if name.startswith("__local_depot"):
                return "depot", f
            return "local", f
        return "undefined", None

    def section_exists(self, name: str) -> bool:
        return name in self.section_blocks or name in (".debug_line", ".debug_frame")

    def check_relocations(self) -> None:
        strp_uses: dict[str, int] = {}
        code_labels: dict[str, tuple[str, int]] = {}
        for name, image in self.images.items():
            if not name.startswith(".debug_"):
                continue
            for reloc in image.relocs:
                sym = reloc.symbol
                die = self.die_containing(reloc.offset) if name == ".debug_info" else None
                kind, detail = self.classify(sym.name)
                if kind == "undefined" or (kind == "section" and not self.section_exists(sym.name)):
                    what = "section" if kind == "section" else "symbol"
                    self.add(
                        "undefined-symbol",
                        f"{what} {sym} used in {name} is not defined in this module; ptxas silently writes 0",
                        die=die,
                        section=name,
                        offset=reloc.offset,
                    )
                    continue
                if name != ".debug_info":
                    intended = None
                    if kind == "section":
                        intended = sym.addend
                    elif kind == "data-label":
                        intended = self.images[detail].labels.get(sym.name, 0) + sym.addend
                    if intended:
                        self.add(
                            "symbol-outside-info",
                            f"{sym} in {name} stands for {intended:#x}, but ptxas resolves data labels and section "
                            "names only inside .debug_info and writes 0 here; write the number",
                                die=die,
                            section=name,
                            offset=reloc.offset,
                        )
                    elif sym.addend and kind not in ("section", "data-label"):
                        self.add(
                            "symbol-outside-info",
                            f"{sym} in {name}: outside .debug_info ptxas writes 0 for symbol+N (no relocation)",
                                die=die,
                            section=name,
                            offset=reloc.offset,
                        )
                elif sym.addend and kind in ("code-label", "depot"):
                    what = (
                        "ptxas writes label+N in place but relocates against the label alone"
                        if kind == "code-label"
                        else "ptxas drops the +N of a __local_depot"
                    )
                    self.add(
                        "symbol-addend",
                        f"{sym} in .debug_info: {what}; use a label at the address itself",
                        die=die,
                        section=name,
                        offset=reloc.offset,
                    )
                if kind == "code-label" and sym.name not in code_labels:
                    code_labels[sym.name] = (name, reloc.offset)
                if kind == "param" and not detail.is_kernel:
                    self.add(
                        "func-param-address",
                        f"{sym} is a parameter of .func {detail.name}: ptxas writes 0 for it (only kernel "
                        "parameters have an address); describe the register or stack slot that holds it",
                        die=die,
                        section=name,
                        offset=reloc.offset,
                    )
                if name == ".debug_info" and kind == "data-label" and detail == ".debug_str":
                    if sym.name in strp_uses:
                        self.add(
                            "strp-label-reused",
                            f".debug_str label {sym.name} is referenced again (first at "
                            f"{image.source(strp_uses[sym.name])}); ptxas resolves the second reference to 0: "
                            "give every reference its own label or write .debug_str+N",
                                die=die,
                            section=name,
                            offset=reloc.offset,
                        )
                    else:
                        strp_uses[sym.name] = reloc.offset
        self.check_line_zero_labels(code_labels)

    def check_line_zero_labels(self, used: dict[str, tuple[str, int]]) -> None:
        """Code labels used by the debug sections whose first instruction has line 0."""
        by_function: dict[int, PtxFunction] = {}
        for label in used:
            f = self.label_function[label]
            by_function[id(f)] = f
        text = self.module.text
        for f in by_function.values():
            if f.body_start < 0 or not _LINE_ZERO_LOC.search(text, f.body_start, f.body_end):
                continue
            for label in _labels_at_line_zero(text, f.body_start, f.body_end):
                if label not in used or self.label_function.get(label) is not f:
                    continue
                section, offset = used[label]
                self.add(
                    "label-at-line-zero",
                    f"{label} (line {f.labels.get(label, '?')}, in {f.name}) is used by {section}, but the instruction after it is at "
                    f"line 0 (.loc F 0 C); ptxas 13.0 usually drops such a label, leaving an undefined symbol that "
                    "reads 0 in the cubin: move the label or give the instruction a line",
                    where=self.images[section].source(offset),
                    die=self.die_containing(offset) if section == ".debug_info" else None,
                    section=section,
                    offset=offset,
                )

    # --- DWARF ---

    def check_dwarf(self, info: DebugInfo) -> None:
        self.check_abbrevs(info)
        loc_refs: set[int] = set()
        for unit in info.units:
            self.check_unit(info, unit, loc_refs)
        self.check_info_relocs(info)
        self.check_loc_lists(info, loc_refs)
        for name, sets in ((".debug_pubnames", info.pubnames), (".debug_pubtypes", info.pubtypes)):
            for ns in sets or ():
                self.check_name_set(info, name, ns)
        for aset in info.aranges or ():
            offset = self.resolve_unit_offset(info, aset.unit_offset)
            if offset is None or not any(u.offset == offset for u in info.units):
                self.add(
                    "aranges-unit-offset",
                    f"aranges set at .debug_aranges+{aset.offset:#x} names unit offset {_fmt(aset.unit_offset, offset)}, "
                    f"which is not the start of a unit (units at {_offsets(info)})",
                    section=".debug_aranges",
                    offset=aset.offset + 6,
                )

    def check_abbrevs(self, info: DebugInfo) -> None:
        image = self.images.get(".debug_abbrev")
        for table in info.abbrev_tables:
            codes = [d.code for d in table.decls]
            if codes == list(range(1, len(codes) + 1)):
                continue
            bad = next(i for i, c in enumerate(codes) if c != i + 1)
            offsets = _decl_offsets(image.data, table.offset) if image is not None else []
            at = offsets[bad] if bad < len(offsets) else table.offset
            self.add(
                "abbrev-code-order",
                f"abbreviation table at .debug_abbrev+{table.offset:#x} has codes {_short_list(codes)}; ptxas needs "
                f"1..{len(codes)} in table order ('Attempted to Dereference Out of Bounds'): declaration "
                f"{bad + 1} has code {codes[bad]}",
                where=image.source(at) if image is not None else None,
                section=".debug_abbrev",
                offset=at,
            )

    def attr_spans(self, info: DebugInfo, unit: Unit, die: DIE) -> list[tuple[int, int]]:
        """(offset, size) in .debug_info of each attribute value of ``die``, in order."""
        spans = self._attr_spans.get(id(die))
        if spans is not None:
            return spans
        spans = []
        image = self.images.get(".debug_info")
        table = unit.abbrevs
        if image is None or table is None or die.abbrev_code is None or die.offset < 0:
            return spans
        decl = table.by_code().get(die.abbrev_code)
        if decl is None:
            return spans
        data = image.data
        try:
            _, pos = read_uleb(data, die.offset)
            for _name, form in decl.specs:
                while form == FORM.indirect:
                    form, pos = read_uleb(data, pos)
                key = (form, unit.version, unit.address_size)
                reader = self._readers.get(key)
                if reader is None:
                    reader = self._readers[key] = reader_for(*key)
                if reader is None:
                    break
                _, end = reader(data, pos)
                spans.append((pos, end - pos))
                pos = end
        except (IndexError, ValueError):
            pass
        self._attr_spans[id(die)] = spans
        return spans

    def attr_offset(self, info: DebugInfo, unit: Unit, die: DIE, attr: Attribute) -> int:
        spans = self.attr_spans(info, unit, die)
        for a, span in zip(die.attributes, spans):
            if a is attr:
                return span[0]
        return die.offset

    def add_attr(self, rule: str, message: str, info: DebugInfo, unit: Unit, die: DIE, attr: Attribute, **kw: Any) -> None:
        off = self.attr_offset(info, unit, die, attr)
        image = self.images.get(".debug_info")
        where = image.source(off) if image is not None else None
        self.add(rule, message, where=where, die=die, offset=off, **kw)

    def subprogram_function(self, info: DebugInfo, sp: DIE) -> PtxFunction | None:
        """The PTX function a subprogram describes: by its low/high/entry pc symbol, else its linkage name."""
        key = id(sp)
        if key in self._sp_function:
            return self._sp_function[key]
        found = self.pc_functions(sp)
        result: PtxFunction | None = None
        named = self.named_function(info, sp)
        if found:
            kinds = list(found.values())
            result = kinds[0]
            if named is not None and named in kinds:
                result = named
        else:
            result = named
        self._sp_function[key] = result
        return result

    def pc_functions(self, die: DIE) -> dict[int, PtxFunction]:
        out: dict[int, PtxFunction] = {}
        for code in _PC_ATTRS:
            attr = die.attr(code)
            sym = attr.symbol if attr is not None else None
            if sym is None:
                continue
            f = self.functions.get(sym.name) or self.label_function.get(sym.name)
            if f is not None and sym.name not in self.data_labels:
                out[code] = f
        return out

    def named_function(self, info: DebugInfo, sp: DIE) -> PtxFunction | None:
        seen: set[int] = set()
        die: DIE | None = sp
        while die is not None and id(die) not in seen:
            seen.add(id(die))
            for code in (*_LINKAGE, "name"):
                value = die.get(code)
                if isinstance(value, str) and value in self.functions:
                    return self.functions[value]
            nxt = None
            for code in ("specification", "abstract_origin"):
                a = die.attr(code)
                if a is not None and a.is_reference:
                    nxt = info.target(a)
                    if nxt is not None:
                        break
            die = nxt
        return None

    def enclosing_subprogram(self, die: DIE) -> DIE | None:
        p: DIE | None = die
        while p is not None:
            if p.tag == TAG.subprogram:
                return p
            p = p.parent
        return None

    def check_unit(self, info: DebugInfo, unit: Unit, loc_refs: set[int]) -> None:
        image = self.images.get(".debug_info")
        if unit.open_scopes or unit.tail:
            what = (
                f"{unit.open_scopes} child list(s) still open at its end"
                if unit.open_scopes
                else f"{len(unit.tail)} byte(s) after its DIE tree"
            )
            self.add(
                "unit-length",
                f"unit at .debug_info+{unit.offset:#x} has length {unit.length} but {what}; ptxas reads the length "
                "and fails ('Attempted to Dereference Out of Bounds')",
                where=image.source(unit.offset) if image is not None else None,
                section=".debug_info",
                offset=unit.offset,
            )
        uses_strp = False
        symbolic_lists: list[tuple[DIE, Attribute]] = []
        reported_forms: set[tuple[int, int]] = set()
        for die in unit.iter_dies():
            sp = self.enclosing_subprogram(die)
            for attr in die.attributes:
                inner = attr
                while isinstance(inner.value, Attribute):
                    inner = inner.value
                form = inner.form or 0
                if form == FORM.strp:
                    uses_strp = True
                if form > _DWARF2_FORMS_MAX and unit.version in (2, 3, 4) and (die.abbrev_code, form) not in reported_forms:
                    reported_forms.add((die.abbrev_code or 0, form))
                    self.add_attr(
                        "dwarf4-form",
                        f"{at_name(attr.name)} uses {form_name(form)} (0x{form:x}) in a DWARF {unit.version} unit: "
                        "ptxas 13.0 accepts only forms 0x01-0x16 there ('Error in get_form_value default')",
                        info, unit, die, attr,
                    )
                if form == FORM.ref_addr:
                    size = unit.address_size if unit.version == 2 else 4
                    if size != 8:
                        self.add_attr(
                            "ref-addr-size",
                            f"{at_name(attr.name)} is DW_FORM_ref_addr of {size} bytes (DWARF {unit.version}, address "
                            f"size {unit.address_size}); ptxas reads 8 ('Attempted to Dereference Out of Bounds'); "
                            "use DW_FORM_ref4",
                            info, unit, die, attr,
                        )
                if inner.is_reference or form in REFERENCE_FORMS or form == FORM.ref_addr:
                    self.check_reference(info, unit, die, attr, inner)
                if attr.name == AT.address_class:
                    self.check_address_class(info, unit, die, attr, inner)
            location = die.attr(AT.location)
            if location is not None:
                inner = location
                while isinstance(inner.value, Attribute):
                    inner = inner.value
                if inner.form in _BLOCK_FORMS:
                    if die.tag in _VARIABLE_TAGS and die.attr(AT.address_class) is None:
                        self.add_attr(
                            "missing-address-class",
                            f"{die.tag_str} with a single-expression DW_AT_location has no DW_AT_address_class "
                            "(the guide requires one on every variable and parameter; cuda-gdb uses it to pick "
                            "the memory space)",
                            info, unit, die, location,
                        )
                    self.check_expression(info, unit, die, location, inner, sp)
                elif inner.form in _LIST_FORMS:
                    if location.symbol is not None and location.symbol.name == ".debug_loc":
                        symbolic_lists.append((die, location))
                    self.check_list_pointer(info, unit, die, location, inner, sp, loc_refs)
            if die.tag in _CODE_TAGS:
                self.check_pcs(info, unit, die, sp)
            ranges = die.attr(AT.ranges)
            if ranges is not None and isinstance(ranges.value, int) and info.ranges is not None and sp is not None:
                f = self.subprogram_function(info, sp)
                for rl in info.ranges:
                    if rl.offset == ranges.value and f is not None:
                        for begin, end in rl.entries:
                            for v in (begin, end):
                                self.check_label_in(v, f, info, unit, die, ranges, "DW_AT_ranges entry")
            if die.tag == TAG.subprogram:
                self.check_name_order(info, unit, die)
        if uses_strp and symbolic_lists:
            die, attr = symbolic_lists[0]
            more = f" (and {len(symbolic_lists) - 1} more)" if len(symbolic_lists) > 1 else ""
            self.add_attr(
                "loclist-symbol-with-strp",
                f"location-list pointer written as {attr.symbol}{more} in a unit that also uses DW_FORM_strp: "
                "ptxas dies with SIGSEGV; write the offsets as numbers",
                info, unit, die, attr,
            )

    def check_reference(self, info: DebugInfo, unit: Unit, die: DIE, attr: Attribute, inner: Attribute) -> None:
        if isinstance(inner.value, DIE) or not isinstance(inner.target, int):
            return
        target = inner.target
        if inner.form == FORM.ref_addr:
            ok = info.die_at(target) is not None
            scope = ".debug_info"
        else:
            ok = unit.offset + 11 <= target < unit.end and info.die_at(target) is not None
            scope = f"its unit (0x{unit.offset:x}-0x{unit.end:x})"
        if not ok:
            self.add_attr(
                "bad-reference",
                f"{at_name(attr.name)} [{form_name(inner.form or 0)}] points at 0x{target:x}, which is not the start "
                f"of a DIE in {scope}",
                info, unit, die, attr,
            )

    def check_address_class(self, info: DebugInfo, unit: Unit, die: DIE, attr: Attribute, inner: Attribute) -> None:
        value = inner.value
        if not isinstance(value, int):
            return
        if 1 <= value <= 12:
            return
        if value in CUDA_GDB_ADDRESS_CLASSES:
            self.add_attr(
                "address-class-range",
                f"DW_AT_address_class {value} ({address_class_name(value)}) is cuda-gdb's own code, not one of the "
                "guide's 1-12",
                info, unit, die, attr,
                severity=WARNING,
            )
        else:
            self.add_attr(
                "address-class-range",
                f"DW_AT_address_class {value} is not a CUDA address class (1-12 in the guide, 13-16 cuda-gdb's own)",
                info, unit, die, attr,
            )

    def check_registers(
        self,
        ops: Iterable[Op],
        sp: DIE | None,
        info: DebugInfo,
        unit: Unit,
        die: DIE,
        attr: Attribute,
        context: str,
    ) -> None:
        for op in ops:
            if op.code not in (OP.regx, OP.bregx) or not op.args or not isinstance(op.args[0], int):
                continue
            number = op.args[0]
            name = register_name(number)
            if name is None:
                self.add_attr(
                    "regx-undeclared",
                    f"{op.name} {number:#x} in {context} does not spell a PTX register name (the operand must be "
                    "the name's ASCII bytes, read big-endian)",
                    info, unit, die, attr,
                )
                continue
            if len(name) > MAX_REGISTER_NAME:
                self.add_attr(
                    "regx-too-long",
                    f"{op.name} {name} in {context}: {len(name)} characters; cuda-gdb can look up at most "
                    f"{MAX_REGISTER_NAME} (rename the register)",
                    info, unit, die, attr,
                )
            f = self.subprogram_function(info, sp) if sp is not None else None
            if f is not None:
                if f.register(name) is None:
                    self.add_attr(
                        "regx-undeclared",
                        f"{op.name} {name} in {context}: {f.kind} {f.name} (line {f.line}) declares no register "
                        f"{name}{_declared_registers(f)}",
                        info, unit, die, attr,
                    )
            elif not any(fn.register(name) is not None for fn in self.module.functions):
                where = "outside any subprogram" if sp is None else "in a subprogram that maps to no PTX function"
                self.add_attr(
                    "regx-undeclared",
                    f"{op.name} {name} in {context} ({where}): no PTX function declares register {name}",
                    info, unit, die, attr,
                )

    def check_expression(
        self, info: DebugInfo, unit: Unit, die: DIE, attr: Attribute, inner: Attribute, sp: DIE | None
    ) -> None:
        try:
            ops = decode_expression(inner.value, unit.address_size)
        except PtxDwarfError as exc:
            self.add_attr("structure", f"DW_AT_location: {exc.message}", info, unit, die, attr)
            return
        self.check_registers(ops, sp, info, unit, die, attr, "DW_AT_location")
        pieces = [op for op in ops if op.code in (OP.piece, OP.bit_piece)]
        depot = next(
            (op.symbol for op in ops if op.code == OP.addr and op.symbol and op.symbol.name.startswith("__local_depot")),
            None,
        )
        if pieces and depot is not None:
            self.add_attr(
                "depot-in-pieces",
                f"DW_AT_location puts DW_OP_addr {depot} among {pieces[0].name} operations: ptxas fails "
                "('Attempted to Dereference Out of Bounds'); describe the whole object at the depot address",
                info, unit, die, attr,
            )

    def check_list_pointer(
        self,
        info: DebugInfo,
        unit: Unit,
        die: DIE,
        attr: Attribute,
        inner: Attribute,
        sp: DIE | None,
        loc_refs: set[int],
    ) -> None:
        offset = inner.value
        if not isinstance(offset, int):
            return
        if self._lists is None:
            self._lists = {loc.offset: loc for loc in info.locations or ()}
        loc = self._lists.get(offset) if info.locations is not None else None
        if loc is None:
            where = "the module has no .debug_loc" if info.locations is None else "no list starts there"
            self.add_attr(
                "bad-loclist-offset",
                f"{at_name(attr.name)} points at .debug_loc+{offset:#x}, but {where}",
                info, unit, die, attr,
            )
            return
        loc_refs.add(loc.offset)
        f = self.subprogram_function(info, sp) if sp is not None else None
        for i, (begin, end, expr) in enumerate(loc.entries):
            context = f"location list .debug_loc+{loc.offset:#x} entry {i}"
            if f is not None:
                for v in (begin, end):
                    self.check_label_in(v, f, info, unit, die, attr, context)
            if expr is None:
                continue
            try:
                ops = decode_expression(expr, unit.address_size)
            except PtxDwarfError as exc:
                self.add_attr("structure", f"{context}: {exc.message}", info, unit, die, attr)
                continue
            self.check_registers(ops, sp, info, unit, die, attr, context)

    def check_label_in(
        self,
        value: Any,
        f: PtxFunction,
        info: DebugInfo,
        unit: Unit,
        die: DIE,
        attr: Attribute,
        context: str,
    ) -> None:
        if not isinstance(value, Symbol):
            return
        name = value.name
        if name in self.data_labels:
            return
        other = self.functions.get(name) or self.label_function.get(name)
        if other is None or other is f:
            return
        what = "function" if name in self.functions else f"label of {other.kind} {other.name} (line {other.labels.get(name)})"
        self.add_attr(
            "label-wrong-function",
            f"{context} uses {name}, a {what}, but the subprogram describes {f.kind} {f.name}",
            info, unit, die, attr,
        )

    def check_pcs(self, info: DebugInfo, unit: Unit, die: DIE, sp: DIE | None) -> None:
        if sp is None:
            return
        f = self.subprogram_function(info, sp)
        if f is None:
            return
        for code in _PC_ATTRS:
            attr = die.attr(code)
            if attr is None or attr.symbol is None:
                continue
            self.check_label_in(attr.symbol, f, info, unit, die, attr, at_name(code))

    def check_name_order(self, info: DebugInfo, unit: Unit, sp: DIE) -> None:
        codes = [a.name for a in sp.attributes]
        if AT.name not in codes or AT.low_pc not in codes or codes.index(AT.name) > codes.index(AT.low_pc):
            return
        for die in sp.iter_subtree():
            loc = die.attr(AT.location)
            if loc is None:
                continue
            relocs = loc.relocs or ()
            if any(r.symbol.name.startswith("__local_depot") for r in relocs):
                self.add_attr(
                    "name-before-low-pc",
                    f"subprogram has DW_AT_name before DW_AT_low_pc and {die.describe()} lives on the local stack: "
                    "ptxas dies with SIGSEGV; write low_pc, high_pc, frame_base before the name (nvcc's order)",
                    info, unit, sp, sp.attr(AT.name) or sp.attributes[0],
                )
                return

    def check_info_relocs(self, info: DebugInfo) -> None:
        image = self.images.get(".debug_info")
        if image is None or not image.relocs:
            return
        # (start, size, kind): kind "field" relocatable fixed field, "fixed" other fixed field, "block" block body.
        spans: list[tuple[int, int, str, Unit | None, DIE | None, int]] = []
        addr_ops: dict[int, int] = {}
        for unit in info.units:
            spans.append((unit.offset, 4, "fixed", unit, None, 0))
            spans.append((unit.offset + 4, 2, "fixed", unit, None, 0))
            spans.append((unit.offset + 6, 4, "field", unit, None, 0))
            spans.append((unit.offset + 10, 1, "fixed", unit, None, 0))
            for die in unit.iter_dies():
                for attr, (start, size) in zip(die.attributes, self.attr_spans(info, unit, die)):
                    inner = attr
                    while isinstance(inner.value, Attribute):
                        inner = inner.value
                    form = inner.form or 0
                    if form in _BLOCK_FORMS:
                        body = len(inner.value) if isinstance(inner.value, (bytes, bytearray)) else 0
                        spans.append((start + size - body, body, "block", unit, die, form))
                        if attr.is_expression or form == FORM.exprloc:
                            try:
                                for op in decode_expression(inner.value, unit.address_size):
                                    if op.code == OP.addr:
                                        addr_ops[start + size - body + op.offset + 1] = unit.address_size
                            except PtxDwarfError:
                                pass
                    elif form in RELOCATABLE_FORMS:
                        spans.append((start, size, "field", unit, die, form))
                    else:
                        spans.append((start, size, "fixed", unit, die, form))
        spans.sort(key=lambda s: s[0])
        starts = [s[0] for s in spans]
        for reloc in image.relocs:
            i = bisect.bisect_right(starts, reloc.offset) - 1
            if i < 0:
                continue
            start, size, kind, _unit, owner, form = spans[i]
            if reloc.offset >= start + size and kind != "block":
                continue  # between records (padding, tail): structure/unit-length report those
            problem = None
            if kind == "block":
                if reloc.offset >= start + size:
                    continue
                want = addr_ops.get(reloc.offset)
                if want is not None and want != reloc.size:
                    problem = f"a .b{reloc.size * 8} value where DW_OP_addr takes {want} bytes"
                elif reloc.offset + reloc.size > start + size:
                    problem = "runs past the end of its block"
            elif kind == "fixed":
                what = form_name(form) if owner is not None else "a unit header field"
                problem = f"lands in {what}, which cannot hold a symbol"
            elif reloc.offset != start or reloc.size != size:
                what = form_name(form) if owner is not None else "the abbreviation offset"
                problem = f"a .b{reloc.size * 8} value at byte {reloc.offset - start} of {what} ({size} bytes)"
            if problem is None:
                continue
            self.add(
                "reloc-width",
                f"symbolic value {reloc.symbol} in .debug_info: {problem}; ptxas reads the field at its own size "
                "('Attempted to Dereference Out of Bounds')",
                where=image.source(reloc.offset),
                die=owner,
                section=".debug_info",
                offset=reloc.offset,
            )

    def check_loc_lists(self, info: DebugInfo, loc_refs: set[int]) -> None:
        if not info.locations:
            return
        image = self.images.get(".debug_loc")
        for loc in info.locations:
            if loc.offset in loc_refs:
                continue
            depot = _depot_symbol(loc)
            if depot is not None:
                self.add(
                    "orphan-depot-list",
                    f"location list at .debug_loc+{loc.offset:#x} is not referred to by any DIE and holds "
                    f"DW_OP_addr {depot}: ptxas fails ('Attempted to Dereference Out of Bounds'); drop the list",
                    where=image.source(loc.offset) if image is not None else None,
                    section=".debug_loc",
                    offset=loc.offset,
                )

    def resolve_unit_offset(self, info: DebugInfo, value: Any) -> int | None:
        if isinstance(value, Unit):
            return value.offset
        if isinstance(value, Symbol):
            if value.name == ".debug_info":
                return value.addend
            labels = self.images.get(".debug_info")
            if labels is not None and value.name in labels.labels:
                return labels.labels[value.name] + value.addend
            return None
        if isinstance(value, int):
            return value
        return None

    def check_name_set(self, info: DebugInfo, section: str, ns: NameSet) -> None:
        offset = self.resolve_unit_offset(info, ns.unit_offset)
        unit = next((u for u in info.units if u.offset == offset), None)
        if unit is None:
            self.add(
                "names-unit-offset",
                f"name set at {section}+{ns.offset:#x} names unit offset {_fmt(ns.unit_offset, offset)}, which is "
                f"not the start of a unit (units at {_offsets(info)})",
                section=section,
                offset=ns.offset + 6,
            )
            return
        if ns.unit_length is not None and ns.unit_length not in (unit.length + 4, unit.length):
            self.add(
                "names-unit-length",
                f"name set at {section}+{ns.offset:#x} says its unit is {ns.unit_length} bytes; the unit at "
                f"{unit.offset:#x} is {unit.length + 4} (unit_length {unit.length})",
                section=section,
                offset=ns.offset + 10,
            )
        pos = ns.offset + 14
        for entry, name in ns.entries:
            if isinstance(entry, DIE):
                pos += 4 + len(name.encode("utf-8", "surrogateescape")) + 1
                continue
            target = unit.offset + entry
            die = info.die_at(target) if unit.offset + 11 <= target < unit.end else None
            if die is None:
                self.add(
                    "names-entry",
                    f"{section} entry {name!r} points at DIE offset {entry:#x} (0x{target:x} in .debug_info), which "
                    f"is not a DIE of the unit at {unit.offset:#x}",
                    section=section,
                    offset=pos,
                )
            else:
                names = {die.name, *(die.get(c) for c in _LINKAGE)}
                spec = die.attr("specification")
                if spec is not None and info.target(spec) is not None:
                    t = info.target(spec)
                    assert t is not None
                    names |= {t.name, *(t.get(c) for c in _LINKAGE)}
                if name not in names:
                    self.add(
                        "names-entry",
                        f"{section} entry {name!r} points at {die.describe()}, whose name is {die.name!r}",
                        section=section,
                        offset=pos,
                        severity=WARNING,
                    )
            pos += 4 + len(name.encode("utf-8", "surrogateescape")) + 1


_LINE_ZERO_LOC = re.compile(r"^[ \t]*\.loc[ \t]+\d+[ \t]+0(?!\d)", re.MULTILINE)
_LOC_LINE = re.compile(r"\.loc[ \t]+\d+[ \t]+(\d+)")
_LEADING_LABEL = re.compile(rf"({_SYM})[ \t]*:")


def _labels_at_line_zero(text: str, start: int, end: int) -> list[str]:
    """The last label of each run of labels in ``text[start:end]`` (a function body) whose
    instruction has line 0."""
    found: list[str] = []
    current: int | None = None
    pending: list[str] = []
    for raw in text[start:end].split("\n"):
        s = raw.split("//", 1)[0].strip()
        while s:
            m = _LEADING_LABEL.match(s)
            if m is None:
                break
            pending.append(m.group(1))
            s = s[m.end() :].lstrip()
        if s.startswith(".loc"):
            m = _LOC_LINE.match(s)
            if m is not None:
                current = int(m.group(1))
        elif s and not s.startswith((".", "{", "}")) and pending:
            if current == 0:
                found.append(pending[-1])  # ptxas keeps the labels before the last one
            pending = []
    return found


def _decl_offsets(data: bytes, pos: int) -> list[int]:
    """Offsets of the declarations of the abbreviation table at ``pos``."""
    out: list[int] = []
    try:
        while True:
            start = pos
            code, pos = read_uleb(data, pos)
            if code == 0:
                return out
            out.append(start)
            _, pos = read_uleb(data, pos)
            pos += 1
            while True:
                name, pos = read_uleb(data, pos)
                form, pos = read_uleb(data, pos)
                if name == 0 and form == 0:
                    break
    except IndexError:
        return out


def _depot_symbol(loc: LocationList) -> Symbol | None:
    for _b, _e, expr in loc.entries:
        for r in getattr(expr, "relocs", ()) or ():
            if r.symbol.name.startswith("__local_depot"):
                return r.symbol
    return None


def _declared_registers(f: PtxFunction) -> str:
    regs = []
    for v in f.declarations:
        if v.space == "reg":
            regs.append(f"{v.name}<{v.count}>" if v.count is not None else v.name)
    if not regs:
        return " (it declares no registers)"
    shown = ", ".join(regs[:8]) + (", ..." if len(regs) > 8 else "")
    return f" (it declares {shown})"


def _describe(die: DIE) -> str:
    names = []
    p: DIE | None = die
    while p is not None and p.tag != TAG.compile_unit:
        name = p.name
        if name is None:
            for code in _LINKAGE:
                value = p.get(code)
                if isinstance(value, str):
                    name = value
                    break
        if name is not None:
            names.append(name)
        p = p.parent
    text = die.describe()
    if names:
        text += ", " + "/".join(reversed(names))
    return text


def _fmt(value: Any, resolved: int | None) -> str:
    if isinstance(value, Symbol):
        return f"{value} (= {resolved:#x})" if resolved is not None else str(value)
    return f"{resolved:#x}" if resolved is not None else repr(value)


def _offsets(info: DebugInfo) -> str:
    return ", ".join(f"{u.offset:#x}" for u in info.units) or "none"


def _short_list(values: list[int], limit: int = 12) -> str:
    shown = ", ".join(map(str, values[:limit]))
    return shown + (", ..." if len(values) > limit else "")


def _ranges(values: list[int]) -> str:
    return ", ".join(map(str, values[:12])) + (", ..." if len(values) > 12 else "")


def _sort_key(f: Finding) -> tuple[int, int, str]:
    m = re.search(r":(\d+)$", f.where)
    return (int(m.group(1)) if m else 0, _SEVERITY_RANK.get(f.severity, 2), f.rule)


# --- API ---------------------------------------------------------------------------


def lint_module(module: PtxModule) -> list[Finding]:
    """The findings for an already parsed module, sorted by line."""
    return _Linter(module).run()


def lint(text: str, *, filename: str = "<ptx>") -> list[Finding]:
    """Check the debug sections of PTX ``text``; an empty list means nothing to say.

    Raises :class:`~ptxdwarf.errors.PtxSyntaxError` when the text is not PTX ptxdwarf can read.
    """
    return lint_module(parse_ptx(text, filename))


def main_lint(path: str, json_output: bool) -> int:
    """``ptxdwarf lint FILE [--json]``: print the findings; 0 when there are none, 1 otherwise.

    Bad input raises (:class:`~ptxdwarf.errors.PtxSyntaxError`, :class:`OSError`); the caller
    turns that into exit code 2.
    """
    from .api import load_text

    findings = lint(load_text(path), filename=path)
    out = sys.stdout
    if json_output:
        json.dump([f.to_json() for f in findings], out, indent=1)
        out.write("\n")
    else:
        for f in findings:
            out.write(str(f) + "\n")
    return 1 if findings else 0
