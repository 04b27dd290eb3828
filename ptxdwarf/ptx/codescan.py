"""The scan of a PTX module's code: where its directives, functions, labels and declarations
are, as plain data that :mod:`~ptxdwarf.ptx.reader` makes the module of.

:func:`scan_code` reads the comment-masked text once, stopping at the tokens of
:class:`~ptxdwarf.ptx.lexer.Tokens` and at label colons; it has a native twin (kernel
``scan``).
"""

from __future__ import annotations

import re

from .._native import twin
from ..errors import PtxSyntaxError
from .declarations import Fields, simple_declaration
from .lexer import NAME_CHAR, STRING, SYMBOL, TOKEN_KIND, VERSION, LineIndex, Tokens

__all__ = [
    "BAD_DIRECTIVE",
    "FILE",
    "SECTION_HEAD",
    "CodeScan",
    "FunctionScan",
    "read_directive",
    "scan_code",
    "section_span",
]

#: A function as :func:`scan_code` finds it: ``[name, kind ("entry" or "func"), line,
#: header start, returns or None, parameters or None (each a list of declarations; None
#: where the header has no parentheses there), body start, body end (its ``}``), end line, labels (name -> line),
#: declarations]``
#: (each the fields of its :class:`~ptxdwarf.ptx.module.PtxVariable` where it is of the
#: simple form, :func:`~ptxdwarf.ptx.declarations.simple_declaration`, else ``[text, line]``:
#: the statement without its ``;``, for :func:`~ptxdwarf.ptx.declarations.parse_declaration`); a function whose body is
#: never opened keeps body start and end -1 and end line 0.
FunctionScan = list[object]
#: What :func:`scan_code` finds: the directives (``[kind, start, end, line, end line]``:
#: ``version``, ``target``, ``address_size``, ``file``, ``section``; a section ends at its ``}``), the functions with a body, the
#: module-level declarations (as those of a function) and the names of the prototypes, in text order.
CodeScan = tuple[list[list[object]], list[FunctionScan], list["Fields | list[object]"], list[str]]

_IDENT_CHAR = re.compile(NAME_CHAR)
#: A label name just before the end of the searched span.
_LABEL_BEFORE = re.compile(r"(?<![\w$.%])(" + SYMBOL + r")\Z")
#: ``.section NAME`` and the blanks after it.
SECTION_HEAD = re.compile(r"\.section\s+(" + SYMBOL + r")\s*")
_TARGET = re.compile(r"\.target[ \t]*([^\n;]*)")
_ADDRESS_SIZE = re.compile(r"\.address_size\s+(\d+)")
#: ``.file INDEX "name"`` or ``.file INDEX "dir" "name"``, with an optional timestamp and size.
FILE = re.compile(rf"\.file\s+(\d+)\s+({STRING})(?:\s+({STRING}))?(?:\s*,\s*(\d+)\s*,\s*(\d+))?")
_FUNC_NAME = re.compile(r"\.(entry|func)\s*(?:\(([^)]*)\)\s*)?(" + SYMBOL + r")")
_SIGNATURE = re.compile(r"\s*(?:\(([^)]*)\)\s*)?")
_UP_TO_BODY = re.compile(r"[^{;]*")
_BRACE = re.compile(r"[{}]")
_STRAY_SECTION = re.compile(r"\.section\b")


def read_directive(masked: str, kind: str, start: int) -> tuple[object, int] | None:
    """The value of the ``.version`` (``(major, minor)``), ``.target`` (the targets) or
    ``.address_size`` directive (``kind``) at ``start``, and where it ends; None when it is
    malformed."""
    if kind == "version":
        vm = VERSION.match(masked, start)
        return None if vm is None else ((int(vm.group(1)), int(vm.group(2))), vm.end())
    if kind == "target":
        tm = _TARGET.match(masked, start)
        targets = [t.strip() for t in tm.group(1).split(",") if t.strip()] if tm else []
        return (targets, tm.end()) if tm is not None and targets else None
    am = _ADDRESS_SIZE.match(masked, start)
    if am is None or am.group(1) not in ("32", "64"):
        return None
    return int(am.group(1)), am.end()


def section_span(masked: str, start: int) -> tuple[str, int, int] | str:
    """The name, ``{`` and ``}`` of the ``.section`` block at ``start``, or what is wrong with it."""
    head = SECTION_HEAD.match(masked, start)
    if head is None:
        return "bad .section directive"
    name = head.group(1)
    pos = head.end()
    if pos >= len(masked) or masked[pos] != "{":
        return f"expected {{ after .section {name}"
    close = masked.find("}", pos + 1)
    nested = masked.find("{", pos + 1)
    if (
        close < 0
        or 0 <= nested < close
        or (masked.find(".section", pos + 1, close) >= 0 and _STRAY_SECTION.search(masked, pos + 1, close))
    ):
        return f"section {name} opened here is never closed"
    return name, pos, close


def _parameters(text: str, line: int) -> list[Fields | list[object]]:
    """The declarations of a parameter list, as :func:`scan_code` gives them."""
    out: list[Fields | list[object]] = []
    for part in text.split(","):
        part = part.strip()
        if part:
            simple = simple_declaration(part, line)
            out.append([part, line] if simple is None else simple)
    return out


