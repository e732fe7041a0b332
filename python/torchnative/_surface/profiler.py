"""Profiling, monitoring and tracing hooks: torch._C._profiler, _monitor, _itt,
_instruction_counter. torchnative has no profiler backend: enums and config records are
real, starting a profile refuses by name, and counters/guards that only record timings
are inert (they record nothing, which changes no result)."""

import contextlib

from torchnative._surface import C, add, enum_, inert, real, refuse, returning, submodule
from torchnative._surface.schema import python_op

P = "torch._C._profiler"
M = "torch._C._monitor"
submodule(P)
submodule(M)
submodule("torch._C._itt")
submodule("torch._C._instruction_counter")

enum_(P, "ProfilerActivity", {"CPU": 0, "XPU": 1, "MTIA": 2, "CUDA": 3, "HPU": 4, "PrivateUse1": 5})
enum_(P, "ProfilerState", {"Disabled": 0, "CPU": 1, "CUDA": 2, "NVTX": 3, "ITT": 4,
                           "PRIVATEUSE1": 5, "KINETO": 6, "KINETO_GPU_FALLBACK": 7,
                           "KINETO_PRIVATEUSE1_FALLBACK": 8})
enum_(P, "ActiveProfilerType", {"NONE": 0, "LEGACY": 1, "KINETO": 2, "NVTX": 3, "ITT": 4,
                                "PRIVATEUSE1": 5})
enum_(P, "RecordScope", {"FUNCTION": 0, "BACKWARD_FUNCTION": 1, "TORCHSCRIPT_FUNCTION": 2,
                         "KERNEL_FUNCTION_DTYPE": 3, "CUSTOM_CLASS": 4, "BUILD_FEATURE": 5,
                         "LITE_INTERPRETER": 6, "USER_SCOPE": 7, "STATIC_RUNTIME_OP": 8,
                         "STATIC_RUNTIME_MODEL": 9})
enum_(P, "_EventType", {"TorchOp": 0, "Backend": 1, "Vulkan": 2, "Allocation": 3,
                        "OutOfMemory": 4, "PyCall": 5, "PyCCall": 6, "Kineto": 7})


class _Record:
    def __init__(self, *args, **kwargs):
        self._args, self._kwargs = args, kwargs
        for k, v in kwargs.items():
            setattr(self, k, v)


class _ExperimentalConfig:
    """Kineto's experimental options: upstream's constructor fields and defaults; the two
    attributes upstream exposes (trace_only, custom_profiler_config) readable. A config
    record only: starting a profile refuses by name (_prepare_profiler)."""

    _FIELDS = (("profiler_metrics", ()), ("profiler_measure_per_kernel", False), ("verbose", False),
               ("performance_events", ()), ("enable_cuda_sync_events", False), ("adjust_profiler_step", False),
               ("disable_external_correlation", False), ("profile_all_threads", False),
               ("capture_overload_names", False), ("record_python_gc_info", False),
               ("expose_kineto_event_metadata", False), ("custom_profiler_config", ""),
               ("adjust_timestamps", False), ("trace_only", False))

    def __init__(self, *args, **kwargs):
        names = [n for n, _ in self._FIELDS]
        if len(args) > len(names):
            raise TypeError(f"_ExperimentalConfig takes at most {len(names)} arguments ({len(args)} given)")
        vals = dict(self._FIELDS)
        vals.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in vals:
                raise TypeError(f"_ExperimentalConfig got an unexpected keyword argument '{k}'")
            vals[k] = v
        for k, v in vals.items():
            setattr(self, k, list(v) if isinstance(v, tuple) else v)


add(P, "_ExperimentalConfig", _ExperimentalConfig, "real", "config record")
add(P, "ProfilerConfig", type("ProfilerConfig", (_Record,), {}), "real", "config record")


class _RecordFunctionFast:
    """record_function's fast path: records nothing (no profiler is ever active)."""

    def __init__(self, name, input_values=None, keyword_values=None):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


add(P, "_RecordFunctionFast", _RecordFunctionFast, "inert", "no profiler is ever active, so nothing is recorded")


