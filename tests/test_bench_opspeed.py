"""bench/opspeed.py (operator speed against upstream, issue 22) on three entries, one round:
the JSON it writes has a row per entry and measurement (out= and in-place forms where the
entry declares them), both sides' checksums agree, and the
checksum comparison rejects a wrong answer. No timing is asserted."""
import json
import os
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import opspeed  # noqa: E402  (imports no torch)

ENTRIES = ("add", "sin", "sum")


def test_opspeed_three_entries(tmp_path):
    out = tmp_path / "opspeed.json"
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "opspeed.py"), "--only",
                        "^(" + "|".join(ENTRIES) + ")$", "--rounds", "1", "--budget", "0.005", "--out", str(out)],
                       capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(out.read_text())
    # add and sin declare out= and in-place forms, sum neither: its two rows say so
    timed = {(k, kind) for k in ENTRIES for kind in ("samples", "big")} | \
        {(k, kind) for k in ("add", "sin") for kind in ("big_out", "big_inplace")}
    assert {(r["key"], r["kind"]) for r in res["rows"]} == timed | {("sum", "big_out"), ("sum", "big_inplace")}
    for r in res["rows"]:
        if (r["key"], r["kind"]) not in timed:
            assert r["verdict"] in ("skip: no out= form", "skip: no in-place variant"), r
            continue
        assert r["verdict"] == "ok", r
        assert r["ratio"] > 0 and r["upstream"] > 0 and r["torchnative"] > 0
        if r["kind"] != "samples":
            assert 1 <= len(r["shape"]) and eval("*".join(map(str, r["shape"]))) == opspeed.BIG
    for k, kind in timed:
        up, ours = res["checksums"]["upstream"][k][kind], res["checksums"]["torchnative"][k][kind]
        assert up and len(up) == len(ours) and all(opspeed.sums_agree(a, b) for a, b in zip(up, ours))
    assert res["summary"]["samples"]["timed"] == len(ENTRIES) and res["summary"]["big"]["timed"] == len(ENTRIES)
    assert res["summary"]["big_out"]["timed"] == 2 and res["summary"]["big_inplace"]["timed"] == 2
    assert len(res["loadavg"]) == 1
    for k in ENTRIES:  # the printed table lists every timed row
        assert sum(1 for line in p.stdout.splitlines() if line.split()[:1] == [k]) == (4 if k != "sum" else 2)


def test_checksum_comparison_rejects_wrong_answers():
    a = ["t", "torch.float32", [3], 0, 0, 0, 6.0, 6.0]
    assert opspeed.sums_agree(a, list(a))
    assert opspeed.sums_agree(a, a[:6] + [6.0 + 1e-4, 6.0 + 1e-4])  # summation order
    assert not opspeed.sums_agree(a, a[:6] + [5.0, 6.0])            # a wrong sum
    assert not opspeed.sums_agree(a, ["t", "torch.float32", [3], 1, 0, 0, 6.0, 6.0])  # a NaN
    assert not opspeed.sums_agree(a, ["t", "torch.float64", [3], 0, 0, 0, 6.0, 6.0])  # dtype
    assert not opspeed.sums_agree(["seq", [a]], ["seq", [a, a]])
    assert not opspeed.sums_agree(["py", "1"], ["py", "2"])
