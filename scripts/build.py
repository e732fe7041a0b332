"""Build torch._C and install it into the environment running this script (.venv).

    scripts/build.py                                # build/, installed into this interpreter's env
    scripts/build.py --sanitize address,undefined   # build/asan/, installed into .venv-asan
    scripts/build.py --sanitize thread              # build/tsan/: the C unit tests under TSan

A sanitized _C only loads with its runtime preloaded, so it is never installed into the
environment it was built from unless that is a sanitizer environment (scripts/asan.sh
sets one up and runs Python in it; docs/RELIABILITY.md). The C unit tests of each build
land in <build dir>/tests/.
"""
import argparse
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


def main():
    """Parses the flags, builds with ninja (tools/build_ninja.py), installs the extension."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sanitize", default="", help="address,undefined | thread (default: none)")
    ap.add_argument("--no-install", action="store_true", help="build only")
    args = ap.parse_args()
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
    tmp = dest + ".tmp"
    shutil.copyfile(so, tmp)
    os.replace(tmp, dest)  # a new inode: a hard-linked copy of .venv keeps its own _C


def sanitizer_site(venv):
    """site-packages of the sanitizer environment `venv`, or None when it is not set up."""
    if not os.path.exists(os.path.join(venv, ".tn-sanitized")):
        return None
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return os.path.join(venv, "lib", ver, "site-packages")


if __name__ == "__main__":
    main()
