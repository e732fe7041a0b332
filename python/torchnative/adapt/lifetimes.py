"""Lifetimes (when a delta ends) and destinations (what happens to it then).

Lifetimes, declared per wrapper (every user's delta over the base follows it):
    Episodic()              per request: the delta ends after every forward
    Session()               until model.end_session() or the "session_end" event
    Until("background", …)  until one of the named events (device or application names)
    Persistent(path, …)     never ends; loaded from `path` when its user is served (the file
                            is verified against the base first) and saved there on the
                            `save_on` events; `path` may contain {user}
Destinations, on expiry:
    "discard"               dropped; the base is served
    "keep"                  kept in memory (model.kept[user]); model.restore(user) re-applies it
    Save(path)              written to a delta file with its base hash; path may contain
                            {user}, {event}, {n}
    HandTo(sink)            sink(update, meta): this device's update for federated learning
                            (a plain callable also means HandTo)

The hand-off interface to federated learning (torchnative.nn.federated or anything else):
    sink(update: dict[str, Tensor], meta: dict) -> None
    update   "<module>.<attr>"  -> adapted value minus base value (full tensors; float)
             "<module>.lora_A" / "<module>.lora_B" -> the LoRA factors (the weight update is
             lora_B @ lora_A * meta["lora_scale"])
    meta     base_hash, method, user, steps, samples (the FedAvg weight), lora_scale,
             reason (the event that ended the delta), kinds {name: "full_diff" | "lora_A" | "lora_B"}
The tensors are copies: the sink may keep them."""
import os


class Lifetime:
    """Base class: which events end a delta, and whether every request ends it."""
    per_request = False
    events = frozenset()

    def ends_on(self, event):
        return event in self.events

    def __repr__(self):
        return f"{type(self).__name__}()"


class Episodic(Lifetime):
    """Per request: adapt on one forward, answer, then drop the delta (MEMO's setting)."""
    per_request = True


class Session(Lifetime):
    """Until the session ends (model.end_session() or the "session_end" event)."""
    events = frozenset({"session_end"})


class Until(Lifetime):
    """Until any of the named events: "background", "user_switch", "sync_window",
    "low_memory", "session_end" or the application's own names."""

    def __init__(self, *events):
        if not events:
            raise ValueError("Until needs at least one event name")
        for e in events:
            if not isinstance(e, str) or not e or e == "*":
                raise ValueError(f"Until: invalid event name {e!r}")
        self.events = frozenset(events)

    def __repr__(self):
        return f"Until({', '.join(sorted(self.events))})"


class Persistent(Lifetime):
    """Never ends. The delta lives in `path` (may contain {user}): loaded, after
    verification against the base, when its user is first served; saved on `save_on`."""

    def __init__(self, path, save_on=("background", "low_memory", "session_end", "user_switch")):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"Persistent needs a file path, got {type(path).__name__}")
        self.path = os.fspath(path)
        self.save_on = frozenset(save_on)

    def path_for(self, user):
        return self.path.format(user=user)

    def __repr__(self):
        return f"Persistent({self.path!r})"


class Destination:
    """What happens to a delta when its lifetime ends."""
    name = "destination"

    def __repr__(self):
        return f"{type(self).__name__}()"


class Discard(Destination):
    name = "discard"


class Keep(Destination):
    name = "keep"


class Save(Destination):
    """Write the expired delta to `path` ({user}, {event}, {n} are filled in)."""
    name = "save"

    def __init__(self, path):
        self.path = os.fspath(path)

    def __repr__(self):
        return f"Save({self.path!r})"


class HandTo(Destination):
    """Give the expired delta to `sink(update, meta)` (federated learning's client update)."""
    name = "hand"

    def __init__(self, sink):
        if not callable(sink):
            raise TypeError(f"HandTo needs a callable sink(update, meta), got {type(sink).__name__}")
        self.sink = sink

    def __repr__(self):
        return f"HandTo({getattr(self.sink, '__name__', type(self.sink).__name__)})"


def as_lifetime(x):
    if isinstance(x, Lifetime):
        return x
    if x == "episodic":
        return Episodic()
    if x == "session":
        return Session()
    raise TypeError(f"lifetime must be a Lifetime (Episodic(), Session(), Until(...), Persistent(path)) or "
                    f"'episodic'/'session', got {x!r}")


def as_destination(x):
    if isinstance(x, Destination):
        return x
    if x == "discard":
        return Discard()
    if x == "keep":
        return Keep()
    if callable(x):
        return HandTo(x)
    raise TypeError(f"on_expiry must be 'discard', 'keep', Save(path), HandTo(sink) or a callable sink, got {x!r}")
