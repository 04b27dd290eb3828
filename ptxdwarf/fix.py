"""``fix``: apply the repair of every lint finding that has one, until none is left."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .cuda.quirks import quirks_for_rule
from .dwarf.decode import decode_sections
from .dwarf.encode import encode_sections
from .dwarf.image import SectionImage
from .errors import DwarfError
from .lint import ERROR, Finding
from .lint.run import lint_for_repair
from .ptx.debug import edit_debug_sections
from .ptx.edits import TextEdits
from .ptx.module import PtxModule
from .ptx.reader import parse_ptx
from .ptx.writer import Style
from .repair.registry import Repair, Repairer, SectionJob, TextJob, repairs_of
from .repair.sections import labels_to_numbers

__all__ = ["FixResult", "fix", "repairable"]

# Each round repairs the text or re-encodes the sections once; a repair may uncover
# another finding (a joined .file path that is not ASCII), so a few rounds are allowed.
_MAX_ROUNDS = 6


@dataclass
class FixResult:
    """What :func:`fix` made: the text, each repair, and the lint findings left in it."""

    text: str
    repairs: list[Repair] = field(default_factory=list)
    remaining: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        """The remaining findings of error severity (what ptxas fails on or gets wrong)."""
        return [f for f in self.remaining if f.severity == ERROR]

    @property
    def ok(self) -> bool:
        """True when no finding of error severity remains."""
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        """The ``ptxdwarf-fix/1`` report (docs/formats.md)."""
        return {
            "format": "ptxdwarf-fix/1",
            "ok": self.ok,
            "repairs": [r.to_json() for r in self.repairs],
            "remaining": [f.to_json() for f in self.remaining],
        }


def repairable(finding: Finding) -> list[Repairer]:
    """The repairs the quirk registry names for the quirks of ``finding``'s rule."""
    return [r for q in quirks_for_rule(finding.rule) for r in repairs_of(q)]


def _plan(findings: list[Finding], phases: tuple[str, ...]) -> list[tuple[Repairer, list[Finding]]]:
    """The repairs of ``phases`` that ``findings`` call for, each with its findings, in
    registration order."""
    plan: dict[str, tuple[Repairer, list[Finding]]] = {}
    for f in findings:
        for r in repairable(f):
            if r.phase in phases:
                plan.setdefault(f"{r.quirk}:{r.name}", (r, []))[1].append(f)
    return list(plan.values())


def fix(
    text: str,
    *,
    filename: str = "<ptx>",
    ptxas_version: str | None = None,
    max_version: tuple[int, int] | None = None,
    style: Style | str = Style.READABLE,
) -> FixResult:
    """Repair what lint finds in PTX ``text`` that has a repair.

    ``ptxas_version`` (``"13.0"``) applies what holds for that ptxas release, lint included
    (None: what holds for any release measured). ``max_version`` is the newest PTX ISA the
    target ptxas takes (``Ptxas.max_version``): where the sections need a newer ``.version``
    than that, they are written without labels instead of raising it.
    The debug sections are encoded again (in ``style``) only when a finding calls for a
    repair of them; text nothing calls to repair is returned as it was.
    Raises :class:`~ptxdwarf.errors.PtxSyntaxError` when the text is not PTX ptxdwarf can read,
    and :class:`~ptxdwarf.errors.PtxDwarfError` for a PTX fragment with ``max_version``.
    """
    repairs: list[Repair] = []
    module = parse_ptx(text, filename)
    if max_version is not None:
        module.require_whole("fix for a given ptxas")
    findings = lint_for_repair(module, ptxas_version)
    sections_done: set[str] = set()
    for _ in range(_MAX_ROUNDS):
        text_plan = _plan(findings, ("text",))
        made: list[Repair] = []
        if text_plan:
            job = TextJob(module, TextEdits(text, where=filename), ptxas_version, max_version)
            for r, fs in text_plan:
                made += r.apply(job, fs)
            if len(job.edits):
                text = job.edits.apply()
        if not made:
            section_plan = [
                (r, fs)
                for r, fs in _plan(findings, ("image", "model"))
                if f"{r.quirk}:{r.name}" not in sections_done
            ]
            if section_plan:
                sections_done.update(f"{r.quirk}:{r.name}" for r, _ in section_plan)
                fixed = _repair_sections(module, section_plan, ptxas_version, max_version, style)
                if fixed is not None:
                    text, made = fixed
        if not made:
            break
        repairs += made
        module = parse_ptx(text, filename)
        findings = lint_for_repair(module, ptxas_version)
    return FixResult(text, repairs, findings)


def _repair_sections(
    module: PtxModule,
    plan: list[tuple[Repairer, list[Finding]]],
    ptxas_version: str | None,
    max_version: tuple[int, int] | None,
    style: Style | str,
) -> tuple[str, list[Repair]] | None:
    """The text with the section repairs of ``plan`` made, or None when nothing changed or
    the sections a model repair needs cannot be decoded (lint's structure findings say why).
    Image repairs alone write back only the sections they changed, undecoded."""
    original = dict(module.images(debug_only=True).items())
    job = SectionJob(module, dict(original), ptxas_version=ptxas_version, max_version=max_version)
    made: list[Repair] = []
    for r, fs in plan:
        if r.phase == "image":
            made += r.apply(job, fs)
    edits = TextEdits(module.text, where=module.filename)
    if any(r.phase == "model" for r, _ in plan):
        try:
            info = decode_sections(
                job.images,
                source="ptx",
                filename=module.filename,
                address_size=4 if module.address_size == 32 else 8,
            ).load_all()
        except DwarfError:
            return None
        info.module = module
        job.info = info
        for r, fs in plan:
            if r.phase == "model":
                made += r.apply(job, fs)
        images = encode_sections(info, job.options)
        if job.no_labels:
            images = labels_to_numbers(images, _labels_named_by_code(module, images))
        edit_debug_sections(edits, module, images, style)
    else:
        changed = {name: image for name, image in job.images.items() if image is not original.get(name)}
        if not changed:
            return None
        edit_debug_sections(edits, module, changed, style, keep=set(original) - set(changed))
    return edits.apply(), made


def _labels_named_by_code(module: PtxModule, images: dict[str, SectionImage]) -> set[str]:
    """The labels of ``images`` the text outside the debug sections names (``.loc ...,
    function_name $L__info_string0``)."""
    text = module.text
    pieces, pos = [], 0
    for block in sorted(module.sections, key=lambda b: b.start):
        if block.name.startswith(".debug_"):
            pieces.append(text[pos : block.start])
            pos = block.end
    pieces.append(text[pos:])
    outside = "".join(pieces)
    labels = {label for image in images.values() for label in image.labels}
    return {label for label in labels if re.search(rf"(?<![\w$]){re.escape(label)}(?![\w$])", outside)}
