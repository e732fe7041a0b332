"""Micro-benchmarks behind single numbers in docs/GEMM.md and docs/PERFORMANCE.md.

Run each with both interpreters, alternating, and compare ratios (this VM drifts by 5-10 %
between runs; bench/run.py is the protocol for the issue's targets):

    .venv-ref/bin/python bench/micro.py sdpa      # upstream
    .venv/bin/python bench/micro.py sdpa          # torchnative

Tasks:
  sdpa    F.scaled_dot_product_attention, 1x9xSx64 causal, float32 and bfloat16, S = 512, 1024
  sdpa_static  one decode row (1x9x1x64, GQA over 3 KV heads) against a static cache of S
          keys with a boolean mask keeping the first `valid` (95/50, 235/150, 1024/900),
          float32 and bfloat16, the same cache every call (microseconds)
  kv_update  a static KV cache's index_copy_ of one position into 1x3x101x64 (microseconds)
  fills   factory fills of 1e6 elements: ones / full float32, ones int64, zeros float32, and
          masked.mean of 1e6 floats without a mask (its count sums an int64 ones) (microseconds)
  f64_math  float64 exp, log, pow (tensor and scalar exponent), float_power of float32
          and softmax / log_softmax with dtype=float64, 1e6 elements (microseconds)
  linear  F.linear at S rows with 40 different weights cycled (cold weights, as in a
          forward): SmolLM2's shapes, float32 (argument: S, default 512)
  vecmat  torch.mm of m = 1..4 rows with a row-major k x n matrix (GPT-2's Conv1D layout):
          one matrix reused (cache-resident) and 60 cycled (from memory), GB/s of the matrix
          (argument: dtype, default float32)
  decode_linears  the 211 products of one SmolLM2 decode step (30 layers of q, k, v, o,
          gate, up, down, then the 49152-row lm_head) as F.linear of one row against fresh
          weights (538 MB in float32, read from memory as in decode): ms per step and GB/s
          of weights, median of 7 steps (argument: dtype, default float32)
  cat     rotary's cat((-x2, x1), -1) on 1x9x1024x64 halves, and of two contiguous halves
  gemm    (torchnative only) F.linear float32 with our engine and with
          TN_F32_GEMM=openblas, each in a fresh process, alternating, 3 rounds
  replay  (torchnative only) an operator graph of 200 calls of one small operator on 576
          floats (mul, rotary-style broadcast mul, pow, mean), microseconds per replayed call
  decode_replay  (torchnative only) SmolLM2's decode step as an operator graph (static
          cache of 235 positions, replayed at position 150, caches reset before each
          replay): median step time of 3 rounds of 20 replays, then time per operator over
          10 profiled replays (argument: dtype, default float32)
  weight_stream  (torchnative only) SmolLM2 greedy generate (33 new tokens, min_new_tokens
          33) with the weight stream (src/kernels/stream.h) off and on, alternating in one
          process for N rounds: ms per token, time in `linear` per token (_tn_profile, on in
          both), MB per token the stream prefetched; medians and the median of the per-round
          off/on ratios (arguments: dtype rounds [graphs], default float32 6; `graphs`
          replays the step as an operator graph with a static cache)
  generate_ops  the operators generate() runs over the vocabulary every greedy step with
          min_new_tokens (arange(49152), isin against the eos id, where(mask, -inf, logits),
          argmax of the 1x49152 logits), each timed alone, microseconds per call
  linalg  the linear-algebra operators at the OpInfo sweep's sample shapes (5x5 and a batch
          of 2x5x5, float32; rectangular 5x3 / 3x5 where the operator allows it): the best
          of 5 repeats of 500 calls each, microseconds per call (argument: a substring
          filter on the operator names)
  fft     torch.fft.fft of 2^16 complex64 points and torch.fft.rfft of 4096x1024 float32
          (rows of 1024), after checking each result against numpy's float64 FFT: the best
          of 5 repeats, milliseconds per call
  nn3d    (run with .venv; it runs both sides) conv3d forward, N=2, C=16->32, 16x32x32,
          k=3, padding 1, with bias, and max_pool3d (k=3, stride 2, padding 1) of the same
          input, float32: each side in its own process, alternating, 3 rounds; best of 5
          calls per round, ms per call, the ratio ours/upstream of the best times, and a
          checksum of each output for a side-by-side check before timing is trusted
  ternary addcmul / addcdiv / lerp (tensor weight) of three contiguous 2^18-element tensors,
          float32 and complex64, and complex64 add / mul, one thread (microseconds)
  short_rows  broadcast products of many short rows (session 45): [250,1]*[250,20],
          [250,20]*[1,20], [5,1,5,1]*[1,10,1,20] and torch.kron of op_db's sample ([5,5] and
          [10,20]), float32; torch.grid_sampler_2d of a [2,3,5,20] input over a 13x10 and a
          52x40 grid, bilinear zeros / border / reflection and nearest: best of 5 x 2,000 calls,
          microseconds per call
  vmap    torch.func.vmap and per-sample gradients (vmap of grad): sin of 64 rows of 1,000,
          a batched linear (64 rows through a 256x256 weight), and the per-sample gradients
          of a 64-32-10 MLP over B = 16 and 64 samples (milliseconds, best of 5)
  profile one SmolLM2 prefill forward (arguments: dtype S, default float32 1024) with the
          time per operator: torch._C._tn_profile on torchnative, torch.profiler upstream
All at 2 threads, best of several repeats.
"""
import os
import subprocess
import sys
import time


