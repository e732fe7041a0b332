"""torch._C._distributed_c10d and the top-level c10d names: enough for torch.distributed to
be available (`_c10d_init` present) so that inference imports work (transformers reaches
`class FakeStore(dist.Store)` through torch._dynamo), with real in-process stores.

Real: Store (subclassable base), HashStore, PrefixStore, TCPStore and FileStore (in C,
src/dist: upstream's wire protocol and file format), the enums (ReduceOp.RedOpType,
ProcessGroup.BackendType, DebugLevel, OpType ...), option classes, _DistError family,
process-group registry, and ProcessGroupGloo: the gloo backend implemented in C (a TCP
mesh between the ranks, collectives in src/dist/coll.c; docs/DISTRIBUTED.md). Its
presence makes upstream report gloo as available. DDP's Reducer is C too
(src/dist/reducer.c); Logger, GradBucket and the DDP helpers are Python here.
ProcessGroupNCCL/UCC/MPI stay absent: upstream imports each in its own try/except and
presence means "available".
"""

import datetime
import threading
import time

from torchnative._surface import (C, add, constants, enum_, make_enum, real, refuse,
                                  refusing_type, returning, submodule)

D = "torch._C._distributed_c10d"
submodule(D)
submodule("torch._C._distributed")
submodule("torch._C._distributed_autograd")

# ---- errors (top-level torch._C) ---------------------------------------------------
# Upstream's class names (DistStoreError, QueueEmptyError ...), module torch.distributed.
_DistError = type("DistError", (RuntimeError,), {"__module__": C})
_DistBackendError = type("DistBackendError", (_DistError,), {"__module__": C})
_DistNetworkError = type("DistNetworkError", (_DistError,), {"__module__": C})
_DistStoreError = type("DistStoreError", (_DistError,), {"__module__": C})
_DistQueueEmptyError = type("QueueEmptyError", (_DistStoreError,), {"__module__": C})
_DIST_ERRORS = (_DistError, _DistBackendError, _DistNetworkError, _DistStoreError, _DistQueueEmptyError)
for _n, _e in zip(("_DistError", "_DistBackendError", "_DistNetworkError", "_DistStoreError",
                   "_DistQueueEmptyError"), _DIST_ERRORS):
    add(C, _n, _e, "real", "exception class")


@real(reason="torch.distributed is available; returns True as upstream")
def _c10d_init():
    # Upstream's C++ creates ProcessGroup with torch._opaque_base.OpaqueBaseMeta as its
    # metaclass (device_mesh registers it as an opaque reference type, which requires it).
    # That module cannot be imported while torch._C initialises, so the metaclass is bound
    # here, when torch.distributed initialises c10d.
    from torch._opaque_base import OpaqueBaseMeta

    if not isinstance(ProcessGroup, OpaqueBaseMeta):
        ProcessGroup.__class__ = OpaqueBaseMeta
    for e in _DIST_ERRORS:
        e.__module__ = "torch.distributed"
    return True


constants(D, {"_DEFAULT_FIRST_BUCKET_BYTES": 1048576,
              "_DEFAULT_NO_TIMEOUT": datetime.timedelta(0),
              "_DEFAULT_PG_TIMEOUT": datetime.timedelta(seconds=1800)},
          "upstream's constants", status="real")


# ---- stores ------------------------------------------------------------------------
class Store:
    """Base class of key-value stores (subclassable from Python, as upstream)."""

    def __init__(self, *args, **kwargs):
        self._timeout = datetime.timedelta(seconds=300)

    def set_timeout(self, timeout):
        self._timeout = timeout

    @property
    def timeout(self):
        return getattr(self, "_timeout", datetime.timedelta(seconds=300))

    def has_extended_api(self):
        return False

    def _abstract(self, name):
        raise NotImplementedError(f"torch._C._distributed_c10d.Store.{name} is not implemented by {type(self).__name__}")

    def set(self, key, value):
        self._abstract("set")

    def get(self, key):
        self._abstract("get")

    def add(self, key, value):
        self._abstract("add")

    def compare_set(self, key, expected, desired):
        self._abstract("compare_set")

    def delete_key(self, key):
        self._abstract("delete_key")

    def num_keys(self):
        self._abstract("num_keys")

    def check(self, keys):
        self._abstract("check")

    def wait(self, keys, timeout=None):
        self._abstract("wait")

    def append(self, key, value):
        self._abstract("append")

    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values):
        for k, v in zip(keys, values):
            self.set(k, v)

    def list_keys(self):
        self._abstract("list_keys")

    def queue_push(self, key, value):
        self._abstract("queue_push")

    def queue_pop(self, key, block=True):
        self._abstract("queue_pop")

    def queue_len(self, key):
        self._abstract("queue_len")

    def barrier(self):
        self._abstract("barrier")

    def clone(self):
        self._abstract("clone")


def _b(v):
    if isinstance(v, str):
        return v.encode()
    return bytes(v)


class HashStore(Store):
    """Thread-safe in-process store (upstream: c10d::HashStore)."""

    def __init__(self):
        super().__init__()
        self._data = {}
        self._queues = {}
        self._cv = threading.Condition()

    def has_extended_api(self):
        return True

    def set(self, key, value):
        with self._cv:
            self._data[key] = _b(value)
            self._cv.notify_all()

    def _wait_keys(self, keys, timeout):
        t = (timeout if timeout is not None else self.timeout)
        secs = t.total_seconds() if isinstance(t, datetime.timedelta) else float(t)
        deadline = time.monotonic() + secs if secs > 0 else None
        while not all(k in self._data for k in keys):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise _DistStoreError(f"Wait timeout for keys {list(keys)}")
            self._cv.wait(left)

    def get(self, key):
        with self._cv:
            self._wait_keys([key], None)
            return self._data[key]

    def add(self, key, value):
        with self._cv:
            cur = int(self._data.get(key, b"0").decode() or 0) + int(value)
            self._data[key] = str(cur).encode()
            self._cv.notify_all()
            return cur

    def compare_set(self, key, expected, desired):
        with self._cv:
            cur = self._data.get(key)
            exp = _b(expected)
            if (cur is None and exp == b"") or cur == exp:
                self._data[key] = _b(desired)
                self._cv.notify_all()
                return _b(desired)
            return cur if cur is not None else exp

    def delete_key(self, key):
        with self._cv:
            return self._data.pop(key, None) is not None

    def num_keys(self):
        with self._cv:
            return len(self._data)

    def check(self, keys):
        with self._cv:
            return all(k in self._data for k in keys)

    def wait(self, keys, timeout=None):
        with self._cv:
            self._wait_keys(list(keys), timeout)

    def append(self, key, value):
        with self._cv:
            self._data[key] = self._data.get(key, b"") + _b(value)
            self._cv.notify_all()

    def list_keys(self):
        with self._cv:
            return list(self._data)

    def queue_push(self, key, value):
        with self._cv:
            self._queues.setdefault(key, []).append(_b(value))
            self._cv.notify_all()

    def queue_pop(self, key, block=True):
        with self._cv:
            q = self._queues.setdefault(key, [])
            if not q and not block:
                raise _DistQueueEmptyError(f"queue {key} is empty")
            while not q:
                if not self._cv.wait(self.timeout.total_seconds()):
                    raise _DistStoreError(f"Wait timeout for queue {key}")
            return q.pop(0)

    def queue_len(self, key):
        with self._cv:
            return len(self._queues.get(key, []))

    def barrier(self):
        return None

    def clone(self):
        return self


class PrefixStore(Store):
    """Prefixes every key with `prefix/` and forwards to an underlying store."""

    def __init__(self, prefix, store):
        super().__init__()
        self._prefix = prefix
        self.underlying_store = store

    def _k(self, key):
        return f"{self._prefix}/{key}"

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def add(self, key, value):
        return self.underlying_store.add(self._k(key), value)

    def compare_set(self, key, expected, desired):
        return self.underlying_store.compare_set(self._k(key), expected, desired)

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self):
        return self.underlying_store.num_keys()

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in keys])

    def wait(self, keys, timeout=None):
        if timeout is None:
            return self.underlying_store.wait([self._k(k) for k in keys])
        return self.underlying_store.wait([self._k(k) for k in keys], timeout)

    def append(self, key, value):
        return self.underlying_store.append(self._k(key), value)

    def has_extended_api(self):
        return self.underlying_store.has_extended_api()

    def queue_push(self, key, value):
        return self.underlying_store.queue_push(self._k(key), value)

    def queue_pop(self, key, block=True):
        return self.underlying_store.queue_pop(self._k(key), block)

    def queue_len(self, key):
        return self.underlying_store.queue_len(self._k(key))

    def clone(self):
        return PrefixStore(self._prefix, self.underlying_store.clone())


