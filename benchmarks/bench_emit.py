#!/usr/bin/env python3
"""Emit benchmark: ptxdwarf building, encoding and writing DWARF as PTX text.

Measures, in one run, the emit ratios of docs/performance.md:

1. Builder throughput. A module of about 100 000 DIEs made with
   ``ptxdwarf.DebugInfoBuilder`` (N functions, each with 4 parameters, 6 local
   variables and a lexical block with labels holding 8 more; N/2 structs of 5
   members, a pointer and a typedef each; every 8th function a kernel), timed
   in three stages: building the DIEs (builder calls plus ``dbg.finish()``),
   encoding (``ptxdwarf.dwarf.encode.encode(info, dbg.encode_options())``) and writing PTX
   text (``ptxdwarf.ptx.writer.format_sections(images.values(), "readable")``). Prints the
   DIEs per second of each stage, of encode + write (the encoder's figure,
   target >= 100 000) and of the three together (the builder issue's reading,
   same target), and the readable style's PTX characters per DWARF byte
   (target: < 3.0).
2. Re-emitting an LLVM-made module. A textual LLVM 14 IR module for
   ``nvptx64-nvidia-cuda`` in the shape of clang -O0 output, with full debug
   metadata (N functions as above, generated here by :func:`generate_ll`; no
   clang needed), is compiled with ``llc -O0``, and so is the same IR
   generated without debug metadata (llc then writes the same code as for
   ``opt -strip-debug`` of the first). llc's time for debug info is
   t(with) - t(without), each the best of ``--repeat`` runs. ptxdwarf's time
   is ``encode_sections(info, EncodeOptions(keep_abbrevs=...))`` plus
   ``format_sections(..., "readable")`` of the DIE tree read (once, untimed)
   from the PTX llc made. Prints re-emit time / llc debug-info time, with
   ``keep_abbrevs=False`` (abbreviations derived again; target <= 1.0) and
   ``keep_abbrevs=True`` (the decoded table kept). With text IR, llc's
   debug-info time includes parsing the metadata text; ``--bitcode`` feeds
   llc bitcode instead (assembled by ``llvm-as`` outside the timer), which
   leaves llc less debug-info time and makes the ratio harder.
3. Attaching. A PTX module without debug info of ``--attach-functions`` device
   functions (2 parameters and 5 registers each) is generated, described with
   ``DebugInfoBuilder`` (a subprogram, its parameters and registers: 8 DIEs per
   function) and given that description with ``ptxdwarf.attach.attach`` (text out), all
   timed together; then the same at 4 times the size. Prints DIEs per second end
   to end (target >= 250 000) and the time ratio of the two (target <= 4.2: time
   grows with the module, no faster).

Generated inputs (the ``.ll``/``.bc`` files and llc's PTX) are cached in
``benchmarks/.cache/`` and reused; llc is run (and timed) on every run.
Needs ``llc`` from LLVM 14 (``llc-14`` or ``llc`` on PATH, or ``--llc``) for
part 2; ``--no-llvm`` runs part 1 only. Stdlib and ptxdwarf only.

    python3 benchmarks/bench_emit.py                       # 4000 functions, best of 3
    python3 benchmarks/bench_emit.py --functions 500 --repeat 1   # a quick run
    python3 benchmarks/bench_emit.py --bitcode             # llc reads bitcode
    python3 benchmarks/bench_emit.py --cpu                 # CPU seconds, for a busy machine
    python3 benchmarks/bench_emit.py --no-llvm             # builder and attach only
    python3 benchmarks/bench_emit.py --no-builder --no-llvm  # attach only
    python3 benchmarks/bench_emit.py --size small          # tiny inputs: does the script still run
"""

from __future__ import annotations

import argparse
import gc
import io
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import ptxdwarf
import ptxdwarf.dwarf
import ptxdwarf.dwarf.encode
import ptxdwarf.files
import ptxdwarf.ptx
import ptxdwarf.ptx.writer
from ptxdwarf import loc

HERE = Path(__file__).resolve().parent
STYLE = "readable"

#: Bump when the generated LLVM IR changes, so cached files are not reused.
LL_GENERATOR_VERSION = 2
# The shape of both generated modules (PARAMS and LOCALS cannot grow: their types are listed).
KERNEL_EVERY = 8  # every 8th function is a kernel (.entry)
PARAMS = 4
LOCALS = 6
BLOCK_VARS = 8
MEMBERS = 5


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Clock:
    """Wall seconds (the default), or CPU seconds: this process's, and for llc its
    children's (``getrusage``), which vary less on a busy machine."""

    def __init__(self, cpu: bool = False) -> None:
        self.cpu = cpu

    def now(self) -> float:
        return time.process_time() if self.cpu else time.perf_counter()

    def children(self) -> float:
        """A reading to time child processes with: the CPU time of those that ended, or wall time."""
        if not self.cpu:
            return time.perf_counter()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime


# --- part 1: a builder-made module ---------------------------------------------


