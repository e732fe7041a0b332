/* functions_tf.c — __torch_function__ support: the mode stack, the disabled states
 * (DisableTorchFunction / DisableTorchFunctionSubclass) and the dispatch rule of
 * upstream's handle_torch_function_no_python_arg_parser. */
#include <string.h>

#include "argparse.h"
#include "functions.h"

/* Upstream keeps this state thread-local (PythonTorchFunctionTLS). The GIL serialises
 * every access here; a per-thread copy is needed once the GIL is released around work. */
enum { TF_ENABLED = 0, TF_SUBCLASSES_DISABLED = 1, TF_ALL_DISABLED = 2 };
static int tf_state = TF_ENABLED;
static PyObject *tf_stack; /* list of modes, bottom first */
static PyObject *tf_disabled_impl;

int tn_tf_mode_enabled(void) { return tf_state != TF_ALL_DISABLED && tf_stack && PyList_Size(tf_stack) > 0; }
int tn_tf_subclass_enabled(void) { return tf_state == TF_ENABLED; }
PyObject *tn_tf_disabled_impl(void) { return tf_disabled_impl; }

PyObject *tn_tf_dispatch(const PyObject *const *overloaded, int nov, PyObject *public_fn, PyObject *args,
                         PyObject *kwargs, const char *module_name, const char *func_name) {
    PyObject *types = PyTuple_New(nov), *ret = NULL, *mode = NULL;
    if (!types) return NULL;
    for (int i = 0; i < nov; i++) {
        PyObject *t = (PyObject *)Py_TYPE((PyObject *)overloaded[i]);
        Py_INCREF(t);
        PyTuple_SetItem(types, i, t);
    }
    if (tn_tf_mode_enabled()) {
        /* StashTorchFunctionModeGuard: the mode runs with itself popped off the stack */
        Py_ssize_t n = PyList_Size(tf_stack);
        mode = PyList_GetItem(tf_stack, n - 1);
        Py_INCREF(mode);
        if (PyList_SetSlice(tf_stack, n - 1, n, NULL) < 0) goto done;
        PyObject *tf = PyObject_GetAttrString(mode, "__torch_function__");
        if (tf) {
            PyObject *self_of = PyObject_GetAttrString(tf, "__self__");
            PyErr_Clear();
            if (self_of != mode) {
                PyErr_SetString(PyExc_RuntimeError, "Defining your mode's `__torch_function__` as a classmethod is not "
                                                    "supported, please make it a plain method");
            } else {
                ret = kwargs ? PyObject_CallFunctionObjArgs(tf, public_fn, types, args, kwargs, NULL)
                             : PyObject_CallFunctionObjArgs(tf, public_fn, types, args, NULL);
            }
            Py_XDECREF(self_of);
            Py_DECREF(tf);
        }
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyList_Append(tf_stack, mode);
        PyErr_Restore(et, ev, tb);
        if (!ret) goto done;
    }
    if (!ret || ret == Py_NotImplemented) {
        for (int i = 0; i < nov; i++) {
            PyObject *arg = (PyObject *)overloaded[i];
            PyObject *tf = PyObject_GetAttrString(arg, "__torch_function__");
            if (!tf) goto done;
            Py_XDECREF(ret);
            PyObject *kw = kwargs ? kwargs : PyDict_New();
            ret = PyObject_CallFunctionObjArgs(tf, public_fn, types, args, kw, NULL);
            if (!kwargs) Py_XDECREF(kw);
            Py_DECREF(tf);
            if (ret != Py_NotImplemented) break;
        }
    }
    if (ret == Py_NotImplemented) {
        Py_DECREF(ret);
        ret = NULL;
        PyObject *msg = PyUnicode_FromFormat("Multiple dispatch failed for '%s.%s'; all __torch_function__ handlers "
                                             "returned NotImplemented:\n\n", module_name, func_name);
        if (mode && msg) {
            PyObject *r = PyUnicode_FromFormat("%U  - mode object %R\n", msg, mode);
            Py_DECREF(msg);
            msg = r;
        }
        for (int i = 0; i < nov && msg; i++) {
            PyObject *r = PyUnicode_FromFormat("%U  - tensor subclass %R\n", msg, (PyObject *)Py_TYPE((PyObject *)overloaded[i]));
            Py_DECREF(msg);
            msg = r;
        }
        if (msg) {
            PyObject *r = PyUnicode_FromFormat("%U\nFor more information, try re-running with TORCH_LOGS=not_implemented", msg);
            Py_DECREF(msg);
            if (r) { PyErr_SetObject(PyExc_TypeError, r); Py_DECREF(r); }
        }
    }
done:
    Py_XDECREF(mode);
    Py_DECREF(types);
    return ret;
}

/* ---- Python API ---------------------------------------------------------------------- */

