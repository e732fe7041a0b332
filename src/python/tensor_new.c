/* tensor_new.c — tensors made from Python data, the functions upstream writes by hand:
 * torch.tensor, torch.as_tensor, torch.asarray (subset), torch.from_numpy,
 * torch.frombuffer, and Tensor.numpy(). numpy exchange is zero-copy both ways through
 * the __array_interface__ protocol (the limited API has no ndarray struct). */
#include "argparse.h"
#include "binding.h"

#include <stdlib.h>
#include <string.h>

#include "core/scalar.h"
#include "ops/dispatch.h"
#include "ops/graph.h"
#include "ops/promote.h"
#include "functions.h"

/* ---- numpy interop ----------------------------------------------------------------- */

static const struct { char kind; int size; tn_dtype d; } tn_np_types[] = {
    {'b', 1, TN_DTYPE_BOOL},    {'u', 1, TN_DTYPE_UINT8},   {'i', 1, TN_DTYPE_INT8},
    {'i', 2, TN_DTYPE_INT16},   {'i', 4, TN_DTYPE_INT32},   {'i', 8, TN_DTYPE_INT64},
    {'u', 2, TN_DTYPE_UINT16},  {'u', 4, TN_DTYPE_UINT32},  {'u', 8, TN_DTYPE_UINT64},
    {'f', 2, TN_DTYPE_FLOAT16}, {'f', 4, TN_DTYPE_FLOAT32}, {'f', 8, TN_DTYPE_FLOAT64},
    {'c', 8, TN_DTYPE_COMPLEX64}, {'c', 16, TN_DTYPE_COMPLEX128},
};

static tn_dtype dtype_from_typestr(const char *ts) {
    /* "<f4": byte order, kind, size. Only native/irrelevant byte order is accepted. */
    if (!ts || strlen(ts) < 3 || ts[0] == '>') return TN_DTYPE_UNDEFINED;
    int size = atoi(ts + 2);
    for (size_t i = 0; i < sizeof tn_np_types / sizeof tn_np_types[0]; i++)
        if (tn_np_types[i].kind == ts[1] && tn_np_types[i].size == size) return tn_np_types[i].d;
    return TN_DTYPE_UNDEFINED;
}

static const char *typestr_of(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_BOOL: return "|b1";
    case TN_DTYPE_UINT8: return "|u1";
    case TN_DTYPE_INT8: return "|i1";
    case TN_DTYPE_INT16: return "<i2";
    case TN_DTYPE_INT32: return "<i4";
    case TN_DTYPE_INT64: return "<i8";
    case TN_DTYPE_UINT16: return "<u2";
    case TN_DTYPE_UINT32: return "<u4";
    case TN_DTYPE_UINT64: return "<u8";
    case TN_DTYPE_FLOAT16: return "<f2";
    case TN_DTYPE_FLOAT32: return "<f4";
    case TN_DTYPE_FLOAT64: return "<f8";
    case TN_DTYPE_COMPLEX64: return "<c8";
    case TN_DTYPE_COMPLEX128: return "<c16";
    default: return NULL;
    }
}

static int is_ndarray(PyObject *o) {
    PyObject *t = (PyObject *)Py_TYPE(o);
    PyObject *mod = PyObject_GetAttrString(t, "__module__");
    PyObject *name = mod ? PyObject_GetAttrString(t, "__name__") : NULL;
    int r = 0;
    if (mod && name && PyUnicode_Check(mod) && PyUnicode_Check(name))
        r = PyUnicode_CompareWithASCIIString(mod, "numpy") == 0 && PyUnicode_CompareWithASCIIString(name, "ndarray") == 0;
    Py_XDECREF(mod);
    Py_XDECREF(name);
    PyErr_Clear();
    return r;
}

static void release_pyobject(void *ctx, void *data) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)ctx);
    PyGILState_Release(g);
}

