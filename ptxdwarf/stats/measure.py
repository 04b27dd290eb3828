"""The figures of one cubin's DWARF: scopes, location coverage and what a debugger can read.

The walk follows the definitions of ``llvm-dwarfdump --statistics`` (version 9): a variable's
scope is the nearest enclosing subprogram, lexical block or inlined subroutine with a nonzero
code range; its covered bytes are those of its location list entries inside its parent's
ranges (all of the scope for a single location or a ``DW_AT_const_value``). The readable
bytes are the covered bytes of memory locations and constants, and for register locations
the bytes where :func:`~ptxdwarf.visibility.register_locations` places every piece in SASS.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from ..cuda.cubin import CubinImages, register_map
from ..cuda.regmap import FunctionRegisters
from ..dwarf.constants import AT, TAG
from ..dwarf.image import Block
from ..dwarf.lines import read_line_programs
from ..dwarf.model import DIE, DebugInfo, die_path
from ..visibility import (
    RegisterLocation,
    _bound,
    _function_name,
    _function_of_entry,
    _Join,
    _range,
    register_locations,
)
from .report import DwarfTotals, FunctionStats, ModuleStats, VariableStats, bucket_of

__all__ = ["INSTRUCTION_BYTES", "measure"]

#: The size of one SASS instruction of sm_70 and later (the architectures ptxas 13 compiles for).
INSTRUCTION_BYTES = 16

Span = tuple[str, int, int]
"""A code range: the function's symbol, low and high offset in its code."""

_SCOPES = (TAG.subprogram, TAG.lexical_block, TAG.inlined_subroutine)
_VARIABLES = (TAG.formal_parameter, TAG.variable)


def measure(info: DebugInfo, label: str) -> ModuleStats:
    """The figures of ``info``, a cubin's DWARF (``label`` names it)."""
    maps = {f.function: f for f in register_map(info) or []}
    readable = _readable_spans(register_locations(info, maps.values()))
    walk = _Walk(info, maps, readable)
    for unit in info.units:
        if unit.die is not None:
            walk.unit(unit.die)
    module = ModuleStats(label, walk.functions, walk.totals, has_register_map=bool(maps), register_maps=maps)
    _count_lines(info, module)
    return module


def _readable_spans(
    locations: Iterable[RegisterLocation],
) -> dict[tuple[str, str, int | None, int | None], list[Span]]:
    """Per (DIE path, function, low, high) of a register location's range: where every
    register it names has every piece the map has of it in a SASS register."""
    by_range: dict[tuple[str, str, int | None, int | None], list[RegisterLocation]] = {}
    for loc in locations:
        by_range.setdefault((loc.path, loc.function, loc.low_pc, loc.high_pc), []).append(loc)
    result = {}
    for key, locs in by_range.items():
        spans: list[Span] | None = None
        for loc in locs:
            held = _held(loc)
            spans = held if spans is None else _intersect(spans, held)
        result[key] = spans or []
    return result


def _held(loc: RegisterLocation) -> list[Span]:
    """Where the map holds every piece of ``loc``'s register inside its range."""
    entries = loc.spans()
    pieces = loc.pieces or {piece for piece, _lo, _hi in entries}
    if not pieces:
        return []
    function = loc.function
    spans: list[Span] | None = None
    for piece in pieces:
        of_piece = _union([(function, lo, hi) for p, lo, hi in entries if p == piece])
        spans = of_piece if spans is None else _intersect(spans, of_piece)
    assert spans is not None
    if loc.low_pc is not None or loc.high_pc is not None:
        lo = loc.low_pc if loc.low_pc is not None else 0
        hi = loc.high_pc if loc.high_pc is not None else 1 << 62
        spans = _intersect(spans, [(loc.function, lo, hi)])
    return spans


