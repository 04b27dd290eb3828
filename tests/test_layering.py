"""Data flows one way: dwarf <- ptx <- cuda <- features <- cli.

Each module's imports of other ptxdwarf modules are read from its source (including imports
inside functions) and checked against the layer it belongs to.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ptxdwarf
import ptxdwarf.dwarf
import ptxdwarf.dwarf.encode
import ptxdwarf.ptx

PACKAGE = Path(ptxdwarf.__file__).parent

# What each layer may import, besides itself.
ALLOWED = {
    "errors": set(),
    "dwarf": {"errors", "_exports"},
    "ptx": {"errors", "dwarf"},
    "cuda": {"errors", "dwarf", "ptx", "_exports"},
}


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
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", _library_modules(), ids=lambda p: _module_name(p))
def test_imports_follow_the_layers(path: Path) -> None:
    name = _module_name(path)
    layer = _layer(name)
    for target in _imports(path):
        tparts = target.split(".")
        if len(tparts) < 2:
            continue
        tlayer = tparts[1]
        if layer in ALLOWED and tlayer != layer:
            assert tlayer in ALLOWED[layer], f"{name} ({layer}) must not import {target}"
        if tlayer in ("cli", "__main__"):
            assert layer in ("cli", "__main__"), f"{name} imports the command line ({target})"


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = PACKAGE / "dwarf" / "_layering_probe.py"
    bad.write_text("from ..ptx.reader import parse_ptx\nfrom .. import check\n")
    try:
        assert {"ptxdwarf.ptx.reader", "ptxdwarf.check"} <= _imports(bad)
    finally:
        bad.unlink()


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
        "ptxdwarf.checker",
        "ptxdwarf.linter",
    }
    assert not loaded & heavy, sorted(loaded & heavy)
