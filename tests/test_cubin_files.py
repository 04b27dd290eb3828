"""A cubin read from a path is read a section at a time: the same debug info as from its bytes,
the same errors, and never the whole file in memory."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest
from conftest import FIXTURES, CubinPath

import ptxdwarf
import ptxdwarf.dump
from ptxdwarf.cuda.cubin import cubin_images
from ptxdwarf.dwarf.image import Block
from ptxdwarf.errors import CubinError, PtxDwarfError

LOOPS = FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin"
CALL = FIXTURES / "nvcc" / "call_example.sm_75.ptx"


def _error(source: Path | bytes) -> str:
    try:
        if isinstance(source, Path):
            ptxdwarf.dump.dump_text(ptxdwarf.read(source, filename="x.cubin"))
        else:
            ptxdwarf.dump.dump_text(ptxdwarf.read(data=source, filename="x.cubin"))
    except PtxDwarfError as exc:
        return str(exc)
    return "read"


def test_a_path_and_its_bytes_give_the_same_dump(cubin_path: CubinPath) -> None:
    for path in (LOOPS, cubin_path(CALL.read_text(), "call_example.ptx")):
        by_path = ptxdwarf.dump.dump_text(ptxdwarf.read(path, filename="x"))
        by_bytes = ptxdwarf.dump.dump_text(ptxdwarf.read(data=path.read_bytes(), filename="x"))
        assert by_path == by_bytes
        assert "DW_TAG_subprogram" in by_path


def test_a_cut_file_gives_the_error_its_bytes_give(tmp_path: Path) -> None:
    raw = LOOPS.read_bytes()
    cut = tmp_path / "cut.cubin"
    seen = set()
    for size in [*range(0, 200, 7), *range(200, len(raw), len(raw) // 97), len(raw) - 1]:
        cut.write_bytes(raw[:size])
        by_bytes = _error(raw[:size])
        assert _error(cut) == by_bytes, size
        seen.add(by_bytes)
    assert len(seen) > 3  # the cuts fall in headers, sections and the section header table


def test_the_ptx_text_is_read_when_asked_and_a_changed_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "loops.cubin"
    path.write_bytes(LOOPS.read_bytes())
    found = cubin_images(path)
    expected = cubin_images(LOOPS.read_bytes()).ptx_text
    assert expected is not None and b".version 9.5\0" in expected
    assert found.ptx_text == expected
    path.write_bytes(LOOPS.read_bytes() + b"\0")
    with pytest.raises(CubinError, match="has changed since it was read"):
        _ = found.ptx_text


def test_the_register_map_and_nv_info_are_read_when_asked(tmp_path: Path) -> None:
    """Of a cubin read from a path, ``.nv.info.*`` and the register map sections are read from
    the file when first asked for (a dump of the line tables never reads them): the same bytes
    as read from the cubin's bytes, an error if the file has changed or is gone."""
    raw = LOOPS.read_bytes()
    expected = cubin_images(raw)
    assert expected.reg_sass and expected.reg_type and expected.nv_info
    path = tmp_path / "loops.cubin"
    path.write_bytes(raw)
    found = cubin_images(path)
    assert found.has_register_map
    assert (found.reg_sass, found.reg_type, found.nv_info) == (
        expected.reg_sass,
        expected.reg_type,
        expected.nv_info,
    )
    changed, gone = cubin_images(path), cubin_images(path)
    path.write_bytes(raw + b"\0")
    with pytest.raises(CubinError, match="has changed since it was read"):
        _ = changed.nv_info
    path.unlink()
    with pytest.raises(CubinError, match="cannot read again"):
        _ = gone.reg_sass


def test_an_unreadable_path_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(CubinError, match="cannot read"):
        cubin_images(tmp_path / "missing.cubin")
    with pytest.raises(OSError):
        ptxdwarf.read(tmp_path / "missing.cubin")


def test_reading_a_path_never_holds_the_whole_file() -> None:
    size = os.path.getsize(LOOPS)

    def peak(read: object) -> int:
        tracemalloc.start()
        try:
            assert callable(read)
            info = read()
            assert info is not None
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    by_path = peak(lambda: ptxdwarf.read(LOOPS))
    with_bytes = peak(lambda: ptxdwarf.read(data=LOOPS.read_bytes()))
    # the file is 96 KB, a third of it code (.text) that a reader of the debug info never reads
    assert with_bytes - by_path > size // 2, (by_path, with_bytes, size)


def test_equal_expressions_are_one_block() -> None:
    info = ptxdwarf.read(LOOPS)
    assert info.locations is not None
    blocks = [x for loc in info.locations for _b, _e, x in loc.entries if x is not None and not x.relocs]
    blocks += [a.value for die in info.iter_dies() for a in die.attributes if isinstance(a.value, Block)]
    blocks = [b for b in blocks if not b.relocs]
    assert len(blocks) > len({bytes(b) for b in blocks})  # the test needs repeated expressions
    assert len({id(b) for b in blocks}) == len({bytes(b) for b in blocks})
