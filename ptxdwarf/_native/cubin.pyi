from typing import Any

def _rows(
    kind: type[Any],
    data: bytes,
    pos: int,
    end: int,
    p: Any,
    lengths: list[int],
    symbols: dict[int, str],
) -> list[Any] | None: ...
def _entries(
    kind: type[Any], data: bytes, spans: list[tuple[int, int]], types: bytes | None, where: str
) -> tuple[Any, ...] | None: ...
