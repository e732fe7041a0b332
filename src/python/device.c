/* device.c — torch.device: parsing ("cpu", "cuda:1", "meta", index ints), equality,
 * hashing, pickling, and `with torch.device(...)` (pushes torch.utils._device.DeviceContext
 * on the torch-function mode stack, as upstream does). */
#include "binding.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    tn_device d;
} TNDeviceObject;

static PyTypeObject *tn_device_pytype;

/* c10::DeviceType names, indexed by number. */
static const char *const tn_device_type_names[] = {
    "cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia", "xla",
    "vulkan", "metal", "xpu", "mps", "meta", "hpu", "ve", "lazy", "ipu", "mtia", "privateuseone",
};
#define TN_DEVICE_TYPE_COUNT ((int)(sizeof tn_device_type_names / sizeof tn_device_type_names[0]))

int tn_py_is_device(PyObject *o) { return Py_TYPE(o) == tn_device_pytype; }

static int parse_device_string(const char *s, Py_ssize_t len, tn_device *out) {
    const char *colon = memchr(s, ':', (size_t)len);
    Py_ssize_t tlen = colon ? colon - s : len;
    int type = -1;
    for (int i = 0; i < TN_DEVICE_TYPE_COUNT; i++)
        if ((Py_ssize_t)strlen(tn_device_type_names[i]) == tlen && !strncmp(s, tn_device_type_names[i], (size_t)tlen))
            type = i;
    if (type < 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, "
                     "xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device "
                     "string: %s", s);
        return -1;
    }
    int index = -1;
    if (colon) {
        const char *p = colon + 1;
        if (!*p) goto bad;
        long v = 0;
        for (; *p; p++) {
            if (*p < '0' || *p > '9') goto bad;
            v = v * 10 + (*p - '0');
            if (v > 32767) goto bad;
        }
        if (colon[1] == '0' && colon[2]) goto bad;
        index = (int)v;
    }
    out->type = (int16_t)type;
    out->index = (int16_t)index;
    return 0;
bad:
    PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", s);
    return -1;
}

int tn_py_parse_device(PyObject *o, tn_device *out) {
    if (tn_py_is_device(o)) { *out = ((TNDeviceObject *)o)->d; return 0; }
    if (PyUnicode_Check(o)) {
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(o, &len);
        if (!s) return -1;
        return parse_device_string(s, len, out);
    }
    if (PyLong_Check(o)) {
        long i = PyLong_AsLong(o);
        if (i == -1 && PyErr_Occurred()) return -1;
        if (i < 0) { PyErr_SetString(PyExc_RuntimeError, "Device index must not be negative"); return -1; }
        /* An int device means the current accelerator upstream; there is none here. */
        PyErr_SetString(PyExc_RuntimeError, "Cannot access accelerator device when none is available.");
        return -1;
    }
    PyErr_Format(PyExc_TypeError, "Expected a torch.device, str or int, got %s", Py_TYPE(o) == NULL ? "?" : "object");
    return -1;
}

PyObject *tn_py_device_new(tn_device d) {
    TNDeviceObject *o = PyObject_New(TNDeviceObject, tn_device_pytype);
    if (!o) return NULL;
    o->d = d;
    return (PyObject *)o;
}

static PyObject *device_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"type", "index", NULL};
    PyObject *type = NULL, *index = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:device", kwlist, &type, &index)) return NULL;
    tn_device d;
    if (tn_py_is_device(type) && index == Py_None) { Py_INCREF(type); return type; }
    if (tn_py_parse_device(type, &d) < 0) return NULL;
    if (index != Py_None) {
        if (!PyUnicode_Check(type)) {
            PyErr_SetString(PyExc_TypeError, "device(): type must be a str when index is given");
            return NULL;
        }
        if (d.index >= 0) {
            PyErr_Format(PyExc_RuntimeError, "type (string) must not include an index because index was passed explicitly: %S", type);
            return NULL;
        }
        long i = PyLong_AsLong(index);
        if (i == -1 && PyErr_Occurred()) return NULL;
        if (i < 0) { PyErr_Format(PyExc_RuntimeError, "Device index must not be negative"); return NULL; }
        d.index = (int16_t)i;
    }
    return tn_py_device_new(d);
}

