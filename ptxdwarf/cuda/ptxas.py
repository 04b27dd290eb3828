"""Finding and running ptxas.

Where ptxas is looked for, in order: an explicit path, ``$PTXAS``, ``PATH``,
``$CUDA_HOME/bin`` and ``$CUDA_PATH/bin``, and the ``nvidia-cuda-nvcc`` wheel
(``nvidia/cu*/bin/ptxas``; ``pip install 'ptxdwarf[ptxas]'``). Given a module's
``.version``, :func:`find_ptxas` skips ptxas releases too old for it unless one was named.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import io
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ToolError

__all__ = [
    "ADDRESS_SIZE_32_BY_DEFAULT",
    "Ptxas",
    "PtxasCancelled",
    "PtxasFailed",
    "PtxasMessage",
    "PtxasResult",
    "PtxasRun",
    "candidate_paths",
    "find_ptxas",
    "wheel_ptxas",
]

INSTALL_HINT = "install it with: pip install 'ptxdwarf[ptxas]' (or put CUDA's bin on PATH, or set PTXAS)"


def wheel_ptxas() -> list[str]:
    """ptxas executables shipped by installed ``nvidia-cuda-nvcc`` wheels, newest first."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    found: list[str] = []
    for root in spec.submodule_search_locations:
        for pattern in ("cu*/bin/ptxas", "cuda_nvcc/bin/ptxas"):
            found.extend(sorted(glob.glob(os.path.join(root, pattern)), reverse=True))
    return [p for p in found if os.access(p, os.X_OK)]


def candidate_paths(explicit: str | None = None) -> list[tuple[str, str]]:
    """(where, path) pairs in the order ptxas is looked for."""
    out: list[tuple[str, str]] = []
    if explicit:
        out.append(("--ptxas", explicit))
    env = os.environ.get("PTXAS")
    if env:
        out.append(("$PTXAS", env))
    on_path = shutil.which("ptxas")
    if on_path:
        out.append(("PATH", on_path))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            out.append((f"${var}", os.path.join(root, "bin", "ptxas")))
    out.extend(("nvidia-cuda-nvcc wheel", p) for p in wheel_ptxas())
    return out


def find_ptxas(
    explicit: str | None = None, *, version: tuple[int, int] | None = None, release: str | None = None
) -> Ptxas:
    """The first ptxas found (see the module docstring); :class:`ToolError` if none.

    With ``version`` (a module's ``.version``), the first one found that takes it, when the
    first one found does not and ptxas was not named (``explicit``, ``$PTXAS``): nvcc 13.5
    writes ``.version 9.5``, which ptxas 13.0 refuses. With ``release`` (``13.5``), the first
    one found of that release; :class:`ToolError` naming the releases found if none is.
    """
    if release is not None:
        return _of_release(explicit, release)
    first: Ptxas | None = None
    for where, path in candidate_paths(explicit):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            tool = _known(os.path.abspath(path))
            if where in ("--ptxas", "$PTXAS") or version is None or tool.max_version >= version:
                return tool
            first = first or tool
            continue
        if where in ("--ptxas", "$PTXAS"):
            raise ToolError(f"ptxas given by {where} is not an executable file: {path}")
    if first is not None:
        return first
    raise ToolError(f"ptxas not found; {INSTALL_HINT}")


def _of_release(explicit: str | None, release: str) -> Ptxas:
    """The first ptxas found whose release is ``release``."""
    found: list[str] = []
    for _where, path in candidate_paths(explicit):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            tool = _known(os.path.abspath(path))
            if tool.version == release:
                return tool
            found.append(f"{tool.version} ({path})")
    seen = ", ".join(dict.fromkeys(found)) or "none"
    raise ToolError(f"no ptxas {release} found (found: {seen}); {INSTALL_HINT}")


_KNOWN: dict[tuple[str, int, int], Ptxas] = {}


def _known(path: str) -> Ptxas:
    """The :class:`Ptxas` of ``path``, made once per file (its probes, such as the version and
    the architectures, are asked once per process, not once per module checked)."""
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    tool = _KNOWN.get(key)
    if tool is None:
        tool = _KNOWN[key] = Ptxas(path)
    return tool


@dataclass(frozen=True)
class PtxasMessage:
    """One diagnostic line of ptxas."""

    severity: str
    text: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.severity}: {self.text}"


@dataclass
class PtxasResult:
    """A successful compilation: the cubin and ptxas's warnings."""

    cubin: bytes = field(repr=False)
    arch: str
    messages: list[PtxasMessage] = field(default_factory=list)
    note: str | None = None
    ptxas: Ptxas | None = field(default=None, compare=False)
    """The ptxas that compiled it."""


