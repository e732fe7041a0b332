"""The delta: what a test-time adaptation method changes over frozen, shared base weights —
full tensors for small sets (norm affine parameters and statistics, or every parameter of
a small model), low-rank factors for linear layers (LoRA) — plus its file format.

A Delta is data only; the wrapper (wrapper.py) puts it into the model by swapping the
module's parameter/buffer entries for the delta's tensors (full tensors) and by pointing
its LoRA forward hooks at the delta's factors, and takes it out by swapping the base
entries back. No base tensor is ever written.

File format (safetensors, no pickle): tensors `full.<module>.<attr>`, `lora_A.<module>`,
`lora_B.<module>`; metadata `format`, `base_hash`, `method`, `lora_scale`, `nulls`, `user`,
`steps`, `samples`. load_delta verifies the format, the base hash, every name and every
shape/dtype against the model before anything is applied."""
import hashlib
import json
import os

import torch

FORMAT = "torchnative.adapt.delta/1"


class DeltaError(ValueError):
    """A delta (or delta file) cannot be used with this model."""


class BaseMismatchError(DeltaError):
    """The delta was made over another base model (its base hash differs)."""


class DeltaFormatError(DeltaError):
    """The file is not a delta file, or its names/shapes do not fit the model."""


def tensor_nbytes(t):
    return t.numel() * t.element_size()


class Delta:
    """What a method adapts, over one base.

    tensors   {"<module>.<attr>": tensor}: full replacements of base parameters/buffers
    nulls     {"<module>.<attr>"}: base buffers hidden (set to None) while applied, e.g.
              Tent's BN running statistics (the layer then normalises by batch statistics)
    attrs     {("<module>", attr): value}: module attributes set while applied
              (e.g. BatchNorm.track_running_stats = False)
    train     module names put in training mode while applied (None: modes untouched)
    lora      {"<linear module>": (A (r, in), B (out, r))}, added as x A^T B^T * lora_scale
    state     the method's working state (optimizer, EMA, teacher ...): not persisted
    """

    def __init__(self, method, tensors=None, nulls=(), attrs=None, train=None, lora=None, lora_scale=1.0,
                 user=None, base_hash=None):
        self.method = method
        self.tensors = dict(tensors or {})
        self.nulls = set(nulls)
        self.attrs = dict(attrs or {})
        self.train = None if train is None else set(train)
        self.lora = dict(lora or {})
        self.lora_scale = float(lora_scale)
        self.user = user
        self.base_hash = base_hash
        self.state = {}
        self.steps = 0
        self.samples = 0

    # ---- what it holds ------------------------------------------------------------------
    def parameters(self):
        """The trainable tensors (full tensors that require grad, then LoRA A, B per layer)."""
        ps = [t for t in self.tensors.values() if t.requires_grad]
        for a, b in self.lora.values():
            ps += [a, b]
        return ps

    def named_tensors(self):
        """Every tensor of the delta under its file name."""
        out = {f"full.{k}": v for k, v in self.tensors.items()}
        for k, (a, b) in self.lora.items():
            out[f"lora_A.{k}"] = a
            out[f"lora_B.{k}"] = b
        return out

    def nbytes(self, state=True):
        """Bytes held by the delta's tensors (and, with state=True, its method state's:
        optimizer moments, EMA teacher, ...)."""
        n = sum(tensor_nbytes(t) for t in self.named_tensors().values())
        if state:
            seen = set()

            def walk(o):
                nonlocal n
                if isinstance(o, torch.Tensor):
                    if id(o) not in seen:
                        seen.add(id(o))
                        n += tensor_nbytes(o)
                elif isinstance(o, dict):
                    for v in o.values():
                        walk(v)
                elif isinstance(o, (list, tuple)):
                    for v in o:
                        walk(v)
                elif isinstance(o, Delta):
                    n += o.nbytes(state=True)
                elif isinstance(o, torch.optim.Optimizer):
                    walk(list(o.state.values()))
            walk(self.state)
        return n

    def finite(self):
        """True when every value of the delta is finite (the NaN/Inf guard's test)."""
        with torch.no_grad():
            for t in self.named_tensors().values():
                if t.is_floating_point() and not bool(torch.isfinite(t).all()):
                    return False
        return True

    def __repr__(self):
        return (f"Delta(method={self.method!r}, user={self.user!r}, tensors={len(self.tensors)}, "
                f"lora={len(self.lora)}, bytes={self.nbytes(state=False)}, steps={self.steps})")


# ---- base identity ----------------------------------------------------------------------
def hash_tensors(named):
    """blake2b-256 over (name, dtype, shape, raw bytes) of every tensor, in name order: the
    identity of a base model. Computed once per wrapper, on its first save, load or
    hand-off (512 MiB took 5.5 s on the shared, loaded 2-vCPU host of docs/ADAPT.md)."""
    h = hashlib.blake2b(digest_size=32)
    for name in sorted(named):
        t = named[name]
        if t is None:
            continue
        t = t.detach()
        h.update(f"{name}|{str(t.dtype)}|{tuple(t.shape)}|".encode())
        if t.numel():
            c = t.contiguous().reshape(-1)
            h.update(memoryview(c.view(torch.uint8).numpy()))
    return h.hexdigest()


