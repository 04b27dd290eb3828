"""Sizes, alignments, member offsets and bit-field placement by the PTX ABI rules.

This is the layout engine of the builder. It implements chapter 1 "Data
Representation" of NVIDIA's PTX Interoperability guide (CUDA 13.0):

* 1.2 aggregates and unions: a member goes to the lowest free offset that suits its
  alignment; an aggregate is aligned like its most strictly aligned member (or as the
  input language says: ``align=``, :attr:`Field.align_override`); its size is rounded
  up to its alignment (tail padding). Native vectors are aligned ``alignof(t)`` for an
  odd and ``n * alignof(t)`` for an even number of elements (:func:`vector_layout`).
* 1.3 bit fields, little-endian, allocated from the least significant bit up. A bit
  field lives in a *storage unit*: the naturally aligned block the size of its
  declared type that holds the current bit position, whatever came before (bit field
  or not). A field that would cross that unit moves to the next one. Named bit fields
  contribute their type's alignment, unnamed ones (zero-length or not) contribute
  none. A zero-length bit field rounds the position up to the next boundary of its
  type, so the next member starts there.

It adds what the spec leaves to the input language, as checked against nvcc 13.0
(``fixtures/layout``): an empty C++ class has size 1 (``cxx_empty_size``);
``alignas``/``__align__`` only raise alignment; a union member, bit field or not,
is at bit 0 and a bit field in a union occupies ``ceil(width / 8)`` bytes.

Languages with their own layout (Rust ``repr(Rust)``, packed structs) can place
members themselves with :attr:`Field.offset` / :attr:`Field.bit_offset`, and give
the aggregate's ``size=`` and ``align=``; the engine then only checks that the
members fit and, in a struct, do not overlap.

Everything is in bytes except bit positions. Errors are :class:`LayoutError` with a
message that names the member and the rule it breaks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import LayoutError

__all__ = [
    "Field",
    "Layout",
    "Placed",
    "array_layout",
    "layout_struct",
    "layout_union",
    "vector_layout",
]


@dataclass(frozen=True)
class Field:
    """One member of a struct or union, as declared.

    ``size`` and ``align`` are those of the member's type; for an array member, of the
    whole array (see :func:`array_layout`). For a bit field, ``size`` is the size of
    the declared type (an enum's underlying type, a typedef's target), which is also
    the size of its storage unit, and ``bit_size`` is its declared width: ``0`` for a
    zero-length bit field (which must be unnamed), ``None`` for an ordinary member.

    ``offset`` and ``bit_offset`` place the member explicitly instead of by the rules:
    ``offset`` is the byte offset of the member (of the storage unit, for a bit
    field), ``bit_offset`` the bit position of a bit field's least significant bit
    counted from bit 0 of the aggregate. A bit field given only ``offset`` starts at
    bit 0 of that byte; given both, the bits must lie inside the ``size``-byte unit at
    ``offset``. ``align_override`` is a member ``alignas(N)``; it raises the member's
    alignment (and applies even in a packed struct, as in GCC).
    """

    name: str | None
    size: int
    align: int
    bit_size: int | None = None
    offset: int | None = None
    bit_offset: int | None = None
    align_override: int | None = None

    @property
    def is_bit_field(self) -> bool:
        """Whether this is a bit field (``bit_size`` given, zero included)."""
        return self.bit_size is not None


@dataclass(frozen=True)
class Placed:
    """One member as laid out.

    ``offset`` is the byte offset of the member, or for a bit field the offset of the
    naturally aligned storage unit that holds it: the ``DW_AT_data_member_location``
    nvcc writes. ``size`` is the member's size (the unit size for a bit field, nvcc's
    ``DW_AT_byte_size``). ``bit_position`` is a bit field's least significant bit
    counted from bit 0 of the aggregate (little-endian); ``None`` for other members.

    A *full-width* bit field (``int x : 32``, see :attr:`full_width`) is laid out like
    an ordinary member and keeps its ``bit_size``; nvcc describes it as an ordinary
    member without bit attributes, and a writer that wants the same output drops them.
    A zero-length bit field is reported at the boundary it rounds to, which can equal
    the aggregate's size (nvcc does the same).
    """

    name: str | None
    offset: int
    size: int
    bit_size: int | None
    bit_position: int | None

    @property
    def is_bit_field(self) -> bool:
        """Whether the member is a bit field (zero-length and full-width included)."""
        return self.bit_size is not None

    @property
    def full_width(self) -> bool:
        """Whether this bit field is as wide as its type (nvcc writes it as a plain member)."""
        return self.bit_size is not None and self.bit_size > 0 and self.bit_size == 8 * self.size

    @property
    def dwarf2_bit_offset(self) -> int | None:
        """``DW_AT_bit_offset`` (DWARF 2/3) as nvcc writes it, or ``None`` if not a bit field.

        The count of bits between the most significant bit of the ``size``-byte
        storage unit at ``offset`` and the field's most significant bit:
        ``8*size - (bit_position - 8*offset) - bit_size``. A zero-length field gives
        ``8*size``. It is negative only for a field that no ``size``-byte unit holds
        (possible in a packed struct); DWARF 4's ``DW_AT_data_bit_offset`` is the
        way to describe such a field.
        """
        if self.bit_size is None or self.bit_position is None:
            return None
        return 8 * self.size - (self.bit_position - 8 * self.offset) - self.bit_size

    @property
    def data_bit_offset(self) -> int | None:
        """``DW_AT_data_bit_offset`` (DWARF 4): the bit position, or ``None`` if not a bit field."""
        return self.bit_position if self.bit_size is not None else None


@dataclass(frozen=True)
class Layout:
    """A laid-out struct or union: its size, alignment and members in declaration order."""

    size: int
    align: int
    members: tuple[Placed, ...]

    def member(self, name: str) -> Placed:
        """The first member called ``name`` (``KeyError`` if there is none)."""
        for placed in self.members:
            if placed.name == name:
                return placed
        raise KeyError(name)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _round_up(value: int, align: int) -> int:
    """``value`` rounded up to a multiple of ``align`` (``align`` >= 1)."""
    return -(-value // align) * align


def _is_power_of_two(value: int) -> bool:
    return value >= 1 and value & (value - 1) == 0


def _where(kind: str, name: str | None) -> str | None:
    """What an error names as its place: the aggregate, when it has a name."""
    return f"{kind} '{name}'" if name else None


def _describe(field: Field, index: int) -> str:
    """How messages name a member: by name, or by position when it has none."""
    if field.name is not None:
        return f"{'bit field' if field.is_bit_field else 'member'} '{field.name}'"
    what = "unnamed bit field" if field.is_bit_field else "unnamed member"
    return f"{what} #{index + 1}"


def _check_declared(where: str | None, align: int | None, size: int | None) -> None:
    """Check an aggregate's explicit ``align=`` and ``size=``."""
    if align is not None and not _is_power_of_two(align):
        raise LayoutError(f"declared alignment {align} is not a power of two", where=where)
    if size is not None and size < 0:
        raise LayoutError(f"declared size {size} is negative", where=where)


