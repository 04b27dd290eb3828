"""``check``: the ptxas round trip, consistent on every producer's output and the builder's,
with planted faults found and named; ptxas found on PATH and in the wheel; the helpers
in ``ptxdwarf.testing``."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, GOOD_FIXTURES, MOVED_LABELS, every_ptxas, fixture_id, ptxas_id
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.dwarf
import ptxdwarf.ptx
from ptxdwarf import DebugInfoBuilder, loc
from ptxdwarf.check import CheckReport, check
from ptxdwarf.cli import main
from ptxdwarf.cuda.ptxas import (
    ADDRESS_SIZE_32_BY_DEFAULT,
    Ptxas,
    PtxasFailed,
    PtxasRun,
    wheel_ptxas,
)
from ptxdwarf.dwarf import AddressClass
from ptxdwarf.testing import assert_dies_equal, compile_ptx, query
from tools.ptxas_facts import within_reach

EXAMPLE = (FIXTURES / "spec" / "example.ptx").read_text()
CALL = (FIXTURES / "nvcc" / "call_example.sm_75.ptx").read_text()


@pytest.mark.parametrize("path", GOOD_FIXTURES, ids=fixture_id)
def test_every_fixture_is_consistent(path: Path, ptxas_tool: Ptxas) -> None:
    """Consistent, but for the labels ptxas moves (MOVED_LABELS), which lint names too."""
    report = check(path.read_text(), filename=path.name, ptxas=ptxas_tool)
    moved = MOVED_LABELS.get(fixture_id(path), set())
    assert {d.ptx for d in report.differences} == moved, "\n".join(map(str, report.differences))
    assert all(d.what == "address" for d in report.differences)
    if moved:
        named = " ".join(
            f.message for f in ptxdwarf.lint.lint(path.read_text()) if f.rule == "label-at-line-zero"
        )
        assert all(re.search(rf"(^|\s){re.escape(label)}\b", named) for label in moved), named
    if report.units:
        assert report.dies > 0 and report.symbols > 0


@pytest.mark.parametrize(
    "name",
    ["spec/example.ptx", "nvcc/call_example.sm_75.ptx", "nvcc/readable.G.sm_75.ptx", "nvcc/rich.sm_75.ptx"],
)
def test_counts_are_those_of_an_independent_reader(name: str, ptxas_tool: Ptxas) -> None:
    """The units and DIEs check compared are those pyelftools finds in the cubin ptxas makes."""
    from elftools.elf.elffile import ELFFile

    text = (FIXTURES / name).read_text()
    report = check(text, filename=name, ptxas=ptxas_tool)
    dwarf = ELFFile(io.BytesIO(compile_ptx(text, ptxas=ptxas_tool).data)).get_dwarf_info(
        relocate_dwarf_sections=False
    )
    units = list(dwarf.iter_CUs())
    dies = sum(1 for cu in units for die in cu.iter_DIEs() if not die.is_null())
    assert (report.units, report.dies) == (len(units), dies)
    assert report.symbols > 0


def test_builder_output_is_consistent(ptxas_tool: Ptxas) -> None:
    from test_builder import ALL_SPACES, rich

    for version in (2, 3, 4):
        for strings in ("inline", "strp"):
            text = ptxdwarf.attach.attach(ALL_SPACES, rich(version, 8, strings), filename="all_spaces.ptx")
            report = check(text, filename="all_spaces.ptx", ptxas=ptxas_tool)
            assert report.consistent, "\n".join(map(str, report.differences))
            assert report.symbols >= 20


def _replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) >= 1, old
    return text.replace(old, new, 1)


def test_repeated_string_label_is_found(ptxas_tool: Ptxas) -> None:
    """ptxas resolves a second reference to the same .debug_str label to 0."""
    info = ptxdwarf.read(text=EXAMPLE)
    for die in info.iter_dies():
        for a in die.attributes:
            if a.form == ptxdwarf.dwarf.FORM.string:
                a.form = ptxdwarf.dwarf.FORM.strp
    images = ptxdwarf.dwarf.encode_sections(
        info, ptxdwarf.dwarf.EncodeOptions(keep_abbrevs=False, string_labels=True)
    )
    text = ptxdwarf.ptx.debug.replace_debug_sections(
        ptxdwarf.ptx.parse_ptx(EXAMPLE.replace(".version 4.2", ".version 7.0")), images
    )
    # foo's linkage name and name are the same string: point both at one label.
    labels = re.findall(r"^\.b32 (\$L__str\d+)$", text, re.M)
    first, second = labels[3], labels[4]  # producer, name, comp_dir, then foo's two names
    strings = ptxdwarf.read(text=text).strings
    assert strings is not None
    text = _replace_once(text, f".b32 {second}\n", f".b32 {first}\n")
    assert [d.name for d in ptxdwarf.read(text=text).iter_dies()][
        1
    ] == "_Z3fooii"  # the PTX still says the same
    # ptxas reads freed memory here: a few runs in a hundred fail with "label '<garbage>' invalid"
    # instead (case strp-label-reused.second-zero); both are what ptxas does with this module.
    try:
        report = check(text, filename="strp.ptx", ptxas=ptxas_tool)
    except PtxasFailed as exc:
        assert re.search(r"label '.*' invalid", str(exc), re.S), str(exc)  # the garbage may hold quotes
        return
    assert [(d.path, d.what) for d in report.differences] == [("_Z3fooii", "DW_AT_name [DW_FORM_strp]")]
    assert report.differences[0].ptx == "'_Z3fooii'" and report.differences[0].cubin == "'lgenfe: EDG 4.9'"
    assert f"{first} became 0x0" in report.differences[0].message


def test_device_parameter_address_is_found(ptxas_tool: Ptxas) -> None:
    """DW_OP_addr of a device function's parameter: ptxas cannot place it and writes 0."""
    info = ptxdwarf.read(text=CALL)
    i = next(d for d in info.iter_dies() if d.name == "i")
    location, address_class = i.attr("DW_AT_location"), i.attr("DW_AT_address_class")
    assert location is not None and address_class is not None
    location.value = ptxdwarf.dwarf.encode_expression(
        [ptxdwarf.dwarf.Op.make("addr", ptxdwarf.dwarf.Symbol("_Z3fooii_param_0"))], 8
    )
    address_class.value = 7
    text = ptxdwarf.ptx.debug.replace_debug_sections(
        ptxdwarf.ptx.parse_ptx(CALL), ptxdwarf.dwarf.encode_sections(info)
    )
    report = check(text, filename="devparam.ptx", ptxas=ptxas_tool)
    assert [(d.path, d.what) for d in report.differences] == [
        ("_Z3fooii/i", "DW_AT_location [DW_FORM_block1]")
    ]
    assert "device function" in report.differences[0].message


