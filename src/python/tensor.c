/* tensor.c — the TensorBase type: Python object <-> tn_tensor, the getset members and the
 * hand-written methods upstream also writes by hand (size, stride, item, tolist, to, ...).
 * Generated operator methods are added by functions*.c. */
#include "binding.h"
#include "ops/vmap.h"

#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "core/scalar.h"
#include "functions.h"
#include "ops/dispatch.h"
#include "ops/graph.h"

static PyTypeObject *tn_tensor_impl_type; /* C type carrying the layout */
static PyObject *tn_tensor_base;          /* torch._C.TensorBase (_TensorMeta instance) */
static PyObject *tn_tensor_class;         /* torch.Tensor after _initExtension */

PyObject *tn_py_tensor_class(void) { return tn_tensor_class ? tn_tensor_class : tn_tensor_base; }

int tn_py_is_tensor(PyObject *o) { return PyObject_TypeCheck(o, tn_tensor_impl_type); }
tn_tensor *tn_py_tensor_get(PyObject *o) { return ((TNTensorObject *)o)->t; }

/* Instance of `cls` (a TensorBase subclass) owning t (reference stolen). */
static PyObject *tensor_alloc(PyTypeObject *cls, tn_tensor *t) {
    allocfunc alloc = (allocfunc)PyType_GetSlot(cls, Py_tp_alloc);
    PyObject *o = alloc(cls, 0);
    if (!o) { tn_tensor_release(t); return NULL; }
    ((TNTensorObject *)o)->t = t;
    t->pyobj = o;
    return o;
}

PyObject *tn_py_tensor_wrap(tn_tensor *t) {
    if (!t) return tn_py_raise(TN_ERR_RUNTIME);
    if (t->pyobj) {
        PyObject *o = t->pyobj;
        Py_INCREF(o);
        tn_tensor_release(t);
        return o;
    }
    return tensor_alloc((PyTypeObject *)tn_py_tensor_class(), t);
}

static void tensor_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    tn_tensor *t = ((TNTensorObject *)self)->t;
    if (t) {
        if (t->pyobj == self) t->pyobj = NULL;
        tn_tensor_release(t);
    }
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

#define T(self) (((TNTensorObject *)(self))->t)
#define Py_XSETREF_COMPAT(dst, src) do { PyObject *old_ = (dst); (dst) = (src); Py_XDECREF(old_); } while (0)

/* ---- getset members ------------------------------------------------------------------ */

