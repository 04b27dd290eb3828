"""The shipped pytest plugin, run as a producer's suite runs it (``pytester``): prefixed
fixtures that are :func:`ptxdwarf.testing.compile_ptx`, choosing ptxas per module by ``.version``."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from conftest import FIXTURES, every_ptxas

from ptxdwarf.cuda.ptxas import Ptxas, wheel_ptxas

NVVM_13_5 = FIXTURES / "corpus" / "numba-nvvm-13.5"
EXAMPLE = FIXTURES / "spec" / "example.ptx"


@pytest.fixture
def old_ptxas_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Ptxas:
    """A ptxas that refuses ``.version 9.5`` put first on PATH (``$PTXAS`` and ``$CUDA_HOME``
    unset), with the 13.5 wheel still installed; that ptxas."""
    old = [Ptxas(p) for p in every_ptxas() if Ptxas(p).max_version < (9, 5)]
    assert old, "no ptxas older than 13.5 to put first on PATH"
    assert any(Ptxas(p).version == "13.5" for p in wheel_ptxas()), (
        "the nvidia-cuda-nvcc 13.5 wheel is not installed"
    )
    bin_dir = tmp_path / "old-bin"
    bin_dir.mkdir()
    (bin_dir / "ptxas").symlink_to(old[0].path)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for var in ("PTXAS", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    return old[0]


def _run_suite(pytester: pytest.Pytester, suite: str, *options: str) -> pytest.RunResult:
    """Run ``suite``, a test module, as its own pytest session with ``options``."""
    pytester.makepyfile(test_suite=suite)
    return pytester.runpytest("-q", "-p", "no:cacheprovider", *options)


@pytest.mark.ptxas
def test_the_plugin_compiles_nvvm_13_5_with_an_older_ptxas_first_on_path(
    pytester: pytest.Pytester, old_ptxas_first: Ptxas
) -> None:
    suite = f"""
from ptxdwarf.testing import assert_function_lines

DEBUG = open({str(NVVM_13_5 / "axpy.debug.ptx")!r}).read()
LINEINFO = open({str(NVVM_13_5 / "axpy.lineinfo.ptx")!r}).read()
OLD = {old_ptxas_first.version!r}

def test_debug(ptxdwarf_compile, ptxdwarf_ptxas):
    assert ptxdwarf_ptxas.version == OLD  # first on PATH
    cubin = ptxdwarf_compile(DEBUG)
    assert cubin.ptxas_version == "13.5" and cubin.arch == "sm_75"
    assert cubin.debug_info().functions

def test_line_info(ptxdwarf_compile):
    cubin = ptxdwarf_compile(LINEINFO, debug=False, line_info=True)
    assert cubin.ptxas_version == "13.5"
    name = cubin.line_table().functions()[0]
    assert_function_lines(cubin, name, {{30, 31, 32, 33}}, file="make_numba.py")

def test_arch(ptxdwarf_compile):
    assert ptxdwarf_compile(DEBUG, arch="sm_86").arch == "sm_86"
"""
    _run_suite(pytester, suite).assert_outcomes(passed=3)


@pytest.mark.ptxas
def test_the_ptxas_release_and_arch_are_options_and_parameters(
    pytester: pytest.Pytester, old_ptxas_first: Ptxas
) -> None:
    suite = f"""
import pytest
from ptxdwarf.errors import ToolError

EXAMPLE = open({str(EXAMPLE)!r}).read()

def test_release_option(ptxdwarf_compile, ptxdwarf_ptxas):
    assert ptxdwarf_ptxas.version == "13.5"
    cubin = ptxdwarf_compile(EXAMPLE)
    assert (cubin.ptxas_version, cubin.arch) == ("13.5", "sm_80")

def test_release_parameter(ptxdwarf_compile):
    assert ptxdwarf_compile(EXAMPLE, ptxas_version={old_ptxas_first.version!r}).ptxas_version == {old_ptxas_first.version!r}

def test_no_such_release(ptxdwarf_compile):
    with pytest.raises(ToolError, match="no ptxas 1.0 found"):
        ptxdwarf_compile(EXAMPLE, ptxas_version="1.0")
"""
    result = _run_suite(pytester, suite, "--ptxdwarf-ptxas-version", "13.5", "--ptxdwarf-arch", "sm_80")
    result.assert_outcomes(passed=3)


def test_no_plugin_fixture_has_a_common_name(pytester: pytest.Pytester) -> None:
    """A suite's own ``ptxas`` and ``compile_ptx`` fixtures stand beside the plugin's."""
    pytester.makeconftest(
        """
import pytest

@pytest.fixture
def ptxas():
    return "the suite's ptxas"

@pytest.fixture
def compile_ptx():
    return "the suite's compile_ptx"
"""
    )
    pytester.makepyfile(
        test_names="""
def test_own(ptxas, compile_ptx, ptxdwarf_compile, ptxdwarf_ptxas):
    assert (ptxas, compile_ptx) == ("the suite's ptxas", "the suite's compile_ptx")
    assert callable(ptxdwarf_compile)
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--fixtures")
    listed = result.stdout.str()
    plugin = listed[listed.index("fixtures defined from ptxdwarf.pytest_plugin") :]
    names = set(re.findall(r"^(\w+)(?: \[[\w ]+\])? -- ", plugin, flags=re.M))
    assert names == {"ptxdwarf_compile", "ptxdwarf_ptxas"}
    pytester.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_missing_ptxas_skips_on_request(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXAS", "/nonexistent/ptxas")
    pytester.makepyfile(test_missing="def test_it(ptxdwarf_compile):\n    pass\n")
    skipped = pytester.runpytest("-q", "-p", "no:cacheprovider", "-rs", "--ptxdwarf-missing", "skip")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*ptxas given by $PTXAS is not an executable file*"])
    pytester.runpytest("-q", "-p", "no:cacheprovider").assert_outcomes(errors=1)
