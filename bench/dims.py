"""dims.py — reductions and scans over one dim, and the gather / scatter family, side by
side with upstream (session 46: the rows behind docs/PERFORMANCE.md "Session 46").

    .venv/bin/python bench/dims.py [--rounds 2] [--only REGEX] [--over 1.2]

Every operator on float32 inputs of 1,000,000 elements in four shapes (1000x1000,
10000x100, 100x10000, 64x128x128), reduced over each dim: sum, mean, nansum, prod, amax,
max (values and indices), argmax, var, std, norm, logsumexp, cumsum, median, count_nonzero
and any / all of a bool mask, sum of float64 (the conversion included on both sides); then
gather, scatter_add_, index_select, take and embedding at one shape each, the other
operators an in-session sweep of common operators found furthest behind (index_add_,
adaptive_avg_pool2d to 1, interpolate, nonzero, unique, layer_norm, group_norm), and
(session 47, `common`) 92 common operators no OpInfo family scales to 1e6: convolutions,
pooling, random draws, searches, selections, casts, 1-d gathers and puts, layout copies,
unfold / fold, linear algebra at 256 x 256. Each side runs
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
    common(torch, g, out)
    return out


def common(torch, g, out):
    """Session 47: common operators outside the OpInfo table's 1e6 families (no op_db family
    scales them: constructors, random draws, convolutions and pooling, searches, selections),
    each at one typical size."""
    F = torch.nn.functional
    x = torch.randn(1000, 1000, generator=g)
    y = torch.randn(1000, 1000, generator=g)
    w = torch.rand(1000, 1000, generator=g)
    mask = x > 0
    ints = torch.randint(0, 1000, (1000000,), generator=g)
    small = torch.randint(0, 1000, (1000,), generator=g)
    edges = torch.linspace(-3, 3, 1000)
    img = torch.randn(8, 32, 64, 64, generator=g)
    cw = torch.randn(64, 32, 3, 3, generator=g)
    cb = torch.randn(64, generator=g)
    rgb = torch.randn(1, 3, 224, 224, generator=g)
    w7 = torch.randn(64, 3, 7, 7, generator=g)
    sig = torch.randn(8, 64, 2048, generator=g)
    w1 = torch.randn(64, 64, 5, generator=g)
    bn_w, bn_b = torch.rand(32, generator=g), torch.randn(32, generator=g)
    rm, rv = torch.zeros(32), torch.ones(32)
    logits = torch.randn(4096, 1000, generator=g)
    target = torch.randint(0, 1000, (4096,), generator=g)
    gen = torch.Generator().manual_seed(1)
    out["conv2d 8x32x64x64, 64x32x3x3, pad 1"] = lambda: F.conv2d(img, cw, cb, padding=1)
    out["conv2d 1x3x224x224, 64x3x7x7, stride 2, pad 3"] = lambda: F.conv2d(rgb, w7, stride=2, padding=3)
    out["conv1d 8x64x2048, 64x64x5, pad 2"] = lambda: F.conv1d(sig, w1, padding=2)
    out["max_pool2d 8x32x64x64, 2"] = lambda: F.max_pool2d(img, 2)
    out["avg_pool2d 8x32x64x64, 3, stride 2"] = lambda: F.avg_pool2d(img, 3, 2, 1)
    out["batch_norm eval 8x32x64x64"] = lambda: F.batch_norm(img, rm, rv, bn_w, bn_b)
    out["batch_norm train 8x32x64x64"] = lambda: F.batch_norm(img, rm.clone(), rv.clone(), bn_w, bn_b, training=True)
    out["randn 1e6"] = lambda: torch.randn(1000000, generator=gen)
    out["rand 1e6"] = lambda: torch.rand(1000000, generator=gen)
    out["randint 1e6"] = lambda: torch.randint(0, 1000, (1000000,), generator=gen)
    out["randperm 1e5"] = lambda: torch.randperm(100000, generator=gen)
    out["bernoulli_ 1e6"] = lambda: w.bernoulli(generator=gen)
    out["bincount 1e6 of 1000"] = lambda: torch.bincount(ints)
    out["histc 1e6, 100 bins"] = lambda: torch.histc(x, 100, -3, 3)
    out["isin 1e6 in 1000"] = lambda: torch.isin(ints, small)
    out["bucketize 1e6 into 1000"] = lambda: torch.bucketize(x, edges)
    out["searchsorted 1e6 into 1000"] = lambda: torch.searchsorted(edges, x)
    out["linspace 1e6"] = lambda: torch.linspace(0, 1, 1000000)
    out["arange 1e6"] = lambda: torch.arange(1000000)
    out["lerp 1e6, tensor weight"] = lambda: torch.lerp(x, y, w)
    out["lerp 1e6, scalar weight"] = lambda: torch.lerp(x, y, 0.3)
    out["masked_select 1e6"] = lambda: x.masked_select(mask)
    out["masked_fill 1e6"] = lambda: x.masked_fill(mask, 0.0)
    out["where 1e6"] = lambda: torch.where(mask, x, y)
    out["x[mask] 1e6"] = lambda: x[mask]
    out["remainder 1e6"] = lambda: torch.remainder(x, 0.7)
    out["fmod 1e6"] = lambda: torch.fmod(x, y)
    out["floor_divide 1e6"] = lambda: torch.floor_divide(x, 0.7)
    out["pow 1e6, 2.5"] = lambda: w.pow(2.5)
    out["topk 1000x1000, 10"] = lambda: x.topk(10)
    out["sort 1000x1000"] = lambda: x.sort()
    out["argsort 1e6"] = lambda: x.flatten().argsort()
    out["cat 4 x 1000x250, dim 1"] = lambda: torch.cat([x[:, :250], x[:, 250:500], x[:, 500:750], x[:, 750:]], 1)
    out["stack 10 x 1e5"] = lambda: torch.stack([x[i * 100:(i + 1) * 100].flatten() for i in range(10)])
    out["pad 8x32x64x64, 2, reflect"] = lambda: F.pad(img, (2, 2, 2, 2), mode="reflect")
    out["roll 1000x1000"] = lambda: x.roll(7, 1)
    out["flip 1000x1000 dim 1"] = lambda: x.flip(1)
    out["triu 1000x1000"] = lambda: x.triu()
    out["cross_entropy 4096x1000"] = lambda: F.cross_entropy(logits, target)
    out["softmax 1000x1000 dim 0"] = lambda: x.softmax(0)
    out["repeat_interleave 1e5, 10"] = lambda: small.repeat(100).repeat_interleave(10)
    out["kthvalue 1000x1000, 500"] = lambda: x.kthvalue(500)
    out["one_hot 1e5 of 100"] = lambda: F.one_hot(small.repeat(100) % 100, 100)
    out["diff 1000x1000"] = lambda: x.diff()
    out["clamp 1e6"] = lambda: x.clamp(-1, 1)
    out["to float64 1e6"] = lambda: x.double()
    out["to int64 1e6"] = lambda: x.long()
    out["to bfloat16 1e6"] = lambda: x.bfloat16()
    out["transpose contiguous 1000x1000"] = lambda: x.t().contiguous()
    # second batch (session 47): gathers and puts of 1-d tensors, layout copies, unfold /
    # fold, pooling of other ranks, linear algebra at 256 x 256
    flat = x.flatten()
    idx1 = torch.randint(0, 1000000, (200000,), generator=g)
    cnt = torch.randint(0, 5, (100000,), generator=g)
    vals = torch.randn(200000, generator=g)
    cube = torch.randn(100, 100, 100, generator=g)
    sq = torch.randn(256, 256, generator=g)
    spd = sq @ sq.t() + 256 * torch.eye(256)
    bat = torch.randn(64, 64, 64, generator=g)
    seq = torch.randn(16, 64, 1024, generator=g)
    out["index_select 1-d, 2e5 of 1e6"] = lambda: flat.index_select(0, idx1)
    out["x[idx] 1-d, 2e5 of 1e6"] = lambda: flat[idx1]
    out["index_put_ 1-d, 2e5 into 1e6"] = lambda: flat.clone().index_put_((idx1,), vals)
    out["index_put_ accumulate 1-d"] = lambda: flat.clone().index_put_((idx1,), vals, accumulate=True)
    out["repeat_interleave counts 1e5"] = lambda: torch.repeat_interleave(cnt)
    out["gather 1-d, 2e5 of 1e6"] = lambda: flat.gather(0, idx1)
    out["scatter_ 1-d, 2e5 into 1e6"] = lambda: flat.clone().scatter_(0, idx1, vals)
    out["index_fill_ 1000x1000 dim 0"] = lambda: x.clone().index_fill_(0, idx1[:500] % 1000, 0.0)
    out["index_copy_ 1000x1000 dim 0"] = lambda: x.clone().index_copy_(0, torch.arange(0, 1000, 2), y[:500])
    out["permute contiguous 100^3 (2,0,1)"] = lambda: cube.permute(2, 0, 1).contiguous()
    out["expand contiguous 1000 -> 1000x1000"] = lambda: x[0].expand(1000, 1000).contiguous()
    out["narrow clone 1000x1000 cols 100:900"] = lambda: x[:, 100:900].clone()
    out["unfold (im2col) 8x32x64x64, 3x3"] = lambda: F.unfold(img, 3, padding=1)
    out["fold 8x288x4096 -> 64x64"] = lambda: F.fold(F.unfold(img, 3, padding=1), (64, 64), 3, padding=1)
    out["max_pool1d 16x64x1024, 3"] = lambda: F.max_pool1d(seq, 3)
    out["avg_pool1d 16x64x1024, 4"] = lambda: F.avg_pool1d(seq, 4)
    out["adaptive_max_pool2d 8x32x64x64 -> 7"] = lambda: F.adaptive_max_pool2d(img, 7)
    out["interpolate linear 16x64x1024 x2"] = lambda: F.interpolate(seq, scale_factor=2, mode="linear")
    out["cumsum 1-d 1e6"] = lambda: flat.cumsum(0)
    out["sort 1-d 1e6"] = lambda: flat.sort()
    out["topk 1-d 1e6, 100"] = lambda: flat.topk(100)
    out["argmax 1-d 1e6"] = lambda: flat.argmax()
    out["bmm 64x64x64"] = lambda: torch.bmm(bat, bat)
    out["einsum bij,bjk->bik 64^3"] = lambda: torch.einsum("bij,bjk->bik", bat, bat)
    out["cdist 1000x64, 1000x64"] = lambda: torch.cdist(x[:, :64], y[:, :64])
    out["linalg.inv 256"] = lambda: torch.linalg.inv(spd)
    out["linalg.solve 256"] = lambda: torch.linalg.solve(spd, sq)
    out["linalg.det 256"] = lambda: torch.linalg.det(sq)
    out["linalg.cholesky 256"] = lambda: torch.linalg.cholesky(spd)
    out["linalg.qr 256"] = lambda: torch.linalg.qr(sq)
    out["linalg.eigh 256"] = lambda: torch.linalg.eigh(spd)
    out["linalg.svd 256"] = lambda: torch.linalg.svd(sq)
    out["linalg.lstsq 256"] = lambda: torch.linalg.lstsq(sq, sq[:, :10])
    out["matrix_exp 64"] = lambda: torch.linalg.matrix_exp(bat[0] * 0.01)


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
