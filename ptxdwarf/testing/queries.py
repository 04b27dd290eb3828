"""A module's DWARF with the lookups tests ask of it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..dwarf.constants import AT, TAG, AddressClass, tag_name
from ..dwarf.expr import ExpressionError, Op, decode_expression
from ..dwarf.model import DIE, Attribute, DebugInfo
from ..dwarf.schemas import Block

__all__ = ["Query", "QueryDIE", "QueryLocation", "query"]


@dataclass(frozen=True)
class QueryLocation:
    """A location as tests ask about it."""

    attribute: Attribute | None
    address_size: int

    @property
    def ops(self) -> list[Op]:
        """The operations of a single-expression location ([] for none or a list)."""
        if self.attribute is None or not isinstance(self.attribute.value, Block):
            return []
        try:
            return decode_expression(self.attribute.value, self.address_size)
        except ExpressionError:
            return []

    @property
    def register(self) -> str | None:
        """``%r1`` for ``DW_OP_regx %r1``."""
        for op in self.ops:
            if op.register is not None:
                return op.register
        return None

    @property
    def address(self) -> int | None:
        """The operand of ``DW_OP_addr`` (a constant-bank offset for a kernel parameter in a cubin)."""
        for op in self.ops:
            if op.code == 0x03 and op.args:
                return int(op.args[0])
        return None

    @property
    def symbol(self) -> str | None:
        """The symbol of ``DW_OP_addr`` in PTX text."""
        for op in self.ops:
            if op.symbol is not None:
                return op.symbol.name
        return None

    @property
    def is_list(self) -> bool:
        """True for a location list (``.debug_loc``)."""
        return self.attribute is not None and not isinstance(self.attribute.value, Block)

    def __str__(self) -> str:
        return ", ".join(str(op) for op in self.ops) or ("<list>" if self.is_list else "<none>")


class QueryDIE:
    """A DIE with the questions tests ask of it."""

    def __init__(self, info: DebugInfo, die: DIE, address_size: int) -> None:
        self.info = info
        self.die = die
        self._asize = address_size

    def __repr__(self) -> str:
        return f"<QueryDIE {self.die.describe()}>"

    @property
    def name(self) -> str | None:
        return self.die.name

    @property
    def tag(self) -> str:
        return tag_name(self.die.tag)

    def __getitem__(self, attribute: str) -> Any:
        return self.die[attribute]

    def get(self, attribute: str, default: Any = None) -> Any:
        return self.die.get(attribute, default)

    @property
    def address_class(self) -> AddressClass | int | None:
        """``AddressClass.REG`` (an int for codes outside the spec), or None."""
        value = self.die.address_class
        if value is None:
            return None
        try:
            return AddressClass(value)
        except ValueError:
            return value

    @property
    def location(self) -> QueryLocation:
        return QueryLocation(self.die.attr(AT.location), self._asize)

    @property
    def type(self) -> QueryDIE | None:
        """The DIE ``DW_AT_type`` refers to."""
        attr = self.die.attr(AT.type)
        if attr is None:
            return None
        target = self.info.target(attr)
        return QueryDIE(self.info, target, self._asize) if target is not None else None

    def children(self, tag: int | None = None) -> Iterator[QueryDIE]:
        for child in self.die.children:
            if tag is None or child.tag == tag:
                yield QueryDIE(self.info, child, self._asize)

    def _find(self, tags: tuple[int, ...], name: str, what: str) -> QueryDIE:
        stack = list(reversed(self.die.children))
        while stack:
            d = stack.pop()
            if d.tag in tags and (
                d.name == name or d.get(AT.linkage_name) == name or d.get(AT.MIPS_linkage_name) == name
            ):
                return QueryDIE(self.info, d, self._asize)
            if d.tag in (TAG.lexical_block, TAG.inlined_subroutine):
                stack.extend(reversed(d.children))
        raise LookupError(f"no {what} {name!r} in {self.die.describe()}")

    def parameter(self, name: str) -> QueryDIE:
        """The formal parameter ``name``."""
        return self._find((TAG.formal_parameter,), name, "parameter")

    def variable(self, name: str) -> QueryDIE:
        """The variable ``name`` here or in a nested block."""
        return self._find((TAG.variable,), name, "variable")

    def member(self, name: str) -> QueryDIE:
        return self._find((TAG.member,), name, "member")

    @property
    def parameters(self) -> list[QueryDIE]:
        return list(self.children(TAG.formal_parameter))


class Query:
    """A whole module's DWARF, with lookups by name."""

    def __init__(self, info: DebugInfo) -> None:
        self.info = info

    def __repr__(self) -> str:
        return f"<Query {self.info!r}>"

    def _unit_dies(self) -> Iterator[tuple[DIE, int]]:
        for unit in self.info.units:
            if unit.die is not None:
                for child in unit.die.children:
                    yield child, unit.address_size

    def function(self, name: str) -> QueryDIE:
        """The subprogram whose name or linkage name is ``name``."""
        for die, asize in self._unit_dies():
            if die.tag == TAG.subprogram and name in (
                die.name,
                die.get(AT.linkage_name),
                die.get(AT.MIPS_linkage_name),
            ):
                return QueryDIE(self.info, die, asize)
        raise LookupError(f"no function {name!r}")

    def variable(self, name: str) -> QueryDIE:
        """The module variable ``name``."""
        for die, asize in self._unit_dies():
            if die.tag == TAG.variable and die.name == name:
                return QueryDIE(self.info, die, asize)
        raise LookupError(f"no module variable {name!r}")

    def type(self, name: str) -> QueryDIE:
        """The first type named ``name``."""
        for die in self.info.iter_dies():
            if die.name == name and die.tag not in (
                TAG.subprogram,
                TAG.variable,
                TAG.formal_parameter,
                TAG.member,
            ):
                unit = self.info.unit_of(die)
                return QueryDIE(self.info, die, unit.address_size if unit else 8)
        raise LookupError(f"no type {name!r}")

    @property
    def functions(self) -> list[QueryDIE]:
        return [QueryDIE(self.info, d, a) for d, a in self._unit_dies() if d.tag == TAG.subprogram]


def query(info: DebugInfo) -> Query:
    """``info`` (from :func:`ptxdwarf.read_ptx`, :func:`ptxdwarf.cuda.read_cubin`, a builder) as a :class:`Query`."""
    return Query(info)
