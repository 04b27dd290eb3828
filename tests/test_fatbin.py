"""Fatbins and host objects: every cubin and PTX inside is listed and dumped."""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from conftest import FIXTURES

import ptxdwarf
from ptxdwarf.cli import main
from ptxdwarf.errors import CubinError
from ptxdwarf.fatbin import iter_fatbin

NVCC = FIXTURES / "nvcc"
FILES = ["call_example.sm_75.fatbin", "call_example.sm_75.nocompress.fatbin", "call_example.sm_75.host.o"]


def _tree(info: ptxdwarf.DebugInfo) -> list[tuple[int, str, str | None]]:
    return [(d.offset, d.tag_str, d.name) for d in info.iter_dies()]


@pytest.mark.parametrize("name", FILES)
def test_images_inside(name: str) -> None:
    found = ptxdwarf.read_all(NVCC / name)
    kinds = [label.rsplit("[", 1)[1].split()[0] for label, _ in found]
    assert kinds == ["elf", "ptx"]
    (_, cubin), (_, ptx) = found
    assert cubin.source == "cubin" and ptx.source == "ptx"
    # the cubin nvcc embedded and the PTX beside it describe the same DIEs at the same offsets
    assert _tree(cubin) == _tree(ptx)
    names = [n for _o, _t, n in _tree(cubin)]
    assert "_Z3fooii" in " ".join(str(n) for n in names) or "foo" in names


@pytest.mark.parametrize("name", FILES)
def test_cli_dump_lists_every_image(name: str) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["dump", str(NVCC / name)]) == 0
    text = out.getvalue()
    assert "2 device images" in text and text.count("=== ") == 2
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["dump", "--json", str(NVCC / name)]) == 0
    doc = json.loads(out.getvalue())
    assert doc["source"] == "fatbin" and [i["dump"]["source"] for i in doc["images"]] == ["cubin", "ptx"]


def test_compressed_fatbin_without_zstandard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(CubinError, match="zstd-compressed: pip install 'ptxdwarf\\[fatbin\\]'"):
        list(iter_fatbin((NVCC / "call_example.sm_75.fatbin").read_bytes()))
    # the uncompressed one needs nothing
    assert len(list(iter_fatbin((NVCC / "call_example.sm_75.nocompress.fatbin").read_bytes()))) == 2


@pytest.mark.parametrize("cut", [8, 20, 100, 2000])
def test_truncated_fatbin(tmp_path: Path, cut: int) -> None:
    raw = (NVCC / "call_example.sm_75.nocompress.fatbin").read_bytes()
    bad = tmp_path / "bad.fatbin"
    bad.write_bytes(raw[:cut])
    assert main(["dump", str(bad)]) == 2
