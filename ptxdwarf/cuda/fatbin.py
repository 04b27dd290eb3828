"""Fat binaries: the cubins (and PTX) inside a ``.fatbin`` file or a host object's ``.nv_fatbin``.

A fatbin is a sequence of containers (magic ``0xBA55ED50``, or ``0x466243B1`` for
relocatable device code), each a header and entries: a header of ``size`` bytes
(kind 1 PTX, 2 ELF cubin; SM architecture; flags) followed by the payload, padded
to 8 bytes. Payloads whose flags have bit 15 set are compressed with zstd (nvcc's
default since CUDA 12.8), bit 13 with LZ4 in its block format (CUDA 11 and 12, and
``nvcc --compress-mode=speed``); reading those needs the ``zstandard`` or ``lz4`` package
(``pip install 'ptxdwarf[fatbin]'``) or a fatbin made with ``nvcc --no-compress``.
An entry that cannot be decompressed is yielded with its :attr:`FatbinEntry.error`, and
the entries after it are read.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import CubinError

__all__ = ["FATBIN_MAGICS", "FatbinEntry", "fatbin_of_host_elf", "is_fatbin", "iter_fatbin"]

FATBIN_MAGICS = (0xBA55ED50, 0x466243B1)
_HEADER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIIIIIII")  # kind, ?, header size, padded size, ?, compressed size, ?, minor, arch
_ZSTD = 0x8000
_LZ4 = 0x2000
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_MAX_RAW_SIZE = 1 << 32
_LZ4_MAX_RATIO = 255  # one LZ4 byte (a match-length extension) stands for at most 255 bytes
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FatbinEntry:
    """One entry of a fatbin: a cubin (``kind == "elf"``) or PTX text (``"ptx"``)."""

    kind: str
    arch: str
    offset: int
    payload: bytes
    compressed: bool
    error: CubinError | None = None
    """Why the payload could not be read (then it is empty)."""

    @property
    def label(self) -> str:
        return f"{self.kind} {self.arch} at 0x{self.offset:x}"

    def __repr__(self) -> str:
        how = ", compressed" if self.compressed else ""
        error = ", unreadable" if self.error is not None else ""
        return f"<FatbinEntry {self.label}: {len(self.payload)} bytes{how}{error}>"

    def ptx_text(self) -> str:
        return self.payload.rstrip(b"\0").decode("utf-8", "surrogateescape")


def is_fatbin(data: bytes) -> bool:
    return len(data) >= 16 and struct.unpack_from("<I", data, 0)[0] in FATBIN_MAGICS


def _decompress(payload: bytes, size: int, flags: int, where: str) -> bytes:
    """The payload of a compressed entry, which the header says is ``size`` bytes."""
    if size > _MAX_RAW_SIZE:
        raise CubinError(f"fatbin entry at {where} claims {size} bytes uncompressed (more than 4 GiB)")
    if flags & _ZSTD:
        out = _unzstd(payload, size, where)
    else:
        out = _unlz4(payload, size, where)
    if len(out) != size:
        raise CubinError(f"fatbin entry at {where} decompresses to {len(out)} bytes; its header says {size}")
    return out


def _unzstd(payload: bytes, size: int, where: str) -> bytes:
    if not payload.startswith(_ZSTD_MAGIC):
        raise CubinError(f"fatbin entry at {where} is flagged zstd but holds no zstd frame")
    try:
        import zstandard
    except ImportError:
        raise CubinError(
            f"fatbin entry at {where} is zstd-compressed: pip install 'ptxdwarf[fatbin]' "
            "(the zstandard package), or build it with nvcc --no-compress"
        ) from None
    # Read in chunks, never past the size the header gives: a frame claiming more
    # allocates nothing up front.
    out = bytearray()
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(payload)) as reader:
            while len(out) <= size:
                chunk = reader.read(_CHUNK)
                if not chunk:
                    break
                out += chunk
    except zstandard.ZstdError as exc:
        raise CubinError(f"fatbin entry at {where}: {exc}") from None
    return bytes(out)


def _unlz4(payload: bytes, size: int, where: str) -> bytes:
    if size > _LZ4_MAX_RATIO * len(payload) + 16:
        raise CubinError(
            f"fatbin entry at {where} claims {size} bytes from {len(payload)} LZ4-compressed bytes, "
            f"more than LZ4 can make (at most {_LZ4_MAX_RATIO} to 1)"
        )
    try:
        import lz4.block
    except ImportError:
        raise CubinError(
            f"fatbin entry at {where} is LZ4-compressed: pip install 'ptxdwarf[fatbin]' "
            "(the lz4 package), or build it with nvcc --no-compress"
        ) from None
    try:
        return bytes(lz4.block.decompress(payload, uncompressed_size=size))
    except lz4.block.LZ4BlockError as exc:
        raise CubinError(f"fatbin entry at {where}: LZ4 block: {exc}") from None


def iter_fatbin(data: bytes, *, name: str = "<fatbin>") -> Iterator[FatbinEntry]:
    """Every entry of every container in ``data``."""
    pos = 0
    if not is_fatbin(data):
        raise CubinError("not a fatbin (no fatbin magic)", where=name)
    while pos + _HEADER.size <= len(data):
        magic, _version, header_size, size = _HEADER.unpack_from(data, pos)
        if magic not in FATBIN_MAGICS:
            if any(data[pos:]):
                raise CubinError(f"no fatbin container at offset 0x{pos:x}", where=name)
            return  # zero padding after the last container
        start = pos + header_size
        end = start + size
        if end > len(data) or header_size < _HEADER.size:
            raise CubinError(
                f"fatbin container at 0x{pos:x} claims {size} bytes; the file has {len(data) - start}",
                where=name,
            )
        entry = start
        while entry + _ENTRY.size <= end:
            kind, _unk, hsize, padded, _pad, csize, _u, _minor, arch = _ENTRY.unpack_from(data, entry)
            if hsize == 0:
                break
            if hsize < 64 or entry + hsize + padded > end:
                raise CubinError(f"fatbin entry at 0x{entry:x} runs past its container", where=name)
            flags = struct.unpack_from("<Q", data, entry + 40)[0]
            raw_size = struct.unpack_from("<Q", data, entry + 56)[0]
            where = f"{name}+0x{entry:x}"
            compressed = bool(flags & (_ZSTD | _LZ4))
            error = None
            if compressed:
                try:
                    payload = _decompress(data[entry + hsize : entry + hsize + csize], raw_size, flags, where)
                except CubinError as exc:
                    payload, error = b"", exc
            else:
                payload = data[entry + hsize : entry + hsize + padded]
            kinds = {1: "ptx", 2: "elf", 0x10: "elf"}
            yield FatbinEntry(kinds.get(kind, f"kind{kind}"), f"sm_{arch}", entry, payload, compressed, error)
            entry += hsize + padded
        pos = end
        # containers are 8-byte aligned one after the other
        pos += (-pos) % 8


def fatbin_of_host_elf(data: bytes, *, name: str = "<elf>") -> bytes | None:
    """The ``.nv_fatbin`` section of a host object or executable, if it has one."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(io.BytesIO(data))
        for section_name in (".nv_fatbin", "__nv_relfatbin"):
            section = elf.get_section_by_name(section_name)
            if section is None:
                continue
            if section["sh_offset"] + section["sh_size"] > len(data):
                raise CubinError(f"{section_name} runs past the end of the file", where=name)
            return bytes(section.data())
    except (ELFError, ValueError, KeyError, IndexError, AttributeError, OverflowError) as exc:
        raise CubinError(f"not a readable ELF file ({exc})", where=name) from None
    return None
