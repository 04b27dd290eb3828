"""The section-text lexer's kernel against its reference, :func:`ptxdwarf.ptx.sections.bulk_pieces`:
the same pieces where the reference reads a body, a decline where it leaves the body to the line
reader; and through :class:`SectionParser`, the same image or the same error as the line reader."""

from __future__ import annotations

import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import native_of, same

import ptxdwarf.files
import ptxdwarf.ptx
from ptxdwarf import PtxSyntaxError
from ptxdwarf.dwarf.image import Reloc, Symbol
from ptxdwarf.ptx.sections import Pieces, SectionParser, bulk_pieces, bulk_relocs

_WIDTHS = {".b8": 1, ".b16": 2, ".b32": 4, ".b64": 8}
_SYMBOLS = st.sampled_from(
    [
        ".debug_abbrev",
        ".debug_loc+8",
        "$L__func_begin0",
        "func+0",
        "_Z4testPi_param_0+4294967295",
        "%r1",
        "a.b",
    ]
)


def check(body: str) -> None:
    """The kernel gives the reference's pieces, declines where the reference does, and the
    section's image (or error) is the line reader's."""
    pieces = bulk_pieces.reference(body)
    if pieces is not None:
        same(bulk_pieces, body)
        check_relocs(pieces)
    else:
        assert native_of(bulk_pieces)(body) is None, "the kernel takes a body the reference leaves"
    try:
        expected = SectionParser(".debug_info", "t.ptx").parse_lines(body, 7)
    except PtxSyntaxError as error:
        with pytest.raises(PtxSyntaxError) as raised:
            SectionParser(".debug_info", "t.ptx").parse(body, 7)
        assert (str(raised.value), raised.value.line) == (str(error), error.line)
        return
    parser = SectionParser(".debug_info", "t.ptx")
    image = parser.parse(body, 7)
    image.ensure_lines()
    assert image == expected


def _relocs_shape(relocs: list[Reloc]) -> list[tuple[type, int, int, type, str, int, int | None, int]]:
    """Each relocation by value, with which of the list's symbols it shares (by identity)."""
    first: dict[int, int] = {}
    return [
        (
            type(r),
            r.offset,
            r.size,
            type(r.symbol),
            r.symbol.name,
            r.symbol.addend,
            r.symbol.value,
            first.setdefault(id(r.symbol), i),
        )
        for i, r in enumerate(relocs)
    ]


def check_relocs(pieces: Pieces) -> None:
    """bulk_relocs' kernel gives the reference's relocations of ``pieces``, sharing a symbol
    where the reference does."""
    _, offsets, sizes, texts, distinct, _ = pieces
    args = (Symbol, Reloc, offsets, sizes, texts, distinct)
    got = native_of(bulk_relocs)(*args)
    assert got is not None
    assert _relocs_shape(got) == _relocs_shape(bulk_relocs.reference(*args))


def test_bulk_relocs_declines_what_it_cannot_make() -> None:
    """Arguments the kernel does not take give None (the reference then runs)."""
    kernel = native_of(bulk_relocs)
    assert kernel(Symbol, Reloc, [0], b"\x04", ["a+x"], {"a+x": None}) is None
    assert kernel(Symbol, Reloc, [0], b"\x04", ["a"], {"b": None}) is None
    assert kernel(Symbol, Reloc, [0, 4], b"\x04", ["a"], {"a": None}) is None
    assert kernel(slice, Reloc, [0], b"\x04", ["a"], {"a": None}) is None
    assert kernel(Symbol, tuple, [0], b"\x04", ["a"], {"a": None}) is None

    class Loose(Symbol):  # instances with a __dict__, which the kernel does not make
        pass

    assert kernel(Loose, Reloc, [0], b"\x04", ["a"], {"a": None}) is None
    made = kernel(Symbol, Reloc, [0], b"\x04", ["a+3"], {"a+3": None})[0].symbol
    assert type(made) is Symbol and (made.name, made.addend, made.value) == ("a", 3, None)


@st.composite
def _value(draw: st.DrawFn, directive: str) -> str:
    width = _WIDTHS[directive]
    if width >= 4 and draw(st.integers(0, 4)) == 0:
        return draw(_SYMBOLS)
    return str(draw(st.integers(0, (1 << (8 * width)) - 1)))


