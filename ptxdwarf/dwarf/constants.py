"""DWARF names and numbers, and CUDA's address classes.

The DWARF tables (:mod:`ptxdwarf.dwarf.codes`, generated from pyelftools' tables) are
:class:`enum.IntEnum` enums whose members are named without their ``DW_XX_`` prefix
(``TAG.subprogram``, ``AT.name``, ``FORM.data4``, ``OP.regx``); this module adds their
names, look-ups by name and CUDA's own address classes.
"""

from __future__ import annotations

import enum

from .codes import ACCESS, AT, ATE, CC, FORM, INL, LANG, OP, TAG, VIRTUALITY, VIS

__all__ = [
    "ACCESS",
    "AT",
    "ATE",
    "CC",
    "ENUMERATED_ATTRIBUTES",
    "FORM",
    "HANDLE_CLASS",
    "INL",
    "LANG",
    "OP",
    "SPACE_CLASS",
    "TAG",
    "VIRTUALITY",
    "VIS",
    "AddressClass",
    "address_class_name",
    "at_name",
    "ate_name",
    "enumerated_value_name",
    "form_name",
    "lang_name",
    "op_name",
    "tag_name",
]


def _table(codes: type[enum.IntEnum]) -> dict[str, int]:
    return {name: int(member) for name, member in codes.__members__.items()}


def _reverse(table: dict[str, int], prefix: str) -> dict[int, str]:
    # Prefer real names over the lo_user/hi_user range markers that share a value.
    out: dict[int, str] = {}
    for name, value in table.items():
        if value not in out or out[value].endswith(("lo_user", "hi_user")):
            out[value] = prefix + name
    return out


_TAGS = _table(TAG)
_ATS = _table(AT)
_FORMS = _table(FORM)
_OPS = _table(OP)
_ATES = _table(ATE)
_LANGS = _table(LANG)

_TAG_NAMES = _reverse(_TAGS, "DW_TAG_")
_AT_NAMES = _reverse(_ATS, "DW_AT_")
_FORM_NAMES = _reverse(_FORMS, "DW_FORM_")
_OP_NAMES = _reverse(_OPS, "DW_OP_")
_ATE_NAMES = _reverse(_ATES, "DW_ATE_")
_LANG_NAMES = _reverse(_LANGS, "DW_LANG_")
#: Attribute -> the names of its enumerated values.
_VALUE_NAMES: dict[int, dict[int, str]] = {
    AT.inline: _reverse(_table(INL), "DW_INL_"),
    AT.accessibility: _reverse(_table(ACCESS), "DW_ACCESS_"),
    AT.calling_convention: _reverse(_table(CC), "DW_CC_"),
    AT.virtuality: _reverse(_table(VIRTUALITY), "DW_VIRTUALITY_"),
    AT.visibility: _reverse(_table(VIS), "DW_VIS_"),
}
#: The attributes whose values :func:`enumerated_value_name` names.
ENUMERATED_ATTRIBUTES = frozenset(_VALUE_NAMES)


def tag_name(code: int) -> str:
    """``DW_TAG_subprogram`` for 0x2e; ``DW_TAG_0x4109`` for a code nobody named."""
    return _TAG_NAMES.get(code) or f"DW_TAG_0x{code:x}"


def at_name(code: int) -> str:
    """``DW_AT_name`` for 3; ``DW_AT_0x3e01`` for a code nobody named."""
    return _AT_NAMES.get(code) or f"DW_AT_0x{code:x}"


def form_name(code: int) -> str:
    """``DW_FORM_data4`` for 6; ``DW_FORM_0x99`` for an unknown code."""
    return _FORM_NAMES.get(code) or f"DW_FORM_0x{code:x}"


def op_name(code: int) -> str:
    """``DW_OP_regx`` for 0x90; ``DW_OP_0xe5`` for an unknown code."""
    return _OP_NAMES.get(code) or f"DW_OP_0x{code:x}"


def ate_name(code: int) -> str:
    """``DW_ATE_signed`` for 5."""
    return _ATE_NAMES.get(code) or f"DW_ATE_0x{code:x}"


def lang_name(code: int) -> str:
    """``DW_LANG_C_plus_plus`` for 4."""
    return _LANG_NAMES.get(code) or f"DW_LANG_0x{code:x}"


def enumerated_value_name(attribute: int, value: int) -> str | None:
    """The name of ``value`` of ``attribute`` for DW_AT_inline (``DW_INL_inlined``),
    DW_AT_accessibility (``DW_ACCESS_public``), DW_AT_calling_convention
    (``DW_CC_pass_by_value``), DW_AT_virtuality and DW_AT_visibility; None for other
    attributes and unknown values."""
    names = _VALUE_NAMES.get(attribute)
    return names.get(value) if names is not None else None


def _code(table: dict[str, int], prefix: str, what: str, name: str | int) -> int:
    if isinstance(name, int):
        return int(name)
    key = name[len(prefix) :] if name.startswith(prefix) else name
    if key in table:
        return table[key]
    if key.startswith("0x"):
        try:
            return int(key, 16)
        except ValueError:
            pass
    raise KeyError(f"unknown DWARF {what} {name!r}")


