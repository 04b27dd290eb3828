""":func:`stats`: from an input file to a :class:`~.report.StatsReport`."""

from __future__ import annotations

import os
from pathlib import Path

from ..cuda.cubin import read_cubin
from ..cuda.fatbin import fatbin_of_host_elf, is_fatbin, iter_fatbin
from ..cuda.ptxas import Ptxas, compile_text
from ..errors import PtxDwarfError
from ..files import ELF_MAGIC, is_cuda_elf, require_ptx
from .measure import measure
from .report import ModuleStats, StatsReport

__all__ = ["stats"]


def stats(
    source: str | os.PathLike[str] | bytes,
    *,
    text: bool = False,
    filename: str | None = None,
    arch: str | None = None,
    ptxas: Ptxas | str | None = None,
) -> StatsReport:
    """The figures of an input: a path, or its bytes (``source``), or PTX text (a ``str``
    with ``text=True``). A cubin, fatbin or host object is read as it is; PTX is compiled
    with ``ptxas -g`` first (for ``arch``, default its ``.target``; with ``ptxas``, default
    the one its ``.version`` takes), as are the PTX entries of a fatbin without a cubin.
    ``filename`` names the input in messages and in the report."""
    if text:
        assert isinstance(source, str)
        name = filename or "<ptx>"
        return StatsReport(name, [_of_ptx(source, name, arch, ptxas)])
    if isinstance(source, bytes):
        raw, name = source, filename or "<input>"
    else:
        raw, name = Path(source).read_bytes(), filename or str(source)
    return StatsReport(name, _modules(raw, name, arch, ptxas))


def _modules(raw: bytes, name: str, arch: str | None, ptxas: Ptxas | str | None) -> list[ModuleStats]:
    fatbin = None
    if raw[:4] == ELF_MAGIC:
        if is_cuda_elf(raw):
            return [measure(read_cubin(raw, name=name), name)]
        fatbin = fatbin_of_host_elf(raw, name=name)
        if fatbin is None:
            raise PtxDwarfError("an ELF file with neither CUDA code nor a .nv_fatbin section", where=name)
    elif is_fatbin(raw):
        fatbin = raw
    if fatbin is None:
        source = raw.decode("utf-8", "surrogateescape")
        require_ptx(source, name)
        return [_of_ptx(source, name, arch, ptxas)]
    entries = [e for e in iter_fatbin(fatbin, name=name) if e.kind in ("elf", "ptx")]
    cubins = [e for e in entries if e.kind == "elf"]
    found = []
    for entry in cubins or entries:
        if entry.error is not None:
            raise entry.error
        label = f"{name} [{entry.label}]"
        if entry.kind == "elf":
            found.append(measure(read_cubin(entry.payload, name=label), label))
        else:
            found.append(_of_ptx(entry.ptx_text(), label, arch, ptxas))
    if not found:
        raise PtxDwarfError("the fatbin holds no cubin or PTX", where=name)
    return found


def _of_ptx(source: str, name: str, arch: str | None, ptxas: Ptxas | str | None) -> ModuleStats:
    result, _chosen = compile_text(source, ptxas=ptxas, arch=arch, filename=name)
    return measure(read_cubin(result.cubin, name=name), name)
