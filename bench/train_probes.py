"""bench/train_probes.py — the training measurements docs/PERFORMANCE.md quotes besides
bench/train.py, each on both sides (upstream in .venv-ref, torchnative in .venv):
  cpu1    CPU time of a digits CNN step (batch 64, Adam) at one thread (time.process_time)
  tent1   CPU time of a Tent step (bench/adapt.py's speed section: the adaptation CNN of
          tests/adapt_run.py on 8x8 digits-sized inputs, batch 64) at one thread; random
          weights and inputs, which the step's cost does not depend on
  lorastep  a LoRA step of tests/lora_run.py (SmolLM2-135M, r 8 q/v, sequence 128, batch 4,
          AdamW) at two threads: wall and CPU ms per step over 3 steps after 2 warm-up
          steps; with --perf, where the step's time goes
  faults  minor page faults of one Linear 128x576 -> 1536 backward into .grad
  rss     resident and peak memory after loading SmolLM2-135M-Instruct as float32
  loraphases  the LoRA step of lorastep split into forward, backward and optimizer (medians of
          5 steps after 3 warm-up steps, the previous output kept alive as lora_run.py keeps
          it) with the minor page faults per step; on torchnative also the last step's
          forward operators (time in the door, torch._C._tn_profile) and backward nodes
          (formula plus the operators it dispatches), the ten largest of each and their sum,
          and the rate of the forward's Linear products (their FLOPs over linear's door time)
  linshapes  GFLOP/s of a frozen Linear's forward and input gradient at the LoRA step's
          shapes (512 tokens; SmolLM2's q/k/gate/down projections and the 49,152-word head),
          2 threads, medians
  loramem where the LoRA run's memory goes: three steps of tests/lora_run.py's LoRA
          (sequence 128, batch 4) with the previous step's output kept alive during the
          next forward (as lora_run.py does) and with it deleted; per step the resident
          MB after forward and after backward+step, the peak (VmHWM) of each variant, and
          the bytes of the distinct storages autograd saved in a step
    .venv/bin/python bench/train_probes.py [--only cpu1,tent1,faults,rss,loramem,loraphases,linshapes]
    .venv/bin/python bench/train_probes.py --only cpu1,tent1,lorastep --perf 10   # perf profiles instead
"""
import argparse
import json
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIDES = {"upstream": os.path.join(ROOT, ".venv-ref", "bin", "python"),
         "torchnative": os.path.join(ROOT, ".venv", "bin", "python")}

