"""The backward operators (convolution_backward, native_batch_norm_backward, ...) composed the
way upstream's derivative formulas compose them, compared with upstream's autograd gradients
on identical inputs; plus their out= (.grad_input) overloads and meta shapes. Op-by-op
comparisons live in the operator harness (tests/optest/cases.py, the bwd_* cases)."""
import json

import numpy as np
import pytest

from conftest import run_reference

# A small CNN and a transformer block, forward by upstream's autograd (reference) or by
# calling our forward ops and the backward ops by hand (ours). Inputs come from one seed.
SETUP = r"""
import json, numpy as np, torch
F = torch.nn.functional
rng = np.random.default_rng(7)
def T(*shape, scale=1.0):
    return torch.from_numpy(rng.standard_normal(shape) * scale)
x = T(4, 3, 12, 11); cw = T(6, 3, 3, 3, scale=0.3); cb = T(6, scale=0.1)
bw = T(6, scale=0.2) + 1; bb = T(6, scale=0.1)
lw = T(10, 6 * 6 * 6, scale=0.05); lb = T(10, scale=0.1)
target = torch.tensor([1, 7, 3, 9])
h = T(2, 5, 16); lnw = T(16, scale=0.1) + 1; lnb = T(16, scale=0.1); pw = T(16, 16, scale=0.2); gy = T(2, 5, 16)
"""

REFERENCE = SETUP + r"""
ps = [t.requires_grad_() for t in (x, cw, cb, bw, bb, lw, lb)]
y = F.conv2d(x, cw, cb, stride=1, padding=1)
y = F.batch_norm(y, None, None, bw, bb, training=True, eps=1e-5)
y = F.relu(y)
y = F.max_pool2d(y, 2, ceil_mode=True)
y = F.linear(y.flatten(1), lw, lb)
loss = F.cross_entropy(y, target)
grads = torch.autograd.grad(loss, ps)
for t in (h, lnw, lnb, pw):
    t.requires_grad_()
z = F.layer_norm(h, (16,), lnw, lnb)
z = F.gelu(z @ pw, approximate="tanh")
z = torch.softmax(z, -1) * torch.sigmoid(z)
grads2 = torch.autograd.grad(z, (h, lnw, lnb, pw), gy)
print(json.dumps({"loss": loss.item(), "cnn": [g.flatten().tolist() for g in grads],
                  "block": [g.flatten().tolist() for g in grads2]}))
"""

OURS = SETUP + r"""
A = torch.ops.aten
# forward
c = A.convolution.default(x, cw, cb, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
bn, smean, sinvstd = A.native_batch_norm.default(c, bw, bb, None, None, True, 0.1, 1e-5)[:3]
r = A.relu.default(bn)
mp, idx = A.max_pool2d_with_indices.default(r, [2, 2], [2, 2], [0, 0], [1, 1], True)
flat = mp.reshape(4, -1)
logits = flat @ lw.t() + lb
lsm = A._log_softmax.default(logits, 1, False)
loss, tw = A.nll_loss_forward.default(lsm, target, None, 1, -100)
# backward, formula by formula
g = A.nll_loss_backward.default(torch.tensor(1.0, dtype=loss.dtype), lsm, target, None, 1, -100, tw)
g = A._log_softmax_backward_data.default(g, lsm, 1, lsm.dtype)
glw, glb, g = g.t() @ flat, g.sum(0), g @ lw
g = A.max_pool2d_with_indices_backward.default(g.reshape(mp.shape), r, [2, 2], [2, 2], [0, 0], [1, 1], True, idx)
g = A.threshold_backward.default(g, r, 0)
g, gbw, gbb = A.native_batch_norm_backward.default(g, c, bw, None, None, smean, sinvstd, True, 1e-5, [True, True, True])
gx, gcw, gcb = A.convolution_backward.default(g, x, cw, [6], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])
grads = (gx, gcw, gcb, gbw, gbb, glw, glb)
# transformer block
ln, mean, rstd = A.native_layer_norm.default(h, [16], lnw, lnb, 1e-5)
m = ln @ pw
u = A.gelu.default(m, approximate="tanh")
sm = A._softmax.default(u, -1, False)
sg = A.sigmoid.default(u)
gu = A._softmax_backward_data.default(gy * sg, sm, -1, sm.dtype) + A.sigmoid_backward.default(gy * sm, sg)
gm = A.gelu_backward.default(gu, m, approximate="tanh")
gpw = ln.reshape(-1, 16).t() @ gm.reshape(-1, 16)
gln = gm @ pw.t()
gh, glnw, glnb = A.native_layer_norm_backward.default(gln, h, [16], mean, rstd, lnw, lnb, [True, True, True])
print(json.dumps({"loss": loss.item(), "cnn": [g.flatten().tolist() for g in grads],
                  "block": [g.flatten().tolist() for g in (gh, glnw, glnb, gpw)]}))
"""


