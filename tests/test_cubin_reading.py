"""Reading cubins as ptxas and the CUDA driver leave them, quirks included.

The variants are made here from real ptxas output by patching one ELF field (the way
CUDA 12.1 and 12.9 cubins differ from CUDA 13's); ``fixtures/cubins/README.md`` says how
the stored cubin was made.
"""

from __future__ import annotations

import io
import struct
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest
from conftest import FIXTURES, CubinPath
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import SymbolTableSection
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.dump
import ptxdwarf.dwarf
from ptxdwarf.cli import main
from ptxdwarf.cuda.cubin import CUDA_RELOCATIONS, _Disk, cubin_images, elf_contents
from ptxdwarf.cuda.nvinfo import EIATTR_KPARAM_INFO, EIATTR_PARAM_CBANK, iter_attributes, kernel_param_offsets
from ptxdwarf.cuda.ptxas import Ptxas
from ptxdwarf.dwarf.image import Symbol
from ptxdwarf.errors import PtxDwarfError

CALL = FIXTURES / "nvcc" / "call_example.sm_75.ptx"
LOOPS = FIXTURES / "cubins" / "loops.debugopt.sm_75.cubin"


def _patched(cubin: bytes, edit: str) -> bytes:
    """``cubin`` with one header field changed: ``sh_link`` of every relocation section of a
    debug section naming ``.debug_info``; ``e_version`` 129 (CUDA 12.9's toolkit version); or
    ``.debug_loc`` cut short with its relocations gone."""
    data = bytearray(cubin)
    elf = ELFFile(io.BytesIO(cubin))
    shoff, entsize = elf["e_shoff"], elf["e_shentsize"]
    names = [s.name for s in elf.iter_sections()]
    if edit == "e_version":
        struct.pack_into("<I", data, 20, 129)
        return bytes(data)
    for i, name in enumerate(names):
        header = shoff + i * entsize
        if edit == "sh_link" and name.startswith((".rel.debug_", ".rela.debug_")):
            struct.pack_into("<I", data, header + 40, names.index(".debug_info"))
        elif edit == "cut_loc" and name in (".rel.debug_loc", ".rela.debug_loc"):
            struct.pack_into("<Q", data, header + 32, 0)
        elif edit == "cut_loc" and name == ".debug_loc":
            struct.pack_into("<Q", data, header + 32, 0x330)
    return bytes(data)


@pytest.fixture(scope="module")
def call_cubin(cubin_path: CubinPath) -> bytes:
    return Path(cubin_path(CALL.read_text(), CALL.name)).read_bytes()


def test_sections_named_after_a_function_are_not_debug_sections() -> None:
    """A kernel called ``debug_kernel`` (nvcc 13.0 ``-G``) has ``.text``, ``.nv.info`` and
    ``.nv.constant0`` sections with "debug" in their names: the dump lists only the debug
    sections it does not decode (readelf's ``.debug_frame``, ``.debug_macinfo`` and the 0x28d
    bytes of ``.nv_debug_ptx_txt``)."""
    text = ptxdwarf.dump.dump_text(ptxdwarf.read(FIXTURES / "cubins" / "debug-kernel.sm_75.cubin"))
    assert [line for line in text.splitlines() if line.endswith("(not decoded)")] == [
        ".debug_frame: 1736 bytes (not decoded)",
        ".debug_macinfo: 1 bytes (not decoded)",
        ".nv_debug_ptx_txt: 653 bytes (not decoded)",
    ]


def test_elf_contents_is_the_file_as_ptxas_wrote_it(call_cubin: bytes) -> None:
    """Nothing applied: the bytes of ``.debug_info`` are those of ``cubin_images`` outside the
    relocation sites, and its relocations are those pyelftools reads, type and addend as written."""
    raw = elf_contents(call_cubin)
    applied = cubin_images(call_cubin).images[".debug_info"]
    data = raw.get(".debug_info")
    relocations = raw.relocations[".debug_info"]
    assert data is not None and relocations and raw.count(".debug_info") == 1
    assert all(r.type in CUDA_RELOCATIONS and r.symbol for r in relocations)
    sites = {r.offset + k for r in relocations for k in range(CUDA_RELOCATIONS[r.type][1])}
    assert len(data) == len(applied.data)
    assert all(data[i] == applied.data[i] for i in range(len(data)) if i not in sites)
    elf = ELFFile(io.BytesIO(call_cubin))
    symtab = elf.get_section_by_name(".symtab")
    assert isinstance(symtab, SymbolTableSection)
    (section,) = [
        s
        for s in elf.iter_sections()
        if isinstance(s, RelocationSection) and elf.get_section(s["sh_info"]).name == ".debug_info"
    ]
    expected = [
        (r["r_offset"], r["r_info_type"], r["r_addend"] if section.is_RELA() else None)
        for r in section.iter_relocations()
    ]
    assert [(r.offset, r.type, r.addend) for r in relocations] == expected
    names = [symtab.get_symbol(r["r_info_sym"]).name for r in section.iter_relocations()]
    assert all(r.symbol == name for r, name in zip(relocations, names, strict=True) if name)
    first = relocations[0]
    assert raw.relocation_at(".debug_info", first.offset) == first
    assert raw.relocation_at(".debug_info", -1) is None
    assert "_Z4testPi" in raw.symbols


