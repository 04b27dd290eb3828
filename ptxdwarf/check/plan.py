"""What the comparison asks of the PTX side alone, found before the cubin is there (``check``
finds it while ptxas runs): per unit, the attributes the DIE walk by site (:mod:`.walk`)
looks at; per location list entry, the functions its labels are code of; the functions in
the order of their bodies."""

from __future__ import annotations

from array import array
from typing import NamedTuple

from ..dwarf.constants import AT, FORM
from ..dwarf.image import Block, Symbol
from ..dwarf.model import Attribute, DebugInfo
from ..ptx.module import PtxModule
from ..ptx.symbols import CODE_LABEL, DEPOT, LOCAL, SymbolTable
from .lines import body_lines
from .sites import InfoSites, UnitSites

__all__ = ["ComparisonPlan", "LocalPlaces", "UnitPlan", "code_function", "label_of", "local_places"]

#: The forms of a scalar whose relocation :meth:`~.walk.DieWalk.compare_attribute` holds to the
#: symbol the PTX wrote.
SCALAR_RELOC_FORMS = frozenset({FORM.addr, FORM.data4, FORM.data8, FORM.sec_offset, FORM.strp, FORM.ref_addr})

_LOW_PC, _HIGH_PC = int(AT.low_pc), int(AT.high_pc)

LocalPlaces = tuple[bytes, tuple[tuple[int, int, int], ...]]
"""The bytes of an expression and the place, size and addend of each of its symbols."""


class UnitPlan(NamedTuple):
    """One unit's DIEs that hold a relocation site, for the walk by site. The numbers are in
    arrays: a forked process that reads them copies no page of this one's objects."""

    order: array[int]
    """Their indices (in :class:`~.sites.UnitSites`), in tree order."""
    offsets: array[int]
    """Their offsets in ``.debug_info``."""
    attributes: list[list[tuple[int, str | None, int | None, str, LocalPlaces | None]]]
    """Per DIE of :attr:`order`, each attribute that holds a site: its index; the function of
    the code label it is when all the comparison asks of it is a relocation against that
    function at a nonzero offset (else None); the offset in a section it is when all the
    comparison asks of it is that value (else None); the name of its symbol; and
    :func:`local_places` of its expression, when that is one whose only symbols are
    local-space variables (else None)."""
    pcs: list[tuple[int, int, tuple[object, object]] | None]
    """Per DIE of :attr:`order`, the indices of its first ``DW_AT_low_pc`` and
    ``DW_AT_high_pc`` and what the PTX wrote for them (:func:`label_of`); None without both."""


class ComparisonPlan:
    """What the comparison of ``info`` (a PTX module's DWARF, with its sites ``sites`` and
    symbol table ``symbols``) asks of the PTX side alone."""

    def __init__(self, module: PtxModule, info: DebugInfo, sites: InfoSites, symbols: SymbolTable) -> None:
        self.units = {offset: _unit_plan(unit, symbols) for offset, unit in sites.units.items()}
        """:class:`UnitPlan` by unit offset."""
        self.lists: list[list[tuple[str | None, str | None]]] = [
            [
                (_function_of_value(begin, symbols), _function_of_value(end, symbols))
                for begin, end, _ in loc.entries
            ]
            for loc in info.locations or []
        ]
        """Per location list of ``info``, per entry: the functions its begin and end are code
        labels of (:func:`code_function`; None for a number or any other symbol)."""
        self.bodies = body_lines(module)
        """:func:`~.lines.body_lines` of ``module``."""


def code_function(symbols: SymbolTable, name: str) -> str | None:
    """The function whose code label ``name`` is (None when ``name`` is no code label)."""
    found = symbols.lookup(name)
    return found.function.name if found.kind == CODE_LABEL and found.function is not None else None


def local_places(symbols: SymbolTable, block: Block) -> LocalPlaces | None:
    """The PTX's half of :meth:`~.expect.Expectations.local_only`: the bytes of ``block`` and
    the places, sizes and addends of its symbols, when it has symbols and each is a
    local-space variable; else None."""
    if not block.relocs:
        return None
    for reloc in block.relocs:
        found = symbols.lookup(reloc.symbol.name)
        if found.kind not in (LOCAL, DEPOT) or found.variable is None or found.variable.space != "local":
            return None
    return bytes(block), tuple((r.offset, r.size, r.symbol.addend) for r in block.relocs)


def label_of(attr: Attribute | None) -> object:
    """What the PTX wrote for an address attribute: its symbol, else its value."""
    if attr is None:
        return None
    return attr.relocs[0].symbol if attr.relocs else attr.value


def _function_of_value(value: object, symbols: SymbolTable) -> str | None:
    return code_function(symbols, value.name) if type(value) is Symbol else None


def _unit_plan(unit: UnitSites, symbols: SymbolTable) -> UnitPlan:
    order = sorted(unit.relocated)
    attributes = []
    pcs: list[tuple[int, int, tuple[object, object]] | None] = []
    for i in order:
        attrs = unit.dies[i].attributes
        attributes.append(
            [
                (
                    k,
                    *_what_is_asked(attrs[k], symbols),
                    _symbol_name(attrs[k]),
                    _local_places(attrs[k], symbols),
                )
                for k in unit.relocated[i]
            ]
        )
        low = next((k for k, a in enumerate(attrs) if a.name == _LOW_PC), None)
        high = next((k for k, a in enumerate(attrs) if a.name == _HIGH_PC), None)
        pcs.append(
            None
            if low is None or high is None
            else (low, high, (label_of(attrs[low]), label_of(attrs[high])))
        )
    offsets = array("q", [unit.dies[i].offset for i in order])
    return UnitPlan(array("q", order), offsets, attributes, pcs)


def _local_places(x: Attribute, symbols: SymbolTable) -> LocalPlaces | None:
    """:func:`local_places` of ``x``'s expression (None for any other value)."""
    return local_places(symbols, x.value) if isinstance(x.value, Block) and x.relocs else None


def _symbol_name(x: Attribute) -> str:
    """The name of the symbol of ``x``'s first relocation ("" without one)."""
    return x.relocs[0].symbol.name if x.relocs else ""


def _what_is_asked(x: Attribute, symbols: SymbolTable) -> tuple[str | None, int | None]:
    """Of ``x``, an attribute of the PTX: the function of the code label it is when the
    comparison's only test of it is a relocation against that function at a nonzero offset,
    and the offset in a section it is when the only test is that value
    (:meth:`~.walk.DieWalk.compare_attribute`, :meth:`~.expect.Expectations.expect_symbol`);
    None for each that it is not."""
    if isinstance(x.value, (Attribute, Block, str)) or x.form == FORM.strp:
        return None, None
    if not x.relocs or x.form not in SCALAR_RELOC_FORMS:
        return None, None
    symbol = x.relocs[0].symbol
    if symbol.is_section:
        return None, symbol.addend
    function = code_function(symbols, symbol.name)
    return (function if function != symbol.name else None), None
