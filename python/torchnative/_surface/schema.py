"""Operator schemas and the torch.ops plumbing: JIT types, FunctionSchema/Argument/
_AliasInfo, parse_schema (a real parser of upstream's schema language), the operator
registry behind _jit_get_operation/_get_operation_overload/_get_schema, and torch.library's
_dispatch_library (Python kernels are recorded; the C door never runs them, but an
operator outside the door's aten table runs its Python kernel, see _make_overload_callable).

Where schemas come from: aten schemas are asked of C (`torch._C._tn_op_schemas()`, the
generated table) and, until C provides that, read from the vendored torchgen's
native_functions.yaml (upstream's own data). Ops defined through torch.library are added
at run time. Calls go through C's `_tn_op_lookup` / `_tn_call_op`; when C lacks them a call
refuses by name.
"""

import functools
import os
import re
import sys

from torchnative._surface import C, add, inert, make_enum, real, refuse, returning


# ---- JIT types ---------------------------------------------------------------------
class Type:
    """Base of the JIT type objects found in schemas (upstream: torch._C.Type)."""
    _kind = "AnyType"
    _str = "Any"

    def kind(self):
        return self._kind

    def __str__(self):
        return self.annotation_str

    def __repr__(self):
        return self.annotation_str

    @property
    def annotation_str(self):
        return self._str

    def str(self):
        return str(self)

    def __eq__(self, other):
        return isinstance(other, Type) and str(self) == str(other) and self.kind() == other.kind()

    def __hash__(self):
        return hash((self.kind(), str(self)))

    def containedTypes(self):
        return []

    def isSubtypeOf(self, other):
        if other == self or isinstance(other, AnyType):
            return True
        if isinstance(other, OptionalType):
            return isinstance(self, NoneType) or self.isSubtypeOf(other.getElementType())
        if isinstance(other, NumberType):
            return isinstance(self, (IntType, FloatType, ComplexType))
        return False

    def is_interface_type(self):
        return False

    def requires_grad(self):
        return False

    def dim(self):
        return None

    def scalarType(self):
        return None

    def sizes(self):
        return None

    def undefined(self):
        return None


def _singleton(name, kind, text):
    def get(cls):
        inst = cls.__dict__.get("_inst")
        if inst is None:
            inst = cls.__new__(cls)
            cls._inst = inst
        return inst
    cls = type(name, (Type,), {"_kind": kind, "_str": text, "get": classmethod(get),
                               "__init__": lambda self: None})
    add(C, name, cls, "real", "JIT type used by parsed schemas")
    return cls


AnyType = _singleton("AnyType", "AnyType", "Any")
TensorType = _singleton("TensorType", "TensorType", "Tensor")
IntType = _singleton("IntType", "IntType", "int")
FloatType = _singleton("FloatType", "FloatType", "float")
ComplexType = _singleton("ComplexType", "ComplexType", "complex")
BoolType = _singleton("BoolType", "BoolType", "bool")
StringType = _singleton("StringType", "StringType", "str")
NoneType = _singleton("NoneType", "NoneType", "NoneType")
NumberType = _singleton("NumberType", "NumberType", "number")
DeviceObjType = _singleton("DeviceObjType", "DeviceObjType", "Device")
StreamObjType = _singleton("StreamObjType", "StreamObjType", "Stream")
SymIntType = _singleton("SymIntType", "SymIntType", "SymInt")
SymBoolType = _singleton("SymBoolType", "SymBoolType", "SymBool")
PyObjectType = _singleton("PyObjectType", "PyObjectType", "PyObject")
_GeneratorType = _singleton("_GeneratorType", "GeneratorType", "Generator")
TensorType.getInferred = classmethod(lambda cls: cls.get())
TensorType.create_from_tensor = staticmethod(lambda t: TensorType.get())
add(C, "Type", Type, "real", "base of JIT types")


class _NamedIntType(Type):
    """ScalarType / Layout / MemoryFormat / Storage / Dimname...: their `type` in a schema
    is int (or str) upstream and `real_type` carries the name."""
    _kind = "IntType"

    def __init__(self, text, kind="IntType"):
        self._str, self._kind = text, kind


class _Container(Type):
    def __init__(self, *elems):
        self._elems = list(elems)

    def containedTypes(self):
        return list(self._elems)

    def getElementType(self):
        return self._elems[0]


class OptionalType(_Container):
    _kind = "OptionalType"

    @property
    def annotation_str(self):
        return f"Optional[{self._elems[0].annotation_str}]"


    @classmethod
    def ofTensor(cls):
        return cls(TensorType.get())


