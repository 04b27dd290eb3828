"""The type constructors of :class:`~ptxdwarf.builder.DebugInfoBuilder` and the types they make."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ..cuda.quirks import workaround
from ..dwarf.built import BuiltDIE
from ..dwarf.constants import AT, ATE, TAG, AddressClass
from ..dwarf.expr import Op
from ..errors import BuilderError, LayoutError
from ..layout import Field, Layout, array_layout, layout_struct, layout_union, vector_layout
from ..loc import address_class_of
from ._common import (
    _BIT_OFFSET,
    _BIT_SIZE,
    _BYTE_SIZE,
    _DATA_BIT_OFFSET,
    _DATA_MEMBER_LOCATION,
    _DECL_FILE,
    _DECL_LINE,
    _DECLARATION,
    _MEMBER,
    _NAME,
    _TYPE,
    _bad_decl,
    _decl_kind,
)

if TYPE_CHECKING:
    from .core import DebugInfoBuilder


# Operation tuples are shared: the encoder encodes each distinct tuple once.
@functools.lru_cache(maxsize=4096)
def _member_location(offset: int) -> tuple[Op, ...]:
    """``DW_OP_plus_uconst offset``, a DWARF 2 member's location."""
    return (Op.make("plus_uconst", offset),)


_ENCODINGS = {
    "signed": ATE.signed,
    "unsigned": ATE.unsigned,
    "float": ATE.float,
    "boolean": ATE.boolean,
    "bool": ATE.boolean,
    "signed_char": ATE.signed_char,
    "unsigned_char": ATE.unsigned_char,
    "utf": ATE.UTF,
    "address": ATE.address,
    "complex_float": ATE.complex_float,
}

#: C/C++ names of fundamental types: name -> (byte size, encoding). 64-bit host (LP64).
C_TYPES: dict[str, tuple[int, str]] = {
    "bool": (1, "boolean"),
    "char": (1, "signed_char"),
    "signed char": (1, "signed_char"),
    "unsigned char": (1, "unsigned_char"),
    "short": (2, "signed"),
    "unsigned short": (2, "unsigned"),
    "int": (4, "signed"),
    "unsigned int": (4, "unsigned"),
    "long": (8, "signed"),
    "unsigned long": (8, "unsigned"),
    "long long": (8, "signed"),
    "unsigned long long": (8, "unsigned"),
    "__int128": (16, "signed"),
    "unsigned __int128": (16, "unsigned"),
    "__half": (2, "float"),
    "float": (4, "float"),
    "double": (8, "float"),
}

#: Rust's primitive types: name -> (byte size, encoding).
RUST_TYPES: dict[str, tuple[int, str]] = {
    "bool": (1, "boolean"),
    "i8": (1, "signed"),
    "u8": (1, "unsigned"),
    "i16": (2, "signed"),
    "u16": (2, "unsigned"),
    "i32": (4, "signed"),
    "u32": (4, "unsigned"),
    "i64": (8, "signed"),
    "u64": (8, "unsigned"),
    "i128": (16, "signed"),
    "u128": (16, "unsigned"),
    "isize": (8, "signed"),
    "usize": (8, "unsigned"),
    "f16": (2, "float"),
    "f32": (4, "float"),
    "f64": (8, "float"),
    "char": (4, "utf"),
}

#: The PTX fundamental types of the guide's section 1.1: name -> (byte size, encoding).
PTX_TYPES: dict[str, tuple[int, str]] = {
    ".b8": (1, "unsigned"),
    ".b16": (2, "unsigned"),
    ".b32": (4, "unsigned"),
    ".b64": (8, "unsigned"),
    ".s8": (1, "signed"),
    ".s16": (2, "signed"),
    ".s32": (4, "signed"),
    ".s64": (8, "signed"),
    ".u8": (1, "unsigned"),
    ".u16": (2, "unsigned"),
    ".u32": (4, "unsigned"),
    ".u64": (8, "unsigned"),
    ".f16": (2, "float"),
    ".f32": (4, "float"),
    ".f64": (8, "float"),
    ".pred": (1, "boolean"),
}