/* A tensor sharing the memory of a numpy array (which it keeps alive). */
static PyObject *tensor_from_ndarray(PyObject *arr) {
    PyObject *ai = PyObject_GetAttrString(arr, "__array_interface__");
    if (!ai) return NULL;
    PyObject *shape = PyDict_GetItemString(ai, "shape");
    PyObject *strides = PyDict_GetItemString(ai, "strides");
    /* a C-contiguous array's interface gives no strides; upstream takes the array's own,
     * which for an array with no elements are numpy's (zeros), not the contiguous ones */
    PyObject *own = strides && strides != Py_None ? NULL : PyObject_GetAttrString(arr, "strides");
    if (own && PyTuple_Check(own)) strides = own;
    PyErr_Clear();
    PyObject *typestr = PyDict_GetItemString(ai, "typestr");
    PyObject *data = PyDict_GetItemString(ai, "data");
    PyObject *r = NULL;
    if (!shape || !typestr || !data || !PyTuple_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "expected np.ndarray (got something without __array_interface__)");
        goto done;
    }
    const char *ts = PyUnicode_AsUTF8AndSize(typestr, NULL);
    tn_dtype d = dtype_from_typestr(ts);
    if (d == TN_DTYPE_UNDEFINED) {
        PyObject *dt = PyObject_GetAttrString(arr, "dtype");
        PyErr_Format(PyExc_TypeError,
                     "can't convert np.ndarray of type %S. The only supported types are: float64, float32, "
                     "float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
                     "and bool.", dt);
        Py_XDECREF(dt);
        goto done;
    }
    Py_ssize_t nd = PyTuple_Size(shape);
    if (nd > TN_MAX_DIMS) { tn_py_raise(tn_error(TN_ERR_NOT_IMPLEMENTED, "too many dimensions")); goto done; }
    int64_t sizes[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int item = tn_dtype_itemsize(d);
    for (Py_ssize_t i = 0; i < nd; i++) sizes[i] = PyLong_AsLongLong(PyTuple_GetItem(shape, i));
    if (strides && strides != Py_None) {
        for (Py_ssize_t i = 0; i < nd; i++) {
            long long b = PyLong_AsLongLong(PyTuple_GetItem(strides, i));
            if (b < 0) {
                PyErr_SetString(PyExc_ValueError,
                                "At least one stride in the given numpy array is negative, and tensors with "
                                "negative strides are not currently supported. (You can probably work around "
                                "this by making a copy of your array  with array.copy().) ");
                goto done;
            }
            if (b % item) {
                PyErr_SetString(PyExc_ValueError,
                                "given numpy array strides not a multiple of the element byte size. Copy the "
                                "numpy array to reallocate the memory.");
                goto done;
            }
            st[i] = b / item;
        }
    } else {
        tn_contiguous_strides((int)nd, sizes, st);
    }
    void *ptr = PyLong_AsVoidPtr(PyTuple_GetItem(data, 0));
    int64_t extent = 1;
    for (Py_ssize_t i = 0; i < nd; i++) {
        if (sizes[i] == 0) { extent = 0; break; }
        extent += (sizes[i] - 1) * st[i];
    }
    Py_INCREF(arr);
    tn_storage *s = tn_storage_borrow(ptr, extent * item, tn_device_cpu(), release_pyobject, arr);
    if (!s) { Py_DECREF(arr); PyErr_NoMemory(); goto done; }
    tn_tensor *t = tn_tensor_new_view(s, 0, (int)nd, sizes, st, d);
    tn_storage_release(s);
    r = tn_py_tensor_wrap(t);
done:
    Py_XDECREF(own);
    Py_DECREF(ai);
    return r;
}

static PyObject *f_from_numpy(PyObject *m, PyObject *arr) {
    if (!is_ndarray(arr)) {
        PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %s)", "object");
        return NULL;
    }
    return tensor_from_ndarray(arr);
}

/* Holder whose __array_interface__ describes a tensor; numpy keeps it as the array base. */
typedef struct {
    PyObject_HEAD
    PyObject *tensor;
    PyObject *iface;
} TNArrayHolder;
static PyTypeObject *tn_holder_type;

static void holder_dealloc(PyObject *self) {
    TNArrayHolder *h = (TNArrayHolder *)self;
    Py_XDECREF(h->tensor);
    Py_XDECREF(h->iface);
    PyTypeObject *tp = Py_TYPE(self);
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}
static PyObject *holder_iface(PyObject *self, void *c) {
    Py_INCREF(((TNArrayHolder *)self)->iface);
    return ((TNArrayHolder *)self)->iface;
}
static PyGetSetDef holder_getset[] = {{"__array_interface__", holder_iface, NULL, NULL, NULL}, {NULL}};
static PyType_Slot holder_slots[] = {{Py_tp_dealloc, holder_dealloc}, {Py_tp_getset, holder_getset}, {0, NULL}};

/* Tensor.numpy(*, force=False): an ndarray sharing the tensor's memory. */
PyObject *tn_py_tensor_numpy(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"force", NULL};
    int force = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$p:numpy", kwlist, &force)) return NULL;
    tn_graph_note_host_read("a tensor was shared with numpy");
    tn_tensor *t = tn_py_tensor_get(self);
    if (tn_tensor_is_meta(t)) {
        PyErr_SetString(PyExc_TypeError,
                        "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.");
        return NULL;
    }
    if (!force && (t->flags & TN_TENSOR_REQUIRES_GRAD) && tn_py_grad_enabled()) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
        return NULL;
    }
    if (force && (t->flags & (TN_TENSOR_CONJ | TN_TENSOR_NEG))) { /* upstream: resolve_conj().resolve_neg() first */
        PyObject *a = PyObject_CallMethod(self, "resolve_conj", NULL);
        PyObject *b = a ? PyObject_CallMethod(a, "resolve_neg", NULL) : NULL;
        Py_XDECREF(a);
        if (!b) return NULL;
        PyObject *fn = PyObject_GetAttrString(b, "numpy");
        PyObject *r = fn ? PyObject_Call(fn, args, kw) : NULL;
        Py_XDECREF(fn);
        Py_DECREF(b);
        return r;
    }
    if (!force && (t->flags & TN_TENSOR_CONJ)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj().numpy() instead.");
        return NULL;
    }
    if (!force && (t->flags & TN_TENSOR_NEG)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Can't call numpy() on Tensor that has negative bit set. Use tensor.resolve_neg().numpy() instead.");
        return NULL;
    }
    const char *ts = typestr_of(t->dtype);
    if (!ts) {
        PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s", tn_dtype_infos[t->dtype].c10_name);
        return NULL;
    }
    int item = tn_dtype_itemsize(t->dtype);
    PyObject *shape = PyTuple_New(t->ndim), *strides = PyTuple_New(t->ndim);
    for (int i = 0; i < t->ndim; i++) {
        PyTuple_SetItem(shape, i, PyLong_FromLongLong(t->sizes[i]));
        PyTuple_SetItem(strides, i, PyLong_FromLongLong(t->strides[i] * item));
    }
    void *ptr = tn_tensor_data(t);
    PyObject *iface = Py_BuildValue("{s:N,s:N,s:s,s:(NO),s:i}", "shape", shape, "strides", strides, "typestr", ts,
                                    "data", PyLong_FromVoidPtr(ptr ? ptr : (void *)64), Py_False, "version", 3);
    if (!iface) return NULL;
    allocfunc alloc = (allocfunc)PyType_GetSlot(tn_holder_type, Py_tp_alloc);
    TNArrayHolder *h = (TNArrayHolder *)alloc(tn_holder_type, 0);
    if (!h) { Py_DECREF(iface); return NULL; }
    Py_INCREF(self);
    h->tensor = self;
    h->iface = iface;
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np) { Py_DECREF(h); return NULL; }
    PyObject *r = PyObject_CallMethod(np, "asarray", "O", (PyObject *)h);
    Py_DECREF(np);
    Py_DECREF(h);
    return r;
}

