"""Shared fixtures: paths of the two environments and a runner for upstream torch; the
kernel-tier split of scripts/test.sh (the `tier_independent` marker); and, under the
ASan+UBSan tier (scripts/asan.sh), keeping the sanitizer preload out of the processes
that are not ours."""
import json
import os
import subprocess
import sys

import pytest

# The suite runs in .venv: import the real torch (on our _C) first, so no test can leave a
# stand-in torch._C module behind for the others.
import torch  # noqa: F401

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF_PYTHON = os.path.join(ROOT, ".venv-ref", "bin", "python")
BUILD = os.path.abspath(os.environ.get("TN_BUILD_DIR", os.path.join(ROOT, "build")))


def run_reference(code: str, timeout: float = 600):
    """Runs `code` under upstream torch (.venv-ref) in a fresh process; the code prints one
    JSON document on its last line, which is returned."""
    out = subprocess.run([REF_PYTHON, "-c", code], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"reference process failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def reference():
    return run_reference


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
                   "test_adapt_methods.py"}
ASAN_SKIP_TESTS: set = set()  # single tests, as "file::name"


def pytest_configure(config):
    config.addinivalue_line("markers", "tier_independent: runs at the host kernel tier only (scripts/test.sh)")
    config.addinivalue_line("markers", "asan_skip: not run by the ASan+UBSan tier (the reason is in the test)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        base = os.path.basename(str(item.fspath))
        key = base + "::" + item.name
        if base in TIER_INDEPENDENT_FILES or key in TIER_INDEPENDENT_TESTS:
            item.add_marker(pytest.mark.tier_independent)
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