def _native():
    """torch._C._tn_dist, the C distributed core (looked up lazily: torch._C is still
    initialising when this module is imported)."""
    import sys
    return sys.modules["torch._C"]._tn_dist


def _ms(timeout):
    """timedelta (or seconds) -> milliseconds; <= 0 means no timeout, as upstream."""
    if timeout is None:
        return 0
    secs = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)
    return int(secs * 1000)


def _keys(keys):
    return [k if isinstance(k, str) else str(k) for k in keys]


class _NativeStore(Store):
    """Common methods of the stores implemented in C (TCPStore client, FileStore)."""

    def set_timeout(self, timeout):
        self._timeout = timeout
        _native().store_set_timeout(self._h, _ms(timeout))

    def set(self, key, value):
        _native().store_set(self._h, key, _b(value))

    def get(self, key):
        return _native().store_get(self._h, key)

    def add(self, key, value):
        return _native().store_add(self._h, key, int(value))

    def compare_set(self, key, expected_value, desired_value):
        return _native().store_compare_set(self._h, key, _b(expected_value), _b(desired_value))

    def delete_key(self, key):
        return _native().store_delete(self._h, key)

    def num_keys(self):
        return _native().store_num_keys(self._h)

    def check(self, keys):
        return _native().store_check(self._h, _keys(keys))

    def wait(self, keys, timeout=None):
        _native().store_wait(self._h, _keys(keys), -1 if timeout is None else _ms(timeout))

    def append(self, key, value):
        _native().store_append(self._h, key, _b(value))


class TCPStore(_NativeStore):
    """c10d::TCPStore: a key/value server (on the master) and a client, speaking upstream's
    wire protocol (src/dist/tcpstore_*.c), so it interoperates with upstream processes."""

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=datetime.timedelta(seconds=300), wait_for_workers=True, multi_tenant=False,
                 master_listen_fd=None, use_libuv=True):
        super().__init__()
        if master_listen_fd is not None:
            raise NotImplementedError("torch._C._distributed_c10d.TCPStore(master_listen_fd=...) "
                                      "is not implemented by torchnative")
        n = _native()
        self._server = None
        self._timeout = timeout
        if is_master:
            self._server, port = n.server_start(int(port), bool(multi_tenant))
        self._host, self._port = host_name, int(port)
        self._world_size = world_size
        self._h = n.client_connect(host_name, self._port, _ms(timeout))
        if world_size is not None and world_size > 0 and wait_for_workers:
            n.wait_workers(self._h, int(world_size), bool(is_master))

    @property
    def host(self):
        return self._host

    @property
    def port(self):
        return self._port

    @property
    def libuvBackend(self):
        return True

    def has_extended_api(self):
        return True

    def multi_get(self, keys):
        return _native().store_multi_get(self._h, _keys(keys))

    def multi_set(self, keys, values):
        _native().store_multi_set(self._h, _keys(keys), [_b(v) for v in values])

    def queue_push(self, key, value):
        _native().store_queue_push(self._h, key, _b(value))

    def queue_pop(self, key, block=True):
        return _native().store_queue_pop(self._h, key, bool(block))

    def queue_len(self, key):
        return _native().store_queue_len(self._h, key)

    def list_keys(self):
        # the server holds raw keys; user keys are the "/"-prefixed ones (as upstream)
        raw = _native().store_list_keys(self._h)
        return [k[1:].decode() for k in raw if k.startswith(b"/")]

    def clone(self):
        c = TCPStore.__new__(TCPStore)
        Store.__init__(c)
        c._server, c._timeout, c._host, c._port, c._world_size = self._server, self._timeout, self._host, self._port, None
        c._h = _native().client_connect(self._host, self._port, _ms(self._timeout))
        return c


class FileStore(_NativeStore):
    """c10d::FileStore: keys shared through one file, in upstream's on-disk format
    (src/dist/filestore.c)."""

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self._path = file_name
        self._world_size = -1 if world_size is None else int(world_size)
        self._h = _native().file_open(file_name, self._world_size, _ms(self._timeout))

    @property
    def path(self):
        return self._path

    def clone(self):
        return FileStore(self._path, self._world_size)


add(D, "Store", Store, "real", "subclassable base")
add(D, "HashStore", HashStore, "real", "in-process, thread-safe")
add(D, "PrefixStore", PrefixStore, "real", "forwards to the wrapped store")
add(D, "TCPStore", TCPStore, "real", "C server and client, upstream wire protocol")
add(D, "FileStore", FileStore, "real", "C, upstream file format")

# ---- enums ---------------------------------------------------------------------------
DebugLevel = enum_(D, "DebugLevel", "OFF INFO DETAIL")
_debug = {"level": DebugLevel.OFF}


@real(D)
def get_debug_level():
    return _debug["level"]


@real(D)
def set_debug_level(level):
    _debug["level"] = level


@real(D)
def set_debug_level_from_env():
    import os
    v = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if v not in DebugLevel.__members__:
        raise ValueError(f"The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL, got {v}")
    _debug["level"] = DebugLevel[v]


enum_(D, "OpType", {"BROADCAST": 0, "ALLREDUCE": 1, "ALLREDUCE_COALESCED": 2, "REDUCE": 3,
                    "ALLGATHER": 4, "_ALLGATHER_BASE": 5, "ALLGATHER_COALESCED": 6, "GATHER": 7,
                    "SCATTER": 8, "REDUCE_SCATTER": 9, "ALLTOALL_BASE": 10, "ALLTOALL": 11,
                    "SEND": 12, "RECV": 13, "RECVANYSOURCE": 14, "BARRIER": 15,
                    "_REDUCE_SCATTER_BASE": 16, "COALESCED": 17, "_ALLREDUCE_SPARSE": 18,
                    "REDUCE_SCATTER_TENSOR_COALESCED": 19, "UNKNOWN": 100})
enum_(D, "BuiltinCommHookType", {"ALLREDUCE": 1, "FP16_COMPRESS": 2})
ErrorType = enum_(D, "ErrorType", {"SUCCESS": 0, "TIMEOUT": 1, "COMM_ERROR": 2, "REMOTE_ERROR": 3})
enum_(D, "WorkResult", {"SUCCESS": 0, "TIMEOUT": 1, "COMM_ERROR": 2, "UNKNOWN": 100})

RedOpType = make_enum(D, "RedOpType", "SUM AVG PRODUCT MIN MAX BAND BOR BXOR PREMUL_SUM",
                      qualname="ReduceOp.RedOpType")


class ReduceOp:
    """A reduction operation: wraps a RedOpType (and a factor for PREMUL_SUM)."""
    RedOpType = RedOpType

    def __init__(self, op=RedOpType.SUM):
        if isinstance(op, ReduceOp):
            op = op.op
        if not isinstance(op, RedOpType):
            raise TypeError("ReduceOp(): expected a ReduceOp.RedOpType")
        self.op = op
        self.factor = None

    def __eq__(self, other):
        if isinstance(other, ReduceOp):
            return self.op == other.op
        if isinstance(other, RedOpType):
            return self.op == other
        return NotImplemented

    def __hash__(self):
        return hash(self.op)

    def __int__(self):
        return int(self.op)

    def __repr__(self):
        return f"<{self.op}>"

    def __getstate__(self):
        return (int(self.op), self.factor)

    def __setstate__(self, st):
        self.op, self.factor = RedOpType(st[0]), st[1]


for _m in RedOpType:
    setattr(ReduceOp, _m.name, _m)
add(D, "ReduceOp", ReduceOp, "real", "with nested RedOpType enum")


