"""Collective and DDP benchmarks, torchnative (.venv) against upstream torch 2.13.0 with its
gloo (.venv-ref), side by side as ../shared/BENCHMARKS.md prescribes: every measurement is
one launch of W fresh processes of one side on 127.0.0.1, launches alternate upstream /
torchnative, pair 0 is a warm-up whose results are validated, then --pairs counted pairs;
each figure is the median per side and the median / min / max of the per-pair ratios.

    .venv/bin/python bench/dist.py [--pairs 3] [--only allreduce,latency,broadcast,ddp] [--tcp]

--tcp adds a third side in every round: torchnative with TN_DIST_SHM=0 (the TCP path even
where the ranks share a host), reported as extra rows against the same upstream runs.

Sections (issue 17's speed targets):
  allreduce  float32 all_reduce of 4 KB, 1 MB and 64 MB at world sizes 2 and 4: time per
             call and bus bandwidth = bytes x 2(W-1)/W / time (nccl-tests' definition);
             target: ours >= 1.0x upstream's bus bandwidth
  latency    4-byte all_reduce at world sizes 2 and 4; target: ours <= upstream's time
  broadcast  538 MB of float32 (SmolLM2-135M's state) from rank 0 to 3 ranks (world 4);
             target: ours <= upstream's time
  ddp        one DDP training step (forward + backward with bucket all-reduce +
             SGD step) at world 2: the digits MLP (batch 64 per rank) and a wide MLP
             (64-1024-1024-1024-10, 2.2 M parameters, 8.5 MB of gradients) with DDP's
             default buckets (one bucket in the first iteration, then rebuilt in
             gradient-ready order: 1 MB first, then 25 MB) and with 1 MB buckets
             (several all-reduces overlapping backward)
Times are per call on rank 0 after a barrier, the slowest rank's (all_reduce MAX of the
elapsed time). Validation: every all_reduce result must equal W (inputs of ones), the
broadcast must deliver rank 0's bytes, DDP's parameters must agree between sides
(sum of squares of every parameter after the steps, relative 1e-5). Writes bench/results/dist.md and dist.json; progress to stderr."""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIDES = {"upstream": os.path.join(ROOT, ".venv-ref", "bin", "python"),
         "torchnative": os.path.join(ROOT, ".venv", "bin", "python"),
         "torchnative-tcp": os.path.join(ROOT, ".venv", "bin", "python")}
SIDE_ENV = {"torchnative-tcp": {"TN_DIST_SHM": "0"}}
ORDER = ["upstream", "torchnative"]
MARK = "DIST-RESULT "
SECTIONS = ["allreduce", "latency", "broadcast", "ddp"]
T0 = time.time()

WORKER = r'''
import datetime, json, os, sys, time
import torch, torch.distributed as dist
torch.set_num_threads(1)
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=300))
cfg = json.loads(sys.argv[1])
out = {}

def timed(fn, iters):
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    dt = torch.tensor([(time.perf_counter() - t0) / iters])
    dist.all_reduce(dt, op=dist.ReduceOp.MAX)
    return float(dt)

if cfg["sec"] in ("allreduce", "latency"):
    for nbytes, iters in cfg["sizes"]:
        t = torch.ones(nbytes // 4)
        dist.all_reduce(t)                      # warm-up, and validation
        ok = bool((t == world).all())
        t.fill_(1.0)
        dt = timed(lambda: dist.all_reduce(t), iters)
        out[str(nbytes)] = {"s": dt, "ok": ok}
elif cfg["sec"] == "broadcast":
    n = cfg["bytes"] // 4
    # receivers hold a resident buffer, as a model's existing state is: torch.zeros of a
    # fresh mapping costs nothing on our side and leaves every page to be faulted inside
    # the timed broadcast, while upstream's zeros writes (faults) them before the timer
    t = torch.arange(n, dtype=torch.float32) if rank == 0 else torch.full((n,), -1.0)
    dist.barrier()
    t0 = time.perf_counter()
    dist.broadcast(t, 0)
    dt = torch.tensor([time.perf_counter() - t0])
    dist.all_reduce(dt, op=dist.ReduceOp.MAX)
    ok = bool(t[-1] == n - 1) and bool(t[12345] == 12345)
    out["broadcast"] = {"s": float(dt), "ok": ok}
elif cfg["sec"] == "ddp":
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(0)
    for name, dims, batch, cap in cfg["models"]:
        layers = []
        for a, b in zip(dims[:-1], dims[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        model = DDP(torch.nn.Sequential(*layers[:-1]), **({} if cap is None else {"bucket_cap_mb": cap}))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        g = torch.Generator().manual_seed(rank)
        x = torch.randn(batch, dims[0], generator=g)
        y = torch.randint(0, dims[-1], (batch,), generator=g)
        def step():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        for _ in range(3):
            step()
        dt = timed(step, cfg["iters"])
        check = sum(float((p.double() ** 2).sum()) for p in model.parameters())
        out[name] = {"s": dt, "ok": True, "check": check}
if rank == 0:
    print("DIST-RESULT " + json.dumps(out), flush=True)
dist.destroy_process_group()
'''


