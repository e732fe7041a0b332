"""Runs the C unit tests (tests/c/test_*.c, built by the build into build/tests/)."""
import glob
import os
import subprocess

import pytest

from conftest import BUILD, ROOT

SOURCES = sorted(glob.glob(os.path.join(ROOT, "tests", "c", "test_*.c")))


@pytest.mark.parametrize("src", SOURCES, ids=[os.path.basename(s)[:-2] for s in SOURCES])
def test_c_unit(src):
    exe = os.path.join(BUILD, "tests", os.path.basename(src)[:-2])
    assert os.path.exists(exe), f"{exe} was not built"
    # sanitized builds run several times slower (test_gemm: 4 min of CPU under ASan)
    r = subprocess.run([exe], capture_output=True, text=True, timeout=1800 if os.environ.get("TN_SANITIZER") else 600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " passed, 0 failed" in r.stdout
