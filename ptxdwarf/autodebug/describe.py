"""The compile unit attach writes: a subprogram per function with its parameters,
``.local``/``.shared`` objects and registers, and the module's variables."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..builder import DebugInfoBuilder, Function, Type
from ..cuda.memory import register_budgets
from ..cuda.quirks import workaround
from ..demangle import demangle
from ..dwarf.constants import HANDLE_CLASS, SPACE_CLASS, AddressClass
from ..dwarf.expr import MAX_REGISTER_NAME
from ..loc import address, local, param, register
from ..ptx.module import PtxFunction, PtxModule, PtxVariable
from ..ptx.statements import register_spans, used_names
from .params import device_param_location, param_loads
from .plan import Plan
from .registers import fits
from .scan import Func, find_name
from .typemap import TypeMap

PRODUCER = "ptxdwarf attach"

#: The most ``.pred`` registers attach can be asked to describe in one function: ptxas 12.9 to
#: 13.5 ``-g`` dies (SIGSEGV) on a function whose debug info describes 52 or more predicates it
#: keeps, and on some functions with as few as 4 (quirk ``predicate-count``), so by default
#: attach describes none.
MAX_PREDICATES = 51

_EXTERNAL = re.compile(r"\.(?:visible|extern|weak|common)\b")


@dataclass
class _Description:
    """What :func:`describe` is making, and what it could not describe."""

    dbg: DebugInfoBuilder
    types: TypeMap
    plan: Plan
    warnings: list[str] = field(default_factory=list)
    skipped_long: list[str] = field(default_factory=list)
    predicates: int = 0
    """The most ``.pred`` registers to describe per function."""
    skipped_predicates: list[tuple[str, list[str], int]] = field(default_factory=list)
    """(function, predicates not described, predicates used) of each function over ``predicates``
    (when it is not 0)."""
    untyped: list[str] = field(default_factory=list)
    keep: Mapping[str, set[str]] | None = None
    """Only these registers, by function (``--only-mapped``); None: every register."""
    unmapped: list[tuple[str, str]] = field(default_factory=list)
    """(function, register) left out because ptxas's register map does not name them."""
    budgets: Mapping[str, int] | None = None
    """By function, the most registers to describe (its parameters' included); None: all."""
    left_out: dict[str, list[str]] = field(default_factory=dict)
    """By function, the registers over its budget, not described."""
    described: dict[str, int] = field(default_factory=dict)
    """By function, the registers described (its parameters' included)."""


def describe(
    module: PtxModule,
    funcs: list[Func],
    plan: Plan,
    masked: str,
    output_name: str,
    prefix: str,
    keep: Mapping[str, set[str]] | None = None,
    predicates: int = 0,
    max_registers: int | str = "auto",
) -> tuple[DebugInfoBuilder, int, list[str], dict[str, list[str]]]:
    """The builder of the compile unit, its number of DIEs, the warnings and, by function, the
    registers left out over the budget; ``keep`` names, by function, the only registers to
    describe; ``predicates``, the most ``.pred`` registers to describe per function;
    ``max_registers``, the most registers to describe per function (parameters included):
    ``"auto"`` as :func:`~ptxdwarf.cuda.memory.register_budgets` allows, ``"all"`` no limit."""
    mangled = any(f.name.startswith("_Z") for f in module.functions)
    if plan.keep_lines:  # the source is the input's own: its .file 1 names the compile unit
        source = next((f.full_path for f in module.files if f.index == 1), module.files[0].full_path)
        dbg = DebugInfoBuilder(source, producer=PRODUCER, language="c++" if mangled else "c", file=None)
    else:
        dbg = DebugInfoBuilder(
            output_name, producer=PRODUCER, language="c++" if mangled else "c", file=output_name
        )
    d = _Description(dbg, TypeMap(dbg), plan, keep=keep, predicates=predicates)
    spans = {fn.func.name: register_spans(masked, fn.func.body_start, fn.func.body_end) for fn in funcs}
    if max_registers == "auto":
        d.budgets = register_budgets({name: (count, jumps) for name, (_, count, jumps) in spans.items()})
    elif isinstance(max_registers, int):
        d.budgets = {name: max_registers for name in spans}
    _module_variables(d, module)
    for fn in funcs:
        f = fn.func
        sub = _subprogram(d, fn, masked, prefix)
        _parameters(d, fn, sub, masked[f.header_start : f.body_start])
        seen = _objects(d, f, sub)
        _registers(d, fn, sub, seen, masked[f.body_start : f.body_end], spans[f.name][0])
    if d.skipped_long:
        names = list(dict.fromkeys(d.skipped_long))
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        d.warnings.append(
            f"{len(d.skipped_long)} register(s) not described: names longer than {MAX_REGISTER_NAME} "
            f"characters cannot be named by DW_OP_regx ({shown}); --rename-registers renames them"
        )
    if d.skipped_predicates:
        d.warnings.append(_predicate_warning(d.skipped_predicates, d.predicates))
    if d.unmapped:
        d.warnings.append(_unmapped_warning(d.unmapped))
    if d.untyped:
        shown = ", ".join(d.untyped[:3]) + (", ..." if len(d.untyped) > 3 else "")
        d.warnings.append(
            f"{len(d.untyped)} declaration(s) of a type ptxdwarf cannot describe were skipped ({shown})"
        )
    if d.left_out:
        d.warnings.append(_budget_warning(d, max_registers))
    dies = sum(1 for _ in dbg.iter_dies())
    return dbg, dies, d.warnings, d.left_out


