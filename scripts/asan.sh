#!/usr/bin/env bash
# Runs Python on the AddressSanitizer + UndefinedBehaviorSanitizer build of torch._C
# (.venv-asan, build/asan; set up on first use by scripts/setup.sh --asan), or the ASan C
# unit tests. Any report fails the process: ASan halts on the first error, UBSan is
# compiled fatal, LeakSanitizer fails the exit status at exit. docs/RELIABILITY.md.
#   scripts/asan.sh -m pytest tests/test_ops.py    # any python arguments
#   scripts/asan.sh --ctests                       # the C unit tests, build/asan/tests/*
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
if [ "${TN_ASAN_SKIP_SETUP:-0}" != 1 ]; then
  scripts/setup.sh --asan >&2
fi

CCBIN=${CC:-cc}
LIBASAN=$("$CCBIN" -print-file-name=libasan.so)
LIBUBSAN=$("$CCBIN" -print-file-name=libubsan.so)
# allocator_may_return_null: an impossible allocation (torch.empty(2**62)) must reach our
# out-of-memory error path as it does without ASan, not abort in the allocator.
# detect_leaks + suppressions: CPython's own allocations that outlive finalisation are
# suppressed by name in tools/sanitizers/lsan.supp; nothing of ours is listed there.
# intercept_tls_get_addr=0: gcc's runtime (up to gcc 13) takes a dynamic TLS block whose
# address is 16 past a page boundary for a glibc-2.19 block with a header, reads garbage as
# its bounds, and LeakSanitizer's tracer then faults at exit ("Tracer caught signal 11",
# CI on ccf79ea). Since glibc 2.25 those blocks come from malloc, reachable through the
# thread's DTV, so the leak check needs no interception. docs/RELIABILITY.md.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:allocator_may_return_null=1:detect_odr_violation=0:intercept_tls_get_addr=0:${TN_ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$ROOT/tools/sanitizers/lsan.supp:print_suppressions=0:${TN_LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# the C unit tests run by tests/test_c_units.py are the sanitized ones
export TN_BUILD_DIR="$ROOT/build/asan"
export TN_SANITIZER=address,undefined

if [ "${1:-}" = --ctests ]; then
  shift
  fail=0
  for t in build/asan/tests/test_*; do
    start=$(date +%s)
    if "$t" > "build/asan/$(basename "$t").log" 2>&1; then r=ok; else r=FAIL; fail=1; fi
    echo "$r $(basename "$t") ($(( $(date +%s) - start )) s): $(tail -1 "build/asan/$(basename "$t").log")"
    [ $r = ok ] || tail -40 "build/asan/$(basename "$t").log"
  done
  exit $fail
fi

# PYTHONMALLOC=malloc: every Python object comes from malloc, so ASan sees overflows of
# objects our binding writes, and LeakSanitizer can trace what is still reachable through
# Python objects (pymalloc arenas are not scanned). The runtimes are preloaded because the
# interpreter itself is not instrumented; tests/conftest.py keeps the preload away from
# upstream torch (.venv-ref) and from other programs the tests start.
export PYTHONMALLOC=malloc
export LD_PRELOAD="$LIBASAN $LIBUBSAN${LD_PRELOAD:+ $LD_PRELOAD}"
exec .venv-asan/bin/python "$@"
