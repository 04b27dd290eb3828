"""Reading a PTX module: the header directives, ``.file`` directives, functions with their
parameters, declarations and labels, module variables, and the debug section blocks.

:func:`parse_ptx` reads the text once, comment-masked (:mod:`~ptxdwarf.ptx.lexer`); the
module keeps that text and its line index for every later scan. Each ``.section`` body is
read into a :class:`~ptxdwarf.dwarf.image.SectionImage` on first use
(:mod:`~ptxdwarf.ptx.sections`); the code is read on first use too, when only the debug
sections are asked for.
"""

from __future__ import annotations

import re

from .._native import twin
from ..dwarf.image import SectionImage, gc_paused
from ..errors import PtxSyntaxError
from .codescan import BAD_DIRECTIVE, FILE, SECTION_HEAD, read_directive, scan_code, section_span
from .declarations import Fields, parse_declaration
from .dwarflines import dwarf_line_blocks
from .lexer import LineIndex, mask_comments
from .module import FileDirective, PtxFunction, PtxModule, PtxVariable, SectionBlock
from .sections import SectionParser

__all__ = ["parse_ptx"]


def _unquote(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s[1:-1])


class _ModuleParser:
    """Reads ``masked``, the comment-masked text of ``module`` (its ``@@DWARF`` lines
    blanked), into the module."""

    def __init__(self, module: PtxModule, masked: str) -> None:
        self.module = module
        self.filename = module.filename
        self.masked = masked
        self.line_at = module.lines.line

    def error(self, message: str, pos: int) -> PtxSyntaxError:
        return PtxSyntaxError(message, filename=self.filename, line=self.line_at(pos))

    def parse(self, dwarf_blocks: list[SectionBlock]) -> PtxModule:
        """Read the whole text: header directives, functions, variables, sections; the
        ``@@DWARF`` blocks join the sections."""
        module = self.module
        directives, functions, variables, prototypes = scan_code(self.masked, self.filename, module.lines)
        for kind, start, end, line, end_line in directives:
            if kind == "section":
                self.block(start, end, line, end_line)  # type: ignore[arg-type]
            elif kind == "file":
                self.file_directive(start, line)  # type: ignore[arg-type]
            else:
                self.directive(kind, start, line)  # type: ignore[arg-type]
        for (
            name,
            kind,
            line,
            header,
            returns,
            params,
            body_start,
            body_end,
            end_line,
            labels,
            declarations,
        ) in functions:
            f = PtxFunction(name, kind, line, header, body_start, body_end, end_line, labels)  # type: ignore[arg-type]
            if returns is not None:
                _declare(f.returns, returns)  # type: ignore[arg-type]
            if params is not None:
                _declare(f.params, params)  # type: ignore[arg-type]
            _declare(f.declarations, declarations)  # type: ignore[arg-type]
            module._functions.append(f)
        _declare(module._variables, variables)
        module._prototypes += prototypes
        _add_blocks(module, dwarf_blocks)
        return module

    def directive(self, kind: str, start: int, line: int | None = None) -> int:
        """Read ``.version``, ``.target`` or ``.address_size`` at ``start`` (on ``line``, if
        known); the end."""
        module = self.module
        if line is None:
            line = self.line_at(start)
        read = read_directive(self.masked, kind, start)
        if read is None:
            raise self.error(BAD_DIRECTIVE[kind], start)
        value, end = read
        if kind == "version":
            module.version = value  # type: ignore[assignment]
            module.version_line = line
        elif kind == "target":
            module.target = value  # type: ignore[assignment]
            module.target_span = (start, end)
            module.target_line = line
        else:
            module.address_size = value  # type: ignore[assignment]
        return end

    def file_directive(self, start: int, line: int | None = None) -> None:
        """Read the ``.file`` directive at ``start`` (on ``line``, if known)."""
        fm = FILE.match(self.masked, start)
        if fm is None:
            raise self.error("bad .file directive", start)
        if line is None:
            line = self.line_at(start)
        first = _unquote(fm.group(2))
        second = _unquote(fm.group(3)) if fm.group(3) else None
        entry = FileDirective(
            int(fm.group(1)),
            second if second is not None else first,
            line,
            directory=first if second is not None else None,
            timestamp=int(fm.group(4)) if fm.group(4) else None,
            size=int(fm.group(5)) if fm.group(5) else None,
        )
        self.module.files.append(entry)

    def section(self, start: int) -> int:
        """Read the ``.section`` block at ``start``; its end."""
        span = section_span(self.masked, start)
        if isinstance(span, str):
            raise self.error(span, start)
        return self.block(start, span[2], self.line_at(start), self.line_at(span[2]))

    def block(self, start: int, close: int, line: int, end_line: int) -> int:
        """Add the well-formed ``.section`` block from ``start`` (on ``line``) to its ``}`` at
        ``close`` (on ``end_line``); its end."""
        masked = self.masked
        head = SECTION_HEAD.match(masked, start)
        assert head is not None
        name = head.group(1)
        pos = head.end()
        body = masked[pos + 1 : close]
        body_line = line + masked.count("\n", start, pos + 1)
        filename = self.filename
        block = SectionBlock(name, start, close + 1, line, end_line, None, ":" in body)

        def load() -> SectionImage:
            with gc_paused():
                parser = SectionParser(name, filename)
                image = parser.parse(body, body_line)
                block._text = parser.text
                return image

        block.loader = load
        self.module.sections.append(block)
        return close + 1


