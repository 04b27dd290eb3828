"""Differences between two DIE trees, path by path."""

from __future__ import annotations

from ..dwarf.constants import at_name, form_name, tag_name
from ..dwarf.image import Block
from ..dwarf.model import DIE, DebugInfo

__all__ = ["assert_dies_equal", "die_diff"]


def _render(die: DIE) -> list[str]:
    out = []
    for a in die.attributes:
        value = a.value
        if isinstance(value, DIE):
            text = f"-> {value.describe()}"
        elif a.is_reference and isinstance(a.target, int):
            text = f"-> 0x{a.target:x}"
        elif isinstance(value, Block):
            text = value.hex()
        else:
            text = repr(value)
        out.append(f"{at_name(a.name)} [{form_name(a.form or 0)}] {text}")
    return out


def die_diff(a: DIE, b: DIE, *, compare_offsets: bool = False) -> list[str]:
    """Lines describing how tree ``b`` differs from tree ``a`` (empty when equal)."""
    lines: list[str] = []
    stack: list[tuple[DIE, DIE, str]] = [(a, b, "")]
    while stack:
        x, y, path = stack.pop()
        here = f"{path}/{x.name or tag_name(x.tag)[7:]}" if path else (x.name or tag_name(x.tag)[7:])
        if x.tag != y.tag:
            lines.append(f"{here}: tag {tag_name(x.tag)} != {tag_name(y.tag)}")
            continue
        if compare_offsets and x.offset != y.offset:
            lines.append(f"{here}: offset 0x{x.offset:x} != 0x{y.offset:x}")
        ra, rb = _render(x), _render(y)
        if ra != rb:
            for line in ra:
                if line not in rb:
                    lines.append(f"{here}: - {line}")
            for line in rb:
                if line not in ra:
                    lines.append(f"{here}: + {line}")
        if len(x.children) != len(y.children):
            lines.append(f"{here}: {len(x.children)} children != {len(y.children)}")
        stack.extend((c, d, here) for c, d in reversed(list(zip(x.children, y.children, strict=False))))
    return lines


def assert_dies_equal(a: DIE | DebugInfo, b: DIE | DebugInfo, *, compare_offsets: bool = False) -> None:
    """Fail with a path-by-path diff unless the two DIE trees are equal."""
    roots_a = [u.die for u in a.units if u.die is not None] if isinstance(a, DebugInfo) else [a]
    roots_b = [u.die for u in b.units if u.die is not None] if isinstance(b, DebugInfo) else [b]
    lines: list[str] = []
    if len(roots_a) != len(roots_b):
        lines.append(f"{len(roots_a)} unit(s) != {len(roots_b)} unit(s)")
    for x, y in zip(roots_a, roots_b, strict=False):
        lines.extend(die_diff(x, y, compare_offsets=compare_offsets))
    if lines:
        shown = "\n  ".join(lines[:50])
        more = f"\n  ... and {len(lines) - 50} more" if len(lines) > 50 else ""
        raise AssertionError(f"DIE trees differ:\n  {shown}{more}")
