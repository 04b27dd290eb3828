"""What the builder's modules share: the attribute and tag codes they write, as plain
ints, and the check of decl_file and decl_line numbers."""

from __future__ import annotations

from typing import Any

from ..dwarf.constants import AT, TAG
from ..dwarf.forms import value_kind

# Plain ints of the attributes the hot paths write: enum member access (AT.name
# above all, which goes through Enum's ``name`` property) costs 0.2-0.5 us each.
_NAME = int(AT.name)
_TYPE = int(AT.type)
_DECL_FILE = int(AT.decl_file)
_DECL_LINE = int(AT.decl_line)
_LOCATION = int(AT.location)
_ADDRESS_CLASS = int(AT.address_class)
_BYTE_SIZE = int(AT.byte_size)
_VARIABLE = int(TAG.variable)
_MEMBER = int(TAG.member)
_SUBPROGRAM = int(TAG.subprogram)
_BIT_SIZE = int(AT.bit_size)
_BIT_OFFSET = int(AT.bit_offset)
_DATA_BIT_OFFSET = int(AT.data_bit_offset)
_DATA_MEMBER_LOCATION = int(AT.data_member_location)
_LOW_PC = int(AT.low_pc)
_HIGH_PC = int(AT.high_pc)
_FRAME_BASE = int(AT.frame_base)
_EXTERNAL = int(AT.external)
_FORMAL_PARAMETER = int(TAG.formal_parameter)
_DECLARATION = int(AT.declaration)
builtins_type = type  # the builder's methods take a parameter called ``type``


def _decl_kind(number: Any) -> int:
    """The form of a decl_file or decl_line number; 0 for anything but a number of 0 to 2**64-1."""
    if builtins_type(number) is not int:
        if not isinstance(number, int) or isinstance(number, bool):
            return 0
        number = int(number)
    return value_kind(_DECL_LINE, number) or 0 if 0 <= number < 1 << 64 else 0


def _bad_decl(file: Any, line: Any) -> str:
    return f"decl file {file!r} and line {line!r} must be numbers from 0 to 2**64-1"