static PyObject *push_stack(PyObject *m, PyObject *mode) {
    if (PyList_Append(tf_stack, mode) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *pop_stack(PyObject *m, PyObject *unused) {
    Py_ssize_t n = PyList_Size(tf_stack);
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "trying to pop from empty mode stack");
        return NULL;
    }
    PyObject *mode = PyList_GetItem(tf_stack, n - 1);
    Py_INCREF(mode);
    if (PyList_SetSlice(tf_stack, n - 1, n, NULL) < 0) { Py_DECREF(mode); return NULL; }
    return mode;
}

static PyObject *get_stack_at(PyObject *m, PyObject *idx) {
    Py_ssize_t i = PyLong_AsSsize_t(idx);
    if (i == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t n = PyList_Size(tf_stack);
    if (i < 0) i += n;
    if (i < 0 || i >= n) {
        PyErr_SetString(PyExc_IndexError, "Stack index out of range");
        return NULL;
    }
    PyObject *r = PyList_GetItem(tf_stack, i);
    Py_INCREF(r);
    return r;
}

static PyObject *len_stack(PyObject *m, PyObject *unused) { return PyLong_FromSsize_t(PyList_Size(tf_stack)); }
static PyObject *is_mode_enabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(tn_tf_mode_enabled()); }
static PyObject *is_tf_enabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(tf_state == TF_ENABLED); }
static PyObject *is_tf_all_disabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(tf_state == TF_ALL_DISABLED); }

/* _disabled_torch_function_impl(func, types, args=(), kwargs=None): calls func with
 * subclass handling off (upstream's DisableTorchFunctionSubclass around the call). */
static PyObject *disabled_impl(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || nargs > 4) {
        PyErr_SetString(PyExc_TypeError, "_disabled_torch_function_impl(func, types, args, kwargs)");
        return NULL;
    }
    PyObject *fargs = nargs > 2 ? args[2] : NULL, *fkw = nargs > 3 && args[3] != Py_None ? args[3] : NULL;
    PyObject *tup = fargs ? PySequence_Tuple(fargs) : PyTuple_New(0);
    if (!tup) return NULL;
    int saved = tf_state;
    if (tf_state == TF_ENABLED) tf_state = TF_SUBCLASSES_DISABLED;
    PyObject *r = PyObject_Call(args[0], tup, fkw);
    tf_state = saved;
    Py_DECREF(tup);
    return r;
}

/* DisableTorchFunction / DisableTorchFunctionSubclass context managers. */
typedef struct { PyObject_HEAD int old; int target; } TFGuard;

