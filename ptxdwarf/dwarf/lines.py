"""The file table of a ``.debug_line`` unit (versions 2 to 4) and the file numbers its rows
use: what check compares with the module's ``.file`` directives. ptxas makes this section
from ``.file``/``.loc``; ptxdwarf writes none of it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import DwarfError
from .forms import read_uleb

__all__ = ["LineFiles", "line_files"]


@dataclass
class LineFiles:
    """Of one line-program unit: the include directories, the file entries (name, directory
    index, modification time, length) and the file numbers its rows use (1 is the default)."""

    directories: list[bytes] = field(default_factory=list)
    files: list[tuple[bytes, int, int, int]] = field(default_factory=list)
    used: set[int] = field(default_factory=lambda: {1})

    def path(self, number: int) -> str | None:
        """The path of file ``number`` (1-based), its directory joined; None if there is none."""
        if not 1 <= number <= len(self.files):
            return None
        name, directory, _, _ = self.files[number - 1]
        text = name.decode("utf-8", "surrogateescape")
        if 1 <= directory <= len(self.directories) and not text.startswith("/"):
            return self.directories[directory - 1].decode("utf-8", "surrogateescape") + "/" + text
        return text


def _cstr(data: bytes, pos: int) -> tuple[bytes, int]:
    end = data.index(0, pos)
    return data[pos:end], end + 1


def line_files(data: bytes) -> LineFiles:
    """The file table and used file numbers of the first unit of ``data``; DwarfError if the
    unit is cut short or not version 2 to 4."""
    try:
        return _line_files(data)
    except (IndexError, ValueError) as exc:
        raise DwarfError(f"the first unit is cut short ({exc})", section=".debug_line", offset=0) from None


def _line_files(data: bytes) -> LineFiles:
    unit_end = 4 + int.from_bytes(data[0:4], "little")
    version = int.from_bytes(data[4:6], "little")
    if not 2 <= version <= 4 or unit_end > len(data) or len(data) < 16:
        raise DwarfError(
            f"a unit of version {version} and {unit_end} bytes cannot be read",
            section=".debug_line",
            offset=0,
        )
    header_length = int.from_bytes(data[6:10], "little")
    program = 10 + header_length
    pos = 10 + (6 if version >= 4 else 5)
    opcode_base = data[pos - 1]
    lengths = list(data[pos : pos + opcode_base - 1])
    pos += opcode_base - 1
    out = LineFiles()
    while data[pos]:
        name, pos = _cstr(data, pos)
        out.directories.append(name)
    pos += 1
    while data[pos]:
        name, pos = _cstr(data, pos)
        d, pos = read_uleb(data, pos)
        t, pos = read_uleb(data, pos)
        n, pos = read_uleb(data, pos)
        out.files.append((name, d, t, n))
    pos = program
    while pos < unit_end:
        op = data[pos]
        pos += 1
        if op == 0:  # extended: length, sub-opcode, operands
            n, pos = read_uleb(data, pos)
            pos += n
        elif op == 4:  # DW_LNS_set_file
            f, pos = read_uleb(data, pos)
            out.used.add(f)
        elif op == 2 or op == 5:  # advance_pc, set_column: one ULEB
            _, pos = read_uleb(data, pos)
        elif op == 3:  # advance_line: SLEB
            while data[pos] & 0x80:
                pos += 1
            pos += 1
        elif op == 9:  # fixed_advance_pc: uhalf
            pos += 2
        elif op < opcode_base:
            for _ in range(lengths[op - 1]):
                _, pos = read_uleb(data, pos)
    return out
