"""Record what every command prints and writes for every fixture, and compare with a record.

A restructuring must not change behaviour. This runs the command line in-process on each file
under ``fixtures/`` (every PTX, cubin, fatbin and host object, the corpus included) and keeps a
SHA-256 digest per (file, command) of the exit code, standard output, standard error and the
file written with ``-o``::

    python tools/behaviour.py --record tools/behaviour.json      # before the change
    python tools/behaviour.py --compare tools/behaviour.json     # after it: exit 1 on a difference
    python tools/behaviour.py --compare tools/behaviour.json --save /tmp/out   # keep the outputs

``check`` runs the real ptxas that ptxdwarf finds (the record names its version); a record made
with another ptxas is compared without the ``check`` and ``fix`` entries that depend on it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
TEXT_SUFFIXES = (".ptx", ".badptx")
BINARY_SUFFIXES = (".cubin", ".fatbin", ".o")
#: Where the commands write their outputs; a lock beside it keeps runs from sharing it.
OUTPUTS = "/tmp/ptxdwarf-behaviour"
VENV = sys.prefix.encode()
#: Commands whose result depends on the ptxas release found.
PTXAS_COMMANDS = ("check", "fix")

Command = tuple[str, ...]


def commands_for(path: Path) -> list[tuple[str, Command, bool]]:
    """(key, arguments, writes ``-o``) of every command run on ``path``."""
    rel = str(path.relative_to(ROOT))
    if path.suffix in BINARY_SUFFIXES:
        return [("dump", ("dump", rel), False), ("dump --json", ("dump", "--json", rel), False)]
    runs: list[tuple[str, Command, bool]] = [
        ("dump", ("dump", rel), False),
        ("dump --json", ("dump", "--json", rel), False),
        ("lint --json", ("lint", "--json", rel), False),
        ("check --json", ("check", "--json", rel), False),
        ("fix --json", ("fix", "--json", rel, "-o"), True),
        ("strip", ("strip", rel, "-o"), True),
        ("strip --keep-lines", ("strip", "--keep-lines", rel, "-o"), True),
        ("attach", ("attach", rel, "-o"), True),
        ("attach --replace", ("attach", "--replace", rel, "-o"), True),
    ]
    for style in ("readable", "nvcc", "compact"):
        runs.append((f"rewrite --style {style}", ("rewrite", "--style", style, rel), False))
    return runs


def fixture_files() -> list[Path]:
    return sorted(
        p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES + BINARY_SUFFIXES
    )


def _run_cli(args: Sequence[str]) -> tuple[int, bytes, bytes]:
    from ptxdwarf.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    old = sys.stdout, sys.stderr
    wrappers = (
        io.TextIOWrapper(out, encoding="utf-8", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", write_through=True),
    )
    sys.stdout, sys.stderr = wrappers
    try:
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        sys.stdout, sys.stderr = old
    result = code, out.getvalue(), err.getvalue()
    for wrapper in wrappers:
        wrapper.detach()
    return result


def run_file(rel: str, save: str | None) -> dict[str, str]:
    """Digest of each command's result on one fixture (run in a worker process)."""
    os.chdir(ROOT)
    path = ROOT / rel
    digests: dict[str, str] = {}
    # attach names the file it writes (its absolute path) in the line table: the place must be
    # the same in every run and checkout; runs take turns on it (see main).
    tmp = os.path.join(OUTPUTS, rel.replace("/", "_"))
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        for key, args, writes in commands_for(path):
            target = os.path.join(tmp, "out.ptx")
            argv = [*args, target] if writes else list(args)
            code, out, err = _run_cli(argv)
            written = b""
            if writes and os.path.exists(target):
                written = Path(target).read_bytes()
                os.unlink(target)
            # check --json names the ptxas it ran: the nvidia-cuda-nvcc wheel's is in the venv
            out = out.replace(b'"ptxas": "' + VENV, b'"ptxas": "<venv>')
            blob = b"\0".join([str(code).encode(), out, err, written])
            digests[key] = hashlib.sha256(blob).hexdigest()
            if save is not None:
                where = Path(save) / rel / key.replace(" ", "_")
                where.mkdir(parents=True, exist_ok=True)
                (where / "rc").write_text(f"{code}\n")
                (where / "stdout").write_bytes(out)
                (where / "stderr").write_bytes(err)
                if writes:
                    (where / "written").write_bytes(written)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return digests


def ptxas_version() -> str:
    from ptxdwarf.cuda.ptxas import find_ptxas

    try:
        exe = find_ptxas()
    except Exception as exc:  # recorded as the reason
        return f"none ({exc})"
    path = getattr(exe, "path", exe)
    proc = subprocess.run([str(path), "--version"], capture_output=True, text=True, check=False)
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else str(path)


def collect(jobs: int, save: str | None) -> Iterator[tuple[str, dict[str, str]]]:
    files = [str(p.relative_to(ROOT)) for p in fixture_files()]
    os.environ.setdefault("PTXDWARF_JOBS", "1")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_file, rel, save): rel for rel in files}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            rel = futures[future]
            if done % 25 == 0 or done == len(files):
                print(f"behaviour: {done}/{len(files)} files", file=sys.stderr)
            yield rel, future.result()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", metavar="JSON", help="write the digests to JSON")
    mode.add_argument("--compare", metavar="JSON", help="compare with the digests in JSON")
    parser.add_argument("--save", metavar="DIR", help="also keep every output under DIR")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if args.save:
        shutil.rmtree(args.save, ignore_errors=True)
    with open(OUTPUTS + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run (another checkout's) waits here
        results = dict(sorted(collect(args.jobs, args.save)))
    version = ptxas_version()
    if args.record:
        doc = {"format": "ptxdwarf-behaviour/1", "ptxas": version, "files": results}
        Path(args.record).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        print(f"behaviour: recorded {sum(map(len, results.values()))} results of {len(results)} files")
        return 0
    record = json.loads(Path(args.compare).read_text())
    same_ptxas = record["ptxas"] == version
    differences = 0
    for rel in sorted(set(record["files"]) | set(results)):
        old, new = record["files"].get(rel), results.get(rel)
        if old is None or new is None:
            print(f"{rel}: {'new file' if old is None else 'file gone'}")
            differences += 1
            continue
        for key in sorted(set(old) | set(new)):
            if not same_ptxas and key.split()[0] in PTXAS_COMMANDS:
                continue
            if old.get(key) != new.get(key):
                print(f"{rel}: {key}: differs")
                differences += 1
    note = "" if same_ptxas else f" (check and fix not compared: recorded with {record['ptxas']})"
    print(f"behaviour: {differences} differences{note}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
