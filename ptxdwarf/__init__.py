"""ptxdwarf: write, read and check the DWARF debug sections inside NVIDIA PTX.

Reading::

    info = ptxdwarf.read_ptx(text)
    for die in info.iter_dies():
        print(die.offset, die.tag_str, die.name)
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from . import loc
    from .abi import ParamDecl
    from .api import (
        decode_module,
        load_text,
        read_all,
        read_file,
        read_ptx,
        read_ptx_file,
        replace_debug_sections,
        rewrite_ptx,
    )
    from .attach import SourceLoc, attach
    from .builder import DebugInfoBuilder, Function, LexicalBlock, Member, Type, Variable
    from .check import CheckReport, Difference, check
    from .cuda.cubin import cubin_images, read_cubin
    from .cuda.ptxas import Ptxas, PtxasCancelled, PtxasFailed, find_ptxas
    from .cuda.regmap import FunctionRegisters, RegisterMapEntry, read_register_map
    from .dump import dump_json, dump_text, iter_json
    from .dwarf.constants import AT, ATE, FORM, LANG, OP, TAG, AddressClass, address_class_name
    from .dwarf.decode import decode_sections
    from .dwarf.encode import Encoded, EncodeOptions, encode, encode_sections
    from .dwarf.expr import (
        ExpressionError,
        Op,
        decode_expression,
        encode_expression,
        register_name,
        register_number,
    )
    from .dwarf.image import Reloc, SectionImage, Symbol
    from .dwarf.model import (
        DIE,
        AbbrevDecl,
        AbbrevTable,
        ArangeSet,
        Attribute,
        BuiltDIE,
        DebugInfo,
        LocationList,
        NameSet,
        RangeList,
        StringTable,
        Unit,
    )
    from .dwarf.schemas import Block
    from .errors import (
        AttachError,
        BuilderError,
        CubinError,
        DwarfError,
        EncodeError,
        LayoutError,
        PtxDwarfError,
        PtxSyntaxError,
        RegisterNameError,
        ToolError,
        UsageError,
    )
    from .lint import Finding, lint
    from .loc import Location, LocationListSpec
    from .ptx.module import PtxModule
    from .ptx.reader import parse_ptx
    from .ptx.writer import Style, format_section, format_sections
    from .repair import FixResult, Repair, fix, remap_paths, strip
    from .visibility import RegisterLocation, register_locations, unmapped_registers

# The public API: each name and the module it comes from, imported on first use so that
# ``import ptxdwarf`` (and every command line run) loads only what it needs. A name equal to
# ``if TYPE_CHECKING`` above says the same for type checkers. Module ``"."``: the name is a submodule.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "api": (
        "decode_module",
        "load_text",
        "read_all",
        "read_file",
        "read_ptx",
        "read_ptx_file",
        "replace_debug_sections",
        "rewrite_ptx",
    ),
    "dump": ("dump_json", "dump_text", "iter_json"),
    "dwarf.constants": ("AT", "ATE", "FORM", "LANG", "OP", "TAG", "AddressClass", "address_class_name"),
    "dwarf.decode": ("decode_sections",),
    "dwarf.encode": ("Encoded", "EncodeOptions", "encode", "encode_sections"),
    "dwarf.expr": (
        "ExpressionError",
        "Op",
        "decode_expression",
        "encode_expression",
        "register_name",
        "register_number",
    ),
    "dwarf.image": ("Reloc", "SectionImage", "Symbol"),
    "dwarf.model": (
        "DIE",
        "AbbrevDecl",
        "AbbrevTable",
        "ArangeSet",
        "Attribute",
        "BuiltDIE",
        "DebugInfo",
        "LocationList",
        "NameSet",
        "RangeList",
        "StringTable",
        "Unit",
    ),
    "dwarf.schemas": ("Block",),
    "errors": (
        "AttachError",
        "BuilderError",
        "CubinError",
        "DwarfError",
        "EncodeError",
        "LayoutError",
        "PtxDwarfError",
        "PtxSyntaxError",
        "RegisterNameError",
        "ToolError",
        "UsageError",
    ),
    "ptx.module": ("PtxModule",),
    "ptx.reader": ("parse_ptx",),
    "ptx.writer": ("Style", "format_section", "format_sections"),
    ".": ("loc",),
    "loc": ("Location", "LocationListSpec"),
    "attach": ("SourceLoc", "attach"),
    "builder": ("DebugInfoBuilder", "Function", "LexicalBlock", "Member", "Type", "Variable"),
    "cuda.cubin": ("cubin_images", "read_cubin"),
    "abi": ("ParamDecl",),
    "check": ("CheckReport", "Difference", "check"),
    "cuda.ptxas": ("Ptxas", "PtxasCancelled", "PtxasFailed", "find_ptxas"),
    "lint": ("Finding", "lint"),
    "repair": ("FixResult", "Repair", "fix", "remap_paths", "strip"),
    "cuda.regmap": ("FunctionRegisters", "RegisterMapEntry", "read_register_map"),
    "visibility": ("RegisterLocation", "register_locations", "unmapped_registers"),
}

_ORIGIN = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "AT",
    "ATE",
    "AbbrevDecl",
    "AbbrevTable",
    "AddressClass",
    "ArangeSet",
    "AttachError",
    "Attribute",
    "Block",
    "BuilderError",
    "BuiltDIE",
    "CheckReport",
    "CubinError",
    "DIE",
    "DebugInfo",
    "DebugInfoBuilder",
    "Difference",
    "DwarfError",
    "EncodeError",
    "EncodeOptions",
    "Encoded",
    "ExpressionError",
    "FORM",
    "Finding",
    "FixResult",
    "Function",
    "FunctionRegisters",
    "LANG",
    "LayoutError",
    "LexicalBlock",
    "Location",
    "LocationList",
    "LocationListSpec",
    "Member",
    "NameSet",
    "OP",
    "Op",
    "ParamDecl",
    "PtxDwarfError",
    "PtxModule",
    "PtxSyntaxError",
    "Ptxas",
    "PtxasCancelled",
    "PtxasFailed",
    "RangeList",
    "RegisterLocation",
    "RegisterMapEntry",
    "RegisterNameError",
    "Reloc",
    "Repair",
    "SectionImage",
    "SourceLoc",
    "StringTable",
    "Style",
    "Symbol",
    "TAG",
    "ToolError",
    "Type",
    "Unit",
    "UsageError",
    "Variable",
    "__version__",
    "address_class_name",
    "attach",
    "check",
    "cubin_images",
    "decode_expression",
    "decode_module",
    "decode_sections",
    "dump_json",
    "dump_text",
    "encode",
    "encode_expression",
    "encode_sections",
    "find_ptxas",
    "fix",
    "format_section",
    "format_sections",
    "iter_json",
    "lint",
    "load_text",
    "loc",
    "parse_ptx",
    "read_all",
    "read_cubin",
    "read_file",
    "read_ptx",
    "read_ptx_file",
    "read_register_map",
    "register_locations",
    "register_name",
    "register_number",
    "remap_paths",
    "replace_debug_sections",
    "rewrite_ptx",
    "strip",
    "unmapped_registers",
]

# Modules that moved into the dwarf/, ptx/ and cuda/ packages stay reachable as attributes
# under their old names (``ptxdwarf.constants``); ``import ptxdwarf.constants`` works through
# the small modules at the old paths.
_MOVED = {
    "constants": "dwarf.constants",
    "schemas": "dwarf.schemas",
    "forms": "dwarf.forms",
    "image": "dwarf.image",
    "model": "dwarf.model",
    "decode": "dwarf.decode",
    "encode": "dwarf.encode",
    "shapes": "dwarf.shapes",
    "expr": "dwarf.expr",
    "ptxwriter": "ptx.writer",
    "cubin": "cuda.cubin",
    "fatbin": "cuda.fatbin",
    "ptxas": "cuda.ptxas",
}


def __getattr__(name: str) -> object:
    module = _ORIGIN.get(name)
    if module is not None:
        if module == ".":
            value: object = importlib.import_module(f".{name}", __name__)
        else:
            value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value
        return value
    if name in _MOVED:
        return importlib.import_module(f".{_MOVED[name]}", __name__)
    raise AttributeError(f"module 'ptxdwarf' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_ORIGIN})


class _Package(types.ModuleType):
    """The package module: importing a submodule that shares its name with an export
    (``ptxdwarf.check``, or the old path ``ptxdwarf.encode``) must not replace the
    function the package exports under that name."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and _ORIGIN.get(name, ".") != ".":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