def test_undefined_label_is_found(ptxas_tool: Ptxas) -> None:
    text = _replace_once(CALL, ".b64 $L__func_end0", ".b64 $L__nowhere")
    report = check(text, filename="label.ptx", ptxas=ptxas_tool)
    assert [(d.path, d.what) for d in report.differences] == [("_Z3fooii", "DW_AT_high_pc [DW_FORM_addr]")]
    assert "$L__nowhere is not defined" in report.differences[0].message


def test_truncated_b64_constant_is_found(ptxas_tool: Ptxas) -> None:
    """ptxas keeps the low 32 bits of a .b64 number: the CU's low_pc 2**32 becomes 0."""
    text = _replace_once(EXAMPLE, ".b64 0\n", ".b64 4294967296\n")
    report = check(text, filename="b64.ptx", ptxas=ptxas_tool)
    assert [(d.path, d.what, d.ptx, d.cubin) for d in report.differences] == [
        ("call1.cu", "DW_AT_low_pc [DW_FORM_addr]", "0x100000000", "0x0")
    ]


def test_label_moved_to_another_function_is_found(ptxas_tool: Ptxas) -> None:
    """foo's high_pc written as a label of test: the relocation lands in the wrong function."""
    text = _replace_once(CALL, ".b64 $L__func_end0", ".b64 $L__func_end1")
    report = check(text, filename="moved.ptx", ptxas=ptxas_tool)
    assert report.consistent  # still a label of a function; check that it is named a relocation of _Z4testPi
    info = ptxdwarf.cuda.read_cubin(compile_ptx(text, ptxas=ptxas_tool).data)
    foo = query(info).function("_Z3fooii")
    assert foo.die.attr("DW_AT_high_pc").relocs[0].symbol.name == "_Z4testPi"  # type: ignore[union-attr]  # a None here fails the test, as it should


def test_inverted_range_is_found(ptxas_tool: Ptxas) -> None:
    """A range whose end label lies before its begin label in the code: every label is relocated
    against the right function, and yet the cubin's range is inverted (as when ptxas reorders
    blocks); check says so."""
    text = _replace_once(
        CALL, ".b64 $L__func_begin0\n.b64 $L__func_end0", ".b64 $L__func_end0\n.b64 $L__func_begin0"
    )
    report = check(text, filename="inverted.ptx", ptxas=ptxas_tool)
    assert [(d.path, d.what, d.ptx) for d in report.differences] == [
        ("_Z3fooii", "DW_AT_low_pc..DW_AT_high_pc", "[$L__func_end0, $L__func_begin0)")
    ]
    assert "inverted" in report.differences[0].message
    assert re.match(r"\[_Z3fooii\+0x[0-9a-f]+, _Z3fooii\+0x0\)$", report.differences[0].cubin)


