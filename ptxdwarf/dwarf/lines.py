"""``.debug_line``: line-number programs (versions 2 to 4) read into their rows.

ptxas writes a version 2 program per module from ``.file``/``.loc`` (version 3 from ptxas
13.5 on, with ``DW_LNS_set_prologue_end``) and extends it the
way elfutils' libdw reads it: the header may end with 4 more bytes, an offset into
``.debug_str`` for the function names of inlined code (llvm-dwarfdump warns of "unknown
data in line table prologue" there), and two extended opcodes carry the inline context,
``DW_LNE_NVIDIA_inlined_call`` (0x90: the row, 1-based, of the call, and a function
name's ``.debug_str`` offset) and ``DW_LNE_NVIDIA_set_function_name`` (0x91: the name).
ptxdwarf writes no ``.debug_line``; check compares the file table with ``.file``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

from .._native import twin
from ..errors import DwarfError
from .forms import read_sleb, read_uleb
from .image import SectionImage
from .reprs import counted, short

__all__ = [
    "DW_LNE_NVIDIA_inlined_call",
    "DW_LNE_NVIDIA_set_function_name",
    "LineFiles",
    "LineProgram",
    "LineRow",
    "LineTable",
    "PtxSourceRow",
    "SourceLine",
    "line_files",
    "line_starts",
    "read_line_programs",
]

DW_LNE_NVIDIA_inlined_call = 0x90
DW_LNE_NVIDIA_set_function_name = 0x91


class LineRow(NamedTuple):
    """One row of the line table.

    ``address`` is as relocated (a cubin) or as written; ``symbol`` names what the
    sequence's ``DW_LNE_set_address`` was relocated against (the function), if anything.
    ``context`` is the 1-based row of the call this row's code was inlined at (0: not
    inlined) and ``function_name`` the ``.debug_str`` offset of the inlined function's name
    (None: none given), both from NVIDIA's extended opcodes. ``prologue_end`` and
    ``epilogue_begin`` are DWARF 3's flags (ptxas 13.5 writes version 3 and sets the first).
    """

    address: int
    file: int
    line: int
    column: int
    is_stmt: bool
    end_sequence: bool = False
    symbol: str | None = None
    context: int = 0
    function_name: int | None = None
    prologue_end: bool = False
    epilogue_begin: bool = False

    def __repr__(self) -> str:
        flags = [
            name
            for name, on in (
                ("is_stmt", self.is_stmt),
                ("end_sequence", self.end_sequence),
                ("prologue_end", self.prologue_end),
                ("epilogue_begin", self.epilogue_begin),
            )
            if on
        ]
        symbol = f" {short(self.symbol)}" if self.symbol is not None else ""
        context = f", context {self.context}" if self.context else ""
        return (
            f"<LineRow 0x{self.address:x}{symbol}: file {self.file} line {self.line} column {self.column}"
            f"{context}{''.join(', ' + f for f in flags)}>"
        )


@dataclass
class LineProgram:
    """One line-number program: its header, file table and rows."""

    offset: int
    version: int
    minimum_instruction_length: int = 1
    default_is_stmt: bool = True
    line_base: int = 0
    line_range: int = 1
    opcode_base: int = 1
    directories: list[bytes] = field(default_factory=list)
    files: list[tuple[bytes, int, int, int]] = field(default_factory=list)
    """(name, directory index, modification time, length) of each file, 1-based by position."""
    str_offset: int | None = None
    """NVIDIA: the ``.debug_str`` offset the function names of this program are relative to."""
    rows: list[LineRow] = field(default_factory=list)
    length: int = 0
    """The unit's bytes, its length field included."""
    section: str = ".debug_line"
    """``.debug_line`` (source lines), or ``.nv_debug_line_sass`` (lines of the PTX text ptxas
    compiled, kept in ``.nv_debug_ptx_txt``, for each SASS address)."""

    def path(self, number: int) -> str | None:
        """The path of file ``number`` (1-based), its directory joined; None if there is none."""
        if not 1 <= number <= len(self.files):
            return None
        name, directory, _, _ = self.files[number - 1]
        text = name.decode("utf-8", "surrogateescape")
        if 1 <= directory <= len(self.directories) and not text.startswith("/"):
            return self.directories[directory - 1].decode("utf-8", "surrogateescape") + "/" + text
        return text

    def directory(self, number: int) -> str:
        """The directory of file ``number`` ("" for none, the compilation directory)."""
        if not 1 <= number <= len(self.files):
            return ""
        index = self.files[number - 1][1]
        if not 1 <= index <= len(self.directories):
            return ""
        return self.directories[index - 1].decode("utf-8", "surrogateescape")

    def call_sites(self) -> list[int | None]:
        """For each row, the index in :attr:`rows` of the row it was inlined at (None: not
        inlined, or a context past its sequence). ptxas counts ``context`` from 1 at the
        first row of the row's sequence (measured: each call site is the row of the line the
        PTX's ``inlined_at`` names)."""
        return call_sites(self.rows)

    def __repr__(self) -> str:
        return (
            f"<LineProgram {self.section} at 0x{self.offset:x} v{self.version}: "
            f"{counted(len(self.files), 'file')}, {counted(len(self.rows), 'row')}>"
        )


