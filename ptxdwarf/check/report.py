"""What :func:`~ptxdwarf.check.check` found: the differences between a PTX module's debug
sections and the cubin ptxas made of them, and the register locations joined with ptxas's
register map."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..visibility import RegisterLocation

__all__ = ["CheckReport", "Difference"]


@dataclass(frozen=True)
class Difference:
    """One way the cubin does not say what the PTX declared."""

    path: str
    what: str
    ptx: str
    cubin: str
    message: str = ""

    def __str__(self) -> str:
        extra = f" ({self.message})" if self.message else ""
        return f"{self.path}: {self.what}: PTX {self.ptx}, cubin {self.cubin}{extra}"


@dataclass
class CheckReport:
    """The outcome of :func:`check`."""

    filename: str
    arch: str
    ptxas: str
    ptxas_version: str
    differences: list[Difference] = field(default_factory=list)
    units: int = 0
    dies: int = 0
    symbols: int = 0
    """Symbolic values (relocations in the PTX) that were matched."""
    line_rows: int = 0
    """Line-table rows of the cubin matched with the ``.loc`` directives that make them."""
    notes: list[str] = field(default_factory=list)
    registers: list[RegisterLocation] = field(default_factory=list)
    """Each register location of the cubin's DWARF joined with ptxas's register map
    (:func:`~ptxdwarf.visibility.register_locations`): where a debugger reads it."""
    debug: str = "dwarf"
    """What the PTX carries: ``dwarf`` (a ``.debug_info``), ``line-info`` (``.file``/``.loc``
    only: the cubin's line table is all ptxas makes of it) or ``none``."""

    @property
    def consistent(self) -> bool:
        return not self.differences

    @property
    def status(self) -> str:
        """``differences``, else ``consistent`` for DWARF, else ``line-info-only`` or ``no-debug-info``."""
        if self.differences:
            return "differences"
        return {"line-info": "line-info-only", "none": "no-debug-info"}.get(self.debug, "consistent")

    @property
    def unmapped_registers(self) -> list[RegisterLocation]:
        """The described registers ptxas's map never names: a debugger shows them as unavailable."""
        from ..visibility import unmapped_registers  # not imported before check starts ptxas

        return unmapped_registers(self.registers)

    def register_summary(self) -> list[str]:
        """How many described registers are in ptxas's register map, then, per function, those
        a debugger cannot read (empty when the cubin has no map)."""
        described: dict[str, dict[tuple[str, str], bool]] = {}
        for loc in self.registers:
            seen = described.setdefault(loc.function, {})
            key = (loc.path, loc.register)
            seen[key] = seen.get(key, False) or loc.mapped
        total = sum(len(seen) for seen in described.values())
        if not total:
            return []
        mapped = sum(ok for seen in described.values() for ok in seen.values())
        lines = [f"registers: {mapped} of {total} described registers are in ptxas's register map"]
        for function, seen in described.items():
            missing = [_variable(path, reg) for (path, reg), ok in seen.items() if not ok]
            if missing:
                shown = ", ".join(missing[:8]) + (", ..." if len(missing) > 8 else "")
                lines.append(
                    f"registers: {function}: {len(missing)} of {len(seen)} unavailable to a debugger: {shown}"
                )
        return lines

    def summary(self) -> str:
        tool = f"ptxas {self.ptxas_version}, {self.arch}"
        if self.status == "line-info-only":
            return (
                f"{self.filename}: line information only (.file/.loc, no .debug_info): ptxas -g wrote its "
                f"line table, {self.line_rows} rows of it match the .loc directives; no DWARF to compare ({tool})"
            )
        if self.status == "no-debug-info":
            return f"{self.filename}: no debug information (no debug section, no .file): nothing to compare ({tool})"
        if self.consistent:
            return (
                f"{self.filename}: consistent ({self.units} unit(s), {self.dies} DIEs, "
                f"{self.symbols} symbolic values, {self.line_rows} line-table rows matched; "
                f"ptxas {self.ptxas_version}, {self.arch})"
            )
        return (
            f"{self.filename}: {len(self.differences)} difference(s) between the PTX and the cubin ptxas made"
        )

    def to_json(self) -> str:
        data = {
            "format": "ptxdwarf-check/1",
            "file": self.filename,
            "arch": self.arch,
            "ptxas": self.ptxas,
            "ptxas_version": self.ptxas_version,
            "consistent": self.consistent,
            "status": self.status,
            "units": self.units,
            "dies": self.dies,
            "symbols": self.symbols,
            "line_rows": self.line_rows,
            "registers_described": len({(r.path, r.register) for r in self.registers}),
            "unmapped_registers": [
                {"die": r.path, "function": r.function, "register": r.register}
                for r in self.unmapped_registers
            ],
            "register_locations": [],
            "notes": self.notes,
            "differences": [asdict(d) for d in self.differences],
        }
        text = json.dumps(data, indent=1) + "\n"
        if not self.registers:
            return text
        # A large module has 100k register locations or more: each goes on one line, written by
        # the compact encoder (the indenting one is pure Python, three times as slow here).
        encode = json.JSONEncoder().encode
        locations = ",\n  ".join([encode(r.to_json()) for r in self.registers])
        return text.replace('"register_locations": []', '"register_locations": [\n  ' + locations + "\n ]", 1)


def _variable(path: str, register: str) -> str:
    """``x (%r5)``; ``%r5`` for a variable named after its register (attach's)."""
    name = path.rsplit("/", 1)[-1]
    return register if name == register else f"{name} ({register})"
