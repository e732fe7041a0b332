"""DistributedDataParallel scenarios, run by tests/test_ddp.py in 1-3 processes on our
core and on upstream torch (gloo). Each rank prints one JSON line; floats are written
with float.hex so the comparison is exact where it should be.
    python tests/distributed/ddp_run.py SCENARIO[:OPTION,...] [SCENARIO[:OPTION,...] ...]
Several scenarios run one after the other in one process group (one launch of the
processes, which is most of the time); the JSON maps each argument to its result.
RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT come from the environment (world 1 without
them: the single-process reference)."""
import datetime
import json
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
OPTS = set()  # options of the scenario running now


def hexes(t):
    return [float(v).hex() for v in t.detach().reshape(-1).tolist()]


def digits():
    from sklearn.datasets import load_digits
    d = load_digits()
    x = torch.from_numpy((d.data / 16.0).astype(np.float32))
    y = torch.from_numpy(d.target.astype(np.int64))
    g = torch.Generator().manual_seed(0)
    perm = torch.randperm(len(x), generator=g)
    return x[perm], y[perm]


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32), torch.nn.Tanh(),
                               torch.nn.Linear(32, 10))


def init(timeout_s=30):
    if WORLD > 1 and not dist.is_initialized():
        dist.init_process_group("gloo", rank=RANK, world_size=WORLD, timeout=datetime.timedelta(seconds=timeout_s))


def wrap(model, **kw):
    if WORLD == 1 and "ddp1" not in OPTS:
        return model
    if "small_buckets" in OPTS:
        kw["bucket_cap_mb"] = 0.004  # ~4 KB: one bucket per layer or two, so buckets overlap backward
    if "as_view" in OPTS:
        kw["gradient_as_bucket_view"] = True
    m = DDP(model, **kw)
    if "fp16" in OPTS:
        m.register_comm_hook(dist.group.WORLD, __import__(
            "torch.distributed.algorithms.ddp_comm_hooks.default_hooks", fromlist=["x"]).fp16_compress_hook)
    if "builtin_allreduce" in OPTS:
        m._register_builtin_comm_hook(dist.BuiltinCommHookType.ALLREDUCE)
    if "builtin_fp16" in OPTS:
        m._register_builtin_comm_hook(dist.BuiltinCommHookType.FP16_COMPRESS)
    if "py_allreduce" in OPTS:
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
        params = list(model.parameters())

        def recording_hook(state, bucket):
            # when each bucket is launched: how many parameters still have no gradient
            # (launches while some are None happen during backward: overlap)
            LAUNCHES.append([bucket.index(), len(bucket.parameters()), sum(p.grad is None for p in params)])
            return allreduce_hook(state, bucket)
        m.register_comm_hook(dist.group.WORLD, recording_hook)
    return m


LAUNCHES = []


def ref_world():
    """The world size whose global batch a run uses: option refN (the single-process
    reference of an N-rank run), else the actual world size."""
    return next((int(o[3:]) for o in OPTS if o.startswith("ref")), WORLD)


def shard(x, y, step, per_rank):
    """Rank r's part of global batch `step` (WORLD * per_rank samples; world 1 takes the
    whole global batch of the distributed run it is the reference for)."""
    world = ref_world()
    lo = step * world * per_rank
    if WORLD == 1:
        return x[lo:lo + world * per_rank], y[lo:lo + world * per_rank]
    lo += RANK * per_rank
    return x[lo:lo + per_rank], y[lo:lo + per_rank]


def train():
    """The digits MLP, SGD, 12 steps of a global batch of 96 samples split over ranks."""
    init()
    x, y = digits()
    model = wrap(mlp())
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.5)
    per_rank = 96 // ref_world()
    losses = []
    t0 = time.perf_counter()
    for step in range(12):
        xb, yb = shard(x, y, step, per_rank)
        LAUNCHES.clear()
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    dt = time.perf_counter() - t0
    params = [hexes(p) for p in model.parameters()]
    return {"params": params, "losses": losses, "seconds": dt, "launches": list(LAUNCHES)}


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.a = torch.nn.Linear(64, 10)
        self.b = torch.nn.Linear(64, 10)
        self.c = torch.nn.Linear(64, 10)

    def forward(self, x, use_b):
        out = self.a(x)
        if use_b:
            out = out + self.b(x)
        return out


def unused():
    """find_unused_parameters: branch c is never taken; branch b only on rank 0 (used
    globally, unused locally on rank 1). Two iterations."""
    init()
    x, y = digits()
    model = wrap(Branchy(), find_unused_parameters=True)
    got = []
    for step in range(2):
        xb, yb = x[step * 64 + RANK * 32: step * 64 + RANK * 32 + 32], y[step * 64 + RANK * 32: step * 64 + RANK * 32 + 32]
        for p in model.parameters():
            p.grad = None
        loss = F.cross_entropy(model(xb, use_b=(RANK == 0)), yb)
        loss.backward()
        got.append({n: (None if p.grad is None else hexes(p.grad)) for n, p in model.named_parameters()})
    return {"grads": got}