def call_sites(rows: list[LineRow]) -> list[int | None]:
    """:meth:`LineProgram.call_sites` of a program whose rows are ``rows``."""
    return [at for _row, at in with_call_sites(rows)]


def with_call_sites(rows: Iterable[LineRow]) -> Iterator[tuple[LineRow, int | None]]:
    """Each of a program's ``rows`` with its call site (see :meth:`LineProgram.call_sites`)."""
    start = 0
    for i, row in enumerate(rows):
        at = start + row.context - 1
        yield row, at if row.context and start <= at < i else None
        if row.end_sequence:
            start = i + 1


class LineOpcodes(NamedTuple):
    """Where the rows of one line-number program come from: its opcodes ``data[start:end]``,
    the operand counts of its standard opcodes, and what the address at an offset of ``data``
    was relocated against."""

    data: bytes
    start: int
    end: int
    lengths: list[int]
    symbols: dict[int, str]

    def rows(self, program: LineProgram) -> list[LineRow]:
        """The rows these opcodes of ``program`` make; DwarfError where they cannot be read."""
        with cut_short(program.offset):
            return _rows(LineRow, self.data, self.start, self.end, program, self.lengths, self.symbols)


@dataclass(frozen=True, slots=True)
class SourceLine:
    """Where one row of ``.debug_line`` puts its code: the function (the symbol of its
    sequence), the address, the file's path and the line and column; ``end``: where the row's
    code ends (the next row's address in its sequence: ``end == address`` for a row with no
    instruction of its own). For inlined code, ``inlined`` names the inlined function and
    ``inlined_at`` is the call site (file, line, column) the row's context names."""

    function: str | None
    address: int
    file: str | None
    line: int
    column: int
    inlined: str | None = None
    end: int = -1
    inlined_at: tuple[str | None, int, int] | None = None

    @property
    def has_code(self) -> bool:
        """Whether the row covers an instruction (its code ends after it starts)."""
        return self.end > self.address

    def __repr__(self) -> str:
        function = repr(short(self.function)) if self.function is not None else None
        file = repr(short(self.file)) if self.file is not None else None
        inlined = f", inlined={short(self.inlined)!r}" if self.inlined is not None else ""
        return (
            f"SourceLine(function={function}, address=0x{self.address:x}, file={file}, "
            f"line={self.line}, column={self.column}{inlined})"
        )


