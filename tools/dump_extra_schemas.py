"""Writes the schemas of the operators upstream's libtorch registers outside `aten::`
(profiler::, prim::, quantized::, _c10d_functional:: ...). They are not in
native_functions.yaml, yet torch's Python tree names some of them at import. The list is a
fact about upstream, regenerated with the reference environment:

    .venv-ref/bin/python tools/dump_extra_schemas.py > python/torchnative/_surface/extra_schemas.txt
"""
import torch

# Namespaces that torch's own Python code defines through torch.library at import: they
# must not be pre-registered (the Python definitions would collide).
PYTHON_DEFINED = {"prims", "rngprims", "symm_mem", "quantized_decomposed", "ao", "triton", "_dtensor",
                  "export", "fsdp", "_inductor_debug", "_torch_testing", "_inductor_test", "mylib",
                  "mymodule", "streams"}
import os

import torchgen
from torchgen.gen import parse_native_yaml

_d = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")
IN_YAML = {"aten::" + str(f.func.name) for f in
           parse_native_yaml(os.path.join(_d, "native_functions.yaml"), os.path.join(_d, "tags.yaml")).native_functions}


def full_name(s):
    return s.name + ("." + s.overload_name if s.overload_name else "")


# aten:: operators registered by hand in libtorch (quantized_lstm, ...) are included too.
names = sorted({str(s) for s in torch._C._jit_get_all_schemas()
                if s.name.split("::")[0] not in PYTHON_DEFINED and full_name(s) not in IN_YAML})
print("# Non-aten operator schemas registered by upstream torch 2.13.0 (tools/dump_extra_schemas.py).")
for n in names:
    print(n)
