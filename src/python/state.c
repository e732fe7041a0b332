/* state.c — process and thread state exposed on torch._C: _initExtension, grad mode,
 * inference mode, the default dtype. */
#include "binding.h"

#include "autograd/autograd.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "kernels/blas.h"
#include "kernels/cpu_features.h"
#include "kernels/stream.h"

int tn_py_set_tensor_class(PyObject *cls);

/* Grad mode is per thread, as upstream's GradMode; it lives with autograd in the core. */
int tn_py_grad_enabled(void) { return tn_grad_mode_enabled(); }

static PyObject *f_is_grad_enabled(PyObject *m, PyObject *u) { return PyBool_FromLong(tn_grad_mode_enabled()); }

static PyObject *f_set_grad_enabled(PyObject *m, PyObject *arg) {
    if (!PyBool_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "enabled must be a bool (got object)");
        return NULL;
    }
    tn_grad_mode_set(arg == Py_True);
    Py_RETURN_NONE;
}

static PyObject *f_is_inference_mode_enabled(PyObject *m, PyObject *u) { return PyBool_FromLong(tn_inference_mode_enabled()); }

static PyObject *f_get_default_dtype(PyObject *m, PyObject *u) {
    PyObject *d = tn_py_dtype_object(tn_default_dtype());
    Py_INCREF(d);
    return d;
}

static PyObject *f_set_default_dtype(PyObject *m, PyObject *arg) {
    if (!tn_py_is_dtype(arg)) {
        PyErr_SetString(PyExc_TypeError, "_set_default_dtype(): argument 'd' must be torch.dtype");
        return NULL;
    }
    tn_dtype d = tn_py_dtype_get(arg);
    if (d != TN_DTYPE_FLOAT32 && d != TN_DTYPE_FLOAT64 && d != TN_DTYPE_FLOAT16 && d != TN_DTYPE_BFLOAT16) {
        PyErr_SetString(PyExc_TypeError, "only floating-point types are supported as the default type");
        return NULL;
    }
    tn_set_default_dtype(d);
    Py_RETURN_NONE;
}

/* _initExtension(shm_manager_path): publish dtypes/layouts into torch, and remember
 * torch.Tensor so operator results are torch.Tensor instances. */
static PyObject *f_init_extension(PyObject *m, PyObject *arg) {
    PyObject *torch = PyImport_ImportModule("torch");
    if (!torch) return NULL;
    int rc = tn_py_publish_enums(torch);
    if (rc == 0) {
        PyObject *extras = PyImport_ImportModule("torchnative._torch_extras");
        PyObject *r = extras ? PyObject_CallMethod(extras, "install", "O", torch) : NULL;
        Py_XDECREF(extras);
        if (!r) rc = -1;
        Py_XDECREF(r);
    }
    Py_DECREF(torch);
    if (rc < 0) return NULL;
    PyObject *mod = PyImport_ImportModule("torch._tensor");
    if (!mod) return NULL;
    PyObject *cls = PyObject_GetAttrString(mod, "Tensor");
    Py_DECREF(mod);
    if (!cls) return NULL;
    tn_py_set_tensor_class(cls);
    Py_DECREF(cls);
    Py_RETURN_NONE;
}

/* Context object behind torch.inference_mode: _InferenceMode(enabled) used as a context
 * manager sets the mode (and disables grad when enabling) for its block. */
typedef struct {
    PyObject_HEAD
    int enabled;
    int prev_inference, prev_grad_disabled;
} TNInferenceModeObject;

static PyObject *inference_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
    int enabled = 1;
    if (!PyArg_ParseTuple(args, "|p:_InferenceMode", &enabled)) return NULL;
    allocfunc alloc = (allocfunc)PyType_GetSlot(t, Py_tp_alloc);
    TNInferenceModeObject *o = (TNInferenceModeObject *)alloc(t, 0);
    if (!o) return NULL;
    o->enabled = enabled;
    return (PyObject *)o;
}

static PyObject *inference_enter(PyObject *self, PyObject *u) {
    TNInferenceModeObject *o = (TNInferenceModeObject *)self;
    o->prev_inference = tn_inference_mode_enabled();
    o->prev_grad_disabled = !tn_grad_mode_enabled();
    tn_inference_mode_set(o->enabled);
    if (o->enabled) tn_grad_mode_set(false);
    Py_RETURN_NONE;
}

