#!/usr/bin/env python3
"""Parse benchmark: ptxdwarf reading PTX text vs pyelftools reading the cubin.

Measures, in one run, the parse and size ratios of docs/performance.md:

- Parse: the time ptxdwarf takes to read every DIE of a large ``nvcc -G``
  module from its PTX text (``ptxdwarf.read(text=text)`` plus a walk of
  ``info.iter_dies()`` touching each attribute value), against the time
  pyelftools takes to read the same DIEs from the cubin ``ptxas -g`` makes of
  that PTX (``ELFFile(...).get_dwarf_info(relocate_dwarf_sections=False)``,
  every unit's ``iter_DIEs()``, each DIE's ``attributes``). Both start from
  data in memory (the PTX ``str``, the cubin ``bytes``); each run is a fresh
  parse; the best of N runs counts. Target: ratio <= 0.2.
- A breakdown of ptxdwarf's time: text -> section blocks (``parse_ptx``), blocks -> the
  section images the DIEs need, images -> DIE tree (``decode_module``), and the walk.
- Size: PTX characters per DWARF byte of the debug ``.section`` blocks as
  nvcc wrote them and as ``ptxdwarf.rewrite`` writes them in each style
  (DWARF bytes: the section images of ``ptxdwarf.dwarf.encode_sections``).
  Target: readable < 3.0.

The module is made by ``gen_large_module.py`` (``nvcc -G -ptx``) and compiled
with ``ptxas -g``; both are cached (default ``benchmarks/.cache/``) and reused
on later runs. Needs nvcc (unless ``--ptx`` is given) and ptxas.

    python3 benchmarks/bench_parse.py                    # 3000 functions, best of 3
    python3 benchmarks/bench_parse.py --functions 300 --runs 5
    python3 benchmarks/bench_parse.py --ptx some.ptx     # an existing PTX file

Stdlib, ptxdwarf and pyelftools only.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import io
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from elftools.elf.elffile import ELFFile

import ptxdwarf
import ptxdwarf.cuda
import ptxdwarf.dwarf
import ptxdwarf.files
import ptxdwarf.ptx
from ptxdwarf.cuda.ptxas import Ptxas, find_ptxas

HERE = Path(__file__).resolve().parent
STYLES = ("nvcc", "readable", "compact")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- inputs -----------------------------------------------------------------


def generated_ptx(cache: Path, functions: int, arch: str) -> Path:
    """The cached nvcc -G PTX of gen_large_module.py, made if missing."""
    ptx = cache / f"large-f{functions}-{arch}.ptx"
    if ptx.exists():
        log(f"using cached {ptx}")
        return ptx
    cache.mkdir(parents=True, exist_ok=True)
    tmp = ptx.with_name(ptx.stem + ".partial.ptx")
    cmd = [
        sys.executable,
        str(HERE / "gen_large_module.py"),
        "--functions",
        str(functions),
        "--arch",
        arch,
        "--source",
        str(ptx.with_suffix(".cu")),
        "--ptx",
        str(tmp),
    ]
    log("generating: " + " ".join(cmd))
    if subprocess.run(cmd).returncode != 0:
        sys.exit("bench_parse: error: gen_large_module.py failed")
    tmp.replace(ptx)
    return ptx


def cached_cubin(cache: Path, ptx_path: Path, text: str, arch: str, ptxas_path: str | None) -> bytes:
    """The ``ptxas -g`` cubin of ``text``, cached under a hash of the text."""
    digest = hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    stem = ptx_path.stem if ptx_path.stem.endswith(arch) else f"{ptx_path.stem}-{arch}"
    cubin = cache / f"{stem}-{digest}.cubin"
    if cubin.exists():
        log(f"using cached {cubin}")
        return cubin.read_bytes()
    ptxas = find_ptxas(ptxas_path)
    log(f"compiling with {ptxas.path} -g -arch={arch} ...")
    t0 = time.perf_counter()
    result = ptxas.compile(text, arch=arch, filename=ptx_path.name)
    log(f"ptxas took {time.perf_counter() - t0:.1f} s; cubin {len(result.cubin)} bytes")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cubin.with_name(cubin.name + ".partial")
    tmp.write_bytes(result.cubin)
    tmp.replace(cubin)
    return result.cubin


# --- the two readers ----------------------------------------------------------


def ptxdwarf_read(text: str) -> int:
    """Read every DIE from PTX text; the number of DIEs."""
    info = ptxdwarf.read(text=text)
    n = 0
    for die in info.iter_dies():
        n += 1
        for attr in die.attributes:
            _ = attr.value
    return n


def pyelftools_read(cubin: bytes) -> int:
    """Read every DIE from the cubin; the number of non-null DIEs."""
    dwarf = ELFFile(io.BytesIO(cubin)).get_dwarf_info(relocate_dwarf_sections=False)
    n = 0
    for cu in dwarf.iter_CUs():
        for die in cu.iter_DIEs():
            if die.is_null():
                continue
            n += 1
            for attr in die.attributes.values():
                _ = attr.value
    return n


def best_of(runs: int, fn: Callable[..., Any], *args: Any) -> tuple[float, float, Any]:
    """(best seconds, best CPU seconds, last result) of ``runs`` calls, collecting
    garbage before each."""
    best = best_cpu = float("inf")
    result = None
    for _ in range(runs):
        result = None
        gc.collect()
        c0 = time.process_time()
        t0 = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best, best_cpu, result


def breakdown(text: str, runs: int) -> dict[str, float]:
    """Best-of-``runs`` times of ptxdwarf's stages, each on a fresh parse."""
    best = {"parse": float("inf"), "images": float("inf"), "decode": float("inf"), "walk": float("inf")}
    for _ in range(runs):
        gc.collect()
        t0 = time.perf_counter()
        module = ptxdwarf.ptx.parse_ptx(text)
        t1 = time.perf_counter()
        images = module.images(debug_only=True)
        for name in (".debug_abbrev", ".debug_info", ".debug_str"):  # those decoding the DIEs reads
            if name in images:
                images[name]
        t2 = time.perf_counter()
        info = ptxdwarf.ptx.debug.decode_module(module)  # the images read above are kept by the module
        t3 = time.perf_counter()
        for die in info.iter_dies():
            for attr in die.attributes:
                _ = attr.value
        t4 = time.perf_counter()
        for key, dt in (("parse", t1 - t0), ("images", t2 - t1), ("decode", t3 - t2), ("walk", t4 - t3)):
            best[key] = min(best[key], dt)
        del module, info, images
    return best


