"""The ``ptxdwarf`` command line.

Exit codes: 0 ok, 1 findings or differences, 2 bad input or tool error. ``dump``, ``check``
and ``lint`` take several files, like ruff or flake8: an error in one file is reported and the
others go on; the exit code is the worst of all. Errors are one line ``ptxdwarf: error: ...``
on stderr, never a traceback (set ``PTXDWARF_DEBUG=1`` to see one).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from . import __version__
from .errors import PtxDwarfError

if TYPE_CHECKING:
    from .dwarf.model import DebugInfo
    from .lint import Finding

__all__ = ["main", "main_attach", "main_lint"]


def _write_output(text: str, output: str | None) -> None:
    """Write PTX text to ``output`` or standard output with the bytes it was read from."""
    from .files import save_text

    if output is not None and output != "-":
        save_text(text, output)
        return
    data = text.encode("utf-8", "surrogateescape")
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8", "backslashreplace"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.flush()


def _escape_stdout() -> None:
    """Characters standard output cannot encode (undecodable bytes of names) come out escaped."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):
            pass


def _error(exc: BaseException) -> int:
    """Print the one line an error of the input or of a tool gets; return the exit code 2.

    Anything else (a bug of ours) is one line too, unless ``PTXDWARF_DEBUG`` is set.
    """
    if isinstance(exc, PtxDwarfError):
        message = str(exc)
    elif isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        message = f"{exc.filename}: {reason}" if exc.filename is not None else reason
    elif isinstance(exc, RecursionError):
        message = "input nests too deeply"
    elif isinstance(exc, MemoryError):
        message = "out of memory"
    else:
        if os.environ.get("PTXDWARF_DEBUG"):
            raise exc
        message = f"internal error ({type(exc).__name__}: {exc}); please report it; PTXDWARF_DEBUG=1 shows the traceback"
    print(f"ptxdwarf: error: {message}", file=sys.stderr)
    return 2


def _each(files: Sequence[str], one: Callable[[str], int]) -> int:
    """Run ``one`` on every file; an error stops that file only. The exit code is the worst."""
    worst = 0
    for i, path in enumerate(files):
        if i and not gc.isenabled():
            gc.collect()  # the console script runs without the collector (run); free the last file's model
        try:
            code = one(path)
        except (BrokenPipeError, KeyboardInterrupt):
            raise
        except Exception as exc:  # each file's error is one line, the others go on
            code = _error(exc)
        worst = max(worst, code)
    return worst


def _json_items(files: Sequence[str], one: Callable[[str], str | Iterable[str]]) -> int:
    """Write ``one(file)`` (a JSON document, whole or as chunks to write as they come) for one
    file, or a JSON array of them for several."""
    out = sys.stdout
    several = len(files) > 1
    written = 0

    def item(path: str) -> int:
        nonlocal written
        doc = one(path)
        chunks = _without_final_newline([doc] if isinstance(doc, str) else doc)
        if several:
            _write_chunks(itertools.chain(["[\n" if not written else ",\n"], chunks), out)
        else:
            _write_chunks(itertools.chain(chunks, ["\n"]), out)
        written += 1
        return 0

    worst = _each(files, item)
    if several:
        out.write("\n]\n" if written else "[]\n")
    return worst


#: How much text is gathered before a write to standard output.
_WRITE_BLOCK = 1 << 16


def _write_chunks(chunks: Iterable[str], out: TextIO) -> None:
    """Write ``chunks`` to ``out`` as they come, in blocks of about :data:`_WRITE_BLOCK`."""
    block: list[str] = []
    size = 0
    for chunk in chunks:
        block.append(chunk)
        size += len(chunk)
        if size >= _WRITE_BLOCK:
            out.write("".join(block))
            block.clear()
            size = 0
    if block:
        out.write("".join(block))


def _without_final_newline(chunks: Iterable[str]) -> Iterator[str]:
    """``chunks`` with the newlines at the end of the last one taken off."""
    last: str | None = None
    for chunk in chunks:
        if last is not None:
            yield last
        last = chunk
    if last is not None:
        yield last.rstrip("\n")