class ListType(_Container):
    _kind = "ListType"

    @property
    def annotation_str(self):
        return f"List[{self._elems[0].annotation_str}]"


    def isSubtypeOf(self, other):
        if isinstance(other, ListType):
            return self._elems[0].isSubtypeOf(other._elems[0]) and other._elems[0].isSubtypeOf(self._elems[0])
        return Type.isSubtypeOf(self, other)

    @classmethod
    def ofTensors(cls):
        return cls(TensorType.get())

    @classmethod
    def ofInts(cls):
        return cls(IntType.get())

    @classmethod
    def ofFloats(cls):
        return cls(FloatType.get())

    @classmethod
    def ofBools(cls):
        return cls(BoolType.get())

    @classmethod
    def ofStrings(cls):
        return cls(StringType.get())

    @classmethod
    def ofComplexDoubles(cls):
        return cls(ComplexType.get())

    @classmethod
    def ofSymInts(cls):
        return cls(SymIntType.get())


class TupleType(_Container):
    _kind = "TupleType"

    def __init__(self, elems=()):
        self._elems = list(elems)

    def elements(self):
        return list(self._elems)

    @property
    def annotation_str(self):
        return "Tuple[" + ", ".join(e.annotation_str for e in self._elems) + "]"



class DictType(_Container):
    _kind = "DictType"

    def getKeyType(self):
        return self._elems[0]

    def getValueType(self):
        return self._elems[1]

    @property
    def annotation_str(self):
        return f"Dict[{self._elems[0].annotation_str}, {self._elems[1].annotation_str}]"



class UnionType(_Container):
    _kind = "UnionType"

    def __init__(self, elems=()):
        self._elems = list(elems)

    @property
    def annotation_str(self):
        return "Union[" + ", ".join(e.annotation_str for e in self._elems) + "]"


class FutureType(_Container):
    _kind = "FutureType"

    @property
    def annotation_str(self):
        return f"Future[{self._elems[0].annotation_str}]"


class AwaitType(_Container):
    _kind = "AwaitType"

    @property
    def annotation_str(self):
        return f"Await[{self._elems[0].annotation_str}]"


class RRefType(_Container):
    _kind = "RRefType"

    @property
    def annotation_str(self):
        return f"RRef[{self._elems[0].annotation_str}]"


class _VarType(Type):
    """Type variable (`t`, `t1` in schemas such as aten::append.t)."""
    _kind = "VarType"

    def __init__(self, name):
        self._str = name


class ClassType(Type):
    """Named custom class (`__torch__.torch.classes.ns.Name`)."""
    _kind = "ClassType"

    def __init__(self, qualified_name):
        self._str = qualified_name

    def qualified_name(self):
        return self._str

    def name(self):
        return self._str.rsplit(".", 1)[-1]


class EnumType(Type):
    _kind = "EnumType"

    def __init__(self, *a, **k):
        raise NotImplementedError("torch._C.EnumType is not implemented by torchnative")


class InterfaceType(Type):
    _kind = "InterfaceType"

    def __init__(self, *a, **k):
        raise NotImplementedError("torch._C.InterfaceType is not implemented by torchnative")


for _cls in (OptionalType, ListType, TupleType, DictType, UnionType, FutureType, AwaitType,
             RRefType, ClassType):
    add(C, _cls.__name__, _cls, "real", "JIT type used by parsed schemas")
add(C, "EnumType", EnumType, "refuse", "TorchScript enums")
add(C, "InterfaceType", InterfaceType, "refuse", "TorchScript interfaces")


# ---- schema objects ------------------------------------------------------------------
class _AliasInfo:
    """Alias annotation of an argument: `Tensor(a!)` -> before_set {'alias::a'}, is_write."""

    def __init__(self, is_write, before_set, after_set, contained=()):
        self.is_write = is_write
        self.before_set = set(before_set)
        self.after_set = set(after_set)
        self._contained = list(contained)

    def __repr__(self):
        s = "|".join(sorted(x.split("::")[-1] for x in self.before_set))
        if self.after_set != self.before_set:
            s += " -> " + "|".join(sorted(x.split("::")[-1] for x in self.after_set))
        return "(" + s + ("!" if self.is_write else "") + ")"


class Argument:
    """One argument or return of a FunctionSchema."""

    def __init__(self, name, type, N=None, default_value=None, kwarg_only=False,
                 alias_info=None, real_type=None, is_out=False, has_default=None,
                 _text=None):
        self.name = name
        self.type = type
        self.real_type = real_type if real_type is not None else type
        self.N = N
        self.default_value = default_value
        self._has_default = (default_value is not None) if has_default is None else has_default
        self.kwarg_only = kwarg_only
        self.alias_info = alias_info
        self.is_out = is_out
        self._text = _text

    def has_default_value(self):
        return self._has_default

    @property
    def is_write(self):
        return self.alias_info is not None and self.alias_info.is_write

    def __str__(self):
        if self._text is not None:
            return self._text
        return f"{self.real_type} {self.name}".strip()

    __repr__ = __str__


