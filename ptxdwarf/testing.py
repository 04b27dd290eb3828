"""Helpers for test suites of PTX producers.

::

    from ptxdwarf.testing import compile_ptx, assert_dies_equal

    cubin = compile_ptx(ptx_text)                    # ptxas -g, in a temporary directory
    info = cubin.debug_info()                        # the cubin's DWARF as a queryable tree
    p = info.function("foo").parameter("i")
    assert p.address_class is AddressClass.REG
    assert p.location.register == "%r1"
    assert p.type.name == "int"

``assert_dies_equal(a, b)`` fails with a readable, path-by-path diff of two DIE
trees. Line tables, without nvdisasm or a GPU::

    cubin = compile_ptx(ptx_text, debug=False, line_info=True)   # ptxas -lineinfo
    assert_function_lines(cubin, "_Z4testPi", {5, 6, 7}, file="test.cu")
    cubin.line_table().addresses_of(6, "test.cu")    # [("_Z4testPi", 0x30), ...]

What a debugger can show, from ptxas's register map (``.nv_debug_info_reg_sass``)::

    assert_readable(cubin, "_Z4testPi", "acc", 6, file="test.cu")   # ["R4"]
    readable_variables(cubin, "_Z4testPi", 6)                        # {"acc": ["R4"], ...}

The pytest plugin (registered as ``ptxdwarf``, :mod:`ptxdwarf.pytest_plugin`) provides the
fixtures ``ptxdwarf_compile`` (:func:`compile_ptx`) and ``ptxdwarf_ptxas``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .api import read_ptx
from .cuda.cubin import read_cubin, register_map
from .cuda.ptxas import Ptxas, compile_text
from .dwarf.constants import AT, TAG, AddressClass, at_name, form_name, tag_name
from .dwarf.expr import ExpressionError, Op, decode_expression
from .dwarf.lines import LineTable
from .dwarf.model import DIE, Attribute, DebugInfo
from .dwarf.schemas import Block
from .visibility import RegisterLocation, register_locations

__all__ = [
    "CompiledCubin",
    "PtxCompiler",
    "Query",
    "QueryDIE",
    "QueryLocation",
    "assert_dies_equal",
    "assert_function_lines",
    "assert_readable",
    "compile_ptx",
    "die_diff",
    "query",
    "readable_variables",
]


@dataclass
class CompiledCubin:
    """A cubin ptxas made of some PTX: its bytes, the architecture and the PTX text, and the
    release of the ptxas that compiled it."""

    data: bytes
    arch: str
    ptx: str
    ptxas_version: str = ""

    def __repr__(self) -> str:
        by = f", ptxas {self.ptxas_version}" if self.ptxas_version else ""
        return f"<CompiledCubin {self.arch}{by}: {len(self.data)} bytes of {len(self.ptx)} characters of PTX>"

    def debug_info(self) -> Query:
        """The cubin's DWARF, queryable."""
        return Query(read_cubin(self.data))

    def ptx_debug_info(self) -> Query:
        """The PTX's own DWARF, queryable."""
        return Query(read_ptx(self.ptx))

    def line_table(self) -> LineTable:
        """The cubin's line table (``.debug_line``)."""
        return read_cubin(self.data).line_table

    def register_locations(self) -> list[RegisterLocation]:
        """Each register location of the cubin's DWARF and where a debugger reads it
        (:func:`~ptxdwarf.visibility.register_locations`)."""
        info = read_cubin(self.data)
        return register_locations(info, register_map(info) or [])


def readable_variables(
    cubin: CompiledCubin, function: str, line: int, *, file: str | None = None
) -> dict[str, list[str]]:
    """The variables and parameters of ``function`` a debugger can show at source ``line``
    (of a file whose path ends with ``file``): name -> the SASS registers holding it at the
    first address of the line where it can be read."""
    addresses = [a for f, a in cubin.line_table().addresses_of(line, file) if f == function]
    if not addresses:
        raise AssertionError(f"{function}: no code for line {line}{f' of {file}' if file else ''}")
    result: dict[str, list[str]] = {}
    for loc in cubin.register_locations():
        if loc.function != function or loc.name in result:
            continue
        for address in addresses:
            if loc.readable_at(address):
                result[loc.name] = [e.sass for e in sorted(loc.entries_at(address), key=lambda e: e.piece)]
                break
    return result


