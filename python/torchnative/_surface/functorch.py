"""torch._C._functorch and torch._C._functionalization: functorch transforms (vmap, grad,
functionalize) need the C dispatcher's per-key machinery, which torchnative does not have.
Queries answer truthfully (no transform is active, nothing is wrapped); entering a
transform refuses by name."""

from torchnative._surface import C, add, enum_, real, refuse, returning, submodule

F = "torch._C._functorch"
FN = "torch._C._functionalization"
submodule(F)
submodule(FN)

enum_(F, "TransformType", {"Torch": 0, "Vmap": 1, "Grad": 2, "Jvp": 3, "Functionalize": 4})
enum_(F, "RandomnessType", {"Error": 0, "Same": 1, "Different": 2})
returning(F, "is_batchedtensor is_legacy_batchedtensor is_functionaltensor is_gradtrackingtensor "
          "is_functorch_wrapped_tensor is_dead_tensor_wrapper", False,
          "no functorch wrappers exist", status="real")
returning(F, "maybe_current_level peek_interpreter_stack", None, "no transform is active", status="real")
returning(F, "get_dynamic_layer_stack_depth", 0, "no transform is active", status="real")
returning(F, "get_interpreter_stack", [], "no transform is active", status="real")
returning(F, "get_inplace_requires_grad_allowed get_single_level_autograd_function_allowed", False,
          "no transform is active", status="real")
returning(F, "_is_vmap_fallback_enabled", True, "upstream default")
returning(F, "set_inplace_requires_grad_allowed set_single_level_autograd_function_allowed "
          "_set_vmap_fallback_enabled _set_vmap_fallback_warning_enabled "
          "_set_dynamic_layer_keys_included tls_set_vmap_excluded", None, "flags for transforms that never run")


@real(F)
def get_unwrapped(t):
    return t


@real(F)
def unwrap_if_dead(t):
    return t


refuse(F, """_add_batch_dim _remove_batch_dim _unwrap_batched _wrap_for_grad _unwrap_for_grad
_wrap_functional_tensor _unwrap_functional_tensor _assert_wrapped_functional _propagate_functional_input_mutation
_vmap_increment_nesting _vmap_decrement_nesting _grad_increment_nesting _grad_decrement_nesting
_jvp_increment_nesting _jvp_decrement_nesting _func_increment_nesting _func_decrement_nesting
_maybe_unsafe_set_level current_level dlevel dump_dls dump_local_tls dump_tensor maybe_get_bdim
maybe_get_level pop_dynamic_layer_stack pop_dynamic_layer_stack_and_undo_to_depth
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
