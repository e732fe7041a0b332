"""The FFT family and complex tensors as data, compared with upstream torch on identical
inputs: the "cx_" and "fft_" cases of tests/optest/cases.py (every torch.fft spelling, each
normalisation, n/s padding and trimming, kernel paths by length, bad input by exception
class) run on both sides here, plus properties checked on our side alone (views share
storage, accuracy against numpy's float64 FFT at lengths of every kernel path)."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REF_PYTHON, ROOT, run_side_pickled, run_upstream
from optest import cases as C
from optest import harness as H

FFT_CASES = [c for c in C.CASES if c.name.startswith(("cx_", "fft_"))]
RUNNER = f"""
import sys
sys.path.insert(0, {os.path.join(ROOT, 'tests')!r})
from optest import cases, harness
harness.run_cases([c for c in cases.CASES if c.name.startswith(("cx_", "fft_"))], sys.argv[1])
"""


def _run(python, out):
    script = out + ".py"
    with open(script, "w") as f:
        f.write(RUNNER)
    return run_side_pickled(python, script, out, 600)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp("fft")
    return _run(REF_PYTHON, str(d / "ref.pkl")), _run(sys.executable, str(d / "ours.pkl"))


def test_cases_cover_every_spelling():
    names = {c.name for c in FFT_CASES}
    for fn in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2",
               "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"):
        assert any(n.startswith(f"fft_{fn}_") for n in names), fn
    assert {"fft_shift", "fft_freq", "fft_aten_kernels"} <= names
    assert sum(n.endswith("_err") for n in names) >= 20


@pytest.mark.parametrize("case", FFT_CASES, ids=[c.name for c in FFT_CASES])
def test_matches_upstream(case, results):
    ref, ours = results
    diff = H.compare(case, ref[case.name], ours[case.name])
    assert diff is None, f"{case.name}: {case.fn}: {diff}"


def test_views_share_storage():
    import torch

    z = torch.complex(torch.arange(6.0), -torch.arange(6.0))
    r = torch.view_as_real(z)
    r[2, 1] = 40.0
    z.real[0] = -7.0
    assert z[2].item() == complex(2, 40) and z[0].item() == complex(-7, 0)
    back = torch.view_as_complex(r)
    back[5] = 1 + 1j
    assert z[5].item() == 1 + 1j
    assert r.data_ptr() == z.data_ptr() and z.imag.data_ptr() == z.data_ptr() + 4


@pytest.mark.parametrize("n", [1, 6, 16, 45, 77, 127, 256, 1031, 2310, 65537])
def test_accuracy_against_numpy(n):
    """Double-precision transforms within a few ulps of numpy's pocketfft, and float32 within
    assert_close's default tolerance, at lengths through every kernel path."""
    import torch

    rng = np.random.default_rng(n)
    a = rng.standard_normal((2, n)) + 1j * rng.standard_normal((2, n))
    want = np.fft.fft(a)
    got = torch.fft.fft(torch.from_numpy(a)).numpy()
    scale = np.abs(want).max()
    assert np.abs(got - want).max() <= 1e-13 * scale * max(1.0, np.log2(n))
    got32 = torch.fft.fft(torch.from_numpy(a.astype(np.complex64))).numpy()
    want32 = np.fft.fft(a.astype(np.complex64).astype(np.complex128))
    assert np.abs(got32 - want32).max() <= 1e-5 + 1.3e-6 * scale * max(1.0, np.log2(n))
    inv = torch.fft.irfft(torch.fft.rfft(torch.from_numpy(a.real)), n=n).numpy()
    assert np.allclose(inv, a.real, rtol=1e-12, atol=1e-12)


def test_real_transform_gradients_pass_gradcheck():
    """Finite differences agree with the r2c / c2r / c2c backward rows (float64)."""
    import torch

    torch.manual_seed(0)
    x = torch.randn(5, 6, dtype=torch.float64, requires_grad=True)
    for fn in (lambda a: torch.view_as_real(torch.fft.rfft(a, norm="ortho")),
               lambda a: torch.fft.irfft(torch.fft.rfft(a, dim=0), n=7, dim=0),
               lambda a: torch.fft.hfft(torch.view_as_complex(torch.stack((a, a.flip(1)), -1)), n=9),
               lambda a: torch.view_as_real(torch.fft.ifft2(a))):
        assert torch.autograd.gradcheck(fn, (x,))


def test_complex_to_real_cast_warns_like_upstream():
    """Upstream warns once per process when a cast drops imaginary parts; a fresh process
    each side, so the once-flag of an earlier test cannot hide it."""
    code = ("import torch, warnings\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    torch.tensor([1+2j]).real.float(); n0 = len(w)\n"
            "    torch.tensor([1+2j]).float(); torch.zeros(1).copy_(torch.tensor([3j]))\n"
            "print(n0, [str(x.message).split(' (Triggered')[0] for x in w])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    rc, want, err = run_upstream(["-c", code], timeout=300)
    assert r.returncode == 0 and rc == 0, r.stderr + err
    assert r.stdout == want, (r.stdout, want)
