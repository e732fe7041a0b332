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

typedef struct {
    tn_tensor *result;                 /* the basic-indexed view (owned) */
    int nadv;                          /* number of advanced index tensors */
    tn_tensor *adv[TN_MAX_DIMS];       /* per result dim: index tensor or NULL (owned) */
    int adv_ndim;                      /* dims covered by the index list */
    PyObject *keep;                    /* Python tensors created from sequences (owned list) */
} tn_index_plan;

static void plan_free(tn_index_plan *p) {
    tn_tensor_release(p->result);
    for (int i = 0; i < TN_MAX_DIMS; i++) tn_tensor_release(p->adv[i]);
    Py_XDECREF(p->keep);
}

static int is_int_like(PyObject *o) {
    if (PyBool_Check(o)) return 0;
    if (PyLong_Check(o)) return 1;
    if (tn_py_is_tensor(o)) return 0;
    return PyIndex_Check(o);
}

static PyObject *to_index_tensor(PyObject *o, tn_index_plan *p) {
    if (tn_py_is_tensor(o)) { Py_INCREF(o); return o; }
    PyObject *torch = PyImport_ImportModule("torch");
    if (!torch) return NULL;
    PyObject *t = PyObject_CallMethod(torch, "tensor", "O", o);
    Py_DECREF(torch);
    return t;
}

/* Builds the basic view and the advanced index list for `index` applied to `self`. */
static int plan_index(tn_tensor *self, PyObject *index, tn_index_plan *p) {
    memset(p, 0, sizeof *p);
    PyObject *tup;
    if (PyTuple_Check(index)) { Py_INCREF(index); tup = index; }
    else tup = PyTuple_Pack(1, index);
    if (!tup) return -1;
    Py_ssize_t n = PyTuple_Size(tup);
    /* how many dims the index consumes (for Ellipsis) */
    int64_t specified = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GetItem(tup, i);
        if (o == Py_None || o == Py_Ellipsis || PyBool_Check(o)) continue;
        if (tn_py_is_tensor(o)) {
            tn_tensor *t = tn_py_tensor_get(o);
            specified += (t->dtype == TN_DTYPE_BOOL || t->dtype == TN_DTYPE_UINT8) ? (t->ndim ? t->ndim : 0) : 1;
        } else specified++;
    }
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
        if (is_int_like(o) || (tn_py_is_tensor(o) && tn_py_tensor_get(o)->ndim == 0 &&
                               tn_dtype_is_integral(tn_py_tensor_get(o)->dtype, false))) {
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
        } else if (PySlice_Check(o)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(o, &start, &stop, &step) < 0) goto error;
            tn_value a[5] = {tn_value_tensor(p->result), tn_value_int(dim), tn_value_int(start), tn_value_int(stop),
                             tn_value_int(step)};
            next = call1(TN_OP_slice_Tensor, a);
            dim++;
        } else if (o == Py_None) {
            tn_value a[2] = {tn_value_tensor(p->result), tn_value_int(dim)};
            next = call1(TN_OP_unsqueeze, a);
            dim++;
        } else if (o == Py_Ellipsis) {
            dim += (int)(p->result->ndim - dim - (specified - 0));
            specified = 0; /* consumed */
            /* recompute remaining specified after ellipsis */
            for (Py_ssize_t j = i + 1; j < n; j++) {
                PyObject *q = PyTuple_GetItem(tup, j);
                if (q == Py_None || q == Py_Ellipsis || PyBool_Check(q)) continue;
                if (tn_py_is_tensor(q)) {
                    tn_tensor *t = tn_py_tensor_get(q);
                    specified += (t->dtype == TN_DTYPE_BOOL || t->dtype == TN_DTYPE_UINT8) ? t->ndim : 1;
                } else specified++;
            }
            dim = p->result->ndim - (int)specified;
            continue;
        } else if (PyBool_Check(o)) {
            /* x[True] == x.unsqueeze(dim)[tensor([True])] */
            tn_value a[2] = {tn_value_tensor(p->result), tn_value_int(dim)};
            next = call1(TN_OP_unsqueeze, a);
            if (!next) goto error;
            tn_tensor_release(p->result);
            p->result = next;
            next = NULL;
            PyObject *t = to_index_tensor(o, p);
            if (!t) goto error;
            tn_tensor_retain(tn_py_tensor_get(t));
            p->adv[dim] = tn_py_tensor_get(t);
            Py_DECREF(t);
            p->nadv++;
            dim++;
            continue;
        } else {
            PyObject *t = to_index_tensor(o, p);
            if (!t) goto error;
            tn_tensor *it = tn_py_tensor_get(t);
            if (dim >= TN_MAX_DIMS) { Py_DECREF(t); PyErr_SetString(PyExc_IndexError, "too many indices"); goto error; }
            tn_tensor_retain(it);
            p->adv[dim] = it;
            p->nadv++;
            dim += (it->dtype == TN_DTYPE_BOOL || it->dtype == TN_DTYPE_UINT8) ? (it->ndim ? it->ndim : 1) : 1;
            Py_DECREF(t);
            continue;
        }
        if (!next) goto error;
        tn_tensor_release(p->result);
        p->result = next;
        if (o != Py_None && !PySlice_Check(o)) specified--;
        else if (PySlice_Check(o)) specified--;
    }
    p->adv_ndim = dim;
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
        a[1].u.tlist.data = p.adv;
        a[1].u.tlist.n = p.adv_ndim;
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
        vt = PyObject_CallMethod(torch, "tensor", "OO", value, tn_py_dtype_object(t->dtype));
        Py_DECREF(torch);
        if (!vt) goto done;
        v = tn_value_tensor(tn_py_tensor_get(vt));
    }
    tn_tensor *r;
    if (p.nadv == 0) {
        tn_value a[3] = {tn_value_tensor(p.result), v, tn_value_bool(false)};
        r = call1(TN_OP_copy_, a);
    } else {
        tn_value a[4] = {tn_value_tensor(p.result), {.tag = TN_V_TENSORLIST}, v, tn_value_bool(false)};
        a[1].u.tlist.data = p.adv;
        a[1].u.tlist.n = p.adv_ndim;
        r = call1(TN_OP_index_put_, a);
    }
    if (r) { tn_tensor_release(r); rc = 0; }
done:
    Py_XDECREF(vt);
    plan_free(&p);
    return rc;
}