def test_inverted_location_and_range_lists_are_found(ptxas_tool: Ptxas) -> None:
    """The same in .debug_loc and .debug_ranges entries."""
    lists = (
        ".section .debug_loc {\n.b64 $L__func_end1\n.b64 $L__func_begin1\n.b8 1, 0, 80\n.b64 0\n.b64 0\n}\n"
        ".section .debug_ranges {\n.b64 $L__func_end1\n.b64 $L__func_begin1\n.b64 0\n.b64 0\n}\n"
    )
    report = check(CALL + lists, filename="inverted-lists.ptx", ptxas=ptxas_tool)
    assert [(d.path, d.what) for d in report.differences] == [
        (".debug_loc+0x0[0]", "range"),
        (".debug_ranges+0x0[0]", "range"),
    ]


RECORDS = FIXTURES / "numba" / "kernel_records.sm_75.ptx"


def test_declaration_a_line_scan_misses_still_links(ptxas_tool: Ptxas) -> None:
    """A body-less declaration with a brace in a comment of its header is still one: the
    module is compiled relocatable."""
    text = RECORDS.read_text()
    assert ".extern .func" in text
    hidden = text.replace(".extern .func", ".extern .func /* { */")
    assert ptxdwarf.ptx.parse_ptx(hidden).prototypes
    with pytest.raises(PtxasFailed):
        ptxas_tool.compile(hidden, arch="sm_75", relocatable=False)
    report = check(hidden, filename="hidden.ptx", ptxas=ptxas_tool)
    assert report.consistent and report.dies > 0, "\n".join(map(str, report.differences))


def test_declaration_in_a_comment_is_not_taken_for_one(ptxas_tool: Ptxas) -> None:
    text = CALL.replace(".address_size 64", ".address_size 64\n/*\n.func ghost(.param .b32 a);\n*/", 1)
    assert "\n.func ghost" in text and not ptxdwarf.ptx.parse_ptx(text).prototypes
    report = check(text, filename="ghost.ptx", ptxas=ptxas_tool)
    assert report.consistent and report.dies > 0, "\n".join(map(str, report.differences))


def test_label_at_line_zero_is_dropped_by_ptxas(ptxas_tool: Ptxas) -> None:
    """lint's label-at-line-zero fault fixture: ptxas leaves $L__tmp12 undefined, check names it."""
    text = (FIXTURES / "lint" / "faults" / "label-at-line-zero.ptx").read_text()
    assert [f.rule for f in ptxdwarf.lint.lint(text)] == ["label-at-line-zero"]
    report = check(text, filename="line0.ptx", ptxas=ptxas_tool)
    assert [(d.path, d.what, d.ptx) for d in report.differences] == [
        (".debug_loc+0x0[0]", "begin", "$L__tmp12")
    ]
    assert "ptxas dropped label $L__tmp12" in report.differences[0].message
    symbols = ptxdwarf.cuda.cubin_images(compile_ptx(text, ptxas=ptxas_tool).data).symbols
    assert symbols["$L__tmp12"].section is None  # an undefined symbol in the cubin
    # the same module with the line restored: nothing dropped
    assert check((FIXTURES / "nvcc" / "rich.sm_75.ptx").read_text(), ptxas=ptxas_tool).consistent


def test_lint_warns_of_every_label_ptxas_drops(ptxas_tool: Ptxas) -> None:
    """clang -O1's kernel_templates puts labels at line-0 instructions; every label ptxas drops
    was a label-at-line-zero warning (ptxas does not drop all of them, hence 'usually')."""
    path = FIXTURES / "clang" / "rich.O1.ptxas-crash.sm_75.ptx"
    module = ptxdwarf.ptx.parse_ptx(path.read_text(), path.name)
    info = ptxdwarf.ptx.debug.decode_module(module)
    r = next(d for d in info.iter_dies() if d.tag == ptxdwarf.dwarf.TAG.formal_parameter and d.name == "r")
    r.attributes = [a for a in r.attributes if a.name != ptxdwarf.dwarf.AT.location]  # what ptxas crashes on
    text = ptxdwarf.ptx.debug.replace_debug_sections(module, ptxdwarf.dwarf.encode_sections(info), "nvcc")
    warned = {f.message.split()[0] for f in ptxdwarf.lint.lint(text) if f.rule == "label-at-line-zero"}
    report = check(text, filename="o1.ptx", ptxas=ptxas_tool)
    dropped = {d.ptx for d in report.differences if "ptxas dropped label" in d.message}
    assert report.differences and all("ptxas dropped label" in d.message for d in report.differences)
    assert dropped and dropped <= warned


def test_ptxas_error_names_the_die_and_attribute(ptxas_tool: Ptxas) -> None:
    """A label inside .debug_info with .version 4.2: ptxas rejects the line; the error says which DIE."""
    text = _replace_once(
        EXAMPLE, ".b8 7, 0, 5, 118, 111, 105, 100, 0, 6", "$L__x:\n.b8 7, 0, 5, 118, 111, 105, 100, 0, 6"
    )
    with pytest.raises(PtxasFailed) as err:
        check(text, filename="label.ptx", ptxas=ptxas_tool)
    message = str(err.value)
    assert message.startswith("label.ptx:")
    assert "7.0" in message
    assert "in .debug_info+0x" in message and "DW_TAG_formal_parameter 'p'" in message
    assert "\n" not in message


