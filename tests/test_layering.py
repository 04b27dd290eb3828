"""Data flows one way: errors <- dwarf <- ptx <- cuda <- features <- api <- cli.

Each module's imports of other ptxdwarf modules are read from its source (including imports
inside functions) and checked against the units its unit builds on (:data:`BUILDS_ON`).
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.dwarf
import ptxdwarf.dwarf.encode
import ptxdwarf.repair

PACKAGE = Path(ptxdwarf.__file__).parent

#: The features, each with the units it builds on.
FEATURES: dict[str, tuple[str, ...]] = {
    "files": ("cuda",),
    "layout": ("errors",),
    "loc": ("cuda",),
    "builder": ("layout", "loc"),
    "attach": ("builder",),
    "autodebug": ("attach", "demangle"),
    "lint": ("cuda", "parallel"),
    "repair": ("lint",),
    "fix": ("repair",),
    "strip": ("cuda",),
    "visibility": ("cuda",),
    "check": ("visibility", "parallel"),
    "stats": ("visibility", "files"),
    "dump": ("cuda",),
}

#: Every unit of the package (a subpackage, or a module of its top level) and the units it
#: builds on: it may import those and what they build on, nothing else. ``ptxdwarf`` is the
#: package's ``__init__`` (the names it exports).
BUILDS_ON: dict[str, tuple[str, ...]] = {
    "errors": (),
    "_exports": (),
    "parallel": (),
    "demangle": (),
    "_native": (),
    "dwarf": ("errors", "_exports", "_native"),
    "ptx": ("dwarf",),
    "cuda": ("ptx",),
    **FEATURES,
    "api": tuple(FEATURES),
    "ptxdwarf": ("api",),
    "testing": ("api",),
    "pytest_plugin": ("testing",),
    "cli": ("ptxdwarf",),
    "__main__": ("cli",),
}

#: Modules of the top level that belong to another unit: abi lowers the builder's types to
#: ``.param`` declarations, and the builder declares parameters with it.
UNIT_OF = {"abi": "builder"}

TOP_LEVEL = {p.stem for p in PACKAGE.glob("*.py")} | {p.parent.name for p in PACKAGE.glob("*/__init__.py")}


def _allowed() -> dict[str, set[str]]:
    """Each unit and every unit it may import (its own included)."""
    allowed: dict[str, set[str]] = {}
    for unit in graphlib.TopologicalSorter(BUILDS_ON).static_order():
        allowed[unit] = {unit}.union(*(allowed[below] for below in BUILDS_ON[unit]))
    return allowed


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(source: str, name: str, is_package: bool) -> set[str]:
    """Absolute names of the ptxdwarf modules (or names of a package) that the module
    ``name`` with text ``source`` imports."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("ptxdwarf"):
                if node.module is None or target in ("ptxdwarf", package):
                    found.update(f"{target}.{alias.name}" for alias in node.names)
                else:
                    found.add(target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ptxdwarf"))
    return found


def _unit(module: str) -> str:
    """The unit of a module (or of a name the package exports: ``ptxdwarf``)."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in TOP_LEVEL or parts[1] == "__init__":
        return "ptxdwarf"
    return UNIT_OF.get(parts[1], parts[1])


def violations(source: str, name: str, is_package: bool = False) -> list[str]:
    """What the module ``name`` with text ``source`` imports against the flow."""
    allowed = _allowed()[_unit(name)]
    found = []
    for target in sorted(_imports(source, name, is_package)):
        if _unit(target) not in allowed:
            found.append(f"{name} ({_unit(name)}) must not import {target} ({_unit(target)})")
    return found


def _library_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_declared_order_is_acyclic_and_complete() -> None:
    for unit, below in BUILDS_ON.items():
        assert set(below) <= set(BUILDS_ON), unit
    graphlib.TopologicalSorter(BUILDS_ON).prepare()  # CycleError on a cycle
    units = {_unit(_module_name(p)) for p in _library_modules()}
    assert units <= set(BUILDS_ON), sorted(units - set(BUILDS_ON))
    assert set(UNIT_OF.values()) <= set(BUILDS_ON)


@pytest.mark.parametrize("path", _library_modules(), ids=lambda p: _module_name(p))
def test_imports_follow_the_layers(path: Path) -> None:
    assert violations(path.read_text(), _module_name(path), path.name == "__init__.py") == []


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("ptxdwarf.dwarf.decode", "from ..ptx.reader import parse_ptx\n"),
        ("ptxdwarf.dwarf.decode", "from .. import check\n"),
        ("ptxdwarf.cuda.quirks", "def f():\n    from ..repair import sections\n"),
        ("ptxdwarf.cuda.quirks", "import ptxdwarf.attach\n"),
        ("ptxdwarf.lint.header", "from ..attach import check_debuggable\n"),
        ("ptxdwarf.fix", "def f():\n    from .api import edit_debug_sections\n"),
        ("ptxdwarf.autodebug.entry", "from .. import read\n"),
        ("ptxdwarf.attach", "from .autodebug import attach_ptx\n"),
        ("ptxdwarf.builder.core", "from ..attach import attach\n"),
        ("ptxdwarf.check", "from ..lint import lint\n"),
        ("ptxdwarf.api", "from .cli import main\n"),
    ],
)
def test_the_checker_sees_a_violation(name: str, source: str) -> None:
    assert len(violations(source, name, name == "ptxdwarf.check")) == 1


def test_the_checker_lets_the_flow_through() -> None:
    assert violations("from ..cuda.quirks import workaround\n", "ptxdwarf.builder.core") == []
    assert violations("from .ptx.debug import edit_debug_sections\n", "ptxdwarf.fix") == []
    assert violations("from .builder import Type\n", "ptxdwarf.abi") == []
    assert violations("from . import __version__\nfrom .autodebug import attach_ptx\n", "ptxdwarf.cli") == []


def test_the_command_line_starts_without_the_whole_library() -> None:
    import subprocess
    import sys

    code = "import sys, ptxdwarf.cli; print(sorted(m for m in sys.modules if m.startswith('ptxdwarf.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(ast.literal_eval(out))
    assert "ptxdwarf.cli" in loaded
    heavy = {
        "ptxdwarf.dwarf.encode",
        "ptxdwarf.dwarf.decode",
        "ptxdwarf.builder",
        "ptxdwarf.check",
        "ptxdwarf.lint",
    }
    assert not loaded & heavy, sorted(loaded & heavy)


def test_tests_cannot_write_into_the_package(tmp_path: Path) -> None:
    from conftest import PACKAGE, writes_into_package

    with pytest.raises(AssertionError, match="writes into the package"):
        (PACKAGE / "_probe.py").write_text("x = 1\n")
    assert not (PACKAGE / "_probe.py").exists()
    assert writes_into_package(PACKAGE / "dwarf" / "x.py", "w")
    assert not writes_into_package(PACKAGE / "dwarf" / "x.py", "r")
    assert not writes_into_package(PACKAGE / "__pycache__" / "x.pyc", "wb")
    (tmp_path / "fine.txt").write_text("ok")