@dataclass(frozen=True, slots=True)
class PtxSourceRow:
    """One piece of the join of ``.nv_debug_line_sass`` with ``.debug_line``: the SASS code
    of ``function`` from ``address`` to ``end`` came from PTX line ``ptx_line`` and belongs to
    source row ``source``."""

    function: str | None
    address: int
    end: int
    ptx_line: int
    source: SourceLine

    def __repr__(self) -> str:
        return (
            f"<PtxSourceRow PTX line {self.ptx_line} -> {short(self.source.file)}:{self.source.line} "
            f"[0x{self.address:x}, 0x{self.end:x})>"
        )


class LineTable:
    """The rows of a cubin's line programs, with the questions tests ask of them.

    ``programs`` are those of ``.debug_line`` (source lines), ``ptx_programs`` those of
    ``.nv_debug_line_sass`` (lines of the PTX text ptxas compiled, for the same SASS
    addresses): :meth:`ptx_rows` joins the two by address."""

    def __init__(
        self,
        programs: list[LineProgram],
        names: Callable[[int], str | None] | None = None,
        ptx_programs: list[LineProgram] | None = None,
    ) -> None:
        self.programs = programs
        self.ptx_programs = ptx_programs or []
        self._names = names or (lambda _offset: None)
        self._rows: list[SourceLine] | None = None

    def __repr__(self) -> str:
        rows = sum(len(p.rows) for p in self.programs)
        return f"<LineTable {counted(len(self.programs), 'program')}, {counted(rows, 'row')}>"

    def __iter__(self) -> Iterator[SourceLine]:
        """Every row that starts code (not the end of a sequence), in table order."""
        if self._rows is None:
            self._rows = list(self._read())
        return iter(self._rows)

    def _read(self) -> Iterator[SourceLine]:
        for p in self.programs:
            rows = p.rows
            sites = call_sites(rows)
            for i, row, end in _spans_indexed(rows):
                inlined = (
                    self._names(row.function_name) if row.context and row.function_name is not None else None
                )
                at = sites[i]
                site = rows[at] if at is not None else None
                yield SourceLine(
                    row.symbol,
                    row.address,
                    p.path(row.file),
                    row.line,
                    row.column,
                    inlined,
                    end,
                    (p.path(site.file), site.line, site.column) if site is not None else None,
                )

    def functions(self) -> list[str]:
        """The functions the table has rows for, in table order."""
        return list(dict.fromkeys(r.function for r in self if r.function is not None))

    def lines_of(self, function: str) -> list[SourceLine]:
        """The rows of ``function``'s code, by address."""
        return sorted((r for r in self if r.function == function), key=lambda r: r.address)

    def addresses_of(self, line: int, file: str | None = None) -> list[tuple[str | None, int]]:
        """(function, address) of each row of ``line`` (of a file whose path ends with
        ``file``, when given)."""
        return [
            (r.function, r.address)
            for r in self
            if r.line == line and (file is None or (r.file or "").endswith(file))
        ]

    def line_at(self, function: str, address: int) -> SourceLine | None:
        """The row whose code holds ``address`` of ``function`` (what a debugger shows there)."""
        for r in self:
            if r.function == function and r.address <= address < r.end:
                return r
        return None

    def ptx_rows(self) -> list[PtxSourceRow]:
        """The join of ``.nv_debug_line_sass`` with ``.debug_line``: each SASS address range
        that one PTX line and one source row share, by function and address."""
        source: dict[str | None, list[SourceLine]] = {}
        for r in self:
            if r.has_code:
                source.setdefault(r.function, []).append(r)
        starts: dict[str | None, list[int]] = {}
        for function, rows in source.items():
            rows.sort(key=lambda r: r.address)
            starts[function] = [r.address for r in rows]
        out: list[PtxSourceRow] = []
        for p in self.ptx_programs:
            for _, row, end in _spans_indexed(p.rows):
                if end <= row.address or not row.line:
                    continue
                rows = source.get(row.symbol, [])
                i = bisect.bisect_right(starts.get(row.symbol, []), row.address) - 1
                for r in rows[max(i, 0) :]:
                    if r.address >= end:
                        break
                    low, high = max(r.address, row.address), min(r.end, end)
                    if low < high:
                        out.append(PtxSourceRow(row.symbol, low, high, row.line, r))
        out.sort(key=lambda j: (j.function or "", j.address))
        return out

    def source_of(self, ptx_line: int, function: str | None = None) -> list[SourceLine]:
        """The source rows the SASS code of PTX line ``ptx_line`` belongs to (of ``function``,
        when given), each once, by address."""
        seen: dict[int, SourceLine] = {}
        for j in self.ptx_rows():
            if j.ptx_line == ptx_line and (function is None or j.function == function):
                seen.setdefault(id(j.source), j.source)
        return sorted(seen.values(), key=lambda r: (r.function or "", r.address))

    def ptx_lines_of(self, line: int, file: str | None = None, function: str | None = None) -> list[int]:
        """The PTX lines whose SASS code belongs to source ``line`` (of a file whose path ends
        with ``file``; of ``function``), in order."""
        return sorted(
            {
                j.ptx_line
                for j in self.ptx_rows()
                if j.source.line == line
                and (file is None or (j.source.file or "").endswith(file))
                and (function is None or j.function == function)
            }
        )


