"""PTX text: the reader (debug sections, functions, variables) and the writer of debug sections."""

from .lexer import mask_comments
from .module import PtxFunction, PtxModule, PtxVariable
from .reader import parse_ptx
from .symbols import PtxSymbol, SymbolTable, needs_compile_only, symbol_table

__all__ = [
    "PtxFunction",
    "PtxModule",
    "PtxSymbol",
    "PtxVariable",
    "SymbolTable",
    "mask_comments",
    "needs_compile_only",
    "parse_ptx",
    "symbol_table",
]
