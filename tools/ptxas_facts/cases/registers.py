"""Cases on the registers a function's debug info describes."""

from __future__ import annotations

import re
from collections.abc import Callable

from ptxdwarf.cuda.regmap import SASS_SECTION, read_register_map
from ptxdwarf.dwarf.constants import TAG
from ptxdwarf.dwarf.expr import register_number
from ptxdwarf.dwarf.forms import uleb_bytes
from ptxdwarf.dwarf.model import DebugInfo

from .. import harness as h
from ..case import accepts, crashes
from ..harness import ABBREV, b8, cstring, die, info, module
from ._base import case, reencoded

__all__: list[str] = []


def _regx(name: str) -> h.Die:
    """A variable at ``DW_OP_regx name``."""
    expr = [0x90, *uleb_bytes(register_number(name))]
    return die(h.VAR_BLOCK, b8(len(expr), *expr))


def _test_kernel(registers: str, body: list[str], more: tuple[str, ...] = ()) -> str:
    """The kernel ``_Z4testPi`` declaring ``.b32`` ``registers``, ``%rd<3>`` and the
    declarations ``more``, loading its pointer parameter into %rd2 and running ``body``."""
    return "\n".join(
        [
            ".visible .entry _Z4testPi(.param .u64 _Z4testPi_param_0)",
            "{",
            f"\t.reg .b32 {registers};",
            "\t.reg .b64 %rd<3>;",
            *more,
            "$L__func_begin1:",
            "\t.loc 1 5 0",
            "\tld.param.u64 %rd1, [_Z4testPi_param_0];",
            "\tcvta.to.global.u64 %rd2, %rd1;",
            *body,
            "\tret;",
            "$L__func_end1:",
            "}",
            "",
        ]
    )


def _describing(registers: list[str], code: str) -> Callable[[], str]:
    """The module of ``code`` whose subprogram ``_Z4testPi`` describes ``registers`` by
    DW_OP_regx."""
    # The subprogram is named after the kernel: ptxas ties a subprogram's registers to the
    # function of that name (under another name the kernel compiles at any count).
    sub = die(
        h.SUBPROGRAM,
        ".b64 $L__func_begin1",
        ".b64 $L__func_end1",
        b8(1, 0x9C),
        cstring("_Z4testPi"),
        children=[_regx(name) for name in registers] or [[]],
    )
    return lambda: module(ABBREV, info(sub)[0], code=code)


def predicates(count: int, described: int) -> Callable[[], str]:
    """The kernel setting ``count`` predicates, each guarding a branch, the first ``described``
    of them described by variables of its subprogram."""
    body = ["\tld.global.u32 %r1, [%rd2];", "\tmov.u32 %r2, 0;"]
    for i in range(count):
        body += [
            f"\tsetp.gt.u32 %p{i}, %r1, {i};",
            f"\t@%p{i} bra $L__BB{i};",
            f"\tadd.u32 %r2, %r2, {i + 1};",
            f"$L__BB{i}:",
        ]
    body.append("\tst.global.u32 [%rd2], %r2;")
    code = _test_kernel("%r<4>", body, (f"\t.reg .pred %p<{count}>;",))
    return _describing([f"%p{i}" for i in range(described)], code)


F = "predicate-count"
case(
    "predicate-count.52",
    F,
    "52 predicates each guarding a branch, all 52 described by DW_OP_regx -> killed by a signal",
    predicates(52, 52),
    crashes(),
    holds_on=("12.9", "13.0", "13.4", "13.5"),
)
case(
    "predicate-count.51",
    F,
    "51 predicates each guarding a branch, all described -> compiles",
    predicates(51, 51),
    accepts(),
)
case(
    "predicate-count.51-of-60",
    F,
    "60 predicates each guarding a branch, 51 of them described -> compiles",
    predicates(60, 51),
    accepts(),
)


#: attach's output for a reduced Triton 3.9 kernel (fixtures/README.md): 31 predicates and the
#: ``.b32`` %r384 described, nothing else.
_TRITON = "attach/matmul-predicates.ptxas-crash.sm_75.ptx"


def _triton_without(names: Callable[[str], bool]) -> Callable[[], str]:
    """The Triton fixture with the register variables whose names ``names`` selects removed."""

    def drop(info: DebugInfo) -> None:
        for d in list(info.iter_dies()):
            if d.tag == TAG.variable and names(d.name or "") and d.parent is not None:
                d.parent.children.remove(d)

    return lambda: reencoded(_TRITON, drop)


case(
    "predicate-count.triton.fixture",
    F,
    f"fixtures/{_TRITON} (attach of a reduced Triton kernel: 31 predicates and one .b32 register described) "
    "-> killed by a signal",
    lambda: h.fixture(_TRITON),
    crashes(),
    any_version=True,
    holds_on=("12.9", "13.0", "13.4", "13.5"),
)
case(
    "predicate-count.triton-no-predicates.fixture",
    F,
    "the same without the predicates' variables -> compiles",
    _triton_without(lambda name: name.startswith("%p")),
    accepts(),
    any_version=True,
)