def _ours(code):
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def both():
    return run_reference(REFERENCE), _ours(OURS)


def test_cnn_gradients_match_upstream_autograd(both):
    ref, ours = both
    assert ours["loss"] == pytest.approx(ref["loss"], rel=1e-12)
    names = ("input", "conv.weight", "conv.bias", "bn.weight", "bn.bias", "fc.weight", "fc.bias")
    for name, r, o in zip(names, ref["cnn"], ours["cnn"]):
        np.testing.assert_allclose(o, r, rtol=1e-9, atol=1e-12, err_msg=name)


def test_transformer_block_gradients_match_upstream_autograd(both):
    ref, ours = both
    for name, r, o in zip(("h", "ln.weight", "ln.bias", "proj"), ref["block"], ours["block"]):
        np.testing.assert_allclose(o, r, rtol=1e-9, atol=1e-12, err_msg=name)


def test_grad_input_overloads_write_the_out_tensor():
    import torch
    A = torch.ops.aten
    g, x = torch.randn(7, 33), torch.randn(7, 33)
    out = torch.empty(0)
    r = A.threshold_backward.grad_input(g, x, 0.1, grad_input=out)
    assert r is out and torch.equal(out, A.threshold_backward.default(g, x, 0.1))
    xp = torch.randn(2, 3, 9, 11)
    gp = torch.randn(2, 3, 5, 6)
    out = torch.empty(2, 3, 9, 11)
    A.avg_pool2d_backward.grad_input(gp, xp, [3, 3], [2, 2], [1, 1], True, False, None, grad_input=out)
    assert torch.equal(out, A.avg_pool2d_backward.default(gp, xp, [3, 3], [2, 2], [1, 1], True, False, None))


def test_meta_tensors_get_upstream_shapes():
    import torch
    A = torch.ops.aten
    x, w = torch.empty(2, 6, 9, 11, device="meta"), torch.empty(4, 3, 3, 3, device="meta")
    g = torch.empty(2, 4, 5, 9, device="meta")
    gx, gw, gb = A.convolution_backward.default(g, x, w, [4], [2, 1], [1, 1], [1, 2], False, [0, 0], 2, [True, True, True])
    assert (gx.shape, gw.shape, gb.shape) == (x.shape, w.shape, (4,)) and gx.is_meta
    gx, gw, gb = A.convolution_backward.default(g, x, w, None, [2, 1], [1, 1], [1, 2], False, [0, 0], 2, [False, True, False])
    assert gx is None and gb is None and gw.shape == w.shape
    gy = torch.empty(2, 4, 33, device="meta")
    assert A.gelu_backward.default(gy, gy).shape == gy.shape
    assert A._softmax_backward_data.default(gy, gy, 1, torch.float32).shape == gy.shape


def test_transposed_convolution_is_the_input_gradient():
    """conv_transpose2d(g, W) equals convolution_backward's grad_input for the same geometry."""
    import torch
    A = torch.ops.aten
    x, w = torch.randn(2, 6, 9, 11, dtype=torch.float64), torch.randn(4, 3, 3, 3, dtype=torch.float64)
    g = torch.randn(2, 4, 5, 9, dtype=torch.float64)
    gx = A.convolution_backward.default(g, x, w, None, [2, 1], [1, 1], [1, 2], False, [0, 0], 2, [True, False, False])[0]
    ct = torch.nn.functional.conv_transpose2d(g, w, stride=(2, 1), padding=1, output_padding=(0, 0), groups=2, dilation=(1, 2))
    np.testing.assert_allclose(ct.numpy(), gx.numpy(), rtol=1e-12, atol=1e-12)


def test_sdpa_backward_gqa_sums_the_shared_heads():
    """A key/value head serving two query heads gets the sum of their gradients: the same as
    running the repeated heads and summing (upstream's CPU flash kernel has no GQA form)."""
    import torch
    A = torch.ops.aten
    q = torch.randn(2, 4, 9, 8, dtype=torch.float64)
    k, v = torch.randn(2, 2, 11, 8, dtype=torch.float64), torch.randn(2, 2, 11, 8, dtype=torch.float64)
    g = torch.randn(2, 4, 9, 8, dtype=torch.float64)
    kr, vr = k.repeat_interleave(2, 1), v.repeat_interleave(2, 1)
    o, lse = A._scaled_dot_product_flash_attention_for_cpu.default(q, kr, vr, 0.0, True)[:2]
    gq, gk, gv = A._scaled_dot_product_flash_attention_for_cpu_backward.default(g, q, k, v, o, lse, 0.0, True)
    rq, rk, rv = A._scaled_dot_product_flash_attention_for_cpu_backward.default(g, q, kr, vr, o, lse, 0.0, True)
    np.testing.assert_allclose(gq.numpy(), rq.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gk.numpy(), rk.reshape(2, 2, 2, 11, 8).sum(2).numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gv.numpy(), rv.reshape(2, 2, 2, 11, 8).sum(2).numpy(), rtol=1e-12, atol=1e-12)


