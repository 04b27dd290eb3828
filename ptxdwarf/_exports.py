"""Public names imported on first use: a package lists them once, as the imports of its
``if TYPE_CHECKING:`` block, which type checkers read and this module reads at run time."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def _origins(path: str) -> dict[str, str]:
    """Name -> module (relative to the package) of the imports in ``path``'s ``if TYPE_CHECKING``
    block; ``""`` for a submodule the package exports (``from . import name as name``)."""
    import ast  # only here: the packages that use this module import it on every run

    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read(), path)
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    return {
        alias.asname or alias.name: node.module or ""
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def lazy_exports(
    package: str, path: str, namespace: dict[str, object]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` of the package ``package`` whose ``__init__`` is ``path``
    and whose globals are ``namespace``; ``__getattr__`` also gives ``__all__``. The block is
    read on the first name asked for, not when the package is imported."""
    found: dict[str, str] = {}

    def origins() -> dict[str, str]:
        if not found:
            found.update(_origins(path))
        return found

    def getattr_(name: str) -> object:
        if name == "__all__":
            value: object = sorted(origins())
        else:
            module = origins().get(name)
            if module is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            value = (
                getattr(importlib.import_module(f".{module}", package), name)
                if module
                else importlib.import_module(f".{name}", package)
            )
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *origins()})

    return getattr_, dir_
