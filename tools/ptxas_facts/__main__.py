"""``python -m tools.ptxas_facts``: which measured ptxas facts hold for a ptxas (or several, side by side)."""

from __future__ import annotations

import argparse
import json
import sys

from ptxdwarf.cuda.ptxas import Ptxas, find_ptxas
from ptxdwarf.errors import PtxDwarfError

from . import CASES, Outcome, run_cases
from .case import Case


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _table(chosen: list[Case], tools: list[Ptxas], results: list[list[Outcome]]) -> list[str]:
    """A Markdown table: one row per case; per ptxas, whether the fact holds and what was seen."""
    if len(tools) == 1:
        lines = ["| case | fact | expected | observed | holds |", "|---|---|---|---|---|"]
        for o in results[0]:
            cells = [o.case, o.fact, o.expected, o.observed, "yes" if o.holds else "**no**"]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        return lines
    head = "| case | fact | expected | " + " | ".join(f"ptxas {t.version}" for t in tools) + " |"
    lines = [head, "|---|---|---|" + "---|" * len(tools)]
    for i, c in enumerate(chosen):
        seen = [("yes" if r[i].holds else "**no**") + ": " + _short(r[i].observed) for r in results]
        lines.append("| " + " | ".join(_cell(x) for x in [f"`{c.id}`", c.fact, c.expected, *seen]) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.ptxas_facts", description=__doc__)
    parser.add_argument(
        "--ptxas",
        action="append",
        help="a ptxas to measure; give it twice for a side-by-side table "
        "(default: $PTXAS, PATH, $CUDA_HOME, the nvidia-cuda-nvcc wheel)",
    )
    parser.add_argument(
        "--only", nargs="+", metavar="ID", help="cases whose id or fact starts with one of these"
    )
    parser.add_argument(
        "--timing", action="store_true", help="also run the timing cases (slow; run nothing else meanwhile)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per case and ptxas")
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
        tools = [find_ptxas(p) for p in (args.ptxas or [None])]
        results = [run_cases(t.path, chosen) for t in tools]
    except PtxDwarfError as exc:
        print(f"python -m tools.ptxas_facts: {exc}", file=sys.stderr)
        return 2
    if args.json:
        for tool, outcomes in zip(tools, results, strict=False):
            for o in outcomes:
                row = {
                    "case": o.case,
                    "fact": o.fact,
                    "expected": o.expected,
                    "observed": o.observed,
                    "holds": o.holds,
                }
                print(json.dumps({**row, "ptxas": tool.version}))
        return 0
    for tool in tools:
        print(f"ptxas {tool.version} ({tool.path})")
    print("\n".join(_table(chosen, tools, results)))
    print()
    for tool, outcomes in zip(tools, results, strict=False):
        print(f"ptxas {tool.version}: {sum(o.holds for o in outcomes)} of {len(outcomes)} hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
