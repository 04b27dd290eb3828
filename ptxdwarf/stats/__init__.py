"""How much of a kernel a debugger can show: ``llvm-dwarfdump --statistics`` for cubins,
with ptxas's register map.

:func:`stats` reads a cubin, a fatbin or a host object as it is, and compiles PTX text with
``ptxas -g`` first; per device image it reports each function's variables and parameters:
their scope's code bytes, the share of it their DWARF location covers, and the share where a
debugger can read them (the location joined with ``.nv_debug_info_reg_sass``).
:func:`compare` sets two reports side by side.
"""

from __future__ import annotations

from .comparison import Change, compare
from .report import (
    BUCKETS,
    STATS_FORMAT,
    DwarfTotals,
    FunctionStats,
    ModuleStats,
    StatsReport,
    VariableStats,
)
from .run import stats

__all__ = [
    "BUCKETS",
    "STATS_FORMAT",
    "Change",
    "DwarfTotals",
    "FunctionStats",
    "ModuleStats",
    "StatsReport",
    "VariableStats",
    "compare",
    "stats",
]
