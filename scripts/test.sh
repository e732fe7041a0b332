#!/usr/bin/env bash
# The test command: sets up (idempotently) and builds everything, then runs the suite.
#   scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/python -m pytest tests "$@"
