"""Reading the DWARF of a cubin (the ELF file ptxas writes).

The ELF header, section headers, symbols and relocations are read here with
:mod:`struct`, not pyelftools: its import alone costs a quarter of a small dump's time,
and its DWARF relocation step does not know CUDA's relocation types (``Unsupported
relocation type: 2``). The debug sections are read as :class:`~ptxdwarf.dwarf.image.SectionImage` with CUDA relocations
(``R_CUDA_32``, ``R_CUDA_64``, ``R_CUDA_G32``, ``R_CUDA_G64``; REL and RELA)
applied and kept as symbol + addend, then decoded like PTX text.
"""

from __future__ import annotations

import functools
import operator
import os
import struct
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO, NamedTuple, TypeVar

from .._native import twin
from ..dwarf.decode import decode_sections
from ..dwarf.image import Reloc, SectionImage, Symbol
from ..dwarf.lines import read_line_programs
from ..dwarf.model import DebugInfo
from ..dwarf.reprs import counted, short
from ..errors import CubinError
from .regmap import SASS_SECTION, TYPE_SECTION, FunctionRegisters, read_register_map

__all__ = [
    "CUDA_RELOCATIONS",
    "CubinImages",
    "CubinSymbol",
    "ElfContents",
    "ElfRelocation",
    "cubin_images",
    "elf_contents",
    "read_cubin",
    "register_map",
]

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

    def __repr__(self) -> str:
        return f"<CubinSymbol {self.kind} {short(self.name)} 0x{self.value:x}+{self.size} in {short(self.section)}>"


@dataclass
class CubinImages:
    """The debug section images of a cubin and what else a reader needs of it."""

    images: dict[str, SectionImage]
    sections: list[str] = field(default_factory=list)
    machine: int = 0
    elf_class: int = 64
    relocation_types: dict[str, int] = field(default_factory=dict)
    """How many relocations of each type the debug sections had."""
    line_sass: SectionImage | None = None
    """``.nv_debug_line_sass``, relocations applied: a line program from SASS addresses to
    lines of the PTX text ptxas compiled (kept in ``.nv_debug_ptx_txt.HASH``)."""
    ptx_text_reader: Callable[[], bytes] | None = field(default=None, repr=False)
    """Reads ``.nv_debug_ptx_txt.HASH`` (see :attr:`ptx_text`) when asked."""
    tileir_line: SectionImage | None = None
    """``.nv.tileir.debug_line`` (cuTile cubins), relocations applied: a line program from SASS
    addresses to lines of the Tile IR text that ``tileir_text`` holds."""
    tileir_text: dict[str, bytes] = field(default_factory=dict)
    """``.nv.tileir.debug_txt.HASH``: the Tile IR text, by section name."""
    undecoded: list[tuple[str, int]] = field(default_factory=list)
    """(name, size) of the debug sections other than ``.debug_*`` that the reader does not
    decode (``.nv_debug_ptx_txt``, the ``.nv.merc.*`` copies), in file order."""
    filename: str = "<cubin>"
    notes: list[str] = field(default_factory=list)
    """What the reader worked around (a relocation section whose ``sh_link`` names no symbol table)."""
    symbol_reader: Callable[[], dict[str, CubinSymbol]] = field(default=dict, repr=False)
    """Makes :attr:`symbols` when asked."""
    nv_info_reader: Callable[[], dict[str, bytes]] = field(default=dict, repr=False)
    """Reads :attr:`nv_info` when asked."""
    reg_sass_reader: Callable[[], bytes] | None = field(default=None, repr=False)
    """Reads :attr:`reg_sass` when asked (None: the cubin has no such section)."""
    reg_type_reader: Callable[[], bytes] | None = field(default=None, repr=False)
    """Reads :attr:`reg_type` when asked."""

    @functools.cached_property
    def symbols(self) -> dict[str, CubinSymbol]:
        """The ELF symbols of ``.symtab``, the first of each name, made when first asked for."""
        return self.symbol_reader()

    @functools.cached_property
    def nv_info(self) -> dict[str, bytes]:
        """The ``.nv.info.<function>`` sections (kernel parameter layout and more), by function;
        of a cubin read from a path, read from the file when first asked for (an error if the
        file has changed)."""
        return self.nv_info_reader()

    @functools.cached_property
    def reg_sass(self) -> bytes | None:
        """``.nv_debug_info_reg_sass``: where each PTX register lives in SASS (see
        :mod:`.regmap`); read when first asked for, as :attr:`nv_info`."""
        return None if self.reg_sass_reader is None else self.reg_sass_reader()

    @functools.cached_property
    def reg_type(self) -> bytes | None:
        """``.nv_debug_info_reg_type``: the PTX type of each entry of :attr:`reg_sass`."""
        return None if self.reg_type_reader is None else self.reg_type_reader()

    @property
    def has_register_map(self) -> bool:
        """Whether the cubin has a register map section (without reading it)."""
        return self.reg_sass_reader is not None

    @property
    def ptx_text(self) -> bytes | None:
        """``.nv_debug_ptx_txt.HASH``: the PTX text, a NUL byte ending each line (of a cubin read
        from a path, read from the file each time it is asked for: an error if the file has changed)."""
        return None if self.ptx_text_reader is None else self.ptx_text_reader()

    def __repr__(self) -> str:
        return (
            f"<CubinImages {short(self.filename)!r}: {counted(len(self.images), 'debug section')}, "
            f"{counted(len(self.symbols), 'symbol')}>"
        )

    def register_map(self) -> list[FunctionRegisters]:
        """ptxas's register map, by function (empty when the cubin has none: no ``-g``)."""
        sass = self.reg_sass
        if sass is None:
            return []
        return read_register_map(sass, self.reg_type, where=self.filename)