def _declare(into: list[PtxVariable], declarations: list[Fields | list[object]]) -> None:
    """Add the variables of ``declarations`` (as :func:`~ptxdwarf.ptx.codescan.scan_code` gives
    them) to ``into``."""
    for d in declarations:
        if type(d) is tuple:
            into.append(PtxVariable(*d))
        else:
            into += parse_declaration(*d)


def _add_blocks(module: PtxModule, blocks: list[SectionBlock]) -> None:
    """Add ``blocks`` to the module's sections, in text order."""
    if blocks:
        module.sections = sorted(module.sections + blocks, key=lambda b: b.start)


_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])
#: Everything but the characters :func:`_marks` keeps.
_UNMARKED = bytes(c for c in range(256) if c not in _CONTROL_BYTES + b"{}/*")


def _marks(text: str) -> bytes | None:
    """The control characters, braces, slashes and stars of ASCII ``text``, in order,
    in one pass (None for other text): what :func:`parse_ptx` checks the whole text for."""
    if not text.isascii():
        return None
    return text.encode("ascii").translate(None, _UNMARKED)


def _directives_at(text: str, word: str) -> list[int]:
    """Where ``word`` (``.section``) starts a line's first token, not a longer word."""
    found = []
    size = len(word)
    pos = text.find(word)
    while pos >= 0:
        after = text[pos + size : pos + size + 1]
        if not (after.isalnum() or after == "_") and _at_line_start(text, pos):
            found.append(pos)
        pos = text.find(word, pos + size)
    return found


def _at_line_start(text: str, pos: int) -> bool:
    start = text.rfind("\n", 0, pos) + 1
    return not text[start:pos].strip()


_Prescan = tuple[bytes | None, list[int], list[int], bool]


@twin("scan")
def _prescan(text: str) -> _Prescan:
    """What :func:`parse_ptx` looks for in the whole text before it reads any of it: the text's
    :func:`_marks`, where its ``.section`` and ``.file`` directives start
    (:func:`_directives_at`), and whether it has ``@@DWARF`` lines."""
    return _marks(text), _directives_at(text, ".section"), _directives_at(text, ".file"), "@@DWARF" in text