def _spans_indexed(rows: list[LineRow]) -> Iterator[tuple[int, LineRow, int]]:
    """Each row of a program that does not end a sequence, with its index and where its code
    ends: the next row's address (its own for a last row that ends no sequence)."""
    for i, row in enumerate(rows):
        if row.end_sequence:
            continue
        yield i, row, rows[i + 1].address if i + 1 < len(rows) else row.address


@dataclass
class LineFiles:
    """Of one line-program unit: the include directories, the file entries (name, directory
    index, modification time, length) and the file numbers its rows use."""

    directories: list[bytes] = field(default_factory=list)
    files: list[tuple[bytes, int, int, int]] = field(default_factory=list)
    used: set[int] = field(default_factory=set)

    def __repr__(self) -> str:
        return f"<LineFiles {counted(len(self.files), 'file')}, {len(self.used)} used>"

    def path(self, number: int) -> str | None:
        """The path of file ``number`` (1-based), its directory joined; None if there is none."""
        return LineProgram(0, 2, directories=self.directories, files=self.files).path(number)


def line_files(data: bytes) -> LineFiles:
    """The file table and used file numbers of the first unit of ``data``; DwarfError if the
    unit is cut short or not version 2 to 4."""
    program = _read_program(data, 0, {})
    return LineFiles(program.directories, program.files, {row.file for row in program.rows})


def read_line_programs(image: SectionImage) -> list[LineProgram]:
    """Every line-number program of a ``.debug_line`` image, in section order; DwarfError
    naming the offset where one cannot be read."""
    programs = []
    for program, opcodes in iter_line_programs(image):
        program.rows = opcodes.rows(program)
        programs.append(program)
    return programs


def iter_line_programs(image: SectionImage) -> Iterator[tuple[LineProgram, LineOpcodes]]:
    """Each line-number program of a ``.debug_line`` image, in section order, without its
    rows, and the opcodes that make them. The next program's header is read when it is asked
    for: a caller that reads each program's rows (:meth:`LineOpcodes.rows`) before asking for
    the next meets the errors of the section in the order :func:`read_line_programs` does
    (DwarfError naming the offset where a program cannot be read)."""
    data = image.data
    symbols = {r.offset: r.symbol.name for r in image.relocs}
    pos = 0
    content = len(data.rstrip(b"\0"))  # zeros after the last unit are padding
    while pos < content:
        with cut_short(pos):
            program, start, end, lengths = _header(data, pos)
        program.section = image.name
        yield program, LineOpcodes(data, start, end, lengths, symbols)
        pos += program.length


