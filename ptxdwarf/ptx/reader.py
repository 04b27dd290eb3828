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

from ..dwarf.image import SectionImage, gc_paused
from ..errors import PtxSyntaxError
from .declarations import parse_declaration
from .dwarflines import dwarf_line_blocks
from .lexer import NAME_CHAR, STRING, SYMBOL, TOKEN_KIND, VERSION, LineIndex, Tokens, mask_comments
from .module import FileDirective, PtxFunction, PtxModule, PtxVariable, SectionBlock
from .sections import SectionParser

__all__ = ["parse_ptx"]

_IDENT_CHAR = re.compile(NAME_CHAR)
#: A label name just before the end of the searched span.
_LABEL_BEFORE = re.compile(r"(?<![\w$.%])(" + SYMBOL + r")\Z")
_SECTION_HEAD = re.compile(r"\.section\s+(" + SYMBOL + r")\s*")
_TARGET = re.compile(r"\.target[ \t]*([^\n;]*)")
_ADDRESS_SIZE = re.compile(r"\.address_size\s+(\d+)")
_FILE = re.compile(rf"\.file\s+(\d+)\s+({STRING})(?:\s+({STRING}))?(?:\s*,\s*(\d+)\s*,\s*(\d+))?")
_FUNC_NAME = re.compile(r"\.(entry|func)\s*(?:\([^)]*\)\s*)?(" + SYMBOL + r")")


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

    def parse(self, dwarf_blocks: list[SectionBlock]) -> PtxModule:  # noqa: C901 - one dispatch over the top-level statements, the hot loop of reading a module
        """Read the whole text: header directives, functions, variables, sections; the
        ``@@DWARF`` blocks join the sections."""
        masked = self.masked
        module = self.module
        depth = 0
        function: PtxFunction | None = None
        pending: PtxFunction | None = None
        pos = 0
        next_token = Tokens(masked).next
        find = masked.find
        # Labels are found from their colons (a scan for every identifier of the
        # instructions is slow); each is handled, in text order, before the token
        # that follows it.
        colon = find(":")
        while True:
            m = next_token(pos)
            if m is None:
                break
            start = m.start()
            tok = m.group()
            if 0 <= colon < start:
                if function is not None:
                    while 0 <= colon < start:
                        self.label_at(colon, pos, function)
                        colon = find(":", colon + 1)
                else:
                    colon = find(":", start)
            pos = m.end()
            kind = TOKEN_KIND.get(tok, "string")
            if kind == "decl" and start and _IDENT_CHAR.match(masked, start - 1):
                continue  # .param in ld.param.u64: not a declaration
            if kind == "section":
                pos = self.section(m.start())
            elif kind == "open":
                depth += 1
                if depth == 1 and pending is not None:
                    function = pending
                    function.body_start = m.end()
                    pending = None
            elif kind == "close":
                depth -= 1
                if depth < 0:
                    raise self.error("unmatched }", m.start())
                if depth == 0 and function is not None:
                    function.body_end = m.start()
                    function.end_line = self.line_at(m.start())
                    function = None
            elif kind == "string":
                pass
            elif kind == "decl":
                end = masked.find(";", m.start())
                if end < 0:
                    raise self.error(f"declaration {tok} without ';'", m.start())
                nested = re.search(r"[{}]", masked[m.start() : end].split("=", 1)[0])
                if nested is not None:
                    # not a declaration statement (e.g. the name of a state space in an instruction)
                    pass
                else:
                    found = parse_declaration(masked[m.start() : end], self.line_at(m.start()))
                    if function is not None:
                        function.declarations.extend(found)
                    elif depth == 0:
                        module._variables.extend(found)
                    pos = end + 1
            elif depth == 0:
                if kind == "func":
                    fm = _FUNC_NAME.match(masked, m.start())
                    if fm is not None:
                        pending = PtxFunction(fm.group(2), fm.group(1), self.line_at(m.start()), m.start())
                        returns = re.match(r"\.(?:entry|func)\s*\(([^)]*)\)", masked[m.start() : fm.end()])
                        if returns is not None:
                            pending.returns = self.param_list(returns.group(1), m.start())
                        pos = self.signature(fm.end(), pending)
                        if pos < 0:
                            module._prototypes.append(pending.name)
                            pending = None
                            pos = -pos
                        else:
                            module._functions.append(pending)
                elif kind in ("version", "target", "address_size"):
                    pos = self.directive(kind, m.start())
                elif kind == "file":
                    self.file_directive(m.start())
            elif kind == "file":
                self.file_directive(m.start())
            if 0 <= colon < pos:
                colon = find(":", pos)
        if depth != 0:
            raise self.error("unclosed { at the end of the file", len(masked))
        _add_blocks(module, dwarf_blocks)
        return module

    def directive(self, kind: str, start: int) -> int:
        """Read ``.version``, ``.target`` or ``.address_size`` at ``start``; the end."""
        masked = self.masked
        module = self.module
        if kind == "version":
            vm = VERSION.match(masked, start)
            if vm is None:
                raise self.error("bad .version directive", start)
            module.version = (int(vm.group(1)), int(vm.group(2)))
            module.version_line = self.line_at(start)
            return vm.end()
        if kind == "target":
            tm = _TARGET.match(masked, start)
            targets = [t.strip() for t in tm.group(1).split(",") if t.strip()] if tm else []
            if tm is None or not targets:
                raise self.error("bad .target directive (no target named)", start)
            module.target = targets
            module.target_span = (start, tm.end())
            module.target_line = self.line_at(start)
            return tm.end()
        am = _ADDRESS_SIZE.match(masked, start)
        if am is None or am.group(1) not in ("32", "64"):
            raise self.error("bad .address_size directive (32 or 64)", start)
        module.address_size = int(am.group(1))
        return am.end()

    def label_at(self, colon: int, floor: int, function: PtxFunction) -> None:
        """Record the label ended by the colon at ``colon``, if one is (not ``::``)."""
        masked = self.masked
        if masked.startswith(":", colon + 1) or colon == 0:
            return
        end = colon
        while end > floor and masked[end - 1].isspace():
            end -= 1
        lo = max(floor, masked.rfind("\n", 0, end) + 1)
        m = _LABEL_BEFORE.search(masked, lo, end)
        if m is not None:
            function.labels.setdefault(m.group(1), self.line_at(m.start()))

    def param_list(self, text: str, at: int) -> list[PtxVariable]:
        line = self.line_at(at)
        out: list[PtxVariable] = []
        for part in text.split(","):
            part = part.strip()
            if part:
                out.extend(parse_declaration(part, line))
        return out

    def signature(self, pos: int, function: PtxFunction) -> int:
        """Read the parameter list after a function name; a negative position marks a prototype."""
        masked = self.masked
        m = re.compile(r"\s*(?:\(([^)]*)\)\s*)?").match(masked, pos)
        if m is not None:
            if m.group(1) is not None:
                function.params = self.param_list(m.group(1), pos)
            pos = m.end()
        tail = re.compile(r"[^{;]*").match(masked, pos)
        end = tail.end() if tail else pos
        if end < len(masked) and masked[end] == ";":
            return -(end + 1)
        return pos

    def file_directive(self, start: int) -> None:
        fm = _FILE.match(self.masked, start)
        if fm is None:
            raise self.error("bad .file directive", start)
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
        masked = self.masked
        head = _SECTION_HEAD.match(masked, start)
        if head is None:
            raise self.error("bad .section directive", start)
        name = head.group(1)
        pos = head.end()
        if pos >= len(masked) or masked[pos] != "{":
            raise self.error(f"expected {{ after .section {name}", start)
        close = masked.find("}", pos + 1)
        nested = masked.find("{", pos + 1)
        line = self.line_at(start)
        if close < 0 or (0 <= nested < close):
            raise PtxSyntaxError(
                f"section {name} opened here is never closed", filename=self.filename, line=line
            )
        body = masked[pos + 1 : close]
        body_line = line + masked.count("\n", start, pos + 1)
        stray = re.search(r"\.section\b", body) if ".section" in body else None
        if stray is not None:
            raise PtxSyntaxError(
                f"section {name} opened here is never closed", filename=self.filename, line=line
            )
        filename = self.filename
        end_line = self.line_at(close)
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


