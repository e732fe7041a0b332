"""The rest of torch._C that is not tensor/operator behaviour: docstrings and names,
multiprocessing hooks, warnings, device-runtime modules for devices torchnative does not
have (MPS, MTIA, XPU, accelerator API: they report "not available"), the torch-dispatch
mode stack, error classes, and submodules for features that are absent (AOTI, lazy, TE,
ONNX, nativert): those refuse by name.

Absent by design (never defined, so upstream takes its "not built with" branches):
_cuda_* functions, ProcessGroupGloo/NCCL/UCC/MPI, _rpc_init, _dist_autograd_init,
_faulty_agent_init, torch._C._distributed_rpc. See ABSENT below.
"""

import sys
import threading
import warnings

from torchnative._surface import (C, add, constants, enum_, inert, real, refuse, refusing_type,
                                  returning, submodule)

ABSENT = ("_rpc_init", "_dist_autograd_init", "_faulty_agent_init", "_distributed_rpc",
          "_cuda_getDeviceCount", "_cuda_init", "_cuda_isDriverSufficient", "ProcessGroupGloo",
          "ProcessGroupNCCL", "ProcessGroupUCC", "ProcessGroupMPI", "_xpu_getDeviceCount",
          "_mps_is_available_")

# ---- docstrings / names ------------------------------------------------------------------


@real(reason="sets __doc__; raises if one exists, as upstream")
def _add_docstr(obj, doc):
    if not isinstance(doc, str):
        raise TypeError("_add_docstr(): docstring must be a str")
    existing = getattr(obj, "__doc__", None)
    if existing:
        raise RuntimeError(f"function '{getattr(obj, '__name__', obj)}' already has a docstring")
    try:
        obj.__doc__ = doc
    except (AttributeError, TypeError):
        # C-level descriptors of the limited API may not take a __doc__; keep a side table.
        _DOCS[id(obj)] = doc
    return obj


_DOCS = {}


@real(reason="upstream sets the tp_name of the legacy tensor-type objects; torchnative's have theirs")
def _init_names(names):
    return None


@real(reason="puts _prctl_pr_set_pdeathsig into torch.multiprocessing, as upstream")
def _multiprocessing_init():
    mp = sys.modules.get("torch.multiprocessing")

    def _prctl_pr_set_pdeathsig(sig):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        except (OSError, AttributeError):
            pass
    if mp is not None:
        mp._prctl_pr_set_pdeathsig = _prctl_pr_set_pdeathsig
    return True


_pids = {}


@real()
def _set_worker_pids(key, pids):
    _pids[key] = tuple(pids)


@real()
def _remove_worker_pids(key):
    _pids.pop(key, None)


@real(reason="worker liveness is checked by DataLoader's Python side; nothing extra to check")
def _error_if_any_worker_fails():
    return None


@inert(reason="no SIGCHLD/SIGBUS handlers are installed; DataLoader works without them")
def _set_worker_signal_handlers(*args):
    return None


@real(reason="the Generator type's metaclass is replaced, as upstream (see rng_prims)")
def _set_generator_metaclass(metaclass):
    c = sys.modules.get("torch._C")
    gen = getattr(c, "Generator", None)
    if gen is None:
        raise RuntimeError("torch._C.Generator does not exist yet")
    if type(gen) is metaclass:
        return None
    try:
        gen.__class__ = metaclass
    except TypeError as e:
        raise NotImplementedError(
            f"torch._C._set_generator_metaclass is not implemented by torchnative for this Generator type ({e})")
    return None


# ---- warnings ---------------------------------------------------------------------------------


@real()
def _warn(message, stacklevel=2):
    warnings.warn(message, UserWarning, stacklevel=stacklevel)


@real()
def _warn_deprecation(message, stacklevel=2):
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel)


