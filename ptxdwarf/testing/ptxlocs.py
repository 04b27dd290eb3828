"""The ``.loc`` directives of PTX text, per function and per instruction: file, line, column,
``function_name`` and ``inlined_at``, without ptxas (which writes column 0 in every cubin row)."""

from __future__ import annotations

from dataclasses import dataclass

from ..dwarf.reprs import counted, short
from ..ptx.module import PtxModule
from ..ptx.reader import parse_ptx
from ..ptx.statements import LocDirective, instruction_locs

__all__ = ["PtxInstruction", "PtxLoc", "PtxLocs", "read_locs"]


@dataclass(frozen=True, slots=True)
class PtxLoc:
    """A source location of PTX text: a ``.loc`` directive (``ptx_line``: its line), or the
    call site its ``inlined_at`` names (``ptx_line`` 0). ``file`` is the ``.file`` number,
    ``path`` the path that ``.file`` gives; ``function_name`` the inlined function's name
    (the ``.debug_str`` string its label names; the label itself when the module has no such
    string)."""

    file: int
    path: str | None
    line: int
    column: int
    ptx_line: int = 0
    function_name: str | None = None
    inlined_at: PtxLoc | None = None

    def __repr__(self) -> str:
        inlined = (
            f", {short(self.function_name)} inlined at line {self.inlined_at.line}" if self.inlined_at else ""
        )
        return f"<PtxLoc {short(self.path or self.file)}:{self.line}:{self.column}{inlined} (PTX line {self.ptx_line})>"


@dataclass(frozen=True, slots=True)
class PtxInstruction:
    """An instruction of a function body: its PTX line, its text, and the ``.loc`` that
    governs it (the last one before it in the body; None before the first)."""

    ptx_line: int
    text: str
    loc: PtxLoc | None

    def __repr__(self) -> str:
        return f"<PtxInstruction line {self.ptx_line} {short(self.text, 40)!r}: {self.loc!r}>"


class PtxLocs:
    """The ``.loc`` directives of one PTX module, by function."""

    def __init__(self, module: PtxModule) -> None:
        self.module = module
        self._strings = _debug_strings(module)
        paths = {f.index: f.full_path for f in module.files}
        self._instructions: dict[str, list[PtxInstruction]] = {}
        self._locs: dict[str, list[PtxLoc]] = {}
        masked, index = module.masked, module.lines
        for f in module.functions:
            if f.body_start < 0:
                continue
            directives, governed = instruction_locs(masked, f.body_start, f.body_end)
            made = {d.start: self._loc(d.text, index.line(d.start), paths) for d in directives}
            self._locs[f.name] = list(made.values())
            self._instructions[f.name] = [
                PtxInstruction(
                    index.line(stmt.start), " ".join(stmt.text.split()), made[loc.start] if loc else None
                )
                for stmt, loc in governed
            ]

    def __repr__(self) -> str:
        return f"<PtxLocs {short(self.module.filename)!r}: {counted(len(self._instructions), 'function')}>"

    def _loc(self, text: str, ptx_line: int, paths: dict[int, str]) -> PtxLoc:
        d = LocDirective.read(text)
        assert d is not None, text  # instruction_locs gives .loc directives only
        at = None
        if d.inlined_at is not None:
            file, line, column = d.inlined_at
            at = PtxLoc(file, paths.get(file), line, column)
        name = self._strings.get(d.function_name, d.function_name) if d.function_name else None
        return PtxLoc(d.file, paths.get(d.file), d.line, d.column, ptx_line, name, at)

    def functions(self) -> list[str]:
        """The functions with a body, in text order."""
        return list(self._instructions)

    def instructions(self, function: str) -> list[PtxInstruction]:
        """The instructions of ``function``, each with its ``.loc``; LookupError for a
        function without a body."""
        try:
            return self._instructions[function]
        except KeyError:
            raise LookupError(
                f"no function {function!r} with a body (functions: {', '.join(self._instructions)})"
            ) from None

    def locs(self, function: str) -> list[PtxLoc]:
        """Every ``.loc`` directive of ``function``'s body, in text order."""
        self.instructions(function)
        return self._locs[function]

    def source_lines(
        self, function: str | None = None, file: str | None = None, *, instructions: bool = False
    ) -> set[int]:
        """The source lines the ``.loc`` directives (of ``function``; of a file whose path ends
        with ``file``) name, with the call sites their ``inlined_at`` name, line 0 left out:
        those ptxas may make line-table rows of. With ``instructions``, only the lines of the
        directives that govern an instruction."""
        found: set[int] = set()
        for name in [function] if function is not None else self.functions():
            if instructions:
                locs = [i.loc for i in self.instructions(name) if i.loc is not None]
            else:
                locs = self.locs(name)
                locs = [*locs, *(loc.inlined_at for loc in locs if loc.inlined_at is not None)]
            found |= {
                loc.line for loc in locs if loc.line and (file is None or (loc.path or "").endswith(file))
            }
        return found


def _debug_strings(module: PtxModule) -> dict[str, str]:
    """Each label of ``.debug_str`` and the string at it."""
    images = module.images(debug_only=True)
    if ".debug_str" not in images:
        return {}
    image = images[".debug_str"]
    data = image.data
    out = {}
    for label, offset in image.labels.items():
        end = data.find(b"\0", offset)
        out[label] = data[offset : end if end >= 0 else len(data)].decode("utf-8", "surrogateescape")
    return out


def read_locs(ptx: str | PtxModule) -> PtxLocs:
    """The ``.loc`` directives of PTX text (or a module read already), per function and
    per instruction."""
    return PtxLocs(ptx if isinstance(ptx, PtxModule) else parse_ptx(ptx))