@real(D)
def _make_nccl_premul_sum(factor):
    r = ReduceOp(RedOpType.PREMUL_SUM)
    r.factor = factor
    return r


# ---- option classes -------------------------------------------------------------------
def _options(name, fields):
    def __init__(self):
        for k, v in fields.items():
            setattr(self, k, v() if callable(v) else v)
    cls = type(name, (), {"__init__": __init__, "__module__": D})
    add(D, name, cls, "real", "plain option record")
    return cls


_T = lambda: datetime.timedelta(milliseconds=-1)  # noqa: E731  (kUnsetTimeout)
_options("AllreduceOptions", {"reduceOp": lambda: ReduceOp(), "timeout": _T, "asyncOp": True})
_options("AllreduceCoalescedOptions", {"reduceOp": lambda: ReduceOp(), "timeout": _T, "asyncOp": True})
_options("ReduceOptions", {"reduceOp": lambda: ReduceOp(), "rootRank": 0, "rootTensor": 0,
                           "timeout": _T, "asyncOp": True})
_options("BroadcastOptions", {"rootRank": 0, "rootTensor": 0, "timeout": _T, "asyncOp": True})
_options("AllgatherOptions", {"timeout": _T, "asyncOp": True})
_options("GatherOptions", {"rootRank": 0, "timeout": _T, "asyncOp": True})
_options("ScatterOptions", {"rootRank": 0, "timeout": _T, "asyncOp": True})
_options("ReduceScatterOptions", {"reduceOp": lambda: ReduceOp(), "timeout": _T, "asyncOp": True})
_options("BarrierOptions", {"device_ids": list, "timeout": _T, "device": None, "asyncOp": True})
_options("AllToAllOptions", {"timeout": _T, "asyncOp": True})
_options("_DistributedBackendOptions", {"store": None, "group_rank": 0, "group_size": 1,
                                        "timeout": lambda: datetime.timedelta(seconds=1800),
                                        "group_id": "", "global_ranks_in_group": list})


# ---- work / process group -------------------------------------------------------------
class Work:
    """Handle on an asynchronous collective. Python subclasses (upstream's test helpers)
    override wait/result; the base refuses."""

    def __init__(self, *args, **kwargs):
        pass

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def exception(self):
        return None

    def source_rank(self):
        return -1

    def _source_rank(self):
        return -1

    def result(self):
        return []

    def synchronize(self):
        return None

    def wait(self, timeout=None):
        return True

    def get_future(self):
        raise NotImplementedError("torch._C._distributed_c10d.Work.get_future is not implemented by torchnative")

    def get_future_result(self):
        raise NotImplementedError("torch._C._distributed_c10d.Work.get_future_result is not implemented by torchnative")

    def block_current_stream(self):
        return None

    def _get_op_type(self):
        return None

    def _get_duration(self):
        return 0.0

    def boxed(self):
        return self

    @staticmethod
    def unbox(obj):
        return obj


add(D, "Work", Work, "real", "completed-work handle; subclassable")
add(D, "FakeWork", type("FakeWork", (Work,), {"__module__": D}), "real", "always-complete work")

BackendType = make_enum(D, "BackendType", {"UNDEFINED": 0, "GLOO": 1, "NCCL": 2, "UCC": 3,
                                           "MPI": 4, "XCCL": 5, "CUSTOM": 6},
                        qualname="ProcessGroup.BackendType")

_COLLECTIVES = """allgather allgather_coalesced allgather_into_tensor_coalesced allreduce
allreduce_coalesced alltoall alltoall_base barrier broadcast gather recv recv_anysource reduce
reduce_scatter scatter send monitored_barrier _allgather_base _reduce_scatter_base
all_gather_single all_gather_single_coalesced all_to_all_single reduce_scatter_single
reduce_scatter_single_coalesced reduce_scatter_tensor_coalesced merge_remote_group split_group""".split()


class Backend:
    """A communication backend of a ProcessGroup. Python subclasses implement the
    collectives (torch.testing's fake backends do); the base refuses them."""

    class Options:
        def __init__(self, backend="", timeout=datetime.timedelta(seconds=1800)):
            self.backend, self._timeout = backend, timeout

    def __init__(self, rank=0, size=1):
        self._rank, self._size = rank, size

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    @property
    def supports_splitting(self):
        return False

    @property
    def supports_coalescing(self):
        return False

    @property
    def supports_time_estimate(self):
        return False

    def _set_sequence_number_for_group(self):
        return None

    def _get_sequence_number_for_group(self):
        return 0

    def name(self):
        return type(self).__name__

    def abort(self):
        return None

    def shutdown(self):
        return None

    def eager_connect_single_device(self, device):
        return None


class _ProcessGroupMeta(type):
    """Placeholder metaclass: a heap `type` subclass, so _c10d_init can switch it to
    OpaqueBaseMeta by __class__ assignment."""


class ProcessGroup(metaclass=_ProcessGroupMeta):
    """A group of ranks. Backends register per device type; collectives need a backend
    written in Python (the base refuses them until torchnative's transport exists)."""
    BackendType = BackendType

    def __init__(self, *args, **kwargs):
        # upstream signatures: (store, rank, size) or (rank, size)
        if len(args) >= 3:
            self._store, self._rank, self._size = args[0], args[1], args[2]
        elif len(args) == 2:
            self._store, self._rank, self._size = None, args[0], args[1]
        else:
            self._store = kwargs.get("store")
            self._rank, self._size = kwargs.get("rank", 0), kwargs.get("size", 1)
        self._backends = {}
        self._default_backend = BackendType.UNDEFINED
        self._group_name = ""
        self._group_desc = ""
        self._bound_device_id = None
        self._seq = 0

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        b = self._backends.get(self._default_backend)
        return b.name() if b is not None else "undefined"

    def _id(self):
        return id(self)

    def _backend_id(self, backend_type):
        return id(self._backends.get(backend_type))

    @property
    def _device_types(self):
        import torch   # loaded by now: only torch.distributed code asks
        return [torch.device(k) for k in self._backends if isinstance(k, str)]

    def _register_backend(self, device, backend_type, backend):
        self._backends[str(getattr(device, "type", device))] = backend
        self._backends[backend_type] = backend

    def _set_default_backend(self, backend_type):
        self._default_backend = backend_type

    def _get_backend(self, device):
        key = str(getattr(device, "type", device))
        if key in self._backends:
            return self._backends[key]
        raise RuntimeError(f"No backend type associated with device type {key}")

    def _get_backend_name(self):
        return self.name()

    def _set_group_name(self, name):
        self._group_name = name

    def _set_group_desc(self, desc):
        self._group_desc = desc

    @property
    def group_name(self):
        return self._group_name

    @property
    def group_desc(self):
        return self._group_desc

    @property
    def bound_device_id(self):
        return self._bound_device_id

    @bound_device_id.setter
    def bound_device_id(self, v):
        self._bound_device_id = v

    def get_group_store(self):
        return self._store

    def _set_sequence_number_for_group(self):
        return None

    def _get_sequence_number_for_group(self):
        return self._seq

    def _has_hooks(self):
        return False

    def _wait_for_pending_works(self):
        return None

    def _enable_collectives_timing(self):
        return None

    def _register_on_completion_hook(self, hook):
        return None

    def _start_coalescing(self, device):
        return None

    def _end_coalescing(self, device):
        return Work()

    def _unique_backends(self):
        seen = []
        for b in self._backends.values():
            if all(b is not x for x in seen):
                seen.append(b)
        return seen

    def abort(self):
        for b in self._unique_backends():
            b.abort()

    def shutdown(self):
        for b in self._unique_backends():
            b.shutdown()

    def set_timeout(self, timeout):
        for b in self._unique_backends():
            if hasattr(b, "_set_default_timeout"):
                b._set_default_timeout(timeout)

    def boxed(self):
        return self

    @staticmethod
    def unbox(obj):
        return obj

    @property
    def use_pg_for_symm_mem_rendezvous(self):
        return False


