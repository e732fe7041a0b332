"""Judging the OpInfo sweep: one sample's result against upstream's, then one entry from all
its samples. Plain numpy, no torch: results arrive as worker.encode's plain data."""
import numpy as np

# torch.testing.assert_close's default (rtol, atol) per dtype; integer and bool are exact
TOL = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}

# entries whose results are uninitialised memory (torch.empty and kin): only the kind,
# dtype and shape of their results are compared
UNINITIALIZED = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"}

# entry statuses, worst first: an entry takes the worst status of its samples
STATUSES = ("crash", "disagree", "fail", "refuse", "agree")


def _array(dtype, shape, raw):
    if dtype == "bfloat16":
        u = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
        return u.view(np.float32).reshape(shape)
    if dtype == "bool":
        return np.frombuffer(raw, dtype=np.uint8).astype(bool).reshape(shape)
    return np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape)


def compare_values(r, g, values=True):
    """None when the encoded result `g` (ours) agrees with `r` (upstream), else why not.
    values=False compares everything but the elements of tensors."""
    if r[0] != g[0]:
        return f"result kind {g[0]} != {r[0]}"
    if r[0] == "seq":
        if r[1] != g[1]:
            return f"returns {g[1]} where upstream returns {r[1]}"
        if len(r[2]) != len(g[2]):
            return f"length {len(g[2])} != {len(r[2])}"
        for i, (a, b) in enumerate(zip(r[2], g[2])):
            d = compare_values(a, b, values)
            if d:
                return f"[{i}] {d}"
        return None
    if r[0] == "py":
        a, b = r[1], g[1]
        if type(a) is not type(b):
            return f"{type(b).__name__} {b!r} != {type(a).__name__} {a!r}"
        if isinstance(a, (float, complex)):
            if a == b or (a != a and b != b):
                return None
            return None if abs(a - b) <= 1e-5 + 1.3e-6 * abs(a) else f"{b!r} != {a!r}"
        return None if a == b else f"{b!r} != {a!r}"
    if r[0] in ("repr", "meta"):
        return None if r[1:] == g[1:] else f"{g[1:]} != {r[1:]}"
    _, rd, rs, rraw = r
    _, gd, gs, graw = g
    if rd != gd:
        return f"dtype {gd} != {rd}"
    if tuple(rs) != tuple(gs):
        return f"shape {tuple(gs)} != {tuple(rs)}"
    if rraw == graw or not values:
        return None
    if rd not in TOL:
        return "values differ (exact dtype)"
    ra, ga = _array(rd, rs, rraw), _array(gd, gs, graw)
    rtol, atol = TOL[rd]
    ok = np.isclose(ga, ra, rtol=rtol, atol=atol, equal_nan=True)
    if ok.all():
        return None
    idx = tuple(int(i) for i in np.argwhere(~ok)[0])
    return f"values differ at {idx}: {ga[idx]!r} != {ra[idx]!r} ({int((~ok).sum())} of {ok.size})"


def judge_sample(ref, got, values=True):
    """(status, detail) of one sample: ref/got are ('ok', value) / ('err', class, message),
    got may also be ('load', class, message) when our torch.load could not read the sample."""
    if got[0] == "load":  # e.g. a sparse sample: refused by name when its layout is not implemented
        return ("refuse" if got[1] == "NotImplementedError" else "fail"), f"loading the sample: {got[1]}: {got[2]}"
    if ref[0] == "err":
        if got[0] == "err":
            if got[1] == ref[1]:
                return "agree", ""
            return ("refuse" if got[1] == "NotImplementedError" else "fail"), \
                f"{got[1]}: {got[2]} (upstream {ref[1]}: {ref[2]})"
        return "disagree", f"returns where upstream raises {ref[1]}: {ref[2]}"
    if got[0] == "err":
        return ("refuse" if got[1] == "NotImplementedError" else "fail"), f"{got[1]}: {got[2]}"
    d = compare_values(ref[1], got[1], values)
    return ("agree", "") if d is None else ("disagree", d)


def judge_dtype(refs, ours, key):
    """(status, detail) of one entry in one form and dtype: the worst status over its samples
    (STATUSES order), with the first sample's detail that has it, prefixed by its index.
    `refs`/`ours` list one result per sample; None where the form was not run (an out= form
    for a sample whose function result is no tensor)."""
    if ours is None or len(ours) != len(refs):
        return "crash", f"{0 if ours is None else len(ours)} results for {len(refs)} samples"
    worst, detail = "agree", ""
    for i, (r, g) in enumerate(zip(refs, ours)):
        if r is None:
            continue
        st, d = judge_sample(r, g, key not in UNINITIALIZED)
        if STATUSES.index(st) < STATUSES.index(worst):
            worst, detail = st, f"#{i}: {d}"
    return worst, detail
