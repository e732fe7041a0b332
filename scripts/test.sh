#!/usr/bin/env bash
# The test command: sets up (idempotently) and builds everything, then runs the suite at
# the host's kernel tier and again under every lower tier this machine can run
# (TN_FORCE_ISA=avx512bf16 / avx512 / avx2 / scalar), so a fast path cannot hide a wrong
# fallback or the other way round.
#   scripts/test.sh [pytest args]
#   TN_TEST_TIERS=host scripts/test.sh ...   # only the host tier (quicker, for development)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
read -r host lower <<< "$(.venv/bin/python -c '
import torch
cur, tiers = torch._C._tn_isa()
print(cur, ",".join(t for t in tiers if t != cur))')"
echo "== kernel tier $host (host)"
.venv/bin/python -m pytest tests "$@"
if [ "${TN_TEST_TIERS:-all}" = "host" ]; then exit 0; fi
for tier in ${lower//,/ }; do
    echo "== kernel tier $tier (TN_FORCE_ISA=$tier)"
    TN_FORCE_ISA=$tier .venv/bin/python -m pytest tests "$@"
done
