"""Checks of the DWARF structure: abbreviation tables, unit lengths, forms ptxas reads,
DIE references, name and address-range sets, and where symbolic values land."""

from __future__ import annotations

import bisect
import struct
from typing import Any

from ..dwarf.constants import FORM, OP, TAG, at_name, form_name
from ..dwarf.expr import decode_expression
from ..dwarf.forms import RELOCATABLE_FORMS, fixed_formats
from ..dwarf.image import SectionImage, Symbol
from ..dwarf.model import DIE, REFERENCE_FORMS, Attribute, DebugInfo, NameSet, Unit
from ..errors import PtxDwarfError
from ..ptx.symbols import DEPOT, KERNEL_PARAM, VARIABLE, PtxSymbol
from .context import LINKAGE, LintContext
from .rules import WARNING

__all__ = [
    "BLOCK_FORMS",
    "FormChecks",
    "check_abbrevs",
    "check_aranges",
    "check_info_relocs",
    "check_name_set",
    "check_unit_length",
]

BLOCK_FORMS = frozenset({FORM.block1, FORM.block2, FORM.block4, FORM.block, FORM.exprloc})
_DWARF2_FORMS_MAX = 0x16
_REFERENCE_OR_ADDR = REFERENCE_FORMS | {FORM.ref_addr}
_CHECKED_FORMS = _REFERENCE_OR_ADDR | {FORM.strp}
# Codes every attribute is compared with, as plain ints (an enum member's look-up is slower).
_INDIRECT = int(FORM.indirect)
_REF_ADDR = int(FORM.ref_addr)


def check_abbrevs(ctx: LintContext, info: DebugInfo) -> None:
    """abbrev-code-order: ptxas needs codes 1..N in table order."""
    image = ctx.images.get(".debug_abbrev")
    for table in info.abbrev_tables:
        codes = [d.code for d in table.decls]
        if codes == list(range(1, len(codes) + 1)):
            continue
        bad = next(i for i, c in enumerate(codes) if c != i + 1)
        at = table.decls[bad].offset if table.decls[bad].offset >= 0 else table.offset
        ctx.add(
            "abbrev-code-order",
            f"abbreviation table at .debug_abbrev+{table.offset:#x} has codes {_short_list(codes)}; ptxas needs "
            f"1..{len(codes)} in table order ('Attempted to Dereference Out of Bounds'): declaration "
            f"{bad + 1} has code {codes[bad]}",
            where=image.source(at) if image is not None else None,
            section=".debug_abbrev",
            offset=at,
        )


def check_unit_length(ctx: LintContext, unit: Unit) -> None:
    """unit-length: the unit's length ends where its DIE tree ends (zero padding after it is fine)."""
    if unit.open_scopes:
        what = (
            f"{unit.open_scopes} child list(s) still open at its end; ptxas keeps the unit as it is and a "
            "reader closes the lists there"
        )
    elif unit.tail.strip(b"\0"):
        what = (
            f"{len(unit.tail)} byte(s) after its DIE tree that are not zero padding; ptxas keeps them and a "
            "reader decodes them as more DIEs"
        )
    else:
        return
    image = ctx.images.get(".debug_info")
    ctx.add(
        "unit-length",
        f"unit at .debug_info+{unit.offset:#x} has length {unit.length} but {what}",
        where=image.source(unit.offset) if image is not None else None,
        section=".debug_info",
        offset=unit.offset,
    )


