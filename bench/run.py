"""The benchmark suite: torchnative (.venv) against upstream torch 2.13.0 (.venv-ref), side by
side in one run, as ../shared/BENCHMARKS.md prescribes. Usage is in bench/README.md.

    .venv/bin/python bench/run.py [--pairs 5] [--quick] [--threads 2] [--only decode,prefill,...]

Every measurement runs in a fresh process of the side's own python (bench/worker.py); runs
alternate upstream, torchnative, upstream, torchnative ...; pair 0 is a warm-up whose outputs
are validated (a section whose float32 outputs disagree is not timed); then --pairs counted
pairs. Each figure is the median per side and the median/min/max of the per-pair ratios.
The machine (read bandwidth, FMA peak) is measured in the same run by bench/machine.c.
Writes bench/results/latest.md and bench/results/latest.json; progress goes to stderr.

This script itself imports neither torch nor transformers (only numpy, to compare logits)."""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIDES = {"upstream": os.path.join(ROOT, ".venv-ref", "bin", "python"),
         "torchnative": os.path.join(ROOT, ".venv", "bin", "python")}
SECTIONS = ["machine", "import", "decode", "graphs", "prefill", "perop", "gemm", "breakdown"]
ALIASES = {"rss": "decode", "ttft": "decode", "roofline": "decode", "static": "graphs"}
RESULT_MARK = "BENCH-RESULT "
T_START = time.time()
TRANSIENT = ("ImportError", "OSError", "undefined symbol", "cannot open shared object", "ModuleNotFoundError")

# Validation tolerance, in units of upstream's own rounding error. Both sides' logits are
# compared with float64 logits (upstream, same weights, same input): upstream's error
# e_up = max|upstream - float64| is what a correct float32 (or bfloat16) implementation
# costs on this input. torchnative passes when its own error e_ours <= TOL_FACTOR x e_up:
# no more than 4x less accurate than upstream (a different, equally valid summation order
# is not always equally lucky; a wrong kernel is off by orders of magnitude). The direct
# difference |torchnative - upstream| (<= e_up + e_ours) is reported next to it.
TOL_FACTOR = 4.0
TOL_FLOOR = 1e-4          # absolute floor (logits are O(10); float32 eps there is ~1e-6)
TOL_FALLBACK = {"float32": 1e-2, "bfloat16": None}  # if the float64 reference is unavailable


def log(msg):
    el = time.time() - T_START
    print(f"[{int(el // 60):02d}:{int(el % 60):02d}] {msg}", file=sys.stderr, flush=True)


class Runner:
    def __init__(self, args):
        self.args = args
        self.c_ids = set()  # identities of our _C seen during the run
        self.errors = []

    def env(self, extra=None):
        e = dict(os.environ)
        n = str(self.args.threads)
        # the same thread count for torch (set_num_threads in the worker) and every BLAS
        e.update(OMP_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n, MKL_NUM_THREADS=n, HF_HUB_OFFLINE="1",
                 TRANSFORMERS_VERBOSITY="error", TOKENIZERS_PARALLELISM="false", PYTHONHASHSEED="0")
        for k in ("TN_NO_BLAS", "TN_F32_GEMM", "TN_PROFILE", "TN_PROFILE_OUT", "TN_FORCE_ISA"):
            e.pop(k, None)
        e.update(extra or {})
        return e

    def run(self, side, cfg, extra_env=None, what=""):
        """One worker process; returns its result dict, or None after recording the error."""
        py = SIDES["torchnative" if side.startswith("torchnative") else side]
        cfg = dict(cfg, threads=self.args.threads)
        for attempt in range(3):
            t0 = time.time()
            try:
                r = subprocess.run([py, os.path.join(HERE, "worker.py"), json.dumps(cfg)], capture_output=True,
                                   text=True, timeout=self.args.timeout, env=self.env(extra_env), cwd=ROOT)
            except subprocess.TimeoutExpired:
                self.errors.append(f"{what} {side}: timeout after {self.args.timeout} s")
                log(f"  {what} {side}: TIMEOUT")
                return None
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith(RESULT_MARK)]
            if r.returncode == 0 and lines:
                res = json.loads(lines[-1][len(RESULT_MARK):])
                res["_wall_s"] = time.time() - t0
                if side.startswith("torchnative") and "torch_c" in res:
                    self.c_ids.add(json.dumps(res["torch_c"], sort_keys=True))
                return res
            tail = (r.stderr or "")[-2500:]
            transient = r.returncode < 0 or any(s in tail for s in TRANSIENT)
            if transient and attempt < 2:
                log(f"  {what} {side}: failed ({tail.strip().splitlines()[-1] if tail.strip() else r.returncode}); "
                    f"retrying in 20 s (our _C may be being rebuilt)")
                time.sleep(20)
                continue
            last = tail.strip().splitlines()[-1] if tail.strip() else f"exit status {r.returncode}"
            self.errors.append(f"{what} {side}: {last}")
            log(f"  {what} {side}: FAILED: {last}")
            if self.args.verbose:
                print(tail, file=sys.stderr)
            return None
        return None


