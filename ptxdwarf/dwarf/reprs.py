"""How the model's objects show themselves in a repr: a name, counts and offsets, a long name
cut in its middle, never a text or bytes (a failing test prints them)."""

from __future__ import annotations

__all__ = ["at", "counted", "short"]

#: The most characters of a name a repr shows.
WIDTH = 48


def short(text: object, width: int = WIDTH) -> str:
    """``text`` (``str()`` of it), its middle cut to ``...`` when it is longer than ``width``."""
    s = str(text)
    if len(s) <= width:
        return s
    keep = width - 3
    return s[: keep - keep // 2] + "..." + s[len(s) - keep // 2 :]


def counted(n: int, what: str, plural: str | None = None) -> str:
    """``1 unit``, ``3 units`` (``plural``: the plural when it is not ``what`` + s)."""
    return f"{n} {what}" if n == 1 else f"{n} {plural or what + 's'}"


def at(offset: int) -> str:
    """`` at 0x1c`` for an offset, "" for none (-1)."""
    return f" at 0x{offset:x}" if offset >= 0 else ""
