"""Random kernels against the label-at-line-zero rule: every label of each, as ptxas places it,
against :func:`~ptxdwarf.ptx.placement.labels_dropped`'s prediction."""

from __future__ import annotations

import random

from ....ptx.placement import labels_dropped
from ....ptx.reader import parse_ptx
from .. import harness as h
from ..harness import ABBREV, Run, die, info, module
from ._base import case
from .dwarf import _CALLEE

#: The functions the random kernels call.
_CALLEES = (
    _CALLEE
    + """.func (.param .b32 r) _Z1gi(.param .b32 a)
{
\t.reg .b32 %r<2>;
\tld.param.b32 %r1, [a];
\tst.param.b32 [r], %r1;
\tret;
}
"""
)
_CALL_WITH_VALUES = (
    "\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r1;\n\t.param .b32 retval0;\n"
    "\tcall.uni (retval0), _Z1gi, (param0);\n\tld.param.b32 %r1, [retval0+0];\n\t}"
)


def _random_kernel(rng: random.Random, name: str) -> tuple[str, list[str]]:
    """A kernel of 2-5 labels, each followed by 1-4 of: a store after a ``.loc`` of line 0 or
    of a new line, a store, ``bra.uni`` or ``@p bra`` to any of the labels, a call with or
    without values, a ``ret`` (code after it has no label); and its labels."""
    labels = [f"$L__{name}_{i}" for i in range(rng.randint(2, 5))]
    lines = ["\t.loc 1 1 5", f"$L__{name}_top:"]  # a first label, so that none of these is one
    lines += ["\tld.param.u64 %rd1, [p];", "\tld.global.u32 %r1, [%rd1];", "\tsetp.eq.s32 %p1, %r1, 0;"]
    line = 2
    for i, label in enumerate(labels):
        lines.append(f"{label}:")
        for _ in range(rng.randint(1, 4)):
            k = rng.random()
            if k < 0.35:
                lines.append("\t.loc 1 0 5" if rng.random() < 0.5 else f"\t.loc 1 {line} 5")
                line += 1
                lines.append(f"\tst.global.u32 [%rd1+{4 * rng.randint(1, 8)}], %r1;")
            elif k < 0.5:
                lines.append(f"\tbra.uni {rng.choice(labels)};")
            elif k < 0.62:
                lines.append(f"\t@%p1 bra {rng.choice(labels)};")
            elif k < 0.72:
                lines.append("\tcall.uni _Z1vv, ();")
            elif k < 0.8:
                lines.append(_CALL_WITH_VALUES)
            elif k < 0.85 and i < len(labels) - 1:
                lines.append("\tret;")
            else:
                lines.append(f"\tst.global.u32 [%rd1+{4 * rng.randint(1, 8)}], %r1;")
    lines += [f"\t.loc 1 {line} 5", "\tret;"]
    head = f".visible .entry {name}(.param .u64 p)\n{{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n"
    return head + "\n".join(lines) + "\n}\n", labels


def _random_kernels_case(id: str, seed: int, count: int) -> None:
    """``count`` random kernels ``k<N>``, and copies ``j<N>`` with line 9 for every line 0 (no
    label dropped or moved there), each label of both used by a DIE. A label of ``k<N>`` must
    have no relocation when :func:`labels_dropped` says ptxas drops it, the offset its dropped
    label has in ``j<N>`` when it is the label a dropped one's block leads to, else its own
    offset in ``j<N>``."""
    rng = random.Random(seed)
    kernels = [_random_kernel(rng, f"k{n}") for n in range(count)]
    dropping = [code for code, _ in kernels]
    keeping = [
        code.replace(".loc 1 0 5", ".loc 1 9 5").replace("$L__k", "$L__j").replace(".entry k", ".entry j")
        for code in dropping
    ]
    dies = [die(h.VAR_DATA8, f"{lab}:.b64 {lab}") for _, labels in kernels for lab in labels]
    dies += [die(h.VAR_DATA8, f"{lab}:.b64 {lab}") for _, labels in kernels for lab in map(_copy, labels)]
    text, marks = info(*dies)
    ptx = module(ABBREV, text, code=_CALLEES + "".join(dropping) + "".join(keeping))

    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        parsed = parse_ptx(ptx)
        wrong: list[str] = []
        counts = {"dropped": 0, "moved": 0, "kept": 0}
        for f in parsed.functions:
            if not f.name.startswith("k"):
                continue
            dropped = labels_dropped(ptx, f)
            moved = {cause: label for label, cause in dropped.items()}
            for label in f.labels:
                if label.endswith("_top"):
                    continue
                got = run.cubin.reloc_at(".debug_info", marks[label])
                if label in dropped:
                    want, kind = None, "dropped"
                else:
                    reference = run.cubin.reloc_at(".debug_info", marks[_copy(moved.get(label, label))])
                    want, kind = (
                        (reference.addend if reference else -1),
                        "moved" if label in moved else "kept",
                    )
                counts[kind] += 1
                have = got.addend if got is not None else None
                if have != want:
                    wrong.append(f"{label}: {have} (want {want})")
        seen = f"{sum(counts.values())} labels: " + ", ".join(f"{n} {k}" for k, n in counts.items())
        return not wrong and counts["dropped"] > 0, seen + (
            f"; wrong: {', '.join(wrong[:4])}" if wrong else ""
        )

    case(
        id,
        "label-at-line-zero",
        f"every label of {count} random kernels (seed {seed}) -> as labels_dropped "
        "predicts: no relocation for a dropped label, the dropped one's place for the label its block leads "
        "to, its own place for any other",
        lambda: ptx,
        check,
    )


def _copy(label: str) -> str:
    """The label of the line-9 copy."""
    return label.replace("$L__k", "$L__j")


_random_kernels_case("label-at-line-zero.random-kernels", 1, 300)