/* ---- torch.tensor(data) ------------------------------------------------------------- */

typedef struct {
    int ndim;
    int64_t sizes[TN_MAX_DIMS];
    tn_dtype dtype; /* inferred */
} tn_infer;

static tn_dtype default_complex(void) {
    tn_dtype d = tn_default_dtype();
    return d == TN_DTYPE_FLOAT64 ? TN_DTYPE_COMPLEX128 : d == TN_DTYPE_FLOAT16 ? TN_DTYPE_COMPLEX32 : TN_DTYPE_COMPLEX64;
}

static int is_sequence(PyObject *o) {
    return PyList_Check(o) || PyTuple_Check(o) || (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o) && !tn_py_is_tensor(o));
}

static tn_dtype scalar_dtype(PyObject *o) {
    if (PyBool_Check(o)) return TN_DTYPE_BOOL;
    if (PyLong_Check(o)) return TN_DTYPE_INT64;
    if (PyFloat_Check(o)) return tn_default_dtype();
    if (PyComplex_Check(o)) return default_complex();
    if (tn_py_is_tensor(o)) return tn_py_tensor_get(o)->dtype;
    /* numpy scalars: their dtype */
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    if (dt) {
        PyObject *s = PyObject_GetAttrString(dt, "str");
        Py_DECREF(dt);
        tn_dtype d = s ? dtype_from_typestr(PyUnicode_AsUTF8AndSize(s, NULL)) : TN_DTYPE_UNDEFINED;
        Py_XDECREF(s);
        PyErr_Clear();
        if (d != TN_DTYPE_UNDEFINED) return d;
    }
    PyErr_Clear();
    if (PyNumber_Check(o)) return tn_default_dtype();
    return TN_DTYPE_UNDEFINED;
}

/* Walks the nested data once for shape (from the first element at each depth, checked
 * by the fill pass) and dtype (promoted over every leaf, as upstream infers it). */
static int infer(PyObject *o, int depth, tn_infer *inf, int *seen_shape) {
    if (tn_py_is_tensor(o) && tn_py_tensor_get(o)->ndim > 0) {
        tn_tensor *t = tn_py_tensor_get(o);
        if (!*seen_shape) {
            if (depth + t->ndim > TN_MAX_DIMS) { tn_py_raise(tn_error(TN_ERR_NOT_IMPLEMENTED, "too many dimensions")); return -1; }
            for (int i = 0; i < t->ndim; i++) inf->sizes[depth + i] = t->sizes[i];
            inf->ndim = depth + t->ndim;
            *seen_shape = 1;
        }
        tn_dtype p = inf->dtype == TN_DTYPE_UNDEFINED ? t->dtype : tn_promote_types_or_undefined(inf->dtype, t->dtype);
        inf->dtype = p;
        return 0;
    }
    if (is_sequence(o) && !is_ndarray(o)) {
        Py_ssize_t n = PySequence_Size(o);
        if (n < 0) return -1;
        if (depth >= TN_MAX_DIMS) { tn_py_raise(tn_error(TN_ERR_NOT_IMPLEMENTED, "too many dimensions")); return -1; }
        if (!*seen_shape) inf->sizes[depth] = n;
        if (n == 0 && !*seen_shape) { inf->ndim = depth + 1; *seen_shape = 1; }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *e = PySequence_GetItem(o, i);
            if (!e) return -1;
            int rc = infer(e, depth + 1, inf, seen_shape);
            Py_DECREF(e);
            if (rc < 0) return -1;
        }
        return 0;
    }
    if (is_ndarray(o)) {
        PyObject *t = tensor_from_ndarray(o);
        if (!t) return -1;
        int rc = infer(t, depth, inf, seen_shape);
        if (rc == 0 && tn_py_tensor_get(t)->ndim == 0) {
            tn_dtype d = tn_py_tensor_get(t)->dtype;
            inf->dtype = inf->dtype == TN_DTYPE_UNDEFINED ? d : tn_promote_types_or_undefined(inf->dtype, d);
            if (!*seen_shape) { inf->ndim = depth; *seen_shape = 1; }
        }
        Py_DECREF(t);
        return rc;
    }
    tn_dtype d = scalar_dtype(o);
    if (d == TN_DTYPE_UNDEFINED) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", "object");
        PyObject *tn = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
        if (tn) { PyErr_Format(PyExc_TypeError, "new(): invalid data type '%S'", tn); Py_DECREF(tn); }
        return -1;
    }
    if (!*seen_shape) { inf->ndim = depth; *seen_shape = 1; }
    inf->dtype = inf->dtype == TN_DTYPE_UNDEFINED ? d : tn_promote_types_or_undefined(inf->dtype, d);
    return 0;
}

