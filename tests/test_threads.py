"""Threads: the GIL is released around real work, torch.set_num_threads governs the one
pool, and tensors cross Python threads safely (per-thread allocation caches)."""
import os
import subprocess
import sys
import threading
import time

import pytest
import torch


def _max_gap_while(fn):
    """Runs fn in a thread; returns (max gap between the main thread's loop iterations while
    fn ran, fn's duration). A held GIL shows as one gap as long as fn."""
    done = threading.Event()
    span = {}

    def work():
        t0 = time.perf_counter()
        fn()
        span["t"] = time.perf_counter() - t0
        done.set()

    th = threading.Thread(target=work)
    last = time.perf_counter()
    gap = 0.0
    th.start()
    while not done.is_set():
        now = time.perf_counter()
        gap = max(gap, now - last)
        last = now
    th.join()
    return gap, span["t"]


@pytest.fixture
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_gil_released_around_big_kernels(one_thread):
    a = torch.randn(1024, 1024)
    b = torch.randn(1024, 1024)
    x = torch.randn(4_000_000)

    def work():
        for _ in range(8):
            torch.mm(a, b)
            torch.exp(x)

    gap, dur = _max_gap_while(work)
    # With the GIL held the main thread would stall for whole kernels (dur / 16 each at
    # least); released, it only waits for the interpreter's switch interval.
    assert dur > 0.05, f"work too short to judge ({dur:.3f} s)"
    assert gap < max(0.5 * dur, 0.03), f"main thread stalled {gap * 1e3:.1f} ms of {dur * 1e3:.1f} ms"


def test_gil_kept_for_tiny_ops_still_correct():
    # tiny ops do not release (cost); results from several threads stay right
    out = [None] * 4

    def work(i):
        t = torch.full((3,), float(i))
        for _ in range(2000):
            t = t + 1
        out[i] = t

    ths = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    for i in range(4):
        assert out[i].tolist() == [2000.0 + i] * 3


def test_tensors_cross_threads_and_thread_exit():
    # made on one thread, dropped on another; threads exiting flush their caches
    made = []

    def make():
        made.extend(torch.full((k,), float(k)) for k in range(1, 300))

    for _ in range(5):
        th = threading.Thread(target=make)
        th.start()
        th.join()
    total = sum(t.sum().item() for t in made)
    assert total == 5 * sum(k * k for k in range(1, 300))
    made.clear()


def test_concurrent_big_ops_from_two_threads():
    a = torch.randn(300, 700)
    b = torch.randn(700, 500)
    x = torch.randn(200_003)
    ref_mm = torch.mm(a, b)
    ref_exp = torch.exp(x)
    errs = []

    def work():
        for _ in range(10):
            if not torch.equal(torch.mm(a, b), ref_mm) or not torch.equal(torch.exp(x), ref_exp):
                errs.append("mismatch")

    ths = [threading.Thread(target=work) for _ in range(3)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert not errs


def test_set_num_threads_governs_the_pool():
    # In a fresh process: with one thread no pool worker is ever started; with three, work
    # big enough to split starts two. Workers are named "tn-pool" (/proc/self/task/*/comm).
    code = r"""
import os, sys, torch
torch.set_num_threads(int(sys.argv[1]))
x = torch.randn(4_000_000)
for _ in range(3):
    torch.exp(x); torch.nn.functional.linear(torch.randn(1, 1024), torch.randn(4096, 1024))
names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
print(torch.get_num_threads(), names.count("tn-pool"))
"""
    res = {}
    for n in (1, 3):
        r = subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        got, workers = map(int, r.stdout.split())
        assert got == n
        res[n] = workers
    assert res[1] == 0, f"{res[1]} pool workers started with torch.set_num_threads(1)"
    assert res[3] == 2, f"{res[3]} pool workers started with torch.set_num_threads(3), expected 2"


def _decode_like_cycle(ws, x, reps):
    outs = []
    for _ in range(reps):
        outs.append([torch.nn.functional.linear(x, w) for w in ws])
    return outs


def test_weight_stream_learns_the_order_and_changes_no_result():
    """The weight stream (src/kernels/stream.h): products that read the same weights in the
    same order every step are traced, the second step on has a prediction for every product,
    an idle pool worker prefetches along it, and results are bit-identical with it off."""
    n = torch.get_num_threads()
    was = torch._C._tn_weight_prefetch(None)
    try:
        torch.set_num_threads(2)
        torch.manual_seed(0)
        ws = [torch.randn(r, 576) for r in (576, 192, 1536, 576, 1536)]  # 0.4-3.4 MiB each
        x = torch.randn(1, 576)
        torch._C._tn_weight_prefetch(True)
        torch._C._tn_weight_prefetch_stats(True)
        on = _decode_like_cycle(ws, x, 3)
        s = torch._C._tn_weight_prefetch_stats(False)
        assert s["notes"] == 3 * len(ws)
        # every product after the first step has a prediction; a first-step product may have
        # one too, when its weight reuses the address of one an earlier test traced
        assert 2 * len(ws) <= s["predicted"] <= 3 * len(ws)
        deadline = time.perf_counter() + 5
        while torch._C._tn_weight_prefetch_stats(False)["prefetched_bytes"] == 0 and time.perf_counter() < deadline:
            pass  # the worker spins after the last region and runs the hook
        assert torch._C._tn_weight_prefetch_stats(False)["prefetched_bytes"] > 0
        assert 1 << 20 <= s["window"] <= 8 << 20

        assert torch._C._tn_weight_prefetch(False) is True
        torch._C._tn_weight_prefetch_stats(True)
        off = _decode_like_cycle(ws, x, 3)
        assert torch._C._tn_weight_prefetch_stats(True)["notes"] == 0
        for a, b in zip(on, off):
            for u, v in zip(a, b):
                assert torch.equal(u, v)
        with pytest.raises(TypeError):
            torch._C._tn_weight_prefetch(1)
    finally:
        torch._C._tn_weight_prefetch(was)
        torch.set_num_threads(n)


def test_weight_stream_env_off():
    code = "import torch; print(torch._C._tn_weight_prefetch(None))"
    for value, want in (("0", "False"), ("1", "True")):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(os.environ, TN_WEIGHT_PREFETCH=value), timeout=300)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == want


