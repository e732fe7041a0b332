"""save_pretrained -> from_pretrained (safetensors, meta-device initialisation) of SmolLM2 on
torchnative against upstream: float32 tokens identical and logits within float32 noise;
bfloat16 loads, generates, and its agreement with upstream bfloat16 is measured (printed, and
bounded so a broken bf16 path fails)."""
import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, Upstream

SCRIPT = f"{ROOT}/tests/inference/roundtrip.py"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    d = tmp_path_factory.mktemp("rt")
    env = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    import os

    env = {**os.environ, **env}
    procs = {"ref": Upstream([SCRIPT, str(d / "ref")], scratch=[str(d / "ref")], env=env),
             "ours": subprocess.Popen([sys.executable, SCRIPT, str(d / "ours")], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env)}
    out = {}
    for side, p in procs.items():
        so, se = p.communicate(timeout=900)
        assert p.returncode == 0, f"{side}: {se[-3000:]}"
        out[side] = json.loads(so.strip().splitlines()[-1])
    return out["ref"], out["ours"]


def test_saved_files_and_dtypes(both):
    ref, ours = both
    assert ours["files"] == ref["files"]
    assert any(f.endswith(".safetensors") for f in ours["files"])
    assert ours["bfloat16"]["param_dtype"] == "torch.bfloat16"


def test_float32_roundtrip_matches_upstream(both):
    ref, ours = both
    assert ours["float32"]["tokens"] == ref["float32"]["tokens"]
    a, b = np.array(ours["float32"]["logits"]), np.array(ref["float32"]["logits"])
    # same bound as tests/test_inference.py derives (4x upstream's own fp32-vs-fp64 error,
    # which is ~6e-5 on logits of magnitude ~40): 2.5e-4 absolute
    assert np.abs(a - b).max() < 2.5e-4


def test_bfloat16_agreement_is_measured(both):
    ref, ours = both
    t_ours, t_ref = ours["bfloat16"]["tokens"], ref["bfloat16"]["tokens"]
    same = sum(x == y for x, y in zip(t_ours, t_ref)) / len(t_ref)
    first_diff = next((i for i, (x, y) in enumerate(zip(t_ours, t_ref)) if x != y), None)
    a, b = np.array(ours["bfloat16"]["logits"]), np.array(ref["bfloat16"]["logits"])
    exact = np.array(ref["float32"]["logits"])  # float32 is ~1e-4 from float64 here; bf16 is ~1 off
    e_ours, e_up = np.abs(a - exact), np.abs(b - exact)
    err = float(np.abs(a - b).max())
    scale = float(np.abs(b).max())
    print(f"\nbf16 vs upstream bf16: {same:.0%} of 32 greedy tokens identical (first difference at {first_diff}), "
          f"max |logit diff| {err:.3f} of max |logit| {scale:.1f}; error against float32 logits: ours max "
          f"{e_ours.max():.3f} mean {e_ours.mean():.4f}, upstream max {e_up.max():.3f} mean {e_up.mean():.4f}")
    # bf16 keeps 8 bits of mantissa: a few ulps of the largest logit is rounding, not a bug
    assert err < 16 * scale * 2 ** -8
    # As accurate as upstream's bfloat16 against the float32 result. Greedy tokens are not
    # asserted: a near tie flips with any change of summation order, and once one token
    # differs the rest follow another text (session 9: an engine closer to float32 than
    # upstream, max 1.20 against 1.56, diverged at the fifth token).
    assert e_ours.mean() <= 1.25 * e_up.mean() and e_ours.max() <= 2 * e_up.max()
    assert len(t_ours) == len(t_ref) == 32 and t_ours[0] == t_ref[0]
