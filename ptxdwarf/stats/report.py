"""What ``stats`` reports: per variable, per function, per module, and the totals
``llvm-dwarfdump --statistics`` also gives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..dwarf.constants import TAG

if TYPE_CHECKING:
    from ..cuda.regmap import FunctionRegisters

__all__ = [
    "BUCKETS",
    "STATS_FORMAT",
    "DwarfTotals",
    "FunctionStats",
    "ModuleStats",
    "StatsReport",
    "VariableStats",
    "bucket_of",
    "share",
]

STATS_FORMAT = "ptxdwarf-stats/1"

#: The names of llvm-locstats' buckets, in order.
BUCKETS = ("0%", "(0%,10%)", *(f"[{i}%,{i + 10}%)" for i in range(10, 100, 10)), "100%")


def bucket_of(part: int, whole: int) -> int:
    """The bucket (an index of :data:`BUCKETS`) of ``part`` bytes of ``whole``."""
    if part == 0:
        return 0
    if part >= whole:
        return len(BUCKETS) - 1
    return int(100 * part / whole) // 10 + 1


def share(part: int, whole: int) -> float | None:
    """``part / whole`` (None when ``whole`` is 0)."""
    return part / whole if whole else None


class _Shares:
    """The covered and readable shares of what :meth:`_bytes` gives."""

    def _bytes(self) -> tuple[int, int, int]:
        """The scope, covered and readable bytes."""
        raise NotImplementedError

    @property
    def covered_share(self) -> float | None:
        scope, covered, _ = self._bytes()
        return share(covered, scope)

    @property
    def readable_share(self) -> float | None:
        scope, _, readable = self._bytes()
        return share(readable, scope)


@dataclass
class VariableStats(_Shares):
    """One variable or parameter of a function (or of a function inlined into it)."""

    name: str
    path: str
    """The DIE path (``_Z4testPi/<lexical_block 0x6a>/i``)."""
    parameter: bool
    scope_bytes: int
    """The code bytes of its scope: the nearest enclosing subprogram, lexical block or
    inlined subroutine with a code range."""
    covered_bytes: int
    """The bytes of the scope its DWARF location covers."""
    readable_bytes: int
    """The bytes of the scope where a debugger can read it."""
    has_location: bool
    """Whether it has a ``DW_AT_location`` or ``DW_AT_const_value``."""
    register_location: bool
    """Whether its location names PTX registers."""
    registers: list[str] = field(default_factory=list)
    """The PTX registers its location names."""
    covered: list[tuple[int, int]] = field(default_factory=list)
    """The ranges (offsets in the function's code) its location covers."""
    readable: list[tuple[int, int]] = field(default_factory=list)
    """The ranges where it is readable."""

    def _bytes(self) -> tuple[int, int, int]:
        return self.scope_bytes, self.covered_bytes, self.readable_bytes

    @property
    def never_readable(self) -> bool:
        """A location, but readable nowhere in its scope."""
        return self.has_location and self.scope_bytes > 0 and self.readable_bytes == 0

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "die": self.path,
            "kind": "parameter" if self.parameter else "variable",
            "scope_bytes": self.scope_bytes,
            "covered_bytes": self.covered_bytes,
            "readable_bytes": self.readable_bytes,
            "covered_share": self.covered_share,
            "readable_share": self.readable_share,
            "has_location": self.has_location,
            "registers": self.registers,
            "covered": [list(r) for r in self.covered],
            "readable": [list(r) for r in self.readable],
        }


class _Totals(_Shares):
    """The sums over the variables that a function and a module both give."""

    def _variables(self) -> list[VariableStats]:
        raise NotImplementedError

    @property
    def scope_bytes(self) -> int:
        return sum(v.scope_bytes for v in self._variables())

    @property
    def covered_bytes(self) -> int:
        return sum(v.covered_bytes for v in self._variables())

    @property
    def readable_bytes(self) -> int:
        return sum(v.readable_bytes for v in self._variables())

    def _bytes(self) -> tuple[int, int, int]:
        return self.scope_bytes, self.covered_bytes, self.readable_bytes

    @property
    def without_location(self) -> int:
        """The variables and parameters with neither ``DW_AT_location`` nor ``DW_AT_const_value``."""
        return sum(1 for v in self._variables() if not v.has_location)

    @property
    def never_readable(self) -> int:
        """Those with a location and a scope that are readable nowhere in it."""
        return sum(1 for v in self._variables() if v.never_readable)