def log(msg):
    el = time.time() - T0
    print(f"[{int(el // 60):02d}:{int(el % 60):02d}] {msg}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(side, world, cfg, timeout):
    """One measurement: `world` processes of `side`; rank 0's result dict, or None."""
    port = free_port()
    procs = []
    try:
        for r in range(world):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r), WORLD_SIZE=str(world),
                       OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
            env.update(SIDE_ENV.get(side, {}))
            procs.append(subprocess.Popen([SIDES[side], "-c", WORKER, json.dumps(cfg)], env=env, cwd=ROOT,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          start_new_session=True))
        deadline = time.monotonic() + timeout
        outs = []
        for p in procs:
            o, e = p.communicate(timeout=max(1, deadline - time.monotonic()))
            outs.append((p.returncode, o, e))
        rc, o, e = outs[0]
        line = next((ln for ln in o.splitlines() if ln.startswith(MARK)), None)
        if any(x[0] != 0 for x in outs) or line is None:
            log(f"  {side} W={world} failed: {[x[2][-400:] for x in outs if x[0] != 0][:1]}")
            return None
        return json.loads(line[len(MARK):])
    except subprocess.TimeoutExpired:
        log(f"  {side} W={world}: timeout")
        return None
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, 9)
                except ProcessLookupError:
                    pass
                p.wait()


