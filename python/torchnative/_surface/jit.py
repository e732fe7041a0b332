"""TorchScript's part of torch._C: what `import torch` needs of it, and refusals for the rest.

torchnative has no TorchScript compiler or interpreter. Upstream Python still builds
source ranges for every `@torch.jit._overload` at import (SourceRangeFactory with four
arguments, ErrorReport.call_stack()), sets JIT options, and defines classes that subclass
or isinstance-check the C types. Those are provided; compiling, tracing, passes, mobile
and ONNX export refuse by name. (Upstream's own PYTORCH_JIT=0 switch makes
torch.jit.script return plain functions.)
"""

from torchnative._surface import C, add, constants, inert, real, refuse, refusal_message, refusing_type, returning, submodule

TV = "torch._C._jit_tree_views"
_tv = submodule(TV)


class SourceRange:
    """A (start, end) character range in a source text."""

    def __init__(self, source=None, start=0, end=0):
        self._source, self.start, self.end = source, start, end

    def highlight(self):
        return ""

    def __str__(self):
        return ""

    @property
    def source(self):
        return self._source


class SourceRangeFactory:
    """Holds a function's source (text, filename, first line, leading indent) and makes
    ranges into it; what upstream's source-location bookkeeping needs."""

    def __init__(self, source, filename, file_lineno, leading_whitespace_chars):
        self.source = source
        self.filename = filename
        self.file_lineno = file_lineno
        self.leading_whitespace_chars = leading_whitespace_chars
        self._lines = None

    def _offset(self, line, col):
        if self._lines is None:
            offs, acc = [0], 0
            for ln in (self.source or "").split("\n"):
                acc += len(ln) + 1
                offs.append(acc)
            self._lines = offs
        line = max(1, min(line, len(self._lines) - 1))
        return self._lines[line - 1] + col

    def make_range(self, line, start_col, end_col):
        return SourceRange(self, self._offset(line, start_col), self._offset(line, end_col))

    def make_raw_range(self, start, end):
        return SourceRange(self, start, end)


add(TV, "SourceRange", SourceRange, "real", "source location record")
add(TV, "SourceRangeFactory", SourceRangeFactory, "real", "4-argument constructor as upstream")


class TreeView:
    """Base of the TorchScript AST nodes. Nodes can be built (torch.jit.frontend builds
    them) but nothing consumes them: compilation refuses at _jit_script_compile."""

    def __init__(self, *args, **kwargs):
        self._args = args

    def range(self):
        for a in self._args:
            if isinstance(a, SourceRange):
                return a
        return SourceRange()

    def dump(self):
        return repr(self)

    @classmethod
    def create(cls, *args, **kwargs):
        return cls(*args, **kwargs)


add(TV, "TreeView", TreeView, "inert", "AST nodes are built but never compiled")
for _n in ("Apply Assert Assign Attribute AugAssign BinOp Break ClassDef Const Continue Decl Def "
           "Delete DictComp DictLiteral Dots EmptyTypeAnnotation Expr ExprStmt For Ident If "
           "ListComp ListLiteral Param Pass Property Raise Return Select SliceExpr Starred Stmt "
           "StringLiteral Subscript TernaryIf TupleLiteral UnaryOp Var While With WithItem").split():
    add(TV, _n, type(_n, (TreeView,), {}), "inert", "AST nodes are built but never compiled")
for _n in ("TrueLiteral", "FalseLiteral", "NoneLiteral"):
    add(TV, _n, type(_n, (TreeView,), {}), "inert", "AST nodes are built but never compiled")


class ErrorReport(Exception):
    """TorchScript error with a source range; call_stack() is the (empty) script stack."""

    def __init__(self, source_range=None, *args):
        super().__init__(*args)
        self.range = source_range

    def what(self):
        return str(self)

    @staticmethod
    def call_stack():
        return ""


add(C, "ErrorReport", ErrorReport, "real", "no script call stack exists, so it is empty")


@real(reason="TorchScript is not initialised; upstream only checks the result is true")
def _jit_init():
    return True


@real(reason="no TorchScript objects exist")
def _jit_is_script_object(obj):
    return False


