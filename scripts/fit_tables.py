"""scripts/fit_tables.py — the interval tables of the vector float32 functions that take
them where a 32-entry lookup is one instruction (kernels/ew_vec.inc, V_LUT32_CHEAP):
  tanh   FK_TANH_T: tanh on |x| in [0, 9.5]
  erfcx  FK_ERFCX_T: e^(a^2) erfc(a) on a in [0, 9.2] (erfc's fast lanes)
  erf    FK_ERF_T: erf on |x| in [0, 3.92] (1 in float32 from 3.92 on)
and one plain fit:
  log1p  FK_LOG1P: P of log(1 + f) = f - f^2/2 + f^3 P(f) on [sqrt(1/2) - 1, sqrt 2 - 1] (the
         log family's), degree 6, least squares weighted by f^3 / log1p f and reweighted
         towards the worst error
The argument is cut into 32 intervals by the float's exponent and two leading mantissa bits
from 1/16 up (interval 0 is [0, 5/64)); on each, f(x0 + t) = c0 + t (c1 + t (... c6)) with x0
a float in the interval whose f is within a small fraction of an ulp of a float32 (so c0's
rounding costs nothing: t = a - x0 is exact), c1..c6 least squares on Chebyshev nodes
weighted by 1/f, rounded to float32 one at a time with the later ones refitted. Interval 0:
x0 = 0, c0 = f(0) (0 or 1) and for tanh c1 = 1 (tanh a = a + a^2 (...), so tiny and subnormal
a return a); for erf interval 0 fits erf a = a + a P(a) (the kernel adds a to c0 = 0 there,
so 2/sqrt(pi) is not rounded to a float). Prints the C table and the worst relative error of the rounded polynomial on
each interval (in float64 arithmetic; the float32 evaluation is checked over every float32
by tests/c/test_ew_math.c `--stride 1 tanh erfc erf`).

    .venv/bin/python scripts/fit_tables.py tanh|erfcx|erf|log1p
"""
import sys

import numpy as np
from scipy.special import erf, erfcx, erfinv

DEG = 6
FNS = {"tanh": (np.tanh, 9.5, "FK_TANH_T"), "erfcx": (erfcx, 9.2, "FK_ERFCX_T"), "erf": (erf, 3.92, "FK_ERF_T")}
INVERSE = {"tanh": np.arctanh, "erf": erfinv}  # where f flattens towards 1
F, TOP, NAME = FNS["tanh"]
INV = None
LO_BITS = np.float32(1 / 16).view(np.uint32) >> 21


def edges(j):
    if j == 0:
        return 0.0, float(np.uint32((LO_BITS + 1) << 21).view(np.float32))
    return (float(np.uint32((LO_BITS + j) << 21).view(np.float32)),
            float(np.uint32((LO_BITS + j + 1) << 21).view(np.float32)))


def f32_exactish(x0, lo, hi):
    """(error in ulps, x, f x as float32) for the float32 x in [lo, hi] near x0 whose f is closest
    to a float32: searched over the floats x near x0 and, for tanh and erf where they are flat
    (near 1, where no x lands close), over the floats c near f(x0) with x = f^-1(c) rounded"""
    def score(x):
        y = F(x)
        yf = float(np.float32(y))
        return abs(y - yf) / float(np.spacing(np.float32(abs(yf)))), x, yf
    b0 = int(np.float32(x0).view(np.uint32))
    cands = [float(np.uint32(b).view(np.float32)) for b in range(b0 - 4000, b0 + 4000)]
    if INV is not None:
        c0 = int(np.float32(F(x0)).view(np.uint32))
        for b in range(c0 - 4000, c0 + 4000):
            c = float(np.uint32(b).view(np.float32))
            if 0 < c < 1:
                cands.append(float(np.float32(INV(c))))
    return min(score(x) for x in cands if lo <= x <= hi)