def best_of(fn, reps):
    fn()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def task_sdpa(torch, F, args):
    for dt in (torch.float32, torch.bfloat16):
        for S in (512, 1024):
            torch.manual_seed(0)
            q, k, v = (torch.randn(1, 9, S, 64, dtype=dt) for _ in range(3))
            t = best_of(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), 5)
            print(f"sdpa {str(dt):15s} S={S:5d}: {t * 1e3:7.2f} ms")


def task_kv_update(torch, F, args):
    # a static KV cache's update per layer and decode step: index_copy_ of one position's
    # keys (1x3x1x64) into a 1x3x101x64 cache (transformers' StaticCache), in place
    c = torch.zeros(1, 3, 101, 64)
    k, pos = torch.randn(1, 3, 1, 64), torch.tensor([40])
    n = 2000
    t = best_of(lambda: [c.index_copy_(2, pos, k) for _ in range(n)], 5) / n
    print(f"static-cache index_copy_ 1x3x101x64: {t * 1e6:6.2f} us")


def task_fills(torch, F, args):
    x = torch.rand(1000000, generator=torch.Generator().manual_seed(0))
    cases = [("ones float32", lambda: torch.ones(1000000)), ("full float32 2.0", lambda: torch.full((1000000,), 2.0)),
             ("ones int64", lambda: torch.ones(1000000, dtype=torch.int64)), ("zeros float32", lambda: torch.zeros(1000000)),
             ("masked.mean, no mask", lambda: torch.masked.mean(x, mask=None))]
    for name, fn in cases:
        print(f"{name:24s} {best_of(fn, 50) * 1e6:9.1f} us")


def task_f64_math(torch, F, args):
    # the float64 functions of src/kernels/ew_vec_f64.inc and the softmaxes that run in float64
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1000000, generator=g) * 4 + 0.05
    y = torch.rand(1000000, generator=g) * 6 - 3
    xd, yd = x.double(), y.double()
    x3 = x.view(100, 100, 100)
    cases = [("exp", lambda: torch.exp(xd)), ("log", lambda: torch.log(xd)),
             ("pow(x, y)", lambda: torch.pow(xd, yd)), ("pow(x, 2.5)", lambda: torch.pow(xd, 2.5)),
             ("float_power(float32 x, y)", lambda: torch.float_power(x, y)),
             ("softmax(float32, dtype=float64)", lambda: torch.softmax(x3, -1, dtype=torch.float64)),
             ("log_softmax(float32, dtype=float64)", lambda: torch.log_softmax(x3, -1, dtype=torch.float64))]
    for name, fn in cases:
        print(f"{name:38s} {best_of(fn, 20) * 1e6:9.1f} us")


