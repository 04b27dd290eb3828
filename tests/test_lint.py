"""``ptxdwarf.lint``: static checks of PTX debug sections (no ptxas needed).

- The real producers' fixtures (nvcc, numba, fixed clang, the spec example, the layout
  and handwritten ones) give no finding; LLVM 14's two-string ``.file`` is flagged.
- Every rule has a fault fixture in ``fixtures/lint/faults`` (made by
  ``fixtures/lint/make.py`` from a real producer's output); lint reports exactly that
  rule, at the PTX line and/or DIE the manifest computed from the planted edit.
- Every rule also has a unit test on a small hand-written module assembled below, whose
  DIE offsets and PTX lines the assembler records, so the expected place never comes
  from lint's own output.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import LINT_MOVED_LABELS

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.dump
import ptxdwarf.dwarf
import ptxdwarf.ptx
from ptxdwarf import PtxSyntaxError
from ptxdwarf.check import check
from ptxdwarf.cli import main_lint
from ptxdwarf.cuda.ptxas import Ptxas
from ptxdwarf.cuda.quirks import MEASURED_ON, QUIRKS, quirks_for_rule
from ptxdwarf.dwarf import TAG, Symbol
from ptxdwarf.files import load_text
from ptxdwarf.lint import RULES, Finding, lint, lint_module
from tools.ptxas_facts import CASES

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
LINT = FIXTURES / "lint"
MANIFEST = json.loads((LINT / "manifest.json").read_text())

CLEAN = sorted(
    [
        *FIXTURES.glob("nvcc/*.ptx"),
        *FIXTURES.glob("numba/*.ptx"),
        *(
            p
            for p in FIXTURES.glob("clang/*.ptx")
            if p.name not in ("rich.llc.sm_75.ptx", "rich.O1.ptxas-crash.sm_75.ptx")
        ),
        FIXTURES / "spec" / "example.ptx",
        FIXTURES / "layout" / "types.ptx",
        *FIXTURES.glob("handwritten/*.ptx"),
    ]
)


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _lint_file(path: Path) -> list[Finding]:
    return lint(load_text(path), filename=str(path))


# --- real fixtures -----------------------------------------------------------------


@pytest.mark.parametrize("path", [FIXTURES / name for name in sorted(LINT_MOVED_LABELS)], ids=_id)
def test_fixture_where_ptxas_moves_a_label(path: Path) -> None:
    """lint's only findings: label-at-line-zero, naming the labels ptxas moves."""
    findings = [f for f in _lint_file(path) if f.rule != "file-two-strings"]
    assert {f.rule for f in findings} == {"label-at-line-zero"}
    named = {
        f.message.split()[0] for f in findings if " is used by " in f.message and "ptxas drops" in f.message
    }
    named |= {
        m for f in findings for m in re.findall(r"also relocates (\S+), the label its block", f.message)
    }
    assert named == LINT_MOVED_LABELS[_id(path)]


@pytest.mark.parametrize("path", [p for p in CLEAN if _id(p) not in LINT_MOVED_LABELS], ids=_id)
def test_clean_fixture_has_no_findings(path: Path) -> None:
    findings = _lint_file(path)
    assert findings == [], "\n".join(map(str, findings))


def test_llc_two_string_file_is_flagged() -> None:
    path = FIXTURES / "clang" / "rich.llc.sm_75.ptx"
    text = load_text(path)
    findings = [f for f in lint(text, filename=str(path)) if f.rule != "label-at-line-zero"]
    assert {f.rule for f in findings} == {"file-two-strings"}
    expected = [
        i + 1 for i, line in enumerate(text.split("\n")) if re.match(r'\s*\.file\s+\d+\s+"[^"]*"\s+"', line)
    ]
    assert len(expected) == 3
    assert sorted(f.where for f in findings) == [f"{path}:{n}" for n in expected]
    assert all(f.severity == "error" for f in findings)


def test_clang_ptxas_crash_fixture_is_explained() -> None:
    """clang -O1's by-value kernel parameter `Rect r` (DW_OP_piece around the depot) is what ptxas dies on."""
    path = FIXTURES / "clang" / "rich.O1.ptxas-crash.sm_75.ptx"
    findings = _lint_file(path)
    info = ptxdwarf.read(text=load_text(path))
    r = next(
        d
        for d in info.iter_dies()
        if d.tag == TAG.formal_parameter
        and d.name == "r"
        and d.parent is not None
        and d.parent.name == "kernel_struct"
    )
    errors = [f for f in findings if f.severity == "error"]
    assert [f.rule for f in errors] == ["depot-in-pieces"]
    assert f"at 0x{r.offset:x}" in (errors[0].die or "")
    # clang -O1 also puts labels at line-0 instructions (tests/test_check.py shows ptxas drops them)
    assert {f.rule for f in findings if f.severity != "error"} == {"label-at-line-zero"}


# --- fault fixtures ------------------------------------------------------------------


def test_every_rule_has_a_fault_fixture() -> None:
    assert sorted(e["rule"] for e in MANIFEST) == sorted(RULES)
    for e in MANIFEST:
        assert (LINT / e["file"]).is_file(), e["file"]
        assert f"`{e['file']}`" in (LINT / "README.md").read_text()


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["rule"] for e in MANIFEST])
def test_fault_fixture(entry: dict[str, Any]) -> None:
    path = LINT / entry["file"]
    findings = _lint_file(path)
    assert {f.rule for f in findings} == {entry["rule"], *entry["also"]}, "\n".join(map(str, findings))
    mine = [f for f in findings if f.rule == entry["rule"]]
    for f in mine:
        assert f.severity in ("error", "warning")
        assert "\n" not in str(f)
        assert f"[{entry['rule']}]" in str(f)
    if entry["line"] is not None:
        assert f"{path}:{entry['line']}" in {f.where for f in mine}, "\n".join(map(str, mine))
    if entry["die"] is not None:
        die = entry["die"]
        named = [
            f
            for f in mine
            if f.die and f.die.startswith(f"{die['tag']} ") and f" at 0x{die['offset']:x}" in f.die
        ]
        assert named, "\n".join(map(str, mine))
        if entry["line"] is not None:
            assert any(f.where == f"{path}:{entry['line']}" for f in named)


def test_fault_fixture_die_offsets_match_their_paths() -> None:
    """The manifest's DIE offsets are those of the named DIEs (a check of make.py itself)."""
    for e in MANIFEST:
        die = e["die"]
        if die is None or e["rule"] == "strp-label-reused":  # that edit renames the DIE
            continue
        info = ptxdwarf.read(text=load_text(LINT / e["file"]))
        found = info.die_at(die["offset"])
        assert found is not None and found.tag_str == die["tag"]
        assert found.name == die["path"].split("/")[-1]


# --- a small hand-assembled module -----------------------------------------------------


def regx(name: str) -> bytes:
    return bytes([0x90]) + _uleb(int.from_bytes(name.encode(), "big"))


def _uleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


@dataclass
class Sym:
    name: str
    size: int = 8
    high: bool = False
    """A 4-byte symbol in an 8-byte DW_FORM_addr: in the high half (``.b32 0`` first), else the low."""


@dataclass
class Ref:
    die: D


@dataclass
class D:
    """A DIE to assemble: tag, (attribute, form, value) triples, children."""

    tag: str
    attrs: list[tuple[str, str, Any]]
    children: list[D] = field(default_factory=list)
    offset: int = -1
    line: int = 0
    attr_lines: dict[str, int] = field(default_factory=dict)

    def attr(self, name: str) -> tuple[str, str, Any]:
        return next(a for a in self.attrs if a[0] == name)

    def set(self, name: str, value: Any, form: str | None = None) -> None:
        self.attrs = [(a, form or f, value) if a == name else (a, f, v) for a, f, v in self.attrs]

    def drop(self, name: str) -> None:
        self.attrs = [a for a in self.attrs if a[0] != name]


HEADER = """\
.version 7.5
.target sm_75, debug
.address_size 64

.file 1 "/src/t.cu"

.visible .func (.param .b32 func_retval0) _Z3addii(
\t.param .b32 _Z3addii_param_0,
\t.param .b32 _Z3addii_param_1
)
{
\t.reg .b32 \t%r<4>;
$L__func_begin0:
\t.loc 1 1 1
\tld.param.u32 \t%r1, [_Z3addii_param_0];
\tld.param.u32 \t%r2, [_Z3addii_param_1];
\tadd.s32 \t%r3, %r1, %r2;
\tst.param.b32 \t[func_retval0+0], %r3;
\tret;
$L__func_end0:
}

.visible .entry _Z4testPi(
\t.param .u64 _Z4testPi_param_0
)
{
\t.local .align 4 .b8 \t__local_depot1[8];
\t.reg .b64 \t%SP;
\t.reg .b64 \t%SPL;
\t.reg .b32 \t%r<3>;
\t.reg .b64 \t%rd<2>;
$L__func_begin1:
\t.loc 1 5 1
\tmov.u64 \t%SPL, __local_depot1;
\tld.param.u64 \t%rd1, [_Z4testPi_param_0];
$L__tmp0:
\tmov.u32 \t%r1, 1;
\tst.local.u32 \t[%SPL], %r1;
$L__tmp1:
\tret;
$L__func_end1:
}
"""