class _Bytes:
    """A cubin held in memory."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.size = len(raw)

    def close(self) -> None:
        """Nothing to close."""

    def read(self, start: int, stop: int) -> bytes:
        return self.raw[start:stop]

    def later(self, start: int, stop: int) -> Callable[[], bytes]:
        data = self.raw[start:stop]
        return lambda: data

    def later_all(self, spans: list[tuple[int, int]]) -> Callable[[], list[bytes]]:
        data = [self.raw[start:stop] for start, stop in spans]
        return lambda: data


class _Disk:
    """A cubin file read a section at a time, never held whole; small reads are served from
    one window of :data:`_WINDOW` bytes read ahead (a ``-G`` cubin's thousands of
    ``.nv.info.<function>`` sections lie one after the other)."""

    def __init__(self, f: BinaryIO, path: str | os.PathLike[str], name: str) -> None:
        self.f = f
        self.fd = f.fileno()
        self.path = path
        self.name = name
        self.stat = os.fstat(self.fd)
        self.size = self.stat.st_size
        self.window = b""
        self.window_start = 0

    def read(self, start: int, stop: int) -> bytes:
        if stop - start <= _SMALL_READ and stop <= self.size:
            first = start - self.window_start
            if first < 0 or stop - self.window_start > len(self.window):
                self.window = self._pread(start, min(self.size, max(stop, start + _WINDOW)))
                self.window_start, first = start, 0
            return self.window[first : first + stop - start]
        return self._pread(start, stop)

    def close(self) -> None:
        """Close the file."""
        self.f.close()

    def _pread(self, start: int, stop: int) -> bytes:
        data = os.pread(self.fd, stop - start, start)
        if len(data) != stop - start:
            raise CubinError(f"the file ended at 0x{start + len(data):x} while being read", where=self.name)
        return data

    def later(self, start: int, stop: int) -> Callable[[], bytes]:
        """Bytes ``start:stop``, read when asked for; an error if the file has changed since."""
        read = self.later_all([(start, stop)])
        return lambda: read()[0]

    def later_all(self, spans: list[tuple[int, int]]) -> Callable[[], list[bytes]]:
        """The bytes of each ``(start, stop)`` of ``spans``, read when asked for, as :meth:`later`."""
        path, name, before = self.path, self.name, self.stat

        def read() -> list[bytes]:
            try:
                with open(path, "rb") as f:
                    now = os.fstat(f.fileno())
                    if (now.st_size, now.st_mtime_ns, now.st_ino) != (
                        before.st_size,
                        before.st_mtime_ns,
                        before.st_ino,
                    ):
                        raise CubinError("the file has changed since it was read", where=name)
                    disk = _Disk(f, path, name)
                    return [disk.read(start, stop) for start, stop in spans]
            except OSError as exc:
                raise CubinError(f"cannot read again ({exc.strerror or exc})", where=name) from None

        return read


_File = _Bytes | _Disk

#: How many bytes :class:`_Disk` reads ahead for a read of at most :data:`_SMALL_READ`.
_WINDOW = 1 << 16
_SMALL_READ = 1 << 12


@dataclass(frozen=True, slots=True)
class _ElfHeader:
    """What the readers need of an ELF file header."""

    elfclass: int
    """32 or 64."""
    little_endian: bool
    machine: int
    shoff: int
    shentsize: int
    shnum: int
    shstrndx: int
    phoff: int = 0
    phentsize: int = 0
    phnum: int = 0

    @property
    def tables_end(self) -> int:
        """Where the later of the section and program header tables ends: the end of a
        cubin as ptxas lays it out."""
        return max(self.shoff + self.shnum * self.shentsize, self.phoff + self.phnum * self.phentsize)

    @classmethod
    def read(cls, file: _File) -> _ElfHeader:
        """The header at the start of ``file``; ValueError when it is not an ELF header."""
        ident = file.read(0, min(16, file.size))
        if ident[:4] != b"\x7fELF":
            raise ValueError("Magic number does not match")
        if len(ident) < 16 or ident[4] not in (1, 2):
            raise ValueError(f"Invalid EI_CLASS {ident[4:5]!r}")
        if ident[5] not in (1, 2):
            raise ValueError(f"Invalid EI_DATA {ident[5:6]!r}")
        elfclass = 32 if ident[4] == 1 else 64
        e = "<" if ident[5] == 1 else ">"
        fmt = e + ("HHIQQQIHHHHHH" if elfclass == 64 else "HHIIIIIHHHHHH")
        end = 16 + struct.calcsize(fmt)
        if file.size < end:
            raise ValueError(f"the file is {file.size} bytes, shorter than the {end}-byte ELF header")
        (
            _type,
            machine,
            _v,
            _entry,
            phoff,
            shoff,
            _flags,
            _eh,
            phentsize,
            phnum,
            shentsize,
            shnum,
            shstrndx,
        ) = struct.unpack(fmt, file.read(16, end))
        return cls(elfclass, e == "<", machine, shoff, shentsize, shnum, shstrndx, phoff, phentsize, phnum)


def written_size(head: bytes) -> int | None:
    """The size of the cubin whose first bytes are ``head`` once all of it is written, as its
    ELF header places its section and program header tables (ptxas writes them last); None
    when ``head`` does not hold an ELF header."""
    try:
        return _ElfHeader.read(_Bytes(head)).tables_end
    except ValueError:
        return None


def _open(source: str | os.PathLike[str] | bytes | BinaryIO, name: str | None = None) -> tuple[_File, str]:
    """The cubin ``source`` as a file read a section at a time (a path) or as its bytes, and
    its name in errors."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _Bytes(bytes(source)), name or "<cubin>"
    if isinstance(source, (str, os.PathLike)):
        name = name or str(source)
        return _Disk(open(source, "rb"), source, name), name
    return _Bytes(source.read()), name or str(getattr(source, "name", "<cubin>"))


