"""Runs every gloo collective over a battery of dtypes and reduce ops and prints one JSON
document of the results (the last line). Started by tests/test_distributed.py as
WORLD_SIZE processes, under our core (.venv) and under upstream torch (.venv-ref); the
test compares the two. Values are encoded exactly (float.hex of every element)."""
import datetime
import json
import os
import sys

import torch
import torch.distributed as dist

rank, ws = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
out = {}

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.uint8, torch.int32, torch.int64]
DTYPES = FLOATS + INTS + [torch.bool]


def enc(t):
    if isinstance(t, (list, tuple)):
        return [enc(x) for x in t]
    if not isinstance(t, torch.Tensor):
        return repr(t)
    t = t.detach()
    if t.dtype.is_floating_point:
        return [str(t.dtype), list(t.shape), [float(x).hex() for x in t.double().flatten().tolist()]]
    return [str(t.dtype), list(t.shape), [int(x) for x in t.flatten().tolist()]]


def data(dt, r, n=13, salt=0):
    k = torch.arange(n, dtype=torch.float64)
    if dt == torch.bool:
        return ((k + r + salt) % 3 == 0)
    if dt in (torch.int8, torch.uint8):
        return ((k * 3 + r * 5 + salt) % 7 + 1).to(dt)
    if dt.is_floating_point:
        return ((k * 0.1 + r * 1.37 + salt * 0.01 + 0.003 * k * r) * (1 - 2 * ((k + r) % 2))).to(dt)
    return ((k * 37 + r * 101 + salt * 7) % 1000 - 300).to(dt)


def record(name, fn):
    try:
        out[name] = enc(fn())
    except Exception as e:  # the error class must agree too (the message goes to stderr)
        out[name] = ["error", type(e).__name__]
        print(f"{name}: {type(e).__name__}: {e}", file=sys.stderr)


def coll_allreduce(dt, op, n=13):
    t = data(dt, rank, n)
    dist.all_reduce(t, op=op)
    return t


for dt in DTYPES:
    for op in ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG"]:
        record(f"all_reduce/{dt}/{op}", lambda dt=dt, op=op: coll_allreduce(dt, getattr(dist.ReduceOp, op)))
record("all_reduce/premul", lambda: coll_allreduce(torch.float32, dist._make_nccl_premul_sum(2.5)))
record("all_reduce/large_f32", lambda: coll_allreduce(torch.float32, dist.ReduceOp.SUM, n=300001))
record("all_reduce/int64_big", lambda: coll_allreduce(torch.int64, dist.ReduceOp.SUM, n=100003))
# several 1 MB segments per ring chunk (the pipelined path); digests keep the JSON small
record("all_reduce/huge_f32", lambda: (lambda t: [t[:50], t[1_000_000:1_000_050], t.view(torch.int32).long().sum()])(
    coll_allreduce(torch.float32, dist.ReduceOp.SUM, n=3_000_001)))
record("all_reduce/huge_bf16_max", lambda: (lambda t: [t[-50:], t.view(torch.int16).long().sum()])(
    coll_allreduce(torch.bfloat16, dist.ReduceOp.MAX, n=2_500_003)))


def noncontig():
    t = data(torch.float32, rank, 12).reshape(3, 4).t()
    dist.all_reduce(t)
    return t


record("all_reduce/noncontig", noncontig)


def bcast(dt):
    t = data(dt, rank, 9)
    dist.broadcast(t, src=ws - 1)
    return t


for dt in DTYPES:
    record(f"broadcast/{dt}", lambda dt=dt: bcast(dt))
record("broadcast/big", lambda: (lambda t: (dist.broadcast(t, src=0), t.sum())[1])(
    torch.arange(3_000_000, dtype=torch.float32) * (rank + 1)))


def reduce(dt, op):
    t = data(dt, rank, 11)
    dist.reduce(t, dst=1 % ws, op=op)
    return t if rank == 1 % ws else "n/a"


for dt in [torch.float32, torch.int32, torch.bfloat16]:
    for op in ["SUM", "MAX", "PRODUCT"]:
        record(f"reduce/{dt}/{op}", lambda dt=dt, op=op: reduce(dt, getattr(dist.ReduceOp, op)))


def all_gather(dt):
    outs = [torch.zeros(5, dtype=dt) for _ in range(ws)]
    dist.all_gather(outs, data(dt, rank, 5))
    return outs


for dt in DTYPES:
    record(f"all_gather/{dt}", lambda dt=dt: all_gather(dt))


def all_gather_into_tensor():
    o = torch.zeros(ws * 6, dtype=torch.float64)
    dist.all_gather_into_tensor(o, data(torch.float64, rank, 6))
    return o


record("all_gather_into_tensor", all_gather_into_tensor)


def gather():
    outs = [torch.zeros(4, dtype=torch.int64) for _ in range(ws)] if rank == 0 else None
    dist.gather(data(torch.int64, rank, 4), outs, dst=0)
    return outs if rank == 0 else "n/a"


record("gather", gather)


def scatter():
    o = torch.zeros(3, dtype=torch.float32)
    ins = [data(torch.float32, i, 3, salt=9) for i in range(ws)] if rank == ws - 1 else None
    dist.scatter(o, ins, src=ws - 1)
    return o


record("scatter", scatter)


def reduce_scatter(dt, op):
    o = torch.zeros(4, dtype=dt)
    dist.reduce_scatter(o, [data(dt, rank, 4, salt=i) for i in range(ws)], op=op)
    return o


