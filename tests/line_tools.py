"""What the independent readers (llvm-dwarfdump, eu-readelf) say of a line-number program.

A row is (address, line, column, file, is_stmt, end_sequence); llvm-dwarfdump's file is the
1-based number, eu-readelf's the file's path (it prints the path when the file changes).
:func:`minimal_elf` puts the bytes of a section other than ``.debug_line`` (a cubin's
``.nv_debug_line_sass``, ``.nv.tileir.debug_line``) into an ELF file as its ``.debug_line``,
for tools that read only that section.
"""

from __future__ import annotations

import re
import struct
from typing import Any

Row = tuple[int, int, int, Any, bool, bool]

_LLVM_ROW = re.compile(r"^0x([0-9a-f]{16})\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s*(.*)$", re.M)
_LLVM_FILE = re.compile(r'^file_names\[\s*\d+\]:\s*\n\s*name: "((?:[^"\\]|\\.)*)"', re.M)
_EU_FILE = re.compile(r"^  (\S.*) \(mtime: \d+, length: \d+\)$")
_EU_ROW = re.compile(r"^\s*(\d+):(\d+)(.*?)\s\d+\s+\d+\s+\d+\s+(0x[0-9a-f]+|0+)\s*$")


def llvm_rows(text: str) -> list[Row]:
    """The rows of ``llvm-dwarfdump --debug-line`` (llvm 14 to 22: the columns after the file
    are ISA, discriminator, from LLVM 17 the op index, then the flags)."""
    return [
        (int(m[0], 16), int(m[1]), int(m[2]), int(m[3]), "is_stmt" in m[4], "end_sequence" in m[4])
        for m in _LLVM_ROW.findall(text)
    ]


def llvm_file_names(text: str) -> list[str]:
    """The file names of ``llvm-dwarfdump --debug-line``, C escapes left as printed."""
    return _LLVM_FILE.findall(text)


def eu_rows(text: str) -> list[Row]:
    """The rows of ``eu-readelf --debug-dump=decodedline``, each with the path of its file
    (``???`` for a file number the table does not have). eu-readelf prints a sequence's end
    as the last address inside it: here it is the first address past it, as DWARF has it."""
    rows: list[Row] = []
    path = None
    for line in text.splitlines():
        m = _EU_FILE.match(line)
        if m is not None:
            path = m.group(1)
            continue
        m = _EU_ROW.match(line)
        if m is not None:
            flags, end = m.group(3), "*" in m.group(3)
            address = int(m.group(4), 16) + end
            rows.append((address, int(m.group(1)), int(m.group(2)), path, "S" in flags, end))
    return rows


def file_path(files: list[dict[str, Any]], number: int) -> str:
    """The path eu-readelf prints for file ``number`` of a file table (``dump --json``'s
    ``files``): its directory before a relative name; ``???`` past the table."""
    if not 0 < number <= len(files):
        return "???"
    directory, name = files[number - 1]["dir"], files[number - 1]["name"]
    return name if name.startswith("/") or not directory else f"{directory}/{name}"


def minimal_elf(sections: dict[str, bytes], machine: int = 190) -> bytes:
    """A little-endian ELF64 relocatable file (``machine``: EM_CUDA) holding ``sections``
    (PROGBITS, in order) and its ``.shstrtab``."""
    names = b"\0"
    name_at: dict[str, int] = {}
    for name in [*sections, ".shstrtab"]:
        name_at[name] = len(names)
        names += name.encode() + b"\0"
    body = b""
    layout = []
    for name, data in [*sections.items(), (".shstrtab", names)]:
        layout.append((name, 64 + len(body), len(data)))
        body += data
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header += struct.pack(
        "<HHIQQQIHHHHHH", 1, machine, 1, 0, 0, 64 + len(body), 0, 64, 0, 0, 64, len(layout) + 1, len(layout)
    )
    headers = bytes(64)
    for name, offset, size in layout:
        kind = 3 if name == ".shstrtab" else 1
        headers += struct.pack("<IIQQQQIIQQ", name_at[name], kind, 0, 0, offset, size, 0, 0, 1, 0)
    return header + body + headers
