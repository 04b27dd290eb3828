from typing import Any

def scan_code(
    masked: str, filename: str, lines: Any
) -> tuple[list[list[object]], list[list[object]], list[list[object]], list[str]] | None: ...