def _prepared(chunks: Iterator[str]) -> Iterator[str]:
    """``chunks`` with the first one made now: a dump reads whatever can fail before that."""
    first = next(chunks, None)
    return chunks if first is None else itertools.chain([first], chunks)


def _dump_one(
    path: str, as_json: bool, failed: list[PtxDwarfError], sections: list[str] | None
) -> Iterator[str]:
    """The dump of one file as chunks of text, made as they are written; everything that can
    fail to decode is read before it returns. Each entry of a fatbin that cannot be read is an
    error line here (and goes to ``failed``), the others are dumped."""
    from .api import _read_all
    from .dump import DUMP_FORMAT, cubin_sections, iter_json

    errors: list[PtxDwarfError] = []
    found = _read_all(path, None, None, None, errors, only=cubin_sections(sections))
    for exc in errors:
        _error(exc)
    failed.extend(errors)
    dumps = [
        (
            label,
            info,
            _prepared(iter_json(info, sections) if as_json else _text_chunks(info, sections)),
        )
        for label, info in found
    ]
    if len(dumps) == 1:
        return _then_notes(dumps[0][2], path, dumps[0][1])
    return _images_dump(path, dumps, as_json, DUMP_FORMAT)


def _images_dump(
    path: str, dumps: list[tuple[str, DebugInfo, Iterator[str]]], as_json: bool, dump_format: str
) -> Iterator[str]:
    """The dumps of a fatbin's or host object's device images, one after the other."""
    if as_json:
        yield f'{{"format": "{dump_format}", "source": "fatbin", "file": {json.dumps(path)}, "images": ['
        for i, (label, info, chunks) in enumerate(dumps):
            if i:
                yield ", "
            yield f'{{"label": {json.dumps(label)}, "dump": '
            yield from _without_final_newline(chunks)
            yield "}"
            _print_notes(f"{path}: {label}", info)
        yield "]}\n"
        return
    yield f"{path}: {len(dumps)} device images\n"
    for label, info, chunks in dumps:
        yield f"\n=== {label} ===\n"
        yield from chunks
        _print_notes(f"{path}: {label}", info)


def _then_notes(chunks: Iterator[str], where: str, info: DebugInfo) -> Iterator[str]:
    """``chunks``, then the notes of ``info`` on standard error."""
    yield from chunks
    _print_notes(where, info)


def _print_notes(where: str, info: DebugInfo) -> None:
    """What the reader worked around in ``info`` (after it was dumped), on standard error."""
    for note in info.notes:
        print(f"ptxdwarf: note: {where}: {note}", file=sys.stderr)


def _text_chunks(info: DebugInfo, sections: list[str] | None) -> Iterator[str]:
    """The text dump of ``info`` (``sections``: the selected ones) in chunks of whole lines,
    with one line saying so when it holds no DWARF to show."""
    from .dump import iter_text_chunks

    chunks = iter_text_chunks(info, sections)
    head = next(chunks)
    note = _sparse_note(info) if sections is None else None
    yield head
    if note is not None:
        yield note + "\n"
        second = next(chunks, None)
        if second is not None and second != "(no debug sections)\n":
            yield second
    yield from chunks


def _sparse_note(info: DebugInfo) -> str | None:
    """A note for a module whose debug sections are all empty, or are line info only."""
    if info.units or not info.sections:
        return None
    names = sorted(info.sections)
    if all(len(image.data) == 0 for image in info.sections.values()):
        which = "an empty section" if len(names) == 1 else "empty sections"
        return f"(only {which}: {', '.join(names)}; no DWARF to show)"
    if ".debug_info" not in names:
        return f"(no .debug_info: line info only, with {', '.join(names)})"
    return None