# ---- files ------------------------------------------------------------------------------
def save_delta(delta, path, base_hash, extra=None):
    """Writes `delta` to `path` (safetensors) with the hash of the base it belongs to."""
    from safetensors.torch import save_file
    meta = {"format": FORMAT, "base_hash": base_hash, "method": delta.method, "lora_scale": repr(delta.lora_scale),
            "nulls": json.dumps(sorted(delta.nulls)), "user": json.dumps(delta.user), "steps": str(delta.steps),
            "samples": str(delta.samples)}
    meta.update({k: str(v) for k, v in (extra or {}).items()})
    tensors = {k: v.detach().contiguous().clone() for k, v in delta.named_tensors().items()}
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    save_file(tensors, tmp, metadata=meta)
    os.replace(tmp, path)  # a reader never sees half a file


def read_delta_file(path):
    """(metadata, tensors) of a delta file; DeltaFormatError if it is not one."""
    from safetensors import safe_open
    if not os.path.exists(path):
        raise FileNotFoundError(f"no delta file at {path}")
    try:
        with safe_open(path, framework="pt") as f:
            meta = dict(f.metadata() or {})
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as e:  # noqa: BLE001 - any parse failure is a format error
        raise DeltaFormatError(f"{path} is not a readable safetensors delta file: {e}") from e
    if meta.get("format") != FORMAT:
        raise DeltaFormatError(f"{path}: format {meta.get('format')!r}, expected {FORMAT!r}")
    return meta, tensors


def verify_delta_file(meta, tensors, path, base_hash, method, base_entries, linears):
    """Checks a delta file against the wrapped model before use. base_entries maps
    "<module>.<attr>" to the base tensor (or None); linears maps module name to the Linear.
    Raises BaseMismatchError / DeltaFormatError naming the first problem."""
    if meta.get("base_hash") != base_hash:
        raise BaseMismatchError(f"{path} was adapted over another base model (base hash "
                                f"{str(meta.get('base_hash'))[:16]}…, this model's is {base_hash[:16]}…); "
                                "refusing to apply it")
    if method is not None and meta.get("method") != method:
        raise DeltaFormatError(f"{path} holds a {meta.get('method')!r} delta, this wrapper runs {method!r}")
    try:
        nulls = json.loads(meta.get("nulls", "[]"))
        scale = float(meta.get("lora_scale", "1.0"))
    except ValueError as e:
        raise DeltaFormatError(f"{path}: unreadable metadata: {e}") from e
    full, lora_a, lora_b = {}, {}, {}
    for k, v in tensors.items():
        kind, _, name = k.partition(".")
        if kind == "full":
            if name not in base_entries or base_entries[name] is None:
                raise DeltaFormatError(f"{path}: tensor {name!r} is not a parameter or buffer of this model")
            b = base_entries[name]
            if tuple(b.shape) != tuple(v.shape) or b.dtype != v.dtype:
                raise DeltaFormatError(f"{path}: {name!r} is {v.dtype} {tuple(v.shape)}, "
                                       f"the model's is {b.dtype} {tuple(b.shape)}")
            full[name] = v
        elif kind in ("lora_A", "lora_B"):
            if name not in linears:
                raise DeltaFormatError(f"{path}: {name!r} is not a Linear layer of this model")
            (lora_a if kind == "lora_A" else lora_b)[name] = v
        else:
            raise DeltaFormatError(f"{path}: unknown tensor {k!r}")
    if set(lora_a) != set(lora_b):
        raise DeltaFormatError(f"{path}: LoRA factors without their partner: {sorted(set(lora_a) ^ set(lora_b))}")
    lora = {}
    for name in lora_a:
        lin, a, b = linears[name], lora_a[name], lora_b[name]
        if a.dim() != 2 or b.dim() != 2 or a.shape[1] != lin.in_features or b.shape[0] != lin.out_features \
                or a.shape[0] != b.shape[1] or a.dtype != lin.weight.dtype or b.dtype != lin.weight.dtype:
            raise DeltaFormatError(f"{path}: LoRA factors of {name!r} are {a.dtype} {tuple(a.shape)} / "
                                   f"{b.dtype} {tuple(b.shape)}; the layer is {lin.weight.dtype} "
                                   f"{lin.in_features} -> {lin.out_features}")
        lora[name] = (a, b)
    for n in nulls:
        if n not in base_entries:
            raise DeltaFormatError(f"{path}: hidden buffer {n!r} is not a buffer of this model")
    return full, set(nulls), lora, scale
