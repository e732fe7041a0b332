"""The operator fuzzer (issue 21 item 2): random valid and invalid arguments for every
operator our core has a kernel for, called through its public Python spellings on both
sides (ours in .venv, upstream in .venv-ref, one worker process each), compared as the
operator harness compares: same value within tolerance, or same exception class. A crash
or hang of our worker is recorded with the case and the run goes on with a new worker.

    .venv/bin/python tests/fuzz/opfuzz.py --cases 100000            # the full run
    .venv/bin/python tests/fuzz/opfuzz.py --state DIR --resume      # continue a run
    .venv/bin/python tests/fuzz/opfuzz.py --replay IDX [--seed S]   # one case, both sides
    .venv/bin/python tests/fuzz/opfuzz.py --summary DIR             # counts and findings

Cases are a pure function of (seed, index), so a run is resumable (the state file holds
the next index) and any finding is reproduced by its index. docs/RELIABILITY.md has the
design; tests/fuzz/known.json lists the disagreements we accept, each with why."""
import argparse
import fnmatch
import json
import os
import pickle
import random
import select
import struct
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

from optest import harness as H  # noqa: E402

OURS_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
REF_PYTHON = os.path.join(ROOT, ".venv-ref", "bin", "python")
KNOWN = os.path.join(HERE, "known.json")

# ---- value specs ------------------------------------------------------------------------
# A case is plain data (JSON-able) that worker.py turns into objects on each side:
#   ["none"] ["int", v] ["float", v] ["bool", b] ["complex", re, im] ["str", s]
#   ["dtype", name] ["layout", name] ["device", name] ["memfmt", name] ["gen", seed]
#   ["list", [...]] ["tuple", [...]] ["np", "int64", v] ["obj"] (a plain object())
#   ["tensor", shape, dtype, kind, layout, device]  kind: normal|special|int|extreme|pos
#       layout: contig|transposed|strided|expand (zero strides)|overlap|offset|huge_expand
#   ["t0", scalar spec, dtype]  a 0-dim tensor
#   ["ref", i]  the i-th tensor built so far (aliasing: out=, self and other the same)
#   ["view", i, how]  a view of the i-th tensor (flat, t, head, unsqueeze)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool",
          "complex64", "complex128"]
DTYPE_W = [30, 10, 5, 6, 3, 2, 4, 10, 3, 5, 2, 1]
RARE_DTYPES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "qint8", "complex32"]
HUGE_INTS = [2**31 - 1, 2**31, 2**32, 2**40, 2**62, 2**63 - 1, -2**63, -2**31, 2**63, -2**63 - 1, 2**64]
FLOATS = [0.0, 0.5, 1.0, -1.0, 2.5, -3.75, 1e-12, 1e308, -0.0, float("nan"), float("inf"), float("-inf")]
STRINGS = {
    "rounding_mode": ["trunc", "floor", "round"],
    "approximate": ["none", "tanh", "erf"],
    "padding": ["same", "valid", "full"],
    "mode": ["constant", "reflect", "replicate", "circular", "bilinear"],
    "side": ["left", "right"],
    "reduce": ["add", "multiply", "sum", "prod", "mean", "amax", "amin", "max"],
    "interpolation": ["linear", "lower", "higher", "midpoint", "nearest"],
    "indexing": ["ij", "xy"],
}
DIM_NAMES = ("dim", "dims", "dim0", "dim1", "dim2", "source", "destination", "start_dim", "end_dim", "axis",
             "axis0", "axis1")
INDEX_NAMES = ("index", "indices", "target", "offs", "repeats", "lengths", "tensor_indices_or_sections",
               "test_elements", "elements")


