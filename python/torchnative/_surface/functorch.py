"""torch._C._functorch and torch._C._functionalization. vmap and grad (with vjp and jacrev,
which torch.func builds on them) are real: vmap's levels and batched tensors are C
(src/ops/vmap.c; the door batches every operator call that has a batched argument,
docs/DESIGN.md "vmap"), grad's levels are aliases of the inputs over the C autograd (below).
jvp's levels are forward-mode levels of the C forward-mode AD (src/autograd/forward.c), so
jvp, jacfwd and hessian run too (linearize refuses: it traces with make_fx). These
functions are upstream's names over torch._C._tn_vmap_*, _tn_fw_* and friends. functionalize refuses by name: torchnative has no
functionalization pass."""

from torchnative._surface import C, add, enum_, real, refuse, returning, submodule

F = "torch._C._functorch"
FN = "torch._C._functionalization"
submodule(F)
submodule(FN)

enum_(F, "TransformType", {"Torch": 0, "Vmap": 1, "Grad": 2, "Jvp": 3, "Functionalize": 4})
enum_(F, "RandomnessType", {"Error": 0, "Same": 1, "Different": 2})
returning(F, "is_legacy_batchedtensor is_functionaltensor is_gradtrackingtensor is_dead_tensor_wrapper", False,
          "the only functorch wrapper torchnative makes is vmap's batched tensor", status="real")
# functorch's interpreter objects (pyfunctorch.py) route torch.autograd.Function and
# higher-order operators through the transforms; vmap here batches at the door below them
returning(F, "peek_interpreter_stack", None, "no interpreter objects: vmap batches at the door", status="real")
returning(F, "get_interpreter_stack", [], "no interpreter objects: vmap batches at the door", status="real")
returning(F, "get_single_level_autograd_function_allowed", False,
          "no transform is active", status="real")
returning(F, "_is_vmap_fallback_enabled", True, "upstream default")
returning(F, "set_single_level_autograd_function_allowed "
          "_set_vmap_fallback_enabled _set_vmap_fallback_warning_enabled "
          "_set_dynamic_layer_keys_included tls_set_vmap_excluded", None, "flags for transforms that never run")


def _c():
    import torch
    return torch._C


def _info(t):
    return _c()._tn_batch_info(t)


@real(F)
def is_batchedtensor(t):
    return _info(t) is not None


@real(F)
def is_functorch_wrapped_tensor(t):
    return _info(t) is not None


@real(F)
def get_unwrapped(t):
    info = _info(t)
    if info is None:
        raise RuntimeError("get_unwrapped: expected a functorch wrapped tensor")
    return info[0]


@real(F)
def unwrap_if_dead(t):
    return t


@real(F)
def maybe_get_bdim(t):
    info = _info(t)
    return -1 if info is None else info[1]


@real(F)
def maybe_get_level(t):
    info = _info(t)
    return -1 if info is None else info[2]


@real(F)
def _unwrap_batched(t, level):
    info = _info(t)
    if info is None or info[2] != level:
        return t, None
    return info[0], info[1]


@real(F)
def _add_batch_dim(t, batch_dim, level):
    return _c()._tn_add_batch_dim(t, batch_dim, level)


@real(F)
def _remove_batch_dim(t, level, batch_size, out_dim):
    return _c()._tn_remove_batch_dim(t, level, batch_size, out_dim)


@real(F)
def _vmap_increment_nesting(batch_size, randomness):
    return _c()._tn_vmap_increment_nesting(batch_size, randomness)


@real(F)
def _vmap_decrement_nesting():
    return _c()._tn_vmap_decrement_nesting()


_inplace_rg = [False]


@real(F)
def get_inplace_requires_grad_allowed():
    return _inplace_rg[0]


@real(F)
def set_inplace_requires_grad_allowed(allowed):
    _inplace_rg[0] = bool(allowed)


@real(F)
def current_level():
    depth = _c()._tn_vmap_depth()
    if depth == 0:
        raise RuntimeError("current_level: no functorch transform is active")
    return depth


@real(F)
def maybe_current_level():
    depth = _c()._tn_vmap_depth()
    return depth or None


@real(F)
def get_dynamic_layer_stack_depth():
    return _c()._tn_vmap_depth()


# ---- torch.func.grad / vjp / jacrev: a grad level wraps each input in a differentiable
# alias (a fresh leaf when the input does not require grad), the transform's own
# requires_grad_() and torch.autograd.grad run on those, and unwrapping detaches a result
# that depends on nothing but this level's leaves (so a gradient is a plain tensor unless it
# depends on something requiring grad outside the transform, as upstream's). Under vmap the
# aliases are batched and torch.autograd.grad of batched tensors runs one backward pass per
# batch element (autograd.py, _ImperativeEngine). Forward-mode transforms: below.
_grad_leaves = {}  # grad level -> the wrappers it made (their physical values are its leaves)
# wrappers of levels that have exited, while alive: a vector-Jacobian product taken after
# its level exited (vjp's vjp_fn, jacrev) detaches what depends on nothing else
# (autograd.py's _ImperativeEngine reads it)
_dead_leaves = None