returning(C, "_set_warn_deprecated_on_mutable_data_ptr _set_throw_on_mutable_data_ptr "
          "_set_warn_on_accumulate_grad_stream_mismatch _set_print_stack_traces_on_fatal_signal "
          "_initCrashHandler _logging_set_logger _set_should_use_format_with_string_table "
          "_activate_gpu_trace _set_override_stale_capture_stream _reinit_DTensor_dispatch_logger "
          "_clear_DTensor_sharding_propagator_cache", None,
          "diagnostic switches for C++ machinery torchnative does not have")
returning(C, "_warn_on_accumulate_grad_stream_mismatch _override_stale_capture_stream", False,
          "no CUDA streams", status="real")
returning(C, "_get_DTensor_sharding_propagator_cache_stats", (0, 0), "no C++ DTensor cache", status="real")


@real()
def _show_config():
    return ("PyTorch built with:\n  - torchnative (C11 core, CPython limited API)\n"
            "  - CPU capability usage: DEFAULT\n")


@real()
def _cxx_flags():
    return ""


@real()
def _parallel_info():
    c = sys.modules.get("torch._C")
    n = c.get_num_threads() if c is not None else 1
    return f"ATen/Parallel:\n\tat::get_num_threads() : {n}\nATen parallel backend: torchnative\n"


@real()
def _demangle(name):
    return name


returning(C, "_get_cpp_backtrace", "", "no C++ frames to show", status="real")
returning(C, "_llvm_enabled _valgrind_supported_platform _mps_is_available _mps_is_in_bad_fork "
          "_mtia_isBuilt _mtia_isInBadFork",
          False, "feature absent in torchnative", status="real")
returning(C, "_mtia_getDeviceCount", 0, "no MTIA devices", status="real")
returning(C, "_accelerator_hooks_device_count", 0, "no accelerator", status="real")
returning(C, "_accelerator_getAccelerator", None, "no accelerator", status="real")
returning(C, "_supported_qengines", [0], "no quantized engines beyond 'none'", status="real")


# upstream's should_allow_numbers_as_tensors list (python_arg_parser.cpp): the operators whose
# Tensor arguments bind Python and numpy numbers
_NUMBERS_AS_TENSORS = frozenset(
    f"{base}{sfx}" for base in ("add", "div", "divide", "mul", "multiply", "sub", "subtract", "true_divide",
                                "floor_divide") for sfx in ("", "_", "_out")) | {"to", "_to_copy", "copy_", "copy", "_conj"}


@real()
def _should_allow_numbers_as_tensors(name):
    return name in _NUMBERS_AS_TENSORS


@real(reason="the privateuse1 backend is not used by torchnative; renaming is recorded")
def _get_privateuse1_backend_name():
    return _pu1["name"]


_pu1 = {"name": "privateuseone"}


@real()
def _rename_privateuse1_backend(name):
    _pu1["name"] = name


@real(reason="the current default device (cpu unless a device context says otherwise)")
def _get_default_device():
    return "cpu"


@real(reason="torchnative runs on the CPU only")
def _get_accelerator(check=False):
    torch = sys.modules.get("torch")
    return torch.device("cpu") if torch is not None else "cpu"


@real()
def _get_all_dtypes():
    torch = sys.modules["torch"]
    names = ("uint8 int8 int16 int32 int64 float16 float32 float64 complex32 complex64 complex128 "
             "bool bfloat16 bits1x8 bits2x4 bits4x2 bits8 bits16 float8_e5m2 float8_e4m3fn "
             "float8_e5m2fnuz float8_e4m3fnuz uint16 uint32 uint64 float8_e8m0fnu float4_e2m1fn_x2").split()
    return [getattr(torch, n) for n in names if hasattr(torch, n)]


# ---- TLS object stash (used by torch._library / custom ops) --------------------------------
_stash = threading.local()


def _stash_dict():
    if not hasattr(_stash, "d"):
        _stash.d = {}
    return _stash.d


