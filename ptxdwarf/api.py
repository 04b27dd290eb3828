"""Reading and rewriting PTX files: the functions most users call."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import PtxDwarfError
from .files import ELF_MAGIC, is_cuda_elf, require_ptx

if TYPE_CHECKING:
    from collections.abc import Collection

    from .dwarf.encode import EncodeOptions
    from .dwarf.model import DebugInfo
    from .ptx.writer import Style

__all__ = ["read", "read_all", "read_ptx", "rewrite"]


def read_ptx(text: str, *, filename: str = "<ptx>") -> DebugInfo:
    """Decode the debug sections of PTX ``text``.

    The result's :meth:`~ptxdwarf.dwarf.model.DebugInfo.iter_dies` yields every DIE of every
    unit; its ``module`` is the :class:`~ptxdwarf.ptx.PtxModule` read around them.
    """
    from .ptx.debug import decode_module
    from .ptx.reader import parse_ptx

    return decode_module(parse_ptx(text, filename))


def read(
    path: str | os.PathLike[str] | None = None,
    /,
    *,
    text: str | None = None,
    data: bytes | None = None,
    filename: str | None = None,
) -> DebugInfo:
    """The debug info of one device image: a file (``path``), PTX ``text`` or the bytes of a
    file (``data``), each PTX text or a cubin (found by its magic); a fatbin or host object
    that holds a single cubin or PTX. ``filename`` names the input in messages.

    A fatbin or host object that holds several device images is an error here: see
    :func:`read_all`.
    """
    found = read_all(path, text=text, data=data, filename=filename)
    if len(found) != 1:
        raise PtxDwarfError(
            f"holds {len(found)} device images; use read_all() (ptxdwarf dump shows them all)",
            where=_input_name(path, filename, text is not None),
        )
    return found[0][1]


def read_all(
    path: str | os.PathLike[str] | None = None,
    /,
    *,
    text: str | None = None,
    data: bytes | None = None,
    filename: str | None = None,
    errors: list[PtxDwarfError] | None = None,
) -> list[tuple[str, DebugInfo]]:
    """(label, debug info) of every device image an input holds (given as in :func:`read`):
    one for PTX text or a cubin; each cubin and PTX of a fatbin, or of a host object's
    ``.nv_fatbin``.

    An entry of a fatbin that cannot be read raises, or, given ``errors``, is added there
    and left out (the others are read; an error still when none can be)."""
    return _read_all(path, text, data, filename, errors, only=None)


def _read_all(
    path: str | os.PathLike[str] | None,
    text: str | None,
    data: bytes | None,
    filename: str | None,
    errors: list[PtxDwarfError] | None,
    *,
    only: Collection[str] | None,
) -> list[tuple[str, DebugInfo]]:
    """:func:`read_all`; of a cubin, only the debug sections ``only`` names (see
    :func:`~ptxdwarf.cuda.read_cubin`; None: all)."""
    given = sum(x is not None for x in (path, text, data))
    if given != 1:
        raise TypeError("read() takes exactly one of a path, text= or data=")
    name = _input_name(path, filename, text is not None)
    if text is not None:
        return [(name, read_ptx(text, filename=name))]
    if path is not None:
        with open(path, "rb") as f:
            head = f.read(20)
        if head[:4] == ELF_MAGIC and is_cuda_elf(head):
            from .cuda.cubin import read_cubin

            return [(name, read_cubin(path, name=name, only=only))]
        data = Path(path).read_bytes()
    assert data is not None
    return _read_bytes(data, name, errors, only)


def _input_name(path: str | os.PathLike[str] | None, filename: str | None, is_text: bool) -> str:
    """How messages name an input of :func:`read`."""
    if filename:
        return filename
    if path is not None:
        return str(path)
    return "<ptx>" if is_text else "<input>"


def _read_bytes(
    raw: bytes, name: str, errors: list[PtxDwarfError] | None, only: Collection[str] | None
) -> list[tuple[str, DebugInfo]]:
    from .cuda.cubin import read_cubin
    from .cuda.fatbin import fatbin_of_host_elf, is_fatbin, iter_fatbin

    fatbin: bytes | None = None
    if raw[:4] == ELF_MAGIC:
        if is_cuda_elf(raw):
            return [(name, read_cubin(raw, name=name, only=only))]
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
                    info = read_cubin(entry.payload, name=label, only=only)
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


def rewrite(
    text: str,
    *,
    style: Style | str = "readable",
    filename: str = "<ptx>",
    options: EncodeOptions | None = None,
    notes: list[str] | None = None,
) -> str:
    """Decode every debug section of ``text`` and encode it again in ``style`` (a
    :class:`~ptxdwarf.ptx.writer.Style` or its name); what the reader says of the input (a
    PTX fragment, say) is added to ``notes``."""
    from .dwarf.encode import encode_sections
    from .ptx.debug import decode_module, replace_debug_sections
    from .ptx.reader import parse_ptx

    module = parse_ptx(text, filename)
    if not any(block.name.startswith(".debug_") for block in module.sections):
        return text  # nothing to rewrite
    info = decode_module(module)
    if notes is not None:
        notes.extend(info.notes)
    images = encode_sections(info, options)
    return replace_debug_sections(module, images, style)
