"""The comparison of a PTX module's debug sections with the cubin ptxas made of them
(see :mod:`ptxdwarf.check`): the cubin read, the DIE walk (:mod:`.walk`), the other sections
(:mod:`.sections`) and the line table (:mod:`.lines`) compared, and their results put in the report."""

from __future__ import annotations

from ..cuda.cubin import CubinImages, cubin_images
from ..dwarf.decode import decode_sections, locations_like
from ..dwarf.image import gc_paused
from ..dwarf.model import DebugInfo
from ..errors import CubinError, DwarfError
from ..ptx.module import PtxModule
from ..ptx.placement import LocRow
from ..ptx.symbols import SymbolTable
from ..visibility import RegisterLocation, register_locations
from .lines import SassLines, compare_label_places, compare_line_files, compare_line_rows, expected_rows
from .plan import ComparisonPlan
from .report import CheckReport, Difference
from .sections import compare_sections, truncated_numbers
from .sites import InfoSites
from .walk import DieWalk

__all__ = ["compare"]


def compare(
    module: PtxModule,
    ptx: DebugInfo,
    cubin_bytes: bytes,
    report: CheckReport,
    *,
    symbols: SymbolTable | None = None,
    rows: dict[str, dict[tuple[int, int], LocRow]] | None = None,
    first_labels: dict[int, str | None] | None = None,
    sites: InfoSites | None = None,
    plan: ComparisonPlan | None = None,
) -> CheckReport:
    """Fill ``report`` with the differences between ``ptx`` and the cubin (``rows``: the
    line-table rows each function's ``.loc`` directives make, :func:`expected_rows`;
    ``first_labels``: the labels ptxas places at offset 0, :func:`~.lines.expected_from_code`; ``sites``: the PTX's
    :class:`~.sites.InfoSites`; ``plan``: the PTX side's :class:`~.plan.ComparisonPlan`, of
    ``sites`` and ``symbols``; each found here when not given)."""
    with gc_paused():
        found = cubin_images(cubin_bytes)
        try:
            cubin = decode_sections(found.images, source="cubin", filename=report.filename + " (cubin)")
        except DwarfError as exc:
            report.differences.append(Difference("<cubin>", "DWARF", "readable", "unreadable", str(exc)))
            return report
        _share_location_lists(ptx, cubin)
        if report.debug == "line-info" and ".debug_line" not in found.images:
            report.differences.append(
                Difference("<cubin>", ".debug_line", "line information (.file/.loc)", "no .debug_line")
            )
        # One after the other: ptxas is still freeing its memory on the other processor, and a
        # forked child copies most of this process's pages as it reads them.
        _compare_dwarf(module, ptx, cubin, found, report, symbols, rows, first_labels, sites, plan)
        report.registers, register_note = _join_register_map(cubin, found)
        if register_note:
            report.notes.append(register_note)
        report.notes.extend(f"cubin: {note}" for note in cubin.notes)
    return report


def _share_location_lists(ptx: DebugInfo, cubin: DebugInfo) -> None:
    """Give ``cubin`` its location lists read through the PTX's (:func:`locations_like`), which
    both sides of the comparison would otherwise decode each."""
    theirs = (cubin.sections or {}).get(".debug_loc")
    if theirs is None or not ptx.locations:
        return
    asize = cubin.units[0].address_size if cubin.units else 8
    lists = locations_like(theirs, ptx.locations, asize)
    if lists is not None:
        cubin.locations = lists


def _compare_dwarf(
    module: PtxModule,
    ptx: DebugInfo,
    cubin: DebugInfo,
    found: CubinImages,
    report: CheckReport,
    symbols: SymbolTable | None,
    rows: dict[str, dict[tuple[int, int], LocRow]] | None,
    first_labels: dict[int, str | None] | None = None,
    sites: InfoSites | None = None,
    plan: ComparisonPlan | None = None,
) -> None:
    """Compare the units, the other sections, the line table and the numbers ptxas truncates."""
    comparer = DieWalk(module, ptx, cubin, found, report, symbols, first_labels)
    comparer.sites, comparer.plan = sites, plan
    comparer.compare_units()
    compare_sections(comparer)
    sass = SassLines(found, report)
    line_image = found.images.get(".debug_line")
    if module.files and line_image is not None and line_image.data:
        try:
            programs = [p for p in cubin.lines or [] if p.section == ".debug_line"]
        except DwarfError as exc:
            report.differences.append(
                Difference("<cubin>", ".debug_line", "readable", "unreadable", str(exc))
            )
        else:
            if programs:
                compare_line_files(module, programs[0], report)
            compare_line_rows(
                module, programs, report, rows if rows is not None else expected_rows(module), sass
            )
    compare_label_places(module, comparer.placed, sass, report, comparer.comparison_plan().bodies)
    truncated_numbers(module, ptx, report)


def _join_register_map(cubin: DebugInfo, found: CubinImages) -> tuple[list[RegisterLocation], str | None]:
    """The cubin's register locations against ptxas's register map, and a note when the map
    cannot be read."""
    if found.reg_sass is None:
        return [], None
    try:
        return register_locations(cubin, found.register_map()), None
    except CubinError as exc:
        return [], f"cubin: register map not read: {exc}"
