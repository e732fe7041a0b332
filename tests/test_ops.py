"""Every operator with a kernel, compared with upstream torch on identical inputs:
values (per-dtype tolerance), dtype, shape, and the exception class for invalid input."""
import os
import sys

import numpy as np
import pytest

from conftest import REF_PYTHON, ROOT, run_side_pickled
from optest import cases as C
from optest import harness as H

RUNNER = os.path.join(ROOT, "tests", "optest", "run_side.py")


def _run(python, out):
    return run_side_pickled(python, RUNNER, out, 1200)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp("ops")
    return _run(REF_PYTHON, str(d / "ref.pkl")), _run(sys.executable, str(d / "ours.pkl"))


@pytest.mark.parametrize("case", C.CASES, ids=[c.name for c in C.CASES])
def test_op_matches_upstream(case, results):
    ref, ours = results
    diff = H.compare(case, ref[case.name], ours[case.name])
    assert diff is None, f"{case.name}: {case.fn}: {diff}"


def test_every_kernel_has_a_case():
    import torch

    # only passing cases count: parked ones (KNOWN_BINDING_BUGS, KNOWN_UNSUPPORTED) do not
    covered = {c for case in C.CASES for c in case.covers}
    with_kernel = set(torch._C._tn_kernel_ops())
    missing = sorted(with_kernel - covered)
    assert missing == [], f"operators with a kernel but no comparison case: {missing}"


def _tensor_case():
    return H.Case("fault", "", [], [])


def test_fault_injection_every_comparator_catches_a_wrong_answer():
    """Each comparator flags a deliberately wrong result."""
    case = _tensor_case()
    vals = np.linspace(-3, 3, 33, dtype=np.float32)
    good = ("ok", ("tensor", "float32", (33,), vals.tobytes()))
    assert H.compare(case, good, good) is None
    wrong_value = vals.copy()
    wrong_value[17] += 1e-3
    bf = (np.frombuffer(vals.tobytes(), np.uint32) >> 16).astype(np.uint16)
    bf_wrong = bf.copy()
    bf_wrong[5] ^= 0x10
    faults = {
        "value": ("ok", ("tensor", "float32", (33,), wrong_value.tobytes())),
        "dtype": ("ok", ("tensor", "float64", (33,), vals.astype(np.float64).tobytes())),
        "shape": ("ok", ("tensor", "float32", (3, 11), vals.tobytes())),
        "nan": ("ok", ("tensor", "float32", (33,), np.where(np.arange(33) == 3, np.nan, vals).astype(np.float32).tobytes())),
        "exception": ("err", "RuntimeError", "boom"),
        "kind": ("ok", ("tuple", [good[1]])),
        "py": ("ok", ("py", 3)),
    }
    for name, bad in faults.items():
        assert H.compare(case, good, bad) is not None, f"comparator missed a wrong {name}"
    assert H.compare(case, ("ok", ("tensor", "bfloat16", (33,), bf.tobytes())),
                     ("ok", ("tensor", "bfloat16", (33,), bf_wrong.tobytes()))) is not None
    ints = np.arange(7, dtype=np.int64)
    assert H.compare(case, ("ok", ("tensor", "int64", (7,), ints.tobytes())),
                     ("ok", ("tensor", "int64", (7,), (ints + (ints == 6)).tobytes()))) is not None
    assert H.compare(case, ("err", "IndexError", "x"), ("err", "RuntimeError", "x")) is not None
    assert H.compare(case, ("ok", ("py", 1.0)), ("ok", ("py", 1.5))) is not None
