"""torch.finfo and torch.iinfo: machine limits of the dtypes (installed on torch._C at init;
must not import torch). The numbers are facts of the formats, equal to upstream's."""

# name: (bits, eps, max, min, tiny, resolution)
_FLOAT = {
    "float16": (16, 0.0009765625, 65504.0, -65504.0, 6.103515625e-05, 0.001),
    "float32": (32, 1.1920928955078125e-07, 3.4028234663852886e+38, -3.4028234663852886e+38, 1.1754943508222875e-38, 1e-06),
    "float64": (64, 2.220446049250313e-16, 1.7976931348623157e+308, -1.7976931348623157e+308, 2.2250738585072014e-308, 1e-15),
    "bfloat16": (16, 0.0078125, 3.3895313892515355e+38, -3.3895313892515355e+38, 1.1754943508222875e-38, 0.01),
    "float8_e5m2": (8, 0.25, 57344.0, -57344.0, 6.103515625e-05, 1.0),
    "float8_e4m3fn": (8, 0.125, 448.0, -448.0, 0.015625, 1.0),
    "float8_e5m2fnuz": (8, 0.125, 57344.0, -57344.0, 3.0517578125e-05, 1.0),
    "float8_e4m3fnuz": (8, 0.125, 240.0, -240.0, 0.0078125, 1.0),
    "float8_e8m0fnu": (8, 1.0, 1.7014118346046923e+38, 5.877471754111438e-39, 5.877471754111438e-39, 1.0),
}
_COMPLEX_PART = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}
_INT = {
    "uint8": (8, 0, 255), "int8": (8, -128, 127), "int16": (16, -32768, 32767),
    "int32": (32, -2147483648, 2147483647), "int64": (64, -9223372036854775808, 9223372036854775807),
    "uint16": (16, 0, 65535), "uint32": (32, 0, 4294967295), "uint64": (64, 0, 18446744073709551615),
    "qint8": (8, -128, 127), "quint8": (8, 0, 255), "qint32": (32, -2147483648, 2147483647),
}


def _name(dtype):
    return repr(dtype).replace("torch.", "")


class finfo:
    def __init__(self, type=None):
        if type is None:
            import torch  # default dtype at call time (torch is imported by then)

            type = torch.get_default_dtype()
        name = _COMPLEX_PART.get(_name(type), _name(type))
        if name not in _FLOAT:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'")
        self.bits, self.eps, self.max, self.min, self.tiny, self.resolution = _FLOAT[name]
        self.smallest_normal = self.tiny
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")

    __str__ = __repr__


class iinfo:
    def __init__(self, type):
        name = _name(type)
        if name not in _INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        self.bits, self.min, self.max = _INT[name]
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"

    __str__ = __repr__


finfo.__module__ = iinfo.__module__ = "torch"
