"""torch._C._autograd, _functions and the autograd-related top-level names.

Autograd itself is wave 2 (in C). Until then: graph-free queries answer truthfully
(no graph task, no saved-tensor hooks active), switches that only matter while recording
a graph are stored, and anything that needs the engine refuses by name.
_FunctionBase.apply runs a custom Function's forward when no input needs a gradient (no
graph to record) and refuses otherwise, so it never silently drops gradients.
"""

import threading

from torchnative._surface import C, add, enum_, inert, real, refuse, returning, submodule

A = "torch._C._autograd"
submodule(A)
submodule("torch._C._functions")


@real(reason="autograd state is set up lazily; upstream only checks the result is true")
def _autograd_init():
    return True


def _needs_grad(args):
    import sys
    torch = sys.modules.get("torch")
    if torch is None or not torch.is_grad_enabled():
        return False
    for a in args:
        if getattr(a, "requires_grad", False) is True:
            return True
        if isinstance(a, (list, tuple)) and _needs_grad(a):
            return True
    return False


class _FunctionBase:
    """Base of torch.autograd.Function (plain `type` metatype, as upstream)."""
    _is_legacy = False

    def __init__(self, *args, **kwargs):
        self.needs_input_grad = ()
        self.saved_tensors = ()
        self.to_save = ()
        self.non_differentiable = ()
        self.dirty_tensors = ()
        self.materialize_grads = True

    @classmethod
    def apply(cls, *args, **kwargs):
        if _needs_grad(args) or _needs_grad(tuple(kwargs.values())):
            raise NotImplementedError(
                f"torch._C._FunctionBase.apply with inputs that require grad ({cls.__name__}) "
                "is not implemented by torchnative")
        ctx = cls._backward_cls() if hasattr(cls, "_backward_cls") else cls()
        ctx.needs_input_grad = tuple(False for _ in args)
        if getattr(cls, "_new_forward_style", None) is None:
            pass
        # Upstream's rule (THPFunction_apply): when the class defines its own setup_context,
        # forward is called without ctx and setup_context(ctx, inputs, output) afterwards;
        # otherwise forward(ctx, *args). Attribute access unwraps the staticmethods on both
        # sides, so the functions compare directly.
        fwd = cls.forward
        setup = getattr(cls, "setup_context", None)
        base = next((k for k in cls.__mro__ if k.__name__ == "_SingleLevelFunction"), None)
        base_setup = getattr(base, "setup_context", None) if base is not None else None
        if setup is not None and base_setup is not None and setup is not base_setup:
            out = fwd(*args, **kwargs)
            setup(ctx, args, out)
            return out
        return fwd(ctx, *args, **kwargs)

    def register_hook(self, fn):
        raise NotImplementedError("torch._C._FunctionBase.register_hook is not implemented by torchnative")

    def register_prehook(self, fn):
        raise NotImplementedError("torch._C._FunctionBase.register_prehook is not implemented by torchnative")

    def name(self):
        return type(self).__name__

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def save_for_backward(self, *tensors):
        self.to_save = tensors
        self.saved_tensors = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = value

    @property
    def next_functions(self):
        return ()

    @property
    def metadata(self):
        return self.__dict__.setdefault("_metadata", {})


add(C, "_FunctionBase", _FunctionBase, "real",
    "forward without graph recording; refuses when an input requires grad")


class _LegacyVariableBase:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch._C._LegacyVariableBase is not implemented by torchnative")


add(C, "_LegacyVariableBase", _LegacyVariableBase, "refuse")


class _ImperativeEngine:
    def run_backward(self, *args, **kwargs):
        raise NotImplementedError("torch._C._ImperativeEngine.run_backward (autograd) is not implemented by torchnative")

    def queue_callback(self, cb):
        raise NotImplementedError("torch._C._ImperativeEngine.queue_callback is not implemented by torchnative")

    def is_checkpoint_valid(self):
        return True


add(C, "_ImperativeEngine", _ImperativeEngine, "real", "engine entry points refuse by name")
refuse(C, "_NodeBase _NodeIter", kind="type")

_anomaly = {"enabled": False, "check_nan": True}


@real(reason="anomaly mode only affects backward, which refuses")
def is_anomaly_enabled():
    return _anomaly["enabled"]


@real(reason="anomaly mode only affects backward, which refuses")
def is_anomaly_check_nan_enabled():
    return _anomaly["check_nan"]


