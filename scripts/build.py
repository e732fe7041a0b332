"""Build torch._C and install it into the environment running this script (.venv)."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import build_ninja  # noqa: E402

so = build_ninja.build()
import sysconfig  # noqa: E402
dest = os.path.join(sysconfig.get_paths()["purelib"], "torch", build_ninja.EXT_NAME)
tmp = dest + ".tmp"
shutil.copyfile(so, tmp)
os.replace(tmp, dest)