class Gen:
    """Random arguments for one case: a rank and base shape shared by its tensors (so a
    good share of calls are valid), a base dtype, and a probability of a bad argument."""

    def __init__(self, rng):
        self.r = rng
        self.rank = rng.choices([0, 1, 2, 3, 4, 5], [6, 20, 30, 20, 15, 3])[0]
        if rng.random() < 0.35:
            n = rng.choice([1, 2, 3, 4])
            self.shape = [n] * self.rank
        else:
            self.shape = [rng.choices([0, 1, 2, 3, 4, 5, 7], [3, 15, 25, 25, 15, 10, 7])[0] for _ in range(self.rank)]
        self.dtype = rng.choices(DTYPES, DTYPE_W)[0]
        self.bad = 0.0 if rng.random() < 0.35 else rng.choice([0.04, 0.1, 0.25])
        self.ntensors = 0

    # -- scalars
    def int_(self, name):
        r = self.r
        if name in DIM_NAMES or "dim" in name:
            return ["int", r.randint(-self.rank - 2, self.rank + 1)]
        x = r.random()
        if x < 0.08:
            return ["int", r.choice(HUGE_INTS)]
        if x < 0.2:
            return ["int", r.randint(-4, -1)]
        return ["int", r.choice([0, 1, 1, 2, 2, 3, 3, 4, 5, 7])]

    def float_(self, name):
        r = self.r
        if name in ("p", "alpha", "beta", "momentum", "eps", "lr", "weight_decay", "negative_slope"):
            return ["float", r.choice([0.0, 0.1, 0.5, 0.9, 1.0, -0.5, 1.5, 1e-5])]
        if r.random() < 0.15:
            return ["int", r.randint(-3, 3)]
        return ["float", r.choice(FLOATS)]

    def scalar(self, name):
        r = self.r
        x = r.random()
        if x < 0.4:
            return self.int_(name) if r.random() < 0.8 else ["int", r.choice([0, 1, 2, -1])]
        if x < 0.8:
            return ["float", r.choice(FLOATS)]
        if x < 0.88:
            return ["bool", r.random() < 0.5]
        if x < 0.94:
            return ["complex", r.choice([0.0, 1.0, -2.0]), r.choice([1.0, 0.5, 0.0])]
        return ["t0", ["float", r.choice([1.5, -2.0, 0.0])], r.choice([None, "float32", "int64"])]

    def dtype_(self):
        r = self.r
        if r.random() < 0.05:
            return ["dtype", r.choice(RARE_DTYPES)]
        return ["dtype", r.choices(DTYPES, DTYPE_W)[0]]

    def str_(self, name):
        pool = STRINGS.get(name) or sorted({s for v in STRINGS.values() for s in v})
        return ["str", self.r.choice(pool + ["", "bogus"])]

    # -- tensors
    def shape_(self):
        r = self.r
        x = r.random()
        if x < 0.6:
            return list(self.shape)
        if x < 0.72 and self.shape:  # a broadcastable relative: leading dims dropped or 1
            s = [1 if r.random() < 0.4 else d for d in self.shape]
            return s[r.randint(0, len(s)):] if r.random() < 0.4 else s
        if x < 0.77:
            return []
        if x < 0.82:
            return [0] + list(self.shape[1:]) if self.shape else [0]
        return [r.choice([0, 1, 2, 3, 5]) for _ in range(r.randint(0, 4))]

    def tensor(self, name, dtype=None):
        r = self.r
        self.ntensors += 1
        shape = self.shape_()
        if dtype is None:
            if name in INDEX_NAMES and r.random() < 0.7:
                dtype = "int64"
            elif "mask" in name and r.random() < 0.7:
                dtype = "bool"
            else:
                dtype = self.dtype if r.random() < 0.75 else r.choices(DTYPES, DTYPE_W)[0]
        kind = "int" if name in INDEX_NAMES else r.choices(["normal", "special", "int", "extreme", "pos"], [60, 12, 12, 6, 10])[0]
        layout = r.choices(["contig", "transposed", "strided", "expand", "overlap", "offset"], [62, 10, 8, 8, 6, 6])[0]
        device = "meta" if r.random() < 0.03 else "cpu"
        if r.random() < 0.003:  # an expanded view too large to materialise: ops must refuse, not abort
            big = r.choice([2**31, 2**40, 2**62])
            shape = [big] + [1] * r.randint(0, 2)
            return ["tensor", shape, dtype, "normal", "huge_expand", "cpu"]
        return ["tensor", shape, dtype, kind, layout, device]

    def bad_value(self):
        r = self.r
        return r.choice([["none"], ["str", "x"], ["obj"], ["float", float("nan")], ["int", r.choice(HUGE_INTS)],
                         ["list", []], ["bool", True], ["int", -1], ["list", [["int", 2**63]]],
                         ["tensor", [2, 3], "float32", "normal", "contig", "cpu"], ["np", "int64", 3],
                         ["complex", 1.0, 1.0], ["ref", r.randint(0, 3)], ["dtype", "float32"]])

    def value(self, ty, name):
        """A value for a schema argument of type `ty` (torchgen's type string)."""
        r = self.r
        if self.bad and r.random() < self.bad:
            return self.bad_value()
        if ty.endswith("?"):
            if r.random() < 0.35:
                return ["none"]
            ty = ty[:-1]
        if ty.endswith("]"):
            elem, _, n = ty[:-1].partition("[")
            return self.list_(elem, name, int(n) if n else None)
        if ty == "Tensor":
            if self.ntensors and r.random() < 0.05:
                return ["ref", r.randint(0, self.ntensors - 1)]
            if self.ntensors and r.random() < 0.03:
                return ["view", r.randint(0, self.ntensors - 1), r.choice(["flat", "t", "head", "unsqueeze"])]
            return self.tensor(name)
        if ty in ("int", "SymInt"):
            return self.int_(name)
        if ty == "float":
            return self.float_(name)
        if ty == "bool":
            return ["bool", r.random() < 0.5]
        if ty == "Scalar":
            return self.scalar(name)
        if ty == "ScalarType":
            return self.dtype_()
        if ty == "str":
            return self.str_(name)
        if ty == "Layout":
            return ["layout", "strided" if r.random() < 0.9 else "sparse_coo"]
        if ty == "Device":
            return ["device", "cpu" if r.random() < 0.85 else "meta"]
        if ty == "MemoryFormat":
            return ["memfmt", r.choice(["contiguous_format", "preserve_format", "channels_last"])]
        if ty == "Generator":
            return ["gen", r.randint(0, 1000)]
        if ty == "Dimname":
            return ["str", "N"]
        return ["none"]

    def list_(self, elem, name, fixed):
        r = self.r
        if elem in ("int", "SymInt"):
            x = r.random()
            if name in ("dims", "dim") and x < 0.5 and "dim" in name:  # permute-like: a permutation
                p = list(range(self.rank))
                r.shuffle(p)
                return ["list", [["int", d - (self.rank if r.random() < 0.3 else 0)] for d in p]]
            if name in ("size", "shape", "sizes") and x < 0.5:  # view/reshape/expand-like
                s = list(self.shape)
                if s and r.random() < 0.4:
                    s[r.randrange(len(s))] = -1
                if r.random() < 0.3:
                    s = [1] + s
                return ["list", [["int", d] for d in s]]
            n = fixed if fixed and r.random() < 0.7 else r.randint(0, 4)
            v = ["list", [self.int_(name) for _ in range(n)]]
            if fixed == 1 and n == 1 and r.random() < 0.3:  # int[1] also takes a bare int
                return v[1][0]
            return ["tuple", v[1]] if r.random() < 0.2 else v
        n = fixed if fixed else r.choices([0, 1, 2, 3, 4], [5, 25, 35, 20, 15])[0]
        if elem == "Tensor":
            return ["list", [self.tensor(name) for _ in range(n)]]
        if elem == "Tensor?":  # index lists: integer or boolean index tensors, or None
            out = []
            for _ in range(max(n, 1)):
                x = r.random()
                out.append(["none"] if x < 0.2 else self.tensor("index", "bool" if x > 0.85 else "int64"))
            return ["list", out]
        if elem == "float":
            return ["list", [self.float_(name) for _ in range(n)]]
        if elem == "bool":
            return ["list", [["bool", r.random() < 0.5] for _ in range(n)]]
        if elem == "Scalar":
            return ["list", [self.scalar(name) for _ in range(n)]]
        return ["list", [self.value(elem, name) for _ in range(n)]]


