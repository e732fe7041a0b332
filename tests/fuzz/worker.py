"""One side of the operator fuzzer: builds each case's arguments from its plain-data spec
(numpy data from the case seed, so both sides see identical inputs), calls the operator
through the named Python spelling, and streams the encoded outcome back, one frame per
case. Runs under whichever torch the interpreter has (ours in .venv, upstream in .venv-ref).
    python tests/fuzz/worker.py    (frames on stdin/stdout; see opfuzz.py)"""
import os
import pickle
import resource
import struct
import sys
import warnings
import zlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from optest import harness as H  # noqa: E402

NP_DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": np.float32,
             "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
             "bool": np.bool_, "complex64": np.complex64, "complex128": np.complex128}
# results whose values are uninitialised memory: compare geometry only
UNINIT = ("empty", "new_empty", "empty_like", "empty_strided", "new_empty_strided", "empty_permuted", "resize_", "resize_as_")


def read_frame(f):
    head = f.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack("<I", head)
    return pickle.loads(f.read(n))


def write_frame(fd, obj):
    data = pickle.dumps(obj, protocol=4)
    data = struct.pack("<I", len(data)) + data
    while data:
        data = data[os.write(fd, data):]


class Builder:
    """Turns a value spec (lists of plain data, see opfuzz.py "value specs") into Python
    objects; tensors are numbered in build order so later specs can alias them."""

    def __init__(self, torch, seed):
        self.torch, self.seed, self.tensors = torch, seed, []

    def array(self, shape, dtype, kind):
        rng = np.random.default_rng(zlib.crc32(f"{self.seed}|{len(self.tensors)}".encode()))
        n = int(np.prod(shape)) if shape else 1
        if kind == "special":
            a = rng.standard_normal(n) * 3
            vals = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e-30]
            for i in range(0, n, 2):
                a[i] = vals[rng.integers(0, len(vals))]
        elif kind == "int":
            a = rng.integers(-4, 7, n).astype(np.float64)
        elif kind == "extreme":
            if dtype in ("float32", "float64", "float16", "bfloat16", "complex64", "complex128"):
                fi = np.finfo(np.float16 if dtype == "float16" else np.float32 if dtype in ("float32", "bfloat16", "complex64") else np.float64)
                a = rng.choice([fi.max, fi.min, fi.tiny, -fi.tiny, 0.0, 1.0], n)
            elif dtype == "bool":
                a = rng.integers(0, 2, n)
            else:
                ii = np.iinfo(NP_DTYPES[dtype])
                a = rng.choice([ii.max, ii.min, 0, -1 if ii.min < 0 else 1, 1], n)
                return a.astype(NP_DTYPES[dtype]).reshape(shape)
        elif kind == "pos":
            a = rng.uniform(0.05, 4.0, n)
        else:
            a = rng.standard_normal(n)
        if dtype in ("complex64", "complex128"):
            a = a + 1j * rng.standard_normal(n)
        elif dtype == "bool":
            a = a > 0
        elif dtype.startswith(("int", "uint")):
            a = np.nan_to_num(np.round(a * (1 if kind == "int" else 3)), nan=0, posinf=100, neginf=-100)
            a = np.clip(a, -100, 100)
            if dtype == "uint8":
                a = np.abs(a)
        return np.asarray(a).astype(NP_DTYPES[dtype]).reshape(shape)

    def tensor(self, shape, dtype, kind, layout, device):
        torch = self.torch
        tdt = getattr(torch, dtype)
        shape = tuple(shape)
        if device == "meta":
            t = torch.empty(shape, dtype=tdt, device="meta")
        elif layout == "huge_expand":
            t = torch.zeros([1] * len(shape), dtype=tdt).expand(*shape)
        elif layout == "expand":  # zero strides: every size-1 dim of the data is broadcast
            small = tuple(1 if i % 2 == 0 else s for i, s in enumerate(shape))
            t = self._from(self.array(small, dtype, kind), tdt).expand(*shape)
        elif layout == "transposed" and len(shape) >= 2:
            t = self._from(self.array(shape[::-1], dtype, kind), tdt).permute(*range(len(shape) - 1, -1, -1))
        elif layout == "strided" and shape:
            big = shape[:-1] + (shape[-1] * 2,)
            t = self._from(self.array(big, dtype, kind), tdt)[..., ::2]
        elif layout == "overlap" and shape:  # as_strided with stride 1 in every dim: rows overlap
            n = sum(max(s - 1, 0) for s in shape) + 1
            t = self._from(self.array((n,), dtype, kind), tdt).as_strided(shape, (1,) * len(shape))
        elif layout == "offset":
            n = int(np.prod(shape)) if shape else 1
            t = self._from(self.array((n + 3,), dtype, kind), tdt)[3:].view(shape)
        else:
            t = self._from(self.array(shape, dtype, kind), tdt)
        self.tensors.append(t)
        return t

    def _from(self, a, tdt):
        t = self.torch.from_numpy(np.ascontiguousarray(a))
        return t.to(tdt) if t.dtype != tdt else t

    def build(self, spec):
        torch = self.torch
        k = spec[0]
        if k == "none":
            return None
        if k in ("int", "bool", "str"):
            return spec[1]
        if k == "float":
            return float(spec[1])
        if k == "complex":
            return complex(float(spec[1]), float(spec[2]))
        if k == "dtype":
            return getattr(torch, spec[1])
        if k == "layout":
            return getattr(torch, spec[1])
        if k == "device":
            return torch.device(spec[1])
        if k == "memfmt":
            return getattr(torch, spec[1])
        if k == "gen":
            return torch.Generator().manual_seed(spec[1])
        if k == "list":
            return [self.build(s) for s in spec[1]]
        if k == "tuple":
            return tuple(self.build(s) for s in spec[1])
        if k == "tensor":
            return self.tensor(*spec[1:])
        if k == "t0":
            v = self.build(spec[1])
            t = torch.tensor(v, dtype=getattr(torch, spec[2]) if spec[2] else None)
            self.tensors.append(t)
            return t
        if k == "ref":
            return self.tensors[spec[1] % len(self.tensors)] if self.tensors else None
        if k == "view":
            if not self.tensors:
                return None
            base = self.tensors[spec[1] % len(self.tensors)]
            how = spec[2]
            if how == "flat":
                v = base.view(-1) if base.is_contiguous() else base.reshape(-1)
            elif how == "t":
                v = base.t() if base.dim() <= 2 else base.transpose(0, 1)
            elif how == "head":
                v = base[: max(base.shape[0] - 1, 0)] if base.dim() else base
            else:
                v = base.unsqueeze(0)
            self.tensors.append(v)
            return v
        if k == "np":
            return getattr(np, spec[1])(spec[2])
        if k == "obj":
            return object()
        raise ValueError(spec)