def _cmd_dump(args: argparse.Namespace) -> int:
    failed: list[PtxDwarfError] = []
    sections = [name for name in _DUMP_SECTIONS if getattr(args, name.replace("-", "_"))] or None
    if args.json:
        worst = _json_items(args.files, lambda path: _dump_one(path, True, failed, sections))
        return max(worst, 2 if failed else 0)
    several = len(args.files) > 1
    first = True

    def one(path: str) -> int:
        nonlocal first
        chunks = _dump_one(path, False, failed, sections)
        if several:
            sys.stdout.write(("" if first else "\n") + f"{path}:\n")
        first = False
        _write_chunks(chunks, sys.stdout)
        return 0

    worst = _each(args.files, one)
    return max(worst, 2 if failed else 0)


def _cmd_rewrite(args: argparse.Namespace) -> int:
    from .api import rewrite
    from .files import load_ptx
    from .repair import parse_remap, remap_paths

    def one(path: str) -> int:
        if args.remap_path:
            remaps = [parse_remap(spec) for spec in args.remap_path]
            result, changed = remap_paths(load_ptx(path), remaps, filename=path)
            print(f"{path}: {changed} path(s) remapped", file=sys.stderr)
        else:
            notes: list[str] = []
            result = rewrite(load_ptx(path), style=args.style, filename=path, notes=notes)
            for note in notes:
                print(f"ptxdwarf: note: {path}: {note}", file=sys.stderr)
        _write_output(result, args.output)
        return 0

    return _each([args.file], one)


def _ptxas_version(args: argparse.Namespace) -> str | None:
    """The ptxas release ``--ptxas`` or ``--ptxas-version`` names (None: neither)."""
    from .errors import UsageError

    text: str | None = args.ptxas_version
    if args.ptxas:
        from .cuda.ptxas import find_ptxas

        text = find_ptxas(args.ptxas).version
    if text is not None and re.fullmatch(r"\d+\.\d+", text) is None:
        raise UsageError(f"ptxas version {text!r}: expected MAJOR.MINOR, such as 13.0")
    return text


def _cmd_fix(args: argparse.Namespace) -> int:
    from .files import load_ptx
    from .fix import fix

    version = _ptxas_version(args)
    max_version = None
    if args.ptxas:
        from .cuda.ptxas import find_ptxas

        max_version = find_ptxas(args.ptxas).max_version

    def one(path: str) -> int:
        result = fix(
            load_ptx(path), filename=path, ptxas_version=version, max_version=max_version, style=args.style
        )
        _write_output(result.text, args.output)
        if args.json:
            print(json.dumps(result.to_json(), indent=1, ensure_ascii=True), file=sys.stderr)
        else:
            for r in result.repairs:
                print(r, file=sys.stderr)
            for f in result.remaining:
                print(f"not repaired: {f}", file=sys.stderr)
        return 0 if result.ok else 1

    return _each([args.file], one)


def _cmd_strip(args: argparse.Namespace) -> int:
    from .files import load_ptx
    from .strip import strip

    def one(path: str) -> int:
        _write_output(strip(load_ptx(path), keep_lines=args.keep_lines, filename=path), args.output)
        return 0

    return _each([args.file], one)


def _cmd_check(args: argparse.Namespace) -> int:
    from .check import CheckReport, _checked
    from .files import load_ptx

    codes: list[int] = []

    def report_of(path: str) -> CheckReport:
        report, read = _checked(load_ptx(path), filename=path, arch=args.arch, ptxas=args.ptxas)
        codes.append(0 if report.consistent else 1)
        _keep_until_exit((report, read))
        return report

    if args.json:
        worst = _json_items(args.files, lambda path: report_of(path).to_json())
        return max([worst, *codes])

    def one(path: str) -> int:
        report = report_of(path)
        lines = [f"note: {note}" for note in report.notes]
        lines.extend(map(str, report.differences))
        lines.extend(report.register_summary())
        lines.append(report.summary())
        sys.stdout.write("\n".join(lines) + "\n")  # one write: thousands of differences
        return codes[-1]

    return _each(args.files, one)


