"""What each name of a PTX module stands for: one symbol table, built once per module.

:func:`symbol_table` answers, for a name the debug sections use, what it is: a
section, a label inside a section (a data label), a function, a prototype, a
module variable, a code label, a kernel or device function parameter, a local
depot, another name declared in a function body, or a register. Registers are
looked up per function, ranges (``%r<4>``) and registers declared in nested
``{ }`` scopes (inline assembly) included. :func:`needs_compile_only` says whether
ptxas must compile the module with ``-c``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ..dwarf.reprs import short
from .lexer import NAME_CHAR

if TYPE_CHECKING:
    from .module import PtxFunction, PtxModule, PtxVariable, SectionBlock

__all__ = [
    "ADDRESSABLE",
    "CODE_LABEL",
    "DATA_LABEL",
    "DEPOT",
    "DEVICE_PARAM",
    "FUNCTION",
    "KERNEL_PARAM",
    "LOCAL",
    "PROTOTYPE",
    "REGISTER",
    "SECTION",
    "UNDEFINED",
    "VARIABLE",
    "PtxSymbol",
    "SymbolTable",
    "likely_needs_compile_only",
    "needs_compile_only",
    "ptx_valid_name",
    "symbol_table",
]

SECTION: Final = "section"
DATA_LABEL: Final = "data-label"
FUNCTION: Final = "function"
PROTOTYPE: Final = "prototype"
VARIABLE: Final = "variable"
CODE_LABEL: Final = "code-label"
KERNEL_PARAM: Final = "kernel-param"
DEVICE_PARAM: Final = "device-param"
DEPOT: Final = "depot"
LOCAL: Final = "local"
REGISTER: Final = "register"
UNDEFINED: Final = "undefined"

#: Kinds of names ptxas resolves as a symbolic value in a debug section (a register is
#: not one: ptxas writes 0 for it).
ADDRESSABLE: Final = frozenset(
    {SECTION, DATA_LABEL, FUNCTION, PROTOTYPE, VARIABLE, CODE_LABEL, KERNEL_PARAM, DEVICE_PARAM, DEPOT, LOCAL}
)


def ptx_valid_name(name: str) -> str:
    """The name a PTX producer gives a global whose source name has a '.' in it
    (``__PRETTY_FUNCTION__._Z3foov`` -> ``__PRETTY_FUNCTION___$__Z3foov``): LLVM's NVPTX
    back end and NVVM write each '.' as ``_$_``, since PTX names cannot hold one."""
    return name.replace(".", "_$_")


@dataclass(frozen=True, slots=True)
class PtxSymbol:
    """One name and what it stands for.

    ``function``: the function that defines it (a code label, parameter, local,
    register) or that it names (a function). ``variable``: its declaration (a module
    variable, parameter, local, depot or register). ``section`` and ``offset``: a data
    label's section and offset in that section (its blocks joined in text order); a
    section's name.
    """

    name: str
    kind: str
    function: PtxFunction | None = None
    variable: PtxVariable | None = None
    section: str | None = None
    offset: int | None = None

    def __repr__(self) -> str:
        where = f" of {short(self.function.name)}" if self.function is not None else ""
        section = f" in {self.section}+{self.offset}" if self.section is not None else ""
        return f"<PtxSymbol {self.kind} {short(self.name)}{where}{section}>"

    @property
    def addressable(self) -> bool:
        """Whether ptxas resolves this name as a symbolic value."""
        return self.kind in ADDRESSABLE


class SymbolTable:
    """Lookups by name over one module: its sections, functions, labels and declarations.

    Built from the code on creation; the data labels are read on first use (they need
    the section images).
    """

    def __init__(self, module: PtxModule) -> None:
        # The module's lists, not the module, which holds this table: a module dropped is
        # freed at once, not left to the cyclic collector.
        self._bodies: list[PtxFunction] = module.functions
        self._blocks: list[SectionBlock] = module.sections
        self.functions: dict[str, PtxFunction] = {}
        """Functions with a body, by name (the first of a name)."""
        self.prototypes: frozenset[str] = frozenset(module.prototypes)
        self.variables: dict[str, PtxVariable] = {}
        """Module-level variables, by name (the first of a name)."""
        self.code_labels: dict[str, PtxFunction] = {}
        """Code label -> the function whose body defines it (the first)."""
        self.sections: frozenset[str] = frozenset(b.name for b in module.sections)
        self._names: dict[str, PtxSymbol] = {}
        self._registers: dict[int, _Registers] = {}
        self._data_labels: dict[str, tuple[str, int]] | None = None
        self._looked_up: dict[str, PtxSymbol] = {}
        self._code_label_names: frozenset[str] | None = None
        for v in module.variables:
            self.variables.setdefault(v.name, v)
        for f in module.functions:
            self.functions.setdefault(f.name, f)
            for label in f.labels:
                self.code_labels.setdefault(label, f)
        names = self._names
        for f in module.functions:
            registers = self._registers.setdefault(id(f), _Registers())
            for v in f.params:
                if v.count is None and v.name not in names:
                    names[v.name] = PtxSymbol(v.name, KERNEL_PARAM if f.is_kernel else DEVICE_PARAM, f, v)
            for index, v in enumerate((*f.returns, *f.declarations)):
                if v.space == "reg":
                    registers.add(index, v)
                    continue
                if v.count is None and v.name not in names:
                    kind = DEPOT if v.name.startswith("__local_depot") else LOCAL
                    names[v.name] = PtxSymbol(v.name, kind, f, v)

    # --- one name -----------------------------------------------------------

    def lookup(self, name: str) -> PtxSymbol:
        """What ``name`` stands for; kind :data:`UNDEFINED` when nothing in the module
        declares it. Sections first, then data labels, functions, prototypes, module
        variables, code labels, names declared in a function, registers."""
        found = self._looked_up.get(name)
        if found is None:
            found = self._looked_up[name] = self._lookup(name)
        return found

    def fresh(self, stem: str, taken: set[str]) -> str:
        """``stem`` + the first number that gives a name the module does not declare and
        ``taken`` does not hold; the name is added to ``taken``."""
        n = 0
        while (name := f"{stem}{n}") in taken or self.lookup(name).kind != UNDEFINED:
            n += 1
        taken.add(name)
        return name

    def _lookup(self, name: str) -> PtxSymbol:
        if name.startswith("."):
            return PtxSymbol(name, SECTION, section=name)
        label = self.data_labels.get(name)
        if label is not None:
            return PtxSymbol(name, DATA_LABEL, section=label[0], offset=label[1])
        f = self.functions.get(name)
        if f is not None:
            return PtxSymbol(name, FUNCTION, f)
        if name in self.prototypes:
            return PtxSymbol(name, PROTOTYPE)
        v = self.variables.get(name)
        if v is not None:
            return PtxSymbol(name, VARIABLE, variable=v)
        f = self.code_labels.get(name)
        if f is not None:
            return PtxSymbol(name, CODE_LABEL, f)
        found = self._names.get(name)
        if found is not None:
            return found
        for f in self._bodies:
            reg = self.register(f, name)
            if reg is not None:
                return PtxSymbol(name, REGISTER, f, reg)
        return PtxSymbol(name, UNDEFINED)

    @property
    def code_label_names(self) -> frozenset[str]:
        """The names :meth:`lookup` finds code labels: those of :attr:`code_labels` that no
        section, data label, function, prototype or module variable takes first."""
        if self._code_label_names is None:
            names = self.code_labels.keys() - self.data_labels.keys() - self.functions.keys()
            names -= self.prototypes
            names -= self.variables.keys()
            self._code_label_names = frozenset(n for n in names if not n.startswith("."))
        return self._code_label_names

    def declares(self, name: str) -> bool:
        """Whether ``name`` is a symbol ptxas resolves (see :data:`ADDRESSABLE`) that the
        code declares: data labels and sections are not asked about."""
        if (
            name in self.functions
            or name in self.prototypes
            or name in self.variables
            or name in self.code_labels
        ):
            return True
        return name in self._names

    def code_owner(self, name: str) -> PtxFunction | None:
        """The function ``name`` names, or whose body defines code label ``name``."""
        return self.functions.get(name) or self.code_labels.get(name)

    def scoped_initialized(self) -> list[tuple[PtxFunction, PtxVariable]]:
        """``.global``/``.const`` variables declared inside a function body with an
        initializer, with their function, in text order."""
        return [
            (f, v)
            for f in self._bodies
            for v in f.declarations
            if v.initialized and v.space in ("global", "const")
        ]

    # --- registers ----------------------------------------------------------

    def register(self, function: PtxFunction, name: str) -> PtxVariable | None:
        """The ``.reg`` declaration of ``function`` (nested scopes included) that declares
        register ``name``; the first in the text when several do."""
        return self.register_finder(function)(name)

    def register_finder(self, function: PtxFunction) -> Callable[[str], PtxVariable | None]:
        """:meth:`register` of ``function``, as a function of the name (for many names)."""
        registers = self._registers.get(id(function))
        return registers.find if registers is not None else _no_register

    def declares_register(self, name: str) -> bool:
        """Whether any function declares register ``name``."""
        return any(r.find(name) is not None for r in self._registers.values())

    # --- data labels --------------------------------------------------------

    @property
    def data_labels(self) -> dict[str, tuple[str, int]]:
        """Label defined inside a section -> (section, offset in the section's joined
        blocks); the first definition of a name."""
        if self._data_labels is None:
            found: dict[str, tuple[str, int]] = {}
            sizes: dict[str, int] = {}
            for block in self._blocks:
                base = sizes.get(block.name, 0)
                image = block.image
                for label, offset in image.labels.items():
                    found.setdefault(label, (block.name, base + offset))
                sizes[block.name] = base + len(image.data)
            self._data_labels = found
        return self._data_labels


class _Registers:
    """One function's ``.reg`` declarations, by name and by range prefix."""

    __slots__ = ("digit_ends", "found", "ranges", "scalars")

    def __init__(self) -> None:
        self.scalars: dict[str, tuple[int, PtxVariable]] = {}
        self.ranges: dict[str, list[tuple[int, PtxVariable]]] = {}
        self.digit_ends = False
        """Whether the name of a range ends with a digit (``%r1<5>``)."""
        self.found: dict[str, PtxVariable | None] = {}
        """The answers of :meth:`find` so far (the declarations are all added first)."""

    def add(self, index: int, v: PtxVariable) -> None:
        if v.count is None:
            self.scalars.setdefault(v.name, (index, v))
        else:
            self.ranges.setdefault(v.name, []).append((index, v))
            self.digit_ends = self.digit_ends or v.name[-1:] in _DIGITS_AT_END

    def find(self, name: str) -> PtxVariable | None:
        """The first declaration that declares ``name``: ranges are looked up by each
        prefix of ``name`` that leaves only digits (only the shortest when no range's name
        ends with a digit)."""
        if name in self.found:
            return self.found[name]
        best = self.scalars.get(name)
        if self.ranges:
            digits = len(name) - len(name.rstrip("0123456789"))
            for k in range(digits if digits and not self.digit_ends else 1, digits + 1):
                for index, v in self.ranges.get(name[: len(name) - k], ()):
                    if v.declares(name) and (best is None or index < best[0]):
                        best = (index, v)
                        break
        found = self.found[name] = best[1] if best is not None else None
        return found


