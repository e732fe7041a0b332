"""Operator graphs: capture the operator calls of one Python call, replay them without Python.

This is the CPU counterpart of ``torch.cuda.CUDAGraph``. While a graph captures, every
operator that reaches torchnative's dispatcher runs as usual and is recorded with its
arguments and results. ``replay()`` runs the recorded calls again, in order, on the same
tensors, without the interpreter, argument parsing or dispatch decisions in between.
Inputs change by writing into the captured input tensors in place; outputs are the
captured output tensors, refreshed by each replay.

The contract is the one CUDA graphs and ``torch.compile(mode="reduce-overhead")`` have:
what the captured code decides in Python is frozen. Data that reaches Python during
capture (``item()``, ``tolist()``, a tensor used as a Python number, numpy) or a random
operator makes the capture fail, with the reason in ``Graph.failure``, rather than
replay something that could be wrong.

``accelerate_decode(model)`` applies this to transformers' generation with a static
cache (``generate(..., cache_implementation="static")``): a forward call whose inputs
have the same shapes as the call before it is captured, and the calls after it replay.
Prefill (a new shape) runs eagerly, as does any call the capture refused.
"""
from __future__ import annotations

import functools

import torch

__all__ = ["Graph", "graph", "accelerate_decode", "remove_decode_graphs", "DecodeGraphs"]


class Graph:
    """One captured sequence of operator calls (see the module docstring)."""

    def __init__(self):
        self._g = None

    def capture_begin(self):
        if self._g is not None:
            self._g.release()
            self._g = None
        torch._C._tn_graph_capture_begin()

    def capture_end(self):
        self._g = torch._C._tn_graph_capture_end()

    @property
    def failure(self) -> str | None:
        """None when the capture can be replayed, else why it cannot."""
        if self._g is None:
            return "nothing was captured"
        return self._g.failure

    def counts(self) -> dict:
        """Recorded steps by kind: views skipped at replay, in-place/out= reruns,
        functional reruns into the captured result; ``direct``: how many of those the
        last replay computed straight into that result rather than copying it there;
        ``chained``: how many steps the last replay ran inside chains run as one step
        (transformers' RMSNorm and rotary embedding in float32; ``TN_GRAPH_CHAINS=0``
        before the first replay keeps every step on its own)."""
        s, r, i, d, c = self._g.counts() if self._g is not None else (0, 0, 0, 0, 0)
        return {"skip": s, "rerun": r, "into": i, "direct": d, "chained": c}

    def replay(self, profile: bool = False):
        """Runs the captured calls again. With ``profile``, each step's time is added to
        the counters ``steps()`` reports."""
        if self._g is None:
            raise RuntimeError("Graph.replay(): nothing was captured")
        self._g.replay(profile=profile)

    def steps(self) -> list:
        """[(operator, kind, profiled ns), ...] in the order recorded."""
        return self._g.steps() if self._g is not None else []

    def reset(self):
        """Drops the recorded steps and the tensors they keep alive."""
        if self._g is not None:
            self._g.release()
            self._g = None


class graph:
    """``with torchnative.graphs.graph(g): ...`` captures the block into ``g``."""

    def __init__(self, g: Graph):
        self.g = g

    def __enter__(self):
        self.g.capture_begin()
        return self.g

    def __exit__(self, *exc):
        self.g.capture_end()
        return False


def _cache_of(kwargs):
    for name in ("cache", "past_key_values"):
        c = kwargs.get(name)
        if c is not None:
            return c
    return None


_PLAIN = (bool, int, float, str)


def _layer_state(layer):
    """The plain (int, float, bool, str) attributes of a cache layer: Python-side state its
    update() may branch on. A replay does not run Python, so a layer whose forward changes
    such state (transformers' sliding-window layer counts tokens in `cumulative_length_int`)
    cannot be replayed; capture compares this before and after and refuses."""
    return tuple([(k, v) for k, v in vars(layer).items() if type(v) in _PLAIN])


def _static_cache_identity(cache):
    """Identity and Python-side state of a static cache, or None if it is not a static
    cache (a dynamic cache grows, so its shapes change every step)."""
    if not getattr(cache, "is_compileable", False) or type(cache).__name__ == "DynamicCache":
        return None
    ids = []
    for layer in getattr(cache, "layers", ()):
        d = vars(layer)
        if not d.get("is_initialized", False) or not getattr(layer, "is_compileable", True):
            return None
        ids.append((id(d.get("keys")), id(d.get("values")), id(d.get("cumulative_length")), _layer_state(layer)))
    return tuple(ids)


def _signature(v):
    """What a replay needs to match in an argument: shapes, dtypes and strides of tensors,
    values of plain constants, recursively through dicts, lists and tuples (transformers
    passes one mask per attention type in a dict). None for anything else."""
    if isinstance(v, torch.Tensor):
        return ("T", tuple(v.shape), v.dtype, tuple(v.stride()))
    if v is None or isinstance(v, (bool, int, float, str)):
        return ("C", v)
    if isinstance(v, dict):
        items = []
        for k in sorted(v, key=repr):
            s = _signature(v[k])
            if s is None:
                return None
            items.append((k, s))
        return ("D", tuple(items))
    if isinstance(v, (list, tuple)):
        items = tuple(_signature(x) for x in v)
        return None if any(s is None for s in items) else (type(v).__name__, items)
    return None


