"""torch._C._autograd, _functions and the autograd-related top-level names.

The engine, nodes and recording are C (src/autograd/, bound in src/python/autograd.c).
Here: the Python faces upstream writes in C++ too — _ImperativeEngine (calls the C
engine), _FunctionBase (torch.autograd.Function: forward under no_grad, then a C graph
node whose backward calls back into Python), DelayedError, anomaly and saved-tensor-hook
switches.
"""

import sys
import threading

from torchnative._surface import C, add, enum_, inert, real, refuse, returning, submodule

A = "torch._C._autograd"
submodule(A)
submodule("torch._C._functions")


@real(reason="autograd state is set up lazily; upstream only checks the result is true")
def _autograd_init():
    return True


def _torch():
    import sys
    return sys.modules["torch"]


def _Cm():
    import sys
    return sys.modules["torch._C"]


def _needs_grad(args):
    torch = _torch()
    if not torch.is_grad_enabled():
        return False
    for a in args:
        if getattr(a, "requires_grad", False) is True:
            return True
        if isinstance(a, (list, tuple)) and _needs_grad(a):
            return True
    return False


class _FunctionBase:
    """Base of torch.autograd.Function (plain `type` metatype, as upstream).

    apply() is upstream's THPFunction_apply: forward under no_grad, then (when grad mode is
    on and an input requires grad) one graph node in C whose backward calls this ctx's
    backward (`_tn_backward`). The ctx object is the outputs' grad_fn, as upstream."""
    _is_legacy = False

    def __init__(self, *args, **kwargs):
        self.needs_input_grad = ()
        self.to_save = ()
        self.non_differentiable = ()
        self.dirty_tensors = ()
        self.materialize_grads = True
        self._tn_saved = None
        self._tn_node = None

    @classmethod
    def apply(cls, *args, **kwargs):
        torch = _torch()
        ctx = cls._backward_cls() if hasattr(cls, "_backward_cls") else cls()
        executable = _needs_grad(args)
        is_t = [isinstance(a, torch.Tensor) for a in args]
        ctx.needs_input_grad = tuple(bool(t and executable and a.requires_grad) for t, a in zip(is_t, args))
        # Upstream's rule: when the class defines its own setup_context, forward is called
        # without ctx and setup_context(ctx, inputs, output) afterwards.
        fwd = cls.forward
        setup = getattr(cls, "setup_context", None)
        base = next((k for k in cls.__mro__ if k.__name__ == "_SingleLevelFunction"), None)
        base_setup = getattr(base, "setup_context", None) if base is not None else None
        with torch.no_grad():
            if setup is not None and base_setup is not None and setup is not base_setup:
                out = fwd(*args, **kwargs)
                setup(ctx, args, out)
            else:
                out = fwd(ctx, *args, **kwargs)
        if not executable:
            ctx._tn_saved = [(t, t._version if t is not None else 0) for t in ctx.to_save]
            return out
        single = not isinstance(out, tuple)
        outs = (out,) if single else tuple(out)
        inputs = {id(a): a for a in args if isinstance(a, torch.Tensor)}
        dirty = {id(t) for t in ctx.dirty_tensors}
        nondiff = {id(t) for t in ctx.non_differentiable}
        wrapped = []
        for o in outs:
            if not isinstance(o, torch.Tensor):
                wrapped.append(o)
                continue
            if id(o) in dirty:
                if o.is_leaf and o.requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            elif id(o) in inputs and id(o) not in nondiff:
                with torch.no_grad():
                    o = o.view_as(o)
            wrapped.append(o)
        node_outs = tuple(o if isinstance(o, torch.Tensor) and id(o) not in nondiff
                          and (o.is_floating_point() or o.is_complex()) else None for o in wrapped)
        ctx._tn_out_meta = [(o.shape, o.dtype) if o is not None else None for o in node_outs]
        ctx._tn_nargs = len(args)
        ctx._tn_tensor_pos = [i for i, t in enumerate(is_t) if t]
        name = type(ctx).__name__
        _Cm()._tn_function_node(ctx, name, tuple(args), node_outs)
        # Saved outputs are kept without their graph (no cycle through the ctx).
        out_ids = {id(o) for o in wrapped if isinstance(o, torch.Tensor)}
        saved = [(t.detach() if id(t) in out_ids else t) if t is not None else None for t in ctx.to_save]
        stack = _hook_stack()
        if stack and saved:
            # Saved-tensor hooks apply to a Function's saved tensors as to any node's: the
            # pack hook runs now, the unpack hook on every access to saved_tensors.
            pack, unpack = stack[-1]
            ctx._tn_saved = [(_Packed(unpack, pack(t)), 0) if t is not None else (None, 0) for t in saved]
        else:
            ctx._tn_saved = [(t, t._version if t is not None else 0) for t in saved]
        return wrapped[0] if single else tuple(wrapped)

    def _tn_backward(self, grads):
        torch = _torch()
        if self.materialize_grads:
            grads = tuple(torch.zeros(m[0], dtype=m[1]) if g is None and m is not None else g
                          for g, m in zip(grads, self._tn_out_meta))
        res = self.apply(*grads) if hasattr(self, "_forward_cls") else self.backward(*grads)
        if not isinstance(res, tuple):
            res = (res,)
        n = self._tn_nargs
        if len(res) < n or any(r is not None for r in res[n:]):
            if len(res) != n:
                raise RuntimeError(f"function {type(self).__name__} returned an incorrect number of gradients "
                                   f"(expected {n}, got {len(res)})")
        pos = set(self._tn_tensor_pos)
        for i, r in enumerate(res[:n]):
            if r is not None and i not in pos:
                raise RuntimeError(f"function {type(self).__name__} returned a gradient different than None at "
                                   f"position {i + 1}, but the corresponding forward input was not a Variable")
        return tuple(res[i] for i in self._tn_tensor_pos)

    @property
    def saved_tensors(self):
        if self._tn_saved is None:
            return ()
        if any(isinstance(t, _Packed) for t, _ in self._tn_saved):
            return tuple(t.unpack() if isinstance(t, _Packed) else t for t, _ in self._tn_saved)
        for t, v in self._tn_saved:
            if t is not None and t._version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.type()} {list(t.shape)}], which is output 0 of {type(self).__name__}, is at "
                    f"version {t._version}; expected version {v} instead. Hint: enable anomaly detection to find "
                    "the operation that failed to compute its gradient, with "
                    "torch.autograd.set_detect_anomaly(True).")
        return tuple(t for t, _ in self._tn_saved)

    @property
    def saved_variables(self):
        return self.saved_tensors

    def register_hook(self, fn):
        from torch.utils.hooks import RemovableHandle
        d = _Cm()._tn_function_hooks(self)["post"]
        h = RemovableHandle(d)
        d[h.id] = fn
        return h

    def register_prehook(self, fn):
        from torch.utils.hooks import RemovableHandle
        d = _Cm()._tn_function_hooks(self)["pre"]
        h = RemovableHandle(d)
        d[h.id] = fn
        return h

    def _register_hook_dict(self, tensor):
        _Cm()._tn_function_hooks(self)["tensor"].append((tensor._backward_hooks, tensor.output_nr))

    def name(self):
        return type(self).__name__

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = value

    @property
    def next_functions(self):
        return _Cm()._tn_function_next(self)

    @property
    def metadata(self):
        return _Cm()._tn_function_hooks(self)["metadata"]

    def _sequence_nr(self):
        return 0


