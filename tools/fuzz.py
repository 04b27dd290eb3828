"""The long-running fuzzer: mutated PTX text, DWARF bytes and cubin/fatbin/host-object bytes
through the library's entry points; anything but success or a ``PtxDwarfError`` is a finding.

    python3 tools/fuzz.py --budget 1000000 --jobs 2 --seed 1 --out /tmp/fuzz-findings
    python3 tools/fuzz.py --seconds 60                # a short run

Each input runs through reading, ``dump_text``, ``dump_json``, ``lint``, ``rewrite``,
``fix`` and ``strip`` (PTX) or ``read_all`` and the dumps (binaries); one in
``--attach-every`` PTX inputs also through ``attach_ptx`` and ``remap_paths``, and one in
``--check-every`` through ``check`` (ptxas -g and the comparison with its cubin; ptxas's own
time is not counted against ``--timeout``). A finding is an exception that is not a ``PtxDwarfError`` subclass, an
input that takes more than ``--timeout`` CPU seconds (a hang or a blow-up) or more than
``--memory`` MB, or an error message of more than one line. Each finding's input is written
to ``--out`` with its traceback; keep the minimised input under ``fixtures/regressions/`` once
the bug is fixed. The seeds are the
repository's fixtures (PTX files under 64 KB, cubins, fatbins, host objects).

With ``PTXDWARF_NATIVE_CHECK=1`` every call of a native kernel also runs its Python reference,
and a difference is a finding (``tools/sanitize.sh`` runs it so, under the sanitizers).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import multiprocessing
import os
import random
import re
import resource
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ptxdwarf  # noqa: E402
import ptxdwarf.cuda  # noqa: E402
import ptxdwarf.dump  # noqa: E402
import ptxdwarf.repair  # noqa: E402
from ptxdwarf.autodebug import attach_ptx  # noqa: E402
from ptxdwarf.cuda.cubin import register_map  # noqa: E402
from ptxdwarf.errors import PtxDwarfError  # noqa: E402
from ptxdwarf.lint import lint  # noqa: E402
from ptxdwarf.visibility import register_locations  # noqa: E402

EXTREMES = [
    0,
    1,
    2,
    7,
    8,
    127,
    128,
    255,
    256,
    65535,
    65536,
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**32,
    2**63,
    2**64 - 1,
]
DIRECTIVES = [".b8", ".b16", ".b32", ".b64", ".byte", ".4byte", ".quad"]
SNIPPETS = [
    ".section .debug_info {",
    "}",
    "{",
    ".b32 .debug_abbrev",
    ".b64 $L__func_begin0",
    ".b8 0",
    "$L__x:",
    ".b32 $L__x-$L__y",
    ".b64 .debug_loc+4",
    '.file 1 "a.cu"',
    ".loc 1 0 0",
    "@@DWARF .byte 1",
    '@@DWARF .section .debug_abbrev, "",@progbits',
    ".reg .pred p;",
    ".target sm_75, debug",
    ".version 1.4",
    ".address_size 32",
    "\u00e9",
    "\udcff",
    "\r",
    "/*",
    "*/",
    "//",
    ".b8 1,",
    ",",
    "-1",
    "0x",
    "99999999999999999999",
]


class Hang(Exception):
    """The per-input time limit passed: CPU seconds of the worker (``ITIMER_PROF``), so that a
    worker starved by a busy machine is not taken for one stuck in a loop."""


def _alarm(_signum: int, _frame: object) -> None:
    raise Hang()


class BlowUp(Exception):
    """One input made the worker grow by more than ``--memory`` MB."""


def _blow_up(_signum: int, _frame: object) -> None:
    raise BlowUp()


def _rss() -> int:
    """The worker's resident memory, in bytes."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize()


class _MemoryWatch:
    """A thread that interrupts the main thread (``SIGUSR1``, raising :class:`BlowUp`) when
    the resident memory grows by more than ``limit`` bytes over what it was when the current
    input started: a blow-up becomes a finding with its input, not the kernel's OOM kill."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.base: int | None = None
        signal.signal(signal.SIGUSR1, _blow_up)
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        main = threading.main_thread().ident
        assert main is not None
        while True:
            time.sleep(0.05)
            base = self.base
            if base is not None and _rss() > base + self.limit:
                self.base = None
                signal.pthread_kill(main, signal.SIGUSR1)


def seeds() -> tuple[list[str], list[bytes]]:
    """(PTX texts, binaries) from the repository's fixtures."""
    texts, binaries = [], []
    for path in sorted((ROOT / "fixtures").rglob("*")):
        if not path.is_file() or path.stat().st_size > 64_000:
            continue
        if path.suffix in (".ptx", ".badptx"):
            texts.append(path.read_bytes().decode("utf-8", "surrogateescape"))
        elif path.suffix in (".cubin", ".fatbin", ".o"):
            binaries.append(path.read_bytes())
    return texts, binaries


