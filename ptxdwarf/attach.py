"""Putting a builder's debug info into a PTX module.

:func:`attach` adds ``, debug`` to ``.target``, the ``.file`` of the compile unit
if the module has none, the labels a function's ``low_pc``/``high_pc`` need, and
the debug sections (replacing any that are there). It refuses, naming the
entity, when a symbol or label the DIEs use is not in the module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .api import edit_debug_sections
from .dwarf.encode import encode
from .dwarf.image import DEBUG_SECTION_NAMES
from .errors import AttachError
from .ptx.edits import TextEdits
from .ptx.placement import first_instruction, first_label_at_zero
from .ptx.reader import PtxFunction, PtxModule, parse_ptx
from .ptx.writer import Style

if TYPE_CHECKING:
    from .builder import DebugInfoBuilder

__all__ = ["attach", "check_debuggable", "check_symbols", "not_debuggable"]


def not_debuggable(module: PtxModule) -> list[tuple[int, str]]:
    """(line, what) of each piece of code ptxas cannot compile with debug info, whatever the
    sections say: quirk scoped-initializer (a ``.global``/``.const`` with an initializer inside a
    function body: SIGSEGV) and quirk multiple-returns (a ``.func`` returning several values)."""
    found = [
        (
            v.line,
            f".{v.space} {v.name} has an initializer inside {f.name}: ptxas -g crashes on it (SIGSEGV); "
            "declare it at module scope",
        )
        for f, v in module.symbols.scoped_initialized()
    ]
    found += [
        (
            f.line,
            f".func {f.name} returns {len(f.returns)} values: ptxas -g refuses it ('Function with multiple "
            "return values is not allowed with ABI')",
        )
        for f in module.functions
        if len(f.returns) > 1
    ]
    return sorted(found)


def check_debuggable(module: PtxModule, filename: str) -> None:
    """:class:`AttachError` for the first piece of code :func:`not_debuggable` finds."""
    for line, what in not_debuggable(module):
        raise AttachError(what, where=f"{filename}:{line}")


def check_symbols(
    module: PtxModule, dbg: DebugInfoBuilder, planned: Mapping[str, PtxFunction] | None = None
) -> None:
    """:class:`AttachError` naming the first function, symbol or label the DIEs use that
    ``module`` lacks.

    ``planned``: labels the caller will insert, each mapped to the function whose body
    it goes in; they count as defined there.
    """
    planned = planned or {}
    table = module.symbols
    for f in dbg.functions:
        found = table.functions.get(f.linkage_name)
        if found is None:
            raise AttachError(f"function {f.linkage_name} ({f.name}) is not defined in the module")
        if found.body_start < 0:
            raise AttachError(f"function {f.linkage_name} ({f.name}) has no body in the module")
        if f.auto_labels:
            continue
        for label in (f.low_pc, f.high_pc):
            owner = planned.get(label)
            defined = owner is found if owner is not None else label in found.labels
            if not defined:
                raise AttachError(
                    f"label {label} of function {f.linkage_name} is not defined in that function"
                )
    inserted = {f.high_pc for f in dbg.functions if f.auto_labels}
    for label in sorted(dbg.labels_used - inserted):
        if label not in planned and table.code_owner(label) is None:
            raise AttachError(f"label {label} named by the debug info is not defined in the module")
    for symbol in sorted(dbg.symbols_used):
        if not table.declares(symbol):
            raise AttachError(f"symbol {symbol} named by the debug info is not declared in the module")


def attach(
    ptx_text: str,
    dbg: DebugInfoBuilder,
    *,
    filename: str = "<ptx>",
    style: Style | str = Style.READABLE,
    string_labels: bool = False,
) -> str:
    """``ptx_text`` with ``dbg``'s debug info attached (see the module docstring)."""
    module = parse_ptx(ptx_text, filename)
    if module.address_size is not None and module.address_size // 8 < dbg.address_size:
        # (4-byte DWARF addresses in a 64-bit module are fine: ptxas relocates them with R_CUDA_32.)
        raise AttachError(
            f"the module has .address_size {module.address_size} but the debug info has "
            f"{dbg.address_size * 8}-bit addresses",
            where=filename,
        )
    if string_labels and (module.version or (0, 0)) < (7, 0):
        version = ".".join(map(str, module.version)) if module.version else "none"
        raise AttachError(
            f"labels in debug sections need PTX ISA 7.0 or later (.version is {version}); "
            "use string_labels=False (strings as .debug_str+offset)",
            where=filename,
        )
    check_debuggable(module, filename)
    try:
        check_symbols(module, dbg)
    except AttachError as exc:
        raise AttachError(exc.message, where=filename) from None
    images = encode(dbg.finish(), dbg.encode_options(string_labels=string_labels)).images

    edits = TextEdits(ptx_text, where=filename)
    _anchor_first_labels(edits, module, dbg)
    for f in dbg.functions:
        if not f.auto_labels:
            continue
        if module.function_of_label(f.high_pc) is not None:
            raise AttachError(f"label {f.high_pc} is already defined in the module", where=filename)
        found = module.function(f.linkage_name)
        assert found is not None
        end = ptx_text.rfind("\n", found.body_start, found.body_end)
        edits.insert(end + 1 if end >= 0 else found.body_end, f"{f.high_pc}:\n")
    if not module.has_debug_target:
        if module.target_span is None:
            raise AttachError("the module has no .target directive", where=filename)
        start, end = module.target_span
        line = ptx_text[start:end].rstrip()
        edits.replace(start, start + len(line), line + ", debug")
    if not module.files:
        edits.insert(_after_header(module), f'.file 1 "{_escape(dbg.file)}"\n')
    ordered = {name: images[name] for name in DEBUG_SECTION_NAMES if name in images}
    ordered.update({k: v for k, v in images.items() if k not in ordered})
    edit_debug_sections(edits, module, ordered, style)
    return edits.apply()


def _anchor_first_labels(edits: TextEdits, module: PtxModule, dbg: DebugInfoBuilder) -> None:
    """A label before the first instruction of each function whose first label the DIEs use
    and ptxas would place at offset 0 (quirk first-label-at-zero); it is then the second."""
    used = dbg.labels_used
    n = 0
    for f in dbg.functions:
        found = module.function(f.linkage_name)
        if found is None or first_label_at_zero(module.text, found) not in used:
            continue
        at = first_instruction(module.text, found)
        assert at is not None  # a misplaced first label comes after an instruction
        while (name := f"$L__ptxdwarf_top{n}") in used or module.function_of_label(name) is not None:
            n += 1
        n += 1
        edits.insert(at, f"{name}: ")


def _after_header(module: PtxModule) -> int:
    """Offset of the line after ``.address_size`` (or ``.target``, or ``.version``)."""
    import re

    from .ptx.reader import mask_comments

    masked = mask_comments(module.text)
    for directive in (r"\.address_size\s+\d+", r"\.target\b[^\n]*", r"\.version\s+[\d.]+"):
        m = re.search(directive, masked)
        if m is not None:
            nl = masked.find("\n", m.end())
            return len(masked) if nl < 0 else nl + 1
    return 0


def _escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')
