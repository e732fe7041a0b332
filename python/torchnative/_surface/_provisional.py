"""TEMPORARY Python stand-ins for names the C extension is to provide (torch-function
mode stack and its helpers). apply() adds each only when C lacks it and records it as
status 'provisional' in the registry; once C defines a name this file no longer applies
to it. Listed in docs/SURFACE-STATUS.md; delete entries as C takes them over."""

import enum
import threading

from torchnative._surface import REGISTRY

_tls = threading.local()


def _st():
    if not hasattr(_tls, "stack"):
        _tls.stack = []
        _tls.state = 0          # 0 ENABLED, 1 SUBCLASSES_DISABLED, 2 ALL_DISABLED
        _tls.skip_next = False
    return _tls


class _TorchFunctionState(enum.Enum):
    ENABLED = 0
    SUBCLASSES_DISABLED = 1
    ALL_DISABLED = 2


def _is_torch_function_mode_enabled():
    s = _st()
    return bool(s.stack) and s.state != 2


def _len_torch_function_stack():
    return len(_st().stack)


def _get_function_stack_at(i):
    return _st().stack[i]


def _push_on_torch_function_stack(mode):
    _st().stack.append(mode)


def _pop_torch_function_stack():
    return _st().stack.pop()


def _is_torch_function_enabled():
    return _st().state == 0


def _is_torch_function_all_disabled():
    return _st().state == 2


def _get_torch_function_state():
    return _TorchFunctionState(_st().state)


def _set_torch_function_state(state):
    _st().state = int(state.value if isinstance(state, _TorchFunctionState) else state)


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    return func(*args, **(kwargs or {}))


def _overrides(obj):
    import sys
    c = sys.modules.get("torch._C")
    tb = getattr(c, "TensorBase", None)
    t = type(obj)
    f = getattr(t, "__torch_function__", None)
    if f is None:
        return False
    f = getattr(f, "__func__", f)
    return f is not _disabled_torch_function_impl and not (tb is not None and t is tb)


def _has_torch_function(args):
    s = _st()
    if s.state == 2:
        return False
    if s.stack:
        return True
    if s.state == 1:
        return False
    return any(_overrides(a) for a in args)


def _has_torch_function_unary(a):
    return _has_torch_function((a,))


def _has_torch_function_variadic(*args):
    return _has_torch_function(args)


class _StateGuard:
    _target = 1

    def __enter__(self):
        s = _st()
        self._old = s.state
        s.state = max(s.state, self._target) if self._target else 0
        return self

    def __exit__(self, *exc):
        _st().state = self._old
        return False


class DisableTorchFunctionSubclass(_StateGuard):
    _target = 1


class DisableTorchFunction(_StateGuard):
    _target = 2


class _EnableTorchFunction(_StateGuard):
    _target = 0


def _skip_one_hop_torch_function(*args, **kwargs):
    raise NotImplementedError("torch._C._skip_one_hop_torch_function is not implemented by torchnative")


def _set_skip_next_torch_function(v=True):
    _st().skip_next = bool(v)


def _peek_should_skip_torch_function():
    return _st().skip_next


NAMES = [n for n in list(globals()) if not n.startswith("__") and n not in
         ("enum", "threading", "REGISTRY", "_tls", "_st", "_StateGuard", "_overrides", "NAMES", "apply")]


def apply(module):
    """Add each stand-in the C extension did not define."""
    for n in NAMES:
        if n not in module.__dict__:
            obj = globals()[n]
            try:
                obj.__module__ = "torch._C"
            except (AttributeError, TypeError):
                pass
            setattr(module, n, obj)
            REGISTRY["torch._C." + n] = ("provisional", "Python stand-in until C provides it")
