"""What the independent readers (llvm-dwarfdump, eu-readelf) say of line-number programs and DIEs.

A row is (address, line, column, file, is_stmt, end_sequence); llvm-dwarfdump's file is the
1-based number, eu-readelf's the file's path (it prints the path when the file changes).
:func:`minimal_elf` puts the bytes of a section other than ``.debug_line`` (a cubin's
``.nv_debug_line_sass``, ``.nv.tileir.debug_line``) into an ELF file as its ``.debug_line``,
for tools that read only that section.
"""

from __future__ import annotations

import io
import re
import struct
import subprocess
from pathlib import Path
from typing import Any

from elftools.elf.elffile import ELFFile

Row = tuple[int, int, int, Any, bool, bool]

_LLVM_ROW = re.compile(r"^0x([0-9a-f]{16})\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s*(.*)$", re.M)
_LLVM_FILE = re.compile(r'^file_names\[\s*\d+\]:\s*\n\s*name: "((?:[^"\\]|\\.)*)"', re.M)
_EU_FILE = re.compile(r"^  (\S.*) \(mtime: \d+, length: \d+\)$")
_EU_ROW = re.compile(r"^\s*(\d+):(\d+)(.*?)\s\d+\s+\d+\s+\d+\s+(0x[0-9a-f]+|0+)\s*$")


def llvm_rows(text: str) -> list[Row]:
    """The rows of ``llvm-dwarfdump --debug-line`` (llvm 14 to 22: the columns after the file
    are ISA, discriminator, from LLVM 17 the op index, then the flags)."""
    return [
        (int(m[0], 16), int(m[1]), int(m[2]), int(m[3]), "is_stmt" in m[4], "end_sequence" in m[4])
        for m in _LLVM_ROW.findall(text)
    ]


def llvm_file_names(text: str) -> list[str]:
    """The file names of ``llvm-dwarfdump --debug-line``, C escapes left as printed."""
    return _LLVM_FILE.findall(text)


def eu_rows(text: str) -> list[Row]:
    """The rows of ``eu-readelf --debug-dump=decodedline``, each with the path of its file
    (``???`` for a file number the table does not have). eu-readelf prints a sequence's end
    as the last address inside it: here it is the first address past it, as DWARF has it."""
    rows: list[Row] = []
    path = None
    for line in text.splitlines():
        m = _EU_FILE.match(line)
        if m is not None:
            path = m.group(1)
            continue
        m = _EU_ROW.match(line)
        if m is not None:
            flags, end = m.group(3), "*" in m.group(3)
            address = int(m.group(4), 16) + end
            rows.append((address, int(m.group(1)), int(m.group(2)), path, "S" in flags, end))
    return rows


def file_path(files: list[dict[str, Any]], number: int) -> str:
    """The path eu-readelf prints for file ``number`` of a file table (``dump --json``'s
    ``files``): its directory before a relative name; ``???`` past the table."""
    if not 0 < number <= len(files):
        return "???"
    directory, name = files[number - 1]["dir"], files[number - 1]["name"]
    return name if name.startswith("/") or not directory else f"{directory}/{name}"


def minimal_elf(sections: dict[str, bytes], machine: int = 190) -> bytes:
    """A little-endian ELF64 relocatable file (``machine``: EM_CUDA) holding ``sections``
    (PROGBITS, in order) and its ``.shstrtab``."""
    names = b"\0"
    name_at: dict[str, int] = {}
    for name in [*sections, ".shstrtab"]:
        name_at[name] = len(names)
        names += name.encode() + b"\0"
    body = b""
    layout = []
    for name, data in [*sections.items(), (".shstrtab", names)]:
        layout.append((name, 64 + len(body), len(data)))
        body += data
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header += struct.pack(
        "<HHIQQQIHHHHHH", 1, machine, 1, 0, 0, 64 + len(body), 0, 64, 0, 0, 64, len(layout) + 1, len(layout)
    )
    headers = bytes(64)
    for name, offset, size in layout:
        kind = 3 if name == ".shstrtab" else 1
        headers += struct.pack("<IIQQQQIIQQ", name_at[name], kind, 0, 0, offset, size, 0, 0, 1, 0)
    return header + body + headers


#: The line-program sections of a cubin, as ``dump --json``'s ``lines`` names them.
LINE_SECTIONS = (".debug_line", ".nv_debug_line_sass", ".nv.tileir.debug_line")


def _run(command: list[str]) -> str:
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(command)}: {proc.stderr}"
    return proc.stdout