_MESSAGE = re.compile(r"^ptxas\s+(?P<file>.*?)(?:, line (?P<line>\d+))?;\s*(?P<sev>\w+)\s*:\s*(?P<text>.*)$")
_PLAIN = re.compile(r"^ptxas\s+(?P<sev>fatal|error|warning|info)\s*:\s*(?P<text>.*)$", re.I)


def parse_messages(stderr: str) -> list[PtxasMessage]:
    """ptxas's diagnostics, one per line, with their PTX line numbers."""
    out = []
    for raw in stderr.split("\n"):  # not splitlines(): a message may quote a vertical tab of the PTX
        raw = raw.strip()
        if not raw:
            continue
        m = _MESSAGE.match(raw)
        if m is not None:
            line = int(m.group("line")) if m.group("line") else None
            out.append(PtxasMessage(m.group("sev").lower(), m.group("text").strip(), line))
            continue
        m = _PLAIN.match(raw)  # no file and line: "ptxas warning :  .debug_abbrev section not found"
        if m is not None:
            out.append(PtxasMessage(m.group("sev").lower(), m.group("text").strip()))
        else:
            out.append(PtxasMessage("info", raw))
    return out


_SM = re.compile(r"^sm_(\d+)([a-z]?)$")
#: The architectures for which ptxas of CUDA 12 takes a module without ``.address_size`` as
#: 32-bit, and so refuses it with ``-g`` (quirk address-size-default); CUDA 13 has none of them.
ADDRESS_SIZE_32_BY_DEFAULT = frozenset({"sm_50", "sm_52", "sm_53"})
#: ptxas refusing a ``.version`` newer than it takes: ``... current version is '8.4'``.
_CURRENT_VERSION = re.compile(r"current version is '(\d+)\.(\d+)'")