def task_sdpa_static(torch, F, args):
    # SmolLM2's decode attention (9 query heads on 3 kv heads) against a static cache of S
    # keys of which the first `valid` are unmasked; the same cache every call (in cache)
    for S, valid in ((95, 50), (235, 150), (1024, 900)):
        for dt in (torch.float32, torch.bfloat16):
            torch.manual_seed(0)
            q = torch.randn(1, 9, 1, 64, dtype=dt)
            k, v = (torch.randn(1, 3, S, 64, dtype=dt) for _ in range(2))
            m = (torch.arange(S) < valid).view(1, 1, 1, S)
            n = 400
            t = best_of(lambda: [F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True)
                                 for _ in range(n)], 5) / n
            print(f"sdpa static-cache decode S={S:4d} valid={valid:3d} {str(dt):15s}: {t * 1e6:6.1f} us")


def task_linear(torch, F, args):
    S = int(args[0]) if args else 512
    torch.manual_seed(0)
    for k, n in ((576, 576), (576, 192), (576, 1536), (1536, 576), (576, 49152)):
        x = torch.randn(S, k)
        ws = [torch.randn(n, k) * 0.05 for _ in range(40 if n < 10000 else 2)]

        def run():
            for w in ws:
                F.linear(x, w)
        t = best_of(run, 3) / len(ws)
        print(f"linear cold weights {S}x{k}x{n}: {t * 1e3:8.3f} ms {2 * S * k * n / t / 1e9:7.1f} GFLOP/s")


def task_vecmat(torch, F, args):
    dt = getattr(torch, args[0]) if args else torch.float32
    torch.manual_seed(0)
    for m, k, n in ((1, 576, 1536), (1, 1536, 576), (4, 576, 1536), (4, 1536, 576), (1, 3072, 768), (1, 768, 3072)):
        x = torch.randn(m, k).to(dt)
        bs = [torch.randn(k, n).to(dt) for _ in range(60)]
        warm = best_of(lambda: [torch.mm(x, bs[0]) for _ in range(20)], 5) / 20
        cold = best_of(lambda: [torch.mm(x, b) for b in bs], 5) / len(bs)
        gb = k * n * bs[0].element_size() / 1e9
        print(f"vecmat {str(dt):14s} {m}x{k}x{n}: one matrix {warm * 1e6:7.1f} us ({gb / warm:5.1f} GB/s), "
              f"60 cycled {cold * 1e6:7.1f} us ({gb / cold:5.1f} GB/s)")


