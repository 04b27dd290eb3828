"""The native core: which core runs, and that CI's build has every kernel."""

from __future__ import annotations

import subprocess
import sys

import pytest
from twins import REQUIRED

from ptxdwarf import _native
from ptxdwarf._native import KERNELS, Twin, describe, kernel


def test_version_says_which_core_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ptxdwarf", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("ptxdwarf ") and f"({describe()})" in out


def test_pure_asks_for_the_reference() -> None:
    code = "from ptxdwarf._native import describe; print(describe())"
    env = {"PTXDWARF_PURE": "1", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "pure Python core: PTXDWARF_PURE=1"


@pytest.mark.skipif(not REQUIRED or _native.PURE, reason="PTXDWARF_REQUIRE_NATIVE is not set")
def test_every_kernel_is_built() -> None:
    assert [name for name in KERNELS if kernel(name) is None] == []
    assert describe() == "native core"


def test_a_twin_falls_back_to_the_reference_where_the_kernel_declines() -> None:
    calls: list[str] = []

    def reference(x: int) -> int:
        calls.append("reference")
        return x + 1

    def native(x: int) -> int | None:
        calls.append("native")
        return None if x < 0 else x + 1

    pair = Twin(reference, native)
    assert pair(1) == 2 and calls == ["native"]
    assert pair(-5) == -4 and calls == ["native", "native", "reference"]
    assert Twin(reference, None)(3) == 4
    assert pair.__name__ == "reference"


def test_an_unknown_kernel_is_an_error() -> None:
    with pytest.raises(ValueError, match="no native kernel"):
        kernel("nonesuch")


def test_check_mode_runs_both_sides_and_finds_a_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    from ptxdwarf.errors import PtxSyntaxError

    def reference(x: int, /) -> int:
        if x < 0:
            raise PtxSyntaxError("negative")
        return x + 1

    def declines(_x: int, /) -> int | None:
        return None

    def zero(_x: int, /) -> int:
        return 0

    monkeypatch.setattr(_native, "CHECK", True)
    assert Twin(reference, lambda x: x + 1)(1) == 2
    assert Twin(reference, declines)(1) == 2
    with pytest.raises(PtxSyntaxError):
        Twin(reference, declines)(-1)
    with pytest.raises(_native.TwinMismatch, match="differ"):
        Twin(reference, lambda x: x + 2)(1)
    with pytest.raises(_native.TwinMismatch, match="rejects"):
        Twin(reference, zero)(-1)