# --- sizes --------------------------------------------------------------------


def debug_block_chars(module: ptxdwarf.ptx.PtxModule) -> int:
    """Characters of the ``.section .debug_* { ... }`` blocks."""
    return sum(b.end - b.start for b in module.sections if b.name.startswith(".debug_"))


def sizes(text: str) -> tuple[int, int, dict[str, int]]:
    """(DWARF bytes as read, DWARF bytes as encoded, {style: debug block characters})."""
    module = ptxdwarf.ptx.parse_ptx(text)
    read_bytes = sum(len(img.data) for name, img in module.images().items() if name.startswith(".debug_"))
    info = ptxdwarf.ptx.debug.decode_module(module)
    encoded = sum(len(img.data) for img in ptxdwarf.dwarf.encode_sections(info).values())
    chars = {"original": debug_block_chars(module)}
    del module, info
    for style in STYLES:
        rewritten = ptxdwarf.rewrite(text, style=style)
        chars[style] = debug_block_chars(ptxdwarf.ptx.parse_ptx(rewritten))
        del rewritten
    return read_bytes, encoded, chars


# --- main -----------------------------------------------------------------------


def module_arguments(ap: argparse.ArgumentParser) -> None:
    """The options that choose the benchmark module and the ptxas (shared by the scripts)."""
    ap.add_argument(
        "--functions", type=int, default=3000, help="device functions of the generated module (default 3000)"
    )
    ap.add_argument("--ptx", type=Path, help="use this PTX file instead of generating one")
    ap.add_argument("--arch", default="sm_75", help="nvcc and ptxas -arch (default sm_75)")
    ap.add_argument(
        "--cache",
        type=Path,
        default=HERE / ".cache",
        help="where the generated PTX and the cubins are kept (default benchmarks/.cache)",
    )
    ap.add_argument("--ptxas", help="ptxas to use (default: ptxdwarf.cuda.ptxas.find_ptxas())")


