"""The comparison of a PTX module's debug sections with the cubin ptxas made of them
(see :mod:`ptxdwarf.check`)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, cast

from ..cuda.cubin import CubinImages, cubin_images
from ..cuda.ptxas import PtxasFailed
from ..dwarf.constants import AT, FORM, at_name, form_name, tag_name
from ..dwarf.decode import decode_sections, locations_like
from ..dwarf.expr import ExpressionError, Op, decode_expression
from ..dwarf.image import Symbol, gc_paused
from ..dwarf.model import DIE, Attribute, DebugInfo, LocationList, Unit, die_path
from ..dwarf.schemas import Block
from ..errors import CubinError, DwarfError
from ..parallel import run_beside
from ..ptx.module import PtxFunction, PtxModule
from ..ptx.placement import LocRow, first_label_at_zero
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
from ..visibility import RegisterLocation, register_locations
from .lines import SassLines, compare_label_places, compare_line_files, compare_line_rows, expected_rows
from .report import CheckReport, Difference
from .sites import InfoSites

__all__ = [
    "compare",
    "die_and_attribute_at",
    "explain_failure",
    "kernel_param_offsets",
    "look_up_symbolic_values",
]

_DW_OP_ADDR = 0x03
_DW_OP_FBREG = 0x91
_DW_OP_PLUS_UCONST = 0x23
_DW_OP_NOP = 0x96
_SCALAR_RELOC_FORMS = frozenset(
    {FORM.addr, FORM.data4, FORM.data8, FORM.sec_offset, FORM.strp, FORM.ref_addr}
)


def kernel_param_offsets(found: CubinImages) -> dict[str, dict[int, int]]:
    """Kernel name -> {parameter ordinal: constant-bank address}, from the cubin's ``.nv.info.<kernel>``."""
    out: dict[str, dict[int, int]] = {}
    for name, raw in found.nv_info.items():
        base = None
        params: dict[int, int] = {}
        pos = 0
        while pos + 2 <= len(raw):
            fmt, attr = raw[pos], raw[pos + 1]
            if fmt == 4:  # EIFMT_SVAL: u16 size, then the value
                size = int.from_bytes(raw[pos + 2 : pos + 4], "little")
                value = raw[pos + 4 : pos + 4 + size]
                pos += 4 + size
            elif fmt == 3:  # EIFMT_HVAL
                value = raw[pos + 2 : pos + 4]
                pos += 4
            elif fmt == 2:  # EIFMT_BVAL
                value = raw[pos + 2 : pos + 3]
                pos += 3
            elif fmt == 1:  # EIFMT_NVAL
                value = b""
                pos += 2
            else:
                break
            if attr == 0x0A and len(value) >= 6:  # EIATTR_PARAM_CBANK: symbol, offset u16, size u16
                base = int.from_bytes(value[4:6], "little")
            elif (
                attr == 0x17 and len(value) >= 8
            ):  # EIATTR_KPARAM_INFO: index, ordinal u16, offset u16, flags
                ordinal = int.from_bytes(value[4:6], "little")
                params[ordinal] = int.from_bytes(value[6:8], "little")
        if base is not None:
            out[name] = {k: base + v for k, v in params.items()}
    return out


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


_LOW_PC, _HIGH_PC = int(AT.low_pc), int(AT.high_pc)


