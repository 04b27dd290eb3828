"""What a debugger can show: the cubin's DWARF joined with ptxas's register map.

A variable or parameter whose location is ``DW_OP_regx %r5`` (or a piece of one) names a PTX register; a
debugger finds its value through the function's entries for ``%r5`` in
``.nv_debug_info_reg_sass`` (:mod:`ptxdwarf.cuda.regmap`). :func:`register_locations`
gives, for each described register over each address range the DWARF states (the
variable's scope, or each entry of its location list), the map entries a debugger
reads it from. A register the function's map never names is shown as unavailable.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ._native import kernel, twin
from .cuda.regmap import FunctionRegisters, RegisterMapEntry, range_records
from .dwarf.constants import AT, FORM, OP, TAG
from .dwarf.expr import ExpressionError, decode_expression
from .dwarf.image import Block, Symbol
from .dwarf.model import DIE, Attribute, DebugInfo, die_path
from .dwarf.reprs import counted, short

__all__ = ["RegisterLocation", "register_locations", "unmapped_registers"]

_VARIABLES = (TAG.variable, TAG.formal_parameter)


class RegisterLocation:
    """A described register over one address range, and where a debugger reads it."""

    __slots__ = (
        "_entries",
        "_ranges",
        "function",
        "high_pc",
        "low_pc",
        "mapped",
        "path",
        "pieces",
        "register",
    )

    path: str
    """The DIE path (``_Z4testPi/x``)."""
    function: str
    """The function whose code the range is in (its symbol)."""
    register: str
    """The PTX register the DWARF names."""
    low_pc: int | None
    high_pc: int | None
    """The range, as offsets in the function's code (None: the DWARF gives none)."""
    mapped: bool
    """Whether the function's map has any entry (with a nonempty range) for the register."""
    pieces: frozenset[int]
    """The pieces the function's map has of the register (0 and 1 for a 64-bit one)."""

    def __init__(
        self,
        path: str,
        function: str,
        register: str,
        low_pc: int | None,
        high_pc: int | None,
        entries: Iterable[RegisterMapEntry],
        mapped: bool,
        pieces: frozenset[int] = frozenset(),
    ) -> None:
        self.path, self.function, self.register = path, function, register
        self.low_pc, self.high_pc = low_pc, high_pc
        self.mapped, self.pieces = mapped, pieces
        self._entries: tuple[RegisterMapEntry, ...] | None = tuple(entries)
        self._ranges: tuple[FunctionRegisters, bytes] | None = None
        """Until :attr:`entries` is asked: the function's map and the records of its entries for
        the register (:meth:`~ptxdwarf.cuda.regmap.FunctionRegisters.register_ranges`)."""

    @property
    def entries(self) -> tuple[RegisterMapEntry, ...]:
        """The function's map entries for the register that meet the range."""
        if self._entries is None:
            assert self._ranges is not None
            fmap, records = self._ranges
            lo, hi = self.low_pc, self.high_pc
            met = [
                i
                for i, elo, ehi, _ in range_records(records)
                if elo < ehi and (hi is None or elo < hi) and (lo is None or lo < ehi)
            ]
            self._entries = tuple(fmap.entry(i) for i in met)
            self._ranges = None
        return self._entries

    def spans(self) -> list[tuple[int, int, int]]:
        """(piece, low PC, high PC) of each of :attr:`entries`, without making the entries."""
        if self._entries is not None:
            return [(e.piece, e.low_pc, e.high_pc) for e in self._entries]
        assert self._ranges is not None
        lo, hi = self.low_pc, self.high_pc
        return [
            (piece, elo, ehi)
            for _i, elo, ehi, piece in range_records(self._ranges[1])
            if elo < ehi and (hi is None or elo < hi) and (lo is None or lo < ehi)
        ]

    def _key(self) -> tuple[object, ...]:
        return (
            self.path,
            self.function,
            self.register,
            self.low_pc,
            self.high_pc,
            self.entries,
            self.mapped,
            self.pieces,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RegisterLocation) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        low = "?" if self.low_pc is None else f"0x{self.low_pc:x}"
        high = "?" if self.high_pc is None else f"0x{self.high_pc:x}"
        mapped = "mapped" if self.mapped else "not mapped"
        return (
            f"<RegisterLocation {short(self.path)} {self.register} [{low}, {high}): "
            f"{counted(len(self.entries), 'entry', 'entries')}, {mapped}>"
        )

    def __getstate__(self) -> tuple[object, ...]:
        return self._key()

    def __setstate__(self, state: tuple[object, ...]) -> None:
        self.__init__(*state)  # type: ignore[misc]

    @property
    def readable(self) -> bool:
        """Whether a debugger reads the register somewhere in the range."""
        return bool(self.entries)

    @property
    def name(self) -> str:
        """The variable's name (the last part of the path)."""
        return self.path.rsplit("/", 1)[-1]

    def entries_at(self, address: int) -> list[RegisterMapEntry]:
        """The entries that hold the register at ``address`` (a code offset)."""
        return [e for e in self.entries if e.covers(address, address + 1)]

    def readable_at(self, address: int) -> bool:
        """Whether every piece the map has of the register is in a SASS register at ``address``."""
        if (self.low_pc is not None and address < self.low_pc) or (
            self.high_pc is not None and address >= self.high_pc
        ):
            return False
        pieces = self.pieces or {e.piece for e in self.entries}
        return bool(pieces) and {e.piece for e in self.entries_at(address)} >= pieces

    def to_json(self) -> dict[str, object]:
        return {
            "die": self.path,
            "function": self.function,
            "register": self.register,
            "low_pc": self.low_pc,
            "high_pc": self.high_pc,
            "mapped": self.mapped,
            "sass": [
                {"sass": e.sass, "low_pc": e.low_pc, "high_pc": e.high_pc, "piece": e.piece}
                for e in self.entries
            ],
        }


