"""The gradient comparison harness, counterpart of the operator harness (tests/optest):
the same cases run under upstream torch (.venv-ref) and under torchnative (.venv), each in
its own process; gradients are compared here.

A case is a function source over inputs built from the operator harness's seeded numpy
data. Each side marks the differentiable inputs as requiring grad, runs the function,
reduces every floating output with fixed random weights (so non-uniform gradients flow
into every element) and records the gradients of every input; with `double` the
gradients are taken with create_graph=True and differentiated again (second order).
This module is imported by both sides and by pytest; it must not import torch at module
level."""
import os
import pickle
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from optest.harness import In, build_input, encode  # noqa: E402,F401

# dtype -> (rtol, atol) for first-order gradients; the formulas and kernels may order
# sums differently from upstream, so float32 allows a few ulps of the accumulated value.
TOL = {"float64": (1e-10, 1e-10), "float32": (2e-5, 2e-5), "bfloat16": (3e-2, 3e-2)}


class GradCase:
    """fn: source of a lambda over the inputs returning a tensor or tuple of tensors.
    grad: indices of the inputs that require grad. covers: aten op idents (formulas.def
    rows) the case differentiates. double: also compare second-order gradients. error:
    the exception class both sides must raise instead."""

    def __init__(self, name, fn, inputs, grad, covers, double=False, dtypes=("float64", "float32"), rtol=None,
                 atol=None, error=None, tol=None):
        self.name, self.fn, self.inputs, self.grad, self.covers = name, fn, inputs, tuple(grad), covers
        self.error = error  # the exception class upstream raises (both sides must), or None
        self.double, self.dtypes, self.rtol, self.atol = double, dtypes, rtol, atol
        self.tol = tol or {}  # dtype -> (rtol, atol) for that dtype only, with the reason at the case


def _with_dtype(spec, dtype):
    if spec.dtype in ("float32", "float64", "bfloat16"):
        return In(spec.shape, dtype, spec.kind, spec.layout, spec.high)
    return spec


def _weights(torch, t, seed):
    rng = np.random.default_rng(seed)
    w = torch.from_numpy(rng.standard_normal(tuple(t.shape)).astype(np.float64))
    return w.to(t.dtype)


def run_case(torch, case, dtype):
    seed = zlib.crc32(case.name.encode())
    xs = [build_input(torch, _with_dtype(s, dtype), seed + i) for i, s in enumerate(case.inputs)]
    xs = [x.requires_grad_(True) if i in case.grad else x for i, x in enumerate(xs)]
    fn = eval(case.fn, {"torch": torch, "F": torch.nn.functional, "np": np})
    out = fn(*xs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    loss = None
    for k, o in enumerate(outs):
        if isinstance(o, torch.Tensor) and o.requires_grad:
            term = (o * _weights(torch, o, seed + 100 + k)).sum()
            loss = term if loss is None else loss + term
    targets = [xs[i] for i in case.grad]
    grads = torch.autograd.grad(loss, targets, create_graph=case.double, allow_unused=True)
    res = {"out": encode(torch, outs), "grad": encode(torch, list(grads))}
    if case.double:
        g2 = None
        for k, g in enumerate(grads):
            if g is not None and g.requires_grad:
                term = (g * _weights(torch, g, seed + 200 + k)).sum()
                g2 = term if g2 is None else g2 + term
        res["grad2"] = (encode(torch, list(torch.autograd.grad(g2, targets, allow_unused=True)))
                        if g2 is not None else None)
    return res


def run_cases(cases, out_path):
    import torch
    results = {}
    for case in cases:
        for dtype in case.dtypes:
            key = f"{case.name}|{dtype}"
            try:
                results[key] = ("ok", run_case(torch, case, dtype))
            except Exception as e:  # recorded, compared by class
                results[key] = ("err", type(e).__name__, str(e)[:300])
    with open(out_path, "wb") as f:
        pickle.dump(results, f)


def _array(enc):
    kind, dtype, shape, raw = enc
    if dtype == "bfloat16":
        u = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
        return u.view(np.float32).reshape(shape).astype(np.float64)
    return np.frombuffer(raw, dtype=dtype).reshape(shape).astype(np.float64)


def compare_enc(ref, got, rtol, atol, what):
    """None when equal within tolerance, else a message."""
    if ref[0] != got[0]:
        return f"{what}: kind {got[0]} vs upstream {ref[0]}"
    if ref[0] == "tuple":
        if len(ref[1]) != len(got[1]):
            return f"{what}: {len(got[1])} values vs upstream {len(ref[1])}"
        for i, (r, g) in enumerate(zip(ref[1], got[1])):
            m = compare_enc(r, g, rtol, atol, f"{what}[{i}]")
            if m:
                return m
        return None
    if ref[0] == "py":
        return None if ref[1] == got[1] else f"{what}: {got[1]!r} vs upstream {ref[1]!r}"
    if ref[0] != "tensor":
        return None
    if ref[1] != got[1] or tuple(ref[2]) != tuple(got[2]):
        return f"{what}: {got[1]}{list(got[2])} vs upstream {ref[1]}{list(ref[2])}"
    r, g = _array(ref), _array(got)
    if not np.allclose(g, r, rtol=rtol, atol=atol, equal_nan=True):
        err = np.max(np.abs(g - r)) if r.size else 0.0
        return f"{what}: max abs diff {err:.3g} (rtol {rtol}, atol {atol})"
    return None


def compare(case, dtype, ref, got):
    rtol, atol = TOL[dtype]
    rtol, atol = case.tol.get(dtype, (case.rtol or rtol, case.atol or atol))
    if ref[0] == "err" or got[0] == "err":
        if ref[0] == got[0] == "err" and ref[1] == got[1]:
            return None
        return f"upstream {ref[1:] if ref[0] == 'err' else 'ok'} / ours {got[1:] if got[0] == 'err' else 'ok'}"
    for part in ("out", "grad", "grad2"):
        if part not in ref[1]:
            continue
        if ref[1][part] is None or got[1].get(part) is None:
            if ref[1][part] is not got[1].get(part):
                return f"{part}: present on one side only"
            continue
        m = compare_enc(ref[1][part], got[1][part], rtol, atol, part)
        if m:
            return m
    return None