for dt in [torch.float32, torch.int64, torch.float16]:
    for op in ["SUM", "MAX"]:
        record(f"reduce_scatter/{dt}/{op}", lambda dt=dt, op=op: reduce_scatter(dt, getattr(dist.ReduceOp, op)))


def reduce_scatter_tensor():
    o = torch.zeros(5, dtype=torch.float32)
    dist.reduce_scatter_tensor(o, data(torch.float32, rank, 5 * ws))
    return o


record("reduce_scatter_tensor", reduce_scatter_tensor)


def all_to_all():
    outs = [torch.zeros(2, dtype=torch.int32) for _ in range(ws)]
    dist.all_to_all(outs, [data(torch.int32, rank, 2, salt=i) for i in range(ws)])
    return outs


record("all_to_all", all_to_all)


def all_to_all_single_uneven():
    # rank r sends (i + r + 1) rows to rank i
    in_splits = [i + rank + 1 for i in range(ws)]
    out_splits = [rank + j + 1 for j in range(ws)]
    inp = data(torch.float32, rank, sum(in_splits) * 2).reshape(-1, 2)
    o = torch.zeros(sum(out_splits), 2)
    dist.all_to_all_single(o, inp, out_splits, in_splits)
    return o


record("all_to_all_single/uneven", all_to_all_single_uneven)


def all_to_all_single_even():
    o = torch.zeros(ws * 3, dtype=torch.int64)
    dist.all_to_all_single(o, data(torch.int64, rank, ws * 3))
    return o


record("all_to_all_single/even", all_to_all_single_even)


def p2p():
    t = data(torch.float32, rank, 7)
    r = torch.zeros(7)
    nxt, prv = (rank + 1) % ws, (rank - 1) % ws
    if rank % 2 == 0:
        dist.send(t, nxt)
        dist.recv(r, prv)
    else:
        dist.recv(r, prv)
        dist.send(t, nxt)
    return r


record("send_recv", p2p)


# A tag of its own: a rank that has sent may run ahead to batch_isend_irecv, whose tag-0
# message to rank 0 could otherwise be taken by one of rank 0's any-source receives (as
# upstream's gloo would take it too).
ANY_TAG = 11


def recv_anysource():
    if rank == 0:
        got = []
        for _ in range(ws - 1):
            t = torch.zeros(2, dtype=torch.int64)
            src = dist.recv(t, tag=ANY_TAG)
            got.append((src, t.tolist()))
        return repr(sorted(got))
    dist.send(torch.tensor([rank, 10 * rank]), 0, tag=ANY_TAG)
    return "sent"


record("recv_anysource", recv_anysource)


def other_dtypes(dt):
    t = (torch.arange(6) + rank).to(dt)
    dist.broadcast(t, src=0)
    u = (torch.arange(6) + rank).to(dt)
    try:
        dist.all_reduce(u)
        ar = u
    except Exception as e:
        ar = ["error", type(e).__name__]
    return [t, ar]


for dt in [torch.int16, torch.uint16]:    # not gloo types: both sides refuse
    record(f"other_dtype/{dt}", lambda dt=dt: other_dtypes(dt))


def isend_irecv():
    t = data(torch.int64, rank, 100000)
    r = torch.zeros(100000, dtype=torch.int64)
    nxt, prv = (rank + 1) % ws, (rank - 1) % ws
    ws_ = [dist.isend(t, nxt, tag=3), dist.irecv(r, prv, tag=3)]
    for w in ws_:
        w.wait()
    return r


record("isend_irecv", isend_irecv)


def batch():
    t = data(torch.float64, rank, 6)
    r = torch.zeros(6, dtype=torch.float64)
    ops = [dist.P2POp(dist.isend, t, (rank + 1) % ws), dist.P2POp(dist.irecv, r, (rank - 1) % ws)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    return r


record("batch_isend_irecv", batch)


def async_allreduce():
    t = data(torch.int32, rank, 8)
    w = dist.all_reduce(t, async_op=True)
    w.wait()
    return [t, torch.tensor(int(w.is_completed()))]


record("async", async_allreduce)


def future():
    t = data(torch.float32, rank, 3)
    w = dist.all_reduce(t, async_op=True)
    return w.get_future().wait()


record("future", future)


def objects():
    objs = [{"rank": rank, "x": [rank] * 3}] if True else None
    b = [{"from": "root", "n": 42}] if rank == 0 else [None]
    dist.broadcast_object_list(b, src=0)
    g = [None] * ws
    dist.all_gather_object(g, {"r": rank, "s": "x" * rank})
    ga = [None] * ws if rank == 0 else None
    dist.gather_object(("t", rank), ga, dst=0)
    sc = [None]
    dist.scatter_object_list(sc, [f"item{i}" for i in range(ws)] if rank == 0 else None, src=0)
    return [repr(b), repr(g), repr(ga), repr(sc), repr(objs)]


record("objects", objects)


def objects_p2p():
    if rank == 0:
        dist.send_object_list([{"a": 1}, "two"], dst=ws - 1)
        return "sent"
    if rank == ws - 1:
        lst = [None, None]
        dist.recv_object_list(lst, src=0)
        return repr(lst)
    return "n/a"


record("objects_p2p", objects_p2p)


def subgroup():
    g = dist.new_group([0, ws - 1])
    t = data(torch.int64, rank, 4)
    if rank in (0, ws - 1):
        dist.all_reduce(t, group=g)
    return t


record("new_group", subgroup)


def barrier():
    dist.barrier()
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=30))
    return "ok"


record("barrier", barrier)
dist.destroy_process_group()
print(json.dumps(out))