@twin("scan")
def scan_code(masked: str, filename: str, lines: LineIndex) -> CodeScan:  # noqa: C901 - one dispatch over the top-level statements, the hot loop of reading a module
    """The directives, functions, module-level declarations and prototypes of ``masked``
    (the module's text, comments and ``@@DWARF`` lines blanked; ``lines``: its line index).

    Raises :class:`~ptxdwarf.errors.PtxSyntaxError` at the first statement the module
    reader cannot take.
    """
    line_at = lines.line

    def error(message: str, pos: int) -> PtxSyntaxError:
        return PtxSyntaxError(message, filename=filename, line=line_at(pos))

    directives: list[list[object]] = []
    functions: list[FunctionScan] = []
    variables: list[Fields | list[object]] = []
    prototypes: list[str] = []
    depth = 0
    function: FunctionScan | None = None
    labels: dict[str, int] = {}
    declarations: list[Fields | list[object]] = []
    pending: FunctionScan | None = None
    pos = 0
    next_token = Tokens(masked).next
    find = masked.find
    rfind = masked.rfind
    label_before = _LABEL_BEFORE.search
    ident_char = _IDENT_CHAR.match
    # Labels are found from their colons (a scan for every identifier of the
    # instructions is slow); each is handled, in text order, before the token
    # that follows it.
    colon = find(":")
    while True:
        m = next_token(pos)
        if m is None:
            break
        start = m.start()
        if 0 <= colon < start:
            if function is not None:
                while 0 <= colon < start:
                    # the label ended by this colon, if one is (not ``::``)
                    if colon and not masked.startswith(":", colon + 1):
                        end = colon
                        while end > pos and masked[end - 1].isspace():
                            end -= 1
                        lm = label_before(masked, max(pos, rfind("\n", 0, end) + 1), end)
                        if lm is not None:
                            labels.setdefault(lm.group(1), line_at(lm.start()))
                    colon = find(":", colon + 1)
            else:
                colon = find(":", start)
        tok = m.group()
        pos = m.end()
        kind = TOKEN_KIND.get(tok, "string")
        if kind == "decl":
            if start and ident_char(masked, start - 1):
                continue  # .param in ld.param.u64: not a declaration
            end = find(";", start)
            if end < 0:
                raise error(f"declaration {tok} without ';'", start)
            if _BRACE.search(masked[start:end].split("=", 1)[0]) is None:
                # (with a brace, not a declaration statement: a state space in an instruction)
                if function is not None or depth == 0:
                    text = masked[start:end]
                    line = line_at(start)
                    simple = simple_declaration(text, line)
                    (declarations if function is not None else variables).append(
                        [text, line] if simple is None else simple
                    )
                pos = end + 1
        elif kind == "open":
            depth += 1
            if depth == 1 and pending is not None:
                function = pending
                function[6] = pos
                labels = function[9]  # type: ignore[assignment]
                declarations = function[10]  # type: ignore[assignment]
                pending = None
        elif kind == "close":
            depth -= 1
            if depth < 0:
                raise error("unmatched }", start)
            if depth == 0 and function is not None:
                function[7] = start
                function[8] = line_at(start)
                function = None
        elif kind == "string":
            pass
        elif kind == "section":
            span = section_span(masked, start)
            if isinstance(span, str):
                raise error(span, start)
            directives.append([kind, start, span[2], line_at(start), line_at(span[2])])
            pos = span[2] + 1
        elif kind == "file":
            if FILE.match(masked, start) is None:
                raise error("bad .file directive", start)
            directives.append([kind, start, pos, line_at(start), line_at(pos)])
        elif depth == 0:
            if kind == "func":
                fm = _FUNC_NAME.match(masked, start)
                if fm is not None:
                    sig = _SIGNATURE.match(masked, fm.end())
                    assert sig is not None  # it matches the empty string
                    tail = _UP_TO_BODY.match(masked, sig.end())
                    assert tail is not None
                    if tail.end() < len(masked) and masked[tail.end()] == ";":
                        prototypes.append(fm.group(3))
                        pending = None
                        pos = tail.end() + 1
                    else:
                        line = line_at(start)
                        returns, params = fm.group(2), sig.group(1)
                        pending = [
                            fm.group(3),
                            fm.group(1),
                            line,
                            start,
                            None if returns is None else _parameters(returns, line),
                            None if params is None else _parameters(params, line_at(fm.end())),
                            -1,
                            -1,
                            0,
                            {},
                            [],
                        ]
                        functions.append(pending)
                        pos = sig.end()
            else:
                read = read_directive(masked, kind, start)
                if read is None:
                    raise error(BAD_DIRECTIVE[kind], start)
                directives.append([kind, start, read[1], line_at(start), line_at(read[1])])
                pos = read[1]
        if 0 <= colon < pos:
            colon = find(":", pos)
    if depth != 0:
        raise error("unclosed { at the end of the file", len(masked))
    return directives, functions, variables, prototypes


#: What is wrong with a malformed header directive, by its word.
BAD_DIRECTIVE = {
    "version": "bad .version directive",
    "target": "bad .target directive (no target named)",
    "address_size": "bad .address_size directive (32 or 64)",
}