@st.composite
def _line(draw: st.DrawFn, plain: bool) -> str:
    """A directive and its values; ``plain``: as producers write it, else with random spacing
    and comments."""
    directive = draw(st.sampled_from(sorted(_WIDTHS)))
    count = draw(st.integers(1, 6)) if directive == ".b8" else 1
    values = [draw(_value(directive)) for _ in range(count)]
    if plain:
        return directive + " " + ",".join(values)
    comma = draw(st.sampled_from([",", ",", ", "]))
    space = draw(st.sampled_from([" ", " ", " ", "\t", "  "]))
    line = directive + space + comma.join(values)
    if draw(st.integers(0, 9)) == 0:
        line += draw(st.sampled_from([" // note", "\t/* c */"]))
    return draw(st.sampled_from(["", "", "\t", " "])) + line + draw(st.sampled_from(["", "", " ", "\t"]))


@st.composite
def _body(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_line(draw(st.booleans())), min_size=1, max_size=30))
    if draw(st.integers(0, 5)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["L1:", "$L__x:", "", "  "])))
    return (
        draw(st.sampled_from(["\n", "\n\t", "", " \n"]))
        + "\n".join(lines)
        + draw(st.sampled_from(["\n", "", "\n\t"]))
    )


@settings(max_examples=250, deadline=None)
@given(_body())
def test_valid_bodies(body: str) -> None:
    check(body)


_GARBAGE = st.sampled_from(
    [
        "-",
        ",",
        ",,",
        "x",
        ":",
        ";",
        "0x10",
        "017",
        "00",
        "1U",
        "256",
        "65536",
        "4294967296",
        "18446744073709551616",
        "99999999999999999999999999",
        "9" * 5000,
        "+1",
        "a+",
        "a+01",
        "a+12345678901",
        ".b8",
        ".b64",
        ".b8+1",
        ".byte",
        "1:",
        "L:",
        "L: L:",
        "a-b",
        "\r",
        "\x00",
        "\x01",
        "\x04",
        "\x0b",
        "\x1c",
        "\xa0",
        "é",
        " ",
        "\n",
        "/*",
        "//",
    ]
)


@settings(max_examples=250, deadline=None)
@given(_body(), st.data())
def test_broken_bodies(body: str, data: st.DataObject) -> None:
    """Truncations, insertions of garbage, huge literals and bad labels."""
    at = data.draw(st.integers(0, len(body)))
    if data.draw(st.booleans()):
        broken = body[:at]
    else:
        broken = body[:at] + data.draw(_GARBAGE) + body[at + data.draw(st.integers(0, 3)) :]
    check(broken)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(".b8163264 \t\n,0123456789+$_aLx:-\r")), max_size=80))
def test_random_text(body: str) -> None:
    check(body)


@pytest.mark.parametrize(
    "body",
    [
        "",
        " \n\t",
        "\n.b32 %r1\n.b64 $L__x+1\n.b32 .debug_a.b$c+0\n.b32 _\n.b32 x\n",
        "\n.b32 $\n",
        "\n.b64 %+1\n",
        "\n.b32 _1\n.b32 .\n",
        "\n.b32 .b8\n",
        "\n.b64 .b64+1\n",
        "\n.b32 .byte\n",
        "\n.b8 1\x012\n",
        "\xa0\n.b8 1\n",
        "\n.b64 18446744073709551615\n.b64 4294967296\n.b64 4294967295\n",
        "\n.b64 18446744073709551616\n",
        "\n.b8 255,0,1\n.b16 65535\n.b32 4294967295\n",
        "\n.b8 256\n",
        "\n.b32 a+9999999999\n.b64 b+0\n",
        "\n\t.b8 1 \n  .b8 2\t\n",
        "\n.b8 1\n\n.b8 2\n",
    ],
)
def test_edges(body: str) -> None:
    check(body)


def _debug_bodies() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(FIXTURES.rglob("*.ptx")):
        text = ptxdwarf.files.load_text(path)
        try:
            module = ptxdwarf.ptx.parse_ptx(text)
        except PtxSyntaxError:
            continue
        for block in module.sections:
            if not block.dwarf_lines:
                body = text[text.index("{", block.start) + 1 : block.end - 1]
                found.append((f"{path.relative_to(FIXTURES)}:{block.name}", block.name, body))
    return found


def test_every_fixture_section() -> None:
    taken = 0
    for where, _, body in _debug_bodies():
        try:
            check(body)
        except AssertionError as error:
            raise AssertionError(where) from error
        taken += native_of(bulk_pieces)(body) is not None
    assert taken > 100
