from collections.abc import Iterator
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
    kind: type[Any], data: bytes, spans: bytes, types: bytes | None, where: str
) -> tuple[Any, ...] | None: ...
def _applied(
    reloc: type[Any],
    symbol: type[Any],
    raw: bytes,
    entries: bytes,
    rela: bool,
    elf64: bool,
    little: bool,
    values: list[int],
    names: list[str],
    decoded: bool,
    where: tuple[str, str, str],
) -> tuple[bytes, list[Any], dict[int, int], set[int]] | None: ...
def _scan_starts(
    data: bytes,
    pos: int,
    end: int,
    p: Any,
    lengths: list[int],
    symbols: dict[int, str],
    starts: dict[str, dict[int, int]],
) -> dict[str, dict[int, int]] | None: ...
def _sass_functions(data: bytes, where: str) -> list[tuple[str, bytes]] | None: ...
def _program_lines(opcodes: tuple[Any, ...], p: Any, string_at: Any, chunk: int) -> Iterator[str] | None: ...
def _program_rows_json(
    opcodes: tuple[Any, ...], p: Any, string_at: Any, encode: Any, chunk: int
) -> Iterator[str] | None: ...
def _entries_json(
    kind: type[Any], data: bytes, spans: bytes, types: bytes | None, where: str, encode: Any
) -> str | None: ...
def _section_list(
    kind: type[Any], table: bytes, names: bytes, elf64: bool, little: bool, file: Any, size: int, where: str
) -> list[Any] | None: ...
def _symbol_list(
    kind: type[Any], data: bytes, strtab: bytes, elf64: bool, little: bool, sections: list[str]
) -> list[Any] | None: ...
