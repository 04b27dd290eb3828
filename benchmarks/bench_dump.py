#!/usr/bin/env python3
"""Dump benchmark: ``ptxdwarf dump`` of the module's cubin, section by section, against
``llvm-dwarfdump`` printing the same sections, and its peak memory against the cubin's size.

The ratios of issue 31 (docs/performance.md), each of whole processes:

- ``--debug-info``, ``--debug-line``, ``--debug-loc`` and the three together: ``ptxdwarf dump
  --X M.cubin`` against ``llvm-dwarfdump --X M.cubin`` (target <= 2 for --debug-info,
  --debug-line and the three);
- ``json``: ``ptxdwarf dump --json M.cubin`` against ``ptxdwarf dump M.cubin`` (<= 3);
- ``memory``: the peak resident set of ``dump`` and of ``dump --json`` against the cubin's
  size (<= 3).

Pairs run as in ``bench_cli.py`` (a warm-up of each, then in turn, every other pair in the
other order; the median of the pair ratios is the figure). The peak resident set is the
process's own (``wait4``), of one run after the timed ones. Output goes to the null device.
The commands run on the core this process would (``PTXDWARF_PURE=1``: the pure-Python one).

    python3 benchmarks/bench_dump.py                     # every ratio, 3 pairs each
    python3 benchmarks/bench_dump.py debug-info memory --pairs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_cli import compile_bytecode, dwarfdump, load, pairs
from bench_parse import benchmark_module, cached_cubin, module_arguments

from ptxdwarf._native import describe

#: Each ratio: the options of both dumps (None: not against llvm-dwarfdump), and its target.
SECTIONS = {
    "debug-info": (["--debug-info"], "<= 2"),
    "debug-line": (["--debug-line"], "<= 2"),
    "debug-loc": (["--debug-loc"], "none"),
    "three": (["--debug-info", "--debug-line", "--debug-loc"], "<= 2"),
}
TARGETS = {**{name: target for name, (_, target) in SECTIONS.items()}, "json": "<= 3", "memory": "<= 3"}


def peak_rss(command: list[str]) -> int:
    """The peak resident set (bytes) of one run of ``command``, its output thrown away."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return usage.ru_maxrss * 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ratios", nargs="*", metavar="RATIO", help=f"{', '.join(TARGETS)} (default: all)")
    module_arguments(parser)
    parser.add_argument("--pairs", type=int, default=3, help="timed runs of each command (default 3)")
    parser.add_argument("--llvm-dwarfdump", metavar="PATH", help="the reader dump is timed against")
    args = parser.parse_args(argv)
    wanted = args.ratios or list(TARGETS)
    unknown = [r for r in wanted if r not in TARGETS]
    if unknown:
        parser.error(f"unknown ratio {unknown[0]} (choose from {', '.join(TARGETS)})")
    reader = args.llvm_dwarfdump or dwarfdump()

    path, text, _module, tool, arch = benchmark_module(args)
    compile_bytecode()
    me = [sys.executable, "-m", "ptxdwarf", "dump"]
    ratios: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "module.cubin"
        cubin.write_bytes(cached_cubin(args.cache, path, text, arch, tool.path))
        size = cubin.stat().st_size
        print(f"cubin        {size:,} bytes (of {path}, {tool.version}, {arch})")
        print(f"core         {describe()}")
        print(f"before       {load()}")
        for name in wanted:
            if name in SECTIONS:
                if reader is None:
                    print(f"{name:<12} skipped: no llvm-dwarfdump (--llvm-dwarfdump PATH)")
                    continue
                options = SECTIONS[name][0]
                a, b = [*me, *options, str(cubin)], [reader, *options, str(cubin)]
                against = f"llvm-dwarfdump {' '.join(options)}"
            elif name == "json":
                a, b, against = [*me, "--json", str(cubin)], [*me, str(cubin)], "ptxdwarf dump"
            else:
                for what, command in (
                    ("dump", [*me, str(cubin)]),
                    ("dump --json", [*me, "--json", str(cubin)]),
                ):
                    peak = peak_rss(command)
                    ratios[f"memory ({what})"] = f"{peak / size:.2f}"
                    print(f"{'memory':<12} {what}: {peak / 2**20:,.0f} MB peak, {peak / size:.2f}x the cubin")
                continue
            times_a, times_b = pairs(a, b, args.pairs)
            each = sorted(x / y for x, y in zip(times_a, times_b, strict=True))
            ratios[name] = f"{statistics.median(each):.2f}"
            print(
                f"{name:<12} {statistics.median(times_a):8.2f} s against {statistics.median(times_b):.2f} s "
                f"({against}), medians of {args.pairs}; "
                f"pair ratios {each[0]:.2f}-{each[-1]:.2f}"
            )
    print(f"after        {load()}")
    for name, ratio in ratios.items():
        target = TARGETS[name.split(" ")[0]]
        print(f"{name} ratio: {ratio} (target {target})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