class ElfRelocation(NamedTuple):
    """One entry of a REL or RELA section as the file has it: ``type`` is the CUDA relocation
    type (:data:`CUDA_RELOCATIONS`), ``addend`` None in a REL section."""

    offset: int
    type: int
    symbol: str
    addend: int | None

    def __repr__(self) -> str:
        addend = f"{self.addend:+}" if self.addend is not None else ""
        return f"<ElfRelocation at 0x{self.offset:x} type {self.type}: {short(self.symbol)}{addend}>"


@dataclass
class ElfContents:
    """A cubin as the file has it, nothing applied: each section's bytes (in file order; a
    name may occur twice), the relocations of each section, and the ``.symtab`` symbols by
    name as (value, section index), index 0 for an undefined symbol."""

    sections: list[tuple[str, bytes]] = field(default_factory=list)
    relocations: dict[str, list[ElfRelocation]] = field(default_factory=dict)
    symbols: dict[str, tuple[int, int]] = field(default_factory=dict)

    def __repr__(self) -> str:
        relocations = sum(len(r) for r in self.relocations.values())
        return (
            f"<ElfContents {counted(len(self.sections), 'section')}, {counted(relocations, 'relocation')}, "
            f"{counted(len(self.symbols), 'symbol')}>"
        )

    def get(self, name: str) -> bytes | None:
        """The bytes of the first section called ``name``."""
        return next((data for n, data in self.sections if n == name), None)

    def count(self, name: str) -> int:
        """How many sections are called ``name``."""
        return sum(1 for n, _ in self.sections if n == name)

    def relocation_at(self, section: str, offset: int) -> ElfRelocation | None:
        """The relocation of ``section`` at ``offset``, if there is one."""
        return next((r for r in self.relocations.get(section, ()) if r.offset == offset), None)


_T = TypeVar("_T")


def _read(
    source: str | os.PathLike[str] | bytes | BinaryIO,
    name: str | None,
    build: Callable[[_ElfHeader, _File, str], _T],
) -> _T:
    """What ``build`` makes of the ELF file ``source``; CubinError when it is not one."""
    try:
        file, name = _open(source, name)
    except OSError as exc:
        raise CubinError(f"cannot read ({exc.strerror or exc})", where=name or str(source)) from None
    try:
        return build(_ElfHeader.read(file), file, name)
    except CubinError:
        raise
    except (ValueError, KeyError, IndexError, AttributeError, TypeError, OverflowError, struct.error) as exc:
        raise CubinError(f"not a readable ELF file ({exc})", where=name) from None
    finally:
        file.close()


