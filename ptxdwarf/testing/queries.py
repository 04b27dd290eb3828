"""A module's DWARF (or several modules', one PTX per function) with the lookups tests ask of it.

A name is matched exactly against a DIE's ``DW_AT_name`` or linkage name, or, given as a
compiled pattern (``re.compile(r"\\.axpy$")``), searched in them. A tag is ``"DW_TAG_member"``,
``"member"`` or its code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..dwarf.constants import AT, OP, TAG, AddressClass, at_name, form_name, tag_code, tag_name
from ..dwarf.expr import ExpressionError, Op, decode_expression
from ..dwarf.image import Block, Symbol
from ..dwarf.model import DIE, Attribute, DebugInfo
from ..dwarf.reprs import counted, short

__all__ = ["Name", "Query", "QueryDIE", "QueryLocation", "QueryLocationEntry", "Tag", "query"]

#: A name to look for: exact, or a pattern searched in the name and the linkage names.
Name = str | re.Pattern[str]
#: A tag to look for: ``"DW_TAG_member"``, ``"member"`` or its code.
Tag = str | int

#: The DIEs a function's parameters and variables may be nested in.
_SCOPES = (TAG.lexical_block, TAG.inlined_subroutine)
#: The DIEs a structure's members may be nested in (Rust enums, Ada variant records).
_VARIANTS = (TAG.variant_part, TAG.variant)
#: The DIEs ``type()`` never returns.
_NOT_TYPES = (TAG.subprogram, TAG.variable, TAG.formal_parameter, TAG.member)
#: Operations whose operand is an offset: (code, index of the offset among the operands).
_OFFSET_OPERAND = {OP.fbreg: 0, OP.bregx: 1, OP.plus_uconst: 0, **{OP.breg0 + n: 0 for n in range(32)}}


def _names(die: DIE) -> tuple[Any, ...]:
    return (die.name, die.get(AT.linkage_name), die.get(AT.MIPS_linkage_name))


def _named(die: DIE, name: Name | None) -> bool:
    if name is None:
        return True
    if isinstance(name, str):
        return name in _names(die)
    return any(isinstance(n, str) and name.search(n) for n in _names(die))


def _shown(name: Name | None) -> str:
    if name is None:
        return ""
    return f" {name!r}" if isinstance(name, str) else f" matching /{name.pattern}/"


def _what(tag: Tag | None, name: Name | None) -> str:
    return f"{tag_name(tag_code(tag)) if tag is not None else 'DIE'}{_shown(name)}"


class QueryLocationEntry(NamedTuple):
    """One entry of a location list: the address range (offsets in the function's code as
    the section holds them, or the symbols of PTX text) and the location there."""

    low: int | Symbol
    high: int | Symbol
    location: QueryLocation


@dataclass(frozen=True)
class QueryLocation:
    """A location description as tests ask about it: its operations, register, address,
    offset, the address class of its DIE, and the entries of a location list."""

    attribute: Attribute | None
    address_size: int
    address_class: AddressClass | int | None = None
    """The ``DW_AT_address_class`` of the DIE (None: none)."""
    info: DebugInfo | None = field(default=None, repr=False, compare=False)

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
        """``%r1`` for ``DW_OP_regx %r1`` (or ``DW_OP_bregx``)."""
        for op in self.ops:
            if op.register is not None:
                return op.register
        return None

    @property
    def address(self) -> int | None:
        """The operand of ``DW_OP_addr`` (a constant-bank offset for a kernel parameter in a cubin)."""
        for op in self.ops:
            if op.code == OP.addr and op.args:
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
    def offset(self) -> int | None:
        """The offset of ``DW_OP_fbreg N``, ``DW_OP_bregx R N``, ``DW_OP_bregN N`` or
        ``DW_OP_plus_uconst N`` (the first of them); None without one."""
        for op in self.ops:
            index = _OFFSET_OPERAND.get(op.code)
            if index is not None and len(op.args) > index:
                return int(op.args[index])
        return None

    @property
    def is_list(self) -> bool:
        """True for a location list (``.debug_loc``)."""
        return self.attribute is not None and not isinstance(self.attribute.value, Block)

    @property
    def entries(self) -> list[QueryLocationEntry]:
        """The entries of a location list, base-address entries left out ([] for a single
        expression, or a list that cannot be found)."""
        if not self.is_list or self.info is None or self.attribute is None:
            return []
        value = self.attribute.value
        found = self.info.location_list_at(value) if isinstance(value, int) else None
        if found is None:
            return []
        return [
            QueryLocationEntry(
                low,
                high,
                QueryLocation(Attribute(AT.location, None, expr), self.address_size, self.address_class),
            )
            for low, high, expr in found.entries
            if expr is not None
        ]

    def __str__(self) -> str:
        return ", ".join(str(op) for op in self.ops) or ("<list>" if self.is_list else "<none>")

    def __repr__(self) -> str:
        where = f", {counted(len(self.entries), 'entry', 'entries')}" if self.is_list else ""
        cls = self.address_class
        kind = f", {cls.name if isinstance(cls, AddressClass) else cls}" if cls is not None else ""
        return f"<QueryLocation {short(self, 80)}{where}{kind}>"


class QueryDIE:
    """A DIE with the questions tests ask of it."""

    def __init__(self, info: DebugInfo, die: DIE, address_size: int) -> None:
        self.info = info
        self.die = die
        self._asize = address_size

    def __repr__(self) -> str:
        return f"<QueryDIE {repr(self.die)[5:-1]}>"

    def _wrap(self, die: DIE) -> QueryDIE:
        return QueryDIE(self.info, die, self._asize)

    @property
    def name(self) -> str | None:
        return self.die.name

    @property
    def linkage_name(self) -> str | None:
        """``DW_AT_linkage_name`` (or ``DW_AT_MIPS_linkage_name``), if any."""
        value = self.die.get(AT.linkage_name) or self.die.get(AT.MIPS_linkage_name)
        return value if isinstance(value, str) else None

    @property
    def tag(self) -> str:
        return tag_name(self.die.tag)

    def __getitem__(self, attribute: str) -> Any:
        return self.die[attribute]

    def get(self, attribute: str, default: Any = None) -> Any:
        return self.die.get(attribute, default)

    @property
    def shape(self) -> tuple[tuple[str, str], ...]:
        """The (attribute, form) pairs of the DIE, in order: its abbreviation's shape
        (``(("DW_AT_name", "DW_FORM_string"), ...)``)."""
        return tuple((at_name(a.name), form_name(a.form or 0)) for a in self.die.attributes)

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
        """``DW_AT_location``, decoded."""
        return QueryLocation(self.die.attr(AT.location), self._asize, self.address_class, self.info)

    @property
    def member_offset(self) -> int | None:
        """A member's ``DW_AT_data_member_location``: a constant, or the operand of its
        ``DW_OP_plus_uconst``; None without one."""
        attr = self.die.attr(AT.data_member_location)
        if attr is None:
            return None
        if isinstance(attr.value, int):
            return attr.value
        return QueryLocation(attr, self._asize).offset

    @property
    def type(self) -> QueryDIE | None:
        """The DIE ``DW_AT_type`` refers to."""
        attr = self.die.attr(AT.type)
        if attr is None:
            return None
        target = self.info.target(attr)
        return self._wrap(target) if target is not None else None

    def children(self, tag: Tag | None = None) -> Iterator[QueryDIE]:
        """The DIE's children (of ``tag``)."""
        code = tag_code(tag) if tag is not None else None
        for child in self.die.children:
            if code is None or child.tag == code:
                yield self._wrap(child)

    def find_all(self, tag: Tag | None = None, name: Name | None = None) -> list[QueryDIE]:
        """Every DIE below this one (of ``tag``, named ``name``), depth first."""
        code = tag_code(tag) if tag is not None else None
        return [
            self._wrap(d)
            for d in self.die.iter_subtree()
            if d is not self.die and (code is None or d.tag == code) and _named(d, name)
        ]

    def one(self, tag: Tag | None = None, name: Name | None = None) -> QueryDIE:
        """The one DIE below this one of ``tag`` named ``name``: AssertionError naming what
        was found unless there is exactly one."""
        return _exactly_one(self.find_all(tag, name), _what(tag, name), self.die.describe())

    def none(self, tag: Tag | None = None, name: Name | None = None) -> None:
        """AssertionError naming them if any DIE below this one is of ``tag`` and named ``name``."""
        _assert_none(self.find_all(tag, name), _what(tag, name), self.die.describe())

    def _nested(self, tags: tuple[int, ...], through: tuple[int, ...]) -> Iterator[DIE]:
        """The DIEs of ``tags`` among the children, and among those of the ``through`` DIEs below."""
        stack = list(reversed(self.die.children))
        while stack:
            d = stack.pop()
            if d.tag in tags:
                yield d
            if d.tag in through:
                stack.extend(reversed(d.children))

    def _find(self, tags: tuple[int, ...], through: tuple[int, ...], name: Name, what: str) -> QueryDIE:
        for d in self._nested(tags, through):
            if _named(d, name):
                return self._wrap(d)
        raise LookupError(f"no {what}{_shown(name)} in {self.die.describe()}")

    def parameter(self, name: Name) -> QueryDIE:
        """The formal parameter ``name`` (here, or in a nested block or inlined call)."""
        return self._find((TAG.formal_parameter,), _SCOPES, name, "parameter")

    def variable(self, name: Name) -> QueryDIE:
        """The variable ``name`` here or in a nested block or inlined call."""
        return self._find((TAG.variable,), _SCOPES, name, "variable")

    def member(self, name: Name) -> QueryDIE:
        """The member ``name``, also one inside a ``DW_TAG_variant_part``/``DW_TAG_variant``."""
        return self._find((TAG.member,), _VARIANTS, name, "member")

    @property
    def parameters(self) -> list[QueryDIE]:
        """The formal parameters, in order (the children, not those of inlined calls)."""
        return list(self.children(TAG.formal_parameter))

    @property
    def variables(self) -> list[QueryDIE]:
        """The variables, those of nested lexical blocks included (not of inlined calls)."""
        return [self._wrap(d) for d in self._nested((TAG.variable,), (TAG.lexical_block,))]

    @property
    def members(self) -> list[QueryDIE]:
        """The members, those inside variant parts and variants included, in order."""
        return [self._wrap(d) for d in self._nested((TAG.member,), _VARIANTS)]


