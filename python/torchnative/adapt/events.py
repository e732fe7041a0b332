"""System events that end or move test-time adaptation deltas: a small synchronous bus.

    from torchnative.adapt import events
    sub = events.subscribe("background", lambda name, payload: ...)
    events.emit("background")                  # every subscriber runs, in subscription order
    events.emit("user_switch", user="bob")     # a payload travels as keyword arguments
    sub.cancel()

The names a device raises are listed in KNOWN (background, foreground, user_switch,
sync_window, low_memory, session_end); an application may emit any other non-empty name
of its own. subscribe("*", fn) receives every event. Wrappers made by adapt.wrap subscribe
through a weak reference, so a wrapper that is dropped stops receiving events.
"low_memory" also returns the idle blocks of torchnative's large-block cache
(src/core/alloc.h) to the system, after the subscribers have dropped what they drop."""
import threading
import weakref

KNOWN = ("background", "foreground", "user_switch", "sync_window", "low_memory", "session_end")
ANY = "*"

_lock = threading.RLock()
_subs = {}  # name -> list of Subscription
_history = []  # (name, payload) of the last events, newest last (for debugging; bounded)
_HISTORY_MAX = 64


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise TypeError(f"an event name must be a non-empty str, got {name!r}")


class Subscription:
    """A registered callback; cancel() removes it. Callbacks receive (name, payload dict)."""

    __slots__ = ("name", "_fn", "_weak", "__weakref__")

    def __init__(self, name, fn, weak):
        self.name = name
        self._weak = weak
        self._fn = weakref.WeakMethod(fn) if weak else fn

    def _target(self):
        return self._fn() if self._weak else self._fn

    def cancel(self):
        with _lock:
            lst = _subs.get(self.name, [])
            if self in lst:
                lst.remove(self)


def subscribe(name, fn, *, weak=False):
    """Calls fn(name, payload) on every emit(name) (or on every event for name "*").
    weak=True holds a bound method through a weak reference (used by adapt.wrap)."""
    _check_name(name)
    if not callable(fn):
        raise TypeError(f"subscribe needs a callable, got {type(fn).__name__}")
    if weak and not hasattr(fn, "__self__"):
        raise TypeError("weak=True needs a bound method")
    sub = Subscription(name, fn, weak)
    with _lock:
        _subs.setdefault(name, []).append(sub)
    return sub


def emit(name, **payload):
    """Delivers event `name` with `payload` to its subscribers and to "*" subscribers,
    synchronously, in subscription order; returns how many callbacks ran. An exception in a
    callback propagates to the emitter after the remaining callbacks have run."""
    _check_name(name)
    if name == ANY:
        raise ValueError('"*" subscribes to every event; it cannot be emitted')
    with _lock:
        subs = list(_subs.get(name, ())) + list(_subs.get(ANY, ()))
        _history.append((name, dict(payload)))
        del _history[:-_HISTORY_MAX]
    ran, first_error = 0, None
    for s in subs:
        fn = s._target()
        if fn is None:  # a weakly held subscriber was collected
            s.cancel()
            continue
        try:
            fn(name, payload)
        except Exception as e:  # noqa: BLE001 - delivered after every subscriber ran
            if first_error is None:
                first_error = e
        ran += 1
    if name == "low_memory":
        import torch
        release = getattr(torch._C, "_tn_empty_cache", None)  # absent on upstream torch
        if release is not None:
            release()
    if first_error is not None:
        raise first_error
    return ran


def history():
    """The last events emitted, oldest first, as (name, payload) pairs."""
    with _lock:
        return list(_history)


def subscribers(name):
    """How many live callbacks listen to `name` (not counting "*")."""
    with _lock:
        return sum(1 for s in _subs.get(name, ()) if s._target() is not None)
