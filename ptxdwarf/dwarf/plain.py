"""Decoded units and location lists as plain values that ``==`` compares by value (the model's
objects compare by identity): how a native decoder is held to its reference."""

from __future__ import annotations

from typing import Any

from .image import Symbol
from .model import DIE, Attribute, LocationList, Unit


def _value(value: Any) -> Any:
    """A value with its type, and a block's relocations (an int and a bool, or bytes and a Block,
    are equal in Python but not in the model)."""
    if isinstance(value, Attribute):
        return ("attribute", _attribute(value))
    return (type(value).__name__, value, getattr(value, "relocs", None))


def _attribute(a: Attribute) -> tuple[Any, ...]:
    relocs = tuple((r.offset, r.size, r.symbol.name, r.symbol.addend, r.symbol.value) for r in a.relocs)
    return (a.name, a.form, _value(a.value), relocs, _value(a.target), a.offset)


def _die(d: DIE) -> tuple[Any, ...]:
    parent = d.parent.offset if d.parent is not None else None
    return (
        d.offset,
        d.size,
        d.tag,
        d.abbrev_code,
        d.has_children,
        parent,
        [c.offset for c in d.children],
        [_attribute(a) for a in d.attributes],
    )


def _symbol(value: Any) -> Any:
    return (value.name, value.addend, value.value) if isinstance(value, Symbol) else value


def units_shape(units: list[Unit] | None, *_args: object) -> Any:
    """Units as plain values: headers, then every DIE depth first with its place in the tree."""
    if units is None:
        return None
    out = []
    for u in units:
        dies = [_die(d) for d in u.iter_dies()]
        table = u.abbrevs.offset if u.abbrevs is not None else None
        head = (u.version, u.address_size, _symbol(u.abbrev_offset), u.offset, u.length, table, u.tail)
        out.append((head, u.open_scopes, dies))
    return out


def lists_shape(
    result: tuple[list[LocationList], int] | None,
    _image: object = None,
    _address_size: object = None,
    _pos: object = None,
    model: list[LocationList] | None = None,
) -> Any:
    """Location lists read back to back as plain values (``model``: the lists whose expression
    objects a reading may reuse; an expression that is the model's own object says so)."""
    if result is None:
        return None
    owned = {id(e[2]) for loc in model or () for e in loc.entries if e[2] is not None}

    def end(v: Any) -> Any:
        return _symbol(v) if isinstance(v, Symbol) else (type(v).__name__, v)

    found, stop = result
    return stop, [
        (loc.offset, [(end(b), end(e), _value(x), id(x) in owned) for b, e, x in loc.entries])
        for loc in found
    ]
