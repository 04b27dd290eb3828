from typing import Any

def bind(
    built: type,
    die: type,
    symbol: type,
    reloc: type,
    location_list: type,
    block: type,
    kinds: tuple[int, ...],
) -> None: ...
def write_dies(enc: Any, root: Any, kept: Any) -> bool | None: ...