static PyObject *get_shape(PyObject *self, void *c) { return tn_py_size_new(T(self)->ndim, T(self)->sizes); }
static PyObject *get_dtype(PyObject *self, void *c) {
    PyObject *d = tn_py_dtype_object(T(self)->dtype);
    Py_INCREF(d);
    return d;
}
static PyObject *get_device(PyObject *self, void *c) { return tn_py_device_new(tn_tensor_device(T(self))); }
static PyObject *get_ndim(PyObject *self, void *c) { return PyLong_FromLong(T(self)->ndim); }
static PyObject *get_layout(PyObject *self, void *c) {
    PyObject *l = tn_py_layout_object(0);
    Py_INCREF(l);
    return l;
}
/* a batched tensor's innermost value (the tensor itself when not batched) */
static tn_tensor *physical(tn_tensor *t) {
    while (t->batch) t = t->batch->value;
    return t;
}
static PyObject *get_requires_grad(PyObject *self, void *c) {
    tn_tensor *t = T(self);
    if (t->batch) {
        /* batching hides autograd outside torch.func.grad, except for results recorded
         * under a grad level that has exited (vjp's outputs under vmap: jacrev under vmap,
         * jacfwd(jacrev) = hessian), which upstream's dead grad wrappers still report */
        tn_tensor *p = physical(t);
        if (!tn_requires_grad(p)) Py_RETURN_FALSE;
        if (tn_func_grad_depth() > 0) Py_RETURN_TRUE;
        tn_autograd_meta *m = tn_autograd_meta_peek(p);
        return PyBool_FromLong(m && m->grad_fn && m->func_grad);
    }
    return PyBool_FromLong(tn_requires_grad(t));
}
static int set_requires_grad(PyObject *self, PyObject *v, void *c) {
    if (!v) { PyErr_SetString(PyExc_TypeError, "cannot delete requires_grad"); return -1; }
    if (T(self)->batch && tn_func_grad_depth() == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "You are attempting to call Tensor.requires_grad_() (or perhaps using torch.autograd.functional.* "
                        "APIs) inside of a function being transformed by a functorch transform. This is unsupported, "
                        "please attempt to use the functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call "
                        "requires_grad_() outside of a function being transformed instead.");
        return -1;
    }
    int b = PyObject_IsTrue(v);
    if (b < 0) return -1;
    tn_tensor *t = physical(T(self)); /* under torch.func.grad a batched tensor's value */
    if (!tn_is_leaf(t)) {
        if (b) return 0;
        PyErr_SetString(PyExc_RuntimeError, "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                            "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
        return -1;
    }
    if (b && !(tn_dtype_is_floating(t->dtype) || tn_dtype_is_complex(t->dtype))) {
        PyErr_SetString(PyExc_RuntimeError, "only Tensors of floating point dtype can require gradients");
        return -1;
    }
    if (b) t->flags |= TN_TENSOR_REQUIRES_GRAD;
    else t->flags &= ~TN_TENSOR_REQUIRES_GRAD;
    return 0;
}
PyObject *tn_py_node_wrap(tn_node *n);
static PyObject *get_grad_fn(PyObject *self, void *c) {
    tn_node *n = tn_grad_fn(T(self));
    if (n && n->kind == TN_NODE_PYTHON && n->py) { Py_INCREF((PyObject *)n->py); return n->py; }
    return tn_py_node_wrap(n);
}
static PyObject *get_is_leaf(PyObject *self, void *c) { return PyBool_FromLong(tn_is_leaf(T(self))); }
static PyObject *get_retains_grad(PyObject *self, void *c) {
    tn_autograd_meta *m = tn_autograd_meta_peek(T(self));
    return PyBool_FromLong(m && m->retains_grad && m->grad_fn);
}
static PyObject *get_output_nr(PyObject *self, void *c) {
    tn_autograd_meta *m = tn_autograd_meta_peek(T(self));
    return PyLong_FromLong(m && m->grad_fn ? m->output_nr : 0);
}
static PyObject *get_base(PyObject *self, void *c) {
    tn_autograd_meta *m = tn_autograd_meta_peek(T(self));
    if (!m || !m->view_base) Py_RETURN_NONE;
    tn_tensor_retain(m->view_base);
    return tn_py_tensor_wrap(m->view_base);
}
static PyObject *get_post_acc_hooks(PyObject *self, void *c) {
    tn_autograd_meta *m = tn_autograd_meta_peek(T(self));
    PyObject *h = m ? m->py_post_acc_hooks : NULL;
    if (!h) Py_RETURN_NONE;
    Py_INCREF(h);
    return h;
}
static int set_post_acc_hooks(PyObject *self, PyObject *v, void *c) {
    tn_autograd_meta *m = tn_autograd_meta_get(T(self));
    if (!m) { PyErr_NoMemory(); return -1; }
    if (v == Py_None) v = NULL;
    Py_XINCREF(v);
    PyObject *old = m->py_post_acc_hooks;
    m->py_post_acc_hooks = v;
    Py_XDECREF(old);
    return 0;
}
static PyObject *get_false(PyObject *self, void *c) { Py_RETURN_FALSE; }
static PyObject *get_none(PyObject *self, void *c) { Py_RETURN_NONE; }
static PyObject *get_is_cpu(PyObject *self, void *c) { return PyBool_FromLong(tn_tensor_device(T(self)).type == TN_DEVICE_CPU); }
static PyObject *get_is_meta(PyObject *self, void *c) { return PyBool_FromLong(tn_tensor_is_meta(T(self))); }
static PyObject *get_version(PyObject *self, void *c) { return PyLong_FromLong(atomic_load(&T(self)->storage->version)); }
static PyObject *get_itemsize(PyObject *self, void *c) { return PyLong_FromLong(tn_dtype_itemsize(T(self)->dtype)); }
static PyObject *get_nbytes(PyObject *self, void *c) {
    return PyLong_FromLongLong(tn_tensor_numel(T(self)) * tn_dtype_itemsize(T(self)->dtype));
}
/* .data: a tensor over the same memory, outside autograd and with a version counter of
 * its own (upstream: writes through .data are invisible to saved-tensor checks; gradcheck
 * perturbs inputs that way). It views a storage that borrows this one's memory. */