class _Walk:
    """The walk of ``collectStatsRecursive``, per unit."""

    def __init__(
        self,
        info: DebugInfo,
        maps: dict[str, FunctionRegisters],
        readable: dict[tuple[str, str, int | None, int | None], list[Span]],
    ) -> None:
        self.info = info
        self.join = _Join(info)
        self.maps = maps
        self.readable = readable
        self.totals = DwarfTotals()
        self.functions: list[FunctionStats] = []
        self._function_ids: dict[tuple[object, ...], int] = {}
        self._abstract_vars: dict[int, list[DIE]] = {}

    def unit(self, root: DIE) -> None:
        deferred: list[DIE] = []
        self._visit(root, 0, [], None, None, None, 0, deferred)
        for die in deferred:
            origin = self._origin(die)
            if origin is not None and origin.offset in self._abstract_vars:
                left = self._unlocated(die, self._abstract_vars[origin.offset])
                self._zero(left)

    # -- the walk -------------------------------------------------------------------------------

    def _visit(  # noqa: C901 - one walk, as LLVM's
        self,
        die: DIE,
        scope_bytes: int,
        scope_spans: list[Span],
        function: FunctionStats | None,
        symbol: str | None,
        abstract: list[int] | None,
        depth: int,
        deferred: list[DIE],
    ) -> None:
        tag = die.tag
        if tag == TAG.subroutine_type:
            return
        candidate = tag == TAG.inlined_subroutine or (tag == TAG.subprogram and AT.abstract_origin in die)
        own_abstract: list[int] | None = None
        if candidate:
            origin = self._origin(die)
            if origin is not None and origin.offset in self._abstract_vars:
                own_abstract = [v.offset for v in self._abstract_vars[origin.offset]]
                abstract = own_abstract
            else:
                deferred.append(die)
                abstract = None
        parent_spans = scope_spans
        if tag in _SCOPES:
            if AT.declaration in die:
                return
            if AT.call_file in die and AT.call_line in die:
                self.totals.call_site_entries += 1
            if tag == TAG.subprogram:
                symbol = _function_name(die)
            spans = self._spans(die, symbol)
            size = sum(hi - lo for _, lo, hi in spans)
            if tag != TAG.lexical_block:
                if AT.inline in die:
                    self._abstract_vars[die.offset] = list(_abstract_variables(die))
                    return
                self._count_function(die, tag == TAG.inlined_subroutine)
            if tag == TAG.subprogram:
                function = FunctionStats(symbol or die_path(die), size)
                self.functions.append(function)
            elif tag == TAG.inlined_subroutine and function is not None:
                function.inlined_call_sites += 1
            if size:
                scope_bytes = size
                if tag == TAG.subprogram:
                    self.totals.function_bytes += size
                elif tag == TAG.inlined_subroutine and depth == 0:
                    self.totals.inlined_function_bytes += size
            parent_spans = spans
        else:
            self._variable(die, scope_bytes, scope_spans, function, symbol, abstract)
        if tag == TAG.subprogram:
            depth = 0
        elif tag == TAG.inlined_subroutine:
            depth += 1
        for child in die.children:
            self._visit(
                child,
                scope_bytes,
                parent_spans if tag in _SCOPES else [],
                function,
                symbol,
                abstract,
                depth,
                deferred,
            )
        if own_abstract is not None:
            self._zero([self.info.die_at(o) for o in own_abstract])

    def _origin(self, die: DIE) -> DIE | None:
        attr = die.attr(AT.abstract_origin)
        return self.info.target(attr) if attr is not None else None

    def _unlocated(self, die: DIE, variables: list[DIE]) -> list[DIE | None]:
        """Of ``variables`` (an abstract subprogram's), those no variable of ``die`` with a
        location or constant value (its children and lexical blocks) has as origin."""
        left = {v.offset: v for v in variables}
        stack = list(die.children)
        while stack:
            child = stack.pop()
            if child.tag in _VARIABLES and (AT.location in child or AT.const_value in child):
                origin = self._origin(child)
                if origin is not None:
                    left.pop(origin.offset, None)
            elif child.tag == TAG.lexical_block:
                stack.extend(child.children)
        return list(left.values())

    def _zero(self, variables: Iterable[DIE | None]) -> None:
        for var in variables:
            self.totals.add_bucket(0, var.tag if var is not None else None)

    def _count_function(self, die: DIE, inlined: bool) -> None:
        named = self._origin(die) if inlined or AT.abstract_origin in die else None
        source = named or die
        spec = source.attr(AT.specification)
        target = self.info.target(spec) if spec is not None else None
        name = source.get(AT.linkage_name) or source.get(AT.MIPS_linkage_name) or source.name
        if name is None and target is not None:
            name = target.get(AT.linkage_name) or target.get(AT.MIPS_linkage_name) or target.name
        decl = _recursive(self.info, die, AT.decl_file), _recursive(self.info, die, AT.decl_line)
        key = (name, *decl)
        if key not in self._function_ids:
            self._function_ids[key] = 0
            self.totals.functions += 1
        if inlined:
            self.totals.inlined_functions += 1

    def _spans(self, die: DIE, function: str | None) -> list[Span]:
        """The code ranges of a scope DIE (offsets in ``function``)."""
        if function is None:
            return []
        low, high = _range(die, function)
        if low is None or high is None:
            return []
        return [(function, low, high)] if high > low else []

    # -- one variable ---------------------------------------------------------------------------

    def _variable(
        self,
        die: DIE,
        scope_bytes: int,
        parent_spans: list[Span],
        function: FunctionStats | None,
        symbol: str | None,
        abstract: list[int] | None,
    ) -> None:
        tag = die.tag
        if tag not in _VARIABLES:
            return
        if tag == TAG.variable and AT.declaration in die:
            return
        deferred = False
        if AT.abstract_origin in die:
            if AT.location in die or AT.const_value in die:
                origin = self._origin(die)
                if abstract is not None and origin is not None and origin.offset in abstract:
                    abstract.remove(origin.offset)
            else:
                deferred = True
        path = self.join.path(die)
        found = self._location(die, symbol, path)
        has_location, whole, known, covered, readable, registers = found
        if whole:
            in_scope = scope_bytes
            covered_spans = list(parent_spans) if scope_bytes else []
            if known:
                readable = covered_spans
            else:
                readable = _intersect(_union(readable), covered_spans)
        else:
            scope = _union(parent_spans)
            in_scope = sum(_length(_intersect([c], scope)) for c in covered)
            readable = _intersect(_union(readable), scope)
            covered_spans = _intersect(_union(covered), scope)
        is_param = tag == TAG.formal_parameter
        if scope_bytes:
            self.totals.add_scope(is_param, scope_bytes, in_scope)
            if not deferred:
                self.totals.add_bucket(bucket_of(in_scope, scope_bytes), tag)
        # LLVM asks the abstract origin, when there is one, whether the variable is artificial.
        artificial = AT.artificial in (self._origin(die) or die)
        self.totals.add_variable(is_param, has_location, artificial)
        if function is None:
            return
        readable_bytes = _length(readable)
        function.variables.append(
            VariableStats(
                name=die.name or path.rsplit("/", 1)[-1],
                path=path,
                parameter=is_param,
                scope_bytes=scope_bytes,
                covered_bytes=min(in_scope, scope_bytes),
                readable_bytes=min(readable_bytes, scope_bytes),
                has_location=has_location,
                register_location=bool(registers),
                registers=sorted(registers),
                covered=[(lo, hi) for _, lo, hi in covered_spans],
                readable=[(lo, hi) for _, lo, hi in readable],
            )
        )

    def _location(
        self, die: DIE, symbol: str | None, path: str
    ) -> tuple[bool, bool, bool, list[Span], list[Span], set[str]]:
        """Of a variable: whether it has a location, whether it holds over all of its scope,
        whether it is readable wherever it holds (a constant or a memory location), the
        spans its list entries cover, the spans where it is readable, its PTX registers."""
        covered: list[Span] = []
        readable: list[Span] = []
        registers: set[str] = set()
        if AT.const_value in die:
            return True, True, True, covered, readable, registers
        attr = die.attr(AT.location)
        if attr is None or symbol is None:
            return attr is not None, attr is not None, False, covered, readable, registers
        if isinstance(attr.value, Block):
            regs = self.join.registers(attr.value)
            if not regs:
                return True, True, True, covered, readable, registers
            readable = self.readable.get((path, symbol, *_visibility_scope(die, symbol)), [])
            return True, True, False, covered, readable, set(regs)
        loc = self.info.location_list_at(attr.value) if isinstance(attr.value, int) else None
        if loc is None:
            return False, False, False, covered, readable, registers
        for begin, end, expr in loc.entries:
            if expr is None:
                continue
            in_function = _function_of_entry(begin, symbol, self.maps)
            lo, hi = _bound(begin, end, in_function), _bound(end, begin, in_function)
            if lo is None or hi is None or hi <= lo:
                continue
            span = (in_function, lo, hi)
            covered.append(span)
            regs = self.join.registers(expr)
            if regs:
                readable.extend(self.readable.get((path, in_function, lo, hi), []))
                registers.update(regs)
            else:
                readable.append(span)
        return True, False, False, covered, readable, registers


