"""The ``ptxdwarf`` command line.

Exit codes: 0 ok, 1 findings or differences, 2 bad input or tool error. Errors
are one line ``ptxdwarf: error: ...`` on stderr, never a traceback (set
``PTXDWARF_DEBUG=1`` to see one).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from . import __version__
from .errors import PtxDwarfError

__all__ = ["main", "main_attach", "main_lint"]


def _write_output(text: str, output: str | None) -> None:
    if output is None or output == "-":
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="ascii", errors="surrogateescape", newline="")


def _cmd_dump(args: argparse.Namespace) -> int:
    from .api import read_all
    from .dump import DUMP_FORMAT, iter_json, iter_text

    found = read_all(args.file)
    out = sys.stdout
    if len(found) == 1:
        info = found[0][1]
        if args.json:
            for chunk in iter_json(info):
                out.write(chunk)
        else:
            for line in iter_text(info):
                out.write(line + "\n")
        return 0
    # A fatbin or host object: every device image, one after the other.
    if args.json:
        out.write('{"format": "%s", "source": "fatbin", "file": %s, "images": [' % (DUMP_FORMAT, json.dumps(args.file)))
        for i, (label, info) in enumerate(found):
            if i:
                out.write(", ")
            out.write('{"label": %s, "dump": ' % json.dumps(label))
            for chunk in iter_json(info):
                out.write(chunk.rstrip("\n") if chunk.endswith("\n") else chunk)
            out.write("}")
        out.write("]}\n")
    else:
        out.write(f"{args.file}: {len(found)} device images\n")
        for label, info in found:
            out.write(f"\n=== {label} ===\n")
            for line in iter_text(info):
                out.write(line + "\n")
    return 0


def _cmd_rewrite(args: argparse.Namespace) -> int:
    from .api import load_text, rewrite_ptx

    text = load_text(args.file)
    result = rewrite_ptx(text, style=args.style, filename=args.file)
    _write_output(result, args.output)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from .api import load_text
    from .check import check

    report = check(load_text(args.file), filename=args.file, arch=args.arch, ptxas=args.ptxas)
    if args.json:
        sys.stdout.write(report.to_json())
    else:
        for note in report.notes:
            print(f"note: {note}")
        for diff in report.differences:
            print(diff)
        print(report.summary())
    return 0 if report.consistent else 1


def main_lint(path: str, json_output: bool) -> int:
    """``ptxdwarf lint FILE [--json]``: print the findings; 0 when there are none, 1 otherwise.

    Bad input raises (:class:`~ptxdwarf.errors.PtxSyntaxError`, :class:`OSError`); the caller
    turns that into exit code 2.
    """
    from .api import load_text
    from .lint import lint

    findings = lint(load_text(path), filename=path)
    out = sys.stdout
    if json_output:
        json.dump([f.to_json() for f in findings], out, indent=1)
        out.write("\n")
    else:
        for f in findings:
            out.write(str(f) + "\n")
    return 1 if findings else 0


def _cmd_lint(args: argparse.Namespace) -> int:
    return main_lint(args.file, args.json)


def main_attach(args: Any) -> int:
    """``ptxdwarf attach IN.ptx [-o OUT.ptx] [--rename-registers] [--replace] [--style S]``.

    ``args`` has ``path`` (or ``file``), ``output``, ``rename_registers``, ``replace``,
    ``style`` and optionally ``debug_target`` (default True; ``--no-debug-target``).
    Warnings go to standard error as ``ptxdwarf: warning: ...``; the result to
    ``output`` or standard output. ``.file`` names the absolute path of
    ``output``, or of ``IN.debug.ptx`` beside the input when writing to standard
    output (redirect there so that a debugger finds the text its line table names).
    Errors raise (:func:`main` prints them and exits with 2).
    """
    from .api import load_text
    from .autodebug import attach_ptx, default_output_name

    path = str(getattr(args, "path", None) or args.file)
    output: str | None = getattr(args, "output", None)
    output_name = os.path.abspath(default_output_name(path) if output is None or output == "-" else output)
    text = load_text(path)
    result = attach_ptx(
        text,
        output_name=output_name,
        filename=path,
        rename_registers=bool(getattr(args, "rename_registers", False)),
        replace=bool(getattr(args, "replace", False)),
        style=getattr(args, "style", None) or "readable",
        debug_target=getattr(args, "debug_target", True),
    )
    for w in result.warnings:
        print(f"ptxdwarf: warning: {w}", file=sys.stderr)
    _write_output(result.text, output)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ptxdwarf",
        description="Write, read and check the DWARF debug sections inside NVIDIA PTX.",
    )
    parser.add_argument("--version", action="version", version=f"ptxdwarf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("dump", help="show the debug info of a PTX file or cubin")
    p.add_argument("file", metavar="FILE", help="PTX text or a cubin (ELF)")
    p.add_argument("--json", action="store_true", help="JSON (format ptxdwarf-dump/1)")
    p.set_defaults(func=_cmd_dump)

    p = sub.add_parser("rewrite", help="decode and re-encode every debug section of a PTX file")
    p.add_argument("file", metavar="IN.ptx")
    p.add_argument("-o", "--output", metavar="OUT.ptx", help="output file (default: standard output)")
    p.add_argument(
        "--style", choices=("nvcc", "readable", "compact"), default="readable", help="layout of the sections"
    )
    p.set_defaults(func=_cmd_rewrite)

    p = sub.add_parser("check", help="compile with ptxas -g and compare the cubin's debug info with the PTX's")
    p.add_argument("file", metavar="FILE.ptx")
    p.add_argument("--arch", help="GPU architecture for ptxas (default: from .target)")
    p.add_argument("--ptxas", help="the ptxas to run (default: $PTXAS, PATH, $CUDA_HOME, the nvidia-cuda-nvcc wheel)")
    p.add_argument("--json", action="store_true", help="JSON report (format ptxdwarf-check/1)")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("lint", help="static checks of the debug sections against the PTX around them")
    p.add_argument("file", metavar="FILE.ptx")
    p.add_argument("--json", action="store_true", help="findings as JSON")
    p.set_defaults(func=_cmd_lint)

    p = sub.add_parser(
        "attach", help="give PTX without debug info a line table and DWARF that point at the PTX itself"
    )
    p.add_argument("path", metavar="IN.ptx")
    p.add_argument(
        "-o", "--output", metavar="OUT.ptx", help="output file (default: standard output; .file then names IN.debug.ptx)"
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
    p.add_argument("--style", choices=("nvcc", "readable", "compact"), default="readable", help="layout of the sections")
    p.set_defaults(func=main_attach)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except PtxDwarfError as exc:
        print(f"ptxdwarf: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``| head``): not an error of ours. Whatever is still
        # buffered for stdout goes to the null device, not to a closed pipe at exit.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except OSError as exc:
        name = exc.filename if exc.filename is not None else ""
        reason = exc.strerror or str(exc)
        print(f"ptxdwarf: error: {name}: {reason}" if name else f"ptxdwarf: error: {reason}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ptxdwarf: interrupted", file=sys.stderr)
        return 130
    except RecursionError:
        print("ptxdwarf: error: input nests too deeply", file=sys.stderr)
        return 2
    except MemoryError:
        print("ptxdwarf: error: out of memory", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the contract is one line, never a traceback
        if os.environ.get("PTXDWARF_DEBUG"):
            raise
        print(
            f"ptxdwarf: error: internal error ({type(exc).__name__}: {exc}); "
            "please report it; PTXDWARF_DEBUG=1 shows the traceback",
            file=sys.stderr,
        )
        return 2


def run() -> None:
    """Console-script entry point."""
    try:
        code = main()
    except BrokenPipeError:
        code = 0
    sys.exit(code)