@real()
def _stash_obj_in_tls(key, obj):
    _stash_dict()[key] = obj


@real()
def _get_obj_in_tls(key):
    return _stash_dict()[key]


@real()
def _remove_obj_from_tls(key):
    _stash_dict().pop(key, None)


add(C, "_is_key_in_tls", lambda key: key in _stash_dict(), "real")

# ---- torch dispatch mode stack ------------------------------------------------------------
_TorchDispatchModeKey = enum_(C, "_TorchDispatchModeKey", {"FAKE": 0, "PROXY": 1, "FUNCTIONAL": 2})
_DISPATCH_REASON = "no mode is ever active: pushing one refuses, since the C door would ignore it"


@real(reason=_DISPATCH_REASON)
def _len_torch_dispatch_stack():
    return 0


@real(reason=_DISPATCH_REASON)
def _get_dispatch_stack_at(i):
    raise IndexError("torch dispatch mode stack is empty")


@real(reason=_DISPATCH_REASON)
def _get_dispatch_mode(key):
    return None


@real(reason=_DISPATCH_REASON)
def _unset_dispatch_mode(key):
    return None


refuse(C, "_push_on_torch_dispatch_stack _pop_torch_dispatch_stack _set_dispatch_mode",
       reason=_DISPATCH_REASON)


@real(reason="default __torch_dispatch__ of torch.Tensor: marker for 'no override'")
def _disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
    raise NotImplementedError("torch._C._disabled_torch_dispatch_impl is not implemented by torchnative")


def _noop_guard(name, reason):
    cls = type(name, (), {"__init__": lambda self, *a, **k: None,
                          "__enter__": lambda self: self,
                          "__exit__": lambda self, *e: False, "__module__": C})
    add(C, name, cls, "inert", reason)


_noop_guard("_DisableTorchDispatch", "no dispatch mode or subclass dispatch is ever active")
_noop_guard("_DisablePythonDispatcher", "the Python dispatcher is never enabled")
_noop_guard("_RestorePythonTLSSnapshot", "no Python TLS snapshot is taken")
refuse(C, "_EnablePythonDispatcher", kind="type")
returning(C, "_meta_in_tls_dispatch_include", False, "no TLS include of Meta", status="real")
refuse(C, "_set_meta_in_tls_dispatch_include")
_only_lift = {"v": False}
add(C, "_only_lift_cpu_tensors", lambda: _only_lift["v"], "inert", "stored flag")
add(C, "_set_only_lift_cpu_tensors", lambda v: _only_lift.__setitem__("v", bool(v)), "inert", "stored flag")

# ---- errors / misc classes ------------------------------------------------------------------
for _n, _b in (("AcceleratorError", RuntimeError), ("OutOfMemoryError", RuntimeError),
               ("_LinAlgError", RuntimeError), ("FatalError", Exception)):
    add(C, _n, type(_n, (_b,), {"__module__": C}), "real", "exception class")

AggregationType = enum_(C, "AggregationType", {"SUM": 0, "AVG": 1})
add(C, "SUM", AggregationType.SUM, "real", "enum member exported at module level")
add(C, "AVG", AggregationType.AVG, "real", "enum member exported at module level")
enum_(C, "_ScalingType", {"TensorWise": 0, "RowWise": 1, "BlockWise1x16": 2, "BlockWise1x32": 3,
                          "BlockWise1x128": 4, "BlockWise128x128": 5})
