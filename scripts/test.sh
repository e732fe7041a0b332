#!/usr/bin/env bash
# The test command: sets up (idempotently) and builds everything, then runs
#   host   the whole suite at the host's kernel tier;
#   lower  the kernel-dependent tests again under every lower tier this machine can run
#          (TN_FORCE_ISA=avx512bf16 / avx512 / avx2 / scalar), so a fast path cannot hide a
#          wrong fallback or the other way round. Tests that cannot reach a different
#          kernel (the `tier_independent` marker, tests/conftest.py says which and why) run
#          once, at the host tier. The avx512bf16 tier differs from avx512 and from amx only
#          in bfloat16 kernels (the bf16 GEMM, GEMV and attention-product engines:
#          `grep -rn 'TN_ISA_AVX512_BF16\|TN_ISA_AMX' src/kernels`), so under it
#          only the tests whose id names bfloat16/bf16 run (`-k`), with the C unit tests
#          (seconds); so does the avx512 tier on an avx512bf16 or amx host, whose other
#          kernels the host tier already ran. Under the scalar tier the model files (the `model_run` marker:
#          whole models decoded and compared) do not run: the scalar kernels are the
#          portable loops test_ops.py compares case by case at that tier, and a model
#          decoded through them costs minutes of CI for nothing the cases miss (the aarch64
#          tier runs its own op slice the same way). Upstream's side of each comparison is computed once per
#          run and reused by the lower tiers (TN_REF_CACHE, tests/conftest.py `Upstream`):
#          upstream does not read our tier;
#   asan   the suite, C unit tests included, on the AddressSanitizer +
#          UndefinedBehaviorSanitizer build (scripts/asan.sh), except the model files and
#          the GEMM sweep (`asan_skip`; docs/RELIABILITY.md says why and what it costs).
#          It runs in the background beside the host and lower tiers, as soon as its
#          build is done (below);
#   tsan   the threaded C tests on the ThreadSanitizer build (scripts/tsan.sh);
#   aarch64  the cross-built _C and C unit tests under qemu-user (tests/test_aarch64.py,
#          docs/AARCH64.md): the C tests, the tier chosen under each emulated CPU, and a
#          slice of the operator cases (every 25th) against upstream's x86-64 answers.
#          Skipped, saying why, only when scripts/aarch64_env.sh cannot set the emulated
#          environment up (its exit status 3); any other failure fails the run.
#   scripts/test.sh [pytest args]
#   TN_TEST_TIERS=host scripts/test.sh ...        # only the host tier (quick, for development)
#   TN_TEST_TIERS="lower asan" scripts/test.sh    # any subset of: host lower asan tsan aarch64 (default all)
# pytest's exit status 5 (nothing selected) fails the run like any other: a tier that
# silently tested nothing must not pass.
set -euo pipefail
cd "$(dirname "$0")/.."
TIERS=${TN_TEST_TIERS:-all}
[ "$TIERS" = all ] && TIERS="host lower asan tsan aarch64"
want() { [[ " $TIERS " == *" $1 "* ]]; }
for t in $TIERS; do
  case $t in host|lower|asan|tsan|aarch64) ;; *) echo "TN_TEST_TIERS: unknown tier $t (host lower asan tsan aarch64 all)" >&2; exit 2 ;; esac
done

scripts/setup.sh
# the bundled GGUF dequantised once per machine (tests/bundled.py says why), before the tiers
# that read it start side by side
.venv-ref/bin/python tests/bundled.py > /dev/null
# The builds the later tiers need (on CI's 2-core machine about 10 minutes of both cores,
# nearly all of it the ASan build) and the emulated aarch64 environment (package
# downloads) are prepared in the background at the lowest priority while the host and
# lower tiers test: those tiers leave a core idle much of the time (one pytest process,
# often waiting on its upstream subprocess), and nice 19 gives a test process nearly all
# of a core it wants. The ASan tier itself then runs in the same background job, at
# nice 10, beside the host and lower tiers, and writes its output to build/tier-asan.log,
# which is printed when the foreground reaches it: run one after the other, the two
# tiers took most of CI's 90 minutes on a slow 2-vCPU host (docs/RELIABILITY.md
# "Session 31"; both side by side: 63 minutes, every test passing). The TSan build comes
# after the ASan tier in that job. A failed build fails the run with its log; a failed
# ASan tier fails it once the foreground tiers are done. The aarch64 steps are only begun
# here: the tier runs them again in the foreground (each returns at once when done), so
# their outcome, a skip included, is decided and reported there.
# Two background jobs, each in its own session (setsid) so one kill stops all it started:
# the sanitizer builds with the ASan tier, and the aarch64 environment with its cross
# build, so the ASan tier never waits for the aarch64 downloads.
PREP_SAN=
PREP_A64=
# upstream's answers for this run only (tests/conftest.py): a fresh directory each time;
# the background ASan tier shares it (a finished answer is renamed into place whole)
export TN_REF_CACHE="$PWD/build/ref-cache"
rm -rf "$TN_REF_CACHE" build/tier-asan.log build/tier-asan.status
mkdir -p "$TN_REF_CACHE"
if want asan || want tsan; then
  setsid nice -n 10 bash -c '
    set -e
    if [ "$1" = 1 ]; then
      nice -n 9 scripts/setup.sh --asan
      # the tier: its exit status and wall time go to build/tier-asan.status
      start=$(date +%s); rc=0
      TN_ASAN_SKIP_SETUP=1 scripts/asan.sh -m pytest tests -m "not asan_skip" "${@:3}" > build/tier-asan.log 2>&1 || rc=$?
      echo "$rc $(( $(date +%s) - start ))" > build/tier-asan.status
    fi
    if [ "$2" = 1 ]; then nice -n 9 .venv/bin/python scripts/build.py --sanitize thread; fi
  ' prep "$(want asan && echo 1 || echo 0)" "$(want tsan && echo 1 || echo 0)" "$@" > build/prep-sanitizers.log 2>&1 &
  PREP_SAN=$!
