/* tensor_methods.c — Tensor methods upstream binds by hand rather than from the schema:
 * to, type conversions (float(), long(), ...), cpu, copy_, contiguous, nonzero, new_tensor,
 * as_subclass, detach. Each ends in one or more door calls. */
#include "autograd/autograd.h"
#include "argparse.h"
#include "binding.h"

#include <string.h>

#include "ops/dispatch.h"

static PyObject *run1(tn_op_id op, const tn_value *args) {
    tn_value r;
    tn_status st = tn_dispatch(op, args, &r);
    if (st != TN_OK) return tn_py_raise(st);
    return tn_py_tensor_wrap(r.u.t);
}

static tn_value vnone(void) { tn_value v = {.tag = TN_V_NONE}; return v; }

/* A converted copy (or self when nothing changes and copy is false). */
static PyObject *convert(PyObject *self, int has_dtype, tn_dtype dtype, int has_device, tn_device device,
                         int copy, int memfmt) {
    tn_tensor *t = tn_py_tensor_get(self);
    tn_dtype to_dtype = has_dtype ? dtype : t->dtype;
    tn_device cur = tn_tensor_device(t);
    tn_device to_dev = has_device ? device : cur;
    if (to_dev.type != TN_DEVICE_CPU && to_dev.type != TN_DEVICE_META) {
        PyErr_Format(PyExc_RuntimeError, "torchnative has no %s device",
                     to_dev.type == TN_DEVICE_CUDA ? "cuda" : "such");
        return NULL;
    }
    int fmt_ok = memfmt < 0 || memfmt == 1 || (memfmt == 0 && tn_tensor_is_contiguous(t));
    if (!copy && to_dtype == t->dtype && to_dev.type == cur.type && fmt_ok) {
        Py_INCREF(self);
        return self;
    }
    if (cur.type == TN_DEVICE_META && to_dev.type != TN_DEVICE_META) {
        PyErr_SetString(PyExc_NotImplementedError, "Cannot copy out of meta tensor; no data!");
        return NULL;
    }
    if (to_dev.type == TN_DEVICE_META && cur.type != TN_DEVICE_META) {
        tn_tensor *m;
        tn_status st = tn_tensor_empty(t->ndim, t->sizes, to_dtype, to_dev, &m);
        if (st != TN_OK) return tn_py_raise(st);
        return tn_py_tensor_wrap(m);
    }
    tn_value a[7] = {tn_value_tensor(t), vnone(), vnone(), vnone(), vnone(), tn_value_bool(false), vnone()};
    if (has_dtype) { a[1].tag = TN_V_DTYPE; a[1].u.dtype = to_dtype; }
    if (memfmt >= 0) { a[6].tag = TN_V_MEMFMT; a[6].u.memfmt = memfmt; }
    return run1(TN_OP__to_copy, a);
}

static int parse_dtype_arg(PyObject *o, int *has, tn_dtype *d) {
    if (!o || o == Py_None) return 0;
    if (!tn_py_is_dtype(o)) {
        PyErr_SetString(PyExc_TypeError, "to() received an invalid combination of arguments - expected dtype");
        return -1;
    }
    *has = 1;
    *d = tn_py_dtype_get(o);
    return 0;
}

typedef struct {
    int has_dtype, has_device, copy, copy_given, non_blocking, memfmt;
    tn_dtype dtype;
    tn_device device;
} tn_to_args;

/* upstream's PythonArgParser refusal when no signature of to() matches the call */
static int to_no_match(void) {
    PyErr_SetString(PyExc_TypeError, "to() received an invalid combination of arguments - no signature of "
                                     "to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=None), "
                                     "to(dtype, non_blocking=False, copy=False, *, memory_format=None) or "
                                     "to(tensor, non_blocking=False, copy=False, *, memory_format=None) matches");
    return -1;
}

