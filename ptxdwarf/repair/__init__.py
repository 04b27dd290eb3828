"""Repairs of PTX debug info: :func:`fix` (what lint finds, repaired where ptxas needs it).

Each repair is a function of :mod:`.text` or :mod:`.sections` registered for the quirks
it repairs, with its phase (:mod:`.registry`); the quirk registry
(:mod:`ptxdwarf.cuda.quirks`) names it beside the measured fact and the lint rule. :mod:`.text` repairs the text around the sections, :mod:`.sections` the sections;
:mod:`.fix` runs them. :func:`strip` removes debug information, :func:`remap_paths`
rewrites source paths.
"""

from __future__ import annotations

from . import sections, text  # noqa: F401  (they register the repairs)
from .fixer import FixResult, fix, repairable
from .registry import Repair, Repairer, repairs_of
from .remap import parse_remap, remap_path, remap_paths
from .stripper import strip

__all__ = [
    "FixResult",
    "Repair",
    "Repairer",
    "fix",
    "parse_remap",
    "remap_path",
    "remap_paths",
    "repairable",
    "repairs_of",
    "strip",
]
