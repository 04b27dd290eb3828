"""The ``.nv.info.<kernel>`` sections of a cubin: ptxas's attributes of each kernel.

Each entry is a format byte, an attribute byte and a value whose length the format gives.
The names are those NVIDIA's tools print (``cuobjdump -elf``, ``nvdisasm``); the codes
were checked against the cubins ptxas 13.0 writes.
"""

from __future__ import annotations

from collections.abc import Iterator

from .cubin import CubinImages

__all__ = [
    "EIATTR_KPARAM_INFO",
    "EIATTR_PARAM_CBANK",
    "EIFMT_BVAL",
    "EIFMT_HVAL",
    "EIFMT_NVAL",
    "EIFMT_SVAL",
    "iter_attributes",
    "kernel_param_offsets",
]

EIFMT_NVAL = 0x01
"""No value."""
EIFMT_BVAL = 0x02
"""A one-byte value."""
EIFMT_HVAL = 0x03
"""A two-byte value."""
EIFMT_SVAL = 0x04
"""A u16 size, then a value of that many bytes."""

EIATTR_PARAM_CBANK = 0x0A
"""Where the kernel's parameters are in the constant bank: symbol index u32, offset u16, size u16."""
EIATTR_KPARAM_INFO = 0x17
"""One kernel parameter: index u32, ordinal u16, offset u16 (from the bank's), flags u32."""


def iter_attributes(raw: bytes) -> Iterator[tuple[int, bytes]]:
    """``(attribute, value)`` of each entry of one ``.nv.info`` section, in order, up to the
    first entry of a format this reader does not know."""
    pos = 0
    while pos + 2 <= len(raw):
        fmt, attr = raw[pos], raw[pos + 1]
        if fmt == EIFMT_SVAL:
            size = int.from_bytes(raw[pos + 2 : pos + 4], "little")
            value = raw[pos + 4 : pos + 4 + size]
            pos += 4 + size
        elif fmt == EIFMT_HVAL:
            value = raw[pos + 2 : pos + 4]
            pos += 4
        elif fmt == EIFMT_BVAL:
            value = raw[pos + 2 : pos + 3]
            pos += 3
        elif fmt == EIFMT_NVAL:
            value = b""
            pos += 2
        else:
            return
        yield attr, value


def kernel_param_offsets(found: CubinImages) -> dict[str, dict[int, int]]:
    """Kernel name -> {parameter ordinal: constant-bank address}, from the cubin's ``.nv.info.<kernel>``."""
    out: dict[str, dict[int, int]] = {}
    for name, raw in found.nv_info.items():
        base = None
        params: dict[int, int] = {}
        for attr, value in iter_attributes(raw):
            if attr == EIATTR_PARAM_CBANK and len(value) >= 6:
                base = int.from_bytes(value[4:6], "little")
            elif attr == EIATTR_KPARAM_INFO and len(value) >= 8:
                ordinal = int.from_bytes(value[4:6], "little")
                params[ordinal] = int.from_bytes(value[6:8], "little")
        if base is not None:
            out[name] = {k: base + v for k, v in params.items()}
    return out
