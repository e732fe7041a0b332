"""Runs the operator cases under the torch of the current interpreter; writes a pickle.
    python tests/optest/run_side.py OUT.pkl [--every N]
--every N runs every N-th case only (the emulated aarch64 slice, tests/test_aarch64.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from optest import cases, harness  # noqa: E402

every = int(sys.argv[sys.argv.index("--every") + 1]) if "--every" in sys.argv else 1
harness.run_cases(cases.CASES[::every], sys.argv[1])