def base_tree() -> D:
    int_t = D("base_type", [("name", "string", "int"), ("encoding", "data1", 5), ("byte_size", "data1", 4)])
    add = D(
        "subprogram",
        [
            ("low_pc", "addr", Sym("$L__func_begin0")),
            ("high_pc", "addr", Sym("$L__func_end0")),
            ("MIPS_linkage_name", "string", "_Z3addii"),
            ("name", "string", "add"),
        ],
        [
            D(
                "formal_parameter",
                [
                    ("location", "block1", regx("%r1")),
                    ("address_class", "data1", 2),
                    ("name", "string", "a"),
                    ("type", "ref4", None),
                ],
            ),
            D(
                "formal_parameter",
                [
                    ("location", "block1", regx("%r2")),
                    ("address_class", "data1", 2),
                    ("name", "string", "b"),
                    ("type", "ref4", None),
                ],
            ),
        ],
    )
    test = D(
        "subprogram",
        [
            ("low_pc", "addr", Sym("$L__func_begin1")),
            ("high_pc", "addr", Sym("$L__func_end1")),
            ("MIPS_linkage_name", "string", "_Z4testPi"),
            ("name", "string", "test"),
        ],
        [
            D(
                "formal_parameter",
                [
                    ("location", "block1", [b"\x03", Sym("_Z4testPi_param_0")]),
                    ("address_class", "data1", 7),
                    ("name", "string", "p"),
                    ("type", "ref4", None),
                ],
            ),
            D(
                "lexical_block",
                [("low_pc", "addr", Sym("$L__tmp0")), ("high_pc", "addr", Sym("$L__tmp1"))],
                [
                    D(
                        "variable",
                        [
                            ("location", "block1", [b"\x03", Sym("__local_depot1"), b"\x23\x00"]),
                            ("address_class", "data1", 6),
                            ("name", "string", "v"),
                            ("type", "ref4", None),
                        ],
                    ),
                ],
            ),
        ],
    )
    cu = D(
        "compile_unit",
        [
            ("producer", "string", "hand"),
            ("language", "data2", 4),
            ("name", "string", "t.cu"),
            ("stmt_list", "data4", Sym(".debug_line", 4)),
        ],
        [add, test, int_t],
    )
    for die in _walk(cu):
        for i, (a, f, v) in enumerate(die.attrs):
            if a == "type" and v is None:
                die.attrs[i] = (a, f, Ref(int_t))
    return cu


def _walk(die: D) -> list[D]:
    out = [die]
    for c in die.children:
        out.extend(_walk(c))
    return out


def find(cu: D, *path: str) -> D:
    """The DIE reached by names from the compile unit (unnamed DIEs are looked through)."""

    def search(die: D, names: tuple[str, ...]) -> D | None:
        if not names:
            return die
        for c in die.children:
            name = next((v for a, f, v in c.attrs if a == "name"), None)
            if name == names[0]:
                hit = search(c, names[1:])
                if hit:
                    return hit
            elif name is None:
                hit = search(c, names)
                if hit:
                    return hit
        return None

    hit = search(cu, path)
    assert hit is not None, path
    return hit


_FIXED = {"data1": 1, "data2": 2, "data4": 4, "data8": 8, "ref4": 4, "strp": 4, "flag": 1}


@dataclass
class Module:
    text: str
    cu: D
    unit_line: int
    lines: list[str]

    def line_of(self, pattern: str, nth: int = 0) -> int:
        hits = [i + 1 for i, l in enumerate(self.lines) if re.search(pattern, l)]
        return hits[nth]


def assemble(
    cu: D,
    *,
    header: str = HEADER,
    extra: str = "",
    version: int = 2,
    code_map: dict[int, int] | None = None,
) -> Module:
    """PTX text: ``header``, then ``.debug_abbrev`` and ``.debug_info`` for the tree, then ``extra``.

    Records each DIE's offset and line and each attribute's line. ``code_map`` renames
    abbreviation codes (in the table and the DIEs) to plant order faults.
    """
    from ptxdwarf.dwarf import AT, FORM
    from ptxdwarf.dwarf import TAG as T

    decls: dict[tuple[Any, ...], int] = {}
    for die in _walk(cu):
        key = (die.tag, bool(die.children), tuple((a, f) for a, f, _ in die.attrs))
        decls.setdefault(key, len(decls) + 1)
    codes = code_map or {}
    abbrev = []
    for (tag, children, specs), code in decls.items():
        parts = [codes.get(code, code), *_uleb(T[tag]), int(children)]
        for a, f in specs:
            parts += [*_uleb(AT[a]), *_uleb(FORM[f])]
        parts += [0, 0]
        abbrev.append(".b8 " + ", ".join(map(str, parts)))
    abbrev.append(".b8 0")

    # Sizes first (ref4 values need every offset).
    def value_size(f: str, v: Any) -> int:
        if f == "flag_present":
            return 0
        if f == "ref_addr":
            return 8 if version == 2 else 4
        if f == "string":
            return len(v.encode()) + 1
        if f == "addr":
            return 8
        if f == "block1":
            return 1 + _block_len(v)
        return _FIXED[f]

    pos = 11
    for entry in _walk_with_nulls(cu):
        if entry is None:
            pos += 1
            continue
        key = (entry.tag, bool(entry.children), tuple((a, f) for a, f, _ in entry.attrs))
        entry.offset = pos
        pos += len(_uleb(codes.get(decls[key], decls[key])))
        pos += sum(value_size(f, v) for _, f, v in entry.attrs)
    unit_length = pos - 4

    head = header.rstrip("\n").split("\n")
    lines = [*head, "", ".section .debug_abbrev {", *abbrev, "}", ".section .debug_info {"]
    unit_line = len(lines) + 1
    lines += [f".b32 {unit_length}", f".b16 {version}", ".b32 .debug_abbrev", ".b8 8"]
    for entry in _walk_with_nulls(cu):
        if entry is None:
            lines.append(".b8 0")
            continue
        key = (entry.tag, bool(entry.children), tuple((a, f) for a, f, _ in entry.attrs))
        entry.line = len(lines) + 1
        lines.append(f".b8 {codes.get(decls[key], decls[key])}")
        for a, f, v in entry.attrs:
            entry.attr_lines[a] = len(lines) + 1
            lines.extend(_value_lines(f, v, version))
    lines.append("}")
    text = "\n".join(lines) + "\n" + extra
    return Module(text, cu, unit_line, text.split("\n"))


def _walk_with_nulls(die: D) -> list[D | None]:
    out: list[D | None] = [die]
    if die.children:
        for c in die.children:
            out.extend(_walk_with_nulls(c))
        out.append(None)
    return out


def _block_len(v: Any) -> int:
    if isinstance(v, bytes):
        return len(v)
    return sum(len(p) if isinstance(p, bytes) else p.size for p in v)


def _value_lines(f: str, v: Any, version: int = 2) -> list[str]:
    if f == "flag_present":
        return []
    if f == "ref_addr":
        target = v.die.offset if isinstance(v, Ref) else v
        return [f".b64 {target}" if version == 2 else f".b32 {target}"]
    if f == "string":
        return [".b8 " + ", ".join(map(str, [*v.encode(), 0]))]
    if f in ("addr", "data4", "data8", "strp") and isinstance(v, Sym):
        if f == "addr" and v.size == 4:
            return [".b32 0", f".b32 {v.name}"] if v.high else [f".b32 {v.name}", ".b32 0"]
        return [f".b{v.size * 8} {v.name}"]
    if f == "addr":
        return [f".b64 {v}"]
    if f == "ref4":
        return [f".b32 {v.die.offset if isinstance(v, Ref) else v}"]
    if f == "block1":
        parts = [v] if isinstance(v, bytes) else v
        out = [f".b8 {_block_len(v)}"]
        for p in parts:
            if isinstance(p, bytes):
                if p:
                    out.append(".b8 " + ", ".join(map(str, p)))
            else:
                out.append(f".b{p.size * 8} {p.name}")
        return out
    width = {"data1": 8, "flag": 8, "data2": 16, "data4": 32, "data8": 64, "strp": 32}[f]
    return [f".b{width} {v}"]


def rules_of(findings: list[Finding]) -> set[str]:
    return {f.rule for f in findings}


def only(findings: list[Finding], rule: str) -> list[Finding]:
    assert rules_of(findings) == {rule}, "\n".join(map(str, findings))
    return findings


def at(f: Finding, line: int) -> bool:
    return f.where == f"t.ptx:{line}"


def names(f: Finding, die: D) -> bool:
    return f.die is not None and f" at 0x{die.offset:x}" in f.die


def run(m: Module) -> list[Finding]:
    return lint(m.text, filename="t.ptx")


def test_hand_module_is_clean() -> None:
    m = assemble(base_tree())
    assert run(m) == []
    info = ptxdwarf.read(text=m.text)
    # The assembler's offsets are the reader's.
    assert info.die_at(find(m.cu, "test", "v").offset).name == "v"  # type: ignore[union-attr]  # a None here fails the test, as it should


# --- the rules ---


def test_missing_address_class() -> None:
    cu = base_tree()
    b = find(cu, "add", "b")
    b.drop("address_class")
    m = assemble(cu)
    (f,) = only(run(m), "missing-address-class")
    assert names(f, b) and at(f, b.attr_lines["location"])
    assert f.die is not None and f.die.endswith("add/b") and f.die.startswith("DW_TAG_formal_parameter 'b'")
    assert f.severity == "warning"  # what cuda-gdb does without a class is not measured


def test_location_list_needs_no_address_class() -> None:
    cu = base_tree()
    b = find(cu, "add", "b")
    b.drop("address_class")
    b.set("location", Sym(".debug_loc", 4), "data4")
    loc = (
        ".section .debug_loc {\n"
        ".b64 $L__func_begin0\n.b64 $L__func_end0\n.b16 5\n.b8 144, 178, 228, 149, 1\n.b64 0\n.b64 0\n}\n"
    )
    m = assemble(cu, extra=loc)
    assert run(m) == []
    # ... but its registers and labels are still checked.
    m = assemble(cu, extra=loc.replace("178", "185").replace("$L__func_end0", "$L__func_end1"))
    found = run(m)
    assert rules_of(found) == {"regx-undeclared", "label-wrong-function"}
    assert all(names(f, b) for f in found)
    assert any("%r9" in f.message for f in found)


