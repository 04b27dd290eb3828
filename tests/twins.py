"""Holding a native kernel to its Python reference: the same result, or the same error."""

from __future__ import annotations

import os
from typing import Any

import pytest

from ptxdwarf._native import PURE, Twin
from ptxdwarf.errors import PtxDwarfError

#: Set by CI: a kernel that is not built fails its tests instead of skipping them.
REQUIRED = os.environ.get("PTXDWARF_REQUIRE_NATIVE", "") not in ("", "0")


def native_of(function: Twin[Any, Any]) -> Any:
    """The kernel of ``function``; the test is skipped where it is not built (or fails, in CI)."""
    if function.native is None:
        if REQUIRED and not PURE:
            pytest.fail(f"the native twin of {function.__name__} is not built")
        pytest.skip("the native core is not built" if not PURE else "PTXDWARF_PURE=1")
    return function.native


def same(function: Twin[Any, Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``function``'s kernel and its reference on the same input; assert that both give the
    same value, or that the reference raises a PtxDwarfError where the kernel declines
    (returns None). Gives the reference's value (None where it raised)."""
    native = native_of(function)
    try:
        expected = function.reference(*args, **kwargs)
    except PtxDwarfError:
        assert native(*args, **kwargs) is None, "the kernel takes input the reference rejects"
        return None
    got = native(*args, **kwargs)
    assert got is not None, "the kernel declines input the reference takes"
    assert got == expected
    return expected