@real(reason="no script classes are registered")
def _jit_clear_class_registry():
    return None


class _JITOptions:
    values = {}


def _opt(getter, setter, default):
    _JITOptions.values[getter] = default

    def get(*a):
        return _JITOptions.values[getter]

    def set_(*a):
        old = _JITOptions.values[getter]
        if a:
            _JITOptions.values[getter] = a[0] if len(a) == 1 else a
        return old
    get.__name__ = get.__qualname__ = getter
    if not getter.endswith("_"):      # a trailing "_" marks a setter-only option
        add(C, getter, get, "inert", "TorchScript option stored; no TorchScript executor runs")
    if setter:
        set_.__name__ = set_.__qualname__ = setter
        add(C, setter, set_, "inert", "TorchScript option stored; no TorchScript executor runs")


for _g, _s, _d in (
    ("_jit_get_emit_hooks", "_jit_set_emit_hooks", (None, None)),
    ("_jit_get_inline_everything_mode", "_jit_set_inline_everything_mode", True),
    ("_jit_get_logging_option", "_jit_set_logging_option", ""),
    ("_jit_get_num_profiled_runs", "_jit_set_num_profiled_runs", 1),
    ("_jit_get_tracer_state_warn", "_jit_set_tracer_state_warn", True),
    ("_jit_get_te_cuda_pointwise_block_count", "_jit_set_te_cuda_pointwise_block_count", -1),
    ("_jit_get_te_cuda_pointwise_block_size", "_jit_set_te_cuda_pointwise_block_size", -1),
    ("_jit_get_te_cuda_pointwise_loop_levels", "_jit_set_te_cuda_pointwise_loop_levels", -1),
    ("_jit_get_te_generate_block_code", "_jit_set_te_generate_block_code", False),
    ("_jit_get_te_must_use_llvm_cpu", "_jit_set_te_must_use_llvm_cpu", True),
    ("_jit_texpr_fuser_enabled", "_jit_set_texpr_fuser_enabled", False),
    ("_jit_texpr_reductions_enabled", "_jit_set_texpr_reductions_enabled", False),
    ("_jit_texpr_dynamic_shape_enabled", "_jit_set_texpr_dynamic_shape_enabled", False),
    ("_jit_texpr_fallback_allowed", "_jit_texpr_set_fallback_allowed", False),
    ("_jit_can_fuse_on_cpu", "_jit_override_can_fuse_on_cpu", False),
    ("_jit_can_fuse_on_cpu_legacy", "_jit_override_can_fuse_on_cpu_legacy", False),
    ("_jit_can_fuse_on_gpu", "_jit_override_can_fuse_on_gpu", False),
    ("_jit_llga_enabled", "_jit_set_llga_enabled", False),
    ("_jit_nvfuser_enabled", "_jit_set_nvfuser_enabled", False),
    ("_jit_nvfuser_can_be_enabled", None, False),
    ("_jit_nvfuser_single_node_mode", "_jit_set_nvfuser_single_node_mode", False),
    ("_jit_nvfuser_horizontal_mode", "_jit_set_nvfuser_horizontal_mode", False),
    ("_jit_is_onnx_log_enabled", "_jit_set_onnx_log_enabled", False),
    ("_jit_symbolic_shapes_test_mode_enabled", "_jit_set_symbolic_shapes_test_mode", False),
    ("_jit_get_profiling_executor_", "_jit_set_profiling_executor", True),
    ("_jit_get_profiling_mode_", "_jit_set_profiling_mode", True),
    ("_jit_get_fusion_strategy_", "_jit_set_fusion_strategy", [("STATIC", 2), ("DYNAMIC", 10)]),
    ("_jit_get_bailout_depth_", "_jit_set_bailout_depth", 20),
    ("_get_graph_executor_optimize_", None, True),
    ("_jit_get_autocast_mode_", "_jit_set_autocast_mode", True),
    ("_jit_get_utf8_", "_jit_set_utf8_decoding_ignore", False),
    ("_debug_get_fusion_group_inlining", "_debug_set_fusion_group_inlining", True),
    ("_get_tracing_state", "_set_tracing_state", None),
):
    _opt(_g, _s, _d)


