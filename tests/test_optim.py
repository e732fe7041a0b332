"""The genuine torch.optim on our core against upstream torch 2.13.0 (.venv-ref).

Each case builds the same parameters and the same sequence of hand-made gradients (numpy
draws with a fixed seed, assigned to `.grad`) on both sides, steps the optimizer, and
reports every parameter and every optimizer-state tensor as raw bytes. One upstream
process runs all cases of a group; this process runs them on our core. Equality is
bit-for-bit unless a case says otherwise (TOLERANCES, with the reason).

Also: lr schedulers (the lr sequence), clip_grad_norm_ / clip_grad_value_ (foreach and
not), optimizer state_dict round trips through torch.save / torch.load in both directions,
zero_grad (record_function's profiler operators) and the _foreach_* errors. NAdam, RAdam,
Adamax, Adadelta, Rprop, ASGD and Adafactor run too (for-loop and foreach).

    .venv/bin/python -m pytest tests/test_optim.py -q
"""
import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import REF_PYTHON, run_reference

# ---- code run on both sides ---------------------------------------------------------------
SIDE = r'''
import ctypes, json, math, os
import numpy as np
import torch

SHAPES = [(7, 33), (16,), (5,), (3, 4, 5), (1000,), (), (2, 17)]


def enc(t):
    t = t.detach().contiguous()
    raw = ctypes.string_at(t.data_ptr(), t.numel() * t.element_size()) if t.numel() else b""
    return [str(t.dtype), list(t.shape), raw.hex()]


def enc_any(v):
    if isinstance(v, torch.Tensor):
        return enc(v)
    if isinstance(v, (list, tuple)):
        return [enc_any(x) for x in v]
    return v


def dtype_of(name):
    return getattr(torch, name)


def make_params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [torch.nn.Parameter(torch.from_numpy(np.asarray(rng.standard_normal(s), dtype=np.float32)).to(dtype))
            for s in SHAPES]


def set_grads(params, step, dtype, seed=1000):
    rng = np.random.default_rng(seed + step)
    for p in params:
        g = np.asarray(rng.standard_normal(tuple(p.shape)), dtype=np.float32)
        p.grad = torch.from_numpy(g).to(dtype)


def report(params, opt):
    sd = opt.state_dict()
    state = {str(k): {n: enc_any(v) for n, v in sorted(s.items())} for k, s in sd["state"].items()}
    return {"params": [enc(p) for p in params], "state": state,
            "groups": [{k: v for k, v in g.items() if k != "params" and isinstance(v, (int, float, bool, type(None)))}
                       for g in sd["param_groups"]]}


def run_optim(spec):
    dtype = dtype_of(spec["dtype"])
    params = make_params(dtype)
    kw = dict(spec["kw"])
    if spec.get("tensor_lr"):
        kw["lr"] = torch.tensor(kw["lr"])
    opt = getattr(torch.optim, spec["opt"])(params, **kw)
    for step in range(spec["steps"]):
        set_grads(params, step, dtype)
        opt.step()
        if spec.get("zero_grad") is not None:
            opt.zero_grad(set_to_none=spec["zero_grad"])
    return report(params, opt)


def run_sched(spec):
    p = torch.nn.Parameter(torch.zeros(3))
    opt = torch.optim.SGD([p], lr=spec.get("lr", 0.1), momentum=0.9)
    kind, kw = spec["sched"], dict(spec["kw"])
    if kind == "LambdaLR":
        kw["lr_lambda"] = lambda epoch: 0.95 ** epoch + 0.01 * (epoch % 3)
    sched = getattr(torch.optim.lr_scheduler, kind)(opt, **kw)
    lrs = []
    for i in range(spec["steps"]):
        p.grad = torch.full((3,), 0.5)
        opt.step()
        if kind == "ReduceLROnPlateau":
            sched.step(spec["metrics"][i])
        else:
            sched.step()
        lrs.append([g["lr"] for g in opt.param_groups])
    last = None if kind == "ReduceLROnPlateau" else sched.get_last_lr()
    return {"lrs": lrs, "last": last, "state": {k: v for k, v in sched.state_dict().items()
                                                  if isinstance(v, (int, float, bool, str, list, type(None)))}}


def run_clip(spec):
    dtype = dtype_of(spec["dtype"])
    params = make_params(dtype)
    set_grads(params, 0, dtype)
    if spec["fn"] == "norm":
        total = torch.nn.utils.clip_grad_norm_(params, spec["max"], norm_type=spec["norm_type"], foreach=spec["foreach"])
        out = enc(total)
    else:
        torch.nn.utils.clip_grad_value_(params, spec["max"], foreach=spec["foreach"])
        out = None
    return {"total": out, "grads": [enc(p.grad) for p in params]}


def run_error(spec):
    try:
        eval(spec["src"], {"torch": torch})
    except Exception as e:
        return {"cls": type(e).__name__, "msg": str(e).splitlines()[0] if str(e) else ""}
    return {"cls": None, "msg": ""}


def roundtrip_save(spec, path):
    dtype = dtype_of(spec["dtype"])
    params = make_params(dtype)
    opt = getattr(torch.optim, spec["opt"])(params, **spec["kw"])
    for step in range(spec["steps"]):
        set_grads(params, step, dtype)
        opt.step()
    torch.save({"params": [p.detach() for p in params], "opt": opt.state_dict()}, path)


def roundtrip_load(spec, path):
    dtype = dtype_of(spec["dtype"])
    ck = torch.load(path, weights_only=True)
    params = [torch.nn.Parameter(t) for t in ck["params"]]
    opt = getattr(torch.optim, spec["opt"])(params, **spec["kw"])
    opt.load_state_dict(ck["opt"])
    for step in range(spec["steps"], spec["steps"] + spec["more"]):
        set_grads(params, step, dtype)
        opt.step()
    return report(params, opt)


def roundtrip_straight(spec):
    s = dict(spec)
    s["steps"] = spec["steps"] + spec["more"]
    return run_optim(s)


def run_grad(spec):
    """Gradients through _foreach_* operators (each element records its own node)."""
    dtype = dtype_of(spec["dtype"])
    ps = [p.detach().requires_grad_() for p in make_params(dtype)[:4]]
    qs = [p.detach().requires_grad_() for p in make_params(dtype, seed=5)[:4]]
    out = eval(spec["src"], {"torch": torch, "ps": ps, "qs": qs})
    sum(o.sum() for o in out).backward()
    return {"out": [enc(o) for o in out], "grads": [None if p.grad is None else enc(p.grad) for p in ps + qs]}


RUNNERS = {"grad": run_grad, "optim": run_optim, "sched": run_sched, "clip": run_clip, "error": run_error,
           "load": lambda s: roundtrip_load(s, s["path"]), "straight": roundtrip_straight,
           "save": lambda s: roundtrip_save(s, s["path"])}


def run_all(specs):
    out = {}
    for s in specs:
        try:
            out[s["name"]] = RUNNERS[s["kind"]](s)
        except Exception as e:
            out[s["name"]] = {"exception": f"{type(e).__name__}: {e}"}
    return out
'''

