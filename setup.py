"""The native core: every ``ptxdwarf/_native/*.c`` is one extension module, ``ptxdwarf._native.<name>``.

Without a C compiler the build goes on without them and ptxdwarf runs its pure-Python
reference (``ptxdwarf --version`` says which core runs). ``PTXDWARF_REQUIRE_NATIVE=1`` makes a
failed compile an error (CI sets it); ``PTXDWARF_NATIVE_CFLAGS`` adds compiler flags (the
sanitizer build, ``tools/sanitize.sh``).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from setuptools import Extension, setup

NATIVE = Path("ptxdwarf") / "_native"
REQUIRED = os.environ.get("PTXDWARF_REQUIRE_NATIVE", "") not in ("", "0")
FLAGS = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fno-strict-aliasing"]
FLAGS += shlex.split(os.environ.get("PTXDWARF_NATIVE_CFLAGS", ""))
HEADERS = sorted(str(p) for p in NATIVE.glob("*.h"))

setup(
    ext_modules=[
        Extension(
            f"ptxdwarf._native.{source.stem}",
            [str(source)],
            depends=HEADERS,
            extra_compile_args=FLAGS,
            extra_link_args=shlex.split(os.environ.get("PTXDWARF_NATIVE_CFLAGS", "")),
            optional=not REQUIRED,
        )
        for source in sorted(NATIVE.glob("*.c"))
    ]
)
