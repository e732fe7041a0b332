"""The OpInfo sweep's worker process, run under either torch (our .venv or upstream's .venv-ref).

    python worker.py gen OUT N DTYPES...     upstream: make the samples, run every form the entry
                                             declares on them, pickle all
    python worker.py run SAMPLES OUT START END   ours: replay the shipped samples of entries
                                             [START, END) (SAMPLES: gen's files, comma-separated)

The forms (FORMS): the function form; the Tensor method, in-place variant and `out=` form
where the entry declares them (method_variant, inplace_variant, supports_out). In-place
and out= results are what the caller sees: whether the returned object is the mutated
tensor (the out tensors), and that tensor's contents afterwards. The out= tensors are made
from upstream's function result (zeros of its dtype and shape, shipped as a spec), so both
sides write into the same kind of tensor whatever our function form returns.

`gen` is the one side that draws random sample inputs: each (entry, dtype) draws its samples
after torch.manual_seed(crc32(key|dtype)), each sample is shipped as torch.save bytes, so
ours replays exactly upstream's tensors (strides and shared storage included). Before every
operator call both sides seed torch.manual_seed(crc32(key|dtype|i)), so random operators
draw the same numbers where our generator matches upstream's.

`run` announces each entry on stdout ("B i" before, "E i" after) and appends one pickle
record per finished entry to OUT, so the driver can tell which entry a crash or hang hit
and restart after it."""
import io
import os
import pickle
import re
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
# a few entries draw samples of megabytes (grid_sampler_3d: 230 MB for 40 samples); larger
# samples are not shipped, which keeps the cache small and the sweep within its budget
MAX_SAMPLE_BYTES = 256 * 1024
# the functions that decide the shipped samples and upstream's results: the driver keys the
# reference cache on their source
# the driver's --only: a regular expression on entry keys; `run` replays no other entry
ONLY_ENV = "TN_OPINFO_ONLY"
REFERENCE_CODE = ("_import_op_db", "entry_key", "seed_of", "encode", "out_spec", "make_out", "call",
                  "declared_forms", "gen", "_load")


def _import_op_db():
    # common_utils parses sys.argv at import time; the sweep's own arguments are not its
    sys.path.insert(0, os.path.join(HERE, "stubs"))
    argv, sys.argv = sys.argv, sys.argv[:1]
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    finally:
        sys.argv = argv
    return op_db


