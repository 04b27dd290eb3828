"""ptxdwarf: write, read and check the DWARF debug sections inside NVIDIA PTX.

Reading::

    info = ptxdwarf.read_ptx(text)
    for die in info.iter_dies():
        print(die.offset, die.tag_str, die.name)
"""

from __future__ import annotations

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
from .constants import AT, ATE, FORM, LANG, OP, TAG, AddressClass, address_class_name
from .decode import decode_sections
from .dump import dump_json, dump_text, iter_json
from .encode import EncodeOptions, Encoded, encode, encode_sections
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
from .expr import ExpressionError, Op, decode_expression, encode_expression, register_name, register_number
from .image import Reloc, SectionImage, Symbol
from .model import (
    AbbrevDecl,
    AbbrevTable,
    ArangeSet,
    Attribute,
    BuiltDIE,
    DebugInfo,
    DIE,
    LocationList,
    NameSet,
    RangeList,
    StringTable,
    Unit,
)
from .ptx import PtxModule, parse_ptx
from .ptxwriter import Style, format_section, format_sections
from .schemas import Block

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
from .attach import attach
from .builder import DebugInfoBuilder, Function, LexicalBlock, Member, Type, Variable
from .loc import Location, LocationListSpec

__all__ += [
    "DebugInfoBuilder",
    "Function",
    "LexicalBlock",
    "Location",
    "LocationListSpec",
    "Member",
    "Type",
    "Variable",
    "attach",
    "loc",
]

from .cubin import cubin_images, read_cubin

__all__ += ["cubin_images", "read_cubin"]

from .abi import ParamDecl
from .check import CheckReport, Difference, check
from .lint import Finding, lint
from .ptxas import Ptxas, PtxasCancelled, PtxasFailed, find_ptxas

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
