"""The lint run: the checks in order over one module."""

from __future__ import annotations

import os
from collections.abc import Callable

from ..dwarf.constants import AT, FORM, TAG
from ..dwarf.decode import decode_sections
from ..dwarf.image import gc_paused
from ..dwarf.model import DIE, DebugInfo, Unit
from ..errors import DwarfError
from ..parallel import run_beside
from ..ptx.module import PtxModule
from ..ptx.reader import parse_ptx
from . import header, labels, lines, locations, memory, predicates, units
from .context import LintContext, enclosing_subprogram
from .finding import Finding, sort_key

__all__ = ["lint", "lint_module"]

# The codes the walk of every DIE compares with, as plain ints (an enum member's look-up is slower).
_SUBPROGRAM = int(TAG.subprogram)
_MEMBER = int(TAG.member)
_ADDRESS_CLASS = int(AT.address_class)
_LOCATION = int(AT.location)
_INDIRECT = int(FORM.indirect)


def lint_module(module: PtxModule, *, ptxas_version: str | None = None) -> list[Finding]:
    """The findings for an already parsed module, sorted by line (``ptxas_version``: as
    :func:`lint`)."""
    return lint_for_repair(module, ptxas_version, keep_statements=False)


def lint_for_repair(
    module: PtxModule, ptxas_version: str | None, *, keep_statements: bool = True
) -> list[Finding]:
    """:func:`lint_module`, keeping for the repairs the split bodies of the functions the
    findings name (``module.kept_statements``; ``keep_statements``)."""
    with gc_paused():  # the checks allocate much and free little
        return _run(module, ptxas_version, keep_statements)


def _run(module: PtxModule, ptxas_version: str | None, keep_statements: bool) -> list[Finding]:
    ctx = LintContext(module, ptxas_version=ptxas_version, keep_statements=keep_statements)
    ctx.decode_quietly = lambda: _decode(ctx, quiet=True)
    header.check_text(ctx)
    header.check_end(ctx)
    header.check_header(ctx)
    header.check_section_form(ctx)
    header.check_not_debuggable(ctx)
    header.check_files(ctx)
    header.check_sections(ctx)
    header.check_syntax(ctx)
    before = ctx.findings[:]
    # The two share the context's symbols and images. The decoded DWARF, the larger of what
    # they make, stays in the child, which ends without freeing it.
    here = os.getpid()
    dwarf, code = run_beside(
        _added(ctx, lambda: _check_debug_info(ctx, forked=os.getpid() != here)),
        _added(ctx, lambda: _check_code(ctx)),
        work=len(ctx.module.text),
    )
    return sorted([*before, *code, *dwarf], key=sort_key)


def _check_code(ctx: LintContext) -> None:
    """The checks of the ``.loc`` directives and of every symbolic value of the debug sections."""
    lines.check_locs(ctx)
    labels.check_relocations(ctx)


def _check_debug_info(ctx: LintContext, *, forked: bool = False) -> None:
    """Decode the debug sections and check them (``forked``: in a child process of its own,
    which lets the module's text go first)."""
    if forked:
        ctx.hold_register_uses()  # what the one DWARF check that reads the code needs of it
        _let_text_go(ctx.module)
    info = _decode(ctx)
    ctx.set_info(info)
    header.check_debug_target(ctx, info)
    if info is not None:
        _check_dwarf(ctx, info)


def _let_text_go(module: PtxModule) -> None:
    """Drop this process's hold on the module's text, its comment-masked copy and its line
    index: the DWARF checks read the section images and the symbol table, made before, and a
    forked child that lets them go has twice the text's size less memory (a check that did
    read the text would fail, and the failed child is run again in the parent)."""
    module.text = None  # type: ignore[assignment]
    module._masked = None
    module._lines = None


def _added(ctx: LintContext, checks: Callable[[], None]) -> Callable[[], list[Finding]]:
    """``checks`` as a callable that returns the findings they add."""

    def run() -> list[Finding]:
        start = len(ctx.findings)
        checks()
        return ctx.findings[start:]

    return run


