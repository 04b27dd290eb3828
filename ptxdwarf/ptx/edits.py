"""Edits to a text at offsets of the original, applied together in one pass.

:class:`TextEdits` collects insertions, replacements and deletions, each given by
offsets into the original text, and :meth:`TextEdits.apply` makes the edited text in
time linear in its size. Edits may touch but not overlap: two edits overlap when the
ranges they replace share a character, or one inserts strictly inside the range the
other replaces (:class:`EditOverlapError` names both). Insertions at the same offset
come out in the order they were made, and before a replacement or deletion that
starts there.
"""

from __future__ import annotations

import bisect

from ..errors import PtxDwarfError

__all__ = ["EditOverlapError", "TextEdits"]


class EditOverlapError(PtxDwarfError):
    """Two edits of the same text that overlap."""


def _describe(start: int, end: int, new: str) -> str:
    """An edit in words, for error messages."""
    if start == end:
        return f"insert {new[:20]!r} at {start}"
    verb = "delete" if not new else f"replace by {new[:20]!r}"
    return f"{verb} [{start}:{end}]"


class TextEdits:
    """The edits of one text, applied all at once by :meth:`apply`."""

    def __init__(self, text: str, *, where: str | None = None) -> None:
        self.text = text
        self.where = where
        # (start, end, sequence number, new text): sorted, the order the edits apply in.
        self._edits: list[tuple[int, int, int, str]] = []
        self._ordered: list[tuple[int, int, int, str]] | None = None

    def __len__(self) -> int:
        return len(self._edits)

    def insert(self, at: int, new: str) -> None:
        """Insert ``new`` before the original character at ``at``."""
        self.replace(at, at, new)

    def delete(self, start: int, end: int) -> None:
        """Remove ``text[start:end]``."""
        self.replace(start, end, "")

    def replace(self, start: int, end: int, new: str) -> None:
        """Replace ``text[start:end]`` by ``new``."""
        if not 0 <= start <= end <= len(self.text):
            raise EditOverlapError(
                f"edit [{start}:{end}] is outside the text (length {len(self.text)})", where=self.where
            )
        self._edits.append((start, end, len(self._edits), new))
        self._ordered = None

    def _checked(self) -> list[tuple[int, int, int, str]]:
        """The edits in the order they apply, checked not to overlap."""
        if self._ordered is None:
            edits = sorted(self._edits)
            end = 0
            for i, (start, stop, _, _) in enumerate(edits):
                if start < end:
                    before, after = edits[i - 1], edits[i]
                    raise EditOverlapError(
                        f"overlapping edits: {_describe(before[0], before[1], before[3])} and "
                        f"{_describe(after[0], after[1], after[3])}",
                        where=self.where,
                    )
                end = stop
            self._ordered = edits
        return self._ordered

    def apply(self) -> str:
        """The text with every edit made; new lines end as most lines of the text do (CRLF
        or LF)."""
        text = self.text
        crlf = text.count("\r\n") * 2 > text.count("\n")
        pieces: list[str] = []
        pos = 0
        for start, end, _, new in self._checked():
            pieces.append(text[pos:start])
            pieces.append(new.replace("\r\n", "\n").replace("\n", "\r\n") if crlf else new)
            pos = end
        pieces.append(text[pos:])
        return "".join(pieces)

    def last_char_after(self, offset: int) -> str:
        """The last character of the edited text from the original ``offset`` on ("" when
        that is empty): edits that start there or later are made, the rest of an edit
        that starts earlier is left out."""
        edits = self._checked()
        first = bisect.bisect_left(edits, (offset,))
        floor = offset if first == 0 else max(offset, edits[first - 1][1])
        end = len(self.text)
        for i in range(len(edits) - 1, first - 1, -1):
            start, stop, _, new = edits[i]
            if stop < end:
                return self.text[end - 1]
            if new:
                return new[-1]
            end = start
        return self.text[end - 1] if floor < end else ""
