"""The Tensor object and its companions behave as upstream's: repr/str, item, tolist,
numpy interop (zero-copy both ways), nn.Parameter, grad-mode switches, default dtype,
meta tensors. Each probe runs under both torches and the printed results must agree."""
import json
import subprocess
import sys

import pytest

from conftest import REF_PYTHON, run_upstream

PROBES = {
    "repr_float": "repr(torch.tensor([[1.5, -2.25], [3.0, 4.125]]))",
    "repr_int": "repr(torch.tensor([1, 2, 3]))",
    "repr_bool": "repr(torch.tensor([True, False]))",
    "repr_0dim": "repr(torch.tensor(3.5))",
    "repr_empty": "repr(torch.tensor([]))",
    "repr_bf16": "repr(torch.tensor([1.0, 2.5, 3.0]).to(torch.bfloat16))",
    "repr_f64": "repr(torch.tensor([1e-8, 1e8], dtype=torch.float64))",
    "repr_sci": "repr(torch.tensor([1e-5, 1.0, 1e5]))",
    "repr_long_summarised": "repr(torch.arange(2000).reshape(40, 50).float())",
    "repr_meta": "repr(torch.empty(3, 4, device='meta'))",
    "repr_requires_grad": "repr(torch.ones(2, requires_grad=True))",
    "repr_param": "repr(torch.nn.Parameter(torch.ones(2, 2)))",
    "str_float": "str(torch.tensor([0.1, 0.2]))",
    "item_float": "torch.tensor([2.5]).item()",
    "item_int": "torch.tensor(7).item()",
    "item_bool": "torch.tensor(True).item()",
    "tolist_nested": "torch.tensor([[1, 2], [3, 4]]).tolist()",
    "tolist_float": "torch.tensor([0.5, 1.5]).tolist()",
    "shape_repr": "repr(torch.ones(2, 3).shape)",
    "size_slice": "repr(torch.ones(2, 3, 4).shape[1:])",
    "numpy_zero_copy": "(lambda t: (t.numpy().__setitem__(0, 9.0), t.tolist())[1])(torch.zeros(3))",
    "from_numpy_zero_copy": "(lambda a: (torch.from_numpy(a).fill_(4.0), a.tolist())[1])(__import__('numpy').zeros(3, dtype='float32'))",
    "numpy_dtype": "str(torch.ones(2, dtype=torch.int16).numpy().dtype)",
    "array_protocol": "__import__('numpy').asarray(torch.arange(3)).tolist()",
    "param_requires_grad": "(lambda p: (p.requires_grad, type(p).__name__, p.is_leaf))(torch.nn.Parameter(torch.zeros(2)))",
    "no_grad": "(lambda cm: (torch.is_grad_enabled(), cm.__enter__(), torch.is_grad_enabled(), cm.__exit__(None, None, None), torch.is_grad_enabled()))(torch.no_grad())",
    "set_grad_enabled": "(lambda: (torch.set_grad_enabled(False), torch.is_grad_enabled(), torch.set_grad_enabled(True), torch.is_grad_enabled())[1::2])()",
    "inference_mode": "(lambda cm: (torch.is_inference_mode_enabled(), cm.__enter__(), torch.is_inference_mode_enabled(), torch.is_grad_enabled(), cm.__exit__(None, None, None), torch.is_inference_mode_enabled(), torch.is_grad_enabled()))(torch.inference_mode())",
    "default_dtype": "(lambda: (torch.set_default_dtype(torch.float64), str(torch.tensor([1.0]).dtype), str(torch.zeros(2).dtype), torch.set_default_dtype(torch.float32), str(torch.get_default_dtype()))[1:])()",
    "meta_factory": "(lambda: [str(t.device) + str(tuple(t.shape)) for t in [torch.zeros(2, 3, device='meta')]])()",
    "meta_context": "(lambda cm: (str(cm.__enter__()), str(torch.ones(4).device), str(torch.tensor([1.0]).device), cm.__exit__(None, None, None), str(torch.ones(4).device)))(torch.device('meta'))",
    "meta_tolist_error": "torch.empty(2, device='meta').tolist()",
    "meta_item_error": "torch.empty(1, device='meta').item()",
    "meta_numpy_error": "torch.empty(1, device='meta').numpy()",
    "meta_shape_ops": "(lambda t: (tuple(t.view(6, 4).shape), tuple(t.transpose(0, 1).shape), str(t.sum(0).device)))(torch.empty(2, 3, 4, device='meta'))",
    "version_counter": "(lambda t: (t._version, t.add_(1)._version, t.mul_(2)._version))(torch.zeros(2))",
    "inplace_identity": "(lambda t: t.add_(1) is t)(torch.zeros(2))",
    "view_shares_storage": "(lambda t: (t.view(4)[0].fill_(5.0), t.tolist())[1])(torch.zeros(2, 2))",
    "requires_grad_int_error": "(lambda: torch.ones(2, dtype=torch.int64).requires_grad_())()",
    "item_many_error": "torch.ones(2).item()",
    "bool_ambiguous_error": "bool(torch.ones(2))",
    "index_error": "torch.ones(3)[5]",
    # a numpy integer array is an advanced index (a sequence), a numpy integer scalar an int
    "index_numpy_array": "repr(torch.arange(10)[__import__('numpy').array([1, 3, 3])])",
    "index_numpy_array_2d": "repr(torch.arange(12).reshape(3, 4)[__import__('numpy').array([2, 0]), 1:3])",
    "index_numpy_scalar": "repr(torch.arange(10)[__import__('numpy').int64(4)])",
    "setitem_numpy_array": "(lambda t: (t.__setitem__(__import__('numpy').array([0, 2]), 7), t.tolist())[1])(torch.zeros(4))",
    "len_0d_error": "len(torch.tensor(1.0))",
    # transformers' StaticCache builds torch.tensor(0, dtype=int)
    "factory_python_type_dtypes": "[str(f().dtype) for f in (lambda: torch.tensor(0, dtype=int), lambda: torch.tensor(1, dtype=float), lambda: torch.tensor(1, dtype=bool), lambda: torch.tensor(1, dtype=complex), lambda: torch.asarray([1], dtype=float), lambda: torch.frombuffer(bytearray(8), dtype=int))]",
    "factory_bad_dtype_error": "torch.tensor(0, dtype=str)",
    # Tensor[] results are tuples from the generated bindings (x[torch.where(c)] indexes
    # element-wise with a tuple; a list would be one advanced index) and lists from torch.ops
    "tensorlist_results_are_tuples": "[type(r).__name__ for r in (torch.where(torch.tensor([True, False])), torch.split(torch.arange(4), 2), torch.arange(4).chunk(2), torch.unbind(torch.ones(2, 2)), torch.ones(2, 2).unbind(1), torch.tensor([1, 0]).nonzero(as_tuple=True))]",
    "where_as_index": "(lambda x: x[torch.where(x > 1)].tolist())(torch.tensor([[0, 2], [3, 1]]))",
    "torch_ops_tensorlist_is_list": "type(torch.ops.aten.split.Tensor(torch.arange(4), 2)).__name__",
}

RUNNER = r"""
import json, sys, torch
probes = json.loads(sys.stdin.read())
out = {}
for k, expr in probes.items():
    try:
        v = eval(expr)
        out[k] = ["ok", repr(v)]
    except Exception as e:
        out[k] = ["err", type(e).__name__]
print(json.dumps(out))
"""


def _run(python):
    if python == REF_PYTHON:
        rc, so, se = run_upstream(["-c", RUNNER], input=json.dumps(PROBES), timeout=600)
    else:
        r = subprocess.run([python, "-c", RUNNER], input=json.dumps(PROBES), capture_output=True, text=True,
                           timeout=600)
        rc, so, se = r.returncode, r.stdout, r.stderr
    assert rc == 0, se[-3000:]
    return json.loads(so.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def both():
    return _run(REF_PYTHON), _run(sys.executable)


@pytest.mark.parametrize("name", sorted(PROBES))
def test_tensor_object_matches_upstream(name, both):
    ref, ours = both
    assert ours[name] == ref[name], f"{PROBES[name]}\n  ours     {ours[name]}\n  upstream {ref[name]}"