@contextmanager
def cut_short(offset: int) -> Iterator[None]:
    """Reading the line-number program at ``offset``: an index or value error of the reading
    is a DwarfError saying the program is cut short."""
    try:
        yield
    except (IndexError, ValueError) as exc:
        raise DwarfError(
            f"line-number program cut short ({exc})", section=".debug_line", offset=offset
        ) from None


def _cstr(data: bytes, pos: int, end: int) -> tuple[bytes, int]:
    stop = data.index(0, pos, end)
    return data[pos:stop], stop + 1


def _read_program(data: bytes, offset: int, symbols: dict[int, str]) -> LineProgram:
    with cut_short(offset):
        program, start, end, lengths = _header(data, offset)
    program.rows = LineOpcodes(data, start, end, lengths, symbols).rows(program)
    return program


def _header(data: bytes, offset: int) -> tuple[LineProgram, int, int, list[int]]:
    """The program at ``offset`` without its rows, where its opcodes start and end, and the
    operand counts of its standard opcodes."""
    length = int.from_bytes(data[offset : offset + 4], "little")
    version = int.from_bytes(data[offset + 4 : offset + 6], "little")
    unit_end = offset + 4 + length
    if length == 0xFFFFFFFF or not 2 <= version <= 4 or unit_end > len(data) or length < 12:
        raise DwarfError(
            f"a line-number program of version {version} and {length} bytes cannot be read",
            section=".debug_line",
            offset=offset,
        )
    header_length = int.from_bytes(data[offset + 6 : offset + 10], "little")
    program_start = offset + 10 + header_length
    if program_start > unit_end:
        raise DwarfError("the header runs past the unit", section=".debug_line", offset=offset)
    pos = offset + 10
    p = LineProgram(offset, version, length=4 + length)
    p.minimum_instruction_length = data[pos]
    pos += 2 if version >= 4 else 1  # maximum_operations_per_instruction from version 4
    p.default_is_stmt = bool(data[pos])
    p.line_base = int.from_bytes(data[pos + 1 : pos + 2], "little", signed=True)
    p.line_range = data[pos + 2]
    p.opcode_base = data[pos + 3]
    pos += 4
    lengths = list(data[pos : pos + p.opcode_base - 1])
    pos += max(p.opcode_base - 1, 0)
    while data[pos]:
        name, pos = _cstr(data, pos, program_start)
        p.directories.append(name)
    pos += 1
    while data[pos]:
        name, pos = _cstr(data, pos, program_start)
        d, pos = read_uleb(data, pos)
        t, pos = read_uleb(data, pos)
        n, pos = read_uleb(data, pos)
        p.files.append((name, d, t, n))
    pos += 1
    if pos == program_start - 4:
        p.str_offset = int.from_bytes(data[pos:program_start], "little")
    return p, program_start, unit_end, lengths