def test_loclist_offset_not_a_list() -> None:
    cu = base_tree()
    b = find(cu, "add", "b")
    b.drop("address_class")
    b.set("location", Sym(".debug_loc+4", 4), "data4")
    m = assemble(
        cu,
        extra=".section .debug_loc {\n.b64 $L__func_begin0\n.b64 $L__func_end0\n.b16 1\n.b8 144\n.b64 0\n.b64 0\n}\n",
    )
    (f,) = only(run(m), "bad-loclist-offset")
    assert names(f, b) and at(f, b.attr_lines["location"])


@pytest.mark.parametrize(
    "value,severity", [(0, "warning"), (13, "warning"), (16, "warning"), (17, "warning"), (200, "warning")]
)
def test_address_class_range(value: int, severity: str) -> None:
    cu = base_tree()
    p = find(cu, "test", "p")
    p.set("address_class", value)
    m = assemble(cu)
    (f,) = only(run(m), "address-class-range")
    assert f.severity == severity
    assert names(f, p) and at(f, p.attr_lines["address_class"])


@pytest.mark.parametrize("value", [1, 2, 6, 12])
def test_address_class_in_range(value: int) -> None:
    cu = base_tree()
    find(cu, "test", "p").set("address_class", value)
    assert [f for f in run(assemble(cu)) if f.rule == "address-class-range"] == []


@pytest.mark.parametrize("value", [1, 2, 4, 5, 6, 8, 12])
def test_address_class_contradicting_the_state_space(value: int) -> None:
    """test/p sits at DW_OP_addr of its .param: any class but param (7) sends a debugger elsewhere."""
    cu = base_tree()
    p = find(cu, "test", "p")
    p.set("address_class", value)
    m = assemble(cu)
    (f,) = run(m)
    assert f.rule == "address-class-space" and f.severity == "error"
    assert names(f, p) and at(f, p.attr_lines["address_class"])
    assert ".param" in f.message and "ADDR_param_space" in f.message


def test_address_class_of_the_state_space_is_no_finding() -> None:
    cu = base_tree()
    find(cu, "test", "p").set("address_class", 7)
    assert run(assemble(cu)) == []


def test_regx_undeclared_in_that_function() -> None:
    # %rd1 exists, but in _Z4testPi, not in _Z3addii.
    cu = base_tree()
    a = find(cu, "add", "a")
    a.set("location", regx("%rd1"))
    m = assemble(cu)
    (f,) = only(run(m), "regx-undeclared")
    assert names(f, a) and at(f, a.attr_lines["location"])
    assert "_Z3addii" in f.message and "%rd1" in f.message


def test_regx_range_bounds() -> None:
    cu = base_tree()
    a = find(cu, "add", "a")
    for reg, ok in (("%r0", True), ("%r3", True), ("%r4", False), ("%r01", False)):
        a.set("location", regx(reg))
        assert (run(assemble(cu)) == []) is ok, reg


def test_regx_stack_pointer_registers() -> None:
    cu = base_tree()
    v = find(cu, "test", "v")
    v.set("location", regx("%SPL"))
    v.set("address_class", 2)
    assert run(assemble(cu)) == []


def test_regx_not_a_register_name() -> None:
    cu = base_tree()
    a = find(cu, "add", "a")
    a.set("location", bytes([0x90, 5]))
    (f,) = only(run(assemble(cu)), "regx-undeclared")
    assert names(f, a) and "does not spell" in f.message


def test_regx_too_long() -> None:
    header = HEADER.replace("\t.reg .b32 \t%r<4>;", "\t.reg .b32 \t%r<4>;\n\t.reg .b32 \t%longreg<2>;")
    cu = base_tree()
    a = find(cu, "add", "a")
    a.set("location", regx("%longreg1"))
    m = assemble(cu, header=header)
    (f,) = only(run(m), "regx-too-long")
    assert names(f, a) and at(f, a.attr_lines["location"]) and "9 characters" in f.message


def test_subprogram_maps_to_function_by_linkage_name() -> None:
    # No low_pc/high_pc: the linkage name says which function's registers count.
    cu = base_tree()
    add = find(cu, "add")
    add.drop("low_pc")
    add.drop("high_pc")
    assert run(assemble(cu)) == []
    find(cu, "add", "a").set("location", regx("%rd1"))
    assert rules_of(run(assemble(cu))) == {"regx-undeclared"}


def test_undefined_symbol() -> None:
    cu = base_tree()
    p = find(cu, "test", "p")
    p.set("location", [b"\x03", Sym("_Z4testPi_param_3")])
    m = assemble(cu)
    (f,) = only(run(m), "undefined-symbol")
    assert names(f, p) and at(f, p.attr_lines["location"] + 2)


def test_undefined_section() -> None:
    cu = base_tree()
    cu.set("stmt_list", Sym(".debug_ranges", 4))
    m = assemble(cu)
    (f,) = only(run(m), "undefined-symbol")
    assert at(f, cu.attr_lines["stmt_list"]) and ".debug_ranges" in f.message


def test_label_wrong_function() -> None:
    cu = base_tree()
    block = find(cu, "test").children[1]
    assert block.tag == "lexical_block"
    block.set("high_pc", Sym("$L__func_end0"))
    m = assemble(cu)
    (f,) = only(run(m), "label-wrong-function")
    assert names(f, block) and at(f, block.attr_lines["high_pc"])
    assert "$L__func_end0" in f.message and "_Z4testPi" in f.message


def test_label_wrong_function_blames_the_odd_one_out() -> None:
    # low_pc points into the wrong function; the linkage name and high_pc agree on _Z3addii.
    cu = base_tree()
    add = find(cu, "add")
    add.set("low_pc", Sym("$L__tmp0"))
    m = assemble(cu)
    (f,) = only(run(m), "label-wrong-function")
    assert names(f, add) and at(f, add.attr_lines["low_pc"])


def test_label_wrong_function_in_entry_pc_and_in_a_range_list() -> None:
    cu = base_tree()
    block = find(cu, "test").children[1]
    block.attrs = [("entry_pc", "addr", Sym("$L__func_begin0")), ("ranges", "data4", 0)]
    extra = ".section .debug_ranges {\n.b64 $L__tmp0\n.b64 $L__func_end0\n.b64 0\n.b64 0\n}\n"
    m = assemble(cu, extra=extra)
    found = only(run(m), "label-wrong-function")
    assert [("$L__func_begin0" in f.message, "DW_AT_ranges entry" in f.message) for f in found] == [
        (True, False),
        (False, True),
    ]
    assert all(names(f, block) for f in found) and at(found[0], block.attr_lines["entry_pc"])
    assert "$L__func_end0" in found[1].message


def test_function_symbol_as_low_pc_is_fine() -> None:
    cu = base_tree()
    find(cu, "test").set("low_pc", Sym("_Z4testPi"))
    assert run(assemble(cu)) == []


def test_target_not_debug() -> None:
    cu = base_tree()
    m = assemble(cu, header=HEADER.replace(".target sm_75, debug", ".target sm_75"))
    (f,) = only(run(m), "target-not-debug")
    assert at(f, 2) and f.severity == "warning" and "-g" in f.message


def test_line_tables_only_needs_no_debug_target() -> None:
    """Triton and -lineinfo producers leave debug out of .target on purpose: a unit with
    subprograms and no variables gets no target-not-debug."""
    cu = base_tree()
    for sp in (find(cu, "add"), find(cu, "test")):
        sp.children = []
    m = assemble(cu, header=HEADER.replace(".target sm_75, debug", ".target sm_75"))
    assert run(m) == []


def test_lineinfo_style_module_needs_no_debug_target() -> None:
    text = (
        HEADER.replace(".target sm_75, debug", ".target sm_75")
        + ".section .debug_str {\n$L__info_string0:\n.b8 97, 0\n}\n"
    )
    assert lint(text) == []


def test_file_two_strings() -> None:
    m = assemble(base_tree(), header=HEADER.replace('.file 1 "/src/t.cu"', '.file 1 "/src" "t.cu"'))
    (f,) = only(run(m), "file-two-strings")
    assert at(f, 5) and '"/src/t.cu"' in f.message


@pytest.mark.parametrize(
    "version,extra,rule_line",
    [
        ("6.5", ".section .debug_str {\n.b8 0\n$L__s:\n.b8 97, 0\n}\n", "$L__s:"),
        ("7.0", ".section .debug_str {\n$L__a:\n.b8 97, 0\n$L__b:\n.b32 $L__b-$L__a\n}\n", "$L__b-$L__a"),
        ("2.9", "", ".target"),
        ("3.1", ".section .debug_loc {\n.b64 $L__tmp0+4\n.b64 0\n}\n", "$L__tmp0+4"),
    ],
)
def test_version_too_low(version: str, extra: str, rule_line: str) -> None:
    m = assemble(base_tree(), header=HEADER.replace(".version 7.5", f".version {version}"), extra=extra)
    findings = [f for f in run(m) if f.rule == "version-too-low"]
    assert findings, run(m)
    assert any(at(f, m.line_of(re.escape(rule_line))) for f in findings), findings


