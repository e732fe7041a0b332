#!/usr/bin/env bash
# Builds the C unit tests with ThreadSanitizer (build/tsan) and runs the ones that exercise
# threads: the pool (src/core/threadpool.c), the weight stream (src/kernels/stream.c),
# their concurrent use (tests/c/test_concurrency.c), the large-block allocator shared by
# every thread (src/core/alloc.c), the distributed transport and DDP reducer (src/dist:
# receiver threads, async work) and kernels run on pool workers
# (elementwise, nn: attention plans GEMMs on workers). A data race fails the run (TSan's
# exit code). docs/RELIABILITY.md.
#   scripts/tsan.sh                   # the default set below
#   scripts/tsan.sh test_gemm ...     # any C tests by name
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >&2
.venv/bin/python scripts/build.py --sanitize thread >&2
TESTS=("$@")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(test_threadpool test_stream test_concurrency test_elementwise test_nn test_alloc test_dist test_dist_shm test_reducer)
# halt_on_error: the first race fails the test; second_deadlock_stack for lock reports.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:exitcode=66"
fail=0
for t in "${TESTS[@]}"; do
  start=$(date +%s)
  if "build/tsan/tests/$t" > "build/tsan/$t.log" 2>&1; then r=ok; else r=FAIL; fail=1; fi
  echo "$r $t ($(( $(date +%s) - start )) s): $(tail -1 "build/tsan/$t.log")"
  [ $r = ok ] || tail -60 "build/tsan/$t.log"
done
exit $fail
