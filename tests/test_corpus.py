"""The outside corpus (fixtures/corpus, see its README) against the real tools: every file
through ``dump`` (against llvm-dwarfdump of the cubin ``ptxas -g`` makes), ``rewrite`` in three
styles (against the cubin's debug sections and relocations), ``lint`` (no error where ptxas
compiles) and ``check``; the files without debug info through ``attach``, then ptxas, lint and
check. Nothing is mocked: ptxas and llvm-dwarfdump are the judges."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, run_dwarfdump
from test_fixtures import _walk_json, dump_json, parse_llvm_dwarfdump
from test_rewrite import STYLES, debug_contents

import ptxdwarf
from ptxdwarf.autodebug import attach_ptx
from ptxdwarf.check import check
from ptxdwarf.cuda.ptxas import Ptxas, PtxasFailed, find_ptxas, wheel_ptxas
from ptxdwarf.lint import lint


def corpus_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


DEBUG = [p for p in CORPUS if ".debug_info" in p.read_text()]


def _tools() -> list[Ptxas]:
    found = {t.path: t for t in (Ptxas(p) for p in wheel_ptxas())}
    first = find_ptxas()
    found.setdefault(first.path, first)
    return sorted(found.values(), key=lambda t: tuple(map(int, t.version.split("."))))


@pytest.fixture(scope="module")
def tools() -> list[Ptxas]:
    """Every ptxas here (PATH, the wheels), oldest first."""
    return _tools()


def ptxas_for(path: Path, tools: list[Ptxas]) -> Ptxas:
    """The oldest ptxas that takes the file's .version (nvcc 13.5 writes 9.5, which 13.0 refuses)."""
    module = ptxdwarf.parse_ptx(path.read_text(), path.name)
    for tool in tools:
        if module.version is None or module.version <= tool.max_version:
            return tool
    raise AssertionError(f"no ptxas here takes .version {module.version} of {path.name}")


def compiled_or_refused(path: Path, tools: list[Ptxas], tmp_path: Path) -> Path | None:
    """The cubin ``ptxas -g`` makes of the file; None when ptxas refuses it, after checking that
    lint reports an error for it (a refusal lint does not see is a missed trap)."""
    text = path.read_text()
    try:
        return compile_with(ptxas_for(path, tools), text, path.name, tmp_path)
    except PtxasFailed as exc:
        errors = [f for f in lint(text, filename=path.name) if f.severity == "error"]
        assert errors, f"ptxas refuses {path.name} ({exc}) but lint finds no error"
        return None


def compile_with(tool: Ptxas, text: str, name: str, tmp_path: Path) -> Path:
    module = ptxdwarf.parse_ptx(text, name)
    arch, _note = tool.choose_arch(module.target, None)
    out = tmp_path / (Path(name).stem + ".cubin")
    out.write_bytes(tool.compile(text, arch=arch, filename=name).cubin)
    return out


PLAIN = [p for p in CORPUS if ".loc" not in p.read_text()]


def test_corpus_is_there() -> None:
    producers = {p.parent.name for p in CORPUS}
    assert {"nvcc-13.0", "nvcc-13.5", "numba", "clang-14", "triton"} <= producers
    assert len(CORPUS) >= 80 and DEBUG and PLAIN


@pytest.mark.parametrize("path", DEBUG, ids=corpus_id)
def test_dump_equals_llvm_dwarfdump(path: Path, tools: list[Ptxas], llvm_dwarfdump, tmp_path: Path) -> None:
    doc = dump_json(path)
    ours = [entry for unit in doc["units"] for entry in _walk_json(unit["die"])]
    cubin = compiled_or_refused(path, tools, tmp_path)
    if cubin is None:
        return
    theirs = parse_llvm_dwarfdump(run_dwarfdump(llvm_dwarfdump, cubin, "--debug-info"))
    assert ours and len(ours) == len(theirs)
    for mine, other in zip(ours, theirs, strict=True):
        assert mine == other, f"{path.name}: DIE at 0x{mine[0]:x}"


@pytest.mark.parametrize("path", DEBUG, ids=corpus_id)
def test_rewrite_keeps_what_ptxas_makes(path: Path, tools: list[Ptxas], tmp_path: Path) -> None:
    tool = ptxas_for(path, tools)
    original = path.read_text()
    cubin = compiled_or_refused(path, tools, tmp_path)
    if cubin is None:
        return
    before = debug_contents(cubin)
    for style in STYLES:
        rewritten = ptxdwarf.rewrite_ptx(original, style=style, filename=path.name)
        after = debug_contents(compile_with(tool, rewritten, f"{style}.ptx", tmp_path))
        assert after == before, f"rewrite --style {style}"


@pytest.mark.parametrize("path", CORPUS, ids=corpus_id)
def test_lint_and_check_agree_with_ptxas(path: Path, tools: list[Ptxas], tmp_path: Path) -> None:
    text = path.read_text()
    if compiled_or_refused(path, tools, tmp_path) is None:
        return
    errors = [f for f in lint(text, filename=path.name) if f.severity == "error"]
    assert errors == [], "\n".join(map(str, errors))
    report = check(text, filename=path.name, ptxas=ptxas_for(path, tools))
    assert not report.differences, report


@pytest.mark.parametrize("rename", [False, True], ids=["default", "rename-registers"])
@pytest.mark.parametrize("path", PLAIN, ids=corpus_id)
def test_attach_output_compiles_lints_and_checks(
    path: Path, rename: bool, tools: list[Ptxas], tmp_path: Path
) -> None:
    tool = ptxas_for(path, tools)
    result = attach_ptx(path.read_text(), output_name=path.name, filename=path.name, rename_registers=rename)
    compile_with(tool, result.text, path.name, tmp_path)
    assert lint(result.text, filename=path.name) == []
    report = check(result.text, filename=path.name, ptxas=tool)
    assert not report.differences, report
