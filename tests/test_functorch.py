"""torch.func on our core (src/ops/vmap.c, python/torchnative/_surface/functorch.py):
per-sample gradients of a real model on a real data set against upstream's, the same
gradients against a loop of ordinary backward passes, the forward-mode transforms refused by
name, and no batched tensor outliving its vmap. Operator-level vmap and grad cases are in
tests/optest/cases.py (vmap_*, func_*)."""
import json

import pytest
import torch

from conftest import run_reference

# DP-SGD's per-sample gradients (as opacus's functorch mode computes them): an MLP on 24
# scikit-learn digits, cross-entropy per sample, vmap(grad) over the batch
PER_SAMPLE = r"""
import json, torch
from sklearn.datasets import load_digits
from torch.func import functional_call, grad, vmap
d = load_digits()
x = torch.tensor(d.data[:24] / 16.0, dtype=torch.float64)
y = torch.tensor(d.target[:24])
g = torch.Generator().manual_seed(7)
params = {"0.weight": torch.randn(32, 64, generator=g, dtype=torch.float64) * 0.1,
          "0.bias": torch.zeros(32, dtype=torch.float64),
          "2.weight": torch.randn(10, 32, generator=g, dtype=torch.float64) * 0.1,
          "2.bias": torch.zeros(10, dtype=torch.float64)}
model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Tanh(), torch.nn.Linear(32, 10)).double()
def loss(p, xi, yi):
    return torch.nn.functional.cross_entropy(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))
per = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
print(json.dumps({k: v.flatten().tolist() for k, v in per.items()} | {"shapes": {k: list(v.shape) for k, v in per.items()}}))
"""


def _ours(code):
    ns = {}
    lines = []
    import builtins
    real_print = builtins.print
    builtins.print = lambda *a, **k: lines.append(" ".join(map(str, a)))
    try:
        exec(code, ns)
    finally:
        builtins.print = real_print
    return json.loads(lines[-1])


def test_per_sample_gradients_match_upstream(reference):
    ref, ours = reference(PER_SAMPLE), _ours(PER_SAMPLE)
    assert ours["shapes"] == ref["shapes"] == {"0.weight": [24, 32, 64], "0.bias": [24, 32], "2.weight": [24, 10, 32],
                                               "2.bias": [24, 10]}
    for k in ref["shapes"]:
        assert torch.allclose(torch.tensor(ours[k]), torch.tensor(ref[k]), rtol=1e-10, atol=1e-12), k


def test_per_sample_gradients_equal_a_loop_of_backward_passes():
    torch.manual_seed(0)
    w = torch.randn(5, 3, dtype=torch.float64)
    xs, ts = torch.randn(6, 3, dtype=torch.float64), torch.randn(6, 5, dtype=torch.float64)
    per = torch.func.vmap(torch.func.grad(lambda w, x, t: ((w @ x - t) ** 2).sum()), in_dims=(None, 0, 0))(w, xs, ts)
    for i in range(6):
        wi = w.clone().requires_grad_()
        ((wi @ xs[i] - ts[i]) ** 2).sum().backward()
        assert torch.equal(per[i], wi.grad)
    assert not per.requires_grad


def test_forward_mode_agrees_with_reverse_mode():
    # forward mode (src/autograd/forward.c) against reverse mode on the same core: jacfwd and
    # jacrev, jvp and the vjp's transpose, forward-over-reverse and reverse-over-forward
    torch.manual_seed(0)
    W, b = torch.randn(5, 3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    x, v = torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    f = lambda a: torch.tanh(a @ W + b)
    J = torch.func.jacrev(f)(x)
    torch.testing.assert_close(torch.func.jacfwd(f)(x), J)
    out, jv = torch.func.jvp(f, (x,), (v,))
    torch.testing.assert_close(out, f(x))
    torch.testing.assert_close(jv, J @ v)
    assert not jv.requires_grad
    loss = lambda a: f(a).pow(2).sum()
    H = torch.func.jacrev(torch.func.jacrev(loss))(x)
    torch.testing.assert_close(torch.func.jvp(torch.func.grad(loss), (x,), (v,))[1], H @ v)
    torch.testing.assert_close(torch.func.jacrev(torch.func.jacfwd(loss))(x), H)


def test_no_batched_tensor_outlives_its_vmap():
    # the door's test outside vmap is one load of the count of batched tensors alive; a
    # leaked batch record would keep every later operator call on the slow path
    x = torch.randn(4, 3)
    torch.func.vmap(lambda v: (v.sin() * 2).view(3, 1).sum(0))(x)
    torch.func.vmap(torch.func.grad(lambda v: (v ** 2).sum()))(x)
    assert torch._C._tn_batched_alive() == 0
    kept = []
    torch.func.vmap(lambda v: kept.append(v) or v)(x)
    assert torch._C._tn_batched_alive() == 1
    kept.clear()
    assert torch._C._tn_batched_alive() == 0