static PyObject *device_type_get(PyObject *self, void *c) {
    return PyUnicode_FromString(tn_device_type_names[((TNDeviceObject *)self)->d.type]);
}
static PyObject *device_index_get(PyObject *self, void *c) {
    int i = ((TNDeviceObject *)self)->d.index;
    if (i < 0) Py_RETURN_NONE;
    return PyLong_FromLong(i);
}

static PyObject *device_str(PyObject *self) {
    tn_device d = ((TNDeviceObject *)self)->d;
    if (d.index >= 0) return PyUnicode_FromFormat("%s:%d", tn_device_type_names[d.type], d.index);
    return PyUnicode_FromString(tn_device_type_names[d.type]);
}

static PyObject *device_repr(PyObject *self) {
    tn_device d = ((TNDeviceObject *)self)->d;
    if (d.index >= 0) return PyUnicode_FromFormat("device(type='%s', index=%d)", tn_device_type_names[d.type], d.index);
    return PyUnicode_FromFormat("device(type='%s')", tn_device_type_names[d.type]);
}

static PyObject *device_richcompare(PyObject *a, PyObject *b, int op) {
    if (!tn_py_is_device(a) || !tn_py_is_device(b) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    tn_device x = ((TNDeviceObject *)a)->d, y = ((TNDeviceObject *)b)->d;
    int eq = x.type == y.type && x.index == y.index;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t device_hash(PyObject *self) {
    tn_device d = ((TNDeviceObject *)self)->d;
    return (Py_hash_t)((d.type << 16) ^ (d.index + 1)) + 0x5bd1e995;
}

static PyObject *device_reduce(PyObject *self, PyObject *unused) {
    tn_device d = ((TNDeviceObject *)self)->d;
    PyObject *type = device_type_get(self, NULL);
    if (!type) return NULL;
    PyObject *r = d.index >= 0 ? Py_BuildValue("(O(Ni))", (PyObject *)tn_device_pytype, type, (int)d.index)
                               : Py_BuildValue("(O(N))", (PyObject *)tn_device_pytype, type);
    return r;
}

static PyObject *device_enter(PyObject *self, PyObject *unused) {
    PyObject *mod = PyImport_ImportModule("torch.utils._device");
    if (!mod) return NULL;
    PyObject *mode = PyObject_CallMethod(mod, "DeviceContext", "O", self);
    Py_DECREF(mod);
    if (!mode) return NULL;
    PyObject *r = PyObject_CallMethod(tn_py_module(), "_push_on_torch_function_stack", "O", mode);
    Py_DECREF(mode);
    if (!r) return NULL;
    Py_DECREF(r);
    Py_INCREF(self); /* upstream's __enter__ returns the device */
    return self;
}

static PyObject *device_exit(PyObject *self, PyObject *args) {
    PyObject *r = PyObject_CallMethod(tn_py_module(), "_pop_torch_function_stack", NULL);
    if (!r) return NULL;
    Py_DECREF(r);
    Py_RETURN_NONE;
}


static PyMethodDef device_methods[] = {
    {"__reduce__", device_reduce, METH_NOARGS, NULL},
    {"__enter__", device_enter, METH_NOARGS, NULL},
    {"__exit__", device_exit, METH_VARARGS, NULL},
    {NULL},
};
static PyGetSetDef device_getset[] = {
    {"type", device_type_get, NULL, NULL, NULL},
    {"index", device_index_get, NULL, NULL, NULL},
    {NULL},
};
static PyType_Slot device_slots[] = {
    {Py_tp_new, device_new}, {Py_tp_repr, device_repr}, {Py_tp_str, device_str},
    {Py_tp_richcompare, device_richcompare}, {Py_tp_hash, device_hash},
    {Py_tp_methods, device_methods}, {Py_tp_getset, device_getset}, {0, NULL},
};

int tn_py_init_device(PyObject *m) {
    PyType_Spec spec = {"torch.device", sizeof(TNDeviceObject), 0, Py_TPFLAGS_DEFAULT, device_slots};
    tn_device_pytype = (PyTypeObject *)PyType_FromSpec(&spec);
    if (!tn_device_pytype) return -1;
    return PyModule_AddObjectRef(m, "device", (PyObject *)tn_device_pytype);
}