static int py_to_value(PyObject *o, tn_value *v) {
    if (PyBool_Check(o)) { *v = tn_value_bool(o == Py_True); return 0; }
    if (PyLong_Check(o)) {
        int overflow;
        long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) { PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long"); return -1; }
        *v = tn_value_int(i);
        return 0;
    }
    if (PyFloat_Check(o)) { *v = tn_value_double(PyFloat_AsDouble(o)); return 0; }
    if (PyComplex_Check(o)) {
        v->tag = TN_V_COMPLEX;
        v->u.c.re = PyComplex_RealAsDouble(o);
        v->u.c.im = PyComplex_ImagAsDouble(o);
        return 0;
    }
    /* numpy scalars and other numbers: item() */
    PyObject *item = PyObject_CallMethod(o, "item", NULL);
    if (!item) return -1;
    int rc = py_to_value(item, v);
    Py_DECREF(item);
    return rc;
}

/* A Python int leaf as the value stored into `dtype`, with upstream's store_scalar rules
 * for ints beyond int64: UInt64 takes [2**63, 2**64) (OverflowError beyond), floating,
 * complex and bool elements take the int as a Python float, the other integer dtypes
 * raise ValueError (THPUtils_unpackLong). */
static int big_int_value(PyObject *o, tn_dtype dtype, tn_value *v) {
    int overflow;
    long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (!overflow) {
        if (i == -1 && PyErr_Occurred()) return -1;
        *v = tn_value_int(i);
        return 0;
    }
    if (dtype == TN_DTYPE_UINT64) {
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) return -1;
        *v = tn_value_uint(u);
        return 0;
    }
    if (tn_dtype_is_integral(dtype, false)) {
        PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
        return -1;
    }
    double d = PyLong_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    *v = tn_value_double(d);
    return 0;
}

/* Writes the leaves of o into the contiguous buffer of `out` starting at element *pos. */
static int fill(PyObject *o, int depth, tn_tensor *out, int64_t *pos) {
    int item = tn_dtype_itemsize(out->dtype);
    char *base = tn_tensor_data(out);
    if (is_ndarray(o)) {
        PyObject *t = tensor_from_ndarray(o);
        if (!t) return -1;
        int rc = fill(t, depth, out, pos);
        Py_DECREF(t);
        return rc;
    }
    if (tn_py_is_tensor(o)) {
        tn_tensor *t = tn_py_tensor_get(o);
        for (int i = 0; i < t->ndim; i++)
            if (depth + i >= out->ndim || t->sizes[i] != out->sizes[depth + i]) {
                PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %lld)",
                             (long long)(depth + i < out->ndim ? out->sizes[depth + i] : 0), depth + i,
                             (long long)t->sizes[i]);
                return -1;
            }
        /* element-by-element through scalar load/store (small data; models never do this in a loop) */
        int64_t n = tn_tensor_numel(t), idx[TN_MAX_DIMS] = {0};
        for (int64_t k = 0; k < n; k++) {
            int64_t off = 0;
            for (int i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
            tn_value v;
            tn_status st = tn_scalar_load(t->dtype, (char *)tn_tensor_data(t) + off * tn_dtype_itemsize(t->dtype), &v);
            if (st == TN_OK) st = tn_scalar_store(out->dtype, base + (*pos)++ * item, &v);
            if (st != TN_OK) { tn_py_raise(st); return -1; }
            for (int i = t->ndim - 1; i >= 0; i--) {
                if (++idx[i] < t->sizes[i]) break;
                idx[i] = 0;
            }
        }
        return 0;
    }
    if (depth < out->ndim) {
        if (!is_sequence(o)) {
            PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %s)",
                         (long long)out->sizes[depth], depth, "a scalar");
            return -1;
        }
        Py_ssize_t n = PySequence_Size(o);
        if (n != out->sizes[depth]) {
            PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %zd)",
                         (long long)out->sizes[depth], depth, n);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *e = PySequence_GetItem(o, i);
            if (!e) return -1;
            int rc = fill(e, depth + 1, out, pos);
            Py_DECREF(e);
            if (rc < 0) return -1;
        }
        return 0;
    }
    if (is_sequence(o)) {
        PyErr_SetString(PyExc_ValueError, "too many dimensions 'list'");
        return -1;
    }
    tn_value v;
    if (PyLong_Check(o) && !PyBool_Check(o)) {
        if (big_int_value(o, out->dtype, &v) < 0) return -1;
    } else if (py_to_value(o, &v) < 0) {
        return -1;
    }
    tn_status st = tn_scalar_store(out->dtype, base + (*pos)++ * item, &v);
    if (st != TN_OK) { tn_py_raise(st); return -1; }
    return 0;
}

/* Builds a new contiguous tensor from arbitrary Python data (dtype NULL = inferred). */
static PyObject *tensor_from_data(PyObject *data, PyObject *dtype_obj, tn_device device) {
    tn_infer inf = {0, {0}, TN_DTYPE_UNDEFINED};
    int seen = 0;
    if (infer(data, 0, &inf, &seen) < 0) return NULL;
    tn_dtype d = inf.dtype == TN_DTYPE_UNDEFINED ? tn_default_dtype() : inf.dtype;
    if (dtype_obj && dtype_obj != Py_None) d = tn_py_dtype_get(dtype_obj);
    tn_tensor *t;
    tn_status st = tn_tensor_empty(inf.ndim, inf.sizes, d, tn_device_cpu(), &t);
    if (st != TN_OK) return tn_py_raise(st);
    int64_t pos = 0;
    if (fill(data, 0, t, &pos) < 0) { tn_tensor_release(t); return NULL; }
    if (device.type == TN_DEVICE_META) {
        tn_tensor *m;
        st = tn_tensor_empty(t->ndim, t->sizes, d, device, &m);
        tn_tensor_release(t);
        if (st != TN_OK) return tn_py_raise(st);
        t = m;
    }
    return tn_py_tensor_wrap(t);
}

