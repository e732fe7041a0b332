"""Runs torchnative.adapt's methods on fixed weights and inputs and prints what they did
(outputs per step, the final delta's tensors, counters) as JSON. Run under upstream torch
and under torchnative by tests/test_adapt_methods.py, which compares the two; bench/adapt.py
uses its model definitions.
    python tests/adapt_run.py WORKDIR METHOD[,METHOD...]
WORKDIR holds cnn.pt (the CNN's state dict), data.npz (x_src (N,1,8,8) source batches for
EATA's Fisher, x (S,B,1,8,8) the test batches) and, for tlm, llm/ (a tiny Llama) and
ids.npy."""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from torchnative import adapt  # noqa: E402


class CNN(nn.Module):
    """The small CNN of the adaptation tests and benchmark, in TTT's Y shape: a shared
    extractor `ext`, the classifier `cls` and the rotation head `ssh` (4 classes), both
    heads reading ext's features. `pools` max-pools inside ext (1 for 8x8 digits, 2 for
    28x28 MNIST)."""

    def __init__(self, pools=1, width=16, classes=10):
        super().__init__()
        w = width
        layers = [nn.Conv2d(1, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU()]
        if pools > 1:
            layers.append(nn.MaxPool2d(2))
        layers += [nn.Conv2d(w, 2 * w, 3, padding=1, bias=False), nn.BatchNorm2d(2 * w), nn.ReLU(), nn.MaxPool2d(2)]
        self.ext = nn.Sequential(*layers)

        def head(n):
            return nn.Sequential(nn.Conv2d(2 * w, 2 * w, 3, padding=1, bias=False), nn.BatchNorm2d(2 * w), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * w, n))
        self.cls = head(classes)
        self.ssh = head(4)

    def forward(self, x):
        return self.cls(self.ext(x))


def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=128, tie_word_embeddings=False)
    return LlamaForCausalLM(cfg)


def methods(x_src):
    fisher = [torch.from_numpy(b) for b in x_src]
    return {
        "bn_adapt": lambda: adapt.BNAdapt(),
        "tent": lambda: adapt.Tent(),
        # learning rates raised from the ImageNet defaults so that a few steps move the delta
        "eata": lambda: adapt.EATA(10, fisher_data=fisher, d_margin=0.4, lr=5e-3),
        "sar": lambda: adapt.SAR(10, lr=5e-3),
        "memo": lambda: adapt.MEMO(n_aug=8),
        "cotta": lambda: adapt.CoTTA(n_aug=4, rst=0.05),
        "ttt": lambda: adapt.TTT("ext", "ssh", lr=5e-3),
        "tlm": lambda: adapt.TLM(lr=1e-3, p0=1.0),
    }


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def run(workdir, name):
    torch.manual_seed(0)
    d = np.load(os.path.join(workdir, "data.npz"))
    meth = methods(d["x_src"])[name]()
    if name == "tlm":
        from safetensors.torch import load_file
        model = tiny_llama()
        model.load_state_dict(load_file(os.path.join(workdir, "llm.safetensors")))
        model.eval()
        ids = torch.from_numpy(np.load(os.path.join(workdir, "ids.npy")))
        w = adapt.wrap(model, meth, guard=None).online()
        outs = []
        for i in range(ids.shape[0]):
            o = w(input_ids=ids[i])
            outs.append(flat(o.logits[:, -1, :8]))
        dl = w.delta
        res = {"outputs": outs, "delta": {k: flat(v) for k, v in dl.named_tensors().items()},
               "ppl": dl.state.get("last_ppl")}
    else:
        model = CNN()
        model.load_state_dict(torch.load(os.path.join(workdir, "cnn.pt")))
        model.eval()
        # MEMO is episodic by default; a session keeps its last point's delta to compare
        w = adapt.wrap(model, meth, guard=None, lifetime=adapt.Session()).online()
        outs, deltas = [], {}
        for b in d["x"]:
            o = w(torch.from_numpy(b))
            outs.append(flat(o))
            if w.delta is not None:
                deltas = {k: flat(v) for k, v in w.delta.named_tensors().items()}
        res = {"outputs": outs, "delta": deltas, "counters": w.counters}
        if name == "eata":
            res["updates"] = w.delta.state["updates"] if w.delta is not None else None
        if name == "sar":
            res["ema"] = w.delta.state["ema"] if w.delta is not None else None
    return res


if __name__ == "__main__":
    torch.set_num_threads(1)
    print(json.dumps({n: run(sys.argv[1], n) for n in sys.argv[2].split(",")}))
