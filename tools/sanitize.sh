#!/usr/bin/env bash
# The native core under AddressSanitizer and UndefinedBehaviorSanitizer: a copy of the working
# tree is built with both, then the kernels' differential tests, the bad-input tests and a fuzz
# run go through it. Any report stops the run with a non-zero exit.
#
#   tools/sanitize.sh                   # 20,000 fuzz inputs, seed 1
#   FUZZ_BUDGET=100000 FUZZ_SEED=7 tools/sanitize.sh
#
# Needs gcc (its libasan and libubsan) and the project's venv (.venv, or $PYTHON).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
[[ "$python" = /* ]] || python="$PWD/$python"  # the run changes directory
budget="${FUZZ_BUDGET:-20000}"
seed="${FUZZ_SEED:-1}"
work="$(mktemp -d "${TMPDIR:-/tmp}/ptxdwarf-sanitize.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The tracked files as they are in the working tree, so that an uncommitted change is tested too.
(cd "$root" && git ls-files -z --cached --others --exclude-standard | grep -zv '\.so$' \
    | xargs -0 tar -cf - 2>/dev/null) | tar -xf - -C "$work"
cd "$work"
PTXDWARF_REQUIRE_NATIVE=1 \
PTXDWARF_NATIVE_CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
    "$python" setup.py -q build_ext --inplace >/dev/null

asan="$(gcc -print-file-name=libasan.so)"
ubsan="$(gcc -print-file-name=libubsan.so)"
export LD_PRELOAD="$asan $ubsan"
# CPython's own allocations are not the kernels' leaks; every other report is fatal.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:handle_segv=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export PTXDWARF_REQUIRE_NATIVE=1 PYTHONPATH="$work" PYTHONMALLOC=malloc

"$python" -c "from ptxdwarf._native import describe; d = describe(); print('sanitize:', d); assert d == 'native core', d"
"$python" -m pytest -q -p no:cacheprovider -m "not slow" tests/test_native*.py tests/test_bad_input.py \
    tests/test_cubin_reading.py tests/test_fatbin.py tests/test_schemas.py
# Every kernel call of the fuzz run is also held to its reference (a difference is a finding).
PTXDWARF_NATIVE_CHECK=1 "$python" tools/fuzz.py --budget "$budget" --seed "$seed" --check-every 0 --out "$work/findings"
echo "sanitize: no report (fuzz: $budget inputs, seed $seed)"
