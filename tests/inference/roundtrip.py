"""Saves SmolLM2 (the bundled GGUF dequantised, tests/bundled.py) with save_pretrained into DIR (safetensors),
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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bundled  # noqa: E402

out = sys.argv[1]
# the bundled GGUF dequantised once per machine (tests/bundled.py), rebuilt here from its
# config as a fresh model holding its weights, which this torch then saves
tok, m = bundled.load(torch.float32)
plain = AutoModelForCausalLM.from_config(m.config, dtype=torch.float32)
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