def _forward(name):
    def method(self, *args, **kwargs):
        b = self._backends.get(self._default_backend)
        if b is None or not hasattr(b, name) or getattr(type(b), name, None) is getattr(Backend, name, None):
            raise NotImplementedError(f"torch._C._distributed_c10d.ProcessGroup.{name} is not implemented by torchnative")
        return getattr(b, name)(*args, **kwargs)
    method.__name__ = name
    return method


for _n in _COLLECTIVES:
    setattr(ProcessGroup, _n, _forward(_n))
    setattr(Backend, _n, (lambda n: lambda self, *a, **k: (_ for _ in ()).throw(NotImplementedError(
        f"torch._C._distributed_c10d.Backend.{n} is not implemented by torchnative")))(_n))
for _m in BackendType:
    setattr(ProcessGroup, _m.name, _m)
add(D, "Backend", Backend, "real", "subclassable backend base; collectives refuse")
add(D, "ProcessGroup", ProcessGroup, "real", "group bookkeeping real; collectives forward to a Python backend or refuse")
add(D, "FakeProcessGroup", refusing_type(D, "FakeProcessGroup", (ProcessGroup,)), "refuse")

# ---- torch._C.Future (what Work.get_future returns; torch.futures.Future subclasses it) --
class Future:
    """c10::ivalue::Future for CPU values: set once (result or exception), waited on,
    with callbacks (then / add_done_callback) run by the thread that completes it."""

    def __init__(self, devices=None):
        self._cv = threading.Condition()
        self._done = False
        self._value = None
        self._exc = None
        self._unwrap = None
        self._callbacks = []

    def done(self):
        with self._cv:
            return self._done

    def _complete(self, value=None, exc=None):
        with self._cv:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._exc, self._done = value, exc, True
            cbs, self._callbacks = self._callbacks, []
            self._cv.notify_all()
        for cb in cbs:
            cb(self)

    def set_result(self, result):
        self._complete(value=result)

    def set_exception(self, exc):
        self._complete(exc=exc)

    def _set_unwrap_func(self, fn):
        self._unwrap = fn

    def wait(self):
        with self._cv:
            while not self._done:
                self._cv.wait()
        return self.value()

    def value(self):
        if self._exc is not None:
            raise self._exc
        if self._unwrap is not None:
            self._unwrap(self._value)
        return self._value

    def add_done_callback(self, callback):
        with self._cv:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        child = type(self)() if type(self) is not Future else Future()

        def run(fut):
            try:
                child.set_result(callback(fut))
            except BaseException as e:
                child.set_exception(e)
        self.add_done_callback(run)
        return child


add(C, "Future", Future, "real", "CPU future: result/exception, wait, then, callbacks")


# ---- the gloo backend (C: src/dist/pg.c, coll.c; binding src/python/dist.c) ------------
def _redop(op):
    """opts.reduceOp -> (RedOpType value, PREMUL_SUM factor or None)."""
    if isinstance(op, ReduceOp):
        return int(op.op), op.factor
    return int(op), None


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _writable(t):
    """A contiguous tensor the C collective may write (t itself when it is contiguous),
    and the copy-back that makes a non-contiguous t see the result."""
    if t.is_contiguous():
        return t, None
    tmp = t.contiguous()
    return tmp, (lambda: t.copy_(tmp))


def _dense_writable(t):
    """As _writable, but a non-contiguous tensor that is still dense (a permutation of a
    contiguous layout, e.g. a transpose) is used in place through a flat view of its
    memory: upstream's gloo reduces such tensors in memory order, and so do we."""
    if t.is_contiguous():
        return t, None
    expect = 1
    for st, sz in sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz != 1):
        if st != expect:
            return _writable(t)
        expect *= sz
    return t.as_strided((t.numel(),), (1,)), None


def _chain(*fns):
    fns = [f for f in fns if f is not None]
    if not fns:
        return None

    def run():
        for f in fns:
            f()
    return run


class _GlooWork(Work):
    """Handle on one queued collective (or posted receive) of ProcessGroupGloo. `after`
    runs once on the waiting thread after success (copy-back into non-contiguous
    outputs, the AVG division)."""

    def __init__(self, cap, pgcap, result=(), after=None):
        super().__init__()
        self._cap, self._pgcap = cap, pgcap
        self._result, self._after = list(result), after
        self._exc = None
        self._finished = False

    def _finish(self):
        if not self._finished:
            self._finished = True
            if self._after is not None:
                self._after()

    def wait(self, timeout=None):
        if self._exc is not None:
            raise self._exc
        try:
            _native().work_wait(self._cap, _ms(timeout) if timeout else 0)
        except BaseException as e:
            self._exc = e
            raise
        self._finish()
        return True

    def is_completed(self):
        if self._finished or self._exc is not None:
            return True
        done = _native().work_done(self._cap)
        if done:
            try:
                self.wait()
            except Exception:
                pass
        return done

    def is_success(self):
        return self.is_completed() and self._exc is None

    def exception(self):
        return self._exc

    def source_rank(self):
        return _native().work_source(self._cap)

    def _source_rank(self):
        return self.source_rank()

    def result(self):
        return self._result

    def synchronize(self):
        self.wait()

    def get_future(self):
        return _future_of(self)


def _future_of(work):
    """A torch.futures.Future completed with work.result() (or its error) once the work
    finishes; a helper thread waits when it has not finished yet."""
    import torch
    fut = torch.futures.Future()

    def finish():
        try:
            work.wait()
        except Exception as e:
            fut.set_exception(e)
            return
        fut.set_result(work.result())
    if work.is_completed():
        finish()
    else:
        threading.Thread(target=finish, daemon=True, name="tn-gloo-future").start()
    return fut


class _GlooMultiWork(Work):
    """Several works completed together (the *_coalesced entry points)."""

    def __init__(self, works, result=()):
        super().__init__()
        self._works, self._result = works, list(result)

    def wait(self, timeout=None):
        for w in self._works:
            w.wait(timeout)
        return True

    def is_completed(self):
        return all(w.is_completed() for w in self._works)

    def is_success(self):
        return all(w.is_success() for w in self._works)

    def exception(self):
        return next((w.exception() for w in self._works if w.exception() is not None), None)

    def result(self):
        return self._result

    def get_future(self):
        return _future_of(self)


def _advertise_host(store):
    """The address the other ranks use to reach this one: the local end of a route to the
    TCPStore master when there is one, else this host's name (TN_GLOO_HOST overrides)."""
    import os
    import socket
    h = os.environ.get("TN_GLOO_HOST")
    if h:
        return h
    s = store
    while isinstance(s, PrefixStore):
        s = s.underlying_store
    if isinstance(s, TCPStore):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.connect((s.host, 9))
                return u.getsockname()[0]
        except OSError:
            pass
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