static void release_parent_storage(void *ctx, void *data) { tn_storage_release((tn_storage *)ctx); }
static PyObject *get_data(PyObject *self, void *c) {
    tn_tensor *t = T(self);
    if (t->batch) { /* batched (vmap): an alias batched over its value's */
        tn_tensor *a = tn_tensor_alias(t);
        return a ? tn_py_tensor_wrap(a) : PyErr_NoMemory();
    }
    tn_storage *s = t->storage;
    tn_storage_retain(s);
    tn_storage *b = tn_storage_borrow(s->data, s->nbytes, s->device, release_parent_storage, s);
    if (!b) { tn_storage_release(s); return PyErr_NoMemory(); }
    tn_tensor *a = tn_tensor_new_view(b, t->offset, t->ndim, t->sizes, t->strides, t->dtype);
    tn_storage_release(b);
    if (!a) return PyErr_NoMemory();
    return tn_py_tensor_wrap(a);
}
static int set_data(PyObject *self, PyObject *v, void *c) {
    if (!v || !tn_py_is_tensor(v)) {
        PyErr_SetString(PyExc_TypeError, "Variable data has to be a tensor, but got object");
        return -1;
    }
    tn_tensor *dst = T(self), *src = tn_py_tensor_get(v);
    tn_storage_retain(src->storage);
    tn_storage_release(dst->storage);
    dst->storage = src->storage;
    dst->offset = src->offset;
    dst->ndim = src->ndim;
    dst->dtype = src->dtype;
    memcpy(dst->sizes, src->sizes, sizeof dst->sizes);
    memcpy(dst->strides, src->strides, sizeof dst->strides);
    return 0;
}
static PyObject *get_grad(PyObject *self, void *c) {
    tn_autograd_meta *m = tn_autograd_meta_peek(T(self));
    if (!m || !m->grad) Py_RETURN_NONE;
    tn_tensor_retain(m->grad);
    return tn_py_tensor_wrap(m->grad);
}
static int set_grad(PyObject *self, PyObject *v, void *c) {
    if (!v || v == Py_None) v = NULL;
    if (v && !tn_py_is_tensor(v)) {
        PyErr_SetString(PyExc_TypeError, "assigned grad expected to be a Tensor or None but got grad of type object");
        return -1;
    }
    tn_tensor *t = T(self), *g = v ? tn_py_tensor_get(v) : NULL;
    if (g) {
        if (g->dtype != t->dtype) {
            PyErr_SetString(PyExc_RuntimeError, "assigned grad has data of a different type");
            return -1;
        }
        if (g->ndim != t->ndim || memcmp(g->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim)) {
            PyErr_SetString(PyExc_RuntimeError, "assigned grad has data of a different size");
            return -1;
        }
    }
    tn_autograd_meta *m = g ? tn_autograd_meta_get(t) : tn_autograd_meta_peek(t);
    if (!m) {
        if (g) { PyErr_NoMemory(); return -1; }
        return 0;
    }
    if (g) tn_tensor_retain(g);
    tn_tensor_release(m->grad);
    m->grad = g;
    return 0;
}

/* _backward_hooks: the tensor's hook dict. On a leaf the engine runs it before
 * accumulating (torch/_tensor.py's register_hook fills it; torch.load assigns {}). */
static PyObject *get_backward_hooks(PyObject *self, void *c) {
    tn_autograd_meta *m = tn_autograd_meta_peek(T(self));
    PyObject *h = m ? m->py_hooks : NULL;
    if (!h) Py_RETURN_NONE;
    Py_INCREF(h);
    return h;
}
static int set_backward_hooks(PyObject *self, PyObject *v, void *c) {
    if (!v) {
        PyErr_SetString(PyExc_TypeError, "Deletion of _backwards_hooks not allowed!");
        return -1;
    }
    tn_autograd_meta *m = tn_autograd_meta_get(T(self));
    if (!m) { PyErr_NoMemory(); return -1; }
    if (v == Py_None) v = NULL;
    Py_XINCREF(v);
    PyObject *old = m->py_hooks;
    m->py_hooks = v;
    Py_XDECREF(old);
    return 0;
}

static PyObject *op_getter(PyObject *self, tn_op_id op) {
    tn_value a[1] = {tn_value_tensor(T(self))}, r;
    tn_status st = tn_dispatch(op, a, &r);
    if (st != TN_OK) return tn_py_raise(st);
    return tn_py_tensor_wrap(r.u.t);
}
static PyObject *get_T(PyObject *self, void *c) { return op_getter(self, TN_OP_numpy_T); }
static PyObject *get_mT(PyObject *self, void *c) { return op_getter(self, TN_OP_mT); }
static PyObject *get_mH(PyObject *self, void *c) { return op_getter(self, TN_OP_mH); }
static PyObject *get_H(PyObject *self, void *c) {
    if (T(self)->ndim != 2 && T(self)->ndim != 0) {
        PyErr_Format(PyExc_RuntimeError, "tensor.H is only supported on matrices (2-D tensors). Got %d-D tensor.", T(self)->ndim);
        return NULL;
    }
    return op_getter(self, TN_OP_adjoint);
}
static PyObject *get_real(PyObject *self, void *c) { return op_getter(self, TN_OP_real); }
static PyObject *get_imag(PyObject *self, void *c) { return op_getter(self, TN_OP_imag); }
static PyObject *get_cdata(PyObject *self, void *c) { return PyLong_FromVoidPtr(T(self)); }

static PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, NULL, NULL, NULL},
    {"dtype", get_dtype, NULL, NULL, NULL},
    {"device", get_device, NULL, NULL, NULL},
    {"ndim", get_ndim, NULL, NULL, NULL},
    {"layout", get_layout, NULL, NULL, NULL},
    {"requires_grad", get_requires_grad, set_requires_grad, NULL, NULL},
    {"is_leaf", get_is_leaf, NULL, NULL, NULL},
    {"grad_fn", get_grad_fn, NULL, NULL, NULL},
    {"_grad_fn", get_grad_fn, NULL, NULL, NULL},
    {"grad", get_grad, set_grad, NULL, NULL},
    {"_grad", get_grad, set_grad, NULL, NULL},
    {"retains_grad", get_retains_grad, NULL, NULL, NULL},
    {"grad_dtype", get_none, NULL, NULL, NULL},
    {"_post_accumulate_grad_hooks", get_post_acc_hooks, set_post_acc_hooks, NULL, NULL},
    {"_has_symbolic_sizes_strides", get_false, NULL, NULL, NULL},
    {"_python_dispatch", get_false, NULL, NULL, NULL},
    {"name", get_none, NULL, NULL, NULL},
    {"volatile", get_false, NULL, NULL, NULL},
    {"T", get_T, NULL, NULL, NULL},
    {"mT", get_mT, NULL, NULL, NULL},
    {"H", get_H, NULL, NULL, NULL},
    {"mH", get_mH, NULL, NULL, NULL},
    {"real", get_real, NULL, NULL, NULL},
    {"imag", get_imag, NULL, NULL, NULL},
    {"_backward_hooks", get_backward_hooks, set_backward_hooks, NULL, NULL},
    {"_base", get_base, NULL, NULL, NULL},
    {"_version", get_version, NULL, NULL, NULL},
    {"output_nr", get_output_nr, NULL, NULL, NULL},
    {"data", get_data, set_data, NULL, NULL},
    {"itemsize", get_itemsize, NULL, NULL, NULL},
    {"nbytes", get_nbytes, NULL, NULL, NULL},
    {"is_cpu", get_is_cpu, NULL, NULL, NULL},
    {"is_meta", get_is_meta, NULL, NULL, NULL},
    {"is_cuda", get_false, NULL, NULL, NULL},
    {"is_xpu", get_false, NULL, NULL, NULL},
    {"is_mps", get_false, NULL, NULL, NULL},
    {"is_mtia", get_false, NULL, NULL, NULL},
    {"is_ipu", get_false, NULL, NULL, NULL},
    {"is_xla", get_false, NULL, NULL, NULL},
    {"is_maia", get_false, NULL, NULL, NULL},
    {"is_vulkan", get_false, NULL, NULL, NULL},
    {"is_sparse", get_false, NULL, NULL, NULL},
    {"is_sparse_csr", get_false, NULL, NULL, NULL},
    {"is_mkldnn", get_false, NULL, NULL, NULL},
    {"is_quantized", get_false, NULL, NULL, NULL},
    {"is_nested", get_false, NULL, NULL, NULL},
    {"_cdata", get_cdata, NULL, NULL, NULL},
    {NULL},
};

/* ---- hand-written methods ------------------------------------------------------------ */

static int parse_dim(PyObject *o, int ndim, int *dim) {
    long long d = PyLong_AsLongLong(o);
    if (d == -1 && PyErr_Occurred()) return -1;
    tn_status st = tn_wrap_dim(d, ndim, dim);
    if (st != TN_OK) { tn_py_raise(st); return -1; }
    return 0;
}

static PyObject *m_size(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"dim", NULL};
    PyObject *dim = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:size", kwlist, &dim)) return NULL;
    tn_tensor *t = T(self);
    if (dim == Py_None) return tn_py_size_new(t->ndim, t->sizes);
    int d;
    if (parse_dim(dim, t->ndim, &d) < 0) return NULL;
    return PyLong_FromLongLong(t->ndim ? t->sizes[d] : 1);
}

static PyObject *m_stride(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"dim", NULL};
    PyObject *dim = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:stride", kwlist, &dim)) return NULL;
    tn_tensor *t = T(self);
    if (dim == Py_None) {
        PyObject *r = PyTuple_New(t->ndim);
        for (int i = 0; r && i < t->ndim; i++) PyTuple_SetItem(r, i, PyLong_FromLongLong(t->strides[i]));
        return r;
    }
    int d;
    if (parse_dim(dim, t->ndim, &d) < 0) return NULL;
    return PyLong_FromLongLong(t->ndim ? t->strides[d] : 1);
}

static PyObject *m_dim(PyObject *self, PyObject *u) { return PyLong_FromLong(T(self)->ndim); }
static PyObject *m_numel(PyObject *self, PyObject *u) { return PyLong_FromLongLong(tn_tensor_numel(T(self))); }
static PyObject *m_storage_offset(PyObject *self, PyObject *u) { return PyLong_FromLongLong(T(self)->offset); }
static PyObject *m_element_size(PyObject *self, PyObject *u) { return PyLong_FromLong(tn_dtype_itemsize(T(self)->dtype)); }
static PyObject *m_data_ptr(PyObject *self, PyObject *u) { return PyLong_FromVoidPtr(tn_tensor_data(T(self))); }
static PyObject *m_get_device(PyObject *self, PyObject *u) {
    tn_device d = tn_tensor_device(T(self));
    return PyLong_FromLong(d.type == TN_DEVICE_CPU ? -1 : d.index);
}

