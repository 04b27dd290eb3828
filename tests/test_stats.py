"""``ptxdwarf stats``: the DWARF-only figures against ``llvm-dwarfdump --statistics``, the
readable shares against the register map walked here, ``--compare`` and ``--html``."""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import CORPUS, FIXTURES, GOOD_FIXTURES, ROOT, CubinPath, _missing, fixture_id, run_dwarfdump
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from ptxdwarf.autodebug import attach_ptx
from ptxdwarf.cli import main
from ptxdwarf.cuda.cubin import cubin_images, elf_contents, read_cubin
from ptxdwarf.cuda.ptxas import compile_text
from ptxdwarf.dwarf.constants import AT, OP, TAG
from ptxdwarf.dwarf.expr import decode_expression
from ptxdwarf.dwarf.image import Block, Symbol
from ptxdwarf.dwarf.model import DIE, die_path
from ptxdwarf.errors import ToolError
from ptxdwarf.stats import StatsReport, VariableStats, compare, stats
from ptxdwarf.stats.html import BAR_WIDTH, page
from tools.ptxas_facts.cases.registers import _unused_register

LLVM_19 = Path("/usr/lib/llvm-19/bin/llvm-dwarfdump")

#: The keys of llvm-dwarfdump's statistics that do not depend on a code address.
ADDRESS_FREE = (
    "#functions",
    "#inlined functions",
    "#call site entries",
    "#params",
    "#params with binary location",
    "#local vars",
    "#local vars with binary location",
)


def _with_dwarf(paths: list[Path]) -> list[Path]:
    return [p for p in paths if ".debug_info" in p.read_text(errors="replace") and "rejected" not in p.name]


def _tools(llvm_dwarfdump: str) -> list[str]:
    return [llvm_dwarfdump, *([str(LLVM_19)] if LLVM_19.exists() else [])]


def _cubin(tmp_path: Path, path: Path) -> Path:
    """The cubin of ``path`` made by the ptxas of its ``.version`` (the fixture's ptxas may be
    older than the corpus' PTX)."""
    text = path.read_text(errors="surrogateescape")
    try:
        result, _arch = compile_text(text, filename=path.name)
    except ToolError as exc:
        pytest.skip(f"ptxas refuses it: {exc}")
    out = tmp_path / f"{fixture_id(path).replace('/', '_')}.cubin"
    out.write_bytes(result.cubin)
    return out


def addresses_llvm_reads(cubin: Path) -> bool:
    """Whether llvm-dwarfdump, which applies no R_CUDA relocation, reads the code addresses
    ptxas meant: at every relocation of .debug_info and .debug_loc the section's bytes hold
    the relocated value already (a code address, a section offset: the DW_OP_addr of a
    variable aside), and no pair of bounds (a .debug_loc entry, or a DIE's low
    and high PC, both at relocations or both not) has only one bound relocated (ptxas writes
    a 0 for a label it dropped, quirk label-at-line-zero)."""
    elf = elf_contents(cubin)
    data_objects = {name for name, s in cubin_images(cubin).symbols.items() if s.kind == "STT_OBJECT"}
    for section in (".debug_info", ".debug_loc"):
        data = elf.get(section) or b""
        relocs = [r for r in elf.relocations.get(section, []) if r.symbol not in data_objects]
        for r in relocs:
            size = 8 if r.type in (2, 10) else 4  # R_CUDA_64, R_CUDA_G64
            raw = int.from_bytes(data[r.offset : r.offset + size], "little")
            if r.addend is not None and raw != elf.symbols.get(r.symbol, (0, 0))[0] + r.addend:
                return False
        if section == ".debug_loc" and not _bounds_alike(data, {r.offset for r in relocs}):
            return False
    info = read_cubin(cubin)
    for die in info.iter_dies():
        low, high = die.attr(AT.low_pc), die.attr(AT.high_pc)
        if (
            low is not None
            and high is not None
            and high.form == low.form
            and (low.symbol is None) != (high.symbol is None)
        ):
            return False
    return True