def test_version_too_low_counts_the_labels_of_a_section() -> None:
    """ptxas rejects each label defined in a section below 7.0; lint reports the first and
    says how many more there are."""
    extra = ".section .debug_str {\n$L__a:\n.b8 97, 0\n$L__b:\n.b8 98, 0\n$L__c:\n.b8 0\n}\n"
    m = assemble(base_tree(), header=HEADER.replace(".version 7.5", ".version 6.5"), extra=extra)
    (f,) = [f for f in run(m) if f.rule == "version-too-low" and "labels" in f.message]
    assert "($L__a: and 2 more labels in .debug_str)" in f.message


def test_version_high_enough() -> None:
    extra = ".section .debug_str {\n$L__a:\n.b8 97, 0\n$L__b:\n.b32 $L__b-$L__a\n}\n"
    assert run(assemble(base_tree(), extra=extra)) == []


def test_bad_reference() -> None:
    cu = base_tree()
    a = find(cu, "add", "a")
    int_t = find(cu, "int")
    assemble(cu)  # offsets are known once assembled; a ref4 keeps every size
    a.set("type", int_t.offset + 1)
    m = assemble(cu)
    (f,) = only(run(m), "bad-reference")
    assert names(f, a) and at(f, a.attr_lines["type"])


def test_reference_outside_the_unit() -> None:
    cu = base_tree()
    a = find(cu, "add", "a")
    assemble(cu)
    a.set("type", 5000)
    (f,) = only(run(assemble(cu)), "bad-reference")
    assert names(f, a)


PUBNAMES = """\
.section .debug_pubnames {{
.b32 {length}
.b16 2
.b32 {unit}
.b32 {unit_length}
.b32 {off1}
.b8 95, 90, 51, 97, 100, 100, 105, 105, 0
.b32 0
}}
"""


def _pubnames(m: Module, **kw: Any) -> str:
    values = {
        "length": 2 + 4 + 4 + 4 + 9 + 4,
        "unit": ".debug_info",
        "unit_length": None,
        "off1": find(m.cu, "add").offset,
    }
    values.update(kw)
    if values["unit_length"] is None:
        values["unit_length"] = int(m.lines[m.unit_line - 1].split()[1]) + 4
    return PUBNAMES.format(**values)


def test_pubnames_clean_both_length_conventions() -> None:
    cu = base_tree()
    m = assemble(cu)
    unit_length = int(m.lines[m.unit_line - 1].split()[1])
    for value in (unit_length, unit_length + 4):
        assert run(assemble(cu, extra=_pubnames(m, unit_length=value))) == []


@pytest.mark.parametrize(
    "kw,rule,field",
    [
        ({"unit": "3"}, "names-unit-offset", ".b32 3"),
        ({"unit_length": 7}, "names-unit-length", ".b32 7"),
        ({"off1": 1}, "names-entry", ".b32 1"),
    ],
)
def test_pubnames_faults(kw: dict[str, Any], rule: str, field: str) -> None:
    cu = base_tree()
    m0 = assemble(cu)
    extra = _pubnames(m0, **kw)
    m = assemble(cu, extra=extra)
    (f,) = only(run(m), rule)
    start = m.line_of(r"\.section \.debug_pubnames")
    expect = start + extra.split("\n").index(field)
    assert at(f, expect), f


def test_pubnames_entry_name_mismatch_is_a_warning() -> None:
    cu = base_tree()
    m0 = assemble(cu)
    extra = _pubnames(m0, off1=find(m0.cu, "test").offset)
    (f,) = only(run(assemble(cu, extra=extra)), "names-entry")
    assert f.severity == "warning"


def _pubnames_entry(m: Module, offset: int, name: str) -> str:
    raw = name.encode() + b"\0"
    unit_length = int(m.lines[m.unit_line - 1].split()[1]) + 4
    return (
        f".section .debug_pubnames {{\n.b32 {2 + 4 + 4 + 4 + len(raw) + 4}\n.b16 2\n.b32 .debug_info\n"
        f".b32 {unit_length}\n.b32 {offset}\n.b8 {', '.join(map(str, raw))}\n.b32 0\n}}\n"
    )


@pytest.mark.parametrize(
    "name, clean",
    [
        ("test::v", True),  # qualified by the scopes around it (nvcc sm_100: kernel::buf)
        ("v", True),
        ("other::v", False),
        ("test::w", False),
    ],
)
def test_pubnames_entry_qualified_names(name: str, clean: bool) -> None:
    cu = base_tree()
    m0 = assemble(cu)
    found = run(assemble(cu, extra=_pubnames_entry(m0, find(m0.cu, "test", "v").offset, name)))
    assert [f.rule for f in found] == ([] if clean else ["names-entry"])


def test_pubnames_entry_named_through_its_specification() -> None:
    """An out-of-line definition takes its name from the declaration it completes, and its
    pubnames entry qualifies it by the declaration's scope (LLVM 14: ``S::twice``)."""
    cu = base_tree()
    decl = D("subprogram", [("name", "string", "twice"), ("declaration", "flag", 1)])
    cu.children.append(D("structure_type", [("name", "string", "S")], [decl]))
    definition = D("subprogram", [("specification", "ref4", None)])
    cu.children.append(definition)
    m0 = assemble(cu)
    definition.set("specification", find(m0.cu, "S", "twice").offset)
    m0 = assemble(cu)
    off = definition.offset
    assert run(assemble(cu, extra=_pubnames_entry(m0, off, "S::twice"))) == []
    (f,) = run(assemble(cu, extra=_pubnames_entry(m0, off, "T::twice")))
    assert f.rule == "names-entry"


def test_aranges_unit_offset() -> None:
    cu = base_tree()
    aranges = ".section .debug_aranges {\n.b32 44\n.b16 2\n.b32 {u}\n.b8 8, 0\n.b32 0\n.b64 _Z3addii\n.b64 64\n.b64 0\n.b64 0\n}\n"
    assert run(assemble(cu, extra=aranges.replace("{u}", ".debug_info"))) == []
    m = assemble(cu, extra=aranges.replace("{u}", "16"))
    (f,) = only(run(m), "aranges-unit-offset")
    assert at(f, m.line_of(r"^\.b32 16$"))


def test_unit_length_with_junk() -> None:
    cu = base_tree()
    m = assemble(cu)
    n = int(m.lines[m.unit_line - 1].split()[1])
    lines = list(m.lines)
    lines[m.unit_line - 1] = f".b32 {n + 2}"
    end = max(i for i, l in enumerate(lines) if l == "}")
    lines[end:end] = [".b8 0, 1"]
    (f,) = only(lint("\n".join(lines), filename="t.ptx"), "unit-length")
    assert f.where == f"t.ptx:{m.unit_line}" and "2 byte(s)" in f.message and f.severity == "warning"


def test_unit_length_zero_padding_is_fine() -> None:
    """nvopencc pads its unit with a zero byte after the DIE tree; ptxas -g keeps it."""
    cu = base_tree()
    m = assemble(cu)
    n = int(m.lines[m.unit_line - 1].split()[1])
    lines = list(m.lines)
    lines[m.unit_line - 1] = f".b32 {n + 2}"
    end = max(i for i, l in enumerate(lines) if l == "}")
    lines[end:end] = [".b8 0, 0"]
    assert lint("\n".join(lines), filename="t.ptx") == []


def test_address_size_missing_is_fine() -> None:
    """Without .address_size ptxas -g compiles the debug info (harness case header.address-size-missing)."""
    m = assemble(base_tree(), header=HEADER.replace(".address_size 64\n", ""))
    assert ".address_size" not in m.text
    assert run(m) == []


@pytest.mark.parametrize("delta", [-3, 40])
def test_unit_length_structure(delta: int) -> None:
    """A length that cuts a DIE or runs past the section: a `structure` finding, not an exception."""
    m = assemble(base_tree())
    n = int(m.lines[m.unit_line - 1].split()[1])
    text = m.text.replace(f".b32 {n}\n", f".b32 {n + delta}\n", 1)
    findings = lint(text, filename="t.ptx")
    assert rules_of(findings) == {"structure"}
    assert findings[0].section == ".debug_info"


def test_structure_unknown_abbrev_code() -> None:
    cu = base_tree()
    m = assemble(cu)
    int_t = find(cu, "int")
    lines = list(m.lines)
    lines[int_t.line - 1] = ".b8 77"
    (f,) = only(lint("\n".join(lines), filename="t.ptx"), "structure")
    assert f.where == f"t.ptx:{int_t.line}" and f.offset == int_t.offset and "77" in f.message


def test_structure_keeps_other_checks() -> None:
    cu = base_tree()
    m = assemble(cu, header=HEADER.replace('.file 1 "/src/t.cu"', '.file 1 "/src" "t.cu"'))
    lines = list(m.lines)
    lines[find(cu, "int").line - 1] = ".b8 77"
    assert rules_of(lint("\n".join(lines))) == {"structure", "file-two-strings"}


def test_bad_expression_is_structure() -> None:
    cu = base_tree()
    a = find(cu, "add", "a")
    a.set("location", b"\x90\x80")  # ULEB runs past the block
    (f,) = only(run(assemble(cu)), "structure")
    assert names(f, a)


# --- ptxas traps ---


def test_abbrev_code_order() -> None:
    cu = base_tree()
    m = assemble(cu, code_map={3: 9})
    (f,) = only(run(m), "abbrev-code-order")
    abbrev_start = m.line_of(r"\.section \.debug_abbrev")
    assert at(f, abbrev_start + 3)  # the third declaration's line
    assert "1, 2, 9" in f.message