class _RecordFunctionHandle:
    """What torch.ops.profiler._record_function_enter_new returns (upstream: a
    torch.classes.profiler._RecordFunction script object) and _record_function_exit
    takes back: record_function's span. No profiler is ever active, so entering and
    leaving record nothing (inert: no result depends on them)."""

    __slots__ = ("name", "args")

    def __init__(self, name, args=None):
        self.name, self.args = name, args

    def __repr__(self):
        return f"<torch.ScriptObject _RecordFunction {self.name!r}>"


@python_op("profiler::_record_function_enter_new")
def _record_function_enter_new(name, args=None):
    return _RecordFunctionHandle(name, args)


@python_op("profiler::_record_function_exit._RecordFunction")
def _record_function_exit(record):
    return None
refuse(P, """CapturedTraceback _ApproximateClockToUnixTimeConverter _ExtraFields_Allocation
_ExtraFields_Backend _ExtraFields_Kineto _ExtraFields_OutOfMemory _ExtraFields_PyCCall _ExtraFields_PyCall
_ExtraFields_TorchOp _ExtraFields_Vulkan _NNModuleInfo _OptimizerInfo _ProfilerEvent _PyFrameState
_TensorMetadata""", kind="type")
returning(P, "_set_cuda_sync_enabled_val _set_fwd_bwd_enabled_val _set_record_concrete_inputs_enabled_val",
          None, "profiler options with no profiler")
refuse(P, """_add_execution_trace_observer _disable_execution_trace_observer _enable_execution_trace_observer
_remove_execution_trace_observer gather_traceback symbolize_addresses symbolize_tracebacks
_get_approximate_time _cupti_approximate_time_callback_address _cupti_monitor_allocated_buffers
_cupti_monitor_buffer_complete_callback_address _cupti_monitor_buffer_request_callback_address
_cupti_monitor_configure_buffers _cupti_monitor_get_completed _cupti_monitor_next_layout_epoch
_cupti_monitor_pending_buffers _cupti_monitor_record_layouts _cupti_monitor_reset_buffers
_cupti_monitor_return_buffer _cupti_monitor_shutdown_buffers""")

# ---- torch._C._monitor -----------------------------------------------------------------
Aggregation = enum_(M, "Aggregation", {"VALUE": 0, "MEAN": 2, "COUNT": 3, "SUM": 4, "MAX": 5, "MIN": 6})
for _m in Aggregation:
    add(M, _m.name, _m, "real", "enum member exported at module level")


class _WaitCounter:
    """Named wait counter; guard() is a context manager. Records nothing (no monitoring
    backend), which changes no result."""

    def __init__(self, key):
        self.key = key

    def guard(self):
        return _WaitCounterTracker()


class _WaitCounterTracker:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


add(M, "_WaitCounter", _WaitCounter, "inert", "no monitoring backend; records nothing")
add(M, "_WaitCounterTracker", _WaitCounterTracker, "inert", "no monitoring backend; records nothing")


class Event:
    def __init__(self, name, timestamp, data):
        self.name, self.timestamp, self.data = name, timestamp, data


add(M, "Event", Event, "real", "event record")
_handlers = []


@real(M)
def log_event(event):
    for h in list(_handlers):
        h[0](event)


class EventHandlerHandle:
    pass


@real(M)
def register_event_handler(handler):
    h = EventHandlerHandle()
    _handlers.append((handler, h))
    return h


@real(M)
def unregister_event_handler(handle):
    _handlers[:] = [x for x in _handlers if x[1] is not handle]


add(M, "EventHandlerHandle", EventHandlerHandle, "real", "handle")
refuse(M, "Stat data_value_t", kind="type")

# ---- top-level profiling / logging -------------------------------------------------------
returning(C, "_log_api_usage_once _log_api_usage_metadata", None,
          "API-usage logging goes nowhere (upstream's default logger is a no-op too)")
returning("torch._C._itt", "is_available", False, "no Intel ITT", status="real")
refuse("torch._C._itt", "mark rangePop rangePush")
refuse("torch._C._instruction_counter", "start end")