def assert_readable(
    cubin: CompiledCubin, function: str, variable: str, line: int, *, file: str | None = None
) -> list[str]:
    """Fail unless a debugger can show ``variable`` of ``function`` (its symbol) at source
    ``line``: a register location of it whose register ptxas's map places in SASS registers
    at an address of that line. Returns those SASS registers."""
    readable = readable_variables(cubin, function, line, file=file)
    if variable in readable:
        return readable[variable]
    described = [
        loc for loc in cubin.register_locations() if loc.function == function and loc.name == variable
    ]
    if not described:
        why = "it has no register location in the cubin's DWARF"
    elif not any(loc.mapped for loc in described):
        regs = sorted({loc.register for loc in described})
        why = f"ptxas's register map never names {', '.join(regs)}"
    else:
        why = "no register location of it covers the line's code in ptxas's register map"
    shown = ", ".join(sorted(readable)) or "none"
    raise AssertionError(
        f"{function}: {variable} is not readable at line {line}: {why} (readable there: {shown})"
    )


def compile_ptx(
    ptx: str,
    *,
    arch: str | None = None,
    ptxas: Ptxas | str | None = None,
    ptxas_version: str | None = None,
    debug: bool = True,
    line_info: bool = False,
) -> CompiledCubin:
    """Compile PTX text with ptxas (``-g`` unless ``debug=False``; ``-lineinfo`` with
    ``line_info``) for ``arch`` (default: the module's ``.target``, or the oldest newer one
    ptxas supports); temporary files are removed.

    The ptxas is ``ptxas`` (a :class:`~ptxdwarf.cuda.Ptxas` or a path), else the first found
    of release ``ptxas_version`` (``"13.5"``), else the first found that takes the module's
    ``.version``, as the command line chooses (:func:`~ptxdwarf.cuda.find_ptxas`)."""
    result, chosen = compile_text(
        ptx,
        ptxas=ptxas,
        release=ptxas_version,
        arch=arch,
        debug=debug,
        extra=["-lineinfo"] if line_info else [],
    )
    return CompiledCubin(result.cubin, chosen, ptx, result.ptxas.version if result.ptxas else "")


#: What the plugin's ``ptxdwarf_compile`` fixture is: :func:`compile_ptx`, with the session's
#: ``--ptxdwarf-ptxas``/``--ptxdwarf-ptxas-version``/``--ptxdwarf-arch`` as its defaults.
PtxCompiler = Callable[..., CompiledCubin]


def assert_function_lines(
    cubin: CompiledCubin | DebugInfo, function: str, lines: Iterable[int], *, file: str | None = None
) -> None:
    """Fail unless the code of ``function`` (its linkage name) maps to exactly the source
    ``lines`` (line 0, code with no line, left out), in a file whose path ends with ``file``
    when given; the message lists what is missing and what is extra."""
    table = cubin.line_table() if isinstance(cubin, CompiledCubin) else cubin.line_table
    rows = table.lines_of(function)
    if not rows:
        known = ", ".join(table.functions()) or "none"
        raise AssertionError(f"no line-table rows for {function} (functions with rows: {known})")
    got = {r.line for r in rows if r.line and (file is None or (r.file or "").endswith(file))}
    want = set(lines)
    if got != want:
        missing, extra = sorted(want - got), sorted(got - want)
        raise AssertionError(f"{function}: lines missing {missing}, lines not expected {extra}")