def register_locations(info: DebugInfo, functions: Iterable[FunctionRegisters]) -> list[RegisterLocation]:
    """Every register location of the variables and parameters of ``info`` (a cubin's DWARF),
    joined with the register map ``functions``, in DIE order."""
    return _join(info, list(functions))


@twin("visibility")
def _join(info: DebugInfo, functions: list[FunctionRegisters]) -> list[RegisterLocation]:
    """:func:`register_locations` of a list of maps."""
    join = _Join(info)
    result: list[RegisterLocation] = []
    append = result.append
    new_location = object.__new__
    asked: dict[str, set[str]] = {}  # the registers each function's map is asked for
    maps = {f.function: f for f in functions}
    for die, (function, low, high) in _variables_in_scope(info):
        attr = die.attr(AT.location)
        if attr is None:
            continue
        path = None
        for register, lo, hi, in_function in _ranges(join, attr, function, low, high, maps):
            path = path or join.path(die)
            loc = new_location(RegisterLocation)
            loc.path, loc.function, loc.register = path, in_function, register
            loc.low_pc, loc.high_pc = lo, hi
            append(loc)
            registers = asked.get(in_function)
            if registers is None:
                registers = asked[in_function] = set()
            registers.add(register)
    found = {}
    for function, registers in asked.items():
        fmap = maps.get(function) or _NO_MAP
        found[function] = (fmap, fmap.register_ranges(registers))
    for loc in result:
        fmap, by_register = found[loc.function]
        ranges, pieces = by_register[loc.register]
        loc.mapped, loc.pieces = bool(pieces), pieces
        loc._entries, loc._ranges = None, (fmap, ranges)
    return result


_Scope = tuple[str, int | None, int | None]


def _variables_in_scope(info: DebugInfo) -> Iterator[tuple[DIE, _Scope]]:
    """Each variable and parameter of ``info``, in DIE order, with the scope its parent is in:
    (function, low, high), the function the code symbol of the nearest subprogram with a
    ``low_pc`` at or above the parent, the range that of the innermost lexical block or inlined
    subroutine between them with a code range in that function, else the subprogram's. Those
    with no such subprogram, or one with no symbol, are left out."""
    for unit in info.units:
        if unit.die is None:
            continue
        # (DIE, its parent's scope, the code symbol of the nearest subprogram with a code
        # range above it: None when there is none or it has no symbol)
        stack: list[tuple[DIE, _Scope | None, str | None]] = [(unit.die, None, None)]
        pop, extend = stack.pop, stack.extend
        while stack:
            die, scope, function = pop()
            tag = die.tag
            if tag in _VARIABLES and scope is not None:
                yield die, scope
            if not die.children:
                continue
            if tag in _SCOPE_TAGS and AT.low_pc in die:
                scope, function = _inner_scope(die, scope, function)
            extend([(child, scope, function) for child in reversed(die.children)])


_SCOPE_TAGS = frozenset({TAG.subprogram, TAG.lexical_block, TAG.inlined_subroutine})


def _inner_scope(die: DIE, scope: _Scope | None, function: str | None) -> tuple[_Scope | None, str | None]:
    """The scope (:func:`_variables_in_scope`) that ``die``, a subprogram, lexical block or
    inlined subroutine with a ``low_pc``, gives its children, and the code symbol of the
    nearest subprogram with a ``low_pc`` at or above it; from those of its parent (``scope``,
    ``function``)."""
    if die.tag == TAG.subprogram:
        function = _function_name(die)
        if function is None:
            return None, None
        return (function, *_range(die, function)), function
    if function is not None:
        low, high = _range(die, function)
        if low is not None:
            return (function, low, high), function
    return scope, function


class _Join:
    """What :func:`register_locations` looks up more than once: registers by expression, the
    paths of scopes."""

    def __init__(self, info: DebugInfo) -> None:
        self.info = info
        self.address_size = info.units[0].address_size if info.units else 8
        self._registers: dict[bytes, tuple[str, ...]] = {}
        self._paths: dict[int, str] = {}

    def path(self, die: DIE) -> str:
        """:func:`~ptxdwarf.dwarf.model.die_path`, the paths of the scopes kept."""
        parent = die.parent
        if parent is None or parent.parent is None:
            return die_path(die)
        key = id(parent)
        parent_path = self._paths.get(key)
        if parent_path is None:
            parent_path = self._paths[key] = self.path(parent)
        return die_path(die, parent_path)

    def registers(self, expr: Block) -> tuple[str, ...]:
        """The PTX registers of a location that is ``DW_OP_regx`` or pieces of registers."""
        key = bytes(expr)
        found = self._registers.get(key)
        if found is None:
            found = self._registers[key] = _registers(expr, self.address_size)
        return found


