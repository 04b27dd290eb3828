"""Compiling PTX with ptxas for a test, and what a debugger can show of the cubin."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..api import read_ptx
from ..cuda.cubin import read_cubin, register_map
from ..cuda.ptxas import Ptxas, compile_text
from ..dwarf.lines import LineTable
from ..visibility import RegisterLocation, register_locations
from .queries import Query

__all__ = ["CompiledCubin", "PtxCompiler", "assert_readable", "compile_ptx", "readable_variables"]


@dataclass
class CompiledCubin:
    """A cubin ptxas made of some PTX: its bytes, the architecture and the PTX text, and the
    release of the ptxas that compiled it."""

    data: bytes
    arch: str
    ptx: str
    ptxas_version: str = ""
    _lines: LineTable | None = field(default=None, init=False, repr=False, compare=False)

    def __repr__(self) -> str:
        by = f", ptxas {self.ptxas_version}" if self.ptxas_version else ""
        return f"<CompiledCubin {self.arch}{by}: {len(self.data)} bytes of {len(self.ptx)} characters of PTX>"

    def debug_info(self) -> Query:
        """The cubin's DWARF, queryable."""
        return Query(read_cubin(self.data))

    def ptx_debug_info(self) -> Query:
        """The PTX's own DWARF, queryable."""
        return Query(read_ptx(self.ptx))

    def line_table(self) -> LineTable:
        """The cubin's line table (``.debug_line``, with ``.nv_debug_line_sass`` to join it
        with), read once."""
        if self._lines is None:
            self._lines = read_cubin(self.data).line_table
        return self._lines

    def register_locations(self) -> list[RegisterLocation]:
        """Each register location of the cubin's DWARF and where a debugger reads it
        (:func:`~ptxdwarf.visibility.register_locations`)."""
        info = read_cubin(self.data)
        return register_locations(info, register_map(info) or [])


def readable_variables(
    cubin: CompiledCubin, function: str, line: int, *, file: str | None = None
) -> dict[str, list[str]]:
    """The variables and parameters of ``function`` a debugger can show at source ``line``
    (of a file whose path ends with ``file``): name -> the SASS registers holding it at the
    first address of the line where it can be read."""
    addresses = [a for f, a in cubin.line_table().addresses_of(line, file) if f == function]
    if not addresses:
        raise AssertionError(f"{function}: no code for line {line}{f' of {file}' if file else ''}")
    result: dict[str, list[str]] = {}
    for loc in cubin.register_locations():
        if loc.function != function or loc.name in result:
            continue
        for address in addresses:
            if loc.readable_at(address):
                result[loc.name] = [e.sass for e in sorted(loc.entries_at(address), key=lambda e: e.piece)]
                break
    return result


def assert_readable(
    cubin: CompiledCubin, function: str, variable: str, line: int, *, file: str | None = None
) -> list[str]:
    """Fail unless a debugger can show ``variable`` of ``function`` (its symbol) at source
    ``line``: a register location of it whose register ptxas's map places in SASS registers
    at an address of that line. Returns those SASS registers."""
    readable = readable_variables(cubin, function, line, file=file)
    if variable in readable:
        return readable[variable]
    described = [
        loc for loc in cubin.register_locations() if loc.function == function and loc.name == variable
    ]
    if not described:
        why = "it has no register location in the cubin's DWARF"
    elif not any(loc.mapped for loc in described):
        regs = sorted({loc.register for loc in described})
        why = f"ptxas's register map never names {', '.join(regs)}"
    else:
        why = "no register location of it covers the line's code in ptxas's register map"
    shown = ", ".join(sorted(readable)) or "none"
    raise AssertionError(
        f"{function}: {variable} is not readable at line {line}: {why} (readable there: {shown})"
    )


def compile_ptx(
    ptx: str,
    *,
    arch: str | None = None,
    ptxas: Ptxas | str | None = None,
    ptxas_version: str | None = None,
    debug: bool = True,
    line_info: bool = False,
) -> CompiledCubin:
    """Compile PTX text with ptxas (``-g`` unless ``debug=False``; ``-lineinfo`` with
    ``line_info``) for ``arch`` (default: the module's ``.target``, or the oldest newer one
    ptxas supports); temporary files are removed.

    The ptxas is ``ptxas`` (a :class:`~ptxdwarf.cuda.Ptxas` or a path), else the first found
    of release ``ptxas_version`` (``"13.5"``), else the first found that takes the module's
    ``.version``, as the command line chooses (:func:`~ptxdwarf.cuda.find_ptxas`)."""
    result, chosen = compile_text(
        ptx,
        ptxas=ptxas,
        release=ptxas_version,
        arch=arch,
        debug=debug,
        extra=["-lineinfo"] if line_info else [],
    )
    return CompiledCubin(result.cubin, chosen, ptx, result.ptxas.version if result.ptxas else "")


#: What the plugin's ``ptxdwarf_compile`` fixture is: :func:`compile_ptx`, with the session's
#: ``--ptxdwarf-ptxas``/``--ptxdwarf-ptxas-version``/``--ptxdwarf-arch`` as its defaults.
PtxCompiler = Callable[..., CompiledCubin]
