from ptxdwarf.dwarf.image import Block, Symbol

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
