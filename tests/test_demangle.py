"""The demangler (:mod:`ptxdwarf.demangle`): the C++ runtime's ``__cxa_demangle``
compared with GNU ``c++filt``, on the recorded table of ``fixtures/nodebug/demangle.tsv``
and, live, on every ``_Z`` name of the PTX fixtures, the table and seeded mutations."""

from __future__ import annotations

import random
import re
import shutil
import subprocess

import pytest
from conftest import FIXTURES

from ptxdwarf import demangle as demangle_module
from ptxdwarf.api import read_ptx
from ptxdwarf.autodebug import attach_ptx
from ptxdwarf.demangle import demangle
from ptxdwarf.dwarf import AT, TAG

TABLE = FIXTURES / "nodebug" / "demangle.tsv"

# ``__cxa_demangle`` has no verbose mode: these standard abbreviations print short where
# c++filt spells them out (see the module docstring).
_VERBOSE = {
    "std::string": "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
    "std::istream": "std::basic_istream<char, std::char_traits<char> >",
    "std::ostream": "std::basic_ostream<char, std::char_traits<char> >",
    "std::iostream": "std::basic_iostream<char, std::char_traits<char> >",
}
_SHORT = re.compile(r"std::(?:string|istream|ostream|iostream)\b")

# Manglings newer than libstdc++ 12's demangler (binutils 2.40's reads them).
NEWER_MANGLINGS = frozenset({"_Z1fDF16_"})

# Neither c++filt nor the runtime demangles these.
NOT_DEMANGLED = ("", "_Z", "main", "_Z1fv1", "_Z1fPFviE_", "_Z3foo$x", "i", "Pc", "_GLOBAL__sub_I_a.cu")

# The names the issue named: an extended lambda, a parameter pack, decltype, clone suffixes.
REQUIRED = {
    "_Z5applyIZ4hostPfEUlfE_EvS0_iT_": "void apply<host(float*)::{lambda(float)#1}>(float*, int, host(float*)::{lambda(float)#1})",
    "_Z8variadicILi3EJifPdEEvDpT0_": "void variadic<3, int, float, double*>(int, float, double*)",
    "_Z1fIiEDTcl1gfp_EET_": "decltype (g({parm#1})) f<int>(int)",
    "_Z3foov.cold": "foo() [clone .cold]",
    "_Z3fooi.constprop.0": "foo(int) [clone .constprop.0]",
    "_ZNK1AE": "A const",
}


def _agrees(ours: str | None, cxxfilt: str) -> bool:
    """``ours`` is c++filt's text, up to the spelling of the four std abbreviations."""
    return ours is not None and (
        ours == cxxfilt or _SHORT.sub(lambda m: _VERBOSE[m.group(0)], ours) == cxxfilt
    )


def _table() -> dict[str, str]:
    rows = {}
    for line in TABLE.read_text().splitlines():
        if not line.startswith("#"):
            mangled, text = line.split("\t")
            rows[mangled] = text
    return rows


def _fixture_names() -> list[str]:
    """Every ``_Z`` word of every PTX fixture (functions, parameters, variables, calls)."""
    names: set[str] = set()
    for path in FIXTURES.rglob("*.ptx"):
        names.update(re.findall(r"\b_Z[A-Za-z0-9_$.]*[A-Za-z0-9_$]", path.read_text()))
    return sorted(names)


def _cxxfilt(names: list[str]) -> dict[str, str]:
    tool = shutil.which("c++filt")
    if tool is None:
        pytest.skip("c++filt (GNU binutils) is not installed: apt-get install binutils")
    proc = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    lines = proc.stdout.splitlines()
    assert len(lines) == len(names)
    return dict(zip(names, lines, strict=False))


def test_required_names() -> None:
    for mangled, text in REQUIRED.items():
        assert demangle(mangled) == text, mangled


def test_declines() -> None:
    for name in NOT_DEMANGLED:
        assert demangle(name) is None, name