class FunctionSchema:
    """A parsed operator schema; str() gives back the canonical schema text."""

    def __init__(self, name, overload_name, arguments, returns, is_vararg=False,
                 is_varret=False, _text=None):
        self.name = name
        self.overload_name = overload_name
        self.arguments = list(arguments)
        self.returns = list(returns)
        self.is_vararg = is_vararg
        self.is_varret = is_varret
        self._text = _text

    @property
    def is_mutable(self):
        return any(a.alias_info is not None and a.alias_info.is_write for a in self.arguments)

    def _is_view_op(self):
        for a in self.arguments:
            if a.alias_info is not None and not a.alias_info.is_write:
                return True
        return False

    def __str__(self):
        if self._text is not None:
            return self._text
        name = self.name + ("." + self.overload_name if self.overload_name else "")
        args = ", ".join(str(a) for a in self.arguments)
        rets = ", ".join(str(r) for r in self.returns)
        if len(self.returns) != 1:
            rets = "(" + rets + ")"
        return f"{name}({args}) -> {rets}"

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, FunctionSchema) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def check_forward_compatible_with(self, other):
        return (str(self) == str(other), "")

    def is_backward_compatible_with(self, other):
        return str(self) == str(other)

    def __getstate__(self):
        return str(self)

    def __setstate__(self, s):
        self.__dict__.update(parse_schema(s).__dict__)


for _cls in (_AliasInfo, Argument, FunctionSchema):
    add(C, _cls.__name__, _cls, "real", "schema object produced by parse_schema")


# ---- the parser ----------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(->|\.\.\.|[A-Za-z_][A-Za-z0-9_.:]*|-?\d+\.?\d*(?:e[-+]?\d+)?|"
                    r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[()\[\],=?!*|])")

_NAMED_INT = {"ScalarType": "int", "Layout": "int", "MemoryFormat": "int", "QScheme": None,
              "Dimname": "str", "Storage": None, "Stream": None, "Generator": None}


