"""The exceptions ptxdwarf raises.

Every error is a :class:`PtxDwarfError` whose message is one line naming what went
wrong and where (file and line of the PTX text, or section and offset of the DWARF,
or the DIE), so the command line can print it as is.
"""

from __future__ import annotations

# Line breaks and other control characters (tab aside), escaped as Python writes them: a
# message may quote a name read from the input.
_ESCAPES = {c: repr(chr(c))[1:-1] for c in (*range(0x20), 0x7F, 0x85, 0x2028, 0x2029) if c != 0x09}


def one_line(text: str) -> str:
    """``text`` with its line breaks and other control characters escaped (``\\n``, ``\\x00``)."""
    return text.translate(_ESCAPES)


class PtxDwarfError(Exception):
    """Base class of every error ptxdwarf raises on bad input or misuse."""

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.message = one_line(message)
        self.where = one_line(where) if where is not None else None
        super().__init__(f"{self.where}: {self.message}" if self.where else self.message)


class PtxSyntaxError(PtxDwarfError):
    """PTX text that cannot be read: bad directive, value that does not fit, unclosed section."""

    def __init__(self, message: str, *, filename: str = "<ptx>", line: int | None = None) -> None:
        self.filename = filename
        self.line = line
        super().__init__(message, where=f"{filename}:{line}" if line else filename)


class DwarfError(PtxDwarfError):
    """DWARF bytes that cannot be decoded: truncated record, unknown form, bad reference.

    ``section`` and ``offset`` locate the record; ``source`` is the PTX location of the
    bytes (``file:line``) when they came from PTX text.
    """

    def __init__(
        self,
        message: str,
        *,
        section: str,
        offset: int | None = None,
        source: str | None = None,
    ) -> None:
        self.section = section
        self.offset = offset
        self.source = source
        where = section if offset is None else f"{section}+0x{offset:x}"
        if source:
            where = f"{source} ({where})"
        super().__init__(message, where=where)


class EncodeError(PtxDwarfError):
    """A DIE tree or section that cannot be encoded (value does not fit its form, ...)."""


class BuilderError(PtxDwarfError):
    """Wrong use of :class:`~ptxdwarf.builder.DebugInfoBuilder`; the message names the entity."""


class RegisterNameError(BuilderError):
    """A PTX register name that DWARF cannot describe (more than 8 characters, not ASCII)."""


class LayoutError(BuilderError):
    """An aggregate whose members do not fit the size or alignment it was declared with."""


class AttachError(PtxDwarfError):
    """Debug info that cannot be attached to a PTX module (missing symbol or label, ...)."""


class UsageError(PtxDwarfError):
    """An option or argument in a form ptxdwarf cannot take (a bad ``--remap-path`` or
    ``--ptxas-version``)."""


class ToolError(PtxDwarfError):
    """An external tool (ptxas) is missing or failed."""


class CubinError(PtxDwarfError):
    """An ELF/cubin/fatbin file that cannot be read."""
