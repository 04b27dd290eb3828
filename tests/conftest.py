"""Shared test fixtures: the real toolchain (ptxas, llvm-dwarfdump) and the shipped PTX fixtures.

``ptxas_tool`` and ``cubin_path`` are made of the shipped pytest plugin's ``ptxdwarf_ptxas``
and ``ptxdwarf_compile`` (:mod:`ptxdwarf.pytest_plugin`). A test that uses any of them is
marked ``ptxas``; tests that run ptxas otherwise say so with
``@pytest.mark.ptxas``, and the slow ones with ``@pytest.mark.slow`` (pyproject.toml).

ptxas and llvm-dwarfdump are required: tests that need them fail (not skip) when
they are missing, unless PTXDWARF_ALLOW_MISSING_TOOLS=1 is set for a local run (for ptxas:
the plugin's ``--ptxdwarf-missing skip``).
"""

from __future__ import annotations

import builtins
import io
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from ptxdwarf.cuda.ptxas import Ptxas, candidate_paths
from ptxdwarf.testing import PtxCompiler

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

#: PTX fixtures ptxas accepts, from real producers (and the spec's fixed example); not the
#: fragments of fixtures/fragment, which no ptxas compiles alone.
GOOD_FIXTURES = sorted(
    p
    for p in FIXTURES.glob("*/*.ptx")
    if p.parent.name != "fragment"
    and ".orig." not in p.name
    and "ptxas-crash" not in p.name
    and not (p.name.startswith("rich.llc") and ".fixed." not in p.name)
)


#: Fixtures of GOOD_FIXTURES on which ptxas (every release, 12.0 to 13.5) relocates a label
#: the debug sections use before the code above it: the label a dropped one's block leads to
#: takes that one's place (quirk label-at-line-zero). check reports these labels, lint warns of them.
MOVED_LABELS: dict[str, set[str]] = {
    "clang/opt.O2.sm_75.ptx": {"Ltmp3", "Ltmp24"},
    "clang/rich.O0.sm_75.ptx": {"Ltmp59"},
    "clang/rich.llc.sm_75.fixed.ptx": {"Ltmp59"},
    "nvcc/coop_reduce.G.sm_75.ptx": {"$L__tmp18", "$L__tmp20", "$L__tmp22", "$L__tmp24", "$L__tmp26"},
}

#: The labels lint warns ptxas moves (label-at-line-zero), in fixtures otherwise clean: those
#: check finds, and on rich.llc.sm_75.ptx, which ptxas refuses, those of its fixed copy.
LINT_MOVED_LABELS: dict[str, set[str]] = {
    "clang/opt.O2.sm_75.ptx": {"Ltmp3", "Ltmp24"},
    "clang/rich.O0.sm_75.ptx": {"Ltmp59"},
    "clang/rich.llc.sm_75.fixed.ptx": {"Ltmp59"},
    "clang/rich.llc.sm_75.ptx": {"Ltmp59"},
    "nvcc/coop_reduce.G.sm_75.ptx": {"$L__tmp18", "$L__tmp20", "$L__tmp22", "$L__tmp24", "$L__tmp26"},
}


#: The outside corpus (fixtures/corpus): other producers' output, tested differentially.
CORPUS = sorted(FIXTURES.glob("corpus/*/*.ptx"))
#: The producers' cubins of the corpus (cuTile, cuda.core: producers that write no PTX offline).
CORPUS_CUBINS = sorted(FIXTURES.glob("corpus/*/*.cubin"))


#: More ptxas executables for the tests that compare releases: paths separated by
#: ``os.pathsep``. ``.ci/run`` installs ptxas 12.0, 12.4, 12.9 and 13.4 and names them here.
EXTRA_PTXAS = "PTXDWARF_TEST_PTXAS"


def every_ptxas() -> list[str]:
    """Every ptxas the tests know of, each once (by its real path): those ptxdwarf finds
    (PATH, ``$CUDA_HOME``, the wheel) and those of ``$PTXDWARF_TEST_PTXAS``. A path named
    there that does not exist is kept, so that the tests using it fail."""
    paths = [path for _, path in candidate_paths() if os.access(path, os.X_OK)]
    paths += [os.path.abspath(p) for p in os.environ.get(EXTRA_PTXAS, "").split(os.pathsep) if p]
    seen: dict[str, str] = {}
    for path in paths:
        seen.setdefault(os.path.realpath(path), path)
    return list(seen.values())


def ptxas_id(path: str) -> str:
    """A test id naming a ptxas by its release (its path when it does not run)."""
    try:
        return f"ptxas-{Ptxas(path).version}"
    except Exception:  # the test itself reports what is wrong with it
        return path


def fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _missing(tool: str) -> None:
    message = f"{tool} is required for this test and was not found"
    if os.environ.get("PTXDWARF_ALLOW_MISSING_TOOLS"):
        pytest.skip(message)
    pytest.fail(message)


def nvdisasm() -> str:
    """nvdisasm: on PATH or from the nvidia-cuda-nvdisasm wheel."""
    found = shutil.which("nvdisasm")
    if found:
        return found
    try:
        import nvidia.cu13
    except ImportError:
        _missing("nvdisasm (pip install nvidia-cuda-nvdisasm)")
        raise
    for base in nvidia.cu13.__path__:
        candidate = Path(base) / "bin" / "nvdisasm"
        if candidate.exists():
            return str(candidate)
    _missing("nvdisasm (pip install nvidia-cuda-nvdisasm)")
    raise AssertionError


