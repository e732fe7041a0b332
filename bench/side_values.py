"""side_values.py — one torch expression evaluated by upstream torch (.venv-ref) and by
torchnative (.venv), each in its own process on the same seeded input; prints how many
elements differ and the largest difference, and each side's wall time for one call.

    .venv/bin/python bench/side_values.py "torch.nn.functional.logsigmoid(x.bfloat16())"
    .venv/bin/python bench/side_values.py "torch.special.legendre_polynomial_p(torch.tensor([0.0, 0.5]), 2**31 - 1)"

`x` is torch.randn(100000) * 6 from a generator seeded with 0 (--n to change its size)."""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHILD = r"""
import json, sys, time, torch
x = torch.randn(int(sys.argv[2]), generator=torch.Generator().manual_seed(0)) * 6
t0 = time.perf_counter()
y = eval(sys.argv[1])
dt = time.perf_counter() - t0
print(json.dumps({"v": y.double().flatten().tolist(), "s": dt}))
"""


def side(python, expr, n):
    out = subprocess.run([python, "-c", CHILD, expr, str(n)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("expr")
    ap.add_argument("--n", type=int, default=100000)
    a = ap.parse_args()
    up = side(os.path.join(ROOT, ".venv-ref", "bin", "python"), a.expr, a.n)
    ours = side(os.path.join(ROOT, ".venv", "bin", "python"), a.expr, a.n)
    diff = [abs(p - q) for p, q in zip(up["v"], ours["v"]) if p != q and not (p != p and q != q)]
    print(f"{len(diff)} of {len(up['v'])} elements differ, largest {max(diff) if diff else 0:.3g}; "
          f"one call: upstream {up['s']:.3f} s, torchnative {ours['s']:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