def cubin_images(
    source: str | os.PathLike[str] | bytes | BinaryIO,
    *,
    name: str | None = None,
    only: Collection[str] | None = None,
) -> CubinImages:
    """The debug sections of a cubin, relocations applied and recorded; ``name`` names it in
    errors. ``only`` names the sections to read of the ``.debug_*`` ones and the line tables
    ``.nv_debug_line_sass`` and ``.nv.tileir.debug_line`` (None: all of them); the others are
    neither read nor relocated."""
    keep = None if only is None else frozenset(only)
    return _read(source, name, lambda elf, file, where: _images(elf, file, where, keep))


def elf_contents(
    source: str | os.PathLike[str] | bytes | BinaryIO, *, name: str | None = None
) -> ElfContents:
    """Every section, relocation and ``.symtab`` symbol of a cubin, nothing applied (what
    ptxas wrote, byte for byte); ``name`` names it in errors."""
    return _read(source, name, _contents)


_SHN_UNDEF = 0
_SHN_LORESERVE = 0xFF00
_STT_SECTION = 3
_STT_NAMES = {
    0: "STT_NOTYPE",
    1: "STT_OBJECT",
    2: "STT_FUNC",
    3: "STT_SECTION",
    4: "STT_FILE",
    10: "STT_LOOS",
}


class _Section(NamedTuple):
    name: str
    type: int
    offset: int
    size: int
    link: int
    info: int
    file: _File
    """The whole file; the section's bytes are ``start:stop`` of it."""
    start: int
    stop: int

    @property
    def data(self) -> bytes:
        """The section's bytes, copied out of the file (so only for the sections a reader keeps)."""
        return self.file.read(self.start, self.stop)

    def later(self) -> Callable[[], bytes]:
        """The section's bytes, read when asked for."""
        return self.file.later(self.start, self.stop)


_SHT_SYMTAB = 2
_SHT_RELA = 4
_SHT_NOBITS = 8
_SHT_REL = 9
_SHN_XINDEX = 0xFFFF
_SHN_UNDEF = 0
_STB_LOCAL = 0


class _RawSymbol(NamedTuple):
    name: str
    value: int
    size: int
    kind: int
    shndx: int
    binding: int = 0


def _c_string(table: bytes, offset: int) -> str:
    end = table.find(b"\0", offset)
    return table[offset : end if end >= 0 else len(table)].decode("utf-8", "surrogateescape")


def _sections(elf: _ElfHeader, file: _File, where: str) -> list[_Section]:
    """The section headers and contents, read in one pass (a ``-G`` cubin has one
    ``.nv.info``/``.text``/``.rel`` group per function: 10,000+ sections)."""
    e = "<" if elf.little_endian else ">"
    fmt = e + ("IIQQQQIIQQ" if elf.elfclass == 64 else "IIIIIIIIII")
    width = struct.calcsize(fmt)
    start, count, strndx = elf.shoff, elf.shnum, elf.shstrndx
    if not start:
        return []
    if elf.shentsize != width:
        raise CubinError(f"section headers are {elf.shentsize} bytes, not {width}", where=where)
    if count == 0 or strndx == _SHN_XINDEX:  # extended numbering: the real values are in section 0
        if start + width > file.size:
            raise CubinError(f"section header 0 at 0x{start:x} lies past the end of the file", where=where)
        first = struct.unpack(fmt, file.read(start, start + width))
        count = count or first[5]
        strndx = first[6] if strndx == _SHN_XINDEX else strndx
    end = start + count * width
    if end > file.size:
        raise CubinError(f"{count} section headers at 0x{start:x} run past the end of the file", where=where)
    table = file.read(start, end)
    if not 0 <= strndx < count:
        raise CubinError(f"section name table index {strndx} is not a section", where=where)
    _n, _t, _f, _a, str_off, str_size, *_ = struct.unpack_from(fmt, table, strndx * width)
    names = file.read(min(str_off, file.size), min(str_off + str_size, file.size))
    return _section_list(
        _Section, table, names, elf.elfclass == 64, elf.little_endian, file, file.size, where
    )


@twin("cubin")
def _section_list(
    kind: type[_Section],
    table: bytes,
    names: bytes,
    elf64: bool,
    little: bool,
    file: _File,
    size: int,
    where: str,
) -> list[_Section]:
    """Each section header of ``table`` (of an ELF file of 64 or 32 bits, ``size`` bytes) as a
    ``kind``, named from the string table ``names``; a section that runs past the file is an
    error."""
    fmt = ("<" if little else ">") + ("IIQQQQIIQQ" if elf64 else "IIIIIIIIII")
    out = []
    for index, (name, section_type, _flags, _addr, offset, length, link, info, _align, _entsize) in enumerate(
        struct.iter_unpack(fmt, table)
    ):
        start = stop = 0
        if section_type != _SHT_NOBITS and index != 0:
            if offset + length > size:
                raise CubinError(
                    f"section {index} ({_c_string(names, name)}) runs past the end of the file", where=where
                )
            start, stop = offset, offset + length
        out.append(kind(_c_string(names, name), section_type, offset, length, link, info, file, start, stop))
    return out


