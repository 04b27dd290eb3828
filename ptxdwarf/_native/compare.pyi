from ptxdwarf.dwarf.image import Block, Symbol

def placed_entries(
    entries: list[tuple[Symbol | int, Symbol | int, Block | None]],
    got: list[tuple[Symbol | int, Symbol | int, Block | None]],
    functions: list[tuple[str | None, str | None]],
    placed: dict[str, Symbol],
) -> tuple[int, list[int]] | None: ...
