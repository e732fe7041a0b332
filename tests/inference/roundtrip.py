"""Saves SmolLM2 (dequantised from the bundled GGUF) with save_pretrained into DIR (safetensors),
loads it back with from_pretrained in float32 and bfloat16, and prints greedy tokens and the
last-position logits as JSON. Runs under either torch; the test compares the two.

    python tests/inference/roundtrip.py DIR
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python"))
os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

from torchnative.cli import bundled_model  # noqa: E402

out = sys.argv[1]
d, g = bundled_model()
tok = AutoTokenizer.from_pretrained(d, gguf_file=g)
m = AutoModelForCausalLM.from_pretrained(d, gguf_file=g, dtype=torch.float32)
# A GGUF-loaded model counts as quantized and refuses save_pretrained (upstream too), so it is
# rebuilt from its config as a plain model holding the dequantised weights.
cfg = m.config
if hasattr(cfg, "quantization_config"):
    del cfg.quantization_config
plain = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
plain.load_state_dict(m.state_dict())
plain.save_pretrained(out)
tok.save_pretrained(out)
ids = tok.apply_chat_template([{"role": "user", "content": "Name three colours."}], add_generation_prompt=True,
                              return_tensors="pt", return_dict=True)
res = {"files": sorted(os.listdir(out))}
for dt in ("float32", "bfloat16"):
    m2 = AutoModelForCausalLM.from_pretrained(out, dtype=getattr(torch, dt)).eval()
    with torch.no_grad():
        gen = m2.generate(**ids, max_new_tokens=32, do_sample=False)
        logits = m2(**ids).logits.float()
    res[dt] = {"tokens": gen[0, ids["input_ids"].shape[-1]:].tolist(), "logits": logits[0].tolist(),
               "param_dtype": str(next(m2.parameters()).dtype)}
print(json.dumps(res))
