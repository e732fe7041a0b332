/* functorch.c — torch._C._tn_vmap_*: the binding of src/ops/vmap.c (vmap levels, batched
 * tensors made and taken apart). python/torchnative/_surface/functorch.py builds upstream's
 * torch._C._functorch names on these. */
#include <string.h>

#include "binding.h"

#include "autograd/autograd.h"
#include "ops/vmap.h"

static PyObject *tensor_result(tn_status st, tn_tensor *t) {
    if (st != TN_OK) return tn_py_raise(st);
    return tn_py_tensor_wrap(t);
}

static int tensor_arg(PyObject *o, tn_tensor **out) {
    if (!tn_py_is_tensor(o)) {
        PyErr_SetString(PyExc_TypeError, "expected a Tensor");
        return 0;
    }
    *out = tn_py_tensor_get(o);
    return 1;
}

/* _tn_vmap_increment_nesting(batch_size, randomness) -> level */
static PyObject *f_increment(PyObject *m, PyObject *args) {
    long long batch_size;
    const char *randomness;
    if (!PyArg_ParseTuple(args, "Ls:_vmap_increment_nesting", &batch_size, &randomness)) return NULL;
    int mode = !strcmp(randomness, "error") ? TN_VMAP_RANDOM_ERROR
               : !strcmp(randomness, "same") ? TN_VMAP_RANDOM_SAME
               : !strcmp(randomness, "different") ? TN_VMAP_RANDOM_DIFFERENT : -1;
    if (mode < 0) {
        PyErr_Format(PyExc_RuntimeError, "Only allowed values for randomness are 'error', 'different', or 'same'. Got %s",
                     randomness);
        return NULL;
    }
    int64_t level;
    tn_status st = tn_vmap_push(batch_size, mode, &level);
    if (st != TN_OK) return tn_py_raise(st);
    return PyLong_FromLongLong(level);
}

static PyObject *f_decrement(PyObject *m, PyObject *u) {
    int64_t level;
    tn_status st = tn_vmap_pop(&level);
    if (st != TN_OK) return tn_py_raise(st);
    return PyLong_FromLongLong(level);
}

static PyObject *f_depth(PyObject *m, PyObject *u) { return PyLong_FromLong(tn_vmap_depth()); }

/* _tn_add_batch_dim(tensor, batch_dim, level) */
static PyObject *f_add_batch_dim(PyObject *m, PyObject *args) {
    PyObject *o;
    long long bdim, level;
    tn_tensor *t, *r = NULL;
    if (!PyArg_ParseTuple(args, "OLL:_add_batch_dim", &o, &bdim, &level) || !tensor_arg(o, &t)) return NULL;
    tn_status st = tn_vmap_add_batch_dim(t, bdim, level, &r);
    return tensor_result(st, r);
}

/* _tn_remove_batch_dim(tensor, level, batch_size, out_dim) */
static PyObject *f_remove_batch_dim(PyObject *m, PyObject *args) {
    PyObject *o;
    long long level, batch_size, out_dim;
    tn_tensor *t, *r = NULL;
    if (!PyArg_ParseTuple(args, "OLLL:_remove_batch_dim", &o, &level, &batch_size, &out_dim) || !tensor_arg(o, &t))
        return NULL;
    tn_status st = tn_vmap_remove_batch_dim(t, level, batch_size, out_dim, &r);
    return tensor_result(st, r);
}

/* _tn_batch_info(tensor) -> (value, bdim, level), or None for a tensor that is not batched */
static PyObject *f_batch_info(PyObject *m, PyObject *o) {
    tn_tensor *t;
    if (!tensor_arg(o, &t)) return NULL;
    if (!t->batch) Py_RETURN_NONE;
    tn_tensor_retain(t->batch->value);
    PyObject *v = tn_py_tensor_wrap(t->batch->value);
    if (!v) return NULL;
    return Py_BuildValue("(NLL)", v, (long long)t->batch->bdim, (long long)t->batch->level);
}

static PyObject *f_batch_size(PyObject *m, PyObject *o) {
    long long level = PyLong_AsLongLong(o);
    if (level == -1 && PyErr_Occurred()) return NULL;
    int64_t b = tn_vmap_batch_size(level);
    if (b < 0) {
        PyErr_Format(PyExc_RuntimeError, "vmap: level %lld is not active", level);
        return NULL;
    }
    return PyLong_FromLongLong(b);
}

static PyObject *f_grad_increment(PyObject *m, PyObject *u) { return PyLong_FromLongLong(tn_func_grad_push()); }

static PyObject *f_grad_decrement(PyObject *m, PyObject *u) {
    int64_t level;
    tn_status st = tn_func_grad_pop(&level);
    if (st != TN_OK) return tn_py_raise(st);
    return PyLong_FromLongLong(level);
}

/* The tensors of the sequence seq (a tuple or list), each its innermost value when
 * batched: a new PyMem array of *n borrowed tensors (seq keeps them alive), or NULL with a
 * Python error set. */
static tn_tensor **leaves_of(PyObject *seq, Py_ssize_t *n) {
    PyObject *fast = PySequence_Tuple(seq);
    if (!fast) return NULL;
    *n = PyTuple_Size(fast);
    tn_tensor **leaves = PyMem_Calloc((size_t)*n + 1, sizeof *leaves);
    if (!leaves) { Py_DECREF(fast); PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < *n; i++) {
        tn_tensor *l;
        if (!tensor_arg(PyTuple_GetItem(fast, i), &l)) { PyMem_Free(leaves); Py_DECREF(fast); return NULL; }
        while (l->batch) l = l->batch->value;
        leaves[i] = l;
    }
    Py_DECREF(fast); /* the tuple's items are seq's own objects, which stay alive */
    return leaves;
}