def entry_key(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def seed_of(*parts):
    return zlib.crc32("|".join(str(p) for p in parts).encode())


def encode(torch, v):
    """A result as plain data both sides produce alike: ('tensor', dtype, shape, bytes),
    ('seq', type label, [...]) — the label tells list, tuple and structseq apart —
    ('py', value) for Python scalars, ('repr', text) for anything else."""
    if isinstance(v, torch.Tensor):
        t = v.detach()
        if t.layout != torch.strided:
            return ("repr", f"layout {t.layout}")
        if t.is_meta:
            return ("meta", str(t.dtype), tuple(t.shape))
        if t.is_complex():
            t = t.resolve_conj()
        t = t.resolve_neg()
        # numpy's tobytes writes C order whatever the strides (zero strides of expand too);
        # bfloat16 has no numpy dtype, its bits travel as int16
        raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes() if t.numel() else b""
        return ("tensor", str(t.dtype).replace("torch.", ""), tuple(t.shape), raw)
    if isinstance(v, torch.Size):
        return ("py", ("Size", tuple(v)))
    if isinstance(v, (tuple, list)):
        tp = type(v)
        label = tp.__name__ if tp in (tuple, list) else f"{tp.__module__}.{tp.__qualname__}"
        return ("seq", label, [encode(torch, x) for x in v])
    if isinstance(v, (bool, int, float, complex, str, type(None))):
        return ("py", v)
    if isinstance(v, (torch.dtype, torch.device)):
        return ("py", str(v))
    return ("repr", type(v).__name__)


FORMS = ("function", "method", "inplace", "out")


def out_spec(res):
    """What an out= call is given for upstream's function result `res` (call's return value):
    ('t', dtype, shape) for a tensor, ('seq', [...]) for a tuple or list of tensors, None when
    the call raised or returned no tensor."""
    if res[0] != "ok":
        return None
    v = res[1]
    if v[0] == "tensor":
        return ("t", v[1], tuple(v[2]))
    if v[0] == "seq" and v[2] and all(x[0] == "tensor" for x in v[2]):
        return ("seq", [("t", x[1], tuple(x[2])) for x in v[2]])
    return None


def make_out(torch, spec):
    if spec[0] == "t":
        return torch.zeros(spec[2], dtype=getattr(torch, spec[1]))
    return tuple(make_out(torch, s) for s in spec[1])


def call(torch, op, sample, seed, form="function", spec=None):
    """Runs one form of `op` on `sample`: ('ok', encoded) or ('err', class, first line).
    In-place and out= results encode as ('seq', form, [is the mutated object returned, its
    contents]); the out= form's tensors are made from `spec` (out_spec of upstream's result)."""
    try:
        torch.manual_seed(seed)
        x, args, kwargs = sample
        if form == "function":
            return ("ok", encode(torch, op(x, *args, **kwargs)))
        if form == "method":
            return ("ok", encode(torch, op.method_variant(x, *args, **kwargs)))
        if form == "inplace":
            got = op.inplace_variant(x, *args, **kwargs)
            return ("ok", ("seq", "inplace", [("py", got is x), encode(torch, x)]))
        out = make_out(torch, spec)
        got = op(x, *args, **kwargs, out=out)
        same = got is out if isinstance(out, torch.Tensor) else \
            isinstance(got, tuple) and len(got) == len(out) and all(a is b for a, b in zip(got, out))
        return ("ok", ("seq", "out", [("py", same), encode(torch, out)]))
    except Exception as e:  # the exception class is part of the comparison
        msg = str(e).strip().splitlines()
        return ("err", type(e).__name__, msg[0][:300] if msg else "")


def declared_forms(op):
    """The forms beyond the function form that `op` declares."""
    return [f for f, has in (("method", op.method_variant is not None), ("inplace", op.inplace_variant is not None),
                             ("out", bool(op.supports_out))) if has]


def gen(out_path, n, dtypes):
    import torch

    op_db = _import_op_db()
    entries = []
    for op in op_db:
        key = entry_key(op)
        rec = {"key": key, "dtypes": {}}
        try:
            supported = {str(d).replace("torch.", "") for d in op.supported_dtypes("cpu")}
        except Exception as e:
            rec["error"] = f"supported_dtypes: {type(e).__name__}"
            entries.append(rec)
            continue
        for dt in dtypes:
            if dt not in supported:
                continue
            samples = []
            try:
                torch.manual_seed(seed_of(key, dt))
                it = op.sample_inputs("cpu", getattr(torch, dt), requires_grad=False)
                for s in it:
                    buf = io.BytesIO()
                    try:
                        torch.save((s.input, tuple(s.args), dict(s.kwargs)), buf)
                    except Exception:  # a sample holding something unpicklable cannot be shipped
                        rec["unshippable"] = rec.get("unshippable", 0) + 1
                        continue
                    if buf.tell() > MAX_SAMPLE_BYTES:
                        rec["too_large"] = rec.get("too_large", 0) + 1
                        continue
                    samples.append(buf.getvalue())
                    if len(samples) == n:
                        break
            except Exception as e:
                rec.setdefault("sample_errors", {})[dt] = f"{type(e).__name__}: {str(e)[:200]}"
            # the reference runs on a fresh copy of what is shipped, exactly as ours will
            results = [call(torch, op, _load(torch, b), seed_of(key, dt, i)) for i, b in enumerate(samples)]
            if samples:
                rec["dtypes"][dt] = (samples, results)
                forms = rec.setdefault("forms", {})
                for form in declared_forms(op):
                    specs = None
                    if form == "out":  # samples whose function result is no tensor get no out= call
                        specs = [out_spec(r) for r in results]
                        rec.setdefault("out_specs", {})[dt] = specs
                    forms.setdefault(form, {})[dt] = [
                        None if specs is not None and specs[i] is None else
                        call(torch, op, _load(torch, b), seed_of(key, dt, i), form, specs[i] if specs else None)
                        for i, b in enumerate(samples)]
        entries.append(rec)
    with open(out_path + ".tmp", "wb") as f:
        pickle.dump({"torch": torch.__version__, "entries": entries}, f, protocol=4)
    os.replace(out_path + ".tmp", out_path)


def _load(torch, blob):
    return torch.load(io.BytesIO(blob), weights_only=False)


def _replay(torch, op, key, dt, j, blob, form="function", spec=None):
    try:
        sample = _load(torch, blob)
    except Exception as e:
        return ("load", type(e).__name__, str(e).splitlines()[0][:300] if str(e) else "")
    if op is None:
        return ("err", "KeyError", f"no op_db entry {key}")
    return call(torch, op, sample, seed_of(key, dt, j), form, spec)


def run(samples_paths, out_path, start, end):
    """Replays the samples of every dtype file in `samples_paths` (comma-separated, one file per
    dtype, all listing op_db's entries in the same order) of entries [start, end)."""
    import torch

    op_db = _import_op_db()
    by_key = {entry_key(op): op for op in op_db}
    files = []
    for p in samples_paths.split(","):
        with open(p, "rb") as f:
            files.append(pickle.load(f)["entries"])
    only = os.environ.get(ONLY_ENV)
    with open(out_path, "ab") as out:
        for i in range(start, min(end, len(files[0]))):
            print("B", i, flush=True)
            res = {}
            for entries in files:
                if only and not re.search(only, entries[i]["key"]):
                    continue
                rec = entries[i]
                op = by_key.get(rec["key"])
                for dt, (samples, _) in rec["dtypes"].items():
                    res.setdefault("function", {})[dt] = [_replay(torch, op, rec["key"], dt, j, blob)
                                                          for j, blob in enumerate(samples)]
                    for form, per_dt in rec.get("forms", {}).items():
                        specs = rec.get("out_specs", {}).get(dt)
                        res.setdefault(form, {})[dt] = [
                            None if ref is None else
                            _replay(torch, op, rec["key"], dt, j, blob, form, specs[j] if specs else None)
                            for j, (blob, ref) in enumerate(zip(samples, per_dt[dt]))]
            pickle.dump((i, res), out, protocol=4)
            out.flush()
            print("E", i, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    elif sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        raise SystemExit(__doc__)