def test_compile_can_be_cancelled(ptxas_tool: Ptxas) -> None:
    import threading

    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ptxdwarf.cuda.PtxasCancelled):
        ptxas_tool.compile(EXAMPLE, arch="sm_75", cancel=cancel)
    # an event that is never set changes nothing
    quiet = ptxas_tool.compile(EXAMPLE, arch="sm_75", cancel=threading.Event())
    assert quiet.cubin == ptxas_tool.compile(EXAMPLE, arch="sm_75").cubin
    with pytest.raises(PtxasFailed) as err:
        ptxas_tool.compile(EXAMPLE.replace(".b32 262", ".b32 x y", 1), arch="sm_75", cancel=threading.Event())
    assert any("syntax error" in m.text and m.line for m in err.value.messages)  # stderr was read


def test_a_header_read_wrong_at_first_compiles_again(ptxas_tool: Ptxas) -> None:
    """ptxas starts on the header as the quick read finds it; where the module says otherwise (a
    block comment holding directives), check compiles again for what the module says."""
    from ptxdwarf.ptx.reader import likely_header

    for target in ("sm_90", "sm_999"):
        text = f"/*\n.target {target}\n*/\n" + EXAMPLE
        assert likely_header(text)[1] == [target]
        for tool in (Ptxas(ptxas_tool.path), ptxas_tool):  # its architectures not asked yet, and asked
            report = check(text, ptxas=tool)
            assert report.consistent, report.differences
            assert report.arch == ptxas_tool.choose_arch(["sm_20"])[0]


def test_reader_error_wins_over_ptxas(ptxas_tool: Ptxas) -> None:
    """check reads the PTX while ptxas runs; bad DWARF is reported as such (and stops ptxas)."""
    bad = EXAMPLE.replace(".b32 262\n", ".b32 99999\n", 1)
    with pytest.raises(ptxdwarf.DwarfError, match=r"<ptx>:51 \(\.debug_info\+0x0\): unit length 99999"):
        check(bad, ptxas=ptxas_tool)


def test_ptxas_starts_before_the_code_is_read(ptxas_tool: Ptxas, monkeypatch: pytest.MonkeyPatch) -> None:
    """The full read of the module's code (functions, labels, declarations) runs while ptxas runs."""
    from ptxdwarf.ptx.module import PtxModule

    events: list[str] = []

    class Recording(Ptxas):
        def start(self, *args: Any, **kwargs: Any) -> PtxasRun:
            events.append("ptxas")
            return super().start(*args, **kwargs)

    complete = PtxModule._complete

    def recorded(self: PtxModule) -> None:
        if self._pending is not None:
            events.append("code")
        complete(self)

    monkeypatch.setattr(PtxModule, "_complete", recorded)
    report = check(CALL, filename="call.ptx", ptxas=Recording(ptxas_tool.path))
    assert report.consistent and report.dies > 0
    assert events == ["ptxas", "code"]


@pytest.mark.ptxas
def test_cli_check(tmp_path: Path) -> None:
    good = tmp_path / "good.ptx"
    good.write_text(EXAMPLE)
    bad = tmp_path / "bad.ptx"
    bad.write_text(_replace_once(CALL, ".b64 $L__func_end0", ".b64 $L__nowhere"))
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["check", str(good)]) == 0
    assert "consistent" in out.getvalue()
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["check", str(bad), "--json"]) == 1
    doc = json.loads(out.getvalue())
    assert doc["format"] == "ptxdwarf-check/1" and not doc["consistent"]
    assert doc["differences"][0]["path"] == "_Z3fooii"
    assert main(["check", str(good), "--arch", "sm_20"]) == 2
    assert main(["check", str(good), "--ptxas", str(tmp_path / "nope")]) == 2


@pytest.mark.parametrize("path", every_ptxas(), ids=ptxas_id)
@pytest.mark.ptxas
def test_check_with_every_ptxas(path: str) -> None:
    """check works with each ptxas the tests know of (PATH's, the wheel's, and in CI those of
    CUDA 12.0, 12.4, 12.9 and 13.4), on the module lowered to a ``.version`` it reads."""
    tool = Ptxas(path)
    text, _lowered = within_reach(CALL, tool.max_version)
    assert isinstance(text, str)
    report = check(text, filename="call.ptx", ptxas=tool)
    assert report.consistent, report.differences
    assert report.ptxas_version == tool.version and report.dies > 0 and report.line_rows > 0


