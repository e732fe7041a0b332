"""Assemble upstream torch's Python tree from the torch 2.13.0 wheel into a site-packages.

Copies torch/, torchgen/, functorch/ and the dist-info (without RECORD) and drops every
compiled artefact. Then adds the three files our build owns besides `_C`: an empty
`torch/lib/libtorch_global_deps.so` made by the C compiler and the
`torch/bin/torch_shm_manager` marker. Nothing here edits an upstream file.

    python scripts/vendor.py WHEEL SITE_PACKAGES
"""
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

TOP_LEVEL = ("torch/", "torchgen/", "functorch/")
# Directories of compiled artefacts (shared libraries, C++ headers, CMake files, test
# binaries). The Python tree is everything else.
DROPPED_DIRS = ("torch/lib/", "torch/include/", "torch/bin/", "torch/share/")


def is_python_tree(name: str) -> bool:
    """True for wheel members that belong to the vendored Python tree."""
    if name.endswith("/"):
        return False
    if ".dist-info/" in name:
        return not name.endswith("/RECORD")
    if not name.startswith(TOP_LEVEL):
        return False
    if name.startswith(DROPPED_DIRS):
        return False
    base = name.rsplit("/", 1)[-1]
    return not (base.endswith(".so") or ".so." in base or base.endswith((".a", ".dylib", ".dll")))


def build_empty_library(path: str) -> None:
    """An empty shared library: torch/__init__.py dlopens it with ctypes."""
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "empty.c")
        with open(src, "w") as f:
            f.write("/* torchnative: libtorch_global_deps has nothing to preload. */\n"
                    "int torchnative_global_deps_marker;\n")
        subprocess.run([cc, "-shared", "-fPIC", "-o", path, src], check=True)


def main(wheel: str, site: str) -> None:
    with zipfile.ZipFile(wheel) as zf:
        members = [m for m in zf.namelist() if is_python_tree(m)]
        for top in ("torch", "torchgen", "functorch"):
            shutil.rmtree(os.path.join(site, top), ignore_errors=True)
        for d in os.listdir(site):
            if d.startswith("torch-") and d.endswith(".dist-info"):
                shutil.rmtree(os.path.join(site, d))
        for m in members:
            zf.extract(m, site)
    os.makedirs(os.path.join(site, "torch", "lib"), exist_ok=True)
    os.makedirs(os.path.join(site, "torch", "bin"), exist_ok=True)
    build_empty_library(os.path.join(site, "torch", "lib", "libtorch_global_deps.so"))
    open(os.path.join(site, "torch", "bin", "torch_shm_manager"), "w").close()
    # Byte-compile the tree as pip does when it installs the wheel: without the .pyc files
    # every `import torch` recompiles ~740 modules (measured: 2x upstream's import time,
    # and the test suite starts hundreds of processes). Like pip, files that only newer
    # Pythons can parse (torch/testing/_internal/py312_intrinsics.py) are left as source.
    import compileall
    for top in ("torch", "torchgen", "functorch"):
        path = os.path.join(site, top)
        if os.path.isdir(path):
            compileall.compile_dir(path, quiet=2, workers=0)
    print(f"vendored {len(members)} files from {os.path.basename(wheel)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
