"""Build flags, backend switches and global settings of torch._C.

Build flags say what this build has: only what torchnative really provides is true
(a truthy flag switches an upstream subsystem on). Settings are stored and read back
(upstream Python saves and restores them in context managers); the reason on each says
whether torchnative's kernels honour the setting or why ignoring it is harmless.
Autocast can be queried and disabled, but enabling it refuses: running without the
requested precision change would silently give different numbers.
"""

from torchnative._surface import C, add, constants, enum_, inert, real, refuse, returning

# ---- build flags ------------------------------------------------------------------------
constants(C, {
    "_has_cuda": False, "_has_cudnn": False, "_has_cusparselt": False, "_has_magma": False,
    "_has_mps": False, "_has_xpu": False, "_has_mkldnn": False, "_has_mkldnn_acl": False,
    "_has_eigen_sparse": False, "_has_kleidiai": False,
    "has_mkl": False, "has_lapack": False, "has_openmp": False, "has_spectral": False,
}, "build flag: torchnative has none of these libraries/backends", status="real")
constants(C, {"_GLIBCXX_USE_CXX11_ABI": True}, "matches the upstream wheel (cpp_extension reads it)",
          status="real")


@real(reason="torch.distributed is available (see distributed.py)")
def _has_distributed():
    return True


@real(reason="no TorchScript C++ test binary")
def _has_tensorexpr_cpp_tests():
    return False


@real(reason="no TorchScript C++ test binary")
def _jit_has_cpp_tests():
    return False


# ---- stored settings ----------------------------------------------------------------------
_SETTINGS = {}


def _setting(getter, setter, default, reason, status="inert"):
    _SETTINGS[getter] = default

    def get(*args):
        return _SETTINGS[getter]

    def set_(value, *args):
        _SETTINGS[getter] = value
    get.__name__ = get.__qualname__ = getter
    add(C, getter, get, status, reason)
    if setter:
        set_.__name__ = set_.__qualname__ = setter
        add(C, setter, set_, status, reason)


_NO_CUDA = "stored and read back; configures CUDA/cuDNN/ROCm, which torchnative does not have"
_NO_MKLDNN = "stored and read back; torchnative has no oneDNN/NNPACK/XNNPACK"
_NOT_HONOURED = "stored and read back; torchnative's CPU kernels do not change behaviour on it"

for g, s, d in (
    ("_get_cudnn_enabled", "_set_cudnn_enabled", True),
    ("_get_cudnn_benchmark", "_set_cudnn_benchmark", False),
    ("_get_cudnn_deterministic", "_set_cudnn_deterministic", False),
    ("_get_cudnn_allow_tf32", "_set_cudnn_allow_tf32", True),
    ("_get_cudnn_depthwise_kernel", "_set_cudnn_depthwise_kernel", "auto"),
    ("_get_cublas_allow_tf32", "_set_cublas_allow_tf32", False),
    ("_get_cublas_allow_fp16_accumulation", "_set_cublas_allow_fp16_accumulation", False),
    ("_get_cublas_allow_fp16_reduced_precision_reduction",
     "_set_cublas_allow_fp16_reduced_precision_reduction", (True, True)),
    ("_get_cublas_allow_bf16_reduced_precision_reduction",
     "_set_cublas_allow_bf16_reduced_precision_reduction", (True, True)),
    ("_get_miopen_immediate", "_set_miopen_immediate", False),
    ("_get_flash_sdp_enabled", "_set_sdp_use_flash", True),
    ("_get_mem_efficient_sdp_enabled", "_set_sdp_use_mem_efficient", True),
    ("_get_cudnn_sdp_enabled", "_set_sdp_use_cudnn", True),
    ("_get_fa3_sdp_enabled", "_set_sdp_use_fa3", False),
    ("_get_overrideable_sdp_enabled", "_set_sdp_use_overrideable", True),
    ("_get_sm_carveout_experimental", "_set_sm_carveout_experimental", None),
    ("_get_sdp_priority_order", "_set_sdp_priority_order", [1, 2, 0, 3, 4]),
):
    _setting(g, s, d, _NO_CUDA)

for g, s, d in (
    ("_get_mkldnn_enabled", "_set_mkldnn_enabled", True),
    ("_get_mkldnn_deterministic", "_set_mkldnn_deterministic", False),
    ("_get_onednn_allow_tf32", "_set_onednn_allow_tf32", None),
    ("_get_nnpack_enabled", "_set_nnpack_enabled", True),
):
    _setting(g, s, d, _NO_MKLDNN)