returning(C, "_jit_set_logging_stream _jit_set_onnx_log_output_stream _jit_set_nvfuser_guard_mode "
          "_jit_set_nvfuser_skip_node_kind _jit_nvfuser_set_comparison_callback "
          "_jit_nvfuser_clear_comparison_callback _debug_set_autodiff_subgraph_inlining "
          "_tracer_set_force_outplace _tracer_set_get_unique_name_fn _tracer_warn_use_python "
          "_set_value_trace", None, "TorchScript/tracer option with no effect here")
returning(C, "_is_tracing", False, "the TorchScript tracer never runs", status="real")
returning(C, "_jit_debug_fuser_num_cached_kernel_specs", 0, "no fuser", status="real")

refuse(C, """
_jit_assert_is_instance _jit_cat_wo_conditionals _jit_check_alias_annotation
_jit_debug_module_iterators _jit_decay_packed_param_input_types _jit_decomposition_graph_for_node
_jit_differentiate _jit_erase_non_input_shape_information _jit_flatten _jit_fuser_get_fused_kernel_code
_jit_get_custom_class_schemas _jit_interpret_graph _jit_object_is_non_holding
_jit_onnx_convert_pattern_from_subblock _jit_onnx_create_full_scope_name _jit_onnx_list_model_parameters
_jit_onnx_log _jit_opt_conditionals _jit_register_decomposition_for_schema
_jit_register_shape_compute_graph_for_node _jit_replace_submodule _jit_resolve_packet _jit_run_cpp_tests
_jit_script_class_compile _jit_script_compile _jit_script_compile_overload _jit_script_interface_compile
_jit_shape_compute_graph_for_node _jit_to_backend _jit_to_backend_selective _jit_to_static_module
_jit_trace_graph _jit_trace_module _jit_try_infer_type _jit_unflatten
_create_function_from_graph _create_function_from_trace _create_function_from_trace_with_dict
_create_graph_by_tracing _create_module_with_type _create_object_with_type _freeze_module
_fuse_to_static_module _get_value_trace _import_ir_module_from_package _ivalue_debug_python_object
_ivalue_tags_match _last_executed_optimized_graph _propagate_and_assign_input_shapes _propagate_shapes
_replace_overloaded_method_decl _resolve_type _resolve_type_from_object _run_emit_module_hook
_save_jit_module _save_jit_module_to_bytes _save_mobile_module _save_mobile_module_to_bytes
_save_parameters _load_jit_module_from_bytes _load_jit_module_from_file _load_mobile_module_from_bytes
_load_mobile_module_from_file _load_for_lite_interpreter _load_for_lite_interpreter_from_buffer
_backport_for_mobile _backport_for_mobile_from_buffer _backport_for_mobile_from_buffer_to_buffer
_backport_for_mobile_to_buffer _get_mobile_model_contained_types _get_mobile_model_contained_types_from_buffer
_get_model_bytecode_version _get_model_bytecode_version_from_buffer _get_model_extra_files
_get_model_extra_files_from_buffer _get_model_ops_and_info _get_model_ops_and_info_from_buffer
_get_module_info_from_flatbuffer _export_operator_list _export_opnames _nn_module_to_mobile
_quantize_ondevice_ptq_dynamic _compile_graph_to_code_table _hack_do_not_use_clone_module_with_class
_calculate_package_version_based_on_upgraders _generate_upgraders_graph _parse_source_def
_enable_mobile_interface_call_export _check_onnx_proto
import_ir_module import_ir_module_from_buffer parse_ir parse_type_comment merge_type_from_type_comment
unify_type_list _awaitable _awaitable_nowait _awaitable_wait
fork wait _collect_all _set_default_mobile_cpu_allocator
_unset_default_mobile_cpu_allocator
_test_only_add_entry_to_op_version_map _test_only_populate_upgraders _test_only_remove_entry_to_op_version_map
_test_only_remove_upgraders
""")

returning(C, "_get_caught_jit_exception_class_name _get_caught_jit_exception_original_msg", "",
          "no TorchScript exception was caught", status="real")