# Every backward operator on meta tensors: shapes, devices and dtypes as upstream's meta kernels.
META = r"""
import torch
A = torch.ops.aten
m = lambda *s, dt=torch.float32: torch.empty(*s, device="meta", dtype=dt)
L = torch.long
tests = {
 "conv": lambda: A.convolution_backward.default(m(2,4,5,9), m(2,6,9,11), m(4,3,3,3), [4], [2,1], [1,1], [1,2], False, [0,0], 2, [True]*3),
 "convT": lambda: A.convolution_backward.default(m(2,6,10,16), m(2,4,5,7), m(4,3,3,3), [6], [2,2], [1,1], [1,2], True, [1,1], 2, [True]*3),
 "maxpool": lambda: A.max_pool2d_with_indices_backward.default(m(2,3,4,5), m(2,3,9,11), [2,2], [2,2], [0,0], [1,1], False, m(2,3,4,5, dt=L)),
 "avgpool": lambda: A.avg_pool2d_backward.default(m(2,3,4,5), m(2,3,9,11), [2,2], [2,2], [0,0], False, True, None),
 "adaptive": lambda: A._adaptive_avg_pool2d_backward.default(m(2,3,4,5), m(2,3,9,11)),
 "up_nearest": lambda: A.upsample_nearest2d_backward.default(m(2,3,10,14), [10,14], [2,3,5,7]),
 "up_bilinear": lambda: A.upsample_bilinear2d_backward.default(m(2,3,10,14), [10,14], [2,3,5,7], False),
 "bn": lambda: A.native_batch_norm_backward.default(m(4,3,5), m(4,3,5), m(3), None, None, m(3), m(3), True, 1e-5, [True]*3),
 "ln": lambda: A.native_layer_norm_backward.default(m(3,7), m(3,7), [7], m(3,1), m(3,1), m(7), m(7), [True]*3),
 "gn": lambda: A.native_group_norm_backward.default(m(2,6,5), m(2,6,5), m(2,3), m(2,3), m(6), 2, 6, 5, 3, [True]*3),
 "rms": lambda: A._fused_rms_norm_backward.default(m(3,7), m(3,7), [7], m(3,1), m(7), [True, True]),
 "softmax": lambda: A._softmax_backward_data.default(m(3,7), m(3,7), 1, torch.float32),
 "nll": lambda: A.nll_loss_backward.default(m(()), m(3,7), m(3, dt=L), None, 1, -100, m(())),
 "nll2d": lambda: A.nll_loss2d_backward.default(m(()), m(2,4,5,6), m(2,5,6, dt=L), None, 1, -100, m(())),
 "emb": lambda: A.embedding_dense_backward.default(m(5,7,16), m(5,7, dt=L), 10, -1, False),
 "glu": lambda: A.glu_backward.default(m(4,3,5), m(4,6,5), 1),
 "gelu": lambda: A.gelu_backward.default(m(3,7), m(3,7)),
 "mse": lambda: A.mse_loss_backward.default(m(()), m(3,7), m(3,7), 1),
 "bce": lambda: A.binary_cross_entropy_backward.default(m(()), m(3,7), m(3,7), m(3,7), 1),
 "dropout": lambda: A.native_dropout_backward.default(m(3,7), m(3,7, dt=torch.bool), 2.0),
 "pad": lambda: A.reflection_pad2d_backward.default(m(2,10,12), m(2,5,7), [2,3,1,4]),
 "sdpa": lambda: A._scaled_dot_product_flash_attention_for_cpu_backward.default(m(1,2,5,8), m(1,2,5,8), m(1,2,7,8), m(1,2,7,8), m(1,2,5,8), m(1,2,5), 0.0, False),
 "select": lambda: A.select_backward.default(m(3), [3,4], 1, 2),
 "slice": lambda: A.slice_backward.default(m(3,2), [3,4], 1, 0, 4, 2),
 "diag": lambda: A.diagonal_backward.default(m(3), [3,4], 0, 0, 1),
 "vsr": lambda: A.value_selecting_reduction_backward.default(m(3), 1, m(3, dt=L), [3,4], False),
 "isb": lambda: A.index_select_backward.default(m(3,2), [3,4], 1, m(2, dt=L)),
 "unfold": lambda: A.unfold_backward.default(m(4,3), [10], 0, 3, 2),
}
out = {}
for k, f in tests.items():
    try:
        r = f()
        r = r if isinstance(r, tuple) else (r,)
        out[k] = [None if t is None else [list(t.shape), t.device.type, str(t.dtype)] for t in r]
    except Exception as e:
        out[k] = ["error", type(e).__name__]
import json
print(json.dumps(out))
"""


def test_meta_results_match_upstream():
    ref, ours = run_reference(META), _ours(META)
    assert ours == ref
