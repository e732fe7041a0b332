"""Quantised inference side by side with llama.cpp on the same GGUF file (issue 20).

    .venv/bin/python bench/quant.py                     # 3 counted rounds, 2 threads
    .venv/bin/python bench/quant.py --rounds 5 --new-tokens 64 --sizes 128,512
    .venv/bin/python bench/quant.py --no-float          # skip the float32-dequantised run
    .venv/bin/python bench/quant.py --quantize 8da4w:64,8da4w:64:head,int8 --no-llama
                                                        # torchnative.quantize of the float32 model
    .venv/bin/python bench/quant.py --kquant            # also the k-quant copy of the model
    .venv/bin/python bench/quant.py --ops               # the products alone, every block type
    .venv/bin/python bench/quant.py --sweep             # a decode step's products read cold, both layouts
    .venv/bin/python bench/quant.py --breakdown         # a replayed decode step split by operator
    .venv/bin/python bench/quant.py --chains            # replayed decode with and without chains
    .venv/bin/python bench/quant.py --python            # generate()'s Python per step, upstream vs ours

Each measurement is a fresh process, one side at a time (never both at once), alternating
torchnative / llama.cpp for `--rounds` rounds after one warm-up round; figures are medians.
Every process runs with `--threads` threads (torch.set_num_threads and OMP_NUM_THREADS for
ours, n_threads / n_threads_batch for llama.cpp) and reports:

- load: `from_gguf` (ours; the transformers model classes imported first, as any
  from_pretrained needs them and `import transformers` does not load them) or
  `llama_cpp.Llama(...)` (llama.cpp), seconds;
- decode: greedy tokens per second over `--new-tokens` tokens after a chat prompt of 37
  tokens (ours: static cache + operator graphs, what the CLI runs, and eager with the
  dynamic cache; llama.cpp: `generate` with top_k=1), the first new token excluded;
- prefill: tokens per second of one forward over S prompt tokens (ours: model(ids) keeping
  only the last position's logits; llama.cpp: `eval` with n_batch = S);
- peak RSS of the process (ru_maxrss).
`--kquant` adds the bundled model with ffn_down re-quantised to Q4_K_M's Q4_K / Q6_K mix
(tests/quant_k_model.py, written into build/models/; the only rows of SmolLM2-135M that
k-quant super-blocks fit), run alternately with the bundled file on both sides ("ours-k",
"llama.cpp-k"). `--ops` times aten::_tn_quant_linear alone for every block type against
the float32 product (torch.nn.functional.linear) in one process, the types interleaved,
for decode (m = 1) and prefill (m = 128) rows at the model's ffn_down, ffn_gate/up and
lm_head shapes and a larger one, the Q4_0 / Q4_1 / Q8_0 blocks also in the layout from_gguf
repacks them into on this host (`q4_1x8`, ...: kernels/quant.h "the x8 layouts"), 8da4w at
G = 64 in the plain layout and the interleaved one (`8da4wx8`, where this host has it), and prints
ratios to float32 and to Q4_1 (min / median / max over the rounds).
The float32 run (`--dtype float32`, transformers dequantising in numpy) gives today's
decode speed and RSS for the "RSS <= 0.5x" target. `--quantize` adds one run per listed
method on that float32 model after torchnative.quantize (method:group_size, ":head" to
quantise lm_head too, ":plain" to drop 8da4w's interleaved copy and run the plain layout's
kernel, e.g. 8da4w:64:head:plain), for the "8da4w decode >= 3x our float32 decode" target;
their load time includes the quantisation. The float32 and --quantize runs come once per
measured round (after the rounds with --rounds 0), one after another, so their medians
are over the same stretch of machine load.

llama.cpp: llama_cpp_python in .venv-ref (`scripts/setup.sh --llama-cpp`), default
settings except extra buffer types off (its AMX path dies with SIGILL on the development
VM; see tests/quant_llama_cpp.py). Ratios measured on a shared, loaded machine are not
results: docs/PERFORMANCE.md says how the lead measures them quietly.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import bandwidth_beside  # noqa: E402  (bench/run.py: bench/machine.c's read bandwidth)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS = os.path.join(ROOT, ".venv", "bin", "python")
REF = os.path.join(ROOT, ".venv-ref", "bin", "python")

# The chat prompt of the CLI's default question, as token ids (SmolLM2's chat template).
PROMPT = [1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411, 407, 19712, 8182, 2,
          198, 1, 4093, 198, 1780, 314, 260, 3575, 282, 4649, 47, 2, 198, 1, 520, 9531, 198]

OURS_CODE = r"""
import json, os, resource, sys, time
cfg = json.loads(sys.argv[1])
import torch
torch.set_num_threads(cfg["threads"])
import transformers
from transformers import AutoModelForCausalLM
import transformers.models.llama.modeling_llama  # the model class, imported by any loader
path = cfg["path"]
d, f = os.path.split(path)
t = time.perf_counter()
if cfg["float"]:
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32).eval()
    if cfg.get("quantize"):
        import torchnative
        method, _, rest = cfg["quantize"].partition(":")
        g, _, opts = rest.partition(":")
        opts = opts.split(":")
        torchnative.quantize(model, method, group_size=int(g) if g else None, include_lm_head="head" in opts)
        if "plain" in opts:  # the 8da4w layers without their interleaved copy: the plain layout's kernel
            for mod in model.modules():
                if getattr(mod, "weight_x8", None) is not None:
                    mod.weight_x8 = None
