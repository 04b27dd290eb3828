from ptxdwarf.dwarf.image import Reloc, Symbol

def bulk_pieces(
    body: str,
) -> tuple[bytes, list[int], bytes, list[str], dict[str, None], list[int]] | None: ...
def bulk_relocs(
    symbol: type[Symbol],
    reloc: type[Reloc],
    offsets: list[int],
    sizes: bytes,
    texts: list[str],
    distinct: dict[str, None],
) -> list[Reloc] | None: ...
