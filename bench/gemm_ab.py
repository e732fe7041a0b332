"""A/B timing of float32 GEMM engine variants in C (bench/gemm_c.c), alternating, with the
machine's FMA peak measured in the same run (bench/machine.c): the harness behind the
session-6 figures in docs/GEMM.md. Run from the repository after scripts/build.py:

    python3 bench/gemm_ab.py [--rounds 6] [--secs 0.5] [--threads 2] \
        --shapes "128 576 1536 lin;1024 1024 1024 mm;512 576 1536 lin/40" \
        head=@48c060b new= nopfc=-DSG_L2=1073741824

A variant is NAME=FLAGS (src/kernels/sgemm_avx512.c of the working tree built with extra
compiler flags, e.g. -DSG_KC=192) or NAME=@REV (that file and the engine headers it
includes, sgemm_ukr_x86.h and x86_transpose.h, as they were at git revision REV). Each
variant is linked into its own gemm_c before build/libtncore.a, so its tn_sgemm replaces the
archive's. A shape is "M K N lin|mm", with "/NB" to cycle through NB weights (B from memory).
Every round runs every variant on every shape, in alternating order; gemm_c checks C before
timing. Printed per shape and variant: the median over rounds of the mean GFLOP/s of
back-to-back calls (min-max), the median best call, and the median as a share of the FMA
peak."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINE = "src/kernels/sgemm_avx512.c"
HEADERS = ["src/kernels/sgemm_ukr_x86.h", "src/kernels/x86_transpose.h"]


def sh(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, check=True, **kw)


def build(name, spec, tmp):
    src, flags, inc = os.path.join(ROOT, ENGINE), spec.split(), []
    if spec.startswith("@"):
        rev = spec[1:]
        d = os.path.join(tmp, name)
        os.makedirs(os.path.join(d, "kernels"), exist_ok=True)
        for path in [ENGINE] + HEADERS:
            text = sh(["git", "show", f"{rev}:{path}"], capture_output=True, text=True).stdout
            with open(os.path.join(d, "kernels", os.path.basename(path)), "w") as f:
                f.write(text)
        src, flags, inc = os.path.join(d, "kernels", os.path.basename(ENGINE)), [], ["-I" + d]
    obj, exe = os.path.join(tmp, name + ".o"), os.path.join(tmp, "gemm_" + name)
    sh(["gcc", "-std=c11", "-O2", "-fPIC", "-D_GNU_SOURCE"] + flags + inc +
       ["-Isrc", "-Ibuild/gen", "-c", src, "-o", obj])
    sh(["gcc", "-O2", "-Isrc", "bench/gemm_c.c", obj, "build/libtncore.a", "-o", exe, "-lm", "-lpthread", "-ldl"])
    return exe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--secs", default="0.5")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--shapes", default="128 576 1536 lin;128 576 1536 mm;1024 1024 1024 mm;1024 1024 1024 lin")
    ap.add_argument("variants", nargs="+", help="NAME=FLAGS or NAME=@REV")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(ROOT, "build/libtncore.a")):
        sys.exit("build first: scripts/build.py")
    variants = [v.split("=", 1) for v in a.variants]
    shapes = []
    for s in a.shapes.split(";"):
        s, _, nb = s.strip().partition("/")
        shapes.append((s.split(), nb or "1"))
    with tempfile.TemporaryDirectory() as tmp:
        exes = {n: build(n, spec, tmp) for n, spec in variants}
        machine = os.path.join(tmp, "machine")
        sh(["gcc", "-O2", "bench/machine.c", "-o", machine, "-lpthread", "-lm"])
        res = {}
        for r in range(a.rounds):
            for shape, nb in shapes:
                for n, _ in (variants if r % 2 == 0 else variants[::-1]):
                    out = subprocess.run([exes[n]] + shape + [a.threads, a.secs, nb], capture_output=True, text=True)
                    if out.returncode:
                        sys.exit(f"{n} {' '.join(shape)}: {out.stderr.strip()}")
                    m = re.search(r"best ([\d.]+) mean ([\d.]+)", out.stdout)
                    res.setdefault((" ".join(shape) + ("" if nb == "1" else f"/{nb}"), n), []).append(
                        (float(m.group(1)), float(m.group(2))))
        out = subprocess.run([machine, "64", "0.25"], capture_output=True, text=True).stdout
        key = "fma_avx512_gflops_all" if a.threads != "1" else "fma_avx512_gflops_1"
        peak = float(re.search(key + r'": ([\d.]+)', out).group(1))
    print(f"FMA peak ({a.threads} threads, measured after the rounds): {peak:.0f} GFLOP/s; "
          f"{a.rounds} rounds of {a.secs} s per variant and shape")
    for shape, nb in shapes:
        k = " ".join(shape) + ("" if nb == "1" else f"/{nb}")
        for n, _ in variants:
            v = res[(k, n)]
            means, bests = [x[1] for x in v], [x[0] for x in v]
            med = statistics.median(means)
            print(f"{k:24s} {n:10s} mean {med:6.1f} ({min(means):.0f}-{max(means):.0f})  "
                  f"best {statistics.median(bests):6.1f}  {100 * med / peak:3.0f} % of peak")


if __name__ == "__main__":
    main()