static PyObject *m_is_contiguous(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"memory_format", NULL};
    PyObject *mf = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:is_contiguous", kwlist, &mf)) return NULL;
    if (mf && tn_py_is_memory_format(mf) && tn_py_memory_format_get(mf) >= 2) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "is_contiguous(memory_format=channels_last) is not implemented by torchnative");
        return NULL;
    }
    return PyBool_FromLong(tn_tensor_is_contiguous(T(self)));
}

static PyObject *value_to_py(const tn_value *v) {
    switch (v->tag) {
    case TN_V_INT: return PyLong_FromLongLong(v->u.i);
    case TN_V_UINT: return PyLong_FromUnsignedLongLong(v->u.u);
    case TN_V_DOUBLE: return PyFloat_FromDouble(v->u.d);
    case TN_V_BOOL: return PyBool_FromLong(v->u.b);
    case TN_V_COMPLEX: return PyComplex_FromDoubles(v->u.c.re, v->u.c.im);
    default: PyErr_SetString(PyExc_SystemError, "unexpected scalar"); return NULL;
    }
}

static PyObject *element_at(tn_tensor *t, int64_t offset_elems) {
    tn_value v;
    tn_status st = tn_scalar_load(t->dtype, (char *)tn_tensor_data(t) + offset_elems * tn_dtype_itemsize(t->dtype), &v);
    if (st != TN_OK) return tn_py_raise(st);
    /* the conjugate / negative bits (ops/mathbits.h) read through */
    if ((t->flags & TN_TENSOR_CONJ) && v.tag == TN_V_COMPLEX) v.u.c.im = -v.u.c.im;
    if (t->flags & TN_TENSOR_NEG) {
        if (v.tag == TN_V_COMPLEX) { v.u.c.re = -v.u.c.re; v.u.c.im = -v.u.c.im; }
        else if (v.tag == TN_V_DOUBLE) v.u.d = -v.u.d;
        else if (v.tag == TN_V_INT) v.u.i = (int64_t)(0 - (uint64_t)v.u.i);
        else if (v.tag == TN_V_BOOL) { /* as resolving it: upstream's neg kernel has no Bool loop */
            PyErr_SetString(PyExc_NotImplementedError, "\"neg_cpu\" not implemented for 'Bool'");
            return NULL;
        }
    }
    return value_to_py(&v);
}

static PyObject *m_item(PyObject *self, PyObject *u) {
    tn_tensor *t = T(self);
    int64_t n = tn_tensor_numel(t);
    if (n != 1) {
        PyErr_Format(PyExc_RuntimeError, "a Tensor with %lld elements cannot be converted to Scalar", (long long)n);
        return NULL;
    }
    if (t->batch) {
        PyErr_SetString(PyExc_RuntimeError, TN_MSG_VMAP_ITEM);
        return NULL;
    }
    if (tn_tensor_is_meta(t)) {
        PyErr_SetString(PyExc_RuntimeError, "Tensor.item() cannot be called on meta tensors");
        return NULL;
    }
    tn_graph_note_host_read("a tensor was read into Python (item() or a Python number)");
    return element_at(t, 0);
}

static PyObject *tolist_rec(tn_tensor *t, int dim, int64_t off) {
    if (dim == t->ndim) return element_at(t, off);
    PyObject *l = PyList_New(t->sizes[dim]);
    for (int64_t i = 0; l && i < t->sizes[dim]; i++) {
        PyObject *e = tolist_rec(t, dim + 1, off + i * t->strides[dim]);
        if (!e) { Py_DECREF(l); return NULL; }
        PyList_SetItem(l, i, e);
    }
    return l;
}

static PyObject *m_tolist(PyObject *self, PyObject *u) {
    if (tn_tensor_is_meta(T(self))) {
        PyErr_SetString(PyExc_NotImplementedError, "Cannot copy out of meta tensor; no data!");
        return NULL;
    }
    tn_graph_note_host_read("a tensor was read into Python (tolist())");
    return tolist_rec(T(self), 0, 0);
}

