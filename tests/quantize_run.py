"""Model side of tests/test_quant.py's torchnative.quantize checks, run in a fresh process:
a transformers causal LM quantised by torchnative.quantize against a float reference with
the same fake-quantised weights (each quantised layer's weight replaced by its
dequantisation, and for 8da4w its input rounded per token to int8 and back by a forward
pre-hook), on prompt logits and greedy tokens, and layer by layer on the inputs each
quantised layer saw; and the save / load round trips.

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
    # true float32 divisions, as the kernel computes them: torch's `127.0 / a` is
    # reciprocal(a) * 127 and `a / 127.0` multiplies by 1/127 on the CPU, each up to an
    # ulp away, which flips the rounding of an occasional x * 127/a near a half
    c = torch.full_like(a, 127.0)
    inv = torch.where(a > 0, c / a, torch.zeros_like(a))
    return (torch.round(x * inv) * (a / c),) + tuple(args[1:])


def reference_for(float_model, qmodel):
    """float_model with qmodel's quantised layers' weights fake-quantised (see module doc)."""
    ref = copy.deepcopy(float_model)
    for name, spec in qmodel.torchnative_quantization.items():
        lin = ref.get_submodule(name)
        lin.weight.data = qmodel.get_submodule(name).dequantized_weight().to(lin.weight.dtype)
        if spec["method"] == "8da4w":
            lin.register_forward_pre_hook(fake_quant_per_token)
    return ref


def per_layer(qmodel, ids):
    """Worst over the quantised layers of max|y - y_ref| / max|y_ref| on the inputs each
    layer saw in a forward over ids, y_ref the fake-quantised float product of that input
    (no propagation between layers: only the kernels' summation order remains)."""
    import torch

    seen = []
    hooks = [qmodel.get_submodule(n).register_forward_hook(lambda mod, a, y: seen.append((mod, a[0], y)))
             for n in qmodel.torchnative_quantization]
    with torch.inference_mode():
        qmodel(ids)
        for h in hooks:
            h.remove()
        worst = 0.0
        for mod, x, y in seen:
            xr = fake_quant_per_token(None, (x,))[0] if hasattr(mod, "group_size") else x
            ref = xr @ mod.dequantized_weight().T
            worst = max(worst, ((y - ref).abs().max() / ref.abs().max()).item())
    return worst


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
    """Worst max|Δlogits| / max|logits| over the prompts, the fraction of prompt positions
    whose argmax agrees, and the greedy tokens that agree before the first difference (of
    all generated)."""
    rel, agree, total, same_argmax, positions = 0.0, 0, 0, 0, 0
    for (la, ta), (lb, tb) in zip(a, b):
        rel = max(rel, ((la - lb).abs().max() / lb.abs().max()).item())
        same_argmax += (la.argmax(-1) == lb.argmax(-1)).sum().item()
        positions += la.shape[0]
        n = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), len(ta))
        agree, total = agree + n, total + len(ta)
    return {"logits_rel": rel, "argmax_agree": same_argmax / positions, "tokens_agree": agree, "tokens": total}


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
        import bundled  # the bundled GGUF dequantised once per machine

        tok, base = bundled.load(torch.float32)
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
                    "per_layer_rel": per_layer(q, prompts[-1]),
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