def _module_variables(d: _Description, module: PtxModule) -> None:
    for v in module.variables:
        cls = HANDLE_CLASS.get(v.type or "") or SPACE_CLASS.get(v.space)
        if cls is None or cls in (AddressClass.LOCAL, AddressClass.PARAM):
            d.warnings.append(
                f"module variable {v.name} (.{v.space}) is not described: no address class fits it"
            )
            continue
        t = d.types.of(v)
        if t is None:
            d.untyped.append(v.name)
            continue
        line_text = d.plan.raw[v.line - 1] if 0 < v.line <= len(d.plan.raw) else ""
        external = bool(_EXTERNAL.search(line_text))
        d.dbg.global_variable(
            v.name,
            t,
            location=address(v.name, cls),
            line=d.plan.out_line_of_input_line(v.line),
            external=external,
        )


def _subprogram(d: _Description, fn: Func, masked: str, prefix: str) -> Function:
    f = fn.func
    start = max(masked.rfind(c, 0, f.header_start) for c in (";", "}", "\n")) + 1
    external = bool(_EXTERNAL.search(masked[start : f.header_start]))
    ret_type = d.types.of(f.returns[0]) if len(f.returns) == 1 else None
    return d.dbg.function(
        demangle(f.name) or f.name,
        linkage_name=f.name,
        line=d.plan.out_line(f.header_start),
        type=ret_type,
        kernel=f.is_kernel,
        external=external,
        low_pc=f"{prefix}begin{fn.index}",
        high_pc=f"{prefix}end{fn.index}",
    )


def _parameters(d: _Description, fn: Func, sub: Function, header: str) -> None:
    f = fn.func
    loads = {} if f.is_kernel else param_loads(fn.instrs, {p.name for p in f.params}, fn.renamed)
    no_location: list[str] = []
    for p in f.params:
        t = d.types.of(p, pointer=f.is_kernel)
        if t is None:
            d.untyped.append(p.name)
            continue
        at = find_name(header, p.name)
        line = d.plan.out_line(f.header_start + (max(at, 0)))
        if f.is_kernel:
            sub.parameter(p.name, t, line=line, location=param(p.name))
            continue
        mapped = d.keep.get(f.name, set()) if d.keep is not None else None
        where, why = device_param_location(p.byte_size, loads.get(p.name, []), mapped)
        if where is None:
            no_location.append(f"{p.name} ({why})")
        else:
            d.described[f.name] = d.described.get(f.name, 0) + 1
        sub.parameter(p.name, t, line=line, location=where)
    if no_location:
        d.warnings.append(
            f"{f.name}: {len(no_location)} parameter(s) described without a location: "
            + "; ".join(no_location)
        )


def _objects(d: _Description, f: PtxFunction, sub: Function) -> set[str]:
    """The ``.local``/``.shared``/``.global``/``.const`` objects of ``f``; their names."""
    seen: set[str] = set()
    for v in f.declarations:
        if v.space not in ("local", "shared", "global", "const") or v.name in seen:
            continue
        seen.add(v.name)
        t = d.types.of(v)
        if t is None:
            d.untyped.append(v.name)
            continue
        line = d.plan.out_line_of_input_line(v.line)
        where = local(v.name, 0) if v.space == "local" else address(v.name, SPACE_CLASS[v.space])
        sub.variable(v.name, t, line=line, location=where)
    return seen


def _unmapped_warning(unmapped: list[tuple[str, str]]) -> str:
    """The warning naming the registers ``--only-mapped`` left out, by function."""
    by_function: dict[str, list[str]] = {}
    for function, reg in unmapped:
        by_function.setdefault(function, []).append(reg)
    parts = []
    for function, regs in by_function.items():
        shown = ", ".join(regs[:5]) + (", ..." if len(regs) > 5 else "")
        parts.append(f"{function}: {shown}")
    return (
        f"{len(unmapped)} register(s) not described ({'; '.join(parts)}): ptxas's register map does "
        "not place them, so a debugger could not show them"
    )


