"""torch._C's helpers for torch.optim and torch.nn.utils: _group_tensors_by_device_and_dtype,
upstream's C++ grouping (ATen/native/ForeachUtils.h) over the tensors' public attributes.
The operators the optimizers run (_foreach_*, _fused_*) are C kernels behind the door."""

from torchnative._surface import C, real

_STEP_DTYPES = ("torch.float32", "torch.float64")
_STATE_DTYPES = _STEP_DTYPES + ("torch.bfloat16",)
_BAD_MIX = ("Tensors of the same index must be on the same device and the same dtype except `step` "
            "tensors that can be CPU and float32/64, and optimizer states that can be bfloat16 for "
            "mixed-precision training")


def _check(cond, text):
    if not cond:
        raise RuntimeError(f"Expected {text} to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)")


@real(reason="groups by the first list's (device, dtype) as upstream's "
             "_group_tensors_by_first_tensors_device_and_dtype (groups in first-seen order)")
def _group_tensors_by_device_and_dtype(nested_tensorlist, with_indices=False):
    """{(device, dtype): ([per input list: its tensors of that group], indices)}. A list
    may be empty (it stays empty in every group) and later lists may hold None; tensors of
    the same index must share the first list's device and dtype, except float32/64 `step`
    tensors (which may also be on the CPU) and bfloat16 optimizer states. Upstream's map
    is a hash map, so its group order is unspecified; every caller treats groups alike."""
    lists = [list(tl) for tl in nested_tensorlist]
    _check(len(lists) > 0, "!nested_tensorlist.empty()")
    _check(len(lists[0]) > 0, "!nested_tensorlist[0].empty()")
    n = len(lists[0])
    _check(all(len(tl) in (n, 0) for tl in lists),
           "std::all_of( nested_tensorlist.cbegin(), nested_tensorlist.cend(), [&](const auto& tensorlist) -> "
           "bool { return tensorlist.size() == num_tensors || tensorlist.size() == 0; })")
    groups = {}
    for i in range(n):
        first = lists[0][i]
        if first is None:
            raise RuntimeError("Tensors of the first list of nested Tensor lists are supposed to be defined but "
                               f"the {i}-th Tensor is not.")
        key = (first.device, first.dtype)
        for tl in lists:
            if not tl or tl[i] is None:
                continue
            t = tl[i]
            if t.device == key[0]:
                ok = t.dtype == key[1] or str(t.dtype) in _STATE_DTYPES
            else:
                ok = t.device.type == "cpu" and str(t.dtype) in _STEP_DTYPES
            if not ok:
                raise RuntimeError(_BAD_MIX)
        group = groups.get(key)
        if group is None:
            group = groups[key] = ([[] for _ in lists], [])
        for k, tl in enumerate(lists):
            if tl:
                group[0][k].append(tl[i])
        if with_indices:
            group[1].append(i)
    return {k: (v[0], v[1]) for k, v in groups.items()}
