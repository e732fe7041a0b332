"""DispatchKey, DispatchKeySet and the torch._C._dispatch_* functions, mirroring c10.

torchnative has one door in C and no per-key kernel tables, but upstream Python reasons
about dispatch keys (HigherOrderOperator, OpOverload.py_impl, functorch, fake tensors).
The key enum and key-set algebra here are real (same numbering and bit layout as
c10/core/DispatchKey.h and DispatchKeySet.h, checked against upstream by
tests/test_surface.py). Thread-local include/exclude sets are recorded and reported
faithfully, but the C door does not consult them (status 'inert' with that reason).
Python kernels registered through torch.library are recorded in LIBRARY (see schema.py);
aten operators never run them (the C door has the kernel), operators outside aten do.
"""

import threading

from torchnative._surface import C, PyBindEnum, add, inert, make_enum, real, refuse, returning

# ---- DispatchKey ------------------------------------------------------------------
# c10's functionality keys in order (value = position). Every one of them has a bit in a
# DispatchKeySet; only the ones in _EXPOSED are members of the Python enum upstream.
_FUNCTIONALITY = """
Undefined Dense FPGA Vulkan Metal Quantized CustomRNGKeyId MkldnnCPU Sparse SparseCsr
NestedTensor BackendSelect Fake Python FuncTorchDynamicLayerBackMode Functionalize
Conjugate Negative ZeroTensor ADInplaceOrView AutogradOther AutogradFunctionality
AutogradNestedTensor Tracer AutocastCPU AutocastMTIA AutocastMAIA AutocastXPU AutocastIPU
AutocastHPU AutocastXLA AutocastMPS AutocastCUDA AutocastPrivateUse1 FuncTorchBatched
BatchedNestedTensor FuncTorchVmapMode Batched VmapMode FuncTorchGradWrapper DeferredInit
PythonTLSSnapshot FuncTorchDynamicLayerFrontMode TESTING_ONLY_GenericWrapper
TESTING_ONLY_GenericMode PreDispatch PythonDispatcher
""".split()
FUNCTIONALITY = {n: i for i, n in enumerate(_FUNCTIONALITY)}
END_OF_FUNCTIONALITY = len(_FUNCTIONALITY)            # 47

# Backend components, in bit order (bit 0 = CPU).
BACKENDS = "CPU CUDA HIP XLA MPS IPU XPU HPU VE Lazy MTIA MAIA PrivateUse1 PrivateUse2 PrivateUse3 Meta".split()
NUM_BACKENDS = len(BACKENDS)                          # 16
FULL_BACKEND_MASK = (1 << NUM_BACKENDS) - 1

# Functionality keys that are "per backend": each has one runtime key per backend.
# (functionality, runtime-key prefix, Start-of marker name)
_PER_BACKEND = (
    ("Dense", "", "StartOfDenseBackends", "EndOfDenseBackends"),
    ("Quantized", "Quantized", "StartOfQuantizedBackends", "EndOfQuantizedBackends"),
    ("Sparse", "Sparse", "StartOfSparseBackends", "EndOfSparseBackends"),
    ("SparseCsr", "SparseCsr", "StartOfSparseCsrBackends", "EndOfSparseCsrBackends"),
    ("NestedTensor", "NestedTensor", "StartOfNestedTensorBackends", "EndOfNestedTensorBackends"),
    ("AutogradFunctionality", "Autograd", "StartOfAutogradFunctionalityBackends",
     "EndOfAutogradFunctionalityBackends"),
)
PER_BACKEND = {f: prefix for f, prefix, _, _ in _PER_BACKEND}

# Functionality keys upstream binds in Python (others exist only inside key sets).
_EXPOSED = """
Undefined Dense Quantized Sparse SparseCsr NestedTensor BackendSelect Python
FuncTorchDynamicLayerBackMode Functionalize Conjugate Negative ZeroTensor ADInplaceOrView
AutogradOther AutogradFunctionality AutogradNestedTensor AutocastCPU AutocastXPU AutocastIPU
AutocastHPU AutocastMPS AutocastCUDA AutocastPrivateUse1 FuncTorchBatched FuncTorchVmapMode
FuncTorchGradWrapper PythonTLSSnapshot FuncTorchDynamicLayerFrontMode PreDispatch
PythonDispatcher
""".split()

