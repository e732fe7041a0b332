"""peft LoRA fine-tuning of SmolLM2-135M-Instruct on our core against upstream
(tests/lora_run.py on both sides): 30 AdamW steps with per-step losses and the trained
adapter compared; the adapter saved by peft on one side loads on the other and gives the
same loss; gradient checkpointing gives the same training as without.

Tolerance: float32 with sums ordered differently: measured per-step loss differences are
~1e-7 relative; allowed 1e-4 relative over 30 steps."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "lora_run.py")
REF = os.path.join(ROOT, ".venv-ref", "bin", "python")
STEPS, SEQ, BATCH = 30, 64, 2


def _parallel(cmds, timeout=1500):
    """Runs the commands at once, one intra-op thread each: the two sides side by side with
    2 threads each oversubscribed CI's 2 cores, and both sides' pools spin at their barriers
    (the training fixture took 310 s in a clean-clone CI run against 34 s alone, session 32)."""
    cmds = [c + ["--threads", "1"] for c in cmds]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT) for c in cmds]
    out = []
    for p in procs:
        try:
            o, e = p.communicate(timeout=timeout)
        finally:
            p.kill()
        assert p.returncode == 0, e[-3000:]
        out.append(json.loads(o.strip().splitlines()[-1]))
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("lora")
    ref, got = _parallel([[REF, SCRIPT, str(STEPS), str(SEQ), str(BATCH), "--save", str(d / "ref")],
                          [sys.executable, SCRIPT, str(STEPS), str(SEQ), str(BATCH), "--save", str(d / "ours")]])
    return d, ref, got


def _close(a, b, rel=1e-4):
    return abs(a - b) <= rel * max(1.0, abs(b))


def test_lora_training_matches_upstream(trained):
    _, ref, got = trained
    assert len(got["losses"]) == STEPS
    for i, (a, b) in enumerate(zip(got["losses"], ref["losses"])):
        assert _close(a, b), f"step {i}: {a} vs upstream {b}"
    assert got["lora"].keys() == ref["lora"].keys() and len(ref["lora"]) == 4 * 30  # q, v: A and B in 30 layers
    for k, (s, a) in ref["lora"].items():
        # the signed sum cancels, so its error is measured against the absolute sum
        gs, ga = got["lora"][k]
        assert abs(gs - s) <= 1e-3 * a and _close(ga, a, 1e-3), (k, got["lora"][k], ref["lora"][k])
    assert ref["losses"][-1] != ref["losses"][0]


def test_adapters_load_across(trained):
    d, _, _ = trained
    r = _parallel([[REF, SCRIPT, "0", str(SEQ), str(BATCH), "--eval", "--load", str(d / "ours")],
                   [sys.executable, SCRIPT, "0", str(SEQ), str(BATCH), "--eval", "--load", str(d / "ref")],
                   [sys.executable, SCRIPT, "0", str(SEQ), str(BATCH), "--eval", "--load", str(d / "ours")]])
    ref_loads_ours, ours_loads_ref, ours_loads_ours = (x["loss"] for x in r)
    assert _close(ref_loads_ours, ours_loads_ours), (ref_loads_ours, ours_loads_ours)
    assert _close(ours_loads_ref, ours_loads_ours, 1e-3), (ours_loads_ref, ours_loads_ours)


def test_gradient_checkpointing_same_training(trained):
    _, _, got = trained
    (ck,) = _parallel([[sys.executable, SCRIPT, "3", str(SEQ), str(BATCH), "--checkpointing"]])
    for i, (a, b) in enumerate(zip(ck["losses"], got["losses"][:3])):
        assert _close(a, b, 1e-5), f"step {i}: {a} with checkpointing vs {b} without"
