#!/usr/bin/env python3
"""Emit benchmark: ptxdwarf building, encoding and writing DWARF as PTX text.

Measures, in one run, the emit ratios of DESIGN.md section 5:

1. Builder throughput. A module of about 100 000 DIEs made with
   ``ptxdwarf.DebugInfoBuilder`` (N functions, each with 4 parameters, 6 local
   variables and a lexical block with labels holding 8 more; N/2 structs of 5
   members, a pointer and a typedef each; every 8th function a kernel), timed
   in three stages: building the DIEs (builder calls plus ``dbg.finish()``),
   encoding (``ptxdwarf.encode(info, dbg.encode_options())``) and writing PTX
   text (``ptxdwarf.format_sections(images.values(), "readable")``). Prints the
   DIEs per second of the three together (target: >= 100 000) and the readable
   style's PTX characters per DWARF byte (target: < 3.0).
2. Re-emitting an LLVM-made module. A textual LLVM 14 IR module for
   ``nvptx64-nvidia-cuda`` with full debug metadata (N functions in the same
   shape, generated here) is compiled with ``llc -O0``, and a copy of the same
   IR generated without any debug metadata as well; llc's time for debug info
   is t(with) - t(without), each the best of ``--repeat`` runs. ptxdwarf's
   time is ``encode_sections(info, EncodeOptions(keep_abbrevs=...))`` plus
   ``format_sections(..., "readable")`` of the DIE tree read (once, untimed)
   from the PTX llc made. Prints re-emit time / llc debug-info time, with
   ``keep_abbrevs=False`` (abbreviations derived again; target <= 1.0) and
   ``keep_abbrevs=True`` (the decoded table kept).

Generated inputs (the ``.ll`` files and llc's PTX) are cached in
``benchmarks/.cache/`` and reused; llc is run (and timed) on every run.
Needs ``llc`` from LLVM 14 (``llc-14`` or ``llc`` on PATH, or ``--llc``) for
part 2; ``--no-llvm`` runs part 1 only. Stdlib and ptxdwarf only.

    python3 benchmarks/bench_emit.py                       # 4000 functions, best of 3
    python3 benchmarks/bench_emit.py --functions 500 --repeat 1   # a quick run
    python3 benchmarks/bench_emit.py --no-llvm             # builder only
"""
from __future__ import annotations

import argparse
import gc
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import ptxdwarf
from ptxdwarf import loc

HERE = Path(__file__).resolve().parent
STYLE = "readable"

#: Bump when the generated LLVM IR changes, so cached files are not reused.
LL_GENERATOR_VERSION = 1
KERNEL_EVERY = 8  # every 8th function is a kernel (.entry)
PARAMS = 4
LOCALS = 6
BLOCK_VARS = 8
MEMBERS = 5


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- part 1: a builder-made module ---------------------------------------------


