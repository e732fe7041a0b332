"""Memory stays flat over long runs (issue 21, item 1): a 1,000-token decode and 1,000
training steps (digits MLP and CNN, Adam) on our core, each in a fresh process
(tests/leak_run.py), sampled at every step.

After 200 warm-up steps:
- training: the live tensor bytes (torch._C._tn_storage_stats, every storage our core
  allocated and has not freed) are the same after every step, exactly; the resident size
  grows by less than 4 MiB over the remaining 800 steps;
- decode: live bytes grow by no more than the KV cache's own growth (its bytes per token are
  known from the config) plus 256 KiB, and the resident size minus the live bytes drifts by
  less than 8 MiB.
Each check is also run with leak_run.py's --leak, which keeps 64 KiB more per step alive,
and must fail then: the check can see a leak of that size."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.join(os.path.dirname(HERE), ".venv", "bin", "python")
WARM = 200
MB = 1 << 20


def run(what, leak=0):
    cmd = [PY, os.path.join(HERE, "leak_run.py"), what] + (["--leak", str(leak)] if leak else [])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return r["samples"], r["kv_per_token"]


def train_problems(samples):
    base = samples[WARM - 1]
    probs = []
    moved = [s for s in samples[WARM:] if s[2] != base[2]]
    if moved:
        probs.append(f"live bytes moved after step {WARM}: {base[2]} -> {moved[-1][2]} at step {moved[-1][0]}")
    grew = samples[-1][1] - base[1]
    if grew >= 4 * MB:
        probs.append(f"resident size grew by {grew / MB:.1f} MiB over {len(samples) - WARM} steps")
    return probs


def decode_problems(samples, kv_per_token):
    base, last = samples[WARM - 1], samples[-1]
    probs = []
    kv = (last[0] - base[0]) * kv_per_token
    live = last[2] - base[2]
    if live > kv + 256 * 1024:
        probs.append(f"live bytes grew by {live} over {last[0] - base[0]} tokens; the KV cache by {kv}")
    drift = (last[1] - last[2]) - (base[1] - base[2])
    if drift >= 8 * MB:
        probs.append(f"resident minus live drifted by {drift / MB:.1f} MiB")
    return probs


@pytest.mark.parametrize("what", ["train_mlp", "train_cnn"])
def test_training_memory_is_flat(what):
    samples, _ = run(what)
    assert len(samples) == 1000
    assert train_problems(samples) == []
    leaky, _ = run(what, leak=64 * 1024)
    assert train_problems(leaky), "a 64 KiB-per-step leak went unnoticed"


def test_decode_memory_is_flat():
    samples, per_token = run("decode")
    assert len(samples) == 1000 and samples[-1][0] - samples[0][0] == 999
    assert decode_problems(samples, per_token) == []
    leaky, _ = run("decode", leak=64 * 1024)
    assert decode_problems(leaky, per_token), "a 64 KiB-per-token leak went unnoticed"


HEAP_PROBE = r"""
import ctypes, resource, torch
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def round_():
    ps = [libc.malloc(1 << 20) for _ in range(20)]
    for p in ps:
        ctypes.memset(p, 1, 1 << 20)
    for p in ps:
        libc.free(p)
round_()
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
round_()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0)
"""


def test_heap_pages_stay_mapped_between_steps():
    """Importing our torch fixes glibc's mmap and trim thresholds (core/alloc.h,
    tn_alloc_tune_malloc): the heap memory a step frees is reused by the next step instead of
    being returned to the system and faulted in again (a Tent step took 608 faults and 1.6 ms
    of system time per step in about one process in three). 20 MiB of 1 MiB blocks freed and
    taken again: no page faults; with TN_MALLOC_TUNE=0 (glibc's dynamic defaults) every page
    of the second round faults, so the probe can see the difference."""
    def faults(tune):
        env = dict(os.environ, TN_MALLOC_TUNE=tune)
        out = subprocess.run([PY, "-c", HEAP_PROBE], capture_output=True, text=True, timeout=120, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
        return int(out.stdout.strip().splitlines()[-1])
    assert faults("1") < 64
    assert faults("0") >= 20 * 256 // 2
