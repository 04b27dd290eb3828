"""Reading and rewriting PTX files: the functions most users call."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path

from .dwarf.decode import decode_sections
from .dwarf.encode import EncodeOptions, encode_sections
from .dwarf.image import SectionImage
from .dwarf.model import DebugInfo
from .errors import PtxDwarfError, PtxSyntaxError
from .files import ELF_MAGIC, binary_kind, is_cuda_elf, load_ptx, load_text, require_ptx, save_text
from .ptx.edits import TextEdits
from .ptx.module import PtxModule
from .ptx.reader import parse_ptx
from .ptx.writer import Style, format_dwarf_lines, format_section

__all__ = [
    "read_ptx",
    "read_ptx_file",
    "read_file",
    "read_all",
    "rewrite_ptx",
    "replace_debug_sections",
    "edit_debug_sections",
    "load_text",
    "load_ptx",
    "save_text",
    "binary_kind",
]


def read_ptx(text: str, *, filename: str = "<ptx>") -> DebugInfo:
    """Decode the debug sections of PTX ``text``.

    The result's :meth:`~ptxdwarf.model.DebugInfo.iter_dies` yields every DIE of every
    unit; its ``module`` is the :class:`~ptxdwarf.ptx.PtxModule` read around them.
    """
    module = parse_ptx(text, filename)
    return decode_module(module)


def decode_module(module: PtxModule) -> DebugInfo:
    """Decode the debug sections of an already parsed module."""
    images = module.images(debug_only=True)
    info = decode_sections(
        images,
        source="ptx",
        filename=module.filename,
        address_size=4 if module.address_size == 32 else 8,
    )
    info.module = module
    return info


def read_ptx_file(path: str | os.PathLike[str]) -> DebugInfo:
    """:func:`read_ptx` of a file."""
    return read_ptx(load_text(path), filename=str(path))


def read_file(path: str | os.PathLike[str]) -> DebugInfo:
    """The debug info of a PTX file or a cubin (ELF, found by its magic).

    For fatbins and host objects, which hold several, see :func:`read_all`.
    """
    found = read_all(path)
    if len(found) != 1:
        raise PtxDwarfError(
            f"holds {len(found)} device images; use read_all() (ptxdwarf dump shows them all)",
            where=str(path),
        )
    return found[0][1]


def read_all(
    path: str | os.PathLike[str], *, errors: list[PtxDwarfError] | None = None
) -> list[tuple[str, DebugInfo]]:
    """(label, debug info) of every device image a file holds: one for PTX text or a
    cubin; each cubin and PTX of a fatbin, or of a host object's ``.nv_fatbin``.

    An entry of a fatbin that cannot be read raises, or, given ``errors``, is added there
    and left out (the others are read; an error still when none can be)."""
    from .cuda.cubin import read_cubin
    from .cuda.fatbin import fatbin_of_host_elf, is_fatbin, iter_fatbin

    name = str(path)
    raw = Path(path).read_bytes()
    fatbin: bytes | None = None
    if raw[:4] == ELF_MAGIC:
        if is_cuda_elf(raw):
            return [(name, read_cubin(raw, name=name))]
        fatbin = fatbin_of_host_elf(raw, name=name)
        if fatbin is None:
            raise PtxDwarfError("an ELF file with neither CUDA code nor a .nv_fatbin section", where=name)
    elif is_fatbin(raw):
        fatbin = raw
    if fatbin is not None:
        out = []
        failed = 0
        for entry in iter_fatbin(fatbin, name=name):
            label = f"{name} [{entry.label}]"
            try:
                if entry.error is not None:
                    raise entry.error
                if entry.kind == "elf":
                    info = read_cubin(entry.payload, name=label)
                elif entry.kind == "ptx":
                    info = read_ptx(entry.ptx_text(), filename=label)
                else:
                    continue
            except PtxDwarfError as exc:
                if errors is None:
                    raise
                errors.append(exc)
                failed += 1
                continue
            info.filename = label
            out.append((label, info))
        if not out:
            if failed and errors is not None:
                raise errors.pop()
            raise PtxDwarfError("the fatbin holds no cubin or PTX", where=name)
        return out
    text = raw.decode("utf-8", "surrogateescape")
    require_ptx(text, name)
    return [(name, read_ptx(text, filename=name))]


def replace_debug_sections(
    module: PtxModule, images: Mapping[str, SectionImage], style: Style | str = Style.READABLE
) -> str:
    """``module``'s text with its debug section blocks replaced by ``images``.

    Each section goes where its first block was; later blocks of the same name and
    sections absent from ``images`` are removed; sections new to the module are
    appended at the end. Everything else stays byte for byte.
    """
    edits = TextEdits(module.text, where=module.filename)
    edit_debug_sections(edits, module, images, style)
    return edits.apply()


def edit_debug_sections(
    edits: TextEdits,
    module: PtxModule,
    images: Mapping[str, SectionImage],
    style: Style | str = Style.READABLE,
    *,
    keep: Collection[str] = (),
) -> None:
    """Add to ``edits`` (of ``module.text``) what :func:`replace_debug_sections` does;
    the blocks of the sections named in ``keep`` stay as they are.

    Add them after the other edits of the text: whether a newline goes before the
    sections appended at the end depends on the edited text before them.
    """
    text = module.text
    pos = 0
    placed: set[str] = set()
    # Below PTX ISA 2.0 ptxas takes debug sections only as @@DWARF lines (quirk dwarf-lines).
    dwarf_lines = module.version is not None and module.version < (2, 0)

    def form(image: SectionImage) -> str:
        return format_dwarf_lines(image) if dwarf_lines else format_section(image, style)

    for block in module.sections:
        if not block.name.startswith(".debug_") or block.name in keep:
            continue
        start = block.start
        line_start = text.rfind("\n", 0, start) + 1
        if not text[line_start:start].strip():
            start = line_start
        pos = block.end
        if block.name in images and block.name not in placed:
            edits.replace(start, pos, form(images[block.name]).rstrip("\n"))
            placed.add(block.name)
        else:
            if text[pos : pos + 1] == "\n":
                pos += 1
            edits.delete(start, pos)
    rest = [img for name, img in images.items() if name not in placed]
    if rest:
        last = edits.last_char_after(pos)
        lead = "\n" if last and last != "\n" else ""
        edits.insert(len(text), lead + "".join(form(img) for img in rest))


def rewrite_ptx(
    text: str,
    *,
    style: Style | str = Style.READABLE,
    filename: str = "<ptx>",
    options: EncodeOptions | None = None,
) -> str:
    """Decode every debug section of ``text`` and encode it again in ``style``."""
    module = parse_ptx(text, filename)
    if not any(block.name.startswith(".debug_") for block in module.sections):
        return text  # nothing to rewrite
    info = decode_module(module)
    images = encode_sections(info, options)
    return replace_debug_sections(module, images, style)


__all__ += ["decode_module", "PtxSyntaxError"]
