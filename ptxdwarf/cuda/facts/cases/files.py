"""Cases on sections, .file, characters, .version/.target and the -g/debug switches."""

from __future__ import annotations

from .. import harness as h
from ..case import accepts, bytes_at, rejects
from ..harness import ABBREV, Run, info, module, section
from ._base import case, with_info

__all__: list[str] = []

# --- sections --------------------------------------------------------------------------------------

case("duplicate-section.second-str-dropped", "duplicate-section", "a second .debug_str block -> silently dropped",
     lambda: with_info(section(".debug_str", ".b8 1, 2"), section(".debug_str", ".b8 3, 4")),
     bytes_at(".debug_str", 0, b"\x01\x02", size=4))
case("duplicate-section.second-info", "duplicate-section", "a second .debug_info block -> a second ELF section named .debug_info",
     lambda: module(ABBREV, info()[0], info()[0]),
     lambda run: (run.cubin is not None and run.cubin.count(".debug_info") == 2,
                  f"{run.cubin.count('.debug_info')} .debug_info sections" if run.cubin else run.summary()))
case("producer-debug-line.discarded", "producer-debug-line", "a producer's .debug_line -> discarded, ptxas writes its own",
     lambda: with_info(section(".debug_line", ".b8 1, 2, 3, 4")),
     bytes_at(".debug_line", 0, lambda got: got[:4] != b"\x01\x02\x03\x04", size=4))
case("producer-debug-frame.fatal", "producer-debug-frame", "a non-empty .debug_frame -> fatal 'overlapping non-identical data'",
     lambda: with_info(section(".debug_frame", ".b8 1, 2, 3, 4")), rejects("overlapping non-identical data"))
case("sections.debug-frame-empty", "producer-debug-frame", "an empty .debug_frame block -> accepted",
     lambda: with_info(section(".debug_frame", "")), accepts())
case("sections.unknown-name", "sections.any-name", ".section .debug_foo -> copied to the cubin as given",
     lambda: with_info(section(".debug_foo", ".b8 7, 8")), bytes_at(".debug_foo", 0, b"\x07\x08"))
case("sections.no-abbrev", "sections.no-abbrev", ".debug_info without .debug_abbrev -> the CU is skipped with a warning",
     lambda: module(info()[0]), lambda run: (run.returncode == 0 and "debug_abbrev section not found" in run.stderr, run.summary()))

# --- .file, characters, header ---------------------------------------------------------------------

_FILES = '.file 1 "a.cu"\n.file 3 "c.cu"\n.file 7 "g.cu"'


def _file_gaps(run: Run) -> tuple[bool, str]:
    data = run.cubin.get(".debug_line") if run.cubin else None
    if data is None:
        return False, run.summary()
    _, files, used = h.line_files(data)
    names = [f[0].decode() for f in files]
    return names == ["a.cu", "c.cu", "g.cu"] and 7 in used, f"file_names {names}; rows use files {sorted(used)}"


case("file-index.gaps", "file-index", ".file 1, 3, 7 and .loc 7 -> file_names [a, c, g] numbered 1-3, rows still say 7",
     lambda: with_info(files=_FILES, code=h.CODE.replace(".loc 1 5 0", ".loc 7 5 0")), _file_gaps)
case("file-index.duplicate", "file-index", "two .file 1 -> 'Duplicate file index'",
     lambda: with_info(files='.file 1 "a.cu"\n.file 1 "b.cu"'), rejects("Duplicate file index"))
case("file-two-strings.llvm", "file-two-strings", '.file 1 "dir" "name" -> parse error',
     lambda: with_info(files='.file 1 "/tmp" "t.cu"'), rejects("Parsing error"))
case("non-ascii.comment", "non-ascii", "a non-ASCII byte in a comment -> fatal 'Unexpected non-ASCII character'",
     lambda: with_info().encode("ascii") + "// caf\u00e9\n".encode("utf-8"), rejects("non-ASCII character"))
case("non-ascii.file-name", "non-ascii", "a non-ASCII .file name -> fatal 'Unexpected non-ASCII character'",
     lambda: with_info(files='.file 1 "caf\u00e9.cu"').encode("utf-8"), rejects("non-ASCII character"))
case("syntax.nul-in-comment", "syntax.nul", "a NUL byte in a comment -> fatal 'Unexpected EOF'",
     lambda: with_info().encode("ascii") + b"// a\x00b\n", rejects("Unexpected EOF"))
case("syntax.crlf", "syntax.crlf", "CRLF line ends -> accepted",
     lambda: with_info(section(".debug_str", ".b8 1")).replace("\n", "\r\n"), accepts())

_S = section(".debug_str", "$L__a: .b8 97, 0\n$L__b: .b8 98, 0\n.b32 $L__b-$L__a")
case("version-too-low.labels-7.0", "version-too-low", "a label in a section at .version 6.5 -> 'requires PTX ISA .version 7.0'",
     lambda: with_info(section(".debug_str", "$L__a: .b8 97, 0"), version="6.5"), rejects(r"Defining labels in \.section' requires PTX ISA \.version 7\.0"))
case("version-too-low.difference-7.5", "version-too-low", "$L__b-$L__a at .version 7.4 -> 'requires PTX ISA .version 7.5'",
     lambda: with_info(_S, version="7.4"), rejects(r"labels1 - labels2 expression in \.section' requires PTX ISA \.version 7\.5"))
case("version-too-low.difference-at-7.5", "version-too-low", "$L__b-$L__a at .version 7.5 -> accepted",
     lambda: with_info(_S, version="7.5"), accepts())
case("header.max-version-9.0", "header.max-version", ".version 9.1 -> 'Unsupported .version 9.1' (13.0 reads up to 9.0)",
     lambda: with_info(version="9.1"), rejects(r"Unsupported \.version 9\.1"))
case("target-not-debug.dropped", "target-not-debug", "no -g and .target without debug -> no .debug_info in the cubin",
     lambda: with_info(), accepts(lambda r: r.cubin is not None and r.cubin.get(".debug_info") is None), args=("-arch=sm_75",))
case("target-not-debug.debug-target", "target-not-debug", "no -g, .target sm_75, debug -> .debug_info kept",
     lambda: with_info(target="sm_75, debug"), accepts(lambda r: r.cubin is not None and r.cubin.get(".debug_info") is not None), args=("-arch=sm_75",))
case("debug-target-without-info.error", "debug-target-without-info", ".target sm_75, debug and no debug section -> 'Debug information not found'",
     lambda: module(target="sm_75, debug"), rejects("Debug information not found in presence of .target debug"))

