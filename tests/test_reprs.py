"""Every model object the public API gives has a short repr (a name, counts, offsets; never
the text or the bytes), so that a failing test's output stays readable: walked from what
``read``, ``read_all``, the cubin readers, the PTX reader and the testing helpers return on
the largest fixtures."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from conftest import FIXTURES

import ptxdwarf
from ptxdwarf.cuda import cubin_images, read_cubin
from ptxdwarf.cuda.cubin import elf_contents
from ptxdwarf.cuda.fatbin import iter_fatbin
from ptxdwarf.ptx import parse_ptx
from ptxdwarf.testing import CompiledCubin, Query, query

LIMIT = 200
#: Items of a list, tuple or mapping looked at: the first and the last few.
SAMPLE = 6


def _largest(pattern: str) -> Path:
    return max(FIXTURES.glob(pattern), key=lambda p: p.stat().st_size)


LARGEST_PTX = _largest("**/*.ptx")
LARGEST_CUBIN = _largest("**/*.cubin")
FATBIN = FIXTURES / "nvcc" / "call_example.sm_75.nocompress.fatbin"
#: A module with more kinds of debug section (strings, location lists, macinfo).
RICH_PTX = FIXTURES / "nvcc" / "rich.sm_75.ptx"


def _sample(items: list[object]) -> list[object]:
    return items if len(items) <= 2 * SAMPLE else items[:SAMPLE] + items[-SAMPLE:]


def _is_model(value: object) -> bool:
    module = type(value).__module__
    return module.startswith("ptxdwarf.") and not isinstance(value, (type, types.ModuleType, BaseException))


def _attributes(value: object) -> Iterator[tuple[str, object]]:
    """The public attributes and properties of ``value`` that are not methods."""
    names: set[str] = set()
    if dataclasses.is_dataclass(value):
        names |= {f.name for f in dataclasses.fields(value)}
    names |= set(getattr(value, "__dict__", {}))
    for klass in type(value).__mro__:
        names |= {n for n, v in vars(klass).items() if not callable(v) and hasattr(type(v), "__get__")}
        names |= set(getattr(klass, "_fields", ()))
    for name in sorted(names):
        if name.startswith("_"):
            continue
        try:
            attr = getattr(value, name)
        except Exception:  # a property that does not apply to this object
            continue
        if not callable(attr) or _is_model(attr):
            yield name, attr


def walk(roots: list[object], limit: int = 20000) -> Iterator[tuple[str, object]]:
    """(path, object) of each model object reachable from ``roots``, once each."""
    seen: set[int] = set()
    stack: list[tuple[str, object]] = [(f"root{i}", r) for i, r in enumerate(roots)]
    while stack and len(seen) < limit:
        path, value = stack.pop()
        if id(value) in seen or isinstance(value, str | bytes | int | float | bool | type(None)):
            continue
        seen.add(id(value))
        if isinstance(value, Mapping):
            keys = _sample(list(value.keys()))
            stack.extend((f"{path}[{k!r}]", value[k]) for k in keys)
        elif isinstance(value, list | tuple | set | frozenset) and not _is_model(value):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(_sample(list(value))))
        if _is_model(value):
            yield path, value
            if not isinstance(value, Mapping):
                stack.extend((f"{path}.{n}", v) for n, v in _attributes(value))
                if isinstance(value, tuple | list):
                    stack.extend((f"{path}[{i}]", v) for i, v in enumerate(_sample(list(value))))
                elif hasattr(type(value), "__iter__") and not isinstance(value, str | bytes):
                    stack.extend((f"{path}[{i}]", v) for i, v in enumerate(_sample(list(value))))  # type: ignore[call-overload]


def _queried(q: Query) -> list[object]:
    """What the lookups of ``q`` give: each function, its parameters and their locations."""
    found: list[object] = [q]
    for f in q.functions:
        found += [f, *f.parameters, *(p.location for p in f.parameters), *(p.type for p in f.parameters)]
    return found


def _roots() -> list[tuple[str, list[object]]]:
    ptx = ptxdwarf.read(LARGEST_PTX)
    ptx.load_all()
    cubin = ptxdwarf.read(LARGEST_CUBIN)
    cubin.load_all()
    data = LARGEST_CUBIN.read_bytes()
    compiled = CompiledCubin(data, "sm_75", LARGEST_PTX.read_text(), "13.0")
    return [
        (LARGEST_PTX.name, [ptx, parse_ptx(LARGEST_PTX.read_text()), *_queried(query(ptx))]),
        (RICH_PTX.name, [ptxdwarf.read(RICH_PTX)]),
        (
            LARGEST_CUBIN.name,
            [
                cubin,
                read_cubin(data),
                cubin_images(data),
                elf_contents(data),
                compiled,
                compiled.register_locations(),
                read_cubin(data).line_table,
                *_queried(query(cubin)),
            ],
        ),
        (FATBIN.name, [*ptxdwarf.read_all(FATBIN), *iter_fatbin(FATBIN.read_bytes())]),
    ]


@pytest.mark.parametrize("roots", [pytest.param(roots, id=name) for name, roots in _roots()])
def test_every_model_repr_is_short(roots: list[object]) -> None:
    long: dict[str, tuple[str, int]] = {}
    kinds: set[str] = set()
    for path, value in walk(roots):
        kind = type(value).__qualname__
        kinds.add(kind)
        size = len(repr(value))
        if size > LIMIT and kind not in long:
            long[kind] = (path, size)
    assert not long, "\n".join(f"{k}: {size} characters at {p}" for k, (p, size) in sorted(long.items()))
    assert len(kinds) >= 8, sorted(kinds)  # the walk reached the model
