"""PTX parameter passing: the ``.param`` declarations for source-level types.

Device functions follow the PTX Interoperability guide's table (section
"Parameter Passing"): integers of 8 to 32 bits are widened to ``.s32``/``.u32``,
64-bit integers are ``.s64``/``.u64``, pointers ``.u64`` (``.u32`` with 4-byte
addresses), floats ``.f32``/``.f64``, aggregates, unions, vectors, arrays and
128-bit integers ``.align A .b8 name[size]``, texture/sampler/surface handles
``.b64``. Kernels pass scalars at their own width (``.s8``, ``.u16``, ...), as
nvcc and the Rust-CUDA kernel ABI do. Slices (Rust ``&[T]``) become a pointer and
a length; zero-sized types take no parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .dwarf.constants import ATE
from .errors import BuilderError

if TYPE_CHECKING:
    from .builder import Type

__all__ = ["ParamDecl", "lower"]

_ALIGNS = (1, 2, 4, 8, 16, 32, 64, 128)


@dataclass(frozen=True)
class ParamDecl:
    """One ``.param`` of a PTX function signature."""

    name: str
    ptx_type: str
    align: int | None = None
    size: int | None = None
    part: str | None = None
    """``"data"``/``"len"`` for the two halves of a slice."""

    def declaration(self) -> str:
        """``.param .u64 name`` or ``.param .align 8 .b8 name[24]``."""
        if self.size is not None:
            return f".param .align {self.align} .b8 {self.name}[{self.size}]"
        return f".param {self.ptx_type} {self.name}"

    def __str__(self) -> str:
        return self.declaration()


def _scalar(type_: Type) -> tuple[str, int] | None:
    """(class letter, bits) of a base or enum type: ('s', 32), ('u', 8), ('f', 64)."""
    t = type_.resolved
    if t.kind == "enum":
        if t.target is not None:
            return _scalar(t.target)
        return ("s", 8 * (t.byte_size or 4))
    if t.kind != "base" or t.byte_size is None:
        return None
    encoding = t.die.get("DW_AT_encoding")
    bits = 8 * t.byte_size
    if encoding == ATE.float:
        return ("f", bits)
    if encoding in (ATE.signed, ATE.signed_char):
        return ("s", bits)
    return ("u", bits)


def lower(type_: Type, prefix: str, index: int, *, kernel: bool, address_size: int = 8) -> list[ParamDecl]:
    """The ``.param`` declarations a value of ``type_`` is passed in, named
    ``{prefix}{index}``, ``{prefix}{index + 1}``... (none for a zero-sized type)."""
    t = type_.resolved
    name = f"{prefix}{index}"
    if t.kind == "slice":
        width = 8 * address_size
        return [
            ParamDecl(name, f".u{width}", part="data"),
            ParamDecl(f"{prefix}{index + 1}", f".u{width}", part="len"),
        ]
    if t.kind == "handle":
        return [ParamDecl(name, ".b64")]
    if t.kind == "pointer":
        return [ParamDecl(name, f".u{8 * address_size}")]
    if t.byte_size is None:
        raise BuilderError(f"parameter {name}: type {t.name or t.kind!r} has no size and cannot be passed")
    if t.byte_size == 0:
        return []
    scalar = _scalar(t)
    if scalar is not None:
        cls, bits = scalar
        if cls == "f" and bits == 16:
            return [ParamDecl(name, ".b8", 2, 2)]  # 16-bit floats are storage only: passed as bytes
        if bits <= 64:
            if not kernel and cls != "f" and bits < 32:
                bits = 32  # widened (the guide's note A)
            if cls == "u" and t.die.get("DW_AT_encoding") == ATE.boolean and kernel:
                return [ParamDecl(name, ".u8")]
            return [ParamDecl(name, f".{cls}{bits}")]
    align = t.align
    if align not in _ALIGNS:
        raise BuilderError(f"parameter {name}: alignment {align} is not one of {_ALIGNS}")
    return [ParamDecl(name, ".b8", align, t.byte_size)]