def _check_field(field: Field, index: int, where: str | None) -> None:
    """Reject a member that no layout rule can place."""
    who = _describe(field, index)
    if field.size < 0:
        raise LayoutError(f"{who} has a negative size ({field.size})", where=where)
    if not _is_power_of_two(field.align):
        raise LayoutError(f"{who} has alignment {field.align}, which is not a power of two", where=where)
    if field.align_override is not None and not _is_power_of_two(field.align_override):
        raise LayoutError(
            f"{who} has alignas({field.align_override}), which is not a power of two", where=where
        )
    if field.offset is not None and field.offset < 0:
        raise LayoutError(f"{who} has a negative offset ({field.offset})", where=where)
    if field.bit_offset is not None and field.bit_offset < 0:
        raise LayoutError(f"{who} has a negative bit offset ({field.bit_offset})", where=where)
    if field.bit_size is None:
        if field.bit_offset is not None:
            raise LayoutError(
                f"{who} has a bit_offset but is not a bit field; give its byte offset", where=where
            )
        return
    width = field.bit_size
    if width < 0:
        raise LayoutError(f"{who} has a negative width ({width})", where=where)
    if field.size == 0:
        raise LayoutError(
            f"{who} has a type of size 0; a bit field needs an integral type (spec 1.3)", where=where
        )
    if width > 8 * field.size:
        raise LayoutError(
            f"{who} is {width} bits wide, more than its {field.size}-byte type holds "
            f"({8 * field.size} bits); a bit field must reside entirely in a storage unit "
            "of its declared type (spec 1.3)",
            where=where,
        )
    if width == 0 and field.name is not None:
        raise LayoutError(
            f"{who} has width 0; a zero-length bit field must be unnamed (spec 1.3)", where=where
        )
    if field.align_override is not None:
        raise LayoutError(
            f"{who} has alignas({field.align_override}); a bit field cannot be aligned", where=where
        )


