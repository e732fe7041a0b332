"""One measurement in a fresh process, run by bench/run.py with either environment's python
(upstream .venv-ref or torchnative .venv):

    python bench/worker.py '<json config>'

The config names a task (import_torch, import_transformers, decode, prefill, perop, gemm,
breakdown, ref64) and its parameters. The result is printed as the last stdout line,
prefixed with RESULT_MARK, as one JSON object. Nothing here compares the two sides; run.py
does that."""
import json
import os
import resource
import statistics
import sys
import time

RESULT_MARK = "BENCH-RESULT "
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROMPT = "Tell me about the sea."
# prefill input: plain English text, tokenized identically on both sides, cut to S tokens
PREFILL_TEXT = (
    "The sea covers most of the surface of the Earth. Its water moves in currents that carry heat "
    "from the equator towards the poles, and the tides rise and fall twice a day under the pull of "
    "the moon. Fishermen, sailors and merchants have crossed it for thousands of years, and whole "
    "cities grew around its harbours. Section {i}: storms, shallow reefs and long calm days each "
    "shaped the way ships were built, how far they sailed and what they carried home. "
)


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def torch_c_identity(torch):
    """Which _C this process loaded (file, size, mtime): run.py warns if our build changed mid-run."""
    f = torch._C.__file__
    st = os.stat(f)
    return {"file": os.path.basename(f), "size": st.st_size, "mtime": st.st_mtime}


def setup_torch(cfg):
    import torch
    torch.set_num_threads(cfg["threads"])
    return torch


def load_model(torch, dtype_name):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from torchnative.cli import bundled_model
    d, g = bundled_model()
    dtype = getattr(torch, dtype_name)
    tok = AutoTokenizer.from_pretrained(d, gguf_file=g)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=g, dtype=dtype).eval()
    return tok, model


def chat_ids(tok):
    return tok.apply_chat_template([{"role": "user", "content": PROMPT}], add_generation_prompt=True,
                                   return_tensors="pt", return_dict=True)


def weight_bytes_per_token(model):
    """Bytes of parameters one decode step reads: every parameter once (shared tensors once),
    minus the embedding table (a lookup touches one row) unless it is tied to lm_head, in
    which case lm_head reads it in full and it is counted once."""
    seen = {}
    for p in model.parameters():
        seen.setdefault(p.data_ptr(), p.numel() * p.element_size())
    total = sum(seen.values())
    emb = model.get_input_embeddings().weight
    out = model.get_output_embeddings()
    tied = out is not None and out.weight.data_ptr() == emb.data_ptr()
    emb_bytes = emb.numel() * emb.element_size()
    return (total if tied else total - emb_bytes), tied


def save_rows(path, arrays):
    import numpy as np
    np.savez(path, **{k: np.asarray(v, dtype=np.float32) for k, v in arrays.items()})


def to_numpy_f32(t):
    return t.detach().float().contiguous().numpy()


# ---------------------------------------------------------------- tasks

class StampStreamer:
    """A generate() streamer that only records when each put() happens: the first call carries
    the prompt, each later one a new token, so decode time needs no subtraction across runs."""
    def __init__(self):
        self.stamps = []

    def put(self, value):
        self.stamps.append(time.perf_counter())

    def end(self):
        pass


def task_import_torch(cfg):
    t0 = time.perf_counter()
    import torch  # noqa: F401
    return {"seconds": time.perf_counter() - t0}


def task_import_transformers(cfg):
    t0 = time.perf_counter()
    from transformers import AutoModelForCausalLM  # noqa: F401
    return {"seconds": time.perf_counter() - t0}