def _predicate_warning(skipped: list[tuple[str, list[str], int]], limit: int) -> str:
    """The warning naming the predicate registers left out, by function, over ``limit``."""
    parts = []
    for name, left, total in skipped:
        shown = ", ".join(left[:3]) + (", ..." if len(left) > 3 else "")
        parts.append(f"{name}: {len(left)} of {total}, {shown}")
    count = sum(len(left) for _, left, _ in skipped)
    return (
        f"{count} predicate register(s) not described ({'; '.join(parts)}): at most {limit} asked for "
        f"per function; ptxas -g crashes on a function whose debug info describes more than "
        f"{MAX_PREDICATES} predicates, and on some with fewer"
    )


#: A register range declaring more names than this (``%r<100000000>``) is not walked name by
#: name (ptxas takes such ranges, at a cost in memory): the names the body uses are picked out.
RANGE_LIMIT = 10000


def _used_names(v: PtxVariable, used: frozenset[str]) -> list[str]:
    """The names declaration ``v`` makes that the code uses (``used``), in order."""
    if v.count is None:
        return [v.name] if v.name in used else []
    if v.count <= RANGE_LIMIT:
        return [n for n in v.names() if n in used]
    return sorted((n for n in used if v.declares(n)), key=lambda n: int(n[len(v.name) :]))


@workaround("register-unused", "predicate-count", "described-registers-memory")
def _registers(
    d: _Description, fn: Func, sub: Function, seen: set[str], body: str, spans: Mapping[str, tuple[int, int]]
) -> None:
    """A variable per register the code of ``fn`` uses (ptxas -g maps no other), at most
    ``d.predicates`` of them ``.pred``, and at most the function's budget (its parameters
    counted): the registers that live longest (from their first to their last use in ``spans``,
    by input name) first, described in order of declaration."""
    used = used_names(body, 0, len(body))
    predicates: list[str] = []
    chosen: list[tuple[str, str, Type, int | None]] = []  # (input name, name, type, line)
    for v in fn.func.declarations:
        if v.space != "reg" or (v.type == ".pred" and not d.predicates):
            continue
        t = d.types.of(v)
        if t is None:
            d.untyped.append(v.name)
            continue
        line = d.plan.out_line_of_input_line(v.line)
        for old in _used_names(v, used):
            reg = fn.renamed.get(old, old)
            if reg in seen:
                continue
            seen.add(reg)
            if not fits(reg):
                d.skipped_long.append(reg)
                continue
            if d.keep is not None and reg not in d.keep.get(fn.func.name, ()):
                d.unmapped.append((fn.func.name, reg))
                continue
            if v.type == ".pred":
                predicates.append(reg)
                if len(predicates) > d.predicates:
                    continue
            chosen.append((old, reg, t, line))
    if len(predicates) > d.predicates:
        d.skipped_predicates.append((fn.func.name, predicates[d.predicates :], len(predicates)))
    name = fn.func.name
    budget = None if d.budgets is None else max(0, d.budgets.get(name, 0) - d.described.get(name, 0))
    if budget is not None and len(chosen) > budget:
        ranked = sorted(range(len(chosen)), key=lambda i: _lifetime(spans, chosen[i][0]))
        kept = set(ranked[:budget])
        d.left_out[name] = [chosen[i][1] for i in range(len(chosen)) if i not in kept]
        chosen = [c for i, c in enumerate(chosen) if i in kept]
    for _old, reg, t, line in chosen:
        sub.variable(reg, t, line=line, location=register(reg))
    d.described[name] = d.described.get(name, 0) + len(chosen)


def _lifetime(spans: Mapping[str, tuple[int, int]], name: str) -> tuple[int, int]:
    """A sort key that puts the register living longest (in register operands) first, then the first used."""
    first, last = spans.get(name, (0, 0))
    return (first - last, first)


def _budget_warning(d: _Description, max_registers: int | str) -> str:
    """The note naming, by function, the registers left out over the budget."""
    parts = []
    for name, left in d.left_out.items():
        shown = ", ".join(left[:3]) + (", ..." if len(left) > 3 else "")
        parts.append(f"{name}: {len(left)} of {len(left) + d.described.get(name, 0)}, {shown}")
    count = sum(len(left) for left in d.left_out.values())
    why = (
        "the budget that keeps ptxas -g within twice the memory of the code alone"
        if max_registers == "auto"
        else f"at most {max_registers} asked for per function"
    )
    return (
        f"{count} register(s) not described ({'; '.join(parts)}): {why} (ptxas -g keeps each described "
        "register live through its function, quirk described-registers-memory); the longest-lived are "
        "described; --max-registers N or all describes more"
    )