def task_decode_linears(torch, F, args):
    dt = getattr(torch, args[0]) if args else torch.float32
    torch.manual_seed(0)
    shapes = [(576, 576), (576, 192), (576, 192), (576, 576), (576, 1536), (576, 1536), (1536, 576)] * 30
    shapes.append((576, 49152))
    ws = [(torch.randn(n, k) * 0.05).to(dt) for k, n in shapes]
    xs = {k: torch.randn(1, k).to(dt) for k in (576, 1536)}
    gb = sum(w.numel() * w.element_size() for w in ws) / 1e9
    ts = []
    for _ in range(8):
        t0 = time.perf_counter()
        for w in ws:
            F.linear(xs[w.shape[1]], w)
        ts.append(time.perf_counter() - t0)
    ts = sorted(ts[1:])
    t = ts[len(ts) // 2]
    print(f"decode linears {str(dt):14s}: {t * 1e3:7.2f} ms per step ({gb / t:5.1f} GB/s of {gb * 1e3:.0f} MB), "
          f"min {ts[0] * 1e3:.2f} max {ts[-1] * 1e3:.2f}")


def task_cat(torch, F, args):
    x = torch.randn(1, 9, 1024, 64)
    x1, x2 = x[..., :32], x[..., 32:]
    a, b = -x2, x1.contiguous()
    t1 = best_of(lambda: torch.cat((-x2, x1), dim=-1), 20)
    t2 = best_of(lambda: torch.cat((a, b), dim=-1), 20)
    print(f"cat rotate_half 1x9x1024x64: {t1 * 1e6:6.0f} us; two contiguous halves: {t2 * 1e6:6.0f} us")


def task_ternary(torch, F, args):
    torch.set_num_threads(1)
    n = 1 << 18
    for dt in (torch.float32, torch.complex64):
        a, b, c = (torch.randn(n, dtype=dt, generator=torch.Generator().manual_seed(i)) for i in range(3))
        w = c * 0.5 if dt == torch.float32 else c * 0.4
        fns = {"addcmul": lambda: torch.addcmul(a, b, c, value=0.5), "addcdiv": lambda: torch.addcdiv(a, b, c, value=0.5),
               "lerp": lambda: torch.lerp(a, b, w), "add": lambda: a + b, "mul": lambda: a * b}
        for name, fn in fns.items():
            if dt == torch.float32 and name in ("add", "mul"):
                continue
            print(f"{name} {str(dt).split('.')[-1]} 2^18: {best_of(fn, 30) * 1e6:8.1f} us")


def task_short_rows(torch, F, args):
    g = torch.Generator().manual_seed(0)
    r = lambda *shape: torch.randn(*shape, generator=g)
    p, q, row = r(250, 1), r(250, 20), r(1, 20)
    a, b = r(5, 5), r(10, 20)
    av, bv = a.reshape(5, 1, 5, 1), b.reshape(1, 10, 1, 20)
    cases = {"[250,1]*[250,20]": lambda: p * q, "[250,20]*[1,20]": lambda: q * row,
             "[5,1,5,1]*[1,10,1,20]": lambda: av * bv, "kron [5,5] [10,20]": lambda: torch.kron(a, b)}
    x = r(2, 3, 5, 20)
    for hw in ((13, 10), (52, 40)):
        grid = torch.rand(2, *hw, 2, generator=g) * 2.2 - 1.1
        for name, m, pad in (("bilinear zeros", 0, 0), ("bilinear border", 0, 1), ("bilinear reflection", 0, 2), ("nearest zeros", 1, 0)):
            cases[f"grid_sampler_2d {hw[0]}x{hw[1]} {name}"] = (lambda grid=grid, m=m, pad=pad: torch.grid_sampler_2d(x, grid, m, pad, False))
    def calls(fn):
        for _ in range(2000):
            fn()
    for name, fn in cases.items():
        t = best_of(lambda: calls(fn), 5) / 2000
        print(f"{name:40s} {t * 1e6:8.2f} us")


def task_gemm(torch, F, args):
    env = dict(os.environ)
    for rnd in range(3):
        for label, extra in (("own", {}), ("openblas", {"TN_F32_GEMM": "openblas"})):
            e = dict(env)
            e.pop("TN_F32_GEMM", None)
            e.update(extra)
            out = subprocess.run([sys.executable, __file__, "linear"] + list(args), env=e, capture_output=True,
                                 text=True, check=True).stdout
            for line in out.splitlines():
                print(f"round {rnd} {label:8s} {line}")


def task_replay(torch, F, args):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import torchnative.graphs as G
    torch.manual_seed(0)
    x, w = torch.randn(1, 1, 576), torch.randn(576)
    q, cos = torch.randn(1, 9, 1, 64), torch.randn(1, 1, 1, 64)
    for name, f in (("x * w", lambda: x * w), ("q * cos", lambda: q * cos), ("x.pow(2)", lambda: x.pow(2)),
                    ("x.mean(-1, keepdim=True)", lambda: x.mean(-1, keepdim=True))):
        g = G.Graph()
        with G.graph(g):
            for _ in range(200):
                f()
        t = best_of(g.replay, 200) / 200
        print(f"replayed {name:26s}: {t * 1e6:5.2f} us per call ({g.counts()})")


def task_decode_replay(torch, F, args):
    import collections
    import statistics
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    sys.path.insert(0, os.path.join(here, "..", "python"))
    import worker
    import torchnative.graphs as G
    worker.setup_torch({"threads": 2})
    tok, model = worker.load_model(torch, args[0] if args else "float32")
    w = G.accelerate_decode(model)
    model.generate(**worker.chat_ids(tok), do_sample=False, max_new_tokens=200, min_new_tokens=200,
                   cache_implementation="static")
    g = w.entry.graph

    def replay(profile=False):
        for layer in w.entry.cache.layers:
            layer.cumulative_length.fill_(150)
        t = time.perf_counter()
        g.replay(profile=profile)
        return time.perf_counter() - t

    meds = [statistics.median(replay() for _ in range(20)) for _ in range(3)]
    print("replayed step ms, median of 20, three rounds: " + " ".join(f"{1e3 * m:.2f}" for m in meds))
    for _ in range(10):
        replay(profile=True)
    per = collections.defaultdict(lambda: [0, 0.0])
    for name, kind, ns in g.steps():
        per[name][0] += 1
        per[name][1] += ns / 10 / 1e3
    for name, (calls, us) in sorted(per.items(), key=lambda kv: -kv[1][1])[:8]:
        print(f"  {name:40s} {calls:4d} steps {us:8.1f} us per replay")


def task_weight_stream(torch, F, args):
    import statistics
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import worker
    dt = args[0] if args else "float32"
    rounds = int(args[1]) if len(args) > 1 else 6
    tok, model = worker.load_model(torch, dt)
    ids = worker.chat_ids(tok)
    gen = dict(do_sample=False)
    if "graphs" in args:
        from torchnative.graphs import accelerate_decode
        gen["cache_implementation"] = "static"
        accelerate_decode(model)
    n = 33
    model.generate(**ids, max_new_tokens=4, **gen)
    res = {False: [], True: []}
    for _ in range(rounds):
        for on in (False, True):
            torch._C._tn_weight_prefetch(on)
            torch._C._tn_weight_prefetch_stats(True)
            torch._C._tn_profile(True)
            torch._C._tn_profile_reset()
            t = time.perf_counter()
            model.generate(**ids, max_new_tokens=n, min_new_tokens=n, **gen)
            t = (time.perf_counter() - t) / n
            snap = torch._C._tn_profile_snapshot()
            torch._C._tn_profile(False)
            mb = torch._C._tn_weight_prefetch_stats(True)["prefetched_bytes"] / n / 1e6
            lin = snap["linear"][1] / n if "linear" in snap else float("nan")
            res[on].append(t)
            print(f"  stream {'on ' if on else 'off'}: {t * 1e3:6.2f} ms/token, linear {lin * 1e3:6.2f} ms, "
                  f"prefetched {mb:5.0f} MB/token", flush=True)
    torch._C._tn_weight_prefetch(True)
    ratio = statistics.median(a / b for a, b in zip(res[False], res[True]))
    print(f"weight stream {dt}{' graphs' if 'graphs' in args else ''}: median off "
          f"{statistics.median(res[False]) * 1e3:.2f} ms/token, on {statistics.median(res[True]) * 1e3:.2f}; "
          f"off/on per round, median {ratio:.3f}")


def task_generate_ops(torch, F, args):
    import math
    import timeit
    torch.manual_seed(0)
    logits = torch.randn(1, 49152)
    eos = torch.tensor([2])
    mask = torch.isin(torch.arange(49152), eos)
    g = dict(torch=torch, logits=logits, eos=eos, mask=mask, inf=math.inf)
    for stmt in ("torch.arange(49152)", "torch.isin(torch.arange(49152), eos)", "torch.where(mask, -inf, logits)",
                 "torch.argmax(logits, dim=-1)"):
        t = min(timeit.repeat(stmt, globals=g, number=2000, repeat=5)) / 2000
        print(f"  {stmt:45s} {t * 1e6:7.2f} us")


def task_linalg(torch, F, args):
    import timeit
    torch.manual_seed(0)
    a, ab = torch.randn(5, 5), torch.randn(2, 5, 5)
    spd, spdb = a @ a.mT + 5 * torch.eye(5), ab @ ab.mT + 5 * torch.eye(5)
    r, w, b, bb = torch.randn(5, 3), torch.randn(3, 5), torch.randn(5, 3), torch.randn(2, 5, 3)
    lu, piv = torch.linalg.lu_factor(a)
    g = dict(torch=torch, L=torch.linalg, a=a, ab=ab, spd=spd, spdb=spdb, r=r, w=w, b=b, bb=bb, lu=lu, piv=piv,
             chol=torch.linalg.cholesky(spd), qr=torch.geqrf(r), x=torch.randn(5, 3), y=torch.randn(5, 3))
    stmts = {
        "lu_factor": "L.lu_factor(a)", "lu_factor_b": "L.lu_factor(ab)", "lu": "L.lu(r)", "lu_unpack": "torch.lu_unpack(lu, piv)",
        "lu_solve": "L.lu_solve(lu, piv, b)", "solve": "L.solve(a, b)", "solve_b": "L.solve(ab, bb)", "det": "L.det(a)",
        "det_b": "L.det(ab)", "slogdet": "L.slogdet(a)", "logdet": "torch.logdet(spd)", "inv": "L.inv(a)", "inv_b": "L.inv(ab)",
        "inv_ex": "L.inv_ex(a)", "cholesky": "L.cholesky(spd)", "cholesky_b": "L.cholesky(spdb)",
        "cholesky_ex": "L.cholesky_ex(spd)", "cholesky_solve": "torch.cholesky_solve(b, chol)",
        "cholesky_inverse": "torch.cholesky_inverse(chol)", "triangular_solve": "torch.triangular_solve(b, a)",
        "solve_triangular": "L.solve_triangular(a, b, upper=True)", "qr": "L.qr(r)", "qr_complete": "L.qr(r, mode='complete')",
        "geqrf": "torch.geqrf(r)", "householder_product": "L.householder_product(*qr)",
        "ormqr": "torch.ormqr(*qr, b)", "eigh": "L.eigh(a)", "eigh_b": "L.eigh(ab)", "eigvalsh": "L.eigvalsh(a)",
        "svd": "L.svd(r, full_matrices=False)", "svd_full": "L.svd(w)", "svdvals": "L.svdvals(ab)",
        "pinv": "L.pinv(r)", "pinv_herm": "L.pinv(spd, hermitian=True)", "matrix_rank": "L.matrix_rank(ab)",
        "lstsq": "L.lstsq(r, b[:, :2].contiguous())", "matrix_exp": "L.matrix_exp(a)", "matrix_exp_b": "L.matrix_exp(ab)",
        "matrix_power": "L.matrix_power(a, 5)", "matrix_power_neg": "L.matrix_power(a, -2)",
        "matrix_norm_fro": "L.matrix_norm(a)", "matrix_norm_nuc": "L.matrix_norm(a, 'nuc')", "matrix_norm_2": "L.matrix_norm(ab, 2)",
        "matrix_norm_1": "L.matrix_norm(a, 1)", "norm": "L.norm(a, 'fro')", "cond": "L.cond(ab)", "cond_1": "L.cond(a, 1)",
        "multi_dot": "L.multi_dot([a, a, b])", "vecdot": "L.vecdot(x, y)", "cross": "L.cross(x, y)",
        "vander": "L.vander(x[0])", "tensorinv": "L.tensorinv(a.reshape(5, 5), ind=1)",
        "tensorsolve": "L.tensorsolve(a, b[:, 0].contiguous())",
    }
    filt = args[0] if args else ""
    for name, stmt in stmts.items():
        if filt not in name:
            continue
        t = min(timeit.repeat(stmt, globals=g, number=500, repeat=5)) / 500
        print(f"  {name:22s} {t * 1e6:8.2f} us")


def task_fft(torch, F, args):
    import numpy as np
    rng = np.random.default_rng(0)
    z = rng.standard_normal(1 << 16) + 1j * rng.standard_normal(1 << 16)
    r = rng.standard_normal((4096, 1024))
    zt, rt = torch.from_numpy(z.astype(np.complex64)), torch.from_numpy(r.astype(np.float32))
    for name, fn, want in (("fft 2^16 complex64", lambda: torch.fft.fft(zt), np.fft.fft(z)),
                           ("rfft 4096x1024 float32", lambda: torch.fft.rfft(rt), np.fft.rfft(r))):
        err = np.abs(fn().numpy() - want).max() / np.abs(want).max()
        assert err < 1e-5, f"{name}: relative error {err}"
        print(f"  {name:24s} {best_of(fn, 5) * 1e3:8.2f} ms  (max error / max |X| = {err:.1e})")


def task_nn3d(torch, F, args):
    if args and args[0] == "--side":  # one side's timings, one line each
        torch.manual_seed(0)
        x = torch.randn(2, 16, 16, 32, 32)
        w = torch.randn(32, 16, 3, 3, 3) * 0.1
        b = torch.randn(32)
        for name, fn in (("conv3d", lambda: F.conv3d(x, w, b, padding=1)),
                         ("max_pool3d", lambda: F.max_pool3d(x, 3, stride=2, padding=1))):
            y = fn()
            print(f"{name} {best_of(fn, 5) * 1e3:.3f} {float(y.double().sum()):.6e}")
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sides = {"upstream": os.path.join(root, ".venv-ref", "bin", "python"), "ours": sys.executable}
    best = {}
    for r in range(3):
        for side, py in sides.items():
            out = subprocess.run([py, os.path.abspath(__file__), "nn3d", "--side"], capture_output=True, text=True,
                                 check=True).stdout.split()
            for i in range(0, len(out), 3):
                key = (out[i], side)
                best[key] = min(best.get(key, float("inf")), float(out[i + 1]))
                if r == 0:
                    print(f"  {side:9s} {out[i]:11s} checksum {out[i + 2]}")
    for name in ("conv3d", "max_pool3d"):
        u, o = best[(name, "upstream")], best[(name, "ours")]
        print(f"{name:11s} upstream {u:8.3f} ms  ours {o:8.3f} ms  ours/upstream {o / u:5.2f}")


def task_profile(torch, F, args):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import worker
    dt, S = (args[0] if args else "float32"), int(args[1]) if len(args) > 1 else 1024
    tok, model = worker.load_model(torch, dt)
    x = worker.prefill_ids(tok, S)[:, :S]
    fwd = lambda: model(input_ids=x, attention_mask=torch.ones_like(x), use_cache=False)  # noqa: E731
    fwd()
    rows = []
    if hasattr(torch._C, "_tn_profile"):
        torch._C._tn_profile(True)
        torch._C._tn_profile_reset()
        t = time.perf_counter()
        fwd()
        t = time.perf_counter() - t
        snap = torch._C._tn_profile_snapshot()
        torch._C._tn_profile(False)
        rows = [(k, v[0], v[2]) for k, v in snap.items()]
    else:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            t = time.perf_counter()
            fwd()
            t = time.perf_counter() - t
        rows = [(e.key, e.count, e.self_cpu_time_total / 1e6) for e in prof.key_averages()]
    print(f"prefill {dt} S={S}: {t * 1e3:.1f} ms ({S / t:.0f} tok/s)")
    for name, calls, sec in sorted(rows, key=lambda r: -r[2])[:12]:
        print(f"  {name:50s} calls {calls:5d}  {sec * 1e3:8.1f} ms  {100 * sec / t:5.1f} %")


def task_vmap(torch, F, args):
    from torch.func import functional_call, grad, vmap
    with torch.inference_mode(False):
        g = torch.Generator().manual_seed(0)
        x, w = torch.randn(64, 1000, generator=g), torch.randn(256, 256, generator=g)
        h = torch.randn(64, 256, generator=g)
        print(f"vmap(sin) 64x1000: {best_of(lambda: vmap(torch.sin)(x), 5) * 1e3:8.3f} ms")
        print(f"vmap(linear) 64x256 @ 256x256: {best_of(lambda: vmap(F.linear, in_dims=(0, None))(h, w), 5) * 1e3:8.3f} ms")
        model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Tanh(), torch.nn.Linear(32, 10))
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xi, yi):
            return F.cross_entropy(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))
        for b in (16, 64):
            xs, ys = torch.randn(b, 64, generator=g), torch.randint(0, 10, (b,), generator=g)
            t = best_of(lambda: vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys), 5)
            print(f"per-sample gradients, MLP 64-32-10, B = {b}: {t * 1e3:8.3f} ms")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("sdpa", "sdpa_static", "kv_update", "f64_math", "fills", "linear", "vecmat", "decode_linears", "cat", "gemm", "replay", "decode_replay", "profile",
                                                      "weight_stream", "generate_ops", "linalg", "fft", "nn3d", "ternary", "vmap", "short_rows"):
        print(__doc__)
        sys.exit(2)
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(2)
    with torch.inference_mode():
        globals()["task_" + sys.argv[1]](torch, F, sys.argv[2:])


if __name__ == "__main__":
    main()