def task_decode(cfg):
    torch = setup_torch(cfg)
    t0 = time.perf_counter()
    tok, model = load_model(torch, cfg["dtype"])
    load_s = time.perf_counter() - t0
    ids = chat_ids(tok)
    n = cfg["new_tokens"]
    gen = dict(do_sample=False)
    graphs = None
    if cfg.get("static"):
        gen["cache_implementation"] = "static"
        if cfg.get("graphs") and hasattr(torch._C, "_tn_graph_capture_begin"):  # torchnative only
            from torchnative.graphs import accelerate_decode
            graphs = accelerate_decode(model)
    runs = []
    with torch.inference_mode():
        model.generate(**ids, max_new_tokens=2, **gen)  # warm-up
        for _ in range(cfg.get("reps", 2)):
            st = StampStreamer()
            t0 = time.perf_counter()
            out = model.generate(**ids, max_new_tokens=n, min_new_tokens=n, streamer=st, **gen)
            t1 = time.perf_counter()
            stamps = st.stamps[1:]  # the first put() is the prompt
            runs.append({"ttft_s": stamps[0] - t0, "generate_s": t1 - t0,
                         "decode_tok_s": (len(stamps) - 1) / (stamps[-1] - stamps[0])})
    rss = rss_mib()
    best = max(runs, key=lambda r: r["decode_tok_s"])
    n_new = out.shape[-1] - ids["input_ids"].shape[-1]
    res = {"tokens": out[0].tolist(), "prompt_len": ids["input_ids"].shape[-1], "n_new": n_new,
           "ttft_s": min(r["ttft_s"] for r in runs), "generate_s": best["generate_s"],
           "decode_tok_s": best["decode_tok_s"], "runs": runs, "load_s": load_s, "peak_rss_mib": rss}
    if graphs is not None:
        res["graphs"] = {k: v for k, v in graphs.stats().items() if k != "refused"}
        res["graphs"]["refused"] = list(graphs.stats()["refused"].values())
    wb, tied = weight_bytes_per_token(model)
    res["weight_bytes_per_token"] = wb
    res["tied_embeddings"] = tied
    if cfg.get("dump"):
        # teacher-forced logits over a sequence fixed by run.py (the same on both sides)
        seq = torch.tensor([cfg.get("ref_seq") or res["tokens"]])
        with torch.inference_mode():
            logits = model(input_ids=seq, attention_mask=torch.ones_like(seq), use_cache=False).logits[0]
        save_rows(cfg["dump"], {"logits": to_numpy_f32(logits)})
    return res


