"""The repairs of PTX debug info that :func:`ptxdwarf.fix.fix` runs, and source-path remapping.

Each repair is a function of :mod:`.text` (the text around the sections) or :mod:`.sections`
(the sections) registered for the quirks it repairs, with its phase (:mod:`.registry`); the
quirk registry (:mod:`ptxdwarf.cuda.quirks`) names it beside the measured fact and the lint
rule. :func:`remap_paths` rewrites source paths.
"""

from __future__ import annotations

from . import sections, text  # noqa: F401  (they register the repairs)
from .registry import Repair, Repairer, repairs_of
from .remap import parse_remap, remap_path, remap_paths

__all__ = [
    "Repair",
    "Repairer",
    "parse_remap",
    "remap_path",
    "remap_paths",
    "repairs_of",
]
