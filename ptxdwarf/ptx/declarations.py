"""Reading a declaration statement: the names it declares, with their state space, type,
alignment, array dimensions or register count."""

from __future__ import annotations

import re

from .lexer import DECL_WORDS, SYMBOL
from .module import TYPE_SIZES, PtxVariable

__all__ = ["Fields", "parse_declaration", "simple_declaration"]

_DECLARATOR = re.compile(
    r"(?P<name>" + SYMBOL + r")\s*(?:<\s*(?P<count>\d+)\s*>)?(?P<dims>(?:\s*\[\s*\d*\s*\])*)\s*$"
)
_TYPES = frozenset(TYPE_SIZES) | {".v2", ".v4", ".v8"}
#: ``.reg .b32 %r<4>``, ``.local .align 8 .b8 __local_depot0[16]``: one name, one type,
#: at most an alignment and a count or one dimension.
_SIMPLE_DECLARATION = re.compile(
    r"\.(" + "|".join(DECL_WORDS) + r")\s+(?:\.align\s+([1-9][0-9]*)\s+)?(\.\w+)\s+(" + SYMBOL + r")"
    r"(?:\s*<\s*([0-9]+)\s*>|\s*\[\s*([0-9]+)\s*\])?"
)


#: The fields of a :class:`PtxVariable`, in order.
Fields = tuple[str, str, str, int, int | None, tuple[int, ...], int | None, None, str, bool]


def simple_declaration(text: str, line: int) -> Fields | None:
    """The fields of the one variable a declaration statement of the simple form
    (``.reg .b32 %r<4>``, ``.local .align 8 .b8 __local_depot0[16]``, ``.global .u32 g = 1``:
    one name, one type, at most an alignment and a count or one dimension) declares; no ``;``.
    None for any other statement."""
    text, equals, _ = text.partition("=")
    text = text.strip()
    simple = _SIMPLE_DECLARATION.fullmatch(text)
    if simple is None or simple.group(3) not in TYPE_SIZES:
        return None
    groups: tuple[str, str | None, str, str, str | None, str | None] = simple.groups()  # type: ignore[assignment]
    space_word, align_word, type_word, name, count, dim = groups
    return (
        name,
        space_word,
        type_word,
        line,
        int(align_word) if align_word else None,
        (int(dim),) if dim else (),
        int(count) if count else None,
        None,
        text,
        bool(equals),
    )


def parse_declaration(text: str, line: int) -> list[PtxVariable]:
    """The names a declaration statement (``.reg .b32 %r<4>``, ``.param .align 8 .b8 p[24]``,
    ``.global .u32 g = 1``) declares; no ``;``."""
    simple = simple_declaration(text, line)
    if simple is not None:
        return [PtxVariable(*simple)]
    text, equals, _ = text.partition("=")
    text = text.strip()
    initialized = bool(equals)
    m = re.match(r"\.(\w+)", text)
    if m is None:
        return []
    space = m.group(1)
    rest = text[m.end() :]
    type_: str | None = None
    align: int | None = None
    pointer_space: str | None = None
    words = rest.replace(",", " , ").split()
    declarators: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == ".align" and i + 1 < len(words):
            try:
                align = int(words[i + 1], 0)
            except ValueError:
                pass
            i += 2
            continue
        if w == ".ptr":
            i += 1
            continue
        if w in (".global", ".shared", ".const", ".local") and type_ is not None:
            pointer_space = w[1:]
            i += 1
            continue
        if w.startswith(".") and not current:
            if (
                w in _TYPES or w in TYPE_SIZES or re.fullmatch(r"\.[busf]\d+(x2)?|\.pred|\.b128", w)
            ) and not w.startswith(".v"):
                type_ = w
            i += 1
            continue
        if w == ",":
            declarators.append(" ".join(current))
            current = []
        else:
            current.append(w)
        i += 1
    if current:
        declarators.append(" ".join(current))
    out = []
    for d in declarators:
        dm = _DECLARATOR.match(d.strip())
        if dm is None:
            continue
        dims = tuple(
            int(x) if x.strip() else -1 for x in re.findall(r"\[\s*(\d*)\s*\]", dm.group("dims") or "")
        )
        out.append(
            PtxVariable(
                dm.group("name"),
                space,
                type_,
                line,
                align,
                dims,
                int(dm.group("count")) if dm.group("count") else None,
                pointer_space,
                text,
                initialized,
            )
        )
    return out
