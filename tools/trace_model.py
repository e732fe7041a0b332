"""Runs SmolLM2 (the bundled GGUF) forward on fixed token ids under whichever torch this
interpreter has and saves every module's output to an .npz, so two runs (upstream in
.venv-ref, torchnative in .venv) can be compared layer by layer:

    .venv-ref/bin/python tools/trace_model.py /tmp/ref.npz
    .venv/bin/python tools/trace_model.py /tmp/ours.npz
    python tools/trace_model.py --compare /tmp/ref.npz /tmp/ours.npz
"""
import os
import sys

import numpy as np


def trace(out):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM

    from torchnative.cli import bundled_model

    d, g = bundled_model()
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=g, dtype=torch.float32).eval()
    ids = torch.tensor([[1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411]])
    saved = {}

    def hook(name):
        def f(mod, inp, outp):
            o = outp[0] if isinstance(outp, (tuple, list)) else outp
            if isinstance(o, torch.Tensor):
                saved[name] = o.detach().float().numpy().copy()
        return f

    for name, mod in model.named_modules():
        mod.register_forward_hook(hook(name or "model"))
    with torch.no_grad():
        logits = model(ids).logits
    saved["logits"] = logits.float().numpy().copy()
    np.savez(out, **saved)


def compare(a, b):
    A, B = np.load(a), np.load(b)
    for k in A.files:
        if k not in B.files:
            print(f"{k}: missing in second")
            continue
        x, y = A[k], B[k]
        if x.shape != y.shape:
            print(f"{k}: shape {x.shape} vs {y.shape}")
            continue
        err = np.abs(x - y).max() / (np.abs(x).max() + 1e-30)
        print(f"{k:60s} rel max err {err:.3e}")


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        trace(sys.argv[1])
