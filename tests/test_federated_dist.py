"""torchnative.nn.federated.Engine across real processes on 127.0.0.1 (tests/federated/
fed_run.py, digits): our core against upstream torch and the two transports against each
other; a client killed mid-round (dropped, masks removed, round retried below the
minimum, the client rejoining); the coordinator killed and restarted from its checkpoint;
NaN and wrong-shape updates rejected while Krum keeps a Byzantine client out.

Wall time is almost all process start-up (importing torch) and deadlines, so runs are
as small as what they prove allows: two clients where averaging is the point, several
transports in one launch, independent runs side by side, short round timeouts.

Every process gets a bounded time and is killed (with its process group) when its test
ends, however it ends."""
import datetime
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import REF_PYTHON, ROOT, free_port, write_digits_split

RUNNER = os.path.join(ROOT, "tests", "federated", "fed_run.py")
OURS = sys.executable
needs_ref = pytest.mark.skipif(not os.path.exists(REF_PYTHON), reason="no reference environment")


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    return write_digits_split(str(tmp_path_factory.mktemp("fed") / "digits.npz"))


LIVE = set()   # jobs not yet closed: the module's teardown closes what an interruption left


class Job:
    """Processes of one federated run; start() more at any time; all killed by close()."""

    def __init__(self, world, port=None):
        self.world, self.port, self.procs = world, port or free_port(), []
        LIVE.add(self)

    def start(self, python, rank, args):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(self.port), RANK=str(rank),
                   WORLD_SIZE=str(self.world), PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
        env.pop("LD_PRELOAD", None) if python == REF_PYTHON else None
        p = subprocess.Popen([python, RUNNER] + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
        self.procs.append(p)
        return p

    def close(self):
        LIVE.discard(self)
        for p in list(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            p.wait()


def finish(p, deadline):
    try:
        out, err = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise AssertionError(f"process {p.args[2:]} did not finish in time")
    return p.returncode, out, err


def result(p, deadline):
    rc, out, err = finish(p, deadline)
    assert rc == 0, err[-4000:]
    return json.loads(out.strip().splitlines()[-1])


def run(python, world, args, timeout=240):
    """All ranks of one run under `python`; rank 0's result."""
    job = Job(world)
    try:
        procs = [job.start(python, r, args) for r in range(world)]
        deadline = time.monotonic() + timeout
        return [result(p, deadline) for p in procs][0]
    finally:
        job.close()


def hosted_store():
    """The rendezvous store, hosted by the test (it outlives any rank, as torchrun's), on a
    port the kernel picks as it binds (a port probed free beforehand can be taken before
    the bind: EADDRINUSE seen in CI). Its port is the store's .port."""
    import torch.distributed as dist
    return dist.TCPStore("127.0.0.1", 0, None, True, timeout=datetime.timedelta(seconds=60),
                         wait_for_workers=False)


BASE = ["--clients", "2", "--rounds", "3", "--seed", "0"]
BOTH = ["--transport", "store,collective"]   # the two transports in one launch, one after the other


def accuracies(res):
    return [h["metrics"]["accuracy"] for h in res["history"]]


# ---- the runs ----------------------------------------------------------------------------
# Each returns rank 0's result. The independent ones are started together when the module
# starts (Background): their processes import torch and wait on one another at the same
# time instead of one run after the other.

def run_ours(digits, tmp):
    return run(OURS, 3, [digits] + BASE + BOTH)


def run_upstream(digits, tmp):
    return run(REF_PYTHON, 3, [digits] + BASE)


def run_poisoned(digits, tmp):
    return run(OURS, 7, [digits, "--clients", "6", "--rounds", "3", "--agg", "krum",
                         "--poison", "4:nan,5:shape,6:byzantine"])


def run_coordinator_restart(digits, tmp):
    """The coordinator of BASE dies in round 2 (rc 18) and is started again on the same
    checkpoint; the clients and the hosted store live on."""
    store = hosted_store()
    job = Job(3, store.port)
    ck = os.path.join(tmp, "coordinator.ckpt")
    args = [digits] + BASE + ["--mode", "store", "--checkpoint", ck]
    try:
        procs = [job.start(OURS, r, args + (["--die", "0:2"] if r == 0 else [])) for r in range(3)]
        deadline = time.monotonic() + 240
        rc, _, err = finish(procs[0], deadline)
        assert rc == 18, err[-3000:]
        assert os.path.exists(ck)
        again = job.start(OURS, 0, args)
        res = result(again, deadline)
        for p in procs[1:]:
            result(p, deadline)
    finally:
        job.close()
        del store
    return res


DEATHS = "3:2,2:3"


def run_client_deaths(digits, tmp):
    """Secure aggregation over 3 clients; client 3 dies in round 2, client 2 in round 3;
    each is started again once it has died (rc 17)."""
    store = hosted_store()
    job = Job(4, store.port)
    args = [digits, "--clients", "3", "--rounds", "4", "--mode", "store", "--secagg", "--min-clients", "2",
            "--round-timeout", "12", "--max-retries", "20", "--die", DEATHS]
    try:
        procs = {r: job.start(OURS, r, args) for r in range(4)}
        deadline = time.monotonic() + 240
        for r in (3, 2):
            rc, _, err = finish(procs[r], deadline)
            assert rc == 17, err[-3000:]
            procs[r] = job.start(OURS, r, [a for a in args if a not in ("--die", DEATHS)])
        res = result(procs[0], deadline)
        for r in (1, 2, 3):
            result(procs[r], deadline)
        # a client (re)started after the federation ended leaves at once, with no rounds
        res["late_client"] = result(job.start(OURS, 1, [a for a in args if a not in ("--die", DEATHS)]), deadline)
    finally:
        job.close()
        del store
    return res


class Background:
    """Runs in threads; result() waits for one and re-raises what it raised."""

    def __init__(self, digits, tmp):
        self.digits, self.tmp, self.runs = digits, tmp, {}

    def start(self, fn):
        if fn not in self.runs:
            box = {}

            def target():
                try:
                    box["result"] = fn(self.digits, self.tmp)
                except BaseException as e:  # noqa: BLE001 - re-raised in the test
                    box["error"] = e
            t = threading.Thread(target=target, daemon=True)
            t.start()
            self.runs[fn] = (t, box)

    def result(self, fn):
        self.start(fn)
        t, box = self.runs[fn]
        t.join()
        if "error" in box:
            raise box["error"]
        return box["result"]


# which runs each test collects (started at the module's start when the test is selected)
NEEDS = {"test_engine_ours_matches_upstream": [run_ours, run_upstream],
         "test_coordinator_killed_and_restarted": [run_ours, run_coordinator_restart],
         "test_poisoned_and_byzantine_updates": [run_poisoned],
         "test_client_killed_mid_round": [run_client_deaths]}


@pytest.fixture(scope="module")
def background(request, digits, tmp_path_factory):
    bg = Background(digits, str(tmp_path_factory.mktemp("runs")))
    selected = {item.name for item in request.session.items if item.module is request.module}
    for name, fns in NEEDS.items():
        if name in selected:
            for fn in fns:
                if fn is not run_upstream or os.path.exists(REF_PYTHON):
                    bg.start(fn)
    yield bg
    for job in list(LIVE):   # runs still going (an interrupted session): kill them now
        job.close()
    for t, _ in bg.runs.values():
        t.join()


@needs_ref
def test_engine_ours_matches_upstream(background):
    """The same 3-process FedAvg run (coordinator + 2 clients, init_process_group over
    gloo, the store transport) on our core and on upstream torch, side by side: per-round
    accuracies and weights agree; the collective transport (broadcast + gather), run next
    in the same processes, gives the same."""
    ours, ref = background.result(run_ours), background.result(run_upstream)
    coll = ours["runs"]["collective"]
    acc = accuracies(ours)
    print("accuracy per round: ours", acc, "upstream", accuracies(ref), "collective", accuracies(coll))
    assert len(acc) == 3 and acc[-1] > acc[0] and acc[-1] > 0.5
    assert np.allclose(acc, accuracies(ref), atol=0.01)
    assert np.allclose(ours["weights"], ref["weights"], atol=1e-4)
    assert np.allclose(acc, accuracies(coll), atol=0.01)
    assert np.allclose(ours["weights"], coll["weights"], atol=1e-5)
    for h in ours["history"]:
        assert h["participants"] == [1, 2] and h["dropped"] == [] and h["bytes_received"] > 2 * 4 * 4810
        assert h["bytes_sent"] >= 2 * 4 * 4810 and h["seconds"] > 0 and np.isfinite(h["train_loss"])


def test_coordinator_killed_and_restarted(background):
    """The coordinator dies in round 2 after its clients' updates arrived; restarted
    with the same checkpoint it resumes after round 1 and the run ends exactly as the
    uninterrupted one."""
    res, base = background.result(run_coordinator_restart), background.result(run_ours)
    assert res["resumed_from"] == 1
    assert [x["round"] for x in res["history"]] == [1, 2, 3]
    assert accuracies(res) == accuracies(base)
    assert res["weights"] == base["weights"]


def test_poisoned_and_byzantine_updates(background):
    """Krum (f = 1) over 6 clients: client 4 sends NaN (learning rate NaN), client 5 an update
    10 values short — both rejected and logged every round, never aggregated; client 6
    climbs the loss twenty times harder than the others descend it — Krum never keeps it,
    and the model still learns."""
    res = background.result(run_poisoned)
    for h in res["history"]:
        rej = {x["client"]: x["reason"] for x in h["rejected"]}
        assert set(rej) == {4, 5}
        assert "non-finite" in rej[4] and "4800 values, expected 4810" in rej[5]
        assert h["participants"] == [1, 2, 3, 6]
        assert h["kept"] and 6 not in h["kept"]
    acc = accuracies(res)
    assert acc[0] < acc[1] < acc[2] and acc[-1] > 0.3, acc   # Krum follows one honest client a round


def test_client_killed_mid_round(background):
    """Secure aggregation with 3 clients (threshold t = 2), min_clients=2. Client 3 dies
    mid-round 2, after sharing its keys: round 2 completes with 1-2 (the masks they share
    with 3 removed through 3's mask key, reconstructed from their shares). Client 2 dies in
    round 3: 1 survivor < 2, so round 3 is reported and retried; the restarted clients
    rejoin and the round completes. Each death costs the round timeout (12 s: the live
    clients, warmed up before joining, need well under a second, also with the module's
    other runs beside them)."""
    res = background.result(run_client_deaths)
    h = res["history"]
    print(json.dumps([{k: x[k] for k in ("round", "participants", "dropped", "retries")} for x in h], indent=0))
    assert [x["round"] for x in h] == [1, 2, 3, 4]
    assert h[0]["participants"] == [1, 2, 3]
    assert h[1]["participants"] == [1, 2] and h[1]["dropped"] == [3] and not h[1]["retries"]
    assert h[2]["retries"] and h[2]["retries"][0]["dropped"] == [2] and "below min_clients=2" in h[2]["retries"][0]["reason"]
    assert len(h[2]["participants"]) >= 2 and ({2, 3} & set(h[2]["participants"] + h[3]["participants"]))
    acc = accuracies(res)
    assert all(np.isfinite(acc)) and acc[-1] > 0.5, acc   # the masks cancelled: the model trained
    assert res["late_client"]["history"] == [] and res["late_client"]["seconds"] < 30