else:
    from torchnative.quant import from_gguf
    model = from_gguf(path)
load = time.perf_counter() - t
res = {"load_s": load}
ids = torch.tensor([cfg["prompt"]])
n = cfg["new_tokens"]

class Clock:
    # times each new token: generate's streamer gets the prompt first, then one put per token
    def __init__(self): self.t = []
    def put(self, v): self.t.append(time.perf_counter())
    def end(self): pass

def decode(**kw):
    c = Clock()
    with torch.inference_mode():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, min_new_tokens=n,
                             do_sample=False, streamer=c, **kw)
    t = c.t[1:]  # t[0]: the prompt; t[1]: first new token (prefill + capture)
    return (len(t) - 1) / (t[-1] - t[0]), out[0, ids.shape[1]:].tolist()

# the bytes a decode step reads: every linear layer's weights (blocks, or the float matrix;
# an 8da4w layer with its interleaved copy reads that copy, not its plain weight and scales)
def read_tensors(mod):
    skip = {"weight_int4", "scales"} if getattr(mod, "weight_x8", None) is not None else set()
    return [t for name, t in list(mod.named_parameters(recurse=False)) + list(mod.named_buffers(recurse=False))
            if name not in skip]
res["weight_bytes_per_token"] = sum(
    t.nbytes for mod in model.modules() if hasattr(mod, "in_features") and hasattr(mod, "out_features")
    for t in read_tensors(mod))
res["decode_eager_tok_s"], res["tokens"] = decode()
if (not cfg["float"] or cfg.get("quantize")) and hasattr(torch._C, "_tn_graph_capture_begin"):
    from torchnative.graphs import accelerate_decode
    g = accelerate_decode(model)
    res["decode_graphs_tok_s"], toks = decode(cache_implementation="static")
    res["graphs_same_tokens"] = toks == res["tokens"]
for s in cfg["sizes"]:
    x = torch.randint(100, 40000, (1, s), generator=torch.Generator().manual_seed(s))
    with torch.inference_mode():
        model(x, logits_to_keep=1)
        t = time.perf_counter()
        model(x, logits_to_keep=1)
        res[f"prefill_{s}_tok_s"] = s / (time.perf_counter() - t)