def fit(lo, hi, x0, c0, fixed, plus_t=False):
    """c1..c6 (fixed: already rounded leading ones) of f(x0 + t) - c0 on [lo, hi]"""
    n = 400
    a = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    t = a - x0
    y = F(a) - c0 - (t if plus_t else 0)
    for k, c in enumerate(fixed, 1):
        y = y - c * t ** k
    k0 = len(fixed) + 1
    A = np.stack([t ** k for k in range(k0, DEG + 1)], 1)
    w = 1 / F(a)
    sol = np.linalg.lstsq(A * w[:, None], y * w, rcond=None)[0]
    return list(fixed) + list(sol)


def cf(v):
    s = "%.9g" % v
    return s + (".0f" if "." not in s and "e" not in s else "f")


def fit_log1p(deg=6):
    lo, hi = np.sqrt(0.5) - 1, np.sqrt(2) - 1
    n = 3000
    f = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    g = (np.log1p(f) - f + f * f / 2) / f ** 3
    w = np.abs(f ** 3 / np.log1p(f))
    A = np.stack([f ** k for k in range(deg, -1, -1)], 1)
    ww = np.ones_like(f)
    for _ in range(30):
        sol = np.linalg.lstsq(A * (w * ww)[:, None], g * w * ww, rcond=None)[0]
        e = np.abs((A @ sol - g) * w)
        ww = ww * np.sqrt(e / e.max() + 1e-3)
    c = [float(np.float32(v)) for v in sol]
    ff = np.linspace(lo, hi, 200001)
    ff = ff[ff != 0]
    p = np.zeros_like(ff)
    for v in c:
        p = p * ff + v
    err = np.max(np.abs(ff ** 3 * p - (np.log1p(ff) - ff + ff * ff / 2)) / np.abs(np.log1p(ff)))
    print("static const float FK_LOG1P[%d] = {%s};" % (deg + 1, ", ".join(cf(v) for v in c)))
    print("/* max relative error of log1p %.2e */" % err)


def main():
    global F, TOP, NAME, INV
    fn = sys.argv[1] if len(sys.argv) > 1 else "tanh"
    if fn == "log1p":
        return fit_log1p()
    F, TOP, NAME = FNS[fn]
    INV = INVERSE.get(fn)
    rows = []
    for j in range(32):
        lo, hi = edges(j)
        hi = min(hi, TOP)
        if lo >= TOP:
            rows.append((0.0, 1.0, [0.0] * DEG, 0.0, 0.0))
            continue
        if j == 0:
            x0, c0, off = 0.0, float(F(0.0)), 0.0
            cs = [1.0] if F is np.tanh else []
        else:
            off, x0, c0 = f32_exactish((lo + hi) / 2, lo, hi)
            cs = []
        plus_t = j == 0 and F is erf  # erf a = a + a P(a) there: the kernel adds a to c0
        while len(cs) < DEG:
            full = fit(lo, hi, x0, c0, cs, plus_t)
            cs.append(float(np.float32(full[len(cs)])))
        a = np.linspace(lo, hi, 20001)[1:] if j == 0 else np.linspace(lo, hi, 20001)
        t = a - x0
        p = np.zeros_like(t)
        for c in reversed(cs):
            p = p * t + c
        err = np.max(np.abs(c0 + (t if plus_t else 0) + t * p - F(a)) / F(a))
        rows.append((x0, c0, cs, err, off))
    print("static const float %s[%d][32] = {" % (NAME, DEG + 2))
    cols = [[r[0] for r in rows], [r[1] for r in rows]] + [[r[2][k] for r in rows] for k in range(DEG)]
    for c in cols:
        print("    {" + ", ".join(cf(v) for v in c) + "},")
    print("};")
    for j, r in enumerate(rows):
        print("/* %2d [%g, %g) x0 %.9g  c0 off f(x0) by %.1e ulp  max rel err %.2e */" % (j, *edges(j), r[0], r[4], r[3]))


if __name__ == "__main__":
    main()
