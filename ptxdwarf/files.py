"""Reading and writing the files the commands are given: PTX text byte for byte, and what a
file is when it is not PTX."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import PtxDwarfError

__all__ = ["ELF_MAGIC", "binary_kind", "is_cuda_elf", "load_ptx", "load_text", "require_ptx", "save_text"]

ELF_MAGIC = b"\x7fELF"
_VERSION = re.compile(r"^[ \t]*\.version\b", re.M)
_DEBUG_SECTION = re.compile(r"^[ \t]*\.section[ \t]+\.debug_", re.M)


def load_text(path: str | os.PathLike[str]) -> str:
    """The text of a PTX file; non-ASCII bytes are kept as surrogate escapes."""
    raw = Path(path).read_bytes()
    return raw.decode("utf-8", "surrogateescape")


def save_text(text: str, path: str | os.PathLike[str]) -> None:
    """Write ``text`` to ``path`` as :func:`load_text` read it: the input's bytes come back."""
    Path(path).write_bytes(text.encode("utf-8", "surrogateescape"))


def load_ptx(path: str | os.PathLike[str]) -> str:
    """:func:`load_text` of a file that must be PTX text.

    A cubin, fatbin or host object, or text without a ``.version`` directive (CUDA C++
    source, say), is a :class:`PtxDwarfError` naming the file and what it is instead.
    """
    name = str(path)
    raw = Path(path).read_bytes()
    kind = binary_kind(raw)
    if kind is not None:
        raise PtxDwarfError(f"this is {kind}, not PTX text: use ptxdwarf dump", where=name)
    text = raw.decode("utf-8", "surrogateescape")
    require_ptx(text, name)
    return text


def binary_kind(raw: bytes) -> str | None:
    """What a file that is not text is ("a cubin", "a fatbin", "a host object"), or None."""
    from .cuda.fatbin import is_fatbin

    if raw[:4] == ELF_MAGIC:
        return "a cubin" if is_cuda_elf(raw) else "a host object"
    if is_fatbin(raw):
        return "a fatbin"
    return None


def require_ptx(text: str, name: str) -> None:
    """Text without a ``.version`` directive is not PTX: say so rather than read it as such.
    Text with debug sections and no ``.version`` is a PTX fragment, read as such."""
    if not text or text.isspace() or any(c < " " and c not in "\t\n\r\f\v" for c in text[:4096]):
        return  # empty or binary: the reader says where it stops
    if _VERSION.search(text) is None and _DEBUG_SECTION.search(text) is None:
        raise PtxDwarfError("not PTX (no .version directive)", where=name)


def is_cuda_elf(raw: bytes) -> bool:
    """EM_CUDA (190) in the ELF header."""
    if len(raw) < 20:
        return True  # too short to say: let the cubin reader report it
    little = raw[5] != 2
    machine = int.from_bytes(raw[18:20], "little" if little else "big")
    return machine == 190
