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

from dataclasses import dataclass

from ..errors import PtxDwarfError

__all__ = ["Edit", "EditOverlapError", "TextEdits"]


class EditOverlapError(PtxDwarfError):
    """Two edits of the same text that overlap."""


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` of the original by ``new`` (``start == end``: insert)."""

    start: int
    end: int
    new: str

    def describe(self) -> str:
        """The edit in words, for error messages."""
        if self.start == self.end:
            return f"insert {self.new[:20]!r} at {self.start}"
        verb = "delete" if not self.new else f"replace by {self.new[:20]!r}"
        return f"{verb} [{self.start}:{self.end}]"


class TextEdits:
    """The edits of one text, applied all at once by :meth:`apply`."""

    def __init__(self, text: str, *, where: str | None = None) -> None:
        self.text = text
        self.where = where
        self._edits: list[Edit] = []

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
        self._edits.append(Edit(start, end, new))

    def ordered(self) -> list[Edit]:
        """The edits in the order they apply, checked not to overlap."""
        order = sorted(range(len(self._edits)), key=lambda i: (self._edits[i].start, self._edits[i].end, i))
        edits = [self._edits[i] for i in order]
        for before, after in zip(edits, edits[1:]):
            if after.start < before.end:
                raise EditOverlapError(
                    f"overlapping edits: {before.describe()} and {after.describe()}", where=self.where
                )
        return edits

    def apply(self) -> str:
        """The text with every edit made."""
        return self.text_after(0)

    def text_after(self, offset: int) -> str:
        """The edited text from the original ``offset`` on: edits that start there or later
        are made, the rest of an edit that starts earlier is left out."""
        text = self.text
        pieces: list[str] = []
        pos = offset
        for e in self.ordered():
            if e.start < offset:
                pos = max(pos, e.end)
                continue
            pieces.append(text[pos : e.start])
            pieces.append(e.new)
            pos = e.end
        pieces.append(text[pos:])
        return "".join(pieces)
