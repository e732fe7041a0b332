"""Gradients of every differentiable operator with a formula, compared with upstream on
identical inputs (tests/gradtest): first order in float64 and float32, second order where
the case asks, plus the coverage test (every formulas.def row has a case) and a fault
injection proving the comparator catches a wrong gradient."""
import os
import pickle
import re
import subprocess
import sys

import pytest

from conftest import REF_PYTHON, run_upstream
from gradtest import cases, cases_generated, harness

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))


def _run(python, out):
    runner = os.path.join(HERE, "gradtest", "run_side.py")
    if python == REF_PYTHON:
        rc, _, err = run_upstream([runner, out], outputs=[out], cwd=ROOT, timeout=900)
        assert rc == 0, err[-4000:]
    else:
        subprocess.run([python, runner, out], check=True, timeout=900, cwd=ROOT)
    with open(out, "rb") as f:
        return pickle.load(f)


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    d = tmp_path_factory.mktemp("grad")
    ref = _run(REF_PYTHON, str(d / "ref.pkl"))
    got = _run(sys.executable, str(d / "got.pkl"))
    return ref, got


KEYS = [(c, dt) for c in cases.CASES + cases_generated.CASES for dt in c.dtypes]


@pytest.mark.parametrize("case,dtype", KEYS, ids=[f"{c.name}-{dt}" for c, dt in KEYS])
def test_gradient_matches_upstream(sides, case, dtype):
    ref, got = sides
    key = f"{case.name}|{dtype}"
    if case.error:
        assert ref[key][:2] == ("err", case.error), f"upstream: {ref[key]}"
        assert got[key][:2] == ("err", case.error), f"ours: {got[key]}"
        return
    assert ref[key][0] == "ok", f"upstream failed: {ref[key]}"
    msg = harness.compare(case, dtype, ref[key], got[key])
    assert msg is None, msg


def test_every_formula_row_has_a_case():
    text = open(os.path.join(ROOT, "src", "autograd", "formulas.def")).read()
    rows = set(re.findall(r"^TN_GRAD\((\w+),", text, re.M))
    covered = {op for c in cases.CASES for op in c.covers}
    missing = rows - covered - set(cases.UNCOVERED)
    assert not missing, f"formulas without a gradient case: {sorted(missing)}"
    stale = set(cases.UNCOVERED) - rows
    assert not stale, f"UNCOVERED names rows that do not exist: {sorted(stale)}"


def test_every_generated_formula_row_has_a_case():
    """The rows generated from derivatives.yaml (build/gen/formulas_generated.def)."""
    build = os.environ.get("TN_BUILD_DIR", os.path.join(ROOT, "build"))
    text = open(os.path.join(build, "gen", "formulas_generated.def")).read()
    rows = set(re.findall(r"^TN_GRAD\((\w+),", text, re.M))
    covered = {op for c in cases_generated.CASES for op in c.covers}
    missing = rows - covered - set(cases_generated.UNCOVERED)
    assert not missing, f"generated formulas without a gradient case: {sorted(missing)}"
    stale = set(cases_generated.UNCOVERED) - rows
    assert not stale, f"cases_generated.UNCOVERED names rows that are not generated: {sorted(stale)}"
    # a case may also cover a composite that runs as its parts (no generated row then)
    sys.path.insert(0, os.path.join(ROOT, "tools", "codegen"))
    from gen_derivatives import decomposed_ops
    stale = covered - rows - decomposed_ops()
    assert not stale, f"cases_generated covers ops that are neither generated rows nor decomposed: {sorted(stale)}"


def test_comparator_catches_a_wrong_gradient(sides):
    """Fault injection: one gradient element scaled by 1.001 must be reported."""
    ref, _ = sides
    case = next(c for c in cases.CASES if c.name == "mul")
    r = ref[f"{case.name}|float64"]
    kind, dtype, shape, raw = r[1]["grad"][1][0]
    import numpy as np
    a = np.frombuffer(raw, dtype=dtype).copy()
    a[0] *= 1.001
    bad = ("ok", dict(r[1], grad=("tuple", [(kind, dtype, shape, a.tobytes())] + r[1]["grad"][1][1:])))
    assert harness.compare(case, "float64", r, bad) is not None
    assert harness.compare(case, "float64", r, r) is None


def test_real_operand_of_complex_result_warns_like_upstream():
    """A real input whose gradient comes back complex takes its real part without the
    complex-to-real cast warning (upstream's handle_r_to_c); an explicit cast still warns.
    A fresh process each side, so no once-flag of an earlier test hides a warning."""
    code = ("import torch, warnings\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    r = torch.rand(3, dtype=torch.float64, requires_grad=True)\n"
            "    z = torch.tensor([1 + 2j, 3 - 1j, 0.5j], dtype=torch.complex128)\n"
            "    (r * z).abs().sum().backward(); g0 = r.grad.clone(); n0 = len(w)\n"
            "    torch.renorm(torch.stack([z, z * 2]).requires_grad_(), 2, 0, 1.0).abs().sum().backward(); n1 = len(w)\n"
            "    r.grad = None; (r.to(torch.complex128) * z).real.sum().backward()\n"
            "    torch.tensor([1 + 2j]).float()\n"
            "print([round(v, 12) for v in g0.tolist()], r.grad.tolist(), n0, n1, [str(x.message).split(' (Triggered')[0] for x in w])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    rc, want, err = run_upstream(["-c", code], timeout=300, cwd=ROOT)
    assert r.returncode == 0 and rc == 0, r.stderr + err
    assert r.stdout == want, (r.stdout, want)