# Alias keys, numbered after the last runtime key.
_ALIASES = """Autograd CompositeImplicitAutograd FuncTorchBatchedDecomposition
CompositeImplicitAutogradNestedTensor CompositeExplicitAutograd
CompositeExplicitAutogradNonFunctional""".split()


def _key_table():
    """Python-visible key values and the runtime keys' (functionality, backend bit).
    Within each per-backend block backend b has value Start+1+b and the End-of marker
    equals the last (Meta) value; alias keys follow the last block."""
    members = {}
    runtime = {}
    for n in _EXPOSED:
        members[n] = FUNCTIONALITY[n]
    v = END_OF_FUNCTIONALITY
    for func, prefix, start, end in _PER_BACKEND:
        start_v = v + 1
        members[start] = start_v
        runtime[start_v] = (FUNCTIONALITY[func], None)
        for b, backend in enumerate(BACKENDS):
            val = start_v + 1 + b
            members[prefix + backend] = val
            runtime[val] = (FUNCTIONALITY[func], b)
        members[end] = start_v + NUM_BACKENDS
        v = start_v + NUM_BACKENDS
    for a in _ALIASES:
        v += 1
        members[a] = v
    return members, runtime


_KEY_VALUES, _RUNTIME = _key_table()


class _DispatchKeyBase(PyBindEnum):
    pass


DispatchKey = make_enum(C, "DispatchKey", _KEY_VALUES, base=_DispatchKeyBase)
add(C, "DispatchKey", DispatchKey, "real", "c10 numbering (checked against upstream)")
ALIAS_VALUES = {_KEY_VALUES[a] for a in _ALIASES}


def _to_key(k):
    """Accept a DispatchKey or a key name (upstream's bindings accept strings too)."""
    if isinstance(k, DispatchKey):
        return k
    if isinstance(k, str):
        try:
            return DispatchKey[k]
        except KeyError:
            raise RuntimeError(f"could not parse dispatch key: {k}") from None
    if isinstance(k, int):
        return DispatchKey(k)
    raise TypeError(f"expected a DispatchKey, got {type(k).__name__}")


def _functionality_name(idx):
    return _FUNCTIONALITY[idx]


def _key_repr(value):
    """Bit pattern of DispatchKeySet(key)."""
    if value in _RUNTIME:
        f, b = _RUNTIME[value]
        return (0 if b is None else 1 << b) | (1 << (NUM_BACKENDS + f - 1))
    if value == 0 or value in ALIAS_VALUES or value > END_OF_FUNCTIONALITY:
        return 0
    return 1 << (NUM_BACKENDS + value - 1)


