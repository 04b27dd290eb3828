"""Random kernels against the label-at-line-zero rule: every label of each, as ptxas places it,
against :func:`~ptxdwarf.ptx.placement.labels_dropped`'s prediction."""

from __future__ import annotations

import random
from collections.abc import Callable

from ptxdwarf.cuda.cubin import ElfContents
from ptxdwarf.ptx.placement import labels_dropped
from ptxdwarf.ptx.reader import parse_ptx

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


#: Barriers and warp-synchronous instructions (sm_70 and later).
_BARRIERS = (
    "bar.sync 0;",
    "barrier.sync 0;",
    "bar.warp.sync -1;",
    "shfl.sync.idx.b32 %r1, %r1, 0, 31, -1;",
    "vote.sync.any.pred %p1, %p1, -1;",
    "match.any.sync.b32 %r1, %r1, -1;",
)


def _random_kernel(rng: random.Random, name: str, barriers: bool = False) -> tuple[str, list[str]]:
    """A kernel of 2-5 labels, each followed by 1-4 of: a store after a ``.loc`` of line 0 or
    of a new line, a store, ``bra.uni`` or ``@p bra`` to any of the labels, a call with or
    without values, a ``ret`` (code after it has no label), and with ``barriers`` one of
    :data:`_BARRIERS` after a ``.loc`` of line 0 or of a new line; and its labels."""
    labels = [f"$L__{name}_{i}" for i in range(rng.randint(2, 5))]
    lines = ["\t.loc 1 1 5", f"$L__{name}_top:"]  # a first label, so that none of these is one
    lines += ["\tld.param.u64 %rd1, [p];", "\tld.global.u32 %r1, [%rd1];", "\tsetp.eq.s32 %p1, %r1, 0;"]
    line = 2
    for i, label in enumerate(labels):
        lines.append(f"{label}:")
        for _ in range(rng.randint(1, 4)):
            if barriers and rng.random() < 0.25:
                lines.append("\t.loc 1 0 5" if rng.random() < 0.5 else f"\t.loc 1 {line} 5")
                line += 1
                lines.append(f"\t{rng.choice(_BARRIERS)}")
                continue
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


def _random_kernels_case(id: str, seed: int, count: int, barriers: bool = False) -> None:
    """``count`` random kernels ``k<N>``, and copies ``j<N>`` with line 9 for every line 0 (no
    label dropped or moved there), each label of both used by a DIE. A label of ``k<N>`` must
    have no relocation when :func:`labels_dropped` says ptxas drops it, the offset its dropped
    label has in ``j<N>`` when it is the label a dropped one's block leads to, else its own
    offset in ``j<N>``."""
    ptx, _labels, marks = _kernel_pairs(seed, count, barriers, lambda code: code, _no_line_zero)

    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        parsed = parse_ptx(ptx)
        wrong: list[str] = []
        counts = {"dropped": 0, "moved": 0, "kept": 0}
        for f in parsed.functions:
            if not f.name.startswith("k"):
                continue
            dropped = labels_dropped(parsed.masked, f)
            moved = {cause: label for label, cause in dropped.items()}
            for label in f.labels:
                if label.endswith("_top"):
                    continue
                got = run.cubin.relocation_at(".debug_info", marks[label])
                if label in dropped:
                    want, kind = None, "dropped"
                else:
                    reference = run.cubin.relocation_at(".debug_info", marks[_copy(moved.get(label, label))])
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
        f"every label of {count} random kernels (seed {seed}{', with barriers' if barriers else ''}) -> as labels_dropped "
        "predicts: no relocation for a dropped label, the dropped one's place for the label its block leads "
        "to, its own place for any other",
        lambda: ptx,
        check,
    )


def _copy(label: str) -> str:
    """The label of the copy."""
    return label.replace("$L__k", "$L__j")


def _no_line_zero(code: str) -> str:
    """``code`` with line 9 for every line 0: no label dropped or moved there."""
    return code.replace(".loc 1 0 5", ".loc 1 9 5")


def _kernel_pairs(
    seed: int, count: int, barriers: bool, first: Callable[[str], str], second: Callable[[str], str]
) -> tuple[str, list[str], dict[str, int]]:
    """``count`` random kernels ``k<N>`` (:func:`_random_kernel`) changed by ``first``, and copies
    ``j<N>`` of them changed by ``second``, each label of both used by a DIE: the module, the
    labels of the ``k<N>`` and the DIEs' marks."""
    rng = random.Random(seed)
    kernels = [_random_kernel(rng, f"k{n}", barriers) for n in range(count)]
    originals = [first(code) for code, _ in kernels]
    copies = [second(code.replace("$L__k", "$L__j").replace(".entry k", ".entry j")) for code in originals]
    labels = [label for _, names in kernels for label in names]
    text, marks = info(*(die(h.VAR_DATA8, f"{lab}:.b64 {lab}") for lab in (*labels, *map(_copy, labels))))
    return module(ABBREV, text, code=_CALLEES + "".join(originals) + "".join(copies)), labels, marks