@real(reason="anomaly mode only affects backward, which refuses")
def set_anomaly_enabled(enabled, check_nan=True):
    _anomaly["enabled"], _anomaly["check_nan"] = bool(enabled), bool(check_nan)


_fwd = threading.local()


@inert(reason="forward-mode AD does not exist; the flag is stored")
def _is_fwd_grad_enabled():
    return getattr(_fwd, "enabled", True)


@inert(reason="forward-mode AD does not exist; the flag is stored")
def _set_fwd_grad_enabled(v):
    _fwd.enabled = bool(v)


returning(C, "_current_autograd_node", None, "no backward pass is running", status="real")
returning(C, "_current_graph_task_id", -1, "no backward pass is running", status="real")
returning(C, "_current_graph_task_execution_order", [], "no backward pass is running", status="real")
refuse(C, "_will_engine_execute_node _enter_dual_level _exit_dual_level _increment_version "
          "_unsafe_reset_storage")


@real()
def _any_requires_grad(*args, **kwargs):
    return _needs_grad(args) or _needs_grad(tuple(kwargs.values()))


enum_(A, "CreationMeta", "DEFAULT IN_CUSTOM_FUNCTION MULTI_OUTPUT_NODE NO_GRAD_MODE INFERENCE_MODE")
enum_(A, "DeviceType", {"CPU": 0, "CUDA": 1, "MKLDNN": 2, "OPENGL": 3, "OPENCL": 4, "IDEEP": 5,
                        "HIP": 6, "FPGA": 7, "MAIA": 8, "XLA": 9, "Vulkan": 10, "Metal": 11,
                        "XPU": 12, "MPS": 13, "Meta": 14, "HPU": 15, "VE": 16, "Lazy": 17,
                        "IPU": 18, "MTIA": 19, "PrivateUse1": 20})
refuse(A, "ProfilerEvent SavedTensor TensorGeometry _ITraceActivity _InputMetadata _KinetoEvent "
          "_ProfilerDisableOptions _ProfilerResult", kind="type")

_hooks = threading.local()


def _hook_stack():
    if not hasattr(_hooks, "stack"):
        _hooks.stack = []
        _hooks.disabled = None
    return _hooks.stack


@inert(A, reason="saved-tensor hooks are kept on a stack; nothing saves tensors before autograd exists")
def _push_saved_tensors_default_hooks(pack, unpack):
    _hook_stack().append((pack, unpack))


@inert(A, reason="saved-tensor hooks are kept on a stack; nothing saves tensors before autograd exists")
def _pop_saved_tensors_default_hooks():
    _hook_stack().pop()


@inert(A, reason="saved-tensor hooks are kept on a stack; nothing saves tensors before autograd exists")
def _top_saved_tensors_default_hooks(ignore_is_tracing=False):
    s = _hook_stack()
    return s[-1] if s else (None, None)


@real(A)
def _saved_tensors_hooks_is_enabled():
    _hook_stack()
    return _hooks.disabled is None


@real(A)
def _saved_tensors_hooks_disable(message, fail_if_non_empty=True):
    _hook_stack()
    _hooks.disabled = message


@real(A)
def _saved_tensors_hooks_enable():
    _hook_stack()
    _hooks.disabled = None


@real(A)
def _saved_tensors_hooks_get_disabled_error_message():
    _hook_stack()
    return _hooks.disabled


returning(A, "_saved_tensors_hooks_set_tracing", False, "no tracing")
returning(A, "_get_current_graph_task_keep_graph", False, "no backward pass is running", status="real")
returning(A, "_profiler_enabled", False, "the autograd profiler never runs here", status="real")
returning(A, "kineto_available", False, "no Kineto", status="real")
returning(A, "_supported_activities", set(), "no profiler activities are supported", status="real")
returning(A, "_is_kineto_stopped", True, "no Kineto", status="real")
returning(A, "_clear_callbacks _set_empty_test_observer _kineto_step _add_metadata_json "
          "_toggle_collection_dynamic _soft_assert_raises", None, "profiler callbacks that never fire here")
refuse(A, """_disable_profiler _disable_profiler_legacy _enable_profiler _enable_profiler_legacy
_enable_record_function _get_creation_meta _get_data_attr _get_sequence_nr _make_saved_tensor
_prepare_profiler _profiler_type _record_function_with_args_enter _record_function_with_args_exit
_set_creation_meta _unsafe_set_version_counter""")