class Ptxas:
    """One ptxas executable."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"Ptxas({self.path!r})"

    @functools.cached_property
    def version(self) -> str:
        """``13.0`` (the release ptxas prints)."""
        out = self._run_plain(["--version"])
        m = re.search(r"release (\d+\.\d+)", out)
        return m.group(1) if m else "unknown"

    @functools.cached_property
    def max_version(self) -> tuple[int, int]:
        """The newest PTX ISA ``.version`` this ptxas takes: ``ptxas --list-version``, or
        where there is no such option (CUDA 12 and older) what ptxas names as its current
        version when refusing a module of ``.version 99.9``; (0, 0) if neither says."""
        found = re.findall(r"^(\d+)\.(\d+)\s*$", self._run_plain(["--list-version"]), re.M)
        if found:
            return max((int(a), int(b)) for a, b in found)
        return self.refused_version()

    def refused_version(self) -> tuple[int, int]:
        """The current PTX ISA version ptxas names when it refuses ``.version 99.9``; (0, 0)
        if it names none."""
        with tempfile.TemporaryDirectory(prefix="ptxdwarf-") as tmp:
            probe = os.path.join(tmp, "probe.ptx")
            with open(probe, "w") as fh:
                fh.write(".version 99.9\n.target sm_75\n.address_size 64\n")
            said = self._run_plain([probe, "-o", os.path.join(tmp, "probe.cubin")])
        m = _CURRENT_VERSION.search(said)
        return (int(m.group(1)), int(m.group(2))) if m else (0, 0)

    @functools.cached_property
    def architectures(self) -> list[str]:
        """The ``sm_XX`` names ptxas accepts for ``-arch``, oldest first."""
        out = self._run_plain(["--help"])
        m = re.search(r"--gpu-name.*?Allowed values for this option:(.*?)\.\s*\n", out, re.S)
        names = re.findall(r"'(sm_\d+[a-z]?)'", m.group(1) if m else "")
        return sorted(set(names), key=_arch_key)

    def _run_plain(self, args: list[str]) -> str:
        try:
            proc = subprocess.run(
                [self.path, *args], capture_output=True, text=True, errors="backslashreplace", timeout=60
            )
        except OSError as exc:
            raise ToolError(f"cannot run ptxas {self.path}: {exc.strerror or exc}") from None
        except subprocess.TimeoutExpired:
            raise ToolError(f"ptxas {self.path} did not answer {' '.join(args)} in 60 s") from None
        return proc.stdout + proc.stderr

    def choose_arch(
        self, target: Sequence[str], arch: str | None = None, *, address_size: int | None = 64
    ) -> tuple[str, str | None]:
        """The ``-arch`` to use and a note when it differs from the module's ``.target``.

        An explicit ``arch`` that this ptxas does not support is an error naming the
        oldest it does; a ``.target`` older than that compiles for the oldest, or for
        the oldest after sm_53 when the module states no ``.address_size``
        (``address_size=None``): ptxas 12.x takes such a module as 32-bit for sm_50 to
        sm_53 and cannot compile it with ``-g`` (:data:`ADDRESS_SIZE_32_BY_DEFAULT`).
        """
        supported = [a for a in self.architectures if not a.endswith(("a", "f"))] or self.architectures
        if arch is not None:
            if self.architectures and arch not in self.architectures:
                raise ToolError(self._unsupported(arch, supported))
            return arch, None
        wanted = next((t for t in target if _SM.match(t)), None)
        if wanted is None:
            default = supported[0] if supported else "sm_75"
            return default, None
        if not self.architectures or wanted in self.architectures:
            return wanted, None
        key = _arch_key(wanted)
        newer = [a for a in supported if _arch_key(a) >= key]
        if address_size is None:
            newer = [a for a in newer if a not in ADDRESS_SIZE_32_BY_DEFAULT]
        if not newer:
            raise ToolError(f"ptxas {self.version} supports no architecture at or above {wanted}")
        why = (
            f"; not {supported[0]}, for which ptxas {self.version} takes a module without .address_size as 32-bit"
            if newer[0] != supported[0] and supported[0] in ADDRESS_SIZE_32_BY_DEFAULT
            else ""
        )
        return newer[0], (
            f".target {wanted} is not supported by ptxas {self.version} (oldest: {supported[0]}); "
            f"compiled for {newer[0]}{why}"
        )

    def likely_arch(
        self, target: Sequence[str], arch: str | None = None, *, address_size: int | None = 64
    ) -> str:
        """What :meth:`choose_arch` is likely to give, without asking ptxas for its
        architectures when they are not known yet (for starting ptxas early): ``arch``, else
        the module's first ``sm_XX`` target, as if this ptxas supported it. Never an error:
        :meth:`choose_arch` says what is wrong with the module's own."""
        if "architectures" in self.__dict__:
            try:
                return self.choose_arch(target, arch, address_size=address_size)[0]
            except ToolError:
                pass
        if arch is not None:
            return arch
        wanted = next((t for t in target if _SM.match(t)), None)
        if wanted is None:
            return self.choose_arch(target, arch, address_size=address_size)[0]
        return wanted

    def _unsupported(self, arch: str, supported: Sequence[str]) -> str:
        """Why ``--arch arch`` cannot be used, with what to use instead."""
        if not supported:
            return f"ptxas {self.version} does not support {arch}"
        if arch.isdigit() and f"sm_{arch}" in self.architectures:
            return f"--arch {arch}: did you mean sm_{arch}?"
        oldest, newest = supported[0], supported[-1]
        if not _SM.match(arch):
            return f"{arch} is not a GPU architecture; ptxas {self.version} supports {oldest} to {newest}"
        if _arch_key(arch) > _arch_key(newest):
            return f"ptxas {self.version} does not support {arch}; the newest it supports is {newest}"
        if _arch_key(arch) < _arch_key(oldest):
            return f"ptxas {self.version} does not support {arch}; the oldest it supports is {oldest}"
        return f"ptxas {self.version} does not support {arch}; it supports {', '.join(supported)}"

    def compile(
        self,
        ptx: str,
        *,
        arch: str,
        debug: bool = True,
        relocatable: bool = False,
        filename: str = "input.ptx",
        extra: Sequence[str] = (),
        timeout: float = 600,
        cancel: threading.Event | None = None,
        started: threading.Event | None = None,
    ) -> PtxasResult:
        """Compile PTX text; :class:`PtxasFailed` with ptxas's messages if it fails.

        Setting ``cancel`` (from another thread) stops ptxas: :class:`PtxasCancelled`.
        ``started`` is set once the ptxas process runs, or failed to start.
        """
        try:
            run = self.start(
                ptx,
                arch=arch,
                debug=debug,
                relocatable=relocatable,
                filename=filename,
                extra=extra,
                timeout=timeout,
            )
        finally:
            if started is not None:
                started.set()  # also when ptxas could not be started
        with run:
            return run.wait(cancel)

    def start(
        self,
        ptx: str,
        *,
        arch: str,
        debug: bool = True,
        relocatable: bool = False,
        filename: str = "input.ptx",
        extra: Sequence[str] = (),
        timeout: float = 600,
    ) -> PtxasRun:
        """Start compiling PTX text and return at once (see :meth:`compile`): the
        :class:`PtxasRun` gives the cubin, and stops ptxas when left unfinished."""
        return PtxasRun(self, ptx, arch, debug, relocatable, filename, extra, timeout)