class _Values:
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

    def differ(
        self, path: str | DIE, what: str | Attribute, ptx: object, cubin: object, message: str = ""
    ) -> None:
        """Record a difference; ``path`` may be the PTX-side DIE and ``what`` its attribute
        (their names are made only now)."""
        if not isinstance(path, str):
            path = die_path(path)
        if not isinstance(what, str):
            what = _what(what)
        self.report.differences.append(Difference(path, what, _show(ptx), _show(cubin), message))

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
                    _show(got) if got else hex(value),
                    f"{name} is code of {function}: a relocation against {function} was expected",
                )
            return
        if found.kind == VARIABLE:
            if got is None or got.name != name:
                self.differ(
                    path,
                    what,
                    str(sym),
                    _show(got) if got else hex(value),
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
            path, what, str(sym), _show(got) if got else hex(value), f"{name} is not defined in the module"
        )

    def code_function(self, name: str) -> str | None:
        """The function whose code label ``name`` is (None when ``name`` is no code label):
        a relocation against that function at a nonzero offset is all :meth:`expect_symbol`
        asks of such a label."""
        try:
            return self._code_functions[name]
        except KeyError:
            pass
        found = self.symbols.lookup(name)
        function = found.function.name if found.kind == CODE_LABEL and found.function is not None else None
        self._code_functions[name] = function
        return function

    def range_as_expected(self, begin: object, end: object, got_begin: object, got_end: object) -> bool:
        """Whether a range whose ``begin`` and ``end`` are code labels in the PTX became, in the
        cubin, offsets in their function in order: then :meth:`expect_value` and
        :meth:`inverted` have nothing to say of it (the quick test; False: ask them)."""
        if not (
            type(begin) is Symbol
            and type(end) is Symbol
            and type(got_begin) is Symbol
            and type(got_end) is Symbol
        ):
            return False
        function = self.code_function(begin.name)
        return (
            function is not None
            and got_begin.name == function
            and got_begin.addend != 0
            and got_end.name == self.code_function(end.name)
            and got_end.addend != 0
            and (got_begin.name != got_end.name or got_begin.addend <= got_end.addend)
        )

    def expect_value(self, where: str, label: str, ptx: object, cubin: object) -> None:
        """A begin, end or length of a record outside .debug_info: a symbol or a number."""
        if isinstance(ptx, Symbol):
            self.expect_symbol(
                where, label, ptx, cubin if isinstance(cubin, Symbol) else None, _num(self.cubin, cubin)
            )
        elif ptx != _num(self.cubin, cubin):
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
        if cubin_block.relocs or not ptx_block.relocs:
            return None
        for reloc in ptx_block.relocs:
            found = self.symbols.lookup(reloc.symbol.name)
            if found.kind not in (LOCAL, DEPOT) or found.variable is None or found.variable.space != "local":
                return None
        places = tuple((r.offset, r.size, r.symbol.addend) for r in ptx_block.relocs)
        return bytes(ptx_block), bytes(cubin_block), places, asize

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
            self.differ(path, what, _ops(mine), _ops(theirs), "the expression changed length")
            return
        got_relocs = {r.offset: r.symbol for r in cubin_block.relocs}
        j = 0
        i = 0
        while i < len(mine):
            op = mine[i]
            other = theirs[j] if j < len(theirs) else None
            if op.code == _DW_OP_ADDR and op.symbol is not None:
                self.report.symbols += 1
                consumed = self.expect_addr(path, what, op, mine[i + 1 :], other, theirs[j + 1 :], got_relocs)
                if consumed is None:
                    return
                i += 1 + consumed[0]
                j += 1 + consumed[1]
                continue
            if other is None or other.code != op.code or other.args != op.args:
                self.differ(path, what, _ops(mine), _ops(theirs), f"{op} changed")
                return
            i += 1
            j += 1
        if j < len(theirs) and any(t.code != _DW_OP_NOP for t in theirs[j:]):
            self.differ(path, what, _ops(mine), _ops(theirs), "the cubin has more operations")

    def expect_addr(
        self,
        path: str | DIE,
        what: str | Attribute,
        op: Op,
        rest: list[Op],
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


class _Comparer(_Values):
    """The two DIE trees walked side by side, each attribute against what it must have become."""

    sites: InfoSites | None = None
    """The PTX's relocation sites in ``.debug_info`` (found on first use when not given)."""
    _differing: list[int] | None | bool = False

    def compare_units(self) -> None:
        mine, theirs = self.ptx.units, self.cubin.units
        if len(mine) != len(theirs):
            self.differ("<module>", ".debug_info", f"{len(mine)} unit(s)", f"{len(theirs)} unit(s)")
        for a, b in zip(mine, theirs, strict=False):
            self.report.units += 1
            where = f"<unit at 0x{a.offset:x}>"
            for field_name in ("offset", "length", "version", "address_size"):
                if getattr(a, field_name) != getattr(b, field_name):
                    self.differ(where, field_name, getattr(a, field_name), getattr(b, field_name))
            if a.die is not None and b.die is not None:
                self.compare_tree(a, b)

    def compare_tree(self, unit: Unit, other: Unit) -> None:
        unchanged = self.unchanged_dies(unit, other)
        if unchanged is not None and self.compare_by_sites(unit, other):
            return
        stack = [(unit.die, other.die)]
        dies = 0
        while stack:
            a, b = stack.pop()
            assert a is not None and b is not None
            dies += 1
            path = a
            if a.offset != b.offset or a.tag != b.tag:
                self.differ(
                    path,
                    "DIE",
                    f"{tag_name(a.tag)} at 0x{a.offset:x}",
                    f"{tag_name(b.tag)} at 0x{b.offset:x}",
                )
                continue
            if unchanged is None or not unchanged(a, b):
                self.compare_attributes(path, a, b, unit.address_size)
                self.inverted_pc(a, b)
            if len(a.children) != len(b.children):
                self.differ(path, "children", len(a.children), len(b.children))
            if a.children and b.children:
                stack.extend(reversed(list(zip(a.children, b.children, strict=False))))
        self.report.dies += dies

    def compare_by_sites(self, unit: Unit, other: Unit) -> bool:
        """:meth:`compare_tree` by relocation site (:mod:`.sites`), when the cubin's bytes differ
        from the PTX's only at the sites and inside the blocks that hold one: the attributes
        that hold a site compared, in the same order and with the same results as a walk of
        every DIE. False, having done nothing, when the cubin is not so."""
        sites = self.site_table()
        mine = sites.units.get(unit.offset)
        differing = self.differing()
        if mine is None or differing is None:
            return False
        lo = bisect.bisect_left(differing, unit.offset)
        hi = bisect.bisect_left(differing, unit.end)
        if not all(sites.in_site_block(mine, at) for at in differing[lo:hi]):
            return False
        theirs = list(other.iter_dies())
        dies = mine.dies
        relocated = mine.relocated
        order = sorted(relocated)
        if len(theirs) != len(dies) or any(theirs[i].offset != dies[i].offset for i in order):
            return False
        asize = unit.address_size
        compare_attribute, inverted_pc = self.compare_attribute, self.inverted_pc
        for i in order:
            a, b = dies[i], theirs[i]
            attrs_a, attrs_b = a.attributes, b.attributes
            for k in relocated[i]:
                compare_attribute(a, attrs_a[k], attrs_b[k], asize)
            inverted_pc(a, b)
        self.report.dies += len(dies)
        return True

    def site_table(self) -> InfoSites:
        """:attr:`sites`, found now when not given."""
        if self.sites is None:
            self.sites = InfoSites(self.ptx)
        return self.sites

    def differing(self) -> list[int] | None:
        """:meth:`~.sites.InfoSites.differing` of the cubin's ``.debug_info`` (found once)."""
        if self._differing is False:
            image = (self.cubin.sections or {}).get(".debug_info")
            self._differing = (
                None
                if image is None
                else self.site_table().differing(image.data, [r.offset for r in image.relocs])
            )
        return self._differing  # type: ignore[return-value]

    def unchanged_dies(self, unit: Unit, other: Unit) -> Callable[[DIE, DIE], bool] | None:
        """A test for a DIE pair whose attributes cannot differ: the same bytes, and no
        relocation in them on either side. None when the two units do not decode their
        bytes alike (header, abbreviations or strings differ)."""
        mine, theirs = self.ptx.sections or {}, self.cubin.sections or {}
        info_a, info_b = mine.get(".debug_info"), theirs.get(".debug_info")
        if info_a is None or info_b is None:
            return None
        for name in (".debug_abbrev", ".debug_str"):
            a, b = mine.get(name), theirs.get(name)
            if (a.data if a is not None else b"") != (b.data if b is not None else b""):
                return None
        if (unit.offset, unit.version, unit.address_size, unit.abbrevs) != (
            other.offset,
            other.version,
            other.address_size,
            other.abbrevs,
        ):
            return None
        data_a, data_b = info_a.data, info_b.data
        sites_a = [r.offset for r in info_a.relocs]
        sites_b = [r.offset for r in info_b.relocs]

        def unchanged(a: DIE, b: DIE) -> bool:
            start, end = a.offset, a.offset + a.size
            if a.size <= 0 or b.size != a.size or data_a[start:end] != data_b[start:end]:
                return False
            # a relocation of up to 8 bytes that starts before the DIE may reach into it
            for sites in (sites_a, sites_b):
                i = bisect.bisect_left(sites, start - 7)
                if i < len(sites) and sites[i] < end:
                    return False
            return True

        return unchanged

    def inverted_pc(self, a: DIE, b: DIE) -> None:
        """DW_AT_low_pc/DW_AT_high_pc of the cubin's ``b`` inverted (see :meth:`inverted`)."""
        low = high = None
        for attr in b.attributes:
            if attr.name == _LOW_PC and low is None:
                low = attr
            elif attr.name == _HIGH_PC and high is None:
                high = attr
        if low is None or high is None or not low.relocs or not high.relocs:
            return
        mine = (_label_of(a.attr(AT.low_pc)), _label_of(a.attr(AT.high_pc)))
        self.inverted(a, "DW_AT_low_pc..DW_AT_high_pc", mine, low.relocs[0].symbol, high.relocs[0].symbol)

    def compare_attributes(self, path: str | DIE, a: DIE, b: DIE, asize: int) -> None:
        if [(x.name, x.form) for x in a.attributes] != [(y.name, y.form) for y in b.attributes]:
            self.differ(path, "attributes", _attr_list(a), _attr_list(b))
            return
        for x, y in zip(a.attributes, b.attributes, strict=False):
            self.compare_attribute(path, x, y, asize)

    def compare_attribute(self, path: str | DIE, x: Attribute, y: Attribute, asize: int) -> None:
        """One attribute of the PTX (``x``) and the same of the cubin (``y``)."""
        outer = x
        while isinstance(x.value, Attribute) and isinstance(y.value, Attribute):
            x, y = x.value, y.value
        if isinstance(x.value, Block):
            if x.relocs or x.is_expression:
                self.expect_expression(path, outer, x.value, y.value, asize)
            elif bytes(x.value) != bytes(y.value):
                self.differ(path, outer, list(x.value), list(y.value))
            return
        if x.form == FORM.strp or isinstance(x.value, str):
            if x.relocs:
                before = len(self.report.differences)
                self.expect_symbol(
                    path, outer, x.relocs[0].symbol, None, y.target if y.target is not None else -1
                )
                if len(self.report.differences) > before:
                    wrong = self.report.differences.pop()
                    self.differ(
                        path,
                        outer,
                        repr(x.value),
                        repr(y.value),
                        f"{wrong.ptx} became {wrong.cubin}: {wrong.message}",
                    )
                    return
            if x.value != y.value:
                self.differ(path, outer, repr(x.value), repr(y.value))
            return
        if x.relocs and x.form in _SCALAR_RELOC_FORMS:
            got = y.relocs[0].symbol if y.relocs else None
            self.expect_symbol(path, outer, x.relocs[0].symbol, got, y.value)
            if got is not None:
                self.placed.setdefault(x.relocs[0].symbol.name, got)
            return
        if x.is_reference:
            if x.target != y.target:
                self.differ(path, outer, _hex(x.target), _hex(y.target))
            return
        if x.value != y.value:
            self.differ(path, outer, _show(x.value), _show(y.value))


# --- the sections besides .debug_info ----------------------------------------


def compare_sections(c: _Comparer) -> None:
    """The sections besides ``.debug_info``: each as ptxas should have written it."""
    _compare_bytes(c)
    _compare_name_sets(c)
    _compare_aranges(c)
    _compare_location_lists(c)
    _compare_range_lists(c)


def _compare_bytes(c: _Comparer) -> None:
    """``.debug_abbrev`` and ``.debug_str``: byte for byte."""
    mine = c.ptx.sections or {}
    theirs = c.cubin.sections or {}
    for name in (".debug_abbrev", ".debug_str"):
        a, b = mine.get(name), theirs.get(name)
        if a is None or not a.data:
            continue
        if b is None:
            c.differ(name, "section", f"{len(a.data)} bytes", "missing")
        elif a.data != b.data:
            at = next(
                (i for i, (p, q) in enumerate(zip(a.data, b.data, strict=False)) if p != q),
                min(len(a.data), len(b.data)),
            )
            c.differ(
                f"{name}+0x{at:x}",
                "bytes",
                f"{len(a.data)} bytes",
                f"{len(b.data)} bytes",
                "the section changed",
            )


def _compare_name_sets(c: _Comparer) -> None:
    """``.debug_pubnames`` and ``.debug_pubtypes``: unit offsets and entries."""
    for key in ("pubnames", "pubtypes"):
        sets_a = getattr(c.ptx, key) or []
        sets_b = getattr(c.cubin, key) or []
        if len(sets_a) != len(sets_b):
            c.differ(f".debug_{key}", "sets", len(sets_a), len(sets_b))
            continue
        for i, (x, y) in enumerate(zip(sets_a, sets_b, strict=False)):
            where = f".debug_{key}[{i}]"
            if isinstance(x.unit_offset, Symbol):
                c.expect_symbol(
                    where,
                    "unit offset",
                    x.unit_offset,
                    y.unit_offset if isinstance(y.unit_offset, Symbol) else None,
                    _num(c.cubin, y.unit_offset),
                )
            elif x.unit_offset != _num(c.cubin, y.unit_offset):
                c.differ(where, "unit offset", x.unit_offset, y.unit_offset)
            if x.entries != y.entries or x.unit_length != y.unit_length:
                c.differ(where, "entries", x.entries[:4], y.entries[:4])


def _compare_aranges(c: _Comparer) -> None:
    """``.debug_aranges``: each tuple's begin and length."""
    if c.ptx.aranges:
        b_sets = c.cubin.aranges or []
        for i, x in enumerate(c.ptx.aranges):
            where = f".debug_aranges[{i}]"
            if i >= len(b_sets):
                c.differ(where, "set", "present", "missing")
                continue
            y = b_sets[i]
            for j, ((b0, l0), (b1, l1)) in enumerate(zip(x.tuples, y.tuples, strict=False)):
                for label, p, q in (("begin", b0, b1), ("length", l0, l1)):
                    c.expect_value(f"{where}[{j}]", label, p, q)


def _compare_location_lists(c: _Comparer) -> None:
    """``.debug_loc``: each list's ranges and expressions."""
    if c.ptx.locations:
        lists_b = {lst.offset: lst for lst in c.cubin.locations or []}
        asize = c.ptx.units[0].address_size if c.ptx.units else 8
        as_expected = c.range_as_expected
        placed = c.placed
        for loc in c.ptx.locations:
            where = f".debug_loc+0x{loc.offset:x}"
            other = lists_b.get(loc.offset)
            if other is None or len(other.entries) > len(loc.entries):
                c.differ(
                    where,
                    "list",
                    f"{len(loc.entries)} entries",
                    "missing" if other is None else f"{len(other.entries)} entries",
                )
                continue
            for k, ((b0, e0, x0), (b1, e1, x1)) in enumerate(zip(loc.entries, other.entries, strict=False)):
                if as_expected(b0, e0, b1, e1):
                    c.report.symbols += 2
                    placed[cast(Symbol, b0).name] = cast(Symbol, b1)
                    placed[cast(Symbol, e0).name] = cast(Symbol, e1)
                else:
                    for label, p, q in (("begin", b0, b1), ("end", e0, e1)):
                        c.expect_value(f"{where}[{k}]", label, p, q)
                    c.inverted(f"{where}[{k}]", "range", (b0, e0), b1, e1)
                if x0 is not None and x1 is not None and (x0.relocs or x1.relocs or bytes.__ne__(x0, x1)):
                    c.expect_expression(f"{where}[{k}]", "expression", x0, x1, asize)
            if len(other.entries) < len(loc.entries):
                c.list_ends_early(where, loc, len(other.entries))


def _compare_range_lists(c: _Comparer) -> None:
    """``.debug_ranges``: each list's ranges."""
    if c.ptx.ranges:
        ranges_b = {lst.offset: lst for lst in c.cubin.ranges or []}
        for rng in c.ptx.ranges:
            where = f".debug_ranges+0x{rng.offset:x}"
            got = ranges_b.get(rng.offset)
            if got is None or len(got.entries) != len(rng.entries):
                c.differ(
                    where,
                    "list",
                    f"{len(rng.entries)} entries",
                    "missing" if got is None else f"{len(got.entries)} entries",
                )
                continue
            for k, ((b0, e0), (b1, e1)) in enumerate(zip(rng.entries, got.entries, strict=False)):
                for label, p, q in (("begin", b0, b1), ("end", e0, e1)):
                    c.expect_value(f"{where}[{k}]", label, p, q)
                c.inverted(f"{where}[{k}]", "range", (b0, e0), b1, e1)


def _dropped(label: str, function: str, how: str) -> str:
    """The explanation of a label ptxas dropped."""
    return (
        f"ptxas dropped label {label} of {function} and {how} for it (ptxas drops a label whose "
        "instruction is at line 0; `ptxdwarf lint` warns of it as label-at-line-zero)"
    )


def _label_of(attr: Attribute | None) -> object:
    """What the PTX wrote for an address attribute: its symbol, else its value."""
    if attr is None:
        return None
    return attr.relocs[0].symbol if attr.relocs else attr.value


def _num(info: DebugInfo, value: Any) -> Any:
    if isinstance(value, Symbol):
        return value.value if value.value is not None else value.addend
    return value


def _what(attr: Attribute) -> str:
    """``DW_AT_name [DW_FORM_string]``: how a difference names the attribute."""
    return f"{at_name(attr.name)} [{form_name(attr.form or 0)}]"


def _hex(value: object) -> str:
    return f"0x{value:x}" if isinstance(value, int) else str(value)


def _show(value: object) -> str:
    if isinstance(value, Symbol):
        return str(value) + (f" (= 0x{value.value:x})" if value.value is not None else "")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"0x{value:x}"
    return str(value)


def _ops(ops: Iterable[Op]) -> str:
    return ", ".join(str(o) for o in ops) or "<empty>"


def _attr_list(die: DIE) -> str:
    return ", ".join(at_name(a.name)[6:] for a in die.attributes)


def compare(
    module: PtxModule,
    ptx: DebugInfo,
    cubin_bytes: bytes,
    report: CheckReport,
    *,
    symbols: SymbolTable | None = None,
    rows: dict[str, dict[tuple[int, int], LocRow]] | None = None,
    first_labels: dict[int, str | None] | None = None,
    sites: InfoSites | None = None,
) -> CheckReport:
    """Fill ``report`` with the differences between ``ptx`` and the cubin (``rows``: the
    line-table rows each function's ``.loc`` directives make, :func:`expected_rows`;
    ``first_labels``: :func:`first_labels_at_zero`; ``sites``: the PTX's
    :class:`~.sites.InfoSites`; each found here when not given)."""
    with gc_paused():
        found = cubin_images(cubin_bytes)
        try:
            cubin = decode_sections(found.images, source="cubin", filename=report.filename + " (cubin)")
        except DwarfError as exc:
            report.differences.append(Difference("<cubin>", "DWARF", "readable", "unreadable", str(exc)))
            return report
        _share_location_lists(ptx, cubin)
        if report.debug == "line-info" and ".debug_line" not in found.images:
            report.differences.append(
                Difference("<cubin>", ".debug_line", "line information (.file/.loc)", "no .debug_line")
            )
        state, (registers, register_note) = run_beside(
            lambda: _compare_dwarf(module, ptx, cubin, found, report, symbols, rows, first_labels, sites),
            lambda: _join_register_map(cubin, found),
            work=len(module.text),
        )
        state.restore(report)
        report.registers = registers
        if register_note:
            report.notes.append(register_note)
        report.notes.extend(f"cubin: {note}" for note in cubin.notes)
    return report


def _share_location_lists(ptx: DebugInfo, cubin: DebugInfo) -> None:
    """Give ``cubin`` its location lists read through the PTX's (:func:`locations_like`), which
    both sides of the comparison would otherwise decode each."""
    theirs = (cubin.sections or {}).get(".debug_loc")
    if theirs is None or not ptx.locations:
        return
    asize = cubin.units[0].address_size if cubin.units else 8
    lists = locations_like(theirs, ptx.locations, asize)
    if lists is not None:
        cubin.locations = lists


class _ComparisonState(NamedTuple):
    """What the comparison adds to a report (it may run in another process, :mod:`.parallel`)."""

    differences: list[Difference]
    units: int
    dies: int
    symbols: int
    line_rows: int
    notes: list[str]

    def restore(self, report: CheckReport) -> None:
        """Put the comparison's results into ``report``."""
        report.differences, report.notes = self.differences, self.notes
        report.units, report.dies = self.units, self.dies
        report.symbols, report.line_rows = self.symbols, self.line_rows


def _compare_dwarf(
    module: PtxModule,
    ptx: DebugInfo,
    cubin: DebugInfo,
    found: CubinImages,
    report: CheckReport,
    symbols: SymbolTable | None,
    rows: dict[str, dict[tuple[int, int], LocRow]] | None,
    first_labels: dict[int, str | None] | None = None,
    sites: InfoSites | None = None,
) -> _ComparisonState:
    """Compare the units, the other sections, the line table and the numbers ptxas truncates."""
    comparer = _Comparer(module, ptx, cubin, found, report, symbols, first_labels)
    comparer.sites = sites
    comparer.compare_units()
    compare_sections(comparer)
    sass = SassLines(found, report)
    line_image = found.images.get(".debug_line")
    if module.files and line_image is not None and line_image.data:
        try:
            programs = [p for p in cubin.lines or [] if p.section == ".debug_line"]
        except DwarfError as exc:
            report.differences.append(
                Difference("<cubin>", ".debug_line", "readable", "unreadable", str(exc))
            )
        else:
            if programs:
                compare_line_files(module, programs[0], report)
            compare_line_rows(
                module, programs, report, rows if rows is not None else expected_rows(module), sass
            )
    compare_label_places(module, comparer.placed, sass, report)
    _truncated_numbers(module, ptx, report)
    return _ComparisonState(
        report.differences, report.units, report.dies, report.symbols, report.line_rows, report.notes
    )


def first_labels_at_zero(module: PtxModule) -> dict[int, str | None]:
    """:func:`~ptxdwarf.ptx.placement.first_label_at_zero` of each function, by ``id``: what
    the comparison asks of the PTX alone, found before the cubin is there."""
    return {id(f): first_label_at_zero(module.masked, f) for f in module.functions}


def _join_register_map(cubin: DebugInfo, found: CubinImages) -> tuple[list[RegisterLocation], str | None]:
    """The cubin's register locations against ptxas's register map, and a note when the map
    cannot be read."""
    if found.reg_sass is None:
        return [], None
    try:
        return register_locations(cubin, found.register_map()), None
    except CubinError as exc:
        return [], f"cubin: register map not read: {exc}"


def _truncated_numbers(module: PtxModule, info: DebugInfo, report: CheckReport) -> None:
    """A difference for each ``.b64`` number of 2**32 or more: the PTX image holds what ptxas
    keeps (its low 32 bits, quirk wide-literal-truncated), the text said more."""
    for block in module.sections:
        image = block.image
        for offset, written in sorted(image.wide_values.items()):
            path, what = block.name, f"{block.name}+0x{offset:x}"
            if block.name == ".debug_info":
                die, attr = die_and_attribute_at(info, offset)
                if die is not None:
                    path = die_path(die)
                if attr is not None and die is not None:
                    found = next((a for a in die.attributes if a.name == attr), None)
                    what = _what(found) if found is not None else at_name(attr)
            report.differences.append(
                Difference(
                    path,
                    what,
                    _show(written),
                    _show(written & 0xFFFFFFFF),
                    f"{image.source(offset) or block.name}: "
                    "ptxas keeps only the low 32 bits of a .b64 number (lint: wide-value)",
                )
            )


def look_up_symbolic_values(info: DebugInfo, symbols: SymbolTable) -> None:
    """Look up, once, the name of every symbolic value of the PTX's debug sections, so
    that the comparison finds each in the table's cache (``check`` does this while ptxas runs)."""
    images = info.sections or {}
    lookup = symbols.lookup
    for name in images:
        for reloc in images[name].relocs:
            lookup(reloc.symbol.name)


def explain_failure(exc: PtxasFailed, module: PtxModule, info: DebugInfo) -> PtxasFailed:
    """``exc`` with the DIE and attribute that made the PTX line ptxas rejected, when it is in a debug section."""
    first = next((m for m in exc.messages if m.severity in ("error", "fatal") and m.line), None)
    if first is None or first.line is None:
        return exc
    for block in module.sections:
        if block.line <= first.line <= block.end_line:
            image = block.image
            image.ensure_lines()
            i = bisect.bisect_left(image.line_numbers, first.line)
            offset = image.line_offsets[i] if i < len(image.line_offsets) else len(image.data)
            where = f"{block.name}+0x{offset:x}"
            if block.name == ".debug_info":
                die, attr = die_and_attribute_at(info, offset)
                if die is not None:
                    where += f", {die.describe()}" + (f", {at_name(attr)}" if attr is not None else "")
            exc.message = f"{exc.message} (in {where})"
            exc.args = (f"{exc.where}: {exc.message}",)
            return exc
    return exc


def die_and_attribute_at(info: DebugInfo, offset: int) -> tuple[DIE | None, int | None]:
    """The DIE whose bytes hold ``offset`` and, where it is in one, the attribute."""
    found = info.attribute_at(offset)
    if found is not None:
        return found[0], found[1].name
    return info.die_containing(offset), None
