"""Model side of tests/test_quant.py, run in a fresh process: the bundled GGUF loaded kept
quantised (torchnative.quant.from_gguf) and dequantised to float32 (transformers'
from_pretrained), greedy generation and prompt logits of both on the same prompts.

    python tests/quant_run.py OUT.npz [MODEL.gguf [NEW_TOKENS]]   (default: the bundled GGUF, 64)

Writes OUT.npz: prompt token ids, logits of each path on each prompt, greedy tokens of
each path, and the prompt logits of the kept-quantised path without the load's repack
(`from_gguf(repack_layout=False)`: the file's own block layout). Both paths can also run under upstream torch for the float32 side, but the
kept-quantised path needs torchnative's operators.
"""
import json
import os
import sys

import numpy as np

PROMPTS = ["What is the capital of France?", "Write a haiku about the sea.",
           "Explain gravity to a child in two sentences.", "List three fruits and their colours."]
NEW_TOKENS = 64


def main():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TQDM_DISABLE", "1")
    out = sys.argv[1]
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from torchnative.cli import bundled_model
    from torchnative.quant import from_gguf

    d, f = bundled_model()
    new_tokens = int(sys.argv[3]) if len(sys.argv) > 3 else NEW_TOKENS
    if len(sys.argv) > 2:  # another GGUF of the same model (tests/quant_k_model.py's re-quantised copy)
        d, f = os.path.split(os.path.abspath(sys.argv[2]))
        tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
        floating = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32).eval()
    else:  # the bundled file dequantised once per machine (tests/bundled.py), as from_pretrained(gguf_file=) gives it
        import bundled

        tok, floating = bundled.load(torch.float32)
    ids = [tok.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True,
                                   return_tensors="pt", return_dict=True)["input_ids"] for p in PROMPTS]
    models = {"quant": from_gguf(os.path.join(d, f)),
              "float": floating}
    # the file's own layout, not repacked (prompt logits only): the kernels of the mapped blocks
    mapped = from_gguf(os.path.join(d, f), repack_layout=False)
    res = {}
    for i, x in enumerate(ids):
        res[f"ids{i}"] = x[0].numpy()
        with torch.inference_mode():
            res[f"mapped_logits{i}"] = mapped(x).logits[0].numpy()
        for name, m in models.items():
            with torch.inference_mode():
                res[f"{name}_logits{i}"] = m(x).logits[0].numpy()
                g = m.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=new_tokens, do_sample=False,
                               min_new_tokens=new_tokens)
            res[f"{name}_tokens{i}"] = g[0, x.shape[-1]:].numpy()
    np.savez(out, **res)
    print(json.dumps({"prompts": len(ids)}))


if __name__ == "__main__":
    main()
