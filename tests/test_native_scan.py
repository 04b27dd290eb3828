"""The code scan's kernels against their references, :func:`ptxdwarf.ptx.codescan.scan_code`,
:func:`ptxdwarf.ptx.lexer.mask_comments`, :func:`ptxdwarf.ptx.statements.register_spans` and the
statement split of :func:`ptxdwarf.ptx.statements.scan_body`: the
same directives, functions, labels, declarations and prototypes, or a decline where the
reference raises, on generated PTX-like text (comment-masked as the reader gives it, and raw)
and on every PTX file of the fixtures and the corpus; and parse_ptx's first look at a text,
:func:`ptxdwarf.ptx.reader._prescan`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import native_of, same

from ptxdwarf import PtxSyntaxError
from ptxdwarf.ptx.codescan import scan_code
from ptxdwarf.ptx.lexer import DECL_WORDS, LineIndex, mask_comments
from ptxdwarf.ptx.module import TYPE_SIZES
from ptxdwarf.ptx.reader import _prescan
from ptxdwarf.ptx.statements import Stmt, _split, register_spans, register_uses

_PIECES = [
    ".version 7.5",
    ".version 8",
    ".target sm_75",
    ".target sm_52, debug",
    ".target ,",
    ".address_size 64",
    ".address_size 32",
    ".address_size 640",
    '.file 1 "a.cu"',
    '.file 2 "/d" "b.cu", 1700000000, 42',
    ".file x",
    ".visible .entry _Z1kPi(",
    ".param .u64 _Z1kPi_param_0",
    ".param .align 8 .b8 p[24]",
    ")",
    ".func (.param .b32 func_retval0) _Z3addii(",
    ".func g;",
    ".extern .func (.param .b32 r) h(.param .b64 p);",
    ".entry e",
    ".func",
    "{",
    "}",
    ".reg .b32 %r<4>;",
    ".reg .pred %p<2>, %q;",
    ".local .align 8 .b8 __local_depot0[16];",
    ".shared .u32 s[4][];",
    ".global .u32 g = 1;",
    ".const .b8 c[2] = {1, 2};",
    ".global .texref t;",
    ".samplerref sr;",
    "ld.param.u64 %rd1, [_Z1kPi_param_0];",
    "st.local.u32 [%SP+0], %r1;",
    "$L__BB0_1:",
    "L2 :",
    "a::b",
    "_:",
    "%x:",
    ".x:",
    "$:",
    "mov.u32 %r1, 1;",
    "@%p1 bra $L__BB0_1;",
    "ret;",
    ".section .debug_info {",
    ".section .debug_abbrev { .b8 0 }",
    ".section .debug_str { a: .b8 0 }",
    ".section $x",
    ".section",
    ".b8 1, 2",
    "// a comment: {",
    "/* a block { : */",
    "/* unterminated",
    "/*/",
    "*/",
    "/**/",
    "// //",
    '"/*"',
    "/* two\nlines */",
    '"str:{;"',
    '"esc\\"aped"',
    '"unterminated',
    '"ends in a backslash \\',
    '"\\"\\"',
    ".loc 1 2 3",
    "..section",
    ".sectionx",
    ".reg",
    ".param",
    ";",
    ":",
    "=",
    "(",
    "%",
    ".",
    "\\",
]
#: Characters Python counts as blanks that the kernel does not take (nor any non-ASCII text).
_BLANK_CONTROLS = re.compile("[\x1c-\x1f]")
_SEPARATORS = st.sampled_from([" ", "\n", "\t", "", "\r\n", "\x0b", "\x0c", "  \n  ", ", "])
_NOISE = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=3)


_HEADS = [
    ".visible .entry _Z1kPi",
    ".func (.param .b32 func_retval0) _Z3addii",
    ".entry e",
    ".func $f",
    ".func",
]
_PARAMS = [
    "",
    "()",
    "(.param .u64 _Z1kPi_param_0)",
    "(.param .align 8 .b8 p[24], .param .b32 q)",
    "(\n.param .b32 x\n)",
    "(.param .b32 x = 1, , .param .u64 y,)",
    "( x, .reg .b32 %r<2> , .param .align 0 .b8 z[2])",
]
_STATEMENTS = [
    ".reg .b32 %r<4>;",
    ".reg .pred %p<2>, %q;",
    ".local .align 8 .b8 __local_depot0[16];",
    ".shared .u32 s[4][];",
    ".global .u32 g = {1};",
    ".reg .b32 %r<0012>;",
    ".local .align 16 .b8 x[ 4 ];",
    ".reg .align 0 .b8 x;",
    ".reg .align\t4\n.b64 y ;",
    ".shared .v4 .b32 y;",
    ".reg .b32 a, b;",
    ".param .b32 x<2>[3];",
    ".reg .b32 x[];",
    ".reg .b32 x[1]  = 3;",
    ".reg .alignx .b32 z;",
    ".reg .b32 99;",
    ".reg .b32 %r<123456789012345678901>;",
    "ld.param.u64 %rd1, [_Z1kPi_param_0];",
    "$L__BB0_1:",
    "$L__BB0_2 :",
    "L3:\tret;",
    "a::b;",
    "x: y: mov.u32 %r1, %r2;",
    "@%p1 bra $L__BB0_1;",
    ".loc 1 2 3",
    "{ .reg .b32 %inner; inner: }",
    "call.uni (r), f, (p);",
    "// note: a comment {",
    "/* a : block { */",
    '"a string: {";',
]


@st.composite
def _module(draw: st.DrawFn) -> str:
    """A module: header directives, then variables, prototypes and functions with bodies
    (labels, declarations, nested scopes, comments), now and then with random pieces."""
    sep = _SEPARATORS.filter(bool)
    parts = [".version 7.5", ".target sm_75", ".address_size 64", '.file 1 "a.cu"']
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 5))
        if kind == 0:
            parts.append(
                draw(st.sampled_from([".global .u32 g = 1;", ".const .b8 c[2] = {1, 2};", ".func g;"]))
            )
        elif kind == 1:
            parts.append(".section .debug_info { a: .b8 1, 2 }")
        else:
            body = [draw(st.sampled_from(_STATEMENTS)) for _ in range(draw(st.integers(0, 8)))]
            parts.append(draw(st.sampled_from(_HEADS)) + draw(st.sampled_from(_PARAMS)))
            parts.append("{" + draw(sep).join(body) + draw(sep) + "}")
    if draw(st.integers(0, 2)) == 0:
        at = draw(st.integers(0, len(parts)))
        parts.insert(at, draw(st.sampled_from(_PIECES)) if draw(st.booleans()) else draw(_NOISE))
    return "".join(p + draw(sep) for p in parts)


@st.composite
def _text(draw: st.DrawFn) -> str:
    """PTX-like text: pieces of PTX joined by odd whitespace, with now and then a few random
    characters (non-ASCII and control ones included)."""
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 40))):
        parts.append(draw(st.sampled_from(_PIECES)) if draw(st.integers(0, 9)) else draw(_NOISE))
        parts.append(draw(_SEPARATORS))
    return "".join(parts)


def check(text: str) -> None:
    """The kernels give the reference's masking of ``text`` and its scan of ``text``
    comment-masked (where it masks) and as it is, or decline where the reference raises."""
    _same_prescan(text)
    if text.isascii():
        masked = same(mask_comments, text, "t.ptx")
    else:
        assert native_of(mask_comments)(text, "t.ptx") is None
        try:
            masked = mask_comments.reference(text, "t.ptx")
        except PtxSyntaxError:
            masked = None
    for one in (text,) if masked is None or masked == text else (masked, text):
        if one.isascii() and _BLANK_CONTROLS.search(one) is None:
            same(scan_code, one, "t.ptx", LineIndex(one))
        else:
            assert native_of(scan_code)(one, "t.ptx", LineIndex(one)) is None


@given(_module())
@settings(max_examples=300, deadline=None)
def test_generated_modules(text: str) -> None:
    check(text)


@given(_text())
@settings(max_examples=300, deadline=None)
def test_generated_text(text: str) -> None:
    check(text)


@given(st.one_of(_module(), _text()), st.data())
@settings(max_examples=200, deadline=None)
def test_truncated_and_mutated(text: str, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(text)))
    check(text[:cut])
    if text:
        at = data.draw(st.integers(0, len(text) - 1))
        check(
            text[:at]
            + data.draw(st.sampled_from(["{", "}", ":", ";", '"', "\x1c", "é", "\0"]))
            + text[at + 1 :]
        )


@given(st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_random_text(text: str) -> None:
    check(text)


def test_every_state_space_and_type() -> None:
    """The kernel knows the declaration words and the types of the reference."""
    for word in DECL_WORDS:
        for type_ in [*sorted(TYPE_SIZES), ".v2"]:
            for name in ("x", "x[4]", "%r<4>"):
                text = f".entry f {{ .{word} {type_} {name}; }} .{word} .align 8 {type_} {name} = 1;"
                found = same(scan_code, text, "t.ptx", LineIndex(text))
                assert found[1][0][10] and found[2]


def test_the_kernel_declines_what_it_does_not_take() -> None:
    kernel = native_of(scan_code)
    for text in ("}", ".func f() {", ".reg .b32 %r", ".version x"):
        assert kernel(text, "t.ptx", LineIndex(text)) is None
        with pytest.raises(PtxSyntaxError):
            scan_code.reference(text, "t.ptx", LineIndex(text))
    for text in (".version 7.5\n\u00e9", ".version 7.5\x1c"):  # the reference takes these
        assert kernel(text, "t.ptx", LineIndex(text)) is None


def _same_prescan(text: str) -> None:
    """The first look of parse_ptx (:func:`~ptxdwarf.ptx.reader._prescan`): the kernel's, or a
    decline for text that is not ASCII."""
    if text.isascii():
        same(_prescan, text)
    else:
        assert native_of(_prescan)(text) is None


_LOOKED_FOR = st.sampled_from(
    [
        ".section",
        ".section\t.debug_info",
        ".sections",
        ".section_x",
        ".file",
        ".file\t1",
        ".filed",
        ".file9",
        "@@DWARF",
        "@@DWAR",
        "@@@DWARF",
        "\n",
        "\r\n",
        " ",
        "\t",
        "\x0b",
        "\x0c",
        "\x1c",
        "\x1f",
        "\x00",
        "\x7f",
        "{",
        "}",
        "/",
        "*",
        "/*",
        "x",
        ".",
        "é",
    ]
)


@given(st.lists(_LOOKED_FOR, max_size=30).map("".join))
@settings(max_examples=400, deadline=None)
def test_the_first_look_of_generated_text(text: str) -> None:
    _same_prescan(text)
    cut = len(text) // 2
    _same_prescan(text[:cut])


def test_the_first_look_finds_what_the_reference_finds() -> None:
    text = '.section .a {}\n \t.file 1 "x"\nx .file\n\x1c.section\n.sections\n@@DWARF .b8 1'
    marks, sections, files, dwarf = same(_prescan, text)
    assert marks == b"{}\x1c" and dwarf
    assert sections == [0, text.index("\x1c.section") + 1] and files == [text.index(".file")]


_FILES = sorted(FIXTURES.rglob("*.ptx"))


@pytest.mark.slow
@pytest.mark.parametrize("path", _FILES, ids=[str(p.relative_to(FIXTURES)) for p in _FILES])
def test_fixtures_and_corpus(path: Path) -> None:
    check(path.read_text(encoding="utf-8", errors="surrogateescape"))


# --- register_spans ---------------------------------------------------------------------

_SPAN_PIECES = st.sampled_from(
    [
        ".reg",
        ".reg ",
        ".regs",
        ".reg$x",
        ".reg.b32",
        ".reg .pred %p<3>;",
        "%r1",
        "%r",
        "%",
        "%%",
        "%tid.x",
        "%rd12",
        "$L__BB0_1",
        "bra",
        "brx",
        "call",
        "bra.uni",
        "calls",
        "x",
        "_",
        "9",
        "12ab",
        ";",
        ",",
        " ",
        "\n",
        "{",
        "}",
        ".",
        "mov.u32",
        "é",
        "\t",
    ]
)


def check_spans(text: str, start: int, end: int) -> None:
    """register_spans' and register_uses' kernels give the references' spans and uses of ASCII
    text, and decline other."""
    if text.isascii():
        spans = same(register_spans, text, start, end)
        uses = same(register_uses, text, start, end)
        assert uses[0].split("\0")[1:-1] == list(spans[0]) and uses[1:] == spans[1:]
    else:
        assert native_of(register_spans)(text, start, end) is None
        assert native_of(register_uses)(text, start, end) is None


@given(st.lists(_SPAN_PIECES, max_size=40).map("".join), st.integers(-50, 400), st.integers(-50, 400))
@settings(max_examples=400, deadline=None)
def test_register_spans_of_generated_code(text: str, start: int, end: int) -> None:
    check_spans(text, 0, len(text))
    check_spans(text, start, end)


@given(st.text(alphabet=st.sampled_from(list(".reg%$;_bracl1 \n")), max_size=80))
@settings(max_examples=300, deadline=None)
def test_register_spans_of_random_text(text: str) -> None:
    check_spans(text, 0, len(text))


def _fixture_bodies() -> Iterator[tuple[str, int, int]]:
    """(comment-masked text, start, end) of every function body of every PTX file under
    fixtures/ (the corpus included) that the reader takes."""
    import ptxdwarf.ptx

    for path in _FILES:
        try:
            module = ptxdwarf.ptx.parse_ptx(
                path.read_text(encoding="utf-8", errors="surrogateescape"), str(path)
            )
            functions = module.functions
        except PtxSyntaxError:
            continue
        for f in functions:
            if f.body_start >= 0:
                yield module.masked, f.body_start, f.body_end


def test_register_spans_of_every_fixture_function() -> None:
    """Every function body of every PTX file under fixtures/ (the corpus included)."""
    bodies = 0
    for masked, start, end in _fixture_bodies():
        check_spans(masked, start, end)
        bodies += 1
    assert bodies > 500


# --- the statements of a body (scan_body) ------------------------------------------------

_STATEMENT_PIECES = st.sampled_from(
    [
        "$L__BB0_1:",
        "$L__BB0_1 :",
        "L2\t:",
        "a::b",
        "a: :",
        "x:",
        "_:",
        "_x:",
        "%p:",
        "$:",
        "9:",
        ":",
        ".loc 1 2 3",
        ".loc\t1 0 0",
        ".locx",
        '.file 1 "a.cu"',
        ".files",
        "@@DWARF .b8 1",
        "@",
        "@%p1 bra $L__BB0_1;",
        "mov.u32 %r1, 1;",
        ".reg .b32 %r<4>;",
        "ret;",
        '"a;b"',
        '"',
        '";',
        ";",
        ";;",
        "{",
        "}",
        " ",
        "\n",
        "\t",
        "\x1c",
        "\x0b",
        "é",
    ]
)


def check_split(text: str, start: int, end: int, labels: bool, until: int | None) -> None:
    """The split's kernel gives the reference's statements of a body of ASCII text, and
    declines other text and bounds outside it."""
    if text.isascii() and 0 <= start <= end <= len(text):
        got = same(_split, Stmt, text, start, end, labels, until)
        assert all(type(s) is Stmt for s in got)
    else:
        assert native_of(_split)(Stmt, text, start, end, labels, until) is None


@given(
    st.lists(_STATEMENT_PIECES, max_size=40).map("".join),
    st.integers(-5, 400),
    st.integers(-5, 400),
    st.booleans(),
    st.none() | st.integers(-5, 400),
)
@settings(max_examples=500, deadline=None)
def test_statements_of_generated_code(
    text: str, start: int, end: int, labels: bool, until: int | None
) -> None:
    check_split(text, 0, len(text), labels, None)
    check_split(text, start, end, labels, until)


@given(st.text(alphabet=st.sampled_from(list('$L_x9:;.loc@"{} \n\x1c')), max_size=80), st.booleans())
@settings(max_examples=300, deadline=None)
def test_statements_of_random_text(text: str, labels: bool) -> None:
    check_split(text, 0, len(text), labels, None)
    check_split(text, 0, len(text), labels, len(text) // 2)


def test_statements_of_every_fixture_function() -> None:
    """Every function body of every PTX file under fixtures/ (the corpus included), whole and
    up to a place inside it, with labels and without."""
    bodies = 0
    for masked, start, end in _fixture_bodies():
        for labels in (True, False):
            check_split(masked, start, end, labels, None)
        check_split(masked, start, end, True, (start + end) // 2)
        bodies += 1
    assert bodies > 500


def test_statements_of_a_class_that_is_not_stmt_are_made_by_the_reference() -> None:
    """A class without Stmt's four slots is declined (the reference calls it)."""

    class Other:
        def __init__(self, *values: object) -> None:
            self.values = values

    assert native_of(_split)(Other, "ret;", 0, 4, True, None) is None
