"""Model side of tests/test_quant.py's torchnative.quantize checks, run in a fresh process:
a transformers causal LM quantised by torchnative.quantize against a float reference with
the same fake-quantised weights (each quantised layer's weight replaced by its
dequantisation, and for 8da4w its input rounded per token to int8 and back by a forward
pre-hook), on prompt logits and greedy tokens; and the save / load round trips.

    python tests/quantize_run.py tiny|smollm2 OUT.json

tiny: a seeded random llama config (hidden 256, 2 layers), 8da4w at every group size and
int8, plus safetensors save/load and a plain load_state_dict round trip. smollm2: the
bundled GGUF dequantised to float32 (transformers' from_pretrained), 8da4w at G = 32 and
64 (576 features: 128 and 256 do not divide them) and int8.
"""
import copy
import json
import os
import sys
import tempfile

NEW_TOKENS = 16


def fake_quant_per_token(module, args):
    """The activation rounding of 8da4w (kernels/quant.h): per row, d = amax/127,
    q = round-half-even(x * (127/amax)), x -> d * q."""
    import torch

    x = args[0]
    a = x.abs().amax(-1, keepdim=True)
    inv = torch.where(a > 0, 127.0 / a, torch.zeros_like(a))
    return (torch.round(x * inv) * (a / 127.0),) + tuple(args[1:])


def reference_for(float_model, qmodel):
    """float_model with qmodel's quantised layers' weights fake-quantised (see module doc)."""
    ref = copy.deepcopy(float_model)
    for name, spec in qmodel.torchnative_quantization.items():
        lin = ref.get_submodule(name)
        lin.weight.data = qmodel.get_submodule(name).dequantized_weight().to(lin.weight.dtype)
        if spec["method"] == "8da4w":
            lin.register_forward_pre_hook(fake_quant_per_token)
    return ref


def run(model, prompts):
    import torch

    out = []
    with torch.inference_mode():
        for ids in prompts:
            logits = model(ids).logits[0]
            g = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS, do_sample=False,
                               min_new_tokens=NEW_TOKENS)
            out.append((logits, g[0, ids.shape[-1]:].tolist()))
    return out


def compare(a, b):
    """Worst max|Δlogits| / max|logits| over the prompts, and the greedy tokens that agree
    before the first difference (of all generated)."""
    rel, agree, total = 0.0, 0, 0
    for (la, ta), (lb, tb) in zip(a, b):
        rel = max(rel, ((la - lb).abs().max() / lb.abs().max()).item())
        n = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), len(ta))
        agree, total = agree + n, total + len(ta)
    return {"logits_rel": rel, "tokens_agree": agree, "tokens": total}


def main():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TQDM_DISABLE", "1")
    which, out_path = sys.argv[1], sys.argv[2]
    import torch
    from transformers import AutoModelForCausalLM

    import torchnative
    from torchnative.quantize_model import load, prepare, save

    res = {}
    if which == "tiny":
        from transformers import LlamaConfig

        torch.manual_seed(0)
        config = LlamaConfig(vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
        base = AutoModelForCausalLM.from_config(config).eval()
        prompts = [torch.randint(0, 512, (1, n), generator=torch.Generator().manual_seed(n)) for n in (5, 23)]
        methods = [("8da4w", g) for g in (32, 64, 128, 256)] + [("int8", None)]
    else:
        from torchnative.cli import bundled_model

        d, f = bundled_model()
        base = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32).eval()
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
        prompts = [tok.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True,
                                           return_tensors="pt", return_dict=True)["input_ids"]
                   for p in ("What is the capital of France?", "Write a haiku about the sea.")]
        methods = [("8da4w", 32), ("8da4w", 64), ("int8", None)]
    float_runs = run(base, prompts)
    for method, g in methods:
        key = f"{method}_{g}" if g else method
        q = torchnative.quantize(copy.deepcopy(base), method, group_size=g)
        q_runs = run(q, prompts)
        res[key] = {"vs_fake_quant": compare(q_runs, run(reference_for(base, q), prompts)),
                    "vs_float": compare(q_runs, float_runs),
                    "swapped": len(q.torchnative_quantization),
                    "lm_head": type(q.lm_head).__name__}
        if which == "tiny":
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "q.safetensors")
                save(q, path)
                fresh = load(AutoModelForCausalLM.from_config(config).eval(), path)
                same = all(torch.equal(a[0], b[0]) and a[1] == b[1] for a, b in zip(q_runs, run(fresh, prompts)))
                plain = prepare(AutoModelForCausalLM.from_config(config).eval(), q.torchnative_quantization)
                plain.load_state_dict(q.state_dict())
                same_plain = all(torch.equal(a[0], b[0]) for a, b in zip(q_runs, run(plain, prompts)))
                res[key].update(saved_bytes=os.path.getsize(path), reload_identical=same,
                                load_state_dict_identical=same_plain)
    with open(out_path, "w") as fh:
        json.dump(res, fh, indent=1)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
