"""torchnative.adapt: test-time adaptation as weight deltas over frozen, shared base
weights, whose lifetimes follow system events (docs/ADAPT.md).

    from torchnative import adapt
    model = adapt.wrap(model, method=adapt.Tent())   # or BNAdapt, EATA, SAR, MEMO, CoTTA, TTT, TLM
    model.online()                                   # adapt as it serves
    logits = model(x)
    adapt.events.emit("background")                  # lifetimes react: reset, persist, ship ...
    model.offline()                                  # serve the current delta, stop adapting
    model.reset()                                    # back to the base, bit for bit

Pure Python over the public torch API: it runs on torchnative and on upstream torch alike
(the comparison tests run it on both)."""
from . import augment, events
from .delta import BaseMismatchError, Delta, DeltaError, DeltaFormatError
from .guard import CollapseGuard
from .lifetimes import (Destination, Discard, Episodic, HandTo, Keep, Lifetime, Persistent, Save, Session,
                        Until)
from .methods import (CoTTA, EATA, MEMO, SAR, TLM, TTT, BNAdapt, Method, Tent, marginal_entropy,
                      softmax_entropy)
from .wrapper import Adapted, wrap

__all__ = ["wrap", "Adapted", "events", "augment", "Delta", "DeltaError", "BaseMismatchError", "DeltaFormatError",
           "CollapseGuard", "Lifetime", "Episodic", "Session", "Until", "Persistent", "Destination", "Discard",
           "Keep", "Save", "HandTo", "Method", "BNAdapt", "Tent", "EATA", "SAR", "MEMO", "CoTTA", "TTT", "TLM",
           "softmax_entropy", "marginal_entropy"]
