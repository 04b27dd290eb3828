"""The text-edit engine (ptxdwarf.ptx.edits): edits at offsets of the original text,
checked not to overlap, applied in one pass."""

from __future__ import annotations

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxdwarf
import ptxdwarf.ptx
from ptxdwarf.errors import PtxDwarfError
from ptxdwarf.ptx.edits import EditOverlapError, TextEdits


def test_insert_replace_delete() -> None:
    edits = TextEdits("abcdef")
    edits.insert(0, ">")
    edits.replace(1, 3, "BC")
    edits.delete(4, 5)
    edits.insert(6, "<")
    assert edits.apply() == ">aBCdf<"
    assert edits.text == "abcdef"


def test_inserts_at_one_offset_keep_their_order_and_precede_a_replacement() -> None:
    edits = TextEdits("xyz")
    edits.replace(1, 2, "Y")
    edits.insert(1, "1")
    edits.insert(1, "2")
    edits.insert(2, "3")
    assert edits.apply() == "x12Y3z"


def test_no_edits_is_the_text() -> None:
    assert TextEdits("same").apply() == "same"


@pytest.mark.parametrize(
    ("first", "second"),
    [((1, 4), (3, 5)), ((1, 4), (1, 4)), ((1, 4), (2, 2)), ((0, 6), (2, 3))],
)
def test_overlapping_edits_are_an_error(first: tuple[int, int], second: tuple[int, int]) -> None:
    edits = TextEdits("abcdefgh", where="k.ptx")
    edits.replace(*first, "X")
    edits.replace(*second, "Y")
    with pytest.raises(EditOverlapError) as caught:
        edits.apply()
    assert isinstance(caught.value, PtxDwarfError)
    message = str(caught.value)
    assert message.startswith("k.ptx: overlapping edits:") and "\n" not in message


def test_an_edit_outside_the_text_is_an_error() -> None:
    edits = TextEdits("abc")
    with pytest.raises(EditOverlapError, match="outside the text"):
        edits.delete(2, 4)


def test_last_char_after() -> None:
    edits = TextEdits("0123456789")
    edits.replace(2, 5, "ab")
    edits.insert(7, "+")
    edits.delete(8, 10)
    assert [edits.last_char_after(k) for k in (0, 3, 5, 7, 8, 9, 10)] == ["7", "7", "7", "7", "", "", ""]
    edits = TextEdits("0123")
    edits.replace(1, 4, "xy")
    assert [edits.last_char_after(k) for k in (0, 1, 2, 4)] == ["y", "y", "", ""]


def _naive(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Edits made one by one from the end of the text; inserts at one offset in their order."""
    keyed = sorted(((s, e, i, new) for i, (s, e, new) in enumerate(edits)), reverse=True)
    for s, e, _, new in keyed:
        text = text[:s] + new + text[e:]
    return text


def _naive_overlap(edits: list[tuple[int, int, str]]) -> bool:
    """Some pair shares a character, or one inserts strictly inside the other's range."""
    for i, (a, b, _) in enumerate(edits):
        for c, d, _ in edits[i + 1 :]:
            if max(a, c) < min(b, d):
                return True
            if (c == d and a < c < b) or (a == b and c < a < d):
                return True
    return False


@st.composite
def _text_and_edits(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, str]]]:
    text = draw(st.text(alphabet="ab\n", max_size=30))
    n = len(text)
    edit = st.tuples(st.integers(0, n), st.integers(0, 4), st.text(alphabet="XY\n", max_size=3)).map(
        lambda t: (t[0], min(n, t[0] + t[1]), t[2])
    )
    return text, draw(st.lists(edit, max_size=8))


@settings(max_examples=400, deadline=None)
@given(_text_and_edits())
def test_same_as_edits_made_one_by_one(case: tuple[str, list[tuple[int, int, str]]]) -> None:
    text, edits = case
    engine = TextEdits(text)
    for start, end, new in edits:
        engine.replace(start, end, new)
    if _naive_overlap(edits):
        with pytest.raises(EditOverlapError):
            engine.apply()
    else:
        assert engine.apply() == _naive(text, edits)
        for offset in range(len(text) + 1):
            tail = _naive(
                text[offset:], [(s - offset, e - offset, new) for s, e, new in edits if s >= offset]
            )
            straddled = [e - offset for s, e, _ in edits if s < offset < e]
            if straddled:
                tail = tail[max(straddled) :]
            assert engine.last_char_after(offset) == tail[-1:]


def test_new_lines_end_as_the_text_does() -> None:
    """In a CRLF text, the lines an edit adds end in CRLF too (a rewrite of a Windows file
    stays one convention); in an LF text they stay LF."""
    edits = TextEdits("a\r\nb\r\n")
    edits.insert(3, "x\ny\r\n")
    assert edits.apply() == "a\r\nx\r\ny\r\nb\r\n"
    edits = TextEdits("a\nb\n")
    edits.insert(2, "x\n")
    assert edits.apply() == "a\nx\nb\n"


def test_rewrite_of_a_crlf_file_is_all_crlf() -> None:
    text = (ROOT / "fixtures" / "spec" / "example.ptx").read_text().replace("\n", "\r\n")
    for style in ("nvcc", "readable", "compact"):
        out = ptxdwarf.rewrite(text, style=style)
        assert out.count("\r\n") == out.count("\n"), style