res["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
if not cfg["float"]:
    # attn_q / attn_k rows: permuted once at load (what from_gguf does) against a row map
    # applied to each product's output (an index_select per q/k call of every decode step)
    import torchnative.quant as Q
    from torchnative.gguf_file import GGUFFile
    g = GGUFFile(path)
    c = model.config
    names = [m for m in g.tensors if ".attn_q." in m or ".attn_k." in m]
    t = time.perf_counter()
    for m in names:
        Q._reverse_permute_rows(g.tensor_data(m), c.num_attention_heads if ".attn_q." in m else c.num_key_value_heads)
    res["permute_at_load_ms"] = (time.perf_counter() - t) * 1e3
    outs = [(torch.randn(1, 1, g.tensors[m].shape[0]), torch.randperm(g.tensors[m].shape[0])) for m in names]
    with torch.inference_mode():
        t = time.perf_counter()
        for _ in range(50):
            for y, p in outs:
                y.index_select(-1, p)
    res["row_map_per_token_us"] = (time.perf_counter() - t) / 50 * 1e6
print(json.dumps(res))
"""

LLAMA_CODE = r"""
import json, os, resource, sys, time
cfg = json.loads(sys.argv[1])
sys.path.insert(0, os.path.join(cfg["root"], "tests"))
import llama_cpp
import llama_cpp.llama as llama_mod
default = llama_cpp.llama_model_default_params
def params():
    p = default(); p.use_extra_bufts = False; return p
llama_mod.llama_cpp.llama_model_default_params = params
t = time.perf_counter()
llm = llama_cpp.Llama(model_path=cfg["path"], n_ctx=1024, n_batch=512, n_threads=cfg["threads"],
                      n_threads_batch=cfg["threads"], verbose=False)
res = {"load_s": time.perf_counter() - t}
n = cfg["new_tokens"]
t, toks = [], []
for tok in llm.generate(cfg["prompt"], top_k=1, top_p=1.0, min_p=0.0, temp=0.0, repeat_penalty=1.0, reset=True):
    t.append(time.perf_counter()); toks.append(tok)
    if len(toks) >= n:
        break
res["decode_tok_s"] = (len(t) - 1) / (t[-1] - t[0])
res["tokens"] = toks
import random
for s in cfg["sizes"]:
    rng = random.Random(s)
    x = [rng.randrange(100, 40000) for _ in range(s)]
    llm.reset(); llm.eval(x)
    llm.reset()
    t0 = time.perf_counter(); llm.eval(x)
    res[f"prefill_{s}_tok_s"] = s / (time.perf_counter() - t0)
res["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(res))
"""


OPS_CODE = r"""
import json, statistics, sys, time
cfg = json.loads(sys.argv[1])
import numpy as np, torch
torch.set_num_threads(cfg["threads"])
sys.path.insert(0, cfg["tests"])
import gguf
import quant_k_model as qk
from torchnative import quant
BASE = {"q4_0": 2, "q4_1": 3, "q8_0": 8, "q4_k": 12, "q6_k": 14}
res = {}
for n, k in cfg["shapes"]:
    QT = dict(BASE)
    w = (np.random.default_rng(0).standard_normal((n, k)) * 0.05).astype(np.float32)
    blocks = {}
    for name, q in list(QT.items()):
        if q in qk.QUANTIZERS and k % 256:
            continue  # k-quant super-blocks of 256 do not fit this row
        if q in qk.QUANTIZERS:
            blocks[name] = torch.from_numpy(qk.QUANTIZERS[q](w))
        else:
            blocks[name] = torch.from_numpy(gguf.quants.quantize(w, gguf.GGMLQuantizationType(q)))
    for name in ("q4_0", "q4_1", "q8_0"):  # the layout from_gguf repacks into, where this host has it
        b, q = quant.repack(blocks[name], QT[name])
        if q != QT[name]:
            QT[name + "x8"], blocks[name + "x8"] = q, b
    wf = torch.from_numpy(w)
    # 8da4w at G = 64: the plain layout and, where this host prefers it, the interleaved one
    from torchnative import quantize_model as qm
    i4w, i4s = qm.quantize_int4_groups(wf, 64)
    i4x8 = quant._call("_tn_quant_i4_repack", i4w, i4s, 64) if quant.fast_layout(qm.I4) != qm.I4 else None
    for m in (1, 128):
        x = torch.randn(m, k)
        fns = {name: (lambda b=b, q=QT[name]: quant.quant_linear(x, b, q)) for name, b in blocks.items()}
        fns["8da4w"] = lambda: quant._call("_tn_quant_linear_8da4w", x, i4w, i4s, 64)
        if i4x8 is not None:
            fns["8da4wx8"] = lambda: quant._call("_tn_quant_linear_8da4w_x8", x, i4x8, 64)
        fns["float32"] = lambda: torch.nn.functional.linear(x, wf)
        reps = max(3, int(cfg["work"] / (m * n * k)))
        times = {name: [] for name in fns}
        with torch.inference_mode():
            for fn in fns.values():
                fn()
            for _ in range(cfg["rounds"]):
                for name, fn in fns.items():  # interleaved: the load hits every type alike
                    t = time.perf_counter()
                    for _ in range(reps):
                        fn()
                    times[name].append((time.perf_counter() - t) / reps * 1e6)
        res[f"{n}x{k} m={m}"] = times
print(json.dumps(res))
"""


SWEEP_CODE = r"""
import json, statistics, sys, time
cfg = json.loads(sys.argv[1])
import numpy as np, torch
sys.path.insert(0, cfg["tests"])
from test_quant import random_blocks
from torchnative import quant
# SmolLM2's 210 layer products (q, k, v, o, gate, up, down x 30) in Q4_1 and its Q8_0 head:
# 96.4 MB, three times the L3, read once per sweep as a decode step reads them
shapes = [(576, 576), (192, 576), (192, 576), (576, 576), (1536, 576), (1536, 576), (576, 1536)] * 30
mats = [(torch.from_numpy(random_blocks(3, n, k, seed=i)), 3, k) for i, (n, k) in enumerate(shapes)]
mats.append((torch.from_numpy(random_blocks(8, 49152, 576, seed=999)), 8, 576))
layouts = {"file": mats, "repacked": [(*quant.repack(b, q), k) for b, q, k in mats]}
nbytes = sum(b.nbytes for b, _, _ in mats)
xs = {576: torch.randn(1, 576), 1536: torch.randn(1, 1536)}
res = {"bytes": nbytes}
for th in (1, 2):
    torch.set_num_threads(th)
    times = {name: [] for name in layouts}
    for _ in range(cfg["rounds"]):
        for name, ms in layouts.items():  # interleaved
            t = time.perf_counter()
            for b, q, k in ms:
                quant.quant_linear(xs[k], b, q)
            times[name].append(time.perf_counter() - t)
    res[f"threads{th}"] = {name: {"ms": statistics.median(ts) * 1e3, "gb_s": nbytes / statistics.median(ts) / 1e9}
                           for name, ts in times.items()}
print(json.dumps(res))
"""


BREAKDOWN_CODE = r"""
import collections, json, sys, time
cfg = json.loads(sys.argv[1])
import torch
torch.set_num_threads(cfg["threads"])
import transformers.models.llama.modeling_llama  # the model class, imported by any loader
from torchnative.quant import from_gguf
import torchnative.graphs as G
model = from_gguf(cfg["path"])
ids = torch.tensor([cfg["prompt"]])
w = G.accelerate_decode(model)
reps, calls = [], []
orig_replay, orig_call = G.Graph.replay, G.DecodeGraphs.__call__
def replay(self, profile=False):
    t0 = time.perf_counter()
    orig_replay(self, profile=True)
    reps.append(time.perf_counter() - t0)
def call(self, *a, **kw):
    calls.append(time.perf_counter())
    return orig_call(self, *a, **kw)
G.Graph.replay, G.DecodeGraphs.__call__ = replay, call
gen = dict(attention_mask=torch.ones_like(ids), max_new_tokens=cfg["new_tokens"], min_new_tokens=cfg["new_tokens"],
           do_sample=False, cache_implementation="static")
with torch.inference_mode():
    model.generate(ids, **gen)  # warm-up (and capture)
    reps.clear(), calls.clear()
    g0 = w.entry.graph  # its counters accumulate: the warm-up's part, unless generate captures anew
    before = [ns for _, _, ns in g0.steps()]
    model.generate(ids, **gen)
if w.entry.graph is not g0:
    before = [0.0] * len(w.entry.graph.steps())
steps = collections.defaultdict(lambda: [0, 0.0])
for (name, kind, ns), ns0 in zip(w.entry.graph.steps(), before):
    steps[name][0] += 1
    steps[name][1] += (ns - ns0) / 1e3 / len(reps)
per_step = dict(steps)
step_ms = (calls[-1] - calls[1]) / (len(calls) - 2) * 1e3
print(json.dumps({"replays": len(reps), "step_ms": step_ms, "replay_ms": sum(reps) / len(reps) * 1e3, "ops": per_step}))
"""


CHAINS_CODE = r"""
import json, os, statistics, sys, time
cfg = json.loads(sys.argv[1])
import torch
torch.set_num_threads(cfg["threads"])
import transformers.models.llama.modeling_llama
from torchnative.quant import from_gguf
import torchnative.graphs as G
model = from_gguf(cfg["path"])
ids = torch.tensor([cfg["prompt"]])
gen = dict(attention_mask=torch.ones_like(ids), max_new_tokens=cfg["new_tokens"], min_new_tokens=cfg["new_tokens"],
           do_sample=False, cache_implementation="static")
calls, reps, res, rep = [], [], {"0": [], "1": []}, {"0": [], "1": []}
orig, orig_replay = G.DecodeGraphs.__call__, G.Graph.replay
def call(self, *a, **kw):
    calls.append(time.perf_counter())
    return orig(self, *a, **kw)
def replay(self, profile=False):
    t0 = time.perf_counter()
    orig_replay(self, profile)
    reps.append(time.perf_counter() - t0)
G.DecodeGraphs.__call__, G.Graph.replay = call, replay
for r in range(cfg["rounds"]):
    for c in ("0", "1") if r % 2 == 0 else ("1", "0"):
        os.environ["TN_GRAPH_CHAINS"] = c  # read when a new graph is planned
        G.remove_decode_graphs(model)
        w = G.accelerate_decode(model)
        with torch.inference_mode():
            model.generate(ids, **gen)  # warm-up and capture
            calls.clear(), reps.clear()
            model.generate(ids, **gen)
        assert (w.stats()["steps"]["chained"] > 0) == (c == "1"), w.stats()
        res[c].append((calls[-1] - calls[3]) / (len(calls) - 4) * 1e3)  # replayed steps only
        rep[c].append(statistics.median(reps) * 1e3)
        if c == "1":
            chained = w.stats()["steps"]["chained"]
print(json.dumps({"off": res["0"], "on": res["1"], "replay_off": rep["0"], "replay_on": rep["1"], "chained": chained}))
"""


GENPY_CODE = r"""
import json, os, statistics, sys, time
cfg = json.loads(sys.argv[1])
import torch
torch.set_num_threads(cfg["threads"])
import transformers
from transformers import LlamaConfig, LlamaForCausalLM, GenerationConfig
torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(**cfg["config"])).eval()  # random weights: only the Python around forward is timed
model.generation_config = GenerationConfig(**cfg["generation"])
if cfg["graphs"]:
    from torchnative.graphs import accelerate_decode
    accelerate_decode(model)
inner = model.forward
spans = []
def timed(*a, **kw):
    t0 = time.perf_counter()
    out = inner(*a, **kw)
    spans.append((t0, time.perf_counter()))
    return out
model.forward = timed
ids = torch.tensor([cfg["prompt"]])
gen = dict(attention_mask=torch.ones_like(ids), max_new_tokens=cfg["new_tokens"], min_new_tokens=cfg["new_tokens"],
           do_sample=False, cache_implementation="static")
res = {"outside_ms": [], "forward_ms": []}
with torch.inference_mode():
    for r in range(cfg["rounds"] + 1):
        spans.clear()
        model.generate(ids, **gen)
        if r:
            s = spans[3:]  # decode steps after the prefill, the first decode step and (ours) the capture
            res["outside_ms"].append(statistics.median(b[0] - a[1] for a, b in zip(s, s[1:])) * 1e3)
            res["forward_ms"].append(statistics.median(b - a for a, b in s) * 1e3)
print(json.dumps(res))
"""


def genpy(a, cfg):
    """--python: generate()'s own Python per decode step, outside the model's forward, on both
    interpreters: the same transformers code over SmolLM2-135M's architecture (random float32
    weights; static cache, greedy), forward wrapped by a timer; per step the gap between one
    forward's return and the next forward's call. Ours also with operator graphs (forward is
    then the graph wrapper and its replay)."""
    conf = run(OURS, "import json, os, sys\nimport transformers.models.llama.modeling_llama\n"
               "from torchnative.quant import from_gguf\nm = from_gguf(json.loads(sys.argv[1])['path'])\n"
               "c = m.config.to_diff_dict(); c.pop('transformers_version', None); c.pop('_model_name_or_path', None)\n"
               "g = m.generation_config.to_diff_dict(); g.pop('transformers_version', None)\n"
               "print(json.dumps({'config': c, 'generation': g}))", cfg, a.threads)
    c = dict(cfg, rounds=max(a.rounds, 3), **conf)
    sides = {"upstream": (REF, False), "ours eager": (OURS, False), "ours graphs": (OURS, True)}
    res = {k: {"outside_ms": [], "forward_ms": []} for k in sides}
    for rnd in range(2):  # the sides alternate, twice
        for name, (py, graphs) in sides.items():
            r = run(py, GENPY_CODE, dict(c, graphs=graphs), a.threads)
            for k in r:
                res[name][k] += r[k]
    print("| side | generate's Python per step, ms (median of rounds; min-max) | forward per step, ms |\n|---|---|---|")
    for name, r in res.items():
        o = r["outside_ms"]
        print(f"| {name} | {statistics.median(o):.3f} ({min(o):.3f}-{max(o):.3f}) | {statistics.median(r['forward_ms']):.3f} |")
    up, ours = statistics.median(res["upstream"]["outside_ms"]), statistics.median(res["ours graphs"]["outside_ms"])
    print(f"ours (graphs) / upstream, outside forward: {ours / up:.3f}")


def chains(a, cfg):
    """--chains: kept-quantised decode with operator graphs, the chains (RMSNorm, rotary
    embedding run as one step each) off and on alternately in one process, `--rounds`
    pairs, ms per replayed step (generate's Python included)."""
    res = run(OURS, CHAINS_CODE, dict(cfg, rounds=max(a.rounds, 3) * 2), a.threads)
    off, on = statistics.median(res["off"]), statistics.median(res["on"])
    print(f"{len(res['on'])} pairs, {res['chained']} of a step's steps in chains")
    print(f"ms per replayed decode step: chains off {off:.3f} (" + ", ".join(f"{x:.2f}" for x in res["off"]) + ")")
    print(f"                              chains on  {on:.3f} (" + ", ".join(f"{x:.2f}" for x in res["on"]) + ")")
    ratios = [b / x for x, b in zip(res["off"], res["on"])]
    print(f"on / off: {on / off:.3f} of the medians; per pair {statistics.median(ratios):.3f} median "
          f"({min(ratios):.3f}-{max(ratios):.3f})")
    roff, ron = statistics.median(res["replay_off"]), statistics.median(res["replay_on"])
    rr = [b / x for x, b in zip(res["replay_off"], res["replay_on"])]
    print(f"the replay alone (median of a generation's replays), ms: off {roff:.3f}, on {ron:.3f}; "
          f"per pair {statistics.median(rr):.3f} median ({min(rr):.3f}-{max(rr):.3f})")


def breakdown(a, cfg):
    """--breakdown: one kept-quantised generation with operator graphs, each replayed decode
    step split by operator (Graph.replay(profile=True)); the step's time outside the replay
    is generate()'s Python (logits processing, stopping criteria, cache positions)."""
    res = run(OURS, BREAKDOWN_CODE, cfg, a.threads)
    ops_ = sorted(res["ops"].items(), key=lambda kv: -kv[1][1])
    print(f"{res['replays']} replayed steps: {res['step_ms']:.2f} ms a step, of it {res['replay_ms']:.2f} ms replay")
    print("| operator | calls a step | us a step |\n|---|---:|---:|")
    for name, (n, us) in ops_:
        if us >= 1:
            print(f"| {name} | {n} | {us:.1f} |")


def sweep(a):
    """--sweep: the model's products read cold, in the file's layout and the repacked one."""
    cfg = {"rounds": max(a.rounds, 3) * 3, "tests": os.path.join(ROOT, "tests")}
    res = run(OURS, SWEEP_CODE, cfg, a.threads)
    bw = bandwidth_beside(None, argparse.Namespace(out=os.path.dirname(a.out)))
    print(f"{res['bytes'] / 1e6:.1f} MB of weights per sweep; read bandwidth beside: {bw} GB/s")
    for th in (1, 2):
        for name, r in res[f"threads{th}"].items():
            print(f"threads {th}, {name:>8} layout: {r['ms']:.2f} ms per sweep, {r['gb_s']:.1f} GB/s (median of {cfg['rounds']})")


def run(python, code, cfg, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error",
               TQDM_DISABLE="1", TOKENIZERS_PARALLELISM="false")
    r = subprocess.run([python, "-c", code, json.dumps(cfg)], capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode != 0:
        raise SystemExit(f"bench/quant.py: {os.path.basename(os.path.dirname(os.path.dirname(python)))} run failed:\n"
                         f"{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--sizes", default="128,512")
    ap.add_argument("--no-float", action="store_true", help="skip the float32-dequantised run")
    ap.add_argument("--quantize", default="", help="comma-separated torchnative.quantize methods to run "
                    "(8da4w:G[:head], int8[::head])")
    ap.add_argument("--no-llama", action="store_true", help="skip llama.cpp")
    ap.add_argument("--kquant", action="store_true", help="also the k-quant copy of the model (ours-k, llama.cpp-k)")
    ap.add_argument("--ops", action="store_true", help="time the products alone (every block type vs float32) and exit")
    ap.add_argument("--sweep", action="store_true", help="time SmolLM2's 211 products read cold, the file's layout "
                    "against the repacked one, and exit")
    ap.add_argument("--chains", action="store_true", help="replayed decode steps with the graph chains off and on, "
                    "alternately in one process")
    ap.add_argument("--breakdown", action="store_true", help="split a replayed decode step of the kept-quantised "
                    "model by operator, and exit")
    ap.add_argument("--python", action="store_true", help="generate()'s own Python per decode step outside "
                    "the model's forward, upstream against ours (eager and with graphs), and exit")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "quant.json"))
    a = ap.parse_args()
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    bw_args = argparse.Namespace(out=os.path.dirname(a.out))  # where bench/machine.c is compiled
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from torchnative.cli import bundled_model  # noqa: E402  (needs no torch)
    d, f = bundled_model()
    cfg = {"threads": a.threads, "new_tokens": a.new_tokens, "sizes": [int(s) for s in a.sizes.split(",")],
           "prompt": PROMPT, "path": os.path.join(d, f), "root": ROOT, "float": False}
    if a.ops:
        return ops(a)
    if a.sweep:
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        return sweep(a)
    if a.breakdown:
        return breakdown(a, cfg)
    if a.chains:
        return chains(a, cfg)
    if a.python:
        return genpy(a, cfg)
    have_llama = not a.no_llama and subprocess.run([REF, "-c", "import llama_cpp"], capture_output=True).returncode == 0
    methods = [m for m in a.quantize.split(",") if m]
    runs = {"ours": [], "llama.cpp": [], "float32": [], **{m: [] for m in methods}}
    kcfg = None
    if a.kquant:
        sys.path.insert(0, os.path.join(ROOT, "tests"))
        kpath = os.path.join(ROOT, "build", "models", "SmolLM2-135M-Instruct.ffn_down-Q4_K_M.gguf")
        os.makedirs(os.path.dirname(kpath), exist_ok=True)
        subprocess.run([OURS, os.path.join(ROOT, "tests", "quant_k_model.py"), kpath], check=True, capture_output=True)
        kcfg = dict(cfg, path=kpath)
        runs.update({"ours-k": [], "llama.cpp-k": []})
    for i in range(a.rounds + 1):
        print(f"round {i}{' (warm-up)' if i == 0 else ''} ...", file=sys.stderr, flush=True)
        for suffix, c in (("", cfg), ("-k", kcfg)):
            if c is None:
                continue
            r = run(OURS, OURS_CODE, c, a.threads)
            bw = bandwidth_beside(None, bw_args)  # bench/run.py's probe: this VM's bandwidth moves within a run
            if bw and "decode_graphs_tok_s" in r:
                r["read_gb_s_beside"] = bw
                r["roofline_pct_graphs"] = 100 * r["weight_bytes_per_token"] * r["decode_graphs_tok_s"] / (bw * 1e9)
                r["roofline_pct_eager"] = 100 * r["weight_bytes_per_token"] * r["decode_eager_tok_s"] / (bw * 1e9)
            if i:
                runs["ours" + suffix].append(r)
            if have_llama:
                r = run(REF, LLAMA_CODE, c, a.threads)
                if i:
                    runs["llama.cpp" + suffix].append(r)
        if i or not a.rounds:
            if not a.no_float:
                runs["float32"].append(run(OURS, OURS_CODE, dict(cfg, float=True), a.threads))
            for m in methods:
                runs[m].append(run(OURS, OURS_CODE, dict(cfg, float=True, quantize=m), a.threads))
    med = {side: {k: statistics.median(r[k] for r in rs) for k in rs[0] if isinstance(rs[0][k], (int, float))
                  and not isinstance(rs[0][k], bool)} for side, rs in runs.items() if rs}
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as fh:
        json.dump({"config": {k: v for k, v in cfg.items() if k != "prompt"}, "runs": runs, "median": med}, fh, indent=1)
    keys = ["load_s", "decode_graphs_tok_s", "decode_eager_tok_s", "decode_tok_s", "weight_bytes_per_token",
            "read_gb_s_beside", "roofline_pct_graphs", "roofline_pct_eager"] + \
           [f"prefill_{s}_tok_s" for s in cfg["sizes"]] + ["peak_rss_mib", "permute_at_load_ms", "row_map_per_token_us"]
    print(f"| {'metric':<22} | " + " | ".join(f"{s:>10}" for s in med) + " |")
    print("|" + "-" * 24 + "|" + "|".join("-" * 12 for _ in med) + "|")
    for k in keys:
        if any(k in m for m in med.values()):
            print(f"| {k:<22} | " + " | ".join(f"{m[k]:>10.2f}" if k in m else f"{'':>10}" for m in med.values()) + " |")
    if runs["llama.cpp"] and runs["ours"]:
        same = sum(x == y for x, y in zip(runs["ours"][0]["tokens"], runs["llama.cpp"][0]["tokens"]))
        print(f"greedy tokens equal to llama.cpp's (default settings) at {same} of {a.new_tokens} positions")
    print(f"written {a.out}")