@pytest.mark.parametrize("path", every_ptxas(), ids=ptxas_id)
@pytest.mark.ptxas
def test_an_old_target_without_address_size_is_compiled_as_64_bit(path: str) -> None:
    """A .target older than ptxas's oldest compiles for the oldest, except that a module without
    .address_size is not compiled for sm_50 to sm_53, where ptxas 12.x takes it as 32-bit and
    refuses -g (quirk address-size-default): check then works with ptxas 12.x too."""
    tool = Ptxas(path)
    oldest = tool.choose_arch(["sm_10"])[0]
    chosen, note = tool.choose_arch(["sm_10"], address_size=None)
    assert chosen not in ADDRESS_SIZE_32_BY_DEFAULT and note is not None
    assert (chosen == oldest) == (oldest not in ADDRESS_SIZE_32_BY_DEFAULT)
    report = check((FIXTURES / "dwarf_lines" / "kernels.ptx").read_text(), filename="kernels.ptx", ptxas=tool)
    assert report.consistent and report.arch == chosen, report.differences


def test_the_wheel_ptxas_is_found() -> None:
    """CI installs the test extra, which brings the nvidia-cuda-nvcc wheel's ptxas."""
    assert wheel_ptxas(), "the nvidia-cuda-nvcc wheel's ptxas is not installed"


def test_testing_helpers(ptxas_tool: Ptxas) -> None:
    dbg = DebugInfoBuilder(name="call.cu")
    int_t = dbg.named_type("int")
    foo = dbg.function("foo", linkage_name="_Z3fooii", type=int_t)
    foo.parameter("i", int_t, location=loc.register("%r1"))
    test = dbg.function("test", linkage_name="_Z4testPi")
    test.parameter(
        "p",
        dbg.pointer_type(int_t, address_class=AddressClass.GENERIC),
        location=loc.param("_Z4testPi_param_0"),
    )
    text = ptxdwarf.attach.attach(
        EXAMPLE[: EXAMPLE.index(".section")]
        .replace(".target sm_20, debug", ".target sm_20")
        .replace("func_begin0:", "")
        .replace("func_begin1:", "")
        .replace("func_end0:", "")
        .replace("func_end1:", ""),
        dbg,
    )
    cubin = compile_ptx(text, ptxas=ptxas_tool)
    info = cubin.debug_info()
    i = info.function("foo").parameter("i")
    assert i.address_class is AddressClass.REG
    assert i.location.register == "%r1"
    assert i.type is not None and i.type.name == "int"
    p = info.function("_Z4testPi").parameter("p")
    assert (
        p.address_class is AddressClass.PARAM
        and p.location.address is not None
        and p.location.address >= 0x100
    )
    assert p.type is not None and p.type.tag == "DW_TAG_pointer_type"
    with pytest.raises(LookupError, match="no parameter 'q'"):
        info.function("foo").parameter("q")
    # the PTX and the cubin trees are equal but for what ptxas resolved
    cubin_root, ptx_root = cubin.ptx_debug_info().info.units[0].die, info.info.units[0].die
    assert cubin_root is not None and ptx_root is not None
    assert_dies_equal(cubin_root.children[0], ptx_root.children[0])
    with pytest.raises(AssertionError, match=r"foo/i: - DW_AT_name"):
        other = ptxdwarf.read(text=text)
        other.units[0].die.children[1].children[0].attr("DW_AT_name").value = "k"  # type: ignore[union-attr]  # a None here fails the test, as it should
        assert_dies_equal(ptxdwarf.read(text=text), other)


@pytest.mark.ptxas
def test_check_picks_a_ptxas_that_takes_the_version() -> None:
    """nvcc 13.5 writes .version 9.5, which ptxas 13.0 refuses: with several ptxas found (PATH,
    the wheel), check uses one that takes it."""
    path = FIXTURES / "corpus" / "nvcc-13.5" / "tiny.G.sm_75.ptx"
    text = path.read_text()
    assert ptxdwarf.ptx.parse_ptx(text).version == (9, 5)
    report = check(text, filename=path.name)
    assert not report.differences
    from ptxdwarf.cuda.ptxas import Ptxas as _Ptxas

    assert _Ptxas(report.ptxas).max_version >= (9, 5)


@pytest.mark.ptxas
def test_the_version_a_ptxas_refuses_with_is_the_one_it_lists() -> None:
    """ptxas of CUDA 12 has no --list-version; Ptxas.max_version then reads the version it names
    when it refuses .version 99.9 ("current version is '8.4'"). On every ptxas found here, the
    two ways agree (ptxas 12.0, 12.4 and 12.9 were measured to give 8.0, 8.4 and 8.8)."""
    tools = every_ptxas()
    assert tools
    for path in tools:
        tool = Ptxas(path)
        listed = tool.max_version
        assert listed > (0, 0), (path, listed)
        assert tool.refused_version() == listed, path