def _dump(cubin: bytes) -> str:
    return ptxdwarf.dump.dump_text(ptxdwarf.cuda.read_cubin(cubin, name="x.cubin"))


@pytest.mark.ptxas
def test_relocations_whose_sh_link_names_no_symbol_table_use_symtab(call_cubin: bytes) -> None:
    """CUDA 12.1: a relocation section's ``sh_link`` names another section. Its relocations are
    resolved against ``.symtab`` (the dump equals the unpatched cubin's) with a note, never by
    reading that section's bytes as symbols."""
    patched = _patched(call_cubin, "sh_link")
    assert patched != call_cubin
    info = ptxdwarf.cuda.read_cubin(patched, name="x.cubin")
    assert ptxdwarf.dump.dump_text(info) == _dump(call_cubin)
    assert info.notes and all(
        "not a symbol table" in n and "resolved against .symtab" in n for n in info.notes
    )


def test_toolkit_version_in_e_version_is_read(call_cubin: bytes, tmp_path: Path) -> None:
    """A cubin's ``e_version`` holds the toolkit version (129 for CUDA 12.9); strict ELF readers
    reject it, ptxdwarf reads it like any other cubin."""
    patched = _patched(call_cubin, "e_version")
    assert ELFFile(io.BytesIO(patched))["e_version"] != "EV_CURRENT"
    assert _dump(patched) == _dump(call_cubin)
    path = tmp_path / "v129.cubin"
    path.write_bytes(patched)
    assert main(["dump", str(path)]) == 0


def test_orphan_location_bytes_are_a_note_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    """ptxas 13.5 dropped two labels of numba's loops kernel (``-g``, ``opt=True``); the 0, 0 it
    wrote for them ends the list at .debug_loc+0x319 early, and the 130 bytes after it that no
    DIE refers to hold no list. Every list a DIE refers to is read; the rest is one note."""
    info = ptxdwarf.cuda.read_cubin(LOOPS, name="loops.cubin").load_all()
    referenced = {
        a.value
        for d in info.iter_dies()
        for a in d.attributes
        if a.name == ptxdwarf.dwarf.AT.location and a.form == ptxdwarf.dwarf.FORM.data4
    }
    assert referenced and all(info.location_list_at(o) is not None for o in referenced)
    assert len(info.notes) == 1 and info.notes[0].startswith(".debug_loc+0x342: 130 byte(s)")
    assert main(["dump", str(LOOPS)]) == 0
    err = capsys.readouterr().err
    assert err.strip() == f"ptxdwarf: note: {LOOPS}: {info.notes[0]}"


def test_the_location_lists_by_offset_follow_the_lists() -> None:
    """``location_list_at`` answers from the lists the model holds now: lists given in place of
    others of the same number (check reads a cubin's lists through the PTX's), lists added, and
    two at one offset (the later, looked up once)."""
    from ptxdwarf.dwarf.model import DebugInfo, LocationList

    first, second = LocationList(0x10, [(0, 4, None)]), LocationList(0x10, [(0, 8, None)])
    info = DebugInfo()
    info.locations = [first]
    assert info.location_list_at(0x10) is first
    info.locations = [second]
    assert info.location_list_at(0x10) is second
    info.locations.append(LocationList(0x20))
    assert info.location_list_at(0x20) is info.locations[1]
    info.locations = [LocationList(-1) for _ in range(3)] + [first]
    assert info.location_list_at(0x10) is first and info.location_list_at(-1) is info.locations[2]
    index = info._loc_index
    assert info.location_list_at(-1) is info.locations[2] and info._loc_index is index


