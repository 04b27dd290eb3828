"""Checks of where variables live: address classes, location expressions and lists,
the registers they name, and the ``__local_depot`` traps of ptxas."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..cuda.quirks import MISREAD_PIECE_SIZES, quirk
from ..dwarf.constants import (
    AT,
    CUDA_GDB_ADDRESS_CLASSES,
    FORM,
    HANDLE_CLASS,
    OP,
    SPACE_CLASS,
    TAG,
    AddressClass,
    address_class_name,
    at_name,
)
from ..dwarf.expr import MAX_REGISTER_NAME, Op, decode_expression, register_name
from ..dwarf.image import Symbol
from ..dwarf.model import DIE, Attribute, DebugInfo, Unit
from ..errors import PtxDwarfError
from ..ptx.module import PtxFunction, PtxVariable
from .context import LintContext
from .labels import check_label_in
from .rules import WARNING
from .units import BLOCK_FORMS

__all__ = [
    "LocationChecks",
    "bitfield_member_order",
    "check_bitfield_member",
    "check_name_order",
    "space_class",
]

_VARIABLE_TAGS = frozenset({TAG.variable, TAG.formal_parameter})
_LIST_FORMS = frozenset({FORM.data4, FORM.data8, FORM.sec_offset})
_REGISTER_OPS = frozenset({OP.regx, OP.bregx})
_ADDR = int(OP.addr)


def space_class(variable: PtxVariable) -> AddressClass | None:
    """The address class of a PTX variable: its handle type's (texture, sampler, surface), else
    its state space's; None for a space no class names."""
    return HANDLE_CLASS.get(variable.type or "") or SPACE_CLASS.get(variable.space)


