"""Assertions on a cubin's line table."""

from __future__ import annotations

from collections.abc import Iterable

from ..dwarf.model import DebugInfo
from .compiled import CompiledCubin

__all__ = ["assert_function_lines"]


def assert_function_lines(
    cubin: CompiledCubin | DebugInfo, function: str, lines: Iterable[int], *, file: str | None = None
) -> None:
    """Fail unless the code of ``function`` (its linkage name) maps to exactly the source
    ``lines`` (line 0, code with no line, left out), in a file whose path ends with ``file``
    when given; the message lists what is missing and what is extra."""
    table = cubin.line_table() if isinstance(cubin, CompiledCubin) else cubin.line_table
    rows = table.lines_of(function)
    if not rows:
        known = ", ".join(table.functions()) or "none"
        raise AssertionError(f"no line-table rows for {function} (functions with rows: {known})")
    got = {r.line for r in rows if r.line and (file is None or (r.file or "").endswith(file))}
    want = set(lines)
    if got != want:
        missing, extra = sorted(want - got), sorted(got - want)
        raise AssertionError(f"{function}: lines missing {missing}, lines not expected {extra}")
