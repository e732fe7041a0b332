"""llama.cpp's side of tests/test_quant.py (run with .venv-ref's Python, where
`scripts/setup.sh --llama-cpp` installs llama_cpp_python): the same GGUF file, the prompt
token ids written by tests/quant_run.py, and llama.cpp's logits for every prompt position
(the prompt evaluated as one batch), of the first token evaluated alone, and its greedy
continuation.

    python tests/quant_llama_cpp.py MODEL.gguf IN.npz OUT.npz

Exit status 3 when llama_cpp is not installed (the test skips). Settings:
- "extra buffer types" (weight repacking, the AMX kernels on CPUs reporting AMX) off: on
  the development VM the AMX path dies with SIGILL at its first tile instruction, and the
  plain CPU kernels are the reference wanted here;
- the KV cache in float32 and no flash attention: llama.cpp's defaults (float16 cache,
  flash attention converting Q to float16) round attention in ways transformers' float32
  attention does not; with these two, the first position's logits (attention over one
  token) come out bit-identical to the kept-quantised path's, which shows the quantised
  products compute what llama.cpp's do (tests/test_quant.py).
"""
import json
import sys

import numpy as np

NEW_TOKENS = 64


def load(path, n_threads=1, n_ctx=1024):
    """llama_cpp.Llama over `path` with the settings in the module docstring. One thread:
    llama.cpp's threads spin while they wait, which on a loaded 2-core machine made a
    2-thread run take minutes; results do not depend on the count."""
    import llama_cpp
    import llama_cpp.llama as llama_mod

    default = llama_cpp.llama_model_default_params

    def params():
        p = default()
        p.use_extra_bufts = False
        return p

    llama_mod.llama_cpp.llama_model_default_params = params
    try:
        return llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                               n_batch=512, logits_all=True, verbose=False, flash_attn=False,
                               type_k=0, type_v=0)  # GGML_TYPE_F32
    finally:
        llama_mod.llama_cpp.llama_model_default_params = default


def main():
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        sys.exit(3)
    model, inp, out = sys.argv[1:4]
    llm = load(model)
    src = np.load(inp)
    res = {}
    i = 0
    while f"ids{i}" in src:
        ids = [int(t) for t in src[f"ids{i}"]]
        llm.reset()
        llm.eval(ids)
        res[f"logits{i}"] = np.array(llm.scores[:len(ids)], dtype=np.float32)
        llm.reset()  # the first token alone: llama.cpp's one-row path (vec_dot), not its batched one
        llm.eval(ids[:1])
        res[f"first_alone{i}"] = np.array(llm.scores[0], dtype=np.float32)
        toks = []
        for t in llm.generate(ids, top_k=1, top_p=1.0, min_p=0.0, temp=0.0, repeat_penalty=1.0, reset=True):
            toks.append(t)
            if len(toks) >= NEW_TOKENS:
                break
        res[f"tokens{i}"] = np.array(toks)
        i += 1
    np.savez(out, **res)
    print(json.dumps({"prompts": i}))


if __name__ == "__main__":
    main()
