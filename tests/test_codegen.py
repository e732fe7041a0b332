"""The generated operator layer against upstream torch 2.13.0 (.venv-ref): schema strings,
exposed Python names per namespace, and overload order. Reads the generated tables in
$TN_BUILD_DIR/gen (build first); upstream facts come from a .venv-ref subprocess.

    TN_BUILD_DIR=build/codegen .venv/bin/python -m pytest tests/test_codegen.py
"""
import os
import re

import pytest

from conftest import BUILD, run_reference

GEN = os.path.join(BUILD, "gen")

# Names upstream binds by hand (python_torch_functions_manual.cpp, python_variable_methods.cpp,
# python_nn_functions.cpp, functionalization bindings) rather than from native_functions:
# they are the lead's / surface helper's to provide, not generated.
# torchnative's own operators (tools/codegen/own_operators.yaml), bound to no
# Python namespace; the schema tests check nothing else is added.
OWN_OPS = {"_tn_quant_linear", "_tn_quant_dequantize", "_tn_quant_repack", "_tn_quant_fast_layout", "_tn_quant_linear_8da4w",
           "_tn_quant_i4_dequantize", "_tn_quant_i4_repack", "_tn_quant_linear_8da4w_x8"}

HAND_WRITTEN_TORCH = {
    "_disable_functionalization", "_enable_functionalization", "_from_functional_tensor",
    "_functionalize_apply_view_metas", "_functionalize_are_all_mutations_hidden_from_autograd",
    "_functionalize_are_all_mutations_under_no_grad_or_inference_mode", "_functionalize_commit_update",
    "_functionalize_has_metadata_mutation", "_functionalize_inductor_storage_resized_counter",
    "_functionalize_is_symbolic", "_functionalize_mark_mutation_hidden_from_autograd",
    "_functionalize_mark_storage_changed", "_functionalize_mutation_counter", "_functionalize_replace",
    "_functionalize_storage_changed_counter", "_functionalize_sync", "_functionalize_unsafe_set",
    "_functionalize_was_inductor_storage_resized", "_functionalize_was_storage_changed",
    "_is_functional_tensor", "_is_functional_tensor_base", "_sync", "_to_functional_tensor",
    "as_tensor", "asarray", "dsmm", "from_numpy", "frombuffer", "get_default_dtype",
    "get_num_interop_threads", "get_num_threads", "hsmm", "init_num_threads", "is_grad_enabled",
    "is_inference_mode_enabled", "nonzero", "numel", "range", "saddmm", "set_flush_denormal",
    "set_num_interop_threads", "set_num_threads", "sparse_bsc_tensor", "sparse_bsr_tensor",
    "sparse_compressed_tensor", "sparse_coo_tensor", "sparse_csc_tensor", "sparse_csr_tensor", "spmm",
    "tensor", "_nested_tensor_from_tensor_list", "_from_blob", "get_device"}


def _read(name):
    path = os.path.join(GEN, name)
    if not os.path.exists(path):
        pytest.skip(f"{path} missing: build first")
    return open(path).read()


def _schemas():
    text = _read("ops_generated.c")
    out = {}
    for m in re.finditer(r'\[TN_OP_\w+\] = \{"((?:[^"\\]|\\.)*)", "((?:[^"\\]|\\.)*)", "((?:[^"\\]|\\.)*)"', text):
        name, ov, schema = (s.encode().decode("unicode_escape") for s in m.groups())
        out[f"{name}.{ov or 'default'}"] = schema
    return out


def _exposed():
    text = _read("pysig_generated.def")
    ns = {}
    for idx, space, name in re.findall(r'TN_PY_FN\((\d+), TN_NS_(\w+), "(\w+)"\)', text):
        ns.setdefault(space, set()).add(name)
    return ns


def _signatures():
    """name -> [signature strings in order] for the TORCH namespace (from the .c comments)."""
    text = _read("pysig_generated.c")
    funcs = re.findall(r'\{"(\w+)", TN_NS_(\w+), (\d+), (\d+), [^}]*\},', text)
    sigs = re.findall(r"\.structseq_out = -?\d+\}, /\* (.*) \*/", text)
    out = {}
    for name, space, first, n in funcs:
        out.setdefault(space, {})[name] = sigs[int(first):int(first) + int(n)]
    return out


@pytest.fixture(scope="module")
def upstream():
    return run_reference(r"""
import json, torch
schemas = {}
for name in torch._C._dispatch_get_all_op_names() if hasattr(torch._C, "_dispatch_get_all_op_names") else []:
    pass
for op in torch._C._jit_get_all_schemas():
    if op.name.startswith("aten::"):
        schemas[op.name[6:] + "." + (op.overload_name or "default")] = str(op)
tb = set(n for n in torch._C.TensorBase.__dict__ if not (n.startswith("__") and n.endswith("__")))
dunders = sorted(n for n in dir(torch._C.TensorBase) if n.startswith("__"))
print(json.dumps({"schemas": schemas,
                  "vf": sorted(n for n in dir(torch._C._VariableFunctions) if n not in dir(object)),
                  "nn": sorted(n for n in dir(torch._C._nn) if not n.startswith("__")),
                  "fft": sorted(n for n in dir(torch._C._fft) if not n.startswith("__")),
                  "linalg": sorted(n for n in dir(torch._C._linalg) if not n.startswith("__")),
                  "special": sorted(n for n in dir(torch._C._special) if not n.startswith("__")),
                  "tb": sorted(tb), "tb_dunders": dunders}))
""")


