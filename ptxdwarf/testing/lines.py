"""Assertions on a cubin's line table: the source lines with code, the source rows a PTX line
became and the PTX lines a source line came from (the join of ``.nv_debug_line_sass`` with
``.debug_line``: :meth:`~ptxdwarf.dwarf.lines.LineTable.ptx_rows`).

A function is its symbol (linkage name), or a compiled pattern searched in it; a file is
matched by the end of its path."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..dwarf.lines import LineTable, SourceLine
from ..dwarf.model import DebugInfo
from .compiled import CompiledCubin

__all__ = [
    "assert_function_lines",
    "assert_lines",
    "assert_no_lines",
    "ptx_lines_of",
    "source_lines",
    "source_of_ptx_line",
]

#: A function to look at: its symbol, or a pattern searched in it.
Function = str | re.Pattern[str]


def _table(cubin: CompiledCubin | DebugInfo) -> LineTable:
    return cubin.line_table() if isinstance(cubin, CompiledCubin) else cubin.line_table


def _is(function: Function | None, symbol: str | None) -> bool:
    if function is None:
        return True
    if symbol is None:
        return False
    return symbol == function if isinstance(function, str) else function.search(symbol) is not None


def _in(file: str | None, path: str | None) -> bool:
    return file is None or (path or "").endswith(file)


def _scope(function: Function | None, file: str | None) -> str:
    what = (
        [f"function {function if isinstance(function, str) else '/' + function.pattern + '/'}"]
        if function
        else []
    )
    return " of ".join([*([f"file {file}"] if file else []), *what]) or "the module"


def source_lines(
    cubin: CompiledCubin | DebugInfo, *, function: Function | None = None, file: str | None = None
) -> set[int]:
    """The source lines with code: of a row that covers at least one instruction (what
    ``nvdisasm -g`` shows beside the SASS), line 0 left out; of ``function``, in ``file``."""
    return {
        r.line
        for r in _table(cubin)
        if r.line and r.has_code and _is(function, r.function) and _in(file, r.file)
    }


def assert_lines(
    cubin: CompiledCubin | DebugInfo,
    lines: Iterable[int],
    *,
    function: Function | None = None,
    file: str | None = None,
    exact: bool = False,
) -> None:
    """Fail unless each of ``lines`` has code (:func:`source_lines`); with ``exact``, unless
    they are exactly the lines with code. The message lists what is missing and what is extra."""
    got, want = source_lines(cubin, function=function, file=file), set(lines)
    missing, extra = sorted(want - got), sorted(got - want) if exact else []
    if missing or extra:
        also = f", lines not expected {extra}" if exact else ""
        raise AssertionError(
            f"{_scope(function, file)}: lines without code {missing}{also} (lines with code: {sorted(got)})"
        )


def assert_no_lines(
    cubin: CompiledCubin | DebugInfo,
    lines: Iterable[int],
    *,
    function: Function | None = None,
    file: str | None = None,
) -> None:
    """Fail if any of ``lines`` has code (:func:`source_lines`), naming those that do."""
    found = sorted(source_lines(cubin, function=function, file=file) & set(lines))
    if found:
        raise AssertionError(f"{_scope(function, file)}: lines with code {found}, expected none of them")


def source_of_ptx_line(
    cubin: CompiledCubin | DebugInfo, ptx_line: int, *, function: Function | None = None
) -> list[SourceLine]:
    """The source rows the SASS of PTX line ``ptx_line`` belongs to (the cubin's
    ``.nv_debug_line_sass`` joined with its ``.debug_line``), by function and address."""
    table = _table(cubin)
    return [r for r in table.source_of(ptx_line) if _is(function, r.function)]


def ptx_lines_of(
    cubin: CompiledCubin | DebugInfo,
    line: int,
    *,
    file: str | None = None,
    function: Function | None = None,
) -> list[int]:
    """The PTX lines whose SASS belongs to source ``line`` (of ``file``, ``function``), in order."""
    return sorted(
        {
            j.ptx_line
            for j in _table(cubin).ptx_rows()
            if j.source.line == line and _in(file, j.source.file) and _is(function, j.function)
        }
    )


def assert_function_lines(
    cubin: CompiledCubin | DebugInfo, function: str, lines: Iterable[int], *, file: str | None = None
) -> None:
    """Fail unless the code of ``function`` (its linkage name) maps to exactly the source
    ``lines`` (line 0, code with no line, left out), in a file whose path ends with ``file``
    when given; the message lists what is missing and what is extra. Every row counts, also
    one without an instruction of its own (:func:`assert_lines` counts only rows with code)."""
    table = _table(cubin)
    rows = table.lines_of(function)
    if not rows:
        known = ", ".join(table.functions()) or "none"
        raise AssertionError(f"no line-table rows for {function} (functions with rows: {known})")
    got = {r.line for r in rows if r.line and _in(file, r.file)}
    want = set(lines)
    if got != want:
        missing, extra = sorted(want - got), sorted(got - want)
        raise AssertionError(f"{function}: lines missing {missing}, lines not expected {extra}")
