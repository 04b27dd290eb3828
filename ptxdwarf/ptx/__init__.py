"""PTX text: the reader (debug sections, functions, variables) and the writer of debug sections."""

from .reader import (
    PtxFunction,
    PtxModule,
    PtxVariable,
    mask_comments,
    parse_ptx,
)

__all__ = ["PtxFunction", "PtxModule", "PtxVariable", "mask_comments", "parse_ptx"]
