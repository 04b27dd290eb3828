#!/usr/bin/env python3
"""Check benchmark: ``ptxdwarf.check.check`` against ptxas alone on a large module.

``check`` compiles the PTX with ``ptxas -g`` and compares the debug info of the PTX
with the cubin's; what it adds over ptxas is reading both sides and comparing them.
This prints the time of ``ptxas -g`` alone, of ``check`` (ptxas included), and the
ratio check / ptxas (target <= 1.05, docs/performance.md).

The module is the one of ``bench_parse.py`` (``gen_large_module.py`` compiled with
``nvcc -G -ptx``, cached in ``benchmarks/.cache/``).

    python3 benchmarks/bench_check.py                 # 3000 functions, best of 2
    python3 benchmarks/bench_check.py --ptx some.ptx --runs 3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import ptxdwarf
from ptxdwarf.ptx import needs_compile_only

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_parse import benchmark_module, module_arguments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    module_arguments(parser)
    parser.add_argument("--runs", type=int, default=2, help="timed runs of each; the best counts (default 2)")
    args = parser.parse_args(argv)

    path, text, module, tool, arch = benchmark_module(args)

    ptxas_times = []
    check_times = []
    report = None
    for _ in range(args.runs):
        start = time.perf_counter()
        tool.compile(text, arch=arch, relocatable=needs_compile_only(module), filename=path.name)
        ptxas_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        report = ptxdwarf.check.check(text, filename=path.name, arch=arch, ptxas=tool)
        check_times.append(time.perf_counter() - start)
    assert report is not None
    t_ptxas, t_check = min(ptxas_times), min(check_times)
    print(f"module       {path}  ({len(text):,} chars PTX)")
    print(f"ptxas        {tool.path} ({tool.version}), {arch}")
    print(f"report       {report.summary()}")
    print(f"ptxas -g alone                 {t_ptxas:8.2f} s")
    print(f"check (ptxas + read + compare) {t_check:8.2f} s   (+{t_check - t_ptxas:.2f} s)")
    print(f"check ratio: {t_check / t_ptxas:.2f} (target <= 1.05)")
    return 0 if report.consistent else 1


if __name__ == "__main__":
    sys.exit(main())