static PyObject *inference_exit(PyObject *self, PyObject *args) {
    TNInferenceModeObject *o = (TNInferenceModeObject *)self;
    tn_inference_mode_set(o->prev_inference);
    tn_grad_mode_set(!o->prev_grad_disabled);
    Py_RETURN_FALSE;
}

static PyMethodDef inference_methods[] = {
    {"__enter__", inference_enter, METH_NOARGS, NULL},
    {"__exit__", inference_exit, METH_VARARGS, NULL},
    {NULL},
};

static void inference_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

static PyType_Slot inference_slots[] = {
    {Py_tp_new, inference_new}, {Py_tp_dealloc, inference_dealloc}, {Py_tp_methods, inference_methods}, {0, NULL},
};

static PyObject *f_get_num_threads(PyObject *m, PyObject *u) { return PyLong_FromLong(tn_get_num_threads()); }

/* set_num_threads(n): the one pool (the BLAS runs single-threaded inside it). */
static PyObject *f_set_num_threads(PyObject *m, PyObject *arg) {
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "set_num_threads expects a positive integer");
        return NULL;
    }
    tn_set_num_threads((int)n);
    tn_blas_set_num_threads((int)n);
    Py_RETURN_NONE;
}

static PyObject *f_init_num_threads(PyObject *m, PyObject *u) { Py_RETURN_NONE; }

/* _tn_blas_load(path): loads OpenBLAS for float32/float64 GEMM; returns whether it loaded. */
static PyObject *f_blas_load(PyObject *m, PyObject *arg) {
    const char *path = PyUnicode_AsUTF8AndSize(arg, NULL);
    if (!path) return NULL;
    int ok = tn_blas_load(path) == TN_OK;
    if (ok) tn_blas_set_num_threads(tn_get_num_threads());
    return PyBool_FromLong(ok);
}

/* _tn_isa() -> (tier in effect, [every tier this host can run, lowest first]): the
 * kernel tier TN_FORCE_ISA selects, for scripts/test.sh and the benchmark report
 * (x86-64's tiers there, aarch64's there: cpu_features.h tn_cpu_tiers). */
static PyObject *f_isa(PyObject *m, PyObject *u) {
    const char *cur, *names[TN_CPU_MAX_TIERS];
    int n = tn_cpu_tiers(&cur, names);
    PyObject *all = PyList_New(0);
    for (int t = 0; all && t < n; t++) {
        PyObject *name = PyUnicode_FromString(names[t]);
        if (!name || PyList_Append(all, name) < 0) { Py_XDECREF(name); Py_CLEAR(all); break; }
        Py_DECREF(name);
    }
    if (!all) return NULL;
    return Py_BuildValue("(sN)", cur, all);
}

/* _tn_weight_prefetch(on=None) -> whether the weight stream (kernels/stream.h) was on;
 * a bool turns it on or off, None only asks. */
static PyObject *f_weight_prefetch(PyObject *m, PyObject *arg) {
    if (arg != Py_None && !PyBool_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "_tn_weight_prefetch expects a bool or None");
        return NULL;
    }
    bool was = arg == Py_None ? tn_stream_enabled() : tn_stream_set_enabled(arg == Py_True);
    return PyBool_FromLong(was);
}

/* _tn_weight_prefetch_stats(reset) -> {notes, predicted, prefetched_bytes, window}: the
 * weight stream's counters, then zeroed when reset is true. */
static PyObject *f_weight_prefetch_stats(PyObject *m, PyObject *arg) {
    int reset = PyObject_IsTrue(arg);
    if (reset < 0) return NULL;
    tn_stream_stats s = tn_stream_stats_get();
    if (reset) tn_stream_stats_reset();
    return Py_BuildValue("{sLsLsLsL}", "notes", (long long)s.notes, "predicted", (long long)s.predicted,
                         "prefetched_bytes", (long long)s.prefetched_bytes, "window", (long long)tn_stream_window());
}