/* Parses the three spellings of to() (also _nn._parse_to), as upstream's parser binds them:
 * to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=None)
 * to(dtype, non_blocking=False, copy=False, *, memory_format=None)
 * to(tensor, non_blocking=False, copy=False, *, memory_format=None)
 * The first positional argument picks the signature (no positional: `tensor=` picks the
 * third, anything else the first); a keyword must be a parameter of that signature and not
 * one already given by position; non_blocking and copy are bools, dtype a dtype or None. */
static int parse_to(PyObject *args, PyObject *kw, tn_to_args *out) {
    static const char *const dev_form[] = {"device", "dtype", "non_blocking", "copy", NULL};
    static const char *const dtype_form[] = {"dtype", "non_blocking", "copy", NULL};
    static const char *const tensor_form[] = {"tensor", "non_blocking", "copy", NULL};
    Py_ssize_t n = args ? PyTuple_Size(args) : 0;
    PyObject *first = n > 0 ? PyTuple_GetItem(args, 0) : NULL;
    if (first && (PyFloat_Check(first) || PyBool_Check(first) || PyComplex_Check(first))) {
        /* a Python number stands for a CPU tensor of its double-precision type (upstream
         * wraps it with scalar_to_tensor: float -> Double, complex -> ComplexDouble) */
        memset(out, 0, sizeof *out);
        out->has_dtype = 1;
        out->dtype = PyBool_Check(first) ? TN_DTYPE_BOOL : PyComplex_Check(first) ? TN_DTYPE_COMPLEX128 : TN_DTYPE_FLOAT64;
        out->has_device = 1;
        out->device = tn_device_cpu();
        out->memfmt = -1;
        return 0;
    }
    const char *const *form;
    if (first && tn_py_is_dtype(first)) form = dtype_form;
    else if (first && tn_py_is_tensor(first)) form = tensor_form;
    else if (!first || first == Py_None || PyUnicode_Check(first) || tn_py_is_device(first) || PyLong_Check(first))
        form = !first && kw && PyDict_GetItemString(kw, "tensor") ? tensor_form : dev_form;
    else
        return to_no_match();
    int nparams = 0;
    while (form[nparams]) nparams++;
    if (n > nparams) {
        PyErr_Format(PyExc_TypeError, "to() takes from 0 to %d positional arguments but %zd were given", nparams, n);
        return -1;
    }
    PyObject *val[4] = {NULL, NULL, NULL, NULL}, *mf = NULL;
    for (Py_ssize_t i = 0; i < n; i++) val[i] = PyTuple_GetItem(args, i);
    if (kw) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kw, &pos, &key, &value)) {
            const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, NULL) : NULL;
            if (!k) return -1;
            if (!strcmp(k, "memory_format")) { mf = value; continue; }
            int j = 0;
            while (form[j] && strcmp(form[j], k)) j++;
            if (!form[j] || j < n) return to_no_match(); /* unknown, or given twice */
            val[j] = value;
        }
    }
    /* the slots by name */
    PyObject *device = NULL, *dtype = NULL, *other = NULL;
    if (form == dev_form) { device = val[0]; dtype = val[1]; }
    else if (form == dtype_form) dtype = val[0];
    else other = val[0];
    PyObject *nb = val[nparams - 2], *cp = val[nparams - 1];
    if ((nb && !PyBool_Check(nb)) || (cp && !PyBool_Check(cp))) return to_no_match();
    if (dtype && dtype != Py_None && !tn_py_is_dtype(dtype)) return to_no_match();
    if (form == tensor_form && !(other && tn_py_is_tensor(other))) return to_no_match();
    memset(out, 0, sizeof *out);
    out->copy = cp == Py_True;
    out->copy_given = cp != NULL;
    out->non_blocking = nb == Py_True;
    out->memfmt = -1;
    out->dtype = TN_DTYPE_FLOAT32;
    out->device = tn_device_cpu();
    if (other) {
        tn_tensor *o = tn_py_tensor_get(other);
        out->has_dtype = 1; out->dtype = o->dtype;
        out->has_device = 1; out->device = tn_tensor_device(o);
    }
    if (parse_dtype_arg(dtype, &out->has_dtype, &out->dtype) < 0) return -1;
    if (device && device != Py_None) {
        if (tn_py_parse_device(device, &out->device) < 0) return -1;
        out->has_device = 1;
    }
    if (mf && mf != Py_None) {
        if (!tn_py_is_memory_format(mf)) { PyErr_SetString(PyExc_TypeError, "memory_format must be torch.memory_format"); return -1; }
        out->memfmt = tn_py_memory_format_get(mf);
    }
    return 0;
}