def build_module(functions: int) -> ptxdwarf.DebugInfoBuilder:
    """The builder of the benchmark module: ``functions`` functions, ``functions // 2`` structs."""
    dbg = ptxdwarf.DebugInfoBuilder("bench_emit.cu", comp_dir="/tmp/ptxdwarf-bench", producer="bench_emit")
    scalars = [
        dbg.named_type(n)
        for n in ("int", "float", "double", "long long", "unsigned int", "short", "char", "bool")
    ]
    void = dbg.unspecified_type("void")
    structs = []
    pointers = []
    for k in range(max(1, functions // 2)):
        members = [(f"m{j}", scalars[(k + j) % len(scalars)]) for j in range(MEMBERS)]
        s = dbg.struct_type(f"S{k}", members, line=10 + k)
        structs.append(dbg.typedef(f"S{k}_t", s, line=10 + k))
        pointers.append(dbg.pointer_type(s, address_class=ptxdwarf.dwarf.AddressClass.GENERIC))
    nstructs = len(structs)
    label = 0
    for i in range(functions):
        k = i % nstructs
        kernel = i % KERNEL_EVERY == KERNEL_EVERY - 1
        name = f"kern{i}" if kernel else f"fn{i}"
        symbol = f"_Z{len(name)}{name}P{len(str(k)) + 1}S{k}ifx"
        line = 1000 + 20 * i
        f = dbg.function(
            name, linkage_name=symbol, line=line, type=void if kernel else scalars[0], kernel=kernel
        )
        ptypes = [pointers[k], scalars[0], scalars[1], scalars[3]]
        for p in range(PARAMS):
            where = (
                loc.param(f"{symbol}_param_{p}")
                if kernel
                else loc.register(f"%r{p + 1}" if p < 2 else f"%rd{p}")
            )
            f.parameter(f"a{p}", ptypes[p], line=line, location=where)
        depot = f"__local_depot{i}"
        for v in range(LOCALS):
            t = structs[(k + v) % nstructs] if v % 3 == 0 else scalars[v % len(scalars)]
            where = loc.local(depot, 32 * v) if v % 2 == 0 else loc.register(f"%f{v}")
            f.variable(f"x{v}", t, line=line + 1 + v, location=where)
        block = f.lexical_block(low_pc=f"$L__tmp{label}", high_pc=f"$L__tmp{label + 1}")
        label += 2
        for v in range(BLOCK_VARS):
            block.variable(
                f"t{v}", scalars[v % len(scalars)], line=line + 8 + v, location=loc.register(f"%r{10 + v}")
            )
    return dbg


@dataclass
class BuilderRun:
    build: float
    encode: float
    write: float
    dies: int
    dwarf_bytes: int
    chars: int
    total: float  # the whole run (build + encode + write)
    encode_write: float  # encode + write of the built module


def run_builder(functions: int, clock: Clock) -> BuilderRun:
    """One timed build + encode + write of the benchmark module."""
    t0 = clock.now()
    dbg = build_module(functions)
    info = dbg.finish()
    t1 = clock.now()
    images = ptxdwarf.dwarf.encode.encode(info, dbg.encode_options()).images
    t2 = clock.now()
    text = ptxdwarf.ptx.writer.format_sections(images.values(), STYLE)
    t3 = clock.now()
    dies = sum(1 for _ in dbg.iter_dies())
    dwarf_bytes = sum(len(img.data) for img in images.values())
    return BuilderRun(t1 - t0, t2 - t1, t3 - t2, dies, dwarf_bytes, len(text), t3 - t0, t3 - t1)


def bench_builder(functions: int, repeat: int, clock: Clock) -> BuilderRun:
    """Each stage's and the whole run's best time over ``repeat`` fresh runs (garbage
    collected before each, the collector otherwise left on)."""
    best: BuilderRun | None = None
    for _ in range(repeat):
        gc.collect()
        run = run_builder(functions, clock)
        if best is None:
            best = run
        else:
            best.build = min(best.build, run.build)
            best.encode = min(best.encode, run.encode)
            best.write = min(best.write, run.write)
            best.total = min(best.total, run.total)
            best.encode_write = min(best.encode_write, run.encode_write)
    assert best is not None
    return best


# --- part 3: attaching to a module without debug info --------------------------------

ATTACH_PARAMS = 2
ATTACH_REGISTERS = 5


def generate_plain_ptx(functions: int) -> str:
    """PTX without debug info: ``functions`` device functions, each loading its
    ``ATTACH_PARAMS`` parameters into registers of its ``ATTACH_REGISTERS``."""
    out = [".version 7.0\n.target sm_75\n.address_size 64\n"]
    for i in range(functions):
        name = f"dev{i}"
        params = ",\n".join(f"\t.param .b32 {name}_param_{p}" for p in range(ATTACH_PARAMS))
        out.append(f"\n.visible .func {name}(\n{params}\n)\n{{\n\t.reg .b32 \t%r<{ATTACH_REGISTERS}>;\n\n")
        for p in range(ATTACH_PARAMS):
            out.append(f"\tld.param.u32 \t%r{p}, [{name}_param_{p}];\n")
        for r in range(ATTACH_PARAMS, ATTACH_REGISTERS):
            out.append(f"\tadd.s32 \t%r{r}, %r{r - 1}, %r{r - 2};\n")
        out.append("\tret;\n}\n")
    return "".join(out)


def attach_module(functions: int) -> tuple[str, int]:
    """The attach stage, end to end: the PTX without debug info, its description
    (a subprogram per function, its parameters and registers as register variables),
    :func:`ptxdwarf.attach.attach`; the text and the number of DIEs."""
    ptx = generate_plain_ptx(functions)
    dbg = ptxdwarf.DebugInfoBuilder("bench_attach.ptx", comp_dir="/tmp/ptxdwarf-bench", producer="bench_emit")
    u32 = dbg.named_type(".u32")
    for i in range(functions):
        name = f"dev{i}"
        line = 5 + i * (ATTACH_REGISTERS + 7)
        f = dbg.function(name, line=line)
        for p in range(ATTACH_PARAMS):
            f.parameter(f"{name}_param_{p}", u32, line=line + 1 + p, location=loc.register(f"%r{p}"))
        for r in range(ATTACH_REGISTERS):
            f.variable(f"%r{r}", u32, line=line + 4, location=loc.register(f"%r{r}"))
    text = ptxdwarf.attach.attach(ptx, dbg, filename="bench_attach.ptx", style=STYLE)
    return text, sum(1 for _ in dbg.iter_dies())


@dataclass
class AttachRun:
    functions: int
    seconds: float
    dies: int
    chars: int


def bench_attach(functions: int, repeat: int, clock: Clock) -> AttachRun:
    """The best of ``repeat`` runs of :func:`attach_module`."""
    best: AttachRun | None = None
    for _ in range(repeat):
        gc.collect()
        t0 = clock.now()
        text, dies = attach_module(functions)
        seconds = clock.now() - t0
        if best is None or seconds < best.seconds:
            best = AttachRun(functions, seconds, dies, len(text))
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


class _IrFunction:
    """One function's body under construction: SSA names, ``!dbg`` locations, ``llvm.dbg.declare``s."""

    def __init__(self, md: _Metadata, debug: bool, file: str, sp: str, block: str) -> None:
        self.md = md
        self.debug = debug
        self.file = file
        self.sp = sp
        self.block = block
        self.body: list[str] = []
        self.temps = 0

    def tmp(self) -> str:
        """A new SSA value name."""
        self.temps += 1
        return f"%v{self.temps}"

    def at(self, row: int, col: int, in_block: bool = False) -> str:
        """The ``, !dbg !N`` suffix of a new source location (empty without debug info)."""
        if not self.debug:
            return ""
        return ", !dbg " + self.md.add(
            f"!DILocation(line: {row}, column: {col}, scope: {self.block if in_block else self.sp})"
        )

    def emit(self, *instructions: str, at: str = "") -> None:
        self.body += [f"  {i}{at}" for i in instructions]

    def declare(
        self, alloca: str, ty: str, name: str, row: int, type_md: str, arg: int = 0, in_block: bool = False
    ) -> None:
        """A DILocalVariable for ``alloca`` and its ``llvm.dbg.declare``."""
        if not self.debug:
            return
        arg_text = f"arg: {arg}, " if arg else ""
        var = self.md.add(
            f'!DILocalVariable(name: "{name}", {arg_text}scope: {self.block if in_block else self.sp}, '
            f"file: {self.file}, line: {row}, type: {type_md})"
        )
        self.emit(
            f"call void @llvm.dbg.declare(metadata {ty}* {alloca}, metadata {var}, metadata !DIExpression())",
            at=self.at(row, 7, in_block),
        )


@dataclass
class _DebugTypes:
    """The metadata every function of :func:`generate_ll` refers to; empty without debug info."""

    cu: str = ""
    file: str = ""
    empty: str = ""
    array: str = ""
    flags: list[str] = field(default_factory=list)
    basic: list[str] = field(default_factory=list)
    structs: list[str] = field(default_factory=list)
    pointers: list[str] = field(default_factory=list)


def _debug_types(
    md: _Metadata, nstructs: int, layout: list[tuple[int, int]], struct_bits: int
) -> _DebugTypes:
    """The compile unit, file, module flags and types, added to ``md`` in the order clang writes them."""
    struct_md: list[str] = []
    pointer_md: list[str] = []
    cu = md.add(
        'distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1, producer: "ptxdwarf bench_emit", '
        "isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, splitDebugInlining: false, "
        "nameTableKind: None)"
    )
    file = md.add('!DIFile(filename: "bench_emit.cu", directory: "/tmp/ptxdwarf-bench")')
    flags = [
        md.add('!{i32 7, !"Dwarf Version", i32 2}'),
        md.add('!{i32 2, !"Debug Info Version", i32 3}'),
    ]
    empty = md.add("!{}")
    basic = [
        md.add(f'!DIBasicType(name: "{name}", size: {bits}, encoding: {enc})')
        for _, name, bits, enc, _ in _SCALARS
    ]
    subrange = md.add("!DISubrange(count: 4)")
    array = md.add(
        f"!DICompositeType(tag: DW_TAG_array_type, baseType: {basic[0]}, size: 128, "
        f"elements: {md.add('!{' + subrange + '}')})"
    )
    for k in range(nstructs):
        # the struct, then its elements tuple, then the members the tuple names
        st = f"!{len(md.lines)}"
        md.add(
            f'distinct !DICompositeType(tag: DW_TAG_structure_type, name: "S{k}", file: {file}, line: {10 + k}, '
            f"size: {struct_bits}, flags: DIFlagTypePassByValue, elements: !{len(md.lines) + 1}, "
            f'identifier: "_ZTS{len(str(k)) + 1}S{k}")'
        )
        first = len(md.lines) + 1
        md.add("!{" + ", ".join(f"!{first + j}" for j in range(MEMBERS)) + "}")
        for j, (si, off) in enumerate(layout):
            md.add(
                f'!DIDerivedType(tag: DW_TAG_member, name: "m{j}", scope: {st}, file: {file}, line: {10 + k}, '
                f"baseType: {basic[si]}, size: {_SCALARS[si][2]}, offset: {off})"
            )
        struct_md.append(st)
        pointer_md.append(md.add(f"!DIDerivedType(tag: DW_TAG_pointer_type, baseType: {st}, size: 64)"))
    return _DebugTypes(cu, file, empty, array, flags, basic, struct_md, pointer_md)


def _module_end(md: _Metadata, kernels: list[str], meta: _DebugTypes | None) -> list[str]:
    """The lines after the functions: declarations, attributes, named metadata and the metadata
    (``meta`` None: a module without debug info)."""
    end: list[str] = []
    if meta is not None:
        end.append("declare void @llvm.dbg.declare(metadata, metadata, metadata) #1")
        end.append("declare void @llvm.dbg.value(metadata, metadata, metadata) #1")
    end.append("")
    end.append(
        'attributes #0 = { noinline nounwind optnone "target-cpu"="sm_75" "target-features"="+ptx63,+sm_75" }'
    )
    if meta is not None:
        end.append("attributes #1 = { nofree nosync nounwind readnone speculatable willreturn }")
    end.append("")
    annotations = [md.add(k) for k in kernels]
    if meta is not None:
        end.append(f"!llvm.dbg.cu = !{{{meta.cu}}}")
        end.append("!llvm.module.flags = !{" + ", ".join(meta.flags) + "}")
    if annotations:
        end.append("!nvvm.annotations = !{" + ", ".join(annotations) + "}")
    end.append("")
    end += md.lines
    end.append("")
    return end


def generate_ll(functions: int, debug: bool = True) -> str:
    """A textual LLVM 14 IR module (typed pointers) for nvptx64, in the shape of clang -O0 output.

    ``functions`` functions (every 8th a kernel; device functions call the one
    before), ``functions // 2`` structs of 5 members. With ``debug``, full debug
    metadata: a DISubprogram per function, DILocalVariables for parameters and
    locals (``llvm.dbg.declare``) and for one SSA value per function
    (``llvm.dbg.value``; llc-14 processes it but writes no DIE for it, NVPTX
    having no register locations), a DILexicalBlock, DICompositeType structs;
    without it, the same IR with no metadata, intrinsics or ``!dbg``
    attachments (what ``opt -strip-debug`` leaves).
    """
    md = _Metadata()
    nstructs = max(1, functions // 2)
    layout, struct_bits = _struct_layout()
    member_types = ", ".join(_SCALARS[s][0] for s, _ in layout)
    out = [
        (
            "; Generated by ptxdwarf benchmarks/bench_emit.py"
            f" (functions={functions}, debug={debug}, generator v{LL_GENERATOR_VERSION}). Do not edit."
        ),
        'source_filename = "bench_emit.cu"',
        'target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"',
        'target triple = "nvptx64-nvidia-cuda"',
        "",
    ]
    out += [f"%struct.S{k} = type {{ {member_types} }}" for k in range(nstructs)]
    out.append("")

    meta = _debug_types(md, nstructs, layout, struct_bits) if debug else _DebugTypes()
    cu, file, empty, array = meta.cu, meta.file, meta.empty, meta.array
    basic, struct_md, pointer_md = meta.basic, meta.structs, meta.pointers

    kernels = []
    previous_device: tuple[str, str] | None = None  # (symbol, struct type)
    local_types = ["i32", "float", "double", "i64", "", "[4 x i32]"][:LOCALS]  # "": the struct
    block_types = [_SCALARS[v % len(_SCALARS)][0] for v in range(BLOCK_VARS)]
    for i in range(functions):
        k = i % nstructs
        st = f"%struct.S{k}"
        kernel = i % KERNEL_EVERY == KERNEL_EVERY - 1
        name = f"kern{i}" if kernel else f"fn{i}"
        symbol = f"_Z{len(name)}{name}P{len(str(k)) + 1}S{k}ifx"
        line = 1000 + 20 * i
        params = [("a0", f"{st}*"), ("a1", "i32"), ("a2", "float"), ("a3", "i64")]
        sp = block = ""
        param_md: list[str] = []
        if debug:
            param_md = [pointer_md[k], basic[0], basic[1], basic[3]]
            types = md.add("!{" + ", ".join(["null" if kernel else basic[0], *param_md]) + "}")
            sp = md.add(
                f'distinct !DISubprogram(name: "{name}", linkageName: "{symbol}", scope: {file}, file: {file}, '
                f"line: {line}, type: {md.add(f'!DISubroutineType(types: {types})')}, scopeLine: {line}, "
                f"flags: DIFlagPrototyped, spFlags: DISPFlagDefinition, unit: {cu}, retainedNodes: {empty})"
            )
            block = md.add(
                f"distinct !DILexicalBlock(scope: {sp}, file: {file}, line: {line + 8}, column: 3)"
            )
        f = _IrFunction(md, debug, file, sp, block)
        # allocas first, as clang -O0 writes them
        f.emit(*(f"%{p}.addr = alloca {ty}, align 8" for p, ty in params))
        f.emit(*(f"%x{v} = alloca {ty or st}, align 8" for v, ty in enumerate(local_types)))
        f.emit(*(f"%t{v} = alloca {ty}, align 8" for v, ty in enumerate(block_types)))
        for n, (p, ty) in enumerate(params, 1):
            f.emit(f"store {ty} %{p}, {ty}* %{p}.addr, align 8", at=f.at(line, 10 + n))
            if debug:
                f.declare(f"%{p}.addr", ty, p, line, param_md[n - 1], arg=n)
        # x0 = a1 + (int)a2; x1 = a2 * 2; x2 = (double)x1 + a0->m2; x3 = a3 + a0->m3
        a1, a2, c, x0 = f.tmp(), f.tmp(), f.tmp(), f.tmp()
        f.emit(
            f"{a1} = load i32, i32* %a1.addr, align 8",
            f"{a2} = load float, float* %a2.addr, align 8",
            f"{c} = fptosi float {a2} to i32",
            f"{x0} = add nsw i32 {a1}, {c}",
            f"store i32 {x0}, i32* %x0, align 8",
            at=f.at(line + 1, 12),
        )
        x1 = f.tmp()
        f.emit(
            f"{x1} = fmul float {a2}, 2.0", f"store float {x1}, float* %x1, align 8", at=f.at(line + 2, 12)
        )
        ptr, g2, l2, e, x2 = f.tmp(), f.tmp(), f.tmp(), f.tmp(), f.tmp()
        f.emit(
            f"{ptr} = load {st}*, {st}** %a0.addr, align 8",
            f"{g2} = getelementptr inbounds {st}, {st}* {ptr}, i32 0, i32 2",
            f"{l2} = load double, double* {g2}, align 8",
            f"{e} = fpext float {x1} to double",
            f"{x2} = fadd double {e}, {l2}",
            f"store double {x2}, double* %x2, align 8",
            at=f.at(line + 3, 12),
        )
        a3, g3, l3, x3 = f.tmp(), f.tmp(), f.tmp(), f.tmp()
        f.emit(
            f"{a3} = load i64, i64* %a3.addr, align 8",
            f"{g3} = getelementptr inbounds {st}, {st}* {ptr}, i32 0, i32 3",
            f"{l3} = load i64, i64* {g3}, align 8",
            f"{x3} = add nsw i64 {a3}, {l3}",
            f"store i64 {x3}, i64* %x3, align 8",
            at=f.at(line + 4, 12),
        )
        # x4.m0 = x0; x5[j] = x0
        at = f.at(line + 5, 12)
        g4 = f.tmp()
        f.emit(
            f"{g4} = getelementptr inbounds {st}, {st}* %x4, i32 0, i32 0",
            f"store i32 {x0}, i32* {g4}, align 8",
            at=at,
        )
        for j in range(4):
            g = f.tmp()
            f.emit(
                f"{g} = getelementptr inbounds [4 x i32], [4 x i32]* %x5, i64 0, i64 {j}",
                f"store i32 {x0}, i32* {g}, align 4",
                at=at,
            )
        if debug:
            local_md = [basic[0], basic[1], basic[2], basic[3], struct_md[k], array]
            for v, ty in enumerate(local_types):
                f.declare(f"%x{v}", ty or st, f"x{v}", line + 1 + v, local_md[v])
        # the lexical block: t_v = x0/x3/x1/x2 + v, then one llvm.dbg.value
        for v, ty in enumerate(block_types):
            row = line + 8 + v
            val = f.tmp()
            op = {
                "i32": f"add nsw i32 {x0}, {v}",
                "i64": f"add nsw i64 {x3}, {v}",
                "float": f"fadd float {x1}, {v}.0",
                "double": f"fadd double {x2}, {v}.0",
            }[ty]
            f.emit(f"{val} = {op}", f"store {ty} {val}, {ty}* %t{v}, align 8", at=f.at(row, 9, True))
            if debug:
                f.declare(f"%t{v}", ty, f"t{v}", row, basic[v % len(_SCALARS)], in_block=True)
        row = line + 8 + BLOCK_VARS
        at = f.at(row, 9, True)
        total = f.tmp()
        f.emit(f"{total} = mul nsw i32 {x0}, 3", at=at)
        if debug:
            var = md.add(
                f'!DILocalVariable(name: "sum", scope: {block}, file: {file}, line: {row}, type: {basic[0]})'
            )
            f.emit(
                f"call void @llvm.dbg.value(metadata i32 {total}, metadata {var}, metadata !DIExpression())",
                at=at,
            )
        # call the previous device function, return
        at = f.at(row + 1, 10)
        result = total
        if previous_device is not None:
            callee, callee_struct = previous_device
            cast, result = f.tmp(), f.tmp()
            f.emit(
                f"{cast} = bitcast {st}* {ptr} to {callee_struct}*",
                f"{result} = call i32 @{callee}({callee_struct}* {cast}, i32 {total}, float {x1}, i64 {x3})",
                at=at,
            )
        f.emit("ret void" if kernel else f"ret i32 {result}", at=f.at(row + 2, 3))
        args = ", ".join(f"{ty} %{p}" for p, ty in params)
        attach = f" !dbg {sp}" if debug else ""
        out.append(f"define dso_local {'void' if kernel else 'i32'} @{symbol}({args}) #0{attach} {{")
        out.append("entry:")
        out += f.body
        out += ["}", ""]
        if kernel:
            kernels.append(f'!{{void ({", ".join(ty for _, ty in params)})* @{symbol}, !"kernel", i32 1}}')
        else:
            previous_device = (symbol, st)
    out += _module_end(md, kernels, meta if debug else None)
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


def find_llvm_as(llc: str) -> str:
    """The llvm-as beside ``llc`` (``llc-14`` -> ``llvm-as-14``), else on PATH."""
    path = Path(llc)
    beside = path.with_name(path.name.replace("llc", "llvm-as", 1))
    if beside.exists():
        return str(beside)
    for name in ("llvm-as-14", "llvm-as"):
        found = shutil.which(name)
        if found:
            return found
    sys.exit("bench_emit: error: --bitcode needs llvm-as (LLVM 14), not found beside llc or on PATH")


def cached_bitcode(llvm_as: str, ll: Path) -> Path:
    """``ll`` assembled to bitcode (``llvm-as``), made if missing or older than ``ll``."""
    bc = ll.with_suffix(".bc")
    if bc.exists() and bc.stat().st_mtime >= ll.stat().st_mtime:
        log(f"using cached {bc}")
        return bc
    tmp = bc.with_name(bc.name + ".partial")
    result = subprocess.run([llvm_as, str(ll), "-o", str(tmp)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"bench_emit: error: {llvm_as} {ll} failed:\n{result.stderr.strip()}")
    tmp.replace(bc)
    return bc


def llc_version(llc: str) -> str:
    result = subprocess.run([llc, "--version"], capture_output=True, text=True, check=False)
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


def time_llc(llc: str, ll: Path, out: Path, repeat: int, clock: Clock) -> float:
    """Best time of ``repeat`` runs of ``llc -O0`` on ``ll``; the PTX is left in ``out``."""
    best = float("inf")
    tmp = out.with_name(out.name + ".partial")
    for _ in range(repeat):
        t0 = clock.children()
        result = subprocess.run(llc_command(llc, ll, tmp), capture_output=True, text=True, check=False)
        elapsed = clock.children() - t0
        if result.returncode != 0:
            sys.exit(
                f"bench_emit: error: {' '.join(llc_command(llc, ll, tmp))} failed:\n{result.stderr.strip()}"
            )
        best = min(best, elapsed)
    tmp.replace(out)
    return best


def time_reemit(
    info: ptxdwarf.DebugInfo, keep_abbrevs: bool, repeat: int, clock: Clock
) -> tuple[float, float, int, int]:
    """(best encode + write seconds, best encode seconds, DWARF bytes, characters) of re-emitting ``info``."""
    options = ptxdwarf.dwarf.EncodeOptions(keep_abbrevs=keep_abbrevs)
    best = best_encode = float("inf")
    nbytes = chars = 0
    for _ in range(repeat):
        gc.collect()
        t0 = clock.now()
        images = ptxdwarf.dwarf.encode_sections(info, options)
        t1 = clock.now()
        text = ptxdwarf.ptx.writer.format_sections(images.values(), STYLE)
        t2 = clock.now()
        best = min(best, t2 - t0)
        best_encode = min(best_encode, t1 - t0)
        nbytes = sum(len(img.data) for img in images.values())
        chars = len(text)
    return best, best_encode, nbytes, chars


def debug_block_chars(module: ptxdwarf.ptx.PtxModule) -> int:
    """Characters of the ``.section .debug_* { ... }`` blocks."""
    return sum(b.end - b.start for b in module.sections if b.name.startswith(".debug_"))


@dataclass
class LlvmResult:
    llc: str
    ll: Path
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


def bench_llvm(cache: Path, functions: int, repeat: int, llc: str, bitcode: bool, clock: Clock) -> LlvmResult:
    ll_debug, ll_nodebug = cached_ll(cache, functions)
    ptx_debug = ll_debug.with_suffix(".ptx")
    ptx_nodebug = ll_nodebug.with_suffix(".ptx")
    if bitcode:
        llvm_as = find_llvm_as(llc)
        ll_debug, ll_nodebug = cached_bitcode(llvm_as, ll_debug), cached_bitcode(llvm_as, ll_nodebug)
    log(f"timing {llc} -O0 with debug metadata ({repeat} runs) ...")
    t_debug = time_llc(llc, ll_debug, ptx_debug, repeat, clock)
    log(f"timing {llc} -O0 without debug metadata ({repeat} runs) ...")
    t_nodebug = time_llc(llc, ll_nodebug, ptx_nodebug, repeat, clock)
    log("reading llc's PTX (untimed) ...")
    text = ptxdwarf.files.load_text(ptx_debug)
    info = ptxdwarf.read(text=text, filename=str(ptx_debug))
    dies = sum(1 for _ in info.iter_dies())
    dwarf_bytes = sum(len(img.data) for img in (info.sections or {}).values())
    module = info.module
    assert isinstance(module, ptxdwarf.ptx.PtxModule)
    llc_chars = debug_block_chars(module)
    reemit = {}
    for keep in (False, True):
        log(f"timing ptxdwarf re-emit, keep_abbrevs={keep} ({repeat} runs) ...")
        reemit[keep] = time_reemit(info, keep, repeat, clock)
    return LlvmResult(
        llc_version(llc),
        ll_debug,
        ll_debug.stat().st_size,
        len(text),
        t_debug,
        t_nodebug,
        dies,
        dwarf_bytes,
        llc_chars,
        reemit,
    )


# --- main ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--functions",
        type=int,
        default=4000,
        help="functions in each generated module (default 4000: about 100k builder DIEs)",
    )
    ap.add_argument(
        "--repeat", type=int, default=3, help="timed runs of each measurement; the best counts (default 3)"
    )
    ap.add_argument(
        "--cache",
        type=Path,
        default=HERE / ".cache",
        help="where generated inputs are kept (default benchmarks/.cache)",
    )
    ap.add_argument("--llc", help="llc to use (default: llc-14, then llc, on PATH)")
    ap.add_argument(
        "--bitcode",
        action="store_true",
        help="give llc bitcode (llvm-as, untimed) rather than text IR: llc then spends no time "
        "parsing metadata text, which makes its debug-info time smaller",
    )
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="time CPU seconds (ptxdwarf's and llc's) instead of wall seconds; steadier on a busy machine",
    )
    ap.add_argument("--no-llvm", action="store_true", help="skip part 2 (the llc comparison)")
    ap.add_argument("--no-builder", action="store_true", help="skip part 1 (the builder module)")
    ap.add_argument(
        "--attach-functions",
        type=int,
        default=12500,
        help="device functions of part 3's module (default 12500: about 100k DIEs; "
        "it is also run at 4 times the size; 0 skips part 3)",
    )
    ap.add_argument(
        "--size",
        choices=("full", "small"),
        default="full",
        help="small: tiny modules and one run of each, to see that the script works (no useful timing)",
    )
    args = ap.parse_args(argv)
    if args.size == "small":
        args.functions, args.repeat = min(args.functions, 24), 1
        args.attach_functions = min(args.attach_functions, 40)
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)  # results and progress messages in order
    if args.repeat < 1 or args.functions < 1 or args.attach_functions < 0:
        ap.error("--repeat and --functions must be >= 1, --attach-functions >= 0")

    llc = None if args.no_llvm else find_llc(args.llc)  # fail before the long part 1
    clock = Clock(args.cpu)
    unit = "CPU s" if args.cpu else "seconds"
    b: BuilderRun | None = None
    if not args.no_builder:
        log(f"part 1: building, encoding and writing the builder module ({args.repeat} runs) ...")
        b = bench_builder(args.functions, args.repeat, clock)
        builder_chars = b.chars / b.dwarf_bytes
        print(
            f"1. builder module: {args.functions:,} functions, {b.dies:,} DIEs, "
            f"{b.dwarf_bytes:,} DWARF bytes, {b.chars:,} chars ({STYLE})"
        )
        row(f"stage (best of {args.repeat} each)", unit, "DIEs/s")
        for label, seconds in (
            ("build DIEs (builder calls + finish)", b.build),
            ("encode (ptxdwarf.dwarf.encode.encode)", b.encode),
            (f"write PTX text (format_sections {STYLE})", b.write),
            ("encode + write (best run)", b.encode_write),
            ("build + encode + write (best whole run)", b.total),
        ):
            row(label, f"{seconds:.3f}", f"{b.dies / seconds:,.0f}")
        print(f"   PTX chars per DWARF byte ({STYLE}): {builder_chars:.2f} (target < 3.0)")

    llvm: LlvmResult | None = None
    kind = "bitcode" if args.bitcode else "text IR"
    if llc is not None:
        print()
        llvm = bench_llvm(args.cache, args.functions, args.repeat, llc, args.bitcode, clock)
        print(
            f"2. LLVM-made module: {args.functions:,} functions; llc input {llvm.ll.name} "
            f"({llvm.ll_bytes:,} bytes, with debug metadata)"
        )
        print(
            f"   {llvm.llc}; llc's PTX: {llvm.ptx_chars:,} chars, {llvm.dies:,} DIEs, "
            f"{llvm.dwarf_bytes:,} DWARF bytes"
        )
        row(f"(best of {args.repeat} each)", unit)
        row(f"llc -O0, {kind} with debug metadata", f"{llvm.t_debug:.3f}")
        row("llc -O0, without", f"{llvm.t_nodebug:.3f}")
        row("llc debug-info time (difference)", f"{llvm.t_llc_debug:.3f}")
        for keep in (False, True):
            total, encode, _, _ = llvm.reemit[keep]
            row(
                f"ptxdwarf re-emit, keep_abbrevs={keep}",
                f"{total:.3f}",
                note=f"(encode {encode:.3f}, write {total - encode:.3f})",
            )
        row("PTX chars per DWARF byte", "ratio")
        row("llc as written (comments included)", f"{llvm.llc_debug_chars / llvm.dwarf_bytes:.2f}")
        for keep in (False, True):
            _, _, nbytes, chars = llvm.reemit[keep]
            row(f"ptxdwarf {STYLE}, keep_abbrevs={keep}", f"{chars / nbytes:.2f}", note=f"({nbytes:,} bytes)")

    attached: list[AttachRun] = []
    if args.attach_functions:
        print()
        log(
            f"part 3: attaching to modules of {args.attach_functions:,} and {4 * args.attach_functions:,} "
            f"functions ({args.repeat} runs each) ..."
        )
        attached = [
            bench_attach(n, args.repeat, clock) for n in (args.attach_functions, 4 * args.attach_functions)
        ]
        print(
            f"3. attach: device functions with {ATTACH_PARAMS} parameters and {ATTACH_REGISTERS} registers each; "
            "PTX made, described (DebugInfoBuilder) and attached (ptxdwarf.attach.attach, text out)"
        )
        row(f"module (best of {args.repeat} each)", unit, "DIEs/s", note="DIEs, chars")
        for a in attached:
            row(
                f"{a.functions:,} functions",
                f"{a.seconds:.3f}",
                f"{a.dies / a.seconds:,.0f}",
                note=f"{a.dies:,}, {a.chars:,}",
            )

    print()
    print("summary")
    if b is not None:
        print(f"  builder encode+write: {b.dies / b.encode_write:,.0f} DIEs/s (target >= 100,000)")
        print(
            f"  builder build+encode+write: {b.dies / b.total:,.0f} DIEs/s "
            f"(build alone {b.dies / b.build:,.0f})"
        )
        print(
            f"  builder {STYLE} size: {b.chars / b.dwarf_bytes:.2f} PTX chars per DWARF byte (target < 3.0)"
        )
    if attached:
        one, four = attached
        print(
            f"  attach end to end: {one.dies / one.seconds:,.0f} DIEs/s at {one.dies:,} DIEs (target >= 250,000); "
            f"4x the module in {four.seconds / one.seconds:.2f}x the time (target <= 4.2)"
        )
    if llvm is not None:
        print(
            f"  re-emit ratio, keep_abbrevs=False: {llvm.ratio(False):.2f} "
            f"(ptxdwarf / llc debug-info time, llc reading {kind}; target <= 1.0)"
        )
        print(f"  re-emit ratio, keep_abbrevs=True:  {llvm.ratio(True):.2f}")
    return 0


def row(label: str, *columns: str, note: str = "") -> None:
    """A table row: the label, right-aligned columns (9 and 11 wide), a note."""
    cells = "".join(f"{c:>{9 if i == 0 else 11}}" for i, c in enumerate(columns))
    print(f"   {label:<44}{cells}" + (f"   {note}" if note else ""))


if __name__ == "__main__":
    raise SystemExit(main())