add(C, "_FunctionBase", _FunctionBase, "real",
    "forward under no_grad, then a C graph node whose backward calls the Function's backward")


class _LegacyVariableBase:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch._C._LegacyVariableBase is not implemented by torchnative")


add(C, "_LegacyVariableBase", _LegacyVariableBase, "refuse")


class _ImperativeEngine:
    def run_backward(self, tensors, grad_tensors, keep_graph, create_graph, inputs=(),
                     allow_unreachable=False, accumulate_grad=True):
        torch = _torch()
        for t in tensors:
            if not isinstance(t, torch.Tensor):
                raise NotImplementedError("torch._C._ImperativeEngine.run_backward with GradientEdge roots is "
                                          "not implemented by torchnative")
        inputs = tuple(inputs) if inputs else ()
        C = _Cm()
        if any(isinstance(t, torch.Tensor) and C._tn_batch_info(t) is not None
               for t in (*tensors, *grad_tensors, *inputs)):
            res = self._run_backward_batched(tuple(tensors), tuple(grad_tensors), keep_graph, create_graph, inputs,
                                             allow_unreachable, accumulate_grad)
        else:
            res = C._tn_run_backward(tuple(tensors), tuple(grad_tensors), bool(keep_graph), bool(create_graph),
                                     inputs if inputs else None, bool(allow_unreachable), bool(accumulate_grad))
        if create_graph and inputs and not accumulate_grad:
            from torchnative._surface.functorch import _detach_keep_tangents, dead_grad_leaves
            dead = dead_grad_leaves()
            if dead and any(id(t) in dead for t in inputs):
                # a product with respect to an exited torch.func.grad level's inputs (vjp's
                # vjp_fn, jacrev): what depends on those alone is a plain tensor, as upstream's
                # (its forward-mode tangents kept: jacfwd(jacrev) = hessian)
                leaves = tuple(dead.values())
                res = tuple(r if r is None or C._tn_reaches_other_leaf(r, leaves) else _detach_keep_tangents(r, leaves)
                            for r in res)
        return res

    def _run_backward_batched(self, tensors, grad_tensors, keep_graph, create_graph, inputs, allow_unused,
                              accumulate):
        """torch.autograd.grad of tensors batched by vmap (torch.func.grad under vmap, jacrev's
        vmapped vector-Jacobian products): one backward pass per element of the innermost level
        present, each from that element of the batched outputs and gradients to the inputs'
        values (a batched input's gradient is that element of its value's, an unbatched
        input's is whole), stacked back into tensors batched at that level; lower levels
        batch in the recursive passes. The graph itself is the values' (the door records the
        per-element operators)."""
        torch = _torch()
        C = _Cm()
        if accumulate:
            raise RuntimeError("backward() called inside a functorch transform. This is not supported, please use "
                               "functorch.grad or functorch.vjp instead or call backward() outside of functorch "
                               "transforms.")
        for i, t in enumerate(tensors):
            # a batched tensor requires grad only under torch.func.grad (its getter), as upstream's
            if not t.requires_grad:
                raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        infos = [C._tn_batch_info(t) if t is not None else None for t in (*tensors, *grad_tensors, *inputs)]
        level = max(i[2] for i in infos if i is not None)
        size = C._tn_vmap_batch_size(level)

        def value_at(t):  # (t's value, its batch dim) at `level`, or None when t is not batched there
            info = C._tn_batch_info(t) if t is not None else None
            return (info[0], info[1]) if info is not None and info[2] == level else None

        def value0(t):  # t's value at `level` with the batch first, or None
            v = value_at(t)
            return None if v is None else v[0].movedim(v[1], 0)

        unused = ("One of the differentiated Tensors appears to not have been used in the graph. "
                  "Set allow_unused=True if this is the desired behavior.")
        roots0, ins0 = [value0(t) for t in tensors], [value_at(t) for t in inputs]
        if all(r is not None for r in roots0) and all(v is not None for v in ins0):
            # every output and input batched here: element i of an output depends on element
            # i of the inputs only (vmap's per-element calls), so one pass over the whole
            # values gives every element's gradient at once
            grads0 = []
            for r, g in zip(roots0, grad_tensors):
                g0 = value0(g)
                grads0.append(g0 if g0 is not None or g is None else g.unsqueeze(0).expand(r.shape))
            # the inputs' values themselves (a view made here would not be in the graph)
            res = self.run_backward(tuple(roots0), tuple(grads0), keep_graph, create_graph,
                                    tuple(v for v, _ in ins0), True, False)
            out = []
            for g, (_, bdim) in zip(res, ins0):
                if g is None and not allow_unused:
                    raise RuntimeError(unused)
                out.append(None if g is None else C._tn_add_batch_dim(g, bdim, level))
            return tuple(out)

        def element(t, i):
            v = value_at(t)
            return t if v is None else v[0].select(v[1], i)

        ins = [v if v is not None else (t, None) for t, v in zip(inputs, ins0)]
        per_input = [[] for _ in inputs]
        for i in range(size):
            res = self.run_backward(tuple(element(t, i) for t in tensors), tuple(element(g, i) for g in grad_tensors),
                                    True if i + 1 < size else keep_graph, create_graph, tuple(v for v, _ in ins),
                                    True, False)
            for k, g in enumerate(res):
                bdim = ins[k][1]
                per_input[k].append(g if g is None or bdim is None else g.select(bdim, i))
        out = []
        for k, gs in enumerate(per_input):
            if all(g is None for g in gs):
                if not allow_unused:
                    raise RuntimeError(unused)
                out.append(None)
                continue
            like = next(g for g in gs if g is not None)
            gs = [torch.zeros_like(like) if g is None else g for g in gs]
            out.append(C._tn_add_batch_dim(torch.stack(gs), 0, level))
        return tuple(out)

    def queue_callback(self, cb):
        # runs cb() once the backward pass running on this thread has run every node
        return _Cm()._tn_queue_callback(cb)

    def is_checkpoint_valid(self):
        return True


