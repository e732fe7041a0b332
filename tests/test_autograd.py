"""Autograd semantics against upstream: every scenario of tests/autograd_scenarios.py runs
in a fresh process on both sides; results must be equal and errors must have upstream's
class and message start."""
import json
import os
import subprocess
import sys

import pytest

import autograd_scenarios

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograd_scenarios.py")


def _side(python):
    out = subprocess.run([python, SCRIPT], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def sides():
    return _side(os.path.join(ROOT, ".venv-ref", "bin", "python")), _side(sys.executable)


# How many characters of an error message must match upstream's.
MSG_PREFIX = 40


def _close(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-4 * max(1.0, abs(a))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.parametrize("name", sorted(autograd_scenarios.SCENARIOS))
def test_scenario_matches_upstream(sides, name):
    ref, got = sides
    r, g = ref[name], got[name]
    if r[0] == "err":
        assert g[0] == "err", f"upstream raised {r[1]}: {r[2][:200]}; ours returned {g[1]!r}"
        assert g[1] == r[1], f"exception class {g[1]} vs upstream {r[1]} ({g[2][:200]} / {r[2][:200]})"
        assert g[2][:MSG_PREFIX] == r[2][:MSG_PREFIX], f"message {g[2][:200]!r} vs upstream {r[2][:200]!r}"
        return
    assert g[0] == "ok", f"ours raised {g[1]}: {g[2][:500]}"
    assert _close(r[1], g[1]), f"ours {g[1]!r}\nupstream {r[1]!r}"


def test_every_error_scenario_is_an_error_upstream(sides):
    """The err_* scenarios are what the issue lists; each must really raise upstream."""
    ref, _ = sides
    for name, r in ref.items():
        if name.startswith("err_"):
            assert r[0] == "err", name


def test_profile_counts_backward_nodes():
    """torch._C._tn_profile (TN_PROFILE) also times the engine's nodes: one row per node
    name, counted once per application, none while it is off, cleared by the reset."""
    import torch
    was = torch._C._tn_profile(False)
    try:
        torch._C._tn_profile_reset()
        x = torch.randn(4, 5, requires_grad=True)
        (x * 2).sin().sum().backward()
        assert not any(k.startswith("backward:") for k in torch._C._tn_profile_snapshot())
        torch._C._tn_profile(True)
        for _ in range(3):
            (x * 2).sin().sum().backward()
        torch._C._tn_profile(False)
        snap = torch._C._tn_profile_snapshot()
        rows = {k: v for k, v in snap.items() if k.startswith("backward:")}
        assert {k: v[0] for k, v in rows.items()} == {"backward:SumBackward0": 3, "backward:SinBackward0": 3,
                                                     "backward:MulBackward0": 3, "backward:AccumulateGrad": 3}, rows
        assert all(v[1] > 0 for v in rows.values()), rows
        torch._C._tn_profile_reset()
        assert torch._C._tn_profile_snapshot() == {}
    finally:
        torch._C._tn_profile(was)
