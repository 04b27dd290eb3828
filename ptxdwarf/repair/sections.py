"""Repairs of the debug sections: of their images before decoding, and of the decoded DIEs
before they are encoded again. Each repairs what the lint findings it is given name: the
section, the symbolic value, the DIE or the attribute.

Encoding again is itself the repair of several traps: every symbol goes alone on its
directive (ptxas-syntax), unit lengths and differences become numbers
(info-label-difference), and numbers of 2**32 or more are two ``.b32`` (wide-literal-truncated).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from ..dwarf.constants import AT, FORM, OP, TAG, address_class_name
from ..dwarf.expr import decode_expression
from ..dwarf.image import Reloc, SectionImage
from ..dwarf.model import DIE, Attribute, DebugInfo
from ..lint.finding import Finding
from ..lint.locations import bitfield_member_order, space_class
from ..ptx.symbols import DATA_LABEL, SECTION, symbol_table
from .registry import Repair, SectionJob, repair

__all__ = [
    "bitfield_location_first",
    "class_of_state_space",
    "dwarf2_forms",
    "encode_again",
    "labels_to_numbers",
    "linkage_name_first",
    "merge_blocks",
    "no_section_labels",
    "numbers_outside_info",
    "ref4_references",
    "renumber_abbrevs",
    "strp_own_values",
    "whole_wide_values",
]


@repair("wide-literal-truncated", phase="image")
def whole_wide_values(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """Each ``.b64`` number of 2**32 or more in the sections of ``findings`` keeps its whole
    value (the reader keeps what ptxas keeps, the low 32 bits); the writer puts it as two
    ``.b32``."""
    repairs = []
    named = {f.section for f in findings}
    for name, image in list(job.images.items()):
        if name not in named or not image.wide_values:
            continue
        data = bytearray(image.data)
        for offset, value in sorted(image.wide_values.items()):
            data[offset : offset + 8] = value.to_bytes(8, "little")
            repairs.append(
                Repair("wide-value", job.where(name, offset), f".b64 {value} -> two .b32 (low word first)")
            )
        job.images[name] = replace(image, data=bytes(data), wide_values={})
    return repairs


def _fits(value: int, size: int) -> bool:
    return 0 <= value < 1 << (8 * size)


@repair("duplicate-section", phase="image")
def merge_blocks(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """The blocks of each section ``findings`` find given again written as one block, in text
    order (what the reader makes of them; ptxas drops or overlays the later ones)."""
    again = {f.where for f in findings}
    counts: dict[str, int] = {}
    named: set[str] = set()
    for block in job.module.sections:
        counts[block.name] = counts.get(block.name, 0) + 1
        if f"{job.module.filename}:{block.line}" in again:
            named.add(block.name)
    repairs = []
    for name, n in counts.items():
        if name in named and name in job.images:
            job.images[name] = replace(job.images[name])  # a copy: written back as one block
            first = next(b for b in job.module.sections if b.name == name)
            repairs.append(
                Repair(
                    "duplicate-section",
                    f"{job.module.filename}:{first.line}",
                    f"{n} blocks of {name} merged into one",
                )
            )
    return repairs


@repair("symbol-outside-info", phase="image")
def numbers_outside_info(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """The section name or data label at each place of ``findings`` outside ``.debug_info``
    (which ptxas writes as 0) -> the number it stands for. A code label plus N has no number
    to write: not repaired."""
    table = symbol_table(job.module)
    places = {(f.section, f.offset) for f in findings}
    repairs = []
    for name, image in list(job.images.items()):
        if name == ".debug_info" or not name.startswith(".debug_"):
            continue
        data = bytearray(image.data)
        kept: list[Reloc] = []
        changed = False
        for reloc in image.relocs:
            if (name, reloc.offset) not in places:
                kept.append(reloc)
                continue
            sym = reloc.symbol
            found = table.lookup(sym.name)
            if found.kind == SECTION:
                value = sym.addend
            elif found.kind == DATA_LABEL and found.section is not None and found.section in job.images:
                value = job.images[found.section].labels.get(sym.name, 0) + sym.addend
            else:
                kept.append(reloc)
                continue
            if value == 0 or not _fits(value, reloc.size):
                kept.append(reloc)  # ptxas's 0 is the value meant, or no number of that size is
                continue
            data[reloc.offset : reloc.offset + reloc.size] = value.to_bytes(reloc.size, "little")
            changed = True
            repairs.append(
                Repair("symbol-outside-info", job.where(name, reloc.offset), f"{sym} -> {value:#x}")
            )
        if changed:
            job.images[name] = replace(image, data=bytes(data), relocs=kept)
    return repairs


#: DWARF 4 forms ptxas cannot read, and the DWARF 2 form each becomes (quirk dwarf4-form).
_DWARF2_FORM: dict[int, int] = {FORM.flag_present: FORM.flag, FORM.sec_offset: FORM.data4}


def _block_form(size: int) -> int:
    if size < 1 << 8:
        return int(FORM.block1)
    if size < 1 << 16:
        return int(FORM.block2)
    return int(FORM.block4)


@repair("dwarf4-form", phase="model")
def dwarf2_forms(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """``DW_FORM_flag_present`` -> ``flag`` 1, ``exprloc`` -> ``block1/2/4``, ``sec_offset``
    -> ``data4``; a ``DW_FORM_indirect`` of a ``DW_FORM_indirect`` -> one ``DW_FORM_indirect``:
    in the DIEs of ``findings`` and the DIEs of their unit with the same abbreviation (lint
    names each form of an abbreviation once)."""
    assert job.info is not None
    named = {id(die) for die in map(job.die_of, findings) if die is not None}
    counts: dict[str, int] = {}
    for die in _same_abbreviations(job.info, named):
        for attr in die.attributes:
            inner = attr.innermost
            if attr.form == FORM.indirect and isinstance(attr.value, Attribute) and attr.value is not inner:
                attr.value = inner
                counts["DW_FORM_indirect of DW_FORM_indirect -> DW_FORM_indirect"] = (
                    counts.get("DW_FORM_indirect of DW_FORM_indirect -> DW_FORM_indirect", 0) + 1
                )
            form = inner.form
            if form == FORM.flag_present:
                inner.form, inner.value = int(FORM.flag), 1
            elif form == FORM.exprloc:
                inner.form = _block_form(len(inner.value))
            elif form in _DWARF2_FORM:
                inner.form = int(_DWARF2_FORM[form])
            else:
                continue
            key = f"DW_FORM_{FORM(form).name} -> DW_FORM_{FORM(inner.form).name}"
            counts[key] = counts.get(key, 0) + 1
            die.abbrev_code = None
    return [Repair("dwarf4-form", job.where(), f"{what} ({n} attribute(s))") for what, n in counts.items()]


def _same_abbreviations(info: DebugInfo, named: set[int]) -> Iterator[DIE]:
    """The DIEs whose unit holds a DIE of ``named`` (by ``id``) with the same abbreviation code."""
    for unit in info.units:
        codes = {die.abbrev_code for die in unit.iter_dies() if id(die) in named}
        if codes:
            yield from (die for die in unit.iter_dies() if die.abbrev_code in codes)


@repair("ref-addr-size", phase="model")
def ref4_references(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """The ``DW_FORM_ref_addr`` of ``findings`` (which ptxas reads as 8 bytes in every DWARF
    version) in a version 3+ unit -> ``DW_FORM_ref4`` to the same DIE, when it is in the same
    unit."""
    assert job.info is not None
    named = {id(found[1]) for found in map(job.attribute_of, findings) if found is not None}
    n = 0
    for unit in job.info.units:
        if unit.version < 3 or unit.die is None:
            continue
        start, end = unit.offset, unit.end
        for die in unit.iter_dies():
            for attr in die.attributes:
                inner = attr.innermost
                if id(attr) not in named or inner.form != FORM.ref_addr or not isinstance(inner.target, int):
                    continue
                if not start <= inner.target < end:
                    continue
                inner.form, inner.relocs = int(FORM.ref4), ()
                die.abbrev_code = None
                n += 1
    return (
        [Repair("ref-addr-size", job.where(), f"DW_FORM_ref_addr -> DW_FORM_ref4 ({n} attribute(s))")]
        if n
        else []
    )


@repair("abbrev-code-order", phase="model")
def renumber_abbrevs(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """Abbreviation codes made dense in table order (1..N), the DIEs following, when
    ``findings`` name a table out of order: every table, as the encoder keeps all the tables
    it read while a unit keeps its own."""
    if not findings:
        return []
    job.options = replace(job.options, keep_abbrevs=False)
    for die in job.info.iter_dies() if job.info is not None else ():
        die.abbrev_code = None
    return [Repair("abbrev-code-order", job.where(), "abbreviation codes renumbered 1..N in table order")]


_LINKAGE = (int(AT.MIPS_linkage_name),)


def _linkage_move(die: DIE) -> tuple[int, int] | None:
    """(index of DW_AT_MIPS_linkage_name, index of DW_AT_name) of a subprogram whose name
    comes first, else None."""
    if die.tag != TAG.subprogram:
        return None
    names = [i for i, a in enumerate(die.attributes) if a.name == AT.name]
    linkage = [i for i, a in enumerate(die.attributes) if a.name in _LINKAGE]
    if names and linkage and names[0] < linkage[0]:
        return linkage[0], names[0]
    return None


def _move_attributes(
    job: SectionJob,
    findings: list[Finding],
    rule: str,
    move: Callable[[DIE], tuple[int, int] | None],
    what: str,
) -> list[Repair]:
    """In each DIE of ``findings`` for which ``move`` gives (from, to), the attribute at index
    ``from`` moved to index ``to``; one repair per DIE, ``what`` saying what moved."""
    assert job.info is not None
    named = {id(die) for die in map(job.die_of, findings) if die is not None}
    repairs = []
    for die in job.info.iter_dies():
        if id(die) not in named:
            continue
        found = move(die)
        if found is None:
            continue
        attrs = list(die.attributes)
        attrs.insert(found[1], attrs.pop(found[0]))
        die.attributes = attrs
        die.abbrev_code = None
        where = job.where(".debug_info", die.offset) if die.offset >= 0 else job.where()
        repairs.append(Repair(rule, where, f"{die.tag_str} {die.name!r}: {what}"))
    return repairs


@repair("name-before-linkage-name", phase="model")
def linkage_name_first(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """In each subprogram of ``findings`` whose ``DW_AT_name`` precedes its
    ``DW_AT_MIPS_linkage_name``, the linkage name moved to just before the name (nvcc's order)."""
    return _move_attributes(
        job,
        findings,
        "name-before-linkage-name",
        _linkage_move,
        "DW_AT_MIPS_linkage_name moved before DW_AT_name",
    )


@repair("strp-label-reused", phase="model")
def strp_own_values(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """Each ``.debug_str`` label ``findings`` find referenced again from ``.debug_info`` (ptxas
    resolves the second reference to 0) -> every reference to it written as the string's offset."""
    assert job.info is not None
    places = {f.offset for f in findings if f.section == ".debug_info"}
    info_relocs = job.images[".debug_info"].relocs if ".debug_info" in job.images else []
    reused = {r.symbol.name for r in info_relocs if r.offset in places}
    uses: dict[str, list[Attribute]] = {}
    for die in job.info.iter_dies():
        for attr in die.attributes:
            inner = attr.innermost
            if inner.form == FORM.strp and inner.relocs and inner.relocs[0].symbol.name in reused:
                uses.setdefault(inner.relocs[0].symbol.name, []).append(inner)
    repairs = []
    for label, attrs in uses.items():
        if len(attrs) < 2 or label == ".debug_str":
            continue
        for attr in attrs:
            attr.relocs = ()
        repairs.append(
            Repair(
                "strp-label-reused",
                job.where(),
                f"{len(attrs)} references to {label} written as the string's offset",
            )
        )
    return repairs


@repair("bitfield-member-order", phase="model")
def bitfield_location_first(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """In each bit-field member of ``findings`` (with a strp name), ``DW_AT_data_member_location``
    moved before the bit attributes (the builder's order)."""
    return _move_attributes(
        job,
        findings,
        "bitfield-member-order",
        bitfield_member_order,
        "DW_AT_data_member_location moved before the bit attributes",
    )


@repair("address-class-as-written", phase="model")
def class_of_state_space(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """The DW_AT_address_class of each finding's DIE, located at a PTX variable's address
    (DW_OP_addr), -> the class of that variable's state space (LLVM 14's class 5 for a
    ``.shared`` variable -> 8)."""
    assert job.info is not None
    table = symbol_table(job.module)
    repairs = []
    for f in findings:
        found = job.attribute_of(f)
        if found is None:
            continue
        die, attr = found
        location = die.attr(AT.location)
        unit = next((u for u in job.info.units if u.offset <= die.offset < u.end), None)
        if location is None or unit is None or attr.name != AT.address_class:
            continue
        ops = decode_expression(location.innermost.value, unit.address_size)
        if not ops or ops[0].code != OP.addr or ops[0].symbol is None:
            continue
        variable = table.lookup(ops[0].symbol.name).variable
        expected = space_class(variable) if variable is not None else None
        inner = attr.innermost
        if expected is None or inner.value == expected:
            continue
        old = inner.value
        inner.value = int(expected)
        space = variable.space if variable is not None else ""
        repairs.append(
            Repair(
                "address-class-space",
                f.where,
                f"DW_AT_address_class {old} ({address_class_name(old)}) -> {int(expected)} "
                f"({expected.spec_name}), the class of .{space} {ops[0].symbol.name}",
            )
        )
    return repairs


@repair("version-too-low", phase="model")
def no_section_labels(job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """For a module whose ``.version`` stays below what its section labels need (the target
    ptxas takes no newer one): the sections encoded again with numbers for every label
    difference and label reference, and no label defined (:func:`labels_to_numbers`)."""
    if findings:
        job.no_labels = True
    return [
        Repair("version-too-low", f.where, "sections written with numbers, without labels") for f in findings
    ]


def labels_to_numbers(images: dict[str, SectionImage], keep: set[str]) -> dict[str, SectionImage]:
    """``images`` with each reference to a label defined in one of them written as the
    label's offset, and only the labels in ``keep`` (named by the code) still defined."""
    offsets = {label: (name, at) for name, image in images.items() for label, at in image.labels.items()}
    out = {}
    for name, image in images.items():
        data = bytearray(image.data)
        relocs = []
        for reloc in image.relocs:
            target = offsets.get(reloc.symbol.name)
            if target is None or reloc.symbol.name in keep:
                relocs.append(reloc)
                continue
            value = target[1] + reloc.symbol.addend
            if not _fits(value, reloc.size):
                relocs.append(reloc)
                continue
            data[reloc.offset : reloc.offset + reloc.size] = value.to_bytes(reloc.size, "little")
        labels = {k: v for k, v in image.labels.items() if k in keep}
        out[name] = replace(image, data=bytes(data), relocs=relocs, labels=labels)
    return out


@repair("info-label-difference", "ptxas-syntax", phase="model")
def encode_again(_job: SectionJob, findings: list[Finding]) -> list[Repair]:
    """Nothing but encoding the sections again (see the module's docstring)."""
    return [Repair(f.rule, f.where, "sections encoded again") for f in findings]