def resolve(torch, spelling):
    kind = spelling[0]
    if kind == "torch":
        return getattr(torch, spelling[1])
    if kind == "nn":
        return getattr(torch._C._nn, spelling[1])
    if kind == "aten":
        name, ov = spelling[1].split(".")
        return getattr(getattr(torch.ops.aten, name), ov)
    if kind == "pyfn":
        mod = torch if spelling[1] == "torch" else torch.nn.functional
        return getattr(mod, spelling[2])
    if kind == "selftest":  # the runner's own test: a case that kills or stalls its worker
        import ctypes
        import time

        return {"segv": lambda: ctypes.string_at(0), "hang": lambda: time.sleep(3600),
                "abort": lambda: os.abort(), "ok": lambda: 7}[spelling[1]]
    if kind in ("torch.special", "torch.linalg", "torch.fft"):
        return getattr(getattr(torch, kind.split(".")[1]), spelling[1])
    raise ValueError(spelling)


def run_file_case(torch, case):
    """A file fuzz case: dict(loader, path). The outcome of loading it, encoded."""
    import fileload

    try:
        return ("ok", H.encode(torch, fileload.load(torch, case["loader"], case["path"])))
    except Exception as e:
        msg = str(e).splitlines()[0][:300] if str(e) else ""
        return ("err", type(e).__name__, msg)