def stats(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def measure(world, cfg, pairs, timeout, what):
    """Warm-up pair (validated) + counted pairs, alternating upstream / torchnative.
    Returns {"runs": {side: [result ...]}, "valid": bool, "why": str}."""
    runs = {side: [] for side in ORDER}
    valid, why = True, ""
    for i in range(pairs + 1):
        for side in ORDER:
            log(f"{what} W={world} {side} {'warm-up' if i == 0 else f'pair {i}'}")
            r = launch(side, world, cfg, timeout)
            if i == 0:
                if r is None or not all(v.get("ok") for v in r.values()):
                    valid, why = False, f"{side}: failed or wrong result in the warm-up"
            else:
                runs[side].append(r)
    return {"runs": runs, "valid": valid, "why": why}


def figure(m, key, busbw_bytes=None, world=None, side="torchnative"):
    """Median times per side and per-pair ratios for one key of the results."""
    up = [r[key]["s"] if r else None for r in m["runs"]["upstream"]]
    tn = [r[key]["s"] if r else None for r in m["runs"][side]]
    ratio = stats([b / a for a, b in zip(up, tn) if a and b])  # time ours / upstream
    f = {"upstream_s": stats(up), "torchnative_s": stats(tn), "time_ratio": ratio, "valid": m["valid"]}
    if busbw_bytes and world:
        k = busbw_bytes * 2 * (world - 1) / world
        f["upstream_busbw_GBs"] = k / f["upstream_s"]["median"] / 1e9 if f["upstream_s"] else None
        f["torchnative_busbw_GBs"] = k / f["torchnative_s"]["median"] / 1e9 if f["torchnative_s"] else None
        f["busbw_ratio"] = stats([a / b for a, b in zip(up, tn) if a and b])  # ours / upstream bandwidth
    return f


def fmt_t(s):
    if s is None:
        return "—"
    return f"{s * 1e6:.0f} µs" if s < 1e-3 else (f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s")


def rng(st, spec=".2f"):
    return "—" if not st else f"{st['median']:{spec}} ({st['min']:{spec}}–{st['max']:{spec}})"


TAG = {"torchnative": "", "torchnative-tcp": " [TN_DIST_SHM=0]"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--tcp", action="store_true", help="also run torchnative with TN_DIST_SHM=0")
    a = ap.parse_args()
    if a.tcp:
        ORDER.append("torchnative-tcp")
    only = [s for s in a.only.split(",") if s]
    res = {"pairs": a.pairs, "load_before": os.getloadavg(), "figures": {}}
    F = res["figures"]
    for world in (2, 4):
        if "allreduce" in only:
            sizes = [[4096, 300], [1 << 20, 30], [64 << 20, 3]]
            m = measure(world, {"sec": "allreduce", "sizes": sizes}, a.pairs, a.timeout, "all_reduce")
            for nbytes, _ in sizes:
                for side in ORDER[1:]:
                    F[f"all_reduce {nbytes} B, W={world}{TAG[side]}"] = figure(m, str(nbytes), nbytes, world, side)
        if "latency" in only:
            m = measure(world, {"sec": "latency", "sizes": [[4, 1000]]}, a.pairs, a.timeout, "latency")
            for side in ORDER[1:]:
                F[f"all_reduce 4 B, W={world}{TAG[side]}"] = figure(m, "4", side=side)
    if "broadcast" in only:
        m = measure(4, {"sec": "broadcast", "bytes": 538 * 1000 * 1000}, a.pairs, a.timeout, "broadcast")
        for side in ORDER[1:]:
            F[f"broadcast 538 MB, root + 3 ranks{TAG[side]}"] = figure(m, "broadcast", side=side)
    if "ddp" in only:
        models = [["digits MLP", [64, 64, 32, 10], 64, None],
                  ["wide MLP, default buckets", [64, 1024, 1024, 1024, 10], 64, None],
                  ["wide MLP, 1 MB buckets", [64, 1024, 1024, 1024, 10], 64, 1]]
        m = measure(2, {"sec": "ddp", "models": models, "iters": 30}, a.pairs, a.timeout, "ddp step")
        up0 = next((r for r in m["runs"]["upstream"] if r), None)
        tn0 = next((r for r in m["runs"]["torchnative"] if r), None)
        for name, *_ in models:
            f = figure(m, name)
            if up0 and tn0:
                f["check_diff"] = abs(up0[name]["check"] - tn0[name]["check"])
                f["valid"] = f["valid"] and f["check_diff"] < 1e-5 * max(1.0, abs(up0[name]["check"]))
            F[f"DDP step, {name}, W=2"] = f
    res["load_after"] = os.getloadavg()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "dist.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    lines = ["| measurement | upstream gloo | torchnative | time ours/upstream, median (min–max) | "
             "bus bandwidth (GB/s) up / ours | bus bandwidth ours/upstream, median (min–max) |",
             "|---|---|---|---|---|---|"]
    for k, f in F.items():
        bw = "—"
        if f.get("upstream_busbw_GBs") and f.get("torchnative_busbw_GBs"):
            bw = f"{f['upstream_busbw_GBs']:.3f} / {f['torchnative_busbw_GBs']:.3f}"
        up, tn = f["upstream_s"], f["torchnative_s"]
        flag = "" if f["valid"] else " **INVALID**"
        lines.append(f"| {k}{flag} | {fmt_t(up and up['median'])} | {fmt_t(tn and tn['median'])} | "
                     f"{rng(f['time_ratio'])} | {bw} | {rng(f.get('busbw_ratio'))} |")
    lines.append("")
    lines.append(f"{a.pairs} counted pairs after a validated warm-up pair; load average before / after: "
                 f"{res['load_before'][0]:.1f} / {res['load_after'][0]:.1f} on {os.cpu_count()} CPUs.")
    md = "\n".join(lines)
    with open(os.path.join(a.out, "dist.md"), "w") as fh:
        fh.write(md + "\n")
    print(md)


if __name__ == "__main__":
    main()