class _Parser:
    def __init__(self, text):
        self.text = text
        self.toks = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise RuntimeError(f"schema parser: unexpected character at {pos} in {text!r}")
            self.toks.append(m.group(1))
            pos = m.end()
        self.i = 0

    def peek(self, k=0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self):
        t = self.peek()
        self.i += 1
        return t

    def expect(self, t):
        got = self.next()
        if got != t:
            raise RuntimeError(f"schema parser: expected {t!r} but found {got!r} in {self.text!r}")

    # type grammar -------------------------------------------------------------
    def alias(self):
        """Parses `(a)`, `(a!)`, `(a -> *)`, `(a|b)` after a type name."""
        self.expect("(")
        before, after, write = [], None, False
        while True:
            t = self.next()
            before.append("alias::" + t if t != "*" else "alias::*")
            if self.peek() == "|":
                self.next()
                continue
            break
        if self.peek() == "!":
            self.next()
            write = True
        if self.peek() == "->":
            self.next()
            after = []
            while True:
                t = self.next()
                after.append("alias::" + t if t != "*" else "alias::*")
                if self.peek() == "|":
                    self.next()
                    continue
                break
            if self.peek() == "!":
                self.next()
                write = True
        self.expect(")")
        return _AliasInfo(write, before, after if after is not None else before)

    def base_type(self):
        t = self.next()
        if t == "(":
            elems = []
            while self.peek() != ")":
                elems.append(self.full_type()[0])
                if self.peek() == ",":
                    self.next()
            self.expect(")")
            typ = real = TupleType([e for e in elems])
            return typ, real
        if t in ("Dict", "Union", "Future", "Await", "RRef") and self.peek() == "(":
            self.next()
            elems = []
            while self.peek() != ")":
                elems.append(self.full_type()[0])
                if self.peek() == ",":
                    self.next()
            self.expect(")")
            cls = {"Dict": DictType, "Future": FutureType, "Await": AwaitType, "RRef": RRefType}.get(t)
            typ = UnionType(elems) if t == "Union" else cls(*elems)
            return typ, typ
        simple = {"Tensor": TensorType, "int": IntType, "float": FloatType, "complex": ComplexType,
                  "bool": BoolType, "str": StringType, "Any": AnyType, "Scalar": NumberType,
                  "Device": DeviceObjType, "NoneType": NoneType,
                  "number": NumberType, "Generator": _GeneratorType, "Stream": StreamObjType,
                  "PyObject": PyObjectType}
        if t in simple:
            typ = simple[t].get()
            return typ, typ
        if t == "SymBool":
            # like SymInt: reported as the plain type
            return BoolType.get(), BoolType.get()
        if t == "DeviceIndex":
            return IntType.get(), IntType.get()
        if t == "SymInt":
            # upstream reports SymInt arguments as int in both type and real_type
            return IntType.get(), IntType.get()
        if t in _NAMED_INT:
            k = _NAMED_INT[t]
            typ = IntType.get() if k == "int" else StringType.get() if k == "str" else _NamedIntType(t, t + "Type")
            return typ, _NamedIntType(t, t + "Type")
        if t.startswith("__torch__") or "." in t:
            c = ClassType(t)
            return c, c
        v = _VarType(t)
        return v, v

    def full_type(self):
        """Returns (type, real_type, alias_info, N)."""
        typ, real = self.base_type()
        alias = None
        N = None
        if self.peek() == "(":
            alias = self.alias()
        while True:
            if self.peek() == "[":
                self.next()
                if self.peek() != "]":
                    N = int(self.next())
                self.expect("]")
                typ, real = ListType(typ), ListType(real)
                if self.peek() == "(":
                    inner = alias
                    alias = self.alias()
                    if inner is not None:
                        alias._contained = [inner]
                continue
            if self.peek() == "?":
                self.next()
                typ, real = OptionalType(typ), OptionalType(real)
                continue
            break
        return typ, real, alias, N

    # values -------------------------------------------------------------------
    def default_value(self):
        t = self.peek()
        if t == "[":
            self.next()
            items = []
            while self.peek() != "]":
                items.append(self.default_value())
                if self.peek() == ",":
                    self.next()
            self.next()
            return items
        self.next()
        if t in ("True", "False"):
            return t == "True"
        if t == "None":
            return None
        if t[0] in "'\"":
            return t[1:-1].encode().decode("unicode_escape")
        try:
            return int(t)
        except ValueError:
            pass
        try:
            return float(t)
        except ValueError:
            pass
        return {"Mean": 1, "Sum": 2, "contiguous_format": t, "long": t}.get(t, t)

    def argument(self, kwarg_only, is_return):
        start = self.i
        typ, real, alias, N = self.full_type()
        name = ""
        if self.peek() not in (",", ")", "=", None):
            name = self.next()
        default, has_default = None, False
        if self.peek() == "=":
            self.next()
            default, has_default = self.default_value(), True
        if not is_return and real.kind() == "ListType" and N is not None and isinstance(default, int) \
                and not isinstance(default, bool):
            default = [default] * N
        is_out = kwarg_only and alias is not None and alias.is_write and not is_return
        return Argument(name, typ, N, default, kwarg_only, alias, real_type=real,
                        is_out=is_out, has_default=has_default)

    def parse(self):
        full = self.next()
        if self.peek() == "." or (full and "." in full.split("::")[-1]):
            pass
        if "::" in full and "." in full.split("::", 1)[1]:
            name, _, overload = full.rpartition(".")
        else:
            name, overload = full, ""
        if self.peek() != "(":
            return name, overload, None, None, False, False
        self.expect("(")
        args, kwarg_only, vararg = [], False, False
        while self.peek() != ")":
            if self.peek() == "*":
                self.next()
                kwarg_only = True
            elif self.peek() == "...":
                self.next()
                vararg = True
            else:
                args.append(self.argument(kwarg_only, False))
            if self.peek() == ",":
                self.next()
        self.expect(")")
        self.expect("->")
        rets, varret = [], False
        if self.peek() == "(" and self._is_return_tuple():
            self.next()
            while self.peek() != ")":
                if self.peek() == "...":
                    self.next()
                    varret = True
                else:
                    rets.append(self.argument(False, True))
                if self.peek() == ",":
                    self.next()
            self.expect(")")
        elif self.peek() == "...":
            self.next()
            varret = True
        else:
            rets.append(self.argument(False, True))
        return name, overload, args, rets, vararg, varret

    def _is_return_tuple(self):
        # `-> (Tensor, Tensor)` is a list of returns; a single tuple-typed return does not
        # occur in native_functions.yaml, so '(' after '->' always opens the returns list.
        return True


def _normalise(text):
    return " ".join(text.split())


@real()
def parse_schema(schema, allow_typevars=True):
    """Parse an upstream schema string into a FunctionSchema."""
    p = _Parser(schema)
    name, overload, args, rets, vararg, varret = p.parse()
    if args is None:
        raise RuntimeError(f"Expected '(' in schema {schema!r}")
    if p.peek() is not None:
        raise RuntimeError(f"schema parser: trailing text {p.peek()!r} in {schema!r}")
    if "::" not in name:
        name = name
    return FunctionSchema(name, overload, args, rets, vararg, varret, _text=_normalise(schema))


