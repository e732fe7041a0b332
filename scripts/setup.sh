#!/usr/bin/env bash
# Creates (idempotently) the two environments every command of this repo runs in:
#   .venv      vendored torch 2.13.0 Python tree + our C torch._C + the pinned packages
#   .venv-ref  upstream torch==2.13.0 + the same pinned packages (comparison only)
# and (re)builds torch._C when a source changed. Safe to run any number of times.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
PIP_Q=(-q --disable-pip-version-check)
REQ=requirements/project.txt
stamp() { cat "$REQ" scripts/setup.sh scripts/vendor.py | sha1sum | cut -c1-16; }
STAMP=$(stamp)

mkdir -p build
if [ ! -f build/wheels/.done ]; then
  echo "[setup] fetching the torch 2.13.0 CPU wheel"
  rm -rf build/wheels && mkdir -p build/wheels
  "$PY" -m pip download "${PIP_Q[@]}" --no-deps -d build/wheels torch==2.13.0
  touch build/wheels/.done
fi
WHEEL=$(ls build/wheels/torch-2.13.0*.whl | head -1)

if [ "$(cat .venv-ref/.tn-stamp 2>/dev/null)" != "$STAMP" ]; then
  echo "[setup] reference environment .venv-ref (upstream torch)"
  [ -x .venv-ref/bin/python ] || "$PY" -m venv .venv-ref
  .venv-ref/bin/pip install "${PIP_Q[@]}" "$WHEEL" -r "$REQ"
  echo "$STAMP" > .venv-ref/.tn-stamp
fi

if [ "$(cat .venv/.tn-stamp 2>/dev/null)" != "$STAMP" ]; then
  echo "[setup] project environment .venv (vendored torch tree + torchnative)"
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  SITE=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  .venv/bin/python scripts/vendor.py "$WHEEL" "$SITE"
  # torch's dist-info is now present, so packages that require torch see it satisfied.
  .venv/bin/pip install "${PIP_Q[@]}" -r "$REQ"
  # The torchnative Python package is used from the repository (no copy to go stale).
  echo "$(pwd)/python" > "$SITE/torchnative-src.pth"
  echo "$STAMP" > .venv/.tn-stamp
fi

.venv/bin/python scripts/build.py