def dead_grad_leaves():
    global _dead_leaves
    if _dead_leaves is None:
        import weakref
        _dead_leaves = weakref.WeakValueDictionary()
    return _dead_leaves


@real(F)
def _grad_increment_nesting():
    level = _c()._tn_grad_increment_nesting()
    _grad_leaves[level] = []
    return level


@real(F)
def _grad_decrement_nesting():
    level = _c()._tn_grad_decrement_nesting()
    dead = dead_grad_leaves()
    for w in _grad_leaves.pop(level, ()):
        dead[id(w)] = w
    return level


@real(F)
def _wrap_for_grad(t, level):
    import torch
    C = _c()
    # under vmap, an input some active vmap level does not batch gets one copy per element
    # of that level (batched over them): its gradient is then per element, as upstream's
    # grad of a batched output with respect to an unbatched input, and every backward pass
    # under vmap has batched inputs only (one pass for the whole batch, autograd.py)
    for vlevel in range(1, C._tn_vmap_depth() + 1):
        info = C._tn_batch_info(t)
        if info is not None and info[2] >= vlevel:
            continue
        size = C._tn_vmap_batch_size(vlevel)
        t = C._tn_add_batch_dim(t.unsqueeze(0).expand(size, *t.shape).clone(), 0, vlevel)
    w = torch.ops.aten.alias.default(t)
    _grad_leaves.setdefault(level, []).append(w)
    return w


@real(F)
def _unwrap_for_grad(t, level):
    leaves = _grad_leaves.get(level)
    if leaves is None or _c()._tn_reaches_other_leaf(t, tuple(leaves)):
        return t
    return _detach_keep_tangents(t, tuple(leaves))


def _detach_keep_tangents(t, leaves):
    # a jvp level outside keeps its dual; tangents live on the physical value of a batched
    # tensor, so the value is detached and batched again
    C = _c()
    info = C._tn_batch_info(t)
    if info is None:
        return C._tn_detach_keep_tangents(t, leaves)
    return C._tn_add_batch_dim(_detach_keep_tangents(info[0], leaves), info[1], info[2])


# ---- torch.func.jvp / jacfwd / hessian: a jvp level is a forward-mode level of the C
# forward-mode AD (src/autograd/forward.c) that nests, unlike forward_ad's; forward_ad's
# dual_level inside it names it, so make_dual/unpack_dual at level 0 reach the innermost
# jvp. Its number is kept apart from grad levels' (jacfwd's argnums wrap inputs at it).
_JVP_LEVEL_BASE = 1000


@real(F)
def _jvp_increment_nesting():
    from torchnative._surface.autograd import jvp_decompositions_stand_in
    jvp_decompositions_stand_in()
    return _JVP_LEVEL_BASE + _c()._tn_fw_enter(True)


@real(F)
def _jvp_decrement_nesting():
    level = _JVP_LEVEL_BASE + _c()._tn_fw_depth() - 1
    _c()._tn_fw_exit(-1, True)
    _grad_leaves.pop(level, None)
    return level


refuse(F, """_wrap_functional_tensor _unwrap_functional_tensor _assert_wrapped_functional _propagate_functional_input_mutation
_func_increment_nesting _func_decrement_nesting
_maybe_unsafe_set_level dlevel dump_dls dump_local_tls dump_tensor
pop_dynamic_layer_stack pop_dynamic_layer_stack_and_undo_to_depth
push_dynamic_layer_stack reshape_dim_into reshape_dim_outof""")
refuse(F, "CInterpreter CFunctionalizeInterpreterPtr CGradInterpreterPtr CJvpInterpreterPtr "
          "CVmapInterpreterPtr DynamicLayer", kind="type")
returning(C, "_are_functorch_transforms_active", False, "no transform is active", status="real")
refuse(C, "_vmapmode_increment_nesting _vmapmode_decrement_nesting")
returning(C, "_debug_only_are_vmap_fallback_warnings_enabled", False, "no vmap", status="real")
returning(C, "_debug_only_display_vmap_fallback_warnings", None, "no vmap")
returning(C, "_functionalization_reapply_views_tls", False, "no functionalization", status="real")

enum_(FN, "InverseReturnMode", {"AlwaysView": 0, "NeverView": 1, "ViewOrScatterInverse": 2})
refuse(FN, "apply_view_meta_sequence get_view_meta_sequence")
refuse(FN, "ViewMeta", kind="type")
for _n in """_conj _fw_primal _indices _make_dual _neg_view _nested_get_values _nested_view_from_buffer
_nested_view_from_jagged _reshape_alias _sparse_broadcast_to _test_autograd_multiple_dispatch_view
_unsafe_view _values alias as_strided as_strided_ ccol_indices col_indices crow_indices detach detach_
diagonal expand indices lift_fresh permute resize_ row_indices select_int slice_Tensor slice_inverse
split_Tensor split_with_sizes squeeze squeeze_ squeeze__dim squeeze__dims squeeze_dim squeeze_dims t t_
transpose_ transpose_int unbind_int unfold unsqueeze unsqueeze_ values view view_as_complex view_as_real
view_dtype""".split():
    refuse(FN, _n + "_ViewMeta", kind="type")
