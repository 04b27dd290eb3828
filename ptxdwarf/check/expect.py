"""What each value the PTX wrote must have become in the cubin, symbol by symbol."""

from __future__ import annotations

from typing import Any

from ..cuda.cubin import CubinImages
from ..cuda.nvinfo import kernel_param_offsets
from ..dwarf.constants import OP
from ..dwarf.expr import ExpressionError, Op, decode_expression
from ..dwarf.image import Block, Symbol
from ..dwarf.model import DIE, Attribute, DebugInfo, LocationList, die_path
from ..ptx.module import PtxFunction, PtxModule
from ..ptx.placement import first_label_at_zero
from ..ptx.symbols import (
    CODE_LABEL,
    DATA_LABEL,
    DEPOT,
    DEVICE_PARAM,
    FUNCTION,
    KERNEL_PARAM,
    LOCAL,
    PROTOTYPE,
    VARIABLE,
    PtxSymbol,
    SymbolTable,
    symbol_table,
)
from .plan import ComparisonPlan, code_function, local_places
from .report import CheckReport, Difference
from .show import attribute_title, show, show_ops
from .sites import InfoSites

__all__ = [
    "Expectations",
    "look_up_symbolic_values",
    "placed_in_order",
    "plain_value",
]


_DW_OP_ADDR, _DW_OP_FBREG, _DW_OP_NOP = int(OP.addr), int(OP.fbreg), int(OP.nop)


def _function_of(symbol: PtxSymbol) -> str | None:
    """The function whose code ``symbol`` is: itself (a function or prototype) or the one defining the label."""
    if symbol.kind in (FUNCTION, PROTOTYPE):
        return symbol.name
    if symbol.kind == CODE_LABEL and symbol.function is not None:
        return symbol.function.name
    return None


def _ordinal(symbol: PtxSymbol) -> int:
    """A kernel parameter's position in its kernel's parameter list."""
    assert symbol.function is not None
    return next(i for i, p in enumerate(symbol.function.params) if p is symbol.variable)


def _dropped(label: str, function: str, how: str) -> str:
    """The explanation of a label ptxas dropped."""
    return (
        f"ptxas dropped label {label} of {function} and {how} for it (ptxas drops a label whose "
        "instruction is at line 0; `ptxdwarf lint` warns of it as label-at-line-zero)"
    )


def plain_value(value: Any) -> Any:
    """A number of the cubin as a number: a symbol's value (its addend where it has none)."""
    if isinstance(value, Symbol):
        return value.value if value.value is not None else value.addend
    return value