def ops(a):
    """--ops: the products alone; ratios per round (each round runs every type once)."""
    cfg = {"threads": a.threads, "rounds": max(a.rounds, 3) * 3, "tests": os.path.join(ROOT, "tests"),
           "shapes": [[576, 1536], [1536, 576], [49152, 576], [2048, 2048]], "work": 2e9}
    res = run(OURS, OPS_CODE, cfg, a.threads)
    print(f"| {'shape':<18} | {'type':<7} | {'us (median)':>11} | {'float32 / type':>22} | {'q4_1 / type':>22} |")
    print("|" + "-" * 20 + "|" + "-" * 9 + "|" + "-" * 13 + "|" + "-" * 24 + "|" + "-" * 24 + "|")
    for shape, times in res.items():
        for name, ts in times.items():
            def ratios(base):
                r = sorted(b / t for b, t in zip(times[base], ts))
                return f"{r[0]:.2f} / {statistics.median(r):.2f} / {r[-1]:.2f}"
            print(f"| {shape:<18} | {name:<7} | {statistics.median(ts):>11.1f} | {ratios('float32'):>22} | "
                  f"{ratios('q4_1'):>22} |")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    out = a.out.replace(".json", "_ops.json")
    with open(out, "w") as fh:
        json.dump({"config": cfg, "us": res}, fh, indent=1)
    print(f"ratios min / median / max over {cfg['rounds']} interleaved rounds; written {out}")


if __name__ == "__main__":
    main()
