"""``ptxdwarf fix``, ``strip`` and ``rewrite --remap-path`` against the real ptxas.

Each repair is tested on a file ptxas fails on (or gets wrong: check reports it) without
it: fix -> ptxas -g accepts -> check consistent -> the same DIE tree (tags, names,
attribute meanings) as the input. The expected outcomes come from ptxas and check, never
from the repair code.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS as CORPUS_FILES
from conftest import MOVED_LABELS, ROOT

from ptxdwarf.api import read_ptx
from ptxdwarf.check import check
from ptxdwarf.cli import main
from ptxdwarf.cuda.ptxas import Ptxas, PtxasFailed, find_ptxas
from ptxdwarf.cuda.quirks import QUIRKS
from ptxdwarf.cuda.quirks import quirk as quirks_quirk
from ptxdwarf.dwarf.constants import FORM
from ptxdwarf.dwarf.image import Block
from ptxdwarf.dwarf.model import DIE, Attribute
from ptxdwarf.errors import PtxDwarfError, UsageError
from ptxdwarf.files import load_ptx
from ptxdwarf.fix import fix
from ptxdwarf.lint import Finding, lint, lint_module
from ptxdwarf.lint.header import version_needs
from ptxdwarf.ptx import parse_ptx
from ptxdwarf.ptx.edits import TextEdits
from ptxdwarf.repair import remap_paths, repairs_of
from ptxdwarf.repair.registry import Repair, SectionJob, TextJob, repair
from ptxdwarf.repair.sections import merge_blocks, numbers_outside_info
from ptxdwarf.repair.text import (
    anchor_first_labels,
    double_dropped_labels,
    drop_trailing_nul,
    escape_comments,
    join_file_strings,
    raise_version,
    rename_dotted_symbols,
)
from ptxdwarf.strip import strip

FAULTS = ROOT / "fixtures" / "lint" / "faults"
LLVM = ROOT / "fixtures" / "corpus" / "llvm-tests"


def _ptxas_for(text: str) -> Ptxas:
    return find_ptxas(version=parse_ptx(text).version)


def _compile(text: str) -> str | None:
    """None when ptxas -g compiles ``text``; else its first message."""
    ptxas = _ptxas_for(text)
    arch, _ = ptxas.choose_arch(parse_ptx(text).target, None)
    try:
        ptxas.compile(text, arch=arch, debug=True, relocatable=True)
    except PtxasFailed as exc:
        return str(exc).splitlines()[0] if str(exc) else "failed"
    return None


def _value(attr: Attribute, index: dict[int, int]) -> Any:
    """What an attribute means, whatever its form: references by the target's place in the
    tree, blocks by bytes and symbols, flags and constants as integers, strings as text."""
    while attr.form == FORM.indirect and isinstance(attr.value, Attribute):
        attr = attr.value
    symbols = tuple(str(r.symbol) for r in attr.relocs)
    if attr.is_reference:
        target = attr.target if isinstance(attr.target, int) else None
        return ("ref", None if target is None else index.get(target, target))
    value = attr.value
    if isinstance(value, Block):
        return ("block", bytes(value), symbols)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        return value
    if symbols:
        return ("symbol", symbols)
    return value


def tree(text: str) -> list[tuple[int, str, list[tuple[str, Any]]]]:
    """Every DIE in order: depth, tag, and its attributes sorted by name with their meanings;
    numbers as written (a .b64 of 2**32 or more whole, not what ptxas keeps of it)."""
    from dataclasses import replace

    from ptxdwarf.dwarf.decode import decode_sections

    images = {}
    for name, image in parse_ptx(text).images(debug_only=True).items():
        data = bytearray(image.data)
        for offset, value in image.wide_values.items():
            data[offset : offset + 8] = value.to_bytes(8, "little")
        images[name] = replace(image, data=bytes(data))
    info = decode_sections(images, source="ptx").load_all()
    dies = list(info.iter_dies())
    index = {d.offset: i for i, d in enumerate(dies)}

    def depth(d: DIE) -> int:
        n = 0
        while d.parent is not None:
            d, n = d.parent, n + 1
        return n

    return [(depth(d), d.tag_str, sorted((a.name_str, _value(a, index)) for a in d.attributes)) for d in dies]


def _dotted_symbol(*names: str) -> str:
    """nvcc's rich module with its global g_counter (or each global of ``names``) named as a
    producer names a global whose source name has a '.' (g_counter.x -> g_counter_$_x), the
    debug info using the dotted name."""
    text = load_ptx(ROOT / "fixtures" / "nvcc" / "rich.sm_75.ptx")
    for name in names or ("g_counter",):
        text = re.sub(rf"\b{name}\b", f"{name}_$_x", text)
        text = re.sub(rf"(\.b64\s+){name}_\$_x\b", rf"\g<1>{name}.x", text)
    return text


def _version_64() -> str:
    """numba-cuda's debug output declared as PTX ISA 6.4, whose code it is valid for but whose
    .debug_str labels need 7.0."""
    text = load_ptx(ROOT / "fixtures" / "corpus" / "numba" / "saxpy.debug.sm_75.ptx")
    return re.sub(r"^\.version .*$", ".version 6.4", text, count=1, flags=re.M)


def _corpus(name: str) -> str:
    return load_ptx(ROOT / "fixtures" / "corpus" / name)


def _text(name: str) -> str:
    return load_ptx(FAULTS / f"{name}.ptx")


#: (id, the input, the lint rule fix must repair, whether ptxas -g refuses the input outright)
CASES: list[tuple[str, Any, str, bool]] = [
    ("file-two-strings", lambda: _text("file-two-strings"), "file-two-strings", True),
    ("version-too-low", lambda: _version_64(), "version-too-low", True),
    ("ptxas-syntax.list", lambda: _text("ptxas-syntax"), "ptxas-syntax", True),
    ("ptxas-syntax.dotted", _dotted_symbol, "ptxas-syntax", True),
    ("dwarf4-form", lambda: _text("dwarf4-form"), "dwarf4-form", True),
    ("abbrev-code-order", lambda: _text("abbrev-code-order"), "abbrev-code-order", True),
    ("ref-addr-size", lambda: _text("ref-addr-size"), "ref-addr-size", True),
    ("name-before-linkage-name", lambda: _text("name-before-linkage-name"), "name-before-linkage-name", True),
    ("info-label-difference", lambda: _text("info-label-difference"), "info-label-difference", True),
    ("bitfield-member-order", lambda: _text("bitfield-member-order"), "bitfield-member-order", True),
    ("trailing-nul", lambda: _text("trailing-nul"), "trailing-nul", True),
    # ptxas compiles these, and gets the debug info wrong: check says so
    ("strp-label-reused", lambda: _text("strp-label-reused"), "strp-label-reused", False),
    ("wide-value", lambda: _text("wide-value"), "wide-value", False),
    ("label-at-line-zero", lambda: _text("label-at-line-zero"), "label-at-line-zero", False),
    ("first-label-at-zero", lambda: _text("first-label-at-zero"), "first-label-at-zero", False),
    *(
        (f"label-at-line-zero.{name}", lambda name=name: _corpus(name), "label-at-line-zero", False)
        for name in ("numba-nvvm-13.5/loops.debug.ptx", "numba-nvvm-13.5/loops.debugopt.ptx")
    ),
    # the dropped labels' blocks end with a bra.uni to the label ptxas moves
    (
        "label-at-line-zero.coop_reduce",
        lambda: load_ptx(ROOT / "fixtures" / "nvcc" / "coop_reduce.G.sm_75.ptx"),
        "label-at-line-zero",
        False,
    ),
]


@pytest.mark.parametrize("make,rule,refused", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.ptxas
@pytest.mark.slow
def test_repair(make: Any, rule: str, refused: bool) -> None:
    text = make()
    assert rule in {f.rule for f in lint(text)}
    before = _compile(text)
    if refused:
        assert before is not None, "ptxas must refuse the input for this test to mean anything"
    else:
        # strp-label-reused: now and then ptxas fails on it instead (the quirk's fact)
        assert before is None or rule == "strp-label-reused", before
        try:
            assert not check(text).consistent
        except PtxasFailed:
            assert rule == "strp-label-reused"
    result = fix(text)
    assert rule in {r.rule for r in result.repairs}
    assert rule not in {f.rule for f in result.remaining}
    assert result.ok, "\n".join(map(str, result.errors))
    assert _compile(result.text) is None
    report = check(result.text)
    assert report.consistent, "\n".join(map(str, report.differences))
    expected = tree(text)
    if rule == "ptxas-syntax" and "g_counter" in text:
        expected = tree(text.replace("g_counter.x", "g_counter_$_x"))
    assert tree(result.text) == expected


@pytest.mark.parametrize(
    "make",
    [
        lambda: _text("label-at-line-zero"),
        lambda: _text("first-label-at-zero"),
        lambda: _corpus("numba-nvvm-13.5/shared_local.debugopt.ptx"),
        lambda: load_ptx(ROOT / "fixtures" / "nvcc" / "coop_reduce.G.sm_75.ptx"),
    ],
    ids=["label-at-line-zero", "first-label-at-zero", "shared_local.debugopt", "coop_reduce"],
)
@pytest.mark.ptxas
def test_label_repairs_keep_the_code(make: Any, tmp_path: Path) -> None:
    """A label added to keep another where it stands, and a branch sent to it, emit no other
    code: the SASS is the same."""
    text = make()
    result = fix(text)
    assert result.repairs and result.ok
    assert _code(_ptxas_run(result.text, tmp_path, "-g")) == _code(_ptxas_run(text, tmp_path, "-g"))
    assert check(result.text).consistent


@pytest.mark.parametrize("path", sorted(LLVM.glob("*.rejected.ptx")), ids=lambda p: p.name)
@pytest.mark.ptxas
@pytest.mark.slow
def test_llvm_outputs(path: Path) -> None:
    """LLVM 14's output for LLVM's NVPTX debug-info tests: ptxas refuses each as written."""
    text = load_ptx(path)
    assert _compile(text) is not None
    result = fix(text, filename=str(path))
    assert _compile(result.text) is None
    assert check(result.text).status in ("consistent", "line-info-only")
    assert not result.remaining
    _assert_same_tree(text, result)


def _assert_same_tree(text: str, result: Any) -> None:
    """The DIE tree of the fixed text is the input's, but for what the repairs that change the
    description say they changed: a DW_AT_address_class written as the symbol's state space
    says, a reference renamed to the name the module defines for it."""
    before, after = tree(text), tree(result.text)
    rules = {r.rule for r in result.repairs}
    renamed = {
        new: old
        for r in result.repairs
        if r.rule == "undefined-symbol"
        for old, new in [r.change.split(" (")[0].split(" -> ")]
    }
    if "address-class-space" in rules:
        assert after != before
        before, after = _without_classes(before), _without_classes(after)
    if renamed:
        after = [(d, t, [(n, _renamed(v, renamed)) for n, v in attrs]) for d, t, attrs in after]
    assert after == before


def _renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, tuple):
        return tuple(_renamed(v, names) for v in value)
    return names.get(value, value) if isinstance(value, str) else value


def _without_classes(
    dies: list[tuple[int, str, list[tuple[str, Any]]]],
) -> list[tuple[int, str, list[tuple[str, Any]]]]:
    return [(depth, tag, [a for a in attrs if a[0] != "DW_AT_address_class"]) for depth, tag, attrs in dies]


@pytest.mark.parametrize("name", ["file-two-strings", "dwarf4-form", "abbrev-code-order", "ptxas-syntax"])
def test_idempotent(name: str) -> None:
    once = fix(_text(name)).text
    again = fix(once)
    assert again.text == once and again.repairs == []


@pytest.mark.parametrize(
    "path",
    [
        *[
            p
            for p in sorted((ROOT / "fixtures" / "nvcc").glob("*.ptx"))
            if f"nvcc/{p.name}" not in MOVED_LABELS
        ][:6],
        *sorted(LLVM.glob("*.fixed.ptx"))[:4],
    ],
)
def test_clean_file_unchanged(path: Path) -> None:
    text = load_ptx(path)
    if lint(text):
        pytest.skip("lint has findings here")
    result = fix(text)
    assert result.text == text and result.repairs == []


def test_unrepairable_is_reported() -> None:
    """A code label plus N outside .debug_info has no number to write: it stays, named."""
    result = fix(_text("symbol-outside-info"))
    assert "symbol-outside-info" in {f.rule for f in result.remaining}


def test_every_repair_belongs_to_a_quirk_with_a_lint_rule() -> None:
    for q in QUIRKS:
        assert [r.name for r in repairs_of(q)] == list(q.repairs), q.id
        if q.repairs:
            assert q.lint_rule is not None, q.id


def test_a_repair_registers_for_a_quirk_that_names_it() -> None:
    def not_named(_job: SectionJob, _findings: list[Finding]) -> list[Repair]:
        return []

    with pytest.raises(ValueError, match="does not name the repair not_named"):
        repair("wide-literal-truncated", phase="image")(not_named)
    with pytest.raises(ValueError, match="unknown repair phase"):
        repair("wide-literal-truncated", phase="nosuch")


@pytest.mark.parametrize(
    ("rule", "apply"), [("duplicate-section", merge_blocks), ("symbol-outside-info", numbers_outside_info)]
)
def test_a_repair_repairs_what_its_findings_name(
    rule: str, apply: Callable[[SectionJob, list[Finding]], list[Repair]]
) -> None:
    """Given a part of lint's findings, a section repair repairs what those name, not the rest."""
    module = parse_ptx(_corpus("llvm-tests/language-dialect.O0.rejected.ptx"))
    findings = [f for f in lint_module(module) if f.rule == rule]

    def repaired(given: list[Finding]) -> list[str]:
        job = SectionJob(module, dict(module.images(debug_only=True).items()))
        return [str(r) for r in apply(job, given)]

    every = repaired(findings)
    first = repaired(findings[:1])
    assert first and set(first) < set(every)
    assert repaired([]) == []