def test_batched_small_products_same_bits_at_any_thread_count():
    # session 47: many small products of a bmm / baddbmm are cut among the threads, each on one
    # thread; a product on one thread must give the bits the pool-split product gives
    torch.manual_seed(0)
    before = torch.get_num_threads()
    try:
        for dt in (torch.float32, torch.float64, torch.bfloat16, torch.complex64, torch.int64):
            for b, m, k, n in [(64, 64, 64, 64), (7, 33, 17, 65), (16, 8, 512, 8), (5, 1, 300, 1)]:
                if dt == torch.int64:
                    a, c = torch.randint(-5, 5, (b, m, k)), torch.randint(-5, 5, (b, k, n))
                else:
                    a, c = torch.randn(b, m, k, dtype=dt), torch.randn(b, k, n, dtype=dt)
                torch.set_num_threads(1)
                one = (torch.bmm(a, c), torch.baddbmm(a[:, :, :1] @ c[:, :1], a, c, beta=0.5, alpha=2), a @ c)
                torch.set_num_threads(2)
                two = (torch.bmm(a, c), torch.baddbmm(a[:, :, :1] @ c[:, :1], a, c, beta=0.5, alpha=2), a @ c)
                for x, y in zip(one, two):
                    assert torch.equal(x, y), (dt, (b, m, k, n))
    finally:
        torch.set_num_threads(before)


def test_linear_algebra_same_bits_at_any_thread_count():
    # session 48: the SVD's Jacobi rounds split their disjoint pairs among the threads, each
    # pair's arithmetic its own, so 1 and 2 threads must give the same bits; eigh (and the
    # hermitian pinv through it) runs on one thread and must too. (Not the blocked LU / QR /
    # Cholesky: their products go to OpenBLAS, whose kernels for a thread's share of C may sum
    # in another order than for all of it, as upstream's MKL may.)
    torch.manual_seed(0)
    before = torch.get_num_threads()
    try:
        for dt, n in ((torch.float64, 200), (torch.float32, 150)):
            a = torch.randn(n, n, dtype=dt)
            s = a @ a.mT + n * torch.eye(n, dtype=dt)
            ops = (lambda: torch.linalg.eigh(s), lambda: torch.linalg.eigh(s, UPLO="U"), lambda: torch.linalg.svd(a),
                   lambda: torch.linalg.svd(a[:, : n // 2]), lambda: torch.linalg.pinv(s, hermitian=True))
            torch.set_num_threads(1)
            one = [f() for f in ops]
            torch.set_num_threads(2)
            two = [f() for f in ops]
            for i, (x, y) in enumerate(zip(one, two)):
                xs, ys = (x, y) if isinstance(x, tuple) else ((x,), (y,))
                for p, q in zip(xs, ys):
                    assert torch.equal(p, q), (dt, i)
    finally:
        torch.set_num_threads(before)