def nosync():
    """no_sync: 3 local micro-batches accumulate without communication; the 4th (synced)
    step reduces their sum. Compared in-process with the gradient of one model on the
    whole global batch."""
    init()
    x, y = digits()
    model = wrap(mlp())
    ref = mlp()
    micro, k = 16, 4
    for p in model.parameters():
        p.grad = None
    sent_before = None
    for i in range(k):
        lo = (RANK * k + i) * micro
        xb, yb = x[lo:lo + micro], y[lo:lo + micro]
        if i < k - 1:
            with model.no_sync():
                (F.cross_entropy(model(xb), yb) / k).backward()
            if i == 0:
                # nothing was reduced: the local gradient is this rank's own
                sent_before = [hexes(p.grad) for p in model.parameters()]
        else:
            (F.cross_entropy(model(xb), yb) / k).backward()
    # reference: the mean loss over every rank's k micro-batches, as one big batch
    xa, ya = x[:WORLD * k * micro], y[:WORLD * k * micro]
    F.cross_entropy(ref(xa), ya).backward()
    diff = max(float((p.grad - q.grad).abs().max()) for p, q in zip(model.parameters(), ref.parameters()))
    scale = max(float(q.grad.abs().max()) for q in ref.parameters())
    return {"grads": [hexes(p.grad) for p in model.parameters()], "max_diff": diff, "scale": scale,
            "first_local": sent_before}


class BNNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.fc = torch.nn.Linear(64, 32)
        self.bn = torch.nn.BatchNorm1d(32)
        self.out = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.out(F.relu(self.bn(self.fc(x))))


def buffers():
    """broadcast_buffers with BatchNorm: rank 1 starts with different running stats; DDP
    broadcasts rank 0's buffers at construction and before every forward."""
    init()
    x, y = digits()
    model = BNNet()
    if RANK == 1:
        with torch.no_grad():
            model.bn.running_mean.fill_(5.0)
            model.bn.running_var.fill_(3.0)
    bb = "no_broadcast" not in OPTS
    model = wrap(model, broadcast_buffers=bb)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        lo = step * 64 + RANK * 32
        opt.zero_grad()
        F.cross_entropy(model(x[lo:lo + 32]), y[lo:lo + 32]).backward()
        opt.step()
    bn = model.module.bn if isinstance(model, DDP) else model.bn
    return {"running_mean": hexes(bn.running_mean), "running_var": hexes(bn.running_var),
            "batches": int(bn.num_batches_tracked), "params": [hexes(p) for p in model.parameters()]}


def fault():
    """A rank that raises in backward (or dies there) must make the others raise within
    the group timeout (5 s), never hang."""
    init(timeout_s=5)
    x, y = digits()
    model = wrap(mlp(), bucket_cap_mb=0.004)
    how = "die" if "die" in OPTS else "raise"
    if RANK == 1:
        def bad(grad):
            if how == "die":
                os._exit(3)
            raise ValueError("rank 1 fails in backward")
        list(model.parameters())[2].register_hook(bad)
    t0 = time.monotonic()
    try:
        F.cross_entropy(model(x[:32]), y[:32]).backward()
        for p in model.parameters():
            p.grad.sum().item()
        res = {"error": None}
    except Exception as e:
        res = {"error": type(e).__name__, "msg": str(e)[:400],
               "is_runtime": isinstance(e, RuntimeError)}
    res["seconds"] = time.monotonic() - t0
    return res


def mismatch():
    """Rank 1's model has a different layer width: DDP's construction raises as upstream."""
    init(timeout_s=10)
    torch.manual_seed(0)
    width = 64 if RANK == 0 else 48
    model = torch.nn.Sequential(torch.nn.Linear(64, width), torch.nn.ReLU(), torch.nn.Linear(width, 10))
    try:
        DDP(model)
        return {"error": None}
    except Exception as e:
        return {"error": type(e).__name__, "msg": str(e)[:300]}


def bucket_assignment():
    """dist._compute_bucket_assignment_by_size on a mixed list (no process group)."""
    ts = [torch.zeros(n, dtype=d) for n, d in [(300, torch.float32), (10, torch.float64), (700, torch.float32),
                                               (5, torch.float64), (100, torch.float32), (1000, torch.float64),
                                               (1, torch.float32), (2000, torch.float32), (3, torch.float64)]]
    out = {}
    for lim in ([1024], [1200, 4000], [10 ** 9], [1, 4000]):
        b, l = dist._compute_bucket_assignment_by_size(ts, lim)
        out[str(lim)] = [b, l]
    b, l = dist._compute_bucket_assignment_by_size(ts, [1024], [False, True] + [False] * 7)
    out["sparse"] = [b, [min(x, 2 ** 63) for x in l]]
    b, l = dist._compute_bucket_assignment_by_size(ts[:4], [1024], [], [3, 1, 0, 2])
    out["indices"] = [sorted(map(sorted, b)), sorted(l)]
    return out


SCENARIOS = {f.__name__: f for f in (train, unused, nosync, buffers, fault, mismatch, bucket_assignment)}

if __name__ == "__main__":
    torch.set_num_threads(1)
    results = {}
    for spec in sys.argv[1:]:
        name, _, opts = spec.partition(":")
        OPTS.clear()
        OPTS.update(o for o in opts.split(",") if o)
        results[spec] = SCENARIOS[name]()
    print(json.dumps(results), flush=True)
    if WORLD > 1 and dist.is_initialized() and not any(a.startswith(("fault", "mismatch")) for a in sys.argv[1:]):
        dist.destroy_process_group()