@dataclass
class FunctionStats(_Totals):
    """One function (a subprogram with code) and the variables in its code."""

    name: str
    """Its symbol."""
    size: int
    """The bytes of its code range."""
    variables: list[VariableStats] = field(default_factory=list)
    inlined_call_sites: int = 0
    instructions: int = 0
    """Its SASS instructions (the size of its ELF symbol)."""
    instructions_with_line: int = 0
    """Its SASS instructions a ``.debug_line`` row with a nonzero line covers."""
    source_lines: list[tuple[int, int]] = field(default_factory=list, repr=False)
    """(offset in its code, source line) where each run of ``.debug_line`` rows of one nonzero
    line starts, in address order (drawn along the page's axis)."""

    def _variables(self) -> list[VariableStats]:
        return self.variables

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "size": self.size,
            "instructions": self.instructions,
            "instructions_with_line": self.instructions_with_line,
            "inlined_call_sites": self.inlined_call_sites,
            "scope_bytes": self.scope_bytes,
            "covered_bytes": self.covered_bytes,
            "readable_bytes": self.readable_bytes,
            "covered_share": self.covered_share,
            "readable_share": self.readable_share,
            "variables": [v.to_json() for v in self.variables],
        }


@dataclass
class DwarfTotals:
    """The module's figures that ``llvm-dwarfdump --statistics`` gives too, under its
    definitions (the JSON key of each is in :meth:`llvm_keys`)."""

    functions: int = 0
    inlined_functions: int = 0
    call_site_entries: int = 0
    function_bytes: int = 0
    inlined_function_bytes: int = 0
    params: int = 0
    params_with_location: int = 0
    local_vars: int = 0
    local_vars_with_location: int = 0
    scope_bytes: int = 0
    scope_bytes_covered: int = 0
    param_scope_bytes: int = 0
    param_scope_bytes_covered: int = 0
    var_scope_bytes: int = 0
    var_scope_bytes_covered: int = 0
    buckets: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))
    param_buckets: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))
    var_buckets: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))

    def add_scope(self, parameter: bool, scope: int, covered: int) -> None:
        self.scope_bytes += scope
        self.scope_bytes_covered += covered
        if parameter:
            self.param_scope_bytes += scope
            self.param_scope_bytes_covered += covered
        else:
            self.var_scope_bytes += scope
            self.var_scope_bytes_covered += covered

    def add_bucket(self, bucket: int, tag: int | None) -> None:
        self.buckets[bucket] += 1
        if tag == TAG.formal_parameter:
            self.param_buckets[bucket] += 1
        elif tag == TAG.variable:
            self.var_buckets[bucket] += 1

    def add_variable(self, parameter: bool, located: bool, artificial: bool) -> None:
        if artificial:
            return
        if parameter:
            self.params += 1
            self.params_with_location += located
        else:
            self.local_vars += 1
            self.local_vars_with_location += located

    def llvm_keys(self) -> dict[str, int]:
        """These figures under the keys of ``llvm-dwarfdump --statistics`` (version 9)."""
        keys = {
            "#functions": self.functions,
            "#inlined functions": self.inlined_functions,
            "#call site entries": self.call_site_entries,
            "#bytes within functions": self.function_bytes,
            "#bytes within inlined functions": self.inlined_function_bytes,
            "#params": self.params,
            "#params with binary location": self.params_with_location,
            "#local vars": self.local_vars,
            "#local vars with binary location": self.local_vars_with_location,
            "sum_all_variables(#bytes in parent scope)": self.scope_bytes,
            "sum_all_variables(#bytes in parent scope covered by DW_AT_location)": self.scope_bytes_covered,
            "sum_all_params(#bytes in parent scope)": self.param_scope_bytes,
            "sum_all_params(#bytes in parent scope covered by DW_AT_location)": self.param_scope_bytes_covered,
            "sum_all_local_vars(#bytes in parent scope)": self.var_scope_bytes,
            "sum_all_local_vars(#bytes in parent scope covered by DW_AT_location)": self.var_scope_bytes_covered,
            "#variables processed by location statistics": sum(self.buckets),
            "#params processed by location statistics": sum(self.param_buckets),
            "#local vars processed by location statistics": sum(self.var_buckets),
        }
        for what, counts in (
            ("variables", self.buckets),
            ("params", self.param_buckets),
            ("local vars", self.var_buckets),
        ):
            for name, count in zip(BUCKETS, counts, strict=True):
                keys[f"#{what} with {name} of parent scope covered by DW_AT_location"] = count
        return keys


