"""Debug sections written as ``@@DWARF`` lines (PTX ISA 1.x, nvopencc): read, rewritten in the
same form, linted against the ``.version``; ptxas -g is the judge of every round trip."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, CubinPath
from elftools.elf.elffile import ELFFile

import ptxdwarf
import ptxdwarf.ptx
import ptxdwarf.ptx.writer
from ptxdwarf.errors import EncodeError, PtxSyntaxError
from ptxdwarf.lint import lint
from ptxdwarf.ptx.writer import format_dwarf_lines

KERNELS = FIXTURES / "dwarf_lines" / "kernels.ptx"


def _debug(cubin: Path) -> dict[str, bytes]:
    """Every debug section and relocation section of a cubin, by name."""
    with cubin.open("rb") as fh:
        elf = ELFFile(fh)
        return {s.name: s.data() for s in elf.iter_sections() if "debug" in s.name}


def test_reader_sees_the_sections() -> None:
    module = ptxdwarf.ptx.parse_ptx(KERNELS.read_text(), "kernels.ptx")
    assert [(b.name, b.dwarf_lines) for b in module.sections] == [
        (".debug_info", True),
        (".debug_pubnames", True),
        (".debug_abbrev", True),
    ]
    info = ptxdwarf.read(text=KERNELS.read_text())
    names = [d.name for d in info.iter_dies() if d.name]
    assert "scale" in names and "zero" in names and "uint2" in names


def test_every_reader_path_agrees() -> None:
    """The quick header scan (dump) and the full module scan (lint, check) see the same blocks."""
    text = KERNELS.read_text()
    quick = ptxdwarf.ptx.parse_ptx(text, "kernels.ptx")
    quick.functions  # noqa: B018 - completes the module with the full scan
    assert [f.name for f in quick.functions] == ["scale", "zero"]
    # ptxas -g compiles it; .target cannot list debug below ISA 3.0
    assert {f.rule for f in lint(text, filename="kernels.ptx")} <= {"target-not-debug"}


@pytest.mark.parametrize("style", ["nvcc", "readable", "compact"])
def test_rewrite_keeps_the_form_and_the_bytes(style: str, cubin_path: CubinPath) -> None:
    text = KERNELS.read_text()
    out = ptxdwarf.rewrite(text, style=style, filename="kernels.ptx")
    assert ".section" not in out.replace("@@DWARF .section", "")
    assert out.count("@@DWARF .section") == 3
    assert _debug(cubin_path(out, "rewritten.ptx")) == _debug(cubin_path(text, "kernels.ptx"))


def test_lint_names_the_wrong_form_for_the_version() -> None:
    text = KERNELS.read_text()
    at_2 = text.replace(".version 1.4", ".version 2.0")
    (f,) = [f for f in lint(at_2, filename="k.ptx") if f.rule == "dwarf-lines-isa"]
    assert "Deprecated feature" in f.message and f.severity == "error"
    # the same sections as .section blocks at 1.4
    module = ptxdwarf.ptx.parse_ptx(at_2, "k.ptx")
    images = {b.name: b.image for b in module.sections}
    blocks = "".join(ptxdwarf.ptx.writer.format_section(img) for img in images.values())
    head = text[: text.index("\t@@DWARF")]
    (g,) = [g for g in lint(head + blocks, filename="k.ptx") if g.rule == "dwarf-lines-isa"]
    assert "requires PTX ISA .version 2.0" in g.message


def test_data_before_any_section_is_an_error() -> None:
    text = ".version 1.4\n.target sm_10\n@@DWARF .byte 1, 2\n"
    with pytest.raises(PtxSyntaxError, match=r"@@DWARF data before any @@DWARF \.section") as exc:
        ptxdwarf.ptx.parse_ptx(text, "x.ptx")
    assert exc.value.line == 3


def test_bad_value_names_its_line() -> None:
    text = KERNELS.read_text().replace("@@DWARF .byte\t0x00\n", "@@DWARF .byte\t0x100\n", 1)
    line = text[: text.index("0x100")].count("\n") + 1
    with pytest.raises(PtxSyntaxError) as exc:
        ptxdwarf.read(text=text, filename="k.ptx")
    assert exc.value.line == line


def test_writer_refuses_labels() -> None:
    module = ptxdwarf.ptx.parse_ptx(
        ".version 7.5\n.target sm_75\n.section .debug_str\n{\n$L__s:\n.b8 97, 0\n}\n"
    )
    with pytest.raises(EncodeError, match="cannot define labels"):
        format_dwarf_lines(module.sections[0].image)
