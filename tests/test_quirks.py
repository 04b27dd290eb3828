"""The ptxas quirk registry (ptxdwarf.cuda.quirks) and the facts harness (tools.ptxas_facts)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXTRA_PTXAS, every_ptxas, ptxas_id

# The features that register workarounds of the quirks (the repairs register with ptxdwarf.repair):
# with these imported the registry is complete.
import ptxdwarf.attach
import ptxdwarf.autodebug
import ptxdwarf.builder
import ptxdwarf.loc  # noqa: F401
from ptxdwarf.cuda import quirks
from ptxdwarf.cuda.ptxas import Ptxas, find_ptxas
from ptxdwarf.cuda.quirks import QUIRKS, Quirk, quirk, quirks_for_rule, workaround
from ptxdwarf.lint import RULES
from ptxdwarf.repair import repairs_of
from tools.ptxas_facts import CASES, Outcome, run_cases

ROOT = Path(__file__).resolve().parent.parent
CASE_IDS = {c.id for c in CASES}


def test_quirk_ids_are_unique_and_looked_up() -> None:
    assert len({q.id for q in QUIRKS}) == len(QUIRKS)
    assert quirk("wide-literal-truncated").lint_rule == "wide-value"
    with pytest.raises(KeyError, match="no ptxas quirk 'nosuch'"):
        quirk("nosuch")
    assert [q.id for q in quirks_for_rule("non-ascii")] == ["non-ascii", "non-ascii-comment"]


def test_holds_for_a_release() -> None:
    comment = quirk("non-ascii-comment")  # holds on 12.9 and 13.0, not on 12.0, 12.4, 13.4 and 13.5
    assert comment.holds_for("13.0") and not comment.holds_for("13.5")
    assert not comment.holds_for("12.4") and comment.holds_for("12.9")
    assert comment.holds_for("12.8")  # between 12.4 and 12.9: holds on one neighbour
    assert comment.holds_for("13.2")  # between 13.0 and 13.4: holds on one neighbour
    assert not comment.holds_for("11.8")  # before the first release measured: as on 12.0
    assert not comment.holds_for("14.0")  # after the last: as on 13.5
    assert comment.holds_for(None)
    assert quirk("non-ascii").holds_for("13.5")
    assert not quirk("orphan-depot-list").holds_for(None)  # reproduced nowhere
    with pytest.raises(ValueError, match=r"MAJOR.MINOR"):
        comment.holds_for("13.x")


def test_quirk_is_frozen() -> None:
    q = QUIRKS[0]
    with pytest.raises(AttributeError):
        q.id = "x"  # type: ignore[misc]  # assigning to a frozen field is what the test tries
    assert isinstance(q, Quirk)


@pytest.mark.parametrize("q", QUIRKS, ids=[q.id for q in QUIRKS])
def test_quirk_is_complete(q: Quirk) -> None:
    assert q.fact.strip()
    assert q.measured_on and all(re.fullmatch(r"\d+\.\d+", v) for v in q.measured_on)
    assert set(q.holds_on) <= set(q.measured_on)
    assert q.workaround_note.strip()
    if q.lint_rule is None:
        assert q.lint_note and q.lint_note.strip()
    else:
        assert q.lint_rule in RULES


@pytest.mark.parametrize("q", QUIRKS, ids=[q.id for q in QUIRKS])
def test_quirk_cases_measure_it(q: Quirk) -> None:
    assert q.cases
    for cid in q.cases:
        assert cid in CASE_IDS, cid
        (c,) = [c for c in CASES if c.id == cid]
        assert c.fact == q.id, f"case {cid} measures {c.fact}, not {q.id}"


def test_every_case_of_a_quirk_fact_is_listed() -> None:
    by_id = {q.id: q for q in QUIRKS}
    for c in CASES:
        if c.fact in by_id:
            assert c.id in by_id[c.fact].cases, c.id


@pytest.mark.parametrize("q", QUIRKS, ids=[q.id for q in QUIRKS])
def test_every_workaround_and_repair_named_is_registered(q: Quirk) -> None:
    """What a quirk names is registered, in its order, and is the code of that name."""
    codes = q.workarounds()
    assert all(callable(code) for code in codes)
    assert [c.__qualname__ for c in codes[len(q.workaround) :]] == list(q.feature_workarounds)
    assert [r.name for r in repairs_of(q)] == list(q.repairs)


def test_workarounds_below_the_registry_are_its_layers() -> None:
    for q in QUIRKS:
        for code in q.workaround:
            assert code.__module__.split(".")[1] in ("dwarf", "ptx", "cuda"), (q.id, code)


def test_an_unregistered_workaround_is_refused() -> None:
    q = Quirk("probe", "a fact", (), (), (), "none", None, feature_workarounds=("nowhere",))
    with pytest.raises(LookupError, match="workaround nowhere not registered"):
        q.workarounds()


def test_registration_checks_the_quirk() -> None:
    with pytest.raises(KeyError, match="no ptxas quirk 'nosuch'"):
        workaround("nosuch")

    def not_named() -> None: ...

    with pytest.raises(ValueError, match="does not name the workaround"):
        workaround("symbol-addend")(not_named)


def test_case_ids_are_unique() -> None:
    assert len(CASE_IDS) == len(CASES)


def test_docs_list_every_quirk_and_case() -> None:
    doc = (ROOT / "docs" / "ptxas-facts.md").read_text()
    for q in QUIRKS:
        assert f"`{q.id}`" in doc, q.id
    for c in CASES:
        assert f"`{c.id}`" in doc, c.id
    assert "h.py" not in doc and "t1.py" not in doc


def test_docs_show_the_registry_as_it_is() -> None:
    assert quirks.markdown_table() in (ROOT / "docs" / "ptxas-facts.md").read_text()


def test_docs_results_agree_with_the_cases() -> None:
    """The results table's yes/no per release is what each case records in holds_on."""
    doc = (ROOT / "docs" / "ptxas-facts.md").read_text()
    head = next(line for line in doc.splitlines() if line.startswith("| case | fact | expected | ptxas "))
    releases = re.findall(r"ptxas (\d+\.\d+)", head)
    assert releases == list(quirks.MEASURED_ON)
    rows = {m.group(1): line for line in doc.splitlines() if (m := re.match(r"\| `([^`]+)` \|", line))}
    for c in CASES:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", rows[c.id])[1:-1]]
        held = [cell.startswith("yes") for cell in cells[-len(releases) :]]
        assert held == [r in c.holds_on for r in releases], c.id


