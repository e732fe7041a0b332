/* dtype.c — torch.dtype, torch.layout, torch.memory_format and torch.qscheme objects.
 * Each is a small C type whose instances are singletons created at init; they pickle by
 * name (`__reduce__` returns "float32", resolved as torch.float32 as upstream does). */
#include "binding.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    int value;        /* tn_dtype / layout / memory format / qscheme number */
    const char *name; /* primary name, "float32" */
} TNEnumObject;

/* ---- dtype --------------------------------------------------------------------------- */


static PyTypeObject *tn_dtype_type, *tn_layout_type, *tn_memfmt_type, *tn_qscheme_type;
static PyObject *tn_dtype_objs[TN_DTYPE_COUNT];

#define TN_LAYOUT_COUNT 8
static const char *const tn_layout_names[TN_LAYOUT_COUNT] = {
    "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged"};
static PyObject *tn_layout_objs[TN_LAYOUT_COUNT];

#define TN_MEMFMT_COUNT 4
static const char *const tn_memfmt_names[TN_MEMFMT_COUNT] = {
    "contiguous_format", "preserve_format", "channels_last", "channels_last_3d"};
static PyObject *tn_memfmt_objs[TN_MEMFMT_COUNT];

#define TN_QSCHEME_COUNT 5
static const char *const tn_qscheme_names[TN_QSCHEME_COUNT] = {
    "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
    "per_channel_affine_float_qparams"};
static PyObject *tn_qscheme_objs[TN_QSCHEME_COUNT];

static PyObject *enum_repr(PyObject *self) {
    return PyUnicode_FromFormat("torch.%s", ((TNEnumObject *)self)->name);
}

static PyObject *enum_reduce(PyObject *self, PyObject *unused) {
    return PyUnicode_FromString(((TNEnumObject *)self)->name);
}

static PyObject *enum_new_refused(PyTypeObject *t, PyObject *a, PyObject *k) {
    PyErr_Format(PyExc_TypeError, "cannot create '%s' instances", "torch type");
    return NULL;
}

static tn_dtype dtype_of(PyObject *self) { return (tn_dtype)((TNEnumObject *)self)->value; }

static PyObject *dtype_is_floating_point(PyObject *self, void *c) {
    return PyBool_FromLong(tn_dtype_is_floating(dtype_of(self)));
}
static PyObject *dtype_is_complex(PyObject *self, void *c) {
    return PyBool_FromLong(tn_dtype_is_complex(dtype_of(self)));
}
static PyObject *dtype_is_signed(PyObject *self, void *c) {
    tn_dtype d = dtype_of(self);
    char k = tn_dtype_infos[d].kind;
    bool s = k == 'i' || k == 'f' || k == 'c' || d == TN_DTYPE_QINT8 || d == TN_DTYPE_QINT32;
    if (d == TN_DTYPE_FLOAT8_E8M0FNU) s = false;
    return PyBool_FromLong(s);
}
static PyObject *dtype_itemsize(PyObject *self, void *c) {
    return PyLong_FromLong(tn_dtype_itemsize(dtype_of(self)));
}

static PyObject *dtype_abbr(PyObject *self, void *c) {
    const tn_dtype_info *i = &tn_dtype_infos[dtype_of(self)];
    return PyUnicode_FromString(i->abbr ? i->abbr : i->py_name);
}

/* _get_all_dtypes(): the dtypes that have an abbreviation, in enum order (upstream's list). */
static PyObject *f_get_all_dtypes(PyObject *m, PyObject *u) {
    PyObject *l = PyList_New(0);
    for (int d = 0; l && d < TN_DTYPE_COUNT; d++) {
        if (!tn_dtype_infos[d].abbr) continue;
        if (PyList_Append(l, tn_dtype_objs[d]) < 0) Py_CLEAR(l);
    }
    return l;
}

static PyMethodDef dtype_functions[] = {
    {"_get_all_dtypes", f_get_all_dtypes, METH_NOARGS, NULL},
    {NULL},
};