# ---- the operator registry ------------------------------------------------------------
class _OpRecord:
    __slots__ = ("qualname", "overload", "schema_text", "tags", "index", "_schema", "py_kernels",
                 "py_keyset_kernels", "defined_in_python")

    def __init__(self, qualname, overload, schema_text, tags=(), index=None):
        self.qualname, self.overload, self.schema_text = qualname, overload, schema_text
        self.tags = list(tags)
        self.index = index
        self._schema = None
        self.py_kernels = {}
        self.py_keyset_kernels = set()   # keys whose kernel takes a DispatchKeySet first
        self.defined_in_python = False

    @property
    def schema(self):
        if self._schema is None:
            self._schema = parse_schema(self.schema_text)
        return self._schema


OPS = {}            # qualname -> {overload -> _OpRecord}, overloads in declaration order
_loaded = False


def _c_module():
    return sys.modules.get("torch._C")


def _native_functions_yaml():
    """Path of torchgen's native_functions.yaml next to the vendored torch tree."""
    for p in sys.path:
        cand = os.path.join(p, "torchgen", "packaged", "ATen", "native", "native_functions.yaml")
        if os.path.exists(cand):
            return cand
    return None


_FUNC_RE = re.compile(r"^- func:\s*(.+?)\s*$")
_TAGS_RE = re.compile(r"^\s+tags:\s*(.+?)\s*$")


def _schemas_from_yaml(path):
    out = []
    with open(path, encoding="utf-8") as f:
        cur = None
        for line in f:
            m = _FUNC_RE.match(line)
            if m:
                cur = [m.group(1), []]
                out.append(cur)
                continue
            m = _TAGS_RE.match(line)
            if m and cur is not None:
                v = m.group(1).strip("[]")
                cur[1] = [t.strip() for t in v.split(",") if t.strip()]
    return [("aten::" + s, tags) for s, tags in out]


def _register(schema_text, tags=(), index=None):
    head = schema_text.split("(", 1)[0].strip()
    qual, _, overload = head.partition(".")
    rec = _OpRecord(qual, overload, schema_text, tags, index)
    OPS.setdefault(qual, {})[overload] = rec
    return rec


def _ensure_loaded():
    global _loaded
    if _loaded:
        return
    _loaded = True
    c = _c_module()
    texts = None
    fn = getattr(c, "_tn_op_schemas", None) if c is not None else None
    if fn is not None:
        texts = [(s if "::" in s.split("(", 1)[0] else "aten::" + s, ()) for s in fn()]
    if texts is None:
        path = _native_functions_yaml()
        texts = _schemas_from_yaml(path) if path else []
    for s, tags in texts:
        _register(s, tags)
    # Operators upstream's libtorch registers outside aten (profiler::, prim::, quantized::
    # ...): their schemas exist; calling one refuses by name (no kernel behind it).
    extra = os.path.join(os.path.dirname(os.path.abspath(__file__)), "extra_schemas.txt")
    with open(extra) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                _register(line, ())


def _lookup(qualname, overload):
    _ensure_loaded()
    recs = OPS.get(qualname)
    if recs is None:
        return None
    return recs.get(overload)


def _c_index(rec):
    if rec.index is None:
        c = _c_module()
        look = getattr(c, "_tn_op_lookup", None)
        if look is not None:
            rec.index = look(rec.qualname, rec.overload)
    return rec.index


# Operators outside aten that upstream implements in C++ and torchnative in Python
# ("profiler::_record_function_enter_new" -> callable); see python_op below.
PYTHON_OPS = {}

# Dispatch keys whose torch.library kernel computes an eager CPU call, in the order
# upstream's dispatcher would reach them for a CPU tensor without autograd.
_EAGER_KEYS = ("CPU", "CompositeExplicitAutograd", "CompositeImplicitAutograd")


def python_op(qualified_name):
    """Decorator: the Python implementation of a non-aten operator whose schema is
    registered (extra_schemas.txt), e.g. python_op("profiler::_record_function_exit._RecordFunction")."""
    def deco(fn):
        PYTHON_OPS[qualified_name] = fn
        return fn
    return deco


# Dispatch keys of a torch.library autograd kernel (custom_op's register_autograd registers
# under "Autograd", with a key set), reached first unless _AutoDispatchBelowAutograd is on.
_AUTOGRAD_KEYS = ("AutogradCPU", "Autograd")


