"""C++ spellings of the types DIEs describe, as llvm-dwarfdump prints them after a
``DW_AT_type`` (``"int *"``, ``"const Vec<float,3> *const"``, ``"float[8]"``,
``"int (*)(int, float)"``, ``"Bits::structure "`` for an unnamed struct in ``Bits``).

:func:`type_name` follows LLVM's ``DWARFTypePrinter`` (LLVM 14): the part of the name
before the declarator (qualifiers, the pointee, ``*``/``&``), then the part after it
(array bounds, parameter lists), scopes from the enclosing namespaces and types.
Template parameters are not added to a name (LLVM 14's producers spell them in
``DW_AT_name``). A name that takes more than :data:`MAX_STEPS` steps (a cycle of
types, a chain deeper than any source declares) ends in ``...`` instead of going on, so
that naming a type costs at most that many steps.
"""

from __future__ import annotations

from .constants import AT, TAG, tag_name
from .model import DIE, Attribute, DebugInfo

__all__ = ["MAX_DEPTH", "MAX_STEPS", "type_name"]

#: How many types deep a name is followed.
MAX_DEPTH = 64

#: How many types and scopes one name visits at most.
MAX_STEPS = 256

#: Languages whose arrays start at 1 (DW_LANG_* codes: Ada, Cobol, Fortran, Pascal, Modula, PL/I, Julia).
_ONE_BASED = frozenset({0x3, 0x5, 0x6, 0x7, 0x8, 0x9, 0xA, 0xD, 0xE, 0xF, 0x17, 0x1F, 0x22, 0x23})
_POINTER_LIKE: dict[int, str] = {
    TAG.pointer_type: "*",
    TAG.reference_type: "&",
    TAG.rvalue_reference_type: "&&",
}
_QUALIFIERS = (TAG.const_type, TAG.volatile_type)
_NO_SCOPE = frozenset({TAG.compile_unit, TAG.type_unit, TAG.subprogram, TAG.lexical_block})


def type_name(info: DebugInfo, die: DIE, unit_die: DIE | None = None) -> str:
    """How llvm-dwarfdump names the type ``die`` (the DIE a ``DW_AT_type`` points to).

    ``unit_die`` is the compile unit DIE whose ``DW_AT_language`` sets the lower bound of
    arrays (found from ``die`` when not given).
    """
    printer = _Printer(info, unit_die)
    printer.qualified(die, 0)
    return "".join(printer.out)