_ns = {}
exec(compile(SIDE, "test_optim_side", "exec"), _ns)


def run_here(specs):
    return _ns["run_all"](specs)


def run_upstream(specs):
    return run_reference(SIDE + f"\nprint(json.dumps(run_all(json.loads({json.dumps(specs)!r}))))")


# ---- the cases ---------------------------------------------------------------------------
def _forms(opt, base, fused_ok):
    forms = [("forloop", {"foreach": False}), ("foreach", {"foreach": True})]
    if fused_ok:
        forms.append(("fused", {"fused": True}))
    return [(name, dict(base, **extra)) for name, extra in forms]


OPTIM_CONFIGS = [
    ("SGD", "plain", {"lr": 0.1}, True),
    ("SGD", "momentum", {"lr": 0.05, "momentum": 0.9}, True),
    ("SGD", "nesterov_wd", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}, True),
    ("SGD", "dampening_maximize", {"lr": 0.03, "momentum": 0.8, "dampening": 0.3, "maximize": True,
                                   "weight_decay": 0.1}, True),
    ("Adam", "default", {"lr": 1e-2}, True),
    ("Adam", "wd_maximize", {"lr": 3e-3, "weight_decay": 0.05, "maximize": True, "betas": (0.8, 0.99)}, True),
    ("Adam", "amsgrad", {"lr": 1e-2, "amsgrad": True, "eps": 1e-6}, True),
    ("AdamW", "default", {"lr": 1e-2}, True),
    ("AdamW", "amsgrad", {"lr": 2e-2, "amsgrad": True, "weight_decay": 0.1, "betas": (0.3, 0.95)}, True),
    ("RMSprop", "default", {"lr": 1e-2}, False),
    ("RMSprop", "centered_momentum", {"lr": 1e-2, "centered": True, "momentum": 0.9, "weight_decay": 0.01}, False),
    ("RMSprop", "momentum_maximize", {"lr": 5e-3, "momentum": 0.5, "maximize": True, "alpha": 0.9}, False),
    ("Adagrad", "default", {"lr": 0.1}, True),
    ("Adagrad", "decay_wd", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.05, "initial_accumulator_value": 0.1,
                             "eps": 1e-8}, True),
]