def test_line_table_file_numbers_with_gaps_are_found(ptxas_tool: Ptxas) -> None:
    """``.file 3`` alone: ptxas makes a one-file table whose rows still say file 3, so a
    debugger finds no source; check says so (it compared .debug_info only before)."""
    text = _replace_once(CALL, "\t.file\t1 ", "\t.file\t3 ").replace("\t.loc\t1 ", "\t.loc\t3 ")
    report = check(text, filename="gap.ptx", ptxas=ptxas_tool)
    assert [(d.path, d.what, d.cubin) for d in report.differences] == [
        (".debug_line", "file 3", "none (1 file(s) in the table)")
    ]


def test_json_has_a_line_per_register_location(ptxas_tool: Ptxas) -> None:
    """A large module has 100k register locations or more: ``--json`` writes each on one line
    (the rest of the document indented as before), and the document reads the same."""
    report = check(CALL, filename="call.ptx", ptxas=ptxas_tool)
    assert len(report.registers) >= 2
    text = report.to_json()
    doc = json.loads(text)
    assert doc["register_locations"] == [r.to_json() for r in report.registers]
    lines = [line for line in text.splitlines() if line.startswith('  {"die": ')]
    assert [json.loads(line.rstrip(",")) for line in lines] == doc["register_locations"]
    assert text.startswith('{\n "format": "ptxdwarf-check/1",\n') and text.endswith("\n}\n")


_COMPILED: dict[tuple[str, str], bytes] = {}


def _comparer(name: str, ptxas: Ptxas) -> tuple[Any, Any, Any, Any]:
    """The PTX DWARF, the cubin's, an empty report and the comparison's internal comparer of
    fixture ``name`` compiled with ``ptxas``."""
    import importlib

    walk = importlib.import_module("ptxdwarf.check.walk")
    text = (FIXTURES / name).read_text()
    module = ptxdwarf.ptx.parse_ptx(text, name)
    info = ptxdwarf.ptx.debug.decode_module(module)
    key = (name, ptxas.path)
    if key not in _COMPILED:
        _COMPILED[key] = compile_ptx(text, ptxas=ptxas).data
    found = ptxdwarf.cuda.cubin_images(_COMPILED[key])
    cubin = ptxdwarf.dwarf.decode_sections(found.images, source="cubin")
    report = CheckReport(name, "sm_75", "ptxas", "13.0")
    return info, cubin, report, walk.DieWalk(module, info, cubin, found, report)


@pytest.mark.parametrize(
    "name",
    [
        "lint/faults/label-at-line-zero.ptx",
        "nvcc/rich.sm_75.ptx",
        "corpus/nvcc-12.4/templates.G.sm_75.ptx",
        "corpus/nvcc-13.0/control.G.sm_100.ptx",
    ],
)
def test_the_quick_test_of_a_list_entry_agrees_with_the_full_one(name: str, ptxas_tool: Ptxas) -> None:
    """Where the quick test says a location-list entry's range came out as expected, the
    full checks of its begin, end and order find nothing; where it does not, they may."""
    info, cubin, report, comparer = _comparer(name, ptxas_tool)
    theirs = {lst.offset: lst for lst in cubin.locations or []}
    Symbol = ptxdwarf.dwarf.Symbol

    def full(b0: object, e0: object, b1: object, e1: object) -> bool:
        before = len(report.differences)
        comparer.expect_value("here", "begin", b0, b1)
        comparer.expect_value("here", "end", e0, e1)
        comparer.inverted("here", "range", (b0, e0), b1, e1)
        return len(report.differences) == before

    quick = 0
    for lst in info.locations or []:
        for (b0, e0, _), (b1, e1, _) in zip(lst.entries, theirs[lst.offset].entries, strict=False):
            if comparer.range_as_expected(b0, e0, b1, e1):
                quick += 1
                assert full(b0, e0, b1, e1), (b0, e0, b1, e1)
                # what the cubin could have said instead: in another function, inverted, at 0, a number
                for got in [
                    (Symbol("elsewhere", b1.addend), e1),
                    (b1, Symbol(e1.name, b1.addend - 1)),
                    (Symbol(b1.name, 0), e1),
                    (b1, e1.addend),
                ]:
                    assert not comparer.range_as_expected(b0, e0, *got) or full(b0, e0, *got), got
            else:
                full(b0, e0, b1, e1)
    assert quick > 10
    if "line-zero" in name:
        assert report.differences


_BY_SITES = [
    "lint/faults/label-at-line-zero.ptx",
    "lint/faults/reloc-width.ptx",  # a 4-byte site in an 8-byte DW_FORM_addr field
    "nvcc/rich.sm_75.ptx",
    "corpus/nvcc-12.4/templates.G.sm_75.ptx",
    "corpus/nvcc-13.0/control.G.sm_100.ptx",
    "corpus/clang-14/control.O0-g.sm_75.ptx",
]


