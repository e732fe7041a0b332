"""torch.ops.aten.<op>.<overload>._schema prints exactly upstream's schema for every aten
overload of native_functions.yaml (and the overload lists of torch.ops packets agree)."""
import json
import subprocess
import sys

from conftest import REF_PYTHON

PROBE = r"""
import json, sys, torch
names = json.loads(sys.stdin.read())
out = {}
for full in names:
    name, _, ov = full.partition(".")
    try:
        packet = getattr(torch.ops.aten, name)
        out[full] = [str(getattr(packet, ov or "default")._schema), sorted(packet.overloads())]
    except Exception as e:
        out[full] = ["error: " + type(e).__name__ + ": " + str(e)[:200], []]
print(json.dumps(out))
"""


def _probe(python, names):
    r = subprocess.run([python, "-c", PROBE], input=json.dumps(names), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_every_aten_schema_prints_as_upstream():
    import torch

    names = []
    for s in torch._C._tn_op_schemas():
        head = s.split("(", 1)[0][len("aten::"):]
        if not head.startswith("_tn_"):  # torchnative's own operators: no upstream to compare with
            names.append(head)
    ours = _probe(sys.executable, names)
    ref = _probe(REF_PYTHON, names)
    bad = [(n, ours[n], ref[n]) for n in names if ours[n][0] != ref[n][0]]
    assert not bad, "\n".join(f"{n}:\n  ours     {o[0]}\n  upstream {r[0]}" for n, o, r in bad[:15]) + f"\n({len(bad)} differ)"
    # every overload upstream lists for the packet is known to us too
    missing = sorted({(n.partition(".")[0], ov) for n in names for ov in ref[n][1] if ov not in ours[n][1]})
    assert not missing, missing[:30]


def test_kernelless_operators_refuse_by_name():
    import pytest
    import torch

    x = torch.ones(4, 4)
    cases = [
        (lambda: torch.linalg.eig(x), "aten::linalg_eig.default"),
        (lambda: torch._C._nn.replication_pad3d(torch.ones(1, 1, 2, 2, 2), [1] * 6), "aten::replication_pad3d.default"),
        (lambda: x.to_sparse(), "aten::to_sparse.default"),
    ]
    for fn, name in cases:
        with pytest.raises(NotImplementedError, match="^" + name.replace(".", r"\.") + " is not implemented by torchnative$"):
            fn()