OPTIM_CASES = []
for _opt, _cfg, _kw, _fused in OPTIM_CONFIGS:
    for _form, _fkw in _forms(_opt, _kw, _fused):
        for _dt in ("float32", "float64", "bfloat16"):
            if _dt != "float32" and _form == "forloop" and _cfg not in ("default", "plain", "amsgrad") and _opt != "SGD":
                continue  # float64/bfloat16 for-loop: one config per optimizer is enough
            case = {"kind": "optim", "name": f"{_opt}_{_cfg}_{_form}_{_dt}", "opt": _opt, "kw": _fkw,
                    "dtype": _dt, "steps": 6, "form": _form, "config": _cfg}
            if _opt == "SGD" and _form == "fused" and _dt == "bfloat16":
                # upstream 2.13's 16-bit fused SGD leaves most parameters unchanged (its vector
                # loop never stores them; see kernels/optim_fused.c): compared with upstream's
                # for-loop SGD instead
                case["ref"] = f"{_opt}_{_cfg}_forloop_{_dt}"
            OPTIM_CASES.append(case)
# float16 fused steps (Adam, AdamW, Adagrad: bit for bit; SGD's 16-bit vector loop is
# upstream's defect as in bfloat16, so it is left out here)
for _opt, _cfg, _kw, _fused in OPTIM_CONFIGS:
    if _fused and _opt != "SGD":
        OPTIM_CASES.append({"kind": "optim", "name": f"{_opt}_{_cfg}_fused_float16", "opt": _opt,
                            "kw": dict(_kw, fused=True), "dtype": "float16", "steps": 6, "form": "fused",
                            "config": _cfg})