def _symbol_table(elf: _ElfHeader, sections: list[_Section], section: _Section) -> list[_RawSymbol]:
    """All entries of a symbol table, read in one pass; a section symbol is named after its section."""
    data = section.data
    strtab = sections[section.link].data if 0 < section.link < len(sections) else b""
    last = min(len(sections), _SHN_LORESERVE)
    names = [s.name for s in sections[:last]]
    return _symbol_list(_RawSymbol, data, strtab, elf.elfclass == 64, elf.little_endian, names)


@twin("cubin")
def _symbol_list(
    kind: type[_RawSymbol], data: bytes, strtab: bytes, elf64: bool, little: bool, sections: list[str]
) -> list[_RawSymbol]:
    """Each whole entry of the symbol table ``data`` (of an ELF file of 64 or 32 bits) as a
    ``kind``, named from the string table ``strtab``; a section symbol without a name is
    named after its section, of those ``sections`` names."""
    e = "<" if little else ">"
    if elf64:
        fmt, width = e + "IBBHQQ", 24
        rows = (
            (n, info, shndx, value, size)
            for n, info, _o, shndx, value, size in struct.iter_unpack(fmt, data[: len(data) // width * width])
        )
    else:
        fmt, width = e + "IIIBBH", 16
        rows = (
            (n, info, shndx, value, size)
            for n, value, size, info, _o, shndx in struct.iter_unpack(fmt, data[: len(data) // width * width])
        )
    last = len(sections)

    def name_of(n: int, symbol_type: int, shndx: int) -> str:
        name = _c_string(strtab, n)
        if not name and symbol_type == _STT_SECTION and 0 < shndx < last:
            return sections[shndx]
        return name

    return [
        kind(name_of(n, info & 0xF, shndx), value, size, info & 0xF, shndx, info >> 4)
        for n, info, shndx, value, size in rows
    ]


def _relocations(
    data: bytes, rela: bool, elf64: bool, little: bool, name: str, where: str
) -> Iterator[tuple[int, int, int, int | None]]:
    """(offset, symbol index, type, addend or None) of each entry of the REL or RELA (``rela``)
    section ``name`` holding ``data``, of an ELF file of 64 or 32 bits (``elf64``)."""
    e = "<" if little else ">"
    if elf64:
        fmt, shift, mask = e + ("QQq" if rela else "QQ"), 32, 0xFFFFFFFF
    else:
        fmt, shift, mask = e + ("IIi" if rela else "II"), 8, 0xFF
    width = struct.calcsize(fmt)
    if len(data) % width:
        raise CubinError(
            f"{name} is {len(data)} bytes, not a whole number of {width}-byte entries", where=where
        )
    if rela:
        for offset, info, addend in struct.iter_unpack(fmt, data):
            yield offset, info >> shift, info & mask, addend
    else:
        for offset, info in struct.iter_unpack(fmt, data):
            yield offset, info >> shift, info & mask, None


def _entries_of(elf: _ElfHeader, section: _Section, where: str) -> Iterator[tuple[int, int, int, int | None]]:
    """:func:`_relocations` of a REL or RELA ``section`` of ``elf``."""
    return _relocations(
        section.data, section.type == _SHT_RELA, elf.elfclass == 64, elf.little_endian, section.name, where
    )


def _images(elf: _ElfHeader, file: _File, name: str, keep: frozenset[str] | None) -> CubinImages:
    result = CubinImages(
        {},
        machine=elf.machine,
        elf_class=elf.elfclass,
        filename=name,
    )
    sections = _sections(elf, file, name)
    names = [s.name for s in sections]
    result.sections = names
    tables: dict[int, list[_RawSymbol]] = {}
    nv_info: list[_Section] = []
    relocations: list[_Section] = []
    count = len(sections)
    for index, section in enumerate(sections):
        kind = section.type
        if kind in (_SHT_REL, _SHT_RELA):
            # each section whose image relocations change has "debug" in its name (_add_section)
            if 0 < section.info < count and "debug" in names[section.info]:
                relocations.append(section)
            continue
        if kind == _SHT_SYMTAB:
            tables[index] = _symbol_table(elf, sections, section)
        if section.name.startswith(".nv.info."):
            nv_info.append(section)
        else:
            _add_section(result, section, name, keep)
    result.symbol_reader = functools.partial(_cubin_symbols, tables, names)
    if nv_info:
        result.nv_info_reader = _nv_info_reader(file, nv_info)
    for section in relocations:
        _relocate(result, section, names, tables, elf, name)
    return result


def _cubin_symbols(tables: dict[int, list[_RawSymbol]], names: list[str]) -> dict[str, CubinSymbol]:
    """The symbols of ``.symtab``, the first of each name."""

    def section_name(shndx: int) -> str | None:
        return names[shndx] if 0 < shndx < min(len(names), _SHN_LORESERVE) else None

    symbols: dict[str, CubinSymbol] = {}
    for index, table in tables.items():
        if names[index] != ".symtab":
            continue
        for sym in table:
            if sym.name and sym.name not in symbols:
                kind = _STT_NAMES.get(sym.kind, str(sym.kind))
                symbols[sym.name] = CubinSymbol(sym.name, sym.value, sym.size, kind, section_name(sym.shndx))
    return symbols


def _nv_info_reader(file: _File, sections: list[_Section]) -> Callable[[], dict[str, bytes]]:
    """Reads the ``.nv.info.<function>`` ``sections`` of ``file`` by function when called."""
    read = file.later_all([(s.start, s.stop) for s in sections])
    functions = [s.name[len(".nv.info.") :] for s in sections]
    return lambda: dict(zip(functions, read(), strict=True))


#: The line-program sections besides ``.debug_line``, and the field of :class:`CubinImages`
#: that holds each.
_LINE_FIELDS = {".nv_debug_line_sass": "line_sass", ".nv.tileir.debug_line": "tileir_line"}
_TILEIR_TEXT = ".nv.tileir.debug_txt"


#: How the name of a debug section starts, after the ``.nv.merc`` of a Mercury copy and the
#: ``.rel``/``.rela`` of a relocation section; the other sections with "debug" in their name
#: are a function's (``.text._Z12debug_kernelPi``).
_DEBUG_PREFIXES = (".debug_", ".nv_debug", ".nv.tileir.debug")
_MERCURY = ".nv.merc"


def _is_debug_name(name: str) -> bool:
    """Whether ``name`` is the name of a debug section (or of its relocations, or a copy)."""
    if name.startswith(_MERCURY):
        name = name[len(_MERCURY) :]
    if name.startswith(".rel"):
        name = name[5:] if name.startswith(".rela.") else name[4:]
    return name.startswith(_DEBUG_PREFIXES)


def _is_undecoded(section: _Section) -> bool:
    """Whether ``section`` is a debug section outside ``.debug_*`` that no field holds."""
    name = section.name
    return (
        _is_debug_name(name)
        and section.type not in (_SHT_REL, _SHT_RELA)
        and not name.startswith((".debug_", _TILEIR_TEXT))
        and name not in _LINE_FIELDS
        and name not in (SASS_SECTION, TYPE_SECTION)
    )


def _add_section(result: CubinImages, section: _Section, name: str, keep: frozenset[str] | None) -> None:
    """One section's data into the field of ``result`` that holds its kind, if any (of the
    ``.debug_*`` sections and the line tables, those of ``keep``; None: all). Each that a
    field holds has "debug" in its name."""
    if "debug" not in section.name:
        return  # most sections: code, constants, relocations
    if _is_undecoded(section):
        result.undecoded.append((section.name, section.size))
    if section.name.startswith(".debug_"):
        if keep is not None and section.name not in keep:
            return
        result.images[section.name] = SectionImage(
            section.name, section.data, relocs_applied=True, filename=name
        )
    elif section.name in _LINE_FIELDS:
        if keep is not None and section.name not in keep:
            return
        image = SectionImage(section.name, section.data, relocs_applied=True, filename=name)
        setattr(result, _LINE_FIELDS[section.name], image)
    elif section.name.startswith(".nv_debug_ptx_txt"):
        result.ptx_text_reader = section.later()
    elif section.name.startswith(_TILEIR_TEXT + "."):
        result.tileir_text[section.name] = section.data
    elif section.name == SASS_SECTION:
        result.reg_sass_reader = section.later()
    elif section.name == TYPE_SECTION:
        result.reg_type_reader = section.later()


def _relocate(
    result: CubinImages,
    section: _Section,
    names: list[str],
    tables: dict[int, list[_RawSymbol]],
    elf: _ElfHeader,
    name: str,
) -> None:
    """The relocations of one relocation ``section`` applied to the image of the section it targets."""
    target = names[section.info]
    line_field = _LINE_FIELDS.get(target)
    image = result.images.get(target) if line_field is None else getattr(result, line_field)
    if image is None:
        return
    found = _linked_symbols(result, section, names, tables, name)
    if line_field is not None:
        data, relocs, _ = _apply(found, section, image, {}, elf, name)
        setattr(result, line_field, SectionImage(target, data, relocs, relocs_applied=True, filename=name))
        return
    data, relocs, unresolved = _apply(found, section, image, result.relocation_types, elf, name)
    result.images[target] = SectionImage(
        target, data, relocs, relocs_applied=True, filename=name, unresolved=unresolved
    )


def _linked_symbols(
    result: CubinImages,
    section: _Section,
    names: list[str],
    tables: dict[int, list[_RawSymbol]],
    name: str,
) -> list[_RawSymbol]:
    """The symbol table a relocation ``section``'s ``sh_link`` names, or ``.symtab`` (with a note)."""
    link = section.link
    found = tables.get(link)
    if found is not None:
        return found
    # CUDA 12.1 wrote some sh_link values that name another section; the file's symbol
    # table is the only one its relocations can mean.
    symtab = next((i for i in tables if names[i] == ".symtab"), None)
    linked = names[link] if 0 <= link < len(names) else "none"
    if symtab is None:
        raise CubinError(
            f"{section.name}: sh_link {link} ({linked}) is not a symbol table, and there is no .symtab",
            where=name,
        )
    result.notes.append(
        f"{section.name}: sh_link {link} names {linked}, not a symbol table; its relocations were "
        "resolved against .symtab"
    )
    return tables[symtab]


def _contents(elf: _ElfHeader, file: _File, name: str) -> ElfContents:
    sections = _sections(elf, file, name)
    tables = {i: _symbol_table(elf, sections, s) for i, s in enumerate(sections) if s.type == _SHT_SYMTAB}
    symtab = next((table for i, table in tables.items() if sections[i].name == ".symtab"), [])
    result = ElfContents()
    for sym in symtab:
        result.symbols.setdefault(sym.name, (sym.value, sym.shndx))
    for section in sections:
        if section.type not in (_SHT_REL, _SHT_RELA):
            if section.name:
                result.sections.append((section.name, section.data))
            continue
        if not 0 < section.info < len(sections):
            continue
        table = tables.get(section.link, symtab)
        rows = result.relocations.setdefault(sections[section.info].name, [])
        for offset, index, rtype, addend in _entries_of(elf, section, name):
            symbol = table[index].name if index < len(table) else f"sym{index}"
            rows.append(ElfRelocation(offset, rtype, symbol, addend))
    return result


def _apply(
    table: list[_RawSymbol],
    section: _Section,
    image: SectionImage,
    counts: dict[str, int],
    elf: _ElfHeader,
    where: str,
) -> tuple[bytes, list[Reloc], frozenset[str]]:
    """``image``'s bytes with the relocations of ``section`` applied, its relocations (those
    it had and these, sorted by offset) and the names of the local symbols they name that no
    section defines (:attr:`SectionImage.unresolved`); ``counts`` gains each one's type."""
    names = [sym.name or f"sym{index}" for index, sym in enumerate(table)]
    data, found, by_type, named = _applied(
        Reloc,
        Symbol,
        image.data,
        section.data,
        section.type == _SHT_RELA,
        elf.elfclass == 64,
        elf.little_endian,
        [sym.value for sym in table],
        names,
        image.name in _DECODED,
        (image.name, section.name, where),
    )
    relocs = found
    if image.relocs:
        relocs = [*image.relocs, *found]
        relocs.sort(key=_offset_of)
    for rtype, n in by_type.items():
        rname = CUDA_RELOCATIONS[rtype][0]
        counts[rname] = counts.get(rname, 0) + n
    unresolved = frozenset(
        names[i] for i in named if table[i].shndx == _SHN_UNDEF and table[i].binding == _STB_LOCAL
    )
    return data, relocs, unresolved


@twin("cubin")
def _applied(
    reloc: type[Reloc],
    symbol: type[Symbol],
    raw: bytes,
    entries: bytes,
    rela: bool,
    elf64: bool,
    little: bool,
    values: list[int],
    names: list[str],
    decoded: bool,
    where: tuple[str, str, str],
) -> tuple[bytes, list[Reloc], dict[int, int], set[int]]:
    """``raw`` with the relocations ``entries`` (a REL or RELA section, see :func:`_relocations`)
    applied against the symbols of ``values`` and ``names``: the bytes, the relocations (as
    ``reloc`` of ``symbol``, sorted by offset), how many there were of each type and the
    indices of the symbols they name. A type that is not a CUDA data relocation is an error in
    a section ptxdwarf decodes (``decoded``), and is skipped elsewhere. ``where`` names the
    target section, the relocation section and the file in errors."""
    target, name, filename = where
    data: bytearray | None = None  # copied on the first relocation that changes a byte
    relocs: list[Reloc] = []
    append = relocs.append
    symbols: dict[tuple[int, int], Symbol] = {}
    limit = len(raw)
    known_types = CUDA_RELOCATIONS
    count = len(values)
    last = -1
    in_order = True
    new_reloc = tuple.__new__  # skips NamedTuple's Python-level __new__: there are hundreds of thousands
    by_type: dict[int, int] = {}
    for offset, index, rtype, addend in _relocations(entries, rela, elf64, little, name, filename):
        known = known_types.get(rtype)
        if known is None:
            if not decoded:
                continue  # .debug_frame and .debug_line also hold code relocations
            raise CubinError(
                f"relocation type {rtype} at {target}+0x{offset:x} is not a CUDA data relocation",
                where=filename,
            )
        size = known[1]
        by_type[rtype] = by_type.get(rtype, 0) + 1
        if offset + size > limit:
            raise CubinError(f"relocation at {target}+0x{offset:x} runs past the section", where=filename)
        if not 0 <= index < count:
            raise CubinError(
                f"relocation at {target}+0x{offset:x} names symbol {index}, past the symbol table",
                where=filename,
            )
        explicit = addend is not None
        if addend is None:
            addend = _SIGNED[size].unpack_from(raw, offset)[0]
        base = values[index]
        value = (base + addend) & _MASKS[size]
        if base or explicit:  # else the field already holds the value (an implicit addend, a symbol at 0)
            if data is None:
                data = bytearray(raw)
            _UNSIGNED[size].pack_into(data, offset, value)
        key = (index, addend)
        found = symbols.get(key)
        if found is None or found.value != value:
            found = symbols[key] = symbol(names[index], addend, value)
        append(new_reloc(reloc, (offset, size, found)))
        if offset < last:
            in_order = False
        last = offset
    if not in_order:
        relocs.sort(key=_offset_of)
    return (raw if data is None else bytes(data)), relocs, by_type, {key[0] for key in symbols}


#: Per relocation width: the little-endian field read signed (an implicit addend), written
#: unsigned, and its mask.
_SIGNED = {4: struct.Struct("<i"), 8: struct.Struct("<q")}
_UNSIGNED = {4: struct.Struct("<I"), 8: struct.Struct("<Q")}
_MASKS = {4: 0xFFFFFFFF, 8: 0xFFFFFFFFFFFFFFFF}
_offset_of = operator.itemgetter(0)


def register_map(info: DebugInfo) -> list[FunctionRegisters] | None:
    """ptxas's register map of the cubin :func:`read_cubin` read into ``info`` (None: not a
    cubin, or a cubin without one)."""
    module = info.module
    if not isinstance(module, CubinImages) or not module.has_register_map:
        return None
    return module.register_map()


def read_cubin(
    source: str | os.PathLike[str] | bytes | BinaryIO,
    *,
    name: str | None = None,
    only: Collection[str] | None = None,
) -> DebugInfo:
    """The decoded debug info of a cubin (path, bytes or binary stream); ``name`` names it in
    messages. ``only`` names the debug sections to read, as :func:`cubin_images` takes them
    (None: all): the result has only what those hold (no units without ``.debug_info``)."""
    found = cubin_images(source, name=name, only=only)
    if name is None:
        name = str(source) if isinstance(source, (str, os.PathLike)) else "<cubin>"
    info = decode_sections(
        found.images, source="cubin", filename=name, address_size=8 if found.elf_class == 64 else 4
    )
    info.module = found
    info.notes.extend(found.notes)
    images = _line_images(found)
    info._lazy["lines"] = lambda: [p for image in images for p in read_line_programs(image)]
    return info


def _line_images(found: CubinImages) -> list[SectionImage]:
    """The sections of ``found`` that hold line-number programs, in the order ``lines`` has them."""
    images = (found.images.get(".debug_line"), found.line_sass, found.tileir_line)
    return [image for image in images if image is not None]


def tileir_texts(info: DebugInfo) -> dict[str, bytes]:
    """The Tile IR texts of a cubin :func:`read_cubin` read into ``info``, by section name
    (empty: not a cubin, or one without any)."""
    module = info.module
    return module.tileir_text if isinstance(module, CubinImages) else {}


def undecoded_sections(info: DebugInfo) -> list[tuple[str, int]]:
    """(name, size) of a cubin's debug sections outside ``.debug_*`` that ptxdwarf does not
    decode (empty: not a cubin, or none)."""
    module = info.module
    return module.undecoded if isinstance(module, CubinImages) else []


def unread_line_images(info: DebugInfo) -> list[SectionImage] | None:
    """The sections whose line-number programs ``info.lines`` holds, of a cubin
    :func:`read_cubin` read whose ``lines`` were not asked for yet (None otherwise): a reader
    that wants each program's rows only for a while reads them from there."""
    module = info.module
    if not isinstance(module, CubinImages) or "lines" not in info._lazy:
        return None
    return _line_images(module)