def _bounds_alike(data: bytes, relocated: set[int]) -> bool:
    """Whether each entry of the 64-bit ``.debug_loc`` ``data`` has both bounds or neither at
    a relocation (``relocated``: their offsets)."""
    pos = 0
    while pos + 16 <= len(data):
        begin, end = struct.unpack_from("<QQ", data, pos)
        if (pos in relocated) != (pos + 8 in relocated):
            return False
        if begin == end == 0 and pos not in relocated:
            pos += 16
            continue
        if begin == 0xFFFFFFFFFFFFFFFF:
            pos += 16
            continue
        (length,) = struct.unpack_from("<H", data, pos + 16)
        pos += 18 + length
    return True


#: The counts that depend neither on an address nor on llvm-dwarfdump reading a location.
COUNTS = ("#functions", "#inlined functions", "#call site entries", "#params", "#local vars")


def _verified(tool: str, cubin: Path) -> bool:
    """Whether ``llvm-dwarfdump --verify`` finds the cubin's DWARF valid, but for the
    overlapping ranges of functions it sees all at address 0 (it applies no R_CUDA
    relocation)."""
    out = subprocess.run([tool, "--verify", str(cubin)], capture_output=True, text=True, timeout=300)
    errors = [
        line
        for line in (out.stdout + out.stderr).splitlines()
        if line.startswith("error:") and "overlapping address ranges" not in line
    ]
    return not errors


def _differential(cubin: Path, tools: list[str]) -> None:
    mine = stats(cubin).modules[0].dwarf.llvm_keys()
    exact = addresses_llvm_reads(cubin)
    for tool in tools:
        theirs = json.loads(run_dwarfdump(tool, cubin, "--statistics"))
        if not _verified(tool, cubin):
            keys = list(COUNTS)
        else:
            keys = list(mine) if exact else list(ADDRESS_FREE)
        assert {k: mine[k] for k in keys} == {k: theirs[k] for k in keys}, tool


@pytest.mark.parametrize("path", _with_dwarf(GOOD_FIXTURES), ids=fixture_id)
@pytest.mark.ptxas
def test_the_dwarf_figures_are_llvm_dwarfdumps_on_the_fixtures(
    path: Path, tmp_path: Path, llvm_dwarfdump: str
) -> None:
    _differential(_cubin(tmp_path, path), _tools(llvm_dwarfdump))


@pytest.mark.slow
@pytest.mark.parametrize("path", _with_dwarf(CORPUS), ids=fixture_id)
@pytest.mark.ptxas
def test_the_dwarf_figures_are_llvm_dwarfdumps_on_the_corpus(
    path: Path, tmp_path: Path, llvm_dwarfdump: str
) -> None:
    _differential(_cubin(tmp_path, path), _tools(llvm_dwarfdump))


@pytest.mark.ptxas
def test_most_fixtures_are_compared_on_every_figure(tmp_path: Path) -> None:
    """The exact comparison is the rule: addresses llvm-dwarfdump misreads are the exception."""
    exact = [addresses_llvm_reads(_cubin(tmp_path, p)) for p in _with_dwarf(GOOD_FIXTURES)]
    assert sum(exact) >= 0.8 * len(exact)


# -- the register map, walked here ---------------------------------------------------------------


def walk_register_map(cubin: Path) -> dict[str, list[tuple[int, str, int, int]]]:
    """Per function, (piece, PTX register, low, high) of each entry of .nv_debug_info_reg_sass,
    decoded as docs/register-map.md lays it out (read with pyelftools)."""
    with cubin.open("rb") as f:
        section = ELFFile(f).get_section_by_name(".nv_debug_info_reg_sass")
        data = section.data() if section is not None else b""
    found: dict[str, list[tuple[int, str, int, int]]] = {}
    pos = 0
    while pos < len(data):
        end = data.index(b"\0", pos)
        function = data[pos:end].decode()
        (count,) = struct.unpack_from("<I", data, end + 1)
        pos = end + 5
        entries = found.setdefault(function, [])
        for _ in range(count):
            (piece,) = struct.unpack_from("<I", data, pos)
            end = data.index(b"\0", pos + 4)
            name = data[pos + 4 : end].decode()
            _sass, low, high = struct.unpack_from("<III", data, end + 1)
            entries.append((piece, name, low, high))
            pos = end + 13
    return found


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(s for s in spans if s[1] > s[0]):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return out


