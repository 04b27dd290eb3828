#!/usr/bin/env python3
"""Peak memory of ptxas -g on attach's output against the registers it describes.

ptxas -g keeps each register a variable describes over its whole function live (quirk
``described-registers-memory``), so its memory grows with the registers described times the
function's register operands. This measures, for each ptxas given, the peak RSS and time of
``ptxas -g`` on a chain of K dependent ``add.f32`` (K registers, 2K register operands):
without debug info, with attach's default (the budget), and with N registers described
(``--max-registers N``, or ``all``); and the same for cuda-samples' ``cudaTensorCoreGemm``
(``fixtures/corpus/cuda-samples``)::

    python benchmarks/bench_attach_memory.py                       # ptxas found by ptxdwarf
    python benchmarks/bench_attach_memory.py --ptxas /path/to/ptxas --chains 1000,4000 --described 0,250,all
    python benchmarks/bench_attach_memory.py --gemm --described 0,250,500,1000

Each ptxas runs alone, with its address space capped (``--limit-gb``, default 12) and 300 s of
CPU; a run over the cap prints ``killed``. Results: docs/ptxas-facts.md, "Memory of described
registers".
"""

from __future__ import annotations

import argparse
import lzma
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ptxdwarf.autodebug import attach_ptx
from ptxdwarf.cuda.ptxas import find_ptxas

GEMM = ROOT / "fixtures" / "corpus" / "cuda-samples" / "cudaTensorCoreGemm.O3.sm_80.ptx.xz"


def chain(count: int) -> str:
    """A kernel adding 1.0 ``count`` times to a value it loads, each sum a new ``.f32`` register."""
    body = [
        "\tld.param.u64 %rd1, [chain_param_0];",
        "\tcvta.to.global.u64 %rd2, %rd1;",
        "\tld.global.f32 %f0, [%rd2];",
        *(f"\tadd.f32 %f{i}, %f{i - 1}, 0f3F800000;" for i in range(1, count + 1)),
        f"\tst.global.f32 [%rd2], %f{count};",
        "\tret;",
    ]
    return "\n".join(
        [
            ".version 7.0",
            ".target sm_80",
            ".address_size 64",
            "",
            ".visible .entry chain(.param .u64 chain_param_0)",
            "{",
            f"\t.reg .f32 %f<{count + 1}>;",
            "\t.reg .b64 %rd<3>;",
            *body,
            "}",
            "",
        ]
    )


def gemm() -> str:
    """cuda-samples' cudaTensorCoreGemm at nvcc -O3 (fixtures/corpus/cuda-samples)."""
    return lzma.decompress(GEMM.read_bytes()).decode()


def peak_rss(
    ptxas: str, path: str, *args: str, limit_gb: float = 12, cpu_seconds: int = 300
) -> tuple[int, float, int]:
    """(peak RSS in kB, seconds, exit status: negative for a signal) of ``ptxas ARGS PATH``, alone,
    its address space capped at ``limit_gb`` GB and its CPU time at ``cpu_seconds``."""

    def limits() -> None:
        cap = int(limit_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))

    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        proc = subprocess.Popen(
            [ptxas, *args, path, "-o", os.path.join(tmp, "out.cubin")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=limits,
        )
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        return usage.ru_maxrss, time.monotonic() - start, proc.returncode


def arch_of(text: str) -> str:
    """The ``-arch=`` of the module's first ``.target``."""
    for line in text.splitlines():
        if line.strip().startswith(".target"):
            return "-arch=" + line.split()[1].rstrip(",")
    raise ValueError("no .target")


def attached(text: str, described: str) -> tuple[str, int]:
    """attach's output of ``text`` describing ``described`` ("auto", "all" or a count) registers per
    function, and how many registers it left out."""
    limit: int | str = described if described in ("auto", "all") else int(described)
    result = attach_ptx(text, output_name="/tmp/bench_attach_memory.debug.ptx", max_registers=limit)
    return result.text, sum(len(v) for v in result.left_out.values())


def measure(ptxas: str, name: str, text: str, described: list[str], limit_gb: float) -> None:
    """One line per ``described`` value: peak RSS, time, and the ratio to the input's ptxas -g."""
    arch = arch_of(text)
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "in.ptx")
        Path(source).write_text(text)
        base, seconds, rc = peak_rss(ptxas, source, "-g", arch, limit_gb=limit_gb)
        if rc != 0:
            print(f"{name}: refused (exit {rc}); --ptx-version lowers .version")
            return
        print(f"{name}: no debug info: {base / 1000:.0f} MB, {seconds:.2f} s")
        for d in described:
            out, left = attached(text, d)
            path = os.path.join(tmp, "out.ptx")
            Path(path).write_text(out)
            kb, seconds, rc = peak_rss(ptxas, path, "-g", arch, limit_gb=limit_gb)
            state = "" if rc == 0 else (" killed" if rc < 0 else f" exit {rc}")
            print(
                f"{name}: described {d} ({left} left out): {kb / 1000:.0f} MB, {seconds:.2f} s, "
                f"{kb / base:.2f}x{state}"
            )
        sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    """Measure (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ptxas", action="append", help="a ptxas to measure (repeatable; default: found)")
    parser.add_argument(
        "--chains", default="1000,2000,4000,8000,10000", help="chain lengths K, comma-separated"
    )
    parser.add_argument("--described", default="auto,0,250,1000", help="registers described: auto, all or N")
    parser.add_argument("--gemm", action="store_true", help="measure cudaTensorCoreGemm too")
    parser.add_argument("--limit-gb", type=float, default=12.0, help="address-space cap of each ptxas")
    parser.add_argument("--ptx-version", help="write this .version into the GEMM (8.0 for ptxas 12.0)")
    args = parser.parse_args(argv)
    described = [d for d in args.described.split(",") if d]
    for ptxas in args.ptxas or [find_ptxas().path]:
        print(f"ptxas {ptxas}")
        for k in (int(k) for k in args.chains.split(",") if k):
            measure(ptxas, f"chain K={k}", chain(k), described, args.limit_gb)
        if args.gemm:
            text = gemm()
            if args.ptx_version:
                text = re.sub(r"^\.version \S+", f".version {args.ptx_version}", text, count=1, flags=re.M)
            measure(ptxas, "cudaTensorCoreGemm", text, described, args.limit_gb)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