/* _tn_storage_stats(reset) -> {live, peak, allocations, cached, cache_hits, maps}: the
 * data bytes storages hold (core/tensor.h tn_storage_stats_get; reset lowers the peak to
 * the live bytes) and the large-block cache's state (core/alloc.h). */
static PyObject *f_storage_stats(PyObject *m, PyObject *arg) {
    int reset = PyObject_IsTrue(arg);
    if (reset < 0) return NULL;
    tn_storage_stats s = tn_storage_stats_get(reset);
    tn_big_stats b = tn_big_stats_get();
    return Py_BuildValue("{sLsLsLsLsLsL}", "live", (long long)s.live, "peak", (long long)s.peak, "allocations",
                         (long long)s.allocations, "cached", (long long)b.cached, "cache_hits", (long long)b.hits,
                         "maps", (long long)b.maps);
}

/* _tn_empty_cache() -> bytes: unmaps the large-block cache's idle blocks (core/alloc.h). */
static PyObject *f_empty_cache(PyObject *m, PyObject *u) {
    return PyLong_FromSize_t(tn_big_empty_cache());
}

/* _tn_set_mathbits(tensor, conj, neg): sets the tensor's conjugate / negative bits
 * (ops/mathbits.h) in place, as upstream's _set_tensor_metadata does for torch.load; the
 * conjugate bit of a real tensor stays clear (conj of a real tensor is the tensor). */
static PyObject *f_set_mathbits(PyObject *m, PyObject *args) {
    PyObject *t;
    int conj, neg;
    if (!PyArg_ParseTuple(args, "Opp:_tn_set_mathbits", &t, &conj, &neg)) return NULL;
    if (!tn_py_is_tensor(t)) {
        PyErr_SetString(PyExc_TypeError, "_tn_set_mathbits expects a Tensor");
        return NULL;
    }
    tn_tensor *x = tn_py_tensor_get(t);
    x->flags &= ~(uint32_t)(TN_TENSOR_CONJ | TN_TENSOR_NEG);
    if (conj && tn_dtype_is_complex(x->dtype)) x->flags |= TN_TENSOR_CONJ;
    if (neg) x->flags |= TN_TENSOR_NEG;
    Py_RETURN_NONE;
}

static PyMethodDef state_functions[] = {
    {"_tn_set_mathbits", f_set_mathbits, METH_VARARGS, NULL},
    {"_tn_storage_stats", f_storage_stats, METH_O, NULL},
    {"_tn_empty_cache", f_empty_cache, METH_NOARGS, NULL},
    {"_tn_weight_prefetch", f_weight_prefetch, METH_O, NULL},
    {"_tn_weight_prefetch_stats", f_weight_prefetch_stats, METH_O, NULL},
    {"_tn_isa", f_isa, METH_NOARGS, NULL},
    {"get_num_threads", f_get_num_threads, METH_NOARGS, NULL},
    {"set_num_threads", f_set_num_threads, METH_O, NULL},
    {"init_num_threads", f_init_num_threads, METH_NOARGS, NULL},
    {"_tn_blas_load", f_blas_load, METH_O, NULL},
    {"is_grad_enabled", f_is_grad_enabled, METH_NOARGS, NULL},
    {"_set_grad_enabled", f_set_grad_enabled, METH_O, NULL},
    {"is_inference_mode_enabled", f_is_inference_mode_enabled, METH_NOARGS, NULL},
    {"get_default_dtype", f_get_default_dtype, METH_NOARGS, NULL},
    {"_set_default_dtype", f_set_default_dtype, METH_O, NULL},
    {"_initExtension", f_init_extension, METH_O, NULL},
    {NULL},
};

int tn_py_init_state(PyObject *m) {
    if (PyModule_AddFunctions(m, state_functions) < 0) return -1;
    PyType_Spec spec = {"torch._C._InferenceMode", sizeof(TNInferenceModeObject), 0, Py_TPFLAGS_DEFAULT,
                        inference_slots};
    PyObject *t = PyType_FromSpec(&spec);
    if (!t) return -1;
    int rc = PyModule_AddObjectRef(m, "_InferenceMode", t);
    Py_DECREF(t);
    return rc;
}
