"""Renaming registers whose names are too long for ``DW_OP_regx``.

Every long-named register is renamed (all registers of a ``<N>`` range together,
the same long name to the same short name across functions) to ``%Ra0...``
(ranges) or ``%Sa`` (single registers), names the module does not use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from ..dwarf.expr import MAX_REGISTER_NAME
from ..ptx.module import PtxFunction, PtxModule
from .scan import IDENT, identifiers

_RANGE_OPEN = re.compile(r"\s*<")


def fits(name: str) -> bool:
    """``DW_OP_regx`` can name the register ``name``."""
    try:
        return 0 < len(name.encode("ascii")) <= MAX_REGISTER_NAME
    except UnicodeEncodeError:
        return False


def _letters(k: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa ... (no digits, so a base followed by digits is unambiguous)."""
    out = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def _without_digits(name: str) -> str:
    """``name`` without the digits it ends with."""
    end = len(name)
    while end and name[end - 1].isdigit():
        end -= 1
    return name[:end]


def _fresh_names(prefix: str, taken: Callable[[str], bool]) -> Iterator[str]:
    """``prefix`` + a, b, ... z, aa, ...: those for which ``taken`` is false, in order."""
    k = 0
    while True:
        new = prefix + _letters(k)
        k += 1
        if not taken(new):
            yield new


@dataclass
class Renames:
    """The register renames of a module, made by :func:`rename_registers` as edits of
    its text."""

    edits: list[tuple[int, int, str]] = field(default_factory=list)
    """(start, end, new name) of each register token renamed."""
    by_function: dict[int, dict[str, str]] = field(default_factory=dict)
    """Index of a function in ``module.functions`` -> its registers' new names."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Every register renamed, old name -> new name, sorted."""
    warnings: list[str] = field(default_factory=list)

    def name(self, function: int, register: str) -> str:
        """The name of ``register`` of function ``function`` after renaming."""
        names = self.by_function.get(function)
        return names.get(register, register) if names else register


def rename_registers(module: PtxModule, masked: str) -> Renames:
    """Rename every register whose name (or a range member's) exceeds 8 characters."""
    long_ranges, long_scalars = _long_registers(module)
    out = Renames()
    if not long_ranges and not long_scalars:
        return out
    base_map, scalar_map = _new_names(module, masked, long_ranges, long_scalars, out.warnings)
    renamed: dict[str, str] = {}
    for index, f in enumerate(module.functions):
        ranges = {
            v.name: v.count
            for v in f.declarations
            if v.space == "reg" and v.count is not None and v.name in base_map
        }
        scalars = {
            v.name for v in f.declarations if v.space == "reg" and v.count is None and v.name in scalar_map
        }
        if not ranges and not scalars:
            continue
        own = out.by_function[index] = {name: scalar_map[name] for name in scalars}
        _rename_in_function(masked, f, ranges, scalars, base_map, scalar_map, own, renamed, out.edits)
        for base, count in ranges.items():
            for i in range(count or 0):
                own.setdefault(f"{base}{i}", f"{base_map[base]}{i}")
    for base, count in ((b, c) for b, c in long_ranges.items() if b in base_map):
        for i in range(count):
            renamed.setdefault(f"{base}{i}", f"{base_map[base]}{i}")
    out.renamed = dict(sorted(renamed.items()))
    return out


def _long_registers(module: PtxModule) -> tuple[dict[str, int], set[str]]:
    """The register ranges (base -> largest count) and scalars whose names do not fit."""
    long_ranges: dict[str, int] = {}
    long_scalars: set[str] = set()
    for f in module.functions:
        for v in f.declarations:
            if v.space != "reg":
                continue
            if v.count is not None:
                if v.count and not fits(f"{v.name}{v.count - 1}"):
                    long_ranges[v.name] = max(long_ranges.get(v.name, 0), v.count)
            elif not fits(v.name):
                long_scalars.add(v.name)
    return long_ranges, long_scalars


def _new_names(
    module: PtxModule,
    masked: str,
    long_ranges: dict[str, int],
    long_scalars: set[str],
    warnings: list[str],
) -> tuple[dict[str, str], dict[str, str]]:
    """The new base of each long range and the new name of each long scalar, none of them
    a name the module already uses."""
    tokens = identifiers(masked)
    declared_bases = {
        v.name for f in module.functions for v in f.declarations if v.space == "reg" and v.count is not None
    }
    base_map: dict[str, str] = {}
    # A new base ends with a letter: the module uses it, alone or followed by digits,
    # when it is the stem of one of the module's identifiers.
    stems = {_without_digits(t) for t in tokens}
    names = _fresh_names("%R", lambda new: new in declared_bases or new in stems)
    for base in sorted(long_ranges):
        new = next(names)
        if not fits(f"{new}{long_ranges[base] - 1}"):
            warnings.append(
                f"register range {base}<{long_ranges[base]}> is too large to rename to names of 8 characters"
            )
            continue
        base_map[base] = new
    scalar_map: dict[str, str] = {}
    bases = declared_bases | set(base_map.values())
    names = _fresh_names(
        "%S", lambda new: new in tokens or any(new.startswith(b) and new[len(b) :].isdigit() for b in bases)
    )
    for name in sorted(long_scalars):
        scalar_map[name] = next(names)
    return base_map, scalar_map


def _rename_in_function(
    masked: str,
    f: PtxFunction,
    ranges: Mapping[str, int | None],
    scalars: set[str],
    base_map: dict[str, str],
    scalar_map: dict[str, str],
    own: dict[str, str],
    renamed: dict[str, str],
    edits: list[tuple[int, int, str]],
) -> None:
    """The edits that rename the registers of ``f``'s body; each new name goes to ``own``
    (the function's) and ``renamed`` (the module's)."""
    for m in IDENT.finditer(masked, f.body_start, f.body_end):
        tok = m.group(1)
        if tok in scalars:
            new = scalar_map[tok]
            renamed[tok] = own[tok] = new
            edits.append((m.start(1), m.end(1), new))
            continue
        if tok in ranges and _RANGE_OPEN.match(masked, m.end(1)):
            edits.append((m.start(1), m.end(1), base_map[tok]))
            continue
        for base, count in ranges.items():
            rest = tok[len(base) :]
            if (
                tok.startswith(base)
                and rest.isdigit()
                and (rest == "0" or rest[0] != "0")
                and int(rest) < (count or 0)
            ):
                new = base_map[base] + rest
                renamed[tok] = own[tok] = new
                edits.append((m.start(1), m.end(1), new))
                break