class LocationChecks:
    """address-class-range, missing-address-class, regx-undeclared, regx-too-long,
    depot-in-pieces, bad-loclist-offset, and the
    label-wrong-function of list entries, over the DIEs of one unit."""

    def __init__(
        self,
        ctx: LintContext,
        info: DebugInfo,
        unit: Unit,
        loc_refs: set[int],
        filled: set[tuple[int, int]] | None = None,
    ) -> None:
        self.ctx = ctx
        self.info = info
        self.unit = unit
        self.loc_refs = loc_refs
        """Offsets of the .debug_loc lists some DIE refers to."""
        self.filled = filled
        """Where the DW_OP_addr operands of the DW_AT_location expressions are, as (offset, size)
        of an operand of the unit's address size (None: not asked)."""
        self._ops: dict[bytes, list[Op]] = {}
        self._finders: dict[int, Callable[[str], PtxVariable | None]] = {}
        self._last_block: bytes | None = None
        self._last_ops: list[Op] = []
        if info.locations is not None:
            ctx.lists = ctx.lists if ctx.lists is not None else {loc.offset: loc for loc in info.locations}

    def check_address_class(self, die: DIE, attr: Attribute, inner: Attribute) -> None:
        value = inner.value
        if not isinstance(value, int) or 1 <= value <= 12:
            return
        if value in CUDA_GDB_ADDRESS_CLASSES:
            self.ctx.add_attr(
                "address-class-range",
                f"DW_AT_address_class {value} ({address_class_name(value)}) is cuda-gdb's own code, not one of the "
                "guide's 1-12",
                die,
                attr,
                severity=WARNING,
            )
        else:
            self.ctx.add_attr(
                "address-class-range",
                f"DW_AT_address_class {value} is not a CUDA address class (1-12 in the guide, 13-16 cuda-gdb's own)",
                die,
                attr,
            )

    def check_location(self, die: DIE, location: Attribute, space: Attribute | None, sp: DIE | None) -> None:
        """The checks of ``die``'s DW_AT_location (``space``: its DW_AT_address_class, if any)."""
        inner = location.innermost
        if inner.form in BLOCK_FORMS:
            if space is None and die.tag in _VARIABLE_TAGS:
                self.ctx.add_attr(
                    "missing-address-class",
                    f"{die.tag_str} with a single-expression DW_AT_location has no DW_AT_address_class "
                    "(the guide requires one on every variable and parameter; cuda-gdb uses it to pick "
                    "the memory space)",
                    die,
                    location,
                )
            self.check_expression(die, location, inner, sp)
        elif inner.form in _LIST_FORMS:
            self.check_list_pointer(die, location, inner, sp)

    def decode(self, block: bytes) -> list[Op]:
        """The operations of an expression of this unit (those without symbols decoded once, and
        the last one asked for kept, for the predicate count that asks right after)."""
        if block is self._last_block:
            return self._last_ops
        if getattr(block, "relocs", None):
            ops = decode_expression(block, self.unit.address_size)
        else:
            key = bytes(block)
            known = self._ops.get(key)
            if known is None:
                known = self._ops[key] = decode_expression(block, self.unit.address_size)
            ops = known
        self._last_block, self._last_ops = block, ops
        return ops

    def declaration(self, f: PtxFunction, name: str) -> PtxVariable | None:
        """The ``.reg`` declaration of register ``name`` in ``f``
        (:meth:`~ptxdwarf.ptx.symbols.SymbolTable.register`)."""
        return self.finder(f)(name)

    def finder(self, f: PtxFunction) -> Callable[[str], PtxVariable | None]:
        """:meth:`declaration` in ``f``, as a function of the name."""
        find = self._finders.get(id(f))
        if find is None:
            find = self._finders[id(f)] = self.ctx.symbols.register_finder(f)
        return find

    def check_expression(self, die: DIE, attr: Attribute, inner: Attribute, sp: DIE | None) -> None:
        try:
            ops = self.decode(inner.value)
        except PtxDwarfError as exc:
            self.ctx.add_attr("structure", f"DW_AT_location: {exc.message}", die, attr)
            return
        f = self.ctx.subprogram_function(sp) if sp is not None else None
        self.check_registers(ops, sp, f, die, attr, "DW_AT_location")
        if ops and ops[0].code == OP.addr and ops[0].symbol is not None:
            self.check_space(die, ops[0].symbol)
        self.check_depot_pieces(ops, len(inner.value), die, attr)
        self.note_operands(die, attr, inner.value, ops)

    def note_operands(self, die: DIE, attr: Attribute, block: bytes, ops: list[Op]) -> None:
        """Add the (offset, size) of each DW_OP_addr operand of ``die``'s expression ``block``
        (``attr``'s value, decoded as ``ops``) to :attr:`filled`: a symbolic value that fills one
        is fine (:func:`~.units.check_info_relocs`)."""
        filled = self.filled
        if filled is None or not any(op.code == _ADDR for op in ops):
            return
        attrs = die.attributes
        if die.size < 0 or any(a.offset < 0 for a in attrs):
            return  # not decoded: no place known (as DIE.value_spans)
        k = next(j for j, a in enumerate(attrs) if a is attr)
        body = (attrs[k + 1].offset if k + 1 < len(attrs) else die.offset + die.size) - len(block)
        for op in ops:
            if op.code == _ADDR:
                filled.add((body + op.offset + 1, self.unit.address_size))

    def check_depot_pieces(self, ops: list[Op], size: int, die: DIE, attr: Attribute) -> None:
        """depot-in-pieces: right after a ``__local_depot`` address (and its DW_OP_plus_uconst), the
        first DW_OP_piece of a size ptxas misreads as an opcode, with fewer bytes after it than that
        opcode's operand (quirk depot-in-pieces; ``size``: the expression's length)."""
        for i, op in enumerate(ops):
            if op.code != OP.addr or op.symbol is None or not op.symbol.name.startswith("__local_depot"):
                continue
            if i and ops[i - 1].code == OP.piece and ops[i - 1].args == (3,):
                continue  # measured to compile
            j = i + 1
            if j < len(ops) and ops[j].code == OP.plus_uconst:
                j += 1
            piece = ops[j].args[0] if j < len(ops) and ops[j].code == OP.piece else None
            if not isinstance(piece, int) or piece not in MISREAD_PIECE_SIZES:
                continue
            wants = MISREAD_PIECE_SIZES[piece] or self.unit.address_size
            after = size - (ops[j + 1].offset if j + 1 < len(ops) else size)
            if after < wants:
                self.ctx.add_attr(
                    "depot-in-pieces",
                    f"DW_AT_location has DW_OP_piece {piece} right after DW_OP_addr {op.symbol}, with "
                    f"{after} byte(s) after it: ptxas {' and '.join(quirk('depot-in-pieces').holds_on)} fail "
                    "('Attempted to Dereference Out of Bounds' or 'Checked Data was Invalid'); describe "
                    "the object with pieces of other sizes (3 = 2 + 1, 16 = 8 + 8)",
                    die,
                    attr,
                )
            return  # ptxas reads the rest of the expression out of step: nothing after this was measured

    def check_space(self, die: DIE, symbol: Symbol) -> None:
        """address-class-space: the class of a DIE located at a PTX variable's address is its state space's."""
        attr = die.attr(AT.address_class)
        if attr is None:
            return
        value = attr.innermost.value
        variable = self.ctx.symbols.lookup(symbol.name).variable
        if variable is None or not isinstance(value, int) or not 1 <= value <= 12:
            return  # (a code outside the guide's is address-class-range)
        expected = space_class(variable)
        if expected is None or value == expected:
            return
        if value == AddressClass.GENERIC and expected == AddressClass.GLOBAL:
            self.ctx.add_attr(
                "address-class-space",
                f"{die.describe()} is at DW_OP_addr {symbol.name}, a .global variable (line {variable.line}), "
                f"with DW_AT_address_class 12 (ADDR_generic_space): ptxas relocates it to the variable's "
                f"address, which is also its generic address (whether a debugger reads it right is not "
                f"measured); the class of .global is {int(expected)} ({expected.spec_name})",
                die,
                attr,
                severity=WARNING,
            )
            return
        self.ctx.add_attr(
            "address-class-space",
            f"{die.describe()} is at DW_OP_addr {symbol.name}, a .{variable.space} variable (line "
            f"{variable.line}), but DW_AT_address_class is {value} ({address_class_name(value)}): ptxas writes "
            f"the class as given and the variable's .{variable.space} address, which a debugger reads as "
            f"{address_class_name(value)} memory; the class of .{variable.space} is "
            f"{int(expected)} ({expected.spec_name})",
            die,
            attr,
        )

    def check_list_pointer(self, die: DIE, attr: Attribute, inner: Attribute, sp: DIE | None) -> None:
        offset = inner.value
        if not isinstance(offset, int):
            return
        ctx = self.ctx
        loc = ctx.lists.get(offset) if ctx.lists is not None else None
        if loc is None:
            where = "the module has no .debug_loc" if self.info.locations is None else "no list starts there"
            ctx.add_attr(
                "bad-loclist-offset",
                f"{at_name(attr.name)} points at .debug_loc+{offset:#x}, but {where}",
                die,
                attr,
            )
            return
        self.loc_refs.add(loc.offset)
        f = ctx.subprogram_function(sp) if sp is not None else None
        code_owner = ctx.owners.get
        prefix = f"location list .debug_loc+{loc.offset:#x} entry "
        for i, (begin, end, expr) in enumerate(loc.entries):
            if f is not None:  # a label of the function's own code: nothing to say
                if isinstance(begin, Symbol) and code_owner(begin.name) is not f:
                    check_label_in(ctx, begin, f, die, attr, prefix + str(i))
                if isinstance(end, Symbol) and code_owner(end.name) is not f:
                    check_label_in(ctx, end, f, die, attr, prefix + str(i))
            if expr is None:
                continue
            try:
                ops = self.decode(expr)
            except PtxDwarfError as exc:
                ctx.add_attr("structure", f"{prefix}{i}: {exc.message}", die, attr)
                continue
            self.check_registers(ops, sp, f, die, attr, prefix, i)

    def check_registers(
        self,
        ops: Iterable[Op],
        sp: DIE | None,
        f: PtxFunction | None,
        die: DIE,
        attr: Attribute,
        context: str,
        entry: int | None = None,
    ) -> None:
        """regx-undeclared, regx-too-long: the registers ``ops`` name, in ``die``'s subprogram
        ``sp`` of PTX function ``f`` (``ctx.subprogram_function(sp)``); ``context`` (and
        ``entry``, the list entry's number) says where in the findings."""
        ctx = self.ctx
        symbols = ctx.symbols
        find = self.finder(f) if f is not None else None
        for op in ops:
            if op.code not in _REGISTER_OPS or not op.args or not isinstance(op.args[0], int):
                continue
            number = op.args[0]
            name = register_name(number)
            if name is None:
                ctx.add_attr(
                    "regx-undeclared",
                    f"{op.name} {number:#x} in {_place(context, entry)} does not spell a PTX register name (the operand must be "
                    "the name's ASCII bytes, read big-endian)",
                    die,
                    attr,
                )
                continue
            if len(name) > MAX_REGISTER_NAME:
                ctx.add_attr(
                    "regx-too-long",
                    f"{op.name} {name} in {_place(context, entry)}: {len(name)} characters; cuda-gdb can look up at most "
                    f"{MAX_REGISTER_NAME} (rename the register)",
                    die,
                    attr,
                )
            if f is not None and find is not None:
                if find(name) is None:
                    ctx.add_attr(
                        "regx-undeclared",
                        f"{op.name} {name} in {_place(context, entry)}: {f.kind} {f.name} (line {f.line}) declares no register "
                        f"{name}{_declared_registers(f)}",
                        die,
                        attr,
                    )
            elif not symbols.declares_register(name):
                where = (
                    "outside any subprogram" if sp is None else "in a subprogram that maps to no PTX function"
                )
                ctx.add_attr(
                    "regx-undeclared",
                    f"{op.name} {name} in {_place(context, entry)} ({where}): no PTX function declares register {name}",
                    die,
                    attr,
                )