@dataclass(eq=False)
class Type:
    """A type DIE and what layout needs of it. Made by :class:`DebugInfoBuilder` methods."""

    die: BuiltDIE
    name: str | None
    byte_size: int | None
    align: int
    kind: str
    builder: DebugInfoBuilder = field(repr=False)
    target: Type | None = field(default=None, repr=False)
    layout: Layout | None = field(default=None, repr=False)
    complete: bool = True

    def __repr__(self) -> str:
        return f"<Type {self.kind} {self.name or ''} size={self.byte_size}>"

    @property
    def resolved(self) -> Type:
        """Through typedefs and qualifiers to the type that has the layout."""
        t: Type = self
        while t.kind in ("typedef", "const", "volatile", "restrict") and t.target is not None:
            t = t.target
        return t

    def define(self, members: Sequence[MemberSpec], **layout: Any) -> Type:
        """Give a declared struct or union its members (for self-referencing types)."""
        return self.builder._define(self, members, **layout)


@dataclass(frozen=True)
class Member:
    """A struct or union member with an explicit place (languages with their own layout).

    ``offset`` is the byte offset (of the storage unit, for a bit field); ``bit_offset``
    the bit position from the start of the aggregate.
    """

    name: str | None
    type: Type
    bit_size: int | None = None
    offset: int | None = None
    bit_offset: int | None = None
    align: int | None = None
    line: int | None = None


MemberSpec = tuple[Any, ...] | Member