static PyObject *m_to(PyObject *self, PyObject *args, PyObject *kw) {
    tn_to_args a;
    if (parse_to(args, kw, &a) < 0) return NULL;
    return convert(self, a.has_dtype, a.dtype, a.has_device, a.device, a.copy, a.memfmt);
}

/* torch._C._nn._parse_to(*args, **kwargs) -> (device, dtype, non_blocking, memory_format),
 * what nn.Module.to() uses to read its arguments. */
static PyObject *f_parse_to(PyObject *m, PyObject *args, PyObject *kw) {
    tn_to_args a;
    if (parse_to(args, kw, &a) < 0) return NULL;
    if (a.copy_given) { /* upstream refuses copy= given at all, False too */
        PyErr_SetString(PyExc_RuntimeError, ".to() does not accept copy argument");
        return NULL;
    }
    PyObject *dev = a.has_device ? tn_py_device_new(a.device) : (Py_INCREF(Py_None), Py_None);
    PyObject *dt = a.has_dtype ? tn_py_dtype_object(a.dtype) : Py_None;
    PyObject *mf = a.memfmt >= 0 ? tn_py_memory_format_object(a.memfmt) : Py_None;
    return Py_BuildValue("(NOOO)", dev, dt, a.non_blocking ? Py_True : Py_False, mf);
}

static PyMethodDef nn_manual[] = {
    {"_parse_to", (PyCFunction)(void (*)(void))f_parse_to, METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL},
};

/* Adds the hand-written torch._C._nn functions (the generated ones come from functions.c). */
int tn_py_add_nn_manual(PyObject *module) {
    PyObject *nn = PyObject_GetAttrString(module, "_nn");
    if (!nn) return -1;
    int rc = PyModule_AddFunctions(nn, nn_manual);
    Py_DECREF(nn);
    return rc;
}

#define CONVERTER(fname, DT)                                                          \
    static PyObject *fname(PyObject *self, PyObject *args, PyObject *kw) {            \
        static char *kwlist[] = {"memory_format", NULL};                              \
        PyObject *mf = NULL;                                                          \
        if (!PyArg_ParseTupleAndKeywords(args, kw, "|$O", kwlist, &mf)) return NULL;  \
        int memfmt = mf && mf != Py_None ? tn_py_memory_format_get(mf) : -1;         \
        return convert(self, 1, DT, 0, tn_device_cpu(), 0, memfmt);                   \
    }
CONVERTER(m_float, TN_DTYPE_FLOAT32)
CONVERTER(m_double, TN_DTYPE_FLOAT64)
CONVERTER(m_half, TN_DTYPE_FLOAT16)
CONVERTER(m_bfloat16, TN_DTYPE_BFLOAT16)
CONVERTER(m_int, TN_DTYPE_INT32)
CONVERTER(m_long, TN_DTYPE_INT64)
CONVERTER(m_short, TN_DTYPE_INT16)
CONVERTER(m_char, TN_DTYPE_INT8)
CONVERTER(m_byte, TN_DTYPE_UINT8)
CONVERTER(m_bool, TN_DTYPE_BOOL)
CONVERTER(m_cfloat, TN_DTYPE_COMPLEX64)
CONVERTER(m_cdouble, TN_DTYPE_COMPLEX128)

