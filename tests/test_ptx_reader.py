"""The PTX reader: debug-section grammar and the module directives around it."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

import ptxdwarf
import ptxdwarf.dwarf
import ptxdwarf.files
import ptxdwarf.ptx
from ptxdwarf import PtxSyntaxError
from ptxdwarf.cuda.ptxas import Ptxas
from ptxdwarf.dwarf import Reloc, Symbol

HEAD = ".version 7.5\n.target sm_75, debug\n.address_size 64\n"


def image(body: str, name: str = ".debug_info") -> ptxdwarf.dwarf.SectionImage:
    return ptxdwarf.ptx.parse_ptx(HEAD + body).images()[name]


@pytest.mark.parametrize(
    "body",
    [
        ".section .debug_info {\n.b8 1, 2, 3\n}\n",
        ".section .debug_info\n{\n.b8 1,2,3\n}\n",
        "\t.section\t.debug_info\n\t{\n.b8 1\n.b8 2\n.b8 3\n\t}\n",
        ".section .debug_info { .b8 1, 2, 3 }\n",
        ".section .debug_info {\n.b8 1,\n 2,\n 3\n}\n",
        ".section .debug_info {\n.b8 0x1, 0X2, 3 // comment\n}\n",
        ".section .debug_info {\n/* a\n comment */ .b8 1 .b8 2\n.byte 3\n}\n",
        ".section .debug_info {\n.b8 1, 2\n, 3\n}\n",
        ".section .debug_info {\n.b16 513\n.b8 3\n}\n",
    ],
)
def test_layouts_of_the_same_bytes(body: str) -> None:
    assert image(body).data == b"\x01\x02\x03"


def test_widths_negative_hex_octal_binary_aliases() -> None:
    img = image(
        ".section .debug_info {\n.b8 -1, 255\n.b16 -2\n.b32 0xdeadbeef\n.b64 -1\n.b8 017, 0b101, 7U\n.quad 5\n.4byte 6\n}\n"
    )
    assert img.data == (
        b"\xff\xff"
        + b"\xfe\xff"
        + bytes.fromhex("efbeadde")
        + b"\xff" * 8
        + bytes([15, 5, 7])
        + (5).to_bytes(8, "little")
        + (6).to_bytes(4, "little")
    )


def test_symbols_labels_and_differences() -> None:
    body = (
        ".section .debug_str {\n$L__str0:\n.b8 97, 0\n$L__str1: .b8 98, 0\n}\n"
        ".section .debug_info {\n"
        "$L__start:\n"
        ".b32 $L__end-$L__start\n"
        ".b32 .debug_abbrev\n"
        ".b64 func_begin0\n"
        ".b64 _Z4testPi_param_0+8\n"
        ".b32 $L__str1\n"
        ".b32 .debug_str+2\n"
        "$L__end:\n"
        "}\n"
    )
    images = ptxdwarf.ptx.parse_ptx(HEAD + body).images()
    info = images[".debug_info"]
    assert info.data[:4] == (32).to_bytes(4, "little")
    assert info.relocs == [
        Reloc(4, 4, Symbol(".debug_abbrev")),
        Reloc(8, 8, Symbol("func_begin0")),
        Reloc(16, 8, Symbol("_Z4testPi_param_0", 8)),
        Reloc(24, 4, Symbol("$L__str1")),
        Reloc(28, 4, Symbol(".debug_str", 2)),
    ]
    assert info.labels == {"$L__start": 0, "$L__end": 32}
    assert images[".debug_str"].labels == {"$L__str0": 0, "$L__str1": 2}


def test_empty_sections_and_repeated_sections() -> None:
    module = ptxdwarf.ptx.parse_ptx(
        HEAD + ".section .debug_loc { }\n.section .debug_info {\n.b8 1\n}\n.section .debug_info {\n.b8 2\n}\n"
    )
    images = module.images()
    assert images[".debug_loc"].data == b""
    assert images[".debug_info"].data == b"\x01\x02"


def test_module_directives() -> None:
    text = (
        ".version 8.5\n.target sm_80, debug\n.address_size 64\n"
        ".visible .func (.param .b32 r) _Z3fooii(.param .b32 a)\n{\n.reg .b32 %r<3>;\n$L__func_begin0:\nret;\n$L__func_end0:\n}\n"
        ".extern .func bar(.param .b32 x);\n"
        ".visible .entry k(.param .u64 p)\n{\n{ // callseq\n}\nret;\n}\n"
        '.file 1 "/a/b.cu"\n.file 2 "/usr" "x.h"\n'
    )
    module = ptxdwarf.ptx.parse_ptx(text, "m.ptx")
    assert module.version == (8, 5)
    assert module.target == ["sm_80", "debug"] and module.has_debug_target
    assert module.address_size == 64
    assert [(f.name, f.kind) for f in module.functions] == [("_Z3fooii", "func"), ("k", "entry")]
    assert set(module.functions[0].labels) == {"$L__func_begin0", "$L__func_end0"}
    assert module.function_of_label("$L__func_end0").name == "_Z3fooii"  # type: ignore[union-attr]  # a None here fails the test, as it should
    assert [(f.index, f.path, f.directory) for f in module.files] == [
        (1, "/a/b.cu", None),
        (2, "x.h", "/usr"),
    ]
    assert module.files[1].full_path == "/usr/x.h"


@pytest.mark.parametrize(
    "body,line,fragment",
    [
        (".section .debug_info {\n.b8 256\n}\n", 5, "does not fit .b8"),
        (".section .debug_info {\n.b8 -129\n}\n", 5, "does not fit .b8"),
        (".section .debug_info {\n.b16 65536\n}\n", 5, "does not fit .b16"),
        (".section .debug_info {\n.b32 4294967296\n}\n", 5, "does not fit .b32"),
        (".section .debug_info {\n.b8 1\n.b7 2\n}\n", 6, "unexpected"),
        (".section .debug_info {\n.b8 1;\n}\n", 5, "';' is not allowed"),
        (".section .debug_info {\n.b8 1\n2\n}\n", 6, "unexpected"),
        (".section .debug_info {\n.b8 " + "9" * 5000 + "\n}\n", 5, "does not fit .b8"),
        (".section .debug_info {\n.b8 foo\n}\n", 5, "a label needs .b32 or .b64"),
        (".section .debug_info {\n.b8 1,,2\n}\n", 5, "empty value"),
        (".section .debug_info {\n.b8 1,\n}\n", 6, "ends with a comma"),
        (".section .debug_info {\n.b32 a-b\n}\n", 5, "is not a label of this section"),
        (".section .debug_info {\nx:\nx:\n.b8 1\n}\n", 6, "defined twice"),
        (".section .debug_info {\n.b8 1\n", 4, "never closed"),
        (".section .debug_info\n.b8 1\n}\n", 4, "expected {"),
        ("}\n", 4, "unmatched }"),
        ("/* open\n", 4, "unterminated /* comment"),
    ],
)
def test_errors_name_file_and_line(body: str, line: int, fragment: str) -> None:
    with pytest.raises(PtxSyntaxError) as err:
        ptxdwarf.ptx.parse_ptx(HEAD + body, "bad.ptx").read_sections()
    assert err.value.line == line
    assert str(err.value).startswith(f"bad.ptx:{line}: ")
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_empty_file() -> None:
    with pytest.raises(PtxSyntaxError, match="empty"):
        ptxdwarf.ptx.parse_ptx("  \n", "e.ptx")


def test_decode_error_names_the_ptx_line() -> None:
    body = ".section .debug_abbrev {\n.b8 1, 17, 0, 3, 8, 0, 0, 0\n}\n.section .debug_info {\n.b32 9\n.b8 2, 0\n.b32 .debug_abbrev\n.b8 8\n.b8 1\n.b8 97, 98\n}\n"
    with pytest.raises(ptxdwarf.DwarfError) as err:
        ptxdwarf.read(text=HEAD + body, filename="s.ptx")
    message = str(err.value)
    assert message.startswith("s.ptx:12 (.debug_info+0xb)")
    assert "runs past the end of its unit" in message


# --- the bulk reader agrees with the line-by-line one -------------------------

from hypothesis import given, settings
from hypothesis import strategies as st

from ptxdwarf.ptx import sections as _ptx

_VALUE = {
    ".b8": st.integers(0, 255).map(str),
    ".b16": st.integers(0, 0xFFFF).map(str),
    ".b32": st.one_of(
        st.integers(0, 0xFFFFFFFF).map(str), st.sampled_from(["$L__a", ".debug_loc+8", "sym", "x+3"])
    ),
    ".b64": st.one_of(
        st.integers(0, 2**64 - 1).map(str),
        st.sampled_from(["$L__func_begin0", "_Z4testPi_param_0", "0x10", "017"]),
    ),
}


@st.composite
def _simple_line(draw: st.DrawFn) -> str:
    directive = draw(st.sampled_from(sorted(_VALUE)))
    if directive == ".b8" and draw(st.booleans()):
        values = draw(st.lists(st.integers(0, 255).map(str), min_size=1, max_size=6))
        return f"{directive} {','.join(values)}"
    return f"{directive} {draw(_VALUE[directive])}"


@settings(max_examples=300, deadline=None)
@given(st.lists(_simple_line(), min_size=1, max_size=40), st.sampled_from(["\n", "\n\t", "\n\n"]))
def test_bulk_reader_equals_line_reader(lines: list[str], sep: str) -> None:
    body = sep + sep.join(lines) + "\n"
    slow = _ptx.SectionParser(".debug_info", "t.ptx").parse_lines(body, 10)
    fast = _ptx.bulk_section(".debug_info", body, "t.ptx")
    if fast is None:
        return  # forms the bulk reader leaves to the line reader (hex, octal, ...)
    assert fast.data == slow.data
    assert fast.relocs == slow.relocs
    assert fast.wide_values == slow.wide_values
    image = _ptx.SectionParser(".debug_info", "t.ptx").parse(body, 10)
    image.ensure_lines()
    assert (image.line_offsets, image.line_numbers) == (slow.line_offsets, slow.line_numbers)


# --- the bulk reader against the line-by-line reader ------------------------------


def _section_bodies() -> list[tuple[str, str, str]]:
    from conftest import FIXTURES

    found = []
    for path in sorted(FIXTURES.rglob("*.ptx")):
        text = ptxdwarf.files.load_text(path)
        try:
            module = ptxdwarf.ptx.parse_ptx(text)
        except PtxSyntaxError:
            continue
        for block in module.sections:
            if block.dwarf_lines:
                continue
            body = text[text.index("{", block.start) + 1 : block.end - 1]
            found.append((f"{path.relative_to(FIXTURES)}:{block.name}", block.name, body))
    return found


_BODIES = _section_bodies()
_VARIANTS = [
    ("as written", lambda b: b),
    ("octal", lambda b: b.replace("\n.b8 0\n", "\n.b8 00\n", 1)),
    ("symbol on .b8", lambda b: b.replace("\n.b8 1\n", "\n.b8 x\n", 1)),
    ("wide .b64", lambda b: b.replace("\n.b64 0\n", "\n.b64 4294967296\n", 1)),
    ("two spaces", lambda b: b.replace(".b32 ", ".b32  ", 1)),
    ("indented", lambda b: b.replace("\n.b32 ", "\n\t.b32 ", 1)),
    ("list on .b16", lambda b: b.replace("\n.b16 ", "\n.b16 1,", 1)),
    ("list on .b32", lambda b: b.replace("\n.b32 ", "\n.b32 1,", 1)),
    ("empty item", lambda b: b.replace(",", ",,", 1)),
    ("label+N", lambda b: b.replace("\n.b32 ", "\n.b32 s+1\n.b32 ", 1)),
    ("too large", lambda b: b.replace("\n.b64 ", "\n.b64 99999999999999999999999\n.b64 ", 1)),
    ("byte over 255", lambda b: b.replace("\n.b8 ", "\n.b8 256\n.b8 ", 1)),
]


def _bulk_image(name: str, body: str, fast: bool) -> tuple[object, list[tuple[str, int]]]:
    addends: list[tuple[str, int]] = []
    if fast:
        img = _ptx.bulk_section(name, body, "f.ptx", addends)
    else:
        parser = _ptx.SectionParser(name, "f.ptx")
        img = parser.parse_lines(body, 1)
        addends = parser.text.addends
    if img is None:
        return None, addends
    relocs = [(r.offset, r.size, r.symbol.name, r.symbol.addend) for r in img.relocs]
    return (img.data, relocs, img.wide_values, img.labels), addends


@pytest.mark.parametrize("variant", [v for v, _ in _VARIANTS])
def test_bulk_reader_reads_what_the_line_reader_reads(variant: str) -> None:
    """Where the bulk reader takes a body, its image is the line-by-line reader's; it takes
    every section nvcc writes."""
    change: Callable[[str], str] = dict(_VARIANTS)[variant]
    taken = 0
    for where, name, body in _BODIES:
        body = change(body)
        mine, mine_addends = _bulk_image(name, body, True)
        if mine is None:
            continue
        taken += 1
        assert (mine, mine_addends) == _bulk_image(name, body, False), where
    if variant == "as written":
        assert taken >= sum(1 for where, _, _ in _BODIES if where.startswith("nvcc/"))


@pytest.mark.parametrize(
    "body",
    [
        "\n.b8 1\n.b32 2,3\n",  # a list on a wide directive
        "\n.b8 017\n",  # octal
        "\n.b8 sym\n",  # a symbol on .b8
        "\n.b8  1\n",  # two blanks after the directive
        "\n.b8 1\r\n.b8 2\n",  # CRLF
        "\n.b32 -1\n",  # a sign
        "\n.b32 1U\n",  # a suffix
        "\n.b8 1 // c\n",  # a comment
        "\nL:\n.b8 1\n",  # a label
        "\n.b32 .b8\n",  # a directive where a symbol goes
        "\n.b8 1\x012\n",  # a control character the bulk reader uses
    ],
)
def test_bulk_reader_leaves_other_text_to_the_line_reader(body: str) -> None:
    assert _ptx.bulk_section(".debug_info", body, "f.ptx", []) is None


# --- the lexical layer: masking, the line index, reading the text once ----------


def test_masking_keeps_offsets_and_lines() -> None:
    from ptxdwarf.ptx.lexer import mask_comments

    text = '.file 1 "a//b" // c\n/* d\n e */ .b8 1 /* f */\n'
    masked = mask_comments(text)
    assert len(masked) == len(text) and masked.count("\n") == text.count("\n")
    assert masked == '.file 1 "a//b"     \n    \n      .b8 1        \n'
    assert mask_comments(masked) == masked


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        # A comment's opener in a string is the string's ('.file "dir/*b.cu"' compiles).
        ('.file 1 "dir/*b.cu"\n// c\n', '.file 1 "dir/*b.cu"\n    \n'),
        # A string ends with its line: a backslash before the line break continues nothing.
        ('"a\\\n// c"\n', '"a\\\n     \n'),
        # A quote that opens no string leaves the rest of its line to comments.
        ('"a \\" // c\n"b" // d\n', '"a \\"     \n"b"     \n'),
        ('x / y /* a */ "/*" /\n', 'x / y         "/*" /\n'),
    ],
)
def test_masking_strings_and_comments(text: str, masked: str) -> None:
    from ptxdwarf.ptx.lexer import mask_comments

    assert mask_comments(text) == masked
    assert mask_comments.reference(text) == masked


@pytest.mark.ptxas
def test_a_comment_opener_in_a_file_name(ptxas_tool: Ptxas) -> None:
    """ptxas takes a '/*' in a .file name; the reader once called it an unterminated comment."""
    text = HEAD.replace(", debug", "") + '.file 1 "dir/*b.cu"\n.visible .entry k()\n{\n.loc 1 1 0\nret;\n}\n'
    ptxas_tool.compile(text, arch="sm_75")
    module = ptxdwarf.ptx.parse_ptx(text, "k.ptx")
    assert [f.path for f in module.files] == ["dir/*b.cu"]


@pytest.mark.parametrize(
    ("hostile", "line"),
    [
        ("/* " * 200_000, 1),  # unclosed comments, each once scanned to the end
        ('\n"' + '\\"' * 400_000 + "\n/* x", 3),  # a line of escaped quotes in an unclosed string
    ],
)
def test_masking_is_linear_on_hostile_text(hostile: str, line: int) -> None:
    """Each of these once took time quadratic in its length in the reference (minutes here)."""
    import signal

    from ptxdwarf.ptx.lexer import mask_comments

    def stop(*_: object) -> None:
        raise TimeoutError("mask_comments did not finish in 20 s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    try:
        for masker in (mask_comments, mask_comments.reference):
            with pytest.raises(PtxSyntaxError, match=f":{line}: unterminated /\\* comment"):
                masker(hostile, "h.ptx")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("order", ["forward", "backward", "scans"])
def test_line_index(order: str) -> None:
    from ptxdwarf.ptx.lexer import LineIndex

    text = "a\n\nbc\nd"
    expected = [1, 1, 2, 3, 3, 3, 4, 4]  # the line of each offset, and of the end
    offsets = list(range(len(text) + 1))
    if order == "backward":
        offsets.reverse()
    elif order == "scans":
        offsets = offsets[3:] + offsets[:3] + offsets[5:] + offsets[1:] + offsets
    index = LineIndex(text)
    assert [index.line(o) for o in offsets] == [expected[o] for o in offsets]
    assert [index.start(line) for line in (1, 2, 3, 4)] == [0, 2, 3, 6]
    assert index.span(3) == (3, 5) and index.span(4) == (6, 7)


def test_each_command_masks_the_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """lint, fix, strip and attach read the masked text the reader made."""
    from conftest import FIXTURES

    from ptxdwarf.autodebug.entry import attach_ptx
    from ptxdwarf.fix import fix
    from ptxdwarf.lint import lint
    from ptxdwarf.ptx import lexer, module, reader
    from ptxdwarf.strip import strip

    calls: list[int] = []

    def counting(text: str, filename: str = "<ptx>") -> str:
        calls.append(len(text))
        return lexer.mask_comments(text, filename)

    monkeypatch.setattr(reader, "mask_comments", counting)
    monkeypatch.setattr(module, "mask_comments", counting)
    plain = ptxdwarf.files.load_text(FIXTURES / "corpus/nvcc-13.0/control.O3.sm_75.ptx")
    debug = ptxdwarf.files.load_text(FIXTURES / "corpus/nvcc-13.0/control.G.sm_75.ptx")
    runs: dict[str, Callable[[], object]] = {
        "lint": lambda: lint(debug),
        "fix": lambda: fix(debug, ptxas_version="13.0"),
        "strip": lambda: strip(debug),
        "attach": lambda: attach_ptx(plain, output_name="/tmp/k.debug.ptx"),
    }
    for name, run in runs.items():
        calls.clear()
        run()
        assert len(calls) == 1, name


def _count_splits(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[int, int]]:
    """How often each statement, by the length of the text it is split from and its offset in
    it, is split from a function body from now on."""
    from ptxdwarf.ptx import statements

    split: Counter[tuple[int, int]] = Counter()
    scan = statements.scan_body

    def counting(
        masked: str, start: int, end: int, *, labels: bool = False, until: int | None = None
    ) -> list[statements.Stmt]:
        found = scan(masked, start, end, labels=labels, until=until)
        split.update((len(masked), s.start) for s in found)
        return found

    for module in list(sys.modules.values()):
        if module.__name__.startswith("ptxdwarf") and getattr(module, "scan_body", None) is scan:
            monkeypatch.setattr(module, "scan_body", counting)
    return split


def test_each_command_splits_a_body_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """lint and attach split each function body into statements once, however many rules
    read them (the clang fixture's first labels are not at the top of their bodies)."""
    from conftest import FIXTURES

    from ptxdwarf.autodebug.entry import attach_ptx
    from ptxdwarf.lint import lint

    split = _count_splits(monkeypatch)
    debug = ptxdwarf.files.load_text(FIXTURES / "corpus/clang-14/control.O0-g.sm_75.ptx")
    plain = ptxdwarf.files.load_text(FIXTURES / "corpus/nvcc-13.0/control.O3.sm_75.ptx")
    runs: dict[str, tuple[str, Callable[[], object]]] = {
        "lint": (debug, lambda: lint(debug)),
        "attach": (plain, lambda: attach_ptx(plain, output_name="/tmp/k.debug.ptx")),
    }
    for name, (text, run) in runs.items():
        split.clear()
        run()
        assert split and set(split.values()) == {1} and {n for n, _ in split} == {len(text)}, name


@pytest.mark.parametrize("name", ["nvcc/coop_reduce.G.sm_75.ptx", "lint/faults/first-label-at-zero.ptx"])
def test_fix_splits_a_body_once_per_text(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """fix's label repairs read the bodies lint split for the findings they repair: each
    text fix reads (the input, then each repaired one) has each body split once."""
    from conftest import FIXTURES

    from ptxdwarf.fix import fix

    text = ptxdwarf.files.load_text(FIXTURES / name)
    split = _count_splits(monkeypatch)
    result = fix(text, ptxas_version="13.0")
    assert {r.rule for r in result.repairs} & {"label-at-line-zero", "first-label-at-zero"}, name
    assert split and set(split.values()) == {1}, name


def test_attach_with_lines_splits_a_body_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """attach(lines=...) splits each body once for the lines it maps and the first labels."""
    from test_first_label import _NO_LOC, _described

    lines = {
        n: ("k.cu", 10 + n)
        for n, line in enumerate(_NO_LOC.split("\n"), 1)
        if line.startswith("\t") and not line.strip().startswith((".", "{", "}"))
    }
    split = _count_splits(monkeypatch)
    out = ptxdwarf.attach.attach(_NO_LOC, _described(), filename="k.ptx", lines=lines)
    assert "$L__ptxdwarf_top0: " in out  # the first label was read from the statements
    assert split and set(split.values()) == {1} and {n for n, _ in split} == {len(_NO_LOC)}


def test_check_splits_a_body_once(monkeypatch: pytest.MonkeyPatch, ptxas_tool: Ptxas) -> None:
    """check splits each function body into statements once, for its line-table rows and
    first labels together."""
    from conftest import FIXTURES

    from ptxdwarf.check import check

    split = _count_splits(monkeypatch)
    for name in ("clang-14/control.O0-g.sm_75.ptx", "nvcc-13.0/control.lineinfo.sm_75.ptx"):
        text = ptxdwarf.files.load_text(FIXTURES / "corpus" / name)
        split.clear()
        check(text, ptxas=ptxas_tool)
        assert split and set(split.values()) == {1} and {n for n, _ in split} == {len(text)}, name


def test_the_nul_byte_that_ends_nvrtc_output_is_read(tmp_path: Path) -> None:
    """NVRTC's PTX (as Warp writes it) ends with the NUL byte of its C string: dump, rewrite and
    attach read it; rewrite keeps it last, attach drops it (ptxas 13 refuses it); a NUL anywhere
    else is still not PTX."""
    from conftest import FIXTURES

    text = (FIXTURES / "spec/example.ptx").read_text()
    read = ptxdwarf.read(text=text + "\0")
    assert [u.die.tag for u in read.units if u.die] == [
        u.die.tag for u in ptxdwarf.read(text=text).units if u.die
    ]
    assert ptxdwarf.rewrite(text + "\0", style="nvcc").endswith("}\n\0")
    from ptxdwarf.cli import main

    bare = tmp_path / "bare.ptx"
    bare.write_text((FIXTURES / "corpus/nvcc-13.0/tiny.O3.sm_75.ptx").read_text() + "\0")
    assert main(["attach", str(bare), "-o", str(tmp_path / "out.ptx")]) == 0
    attached = (tmp_path / "out.ptx").read_text()
    assert attached.endswith("}\n") and "\0" not in attached
    with pytest.raises(PtxSyntaxError, match="NUL byte"):
        ptxdwarf.ptx.parse_ptx(text + "\0" + text)


def test_a_section_written_in_two_blocks_names_the_line_of_each_byte() -> None:
    text = "\n".join(
        [
            ".version 7.0",
            ".target sm_75",
            ".address_size 64",
            ".section .debug_str",
            "{",
            ".b8 65,0",  # line 6
            "}",
            ".section .debug_str",
            "{",
            ".b8 66",  # line 10
            ".b8 0",  # line 11
            "}",
            "",
        ]
    )
    image = ptxdwarf.ptx.parse_ptx(text, "t.ptx").images()[".debug_str"]
    assert image.data == b"A\x00B\x00"
    assert [image.source(offset) for offset in range(4)] == ["t.ptx:6", "t.ptx:6", "t.ptx:10", "t.ptx:11"]


def test_a_bulk_body_names_the_line_of_each_directive() -> None:
    body = "\n.b8 1\n.b32 2\n.b64 3\n.b16 4\n"
    image = _ptx.SectionParser(".debug_info", "t.ptx").parse(body, 20)
    # .b8 at 0, .b32 at 1-4, .b64 at 5-12, .b16 at 13-14
    lines = [image.source_line(offset) for offset in (0, 1, 4, 5, 12, 13, 14)]
    assert lines == [21, 22, 22, 23, 23, 24, 24]