@dataclass
class ModuleStats(_Totals):
    """One device image: its functions and totals."""

    label: str
    functions: list[FunctionStats]
    dwarf: DwarfTotals
    has_register_map: bool = True
    instructions: int = 0
    """The SASS instructions of every function of the cubin (its ``STT_FUNC`` symbols), those
    without DWARF included."""
    instructions_with_line: int = 0
    """Those a ``.debug_line`` row with a nonzero line covers."""
    register_maps: dict[str, FunctionRegisters] = field(default_factory=dict, repr=False)
    """ptxas's register map, by function (what the page shows of each variable's SASS registers)."""

    @property
    def variables(self) -> list[VariableStats]:
        return [v for f in self.functions for v in f.variables]

    def _variables(self) -> list[VariableStats]:
        return self.variables

    @property
    def inlined_call_sites(self) -> int:
        return sum(f.inlined_call_sites for f in self.functions)

    def buckets(self, readable: bool) -> list[int]:
        """How many variables with a scope fall into each bucket of :data:`BUCKETS`, of
        their covered (or readable) share."""
        counts = [0] * len(BUCKETS)
        for v in self.variables:
            if v.scope_bytes:
                counts[bucket_of(v.readable_bytes if readable else v.covered_bytes, v.scope_bytes)] += 1
        return counts

    def to_json(self) -> dict[str, object]:
        variables = self.variables
        scope = sum(v.scope_bytes for v in variables)
        covered = sum(v.covered_bytes for v in variables)
        readable = sum(v.readable_bytes for v in variables)
        return {
            "label": self.label,
            "has_register_map": self.has_register_map,
            "totals": {
                "functions": len(self.functions),
                "variables": len(variables),
                "without_location": sum(1 for v in variables if not v.has_location),
                "never_readable": sum(1 for v in variables if v.never_readable),
                "instructions": self.instructions,
                "instructions_with_line": self.instructions_with_line,
                "inlined_call_sites": self.inlined_call_sites,
                "scope_bytes": scope,
                "covered_bytes": covered,
                "readable_bytes": readable,
                "covered_share": share(covered, scope),
                "readable_share": share(readable, scope),
            },
            "buckets": {
                "names": list(BUCKETS),
                "covered": self.buckets(False),
                "readable": self.buckets(True),
            },
            "llvm_dwarfdump": self.dwarf.llvm_keys(),
            "functions": [f.to_json() for f in self.functions],
        }


@dataclass
class StatsReport:
    """The figures of one input file: one :class:`ModuleStats` per device image."""

    filename: str
    modules: list[ModuleStats]

    def function(self, name: str) -> FunctionStats | None:
        """The function ``name`` (its symbol), in the first module that has it."""
        for module in self.modules:
            for f in module.functions:
                if f.name == name:
                    return f
        return None

    def to_json(self) -> dict[str, object]:
        return {
            "format": STATS_FORMAT,
            "file": self.filename,
            "modules": [m.to_json() for m in self.modules],
        }

    def text(self, *, variables: bool = True) -> list[str]:
        """The report as lines of text."""
        lines = []
        for module in self.modules:
            lines.extend(_module_text(module, variables))
        return lines


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _module_text(module: ModuleStats, variables: bool) -> list[str]:
    j = module.to_json()["totals"]
    assert isinstance(j, dict)
    lines = [
        f"{module.label}: {j['functions']} functions, {j['variables']} variables and parameters, "
        f"{module.inlined_call_sites} inlined call sites",
        f"  located {_pct(j['covered_share'])}, readable {_pct(j['readable_share'])} "
        f"of {j['scope_bytes']} scope bytes"
        + ("" if module.has_register_map else " (no register map: not compiled with -g)"),
        f"  without location {module.without_location}, located but never readable {module.never_readable}",
        f"  SASS instructions with a source line: {module.instructions_with_line}/{module.instructions}"
        f" ({_pct(share(module.instructions_with_line, module.instructions))})",
        "  " + "bucket".ljust(10) + " located readable",
    ]
    for name, c, r in zip(BUCKETS, module.buckets(False), module.buckets(True), strict=True):
        lines.append(f"  {name.ljust(10)} {c:7d} {r:8d}")
    for f in module.functions:
        lines.append(
            f"  {f.name}: {f.size} bytes, {len(f.variables)} variables, located {_pct(f.covered_share)}, "
            f"readable {_pct(f.readable_share)}"
        )
        if not variables:
            continue
        for v in f.variables:
            regs = f" ({', '.join(v.registers)})" if v.registers else ""
            lines.append(
                f"    {'param' if v.parameter else 'var  '} {v.name}: scope {v.scope_bytes}, "
                f"located {_pct(v.covered_share)}, readable {_pct(v.readable_share)}{regs}"
                + ("" if v.has_location else ", no location")
            )
    return lines
