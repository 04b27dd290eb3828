"""PTX fragments: debug sections without a ``.version`` directive, as a code injector cuts them
(``fixtures/fragment``, made by its ``make.sh`` from nvcc 13.0 -G output of the corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from ptxdwarf.api import read_ptx, rewrite
from ptxdwarf.check import check
from ptxdwarf.cli import main
from ptxdwarf.files import load_ptx
from ptxdwarf.lint import lint
from ptxdwarf.ptx import parse_ptx

FRAGMENTS = sorted((FIXTURES / "fragment").glob("*.ptx"))
WHOLE = FIXTURES / "corpus" / "nvcc-13.0"


def _whole(fragment: Path) -> Path:
    return WHOLE / fragment.name.replace(".fragment.ptx", ".sm_75.ptx")


def _header(whole: str) -> str:
    """What the injector cut off: the text up to and including .address_size."""
    end = whole.index(".address_size 64\n") + len(".address_size 64\n")
    return whole[:end]


def _tree(text: str) -> list[tuple[int, str, list[tuple[object, object]]]]:
    info = read_ptx(text)
    return [
        (d.offset, d.tag_str, [(a.name, a.innermost.value) for a in d.attributes]) for d in info.iter_dies()
    ]


@pytest.mark.parametrize("path", FRAGMENTS, ids=lambda p: p.name)
def test_a_fragment_is_read_with_a_note(
    path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """dump, lint and rewrite read a fragment as the module it was cut from, each with a note on
    standard error; the DIEs are the whole module's, lint finds nothing the whole module lacks."""
    text = load_ptx(path)
    whole = _whole(path).read_text()
    assert whole == _header(whole) + text
    module = parse_ptx(text)
    assert module.is_fragment and not parse_ptx(whole).is_fragment
    assert _tree(text) == _tree(whole)
    assert [f.rule for f in lint(text)] == [f.rule for f in lint(whole)]
    for args in (["dump", str(path)], ["dump", "--json", str(path)], ["lint", str(path)]):
        code = main(args)
        err = capsys.readouterr().err
        assert code == 0 and err.count("note:") == 1 and "PTX fragment" in err, args
    out = tmp_path / "out.ptx"
    assert main(["rewrite", str(path), "-o", str(out)]) == 0
    assert "PTX fragment" in capsys.readouterr().err
    assert out.read_text() == rewrite(text)
    assert _tree(out.read_text()) == _tree(text)


@pytest.mark.ptxas
def test_a_rewritten_fragment_put_back_compiles_consistently() -> None:
    """The rewrite of a fragment, put back under the header it was cut from, compiles and check
    says consistent: the fragment was read right."""
    path = FIXTURES / "fragment" / "control.G.fragment.ptx"
    header = _header(_whole(path).read_text())
    assert check(header + rewrite(load_ptx(path))).consistent


@pytest.mark.parametrize(
    "args,what",
    [
        (["check"], "check"),
        (["fix", "--ptxas", "ptxas"], "fix for a given ptxas"),
        (["attach", "--only-mapped"], "attach --only-mapped"),
        (["attach", "--only-mapped", "--replace"], "attach --only-mapped"),
    ],
)
def test_what_needs_ptxas_refuses_a_fragment(
    args: list[str], what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = FIXTURES / "fragment" / "tiny.G.fragment.ptx"
    if "--ptxas" in args:
        from ptxdwarf.cuda.ptxas import find_ptxas

        args = [*args[:-1], find_ptxas().path]
    assert main([*args, str(path), *(["-o", "/dev/null"] if args[0] != "check" else [])]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"ptxdwarf: error: {path}: {what}: ptxas cannot compile a PTX fragment (no .version directive)\n"
    )


def test_text_without_version_or_debug_sections_is_still_not_ptx(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "kernel.cu"
    source.write_text("__global__ void k() {}\n")
    assert main(["dump", str(source)]) == 2
    assert "not PTX (no .version directive)" in capsys.readouterr().err
