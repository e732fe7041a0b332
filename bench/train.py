"""Training benchmarks, torchnative (.venv) against upstream torch 2.13.0 (.venv-ref), side
by side as ../shared/BENCHMARKS.md prescribes: every measurement in a fresh process of the
side's own python, runs alternating upstream / torchnative, pair 0 a warm-up whose losses
are validated against each other, then --pairs counted pairs; the figure is the median
per side and the median / min / max of the per-pair ratios (upstream time / ours).

    .venv/bin/python bench/train.py [--pairs 5] [--threads 2] [--only mlp,cnn,lora,linear]

Sections:
  mlp, cnn  digits MLP / CNN of tests/training_run.py, batch 64, Adam: ms per step
            (forward + backward + optimizer step)
  lora      peft LoRA (q_proj, v_proj, r 8) on SmolLM2-135M-Instruct, sequence 128, batch 4,
            AdamW: s per step, and peak RSS of the whole run
  linear    backward of F.linear at 128x576 -> 1536 against the time of its two GEMMs
            (g @ W and g^T @ x) on the same side: the ratio is backward / two GEMMs
Writes bench/results/train.md and train.json."""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIDES = {"upstream": os.path.join(ROOT, ".venv-ref", "bin", "python"),
         "torchnative": os.path.join(ROOT, ".venv", "bin", "python")}
MARK = "TRAIN-RESULT "

WORKER = r'''
import json, os, resource, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "tests"))
import torch
torch.set_num_threads(int(sys.argv[3]))
sec = sys.argv[2]
out = {}
if sec in ("mlp", "cnn"):
    import training_run as tr
    torch.manual_seed(0)
    xtr, ytr, _, _ = tr.data()
    m = tr.mlp() if sec == "mlp" else tr.CNN()
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    x, y = xtr[:64], ytr[:64]
    losses = []
    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    for _ in range(10):
        losses.append(step())
    n = 300 if sec == "mlp" else 60
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    out = {"ms": (time.perf_counter() - t0) / n * 1e3, "check": losses}
elif sec == "lora":
    import subprocess
    r = subprocess.run([sys.executable, os.path.join(sys.argv[1], "tests", "lora_run.py"), "7", "128", "4", "--time"],
                       capture_output=True, text=True, check=True)
    d = json.loads(r.stdout.strip().splitlines()[-1])
    st = sorted(d["step_seconds"][2:])
    out = {"s": st[len(st) // 2], "check": d["losses"][:3],
           "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
elif sec == "linear":
    torch.manual_seed(0)
    x = torch.randn(128, 576, requires_grad=True)
    w = torch.randn(1536, 576, requires_grad=True)
    g = torch.randn(128, 1536)
    def bwd():
        x.grad = w.grad = None  # as a training step after zero_grad(): no accumulation
        y = torch.nn.functional.linear(x, w)
        t0 = time.perf_counter()
        y.backward(g)
        return time.perf_counter() - t0
    def gemms():
        t0 = time.perf_counter()
        a = g @ w
        b = g.t() @ x.detach()
        return time.perf_counter() - t0
    for _ in range(20):
        bwd(); gemms()
    tb = sorted(bwd() for _ in range(200))[100]
    tg = sorted(gemms() for _ in range(200))[100]
    x.grad = None
    torch.nn.functional.linear(x, w).backward(g)
    out = {"bwd_ms": tb * 1e3, "gemm_ms": tg * 1e3, "ratio": tb / tg, "check": [float(x.grad.double().sum())]}
print("TRAIN-RESULT " + json.dumps(out))
'''


def run(side, sec, threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    r = subprocess.run([SIDES[side], "-c", WORKER, ROOT, sec, str(threads)], capture_output=True, text=True,
                       timeout=3600, env=env, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(f"{side} {sec} failed:\n{r.stderr[-3000:]}")
    line = [ln for ln in r.stdout.splitlines() if ln.startswith(MARK)][-1]
    return json.loads(line[len(MARK):])


def validate(sec, up, ours):
    for a, b in zip(ours["check"], up["check"]):
        if abs(a - b) > 1e-3 * max(1.0, abs(b)):
            raise RuntimeError(f"{sec}: torchnative {ours['check']} disagrees with upstream {up['check']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="mlp,cnn,linear,lora")
    a = ap.parse_args()
    key = {"mlp": "ms", "cnn": "ms", "lora": "s", "linear": "bwd_ms"}
    res = {}
    for sec in a.only.split(","):
        runs = {"upstream": [], "torchnative": []}
        for p in range(a.pairs + 1):
            up, ours = run("upstream", sec, a.threads), run("torchnative", sec, a.threads)
            if p == 0:
                validate(sec, up, ours)
                continue
            runs["upstream"].append(up)
            runs["torchnative"].append(ours)
            print(f"{sec} pair {p}: upstream {up[key[sec]]:.3f} torchnative {ours[key[sec]]:.3f}", file=sys.stderr)
        k = key[sec]
        ratios = [u[k] / o[k] for u, o in zip(runs["upstream"], runs["torchnative"])]
        res[sec] = {"upstream": statistics.median(r[k] for r in runs["upstream"]),
                    "torchnative": statistics.median(r[k] for r in runs["torchnative"]),
                    "speedup": statistics.median(ratios), "min": min(ratios), "max": max(ratios), "unit": k}
        if sec == "linear":
            res[sec]["bwd_over_gemms"] = {s: statistics.median(r["ratio"] for r in runs[s]) for s in runs}
        if sec == "lora":
            res[sec]["rss_mb"] = {s: statistics.median(r["rss_mb"] for r in runs[s]) for s in runs}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "train.json"), "w") as f:
        json.dump(res, f, indent=1)
    lines = ["| section | upstream | torchnative | speedup (median, min-max) | notes |", "|---|---|---|---|---|"]
    for sec, r in res.items():
        note = ""
        if sec == "linear":
            note = "backward / two GEMMs: " + ", ".join(f"{s} {v:.2f}" for s, v in r["bwd_over_gemms"].items())
        if sec == "lora":
            note = "peak RSS MB: " + ", ".join(f"{s} {v:.0f}" for s, v in r["rss_mb"].items())
        lines.append(f"| {sec} ({r['unit']}) | {r['upstream']:.3f} | {r['torchnative']:.3f} | "
                     f"{r['speedup']:.2f}x ({r['min']:.2f}-{r['max']:.2f}) | {note} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(HERE, "results", "train.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