def parse_schema(schema):
    """(positional [(name, type, has_default)], kwarg_only [...], out [...]) of a schema."""
    from torchgen.model import FunctionSchema

    depth, text = 0, []
    for ch in schema:  # printed defaults ("[0, 1]") carry spaces torchgen's parser splits on
        depth += ch == "["
        depth -= ch == "]"
        if not (depth and ch == " " and text and text[-1] == ","):
            text.append(ch)
    fs = FunctionSchema.parse("".join(text))
    a = fs.arguments
    pos = [(x.name, str(x.type), x.default is not None) for x in a.flat_positional]
    kwo = [(x.name, str(x.type), x.default is not None) for x in a.flat_kwarg_only]
    out = [(x.name, str(x.type), False) for x in a.out]
    return pos, kwo, out


def case_seed(seed, idx):
    return zlib.crc32(f"{seed}|{idx}".encode()) | (idx << 32)


def make_case(targets, seed, idx):
    """The case of index `idx`: a pure function of (targets, seed, idx)."""
    cs = case_seed(seed, idx)
    r = random.Random(cs)
    t = targets[r.randrange(len(targets))]
    pos, kwo, out = t["parsed"]
    spells = [s for s in t["spellings"] if s[0] != "method" or (pos and pos[0][0] == "self" and pos[0][1] == "Tensor")]
    public = [s for s in spells if s[0] != "aten"]
    sp = r.choice(public) if public and r.random() < 0.8 else spells[-1]
    g = Gen(r)
    args, kwargs = [], {}
    # positional arguments: the required ones, then a random prefix of the defaulted ones
    nreq = max([i + 1 for i, (_, _, d) in enumerate(pos) if not d] or [0])
    npos = r.randint(nreq, len(pos)) if r.random() < 0.6 else len(pos)
    if g.bad and r.random() < g.bad / 2:
        npos = max(0, npos + r.choice([-1, 1]))  # a missing or an extra argument
    named = {}
    for i in range(npos):
        name, ty, _ = pos[i] if i < len(pos) else ("extra", "int", True)
        v = g.value(ty, name)
        args.append(v)
        named[name] = v
    for name, ty, has_default in kwo:
        if not has_default or r.random() < 0.5:
            kwargs[name] = named[name] = g.value(ty, name)
    for name, ty, _ in out:
        x = r.random()
        if x < 0.35 and g.ntensors:
            v = ["ref", r.randint(0, g.ntensors - 1)]  # out= aliasing an input
        elif x < 0.6:
            v = ["tensor", [0], g.dtype, "normal", "contig", "cpu"]  # resized by the op
        else:
            v = g.tensor(name)
        kwargs[name] = named[name] = v
    if sp[0] in ("torch", "nn", "torch.special", "torch.linalg", "torch.fft") and len(out) > 1:
        for name, _, _ in out:
            del kwargs[name]
        kwargs["out"] = ["tuple", [named[n] for n, _, _ in out]]
    if sp[0] == "pyfn":  # a Python wrapper: pass by its own parameter names
        params = sp[3]
        kw = {}
        for name, v in named.items():
            p = params[0] if name == "self" else name
            if p in params:
                kw[p] = v
        first = params[0]
        args = [kw.pop(first)] if first in kw else []
        kwargs = kw
        sp = sp[:3]
    return {"idx": idx, "seed": cs, "op": t["op"], "spelling": sp, "args": args, "kwargs": kwargs}


