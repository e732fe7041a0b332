"""Upstream's own operator database (op_db) on our core: every entry's CPU samples, drawn by
upstream, run on both sides (function form, and method form where the entry declares one)
and compared (tests/opinfo/). The agreeing entries may only grow:
tests/opinfo/floor.json lists them, and `python tests/opinfo/driver.py --update-floor` raises
it after a change makes more entries agree."""
import os
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "opinfo"))
import compare  # noqa: E402
import driver  # noqa: E402


@pytest.fixture(scope="module")
def sweep():
    v, m = driver.sweep()
    report = os.path.join(driver.BUILD, "opinfo", "report.txt")
    with open(report, "w") as f:
        f.write(driver.summary(v, m) + "\n")
        for form, vs in (("", v), ("method ", m)):
            for k, (st, d) in sorted(vs.items()):
                f.write(f"{form}{st:9s} {k}: {d}\n")
    print("\n" + driver.summary(v, m) + f" (per entry: {report})")
    return v, m


def test_no_entry_crashes_or_hangs(sweep):
    crashed = {k: d for v in sweep for k, (st, d) in v.items() if st == "crash"}
    assert crashed == {}


@pytest.mark.parametrize("form", ["function", "method"])
def test_agreeing_entries_only_grow(sweep, form):
    verdicts = sweep[0] if form == "function" else sweep[1]
    floor = driver.load_floor()
    names, least = (floor["agree"], floor["min_agree"]) if form == "function" else \
        (floor["method_agree"], floor["min_method_agree"])
    lost = {k: verdicts.get(k, ("missing", "no samples this run")) for k in names
            if verdicts.get(k, ("missing",))[0] != "agree"}
    assert lost == {}, f"entries whose {form} form agreed before and no longer does: {lost}"
    n = sum(1 for st, _ in verdicts.values() if st == "agree")
    assert n >= least, f"{n} entries agree in the {form} form, the floor is {least}"


def test_counts_add_up(sweep):
    c, m = driver.counts(sweep[0]), driver.counts(sweep[1])
    assert sum(c[s] for s in compare.STATUSES) == c["entries"] > 600  # op_db has ~690 entries with samples
    assert sum(m[s] for s in compare.STATUSES) == m["entries"] > 300  # ~330 of them declare a method


# ---- the comparator itself catches each kind of difference ------------------------------

def _t(dtype, shape, values):
    import numpy as np

    a = np.asarray(values, dtype={"bfloat16": np.float32}.get(dtype, dtype)).reshape(shape)
    if dtype == "bfloat16":
        a = (a.view(np.uint32) >> 16).astype(np.uint16)
    return ("tensor", dtype, shape, a.tobytes())


def test_comparator_catches_each_difference():
    good = ("ok", ("seq", "tuple", [_t("float32", (3,), [1.0, 2.0, 3.0])]))
    assert compare.judge_sample(good, good) == ("agree", "")
    wrong = {
        "list for tuple": ("ok", ("seq", "list", [_t("float32", (3,), [1.0, 2.0, 3.0])])),
        "value": ("ok", ("seq", "tuple", [_t("float32", (3,), [1.0, 2.0, 3.001])])),
        "dtype": ("ok", ("seq", "tuple", [_t("float64", (3,), [1.0, 2.0, 3.0])])),
        "shape": ("ok", ("seq", "tuple", [_t("float32", (1, 3), [1.0, 2.0, 3.0])])),
        "nan": ("ok", ("seq", "tuple", [_t("float32", (3,), [1.0, float("nan"), 3.0])])),
        "raises": ("err", "RuntimeError", "boom"),
    }
    for what, bad in wrong.items():
        assert compare.judge_sample(good, bad)[0] != "agree", what
    assert compare.judge_sample(good, ("err", "NotImplementedError", "aten::x"))[0] == "refuse"
    assert compare.judge_sample(good, ("err", "RuntimeError", "x"))[0] == "fail"
    assert compare.judge_sample(("err", "IndexError", "x"), ("err", "RuntimeError", "x"))[0] == "fail"
    assert compare.judge_sample(("err", "IndexError", "x"), good)[0] == "disagree"
    assert compare.judge_sample(("ok", ("py", 1)), ("ok", ("py", True)))[0] == "disagree"
    ints = ("ok", _t("int64", (2,), [1, 2]))
    assert compare.judge_sample(ints, ("ok", _t("int64", (2,), [1, 3])))[0] == "disagree"
    bf = ("ok", _t("bfloat16", (2,), [1.0, 2.0]))
    assert compare.judge_sample(bf, ("ok", _t("bfloat16", (2,), [1.0, 2.5])))[0] == "disagree"
    # bfloat16 within upstream's tolerance (rtol 1.6e-2): one unit in the last place of 2.0
    assert compare.judge_sample(bf, ("ok", _t("bfloat16", (2,), [1.0, 2.015625])))[0] == "agree"