/* _tn_reaches_other_leaf(tensor, leaves): whether backward from tensor (its innermost
 * value when batched) reaches a leaf requiring grad that is not one of `leaves` */
static PyObject *f_reaches_other_leaf(PyObject *m, PyObject *args) {
    PyObject *o, *seq;
    tn_tensor *t;
    if (!PyArg_ParseTuple(args, "OO:_tn_reaches_other_leaf", &o, &seq) || !tensor_arg(o, &t)) return NULL;
    Py_ssize_t n;
    tn_tensor **leaves = leaves_of(seq, &n);
    if (!leaves) return NULL;
    while (t->batch) t = t->batch->value;
    bool r = tn_autograd_reaches_other_leaf(t, leaves, (int)n);
    PyMem_Free(leaves);
    return PyBool_FromLong(r);
}

static PyObject *f_batched_alive(PyObject *m, PyObject *u) {
    return PyLong_FromLong(atomic_load(&tn_tensor_batched_live));
}

/* _tn_fw_enter(jvp) -> level: a forward-mode level (jvp: torch.func.jvp's, which nest) */
static PyObject *f_fw_enter(PyObject *m, PyObject *o) {
    int jvp = PyObject_IsTrue(o);
    if (jvp < 0) return NULL;
    int64_t depth;
    tn_status st = tn_fw_enter(jvp, &depth);
    if (st != TN_OK) return tn_py_raise(st);
    return PyLong_FromLongLong(depth);
}

/* _tn_fw_exit(level, jvp) */
static PyObject *f_fw_exit(PyObject *m, PyObject *args) {
    long long level;
    int jvp;
    if (!PyArg_ParseTuple(args, "Lp:_tn_fw_exit", &level, &jvp)) return NULL;
    tn_status st = tn_fw_exit(level, jvp);
    if (st != TN_OK) return tn_py_raise(st);
    Py_RETURN_NONE;
}

static PyObject *f_fw_set_enabled(PyObject *m, PyObject *o) {
    int on = PyObject_IsTrue(o);
    if (on < 0) return NULL;
    tn_fw_set_enabled(on);
    Py_RETURN_NONE;
}

static PyObject *f_fw_jvp_depth(PyObject *m, PyObject *u) { return PyLong_FromLong(tn_fw_jvp_depth()); }

static PyObject *f_fw_depth(PyObject *m, PyObject *u) { return PyLong_FromLong(tn_fw_depth()); }

static PyObject *f_fw_enabled(PyObject *m, PyObject *u) { return PyBool_FromLong(tn_fw_enabled()); }

/* _tn_detach_keep_tangents(t, leaves): detach() that keeps t's forward-mode tangents, each
 * detached too unless it reaches a leaf requiring grad outside `leaves`: grad's unwrapping
 * of a result inside jvp (upstream unwraps a wrapper; the dual stays) */
static PyObject *f_detach_keep_tangents(PyObject *m, PyObject *args) {
    PyObject *o, *seq;
    tn_tensor *t;
    if (!PyArg_ParseTuple(args, "OO:_tn_detach_keep_tangents", &o, &seq) || !tensor_arg(o, &t)) return NULL;
    Py_ssize_t n;
    tn_tensor **leaves = leaves_of(seq, &n);
    if (!leaves) return NULL;
    tn_tensor *r;
    tn_status st = tn_fw_detach(t, leaves, (int)n, &r);
    PyMem_Free(leaves);
    if (st != TN_OK) return tn_py_raise(st);
    return tn_py_tensor_wrap(r);
}

static PyMethodDef functorch_functions[] = {
    {"_tn_detach_keep_tangents", f_detach_keep_tangents, METH_VARARGS, NULL},
    {"_tn_fw_enter", f_fw_enter, METH_O, NULL},
    {"_tn_fw_exit", f_fw_exit, METH_VARARGS, NULL},
    {"_tn_fw_set_enabled", f_fw_set_enabled, METH_O, NULL},
    {"_tn_fw_enabled", f_fw_enabled, METH_NOARGS, NULL},
    {"_tn_fw_jvp_depth", f_fw_jvp_depth, METH_NOARGS, NULL},
    {"_tn_fw_depth", f_fw_depth, METH_NOARGS, NULL},
    {"_tn_batched_alive", f_batched_alive, METH_NOARGS, NULL},
    {"_tn_vmap_batch_size", f_batch_size, METH_O, NULL},
    {"_tn_grad_increment_nesting", f_grad_increment, METH_NOARGS, NULL},
    {"_tn_grad_decrement_nesting", f_grad_decrement, METH_NOARGS, NULL},
    {"_tn_reaches_other_leaf", f_reaches_other_leaf, METH_VARARGS, NULL},
    {"_tn_vmap_increment_nesting", f_increment, METH_VARARGS, NULL},
    {"_tn_vmap_decrement_nesting", f_decrement, METH_NOARGS, NULL},
    {"_tn_vmap_depth", f_depth, METH_NOARGS, NULL},
    {"_tn_add_batch_dim", f_add_batch_dim, METH_VARARGS, NULL},
    {"_tn_remove_batch_dim", f_remove_batch_dim, METH_VARARGS, NULL},
    {"_tn_batch_info", f_batch_info, METH_O, NULL},
    {NULL},
};

int tn_py_init_functorch(PyObject *m) { return PyModule_AddFunctions(m, functorch_functions); }