def stats(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def paired(rn, what, cfg_for, sides, pairs, on_result=None):
    """Counted pairs 1..pairs of the sides in order; returns {side: [result or None per pair]}."""
    out = {s: [] for s in sides}
    for i in range(1, pairs + 1):
        for s in sides:
            cfg, env = cfg_for(s)
            r = rn.run(s, cfg, env, what)
            out[s].append(r)
            if on_result and r is not None:
                on_result(s, i, r)
    return out


def ratios(a_list, b_list, key, invert=False):
    """Per-pair ratios b/a (or a/b), skipping failed runs."""
    rs = []
    for a, b in zip(a_list, b_list):
        if a is None or b is None:
            continue
        x, y = key(a), key(b)
        if x is None or y is None or x == 0 or y == 0:
            continue
        rs.append(x / y if invert else y / x)
    return stats(rs)


# ---------------------------------------------------------------- logits comparison

def load_npz(path):
    import numpy as np
    try:
        with np.load(path) as z:
            return {k: z[k] for k in z.files}
    except Exception:  # noqa: BLE001
        return None


def compare_logits(up, ours, ref64, dtype):
    """Logit agreement; ok when ours' error against float64 is within the tolerance (above)."""
    import numpy as np
    d = float(np.max(np.abs(ours.astype(np.float64) - up.astype(np.float64))))
    out = {"max_abs_diff": d, "argmax_agree": float(np.mean(ours.argmax(-1) == up.argmax(-1))),
           "logit_scale": float(np.max(np.abs(up)))}
    if ref64 is not None:
        e_up = float(np.max(np.abs(up.astype(np.float64) - ref64)))
        e_ours = float(np.max(np.abs(ours.astype(np.float64) - ref64)))
        tol = max(TOL_FACTOR * e_up, TOL_FLOOR)
        out.update(upstream_err_vs_f64=e_up, ours_err_vs_f64=e_ours, tolerance=tol,
                   tolerance_basis=f"ours' max error against float64 <= {TOL_FACTOR:g} x upstream's")
        out["ok"] = e_ours <= tol
    else:
        tol = TOL_FALLBACK.get(dtype)
        out.update(tolerance=tol, tolerance_basis="|ours - upstream| <= fixed fallback (no float64 reference)")
        out["ok"] = None if tol is None else d <= tol
    return out


# ---------------------------------------------------------------- sections

def sec_machine(rn, a, res):
    exe = os.path.join(a.out, "machine")
    src = os.path.join(HERE, "machine.c")
    r = subprocess.run(["gcc", "-O2", "-std=c11", "-pthread", src, "-o", exe], capture_output=True, text=True)
    if r.returncode:
        rn.errors.append("machine: gcc failed: " + r.stderr[-500:])
        return
    log(f"machine: read bandwidth over {a.bw_mib} MiB, FMA peak (1 and all threads) ...")
    r = subprocess.run([exe, str(a.bw_mib), "0.25"], capture_output=True, text=True, timeout=600)
    if r.returncode:
        rn.errors.append("machine: " + r.stderr[-500:])
        return
    m = json.loads(r.stdout)
    m.pop("sink", None)
    res["machine"] = m
    log(f"  read {m['read_gb_s_1']:.1f} GB/s (1 thread), {m['read_gb_s_all']:.1f} GB/s (all); "
        f"FMA avx512 {m['fma_avx512_gflops_1']:.0f}/{m['fma_avx512_gflops_all']:.0f} GFLOP/s")


def bandwidth_beside(rn, a):
    """All-thread read bandwidth (GB/s) measured now, over a 1 GiB buffer (far above L3):
    run beside every decode run, because this VM's bandwidth moves within a run by more
    than the decode targets' margins. None when the tool cannot run."""
    exe = getattr(a, "bw_exe", None)
    if exe is None:
        exe = os.path.join(a.out, "machine")
        r = subprocess.run(["gcc", "-O2", "-std=c11", "-pthread", os.path.join(HERE, "machine.c"), "-o", exe],
                           capture_output=True, text=True)
        a.bw_exe = exe = exe if r.returncode == 0 else ""
    if not exe:
        return None
    r = subprocess.run([exe, "1024", "0", "bw"], capture_output=True, text=True, timeout=300)
    return json.loads(r.stdout)["read_gb_s_all"] if r.returncode == 0 else None


def sec_import(rn, a, res):
    out = {}
    for task in ("import_torch", "import_transformers"):
        log(f"import: {task}, warm-up + {a.pairs} pairs")
        for s in SIDES:
            rn.run(s, {"task": task}, None, task)  # warm-up (file cache)
        runs = paired(rn, task, lambda s, t=task: ({"task": t}, None), list(SIDES), a.pairs)
        out[task] = {"runs": runs,
                     "upstream": stats([r["seconds"] for r in runs["upstream"] if r]),
                     "torchnative": stats([r["seconds"] for r in runs["torchnative"] if r]),
                     "ratio": ratios(runs["upstream"], runs["torchnative"], lambda r: r["seconds"])}
    res["import"] = out


def sec_decode(rn, a, res, ref64):
    out = {"validation": {}}
    tmp = a.tmp
    ref_tokens = None
    dumps = {}
    valid = {}
    for dt in ("float32", "bfloat16"):
        log(f"decode {dt}: warm-up pair with validation")
        base = {"task": "decode", "dtype": dt, "new_tokens": a.new_tokens}
        if dt == "float32" and getattr(a, "decode_ref_run", None):
            r_up = a.decode_ref_run  # already run (with its dump) to fix the reference sequence
        else:
            r_up = rn.run("upstream", dict(base, dump=os.path.join(tmp, f"decode_{dt}_upstream.npz"),
                                           ref_seq=ref_tokens), None, f"decode {dt}")
        if r_up and ref_tokens is None:
            ref_tokens = r_up["tokens"]  # upstream float32 greedy output: the reference sequence
        r_tn = rn.run("torchnative", dict(base, dump=os.path.join(tmp, f"decode_{dt}_torchnative.npz"),
                                          ref_seq=ref_tokens), None, f"decode {dt}")
        v = {}
        if r_up and r_tn:
            p = r_up["prompt_len"]
            a_new, b_new = r_up["tokens"][p:], r_tn["tokens"][p:]
            v["tokens_identical"] = r_up["tokens"] == r_tn["tokens"]
            v["fraction_identical_tokens"] = sum(x == y for x, y in zip(a_new, b_new)) / max(1, len(a_new))
            first = next((i for i, (x, y) in enumerate(zip(a_new, b_new)) if x != y), None)
            v["first_difference_at_new_token"] = first
            up_l = load_npz(os.path.join(tmp, f"decode_{dt}_upstream.npz"))
            tn_l = load_npz(os.path.join(tmp, f"decode_{dt}_torchnative.npz"))
            if up_l and tn_l:
                v["teacher_forced_logits"] = compare_logits(up_l["logits"], tn_l["logits"],
                                                            ref64.get("logits") if ref64 else None, dt)
            dumps[dt] = (up_l, tn_l)
        ok = bool(v.get("tokens_identical"))
        if dt == "float32":
            valid[dt] = ok
            v["status"] = "ok" if ok else "INVALID: tokens differ, not timed"
        else:
            valid[dt] = r_up is not None and r_tn is not None
            lg = v.get("teacher_forced_logits", {})
            v["status"] = "ok" if ok and lg.get("ok", True) else "FLAG: bfloat16 outputs differ (not failed)"
        out["validation"][dt] = v
        log(f"  {dt}: {v.get('status', 'no result')}; identical tokens "
            f"{v.get('fraction_identical_tokens', float('nan')):.2f}; max logit diff "
            f"{v.get('teacher_forced_logits', {}).get('max_abs_diff', float('nan')):.3g}")
    out["ref_tokens"] = ref_tokens
    dts = [dt for dt in ("float32", "bfloat16") if valid.get(dt)]
    runs = {dt: {s: [] for s in SIDES} for dt in dts}
    for i in range(1, a.pairs + 1):
        for dt in dts:
            for s in SIDES:
                r = rn.run(s, {"task": "decode", "dtype": dt, "new_tokens": a.new_tokens}, None, f"decode {dt}")
                runs[dt][s].append(r)
                if r:
                    r["read_gb_s_beside"] = bandwidth_beside(rn, a)
                    if dt == "float32" and r["tokens"] != ref_tokens:
                        out["validation"][dt]["status"] = "FLAG: tokens changed between runs"
                    log(f"  decode {dt} pair {i}/{a.pairs} {s}: {r['decode_tok_s']:.1f} tok/s, "
                        f"ttft {1e3 * r['ttft_s']:.0f} ms, rss {r['peak_rss_mib']:.0f} MiB; "
                        f"bandwidth beside {fmt(r['read_gb_s_beside'])} GB/s")
    out["runs"] = runs
    out["summary"] = summarize_decode(runs, dts, res, ("ttft_s", "peak_rss_mib"))
    res["decode"] = out


def summarize_decode(runs, dts, res, extra):
    """Per dtype and side: medians of decode tok/s and of the `extra` fields, bandwidth
    efficiency against this run's measured read bandwidth, per-pair ratios; and bfloat16
    over the same side's float32."""
    bw = (res.get("machine") or {}).get("read_gb_s_all")
    summ = {}
    for dt in dts:
        R = runs[dt]
        d = {}
        for s in SIDES:
            ok = [r for r in R[s] if r]
            d[s] = {"decode_tok_s": stats([r["decode_tok_s"] for r in ok]),
                    "weight_bytes_per_token": ok[0]["weight_bytes_per_token"] if ok else None}
            for f in extra:
                d[s][f] = stats([r[f] for r in ok])
            if bw and ok and d[s]["decode_tok_s"]:
                d[s]["bandwidth_efficiency"] = (d[s]["weight_bytes_per_token"] * d[s]["decode_tok_s"]["median"]
                                                / (bw * 1e9))
                d[s]["roofline_tok_s"] = bw * 1e9 / d[s]["weight_bytes_per_token"]
            # each run against the bandwidth measured right after it
            beside = [r for r in ok if r.get("read_gb_s_beside")]
            if beside and d[s]["weight_bytes_per_token"]:
                d[s]["read_gb_s_beside"] = stats([r["read_gb_s_beside"] for r in beside])
                d[s]["bandwidth_efficiency_beside"] = stats(
                    [d[s]["weight_bytes_per_token"] * r["decode_tok_s"] / (r["read_gb_s_beside"] * 1e9) for r in beside])
        d["ratio_decode"] = ratios(R["upstream"], R["torchnative"], lambda r: r["decode_tok_s"])
        if "ttft_s" in extra:
            d["ratio_ttft"] = ratios(R["upstream"], R["torchnative"], lambda r: r["ttft_s"])
        if "peak_rss_mib" in extra:
            d["ratio_rss"] = ratios(R["upstream"], R["torchnative"], lambda r: r["peak_rss_mib"])
        summ[dt] = d
    if "float32" in runs and "bfloat16" in runs:
        for s in SIDES:  # bfloat16 against the same side's float32, per pair
            summ[f"bf16_over_fp32_{s}"] = ratios(runs["float32"][s], runs["bfloat16"][s],
                                                 lambda r: r["decode_tok_s"])
            # the same per GB/s of the bandwidth measured beside each run (the VM's
            # bandwidth state can differ between a pair's two runs)
            summ[f"bf16_over_fp32_per_bw_{s}"] = ratios(
                runs["float32"][s], runs["bfloat16"][s],
                lambda r: r["decode_tok_s"] / r["read_gb_s_beside"] if r.get("read_gb_s_beside") else None)
    return summ


def sec_graphs(rn, a, res, ref64):
    """Decode with transformers' static cache on both sides (generate(...,
    cache_implementation="static")); torchnative also installs operator graphs
    (torchnative.graphs.accelerate_decode): the decode steps after the second replay the
    captured forward without Python. Upstream runs the same static-cache generation
    eagerly. float32 tokens must be identical to upstream's before anything is timed."""
    out = {"validation": {}}
    valid = {}
    base = lambda dt: {"task": "decode", "dtype": dt, "new_tokens": a.new_tokens, "static": True, "graphs": True}
    for dt in ("float32", "bfloat16"):
        log(f"graphs {dt}: warm-up pair with validation")
        rr = {s: rn.run(s, base(dt), None, f"graphs {dt}") for s in SIDES}
        v = {}
        if all(rr.values()):
            up, tn = rr["upstream"], rr["torchnative"]
            p = up["prompt_len"]
            a_new, b_new = up["tokens"][p:], tn["tokens"][p:]
            v["tokens_identical"] = up["tokens"] == tn["tokens"]
            v["fraction_identical_tokens"] = sum(x == y for x, y in zip(a_new, b_new)) / max(1, len(a_new))
            v["graphs"] = tn.get("graphs")
            replayed = bool(tn.get("graphs", {}).get("replays"))
            ok = v["tokens_identical"] and replayed
            if dt == "float32":
                valid[dt] = ok
                v["status"] = "ok" if ok else ("INVALID: tokens differ, not timed" if replayed
                                               else "INVALID: no decode step was replayed")
            else:
                valid[dt] = replayed
                v["status"] = "ok" if ok else ("FLAG: bfloat16 tokens differ (not failed)" if replayed
                                               else "INVALID: no decode step was replayed")
        else:
            valid[dt] = False
            v["status"] = "FAILED: a side did not run"
        out["validation"][dt] = v
        log(f"  {dt}: {v['status']}; graph stats {v.get('graphs')}")
    dts = [dt for dt in ("float32", "bfloat16") if valid.get(dt)]
    runs = {dt: {s: [] for s in SIDES} for dt in dts}
    for i in range(1, a.pairs + 1):
        for dt in dts:
            for s in SIDES:
                r = rn.run(s, base(dt), None, f"graphs {dt}")
                runs[dt][s].append(r)
                if r:
                    r["read_gb_s_beside"] = bandwidth_beside(rn, a)
                    log(f"  graphs {dt} pair {i}/{a.pairs} {s}: {r['decode_tok_s']:.1f} tok/s; "
                        f"bandwidth beside {fmt(r['read_gb_s_beside'])} GB/s")
    out["runs"] = runs
    out["summary"] = summarize_decode(runs, dts, res, ())
    out["breakdown"] = {}
    for dt in dts:
        log(f"graphs {dt}: decode-step breakdown (torchnative)")
        r = rn.run("torchnative", {"task": "graph_breakdown", "dtype": dt, "new_tokens": 64}, None,
                   f"graphs breakdown {dt}")
        if r:
            out["breakdown"][dt] = r
            log(f"  step {r['step_ms']:.2f} ms: replay {r['replay_ms']:.2f} (linear {r['linear_ms']:.2f} at "
                f"{r['linear_gb_s']:.1f} GB/s), wrapper {r['wrapper_ms']:.2f}, generate's Python {r['outside_ms']:.2f}")
    res["graphs"] = out


def sec_prefill(rn, a, res, ref64):
    out = {"validation": {}, "summary": {}}
    sizes = a.sizes
    valid = {}
    for dt in ("float32", "bfloat16"):
        log(f"prefill {dt}: warm-up pair with validation (S = {', '.join(map(str, sizes))})")
        base = {"task": "prefill", "dtype": dt, "sizes": sizes}
        rr = {s: rn.run(s, dict(base, dump=os.path.join(a.tmp, f"prefill_{dt}_{s}.npz")), None, f"prefill {dt}")
              for s in SIDES}
        v = {}
        if all(rr.values()):
            v["same_input_ids"] = rr["upstream"]["ids_checksum"] == rr["torchnative"]["ids_checksum"]
            up_l = load_npz(os.path.join(a.tmp, f"prefill_{dt}_upstream.npz"))
            tn_l = load_npz(os.path.join(a.tmp, f"prefill_{dt}_torchnative.npz"))
            for S in sizes:
                k = f"S{S}"
                if up_l and tn_l and k in up_l and k in tn_l:
                    v[k] = compare_logits(up_l[k], tn_l[k], ref64.get(k) if ref64 else None, dt)
            oks = [v[f"S{S}"]["ok"] for S in sizes if f"S{S}" in v]
            good = v["same_input_ids"] and len(oks) == len(sizes)
            if dt == "float32":
                valid[dt] = good and all(oks)
                v["status"] = "ok" if valid[dt] else "INVALID: logits disagree beyond tolerance, not timed"
            else:
                valid[dt] = good
                v["status"] = "ok" if all(o is not False for o in oks) else "FLAG: bfloat16 logits beyond tolerance"
        else:
            valid[dt] = False
            v["status"] = "FAILED: a side did not run"
        out["validation"][dt] = v
        log(f"  {dt}: {v['status']}; max diff (ours err / tol) " + ", ".join(
            f"S{S} {v[f'S{S}']['max_abs_diff']:.2g} ({v[f'S{S}'].get('ours_err_vs_f64', float('nan')):.2g}"
            f" / {v[f'S{S}']['tolerance'] or float('nan'):.2g})"
            for S in sizes if f"S{S}" in v))
    for dt in ("float32", "bfloat16"):
        if not valid.get(dt):
            continue
        base = {"task": "prefill", "dtype": dt, "sizes": sizes}

        def show(s, i, r, dt=dt):
            log(f"  prefill {dt} pair {i}/{a.pairs} {s}: " + ", ".join(
                f"S{k} {v['tok_s']:.0f}" for k, v in r["per_s"].items()) + " tok/s")
        runs = paired(rn, f"prefill {dt}", lambda s: (base, None), list(SIDES), a.pairs, show)
        d = {"runs": runs}
        for S in sizes:
            k = str(S)
            d[k] = {s: stats([r["per_s"][k]["tok_s"] for r in runs[s] if r]) for s in SIDES}
            d[k]["ratio"] = ratios(runs["upstream"], runs["torchnative"], lambda r: r["per_s"][k]["tok_s"])
        out["summary"][dt] = d
    res["prefill"] = out


def sec_perop(rn, a, res):
    log(f"per-op overhead: warm-up + {a.pairs} pairs")
    for s in SIDES:
        rn.run(s, {"task": "perop"}, None, "perop")

    def show(s, i, r):
        log(f"  perop pair {i}/{a.pairs} {s}: " + ", ".join(f"{k} {v:.2f}" for k, v in r["us_per_call"].items())
            + " us")
    runs = paired(rn, "perop", lambda s: ({"task": "perop"}, None), list(SIDES), a.pairs, show)
    ops = next((r["us_per_call"].keys() for r in runs["upstream"] if r), [])
    summ = {}
    for op in ops:
        summ[op] = {s: stats([r["us_per_call"][op] for r in runs[s] if r]) for s in SIDES}
        summ[op]["ratio"] = ratios(runs["upstream"], runs["torchnative"], lambda r, op=op: r["us_per_call"][op])
    res["perop"] = {"runs": runs, "summary": summ}


GEMM_SHAPES = [[1, 576, 1536], [128, 576, 1536], [1024, 1024, 1024]]


def sec_gemm(rn, a, res):
    sides = ["upstream", "torchnative", "torchnative_openblas"]
    openblas = {"TN_F32_GEMM": "openblas"}

    def cfg_for(s):
        if s == "torchnative_openblas":
            return {"task": "gemm", "dtypes": ["float32"], "shapes": GEMM_SHAPES}, openblas
        return {"task": "gemm", "dtypes": ["float32", "bfloat16"], "shapes": GEMM_SHAPES}, None
    log("gemm: warm-up pair with validation (checksums)")
    w = {s: rn.run(s, cfg_for(s)[0], cfg_for(s)[1], "gemm") for s in sides}
    val = {}
    if w["upstream"]:
        for s in ("torchnative", "torchnative_openblas"):
            if not w[s]:
                continue
            for key, g in w[s]["gemm"].items():
                u = w["upstream"]["gemm"][key]["checksum"]
                rel = abs(g["checksum"][0] - u[0]) / max(1e-30, u[1])  # sum difference relative to sum |y|
                tol = 1e-6 if key.startswith("float32") else 1e-2
                val[f"{s} {key}"] = {"rel_diff": rel, "ok": rel <= tol}
    bad = [k for k, v in val.items() if not v["ok"]]
    log("  checksums " + ("ok" if not bad else "DIFFER: " + ", ".join(bad)))

    def show(s, i, r):
        log(f"  gemm pair {i}/{a.pairs} {s}: " + ", ".join(
            f"{k} {v['linear']['gflops']:.0f}" for k, v in r["gemm"].items()) + " GFLOP/s (linear)")
    runs = paired(rn, "gemm", cfg_for, sides, a.pairs, show)
    summ = {}
    keys = [f"{dt}:{m}x{k}x{n}" for dt in ("float32", "bfloat16") for (m, k, n) in GEMM_SHAPES]
    for key in keys:
        for op in ("linear", "mm"):
            d = {}
            for s in sides:
                xs = [r["gemm"][key][op]["gflops"] for r in runs[s] if r and key in r["gemm"]]
                if xs:
                    d[s] = stats(xs)
            f = (lambda r, key=key, op=op: r["gemm"][key][op]["gflops"] if key in r["gemm"] else None)
            d["ratio"] = ratios(runs["upstream"], runs["torchnative"], f)
            if key.startswith("float32"):
                d["ratio_own_over_openblas"] = ratios(runs["torchnative_openblas"], runs["torchnative"], f)
            summ[f"{key} {op}"] = d
    res["gemm"] = {"runs": runs, "validation": val, "summary": summ}


def sec_breakdown(rn, a, res):
    out = {}
    for s in SIDES:
        log(f"breakdown: {s} (profiled generate, {a.new_tokens} tokens)")
        out[s] = rn.run(s, {"task": "breakdown", "new_tokens": a.new_tokens}, None, "breakdown")
    res["breakdown"] = out


def run_ref64(rn, a, sections, ref_tokens_hint):
    """float64 reference logits from upstream for the validation tolerances (one process)."""
    cfg = {"task": "ref64", "dump": os.path.join(a.tmp, "ref64.npz")}
    if "prefill" in sections:
        cfg["sizes"] = a.sizes
    if ref_tokens_hint:
        cfg["ref_seq"] = ref_tokens_hint
    log("validation reference: upstream float64 logits ...")
    if rn.run("upstream", cfg, None, "ref64") is None:
        return None
    return load_npz(cfg["dump"])


def decode_ref_tokens(rn, a):
    """The upstream float32 greedy sequence (needed before the float64 reference)."""
    log("decode float32: upstream warm-up run (fixes the reference token sequence)")
    r = rn.run("upstream", {"task": "decode", "dtype": "float32", "new_tokens": a.new_tokens,
                            "dump": os.path.join(a.tmp, "decode_float32_upstream.npz")}, None, "decode float32")
    a.decode_ref_run = r
    return r["tokens"] if r else None


# ---------------------------------------------------------------- report

def fmt(x, spec=".1f"):
    return "—" if x is None else format(x, spec)


def med(d):
    return None if not d else d["median"]


def rng(d, spec=".2f"):
    if not d:
        return "—"
    return f"{d['median']:{spec}} ({d['min']:{spec}}–{d['max']:{spec}})"


def efficiency_beside(rows, d, dt, what):
    """The table row of the bandwidth efficiency of each run against the bandwidth measured
    right after it: median (min–max) over the runs; the float32 row carries the 80 % target."""
    e_up, e_tn = d["upstream"].get("bandwidth_efficiency_beside"), d["torchnative"].get("bandwidth_efficiency_beside")
    bw = d["torchnative"].get("read_gb_s_beside")
    if not e_tn:
        return
    pct = lambda e: "—" if not e else f"{100 * e['median']:.1f} % ({100 * e['min']:.1f}–{100 * e['max']:.1f})"
    f32 = dt == "float32"
    rows.append(f"| bandwidth efficiency {dt}{what}, each run against the bandwidth measured beside it "
                f"({rng(bw, '.1f')} GB/s) | {pct(e_up)} | {pct(e_tn)} | | {'≥ 80 %' if f32 else ''} | "
                f"{verdict(e_tn['median'], 0.8) if f32 else ''} |")


def per_bw(rows, S, what):
    """Informational row: bf16 / own fp32 per pair, each run's tok/s divided by the bandwidth
    measured beside it (no target: the target is judged on the raw ratio)."""
    bt, bu = S.get("bf16_over_fp32_per_bw_torchnative"), S.get("bf16_over_fp32_per_bw_upstream")
    if bt:
        rows.append(f"| decode bf16 / own fp32{what}, tok/s per GB/s of the bandwidth beside each run | "
                    f"{rng(bu)} | {rng(bt)} | | | |")


def verdict(value, target, higher=True):
    if value is None or target is None:
        return ""
    return "pass" if (value >= target if higher else value <= target) else "FAIL"


def report(res, a):
    L = []
    m = res.get("machine")
    cfg = res["config"]
    L.append(f"# torchnative benchmarks — {res['date']}\n")
    L.append(f"Command: `{cfg['command']}` · {cfg['threads']} threads both sides · {cfg['pairs']} counted pairs "
             f"after a warm-up pair · host: {res['host']['cpu']}, {res['host']['cpus']} CPUs · "
             f"load average at start {res['host']['loadavg_start']}, at end {res['host'].get('loadavg_end')}\n")
    L.append("Ratios are torchnative / upstream per pair: median (min–max). For times, memory and import "
             "a ratio below 1 means torchnative is better; for rates above 1.\n")
    if m:
        L.append("## Machine (measured in this run)\n")
        L.append("| figure | 1 thread | all threads |\n|---|---|---|")
        L.append(f"| read bandwidth GB/s ({m['buffer_mib']} MiB buffer) | {m['read_gb_s_1']:.1f} | {m['read_gb_s_all']:.1f} |")
        L.append(f"| FMA peak AVX-512 fp32 GFLOP/s | {m['fma_avx512_gflops_1']:.0f} | {m['fma_avx512_gflops_all']:.0f} |")
        L.append(f"| FMA peak AVX2 fp32 GFLOP/s | {m['fma_avx2_gflops_1']:.0f} | {m['fma_avx2_gflops_all']:.0f} |")
        L.append(f"| AVX512-BF16 dot peak GFLOP/s | {m['dot_avx512bf16_gflops_1']:.0f} | {m['dot_avx512bf16_gflops_all']:.0f} |")
        L.append("")
    rows = []

    def row(fig, up, tn, ratio, target, ok, unit_spec=".1f", ratio_spec=".2f"):
        rows.append(f"| {fig} | {fmt(up, unit_spec)} | {fmt(tn, unit_spec)} | {rng(ratio, ratio_spec)} | {target} | {ok} |")

    dec = res.get("decode")
    if dec and dec.get("summary"):
        S = dec["summary"]
        for dt, tgt in (("float32", 1.2), ("bfloat16", 1.5)):
            if dt not in S:
                continue
            d = S[dt]
            r = d["ratio_decode"]
            row(f"decode tok/s {dt}", med(d["upstream"]["decode_tok_s"]), med(d["torchnative"]["decode_tok_s"]),
                r, f"≥ {tgt}x upstream", verdict(med(r), tgt))
            eff_up = d["upstream"].get("bandwidth_efficiency")
            eff_tn = d["torchnative"].get("bandwidth_efficiency")
            wb = d["torchnative"]["weight_bytes_per_token"] or d["upstream"]["weight_bytes_per_token"] or 0
            rows.append(f"| bandwidth efficiency {dt} against the run's first bandwidth (weights {wb / 1e6:.0f} MB/token; "
                        f"roofline {fmt(d['torchnative'].get('roofline_tok_s'))} tok/s) | "
                        f"{fmt(None if eff_up is None else 100 * eff_up)} % | {fmt(None if eff_tn is None else 100 * eff_tn)} % | | | |")
            efficiency_beside(rows, d, dt, "")
            row(f"time to first token ms {dt}", None if not d["upstream"]["ttft_s"] else 1e3 * d["upstream"]["ttft_s"]["median"],
                None if not d["torchnative"]["ttft_s"] else 1e3 * d["torchnative"]["ttft_s"]["median"], d["ratio_ttft"], "", "", ".0f")
            row(f"peak RSS MiB, load + generate {dt}", med(d["upstream"]["peak_rss_mib"]), med(d["torchnative"]["peak_rss_mib"]),
                d["ratio_rss"], "≤ 1.0x upstream", verdict(med(d["ratio_rss"]), 1.0, higher=False), ".0f")
        bt, bu = S.get("bf16_over_fp32_torchnative"), S.get("bf16_over_fp32_upstream")
        if bt:
            rows.append(f"| decode bf16 / own fp32 | {rng(bu)} | {rng(bt)} | | ≥ 1.6x (torchnative) | {verdict(med(bt), 1.6)} |")
        per_bw(rows, S, "")
    gr = res.get("graphs")
    if gr and gr.get("summary"):
        S = gr["summary"]
        for dt in ("float32", "bfloat16"):
            if dt not in S:
                continue
            d = S[dt]
            row(f"decode tok/s {dt}, static cache (torchnative with operator graphs)",
                med(d["upstream"]["decode_tok_s"]), med(d["torchnative"]["decode_tok_s"]), d["ratio_decode"], "", "")
            eff_up = d["upstream"].get("bandwidth_efficiency")
            eff_tn = d["torchnative"].get("bandwidth_efficiency")
            rows.append(f"| bandwidth efficiency {dt}, static cache, operator graphs, against the run's first bandwidth (roofline "
                        f"{fmt(d['torchnative'].get('roofline_tok_s'))} tok/s) | "
                        f"{fmt(None if eff_up is None else 100 * eff_up)} % | {fmt(None if eff_tn is None else 100 * eff_tn)} % | | | |")
            efficiency_beside(rows, d, dt, ", static cache, operator graphs")
        bt, bu = S.get("bf16_over_fp32_torchnative"), S.get("bf16_over_fp32_upstream")
        if bt:
            rows.append(f"| decode bf16 / own fp32, static cache, operator graphs | {rng(bu)} | {rng(bt)} | | "
                        f"≥ 1.6x (torchnative) | {verdict(med(bt), 1.6)} |")
        per_bw(rows, S, ", static cache, operator graphs")
    pre = res.get("prefill")
    if pre and pre.get("summary"):
        for dt, d in pre["summary"].items():
            for S_ in a.sizes:
                k = str(S_)
                row(f"prefill tok/s {dt} S={S_}", med(d[k]["upstream"]), med(d[k]["torchnative"]), d[k]["ratio"],
                    "≥ 1.0x", verdict(med(d[k]["ratio"]), 1.0), ".0f")
    po = res.get("perop")
    if po and po.get("summary"):
        for op, d in po["summary"].items():
            row(f"per-op µs {op}", med(d["upstream"]), med(d["torchnative"]), d["ratio"], "≤ 0.5x",
                verdict(med(d["ratio"]), 0.5, higher=False), ".2f")
    ge = res.get("gemm")
    if ge and ge.get("summary"):
        peak32 = peak_for(m, "fma_avx512_gflops", a.threads)
        peakbf = peak_for(m, "dot_avx512bf16_gflops", a.threads)
        for key, d in ge["summary"].items():
            dt = key.split(":")[0]
            pk = peak32 if dt == "float32" else peakbf
            up, tn = med(d.get("upstream")), med(d.get("torchnative"))
            pct = lambda x: "" if (x is None or not pk) else f" ({100 * x / pk:.0f} %)"  # noqa: E731
            target, ok = "", ""
            if dt == "float32" and key.split(" ")[0].split(":")[1] in ("1024x1024x1024", "128x576x1536"):
                target = "≥ 80 % FMA peak"
                ok = verdict(None if (tn is None or not pk) else tn / pk, 0.8)
            rows.append(f"| GEMM GFLOP/s {key} | {fmt(up)}{pct(up)} | {fmt(tn)}{pct(tn)} | {rng(d['ratio'])} | {target} | {ok} |")
            if "torchnative_openblas" in d:
                nb = med(d["torchnative_openblas"])
                rows.append(f"| GEMM GFLOP/s {key}, TN_F32_GEMM=openblas (OpenBLAS under our door) | | {fmt(nb)}{pct(nb)} | "
                            f"{rng(d.get('ratio_own_over_openblas'))} own/OpenBLAS | | |")
    im = res.get("import")
    if im:
        for task, d in im.items():
            row(f"import time s: {'import torch' if task == 'import_torch' else 'from transformers import AutoModelForCausalLM'}",
                med(d["upstream"]), med(d["torchnative"]), d["ratio"], "", "", ".2f")
    if rows:
        L.append("## Results\n")
        L.append("| figure | upstream | torchnative | ratio median (min–max) | target | |\n|---|---|---|---|---|---|")
        L.extend(rows)
        L.append("")
    if dec and dec.get("validation"):
        L.append("## Validation\n")
        for dt, v in dec["validation"].items():
            lg = v.get("teacher_forced_logits", {})
            L.append(f"- decode {dt}: {v.get('status')}; identical new tokens {fmt(v.get('fraction_identical_tokens'), '.3f')}"
                     f" (first difference at {v.get('first_difference_at_new_token')}); teacher-forced max logit diff "
                     f"{fmt(lg.get('max_abs_diff'), '.3g')} (error vs float64: ours {fmt(lg.get('ours_err_vs_f64'), '.3g')}, "
                     f"upstream {fmt(lg.get('upstream_err_vs_f64'), '.3g')}, tolerance {fmt(lg.get('tolerance'), '.3g')}; "
                     f"argmax agreement {fmt(lg.get('argmax_agree'), '.3f')})")
    if pre and pre.get("validation"):
        for dt, v in pre["validation"].items():
            parts = [f"S{S_} {fmt(v[f'S{S_}']['max_abs_diff'], '.2g')} "
                     f"[{fmt(v[f'S{S_}'].get('ours_err_vs_f64'), '.2g')} / {fmt(v[f'S{S_}'].get('upstream_err_vs_f64'), '.2g')}"
                     f" ≤ {fmt(v[f'S{S_}']['tolerance'], '.2g')}]"
                     for S_ in a.sizes if f"S{S_}" in v]
            L.append(f"- prefill {dt}: {v.get('status')}; max |ours − upstream| logit "
                     f"[error vs float64 ours / upstream ≤ tolerance]: " + ", ".join(parts))
    if ge and ge.get("validation"):
        bad = [k for k, v in ge["validation"].items() if not v["ok"]]
        L.append(f"- GEMM checksums: {'all agree' if not bad else 'differ: ' + ', '.join(bad)}")
    L.append("")
    bd = res.get("breakdown")
    if bd:
        L.append("## Decode-step breakdown (float32, per decode step)\n")
        L.append("| side | step ms | torch builtins ms (binding+door+kernel) | door + kernels ms (TN_PROFILE) "
                 "| binding ms (TN_PROFILE call − door) | Python ms (wall − builtins) | builtin calls/step |")
        L.append("|---|---|---|---|---|---|---|")
        for s, r in bd.items():
            if not r:
                L.append(f"| {s} | failed | | | | | |")
                continue
            w, b = max(r["step_wall_s"], 1e-12), r["step_builtin_s"]
            tp = r.get("tn_profile")
            if tp:
                door = f"{1e3 * tp['step_door_s']:.2f} ({100 * tp['step_door_s'] / w:.0f} %)"
                bind = tp["step_binding_call_s"] - tp["step_door_s"]
                bind = f"{1e3 * bind:.2f} ({100 * bind / w:.0f} %)"
            else:
                door = bind = "needs TN_PROFILE" if s == "torchnative" else "n/a"
            L.append(f"| {s} | {1e3 * w:.2f} | {1e3 * b:.2f} ({100 * b / w:.0f} %) | {door} | {bind} | "
                     f"{1e3 * r['step_python_s']:.2f} ({100 * r['step_python_s'] / w:.0f} %) | {r['step_builtin_calls']:.0f} |")
        L.append("\nBuiltin time is measured under sys.setprofile (c_call to c_return of functions and "
                 "methods owned by torch); wall time comes from unprofiled runs; Python = wall − builtin. "
                 "Tensor operators written as syntax (`a + b`, `x * y`) call C slots without a profiler "
                 "event, so their time is counted as Python in that column (on both sides). TN_PROFILE "
                 "(torchnative's per-op counters, `torch._C._tn_profile`) counts every call that reaches "
                 "the door, so it can exceed the builtin column.\n")
        for s, r in bd.items():
            if r:
                top = ", ".join(f"{k} {1e6 * v[1]:.0f} µs×{v[0]:.0f}" for k, v in list(r["top_builtins"].items())[:8])
                L.append(f"- {s} top builtins per step: {top}")
                tp = r.get("tn_profile")
                if tp:
                    L.append(f"- {s} top ops by door time per step (TN_PROFILE): " + ", ".join(
                        f"{k} {1e6 * v[1]:.0f} µs×{v[0]:.0f}" for k, v in list(tp["top_ops_by_door_time"].items())[:8]))
        L.append("")
    gb = (res.get("graphs") or {}).get("breakdown")
    if gb:
        L.append("## Decode-step breakdown with operator graphs (torchnative, static cache, per replayed step)\n")
        L.append("| dtype | step ms | replay ms (door + kernels) | of which linear ms (weights GB/s) | wrapper ms "
                 "(key, input copies, output copy) | generate's Python ms | replayed steps |")
        L.append("|---|---|---|---|---|---|---|")
        for dt, r in gb.items():
            L.append(f"| {dt} | {r['step_ms']:.2f} | {r['replay_ms']:.2f} | {r['linear_ms']:.2f} ({r['linear_gb_s']:.1f}) | "
                     f"{r['wrapper_ms']:.2f} | {r['outside_ms']:.2f} | {r['replayed_steps']} |")
        L.append("")
        for dt, r in gb.items():
            L.append(f"- {dt} replay by operator per step: " + ", ".join(
                f"{name} {us:.0f} µs×{cnt}" for name, cnt, us in r["top_ops"]))
        L.append("\nOne `generate` of 64 new tokens after a warm-up (`bench/worker.py` task graph_breakdown); "
                 "replay times come from `Graph.replay(profile=True)`.\n")
    if res.get("warnings") or res.get("errors"):
        L.append("## Warnings and errors\n")
        for w in res.get("warnings", []) + res.get("errors", []):
            L.append(f"- {w}")
        L.append("")
    L.append(f"Section times (s): " + ", ".join(f"{k} {v:.0f}" for k, v in res["section_seconds"].items())
             + f"; total {res['total_seconds']:.0f} s.")
    return "\n".join(L) + "\n"


def peak_for(m, key, threads):
    if not m:
        return None
    if threads >= m["threads_all"]:
        return m[f"{key}_all"]
    if threads == 1:
        return m[f"{key}_1"]
    return m[f"{key}_1"] * threads


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=5, help="counted pairs after the warm-up pair (default 5)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 counted pair, 1 GiB bandwidth buffer")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--sizes", default="32,128,512,1024", help="prefill lengths S")
    ap.add_argument("--only", default="", help="comma list of sections: " + ",".join(SECTIONS)
                    + " (rss, ttft, roofline are part of decode)")
    ap.add_argument("--bw-mib", type=int, default=4096, help="bandwidth buffer MiB (>> L3)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--timeout", type=int, default=1800, help="per worker process, seconds")
    ap.add_argument("--tn-python", default=None,
                    help="torchnative interpreter (default .venv/bin/python), e.g. a helper's overlay venv")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--report", metavar="JSON", default=None,
                    help="run nothing: rewrite the markdown table of a saved latest.json (summaries recomputed)")
    a = ap.parse_args()
    if a.report:
        return rerender(a)
    if a.tn_python:
        SIDES["torchnative"] = os.path.abspath(a.tn_python)
    if a.quick:
        a.pairs = 1
        a.bw_mib = min(a.bw_mib, 1024)
    a.sizes = [int(x) for x in a.sizes.split(",") if x]
    sections = SECTIONS if not a.only else []
    for x in a.only.split(","):
        x = ALIASES.get(x.strip(), x.strip())
        if x and x not in SECTIONS:
            ap.error(f"unknown section {x!r}; choose from {', '.join(SECTIONS)}")
        if x and x not in sections:
            sections.append(x)
    sections = [s for s in SECTIONS if s in sections]
    if "decode" in sections and "machine" not in sections:
        log("note: bandwidth efficiency needs the machine section; add --only machine,... to get it")
    for s, py in SIDES.items():
        if not os.path.exists(py):
            sys.exit(f"missing {py}: run scripts/setup.sh first")
    os.makedirs(a.out, exist_ok=True)
    a.tmp = os.path.join(a.out, "tmp")
    os.makedirs(a.tmp, exist_ok=True)
    rn = Runner(a)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "config": {"pairs": a.pairs, "threads": a.threads, "new_tokens": a.new_tokens, "sizes": a.sizes,
                      "sections": sections, "bw_mib": a.bw_mib, "quick": a.quick,
                      "command": "bench/run.py " + " ".join(sys.argv[1:]),
                      "interpreters": {k: os.path.relpath(v, ROOT) for k, v in SIDES.items()}},
           "host": {"cpu": cpu_name(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg_start": round(os.getloadavg()[0], 2)},
           "section_seconds": {}}
    log(f"sections: {', '.join(sections)}; {a.pairs} counted pairs; {a.threads} threads; "
        f"load average {os.getloadavg()[0]:.1f}")
    ref64 = None
    need_ref = any(s in sections for s in ("decode", "prefill"))
    if need_ref:
        t0 = time.time()
        ref_tokens = decode_ref_tokens(rn, a) if "decode" in sections else None
        ref64 = run_ref64(rn, a, sections, ref_tokens)
        res["section_seconds"]["reference"] = time.time() - t0
    for s in sections:
        t0 = time.time()
        try:
            if s in ("decode", "graphs", "prefill"):
                globals()[f"sec_{s}"](rn, a, res, ref64)
            else:
                globals()[f"sec_{s}"](rn, a, res)
        except Exception as e:  # noqa: BLE001  keep the other sections' results
            import traceback
            traceback.print_exc()
            rn.errors.append(f"section {s}: {type(e).__name__}: {e}")
        res["section_seconds"][s] = time.time() - t0
    res["total_seconds"] = time.time() - T_START
    res["host"]["loadavg_end"] = round(os.getloadavg()[0], 2)
    res["errors"] = rn.errors
    res["warnings"] = []
    if len(rn.c_ids) > 1:
        res["warnings"].append(f"torchnative's _C changed during the run ({len(rn.c_ids)} builds seen): "
                               "someone rebuilt .venv; figures mix builds")
    if res["host"]["loadavg_start"] > a.threads or res["host"]["loadavg_end"] > a.threads:
        res["warnings"].append("machine was busy (load average above the thread count): figures are noisy")
    if a.quick:
        res["warnings"].append("--quick smoke run: 1 counted pair, not a measurement")
    with open(os.path.join(a.out, "latest.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = report(res, a)
    with open(os.path.join(a.out, "latest.md"), "w") as f:
        f.write(md)
    print(md)
    log(f"done in {res['total_seconds']:.0f} s; wrote {os.path.join(a.out, 'latest.md')} and latest.json")


def rerender(a):
    """--report: the table of a saved run, with its decode summaries recomputed from the runs
    (so rows added to the report since the run appear). Prints the markdown."""
    with open(a.report) as f:
        res = json.load(f)
    a.sizes, a.threads = res["config"]["sizes"], res["config"]["threads"]
    for sec, extra in (("decode", ("ttft_s", "peak_rss_mib")), ("graphs", ())):
        if res.get(sec) and res[sec].get("runs"):
            runs = res[sec]["runs"]
            res[sec]["summary"] = summarize_decode(runs, list(runs), res, extra)
    print(report(res, a))


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
