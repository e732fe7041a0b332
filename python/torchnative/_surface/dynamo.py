"""torch._C._dynamo: the C half of torch.compile (frame evaluation hook, guard trees).
torchnative has no frame-evaluation hook, so torch.compile cannot capture anything.
Importing torch._dynamo (transformers does at import) must work: the hook setters are
stored and never called (no frame is ever intercepted, so behaviour is plain eager),
guard classes exist to be named, and building guards refuses by name."""

import keyword

from torchnative._surface import add, enum_, inert, real, refuse, returning, submodule

DY = "torch._C._dynamo"
EF = DY + ".eval_frame"
G = DY + ".guards"
U = DY + ".utils"
CA = "torch._C._dynamo.autograd_compiler"
submodule(DY)
submodule(EF, "eval_frame")
submodule(G, "guards")
submodule(U, "utils")
submodule(CA, "compiled_autograd")

_state = {"callback": None, "guard_error_hook": None, "guard_complete_hook": None,
          "c_recursion_limit": 10000, "isolate_id": 0, "bytecode_cb": None}
_HOOK = "stored; torchnative has no frame-evaluation hook, so no frame is ever intercepted"


@inert(EF, reason=_HOOK)
def set_eval_frame(callback, *args):
    old = _state["callback"]
    _state["callback"] = callback
    return old


@inert(EF, reason=_HOOK)
def get_eval_frame_callback():
    return _state["callback"]


@inert(EF, reason=_HOOK)
def set_guard_error_hook(hook):
    _state["guard_error_hook"] = hook


@inert(EF, reason=_HOOK)
def set_guard_complete_hook(hook):
    old = _state["guard_complete_hook"]
    _state["guard_complete_hook"] = hook
    return old


@inert(EF, reason=_HOOK)
def set_code_exec_strategy(code, strategy):
    return None


@inert(EF, reason=_HOOK)
def set_skip_guard_eval_unsafe(value):
    old = _state.get("skip_guard", False)
    _state["skip_guard"] = value
    return old


@inert(EF, reason=_HOOK)
def get_c_recursion_limit():
    return _state["c_recursion_limit"]


@inert(EF, reason=_HOOK)
def set_c_recursion_limit(n):
    _state["c_recursion_limit"] = n


@inert(EF, reason=_HOOK)
def get_eval_frame_isolate_recompiles_id():
    return _state["isolate_id"]


@inert(EF, reason=_HOOK)
def set_eval_frame_isolate_recompiles_id(v):
    _state["isolate_id"] = v


@inert(EF, reason=_HOOK)
def get_bytecode_debugger_callback():
    return _state["bytecode_cb"]


@inert(EF, reason=_HOOK)
def set_bytecode_debugger_callback(cb):
    _state["bytecode_cb"] = cb


returning(EF, "reset_code unsupported raise_sigtrap register_breakpoint_code _reset_precompile_entries "
          "_set_lru_cache set_fullgraph_compiled_frame_count set_fullgraph_error_on_nested_compile",
          None, _HOOK)
returning(EF, "_debug_get_cache_entry_list _debug_get_precompile_entries _get_cache_entries_for_region",
          [], "no frame was ever compiled, so there are no cache entries", status="real")
returning(EF, "_get_total_cache_entry_count", 0, "no cache entries", status="real")
refuse(EF, "_load_precompile_entry _get_frame_value_stack_with_depth code_framelocals_names")
enum_(EF, "_FrameAction", {"DEFAULT": 0, "SKIP": 1, "RUN_ONLY": 2})


class _FrameExecStrategy:
    def __init__(self, cur_action=None, recursive_action=None):
        self.cur_action, self.recursive_action = cur_action, recursive_action


add(EF, "_FrameExecStrategy", _FrameExecStrategy, "real", "record")
refuse(EF, "_CacheEntry _ExtraState _PrecompileEntry _PyInterpreterFrame", kind="type")


class NullStackValue:
    def __repr__(self):
        return "<NULL>"


add(EF, "NullStackValue", NullStackValue, "real", "sentinel")
add(EF, "NULL_STACK_VALUE", NullStackValue(), "real", "sentinel")


class VectorUInt8(list):
    pass


add(EF, "VectorUInt8", VectorUInt8, "real", "list of bytes")
add(EF, "py_opcode_caches", VectorUInt8([0] * 256), "inert",
    "CPython inline-cache sizes; only read by dynamo's bytecode transformer, which never runs")

