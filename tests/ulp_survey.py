"""tests/ulp_survey.py — how far our float32 transcendental functions are from upstream's,
in units in the last place, on the same inputs: 2**20 seeded N(0, 9) values (torch's own
generator, identical on both sides), each function run by upstream (.venv-ref) and by us
(.venv) in separate processes. Prints, per function, the share of elements whose bits
differ, the largest difference in ulps (signed-integer distance of the float32 patterns,
after +0/-0 pairs and equal NaNs are counted equal), and the worst input. A survey, not a
test: upstream's vectorised kernels use Sleef and their own polynomials, ours libm or
ours, so bit-for-bit agreement is not claimed; docs/STATUS.md quotes this output.

    .venv/bin/python tests/ulp_survey.py
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUNCS = ["exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "silu", "gelu", "gelu_tanh",
         "erf", "erfc", "softplus", "mish", "elu", "rsqrt", "sqrt", "pow2.5"]

WORKER = r'''
import sys, numpy as np, torch
F = torch.nn.functional
torch.manual_seed(0)
x = torch.randn(1 << 20) * 3
fns = {"exp": torch.exp, "expm1": torch.expm1, "log": lambda t: torch.log(t.abs()), "log1p": lambda t: torch.log1p(t.abs()),
       "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
       "silu": F.silu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "erf": torch.erf,
       "erfc": torch.erfc, "softplus": F.softplus, "mish": F.mish, "elu": F.elu, "rsqrt": lambda t: torch.rsqrt(t.abs()),
       "sqrt": lambda t: torch.sqrt(t.abs()), "pow2.5": lambda t: t.abs() ** 2.5}
np.savez(sys.argv[1], x=x.numpy(), **{k: fns[k](x).numpy() for k in sys.argv[2].split(",")})
'''


def run(python, path):
    r = subprocess.run([python, "-c", WORKER, path, ",".join(FUNCS)], capture_output=True, text=True, timeout=600,
                       cwd=ROOT, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if r.returncode != 0:
        raise SystemExit(f"{python}: {r.stderr[-2000:]}")


def main():
    import tempfile

    import numpy as np
    with tempfile.TemporaryDirectory() as d:
        up, ours = os.path.join(d, "up.npz"), os.path.join(d, "ours.npz")
        run(os.path.join(ROOT, ".venv-ref", "bin", "python"), up)
        run(os.path.join(ROOT, ".venv", "bin", "python"), ours)
        a, b = np.load(up), np.load(ours)
        assert np.array_equal(a["x"], b["x"]), "the two sides drew different inputs"
        rows = {}
        for f in FUNCS:
            u, o = a[f], b[f]
            same = (u == o) | (np.isnan(u) & np.isnan(o))
            d_ulp = np.abs(u.view(np.int32).astype(np.int64) - o.view(np.int32).astype(np.int64))
            d_ulp[same] = 0
            i = int(np.argmax(d_ulp))
            rows[f] = {"differ_pct": round(float(np.mean(~same)) * 100, 2), "max_ulps": int(d_ulp.max()),
                       "worst": [float(a["x"][i]), float(u[i]), float(o[i])]}
            print(f"{f:10s} differ {rows[f]['differ_pct']:6.2f} %   max {rows[f]['max_ulps']:>10d} ulps   "
                  f"worst x {a['x'][i]:+.7g}: upstream {u[i]:.9g}, ours {o[i]:.9g}")
        if "--json" in sys.argv:
            print(json.dumps(rows))


if __name__ == "__main__":
    main()
