/* indexing.c — Tensor.__getitem__ / __setitem__ with upstream's rules: ints select,
 * slices slice, None unsqueezes, Ellipsis expands, booleans and tensors (or sequences,
 * converted to tensors) become advanced indices handled by aten::index / index_put_.
 * Basic indexing returns views. */
#include "binding.h"

#include <string.h>

#include "ops/dispatch.h"

/* Runs a one-result op; NULL with a Python exception on failure. */
static tn_tensor *call1(tn_op_id op, const tn_value *args) {
    tn_value r;
    tn_status st = tn_dispatch(op, args, &r);
    if (st != TN_OK) { tn_py_raise(st); return NULL; }
    return r.u.t;
}

/* The result of walking an index tuple: the basic-indexed view and, when there are
 * advanced indices, the index list for aten::index / index_put_ — one entry per index
 * position of the view (NULL where the view's dimension is taken whole). */
typedef struct {
    tn_tensor *result;                /* the basic-indexed view (owned) */
    int nadv;                         /* advanced index tensors among the entries */
    int nlist;                        /* entries in `list` */
    tn_tensor *list[TN_MAX_DIMS];     /* owned; NULL entries are None */
} tn_index_plan;

static void plan_free(tn_index_plan *p) {
    tn_tensor_release(p->result);
    for (int i = 0; i < p->nlist; i++) tn_tensor_release(p->list[i]);
}

static int is_int_like(PyObject *o) {
    if (PyBool_Check(o)) return 0;
    if (PyLong_Check(o)) return 1;
    if (tn_py_is_tensor(o)) return 0;
    /* numpy arrays define __index__ (it fails unless they hold one integer): as upstream,
     * a sequence is an advanced index, never an int */
    return PyIndex_Check(o) && !PySequence_Check(o);
}

/* a 0-dim integer tensor selects like an int, unless vmap batches it (then it is an
 * advanced index, one per batch element, as upstream's) */
static int is_int_scalar_tensor(PyObject *o) {
    return tn_py_is_tensor(o) && tn_py_tensor_get(o)->ndim == 0 && !tn_py_tensor_get(o)->batch &&
           tn_dtype_is_integral(tn_py_tensor_get(o)->dtype, false);
}

static PyObject *to_index_tensor(PyObject *o) {
    if (tn_py_is_tensor(o)) { Py_INCREF(o); return o; }
    PyObject *torch = PyImport_ImportModule("torch");
    if (!torch) return NULL;
    PyObject *t = PyObject_CallMethod(torch, "tensor", "O", o);
    Py_DECREF(torch);
    return t;
}

/* Dimensions of `self` an index entry consumes (None/Ellipsis/bool consume none). */
static int64_t consumed_dims(PyObject *o) {
    if (o == Py_None || o == Py_Ellipsis || PyBool_Check(o)) return 0;
    if (tn_py_is_tensor(o)) {
        tn_tensor *t = tn_py_tensor_get(o);
        return (t->dtype == TN_DTYPE_BOOL || t->dtype == TN_DTYPE_UINT8) ? t->ndim : 1;
    }
    return 1;
}

static int plan_push(tn_index_plan *p, tn_tensor *t) {
    if (p->nlist >= TN_MAX_DIMS) {
        PyErr_SetString(PyExc_IndexError, "too many indices for tensor");
        tn_tensor_release(t);
        return -1;
    }
    p->list[p->nlist++] = t;
    if (t) p->nadv++;
    return 0;
}

/* Builds the basic view and the advanced index list for `index` applied to `self`,
 * following upstream's applySlicing: ints select, slices slice, None unsqueezes,
 * Ellipsis skips, booleans unsqueeze and index with [0] (True) or [] (False), tensors
 * and sequences become advanced indices. */