class PtxasRun:
    """A ptxas compile under way (:meth:`Ptxas.start`); a context manager that stops ptxas
    and removes its files on leaving."""

    def __init__(
        self,
        tool: Ptxas,
        ptx: str,
        arch: str,
        debug: bool,
        relocatable: bool,
        filename: str,
        extra: Sequence[str],
        timeout: float,
    ) -> None:
        self.tool, self.arch, self.filename, self.timeout = tool, arch, filename, timeout
        self._tmp = tempfile.TemporaryDirectory(prefix="ptxdwarf-")
        self._src = Path(self._tmp.name) / "input.ptx"
        self._out = Path(self._tmp.name) / "output.cubin"
        self._src.write_bytes(ptx.encode("utf-8", "surrogateescape"))
        args = [tool.path, f"-arch={arch}", str(self._src), "-o", str(self._out)]
        if debug:
            args.insert(1, "-g")
        if relocatable:
            args.insert(1, "-c")
        args[1:1] = list(extra)
        self._deadline = time.monotonic() + timeout
        try:
            self._child: _Child | None = _Child(args)
        except OSError as exc:
            self._tmp.cleanup()
            raise ToolError(f"cannot run ptxas {tool.path}: {exc.strerror or exc}") from None

    def written(self) -> bytes | None:
        """The cubin as soon as ptxas has written all of it (the length its ELF header gives),
        which on a large module is a third of a second before ptxas has freed its memory and
        ended; None when ptxas ends first. What :meth:`wait` gives may still differ from it."""
        from .cubin import written_size  # loaded after ptxas starts, with the cubin reader

        child = self._child
        if child is None:
            return None
        size = None
        while child.running() and time.monotonic() < self._deadline:
            try:
                have = os.stat(self._out).st_size
            except OSError:
                have = 0
            if size is None and have >= 64:
                with open(self._out, "rb") as fh:
                    size = written_size(fh.read(64))
                if size is None:
                    return None
            if size is not None and have >= size:
                with open(self._out, "rb") as fh:
                    data = fh.read()
                return data if len(data) == size else None
            time.sleep(_POLL if have else 5 * _POLL)  # a cubin once begun is written in a tenth of a second
        return None

    def wait(self, cancel: threading.Event | None = None, *, same_as: bytes | None = None) -> PtxasResult:
        """The compiled cubin once ptxas ends; :class:`PtxasFailed`, or :class:`PtxasCancelled`
        when ``cancel`` is set meanwhile. ``same_as``: bytes the cubin is likely to be (what
        :meth:`written` gave), which the result holds, not a copy, when it is."""
        child = self._child
        if child is None:
            raise PtxasCancelled("ptxas was stopped: its result is no longer needed")
        try:
            returncode, stderr = child.wait(self._deadline - time.monotonic(), cancel)
        except subprocess.TimeoutExpired:
            raise ToolError(f"ptxas did not finish {self.filename} in {self.timeout:.0f} s") from None
        finally:
            self._child = None
        messages = parse_messages(stderr.replace(str(self._src), self.filename))
        if returncode != 0 or not self._out.exists():
            raise PtxasFailed(self.filename, messages, self.tool, returncode)
        cubin = same_as if same_as is not None and _holds(self._out, same_as) else self._out.read_bytes()
        return PtxasResult(cubin, self.arch, messages, ptxas=self.tool)

    def stop(self) -> None:
        """Stop ptxas if it still runs, and remove its files."""
        if self._child is not None:
            self._child.kill()
            self._child = None
        self._tmp.cleanup()

    def __enter__(self) -> PtxasRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _holds(path: Path, data: bytes) -> bool:
    """Whether the file ``path`` holds ``data``, read a piece at a time into one buffer (a large
    cubin read whole is a copy of tens of megabytes made only to be compared)."""
    piece = bytearray(1 << 20)
    with open(path, "rb", buffering=0) as f:
        if os.fstat(f.fileno()).st_size != len(data):
            return False
        at = 0
        while at < len(data):
            n = f.readinto(piece)
            if not n or (piece if n == len(piece) else piece[:n]) != data[at : at + n]:
                return False
            at += n
        return not f.read(1)


