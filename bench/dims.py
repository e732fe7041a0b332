"""dims.py — reductions and scans over one dim, and the gather / scatter family, side by
side with upstream (session 46: the rows behind docs/PERFORMANCE.md "Session 46").

    .venv/bin/python bench/dims.py [--rounds 2] [--only REGEX] [--over 1.2]

Every operator on float32 inputs of 1,000,000 elements in four shapes (1000x1000,
10000x100, 100x10000, 64x128x128), reduced over each dim: sum, mean, nansum, prod, amax,
max (values and indices), argmax, var, std, norm, logsumexp, cumsum, median, count_nonzero
and any / all of a bool mask, sum of float64 (the conversion included on both sides); then
gather, scatter_add_, index_select, take and embedding at one shape each, and the other
operators an in-session sweep of common operators found furthest behind (index_add_,
adaptive_avg_pool2d to 1, interpolate, nonzero, unique, layer_norm, group_norm). Each side runs
in its own process (`--side-worker`), the sides alternating which goes first, each
measurement the best of 10 calls; across rounds each side keeps its best. Prints
ours/upstream per row, worst first, and the count over `--over`."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = {"1000x1000": (1000, 1000), "10000x100": (10000, 100), "100x10000": (100, 10000), "64x128x128": (64, 128, 128)}


def cases(torch):
    F = torch.nn.functional
    ops = {
        "sum": lambda x, d: x.sum(d), "mean": lambda x, d: x.mean(d), "nansum": lambda x, d: x.nansum(d),
        "prod": lambda x, d: x.prod(d), "amax": lambda x, d: x.amax(d), "max": lambda x, d: x.max(d),
        "argmax": lambda x, d: x.argmax(d), "var": lambda x, d: x.var(d), "std": lambda x, d: x.std(d),
        "norm": lambda x, d: x.norm(dim=d), "logsumexp": lambda x, d: torch.logsumexp(x, d),
        "cumsum": lambda x, d: x.cumsum(d), "median": lambda x, d: x.median(d),
        "count_nonzero": lambda x, d: torch.count_nonzero(x > 0, d), "any": lambda x, d: (x > 3).any(d),
        "all": lambda x, d: (x > -3).all(d), "sum_f64": lambda x, d: x.double().sum(d),
    }
    out = {}
    g = torch.Generator().manual_seed(0)
    for sn, sh in SHAPES.items():
        x = torch.randn(*sh, generator=g)
        xp = x * 0.001 + 1  # products of values near 1 stay finite
        for d in range(len(sh)):
            for on, f in ops.items():
                arg = xp if on == "prod" else x
                out[f"{on} {sn} dim {d}"] = (lambda f=f, arg=arg, d=d: f(arg, d))
    x = torch.randn(1000, 1000, generator=g)
    idx = torch.randint(0, 1000, (1000, 100), generator=g)
    src = torch.randn(1000, 100, generator=g)
    flat = torch.randint(0, 1000000, (100000,), generator=g)
    rows = torch.randint(0, 1000, (500,), generator=g)
    emb = torch.randn(50000, 256, generator=g)
    tok = torch.randint(0, 50000, (64, 128), generator=g)
    base = torch.zeros(1000, 1000)
    out["gather 1000x1000 dim 1, index 1000x100"] = lambda: x.gather(1, idx)
    out["scatter_add_ 1000x1000 dim 1, index 1000x100"] = lambda: base.scatter_add_(1, idx, src)
    out["index_select 1000x1000 dim 1, 500 indices"] = lambda: x.index_select(1, rows)
    out["index_select 1000x1000 dim 0, 500 indices"] = lambda: x.index_select(0, rows)
    out["take 1e6, 1e5 indices"] = lambda: x.take(flat)
    out["embedding 50000x256, 64x128 tokens"] = lambda: F.embedding(tok, emb)
    # the other operators an in-session sweep of common operators found furthest behind
    img = torch.randn(8, 32, 64, 64, generator=g)
    mask = x > 0
    ints = torch.randint(0, 1000, (100000,), generator=g)
    out["index_add_ 1000x1000 dim 0, 1000 indices"] = lambda: base.index_add_(0, rows.repeat(2), x)
    out["adaptive_avg_pool2d 8x32x64x64 -> 1"] = lambda: F.adaptive_avg_pool2d(img, 1)
    out["interpolate nearest x2, 8x32x64x64"] = lambda: F.interpolate(img, scale_factor=2)
    out["interpolate bilinear x2, 8x32x64x64"] = lambda: F.interpolate(img, scale_factor=2, mode="bilinear")
    out["nonzero 1000x1000 bool"] = lambda: mask.nonzero()
    out["unique 1e5 int64"] = lambda: ints.unique()
    out["layer_norm 1000x1000"] = lambda: F.layer_norm(x, (1000,))
    out["group_norm 8x32x64x64, 8 groups"] = lambda: F.group_norm(img, 8)
    return out


def worker(only):
    import torch
    res = {}
    for name, f in cases(torch).items():
        if only and not re.search(only, name):
            continue
        f()
        best = 1e9
        for _ in range(10):
            t0 = time.perf_counter()
            f()
            best = min(best, time.perf_counter() - t0)
        res[name] = best * 1e6
    print(json.dumps(res))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--over", type=float, default=1.2)
    ap.add_argument("--side-worker", action="store_true")
    a = ap.parse_args()
    if a.side_worker:
        worker(a.only)
        return
    sides = {"upstream": os.path.join(ROOT, ".venv-ref", "bin", "python"), "ours": os.path.join(ROOT, ".venv", "bin", "python")}
    best = {s: {} for s in sides}
    for r in range(a.rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for s in order:
            cmd = [sides[s], os.path.abspath(__file__), "--side-worker", "--only", a.only]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
            for k, v in json.loads(out).items():
                best[s][k] = min(v, best[s].get(k, 1e18))
        print(f"round {r} done", file=sys.stderr)
    rows = sorted(((best["ours"][k] / best["upstream"][k], k) for k in best["ours"]), reverse=True)
    print(f"{'operator':55s} {'ours/up':>8s} {'ours us':>10s} {'up us':>10s}")
    for ratio, k in rows:
        print(f"{k:55s} {ratio:8.2f} {best['ours'][k]:10.1f} {best['upstream'][k]:10.1f}")
    over = sum(1 for ratio, _ in rows if ratio > a.over)
    print(f"{over} of {len(rows)} over {a.over}x; median {rows[len(rows) // 2][0]:.2f}")


if __name__ == "__main__":
    main()
