"""What the command line says and writes on the first inputs a user tries: non-ASCII text,
files that are not PTX, a wrong --arch, a module with nothing to show."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = FIXTURES_SPEC = ROOT / "fixtures" / "spec" / "example.ptx"
NODEBUG = next((ROOT / "fixtures" / "nodebug").glob("*.ptx"))
LINEINFO = ROOT / "fixtures" / "nvcc" / "rich.lineinfo.sm_75.ptx"

LOCALES = [{"PYTHONIOENCODING": "utf-8"}, {"LC_ALL": "C.UTF-8", "PYTHONIOENCODING": ""}]


def ptxdwarf(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "ptxdwarf", *args], capture_output=True, cwd=ROOT, env=full, timeout=600
    )


def _with_comment(src: Path, dst: Path, comment: bytes) -> bytes:
    data = src.read_bytes()
    out = data.replace(b".version", b"// " + comment + b"\n.version", 1)
    dst.write_bytes(out)
    return out


@pytest.mark.parametrize("env", LOCALES)
@pytest.mark.parametrize("comment", ["caf\u00e9 \u2013 \u00fcber".encode(), b"bad \xff\xfe bytes"])
@pytest.mark.slow
def test_rewrite_and_attach_keep_every_byte(tmp_path: Path, env: dict[str, str], comment: bytes) -> None:
    src = tmp_path / "in.ptx"
    original = _with_comment(SPEC, src, comment)
    plain = ptxdwarf("rewrite", str(SPEC), env=env).stdout
    expected = plain.replace(b".version", b"// " + comment + b"\n.version", 1)
    out = tmp_path / "out.ptx"
    done = ptxdwarf("rewrite", str(src), "-o", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == expected
    to_stdout = ptxdwarf("rewrite", str(src), env=env)
    assert to_stdout.returncode == 0 and to_stdout.stdout == expected

    bare = tmp_path / "bare.ptx"
    _with_comment(NODEBUG, bare, comment)
    attached = ptxdwarf("attach", str(bare), "-o", str(tmp_path / "a.ptx"), env=env)
    assert attached.returncode == 0, attached.stderr
    assert b"// " + comment + b"\n" in (tmp_path / "a.ptx").read_bytes()
    assert original  # the input itself was not touched
    assert src.read_bytes() == original


@pytest.mark.parametrize("env", LOCALES)
def test_undecodable_bytes_are_escaped_on_stdout_and_kept_by_rewrite(
    tmp_path: Path, env: dict[str, str]
) -> None:
    data = SPEC.read_bytes()
    string = b".b8 95, 90, 52, 116, 101"  # "_Z4te" in .debug_str
    assert string in data
    src = tmp_path / "names.ptx"
    src.write_bytes(data.replace(string, b".b8 95, 90, 52, 255, 101").replace(b'.cu"', b'\xff.cu"', 1))
    dumped = ptxdwarf("dump", str(src), env=env)
    assert dumped.returncode == 0 and dumped.stderr == b""
    assert b'"_Z4\\udcffestPi"' in dumped.stdout
    linted = ptxdwarf("lint", str(src), env=env)
    assert linted.returncode == 1 and linted.stderr == b""
    assert b"'_Z4\\udcffestPi'" in linted.stdout
    rewritten = ptxdwarf("rewrite", "--style", "nvcc", str(src), env=env)
    assert rewritten.returncode == 0, rewritten.stderr
    assert b'_example\xff.cu"' in rewritten.stdout and b".b8 255\n" in rewritten.stdout


@pytest.mark.parametrize("command", ["dump", "rewrite", "check", "lint", "attach"])
def test_text_without_version_is_not_ptx(tmp_path: Path, command: str) -> None:
    cu = tmp_path / "kernel.cu"
    cu.write_text("__global__ void k(int *p) { *p = 1; }\n")
    done = ptxdwarf(command, str(cu))
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode() == f"ptxdwarf: error: {cu}: not PTX (no .version directive)\n"


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("command", ["rewrite", "check", "lint", "attach"])
@pytest.mark.ptxas
def test_a_cubin_is_sent_to_dump(tmp_path: Path, command: str) -> None:
    cubin = tmp_path / "spec.cubin"
    subprocess.run(["ptxas", "-arch=sm_75", str(SPEC), "-o", str(cubin)], check=True, timeout=600)
    done = ptxdwarf(command, str(cubin))
    assert done.returncode == 2
    assert (
        done.stderr.decode()
        == f"ptxdwarf: error: {cubin}: this is a cubin, not PTX text: use ptxdwarf dump\n"
    )


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize(
    ("arch", "message"),
    [
        ("75", "--arch 75: did you mean sm_75?"),
        ("sm_999", "does not support sm_999; the newest it supports is sm_"),
        ("kepler", "kepler is not a GPU architecture; ptxas "),
        ("sm_10", "does not support sm_10; the oldest it supports is sm_75"),
    ],
)
@pytest.mark.ptxas
def test_arch_messages_say_what_to_use(arch: str, message: str) -> None:
    done = ptxdwarf("check", "--arch", arch, str(SPEC))
    assert done.returncode == 2
    err = done.stderr.decode()
    assert message in err and err.count("\n") == 1
    if arch != "sm_10":
        assert "oldest" not in err


def test_help_names_fatbins_host_objects_defaults_and_exit_codes() -> None:
    dump = ptxdwarf("dump", "--help").stdout.decode()
    assert "fatbin" in dump and "host object" in dump
    for command in ("dump", "rewrite", "check", "lint", "attach"):
        text = " ".join(ptxdwarf(command, "--help").stdout.decode().split())
        assert "exit codes: 0 ok, 1 findings or differences (lint, check), 2 bad input or tool error" in text
    assert "(default: readable)" in " ".join(ptxdwarf("rewrite", "--help").stdout.decode().split())


def test_dump_of_an_empty_section_says_so(tmp_path: Path) -> None:
    src = tmp_path / "empty.ptx"
    src.write_text(".version 7.0\n.target sm_75\n.address_size 64\n.section .debug_info { }\n")
    done = ptxdwarf("dump", str(src))
    assert done.returncode == 0
    assert done.stdout.decode().splitlines()[1] == "(only an empty section: .debug_info; no DWARF to show)"


def test_dump_of_line_info_only_says_so() -> None:
    done = ptxdwarf("dump", str(LINEINFO))
    assert done.returncode == 0
    assert done.stdout.decode().splitlines()[1] == "(no .debug_info: line info only, with .debug_str)"
