"""pytest plugin (entry point ``ptxdwarf``): fixtures for tests that compile PTX.

- ``ptxas``: the :class:`~ptxdwarf.cuda.ptxas.Ptxas` ptxdwarf finds (``$PTXAS``, PATH,
  ``$CUDA_HOME``, the ``nvidia-cuda-nvcc`` wheel); the test fails with the install
  hint when there is none.
- ``compile_ptx``: ``compile_ptx(text, arch=None) -> CompiledCubin`` with that ptxas.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .cuda.ptxas import Ptxas, find_ptxas
from .errors import ToolError
from .testing import CompiledCubin
from .testing import compile_ptx as _compile


@pytest.fixture(scope="session")
def ptxas() -> Ptxas:
    """The ptxas to compile with."""
    try:
        return find_ptxas()
    except ToolError as exc:
        pytest.fail(str(exc))
        raise


@pytest.fixture(scope="session")
def compile_ptx(ptxas: Ptxas) -> Callable[..., CompiledCubin]:
    """Compile PTX text with ``ptxas -g``: ``compile_ptx(text, arch=None)``."""

    def run(text: str, arch: str | None = None, debug: bool = True) -> CompiledCubin:
        return _compile(text, arch=arch, ptxas=ptxas, debug=debug)

    return run
