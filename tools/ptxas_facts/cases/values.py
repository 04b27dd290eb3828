"""Cases on the values ptxas takes in debug sections: literals, directives, separators."""

from __future__ import annotations

from ..case import accepts, bytes_at, rejects
from ..harness import section
from ._base import ZERO8, case, in_str, info_case, with_info

__all__: list[str] = []

# --- wide literals -----------------------------------------------------------------------

F = "wide-literal-truncated"
case(
    "wide.b64-hex",
    F,
    ".b64 0x123456789abcdef0 -> f0 de bc 9a 00 00 00 00",
    in_str(".b64 0x123456789abcdef0"),
    bytes_at(".debug_str", 0, bytes.fromhex("f0debc9a00000000")),
)
case(
    "wide.b64-2pow32",
    F,
    ".b64 4294967296 -> 8 zero bytes",
    in_str(".b64 4294967296"),
    bytes_at(".debug_str", 0, ZERO8),
)
case(
    "wide.b64-max",
    F,
    ".b64 18446744073709551615 -> ff ff ff ff 00 00 00 00",
    in_str(".b64 18446744073709551615"),
    bytes_at(".debug_str", 0, bytes.fromhex("ffffffff00000000")),
)
case(
    "wide.quad",
    F,
    ".quad 0x123456789abcdef0 -> f0 de bc 9a 00 00 00 00",
    in_str(".quad 0x123456789abcdef0"),
    bytes_at(".debug_str", 0, bytes.fromhex("f0debc9a00000000")),
)
info_case(
    "wide.in-info-v70",
    F,
    ".b64 0x123456789abcdef0 in .debug_info at .version 7.0 -> low 32 bits",
    ".b64 0x123456789abcdef0",
    lambda off: bytes_at(".debug_info", off, bytes.fromhex("f0debc9a00000000")),
)
case(
    "wide.b32-2pow32",
    F,
    ".b32 4294967296 -> 00 00 00 00, no error",
    in_str(".b32 4294967296"),
    bytes_at(".debug_str", 0, bytes(4)),
)
case(
    "wide.b8-mod",
    F,
    ".b8 4294967297 -> 01 (reduced mod 2^32 before the range check)",
    in_str(".b8 4294967297"),
    bytes_at(".debug_str", 0, b"\x01"),
)
case(
    "syntax.negative-b64-exact",
    "syntax.negative",
    ".b64 -4294967296 -> 00 00 00 00 ff ff ff ff (exact)",
    in_str(".b64 -4294967296"),
    bytes_at(".debug_str", 0, bytes.fromhex("00000000ffffffff")),
)
case(
    "syntax.b8-out-of-range",
    "syntax.range",
    ".b8 256 -> 'Value out of range for type .b8'",
    in_str(".b8 256"),
    rejects(r"Value out of range for type \.b8 256"),
)

# --- syntax ptxas takes in debug sections ----------------------------------------------------

for cid, body, want in (
    ("syntax.octal", ".b8 017", "0f"),
    ("syntax.binary", ".b8 0b101, 0B101", "0505"),
    ("syntax.u-suffix", ".b8 1U, 2U", "0102"),
    ("syntax.aliases", ".byte 1\n.4byte 2\n.quad 3", "01" + "02000000" + "0300000000000000"),
    ("syntax.same-line", ".b8 1 .b32 2", "0102000000"),
    ("syntax.continuation", ".b8 1, 2,\n3, 4", "01020304"),
    ("syntax.leading-comma", ".b8 1, 2\n, 3, 4", "01020304"),
    ("syntax.packed", ".b8 1\n.b16 2\n.b32 3\n.b64 4", "01" + "0200" + "03000000" + "0400000000000000"),
):
    case(cid, cid, f"{body!r} -> {want}", in_str(body), bytes_at(".debug_str", 0, bytes.fromhex(want)))