def _member_align(field: Field, packed: bool) -> int:
    """The alignment a member contributes to its aggregate (1: none).

    Unnamed bit fields contribute none (spec 1.3); named ones their type's alignment;
    in a packed struct only an explicit ``alignas`` counts.
    """
    if field.is_bit_field and field.name is None:
        return 1
    override = field.align_override or 1
    return override if packed else max(field.align, override)


def _unit_offset(position: int, width: int, unit_size: int) -> int:
    """Byte offset of the storage unit that holds bits ``position .. position+width-1``.

    The naturally aligned ``unit_size``-byte block (what the rules produce and nvcc
    writes); if the field crosses it (packed or explicitly placed fields), the
    ``unit_size``-byte window that starts at the field's first byte.
    """
    natural = position // (8 * unit_size) * unit_size
    if position + width <= 8 * (natural + unit_size):
        return natural
    return position // 8


def _place_explicit(field: Field, index: int, where: str | None) -> tuple[Placed, int, int]:
    """A member placed by the caller: its :class:`Placed` and bit span ``[start, end)``."""
    if field.bit_size is None:
        assert field.offset is not None
        start = 8 * field.offset
        return (
            Placed(field.name, field.offset, field.size, None, None),
            start,
            start + 8 * field.size,
        )
    width = field.bit_size
    if field.bit_offset is None:
        assert field.offset is not None
        position = 8 * field.offset
        offset = field.offset
    else:
        position = field.bit_offset
        if field.offset is None:
            offset = _unit_offset(position, width, field.size)
        else:
            offset = field.offset
            if position < 8 * offset or position + width > 8 * (offset + field.size):
                raise LayoutError(
                    f"{_describe(field, index)} at bit {position} ({width} bits) is not inside "
                    f"its {field.size}-byte storage unit at offset {offset}",
                    where=where,
                )
    return Placed(field.name, offset, field.size, width, position), position, position + width


def _span_text(field: Field, index: int, start: int, end: int) -> str:
    """``member 'x' at offset 8 (4 bytes)`` or ``bit field 'b' at bit 9 (5 bits)``."""
    who = _describe(field, index)
    if field.is_bit_field:
        return f"{who} at bit {start} ({end - start} bits)"
    return f"{who} at offset {start // 8} ({(end - start) // 8} bytes)"


def _check_overlaps(fields: Sequence[Field], spans: Sequence[tuple[int, int]], where: str | None) -> None:
    """Raise if two members of a struct share a bit (members of size 0 never do)."""
    order = sorted((s, e, i) for i, (s, e) in enumerate(spans) if e > s)
    reach = -1
    holder = -1
    for start, end, index in order:
        if start < reach:
            first, second = sorted((holder, index))
            raise LayoutError(
                f"{_span_text(fields[second], second, *spans[second])} overlaps "
                f"{_span_text(fields[first], first, *spans[first])}; struct members may not overlap",
                where=where,
            )
        if end > reach:
            reach, holder = end, index