def _quick(text: str, filename: str, found: _Prescan | None = None) -> PtxModule | None:
    """The module's header directives and debug sections, without reading the code;
    None when the text needs the careful reader (block comments, unbalanced braces).
    ``found``: :func:`_prescan` of the text, if known."""
    marks, starts, files, dwarf = found if found is not None else _prescan(text)
    if marks is not None:
        if (b"/*" in marks and "/*" in text) or marks.count(b"{") != marks.count(b"}"):
            return None
    elif "/*" in text or text.count("{") != text.count("}"):
        return None
    module = PtxModule(text, filename)
    tail = starts[0] if starts else len(text)
    # Comments matter only in the debug sections, and there only when some are written.
    masked = text
    if text.find("/", tail) >= 0:
        masked = text[:tail] + mask_comments(text[tail:], filename)
    dwarf_blocks: list[SectionBlock] = []
    if dwarf:
        module._masked = mask_comments(text, filename)
        masked, dwarf_blocks = dwarf_line_blocks(module._masked, filename, module.lines)
    parser = _ModuleParser(module, masked)
    _read_header(parser, text)
    for start in files:
        parser.file_directive(start)
    pos = 0
    for start in starts:
        if start >= pos:
            pos = parser.section(start)
    _add_blocks(module, dwarf_blocks)
    module._pending = lambda: _parse_paused(text, filename, module.lines, dwarf)
    return module


def _read_header(parser: _ModuleParser, text: str) -> None:
    """Read the first ``.version``, ``.target`` and ``.address_size`` at a line's start before
    the text's first ``{``."""
    head_end = text.find("{")
    head = text if head_end < 0 else text[:head_end]
    for name in ("version", "target", "address_size"):
        for m in re.finditer(r"\." + name + r"\b", head):
            if _at_line_start(text, m.start()):
                parser.directive(name, m.start())
                break


def likely_header(text: str) -> tuple[tuple[int, int] | None, list[str], int | None]:
    """The ``.version``, ``.target`` and ``.address_size`` :func:`parse_ptx` is likely to find
    in ``text``, read without the rest of it (for starting ptxas early; the module's own
    decide): None, [] and None where they are not found so, or do not read."""
    module = PtxModule(text, "<ptx>")
    try:
        _read_header(_ModuleParser(module, text), text)
    except PtxSyntaxError:
        pass
    return module.version, module.target, module.address_size


def _parse(text: str, filename: str, lines: LineIndex | None = None, dwarf: bool = True) -> PtxModule:
    """The whole module (``lines``: the line index of ``text``, if one is made; ``dwarf``
    False: the text has no ``@@DWARF``, so its masked copy has none either)."""
    module = PtxModule(text, filename, _lines=lines)
    module._masked = masked = mask_comments(text, filename)
    dwarf_blocks: list[SectionBlock] = []
    if dwarf and "@@DWARF" in masked:
        masked, dwarf_blocks = dwarf_line_blocks(masked, filename, module.lines)
    return _ModuleParser(module, masked).parse(dwarf_blocks)


def _parse_paused(text: str, filename: str, lines: LineIndex, dwarf: bool) -> PtxModule:
    with gc_paused():
        return _parse(text, filename, lines, dwarf)


def parse_ptx(text: str, filename: str = "<ptx>") -> PtxModule:
    """Read a PTX module's debug sections and the directives around them.

    Raises :class:`~ptxdwarf.errors.PtxSyntaxError` naming file and line on text
    that is not PTX ptxas would read.
    """
    if not text or text.isspace():
        raise PtxSyntaxError("empty file: no PTX", filename=filename)
    body = text.rstrip("\0")  # NVRTC's PTX keeps the NUL byte that ends its C string
    found = _prescan(body)
    marks = found[0]
    bad = _CONTROL.search(body) if marks is None or marks.translate(None, b"{}/*") else None
    if bad is not None:
        raise PtxSyntaxError(
            ("NUL byte" if bad.group(0) == "\0" else f"control character 0x{ord(bad.group(0)):02x}")
            + " in the text: this is not PTX",
            filename=filename,
            line=text.count("\n", 0, bad.start()) + 1,
        )
    with gc_paused():
        quick = _quick(text, filename, found)
        if quick is not None:
            return quick
        return _parse(text, filename, dwarf=found[3])
