"""softmax_shapes.py — softmax and log_softmax of float32 at the shapes that take each of
their paths (one long row, rows of 1,000 and of 100, columns), timed side by side: upstream torch (.venv-ref)
and torchnative (.venv) in their own processes, best of 7 calls after 3 warm-up calls.

    .venv/bin/python bench/softmax_shapes.py
"""
import sidebyside

CHILD = r"""
import torch
torch.manual_seed(0)
for shape, dim in [((1000000,), 0), ((1000, 1000), 1), ((100, 100, 100), 2), ((1000, 1000), 0), ((100, 100, 100), 1), ((100, 100, 100), 0), ((10, 10, 100, 100), 1)]:
    x = torch.randn(*shape)
    for f in (torch.softmax, torch.log_softmax):
        print(f"{f.__name__} {shape} dim {dim}\t{best_us(lambda: f(x, dim), 3, 7):.1f}")
"""


def main():
    sidebyside.compare(CHILD, 44)


if __name__ == "__main__":
    main()
