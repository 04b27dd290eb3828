"""ptxdwarf: write, read and check the DWARF debug sections inside NVIDIA PTX.

Reading::

    info = ptxdwarf.read_ptx(text)
    for die in info.iter_dies():
        print(die.offset, die.tag_str, die.name)
"""

from __future__ import annotations

import sys
import types

__version__ = "0.1.0"

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
)
from .ptx.reader import PtxModule, parse_ptx
from .ptx.writer import Style, format_section, format_sections

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
    "CubinError",
    "DIE",
    "DebugInfo",
    "DwarfError",
    "EncodeError",
    "EncodeOptions",
    "Encoded",
    "ExpressionError",
    "FORM",
    "LANG",
    "LayoutError",
    "LocationList",
    "NameSet",
    "OP",
    "Op",
    "PtxDwarfError",
    "PtxModule",
    "PtxSyntaxError",
    "RangeList",
    "RegisterNameError",
    "Reloc",
    "SectionImage",
    "StringTable",
    "Style",
    "Symbol",
    "TAG",
    "ToolError",
    "Unit",
    "__version__",
    "address_class_name",
    "decode_expression",
    "decode_module",
    "decode_sections",
    "dump_json",
    "dump_text",
    "encode",
    "encode_expression",
    "encode_sections",
    "format_section",
    "format_sections",
    "iter_json",
    "load_text",
    "parse_ptx",
    "read_all",
    "read_file",
    "read_ptx",
    "read_ptx_file",
    "register_name",
    "register_number",
    "replace_debug_sections",
    "rewrite_ptx",
]

from . import loc
from .attach import SourceLoc, attach
from .builder import DebugInfoBuilder, Function, LexicalBlock, Member, Type, Variable
from .loc import Location, LocationListSpec

__all__ += [
    "DebugInfoBuilder",
    "Function",
    "LexicalBlock",
    "Location",
    "LocationListSpec",
    "Member",
    "SourceLoc",
    "Type",
    "Variable",
    "attach",
    "loc",
]

from .cuda.cubin import cubin_images, read_cubin

__all__ += ["cubin_images", "read_cubin"]

from .abi import ParamDecl
from .check import CheckReport, Difference, check
from .cuda.ptxas import Ptxas, PtxasCancelled, PtxasFailed, find_ptxas
from .lint import Finding, lint

__all__ += [
    "CheckReport",
    "Difference",
    "Finding",
    "ParamDecl",
    "Ptxas",
    "PtxasCancelled",
    "PtxasFailed",
    "check",
    "find_ptxas",
    "lint",
]

from .errors import UsageError
from .repair import FixResult, Repair, fix, remap_paths, strip

__all__ += [
    "FixResult",
    "Repair",
    "UsageError",
    "fix",
    "remap_paths",
    "strip",
]

from .cuda.regmap import FunctionRegisters, RegisterMapEntry, read_register_map
from .visibility import RegisterLocation, register_locations, unmapped_registers

__all__ += [
    "FunctionRegisters",
    "RegisterLocation",
    "RegisterMapEntry",
    "read_register_map",
    "register_locations",
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
    if name in _MOVED:
        import importlib

        return importlib.import_module(f".{_MOVED[name]}", __name__)
    raise AttributeError(f"module 'ptxdwarf' has no attribute {name!r}")


class _Package(types.ModuleType):
    """The package module: ``import ptxdwarf.encode`` (the old path of the module) must not
    replace the :func:`encode` function the package exports under the same name."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and callable(globals().get(name)):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