enum_(C, "_SwizzleType", {"NO_SWIZZLE": 0, "SWIZZLE_32_4_4": 1})
enum_(C, "_BatchNormBackend", {"Native": 0, "Cudnn": 1, "Miopen": 2})
enum_(C, "_SchemaArgType", {"input": 0, "output": 1})
enum_(C, "_ConvBackend", {"CudaDepthwise2d": 0, "CudaDepthwise3d": 1, "Cudnn": 2, "CudnnTranspose": 3,
                          "Empty": 4, "Miopen": 5, "MiopenDepthwise": 6, "MiopenTranspose": 7,
                          "Mkldnn": 8, "MkldnnEmpty": 10, "NnpackSpatial": 11, "Overrideable": 12,
                          "Slow2d": 13, "Slow3d": 14, "SlowDilated2d": 15, "SlowDilated3d": 16,
                          "SlowTranspose2d": 17, "SlowTranspose3d": 18, "Winograd3x3Depthwise": 19,
                          "Xnnpack2d": 20, "Mps": 21, "MpsTranspose,": 22})


class _WeakTensorRef:
    """Weak reference to a tensor; expired() once it is gone."""

    def __init__(self, t):
        import weakref
        self._ref = weakref.ref(t)

    def expired(self):
        return self._ref() is None


add(C, "_WeakTensorRef", _WeakTensorRef, "real", "weakref")

# Device runtime types present in the CPU wheel; never constructed here (torch._C.Future is
# real: _surface/distributed.py, for Work.get_future).
refuse(C, """_CUDAGraph _CudaEventBase _CudaStreamBase _MTIAGraph _MemPool _XPUGraph
_XPUMemPool _XpuEventBase _XpuStreamBase _acceleratorGraph _graph_pool_handle _cuda_CUDAAllocator
_cuda_beginAllocateCurrentThreadToPool _cuda_beginAllocateToPool _cuda_endAllocateToPool
_cuda_isCurrentStreamCapturing _cuda_releasePool _xpu_XPUAllocator _xpu_beginAllocateCurrentThreadToPool
_xpu_endAllocateToPool _xpu_graph_pool_handle _xpu_isCurrentStreamCapturing _xpu_releasePool
PyTorchFileReader_ PyTorchFileWriter_ _SDPAParams _SafeKernelFunction _SchemaArgument _SchemaInfo _SymNode
_TensorIterator _TensorIteratorSpec""".replace("PyTorchFileReader_ PyTorchFileWriter_ ", ""), kind="type")
# PyTorchFileReader/Writer: torch.save / torch.load's zip container (byte-compatible with
# upstream's writer, see torchnative._serialization).
from torchnative import _serialization  # noqa: E402

add(C, "PyTorchFileReader", _serialization.PyTorchFileReader, "real", "zip records, pure Python")
add(C, "PyTorchFileWriter", _serialization.PyTorchFileWriter, "real", "zip records, pure Python")

