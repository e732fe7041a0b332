/* module.c — PyInit__C: creates torch._C, runs each binding file's init in order, then
 * hands the module to the Python bootstrap (torchnative._C_bootstrap) that adds the
 * inert part of the surface. */
#include "binding.h"

static PyObject *tn_module;

PyObject *tn_py_module(void) { return tn_module; }

PyObject *tn_py_raise(tn_status st) {
    PyObject *cls;
    switch (st) {
    case TN_ERR_INDEX: cls = PyExc_IndexError; break;
    case TN_ERR_TYPE: cls = PyExc_TypeError; break;
    case TN_ERR_VALUE: cls = PyExc_ValueError; break;
    case TN_ERR_NOT_IMPLEMENTED: cls = PyExc_NotImplementedError; break;
    case TN_ERR_NO_MEMORY: cls = PyExc_RuntimeError; break;
    case TN_ERR_PYTHON:
        if (PyErr_Occurred()) return NULL;
        cls = PyExc_SystemError; break;
    default: cls = PyExc_RuntimeError; break;
    }
    PyErr_SetString(cls, tn_error_message());
    return NULL;
}

static struct PyModuleDef tn_module_def = {
    PyModuleDef_HEAD_INIT, "torch._C", "torchnative: torch._C implemented in C.", -1, NULL,
};

PyMODINIT_FUNC PyInit__C(void) {
    PyObject *m = PyModule_Create(&tn_module_def);
    if (!m) return NULL;
    tn_module = m;
    if (tn_py_init_dtype(m) < 0 || tn_py_init_device(m) < 0 || tn_py_init_size(m) < 0 ||
        tn_py_init_tensor(m) < 0 || tn_py_init_state(m) < 0 || tn_py_init_tensor_new(m) < 0 ||
        tn_py_init_generator(m) < 0 || tn_py_init_storage(m) < 0)
        goto error;
    PyObject *boot = PyImport_ImportModule("torchnative._C_bootstrap");
    if (!boot) goto error;
    PyObject *r = PyObject_CallMethod(boot, "install", "O", m);
    Py_DECREF(boot);
    if (!r) goto error;
    Py_DECREF(r);
    return m;
error:
    tn_module = NULL;
    Py_DECREF(m);
    return NULL;
}
