"""Upstream's own operator database (op_db) on our core: every entry's CPU samples, drawn by
upstream, run on both sides in each form the entry declares (function, Tensor method,
in-place, out=) and each dtype of driver.CI_DTYPES, and compared (tests/opinfo/). The
agreeing (form, dtype, entry) triples may only grow: tests/opinfo/floor.json lists them, and
`python tests/opinfo/driver.py --update-floor` raises it after a change makes more agree."""
import os
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "opinfo"))
import compare  # noqa: E402
import driver  # noqa: E402


@pytest.fixture(scope="module")
def sweep():
    v = driver.sweep()
    report = os.path.join(driver.BUILD, "opinfo", "report.txt")
    with open(report, "w") as f:
        f.write(driver.summary(v) + "\n")
        for form in driver.FORMS:
            for k, per_dt in sorted(v[form].items()):
                for dt, (st, d) in sorted(per_dt.items()):
                    f.write(f"{form:8s} {dt:10s} {st:9s} {k}: {d}\n")
    print("\n" + driver.summary(v) + f"\n(per entry: {report})")
    return v


def test_no_entry_crashes_or_hangs(sweep):
    crashed = {(form, k, dt): d for form, per_entry in sweep.items() for k, per_dt in per_entry.items()
               for dt, (st, d) in per_dt.items() if st == "crash"}
    assert crashed == {}


@pytest.mark.parametrize("form", driver.FORMS)
def test_agreeing_entries_only_grow(sweep, form):
    lost, short = driver.floor_regressions({form: sweep[form]}, driver.CI_DTYPES)
    assert lost == {}, f"(form, dtype, entry) triples that agreed before and no longer do: {lost}"
    assert short == {}, f"agreeing entries per (form, dtype), (now, floor): {short}"


def test_counts_add_up(sweep):
    c = {form: driver.counts(sweep[form]) for form in driver.FORMS}
    assert sum(c["function"][s] for s in compare.STATUSES) == c["function"]["entries"] > 600  # ~690 with samples
    assert c["method"]["entries"] > 300  # ~330 of them declare a method
    assert c["inplace"]["entries"] > 100 and c["out"]["entries"] > 200


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


def test_judging_a_dtype_skips_forms_not_run_and_counts_missing_results():
    ok = ("ok", _t("float32", (2,), [1.0, 2.0]))
    bad = ("ok", _t("float32", (2,), [1.0, 3.0]))
    # an out= form is not run for a sample whose function result is no tensor (None on both sides)
    assert compare.judge_dtype([None, ok], [None, ok], "x") == ("agree", "")
    assert compare.judge_dtype([None, ok], [None, bad], "x")[0] == "disagree"
    assert compare.judge_dtype([ok, ok], [ok], "x")[0] == "crash"
    assert compare.judge_dtype([ok], None, "x")[0] == "crash"
    # in-place results carry whether the mutated tensor itself was returned
    same = ("ok", ("seq", "inplace", [("py", True), _t("float32", (2,), [1.0, 2.0])]))
    other = ("ok", ("seq", "inplace", [("py", False), _t("float32", (2,), [1.0, 2.0])]))
    assert compare.judge_dtype([same], [other], "x")[0] == "disagree"