static int parse_device_arg(PyObject *o, tn_device *d) {
    *d = tn_device_cpu();
    if (!o || o == Py_None) return 0;
    if (tn_py_parse_device(o, d) < 0) return -1;
    if (d->type != TN_DEVICE_CPU && d->type != TN_DEVICE_META) {
        PyErr_Format(PyExc_RuntimeError, "torchnative has no %s device", d->type == TN_DEVICE_CUDA ? "cuda" : "such");
        return -1;
    }
    return 0;
}

static PyObject *f_tensor(PyObject *m, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"data", "dtype", "device", "requires_grad", "pin_memory", "names", NULL};
    PyObject *data, *dtype = Py_None, *device = Py_None, *names = Py_None;
    int requires_grad = 0, pin = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOppO:tensor", kwlist, &data, &dtype, &device, &requires_grad,
                                     &pin, &names))
        return NULL;
    dtype = tn_py_dtype_normalize(dtype);
    if (dtype != Py_None && !tn_py_is_dtype(dtype)) {
        PyErr_SetString(PyExc_TypeError, "tensor(): argument 'dtype' must be torch.dtype");
        return NULL;
    }
    tn_device dev;
    if (parse_device_arg(device, &dev) < 0) return NULL;
    if (tn_py_is_tensor(data)) {
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                         "or sourceTensor.detach().clone().requires_grad_(True), rather than "
                         "torch.tensor(sourceTensor).", 1) < 0)
            return NULL;
    }
    PyObject *r = tensor_from_data(data, dtype, dev);
    if (r && requires_grad) {
        PyObject *ok = PyObject_CallMethod(r, "requires_grad_", "O", Py_True);
        if (!ok) { Py_DECREF(r); return NULL; }
        Py_DECREF(ok);
    }
    return r;
}

/* as_tensor(data, dtype=None, device=None): shares memory with tensors / ndarrays when
 * no conversion is needed. */
static PyObject *f_as_tensor(PyObject *m, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"data", "dtype", "device", NULL};
    PyObject *data, *dtype = Py_None, *device = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:as_tensor", kwlist, &data, &dtype, &device)) return NULL;
    tn_device dev;
    if (parse_device_arg(device, &dev) < 0) return NULL;
    PyObject *t = NULL;
    if (tn_py_is_tensor(data)) { Py_INCREF(data); t = data; }
    else if (is_ndarray(data)) t = tensor_from_ndarray(data);
    if (t) {
        tn_tensor *tt = tn_py_tensor_get(t);
        if ((dtype == Py_None || tn_py_dtype_get(dtype) == tt->dtype) &&
            (device == Py_None || dev.type == tn_tensor_device(tt).type))
            return t;
        PyObject *r = PyObject_CallMethod(t, "to", "OO", device == Py_None ? Py_None : device, dtype);
        Py_DECREF(t);
        return r;
    }
    if (PyErr_Occurred()) return NULL;
    return tensor_from_data(data, dtype, dev);
}

/* frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False): a 1-D tensor over
 * an object's buffer memory (kept alive by the storage). */
static PyObject *f_frombuffer(PyObject *m, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"buffer", "dtype", "count", "offset", "requires_grad", NULL};
    PyObject *buffer, *dtype;
    long long count = -1, offset = 0;
    int rg = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OLLp:frombuffer", kwlist, &buffer, &dtype, &count, &offset, &rg))
        return NULL;
    dtype = tn_py_dtype_normalize(dtype);
    if (!tn_py_is_dtype(dtype)) {
        PyErr_SetString(PyExc_TypeError, "frombuffer(): argument 'dtype' must be torch.dtype");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(buffer, &view, PyBUF_SIMPLE) < 0) return NULL;
    tn_dtype d = tn_py_dtype_get(dtype);
    int item = tn_dtype_itemsize(d);
    Py_ssize_t len = view.len;
    void *buf = view.buf;
    PyBuffer_Release(&view);
    if (offset < 0 || offset > len) {
        PyErr_Format(PyExc_ValueError, "offset (%lld bytes) must be non-negative and no greater than buffer length (%zd bytes) minus 1.", offset, len);
        return NULL;
    }
    if (count < 0) {
        if ((len - offset) % item) {
            PyErr_Format(PyExc_ValueError, "buffer length (%zd bytes) after offset (%lld bytes) must be a multiple of element size (%d)", len, offset, item);
            return NULL;
        }
        count = (len - offset) / item;
    } else if (offset + count * item > len) {
        PyErr_Format(PyExc_ValueError, "requested buffer length (%lld * %d bytes) after offset (%lld bytes) must not be greater than actual buffer length (%zd bytes)", count, item, offset, len);
        return NULL;
    }
    if (len == 0 || count == 0) {
        PyErr_Format(PyExc_ValueError, "both buffer length (%zd) and count (%lld) must not be 0", len, count);
        return NULL;
    }
    Py_INCREF(buffer);
    tn_storage *s = tn_storage_borrow((char *)buf + offset, count * item, tn_device_cpu(), release_pyobject, buffer);
    if (!s) { Py_DECREF(buffer); return PyErr_NoMemory(); }
    int64_t sz = count, st = 1;
    tn_tensor *t = tn_tensor_new_view(s, 0, 1, &sz, &st, d);
    tn_storage_release(s);
    PyObject *r = tn_py_tensor_wrap(t);
    if (r && rg) {
        PyObject *ok = PyObject_CallMethod(r, "requires_grad_", NULL);
        if (!ok) { Py_DECREF(r); return NULL; }
        Py_DECREF(ok);
    }
    return r;
}

/* asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False): shares memory
 * with tensors, ndarrays and buffer objects when no conversion is needed (copy=None) and
 * never when copy=True; copy=False refuses a needed copy, as upstream. */
static PyObject *f_asarray(PyObject *m, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"obj", "dtype", "device", "copy", "requires_grad", NULL};
    PyObject *obj, *dtype = Py_None, *device = Py_None, *copy = Py_None;
    int rg = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOp:asarray", kwlist, &obj, &dtype, &device, &copy, &rg))
        return NULL;
    dtype = tn_py_dtype_normalize(dtype);
    if (dtype != Py_None && !tn_py_is_dtype(dtype)) {
        PyErr_SetString(PyExc_TypeError, "asarray(): argument 'dtype' must be torch.dtype");
        return NULL;
    }
    tn_device dev;
    if (parse_device_arg(device, &dev) < 0) return NULL;
    int force_copy = copy == Py_True, forbid_copy = copy == Py_False;
    PyObject *t = NULL;
    if (tn_py_is_tensor(obj)) { Py_INCREF(obj); t = obj; }
    else if (is_ndarray(obj)) t = tensor_from_ndarray(obj);
    else if (tn_py_is_storage(obj)) {
        /* a storage: its bytes as a 1-D tensor of `dtype` (uint8 by default), aliasing it
         * (safetensors reads every tensor this way) */
        tn_storage *st = tn_py_storage_get(obj);
        tn_dtype d = dtype != Py_None ? tn_py_dtype_get(dtype) : TN_DTYPE_UINT8;
        int item = tn_dtype_itemsize(d);
        if (st->nbytes % item) {
            PyErr_Format(PyExc_RuntimeError, "asarray(): storage of %lld bytes is not a multiple of the element size %d",
                         (long long)st->nbytes, item);
            return NULL;
        }
        int64_t n = st->nbytes / item, one = 1;
        tn_tensor *tt = tn_tensor_new_view(st, 0, 1, &n, &one, d);
        if (!tt) return PyErr_NoMemory();
        t = tn_py_tensor_wrap(tt);
        if (!t) return NULL;
        dtype = Py_None;
    }
    else if (PyObject_CheckBuffer(obj) && !PyUnicode_Check(obj)) {
        Py_buffer view;
        if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return NULL;
        Py_ssize_t len = view.len;
        PyBuffer_Release(&view);
        tn_dtype d = dtype != Py_None ? tn_py_dtype_get(dtype) : TN_DTYPE_UINT8;
        if (len % tn_dtype_itemsize(d)) {
            PyErr_SetString(PyExc_ValueError, "buffer length must be a multiple of the element size");
            return NULL;
        }
        PyObject *fa = Py_BuildValue("(O)", obj);
        PyObject *fk = Py_BuildValue("{s:O}", "dtype", tn_py_dtype_object(d));
        t = fa && fk ? f_frombuffer(m, fa, fk) : NULL;
        Py_XDECREF(fa);
        Py_XDECREF(fk);
        if (!t) return NULL;
        dtype = Py_None;
    }
    if (PyErr_Occurred()) { Py_XDECREF(t); return NULL; }
    PyObject *r;
    if (t) {
        tn_tensor *tt = tn_py_tensor_get(t);
        int same = (dtype == Py_None || tn_py_dtype_get(dtype) == tt->dtype) &&
                   (device == Py_None || dev.type == tn_tensor_device(tt).type);
        if (same && !force_copy) {
            r = t;
        } else if (forbid_copy) {
            Py_DECREF(t);
            PyErr_SetString(PyExc_ValueError, "can't alias tensor from numpy array or buffer: a copy is needed");
            return NULL;
        } else {
            r = PyObject_CallMethod(t, "to", "OOOO", device == Py_None ? Py_None : device,
                                    dtype == Py_None ? (PyObject *)tn_py_dtype_object(tt->dtype) : dtype, Py_False, Py_True);
            Py_DECREF(t);
        }
    } else {
        r = tensor_from_data(obj, dtype, dev);
    }
    if (r && rg) {
        PyObject *ok = PyObject_CallMethod(r, "requires_grad_", NULL);
        if (!ok) { Py_DECREF(r); return NULL; }
        Py_DECREF(ok);
    }
    return r;
}