def _cmd_stats(args: argparse.Namespace) -> int:
    from .errors import UsageError
    from .stats import StatsReport, stats

    def report_of(path: str) -> StatsReport:
        return stats(path, arch=args.arch, ptxas=args.ptxas)

    if args.compare:
        if args.files:
            raise UsageError("stats --compare OLD NEW takes no other files")
        return _stats_compare(report_of(args.compare[0]), report_of(args.compare[1]), args)
    if not args.files:
        raise UsageError("stats: give FILE... or --compare OLD NEW")
    if args.html and len(args.files) != 1:
        raise UsageError("stats --html writes the page of one file")
    if args.json:
        return _json_items(args.files, lambda path: json.dumps(report_of(path).to_json(), indent=1))

    def one(path: str) -> int:
        report = report_of(path)
        if args.html:
            from .stats.html import write_html

            write_html(report, args.html)
        for line in report.text(variables=not args.brief):
            print(line)
        return 0

    return _each(args.files, one)


def _stats_compare(old: Any, new: Any, args: argparse.Namespace) -> int:
    """``stats --compare``: exit 1 when a function's readable share fell by more than the threshold."""
    from .stats import compare

    changes = compare(old, new)
    threshold = args.threshold / 100
    dropped = [c for c in changes if c.dropped(threshold)]
    if args.json:
        doc = {
            "format": "ptxdwarf-compare/1",
            "old": old.filename,
            "new": new.filename,
            "threshold": args.threshold,
            "dropped": [c.name for c in dropped],
            "functions": [c.to_json() for c in changes],
        }
        print(json.dumps(doc, indent=1))
        return 1 if dropped else 0

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    def pp(value: float | None) -> str:
        return "" if value is None else f"{100 * value:+.1f}"

    print(f"old: {old.filename}\nnew: {new.filename}")
    print(
        f"{'function':40} {'located old':>11} {'new':>7} {'change':>7} {'readable old':>12} {'new':>7} {'change':>7}"
    )
    for c in changes:
        o, n = c.old, c.new
        mark = "  DROPPED" if c in dropped else ""
        print(
            f"{c.name:40} {pct(o.covered_share if o else None):>11} {pct(n.covered_share if n else None):>7} {pp(c.covered_change):>7} "
            f"{pct(o.readable_share if o else None):>12} {pct(n.readable_share if n else None):>7} {pp(c.readable_change):>7}{mark}"
        )
    limit = f"more than {args.threshold:g} points" if args.threshold else "at all"
    print(f"{len(dropped)} function(s) whose readable share dropped {limit}")
    return 1 if dropped else 0


def main_lint(path: str, json_output: bool, ptxas_version: str | None = None) -> int:
    """``ptxdwarf lint FILE [--json]``: print the findings; 0 when there are none, 1 otherwise.

    Bad input raises (:class:`~ptxdwarf.errors.PtxSyntaxError`, :class:`OSError`); the caller
    turns that into exit code 2.
    """
    findings = _lint_one(path, ptxas_version)
    if json_output:
        _write_findings_json(findings)
    else:
        _write_findings(findings)
    return 1 if findings else 0


def _lint_one(path: str, ptxas_version: str | None = None) -> list[Finding]:
    from .files import load_ptx
    from .lint import lint_module
    from .ptx.module import FRAGMENT_NOTE
    from .ptx.reader import parse_ptx

    module = parse_ptx(load_ptx(path), path)
    _keep_until_exit(module)
    if module.is_fragment:
        print(f"ptxdwarf: note: {path}: {FRAGMENT_NOTE}", file=sys.stderr)
    return lint_module(module, ptxas_version=ptxas_version)


def _write_findings(findings: list[Finding]) -> None:
    for f in findings:
        sys.stdout.write(str(f) + "\n")


def _write_findings_json(findings: list[Finding]) -> None:
    json.dump([f.to_json() for f in findings], sys.stdout, indent=1)
    sys.stdout.write("\n")