def test_dwarf4_form() -> None:
    cu = base_tree()
    add = find(cu, "add")
    add.attrs.append(("external", "flag_present", None))
    # flag_present has no bytes: the assembler writes none for it.
    m = assemble(cu)
    (f,) = only(run(m), "dwarf4-form")
    assert names(f, add) and "flag_present" in f.message


def test_ref_addr_size() -> None:
    cu = base_tree()
    a = find(cu, "add", "a")
    a.set("type", Ref(find(cu, "int")), "ref_addr")
    m = assemble(cu, version=3)
    (f,) = only(run(m), "ref-addr-size")
    assert names(f, a) and at(f, a.attr_lines["type"])


def test_ref_addr_in_dwarf2_is_fine() -> None:
    cu = base_tree()
    find(cu, "add", "a").set("type", Ref(find(cu, "int")), "ref_addr")
    assert run(assemble(cu)) == []


def test_reloc_width() -> None:
    """A 4-byte symbol in the high half of an 8-byte address: the field reads as symbol * 2**32."""
    cu = base_tree()
    add = find(cu, "add")
    add.set("high_pc", Sym("$L__func_end0", 4, high=True))
    m = assemble(cu)
    (f,) = only(run(m), "reloc-width")
    assert names(f, add) and at(f, add.attr_lines["high_pc"] + 1) and "byte 4 of DW_FORM_addr" in f.message


def test_reloc_width_low_half_is_fine() -> None:
    """'.b32 label' + '.b32 0' as an 8-byte address: ptxas relocates the low half and the field
    reads as the label (case reloc-width.low-half, on every release measured)."""
    cu = base_tree()
    find(cu, "add").set("high_pc", Sym("$L__func_end0", 4))
    assert run(assemble(cu)) == []


def test_reloc_width_of_a_depot_address_operand() -> None:
    """'.b32 __local_depot1' + '.b32 0' as DW_OP_addr's operand: ptxas rewrites 5 of the 9 bytes
    and leaves 4 zero bytes in the expression (case reloc-width.depot-b32, every release)."""
    cu = base_tree()
    v = find(cu, "test", "v")
    v.set("location", [b"\x03", Sym("__local_depot1", 4), b"\x00\x00\x00\x00\x23\x00"])
    m = assemble(cu)
    (f,) = only(run(m), "reloc-width")
    assert names(f, v) and "DW_OP_addr takes 8 bytes" in f.message and "4 zero bytes" in f.message


@pytest.mark.parametrize(
    ("name", "extra", "reported"),
    [
        ("_Z4testPi_param_0", "", False),
        ("sh0", ".shared .align 4 .u32 sh0;\n", False),
        ("g0", ".global .align 4 .u32 g0;\n", True),
    ],
)
def test_reloc_width_of_an_address_operand_ptxas_writes(name: str, extra: str, reported: bool) -> None:
    """'.b32 X' + '.b32 0' as DW_OP_addr's operand: of a kernel parameter or a .shared variable
    ptxas writes the offset and the operand reads right (cases reloc-width.param-b32 and
    .shared-b32, every release); of a .global variable it is relocated R_CUDA_32, the low
    32 bits of the address (reloc-width.global-b32)."""
    cu = base_tree()
    p = find(cu, "test", "p")
    p.set("location", [b"\x03", Sym(name, 4), b"\x00\x00\x00\x00"])
    m = assemble(cu, header=HEADER.replace(".address_size 64\n", ".address_size 64\n" + extra, 1))
    found = [f for f in run(m) if f.rule == "reloc-width"]
    assert bool(found) == reported, found
    if reported:
        assert names(found[0], p) and "DW_OP_addr takes 8 bytes" in found[0].message
        assert "the low 32 bits of the address" in found[0].message


def test_reloc_in_a_non_relocatable_field() -> None:
    cu = base_tree()
    a = find(cu, "add", "a")
    m = assemble(cu)
    lines = list(m.lines)
    line = a.attr_lines["type"]
    assert re.fullmatch(r"\.b32 \d+", lines[line - 1])
    lines[line - 1] = ".b32 $L__func_begin0"  # a symbol where a ref4 goes (so the reference is 0, too)
    found = lint("\n".join(lines), filename="t.ptx")
    assert rules_of(found) == {"reloc-width", "bad-reference"}
    (f,) = [f for f in found if f.rule == "reloc-width"]
    assert f.where == f"t.ptx:{line}" and "DW_FORM_ref4" in f.message and names(f, a)


def test_wide_value() -> None:
    cu = base_tree()
    cu.attrs.append(("low_pc", "addr", 1 << 32))
    m = assemble(cu)
    (f,) = only(run(m), "wide-value")
    assert at(f, cu.attr_lines["low_pc"]) and f.severity == "warning"


def test_strp_label_reused() -> None:
    cu = base_tree()
    a, b = find(cu, "add", "a"), find(cu, "add", "b")
    a.set("name", Sym("$L__str0", 4), "strp")
    b.set("name", Sym("$L__str1", 4), "strp")
    strs = ".section .debug_str {\n$L__str0:\n.b8 97, 0\n$L__str1:\n.b8 98, 0\n}\n"
    assert run(assemble(cu, extra=strs)) == []
    b.set("name", Sym("$L__str0", 4), "strp")
    m = assemble(cu, extra=strs)
    (f,) = only(run(m), "strp-label-reused")
    assert names(f, b) and at(f, b.attr_lines["name"]) and f.severity == "error"


def test_symbol_outside_info() -> None:
    cu = base_tree()
    strs = ".section .debug_str {\n.b8 0\n$L__s1:\n.b8 97, 0\n.b32 $L__s1\n.b32 .debug_info\n.b32 .debug_str+1\n}\n"
    m = assemble(cu, extra=strs)
    found = only(run(m), "symbol-outside-info")
    # $L__s1 (offset 1) and .debug_str+1 stand for non-zero values; .debug_info is 0 anyway.
    lines = [m.line_of(r"^\.b32 \$L__s1$"), m.line_of(r"^\.b32 \.debug_str\+1$")]
    assert sorted(f.where for f in found) == [f"t.ptx:{n}" for n in lines]


def test_symbol_addend() -> None:
    cu = base_tree()
    v = find(cu, "test", "v")
    v.set("location", [b"\x03", Sym("__local_depot1+4"), b"\x23\x00"])
    m = assemble(cu)
    (f,) = only(run(m), "symbol-addend")
    assert names(f, v) and at(f, v.attr_lines["location"] + 2)


def test_section_plus_n_in_info_is_fine() -> None:
    cu = base_tree()
    cu.set("stmt_list", Sym(".debug_line+8", 4))
    assert run(assemble(cu)) == []


_AT_TMP0 = "$L__tmp0:\n\tmov.u32 \t%r1, 1;"


def test_label_at_line_zero() -> None:
    cu = base_tree()
    block = find(cu, "test").children[1]
    m = assemble(
        cu, header=HEADER.replace(_AT_TMP0, "$L__tmp0:\n\t.loc 1 0 0\n\tmov.u32 \t%r1, 1;\n\t.loc 1 6 1")
    )
    (f,) = only(run(m), "label-at-line-zero")
    assert names(f, block) and at(f, block.attr_lines["low_pc"]) and f.severity == "warning"
    assert "$L__tmp0" in f.message and "_Z4testPi" in f.message


def test_only_a_lint_for_repair_keeps_the_split_bodies_of_the_functions_it_reports() -> None:
    from ptxdwarf.lint import lint_module
    from ptxdwarf.lint.run import lint_for_repair

    cu = base_tree()
    m = assemble(
        cu, header=HEADER.replace(_AT_TMP0, "$L__tmp0:\n\t.loc 1 0 0\n\tmov.u32 \t%r1, 1;\n\t.loc 1 6 1")
    )
    plain = ptxdwarf.ptx.parse_ptx(m.text, "t.ptx")
    assert rules_of(lint_module(plain)) == {"label-at-line-zero"}
    assert plain.kept_statements == {}
    for_repair = ptxdwarf.ptx.parse_ptx(m.text, "t.ptx")
    assert rules_of(lint_for_repair(for_repair, None)) == {"label-at-line-zero"}
    (function,) = [f for f in for_repair.functions if id(f) in for_repair.kept_statements]
    assert function.name == "_Z4testPi"


def test_label_at_line_zero_set_before_the_label() -> None:
    cu = base_tree()
    m = assemble(
        cu, header=HEADER.replace(_AT_TMP0, "\t.loc 1 0 0\n$L__tmp0:\n\tmov.u32 \t%r1, 1;\n\t.loc 1 6 1")
    )
    assert rules_of(run(m)) == {"label-at-line-zero"}


@pytest.mark.parametrize(
    "code",
    [
        # a later .loc gives the instruction a line
        "$L__tmp0:\n\t.loc 1 0 0\n\t.loc 1 6 1\n\tmov.u32 \t%r1, 1;",
        # line 0 that ends before the label's instruction
        "\t.loc 1 0 0\n\tmov.u32 \t%r2, 1;\n\t.loc 1 6 1\n$L__tmp0:\n\tmov.u32 \t%r1, 1;",
        # line 0 up to $L__tmp1, whose code is at line 0 too: the block leads to no line
        "$L__tmp0:\n\t.loc 1 0 0\n\tmov.u32 \t%r1, 1;",
        # a barrier in the block keeps the label (clang's __syncthreads after a line-0 cvta)
        "$L__tmp0:\n\t.loc 1 0 0\n\tmov.u32 \t%r1, 1;\n\t.loc 1 5 1\n\tbar.sync 0;\n\t.loc 1 6 1",
        "$L__tmp0:\n\t.loc 1 0 0\n\tbarrier.sync 0;\n\tmov.u32 \t%r1, 1;\n\t.loc 1 6 1",
        "$L__tmp0:\n\t.loc 1 0 0\n\tmov.u32 \t%r1, 1;\n\tshfl.sync.idx.b32 %r1, %r1, 0, 31, -1;\n\t.loc 1 6 1",
    ],
    ids=["later-loc", "earlier-line-zero", "leads-to-line-zero", "bar-sync", "barrier-first", "shfl-sync"],
)
def test_label_at_line_zero_not_reported(code: str, ptxas_tool: Ptxas) -> None:
    m = assemble(base_tree(), header=HEADER.replace(_AT_TMP0, code))
    assert run(m) == []
    assert check(m.text, ptxas=ptxas_tool).consistent