# The other optimizers of torch.optim, for-loop and foreach, float32 and float64.
EXTRA_CONFIGS = [
    ("NAdam", "default", {"lr": 1e-2}),
    ("NAdam", "decoupled", {"lr": 1e-2, "decoupled_weight_decay": True, "weight_decay": 0.01}),
    ("RAdam", "default", {"lr": 1e-2}),
    ("RAdam", "decoupled", {"lr": 1e-2, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adamax", "wd", {"lr": 1e-2, "weight_decay": 0.01}),
    ("Adadelta", "wd", {"lr": 1.0, "weight_decay": 0.01}),
    ("Rprop", "default", {"lr": 1e-2}),
    ("ASGD", "t0", {"lr": 1e-2, "t0": 2}),
    ("Adafactor", "default", {"lr": 1e-2}),
]
for _opt, _cfg, _kw in EXTRA_CONFIGS:
    for _form, _fkw in _forms(_opt, _kw, False):
        for _dt in ("float32", "float64"):
            OPTIM_CASES.append({"kind": "optim", "name": f"{_opt}_{_cfg}_{_form}_{_dt}", "opt": _opt, "kw": _fkw,
                                "dtype": _dt, "steps": 6, "form": _form, "config": _cfg})
# lr as a tensor (for-loop and fused; upstream refuses it for foreach without capturable)
for _opt, _kw in (("Adam", {"lr": 1e-2, "amsgrad": True}), ("AdamW", {"lr": 1e-2}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
                  ("Adagrad", {"lr": 0.1})):
    for _form, _fkw in (("forloop", {"foreach": False}), ("fused", {"fused": True})):
        OPTIM_CASES.append({"kind": "optim", "name": f"{_opt}_tensor_lr_{_form}", "opt": _opt, "kw": dict(_kw, **_fkw),
                            "tensor_lr": True, "dtype": "float32", "steps": 4, "form": _form, "config": "tensor_lr"})
# zero_grad between steps (set_to_none=False runs _foreach_zero_ under record_function)
OPTIM_CASES += [
    {"kind": "optim", "name": "SGD_zero_grad_keep", "opt": "SGD", "kw": {"lr": 0.1, "momentum": 0.9, "foreach": True},
     "dtype": "float32", "steps": 3, "zero_grad": False, "form": "foreach"},
    {"kind": "optim", "name": "Adam_zero_grad_none", "opt": "Adam", "kw": {"lr": 1e-2, "foreach": False},
     "dtype": "float32", "steps": 3, "zero_grad": True, "form": "forloop"},
]

# Which cases must be bit-for-bit, and how far the others may be, with the reason.
#
# Bit-for-bit: every fused step (Adam, AdamW, Adagrad in float32/float64/bfloat16; SGD in
# float32/float64): kernels/optim_fused.c follows upstream's compiled loops operation for
# operation; and SGD in every form in float32/float64 (only mul/add/addcmul-style ops).
#
# Within SQRT_ULPS units in the last place (float32/float64 for-loop and foreach Adam,
# AdamW, RMSprop, Adagrad): upstream's torch.sqrt (at::vml, MKL's VML in this wheel) is
# not correctly rounded, and how often depends on the host: on AVX-512 Intel hosts one
# ulp below the root for about 0.6% of inputs (636 of 100000 float32, 737 of 100000
# float64 against numpy); on an AVX2 AMD EPYC host one ulp off either way for 15.6% of
# float32 and 1.3% of float64 inputs (session 17, 100000 inputs in [0, 10)). Ours is
# correctly rounded. Each such ulp propagates through the remaining steps (RMSprop's
# centered variance subtracts nearly equal numbers, so it amplifies most), and an element
# that the steps carry near zero is many of its own ulps off, so an element may be off by
# SQRT_ULPS of its own ulps or of the ulps of its tensor's largest magnitude (_diff).
#
# Within BF16_SCALE of each tensor's largest magnitude (bfloat16 for-loop and foreach, and
# fused bfloat16 SGD against upstream's for-loop): besides the sqrt above, upstream's
# bfloat16 add/sub with alpha != 1 rounds alpha * other to bfloat16 before adding on the
# last n % 32 elements of a tensor (its scalar tail; measured), while ours rounds once;
# in bfloat16 one rounding step is 0.4% and momentum/variance carry it forward (4.7% of
# the tensor's range measured at worst, RMSprop/AdamW after 6 steps).
SQRT_ULPS = {"RMSprop": 64}
SQRT_ULPS_DEFAULT = 8
BF16_SCALE = 0.06


def tolerance(case):
    """('exact',) | ('ulp', n) | ('scale', fraction) for one optimizer case."""
    if case["dtype"] in ("bfloat16", "float16"):
        if case["form"] == "fused" and case["opt"] != "SGD":
            return ("exact",)
        if case["opt"] == "Adam" and case["form"] == "forloop" and case.get("config") == "default":
            return ("exact",)  # measured equal; keeps one bfloat16 non-fused case strict
        return ("scale", BF16_SCALE)
    if case["form"] == "fused" or case["opt"] == "SGD":
        return ("exact",)
    return ("ulp", SQRT_ULPS.get(case["opt"], SQRT_ULPS_DEFAULT))


def _floats(e):
    dt, _, hx = e
    raw = bytes.fromhex(hx)
    if dt == "torch.bfloat16":
        return (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.frombuffer(raw, np.float64 if dt == "torch.float64" else np.float32).astype(np.float64)


def _ulps(dtype, a_hex, b_hex):
    a, b = bytes.fromhex(a_hex), bytes.fromhex(b_hex)
    if dtype in ("torch.bfloat16", "torch.float16"):
        ai = np.frombuffer(a, np.int16).astype(np.int64)
        bi = np.frombuffer(b, np.int16).astype(np.int64)
    elif dtype == "torch.float64":
        ai = np.frombuffer(a, np.int64).astype(object)
        bi = np.frombuffer(b, np.int64).astype(object)
    else:
        ai = np.frombuffer(a, np.int32).astype(np.int64)
        bi = np.frombuffer(b, np.int32).astype(np.int64)
    if len(ai) == 0:
        return 0
    # map sign-magnitude to a monotone integer line
    def mono(x, bits):
        x = np.array(x, dtype=object)
        return np.array([v if v >= 0 else -(v + (1 << (bits - 1))) for v in x], dtype=object)
    bits = {"torch.bfloat16": 16, "torch.float16": 16, "torch.float64": 64}.get(dtype, 32)
    return int(max(abs(int(p) - int(q)) for p, q in zip(mono(ai, bits), mono(bi, bits))))


def _diff(ref, got, path="", limit=0, scale=None):
    """(description or None, largest ulp distance) between two encoded reports. Tensors
    may differ by `limit` ulp (float32/float64: of the element or of the tensor's largest
    magnitude), or with `scale`, by scale * their largest magnitude."""
    if isinstance(ref, list) and len(ref) == 3 and isinstance(ref[0], str) and ref[0].startswith("torch."):
        if not (isinstance(got, list) and len(got) == 3):
            return f"{path}: {got!r} is not a tensor", 0
        if ref[0] != got[0] or ref[1] != got[1]:
            return f"{path}: {got[0]}{got[1]} != {ref[0]}{ref[1]}", 0
        if ref[2] == got[2]:
            return None, 0
        if scale is not None:
            a, b = _floats(ref), _floats(got)
            worst = float(np.abs(a - b).max())
            bound = scale * float(np.abs(a).max())
            ok = np.isfinite(b).all() and worst <= bound
            return (None if ok else f"{path}: differs by {worst:.3g} > {bound:.3g}"), 0
        u = _ulps(ref[0], ref[2], got[2])
        if u > limit and limit and ref[0] in ("torch.float32", "torch.float64"):
            # counted in ulps of the tensor's largest magnitude: an element near zero
            # that a one-ulp difference upstream of it moved is not a thousand ulps off
            a, b = _floats(ref), _floats(got)
            unit = float(np.spacing(np.abs(a).max().astype(np.float64 if ref[0] == "torch.float64" else np.float32)))
            u = int(np.ceil(np.abs(a - b).max() / unit)) if np.isfinite(b).all() else u
        return (None if u <= limit else f"{path}: {u} ulp"), u
    if isinstance(ref, dict):
        if set(ref) != set(got if isinstance(got, dict) else {}):
            return f"{path}: keys {sorted(got) if isinstance(got, dict) else got} != {sorted(ref)}", 0
        worst = 0
        for k in ref:
            d, u = _diff(ref[k], got[k], f"{path}.{k}", limit, scale)
            worst = max(worst, u)
            if d:
                return d, worst
        return None, worst
    if isinstance(ref, list):
        if not isinstance(got, list) or len(ref) != len(got):
            return f"{path}: {got!r} != {ref!r}", 0
        worst = 0
        for i, (a, b) in enumerate(zip(ref, got)):
            d, u = _diff(a, b, f"{path}[{i}]", limit, scale)
            worst = max(worst, u)
            if d:
                return d, worst
        return None, worst
    return (None if ref == got else f"{path}: {got!r} != {ref!r}"), 0


@pytest.fixture(scope="module")
def optim_results():
    return run_upstream(OPTIM_CASES), run_here(OPTIM_CASES)


@pytest.mark.parametrize("case", OPTIM_CASES, ids=[c["name"] for c in OPTIM_CASES])
def test_optimizer_matches_upstream(case, optim_results):
    ref, ours = optim_results
    r, g = ref[case.get("ref", case["name"])], ours[case["name"]]
    assert "exception" not in r, r
    assert "exception" not in g, g["exception"]
    if "ref" in case:  # another form's hyper-parameters differ (foreach/fused flags)
        r, g = {k: v for k, v in r.items() if k != "groups"}, {k: v for k, v in g.items() if k != "groups"}
    tol = tolerance(case)
    if tol[0] == "scale":
        d, _ = _diff(r, g, case["name"], scale=tol[1])
    else:
        d, _ = _diff(r, g, case["name"], limit=tol[1] if tol[0] == "ulp" else 0)
    assert d is None, f"{d} (tolerance {tol})"


# ---- lr schedulers ---------------------------------------------------------------------------
SCHED_CASES = [
    {"kind": "sched", "name": "StepLR", "sched": "StepLR", "kw": {"step_size": 3, "gamma": 0.5}, "steps": 10},
    {"kind": "sched", "name": "CosineAnnealingLR", "sched": "CosineAnnealingLR", "kw": {"T_max": 7, "eta_min": 1e-3},
     "steps": 16},
    {"kind": "sched", "name": "OneCycleLR", "sched": "OneCycleLR", "kw": {"max_lr": 0.5, "total_steps": 20},
     "steps": 19},
    {"kind": "sched", "name": "OneCycleLR_linear", "sched": "OneCycleLR",
     "kw": {"max_lr": 0.3, "total_steps": 12, "anneal_strategy": "linear", "three_phase": True}, "steps": 11},
    {"kind": "sched", "name": "LambdaLR", "sched": "LambdaLR", "kw": {}, "steps": 9},
    {"kind": "sched", "name": "ExponentialLR", "sched": "ExponentialLR", "kw": {"gamma": 0.9}, "steps": 8},
    {"kind": "sched", "name": "MultiStepLR", "sched": "MultiStepLR", "kw": {"milestones": [2, 5], "gamma": 0.3}, "steps": 8},
    {"kind": "sched", "name": "LinearLR", "sched": "LinearLR", "kw": {"start_factor": 0.25, "total_iters": 5}, "steps": 8},
    {"kind": "sched", "name": "PolynomialLR", "sched": "PolynomialLR", "kw": {"total_iters": 6, "power": 1.5}, "steps": 8},
    {"kind": "sched", "name": "CosineAnnealingWarmRestarts", "sched": "CosineAnnealingWarmRestarts",
     "kw": {"T_0": 3, "T_mult": 2, "eta_min": 1e-4}, "steps": 12},
    {"kind": "sched", "name": "CyclicLR", "sched": "CyclicLR", "kw": {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3},
     "steps": 10},
    {"kind": "sched", "name": "ReduceLROnPlateau", "sched": "ReduceLROnPlateau",
     "kw": {"factor": 0.5, "patience": 1, "threshold": 0.01},
     "metrics": [1.0, 0.9, 0.95, 0.95, 0.96, 0.5, 0.6, 0.6, 0.6, 0.6], "steps": 10},
]


@pytest.fixture(scope="module")
def sched_results():
    return run_upstream(SCHED_CASES), run_here(SCHED_CASES)


@pytest.mark.parametrize("case", SCHED_CASES, ids=[c["name"] for c in SCHED_CASES])
def test_lr_scheduler_matches_upstream(case, sched_results):
    ref, ours = sched_results
    assert ours[case["name"]] == ref[case["name"]]


# ---- clip_grad ---------------------------------------------------------------------------------
CLIP_CASES = []
for _fe in (False, True):
    for _nt in (2.0, 1.0, float("inf"), 3.0):
        for _dt in ("float32", "float64"):
            CLIP_CASES.append({"kind": "clip", "name": f"norm_{_nt}_{'foreach' if _fe else 'loop'}_{_dt}", "fn": "norm",
                               "max": 0.5, "norm_type": _nt, "foreach": _fe, "dtype": _dt})
    CLIP_CASES.append({"kind": "clip", "name": f"norm_large_max_{_fe}", "fn": "norm", "max": 1e6, "norm_type": 2.0,
                       "foreach": _fe, "dtype": "float32"})
    CLIP_CASES.append({"kind": "clip", "name": f"value_{'foreach' if _fe else 'loop'}", "fn": "value", "max": 0.1,
                       "foreach": _fe, "dtype": "float32"})
    CLIP_CASES.append({"kind": "clip", "name": f"value_bf16_{_fe}", "fn": "value", "max": 0.3, "foreach": _fe,
                       "dtype": "bfloat16"})


@pytest.fixture(scope="module")
def clip_results():
    return run_upstream(CLIP_CASES), run_here(CLIP_CASES)


@pytest.mark.parametrize("case", CLIP_CASES, ids=[c["name"] for c in CLIP_CASES])
def test_clip_grad_matches_upstream(case, clip_results):
    ref, ours = clip_results
    r, g = ref[case["name"]], ours[case["name"]]
    assert "exception" not in g, g
    d, _ = _diff(r, g, case["name"])
    assert d is None, d


# ---- state_dict round trips through torch.save / torch.load ---------------------------------------
RT_CONFIGS = [
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "foreach": True}),
    ("Adam", {"lr": 1e-2, "amsgrad": True, "fused": True}),
    ("Adam", {"lr": 1e-2, "amsgrad": True, "foreach": True}),
    ("AdamW", {"lr": 1e-2, "weight_decay": 0.1, "fused": True}),
    ("RMSprop", {"lr": 1e-2, "centered": True, "momentum": 0.5}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "fused": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "foreach": False}),
]


@pytest.mark.parametrize("opt,kw", RT_CONFIGS, ids=[f"{c[0]}_{'fused' if c[1].get('fused') else 'foreach' if c[1].get('foreach') else 'forloop'}"
                                                  for c in RT_CONFIGS])
def test_state_dict_round_trip_with_upstream(opt, kw, tmp_path):
    """Three steps, save; load on the other side, two more steps: equal to five straight
    upstream steps, whichever side saved (within the optimizer's tolerance above: the
    saved state is carried bit for bit, the arithmetic of our three steps is compared)."""
    base = {"opt": opt, "kw": kw, "dtype": "float32", "steps": 3, "more": 2}
    ours_file, ref_file = str(tmp_path / "ours.pt"), str(tmp_path / "ref.pt")
    _ns["roundtrip_save"](base, ours_file)
    ref = run_upstream([dict(base, kind="straight", name="straight"),
                        dict(base, kind="load", name="load_ours", path=ours_file),
                        dict(base, kind="save", name="save", path=ref_file)])
    assert "exception" not in ref["load_ours"], ref["load_ours"]
    ours_loaded = _ns["roundtrip_load"](base, ref_file)
    form = "fused" if kw.get("fused") else "foreach" if kw.get("foreach") else "forloop"
    tol = tolerance({"opt": opt, "form": form, "dtype": "float32"})
    limit = tol[1] if tol[0] == "ulp" else 0
    d, _ = _diff(ref["straight"], ref["load_ours"], "upstream loading ours", limit)
    assert d is None, d
    d, _ = _diff(ref["straight"], ours_loaded, "ours loading upstream's", limit)
    assert d is None, d


# ---- operators and errors -------------------------------------------------------------------------
ERROR_CASES = [
    ("empty_list", "torch._foreach_add([], 1.0)"),
    ("length_mismatch", "torch._foreach_add([torch.ones(2), torch.ones(3)], [torch.ones(2)])"),
    ("length_mismatch_inplace", "torch._foreach_mul_([torch.ones(2)], [torch.ones(2), torch.ones(2)])"),
    ("scalarlist_mismatch", "torch._foreach_add([torch.ones(2), torch.ones(3)], [1.0])"),
    ("ternary_mismatch", "torch._foreach_addcmul([torch.ones(2)], [torch.ones(2)], [torch.ones(2), torch.ones(1)])"),
    ("tensor_not_scalar", "torch._foreach_mul([torch.ones(2)], torch.ones(2))"),
    ("packed_scalars_len", "torch._foreach_addcdiv([torch.ones(2)], [torch.ones(2)], [torch.ones(2)], torch.ones(3))"),
    ("packed_scalars_dim", "torch._foreach_addcdiv([torch.ones(2)], [torch.ones(2)], [torch.ones(2)], torch.ones(1, 1))"),
    ("shape_mismatch", "torch._foreach_add([torch.ones(2)], [torch.ones(3)])"),
    ("dtype_cast_inplace", "torch._foreach_add_([torch.ones(2, dtype=torch.int64)], 1.5)"),
    ("bool_neg", "torch._foreach_neg([torch.ones(2, dtype=torch.bool)])"),
    ("fused_adam_lengths", "torch._fused_adam_([torch.ones(2)], [], [torch.ones(2)], [torch.ones(2)], [], "
                           "[torch.ones(())], lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, "
                           "amsgrad=False, maximize=False)"),
    ("fused_adam_int", "torch._fused_adam_([torch.ones(2, dtype=torch.int32)], [torch.ones(2, dtype=torch.int32)], "
                       "[torch.ones(2, dtype=torch.int32)], [torch.ones(2, dtype=torch.int32)], [], [torch.ones(())], "
                       "lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)"),
    ("fused_sgd_buffers", "torch._fused_sgd_([torch.ones(2)], [torch.ones(2)], [], weight_decay=0.0, momentum=0.9, "
                          "lr=0.1, dampening=0.0, nesterov=False, maximize=False, is_first_step=True)"),
    ("group_mixed", "torch._C._group_tensors_by_device_and_dtype([[torch.ones(2)], [torch.ones(2, dtype=torch.int64)]], "
                    "False)"),
    ("group_bf16_state", "torch._C._group_tensors_by_device_and_dtype([[torch.ones(2)], [torch.ones(2, dtype=torch.bfloat16)]], "
                         "False) and None"),
    ("group_f16_state", "torch._C._group_tensors_by_device_and_dtype([[torch.ones(2)], [torch.ones(2, dtype=torch.float16)]], "
                        "False)"),
    ("group_none_first", "torch._C._group_tensors_by_device_and_dtype([[None]], False)"),
    ("lerp_scalarlist", "torch._foreach_lerp([torch.ones(2)], [torch.ones(2)], [0.5, 0.2])"),
    ("pow_scalar_empty", "torch._foreach_pow(2.0, [])"),
]
ERROR_SPECS = [{"kind": "error", "name": n, "src": s} for n, s in ERROR_CASES]


@pytest.fixture(scope="module")
def error_results():
    return run_upstream(ERROR_SPECS), run_here(ERROR_SPECS)


@pytest.mark.parametrize("name", [n for n, _ in ERROR_CASES])
def test_errors_match_upstream(name, error_results):
    ref, ours = error_results
    r, g = ref[name], ours[name]
    assert g["cls"] == r["cls"], (g, r)
    if r["cls"] is not None:
        # the message's start, up to where upstream prints C++ detail
        assert g["msg"][:40] == r["msg"][:40], (g["msg"], r["msg"])


def test_zero_grad_runs_record_function():
    """optimizer.zero_grad() enters torch.autograd.profiler.record_function, whose
    profiler:: operators are registered outside aten."""
    p = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.SGD([p], lr=0.1)
    p.grad = torch.ones(3)
    opt.zero_grad()
    assert p.grad is None
    with torch.autograd.profiler.record_function("label"):
        pass
    rec = torch.ops.profiler._record_function_enter_new("x", None)
    torch.ops.profiler._record_function_exit._RecordFunction(rec)


def test_torch_library_op_runs_its_python_kernel():
    lib = torch.library.Library("tn_optim_test", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2, "CPU")
        out = torch.ops.tn_optim_test.twice(torch.arange(3.0))
        assert out.tolist() == [0.0, 2.0, 4.0]
        lib.define("nokernel(Tensor x) -> Tensor")
        with pytest.raises(NotImplementedError, match="tn_optim_test::nokernel"):
            torch.ops.tn_optim_test.nokernel(torch.ones(1))
    finally:
        lib._destroy() if hasattr(lib, "_destroy") else None


def test_group_tensors_by_device_and_dtype():
    a, b = torch.ones(2), torch.ones(3, dtype=torch.float64)
    s1, s2 = torch.tensor(1.0), torch.tensor(2.0)
    g = torch._C._group_tensors_by_device_and_dtype([[a, b], [None, b], [s1, s2], []], True)
    assert set(g) == {(a.device, torch.float32), (b.device, torch.float64)}
    (lists, idx) = g[(a.device, torch.float32)]
    assert idx == [0] and lists[0][0] is a and lists[1] == [None] and lists[2][0] is s1 and lists[3] == []
    assert g[(b.device, torch.float64)][1] == [1]


# ---- gradients through _foreach_* ------------------------------------------------------------
GRAD_CASES = [
    ("add_mul", "torch._foreach_mul(torch._foreach_add(ps, qs, alpha=0.5), 3.0)"),
    ("addcmul_lerp", "torch._foreach_lerp(torch._foreach_addcmul(ps, qs, qs, value=0.1), qs, 0.3)"),
    ("div_sqrt_exp", "torch._foreach_div(torch._foreach_exp(ps), torch._foreach_add(torch._foreach_abs(qs), 1.0))"),
    ("norm_pow", "torch._foreach_pow(torch._foreach_norm(ps), 2)"),
    ("scalarlist", "torch._foreach_sub(torch._foreach_mul(ps, [0.5, 2.0, -1.0, 3.0]), qs)"),
]
GRAD_SPECS = [{"kind": "grad", "name": n, "src": src, "dtype": "float64"} for n, src in GRAD_CASES]


@pytest.fixture(scope="module")
def grad_results():
    return run_upstream(GRAD_SPECS), run_here(GRAD_SPECS)


@pytest.mark.parametrize("name", [n for n, _ in GRAD_CASES])
def test_foreach_gradients_match_upstream(name, grad_results):
    """float64; outputs within 4 ulp (upstream's exp, like its sqrt, is MKL's VML),
    gradients within 256 ulp (about 1e-13 relative):
    upstream's foreach derivatives are its own formulas (derivatives.yaml's _foreach_*
    entries), ours are the single-tensor formulas of the autograd engine, which are
    compared with upstream separately (tests/gradtest); measured 64 ulp through lerp."""
    ref, ours = grad_results
    assert "exception" not in ours[name], ours[name]
    d, _ = _diff(ref[name]["out"], ours[name]["out"], name + ".out", limit=4)
    assert d is None, d
    d, _ = _diff(ref[name]["grads"], ours[name]["grads"], name + ".grads", limit=256)
    assert d is None, d


def test_inplace_foreach_on_leaf_refuses():
    q = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        torch._foreach_add_([q], 1.0)
    with torch.no_grad():
        torch._foreach_add_([q], 1.0)
    assert q.tolist() == [2.0, 2.0, 2.0]


# ---- swa_utils, non-finite norms: whole printed results equal ---------------------------------
SWA_SCRIPT = r"""
import json, torch
from torch.optim.swa_utils import AveragedModel, SWALR, get_ema_multi_avg_fn
m = torch.nn.Linear(4, 3)
with torch.no_grad():
    m.weight.copy_(torch.arange(12.).reshape(3, 4) / 7); m.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))
ema = AveragedModel(m, multi_avg_fn=get_ema_multi_avg_fn(0.9))
swa = AveragedModel(m)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
sch = SWALR(opt, swa_lr=0.05, anneal_epochs=3)
out = {"lr": []}
for i in range(4):
    for p in m.parameters():
        p.grad = torch.full_like(p, 0.1 * (i + 1))
    opt.step(); sch.step(); ema.update_parameters(m); swa.update_parameters(m)
    out["lr"].append(opt.param_groups[0]["lr"])
out["ema"] = [p.tolist() for p in ema.parameters()]
out["swa"] = [p.tolist() for p in swa.parameters()]
p = torch.nn.Parameter(torch.ones(3)); p.grad = torch.tensor([1.0, float("inf"), 2.0])
try:
    torch.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
except Exception as e:
    out["nonfinite"] = [type(e).__name__, str(e)[:60]]
out["norm"] = repr(torch.nn.utils.clip_grad_norm_([p], 1.0).item())
out["grad"] = repr(p.grad.tolist())
out["total"] = torch.nn.utils.get_total_norm([torch.ones(3), torch.ones(4)], 2.0).item()
print(json.dumps(out))
"""


def test_swa_utils_and_nonfinite_norms_match_upstream():
    ours = subprocess.run([sys.executable, "-c", SWA_SCRIPT], capture_output=True, text=True, timeout=600)
    assert ours.returncode == 0, ours.stderr[-3000:]
    assert json.loads(ours.stdout.strip().splitlines()[-1]) == run_reference(SWA_SCRIPT)
