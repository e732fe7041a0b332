"""Reductions over expanded (zero-stride) views into one element, torchnative (.venv) beside
upstream torch 2.13.0 (.venv-ref), the numbers behind docs/RELIABILITY.md "Session 27"
(Norms): each side runs in its own process, alternating, and every figure is the best of
--reps calls; the values must be bitwise equal between the sides.

    .venv/bin/python bench/reduce_views.py [--reps 3] [--log2n 30]"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIDES = {"upstream": os.path.join(ROOT, ".venv-ref", "bin", "python"),
         "torchnative": os.path.join(ROOT, ".venv", "bin", "python")}

CHILD = r"""
import json, sys, time, torch
reps, n = int(sys.argv[1]), 2 ** int(sys.argv[2])
x = torch.tensor([[0.7]]).expand(n, 1)
y = torch.randn(1, 64, generator=torch.Generator().manual_seed(0)).expand(n // 64, 64)
cases = {"norm 2 of [n, 1] expanded": lambda: torch.linalg.vector_norm(x),
         "norm 1 of [n/64, 64] row-expanded": lambda: torch.linalg.vector_norm(y, 1),
         "norm 3 of [n/64, 64] row-expanded": lambda: torch.linalg.vector_norm(y, 3.0)}
out = {}
for name, f in cases.items():
    best = None
    for _ in range(reps):
        t = time.perf_counter(); v = f(); t = time.perf_counter() - t
        best = t if best is None else min(best, t)
    out[name] = [best, float(v).hex()]
print(json.dumps(out))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--log2n", type=int, default=30)
    a = ap.parse_args()
    res = {}
    for side, py in SIDES.items():
        got = subprocess.run([py, "-c", CHILD, str(a.reps), str(a.log2n)], capture_output=True, text=True,
                             check=True, env=dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2")))
        res[side] = json.loads(got.stdout.strip().splitlines()[-1])
    print(f"n = 2**{a.log2n}, best of {a.reps}")
    print(f"{'case':40s} {'upstream s':>11s} {'ours s':>9s} {'ours/up':>8s}  bitwise equal")
    for name in res["upstream"]:
        (tu, vu), (to, vo) = res["upstream"][name], res["torchnative"][name]
        print(f"{name:40s} {tu:11.3f} {to:9.3f} {to / tu:8.2f}  {vu == vo}")
    return 0 if all(res["upstream"][k][1] == res["torchnative"][k][1] for k in res["upstream"]) else 1


if __name__ == "__main__":
    sys.exit(main())