def test_the_label_after_a_dropped_unused_one_is_reported(ptxas_tool: Ptxas) -> None:
    """Only the last label before the instruction is dropped: $L__other, which nothing uses,
    and not $L__tmp0. ptxas then relocates $L__tmp1, the next label, to $L__other's place;
    lint warns at $L__tmp1 and check finds it before the code above it."""
    code = "$L__tmp0:\n$L__other:\n\t.loc 1 0 0\n\tmov.u32 \t%r1, 1;\n\t.loc 1 6 1"
    m = assemble(base_tree(), header=HEADER.replace(_AT_TMP0, code))
    (finding,) = run(m)
    assert finding.rule == "label-at-line-zero" and finding.message.startswith("$L__tmp1 ")
    assert "ptxas drops $L__other" in finding.message
    report = check(m.text, ptxas=ptxas_tool)
    assert [(d.ptx, d.what) for d in report.differences] == [("$L__tmp1", "address")]


@pytest.mark.parametrize(
    "case_id, dropped",
    [
        ("label-at-line-zero.leads-to-a-line", True),
        ("label-at-line-zero.leads-to-line-zero", False),
        ("label-at-line-zero.named-before", False),
    ],
)
def test_label_at_line_zero_is_what_ptxas_drops(case_id: str, dropped: bool, ptxas_tool: Ptxas) -> None:
    """lint warns of exactly the labels ptxas drops, on the harness's modules (quirk
    label-at-line-zero)."""
    (case,) = [c for c in CASES if c.id == case_id]
    text = case.ptx()
    assert isinstance(text, str)
    warned = [f.message.split()[0] for f in ptxdwarf.lint.lint(text) if f.rule == "label-at-line-zero"]
    assert warned == (["$L__x"] if dropped else [])
    report = check(text, filename="k.ptx", ptxas=ptxas_tool)
    assert [d.ptx for d in report.differences if "dropped label" in d.message] == warned


def test_func_param_address() -> None:
    cu = base_tree()
    a = find(cu, "add", "a")
    a.set("location", [b"\x03", Sym("_Z3addii_param_0")])
    a.set("address_class", 7)
    m = assemble(cu)
    (f,) = only(run(m), "func-param-address")
    assert names(f, a) and f.severity == "warning"


def test_duplicate_section() -> None:
    m = assemble(base_tree(), extra=".section .debug_str {\n.b8 0\n}\n.section .debug_str {\n.b8 97, 0\n}\n")
    (f,) = only(run(m), "duplicate-section")
    assert at(f, m.line_of(r"\.section \.debug_str", 1)) and f.severity == "warning"


def test_duplicate_debug_info_is_an_error() -> None:
    m = assemble(base_tree(), extra=".section .debug_info {\n}\n")
    (f,) = only(run(m), "duplicate-section")
    assert f.severity == "error"


_LOC = ".section .debug_loc {{\n{}\n}}\n"
_EMPTY_LIST = ".b64 0\n.b64 0"
_ONE_ENTRY = ".b64 {}\n.b64 {}\n.b16 1\n.b8 80\n.b64 0\n.b64 0"


def test_overlaid_blocks_that_differ_are_an_error() -> None:
    m = assemble(base_tree(), extra=_LOC.format(_EMPTY_LIST) + _LOC.format(_ONE_ENTRY.format(1, 2)))
    (f,) = only(run(m), "duplicate-section")
    assert f.severity == "error" and "overlapping non-identical data" in f.message
    assert at(f, m.line_of(r"\.section \.debug_loc", 1))


def test_overlaid_blocks_that_agree_are_a_warning() -> None:
    m = assemble(base_tree(), extra=_LOC.format(_EMPTY_LIST) + _LOC.format(_EMPTY_LIST + "\n" + _EMPTY_LIST))
    (f,) = only(run(m), "duplicate-section")
    assert f.severity == "warning" and "agree" in f.message


def test_overlaid_blocks_with_other_labels_are_a_warning() -> None:
    first = _ONE_ENTRY.format("$L__func_begin0", "$L__func_end0")
    m = assemble(base_tree(), extra=_LOC.format(first) + _LOC.format(_EMPTY_LIST))
    (f,) = only(run(m), "duplicate-section")
    assert f.severity == "warning" and "same offset in their functions" in f.message


def test_producer_debug_line_and_frame() -> None:
    m = assemble(base_tree(), extra=".section .debug_line {\n.b8 1\n}\n")
    (f,) = only(run(m), "producer-debug-line")
    assert at(f, m.line_of(r"\.section \.debug_line"))
    m = assemble(base_tree(), extra=".section .debug_frame {\n.b8 1\n}\n")
    (f,) = only(run(m), "producer-debug-frame")
    assert f.severity == "error"
    assert run(assemble(base_tree(), extra=".section .debug_frame {\n}\n")) == []


def test_file_index() -> None:
    header = HEADER.replace('.file 1 "/src/t.cu"', '.file 1 "/src/t.cu"\n.file 3 "/src/t.h"')
    m = assemble(base_tree(), header=header)
    (f,) = only(run(m), "file-index")
    assert at(f, 6) and f.severity == "warning"
    header = HEADER.replace('.file 1 "/src/t.cu"', '.file 1 "/src/t.cu"\n.file 1 "/src/t.h"')
    (f,) = only(run(assemble(base_tree(), header=header)), "file-index")
    assert f.severity == "error" and "twice" in f.message


@pytest.mark.parametrize(
    "line",
    [".b64 $L__func_begin0, $L__func_end0", ".b32 1, .debug_abbrev", ".b64 $L__tmp1-8", ".b32 $L__b-$L__a+4"],
)
def test_ptxas_syntax(line: str) -> None:
    extra = f".section .debug_str {{\n$L__a:\n.b8 97, 0\n$L__b:\n.b8 0\n{line}\n}}\n"
    m = assemble(base_tree(), extra=extra)
    found = [f for f in run(m) if f.rule == "ptxas-syntax"]
    assert [f.where for f in found] == [f"t.ptx:{m.line_of(re.escape(line))}"]


def test_info_label_difference() -> None:
    cu = base_tree()
    m = assemble(cu)
    n = int(m.lines[m.unit_line - 1].split()[1])
    lines = list(m.lines)
    lines[m.unit_line - 1] = ".b32 $L__end-$L__start\n$L__start:"
    end = max(i for i, l in enumerate(lines) if l == "}")
    lines[end:end] = ["$L__end:"]
    text = "\n".join(lines)
    (f,) = only(lint(text, filename="t.ptx"), "info-label-difference")
    assert f.where == f"t.ptx:{m.unit_line}"
    assert ptxdwarf.read(text=text).units[0].length == n


def test_address_size() -> None:
    m = assemble(base_tree(), header=HEADER.replace(".address_size 64", ".address_size 32"))
    (f,) = only(run(m), "address-size")
    assert at(f, 3)


@pytest.mark.parametrize("target", ["sm_50", "sm_52", "sm_53", "sm_60", "sm_35"])
def test_address_size_default(target: str) -> None:
    """No .address_size with .target sm_50, sm_52 or sm_53: ptxas 12.x takes the module as 32-bit
    there and refuses -g (quirk address-size-default); sm_60 is 64-bit, and an older .target
    does not say which architecture it is compiled for."""
    header = HEADER.replace(".address_size 64\n", "").replace(".target sm_75", f".target {target}")
    m = assemble(base_tree(), header=header)
    if target in ("sm_60", "sm_35"):
        assert run(m) == []
        return
    (f,) = only(run(m), "address-size-default")
    assert at(f, 2) and f"for {target}" in f.message
    assert lint(m.text, filename="t.ptx", ptxas_version="12.9")
    assert lint(m.text, filename="t.ptx", ptxas_version="13.0") == []


def test_non_ascii() -> None:
    m = assemble(base_tree(), header=HEADER.replace(".version 7.5", ".version 7.5 // \u00e9t\u00e9"))
    (f,) = only(run(m), "non-ascii")
    assert at(f, 1) and "2 non-ASCII" in f.message


def test_trailing_nul() -> None:
    """NUL bytes ending the text (NVRTC's C string end): one finding at the line they are on,
    for a ptxas that refuses them (13.0 and later), none for 12.x or without them."""
    m = assemble(base_tree())
    last = m.text.rstrip("\n").count("\n") + 1
    text = m.text.rstrip("\n") + "\0\0"
    (f,) = only(lint(text, filename="t.ptx"), "trailing-nul")
    assert f.where == f"t.ptx:{last}" and "2 NUL byte(s)" in f.message and f.severity == "error"
    (f,) = only(lint(text, filename="t.ptx", ptxas_version="13.5"), "trailing-nul")
    assert "ptxas 13.5 refuses" in f.message
    assert not [f for f in lint(text, filename="t.ptx", ptxas_version="12.9") if f.rule == "trailing-nul"]
    assert not [f for f in lint(m.text, filename="t.ptx") if f.rule == "trailing-nul"]


