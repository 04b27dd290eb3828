"""``python -m ptxdwarf.cuda.facts``: which measured ptxas facts hold for a ptxas."""

from __future__ import annotations

import argparse
import json
import sys

from ...errors import PtxDwarfError
from ..ptxas import find_ptxas
from . import CASES, run_cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ptxdwarf.cuda.facts", description=__doc__)
    parser.add_argument("--ptxas", help="the ptxas to measure (default: $PTXAS, PATH, $CUDA_HOME, the nvidia-cuda-nvcc wheel)")
    parser.add_argument("--only", nargs="+", metavar="ID", help="cases whose id or fact starts with one of these")
    parser.add_argument("--timing", action="store_true", help="also run the timing cases (slow; run nothing else meanwhile)")
    parser.add_argument("--json", action="store_true", help="one JSON object per case")
    parser.add_argument("--list", action="store_true", help="list the cases without running ptxas")
    args = parser.parse_args(argv)
    chosen = [c for c in CASES if args.timing or not c.timing]
    if args.only:
        chosen = [c for c in chosen if any(c.id.startswith(p) or c.fact.startswith(p) for p in args.only)]
    if args.list:
        for c in chosen:
            print(f"{c.id}\t{c.fact}\t{c.expected}")
        return 0
    try:
        tool = find_ptxas(args.ptxas)
        version = tool.version
        outcomes = run_cases(tool.path, chosen)
    except PtxDwarfError as exc:
        print(f"python -m ptxdwarf.cuda.facts: {exc}", file=sys.stderr)
        return 2
    if args.json:
        for o in outcomes:
            print(json.dumps({"case": o.case, "fact": o.fact, "expected": o.expected, "observed": o.observed, "holds": o.holds, "ptxas": version}))
    else:
        print(f"ptxas {version} ({tool.path})")
        print("| case | fact | expected | observed | holds |")
        print("|---|---|---|---|---|")
        for o in outcomes:
            cells = [o.case, o.fact, o.expected, o.observed, "yes" if o.holds else "**no**"]
            print("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        held = sum(o.holds for o in outcomes)
        print(f"\n{held} of {len(outcomes)} hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
