"""The ptxas round trip: what a PTX module's debug sections declare against what lands in the cubin.

:func:`check` compiles the PTX with ``ptxas -g``, reads both sides into the DIE
model and compares them unit by unit and DIE by DIE. Values that are symbols in
the PTX are matched to what ptxas made of them, not ignored:

- a section name or a label inside a debug section must become that offset;
- a code label or function symbol must become a relocation against the function
  that defines it;
- ``DW_OP_addr`` of a kernel parameter must become the parameter's offset in the
  constant bank (read from the cubin's ``.nv.info``), of a ``__local_depot`` a
  ``DW_OP_fbreg``, of a module variable a relocation against it;
- anything else must be unchanged.

Each :class:`Difference` names the DIE path (``_Z4testPi/p``), the attribute and
both values.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..cuda.ptxas import Ptxas, PtxasFailed, find_ptxas
from ..errors import PtxDwarfError, ToolError
from ..ptx.module import PtxModule
from ..ptx.reader import likely_header, parse_ptx
from ..ptx.symbols import likely_needs_compile_only, needs_compile_only, symbol_table
from .report import CheckReport, Difference

__all__ = ["CheckReport", "Difference", "check", "compare"]

#: What the comparison's modules define, found here too: imported on first use, so that
#: ``check`` can start ptxas before the comparison code is loaded.
_LATER = {
    "compare": ".comparison",
    "die_and_attribute_at": ".show",
    "explain_failure": ".failure",
    "expected_rows": ".lines",
}


def __getattr__(name: str) -> Any:
    module = _LATER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


def check(
    text: str,
    *,
    filename: str = "<ptx>",
    arch: str | None = None,
    ptxas: Ptxas | str | None = None,
) -> CheckReport:
    """Compile ``text`` with ``ptxas -g`` and compare its debug info with the cubin's.

    Raises :class:`~ptxdwarf.errors.ToolError` (ptxas missing or rejecting the
    module, with the DIE and attribute when the line is in a debug section) and the
    reader's errors for bad PTX.
    """
    return _checked(text, filename=filename, arch=arch, ptxas=ptxas)[0]


def _checked(
    text: str,
    *,
    filename: str = "<ptx>",
    arch: str | None = None,
    ptxas: Ptxas | str | None = None,
) -> tuple[CheckReport, object]:
    """:func:`check`'s report, and what it read to make it: freeing that takes a tenth of a
    second on a large module, which a process about to end does not need to spend."""
    # ptxas starts first, on guesses from the text: its header's .version (which ptxas),
    # .target (the architecture) and whether it declares functions it does not define (-c).
    # The module, ptxas's architectures and the PTX side (the code included) are read
    # meanwhile; an error in any stops ptxas, and a wrong guess compiles again.
    version, target, address_size = likely_header(text)
    module = None
    if version is None:  # no module ptxas compiles, or one only the careful reader reads
        module = _whole_module(text, filename)
        version, target, address_size = module.version, module.target, module.address_size
    try:
        tool = ptxas if isinstance(ptxas, Ptxas) else find_ptxas(ptxas, version=version)
    except ToolError:
        if module is None:
            _whole_module(text, filename)  # an error of the text comes first
        raise
    guess = likely_needs_compile_only(text)
    guess_arch = tool.likely_arch(target, arch, address_size=address_size)
    run = tool.start(text, arch=guess_arch, relocatable=guess, filename=filename)
    try:
        if module is None:
            module = _whole_module(text, filename)
        whole = module  # as compared() sees it
        started = tool
        if not isinstance(ptxas, Ptxas) and module.version != version:
            tool = find_ptxas(ptxas, version=module.version)
        chosen, note = tool.choose_arch(module.target, arch, address_size=module.address_size)
        # The comparison's code (a tenth of a second to import) is loaded while ptxas runs.
        from ..ptx.debug import decode_module
        from .comparison import compare
        from .expect import look_up_symbolic_values
        from .failure import explain_failure
        from .lines import expected_from_code
        from .plan import ComparisonPlan
        from .sites import InfoSites

        release = tool.version  # asked now, while ptxas runs, not after it
        info = decode_module(module)
        info.load_all()
        symbols = symbol_table(module)
        look_up_symbolic_values(info, symbols)
        rows, first_labels = expected_from_code(module)
        sites = InfoSites(info)
        plan = ComparisonPlan(module, info, sites, symbols)
        relocatable = needs_compile_only(module)
        if tool is not started or relocatable != guess or chosen != guess_arch:
            run.stop()
            run = tool.start(text, arch=chosen, relocatable=relocatable, filename=filename)

        def compared(cubin: bytes) -> CheckReport:
            report = CheckReport(filename, chosen, tool.path, release, debug=_debug_content(whole))
            return compare(
                whole,
                info,
                cubin,
                report,
                symbols=symbols,
                rows=rows,
                first_labels=first_labels,
                sites=sites,
                plan=plan,
            )

        # ptxas frees its memory for a while after it has written the cubin: the comparison
        # starts then, and stands if ptxas ends well with those bytes.
        early = run.written()
        report = None
        if early is not None:
            try:
                report = compared(early)
            except PtxDwarfError:  # said from the final cubin, if ptxas ends well
                pass
        try:
            result = run.wait(same_as=early)
        except PtxasFailed as exc:
            raise explain_failure(exc, module, info) from None
    finally:
        run.stop()
    if report is None or result.cubin != early:
        report = compared(result.cubin)
    before = [note] if note else []
    before.extend(str(m) for m in result.messages if m.severity == "warning")
    report.notes[:0] = before
    return report, (module, info, symbols, rows, first_labels, sites, plan, result)


def _whole_module(text: str, filename: str) -> PtxModule:
    """The module of ``text``, which must be one ptxas compiles (not a fragment)."""
    module = parse_ptx(text, filename)
    module.require_whole("check")
    return module


def _debug_content(module: PtxModule) -> str:
    """:attr:`CheckReport.debug` of ``module``."""
    if any(b.name == ".debug_info" for b in module.sections):
        return "dwarf"
    return "line-info" if module.files else "none"