static PyObject *m_cpu(PyObject *self, PyObject *args, PyObject *kw) {
    return convert(self, 0, TN_DTYPE_FLOAT32, 1, tn_device_cpu(), 0, -1);
}

static PyObject *m_cuda(PyObject *self, PyObject *args, PyObject *kw) {
    PyErr_SetString(PyExc_AssertionError, "Torch not compiled with CUDA enabled");
    return NULL;
}

/* Legacy tensor type names, as Tensor.type() prints them. */
static const char *legacy_type_name(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_FLOAT32: return "torch.FloatTensor";
    case TN_DTYPE_FLOAT64: return "torch.DoubleTensor";
    case TN_DTYPE_FLOAT16: return "torch.HalfTensor";
    case TN_DTYPE_BFLOAT16: return "torch.BFloat16Tensor";
    case TN_DTYPE_INT64: return "torch.LongTensor";
    case TN_DTYPE_INT32: return "torch.IntTensor";
    case TN_DTYPE_INT16: return "torch.ShortTensor";
    case TN_DTYPE_INT8: return "torch.CharTensor";
    case TN_DTYPE_UINT8: return "torch.ByteTensor";
    case TN_DTYPE_BOOL: return "torch.BoolTensor";
    case TN_DTYPE_COMPLEX64: return "torch.ComplexFloatTensor";
    case TN_DTYPE_COMPLEX128: return "torch.ComplexDoubleTensor";
    default: return NULL;
    }
}

static PyObject *m_type(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"dtype", "non_blocking", NULL};
    PyObject *dtype = Py_None, *nb = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:type", kwlist, &dtype, &nb)) return NULL;
    tn_tensor *t = tn_py_tensor_get(self);
    if (dtype == Py_None) {
        const char *n = legacy_type_name(t->dtype);
        if (!n) { PyErr_SetString(PyExc_NotImplementedError, "Tensor.type() name for this dtype"); return NULL; }
        if (tn_tensor_is_meta(t)) return PyUnicode_FromFormat("torch.meta.%s", n + 6);
        return PyUnicode_FromString(n);
    }
    if (tn_py_is_dtype(dtype)) return convert(self, 1, tn_py_dtype_get(dtype), 0, tn_device_cpu(), 0, -1);
    PyObject *name = PyUnicode_Check(dtype) ? (Py_INCREF(dtype), dtype) : PyObject_GetAttrString(dtype, "__name__");
    if (!name) return NULL;
    const char *s = PyUnicode_AsUTF8AndSize(name, NULL);
    const char *base = s ? strrchr(s, '.') : NULL;
    base = base ? base + 1 : s;
    for (int d = 0; d < TN_DTYPE_COUNT; d++) {
        const char *ln = legacy_type_name((tn_dtype)d);
        if (ln && base && !strcmp(ln + 6, base)) {
            Py_DECREF(name);
            return convert(self, 1, (tn_dtype)d, 0, tn_device_cpu(), 0, -1);
        }
    }
    PyErr_Format(PyExc_ValueError, "invalid type: '%U'", name);
    Py_DECREF(name);
    return NULL;
}

/* Tensor.copy_(src, non_blocking=False): as upstream's signature, src may be a Python number
 * (copy_ is among the operators that take numbers as tensors) and non_blocking is a bool,
 * not anything truthy. */
