"""Decode speed of SmolLM2-135M-Instruct (bundled GGUF, float32, greedy), torchnative vs
upstream torch, side by side in one run as ../shared/BENCHMARKS.md asks: each side in a fresh
process, runs alternating A B A B, tokens validated identical before any time counts.

    .venv/bin/python bench/decode.py [--pairs 5] [--new-tokens 32] [--threads 2]

Writes bench/results/decode.json and prints a markdown table."""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIDES = {"upstream": os.path.join(ROOT, ".venv-ref", "bin", "python"),
         "torchnative": os.path.join(ROOT, ".venv", "bin", "python")}

WORKER = r"""
import json, os, sys, time
sys.path.insert(0, os.path.join(%(root)r, "python"))
os.environ["HF_HUB_OFFLINE"] = "1"
import torch
torch.set_num_threads(%(threads)d)
from transformers import AutoModelForCausalLM, AutoTokenizer
from torchnative.cli import bundled_model
d, g = bundled_model()
tok = AutoTokenizer.from_pretrained(d, gguf_file=g)
model = AutoModelForCausalLM.from_pretrained(d, gguf_file=g, dtype=torch.float32).eval()
ids = tok.apply_chat_template([{"role": "user", "content": "Tell me about the sea."}], add_generation_prompt=True,
                              return_tensors="pt", return_dict=True)
with torch.inference_mode():
    model.generate(**ids, max_new_tokens=2, do_sample=False)          # warm-up
    t0 = time.perf_counter()
    first = model.generate(**ids, max_new_tokens=1, do_sample=False)
    t1 = time.perf_counter()
    out = model.generate(**ids, max_new_tokens=%(n)d, min_new_tokens=%(n)d, do_sample=False)
    t2 = time.perf_counter()
n_new = out.shape[-1] - ids["input_ids"].shape[-1]
# decode rate: tokens after the first, time net of one prefill+first token
print(json.dumps({"tokens": out[0].tolist(), "ttft": t1 - t0, "decode_tok_s": (n_new - 1) / ((t2 - t1) - (t1 - t0)),
                  "torch_C_is_ours": torch._C.__file__.endswith("_C.abi3.so")}))
"""


def run(side, args):
    code = WORKER % {"root": ROOT, "threads": args.threads, "n": args.new_tokens}
    r = subprocess.run([SIDES[side], "-c", code], capture_output=True, text=True, timeout=1800)
    if r.returncode:
        sys.exit(f"{side} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    res = {"upstream": [], "torchnative": []}
    ref_tokens = None
    for i in range(args.pairs + 1):  # pair 0 is a warm-up of the file cache, not counted
        for side in ("upstream", "torchnative"):
            r = run(side, args)
            if ref_tokens is None:
                ref_tokens = r["tokens"]
            if r["tokens"] != ref_tokens:
                sys.exit(f"{side} produced different tokens; not timing a wrong answer")
            if i:
                res[side].append(r)
    ratios = [t["decode_tok_s"] / u["decode_tok_s"] for u, t in zip(res["upstream"], res["torchnative"])]
    summary = {side: {"decode_tok_s_median": statistics.median(r["decode_tok_s"] for r in rs),
                      "ttft_s_median": statistics.median(r["ttft"] for r in rs)} for side, rs in res.items()}
    summary["ratio_decode_median"] = statistics.median(ratios)
    summary["ratio_decode_min"], summary["ratio_decode_max"] = min(ratios), max(ratios)
    summary["config"] = vars(args)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "decode.json"), "w") as f:
        json.dump({"summary": summary, "runs": res}, f, indent=1)
    print("| side | decode tok/s (median) | time to first token s (median) |")
    print("|---|---|---|")
    for side in ("upstream", "torchnative"):
        print(f"| {side} | {summary[side]['decode_tok_s_median']:.1f} | {summary[side]['ttft_s_median']:.3f} |")
    print(f"\nratio torchnative/upstream decode: median {summary['ratio_decode_median']:.2f} "
          f"(min {summary['ratio_decode_min']:.2f}, max {summary['ratio_decode_max']:.2f}), {args.pairs} pairs, "
          f"{args.threads} threads, {args.new_tokens} new tokens, float32, greedy")


if __name__ == "__main__":
    main()