class DispatchKeySet:
    """A c10::DispatchKeySet: 16 backend bits then one bit per functionality key."""

    __slots__ = ("_repr",)

    def __init__(self, key=None):
        if key is None:
            self._repr = 0
        elif isinstance(key, DispatchKeySet):
            self._repr = key._repr
        else:
            self._repr = _key_repr(_to_key(key).value)

    @classmethod
    def from_raw_repr(cls, x):
        s = cls.__new__(cls)
        s._repr = int(x)
        return s

    def raw_repr(self):
        return self._repr

    def __or__(self, other):
        return DispatchKeySet.from_raw_repr(self._repr | other._repr)

    def __and__(self, other):
        return DispatchKeySet.from_raw_repr(self._repr & other._repr)

    def __sub__(self, other):
        # c10: subtraction removes functionality bits only; backend bits stay.
        return DispatchKeySet.from_raw_repr(self._repr & (FULL_BACKEND_MASK | ~other._repr))

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and self._repr == other._repr

    def __hash__(self):
        return hash(self._repr)

    def add(self, key):
        return self | DispatchKeySet(key)

    def remove(self, key):
        r = DispatchKeySet(key)._repr & ~FULL_BACKEND_MASK
        return DispatchKeySet.from_raw_repr(self._repr & ~r)

    def has(self, key):
        r = DispatchKeySet(key)._repr
        return (self._repr & r) == r

    def has_all(self, ks):
        return (self._repr & ks._repr) == ks._repr

    def has_any(self, ks):
        return (self._repr & ks._repr) != 0

    def isEmpty(self):
        return self._repr == 0

    def _functionalities(self):
        for f in range(1, END_OF_FUNCTIONALITY):
            if self._repr & (1 << (NUM_BACKENDS + f - 1)):
                yield f

    def _backends(self):
        for b in range(NUM_BACKENDS):
            if self._repr & (1 << b):
                yield b

    def _runtime_names(self):
        """Keys in increasing priority, as c10's iterator yields them."""
        backends = list(self._backends())
        for f in self._functionalities():
            name = _FUNCTIONALITY[f]
            if name in PER_BACKEND:
                for b in backends:
                    yield PER_BACKEND[name] + BACKENDS[b]
            else:
                yield name

    def __iter__(self):
        for n in self._runtime_names():
            if n in DispatchKey.__members__:
                yield DispatchKey[n]

    def highestPriorityTypeId(self):
        fs = list(self._functionalities())
        if not fs:
            return DispatchKey.Undefined
        name = _FUNCTIONALITY[fs[-1]]
        if name in PER_BACKEND:
            bs = list(self._backends())
            if not bs:
                start = [m[2] for m in _PER_BACKEND if m[0] == name][0]
                return DispatchKey[start]
            return DispatchKey[PER_BACKEND[name] + BACKENDS[bs[-1]]]
        return DispatchKey[name] if name in DispatchKey.__members__ else DispatchKey.Undefined

    def __repr__(self):
        return "DispatchKeySet(" + ", ".join(self._runtime_names()) + ")"

    __str__ = __repr__

    def __reduce__(self):
        return (DispatchKeySet.from_raw_repr, (self._repr,))


add(C, "DispatchKeySet", DispatchKeySet, "real", "c10 bit layout and set algebra")


def _set_of(*names):
    s = DispatchKeySet()
    for n in names:
        if n in DispatchKey.__members__:
            s = s | DispatchKeySet(DispatchKey[n])
        else:
            f = FUNCTIONALITY[n]
            s = s | DispatchKeySet.from_raw_repr(1 << (NUM_BACKENDS + f - 1))
    return s


def _full():
    return DispatchKeySet.from_raw_repr((1 << (NUM_BACKENDS + END_OF_FUNCTIONALITY - 1)) - 1)


def _functionality_bits(*names):
    r = 0
    for n in names:
        r |= 1 << (NUM_BACKENDS + FUNCTIONALITY[n] - 1)
    return r


_ALL_BACKENDS = FULL_BACKEND_MASK
_AUTOCAST = ("AutocastCPU AutocastMTIA AutocastMAIA AutocastXPU AutocastIPU AutocastHPU "
             "AutocastXLA AutocastMPS AutocastCUDA AutocastPrivateUse1").split()
_AUTOGRAD_RELATED = ("AutogradFunctionality AutogradOther AutogradNestedTensor "
                     "ADInplaceOrView").split()

# Key sets upstream exports as values (same contents; see c10/core/DispatchKeySet.h).
_after_autograd_keyset = DispatchKeySet.from_raw_repr(
    _ALL_BACKENDS | sum(1 << (NUM_BACKENDS + f - 1) for f in range(1, FUNCTIONALITY["AutogradOther"]))
    | _functionality_bits("PythonDispatcher"))
_after_ADInplaceOrView_keyset = DispatchKeySet.from_raw_repr(
    _ALL_BACKENDS | sum(1 << (NUM_BACKENDS + f - 1) for f in range(1, FUNCTIONALITY["ADInplaceOrView"]))
    | _functionality_bits("PythonDispatcher"))
