"""The builder code generators call: types, functions, parameters, variables.

Close in spirit to LLVM's ``DIBuilder``, Pythonic in form::

    dbg = DebugInfoBuilder(name="k.cu", comp_dir="/src", producer="mycodegen 1.0")
    int_t = dbg.base_type("int", byte_size=4, encoding="signed")
    f = dbg.function("foo", linkage_name="_Z3fooii", line=1, type=int_t)
    f.parameter("i", int_t, line=1, location=loc.register("%r1"))
    text = ptxdwarf.attach(ptx_text, dbg)

Every call creates DIEs in one compile unit right away (an arena, as in gimli);
attribute forms are left to the encoder unless DWARF or cuda-gdb want a
particular one. Type layout follows the PTX ABI (:mod:`ptxdwarf.layout`) unless
the caller gives sizes and offsets. :meth:`DebugInfoBuilder.finish` returns the
:class:`~ptxdwarf.model.DebugInfo` with pubnames and aranges.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence, Union

from .dwarf.constants import AT, ATE, FORM, LANG, TAG, AddressClass
from .dwarf.encode import EncodeOptions, encode
from .errors import BuilderError, LayoutError
from .dwarf.expr import Op
from .dwarf.image import SectionImage, Symbol
from .layout import Field, Layout, array_layout, layout_struct, layout_union, vector_layout
from .abi import ParamDecl, lower
from .loc import Location, LocationListSpec, address_class_of, expression, param
from .dwarf.forms import AUTO_EXPR, AUTO_FORM, AUTO_REF, AUTO_STRING
from .dwarf.model import ArangeSet, BuiltDIE, DebugInfo, DIE, LocationList, NameSet, Unit, shape_of, value_kind
from .ptx.writer import Style, format_sections

# Plain ints of the attributes the hot paths write: enum member access (AT.name
# above all, which goes through Enum's ``name`` property) costs 0.2-0.5 us each.
_NAME = int(AT.name)
_TYPE = int(AT.type)
_DECL_FILE = int(AT.decl_file)
_DECL_LINE = int(AT.decl_line)
_LOCATION = int(AT.location)
_ADDRESS_CLASS = int(AT.address_class)
_BYTE_SIZE = int(AT.byte_size)
_VARIABLE = int(TAG.variable)
_MEMBER = int(TAG.member)
_SUBPROGRAM = int(TAG.subprogram)
_BIT_SIZE = int(AT.bit_size)
_BIT_OFFSET = int(AT.bit_offset)
_DATA_BIT_OFFSET = int(AT.data_bit_offset)
_DATA_MEMBER_LOCATION = int(AT.data_member_location)
_LOW_PC = int(AT.low_pc)
_HIGH_PC = int(AT.high_pc)
_FRAME_BASE = int(AT.frame_base)
_EXTERNAL = int(AT.external)
_FORMAL_PARAMETER = int(TAG.formal_parameter)
_DECLARATION = int(AT.declaration)
_NAME_SPEC = (_NAME, AUTO_STRING)
_TYPE_SPEC = (_TYPE, AUTO_REF)
_ADDRESS_CLASS_SPEC = (_ADDRESS_CLASS, int(FORM.data1) | AUTO_FORM)  # classes 1-12
_LOCATION_SPEC = (_LOCATION, AUTO_EXPR)
# A variable's shape by (decl_file form, decl_line form, 0/1/2: no location/location/and class)
_VARIABLE_SHAPES: dict[tuple[int, int, int], tuple[tuple[int, int], ...]] = {}
_DEPOT_NEEDS_8 = (
    "a __local_depot location needs 8-byte DWARF addresses (ptxas 13.0 rewrites it assuming 8; with 4 it fails)"
)
builtins_type = type  # the builder's methods take a parameter called ``type``


def _decl_kind(number: Any) -> int:
    """The form of a decl_file or decl_line number; 0 for anything but a number of 0 to 2**64-1."""
    if builtins_type(number) is not int:
        if not isinstance(number, int) or isinstance(number, bool):
            return 0
        number = int(number)
    return value_kind(_DECL_LINE, number) or 0 if 0 <= number < 1 << 64 else 0


def _bad_decl(file: Any, line: Any) -> str:
    return f"decl file {file!r} and line {line!r} must be numbers from 0 to 2**64-1"


def _what(scope: str | None, name: str) -> str:
    """``foo/i``: a variable named in a message."""
    return name if scope is None else f"{scope}/{name}"
# Operation tuples are shared: the encoder encodes each distinct tuple once.
_CALL_FRAME_CFA = (Op.make("call_frame_cfa"),)


@functools.lru_cache(maxsize=4096)
def _member_location(offset: int) -> tuple[Op, ...]:
    """``DW_OP_plus_uconst offset``, a DWARF 2 member's location."""
    return (Op.make("plus_uconst", offset),)

