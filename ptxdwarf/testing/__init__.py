"""Helpers for test suites of PTX producers.

::

    from ptxdwarf.testing import compile_ptx, assert_dies_equal

    cubin = compile_ptx(ptx_text)                    # ptxas -g, in a temporary directory
    info = cubin.debug_info()                        # the cubin's DWARF as a queryable tree
    p = info.function("foo").parameter("i")
    assert p.address_class is AddressClass.REG
    assert p.location.register == "%r1"
    assert p.type.name == "int"

``assert_dies_equal(a, b)`` fails with a readable, path-by-path diff of two DIE
trees. Line tables, without nvdisasm or a GPU::

    cubin = compile_ptx(ptx_text, debug=False, line_info=True)   # ptxas -lineinfo
    assert_function_lines(cubin, "_Z4testPi", {5, 6, 7}, file="test.cu")
    cubin.line_table().addresses_of(6, "test.cu")    # [("_Z4testPi", 0x30), ...]

What a debugger can show, from ptxas's register map (``.nv_debug_info_reg_sass``)::

    assert_readable(cubin, "_Z4testPi", "acc", 6, file="test.cu")   # ["R4"]
    readable_variables(cubin, "_Z4testPi", 6)                        # {"acc": ["R4"], ...}

The pytest plugin (registered as ``ptxdwarf``, :mod:`ptxdwarf.pytest_plugin`) provides the
fixtures ``ptxdwarf_compile`` (:func:`compile_ptx`) and ``ptxdwarf_ptxas``.
"""

from __future__ import annotations

from .compiled import CompiledCubin, PtxCompiler, assert_readable, compile_ptx, readable_variables
from .diff import assert_dies_equal, die_diff
from .lines import (
    assert_function_lines,
    assert_lines,
    assert_no_lines,
    ptx_lines_of,
    source_lines,
    source_of_ptx_line,
)
from .ptxlocs import PtxInstruction, PtxLoc, PtxLocs, read_locs
from .queries import Query, QueryDIE, QueryLocation, QueryLocationEntry, query

__all__ = [
    "CompiledCubin",
    "PtxCompiler",
    "PtxInstruction",
    "PtxLoc",
    "PtxLocs",
    "Query",
    "QueryDIE",
    "QueryLocation",
    "QueryLocationEntry",
    "assert_dies_equal",
    "assert_function_lines",
    "assert_lines",
    "assert_no_lines",
    "assert_readable",
    "compile_ptx",
    "die_diff",
    "ptx_lines_of",
    "query",
    "read_locs",
    "readable_variables",
    "source_lines",
    "source_of_ptx_line",
]
