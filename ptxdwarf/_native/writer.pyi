from typing import Any

LINE: int
MAX_VALUES: int
SWITCH: int
B64_LIMIT: int

def format_section(image: Any, style: str = ...) -> str | None: ...
