"""The installed torch tree is upstream's Python tree, unmodified, plus exactly the files
torchnative owns; torch._C is our extension; no upstream shared library is installed."""
import glob
import os
import sysconfig
import zipfile

from conftest import ROOT

import importlib.util
import sys

sys.path.insert(0, os.path.join(ROOT, "scripts"))
vendor = importlib.import_module("vendor")

SITE = sysconfig.get_paths()["purelib"]
OURS = {"torch/_C.abi3.so", "torch/lib/libtorch_global_deps.so", "torch/bin/torch_shm_manager"}


def wheel_path():
    wheels = glob.glob(os.path.join(ROOT, "build", "wheels", "torch-2.13.0*.whl"))
    assert wheels, "the torch wheel is fetched by scripts/setup.sh"
    return wheels[0]


def installed_files():
    files = set()
    for top in ("torch", "torchgen", "functorch"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(SITE, top)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for f in filenames:
                files.add(os.path.relpath(os.path.join(dirpath, f), SITE))
    return files


def test_tree_equals_wheel_python_tree():
    with zipfile.ZipFile(wheel_path()) as zf:
        expected = {m for m in zf.namelist() if vendor.is_python_tree(m) and ".dist-info/" not in m}
        got = installed_files()
        assert got - expected == OURS, sorted(got - expected - OURS)[:20]
        assert expected - got == set()
        for m in sorted(expected):
            with open(os.path.join(SITE, m), "rb") as f:
                assert f.read() == zf.read(m), f"{m} differs from the wheel"


def test_dist_info_metadata_present():
    import importlib.metadata

    assert importlib.metadata.version("torch") == "2.13.0+cpu"
    record = glob.glob(os.path.join(SITE, "torch-2.13.0*.dist-info", "RECORD"))
    assert record == []


def test_torch_C_is_ours():
    import torch

    assert os.path.realpath(torch._C.__file__) == os.path.realpath(os.path.join(SITE, "torch", "_C.abi3.so"))


def test_no_upstream_shared_library_in_venv():
    venv = os.path.dirname(os.path.dirname(os.path.dirname(SITE)))
    bad = []
    for dirpath, _, filenames in os.walk(venv):
        for f in filenames:
            if f.startswith(("libtorch", "libc10", "libshm", "libcaffe2")) or (f.startswith("_C.") and f.endswith(".so") and "cpython" in f):
                full = os.path.join(dirpath, f)
                if os.path.relpath(full, SITE) not in OURS:
                    bad.append(full)
    assert bad == []


def test_global_deps_library_is_empty_of_symbols():
    import ctypes

    lib = ctypes.CDLL(os.path.join(SITE, "torch", "lib", "libtorch_global_deps.so"))
    assert hasattr(lib, "torchnative_global_deps_marker")
