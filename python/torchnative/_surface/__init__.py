"""The Python-written part of torch._C: a registry of every stand-in and how honest it is.

Each concern module (dispatch, schema, jit, dynamo, distributed, ...) declares its names
through the helpers below at import time; `torchnative._C_bootstrap.install()` then puts
them into torch._C and its submodules, skipping every name the C code already defined
(C wins, so a Python stand-in can be replaced by C without touching these files).

Every entry has a status:
  real    -- behaves as upstream for everything torchnative supports;
  inert   -- exists so upstream Python can import/configure itself; harmless because the
             feature it configures does not exist here (the reason says why);
  refuse  -- raises NotImplementedError naming itself ("torch._C.<name> is not
             implemented by torchnative");
  c       -- provided by the C extension (filled in by install()).

Nothing here imports torch: this runs while `import torch` is initialising torch._C.
"""

import enum
import types

# ("torch._C._dynamo.guards", "GuardManager") -> (status, reason); filled by install().
REGISTRY = {}

# Declaration order matters only for submodules (parents before children).
_ENTRIES = []           # (module_name, attr_name, obj, status, reason)
_SUBMODULES = {}        # dotted module name -> module object we created

C = "torch._C"


def _qual(module_name, name):
    return module_name + "." + name


def submodule(dotted, attr=None):
    """Return the stand-in module object for `dotted` (e.g. "torch._C._dynamo.guards"),
    creating it on first use. `attr` is the attribute name on the parent when it differs
    from the last component (upstream names _dynamo.compiled_autograd
    "torch._C._dynamo.autograd_compiler")."""
    m = _SUBMODULES.get(dotted)
    if m is None:
        m = types.ModuleType(dotted)
        _SUBMODULES[dotted] = m
        parent, _, last = dotted.rpartition(".")
        _ENTRIES.append((parent, attr or last, m, "real", "submodule"))
    return m


def add(module_name, name, obj, status, reason=""):
    """Declare one stand-in; status is 'real', 'inert' or 'refuse'."""
    assert status in ("real", "inert", "refuse"), status
    _ENTRIES.append((module_name, name, obj, status, reason))
    return obj


def real(module_name=C, name=None, reason=""):
    """Decorator: declare a function or class that really does its job."""
    def deco(obj):
        add(module_name, name or obj.__name__, obj, "real", reason)
        return obj
    return deco


def inert(module_name=C, name=None, reason=""):
    """Decorator: declare a harmless stand-in; `reason` must say why it is harmless."""
    def deco(obj):
        add(module_name, name or obj.__name__, obj, "inert", reason)
        return obj
    return deco


def refusal_message(module_name, name):
    return f"{_qual(module_name, name)} is not implemented by torchnative"


def refusing_function(module_name, name):
    """A function that raises NotImplementedError naming itself."""
    msg = refusal_message(module_name, name)

    def refused(*args, **kwargs):
        raise NotImplementedError(msg)

    refused.__name__ = refused.__qualname__ = name
    refused.__module__ = module_name
    # No __doc__: upstream's _add_docstr (which raises on an existing docstring) documents
    # some of these names at import.
    return refused


def refusing_type(module_name, name, bases=(object,)):
    """A class that can be named, subclassed and isinstance-checked, but whose
    construction raises NotImplementedError naming it."""
    msg = refusal_message(module_name, name)

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(msg)

    cls = type(name, bases, {"__init__": __init__, "__doc__": None, "__module__": module_name})
    return cls


def refuse(module_name, names, kind="function", reason=""):
    """Declare whitespace-separated `names` in `module_name` as refusals.
    kind is 'function' or 'type'."""
    for n in names.split():
        obj = refusing_function(module_name, n) if kind == "function" else refusing_type(module_name, n)
        add(module_name, n, obj, "refuse", reason)


def constants(module_name, values, reason, status="inert"):
    """Declare plain values (flags, constants)."""
    for n, v in values.items():
        add(module_name, n, v, status, reason)


def returning(module_name, names, value, reason, status="inert"):
    """Declare whitespace-separated functions that accept anything and return `value`
    (a fresh copy when it is a list/dict/set)."""
    for n in names.split():
        def f(*args, _v=value, **kwargs):
            if isinstance(_v, (list, dict, set)):
                return type(_v)(_v)
            return _v
        f.__name__ = f.__qualname__ = n
        f.__module__ = module_name
        add(module_name, n, f, status, reason)


class PyBindEnum(enum.Enum):
    """Base for pybind11-style enums: members have .name/.value, int() works, repr is
    <Type.NAME: value>, str is Type.NAME, and Type(value) looks a member up."""

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"

    def __getstate__(self):
        return self.value


def make_enum(module_name, name, members, base=PyBindEnum, qualname=None):
    """Create a pybind11-style enum. `members` is a dict name->value or a whitespace
    separated string of names numbered from 0."""
    if isinstance(members, str):
        members = {n: i for i, n in enumerate(members.split())}
    cls = base(name, list(members.items()), module=module_name, qualname=qualname or name)
    return cls


def enum_(module_name, name, members, reason="", status="real"):
    """Declare an enum type in module_name."""
    cls = make_enum(module_name, name, members)
    add(module_name, name, cls, status, reason or "enum with upstream's member names/values")
    return cls


def entries():
    return list(_ENTRIES)


def submodules():
    return dict(_SUBMODULES)
