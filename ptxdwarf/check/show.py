"""How the check's differences show values, attributes and places."""

from __future__ import annotations

from collections.abc import Iterable

from ..dwarf.constants import at_name, form_name
from ..dwarf.expr import Op
from ..dwarf.image import Symbol
from ..dwarf.model import DIE, Attribute, DebugInfo

__all__ = ["attribute_names", "attribute_title", "die_and_attribute_at", "show", "show_hex", "show_ops"]


def attribute_title(attr: Attribute) -> str:
    """``DW_AT_name [DW_FORM_string]``: how a difference names the attribute."""
    return f"{at_name(attr.name)} [{form_name(attr.form or 0)}]"


def show_hex(value: object) -> str:
    """A number in hex (a DIE offset); anything else as it prints."""
    return f"0x{value:x}" if isinstance(value, int) else str(value)


def show(value: object) -> str:
    """A value as a difference shows it: numbers in hex, a symbol with its value."""
    if isinstance(value, Symbol):
        return str(value) + (f" (= 0x{value.value:x})" if value.value is not None else "")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"0x{value:x}"
    return str(value)


def show_ops(ops: Iterable[Op]) -> str:
    """An expression's operations, comma-separated."""
    return ", ".join(str(o) for o in ops) or "<empty>"


def attribute_names(die: DIE) -> str:
    """The names of a DIE's attributes without ``DW_AT_``, comma-separated."""
    return ", ".join(at_name(a.name)[6:] for a in die.attributes)


def die_and_attribute_at(info: DebugInfo, offset: int) -> tuple[DIE | None, int | None]:
    """The DIE whose bytes hold ``offset`` and, where it is in one, the attribute."""
    found = info.attribute_at(offset)
    if found is not None:
        return found[0], found[1].name
    return info.die_containing(offset), None