for g, s, d in (
    ("_get_math_sdp_enabled", "_set_sdp_use_math", True),
    ("_get_math_sdp_allow_fp16_bf16_reduction", "_set_math_sdp_allow_fp16_bf16_reduction", False),
    ("_get_cpu_allow_fp16_reduced_precision_reduction",
     "_set_cpu_allow_fp16_reduced_precision_reduction", False),
    ("_get_float32_matmul_precision", "_set_float32_matmul_precision", "highest"),
    ("_get_deterministic_algorithms_warn_only", None, False),
    ("_get_deterministic_fill_uninitialized_memory", "_set_deterministic_fill_uninitialized_memory", True),
    ("_get_backcompat_broadcast_warn", "_set_backcompat_broadcast_warn", False),
    ("_get_backcompat_keepdim_warn", "_set_backcompat_keepdim_warn", False),
    ("_get_warnAlways", "_set_warnAlways", False),
    ("_get_autograd_fallback_mode", "_set_autograd_fallback_mode", "warn"),
    ("_get_graph_executor_optimize", "_set_graph_executor_optimize", True),
    ("_get_dtensor_allow_implicit_replication", "_set_dtensor_allow_implicit_replication", False),
    ("_is_view_replay_enabled", "_set_view_replay_enabled", False),
    ("_is_grad_layout_enforcement_enabled", "_set_grad_layout_enforcement_enabled", True),
    ("_is_multithreading_enabled", "_set_multithreading_enabled", True),
    ("_get_graph_exec_group", "_set_graph_exec_group", None),
    ("_get_qengine", "_set_qengine", 0),
    ("_get_thread_name", "_set_thread_name", "python"),
    ("_get_version_calculator_flag", None, False),
):
    _setting(g, s, d, _NOT_HONOURED)

# Deterministic algorithms: the kernels are deterministic already, so reading back the
# flag is all upstream needs.
_SETTINGS["_get_deterministic_algorithms"] = False


@inert(reason="torchnative's CPU kernels are deterministic; the flag is stored and read back")
def _get_deterministic_algorithms():
    return _SETTINGS["_get_deterministic_algorithms"]


@inert(reason="torchnative's CPU kernels are deterministic; the flag is stored and read back")
def _set_deterministic_algorithms(mode, *, warn_only=False):
    _SETTINGS["_get_deterministic_algorithms"] = bool(mode)
    _SETTINGS["_get_deterministic_algorithms_warn_only"] = bool(warn_only)


@inert(reason=_NOT_HONOURED)
def _set_fp32_precision_setter(backend, op, precision):
    _SETTINGS[("fp32", backend, op)] = precision


@inert(reason=_NOT_HONOURED)
def _get_fp32_precision_getter(backend, op):
    return _SETTINGS.get(("fp32", backend, op), "none")


# Backend-choice enums (values as upstream).
_BlasBackend = enum_(C, "_BlasBackend", {"Default": 0, "Cublas": 1, "Cublaslt": 2, "Ck": 3})
_LinalgBackend = enum_(C, "_LinalgBackend", {"Default": 0, "Cusolver": 1, "Magma": 2})
_ROCmFABackend = enum_(C, "_ROCmFABackend", {"Default": 0, "AOTriton": 1, "Ck": 2})
_SDPBackend = enum_(C, "_SDPBackend", {"error": -1, "math": 0, "flash_attention": 1,
                                        "efficient_attention": 2, "cudnn_attention": 3,
                                        "overrideable": 4})
_setting("_get_blas_preferred_backend", "_set_blas_preferred_backend", _BlasBackend.Cublas, _NO_CUDA)
_setting("_get_blas_default_backend", None, _BlasBackend.Cublas, _NO_CUDA)
_setting("_get_linalg_preferred_backend", "_set_linalg_preferred_backend", _LinalgBackend.Default, _NO_CUDA)
_setting("_get_rocm_fa_preferred_backend", "_set_rocm_fa_preferred_backend", _ROCmFABackend.Default, _NO_CUDA)

returning(C, "_is_flash_attention_available _is_ck_sdpa_available _is_xnnpack_enabled "
          "_is_default_mobile_cpu_allocator_set _can_use_flash_attention "
          "_can_use_mem_efficient_attention _can_use_cudnn_attention", False,
          "those kernels do not exist in torchnative", status="real")


@real(reason="instruction-set tier torchnative's kernels use (TN_FORCE_ISA lowers it), in upstream's names")
def _get_cpu_capability():
    tier = _C_tier()
    return "AVX512" if tier.startswith("avx512") or tier == "amx" else "AVX2" if tier == "avx2" else "DEFAULT"


