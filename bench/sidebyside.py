"""sidebyside.py — the shared part of the small side-by-side timing scripts
(softmax_shapes.py, inplace_out.py): run one child program under each venv's Python and print
its "name<TAB>microseconds" lines as a table of upstream / ours / ratio."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# prepended to every child: the timing loop they share
PRELUDE = r"""
import time


def best_us(f, warm, reps):
    for _ in range(warm):
        f()
    best = 1e9
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best * 1e6
"""


def side(venv, child):
    """The child's (name, microseconds) lines when run by `venv`'s Python."""
    out = subprocess.run([os.path.join(ROOT, venv, "bin", "python"), "-c", PRELUDE + child], capture_output=True,
                         text=True, check=True)
    return [line.split("\t") for line in out.stdout.strip().splitlines()]


def compare(child, width=44):
    """Runs the child on upstream (.venv-ref) then on torchnative (.venv) and prints the table."""
    up, ours = side(".venv-ref", child), side(".venv", child)
    print(f"{'case':{width}s} {'upstream us':>12s} {'ours us':>10s} {'ours/up':>8s}")
    for (name, u), (_, o) in zip(up, ours):
        print(f"{name:{width}s} {float(u):12.1f} {float(o):10.1f} {float(o) / float(u):8.2f}")