_NO_MAP = FunctionRegisters("", b"", [], None)


def _path_part(die: DIE) -> str:
    """The last part of the path of ``die``, which has a parent."""
    return die_path(die, "")


def unmapped_registers(locations: Iterable[RegisterLocation]) -> list[RegisterLocation]:
    """The locations whose register the function's map never names: a debugger shows them
    as unavailable everywhere (one per DIE and register)."""
    seen: set[tuple[str, str]] = set()
    result = []
    for loc in locations:
        if not loc.mapped and (loc.path, loc.register) not in seen:
            seen.add((loc.path, loc.register))
            result.append(loc)
    return result


def _offset(value: object, function: str) -> int | None:
    """A code address as an offset in ``function`` (None if it is not one)."""
    if isinstance(value, Symbol):
        if value.name != function:
            return None
        return value.addend
    return value if isinstance(value, int) else None


def _bound(value: object, other: object, function: str) -> int | None:
    """One bound of a range as an offset in ``function``; None when unknown: a number beside a
    relocated other bound is what ptxas writes, without a relocation, for a label it dropped
    (quirk label-at-line-zero; a linked cubin has numbers for both)."""
    if isinstance(other, Symbol) and not isinstance(value, Symbol):
        return None
    return _offset(value, function)


def _pc(die: DIE, name: int) -> object:
    attr = die.attr(name)
    if attr is None:
        return None
    return attr.symbol or attr.value


def _function_name(sub: DIE) -> str | None:
    """The symbol of a subprogram's code: its ``low_pc`` relocation, else its linkage name."""
    attr = sub.attr(AT.low_pc)
    symbol = attr.symbol if attr is not None else None
    if symbol is not None:
        return symbol.name
    name = sub.get(AT.linkage_name) or sub.get(AT.MIPS_linkage_name) or sub.name
    return str(name) if name else None


def _range(die: DIE, function: str) -> tuple[int | None, int | None]:
    high_attr = die.attr(AT.high_pc)
    if high_attr is None:
        return None, None
    low_pc, high_pc = _pc(die, AT.low_pc), high_attr.symbol or high_attr.value
    low = _bound(low_pc, high_pc, function)
    if low is None:
        return None, None
    high = _bound(high_pc, low_pc, function)
    if high_attr.symbol is None and isinstance(high_attr.value, int) and high_attr.form != FORM.addr:
        # DWARF 4's constant class: the length of the range.
        high = low + high_attr.value
    return low, high


def _ranges(
    join: _Join,
    attr: Attribute,
    function: str,
    low: int | None,
    high: int | None,
    maps: dict[str, FunctionRegisters],
) -> Iterator[tuple[str, int | None, int | None, str]]:
    """(register, low, high, function) of each register location ``attr`` states (``maps``:
    the register map's functions)."""
    if isinstance(attr.value, Block):
        for register in join.registers(attr.value):
            yield register, low, high, function
        return
    if not isinstance(attr.value, int):
        return
    loc = join.info.location_list_at(attr.value)
    if loc is None:
        return
    for begin, end, expr in loc.entries:
        if expr is None:
            continue
        registers = join.registers(expr)
        if not registers:
            continue
        in_function = _function_of_entry(begin, function, maps)
        low, high = _bound(begin, end, in_function), _bound(end, begin, in_function)
        for register in registers:
            yield register, low, high, in_function


def _function_of_entry(begin: object, function: str, maps: dict[str, FunctionRegisters]) -> str:
    """The function whose code a list entry starting at ``begin`` is in: the function its
    begin is relocated against, else the scope's ``function`` (a begin relocated against a
    label ptxas dropped names no function, quirk label-at-line-zero)."""
    if isinstance(begin, Symbol) and (begin.name == function or begin.name in maps):
        return begin.name
    return function


def _registers(expr: Block, address_size: int) -> tuple[str, ...]:
    """The PTX registers of a location that is one ``DW_OP_regx``, or a composition of
    ``DW_OP_regx`` pieces and empty pieces; () for any other."""
    try:
        ops = decode_expression(expr, address_size)
    except ExpressionError:
        return ()
    if len(ops) == 1:
        return (ops[0].register,) if ops[0].register is not None else ()
    found = []
    i = 0
    while i < len(ops):
        op = ops[i]
        if op.code == OP.piece:
            i += 1
            continue
        if op.register is None or op.code != OP.regx or i + 1 >= len(ops) or ops[i + 1].code != OP.piece:
            return ()
        found.append(op.register)
        i += 2
    return tuple(found)


_KERNEL = kernel("visibility")
if _KERNEL is not None:
    _KERNEL.setup(DIE, Attribute, Block, Symbol, RegisterLocation, _registers, _path_part, _NO_MAP)