def _place(context: str, entry: int | None) -> str:
    """Where in an expression's owner a finding is: ``context``, and the list entry's number."""
    return context if entry is None else f"{context}{entry}"


def check_name_order(ctx: LintContext, sp: DIE) -> None:
    """name-before-linkage-name: a subprogram with __local_depot locations has its name before
    its DW_AT_MIPS_linkage_name."""
    codes = [a.name for a in sp.attributes]
    linkage = AT.MIPS_linkage_name
    if AT.name not in codes or linkage not in codes or codes.index(AT.name) > codes.index(linkage):
        return
    for die in sp.iter_subtree():
        loc = die.attr(AT.location)
        if loc is None:
            continue
        relocs = loc.relocs or ()
        if any(r.symbol.name.startswith("__local_depot") for r in relocs):
            ctx.add_attr(
                "name-before-linkage-name",
                f"subprogram has DW_AT_name before DW_AT_MIPS_linkage_name and {die.describe()} lives on the "
                "local stack: ptxas dies with SIGSEGV; write the linkage name before the name (nvcc's order)",
                sp,
                sp.attr(AT.name) or sp.attributes[0],
            )
            return


_BIT_ATTRS = (AT.byte_size, AT.bit_size, AT.bit_offset)


def bitfield_member_order(die: DIE) -> tuple[int, int] | None:
    """Quirk bitfield-member-order: for a bit-field member whose DW_FORM_strp name precedes its
    DW_AT_bit_size, which precedes its DW_AT_data_member_location, the index of the
    data_member_location attribute and of the first bit attribute; None for any other DIE."""
    if die.tag != TAG.member:
        return None
    index = {a.name: i for i, a in reversed(list(enumerate(die.attributes)))}
    name, bits, where = index.get(AT.name), index.get(AT.bit_size), index.get(AT.data_member_location)
    if name is None or bits is None or where is None or not name < bits < where:
        return None
    attr = die.attributes[name]
    inner = attr.value if attr.form == FORM.indirect and isinstance(attr.value, Attribute) else attr
    if inner.form != FORM.strp:
        return None
    return where, min(index[a] for a in _BIT_ATTRS if a in index)


def check_bitfield_member(ctx: LintContext, die: DIE) -> None:
    """bitfield-member-order."""
    if bitfield_member_order(die) is not None:
        ctx.add_attr(
            "bitfield-member-order",
            "bit-field member with a DW_FORM_strp name and DW_AT_data_member_location after DW_AT_bit_size: "
            "ptxas fails ('Checked Data was Invalid', or 'Attempted to Dereference Out of Bounds'); put "
            "DW_AT_data_member_location before the bit attributes",
            die,
            die.attr(AT.data_member_location) or die.attributes[0],
        )


def _declared_registers(f: PtxFunction) -> str:
    regs = []
    for v in f.declarations:
        if v.space == "reg":
            regs.append(f"{v.name}<{v.count}>" if v.count is not None else v.name)
    if not regs:
        return " (it declares no registers)"
    shown = ", ".join(regs[:8]) + (", ..." if len(regs) > 8 else "")
    return f" (it declares {shown})"
