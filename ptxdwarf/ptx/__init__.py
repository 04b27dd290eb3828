"""PTX text: the reader (debug sections, functions, variables) and the writer of debug sections."""

from .lexer import mask_comments
from .module import PtxFunction, PtxModule, PtxVariable
from .reader import parse_ptx
from .symbols import PtxSymbol, SymbolTable, needs_compile_only, symbol_table

__all__ = [
    "PtxFunction",
    "PtxModule",
    "PtxVariable",
    "mask_comments",
    "parse_ptx",
    "PtxSymbol",
    "SymbolTable",
    "needs_compile_only",
    "symbol_table",
]