def _visibility_scope(die: DIE, symbol: str) -> tuple[int | None, int | None]:
    """The range :func:`~ptxdwarf.visibility.register_locations` gives a single location of
    ``die``: that of the innermost enclosing scope with a ``low_pc`` in ``symbol``."""
    parent = die.parent
    while parent is not None:
        if parent.tag in _SCOPES and AT.low_pc in parent:
            low, high = _range(parent, symbol)
            if low is not None or parent.tag == TAG.subprogram:
                return low, high
        parent = parent.parent
    return None, None


def _abstract_variables(die: DIE) -> Iterator[DIE]:
    """The variables and parameters of an abstract subprogram, through its lexical blocks."""
    for child in die.children:
        if child.tag in _VARIABLES:
            yield child
        elif child.tag == TAG.lexical_block:
            yield from _abstract_variables(child)


def _recursive(info: DebugInfo, die: DIE, name: int) -> object:
    """``findRecursively``: the attribute of ``die``, or of its abstract origin or specification."""
    seen = 0
    current: DIE | None = die
    while current is not None and seen < 8:
        if name in current:
            return current.get(name)
        ref = current.attr(AT.abstract_origin) or current.attr(AT.specification)
        current = info.target(ref) if ref is not None else None
        seen += 1
    return None


def _union(spans: Iterable[Span]) -> list[Span]:
    """``spans`` merged, sorted."""
    if not isinstance(spans, list):
        spans = list(spans)
    if len(spans) < 2:
        return [s for s in spans if s[2] > s[1]]
    out: list[Span] = []
    for f, lo, hi in sorted(s for s in spans if s[2] > s[1]):
        if out and out[-1][0] == f and lo <= out[-1][2]:
            if hi > out[-1][2]:
                out[-1] = (f, out[-1][1], hi)
        else:
            out.append((f, lo, hi))
    return out