# ---- workers -----------------------------------------------------------------------------
class Worker:
    """A worker process on one side, restarted after a crash or hang."""

    def __init__(self, python, name, logdir, env=None):
        self.python, self.name, self.logdir, self.env = python, name, logdir, env
        self.proc = None
        self.restarts = 0

    def start(self, tries=3):
        """Starts the worker; a start that fails (a loaded machine can take minutes to
        import torch) is retried before the run gives up."""
        for attempt in range(tries):
            try:
                return self._start()
            except RuntimeError:
                self.kill()
                if attempt == tries - 1:
                    raise

    def _start(self):
        self.log = os.path.join(self.logdir, f"{self.name}.stderr")
        self.errf = open(self.log, "wb")
        env = dict(self.env or os.environ)
        self.proc = subprocess.Popen([self.python, os.path.join(HERE, "worker.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.errf, env=env, bufsize=0)
        self.buf = b""
        msg = self.read(float(os.environ.get("TN_FUZZ_START_TIMEOUT", "900")))
        if not msg or msg[0] != "ready":
            raise RuntimeError(f"{self.name} worker did not start: {self.stderr_tail()}")

    def send(self, obj):
        data = pickle.dumps(obj, protocol=4)
        try:
            self.proc.stdin.write(struct.pack("<I", len(data)) + data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass

    def read(self, timeout):
        """The next frame, or None on EOF / timeout (self.timed_out tells which)."""
        self.timed_out = False
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            if len(self.buf) >= 4:
                (n,) = struct.unpack("<I", self.buf[:4])
                if len(self.buf) >= 4 + n:
                    obj = pickle.loads(self.buf[4:4 + n])
                    self.buf = self.buf[4 + n:]
                    return obj
            left = deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait()
            self.errf.close()

    def status(self):
        rc = self.proc.wait(timeout=30) if not self.timed_out else None
        return rc

    def stderr_tail(self, n=1500):
        """The sanitizer's first report lines (its "ERROR:" or "runtime error:" line and
        the top frames: where it happened) when the log has one, then the log's last n bytes."""
        try:
            with open(self.log, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = text.splitlines()
        first = next((i for i, l in enumerate(lines) if "ERROR: " in l or "runtime error:" in l), None)
        head = "\n".join(lines[first:first + 8]) + "\n...\n" if first is not None else ""
        return head + text[-n:]


def run_batch(worker, batch, timeout):
    """Runs cases on one worker; returns {idx: result}. A crash or hang of the worker gives
    the case it was running ("crash", signal/returncode, stderr tail) or ("hang", timeout),
    restarts the worker and continues with the cases after it."""
    results = {}
    pending = list(batch)
    while pending:
        worker.send([(c["idx"], c) for c in pending])
        for c in pending:
            msg = worker.read(timeout)
            if msg is None:
                if worker.timed_out:
                    results[c["idx"]] = ("hang", timeout)
                    worker.kill()
                else:
                    rc = worker.proc.wait()
                    results[c["idx"]] = ("crash", rc, worker.stderr_tail())
                    worker.kill()
                worker.restarts += 1
                worker.start()
                break
            results[msg[0]] = msg[1]
        pending = [c for c in pending if c["idx"] not in results]
    return results


def run_both(ours, ref, batch, timeout):
    """Both sides at once (two processes): ours in a thread-free interleaving via two
    sequential batch runs would double the wall time, so upstream's batch is sent first and
    read after ours."""
    import threading

    box = {}

    def run_ref():
        try:
            box["ref"] = run_batch(ref, batch, timeout)
        except BaseException as e:  # re-raised on the caller's thread
            box["error"] = e

    th = threading.Thread(target=run_ref)
    th.start()
    got = run_batch(ours, batch, timeout)
    th.join()
    if "error" in box:
        raise box["error"]
    return box["ref"], got


# ---- comparison ----------------------------------------------------------------------------
CASE = H.Case("fuzz", "", [], [])


def classify(ref, got):
    """(category, detail) of a disagreement, or None when the two sides agree."""
    if got[0] == "crash":
        return "crash", f"signal/exit {got[1]}"
    if got[0] == "hang":
        return ("both-hang" if ref[0] == "hang" else "hang"), f"no result in {got[1]} s"
    if ref[0] in ("crash", "hang"):
        return "upstream-" + ref[0], str(ref[1])
    if ref[0] == "builderr" or got[0] == "builderr":
        if ref[0] == got[0] == "builderr":
            return None
        return "build", f"inputs: ours {got[:2]} upstream {ref[:2]}"
    if got[0] == "err" and ref[0] == "err":
        return None if got[1] == ref[1] else ("exception-class", f"ours {got[1]} upstream {ref[1]}: {got[2]!r} vs {ref[2]!r}")
    if got[0] == "err":
        if got[1] == "NotImplementedError" and "torchnative" in got[2]:
            return "refusal", got[2]
        return "ours-raises", f"ours {got[1]}: {got[2]!r}; upstream returns"
    if ref[0] == "err":
        return "ours-returns", f"upstream {ref[1]}: {ref[2]!r}; ours returns"
    if ref[1] == got[1]:
        return None
    try:
        d = H.compare_values(CASE, ref[1], got[1])
    except (ValueError, MemoryError) as e:  # e.g. an empty result of shape (2**62, 0): numpy refuses it
        d = f"not comparable as arrays: {e}"
    return None if d is None else ("value", d)


def has_alias(case):
    """Whether an argument of the case aliases another (["ref"], ["view"]), or a written-to
    tensor overlaps itself (an in-place self or out= with the "overlap" layout): upstream's
    result then depends on its order of reads and writes, ours computes first and copies."""
    def walk(v):  # a spec ["kind", ...] or a plain list of specs (a tuple's items)
        if not isinstance(v, list) or not v:
            return False
        if isinstance(v[0], str):
            return v[0] in ("ref", "view") or any(walk(x) for x in v[1:])
        return any(walk(x) for x in v)

    def overlapping(v):  # a self-overlapping tensor, or a list (in-place foreach) holding one
        if isinstance(v, list) and v and v[0] in ("list", "tuple"):
            return any(overlapping(x) for x in v[1])
        return isinstance(v, list) and v and v[0] == "tensor" and v[4] == "overlap"
    name = case["op"].split(".")[0]
    written = ([case["args"][0]] if name.endswith("_") and case["args"] else []) + list(case["kwargs"].values())
    return (any(walk(v) for v in case["args"]) or any(walk(v) for v in case["kwargs"].values())
            or any(overlapping(v) for v in written))


# Findings that are never acceptable, whatever known.json says.
FATAL = ("crash", "hang")


def load_known(path=KNOWN):
    """The accepted disagreements: entries {op (glob), category ("a|b"), family, match?};
    each family's reason is in the file's "families" table (the why of every entry)."""
    with open(path) as f:
        doc = json.load(f)
    for k in doc["allow"]:
        if k["family"] not in doc["families"]:
            raise ValueError(f"known.json: entry {k} has no reason (family {k['family']!r} is not described)")
    return doc["allow"]


def family_of(cat, detail):
    """The family a new finding most likely belongs to (a suggestion for known.json)."""
    if cat in ("refusal", "value-aliased"):
        return cat
    if cat.startswith("upstream-"):
        return "upstream-crash"
    if cat == "both-hang":
        return "both-slow"
    if cat == "exception-class":
        if detail.startswith("ours NotImplementedError"):
            return "refusal-first"
        return "check-order"
    if cat == "ours-raises":
        if "not implemented for" in detail:
            return "dtype-coverage"
        if "same device" in detail or "cross-device" in detail:
            return "mixed-device"
        if "more than one element of the written-to tensor" in detail:
            return "inplace-overlap"
        if "valid value for reduction" in detail:
            return "reduction-enum"
    if cat == "ours-returns" and "pin_memory" in detail:
        return "pin-memory"
    if cat == "value" and ("!= 6" in detail or "!= 4" in detail or "' != " in detail):
        return "ops-path-return-types"
    if cat == "ours-returns":
        if any(s in detail for s in ("out tensor", "non-boolean outputs", "desired output type", "cross-device",
                                     "only supports bool tensor for result", "resize storage", "doesn't match the broadcast")):
            return "derived-out-checks"
        if "without overflow" in detail:
            return "scalar-range"
        if "Expected a value of type" in detail:
            return "ops-schema-leniency"
    return "individual"


def triage(state_dir, write=False):
    """Prints known.json entries for the run's new findings (one per op and category), or
    with write=True adds them to known.json (each under its family's reason)."""
    seen = {}
    with open(os.path.join(state_dir, "findings.jsonl")) as f:
        for line in f:
            rec = json.loads(line)
            if rec["status"] != "new" or rec["category"] in FATAL:
                continue
            key = (rec["op"], rec["category"])
            if key not in seen:
                seen[key] = {"op": rec["op"], "category": rec["category"],
                             "family": family_of(rec["category"], rec["detail"]), "example": rec["detail"][:160]}
    entries = sorted(seen.values(), key=lambda e: (e["family"], e["op"]))
    if not write:
        print(json.dumps(entries, indent=1))
        return
    with open(KNOWN) as f:
        doc = json.load(f)
    have = {(k["op"], k["category"]) for k in doc["allow"]}
    for e in entries:
        if e["family"] == "individual":
            e["family"] = "open"
        if (e["op"], e["category"]) not in have and not allowed(doc["allow"], e["op"], e["category"], e["example"]):
            doc["allow"].append(e)
    write_known(doc)


def write_known(doc):
    """Writes known.json in its one-entry-per-line layout."""
    with open(KNOWN, "w") as f:
        f.write('{\n "about": ' + json.dumps(doc["about"]) + ',\n "families": ' +
                json.dumps(doc["families"], indent=2).replace("\n", "\n ") + ',\n "allow": [\n')
        f.write(",\n".join("  " + json.dumps(k) for k in doc["allow"]) + "\n ]\n}\n")


def allowed(known, op, cat, detail):
    for k in known:
        if fnmatch.fnmatch(op, k["op"]) and cat in k["category"].split("|") and k.get("match", "") in detail:
            return k
    return None


# ---- driver ------------------------------------------------------------------------------
def load_targets(cache=None):
    if cache and os.path.exists(cache):
        with open(cache) as f:
            targets = json.load(f)
    else:
        out = subprocess.run([OURS_PYTHON, os.path.join(HERE, "inventory.py")], capture_output=True, text=True,
                             timeout=300)
        if out.returncode:
            raise RuntimeError(out.stderr[-3000:])
        targets = json.loads(out.stdout)
        if cache:
            with open(cache, "w") as f:
                json.dump(targets, f)
    for t in targets:
        t["parsed"] = parse_schema(t["schema"])
    return targets


def fuzz(state_dir, seed=0, cases=1000, batch=40, timeout=20.0, ours_python=OURS_PYTHON, ours_env=None,
         progress=True, budget_s=None, workers=None):
    """Runs (or resumes) a fuzz run in state_dir until `cases` cases are done or budget_s
    seconds pass; returns the state dict. Findings go to state_dir/findings.jsonl.
    workers: an (ours, ref) pair of started Workers to use (and leave running)."""
    os.makedirs(state_dir, exist_ok=True)
    sp = os.path.join(state_dir, "state.json")
    if os.path.exists(sp):
        with open(sp) as f:
            state = json.load(f)
        seed = state["seed"]
    else:
        state = {"seed": seed, "next": 0, "counts": {}, "agree": {"value": 0, "exception": 0}, "seconds": 0.0,
                 "restarts": {"ours": 0, "ref": 0}}
    targets = load_targets(os.path.join(state_dir, "targets.json"))
    state["targets"] = len(targets)
    known = load_known()
    ref_env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS",
                                                               "UBSAN_OPTIONS", "PYTHONMALLOC", "TN_SANITIZER")}
    if workers:
        ours, ref = workers
    else:
        ours = Worker(ours_python, "ours", state_dir, ours_env)
        ref = Worker(REF_PYTHON, "ref", state_dir, ref_env)
        ours.start()
        ref.start()
    t0 = time.monotonic()
    done0 = state["next"]
    findings = open(os.path.join(state_dir, "findings.jsonl"), "a")
    try:
        while state["next"] < cases:
            if budget_s is not None and time.monotonic() - t0 > budget_s:
                break
            lo = state["next"]
            hi = min(cases, lo + batch)
            cs = [make_case(targets, seed, i) for i in range(lo, hi)]
            rres, ores = run_both(ours, ref, cs, timeout)
            for c in cs:
                i = c["idx"]
                r, g = rres[i], ores[i]
                res = classify(r, g)
                if res is None:
                    key = "exception" if g[0] == "err" else "value"
                    state["agree"][key] += 1
                    continue
                cat, detail = res
                if cat == "value" and has_alias(c):
                    cat = "value-aliased"
                k = None if cat in FATAL else allowed(known, c["op"], cat, detail)
                tag = "known" if k else "new"
                state["counts"][f"{cat}:{tag}"] = state["counts"].get(f"{cat}:{tag}", 0) + 1
                rec = {"idx": i, "op": c["op"], "spelling": c["spelling"], "category": cat, "status": tag,
                       "detail": detail[:400], "case": c}
                if g[0] == "crash":
                    rec["stderr"] = g[2][-2500:]
                findings.write(json.dumps(rec, default=str) + "\n")
                if progress and tag == "new":
                    print(f"  [{cat}] #{i} {c['op']} via {c['spelling'][0]}: {detail[:160]}", flush=True)
            findings.flush()
            state["next"] = hi
            state["seconds"] += 0.0
            state["restarts"] = {"ours": state["restarts"]["ours"] + ours.restarts,
                                 "ref": state["restarts"]["ref"] + ref.restarts}
            ours.restarts = ref.restarts = 0
            el = time.monotonic() - t0
            state["rate"] = (state["next"] - done0) / el if el > 0 else 0.0
            with open(sp + ".tmp", "w") as f:
                json.dump(state, f, indent=1)
            os.replace(sp + ".tmp", sp)
            if progress and (hi // batch) % 25 == 0:
                print(f"{hi} cases, {state['rate']:.0f}/s, {state['counts']}", flush=True)
    finally:
        el = time.monotonic() - t0
        state["seconds"] = state.get("seconds", 0.0) + el
        with open(sp + ".tmp", "w") as f:
            json.dump(state, f, indent=1)
        os.replace(sp + ".tmp", sp)
        findings.close()
        if not workers:
            ours.kill()
            ref.kill()
    return state


def replay(idx, seed, targets_cache=None):
    targets = load_targets(targets_cache)
    c = make_case(targets, seed, idx)
    print(json.dumps(c, default=str))
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        ours, ref = Worker(OURS_PYTHON, "ours", d), Worker(REF_PYTHON, "ref", d)
        ours.start()
        ref.start()
        try:
            r, g = run_both(ours, ref, [c], 60)
        finally:
            ours.kill()
            ref.kill()
    print("upstream:", r[idx])
    print("ours:    ", g[idx])
    print("verdict: ", classify(r[idx], g[idx]))


def recheck(state_dir, family=None, op=None, limit=None, out=None, prune=False):
    """Reruns, on both sides, the stored cases of a run's findings that known.json files
    under `family` (and/or whose operator matches the glob `op`), without touching the
    run's state; prints per (op, category) how many still disagree and how many agree now.
    out: a path to write the rerun verdicts to (one JSON line per case). prune: remove from
    known.json the entries (exact operator, category) all of whose rerun cases agree."""
    known = load_known()
    cases = []
    with open(os.path.join(state_dir, "findings.jsonl")) as f:
        for line in f:
            rec = json.loads(line)
            if rec["category"] in FATAL:
                continue
            k = allowed(known, rec["op"], rec["category"], rec["detail"])
            if family and (k["family"] if k else "unlisted") != family:
                continue
            if op and not fnmatch.fnmatch(rec["op"], op):
                continue
            cases.append(rec)
    cases = cases[:limit] if limit else cases
    import tempfile

    by = {}
    with tempfile.TemporaryDirectory() as d:
        ours, ref = Worker(OURS_PYTHON, "ours", d), Worker(REF_PYTHON, "ref", d)
        ours.start()
        ref.start()
        sink = open(out, "w") if out else None
        try:
            for lo in range(0, len(cases), 40):
                batch = cases[lo:lo + 40]
                rres, ores = run_both(ours, ref, [r["case"] for r in batch], 20.0)
                for rec in batch:
                    i = rec["idx"]
                    res = classify(rres[i], ores[i])
                    if res and res[0] == "value" and has_alias(rec["case"]):
                        res = ("value-aliased", res[1])
                    key = (rec["op"], rec["category"])
                    slot = by.setdefault(key, {"agree": 0, "still": 0, "now": {}})
                    if res is None:
                        slot["agree"] += 1
                    else:
                        slot["still"] += 1
                        slot["now"].setdefault(res[0], (i, res[1][:140]))
                    if sink:
                        sink.write(json.dumps({"idx": i, "op": rec["op"], "was": rec["category"],
                                               "now": res[0] if res else "agree",
                                               "detail": res[1][:400] if res else ""}) + "\n")
        finally:
            ours.kill()
            ref.kill()
            if sink:
                sink.close()
    for (o, cat), s in sorted(by.items()):
        now = "; ".join(f"{c} #{i}: {d}" for c, (i, d) in s["now"].items())
        print(f"{o:45} {cat:15} agree {s['agree']:3} still {s['still']:3}  {now}")
    print(f"{len(cases)} cases: {sum(s['agree'] for s in by.values())} agree now")
    if prune:
        fixed = {key for key, s in by.items() if s["still"] == 0}
        with open(KNOWN) as f:
            doc = json.load(f)
        keep = [k for k in doc["allow"] if (k["op"], k["category"]) not in fixed
                or (family and k["family"] != family)]
        print(f"pruned {len(doc['allow']) - len(keep)} known.json entries")
        doc["allow"] = keep
        write_known(doc)


def summary(state_dir):
    with open(os.path.join(state_dir, "state.json")) as f:
        state = json.load(f)
    print(json.dumps({k: v for k, v in state.items() if k != "targets"}, indent=1))
    by = {}
    with open(os.path.join(state_dir, "findings.jsonl")) as f:
        for line in f:
            rec = json.loads(line)
            key = (rec["category"], rec["status"], rec["op"])
            by.setdefault(key, []).append(rec)
    for (cat, tag, op), recs in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0], -len(kv[1]))):
        print(f"{tag:5} {cat:16} {op:40} {len(recs):5}  #{recs[0]['idx']}: {recs[0]['detail'][:120]}")
    # cases per family of the accepted list (findings matched against known.json as it is now)
    known, fam = load_known(), {}
    for recs in by.values():
        for r in recs:
            k = None if r["category"] in FATAL else allowed(known, r["op"], r["category"], r["detail"])
            key = k["family"] if k else ("FATAL " + r["category"] if r["category"] in FATAL else "unlisted")
            fam[key] = fam.get(key, 0) + 1
    print("cases by family:", json.dumps(dict(sorted(fam.items(), key=lambda kv: -kv[1]))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state", default=os.path.join(ROOT, "build", "fuzz", "ops"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=100000)
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds a case may take before it counts as a hang: 20, or 60 under a sanitizer "
                         "build (TN_SANITIZER set by scripts/asan.sh: about 3x slower, so the same bound)")
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--budget", type=float, default=None, help="stop after this many seconds (resume later)")
    ap.add_argument("--resume", action="store_true", help="continue the run in --state")
    ap.add_argument("--replay", type=int, default=None, metavar="IDX")
    ap.add_argument("--summary", metavar="DIR")
    ap.add_argument("--triage", metavar="DIR", help="print known.json entries for DIR's new findings")
    ap.add_argument("--write", action="store_true", help="with --triage: add them to known.json")
    ap.add_argument("--recheck", metavar="DIR", help="rerun DIR's findings (--family/--op select) on both sides")
    ap.add_argument("--family", help="with --recheck: findings known.json files under this family ('unlisted': none)")
    ap.add_argument("--op", help="with --recheck: findings whose operator matches this glob")
    ap.add_argument("--limit", type=int, default=None, help="with --recheck: at most this many cases")
    ap.add_argument("--out", help="with --recheck: write each case's verdict to this JSON-lines file")
    ap.add_argument("--prune", action="store_true", help="with --recheck: drop known.json entries whose cases all agree")
    a = ap.parse_args()
    if a.recheck:
        return recheck(a.recheck, a.family, a.op, a.limit, a.out, a.prune)
    if a.summary:
        return summary(a.summary)
    if a.triage:
        return triage(a.triage, a.write)
    if a.replay is not None:
        return replay(a.replay, a.seed)
    if not a.resume and os.path.exists(os.path.join(a.state, "state.json")):
        sys.exit(f"{a.state} holds a run: --resume to continue it, or remove it")
    # under scripts/asan.sh this interpreter is the sanitized one: our worker runs on it
    ours = sys.executable if os.environ.get("TN_SANITIZER") else OURS_PYTHON
    timeout = a.timeout if a.timeout is not None else (60.0 if os.environ.get("TN_SANITIZER") else 20.0)
    st = fuzz(a.state, a.seed, a.cases, a.batch, timeout, budget_s=a.budget, ours_python=ours)
    print(json.dumps({k: v for k, v in st.items() if k != "targets"}, indent=1))


if __name__ == "__main__":
    main()