for cid, body, near in (
    ("syntax.no-semicolon", ".b8 1;", ";"),
    ("syntax.no-lowercase-u", ".b8 1u, 2", ","),
    ("syntax.no-expressions", ".b8 1+2", r"\+"),
    ("syntax.no-trailing-comma", ".b8 1, 2,", "}"),
    ("syntax.no-char-literal", ".b8 'a'", "'"),
):
    case(
        cid,
        cid,
        f"{body!r} -> Parsing error near '{near}'",
        in_str(body),
        rejects(f"Parsing error near '{near}"),
    )
case(
    "syntax.empty-section",
    "syntax.empty-section",
    "an empty .debug_str block -> no .debug_str in the cubin",
    lambda: with_info(section(".debug_str", "")),
    accepts(lambda r: r.cubin is not None and r.cubin.get(".debug_str") is None),
)


# --- more syntax: braces, directives, literals ---------------------------------------------------

case(
    "syntax.one-line-block",
    "syntax.one-line-block",
    ".section .debug_str { .b8 1, 2 } on one line -> 01 02",
    lambda: with_info(".section .debug_str { .b8 1, 2 }\n"),
    bytes_at(".debug_str", 0, b"\x01\x02"),
)
for cid, body, want in (
    ("syntax.comments", "/* a\nb */ .b8 1, // c\n2", "0102"),
    ("syntax.tabs-and-form-feeds", ".b8\t1,\f2", "0102"),
    ("syntax.hex", ".b8 0x1F, 0X1f\n.b16 0xABCD", "1f1fcdab"),
    ("syntax.octal-b16", ".b16 0177777", "ffff"),
    ("syntax.negative-b8", ".b8 -1, -128", "ff80"),
    ("syntax.negative-b32-min", ".b32 -2147483648", "00000080"),
    ("syntax.binary-b32", ".b32 0b" + "1" * 32, "ffffffff"),
):
    case(cid, cid, f"{body!r} -> {want}", in_str(body), bytes_at(".debug_str", 0, bytes.fromhex(want)))

_REJECTED: tuple[tuple[str, str | None, str], ...] = (
    ("syntax.no-braces", None, "Parsing error near '.b8'"),
    ("syntax.unclosed", "", "Parsing error near ''"),
    ("syntax.nested-braces", "{ .b8 1 }", "Parsing error near '{'"),
    ("syntax.double-comma", ".b8 1,,2", "Parsing error near ','"),
    ("syntax.empty-directive", ".b8", "Parsing error near '}'"),
    ("syntax.mixed-list", ".b8 1, .b16 2", "Parsing error near '.b16'"),
    ("syntax.no-2byte", ".2byte 1", "Parsing error near '.2'"),
    ("syntax.no-ascii-directive", ".ascii 1", "Parsing error near '.ascii'"),
    ("syntax.no-u8", ".u8 1", "Illegal type for dwarf data"),
    ("syntax.bad-octal", ".b8 019", "Parsing error near '9'"),
    ("syntax.no-plus-sign", ".b8 +1", r"Parsing error near '\+'"),
    ("syntax.no-string", '.b8 "ab"', "Parsing error near '\"ab\"'"),
    ("syntax.no-float", ".b32 1.0", "Parsing error near"),
    ("syntax.b16-out-of-range", ".b16 -32769", r"Value out of range for type \.b16 -32769"),
    (
        "syntax.b8-2pow64-out-of-range",
        ".b8 18446744073709551615",
        r"Value out of range for type \.b8 4294967295",
    ),
    ("syntax.b64-min-unparsed", ".b64 -9223372036854775808", "Parsing error near '9223372036854775808'"),
    ("syntax.constant-overflow", ".b64 123456789012345678901234567890", "Constant overflow"),
)


def _no_braces() -> str:
    return with_info(".section .debug_str\n.b8 1, 2\n")


def _unclosed() -> str:
    return with_info().rstrip("\n") + "\n.section .debug_str\n{\n.b8 1\n"


for cid, text, pattern in _REJECTED:
    ptx = _no_braces if text is None else _unclosed if text == "" else in_str(text)
    what = {None: "a block without braces", "": "a block left open at the end of the file"}.get(
        text, repr(text)
    )
    case(cid, cid, f"{what} -> {pattern}", ptx, rejects(pattern))
