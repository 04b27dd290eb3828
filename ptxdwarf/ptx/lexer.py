"""The lexical layer of PTX: names, labels, directives, strings and comments, comment
masking, the line of an offset, and the tokens the module reader stops at.

Every reader of PTX text takes its patterns from here. Text is read comment-masked
(:func:`mask_comments`): comments become blanks of the same length (newlines kept), so
offsets and lines are those of the text as written.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate, repeat
from operator import add

from .._native import twin
from ..dwarf.expr import IDENTIFIER
from ..errors import PtxSyntaxError

__all__ = [
    "COMMENT_OR_STRING",
    "DECL_WORDS",
    "DOTTED",
    "IDENTIFIER",
    "LABEL_AT",
    "NAME",
    "NAME_CHAR",
    "SECTION_NAME",
    "STRING",
    "SYMBOL",
    "TOKEN_KIND",
    "VERSION",
    "LineIndex",
    "Tokens",
    "directive_re",
    "is_dotted_name",
    "mask_comments",
]

#: A section name as the debug sections write it (``.debug_info``, ``.nv.debug_line_sass``).
SECTION_NAME = r"\.[A-Za-z_][\w$.]*"
#: A name a debug section value or label may be: a section name or an identifier.
SYMBOL = rf"(?:{SECTION_NAME}|{IDENTIFIER})"
#: A word that may be a name, as the code scans read them (looser than :data:`IDENTIFIER`:
#: ``_x`` and ``%`` alone too).
NAME = r"[A-Za-z_$%][\w$]*"
#: A character that continues a name (or a dotted instruction or directive word).
NAME_CHAR = r"[\w$.%]"
#: A name with a '.' inside that is not a section name (``__PRETTY_FUNCTION__._Z3foov``).
DOTTED = re.compile(NAME + r"(?:\.[\w$]+)+")
#: A label definition: its name and colon (not ``::``).
LABEL_AT = re.compile(rf"(?:{IDENTIFIER})\s*:(?!:)")
#: A string literal on one line, escapes included.
STRING = r'"(?:[^"\\\n]|\\.)*"'
#: A string or a comment (``//`` to the end of the line, ``/* ... */``).
COMMENT_OR_STRING = re.compile(rf"{STRING}|//[^\n]*|(?s:/\*.*?\*/)")
_STRING_AT = re.compile(STRING)
#: ``.version MAJOR.MINOR``.
VERSION = re.compile(r"\.version\s+(\d+)\.(\d+)")


def directive_re(*names: str) -> re.Pattern[str]:
    """The directives ``.name`` (each of ``names``), not within another token."""
    # The dot comes before the look-behind: a pattern that starts with a look-behind is
    # tried at every offset of the text.
    return re.compile(r"\.(?<![\w$.]\.)(?:" + "|".join(map(re.escape, names)) + r")\b")


def is_dotted_name(name: str) -> bool:
    """A symbol name with a '.' inside that is not a section name: ptxas cannot parse it
    in a debug section (the reader keeps it, with a syntax note)."""
    return DOTTED.fullmatch(name) is not None


@twin("scan")
def mask_comments(text: str, filename: str = "<ptx>") -> str:
    """``text`` with every comment replaced by spaces (newlines kept), strings untouched.

    A string is one line's; a quote that opens none (no closing quote on its line) leaves
    the rest of that line to comments only: any later quote on it is an escaped one."""
    if "/" not in text:
        return text
    find = text.find
    pieces: list[str] = []
    done = 0
    slash, quote = find("/"), find('"')
    while slash >= 0:
        if 0 <= quote < slash:
            m = _STRING_AT.match(text, quote)
            if m is None:
                line_end = find("\n", quote)
                quote = find('"', line_end) if line_end >= 0 else -1
                continue
            pos = m.end()
        else:
            follows = text[slash + 1 : slash + 2]
            if follows == "/":
                end = find("\n", slash)
                end = len(text) if end < 0 else end
                pieces += (text[done:slash], " " * (end - slash))
                done = pos = end
            elif follows == "*":
                end = find("*/", slash + 2)
                if end < 0:
                    raise PtxSyntaxError(
                        "unterminated /* comment", filename=filename, line=text.count("\n", 0, slash) + 1
                    )
                pos = end + 2
                pieces += (text[done:slash], _blank_comment(text[slash:pos]))
                done = pos
            else:
                pos = slash + 1
        if slash < pos:
            slash = find("/", pos)
        if 0 <= quote < pos:
            quote = find('"', pos)
    return "".join(pieces) + text[done:] if pieces else text


def _blank_comment(comment: str) -> str:
    if comment.startswith("/*"):
        return re.sub(r"[^\n]", " ", comment)
    return " " * len(comment)


#: How many scans from the top :class:`LineIndex` counts before it makes its table.
_SCANS = 4


class LineIndex:
    """The 1-based line of each offset of a text, and where each line starts.

    Offsets asked in increasing order (a reader's scan of the text) are counted on from
    the last one, and a few scans may start again from the top; any other question
    makes the table of line starts, once."""

    __slots__ = ("_line", "_pos", "_scans", "_starts", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: list[int] | None = None
        self._pos = 0
        self._line = 1
        self._scans = 1

    def _table(self) -> list[int]:
        if self._starts is None:
            lengths = map(len, self._text.split("\n"))
            starts = list(accumulate(map(add, lengths, repeat(1)), initial=0))
            starts.pop()
            self._starts = starts
        return self._starts

    def line(self, offset: int) -> int:
        """The 1-based line of ``offset``."""
        if self._starts is None and offset < self._pos and self._scans < _SCANS:
            self._pos, self._line, self._scans = 0, 1, self._scans + 1
        if self._starts is None and offset >= self._pos:
            self._line += self._text.count("\n", self._pos, offset)
            self._pos = offset
            return self._line
        return bisect_right(self._table(), offset)

    def start(self, line: int) -> int:
        """The offset where 1-based ``line`` starts."""
        return self._table()[line - 1]

    def span(self, line: int) -> tuple[int, int]:
        """The offsets of 1-based ``line``, its newline not included."""
        start = self.start(line)
        end = self._text.find("\n", start)
        return start, len(self._text) if end < 0 else end


#: The declaration directives, by their word.
DECL_WORDS = ("reg", "local", "shared", "global", "const", "param", "tex", "texref", "samplerref", "surfref")
#: Everything the module scan stops at but labels: a directive word (``_TOKEN_WORD``),
#: a brace or a string.
_TOKEN_WORD = re.compile(
    r"\.(?:section|version|target|address_size|file|entry|func|" + "|".join(DECL_WORDS) + r")\b"
)
_TOKEN = re.compile(_TOKEN_WORD.pattern + r"|[{}]|" + STRING)
#: A token's text -> what it is (a string is not listed).
TOKEN_KIND = {
    ".section": "section",
    ".version": "version",
    ".target": "target",
    ".address_size": "address_size",
    ".file": "file",
    ".entry": "func",
    ".func": "func",
    "{": "open",
    "}": "close",
    **{"." + w: "decl" for w in DECL_WORDS},
}


class Tokens:
    """The tokens the module reader stops at (directive words, braces, strings) in
    comment-masked text, in order. The pattern is tried only where a token may start
    (found with literal searches): a search for the whole pattern tries it at every
    character."""

    __slots__ = ("_i", "_match", "_starts", "_text")

    def __init__(self, masked: str) -> None:
        starts = [m.start() for m in _TOKEN_WORD.finditer(masked)]
        find = masked.find
        for c in '{}"':
            pos = find(c)
            while pos >= 0:
                starts.append(pos)
                pos = find(c, pos + 1)
        starts.sort()
        self._starts = starts
        self._i = 0
        self._text = masked
        self._match = _TOKEN.match

    def next(self, pos: int) -> re.Match[str] | None:
        """The first token at or after ``pos`` (never before the last one returned)."""
        starts, i, text, match = self._starts, self._i, self._text, self._match
        while i < len(starts):
            start = starts[i]
            i += 1
            if start >= pos:
                m = match(text, start)
                if m is not None:
                    self._i = i
                    return m
        self._i = i
        return None