__all__ = [
    "DebugInfoBuilder",
    "Type",
    "Function",
    "LexicalBlock",
    "Variable",
    "Member",
    "C_TYPES",
    "RUST_TYPES",
    "PTX_TYPES",
]

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

_LANGUAGES = {
    "c": LANG.C99,
    "c89": LANG.C89,
    "c99": LANG.C99,
    "c++": LANG.C_plus_plus,
    "cuda": LANG.C_plus_plus,
    "rust": LANG.Rust,
    "python": LANG.Python,
    "fortran": LANG.Fortran95,
    "julia": LANG.Julia if "Julia" in LANG.__members__ else 0x1F,
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
    builder: "DebugInfoBuilder" = field(repr=False)
    target: "Type | None" = field(default=None, repr=False)
    layout: Layout | None = field(default=None, repr=False)
    complete: bool = True

    def __repr__(self) -> str:
        return f"<Type {self.kind} {self.name or ''} size={self.byte_size}>"

    @property
    def resolved(self) -> "Type":
        """Through typedefs and qualifiers to the type that has the layout."""
        t: Type = self
        while t.kind in ("typedef", "const", "volatile", "restrict") and t.target is not None:
            t = t.target
        return t

    def define(self, members: Sequence["MemberSpec"], **layout: Any) -> "Type":
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


MemberSpec = Union[tuple[Any, ...], Member]


@dataclass(eq=False)
class Variable:
    """A parameter or variable DIE, with the location it was given."""

    die: BuiltDIE
    name: str
    type: Type
    location: Location | LocationListSpec | None
    builder: "DebugInfoBuilder" = field(repr=False)

    def set_location(self, location: Location | LocationListSpec) -> None:
        """Give (or replace) the location, e.g. once registers are allocated."""
        self.builder._set_location(self, location, self.name)


class _Scope:
    """Something that holds variables and lexical blocks: a function or a block."""

    def __init__(self, builder: "DebugInfoBuilder", die: BuiltDIE, what: str) -> None:
        self._builder = builder
        self.die = die
        self._what = what
        self.variables: list[Variable] = []
        self.blocks: list[LexicalBlock] = []

    def variable(
        self,
        name: str,
        type: Type,
        *,
        line: int | None = None,
        location: Location | LocationListSpec | None = None,
        file: int | None = None,
        artificial: bool = False,
    ) -> Variable:
        """A local variable of this scope (``DW_TAG_variable``)."""
        var = self._builder._variable(_VARIABLE, self.die, name, type, line, location, file, self._what)
        if artificial:
            var.die.put(AT.artificial, True)
        self.variables.append(var)
        return var

    def lexical_block(self, *, low_pc: str | None = None, high_pc: str | None = None) -> "LexicalBlock":
        """A nested scope; ``low_pc``/``high_pc`` are labels of the PTX code it covers."""
        if (low_pc is None) != (high_pc is None):
            raise BuilderError(f"{self._what}: a lexical block needs both low_pc and high_pc labels, or neither")
        die = BuiltDIE(TAG.lexical_block)
        if low_pc is not None and high_pc is not None:
            die.put(AT.low_pc, Symbol(low_pc), "addr")
            die.put(AT.high_pc, Symbol(high_pc), "addr")
            self._builder._labels_used.update((low_pc, high_pc))
        self.die.add_child(die)
        block = LexicalBlock(self._builder, die, f"{self._what}/block{len(self.blocks)}")
        self.blocks.append(block)
        return block


class LexicalBlock(_Scope):
    """A ``DW_TAG_lexical_block``."""


class Function(_Scope):
    """A device function or kernel (``DW_TAG_subprogram``)."""

    def __init__(
        self,
        builder: "DebugInfoBuilder",
        die: BuiltDIE,
        name: str,
        linkage_name: str,
        kernel: bool,
        low_pc: str,
        high_pc: str,
        auto_labels: bool,
    ) -> None:
        super().__init__(builder, die, name)
        self.name = name
        self.linkage_name = linkage_name
        self.kernel = kernel
        self.low_pc = low_pc
        self.high_pc = high_pc
        self.auto_labels = auto_labels
        self.parameters: list[Variable] = []
        self.external = True
        self.return_type: Type | None = None
        self.ptx_params: list[ParamDecl] = []

    def __repr__(self) -> str:
        return f"<Function {'kernel ' if self.kernel else ''}{self.name} ({self.linkage_name})>"

    def parameter(
        self,
        name: str,
        type: Type,
        *,
        line: int | None = None,
        location: Location | LocationListSpec | None = None,
        file: int | None = None,
        artificial: bool = False,
    ) -> Variable:
        """A formal parameter (``DW_TAG_formal_parameter``), in declaration order.

        The address class follows from ``location``: ``loc.register`` -> reg,
        ``loc.param`` -> param, ``loc.local`` -> local, ``loc.address(..., cls)`` -> cls.
        """
        var = self._builder._variable(_FORMAL_PARAMETER, self.die, name, type, line, location, file, self.name)
        if artificial:
            var.die.put(AT.artificial, True)
        # Parameters come before other children, as compilers write them.
        # _variable appended it; the parameters made so far are the first children.
        children = self.die.children
        index = len(self.parameters)
        if index != len(children) - 1:
            children.insert(index, children.pop())
        self.parameters.append(var)
        return var


    def abi_parameter(
        self,
        name: str,
        type: Type,
        *,
        line: int | None = None,
        location: Location | LocationListSpec | None = None,
        file: int | None = None,
    ) -> Variable:
        """A source-level parameter passed by the PTX ABI: adds its ``.param``
        declaration(s) to :attr:`ptx_params` and its formal-parameter DIE.

        A kernel's parameter gets its location from the ``.param`` symbol (class
        param); a slice's two halves are described as pieces of one value. A device
        function's parameter has the ``location`` you give (usually a register).
        """
        decls = lower(type, f"{self.linkage_name}_param_", len(self.ptx_params), kernel=self.kernel,
                      address_size=self._builder.address_size)
        self.ptx_params.extend(decls)
        if location is None and self.kernel and decls:
            if len(decls) == 1:
                location = param(decls[0].name)
            else:
                size = self._builder.address_size
                ops: list[Op] = []
                for d in decls:
                    ops.extend(param(d.name).ops)
                    ops.append(Op.make("piece", size))
                location = expression(ops, AddressClass.PARAM)
        return self.parameter(name, type, line=line, location=location, file=file)

    def ptx_return(self) -> list[ParamDecl]:
        """The return-value ``.param`` (``func_retval0``) of a device function, if any."""
        if self.kernel or self.return_type is None or self.return_type.kind == "unspecified":
            return []
        return lower(self.return_type, "func_retval", 0, kernel=False, address_size=self._builder.address_size)

    def ptx_signature(self, *, linkage: str = ".visible") -> str:
        """The PTX header of the function: ``.visible .entry name(\n\t.param ...\n)``."""
        params = ",\n".join("\t" + d.declaration() for d in self.ptx_params)
        body = f"(\n{params}\n)" if params else "()"
        if self.kernel:
            return f"{linkage} .entry {self.linkage_name}{body}"
        ret = self.ptx_return()
        ret_text = " (" + ", ".join(d.declaration() for d in ret) + ")" if ret else ""
        return f"{linkage} .func{ret_text} {self.linkage_name}{body}"


class DebugInfoBuilder:
    """Builds the DWARF of one compile unit for a PTX module.

    ``version`` 2 (default), 3 or 4; ``address_size`` 8 (``.address_size 64``) or 4;
    ``strings`` ``"inline"`` or ``"strp"`` (``.debug_str``); ``pubnames``/``aranges``
    generate those sections from external functions and variables.
    """

    def __init__(
        self,
        name: str,
        *,
        comp_dir: str | None = None,
        producer: str = "ptxdwarf",
        language: str | int = "c++",
        version: int = 2,
        address_size: int = 8,
        strings: str = "inline",
        pubnames: bool = True,
        aranges: bool = True,
        file: str | None = None,
    ) -> None:
        if version not in (2, 3, 4):
            raise BuilderError(f"DWARF version {version} is not supported (2, 3 or 4)")
        if address_size not in (4, 8):
            raise BuilderError(f"address size {address_size} is not supported (4 or 8)")
        if strings not in ("inline", "strp"):
            raise BuilderError(f"strings must be 'inline' or 'strp', not {strings!r}")
        self.name = name
        self.comp_dir = comp_dir
        self.version = version
        self.address_size = address_size
        self.strings = strings
        self.pubnames = pubnames
        self.aranges = aranges
        if file is None:
            file = name if comp_dir is None or name.startswith("/") else comp_dir.rstrip("/") + "/" + name
        self.file = file
        lang = _LANGUAGES.get(language.lower()) if isinstance(language, str) else language
        if lang is None:
            raise BuilderError(f"unknown language {language!r} (use a DW_LANG code or one of {sorted(_LANGUAGES)})")
        cu = BuiltDIE(TAG.compile_unit)
        cu.put(AT.producer, producer)
        cu.put(AT.language, int(lang), "data2")
        cu.put(AT.name, name)
        cu.put(AT.stmt_list, Symbol(".debug_line"))
        if comp_dir is not None:
            cu.put(AT.comp_dir, comp_dir)
        cu.put(AT.low_pc, 0, "addr")
        self.cu = cu
        self.unit = Unit(version=version, address_size=address_size, die=cu)
        self.functions: list[Function] = []
        self._function_symbols: set[str] = set()
        self.globals: list[Variable] = []
        self.types: list[Type] = []
        self._named: dict[tuple[str, str], Type] = {}
        self._index_type: Type | None = None
        self._labels_used: set[str] = set()
        self._symbols_used: set[str] = set()
        self._location_lists: list[tuple[LocationList, LocationListSpec]] = []

    # --- helpers ------------------------------------------------------------

    def _own(self, t: Any, what: str) -> Type:
        if not isinstance(t, Type):
            raise BuilderError(f"{what}: {t!r} is not a Type made by a DebugInfoBuilder")
        if t.builder is not self:
            raise BuilderError(f"{what}: type {t.name or t.kind!r} belongs to another DebugInfoBuilder")
        return t

    def _type(self, die: BuiltDIE, name: str | None, size: int | None, align: int, kind: str, **extra: Any) -> Type:
        self.cu.add_child(die)
        t = Type(die, name, size, align, kind, self, **extra)
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

    def _linkage_attr(self) -> int:
        return int(AT.linkage_name) if self.version >= 4 else int(AT.MIPS_linkage_name)

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
                raise BuilderError(f"base type {name!r}: unknown encoding {encoding!r} (one of {sorted(_ENCODINGS)})")
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
        return self._aggregate(TAG.structure_type, "struct", type_name, members, size=size, align=align, line=None)

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
        return self._aggregate(TAG.structure_type, "struct", name, members, size=byte_size, align=align, packed=packed, line=line)

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
                raise BuilderError(f"{what}: member #{i} {m!r} is not (name, type), (name, type, bits) or a Member")
            self._own(spec.type, f"{what}.{spec.name}")
            if spec.type is t:
                raise LayoutError(f"{what}.{spec.name}: a {t.kind} cannot contain itself (use a pointer)")
            if spec.type.byte_size is None and spec.type.resolved.byte_size is None:
                raise LayoutError(f"{what}.{spec.name}: type {spec.type.name or spec.type.kind!r} has no size (incomplete or void)")
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
        for spec, placed in zip(specs, layout.members):
            die.add_child(self._member(spec, placed))
        t.byte_size = layout.size
        t.align = layout.align
        t.layout = layout
        t.complete = True
        return t

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
            items.append((_BIT_OFFSET, placed.dwarf2_bit_offset, "udata" if placed.dwarf2_bit_offset >= 0 else "sdata"))
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

    # --- functions and variables -----------------------------------------------

    def function(
        self,
        name: str,
        *,
        linkage_name: str | None = None,
        line: int | None = None,
        type: Type | None = None,
        kernel: bool = False,
        external: bool = True,
        low_pc: str | None = None,
        high_pc: str | None = None,
        file: int | None = None,
    ) -> Function:
        """A device function (``kernel=True``: a ``.entry``).

        ``linkage_name`` is the PTX symbol (default ``name``). ``low_pc``/``high_pc``
        name labels at the function's start and end; left out, ``low_pc`` is the
        function's symbol and :func:`ptxdwarf.attach` inserts an end label.
        """
        symbol = linkage_name or name
        if (low_pc is None) != (high_pc is None):
            raise BuilderError(f"function {name}: give both low_pc and high_pc labels, or neither")
        if symbol in self._function_symbols:
            raise BuilderError(f"function {symbol} is described twice")
        auto = low_pc is None
        index = len(self.functions)
        # The function's own symbol is offset 0 of its code; a label after the
        # declarations would land after a kernel's prologue.
        begin = low_pc or symbol
        end = high_pc or f"$L__ptxdwarf_end{index}"
        # low_pc comes first, as nvcc writes it: ptxas 13.0 crashes rewriting a
        # __local_depot location in a subprogram whose DW_AT_name precedes low_pc.
        items: list[tuple[int, Any, str | None]] = [
            (_LOW_PC, Symbol(begin), "addr"),
            (_HIGH_PC, Symbol(end), "addr"),
            (_FRAME_BASE, _CALL_FRAME_CFA, None),
        ]
        if linkage_name is not None and linkage_name != name or self.version < 4:
            items.append((self._linkage_attr(), symbol, None))
        items.append((_NAME, name, None))
        items += self._decl_items(line, file, f"function {name}")
        if type is not None:
            items.append((_TYPE, self._own(type, f"function {name}").die, None))
        if external:
            items.append((_EXTERNAL, True, None))
        die = BuiltDIE.make(_SUBPROGRAM, items)
        self.cu.add_child(die)
        if not auto:
            self._labels_used.update((begin, end))
        f = Function(self, die, name, symbol, kernel, begin, end, auto)
        f.external = external
        f.return_type = type
        self.functions.append(f)
        self._function_symbols.add(symbol)
        return f

    def kernel(self, name: str, **kwargs: Any) -> Function:
        """A kernel (``.entry``): :meth:`function` with ``kernel=True``."""
        return self.function(name, kernel=True, **kwargs)

    def global_variable(
        self,
        name: str,
        type: Type,
        *,
        location: Location | None = None,
        line: int | None = None,
        linkage_name: str | None = None,
        external: bool = True,
        file: int | None = None,
    ) -> Variable:
        """A module-level variable; ``location`` is usually ``loc.address(symbol, AddressClass.GLOBAL)``
        (or ``SHARED``, ``CONST``)."""
        var = self._variable(_VARIABLE, self.cu, name, type, line, location, file, None)
        symbol = linkage_name or (location.symbols[0] if isinstance(location, Location) and location.symbols else None)
        if symbol is not None and (symbol != name or self.version < 4):
            var.die.put(self._linkage_attr(), symbol)
        if external:
            var.die.put(AT.external, True)
        self.globals.append(var)
        return var

    def _variable(
        self,
        tag: int,
        parent: DIE,
        name: str,
        type: Type,
        line: int | None,
        location: Location | LocationListSpec | None,
        file: int | None,
        scope: str | None,
    ) -> Variable:
        """A variable or parameter DIE under ``parent``. ``scope`` names the function or
        block for messages (None: a global); the message text is made only for errors."""
        if builtins_type(type) is not Type or type.builder is not self:
            self._own(type, _what(scope, name))
        if line is None:
            file_kind = line_kind = 0
            values: tuple[Any, ...] = (name, type.die)
        else:
            if file is None:
                file = 1
            file_kind = _decl_kind(file)
            line_kind = _decl_kind(line)
            if not file_kind or not line_kind:
                raise BuilderError(f"{_what(scope, name)}: {_bad_decl(file, line)}")
            values = (name, file, line, type.die)
        place = 0  # no location here; 1: a location; 2: a location and an address class
        if builtins_type(location) is Location:
            cls = location.address_class
            ops = location.ops
            if cls is None:
                place = 1
                values += (ops,)
            else:
                place = 2
                values += (self._class_code(location, scope, name), ops)
            symbols = location.symbols
            if symbols:
                self._symbols_used.update(symbols)
        shape_key = (file_kind, line_kind, place)
        shape = _VARIABLE_SHAPES.get(shape_key)
        if shape is None:
            specs: list[tuple[int, int]] = [_NAME_SPEC]
            if line is not None:
                specs += [(_DECL_FILE, file_kind), (_DECL_LINE, line_kind)]
            specs.append(_TYPE_SPEC)
            if place == 2:
                specs.append(_ADDRESS_CLASS_SPEC)
            if place:
                specs.append(_LOCATION_SPEC)
            shape = _VARIABLE_SHAPES[shape_key] = shape_of(tuple(specs))
        die = BuiltDIE(tag, shape, values)
        parent.add_child(die)
        if place:
            return Variable(die, name, type, location, self)
        var = Variable(die, name, type, None, self)
        if location is not None:
            self._set_location(var, location, _what(scope, name), fresh=True)
        return var

    def _class_code(self, location: Location, scope: str | None, name: str) -> int:
        """The address class code of a location that has one (``scope``/``name`` for messages)."""
        cls = location.address_class
        if cls == AddressClass.LOCAL and self.address_size != 8 and location.symbols:
            raise BuilderError(f"{_what(scope, name)}: {_DEPOT_NEEDS_8}")
        return int(cls) if builtins_type(cls) is AddressClass else int(address_class_of(cls, _what(scope, name)))  # type: ignore[arg-type]

    def _set_location(
        self, var: Variable, location: Location | LocationListSpec, what: str, fresh: bool = False
    ) -> None:
        die = var.die
        if not fresh:
            die.without((_LOCATION, _ADDRESS_CLASS))
        if isinstance(location, Location):
            if location.address_class is not None:
                die.put(_ADDRESS_CLASS, self._class_code(location, None, what))
            die.put(_LOCATION, location.ops)
        elif isinstance(location, LocationListSpec):
            entries = []
            for begin, end, where in location.entries:
                entries.append((begin, end, list(where.ops)))
            model_list = LocationList(-1, entries)  # type: ignore[arg-type]
            self._location_lists.append((model_list, location))
            die.put(AT.location, model_list)
            self._labels_used.update(location.labels)
        else:
            raise BuilderError(f"{what}: {location!r} is not a location (use ptxdwarf.loc)")
        symbols = location.symbols
        if symbols:
            self._symbols_used.update(symbols)
        var.location = location

    # --- output -------------------------------------------------------------

    @property
    def symbols_used(self) -> set[str]:
        """PTX symbols the DIEs name (parameters, depots, globals), labels excluded."""
        return set(self._symbols_used)

    @property
    def labels_used(self) -> set[str]:
        """Code labels the DIEs name that the caller placed (function and block bounds)."""
        return set(self._labels_used)

    def iter_dies(self) -> Iterator[DIE]:
        return self.unit.iter_dies()

    def finish(self) -> DebugInfo:
        """The model: the unit, location lists, pubnames and aranges as asked."""
        info = DebugInfo(units=[self.unit], source="built")
        lists = [m for m, _ in self._location_lists]
        if lists:
            info.locations = lists
        if self.pubnames:
            entries: list[tuple[int | DIE, str]] = []
            for f in self.functions:
                if f.external:
                    entries.append((f.die, f.linkage_name))
            for g in self.globals:
                if g.die.get(AT.external):
                    entries.append((g.die, g.die.get(self._linkage_attr()) or g.name))
            info.pubnames = [NameSet(unit_offset=self.unit, unit_length=None, entries=entries)]
        if self.aranges:
            tuples: list[tuple[int | Symbol, int | Symbol]] = []
            for f in self.functions:
                if f.external and f.auto_labels:
                    # ptxas resolves a code label to its offset in the function's own
                    # section, so the end label (the function starts at offset 0) is its length.
                    tuples.append((Symbol(f.low_pc), Symbol(f.high_pc)))
            for g in self.globals:
                loc = g.location
                # Global memory only: shared and constant variables live in windows of
                # their own, and ptxas leaves them unrelocated outside .debug_info.
                if (
                    g.die.get(AT.external)
                    and isinstance(loc, Location)
                    and loc.address_class == AddressClass.GLOBAL
                    and len(loc.ops) == 1
                    and loc.symbols
                ):
                    size = g.type.byte_size or g.type.resolved.byte_size
                    if size:
                        tuples.append((loc.ops[0].symbol, size))  # type: ignore[arg-type]
            info.aranges = [ArangeSet(unit_offset=self.unit, tuples=tuples, address_size=self.address_size)]
        return info

    def encode_options(self, *, string_labels: bool = False) -> EncodeOptions:
        return EncodeOptions(strings=self.strings, string_labels=string_labels)

    def sections(self, *, string_labels: bool = False) -> dict[str, SectionImage]:
        """The encoded debug sections."""
        return encode(self.finish(), self.encode_options(string_labels=string_labels)).images

    def sections_text(self, style: Style | str = Style.READABLE, *, string_labels: bool = False) -> str:
        """The debug sections as PTX text."""
        return format_sections(self.sections(string_labels=string_labels).values(), style)