def _cmd_lint(args: argparse.Namespace) -> int:
    version = _ptxas_version(args)
    if not args.json:
        return _each(args.files, lambda path: main_lint(path, False, version))
    # One array of every file's findings (each names its file in "where").
    everything: list[Finding] = []
    read = 0

    def one(path: str) -> int:
        nonlocal read
        findings = _lint_one(path, version)
        everything.extend(findings)
        read += 1
        return 1 if findings else 0

    worst = _each(args.files, one)
    if read or len(args.files) > 1:
        _write_findings_json(everything)
    return worst


def _cmd_attach(args: argparse.Namespace) -> int:
    return _each([args.file], lambda path: _attach_one(path, args))


def main_attach(args: Any) -> int:
    """``ptxdwarf attach IN.ptx [-o OUT.ptx] [--rename-registers] [--replace] [--style S]``.

    ``args`` has ``file`` (or ``path``), ``output``, ``rename_registers``, ``replace``,
    ``style`` and optionally ``debug_target`` (default True; ``--no-debug-target``).
    Warnings go to standard error as ``ptxdwarf: warning: FILE: ...``; the result to
    ``output`` or standard output. ``.file`` names the absolute path of
    ``output``, or of ``IN.debug.ptx`` beside the input when writing to standard
    output (redirect there so that a debugger finds the text its line table names).
    Errors raise (:func:`main` prints them and exits with 2).
    """
    return _attach_one(str(getattr(args, "file", None) or args.path), args)


def _attach_one(path: str, args: Any) -> int:
    from .autodebug import attach_ptx, default_output_name
    from .files import load_ptx

    output: str | None = getattr(args, "output", None)
    output_name = os.path.abspath(default_output_name(path) if output is None or output == "-" else output)
    text = load_ptx(path)
    result = attach_ptx(
        text,
        output_name=output_name,
        filename=path,
        rename_registers=bool(getattr(args, "rename_registers", False)),
        replace=bool(getattr(args, "replace", False)),
        style=getattr(args, "style", None) or "readable",
        debug_target=getattr(args, "debug_target", True),
        only_mapped=bool(getattr(args, "only_mapped", False)),
        ptxas=getattr(args, "ptxas", None),
        predicates=int(getattr(args, "predicates", 0) or 0),
        max_registers=_or_auto(getattr(args, "max_registers", None)),
    )
    for w in result.warnings:
        print(f"ptxdwarf: warning: {path}: {w}", file=sys.stderr)
    _write_output(result.text, output)
    return 0


_EXIT_CODES = "exit codes: 0 ok, 1 findings or differences (lint, check), 2 bad input or tool error"


def _file_and_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="PTX text")
    p.add_argument("-o", "--output", metavar="OUT.ptx", help="output file (default: standard output)")