def _check_fit(
    fields: Sequence[Field], spans: Sequence[tuple[int, int]], size: int, where: str | None
) -> None:
    """Raise if a member does not fit an explicit ``size=``."""
    for index, (start, end) in enumerate(spans):
        if -(-end // 8) > size:
            raise LayoutError(
                f"{_span_text(fields[index], index, start, end)} does not fit a declared size of {size}",
                where=where,
            )


def _is_empty_class(fields: Sequence[Field]) -> bool:
    """Whether a C++ class has no data members (unnamed bit fields do not count)."""
    return all(f.is_bit_field and f.name is None for f in fields)


def _finish(
    fields: Sequence[Field],
    placed: list[Placed],
    spans: list[tuple[int, int]],
    raw_size: int,
    natural_align: int,
    *,
    align: int | None,
    size: int | None,
    cxx_empty_size: bool,
    where: str | None,
) -> Layout:
    """Apply the aggregate's alignment, tail padding and explicit size."""
    final_align = max(natural_align, align or 1)
    if size is not None:
        _check_fit(fields, spans, size, where)
        return Layout(size, final_align, tuple(placed))
    if raw_size == 0 and cxx_empty_size and _is_empty_class(fields):
        raw_size = 1
    return Layout(_round_up(raw_size, final_align), final_align, tuple(placed))


# ---------------------------------------------------------------------------
# aggregates
# ---------------------------------------------------------------------------


def layout_struct(
    fields: Sequence[Field],
    *,
    align: int | None = None,
    size: int | None = None,
    packed: bool = False,
    cxx_empty_size: bool = True,
    name: str | None = None,
) -> Layout:
    """Lay out a struct by spec 1.2 and 1.3 (or as its members' explicit offsets say).

    ``align`` raises the struct's alignment (``__align__(N)``, ``alignas(N)``); to lower
    it, combine it with ``packed``. ``size`` fixes the size instead of the rounded-up
    end of the last member; every member must fit in it. ``packed`` (GCC
    ``__attribute__((packed))``) gives every member alignment 1 unless it has an
    ``alignas`` and lets bit fields cross their storage unit; zero-length bit fields
    still round up to their type's boundary. ``cxx_empty_size`` gives a struct without
    data members size 1, as C++ does (C: 0). ``name`` only names the struct in error
    messages.
    """
    where = _where("struct", name)
    _check_declared(where, align, size)
    placed: list[Placed] = []
    spans: list[tuple[int, int]] = []
    cursor = 0  # next free bit
    natural_align = 1
    explicit = False
    for index, field in enumerate(fields):
        _check_field(field, index, where)
        natural_align = max(natural_align, _member_align(field, packed))
        if field.offset is not None or field.bit_offset is not None:
            member, start, end = _place_explicit(field, index, where)
            explicit = True
            cursor = max(cursor, end)
        elif field.bit_size is None:
            offset = _round_up(-(-cursor // 8), _member_align(field, packed))
            member = Placed(field.name, offset, field.size, None, None)
            start, end = 8 * offset, 8 * (offset + field.size)
            cursor = end
        elif field.bit_size == 0:
            cursor = _round_up(cursor, 8 * field.size)
            member = Placed(field.name, cursor // 8, field.size, 0, cursor)
            start = end = cursor
        else:
            width, unit = field.bit_size, 8 * field.size
            if not packed:
                unit_start = cursor // unit * unit
                if cursor + width > unit_start + unit:
                    cursor = unit_start + unit
            member = Placed(field.name, _unit_offset(cursor, width, field.size), field.size, width, cursor)
            start, end = cursor, cursor + width
            cursor = end
        placed.append(member)
        spans.append((start, end))
    if explicit:
        _check_overlaps(fields, spans, where)
    return _finish(
        fields,
        placed,
        spans,
        -(-cursor // 8),
        natural_align,
        align=align,
        size=size,
        cxx_empty_size=cxx_empty_size,
        where=where,
    )


def layout_union(
    fields: Sequence[Field],
    *,
    align: int | None = None,
    size: int | None = None,
    cxx_empty_size: bool = True,
    name: str | None = None,
) -> Layout:
    """Lay out a union by spec 1.2 and 1.3: every member at offset 0 (bit 0).

    The size is the largest member (``ceil(width / 8)`` bytes for a bit field) rounded
    up to the union's alignment, which is that of its most strictly aligned member;
    unnamed bit fields contribute no alignment. ``align``, ``size``,
    ``cxx_empty_size`` and ``name`` work as in :func:`layout_struct`. Members with an
    explicit offset keep it (members of a union may overlap).
    """
    where = _where("union", name)
    _check_declared(where, align, size)
    placed: list[Placed] = []
    spans: list[tuple[int, int]] = []
    extent = 0  # bits
    natural_align = 1
    for index, field in enumerate(fields):
        _check_field(field, index, where)
        natural_align = max(natural_align, _member_align(field, False))
        if field.offset is not None or field.bit_offset is not None:
            member, start, end = _place_explicit(field, index, where)
        elif field.bit_size is None:
            member = Placed(field.name, 0, field.size, None, None)
            start, end = 0, 8 * field.size
        else:
            member = Placed(field.name, 0, field.size, field.bit_size, 0)
            start, end = 0, field.bit_size
        extent = max(extent, end)
        placed.append(member)
        spans.append((start, end))
    return _finish(
        fields,
        placed,
        spans,
        -(-extent // 8),
        natural_align,
        align=align,
        size=size,
        cxx_empty_size=cxx_empty_size,
        where=where,
    )


# ---------------------------------------------------------------------------
# vectors and arrays
# ---------------------------------------------------------------------------


def _check_element(what: str, element_size: int, element_align: int) -> None:
    if element_size < 0:
        raise LayoutError(f"{what} element has a negative size ({element_size})")
    if not _is_power_of_two(element_align):
        raise LayoutError(f"{what} element has alignment {element_align}, which is not a power of two")


def vector_layout(element_size: int, element_align: int, count: int) -> tuple[int, int]:
    """``(size, align)`` of a PTX native vector of ``count`` elements (spec 1.2).

    Odd ``count``: aligned like the element; even: ``count * element_align``. Vectors
    of elements of at most 4 bytes have 1 to 4 elements, of larger elements 1 or 2;
    other counts are not native vectors (CUDA's ``double3``, ``longlong4`` ... are
    plain structs with the alignment their header declares) and raise
    :class:`LayoutError`. The size is ``count * element_size`` (no padding of
    3-element vectors), rounded up to the alignment.
    """
    _check_element("vector", element_size, element_align)
    if element_size == 0:
        raise LayoutError("a native vector needs elements of a scalar type; this element has size 0")
    allowed = (1, 2, 3, 4) if element_size <= 4 else (1, 2)
    if count not in allowed:
        raise LayoutError(
            f"a native vector of {element_size}-byte elements has "
            f"{', '.join(map(str, allowed[:-1]))} or {allowed[-1]} elements, not {count} (spec 1.2)"
        )
    align = element_align if count % 2 else count * element_align
    return _round_up(count * element_size, align), align


def array_layout(element_size: int, element_align: int, dims: Sequence[int]) -> tuple[int, int]:
    """``(size, align)`` of an array, ``dims`` outermost first (``int a[2][3]``: ``[2, 3]``).

    The size is the element size times every count (a zero count gives 0 bytes, the
    GNU zero-length array); the alignment is the element's.
    """
    _check_element("array", element_size, element_align)
    total = element_size
    for count in dims:
        if count < 0:
            raise LayoutError(f"array dimension {count} is negative (dimensions {list(dims)})")
        total *= count
    return total, element_align