# --- mutators ------------------------------------------------------------------------------------


def mutate_text(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 4)):
        if not lines:
            lines = [""]
        i = rng.randrange(len(lines))
        op = rng.randrange(9)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2:
            lines.insert(i, rng.choice(SNIPPETS))
        elif op == 3:  # a number on the line becomes an extreme one
            nums = list(re.finditer(r"(?<![\w$.])\d+", lines[i]))
            if nums:
                m = rng.choice(nums)
                lines[i] = lines[i][: m.start()] + str(rng.choice(EXTREMES)) + lines[i][m.end() :]
        elif op == 4:  # a DWARF byte in a .b8 list changes
            nums = list(re.finditer(r"(?<=[ ,])\d+", lines[i])) if ".b8" in lines[i] else []
            if nums:
                m = rng.choice(nums)
                lines[i] = lines[i][: m.start()] + str(rng.randrange(256)) + lines[i][m.end() :]
        elif op == 5:
            lines[i] = lines[i].replace(rng.choice(DIRECTIVES), rng.choice(DIRECTIVES), 1)
        elif op == 6 and lines[i]:  # one character changes
            j = rng.randrange(len(lines[i]))
            lines[i] = (
                lines[i][:j]
                + chr(rng.choice([0x20, 0x2C, 0x7B, 0x7D, 0x25, 0x24, 0x2E, 0xE9, 0]))
                + lines[i][j + 1 :]
            )
        elif op == 7:  # a block of lines moves
            j = rng.randrange(len(lines))
            k = min(len(lines), j + rng.randint(1, 20))
            block = lines[j:k]
            del lines[j:k]
            at = rng.randrange(len(lines) + 1)
            lines[at:at] = block
        else:
            lines = lines[: rng.randrange(len(lines) + 1)]
    return "\n".join(lines)


def mutate_binary(rng: random.Random, raw: bytes) -> bytes:
    data = bytearray(raw)
    for _ in range(rng.randint(1, 6)):
        if not data:
            break
        op = rng.randrange(5)
        i = rng.randrange(len(data))
        if op == 0:
            data[i] = rng.randrange(256)
        elif op == 1:  # a header-sized field takes an extreme value
            width = rng.choice([2, 4, 8])
            value = rng.choice(EXTREMES) % (1 << (8 * width))
            data[i : i + width] = value.to_bytes(width, "little")
        elif op == 2 and len(data) > 64:  # a field of the ELF or fatbin header
            j = rng.randrange(64)
            data[j] = rng.randrange(256)
        elif op == 3:
            del data[i:]
        else:
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(data)


# --- targets ---------------------------------------------------------------------------------------


def run_text(text: str, rng: random.Random, attach: bool, check: bool = False) -> None:
    try:
        info = ptxdwarf.read(text=text, filename="fuzz.ptx").load_all()
        ptxdwarf.dump.dump_text(info)
        ptxdwarf.dump.dump_json(info)
    except PtxDwarfError as exc:
        _one_line(exc)
    try:
        lint(text, filename="fuzz.ptx")
    except PtxDwarfError as exc:
        _one_line(exc)
    try:
        ptxdwarf.rewrite(text, style=rng.choice(["nvcc", "readable", "compact"]), filename="fuzz.ptx")
    except PtxDwarfError as exc:
        _one_line(exc)
    try:
        ptxdwarf.fix.fix(
            text,
            filename="fuzz.ptx",
            ptxas_version=rng.choice([None, "13.0", "13.5"]),
            max_version=rng.choice([None, (6, 0)]),
        )
    except PtxDwarfError as exc:
        _one_line(exc)
    try:
        ptxdwarf.strip.strip(text, keep_lines=rng.random() < 0.5, filename="fuzz.ptx")
    except PtxDwarfError as exc:
        _one_line(exc)
    if attach:
        try:
            attach_ptx(text, output_name="fuzz.ptx", filename="fuzz.ptx", replace=True)
        except PtxDwarfError as exc:
            _one_line(exc)
        try:
            ptxdwarf.repair.remap_paths(text, [("/", "/remapped/"), ("t", "x")], filename="fuzz.ptx")
        except PtxDwarfError as exc:
            _one_line(exc)
    if check:
        try:
            report = ptxdwarf.check.check(text, filename="fuzz.ptx")
            report.summary()
            report.to_json()
        except PtxDwarfError as exc:
            _one_line(exc)


def run_binary(raw: bytes, tmp: Path) -> None:
    path = tmp / "fuzz.bin"
    path.write_bytes(raw)
    try:
        for _label, info in ptxdwarf.read_all(path):
            info.load_all()
            ptxdwarf.dump.dump_text(info)
            ptxdwarf.dump.dump_json(info)
            maps = register_map(info)
            if maps is not None:
                for location in register_locations(info, maps):
                    location.spans()
    except PtxDwarfError as exc:
        _one_line(exc)


