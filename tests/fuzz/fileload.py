"""The file fuzzer's two halves that run inside the worker processes: the seed files
(made once, by upstream torch, so both sides read the same bytes) and the loaders each
case names (torch.load weights_only / full / mmap, safetensors, GGUF). Imported by
worker.py on both sides; nothing here imports torch at module level."""
import collections
import os

import numpy as np

SEEDS = ("zip.pt", "legacy.pt", "model.safetensors", "model.gguf", "badview.pt", "bigstorage.pt")
LOADERS = {
    ".pt": ("load_weights_only", "load_full", "load_mmap"),
    ".safetensors": ("st_load_file", "st_safe_open", "st_load_bytes"),
    ".gguf": ("gguf_read",),
}


class _Rebuild:
    """Pickles as a tensor whose geometry is whatever we say, over a real storage (an
    adversarial checkpoint: sizes/offset past the end of the storage's bytes)."""

    def __init__(self, torch, storage, offset, size, stride):
        self.args = (storage, offset, size, stride, False, collections.OrderedDict())
        self.torch = torch

    def __reduce__(self):
        return (self.torch._utils._rebuild_tensor_v2, self.args)


def make_seeds(torch, d):
    """Writes the seed files into d (called under upstream torch)."""
    import gguf
    from safetensors.torch import save_file

    g = torch.Generator().manual_seed(0)
    w = torch.randn(4, 5, generator=g)
    obj = {"w": w, "i": torch.arange(6), "h": torch.randn(3, 2, generator=g).to(torch.bfloat16), "v": w[1:, 2:],
           "n": 3, "s": "text", "l": [1.5, torch.tensor([1, 2], dtype=torch.int32)], "b": torch.tensor([True, False])}
    torch.save(obj, os.path.join(d, "zip.pt"))
    torch.save(obj, os.path.join(d, "legacy.pt"), _use_new_zipfile_serialization=False)
    st = torch.ones(4).untyped_storage()
    ts = torch.storage.TypedStorage(wrap_storage=st, dtype=torch.float32, _internal=True)
    torch.save({"past_end": _Rebuild(torch, ts, 2, (10,), (1,)), "huge": _Rebuild(torch, ts, 0, (2**40,), (1,)),
                "neg": _Rebuild(torch, ts, 0, (2,), (-1,)), "ok": torch.ones(2)}, os.path.join(d, "badview.pt"))
    # a storage record whose pickled size claims far more elements than the record holds
    torch.save({"t": torch.ones(3)}, os.path.join(d, "bigstorage.pt"))
    save_file({"a": w.contiguous(), "b": torch.arange(5), "c": torch.randn(2, 2, generator=g).to(torch.bfloat16),
               "e": torch.zeros(0, 3), "f": torch.randn(7, generator=g).to(torch.float16)},
              os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    wr = gguf.GGUFWriter(os.path.join(d, "model.gguf"), "llama")
    wr.add_block_count(1)
    wr.add_string("general.name", "fuzz")
    wr.add_tensor("a", np.arange(12, dtype=np.float32).reshape(3, 4))
    wr.add_tensor("b", np.linspace(-1, 1, 16, dtype=np.float32).astype(np.float16))
    wr.add_tensor("c", np.arange(8, dtype=np.int32))
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()


def _walk(torch, obj, depth=0):
    """Loaded object -> something encode() can compare (tensors as values)."""
    if depth > 20:
        return "deep"
    if isinstance(obj, dict):
        return tuple((str(k), _walk(torch, v, depth + 1)) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0])))
    if isinstance(obj, (list, tuple)):
        return tuple(_walk(torch, v, depth + 1) for v in obj)
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, (int, float, str, bool, type(None))):
        return obj
    return type(obj).__name__


def load(torch, loader, path):
    """Loads `path` with `loader`; returns a comparable structure (tensors cloned, so every
    byte of each is read)."""
    import warnings

    warnings.simplefilter("ignore")
    if loader == "load_weights_only":
        return _walk(torch, torch.load(path, weights_only=True))
    if loader == "load_full":
        return _walk(torch, torch.load(path, weights_only=False))
    if loader == "load_mmap":
        return _walk(torch, torch.load(path, weights_only=True, mmap=True))
    if loader == "st_load_file":
        from safetensors.torch import load_file

        return _walk(torch, load_file(path))
    if loader == "st_safe_open":
        from safetensors import safe_open

        out = {}
        with safe_open(path, framework="pt") as f:
            for k in f.keys():
                out[k] = f.get_tensor(k)
            out["__meta__"] = f.metadata()
        return _walk(torch, out)
    if loader == "st_load_bytes":
        from safetensors.torch import load

        with open(path, "rb") as f:
            return _walk(torch, load(f.read()))
    if loader == "gguf_read":
        import gguf

        r = gguf.GGUFReader(path)
        out = {}
        for t in r.tensors:
            a = np.asarray(t.data)
            out[t.name] = torch.from_numpy(np.array(a)) if a.dtype != np.uint8 else torch.from_numpy(a.copy())
        out["__kv__"] = sorted(r.fields.keys())
        return _walk(torch, out)
    raise ValueError(loader)
