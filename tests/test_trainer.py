"""transformers' Trainer on our core against upstream: the same short run (tests/
trainer_run.py) logs the same losses and gradient norms (float32, measured agreement
~1e-7 relative; allowed 1e-4)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "trainer_run.py")
REF = os.path.join(ROOT, ".venv-ref", "bin", "python")


def test_trainer_matches_upstream(tmp_path):
    procs = [subprocess.Popen([p, SCRIPT, str(tmp_path / name)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT) for p, name in ((REF, "ref"), (sys.executable, "ours"))]
    res = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=900)
        finally:
            p.kill()
        assert p.returncode == 0, err[-3000:]
        res.append(json.loads(out.strip().splitlines()[-1]))
    ref, got = res
    assert len(got["losses"]) == len(ref["losses"]) == 8
    for key in ("losses", "grad_norms"):
        for a, b in zip(got[key], ref[key]):
            assert abs(a - b) <= 1e-4 * max(1.0, abs(b)), (key, got[key], ref[key])
