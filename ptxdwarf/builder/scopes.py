"""Variables and the scopes that hold them: functions and lexical blocks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..abi import ParamDecl, lower
from ..dwarf.built import BuiltDIE
from ..dwarf.constants import AT, TAG, AddressClass
from ..dwarf.expr import Op
from ..dwarf.image import Symbol
from ..errors import BuilderError
from ..loc import Location, LocationListSpec, expression, param
from ._common import _FORMAL_PARAMETER, _VARIABLE
from .types import Type

if TYPE_CHECKING:
    from .core import DebugInfoBuilder


@dataclass(eq=False)
class Variable:
    """A parameter or variable DIE, with the location it was given."""

    die: BuiltDIE
    name: str
    type: Type
    location: Location | LocationListSpec | None
    builder: DebugInfoBuilder = field(repr=False)

    def set_location(self, location: Location | LocationListSpec) -> None:
        """Give (or replace) the location, e.g. once registers are allocated."""
        self.builder._set_location(self, location, self.name)


class _Scope:
    """Something that holds variables and lexical blocks: a function or a block."""

    def __init__(self, builder: DebugInfoBuilder, die: BuiltDIE, what: str) -> None:
        self._builder = builder
        self.die = die
        self._what = what
        self.variables: list[Variable] = []
        self.blocks: list[LexicalBlock] = []

    def variable(
        self,
        name: str,
        type: Type,
        *,
        line: int | None = None,
        location: Location | LocationListSpec | None = None,
        file: int | None = None,
        artificial: bool = False,
    ) -> Variable:
        """A local variable of this scope (``DW_TAG_variable``)."""
        var = self._builder._variable(_VARIABLE, self.die, name, type, line, location, file, self._what)
        if artificial:
            var.die.put(AT.artificial, True)
        self.variables.append(var)
        return var

    def lexical_block(self, *, low_pc: str | None = None, high_pc: str | None = None) -> LexicalBlock:
        """A nested scope; ``low_pc``/``high_pc`` are labels of the PTX code it covers."""
        if (low_pc is None) != (high_pc is None):
            raise BuilderError(
                f"{self._what}: a lexical block needs both low_pc and high_pc labels, or neither"
            )
        die = BuiltDIE(TAG.lexical_block)
        if low_pc is not None and high_pc is not None:
            die.put(AT.low_pc, Symbol(low_pc), "addr")
            die.put(AT.high_pc, Symbol(high_pc), "addr")
            self._builder._labels_used.update((low_pc, high_pc))
        self.die.add_child(die)
        block = LexicalBlock(self._builder, die, f"{self._what}/block{len(self.blocks)}")
        self.blocks.append(block)
        return block


class LexicalBlock(_Scope):
    """A ``DW_TAG_lexical_block``."""


class Function(_Scope):
    """A device function or kernel (``DW_TAG_subprogram``)."""

    def __init__(
        self,
        builder: DebugInfoBuilder,
        die: BuiltDIE,
        name: str,
        linkage_name: str,
        kernel: bool,
        low_pc: str,
        high_pc: str,
        auto_labels: bool,
    ) -> None:
        super().__init__(builder, die, name)
        self.name = name
        self.linkage_name = linkage_name
        self.kernel = kernel
        self.low_pc = low_pc
        self.high_pc = high_pc
        self.auto_labels = auto_labels
        self.parameters: list[Variable] = []
        self.external = True
        self.return_type: Type | None = None
        self.ptx_params: list[ParamDecl] = []

    def __repr__(self) -> str:
        return f"<Function {'kernel ' if self.kernel else ''}{self.name} ({self.linkage_name})>"

    def parameter(
        self,
        name: str,
        type: Type,
        *,
        line: int | None = None,
        location: Location | LocationListSpec | None = None,
        file: int | None = None,
        artificial: bool = False,
    ) -> Variable:
        """A formal parameter (``DW_TAG_formal_parameter``), in declaration order.

        The address class follows from ``location``: ``loc.register`` -> reg,
        ``loc.param`` -> param, ``loc.local`` -> local, ``loc.address(..., cls)`` -> cls.
        """
        var = self._builder._variable(
            _FORMAL_PARAMETER, self.die, name, type, line, location, file, self.name
        )
        if artificial:
            var.die.put(AT.artificial, True)
        # Parameters come before other children, as compilers write them.
        # _variable appended it; the parameters made so far are the first children.
        children = self.die.children
        index = len(self.parameters)
        if index != len(children) - 1:
            children.insert(index, children.pop())
        self.parameters.append(var)
        return var

    def abi_parameter(
        self,
        name: str,
        type: Type,
        *,
        line: int | None = None,
        location: Location | LocationListSpec | None = None,
        file: int | None = None,
    ) -> Variable:
        """A source-level parameter passed by the PTX ABI: adds its ``.param``
        declaration(s) to :attr:`ptx_params` and its formal-parameter DIE.

        A kernel's parameter gets its location from the ``.param`` symbol (class
        param); a slice's two halves are described as pieces of one value. A device
        function's parameter has the ``location`` you give (usually a register).
        """
        decls = lower(
            type,
            f"{self.linkage_name}_param_",
            len(self.ptx_params),
            kernel=self.kernel,
            address_size=self._builder.address_size,
        )
        self.ptx_params.extend(decls)
        if location is None and self.kernel and decls:
            if len(decls) == 1:
                location = param(decls[0].name)
            else:
                size = self._builder.address_size
                ops: list[Op] = []
                for d in decls:
                    ops.extend(param(d.name).ops)
                    ops.append(Op.make("piece", size))
                location = expression(ops, AddressClass.PARAM)
        return self.parameter(name, type, line=line, location=location, file=file)

    def ptx_return(self) -> list[ParamDecl]:
        """The return-value ``.param`` (``func_retval0``) of a device function, if any."""
        if self.kernel or self.return_type is None or self.return_type.kind == "unspecified":
            return []
        return lower(
            self.return_type, "func_retval", 0, kernel=False, address_size=self._builder.address_size
        )

    def ptx_signature(self, *, linkage: str = ".visible") -> str:
        """The PTX header of the function: ``.visible .entry name(\n\t.param ...\n)``."""
        params = ",\n".join("\t" + d.declaration() for d in self.ptx_params)
        body = f"(\n{params}\n)" if params else "()"
        if self.kernel:
            return f"{linkage} .entry {self.linkage_name}{body}"
        ret = self.ptx_return()
        ret_text = " (" + ", ".join(d.declaration() for d in ret) + ")" if ret else ""
        return f"{linkage} .func{ret_text} {self.linkage_name}{body}"
