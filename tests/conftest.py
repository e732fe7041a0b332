"""Shared fixtures: paths of the two environments and a runner for upstream torch."""
import json
import os
import subprocess
import sys

import pytest

# The suite runs in .venv: import the real torch (on our _C) first, so no test can leave a
# stand-in torch._C module behind for the others.
import torch  # noqa: F401

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF_PYTHON = os.path.join(ROOT, ".venv-ref", "bin", "python")
BUILD = os.path.abspath(os.environ.get("TN_BUILD_DIR", os.path.join(ROOT, "build")))


def run_reference(code: str, timeout: float = 600):
    """Runs `code` under upstream torch (.venv-ref) in a fresh process; the code prints one
    JSON document on its last line, which is returned."""
    out = subprocess.run([REF_PYTHON, "-c", code], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"reference process failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def reference():
    return run_reference
