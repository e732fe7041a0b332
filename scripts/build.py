"""Build torch._C and install it into the environment running this script (.venv).

    scripts/build.py                                # build/, installed into this interpreter's env
    scripts/build.py --sanitize address,undefined   # build/asan/, installed into .venv-asan
    scripts/build.py --sanitize thread              # build/tsan/: the C unit tests under TSan
    scripts/build.py --target aarch64               # build/aarch64/build/, cross-compiled; _C
                                                    # installed into build/aarch64/site-ours

A sanitized _C only loads with its runtime preloaded, so it is never installed into the
environment it was built from unless that is a sanitizer environment (scripts/asan.sh
sets one up and runs Python in it; docs/RELIABILITY.md). The C unit tests of each build
land in <build dir>/tests/.
"""
import argparse
import filecmp
import os
import shutil
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Build directory and install target per sanitizer set. These are fixed (an inherited
# TN_BUILD_DIR is ignored): scripts/asan.sh and scripts/tsan.sh look for them there, and a
# sanitized build must never land in the normal build's directory.
SANITIZED = {
    "address,undefined": ("asan", ".venv-asan"),
    "address": ("asan", ".venv-asan"),
    "thread": ("tsan", None),
}
# Cross targets: toolchain prefix. The target's CPython headers and the site the extension
# goes to come from the emulated environment scripts/aarch64_env.sh sets up (docs/AARCH64.md).
TARGETS = {"aarch64": "aarch64-linux-gnu"}


def main():
    """Parses the flags, builds with ninja (tools/build_ninja.py), installs the extension."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sanitize", default="", help="address,undefined | thread (default: none)")
    ap.add_argument("--target", choices=sorted(TARGETS), help="cross-compile (default: the host)")
    ap.add_argument("--no-install", action="store_true", help="build only")
    args = ap.parse_args()
    if args.target:
        if args.sanitize:
            ap.error("--target and --sanitize do not combine")
        return cross_build(args.target, args.no_install)
    spec = ",".join(sorted(n.strip() for n in args.sanitize.split(",") if n.strip()))
    venv = None
    if spec:
        if spec not in SANITIZED:
            ap.error(f"--sanitize {args.sanitize!r}: supported sets are {', '.join(SANITIZED)}")
        sub, venv = SANITIZED[spec]
        os.environ["TN_BUILD_DIR"] = os.path.join(ROOT, "build", sub)
        os.environ["TN_SANITIZE"] = spec
    else:
        os.environ.pop("TN_SANITIZE", None)
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import build_ninja  # noqa: E402  (reads TN_BUILD_DIR / TN_SANITIZE at import)

    so = build_ninja.build()
    if args.no_install or (spec and venv is None):
        return
    if spec:
        site = sanitizer_site(os.path.join(ROOT, venv))
        if site is None:
            print(f"[build] {venv} does not exist; built {so} only (scripts/asan.sh creates it)")
            return
    else:
        site = sysconfig.get_paths()["purelib"]
        if os.path.exists(os.path.join(sys.prefix, ".tn-sanitized")):
            sys.exit(f"{sys.prefix} is a sanitizer environment: build it with --sanitize")
    dest = os.path.join(site, "torch", build_ninja.EXT_NAME)
    if os.path.exists(dest) and filecmp.cmp(so, dest, shallow=False):
        return  # already installed: a build that changed nothing leaves the file alone
    tmp = dest + ".tmp"
    shutil.copyfile(so, tmp)
    os.replace(tmp, dest)  # a new inode: a hard-linked copy of .venv keeps its own _C


def cross_build(target, no_install):
    """Cross-compiles _C and the C unit tests into build/<target>/build/ and installs the
    extension into build/<target>/site-ours/torch when the emulated environment exists."""
    env_dir = os.path.join(ROOT, "build", target)
    sysroot_inc = os.path.join(env_dir, "sysroot", "usr", "include")
    if not os.path.exists(os.path.join(sysroot_inc, "python3.11", "Python.h")):
        sys.exit(f"{sysroot_inc}/python3.11 is missing: run scripts/{target}_env.sh first")
    if shutil.which(TARGETS[target] + "-gcc") is None:
        sys.exit(f"{TARGETS[target]}-gcc not found: run scripts/{target}_env.sh first")
    os.environ["TN_BUILD_DIR"] = os.path.join(env_dir, "build")
    os.environ["TN_CROSS"] = TARGETS[target]
    # Debian's python3.11/pyconfig.h includes <aarch64-linux-gnu/python3.11/pyconfig.h>
    os.environ["TN_PY_INCLUDE"] = os.pathsep.join([os.path.join(sysroot_inc, "python3.11"), sysroot_inc])
    os.environ.pop("TN_SANITIZE", None)
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import build_ninja  # noqa: E402

    so = build_ninja.build()
    site_torch = os.path.join(env_dir, "site-ours", "torch")
    if no_install or not os.path.isdir(site_torch):
        return
    tmp = os.path.join(site_torch, build_ninja.EXT_NAME + ".tmp")
    shutil.copyfile(so, tmp)
    os.replace(tmp, os.path.join(site_torch, build_ninja.EXT_NAME))


def sanitizer_site(venv):
    """site-packages of the sanitizer environment `venv`, or None when it is not set up."""
    if not os.path.exists(os.path.join(venv, ".tn-sanitized")):
        return None
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return os.path.join(venv, "lib", ver, "site-packages")


if __name__ == "__main__":
    main()