class ProcessGroupGloo(Backend):
    """The backend behind backend="gloo", implemented in C (not upstream's gloo library):
    a full mesh of TCP connections set up through the store, collectives in
    src/dist/coll.c. See docs/DISTRIBUTED.md for the algorithms and the differences."""

    class Device:
        def __init__(self, hostname="", interface=""):
            self.hostname, self.interface = hostname, interface

    class Options(Backend.Options):
        def __init__(self, timeout=datetime.timedelta(seconds=1800)):
            super().__init__("gloo", timeout)
            self.devices = []
            self.threads = 2
            self.global_ranks_in_group = []
            self.group_name = ""
            self.use_pg_for_symm_mem_rendezvous = False

    @staticmethod
    def create_device(hostname="", interface="", lazy_init=None):
        return ProcessGroupGloo.Device(hostname, interface)

    @staticmethod
    def create_default_device(lazy_init=None):
        return ProcessGroupGloo.Device()

    def __init__(self, store, rank, size, timeout=datetime.timedelta(seconds=1800)):
        if isinstance(timeout, ProcessGroupGloo.Options):
            opts = timeout
        else:
            opts = ProcessGroupGloo.Options(timeout)
        super().__init__(rank, size)
        self._options = opts
        self._store = store
        n = _native()
        cap, port = n.pg_new(int(rank), int(size), _ms(opts._timeout))
        hosts, ports, gen = [""] * size, [0] * size, 0
        if size > 1:
            # per-rank generation: every rank counts its own groups on this store, so a
            # re-created group never reads a stale address of an earlier one
            gen = store.add(f"tn_gloo/gen/{rank}", 1)
            host = _advertise_host(store)
            store.set(f"tn_gloo/{gen}/addr/{rank}", f"{host}|{port}")
            for r in range(rank):   # only lower ranks are dialled; higher ranks dial us
                h, _, p = store.get(f"tn_gloo/{gen}/addr/{r}").decode().rpartition("|")
                hosts[r], ports[r] = h, int(p)
        n.pg_connect(cap, hosts, ports, gen)
        self._cap = cap

    # -- bookkeeping --
    @property
    def options(self):
        return self._options

    def name(self):
        return "gloo"

    def _set_default_timeout(self, timeout):
        self._options._timeout = timeout
        if self._cap is not None:
            _native().pg_set_timeout(self._cap, _ms(timeout))

    def set_timeout(self, timeout):
        self._set_default_timeout(timeout)

    def _get_sequence_number_for_group(self):
        return 0

    def shutdown(self):
        # pending works keep the C group alive through their own reference
        self._cap = None

    def abort(self):
        self._cap = None

    def _live(self):
        if self._cap is None:
            raise RuntimeError("ProcessGroupGloo was shut down")
        return self._cap

    def _root(self, root):
        if not 0 <= root < self._size:
            raise ValueError(f"Invalid root rank: {root}")
        return root

    def _coll(self, op, ins, outs, root=0, redop=0, timeout=0, wait_all=False, result=(), after=None, opts=None):
        cap = self._live()
        # upstream's options say whether the caller waits right away (async_op=False):
        # such calls run on the calling thread instead of the worker
        inline = opts is not None and getattr(opts, "asyncOp", True) is False
        w = _native().pg_collective(cap, op, ins, outs, root, redop, timeout, wait_all, inline)
        return _GlooWork(w, cap, result, after)

    # -- collectives (ProcessGroup forwards its methods here) --
    def broadcast(self, tensors, opts=None):
        opts = opts if opts is not None else _opt("BroadcastOptions")
        t = _as_list(tensors)[0]
        buf, fix = _dense_writable(t)
        return self._coll(_native().BROADCAST, buf, None, root=self._root(opts.rootRank), result=[t], after=fix,
                          opts=opts)

    def _reduce_like(self, op, tensors, opts, root=0):
        t = _as_list(tensors)[0]
        code, factor = _redop(opts if isinstance(opts, (ReduceOp, RedOpType)) else opts.reduceOp)
        buf, fix = _dense_writable(t)
        if code == RedOpType.PREMUL_SUM.value:
            if factor is None:
                raise RuntimeError("PREMUL_SUM needs a factor (use torch.distributed._make_nccl_premul_sum)")
            if t.is_floating_point() is False:
                raise RuntimeError("PREMUL_SUM is only supported for floating point tensors")
            buf.mul_(factor)
        avg = None
        if code == RedOpType.AVG.value:
            # as upstream: sum, then divide in place (an integer tensor keeps the sum and
            # the division raises "result type Float can't be cast ...")
            size = self._size

            def avg():
                buf.div_(size)
        return self._coll(op, buf, None, root=root, redop=code, result=[t], after=_chain(avg, fix),
                          opts=None if isinstance(opts, (ReduceOp, RedOpType)) else opts)

    def allreduce(self, tensors, opts=None):
        opts = opts if opts is not None else _opt("AllreduceOptions")
        return self._reduce_like(_native().ALLREDUCE, tensors, opts)

    def allreduce_coalesced(self, tensors, opts=None):
        opts = opts if opts is not None else _opt("AllreduceCoalescedOptions")
        return _GlooMultiWork([self._reduce_like(_native().ALLREDUCE, t, opts) for t in tensors], tensors)

    def reduce(self, tensors, opts=None):
        opts = opts if opts is not None else _opt("ReduceOptions")
        return self._reduce_like(_native().REDUCE, tensors, opts, root=self._root(opts.rootRank))

    def _gather_into(self, outs, inp, result):
        bufs, fixes = [], []
        for o in outs:
            b, f = _writable(o)
            bufs.append(b)
            fixes.append(f)
        for o in outs:
            if o.dtype != inp.dtype:
                raise RuntimeError("All tensors must have the same dtype (output vs input)")
        return bufs, _chain(*fixes)

    def allgather(self, output_tensors, input_tensors, opts=None):
        outs, inp = output_tensors[0], input_tensors[0].contiguous()
        if len(outs) != self._size:
            raise RuntimeError(f"allgather: expected {self._size} output tensors, got {len(outs)}")
        bufs, fix = self._gather_into(outs, inp, output_tensors)
        return self._coll(_native().ALLGATHER, inp, bufs, result=output_tensors, after=fix, opts=opts)

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        return _GlooMultiWork([self.allgather([o], [i], opts) for o, i in zip(output_lists, input_list)],
                              output_lists)

    def all_gather_single(self, output, input, opts=None):
        inp = input.contiguous()
        if output.numel() != inp.numel() * self._size:
            raise ValueError("output tensor size must be equal to world_size times input tensor size")
        if output.dtype != inp.dtype:
            raise TypeError("output tensor must have the same type as input tensor")
        buf, fix = _writable(output)
        parts = list(buf.view(-1).split(inp.numel())) if inp.numel() else [buf.view(-1)[:0]] * self._size
        return self._coll(_native().ALLGATHER, inp, parts, result=[output], after=fix, opts=opts)

    _allgather_base = all_gather_single

    def all_gather_single_coalesced(self, outputs, inputs, opts=None):
        return _GlooMultiWork([self.all_gather_single(o, i, opts) for o, i in zip(outputs, inputs)], outputs)

    allgather_into_tensor_coalesced = all_gather_single_coalesced

    def gather(self, output_tensors, input_tensors, opts=None):
        opts = opts if opts is not None else _opt("GatherOptions")
        root = self._root(opts.rootRank)
        inp = input_tensors[0].contiguous()
        if self._rank == root:
            outs = output_tensors[0]
            if len(outs) != self._size:
                raise RuntimeError(f"gather: expected {self._size} output tensors on the root, got {len(outs)}")
            bufs, fix = self._gather_into(outs, inp, output_tensors)
        else:
            if output_tensors and any(len(o) for o in output_tensors):
                raise RuntimeError("gather: only the root rank takes output tensors")
            bufs, fix = None, None
        return self._coll(_native().GATHER, inp, bufs, root=root, result=output_tensors, after=fix, opts=opts)

    def scatter(self, output_tensors, input_tensors, opts=None):
        opts = opts if opts is not None else _opt("ScatterOptions")
        root = self._root(opts.rootRank)
        out = output_tensors[0]
        buf, fix = _writable(out)
        if self._rank == root:
            ins = [t.contiguous() for t in input_tensors[0]]
            if len(ins) != self._size:
                raise RuntimeError(f"scatter: expected {self._size} input tensors on the root, got {len(ins)}")
        else:
            if input_tensors and any(len(i) for i in input_tensors):
                raise RuntimeError("scatter: only the root rank takes input tensors")
            ins = None
        return self._coll(_native().SCATTER, ins, buf, root=root, result=output_tensors, after=fix, opts=opts)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        opts = opts if opts is not None else _opt("ReduceScatterOptions")
        out, ins = output_tensors[0], [t.contiguous() for t in input_tensors[0]]
        if len(ins) != self._size:
            raise RuntimeError(f"reduce_scatter: expected {self._size} input tensors, got {len(ins)}")
        return self._reduce_scatter(out, ins, opts, output_tensors, flat=False)

    def _reduce_scatter(self, out, ins, opts, result, flat):
        code, factor = _redop(opts.reduceOp)
        buf, fix = _writable(out)
        if code == RedOpType.PREMUL_SUM.value:
            ins = [t * factor for t in ins]
        avg = None
        if code == RedOpType.AVG.value:
            size = self._size

            def avg():
                buf.div_(size)
        return self._coll(_native().REDUCE_SCATTER, ins, buf, redop=code, wait_all=flat, result=result,
                          after=_chain(avg, fix), opts=opts)

    def reduce_scatter_single(self, output, input, opts=None):
        opts = opts if opts is not None else _opt("ReduceScatterOptions")
        inp = input.contiguous()
        if inp.numel() != output.numel() * self._size:
            raise ValueError("input tensor must be the same size as output size times world size")
        if output.dtype != inp.dtype:
            raise TypeError("input tensor must be the same type as the output tensor.")
        ins = list(inp.view(-1).split(output.numel())) if output.numel() else [inp.view(-1)[:0]] * self._size
        return self._reduce_scatter(output, ins, opts, [output], flat=True)

    _reduce_scatter_base = reduce_scatter_single

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts=None):
        return _GlooMultiWork([self.reduce_scatter_single(o, i, opts) for o, i in zip(outputs, inputs)], outputs)

    reduce_scatter_tensor_coalesced = reduce_scatter_single_coalesced

    def alltoall(self, output_tensors, input_tensors, opts=None):
        if len(output_tensors) != self._size or len(input_tensors) != self._size:
            raise RuntimeError(f"alltoall: expected {self._size} input and output tensors")
        ins = [t.contiguous() for t in input_tensors]
        bufs, fixes = zip(*[_writable(o) for o in output_tensors])
        return self._coll(_native().ALLTOALL, ins, list(bufs), result=output_tensors, after=_chain(*fixes),
                          opts=opts)

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        inp = input.contiguous()
        buf, fix = _writable(output)

        def split(t, sizes, what):
            n = self._size
            if not sizes:
                if t.dim() == 0 or t.size(0) % n:
                    raise ValueError(f"Tensor's dim 0 does not divide equally across group size {n}")
                sizes = [t.size(0) // n] * n
            if len(sizes) != n or sum(sizes) != (t.size(0) if t.dim() else 1):
                raise ValueError(f"Split sizes {list(sizes)} do not match {what} of size {tuple(t.shape)}")
            return list(t.split(list(sizes), 0))
        ins = split(inp, input_split_sizes, "input")
        outs = split(buf, output_split_sizes, "output")
        return self._coll(_native().ALLTOALL, ins, outs, result=[output], after=fix, opts=opts)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        return self.all_to_all_single(output, input, output_split_sizes, input_split_sizes, opts)

    def barrier(self, opts=None):
        return self._coll(_native().BARRIER, None, None, opts=opts)

    def monitored_barrier(self, timeout=None, wait_all_ranks=False):
        ms = _ms(timeout if timeout is not None else self._options._timeout)
        self._coll(_native().MONITORED_BARRIER, None, None, timeout=ms, wait_all=bool(wait_all_ranks)).wait()

    def send(self, tensors, dst, tag=0):
        cap = self._live()
        t = _as_list(tensors)[0].contiguous()
        return _GlooWork(_native().pg_send(cap, t, int(dst), int(tag)), cap, [t])

    def recv(self, tensors, src, tag=0):
        cap = self._live()
        t = _as_list(tensors)[0]
        buf, fix = _writable(t)
        return _GlooWork(_native().pg_recv(cap, buf, int(src), int(tag)), cap, [t], fix)

    def recv_anysource(self, tensors, tag=0):
        return self.recv(tensors, -1, tag)


# ---- DistributedDataParallel: the reducer (C: src/dist/reducer.c) and its helpers -------
def _gloo_cap(process_group):
    """The C group behind a ProcessGroup whose CPU backend is our gloo (unwrapping the
    TORCH_DISTRIBUTED_DEBUG=DETAIL wrapper), or a refusal naming what it got."""
    b = process_group
    if isinstance(b, ProcessGroup):
        try:
            b = b._get_backend("cpu")
        except RuntimeError:
            b = b._backends.get(b._default_backend)
    if isinstance(b, _ProcessGroupWrapper):
        b = b.wrapped_pg
    if isinstance(b, ProcessGroupGloo):
        return b._live()
    raise NotImplementedError("DistributedDataParallel over a process group whose backend is "
                              f"{type(b).__name__} (not torchnative's gloo) is not implemented by torchnative")


def _refuse_reducer(what):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"torch._C._distributed_c10d.Reducer.{what} is not implemented by torchnative")
    method.__name__ = what
    return method


