/* size.c — torch.Size: a tuple subclass of ints with upstream's repr, slicing and
 * arithmetic returning Size, numel() and pickling. */
#include "binding.h"

static PyTypeObject *tn_size_type;
static binaryfunc tuple_subscript, tuple_concat;
static ssizeargfunc tuple_repeat;

/* New torch.Size from C sizes. */
PyObject *tn_py_size_new(int ndim, const int64_t *sizes) {
    allocfunc alloc = (allocfunc)PyType_GetSlot(tn_size_type, Py_tp_alloc);
    PyObject *s = alloc(tn_size_type, ndim);
    if (!s) return NULL;
    for (int i = 0; i < ndim; i++) {
        PyObject *v = PyLong_FromLongLong(sizes[i]);
        if (!v || PyTuple_SetItem(s, i, v) < 0) { Py_DECREF(s); return NULL; }
    }
    return s;
}

static PyObject *as_size(PyObject *tuple) {
    if (!tuple || !PyTuple_Check(tuple)) return tuple;
    PyObject *args = PyTuple_Pack(1, tuple);
    Py_DECREF(tuple);
    if (!args) return NULL;
    PyObject *r = PyObject_Call((PyObject *)tn_size_type, args, NULL);
    Py_DECREF(args);
    return r;
}

static PyObject *size_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
    PyObject *seq = NULL;
    if (!PyArg_ParseTuple(args, "|O:Size", &seq)) return NULL;
    PyObject *items = seq ? PySequence_Tuple(seq) : PyTuple_New(0);
    if (!items) return NULL;
    Py_ssize_t n = PyTuple_Size(items);
    newfunc base_new = (newfunc)PyType_GetSlot(&PyTuple_Type, Py_tp_new);
    PyObject *ints = PyTuple_New(n);
    if (!ints) { Py_DECREF(items); return NULL; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PyTuple_GetItem(items, i);
        PyObject *v = PyNumber_Index(it);
        if (!v) {
            PyErr_Clear();
            PyObject *tn = PyObject_GetAttrString((PyObject *)Py_TYPE(it), "__name__");
            PyErr_Format(PyExc_TypeError, "torch.Size() takes an iterable of 'int' (item %zd is '%S')", i, tn);
            Py_XDECREF(tn);
            Py_DECREF(items);
            Py_DECREF(ints);
            return NULL;
        }
        PyTuple_SetItem(ints, i, v);
    }
    Py_DECREF(items);
    PyObject *a = PyTuple_Pack(1, ints);
    Py_DECREF(ints);
    if (!a) return NULL;
    PyObject *r = base_new(t, a, NULL);
    Py_DECREF(a);
    return r;
}

static PyObject *size_repr(PyObject *self) {
    Py_ssize_t n = PyTuple_Size(self);
    PyObject *list = PySequence_List(self);
    if (!list) return NULL;
    PyObject *r = PyUnicode_FromFormat("torch.Size(%R)", list);
    Py_DECREF(list);
    (void)n;
    return r;
}

static PyObject *size_subscript(PyObject *self, PyObject *key) {
    PyObject *r = tuple_subscript(self, key);
    return PySlice_Check(key) ? as_size(r) : r;
}

static PyObject *size_concat(PyObject *a, PyObject *b) {
    if (!PyTuple_Check(a) || !PyTuple_Check(b)) Py_RETURN_NOTIMPLEMENTED;
    return as_size(tuple_concat(a, b));
}

static PyObject *size_repeat(PyObject *a, Py_ssize_t n) { return as_size(tuple_repeat(a, n)); }

static PyObject *size_numel(PyObject *self, PyObject *unused) {
    Py_ssize_t n = PyTuple_Size(self);
    long long p = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v = PyLong_AsLongLong(PyTuple_GetItem(self, i));
        if (v == -1 && PyErr_Occurred()) return NULL;
        p *= v;
    }
    return PyLong_FromLongLong(p);
}

static PyObject *size_reduce(PyObject *self, PyObject *unused) {
    PyObject *t = PySequence_Tuple(self);
    if (!t) return NULL;
    return Py_BuildValue("(O(N))", (PyObject *)tn_size_type, t);
}

static PyMethodDef size_methods[] = {
    {"numel", size_numel, METH_NOARGS, NULL},
    {"__reduce__", size_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyType_Slot size_slots[] = {
    {Py_tp_new, size_new}, {Py_tp_repr, size_repr}, {Py_mp_subscript, size_subscript},
    {Py_sq_concat, size_concat}, {Py_sq_repeat, size_repeat},
    {Py_tp_methods, size_methods}, {0, NULL},
};

int tn_py_init_size(PyObject *m) {
    tuple_subscript = (binaryfunc)PyType_GetSlot(&PyTuple_Type, Py_mp_subscript);
    tuple_concat = (binaryfunc)PyType_GetSlot(&PyTuple_Type, Py_sq_concat);
    tuple_repeat = (ssizeargfunc)PyType_GetSlot(&PyTuple_Type, Py_sq_repeat);
    PyType_Spec spec = {"torch.Size", 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, size_slots};
    PyObject *bases = PyTuple_Pack(1, (PyObject *)&PyTuple_Type);
    if (!bases) return -1;
    tn_size_type = (PyTypeObject *)PyType_FromSpecWithBases(&spec, bases);
    Py_DECREF(bases);
    if (!tn_size_type) return -1;
    return PyModule_AddObjectRef(m, "Size", (PyObject *)tn_size_type);
}
