"""Shared fixtures: paths of the two environments and a runner for upstream torch; free
ports and the digits split of the federated tests; the kernel-tier split of
scripts/test.sh (the `tier_independent` marker); and, under the ASan+UBSan tier
(scripts/asan.sh), keeping the sanitizer preload out of the processes that are not ours."""
import json
import os
import pickle
import subprocess
import sys
import threading

import pytest

# The suite runs in .venv: import the real torch (on our _C) first, so no test can leave a
# stand-in torch._C module behind for the others.
import torch  # noqa: F401

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF_PYTHON = os.path.join(ROOT, ".venv-ref", "bin", "python")
BUILD = os.path.abspath(os.environ.get("TN_BUILD_DIR", os.path.join(ROOT, "build")))


# ---- upstream's answers, kept for one run of scripts/test.sh ------------------------------
# scripts/test.sh runs the kernel-dependent tests again under every lower kernel tier; the
# upstream side of each comparison does not read our tier (TN_FORCE_ISA), so computing it
# again gives the same answer. The script makes TN_REF_CACHE a fresh directory for each of
# its runs: an upstream process started through `Upstream` stores its exit status, output
# and the files it wrote there, and the same process (same arguments, standard input,
# working directory and environment, less the variables only our side reads) started by a
# later tier is answered from it. Without TN_REF_CACHE (pytest run by hand) every upstream
# process runs. Only successful runs are kept; a cached answer cannot outlive the run, so
# it cannot be stale against changed tests or a changed upstream.
REF_CACHE = os.environ.get("TN_REF_CACHE")
# our kernel tier, the sanitizer tier's preload (kept out of upstream's processes below) and
# pytest's per-test bookkeeping: none of them reaches upstream's answer
_NOT_UPSTREAMS = {"TN_FORCE_ISA", "TN_SANITIZER", "TN_BUILD_DIR", "TN_ASAN_SKIP_SETUP", "LD_PRELOAD",
                  "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "PYTHONMALLOC", "PYTEST_CURRENT_TEST"}


class Upstream:
    """A process of upstream torch (.venv-ref) running `args`, with the part of
    subprocess.Popen's interface the tests use: communicate(), wait(), poll(), kill(),
    returncode. `outputs` are the paths the process writes (a file, a directory, or a prefix
    of files named PREFIX.*); they are kept and restored with the answer, and stand as
    placeholders in the key, so another temporary directory gives the same key. `scratch`
    paths are placeholders too but are not kept (what the test does not read back)."""

    def __init__(self, args, *, outputs=(), scratch=(), input=None, env=None, cwd=None):
        self.outputs = [os.fspath(o) for o in outputs]
        self.scratch = [os.fspath(o) for o in scratch]
        self._input = input
        env = dict(os.environ if env is None else env)
        argv = [os.fspath(a) for a in args]
        keyed = [self._placeholders(a) for a in argv]
        keyenv = sorted((k, v) for k, v in env.items() if k not in _NOT_UPSTREAMS)
        import hashlib

        key = hashlib.sha256(json.dumps([keyed, input, keyenv, cwd and os.fspath(cwd)]).encode()).hexdigest()[:24]
        self._dir = os.path.join(REF_CACHE, key) if REF_CACHE else None
        self.returncode = self._p = None
        if self._dir and os.path.isdir(self._dir):
            self._restore()
        else:
            self._p = subprocess.Popen([REF_PYTHON, *argv], stdin=subprocess.PIPE if input is not None else None,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)

    def _placeholders(self, text):
        for i, o in enumerate(self.outputs):
            text = text.replace(o, f"<output {i}>")
        for i, o in enumerate(self.scratch):
            text = text.replace(o, f"<scratch {i}>")
        return text

    def _paths(self, o):
        """The files and directories output `o` stands for: itself and o.* beside it."""
        d, b = os.path.split(o)
        return [n for n in sorted(os.listdir(d or ".")) if n == b or n.startswith(b + ".")] if os.path.isdir(d or ".") else []

    def _store(self):
        import shutil

        tmp = self._dir + f".tmp{os.getpid()}"
        os.makedirs(tmp)
        for i, o in enumerate(self.outputs):
            d, b = os.path.split(o)
            for n in self._paths(o):
                src, dst = os.path.join(d, n), os.path.join(tmp, f"out{i}" + n[len(b):])
                (shutil.copytree if os.path.isdir(src) else shutil.copy2)(src, dst)
        with open(os.path.join(tmp, "answer.json"), "w") as f:
            json.dump([self.returncode, self._placeholders(self._so), self._placeholders(self._se)], f)
        try:
            os.rename(tmp, self._dir)
        except OSError:  # the same process finished twice at once: keep the first answer
            shutil.rmtree(tmp, ignore_errors=True)

    def _restore(self):
        import shutil

        with open(os.path.join(self._dir, "answer.json")) as f:
            self.returncode, so, se = json.load(f)
        for i, o in enumerate(self.scratch):
            so, se = so.replace(f"<scratch {i}>", o), se.replace(f"<scratch {i}>", o)
        for i, o in enumerate(self.outputs):
            so, se = so.replace(f"<output {i}>", o), se.replace(f"<output {i}>", o)
            d = os.path.dirname(o)
            for n in sorted(os.listdir(self._dir)):
                if n == f"out{i}" or n.startswith(f"out{i}."):
                    src, dst = os.path.join(self._dir, n), o + n[len(f"out{i}"):]
                    (shutil.copytree if os.path.isdir(src) else shutil.copy2)(src, dst)
            assert not d or os.path.isdir(d), d
        self._so, self._se = so, se

    def communicate(self, timeout=None):
        if self._p is not None and self.returncode is None:
            inp, self._input = self._input, None
            so, se = self._p.communicate(input=inp, timeout=timeout)
            self.returncode, self._so, self._se = self._p.returncode, so, se
            if self._dir and self.returncode == 0:
                self._store()
        return self._so, self._se

    def poll(self):
        if self._p is not None and self.returncode is None and self._p.poll() is not None:
            self.communicate()
        return self.returncode

    def wait(self, timeout=None):
        self.communicate(timeout)
        return self.returncode

    def kill(self):
        if self._p is not None and self._p.poll() is None:
            self._p.kill()


def run_upstream(args, *, outputs=(), input=None, env=None, cwd=None, timeout=None):
    """subprocess.run of upstream torch through Upstream: (returncode, stdout, stderr)."""
    u = Upstream(args, outputs=outputs, input=input, env=env, cwd=cwd)
    try:
        so, se = u.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        u.kill()
        raise
    return u.returncode, so, se


def run_side_pickled(python, script, out, timeout):
    """Runs `script out` under `python` (upstream through run_upstream, ours directly),
    asserts success and returns the object the script pickled into `out`."""
    if python == REF_PYTHON:
        rc, _, err = run_upstream([script, out], outputs=[out], timeout=timeout)
    else:
        r = subprocess.run([python, script, out], capture_output=True, text=True, timeout=timeout)
        rc, err = r.returncode, r.stderr
    assert rc == 0, err[-4000:]
    with open(out, "rb") as f:
        return pickle.load(f)


def run_reference(code: str, timeout: float = 600):
    """Runs `code` under upstream torch (.venv-ref) in a fresh process; the code prints one
    JSON document on its last line, which is returned."""
    rc, so, se = run_upstream(["-c", code], timeout=timeout)
    if rc != 0:
        raise RuntimeError(f"reference process failed:\n{se[-4000:]}")
    return json.loads(so.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def reference():
    return run_reference


_ports_given = set()
_ports_lock = threading.Lock()


def free_port() -> int:
    """A port on 127.0.0.1 that is free now, below the kernel's ephemeral range (so no
    process's outgoing connection can take it before the test's server binds it: runs
    side by side open many), and never handed out before in this session."""
    import random
    import socket
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    rng = random.SystemRandom()
    with _ports_lock:   # the federated tests start runs from several threads
        while True:
            port = rng.randrange(10000, max(low, 10001))
            if port in _ports_given:
                continue
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _ports_given.add(port)
            return port


def write_digits_split(path: str) -> str:
    """The federated tests' digits split (1,400 training images, 397 test; pixels / 16) as
    an .npz at `path`. Read from the CSV scikit-learn ships rather than through
    sklearn.datasets, whose import costs seconds per test on a loaded machine (the values
    are load_digits()'s: it reads the same file)."""
    import importlib.util
    import numpy as np
    here = importlib.util.find_spec("sklearn").submodule_search_locations[0]
    d = np.loadtxt(os.path.join(here, "datasets", "data", "digits.csv.gz"), delimiter=",")
    x, y = (d[:, :-1] / 16.0).astype(np.float32), d[:, -1].astype(np.int64)
    p = np.random.default_rng(0).permutation(len(y))
    np.savez(path, x_train=x[p[:1400]], y_train=y[p[:1400]], x_test=x[p[1400:]], y_test=y[p[1400:]])
    return path


# ---- kernel tiers -------------------------------------------------------------------------
# scripts/test.sh runs the whole suite once at the host's kernel tier, then again under each
# lower tier (TN_FORCE_ISA) with `-m "not tier_independent"`. A file listed here cannot
# reach a different kernel when the tier is lowered, so running it again would only repeat
# the host tier's answer. Everything else (and any new file) runs at every tier: forgetting
# to list a file costs CI minutes, listing a wrong one would hide a broken fallback, so the
# default is the safe side. A single test can opt out with @pytest.mark.tier_independent.
TIER_INDEPENDENT_FILES = {
    # generated tables, schemas, surface names, the vendored tree: no kernel runs
    "test_codegen.py": "operator tables and Python names generated from native_functions.yaml",
    "test_ops_schema.py": "schema strings of every aten overload",
    "test_surface.py": "the Python-written stand-ins of torch._C",
    "test_vendoring.py": "the installed torch tree against the wheel",
    # bytes in and out: checkpoints are copied or mapped, never computed on
    "test_serialization.py": "torch.save/load, safetensors, pickle: byte movement only",
    "test_loading.py": "weights mapped instead of copied: storage identity, no kernels",
    # the storage / take regressions: scalar C with no ISA variant
    "test_reliability.py": "argument checks, size overflow, storage resize_, take: no SIMD variant",
    # the fuzz slices test argument checking (shapes, dims, dtypes, overflow, files), which
    # is decided before any kernel runs; values are compared at every tier by test_ops.py
    "test_fuzz.py": "operator argument checking and file parsing: ISA-independent",
    # the random generators choose their own vector path (tn_random_isa), independent of
    # TN_FORCE_ISA; tests/test_random_c.py checks every path it has, bit for bit
    "test_random_c.py": "random number generation: own ISA switch, all paths tested",
    # collectives and stores: plain C loops over buffers in src/dist, no kernel, no ISA variant
    "test_distributed.py": "the transport and collectives (src/dist) have no ISA variant",
    # autograd's engine, hooks, Function and errors; the gradient numerics of every formula
    # are compared at every tier by test_autograd_grads.py
    "test_autograd.py": "engine semantics and errors; gradient numerics run per tier in test_autograd_grads.py",
    # end-to-end training runs: every operator and gradient they use is compared at every
    # tier by test_ops.py and test_autograd_grads.py; each run costs a minute or more
    "test_training.py": "end-to-end digits training; ops and gradients compared per tier elsewhere",
    "test_lora.py": "end-to-end LoRA on SmolLM2; ops and gradients compared per tier elsewhere",
    "test_trainer.py": "end-to-end Trainer run; ops and gradients compared per tier elsewhere",
    # DDP: orchestrates 2-3 rank processes; the reducer is plain C loops and door calls
    # (copy_, div_) whose kernels test_ops.py compares per tier; ~3.5 min at host tier
    "test_ddp.py": "DDP across processes: the reducer (src/dist) has no ISA variant",
    # torchnative.adapt: Python over the public API; its delta semantics do not depend on a
    # kernel, and the methods' numerics use operators compared per tier by test_ops.py and
    # test_autograd_grads.py
    "test_adapt.py": "delta, lifetime and guard semantics in Python; no kernel-specific path",
    "test_adapt_methods.py": "end-to-end adaptation runs; ops and gradients compared per tier elsewhere",
    # federated learning: Python/numpy orchestration (aggregators, accountant, masks, rounds)
    # over tiny models whose operators and gradients are compared per tier elsewhere
    "test_federated.py": "federated orchestration in numpy; its few torch ops are compared per tier elsewhere",
    "test_federated_dist.py": "multi-process federated rounds over the store and gloo: orchestration, no new kernel",
    "test_federated_flower.py": "a Flower federation of processes: orchestration, no new kernel",
    # the OpInfo sweep measures breadth (which operators, dtypes, argument forms and errors
    # agree with upstream); the numerics of every kernel at every tier are test_ops.py's job,
    # and one sweep costs one to two minutes of our side alone
    "test_opinfo.py": "operator breadth against upstream's op_db; per-tier numerics are test_ops.py's",
    # memory over long runs: what is allocated and freed does not depend on the kernel tier
    "test_leaks.py": "live bytes and resident size over 1,000 steps; allocation, not arithmetic",
    # machine code of the host build's avx2 instances, read with objdump: nothing runs
    "test_kernel_codegen.py": "reads the built extension's machine code; no kernel runs",
    # packaging: the wheel carries the host build; its kernels are the suite's business
    "test_wheel.py": "builds and installs the wheel into a fresh environment; no kernel choice",
    # the quantised kernels' ISA instances are compared at every tier by the C test
    # tests/c/test_quant.c (it sweeps the tiers itself); the model runs here once
    "test_quant.py": "quantised products: every ISA instance is compared by tests/c/test_quant.c",
    "test_quant_k.py": "k-quant products: tests/c/test_quant.c compares every ISA instance, and the file's "
                       "own scalar-tier subprocess compares the host's kernels with the portable ones",
    # runs only in scripts/test.sh's aarch64 tier, which walks the aarch64 tiers itself
    # (qemu -cpu models and TN_FORCE_ISA=neon|dotprod|scalar)
    "test_aarch64.py": "the emulated aarch64 run: its own tiers are walked under qemu",
}


# Single tests that are tier-independent in a file that is not: these C unit tests loop
# over every tier at or below the current one themselves (tn_cpu_isa_set), so the host
# run already covers each lower tier; test_gemm alone was 16 % of a host-tier run.
TIER_INDEPENDENT_TESTS = {
    "test_c_units.py::test_c_unit[test_gemm]": "sweeps every tier itself",
    "test_c_units.py::test_c_unit[test_gemv]": "sweeps every tier itself",
}

# Left out of the ASan+UBSan tier (scripts/test.sh), for time only; docs/RELIABILITY.md
# has the measurements. The model files start processes that load a 135M-parameter model
# (or 30 tiny ones) and decode; every operator they call is compared by test_ops.py,
# which the tier runs. They run under ASan on demand: scripts/asan.sh -m pytest tests/<file>.
ASAN_SKIP_FILES = {"test_inference.py", "test_graphs.py", "test_roundtrip.py", "test_architectures.py",
                   # training runs (a 135M model for LoRA): their operators and gradients run
                   # under ASan through test_ops.py and test_autograd_grads.py
                   "test_lora.py", "test_training.py", "test_trainer.py",
                   # up to 4 ranks of ASan'd Python on 2 cores exceed the tests' own time
                   # bounds (measured: 4 ranks > 300 s); the transport and collectives run
                   # under ASan in the C test test_dist (loopback, 3 ranks)
                   "test_distributed.py",
                   # 2-3 ASan'd Python ranks per launch, ~20 launches: the reducer itself
                   # runs under ASan in the C test test_reducer (a real backward pass)
                   "test_ddp.py",
                   # 5-7 processes per federated run and a Flower deployment of 3 servers plus
                   # their subprocesses: ASan'd ranks exceed the tests' time bounds, as above
                   "test_federated_dist.py", "test_federated_flower.py",
                   # every adaptation method run side by side with upstream (a CNN trained
                   # first): end-to-end runs like test_training.py, whose operators and
                   # gradients run under ASan through test_ops.py and test_autograd_grads.py
                   "test_adapt_methods.py",
                   # resident sizes under ASan measure its quarantine and shadow memory, not
                   # ours; LeakSanitizer is the leak check of that tier
                   "test_leaks.py",
                   # installs the normal build into a fresh environment (no sanitizer runtime)
                   "test_wheel.py",
                   # a 135M model loaded twice and decoded on 4 prompts (and llama.cpp's side);
                   # the quantised kernels run under ASan in the C test test_quant
                   "test_quant.py",
                   # the op_db sweep measures breadth against upstream; the kernels it reaches
                   # run under ASan through test_ops.py (one sweep is minutes of our side)
                   "test_opinfo.py",
                   # the benchmark script's plumbing (rows, checksums): its three operators run
                   # under ASan through test_ops.py; its timing loops cost 256 s under ASan
                   # (session 31, --durations), the slowest single test of that tier
                   "test_bench_opspeed.py"}
# single tests, as "file::name"
ASAN_SKIP_TESTS = {
    # SmolLM2 requantised to Q4_K/Q6_K and decoded beside upstream and llama.cpp; the
    # k-quant kernels run under ASan in the C test test_quant and this file's op tests
    "test_quant_k.py::test_kquant_model_loads_kept_quantised",
    "test_quant_k.py::test_kquant_model_vs_float32_dequantised",
    "test_quant_k.py::test_kquant_model_vs_llama_cpp",
    # the runs fixture (212 s under ASan) and llama.cpp's ggml loaded into the process;
    # the model run once more, upstream torch beside it
    "test_quant_k.py::test_kquant_model_with_ggml_norm_and_swiglu_bit_identical_to_llama_cpp",
    "test_quant_k.py::test_kquant_model_rms_norm_is_upstream_torch_s",
}
# (test_nn_vec was here: its generic 2x2 max pool disagreed under ASan+UBSan only. That was
# GCC 12.2 miscompiling the function, not undefined behaviour of ours; the function now
# opts out of the signed-overflow check, tools/sanitizers/gcc_vector_ubsan_miscompile.c
# reproduces the bug, docs/RELIABILITY.md.)


# Whole models decoded side by side with upstream: scripts/test.sh leaves them out of the
# scalar tier (its header says why); every other tier runs them.
MODEL_RUN_FILES = {"test_inference.py", "test_graphs.py", "test_roundtrip.py", "test_architectures.py"}


def pytest_configure(config):
    config.addinivalue_line("markers", "tier_independent: runs at the host kernel tier only (scripts/test.sh)")
    config.addinivalue_line("markers", "asan_skip: not run by the ASan+UBSan tier (the reason is in the test)")
    config.addinivalue_line("markers", "model_run: a whole-model comparison, left out of the scalar tier")


def pytest_collection_modifyitems(config, items):
    for item in items:
        base = os.path.basename(str(item.fspath))
        key = base + "::" + item.name
        if base in TIER_INDEPENDENT_FILES or key in TIER_INDEPENDENT_TESTS:
            item.add_marker(pytest.mark.tier_independent)
        if base in MODEL_RUN_FILES:
            item.add_marker(pytest.mark.model_run)
        if base in ASAN_SKIP_FILES or key in ASAN_SKIP_TESTS:
            item.add_marker(pytest.mark.asan_skip)


# ---- the ASan+UBSan tier ------------------------------------------------------------------
# scripts/asan.sh starts this interpreter with libasan preloaded (the sanitized _C needs
# its runtime first). Children inherit the environment: our own interpreter (the optest
# side, the model runners) must keep it, but upstream torch (.venv-ref) and other programs
# must not run under our preload and leak checker. Every Popen goes through here.
if os.environ.get("TN_SANITIZER"):
    _SANITIZER_VARS = ("LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "PYTHONMALLOC",
                       "TN_SANITIZER")
    _REF_PREFIX = os.path.join(ROOT, ".venv-ref") + os.sep

    class _SanitizerScopedPopen(subprocess.Popen):
        def __init__(self, args, *a, **kw):
            argv0 = args if isinstance(args, (str, bytes, os.PathLike)) else (args[0] if args else "")
            argv0 = os.fsdecode(argv0) if not isinstance(argv0, str) else argv0
            ours = os.path.abspath(argv0) == os.path.abspath(sys.executable) if os.sep in argv0 else False
            if not ours:
                env = dict(kw.get("env") if kw.get("env") is not None else os.environ)
                env.pop("LD_PRELOAD", None)
                if os.path.abspath(argv0).startswith(_REF_PREFIX):
                    for v in _SANITIZER_VARS:
                        env.pop(v, None)
                kw["env"] = env
            super().__init__(args, *a, **kw)

    subprocess.Popen = _SanitizerScopedPopen