@pytest.fixture(scope="module", params=every_ptxas(), ids=ptxas_id)
def measured(request: pytest.FixtureRequest) -> tuple[str, dict[str, Outcome]]:
    """A ptxas release the registry was measured on and what each case does on it (every
    ptxas the tests know of, see ``conftest.every_ptxas``: in CI, six releases)."""
    tool = Ptxas(request.param)
    if tool.version not in quirks.MEASURED_ON:
        pytest.skip(f"ptxas {tool.version} is not one the registry was measured on")
    return tool.version, {o.case: o for o in run_cases(tool.path)}


@pytest.mark.ptxas
@pytest.mark.slow
def test_facts_hold_on_every_ptxas(measured: tuple[str, dict[str, Outcome]]) -> None:
    """Every case marked as holding for this ptxas release holds, on the real ptxas; every
    case marked as not holding does not (then the registry needs updating)."""
    version, outcomes = measured
    by_id = {c.id: c for c in CASES}
    wrong = [
        f"{cid}: {o.observed}" for cid, o in outcomes.items() if (version in by_id[cid].holds_on) != o.holds
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.ptxas
def test_ci_measures_every_release_of_the_registry() -> None:
    """Each release the registry was measured on is a ptxas found here or one ``.ci/run``
    installs for the tests, so CI re-measures every column; where ``$PTXDWARF_TEST_PTXAS`` is
    set (CI sets it), those ptxas are all there."""
    script = (ROOT / ".ci" / "run").read_text()
    installed = set(re.findall(r"nvidia-cuda-nvcc(?:-cu12)?==(\d+\.\d+)\.", script))
    found = {Ptxas(path).version for path in every_ptxas()}
    assert not set(quirks.MEASURED_ON) - installed - found
    if os.environ.get(EXTRA_PTXAS):
        assert not set(quirks.MEASURED_ON) - found, f"${EXTRA_PTXAS} lacks some releases"


def test_quirk_holds_where_all_its_cases_hold() -> None:
    by_id = {c.id: c for c in CASES}
    for q in QUIRKS:
        expected = [v for v in q.measured_on if all(v in by_id[cid].holds_on for cid in q.cases)]
        assert list(q.holds_on) == expected, q.id


def test_case_releases_are_measured_ones() -> None:
    for c in CASES:
        assert set(c.holds_on) <= set(quirks.MEASURED_ON), c.id


@pytest.mark.ptxas
def test_command_line_reports_a_table() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tools.ptxas_facts", "--only", "wide.b64-hex", "syntax.binary-b32"],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| wide.b64-hex | wide-literal-truncated |" in proc.stdout
    assert re.search(r"ptxas \d+\.\d+: 2 of 2 hold$", proc.stdout.rstrip())


def test_the_harness_is_a_tool_of_the_repository_not_of_the_package() -> None:
    """The package ships the registry, not the measurement: no module of ``ptxdwarf`` is the
    harness or imports it, and the harness reads cubins and runs ptxas through the package."""
    import importlib.util

    assert importlib.util.find_spec("ptxdwarf.cuda.facts") is None
    package = ROOT / "ptxdwarf"
    assert not [
        p for p in package.rglob("*.py") if re.search(r"^\s*(from|import) tools\b", p.read_text(), re.M)
    ]
    harness = (ROOT / "tools" / "ptxas_facts" / "harness.py").read_text()
    assert "from ptxdwarf.cuda.cubin import" in harness and "from ptxdwarf.cuda.ptxas import" in harness
    assert "elftools" not in harness and "subprocess" not in harness


def test_command_line_bad_ptxas() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tools.ptxas_facts", "--ptxas", "/nonexistent/ptxas"],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


@pytest.mark.ptxas
def test_command_line_relative_ptxas(tmp_path: Path) -> None:
    """A ptxas named relative to the current directory still runs: the cases compile elsewhere."""
    link = tmp_path / "bin" / "ptxas"
    link.parent.mkdir()
    link.symlink_to(find_ptxas().path)
    proc = subprocess.run(
        [sys.executable, "-m", "tools.ptxas_facts", "--ptxas", "bin/ptxas", "--only", "wide.b64-hex"],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"ptxas \d+\.\d+: 1 of 1 hold$", proc.stdout.rstrip())


def test_a_fixture_case_runs_at_a_version_the_ptxas_reads() -> None:
    """The fault fixtures are .version 9.0; ptxas 12.4 reads 8.4 at most (measured), so an
    ``any_version`` case runs there at 8.4, and at its own version where that is taken."""
    from tools.ptxas_facts import within_reach

    text = "// x\n.version 9.0\n.target sm_75\n"
    assert within_reach(text, (8, 4)) == ("// x\n.version 8.4\n.target sm_75\n", "8.4")
    assert within_reach(text.encode(), (8, 4)) == (b"// x\n.version 8.4\n.target sm_75\n", "8.4")
    assert within_reach(text, (9, 0)) == (text, None)
    assert within_reach(text, (0, 0)) == (text, None)
    assert [c.id for c in CASES if c.any_version] == [
        c.id for c in CASES if c.id.endswith(".fixture") or c.id.startswith("bitfield-member-order.")
    ]