def run_case(torch, case):
    """case: dict(seed, spelling, args (value specs), kwargs {name: spec}, op), or a file
    case (see run_file_case)."""
    if "loader" in case:
        return run_file_case(torch, case)
    if "make_seeds" in case:
        import fileload

        fileload.make_seeds(torch, case["make_seeds"])
        return ("ok", ("py", None))
    torch.manual_seed(case["seed"] & 0xFFFFFFFF)
    b = Builder(torch, case["seed"])
    try:
        args = [b.build(s) for s in case["args"]]
        kwargs = {n: b.build(s) for n, s in case["kwargs"].items()}
    except Exception as e:
        return ("builderr", type(e).__name__, str(e).splitlines()[0][:300] if str(e) else "")
    sp = case["spelling"]
    try:
        if sp[0] == "method":
            if args and isinstance(args[0], torch.Tensor):
                value = getattr(args[0], sp[1])(*args[1:], **kwargs)
            else:
                value = getattr(torch.Tensor, sp[1])(*args, **kwargs)
        else:
            value = resolve(torch, sp)(*args, **kwargs)
        name = case["op"].split(".")[0]
        if name in UNINIT or too_big(torch, value):
            return ("ok", geometry(torch, value))
        return ("ok", H.encode(torch, value))
    except Exception as e:  # the exception class is part of the comparison
        msg = str(e).splitlines()[0][:300] if str(e) else ""
        return ("err", type(e).__name__, msg)


def too_big(torch, value):
    """A result too large to copy out (an expanded view of 2**31+ elements): compared by
    geometry only, so encoding it cannot exhaust memory or time on either side."""
    if isinstance(value, torch.Tensor):
        return value.numel() > 1 << 22
    if isinstance(value, (tuple, list)):
        return any(too_big(torch, v) for v in value)
    return False


def geometry(torch, value):
    if isinstance(value, torch.Tensor):
        return ("py", (str(value.dtype), tuple(value.shape)))
    if isinstance(value, (tuple, list)):
        return ("tuple", [geometry(torch, v) for v in value])
    return H.encode(torch, value)


def main():
    out_fd = os.dup(1)
    os.dup2(2, 1)  # anything printed goes to stderr, never into the frames
    warnings.simplefilter("ignore")
    import torch

    torch.set_num_threads(1)
    # Upstream imports its meta registrations and decompositions on the first meta-tensor
    # operator (seconds on a loaded machine): pay for it before the first case's timeout.
    m = torch.ones(2, 2, device="meta")
    for f in () if os.environ.get("TN_FUZZ_WARM") == "0" else (lambda: m.acos(), lambda: m // m, lambda: torch._foreach_exp([m]), lambda: torch.nn.functional.hardswish(m),
              lambda: m.sum(0), lambda: m @ m, lambda: torch.cat([m, m]), lambda: m[torch.tensor([0])]):
        try:
            f()
        except Exception:
            pass
    # A cap on address space: an allocation no machine here could satisfy must fail the same
    # way on both sides instead of swapping the shared machine to death.
    headroom = int(os.environ.get("TN_FUZZ_HEADROOM", str(3 << 30)))
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + headroom, resource.RLIM_INFINITY))
    write_frame(out_fd, ("ready", torch.__version__))
    inp = sys.stdin.buffer
    while True:
        msg = read_frame(inp)
        if msg is None:
            return
        for idx, case in msg:
            write_frame(out_fd, (idx, run_case(torch, case)))


if __name__ == "__main__":
    main()
