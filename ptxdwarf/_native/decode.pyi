from collections.abc import Callable
from typing import Any

def model(die: type, attribute: type, unit: type, block: type, reloc: type, symbol: type) -> None: ...
def decode_units(
    image: Any, tables: Any, strings: Any, resolve: Callable[[Any], int]
) -> list[Any] | None: ...