refuse(C, """_abort _accelerator_emptyCache _accelerator_emptyHostCache _accelerator_exchangeDevice
_accelerator_getAllocatorSettings _accelerator_getDeviceCapability _accelerator_getDeviceIndex
_accelerator_getDeviceStats _accelerator_getMemoryInfo _accelerator_getStream
_accelerator_hooks_exchange_device _accelerator_hooks_get_current_device _accelerator_hooks_maybe_exchange_device
_accelerator_hooks_set_current_device _accelerator_isAllocatorInitialized _accelerator_maybeExchangeDevice
_accelerator_resetAccumulatedStats _accelerator_resetPeakStats _accelerator_setAllocatorSettings
_accelerator_setDeviceIndex _accelerator_setStream _accelerator_synchronizeDevice
_mps_acquireEvent _mps_currentAllocatedMemory _mps_deviceSynchronize _mps_driverAllocatedMemory
_mps_elapsedTimeOfEvents _mps_emptyCache _mps_get_default_generator _mps_is_on_macos_or_newer
_mps_maxBufferLength _mps_profilerStartTrace _mps_profilerStopTrace _mps_queryEvent _mps_recommendedMaxMemory
_mps_recordEvent _mps_releaseEvent _mps_setMemoryFraction _mps_synchronizeEvent _mps_waitForEvent
_mtia_attachOutOfMemoryObserver _mtia_deviceSynchronize _mtia_emptyCache _mtia_exchangeDevice
_mtia_getCurrentRawStream _mtia_getCurrentStream _mtia_getDefaultStream _mtia_getDevice
_mtia_getDeviceCapability _mtia_getDeviceProperties _mtia_graphPoolHandle _mtia_init _mtia_maybeExchangeDevice
_mtia_memorySnapshot _mtia_memoryStats _mtia_recordMemoryHistory _mtia_resetPeakMemoryStats
_mtia_setCurrentStream _mtia_setDevice _mtia_setStream _ensureCUDADeviceGuardSet
_crash_if_aten_asan _crash_if_csrc_asan _crash_if_csrc_ubsan _crash_if_debug_asserts_fail _crash_if_vptr_ubsan
_valgrind_toggle _valgrind_toggle_and_dump_stats _gds_deregister_buffer _gds_deregister_handle
_gds_load_storage _gds_register_buffer _gds_register_handle _gds_save_storage
_DTensor_OpSchema_post_init _DTensor_OpSchema_recompute_comparison_key _DTensor_compute_global_tensor_info
_add_cached_tensor _remove_cached_tensor _is_cached_tensor _set_cached_tensors_enabled
_commit_update _construct_storage_from_data_pointer _conv_determine_backend_memory_format
_data_address _dump_upgraders_map _from_dlpack _to_dlpack _to_dlpack_versioned
_torchDeviceToDLDevice _fx_map_aggregate _fx_map_arg _get_constant_bool_symnode _get_cudnn_batch_norm_reserve_space_size
_get_file_format _get_nested_int
_infer_size _is_alias_of _is_cow_tensor _new_symbolic_shape_symbol _non_sym_sizes _overlaps
_pickle_load_obj _pickle_save _propagate_xla_data _register_py_class_for_device _replace_
_select_batch_norm_backend _select_conv_backend _set_conj _set_neg _storage_Use_Count _storage_address
_storage_id _swap_tensor_impl _tensor_impl_raw_handle _wrap_tensor_impl""")



_sparse_invariants = [False]


@real(reason="global flag (default off) read by torch.load and torch.sparse")
def _check_sparse_tensor_invariants():
    return _sparse_invariants[0]


@real(reason="global flag (default off) read by torch.load and torch.sparse")
def _set_check_sparse_tensor_invariants(enabled):
    _sparse_invariants[0] = bool(enabled)


@real(reason="the conj/neg bits torch.save records; only non-default bits are listed, as upstream")
def _get_tensor_metadata(tensor):
    meta = {}
    if tensor.is_conj():
        meta["conj"] = True
    if tensor.is_neg():
        meta["neg"] = True
    return meta


@real(reason="custom ops' aliasing check (torch._library.utils._c_check_aliasing_constraint): does an "
           "output share a storage with an input or an earlier output; tensors at the top level and in "
           "lists at any depth (not in tuples), as upstream")
def _any_output_is_alias_to_input_or_output(args, kwargs, outputs):
    import torch

    def tensors(values):
        for v in values:
            if isinstance(v, torch.Tensor):
                yield v
            elif isinstance(v, list):
                yield from tensors(v)

    seen = {t.untyped_storage()._cdata for t in tensors(tuple(args) + tuple(kwargs.values()))}
    for t in tensors(outputs):
        key = t.untyped_storage()._cdata
        if key in seen:
            return True
        seen.add(key)
    return False


@real(reason="restores the bits _get_tensor_metadata recorded (torch.load)")
def _set_tensor_metadata(tensor, metadata):
    import torch
    for key in metadata:
        if key not in ("conj", "neg"):
            raise RuntimeError(f"Unexpected key `{key}` passed to setTensorMetadata.")
    conj = bool(metadata.get("conj", tensor.is_conj()))
    neg = bool(metadata.get("neg", tensor.is_neg()))
    torch._C._tn_set_mathbits(tensor, conj, neg)