def test_unreadable_list_a_die_refers_to_is_an_error_naming_the_file(tmp_path: Path) -> None:
    cut = tmp_path / "cut.cubin"
    cut.write_bytes(_patched(LOOPS.read_bytes(), "cut_loc"))
    with pytest.raises(PtxDwarfError) as caught:
        ptxdwarf.cuda.read_cubin(cut).load_all()
    assert str(caught.value).startswith(f"{cut} (.debug_loc+0x319): truncated location list")
    proc = subprocess.run(
        [sys.executable, "-m", "ptxdwarf", "dump", str(cut)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and str(cut) in proc.stderr


_KERNEL = """.version 9.0
.target sm_75
.address_size 64

.visible .entry k(
\t.param .u64 k_param_0,
\t.param .f64 k_param_1,
\t.param .u8 k_param_2
)
{
\t.reg .b16 %rs<2>;
\t.reg .b32 %r<4>;
\t.reg .f64 %fd<2>;
\t.reg .b64 %rd<3>;
\tld.param.s8 %rs1, [k_param_2];
\tld.param.u64 %rd1, [k_param_0];
\tld.param.f64 %fd1, [k_param_1];
\tcvta.to.global.u64 %rd2, %rd1;
\tcvt.rzi.s32.f64 %r1, %fd1;
\tcvt.s32.s16 %r2, %rs1;
\tadd.s32 %r3, %r1, %r2;
\tst.global.u32 [%rd2], %r3;
\tret;
}
"""


def test_kernel_parameters_are_where_nv_info_places_them_in_the_constant_bank(ptxas_tool: Ptxas) -> None:
    """``.nv.info.k`` of sm_75: EIATTR_PARAM_CBANK puts the parameters at 0x160 in bank 0 and
    one EIATTR_KPARAM_INFO per parameter gives its offset there (the last parameter first)."""
    found = cubin_images(ptxas_tool.compile(_KERNEL, arch="sm_75").cubin)
    attrs = list(iter_attributes(found.nv_info["k"]))
    bank = [v for a, v in attrs if a == EIATTR_PARAM_CBANK]
    assert len(bank) == 1 and int.from_bytes(bank[0][4:6], "little") == 0x160
    ordinals = [int.from_bytes(v[4:6], "little") for a, v in attrs if a == EIATTR_KPARAM_INFO]
    assert ordinals == [2, 1, 0]
    assert kernel_param_offsets(found) == {"k": {0: 0x160, 1: 0x168, 2: 0x170}}


@pytest.mark.ptxas
def test_a_list_ends_where_relocations_against_dropped_labels_make_its_end_mark(tmp_path: Path) -> None:
    """The same kernel compiled with ``-c``: ptxas relocates the two dropped labels against
    local symbols nothing defines instead of writing 0, 0; those read 0 wherever the cubin is
    loaded, so the list still ends there, as in the cubin ptxas wrote the zeros into."""
    from ptxdwarf.cuda.ptxas import wheel_ptxas

    wheel = wheel_ptxas()
    assert wheel, "the nvidia-cuda-nvcc wheel's ptxas is not installed"
    ptx = FIXTURES / "corpus" / "numba-nvvm-13.5" / "loops.debugopt.ptx"
    out = tmp_path / "loops.c.cubin"
    subprocess.run([wheel[0], "-arch", "sm_75", "-g", "-c", str(ptx), "-o", str(out)], check=True)
    found = ptxdwarf.cuda.cubin_images(out.read_bytes())
    dropped = {
        r.symbol.name
        for r in found.images[".debug_loc"].relocs
        if found.symbols[r.symbol.name].section is None
    }
    assert dropped, "ptxas 13.5 no longer drops the labels"
    relocated = ptxdwarf.cuda.read_cubin(out, name="loops.c.cubin").load_all()
    written = ptxdwarf.cuda.read_cubin(LOOPS, name="loops.cubin").load_all()
    assert [len(x.entries) for x in relocated.locations or []] == [
        len(x.entries) for x in written.locations or []
    ]
    at = relocated.location_list_at(0x319)
    assert at is not None
    (_entry,) = at.entries
    assert relocated.notes == written.notes


def test_range_lists_end_where_dropped_labels_make_the_end_mark() -> None:
    """The rule of the test above, in ``.debug_ranges``: relocations against local symbols
    nothing defines that resolved to 0 end the list; against defined symbols they do not."""
    from ptxdwarf.dwarf.decode import _decode_ranges
    from ptxdwarf.dwarf.image import Reloc, SectionImage

    relocs = [Reloc(0, 8, Symbol("$L__a", 0, 0)), Reloc(8, 8, Symbol("$L__b", 0, 0))]
    dropped = SectionImage(
        ".debug_ranges", bytes(32), relocs, relocs_applied=True, unresolved=frozenset({"$L__a", "$L__b"})
    )
    assert [(r.offset, r.entries) for r in _decode_ranges(dropped, 8, 2)] == [(0, []), (16, [])]
    defined = SectionImage(".debug_ranges", bytes(32), relocs, relocs_applied=True)
    ((offset, entries),) = [(r.offset, r.entries) for r in _decode_ranges(defined, 8, 2)]
    assert offset == 0 and [(cast(Symbol, b).name, cast(Symbol, e).name) for b, e in entries] == [
        ("$L__a", "$L__b")
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 300_000), st.integers(0, 9000)), min_size=1, max_size=30))
def test_a_file_on_disk_is_read_as_its_bytes(
    tmp_path_factory: pytest.TempPathFactory, reads: list[tuple[int, int]]
) -> None:
    """Reads of a cubin on disk, small ones served from the window read ahead and large ones
    not, give the file's bytes wherever they fall; a read past the end is an error."""
    path = tmp_path_factory.getbasetemp() / "bytes.bin"
    if not path.exists():
        path.write_bytes(bytes(i * 7 % 251 for i in range(200_000)))
    raw = path.read_bytes()
    with path.open("rb") as f:
        disk = _Disk(f, path, "bytes.bin")
        for start, length in reads:
            stop = start + length
            if stop > len(raw) and length:
                with pytest.raises(PtxDwarfError, match="the file ended at"):
                    disk.read(start, stop)
            else:
                assert disk.read(start, stop) == raw[start:stop]