_dispatch_autogradother_backends = DispatchKeySet.from_raw_repr(
    _ALL_BACKENDS | _functionality_bits("FPGA", "Vulkan", "Metal", "Quantized",
                                        "CustomRNGKeyId", "MkldnnCPU", "Sparse", "SparseCsr"))
_additional_keys_to_prop_for_wrapper_tensors = DispatchKeySet.from_raw_repr(
    sum(1 << BACKENDS.index(b) for b in ("CPU", "CUDA", "XLA", "XPU", "HPU", "PrivateUse1"))
    | _functionality_bits("Dense", "Sparse", "SparseCsr", "Conjugate", "Negative"))
for _n in ("_after_autograd_keyset", "_after_ADInplaceOrView_keyset",
           "_dispatch_autogradother_backends", "_additional_keys_to_prop_for_wrapper_tensors"):
    add(C, _n, globals()[_n], "real", "same key set as upstream")


@real()
def _dispatch_keyset_full():
    return _full()


@real()
def _dispatch_keyset_full_after(key):
    """Every backend bit plus every functionality strictly below `key`."""
    f = _to_functionality_key(key).value
    r = (1 << (NUM_BACKENDS + f - 1)) - 1 if f > 0 else (1 << (NUM_BACKENDS - 1)) - 1
    return DispatchKeySet.from_raw_repr(r | _functionality_bits("PythonDispatcher"))


@real()
def _dispatch_keyset_to_string(ks):
    return repr(ks)


@real()
def _dispatch_key_name(key):
    return _to_key(key).name


@real()
def _dispatch_key_parse(name):
    return _to_key(name)


@real()
def _parse_dispatch_key(name):
    try:
        return DispatchKey[name]
    except KeyError:
        return None


@real()
def _dispatch_num_backends():
    return NUM_BACKENDS


@real()
def _dispatch_is_alias_key(key):
    return _to_key(key).value in ALIAS_VALUES


_BACKEND_FUNCTIONALITIES = ("Dense", "FPGA", "Vulkan", "Metal", "Quantized", "CustomRNGKeyId",
                            "MkldnnCPU", "Sparse", "SparseCsr")
_AUTOGRAD_FUNCTIONALITIES = ("AutogradFunctionality", "AutogradOther", "AutogradNestedTensor")
_ALIAS_CONTENTS = {
    "Autograd": lambda: DispatchKeySet.from_raw_repr(
        _ALL_BACKENDS | _functionality_bits(*_AUTOGRAD_FUNCTIONALITIES)),
    "CompositeExplicitAutograd": lambda: DispatchKeySet.from_raw_repr(
        _ALL_BACKENDS | _functionality_bits(*_BACKEND_FUNCTIONALITIES)),
    "CompositeImplicitAutograd": lambda: DispatchKeySet.from_raw_repr(
        _ALL_BACKENDS | _functionality_bits(*_BACKEND_FUNCTIONALITIES, *_AUTOGRAD_FUNCTIONALITIES,
                                            "NestedTensor")),
}
_ALIAS_CONTENTS["CompositeExplicitAutogradNonFunctional"] = _ALIAS_CONTENTS["CompositeExplicitAutograd"]


@real()
def _dispatch_is_included_in_alias(key, alias):
    k, a = _to_key(key), _to_key(alias)
    if k == a:
        return True
    fn = _ALIAS_CONTENTS.get(a.name)
    if fn is None:
        return False
    # c10: k != Undefined && runtime set of alias has k (an empty set is always "had").
    return k.value != 0 and fn().has_all(DispatchKeySet(k))


@real()
def _to_functionality_key(key):
    k = _to_key(key)
    if k.value in _RUNTIME:
        return DispatchKey[_FUNCTIONALITY[_RUNTIME[k.value][0]]]
    if k.value < END_OF_FUNCTIONALITY:
        return k
    return DispatchKey.Undefined


@real()
def _functionality_to_backend_keys(key):
    k = _to_key(key)
    prefix = PER_BACKEND.get(k.name)
    if prefix is None:
        return [k]
    return [DispatchKey[prefix + b] for b in BACKENDS]