def test_debug_target_without_info() -> None:
    (f,) = only(lint(HEADER, filename="t.ptx"), "debug-target-without-info")
    assert f.where == "t.ptx:2"
    assert lint(HEADER.replace(".target sm_75, debug", ".target sm_75")) == []


def test_a_location_list_no_die_refers_to_is_no_finding() -> None:
    """A .debug_loc list no DIE refers to, with a __local_depot address (quirk orphan-depot-list:
    no ptxas measured fails on one)."""
    loc = ".section .debug_loc {\n.b64 $L__tmp0\n.b64 $L__tmp1\n.b16 9\n.b8 3\n.b64 __local_depot1\n.b64 0\n.b64 0\n}\n"
    assert run(assemble(base_tree(), extra=loc)) == []


def _bitfield_struct(*attrs: tuple[str, str, Any]) -> tuple[D, D]:
    """The base tree with a struct whose one member is a bit field with ``attrs``."""
    cu = base_tree()
    int_t = find(cu, "int")
    member = D("member", [(a, f, Ref(int_t) if v is None else v) for a, f, v in attrs])
    cu.children.append(D("structure_type", [("name", "string", "S"), ("byte_size", "data1", 4)], [member]))
    return cu, member


_NVCC_BITFIELD = [
    ("name", "strp", Sym(".debug_str", 4)),
    ("type", "ref4", None),
    ("byte_size", "data1", 4),
    ("bit_size", "data1", 3),
    ("bit_offset", "data1", 29),
    ("data_member_location", "block1", [b"\x23\x00"]),
]
_STR = ".section .debug_str {\n.b8 98, 0\n}\n"


def test_bitfield_member_order() -> None:
    cu, member = _bitfield_struct(*_NVCC_BITFIELD)
    m = assemble(cu, extra=_STR)
    (f,) = only(run(m), "bitfield-member-order")
    assert names(f, member) and at(f, member.attr_lines["data_member_location"])


@pytest.mark.parametrize(
    "order",
    [
        # data_member_location before the bit attributes (the builder's order)
        [0, 1, 5, 2, 3, 4],
        # the name after the bit attributes
        [1, 2, 3, 4, 5, 0],
    ],
    ids=["location-first", "name-last"],
)
def test_bitfield_member_order_clean(order: list[int]) -> None:
    cu, _ = _bitfield_struct(*[_NVCC_BITFIELD[i] for i in order])
    assert run(assemble(cu, extra=_STR)) == []


def test_bitfield_member_inline_name_clean() -> None:
    cu, _ = _bitfield_struct(("name", "string", "b"), *_NVCC_BITFIELD[1:])
    assert run(assemble(cu)) == []


def test_name_before_linkage_name() -> None:
    cu = base_tree()
    test = find(cu, "test")
    name, linkage = test.attr("name"), test.attr("MIPS_linkage_name")
    # nvcc 11.0's order: linkage name, name, ..., low_pc (ptxas -g compiles it)
    test.attrs = [linkage, name] + [a for a in test.attrs if a is not name and a is not linkage]
    assert run(assemble(cu)) == []
    test.attrs = [name, linkage] + [a for a in test.attrs if a is not name and a is not linkage]
    m = assemble(cu)
    (f,) = only(run(m), "name-before-linkage-name")
    assert names(f, test)
    # Without a depot variable the order does not matter.
    find(cu, "test", "v").set("location", regx("%r1"))
    find(cu, "test", "v").set("address_class", 2)
    assert run(assemble(cu)) == []


def _depot_pieces(*parts: bytes | int) -> list[Any]:
    """A location of ``parts``: bytes as they are, an int ``k`` as DW_OP_addr __local_depot1 +
    DW_OP_plus_uconst k."""
    out: list[Any] = []
    for part in parts:
        out += [part] if isinstance(part, bytes) else [b"\x03", Sym("__local_depot1"), bytes([0x23, part])]
    return out


@pytest.mark.parametrize(
    ("parts", "reported"),
    [
        ((0, b"\x93\x03"), True),  # a piece of 3 ends the expression: fatal on 12.9 and 13.0
        ((0, b"\x93\x10"), True),
        ((0, b"\x93\x0c\x30\x30\x30"), True),  # const4u wants 4 bytes, 3 follow
        ((0, b"\x93\x0c\x30\x30\x30\x30"), False),  # 4 follow: compiled
        ((0, b"\x93\x05", 5, b"\x93\x03"), True),  # the last piece
        ((0, b"\x93\x03", 3, b"\x93\x05"), False),  # the address after it fills the misread one
        ((0, b"\x93\x02", 2, b"\x93\x02"), False),  # sizes ptxas reads right
        ((b"\x93\x03", 0, b"\x93\x03"), False),  # after a piece of 3: compiled
    ],
)
def test_depot_in_pieces(parts: tuple[bytes | int, ...], reported: bool) -> None:
    """The shapes measured on ptxas 13.0 (docs/ptxas-facts.md, quirk depot-in-pieces)."""
    cu = base_tree()
    v = find(cu, "test", "v")
    v.set("location", _depot_pieces(*parts))
    m = assemble(cu)
    if reported:
        (f,) = only(run(m), "depot-in-pieces")
        assert names(f, v) and "12.9 and 13.0" in f.message
    else:
        assert run(m) == []


def test_depot_in_pieces_agrees_with_the_registry() -> None:
    """lint reports depot-in-pieces on the registry's cases that fail on some release, and on no
    case every release compiles."""
    from tools.ptxas_facts import cases_for

    cases = cases_for("depot-in-pieces")
    assert len(cases) >= 7
    for c in cases:
        ptx = c.ptx()
        text = ptx.decode("utf-8", "surrogateescape") if isinstance(ptx, bytes) else ptx
        found = any(f.rule == "depot-in-pieces" for f in lint(text, filename=f"{c.id}.ptx"))
        assert found == (set(c.holds_on) != set(MEASURED_ON)), c.id


# --- API ------------------------------------------------------------------------------


def test_finding_str_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cu = base_tree()
    b = find(cu, "add", "b")
    b.drop("address_class")
    m = assemble(cu)
    path = tmp_path / "t.ptx"
    path.write_text(m.text)
    (f,) = lint(m.text, filename=str(path))
    assert str(f) == (
        f"{path}:{b.attr_lines['location']}: warning[missing-address-class]: {f.message} "
        f"(DW_TAG_formal_parameter 'b' at 0x{b.offset:x}, add/b)"
    )
    assert main_lint(str(path), False) == 1
    assert capsys.readouterr().out == str(f) + "\n"
    assert main_lint(str(path), True) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc == [
        {
            "rule": "missing-address-class",
            "severity": "warning",
            "message": f.message,
            "where": f"{path}:{b.attr_lines['location']}",
            "die": f.die,
            "section": ".debug_info",
            "offset": f.offset,
        }
    ]
    clean = tmp_path / "clean.ptx"
    clean.write_text(assemble(base_tree()).text)
    assert main_lint(str(clean), False) == 0
    assert capsys.readouterr().out == ""
    assert main_lint(str(clean), True) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_syntax_errors_propagate() -> None:
    with pytest.raises(PtxSyntaxError):
        lint(".version 7.5\n.section .debug_info {\n.b8 1;\n}\n", filename="bad.ptx")


def test_lint_module_equals_lint() -> None:
    m = assemble(base_tree(), header=HEADER.replace(".target sm_75, debug", ".target sm_75"))
    module = ptxdwarf.ptx.parse_ptx(m.text, "t.ptx")
    assert lint_module(module) == lint(m.text, filename="t.ptx")


def test_rules_table() -> None:
    for rule, (severity, text) in RULES.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule)
        assert severity in ("error", "warning") and text