def _python_kernel(rec, autograd=False):
    """The Python function that runs `rec`, or None: torchnative's own implementation of an
    upstream C++ operator, else a kernel registered through torch.library: with `autograd`,
    an autograd kernel first unless the thread's exclude set holds AutogradCPU (as upstream's
    dispatcher reaches the Autograd key before the backend's), then one under a CPU-reaching
    key (with_keyset kernels get the key set below the one they were reached at)."""
    name = rec.qualname + ("." + rec.overload if rec.overload else "")
    fn = PYTHON_OPS.get(name)
    if fn is not None:
        return fn
    from torchnative._surface.dispatch import DispatchKey, DispatchKeySet, _tls
    if autograd and not _tls.excluded.has(DispatchKey.AutogradCPU):
        for key in _AUTOGRAD_KEYS:
            k = rec.py_kernels.get(key)
            if k is not None:
                if key in rec.py_keyset_kernels:
                    return functools.partial(k, DispatchKeySet(DispatchKey.AutogradCPU) | DispatchKeySet(DispatchKey.CPU))
                return k
    for key in _EAGER_KEYS:
        k = rec.py_kernels.get(key)
        if k is not None:
            if key in rec.py_keyset_kernels:
                from torchnative._surface.dispatch import DispatchKey, DispatchKeySet
                return functools.partial(k, DispatchKeySet(DispatchKey.CPU))
            return k
    return None


def _make_overload_callable(rec):
    name = rec.qualname + ("." + rec.overload if rec.overload else "")
    idx = _c_index(rec)
    call = getattr(_c_module(), "_tn_call_op", None)
    if idx is not None and idx >= 0 and call is not None:
        # The hot path of torch.ops.aten.X.Y(...): a C-level partial straight into the
        # binding, no Python frame of ours (per-op overhead, docs/PERFORMANCE.md).
        op = functools.partial(call, idx)
        op.__name__ = op.__qualname__ = rec.qualname.split("::")[-1]
        return op

    def op(*args, **kwargs):
        idx = _c_index(rec)
        c = _c_module()
        call = getattr(c, "_tn_call_op", None)
        if idx is not None and idx >= 0 and call is not None:
            return call(idx, *args, **kwargs)
        # Not an operator of the C door (-1: no aten overload of that name): operators
        # other libraries register, or torch.library definitions, run in Python.
        fn = _python_kernel(rec, autograd=True)
        if fn is None:
            raise NotImplementedError(f"{name} is not implemented by torchnative")
        return fn(*args, **kwargs)
    op.__name__ = op.__qualname__ = rec.qualname.split("::")[-1]
    return op


def _make_packet_callable(qualname):
    def op(*args, **kwargs):
        recs = list(OPS[qualname].values())
        if len(recs) == 1:
            return _make_overload_callable(recs[0])(*args, **kwargs)
        # Upstream's packet call: the first overload (in declaration order) whose schema
        # the arguments match runs; when none does, one RuntimeError lists every mismatch.
        errors, skipped = [], []
        for rec in recs:
            try:
                return _make_overload_callable(rec)(*args, **kwargs)
            except NotImplementedError:  # (a RuntimeError: first)
                # an overload without a kernel here (TorchScript's int/str/list forms)
                idx = _c_index(rec)
                if idx is not None and idx >= 0:
                    raise
                skipped.append(rec.qualname + ("." + rec.overload if rec.overload else ""))
            except (TypeError, RuntimeError) as e:
                if not _is_schema_mismatch(e):
                    raise
                errors.append(str(e))
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any schema:\n"
                           + "\n\n".join(errors)
                           + (f"\n\n(not tried: {', '.join(skipped)} are not implemented by torchnative)"
                              if skipped else ""))
    op.__name__ = op.__qualname__ = qualname.split("::")[-1]
    return op


# The argument parser's schema-mismatch errors (src/python/argparse.c, schema calls), as
# opposed to errors the operator itself raises after binding its arguments.
_MISMATCH_MARKERS = ("Expected a value of type", "is missing value for argument", "got an unexpected keyword argument",
                     "Unknown keyword argument", "got multiple values for", "argument(s) but received",
                     "both as positional and keyword argument")


def _is_schema_mismatch(e):
    msg = str(e)
    return any(m in msg for m in _MISMATCH_MARKERS)


@real(reason="overload list from the generated schema table / torch.library definitions")
def _jit_get_operation(qualname):
    _ensure_loaded()
    recs = OPS.get(qualname)
    if not recs:
        raise RuntimeError(f"No such operator {qualname}")
    return _make_packet_callable(qualname), list(recs.keys())


_TAG_ENUM = None


@real()
def _get_operation_overload(qualname, overload):
    rec = _lookup(qualname, overload)
    if rec is None:
        return None
    op = _make_overload_callable(rec)

    def op_dk(dispatch_key, *args, **kwargs):
        return op(*args, **kwargs)
    tags = []
    for t in rec.tags:
        if t in Tag.__members__:
            tags.append(Tag[t])
    return op, op_dk, tags


@real()
def _get_schema(qualname, overload):
    rec = _lookup(qualname, overload)
    if rec is None:
        raise RuntimeError(f"Schema not found for {qualname}.{overload}")
    return rec.schema