def _first_labels_misplaced() -> str:
    """The first-label-at-zero fault with _Z3fooii's top label moved after its first
    instructions: the first label of both functions is one ptxas misplaces."""
    text = _text("first-label-at-zero").replace("$L__func_begin0:\n", "", 1)
    return text.replace("$L__tmp0:\n", "$L__func_begin0:\n$L__tmp0:\n", 1)


TextRepair = Callable[[TextJob, list[Finding]], list[Repair]]

#: (lint rule, its text repair, a module with findings of the rule)
TEXT_REPAIRS: list[tuple[str, TextRepair, Callable[[], str]]] = [
    ("file-two-strings", join_file_strings, lambda: _corpus("llvm-tests/debug-info.O0.rejected.ptx")),
    ("ptxas-syntax", rename_dotted_symbols, lambda: _dotted_symbol("g_counter", "g_vec3")),
    ("first-label-at-zero", anchor_first_labels, _first_labels_misplaced),
    (
        "label-at-line-zero",
        double_dropped_labels,
        lambda: load_ptx(ROOT / "fixtures" / "nvcc" / "coop_reduce.G.sm_75.ptx"),
    ),
    ("version-too-low", raise_version, lambda: _corpus("llvm-tests/language-dialect.O0.rejected.ptx")),
    ("non-ascii", escape_comments, lambda: _text("non-ascii")),
    ("trailing-nul", drop_trailing_nul, lambda: _text("trailing-nul")),
]