class TypeConstructors:
    """The type constructors of :class:`~ptxdwarf.builder.DebugInfoBuilder`, and the
    helpers its functions and variables share with them. The attributes below are the
    builder's, set by its ``__init__``."""

    cu: BuiltDIE
    version: int
    address_size: int
    types: list[Type]
    _named: dict[tuple[str, str], Type]
    _index_type: Type | None

    # --- helpers ------------------------------------------------------------

    def _own(self, t: Any, what: str) -> Type:
        if not isinstance(t, Type):
            raise BuilderError(f"{what}: {t!r} is not a Type made by a DebugInfoBuilder")
        if t.builder is not self:
            raise BuilderError(f"{what}: type {t.name or t.kind!r} belongs to another DebugInfoBuilder")
        return t

    def _type(
        self, die: BuiltDIE, name: str | None, size: int | None, align: int, kind: str, **extra: Any
    ) -> Type:
        self.cu.add_child(die)
        t = Type(die, name, size, align, kind, cast("DebugInfoBuilder", self), **extra)
        self.types.append(t)
        return t

    def _decl(self, die: BuiltDIE, line: int | None, file: int | None) -> None:
        for name, value, form in self._decl_items(line, file, die.name or die.tag_str):
            die.put(name, value, form)

    def _decl_items(self, line: int | None, file: int | None, what: str) -> list[tuple[int, Any, str | None]]:
        """The decl_file and decl_line attributes, if there is a line."""
        if line is None:
            return []
        if file is None:
            file = 1
        if not _decl_kind(file) or not _decl_kind(line):
            raise BuilderError(f"{what}: {_bad_decl(file, line)}")
        return [(_DECL_FILE, file, None), (_DECL_LINE, line, None)]

    # --- types --------------------------------------------------------------

    def base_type(self, name: str, *, byte_size: int, encoding: str | int, align: int | None = None) -> Type:
        """A fundamental type: ``encoding`` is ``"signed"``, ``"unsigned"``, ``"float"``,
        ``"boolean"``, ``"signed_char"``, ``"unsigned_char"``, ``"utf"`` or a ``DW_ATE`` code."""
        if byte_size <= 0:
            raise BuilderError(f"base type {name!r}: byte size {byte_size} must be positive")
        code: int | None
        if isinstance(encoding, str):
            code = _ENCODINGS.get(encoding.lower())
            if code is None:
                raise BuilderError(
                    f"base type {name!r}: unknown encoding {encoding!r} (one of {sorted(_ENCODINGS)})"
                )
        else:
            code = int(encoding)
        die = BuiltDIE(TAG.base_type)
        die.put(AT.name, name)
        die.put(AT.encoding, int(code), "data1")
        die.put(AT.byte_size, byte_size)
        return self._type(die, name, byte_size, align or byte_size, "base")

    def named_type(self, name: str, *, language: str = "c") -> Type:
        """A fundamental type by its C (``"unsigned int"``), Rust (``"u32"``) or PTX
        (``".u32"``) name; the same name gives the same type."""
        tables = {"c": C_TYPES, "c++": C_TYPES, "rust": RUST_TYPES, "ptx": PTX_TYPES}
        lang = "ptx" if name.startswith(".") else language.lower()
        table = tables.get(lang)
        if table is None:
            raise BuilderError(f"unknown type language {language!r} (c, rust or ptx)")
        key = ("c" if lang == "c++" else lang, name)
        found = self._named.get(key)
        if found is not None:
            return found
        if name not in table:
            raise BuilderError(f"{name!r} is not a {language} fundamental type")
        size, encoding = table[name]
        t = self.base_type(name, byte_size=size, encoding=encoding)
        self._named[key] = t
        return t

    def unspecified_type(self, name: str = "void") -> Type:
        """``DW_TAG_unspecified_type``, e.g. ``void`` as a return type."""
        die = BuiltDIE(TAG.unspecified_type)
        die.put(AT.name, name)
        return self._type(die, name, None, 1, "unspecified")

    def pointer_type(
        self,
        pointee: Type,
        *,
        address_class: AddressClass | int | None = None,
        byte_size: int | None = None,
        name: str | None = None,
    ) -> Type:
        """A pointer; ``address_class`` is the state space it points into (nvcc writes
        ``GENERIC`` for plain C pointers)."""
        pointee = self._own(pointee, "pointer_type")
        die = BuiltDIE(TAG.pointer_type)
        die.put(AT.type, pointee.die)
        if name is not None:
            die.put(AT.name, name)
        if byte_size is not None:
            die.put(AT.byte_size, byte_size)
        if address_class is not None:
            die.put(AT.address_class, int(address_class_of(address_class, "pointer_type")))
        size = byte_size or self.address_size
        return self._type(die, name, size, size, "pointer", target=pointee)

    def _wrapper(self, tag: int, kind: str, target: Type, name: str | None = None) -> Type:
        target = self._own(target, kind)
        die = BuiltDIE(tag)
        if name is not None:
            die.put(AT.name, name)
        die.put(AT.type, target.die)
        return self._type(die, name, target.byte_size, target.align, kind, target=target)

    def const_type(self, target: Type) -> Type:
        """``const target``."""
        return self._wrapper(TAG.const_type, "const", target)

    def volatile_type(self, target: Type) -> Type:
        """``volatile target``."""
        return self._wrapper(TAG.volatile_type, "volatile", target)

    def typedef(self, name: str, target: Type, *, line: int | None = None) -> Type:
        """``typedef target name``."""
        t = self._wrapper(TAG.typedef, "typedef", target, name)
        self._decl(t.die, line, None)
        return t

    def enum_type(
        self,
        name: str | None,
        enumerators: Iterable[tuple[str, int]] | dict[str, int],
        *,
        underlying: Type | None = None,
        byte_size: int | None = None,
        line: int | None = None,
    ) -> Type:
        """An enumeration; its size is the ``underlying`` type's (default 4 bytes)."""
        if underlying is not None:
            underlying = self._own(underlying, f"enum {name}")
            size = underlying.byte_size or 4
        else:
            size = byte_size or 4
        if byte_size is not None and byte_size != size:
            raise LayoutError(f"enum {name}: byte_size {byte_size} differs from its underlying type's {size}")
        die = BuiltDIE(TAG.enumeration_type)
        if name is not None:
            die.put(AT.name, name)
        die.put(AT.byte_size, size)
        if underlying is not None and self.version >= 3:
            die.put(AT.type, underlying.die)
        self._decl(die, line, None)
        items = enumerators.items() if isinstance(enumerators, dict) else enumerators
        for item_name, value in items:
            child = BuiltDIE(TAG.enumerator)
            child.put(AT.name, item_name)
            child.put(AT.const_value, int(value), "sdata")
            die.add_child(child)
        return self._type(die, name, size, size, "enum", target=underlying)

    def _array_index_type(self) -> Type:
        if self._index_type is None:
            self._index_type = self.base_type("__ARRAY_SIZE_TYPE__", byte_size=8, encoding="unsigned")
        return self._index_type

    def array_type(self, element: Type, dims: int | Sequence[int], *, name: str | None = None) -> Type:
        """An array of ``element``; ``dims`` is a count or a sequence of counts (outermost first)."""
        element = self._own(element, "array_type")
        counts = [dims] if isinstance(dims, int) else list(dims)
        if not counts:
            raise BuilderError("array_type needs at least one dimension")
        if element.byte_size is None:
            raise LayoutError(f"array of {element.name or element.kind}: the element type has no size")
        size, align = array_layout(element.byte_size, element.align, counts)
        index = self._array_index_type()
        die = BuiltDIE(TAG.array_type)
        if name is not None:
            die.put(AT.name, name)
        die.put(AT.type, element.die)
        for count in counts:
            sub = BuiltDIE(TAG.subrange_type)
            sub.put(AT.type, index.die)
            sub.put(AT.count, count)
            die.add_child(sub)
        return self._type(die, name, size, align, "array", target=element)

    def vector_type(self, element: Type, count: int, *, name: str | None = None) -> Type:
        """A native vector (``float4``): a struct of ``x``, ``y``, ``z``, ``w`` members, as
        nvcc describes them, aligned by the guide's odd/even rule."""
        element = self._own(element, "vector_type")
        if element.byte_size is None:
            raise LayoutError(f"vector of {element.name or element.kind}: the element type has no size")
        size, align = vector_layout(element.byte_size, element.align, count)
        if count > 4:
            raise LayoutError(f"vector of {count} elements: at most 4 components (x, y, z, w) can be named")
        type_name = name or f"{element.name or 'vec'}{count}"
        members = [(c, element) for c in "xyzw"[:count]]
        return self._aggregate(
            TAG.structure_type, "struct", type_name, members, size=size, align=align, line=None
        )

    def struct_type(
        self,
        name: str | None,
        members: Sequence[MemberSpec] | None = None,
        *,
        byte_size: int | None = None,
        align: int | None = None,
        packed: bool = False,
        line: int | None = None,
    ) -> Type:
        """A struct. A member is ``(name, type)``, ``(name, type, bit_size)`` or a :class:`Member`.

        Offsets, bit-field placement, size and alignment follow the PTX ABI unless
        ``byte_size``/``align``/``packed`` or :class:`Member` offsets say otherwise.
        ``members=None`` declares the struct; :meth:`Type.define` completes it.
        """
        return self._aggregate(
            TAG.structure_type, "struct", name, members, size=byte_size, align=align, packed=packed, line=line
        )

    def union_type(
        self,
        name: str | None,
        members: Sequence[MemberSpec] | None = None,
        *,
        byte_size: int | None = None,
        align: int | None = None,
        line: int | None = None,
    ) -> Type:
        """A union; members as for :meth:`struct_type`."""
        return self._aggregate(TAG.union_type, "union", name, members, size=byte_size, align=align, line=line)

    def _aggregate(
        self,
        tag: int,
        kind: str,
        name: str | None,
        members: Sequence[MemberSpec] | None,
        *,
        size: int | None = None,
        align: int | None = None,
        packed: bool = False,
        line: int | None = None,
    ) -> Type:
        die = BuiltDIE(tag)
        if name is not None:
            die.put(AT.name, name)
        t = self._type(die, name, None, 1, kind, complete=False)
        self._decl(die, line, None)
        if members is None:
            die.put(AT.declaration, True)
            return t
        return self._define(t, members, byte_size=size, align=align, packed=packed)

    def _define(
        self,
        t: Type,
        members: Sequence[MemberSpec],
        *,
        byte_size: int | None = None,
        align: int | None = None,
        packed: bool = False,
    ) -> Type:
        if t.kind not in ("struct", "union"):
            raise BuilderError(f"{t.kind} type {t.name!r} has no members to define")
        if t.complete:
            raise BuilderError(f"{t.kind} {t.name!r} is already defined")
        what = f"{t.kind} {t.name or '<anonymous>'}"
        specs: list[Member] = []
        for i, m in enumerate(members):
            if isinstance(m, Member):
                spec = m
            elif isinstance(m, tuple) and len(m) in (2, 3):
                spec = Member(m[0], m[1], m[2] if len(m) == 3 else None)
            else:
                raise BuilderError(
                    f"{what}: member #{i} {m!r} is not (name, type), (name, type, bits) or a Member"
                )
            self._own(spec.type, f"{what}.{spec.name}")
            if spec.type is t:
                raise LayoutError(f"{what}.{spec.name}: a {t.kind} cannot contain itself (use a pointer)")
            if spec.type.byte_size is None and spec.type.resolved.byte_size is None:
                raise LayoutError(
                    f"{what}.{spec.name}: type {spec.type.name or spec.type.kind!r} has no size (incomplete or void)"
                )
            specs.append(spec)
        fields = [
            Field(
                s.name,
                int(s.type.byte_size if s.type.byte_size is not None else s.type.resolved.byte_size or 0),
                s.type.align,
                s.bit_size,
                s.offset,
                s.bit_offset,
                s.align,
            )
            for s in specs
        ]
        if t.kind == "struct":
            # byte_size=0 asks for a zero-sized type (Rust); otherwise an empty struct is C++'s 1 byte.
            layout = layout_struct(
                fields, align=align, size=byte_size, packed=packed, name=t.name, cxx_empty_size=byte_size != 0
            )
        else:
            layout = layout_union(fields, align=align, size=byte_size, name=t.name)
        die = t.die
        die.without((_DECLARATION,))
        # byte_size goes right after the name, as compilers write it
        die.put(_BYTE_SIZE, layout.size, position=1 if AT.name in die else 0)
        for spec, placed in zip(specs, layout.members, strict=False):
            die.add_child(self._member(spec, placed))
        t.byte_size = layout.size
        t.align = layout.align
        t.layout = layout
        t.complete = True
        return t

    @workaround("bitfield-member-order")
    def _member(self, spec: Member, placed: Any) -> BuiltDIE:
        items: list[tuple[int, Any, str | None]] = []
        if spec.name is not None:
            items.append((_NAME, spec.name, None))
        items.append((_TYPE, spec.type.die, None))
        items += self._decl_items(spec.line, None, f"member {spec.name}")
        bit_field = placed.bit_size is not None and not placed.full_width
        if bit_field and self.version >= 4:
            items.append((_BIT_SIZE, placed.bit_size, None))
            items.append((_DATA_BIT_OFFSET, placed.data_bit_offset, None))
            return BuiltDIE.make(_MEMBER, items)
        # data_member_location before the bit attributes: with strp names, ptxas 13.0
        # fails ("Attempted to Dereference Out of Bounds") on nvcc's order, where it comes last.
        if self.version == 2:
            items.append((_DATA_MEMBER_LOCATION, _member_location(placed.offset), "block1"))
        else:
            items.append((_DATA_MEMBER_LOCATION, placed.offset, "udata"))
        if bit_field:
            items.append((_BYTE_SIZE, placed.size, None))
            items.append((_BIT_SIZE, placed.bit_size, None))
            items.append(
                (_BIT_OFFSET, placed.dwarf2_bit_offset, "udata" if placed.dwarf2_bit_offset >= 0 else "sdata")
            )
        return BuiltDIE.make(_MEMBER, items)

    def handle_type(self, name: str = "cudaTextureObject_t") -> Type:
        """An opaque texture, sampler or surface handle: 8 bytes, passed as ``.b64``."""
        die = BuiltDIE(TAG.base_type)
        die.put(AT.name, name)
        die.put(AT.encoding, int(ATE.unsigned), "data1")
        die.put(AT.byte_size, 8)
        return self._type(die, name, 8, 8, "handle")

    def slice_type(self, element: Type, *, name: str | None = None) -> Type:
        """A Rust slice ``&[T]``: a ``data_ptr`` and a ``length``, passed as two parameters."""
        element = self._own(element, "slice_type")
        ptr = self.pointer_type(element, address_class=AddressClass.GENERIC)
        usize = self.named_type("usize", language="rust")
        t = self.struct_type(name or f"&[{element.name or 'T'}]", [("data_ptr", ptr), ("length", usize)])
        t.kind = "slice"
        return t

    def subroutine_type(self, return_type: Type | None, parameters: Sequence[Type] = ()) -> Type:
        """A function type (for function pointers)."""
        die = BuiltDIE(TAG.subroutine_type)
        if return_type is not None:
            die.put(AT.type, self._own(return_type, "subroutine_type").die)
        die.put(AT.prototyped, True)
        for p in parameters:
            child = BuiltDIE(TAG.formal_parameter)
            child.put(AT.type, self._own(p, "subroutine_type parameter").die)
            die.add_child(child)
        return self._type(die, None, None, 1, "subroutine")