class FormChecks:
    """dwarf4-form, ref-addr-size, bad-reference over the DIEs of one unit; on the way, the
    fields of relocatable forms go to ``filled`` (what :func:`check_info_relocs` needs)."""

    def __init__(
        self, ctx: LintContext, info: DebugInfo, unit: Unit, filled: set[tuple[int, int]] | None = None
    ) -> None:
        self.ctx = ctx
        self.info = info
        self.unit = unit
        self._reported: set[tuple[int, int]] = set()
        self.filled: set[tuple[int, int]] = set() if filled is None else filled
        """(offset, size) of each decoded fixed-size attribute of a relocatable form seen."""
        self._relocatable_sizes = _relocatable_sizes(unit)
        forms = set(range(_DWARF2_FORMS_MAX + 1))
        if unit.version not in (2, 3, 4):
            forms.update(FORM)
        self.quiet = frozenset(forms - set(self._relocatable_sizes) - {_INDIRECT} - _CHECKED_FORMS)
        """Forms whose attributes :meth:`check_attribute` has nothing to do with."""

    def check_attribute(self, die: DIE, attr: Attribute, inner: Attribute) -> None:
        size = self._relocatable_sizes.get(attr.form)  # type: ignore[arg-type]
        if size is not None and attr.offset >= 0:
            self.filled.add((attr.offset, size))
        unit = self.unit
        form = inner.form or 0
        if attr.form == _INDIRECT and isinstance(attr.value, Attribute) and attr.value.form == _INDIRECT:
            self.ctx.add_attr(
                "dwarf4-form",
                f"{at_name(attr.name)} is DW_FORM_indirect whose value is DW_FORM_indirect again: ptxas exits "
                "with code 1 and no message (one DW_FORM_indirect is fine)",
                die,
                attr,
            )
        if form not in _CHECKED_FORMS and (form <= _DWARF2_FORMS_MAX or unit.version not in (2, 3, 4)):
            return
        if (
            form > _DWARF2_FORMS_MAX
            and unit.version in (2, 3, 4)
            and (die.abbrev_code, form) not in self._reported
        ):
            self._reported.add((die.abbrev_code or 0, form))
            self.ctx.add_attr(
                "dwarf4-form",
                f"{at_name(attr.name)} uses {form_name(form)} (0x{form:x}) in a DWARF {unit.version} unit: "
                "ptxas 13.0 accepts only forms 0x01-0x16 there ('Error in get_form_value default')",
                die,
                attr,
            )
        if form == _REF_ADDR:
            size = unit.address_size if unit.version == 2 else 4
            if size != 8:
                self.ctx.add_attr(
                    "ref-addr-size",
                    f"{at_name(attr.name)} is DW_FORM_ref_addr of {size} bytes (DWARF {unit.version}, address "
                    f"size {unit.address_size}); ptxas reads 8 ('Attempted to Dereference Out of Bounds'); "
                    "use DW_FORM_ref4",
                    die,
                    attr,
                )
        if form in _REFERENCE_OR_ADDR:
            self.check_reference(die, attr, inner)

    def check_reference(self, die: DIE, attr: Attribute, inner: Attribute) -> None:
        if isinstance(inner.value, DIE) or not isinstance(inner.target, int):
            return
        info, unit = self.info, self.unit
        target = inner.target
        if inner.form == _REF_ADDR:
            ok = info.die_at(target) is not None
            scope = ".debug_info"
        else:
            ok = unit.offset + 11 <= target < unit.end and info.die_at(target) is not None
            scope = f"its unit (0x{unit.offset:x}-0x{unit.end:x})"
        if not ok:
            self.ctx.add_attr(
                "bad-reference",
                f"{at_name(attr.name)} [{form_name(inner.form or 0)}] points at 0x{target:x}, which is not the start "
                f"of a DIE in {scope}",
                die,
                attr,
            )


#: The fields of a DWARF 2-4 unit header: (offset in the header, size, kind), kind
#: "field" for the one that holds a symbol (the abbreviation offset), else "fixed".
_HEADER = ((0, 4, "fixed"), (4, 2, "fixed"), (6, 4, "field"), (10, 1, "fixed"))


class _Fields:
    """The field of .debug_info that holds an offset: (start, size, kind, owner DIE, form,
    attribute); kind "field" for a relocatable fixed-size field, "fixed" for another
    fixed-size field, "block" for a block's body."""

    def __init__(self, info: DebugInfo) -> None:
        self.info = info
        self.units = sorted(info.units, key=lambda u: u.offset)
        self.unit_starts = [u.offset for u in self.units]
        self._spans: dict[int, list[tuple[int, int]]] = {}

    def at(self, offset: int) -> tuple[int, int, str, DIE | None, int, Attribute | None] | None:
        i = bisect.bisect_right(self.unit_starts, offset) - 1
        if i >= 0 and offset < self.units[i].offset + 11:
            base = self.units[i].offset
            for rel, size, kind in _HEADER:
                if base + rel <= offset < base + rel + size:
                    return base + rel, size, kind, None, 0, None
            return None
        found = self.info.attribute_at(offset)
        if found is None:
            return None
        die, attr = found
        spans = self._spans.get(id(die))
        if spans is None:
            spans = self._spans[id(die)] = die.value_spans()
        k = next(j for j, a in enumerate(die.attributes) if a is attr)
        if k >= len(spans):
            return None
        start, size = spans[k]
        inner = attr.innermost
        form = inner.form or 0
        if form in BLOCK_FORMS:
            body = len(inner.value) if isinstance(inner.value, (bytes, bytearray)) else 0
            start, size, kind = start + size - body, body, "block"
        elif form in RELOCATABLE_FORMS:
            kind = "field"
        else:
            kind = "fixed"
        if not start <= offset < start + size:
            return None
        return start, size, kind, die, form, attr


