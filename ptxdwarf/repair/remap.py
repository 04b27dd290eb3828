"""``rewrite --remap-path``: source paths rewritten by prefix, like gcc's ``-fdebug-prefix-map``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..dwarf.constants import AT, FORM, TAG
from ..errors import UsageError
from ..ptx.edits import TextEdits
from ..ptx.reader import parse_ptx

__all__ = ["parse_remap", "remap_path", "remap_paths"]

_STRING = r'"(?:[^"\\\n]|\\.)*"'
_FILE_STRINGS = re.compile(rf"(\.file[ \t]+\d+[ \t]+)({_STRING})(?:[ \t]*({_STRING}))?")


def parse_remap(spec: str) -> tuple[str, str]:
    """``OLD=NEW`` as a pair (:class:`~ptxdwarf.errors.UsageError` without ``=`` or with an empty OLD)."""
    old, sep, new = spec.partition("=")
    if not sep or not old:
        raise UsageError(f"--remap-path {spec!r}: expected OLD=NEW")
    return old, new


def remap_path(path: str, remaps: Sequence[tuple[str, str]]) -> str:
    """``path`` with the first matching OLD prefix replaced by its NEW (the first pair whose
    OLD is a prefix wins; gcc takes the last, and so does a caller who lists it first)."""
    for old, new in remaps:
        if path.startswith(old):
            return new + path[len(old) :]
    return path


def remap_paths(text: str, remaps: Sequence[tuple[str, str]], *, filename: str = "<ptx>") -> tuple[str, int]:
    """``text`` with every ``.file`` path and the compile units' ``DW_AT_name`` and
    ``DW_AT_comp_dir`` remapped; also the number of values changed. A unit whose relative
    name joined to its directory matches a map whole (NVRTC names it ``default_program``
    in the working directory) gets the remapped path as its name. Changed names in
    ``.debug_info`` are written inline (``DW_FORM_string``).
    Raises :class:`~ptxdwarf.errors.PtxSyntaxError` when the text is not PTX ptxdwarf can read.
    """
    from ..dwarf.encode import encode_sections
    from ..ptx.debug import decode_module, edit_debug_sections

    module = parse_ptx(text, filename)
    edits = TextEdits(text, where=filename)
    changed = 0
    for f in module.files:
        m = _FILE_STRINGS.search(text, *module.lines.span(f.line))
        if m is None:
            continue
        # A two-string .file (LLVM) maps its directory; a one-string one its path.
        group = 2
        raw = m.group(group)[1:-1]
        new = remap_path(raw, remaps)
        if new != raw:
            edits.replace(
                m.start(group), m.end(group), '"' + new.replace("\\", "\\\\").replace('"', '\\"') + '"'
            )
            changed += 1
    if any(b.name == ".debug_info" for b in module.sections):
        info = decode_module(module)
        units_changed = 0
        for unit in info.units:
            cu = unit.die
            if cu is None or cu.tag not in (TAG.compile_unit, TAG.partial_unit):
                continue
            name, comp_dir = cu.attr(AT.name), cu.attr(AT.comp_dir)
            whole: str | None = None  # the unit's path, when a map names it whole (NVRTC's default_program)
            if (
                name is not None
                and isinstance(name.value, str)
                and not name.value.startswith("/")
                and comp_dir is not None
                and isinstance(comp_dir.value, str)
                and remap_path(comp_dir.value, remaps) == comp_dir.value
            ):
                full = comp_dir.value.rstrip("/") + "/" + name.value
                if remap_path(full, remaps) != full:
                    whole = remap_path(full, remaps)
            for attr in cu.attributes:
                if attr.name not in (AT.name, AT.comp_dir) or not isinstance(attr.value, str):
                    continue
                new = whole if whole is not None and attr is name else remap_path(attr.value, remaps)
                if new != attr.value:
                    attr.form, attr.value, attr.relocs = int(FORM.string), new, ()
                    cu.abbrev_code = None
                    units_changed += 1
        if units_changed:
            edit_debug_sections(edits, module, encode_sections(info))
            changed += units_changed
    return edits.apply(), changed
