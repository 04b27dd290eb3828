"""attach on inputs that once broke it: one error line naming the file and place, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from ptxdwarf.cli import main


def test_entry_without_body_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "regressions" / "entry-without-body.badptx"
    assert main(["attach", str(path), "-o", str(tmp_path / "out.ptx")]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"ptxdwarf: error: {path}:5: .entry Z has no body and is not a declaration ending with ';'\n"
    )
    assert not (tmp_path / "out.ptx").exists()


def test_huge_register_range_is_described_by_the_names_used() -> None:
    """``.reg .b32 %r<100000000>`` (ptxas takes it): attach describes the registers the body
    uses, not a hundred million names (the fuzzer found the hang)."""
    from ptxdwarf.api import read_ptx
    from ptxdwarf.autodebug import attach_ptx

    text = (
        ".version 7.5\n.target sm_75\n.address_size 64\n\n.visible .entry k(.param .u64 p)\n{\n"
        "\t.reg .b32 %r<100000000>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [p];\n"
        "\tmov.u32 %r7, 7;\n\tadd.u32 %r12, %r7, 1;\n\tst.u32 [%rd1], %r12;\n\tret;\n}\n"
    )
    result = attach_ptx(text, output_name="big.ptx", filename="big.ptx")
    names = {d.name for d in read_ptx(result.text).iter_dies() if d.name and d.name.startswith("%r")}
    assert names == {"%r7", "%r12", "%rd1"}  # %rd0 and %rd2 are declared, used by no instruction


def test_huge_device_parameter_is_left_without_a_location() -> None:
    """``.param .b8 p[2147483648]`` (found by the fuzzer: 33 million empty pieces) gets no
    location and a warning, at once."""
    from ptxdwarf.autodebug import attach_ptx

    text = (FIXTURES / "nodebug" / "handwritten.ptx").read_text()
    big = text.replace(".param .align 4 .b8 mix_param_1[8],", ".param .align 4 .b8 mix_param_1[2147483648],")
    assert big != text
    result = attach_ptx(big, output_name="h.ptx", filename="h.ptx")
    assert any(
        "mix_param_1 (2147483648 bytes: too large to describe piece by piece)" in w for w in result.warnings
    )