def _quick(text: str, filename: str, marks: bytes | None = None) -> PtxModule | None:
    """The module's header directives and debug sections, without reading the code;
    None when the text needs the careful reader (block comments, unbalanced braces).
    ``marks``: :func:`_marks` of the text, if known."""
    if marks is not None:
        if (b"/*" in marks and "/*" in text) or marks.count(b"{") != marks.count(b"}"):
            return None
    elif "/*" in text or text.count("{") != text.count("}"):
        return None
    module = PtxModule(text, filename)
    starts = _directives_at(text, ".section")
    tail = starts[0] if starts else len(text)
    # Comments matter only in the debug sections, and there only when some are written.
    masked = text
    if text.find("/", tail) >= 0:
        masked = text[:tail] + mask_comments(text[tail:], filename)
    dwarf_blocks: list[SectionBlock] = []
    if "@@DWARF" in text:
        module._masked = mask_comments(text, filename)
        masked, dwarf_blocks = dwarf_line_blocks(module._masked, filename, module.lines)
    parser = _ModuleParser(module, masked)
    head_end = text.find("{")
    head = text if head_end < 0 else text[:head_end]
    for name in ("version", "target", "address_size"):
        for m in re.finditer(r"\." + name + r"\b", head):
            if _at_line_start(text, m.start()):
                parser.directive(name, m.start())
                break
    for start in _directives_at(text, ".file"):
        parser.file_directive(start)
    pos = 0
    for start in starts:
        if start >= pos:
            pos = parser.section(start)
    _add_blocks(module, dwarf_blocks)
    module._pending = lambda: _parse_paused(text, filename, module.lines)
    return module


def _parse(text: str, filename: str, lines: LineIndex | None = None) -> PtxModule:
    """The whole module (``lines``: the line index of ``text``, if one is made)."""
    module = PtxModule(text, filename, _lines=lines)
    module._masked = masked = mask_comments(text, filename)
    dwarf_blocks: list[SectionBlock] = []
    if "@@DWARF" in masked:
        masked, dwarf_blocks = dwarf_line_blocks(masked, filename, module.lines)
    return _ModuleParser(module, masked).parse(dwarf_blocks)


def _parse_paused(text: str, filename: str, lines: LineIndex) -> PtxModule:
    with gc_paused():
        return _parse(text, filename, lines)


def parse_ptx(text: str, filename: str = "<ptx>") -> PtxModule:
    """Read a PTX module's debug sections and the directives around them.

    Raises :class:`~ptxdwarf.errors.PtxSyntaxError` naming file and line on text
    that is not PTX ptxas would read.
    """
    if not text.strip():
        raise PtxSyntaxError("empty file: no PTX", filename=filename)
    marks = _marks(text)
    bad = _CONTROL.search(text) if marks is None or marks.translate(None, b"{}/*") else None
    if bad is not None:
        raise PtxSyntaxError(
            ("NUL byte" if bad.group(0) == "\0" else f"control character 0x{ord(bad.group(0)):02x}")
            + " in the text: this is not PTX",
            filename=filename,
            line=text.count("\n", 0, bad.start()) + 1,
        )
    with gc_paused():
        quick = _quick(text, filename, marks)
        if quick is not None:
            return quick
        return _parse(text, filename)