/* torch.nonzero / numel / get_device: the hand-bound torch.* spellings of Tensor methods. */
static PyObject *call_method_of_first(const char *method, PyObject *args, PyObject *kw) {
    if (PyTuple_Size(args) < 1 || !tn_py_is_tensor(PyTuple_GetItem(args, 0))) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor", method);
        return NULL;
    }
    PyObject *self = PyTuple_GetItem(args, 0);
    PyObject *rest = PyTuple_GetSlice(args, 1, PyTuple_Size(args));
    PyObject *fn = PyObject_GetAttrString(self, method);
    PyObject *r = fn && rest ? PyObject_Call(fn, rest, kw) : NULL;
    Py_XDECREF(fn);
    Py_XDECREF(rest);
    return r;
}
/* torch.nonzero(input, *, out=None, as_tuple=False): the method, or aten::nonzero.out into `out`. */
static PyObject *f_nonzero(PyObject *m, PyObject *a, PyObject *k) {
    PyObject *out = k ? PyDict_GetItemString(k, "out") : NULL;
    if (!out || out == Py_None) {
        if (!out) return call_method_of_first("nonzero", a, k);
        PyObject *k2 = PyDict_Copy(k);
        if (!k2 || PyDict_DelItemString(k2, "out") < 0) { Py_XDECREF(k2); return NULL; }
        PyObject *r = call_method_of_first("nonzero", a, k2);
        Py_DECREF(k2);
        return r;
    }
    static char *kwlist[] = {"input", "as_tuple", "out", NULL};
    PyObject *input, *o;
    int as_tuple = 0;
    if (!PyArg_ParseTupleAndKeywords(a, k, "O|$pO:nonzero", kwlist, &input, &as_tuple, &o)) return NULL;
    if (!tn_py_is_tensor(input) || !tn_py_is_tensor(o)) {
        PyErr_SetString(PyExc_TypeError, "nonzero(): arguments 'input' and 'out' must be Tensor");
        return NULL;
    }
    if (as_tuple) {
        PyErr_SetString(PyExc_RuntimeError, "nonzero does not support the out kwarg when as_tuple is True");
        return NULL;
    }
    tn_value args[2] = {tn_value_tensor(tn_py_tensor_get(input)), tn_value_tensor(tn_py_tensor_get(o))}, r;
    tn_status st = tn_dispatch(TN_OP_nonzero_out, args, &r);
    if (st != TN_OK) return tn_py_raise(st);
    tn_tensor_release(r.u.t);
    Py_INCREF(o);
    return o;
}
static PyObject *f_numel(PyObject *m, PyObject *a, PyObject *k) { return call_method_of_first("numel", a, k); }
static PyObject *f_get_device(PyObject *m, PyObject *a, PyObject *k) { return call_method_of_first("get_device", a, k); }

/* torch.range(start, end, step=1, *, dtype=None, device=None, requires_grad=False): the
 * deprecated inclusive range, through aten::range.step. */
static PyObject *f_range(PyObject *m, PyObject *args, PyObject *kw) {
    /* upstream's hand-written signature: range(Scalar start, Scalar end, Scalar step=1, *,
     * Tensor out=None, ScalarType dtype=None, Layout layout=torch.strided, Device device=None,
     * bool requires_grad=False): no pin_memory, and layout is not optional */
    static char *kwlist[] = {"start", "end", "step", "dtype", "layout", "device", "requires_grad", "out", NULL};
    PyObject *start, *end, *step = NULL, *dtype = Py_None, *layout = NULL, *device = Py_None, *rg = Py_False,
             *out = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O$OOOOO:range", kwlist, &start, &end, &step, &dtype, &layout,
                                     &device, &rg, &out))
        return NULL;
    if (layout && !tn_py_is_layout(layout)) {
        char tb[128];
        PyErr_Format(PyExc_TypeError, "range(): argument 'layout' must be torch.layout, not %s",
                     tn_py_typename(layout, tb, sizeof tb));
        return NULL;
    }
    if (layout && tn_py_layout_get(layout) != 0) { /* upstream has no sparse range kernel either */
        PyErr_SetString(PyExc_NotImplementedError, "torch.range with a non-strided layout is not implemented by torchnative");
        return NULL;
    }
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "torch.range is deprecated and will be removed in a future release because its behavior is "
                     "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                     "[start, end).", 1) < 0)
        return NULL;
    tn_value a[7];
    PyObject *vals[3] = {start, end, step ? step : Py_None};
    for (int i = 0; i < 3; i++) {
        PyObject *o = vals[i];
        if (o == Py_None) { a[i] = tn_value_int(1); continue; }
        if (py_to_value(o, &a[i]) < 0) return NULL;
    }
    a[3].tag = TN_V_NONE;
    dtype = tn_py_dtype_normalize(dtype);
    if (dtype != Py_None && !tn_py_is_dtype(dtype)) {
        PyErr_SetString(PyExc_TypeError, "range(): argument 'dtype' must be torch.dtype");
        return NULL;
    }
    if (dtype != Py_None) { a[3].tag = TN_V_DTYPE; a[3].u.dtype = tn_py_dtype_get(dtype); }
    a[4].tag = TN_V_NONE;
    a[5].tag = TN_V_NONE;
    tn_device dev;
    if (parse_device_arg(device, &dev) < 0) return NULL;
    if (device != Py_None) { a[5].tag = TN_V_DEVICE; a[5].u.device = dev; }
    a[6].tag = TN_V_NONE;
    tn_value r;
    if (out != Py_None) { /* range.out: the values land in out's dtype and, when it has as many elements, its shape */
        if (!tn_py_is_tensor(out)) {
            PyErr_SetString(PyExc_TypeError, "range(): argument 'out' must be Tensor");
            return NULL;
        }
        a[3] = tn_value_tensor(tn_py_tensor_get(out));
        tn_status st = tn_dispatch(TN_OP_range_out, a, &r);
        if (st != TN_OK) return tn_py_raise(st);
        tn_tensor_release(r.u.t);
        Py_INCREF(out);
        return out;
    }
    tn_status st = tn_dispatch(TN_OP_range_step, a, &r);
    if (st != TN_OK) return tn_py_raise(st);
    PyObject *res = tn_py_tensor_wrap(r.u.t);
    if (res && PyObject_IsTrue(rg) == 1) { /* requires_grad=True, as upstream's signature */
        PyObject *ok = PyObject_CallMethod(res, "requires_grad_", NULL);
        if (!ok) Py_CLEAR(res);
        Py_XDECREF(ok);
    }
    return res;
}

