"""The builder: one compile unit, its functions and variables, and the sections made of it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..cuda.quirks import workaround
from ..dwarf.built import BuiltDIE, shape_of
from ..dwarf.constants import AT, FORM, LANG, TAG, AddressClass
from ..dwarf.encode import EncodeOptions, encode
from ..dwarf.expr import Op
from ..dwarf.forms import AUTO_EXPR, AUTO_FORM, AUTO_REF, AUTO_STRING
from ..dwarf.image import SectionImage, Symbol
from ..dwarf.model import DIE, ArangeSet, DebugInfo, LocationList, NameSet, Unit
from ..errors import BuilderError
from ..loc import Location, LocationListSpec, address_class_of
from ..ptx.writer import Style, format_sections
from ._common import (
    _ADDRESS_CLASS,
    _DECL_FILE,
    _DECL_LINE,
    _EXTERNAL,
    _FRAME_BASE,
    _HIGH_PC,
    _LOCATION,
    _LOW_PC,
    _NAME,
    _SUBPROGRAM,
    _TYPE,
    _VARIABLE,
    _bad_decl,
    _decl_kind,
    builtins_type,
)
from .scopes import Function, Variable
from .types import Type, TypeConstructors

_NAME_SPEC = (_NAME, AUTO_STRING)
_TYPE_SPEC = (_TYPE, AUTO_REF)
_ADDRESS_CLASS_SPEC = (_ADDRESS_CLASS, int(FORM.data1) | AUTO_FORM)  # classes 1-12
_LOCATION_SPEC = (_LOCATION, AUTO_EXPR)
# A variable's shape by (decl_file form, decl_line form, 0/1/2: no location/location/and class)
_VARIABLE_SHAPES: dict[tuple[int, int, int], tuple[tuple[int, int], ...]] = {}
_DEPOT_NEEDS_8 = "a __local_depot location needs 8-byte DWARF addresses (ptxas 13.0 rewrites it assuming 8; with 4 it fails)"


def _what(scope: str | None, name: str) -> str:
    """``foo/i``: a variable named in a message."""
    return name if scope is None else f"{scope}/{name}"


# Operation tuples are shared: the encoder encodes each distinct tuple once.
_CALL_FRAME_CFA = (Op.make("call_frame_cfa"),)

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


@workaround("dwarf4-form")
class DebugInfoBuilder(TypeConstructors):
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
            raise BuilderError(
                f"unknown language {language!r} (use a DW_LANG code or one of {sorted(_LANGUAGES)})"
            )
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

    def _linkage_attr(self) -> int:
        return int(AT.linkage_name) if self.version >= 4 else int(AT.MIPS_linkage_name)

    # --- functions and variables -----------------------------------------------

    @workaround("name-before-linkage-name", "depot-needs-subprogram-name")
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
        function's symbol and :func:`ptxdwarf.attach.attach` inserts an end label.
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
        # nvcc's order; the linkage name must come before the name: ptxas crashes rewriting
        # a __local_depot location in a subprogram whose DW_AT_name precedes its
        # DW_AT_MIPS_linkage_name (quirk name-before-linkage-name).
        items: list[tuple[int, Any, str | None]] = [
            (_LOW_PC, Symbol(begin), "addr"),
            (_HIGH_PC, Symbol(end), "addr"),
            (_FRAME_BASE, _CALL_FRAME_CFA, None),
        ]
        if (linkage_name is not None and linkage_name != name) or self.version < 4:
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
        symbol = linkage_name or (
            location.symbols[0] if isinstance(location, Location) and location.symbols else None
        )
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
        if isinstance(cls, AddressClass):
            return int(cls)
        assert cls is not None
        return int(address_class_of(cls, _what(scope, name)))

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
