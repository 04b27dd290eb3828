"""DWARF types for PTX declarations: base types named after the PTX types, arrays,
vectors, pointers; and the address class of each state space."""

from __future__ import annotations

import re
from typing import Any

from ..builder import PTX_TYPES, DebugInfoBuilder, Type
from ..dwarf.constants import HANDLE_CLASS, SPACE_CLASS, AddressClass
from ..ptx.module import PtxVariable

#: PTX types the builder's table lacks: name -> (byte size, encoding).
_EXTRA_TYPES = {".bf16": (2, "float"), ".tf32": (4, "float"), ".b128": (16, "unsigned")}
#: Packed types: described as an array of their element.
_PACKED_TYPES = {".f16x2": (".f16", 2), ".bf16x2": (".bf16", 2)}


def _vector_count(v: PtxVariable) -> int | None:
    """``N`` of a ``.vN`` declaration."""
    m = re.search(r"(?<![\w$])\.v(2|4|8)\b", v.text)
    return int(m.group(1)) if m else None


class TypeMap:
    """Base types named after the PTX types, arrays, vectors and pointers, each made once."""

    def __init__(self, dbg: DebugInfoBuilder) -> None:
        self.dbg = dbg
        self.cache: dict[Any, Type] = {}

    def base(self, ptype: str) -> Type:
        """The type named after the PTX type ``ptype`` (KeyError: none)."""
        key = ("base", ptype)
        t = self.cache.get(key)
        if t is not None:
            return t
        if ptype in PTX_TYPES:
            t = self.dbg.named_type(ptype)
        elif ptype in _EXTRA_TYPES:
            size, enc = _EXTRA_TYPES[ptype]
            t = self.dbg.base_type(ptype, byte_size=size, encoding=enc)
        elif ptype in _PACKED_TYPES:
            element, count = _PACKED_TYPES[ptype]
            t = self.dbg.array_type(self.base(element), count)
        elif ptype in HANDLE_CLASS:
            t = self.dbg.handle_type(ptype)
        else:
            raise KeyError(ptype)
        self.cache[key] = t
        return t

    def of(self, v: PtxVariable, *, pointer: bool = False) -> Type | None:
        """The type of a declaration, or None when its PTX type is unknown."""
        if v.type is None:
            return None
        try:
            t = self.base(v.type)
        except KeyError:
            return None
        vector = _vector_count(v)
        if vector:
            t = self.array(t, (vector,))
        dims = tuple(d for d in v.dims if d >= 0)
        if dims and len(dims) == len(v.dims):
            t = self.array(t, dims)
        if pointer and re.search(r"(?<![\w$])\.ptr\b", v.text):
            cls = SPACE_CLASS.get(v.pointer_space or "", AddressClass.GENERIC)
            key = ("ptr", int(cls))
            found = self.cache.get(key)
            if found is None:
                found = self.dbg.pointer_type(self.base(".b8"), address_class=cls)
                self.cache[key] = found
            t = found
        return t

    def array(self, element: Type, dims: tuple[int, ...]) -> Type:
        """An array of ``element`` with ``dims``."""
        key = ("array", id(element), dims)
        t = self.cache.get(key)
        if t is None:
            t = self.dbg.array_type(element, list(dims))
            self.cache[key] = t
        return t
