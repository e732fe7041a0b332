"""inplace_out.py — elementwise operators on 1,000,000 float32 elements in their three forms
(function, in-place, out=), timed side by side: upstream torch (.venv-ref) and torchnative
(.venv) in their own processes, 2 threads, best of 50 calls after one warm-up call. The in-place
and out= rows show what the door costs when it writes the result into the caller's tensor
(session 36: the functional's result used to be computed into a new tensor and copied).

    .venv/bin/python bench/inplace_out.py
"""
import sidebyside

CHILD = r"""
import torch
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
    print(f"{name}\t{best_us(f, 1, 50):.1f}")
"""


def main():
    sidebyside.compare(CHILD, 16)


if __name__ == "__main__":
    main()