#: The last characters of a range's name that make :meth:`_Registers.find` try every prefix.
_DIGITS_AT_END = frozenset("0123456789")


def _no_register(_name: str) -> None:
    """:meth:`SymbolTable.register_finder` of a function that declares no register."""
    return None


def symbol_table(module: PtxModule) -> SymbolTable:
    """The module's symbol table, made on first use and kept on the module."""
    table = module._symbols
    if table is None:
        table = module._symbols = SymbolTable(module)
    return table


def needs_compile_only(module: PtxModule) -> bool:
    """Whether ptxas must compile ``module`` with ``-c`` (relocatable): it declares a
    function it does not define, which only links in a relocatable compile (a forward
    declaration of a function defined further on does not need it)."""
    if not module.prototypes:
        return False
    defined = {f.name for f in module.functions}
    return any(name not in defined for name in module.prototypes)


# A ``.func``/``.entry`` header up to its name, and what ends it: ``;`` (a declaration) or ``{``.
_HEADER = re.compile(r"\.(?:func|entry)\b\s*(?:\([^)]*\)\s*)?(" + NAME_CHAR + r"+)[^{;]*([{;])")


def likely_needs_compile_only(text: str) -> bool:
    """:func:`needs_compile_only` guessed from the text alone, before its code is read (for
    starting ptxas early); the module's answer decides when the two differ."""
    declared: set[str] = set()
    defined: set[str] = set()
    for name, end in _HEADER.findall(text):
        (defined if end == "{" else declared).add(name)
    return bool(declared - defined)