returning(C, "_get_max_operator_version", 10, "upstream's operator version", status="real")
returning(C, "_get_operator_version_map _get_upgraders_entry_map", {}, "no upgraders: nothing is loaded from old TorchScript")
returning(C, "_get_upgraders_map_size", 0, "no upgraders", status="real")
returning(C, "_get_upgrader_ranges", [], "no upgraders", status="real")

for _n in ("_jit_pass_" + p for p in """
autocast batch_mm canonicalize canonicalize_graph_fuser_ops complete_shape_analysis concat_frozen_linear
constant_loop_unrolling constant_pooling constant_propagation constant_propagation_immutable_types
convert_frozen_ops_to_mkldnn create_autodiff_subgraphs create_functional_graphs cse custom_pattern_based_rewrite
custom_pattern_based_rewrite_graph dbr_quant_remove_redundant_aliases dce dce_allow_deleting_nodes_with_side_effects
dce_graph decompose_ops dedup_module_uses erase_number_types erase_shape_information filter_non_tensor_arguments
fixup_onnx_controlflow_node fold_convbn fold_frozen_conv_add_or_sub fold_frozen_conv_bn fold_frozen_conv_mul_or_div
fold_frozen_linear_bn fold_prepacking_ops functional_to_inplace_activation fuse fuse_add_relu fuse_addmm
fuse_clamp_w_prepacked_linear_conv fuse_frozen_conv_add_relu fuse_linear fuse_quantized_add_relu fuse_tensorexprs
inline inline_fork_wait inline_functional_graphs inplace_to_functional_activation insert_observer_method_for_ondevice_ptq
insert_observers insert_prepack_unpack insert_prepacked_ops insert_quant_dequant insert_quant_dequant_for_ondevice_ptq
integer_value_refinement lint loop_unrolling lower_all_tuples lower_graph metal_fold_prepacking_ops
metal_fuse_clamp_w_prepacked_conv metal_insert_prepacked_ops metal_optimize_for_mobile onnx onnx_assign_output_shape
onnx_assign_scoped_names_for_node_and_value onnx_autograd_function_process onnx_block onnx_cast_all_constant_to_floating
onnx_clear_scope_records onnx_constant_fold onnx_deduplicate_initializers onnx_eliminate_unused_items onnx_eval_peephole
onnx_function_extraction onnx_function_substitution onnx_graph_shape_type_inference onnx_lint
onnx_node_shape_type_inference onnx_peephole onnx_preprocess onnx_preprocess_caffe2 onnx_quantization_insert_permutes
onnx_remove_inplace_ops_for_onnx onnx_remove_print onnx_scalar_type_analysis onnx_set_dynamic_input_shape
onnx_track_scope_attributes onnx_unpack_quantized_weights optimize_for_inference optimize_for_mobile
optimize_frozen_graph pattern_based_rewrite peephole peephole_list_idioms prepare_division_for_onnx propagate_device
propagate_dtype propagate_shapes_on_graph propagate_shapes_on_graph_and_build_compute quant_finalize
quant_finalize_for_ondevice_ptq quant_fusion refine_integer_values refine_tuple_types remove_dropout remove_expands
remove_inplace_ops remove_mutation replace_old_ops_with_upgraders replicate_dequantize run_decompositions
specialize_autogradzero swap_functional_linear transform_conv1d_to_conv2d transpose_frozen_linear
vulkan_fold_prepacking_ops vulkan_fuse_clamp_w_prepacked_conv vulkan_insert_prepacked_ops vulkan_optimize_for_mobile
""".split()):
    refuse(C, _n)