# ---- torch._C._dynamo top level ----------------------------------------------------------


@real(DY)
def is_valid_var_name(name):
    return 1 if (name.isidentifier() and not keyword.iskeyword(name)) else 0


@real(DY)
def strip_function_call(name):
    # "a.b(c).d" -> innermost argument name, as upstream's helper.
    import re
    m = re.match(r"^.*?\(([^()]*)\).*$", name)
    while m:
        name = m.group(1)
        m = re.match(r"^.*?\(([^()]*)\).*$", name)
    return name.split(",")[0].strip()


# ---- type-slot introspection (dynamo's object_protocol asks which C slots a type fills) ----
# Enum values are bit positions in the masks get_type_slots returns (upstream's numbering);
# each maps to CPython's stable slot id (Include/typeslots.h) so PyType_GetSlot can read it.
_SQ = {"SQ_LENGTH": (0, 45), "SQ_CONCAT": (1, 40), "SQ_REPEAT": (2, 46), "SQ_ITEM": (3, 44),
       "SQ_CONTAINS": (4, 41), "SQ_ASS_ITEM": (5, 39), "SQ_INPLACE_CONCAT": (6, 42),
       "SQ_INPLACE_REPEAT": (7, 43)}
_MP = {"MP_LENGTH": (0, 4), "MP_SUBSCRIPT": (1, 5), "MP_ASS_SUBSCRIPT": (2, 3)}
_NB = {"NB_ADD": (0, 7), "NB_SUBTRACT": (1, 36), "NB_MULTIPLY": (2, 29), "NB_REMAINDER": (3, 34),
       "NB_POWER": (4, 33), "NB_NEGATIVE": (5, 30), "NB_POSITIVE": (6, 32), "NB_ABSOLUTE": (7, 6),
       "NB_BOOL": (8, 9), "NB_INVERT": (9, 27), "NB_LSHIFT": (10, 28), "NB_RSHIFT": (11, 35),
       "NB_AND": (12, 8), "NB_XOR": (13, 38), "NB_OR": (14, 31), "NB_INT": (15, 26),
       "NB_FLOAT": (16, 11), "NB_INPLACE_ADD": (17, 14), "NB_INPLACE_SUBTRACT": (18, 23),
       "NB_INPLACE_MULTIPLY": (19, 18), "NB_INPLACE_REMAINDER": (20, 21), "NB_INPLACE_POWER": (21, 20),
       "NB_INPLACE_LSHIFT": (22, 17), "NB_INPLACE_RSHIFT": (23, 22), "NB_INPLACE_AND": (24, 15),
       "NB_INPLACE_XOR": (25, 25), "NB_INPLACE_OR": (26, 19), "NB_FLOOR_DIVIDE": (27, 12),
       "NB_TRUE_DIVIDE": (28, 37), "NB_INPLACE_FLOOR_DIVIDE": (29, 16), "NB_INPLACE_TRUE_DIVIDE": (30, 24),
       "NB_INDEX": (31, 13), "NB_MATRIX_MULTIPLY": (32, 75), "NB_INPLACE_MATRIX_MULTIPLY": (33, 76),
       "NB_DIVMOD": (34, 10)}
_TP = {"TP_HASH": (0, 59), "TP_ITER": (1, 62), "TP_ITERNEXT": (2, 63), "TP_CALL": (3, 50),
       "TP_REPR": (4, 66), "TP_RICHCOMPARE": (5, 67), "TP_GETATTRO": (6, 58), "TP_SETATTRO": (7, 69),
       "TP_DESCR_GET": (8, 54), "TP_DESCR_SET": (9, 55), "TP_STR": (10, 70)}
for _name, _table in (("PySequenceSlots", _SQ), ("PyMappingSlots", _MP), ("PyNumberSlots", _NB),
                      ("PyTypeSlots", _TP)):
    enum_(DY, _name, {k: bit for k, (bit, _) in _table.items()})

_get_slot = None


def _slot_mask(tp, table):
    global _get_slot
    if _get_slot is None:
        import ctypes
        f = ctypes.pythonapi.PyType_GetSlot
        f.restype, f.argtypes = ctypes.c_void_p, (ctypes.py_object, ctypes.c_int)
        _get_slot = f
    mask = 0
    for bit, slot_id in table.values():
        p = _get_slot(tp, slot_id)
        # Heap types get CPython's "not an iterator" filler in tp_iternext; like
        # PyIter_Check, that does not count as implementing the slot.
        if p and not (slot_id == 63 and p == _next_not_implemented()):
            mask |= 1 << bit
    return mask