@real(reason="every torchnative tensor is dense and strided, so it has a storage")
def _has_storage(tensor):
    import torch
    return tensor.layout == torch.strided


returning(C, "_dlpack_exchange_api", None,
          "no C-level DLPack exchange capsule; consumers fall back to Tensor.__dlpack__")

# ---- submodules for absent features -------------------------------------------------------------
for _sm in ("_acc", "_aoti", "_cpu", "_export", "_lazy", "_lazy_ts_backend", "_nativert", "_onnx",
            "_te", "_verbose", "cpp"):
    submodule("torch._C." + _sm)
submodule("torch._C._export.pt2_archive_constants")
submodule("torch._C.cpp.nn")
refuse("torch._C._acc", "create_empty_tensor register_python_privateuseone_device_guard register_python_privateuseone_hook")
refuse("torch._C._acc", "DeviceGuard PrivateUse1Hooks", kind="type")
refuse("torch._C._aoti", "alloc_tensor_by_stealing_from_void_ptr alloc_tensors_by_stealing_from_void_ptrs "
       "unsafe_alloc_void_ptr_from_tensor unsafe_alloc_void_ptrs_from_tensors")
refuse("torch._C._aoti", "AOTIModelContainerRunnerCpu AOTIModelPackageLoader", kind="type")
returning("torch._C._cpu", "_init_amx", False, "no AMX kernels", status="real")
add("torch._C._cpu", "_get_cpu_capability", lambda: {}, "real", "no CPU capability probing beyond DEFAULT")
refuse("torch._C._export", "deregister_example_upgraders deserialize_exported_program "
       "register_example_upgraders serialize_exported_program upgrade")
refuse("torch._C._export", "CppExportedProgram", kind="type")
constants("torch._C._export.pt2_archive_constants", {
    "AOTINDUCTOR_DIR": "data/aotinductor/", "ARCHIVE_FORMAT_PATH": "archive_format",
    "ARCHIVE_FORMAT_VALUE": "pt2", "ARCHIVE_ROOT_NAME": "package", "ARCHIVE_VERSION_PATH": "archive_version",
    "ARCHIVE_VERSION_VALUE": "0", "CONSTANTS_CONFIG_FILENAME_FORMAT": "data/constants/{}_constants_config.json",
    "CONSTANTS_DIR": "data/constants/", "CONSTANTS_PARAM_CONFIG_FORMAT": "data/constants/{}_model_constants_config.json",
    "CUSTOM_OBJ_FILENAME_PREFIX": "custom_obj_", "EXECUTORCH_DIR": "data/executorch/", "EXTRA_DIR": "extra/",
    "MODELS_DIR": "models/", "MODELS_FILENAME_FORMAT": "models/{}.json", "MODULE_INFO_PATH": "extra/module_info.json",
    "MTIA_DIR": "data/mtia", "OPAQUE_OBJ_FILENAME_PREFIX": "opaque_obj_", "SAMPLE_INPUTS_DIR": "data/sample_inputs/",
    "SAMPLE_INPUTS_FILENAME_FORMAT": "data/sample_inputs/{}.pt", "TENSOR_CONSTANT_FILENAME_PREFIX": "tensor_",
    "TS_SAMPLE_INPUTS_FILENAME_FORMAT": "extra/{}.forward.sample_input.pt",
    "WEIGHTS_CONFIG_FILENAME_FORMAT": "data/weights/{}_weights_config.json", "WEIGHTS_DIR": "data/weights/",
    "WEIGHTS_PARAM_CONFIG_FORMAT": "data/weights/{}_model_param_config.json", "WEIGHT_FILENAME_PREFIX": "weight_",
    "XL_MODEL_WEIGHTS_DIR": "xl_model_weights/", "XL_MODEL_WEIGHTS_PARAM_CONFIG_PATH": "xl_model_weights/model_param_config",
}, "upstream's archive layout constants (pure data)", status="real")
refuse("torch._C._lazy", """_clear_ir_cache _counter_names _counter_value _dump_ir_cache _get_default_device_type
_get_force_fallback _get_graph_hash _get_symbolic_shape_mode _get_tensor_id _get_tensors_backend _get_tensors_dot
_get_tensors_text _mark_step _metrics_report _reset_metrics _set_force_fallback _set_reuse_ir
_set_symbolic_shape_mode _sync_multi _wait_device_ops""")
refuse("torch._C._lazy_ts_backend", "_get_latest_computation_graph _get_tensors_ts_device_data_node _init _run_cached_graph")
refuse("torch._C._nativert", "PyModelRunner", kind="type")
enum_("torch._C._onnx", "OperatorExportTypes", {"ONNX": 0, "ONNX_ATEN": 1, "ONNX_ATEN_FALLBACK": 2, "ONNX_FALLTHROUGH": 3})
enum_("torch._C._onnx", "TrainingMode", {"EVAL": 0, "PRESERVE": 1, "TRAINING": 2})
enum_("torch._C._onnx", "TensorProtoDataType", {
    "UNDEFINED": 0, "FLOAT": 1, "UINT8": 2, "INT8": 3, "UINT16": 4, "INT16": 5, "INT32": 6, "INT64": 7,
    "STRING": 8, "BOOL": 9, "FLOAT16": 10, "DOUBLE": 11, "UINT32": 12, "UINT64": 13, "COMPLEX64": 14,
    "COMPLEX128": 15, "BFLOAT16": 16, "FLOAT8E4M3FN": 17, "FLOAT8E4M3FNUZ": 18, "FLOAT8E5M2": 19,
    "FLOAT8E5M2FNUZ": 20})
