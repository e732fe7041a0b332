"""inplace_out.py — elementwise operators on 1,000,000 float32 elements in their three forms
(function, in-place, out=), timed side by side: upstream torch (.venv-ref) and torchnative
(.venv) in their own processes, 2 threads, best of 50 calls after one warm-up call. The in-place
and out= rows show what the door costs when it writes the result into the caller's tensor
(session 36: the functional's result used to be computed into a new tensor and copied).

    .venv/bin/python bench/inplace_out.py
"""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHILD = r"""
import time, torch
torch.set_num_threads(2)
torch.manual_seed(0)
x = torch.rand(1000000); y = torch.rand(1000000); o = torch.empty(1000000)
cases = [("neg", lambda: torch.neg(x)), ("neg_", lambda: y.neg_()), ("neg out=", lambda: torch.neg(x, out=o)),
         ("exp", lambda: torch.exp(x)), ("exp out=", lambda: torch.exp(x, out=o)),
         ("add", lambda: x + y), ("add_", lambda: y.add_(1)), ("add out=", lambda: torch.add(x, y, out=o)),
         ("mul out=", lambda: torch.mul(x, y, out=o)), ("sigmoid_", lambda: y.sigmoid_()),
         ("sigmoid out=", lambda: torch.sigmoid(x, out=o)), ("clamp_", lambda: y.clamp_(0, 1)),
         ("threshold_", lambda: torch.nn.functional.threshold(y, 0.5, 0.0, inplace=True)),
         ("fill", lambda: torch.fill(x, 2.0)), ("copy_", lambda: o.copy_(x))]
for name, f in cases:
    f()
    best = 1e9
    for _ in range(50):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    print(f"{name}\t{best * 1e6:.1f}")
"""


def side(venv):
    out = subprocess.run([os.path.join(ROOT, venv, "bin", "python"), "-c", CHILD], capture_output=True, text=True, check=True)
    return [line.split("\t") for line in out.stdout.strip().splitlines()]


def main():
    up, ours = side(".venv-ref"), side(".venv")
    print(f"{'case':16s} {'upstream us':>12s} {'ours us':>10s} {'ours/up':>8s}")
    for (name, u), (_, o) in zip(up, ours):
        print(f"{name:16s} {float(u):12.1f} {float(o):10.1f} {float(o) / float(u):8.2f}")


if __name__ == "__main__":
    main()
