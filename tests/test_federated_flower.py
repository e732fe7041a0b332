"""Flower interop: a genuine Flower federation in its deployment runtime on 127.0.0.1 —
one SuperLink (its ServerApp: Flower's own FedAvg) and two SuperNodes, one in our
environment (the ClientApp trains on torchnative) and one in the reference environment
(upstream torch) — trains the digits MLP for two rounds (tests/federated/flower_app).
No Ray: the ClientApps run as SuperNode subprocesses. Every process started here, and
every Flower process they spawn for our ports, is killed when the test ends."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import REF_PYTHON, ROOT

APP = os.path.join(ROOT, "tests", "federated", "flower_app")
OURS_BIN = os.path.dirname(sys.executable)
REF_BIN = os.path.dirname(REF_PYTHON)

pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(REF_BIN, "flower-supernode"))
                                or not os.path.exists(os.path.join(OURS_BIN, "flower-superlink")),
                                reason="flwr is not installed in both environments")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ours_spawned(ports, roots):
    """Pids of processes Flower spawned for this test (their command line names one of
    our ports or one of our parent pids); found by id, never by program name alone."""
    marks = [f"127.0.0.1:{p}" for p in ports] + [f"--parent-pid {r}" for r in roots]
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "flwr" in cmd or "flower" in cmd:
            if any(m in cmd for m in marks):
                found.append(int(pid))
    return found


def test_flower_federation_with_a_torchnative_and_an_upstream_client(tmp_path):
    from sklearn.datasets import load_digits
    x, y = load_digits(return_X_y=True)
    p = np.random.default_rng(0).permutation(len(y))
    data = str(tmp_path / "digits.npz")
    np.savez(data, x_train=(x[p[:1400]] / 16.0).astype(np.float32), y_train=y[p[:1400]].astype(np.int64),
             x_test=(x[p[1400:]] / 16.0).astype(np.float32), y_test=y[p[1400:]].astype(np.int64))
    link, node_ports = free_port(), [free_port(), free_port()]
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[superlink]\ndefault = "local"\n\n[superlink.local]\n'
                                      f'address = "127.0.0.1:{link}"\ninsecure = true\n')
    base = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    base.pop("LD_PRELOAD", None)
    procs, logs = [], []

    def start(binary, args, env_bin, flwr_home, name):
        env = dict(base, PATH=env_bin + os.pathsep + base.get("PATH", ""), FLWR_HOME=str(flwr_home))
        log = open(tmp_path / f"{name}.log", "w")
        logs.append(log)
        procs.append(subprocess.Popen([os.path.join(env_bin, binary)] + args, env=env, stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True, cwd=str(tmp_path)))
        return procs[-1]

    result = tmp_path / "result.json"
    outs = [tmp_path / "node0.jsonl", tmp_path / "node1.jsonl"]
    try:
        start("flower-superlink", ["--insecure", "--host", "127.0.0.1", "--port", str(link),
                                   "--database", str(tmp_path / "state.db")], OURS_BIN, home, "superlink")
        for i, (b, port) in enumerate(zip((OURS_BIN, REF_BIN), node_ports)):
            nh = tmp_path / f"node{i}"
            nh.mkdir()
            cfg = f'partition-id={i} num-partitions=2 data="{data}" out="{outs[i]}"'
            start("flower-supernode", ["--insecure", "--superlink", f"127.0.0.1:{link}", "--port", str(port),
                                       "--node-config", cfg], b, nh, f"supernode{i}")
        deadline = time.monotonic() + 280
        while True:   # `flwr run` until the SuperLink answers
            run = subprocess.run([os.path.join(OURS_BIN, "flwr"), "run", APP, "local", "--run-config",
                                  f'num-server-rounds=2 out="{result}"'], env=dict(base, FLWR_HOME=str(home)),
                                 capture_output=True, text=True, timeout=120)
            if run.returncode == 0 and "Successfully started run" in run.stdout:
                break
            assert time.monotonic() < deadline, run.stdout + run.stderr
            time.sleep(2)
        while not result.exists():
            for p in procs:
                assert p.poll() is None, (tmp_path / "superlink.log").read_text()[-3000:]
            if time.monotonic() > deadline:
                tails = {f.name: f.read_text()[-2000:] for f in tmp_path.glob("*.log")}
                raise AssertionError(f"the federation did not finish in time: {tails}")
            time.sleep(1)
        time.sleep(0.5)
        res = json.loads(result.read_text())
    finally:
        roots = [p.pid for p in procs]
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in _ours_spawned([link] + node_ports, roots):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in procs:
            p.wait()
        for f in logs:
            f.close()
    rows = [[json.loads(line) for line in f.read_text().splitlines()] for f in outs]
    print(json.dumps(res), json.dumps(rows))
    assert {r["core"] for r in rows[0]} == {"torchnative"} and {r["core"] for r in rows[1]} == {"upstream"}
    for node in rows:
        train = [r for r in node if r["kind"] == "train"]
        assert len(train) == 2 and train[1]["train_loss"] < train[0]["train_loss"]
    # both nodes evaluated the same global model: agreement between the cores
    ev = [[r for r in node if r["kind"] == "evaluate"] for node in rows]
    assert len(ev[0]) == len(ev[1]) == 2
    for a, b in zip(*ev):
        assert a["eval_acc"] == b["eval_acc"] and abs(a["eval_loss"] - b["eval_loss"]) < 1e-4
    assert ev[0][1]["eval_acc"] > ev[0][0]["eval_acc"]
    # Flower's server aggregated both clients' metrics each round
    assert sorted(res["train"]) == ["1", "2"] and sorted(res["evaluate"]) == ["1", "2"]
    assert res["evaluate"]["2"]["eval_acc"] == pytest.approx(ev[0][1]["eval_acc"])
