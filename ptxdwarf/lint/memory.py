"""ptxas-memory: debug info describing so many registers over whole functions that ptxas ``-g``
will need far more memory than for the code alone (quirk ``described-registers-memory``)."""

from __future__ import annotations

from collections.abc import Callable

from ..cuda.memory import extra_bytes, floor_bytes
from ..dwarf.constants import OP
from ..dwarf.expr import Op, decode_expression, register_name
from ..dwarf.model import DIE, Attribute, Unit
from ..errors import PtxDwarfError
from ..ptx.module import PtxFunction
from .context import LintContext
from .units import BLOCK_FORMS

__all__ = ["RegisterMemory"]

_REGX = int(OP.regx)
_MB = 1e6


class RegisterMemory:
    """Counts, per subprogram, the registers the code uses that its own variables and parameters
    describe by a single ``DW_OP_regx`` location (live, for ptxas -g, through the whole function)."""

    def __init__(
        self, ctx: LintContext, unit: Unit, decode: Callable[[bytes], list[Op]] | None = None
    ) -> None:
        self.ctx = ctx
        self._decode = decode or (lambda block: decode_expression(block, unit.address_size))
        self._named: dict[int, tuple[DIE, set[str]]] = {}

    def see(self, die: DIE, location: Attribute, sp: DIE | None) -> None:
        """Note the registers ``die``'s single-expression ``location`` names, when ``die`` is a
        child of ``sp``."""
        if sp is None or die.parent is not sp:
            return
        inner = location.innermost
        block = inner.value
        if inner.form not in BLOCK_FORMS or not isinstance(block, bytes):
            return
        try:
            ops = self._decode(block)
        except PtxDwarfError:
            return  # reported by the location checks
        for op in ops:
            if op.code == _REGX and op.args and isinstance(op.args[0], int):
                name = register_name(op.args[0])
                if name is not None:
                    self._named.setdefault(id(sp), (sp, set()))[1].add(name)

    def finish(self) -> None:
        """One warning when the registers described cost more than twice the least memory ptxas -g
        takes for the module's code, at the subprogram that costs most."""
        if not self._named:
            return
        uses = self.ctx.register_uses()
        operands = {key: count for key, (_, count, _) in uses.items()}
        costs: list[tuple[float, DIE, PtxFunction, int]] = []
        for sp, names in self._named.values():
            f = self.ctx.subprogram_function(sp)
            if f is None or id(f) not in uses:
                continue
            used = uses[id(f)][0]  # ptxas keeps no register the code does not use
            count = sum(1 for name in names if f"\0{name}\0" in used)
            costs.append((extra_bytes(count, operands[id(f)], uses[id(f)][2]), sp, f, count))
        floor = floor_bytes(sum(operands.values()))
        total = sum(c[0] for c in costs)
        if not costs or total <= 2 * floor:
            return
        _cost, sp, f, count = max(costs, key=lambda c: c[0])
        self.ctx.add(
            "ptxas-memory",
            f"the debug info describes registers over whole functions ({count} of {f.kind} {f.name}, "
            f"{operands[id(f)]} register operands): ptxas -g keeps each live and will need about "
            f"{total / _MB:.0f} MB more than for the code alone (which takes {floor / _MB:.0f} MB or more); "
            "describe fewer (ptxdwarf attach --max-registers N) or by location lists over where they live",
            die=sp,
        )
