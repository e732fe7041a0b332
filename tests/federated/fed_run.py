"""One rank of a federated digits run (torchnative.nn.federated.Engine), started by
tests/test_federated_dist.py and bench/federated.py on our core or upstream torch.
Rank 0 coordinates; client rank r trains on shard r-1. Faults are injected by flags:
a client or the coordinator exiting mid-round, NaN / wrong-shape / Byzantine updates,
slow clients. The last stdout line is JSON: the history (rank 0) or client records.
`--transport store,collective` runs one federation per transport, one after the other, in
the same processes (one launch for several runs); the JSON then holds the first run's
fields plus "runs", one entry per transport.

    python tests/federated/fed_run.py DATA.npz --clients 3 --rounds 3 [--mode pg|store] ...
MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE come from the environment; in --mode store
the TCPStore at MASTER_ADDR:MASTER_PORT is hosted elsewhere (the test)."""
import argparse
import datetime
import json
import logging
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from torchnative.nn import federated as F  # noqa: E402


class Batches:
    """Re-iterable (x, y) batches; can exit the process on its k-th pass or sleep per batch."""

    def __init__(self, x, y, bs, die_on_pass=0, slow=0.0):
        self.x, self.y, self.bs, self.die, self.slow, self.passes = x, y, bs, die_on_pass, slow, 0

    def __iter__(self):
        self.passes += 1
        for i in range(0, len(self.y), self.bs):
            if self.die and self.passes == self.die and i >= self.bs:
                os._exit(17)   # a crash in the middle of local training
            if self.slow:
                time.sleep(self.slow)
            yield self.x[i:i + self.bs], self.y[i:i + self.bs]


def make_model(hidden):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))


def warm_up(x, y, secagg):
    """Pays a fresh process's first-use costs (torch's lazy imports on the first training
    step: about 4 s here, far more on a loaded machine) before the federation's deadlines
    start counting, on a throwaway model; the runs build their own, seeded."""
    m = make_model(8)
    space = F.ParamSpace(m)
    F.local_update(m, space, space.get(), [(x[:4], y[:4])], torch.nn.functional.cross_entropy,
                   lambda p: torch.optim.SGD(p, lr=0.0), 1, 0)
    if secagg:
        from torchnative.nn.federated import secagg as sa
        sa.ClientSession(0, "warm-up").share_keys({0: sa.ClientSession(0, "warm-up").public()}, 1)


AGGS = {"fedavg": lambda: F.FedAvg(), "fedprox": lambda: F.FedProx(0.1), "fedadam": lambda: F.FedAdam(eta=0.01),
        "krum": lambda: F.Krum(num_malicious_clients=1), "multikrum": lambda: F.MultiKrum(1, 3),
        "median": lambda: F.FedMedian()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--clients", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--agg", default="fedavg")
    ap.add_argument("--mode", default="pg", choices=["pg", "store"])
    ap.add_argument("--transport", default="store", help="store, collective, or a comma list run in sequence")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--round-timeout", type=float, default=30.0)
    ap.add_argument("--min-clients", type=int, default=1)
    ap.add_argument("--max-retries", type=int, default=3)
    ap.add_argument("--secagg", action="store_true")
    ap.add_argument("--compression")
    ap.add_argument("--checkpoint")
    ap.add_argument("--die", default="", help="RANK:ROUND,... — that rank exits in the middle of that round")
    ap.add_argument("--poison", default="", help="RANK:nan|shape|byzantine,...")
    ap.add_argument("--slow", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    torch.set_num_threads(a.threads)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    poison = dict(p.split(":") for p in a.poison.split(",") if p)
    kind = poison.get(str(rank), "")
    dies = {int(k): int(v) for k, v in (p.split(":") for p in a.die.split(",") if p)}
    die_round = dies.get(rank, 0)
    d = np.load(a.data)
    xtr, ytr = torch.from_numpy(d["x_train"]), torch.from_numpy(d["y_train"])
    xte, yte = torch.from_numpy(d["x_test"]), torch.from_numpy(d["y_test"])
    if kind == "shape":
        # a faulty client: its update loses its last 10 values on the way out
        import torchnative.nn.federated.engine as engine_module
        honest_prepare = engine_module.prepare_update
        engine_module.prepare_update = lambda delta, config, state: honest_prepare(delta[:-10], config, state)
    data = None
    lr = a.lr
    if rank > 0:
        shard = torch.from_numpy(np.array_split(np.arange(len(ytr)), a.clients)[rank - 1])
        x, y = xtr[shard], ytr[shard]
        if kind == "nan":
            lr = float("nan")
        elif kind == "byzantine":
            lr = 20.0 * a.lr    # climbs the loss (maximize below), twenty times harder
        data = Batches(x, y, 32, die_round, a.slow)

    def evaluate(m):
        if rank == 0 and die_round and evaluate.calls + 1 == die_round:
            os._exit(18)   # the coordinator dies in round k, after the clients' updates arrived
        evaluate.calls += 1
        out = m(xte)
        return {"accuracy": float((out.argmax(1) == yte).float().mean()),
                "loss": float(torch.nn.functional.cross_entropy(out, yte))}
    evaluate.calls = 0

    if data is not None:   # the coordinator (no data) never trains: nothing to warm up
        warm_up(xtr, ytr, a.secagg)
    kw = {}
    if a.mode == "pg":
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    else:
        store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), None, False,
                              timeout=datetime.timedelta(seconds=60))
        kw = {"store": store, "rank": rank, "world_size": world}
    runs = {}
    for transport in a.transport.split(","):
        model = make_model(64)
        engine = F.Engine(model, rounds=a.rounds, aggregator=AGGS[a.agg](), data=data,
                          loss_fn=torch.nn.functional.cross_entropy,
                          optimizer=lambda p: torch.optim.SGD(p, lr=lr, maximize=kind == "byzantine"),
                          local_epochs=a.epochs, evaluate=evaluate if rank == 0 else None, seed=a.seed,
                          min_clients=a.min_clients, round_timeout=a.round_timeout, max_retries=a.max_retries,
                          checkpoint=a.checkpoint, secure_aggregation=a.secagg, compression=a.compression,
                          transport=transport, client_timeout=120.0, name=f"fed-{transport}", **kw)
        t0 = time.perf_counter()
        hist = engine.participate()
        out = {"history": hist, "seconds": time.perf_counter() - t0}
        if rank == 0:
            out["weights"] = [float(v) for v in engine.space.get()[:50]]
            out["resumed_from"] = engine.coordinator.resumed_from
        runs[transport] = out
    if a.mode == "pg":
        dist.destroy_process_group()
    first = runs[a.transport.split(",")[0]]
    print(json.dumps({"rank": rank, **first, "runs": runs}), flush=True)


if __name__ == "__main__":
    main()
