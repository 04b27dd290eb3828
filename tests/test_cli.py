"""The command line over several files: one output per file, an exit code that sums up all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SPEC = str(FIXTURES / "spec" / "example.ptx")
CLEAN = str(FIXTURES / "clang" / "call_example.O0.sm_75.ptx")  # lint finds nothing
FAULTY = str(FIXTURES / "clang" / "rich.llc.sm_75.ptx")  # lint finds something


def ptxdwarf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ptxdwarf", *args], capture_output=True, text=True, cwd=ROOT, timeout=600
    )


def test_dump_of_several_files_is_each_dump_under_its_name() -> None:
    one, two = ptxdwarf("dump", SPEC), ptxdwarf("dump", CLEAN)
    both = ptxdwarf("dump", SPEC, CLEAN)
    assert both.returncode == 0 and both.stderr == ""
    assert both.stdout == f"{SPEC}:\n{one.stdout}\n{CLEAN}:\n{two.stdout}"


def test_dump_json_of_several_files_is_an_array_of_the_documents() -> None:
    docs = [json.loads(ptxdwarf("dump", "--json", f).stdout) for f in (SPEC, CLEAN)]
    both = ptxdwarf("dump", "--json", SPEC, CLEAN)
    assert both.returncode == 0
    assert json.loads(both.stdout) == docs


def test_a_bad_file_is_one_error_line_and_the_others_go_on(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.ptx")
    notptx = tmp_path / "garbage.ptx"
    notptx.write_text(".version 7.0\n.target sm_75\n.address_size 64\n.section .debug_info { .b8 1,,2 }\n")
    result = ptxdwarf("dump", missing, SPEC, str(notptx))
    assert result.returncode == 2
    errors = result.stderr.splitlines()
    assert len(errors) == 2 and all(e.startswith("ptxdwarf: error: ") for e in errors)
    assert "missing.ptx" in errors[0] and "garbage.ptx" in errors[1]
    assert f"{SPEC}:\n" in result.stdout and "DW_TAG_compile_unit" in result.stdout
    as_json = ptxdwarf("dump", "--json", missing, SPEC, str(notptx))
    assert as_json.returncode == 2
    assert [d["units"][0]["die"]["tag"] for d in json.loads(as_json.stdout)] == ["DW_TAG_compile_unit"]


def test_lint_exit_code_is_the_worst_and_json_is_one_array() -> None:
    clean, faulty = ptxdwarf("lint", CLEAN), ptxdwarf("lint", FAULTY)
    assert (clean.returncode, faulty.returncode) == (0, 1)
    both = ptxdwarf("lint", CLEAN, FAULTY)
    assert both.returncode == 1 and both.stdout == clean.stdout + faulty.stdout
    findings = json.loads(ptxdwarf("lint", "--json", FAULTY).stdout)
    assert findings and json.loads(ptxdwarf("lint", "--json", CLEAN, FAULTY).stdout) == findings
    assert ptxdwarf("lint", CLEAN, CLEAN).returncode == 0
    assert ptxdwarf("lint", CLEAN, "/nonexistent.ptx").returncode == 2
    # one file that cannot be read: its error line and no document
    alone = ptxdwarf("lint", "--json", "/nonexistent.ptx")
    assert (alone.returncode, alone.stdout) == (2, "")
    assert json.loads(ptxdwarf("lint", "--json", "/nonexistent.ptx", "/nonexistent2.ptx").stdout) == []


@pytest.mark.ptxas
def test_check_of_several_files_runs_ptxas_on_each() -> None:
    result = ptxdwarf("check", "--json", SPEC, CLEAN)
    assert result.returncode == 0, result.stderr
    reports = json.loads(result.stdout)
    assert [r["file"] for r in reports] == [SPEC, CLEAN]
    assert all(r["format"] == "ptxdwarf-check/1" and r["consistent"] for r in reports)


@pytest.mark.ptxas
def test_check_keeps_what_it_read_until_the_process_ends(capsys: pytest.CaptureFixture[str]) -> None:
    """Freeing a large module's model when check returns cost 0.08 s of a 12 s check."""
    from ptxdwarf import cli
    from ptxdwarf.check import CheckReport
    from ptxdwarf.ptx.module import PtxModule

    assert cli.main(["check", SPEC]) == 0
    assert "consistent" in capsys.readouterr().out
    (kept,) = cli._kept
    assert isinstance(kept, tuple)
    report, read = kept
    assert isinstance(report, CheckReport)
    assert isinstance(read, tuple) and any(isinstance(r, PtxModule) for r in read)


@pytest.mark.parametrize("command", ["dump", "rewrite", "check", "lint", "attach"])
def test_every_command_names_its_file_argument_file(command: str) -> None:
    usage = ptxdwarf(command, "--help").stdout
    assert " FILE" in usage
    assert "IN.ptx" not in usage and "FILE.ptx" not in usage


# The console script runs without the cyclic collector and ends with os._exit: what it
# printed must still arrive whole, and a reader that goes away is not an error.


def test_a_large_output_arrives_whole_through_a_pipe() -> None:
    cubin = FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin"
    expected = ptxdwarf("dump", str(cubin))
    assert expected.returncode == 0 and len(expected.stdout) > 65536  # more than a pipe holds
    proc = subprocess.run(
        [sys.executable, "-c", "from ptxdwarf.cli import run; run()", "dump", str(cubin)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert (proc.returncode, proc.stderr) == (0, expected.stderr)
    assert proc.stdout == expected.stdout


def test_a_reader_that_goes_away_is_not_an_error() -> None:
    cubin = FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin"
    proc = subprocess.run(
        f"{sys.executable} -m ptxdwarf dump {cubin} | head -c 10",
        shell=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert "Error" not in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stdout) == 10


def test_the_console_script_frees_each_file_before_the_next() -> None:
    """With the collector off, the models of earlier files would otherwise stay."""
    script = (
        "import gc, sys\n"
        "import ptxdwarf.cli as cli\n"
        "counts = []\n"
        "collect = gc.collect\n"
        "gc.collect = lambda *a: counts.append(1) or collect(*a)\n"
        "sys.argv = ['ptxdwarf', 'lint', sys.argv[1], sys.argv[1], sys.argv[1]]\n"
        "orig = cli.main\n"
        "def main(argv=None):\n"
        "    code = orig(argv)\n"
        "    print('collections', len(counts), 'enabled', gc.isenabled(), file=sys.stderr)\n"
        "    return code\n"
        "cli.main = main\n"
        "cli.run()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, CLEAN], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    assert "collections 2 enabled False" in proc.stderr