def build_module(functions: int) -> ptxdwarf.DebugInfoBuilder:
    """The builder of the benchmark module: ``functions`` functions, ``functions // 2`` structs."""
    dbg = ptxdwarf.DebugInfoBuilder("bench_emit.cu", comp_dir="/tmp/ptxdwarf-bench", producer="bench_emit")
    scalars = [dbg.named_type(n) for n in ("int", "float", "double", "long long", "unsigned int", "short", "char", "bool")]
    void = dbg.unspecified_type("void")
    structs = []
    pointers = []
    for k in range(max(1, functions // 2)):
        members = [(f"m{j}", scalars[(k + j) % len(scalars)]) for j in range(MEMBERS)]
        s = dbg.struct_type(f"S{k}", members, line=10 + k)
        structs.append(dbg.typedef(f"S{k}_t", s, line=10 + k))
        pointers.append(dbg.pointer_type(s, address_class=ptxdwarf.AddressClass.GENERIC))
    nstructs = len(structs)
    label = 0
    for i in range(functions):
        k = i % nstructs
        kernel = i % KERNEL_EVERY == KERNEL_EVERY - 1
        name = f"kern{i}" if kernel else f"fn{i}"
        symbol = f"_Z{len(name)}{name}P{len(str(k)) + 1}S{k}ifx"
        line = 1000 + 20 * i
        f = dbg.function(name, linkage_name=symbol, line=line, type=void if kernel else scalars[0], kernel=kernel)
        ptypes = [pointers[k], scalars[0], scalars[1], scalars[3]]
        for p in range(PARAMS):
            where = loc.param(f"{symbol}_param_{p}") if kernel else loc.register(f"%r{p + 1}" if p < 2 else f"%rd{p}")
            f.parameter(f"a{p}", ptypes[p], line=line, location=where)
        depot = f"__local_depot{i}"
        for v in range(LOCALS):
            t = structs[(k + v) % nstructs] if v % 3 == 0 else scalars[v % len(scalars)]
            where = loc.local(depot, 32 * v) if v % 2 == 0 else loc.register(f"%f{v}")
            f.variable(f"x{v}", t, line=line + 1 + v, location=where)
        block = f.lexical_block(low_pc=f"$L__tmp{label}", high_pc=f"$L__tmp{label + 1}")
        label += 2
        for v in range(BLOCK_VARS):
            block.variable(f"t{v}", scalars[v % len(scalars)], line=line + 8 + v, location=loc.register(f"%r{10 + v}"))
    return dbg


@dataclass
class BuilderRun:
    build: float
    encode: float
    write: float
    dies: int
    dwarf_bytes: int
    chars: int
    total: float = 0.0

    def __post_init__(self) -> None:
        self.total = self.total or self.build + self.encode + self.write


def run_builder(functions: int) -> BuilderRun:
    """One timed build + encode + write of the benchmark module."""
    t0 = time.perf_counter()
    dbg = build_module(functions)
    info = dbg.finish()
    t1 = time.perf_counter()
    images = ptxdwarf.encode(info, dbg.encode_options()).images
    t2 = time.perf_counter()
    text = ptxdwarf.format_sections(images.values(), STYLE)
    t3 = time.perf_counter()
    dies = sum(1 for _ in dbg.iter_dies())
    dwarf_bytes = sum(len(img.data) for img in images.values())
    return BuilderRun(t1 - t0, t2 - t1, t3 - t2, dies, dwarf_bytes, len(text))


def bench_builder(functions: int, repeat: int) -> BuilderRun:
    """Each stage's and the whole run's best time over ``repeat`` fresh runs (garbage
    collected before each, the collector otherwise left on)."""
    best: BuilderRun | None = None
    for _ in range(repeat):
        gc.collect()
        run = run_builder(functions)
        if best is None:
            best = run
        else:
            best.build = min(best.build, run.build)
            best.encode = min(best.encode, run.encode)
            best.write = min(best.write, run.write)
            best.total = min(best.total, run.total)
    assert best is not None
    return best


# --- part 2: an LLVM-made module ----------------------------------------------------


class _Metadata:
    """Numbered LLVM metadata nodes, in the order they are made."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, text: str) -> str:
        ref = f"!{len(self.lines)}"
        self.lines.append(f"{ref} = {text}")
        return ref


# IR type, DWARF basic-type name, size in bits, encoding, alignment in bytes
_SCALARS = [
    ("i32", "int", 32, "DW_ATE_signed", 4),
    ("float", "float", 32, "DW_ATE_float", 4),
    ("double", "double", 64, "DW_ATE_float", 8),
    ("i64", "long long", 64, "DW_ATE_signed", 8),
    ("i32", "unsigned int", 32, "DW_ATE_unsigned", 4),
]


def _struct_layout() -> tuple[list[tuple[int, int]], int]:
    """(scalar index, bit offset) of each member of every generated struct, and its size in bits."""
    members = []
    offset = 0
    for j in range(MEMBERS):
        s = _SCALARS[j % len(_SCALARS)]
        align = s[4] * 8
        offset = (offset + align - 1) // align * align
        members.append((j % len(_SCALARS), offset))
        offset += s[2]
    return members, (offset + 63) // 64 * 64


def generate_ll(functions: int, debug: bool = True) -> str:
    """A textual LLVM 14 IR module (typed pointers) for nvptx64, in the shape of clang -O0 output.

    ``functions`` functions (every 8th a kernel; device functions call the one
    before), ``functions // 2`` structs of 5 members. With ``debug``, full debug
    metadata: a DISubprogram per function, DILocalVariables for parameters and
    locals (``llvm.dbg.declare``) and for one SSA value per function
    (``llvm.dbg.value``), a DILexicalBlock, DICompositeType structs; without it,
    the same IR with no metadata, intrinsics or ``!dbg`` attachments
    (what ``opt -strip-debug`` leaves).
    """
    md = _Metadata()
    nstructs = max(1, functions // 2)
    layout, struct_bits = _struct_layout()
    member_types = ", ".join(_SCALARS[s][0] for s, _ in layout)
    out = [
        "; Generated by ptxdwarf benchmarks/bench_emit.py"
        f" (functions={functions}, debug={debug}, generator v{LL_GENERATOR_VERSION}). Do not edit.",
        'source_filename = "bench_emit.cu"',
        'target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"',
        'target triple = "nvptx64-nvidia-cuda"',
        "",
    ]
    out += [f"%struct.S{k} = type {{ {member_types} }}" for k in range(nstructs)]
    out.append("")

    if debug:
        cu = md.add(
            'distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1, producer: "ptxdwarf bench_emit", '
            "isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, splitDebugInlining: false, "
            "nameTableKind: None)"
        )
        file = md.add('!DIFile(filename: "bench_emit.cu", directory: "/tmp/ptxdwarf-bench")')
        flags = [md.add('!{i32 7, !"Dwarf Version", i32 2}'), md.add('!{i32 2, !"Debug Info Version", i32 3}')]
        empty = md.add("!{}")
        basic = [
            md.add(f'!DIBasicType(name: "{name}", size: {bits}, encoding: {enc})')
            for _, name, bits, enc, _ in _SCALARS
        ]
        array = md.add(f"!DICompositeType(tag: DW_TAG_array_type, baseType: {basic[0]}, size: 128, "
                       f"elements: {md.add('!{' + md.add('!DISubrange(count: 4)') + '}')})")
        struct_md = []
        pointer_md = []
        for k in range(nstructs):
            s = f"!{len(md.lines)}"
            elements = f"!{len(md.lines) + 1}"
            md.add(
                f'distinct !DICompositeType(tag: DW_TAG_structure_type, name: "S{k}", file: {file}, line: {10 + k}, '
                f'size: {struct_bits}, flags: DIFlagTypePassByValue, elements: {elements}, identifier: "_ZTS{len(str(k)) + 1}S{k}")'
            )
            first = len(md.lines) + 1
            md.add("!{" + ", ".join(f"!{first + j}" for j in range(MEMBERS)) + "}")
            for j, (si, off) in enumerate(layout):
                md.add(
                    f'!DIDerivedType(tag: DW_TAG_member, name: "m{j}", scope: {s}, file: {file}, line: {10 + k}, '
                    f"baseType: {basic[si]}, size: {_SCALARS[si][2]}, offset: {off})"
                )
            struct_md.append(s)
            pointer_md.append(md.add(f"!DIDerivedType(tag: DW_TAG_pointer_type, baseType: {s}, size: 64)"))

    def dbg(ref: str) -> str:
        return f", !dbg {ref}" if debug else ""

    kernels = []
    previous_device: tuple[str, str] | None = None  # (symbol, struct type)
    for i in range(functions):
        k = i % nstructs
        st = f"%struct.S{k}"
        kernel = i % KERNEL_EVERY == KERNEL_EVERY - 1
        name = f"kern{i}" if kernel else f"fn{i}"
        symbol = f"_Z{len(name)}{name}P{len(str(k)) + 1}S{k}ifx"
        line = 1000 + 20 * i
        params = [("a0", f"{st}*", 64), ("a1", "i32", 0), ("a2", "float", 1), ("a3", "i64", 3)]
        ret_ir = "void" if kernel else "i32"
        if debug:
            ptype = [pointer_md[k], basic[0], basic[1], basic[3]]
            types = md.add("!{" + ", ".join(["null" if kernel else basic[0], *ptype]) + "}")
            sp = md.add(
                f'distinct !DISubprogram(name: "{name}", linkageName: "{symbol}", scope: {file}, file: {file}, '
                f"line: {line}, type: {md.add(f'!DISubroutineType(types: {types})')}, scopeLine: {line}, "
                f"flags: DIFlagPrototyped, spFlags: DISPFlagDefinition, unit: {cu}, retainedNodes: {empty})"
            )
            block = md.add(f"distinct !DILexicalBlock(scope: {sp}, file: {file}, line: {line + 8}, column: 3)")
        body: list[str] = []
        temp = 0

        def tmp() -> str:
            nonlocal temp
            temp += 1
            return f"%v{temp}"

        def location(row: int, col: int, scope_in_block: bool = False) -> str:
            if not debug:
                return ""
            return md.add(f"!DILocation(line: {row}, column: {col}, scope: {block if scope_in_block else sp})")

        def declare(var_ir: str, ty: str, name_: str, row: int, type_md: str, arg: int = 0, in_block: bool = False) -> None:
            if not debug:
                return
            scope = block if in_block else sp
            arg_text = f"arg: {arg}, " if arg else ""
            var = md.add(
                f'!DILocalVariable(name: "{name_}", {arg_text}scope: {scope}, file: {file}, line: {row}, type: {type_md})'
            )
            body.append(
                f"  call void @llvm.dbg.declare(metadata {ty}* {var_ir}, metadata {var}, metadata !DIExpression())"
                + dbg(location(row, 7, in_block))
            )

        # allocas first, as clang -O0 writes them
        for p, ty, _ in params:
            body.append(f"  %{p}.addr = alloca {ty}, align 8")
        local_types = [("i32", 0), ("float", 1), ("double", 2), ("i64", 3), (st, -1), ("[4 x i32]", -2)]
        for v, (ty, _) in enumerate(local_types[:LOCALS]):
            body.append(f"  %x{v} = alloca {ty}, align 8")
        block_types = [_SCALARS[v % len(_SCALARS)][0] for v in range(BLOCK_VARS)]
        for v, ty in enumerate(block_types):
            body.append(f"  %t{v} = alloca {ty}, align 8")
        for n, (p, ty, ti) in enumerate(params, 1):
            at = location(line, 10 + n)
            body.append(f"  store {ty} %{p}, {ty}* %{p}.addr, align 8" + dbg(at))
            if debug:
                declare(f"%{p}.addr", ty, p, line, ptype[n - 1], arg=n)
        # x0 = a1 + (int)a2
        row = line + 1
        at = location(row, 12)
        a1, a2, c, s = tmp(), tmp(), tmp(), tmp()
        body += [
            f"  {a1} = load i32, i32* %a1.addr, align 8" + dbg(at),
            f"  {a2} = load float, float* %a2.addr, align 8" + dbg(at),
            f"  {c} = fptosi float {a2} to i32" + dbg(at),
            f"  {s} = add nsw i32 {a1}, {c}" + dbg(at),
            f"  store i32 {s}, i32* %x0, align 8" + dbg(at),
        ]
        x0 = s
        # x1 = a2 * 2; x2 = (double)x1 + a0->m2; x3 = a3 + a0->m3
        row += 1
        at = location(row, 12)
        m, x1 = tmp(), tmp()
        body += [f"  {x1} = fmul float {a2}, 2.0" + dbg(at), f"  store float {x1}, float* %x1, align 8" + dbg(at)]
        row += 1
        at = location(row, 12)
        ptr, g2, l2, e, x2 = tmp(), tmp(), tmp(), tmp(), tmp()
        body += [
            f"  {ptr} = load {st}*, {st}** %a0.addr, align 8" + dbg(at),
            f"  {g2} = getelementptr inbounds {st}, {st}* {ptr}, i32 0, i32 2" + dbg(at),
            f"  {l2} = load double, double* {g2}, align 8" + dbg(at),
            f"  {e} = fpext float {x1} to double" + dbg(at),
            f"  {x2} = fadd double {e}, {l2}" + dbg(at),
            f"  store double {x2}, double* %x2, align 8" + dbg(at),
        ]
        row += 1
        at = location(row, 12)
        a3, g3, l3, x3 = tmp(), tmp(), tmp(), tmp()
        body += [
            f"  {a3} = load i64, i64* %a3.addr, align 8" + dbg(at),
            f"  {g3} = getelementptr inbounds {st}, {st}* {ptr}, i32 0, i32 3" + dbg(at),
            f"  {l3} = load i64, i64* {g3}, align 8" + dbg(at),
            f"  {x3} = add nsw i64 {a3}, {l3}" + dbg(at),
            f"  store i64 {x3}, i64* %x3, align 8" + dbg(at),
        ]
        # x4.m0 = x0; x5[j] = x0
        row += 1
        at = location(row, 12)
        g4 = tmp()
        body += [
            f"  {g4} = getelementptr inbounds {st}, {st}* %x4, i32 0, i32 0" + dbg(at),
            f"  store i32 {x0}, i32* {g4}, align 8" + dbg(at),
        ]
        for j in range(4):
            g = tmp()
            body += [
                f"  {g} = getelementptr inbounds [4 x i32], [4 x i32]* %x5, i64 0, i64 {j}" + dbg(at),
                f"  store i32 {x0}, i32* {g}, align 4" + dbg(at),
            ]
        if debug:
            ltype = [basic[0], basic[1], basic[2], basic[3], struct_md[k], array]
            for v, (ty, _) in enumerate(local_types[:LOCALS]):
                declare(f"%x{v}", ty, f"x{v}", line + 1 + v, ltype[v])
        # the lexical block: t_v = x0 + v (converted), and one llvm.dbg.value
        for v, ty in enumerate(block_types):
            row = line + 8 + v
            at = location(row, 9, True)
            if ty == "i32":
                val = tmp()
                body.append(f"  {val} = add nsw i32 {x0}, {v}" + dbg(at))
            elif ty == "i64":
                val = tmp()
                body.append(f"  {val} = add nsw i64 {x3}, {v}" + dbg(at))
            elif ty == "float":
                val = tmp()
                body.append(f"  {val} = fadd float {x1}, {v}.0" + dbg(at))
            else:
                val = tmp()
                body.append(f"  {val} = fadd double {x2}, {v}.0" + dbg(at))
            body.append(f"  store {ty} {val}, {ty}* %t{v}, align 8" + dbg(at))
            if debug:
                declare(f"%t{v}", ty, f"t{v}", row, basic[v % len(_SCALARS)], in_block=True)
        row = line + 8 + BLOCK_VARS
        at = location(row, 9, True)
        sum_ = tmp()
        body.append(f"  {sum_} = mul nsw i32 {x0}, 3" + dbg(at))
        if debug:
            var = md.add(
                f'!DILocalVariable(name: "sum", scope: {block}, file: {file}, line: {row}, type: {basic[0]})'
            )
            body.append(
                f"  call void @llvm.dbg.value(metadata i32 {sum_}, metadata {var}, metadata !DIExpression())" + dbg(at)
            )
        # call the previous device function, return
        row += 1
        at = location(row, 10)
        result = sum_
        if previous_device is not None:
            callee, callee_struct = previous_device
            cast, result = tmp(), tmp()
            body.append(f"  {cast} = bitcast {st}* {ptr} to {callee_struct}*" + dbg(at))
            body.append(
                f"  {result} = call i32 @{callee}({callee_struct}* {cast}, i32 {sum_}, float {x1}, i64 {x3})" + dbg(at)
            )
        row += 1
        at = location(row, 3)
        if kernel:
            body.append("  ret void" + dbg(at))
        else:
            body.append(f"  ret i32 {result}" + dbg(at))
        args = ", ".join(f"{ty} %{p}" for p, ty, _ in params)
        attach = f" !dbg {sp}" if debug else ""
        out.append(f"define dso_local {ret_ir} @{symbol}({args}) #0{attach} {{")
        out.append("entry:")
        out += body
        out.append("}")
        out.append("")
        if kernel:
            kernels.append(f"!{{void ({', '.join(ty for _, ty, _ in params)})* @{symbol}, !\"kernel\", i32 1}}")
        else:
            previous_device = (symbol, st)
    if debug:
        out.append("declare void @llvm.dbg.declare(metadata, metadata, metadata) #1")
        out.append("declare void @llvm.dbg.value(metadata, metadata, metadata) #1")
    out.append("")
    out.append('attributes #0 = { noinline nounwind optnone "target-cpu"="sm_75" "target-features"="+ptx63,+sm_75" }')
    if debug:
        out.append("attributes #1 = { nofree nosync nounwind readnone speculatable willreturn }")
    out.append("")
    annotations = [md.add(k) for k in kernels]
    if debug:
        out.append(f"!llvm.dbg.cu = !{{{cu}}}")
        out.append("!llvm.module.flags = !{" + ", ".join(flags) + "}")
    if annotations:
        out.append("!nvvm.annotations = !{" + ", ".join(annotations) + "}")
    out.append("")
    out += md.lines
    out.append("")
    return "\n".join(out)


def find_llc(explicit: str | None) -> str:
    """The llc to use: ``--llc``, else ``llc-14`` or ``llc`` on PATH."""
    if explicit:
        return explicit
    for name in ("llc-14", "llc"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("bench_emit: error: llc not found (install LLVM 14, give --llc PATH, or use --no-llvm)")


def llc_version(llc: str) -> str:
    result = subprocess.run([llc, "--version"], capture_output=True, text=True)
    for line in result.stdout.splitlines():
        if "version" in line.lower():
            return line.strip()
    return "unknown version"


def cached_ll(cache: Path, functions: int) -> tuple[Path, Path]:
    """The generated ``.ll`` files (with and without debug metadata), made if missing."""
    cache.mkdir(parents=True, exist_ok=True)
    paths = []
    for debug in (True, False):
        path = cache / f"emit-v{LL_GENERATOR_VERSION}-f{functions}{'' if debug else '.nodebug'}.ll"
        if path.exists():
            log(f"using cached {path}")
        else:
            log(f"generating {path} ...")
            tmp = path.with_name(path.name + ".partial")
            tmp.write_text(generate_ll(functions, debug), encoding="ascii")
            tmp.replace(path)
        paths.append(path)
    return paths[0], paths[1]


def llc_command(llc: str, ll: Path, out: Path) -> list[str]:
    return [llc, "-O0", "-mtriple=nvptx64-nvidia-cuda", "-mcpu=sm_75", str(ll), "-o", str(out)]


def time_llc(llc: str, ll: Path, out: Path, repeat: int) -> float:
    """Best wall time of ``repeat`` runs of ``llc -O0`` on ``ll``; the PTX is left in ``out``."""
    best = float("inf")
    tmp = out.with_name(out.name + ".partial")
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = subprocess.run(llc_command(llc, ll, tmp), capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
        if result.returncode != 0:
            sys.exit(f"bench_emit: error: {' '.join(llc_command(llc, ll, tmp))} failed:\n{result.stderr.strip()}")
        best = min(best, elapsed)
    tmp.replace(out)
    return best


def time_reemit(info: ptxdwarf.DebugInfo, keep_abbrevs: bool, repeat: int) -> tuple[float, float, int, int]:
    """(best encode + write seconds, best encode seconds, DWARF bytes, characters) of re-emitting ``info``."""
    options = ptxdwarf.EncodeOptions(keep_abbrevs=keep_abbrevs)
    best = best_encode = float("inf")
    nbytes = chars = 0
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        images = ptxdwarf.encode_sections(info, options)
        t1 = time.perf_counter()
        text = ptxdwarf.format_sections(images.values(), STYLE)
        t2 = time.perf_counter()
        best = min(best, t2 - t0)
        best_encode = min(best_encode, t1 - t0)
        nbytes = sum(len(img.data) for img in images.values())
        chars = len(text)
    return best, best_encode, nbytes, chars


def debug_block_chars(module: ptxdwarf.PtxModule) -> int:
    """Characters of the ``.section .debug_* { ... }`` blocks."""
    return sum(b.end - b.start for b in module.sections if b.name.startswith(".debug_"))


@dataclass
class LlvmResult:
    llc: str
    ll_bytes: int
    ptx_chars: int
    t_debug: float
    t_nodebug: float
    dies: int
    dwarf_bytes: int
    llc_debug_chars: int
    reemit: dict[bool, tuple[float, float, int, int]]

    @property
    def t_llc_debug(self) -> float:
        return self.t_debug - self.t_nodebug

    def ratio(self, keep_abbrevs: bool) -> float:
        return self.reemit[keep_abbrevs][0] / self.t_llc_debug if self.t_llc_debug > 0 else float("inf")


def bench_llvm(cache: Path, functions: int, repeat: int, llc: str) -> LlvmResult:
    ll_debug, ll_nodebug = cached_ll(cache, functions)
    ptx_debug = ll_debug.with_suffix(".ptx")
    ptx_nodebug = ll_nodebug.with_suffix(".ptx")
    log(f"timing {llc} -O0 with debug metadata ({repeat} runs) ...")
    t_debug = time_llc(llc, ll_debug, ptx_debug, repeat)
    log(f"timing {llc} -O0 without debug metadata ({repeat} runs) ...")
    t_nodebug = time_llc(llc, ll_nodebug, ptx_nodebug, repeat)
    log("reading llc's PTX (untimed) ...")
    text = ptxdwarf.load_text(ptx_debug)
    info = ptxdwarf.read_ptx(text, filename=str(ptx_debug))
    dies = sum(1 for _ in info.iter_dies())
    dwarf_bytes = sum(len(img.data) for img in (info.sections or {}).values())
    llc_chars = debug_block_chars(info.module)
    reemit = {}
    for keep in (False, True):
        log(f"timing ptxdwarf re-emit, keep_abbrevs={keep} ({repeat} runs) ...")
        reemit[keep] = time_reemit(info, keep, repeat)
    return LlvmResult(
        llc_version(llc), ll_debug.stat().st_size, len(text), t_debug, t_nodebug, dies, dwarf_bytes, llc_chars, reemit
    )


# --- main ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--functions", type=int, default=4000,
                    help="functions in each generated module (default 4000: about 100k builder DIEs)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each measurement; the best counts (default 3)")
    ap.add_argument("--cache", type=Path, default=HERE / ".cache",
                    help="where generated inputs are kept (default benchmarks/.cache)")
    ap.add_argument("--llc", help="llc to use (default: llc-14, then llc, on PATH)")
    ap.add_argument("--no-llvm", action="store_true", help="skip part 2 (the llc comparison)")
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # results and progress messages in order
    if args.repeat < 1 or args.functions < 1:
        ap.error("--repeat and --functions must be >= 1")

    llc = None if args.no_llvm else find_llc(args.llc)  # fail before the long part 1
    log(f"part 1: building, encoding and writing the builder module ({args.repeat} runs) ...")
    b = bench_builder(args.functions, args.repeat)
    per_second = b.dies / b.total
    builder_chars = b.chars / b.dwarf_bytes
    print(f"1. builder module: {args.functions:,} functions, {b.dies:,} DIEs, "
          f"{b.dwarf_bytes:,} DWARF bytes, {b.chars:,} chars ({STYLE})")
    print(f"   {'stage (best of %d each)' % args.repeat:<44}{'seconds':>9}{'DIEs/s':>11}")
    for label, seconds in (
        ("build DIEs (builder calls + finish)", b.build),
        ("encode (ptxdwarf.encode)", b.encode),
        (f"write PTX text (format_sections {STYLE})", b.write),
        ("build + encode + write (best whole run)", b.total),
    ):
        print(f"   {label:<44}{seconds:9.3f}{b.dies / seconds:11,.0f}")
    print(f"   PTX chars per DWARF byte ({STYLE}): {builder_chars:.2f} (target < 3.0)")

    llvm: LlvmResult | None = None
    if llc is not None:
        print()
        llvm = bench_llvm(args.cache, args.functions, args.repeat, llc)
        print(f"2. LLVM-made module: {args.functions:,} functions, {llvm.ll_bytes:,} bytes of .ll with debug metadata")
        print(f"   {llvm.llc}; llc's PTX: {llvm.ptx_chars:,} chars, {llvm.dies:,} DIEs, {llvm.dwarf_bytes:,} DWARF bytes")
        print(f"   {'(best of %d each)' % args.repeat:<44}{'seconds':>9}")
        print(f"   {'llc -O0, with debug metadata':<44}{llvm.t_debug:9.3f}")
        print(f"   {'llc -O0, without':<44}{llvm.t_nodebug:9.3f}")
        print(f"   {'llc debug-info time (difference)':<44}{llvm.t_llc_debug:9.3f}")
        for keep in (False, True):
            total, encode, _, _ = llvm.reemit[keep]
            print(f"   {'ptxdwarf re-emit, keep_abbrevs=%s' % keep:<44}{total:9.3f}"
                  f"   (encode {encode:.3f}, write {total - encode:.3f})")
        print(f"   {'PTX chars per DWARF byte':<44}{'ratio':>9}")
        print(f"   {'llc as written (comments included)':<44}{llvm.llc_debug_chars / llvm.dwarf_bytes:9.2f}")
        for keep in (False, True):
            _, _, nbytes, chars = llvm.reemit[keep]
            print(f"   {'ptxdwarf %s, keep_abbrevs=%s' % (STYLE, keep):<44}{chars / nbytes:9.2f}"
                  f"   ({nbytes:,} bytes)")

    print()
    print("summary")
    print(f"  builder build+encode+write: {per_second:,.0f} DIEs/s (target >= 100,000)")
    print(f"  builder {STYLE} size: {builder_chars:.2f} PTX chars per DWARF byte (target < 3.0)")
    if llvm is not None:
        print(f"  re-emit ratio, keep_abbrevs=False: {llvm.ratio(False):.2f} (ptxdwarf / llc debug-info time; target <= 1.0)")
        print(f"  re-emit ratio, keep_abbrevs=True:  {llvm.ratio(True):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