static PyObject *m_copy_(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"src", "non_blocking", NULL};
    PyObject *src, *nbo = NULL;
    char b[128];
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:copy_", kwlist, &src, &nbo)) return NULL;
    if (nbo && !PyBool_Check(nbo)) {
        PyErr_Format(PyExc_TypeError, "copy_(): argument 'non_blocking'%s must be bool, not %s",
                     PyTuple_Size(args) > 1 ? " (position 2)" : "", tn_py_typename(nbo, b, sizeof b));
        return NULL;
    }
    tn_tensor *st = NULL;
    if (!tn_py_is_tensor(src)) {
        if (tn_py_is_number(src)) { /* numpy scalars too */
            if (tn_py_number_tensor(src, &st) < 0) return NULL;
        } else {
            PyErr_Format(PyExc_TypeError, "copy_(): argument 'other' (position 1) must be Tensor, not %s",
                         tn_py_typename(src, b, sizeof b));
            return NULL;
        }
    }
    tn_value a[3] = {tn_value_tensor(tn_py_tensor_get(self)), tn_value_tensor(st ? st : tn_py_tensor_get(src)),
                     tn_value_bool(nbo == Py_True)};
    PyObject *r = run1(TN_OP_copy_, a);
    if (st) tn_tensor_release(st);
    return r;
}

static PyObject *m_contiguous(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"memory_format", NULL};
    PyObject *mf = NULL;
    /* memory_format is keyword-only and must be a torch.memory_format, as upstream's signature */
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$O:contiguous", kwlist, &mf)) return NULL;
    if (mf && !tn_py_is_memory_format(mf)) { /* None too: the argument is not optional */
        char b[128];
        PyErr_Format(PyExc_TypeError, "contiguous(): argument 'memory_format' must be torch.memory_format, not %s",
                     tn_py_typename(mf, b, sizeof b));
        return NULL;
    }
    int memfmt = mf && mf != Py_None ? tn_py_memory_format_get(mf) : 0;
    tn_tensor *t = tn_py_tensor_get(self);
    if ((memfmt == 0 || memfmt == 1) && tn_tensor_is_contiguous(t)) { Py_INCREF(self); return self; }
    if (memfmt == 1) { /* upstream copies only into a named format */
        PyErr_SetString(PyExc_RuntimeError, "preserve memory format is unsupported by the contiguous operator");
        return NULL;
    }
    tn_value a[2] = {tn_value_tensor(t), {.tag = TN_V_MEMFMT}};
    a[1].u.memfmt = memfmt;
    return run1(TN_OP_clone, a);
}

static PyObject *m_nonzero(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"as_tuple", NULL};
    int as_tuple = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$p:nonzero", kwlist, &as_tuple)) return NULL;
    tn_tensor *t = tn_py_tensor_get(self);
    if (!as_tuple) {
        tn_value a[1] = {tn_value_tensor(t)};
        return run1(TN_OP_nonzero, a);
    }
    /* as_tuple: one index tensor per dimension, of atleast_1d(self) as upstream */
    tn_tensor *src = t;
    if (t->ndim == 0) {
        int64_t one = 1, st = 1;
        src = tn_tensor_new_view(t->storage, t->offset, 1, &one, &st, t->dtype);
        if (!src) return PyErr_NoMemory();
    } else {
        tn_tensor_retain(src);
    }
    tn_value a[1] = {tn_value_tensor(src)};
    PyObject *nz = run1(TN_OP_nonzero, a);
    int cols = src->ndim;
    tn_tensor_release(src);
    if (!nz) return NULL;
    PyObject *tup = PyTuple_New(cols);
    for (int i = 0; tup && i < cols; i++) {
        tn_value s[3] = {tn_value_tensor(tn_py_tensor_get(nz)), tn_value_int(1), tn_value_int(i)};
        PyObject *c = run1(TN_OP_select_int, s);
        if (!c) { Py_DECREF(tup); tup = NULL; break; }
        PyTuple_SetItem(tup, i, c);
    }
    Py_DECREF(nz);
    return tup;
}