static PyObject *scalar_conv(PyObject *self, PyObject *(*conv)(PyObject *), const char *what) {
    tn_tensor *t = T(self);
    if (tn_tensor_numel(t) != 1) {
        PyErr_Format(PyExc_RuntimeError, "a Tensor with %lld elements cannot be converted to Scalar",
                     (long long)tn_tensor_numel(t));
        return NULL;
    }
    PyObject *v = m_item(self, NULL);
    if (!v || !conv) return v;
    PyObject *r = conv(v);
    Py_DECREF(v);
    return r;
}
static PyObject *m_float(PyObject *self) { return scalar_conv(self, PyNumber_Float, "float"); }
static PyObject *m_int(PyObject *self) {
    PyObject *v = scalar_conv(self, NULL, "int");
    if (!v) return NULL;
    PyObject *r = PyNumber_Long(v);
    Py_DECREF(v);
    if (r && T(self)->dtype == TN_DTYPE_UINT64) { /* upstream reads item<int64_t>(), checked */
        int overflow = 0;
        PyLong_AsLongLongAndOverflow(r, &overflow);
        if (overflow) {
            Py_DECREF(r);
            PyErr_SetString(PyExc_RuntimeError, "value cannot be converted to type int64_t without overflow");
            return NULL;
        }
    }
    return r;
}
static PyObject *m_index(PyObject *self) {
    tn_tensor *t = T(self);
    if (!tn_dtype_is_integral(t->dtype, true) || tn_tensor_numel(t) != 1) {
        PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be converted to an index");
        return NULL;
    }
    return m_int(self);
}
static int m_bool(PyObject *self) {
    tn_tensor *t = T(self);
    int64_t n = tn_tensor_numel(t);
    if (n != 1) {
        PyErr_Format(PyExc_RuntimeError, "Boolean value of Tensor with %s values is ambiguous",
                     n == 0 ? "no" : "more than one");
        return -1;
    }
    PyObject *v = m_item(self, NULL);
    if (!v) return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

static PyObject *m_requires_grad_(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"requires_grad", NULL};
    PyObject *flag = Py_True;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:requires_grad_", kwlist, &flag)) return NULL;
    if (set_requires_grad(self, flag, NULL) < 0) return NULL;
    Py_INCREF(self);
    return self;
}

/* _make_subclass(cls, data, require_grad=False, ...): an instance of cls sharing data's
 * storage and geometry (upstream's spelling of the keyword is `require_grad`). */
static PyObject *m_make_subclass(PyObject *unused, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"cls", "data", "require_grad", "dispatch_sizes_strides_policy",
                             "dispatch_device", "dispatch_layout", "_extra_dispatch_keys",
                             "storage_size", NULL};
    PyObject *cls, *data, *rg = Py_False, *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOOOOO:_make_subclass", kwlist, &cls, &data, &rg, &a, &b,
                                     &c, &d, &e))
        return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, tn_tensor_impl_type)) {
        PyErr_SetString(PyExc_TypeError, "cls must be a type (got object)");
        return NULL;
    }
    if (!tn_py_is_tensor(data)) {
        PyErr_SetString(PyExc_TypeError, "_make_subclass(): argument 'data' must be Tensor");
        return NULL;
    }
    tn_tensor *alias = tn_tensor_alias(tn_py_tensor_get(data));
    if (!alias) return PyErr_NoMemory();
    PyObject *o = tensor_alloc((PyTypeObject *)cls, alias);
    if (!o) return NULL;
    if (PyObject_IsTrue(rg) && set_requires_grad(o, Py_True, NULL) < 0) { Py_DECREF(o); return NULL; }
    return o;
}

static PyObject *m_is_view(PyObject *self, PyObject *u) {
    tn_autograd_meta *m = tn_autograd_meta_peek(T(self));
    return PyBool_FromLong(m && m->view_base);
}

/* retain_grad(): a non-leaf keeps the gradient that flows through it in .grad. */
static PyObject *m_retain_grad(PyObject *self, PyObject *u) {
    tn_tensor *t = T(self);
    if (!tn_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "can't retain_grad on Tensor that has requires_grad=False");
        return NULL;
    }
    tn_node *n = tn_grad_fn(t);
    if (!n) Py_RETURN_NONE; /* leaves keep their gradient anyway */
    tn_autograd_meta *m = tn_autograd_meta_peek(t);
    if (!n->retain) {
        n->retain = calloc((size_t)n->num_inputs + 1, sizeof(tn_tensor *));
        if (!n->retain) return PyErr_NoMemory();
    }
    n->retain[m->output_nr] = t;
    m->retains_grad = true;
    Py_RETURN_NONE;
}

static PyObject *m_complex(PyObject *self, PyObject *u) {
    PyObject *v = scalar_conv(self, NULL, "complex");
    if (!v) return NULL;
    PyObject *r = PyObject_CallFunctionObjArgs((PyObject *)&PyComplex_Type, v, NULL);
    Py_DECREF(v);
    return r;
}
static PyObject *m_long(PyObject *self, PyObject *u) { return m_int(self); }

