"""Data flows one way: dwarf <- ptx <- cuda <- features <- cli.

Each module's imports of other ptxdwarf modules are read from its source (including imports
inside functions) and checked against the layer it belongs to.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import ptxdwarf

PACKAGE = Path(ptxdwarf.__file__).parent

# What each layer may import, besides itself.
ALLOWED = {
    "errors": set(),
    "dwarf": {"errors"},
    "ptx": {"errors", "dwarf"},
    "cuda": {"errors", "dwarf", "ptx"},
}
OLD_PATHS = set(ptxdwarf._MOVED)


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of the ptxdwarf modules a module imports."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
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


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _library_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE or p.stem not in OLD_PATHS)


@pytest.mark.parametrize("path", _library_modules(), ids=lambda p: _module_name(p))
def test_imports_follow_the_layers(path: Path) -> None:
    name = _module_name(path)
    layer = _layer(name)
    for target in _imports(path):
        tparts = target.split(".")
        if len(tparts) < 2:
            continue
        tlayer = tparts[1]
        assert tlayer not in OLD_PATHS, f"{name} imports {target} through its old path"
        if layer in ALLOWED and tlayer != layer:
            assert tlayer in ALLOWED[layer], f"{name} ({layer}) must not import {target}"
        if tlayer in ("cli", "__main__"):
            assert layer in ("cli", "__main__"), f"{name} imports the command line ({target})"


def test_old_import_paths_are_the_moved_modules() -> None:

    for old, new in ptxdwarf._MOVED.items():
        assert importlib.import_module(f"ptxdwarf.{old}") is importlib.import_module(f"ptxdwarf.{new}")
        if old != "encode":
            assert getattr(ptxdwarf, old) is importlib.import_module(f"ptxdwarf.{new}")
    # The package exports a function of the same name; importing the old module path keeps it.
    assert (
        callable(ptxdwarf.encode)
        and ptxdwarf.encode is importlib.import_module("ptxdwarf.dwarf.encode").encode
    )


def test_the_checker_sees_a_violation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module of ``ptxdwarf.dwarf`` importing upwards, written outside the package and read as if in it."""
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path / "ptxdwarf")
    bad = tmp_path / "ptxdwarf" / "dwarf" / "_layering_probe.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from ..ptx.reader import parse_ptx\nfrom .. import check\n")
    assert {"ptxdwarf.ptx.reader", "ptxdwarf.check"} <= _imports(bad)


def _type_checking_imports() -> dict[str, str]:
    """Name -> module path (``"."``: the name is a submodule) of the imports under
    ``if TYPE_CHECKING`` in the package's ``__init__``."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    )
    found = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names:
            found[alias.asname or alias.name] = node.module or "."
    return found


def test_the_lazy_exports_are_what_type_checkers_see() -> None:
    origin = {name: module for module, names in ptxdwarf._EXPORTS.items() for name in names}
    assert origin == _type_checking_imports()
    assert sorted(ptxdwarf.__all__) == sorted([*origin, "__version__"])

    for name, module in origin.items():
        if module == ".":
            expected = importlib.import_module(f"ptxdwarf.{name}")
        else:
            expected = getattr(importlib.import_module(f"ptxdwarf.{module}"), name)
        assert getattr(ptxdwarf, name) is expected, name
    assert set(ptxdwarf.__all__) <= set(dir(ptxdwarf))


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


def test_a_submodule_import_keeps_the_function_of_its_name() -> None:
    import subprocess
    import sys

    code = (
        "import ptxdwarf.check, ptxdwarf.lint.run, ptxdwarf.attach, ptxdwarf; "
        "print(all(callable(f) and not isinstance(f, type(ptxdwarf)) "
        "for f in (ptxdwarf.check, ptxdwarf.lint, ptxdwarf.attach)), "
        "type(ptxdwarf.loc).__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "module"]