def _addr_operand_size(info: DebugInfo, die: DIE, attr: Attribute, start: int, offset: int) -> int | None:
    """The size of the DW_OP_addr operand at ``offset`` of the expression block at ``start``, if one is there."""
    inner = attr.innermost
    if not (attr.is_expression or inner.form == FORM.exprloc):
        return None
    unit = info.unit_of(die)
    if unit is None:
        return None
    try:
        for op in decode_expression(inner.value, unit.address_size):
            if op.code == OP.addr and start + op.offset + 1 == offset:
                return unit.address_size
    except PtxDwarfError:
        pass
    return None


def _relocatable_sizes(unit: Unit) -> dict[int, int]:
    """The size of each fixed-size relocatable form in ``unit``."""
    return {
        form: struct.calcsize("<" + fmt)
        for form, fmt in fixed_formats(unit.version, unit.address_size).items()
        if form in RELOCATABLE_FORMS
    }


def check_info_relocs(ctx: LintContext, info: DebugInfo, filled: set[tuple[int, int]]) -> None:
    """reloc-width: each symbolic value of .debug_info fills one relocatable field or DW_OP_addr operand
    (``filled``: the relocatable fields of every unit, as :class:`FormChecks` collects them)."""
    image = ctx.images.get(".debug_info")
    if image is None or not image.relocs:
        return
    fields = _Fields(info)
    for reloc in image.relocs:
        if (reloc.offset, reloc.size) in filled:
            continue  # the common case: exactly one relocatable field
        found = fields.at(reloc.offset)
        if found is None:
            continue  # between records (padding, tail): structure/unit-length report those
        start, size, kind, owner, form, attr = found
        problem = None
        effect = "ptxas relocates the value where it stands, and the field does not read as the symbol"
        if kind == "block":
            assert owner is not None and attr is not None
            want = _addr_operand_size(info, owner, attr, start, reloc.offset)
            if want is not None and want != reloc.size:
                low_half = _low_half(image, reloc.offset, reloc.size, reloc.offset, want)
                symbol = ctx.symbols.lookup(reloc.symbol.name)
                if low_half and _written_as_offset(symbol):
                    continue  # ptxas writes the offset over the whole operand (measured, quirk reloc-width)
                problem = f"a .b{reloc.size * 8} value where DW_OP_addr takes {want} bytes"
                if symbol.kind == DEPOT:
                    effect = (
                        "ptxas rewrites 5 of the operation's 9 bytes (DW_OP_fbreg and nops) and leaves "
                        "4 zero bytes that no reader decodes"
                    )
                elif low_half and symbol.kind == VARIABLE:
                    effect = (
                        "ptxas relocates only those 4 bytes (a 32-bit relocation): the operand holds the low "
                        "32 bits of the address"
                    )
            elif reloc.offset + reloc.size > start + size:
                problem = "runs past the end of its block"
        elif kind == "fixed":
            what = form_name(form) if owner is not None else "a unit header field"
            problem = f"lands in {what}, which cannot hold a symbol"
        elif reloc.offset != start or reloc.size != size:
            if _low_half(image, reloc.offset, reloc.size, start, size):
                continue  # ptxas relocates it to the right value (measured, quirk reloc-width)
            what = form_name(form) if owner is not None else "the abbreviation offset"
            problem = f"a .b{reloc.size * 8} value at byte {reloc.offset - start} of {what} ({size} bytes)"
        if problem is None:
            continue
        ctx.add(
            "reloc-width",
            f"symbolic value {reloc.symbol} in .debug_info: {problem}; {effect}",
            where=image.source(reloc.offset),
            die=owner,
            section=".debug_info",
            offset=reloc.offset,
        )


def _written_as_offset(found: PtxSymbol) -> bool:
    """Whether ptxas writes ``found`` in a debug section as an offset, with no relocation: a
    kernel parameter (its constant-bank offset) or a module ``.shared`` variable (its offset in
    the shared window). As a ``.b32`` DW_OP_addr operand with a plain 0 after it, the operand
    reads right (cases reloc-width.param-b32, reloc-width.shared-b32)."""
    if found.kind == KERNEL_PARAM:
        return True
    return found.kind == VARIABLE and found.variable is not None and found.variable.space == "shared"