def test_table() -> None:
    """The recorded c++filt 2.40 output of 219 names (constructs, fixtures, g++ and nvcc
    names): each comes out the same, or not at all for a mangling newer than the runtime."""
    rows = _table()
    assert len(rows) > 200
    wrong = [(m, demangle(m), t) for m, t in rows.items() if not _agrees(demangle(m), t)]
    assert [w for w in wrong if not (w[0] in NEWER_MANGLINGS and w[1] is None)] == []
    short = [m for m, t in rows.items() if demangle(m) not in (t, None)]
    assert short == ["_Z1fSd", "_Z1fSi", "_Z1fSo", "_Z1fSs", "_ZNSolsEi", "_ZNSs4sizeEv"]


def test_against_cxxfilt() -> None:
    """The installed ``c++filt`` on every fixture name, the table, the declined names and
    3000 seeded mutations: fixture and table names come out as c++filt prints them; a
    mutation c++filt demangles comes out as c++filt prints it or not at all. (Mutations
    c++filt rejects are the runtime's business: libstdc++ 12 names 2 of the 3000, e.g.
    ``_ZNSAolsEi``, that binutils 2.40 rejects.)"""
    fixture_names = _fixture_names()
    assert len(fixture_names) > 150
    table = sorted(_table())
    rng = random.Random(1)
    base = table + fixture_names
    alphabet = "0123456789_ESINKPRVOFAZTLJBCDXabcdefhijlmnorstvwxyz"
    mutants: set[str] = set()
    while len(mutants) < 5000:
        n = rng.choice(base)
        i = rng.randrange(2, len(n))
        kind = rng.random()
        if kind < 0.33:
            mutants.add(n[:i] + n[i + 1 :])
        elif kind < 0.66:
            mutants.add(n[:i] + rng.choice(alphabet) + n[i:])
        else:
            mutants.add(n[:i] + rng.choice(alphabet) + n[i + 1 :])
    names = sorted(set(base) | mutants | set(REQUIRED) | {n for n in NOT_DEMANGLED if n})
    reference = _cxxfilt(names)

    strict = [n for n in set(fixture_names) | set(table) | set(REQUIRED) if n not in NEWER_MANGLINGS]
    wrong = [
        (n, demangle(n), reference[n])
        for n in strict
        if reference[n] != n and not _agrees(demangle(n), reference[n])
    ]
    assert not wrong, wrong[:5]
    kept = [n for n in fixture_names if reference[n] == n and demangle(n) is not None]
    assert not kept, kept[:5]
    assert sum(1 for n in fixture_names if demangle(n)) >= 35
    assert [n for n in NOT_DEMANGLED if n and reference[n] != n] == []

    readable = [n for n in mutants if reference[n] != n]
    assert len(readable) > 300
    guessed = [
        (n, demangle(n), reference[n])
        for n in readable
        if demangle(n) is not None and not _agrees(demangle(n), reference[n])
    ]
    assert not guessed, guessed[:5]


def test_without_a_cxx_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no C++ runtime loads, every name stays mangled: ``demangle`` gives None and
    ``attach`` names functions by their symbols."""
    assert demangle_module._load(("libptxdwarf-no-such-library.so.0",)) is None
    assert demangle_module._load(("libm.so.6",)) is None  # loads, but has no __cxa_demangle
    demangle_module._runtime.cache_clear()
    try:
        monkeypatch.setattr(demangle_module, "_SONAMES", ("libptxdwarf-no-such-library.so.0",))
        monkeypatch.setattr(demangle_module, "_LINK_NAMES", ("ptxdwarf-no-such-library",))
        assert demangle("_Z5applyIZ4hostPfEUlfE_EvS0_iT_") is None
        text = (FIXTURES / "nodebug" / "rich.nvcc.O3.sm_75.ptx").read_text()
        info = read_ptx(attach_ptx(text, output_name="rich.ptx").text)
        subprograms = [d for d in info.iter_dies() if d.tag == TAG.subprogram]
        assert len(subprograms) > 3
        for sub in subprograms:
            assert sub.name == sub.get(AT.MIPS_linkage_name), sub.name
    finally:
        monkeypatch.undo()
        demangle_module._runtime.cache_clear()
    assert demangle("_Z3foov") == "foo()"
