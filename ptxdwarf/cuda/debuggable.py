"""Code ptxas cannot compile with debug info, whatever the debug sections say."""

from __future__ import annotations

from ..ptx.module import PtxModule

__all__ = ["not_debuggable"]


def not_debuggable(module: PtxModule) -> list[tuple[int, str]]:
    """(line, what) of each piece of code ptxas cannot compile with debug info, whatever the
    sections say: quirk scoped-initializer (a ``.global``/``.const`` with an initializer inside a
    function body: SIGSEGV) and quirk multiple-returns (a ``.func`` returning several values)."""
    found = [
        (
            v.line,
            f".{v.space} {v.name} has an initializer inside {f.name}: ptxas -g crashes on it (SIGSEGV); "
            "declare it at module scope",
        )
        for f, v in module.symbols.scoped_initialized()
    ]
    found += [
        (
            f.line,
            f".func {f.name} returns {len(f.returns)} values: ptxas -g refuses it ('Function with multiple "
            "return values is not allowed with ABI')",
        )
        for f in module.functions
        if len(f.returns) > 1
    ]
    return sorted(found)
