"""ptxas's rejection of a module told in DWARF terms: the DIE and attribute its line is in."""

from __future__ import annotations

import bisect

from ..cuda.ptxas import PtxasFailed
from ..dwarf.constants import at_name
from ..dwarf.model import DebugInfo
from ..ptx.module import PtxModule
from .show import die_and_attribute_at

__all__ = ["explain_failure"]


def explain_failure(exc: PtxasFailed, module: PtxModule, info: DebugInfo) -> PtxasFailed:
    """``exc`` with the DIE and attribute that made the PTX line ptxas rejected, when it is in a debug section."""
    first = next((m for m in exc.messages if m.severity in ("error", "fatal") and m.line), None)
    if first is None or first.line is None:
        return exc
    for block in module.sections:
        if block.line <= first.line <= block.end_line:
            image = block.image
            image.ensure_lines()
            i = bisect.bisect_left(image.line_numbers, first.line)
            offset = image.line_offsets[i] if i < len(image.line_offsets) else len(image.data)
            where = f"{block.name}+0x{offset:x}"
            if block.name == ".debug_info":
                die, attr = die_and_attribute_at(info, offset)
                if die is not None:
                    where += f", {die.describe()}" + (f", {at_name(attr)}" if attr is not None else "")
            exc.message = f"{exc.message} (in {where})"
            exc.args = (f"{exc.where}: {exc.message}",)
            return exc
    return exc
