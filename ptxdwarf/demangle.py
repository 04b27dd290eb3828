"""C++ names for the Itanium-mangled symbols PTX producers write.

:func:`demangle` turns ``_Z9clamp_addIiET_S0_S0_S0_S0_`` into
``int clamp_add<int>(int, int, int, int)``. It asks the C++ runtime's own
demangler, ``abi::__cxa_demangle`` (libstdc++'s is GCC's libiberty demangler,
the code GNU ``c++filt`` runs; libc++'s where that is the runtime), through
:mod:`ctypes`, so it reads whatever the compilers write: extended lambdas,
parameter packs, ``decltype``, ABI tags, local names, clone suffixes
(``.cold``, ``.constprop.0``).

The text is what ``c++filt`` prints, with two exceptions that come from the
runtime rather than from the name:

- ``__cxa_demangle`` has no verbose mode, so the abbreviations ``Ss``, ``Si``,
  ``So`` and ``Sd`` print as ``std::string``, ``std::istream``, ``std::ostream``
  and ``std::iostream`` (as g++ and gdb print them), where ``c++filt`` spells
  out ``std::basic_string<char, std::char_traits<char>, std::allocator<char> >``.
- a runtime older than the installed binutils may not know the newest
  manglings (libstdc++ 12 does not read ``DF16_``, ``_Float16``).

A name that is not ``_Z``-mangled, that the runtime cannot read, or any name
when no C++ runtime can be loaded gives None; callers keep the mangled name.
Like ``c++filt``, the runtime declines names over about 1000 characters
(libiberty's recursion limit), so no name can exhaust the C stack.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable

__all__ = ["demangle", "is_mangled"]

# Shared objects tried in order, then the libraries ``find_library`` finds by link name.
_SONAMES: tuple[str, ...] = ("libstdc++.so.6", "libc++.so.1", "libc++.1.dylib")
_LINK_NAMES: tuple[str, ...] = ("stdc++", "c++")

_Demangler = Callable[[bytes], str | None]


def _binding(library: ctypes.CDLL) -> _Demangler:
    """``__cxa_demangle`` of ``library`` as a function of the mangled bytes.

    Raises AttributeError when the library lacks ``__cxa_demangle`` or ``free``."""
    cxa_demangle = library["__cxa_demangle"]
    cxa_demangle.restype = ctypes.c_void_p
    cxa_demangle.argtypes = [
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_size_t),
        ctypes.POINTER(ctypes.c_int),
    ]
    # The process's free, the one the library's own malloc pairs with: a preloaded allocator
    # (a sanitizer's) replaces both, while the library's handle would name the C library's.
    free = ctypes.CDLL(None)["free"]
    free.restype = None
    free.argtypes = [ctypes.c_void_p]

    def run(mangled: bytes) -> str | None:
        status = ctypes.c_int(-1)
        pointer = cxa_demangle(mangled, None, None, ctypes.byref(status))
        if not pointer:
            return None
        try:
            text = ctypes.string_at(pointer)
        finally:
            free(pointer)
        return text.decode("utf-8", "replace") if status.value == 0 else None

    return run


def _load(names: tuple[str, ...]) -> _Demangler | None:
    """The demangler of the first of ``names`` that loads and has ``__cxa_demangle``."""
    for name in names:
        try:
            return _binding(ctypes.CDLL(name))
        except (OSError, AttributeError):
            continue
    return None


@functools.cache
def _runtime() -> _Demangler | None:
    """The C++ runtime's demangler, loaded once; None where there is none."""
    runtime = _load(_SONAMES)
    if runtime is None:
        found = (ctypes.util.find_library(link) for link in _LINK_NAMES)
        runtime = _load(tuple(name for name in found if name))
    return runtime


def is_mangled(name: str) -> bool:
    """Whether ``name`` looks like an Itanium C++ mangled name (``_Z...``)."""
    return name.startswith("_Z") and len(name) > 2


def demangle(name: str) -> str | None:
    """The C++ name for the mangled ``name`` (as ``c++filt`` prints it, see the module
    docstring), or None when it is not ``_Z``-mangled or cannot be demangled here."""
    if not is_mangled(name) or not name.isascii() or "\0" in name:
        return None
    runtime = _runtime()
    return runtime(name.encode("ascii")) if runtime is not None else None