static PyObject *dtype_to_real(PyObject *self, PyObject *unused) {
    tn_dtype d = dtype_of(self);
    tn_dtype r = d == TN_DTYPE_COMPLEX32 ? TN_DTYPE_FLOAT16
               : d == TN_DTYPE_COMPLEX64 ? TN_DTYPE_FLOAT32
               : d == TN_DTYPE_COMPLEX128 ? TN_DTYPE_FLOAT64 : d;
    PyObject *o = tn_dtype_objs[r];
    Py_INCREF(o);
    return o;
}

static PyObject *dtype_to_complex(PyObject *self, PyObject *unused) {
    tn_dtype d = dtype_of(self), r;
    switch (d) {
    case TN_DTYPE_FLOAT16: r = TN_DTYPE_COMPLEX32; break;
    case TN_DTYPE_FLOAT32: r = TN_DTYPE_COMPLEX64; break;
    case TN_DTYPE_FLOAT64: r = TN_DTYPE_COMPLEX128; break;
    case TN_DTYPE_COMPLEX32: case TN_DTYPE_COMPLEX64: case TN_DTYPE_COMPLEX128: r = d; break;
    default:
        PyErr_Format(PyExc_RuntimeError, "Unknown Complex ScalarType for %s", tn_dtype_infos[d].c10_name);
        return NULL;
    }
    PyObject *o = tn_dtype_objs[r];
    Py_INCREF(o);
    return o;
}

static PyMethodDef dtype_methods[] = {
    {"__reduce__", enum_reduce, METH_NOARGS, NULL},
    {"to_real", dtype_to_real, METH_NOARGS, NULL},
    {"to_complex", dtype_to_complex, METH_NOARGS, NULL},
    {NULL},
};

static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_is_floating_point, NULL, NULL, NULL},
    {"is_complex", dtype_is_complex, NULL, NULL, NULL},
    {"is_signed", dtype_is_signed, NULL, NULL, NULL},
    {"itemsize", dtype_itemsize, NULL, NULL, NULL},
    {"abbr", dtype_abbr, NULL, NULL, NULL},
    {NULL},
};