/* ~x: upstream checks the dtype before dispatching and raises TypeError for floats. */
static PyObject *m_invert(PyObject *self) {
    if (!tn_dtype_is_integral(T(self)->dtype, true)) {
        PyErr_SetString(PyExc_TypeError, "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
        return NULL;
    }
    return op_getter(self, TN_OP_bitwise_not);
}
static PyObject *m_invert_method(PyObject *self, PyObject *u) { return m_invert(self); }
static PyObject *m_nonzero_bool(PyObject *self, PyObject *u) {
    int b = m_bool(self);
    return b < 0 ? NULL : PyBool_FromLong(b);
}
static Py_ssize_t m_len(PyObject *self) {
    if (T(self)->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)T(self)->sizes[0];
}
static PyObject *m_len_method(PyObject *self, PyObject *u) {
    Py_ssize_t n = m_len(self);
    return n < 0 ? NULL : PyLong_FromSsize_t(n);
}
static PyObject *m_fix_weakref(PyObject *self, PyObject *u) { Py_RETURN_NONE; }
static PyObject *m_use_count(PyObject *self, PyObject *u) { return PyLong_FromLong(atomic_load(&T(self)->refcount)); }
static PyObject *m_refuse(PyObject *self, PyObject *args, PyObject *kw, const char *name) {
    PyErr_Format(PyExc_NotImplementedError, "torch._C.TensorBase.%s is not implemented by torchnative", name);
    return NULL;
}
#define REFUSING(fname, pyname) \
    static PyObject *fname(PyObject *self, PyObject *args, PyObject *kw) { return m_refuse(self, args, kw, pyname); }
REFUSING(m_apply_, "apply_")
REFUSING(m_map_, "map_")
REFUSING(m_map2_, "map2_")
REFUSING(m_make_wrapper_subclass, "_make_wrapper_subclass")
REFUSING(m_dtensor_new, "_dtensor__new__")
REFUSING(m_view_func, "_view_func")
REFUSING(m_view_func_unsafe, "_view_func_unsafe")
REFUSING(m_rev_view_func_unsafe, "_rev_view_func_unsafe")
REFUSING(m_new, "new")
static PyObject *m_no_device(PyObject *self, PyObject *args, PyObject *kw) {
    PyErr_SetString(PyExc_RuntimeError, "torchnative has no such device (only cpu and meta)");
    return NULL;
}

static PyMethodDef tensor_methods[] = {
    {"size", (PyCFunction)(void (*)(void))m_size, METH_VARARGS | METH_KEYWORDS, NULL},
    {"stride", (PyCFunction)(void (*)(void))m_stride, METH_VARARGS | METH_KEYWORDS, NULL},
    {"dim", m_dim, METH_NOARGS, NULL},
    {"ndimension", m_dim, METH_NOARGS, NULL},
    {"nelement", m_numel, METH_NOARGS, NULL},
    {"numel", m_numel, METH_NOARGS, NULL},
    {"storage_offset", m_storage_offset, METH_NOARGS, NULL},
    {"element_size", m_element_size, METH_NOARGS, NULL},
    {"data_ptr", m_data_ptr, METH_NOARGS, NULL},
    {"get_device", m_get_device, METH_NOARGS, NULL},
    {"is_contiguous", (PyCFunction)(void (*)(void))m_is_contiguous, METH_VARARGS | METH_KEYWORDS, NULL},
    {"item", m_item, METH_NOARGS, NULL},
    {"tolist", m_tolist, METH_NOARGS, NULL},
    {"requires_grad_", (PyCFunction)(void (*)(void))m_requires_grad_, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_make_subclass", (PyCFunction)(void (*)(void))m_make_subclass, METH_VARARGS | METH_KEYWORDS | METH_STATIC, NULL},
    {"_is_view", m_is_view, METH_NOARGS, NULL},
    {"retain_grad", m_retain_grad, METH_NOARGS, NULL},
    {"untyped_storage", tn_py_tensor_untyped_storage, METH_NOARGS, NULL},
    {"set_", (PyCFunction)(void (*)(void))tn_py_tensor_set_, METH_VARARGS | METH_KEYWORDS, NULL},
    {"__complex__", m_complex, METH_NOARGS, NULL},
    {"__long__", m_long, METH_NOARGS, NULL},
    {"__invert__", m_invert_method, METH_NOARGS, NULL},
    {"__nonzero__", m_nonzero_bool, METH_NOARGS, NULL},
    {"__len__", m_len_method, METH_NOARGS, NULL},
    {"_fix_weakref", m_fix_weakref, METH_NOARGS, NULL},
    {"_use_count", m_use_count, METH_NOARGS, NULL},
    {"const_data_ptr", m_data_ptr, METH_NOARGS, NULL},
    {"apply_", (PyCFunction)(void (*)(void))m_apply_, METH_VARARGS | METH_KEYWORDS, NULL},
    {"map_", (PyCFunction)(void (*)(void))m_map_, METH_VARARGS | METH_KEYWORDS, NULL},
    {"map2_", (PyCFunction)(void (*)(void))m_map2_, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_make_wrapper_subclass", (PyCFunction)(void (*)(void))m_make_wrapper_subclass, METH_VARARGS | METH_KEYWORDS | METH_STATIC, NULL},
    {"_dtensor__new__", (PyCFunction)(void (*)(void))m_dtensor_new, METH_VARARGS | METH_KEYWORDS | METH_STATIC, NULL},
    {"_view_func", (PyCFunction)(void (*)(void))m_view_func, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_view_func_unsafe", (PyCFunction)(void (*)(void))m_view_func_unsafe, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_rev_view_func_unsafe", (PyCFunction)(void (*)(void))m_rev_view_func_unsafe, METH_VARARGS | METH_KEYWORDS, NULL},
    {"new", (PyCFunction)(void (*)(void))m_new, METH_VARARGS | METH_KEYWORDS, NULL},
    {"xpu", (PyCFunction)(void (*)(void))m_no_device, METH_VARARGS | METH_KEYWORDS, NULL},
    {"ipu", (PyCFunction)(void (*)(void))m_no_device, METH_VARARGS | METH_KEYWORDS, NULL},
    {"mtia", (PyCFunction)(void (*)(void))m_no_device, METH_VARARGS | METH_KEYWORDS, NULL},
    {"numpy", (PyCFunction)(void (*)(void))tn_py_tensor_numpy, METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL},
};

static PyObject *tensor_new(PyTypeObject *cls, PyObject *args, PyObject *kw) {
    /* torch.Tensor(*sizes) / torch.Tensor() : the legacy constructor, float by default. */
    Py_ssize_t n = PyTuple_Size(args);
    int64_t sizes[TN_MAX_DIMS];
    if (n == 1 && !PyLong_Check(PyTuple_GetItem(args, 0))) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "torch.Tensor(data) is not implemented by torchnative; use torch.tensor(data)");
        return NULL;
    }
    if (n > TN_MAX_DIMS) return tn_py_raise(tn_error(TN_ERR_NOT_IMPLEMENTED, "too many dimensions"));
    for (Py_ssize_t i = 0; i < n; i++) {
        sizes[i] = PyLong_AsLongLong(PyTuple_GetItem(args, i));
        if (sizes[i] == -1 && PyErr_Occurred()) return NULL;
    }
    tn_tensor *t;
    tn_status st = tn_tensor_empty((int)n, sizes, tn_default_dtype(), tn_device_cpu(), &t);
    if (st != TN_OK) return tn_py_raise(st);
    if (n == 0) {
        int64_t zero = 0;
        tn_tensor_resize(t, 1, &zero);
    }
    return tensor_alloc(cls, t);
}

static PyType_Slot tensor_slots[] = {
    {Py_tp_dealloc, tensor_dealloc}, {Py_tp_new, tensor_new}, {Py_tp_getset, tensor_getset},
    {Py_tp_methods, tensor_methods}, {Py_nb_float, m_float}, {Py_nb_int, m_int},
    {Py_nb_index, m_index}, {Py_nb_bool, m_bool}, {Py_nb_invert, m_invert},
    {Py_mp_subscript, tn_py_tensor_getitem}, {Py_mp_length, m_len}, {Py_mp_ass_subscript, tn_py_tensor_setitem}, {0, NULL},
};

/* Called by _initExtension once torch.Tensor exists: results are wrapped in it. */
int tn_py_set_tensor_class(PyObject *cls) {
    PyObject *old = tn_tensor_class;
    Py_XINCREF(cls);
    tn_tensor_class = cls;
    Py_XDECREF(old);
    return 0;
}

/* Hand-written methods first (CPython keeps the first definition of a name), then the
 * manual methods of tensor_methods.c, then the generated operator methods. */
static PyMethodDef *merged_methods(void) {
    PyMethodDef *gen = tn_py_tensor_method_defs(), *man = tn_py_tensor_manual_method_defs();
    size_t a = 0, b = 0, c = 0;
    while (tensor_methods[a].ml_name) a++;
    while (man[b].ml_name) b++;
    while (gen[c].ml_name) c++;
    PyMethodDef *all = calloc(a + b + c + 1, sizeof *all);
    if (!all) return NULL;
    memcpy(all, tensor_methods, a * sizeof *all);
    memcpy(all + a, man, b * sizeof *all);
    memcpy(all + a + b, gen, c * sizeof *all);
    return all; /* lives as long as the type: never freed */
}

int tn_py_init_tensor(PyObject *m) {
    PyMethodDef *methods = merged_methods();
    if (!methods) { PyErr_NoMemory(); return -1; }
    for (PyType_Slot *sl = tensor_slots; sl->slot; sl++)
        if (sl->slot == Py_tp_methods) sl->pfunc = methods;
    PyType_Spec spec = {"torch._C._TensorBaseImpl", sizeof(TNTensorObject), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, tensor_slots};
    tn_tensor_impl_type = (PyTypeObject *)PyType_FromSpec(&spec);
    if (!tn_tensor_impl_type) return -1;
    /* TensorBase's metaclass must be torch._C._TensorMeta (nn.Parameter's metaclass derives
     * from it); with no PyType_FromMetaclass in the 3.11 limited API, the metaclass itself
     * builds TensorBase over our C type. */
    PyObject *boot = PyImport_ImportModule("torchnative._C_bootstrap");
    if (!boot) return -1;
    tn_tensor_base = PyObject_CallMethod(boot, "make_tensor_base", "O", (PyObject *)tn_tensor_impl_type);
    Py_DECREF(boot);
    if (!tn_tensor_base) return -1;
    if (PyModule_AddObjectRef(m, "_TensorBaseImpl", (PyObject *)tn_tensor_impl_type) < 0) return -1;
    return PyModule_AddObjectRef(m, "TensorBase", tn_tensor_base);
}
