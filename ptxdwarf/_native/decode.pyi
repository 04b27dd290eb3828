from collections.abc import Callable
from typing import Any

def model(
    die: type,
    attribute: type,
    unit: type,
    block: type,
    reloc: type,
    symbol: type,
    location_list: type,
    resolver: type,
) -> None: ...
def decode_units(
    image: Any, tables: Any, strings: Any, resolve: Callable[[Any], int]
) -> list[Any] | None: ...
def read_location_lists(
    image: Any, address_size: int, pos: int, model: list[Any] | None
) -> tuple[list[Any], int] | None: ...
def abbrev_entries(
    data: bytes, pos: int
) -> tuple[list[tuple[int, int, int, int, tuple[tuple[int, int], ...]]], int] | None: ...
def die_index(units: list[Any]) -> dict[int, Any] | None: ...
