"""Runs the OpInfo sweep: upstream's samples and results (cached under build/), our side in a
watched subprocess that is restarted after a crash or hang, the per-entry verdicts, and the
floor of agreeing entries that tests/test_opinfo.py holds us to.

    python tests/opinfo/driver.py                 run the sweep, print the counts
    python tests/opinfo/driver.py --update-floor  also raise the floor to this run's agreement
    python tests/opinfo/driver.py --details       also list every entry that does not agree
"""
import hashlib
import json
import os
import pickle
import select
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import compare  # noqa: E402

REF_PYTHON = os.path.join(ROOT, ".venv-ref", "bin", "python")
# ours is the interpreter running the driver (.venv, or .venv-asan under scripts/asan.sh)
OUR_PYTHON = sys.executable
BUILD = os.path.abspath(os.environ.get("TN_BUILD_DIR", os.path.join(ROOT, "build")))
WORKER = os.path.join(HERE, "worker.py")
FLOOR = os.path.join(HERE, "floor.json")

MAX_SAMPLES = 8  # per entry and dtype
DTYPES = ("float32", "float64", "int64", "bool", "bfloat16")
ENTRY_TIMEOUT = 120.0  # seconds one entry may run on our side before it counts as hung
REF_TIMEOUT = 1200.0


def cache_path():
    """The reference cache's file: keyed by everything that decides the samples (the worker's
    code, the stub, the sample count and dtypes), so changing any of them regenerates it."""
    h = hashlib.sha256()
    for p in (WORKER, os.path.join(HERE, "stubs", "expecttest.py")):
        with open(p, "rb") as f:
            h.update(f.read())
    h.update(repr((MAX_SAMPLES, DTYPES)).encode())
    return os.path.join(BUILD, "opinfo", f"reference-{h.hexdigest()[:16]}.pkl")


def _env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONWARNINGS"] = "ignore"
    return env


def ensure_reference():
    """Upstream's samples and results, generated on first use of this cache key."""
    path = cache_path()
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        r = subprocess.run([REF_PYTHON, WORKER, "gen", path, str(MAX_SAMPLES), *DTYPES], env=_env(),
                           capture_output=True, text=True, timeout=REF_TIMEOUT)
        if r.returncode != 0 or not os.path.exists(path):
            raise RuntimeError(f"the reference worker failed:\n{r.stderr[-4000:]}")
    with open(path, "rb") as f:
        return path, pickle.load(f)["entries"]


def run_ours(samples_path, n_entries, python=OUR_PYTHON):
    """Our results {entry index: {dtype: [got, ...]}} and the entries that crashed or hung
    {index: reason}. The worker announces each entry; when it dies or stalls inside one,
    that entry is recorded and a new worker continues after it."""
    out_path = os.path.join(os.path.dirname(samples_path), f"ours-{os.getpid()}.pkl")
    if os.path.exists(out_path):
        os.remove(out_path)
    crashed, start = {}, 0
    while start < n_entries:
        # stderr goes to a file: a pipe nobody reads until exit could fill and stall the worker
        err_file = open(out_path + ".err", "w+")
        p = subprocess.Popen([python, WORKER, "run", samples_path, out_path, str(start)], env=_env(),
                             stdout=subprocess.PIPE, stderr=err_file, text=True)
        current, deadline, buf = None, time.monotonic() + ENTRY_TIMEOUT + 60, ""
        try:
            while True:
                ready, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:  # stalled inside `current` (or while importing, current None)
                    p.kill()
                    p.wait()
                    idx = current if current is not None else start
                    crashed[idx] = f"hung for more than {ENTRY_TIMEOUT:.0f} s"
                    start = idx + 1
                    break
                line = p.stdout.readline()
                if not line:  # the worker exited
                    rc = p.wait()
                    if current is None and rc == 0:
                        start = n_entries
                    else:
                        idx = current if current is not None else start
                        err_file.seek(0)
                        err = err_file.read()[-300:].strip().replace("\n", " | ")
                        crashed[idx] = f"worker exited with {rc}: {err}"
                        start = idx + 1
                    break
                tag, idx = line.split()
                if tag == "B":
                    current, deadline = int(idx), time.monotonic() + ENTRY_TIMEOUT
                elif tag == "E":
                    current = None
                    if int(idx) == n_entries - 1:
                        start = n_entries
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()
            err_file.close()
            os.remove(out_path + ".err")
    results = {}
    if os.path.exists(out_path):
        with open(out_path, "rb") as f:
            while True:
                try:
                    i, res, mres = pickle.load(f)
                except EOFError:
                    break
                results[i] = (res, mres)
        os.remove(out_path)
    return results, crashed


def sweep():
    """The verdicts of every entry with samples, {key: (status, detail)}, for the function
    form and (second dict) for the method form of the entries that declare one."""
    samples_path, entries = ensure_reference()
    ours, crashed = run_ours(samples_path, len(entries))
    verdicts, method = {}, {}
    for i, rec in enumerate(entries):
        if not rec["dtypes"]:
            continue
        has_method = bool(rec.get("method"))
        if i in crashed or i not in ours:
            why = ("crash", crashed.get(i, "no result recorded"))
            verdicts[rec["key"]] = why
            if has_method:
                method[rec["key"]] = why
            continue
        res, mres = ours[i]
        verdicts[rec["key"]] = compare.judge_entry(rec, res)
        if has_method:
            mrec = {"key": rec["key"], "dtypes": {dt: (None, refs) for dt, refs in rec["method"].items()}}
            method[rec["key"]] = compare.judge_entry(mrec, mres)
    return verdicts, method


def counts(verdicts):
    c = {s: 0 for s in compare.STATUSES}
    for st, _ in verdicts.values():
        c[st] += 1
    c["entries"] = len(verdicts)
    return c


def summary(verdicts, method):
    c, m = counts(verdicts), counts(method)
    return (f"OpInfo sweep ({', '.join(DTYPES)}; <= {MAX_SAMPLES} samples per entry and dtype): function form: "
            f"{c['entries']} entries with samples: {c['agree']} agree, {c['refuse']} refuse, "
            f"{c['fail']} fail, {c['disagree']} disagree, {c['crash']} crash; method form: {m['entries']} entries "
            f"declare one: {m['agree']} agree, {m['refuse']} refuse, {m['fail']} fail, {m['disagree']} disagree, "
            f"{m['crash']} crash")


def load_floor():
    with open(FLOOR) as f:
        return json.load(f)


def write_floor(verdicts, method):
    agree = sorted(k for k, (st, _) in verdicts.items() if st == "agree")
    magree = sorted(k for k, (st, _) in method.items() if st == "agree")
    old = load_floor() if os.path.exists(FLOOR) else {}
    lost = sorted(set(old.get("agree", [])) - set(agree)) + sorted(set(old.get("method_agree", [])) - set(magree))
    if lost:
        raise SystemExit(f"not lowering the floor: entries no longer agreeing: {lost}")
    with open(FLOOR, "w") as f:
        json.dump({"min_agree": len(agree), "agree": agree, "min_method_agree": len(magree), "method_agree": magree},
                  f, indent=0)
        f.write("\n")


def main():
    verdicts, method = sweep()
    print(summary(verdicts, method))
    if "--details" in sys.argv:
        for form, v in (("", verdicts), ("method ", method)):
            for k, (st, d) in sorted(v.items(), key=lambda kv: (compare.STATUSES.index(kv[1][0]), kv[0])):
                if st != "agree":
                    print(f"{form}{st:9s} {k}: {d}")
    if "--update-floor" in sys.argv:
        write_floor(verdicts, method)


if __name__ == "__main__":
    main()