static PyObject *guard_enter(PyObject *self, PyObject *unused) {
    TFGuard *g = (TFGuard *)self;
    g->old = tf_state;
    if (g->target > tf_state) tf_state = g->target;
    Py_RETURN_NONE;
}
static PyObject *guard_exit(PyObject *self, PyObject *args) {
    tf_state = ((TFGuard *)self)->old;
    Py_RETURN_FALSE;
}
static PyMethodDef guard_methods[] = {
    {"__enter__", guard_enter, METH_NOARGS, NULL},
    {"__exit__", guard_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
static int guard_init_all(PyObject *self, PyObject *a, PyObject *k) { ((TFGuard *)self)->target = TF_ALL_DISABLED; return 0; }
static int guard_init_sub(PyObject *self, PyObject *a, PyObject *k) { ((TFGuard *)self)->target = TF_SUBCLASSES_DISABLED; return 0; }
/* _EnableTorchFunction: forces the state back to ENABLED for its block. */
static PyObject *guard_enter_enable(PyObject *self, PyObject *unused) {
    TFGuard *g = (TFGuard *)self;
    g->old = tf_state;
    tf_state = TF_ENABLED;
    Py_RETURN_NONE;
}
static PyMethodDef guard_enable_methods[] = {
    {"__enter__", guard_enter_enable, METH_NOARGS, NULL},
    {"__exit__", guard_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
static PyType_Slot guard_enable_slots[] = {{Py_tp_methods, guard_enable_methods}, {Py_tp_new, PyType_GenericNew}, {0, NULL}};
static PyType_Spec guard_enable_spec = {"torch._C._EnableTorchFunction", sizeof(TFGuard), 0, Py_TPFLAGS_DEFAULT, guard_enable_slots};
static PyType_Slot guard_all_slots[] = {{Py_tp_methods, guard_methods}, {Py_tp_init, guard_init_all}, {Py_tp_new, PyType_GenericNew}, {0, NULL}};
static PyType_Slot guard_sub_slots[] = {{Py_tp_methods, guard_methods}, {Py_tp_init, guard_init_sub}, {Py_tp_new, PyType_GenericNew}, {0, NULL}};
static PyType_Spec guard_all_spec = {"torch._C.DisableTorchFunction", sizeof(TFGuard), 0, Py_TPFLAGS_DEFAULT, guard_all_slots};
static PyType_Spec guard_sub_spec = {"torch._C.DisableTorchFunctionSubclass", sizeof(TFGuard), 0, Py_TPFLAGS_DEFAULT, guard_sub_slots};

/* _has_torch_function(iterable) / _unary(obj) / _variadic(*args): upstream's
 * check_has_torch_function over each object (modes count for every object). */
static int any_has_tf(PyObject *const *items, Py_ssize_t n) {
    if (tn_tf_mode_enabled()) return 1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (tn_has_torch_function(items[i])) return 1;
    return 0;
}
static PyObject *has_tf(PyObject *m, PyObject *arg) {
    PyObject *seq = PySequence_Tuple(arg);
    if (!seq) return NULL;
    Py_ssize_t n = PyTuple_Size(seq);
    PyObject *items[64];
    int r = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        items[i % 64] = PyTuple_GetItem(seq, i);
        if (any_has_tf(&items[i % 64], 1)) { r = 1; break; }
    }
    if (!r && n == 0) r = tn_tf_mode_enabled();
    Py_DECREF(seq);
    return PyBool_FromLong(r);
}
static PyObject *has_tf_unary(PyObject *m, PyObject *arg) { return PyBool_FromLong(any_has_tf(&arg, 1)); }
static PyObject *has_tf_variadic(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    return PyBool_FromLong(nargs == 0 ? tn_tf_mode_enabled() : any_has_tf(args, nargs));
}

/* _get_torch_function_state() -> torch._C._TorchFunctionState; _set_torch_function_state(s). */
static PyObject *get_tf_state(PyObject *m, PyObject *unused) {
    PyObject *e = PyObject_GetAttrString(m, "_TorchFunctionState");
    if (!e) return NULL;
    PyObject *r = PyObject_CallFunction(e, "i", tf_state);
    Py_DECREF(e);
    return r;
}
static PyObject *set_tf_state(PyObject *m, PyObject *st) {
    PyObject *v = PyObject_GetAttrString(st, "value");
    if (!v) { PyErr_Clear(); v = PyNumber_Index(st); }
    if (!v) return NULL;
    long s = PyLong_AsLong(v);
    Py_DECREF(v);
    if (s < TF_ENABLED || s > TF_ALL_DISABLED) { PyErr_SetString(PyExc_ValueError, "invalid torch function state"); return NULL; }
    tf_state = (int)s;
    Py_RETURN_NONE;
}

static PyMethodDef tf_methods[] = {
    {"_has_torch_function", has_tf, METH_O, NULL},
    {"_has_torch_function_unary", has_tf_unary, METH_O, NULL},
    {"_has_torch_function_variadic", (PyCFunction)(void (*)(void))has_tf_variadic, METH_FASTCALL, NULL},
    {"_get_torch_function_state", get_tf_state, METH_NOARGS, NULL},
    {"_set_torch_function_state", set_tf_state, METH_O, NULL},
    {"_push_on_torch_function_stack", push_stack, METH_O, NULL},
    {"_pop_torch_function_stack", pop_stack, METH_NOARGS, NULL},
    {"_get_function_stack_at", get_stack_at, METH_O, NULL},
    {"_len_torch_function_stack", len_stack, METH_NOARGS, NULL},
    {"_is_torch_function_mode_enabled", is_mode_enabled, METH_NOARGS, NULL},
    {"_is_torch_function_enabled", is_tf_enabled, METH_NOARGS, NULL},
    {"_is_torch_function_all_disabled", is_tf_all_disabled, METH_NOARGS, NULL},
    {"_disabled_torch_function_impl", (PyCFunction)(void (*)(void))disabled_impl, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

int tn_py_add_torch_function_api(PyObject *module) {
    if (!tf_stack && !(tf_stack = PyList_New(0))) return -1;
    PyObject *modname = PyUnicode_FromString("torch._C");
    if (!modname) return -1;
    for (PyMethodDef *d = tf_methods; d->ml_name; d++) {
        PyObject *f = PyCFunction_NewEx(d, NULL, modname);
        if (!f) { Py_DECREF(modname); return -1; }
        if (!strcmp(d->ml_name, "_disabled_torch_function_impl")) {
            Py_XDECREF(tf_disabled_impl);
            tf_disabled_impl = f;
            Py_INCREF(f);
        }
        if (PyModule_AddObject(module, d->ml_name, f) < 0) { Py_DECREF(f); Py_DECREF(modname); return -1; }
    }
    Py_DECREF(modname);
    PyObject *t1 = PyType_FromSpec(&guard_all_spec), *t2 = PyType_FromSpec(&guard_sub_spec);
    PyObject *t3 = PyType_FromSpec(&guard_enable_spec);
    if (!t3 || PyModule_AddObject(module, "_EnableTorchFunction", t3) < 0) { Py_XDECREF(t3); return -1; }
    if (!t1 || !t2 || PyModule_AddObject(module, "DisableTorchFunction", t1) < 0 ||
        PyModule_AddObject(module, "DisableTorchFunctionSubclass", t2) < 0) {
        Py_XDECREF(t1);
        Py_XDECREF(t2);
        return -1;
    }
    return 0;
}
