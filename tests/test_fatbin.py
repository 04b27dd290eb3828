"""Fatbins and host objects: every cubin and PTX inside is listed and dumped."""

from __future__ import annotations

import io
import json
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from conftest import FIXTURES

import ptxdwarf
from ptxdwarf.cli import main
from ptxdwarf.cuda.fatbin import iter_fatbin
from ptxdwarf.errors import CubinError

NVCC = FIXTURES / "nvcc"
FILES = [
    "call_example.sm_75.fatbin",
    "call_example.sm_75.nocompress.fatbin",
    "call_example.sm_75.lz4.fatbin",
    "call_example.sm_75.host.o",
]


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


@pytest.mark.parametrize(
    ("name", "module", "what"),
    [("call_example.sm_75.fatbin", "zstandard", "zstd"), ("call_example.sm_75.lz4.fatbin", "lz4", "LZ4")],
)
def test_compressed_fatbin_without_its_library(
    name: str, module: str, what: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setitem(sys.modules, f"{module}.block", None)
    entries = list(iter_fatbin((NVCC / name).read_bytes()))
    assert len(entries) == 2 and all(e.payload == b"" and e.error is not None for e in entries)
    assert all(f"{what}-compressed: pip install 'ptxdwarf[fatbin]'" in str(e.error) for e in entries)
    with pytest.raises(CubinError, match=f"{what}-compressed"):
        ptxdwarf.read_all(NVCC / name)
    # the uncompressed one needs nothing
    assert len(list(iter_fatbin((NVCC / "call_example.sm_75.nocompress.fatbin").read_bytes()))) == 2


def _without_offsets(text: str, name: str) -> str:
    """The dump without entry offsets, and without the line tables' file times (each fatbin's
    cubin records its source file's modification time at its own build)."""
    text = re.sub(r" at 0x[0-9a-f]+\]", "]", text.replace(name, "F"))
    return re.sub(r"mod_time: 0x[0-9a-f]+", "mod_time: T", text)


def test_lz4_entries_read_as_the_uncompressed_ones(capsys: pytest.CaptureFixture[str]) -> None:
    """``nvcc --compress-mode=speed`` (like CUDA 11 and 12 by default) compresses entries with LZ4
    (flag 0x2000): they dump as the same fatbin built with --no-compress."""
    dumps = {}
    for name in ("call_example.sm_75.lz4.fatbin", "call_example.sm_75.nocompress.fatbin"):
        assert main(["dump", str(NVCC / name)]) == 0
        dumps[name] = _without_offsets(capsys.readouterr().out, str(NVCC / name))
    assert dumps["call_example.sm_75.lz4.fatbin"] == dumps["call_example.sm_75.nocompress.fatbin"]


@pytest.mark.parametrize("name", ["call_example.sm_75.lz4.fatbin", "call_example.sm_75.fatbin"])
def test_an_unreadable_entry_is_one_error_and_the_rest_is_dumped(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = bytearray((NVCC / name).read_bytes())
    first = 16  # the first entry's header; its payload follows it
    hsize = int.from_bytes(raw[first + 4 : first + 8], "little")
    raw[first + hsize + 8 : first + hsize + 40] = b"\xff" * 32  # inside the compressed cubin
    bad = tmp_path / "bad.fatbin"
    bad.write_bytes(bytes(raw))
    assert main(["dump", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith(f"ptxdwarf: error: fatbin entry at {bad}+0x10")
    assert "[ptx sm_75 at" in out and "DW_TAG_subprogram" in out


@pytest.mark.parametrize("cut", [8, 20, 100, 2000])
def test_truncated_fatbin(tmp_path: Path, cut: int) -> None:
    raw = (NVCC / "call_example.sm_75.nocompress.fatbin").read_bytes()
    bad = tmp_path / "bad.fatbin"
    bad.write_bytes(raw[:cut])
    assert main(["dump", str(bad)]) == 2