WORKER = r'''
import json, os, resource, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "tests"))
import torch
torch.set_num_threads(1)
sec = sys.argv[2]


def lora_model():
    """tests/lora_run.py's LoRA (SmolLM2-135M, r 8 on q/v, AdamW) at two threads, and its
    batch of 4 x 128 tokens."""
    import lora_run as L
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    torch.set_num_threads(2)
    d, f = L.bundled.gguf()
    tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
    m = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
    m = get_peft_model(m, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], lora_dropout=0.0,
                                     bias="none", task_type="CAUSAL_LM"))
    m.train()
    ids = tok(L.PASSAGE, return_tensors="pt").input_ids[0]
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=1e-3)
    return m, opt, torch.stack([ids[b * 7:][:128] for b in range(4)])

if sec in ("cpu1", "tent1", "lorastep"):
    if sec == "lorastep":
        m, opt, x = lora_model()
        def step():
            m(input_ids=x, labels=x).loss.backward()
            opt.step()
            opt.zero_grad()
    elif sec == "cpu1":
        import training_run as tr
        torch.manual_seed(0)
        xtr, ytr, _, _ = tr.data()
        m = tr.CNN()
        opt = torch.optim.Adam(m.parameters(), lr=1e-3)
        x, y = xtr[:64], ytr[:64]
        def step():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(m(x), y).backward()
            opt.step()
    else:
        sys.path.insert(0, os.path.join(sys.argv[1], "python"))
        import adapt_run
        from torchnative import adapt
        torch.manual_seed(0)
        m = adapt_run.CNN()
        m.eval()
        x = torch.randn(64, 1, 8, 8)
        w = adapt.wrap(m, adapt.Tent(), guard=None).online()
        def step():
            w(x)
    for _ in range(2 if sec == "lorastep" else 20):
        step()
    if len(sys.argv) > 3:  # --perf: steps for that many seconds, the pid printed first
        print("LOOP", os.getpid(), flush=True)
        t_end = time.time() + float(sys.argv[3])
        while time.time() < t_end:
            step()
        sys.exit(0)
    n = 3 if sec == "lorastep" else 200
    t0, w0 = time.process_time(), time.perf_counter()
    for _ in range(n):
        step()
    out = {"step_cpu_ms": (time.process_time() - t0) / n * 1e3}
    if sec == "lorastep":  # two threads: the wall time is the figure
        out["step_wall_ms"] = (time.perf_counter() - w0) / n * 1e3
elif sec == "loraphases":
    m, opt, x = lora_model()
    prof = hasattr(torch._C, "_tn_profile")
    phases, o = [], None
    for i in range(8):  # as lora_run.py: the previous output stays alive during the next forward
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        if prof and i == 7:
            torch._C._tn_profile_reset()
            torch._C._tn_profile(True)
        t0 = time.perf_counter()
        o = m(input_ids=x, labels=x)
        t1 = time.perf_counter()
        o.loss.backward()
        t2 = time.perf_counter()
        opt.step()
        opt.zero_grad()
        t3 = time.perf_counter()
        if prof and i == 7:
            torch._C._tn_profile(False)
        phases.append([t1 - t0, t2 - t1, t3 - t2, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0])
    med = [sorted(p[k] for p in phases[3:])[2] for k in range(4)]
    out = {"forward_ms": med[0] * 1e3, "backward_ms": med[1] * 1e3, "optimizer_ms": med[2] * 1e3,
           "step_ms": (med[0] + med[1] + med[2]) * 1e3, "minor_faults": med[3]}
    if prof:  # the last step: forward operators (door time) and backward nodes
        snap = torch._C._tn_profile_snapshot()
        fwd = sorted(((k, v[0], v[1] * 1e3) for k, v in snap.items() if not k.startswith("backward:")), key=lambda r: -r[2])
        bwd = sorted(((k[9:], v[0], v[1] * 1e3) for k, v in snap.items() if k.startswith("backward:")), key=lambda r: -r[2])
        out["forward_ops"] = [[k, c, round(ms, 1)] for k, c, ms in fwd[:10]] + [["(sum)", 0, round(sum(r[2] for r in fwd), 1)]]
        # the forward's products: 2 * tokens * in * out over every Linear (LoRA's included)
        flops = sum(2 * x.numel() * mod.in_features * mod.out_features for mod in m.modules()
                    if isinstance(mod, torch.nn.Linear))
        lin = snap.get("linear", (0, 0.0))[1]
        out["forward_linear_gflops"] = round(flops / lin / 1e9, 1) if lin else None
        out["backward_nodes"] = [[k, c, round(ms, 1)] for k, c, ms in bwd[:10]] + [["(sum)", 0, round(sum(r[2] for r in bwd), 1)]]
elif sec == "linshapes":
    torch.set_num_threads(2)
    torch.manual_seed(0)
    out = {}
    for (k, n) in [(576, 576), (576, 192), (576, 1536), (1536, 576), (576, 49152)]:
        x = torch.randn(4, 128, k, requires_grad=True)
        w = torch.randn(n, k)
        g = torch.randn(4, 128, n)
        def fw():
            t0 = time.perf_counter()
            torch.nn.functional.linear(x, w)
            return time.perf_counter() - t0
        def bw():
            y = torch.nn.functional.linear(x, w)
            t0 = time.perf_counter()
            torch.autograd.grad(y, x, g)
            return time.perf_counter() - t0
        reps = max(5, int(3e9 / (512 * k * n)))
        for _ in range(3):
            fw(), bw()
        gf = 2 * 512 * k * n / 1e9
        out[f"{k}->{n}"] = {"forward_gflops": round(gf / sorted(fw() for _ in range(reps))[reps // 2], 1),
                            "input_grad_gflops": round(gf / sorted(bw() for _ in range(reps))[reps // 2], 1)}
elif sec == "faults":
    x = torch.randn(128, 576)
    w = torch.randn(1536, 576, requires_grad=True)
    g = torch.randn(128, 1536)
    def bwd():
        w.grad = None
        torch.nn.functional.linear(x, w).backward(g)
    for _ in range(10):
        bwd()
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(100):
        bwd()
    out = {"minor_faults_per_backward": (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 100}
elif sec == "loramem":
    import gc
    import lora_run as L
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    def status(key):
        return int(open("/proc/self/status").read().split(key + ":")[1].split()[0]) // 1024
    torch.set_num_threads(2)
    d, f = L.bundled.gguf()
    tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                                             lora_dropout=0.0, bias="none", task_type="CAUSAL_LM"))
    model.train()
    ids = tok(L.PASSAGE, return_tensors="pt").input_ids[0]
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    out = {}
    for variant in ("deleted", "kept"):
        gc.collect()
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # resets VmHWM to the current resident size
        rows, o, saved, saved_mb = [], None, {}, []
        def pack(t):
            st = t.untyped_storage()
            saved[(st.data_ptr(), st.nbytes())] = 1
            return t
        for step in range(3):
            x = torch.stack([ids[(step * 4 + b) * 7 % (len(ids) - 128):][:128] for b in range(4)])
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                o = model(input_ids=x, labels=x)
            r_fwd = status("VmRSS")
            o.loss.backward()
            opt.step()
            opt.zero_grad()
            rows.append([r_fwd, status("VmRSS")])
            saved_mb.append(round(sum(k[1] for k in saved) / 2**20))
            saved.clear()
            if variant == "deleted":
                o = None
        o = None
        out[variant] = {"rss_fwd_step_mb": rows, "peak_mb": status("VmHWM"), "saved_mb": saved_mb}
else:
    import gc
    import lora_run
    from transformers import AutoModelForCausalLM
    d, f = lora_run.bundled.gguf()
    AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
    gc.collect()
    out = {"resident_mb": int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6,
           "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3}
print("PROBE " + json.dumps(out))
'''


