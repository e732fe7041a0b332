"""The operator comparison harness: the same cases run under upstream torch (.venv-ref)
and under torchnative (.venv), each in its own process; results are compared here.

A case is a Python expression over inputs built from numpy data with a fixed seed, so both
sides see bit-identical inputs. This module is imported by both sides and by pytest; it
must not import torch at module level."""
import ctypes
import math
import pickle
import zlib

import numpy as np

# dtype name -> (numpy dtype used to build data, default rtol, atol)
TOL = {
    "float64": (1e-12, 1e-12),
    "float32": (1.3e-6, 1e-5),
    "float16": (1e-3, 1e-3),
    "bfloat16": (8e-3, 1e-2),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-12, 1e-12),
}
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8")
FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + ("bool",)
SIZES = (1, 7, 31, 33, 1000)


class In:
    """An input tensor spec: shape, dtype, value kind and layout.

    kind: 'normal' (randn), 'pos' (positive, for log/sqrt), 'unit' (in (-1, 1)), 'int'
    (small integers), 'bool', 'index' (valid indices into `high`), 'special' (mix of inf,
    nan, 0, -0 and normals). layout: 'contig' or 'transposed' (a permuted numpy view, so
    the tensor is non-contiguous) or 'strided' (every other element)."""

    def __init__(self, shape, dtype="float32", kind="normal", layout="contig", high=None):
        self.shape, self.dtype, self.kind, self.layout, self.high = tuple(shape), dtype, kind, layout, high

    def key(self):
        return f"{self.shape}|{self.dtype}|{self.kind}|{self.layout}|{self.high}"


class Case:
    """fn: source of a lambda taking the built inputs (torch, np and math are globals) and returning a tensor, a tuple of
    tensors, or a Python value. covers: aten overload names ("add.Tensor") the case
    exercises, used by the coverage test."""

    def __init__(self, name, fn, inputs, covers, rtol=None, atol=None, equal_nan=True):
        self.name, self.fn, self.inputs, self.covers = name, fn, inputs, covers
        self.rtol, self.atol, self.equal_nan = rtol, atol, equal_nan