def _clone_tensors(v):
    if isinstance(v, torch.Tensor):
        return v.clone()
    if isinstance(v, dict):
        return {k: _clone_tensors(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_clone_tensors(x) for x in v)
    return v


def _copy_into(dst, src):
    if isinstance(dst, torch.Tensor):
        dst.copy_(src)
    elif isinstance(dst, dict):
        for k, x in dst.items():
            _copy_into(x, src[k])
    elif isinstance(dst, (list, tuple)):
        for x, y in zip(dst, src):
            _copy_into(x, y)


def _has_tensor(v):
    if isinstance(v, torch.Tensor):
        return True
    if isinstance(v, dict):
        return any(_has_tensor(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return any(_has_tensor(x) for x in v)
    return False


class _Entry:
    __slots__ = ("key", "graph", "static", "output", "cache")


class DecodeGraphs:
    """Wraps a transformers model's ``forward`` (installed by ``accelerate_decode``)."""

    def __init__(self, model):
        self.model = model
        self.forward = model.forward
        # transformers reads forward's signature to decide what to pass (logits_to_keep, ...)
        functools.update_wrapper(self, self.forward)
        self.entry = None
        self.last_key = None
        self.refused = {}  # key -> failure reason (never retried)
        self.captures = 0
        self.replays = 0
        self.eager = 0

    def _key(self, kwargs):
        if torch.is_grad_enabled():
            return None
        cache = _cache_of(kwargs)
        if cache is None:
            return None
        cid = _static_cache_identity(cache)
        if cid is None:
            return None
        parts = []
        for name in sorted(kwargs):
            v = kwargs[name]
            sig = ("cache", id(v), cid) if v is cache else _signature(v)
            if sig is None:
                return None  # something we cannot compare: leave the call alone
            parts.append((name, sig))
        return tuple(parts)

    def __call__(self, *args, **kwargs):
        key = None if args else self._key(kwargs)
        if key is None:
            self.eager += 1
            self.last_key = None
            return self.forward(*args, **kwargs)
        e = self.entry
        if e is not None and e.key == key:
            for name, t in e.static.items():
                _copy_into(t, kwargs[name])
            e.graph.replay()
            self.replays += 1
            return self._output(e.output)
        if key != self.last_key or key in self.refused:
            # first call with this signature (a prefill, usually): run it eagerly
            self.last_key = key
            self.eager += 1
            return self.forward(**kwargs)
        return self._capture(key, kwargs)

    def _capture(self, key, kwargs):
        cache = _cache_of(kwargs)
        static = {n: _clone_tensors(v) for n, v in kwargs.items() if v is not cache and _has_tensor(v)}
        call = dict(kwargs)
        call.update(static)
        if self.entry is not None:
            self.entry.graph.reset()
            self.entry = None
        before = [_layer_state(layer) for layer in getattr(cache, "layers", ())]
        g = Graph()
        g.capture_begin()
        try:
            out = self.forward(**call)
        finally:
            g.capture_end()
        after = [_layer_state(layer) for layer in getattr(cache, "layers", ())]
        failure = g.failure
        if failure is None and before != after:
            changed = sorted({k for b, a in zip(before, after) for (k, x), (_, y) in zip(b, a) if x != y})
            failure = f"the cache changes Python-side state in forward ({', '.join(changed)}), which a replay would skip"
        if failure is not None:
            self.refused[key] = failure
            g.reset()
            self.eager += 1
            return out
        e = _Entry()
        e.key, e.graph, e.static, e.output = key, g, static, out
        e.cache = cache  # keeps the cache (and so the ids in the key) alive
        self.entry = e
        self.captures += 1
        return self._output(out)

    @staticmethod
    def _output(out):
        # fresh tensors, so a caller keeping one step's output is not overwritten by the next
        if isinstance(out, torch.Tensor):
            return out.clone()
        if hasattr(out, "items") and hasattr(type(out), "__dataclass_fields__"):
            return type(out)(**{k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in out.items()})
        if isinstance(out, tuple):
            return type(out)(v.clone() if isinstance(v, torch.Tensor) else v for v in out)
        return out

    def reset(self):
        """Forgets the captured graph (call after replacing modules or parameters)."""
        if self.entry is not None:
            self.entry.graph.reset()
        self.entry = None
        self.last_key = None
        self.refused.clear()

    def stats(self) -> dict:
        return {"captures": self.captures, "replays": self.replays, "eager": self.eager,
                "refused": dict(self.refused),
                "steps": self.entry.graph.counts() if self.entry is not None else None}


def accelerate_decode(model) -> DecodeGraphs:
    """Installs operator graphs on ``model.forward`` for generation with a static cache
    and returns the wrapper (``.stats()``, ``.reset()``, ``remove_decode_graphs``)."""
    if isinstance(model.forward, DecodeGraphs):
        return model.forward
    if not hasattr(torch._C, "_tn_graph_capture_begin"):
        raise RuntimeError("operator graphs need torchnative's torch._C")
    w = DecodeGraphs(model)
    model.forward = w
    return w


def remove_decode_graphs(model):
    """Undoes accelerate_decode: drops the captured graph and restores the model's forward."""
    w = model.forward
    if isinstance(w, DecodeGraphs):
        w.reset()
        del model.forward