def _low_half(image: SectionImage, offset: int, width: int, start: int, size: int) -> bool:
    """Whether a ``.b32`` symbolic value fills the low half of an 8-byte field whose high half is
    a plain 0: the field reads as the symbol once relocated (ptxas 12.0-13.5, case reloc-width.addr-b32)."""
    return (
        offset == start
        and width == 4
        and size == 8
        and image.data[start + 4 : start + 8] == bytes(4)
        and not image.relocs_in(start + 4, start + 8)
    )


def resolve_unit_offset(ctx: LintContext, value: Any) -> int | None:
    """A unit offset as a number: itself, a unit, ``.debug_info+N`` or a .debug_info label."""
    if isinstance(value, Unit):
        return value.offset
    if isinstance(value, Symbol):
        if value.name == ".debug_info":
            return value.addend
        labels = ctx.images.get(".debug_info")
        if labels is not None and value.name in labels.labels:
            return labels.labels[value.name] + value.addend
        return None
    if isinstance(value, int):
        return value
    return None


def check_aranges(ctx: LintContext, info: DebugInfo) -> None:
    """aranges-unit-offset."""
    for aset in info.aranges or ():
        offset = resolve_unit_offset(ctx, aset.unit_offset)
        if offset is None or not any(u.offset == offset for u in info.units):
            ctx.add(
                "aranges-unit-offset",
                f"aranges set at .debug_aranges+{aset.offset:#x} names unit offset {_fmt(aset.unit_offset, offset)}, "
                f"which is not the start of a unit (units at {_offsets(info)})",
                section=".debug_aranges",
                offset=aset.offset + 6,
            )


def _names_of(info: DebugInfo, die: DIE) -> set[str | None]:
    """The names a .debug_pubnames entry may give ``die``: its name and linkage names, those of
    the declaration it completes (DW_AT_specification, DW_AT_abstract_origin), and each name
    qualified by the names of the scopes around it (``S::twice``, ``kernel::buf``)."""
    names: set[str | None] = set()
    for d in (die, *(info.target(a) for a in (die.attr("specification"), die.attr("abstract_origin")) if a)):
        if d is None:
            continue
        names |= {d.name, *(d.get(c) for c in LINKAGE)}
        scopes = []
        parent = d.parent
        while parent is not None and parent.tag != TAG.compile_unit:
            if parent.name:
                scopes.append(parent.name)
            parent = parent.parent
        if d.name and scopes:
            names.add("::".join([*reversed(scopes), d.name]))
    return names


def check_name_set(ctx: LintContext, info: DebugInfo, section: str, ns: NameSet) -> None:
    """names-unit-offset, names-unit-length, names-entry."""
    offset = resolve_unit_offset(ctx, ns.unit_offset)
    unit = next((u for u in info.units if u.offset == offset), None)
    if unit is None:
        ctx.add(
            "names-unit-offset",
            f"name set at {section}+{ns.offset:#x} names unit offset {_fmt(ns.unit_offset, offset)}, which is "
            f"not the start of a unit (units at {_offsets(info)})",
            section=section,
            offset=ns.offset + 6,
        )
        return
    if ns.unit_length is not None and ns.unit_length not in (unit.length + 4, unit.length):
        ctx.add(
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
            ctx.add(
                "names-entry",
                f"{section} entry {name!r} points at DIE offset {entry:#x} (0x{target:x} in .debug_info), which "
                f"is not a DIE of the unit at {unit.offset:#x}",
                section=section,
                offset=pos,
            )
        else:
            names = _names_of(info, die)
            if name not in names:
                ctx.add(
                    "names-entry",
                    f"{section} entry {name!r} points at {die.describe()}, whose name is {die.name!r}",
                    section=section,
                    offset=pos,
                    severity=WARNING,
                )
        pos += 4 + len(name.encode("utf-8", "surrogateescape")) + 1


def _fmt(value: Any, resolved: int | None) -> str:
    if isinstance(value, Symbol):
        return f"{value} (= {resolved:#x})" if resolved is not None else str(value)
    return f"{resolved:#x}" if resolved is not None else repr(value)


def _offsets(info: DebugInfo) -> str:
    return ", ".join(f"{u.offset:#x}" for u in info.units) or "none"


def _short_list(values: list[int], limit: int = 12) -> str:
    shown = ", ".join(map(str, values[:limit]))
    return shown + (", ..." if len(values) > limit else "")