@pytest.fixture(scope="session")
def ptxas_tool(ptxdwarf_ptxas: Ptxas) -> Ptxas:
    """The plugin's ``ptxdwarf_ptxas``: the ptxas ptxdwarf finds (PATH, CUDA_HOME, or the
    nvidia-cuda-nvcc wheel)."""
    return ptxdwarf_ptxas


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("PTXDWARF_ALLOW_MISSING_TOOLS"):
        config.option.ptxdwarf_missing = "skip"


def _llvm_dwarfdump() -> str | None:
    for name in (
        "llvm-dwarfdump",
        "llvm-dwarfdump-14",
        "llvm-dwarfdump-15",
        "llvm-dwarfdump-16",
        "llvm-dwarfdump-17",
        "llvm-dwarfdump-18",
    ):
        found = shutil.which(name)
        if found:
            return found
    for candidate in sorted(Path("/usr/lib").glob("llvm-*/bin/llvm-dwarfdump"), reverse=True):
        return str(candidate)
    return None


#: More llvm-dwarfdump executables for the differential tests (another LLVM release): paths
#: separated by ``os.pathsep``. ``.ci/run`` names LLVM 22's here.
EXTRA_DWARFDUMP = "PTXDWARF_TEST_DWARFDUMP"


def every_dwarfdump() -> list[str]:
    """Every llvm-dwarfdump the tests know of, each once (by its real path): the one
    :func:`llvm_dwarfdump` uses, those of ``/usr/lib/llvm-*`` and those of
    ``$PTXDWARF_TEST_DWARFDUMP`` (a path named there that does not exist is kept, so that the
    tests using it fail)."""
    found = _llvm_dwarfdump()
    paths = [found] if found else []
    paths += [str(p) for p in sorted(Path("/usr/lib").glob("llvm-*/bin/llvm-dwarfdump"))]
    paths += [os.path.abspath(p) for p in os.environ.get(EXTRA_DWARFDUMP, "").split(os.pathsep) if p]
    seen: dict[str, str] = {}
    for path in paths:
        seen.setdefault(os.path.realpath(path), path)
    return list(seen.values())


@pytest.fixture(scope="session")
def eu_readelf() -> str:
    """elfutils' eu-readelf, the second independent DWARF reader (it knows NVIDIA's line
    extensions)."""
    found = shutil.which("eu-readelf")
    if found is None:
        _missing("eu-readelf (elfutils)")
    assert found is not None
    return found


@pytest.fixture(scope="session")
def llvm_dwarfdump() -> str:
    found = _llvm_dwarfdump()
    if found is None:
        _missing("llvm-dwarfdump")
    assert found is not None
    return found


class CubinPath(Protocol):
    """The ``cubin_path`` fixture: the path of the cubin ``ptxas -g`` makes of ``text``."""

    def __call__(self, text: str, name: str = "module", arch: str | None = None) -> Path: ...


@pytest.fixture(scope="session")
def cubin_path(ptxdwarf_compile: PtxCompiler, tmp_path_factory: pytest.TempPathFactory) -> CubinPath:
    """cubin_path(text, name) -> path of the cubin ``ptxas -g`` makes of the text (the
    plugin's ``ptxdwarf_compile``)."""
    out_dir = tmp_path_factory.mktemp("cubins")
    counter = [0]

    def run(text: str, name: str = "module", arch: str | None = None) -> Path:
        cubin = ptxdwarf_compile(text, arch=arch)
        counter[0] += 1
        path = out_dir / f"{counter[0]:04d}-{Path(name).stem}.cubin"
        path.write_bytes(cubin.data)
        return path

    return run


#: Fixtures that run ptxas (these and the plugin's): a test that uses one is marked ``ptxas``.
PTXAS_FIXTURES = frozenset({"ptxas_tool", "cubin_path", "ptxdwarf_ptxas", "ptxdwarf_compile"})


PACKAGE = Path(__file__).resolve().parents[1] / "ptxdwarf"


def writes_into_package(file: object, mode: str = "r") -> bool:
    """Whether ``open(file, mode)`` would write a file of the package's (its bytecode cache aside)."""
    if not isinstance(file, (str, os.PathLike)) or not any(c in mode for c in "wax+"):
        return False
    path = Path(os.fsdecode(file)).resolve()
    return path.is_relative_to(PACKAGE) and "__pycache__" not in path.parts


@pytest.fixture(autouse=True, scope="session")
def _package_is_read_only() -> Iterator[None]:
    """No test writes into the package directory: an ``open`` for writing there fails the test."""
    original: Callable[..., Any] = builtins.open

    def guarded(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if writes_into_package(file, mode):
            raise AssertionError(f"a test writes into the package: {file}")
        return original(file, mode, *args, **kwargs)

    builtins.open = io.open = guarded
    try:
        yield
    finally:
        builtins.open = io.open = original


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if PTXAS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.ptxas)


def run_dwarfdump(tool: str, cubin: Path, *args: str) -> str:
    proc = subprocess.run([tool, *args, str(cubin)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
