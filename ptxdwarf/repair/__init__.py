"""Repairs of PTX debug info: :func:`fix` (what lint finds, repaired where ptxas needs it).

Each repair is a function of :mod:`.text` or :mod:`.sections` marked with its phase
(:mod:`.registry`); the quirk registry (:mod:`ptxdwarf.cuda.quirks`) names it beside the
measured fact and the lint rule. :mod:`.text` repairs the text around the sections, :mod:`.sections` the sections;
:mod:`.fix` runs them. :func:`strip` removes debug information, :func:`remap_paths`
rewrites source paths.
"""

from __future__ import annotations

from . import sections, text  # noqa: F401  (they register the repairs)
from .fixer import FixResult, fix, repairable
from .registry import REPAIRERS, Repair, Repairer
from .remap import parse_remap, remap_path, remap_paths
from .stripper import strip

__all__ = [
    "REPAIRERS",
    "FixResult",
    "Repair",
    "Repairer",
    "fix",
    "parse_remap",
    "remap_path",
    "remap_paths",
    "repairable",
    "strip",
]