def _exactly_one(found: list[QueryDIE], what: str, where: str) -> QueryDIE:
    if len(found) == 1:
        return found[0]
    shown = ", ".join(repr(d)[10:-1] for d in found[:5]) + (", ..." if len(found) > 5 else "")
    raise AssertionError(
        f"expected exactly one {what} in {where}, found {len(found)}" + (f": {shown}" if found else "")
    )


def _assert_none(found: list[QueryDIE], what: str, where: str) -> None:
    if found:
        shown = ", ".join(repr(d)[10:-1] for d in found[:5]) + (", ..." if len(found) > 5 else "")
        raise AssertionError(f"expected no {what} in {where}, found {len(found)}: {shown}")


class Query:
    """The DWARF of one module, or of several (a producer that writes one PTX per function),
    with lookups by tag and name over all of them."""

    def __init__(self, info: DebugInfo, *more: DebugInfo) -> None:
        self.infos = [info, *more]
        self.info = info
        """The first module's DWARF."""

    def __repr__(self) -> str:
        if len(self.infos) == 1:
            return f"<Query {self.info!r}>"
        return f"<Query of {len(self.infos)} modules: {self.info!r}, ...>"

    @property
    def units(self) -> list[QueryDIE]:
        """The root DIE (``DW_TAG_compile_unit``) of every unit, module after module."""
        return [QueryDIE(info, u.die, u.address_size) for info in self.infos for u in info.units if u.die]

    @property
    def unit(self) -> QueryDIE:
        """The one compile unit: AssertionError unless there is exactly one."""
        return _exactly_one(self.units, "unit", self._where())

    def _where(self) -> str:
        names = [info.filename or info.source for info in self.infos]
        return names[0] if len(names) == 1 else f"{len(names)} modules"

    def _unit_dies(self) -> Iterator[QueryDIE]:
        for unit in self.units:
            yield from unit.children()

    def find_all(self, tag: Tag | None = None, name: Name | None = None) -> list[QueryDIE]:
        """Every DIE of every unit (of ``tag``, named ``name``), depth first."""
        return [d for unit in self.units for d in (*_root(unit, tag, name), *unit.find_all(tag, name))]

    def one(self, tag: Tag | None = None, name: Name | None = None) -> QueryDIE:
        """The one DIE of ``tag`` named ``name``: AssertionError naming what was found unless
        there is exactly one."""
        return _exactly_one(self.find_all(tag, name), _what(tag, name), self._where())

    def none(self, tag: Tag | None = None, name: Name | None = None) -> None:
        """AssertionError naming them if any DIE is of ``tag`` and named ``name``."""
        _assert_none(self.find_all(tag, name), _what(tag, name), self._where())

    def function(self, name: Name) -> QueryDIE:
        """The (first) subprogram of a unit whose name or linkage name is ``name``."""
        for d in self._unit_dies():
            if d.die.tag == TAG.subprogram and _named(d.die, name):
                return d
        raise LookupError(f"no function{_shown(name)}")

    def variable(self, name: Name) -> QueryDIE:
        """The (first) module variable ``name``."""
        for d in self._unit_dies():
            if d.die.tag == TAG.variable and _named(d.die, name):
                return d
        raise LookupError(f"no module variable{_shown(name)}")

    def type(self, name: Name) -> QueryDIE:
        """The first type named ``name``."""
        for d in self.find_all(name=name):
            if d.die.tag not in _NOT_TYPES:
                return d
        raise LookupError(f"no type{_shown(name)}")

    @property
    def functions(self) -> list[QueryDIE]:
        """The subprograms of the units, in order."""
        return [d for d in self._unit_dies() if d.die.tag == TAG.subprogram]

    @property
    def variables(self) -> list[QueryDIE]:
        """The module variables of the units, in order."""
        return [d for d in self._unit_dies() if d.die.tag == TAG.variable]


def _root(unit: QueryDIE, tag: Tag | None, name: Name | None) -> list[QueryDIE]:
    """``[unit]`` when the unit's root DIE itself is of ``tag`` and named ``name``."""
    ok = (tag is None or unit.die.tag == tag_code(tag)) and _named(unit.die, name)
    return [unit] if ok else []


def query(*infos: DebugInfo | Iterable[DebugInfo]) -> Query:
    """One or more modules' DWARF (from :func:`ptxdwarf.read`, :func:`ptxdwarf.cuda.read_cubin`,
    a builder, ``CompiledCubin.debug_info().info``; or an iterable of them, such as one per
    function) as a :class:`Query`."""
    flat = [i for item in infos for i in ([item] if isinstance(item, DebugInfo) else item)]
    if not flat:
        raise ValueError("query() needs at least one module's debug info")
    return Query(*flat)