def _text_repaired(apply: TextRepair, text: str, given: list[Finding]) -> list[Repair]:
    """What ``apply`` repairs in ``text`` given the findings ``given``; it edits the text just
    when it says it repairs something."""
    job = TextJob(parse_ptx(text), TextEdits(text))
    made = apply(job, given)
    assert bool(made) == bool(len(job.edits))
    return made


@pytest.mark.parametrize(("rule", "apply", "make"), TEXT_REPAIRS, ids=[c[0] for c in TEXT_REPAIRS])
def test_a_text_repair_given_no_finding_repairs_nothing(
    rule: str, apply: TextRepair, make: Callable[[], str]
) -> None:
    text = make()
    findings = [f for f in lint_module(parse_ptx(text)) if f.rule == rule]
    assert findings and _text_repaired(apply, text, findings)
    assert _text_repaired(apply, text, []) == []


@pytest.mark.parametrize(("rule", "apply", "make"), TEXT_REPAIRS[:4], ids=[c[0] for c in TEXT_REPAIRS[:4]])
def test_a_text_repair_repairs_the_places_its_findings_name(
    rule: str, apply: TextRepair, make: Callable[[], str]
) -> None:
    """Given a part of lint's findings, a text repair edits the places those name, not the rest."""
    text = make()
    findings = [f for f in lint_module(parse_ptx(text)) if f.rule == rule]
    every = {r.where for r in _text_repaired(apply, text, findings)}
    first = {r.where for r in _text_repaired(apply, text, findings[:1])}
    assert first and first < every


