"""What check says when ptxas crashes, warns without a line, or has only line info to work on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES

from ptxdwarf.check import check
from ptxdwarf.cli import main
from ptxdwarf.cuda.ptxas import Ptxas, PtxasFailed, parse_messages
from tools.ptxas_facts.cases.registers import predicates

LINE_INFO = FIXTURES / "nvcc" / "rich.lineinfo.sm_75.ptx"


def test_a_crash_is_reported_as_a_crash(ptxas_tool: Ptxas) -> None:
    with pytest.raises(PtxasFailed) as caught:
        check(predicates(52, 52)(), filename="many.ptx", ptxas=ptxas_tool)
    assert caught.value.crashed and caught.value.returncode == -11
    assert str(caught.value) == f"many.ptx: ptxas {ptxas_tool.version} crashed (SIGSEGV, signal 11)"


@pytest.mark.ptxas
def test_cli_reports_a_crash_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "many.ptx"
    path.write_text(predicates(52, 52)())
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "crashed (SIGSEGV, signal 11)" in err[0], err


def test_messages_without_file_and_line_keep_their_severity() -> None:
    stderr = (
        "ptxas warning :  .debug_abbrev section not found\n"
        "ptxas fatal   : Unexpected non-ASCII character encountered on line 77\n"
        "ptxas in.ptx, line 5; error   : Duplicate file index #1\n"
        "Error in get_form_value default"
    )
    got = [(m.severity, m.text, m.line) for m in parse_messages(stderr)]
    assert got == [
        ("warning", ".debug_abbrev section not found", None),
        ("fatal", "Unexpected non-ASCII character encountered on line 77", None),
        ("error", "Duplicate file index #1", 5),
        ("info", "Error in get_form_value default", None),
    ]


def test_a_failure_with_only_warnings_names_no_warning_as_its_cause(ptxas_tool: Ptxas) -> None:
    failed = PtxasFailed(
        "x.ptx", parse_messages("ptxas warning :  .debug_abbrev section not found"), ptxas_tool, 255
    )
    assert str(failed) == "x.ptx: ptxas failed (exit code 255) without an error message"
    crashed = PtxasFailed(
        "x.ptx", parse_messages("ptxas warning :  .debug_abbrev section not found"), ptxas_tool, -6
    )
    assert str(crashed) == f"x.ptx: ptxas {ptxas_tool.version} crashed (SIGABRT, signal 6)"


def test_line_info_only(ptxas_tool: Ptxas) -> None:
    report = check(LINE_INFO.read_text(), filename="li.ptx", ptxas=ptxas_tool)
    assert report.status == "line-info-only" and report.consistent
    assert "consistent" not in report.summary() and "0 unit(s)" not in report.summary()
    assert report.summary().startswith("li.ptx: line information only")
    assert (
        report.line_rows > 0
        and f"{report.line_rows} rows of it match the .loc directives" in report.summary()
    )
    assert "warning: .debug_abbrev section not found" in report.notes
    assert json.loads(report.to_json())["status"] == "line-info-only"


def test_no_debug_info_at_all(ptxas_tool: Ptxas) -> None:
    text = ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
    report = check(text, filename="k.ptx", ptxas=ptxas_tool)
    assert report.status == "no-debug-info"
    assert report.summary().startswith("k.ptx: no debug information")


def test_dwarf_status(ptxas_tool: Ptxas) -> None:
    report = check((FIXTURES / "nvcc" / "call_example.sm_75.ptx").read_text(), ptxas=ptxas_tool)
    assert report.status == "consistent" and "consistent (1 unit(s)" in report.summary()