def test_finding_is_frozen() -> None:
    f = Finding("structure", "error", "m", "x:1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.rule = "x"  # type: ignore[misc]  # assigning to a frozen field is what the test tries
    assert str(f) == "x:1: error[structure]: m"
    assert (
        str(Finding("structure", "error", "m", "x", section=".debug_info", offset=16))
        == "x: error[structure]: m (.debug_info+0x10)"
    )


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`ptxdwarf lint FILE [--json]`: 0 clean, 1 findings, 2 bad input (one line on stderr)."""
    from ptxdwarf.cli import main

    clean = tmp_path / "clean.ptx"
    clean.write_text(assemble(base_tree()).text)
    assert main(["lint", str(clean)]) == 0
    fault = LINT / "faults" / "target-not-debug.ptx"
    assert main(["lint", str(fault)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and "warning[target-not-debug]" in out[0]
    assert main(["lint", "--json", str(fault)]) == 1
    assert [f["rule"] for f in json.loads(capsys.readouterr().out)] == ["target-not-debug"]
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 7.5\n.section .debug_info {\n.b8 1;\n}\n")
    assert main(["lint", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptxdwarf: error: ") and err.count("\n") == 1
    assert main(["lint", str(tmp_path / "missing.ptx")]) == 2


def test_fault_fixtures_are_current() -> None:
    """``make.py --check``: the fault fixtures are what the maker makes today (they are made
    through the encoder, so an encoder change must be followed by regenerating them)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(LINT / "make.py"), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_not_debuggable_scoped_initializer() -> None:
    cu = base_tree()
    m = assemble(cu)
    assert run(m) == []
    lines = list(m.lines)
    first_reg = next(i for i, line in enumerate(lines) if line.strip().startswith(".reg"))
    lines.insert(first_reg + 1, ".const .u32 k = 3;")
    text = "\n".join(lines)
    (f,) = only(lint(text, filename="t.ptx"), "not-debuggable")
    assert f.where == f"t.ptx:{first_reg + 2}" and f.severity == "error" and ".const k" in f.message
    assert lint(text.replace(".const .u32 k = 3;", ".const .u32 k;"), filename="t.ptx") == []


def test_dotted_symbol_in_info() -> None:
    """LLVM 14 writes ``.b64 __PRETTY_FUNCTION__._Z3foov``: ptxas cannot parse it; the reader
    keeps the name (dump and rewrite show it), lint names the syntax error and nothing else."""
    cu = base_tree()
    find(cu, "test", "p").set("location", [b"\x03", Sym("__PRETTY_FUNCTION__._Z3foov")])
    m = assemble(cu)
    (f,) = only(run(m), "ptxas-syntax")
    assert "Parsing error near '.'" in f.message
    block = ptxdwarf.ptx.parse_ptx(m.text).sections
    info_block = next(b for b in block if b.name == ".debug_info")
    assert any(r.symbol.name == "__PRETTY_FUNCTION__._Z3foov" for r in info_block.image.relocs)
    assert ".b64 __PRETTY_FUNCTION__._Z3foov" in ptxdwarf.rewrite(m.text)


@pytest.mark.parametrize("name", ["acc", "__t", "%acc", "p"])
def test_regx_names_without_percent_and_in_nested_scopes(name: str) -> None:
    """ptxas maps a register of any PTX name, declared in any { } scope of the function
    (harness case regx.name-without-percent); lint finds nothing to say."""
    header = HEADER.replace("\t.reg .b32 \t%r<4>;", f"\t.reg .b32 \t%r<4>;\n\t{{\n\t.reg .b32 {name};\n\t}}")
    cu = base_tree()
    a = find(cu, "add", "a")
    a.set("location", regx(name))
    m = assemble(cu, header=header)
    assert run(m) == []
    assert f"DW_OP_regx {name})" in ptxdwarf.dump.dump_text(ptxdwarf.read(text=m.text))


def test_not_debuggable_multiple_returns() -> None:
    header = HEADER + ".func (.reg .u32 a, .reg .pred b) two(.reg .u32 x)\n{\nret;\n}\n"
    m = assemble(base_tree(), header=header)
    (f,) = only(run(m), "not-debuggable")
    assert "returns 2 values" in f.message and f.severity == "error"


def test_a_loc_after_a_statement_on_its_line_is_read(ptxas_tool: Ptxas) -> None:
    """ptxas reads ``.loc`` after a ``;`` on the same line, and check finds what it made of one
    naming an undeclared file; lint must see it too."""
    text = (
        '.version 7.0\n.target sm_75\n.address_size 64\n\n.file 1 "a.cu"\n\n'
        ".visible .entry k()\n{\n\t.reg .b32 \t%r<3>;\n\t.loc 1 3 0\n"
        "\tmov.u32 \t%r1, 1; .loc 2 4 0\n\tadd.s32 \t%r2, %r1, 1;\n\tret;\n}\n"
    )
    found = [(f.rule, f.where) for f in lint(text, filename="m.ptx")]
    assert found == [("loc-file-undeclared", "m.ptx:11")]
    report = check(text, ptxas=ptxas_tool)
    assert [(d.what, d.ptx) for d in report.differences] == [("file 2", "no .file of that number")]


@pytest.mark.parametrize(
    "rule",
    sorted(
        q.lint_rule
        for q in QUIRKS
        if q.lint_rule and q.holds_on and q.holds_on != MEASURED_ON and len(quirks_for_rule(q.lint_rule)) == 1
    ),
)
def test_a_trap_is_reported_for_the_releases_it_was_measured_on(rule: str) -> None:
    """With ``ptxas_version``, a rule that reports a ptxas trap finds its fault fixture for the
    releases where the registry measured its quirk, and nothing for the others (ptxas 12.0 and
    12.4 take an abbreviation code past the table, which 12.9 and 13.x refuse). non-ascii, the
    rule of two quirks, has tests of its own."""
    text = (FIXTURES / "lint" / "faults" / f"{rule}.ptx").read_text(
        encoding="utf-8", errors="surrogateescape"
    )
    for release in MEASURED_ON:
        expected = quirks_for_rule(rule)[0].holds_for(release)
        found = [f for f in lint(text, filename="f.ptx", ptxas_version=release) if f.rule == rule]
        assert bool(found) == expected, (rule, release)
    assert [f for f in lint(text, filename="f.ptx") if f.rule == rule]


@pytest.mark.ptxas
def test_the_label_after_a_dropped_one_is_moved_too(tmp_path: Path) -> None:
    """numba's shared_local (debug=True, opt=True): ptxas 13.5 drops $L__tmp7 and relocates
    $L__tmp8, the label its block leads to, to where $L__tmp7 belonged, before the code of the lines that
    precede $L__tmp8 (read from .nv_debug_line_sass); lint says so with the dropped label."""
    import subprocess

    from ptxdwarf.cuda.ptxas import wheel_ptxas
    from ptxdwarf.dwarf.lines import read_line_programs

    path = FIXTURES / "corpus" / "numba-nvvm-13.5" / "shared_local.debugopt.ptx"
    text = path.read_text()
    (finding,) = [f for f in ptxdwarf.lint.lint(text) if f.rule == "label-at-line-zero"]
    assert (
        finding.message.startswith("$L__tmp7 ")
        and "also relocates $L__tmp8, the label its block leads to" in finding.message
    )

    wheel = wheel_ptxas()
    assert wheel, "the nvidia-cuda-nvcc wheel's ptxas is not installed"
    out = tmp_path / "shared_local.cubin"
    subprocess.run([wheel[0], "-arch", "sm_75", "-g", "-c", str(path), "-o", str(out)], check=True)
    found = ptxdwarf.cuda.cubin_images(out.read_bytes())
    ptx_lists = ptxdwarf.ptx.debug.decode_module(ptxdwarf.ptx.parse_ptx(text)).locations or []
    cubin_lists = ptxdwarf.cuda.read_cubin(out).load_all().locations or []
    placed = {
        cast(Symbol, p).name: cast(Symbol, c)
        for a, b in zip(ptx_lists, cubin_lists, strict=True)
        for (b0, e0, _), (b1, e1, _) in zip(a.entries, b.entries, strict=False)
        for p, c in ((b0, b1), (e0, e1))
    }
    moved = placed["$L__tmp8"]
    lines = text.split("\n")
    label_line = lines.index("$L__tmp8:") + 1
    assert found.line_sass is not None
    rows = [r for p in read_line_programs(found.line_sass) for r in p.rows if r.symbol == moved.name]
    before = min(r.address for r in rows if r.line == label_line - 1)  # the instruction above the label
    after = min(r.address for r in rows if r.line == label_line + 1)  # the one it stands before
    assert moved.addend < before < after


# --- severities from evidence (issue 34) ----------------------------------------------------


def _harness_module(case_id: str) -> str:
    from tools.ptxas_facts import CASES

    (case,) = [c for c in CASES if c.id == case_id]
    text = case.ptx()
    assert isinstance(text, str)
    return text


def test_generic_class_of_a_global_variable_is_a_warning() -> None:
    """LLVM 22's pattern, made by hand (the harness's module of case
    address-class-as-written.global-as-generic: class 12 at DW_OP_addr of a .global variable,
    which ptxas relocates to the variable's address): a warning, since what a debugger reads
    there is not measured; class 5 at a .shared variable (LLVM 14's) stays an error."""
    for case_id, severity in (
        ("address-class-as-written.global-as-generic", "warning"),
        ("address-class-as-written.shared-as-global", "error"),
    ):
        found = [f.severity for f in lint(_harness_module(case_id)) if f.rule == "address-class-space"]
        assert found == [severity], case_id


def test_severities_come_from_the_registry_and_errors_from_measurements() -> None:
    """Every rule's severity is the quirk registry's; a rule is an error only with a measured
    consequence (a quirk of it that holds on some release, or a line of evidence of its own that
    does not say 'not measured'); the rules of debugger behaviour nothing here measures warn."""
    from ptxdwarf.cuda.quirks import RULE_EVIDENCE, rule_evidence

    assert set(RULE_EVIDENCE) == set(RULES)
    for rule, (severity, _) in RULES.items():
        assert RULE_EVIDENCE[rule][0] == severity, rule
        evidence = rule_evidence(rule)
        assert evidence and evidence != "nothing", rule
        if severity == "error":
            own = RULE_EVIDENCE[rule][1]
            measured = any(q.holds_on for q in quirks_for_rule(rule))
            assert (own is not None and not own.startswith("not measured")) or measured, rule
    for rule in ("missing-address-class", "address-class-range"):
        assert RULES[rule][0] == "warning" and rule_evidence(rule).startswith("not measured")


@pytest.mark.parametrize(
    "name", ["readable.G.sm_75.ptx", "coop_reduce.G.sm_75.ptx", "bf16_convert.G.sm_75.ptx"]
)
def test_the_dwarf_checks_need_no_text_in_a_forked_child(name: str) -> None:
    """The DWARF checks, as the forked child runs them (the module's text let go first), give
    the findings they give with the text: none reads it (a child that fails is run again in
    the parent, which then does the work twice)."""
    from ptxdwarf.lint.context import LintContext
    from ptxdwarf.lint.run import _check_debug_info

    text = (FIXTURES / "nvcc" / name).read_text()
    found = []
    for forked in (False, True):
        ctx = LintContext(ptxdwarf.ptx.parse_ptx(text, name))
        _check_debug_info(ctx, forked=forked)
        found.append([(f.rule, f.line, f.message) for f in ctx.findings])
    assert found[0] == found[1]
