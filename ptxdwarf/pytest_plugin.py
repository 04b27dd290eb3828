"""pytest plugin (entry point ``ptxdwarf``): fixtures for tests that compile PTX.

The fixtures are prefixed, so that they clash with no suite's own:

- ``ptxdwarf_compile``: :func:`ptxdwarf.testing.compile_ptx` itself (same signature:
  ``ptxdwarf_compile(text, *, arch=None, ptxas=None, ptxas_version=None, debug=True,
  line_info=False) -> CompiledCubin``), with the session's options as its defaults. Without
  them each module is compiled by the first ptxas found that takes its ``.version``, as the
  command line chooses.
- ``ptxdwarf_ptxas``: the :class:`~ptxdwarf.cuda.Ptxas` the options name, else the first
  found (``$PTXAS``, PATH, ``$CUDA_HOME``, the ``nvidia-cuda-nvcc`` wheel).

Options: ``--ptxdwarf-ptxas PATH``, ``--ptxdwarf-ptxas-version 13.5``, ``--ptxdwarf-arch
sm_75``, and ``--ptxdwarf-missing skip`` to skip, rather than fail, the tests that ask for
ptxas where none is found.
"""

from __future__ import annotations

import functools

import pytest

from .cuda.ptxas import Ptxas, find_ptxas
from .errors import ToolError
from .testing import PtxCompiler, compile_ptx


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ptxdwarf", "ptxdwarf: compiling PTX in tests")
    group.addoption(
        "--ptxdwarf-ptxas",
        metavar="PATH",
        default=None,
        help="the ptxas the ptxdwarf fixtures run (default: per module, the first found that takes its .version)",
    )
    group.addoption(
        "--ptxdwarf-ptxas-version",
        metavar="RELEASE",
        default=None,
        help="run the first ptxas found of this release, such as 13.5",
    )
    group.addoption(
        "--ptxdwarf-arch", metavar="SM", default=None, help="compile for this architecture (default: .target)"
    )
    group.addoption(
        "--ptxdwarf-missing",
        choices=("fail", "skip"),
        default="fail",
        help="what a test asking for ptxas does where none is found (default: fail)",
    )


def _missing(config: pytest.Config, message: str) -> None:
    if config.getoption("ptxdwarf_missing") == "skip":
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="session")
def ptxdwarf_ptxas(pytestconfig: pytest.Config) -> Ptxas:
    """The ptxas the session's options name, else the first found."""
    try:
        return find_ptxas(
            pytestconfig.getoption("ptxdwarf_ptxas"), release=pytestconfig.getoption("ptxdwarf_ptxas_version")
        )
    except ToolError as exc:
        _missing(pytestconfig, str(exc))
        raise


@pytest.fixture(scope="session")
def ptxdwarf_compile(pytestconfig: pytest.Config) -> PtxCompiler:
    """:func:`ptxdwarf.testing.compile_ptx`, with the session's options as its defaults."""
    path = pytestconfig.getoption("ptxdwarf_ptxas")
    release = pytestconfig.getoption("ptxdwarf_ptxas_version")
    try:
        find_ptxas(path, release=release)
    except ToolError as exc:
        _missing(pytestconfig, str(exc))
        raise
    return functools.partial(
        compile_ptx, ptxas=path, ptxas_version=release, arch=pytestconfig.getoption("ptxdwarf_arch")
    )