@dataclass(frozen=True)
class QueryLocation:
    """A location as tests ask about it."""

    attribute: Attribute | None
    address_size: int

    @property
    def ops(self) -> list[Op]:
        """The operations of a single-expression location ([] for none or a list)."""
        if self.attribute is None or not isinstance(self.attribute.value, Block):
            return []
        try:
            return decode_expression(self.attribute.value, self.address_size)
        except ExpressionError:
            return []

    @property
    def register(self) -> str | None:
        """``%r1`` for ``DW_OP_regx %r1``."""
        for op in self.ops:
            if op.register is not None:
                return op.register
        return None

    @property
    def address(self) -> int | None:
        """The operand of ``DW_OP_addr`` (a constant-bank offset for a kernel parameter in a cubin)."""
        for op in self.ops:
            if op.code == 0x03 and op.args:
                return int(op.args[0])
        return None

    @property
    def symbol(self) -> str | None:
        """The symbol of ``DW_OP_addr`` in PTX text."""
        for op in self.ops:
            if op.symbol is not None:
                return op.symbol.name
        return None

    @property
    def is_list(self) -> bool:
        """True for a location list (``.debug_loc``)."""
        return self.attribute is not None and not isinstance(self.attribute.value, Block)

    def __str__(self) -> str:
        return ", ".join(str(op) for op in self.ops) or ("<list>" if self.is_list else "<none>")


class QueryDIE:
    """A DIE with the questions tests ask of it."""

    def __init__(self, info: DebugInfo, die: DIE, address_size: int) -> None:
        self.info = info
        self.die = die
        self._asize = address_size

    def __repr__(self) -> str:
        return f"<QueryDIE {self.die.describe()}>"

    @property
    def name(self) -> str | None:
        return self.die.name

    @property
    def tag(self) -> str:
        return tag_name(self.die.tag)

    def __getitem__(self, attribute: str) -> Any:
        return self.die[attribute]

    def get(self, attribute: str, default: Any = None) -> Any:
        return self.die.get(attribute, default)

    @property
    def address_class(self) -> AddressClass | int | None:
        """``AddressClass.REG`` (an int for codes outside the spec), or None."""
        value = self.die.address_class
        if value is None:
            return None
        try:
            return AddressClass(value)
        except ValueError:
            return value

    @property
    def location(self) -> QueryLocation:
        return QueryLocation(self.die.attr(AT.location), self._asize)

    @property
    def type(self) -> QueryDIE | None:
        """The DIE ``DW_AT_type`` refers to."""
        attr = self.die.attr(AT.type)
        if attr is None:
            return None
        target = self.info.target(attr)
        return QueryDIE(self.info, target, self._asize) if target is not None else None

    def children(self, tag: int | None = None) -> Iterator[QueryDIE]:
        for child in self.die.children:
            if tag is None or child.tag == tag:
                yield QueryDIE(self.info, child, self._asize)

    def _find(self, tags: tuple[int, ...], name: str, what: str) -> QueryDIE:
        stack = list(reversed(self.die.children))
        while stack:
            d = stack.pop()
            if d.tag in tags and (
                d.name == name or d.get(AT.linkage_name) == name or d.get(AT.MIPS_linkage_name) == name
            ):
                return QueryDIE(self.info, d, self._asize)
            if d.tag in (TAG.lexical_block, TAG.inlined_subroutine):
                stack.extend(reversed(d.children))
        raise LookupError(f"no {what} {name!r} in {self.die.describe()}")

    def parameter(self, name: str) -> QueryDIE:
        """The formal parameter ``name``."""
        return self._find((TAG.formal_parameter,), name, "parameter")

    def variable(self, name: str) -> QueryDIE:
        """The variable ``name`` here or in a nested block."""
        return self._find((TAG.variable,), name, "variable")

    def member(self, name: str) -> QueryDIE:
        return self._find((TAG.member,), name, "member")

    @property
    def parameters(self) -> list[QueryDIE]:
        return list(self.children(TAG.formal_parameter))