def _one_line(exc: PtxDwarfError) -> None:
    if "\n" in str(exc):
        raise AssertionError(f"error message of several lines: {str(exc)[:200]!r}")


# --- the loop --------------------------------------------------------------------------------------


def worker(index: int, args: argparse.Namespace, counter: Synchronized[int]) -> None:
    if args.nice:
        os.nice(args.nice)
    rng = random.Random(args.seed * 1000 + index)
    texts, binaries = seeds()
    out = Path(args.out)
    signal.signal(signal.SIGPROF, _alarm)
    watch = _MemoryWatch(args.memory * 1024 * 1024) if args.memory else None
    deadline = time.monotonic() + args.seconds if args.seconds else None
    done = 0
    with tempfile.TemporaryDirectory(prefix="ptxdwarf-fuzz-") as tmpdir:
        tmp = Path(tmpdir)
        while (args.budget is None or done < args.budget // args.jobs) and (
            deadline is None or time.monotonic() < deadline
        ):
            binary = binaries and rng.random() < args.binary_share
            payload: str | bytes
            task: Callable[[], None]
            if binary:
                payload = mutate_binary(rng, rng.choice(binaries))
                task = functools.partial(run_binary, payload, tmp)
            else:
                payload = mutate_text(rng, rng.choice(texts))
                attach = args.attach_every > 0 and done % args.attach_every == 0
                check = args.check_every > 0 and done % args.check_every == 0
                task = functools.partial(run_text, payload, rng, attach, check)
            report = None
            try:
                if watch is not None:
                    watch.base = _rss()
                signal.setitimer(signal.ITIMER_PROF, args.timeout)
                try:
                    task()
                finally:
                    signal.setitimer(signal.ITIMER_PROF, 0)
                    if watch is not None:
                        watch.base = None
            except Hang:
                report = f"hang (over {args.timeout:g} CPU seconds)\n"
            except BlowUp:
                report = f"memory blow-up (over {args.memory} MB more than before the input)\n"
            except Exception:  # every other exception is what the fuzzer looks for
                report = traceback.format_exc()
            if report is not None:
                _save(out, payload, report)
            done += 1
            if done % 500 == 0:
                with counter.get_lock():
                    counter.value += 500
                if args.progress:
                    (out.parent / f"{out.name}.progress-{index}").write_text(f"{done}\n")
    with counter.get_lock():
        counter.value += done % 500


def _save(out: Path, payload: str | bytes, report: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    raw = payload.encode("utf-8", "surrogateescape") if isinstance(payload, str) else payload
    digest = hashlib.sha1(raw).hexdigest()[:12]
    (out / f"{digest}.input").write_bytes(raw)
    (out / f"{digest}.txt").write_text(report)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=None, help="inputs in all (default: until --seconds)")
    parser.add_argument(
        "--seconds", type=float, default=None, help="stop after this long (default 60 without --budget)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="CPU seconds one input may take (default 10)"
    )
    parser.add_argument(
        "--binary-share", type=float, default=0.25, help="share of binary inputs (default 0.25)"
    )
    parser.add_argument("--attach-every", type=int, default=20, help="attach every Nth PTX input (0: never)")
    parser.add_argument(
        "--check-every", type=int, default=100, help="check (runs ptxas) every Nth PTX input (0: never)"
    )
    parser.add_argument("--nice", type=int, default=0, help="lower the workers' priority by this much")
    parser.add_argument(
        "--memory",
        type=int,
        default=3072,
        help="MB of resident memory one input may add to a worker (default 3072; 0: no limit)",
    )
    parser.add_argument("--out", default="fuzz-findings", help="where findings go (default ./fuzz-findings)")
    parser.add_argument(
        "--progress", action="store_true", help="write each worker's count beside --out every 500 inputs"
    )
    args = parser.parse_args(argv)
    if args.budget is None and args.seconds is None:
        args.seconds = 60.0
    counter = multiprocessing.Value("q", 0)
    start = time.monotonic()
    procs = [multiprocessing.Process(target=worker, args=(i, args, counter)) for i in range(args.jobs)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    died = [i for i, p in enumerate(procs) if p.exitcode != 0]
    if died:
        print(
            f"worker(s) {died} stopped with an error; their last counts are not in the total", file=sys.stderr
        )
    wall = time.monotonic() - start
    found = sorted(Path(args.out).glob("*.txt")) if Path(args.out).exists() else []
    print(
        f"{counter.value} inputs in {wall:.0f} s ({counter.value / max(wall, 1e-9):.0f}/s, {args.jobs} jobs, "
        f"seed {args.seed}, load {os.getloadavg()[0]:.2f}): {len(found)} finding(s) in {args.out}"
    )
    return 1 if found or died else 0


if __name__ == "__main__":
    sys.exit(main())
