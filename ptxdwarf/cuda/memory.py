"""What the registers debug info describes cost ptxas ``-g`` in memory (quirk
``described-registers-memory``), as measured on ptxas 12.0 to 13.5 (docs/ptxas-facts.md,
"Memory of described registers"; ``benchmarks/bench_attach_memory.py`` measures it again).

ptxas ``-g`` keeps a register that a variable describes by a single location live over the
whole scope of the variable, the function for attach's: with ``N`` such registers in a function
of ``W`` register operands it needs about :func:`extra_bytes` more than for the code alone, and
the code alone never needed less than :func:`floor_bytes`. Branches and calls add to it: keeping
the registers live across them costs ptxas 0.2 to 2 KB each per register. A register described by a location
list or in a lexical block that covers only where it lives costs next to nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = [
    "ALLOWANCE",
    "FLOOR",
    "FLOOR_PER_OPERAND",
    "MIN_REGISTERS",
    "PER_REGISTER_JUMP",
    "PER_REGISTER_OPERAND",
    "PER_REGISTER_PAIR",
    "extra_bytes",
    "floor_bytes",
    "register_budgets",
]

#: Bytes per described register per register operand of its function (fitted, ptxas 13.0).
PER_REGISTER_OPERAND = 6.1
#: Bytes per pair of described registers of a function (fitted, ptxas 13.0).
PER_REGISTER_PAIR = 25.0
#: Bytes per described register per branch or call of its function (numba's code at opt=False
#: took up to 2 KB, nvcc's and Triton's a tenth of that; ptxas 13.5).
PER_REGISTER_JUMP = 1000.0
#: The least peak memory ptxas -g was measured to take for any module, in bytes ...
FLOOR = 15_000_000
#: ... and per register operand of the module.
FLOOR_PER_OPERAND = 1000
#: The share of :func:`floor_bytes` attach lets its registers cost by the model: the model fits
#: registers spread over a function within 6%, but attach's choice (the longest-lived, often
#: neighbours) was measured at up to 1.7 times the model, so a third keeps ptxas -g within twice
#: the code's memory.
ALLOWANCE = 1 / 3
#: The registers a function may have described whatever its branches and calls (when the rest of
#: the model allows them): at the most a register was measured to cost in such code (100 KB,
#: numba's at opt=False, whose code alone took 36 MB or more) these cost 26 MB, within the bound.
MIN_REGISTERS = 256


def extra_bytes(described: int, operands: int, jumps: int = 0) -> float:
    """The memory ptxas -g needs beyond the code's own for ``described`` registers described over
    the whole of a function with ``operands`` register operands and ``jumps`` branches and calls."""
    per_register = PER_REGISTER_OPERAND * operands + PER_REGISTER_JUMP * jumps
    return per_register * described + PER_REGISTER_PAIR * described * described


def floor_bytes(operands: int) -> float:
    """At most the peak memory of ptxas -g for a module of ``operands`` register operands
    without debug info (the least measured)."""
    return FLOOR + FLOOR_PER_OPERAND * operands


def register_budgets(code: Mapping[str, tuple[int, int]]) -> dict[str, int]:
    """By function (its register operands and its branches and calls given), the most registers to describe over the whole
    function so that by :func:`extra_bytes` ptxas -g needs at most :data:`ALLOWANCE` of
    :func:`floor_bytes` more than for the code alone; the module's allowance is shared out in
    proportion to what a register costs in each function (the functions of a module add to the
    peak). A function may always have up to :data:`MIN_REGISTERS` described that the model without
    its branches and calls (the part that varies most with the code) allows in the module's whole
    allowance."""
    allowed = floor_bytes(sum(w for w, _ in code.values())) * ALLOWANCE
    per_register = {name: extra_bytes(1, w, jumps) for name, (w, jumps) in code.items()}
    weight = sum(per_register.values())
    budgets: dict[str, int] = {}
    for name, (w, jumps) in code.items():
        share = allowed * per_register[name] / weight if weight else 0.0
        n = _most(share, w, jumps)
        budgets[name] = max(n, min(MIN_REGISTERS, _most(allowed, w, 0)))
    return budgets


def _most(share: float, operands: int, jumps: int) -> int:
    """The most registers whose :func:`extra_bytes` stays within ``share``."""
    b = PER_REGISTER_OPERAND * operands + PER_REGISTER_JUMP * jumps
    n = (-b + math.sqrt(b * b + 4 * PER_REGISTER_PAIR * share)) / (2 * PER_REGISTER_PAIR)
    return max(0, int(n))