/* Refusals share one C function; each is bound to its own name as `self`, which keeps
 * them distinct objects under == (CPython compares builtins by self and C function). */
static PyObject *f_refuse_named(PyObject *name, PyObject *a, PyObject *k) {
    PyErr_Format(PyExc_NotImplementedError, "torch.%U is not implemented by torchnative", name);
    return NULL;
}

/* With a torch-function mode active (e.g. `with torch.device("meta")`), a hand-written
 * factory defers to the mode with its public torch.<name> object, as upstream's do. */
static PyObject *mode_dispatch(const char *name, PyObject *args, PyObject *kw) {
    PyObject *torch = PyImport_ImportModule("torch");
    if (!torch) return NULL;
    PyObject *fn = PyObject_GetAttrString(torch, name);
    Py_DECREF(torch);
    if (!fn) return NULL;
    PyObject *r = tn_tf_dispatch(NULL, 0, fn, args, kw, "torch", name);
    Py_DECREF(fn);
    return r;
}

#define MODE_AWARE(fname, impl, pyname)                                                 \
    static PyObject *fname(PyObject *m, PyObject *args, PyObject *kw) {                 \
        if (tn_tf_mode_enabled()) return mode_dispatch(pyname, args, kw);               \
        return impl(m, args, kw);                                                       \
    }
MODE_AWARE(f_tensor_mode, f_tensor, "tensor")
MODE_AWARE(f_as_tensor_mode, f_as_tensor, "as_tensor")
MODE_AWARE(f_asarray_mode, f_asarray, "asarray")
MODE_AWARE(f_frombuffer_mode, f_frombuffer, "frombuffer")
MODE_AWARE(f_range_mode, f_range, "range")

static PyMethodDef manual_functions[] = {
    {"nonzero", (PyCFunction)(void (*)(void))f_nonzero, METH_VARARGS | METH_KEYWORDS, NULL},
    {"numel", (PyCFunction)(void (*)(void))f_numel, METH_VARARGS | METH_KEYWORDS, NULL},
    {"get_device", (PyCFunction)(void (*)(void))f_get_device, METH_VARARGS | METH_KEYWORDS, NULL},
    {"range", (PyCFunction)(void (*)(void))f_range_mode, METH_VARARGS | METH_KEYWORDS, NULL},
    {"asarray", (PyCFunction)(void (*)(void))f_asarray_mode, METH_VARARGS | METH_KEYWORDS, NULL},
    {"tensor", (PyCFunction)(void (*)(void))f_tensor_mode, METH_VARARGS | METH_KEYWORDS, NULL},
    {"as_tensor", (PyCFunction)(void (*)(void))f_as_tensor_mode, METH_VARARGS | METH_KEYWORDS, NULL},
    {"from_numpy", f_from_numpy, METH_O, NULL},
    {"frombuffer", (PyCFunction)(void (*)(void))f_frombuffer_mode, METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL},
};

/* Adds the hand-written torch.* functions to `target` (the _VariableFunctions class or
 * the module while that class does not exist). */
static const char *const refused_functions[] = {
    "sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor",
    "sparse_compressed_tensor", "spmm", "dsmm", "hsmm", "saddmm", "_from_blob", NULL,
};
static PyMethodDef refuse_def = {"refused", (PyCFunction)(void (*)(void))f_refuse_named, METH_VARARGS | METH_KEYWORDS, NULL};
static PyMethodDef refuse_defs[sizeof refused_functions / sizeof refused_functions[0]];

int tn_py_add_manual_functions(PyObject *target) {
    for (PyMethodDef *d = manual_functions; d->ml_name; d++) {
        PyObject *f = PyCFunction_NewEx(d, NULL, NULL);
        if (!f) return -1;
        int rc = PyObject_SetAttrString(target, d->ml_name, f);
        Py_DECREF(f);
        if (rc < 0) return -1;
    }
    for (int i = 0; refused_functions[i]; i++) {
        refuse_defs[i] = refuse_def;
        refuse_defs[i].ml_name = refused_functions[i]; /* __name__ of the builtin */
        PyObject *name = PyUnicode_FromString(refused_functions[i]);
        PyObject *f = name ? PyCFunction_NewEx(&refuse_defs[i], name, NULL) : NULL;
        Py_XDECREF(name);
        if (!f) return -1;
        int rc = PyObject_SetAttrString(target, refused_functions[i], f);
        Py_DECREF(f);
        if (rc < 0) return -1;
    }
    return 0;
}

int tn_py_init_tensor_new(PyObject *m) {
    PyType_Spec spec = {"torch._C._TNArrayHolder", sizeof(TNArrayHolder), 0, Py_TPFLAGS_DEFAULT, holder_slots};
    tn_holder_type = (PyTypeObject *)PyType_FromSpec(&spec);
    return tn_holder_type ? 0 : -1;
}
