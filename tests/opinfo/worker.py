"""The OpInfo sweep's worker process, run under either torch (our .venv or upstream's .venv-ref).

    python worker.py gen OUT N DTYPES...     upstream: make the samples, run them (function form,
                                             and method form where the entry declares one), pickle all
    python worker.py run SAMPLES OUT START   ours: replay the shipped samples from entry START

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
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
# a few entries draw samples of megabytes (grid_sampler_3d: 230 MB for 40 samples); larger
# samples are not shipped, which keeps the cache small and the sweep within its budget
MAX_SAMPLE_BYTES = 256 * 1024


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


def call(torch, op, sample, seed, method=False):
    """Runs the function form of `op` (its method form with method=True) on `sample`:
    ('ok', encoded) or ('err', class, first line)."""
    try:
        torch.manual_seed(seed)
        fn = op.method_variant if method else op
        out = fn(sample[0], *sample[1], **sample[2])
        return ("ok", encode(torch, out))
    except Exception as e:  # the exception class is part of the comparison
        msg = str(e).strip().splitlines()
        return ("err", type(e).__name__, msg[0][:300] if msg else "")


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
                if op.method_variant is not None:  # the Tensor method the entry declares
                    rec.setdefault("method", {})[dt] = [call(torch, op, _load(torch, b), seed_of(key, dt, i), True)
                                                        for i, b in enumerate(samples)]
        entries.append(rec)
    with open(out_path + ".tmp", "wb") as f:
        pickle.dump({"torch": torch.__version__, "entries": entries}, f, protocol=4)
    os.replace(out_path + ".tmp", out_path)


def _load(torch, blob):
    return torch.load(io.BytesIO(blob), weights_only=False)


def _replay(torch, op, key, dt, j, blob, method):
    try:
        sample = _load(torch, blob)
    except Exception as e:
        return ("load", type(e).__name__, str(e).splitlines()[0][:300] if str(e) else "")
    if op is None:
        return ("err", "KeyError", f"no op_db entry {key}")
    return call(torch, op, sample, seed_of(key, dt, j), method)


def run(samples_path, out_path, start):
    import torch

    op_db = _import_op_db()
    by_key = {entry_key(op): op for op in op_db}
    with open(samples_path, "rb") as f:
        entries = pickle.load(f)["entries"]
    with open(out_path, "ab") as out:
        for i in range(start, len(entries)):
            rec = entries[i]
            print("B", i, flush=True)
            op = by_key.get(rec["key"])
            res, mres = {}, {}
            for dt, (samples, _) in rec["dtypes"].items():
                res[dt] = [_replay(torch, op, rec["key"], dt, j, blob, False) for j, blob in enumerate(samples)]
                if dt in rec.get("method", {}):
                    mres[dt] = [_replay(torch, op, rec["key"], dt, j, blob, True) for j, blob in enumerate(samples)]
            pickle.dump((i, res, mres), out, protocol=4)
            out.flush()
            print("E", i, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    elif sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit(__doc__)