def perf_profile(sec, side, py, seconds):
    """Attaches `perf record -e cpu-clock -g` to a worker stepping `sec` after its warm-up
    (imports excluded), then prints the symbols above 1 % of the samples."""
    out = os.path.join(ROOT, "build", f"perf-{sec}-{side}.data")
    w = subprocess.Popen([py, "-c", WORKER, ROOT, sec, str(seconds + 2)], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                         env=dict(os.environ, OMP_NUM_THREADS="1"))
    line = w.stdout.readline()
    if not line.startswith("LOOP "):
        w.kill()
        raise RuntimeError(f"{side} {sec}: no LOOP line ({line!r})")
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-o", out, "-p", line.split()[1], "--", "sleep",
                    str(seconds)], check=True, capture_output=True, timeout=seconds + 60)
    w.wait(timeout=60)
    rep = subprocess.run(["perf", "report", "-i", out, "--no-children", "-g", "none", "--sort", "symbol", "--stdio"],
                         capture_output=True, text=True, check=True).stdout
    print(f"{sec} {side}: perf profile ({out})")
    for ln in rep.splitlines():
        f = ln.split()
        if f and f[0].endswith("%") and "] " in ln and float(f[0][:-1]) >= 1.0:
            sym = re.sub(r"(\s+-)+\s*$", "", ln.split("] ", 1)[1]).strip()
            print(f"    {f[0]:>7}  {sym[:110]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="cpu1,faults,rss")
    ap.add_argument("--perf", type=float, default=0,
                    help="cpu1/tent1/lorastep: instead of timing, profile that many seconds of steps with perf on each side")
    a = ap.parse_args()
    for sec in a.only.split(","):
        if a.perf:
            if sec not in ("cpu1", "tent1", "lorastep"):
                raise SystemExit(f"--perf profiles cpu1, tent1 and lorastep, not {sec}")
            for side, py in SIDES.items():
                perf_profile(sec, side, py, a.perf)
            continue
        for side, py in SIDES.items():
            r = subprocess.run([py, "-c", WORKER, ROOT, sec], capture_output=True, text=True, timeout=1800, cwd=ROOT,
                               env=dict(os.environ, OMP_NUM_THREADS="1"))
            if r.returncode != 0:
                raise RuntimeError(f"{side} {sec} failed:\n{r.stderr[-3000:]}")
            line = [ln for ln in r.stdout.splitlines() if ln.startswith("PROBE ")][-1]
            res = json.loads(line[6:])
            tables = {k: res.pop(k) for k in ("forward_ops", "backward_nodes") if k in res}
            print(sec, side, res)
            for k, rows in tables.items():
                print(f"    {k}: " + "; ".join(f"{n} {c}x {ms} ms" if c else f"{n} {ms} ms" for n, c, ms in rows))


if __name__ == "__main__":
    main()
