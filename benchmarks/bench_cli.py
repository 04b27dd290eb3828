#!/usr/bin/env python3
"""Command-line benchmark: whole ``ptxdwarf`` processes against the tools they stand beside.

Four ratios of docs/performance.md, each of whole processes (start-up, imports and exit
included, as a user or a build runs them):

- ``lint``: ``ptxdwarf lint M.ptx`` against ``ptxas -g M.ptx`` (target <= 0.10);
- ``check``: ``ptxdwarf check M.ptx`` (ptxas included) against ``ptxas -g M.ptx`` (<= 1.05), with
  ``-c`` where check uses it (a module that declares a function it does not define);
- ``dump``: ``ptxdwarf dump M.cubin`` against ``llvm-dwarfdump --debug-info M.cubin`` (<= 3);
- ``stats``: ``ptxdwarf stats M.cubin`` (of the cubin ``ptxas -g`` makes: of the PTX, stats
  runs ptxas itself) against ``ptxas -g M.ptx`` (<= 0.2).

The two commands of a ratio run in turn, after one warm-up run of each, the order of each
pair the other way round from the pair before (A B, B A, A B, ...), and the ratio is taken
pair by pair: a host whose speed drifts during the run still gives a meaningful figure, and
neither command is always the one that runs first (on the 2-core host of
docs/performance.md, ptxas alone took from 28 s down to 16 s within four rounds of a fixed
order). The median of the pairs is the figure, the range shows the noise. Output goes to the null device. The load average is printed before and after.
The package's bytecode is written first, as installing a wheel writes it (an editable checkout
under ``PYTHONDONTWRITEBYTECODE=1`` would compile every module in every timed run).

The module is the one of ``bench_parse.py`` (``gen_large_module.py`` compiled with
``nvcc -G -ptx``, cached in ``benchmarks/.cache/``) and its ``ptxas -g`` cubin.

    python3 benchmarks/bench_cli.py                        # all four, 5 pairs each
    python3 benchmarks/bench_cli.py lint --pairs 9
    python3 benchmarks/bench_cli.py --ptx some.ptx check
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_parse import benchmark_module, cached_cubin, module_arguments

from ptxdwarf.ptx import needs_compile_only

TARGETS = {"lint": "<= 0.10", "check": "<= 1.05", "dump": "<= 3", "stats": "<= 0.2"}


def timed(command: list[str]) -> float:
    """Wall seconds of one run of ``command``, its output thrown away."""
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def pairs(a: list[str], b: list[str], count: int) -> tuple[list[float], list[float]]:
    """The wall seconds of ``count`` runs of each, in turn, after a warm-up run of each; every
    other pair runs ``b`` first."""
    timed(a)
    timed(b)
    times_a, times_b = [], []
    for i in range(count):
        if i % 2:
            times_b.append(timed(b))
            times_a.append(timed(a))
        else:
            times_a.append(timed(a))
            times_b.append(timed(b))
    return times_a, times_b


def compile_bytecode() -> None:
    """Write the package's bytecode as installing it from a wheel does, so that the timed
    processes do not compile its modules each time (an editable checkout where
    ``PYTHONDONTWRITEBYTECODE`` is set: about 0.1 s of each run)."""
    import compileall

    import ptxdwarf

    compileall.compile_dir(str(Path(ptxdwarf.__file__).parent), quiet=1)


def load() -> str:
    try:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "load average unknown"


def dwarfdump() -> str | None:
    """llvm-dwarfdump on PATH, else the newest of Debian's ``/usr/lib/llvm-*``."""
    found = shutil.which("llvm-dwarfdump") or shutil.which("llvm-dwarfdump-14")
    if found is None:
        installed = sorted(Path("/usr/lib").glob("llvm-*/bin/llvm-dwarfdump"), reverse=True)
        found = str(installed[0]) if installed else None
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "commands", nargs="*", metavar="COMMAND", help="lint, check, dump, stats (default: all)"
    )
    module_arguments(parser)
    parser.add_argument("--pairs", type=int, default=5, help="timed runs of each command (default 5)")
    parser.add_argument("--llvm-dwarfdump", metavar="PATH", help="the reader dump is timed against")
    args = parser.parse_args(argv)
    commands = args.commands or list(TARGETS)
    unknown = [c for c in commands if c not in TARGETS]
    if unknown:
        parser.error(f"unknown command {unknown[0]} (choose from {', '.join(TARGETS)})")

    path, text, module, tool, arch = benchmark_module(args)
    compile_bytecode()
    me = [sys.executable, "-m", "ptxdwarf"]
    print(f"module       {path}  ({len(text):,} chars PTX)")
    print(f"ptxas        {tool.path} ({tool.version}), {arch}")
    print(f"before       {load()}")
    ratios: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        # ptxas as check runs it: -c only where the module declares a function it does not define
        relocatable = ["-c"] if needs_compile_only(module) else []
        ptxas = [
            tool.path,
            "-g",
            f"-arch={arch}",
            *relocatable,
            str(path),
            "-o",
            str(Path(tmp) / "out.cubin"),
        ]
        for name in commands:
            if name == "dump":
                reader = args.llvm_dwarfdump or dwarfdump()
                if reader is None:
                    print("dump         skipped: no llvm-dwarfdump (--llvm-dwarfdump PATH)")
                    continue
                cubin = Path(tmp) / "module.cubin"
                cubin.write_bytes(cached_cubin(args.cache, path, text, arch, tool.path))
                a, b = [*me, "dump", str(cubin)], [reader, "--debug-info", str(cubin)]
            elif name == "stats":
                cubin = Path(tmp) / "module.cubin"
                cubin.write_bytes(cached_cubin(args.cache, path, text, arch, tool.path))
                a, b = [*me, "stats", str(cubin)], ptxas
            else:
                a, b = [*me, name, str(path)], ptxas
            times_a, times_b = pairs(a, b, args.pairs)
            each = sorted(x / y for x, y in zip(times_a, times_b, strict=True))
            ratios[name] = statistics.median(each)
            print(
                f"{name:<12} {statistics.median(times_a):8.2f} s against {statistics.median(times_b):.2f} s "
                f"({' '.join(b[:1])}), medians of {args.pairs}; pair ratios {each[0]:.2f}-{each[-1]:.2f}"
            )
    print(f"after        {load()}")
    for name, ratio in ratios.items():
        print(f"{name} ratio: {ratio:.2f} (target {TARGETS[name]}, median of {args.pairs} pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
