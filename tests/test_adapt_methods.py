"""Each torchnative.adapt method run on our core and on upstream torch (tests/adapt_run.py,
the same script on both sides) on the same weights and inputs: the outputs of every step
and the final delta must agree.

The weights are a digits CNN trained here for a few Adam steps (saved once, loaded by both
sides); the inputs are digits test images with Gaussian noise and reduced contrast, so the
entropy filters of EATA and SAR select some samples and not others. Tolerance: float32 sums
are ordered differently on the two sides; the largest difference measured (printed by
`pytest -s`) over every method's outputs and delta after 4 adaptation steps was 2.6e-6
relative (SAR); allowed 1e-4. The filters' decisions (EATA's update count, SAR's loss
average, the counters) must agree."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import REF_PYTHON

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "adapt_run.py")
sys.path.insert(0, os.path.join(ROOT, "tests"))
import adapt_run  # noqa: E402

METHODS = ["bn_adapt", "tent", "eata", "sar", "memo", "cotta", "ttt", "tlm"]
TOL = 1e-4


def make_workdir(d):
    from sklearn.datasets import load_digits
    from safetensors.torch import save_file
    dg = load_digits()
    x = (dg.data / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    y = dg.target.astype(np.int64)
    torch.manual_seed(0)
    m = adapt_run.CNN()
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    xt, yt = torch.from_numpy(x[:1200]), torch.from_numpy(y[:1200])
    for i in range(60):  # the classifier and the rotation head, jointly (TTT's source training)
        idx = torch.arange(i * 64, i * 64 + 64) % 1200
        xb = xt[idx]
        xr, yr = adapt.augment.rotate_batch(xb)
        loss = torch.nn.functional.cross_entropy(m(xb), yt[idx]) + \
            torch.nn.functional.cross_entropy(m.ssh(m.ext(xr)), yr)
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.save(m.state_dict(), os.path.join(d, "cnn.pt"))
    rng = np.random.default_rng(0)
    test = x[1200:1200 + 4 * 32]
    test = np.clip(0.5 * test + 0.25 + rng.normal(0, 0.25, test.shape), 0, 1).astype(np.float32)
    np.savez(os.path.join(d, "data.npz"), x_src=x[1300:1364].reshape(2, 32, 1, 8, 8),
             x=test.reshape(4, 32, 1, 8, 8))
    torch.manual_seed(1)
    llm = adapt_run.tiny_llama()
    save_file({k: v.contiguous() for k, v in llm.state_dict().items()}, os.path.join(d, "llm.safetensors"))
    np.save(os.path.join(d, "ids.npy"), rng.integers(0, 256, (3, 2, 24)).astype(np.int64))


from torchnative import adapt  # noqa: E402


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("adapt_methods"))
    make_workdir(d)
    arg = ",".join(METHODS)
    procs = [subprocess.Popen([p, SCRIPT, d, arg], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
             for p in (REF_PYTHON, sys.executable)]
    res = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=600)
        finally:
            p.kill()
        assert p.returncode == 0, err[-3000:]
        res.append(json.loads(out.strip().splitlines()[-1]))
    return res[0], res[1], d


def _rel(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))) if a.size else 0.0


@pytest.mark.parametrize("method", METHODS)
def test_method_matches_upstream(sides, method):
    ref, got = sides[0][method], sides[1][method]
    assert len(got["outputs"]) == len(ref["outputs"])
    worst = 0.0
    for step, (a, b) in enumerate(zip(got["outputs"], ref["outputs"])):
        r = _rel(a, b)
        worst = max(worst, r)
        assert r <= TOL, f"{method} step {step}: outputs differ by {r:.3g} (relative)"
    assert sorted(got["delta"]) == sorted(ref["delta"])
    assert ref["delta"], f"{method}: no delta at the end"
    for k in ref["delta"]:
        r = _rel(got["delta"][k], ref["delta"][k])
        worst = max(worst, r)
        assert r <= TOL, f"{method} delta {k}: differs by {r:.3g} (relative)"
    for k in ("counters", "updates", "ema"):
        if k in ref:
            if isinstance(ref[k], float):
                assert abs(got[k] - ref[k]) <= TOL * max(1.0, abs(ref[k])), (k, got[k], ref[k])
            else:
                assert got[k] == ref[k], (k, got[k], ref[k])
    print(f"{method}: worst relative difference {worst:.3g}")


def test_methods_really_adapt(sides):
    """Every method's final delta differs from the base it started from (the comparison
    above would also pass for two runs that did nothing)."""
    ref, workdir = sides[0], sides[2]
    base = torch.load(os.path.join(workdir, "cnn.pt"))
    for method in METHODS:
        delta = ref[method]["delta"]
        if method == "tlm":  # LoRA B starts at zero
            assert any(abs(v) > 0 for k, vs in delta.items() if k.startswith("lora_B") for v in vs), method
            continue
        moved = [k for k, vs in delta.items()
                 if not np.array_equal(np.asarray(vs, np.float32), base[k[len("full."):]].reshape(-1).numpy())]
        assert moved, f"{method}: the delta equals the base"