def make_array(spec: In, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = spec.shape
    if spec.layout == "transposed" and len(shape) >= 2:
        base_shape = shape[::-1]
    elif spec.layout == "strided":
        base_shape = shape[:-1] + (shape[-1] * 2,) if shape else shape
    else:
        base_shape = shape
    k = spec.kind
    if k == "normal":
        a = rng.standard_normal(base_shape)
    elif k == "pos":
        a = rng.uniform(0.1, 4.0, base_shape)
    elif k == "unit":
        a = rng.uniform(-0.99, 0.99, base_shape)
    elif k == "int":
        a = rng.integers(-9, 10, base_shape)
    elif k == "bool":
        a = rng.integers(0, 2, base_shape).astype(bool)
    elif k == "index":
        a = rng.integers(0, spec.high, base_shape)
    elif k == "special":
        a = rng.standard_normal(base_shape)
        flat = a.reshape(-1)
        vals = [np.inf, -np.inf, np.nan, 0.0, -0.0]
        for i in range(0, flat.size, 3):
            flat[i] = vals[(i // 3) % len(vals)]
    else:
        raise ValueError(k)
    if spec.dtype in INT_DTYPES and k not in ("index",):
        a = np.clip(np.round(a * 3), -100, 100) if k != "int" else a
        if spec.dtype == "uint8":
            a = np.abs(a)
    if spec.layout == "transposed" and len(shape) >= 2:
        a = a.T
    elif spec.layout == "strided" and shape:
        a = a[..., ::2]
    return np.asarray(a)  # 0-dim draws come back as numpy scalars


def build_input(torch, spec: In, seed: int):
    a = make_array(spec, seed)
    if spec.dtype == "bool":
        return torch.from_numpy(np.ascontiguousarray(a).astype(bool) if spec.layout == "contig" else a.astype(bool))
    np_dtype = {"bfloat16": np.float32}.get(spec.dtype, spec.dtype)
    arr = a.astype(np_dtype) if spec.layout == "contig" else _keep_layout(a, np_dtype)
    t = torch.from_numpy(arr)
    if spec.dtype == "bfloat16":
        t = t.to(torch.bfloat16)
    return t


def _keep_layout(a, np_dtype):
    # astype keeps the view's memory order only via an explicit copy into the same strides
    out = np.empty_like(a, dtype=np_dtype, order="K")
    out[...] = a
    if a.ndim >= 2 and not a.flags.c_contiguous:
        out = np.ascontiguousarray(out.T).T
    return out


def case_seed(case: Case, i: int) -> int:
    return zlib.crc32(f"{case.name}|{i}".encode())


def encode(torch, value):
    """Turns a result into plain data: ('tensor', dtype, shape, bytes) / ('tuple', [...]) /
    ('py', value)."""
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.is_meta:
            return ("meta", str(t.dtype).replace("torch.", ""), tuple(t.shape))
        # a lazily conjugated/negated view (upstream's ifft of real input) holds the
        # unconjugated bytes: compare the values it stands for
        c = t.resolve_conj().resolve_neg().contiguous()
        raw = ctypes.string_at(c.data_ptr(), c.numel() * c.element_size()) if c.numel() else b""
        return ("tensor", str(t.dtype).replace("torch.", ""), tuple(t.shape), raw)
    if isinstance(value, (tuple, list)):
        return ("tuple", [encode(torch, v) for v in value])
    if isinstance(value, (torch.Size,)):
        return ("py", tuple(value))
    if isinstance(value, (int, float, bool, complex, str, type(None))):
        return ("py", value)
    if isinstance(value, torch.dtype):
        return ("py", str(value))
    return ("py", repr(value))


def run_cases(cases, out_path):
    """Runs every case in this process (whichever torch is installed) and pickles results."""
    import torch

    results = {}
    for case in cases:
        try:
            inputs = [build_input(torch, spec, case_seed(case, i)) for i, spec in enumerate(case.inputs)]
            fn = eval(case.fn, {"torch": torch, "np": np, "math": math})
            results[case.name] = ("ok", encode(torch, fn(*inputs)))
        except Exception as e:  # the exception class is part of the comparison
            results[case.name] = ("err", type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    with open(out_path, "wb") as f:
        pickle.dump(results, f)


# ---- comparison ---------------------------------------------------------------------

def _to_float_array(dtype, shape, raw):
    if dtype == "bfloat16":
        u = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
        return u.view(np.float32).reshape(shape)
    if dtype == "bool":
        return np.frombuffer(raw, dtype=np.uint8).astype(bool).reshape(shape)
    return np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape)


def compare(case: Case, ref, got) -> str | None:
    """None when `got` agrees with `ref`, else a one-line description of the difference."""
    if ref[0] == "err" or got[0] == "err":
        if ref[0] != got[0]:
            return f"reference {ref[0]} {ref[1:]} vs ours {got[0]} {got[1:]}"
        if ref[1] != got[1]:
            return f"exception class {got[1]} != upstream {ref[1]} ({got[2]!r} vs {ref[2]!r})"
        return None
    return compare_values(case, ref[1], got[1])


def compare_values(case, r, g) -> str | None:
    if r[0] != g[0]:
        return f"result kind {g[0]} != {r[0]}"
    if r[0] == "tuple":
        if len(r[1]) != len(g[1]):
            return f"tuple length {len(g[1])} != {len(r[1])}"
        for i, (a, b) in enumerate(zip(r[1], g[1])):
            d = compare_values(case, a, b)
            if d:
                return f"[{i}] {d}"
        return None
    if r[0] == "py":
        a, b = r[1], g[1]
        if isinstance(a, float) and isinstance(b, float):
            if math.isnan(a) and math.isnan(b):
                return None
            return None if math.isclose(a, b, rel_tol=case.rtol or 1e-6, abs_tol=case.atol or 1e-6) else f"{b} != {a}"
        return None if a == b and type(a) is type(b) else f"{b!r} != {a!r}"
    if r[0] == "meta":
        return None if r[1:] == g[1:] else f"meta {g[1:]} != {r[1:]}"
    _, rd, rs, rraw = r
    _, gd, gs, graw = g
    if rd != gd:
        return f"dtype {gd} != {rd}"
    if tuple(rs) != tuple(gs):
        return f"shape {gs} != {rs}"
    if rd in TOL:
        ra, ga = _to_float_array(rd, rs, rraw), _to_float_array(gd, gs, graw)
        rtol, atol = TOL[rd]
        rtol = case.rtol if case.rtol is not None else rtol
        atol = case.atol if case.atol is not None else atol
        ok = np.isclose(ga, ra, rtol=rtol, atol=atol, equal_nan=case.equal_nan)
        # signs of infinities must match exactly; isclose already requires inf == inf
        if not ok.all():
            idx = np.argwhere(~ok)[0]
            return f"values differ at {tuple(int(i) for i in idx)}: {ga[tuple(idx)]!r} != {ra[tuple(idx)]!r} ({int((~ok).sum())} of {ok.size})"
        return None
    return None if rraw == graw else "values differ (exact dtype)"
