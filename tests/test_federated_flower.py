"""Flower interop: a genuine Flower federation in its deployment runtime on 127.0.0.1 —
one SuperLink (its ServerApp: Flower's own FedAvg) and two SuperNodes, one in our
environment (the ClientApp trains on torchnative) and one in the reference environment
(upstream torch) — trains the digits MLP for one round (tests/federated/flower_app).
No Ray: the ClientApps run as SuperNode subprocesses. Every process started here, and
every Flower process they spawn for our ports, is killed when the test ends.

One round: Flower starts a fresh ClientApp process (which imports torch) for every
message and polls every 3 s, so each round costs four process launches and several
polls; one round already shows both nodes training, Flower aggregating, and both cores
evaluating the aggregated model identically, above the initial model's accuracy."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import REF_PYTHON, ROOT, free_port, write_digits_split

APP = os.path.join(ROOT, "tests", "federated", "flower_app")
OURS_BIN = os.path.dirname(sys.executable)
REF_BIN = os.path.dirname(REF_PYTHON)

pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(REF_BIN, "flower-supernode"))
                                or not os.path.exists(os.path.join(OURS_BIN, "flower-superlink")),
                                reason="flwr is not installed in both environments")


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
    data = write_digits_split(str(tmp_path / "digits.npz"))
    link, node_ports = free_port(), [free_port(), free_port()]
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[superlink]\ndefault = "local"\n\n[superlink.local]\n'
                                      f'address = "127.0.0.1:{link}"\ninsecure = true\n')
    # FLWR_SUPEREXEC_TASK_POLL_INTERVAL: how often Flower's SuperExec looks for an app to start (1 s by default)
    base = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1",
                FLWR_SUPEREXEC_TASK_POLL_INTERVAL="0.2")
    base.pop("LD_PRELOAD", None)
    procs, logs = [], []

    def start(binary, args, env_bin, flwr_home, name):
        env = dict(base, PATH=env_bin + os.pathsep + base.get("PATH", ""), FLWR_HOME=str(flwr_home))
        log = open(tmp_path / f"{name}.log", "w")
        logs.append(log)
        procs.append(subprocess.Popen([os.path.join(env_bin, binary)] + args, env=env, stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True, cwd=str(tmp_path)))
        return procs[-1]

    init = str(tmp_path / "init.npz")   # the App's initial model, so its ServerApp need not import torch
    initial_acc = _save_initial_model(data, init)
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
                                  f'num-server-rounds=1 out="{result}" init="{init}"'], env=dict(base, FLWR_HOME=str(home)),
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
            time.sleep(0.25)
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
        assert len(train) == 1 and 0 < train[0]["train_loss"] < 5
    # both nodes evaluated the same global model: agreement between the cores
    ev = [[r for r in node if r["kind"] == "evaluate"] for node in rows]
    assert len(ev[0]) == len(ev[1]) == 1
    a, b = ev[0][0], ev[1][0]
    assert a["eval_acc"] == b["eval_acc"] and abs(a["eval_loss"] - b["eval_loss"]) < 1e-4
    # the federation trained: the aggregated model is far above the initial one
    assert a["eval_acc"] > initial_acc + 0.2, (a, initial_acc)
    # Flower's server aggregated both clients' metrics
    assert sorted(res["train"]) == ["1"] and sorted(res["evaluate"]) == ["1"]
    assert res["evaluate"]["1"]["eval_acc"] == pytest.approx(a["eval_acc"])


def _save_initial_model(data, path):
    """Saves the App's initial model (tnflower.task.make_model) as named arrays at `path`;
    returns its test-set accuracy."""
    import importlib.util
    import torch
    spec = importlib.util.spec_from_file_location("tnflower_task", os.path.join(APP, "tnflower", "task.py"))
    task = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(task)
    model = task.make_model()
    np.savez(path, **{k: v.detach().numpy() for k, v in model.state_dict().items()})
    d = np.load(data)
    with torch.no_grad():
        out = model(torch.from_numpy(d["x_test"]))
    return float((out.argmax(1) == torch.from_numpy(d["y_test"])).float().mean())