@real()
def _dispatch_get_backend_keyset_from_autograd(key):
    k = _to_key(key)
    if k.value in _RUNTIME and _FUNCTIONALITY[_RUNTIME[k.value][0]] == "AutogradFunctionality":
        return DispatchKeySet(DispatchKey[BACKENDS[_RUNTIME[k.value][1]]])
    if k.name == "AutogradOther":
        return _dispatch_autogradother_backends
    if k.name == "AutogradNestedTensor":
        return _set_of("NestedTensor") | DispatchKeySet.from_raw_repr(_ALL_BACKENDS)
    return DispatchKeySet()


# ---- thread-local include / exclude sets -----------------------------------------
class _TLS(threading.local):
    def __init__(self):
        self.included = _set_of("BackendSelect", "ADInplaceOrView")
        self.excluded = _set_of(*_AUTOCAST)


_tls = _TLS()
_TLS_REASON = "key sets are tracked faithfully; the C door does not consult them"


@inert(reason=_TLS_REASON)
def _dispatch_tls_local_include_set():
    return _tls.included


@inert(reason=_TLS_REASON)
def _dispatch_tls_local_exclude_set():
    return _tls.excluded


@inert(reason=_TLS_REASON)
def _dispatch_tls_is_dispatch_key_excluded(key):
    return _tls.excluded.has(_to_key(key))


@inert(reason=_TLS_REASON)
def _dispatch_tls_is_dispatch_key_included(key):
    return _tls.included.has(_to_key(key))


@inert(reason=_TLS_REASON)
def _dispatch_tls_set_dispatch_key_excluded(key, desired=True):
    ks = DispatchKeySet(_to_key(key))
    _tls.excluded = (_tls.excluded | ks) if desired else (_tls.excluded - ks)


@inert(reason=_TLS_REASON)
def _dispatch_tls_set_dispatch_key_included(key, desired=True):
    ks = DispatchKeySet(_to_key(key))
    _tls.included = (_tls.included | ks) if desired else (_tls.included - ks)


def _as_keyset(x):
    if isinstance(x, DispatchKeySet):
        return x
    return DispatchKeySet(_to_key(x))


class _KeyGuard:
    """Base for RAII guards: context managers that restore the TLS sets on exit."""

    def __enter__(self):
        self._saved = (_tls.included, _tls.excluded)
        self._apply()
        return self

    def __exit__(self, *exc):
        _tls.included, _tls.excluded = self._saved
        return False

    def _apply(self):
        pass


def _guard(name, apply, init_arg=True):
    def __init__(self, keys=None):
        self._keys = _as_keyset(keys) if keys is not None else None
    cls = type(name, (_KeyGuard,), {"__init__": __init__, "_apply": apply, "__module__": C})
    add(C, name, cls, "inert", _TLS_REASON)
    return cls


def _exclude(self):
    _tls.excluded = _tls.excluded | self._keys


def _include(self):
    _tls.included = _tls.included | self._keys


def _force(self):
    pass


_guard("ExcludeDispatchKeyGuard", _exclude)
_guard("_ExcludeDispatchKeyGuard", _exclude)
_guard("_IncludeDispatchKeyGuard", _include)
_guard("_PreserveDispatchKeyGuard", lambda self: None)


class _ForceDispatchKeyGuard(_KeyGuard):
    def __init__(self, include=None, exclude=None):
        self._inc, self._exc = include, exclude

    def _apply(self):
        if self._inc is not None:
            _tls.included = self._inc
        if self._exc is not None:
            _tls.excluded = self._exc


add(C, "_ForceDispatchKeyGuard", _ForceDispatchKeyGuard, "inert", _TLS_REASON)


class _SetExcludeDispatchKeyGuard(_KeyGuard):
    def __init__(self, key, desired):
        self._key, self._desired = _to_key(key), desired

    def _apply(self):
        _dispatch_tls_set_dispatch_key_excluded(self._key, self._desired)


add(C, "_SetExcludeDispatchKeyGuard", _SetExcludeDispatchKeyGuard, "inert", _TLS_REASON)