class _Printer:
    def __init__(self, info: DebugInfo, unit_die: DIE | None) -> None:
        self.info = info
        self.unit_die = unit_die
        self.out: list[str] = []
        self.word = True
        self.steps = 0

    def spend(self) -> bool:
        """Count a step; False (after writing ``...`` once) when the budget is spent."""
        self.steps += 1
        if self.steps == MAX_STEPS + 1:
            self.out.append("...")
        return self.steps <= MAX_STEPS

    def inner(self, die: DIE | None, at: int = AT.type) -> DIE | None:
        if die is None:
            return None
        attr = die.attr(at)
        return self.info.target(attr) if attr is not None and attr.is_reference else None

    def qualified(self, die: DIE | None, depth: int) -> None:
        if die is not None:
            self.after(die, self.qualified_before(die, depth), depth)

    def qualified_before(self, die: DIE | None, depth: int) -> DIE | None:
        if die is not None and die.parent is not None:
            self.scopes(die.parent, depth)
        return self.before(die, depth)

    def scopes(self, die: DIE, depth: int) -> None:
        if die.tag in _NO_SCOPE or depth > MAX_DEPTH or not self.spend():
            return
        if die.parent is not None:
            self.scopes(die.parent, depth + 1)
        inner = self.before(die, depth + 1)
        if self.steps <= MAX_STEPS:
            self.after(die, inner, depth + 1)
            self.out.append("::")

    def needs_parens(self, die: DIE | None) -> bool:
        for _ in range(MAX_DEPTH):
            if die is None or die.tag not in _QUALIFIERS:
                break
            die = self.inner(die)
        return die is not None and die.tag in (TAG.subroutine_type, TAG.array_type)

    def before(self, die: DIE | None, depth: int) -> DIE | None:
        """The part before the declarator; the type the part after continues with."""
        self.word = True
        if die is None:
            self.out.append("void")
            return None
        if depth > MAX_DEPTH:
            self.steps = max(self.steps, MAX_STEPS)
        if not self.spend():
            return None
        tag = die.tag
        inner = self.inner(die)
        if tag in _POINTER_LIKE:
            self.pointer_before(_POINTER_LIKE[tag], inner, depth)
        elif tag == TAG.subroutine_type:
            self.qualified_before(inner, depth + 1)
            if self.word:
                self.out.append(" ")
            self.word = False
        elif tag == TAG.array_type:
            self.qualified_before(inner, depth + 1)
        elif tag == TAG.ptr_to_member_type:
            self.member_pointer_before(die, inner, depth)
        elif tag in _QUALIFIERS:
            self.qualifiers_before(die, depth)
        elif tag == TAG.namespace:
            self.out.append(die.name if die.name is not None else "(anonymous namespace)")
        elif tag == TAG.unspecified_type:
            spelled = die.name or ""
            self.out.append("std::nullptr_t" if spelled == "decltype(nullptr)" else spelled)
        else:
            name = die.name
            if name is None:
                self.out.append(_tag_word(tag))
                return None
            self.out.append(name)
        return inner

    def pointer_before(self, sign: str, inner: DIE | None, depth: int) -> None:
        """:meth:`before` of a pointer or reference (``sign``) to ``inner``."""
        self.qualified_before(inner, depth + 1)
        if self.word:
            self.out.append(" ")
        if self.needs_parens(inner):
            self.out.append("(")
        self.out.append(sign)
        self.word = False

    def member_pointer_before(self, die: DIE, inner: DIE | None, depth: int) -> None:
        """:meth:`before` of a pointer to member ``die`` of type ``inner``."""
        self.qualified_before(inner, depth + 1)
        if self.needs_parens(inner):
            self.out.append("(")
        elif self.word:
            self.out.append(" ")
        container = self.inner(die, AT.containing_type)
        if container is not None:
            self.qualified(container, depth + 1)
            self.out.append("::")
        self.out.append("*")
        self.word = False

    def after(self, die: DIE | None, inner: DIE | None, depth: int) -> None:
        """The part after the declarator (array bounds, parameters)."""
        if die is None or depth > MAX_DEPTH or self.steps > MAX_STEPS:
            return
        tag = die.tag
        if tag == TAG.subroutine_type:
            self.parameters(die, inner, depth, const=False, volatile=False)
        elif tag == TAG.array_type:
            self.bounds(die)
        elif tag in _QUALIFIERS:
            qualifiers, target = self.decompose(die)
            if target is not None and target.tag == TAG.subroutine_type:
                self.parameters(
                    target,
                    self.inner(target),
                    depth + 1,
                    const=TAG.const_type in qualifiers,
                    volatile=TAG.volatile_type in qualifiers,
                )
            else:
                self.after(target, self.inner(target), depth + 1)
        elif tag in _POINTER_LIKE or tag == TAG.ptr_to_member_type:
            if self.needs_parens(inner):
                self.out.append(")")
            self.after(inner, self.inner(inner), depth + 1)

    def decompose(self, die: DIE) -> tuple[set[int], DIE | None]:
        """The qualifiers of ``die`` and the one right below it, and the type they qualify."""
        qualifiers = {die.tag}
        target = self.inner(die)
        if target is not None and target.tag in _QUALIFIERS:
            qualifiers.add(target.tag)
            target = self.inner(target)
        return qualifiers, target

    def qualifiers_before(self, die: DIE, depth: int) -> None:
        qualifiers, target = self.decompose(die)
        subroutine = target is not None and target.tag == TAG.subroutine_type
        base = target
        for _ in range(MAX_DEPTH):
            if base is None or base.tag != TAG.array_type:
                break
            base = self.inner(base)
        leading = (
            base is None or base.tag not in (TAG.pointer_type, TAG.ptr_to_member_type)
        ) and not subroutine
        if leading:
            if TAG.const_type in qualifiers:
                self.out.append("const ")
            if TAG.volatile_type in qualifiers:
                self.out.append("volatile ")
        self.qualified_before(target, depth + 1)
        if not leading and not subroutine:
            self.word = True
            words = [
                w for t, w in ((TAG.const_type, "const"), (TAG.volatile_type, "volatile")) if t in qualifiers
            ]
            self.out.append(" ".join(words))

    def parameters(self, die: DIE, inner: DIE | None, depth: int, *, const: bool, volatile: bool) -> None:
        self.out.append("(")
        first = True
        for child in die.children:
            if child.tag not in (TAG.formal_parameter, TAG.unspecified_parameters):
                continue
            if not first:
                self.out.append(", ")
            first = False
            if child.tag == TAG.unspecified_parameters:
                self.out.append("...")
            else:
                self.qualified(self.inner(child), depth + 1)
        self.out.append(")")
        if const:
            self.out.append(" const")
        if volatile:
            self.out.append(" volatile")
        if die.attr(AT.reference) is not None:
            self.out.append(" &")
        if die.attr(AT.rvalue_reference) is not None:
            self.out.append(" &&")
        self.after(inner, self.inner(inner), depth + 1)

    def bounds(self, die: DIE) -> None:
        default_lower = self.default_lower_bound(die)
        for child in die.children:
            if child.tag != TAG.subrange_type:
                continue
            lower = _constant(child.attr(AT.lower_bound))
            count = _constant(child.attr(AT.count))
            upper = _constant(child.attr(AT.upper_bound))
            if lower is not None and lower == default_lower:
                lower = None
            if lower is None and count is None and upper is None:
                self.out.append("[]")
            elif lower is None and default_lower is not None:
                size = count if count is not None else (upper or 0) - default_lower + 1
                self.out.append(f"[{size}]")
            else:
                start = "?" if lower is None else str(lower)
                if count is not None:
                    end = f"? + {count}" if lower is None else str(lower + count)
                elif upper is not None:
                    end = str(upper + 1)
                else:
                    end = "?"
                self.out.append(f"[[{start}, {end})]")

    def default_lower_bound(self, die: DIE) -> int | None:
        root = self.unit_die
        if root is None:
            root = die
            while root.parent is not None:
                root = root.parent
            self.unit_die = root
        language = _constant(root.attr(AT.language))
        if language is None:
            return None
        if language in _ONE_BASED:
            return 1
        return 0 if language in _ZERO_BASED else None


#: Languages whose arrays start at 0 (LLVM's table: C, C++, ObjC, Java, UPC, D, Python,
#: OpenCL, Go, Haskell, OCaml, Rust, Swift, Dylan, RenderScript, BLISS ...).
_ZERO_BASED = frozenset(
    {0x1, 0x2, 0x4, 0xB, 0xC, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x18, 0x19, 0x1A, 0x1B, 0x1C}
    | {0x1D, 0x1E, 0x20, 0x21, 0x24, 0x25, 0x8E57, 0xB000}
)


def _constant(attr: Attribute | None) -> int | None:
    """The value of a constant-class attribute (not a reference or an expression)."""
    if attr is None or attr.is_reference or not isinstance(attr.value, int) or isinstance(attr.value, bool):
        return None
    return attr.value


def _tag_word(tag: int) -> str:
    """``structure `` for DW_TAG_structure_type (an unnamed type), nothing for other tags."""
    name = tag_name(tag)
    if name.startswith("DW_TAG_") and name.endswith("_type"):
        return name[len("DW_TAG_") : -len("_type")] + " "
    return ""
