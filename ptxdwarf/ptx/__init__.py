"""PTX text: the reader (debug sections, functions, variables) and the writer of debug sections."""

from .reader import (
    PtxFunction,
    PtxModule,
    PtxVariable,
    mask_comments,
    parse_ptx,
)
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
