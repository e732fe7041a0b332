"""sqrt_upstream_bits.py — float32 torch.sqrt over every positive finite float (2^31 - 2^23
patterns, in chunks of 2^26), ours (.venv) against upstream's (.venv-ref), each side in its
own process at 2 threads: prints, per side, how many results are not the correctly rounded
root (numpy's), and whether the two sides' exceptions are the same patterns with the same
values. On an Intel AVX-512 host at an AVX-512 tier they are (kernels/ew_avx512.c
v_sqrt_vml: MKL's sequence, docs/PERFORMANCE.md "Session 50"). One to two minutes a side.

    .venv/bin/python tools/sqrt_upstream_bits.py
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = r'''
import sys, numpy as np, torch
torch.set_num_threads(2)
bits = np.arange(0x00000001, 0x7F800000, dtype=np.uint32)
pos, vals = [], []
for s in range(0, len(bits), 1 << 26):
    b = bits[s:s + (1 << 26)]
    x = b.view(np.float32)
    got = torch.sqrt(torch.from_numpy(x)).numpy().view(np.uint32)
    off = got != np.sqrt(x).view(np.uint32)
    pos.append(b[off]); vals.append(got[off])
np.savez(sys.argv[1], pos=np.concatenate(pos), vals=np.concatenate(vals))
'''


def main():
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for side, py in (("upstream", os.path.join(ROOT, ".venv-ref", "bin", "python")), ("torchnative", sys.executable)):
            path = os.path.join(d, side + ".npz")
            subprocess.run([py, "-c", WORKER, path], check=True, cwd=ROOT)
            z = np.load(path)
            out[side] = (z["pos"], z["vals"])
            print(f"{side}: {len(z['pos']):,} of {0x7F800000 - 1:,} positive finite floats not the correctly rounded root")
    (up, uv), (ours, ov) = out["upstream"], out["torchnative"]
    same = np.array_equal(up, ours) and np.array_equal(uv, ov)
    print("the same patterns with the same values" if same else
          f"differ: {len(np.setxor1d(up, ours)):,} patterns exceptional on one side only")


if __name__ == "__main__":
    main()
