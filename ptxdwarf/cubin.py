"""Reading the DWARF of a cubin (the ELF file ptxas writes).

pyelftools reads the ELF; its DWARF relocation step does not know CUDA's
relocation types (``Unsupported relocation type: 2``), so the debug sections
are read here as :class:`~ptxdwarf.image.SectionImage` with CUDA relocations
(``R_CUDA_32``, ``R_CUDA_64``, ``R_CUDA_G32``, ``R_CUDA_G64``; REL and RELA)
applied and kept as symbol + addend, then decoded like PTX text.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from .decode import decode_sections
from .errors import CubinError
from .image import Reloc, SectionImage, Symbol
from .model import DebugInfo

__all__ = ["CUDA_RELOCATIONS", "CubinSymbol", "CubinImages", "read_cubin", "cubin_images"]

#: CUDA relocation types that may appear in debug sections: code -> (name, size in bytes).
CUDA_RELOCATIONS: dict[int, tuple[str, int]] = {
    1: ("R_CUDA_32", 4),
    2: ("R_CUDA_64", 8),
    3: ("R_CUDA_G32", 4),
    4: ("R_CUDA_G64", 8),
}


# Sections ptxdwarf decodes; relocations elsewhere are left alone.
_DECODED = frozenset(
    {
        ".debug_info",
        ".debug_abbrev",
        ".debug_str",
        ".debug_loc",
        ".debug_ranges",
        ".debug_aranges",
        ".debug_pubnames",
        ".debug_pubtypes",
        ".debug_macinfo",
    }
)


@dataclass(frozen=True)
class CubinSymbol:
    """An ELF symbol of the cubin."""

    name: str
    value: int
    size: int
    kind: str
    section: str | None


@dataclass
class CubinImages:
    """The debug section images of a cubin and what else a reader needs of it."""

    images: dict[str, SectionImage]
    symbols: dict[str, CubinSymbol] = field(default_factory=dict)
    sections: list[str] = field(default_factory=list)
    machine: int = 0
    elf_class: int = 64
    relocation_types: dict[str, int] = field(default_factory=dict)
    """How many relocations of each type the debug sections had."""
    nv_info: dict[str, bytes] = field(default_factory=dict)
    """The ``.nv.info.<function>`` sections (kernel parameter layout and more), by function."""


def _open(source: str | os.PathLike[str] | bytes | BinaryIO, name: str | None = None) -> tuple[BinaryIO, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(bytes(source)), name or "<cubin>"
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            return io.BytesIO(f.read()), name or str(source)
    return source, name or str(getattr(source, "name", "<cubin>"))


def cubin_images(source: str | os.PathLike[str] | bytes | BinaryIO, *, name: str | None = None) -> CubinImages:
    """The debug sections of a cubin, relocations applied and recorded; ``name`` names it in errors."""
    stream, name = _open(source, name)
    try:
        elf = ELFFile(stream)
        return _images(elf, name)
    except CubinError:
        raise
    except (ELFError, ValueError, KeyError, IndexError, AttributeError, TypeError) as exc:
        raise CubinError(f"not a readable ELF file ({exc})", where=name) from None
    except Exception as exc:  # construct errors from pyelftools' own parser
        if type(exc).__module__.startswith("elftools"):
            raise CubinError(f"not a readable ELF file ({exc})", where=name) from None
        raise


def _section_symbol_name(elf: ELFFile, sym: object) -> str | None:
    shndx = sym.entry["st_shndx"]  # type: ignore[attr-defined]
    if isinstance(shndx, int) and 0 < shndx < elf.num_sections():
        return elf.get_section(shndx).name
    return None


def _images(elf: ELFFile, name: str) -> CubinImages:
    result = CubinImages({}, machine=elf["e_machine"] if isinstance(elf["e_machine"], int) else 190, elf_class=elf.elfclass)
    names = [s.name for s in elf.iter_sections()]
    result.sections = names
    symtab: Any = elf.get_section_by_name(".symtab")
    if symtab is not None:
        for sym in symtab.iter_symbols():
            kind = sym["st_info"]["type"]
            sec = _section_symbol_name(elf, sym)
            sym_name = sym.name or (sec if kind == "STT_SECTION" else "")
            if sym_name and sym_name not in result.symbols:
                result.symbols[sym_name] = CubinSymbol(sym_name, sym["st_value"], sym["st_size"], kind, sec)
    for section in elf.iter_sections():
        if section.name.startswith(".nv.info."):
            result.nv_info[section.name[len(".nv.info.") :]] = section.data()
        if not section.name.startswith(".debug_"):
            continue
        result.images[section.name] = SectionImage(section.name, section.data(), relocs_applied=True, filename=name)
    for section in elf.iter_sections():
        if not isinstance(section, RelocationSection):
            continue
        target_index = section["sh_info"]
        if not 0 < target_index < elf.num_sections():
            continue
        target = elf.get_section(target_index).name
        image = result.images.get(target)
        if image is None:
            continue
        table: Any = elf.get_section(section["sh_link"])
        data = bytearray(image.data)
        relocs = list(image.relocs)
        rela = section.is_RELA()
        for entry in section.iter_relocations():
            rtype = entry["r_info_type"]
            if rtype not in CUDA_RELOCATIONS:
                if target not in _DECODED:
                    continue  # .debug_frame and .debug_line also hold code relocations
                raise CubinError(
                    f"relocation type {rtype} at {target}+0x{entry['r_offset']:x} is not a CUDA data relocation",
                    where=name,
                )
            rname, size = CUDA_RELOCATIONS[rtype]
            result.relocation_types[rname] = result.relocation_types.get(rname, 0) + 1
            offset = entry["r_offset"]
            if offset + size > len(data):
                raise CubinError(f"relocation at {target}+0x{offset:x} runs past the section", where=name)
            sym = table.get_symbol(entry["r_info_sym"])
            kind = sym["st_info"]["type"]
            sym_name = sym.name or (_section_symbol_name(elf, sym) if kind == "STT_SECTION" else None) or f"sym{entry['r_info_sym']}"
            if rela:
                addend = entry["r_addend"]
            else:
                addend = int.from_bytes(data[offset : offset + size], "little", signed=True)
            value = (sym["st_value"] + addend) & ((1 << (8 * size)) - 1)
            data[offset : offset + size] = value.to_bytes(size, "little")
            relocs.append(Reloc(offset, size, Symbol(sym_name, addend, value)))
        relocs.sort(key=lambda r: r.offset)
        result.images[target] = SectionImage(target, bytes(data), relocs, relocs_applied=True, filename=name)
    return result


def read_cubin(source: str | os.PathLike[str] | bytes | BinaryIO, *, name: str | None = None) -> DebugInfo:
    """The decoded debug info of a cubin (path, bytes or binary stream); ``name`` names it in messages."""
    found = cubin_images(source, name=name)
    if name is None:
        name = str(source) if isinstance(source, (str, os.PathLike)) else "<cubin>"
    info = decode_sections(found.images, source="cubin", filename=name, address_size=8 if found.elf_class == 64 else 4)
    info.module = found
    return info
