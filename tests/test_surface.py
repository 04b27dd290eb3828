"""The public surface: what docs/api.md lists is what each namespace exports, and a name a
package exports that is also the name of one of its modules is that module."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import ptxdwarf

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = ("ptxdwarf", "ptxdwarf.dwarf", "ptxdwarf.cuda", "ptxdwarf.testing")
#: The tasks that are modules of the top level, each with its function of the same name.
TASK_MODULES = ("attach", "check", "fix", "lint", "stats", "strip")
#: The top-level modules that only re-exported a moved module, removed.
OLD_PATHS = [
    "constants",
    "cubin",
    "decode",
    "encode",
    "expr",
    "fatbin",
    "forms",
    "image",
    "model",
    "ptxas",
    "ptxwriter",
    "schemas",
    "shapes",
]


def _documented() -> dict[str, list[str]]:
    """Namespace -> the names in the first column of its table in docs/api.md."""
    text = (ROOT / "docs" / "api.md").read_text()
    found: dict[str, list[str]] = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        heading = re.match(r"`([\w.]+)`", section)
        if heading is None or heading.group(1) not in PUBLIC:
            continue
        found[heading.group(1)] = re.findall(r"^\| `(\w+)` \|", section, flags=re.M)
    return found


def test_every_public_namespace_is_documented() -> None:
    assert sorted(_documented()) == sorted(PUBLIC)


@pytest.mark.parametrize("namespace", PUBLIC)
def test_all_is_the_documented_surface(namespace: str) -> None:
    module = importlib.import_module(namespace)
    names = _documented()[namespace]
    assert len(names) == len(set(names)), "a name is listed twice"
    assert sorted(module.__all__) == sorted(names)
    modules = {name for name in module.__all__ if isinstance(getattr(module, name), types.ModuleType)}
    assert modules == (set(TASK_MODULES) if namespace == "ptxdwarf" else set())


def test_the_top_level_surface_is_small() -> None:
    assert len(ptxdwarf.__all__) <= 45


def _packages() -> list[str]:
    found = ["ptxdwarf"]
    for info in pkgutil.walk_packages(ptxdwarf.__path__, "ptxdwarf."):
        if info.ispkg:
            found.append(info.name)
    return found


@pytest.mark.parametrize("package", _packages())
def test_an_exported_name_of_a_module_is_that_module(package: str) -> None:
    module = importlib.import_module(package)
    for name in getattr(module, "__all__", ()):
        if importlib.util.find_spec(f"{package}.{name}") is not None:
            assert getattr(module, name) is importlib.import_module(f"{package}.{name}"), (
                f"{package} exports {name!r}, which is also a module's name, as something else"
            )


@pytest.mark.parametrize("first", ["dotted", "attribute"])
def test_a_dotted_import_gives_the_module_with_its_task(first: str) -> None:
    tasks = ", ".join(f"ptxdwarf.{name}" for name in TASK_MODULES)
    code = (
        "import types, ptxdwarf\n"
        + ("import " + tasks + "\n" if first == "dotted" else "print(" + tasks + ")\n")
        + "import ptxdwarf.lint as L, ptxdwarf.check as C, ptxdwarf.attach as A, ptxdwarf.fix as F\n"
        + "import ptxdwarf.strip as S, ptxdwarf.repair as R, ptxdwarf.stats as T\n"
        + "print(all(isinstance(m, types.ModuleType) for m in (L, C, A, F, S, R, T)), bool(L.RULES))\n"
        + "print(all(isinstance(getattr(m, m.__name__.rsplit('.')[-1]), types.FunctionType) "
        + "for m in (L, C, A, F, S, T)), all(getattr(ptxdwarf, m.__name__[9:]) is m for m in (L, C, A, F, S, T)))\n"
        + "print(isinstance(ptxdwarf.read, types.FunctionType), isinstance(ptxdwarf.rewrite, types.FunctionType))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[-6:] == ["True"] * 6


@pytest.mark.parametrize("old", OLD_PATHS)
def test_no_old_import_path(old: str) -> None:
    assert importlib.util.find_spec(f"ptxdwarf.{old}") is None
    assert not hasattr(ptxdwarf, old)


def test_read_takes_one_input_of_any_kind() -> None:
    ptx = ROOT / "fixtures" / "spec" / "example.ptx"
    cubin = ROOT / "fixtures" / "cubins" / "loops.debugopt.sm_75.cubin"
    by_path = ptxdwarf.read(ptx)
    by_text = ptxdwarf.read(text=ptx.read_text(), filename=str(ptx))
    by_data = ptxdwarf.read(data=ptx.read_bytes(), filename=str(ptx))
    assert [d.offset for d in by_path.iter_dies()] == [d.offset for d in by_text.iter_dies()]
    assert [d.offset for d in by_path.iter_dies()] == [d.offset for d in by_data.iter_dies()]
    assert ptxdwarf.read(cubin).source == "cubin"
    assert ptxdwarf.read(data=cubin.read_bytes()).source == "cubin"
    fatbin = ROOT / "fixtures" / "nvcc" / "call_example.sm_75.fatbin"
    assert len(ptxdwarf.read_all(fatbin)) >= 1
    with pytest.raises(TypeError):
        ptxdwarf.read(ptx, text="x")
    with pytest.raises(TypeError):
        ptxdwarf.read()
