from collections.abc import Callable

from ..cuda.regmap import FunctionRegisters
from ..dwarf.model import DebugInfo
from ..visibility import RegisterLocation

def setup(
    die: type,
    attribute: type,
    block: type,
    symbol: type,
    location: type[RegisterLocation],
    registers: Callable[..., tuple[str, ...]],
    path_part: Callable[..., str],
    no_map: FunctionRegisters,
) -> None: ...
def _join(info: DebugInfo, functions: list[FunctionRegisters]) -> list[RegisterLocation] | None: ...