add(C, "_ImperativeEngine", _ImperativeEngine, "real", "run_backward runs the C engine (src/autograd/engine.c)")
refuse(C, "_NodeBase _NodeIter", kind="type")


class _DelayedErrorFunction:
    """torch._C._functions.DelayedError(msg, num_inputs)(*tensors): outputs whose backward
    raises msg (used by once_differentiable)."""

    def __init__(self, msg, num_inputs):
        self.msg, self.num_inputs = msg, num_inputs

    def __call__(self, *tensors):
        torch = _torch()
        msg = self.msg

        class DelayedError(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *xs):
                return tuple(x.view_as(x) if x is not None else None for x in xs)

            @staticmethod
            def backward(ctx, *gs):
                raise RuntimeError(msg)

        out = DelayedError.apply(*tensors)
        return out


add("torch._C._functions", "DelayedError", _DelayedErrorFunction, "real", "a Function whose backward raises")


class _UndefinedGradFunction:
    """torch._C._functions.UndefinedGrad()(*tensors): outputs whose backward passes no
    gradient on (gradcheck checks backward with undefined output gradients with it)."""

    def __call__(self, *tensors):
        torch = _torch()

        class UndefinedGrad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *xs):
                return tuple(x.view_as(x) for x in xs) if len(xs) != 1 else xs[0].view_as(xs[0])

            @staticmethod
            def backward(ctx, *gs):
                return (None,) * len(gs)

        return UndefinedGrad.apply(*tensors)