class GradBucket:
    """One bucket as a communication hook sees it (upstream's c10d::GradBucket)."""

    def __init__(self, index, bucket_count, buffer, gradients, parameters):
        self._index, self._count = index, bucket_count
        self._buffer, self._gradients, self._parameters = buffer, gradients, parameters

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def gradients(self):
        return list(self._gradients)

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        return self._index == self._count - 1

    def set_buffer(self, buffer):
        self._buffer = buffer


add(D, "GradBucket", GradBucket, "real", "bucket view handed to DDP communication hooks")


def _hook_launch(ref, bucket):
    red = ref()
    buf, views, idx, count = _native().reducer_bucket(red._cap, bucket)
    gb = GradBucket(bucket, count, buf, views, [red._params[i] for i in idx])
    fut = red._comm_hook(red._comm_state, gb)
    if not hasattr(fut, "wait"):
        raise RuntimeError("A DDP communication hook must return a torch.futures.Future, got "
                           f"{type(fut).__name__}")
    return fut


def _hook_wait(fut):
    v = fut.wait()
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise RuntimeError("the communication hook's future must hold one tensor")
        v = v[0]
    return v


class Reducer:
    """upstream's c10d::Reducer: the buckets, hooks, all-reduce and write-back are C
    (src/dist/reducer.c); this class parses upstream's arguments and refuses by name
    what is not built (static graph, sparse gradients, join, mixed precision)."""

    def __init__(self, params, bucket_indices, per_bucket_size_limits, process_group,
                 expect_sparse_gradients=(), bucket_bytes_cap=25 * 1024 * 1024,
                 find_unused_parameters=False, gradient_as_bucket_view=False,
                 param_to_name_mapping=None, first_bucket_bytes_cap=1048576,
                 skip_all_reduce_unused_params=False, use_python_reducer=False,
                 bucket_size_limits_for_rebuilding=(), batched_grad_copy=False):
        if any(expect_sparse_gradients or ()):
            raise NotImplementedError("DistributedDataParallel with sparse gradients is not implemented by torchnative")
        if skip_all_reduce_unused_params:
            raise NotImplementedError("DistributedDataParallel(skip_all_reduce_unused_params=True) is not "
                                      "implemented by torchnative")
        self._params = list(params)
        self._pg = process_group
        self._cap = _native().reducer_new(_gloo_cap(process_group), self._params,
                                          [list(b) for b in bucket_indices], bool(find_unused_parameters),
                                          bool(gradient_as_bucket_view))
        self._bucket_indices = [list(b) for b in bucket_indices]
        self._find_unused = bool(find_unused_parameters)
        self._rebuild_limits = [int(x) for x in bucket_size_limits_for_rebuilding] or \
            [int(first_bucket_bytes_cap), int(bucket_bytes_cap)]
        self._logger = None
        self._iterations = 0
        self._comm_hook = self._comm_state = None

    def prepare_for_forward(self):
        self._iterations += 1

    def prepare_for_backward(self, outputs):
        import torch
        if isinstance(outputs, torch.Tensor):
            outputs = [outputs]
        _native().reducer_prepare(self._cap, list(outputs))

    def _rebuild_buckets(self):
        # upstream's: check that the previous iteration finished its reduction, then,
        # once, rebuild the buckets in the order the first iteration's gradients came
        # (DDP's first iteration runs with a single bucket unless find_unused is set)
        return _native().reducer_rebuild(self._cap, self._rebuild_limits)

    def _check_reducer_finalized(self):
        _native().reducer_check(self._cap)

    def _autograd_hook(self, index):
        _native().reducer_hook(self._cap, int(index))

    def set_logger(self, logger):
        import weakref
        self._logger = weakref.ref(logger)

    def _set_ddp_runtime_logging_sample_rate(self, rate):
        self._sample_rate = int(rate)

    def _register_comm_hook(self, state, hook):
        import weakref
        import functools
        self._comm_hook, self._comm_state = hook, state
        _native().reducer_set_comm(self._cap, 0, functools.partial(_hook_launch, weakref.ref(self)), _hook_wait)

    def _register_builtin_comm_hook(self, comm_hook_type):
        _native().reducer_set_comm(self._cap, int(comm_hook_type))

    def _get_bucket_indices(self):
        out = []
        for b in range(_native().reducer_bucket(self._cap, 0)[3]):
            out.append(list(_native().reducer_bucket(self._cap, b)[2]))
        return out

    _set_static_graph = _refuse_reducer("_set_static_graph (DistributedDataParallel(static_graph=True))")
    _delay_all_reduce = _refuse_reducer("_delay_all_reduce (static graph)")
    _push_all_rebuilt_params = _refuse_reducer("_push_all_rebuilt_params (static graph)")
    _set_forward_pass_work_handle = _refuse_reducer("_set_forward_pass_work_handle (DDP join)")
    _set_mixed_precision_param_dtype = _refuse_reducer("_set_mixed_precision_param_dtype (DDP mixed_precision)")
    _set_optimizer_in_backward = _refuse_reducer("_set_optimizer_in_backward")
    _install_post_backward_futures = _refuse_reducer("_install_post_backward_futures")
    _get_zeros_like_grad_buckets = _refuse_reducer("_get_zeros_like_grad_buckets (DDP join)")
    _run_comm_hook = _refuse_reducer("_run_comm_hook (DDP join)")
    _get_local_used_map = _refuse_reducer("_get_local_used_map (DDP join)")
    _set_sparse_metadata = _refuse_reducer("_set_sparse_metadata")
    _update_process_group = _refuse_reducer("_update_process_group")
    _remove_autograd_hooks = _refuse_reducer("_remove_autograd_hooks")
    _reset_state = _refuse_reducer("_reset_state")
    _set_grads_to_none = _refuse_reducer("_set_grads_to_none")