# TorchScript / IR classes: nameable and isinstance-checkable, never constructed.
refuse(C, """
AliasDb ArgumentSpec Block BufferDict CallStack Capsule Code CompleteArgumentSpec
ConcreteModuleType ConcreteModuleTypeBuilder DeepCopyMemoTable DeserializationStorageContext ExecutionPlan
FileCheck Gradient Graph GraphExecutorState IODescriptor InferredType LiteScriptModule LockingLogger
LoggerBase ModuleDict Node NoopLogger OperatorInfo ParameterDict ScriptClass ScriptClassFunction ScriptDict
ScriptDictIterator ScriptDictKeyIterator ScriptFunction ScriptList ScriptListIterator ScriptMethod ScriptObject
ScriptObjectProperty ScriptModuleSerializer SerializationStorageContext StaticModule ThroughputBenchmark
BenchmarkConfig BenchmarkExecutionStats TracingState Use Value _ShapeComputeGraphMapping _UpgraderEntry
_UpgraderRange
""", kind="type")

_ScriptObject = None


class _AwaitMeta(type):
    """Upstream's _Await is a pybind11 class whose metaclass torch._awaits combines with
    Generic's (`class _PyAwaitMeta(type(torch._C._Await), type(Generic))`); a plain `type`
    metaclass would make that a duplicate base, so it gets a metaclass of its own."""


def _await_init(self, *args, **kwargs):
    raise NotImplementedError(refusal_message(C, "_Await"))


add(C, "_Await", _AwaitMeta("_Await", (), {"__init__": _await_init, "__module__": C}), "refuse",
    "TorchScript awaitables are not implemented")


def _script_module_type():
    import torchnative._surface as s
    base = [e for e in s._ENTRIES if e[0] == C and e[1] == "ScriptObject"][0][2]
    return refusing_type(C, "ScriptModule", (base,))


add(C, "ScriptModule", _script_module_type(), "refuse")

add(C, "JITException", type("JITException", (Exception,), {"__module__": C}), "real", "exception class")

from torchnative._surface import enum_  # noqa: E402
enum_(C, "_MobileOptimizerType", {"CONV_BN_FUSION": 0, "INSERT_FOLD_PREPACK_OPS": 1,
                                     "REMOVE_DROPOUT": 2, "FUSE_ADD_RELU": 3,
                                     "HOIST_CONV_PACKED_PARAMS": 4, "VULKAN_AUTOMATIC_GPU_TRANSFER": 5})

submodule("torch._C._jit")   # empty upstream too


# TorchBind classes: upstream's libtorch registers a few built-in ones (aten::OpaqueObject is
# looked up by torch._library at import). Lookups of these succeed with a stand-in that
# refuses construction; unknown classes fail as upstream does.
_BUILTIN_CUSTOM_CLASSES = {("aten", "OpaqueObject")}


@real(reason="knows the built-in TorchBind class names; their instances refuse")
def _get_custom_class_python_wrapper(ns, name):
    if (ns, name) not in _BUILTIN_CUSTOM_CLASSES:
        raise RuntimeError(f"Tried to instantiate class '{ns}.{name}', but it does not exist! "
                           "Ensure that it is registered via torch::class_")
    return refusing_type(C, f"ScriptClass[{ns}.{name}]")


_OPAQUE_TYPES = set()


@real(reason="records the name; torch._library keeps the Python side of opaque types")
def _register_opaque_type(name):
    _OPAQUE_TYPES.add(name)


@real(reason="forgets a name recorded by _register_opaque_type")
def _unregister_opaque_type(name):
    _OPAQUE_TYPES.discard(name)


@real(reason="answers from the names recorded by _register_opaque_type")
def _is_opaque_type_registered(name):
    return name in _OPAQUE_TYPES


class CompilationUnit:
    """Inert: torch.jit creates one at import (_python_cu). It holds no TorchScript code;
    lookups find nothing and compiling refuses by name."""

    def __init__(self, lang=None, _frames_up=0):
        pass

    def find_function(self, name):
        return None

    def get_functions(self):
        return []

    def get_class(self, name):
        return None

    def get_interface(self, name):
        return None

    def drop_all_functions(self):
        pass

    def define(self, *args, **kwargs):
        raise NotImplementedError(refusal_message(C, "CompilationUnit.define"))

    def create_function(self, *args, **kwargs):
        raise NotImplementedError(refusal_message(C, "CompilationUnit.create_function"))


CompilationUnit.__module__ = C
add(C, "CompilationUnit", CompilationUnit, "inert", "constructed by torch.jit at import; holds nothing, compiles nothing")