@real()
def _jit_get_schemas_for_operator(qualname):
    _ensure_loaded()
    return [r.schema for r in OPS.get(qualname, {}).values()]


@real()
def _jit_get_all_schemas():
    _ensure_loaded()
    return [r.schema for recs in OPS.values() for r in recs.values()]


@real()
def _dispatch_get_all_op_names():
    _ensure_loaded()
    return [q + ("." + o if o else "") for q, recs in OPS.items() for o in recs]


class _DispatchOperatorHandle:
    def __init__(self, rec):
        self._rec = rec

    def schema(self):
        return self._rec.schema

    def debug(self):
        return f"registered at {self._rec.qualname}"

    def __repr__(self):
        return f"<_DispatchOperatorHandle {self._rec.qualname}.{self._rec.overload}>"

    def redispatch_boxed(self, keyset, *args, **kwargs):
        """OpOverload.redispatch: the kernel below the key set's autograd (an autograd kernel
        calls this with keyset & _after_autograd_keyset): a torch.library kernel eagerly, or
        an operator of the C door with autograd not recording (below autograd)."""
        rec = self._rec
        idx = _c_index(rec)
        if idx is not None and idx >= 0:
            import torch
            with torch.no_grad():
                return _c_module()._tn_call_op(idx, *args, **kwargs)
        fn = _python_kernel(rec)
        if fn is None:
            name = rec.qualname + ("." + rec.overload if rec.overload else "")
            raise NotImplementedError(f"{name} is not implemented by torchnative")
        return fn(*args, **kwargs)


add(C, "_DispatchOperatorHandle", _DispatchOperatorHandle, "real", "handle on a registry entry")


@real()
def _dispatch_find_schema_or_throw(qualname, overload):
    rec = _lookup(qualname, overload)
    if rec is None:
        raise RuntimeError(f"Could not find schema for {qualname}.{overload}")
    return _DispatchOperatorHandle(rec)


def _split(name):
    qual, _, overload = name.partition(".")
    return qual, overload