def _next_not_implemented():
    import ctypes
    return ctypes.cast(ctypes.pythonapi._PyObject_NextNotImplemented, ctypes.c_void_p).value


@real(DY, reason="reads the type's C slots with PyType_GetSlot (stable ABI), as upstream does")
def get_type_slots(tp):
    if not isinstance(tp, type):
        raise TypeError("get_type_slots(): argument must be a type")
    return (_slot_mask(tp, _SQ), _slot_mask(tp, _MP), _slot_mask(tp, _NB), _slot_mask(tp, _TP))


@real(DY)
def has_slot(mask, slot):
    return bool((int(mask) >> int(slot)) & 1)

# ---- compiled autograd --------------------------------------------------------------------
returning(CA, "set_autograd_compiler", (None, False), "compiled autograd never runs (no autograd engine yet)")
returning(CA, "clear_cache set_verbose_logger", None, "compiled autograd never runs")
returning(CA, "is_cache_empty", True, "nothing was compiled", status="real")
refuse(CA, "call_cpp_tensor_pre_hooks")


@real(U)
def is_instancemethod(obj):
    import types
    return isinstance(obj, types.MethodType)


# ---- guards ----------------------------------------------------------------------------------
refuse(G, """GuardManager RootGuardManager DictGuardManager GuardAccessor LeafGuard RelationalGuard
GlobalStateGuard TensorGuards GuardDebugInfo COMPLEX_IS_NAN CallFunctionNoArgsGuardAccessor ClosureGuardAccessor
CodeGuardAccessor DEFAULT_DEVICE DICT_CONTAINS DICT_LENGTH DICT_VERSION DIMENSION_DYNAMIC_MARKING_GUARD
DISPATCH_KEY_SET_MATCH DUAL_LEVEL_MATCH DictGetItemGuardAccessor EQUALS_MATCH FAKE_SCRIPT_TYPE_MATCH FALSE_MATCH
FLOAT_IS_NAN FrameLocalsGuardAccessor FuncDefaultsGuardAccessor FuncKwDefaultsGuardAccessor GLOBAL_STATE
GenericGetAttrGuardAccessor GetAttrGuardAccessor GetGenericDictGuardAccessor GetItemGuardAccessor
GlobalWeakRefGuardAccessor GlobalsGuardAccessor ID_MATCH LAMBDA_GUARD LENGTH_CHECK ListGetItemGuardAccessor
MAPPING_KEYS_MATCH NONE_MATCH NOT_NONE NO_HASATTR NO_TENSOR_ALIASING OBJECT_ALIASING RANGE_ITERATOR_MATCH
SET_CONTAINS STORAGE_OVERLAPPING SYMBOLIC_SHAPE_GUARD TENSOR_MATCH TORCH_FUNCTION_MODE_STACK TRUE_MATCH
TUPLE_ITERATOR_LEN TYPE_MATCH TupleGetItemGuardAccessor TupleIteratorGetItemAccessor TypeDictGuardAccessor
TypeGuardAccessor TypeMROGuardAccessor WeakRefCallGuardAccessor""", kind="type")


@real(G)
def check_obj_id(obj, expected):
    return id(obj) == expected


@real(G)
def check_type_id(obj, expected):
    return id(type(obj)) == expected


@real(G)
def dict_version(d):
    return 0


refuse(G, """_empty_strided_cpu _empty_strided_cpu_pinned _empty_strided_cuda _empty_strided_mtia
_empty_strided_xpu _reinterpret_tensor assert_alignment assert_size_stride compute_overlapping_tensors
copy_if_misaligned install_no_tensor_aliasing_guard install_object_aliasing_guard
install_storage_overlapping_guard install_symbolic_shape_guard profile_guard_manager""")
returning(G, "set_is_in_mode_without_ignore_compile_internals", None, "no compile is running")
# Raw C function addresses for inductor's generated C++: there are none; 0 is never called
# because inductor cannot compile here.
for _n in ("_torchinductor_get_thp_dtype _torchinductor_get_thp_layout _torchinductor_get_thp_memory_format "
           "_torchinductor_pyobject_tensor_data_ptr _torchinductor_thp_device_new "
           "_torchinductor_thp_variable_wrap _torchinductor_thputils_unpack_int").split():
    add(G, _n, 0, "inert", "function address for inductor's C++; inductor cannot compile here")