add("torch._C._functions", "UndefinedGrad", _UndefinedGradFunction, "real", "a Function passing no gradient on")

_anomaly = {"enabled": False, "check_nan": True}


@real(reason="anomaly mode is recorded; the engine does not trace forward stacks")
def is_anomaly_enabled():
    return _anomaly["enabled"]


@real(reason="anomaly mode is recorded; the engine does not trace forward stacks")
def is_anomaly_check_nan_enabled():
    return _anomaly["check_nan"]


@real(reason="anomaly mode is recorded; the engine does not trace forward stacks")
def set_anomaly_enabled(enabled, check_nan=True):
    _anomaly["enabled"], _anomaly["check_nan"] = bool(enabled), bool(check_nan)


@real(reason="forward grad mode of the C forward-mode AD (src/autograd/forward.c)")
def _is_fwd_grad_enabled():
    return _Cm()._tn_fw_enabled()


@real(reason="forward grad mode of the C forward-mode AD (src/autograd/forward.c)")
def _set_fwd_grad_enabled(v):
    _Cm()._tn_fw_set_enabled(bool(v))


def jvp_decompositions_stand_in():
    """forward_ad.make_dual imports torch._decomp.decompositions_for_jvp, which registers
    TorchScript graphs upstream's C++ forward AD runs for a few backward operators. The C
    forward mode here needs none (it differentiates every formula twice, forward.c) and no
    TorchScript compiler exists to build them, so the module is an empty stand-in."""
    name = "torch._decomp.decompositions_for_jvp"
    if name not in sys.modules:
        import types
        mod = types.ModuleType(name, jvp_decompositions_stand_in.__doc__)
        mod.decomposition_table_for_jvp = {}
        sys.modules[name] = mod


@real(reason="a forward-mode level of the C forward-mode AD (src/autograd/forward.c)")
def _enter_dual_level():
    jvp_decompositions_stand_in()
    return _Cm()._tn_fw_enter(False)


@real(reason="a forward-mode level of the C forward-mode AD (src/autograd/forward.c)")
def _exit_dual_level(*, level):
    _Cm()._tn_fw_exit(level, False)


@real(reason="the node the C engine is running in this thread")
def _current_autograd_node():
    return _Cm()._tn_current_node()


@real(reason="the id of the backward pass the C engine is running in this thread, -1 outside one")
def _current_graph_task_id():
    return _Cm()._tn_current_graph_task_id()