#: How often :meth:`PtxasRun.written` looks at the cubin's size once ptxas writes it, in seconds.
_POLL = 0.002


class _Child:
    """A process whose standard error goes to an unnamed file, which no thread has to read for
    the process not to block on a full pipe."""

    def __init__(self, args: list[str]) -> None:
        self.args = args
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by kill(), when the process is done
        try:
            self._process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self._stderr)
        except BaseException:
            self._stderr.close()
            raise

    def running(self) -> bool:
        return self._process.poll() is None

    def wait(self, timeout: float, cancel: threading.Event | None = None) -> tuple[int, str]:
        """The exit code and standard error once the process ends (:class:`PtxasCancelled` when
        ``cancel`` is set first, ``subprocess.TimeoutExpired`` after ``timeout`` seconds: the
        process is then killed)."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                if cancel is not None and cancel.is_set():
                    raise PtxasCancelled("ptxas was stopped: its result is no longer needed")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout)
                try:
                    code = self._process.wait(min(left, 0.05) if cancel is not None else left)
                except subprocess.TimeoutExpired:
                    continue
                self._stderr.seek(0)
                # As a text pipe reads it; ptxas may print bytes that are not UTF-8 (quirk
                # strp-label-reused: "label '<garbage>' invalid").
                with io.TextIOWrapper(self._stderr, errors="backslashreplace") as text:
                    return code, text.read()
        finally:
            self.kill()

    def kill(self) -> None:
        """Kill the process if it still runs, and close its standard error."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._stderr.close()


class PtxasCancelled(ToolError):
    """ptxas was stopped through ``Ptxas.compile(cancel=...)``."""


class PtxasFailed(ToolError):
    """ptxas rejected a module, or died on it (:attr:`crashed`); ``messages`` holds its diagnostics."""

    def __init__(
        self, filename: str, messages: list[PtxasMessage], ptxas: Ptxas, returncode: int = 1
    ) -> None:
        self.filename = filename
        self.messages = messages
        self.ptxas = ptxas
        self.returncode = returncode
        first = next((m for m in messages if m.severity in ("error", "fatal")), None)
        if first is None and not self.crashed:  # an unprefixed line ("Error in get_form_value default")
            first = next((m for m in messages if m.severity == "info"), None)
        if self.crashed:
            text = f"ptxas {ptxas.version} crashed ({_signal_name(-returncode)})"
            if first is not None:
                text += f" after: {first.text}"
        elif first is None:
            text = f"ptxas failed (exit code {returncode}) without an error message"
        elif first.line:
            text = f"ptxas: {first.severity}: {first.text}"
        else:
            text = f"ptxas: {first.text}"
        where = f"{filename}:{first.line}" if first is not None and first.line else filename
        super().__init__(text, where=where)

    @property
    def crashed(self) -> bool:
        """ptxas was killed by a signal (SIGSEGV ...)."""
        return self.returncode < 0


def _signal_name(number: int) -> str:
    """``SIGSEGV, signal 11``."""
    try:
        return f"{signal.Signals(number).name}, signal {number}"
    except ValueError:
        return f"signal {number}"


def _arch_key(name: str) -> tuple[int, str]:
    m = _SM.match(name)
    return (int(m.group(1)), m.group(2)) if m else (0, name)


def compile_text(
    text: str,
    *,
    ptxas: Ptxas | str | None = None,
    arch: str | None = None,
    debug: bool = True,
    extra: Sequence[str] = (),
    filename: str | None = None,
    release: str | None = None,
) -> tuple[PtxasResult, str]:
    """Compile PTX ``text`` with the ptxas that takes its ``.version`` (unless ``ptxas``
    names one, or ``release`` a release: :func:`find_ptxas`), for its ``.target`` (unless
    ``arch``), with ``-c`` when the module needs it; the result and the architecture compiled
    for. ``filename`` names the text in errors."""
    from ..ptx.reader import parse_ptx
    from ..ptx.symbols import needs_compile_only

    module = parse_ptx(text, filename or "<ptx>")
    tool = ptxas if isinstance(ptxas, Ptxas) else find_ptxas(ptxas, version=module.version, release=release)
    chosen, _note = tool.choose_arch(module.target, arch, address_size=module.address_size)
    result = tool.compile(
        text,
        arch=chosen,
        debug=debug,
        relocatable=needs_compile_only(module),
        extra=extra,
        filename=filename or "input.ptx",
    )
    return result, chosen