_CPU_LIKE = {"CPU", "Meta", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"}


@real(reason="true for every operator in the schema table or defined via torch.library")
def _dispatch_has_kernel(name):
    return _lookup(*_split(name)) is not None


@real(reason="true for Python kernels registered via torch.library; C kernels are not keyed")
def _dispatch_has_kernel_for_dispatch_key(name, key):
    rec = _lookup(*_split(name))
    if rec is None:
        return False
    return str(getattr(key, "name", key)) in rec.py_kernels


@real(reason="same answer as _dispatch_has_kernel_for_dispatch_key")
def _dispatch_has_computed_kernel_for_dispatch_key(name, key):
    return _dispatch_has_kernel_for_dispatch_key(name, key)


@real()
def _dispatch_has_kernel_for_any_dispatch_key(name, keyset):
    rec = _lookup(*_split(name))
    if rec is None:
        return False
    return any(keyset.has(k) for k in _keys_named(rec.py_kernels))


def _keys_named(names):
    from torchnative._surface.dispatch import DispatchKey
    return [DispatchKey[n] for n in names if n in DispatchKey.__members__]


@real(reason="no C++ backend fallbacks are registered in torchnative")
def _dispatch_has_backend_fallback(key):
    return False


@real(reason="torchnative registers no fallthrough kernels")
def _dispatch_kernel_for_dispatch_key_is_fallthrough(name, key):
    return False


@real()
def _dispatch_dump(name):
    rec = _lookup(*_split(name))
    if rec is None:
        return ""
    return f"name: {name}\nschema: {rec.schema_text}\npython kernels: {sorted(rec.py_kernels)}\n"


@real()
def _dispatch_dump_table(name):
    return _dispatch_dump(name)


@real()
def _dispatch_get_registrations_for_dispatch_key(key=""):
    _ensure_loaded()
    k = str(getattr(key, "name", key))
    return [q + ("." + o if o else "") for q, recs in OPS.items() for o, r in recs.items()
            if not k or k in r.py_kernels]


returning(C, "_dispatch_print_registrations_for_dispatch_key", None,
          "prints nothing: the registrations are available through _dispatch_dump")
refuse(C, "_dispatch_call_boxed "
          "_dispatch_pystub _check_schema_allow_fake_script_object")


class _KernelFunction:
    """What torch.library.get_kernel returns: calling it runs the operator through the
    door (torchnative has one kernel per operator, whatever the dispatch key)."""

    def __init__(self, qualname, overload):
        self._op = _make_overload_callable(_lookup(qualname, overload))
        self._name = qualname + ("." + overload if overload else "")

    def call_boxed(self, keyset, *args, **kwargs):
        return self._op(*args, **kwargs)

    def __repr__(self):
        return f"KernelFunction({self._name})"


@real(reason="a kernel object that runs the operator through the door")
def _dispatch_get_computed_kernel_for_dispatch_key(name, dispatch_key):
    qualname, _, overload = name.partition(".")
    if _lookup(qualname, overload) is None:
        raise RuntimeError(f"operator {name} does not exist")
    return _KernelFunction(qualname, overload)


# ---- torch.library ------------------------------------------------------------------
LIBRARY = []     # every _DispatchModule created, for the surface report


class _DispatchModule:
    """What torch.library.Library wraps. def_ adds schemas to the registry (so
    torch.ops.<ns>.<op> and custom ops' register_autograd see them); impl records the
    Python kernel under its dispatch key. aten operators always run through the C door;
    an operator the door does not know (a torch.library definition) runs its recorded
    CPU / CompositeExplicitAutograd / CompositeImplicitAutograd kernel."""

    def __init__(self, kind, ns, dispatch_key):
        self.kind, self.ns, self.dispatch_key = kind, ns, dispatch_key
        self.defs = []
        self.impls = []
        LIBRARY.append(self)

    def _qualify(self, schema):
        head = schema.split("(", 1)[0].strip()
        if "::" not in head:
            schema = f"{self.ns}::{schema.strip()}"
        return schema

    def define(self, schema, alias="", tags=()):
        _ensure_loaded()
        text = self._qualify(schema)
        parsed = parse_schema(text)
        rec = _lookup(parsed.name, parsed.overload_name)
        if rec is not None and self.kind != "FRAGMENT" and self.ns != "aten":
            pass
        if rec is None:
            rec = _register(_normalise(text), [getattr(t, "name", str(t)) for t in tags])
            rec.defined_in_python = True
        self.defs.append(parsed.name + ("." + parsed.overload_name if parsed.overload_name else ""))
        return parsed.name.split("::")[-1] + ("." + parsed.overload_name if parsed.overload_name else "")

    def def_(self, schema, alias=""):
        self.define(schema, alias)
        return self

    def def_legacy(self, schema):
        self.define(schema)
        return self

    def def_name_t_t(self, name, dispatch="", debug=""):
        return self

    def def_schema_t_t(self, schema, dispatch="", alias="", debug=""):
        self.define(schema, alias)
        return self

    def impl_t_t(self, name, dispatch="", debug=""):
        return self

    def impl(self, name, dispatch, func, with_keyset=False, allow_override=False):
        name = name if "::" in name else f"{self.ns}::{name}"
        qual, overload = _split(name)
        key = str(getattr(dispatch, "name", dispatch)) or "CompositeImplicitAutograd"
        rec = _lookup(qual, overload)
        if rec is not None:
            rec.py_kernels[key] = func
            if with_keyset:
                rec.py_keyset_kernels.add(key)
            else:
                rec.py_keyset_kernels.discard(key)
        self.impls.append((name, key))

    def impl_with_aoti_compile(self, ns, op_name_with_overload, dispatch):
        raise NotImplementedError("torch._C._DispatchModule.impl_with_aoti_compile is not implemented by torchnative")

    def fallback_fallthrough(self, dispatch=""):
        return self

    def fallback(self, dispatch, func, with_keyset=False):
        return self

    def reset(self):
        for name, key in self.impls:
            rec = _lookup(*_split(name))
            if rec is not None:
                rec.py_kernels.pop(key, None)
                rec.py_keyset_kernels.discard(key)
        for name in self.defs:
            qual, overload = _split(name)
            recs = OPS.get(qual)
            if recs and overload in recs and recs[overload].defined_in_python:
                del recs[overload]
                if not recs:
                    del OPS[qual]
        self.impls, self.defs = [], []


add(C, "_DispatchModule", _DispatchModule, "real", "records torch.library registrations")


@real()
def _dispatch_library(kind, name, dispatch="", file="", linenum=0):
    return _DispatchModule(kind, name, dispatch)


@real(reason="no C++ torch_function handling for op packets yet: reports 'not handled'")
def _maybe_call_torch_function_for_op_packet(op, *args, **kwargs):
    return False, None


# ---- Tag -------------------------------------------------------------------------------
def _tag_names():
    """Tags from torchgen's tags.yaml (upstream data); fixed fallback otherwise."""
    path = _native_functions_yaml()
    if path:
        tp = os.path.join(os.path.dirname(path), "tags.yaml")
        if os.path.exists(tp):
            names = []
            with open(tp, encoding="utf-8") as f:
                for line in f:
                    m = re.match(r"^- tag:\s*(\w+)", line)
                    if m:
                        names.append(m.group(1))
            return names
    return []


Tag = make_enum(C, "Tag", {n: i for i, n in enumerate(_tag_names())})
add(C, "Tag", Tag, "real", "from torchgen's tags.yaml")