returning(C, "_current_graph_task_execution_order", [], "no backward pass is running", status="real")
refuse(C, "_will_engine_execute_node _increment_version "
          "_unsafe_reset_storage")


@real()
def _any_requires_grad(*args, **kwargs):
    return _needs_grad(args) or _needs_grad(tuple(kwargs.values()))


enum_(A, "CreationMeta", "DEFAULT IN_CUSTOM_FUNCTION MULTI_OUTPUT_NODE NO_GRAD_MODE INFERENCE_MODE")
enum_(A, "DeviceType", {"CPU": 0, "CUDA": 1, "MKLDNN": 2, "OPENGL": 3, "OPENCL": 4, "IDEEP": 5,
                        "HIP": 6, "FPGA": 7, "MAIA": 8, "XLA": 9, "Vulkan": 10, "Metal": 11,
                        "XPU": 12, "MPS": 13, "Meta": 14, "HPU": 15, "VE": 16, "Lazy": 17,
                        "IPU": 18, "MTIA": 19, "PrivateUse1": 20})
refuse(A, "ProfilerEvent TensorGeometry _ITraceActivity _InputMetadata _KinetoEvent "
          "_ProfilerDisableOptions _ProfilerResult", kind="type")

_hooks = threading.local()


def _hook_stack():
    if not hasattr(_hooks, "stack"):
        _hooks.stack = []
        _hooks.disabled = None
    return _hooks.stack


@real(A, reason="the C saved variable calls the top pack hook while the stack is not empty")
def _push_saved_tensors_default_hooks(pack, unpack):
    if _hooks_disabled_message() is not None:
        raise RuntimeError(_hooks_disabled_message())
    _hook_stack().append((pack, unpack))
    _Cm()._tn_saved_hooks_depth(1)


@real(A)
def _pop_saved_tensors_default_hooks():
    _hook_stack().pop()
    _Cm()._tn_saved_hooks_depth(-1)


@real(A)
def _top_saved_tensors_default_hooks(ignore_is_tracing=False):
    s = _hook_stack()
    return s[-1] if s else (None, None)


def _hooks_disabled_message():
    _hook_stack()
    return _hooks.disabled


class _Packed:
    """A Function's saved tensor as its pack hook returned it, with the unpack hook."""
    __slots__ = ("unpack_fn", "packed")

    def __init__(self, unpack_fn, packed):
        self.unpack_fn, self.packed = unpack_fn, packed

    def unpack(self):
        t = self.unpack_fn(self.packed)
        if not isinstance(t, _torch().Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        return t


def _tn_pack_saved(tensor):
    """Called by C for each tensor a node saves while hooks are on: (unpack, packed)."""
    s = _hook_stack()
    if not s:
        return None
    pack, unpack = s[-1]
    return (unpack, pack(tensor))


class SavedTensor:
    """torch._C._autograd.SavedTensor: a tensor saved with its version (checkpoint keeps
    the inputs it recomputes from this way)."""

    def __init__(self, tensor, is_output=False):
        self._t, self._v = tensor, tensor._version

    def unpack(self):
        if self._t._version != self._v:
            raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                               f"inplace operation: is at version {self._t._version}; expected version {self._v} "
                               "instead.")
        return self._t

    def register_hooks(self, pack, unpack):
        raise NotImplementedError("torch._C._autograd.SavedTensor.register_hooks is not implemented by torchnative")


add(A, "SavedTensor", SavedTensor, "real", "a tensor with its version, checked on unpack")


@real(A)
def _make_saved_tensor(tensor, is_output=False):
    return SavedTensor(tensor, is_output)


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
_enable_record_function _get_creation_meta _get_data_attr _get_sequence_nr
_prepare_profiler _profiler_type _record_function_with_args_enter _record_function_with_args_exit
_set_creation_meta""")


@real(A, reason="sets the storage's version counter (shared by its views, as upstream)")
def _unsafe_set_version_counter(tensors, versions):
    torch = _torch()
    if isinstance(tensors, torch.Tensor):
        tensors, versions = (tensors,), (versions,)
    if len(tensors) != len(versions):
        raise RuntimeError(f"tensors and versions must have the same length ({len(tensors)} vs {len(versions)})")
    for t, v in zip(tensors, versions):
        _Cm()._tn_set_version(t, int(v))