def _named_register(name: str) -> Callable[[], str]:
    """The kernel keeping a sum in a register called ``name``, described."""
    body = [
        f"\tld.global.u32 {name}, [%rd2];",
        f"\tadd.u32 {name}, {name}, 7;",
        f"\tst.global.u32 [%rd2], {name};",
    ]
    return _describing([name], _test_kernel(name, body))


def _mapped(run: h.Run) -> set[str]:
    """The registers ptxas's register map places in SASS (an entry with a nonempty range)."""
    raw = run.cubin.get(SASS_SECTION) if run.cubin is not None else None
    if not raw:
        return set()
    return {e.ptx for f in read_register_map(raw) for e in f.entries if not e.empty}


def _maps(name: str) -> Callable[[h.Run], bool]:
    """ptxas's register map (.nv_debug_info_reg_sass) names the register."""
    return lambda run: name in _mapped(run)


case(
    "regx.name-without-percent",
    "regx.name-without-percent",
    "a register declared '.reg .b32 acc' described by DW_OP_regx \"acc\" -> compiled, 'acc' in "
    ".nv_debug_info_reg_sass",
    _named_register("acc"),
    accepts(_maps("acc")),
)
case(
    "regx.name-with-percent",
    "regx.name-without-percent",
    "the same with '%acc' -> compiled, '%acc' in .nv_debug_info_reg_sass",
    _named_register("%acc"),
    accepts(_maps("%acc")),
)
case(
    "regx.one-letter-name",
    "regx.name-without-percent",
    "the same with a register called 'a' -> compiled, 'a' in .nv_debug_info_reg_sass",
    _named_register("a"),
    accepts(_maps("a")),
)


def _unused_register(use_r0: bool) -> Callable[[], str]:
    """The kernel declaring ``%r<3>`` and computing in %r1 and %r2 (and %r0 when ``use_r0``),
    all three described."""
    body = [
        "\tld.global.u32 %r1, [%rd2];",
        "\tadd.u32 %r2, %r1, 7;",
        *(["\tadd.u32 %r0, %r2, %r1;", "\tst.global.u32 [%rd2+4], %r0;"] if use_r0 else []),
        "\tst.global.u32 [%rd2], %r2;",
    ]
    return _describing(["%r0", "%r1", "%r2"], _test_kernel("%r<3>", body))


F = "register-unused"
case(
    "register-unused.declared-only",
    F,
    "%r0 of '.reg .b32 %r<3>' named by no instruction, described by DW_OP_regx beside %r1 and %r2 -> "
    "compiles; %r1 and %r2 are in .nv_debug_info_reg_sass, %r0 is not",
    _unused_register(False),
    accepts(lambda run: _mapped(run) >= {"%r1", "%r2"} and "%r0" not in _mapped(run)),
)
case(
    "register-unused.used",
    F,
    "the same kernel computing in %r0 too -> %r0 is in .nv_debug_info_reg_sass",
    _unused_register(True),
    accepts(_maps("%r0")),
)


def _chain(count: int, described: int) -> Callable[[], str]:
    """The kernel adding 1.0 ``count`` times, each sum a new ``.f32`` register, the first
    ``described`` of them described by variables of its subprogram."""
    body = ["\tld.global.f32 %f0, [%rd2];"]
    body += [f"\tadd.f32 %f{i}, %f{i - 1}, 0f3F800000;" for i in range(1, count + 1)]
    body.append(f"\tst.global.f32 [%rd2], %f{count};")
    code = _test_kernel("%r<2>", body, (f"\t.reg .f32 %f<{count + 1}>;",))
    return _describing([f"%f{i}" for i in range(1, described + 1)], code)


def _registers_used(test: Callable[[int], bool]) -> Callable[[h.Run], tuple[bool, str]]:
    """ptxas -v succeeds and the registers it says the kernel uses pass ``test``."""

    def check(run: h.Run) -> tuple[bool, str]:
        found = re.search(r"Used (\d+) registers", run.stderr)
        spill = re.search(r"(\d+) bytes spill stores", run.stderr)
        if run.returncode != 0 or found is None:
            return False, run.summary()
        used = int(found.group(1))
        return test(used), f"{used} registers, {spill.group(1) if spill else '?'} bytes spill stores"

    return check


F = "described-registers-memory"
case(
    "described-registers-memory.1000-described",
    F,
    "1000 dependent add.f32, each sum a register described by DW_OP_regx -> ptxas -g keeps all live: "
    "over 200 registers (and spills); its memory grows with their number times the code's",
    _chain(1000, 1000),
    _registers_used(lambda used: used > 200),
    args=("-g", "-arch=sm_75", "-v"),
)
case(
    "described-registers-memory.none-described",
    F,
    "the same chain with no register described -> at most 16 registers",
    _chain(1000, 0),
    _registers_used(lambda used: used <= 16),
    args=("-g", "-arch=sm_75", "-v"),
)
