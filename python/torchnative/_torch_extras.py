"""Names upstream's _initExtension writes straight into the `torch` module (not into
torch._C): the functionalization helpers and to_dlpack. torchnative has no functional
tensors, so the two predicates answer False (true here); everything else refuses by name."""

_REFUSED = """_disable_functionalization _enable_functionalization _freeze_functional_tensor
_from_functional_tensor _functionalize_are_all_mutations_hidden_from_autograd
_functionalize_are_all_mutations_under_no_grad_or_inference_mode _functionalize_commit_update
_functionalize_enable_reapply_views _functionalize_get_storage_size _functionalize_has_data_mutation
_functionalize_has_metadata_mutation _functionalize_inductor_storage_resized_counter
_functionalize_is_multi_output_view _functionalize_is_symbolic _functionalize_mark_mutation_hidden_from_autograd
_functionalize_mark_storage_changed _functionalize_mutation_counter _functionalize_replace
_functionalize_storage_changed_counter _functionalize_sync _functionalize_unsafe_set
_functionalize_was_inductor_storage_resized _functionalize_was_storage_changed _mirror_autograd_meta_to
_segment_reduce _to_functional_tensor to_dlpack""".split()


def _refusing(name):
    def refused(*args, **kwargs):
        raise NotImplementedError(f"torch.{name} is not implemented by torchnative")

    refused.__name__ = refused.__qualname__ = name
    refused.__module__ = "torch"
    return refused


def _is_functional_tensor(t):
    return False


def _is_functional_tensor_base(t):
    return False


def install(torch_module):
    for name in _REFUSED:
        setattr(torch_module, name, _refusing(name))
    for fn in (_is_functional_tensor, _is_functional_tensor_base):
        fn.__module__ = "torch"
        setattr(torch_module, fn.__name__, fn)
    _make_legacy_types(torch_module)
    _set_legacy_aliases(torch_module)


# ---- torch.bit and torch.Storage ------------------------------------------------------------
# Upstream's initializeDtypes publishes uint1 under its legacy name "bit" too; our C dtype
# table has no alias for uint1 yet (src/python/dtype.c), so add it here unless C already did.
# torch.Storage is upstream's set_default_storage_type (python_tensor.cpp): the legacy storage
# class of the default dtype, re-pointed by set_default_dtype/set_default_tensor_type. Here it
# is set once at _initExtension; following later default-dtype changes needs C (state.c).
_STORAGE_NAMES = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                  "bfloat16": "BFloat16Storage", "complex64": "ComplexFloatStorage",
                  "complex128": "ComplexDoubleStorage"}


def _set_legacy_aliases(torch_module):
    torch = torch_module
    if "bit" not in torch.__dict__:
        torch.bit = torch.uint1
    if "Storage" not in torch.__dict__:
        name = _STORAGE_NAMES.get(str(torch.get_default_dtype()).replace("torch.", ""))
        if name is not None and name in torch.__dict__:
            torch.Storage = torch.__dict__[name]


# ---- legacy tensor types (torch.FloatTensor, ...) -----------------------------------------
# Upstream's _initExtension creates them: classes of metaclass torch.tensortype, subclasses
# of object only, whose isinstance matches CPU tensors of their dtype and whose call is the
# legacy constructor (sizes -> uninitialised tensor, data -> copy).
_LEGACY = (("DoubleTensor", "float64"), ("FloatTensor", "float32"), ("HalfTensor", "float16"),
           ("BFloat16Tensor", "bfloat16"), ("LongTensor", "int64"), ("IntTensor", "int32"),
           ("ShortTensor", "int16"), ("CharTensor", "int8"), ("ByteTensor", "uint8"), ("BoolTensor", "bool"))


def _make_legacy_types(torch_module):
    torch = torch_module

    class tensortype(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, torch.Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu"

        def __call__(cls, *args, device=None):
            if device is not None and torch.device(device).type != "cpu":
                raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                                   f"{torch.device(device).type} was passed")
            if not args:
                return torch.empty(0, dtype=cls.dtype)
            if all(isinstance(a, int) for a in args) or (len(args) == 1 and isinstance(args[0], torch.Size)):
                sizes = args[0] if isinstance(args[0], torch.Size) else args
                return torch.empty(tuple(sizes), dtype=cls.dtype)
            if len(args) == 1:
                if isinstance(args[0], torch.Tensor):
                    if args[0].dtype != cls.dtype:
                        raise TypeError(f"expected {cls.dtype} (got {args[0].dtype})")
                    return args[0].detach()
                return torch.tensor(args[0], dtype=cls.dtype)
            raise TypeError(f"new() received an invalid combination of arguments")

    tensortype.__module__ = "torch"
    for name, dt in _LEGACY:
        cls = tensortype(name, (object,), {"__module__": "torch", "dtype": getattr(torch, dt),
                                           "is_cuda": False, "is_sparse": False, "layout": torch.strided})
        setattr(torch, name, cls)