static int plan_index(tn_tensor *self, PyObject *index, tn_index_plan *p) {
    memset(p, 0, sizeof *p);
    PyObject *tup;
    if (PyTuple_Check(index)) { Py_INCREF(index); tup = index; }
    else tup = PyTuple_Pack(1, index);
    if (!tup) return -1;
    Py_ssize_t n = PyTuple_Size(tup);
    int64_t specified = 0;
    for (Py_ssize_t i = 0; i < n; i++) specified += consumed_dims(PyTuple_GetItem(tup, i));
    if (specified > self->ndim) {
        Py_DECREF(tup);
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", self->ndim);
        return -1;
    }
    tn_tensor_retain(self);
    p->result = self;
    int dim = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GetItem(tup, i);
        tn_tensor *next = NULL;
        if (is_int_like(o) || is_int_scalar_tensor(o)) {
            PyObject *iv = PyNumber_Index(o);
            if (!iv) goto error;
            long long k = PyLong_AsLongLong(iv);
            Py_DECREF(iv);
            if (k == -1 && PyErr_Occurred()) goto error;
            if (p->result->ndim == 0) {
                PyErr_SetString(PyExc_IndexError, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
                goto error;
            }
            tn_value a[3] = {tn_value_tensor(p->result), tn_value_int(dim), tn_value_int(k)};
            next = call1(TN_OP_select_int, a);
            if (!next) goto error;
        } else if (PySlice_Check(o)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(o, &start, &stop, &step) < 0) goto error;
            tn_value a[5] = {tn_value_tensor(p->result), tn_value_int(dim), tn_value_int(start), tn_value_int(stop),
                             tn_value_int(step)};
            next = call1(TN_OP_slice_Tensor, a);
            if (!next || plan_push(p, NULL) < 0) goto error_next;
            dim++;
        } else if (o == Py_None) {
            tn_value a[2] = {tn_value_tensor(p->result), tn_value_int(dim)};
            next = call1(TN_OP_unsqueeze, a);
            if (!next || plan_push(p, NULL) < 0) goto error_next;
            dim++;
        } else if (o == Py_Ellipsis) {
            int64_t rest = 0;
            for (Py_ssize_t j = i + 1; j < n; j++) rest += consumed_dims(PyTuple_GetItem(tup, j));
            int64_t skip = p->result->ndim - dim - rest;
            for (int64_t k = 0; k < skip; k++)
                if (plan_push(p, NULL) < 0) goto error;
            dim += (int)skip;
            continue;
        } else if (PyBool_Check(o)) {
            tn_value a[2] = {tn_value_tensor(p->result), tn_value_int(dim)};
            next = call1(TN_OP_unsqueeze, a);
            if (!next) goto error;
            int64_t len = o == Py_True ? 1 : 0;
            tn_tensor *idx;
            tn_status st = tn_tensor_zeros(1, &len, TN_DTYPE_INT64, tn_device_cpu(), &idx);
            if (st != TN_OK) { tn_py_raise(st); goto error_next; }
            if (plan_push(p, idx) < 0) goto error_next;
            dim++;
        } else {
            PyObject *t = to_index_tensor(o);
            if (!t) goto error;
            tn_tensor *it = tn_py_tensor_get(t);
            tn_tensor_retain(it);
            int64_t covers = (it->dtype == TN_DTYPE_BOOL || it->dtype == TN_DTYPE_UINT8) ? it->ndim : 1;
            Py_DECREF(t);
            if (plan_push(p, it) < 0) goto error;
            dim += (int)covers;
            continue;
        }
        tn_tensor_release(p->result);
        p->result = next;
        continue;
    error_next:
        tn_tensor_release(next);
        goto error;
    }
    Py_DECREF(tup);
    return 0;
error:
    Py_DECREF(tup);
    plan_free(p);
    memset(p, 0, sizeof *p);
    return -1;
}

PyObject *tn_py_tensor_getitem(PyObject *self, PyObject *index) {
    tn_tensor *t = tn_py_tensor_get(self);
    if (index == Py_Ellipsis || (PySlice_Check(index) && 0)) {
        tn_value a[1] = {tn_value_tensor(t)};
        tn_tensor *r = call1(TN_OP_alias, a);
        return r ? tn_py_tensor_wrap(r) : NULL;
    }
    tn_index_plan p;
    if (plan_index(t, index, &p) < 0) return NULL;
    tn_tensor *out;
    if (p.nadv == 0) {
        out = p.result;
        if (out == t) {
            tn_value a[1] = {tn_value_tensor(t)};
            out = call1(TN_OP_alias, a);
            if (!out) { plan_free(&p); return NULL; }
        } else {
            p.result = NULL;
        }
    } else {
        tn_value a[2] = {tn_value_tensor(p.result), {.tag = TN_V_TENSORLIST}};
        a[1].u.tlist.data = p.list;
        a[1].u.tlist.n = p.nlist;
        out = call1(TN_OP_index_Tensor, a);
    }
    plan_free(&p);
    return out ? tn_py_tensor_wrap(out) : NULL;
}

int tn_py_tensor_setitem(PyObject *self, PyObject *index, PyObject *value) {
    if (!value) { PyErr_SetString(PyExc_TypeError, "Tensor does not support deleting items"); return -1; }
    tn_tensor *t = tn_py_tensor_get(self);
    tn_index_plan p;
    if (plan_index(t, index, &p) < 0) return -1;
    PyObject *vt = NULL;
    tn_value v;
    int rc = -1;
    if (tn_py_is_tensor(value)) {
        v = tn_value_tensor(tn_py_tensor_get(value));
    } else {
        /* Python numbers become 0-dim tensors of the destination dtype. */
        PyObject *torch = PyImport_ImportModule("torch");
        if (!torch) goto done;
        PyObject *fn = PyObject_GetAttrString(torch, "tensor");
        Py_DECREF(torch);
        PyObject *args = PyTuple_Pack(1, value);
        PyObject *kw = Py_BuildValue("{s:O}", "dtype", tn_py_dtype_object(t->dtype));
        vt = fn && args && kw ? PyObject_Call(fn, args, kw) : NULL;
        Py_XDECREF(fn);
        Py_XDECREF(args);
        Py_XDECREF(kw);
        if (!vt) goto done;
        v = tn_value_tensor(tn_py_tensor_get(vt));
    }
    tn_tensor *r;
    if (p.nadv == 0) {
        tn_value a[3] = {tn_value_tensor(p.result), v, tn_value_bool(false)};
        r = call1(TN_OP_copy_, a);
    } else {
        tn_value a[4] = {tn_value_tensor(p.result), {.tag = TN_V_TENSORLIST}, v, tn_value_bool(false)};
        a[1].u.tlist.data = p.list;
        a[1].u.tlist.n = p.nlist;
        r = call1(TN_OP_index_put_, a);
    }
    if (r) { tn_tensor_release(r); rc = 0; }
done:
    Py_XDECREF(vt);
    plan_free(&p);
    return rc;
}