def _units_compared(name: str, ptxas: Ptxas, *, by_sites: bool, edit: Any = None) -> tuple[Any, int]:
    """(differences, DIEs, symbols) of the DIE comparison of fixture ``name``, by relocation
    site or by the walk of every DIE, and how many units went by site; ``edit`` changes the
    cubin's ``.debug_info`` bytes first."""
    _info, cubin, report, comparer = _comparer(name, ptxas)
    if edit is not None:
        image = cubin.sections[".debug_info"]
        edited = ptxdwarf.dwarf.SectionImage(
            image.name, edit(bytearray(image.data)), image.relocs, relocs_applied=True
        )
        cubin = ptxdwarf.dwarf.decode_sections({**cubin.sections, ".debug_info": edited}, source="cubin")
        comparer.cubin = cubin
    by_site = 0
    if not by_sites:
        comparer.compare_by_sites = lambda _unit, _other: False
    else:
        original = comparer.compare_by_sites

        def counted(unit: Any, other: Any) -> bool:
            nonlocal by_site
            taken = original(unit, other)
            by_site += taken
            return bool(taken)

        comparer.compare_by_sites = counted
    comparer.compare_units()
    found = (
        [(d.path, d.what, d.ptx, d.cubin, d.message) for d in report.differences],
        report.dies,
        report.symbols,
    )
    return found, by_site


@pytest.mark.parametrize("name", _BY_SITES)
def test_the_comparison_by_relocation_site_agrees_with_the_walk_of_every_die(
    name: str, ptxas_tool: Ptxas
) -> None:
    """Comparing only the attributes that hold a relocation site finds what comparing every
    DIE finds, in the same order, with the same counts; and it is the way taken."""
    fast, by_site = _units_compared(name, ptxas_tool, by_sites=True)
    slow, _ = _units_compared(name, ptxas_tool, by_sites=False)
    assert fast == slow
    assert by_site >= 1
    assert fast[1] > 5 and fast[2] > 0


def test_a_change_outside_the_relocation_sites_is_still_found(ptxas_tool: Ptxas) -> None:
    """A byte of the cubin's .debug_info changed outside the sites (here the first letter of
    a DW_FORM_string name) is reported as the walk of every DIE reports it."""
    name = "nvcc/rich.sm_75.ptx"
    info = ptxdwarf.ptx.debug.decode_module(ptxdwarf.ptx.parse_ptx((FIXTURES / name).read_text(), name))
    attr = next(
        a
        for d in info.iter_dies()
        for a in d.attributes
        if a.name == ptxdwarf.dwarf.AT.name and a.form == ptxdwarf.dwarf.FORM.string and a.value
    )

    def edit(data: bytearray) -> bytes:
        data[attr.offset] ^= 0x20  # the case of its first letter
        return bytes(data)

    fast, _ = _units_compared(name, ptxas_tool, by_sites=True, edit=edit)
    slow, _ = _units_compared(name, ptxas_tool, by_sites=False, edit=edit)
    assert fast == slow
    assert any(d[1].startswith("DW_AT_name") and attr.value in d[2] for d in fast[0]), fast[0]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(
        st.tuples(st.booleans(), st.floats(0, 1, exclude_max=True), st.integers(-1, 8), st.integers(1, 255)),
        min_size=1,
        max_size=4,
    )
)
@pytest.mark.slow
def test_the_comparison_by_relocation_site_agrees_with_the_walk_on_changed_bytes(
    edits: list[tuple[bool, float, int, int]], ptxas_tool: Ptxas
) -> None:
    """Whatever bytes of the cubin's .debug_info change (in or next to a relocation site, or
    anywhere), comparing by relocation site reports what the walk of every DIE reports, in the
    same order, with the same counts."""
    name = "nvcc/rich.sm_75.ptx"
    info = ptxdwarf.ptx.debug.decode_module(ptxdwarf.ptx.parse_ptx((FIXTURES / name).read_text(), name))
    assert info.sections is not None
    sites = sorted(r.offset for r in info.sections[".debug_info"].relocs)

    def edit(data: bytearray) -> bytes:
        for near_site, where, delta, mask in edits:
            at = sites[int(where * len(sites))] + delta if near_site else int(where * len(data))
            data[min(max(at, 0), len(data) - 1)] ^= mask
        return bytes(data)

    try:
        fast, _ = _units_compared(name, ptxas_tool, by_sites=True, edit=edit)
    except ptxdwarf.DwarfError:
        return  # the edit made the cubin's DWARF unreadable: check reports that before comparing
    slow, _ = _units_compared(name, ptxas_tool, by_sites=False, edit=edit)
    assert fast == slow