add(D, "Reducer", Reducer, "real", "DDP's reducer: buckets, hooks and all-reduce in C (src/dist/reducer.c)")


class DDPLoggingData:
    def __init__(self):
        self.strs_map, self.ints_map = {}, {}


add(D, "DDPLoggingData", DDPLoggingData, "real", "logging record (string and int maps)")


class Logger:
    """upstream's c10d::Logger: keeps DDP's construction and runtime data (no logging
    sink); set_error_and_log records the error DDP then raises."""

    def __init__(self, reducer):
        self._reducer = reducer
        self._data = DDPLoggingData()

    def set_construction_data_and_log(self, module_name, device_ids, output_device, broadcast_buffers,
                                      has_sync_bn, static_graph):
        r = self._reducer
        self._data.strs_map.update(module_name=module_name, backend_name=r._pg.name() if hasattr(r._pg, "name")
                                   else "gloo", device_ids=str(device_ids), comm_hook="builtin_allreduce")
        self._data.ints_map.update(world_size=r._pg.size(), rank=r._pg.rank(), output_device=output_device,
                                   broadcast_buffers=int(bool(broadcast_buffers)), has_sync_bn=int(bool(has_sync_bn)),
                                   static_graph=int(bool(static_graph)),
                                   find_unused_parameters=int(r._find_unused), num_buckets=len(r._bucket_indices),
                                   iteration=0)

    def set_runtime_stats_and_log(self):
        self._data.ints_map["iteration"] = self._reducer._iterations

    def set_error_and_log(self, error):
        self._data.strs_map["error"] = str(error)

    def _get_ddp_logging_data(self):
        d = DDPLoggingData()
        d.strs_map, d.ints_map = dict(self._data.strs_map), dict(self._data.ints_map)
        return d

    def _set_comm_hook_name(self, name):
        self._data.strs_map["comm_hook"] = str(name)

    def _set_uneven_input_join(self):
        self._data.ints_map["join_uneven_inputs"] = 1

    def _set_static_graph(self):
        self._data.ints_map["static_graph"] = 1


add(D, "Logger", Logger, "real", "DDP logging data (no sink)")


@real(D)
def _compute_bucket_assignment_by_size(tensors, bucket_size_limits, expect_sparse_gradient=(),
                                       tensor_indices=()):
    """upstream's assignment (C: tn_bucket_assignment): per (dtype, device) buckets closed
    at each size limit in turn, sparse gradients alone, sorted by smallest index unless
    tensor_indices give the gradient-ready order."""
    tensors = list(tensors)
    idx = list(tensor_indices) if tensor_indices else list(range(len(tensors)))
    sparse = list(expect_sparse_gradient or ())
    keys = []
    for t in tensors:
        k = (t.dtype, str(t.device))
        keys.append(k)
    ids = {}
    key_ids = [ids.setdefault(k, len(ids)) for k in keys]
    sp = [bool(sparse[i]) if i < len(sparse) else False for i in idx]
    buckets, limits = _native().bucket_assignment([t.numel() * t.element_size() for t in tensors], key_ids, sp,
                                                  [int(x) for x in bucket_size_limits], not tensor_indices)
    # a sparse gradient's own bucket has no limit: upstream reports 0 (measured)
    return [[idx[i] for i in b] for b in buckets], [0 if x < 0 else x for x in limits]


@real(D)
def _register_comm_hook(reducer, state, comm_hook):
    reducer._register_comm_hook(state, comm_hook)


@real(D)
def _register_builtin_comm_hook(reducer, comm_hook_type):
    reducer._register_builtin_comm_hook(comm_hook_type)


@real(D)
def _broadcast_coalesced(process_group, tensors, buffer_size, src=0):
    """Broadcasts tensors from src in flat buffers of one dtype and at most about
    buffer_size bytes (upstream's take_tensors grouping), then copies them back."""
    import torch
    groups, open_ = [], {}
    for t in tensors:
        g = open_.setdefault(t.dtype, [[], 0])
        g[0].append(t)
        g[1] += t.numel() * t.element_size()
        if g[1] >= buffer_size:
            groups.append(g[0])
            del open_[t.dtype]
    groups += [g[0] for g in open_.values()]
    opts = _opt("BroadcastOptions")
    opts.rootRank = int(src)
    opts.asyncOp = False
    with torch.no_grad():
        for g in groups:
            flat = torch.cat([t.detach().reshape(-1) for t in g])
            process_group.broadcast([flat], opts).wait()
            off = 0
            for t in g:
                n = t.numel()
                t.detach().copy_(flat[off:off + n].view_as(t))
                off += n


@real(D)
def _verify_params_across_processes(process_group, params, logger=None):
    """upstream's verify_params_across_processes: every rank must hold the same number of
    parameters (all-gathered) and, parameter by parameter, rank 0's sizes and strides
    (broadcast); otherwise RuntimeError with upstream's text."""
    import torch

    def fail(msg):
        if logger is not None:
            lg = logger() if callable(logger) and not isinstance(logger, Logger) else logger
            if isinstance(lg, Logger):
                lg.set_error_and_log(msg)
        raise RuntimeError(msg)
    params = list(params)
    n = process_group.size()
    mine = torch.tensor([len(params)], dtype=torch.int64)
    outs = [torch.empty_like(mine) for _ in range(n)]
    process_group.allgather([outs], [mine]).wait()
    for i, o in enumerate(outs):
        if int(o[0]) != len(params):
            fail(f"DDP expects same model across all ranks, but Rank {process_group.rank()} has {len(params)} "
                 f"params, while rank {i} has inconsistent {int(o[0])} params.")
    meta = []
    for t in params:
        meta += list(t.shape) + list(t.stride())
    control = torch.tensor(meta, dtype=torch.int64)
    opts = _opt("BroadcastOptions")
    opts.rootRank = 0
    process_group.broadcast([control], opts).wait()
    control = control.tolist()
    i = 0
    for p, t in enumerate(params):
        for sz in t.shape:
            if sz != control[i]:
                fail(f"[{process_group.rank()}]: params[{p}] in this process with sizes {list(t.shape)} appears "
                     "not to match sizes of the same param in process 0.")
            i += 1
        for st in t.stride():
            if st != control[i]:
                fail(f"params[{p}] in this process with sizes {list(t.shape)} appears not to match strides of "
                     "the same param in process 0.")
            i += 1


