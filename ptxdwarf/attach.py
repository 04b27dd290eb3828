"""Putting a builder's debug info into a PTX module.

:func:`attach` adds ``, debug`` to ``.target``, the ``.file`` of the compile unit
if the module has none, the labels a function's ``low_pc``/``high_pc`` need, and
the debug sections (replacing any that are there). It refuses, naming the
entity, when a symbol or label the DIEs use is not in the module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .cuda.debuggable import not_debuggable
from .cuda.quirks import workaround
from .dwarf.encode import encode
from .dwarf.image import DEBUG_SECTION_NAMES, SectionImage, gc_paused
from .errors import AttachError
from .ptx.debug import edit_debug_sections
from .ptx.edits import TextEdits
from .ptx.lexer import VERSION
from .ptx.module import PtxFunction, PtxModule
from .ptx.placement import first_label_anchors
from .ptx.reader import parse_ptx
from .ptx.statements import BodyStatements
from .ptx.writer import Style

if TYPE_CHECKING:
    from .builder import DebugInfoBuilder

#: The header directives a ``.file`` goes after: the last of them.
_ADDRESS_SIZE = re.compile(r"\.address_size\s+\d+")
_TARGET = re.compile(r"\.target\b[^\n]*")

__all__ = ["SourceLoc", "attach", "check_debuggable", "check_symbols"]


@workaround("scoped-initializer", "multiple-returns")
def check_debuggable(module: PtxModule, filename: str) -> None:
    """:class:`AttachError` for the first piece of code :func:`not_debuggable` finds."""
    for line, what in not_debuggable(module):
        raise AttachError(what, where=f"{filename}:{line}")


@workaround("trailing-nul")
def without_trailing_nul(text: str) -> str:
    """``text`` without the NUL bytes that end it (NVRTC's, which ptxas 13 refuses)."""
    return text.rstrip("\0")


@workaround("undefined-symbol")
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


@workaround(
    "address-size",
    "address-size-default",
    "file-index",
    "loc-file-undeclared",
    "file-two-strings",
    "version-too-low",
    "target-not-debug",
)
def attach(
    ptx_text: str,
    dbg: DebugInfoBuilder,
    *,
    filename: str = "<ptx>",
    style: Style | str = Style.READABLE,
    string_labels: bool = False,
    lines: Mapping[int, SourceLoc | tuple[str, int] | tuple[str, int, int]] | None = None,
    debug_target: bool = True,
) -> str:
    """``ptx_text`` with ``dbg``'s debug info attached (see the module docstring).

    ``lines`` maps 1-based lines of ``ptx_text`` that start an instruction to the source
    location of its code, ``(file, line)``, ``(file, line, column)`` or a :class:`SourceLoc`
    (whose ``inlined_at`` chain says where inlined code was called); attach writes the
    ``.file`` directives (numbered 1..N in order of first use) and a ``.loc`` before each
    mapped line. ``debug_target=False`` leaves ``.target`` as it is (ptxas ``-g`` still
    reads the sections; without ``-g`` it drops ``.debug_info`` but keeps the line table).
    """
    with gc_paused():
        return _attach(ptx_text, dbg, filename, style, string_labels, lines, debug_target)


def _attach(
    ptx_text: str,
    dbg: DebugInfoBuilder,
    filename: str,
    style: Style | str,
    string_labels: bool,
    lines: Mapping[int, SourceLoc | tuple[str, int] | tuple[str, int, int]] | None,
    debug_target: bool,
) -> str:
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
    if lines:
        images = _write_lines(edits, module, lines, images, filename, _described(module, dbg))
    _anchor_first_labels(edits, module, dbg, line_info=bool(lines))
    module.kept_statements.clear()
    for f in dbg.functions:
        if not f.auto_labels:
            continue
        if module.function_of_label(f.high_pc) is not None:
            raise AttachError(f"label {f.high_pc} is already defined in the module", where=filename)
        found = module.function(f.linkage_name)
        assert found is not None
        end = ptx_text.rfind("\n", found.body_start, found.body_end)
        edits.insert(end + 1 if end >= 0 else found.body_end, f"{f.high_pc}:\n")
    if debug_target and not module.has_debug_target:
        if module.target_span is None:
            raise AttachError("the module has no .target directive", where=filename)
        start, end = module.target_span
        line = ptx_text[start:end].rstrip()
        edits.replace(start, start + len(line), line + ", debug")
    if not module.files and not lines:
        edits.insert(_after_header(module), f'.file 1 "{_escape(dbg.file)}"\n')
    ordered = {name: images[name] for name in DEBUG_SECTION_NAMES if name in images}
    ordered.update({k: v for k, v in images.items() if k not in ordered})
    edit_debug_sections(edits, module, ordered, style)
    return without_trailing_nul(edits.apply())


@dataclass(frozen=True)
class SourceLoc:
    """A source location for :func:`attach`'s ``lines``: inlined code names the function it
    belongs to (``function``, as the line table will name it) and where it was called
    (``inlined_at``, itself a location, inlined or not)."""

    file: str
    line: int
    column: int = 0
    function: str | None = None
    inlined_at: SourceLoc | None = None


def _as_loc(value: SourceLoc | tuple[str, int] | tuple[str, int, int], where: str) -> SourceLoc:
    if isinstance(value, SourceLoc):
        loc = value
    elif isinstance(value, tuple) and len(value) in (2, 3):
        loc = SourceLoc(*value)
    else:
        raise AttachError(
            f"{value!r}: a source location is (file, line), (file, line, column) or a SourceLoc", where=where
        )
    if (
        not isinstance(loc.file, str)
        or not loc.file
        or not loc.file.isascii()
        or '"' in loc.file
        or "\n" in loc.file
    ):
        raise AttachError(
            f"file {loc.file!r}: not a path .file can hold (ASCII, no quote or newline)", where=where
        )
    if not isinstance(loc.line, int) or not isinstance(loc.column, int) or loc.line < 1 or loc.column < 0:
        raise AttachError(
            f"{loc.file}:{loc.line}:{loc.column}: lines count from 1, columns from 0", where=where
        )
    if loc.inlined_at is not None and not loc.function:
        raise AttachError(f"{loc.file}:{loc.line}: inlined code needs the name of its function", where=where)
    return loc


def _write_lines(
    edits: TextEdits,
    module: PtxModule,
    lines: Mapping[int, SourceLoc | tuple[str, int] | tuple[str, int, int]],
    images: dict[str, SectionImage],
    filename: str,
    described: list[PtxFunction],
) -> dict[str, SectionImage]:
    """The ``.file`` and ``.loc`` directives of ``lines`` (see :func:`attach`); the images, with
    the names of inlined functions added to ``.debug_str`` under labels of their own. The
    bodies of the ``described`` functions, split here, are kept for their first labels."""
    if module.files:
        raise AttachError("lines= needs a module without .file/.loc directives", where=filename)
    masked, index = module.masked, module.lines
    instruction_lines = _instruction_lines(module, {id(f) for f in described})
    files: dict[str, int] = {}
    names: dict[str, str] = {}  # inlined function -> its .debug_str label

    def number(path: str) -> int:
        return files.setdefault(path, len(files) + 1)

    used: set[tuple[int, int, int]] = set()

    def directives(loc: SourceLoc) -> list[str]:
        """The .loc lines for ``loc``: its call sites first (ptxas wants each used before)."""
        head: list[str] = []
        at = ""
        if loc.inlined_at is not None:
            site = loc.inlined_at
            key = (number(site.file), site.line, site.column)
            if key not in used:
                head = directives(site)
            label = names.setdefault(loc.function or "", f"$L__ptxdwarf_inl{len(names)}")
            at = f", function_name {label}, inlined_at {key[0]} {key[1]} {key[2]}"
        key = (number(loc.file), loc.line, loc.column)
        used.add(key)
        return [*head, f"\t.loc\t{key[0]} {key[1]} {key[2]}{at}"]

    for ptx_line in sorted(lines):
        where = f"{filename}:{ptx_line}"
        loc = _as_loc(lines[ptx_line], where)
        offset = instruction_lines.get(ptx_line)
        if offset is None:
            raise AttachError("lines= maps a line that starts no instruction", where=where)
        line_start = index.start(ptx_line)
        if masked[line_start:offset].strip():
            raise AttachError(
                "lines= maps a line whose instruction is not the first thing on it", where=where
            )
        edits.insert(line_start, "".join(d + "\n" for d in directives(loc)))
    if names and (module.version or (0, 0)) < (7, 0):
        raise AttachError("inlined code in lines= needs PTX ISA 7.0 or later (.version)", where=filename)
    edits.insert(_after_header(module), "".join(f'.file {n} "{path}"\n' for path, n in files.items()))
    return _with_inlined_names(images, names)


def _instruction_lines(module: PtxModule, keep: set[int]) -> dict[int, int]:
    """1-based line -> offset of the first instruction on it, over every function body; the
    split bodies of the functions in ``keep`` (by ``id``) go to ``module.kept_statements``."""
    masked, index = module.masked, module.lines
    found: dict[int, int] = {}
    for f in module.functions:
        if f.body_start < 0:
            continue
        body = BodyStatements(masked, f.body_start, f.body_end)
        for stmt in body.all:
            if stmt.kind == "instr":
                found.setdefault(index.line(stmt.start), stmt.start)
        if id(f) in keep:
            module.kept_statements[id(f)] = body
    return found


def _described(module: PtxModule, dbg: DebugInfoBuilder) -> list[PtxFunction]:
    """The functions of ``module`` the builder describes."""
    return [f for f in (module.function(b.linkage_name) for b in dbg.functions) if f is not None]


def _with_inlined_names(images: dict[str, SectionImage], names: dict[str, str]) -> dict[str, SectionImage]:
    """``images`` with each inlined function's name in ``.debug_str`` under its label."""
    if not names:
        return images
    strings = images.get(".debug_str") or SectionImage(".debug_str")
    data = bytearray(strings.data)
    labels = dict(strings.labels)
    for name, label in names.items():
        labels[label] = len(data)
        data += name.encode("utf-8") + b"\0"
    return {**images, ".debug_str": replace(strings, data=bytes(data), labels=labels)}


@workaround("first-label-at-zero")
def _anchor_first_labels(
    edits: TextEdits, module: PtxModule, dbg: DebugInfoBuilder, *, line_info: bool = False
) -> None:
    """A label before the first instruction of each function whose first label the DIEs use
    and ptxas would place at offset 0 (quirk first-label-at-zero); it is then the second.
    ``line_info``: the ``.loc`` lines attach writes give every function line information."""
    used = dbg.labels_used
    for anchor in first_label_anchors(
        module, _described(module, dbg), used, set(used), line_info=line_info or None
    ):
        edits.insert(anchor.at, f"{anchor.name}: ")


def _after_header(module: PtxModule) -> int:
    """Offset of the line after ``.address_size`` (or ``.target``, or ``.version``)."""
    masked = module.masked
    for directive in (_ADDRESS_SIZE, _TARGET, VERSION):
        m = directive.search(masked)
        if m is not None:
            nl = masked.find("\n", m.end())
            return len(masked) if nl < 0 else nl + 1
    return 0


def _escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')
