"""The entry point of attach: :func:`attach_ptx` and what it returns."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..attach import check_debuggable, check_symbols, without_trailing_nul
from ..cuda.cubin import cubin_images
from ..cuda.ptxas import Ptxas, compile_text
from ..cuda.quirks import workaround
from ..dwarf.constants import TAG
from ..dwarf.encode import encode
from ..dwarf.image import DEBUG_SECTION_NAMES
from ..errors import AttachError, PtxDwarfError
from ..ptx.debug import decode_module, edit_debug_sections
from ..ptx.module import PtxModule
from ..ptx.reader import parse_ptx
from ..ptx.statements import scan_body
from ..ptx.writer import Style
from . import registers
from .describe import MAX_PREDICATES, describe
from .existing import existing_debug, strip_debug
from .plan import make_plan
from .scan import Func, identifiers_starting

__all__ = ["AttachResult", "attach_ptx", "default_output_name", "mapped_registers"]


@dataclass
class AttachResult:
    """What :func:`attach_ptx` made: the new text, the warnings, the register renames."""

    text: str
    warnings: list[str]
    renamed: dict[str, str]
    dies: int = 0
    """DIEs in the compile unit (for reports)."""
    left_out: dict[str, list[str]] = field(default_factory=dict)
    """By function, the registers not described because of ``max_registers`` (the budget)."""


def default_output_name(input_path: str) -> str:
    """``kernel.ptx`` -> ``kernel.debug.ptx`` (what ``.file`` names when writing to standard output)."""
    root, ext = os.path.splitext(input_path)
    return root + ".debug.ptx" if ext == ".ptx" else input_path + ".debug.ptx"


@workaround("non-ascii")
def _check_output_name(output_name: str) -> None:
    """:class:`AttachError` when ``output_name`` cannot be written in ``.file``."""
    if not output_name:
        raise AttachError("the output name for .file is empty")
    if not output_name.isascii() or any(c in output_name for c in '"\n\r\0'):
        raise AttachError(
            f"the output name {output_name!r} cannot be written in .file "
            "(ptxas 13.0 accepts only ASCII without quotes or newlines)"
        )


@workaround("address-size", "address-size-default", "file-index", "version-too-low", "target-not-debug")
def attach_ptx(
    text: str,
    *,
    output_name: str,
    filename: str = "<ptx>",
    rename_registers: bool = False,
    replace: bool = False,
    style: str = "readable",
    debug_target: bool = True,
    only_mapped: bool = False,
    ptxas: Ptxas | str | None = None,
    predicates: int = 0,
    max_registers: int | str = "auto",
) -> AttachResult:
    """Give PTX ``text`` without debug info a line table pointing at itself and DWARF for
    every function, parameter, register the code uses and module variable (see the module
    docstring).

    ``output_name`` is the file the result will be written to: ``.file 1`` and the
    compile unit name it, so the ``.loc`` line numbers refer to that file. Raises
    :class:`~ptxdwarf.errors.AttachError` (one line, naming what and where) on a
    module it will not change.

    ``debug_target=False`` leaves ``.target`` as it is. ptxas treats ``.target ...,
    debug`` like ``-g`` (no optimization: "Optimized debugging not supported" with
    ``-O3``), so only without it does the module compile, without ``-g``, to exactly
    the code of the input; ``ptxas -g`` still finds the debug info (but ``ptxdwarf
    lint`` reports ``target-not-debug``).

    ``only_mapped`` compiles the result once with ``ptxas -g`` (``ptxas``: a
    :class:`~ptxdwarf.cuda.ptxas.Ptxas` or its path; default: found by release) and
    describes again only the registers ptxas's register map places in SASS: those a
    debugger can show. The others are named in a warning.

    ``predicates`` is the most ``.pred`` registers to describe per function (at most
    :data:`~ptxdwarf.autodebug.describe.MAX_PREDICATES`): none by default, since ptxas -g
    crashes on some functions whose debug info describes as few as 4 (quirk
    ``predicate-count``); those over it are named in a warning.

    ``max_registers`` is the most registers to describe per function, its parameters
    included: ``"auto"`` (the default) as many as keep ``ptxas -g`` within twice the memory
    the code alone needs (ptxas keeps every described register live through its function and
    needs memory growing with their number times the function's register operands, quirk
    ``described-registers-memory``; :func:`ptxdwarf.cuda.memory.register_budgets`), an
    ``int``, or ``"all"``. The registers that live longest are described first; those left out
    are named in a warning and in :attr:`AttachResult.left_out`.
    """
    _check_output_name(output_name)
    if not 0 <= predicates <= MAX_PREDICATES:
        raise AttachError(
            f"predicates: {predicates} is not in 0-{MAX_PREDICATES} (ptxas -g crashes on a function "
            f"whose debug info describes more than {MAX_PREDICATES} predicates)"
        )
    if not (max_registers in ("auto", "all") or (isinstance(max_registers, int) and max_registers >= 0)):
        raise AttachError(f"max_registers: {max_registers!r} is not a count, 'auto' or 'all'")
    if only_mapped:
        parse_ptx(text, filename).require_whole("attach --only-mapped")
    args = (
        text,
        output_name,
        filename,
        rename_registers,
        replace,
        style,
        debug_target,
        predicates,
        max_registers,
    )
    result = _attach(*args, None)
    if not only_mapped:
        return result
    return _attach(*args, mapped_registers(result.text, filename=filename, ptxas=ptxas))


def mapped_registers(
    text: str, *, filename: str = "<ptx>", ptxas: Ptxas | str | None = None
) -> dict[str, set[str]]:
    """By function, the PTX registers ptxas's register map places in SASS when it compiles
    ``text`` with ``-g``."""
    compiled, _arch = compile_text(text, ptxas=ptxas, filename=filename)
    return {f.function: f.registers() for f in cubin_images(compiled.cubin, name=filename).register_map()}


def _attach(
    text: str,
    output_name: str,
    filename: str,
    rename_registers: bool,
    replace: bool,
    style: str,
    debug_target: bool,
    predicates: int,
    max_registers: int | str,
    registers_to_describe: dict[str, set[str]] | None,
) -> AttachResult:
    """:func:`attach_ptx`, describing only the registers of ``registers_to_describe`` when given."""
    try:
        style = Style(style).value
    except ValueError:
        raise AttachError(f"unknown style {style!r} (nvcc, readable or compact)") from None
    warnings: list[str] = []
    text, module, masked, keep_lines = _read(text, filename, replace)
    renames = registers.rename_registers(module, masked) if rename_registers else registers.Renames()
    warnings.extend(renames.warnings)
    funcs = [Func(f, i, renames.by_function.get(i, {})) for i, f in enumerate(module.functions)]
    for fn in funcs:
        fn.statements = scan_body(masked, fn.func.body_start, fn.func.body_end)
        fn.instrs = [s for s in fn.statements if s.kind == "instr"]
    prefix = _label_prefix(masked)
    plan = make_plan(text, module, masked, funcs, prefix, output_name, debug_target, keep_lines)
    edits = plan.edit(filename)
    for start, end, new in renames.edits:
        edits.replace(start, end, new)
    dbg, dies, more, left_out = describe(
        module, funcs, plan, masked, output_name, prefix, registers_to_describe, predicates, max_registers
    )
    warnings.extend(more)
    try:
        check_symbols(module, dbg, plan.labels)
    except AttachError as exc:
        raise AttachError(f"internal error: {exc.message}", where=filename) from None
    images = encode(dbg.finish(), dbg.encode_options()).images
    ordered = {name: images[name] for name in DEBUG_SECTION_NAMES if name in images}
    ordered.update({k: v for k, v in images.items() if k not in ordered})
    # The line table's inlined functions are named by labels of the input's .debug_str.
    keep = (".debug_str",) if keep_lines and ".debug_str" not in ordered else ()
    edit_debug_sections(edits, module, ordered, style, keep=keep)
    return AttachResult(without_trailing_nul(edits.apply()), warnings, renames.renamed, dies, left_out)


_LINE_TABLE_SECTIONS = frozenset(
    {
        ".debug_str",
        ".debug_abbrev",
        ".debug_info",
        ".debug_macinfo",
        ".debug_line",
        ".debug_pubnames",
        ".debug_pubtypes",
    }
)


def _line_tables_only(module: PtxModule) -> bool:
    """Whether the module's debug information is line information only: ``.file``/``.loc``,
    and at most a compile unit that describes no variable (Triton's; LLVM's with its name
    tables), whose sections attach replaces."""
    names = {
        b.name for b in module.sections if b.name.startswith(".debug_") and (b.image.data or b.image.relocs)
    }
    if not names <= _LINE_TABLE_SECTIONS:
        return False
    if ".debug_info" not in names:
        return True
    try:
        info = decode_module(module)
        return not any(d.tag in (TAG.variable, TAG.formal_parameter) for d in info.iter_dies())
    except PtxDwarfError:
        return False


def _read(text: str, filename: str, replace: bool) -> tuple[str, PtxModule, str, bool]:
    """(text, module, masked text, whether its own line information stays) of a module
    attach can change: without the debug info it had (``replace``), with the line
    information it has (``.file``/``.loc`` and no debug section), or an
    :class:`AttachError` saying why not."""
    module = parse_ptx(text, filename)
    masked = module.masked
    existing = existing_debug(module, masked)
    keep_lines = False
    if existing is not None and not replace and module.files and _line_tables_only(module):
        keep_lines, existing = True, None
    if existing is not None:
        what, line = existing
        if not replace:
            raise AttachError(
                f"the module already has debug info ({what}); use --replace to replace it",
                where=f"{filename}:{line}",
            )
        text = strip_debug(text, module, masked)
        module = parse_ptx(text, filename)
        masked = module.masked
    if module.address_size != 64:
        size = module.address_size or "none (32)"
        raise AttachError(
            f".address_size is {size}: ptxas compiles debug info only for .address_size 64",
            where=f"{filename}:{module.target_line or 1}",
        )
    if module.target_span is None:
        raise AttachError("the module has no .target directive", where=filename)
    if module.version is None or module.version < (3, 0):
        version = ".".join(map(str, module.version)) if module.version else "none"
        raise AttachError(
            f".version is {version}: .target ..., debug needs PTX ISA 3.0 or later",
            where=f"{filename}:{module.version_line or 1}",
        )
    for f in module.functions:
        if f.body_start < 0:
            raise AttachError(
                f".{f.kind} {f.name} has no body and is not a declaration ending with ';'",
                where=f"{filename}:{f.line}",
            )
    if not module.functions:
        raise AttachError("the module defines no function (.entry or .func with a body)", where=filename)
    check_debuggable(module, filename)
    return text, module, masked, keep_lines


def _label_prefix(masked: str) -> str:
    """The prefix of attach's labels: one no identifier of the module starts with."""
    tokens = identifiers_starting(masked, "$L__ptxdwarf")
    prefix = "$L__ptxdwarf_"
    n = 0
    while any(t.startswith(prefix) for t in tokens):
        n += 1
        prefix = f"$L__ptxdwarf{n}_"
    return prefix
