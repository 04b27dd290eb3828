#!/usr/bin/env bash
# The built wheel in a fresh venv: a copy of the working tree is built into a wheel, the wheel
# is installed with its test extra in a new venv, and the whole suite runs against the
# installed package (the copy's own ptxdwarf/ is only read by the tests, never imported).
#
#   tools/wheel_suite.sh                # the suite, as the README's test command runs it
#   tools/wheel_suite.sh -m 'not slow'  # pytest's arguments, after the script's
#
# Needs python3 with venv and a C compiler (the wheel carries the native core); the extra
# ptxas releases and llvm-dwarfdump of .ci/run are used when $PTXDWARF_TEST_PTXAS and
# $PTXDWARF_TEST_DWARFDUMP name them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON3:-python3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/ptxdwarf-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The tracked files as they are in the working tree, so that an uncommitted change is tested too.
mkdir "$work/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | grep -zv '\.so$' \
    | xargs -0 tar -cf - 2>/dev/null) | tar -xf - -C "$work/src"
# A repository of those files, for the tests that ask git which files are tracked.
git -C "$work/src" init -q && git -C "$work/src" add -A

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
(cd "$work/src" && "$work/venv/bin/python" -m pip wheel -q --no-deps -w "$work/dist" .)
wheel="$(ls "$work"/dist/ptxdwarf-*.whl)"
echo "wheel-suite: $(basename "$wheel")"
"$work/venv/bin/python" -m pip install -q "$wheel[test]"
# The producers docs/testing.md's live examples compile with, as in .ci/run.
"$work/venv/bin/python" -m pip install -q numba-cuda==0.30.4 nvidia-cuda-nvrtc==13.0.88 triton==3.9.0

# The repository's tools/ (which some tests import) after the installed package on sys.path;
# PYTHONSAFEPATH keeps every Python the tests start from putting the copy's directory first, and
# an empty pythonpath overrides pyproject.toml's "." for pytest itself.
site="$("$work/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")"
echo "$work/src" > "$site/zz_ptxdwarf_repository.pth"
cd "$work/src"
export PYTHONSAFEPATH=1 PTXDWARF_REQUIRE_NATIVE=1
"$work/venv/bin/python" -c "import ptxdwarf, ptxdwarf._native as n; print('wheel-suite:', ptxdwarf.__file__, '-', n.describe())"
"$work/venv/bin/python" -m pytest -o pythonpath= -q -p no:cacheprovider "$@"
