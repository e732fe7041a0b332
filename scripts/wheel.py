"""Build the installable wheel: torchnative-<version>-cp311-abi3-<platform>.whl.

    .venv/bin/python scripts/wheel.py [--out build/dist]

What goes in:
- torch/, torchgen/, functorch/: upstream torch 2.13.0's Python tree, taken from the
  upstream wheel (build/wheels/, fetched by scripts/setup.sh) by the same filter as the
  development environment (scripts/vendor.py: no compiled artefact of upstream's);
- torch/_C.abi3.so: our extension (built here first, limited API 3.11), plus the two files
  vendor.py adds (an empty libtorch_global_deps.so, the torch_shm_manager marker);
- torchnative/: the package from python/torchnative;
- torch-2.13.0.dist-info, installed as data into site-packages (the `.data/purelib`
  scheme: a wheel may carry only one dist-info of its own), so that pip, importlib.metadata
  and packages that require torch see torch 2.13.0 installed. Its METADATA names
  torchnative as the provider; its requirements are upstream's, and torchnative's own
  METADATA requires the same packages, so `pip check` is clean. pip uninstall of
  torchnative removes it with everything else (it is in the wheel's RECORD);
- torchnative's dist-info: METADATA, WHEEL (Root-Is-Purelib false, tag cp311-abi3-<platform>),
  entry points (torchrun, as upstream's wheel declares it) and RECORD.
Packages that require torch (accelerate, peft, ...) are installed in a second pip call:
pip resolves a requirement on torch before it installs the wheel's torch metadata, so in
one call with torchnative it would fetch upstream's torch and overwrite the tree.
The platform tag is the plain `linux_<machine>`: the extension needs the C library of
the machine it was built on, no manylinux audit is made. Prints the wheel's path and size.
"""
import argparse
import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import vendor  # noqa: E402  (the Python-tree filter and the empty library)

TORCH_VERSION = "2.13.0"
# upstream 2.13.0's own Requires-Dist (its METADATA), without the optional extras
TORCH_REQUIRES = ["filelock", "typing-extensions>=4.10.0", "setuptools>=77.0.3", "sympy>=1.13.3",
                  "networkx>=2.5.1", "jinja2", "fsspec>=0.8.5"]
ENTRY_POINTS = ("[console_scripts]\ntorchrun = torch.distributed.run:main\n\n"
                "[torchrun.logs_specs]\ndefault = torch.distributed.elastic.multiprocessing:DefaultLogsSpecs\n")


def version():
    ns = {}
    with open(os.path.join(ROOT, "python", "torchnative", "__init__.py")) as f:
        for line in f:
            if line.startswith("__version__"):
                exec(line, ns)
    return ns["__version__"]


def platform_tag():
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


class Wheel:
    """A zip being written, with the RECORD rows of what went in."""

    def __init__(self, path):
        self.zf = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.rows = []

    def add(self, name, data, executable=False):
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (0o755 if executable else 0o644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zf.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.rows.append((name, f"sha256={digest}", str(len(data))))

    def close(self, record_name):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for r in self.rows:
            w.writerow(r)
        w.writerow((record_name, "", ""))
        self.zf.writestr(zipfile.ZipInfo(record_name, date_time=(2026, 1, 1, 0, 0, 0)), buf.getvalue())
        self.zf.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "dist"))
    ap.add_argument("--no-build", action="store_true", help="package build/_C.abi3.so as it is")
    a = ap.parse_args()
    if not a.no_build:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "build.py"), "--no-install"], check=True,
                       stdout=subprocess.DEVNULL)
    so = os.path.join(ROOT, "build", "_C.abi3.so")
    wheels = [f for f in os.listdir(os.path.join(ROOT, "build", "wheels")) if f.startswith("torch-2.13.0")]
    if not wheels or not os.path.exists(so):
        sys.exit("scripts/wheel.py: run scripts/setup.sh first (the upstream wheel and our build)")
    upstream = os.path.join(ROOT, "build", "wheels", sorted(wheels)[0])
    ver = version()
    tag = f"cp311-abi3-{platform_tag()}"
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"torchnative-{ver}-{tag}.whl")
    info = f"torchnative-{ver}.dist-info"
    torch_info = f"torchnative-{ver}.data/purelib/torch-{TORCH_VERSION}.dist-info"
    w = Wheel(path)
    with zipfile.ZipFile(upstream) as zf:
        for m in zf.namelist():
            if vendor.is_python_tree(m) and ".dist-info/" not in m:
                w.add(m, zf.read(m))
        licence = zf.read(next(m for m in zf.namelist() if m.endswith(".dist-info/licenses/LICENSE")))
    with open(so, "rb") as f:
        w.add("torch/_C.abi3.so", f.read(), executable=True)
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, "libtorch_global_deps.so")
        vendor.build_empty_library(lib)
        with open(lib, "rb") as f:
            w.add("torch/lib/libtorch_global_deps.so", f.read(), executable=True)
    w.add("torch/bin/torch_shm_manager", b"")
    pkg = os.path.join(ROOT, "python")
    for dirpath, dirs, files in os.walk(os.path.join(pkg, "torchnative")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for fn in sorted(files):
            if fn.endswith((".pyc", ".pyo")):
                continue
            full = os.path.join(dirpath, fn)
            with open(full, "rb") as f:
                w.add(os.path.relpath(full, pkg).replace(os.sep, "/"), f.read())
    requires = "".join(f"Requires-Dist: {r}\n" for r in TORCH_REQUIRES)
    w.add(f"{torch_info}/METADATA", (
        f"Metadata-Version: 2.1\nName: torch\nVersion: {TORCH_VERSION}\n"
        f"Summary: PyTorch's Python tree {TORCH_VERSION} on torchnative's C core (installed by torchnative {ver})\n"
        "License-File: LICENSE\nRequires-Python: >=3.11\n" + requires).encode())
    w.add(f"{torch_info}/LICENSE", licence)
    w.add(f"{torch_info}/INSTALLER", b"torchnative\n")
    w.add(f"{torch_info}/top_level.txt", b"functorch\ntorch\ntorchgen\n")
    w.add(f"{info}/METADATA", (
        f"Metadata-Version: 2.1\nName: torchnative\nVersion: {ver}\n"
        "Summary: PyTorch's Python tree and the Hugging Face stack on a C core (torch._C in C)\n"
        "License-File: LICENSE.torch\nRequires-Python: >=3.11\n" + requires).encode())
    w.add(f"{info}/LICENSE.torch", licence)  # the bundled torch tree's licence
    w.add(f"{info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: torchnative scripts/wheel.py\n"
                            f"Root-Is-Purelib: false\nTag: {tag}\n").encode())
    w.add(f"{info}/entry_points.txt", ENTRY_POINTS.encode())
    w.add(f"{info}/top_level.txt", b"functorch\ntorch\ntorchgen\ntorchnative\n")
    w.close(f"{info}/RECORD")
    print(f"{path} {os.path.getsize(path)} bytes ({os.path.getsize(path) / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()
