"""Where a value lives, and the CUDA address class that follows from it.

::

    from ptxdwarf import loc, AddressClass
    loc.register("%r1")                       # DW_OP_regx, class 2 (reg)
    loc.param("_Z4testPi_param_0")            # DW_OP_addr, class 7 (kernel parameter)
    loc.local("__local_depot0", 8)            # DW_OP_addr + DW_OP_plus_uconst, class 6
    loc.address("g_x", AddressClass.GLOBAL)   # DW_OP_addr, any class (global, shared, const, ...)
    loc.expression([Op.make("regx", 7)], AddressClass.REG)   # any DWARF expression
    loc.location_list([("$L__tmp0", "$L__tmp1", loc.register("%r1")), ...])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from .cuda.quirks import workaround
from .dwarf.constants import AddressClass
from .dwarf.expr import Op, register_number
from .dwarf.image import Symbol
from .errors import BuilderError

__all__ = [
    "Location",
    "LocationListSpec",
    "address",
    "address_class_of",
    "expression",
    "local",
    "location_list",
    "param",
    "register",
]


def address_class_of(value: AddressClass | int, what: str = "location") -> AddressClass:
    """``value`` as an :class:`AddressClass`; :class:`BuilderError` outside the spec's 1-12."""
    try:
        return AddressClass(int(value))
    except (ValueError, TypeError):
        raise BuilderError(
            f"{what}: address class {value!r} is not one of the PTX guide's codes 1-12"
        ) from None


@dataclass(frozen=True)
class Location:
    """A single-expression location with the address class of the storage it names."""

    ops: tuple[Op, ...]
    address_class: AddressClass | None = None
    symbols: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Names of the PTX symbols the expression uses."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "symbols", tuple(op.symbol.name for op in self.ops if op.symbol is not None))

    @property
    def register(self) -> str | None:
        """The PTX register, for a register location."""
        for op in self.ops:
            if op.register is not None:
                return op.register
        return None


@dataclass(frozen=True)
class LocationListSpec:
    """A value that moves: (begin label, end label, location) ranges, for ``.debug_loc``."""

    entries: tuple[tuple[Symbol, Symbol, Location], ...]

    @property
    def symbols(self) -> tuple[str, ...]:
        """Names of the PTX symbols the locations use (the range labels are not among them)."""
        return tuple(s for _, _, location in self.entries for s in location.symbols)

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels that bound the ranges."""
        return tuple(s.name for begin, end, _ in self.entries for s in (begin, end))

    @property
    def address_class(self) -> AddressClass | None:
        """The one class all ranges share, else None (nvcc writes none for lists)."""
        classes = {loc.address_class for _, _, loc in self.entries}
        return classes.pop() if len(classes) == 1 else None


# Operations are immutable, so locations share them: a module names each symbol and
# offset in many locations, and fewer live objects make the garbage collector's walks shorter.
@lru_cache(maxsize=4096)
def _addr_op(symbol: str) -> Op:
    """``DW_OP_addr symbol``."""
    return Op(0x03, (0,), Symbol(symbol))


@lru_cache(maxsize=4096)
def _plus_op(offset: int) -> Op:
    """``DW_OP_plus_uconst offset``."""
    return Op(0x23, (offset,))


@workaround("symbol-addend")
def _addr_plus(symbol: str, offset: int) -> tuple[Op, ...]:
    # Not "symbol+offset": ptxas drops or misplaces addends on code, variable and
    # depot symbols; DW_OP_plus_uconst says the same and survives.
    if offset < 0:
        raise BuilderError(f"address of {symbol}: offset {offset} is negative")
    if offset:
        return (_addr_op(symbol), _plus_op(offset))
    return (_addr_op(symbol),)


@lru_cache(maxsize=4096)  # a Location is immutable; code generators name the same registers again and again
def register(name: str) -> Location:
    """A value in a PTX register (``%r1``, ``%rd4``, ``%f2``): ``DW_OP_regx``, class reg.

    A register name of more than 8 characters cannot be described for cuda-gdb:
    :class:`~ptxdwarf.errors.RegisterNameError`.
    """
    return Location((Op(0x90, (register_number(name),)),), AddressClass.REG)


def param(symbol: str, offset: int = 0) -> Location:
    """A kernel (``.entry``) parameter: ``DW_OP_addr`` of its symbol, class param.

    ptxas replaces the symbol with the parameter's offset in the constant bank.
    """
    return Location(_addr_plus(symbol, offset), AddressClass.PARAM)


def local(depot: str, offset: int = 0) -> Location:
    """A slot of a function's local stack (``__local_depotN``): class local.

    ptxas rewrites ``DW_OP_addr depot; DW_OP_plus_uconst offset`` into a frame-base offset.
    """
    if offset < 0:
        raise BuilderError(f"local slot of {depot}: offset {offset} is negative")
    return Location((_addr_op(depot), _plus_op(offset)), AddressClass.LOCAL)


def address(symbol: str, address_class: AddressClass | int, offset: int = 0) -> Location:
    """A variable at a symbol's address in some state space (global, shared, const, generic...)."""
    cls = address_class_of(address_class, f"address of {symbol}")
    return Location(_addr_plus(symbol, offset), cls)


def expression(ops: Iterable[Op], address_class: AddressClass | int | None = None) -> Location:
    """Any DWARF expression, with the address class you say it has (or none)."""
    cls = address_class_of(address_class, "expression") if address_class is not None else None
    return Location(tuple(ops), cls)


def location_list(entries: Sequence[tuple[str | Symbol, str | Symbol, Location]]) -> LocationListSpec:
    """A location list: ``[(begin_label, end_label, location), ...]`` in code order."""
    out = []
    for begin, end, where in entries:
        if not isinstance(where, Location):
            raise BuilderError(f"location list entry {begin}..{end}: {where!r} is not a Location")
        b = begin if isinstance(begin, Symbol) else Symbol(begin)
        e = end if isinstance(end, Symbol) else Symbol(end)
        out.append((b, e, where))
    if not out:
        raise BuilderError("a location list needs at least one range")
    return LocationListSpec(tuple(out))