def prefill_ids(tok, smax):
    text = "".join(PREFILL_TEXT.format(i=i) for i in range(1 + smax // 60))
    ids = tok(text, return_tensors="pt")["input_ids"]
    assert ids.shape[-1] >= smax, ids.shape
    return ids[:, :smax]


def sample_positions(s):
    step = max(1, s // 16)
    return sorted(set(list(range(0, s, step)) + [s - 1]))


def task_prefill(cfg):
    torch = setup_torch(cfg)
    tok, model = load_model(torch, cfg["dtype"])
    sizes = cfg["sizes"]
    ids = prefill_ids(tok, max(sizes))
    res = {"ids_checksum": int(sum((i + 1) * v for i, v in enumerate(ids[0].tolist())) % 1000000007),
           "per_s": {}}
    dump = {}
    with torch.inference_mode():
        for s in sizes:
            x = ids[:, :s]
            logits = model(input_ids=x, attention_mask=torch.ones_like(x), use_cache=False).logits  # warm-up (and validation)
            if cfg.get("dump"):
                pos = sample_positions(s)
                dump[f"S{s}"] = to_numpy_f32(logits[0, pos])
            del logits
            reps = 3 if s <= 128 else 1
            best = float("inf")
            for _ in range(reps):
                t0 = time.perf_counter()
                model(input_ids=x, attention_mask=torch.ones_like(x), use_cache=False)
                best = min(best, time.perf_counter() - t0)
            res["per_s"][str(s)] = {"seconds": best, "tok_s": s / best}
    if cfg.get("dump"):
        save_rows(cfg["dump"], dump)
    res["peak_rss_mib"] = rss_mib()
    return res


def task_ref64(cfg):
    """float64 logits (upstream side only): the yardstick for the rounding error of float32
    and bfloat16 runs, from which run.py derives the validation tolerances."""
    torch = setup_torch(cfg)
    tok, model = load_model(torch, "float64")
    dump = {}
    with torch.inference_mode():
        if cfg.get("sizes"):
            ids = prefill_ids(tok, max(cfg["sizes"]))
            for s in cfg["sizes"]:
                logits = model(input_ids=ids[:, :s], attention_mask=torch.ones_like(ids[:, :s]), use_cache=False).logits
                dump[f"S{s}"] = logits[0, sample_positions(s)].float().numpy()
                del logits
        if cfg.get("ref_seq"):
            seq = torch.tensor([cfg["ref_seq"]])
            dump["logits"] = model(input_ids=seq, attention_mask=torch.ones_like(seq), use_cache=False).logits[0].float().numpy()
    save_rows(cfg["dump"], dump)
    return {}


def best_per_call(stmt, g, repeat=7, min_time=0.05):
    import timeit
    t = timeit.Timer(stmt, globals=g)
    number = 1
    while True:
        dt = t.timeit(number)
        if dt >= min_time:
            break
        number *= 2 if dt > min_time / 10 else 10
    return min(t.repeat(repeat=repeat, number=number)) / number


def task_perop(cfg):
    torch = setup_torch(cfg)
    import torch.nn.functional as F
    g = {"torch": torch, "F": F,
         "a": torch.ones(1), "b": torch.ones(1),
         "x": torch.ones(2, 3),
         "xl": torch.ones(1, 576), "wl": torch.ones(576, 576) / 576,
         "aten_add": torch.ops.aten.add.Tensor}
    stmts = {"add_1elem": "a + b", "view": "x.view(3, 2)", "linear_1x576x576": "F.linear(xl, wl)",
             "aten_add_Tensor": "aten_add(a, b)"}
    return {"us_per_call": {k: 1e6 * best_per_call(s, g) for k, s in stmts.items()}}


def pattern(torch, rows, cols, dtype, salt):
    """Deterministic values, exact in bfloat16 (multiples of 1/64 below 1), identical on both sides."""
    n = rows * cols
    v = (torch.arange(n, dtype=torch.int64) * 7919 + salt) % 113 - 56
    return (v.to(torch.float32) / 64).reshape(rows, cols).to(dtype)


def task_gemm(cfg):
    torch = setup_torch(cfg)
    import torch.nn.functional as F
    out = {}
    for dname in cfg["dtypes"]:
        dtype = getattr(torch, dname)
        for (m, k, n) in cfg["shapes"]:
            a = pattern(torch, m, k, dtype, 1)
            w = pattern(torch, n, k, dtype, 2)          # F.linear weight, (N, K)
            b = w.t().contiguous()                      # torch.mm operand, (K, N)
            with torch.inference_mode():
                y = F.linear(a, w)
                y2 = torch.mm(a, b)
                chk = [float(y.double().sum()), float(y.double().abs().sum()),
                       float((y.double() - y2.double()).abs().max())]
                g = {"F": F, "torch": torch, "a": a, "w": w, "b": b}
                res = {}
                for name, stmt in (("linear", "F.linear(a, w)"), ("mm", "torch.mm(a, b)")):
                    t = best_per_call(stmt, g, repeat=5, min_time=0.04)
                    res[name] = {"seconds": t, "gflops": 2.0 * m * k * n / t * 1e-9}
            res["checksum"] = chk
            out[f"{dname}:{m}x{k}x{n}"] = res
    return {"gemm": out}


def task_breakdown(cfg):
    """Where one decode step's time goes: calls into torch's builtins (torch._C functions and
    Tensor methods = binding + door + kernel) against everything else (Python frames of
    transformers and torch, and Python builtins). Wall time comes from unprofiled runs; the
    builtin time from a run under sys.setprofile; Python = wall - builtin."""
    import types
    torch = setup_torch(cfg)
    tok, model = load_model(torch, cfg.get("dtype", "float32"))
    ids = chat_ids(tok)
    n = cfg["new_tokens"]
    gen = dict(do_sample=False)

    def is_torch_builtin(fn):
        mod = getattr(fn, "__module__", None) or ""
        if mod.startswith("torch"):
            return True
        s = getattr(fn, "__self__", None)
        if s is None:
            return False
        if isinstance(s, types.ModuleType):
            return s.__name__.startswith("torch")
        t = s if isinstance(s, type) else type(s)
        return (getattr(t, "__module__", "") or "").startswith("torch")

    cache = {}
    state = {"depth": 0, "t0": 0.0, "builtin": 0.0, "calls": 0, "by_name": {}}
    clock = time.perf_counter

    def prof(frame, event, arg):
        if event == "c_call":
            if state["depth"]:
                state["depth"] += 1
                return
            key = id(arg)
            hit = cache.get(key)
            if hit is None:
                hit = cache[key] = (is_torch_builtin(arg), getattr(arg, "__name__", "?"), arg)
            if hit[0]:
                state["depth"] = 1
                state["name"] = hit[1]
                state["t0"] = clock()
        elif event in ("c_return", "c_exception"):
            if state["depth"]:
                state["depth"] -= 1
                if not state["depth"]:
                    dt = clock() - state["t0"]
                    state["builtin"] += dt
                    state["calls"] += 1
                    bn = state["by_name"]
                    e = bn.get(state["name"])
                    if e is None:
                        bn[state["name"]] = [1, dt]
                    else:
                        e[0] += 1
                        e[1] += dt

    def timed(k, profile):
        state.update(builtin=0.0, calls=0, by_name={})
        if profile:
            sys.setprofile(prof)
        t0 = time.perf_counter()
        model.generate(**ids, max_new_tokens=k, min_new_tokens=k, **gen)
        dt = time.perf_counter() - t0
        sys.setprofile(None)
        return dt, state["builtin"], state["calls"], dict(state["by_name"])

    with torch.inference_mode():
        model.generate(**ids, max_new_tokens=2, **gen)  # warm-up
        w1 = min(timed(1, False)[0] for _ in range(3))
        wn = min(timed(n, False)[0] for _ in range(2))
        p1 = min((timed(1, True) for _ in range(2)), key=lambda r: r[0])
        pn = min((timed(n, True) for _ in range(2)), key=lambda r: r[0])
    steps = n - 1
    wall = (wn - w1) / steps
    builtin = (pn[1] - p1[1]) / steps
    calls = (pn[2] - p1[2]) / steps
    top = {}
    for name, (c, t) in pn[3].items():
        c1, t1 = p1[3].get(name, (0, 0.0))
        top[name] = [(c - c1) / steps, (t - t1) / steps]
    top = dict(sorted(top.items(), key=lambda kv: -kv[1][1])[:12])
    res = {"step_wall_s": wall, "step_builtin_s": builtin, "step_python_s": wall - builtin,
           "step_builtin_calls": calls, "step_profiled_wall_s": (pn[0] - p1[0]) / steps,
           "top_builtins": top}
    prof_api = getattr(torch._C, "_tn_profile", None)
    if prof_api is not None:
        # torchnative's own per-op counters: time inside the door (op implementation + kernels)
        # and inside the whole binding call, per op
        snaps = []
        with torch.inference_mode():
            for k in (1, n):
                prof_api(True)
                torch._C._tn_profile_reset()
                t0 = time.perf_counter()
                model.generate(**ids, max_new_tokens=k, min_new_tokens=k, **gen)
                dt = time.perf_counter() - t0
                prof_api(False)
                snaps.append((dt, torch._C._tn_profile_snapshot()))
        (d1, s1), (dn, sn) = snaps
        per_op = {}
        for op, (c, door, call) in sn.items():
            c1, door1, call1 = s1.get(op, (0, 0.0, 0.0))
            per_op[op] = [(c - c1) / steps, (door - door1) / steps, (call - call1) / steps]
        res["tn_profile"] = {
            "step_wall_s": (dn - d1) / steps,
            "step_door_s": sum(v[1] for v in per_op.values()),
            "step_binding_call_s": sum(v[2] for v in per_op.values()),
            "step_op_calls": sum(v[0] for v in per_op.values()),
            "top_ops_by_door_time": dict(sorted(per_op.items(), key=lambda kv: -kv[1][1])[:15]),
        }
    return res


def task_graph_breakdown(cfg):
    """torchnative only: one static-cache generation with operator graphs, timed per decode
    step. step = wall time between consecutive forward calls; forward = the wrapper's call
    (key, input copies, replay, output copy); replay = door + kernels, with a per-operator
    split from Graph.replay(profile=True); outside = generate's own Python (sampling,
    stopping criteria, mask and input preparation, streamer)."""
    import collections
    torch = setup_torch(cfg)
    tok, model = load_model(torch, cfg["dtype"])
    ids = chat_ids(tok)
    n = cfg["new_tokens"]
    import torchnative.graphs as G
    w = G.accelerate_decode(model)
    calls, reps = [], []
    orig_call, orig_replay = G.DecodeGraphs.__call__, G.Graph.replay

    def call(self, *a, **kw):
        t0 = time.perf_counter()
        r = orig_call(self, *a, **kw)
        calls.append((t0, time.perf_counter(), self.replays))
        return r

    def replay(self, profile=False):
        t0 = time.perf_counter()
        orig_replay(self, profile=True)
        reps.append(time.perf_counter() - t0)

    G.DecodeGraphs.__call__, G.Graph.replay = call, replay
    gen = dict(do_sample=False, max_new_tokens=n, min_new_tokens=n, cache_implementation="static")
    with torch.inference_mode():
        model.generate(**ids, **gen)  # warm-up
        calls.clear()
        reps.clear()
        model.generate(**ids, **gen)
    G.DecodeGraphs.__call__, G.Graph.replay = orig_call, orig_replay
    replayed = [c for i, c in enumerate(calls) if i and c[2] > calls[i - 1][2]]
    k = len(replayed)
    step = (replayed[-1][0] - replayed[0][0]) / (k - 1)
    fwd = sum(c[1] - c[0] for c in replayed) / k
    rep = sum(reps) / len(reps)
    agg = collections.defaultdict(lambda: [0, 0.0])
    for name, kind, ns in w.entry.graph.steps():
        agg[name][0] += 1
        agg[name][1] += ns / len(reps) / 1e3
    top = sorted(agg.items(), key=lambda kv: -kv[1][1])
    wb, _ = weight_bytes_per_token(model)
    lin_us = agg["linear.default"][1]
    return {"replayed_steps": k, "step_ms": 1e3 * step, "forward_ms": 1e3 * fwd, "replay_ms": 1e3 * rep,
            "outside_ms": 1e3 * (step - fwd), "wrapper_ms": 1e3 * (fwd - rep),
            "linear_ms": lin_us / 1e3, "linear_gb_s": wb / (lin_us * 1e-6) / 1e9 if lin_us else None,
            "graph_steps": w.entry.graph.counts(),
            "top_ops": [(name, cnt, us) for name, (cnt, us) in top[:8]]}


TASKS = {name[5:]: fn for name, fn in globals().items() if name.startswith("task_")}


def main():
    cfg = json.loads(sys.argv[1])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import warnings
    warnings.filterwarnings("ignore")
    res = TASKS[cfg["task"]](cfg)
    if "torch" in sys.modules:
        res["torch_c"] = torch_c_identity(sys.modules["torch"])
    res.setdefault("peak_rss_mib", rss_mib())
    sys.stdout.flush()
    print(RESULT_MARK + json.dumps(res))


if __name__ == "__main__":
    main()
