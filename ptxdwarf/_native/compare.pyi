from collections.abc import Callable, Sequence

from ptxdwarf.check.plan import LocalPlaces
from ptxdwarf.dwarf.image import Block, Symbol
from ptxdwarf.dwarf.model import DIE, Attribute

def placed_entries(
    entries: list[tuple[Symbol | int, Symbol | int, Block | None]],
    got: list[tuple[Symbol | int, Symbol | int, Block | None]],
    functions: list[tuple[str | None, str | None]],
    placed: dict[str, Symbol],
) -> tuple[int, list[int]] | None: ...
def labels_apart(
    labels: dict[str, int],
    placed: dict[str, Symbol],
    function: str,
    named: set[str],
    found_lines: dict[int, int],
    end: int,
    body_line: int,
) -> list[tuple[str, int, Symbol, int, int]] | None: ...
def walk_by_sites(
    theirs: list[DIE],
    order: Sequence[int],
    attributes: list[list[tuple[int, str | None, int | None, str, LocalPlaces | None]]],
    pcs: list[tuple[int, int, tuple[object, object]] | None],
    placed: dict[str, Symbol],
    local_counts: dict[tuple[object, ...], int],
    asize: int,
    differ: Callable[[int, int, Attribute], None],
    invert: Callable[[int, tuple[object, object], Symbol, Symbol], None],
) -> int | None: ...
