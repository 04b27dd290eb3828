"""The documentation in ``docs/`` stays true to the code.

- No tracked file cites the design notes or any other file outside the repository.
- ``docs/formats.md`` lists every key of every JSON object that ``dump --json``,
  ``check --json`` (with the real ptxas) and ``lint --json`` write, and those outputs
  have every key it lists as always present.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from ptxdwarf import cli
from ptxdwarf.autodebug import attach_ptx
from ptxdwarf.cuda.ptxas import find_ptxas

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ROOT / "docs" / "formats.md"

# Citations of files that are not in the repository (spelled in pieces so this file has none).
OUTSIDE = re.compile(rb"DESIGN" rb"(?:\.md|'s)|\.\./" rb"shared\b|\bshared/" rb"(?:spec|DESIGN)")


def test_no_tracked_file_cites_files_outside_the_repository() -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = [n for n in files.decode().split("\0") if n]
    assert "README.md" in names and "pyproject.toml" in names
    found = []
    for name in names:
        path = ROOT / name
        if not path.is_file():
            continue
        for lineno, line in enumerate(path.read_bytes().splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{name}:{lineno}: {line.decode(errors='replace').strip()[:100]}")
    assert found == []


def test_the_checker_sees_a_citation() -> None:
    assert OUTSIDE.search(b"see " + b"DESIGN" + b".md section 5")
    assert OUTSIDE.search(b"(../" + b"sha" + b"red/spec/guide.md)")
    assert not OUTSIDE.search(b"docs/formats.md, the .shared window")


# --- docs/formats.md against real output ------------------------------------------


def _documented() -> dict[str, tuple[set[str], set[str]]]:
    """Per object kind (a ``### kind`` heading): all keys of its table, and the keys
    marked "always"."""
    kinds: dict[str, tuple[set[str], set[str]]] = {}
    kind = None
    for line in FORMATS.read_text().splitlines():
        if line.startswith("### "):
            kind = line[4:].strip()
            kinds[kind] = (set(), set())
        elif line.startswith("## "):
            kind = None
        elif kind is not None and line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            key = cells[0].strip("`")
            kinds[kind][0].add(key)
            if cells[2] == "always":
                kinds[kind][1].add(key)
    return kinds


def _format_names() -> list[str]:
    return re.findall(r"^## `(ptxdwarf-[a-z]+/\d+)`$", FORMATS.read_text(), re.MULTILINE)


def _dump_objects(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object of a ``ptxdwarf-dump/1`` document with its kind."""
    if "images" in doc:
        yield "fatbin document", doc
        for image in doc["images"]:
            yield "image", image
            yield from _dump_objects(image["dump"])
        return
    yield "dump document", doc
    for unit in doc["units"]:
        yield "unit", unit
        yield from _die_objects(unit["die"])
    yield from _section_objects(doc)


def _die_objects(root: dict[str, Any] | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """The DIEs of a unit's tree, their attributes and what these hold."""
    stack = [root] if root else []
    while stack:
        die = stack.pop()
        yield "DIE", die
        stack.extend(die["children"])
        for attr in die["attributes"]:
            yield "attribute", attr
            for op in attr.get("expr", []):
                yield "expression operation", op
            yield from _entry_objects(attr.get("loclist", []))


def _entry_objects(items: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Location list entries and their operations."""
    for entry in items:
        yield "location list entry", entry
        for op in entry.get("expr", []):
            yield "expression operation", op


#: The dump's sections after the units: key, kind of its objects, (key, kind) of their children.
_SECTIONS: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("pubnames", "name set", (("entries", "name entry"),)),
    ("pubtypes", "name set", (("entries", "name entry"),)),
    ("aranges", "address range set", (("ranges", "address range"),)),
    ("locations", "location list", ()),
    ("ranges", "range list", (("entries", "range list entry"),)),
    ("strings", "string", ()),
    ("other_sections", "other section", ()),
    ("lines", "line program", (("files", "line program file"), ("rows", "line row"))),
    ("register_map", "register map function", (("entries", "register map entry"),)),
    ("tile_ir", "tile IR text", ()),
)


def _section_objects(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The objects of the sections after the units, in :data:`_SECTIONS`' order."""
    for key, kind, children in _SECTIONS:
        for obj in doc.get(key, []):
            yield kind, obj
            if key == "locations":
                yield from _entry_objects(obj["entries"])
            for child_key, child_kind in children:
                for child in obj[child_key]:
                    yield child_kind, child


def _check_against_doc(objects: Iterator[tuple[str, dict[str, Any]]], seen: set[str]) -> list[str]:
    documented = _documented()
    problems = []
    for kind, obj in objects:
        seen.add(kind)
        keys, always = documented[kind]
        for key in sorted(set(obj) - keys):
            problems.append(f"{kind}: key {key!r} is not in docs/formats.md")
        for key in sorted(always - set(obj)):
            problems.append(f"{kind}: key {key!r} documented as always present is missing")
    return sorted(set(problems))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = cli.main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if code in (0, 1) else None


def test_formats_md_names_the_six_formats() -> None:
    assert _format_names() == [
        "ptxdwarf-dump/1",
        "ptxdwarf-check/1",
        "ptxdwarf-lint/1",
        "ptxdwarf-fix/1",
        "ptxdwarf-stats/1",
        "ptxdwarf-compare/1",
    ]
    kinds = _documented()
    assert len(kinds) == 40
    assert all(keys for keys, _ in kinds.values())


@pytest.mark.ptxas
def test_dump_json_keys_are_documented(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``dump --json`` of every PTX fixture, a fatbin and a cubin the real ptxas made."""
    ptxas = find_ptxas()
    cubin = tmp_path / "example.cubin"
    cubin.write_bytes(
        ptxas.compile((FIXTURES / "spec" / "example.ptx").read_text(), arch="sm_75", debug=True).cubin
    )
    tile = FIXTURES / "corpus" / "cutile" / "vadd.debug.sm_90.cubin"
    inputs = [*sorted(FIXTURES.rglob("*.ptx")), FIXTURES / "nvcc" / "call_example.sm_75.fatbin", cubin, tile]
    seen: set[str] = set()
    problems: list[str] = []
    read = 0
    for path in inputs:
        _, doc = _run(capsys, "dump", str(path), "--json")
        if doc is None:
            continue  # the fixtures of broken debug sections
        read += 1
        assert doc["format"] == "ptxdwarf-dump/1"
        problems += _check_against_doc(_dump_objects(doc), seen)
    assert read > 50
    assert not sorted(set(problems))
    # the kinds the fixtures exercise (range lists and pubtypes appear in none)
    assert seen >= {
        "dump document",
        "unit",
        "DIE",
        "attribute",
        "expression operation",
        "location list",
        "location list entry",
        "name set",
        "name entry",
        "tile IR text",
        "address range set",
        "address range",
        "string",
        "other section",
        "line program",
        "line program file",
        "line row",
        "register map function",
        "register map entry",
        "fatbin document",
        "image",
    }


@pytest.mark.ptxas
def test_check_json_keys_are_documented(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``check --json`` with the real ptxas, on a consistent module and one with a difference."""
    seen: set[str] = set()
    problems: list[str] = []
    for name, expected in (
        ("spec/example.ptx", 0),
        ("lint/faults/func-param-address.ptx", 1),
        ("nodebug/handwritten.ptx", 0),
    ):
        path = FIXTURES / name
        if name.startswith("nodebug/"):  # attach's output: registers ptxas never maps
            path = tmp_path / "attached.ptx"
            path.write_text(
                attach_ptx((FIXTURES / name).read_text(), output_name=str(path), rename_registers=True).text
            )
        code, report = _run(capsys, "check", str(path), "--json")
        assert code == expected
        assert report["format"] == "ptxdwarf-check/1"
        objects = [("check report", report)] + [("difference", d) for d in report["differences"]]
        objects += [("unmapped register", r) for r in report["unmapped_registers"]]
        for r in report["register_locations"]:
            objects += [("register location", r)] + [("register placement", p) for p in r["sass"]]
        problems += _check_against_doc(iter(objects), seen)
    assert seen == {
        "check report",
        "difference",
        "unmapped register",
        "register location",
        "register placement",
    }
    assert problems == []


def test_lint_json_keys_are_documented(capsys: pytest.CaptureFixture[str]) -> None:
    seen: set[str] = set()
    code, findings = _run(
        capsys, "lint", str(FIXTURES / "lint" / "faults" / "func-param-address.ptx"), "--json"
    )
    assert code == 1 and findings
    assert _check_against_doc(((("finding", f) for f in findings)), seen) == []
    code, findings = _run(capsys, "lint", str(FIXTURES / "spec" / "example.ptx"), "--json")
    assert (code, findings) == (0, [])


def test_fix_json_keys_are_documented(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    seen: set[str] = set()
    problems: list[str] = []
    for name, expected in (
        ("lint/faults/regx-undeclared.ptx", 1),
        ("lint/faults/file-two-strings.ptx", 0),
    ):
        code = cli.main(["fix", str(FIXTURES / name), "-o", str(tmp_path / "out.ptx"), "--json"])
        assert code == expected
        report = json.loads(capsys.readouterr().err)
        assert report["format"] == "ptxdwarf-fix/1" and (report["repairs"] or report["remaining"])
        objects = [("fix report", report)] + [("repair", r) for r in report["repairs"]]
        objects += [("finding", f) for f in report["remaining"]]
        problems += _check_against_doc(iter(objects), seen)
    assert seen == {"fix report", "repair", "finding"}
    assert problems == []


@pytest.mark.ptxas
def test_stats_json_keys_are_documented(capsys: pytest.CaptureFixture[str]) -> None:
    """``stats --json`` and ``stats --compare --json`` on a fixture with inlined code."""
    seen: set[str] = set()
    path = str(FIXTURES / "nvcc" / "coop_reduce.G.sm_75.ptx")
    code, doc = _run(capsys, "stats", path, "--json")
    assert code == 0 and doc["format"] == "ptxdwarf-stats/1"
    objects: list[tuple[str, dict[str, Any]]] = [("stats document", doc)]
    for module in doc["modules"]:
        objects += [("stats module", module), ("stats totals", module["totals"])]
        objects.append(("stats buckets", module["buckets"]))
        for function in module["functions"]:
            objects.append(("stats function", function))
            objects += [("stats variable", v) for v in function["variables"]]
    code, compared = _run(capsys, "stats", "--compare", path, path, "--json")
    assert code == 0 and compared["format"] == "ptxdwarf-compare/1"
    objects.append(("compare document", compared))
    for change in compared["functions"]:
        objects += [
            ("compare function", change),
            ("compare side", change["old"]),
            ("compare side", change["new"]),
        ]
    problems = _check_against_doc(iter(objects), seen)
    assert seen == {
        "stats document",
        "stats module",
        "stats totals",
        "stats buckets",
        "stats function",
        "stats variable",
        "compare document",
        "compare function",
        "compare side",
    }
    assert problems == []