def test_version_raised_to_what_its_findings_need() -> None:
    """Given only the findings of section labels (7.0), not those of label differences (7.5),
    ``.version`` goes to 7.0."""
    text = _corpus("llvm-tests/language-dialect.O0.rejected.ptx")
    module = parse_ptx(text)
    findings = [f for f in lint_module(module) if f.rule == "version-too-low"]
    newer = {line for version, _, line in version_needs(module) if version > (7, 0)}
    labels = [f for f in findings if f.line not in newer]
    assert labels and len(labels) < len(findings)
    assert [r.change.split(" (")[0] for r in _text_repaired(raise_version, text, labels)] == [
        ".version 3.2 -> 7.0"
    ]
    assert [r.change.split(" (")[0] for r in _text_repaired(raise_version, text, findings)] == [
        ".version 3.2 -> 7.5"
    ]


def test_cli_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.ptx"
    assert main(["fix", str(FAULTS / "file-two-strings.ptx"), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "fixed[file-two-strings]" in err
    assert '"/tmp/ptxdwarf-fixtures/src/call_example.cu"' in out.read_text()
    assert main(["fix", str(FAULTS / "regx-undeclared.ptx"), "-o", str(out)]) == 1
    assert "not repaired:" in capsys.readouterr().err
    assert main(["fix", str(tmp_path / "missing.ptx")]) == 2
    assert main(["fix", str(out), "--ptxas-version", "x"]) == 2


# --- strip -----------------------------------------------------------------------------

STRIP_INPUTS = [
    ROOT / "fixtures" / "nvcc" / "rich.sm_75.ptx",
    ROOT / "fixtures" / "corpus" / "numba" / "saxpy.debug.sm_75.ptx",
    ROOT / "fixtures" / "nvcc" / "rich.lineinfo.sm_75.ptx",
    *sorted((ROOT / "fixtures" / "corpus" / "triton").glob("*.ptx"))[:2],
]


def _ptxas_run(text: str, tmp: Path, *flags: str) -> Path:
    ptxas = _ptxas_for(text)
    src = tmp / "s.ptx"
    src.write_text(text)
    arch, _ = ptxas.choose_arch(parse_ptx(text).target, None)
    out = tmp / "s.cubin"
    subprocess.run([ptxas.path, *flags, f"-arch={arch}", "-c", str(src), "-o", str(out)], check=True)
    return out


_FRAME = {".debug_frame", ".rel.debug_frame", ".rela.debug_frame"}


def _sections(cubin: Path) -> set[str]:
    from elftools.elf.elffile import ELFFile

    with cubin.open("rb") as fh:
        return {s.name for s in ELFFile(fh).iter_sections()}


@pytest.mark.parametrize("path", STRIP_INPUTS, ids=lambda p: p.parent.name + "/" + p.name)
@pytest.mark.ptxas
def test_strip(path: Path, tmp_path: Path) -> None:
    text = load_ptx(path)
    bare = strip(text)
    assert not re.search(r"\.section\s+\.debug_|^\s*\.(loc|file)\b|,\s*debug\b", bare, re.M)
    # ptxas writes a .debug_frame of its own for any module; nothing else of debug info is left
    assert {s for s in _sections(_ptxas_run(bare, tmp_path)) if "debug" in s} <= _FRAME
    lines = strip(text, keep_lines=True)
    assert not re.search(r"\.section\s+\.debug_(?!str\b)|,\s*debug\b", lines, re.M)
    assert len(re.findall(r"^\s*\.loc\b", lines, re.M)) == len(re.findall(r"^\s*\.loc\b", text, re.M))
    sections = _sections(_ptxas_run(lines, tmp_path, "-lineinfo"))
    assert ".debug_line" in sections and ".debug_info" not in sections
    # nothing but debug information goes: the code is the same
    code = [line for line in bare.splitlines() if line.strip()]
    assert code == [line for line in strip(lines).splitlines() if line.strip()]


MID_LINE_LOC = """.version 7.0
.target sm_75
.address_size 64

.file 1 "a.cu"

.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .b32 	%r<3>;
	.loc 1 3 0
	mov.u32 	%r1, 1; .loc 1 4 0
	add.s32 	%r2, %r1, 1; { .loc 1 5 0
	ret; }
}
"""


def test_strip_takes_a_loc_that_follows_a_statement_on_its_line(ptxas_tool: Ptxas) -> None:
    """ptxas reads a ``.loc`` after the ``;`` of a statement on the same line: left behind by
    strip, it warns that a .loc has no .file (measured with ptxas 13.0)."""
    assert ptxas_tool.compile(MID_LINE_LOC, arch="sm_75", debug=False).messages == []
    bare = strip(MID_LINE_LOC)
    assert ".loc" not in bare and ".file" not in bare
    assert "\tmov.u32 \t%r1, 1;\n\tadd.s32 \t%r2, %r1, 1; {\n\tret; }\n" in bare
    assert ptxas_tool.compile(bare, arch="sm_75", debug=False).messages == []
    # what strip removed is what ptxas warns about when only the .file goes
    no_file = MID_LINE_LOC.replace('.file 1 "a.cu"\n', "")
    assert [m.severity for m in ptxas_tool.compile(no_file, arch="sm_75", debug=False).messages] == [
        "warning"
    ]


def _code(cubin: Path) -> dict[str, bytes]:
    """The SASS of each function: the cubin's ``.text.NAME`` sections."""
    from elftools.elf.elffile import ELFFile

    with cubin.open("rb") as fh:
        return {s.name: s.data() for s in ELFFile(fh).iter_sections() if s.name.startswith(".text.")}


@pytest.mark.parametrize(
    "path",
    [
        ROOT / "fixtures" / "corpus" / "numba" / "saxpy.lineinfo.sm_75.ptx",
        *sorted((ROOT / "fixtures" / "corpus" / "triton").glob("*.ptx"))[:1],
        ROOT / "fixtures" / "nvcc" / "rich.lineinfo.sm_75.ptx",
    ],
    ids=lambda p: p.parent.name + "/" + p.name,
)
@pytest.mark.ptxas
def test_strip_same_sass(path: Path, tmp_path: Path) -> None:
    """Stripped line-table code compiles to the SASS its input compiles to the same way
    (plain, and with -lineinfo). Not for -G input: ptxas -g's code depends on the DWARF
    sections themselves (measured: nvcc's rich.sm_75 gives 36,736 bytes of SASS stripped
    and 37,376 as written, both with -g), so there is nothing the same to compare."""
    text = load_ptx(path)
    assert not parse_ptx(text).has_debug_target
    assert _code(_ptxas_run(strip(text, keep_lines=True), tmp_path)) == _code(_ptxas_run(text, tmp_path))
    assert _code(_ptxas_run(strip(text, keep_lines=True), tmp_path, "-lineinfo")) == _code(
        _ptxas_run(text, tmp_path, "-lineinfo")
    )
    assert _code(_ptxas_run(strip(text), tmp_path)) == _code(_ptxas_run(text, tmp_path))


# --- remap -----------------------------------------------------------------------------


@pytest.mark.ptxas
def test_remap_paths() -> None:
    text = load_ptx(ROOT / "fixtures" / "nvcc" / "call_example.sm_75.ptx")
    new, changed = remap_paths(text, [("/tmp/ptxdwarf-fixtures/", "/home/me/")])
    assert changed >= 2
    assert '"/home/me/src/call_example.cu"' in new
    info = read_ptx(new).load_all()
    cu = info.units[0].die
    assert cu is not None
    assert all(not str(v).startswith("/tmp/ptxdwarf-fixtures") for v in (cu.get("name"), cu.get("comp_dir")))
    assert lint(new) == lint(text)
    assert _compile(new) is None and check(new).consistent
    assert remap_paths(text, [("/nowhere/", "/x/")]) == (text, 0)


def test_remap_cli(tmp_path: Path) -> None:
    out = tmp_path / "o.ptx"
    src = str(ROOT / "fixtures" / "nvcc" / "call_example.sm_75.ptx")
    assert main(["rewrite", src, "--remap-path", "/tmp/ptxdwarf-fixtures=/srv", "-o", str(out)]) == 0
    assert '"/srv/src/call_example.cu"' in out.read_text()
    assert main(["rewrite", src, "--remap-path", "nothing"]) == 2
    with pytest.raises(UsageError):
        from ptxdwarf.repair import parse_remap

        parse_remap("=x")


# --- the outside corpus ------------------------------------------------------------------


_ALL_FIXTURES = sorted(
    {*CORPUS_FILES, *(p for p in (ROOT / "fixtures").glob("*/*.ptx") if p.parent.name != "corpus")}
)


@pytest.mark.parametrize("path", _ALL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.ptxas
@pytest.mark.slow
def test_corpus(path: Path) -> None:
    """Every PTX fixture and file of the outside corpus: a file lint finds clean is left as it
    is; any other is fixed once and for all (a second fix changes nothing); what was repaired
    compiles, check finds it consistent, and its DIE tree is the input's."""
    text = load_ptx(path)
    try:
        findings = lint(text, filename=str(path))
    except PtxDwarfError:  # a fixture of bad input: fix refuses it as lint does
        with pytest.raises(PtxDwarfError):
            fix(text, filename=str(path))
        return
    result = fix(text, filename=str(path))
    if not findings:
        assert result.text == text and not result.repairs
        return
    again = fix(result.text, filename=str(path))
    assert again.text == result.text and not again.repairs
    if result.repairs and result.ok:
        assert _compile(result.text) is None
        assert check(result.text).status in (
            ("consistent", "line-info-only") if _has_debug(text) else ("no-debug-info",)
        )
        _assert_same_tree(text, result)


def _has_debug(text: str) -> bool:
    """Whether the PTX has debug sections or ``.loc`` lines (Warp's release PTX has neither)."""
    sections = any(b.name.startswith(".debug_") for b in parse_ptx(text).sections)
    return sections or re.search(r"^\s*\.loc\s", text, re.M) is not None


# --- repairs measured on the harness's modules ----------------------------------------------


def _harness_text(case_id: str) -> str:
    from tools.ptxas_facts import CASES as HARNESS

    made = next(c for c in HARNESS if c.id == case_id).ptx()
    return made.decode() if isinstance(made, bytes) else made


def _cubin_sections(text: str) -> list[tuple[str, bytes]]:
    """The sections of the cubin ``ptxas -g -c`` makes of ``text``: (name, bytes), in order."""
    import io

    from elftools.elf.elffile import ELFFile

    ptxas = _ptxas_for(text)
    arch, _ = ptxas.choose_arch(parse_ptx(text).target, None)
    cubin = ptxas.compile(text, arch=arch, debug=True, relocatable=True).cubin
    return [(s.name, s.data()) for s in ELFFile(io.BytesIO(cubin)).iter_sections()]


def _section(text: str, name: str) -> bytes:
    return next(data for n, data in _cubin_sections(text) if n == name)


@pytest.mark.parametrize(
    "case_id,section,before,after",
    [
        # ptxas writes 0 for a section name plus N and for a data label outside .debug_info
        ("symbol-outside-info.section-plus-n", ".debug_pubnames", b"\0\0\0\0", b"\4\0\0\0"),
        ("symbol-outside-info.data-label", ".debug_loc", b"\0\0\0\0", b"\2\0\0\0"),
        # ptxas drops a second .debug_str block
        ("duplicate-section.second-str-dropped", ".debug_str", b"\1\2", b"\1\2\3\4"),
    ],
)
@pytest.mark.ptxas
def test_repair_in_the_cubin(case_id: str, section: str, before: bytes, after: bytes) -> None:
    text = _harness_text(case_id)
    assert _section(text, section)[: len(after)].startswith(before)
    fixed = fix(text).text
    assert _section(fixed, section)[: len(after)] == after


@pytest.mark.ptxas
def test_second_info_block_merged() -> None:
    """ptxas makes a second .debug_info block a second ELF section of that name; merged, one."""
    text = _harness_text("duplicate-section.second-info")
    assert [n for n, _ in _cubin_sections(text)].count(".debug_info") == 2
    fixed = fix(text).text
    assert [n for n, _ in _cubin_sections(fixed)].count(".debug_info") == 1
    assert check(fixed).consistent


@pytest.mark.ptxas
def test_non_ascii_comment_for_the_ptxas_found() -> None:
    """Escaped for a ptxas that rejects non-ASCII comments (13.0); left for one that takes them."""
    text = _text("non-ascii")
    version = find_ptxas().version
    result = fix(text, ptxas_version=version)
    if quirks_quirk("non-ascii-comment").holds_for(version):
        assert _compile(text) is not None
        assert [r.rule for r in result.repairs] == ["non-ascii"]
        assert _compile(result.text) is None and result.text.isascii()
    else:
        assert _compile(text) is None
        assert result.text == text and not result.repairs


def test_trailing_nul_dropped_for_a_ptxas_that_refuses_it() -> None:
    """Every NUL byte ending the text goes for ptxas 13.0 and later and when the release is not
    known; the text stays as it is for 12.x, which takes it."""
    text = _text("trailing-nul")
    body = text.rstrip("\0")
    assert body != text and not body.endswith("\0")
    for version in (None, "13.0", "13.5"):
        result = fix(text + "\0", ptxas_version=version)
        assert result.text == body, version
        assert [r.change for r in result.repairs] == ["2 trailing NUL byte(s) dropped"]
    for version in ("12.0", "12.9"):
        result = fix(text, ptxas_version=version)
        assert result.text == text and not result.repairs, version


@pytest.mark.parametrize(
    "make",
    [
        *(lambda p=p: load_ptx(p) for p in sorted(LLVM.glob("*.fixed.rejected.ptx"))[::6]),
        _version_64,
    ],
)
@pytest.mark.ptxas
def test_sections_without_labels_where_version_cannot_rise(make: Any) -> None:
    """For a ptxas that takes no PTX ISA new enough for the sections' labels (here said to
    stop at 6.0: none here does), .version stays and the sections get numbers instead."""
    text = make()
    before = parse_ptx(text).version
    result = fix(text, max_version=(6, 0))
    assert parse_ptx(result.text).version == before
    assert "version-too-low" in {r.rule for r in result.repairs}
    assert "version-too-low" not in {f.rule for f in result.remaining}
    assert _compile(text) is not None and _compile(result.text) is None
    assert check(result.text).consistent
    assert tree(result.text) == tree(fix(text).text)


@pytest.mark.parametrize("addend", ["9223372036854775808", "4294967296"])
def test_section_plus_n_too_large_for_its_field(addend: str) -> None:
    """Found by fuzzing: .debug_info+N outside .debug_info with N past the field's size made
    the symbol-outside-info repair raise OverflowError; no number fits, so it stays as it is."""
    text = load_ptx(ROOT / "fixtures" / "spec" / "example.ptx")
    at = text.index(".section .debug_pubnames")
    at = text.index(".b32 .debug_info", at)
    text = text[:at] + ".b32 .debug_info+" + addend + text[at + len(".b32 .debug_info") :]
    result = fix(text)
    assert ".debug_info+" + addend in result.text
    assert "symbol-outside-info" in {f.rule for f in result.remaining}


@pytest.mark.ptxas
def test_remap_nvrtc_default_program() -> None:
    """NVRTC names its source default_program, in the working directory (the compile unit:
    name 'default_program', comp_dir the directory; .file the joined path). A map of the
    joined path renames both, and the module still compiles to consistent debug info."""
    path = ROOT / "fixtures" / "corpus" / "nvrtc-13.5" / "control.G.ptx"
    text = load_ptx(path)
    old = "/tmp/ptxdwarf-fixtures/corpus/default_program"
    cu = read_ptx(text).units[0].die
    assert cu is not None and (cu.get("name"), cu.get("comp_dir")) == (
        "default_program",
        old.rsplit("/", 1)[0],
    )
    new, changed = remap_paths(text, [(old, "/home/me/control.cu")])
    assert changed == 2
    assert '.file\t1 "/home/me/control.cu"' in new
    cu = read_ptx(new).units[0].die
    assert cu is not None and cu.get("name") == "/home/me/control.cu"
    assert check(new).consistent


# --- LLVM's mangled names and address classes (issue 34) -------------------------------

CLANG19 = ROOT / "fixtures" / "corpus" / "clang-19"


def _relocated_symbols(text: str) -> set[str]:
    """The symbols ptxas -g relocates the cubin's .debug_info against."""
    from ptxdwarf.cuda.cubin import cubin_images

    ptxas = _ptxas_for(text)
    arch, _ = ptxas.choose_arch(parse_ptx(text).target, None)
    found = cubin_images(ptxas.compile(text, arch=arch, debug=True).cubin)
    return {r.symbol.name for r in found.images[".debug_info"].relocs}


@pytest.mark.parametrize("name", ["hello.O0-g.sm_75.ptx", "hello.O3-noopt-g.sm_75.ptx"])
@pytest.mark.ptxas
def test_llvm19_string_reference_renamed(name: str) -> None:
    """clang 19 defines printf's format string as _$_str and names it .str in .debug_info (ptxas
    writes 0 for it): fix renames the reference to the name the module defines, lint finds no
    error left, ptxas relocates the variable's address and check is consistent."""
    text = load_ptx(CLANG19 / name)
    assert ".b64 .str" in text and "_$_str[" in text
    assert [f.rule for f in lint(text) if f.severity == "error"] == ["undefined-symbol"]
    result = fix(text, filename=name)
    assert [(r.rule, r.change.split(" (")[0]) for r in result.repairs] == [
        ("undefined-symbol", ".str -> _$_str")
    ]
    assert result.ok and not [f for f in result.remaining if f.rule == "undefined-symbol"]
    assert ".b64 _$_str" in result.text and ".b64 .str" not in result.text
    assert "_$_str" in _relocated_symbols(result.text)
    assert check(result.text).consistent


@pytest.mark.ptxas
def test_shared_variable_gets_the_shared_class() -> None:
    """llc 14 on LLVM's debug-addr-space test describes the .shared variable g with class 5
    (global): fix writes 8, the class of .shared; lint and check agree."""
    path = LLVM / "debug-addr-space.O0.ptx75.fixed.ptx"
    text = load_ptx(path)
    assert [f.rule for f in lint(text)] == ["address-class-space"]
    result = fix(text, filename=path.name)
    assert [(r.rule, r.change.split(",")[0]) for r in result.repairs] == [
        ("address-class-space", "DW_AT_address_class 5 (ADDR_global_space) -> 8 (ADDR_shared_space)")
    ]
    assert result.ok and lint(result.text) == []
    (g,) = [d for d in read_ptx(result.text).iter_dies() if d.name == "g"]
    assert g.get("address_class") == 8
    assert check(result.text).consistent
