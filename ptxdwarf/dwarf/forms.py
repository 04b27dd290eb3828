"""DWARF forms: which form a value gets, and how each form's bytes are read.

The form policy: a value is first sorted into a *kind* (:func:`value_kind`),
and :func:`form_table` maps each kind to its form in one encoding. That table is the
one place a form is chosen for a value whose form is left open: ``choose_form``, the
forms of built DIEs (whose specs hold the kind until the encoding is known, settled
once per DIE shape by the encoder) look it up.

The readers below are the decoder's codec (plain Python, much faster than Construct),
which :mod:`ptxdwarf.dwarf.decode` runs per attribute. The Construct schemas of :mod:`ptxdwarf.dwarf.schemas` are the
reference they are tested against, together with the encoder's writers
(:mod:`ptxdwarf.dwarf.writers`). Readers take ``(data, pos)`` and return
``(value, next_pos)``; they raise :class:`IndexError` or :class:`struct.error` on
truncated data, which the decoder turns into a :class:`~ptxdwarf.errors.DwarfError`
naming the place.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Any

from .constants import AT, EXPRESSION_ATTRIBUTES, FORM, SECTION_POINTER_ATTRIBUTES
from .image import Symbol
from .model import DIE, LocationList

__all__ = [
    "AUTO_EXPR",
    "AUTO_EXPR_BLOCK1",
    "AUTO_EXPR_BLOCK2",
    "AUTO_EXPR_BLOCK4",
    "AUTO_FLAG",
    "AUTO_FORM",
    "AUTO_REF",
    "AUTO_SECTION",
    "AUTO_STRING",
    "RELOCATABLE_FORMS",
    "fixed_formats",
    "form_table",
    "read_sleb",
    "read_uleb",
    "reader_for",
    "sleb_bytes",
    "uleb_bytes",
    "value_kind",
]

U16 = struct.Struct("<H")
U32 = struct.Struct("<I")

#: Forms whose value may be a symbol (relocated by ptxas or a linker).
RELOCATABLE_FORMS = frozenset({FORM.addr, FORM.data4, FORM.data8, FORM.strp, FORM.sec_offset, FORM.ref_addr})


def fixed_formats(version: int, address_size: int) -> dict[int, str]:
    """``struct`` format letters of the fixed-size forms in an encoding."""
    addr = "Q" if address_size == 8 else "I"
    return {
        FORM.addr: addr,
        FORM.data1: "B",
        FORM.data2: "H",
        FORM.data4: "I",
        FORM.data8: "Q",
        FORM.flag: "B",
        FORM.ref1: "B",
        FORM.ref2: "H",
        FORM.ref4: "I",
        FORM.ref8: "Q",
        FORM.ref_addr: addr if version == 2 else "I",
        FORM.strp: "I",
        FORM.sec_offset: "I",
        FORM.ref_sig8: "Q",
    }


def read_uleb(data: bytes, pos: int) -> tuple[int, int]:
    """ULEB128 at ``pos``."""
    byte = data[pos]
    if byte < 0x80:
        return byte, pos + 1
    result = byte & 0x7F
    shift = 7
    while True:
        pos += 1
        byte = data[pos]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos + 1
        shift += 7


def read_sleb(data: bytes, pos: int) -> tuple[int, int]:
    """SLEB128 at ``pos``."""
    result = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            if byte & 0x40:
                result -= 1 << shift
            return result, pos


def uleb_bytes(value: int) -> bytes:
    """ULEB128 encoding of a non-negative ``value``."""
    if 0 <= value < 0x80:
        return bytes((value,))
    if value < 0:
        raise ValueError(f"ULEB128 cannot encode negative {value}")
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def sleb_bytes(value: int) -> bytes:
    """SLEB128 encoding of ``value``."""
    if -0x40 <= value < 0x40:
        return bytes((value & 0x7F,))
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40):
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def _read_string(data: bytes, pos: int) -> tuple[bytes, int]:
    end = data.index(b"\0", pos)
    return data[pos:end], end + 1


def _read_block(
    length_reader: Callable[[bytes, int], tuple[int, int]],
) -> Callable[[bytes, int], tuple[bytes, int]]:
    def read(data: bytes, pos: int) -> tuple[bytes, int]:
        size, pos = length_reader(data, pos)
        end = pos + size
        if end > len(data):
            raise IndexError("block runs past the end")
        return data[pos:end], end

    return read


def _fixed_reader(fmt: struct.Struct) -> Callable[[bytes, int], tuple[int, int]]:
    unpack = fmt.unpack_from
    size = fmt.size

    def read(data: bytes, pos: int) -> tuple[int, int]:
        return unpack(data, pos)[0], pos + size

    return read


def _u8(data: bytes, pos: int) -> tuple[int, int]:
    return data[pos], pos + 1


def _flag_present(_data: bytes, pos: int) -> tuple[bool, int]:
    return True, pos


_VARIABLE_READERS: dict[int, Callable[[bytes, int], tuple[Any, int]]] = {
    FORM.string: _read_string,
    FORM.block1: _read_block(_u8),
    FORM.block2: _read_block(_fixed_reader(U16)),
    FORM.block4: _read_block(_fixed_reader(U32)),
    FORM.block: _read_block(read_uleb),
    FORM.exprloc: _read_block(read_uleb),
    FORM.udata: read_uleb,
    FORM.ref_udata: read_uleb,
    FORM.sdata: read_sleb,
    FORM.flag_present: _flag_present,
}


def reader_for(form: int, version: int, address_size: int) -> Callable[[bytes, int], tuple[Any, int]] | None:
    """The reader of ``form`` (not ``indirect``), or None for an unknown form.

    Strings are returned as bytes and blocks as plain bytes; the decoder adds meaning.
    """
    reader = _VARIABLE_READERS.get(form)
    if reader is not None:
        return reader
    fmt = fixed_formats(version, address_size).get(form)
    if fmt is None:
        return None
    return _fixed_reader(struct.Struct("<" + fmt))


# --- the form policy ----------------------------------------------------------------

#: Set in a value kind whose form is the same in every encoding: such a kind is that
#: form with this bit set (a built attribute's spec holds it, and reads back with form
#: None: one the encoder was left to choose).
AUTO_FORM = 1 << 16
# Kinds whose form depends on the encoding (its version and options).
AUTO_STRING = -1  # str: string or strp
AUTO_FLAG = -2  # True: flag or flag_present
AUTO_REF = -3  # a DIE: ref4
AUTO_EXPR = -4  # a tuple or list of operations: block1 or exprloc
AUTO_SECTION = -5  # a section Symbol or a LocationList: data4 or sec_offset
AUTO_EXPR_BLOCK1 = -6  # bytes of an expression attribute, under 256: block1 or exprloc
AUTO_EXPR_BLOCK2 = -7  # ... under 65536: block2 or exprloc
AUTO_EXPR_BLOCK4 = -8  # ... longer: block4 or exprloc

#: The forms a kind may name for itself (``form | AUTO_FORM``).
_FIXED_KINDS = (
    FORM.addr,
    FORM.data1,
    FORM.data2,
    FORM.data4,
    FORM.data8,
    FORM.sdata,
    FORM.flag,
    FORM.block1,
    FORM.block2,
    FORM.block4,
)


@functools.lru_cache(maxsize=64)  # keyed by values read from the input: bounded
def form_table(version: int, strings: str, dwarf4_forms: bool) -> dict[int, int]:
    """Value kind to form, in an encoding: DWARF ``version``, ``strings`` ``"inline"`` or
    ``"strp"``, and whether DWARF 4 units may use the forms DWARF 4 added (ptxas 13.0
    rejects ``flag_present``, ``exprloc`` and ``sec_offset``)."""
    modern = version >= 4 and dwarf4_forms
    table = {int(form) | AUTO_FORM: int(form) for form in _FIXED_KINDS}
    table[AUTO_STRING] = int(FORM.strp) if strings == "strp" else int(FORM.string)
    table[AUTO_FLAG] = int(FORM.flag_present) if modern else int(FORM.flag)
    table[AUTO_REF] = int(FORM.ref4)
    table[AUTO_EXPR] = int(FORM.exprloc) if modern else int(FORM.block1)
    table[AUTO_SECTION] = int(FORM.sec_offset) if modern else int(FORM.data4)
    table[AUTO_EXPR_BLOCK1] = int(FORM.exprloc) if modern else int(FORM.block1)
    table[AUTO_EXPR_BLOCK2] = int(FORM.exprloc) if modern else int(FORM.block2)
    table[AUTO_EXPR_BLOCK4] = int(FORM.exprloc) if modern else int(FORM.block4)
    return table


_ADDRESS_CODES = frozenset({int(AT.low_pc), int(AT.high_pc), int(AT.entry_pc)})
_EXPRESSION_CODES = frozenset(int(a) for a in EXPRESSION_ATTRIBUTES)
_K_ADDR = int(FORM.addr) | AUTO_FORM
_K_SDATA = int(FORM.sdata) | AUTO_FORM
_K_DATA1 = int(FORM.data1) | AUTO_FORM
_K_DATA2 = int(FORM.data2) | AUTO_FORM
_K_DATA4 = int(FORM.data4) | AUTO_FORM
_K_DATA8 = int(FORM.data8) | AUTO_FORM
_K_FLAG = int(FORM.flag) | AUTO_FORM
_K_BLOCK1 = int(FORM.block1) | AUTO_FORM
_K_BLOCK2 = int(FORM.block2) | AUTO_FORM
_K_BLOCK4 = int(FORM.block4) | AUTO_FORM


def value_kind(name: int, value: Any) -> int | None:
    """The kind of a value whose form is left open, for attribute ``name``: what
    :func:`form_table` maps to a form in each encoding. None for
    a value no form holds."""
    t = type(value)
    if t is str:
        return AUTO_STRING
    if t is int:
        if name in _ADDRESS_CODES:
            return _K_ADDR
        if value < 0:
            return _K_SDATA
        if value < 0x100:
            return _K_DATA1
        if value < 0x10000:
            return _K_DATA2
        return _K_DATA4 if value < 0x100000000 else _K_DATA8
    if isinstance(value, DIE):  # a BuiltDIE too
        return AUTO_REF
    if t is tuple or t is list:
        return AUTO_EXPR
    if t is bool:
        return AUTO_FLAG if value else _K_FLAG
    if t is LocationList:
        return AUTO_SECTION
    if t is Symbol:
        return AUTO_SECTION if name in SECTION_POINTER_ATTRIBUTES or value.is_section else _K_ADDR
    if isinstance(value, (bytes, bytearray)):
        size = len(value)
        if name in _EXPRESSION_CODES:
            return (
                AUTO_EXPR_BLOCK1 if size < 0x100 else AUTO_EXPR_BLOCK2 if size < 0x10000 else AUTO_EXPR_BLOCK4
            )
        return _K_BLOCK1 if size < 0x100 else _K_BLOCK2 if size < 0x10000 else _K_BLOCK4
    return _subclass_kind(name, value)


def _subclass_kind(name: int, value: Any) -> int | None:
    """:func:`value_kind` of a value of a subclass of str, list, tuple or int."""
    if isinstance(value, str):
        return AUTO_STRING
    if isinstance(value, (list, tuple)):
        return AUTO_EXPR
    if isinstance(value, int):  # an IntEnum member
        return value_kind(name, int(value))
    return None