static PyMethodDef enum_methods[] = {
    {"__reduce__", enum_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyType_Slot dtype_slots[] = {
    {Py_tp_repr, enum_repr}, {Py_tp_methods, dtype_methods}, {Py_tp_getset, dtype_getset},
    {Py_tp_new, enum_new_refused}, {0, NULL},
};
static PyType_Slot enum_slots[] = {
    {Py_tp_repr, enum_repr}, {Py_tp_methods, enum_methods}, {Py_tp_new, enum_new_refused}, {0, NULL},
};

static PyTypeObject *make_type(const char *name, PyType_Slot *slots) {
    PyType_Spec spec = {name, sizeof(TNEnumObject), 0, Py_TPFLAGS_DEFAULT, slots};
    return (PyTypeObject *)PyType_FromSpec(&spec);
}

static PyObject *make_value(PyTypeObject *t, int value, const char *name) {
    TNEnumObject *o = PyObject_New(TNEnumObject, t);
    if (!o) return NULL;
    o->value = value;
    o->name = name;
    return (PyObject *)o;
}

/* Adds `names` instances of type t to the dict `into` (torch module attrs at init). */
static int add_values(PyObject *m, PyTypeObject *t, const char *const *names, int n, PyObject **objs) {
    for (int i = 0; i < n; i++) {
        objs[i] = make_value(t, i, names[i]);
        if (!objs[i]) return -1;
    }
    return 0;
}

int tn_py_is_dtype(PyObject *o) { return Py_TYPE(o) == tn_dtype_type; }
tn_dtype tn_py_dtype_get(PyObject *o) { return dtype_of(o); }
PyObject *tn_py_dtype_object(tn_dtype d) { return tn_dtype_objs[d]; }
/* Upstream's ScalarType arguments also take the Python scalar types (int -> int64,
 * float -> float64, bool, complex -> complex128); returns the torch.dtype they stand for
 * (borrowed) or o itself. */
PyObject *tn_py_dtype_normalize(PyObject *o) {
    if (o == (PyObject *)&PyLong_Type) return tn_dtype_objs[TN_DTYPE_INT64];
    if (o == (PyObject *)&PyFloat_Type) return tn_dtype_objs[TN_DTYPE_FLOAT64];
    if (o == (PyObject *)&PyBool_Type) return tn_dtype_objs[TN_DTYPE_BOOL];
    if (o == (PyObject *)&PyComplex_Type) return tn_dtype_objs[TN_DTYPE_COMPLEX128];
    return o;
}
int tn_py_is_layout(PyObject *o) { return Py_TYPE(o) == tn_layout_type; }
int tn_py_layout_get(PyObject *o) { return ((TNEnumObject *)o)->value; }
PyObject *tn_py_layout_object(int l) { return tn_layout_objs[l]; }
int tn_py_is_memory_format(PyObject *o) { return Py_TYPE(o) == tn_memfmt_type; }
int tn_py_memory_format_get(PyObject *o) { return ((TNEnumObject *)o)->value; }
PyObject *tn_py_memory_format_object(int m) { return tn_memfmt_objs[m]; }

/* _initExtension's part: writes every dtype (with aliases), layout, memory format and
 * qscheme object into the torch module, as upstream's initializeDtypes/Layouts do. */
int tn_py_publish_enums(PyObject *torch_module) {
    for (int d = 0; d < TN_DTYPE_COUNT; d++) {
        const tn_dtype_info *i = &tn_dtype_infos[d];
        if (PyObject_SetAttrString(torch_module, i->py_name, tn_dtype_objs[d]) < 0) return -1;
        if (i->py_alias && PyObject_SetAttrString(torch_module, i->py_alias, tn_dtype_objs[d]) < 0) return -1;
    }
    for (int i = 0; i < TN_LAYOUT_COUNT; i++)
        if (PyObject_SetAttrString(torch_module, tn_layout_names[i], tn_layout_objs[i]) < 0) return -1;
    for (int i = 0; i < TN_MEMFMT_COUNT; i++)
        if (PyObject_SetAttrString(torch_module, tn_memfmt_names[i], tn_memfmt_objs[i]) < 0) return -1;
    for (int i = 0; i < TN_QSCHEME_COUNT; i++)
        if (PyObject_SetAttrString(torch_module, tn_qscheme_names[i], tn_qscheme_objs[i]) < 0) return -1;
    return 0;
}

int tn_py_init_dtype(PyObject *m) {
    tn_dtype_type = make_type("torch.dtype", dtype_slots);
    tn_layout_type = make_type("torch.layout", enum_slots);
    tn_memfmt_type = make_type("torch.memory_format", enum_slots);
    tn_qscheme_type = make_type("torch.qscheme", enum_slots);
    if (!tn_dtype_type || !tn_layout_type || !tn_memfmt_type || !tn_qscheme_type) return -1;
    for (int d = 0; d < TN_DTYPE_COUNT; d++) {
        tn_dtype_objs[d] = make_value(tn_dtype_type, d, tn_dtype_infos[d].py_name);
        if (!tn_dtype_objs[d]) return -1;
    }
    if (add_values(m, tn_layout_type, tn_layout_names, TN_LAYOUT_COUNT, tn_layout_objs) < 0 ||
        add_values(m, tn_memfmt_type, tn_memfmt_names, TN_MEMFMT_COUNT, tn_memfmt_objs) < 0 ||
        add_values(m, tn_qscheme_type, tn_qscheme_names, TN_QSCHEME_COUNT, tn_qscheme_objs) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "dtype", (PyObject *)tn_dtype_type) < 0 ||
        PyModule_AddObjectRef(m, "layout", (PyObject *)tn_layout_type) < 0 ||
        PyModule_AddObjectRef(m, "memory_format", (PyObject *)tn_memfmt_type) < 0 ||
        PyModule_AddObjectRef(m, "qscheme", (PyObject *)tn_qscheme_type) < 0 ||
        PyModule_AddFunctions(m, dtype_functions) < 0)
        return -1;
    return 0;
}
