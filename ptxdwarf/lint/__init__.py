"""Static checks of a PTX module's debug sections against the PTX around them.

:func:`lint` reads PTX text (no ptxas needed) and returns a list of
:class:`Finding`, each naming a rule, the PTX line and, where there is one, the DIE.
The rules are the PTX Interoperability guide's requirements (every variable and
parameter has a CUDA address class, registers named by ``DW_OP_regx`` exist, ...)
plus the traps of ptxas 13.0 that can be seen without running it (see
``docs/ptxas-facts.md``): forms ptxas rejects, values it truncates or zeroes,
abbreviation codes it cannot walk. :data:`RULES` lists every rule id with its
default severity and a one-line description.

PTX that cannot be read at all raises :class:`~ptxdwarf.errors.PtxSyntaxError`
(bad input); DWARF that cannot be decoded is a finding of rule ``structure``.

The modules: :mod:`.rules` (the registry), :mod:`.finding`, :mod:`.context` (what
the checks share), and the checks by subject: :mod:`.header` (text, target,
version, files, sections), :mod:`.labels` (symbols and labels), :mod:`.locations`
(address classes, expressions, registers), :mod:`.units` (abbreviations, units,
forms, references, name sets); :mod:`.run` runs them.
"""

from __future__ import annotations

from .finding import Finding
from .rules import ERROR, RULES, WARNING
from .run import lint, lint_module

__all__ = ["ERROR", "RULES", "WARNING", "Finding", "lint", "lint_module"]
