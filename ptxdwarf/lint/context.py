"""What every lint check shares: the module, its symbols and images, the decoded DWARF, the findings."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from typing import Any

from ..cuda.quirks import quirks_for_rule
from ..dwarf.constants import AT, TAG
from ..dwarf.image import SectionImage
from ..dwarf.model import DIE, Attribute, DebugInfo, LocationList, Unit
from ..ptx.module import PtxFunction, PtxModule, SectionBlock
from ..ptx.statements import line_directives, register_uses
from ..ptx.symbols import SymbolTable, symbol_table
from .finding import Finding
from .rules import RULES

__all__ = ["LINKAGE", "PC_ATTRS", "LintContext", "describe_die", "enclosing_subprogram"]

PC_ATTRS = (AT.low_pc, AT.high_pc, AT.entry_pc)
LINKAGE = tuple(a for a in ("linkage_name", "MIPS_linkage_name") if a in AT.__members__)


class LintContext:
    """One lint run's state and the lookups the checks share."""

    def __init__(
        self, module: PtxModule, *, ptxas_version: str | None = None, keep_statements: bool = False
    ) -> None:
        self.module = module
        self.ptxas_version = ptxas_version
        """The ptxas release whose traps are reported (None: any release measured)."""
        self.keep_statements = keep_statements
        """Whether the split bodies of the functions a finding names go to
        ``module.kept_statements``, for the repairs of the same module (:func:`ptxdwarf.fix`)."""
        self.filename = module.filename
        self.symbols: SymbolTable = symbol_table(module)
        self.findings: list[Finding] = []
        self.info: DebugInfo | None = None
        self.images: dict[str, SectionImage] = dict(module.images().items())
        self.section_blocks: dict[str, list[SectionBlock]] = {}
        for block in module.sections:
            self.section_blocks.setdefault(block.name, []).append(block)
        self.lists: dict[int, LocationList] | None = None
        """The .debug_loc lists by offset (set by the location checks)."""
        self._sp_function: dict[int, PtxFunction | None] = {}
        self._die_starts: list[int] = []
        self._dies: list[DIE] = []
        self._roots: dict[int, Unit] = {}
        self._dies_indexed = False
        self._owners: dict[str, PtxFunction] | None = None
        self._loc_lines: list[re.Match[str]] | None = None
        self._register_uses: dict[int, tuple[str, int, int]] | None = None
        self._traps: dict[str, bool] = {}
        self.decode_quietly: Callable[[], DebugInfo | None] | None = None
        """Decodes the debug sections without findings, for :meth:`die_containing` asked before
        :meth:`set_info` (the checks of symbolic values run beside the decoding)."""

    def set_info(self, info: DebugInfo | None) -> None:
        """The decoded debug sections (None when they cannot be decoded)."""
        self.info = info
        self.decode_quietly = None
        self._dies_indexed = False

    def _index_dies(self) -> None:
        """The DIEs of :attr:`info` by offset, for :meth:`die_containing`."""
        self._dies_indexed = True
        info = self.info
        if info is not None:
            dies = sorted((d for d in info.iter_dies() if d.offset >= 0), key=lambda d: d.offset)
            self._dies = dies
            self._die_starts = [d.offset for d in dies]
            self._roots = {id(u.die): u for u in info.units if u.die is not None}

    @property
    def owners(self) -> dict[str, PtxFunction]:
        """:meth:`~ptxdwarf.ptx.symbols.SymbolTable.code_owner` of each name that has one, as a
        dict (quicker to ask, once per label of every location list)."""
        if self._owners is None:
            owners = dict(self.symbols.code_labels)
            owners.update(self.symbols.functions)
            self._owners = owners
        return self._owners

    @property
    def loc_lines(self) -> list[re.Match[str]]:
        """The ``.loc`` lines of the module's comment-masked text (see
        :func:`~ptxdwarf.ptx.statements.line_directives`)."""
        if self._loc_lines is None:
            self._loc_lines = list(line_directives(self.module.masked))
        return self._loc_lines

    def register_uses(self) -> dict[int, tuple[str, int, int]]:
        """:func:`~ptxdwarf.ptx.statements.register_uses` of each function with a body, by the
        function's id (read from the text unless :meth:`hold_register_uses` kept them)."""
        if self._register_uses is not None:
            return self._register_uses
        masked = self.module.masked
        return {
            id(f): register_uses(masked, f.body_start, f.body_end)
            for f in self.module.functions
            if f.body_start >= 0
        }

    def hold_register_uses(self) -> None:
        """Keep :meth:`register_uses`, for checks that run after the text is let go."""
        self._register_uses = self.register_uses()

    # --- reporting ----------------------------------------------------------

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
        """Record a finding of ``rule``; ``where`` defaults to the line, else the section offset's or the DIE's line.

        With :attr:`ptxas_version`, a finding of a rule that reports a ptxas trap is left out
        when the quirk registry measured that the trap does not hold for that release."""
        if self.ptxas_version is not None and not self._trap_holds(rule):
            return
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
                describe_die(die) if die is not None else None,
                section,
                offset,
            )
        )

    def _trap_holds(self, rule: str) -> bool:
        """Whether ``rule`` reports something for :attr:`ptxas_version`: it is no quirk's rule, a
        quirk of it holds for that release, or none of its quirks was reproduced anywhere."""
        found = self._traps.get(rule)
        if found is None:
            measured = [q for q in quirks_for_rule(rule) if q.holds_on]
            found = self._traps[rule] = not measured or any(q.holds_for(self.ptxas_version) for q in measured)
        return found

    def add_attr(self, rule: str, message: str, die: DIE, attr: Attribute, **kw: Any) -> None:
        """Record a finding at attribute ``attr`` of ``die`` (its value's place in .debug_info)."""
        off = attr.value_offset
        if off < 0:
            off = die.offset
        image = self.images.get(".debug_info")
        where = image.source(off) if image is not None else None
        self.add(rule, message, where=where, die=die, offset=off, **kw)

    # --- DIEs ---------------------------------------------------------------

    def die_containing(self, offset: int) -> DIE | None:
        """The DIE whose bytes hold ``offset`` in .debug_info (the last DIE starting at or
        before it, within its unit)."""
        if self.decode_quietly is not None:
            self.set_info(self.decode_quietly())
        if not self._dies_indexed:
            self._index_dies()
        i = bisect.bisect_right(self._die_starts, offset) - 1
        if i < 0:
            return None
        die = self._dies[i]
        root = die
        while root.parent is not None:
            root = root.parent
        unit = self._roots.get(id(root))
        if unit is not None and not unit.offset <= offset < unit.end:
            return None
        return die

    def subprogram_function(self, sp: DIE) -> PtxFunction | None:
        """The PTX function a subprogram describes: by its low/high/entry pc symbol, else its linkage name."""
        key = id(sp)
        if key in self._sp_function:
            return self._sp_function[key]
        found = self.pc_functions(sp)
        named = self.named_function(sp)
        result: PtxFunction | None
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
        """The functions the low/high/entry pc symbols of ``die`` are code of."""
        out: dict[int, PtxFunction] = {}
        symbols = self.symbols
        for code in PC_ATTRS:
            attr = die.attr(code)
            sym = attr.symbol if attr is not None else None
            if sym is None:
                continue
            f = symbols.code_owner(sym.name)
            if f is not None and sym.name not in symbols.data_labels:
                out[code] = f
        return out

    def named_function(self, sp: DIE) -> PtxFunction | None:
        """The function a subprogram (or its specification, abstract origin) names."""
        functions = self.symbols.functions
        seen: set[int] = set()
        die: DIE | None = sp
        while die is not None and id(die) not in seen:
            seen.add(id(die))
            for code in (*LINKAGE, "name"):
                value = die.get(code)
                if isinstance(value, str) and value in functions:
                    return functions[value]
            nxt = None
            for code in ("specification", "abstract_origin"):
                a = die.attr(code)
                if a is not None and a.is_reference and self.info is not None:
                    nxt = self.info.target(a)
                    if nxt is not None:
                        break
            die = nxt
        return None


def enclosing_subprogram(die: DIE) -> DIE | None:
    """``die`` or the nearest subprogram above it."""
    p: DIE | None = die
    while p is not None:
        if p.tag == TAG.subprogram:
            return p
        p = p.parent
    return None


def describe_die(die: DIE) -> str:
    """``DW_TAG_formal_parameter 'p' at 0xc6, test/p``: the DIE and the names above it."""
    names = []
    p: DIE | None = die
    while p is not None and p.tag != TAG.compile_unit:
        name = p.name
        if name is None:
            for code in LINKAGE:
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
