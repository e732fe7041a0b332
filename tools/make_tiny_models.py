"""Builds tiny randomly initialised checkpoints, one per transformers architecture, under
build/tiny_models/<model_type>/ (safetensors via save_pretrained). They exist only to run
every architecture's Python code path through torch._C; the weights mean nothing.

    .venv-ref/bin/python tools/make_tiny_models.py [OUT_DIR] [--force] [type ...]

Run it with upstream torch (.venv-ref) so the checkpoints do not depend on torchnative.
Idempotent: a model whose directory holds model.safetensors and a tiny_spec.json stamp equal
to what this script would build now is left alone (--force rebuilds anyway). Sizes: hidden 64, 2 layers, 4 heads (2 kv heads where
the architecture has GQA), vocab 256; every special token id lies inside the vocabulary.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "build", "tiny_models")
SEED = 0
VOCAB = 256

# Options most decoder configs accept under these names (attribute_map covers gpt2-style
# configs). Per-type dicts below override or extend them.
COMMON = dict(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=128, max_position_embeddings=128,
              pad_token_id=0, bos_token_id=1, eos_token_id=2)
GQA = dict(num_key_value_heads=2)

# model_type -> (auto class name, config overrides). "kind" for the tests: causal models
# generate; bert yields a last hidden state; t5 yields encoder-decoder logits.
MODELS = {
    "llama": ("AutoModelForCausalLM", dict(GQA)),
    "gpt2": ("AutoModelForCausalLM", dict(n_embd=64, n_layer=2, n_head=4, n_positions=128, n_inner=128)),
    "qwen2": ("AutoModelForCausalLM", dict(GQA)),
    "qwen3": ("AutoModelForCausalLM", dict(GQA, head_dim=16)),
    "qwen2_moe": ("AutoModelForCausalLM", dict(GQA, moe_intermediate_size=32, shared_expert_intermediate_size=64,
                                               num_experts=4, num_experts_per_tok=2)),
    "mistral": ("AutoModelForCausalLM", dict(GQA, head_dim=16, sliding_window=None)),
    "mixtral": ("AutoModelForCausalLM", dict(GQA, head_dim=16, num_local_experts=4, num_experts_per_tok=2,
                                             sliding_window=None)),
    "gemma": ("AutoModelForCausalLM", dict(GQA, head_dim=16)),
    "gemma2": ("AutoModelForCausalLM", dict(GQA, head_dim=16, sliding_window=32)),
    "gemma3_text": ("AutoModelForCausalLM", dict(GQA, head_dim=16, sliding_window=32)),
    "phi": ("AutoModelForCausalLM", dict(partial_rotary_factor=0.5)),
    "phi3": ("AutoModelForCausalLM", dict(GQA, original_max_position_embeddings=128, pad_token_id=0,
                                          eos_token_id=2)),
    "gpt_neox": ("AutoModelForCausalLM", dict(rotary_pct=0.5)),
    "gptj": ("AutoModelForCausalLM", dict(n_embd=64, n_layer=2, n_head=4, n_positions=128, n_inner=128,
                                          rotary_dim=8)),
    "opt": ("AutoModelForCausalLM", dict(ffn_dim=128, word_embed_proj_dim=64)),
    "mpt": ("AutoModelForCausalLM", dict(d_model=64, n_heads=4, n_layers=2, expansion_ratio=2, max_seq_len=128)),
    "starcoder2": ("AutoModelForCausalLM", dict(GQA, sliding_window=None)),
    "persimmon": ("AutoModelForCausalLM", dict(partial_rotary_factor=0.5)),
    "cohere": ("AutoModelForCausalLM", dict(GQA)),
    "stablelm": ("AutoModelForCausalLM", dict(GQA, partial_rotary_factor=0.25)),
    "olmo": ("AutoModelForCausalLM", dict(GQA)),
    "olmo2": ("AutoModelForCausalLM", dict(GQA)),
    "falcon": ("AutoModelForCausalLM", dict(num_kv_heads=2, new_decoder_architecture=True, ffn_hidden_size=128)),
    "bloom": ("AutoModelForCausalLM", dict(n_layer=2, n_head=4)),
    "gpt_bigcode": ("AutoModelForCausalLM", dict(n_embd=64, n_layer=2, n_head=4, n_positions=128, n_inner=128)),
    "granite": ("AutoModelForCausalLM", dict(GQA)),
    "smollm3": ("AutoModelForCausalLM", dict(GQA)),
    "mamba": ("AutoModelForCausalLM", dict(state_size=8, expand=2, conv_kernel=4, use_mambapy=False)),
    "bert": ("AutoModel", dict(type_vocab_size=2)),
    "t5": ("AutoModelForSeq2SeqLM", dict(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
                                         num_heads=4, decoder_start_token_id=0, eos_token_id=1,
                                         bos_token_id=None, relative_attention_num_buckets=8)),
}


def kind(model_type):
    """'encoder' (last hidden state), 'seq2seq' (encoder-decoder logits + generate) or 'causal'."""
    return {"bert": "encoder", "t5": "seq2seq"}.get(model_type, "causal")


def config_for(model_type):
    from transformers import AutoConfig
    kw = dict(COMMON)
    kw.update(MODELS[model_type][1])
    return AutoConfig.for_model(model_type, **kw)


def spec_of(model_type):
    """What a checkpoint was built from (options, seed, library versions): a directory whose
    stamp differs is rebuilt, so editing MODELS never leaves a stale checkpoint behind."""
    import json
    import torch
    import transformers
    return json.dumps({"options": {**COMMON, **MODELS[model_type][1]}, "auto": MODELS[model_type][0],
                       "seed": SEED, "torch": torch.__version__, "transformers": transformers.__version__},
                      sort_keys=True, default=str)


def build(model_type, out_dir, force=False):
    """Creates out_dir/model_type unless it is already complete; returns its path."""
    import torch
    import transformers
    d = os.path.join(out_dir, model_type)
    spec = spec_of(model_type)
    stamp = os.path.join(d, "tiny_spec.json")
    if not force and os.path.exists(os.path.join(d, "model.safetensors")) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == spec:
                return d
    cfg = config_for(model_type)
    torch.manual_seed(SEED)
    model = getattr(transformers, MODELS[model_type][0]).from_config(cfg, dtype=torch.float32)
    tmp = d + ".tmp"
    model.save_pretrained(tmp, safe_serialization=True)
    with open(os.path.join(tmp, "tiny_spec.json"), "w") as f:
        f.write(spec)
    if os.path.exists(d):
        import shutil
        shutil.rmtree(d)
    os.replace(tmp, d)
    return d


def main(argv):
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    force = "--force" in argv
    args = [a for a in argv if a != "--force"]
    out = DEFAULT_OUT
    if args and args[0] not in MODELS:
        out, args = args[0], args[1:]
    types = args or list(MODELS)
    os.makedirs(out, exist_ok=True)
    for t in types:
        d = build(t, out, force)
        print(f"{t:14s} {d}")


if __name__ == "__main__":
    main(sys.argv[1:])