def _style_option(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--style", choices=("nvcc", "readable", "compact"), default="readable", help=help)


def _ptxas_options(p: argparse.ArgumentParser, what: str) -> None:
    which = p.add_mutually_exclusive_group()
    which.add_argument("--ptxas", metavar="PATH", help=f"{what} this ptxas (its release decides)")
    which.add_argument(
        "--ptxas-version",
        metavar="X.Y",
        help=f"{what} this ptxas release, such as 13.5 (default: any release measured)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ptxdwarf",
        description="Write, read and check the DWARF debug sections inside NVIDIA PTX.",
        epilog=_EXIT_CODES,
    )
    parser.add_argument("--version", action=_Version, help="show the version and which core runs, and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _reading_commands(sub)
    _writing_commands(sub)
    return parser


#: The sections ``dump`` can be limited to (:data:`ptxdwarf.dump.SECTIONS`), as its options say them.
_DUMP_SECTIONS = {
    "debug-info": "the DIEs of .debug_info",
    "debug-loc": "the location lists of .debug_loc",
    "debug-line": "the source line tables (a cubin's .debug_line, and cuTile's .nv.tileir.debug_line with its Tile IR text)",
    "debug-line-sass": "ptxas's SASS line table (a cubin's .nv_debug_line_sass)",
    "register-map": "ptxas's register map (a cubin's .nv_debug_info_reg_sass)",
}


def _reading_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The commands that read and check: dump, check, lint, stats."""
    p = sub.add_parser(
        "dump",
        help="show the debug info of PTX text, a cubin, a fatbin or a host object",
        description="Show the debug info of PTX text, a cubin, a fatbin or a host object "
        "(every device image the fatbin or the host object's .nv_fatbin holds).",
        epilog=_EXIT_CODES,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="PTX text, a cubin, a fatbin or a host object")
    p.add_argument("--json", action="store_true", help="JSON (format ptxdwarf-dump/1)")
    for name, what in _DUMP_SECTIONS.items():
        p.add_argument(
            f"--{name}", action="store_true", help=f"show {what} (with the other options given: those too)"
        )
    p.set_defaults(func=_cmd_dump)

    p = sub.add_parser(
        "check",
        help="compile with ptxas -g and compare the cubin's debug info with the PTX's",
        epilog=_EXIT_CODES,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="PTX text")
    p.add_argument("--arch", help="GPU architecture for ptxas, such as sm_75 (default: from .target)")
    p.add_argument(
        "--ptxas", help="the ptxas to run (default: $PTXAS, PATH, $CUDA_HOME, the nvidia-cuda-nvcc wheel)"
    )
    p.add_argument("--json", action="store_true", help="JSON report (format ptxdwarf-check/1)")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser(
        "lint", help="static checks of the debug sections against the PTX around them", epilog=_EXIT_CODES
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="PTX text")
    p.add_argument("--json", action="store_true", help="findings as JSON (one array for all files)")
    _ptxas_options(p, "report the traps of")
    p.set_defaults(func=_cmd_lint)

    p = sub.add_parser(
        "stats",
        help="how much of each variable's scope its location covers and a debugger can read",
        description="Per module, function and variable: the scope's code bytes, the share the DWARF location "
        "covers (as llvm-dwarfdump --statistics) and the share a debugger can read (the location joined with "
        "ptxas's register map). PTX is compiled with ptxas -g; cubins, fatbins and host objects are read as they are.",
        epilog="exit codes: 0 ok (with --compare: no readable share dropped), 1 with --compare: a readable share "
        "dropped by more than --threshold, 2 bad input or tool error",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="PTX text, a cubin, a fatbin or a host object")
    p.add_argument("--json", action="store_true", help="JSON (format ptxdwarf-stats/1)")
    p.add_argument("--brief", action="store_true", help="per function only, no line per variable")
    p.add_argument(
        "--compare", nargs=2, metavar=("OLD", "NEW"), help="the figures of two inputs side by side"
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=0.0,
        metavar="POINTS",
        help="with --compare: the drop of a readable share, in percentage points, that fails (default 0)",
    )
    p.add_argument("--html", metavar="OUT.html", help="also write a self-contained page of the figures")
    p.add_argument("--arch", help="GPU architecture for ptxas, such as sm_75 (default: from .target)")
    p.add_argument("--ptxas", help="the ptxas to run on PTX (default: found by release)")
    p.set_defaults(func=_cmd_stats)


def _writing_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The commands that write PTX: rewrite, fix, strip, attach."""
    p = sub.add_parser(
        "rewrite", help="decode and re-encode every debug section of a PTX file", epilog=_EXIT_CODES
    )
    _file_and_output(p)
    _style_option(p, "layout of the sections (default: readable)")
    p.add_argument(
        "--remap-path",
        action="append",
        metavar="OLD=NEW",
        help="rewrite source paths starting with OLD (.file, the compile unit's name and comp_dir) to start "
        "with NEW instead, and nothing else; repeatable, the first match wins",
    )
    p.set_defaults(func=_cmd_rewrite)

    p = sub.add_parser(
        "fix",
        help="repair what lint finds that ptxas fails on or gets wrong",
        description="Apply the repair of every lint finding that has one; each repair is one line on stderr, "
        "then each finding left ('not repaired: ...').",
        epilog="exit codes: 0 no lint error left, 1 an error could not be repaired, 2 bad input or tool error",
    )
    _file_and_output(p)
    _ptxas_options(p, "repair for")
    _style_option(p, "layout of sections that are encoded again (default: readable)")
    p.add_argument("--json", action="store_true", help="repairs and what remains as JSON on stderr")
    p.set_defaults(func=_cmd_fix)

    p = sub.add_parser(
        "strip",
        help="remove the debug information (or all of it but the line table)",
        epilog=_EXIT_CODES,
    )
    _file_and_output(p)
    p.add_argument(
        "--keep-lines",
        action="store_true",
        help="keep .file/.loc (ptxas optimises, and -lineinfo gives a line table)",
    )
    p.set_defaults(func=_cmd_strip)

    p = sub.add_parser(
        "attach",
        help="give PTX without debug info a line table and DWARF that point at the PTX itself",
        epilog=_EXIT_CODES,
    )
    p.add_argument("file", metavar="FILE", help="PTX text without debug info")
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT.ptx",
        help="output file (default: standard output; .file then names IN.debug.ptx)",
    )
    p.add_argument(
        "--rename-registers",
        action="store_true",
        help="rename registers whose names exceed 8 characters so that they can be described",
    )
    p.add_argument("--replace", action="store_true", help="replace the debug info the module already has")
    p.add_argument(
        "--no-debug-target",
        dest="debug_target",
        action="store_false",
        help="leave .target as it is (ptxas compiles '.target ..., debug' as with -g)",
    )
    p.add_argument(
        "--only-mapped",
        action="store_true",
        help="compile once with ptxas -g and describe only the registers its register map places "
        "in SASS (those a debugger can show)",
    )
    p.add_argument("--ptxas", metavar="PATH", help="ptxas for --only-mapped (default: found by release)")
    p.add_argument(
        "--predicates",
        type=int,
        default=0,
        metavar="N",
        help="describe at most N predicate registers per function, 0-51 (default 0: ptxas -g crashes "
        "on some functions whose debug info describes as few as 4)",
    )
    p.add_argument(
        "--max-registers",
        type=_register_count,
        metavar="N|all",
        help="describe at most N registers per function, or all (default: the longest-lived that keep "
        "ptxas -g within twice the memory of the code alone; it keeps each described register live)",
    )
    _style_option(p, "layout of the sections (default: readable)")
    p.set_defaults(func=_cmd_attach)


def _or_auto(value: int | str | None) -> int | str:
    return "auto" if value is None else value


def _register_count(text: str) -> int | str:
    """``--max-registers``: a count of 0 or more, ``all`` or ``auto``."""
    if text in ("all", "auto"):
        return text
    if text.isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"{text!r} is not a count, 'all' or 'auto'")


class _Version(argparse.Action):
    """``--version``: the release and which core runs (native or the pure-Python reference)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        from ._native import describe

        print(f"ptxdwarf {__version__} ({describe()})")
        parser.exit()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    _escape_stdout()
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # The reader went away (``| head``): not an error of ours. Whatever is still
        # buffered for stdout goes to the null device, not to a closed pipe at exit.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except KeyboardInterrupt:
        print("ptxdwarf: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the contract is one line, never a traceback
        return _error(exc)


_kept: list[object] = []


def _keep_until_exit(result: object) -> None:
    """Hold the last file's ``result`` until the process ends (:func:`run`): freeing a large
    module's register locations one by one costs a tenth of a second; a new file frees the
    one before."""
    _kept[:] = [result]


def run() -> None:
    """Console-script entry point.

    The process runs without the cyclic garbage collector, which would otherwise walk a large
    module's model again and again while it is built, and ends without tearing the model down
    (on a 30 MB module both cost seconds): the output is flushed and the process exits.
    """
    gc.disable()
    try:
        code = main()
    except BrokenPipeError:
        code = 0
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass
    os._exit(code)
