"""The operator fuzzer's target list, read from what our core registers: every aten overload
with a kernel, its in-place and out= siblings (the door derives those), and the public
Python spellings that reach each one. Run under our torch; prints JSON.
    .venv/bin/python tests/fuzz/inventory.py > targets.json"""
import inspect
import json
import sys

import torch
import torch.nn.functional as F

# Python namespaces of the generated callables: (torch._C submodule, prefix, public module)
NAMESPACES = (("_special", "special_", torch.special), ("_linalg", "linalg_", torch.linalg),
              ("_fft", "fft_", torch.fft))


def _schemas():
    out = {}
    for s in torch._C._tn_op_schemas():
        head = s.split("(", 1)[0][len("aten::"):]
        name, _, ov = head.partition(".")
        out[f"{name}.{ov or 'default'}"] = s[len("aten::"):]
    return out


def _arg_names(schema):
    args = schema.split("(", 1)[1].rsplit(") ->", 1)[0]
    names, depth, cur = [], 0, ""
    for ch in args:  # split on top-level commas (defaults like [0, 0] contain commas)
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            names.append(cur)
            cur = ""
        else:
            cur += ch
    names.append(cur)
    res = []
    for a in names:
        a = a.strip()
        if not a or a == "*":
            continue
        decl = a.split("=", 1)[0].strip()
        res.append((decl.rsplit(" ", 1)[1], "(a!)" in decl or "(b!)" in decl or "!)" in decl))
    return res


def targets():
    schemas = _schemas()
    kernels = set(torch._C._tn_kernel_ops())
    picked = {}
    for full, schema in schemas.items():
        name, ov = full.split(".")
        if full in kernels:
            picked[full] = ("functional", full)
            continue
        if name.endswith("_") and f"{name[:-1]}.{ov}" in kernels:
            picked[full] = ("inplace", f"{name[:-1]}.{ov}")
            continue
        args = _arg_names(schema)
        if any(m for _, m in args):  # an out= overload: match a kernel op by its other arguments
            ins = [n for n, m in args if not m]
            for cand in kernels:
                cname, _ = cand.split(".")
                if cname == name and cand != full and [n for n, m in _arg_names(schemas[cand]) if not m] == ins:
                    picked[full] = ("out", cand)
                    break
    res = []
    for full, (variant, kernel) in sorted(picked.items()):
        name, ov = full.split(".")
        spell = []
        if variant != "out" and hasattr(torch.Tensor, name) and callable(getattr(torch.Tensor, name)):
            spell.append(["method", name])
        if variant != "inplace":
            fn = getattr(torch, name, None)
            if fn is not None and type(fn).__name__ == "builtin_function_or_method":
                spell.append(["torch", name])
            elif fn is not None and inspect.isfunction(fn):  # torch.functional's Python wrappers
                spell.append(["pyfn", "torch", name, list(inspect.signature(fn).parameters)])
            if hasattr(torch._C._nn, name):
                spell.append(["nn", name])
                pyf = getattr(F, name, None)
                if pyf is not None and inspect.isfunction(pyf):
                    params = list(inspect.signature(pyf).parameters)
                    spell.append(["pyfn", "torch.nn.functional", name, params])
            for sub, prefix, mod in NAMESPACES:
                if name.startswith(prefix) and hasattr(getattr(torch._C, sub), name) and hasattr(mod, name[len(prefix):]):
                    spell.append([mod.__name__, name[len(prefix):]])
        spell.append(["aten", full])
        res.append({"op": full, "variant": variant, "kernel": kernel, "schema": schemas[full], "spellings": spell})
    return res


if __name__ == "__main__":
    json.dump(targets(), sys.stdout)
