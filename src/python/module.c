/* module.c — PyInit__C: creates torch._C, runs each binding file's init in order, then
 * hands the module to the Python bootstrap (torchnative._C_bootstrap) that adds the
 * inert part of the surface. */
#include "binding.h"
#include "core/alloc.h"

#include "functions.h"
#include "ops/dispatch.h"

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
    case TN_ERR_LINALG: { /* the class the Python surface defines on torch._C */
        PyObject *c = tn_module ? PyObject_GetAttrString(tn_module, "_LinAlgError") : NULL;
        if (!c) PyErr_Clear();
        PyErr_SetString(c ? c : PyExc_RuntimeError, tn_error_message());
        Py_XDECREF(c);
        return NULL;
    }
    default: cls = PyExc_RuntimeError; break;
    }
    PyErr_SetString(cls, tn_error_message());
    return NULL;
}

/* _tn_kernel_ops(): "name.overload" of every upstream operator with an implementation of
 * its own (derived in-place/out= variants excluded); the op tests require a case for each.
 * torchnative's own operators (`_tn_*`, tools/codegen/own_operators.yaml) have no
 * upstream to compare with and are left out (tests/test_quant.py covers them). */
static PyObject *f_tn_kernel_ops(PyObject *m, PyObject *u) {
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < TN_OP_COUNT; i++) {
        if (!tn_op_impl((tn_op_id)i) || !strncmp(tn_op_schemas[i].name, "_tn_", 4)) continue;
        const tn_op_schema *s = &tn_op_schemas[i];
        PyObject *n = PyUnicode_FromFormat("%s.%s", s->name, s->overload[0] ? s->overload : "default");
        if (!n || PyList_Append(l, n) < 0) { Py_XDECREF(n); Py_DECREF(l); return NULL; }
        Py_DECREF(n);
    }
    return l;
}

/* _tn_op_schemas(): every aten overload's schema string, in op-id order. */
static PyObject *f_tn_op_schemas(PyObject *m, PyObject *u) {
    PyObject *l = PyList_New(TN_OP_COUNT);
    for (int i = 0; l && i < TN_OP_COUNT; i++) {
        PyObject *s = PyUnicode_FromString(tn_op_schemas[i].schema);
        if (!s) { Py_DECREF(l); return NULL; }
        PyList_SetItem(l, i, s);
    }
    return l;
}

static PyMethodDef tn_module_functions[] = {
    {"_tn_op_schemas", f_tn_op_schemas, METH_NOARGS, NULL},
    {"_tn_kernel_ops", f_tn_kernel_ops, METH_NOARGS, NULL},
    {NULL},
};

static struct PyModuleDef tn_module_def = {
    PyModuleDef_HEAD_INIT, "torch._C", "torchnative: torch._C implemented in C.", -1, tn_module_functions,
};

/* The core's warnings (tn_warn_once) as Python UserWarnings; a warning filter turning them
 * into errors is not honoured (the operator has already succeeded): the error is cleared. */
static void warn_hook(const char *msg) {
    if (PyErr_WarnEx(PyExc_UserWarning, msg, 1) < 0) PyErr_Clear();
}

PyMODINIT_FUNC PyInit__C(void) {
    PyObject *m = PyModule_Create(&tn_module_def);
    if (!m) return NULL;
    tn_module = m;
    tn_warn_hook = warn_hook;
    tn_alloc_tune_malloc();
    if (tn_py_init_dtype(m) < 0 || tn_py_init_device(m) < 0 || tn_py_init_size(m) < 0 ||
        tn_py_add_torch_function_api(m) < 0 || tn_py_add_functions(m) < 0 ||
        tn_py_init_tensor(m) < 0 || tn_py_init_state(m) < 0 || tn_py_init_tensor_new(m) < 0 ||
        tn_py_init_generator(m) < 0 || tn_py_init_storage(m) < 0 || tn_py_init_graph(m) < 0 ||
        tn_py_init_autograd(m) < 0 || tn_py_init_dist(m) < 0 || tn_py_init_functorch(m) < 0)
        goto error;
    if (tn_py_add_nn_manual(m) < 0) goto error;
    PyObject *vf = PyObject_GetAttrString(m, "_VariableFunctionsClass");
    if (!vf) goto error;
    int vrc = tn_py_add_manual_functions(vf);
    Py_DECREF(vf);
    if (vrc < 0) goto error;
    PyObject *info = PyImport_ImportModule("torchnative._info");
    if (!info) goto error;
    PyObject *fi = PyObject_GetAttrString(info, "finfo"), *ii = PyObject_GetAttrString(info, "iinfo");
    int irc = fi && ii && PyModule_AddObjectRef(m, "finfo", fi) == 0 && PyModule_AddObjectRef(m, "iinfo", ii) == 0;
    Py_XDECREF(fi);
    Py_XDECREF(ii);
    if (!irc) {
        Py_DECREF(info);
        goto error;
    }
    Py_DECREF(info);
    PyObject *boot = PyImport_ImportModule("torchnative._C_bootstrap");
    if (!boot) goto error;
    PyObject *r = PyObject_CallMethod(boot, "install", "O", m);
    Py_DECREF(boot);
    if (!r) goto error;
    Py_DECREF(r);
    /* OpenBLAS for float32/float64 GEMM when present; our own kernels otherwise. */
    PyObject *libs = PyImport_ImportModule("torchnative._native_libs");
    PyObject *path = libs ? PyObject_CallMethod(libs, "openblas_path", NULL) : NULL;
    Py_XDECREF(libs);
    if (!path) goto error;
    if (path != Py_None) {
        PyObject *ok = PyObject_CallMethod(m, "_tn_blas_load", "O", path);
        Py_XDECREF(ok);
        if (!ok) { Py_DECREF(path); goto error; }
    }
    Py_DECREF(path);
    return m;
error:
    tn_module = NULL;
    Py_DECREF(m);
    return NULL;
}
