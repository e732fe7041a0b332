"""The fuzzers' CI slices (issue 21, docs/RELIABILITY.md): a fixed-seed slice of the
operator fuzzer and of the file fuzzer, each run on both sides; any crash or hang of ours,
or a disagreement tests/fuzz/known.json does not list, fails. The full runs are one
command each (tests/fuzz/opfuzz.py, tests/fuzz/filefuzz.py). Also: the runner survives a
crashing or hanging case, and weights_only=True never runs code from the file."""
import json
import os
import pickle
import subprocess
import sys
import zipfile

import pytest

from conftest import REF_PYTHON, ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "fuzz"))
import filefuzz  # noqa: E402
import opfuzz  # noqa: E402

OP_SLICE = int(os.environ.get("TN_FUZZ_OP_CASES", "1200"))
FILE_SLICE = int(os.environ.get("TN_FUZZ_FILE_CASES", "400"))


@pytest.fixture(scope="module")
def workers(tmp_path_factory):
    """One worker per side for both slices: starting torch is most of a slice's cost on a
    loaded machine. Ours is this interpreter (the sanitized core under the ASan tier)."""
    d = str(tmp_path_factory.mktemp("fuzz-workers"))
    ours = opfuzz.Worker(sys.executable, "ours", d)
    ref = opfuzz.Worker(REF_PYTHON, "ref", d, filefuzz._ref_env())
    ours.start()
    ref.start()
    yield ours, ref
    ours.kill()
    ref.kill()


def _findings(d):
    with open(os.path.join(d, "findings.jsonl")) as f:
        return [json.loads(line) for line in f]


def test_op_fuzz_slice(tmp_path, workers):
    """Seed 0, the first OP_SLICE cases of the full run: no crash, no hang, nothing new."""
    st = opfuzz.fuzz(str(tmp_path), seed=0, cases=OP_SLICE, progress=False, workers=workers)
    bad = [f for f in _findings(tmp_path) if f["status"] == "new" and not f["category"].startswith("upstream-")]
    print(json.dumps({k: st[k] for k in ("counts", "agree", "rate", "restarts")}))
    assert st["next"] == OP_SLICE
    assert not bad, "\n".join(f"#{f['idx']} {f['op']} [{f['category']}] {f['detail'][:200]}" for f in bad[:20]) + \
        f"\n({len(bad)} findings; replay one with tests/fuzz/opfuzz.py --replay IDX)"
    # the slice really compared values, not only errors
    assert st["agree"]["value"] > OP_SLICE // 10


def test_file_fuzz_slice(tmp_path, workers):
    """Truncated, bit-flipped and adversarial checkpoints: no crash, no hang, nothing new.
    Under the ASan tier our side is the sanitized core (sys.executable), so a read outside
    a file's mapping ends the worker and counts as a crash."""
    st = filefuzz.fuzz(str(tmp_path), seed=0, cases=FILE_SLICE, progress=False, workers=workers)
    print(json.dumps(st))
    bad = [f for f in _findings(tmp_path) if f["status"] == "new" and not f["category"].startswith("upstream-")]
    assert not bad, "\n".join(f"#{f['idx']} {f['op']} [{f['category']}] {f['detail'][:200]}" for f in bad[:20])
    assert st["agree"]["value"] > FILE_SLICE // 20 and st["agree"]["exception"] > FILE_SLICE // 4


def test_runner_survives_crash_and_hang(tmp_path):
    """A case that segfaults or hangs its worker is recorded as such, the worker is
    restarted, and the cases after it still run."""
    w = opfuzz.Worker(sys.executable, "ours", str(tmp_path), dict(os.environ, TN_FUZZ_WARM="0"))
    w.start()
    try:
        cases = [{"idx": i, "seed": i, "op": "selftest", "spelling": ["selftest", k], "args": [], "kwargs": {}}
                 for i, k in enumerate(["ok", "segv", "ok", "hang", "ok"])]
        res = opfuzz.run_batch(w, cases, timeout=5)
    finally:
        w.kill()
    assert res[0] == res[2] == res[4] == ("ok", ("py", 7))
    # a plain build dies of SIGSEGV; under the ASan tier (TN_SANITIZER) ASan's own SEGV
    # handler reports the fault and exits with its exit code, 1
    assert res[1][:2] == ("crash", 1 if os.environ.get("TN_SANITIZER") else -11), res[1]
    assert res[3] == ("hang", 5)
    assert w.restarts == 2
    assert opfuzz.classify(("ok", ("py", 7)), res[1])[0] == "crash"


def test_known_list_has_a_reason_for_every_entry():
    doc = json.load(open(opfuzz.KNOWN))
    for k in doc["allow"]:
        assert doc["families"][k["family"]].strip(), k


MALICIOUS = r"""
import os, pickle, sys, zipfile, io
marker = sys.argv[1]
class Evil:
    def __reduce__(self):
        return (os.system, (f"touch {marker}",))
class Evil2:
    def __reduce__(self):
        return (eval, (f"open({marker!r}, 'w').write('x')",))
import torch
paths = []
for i, obj in enumerate([Evil(), {"w": torch.ones(2), "x": Evil2()}, [Evil()]]):
    p = marker + f".{i}.pt"
    torch.save(obj, p)
    paths.append(p)
# a legacy (non-zip) file: a raw pickle stream
p = marker + ".raw.pt"
with open(p, "wb") as f:
    pickle.dump(Evil(), f, protocol=2)
paths.append(p)
print(paths)
"""

LOAD_ALL = r"""
import json, os, sys, torch
out = []
for p in sys.argv[2:]:
    try:
        torch.load(p, weights_only=True)
        out.append("loaded")
    except Exception as e:
        out.append(type(e).__name__)
out.append(os.path.exists(sys.argv[1]))
print(json.dumps(out))
"""


def test_weights_only_load_never_runs_code_from_the_file(tmp_path):
    """Pickles whose reduce calls os.system / eval (zip archives and a raw legacy stream),
    written by upstream: weights_only=True refuses each with upstream's exception class and
    nothing runs (the marker file is never created); the same file with weights_only=False
    does run the code (so the test would notice a refusal that is not there)."""
    marker = str(tmp_path / "pwned")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PYTHONMALLOC")}
    made = subprocess.run([REF_PYTHON, "-c", MALICIOUS, marker], capture_output=True, text=True, env=env, timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    paths = eval(made.stdout.strip().splitlines()[-1])
    ours = subprocess.run([sys.executable, "-c", LOAD_ALL, marker] + paths, capture_output=True, text=True, timeout=300)
    assert ours.returncode == 0, ours.stderr[-2000:]
    got = json.loads(ours.stdout.strip().splitlines()[-1])
    ref = subprocess.run([REF_PYTHON, "-c", LOAD_ALL, marker] + paths, capture_output=True, text=True, env=env,
                         timeout=300)
    assert json.loads(ref.stdout.strip().splitlines()[-1]) == got
    assert got == ["UnpicklingError"] * len(paths) + [False]
    assert not os.path.exists(marker)
    import torch

    torch.load(paths[0], weights_only=False)  # the unsafe load does execute it: the file is real
    assert os.path.exists(marker)