def lint(text: str, *, filename: str = "<ptx>", ptxas_version: str | None = None) -> list[Finding]:
    """Check the debug sections of PTX ``text``; an empty list means nothing to say.

    ``ptxas_version`` (``"13.5"``) reports only the traps of that ptxas release (the quirk
    registry says where each was measured); None reports those of any release measured.

    Raises :class:`~ptxdwarf.errors.PtxSyntaxError` when the text is not PTX ptxdwarf can read.
    """
    return lint_module(parse_ptx(text, filename), ptxas_version=ptxas_version)


def _decode(ctx: LintContext, *, quiet: bool = False) -> DebugInfo | None:
    """Decode, dropping sections that fail on their own (each failure is a finding of rule
    structure, unless ``quiet``)."""
    images = {n: img for n, img in ctx.images.items() if n.startswith(".debug_")}
    while True:
        try:
            info = decode_sections(
                images,
                source="ptx",
                filename=ctx.filename,
                address_size=4 if ctx.module.address_size == 32 else 8,
            ).load_all()
        except DwarfError as exc:
            if not quiet:
                ctx.add("structure", exc.message, where=exc.source, section=exc.section, offset=exc.offset)
            if exc.section in images and exc.section not in (".debug_info", ".debug_abbrev", ".debug_str"):
                del images[exc.section]
                continue
            return None
        info.module = ctx.module
        return info


def _check_dwarf(ctx: LintContext, info: DebugInfo) -> None:
    units.check_abbrevs(ctx, info)
    loc_refs: set[int] = set()
    filled: set[tuple[int, int]] = set()
    for unit in info.units:
        _check_unit(ctx, info, unit, loc_refs, filled)
    units.check_info_relocs(ctx, info, filled)
    for name, sets in ((".debug_pubnames", info.pubnames), (".debug_pubtypes", info.pubtypes)):
        for ns in sets or ():
            units.check_name_set(ctx, info, name, ns)
    units.check_aranges(ctx, info)


def _check_unit(
    ctx: LintContext, info: DebugInfo, unit: Unit, loc_refs: set[int], filled: set[tuple[int, int]]
) -> None:
    """The checks of each DIE of ``unit``, in one walk."""
    units.check_unit_length(ctx, unit)
    forms = units.FormChecks(ctx, info, unit, filled)
    places = locations.LocationChecks(ctx, info, unit, loc_refs, filled)
    predicate_count = predicates.PredicateCount(ctx, unit, places.decode, places.declaration)
    register_memory = memory.RegisterMemory(ctx, unit, places.decode)
    see_registers = register_memory.see
    address_class = places.check_address_class
    check_location = places.check_location
    check_attribute = forms.check_attribute
    quiet = forms.quiet
    see = predicate_count.see
    die_labels = labels.DieLabels(ctx, info).check
    # The enclosing subprogram of each DIE, from its parent's (pre-order walk): linear in depth.
    enclosing: dict[int, DIE | None] = {}
    for die in unit.iter_dies():
        parent = die.parent
        tag = die.tag
        if tag == _SUBPROGRAM:
            sp: DIE | None = die
        elif parent is not None and id(parent) in enclosing:
            sp = enclosing[id(parent)]
        else:
            sp = enclosing_subprogram(die)
        enclosing[id(die)] = sp
        location = space = None
        for attr in die.attributes:
            form = attr.form
            name = attr.name
            if form not in quiet:
                check_attribute(die, attr, attr if form != _INDIRECT else attr.innermost)
            if name == _ADDRESS_CLASS:
                address_class(die, attr, attr if form != _INDIRECT else attr.innermost)
                if space is None:
                    space = attr
            elif name == _LOCATION and location is None:
                location = attr
        if location is not None:
            check_location(die, location, space, sp)
            see(die, location, sp)
            see_registers(die, location, sp)
        die_labels(die, sp)
        if tag == _SUBPROGRAM:
            locations.check_name_order(ctx, die)
        elif tag == _MEMBER:
            locations.check_bitfield_member(ctx, die)
    predicate_count.finish()
    register_memory.finish()
