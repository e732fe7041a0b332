"""Called by torch._C's init to add the part of the surface that is written in Python.

Must not import torch (torch is being imported when this runs). The stand-ins live in
torchnative._surface.*; this module only applies them (C wins: a name the C code already
defined is left alone and recorded as status 'c')."""

import sys
import types

from torchnative import _surface
from torchnative._surface import REGISTRY

# Concern modules, in the order their names are declared. Importing them fills
# torchnative._surface._ENTRIES.
_CONCERNS = (
    "flags", "dispatch", "schema", "jit", "autograd", "profiler", "functorch",
    "dynamo", "distributed", "misc", "optim",
)


class _TensorMeta(type):
    """Metaclass of torch._C.TensorBase (upstream: torch._C._TensorMeta). nn.Parameter's
    metaclass subclasses it; it only has to be a plain `type` subclass."""


_TensorMeta.__module__ = "torch._C"


def make_tensor_base(impl_type, ns=None):
    """Create TensorBase = _TensorMeta("TensorBase", (impl_type,), ns). Called from C: the
    limited API has no PyType_FromMetaclass, so the class with the custom metaclass is
    made by calling the metaclass on the C implementation type."""
    ns = dict(ns or {})
    ns.setdefault("__module__", "torch._C")
    ns.setdefault("__slots__", ())
    return _TensorMeta("TensorBase", (impl_type,), ns)


def _set_module(obj, module_name):
    if isinstance(obj, (type, types.FunctionType)):
        try:
            obj.__module__ = module_name
        except (AttributeError, TypeError):
            pass


def install(module):
    """Add every declared stand-in to `module` (torch._C) and its submodules, unless C
    already defined the name. Records each name's status in torchnative._surface.REGISTRY."""
    import importlib

    for name in _CONCERNS:
        importlib.import_module("torchnative._surface." + name)

    actual = {"torch._C": module}     # dotted name -> module object really in use
    ours = _surface.submodules()
    for mod_name, name, obj, status, reason in _surface.entries():
        target = actual.get(mod_name)
        if target is None:
            raise RuntimeError(f"torchnative bootstrap: parent module {mod_name} not created yet")
        key = mod_name + "." + name
        if isinstance(obj, types.ModuleType) and ours.get(obj.__name__) is obj:
            existing = target.__dict__.get(name)
            if isinstance(existing, types.ModuleType):
                actual[obj.__name__] = existing      # C made the submodule: fill it
                REGISTRY.setdefault(key, ("c", "submodule created by C"))
                continue
            setattr(target, name, obj)
            actual[obj.__name__] = obj
            REGISTRY[key] = (status, reason)
            continue
        if key in REGISTRY:
            raise RuntimeError(f"torchnative bootstrap: {key} is declared twice")
        if name in target.__dict__:
            REGISTRY[key] = ("c", "provided by the C extension")
            continue
        _set_module(obj, target.__name__)
        setattr(target, name, obj)
        REGISTRY[key] = (status, reason)

    if "_TensorMeta" not in module.__dict__:
        module._TensorMeta = _TensorMeta
        REGISTRY["torch._C._TensorMeta"] = ("real", "metaclass of TensorBase")
    else:
        REGISTRY["torch._C._TensorMeta"] = ("c", "provided by the C extension")

    if "_TensorBase" not in module.__dict__ and "TensorBase" in module.__dict__:
        module._TensorBase = module.TensorBase       # upstream's legacy alias
        REGISTRY["torch._C._TensorBase"] = ("real", "alias of TensorBase")

    from torchnative._surface import _provisional
    _provisional.apply(module)
    return None
