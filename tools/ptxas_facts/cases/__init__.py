"""The measurements behind docs/ptxas-facts.md, one :class:`~tools.ptxas_facts.case.Case` each.

Case ids are ``<fact>.<variant>`` where the fact is a quirk of
:mod:`ptxdwarf.cuda.quirks`; plain facts (syntax ptxas takes, rewrites it makes) have
ids of their own (``syntax.*``, ``rewrite.*``, ``header.*``, ``sections.*``). Each
module of this package adds its cases to :data:`CASES` when imported.
"""

from __future__ import annotations

from . import dwarf, files, labels, registers, symbols, values  # noqa: F401  (each adds its cases)
from ._base import CASES

__all__ = ["CASES"]