static PyObject *m_new_tensor(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"data", "dtype", "device", "requires_grad", "layout", "pin_memory", NULL};
    PyObject *data, *dtype = Py_None, *device = Py_None, *rg = Py_False, *layout = Py_None, *pin = Py_False;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOOO:new_tensor", kwlist, &data, &dtype, &device, &rg, &layout, &pin))
        return NULL;
    tn_tensor *t = tn_py_tensor_get(self);
    PyObject *torch = PyImport_ImportModule("torch");
    if (!torch) return NULL;
    PyObject *fn = PyObject_GetAttrString(torch, "tensor");
    Py_DECREF(torch);
    if (!fn) return NULL;
    PyObject *kwargs = Py_BuildValue("{s:O,s:O,s:O}", "dtype", dtype == Py_None ? tn_py_dtype_object(t->dtype) : dtype,
                                     "device", device, "requires_grad", rg);
    PyObject *a = PyTuple_Pack(1, data);
    PyObject *r = a && kwargs ? PyObject_Call(fn, a, kwargs) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(kwargs);
    Py_DECREF(fn);
    return r;
}

static PyObject *m_as_subclass(PyObject *self, PyObject *cls) {
    PyObject *tensor_base = PyObject_GetAttrString(tn_py_module(), "TensorBase");
    int ok = tensor_base && PyType_Check(cls) && PyObject_IsSubclass(cls, tensor_base) == 1;
    Py_XDECREF(tensor_base);
    if (!ok) {
        PyErr_SetString(PyExc_TypeError, "as_subclass(): argument 'cls' must be a subclass of torch.Tensor");
        return NULL;
    }
    tn_tensor *a = tn_tensor_alias(tn_py_tensor_get(self));
    if (!a) return PyErr_NoMemory();
    allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)cls, Py_tp_alloc);
    PyObject *o = alloc((PyTypeObject *)cls, 0);
    if (!o) { tn_tensor_release(a); return NULL; }
    ((TNTensorObject *)o)->t = a;
    a->pyobj = o;
    return o;
}

static PyObject *m_detach(PyObject *self, PyObject *u) {
    tn_tensor *a = tn_tensor_alias(tn_py_tensor_get(self));
    if (!a) return PyErr_NoMemory();
    return tn_py_tensor_wrap(a);
}

static PyObject *m_detach_(PyObject *self, PyObject *u) {
    tn_tensor *t = tn_py_tensor_get(self);
    if (t->flags & TN_TENSOR_IS_VIEW) { /* upstream refuses any view, with or without grad */
        PyErr_SetString(PyExc_RuntimeError, TN_MSG_DETACH_VIEW_INPLACE);
        return NULL;
    }
    tn_autograd_detach_inplace(t);
    Py_INCREF(self);
    return self;
}

#define KW(f) (PyCFunction)(void (*)(void))(f), METH_VARARGS | METH_KEYWORDS
static PyMethodDef manual_methods[] = {
    {"to", KW(m_to), NULL},
    {"type", KW(m_type), NULL},
    {"float", KW(m_float), NULL},
    {"double", KW(m_double), NULL},
    {"half", KW(m_half), NULL},
    {"bfloat16", KW(m_bfloat16), NULL},
    {"int", KW(m_int), NULL},
    {"long", KW(m_long), NULL},
    {"short", KW(m_short), NULL},
    {"char", KW(m_char), NULL},
    {"byte", KW(m_byte), NULL},
    {"bool", KW(m_bool), NULL},
    {"cfloat", KW(m_cfloat), NULL},
    {"cdouble", KW(m_cdouble), NULL},
    {"cpu", KW(m_cpu), NULL},
    {"cuda", KW(m_cuda), NULL},
    {"copy_", KW(m_copy_), NULL},
    {"contiguous", KW(m_contiguous), NULL},
    {"nonzero", KW(m_nonzero), NULL},
    {"new_tensor", KW(m_new_tensor), NULL},
    {"as_subclass", m_as_subclass, METH_O, NULL},
    {"detach", m_detach, METH_NOARGS, NULL},
    {"detach_", m_detach_, METH_NOARGS, NULL},
    {NULL},
};

PyMethodDef *tn_py_tensor_manual_method_defs(void) { return manual_methods; }