@twin("cubin")
def _rows(  # noqa: C901 - one dispatch over the line program's opcodes: a call per opcode costs time per row
    kind: type[LineRow],
    data: bytes,
    pos: int,
    end: int,
    p: LineProgram,
    lengths: list[int],
    symbols: dict[int, str],
) -> list[LineRow]:
    """The rows (as ``kind``) the opcodes ``data[pos:end]`` of program ``p`` make; ``lengths``
    are the operand counts of its standard opcodes, ``symbols`` what the address at an offset
    of ``data`` was relocated against."""
    rows: list[LineRow] = []
    base = p.str_offset or 0

    def reset() -> tuple[int, int, int, int, bool, str | None, int, int | None]:
        return 0, 1, 1, 0, p.default_is_stmt, None, 0, None

    address, file, line, column, is_stmt, symbol, context, name = reset()
    prologue_end = epilogue_begin = False  # each holds for the next row only
    ends: bool | None = None  # what the opcode read made: a row (True: one that ends the sequence)
    opcode_base, line_base, line_range = p.opcode_base, p.line_base, p.line_range
    step = p.minimum_instruction_length
    while pos < end:
        op = data[pos]
        pos += 1
        if op >= opcode_base:
            if line_range == 0:
                raise DwarfError("a special opcode with line_range 0", section=".debug_line", offset=pos - 1)
            adjusted = op - opcode_base
            address += step * (adjusted // line_range)
            line += line_base + adjusted % line_range
            ends = False
        elif op == 0:
            n, pos = read_uleb(data, pos)
            if n == 0 or pos + n > end:
                raise DwarfError("an extended opcode runs past the unit", section=".debug_line", offset=pos)
            sub, operands, pos = data[pos], pos + 1, pos + n
            if sub == 1:  # DW_LNE_end_sequence
                ends = True
            elif sub == 2:  # DW_LNE_set_address
                address = int.from_bytes(data[operands:pos], "little")
                symbol = symbols.get(operands)
            elif sub == DW_LNE_NVIDIA_inlined_call:
                context, at = read_uleb(data, operands)
                value, _ = read_uleb(data, at)
                name = value + base
            elif sub == DW_LNE_NVIDIA_set_function_name:
                value, _ = read_uleb(data, operands)
                name = value + base
        elif op == 1:  # DW_LNS_copy
            ends = False
        elif op == 2:  # DW_LNS_advance_pc
            n, pos = read_uleb(data, pos)
            address += step * n
        elif op == 3:  # DW_LNS_advance_line
            n, pos = read_sleb(data, pos)
            line += n
        elif op == 4:  # DW_LNS_set_file
            file, pos = read_uleb(data, pos)
        elif op == 5:  # DW_LNS_set_column
            column, pos = read_uleb(data, pos)
        elif op == 6:  # DW_LNS_negate_stmt
            is_stmt = not is_stmt
        elif op == 8:  # DW_LNS_const_add_pc
            if line_range == 0:
                raise DwarfError(
                    "DW_LNS_const_add_pc with line_range 0", section=".debug_line", offset=pos - 1
                )
            address += step * ((255 - opcode_base) // line_range)
        elif op == 9:  # DW_LNS_fixed_advance_pc
            address += int.from_bytes(data[pos : pos + 2], "little")
            pos += 2
        elif op == 10 and lengths[9] == 0:  # DW_LNS_set_prologue_end (DWARF 3)
            prologue_end = True
        elif op == 11 and lengths[10] == 0:  # DW_LNS_set_epilogue_begin (DWARF 3)
            epilogue_begin = True
        elif op != 7:  # not DW_LNS_set_basic_block: skip the operands the header gives it
            for _ in range(lengths[op - 1] if op - 1 < len(lengths) else 0):
                _, pos = read_uleb(data, pos)
        if ends is not None:  # the opcode made a row (ending the sequence when True)
            rows.append(
                kind(
                    address,
                    file,
                    line,
                    column,
                    is_stmt,
                    ends,
                    symbol,
                    context,
                    name,
                    prologue_end,
                    epilogue_begin,
                )
            )
            prologue_end = epilogue_begin = False
            if ends:
                address, file, line, column, is_stmt, symbol, context, name = reset()
            ends = None
    return rows


def line_starts(image: SectionImage) -> dict[str, dict[int, int]]:
    """Per function (the symbol a sequence's ``DW_LNE_set_address`` is relocated against), per
    line, the lowest address of a row of that line with an instruction of its own: the row
    after it is at another address or ends the sequence. What :func:`read_line_programs`'
    rows say, read without making them (``.nv_debug_line_sass`` of a large module has
    hundreds of thousands); DwarfError naming the offset where a program cannot be read."""
    starts: dict[str, dict[int, int]] = {}
    for program, op in iter_line_programs(image):
        with cut_short(program.offset):
            _scan_starts(op.data, op.start, op.end, program, op.lengths, op.symbols, starts)
    return {name: lines for name, lines in starts.items() if lines}


@twin("cubin", checkable=False)
def _scan_starts(  # noqa: C901 - one dispatch over the line program's opcodes, run per opcode: kept inline for speed
    data: bytes,
    pos: int,
    end: int,
    p: LineProgram,
    lengths: list[int],
    symbols: dict[int, str],
    starts: dict[str, dict[int, int]],
) -> dict[str, dict[int, int]]:
    """``starts`` with, per function, the lowest address of each line (see :func:`line_starts`)
    of the opcodes ``data[pos:end]`` of program ``p`` (``lengths``: the operand counts of its
    standard opcodes; ``symbols``: what the address at an offset of ``data`` was relocated
    against)."""
    opcode_base, line_range, step = p.opcode_base, p.line_range, p.minimum_instruction_length
    special_address = [0] * 256
    special_line = [0] * 256
    if line_range:
        for op in range(opcode_base, 256):
            special_address[op] = step * ((op - opcode_base) // line_range)
            special_line[op] = p.line_base + (op - opcode_base) % line_range
    address, line = 0, 1
    rows: dict[int, int] | None = None  # the lines of the sequence's function
    # the last row: kept (in the lines of its function, kept_in) when the next is elsewhere
    kept_in: dict[int, int] | None = None
    pending = pending_line = 0
    while pos < end:
        op = data[pos]
        pos += 1
        if op >= opcode_base:
            if not line_range:
                raise DwarfError("a special opcode with line_range 0", section=".debug_line", offset=pos - 1)
            address += special_address[op]
            line += special_line[op]
        elif op == 3:  # DW_LNS_advance_line
            byte = data[pos]
            if byte < 0x80:
                line += byte - 0x80 if byte & 0x40 else byte
                pos += 1
            else:
                n, pos = read_sleb(data, pos)
                line += n
            continue
        elif op == 2:  # DW_LNS_advance_pc
            byte = data[pos]
            if byte < 0x80:
                address += step * byte
                pos += 1
            else:
                n, pos = read_uleb(data, pos)
                address += step * n
            continue
        elif op == 0:
            n, pos = read_uleb(data, pos)
            if n == 0 or pos + n > end:
                raise DwarfError("an extended opcode runs past the unit", section=".debug_line", offset=pos)
            sub, operands, pos = data[pos], pos + 1, pos + n
            if sub == 1:  # DW_LNE_end_sequence: the last row has its instruction
                if kept_in is not None:
                    _keep(kept_in, pending_line, pending)
                address, line, rows, kept_in = 0, 1, None, None
            elif sub == 2:  # DW_LNE_set_address
                address = int.from_bytes(data[operands:pos], "little")
                symbol = symbols.get(operands)
                rows = None if symbol is None else starts.setdefault(symbol, {})
            continue
        elif op == 8:  # DW_LNS_const_add_pc
            if not line_range:
                raise DwarfError(
                    "DW_LNS_const_add_pc with line_range 0", section=".debug_line", offset=pos - 1
                )
            address += step * ((255 - opcode_base) // line_range)
            continue
        elif op == 9:  # DW_LNS_fixed_advance_pc
            address += int.from_bytes(data[pos : pos + 2], "little")
            pos += 2
            continue
        elif op == 4 or op == 5:  # DW_LNS_set_file, DW_LNS_set_column
            _, pos = read_uleb(data, pos)
            continue
        elif op != 1:  # not DW_LNS_copy: no row
            if op not in (6, 7):  # skip the operands the header gives the opcode
                for _ in range(lengths[op - 1] if op - 1 < len(lengths) else 0):
                    _, pos = read_uleb(data, pos)
            continue
        if kept_in is not None and pending != address:
            _keep(kept_in, pending_line, pending)
        kept_in, pending, pending_line = rows, address, line
    if kept_in is not None:
        _keep(kept_in, pending_line, pending)
    return starts


def _keep(lines: dict[int, int], line: int, address: int) -> None:
    """Record ``address`` for ``line`` unless a lower one is there."""
    seen = lines.get(line)
    if seen is None or address < seen:
        lines[line] = address