def test_every_schema_string_matches_upstream(upstream):
    ours = _schemas()
    theirs = upstream["schemas"]
    # upstream's registry also holds ops defined outside native_functions (none under aten
    # are expected); every overload we generate must print exactly as upstream's schema
    common = set(ours) & set(theirs)
    assert len(common) > 2500
    bad = {k: (ours[k], theirs[k]) for k in common if ours[k] != theirs[k]}
    assert not bad, list(bad.items())[:10]
    # upstream also registers ~650 aten:: schemas outside native_functions (TorchScript
    # builtins such as aten::Bool.Tensor); every overload we generate must exist upstream,
    # except torchnative's own (`_tn_*`, tools/codegen/own_operators.yaml)
    extra = sorted(set(ours) - set(theirs))
    assert not [e for e in extra if not e.startswith("_tn_")], extra[:20]
    assert {e.split(".")[0] for e in extra} == OWN_OPS, extra


def test_torch_namespace_names(upstream):
    ours = _exposed()["TORCH"]
    theirs = set(upstream["vf"])
    assert not (ours - theirs), sorted(ours - theirs)
    assert theirs - ours <= HAND_WRITTEN_TORCH, sorted((theirs - ours) - HAND_WRITTEN_TORCH)


@pytest.mark.parametrize("space,key", [("NN", "nn"), ("FFT", "fft"), ("LINALG", "linalg"), ("SPECIAL", "special")])
def test_submodule_names(upstream, space, key):
    ours = _exposed().get(space, set())
    theirs = set(upstream[key])
    assert not (ours - theirs), sorted(ours - theirs)
    # _nn has two hand-written entries upstream (_parse_to, mkldnn_prelu? see report)
    assert len(theirs - ours) <= 3, sorted(theirs - ours)


def test_tensor_method_names(upstream):
    ours = _exposed()["TENSOR"]
    theirs = set(upstream["tb"])
    assert not {n for n in ours if not n.startswith("__")} - theirs
    native_dunders = {n for n in ours if n.startswith("__")}
    assert native_dunders <= set(upstream["tb_dunders"])


_TYPE_NAMES = {"Tensor": "Tensor", "Scalar": "Number", "int64_t": "int", "SymInt": "int", "double": "float",
               "complex": "complex", "TensorList": "tuple of Tensors", "IntArrayRef": "tuple of ints",
               "SymIntArrayRef": "tuple of ints", "ArrayRef<double>": "tuple of floats", "Generator": "torch.Generator",
               "bool": "bool", "ScalarType": "torch.dtype", "Layout": "torch.layout", "MemoryFormat": "torch.memory_format",
               "Device": "torch.device", "c10::string_view": "str", "ScalarList": "tuple of Scalars",
               "c10::List<::std::optional<Tensor>>": "tuple of Tensors", "DeviceIndex": "int", "Stream": "torch.Stream"}


def _to_option(sig):
    """Our signature string in upstream's FunctionSignature::toString form."""
    if sig.endswith("|deprecated") or sig.endswith("|hidden"):
        return None
    inner = sig[sig.index("(") + 1:sig.rindex(")")]
    parts, kw = [], False
    for p in (inner.split(", ") if inner else []):
        if p == "*":
            kw = True
            continue
        t, rest = p.split(" ", 1)
        t = re.sub(r"\[\d+\]", "", t.replace("?", ""))
        name, _, dflt = rest.partition("=")
        s = f"{_TYPE_NAMES[t]} {name}" + (f" = {dflt}" if dflt else "")
        if kw and not any(x.startswith("*") for x in parts):
            s = "*, " + s
            parts.append("*")
        parts.append(s)
    return "(" + ", ".join(x for x in parts if x != "*") + ")"


OVERLOAD_NAMES = ["max", "sum", "add", "sub", "mean", "std", "topk", "where", "clamp", "pow", "zeros", "randint",
                  "arange", "full", "norm", "var_mean", "index_select"]


@pytest.fixture(scope="module")
def upstream_listings():
    """Upstream's TypeError text for each name called with twelve objects (one process)."""
    return run_reference(r"""
import json, torch
out = {}
for name in %r:
    try:
        getattr(torch._C._VariableFunctions, name)(*[object()] * 12)
        out[name] = ""
    except TypeError as e:
        out[name] = str(e)
print(json.dumps(out))
""" % OVERLOAD_NAMES)


@pytest.mark.parametrize("name", OVERLOAD_NAMES)
def test_overload_order_matches_error_listing(name, upstream_listings):
    got = upstream_listings[name]
    theirs = [line[3:] for line in got.splitlines() if line.startswith(" * ")]
    if not theirs:  # a single visible signature: "but expected (...)"
        theirs = [got[got.index("but expected ") + len("but expected "):]] if "but expected (" in got else []
    ours = [o for o in (_to_option(s) for s in _signatures()["TORCH"][name]) if o]
    if len(ours) == 1:
        pytest.skip("single visible signature: upstream reports a positional-count error, no listing")
    assert ours == theirs