def line_differences(
    cubin: bytes, doc: dict[str, Any], dwarfdumps: list[str], eu_readelf: str, work: Path
) -> list[str]:
    """What differs between the line programs of ``doc`` (``dump --json`` of ``cubin``) and
    what each llvm-dwarfdump and eu-readelf read from the same bytes, section by section
    (each put into an ELF file of its own as ``.debug_line``): every row, and the file names
    (llvm-dwarfdump). eu-readelf sorts the rows of a table by address, and a cubin's sequences
    all start at 0 (a section per function): its rows are compared as a multiset."""
    problems: list[str] = []
    elf = ELFFile(io.BytesIO(cubin))
    for name in LINE_SECTIONS:
        section = elf.get_section_by_name(name)
        programs = [p for p in doc.get("lines", []) if p["section"] == name]
        if section is None:
            if programs:
                problems.append(f"{name}: {len(programs)} programs, and no such section")
            continue
        if not programs and section.data_size:
            problems.append(f"{name}: not decoded")
            continue
        path = work / f"{name.strip('.')}.o"
        path.write_bytes(minimal_elf({".debug_line": section.data()}))
        rows = [r for p in programs for r in p["rows"]]
        ours = [
            (r["address"], r["line"], r["column"], r["file"], r["is_stmt"], r["end_sequence"]) for r in rows
        ]
        names = [f["name"] for p in programs for f in p["files"]]
        for tool in dwarfdumps:
            text = _run([tool, "--debug-line", str(path)])
            theirs = llvm_rows(text)
            if ours != theirs:
                at = next(
                    (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
                    min(len(ours), len(theirs)),
                )
                problems.append(
                    f"{name}, {tool}: {len(ours)} rows, {len(theirs)}; row {at}: {ours[at : at + 1]}, {theirs[at : at + 1]}"
                )
            their_names = [unescape(n) for n in llvm_file_names(text)]
            if names != their_names:
                problems.append(f"{name}, {tool}: files {names}, {their_names}")
        by_path = [
            (
                r["address"],
                r["line"],
                r["column"],
                file_path(p["files"], r["file"]),
                r["is_stmt"],
                r["end_sequence"],
            )
            for p in programs
            for r in p["rows"]
        ]
        theirs = eu_rows(_run([eu_readelf, "--debug-dump=decodedline", str(path)]))
        if sorted(by_path) != sorted(theirs):
            problems.append(f"{name}, eu-readelf: {sorted(set(by_path) ^ set(theirs))[:4]}")
    return problems


def unescape(text: str) -> str:
    """llvm-dwarfdump's C escapes undone; its octal escapes are bytes, read as UTF-8."""
    raw = text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    try:
        return raw.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return raw


_EU_DIE = re.compile(r"^ \[\s*([0-9a-f]+)\]( +)(\S+)\s+abbrev: \d+$")
_EU_ATTR = re.compile(r"^ +(\S+) +\((\w+)\) ?(.*)$")
_EU_STRING = re.compile(r'^"(.*)"$', re.S)
#: Attributes eu-readelf 0.188 has no name for, by the name it prints (DWARF's registry codes).
_EU_UNNAMED = {"DW_AT_lo_user+0x1e02": "DW_AT_LLVM_sysroot"}


def eu_dies(text: str) -> list[tuple[int, int, str, list[tuple[str, str, str]]]]:
    """(offset, depth, tag, [(attribute, form, value as printed)]) of every DIE of
    ``eu-readelf --debug-dump=info``, with the ``DW_TAG_``/``DW_AT_``/``DW_FORM_`` prefixes
    eu-readelf leaves out."""
    dies: list[tuple[int, int, str, list[tuple[str, str, str]]]] = []
    for line in text.splitlines():
        m = _EU_DIE.match(line)
        if m is not None:
            dies.append((int(m.group(1), 16), (len(m.group(2)) - 2) // 2, f"DW_TAG_{m.group(3)}", []))
            continue
        m = _EU_ATTR.match(line)
        if m is not None and dies:
            name = _EU_UNNAMED.get(f"DW_AT_{m.group(1)}", f"DW_AT_{m.group(1)}")
            dies[-1][3].append((name, f"DW_FORM_{m.group(2)}", m.group(3)))
    return dies


def eu_die_differences(doc: dict[str, Any], text: str) -> list[str]:
    """What differs between the DIEs of ``doc`` (``dump --json``) and eu-readelf's ``text`` of
    the same ``.debug_info``: each DIE's offset, depth and tag, its attributes' names and forms
    in order, strings, and references by the offset they name (not a relocated one: eu-readelf
    does not apply CUDA relocations)."""
    ours = []
    for unit in doc["units"]:
        stack = [(unit["die"], 0)] if unit.get("die") else []
        while stack:
            die, depth = stack.pop()
            ours.append((die["offset"], depth, die["tag"], die["attributes"]))
            stack.extend((child, depth + 1) for child in reversed(die["children"]))
    theirs = eu_dies(text)
    problems = [f"{len(ours)} DIEs, eu-readelf {len(theirs)}"] if len(ours) != len(theirs) else []
    for (offset, depth, tag, attrs), (t_offset, t_depth, t_tag, t_attrs) in zip(ours, theirs, strict=False):
        if (offset, depth, tag) != (t_offset, t_depth, t_tag):
            problems.append(
                f"DIE 0x{offset:x} {tag} depth {depth}, eu-readelf: 0x{t_offset:x} {t_tag} depth {t_depth}"
            )
            break
        mine = [(a["name"], a["form"]) for a in attrs]
        if mine != [(n, f) for n, f, _ in t_attrs]:
            problems.append(f"DIE 0x{offset:x}: {mine}, eu-readelf: {[(n, f) for n, f, _ in t_attrs]}")
            continue
        for attr, (_n, _f, value) in zip(attrs, t_attrs, strict=True):
            string = _EU_STRING.match(value)
            if (
                isinstance(attr["value"], str)
                and string is not None
                and attr["value"] != unescape(string.group(1))
            ):
                problems.append(f"DIE 0x{offset:x} {attr['name']}: {attr['value']!r}, eu-readelf: {value}")
            ref = re.fullmatch(r"\[\s*([0-9a-f]+)\]", value)
            if (
                "ref" in attr
                and "symbol" not in attr
                and ref is not None
                and attr["ref"] != int(ref.group(1), 16)
            ):
                problems.append(
                    f"DIE 0x{offset:x} {attr['name']}: ref 0x{attr['ref']:x}, eu-readelf: {value}"
                )
    return problems