def _meet(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return _merge([(max(x, y), min(p, q)) for x, p in a for y, q in b if max(x, y) < min(p, q)])


def _held(entries: list[tuple[int, str, int, int]], register: str) -> list[tuple[int, int]]:
    """Where every piece the map has of ``register`` is in a SASS register."""
    pieces = {p for p, r, lo, hi in entries if r == register and hi > lo}
    held: list[tuple[int, int]] | None = None
    for piece in pieces:
        spans = _merge([(lo, hi) for p, r, lo, hi in entries if r == register and p == piece])
        held = spans if held is None else _meet(held, spans)
    return held or []


def _register(expr: Block) -> str | None:
    """The PTX register of ``DW_OP_regx``, alone or as the one register piece among empty pieces."""
    ops = decode_expression(expr, 8)
    if any(op.code not in (OP.regx, OP.piece) for op in ops):
        return None
    registers = {op.register for op in ops if op.code == OP.regx}
    return registers.pop() if len(registers) == 1 else None


def _function_of(die: DIE) -> str:
    while die.tag != TAG.subprogram:
        assert die.parent is not None
        die = die.parent
    low = die.attr(AT.low_pc)
    assert low is not None and low.symbol is not None
    return low.symbol.name


def _expected_readable(cubin: Path) -> dict[str, int]:
    """Per variable path, the bytes a debugger reads it in: its DWARF location's ranges (each
    list entry's, or all of the scope stats gives as covered) where an entry names no register,
    or where the map walked here holds the register the entry names."""
    regmap = walk_register_map(cubin)
    report = stats(cubin)
    covered = {v.path: v for v in report.modules[0].variables}
    info = read_cubin(cubin)
    expected: dict[str, int] = {}
    for die in info.iter_dies():
        path = die_path(die)
        v = covered.get(path)
        if v is None or die.tag not in (TAG.variable, TAG.formal_parameter) or AT.location not in die:
            continue
        function = _function_of(die)
        scope = _merge(v.covered)
        value = die.get(AT.location)
        entries: list[tuple[list[tuple[int, int]], str | None]] = []
        if isinstance(value, Block):
            entries.append((scope, _register(value)))
        else:
            loc = info.location_list_at(value)
            assert loc is not None
            for begin, end, expr in loc.entries:
                if expr is None or not (isinstance(begin, Symbol) and isinstance(end, Symbol)):
                    continue
                entries.append(([(begin.addend, end.addend)], _register(expr)))
        readable: list[tuple[int, int]] = []
        for spans, register in entries:
            if register is not None:
                spans = _meet(spans, _held(regmap.get(function, []), register))
            readable.extend(spans)
        expected[path] = sum(hi - lo for lo, hi in _meet(_merge(readable), scope))
    return expected


def _only_registers(v: VariableStats) -> bool:
    return len(v.registers) <= 1


def _nvcc_g() -> str:
    return (FIXTURES / "nvcc" / "coop_reduce.G.sm_75.ptx").read_text()


def _numba() -> str:
    return (FIXTURES / "numba" / "kernel_arrays.sm_75.ptx").read_text()


def _attached() -> str:
    path = FIXTURES / "nodebug" / "saxpy.numba.sm_75.ptx"
    return attach_ptx(path.read_text(), output_name="/tmp/module.debug.ptx").text


def _mapped_in_part() -> str:
    path = FIXTURES / "nodebug" / "rich.nvcc.O3.sm_75.ptx"
    return attach_ptx(path.read_text(), output_name="/tmp/module.debug.ptx").text


MODULES = {
    "nvcc-G": _nvcc_g,
    "numba-debug": _numba,
    "attach": _attached,
    "builder-unused-register": _unused_register(False),
    "mapped-in-part": _mapped_in_part,
}


@pytest.mark.parametrize("make", list(MODULES.values()), ids=list(MODULES))
def test_the_readable_shares_are_the_register_maps(make: object, cubin_path: CubinPath) -> None:
    assert callable(make)
    cubin = cubin_path(make(), "module")
    expected = _expected_readable(cubin)
    found = {v.path: v.readable_bytes for v in stats(cubin).modules[0].variables if _only_registers(v)}
    assert found and set(found) <= set(expected)
    assert found == {p: expected[p] for p in found}


def test_a_register_the_code_never_uses_is_never_readable(cubin_path: CubinPath) -> None:
    cubin = cubin_path(_unused_register(False)(), "unused")
    module = stats(cubin).modules[0]
    assert "%r0" not in {r for _, r, _, _ in walk_register_map(cubin)["_Z4testPi"]}
    (never,) = [v for v in module.variables if v.registers == ["%r0"]]
    assert never.covered_bytes == never.scope_bytes > 0 and never.readable_bytes == 0
    assert module.never_readable >= 1


def test_a_module_mapped_in_part_has_variables_never_readable(cubin_path: CubinPath) -> None:
    module = stats(cubin_path(_mapped_in_part(), "part")).modules[0]
    assert 0 < module.never_readable < len(module.variables)


# -- the command line ---------------------------------------------------------------------------


def _ptx(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.ptxas
def test_compare_fails_when_a_readable_share_drops(capsys: pytest.CaptureFixture[str]) -> None:
    g = str(FIXTURES / "nvcc" / "rich.sm_75.ptx")
    lineinfo = str(FIXTURES / "nvcc" / "rich.lineinfo.sm_75.ptx")
    assert main(["stats", "--compare", g, lineinfo]) == 1
    assert "DROPPED" in capsys.readouterr().out
    assert main(["stats", "--compare", g, g]) == 0
    assert "0 function(s)" in capsys.readouterr().out


@pytest.mark.ptxas
def test_compare_of_attach_with_and_without_only_mapped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (FIXTURES / "nodebug" / "rich.nvcc.O3.sm_75.ptx").read_text()
    mapped = attach_ptx(source, output_name="/tmp/m.debug.ptx", only_mapped=True).text
    old = _ptx(tmp_path, "mapped.ptx", mapped)
    new = _ptx(tmp_path, "full.ptx", _mapped_in_part())
    assert main(["stats", "--compare", old, new, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "ptxdwarf-compare/1" and doc["dropped"]
    assert main(["stats", "--compare", old, old]) == 0
    assert main(["stats", "--compare", old, new, "--threshold", "100"]) == 0


@pytest.mark.ptxas
def test_stats_json_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "nvcc" / "coop_reduce.G.sm_75.ptx")
    assert main(["stats", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "ptxdwarf-stats/1"
    (module,) = doc["modules"]
    assert module["totals"]["inlined_call_sites"] == module["llvm_dwarfdump"]["#call site entries"] > 0
    assert sum(module["buckets"]["covered"]) == module["totals"]["variables"]
    assert main(["stats", path]) == 0
    out = capsys.readouterr().out
    assert "inlined call sites" in out and "SASS instructions with a source line" in out


def test_stats_of_a_fatbin_and_a_host_object_reads_their_cubins() -> None:
    for name in ("call_example.sm_75.fatbin", "call_example.sm_75.host.o"):
        report = stats(FIXTURES / "nvcc" / name)
        assert report.modules and all("[elf" in m.label for m in report.modules)


def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.cubin"
    bad.write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x01\x00\xbe\x00" + b"\0" * 8)
    assert main(["stats", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.cubin" in err


# -- the page ------------------------------------------------------------------------------------


def test_the_page_draws_each_variable_as_the_figures_say(tmp_path: Path, cubin_path: CubinPath) -> None:
    cubin = cubin_path(_nvcc_g(), "page")
    report: StatsReport = stats(cubin)
    out = tmp_path / "page.html"
    assert main(["stats", "--brief", "--html", str(out), str(cubin)]) == 0
    text = out.read_text()
    assert text == page(report)
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text
    assert "<script src" not in text and "<link" not in text
    for f in report.modules[0].functions:
        for v in f.variables:
            if not v.scope_bytes:
                continue
            assert f"data-path='{v.path}' data-scope='{v.scope_bytes}'" in text.replace("&lt;", "<").replace(
                "&gt;", ">"
            )
    v = max(report.modules[0].variables, key=lambda v: v.scope_bytes)
    size = next(f.size for f in report.modules[0].functions if v in f.variables)
    widths = [hi - lo for lo, hi in v.readable]
    assert sum(widths) == v.readable_bytes
    assert BAR_WIDTH * sum(widths) / size <= BAR_WIDTH


def test_the_page_marks_where_each_source_lines_code_starts(
    tmp_path: Path, cubin_path: CubinPath, llvm_dwarfdump: str
) -> None:
    """The marks along each function's axis are the rows of .debug_line where a run of one
    nonzero line starts, as llvm-dwarfdump reads them (offsets in the function's code)."""
    cubin = cubin_path(_nvcc_g(), "lines")
    out = tmp_path / "page.html"
    assert main(["stats", "--brief", "--html", str(out), str(cubin)]) == 0
    drawn = sorted(
        (int(offset), int(line))
        for line, offset in re.findall(
            r"class='tick source-line' data-line='(\d+)' data-offset='(\d+)'", out.read_text()
        )
    )
    rows = re.findall(
        r"^0x([0-9a-f]{16})\s+(\d+)\s+\d+\s+\d+\s+\d+\s+\d+\s*(.*)$",
        run_dwarfdump(llvm_dwarfdump, cubin, "--debug-line"),
        flags=re.M,
    )
    expected = []
    previous: int | None = None
    for (address, line, flags), after in zip(rows, [*rows[1:], None], strict=True):
        if "end_sequence" in flags:
            previous = None
            continue
        if int(line) and after is not None and int(after[0], 16) > int(address, 16) and int(line) != previous:
            expected.append((int(address, 16), int(line)))
            previous = int(line)
    assert len(expected) > 10
    assert drawn == sorted(expected)


def test_the_page_names_each_register_variables_sass_registers(tmp_path: Path, cubin_path: CubinPath) -> None:
    """On hover, a variable in registers shows the SASS registers ptxas's map (read as
    tests/test_register_map.py holds it to nvdisasm) puts its PTX registers in."""
    cubin = cubin_path(_nvcc_g(), "sass")
    out = tmp_path / "page.html"
    assert main(["stats", "--brief", "--html", str(out), str(cubin)]) == 0
    text = out.read_text()
    maps = {f.function: f for f in cubin_images(cubin).register_map()}
    shown = 0
    for f in stats(cubin).modules[0].functions:
        for v in f.variables:
            if not v.registers or not v.scope_bytes:
                continue
            sass = sorted({e.sass for e in maps[f.name].entries for ptx in v.registers if e.ptx == ptx})
            title = re.search(
                rf"data-path='{re.escape(html.escape(v.path))}'[^>]*><title>[^<]*\((.*?)\)</title>", text
            )
            assert title is not None, v.path
            assert title.group(1) == f"{', '.join(v.registers)}; SASS {', '.join(sass) or 'none'}"
            shown += bool(sass)
    assert shown > 3


def test_compare_matches_functions_by_name(cubin_path: CubinPath) -> None:
    cubin = cubin_path(_nvcc_g(), "same")
    report = stats(cubin)
    changes = compare(report, report)
    assert [c.name for c in changes] == [f.name for f in report.modules[0].functions]
    assert not any(c.dropped() for c in changes)


#: Run in the page by the browser test: opens every function, writes each variable's rendered
#: readable and located widths (CSS pixels) into its group, and the page's requests into <body>.
_MEASURE = """<script>
document.querySelectorAll('details').forEach(function (d) { d.open = true; });
document.querySelectorAll('g.variable').forEach(function (g) {
  ['readable', 'located'].forEach(function (kind) {
    var width = 0;
    g.querySelectorAll('rect.' + kind).forEach(function (r) { width += r.getBoundingClientRect().width; });
    g.setAttribute('data-rendered-' + kind, width.toFixed(2));
  });
});
document.body.setAttribute('data-requests', performance.getEntriesByType('resource').length);
</script>"""


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        _missing("chromium (Debian: apt-get install chromium)")
        raise AssertionError("unreachable")
    return found


@pytest.mark.slow
def test_chromium_renders_the_bars_the_json_gives(tmp_path: Path, cubin_path: CubinPath) -> None:
    browser = _chromium()
    cubin = cubin_path(_nvcc_g(), "render")
    report = stats(cubin)
    page_path = tmp_path / "page.html"
    assert main(["stats", "--brief", "--html", str(page_path), str(cubin)]) == 0
    measured = tmp_path / "measured.html"
    measured.write_text(page_path.read_text().replace("</body>", _MEASURE + "</body>"))
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND"]
    dom = subprocess.run(
        [*flags, "--virtual-time-budget=5000", "--dump-dom", measured.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    shot = tmp_path / "page.png"
    subprocess.run(
        [*flags, "--window-size=1280,2400", f"--screenshot={shot}", measured.as_uri()],
        capture_output=True,
        timeout=120,
    )
    assert shot.stat().st_size > 0  # the screenshot is kept beside the page, in tmp_path
    assert re.search(r"<body[^>]* data-requests=\"0\"", dom)
    rendered = {
        m.group(1): (float(m.group(2)), float(m.group(3)))
        for m in re.finditer(
            r"<g class=\"variable\" data-path=\"([^\"]*)\"[^>]*data-rendered-readable=\"([\d.]+)\""
            r" data-rendered-located=\"([\d.]+)\"",
            dom,
        )
    }
    module = report.modules[0]
    drawn = 0
    for f in module.functions:
        for v in f.variables:
            if not v.scope_bytes:
                continue
            path = v.path.replace("<", "&lt;").replace(">", "&gt;")
            readable, located = rendered[path]
            assert readable == pytest.approx(BAR_WIDTH * v.readable_bytes / f.size, abs=1.0), v.path
            assert located == pytest.approx(BAR_WIDTH * v.covered_bytes / f.size, abs=1.0), v.path
            drawn += 1
    assert drawn == len(rendered) > 0


def _instructions(cubin: Path) -> int:
    """The cubin's SASS instructions: its function symbols' sizes / 16 (read with pyelftools)."""
    with cubin.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        assert isinstance(symtab, SymbolTableSection)
        return (
            int(sum(s["st_size"] for s in symtab.iter_symbols() if s["st_info"]["type"] == "STT_FUNC")) // 16
        )


@pytest.mark.ptxas
def test_the_share_of_instructions_with_a_line(tmp_path: Path) -> None:
    """Triton's kernel with line info (every instruction has a line: nvdisasm agrees,
    tests/test_producer_suites.py) and without (no .debug_line)."""
    for name, lined in (("add.lines.sm_80.ptx", True), ("add.nolines.sm_80.ptx", False)):
        cubin = _cubin(tmp_path, FIXTURES / "corpus" / "triton" / name)
        module = stats(cubin).modules[0]
        assert module.instructions == _instructions(cubin) > 0
        assert module.instructions_with_line == (module.instructions if lined else 0)


@pytest.mark.ptxas
def test_the_docs_example_page_is_what_stats_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "stats-example.html"
    assert main(["stats", "--brief", "--html", str(out), "fixtures/spec/example.ptx"]) == 0
    assert out.read_text() == (ROOT / "docs" / "stats-example.html").read_text()
