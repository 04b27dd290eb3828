"""predicate-count: a subprogram that describes more predicate registers than ptxas ``-g`` survives."""

from __future__ import annotations

from collections.abc import Callable

from ..dwarf.constants import OP
from ..dwarf.expr import Op, decode_expression, register_name
from ..dwarf.model import DIE, Attribute, Unit
from ..errors import PtxDwarfError
from ..ptx.module import PtxFunction, PtxVariable
from .context import LintContext
from .units import BLOCK_FORMS

__all__ = ["PREDICATE_LIMIT", "PredicateCount"]

#: ptxas 13 ``-g`` was seen to crash from this many described predicates of one function
#: on (quirk ``predicate-count``).
PREDICATE_LIMIT = 52

# Codes looked up on every DIE, as plain ints (an enum member's look-up is slower).
_REGX = int(OP.regx)


class PredicateCount:
    """Counts, per subprogram, the ``.pred`` registers its location expressions name."""

    def __init__(
        self,
        ctx: LintContext,
        unit: Unit,
        decode: Callable[[bytes], list[Op]] | None = None,
        declaration: Callable[[PtxFunction, str], PtxVariable | None] | None = None,
    ) -> None:
        self.ctx = ctx
        self.unit = unit
        self._decode = decode or (lambda block: decode_expression(block, unit.address_size))
        """The operations of an expression of ``unit`` (the location checks' decoder shares its answers)."""
        self._declaration = declaration or ctx.symbols.register
        """The declaration of a register of a function (the location checks share their answers)."""
        self._named: dict[int, tuple[DIE, set[str]]] = {}

    def see(self, die: DIE, location: Attribute, sp: DIE | None) -> None:
        """Note the registers ``die``'s single-expression ``location`` names that are predicates of
        ``sp``'s function."""
        if sp is None or die is sp:
            return
        inner = location.innermost
        block = inner.value
        if inner.form not in BLOCK_FORMS or not isinstance(block, bytes):
            return
        f = self.ctx.subprogram_function(sp)
        if f is None:
            return
        names = self.predicates(block, f)
        if names:
            self._named.setdefault(id(sp), (sp, set()))[1].update(names)

    def predicates(self, block: bytes, f: PtxFunction) -> tuple[str, ...]:
        """The ``.pred`` registers of ``f`` that expression ``block`` names by DW_OP_regx."""
        try:
            ops = self._decode(block)
        except PtxDwarfError:
            return ()  # reported by the location checks
        names = []
        for op in ops:
            if op.code != _REGX or not op.args or not isinstance(op.args[0], int):
                continue
            name = register_name(op.args[0])
            declared = self._declaration(f, name) if name is not None else None
            if declared is not None and name is not None and declared.type == ".pred":
                names.append(name)
        return tuple(names)

    def finish(self) -> None:
        """One warning per subprogram at or over :data:`PREDICATE_LIMIT`."""
        for sp, names in self._named.values():
            if len(names) < PREDICATE_LIMIT:
                continue
            f = self.ctx.subprogram_function(sp)
            what = f"{f.kind} {f.name}" if f is not None else "its function"
            self.ctx.add(
                "predicate-count",
                f"the subprogram describes {len(names)} predicate registers of {what} by "
                f"DW_OP_regx: ptxas 13 -g crashes (SIGSEGV) on {PREDICATE_LIMIT} or more when they guard "
                f"branches; describe at most {PREDICATE_LIMIT - 1}",
                die=sp,
            )
