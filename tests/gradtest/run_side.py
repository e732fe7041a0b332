"""Runs the gradient cases under the torch of the current interpreter; writes a pickle.
    python tests/gradtest/run_side.py OUT.pkl"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gradtest import cases, cases_generated, harness  # noqa: E402

harness.run_cases(cases.CASES + cases_generated.CASES, sys.argv[1])
