#!/usr/bin/env bash
# The main job: generate text with the bundled SmolLM2-135M-Instruct on torchnative.
#   scripts/generate.sh "prompt" [--max-new-tokens N] [--model PATH] [--dtype float32|bfloat16]
# A GGUF model (the default) runs kept quantised; --dtype dequantises it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >&2
exec .venv/bin/python -m torchnative generate "$@"
