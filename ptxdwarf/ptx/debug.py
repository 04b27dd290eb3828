"""A parsed module's debug sections: decoded into :class:`~ptxdwarf.dwarf.model.DebugInfo`, and
replaced in its text by new section images."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from ..dwarf.decode import decode_sections
from ..dwarf.image import SectionImage
from ..dwarf.model import DebugInfo
from .edits import TextEdits
from .module import FRAGMENT_NOTE, PtxModule
from .writer import Style, format_dwarf_lines, format_section

__all__ = ["decode_module", "edit_debug_sections", "replace_debug_sections"]


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
    if module.is_fragment:
        info.notes.append(FRAGMENT_NOTE)
    return info


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
        end = len(text.rstrip("\0"))  # before the NUL byte that ends NVRTC's PTX
        last = edits.last_char_after(pos) if end == len(text) else text[end - 1 : end]
        lead = "\n" if last and last != "\n" else ""
        edits.insert(end, lead + "".join(form(img) for img in rest))
