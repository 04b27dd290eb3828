"""The native core: compiled kernels, each the twin of one readable Python function.

Each kernel module ``ptxdwarf._native.<name>`` is built from ``<name>.c`` by the package's
build. The Python function a kernel replaces stays the reference: it is what runs when the
kernel is not built or ``PTXDWARF_PURE=1`` is set, and what the differential tests hold the
kernel to. A kernel never decides an error: on input it does not take it returns ``None``, and
the reference runs, raising the error with its place. :func:`twin` makes the pair.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import Generic, ParamSpec, TypeVar

#: Every kernel module the build makes (one per ``.c`` file of this directory).
KERNELS: tuple[str, ...] = (
    "compare",
    "cubin",
    "decode",
    "dumptext",
    "encode",
    "regmap",
    "scan",
    "sections",
    "visibility",
    "writer",
)

#: True when ``PTXDWARF_PURE`` asks for the pure-Python reference.
PURE = os.environ.get("PTXDWARF_PURE", "") not in ("", "0")

#: True when ``PTXDWARF_NATIVE_CHECK`` asks every call to run both sides and compare them (the
#: fuzzer's oracle): a difference raises :class:`TwinMismatch`.
CHECK = os.environ.get("PTXDWARF_NATIVE_CHECK", "") not in ("", "0")

P = ParamSpec("P")
R = TypeVar("R")

_loaded: dict[str, ModuleType | None] = {}


def kernel(name: str) -> ModuleType | None:
    """The compiled kernel module ``name``, or None (not built, or ``PTXDWARF_PURE=1``)."""
    if name not in KERNELS:
        raise ValueError(f"no native kernel {name!r}")
    if name not in _loaded:
        module: ModuleType | None = None
        if not PURE:
            try:
                module = importlib.import_module(f".{name}", __name__)
            except ImportError:
                module = None
        _loaded[name] = module
    return _loaded[name]


class TwinMismatch(AssertionError):
    """A kernel and its reference disagreed on one input (``PTXDWARF_NATIVE_CHECK=1``)."""


class Twin(Generic[P, R]):
    """A function with a native twin: calls run the twin where it is built and takes the input,
    else :attr:`reference`."""

    __name__: str

    def __init__(
        self,
        reference: Callable[P, R],
        native: Callable[P, R | None] | None,
        compare: Callable[..., object] | None = None,
        checkable: bool = True,
    ) -> None:
        self.reference = reference
        self.native = native
        self.compare = compare
        self.checkable = checkable
        functools.update_wrapper(self, reference)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if CHECK and self.native is not None and self.checkable:
            return self.checked(*args, **kwargs)
        if self.native is not None:
            result = self.native(*args, **kwargs)
            if result is not None:
                return result
        return self.reference(*args, **kwargs)

    def checked(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Both sides on one input: the reference's value, where the kernel gave the same or
        declined; :class:`TwinMismatch` where it gave another value or took what the
        reference rejects."""
        assert self.native is not None
        got = self.native(*args, **kwargs)
        try:
            expected = self.reference(*args, **kwargs)
        except Exception:
            if got is not None:
                raise TwinMismatch(f"{self.__name__}: the kernel takes input the reference rejects") from None
            raise
        if got is not None and self._form(got, args, kwargs) != self._form(expected, args, kwargs):
            raise TwinMismatch(f"{self.__name__}: the kernel and the reference differ")
        return expected

    def _form(self, result: object, args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        return result if self.compare is None else self.compare(result, *args, **kwargs)


def twin(
    name: str, compare: Callable[..., object] | None = None, checkable: bool = True
) -> Callable[[Callable[P, R]], Twin[P, R]]:
    """Decorate a reference function with its twin of the same name in kernel module ``name``.

    ``compare(result, *args)`` gives a result in a form ``==`` compares by value, for results
    whose objects compare by identity; ``checkable=False`` keeps a twin that acts on its
    arguments (rather than only returning) out of ``PTXDWARF_NATIVE_CHECK``'s double runs: its
    differential tests hold it to the reference instead."""

    def pair(reference: Callable[P, R]) -> Twin[P, R]:
        module = kernel(name)
        native = getattr(module, reference.__name__) if module is not None else None
        return Twin(reference, native, compare, checkable)

    return pair


def describe() -> str:
    """Which core runs, for ``ptxdwarf --version``."""
    if PURE:
        return "pure Python core: PTXDWARF_PURE=1"
    built = [name for name in KERNELS if kernel(name) is not None]
    if not built:
        return "pure Python core: the native extension is not built"
    missing = [name for name in KERNELS if name not in built]
    if missing:
        return f"native core, without {', '.join(missing)}: not built"
    return "native core"
