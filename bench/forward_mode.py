"""Forward-mode AD timings behind docs/DESIGN.md "Forward mode": jvp of a pointwise product,
jacfwd and hessian of a small tanh layer. Run with both interpreters and compare:
  .venv-ref/bin/python bench/forward_mode.py; .venv/bin/python bench/forward_mode.py"""
import time

import torch
from torch.func import jvp, jacfwd, hessian
torch.manual_seed(0)
x=torch.randn(100000); v=torch.randn(100000)
W=torch.randn(64,32); X=torch.randn(32)
def t(f, n=20):
    f(); s=time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter()-s)/n*1e3
print("plain sin*exp ms", round(t(lambda: x.sin()*x.exp()),3))
print("jvp sin*exp ms", round(t(lambda: jvp(lambda a: a.sin()*a.exp(), (x,), (v,))),3))
print("jacfwd tanh-linear 64x32 ms", round(t(lambda: jacfwd(lambda a: torch.tanh(W@a))(X), 5),3))
print("hessian tanh-linear 32 ms", round(t(lambda: hessian(lambda a: torch.tanh(W@a).sum())(X), 3),3))