def _C_tier():
    import sys
    isa = getattr(sys.modules.get("torch._C"), "_tn_isa", None)
    return isa()[0] if isa is not None else "scalar"


@inert(reason="intra-op threads are governed by the C thread pool once it exists; value stored")
def get_num_threads():
    return _SETTINGS.setdefault("threads", 1)


@inert(reason="intra-op threads are governed by the C thread pool once it exists; value stored")
def set_num_threads(n):
    if int(n) <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _SETTINGS["threads"] = int(n)


@inert(reason="torchnative has no inter-op pool; value stored")
def get_num_interop_threads():
    return _SETTINGS.setdefault("interop", 1)


@inert(reason="torchnative has no inter-op pool; value stored")
def set_num_interop_threads(n):
    _SETTINGS["interop"] = int(n)


@inert(reason="nothing to initialise before the C thread pool exists")
def init_num_threads():
    return None


@real(reason="flush-denormal is not supported here; upstream returns False when unsupported")
def set_flush_denormal(mode):
    return False


# ---- autocast ---------------------------------------------------------------------------
_autocast = {"enabled": {}, "dtype": {"cpu": "bfloat16", "cuda": "float16", "ipu": "float16",
                                      "xla": "bfloat16", "mps": "float16", "xpu": "bfloat16",
                                      "hpu": "bfloat16", "mtia": "float16", "maia": "float16"},
             "nesting": 0, "cache": True}
_AUTOCAST_REASON = "autocast can be read and disabled; enabling it refuses by name"


def _dtype_obj(name):
    import sys
    torch = sys.modules.get("torch")
    return getattr(torch, name, name) if torch is not None else name


@real(reason=_AUTOCAST_REASON)
def is_autocast_enabled(device_type=None):
    return bool(_autocast["enabled"].get(device_type or "cuda", False))


@real(reason=_AUTOCAST_REASON)
def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:
        device_type, enabled = "cuda", device_type
    if enabled:
        raise NotImplementedError("torch._C.set_autocast_enabled(True) (autocast) is not implemented by torchnative")
    _autocast["enabled"][device_type] = False


@real(reason=_AUTOCAST_REASON)
def get_autocast_dtype(device_type):
    d = _autocast["dtype"].get(device_type, "float16")
    return _dtype_obj(d) if isinstance(d, str) else d


@real(reason=_AUTOCAST_REASON)
def set_autocast_dtype(device_type, dtype):
    _autocast["dtype"][device_type] = dtype


@real(reason=_AUTOCAST_REASON)
def _is_any_autocast_enabled():
    return any(_autocast["enabled"].values())


@real(reason="CPU autocast can be entered with enabled=False (transformers does); enabling refuses")
def _is_autocast_available(device_type):
    return device_type == "cpu"


def _per_device(dev):
    def is_en():
        return is_autocast_enabled(dev)

    def set_en(enabled):
        set_autocast_enabled(dev, enabled)

    def get_dt():
        return get_autocast_dtype(dev)

    def set_dt(dtype):
        set_autocast_dtype(dev, dtype)
    return is_en, set_en, get_dt, set_dt


for _dev, _names in (("cpu", ("is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
                              "get_autocast_cpu_dtype", "set_autocast_cpu_dtype")),
                     ("ipu", ("is_autocast_ipu_enabled", "set_autocast_ipu_enabled",
                              "get_autocast_ipu_dtype", "set_autocast_ipu_dtype")),
                     ("xla", ("is_autocast_xla_enabled", "set_autocast_xla_enabled",
                              "get_autocast_xla_dtype", "set_autocast_xla_dtype")),
                     ("cuda", (None, None, "get_autocast_gpu_dtype", "set_autocast_gpu_dtype"))):
    for _fn, _n in zip(_per_device(_dev), _names):
        if _n:
            _fn.__name__ = _fn.__qualname__ = _n
            add(C, _n, _fn, "real", _AUTOCAST_REASON)


@real(reason=_AUTOCAST_REASON)
def autocast_increment_nesting():
    _autocast["nesting"] += 1
    return _autocast["nesting"]


@real(reason=_AUTOCAST_REASON)
def autocast_decrement_nesting():
    _autocast["nesting"] -= 1
    return _autocast["nesting"]


@real(reason=_AUTOCAST_REASON)
def is_autocast_cache_enabled():
    return _autocast["cache"]


@real(reason=_AUTOCAST_REASON)
def set_autocast_cache_enabled(enabled):
    _autocast["cache"] = bool(enabled)


@real(reason="there is no autocast cache")
def clear_autocast_cache():
    return None


@real()
def _autocast_supported_devices():
    return ["cpu"]