_OP_CODES = {n: i for i, n in enumerate(
    "broadcast allreduce allreduce_coalesced reduce allgather _allgather_base allgather_coalesced gather "
    "scatter reduce_scatter alltoall_base alltoall send recv recv_anysource barrier _reduce_scatter_base".split())}


def _tensors_of(args):
    import torch
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(_tensors_of(a))
    return out


class _ProcessGroupWrapper(Backend):
    """What TORCH_DISTRIBUTED_DEBUG=DETAIL wraps around a backend: before each
    collective the ranks exchange a fingerprint (operation, tensor shapes and dtypes)
    through the helper gloo group and raise, naming the ranks and what each runs, when
    they disagree; then the call goes to the wrapped backend."""

    def __init__(self, pg, gloo_pg):
        super().__init__(pg.rank(), pg.size())
        self.wrapped_pg, self._helper = pg, gloo_pg
        self._seq = 0

    @property
    def options(self):
        return self.wrapped_pg.options

    def name(self):
        return self.wrapped_pg.name()

    def get_error(self):
        return ErrorType.SUCCESS

    def shutdown(self):
        self.wrapped_pg.shutdown()
        self._helper.shutdown()

    def abort(self):
        self.shutdown()

    def _check(self, op, args):
        import zlib

        import torch
        self._seq += 1
        ts = _tensors_of(args)
        fp = [self._seq, _OP_CODES.get(op, 99), len(ts)]
        for t in ts[:64]:
            fp += [zlib.crc32(str(t.dtype).encode()), t.dim()] + list(t.shape)
        mine = torch.tensor(fp, dtype=torch.int64)
        n = self._size
        lens = [torch.zeros(1, dtype=torch.int64) for _ in range(n)]
        self._helper.allgather([lens], [torch.tensor([mine.numel()])]).wait()
        width = max(int(x.item()) for x in lens)
        padded = torch.full((width,), -1, dtype=torch.int64)
        padded[:mine.numel()] = mine
        allfp = [torch.zeros(width, dtype=torch.int64) for _ in range(n)]
        self._helper.allgather([allfp], [padded]).wait()
        if any(not torch.equal(f, allfp[0]) for f in allfp):
            def desc(r):
                return f"Rank {r} is running collective: {op if r == self._rank else '?'} " \
                       f"(fingerprint {allfp[r].tolist()})"
            others = [r for r in range(n) if not torch.equal(allfp[r], allfp[self._rank])]
            raise RuntimeError(f"Detected mismatch between collectives on ranks. {desc(self._rank)}, "
                               f"but {'; '.join(desc(r) for r in others)}")


def _checked(name):
    def method(self, *args, **kwargs):
        self._check(name, args)
        return getattr(self.wrapped_pg, name)(*args, **kwargs)
    method.__name__ = name
    return method


for _n in _COLLECTIVES:
    setattr(_ProcessGroupWrapper, _n, _checked(_n))
add(D, "_ProcessGroupWrapper", _ProcessGroupWrapper, "real",
    "TORCH_DISTRIBUTED_DEBUG=DETAIL: fingerprints checked through the helper gloo group")


def _opt(name):
    import sys
    return getattr(sys.modules["torch._C._distributed_c10d"], name)()


add(D, "ProcessGroupGloo", ProcessGroupGloo, "real",
    "gloo backend in C (src/dist): TCP mesh, collectives, p2p; presence = gloo available")

# ---- process-group registry -------------------------------------------------------------
_groups = {}
_state = {"current": None, "inflight": False, "comm_names": {}}


@real(D)
def _register_process_group(group_name, pg):
    _groups[group_name] = pg


@real(D)
def _resolve_process_group(group_name):
    if group_name not in _groups:
        raise ValueError(f"Could not resolve the process group registered under the name {group_name}")
    return _groups[group_name]


@real(D)
def _unregister_process_group(group_name):
    _groups.pop(group_name, None)


@real(D)
def _unregister_all_process_groups():
    _groups.clear()


@real(D)
def _current_process_group():
    return _state["current"]


@real(D)
def _set_process_group(pg):
    _state["current"] = pg


@real(D)
def _allow_inflight_collective_as_graph_input():
    return _state["inflight"]


@real(D)
def _set_allow_inflight_collective_as_graph_input(v):
    _state["inflight"] = bool(v)


@real(D)
def _get_comm_profiling_name(pg):
    return _state["comm_names"].get(id(pg), "")


@real(D)
def _set_comm_profiling_name(pg, name):
    _state["comm_names"][id(pg)] = name


returning(D, "_set_global_rank _set_thread_isolation_mode _register_work", None,
          "bookkeeping for backends torchnative does not have")
returning(D, "_get_work_registry_size", 0, "no work is registered", status="real")
returning(D, "_get_handler_names", [], "no debug handlers", status="real")

refuse(D, """_test_python_store _create_work_from_future
_detect_dma_connectivity _dump_fr_trace _dump_fr_trace_json _get_handler _register_handler""")
refuse(D, """_ControlCollectives _StoreCollectives
_SymmetricMemory _WorkerServer PythonCallbackWork WorkInfo _DMAConnectivity
_Request _Response""", kind="type")

# torch._C._distributed: DTensor placements (C++ types upstream; Python dataclass-like here).
_DT = "torch._C._distributed"


class Placement:
    """Base of the DTensor placements (a C++ class upstream). Fields live in slots and are
    exposed as read-only properties, as upstream's pybind11 bindings do; the Python
    subclasses in torch/distributed/tensor/placement_types.py read the base descriptors
    directly (StridedShard.split_factor.__get__)."""
    __slots__ = ()

    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False

    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        for k, v in state.items():
            object.__setattr__(self, "_tn_" + k, v)


def _ro(field):
    return property(lambda self: getattr(self, "_tn_" + field))


class Shard(Placement):
    __slots__ = ("_tn_dim",)
    dim = _ro("dim")

    def __init__(self, dim):
        self._tn_dim = int(dim)

    def is_shard(self, dim=None):
        # Upstream: only an exact Shard (not a C++ subclass) reports shard-ness here.
        return dim is None or dim == self._tn_dim

    def __eq__(self, o):
        return isinstance(o, Shard) and o._tn_dim == self._tn_dim

    __hash__ = None          # pybind11 class defining __eq__ only: unhashable, as upstream

    def __getstate__(self):
        return {"dim": self._tn_dim}


class StridedShard(Placement):
    """Upstream derives StridedShard from Placement, not Shard (is_shard() is False)."""
    __slots__ = ("_tn_dim", "_tn_split_factor")
    dim = _ro("dim")
    split_factor = _ro("split_factor")

    def __init__(self, dim, *, split_factor):
        self._tn_dim = int(dim)
        self._tn_split_factor = int(split_factor)

    def __eq__(self, o):
        return (isinstance(o, StridedShard) and o._tn_dim == self._tn_dim
                and o._tn_split_factor == self._tn_split_factor)

    __hash__ = None

    def __getstate__(self):
        return {"dim": self._tn_dim, "split_factor": self._tn_split_factor}


class Replicate(Placement):
    __slots__ = ()

    def is_replicate(self):
        return True

    def __eq__(self, o):
        return isinstance(o, Replicate)

    __hash__ = None


class Partial(Placement):
    __slots__ = ("_tn_reduce_op",)
    reduce_op = _ro("reduce_op")

    def __init__(self, reduce_op=None):
        self._tn_reduce_op = "sum" if reduce_op is None else str(reduce_op)

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self._tn_reduce_op

    def __eq__(self, o):
        return isinstance(o, Partial) and o._tn_reduce_op == self._tn_reduce_op

    __hash__ = None

    def __getstate__(self):
        return {"reduce_op": self._tn_reduce_op}


for _c in (Placement, Shard, StridedShard, Replicate, Partial):
    add(_DT, _c.__name__, _c, "real", "DTensor placement record")

# torch._C._distributed_autograd / rpc: absent entry points, so rpc reports unavailable.
refuse("torch._C._distributed_autograd", """_current_context _get_debug_info _get_max_id _init
_is_valid_context _new_context _release_context _retrieve_context backward get_gradients""")
refuse("torch._C._distributed_autograd", "DistAutogradContext", kind="type")