def _intersect(a: list[Span], b: list[Span]) -> list[Span]:
    """The intersection of two lists of spans."""
    if len(a) == 1 and len(b) == 1:
        (fa, la, ha), (fb, lb, hb) = a[0], b[0]
        lo, hi = max(la, lb), min(ha, hb)
        return [(fa, lo, hi)] if fa == fb and lo < hi else []
    out = []
    for fa, la, ha in _union(a):
        for fb, lb, hb in b:
            if fa == fb:
                lo, hi = max(la, lb), min(ha, hb)
                if lo < hi:
                    out.append((fa, lo, hi))
    return _union(out)


def _length(spans: Iterable[Span]) -> int:
    return sum(hi - lo for _, lo, hi in spans)


def _count_lines(info: DebugInfo, module: ModuleStats) -> None:
    """Each function's SASS instructions, and those a ``.debug_line`` row with a nonzero
    line covers."""
    images = info.module
    if not isinstance(images, CubinImages):
        return
    sizes = {name: s.size for name, s in images.symbols.items() if s.kind == "STT_FUNC"}
    lined: dict[str, list[Span]] = {}
    starts: dict[str, list[tuple[int, int]]] = {}
    image = images.images.get(".debug_line")
    if image is not None:
        for program in read_line_programs(image):
            for row, after in itertools.pairwise(program.rows):
                if (
                    not row.end_sequence
                    and row.line
                    and row.symbol is not None
                    and after.address > row.address
                ):
                    lined.setdefault(row.symbol, []).append((row.symbol, row.address, after.address))
                    starts.setdefault(row.symbol, []).append((row.address, row.line))
    step = INSTRUCTION_BYTES
    counts = {}
    for name, size in sizes.items():
        with_line = sum(
            # the instruction starts (multiples of 16) in [lo, min(hi, size))
            max(0, -(-min(hi, size) // step) - -(-lo // step))
            for _, lo, hi in _union(lined.get(name, []))
        )
        counts[name] = (size // step, with_line)
    module.instructions = sum(n for n, _ in counts.values())
    module.instructions_with_line = sum(n for _, n in counts.values())
    for function in module.functions:
        function.instructions, function.instructions_with_line = counts.get(function.name, (0, 0))
        function.source_lines = _line_starts(starts.get(function.name, []))


def _line_starts(rows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(address, line) of the rows that start a run of one line, in address order."""
    out: list[tuple[int, int]] = []
    for address, line in sorted(rows):
        if not out or out[-1][1] != line:
            out.append((address, line))
    return out