def tag_code(name: str | int) -> int:
    """The code of ``"DW_TAG_subprogram"``, ``"subprogram"`` or ``"DW_TAG_0x4109"``."""
    return _code(_TAGS, "DW_TAG_", "tag", name)


def at_code(name: str | int) -> int:
    """The code of ``"DW_AT_name"``, ``"name"`` or ``"DW_AT_0x3e01"``."""
    return _code(_ATS, "DW_AT_", "attribute", name)


def form_code(name: str | int) -> int:
    """The code of ``"DW_FORM_data4"`` or ``"data4"``."""
    return _code(_FORMS, "DW_FORM_", "form", name)


def op_code(name: str | int) -> int:
    """The code of ``"DW_OP_regx"`` or ``"regx"``."""
    return _code(_OPS, "DW_OP_", "operation", name)


class AddressClass(enum.IntEnum):
    """CUDA address-class codes for ``DW_AT_address_class``.

    PTX Interoperability guide, section "CUDA-Specific DWARF Definitions". Each
    member's :attr:`spec_name` is the guide's name (``ADDR_reg_space``).
    """

    CODE = 1
    """``ADDR_code_space``: code storage."""
    REG = 2
    """``ADDR_reg_space``: register storage."""
    SREG = 3
    """``ADDR_sreg_space``: special register storage."""
    CONST = 4
    """``ADDR_const_space``: constant storage."""
    GLOBAL = 5
    """``ADDR_global_space``: global storage."""
    LOCAL = 6
    """``ADDR_local_space``: local storage."""
    PARAM = 7
    """``ADDR_param_space``: parameter storage."""
    SHARED = 8
    """``ADDR_shared_space``: shared storage."""
    SURF = 9
    """``ADDR_surf_space``: surface storage."""
    TEX = 10
    """``ADDR_tex_space``: texture storage."""
    TEX_SAMPLER = 11
    """``ADDR_tex_sampler_space``: texture sampler storage."""
    GENERIC = 12
    """``ADDR_generic_space``: generic-address storage."""

    @property
    def spec_name(self) -> str:
        """The name the PTX Interoperability guide gives this code."""
        return f"ADDR_{self.name.lower()}_space"


#: The address class of storage in each PTX state space (``.shared`` -> ``ADDR_shared_space``).
SPACE_CLASS: dict[str, AddressClass] = {
    "global": AddressClass.GLOBAL,
    "const": AddressClass.CONST,
    "shared": AddressClass.SHARED,
    "local": AddressClass.LOCAL,
    "param": AddressClass.PARAM,
    "tex": AddressClass.TEX,
}
#: The address class of a texture, sampler or surface handle, by its PTX type.
HANDLE_CLASS: dict[str, AddressClass] = {
    ".texref": AddressClass.TEX,
    ".samplerref": AddressClass.TEX_SAMPLER,
    ".surfref": AddressClass.SURF,
}


#: Codes cuda-gdb knows beyond the spec's twelve; valid to cuda-gdb, not to the spec.
CUDA_GDB_ADDRESS_CLASSES: dict[int, str] = {
    13: "ptxIParamStorage",
    14: "ptxOParamStorage",
    15: "ptxFrameStorage",
    16: "ptxURegStorage",
}


def address_class_name(code: int) -> str:
    """``ADDR_reg_space`` for 2, cuda-gdb's name for 13-16, ``ADDR_0x..`` otherwise."""
    try:
        return AddressClass(code).spec_name
    except ValueError:
        return CUDA_GDB_ADDRESS_CLASSES.get(code) or f"ADDR_0x{code:x}"


# Attributes whose block or exprloc value is a DWARF expression.
EXPRESSION_ATTRIBUTES = frozenset(
    _ATS[n]
    for n in (
        "location",
        "frame_base",
        "data_member_location",
        "vtable_elem_location",
        "use_location",
        "return_addr",
        "static_link",
        "string_length",
        "segment",
        "lower_bound",
        "upper_bound",
        "count",
        "byte_size",
        "bit_size",
        "data_location",
        "allocated",
        "associated",
        "byte_stride",
        "bit_stride",
    )
    if n in _ATS
)

# Attributes that, with DW_FORM_data4/data8 (DWARF 2, 3) or sec_offset, point into
# another section rather than hold a constant.
SECTION_POINTER_ATTRIBUTES: dict[int, str] = {
    _ATS["stmt_list"]: ".debug_line",
    _ATS["location"]: ".debug_loc",
    _ATS["frame_base"]: ".debug_loc",
    _ATS["string_length"]: ".debug_loc",
    _ATS["return_addr"]: ".debug_loc",
    _ATS["static_link"]: ".debug_loc",
    _ATS["use_location"]: ".debug_loc",
    _ATS["vtable_elem_location"]: ".debug_loc",
    _ATS["ranges"]: ".debug_ranges",
    _ATS["macro_info"]: ".debug_macinfo",
}