class Query:
    """A whole module's DWARF, with lookups by name."""

    def __init__(self, info: DebugInfo) -> None:
        self.info = info

    def __repr__(self) -> str:
        return f"<Query {self.info!r}>"

    def _unit_dies(self) -> Iterator[tuple[DIE, int]]:
        for unit in self.info.units:
            if unit.die is not None:
                for child in unit.die.children:
                    yield child, unit.address_size

    def function(self, name: str) -> QueryDIE:
        """The subprogram whose name or linkage name is ``name``."""
        for die, asize in self._unit_dies():
            if die.tag == TAG.subprogram and name in (
                die.name,
                die.get(AT.linkage_name),
                die.get(AT.MIPS_linkage_name),
            ):
                return QueryDIE(self.info, die, asize)
        raise LookupError(f"no function {name!r}")

    def variable(self, name: str) -> QueryDIE:
        """The module variable ``name``."""
        for die, asize in self._unit_dies():
            if die.tag == TAG.variable and die.name == name:
                return QueryDIE(self.info, die, asize)
        raise LookupError(f"no module variable {name!r}")

    def type(self, name: str) -> QueryDIE:
        """The first type named ``name``."""
        for die in self.info.iter_dies():
            if die.name == name and die.tag not in (
                TAG.subprogram,
                TAG.variable,
                TAG.formal_parameter,
                TAG.member,
            ):
                unit = self.info.unit_of(die)
                return QueryDIE(self.info, die, unit.address_size if unit else 8)
        raise LookupError(f"no type {name!r}")

    @property
    def functions(self) -> list[QueryDIE]:
        return [QueryDIE(self.info, d, a) for d, a in self._unit_dies() if d.tag == TAG.subprogram]


def query(info: DebugInfo) -> Query:
    """``info`` (from :func:`ptxdwarf.read_ptx`, :func:`ptxdwarf.cuda.read_cubin`, a builder) as a :class:`Query`."""
    return Query(info)


def _render(die: DIE) -> list[str]:
    out = []
    for a in die.attributes:
        value = a.value
        if isinstance(value, DIE):
            text = f"-> {value.describe()}"
        elif a.is_reference and isinstance(a.target, int):
            text = f"-> 0x{a.target:x}"
        elif isinstance(value, Block):
            text = value.hex()
        else:
            text = repr(value)
        out.append(f"{at_name(a.name)} [{form_name(a.form or 0)}] {text}")
    return out


def die_diff(a: DIE, b: DIE, *, compare_offsets: bool = False) -> list[str]:
    """Lines describing how tree ``b`` differs from tree ``a`` (empty when equal)."""
    lines: list[str] = []
    stack: list[tuple[DIE, DIE, str]] = [(a, b, "")]
    while stack:
        x, y, path = stack.pop()
        here = f"{path}/{x.name or tag_name(x.tag)[7:]}" if path else (x.name or tag_name(x.tag)[7:])
        if x.tag != y.tag:
            lines.append(f"{here}: tag {tag_name(x.tag)} != {tag_name(y.tag)}")
            continue
        if compare_offsets and x.offset != y.offset:
            lines.append(f"{here}: offset 0x{x.offset:x} != 0x{y.offset:x}")
        ra, rb = _render(x), _render(y)
        if ra != rb:
            for line in ra:
                if line not in rb:
                    lines.append(f"{here}: - {line}")
            for line in rb:
                if line not in ra:
                    lines.append(f"{here}: + {line}")
        if len(x.children) != len(y.children):
            lines.append(f"{here}: {len(x.children)} children != {len(y.children)}")
        stack.extend((c, d, here) for c, d in reversed(list(zip(x.children, y.children, strict=False))))
    return lines


def assert_dies_equal(a: DIE | DebugInfo, b: DIE | DebugInfo, *, compare_offsets: bool = False) -> None:
    """Fail with a path-by-path diff unless the two DIE trees are equal."""
    roots_a = [u.die for u in a.units if u.die is not None] if isinstance(a, DebugInfo) else [a]
    roots_b = [u.die for u in b.units if u.die is not None] if isinstance(b, DebugInfo) else [b]
    lines: list[str] = []
    if len(roots_a) != len(roots_b):
        lines.append(f"{len(roots_a)} unit(s) != {len(roots_b)} unit(s)")
    for x, y in zip(roots_a, roots_b, strict=False):
        lines.extend(die_diff(x, y, compare_offsets=compare_offsets))
    if lines:
        shown = "\n  ".join(lines[:50])
        more = f"\n  ... and {len(lines) - 50} more" if len(lines) > 50 else ""
        raise AssertionError(f"DIE trees differ:\n  {shown}{more}")
