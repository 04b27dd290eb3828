"""CUDA binaries and tools: cubins (ELF with CUDA relocations), fatbins and host objects, ptxas,
and ptxas's register map."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._exports import lazy_exports

# The public names, imported on first use (see ptxdwarf._exports).
if TYPE_CHECKING:
    from .cubin import cubin_images as cubin_images
    from .cubin import read_cubin as read_cubin
    from .ptxas import Ptxas as Ptxas
    from .ptxas import PtxasCancelled as PtxasCancelled
    from .ptxas import PtxasFailed as PtxasFailed
    from .ptxas import find_ptxas as find_ptxas
    from .regmap import RegisterMapEntry as RegisterMapEntry
    from .regmap import read_register_map as read_register_map

__all__: list[str]  # given by __getattr__ (read from the block above when first asked for)
__getattr__, __dir__ = lazy_exports(__name__, __file__, globals())