constants("torch._C._onnx", {"PRODUCER_VERSION": "2.13.0"}, "upstream's version string", status="real")
refuse("torch._C._te", """abs acos annotate_input_shapes asin atan atan2 ceil construct_codegen cos cosh erf erfc
exp expm1 fixup_missing_shape_info floor fmod frac ifThenElse is_graph_compilable isnan lgamma log log10 log1p
log2 lower make_shapes_symbolic pow remainder remove_graph_output remove_unused_self_argument
replace_list_output_with_tuple round rsqrt sigmoid simplify sin sinh sqrt tan tanh trim_graph trunc
Compute Compute2 Reduce""")
refuse("torch._C._te", """ArgValue Block BufHandle BufferArg Cast CodeGen Cond Dtype ExprHandle ExternalCall For
LoopNest Maximum Reducer ScalarType SimpleIREvaluator Stmt Store Sum Tensor TensorExprKernel VarHandle""", kind="type")
returning("torch._C._verbose", "mkl_set_verbose mkldnn_set_verbose", 0, "no MKL/oneDNN to make verbose")
refuse("torch._C.cpp", "OrderedModuleDict OrderedTensorDict", kind="type")
refuse("torch._C.cpp.nn", "Module", kind="type")


# Stream and Event: upstream documents their methods at import (_torch_docs), so the
# refusing classes carry refusing methods without docstrings.
def _refusing_methods_type(name, methods):
    from torchnative._surface import refusal_message, refusing_type

    cls = refusing_type(C, name)
    for m in methods:
        msg = refusal_message(C, f"{name}.{m}")

        def method(self, *args, _msg=msg, **kwargs):
            raise NotImplementedError(_msg)

        method.__name__ = m
        method.__doc__ = None
        setattr(cls, m, method)
    return cls


add(C, "Stream", _refusing_methods_type("Stream", ("query", "record_event", "synchronize", "wait_event",
                                                   "wait_stream", "is_capturing")), "refuse",
    "device streams: torchnative runs on the CPU only")
add(C, "Event", _refusing_methods_type("Event", ("elapsed_time", "query", "record", "synchronize", "wait")),
    "refuse", "device events: torchnative runs on the CPU only")