def benchmark_module(args: argparse.Namespace) -> tuple[Path, str, ptxdwarf.ptx.PtxModule, Ptxas, str]:
    """The module the options of :func:`module_arguments` choose (generated if need be), its
    text, parsed module, the ptxas and the ``-arch`` to compile it with."""
    args.cache.mkdir(parents=True, exist_ok=True)
    path = args.ptx or generated_ptx(args.cache, args.functions, args.arch)
    text = path.read_text()
    tool = find_ptxas(args.ptxas)
    module = ptxdwarf.ptx.parse_ptx(text, str(path))
    arch, _note = tool.choose_arch(module.target, args.arch)
    return path, text, module, tool, arch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    module_arguments(ap)
    ap.add_argument(
        "--runs", type=int, default=3, help="timed runs of each reader; the best counts (default 3)"
    )
    ap.add_argument("--no-sizes", action="store_true", help="skip the size ratios (three rewrites)")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.functions < 1:
        ap.error("--runs and --functions must be >= 1")

    ptx_path = args.ptx if args.ptx else generated_ptx(args.cache, args.functions, args.arch)
    text = ptxdwarf.files.load_text(ptx_path)
    cubin = cached_cubin(args.cache, ptx_path, text, args.arch, args.ptxas)

    log(f"timing ptxdwarf ({args.runs} runs) ...")
    t_ptx, cpu_ptx, n_ptx = best_of(args.runs, ptxdwarf_read, text)
    log(f"timing pyelftools ({args.runs} runs) ...")
    t_elf, cpu_elf, n_elf = best_of(args.runs, pyelftools_read, cubin)
    log("timing ptxdwarf stages ...")
    stages = breakdown(text, args.runs)
    if not args.no_sizes:
        log("measuring sizes (rewriting in each style) ...")
        read_bytes, dwarf_bytes, chars = sizes(text)
    else:
        module = ptxdwarf.ptx.parse_ptx(text)
        read_bytes = dwarf_bytes = sum(
            len(img.data) for name, img in module.images().items() if name.startswith(".debug_")
        )
        chars = {"original": debug_block_chars(module)}
        del module

    ratio = t_ptx / t_elf
    ok = n_ptx == n_elf
    print(f"module       {ptx_path}  ({len(text):,} chars PTX, {len(cubin):,} bytes cubin)")
    if args.no_sizes:
        print(f"DWARF        {read_bytes:,} bytes (debug sections as read from the PTX)")
    else:
        print(
            f"DWARF        {dwarf_bytes:,} bytes (debug sections as encoded)"
            + ("" if read_bytes == dwarf_bytes else f"; {read_bytes:,} as read from the PTX")
        )
    print(
        f"DIEs         ptxdwarf {n_ptx:,}   pyelftools {n_elf:,} (non-null)   "
        + ("same" if ok else "MISMATCH")
    )
    print()
    print(f"{'read every DIE (best of %d)' % args.runs:<40}{'seconds':>9}{'DIEs/s':>10}{'CPU s':>9}")
    print(f"{'  ptxdwarf, PTX text':<40}{t_ptx:9.3f}{n_ptx / t_ptx:10,.0f}{cpu_ptx:9.3f}")
    print(f"{'  pyelftools, cubin':<40}{t_elf:9.3f}{n_elf / t_elf:10,.0f}{cpu_elf:9.3f}")
    print(f"{'ptxdwarf stages (best of %d each)' % args.runs:<40}{'seconds':>9}{'share':>10}")
    total = sum(stages.values())
    for key, label in (
        ("parse", "  text -> section blocks (parse_ptx)"),
        ("images", "  blocks -> DIE section images"),
        ("decode", "  images -> DIE tree (decode_module)"),
        ("walk", "  walk iter_dies + attributes"),
    ):
        print(f"{label:<40}{stages[key]:9.3f}{stages[key] / total:10.0%}")
    print()
    print(f"{'size: PTX chars per DWARF byte':<40}{'chars':>12}{'ratio':>8}")
    for key in ("original", *STYLES):
        if key not in chars:
            continue
        label = "  nvcc as written" if key == "original" else f"  rewrite_ptx style={key}"
        note = "   (target < 3.0)" if key == "readable" else ""
        print(f"{label:<40}{chars[key]:12,}{chars[key] / dwarf_bytes:8.2f}{note}")
    print()
    print(f"parse ratio: {ratio:.2f} (target <= 0.2); in CPU time {cpu_ptx / cpu_elf:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