class Expectations:
    """What each value the PTX wrote must have become in the cubin (a symbol, a number, an
    expression, a range), and the differences found so far."""

    def __init__(
        self,
        module: PtxModule,
        ptx: DebugInfo,
        cubin: DebugInfo,
        found: CubinImages,
        report: CheckReport,
        symbols: SymbolTable | None = None,
        first_labels: dict[int, str | None] | None = None,
    ) -> None:
        self.module = module
        self.ptx = ptx
        self.cubin = cubin
        self.found = found
        self.report = report
        self.symbols = symbols if symbols is not None else symbol_table(module)
        self.params = kernel_param_offsets(found)
        self.cubin_syms = found.symbols
        self._first_labels: dict[int, str | None] = dict(first_labels or {})
        self._code_functions: dict[str, str | None] = {}
        self._local_expressions: dict[tuple[object, ...], int] = {}
        self.placed: dict[str, Symbol] = {}
        """Each code label of the location lists and the DIEs -> its relocation in the cubin."""
        self.sites: InfoSites | None = None
        """The PTX's relocation sites in ``.debug_info`` (found on first use when not given)."""
        self.plan: ComparisonPlan | None = None
        """What the comparison asks of the PTX side alone (found on first use when not given)."""

    def site_table(self) -> InfoSites:
        """:attr:`sites`, found now when not given."""
        if self.sites is None:
            self.sites = InfoSites(self.ptx)
        return self.sites

    def comparison_plan(self) -> ComparisonPlan:
        """:attr:`plan`, found now when not given."""
        if self.plan is None:
            self.plan = ComparisonPlan(self.module, self.ptx, self.site_table(), self.symbols)
        return self.plan

    def differ(
        self, path: str | DIE, what: str | Attribute, ptx: object, cubin: object, message: str = ""
    ) -> None:
        """Record a difference; ``path`` may be the PTX-side DIE and ``what`` its attribute
        (their names are made only now)."""
        if not isinstance(path, str):
            path = die_path(path)
        if not isinstance(what, str):
            what = attribute_title(what)
        self.report.differences.append(Difference(path, what, show(ptx), show(cubin), message))

    # --- symbols -----------------------------------------------------------

    def expect_symbol(
        self, path: str | DIE, what: str | Attribute, sym: Symbol, got: Symbol | None, value: int
    ) -> None:
        """A scalar the PTX wrote as ``sym``; the cubin has relocation ``got`` and ``value``."""
        self.report.symbols += 1
        name = sym.name
        if sym.is_section:
            if value != sym.addend:
                self.differ(
                    path, what, str(sym), hex(value), f"ptxas did not resolve {sym} to offset {sym.addend}"
                )
            return
        found = self.symbols.lookup(name)
        if found.kind == DATA_LABEL:
            section, offset = found.section, found.offset or 0
            want = offset + sym.addend
            if value != want:
                self.differ(
                    path,
                    what,
                    str(sym),
                    hex(value),
                    f"{name} is {section}+0x{offset:x}, so 0x{want:x} was expected",
                )
            return
        function = _function_of(found)
        if function is not None:
            if got is not None and got.name == name and self.undefined_in_cubin(name):
                self.differ(
                    path,
                    what,
                    str(sym),
                    f"{got} (= 0x{value:x})",
                    f"ptxas dropped label {name} of {function}: the cubin relocates against it as an undefined "
                    "symbol, which reads 0 (ptxas drops a label whose instruction is at line 0; "
                    "`ptxdwarf lint` warns of it as label-at-line-zero)",
                )
            elif got is None and value == 0:
                self.differ(path, what, str(sym), "0 (no relocation)", _dropped(name, function, "writes 0"))
            elif (
                got is not None
                and got.name == function
                and got.addend == 0
                and found.kind == CODE_LABEL
                and found.function is not None
                and self.first_at_zero(found.function) == name
            ):
                self.differ(
                    path,
                    what,
                    str(sym),
                    f"{got} (= 0x{value:x})",
                    f"ptxas placed {name}, the first label of {function}, at the function's start though code "
                    "comes before it (no branch precedes it; quirk first-label-at-zero): put a label at the top "
                    "of the body",
                )
            elif got is None or got.name != function:
                self.differ(
                    path,
                    what,
                    str(sym),
                    show(got) if got else hex(value),
                    f"{name} is code of {function}: a relocation against {function} was expected",
                )
            return
        if found.kind == VARIABLE:
            if got is None or got.name != name:
                self.differ(
                    path,
                    what,
                    str(sym),
                    show(got) if got else hex(value),
                    f"a relocation against variable {name} was expected",
                )
            return
        if found.kind in (KERNEL_PARAM, DEVICE_PARAM) or (
            found.kind in (LOCAL, DEPOT)
            and found.variable is not None
            and found.variable.space in ("local", "shared")
        ):
            return  # only meaningful inside an expression
        self.differ(
            path, what, str(sym), show(got) if got else hex(value), f"{name} is not defined in the module"
        )

    def code_function(self, name: str) -> str | None:
        """The function whose code label ``name`` is (None when ``name`` is no code label):
        a relocation against that function at a nonzero offset is all :meth:`expect_symbol`
        asks of such a label."""
        try:
            return self._code_functions[name]
        except KeyError:
            pass
        function = self._code_functions[name] = code_function(self.symbols, name)
        return function

    def range_as_expected(self, begin: object, end: object, got_begin: object, got_end: object) -> bool:
        """Whether a range whose ``begin`` and ``end`` are code labels in the PTX became, in the
        cubin, offsets in their function in order: then :meth:`expect_value` and
        :meth:`inverted` have nothing to say of it (the quick test; False: ask them)."""
        if not (type(begin) is Symbol and type(end) is Symbol):
            return False
        return placed_in_order(
            self.code_function(begin.name), self.code_function(end.name), got_begin, got_end
        )

    def expect_value(self, where: str, label: str, ptx: object, cubin: object) -> None:
        """A begin, end or length of a record outside .debug_info: a symbol or a number."""
        if isinstance(ptx, Symbol):
            self.expect_symbol(
                where,
                label,
                ptx,
                cubin if isinstance(cubin, Symbol) else None,
                plain_value(cubin),
            )
        elif ptx != plain_value(cubin):
            self.differ(where, label, ptx, cubin)

    def first_at_zero(self, function: PtxFunction) -> str | None:
        """The label of ``function`` ptxas places at offset 0 (see :func:`first_label_at_zero`)."""
        key = id(function)
        if key not in self._first_labels:
            self._first_labels[key] = first_label_at_zero(self.module.masked, function)
        return self._first_labels[key]

    def list_ends_early(self, where: str, loc: LocationList, kept: int) -> None:
        """The cubin's copy of ``loc`` ends after ``kept`` entries: the next entry reads 0, 0
        (the end-of-list mark), usually where ptxas dropped both of its labels."""
        begin, end, _ops = loc.entries[kept]
        lost = f"the cubin's list ends here (0, 0 is the end-of-list mark): {len(loc.entries) - kept} of its {len(loc.entries)} entries are lost"
        for label, value in (("begin", begin), ("end", end)):
            message = lost
            if isinstance(value, Symbol):
                function = _function_of(self.symbols.lookup(value.name))
                if function is not None:
                    message = f"{lost}; {_dropped(value.name, function, 'writes 0')}"
            self.differ(f"{where}[{kept}]", label, value, "0 (no relocation)", message)

    def undefined_in_cubin(self, name: str) -> bool:
        """Whether the cubin's symbol ``name`` is undefined (no section)."""
        sym = self.cubin_syms.get(name)
        return sym is not None and sym.section is None

    def expect_expression(
        self, path: str | DIE, what: str | Attribute, ptx_block: Block, cubin_block: Block, asize: int
    ) -> None:
        """Compare two location expressions op by op, following ptxas's rewrites."""
        if not ptx_block.relocs and not cubin_block.relocs and bytes.__eq__(ptx_block, cubin_block):
            return  # nothing symbolic for ptxas to rewrite, and nothing changed
        key = self.local_only(ptx_block, cubin_block, asize)
        if key is not None:
            counted = self._local_expressions.get(key)
            if counted is not None:
                self.report.symbols += counted
                return
            differences, symbols = len(self.report.differences), self.report.symbols
            self._compare_expressions(path, what, ptx_block, cubin_block, asize)
            if len(self.report.differences) == differences:
                self._local_expressions[key] = self.report.symbols - symbols
            return
        self._compare_expressions(path, what, ptx_block, cubin_block, asize)

    def local_only(self, ptx_block: Block, cubin_block: Block, asize: int) -> tuple[object, ...] | None:
        """What decides the comparison of two expressions whose only symbols are local-space
        variables (the depot, rewritten by ptxas into ``DW_OP_fbreg``): their bytes and the
        symbols' places and addends, not their names. None for any other pair."""
        if cubin_block.relocs:
            return None
        mine = local_places(self.symbols, ptx_block)
        if mine is None:
            return None
        return mine[0], bytes(cubin_block), mine[1], asize

    def _compare_expressions(
        self, path: str | DIE, what: str | Attribute, ptx_block: Block, cubin_block: Block, asize: int
    ) -> None:
        try:
            mine = decode_expression(ptx_block, asize)
            theirs = decode_expression(cubin_block, asize)
        except ExpressionError as exc:
            if bytes(ptx_block) != bytes(cubin_block):
                self.differ(path, what, list(ptx_block), list(cubin_block), f"undecodable expression: {exc}")
            return
        if len(bytes(ptx_block)) != len(bytes(cubin_block)):
            self.differ(path, what, show_ops(mine), show_ops(theirs), "the expression changed length")
            return
        got_relocs = {r.offset: r.symbol for r in cubin_block.relocs}
        j = 0
        i = 0
        while i < len(mine):
            op = mine[i]
            other = theirs[j] if j < len(theirs) else None
            if op.code == _DW_OP_ADDR and op.symbol is not None:
                self.report.symbols += 1
                consumed = self.expect_addr(path, what, op, other, theirs[j + 1 :], got_relocs)
                if consumed is None:
                    return
                i += 1 + consumed[0]
                j += 1 + consumed[1]
                continue
            if other is None or other.code != op.code or other.args != op.args:
                self.differ(path, what, show_ops(mine), show_ops(theirs), f"{op} changed")
                return
            i += 1
            j += 1
        if j < len(theirs) and any(t.code != _DW_OP_NOP for t in theirs[j:]):
            self.differ(path, what, show_ops(mine), show_ops(theirs), "the cubin has more operations")

    def expect_addr(
        self,
        path: str | DIE,
        what: str | Attribute,
        op: Op,
        other: Op | None,
        other_rest: list[Op],
        relocs: dict[int, Symbol],
    ) -> tuple[int, int] | None:
        """Check one ``DW_OP_addr symbol``; return how many more ops each side used."""
        sym = op.symbol
        assert sym is not None
        name = sym.name
        show = f"DW_OP_addr {sym}"
        if other is None:
            self.differ(path, what, show, "nothing", "the operation is gone")
            return None
        found = self.symbols.lookup(name)
        space = found.variable.space if found.kind in (LOCAL, DEPOT) and found.variable is not None else None
        if found.kind == KERNEL_PARAM:
            assert found.function is not None
            kernel, ordinal = found.function.name, _ordinal(found)
            expected = self.params.get(kernel, {}).get(ordinal)
            if other.code != _DW_OP_ADDR:
                self.differ(path, what, show, str(other), "a constant-bank address was expected")
                return None
            if expected is not None and other.args[0] != expected + sym.addend:
                self.differ(
                    path,
                    what,
                    show,
                    str(other),
                    f"parameter {ordinal} of {kernel} is at 0x{expected:x} in the constant bank",
                )
            return (0, 0)
        if space == "local":
            if other.code != _DW_OP_FBREG:
                self.differ(
                    path,
                    what,
                    show,
                    str(other),
                    "ptxas did not rewrite the local-depot address into DW_OP_fbreg",
                )
                return None
            # ptxas writes DW_OP_fbreg -framesize over the address and pads with nops;
            # what follows (the slot's DW_OP_plus_uconst) stays.
            skipped = 0
            while skipped < len(other_rest) and other_rest[skipped].code == _DW_OP_NOP:
                skipped += 1
            return (0, skipped)
        if space == "shared" or (
            found.kind == VARIABLE and found.variable is not None and found.variable.space == "shared"
        ):
            if other.code != _DW_OP_ADDR:
                self.differ(path, what, show, str(other), "a shared-window offset was expected")
                return None
            return (0, 0)
        if found.kind == DEVICE_PARAM:
            self.differ(
                path,
                what,
                show,
                str(other),
                f"{name} is a parameter of a device function: ptxas cannot place it and writes {other.args[0] if other.args else 0!r}",
            )
            return (0, 0)
        target = name if found.kind == VARIABLE else _function_of(found)
        if target is None:
            self.differ(path, what, show, str(other), f"{name} is not defined in the module")
            return (0, 0)
        got = relocs.get(other.offset + 1)
        if other.code != _DW_OP_ADDR or got is None or got.name != target:
            self.differ(
                path,
                what,
                show,
                f"{other}" + (f" <{got}>" if got else ""),
                f"a relocation against {target} was expected",
            )
        return (0, 0)

    def inverted(
        self, path: str | DIE, what: str, ptx: tuple[object, object], begin: object, end: object
    ) -> None:
        """A range of the cubin whose end lies before its begin in one function: ptxas moved
        the code between the range's labels (it reorders blocks), so a debugger sees an empty
        or wrong range though every label was relocated right."""
        if (
            isinstance(begin, Symbol)
            and isinstance(end, Symbol)
            and begin.name == end.name
            and not begin.is_section
            and begin.addend > end.addend
        ):
            self.differ(
                path,
                what,
                f"[{ptx[0]}, {ptx[1]})",
                f"[{begin.name}+0x{begin.addend:x}, {end.name}+0x{end.addend:x})",
                "the range is inverted in the cubin: ptxas placed its end label before its begin label, "
                "having moved the code in between",
            )


def placed_in_order(
    begin_function: str | None, end_function: str | None, got_begin: object, got_end: object
) -> bool:
    """Whether the begin and end of a range, code labels of ``begin_function`` and
    ``end_function`` (None: not a code label), became in the cubin offsets in those functions,
    in order: :meth:`Expectations.range_as_expected` of labels whose functions are known."""
    return (
        begin_function is not None
        and type(got_begin) is Symbol
        and type(got_end) is Symbol
        and got_begin.name == begin_function
        and got_begin.addend != 0
        and got_end.name == end_function
        and got_end.addend != 0
        and (got_begin.name != got_end.name or got_begin.addend <= got_end.addend)
    )


def look_up_symbolic_values(info: DebugInfo, symbols: SymbolTable) -> None:
    """Look up, once, the name of every symbolic value of the PTX's debug sections, so
    that the comparison finds each in the table's cache (``check`` does this while ptxas runs)."""
    images = info.sections or {}
    lookup = symbols.lookup
    for name in images:
        for reloc in images[name].relocs:
            lookup(reloc.symbol.name)