@pytest.mark.parametrize("name", [n for n in _BY_SITES if "clang-14" not in n and "width" not in n])
def test_location_lists_read_through_the_ptx_are_the_decoded_ones(name: str, ptxas_tool: Ptxas) -> None:
    """:func:`locations_like` gives the cubin's location lists as decoding them gives them,
    symbols' values included; for a list ptxas ended early (both labels of an entry dropped,
    0 and 0 written without relocations), it gives None: decode then."""
    from ptxdwarf.dwarf.decode import locations_like

    info, cubin, _report, _walk = _comparer(name, ptxas_tool)
    image = cubin.sections.get(".debug_loc")
    assert info.locations
    got = locations_like(image, info.locations, 8)
    assert got is not None
    want = cubin.locations
    assert got == want
    values = [getattr(v, "value", v) for loc in got for e in loc.entries for v in e[:2]]
    assert values == [getattr(v, "value", v) for loc in want for e in loc.entries for v in e[:2]]
    # the first entry's begin and end dropped: 0, 0 and no relocations there
    at = want[0].offset
    data = bytearray(image.data)
    data[at : at + 16] = bytes(16)
    dropped = ptxdwarf.dwarf.SectionImage(
        image.name,
        bytes(data),
        [r for r in image.relocs if not at <= r.offset < at + 16],
        relocs_applied=True,
    )
    assert locations_like(dropped, info.locations, 8) is None


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(
        st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255), st.booleans()),
        min_size=1,
        max_size=3,
    )
)
def test_location_lists_read_through_the_ptx_are_none_or_the_decoded_ones(
    edits: list[tuple[float, int, bool]], ptxas_tool: Ptxas
) -> None:
    """Whatever bytes or relocations of the cubin's .debug_loc change, :func:`locations_like`
    gives what decoding gives, or None (decode it then)."""
    from ptxdwarf.dwarf.decode import locations_like

    info, cubin, _report, _walk = _comparer("nvcc/rich.sm_75.ptx", ptxas_tool)
    image = cubin.sections[".debug_loc"]
    data = bytearray(image.data)
    relocs = list(image.relocs)
    for where, mask, drop in edits:
        if drop and relocs:
            del relocs[int(where * len(relocs))]  # a label ptxas dropped: no relocation there
        else:
            data[int(where * len(data))] ^= mask
    edited = ptxdwarf.dwarf.SectionImage(image.name, bytes(data), relocs, relocs_applied=True)
    got = locations_like(edited, info.locations, 8)
    if got is None:
        return
    try:
        want = ptxdwarf.dwarf.decode_sections(
            {**cubin.sections, ".debug_loc": edited}, source="cubin"
        ).locations
    except ptxdwarf.DwarfError:
        raise AssertionError("read through the PTX, but not decodable") from None
    assert got == want
    values = [getattr(v, "value", v) for loc in got for e in loc.entries for v in e[:2]]
    assert values == [getattr(v, "value", v) for loc in want for e in loc.entries for v in e[:2]]


def test_a_remembered_depot_expression_still_reports_a_wrong_one(ptxas_tool: Ptxas) -> None:
    """The comparison remembers depot expressions that came out right (by their bytes);
    one that came out wrong is reported each time it is seen."""
    info, cubin, report, comparer = _comparer("nvcc/rich.sm_75.ptx", ptxas_tool)
    pairs = [
        (a, cubin.die_at(a.offset))
        for a in info.iter_dies()
        if isinstance(a.get(ptxdwarf.dwarf.AT.location), ptxdwarf.dwarf.Block)
        and any(r.symbol.name.startswith("__local_depot") for r in a.get(ptxdwarf.dwarf.AT.location).relocs)
    ]
    assert len(pairs) > 2
    a, b = pairs[0]
    mine, theirs = a.get(ptxdwarf.dwarf.AT.location), b.get(ptxdwarf.dwarf.AT.location)
    assert bytes(mine) != bytes(theirs)  # ptxas rewrote DW_OP_addr into DW_OP_fbreg
    for _ in range(3):
        comparer.expect_expression(a, "location", mine, theirs, 8)
    assert not report.differences and report.symbols == 3
    unrewritten = ptxdwarf.dwarf.Block(bytes(mine))  # the address left as it was: 0, no fbreg
    for _ in range(2):
        comparer.expect_expression(a, "location", mine, unrewritten, 8)
    assert len(report.differences) == 2
    assert "did not rewrite the local-depot address" in report.differences[0].message


@pytest.mark.parametrize("end_label", [False, True], ids=["no-end-label", "end-label"])
def test_label_relocated_to_the_function_end_is_reported(end_label: bool, ptxas_tool: Ptxas) -> None:
    """Straight-line code whose last label comes before the final ret, and no label after the
    ret: ptxas relocates that label to the end of the function's code (quirk label-at-end)."""
    from tools.ptxas_facts.cases import CASES

    (case,) = [
        c for c in CASES if c.id == ("label-at-end.end-label" if end_label else "label-at-end.last-label")
    ]
    text = case.ptx()
    assert isinstance(text, str)
    report = check(text, filename="k.ptx", ptxas=ptxas_tool)
    if end_label:
        assert report.consistent, [str(d) for d in report.differences]
        return
    (difference,) = report.differences
    assert difference.ptx == "$L__next" and difference.what == "address"
    assert "quirk label-at-end" in difference.message and "the end of _Z1kPi's code" in difference.message
