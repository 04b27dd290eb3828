"""The PTX symbol table (``ptxdwarf.ptx.symbols``): what each name of a module stands for."""

from __future__ import annotations

from pathlib import Path

import pytest

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.ptx
from ptxdwarf.cuda.ptxas import Ptxas
from ptxdwarf.ptx import PtxModule, needs_compile_only, parse_ptx, symbol_table
from ptxdwarf.ptx.symbols import (
    CODE_LABEL,
    DATA_LABEL,
    DEPOT,
    DEVICE_PARAM,
    FUNCTION,
    KERNEL_PARAM,
    LOCAL,
    PROTOTYPE,
    REGISTER,
    SECTION,
    UNDEFINED,
    VARIABLE,
    likely_needs_compile_only,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
HEAD = ".version 7.5\n.target sm_75\n.address_size 64\n"


def module(path: str) -> PtxModule:
    return parse_ptx((FIXTURES / path).read_text(), path)


def kinds(m: PtxModule, *names: str) -> list[str]:
    return [m.symbols.lookup(n).kind for n in names]


def test_nvcc_call_example() -> None:
    m = module("nvcc/call_example.sm_75.ptx")
    table = m.symbols
    assert kinds(m, "_Z3fooii", "_Z4testPi", "_Z3fooii_param_1", "_Z4testPi_param_0") == [
        FUNCTION,
        FUNCTION,
        DEVICE_PARAM,
        KERNEL_PARAM,
    ]
    label = table.lookup("$L__tmp2")
    assert label.kind == CODE_LABEL and label.function is not None and label.function.name == "_Z4testPi"
    assert table.lookup("$L__func_end0").function.name == "_Z3fooii"  # type: ignore[union-attr]  # a None here fails the test, as it should
    # the call sequence's { } scope: its .param and .reg belong to the enclosing function
    assert table.lookup("param1").kind == LOCAL and table.lookup("param1").function.name == "_Z4testPi"  # type: ignore[union-attr]  # a None here fails the test, as it should
    test = m.function("_Z4testPi")
    foo = m.function("_Z3fooii")
    assert test is not None and foo is not None
    assert table.register(test, "temp_param_reg") is not None
    assert table.register(foo, "temp_param_reg") is None
    assert table.lookup("temp_param_reg").kind == REGISTER
    assert table.lookup(".debug_info").kind == SECTION
    assert table.lookup("nothing_here").kind == UNDEFINED


def test_handwritten_every_space() -> None:
    m = module("handwritten/all_spaces.ptx")
    assert kinds(m, "g_global", "g_shared", "g_const", "g_tex", "__local_depot0", "$L__foo_mid", "%SP") == [
        VARIABLE,
        VARIABLE,
        VARIABLE,
        VARIABLE,
        DEPOT,
        CODE_LABEL,
        REGISTER,
    ]
    shared = m.symbols.lookup("g_shared")
    assert shared.variable is not None and shared.variable.space == "shared"


def test_clang_depots_per_function() -> None:
    m = module("clang/call_example.O0.sm_75.ptx")
    d0, d1 = m.symbols.lookup("__local_depot0"), m.symbols.lookup("__local_depot1")
    assert (d0.kind, d1.kind) == (DEPOT, DEPOT)
    assert (d0.function.name, d1.function.name) == ("_Z3fooii", "_Z4testPi")  # type: ignore[union-attr]  # a None here fails the test, as it should
    assert m.symbols.lookup("Ltmp2").function.name == "_Z4testPi"  # type: ignore[union-attr]  # a None here fails the test, as it should


def test_numba_prototype_and_compile_only() -> None:
    m = module("numba/kernel_records.sm_75.ptx")
    # record_energy is declared only; the __exc_helper__ is declared, then defined
    (proto,) = [p for p in m.prototypes if p.startswith("_ZN10nb_kernels13record_energy")]
    (helper,) = [p for p in m.prototypes if p.endswith("__exc_helper__")]
    assert m.symbols.lookup(proto).kind == PROTOTYPE
    assert m.symbols.lookup(helper).kind == FUNCTION
    assert needs_compile_only(m)
    assert not needs_compile_only(module("nvcc/call_example.sm_75.ptx"))


def test_data_labels_with_their_offsets() -> None:
    m = module("nvcc/rich.lineinfo.sm_75.ptx")
    labels = m.symbols.data_labels
    # 56 and 26 bytes of strings before them
    assert labels["$L__info_string0"] == (".debug_str", 0)
    assert labels["$L__info_string1"] == (".debug_str", 56)
    assert labels["$L__info_string2"] == (".debug_str", 82)
    found = m.symbols.lookup("$L__info_string1")
    assert (found.kind, found.section, found.offset) == (DATA_LABEL, ".debug_str", 56)


def test_data_labels_of_a_repeated_section_count_from_the_first_block() -> None:
    m = parse_ptx(
        HEAD + ".section .debug_str {\na: .b8 1, 0\n}\n.section .debug_str {\n.b8 2\nb: .b8 3, 0\n}\n"
    )
    assert m.symbols.data_labels == {"a": (".debug_str", 0), "b": (".debug_str", 3)}


BODY = (
    ".visible .entry k(.param .u64 k_p)\n{\n"
    "\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<12>;\n"
    "\t{\n\t.reg .pred %p;\n\tsetp.ne.s32 %p, %r1, 0;\n\t}\n"
    "\t{ .reg .b32 inner<2>; { .reg .b16 deepest; } }\n"
    "\tret;\n}\n"
    ".func f()\n{\n\t.reg .b32 %q<2>;\n\tret;\n}\n"
)


@pytest.mark.parametrize(
    "name,declared",
    [
        ("%r0", True),
        ("%r3", True),
        ("%r4", False),
        ("%r01", False),
        ("%r", False),
        ("%rd11", True),
        ("%rd12", False),
        ("%rd", False),
        ("%p", True),
        ("inner1", True),
        ("inner2", False),
        ("deepest", True),
        ("%q0", False),  # declared in f, not in k
    ],
)
def test_registers_of_a_function_ranges_and_nested_scopes(name: str, declared: bool) -> None:
    m = parse_ptx(HEAD + BODY)
    k = m.function("k")
    assert k is not None
    assert (m.symbols.register(k, name) is not None) == declared


@pytest.mark.parametrize(
    "name,count",
    [
        ("%r12", 5),
        ("%r14", 5),
        ("%r10", 12),
        ("%r11", 12),
        ("%r15", None),
        ("%r20", None),
        ("%r1", 12),
        ("%r", None),
    ],
)
def test_a_register_of_a_range_whose_name_ends_with_a_digit(name: str, count: int | None) -> None:
    """``%r1<5>`` declares ``%r10`` to ``%r14``, which a range of a shorter name may declare
    too: the first declaration in the text is the one found."""
    m = parse_ptx(HEAD + ".visible .entry k()\n{\n\t.reg .b32 %r<12>;\n\t.reg .b32 %r1<5>;\n\tret;\n}\n")
    k = m.function("k")
    assert k is not None
    found = m.symbols.register(k, name)
    assert (found.count if found is not None else None) == count


def test_a_register_is_not_a_symbol() -> None:
    """ptxas writes 0 for a register named as a symbolic value: the table does not count it as declared."""
    m = parse_ptx(HEAD + BODY)
    assert not m.declares("%r1") and not m.declares("%p")
    assert m.symbols.declares_register("%r1") and m.symbols.declares_register("%q1")
    assert not m.symbols.lookup("%r1").addressable
    assert m.declares("k_p") and m.declares("k") and m.declares("f")


def test_built_once_per_module() -> None:
    m = parse_ptx(HEAD + BODY)
    assert m.symbols is m.symbols is symbol_table(m)


def test_commented_declaration_needs_no_compile_only() -> None:
    text = HEAD + "/*\n.extern .func ghost(.param .b32 a);\n*/\n// .extern .func g2();\n" + BODY
    assert not needs_compile_only(parse_ptx(text))
    assert needs_compile_only(parse_ptx(HEAD + ".extern .func ghost(.param .b32 a);\n" + BODY))


def test_a_forward_declaration_needs_no_compile_only(ptxas_tool: Ptxas) -> None:
    """A function declared before the code that calls it and defined further on (nvcc -G and
    numba write such declarations) links without -c: ptxas compiles the module whole."""
    forward = ".func f()\n;\n"
    text = HEAD + forward + BODY.replace("\tret;\n}\n.func", "\tcall f, ();\n\tret;\n}\n.func", 1)
    module = parse_ptx(text)
    assert module.prototypes == ["f"]
    assert not needs_compile_only(module) and not likely_needs_compile_only(text)
    assert ptxas_tool.compile(text, arch="sm_75", relocatable=False).cubin
    extern = HEAD + ".extern .func g();\n" + BODY
    assert needs_compile_only(parse_ptx(extern)) and likely_needs_compile_only(extern)


def test_the_guess_from_the_text_agrees_with_the_module_on_every_fixture() -> None:
    fixtures = sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*.ptx"))
    answers = set()
    for path in fixtures:
        text = path.read_text(errors="surrogateescape")
        try:
            module = parse_ptx(text)
        except ptxdwarf.PtxDwarfError:
            continue
        answers.add(needs_compile_only(module))
        assert likely_needs_compile_only(text) == needs_compile_only(module), path
    assert answers == {True, False}
    # a commented declaration fools the guess; the module's answer decides (check compiles again)
    text = HEAD + "/*\n.extern .func g2();\n*/\n" + BODY
    assert likely_needs_compile_only(text) and not needs_compile_only(parse_ptx(text))


def test_lint_calls_a_register_used_as_an_address_undefined() -> None:
    """A scalar register (`.reg .b32 temp_param_reg`) named as a symbolic value reads 0 after
    ptxas, like a range register does; lint says so for both."""
    text = (FIXTURES / "lint" / "faults" / "undefined-symbol.ptx").read_text()
    assert ".b64 _Z4testPi_param_7\n" in text
    for register in ("temp_param_reg", "%rd1"):
        findings = ptxdwarf.lint.lint(text.replace(".b64 _Z4testPi_param_7\n", f".b64 {register}\n"))
        assert [f.rule for f in findings] == ["undefined-symbol"], findings
        assert "is a register" in findings[0].message


def test_code_label_names_are_the_names_lookup_finds_code_labels() -> None:
    text = (
        HEAD
        + ".global .u32 g;\n.extern .func x();\n"
        + ".visible .entry k()\n{\n$L__b:\n\tret;\n$L__a:\n\tret;\ng:\n\tret;\nx:\n\tret;\n.D:\n\tret;\n}\n"
        + ".func k2()\n{\nk:\n\tret;\n}\n"
        + ".section .debug_str\n{\n$L__a:\n.b8 0\n}\n.section .debug_info\n{\n.b8 0\n}\n"
    )
    m = parse_ptx(text, "t.ptx")
    table = m.symbols
    assert table.code_label_names == {"$L__b"}
    assert table.code_label_names == {n for n in table.code_labels if table.lookup(n).kind == CODE_LABEL}
    for path in sorted(FIXTURES.rglob("*.ptx"))[:80]:
        try:
            table = parse_ptx(path.read_text(errors="replace"), str(path)).symbols
        except ptxdwarf.PtxDwarfError:
            continue
        assert table.code_label_names == {n for n in table.code_labels if table.lookup(n).kind == CODE_LABEL}


def test_a_module_and_its_symbol_table_are_freed_without_the_cyclic_collector() -> None:
    import gc
    import weakref

    module = parse_ptx((FIXTURES / "nvcc" / "rich.lineinfo.sm_75.ptx").read_text(), "k.ptx")
    table = symbol_table(module)
    assert table.data_labels  # read on first use, from the module's section blocks
    assert table.lookup(module.functions[0].name).kind == FUNCTION
    gone = weakref.ref(module)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del module, table
        assert gone() is None, "the module is held in a reference cycle"
    finally:
        if enabled:
            gc.enable()