fi
if want aarch64; then
  setsid nice -n 19 bash -c 'scripts/aarch64_env.sh && .venv/bin/python scripts/build.py --target aarch64' \
    > build/prep-aarch64.log 2>&1 &
  PREP_A64=$!
fi
# prep_wait VAR LOG: waits for the background job whose pid VAR holds; its failure stops
# the run with LOG's tail when LOG is given (the aarch64 job's outcome is not judged here).
prep_wait() {
  local pid=${!1} rc=0
  [ -n "$pid" ] || return 0
  wait "$pid" || rc=$?
  printf -v "$1" '%s' ''
  if [ $rc -ne 0 ] && [ -n "${2:-}" ]; then
    echo "== a background build failed (exit $rc); $2:" >&2
    tail -60 "$2" >&2
    exit $rc
  fi
  return 0
}
# a stopped run (a failing tier, ^C) does not leave the builds running
trap 'for p in $PREP_SAN $PREP_A64; do kill -- "-$p" 2>/dev/null || true; done' EXIT
read -r host lower <<< "$(.venv/bin/python -c '
import torch
cur, tiers = torch._C._tn_isa()
print(cur, ",".join(t for t in tiers if t != cur))')"

SUMMARY=()
# run LABEL CMD...: runs one tier, records its wall time, stops the script on failure.
run() {
  local label=$1 start rc=0
  shift
  echo "== $label"
  start=$(date +%s)
  "$@" || rc=$?
  SUMMARY+=("$(printf '%-44s %5d s  exit %d' "$label" $(( $(date +%s) - start )) $rc)")
  if [ $rc -eq 5 ]; then
    echo "== $label: pytest selected no tests (exit 5); a tier that tests nothing fails" >&2
  fi
  if [ $rc -ne 0 ]; then
    printf '%s\n' "${SUMMARY[@]}"
    exit $rc
  fi
}

want host && run "kernel tier $host (host): whole suite" .venv/bin/python -m pytest tests "$@"
if want lower; then
  for tier in ${lower//,/ }; do
    # avx512bf16 and amx add only bfloat16 kernels to avx512 (see above), so below such a
    # host both lower AVX-512 tiers differ from it in bfloat16 kernels alone
    if [ "$tier" = avx512bf16 ] || { [ "$tier" = avx512 ] && { [ "$host" = avx512bf16 ] || [ "$host" = amx ]; }; }; then
      run "kernel tier $tier: bfloat16 tests" \
        env TN_FORCE_ISA=$tier .venv/bin/python -m pytest tests -m "not tier_independent" -k "bfloat16 or bf16 or test_c_unit" "$@"
    elif [ "$tier" = scalar ]; then
      run "kernel tier $tier: kernel-dependent tests, no model runs" \
        env TN_FORCE_ISA=$tier .venv/bin/python -m pytest tests -m "not tier_independent and not model_run" "$@"
    else
      run "kernel tier $tier: kernel-dependent tests" \
        env TN_FORCE_ISA=$tier .venv/bin/python -m pytest tests -m "not tier_independent" "$@"
    fi
  done
fi
# asan_tier: prints the background ASan tier's output and exits with its status (its own
# wall time goes to the summary; the row above it is the foreground's wait for it)
asan_tier() {
  cat build/tier-asan.log
  read -r rc secs < build/tier-asan.status
  echo "== the ASan tier ran ${secs} s beside the other tiers"
  ASAN_SECS=$secs
  return "$rc"
}
if want asan; then
  run "sanitizer build + ASan tier: the rest of the background wait" prep_wait PREP_SAN build/prep-sanitizers.log
  # tests/test_c_units.py runs the ASan C unit tests there (TN_BUILD_DIR=build/asan)
  run "asan+ubsan: suite and C tests (asan_skip out)" asan_tier
  SUMMARY[-1]="${SUMMARY[-1]}  (ran ${ASAN_SECS:-?} s in the background)"
fi
want tsan && prep_wait PREP_SAN build/prep-sanitizers.log && run "tsan: threaded C tests" scripts/tsan.sh
if want aarch64; then
  prep_wait PREP_A64
  start=$(date +%s)
  rc=0
  scripts/aarch64_env.sh || rc=$?
  if [ $rc -eq 3 ]; then
    echo "== aarch64: skipped: the emulated environment cannot be set up here (reason above)"
    SUMMARY+=("$(printf '%-44s %5d s  skipped' "aarch64: environment cannot be set up" $(( $(date +%s) - start )))")
  else
    SUMMARY+=("$(printf '%-44s %5d s  exit %d' "aarch64: emulated environment" $(( $(date +%s) - start )) $rc)")
    [ $rc -eq 0 ] || { printf '%s\n' "${SUMMARY[@]}"; exit $rc; }
    run "aarch64: cross build (build.py --target)" .venv/bin/python scripts/build.py --target aarch64
    run "aarch64: C tests, tiers, op slice (qemu)" env TN_AARCH64=1 .venv/bin/python -m pytest tests/test_aarch64.py "$@"
  fi
fi
echo "== summary"
printf '%s\n' "${SUMMARY[@]}"