def _simple_guard(name, reason, apply=lambda self: None):
    cls = type(name, (_KeyGuard,), {"__init__": lambda self, *a, **k: None,
                                    "_apply": apply, "__module__": C})
    add(C, name, cls, "inert", reason)


_simple_guard("_AutoDispatchBelowAutograd", _TLS_REASON,
              lambda self: setattr(_tls, "excluded", _tls.excluded | DispatchKeySet.from_raw_repr(
                  _ALL_BACKENDS | _functionality_bits(*_AUTOGRAD_RELATED[:3]))))
_simple_guard("_AutoDispatchBelowADInplaceOrView", _TLS_REASON,
              lambda self: setattr(_tls, "excluded", _tls.excluded | DispatchKeySet.from_raw_repr(
                  _ALL_BACKENDS | _functionality_bits(*_AUTOGRAD_RELATED))))
_simple_guard("_DisableAutocast", "autocast does not exist in torchnative")
_simple_guard("_DisableFuncTorch", "functorch transforms do not exist in torchnative")
_simple_guard("_EnablePreDispatch", _TLS_REASON, lambda self: setattr(
    _tls, "included", _tls.included | _set_of("PreDispatch")))


# ---- per-tensor key sets ----------------------------------------------------------
def _tensor_keyset(t):
    dev = getattr(getattr(t, "device", None), "type", "cpu")
    backend = {"cpu": "CPU", "meta": "Meta", "cuda": "CUDA", "mps": "MPS", "xpu": "XPU",
               "hpu": "HPU", "lazy": "Lazy", "xla": "XLA", "mtia": "MTIA",
               "privateuseone": "PrivateUse1"}.get(dev, "CPU")
    if getattr(t, "is_sparse", False):
        base = "Sparse" + backend
    elif getattr(t, "is_quantized", False):
        base = "Quantized" + backend
    else:
        base = backend
    ks = DispatchKeySet(DispatchKey[base]) | _set_of("ADInplaceOrView", "Autograd" + backend)
    autocast = "Autocast" + backend
    if autocast in DispatchKey.__members__:
        ks = ks | DispatchKeySet(DispatchKey[autocast])
    if type(t).__torch_dispatch__ is not _disabled_torch_dispatch_impl_ref() if hasattr(
            type(t), "__torch_dispatch__") else False:
        ks = ks | _set_of("Python", "PythonTLSSnapshot")
    if getattr(t, "is_conj", None) and t.is_conj():
        ks = ks | _set_of("Conjugate")
    if getattr(t, "is_neg", None) and t.is_neg():
        ks = ks | _set_of("Negative")
    return ks


def _disabled_torch_dispatch_impl_ref():
    import sys
    return getattr(sys.modules.get("torch._C"), "_disabled_torch_dispatch_impl", None)


@real(reason="computed from the tensor's device/layout and whether its class overrides __torch_dispatch__")
def _dispatch_keys(tensor):
    return _tensor_keyset(tensor)


@real(reason="same as _dispatch_keys")
def _dispatch_key_set(tensor):
    return _tensor_keyset(tensor)


@real()
def _dispatch_key_for_device(device_type):
    return {"cpu": "CPU", "meta": "Meta", "cuda": "CUDA", "mps": "MPS", "xpu": "XPU",
            "hpu": "HPU", "lazy": "Lazy", "xla": "XLA", "mtia": "MTIA",
            "privateuseone": "PrivateUse1"}.get(str(device_type), str(device_type))


@real()
def _dispatch_isTensorSubclassLike(tensor):
    import sys
    tb = getattr(sys.modules.get("torch"), "Tensor", None)
    if tb is None:
        return False
    cls = type(tensor)
    if cls is tb or cls.__name__ == "Parameter":
        return False
    return True


returning(C, "_dispatch_check_all_invariants _dispatch_check_invariants "
          "_dispatch_clear_leaked_python_filenames _dispatch_set_report_error_callback",
          None, "debug checks of C++ registration tables, which do not exist here")
returning(C, "_dispatch_find_dangling_impls", [], "no C++ registration tables, so nothing dangles")
refuse(C, "_dump_local_tls_set")