_random_kernels_case("label-at-line-zero.random-kernels", 1, 300)
_random_kernels_case("label-at-line-zero.random-kernels-barriers", 2, 300, barriers=True)


# --- label-at-end ----------------------------------------------------------------------------------


def _end(cubin: ElfContents, function: str) -> int:
    """The size of ``function``'s code (its ``.text`` section): the address of its end."""
    return len(cubin.get(f".text.{function}") or b"")


def _straight_kernel(end_label: bool) -> tuple[str, dict[str, int]]:
    """A kernel of straight-line code whose DIEs use ``$L__x`` and ``$L__next``, the last label
    before the final ``ret``; with ``end_label``, a label after that ``ret``; and the marks."""
    code = "\n".join(
        [
            ".visible .entry _Z1kPi(.param .u64 _Z1kPi_param_0)",
            "{",
            "\t.reg .b32 %r<2>;",
            "\t.reg .b64 %rd<2>;",
            "\t.loc 1 1 5",
            "$L__top:",  # the function's first label, which ptxas puts at 0 (quirk first-label-at-zero)
            "\tld.param.u64 %rd1, [_Z1kPi_param_0];",
            "\tld.global.u32 %r1, [%rd1];",
            "$L__x:",
            "\t.loc 1 9 5",
            "\tst.global.u32 [%rd1+4], %r1;",
            "\t.loc 1 10 5",
            "\tst.global.u32 [%rd1+8], %r1;",
            "$L__next:",
            "\t.loc 1 11 5",
            "\tst.global.u32 [%rd1+12], %r1;",
            "\t.loc 1 20 5",
            "\tret;",
            *(["$L__end:"] if end_label else []),
            "}",
            "",
        ]
    )
    text, marks = info(die(h.VAR_DATA8, "$L__x:.b64 $L__x"), die(h.VAR_DATA8, "$L__next:.b64 $L__next"))
    return module(ABBREV, text, code=code), marks


def _at_end(end_label: bool) -> None:
    ptx, marks = _straight_kernel(end_label)

    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        x, last = (run.cubin.relocation_at(".debug_info", marks[n]) for n in ("$L__x", "$L__next"))
        end = _end(run.cubin, "_Z1kPi")
        seen = f"$L__x {x.addend if x else None}, $L__next {last.addend if last else None}, end {end}"
        if x is None or last is None or x.addend is None or last.addend is None:
            return False, seen
        return (last.addend == end) != end_label and 0 < x.addend < last.addend, seen

    case(
        "label-at-end.end-label" if end_label else "label-at-end.last-label",
        "label-at-end",
        "the same with a label after the final ret -> $L__next at its code, before the end"
        if end_label
        else "straight-line code, DIEs using $L__x and $L__next (the last label, before the final ret), no "
        "label after ret -> $L__next relocated to the end of the function's code, $L__x in place",
        lambda: ptx,
        check,
    )


_at_end(False)
_at_end(True)


def _random_ends_case(id: str, seed: int, count: int) -> None:
    """``count`` random kernels ``k<N>`` (no line 0: no label dropped) and copies ``j<N>`` with a
    label after the final ``ret``. Every label placed differently in the two is at its function's
    end in ``k<N>``, and no label of ``j<N>`` is at its function's end."""
    ptx, labels, marks = _kernel_pairs(
        seed, count, True, _no_line_zero, lambda code: code.replace("\tret;\n}\n", "\tret;\n$L__end:\n}\n")
    )

    def check(run: Run) -> tuple[bool, str]:
        if run.cubin is None:
            return False, run.summary()
        wrong: list[str] = []
        at_end = 0
        for label in labels:
            function = label[len("$L__") :].split("_")[0]
            k, j = (run.cubin.relocation_at(".debug_info", marks[n]) for n in (label, _copy(label)))
            if k is None or j is None:
                wrong.append(f"{label}: no relocation")
                continue
            if j.addend == _end(run.cubin, "j" + function[1:]):
                wrong.append(f"{_copy(label)}: at the end")
            if k.addend != j.addend:
                at_end += 1
                if k.addend != _end(run.cubin, function):
                    wrong.append(f"{label}: {k.addend} (want {j.addend} or the end)")
        seen = f"{len(labels)} labels, {at_end} of them at the end without an end label"
        return not wrong and at_end > 0, seen + (f"; wrong: {', '.join(wrong[:8])}" if wrong else "")

    case(
        id,
        "label-at-end",
        f"{count} random kernels (seed {seed}, with barriers, no line 0), and each with a label after its "
        "final ret -> every label placed differently in the two is at its function's end without the end "
        "label; with it, none is",
        lambda: ptx,
        check,
    )


_random_ends_case("label-at-end.random-kernels", 5, 200)
