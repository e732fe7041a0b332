"""llama.cpp's own float32 RMSNorm and SwiGLU, for tests/test_quant_k.py's proof that the
k-quant model's remaining difference from llama.cpp is those two operators' float formulas.

In the test's process (torchnative): `GGMLNormSwiGLU(libdir)` calls ggml's CPU operators
through ctypes (ggml_rms_norm followed by ggml_mul with the weight, and ggml_swiglu_split:
the nodes llama.cpp builds for a llama block's norms and its SiLU-gated feed-forward), and
`use_in(model)` puts them in place of transformers' LlamaRMSNorm and of LlamaMLP's
silu(gate) * up. Everything else (embeddings, the quantised products and their activation
rounding, attention, residual additions, lm_head) stays ours.

With .venv-ref's Python, where `scripts/setup.sh --llama-cpp` installs llama_cpp_python:

    python tests/ggml_norm_swiglu.py MODEL.gguf OUT.npz TOKEN[,TOKEN...]

writes llama.cpp's logits of each token evaluated alone (tests/quant_llama_cpp.py's
settings) and `libdir`, the directory of ggml's shared libraries. Exit status 3 when
llama_cpp is not installed (the test skips).
"""
import ctypes
import os
import sys

import numpy as np

GGML_TYPE_F32 = 0


class _InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


class GGMLNormSwiGLU:
    """ggml's float32 rms_norm(x) * w and silu(g) * u over the rows of 2-d float32 arrays,
    each call one small ggml graph computed on one thread."""

    def __init__(self, libdir):
        self.base = b = ctypes.CDLL(os.path.join(libdir, "libggml-base.so"))
        self.cpu = c = ctypes.CDLL(os.path.join(libdir, "libggml-cpu.so"))
        vp = ctypes.c_void_p
        for name, res, args in (("ggml_init", vp, [_InitParams]), ("ggml_free", None, [vp]),
                                ("ggml_tensor_overhead", ctypes.c_size_t, []),
                                ("ggml_graph_overhead", ctypes.c_size_t, []),
                                ("ggml_new_tensor_2d", vp, [vp, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]),
                                ("ggml_rms_norm", vp, [vp, vp, ctypes.c_float]), ("ggml_mul", vp, [vp, vp, vp]),
                                ("ggml_swiglu_split", vp, [vp, vp, vp]), ("ggml_new_graph", vp, [vp]),
                                ("ggml_build_forward_expand", None, [vp, vp]), ("ggml_get_data", vp, [vp])):
            f = getattr(b, name)
            f.restype, f.argtypes = res, args
        c.ggml_graph_compute_with_ctx.argtypes = [vp, vp, ctypes.c_int]
        c.ggml_cpu_init()  # ggml's conversion tables

    def _compute(self, build, arrays):
        arrays = [np.ascontiguousarray(a, np.float32) for a in arrays]
        b = self.base
        size = 2 * sum(a.nbytes for a in arrays) + 8 * b.ggml_tensor_overhead() + b.ggml_graph_overhead() + 4096
        ctx = b.ggml_init(_InitParams(size, None, False))
        assert ctx, "ggml_init failed"
        try:
            ts = []
            for a in arrays:
                t = b.ggml_new_tensor_2d(ctx, GGML_TYPE_F32, a.shape[-1], a.shape[0])
                ctypes.memmove(b.ggml_get_data(t), a.ctypes.data, a.nbytes)
                ts.append(t)
            out = build(ctx, *ts)
            graph = b.ggml_new_graph(ctx)
            b.ggml_build_forward_expand(graph, out)
            self.cpu.ggml_graph_compute_with_ctx(ctx, graph, 1)
            y = np.empty(arrays[0].shape, np.float32)
            ctypes.memmove(y.ctypes.data, b.ggml_get_data(out), y.nbytes)
            return y
        finally:
            b.ggml_free(ctx)

    def rms_norm(self, x, w, eps):
        """(rows, n) x, (n,) w -> ggml_mul(ggml_rms_norm(x, eps), w), w broadcast over rows."""
        return self._compute(lambda ctx, tx, tw: self.base.ggml_mul(ctx, self.base.ggml_rms_norm(ctx, tx, eps), tw),
                             [x, np.reshape(w, (1, -1))])

    def swiglu(self, g, u):
        """(rows, n) g and u -> silu(g) * u as ggml's swiglu_split computes it."""
        return self._compute(self.base.ggml_swiglu_split, [g, u])

    def use_in(self, model):
        """Replaces the forward of every *RMSNorm module and of every *MLP module (a
        transformers llama MLP: down_proj(act(gate_proj(x)) * up_proj(x))) of `model`."""
        import torch

        def rows(t):
            return t.detach().reshape(-1, t.shape[-1]).contiguous().numpy()

        def norm_forward(mod, x):
            y = self.rms_norm(rows(x), mod.weight.detach().float().numpy(), float(mod.variance_epsilon))
            return torch.from_numpy(y).reshape(x.shape)

        def mlp_forward(mod, x):
            g, u = mod.gate_proj(x), mod.up_proj(x)
            return mod.down_proj(torch.from_numpy(self.swiglu(rows(g), rows(u))).reshape(g.shape))

        n = 0
        for mod in model.modules():
            kind = type(mod).__name__
            if kind.endswith("RMSNorm"):
                mod.forward = norm_forward.__get__(mod)
                n += 1
            elif kind.endswith("MLP"):
                mod.forward = mlp_forward.__get__(mod)
                n += 1
        return n


def main():
    try:
        import llama_cpp
    except ImportError:
        sys.exit(3)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from quant_llama_cpp import load

    model, out, tokens = sys.argv[1], sys.argv[2], [int(t) for t in sys.argv[3].split(",")]
    llm = load(model)
    res = {"libdir": np.array(os.path.join(os.path.dirname(llama_cpp.__file__), "lib")), "tokens": np.array(tokens)}
    for t in tokens:
        llm.reset()
        llm.eval([t])
        res[f"alone{t}"] = np.array(llm.scores[0], dtype=np.float32)
    np.savez(out, **res)


if __name__ == "__main__":
    main()
