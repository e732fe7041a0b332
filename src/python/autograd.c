/* autograd.c — the binding of autograd (src/autograd/): grad_fn objects, the engine entry
 * point behind torch._C._ImperativeEngine, the Tensor members autograd owns, the Python
 * hooks the engine calls, and the graph node of a torch.autograd.Function. */
#include "binding.h"

#include <string.h>

#include "autograd/autograd.h"
#include "ops/dispatch.h"

/* ---- grad_fn objects ------------------------------------------------------------------ */

/* A Python view of a C node. It owns one reference to the node; the node points back to
 * it (borrowed) so `y.grad_fn is y.grad_fn`. Classes are made per node name
 * ("MulBackward0") and published in torch._C._functions, which is how
 * torch.autograd.graph.Node recognises them. */
typedef struct {
    PyObject_HEAD
    tn_node *node;
} NodeObject;

static PyObject *node_base;    /* torch._C._functions._TNNode */
static PyObject *node_classes; /* name -> class */
static PyObject *functions_mod;

static void node_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    NodeObject *o = (NodeObject *)self;
    PyObject_GC_UnTrack(self);
    if (o->node) {
        if (o->node->py == self) o->node->py = NULL;
        tn_node_release(o->node);
        o->node = NULL;
    }
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

static int node_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static PyObject *node_class_for(const char *name) {
    PyObject *cls = PyDict_GetItemString(node_classes, name);
    if (cls) return cls;
    PyObject *ns = Py_BuildValue("{s:s}", "__module__", "torch._C._functions");
    if (!ns) return NULL;
    cls = PyObject_CallFunction((PyObject *)&PyType_Type, "s(O)O", name, node_base, ns);
    Py_DECREF(ns);
    if (!cls) return NULL;
    if (PyDict_SetItemString(node_classes, name, cls) < 0 || PyObject_SetAttrString(functions_mod, name, cls) < 0) {
        Py_DECREF(cls);
        return NULL;
    }
    Py_DECREF(cls);
    return cls;
}

/* New reference to n's Python object (None for NULL). */
PyObject *tn_py_node_wrap(tn_node *n) {
    if (!n) Py_RETURN_NONE;
    if (n->py) {
        Py_INCREF((PyObject *)n->py);
        return n->py;
    }
    PyObject *cls = node_class_for(n->name);
    if (!cls) return NULL;
    allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)cls, Py_tp_alloc);
    PyObject *o = alloc((PyTypeObject *)cls, 0);
    if (!o) return NULL;
    tn_node_retain(n);
    ((NodeObject *)o)->node = n;
    n->py = o;
    return o;
}

static tn_node *node_of(PyObject *self) {
    tn_node *n = ((NodeObject *)self)->node;
    if (!n) PyErr_SetString(PyExc_RuntimeError, "this graph node has been released");
    return n;
}

/* The node's hook state: {"pre": dict, "post": dict, "tensor": [(dict, idx)], "metadata": dict}. */
static PyObject *ordered_dict(void) {
    PyObject *mod = PyImport_ImportModule("collections");
    PyObject *d = mod ? PyObject_CallMethod(mod, "OrderedDict", NULL) : NULL;
    Py_XDECREF(mod);
    return d;
}

static PyObject *hook_state(tn_node *n) {
    if (!n->py_hooks) {
        /* OrderedDicts: torch.utils.hooks.RemovableHandle keeps a weak reference. */
        PyObject *d = Py_BuildValue("{s:N,s:N,s:N,s:N}", "pre", ordered_dict(), "post", ordered_dict(), "tensor",
                                    PyList_New(0), "metadata", PyDict_New());
        if (!d) return NULL;
        n->py_hooks = d;
    }
    return n->py_hooks;
}

static PyObject *removable_handle(PyObject *dict, PyObject *fn) {
    PyObject *mod = PyImport_ImportModule("torch.utils.hooks");
    if (!mod) return NULL;
    PyObject *h = PyObject_CallMethod(mod, "RemovableHandle", "O", dict);
    Py_DECREF(mod);
    if (!h) return NULL;
    PyObject *id = PyObject_GetAttrString(h, "id");
    if (!id || PyDict_SetItem(dict, id, fn) < 0) {
        Py_XDECREF(id);
        Py_DECREF(h);
        return NULL;
    }
    Py_DECREF(id);
    return h;
}

static PyObject *node_register(PyObject *self, PyObject *fn, const char *which) {
    tn_node *n = node_of(self);
    if (!n) return NULL;
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "hook must be callable");
        return NULL;
    }
    PyObject *st = hook_state(n);
    return st ? removable_handle(PyDict_GetItemString(st, which), fn) : NULL;
}
static PyObject *node_register_hook(PyObject *self, PyObject *fn) { return node_register(self, fn, "post"); }
static PyObject *node_register_prehook(PyObject *self, PyObject *fn) { return node_register(self, fn, "pre"); }

static PyObject *node_register_hook_dict(PyObject *self, PyObject *tensor) {
    tn_node *n = node_of(self);
    if (!n) return NULL;
    if (!tn_py_is_tensor(tensor)) {
        PyErr_SetString(PyExc_TypeError, "_register_hook_dict expects a Tensor");
        return NULL;
    }
    PyObject *d = PyObject_GetAttrString(tensor, "_backward_hooks");
    if (!d) return NULL;
    tn_autograd_meta *m = tn_autograd_meta_peek(tn_py_tensor_get(tensor));
    PyObject *st = hook_state(n);
    PyObject *entry = st ? Py_BuildValue("(Oi)", d, m ? m->output_nr : 0) : NULL;
    Py_DECREF(d);
    if (!entry) return NULL;
    int rc = PyList_Append(PyDict_GetItemString(st, "tensor"), entry);
    Py_DECREF(entry);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *node_name(PyObject *self, PyObject *u) {
    tn_node *n = node_of(self);
    return n ? PyUnicode_FromString(n->name) : NULL;
}

static PyObject *node_sequence_nr(PyObject *self, PyObject *u) {
    tn_node *n = node_of(self);
    return n ? PyLong_FromUnsignedLongLong(n->seq_nr) : NULL;
}

/* ((next node or None, input_nr), ...) of n: next_functions. */
static PyObject *next_functions_of(tn_node *n) {
    PyObject *t = PyTuple_New(n->num_next);
    for (int i = 0; t && i < n->num_next; i++) {
        PyObject *f = tn_py_node_wrap(n->next[i].fn);
        PyObject *e = f ? Py_BuildValue("(Ni)", f, n->next[i].input_nr) : NULL;
        if (!e) { Py_DECREF(t); return NULL; }
        PyTuple_SetItem(t, i, e);
    }
    return t;
}

static PyObject *node_next_functions(PyObject *self, void *c) {
    tn_node *n = node_of(self);
    return n ? next_functions_of(n) : NULL;
}

static PyObject *node_metadata(PyObject *self, void *c) {
    tn_node *n = node_of(self);
    PyObject *st = n ? hook_state(n) : NULL;
    if (!st) return NULL;
    PyObject *m = PyDict_GetItemString(st, "metadata");
    Py_INCREF(m);
    return m;
}

static PyObject *node_variable(PyObject *self, void *c) {
    tn_node *n = node_of(self);
    if (!n) return NULL;
    if (n->kind != TN_NODE_ACCUMULATE || !n->variable) {
        PyErr_SetString(PyExc_AttributeError, "'variable' is only defined on AccumulateGrad nodes");
        return NULL;
    }
    tn_tensor_retain(n->variable);
    return tn_py_tensor_wrap(n->variable);
}

static PyObject *node_hooks_list(PyObject *self, void *which) {
    tn_node *n = node_of(self);
    PyObject *st = n ? hook_state(n) : NULL;
    if (!st) return NULL;
    return PyDict_Values(PyDict_GetItemString(st, (const char *)which));
}

static PyObject *node_repr(PyObject *self) {
    tn_node *n = ((NodeObject *)self)->node;
    return PyUnicode_FromFormat("<%s object at %p>", n ? n->name : "Node", self);
}

static PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, NULL},
    {"register_hook", node_register_hook, METH_O, NULL},
    {"register_prehook", node_register_prehook, METH_O, NULL},
    {"_register_hook_dict", node_register_hook_dict, METH_O, NULL},
    {"_sequence_nr", node_sequence_nr, METH_NOARGS, NULL},
    {NULL},
};

static PyGetSetDef node_getset[] = {
    {"next_functions", node_next_functions, NULL, NULL, NULL},
    {"metadata", node_metadata, NULL, NULL, NULL},
    {"variable", node_variable, NULL, NULL, NULL},
    {"_forward_hooks", node_hooks_list, NULL, NULL, "post"},
    {NULL},
};

static PyType_Slot node_slots[] = {
    {Py_tp_dealloc, node_dealloc}, {Py_tp_traverse, node_traverse}, {Py_tp_methods, node_methods},
    {Py_tp_getset, node_getset},   {Py_tp_repr, node_repr},         {0, NULL},
};

/* ---- hooks the engine calls -------------------------------------------------------------- */

static PyObject *call1(PyObject *fn, PyObject *a) { return PyObject_CallFunctionObjArgs(fn, a, NULL); }

static PyObject *wrap_grad(tn_tensor *g) {
    if (!g) Py_RETURN_NONE;
    tn_tensor_retain(g);
    return tn_py_tensor_wrap(g);
}

/* Replaces *slot with the tensor of r when r is a tensor (None keeps the old value). */
static int take_result(PyObject *r, tn_tensor **slot) {
    if (r == Py_None) return 0;
    if (!tn_py_is_tensor(r)) {
        PyErr_SetString(PyExc_TypeError, "hooks must return None or a Tensor");
        return -1;
    }
    tn_tensor *t = tn_py_tensor_get(r);
    tn_tensor_retain(t);
    tn_tensor_release(*slot);
    *slot = t;
    return 0;
}

/* Calls every value of dict with one tensor argument, replacing *g with non-None results. */
static int run_tensor_hooks(PyObject *dict, tn_tensor **g) {
    PyObject *vals = PyDict_Values(dict);
    if (!vals) return -1;
    for (Py_ssize_t i = 0; i < PyList_Size(vals); i++) {
        PyObject *a = wrap_grad(*g);
        if (!a) { Py_DECREF(vals); return -1; }
        PyObject *r = call1(PyList_GetItem(vals, i), a);
        Py_DECREF(a);
        if (!r || take_result(r, g) < 0) { Py_XDECREF(r); Py_DECREF(vals); return -1; }
        Py_DECREF(r);
    }
    Py_DECREF(vals);
    return 0;
}

static PyObject *tuple_of(tn_tensor **g, int n) {
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *o = wrap_grad(g[i]);
        if (!o) { Py_DECREF(t); return NULL; }
        PyTuple_SetItem(t, i, o);
    }
    return t;
}

/* Replaces g[0..n) with a hook's returned sequence (None entries keep nothing). */
static int take_tuple(PyObject *r, tn_tensor **g, int n, const char *what) {
    if (r == Py_None) return 0;
    PyObject *seq = PySequence_Tuple(r);
    if (!seq) return -1;
    if (PyTuple_Size(seq) != n) {
        PyErr_Format(PyExc_RuntimeError, "hook '%s' has returned an incorrect number of values (got %zd, but expected %d)",
                     what, PyTuple_Size(seq), n);
        Py_DECREF(seq);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        PyObject *o = PyTuple_GetItem(seq, i);
        if (o == Py_None) {
            tn_tensor_release(g[i]);
            g[i] = NULL;
        } else if (take_result(o, &g[i]) < 0) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

static tn_status cb_pre_hooks(tn_node *n, tn_tensor **grads) {
    PyObject *st = n->py_hooks;
    PyObject *th = PyDict_GetItemString(st, "tensor");
    for (Py_ssize_t i = 0; th && i < PyList_Size(th); i++) {
        PyObject *e = PyList_GetItem(th, i);
        int idx = (int)PyLong_AsLong(PyTuple_GetItem(e, 1));
        if (idx < 0 || idx >= n->num_inputs || !grads[idx]) continue;
        if (run_tensor_hooks(PyTuple_GetItem(e, 0), &grads[idx]) < 0) return TN_ERR_PYTHON;
    }
    PyObject *vals = PyDict_Values(PyDict_GetItemString(st, "pre"));
    if (!vals) return TN_ERR_PYTHON;
    for (Py_ssize_t i = 0; i < PyList_Size(vals); i++) {
        PyObject *a = tuple_of(grads, n->num_inputs);
        PyObject *r = a ? call1(PyList_GetItem(vals, i), a) : NULL;
        Py_XDECREF(a);
        if (!r || take_tuple(r, grads, n->num_inputs, "prehook") < 0) { Py_XDECREF(r); Py_DECREF(vals); return TN_ERR_PYTHON; }
        Py_DECREF(r);
    }
    Py_DECREF(vals);
    return TN_OK;
}

static tn_status cb_post_hooks(tn_node *n, tn_tensor **grad_in, tn_tensor **grad_out) {
    PyObject *vals = PyDict_Values(PyDict_GetItemString(n->py_hooks, "post"));
    if (!vals) return TN_ERR_PYTHON;
    for (Py_ssize_t i = 0; i < PyList_Size(vals); i++) {
        PyObject *a = tuple_of(grad_in, n->num_next), *b = tuple_of(grad_out, n->num_inputs);
        PyObject *r = a && b ? PyObject_CallFunctionObjArgs(PyList_GetItem(vals, i), a, b, NULL) : NULL;
        Py_XDECREF(a);
        Py_XDECREF(b);
        if (!r || take_tuple(r, grad_in, n->num_next, "hook") < 0) { Py_XDECREF(r); Py_DECREF(vals); return TN_ERR_PYTHON; }
        Py_DECREF(r);
    }
    Py_DECREF(vals);
    return TN_OK;
}

static tn_status cb_leaf_hooks(tn_tensor *leaf, tn_tensor **g) {
    tn_autograd_meta *m = tn_autograd_meta_peek(leaf);
    if (!m || !m->py_hooks) return TN_OK;
    return run_tensor_hooks(m->py_hooks, g) < 0 ? TN_ERR_PYTHON : TN_OK;
}

static tn_status cb_post_acc_hooks(tn_tensor *leaf) {
    tn_autograd_meta *m = tn_autograd_meta_peek(leaf);
    if (!m || !m->py_post_acc_hooks) return TN_OK;
    PyObject *vals = PyDict_Values(m->py_post_acc_hooks);
    if (!vals) return TN_ERR_PYTHON;
    for (Py_ssize_t i = 0; i < PyList_Size(vals); i++) {
        PyObject *a = wrap_grad(leaf);
        PyObject *r = a ? call1(PyList_GetItem(vals, i), a) : NULL;
        Py_XDECREF(a);
        if (!r) { Py_DECREF(vals); return TN_ERR_PYTHON; }
        Py_DECREF(r);
    }
    Py_DECREF(vals);
    return TN_OK;
}

/* TN_NODE_PYTHON: ctx._tn_backward(grads) returns one gradient (or None) per edge. */
static tn_status cb_apply_python(tn_node *n, tn_tensor **in, tn_tensor **out) {
    PyObject *ctx = n->py;
    PyObject *a = tuple_of(in, n->num_inputs);
    PyObject *r = a ? PyObject_CallMethod(ctx, "_tn_backward", "(O)", a) : NULL;
    Py_XDECREF(a);
    if (!r) return TN_ERR_PYTHON;
    int rc = take_tuple(r, out, n->num_next, "backward");
    Py_DECREF(r);
    return rc < 0 ? TN_ERR_PYTHON : TN_OK;
}

static void cb_free_node_py(tn_node *n) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_CLEAR(*(PyObject **)&n->py_hooks);
    if (n->kind == TN_NODE_PYTHON && n->py) {
        PyObject *ctx = n->py;
        n->py = NULL;
        PyObject *none = Py_None;
        if (PyObject_SetAttrString(ctx, "_tn_node", none) < 0) PyErr_Clear();
        Py_DECREF(ctx);
    }
    PyGILState_Release(g);
}

static void cb_free_meta_py(tn_autograd_meta *m) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_CLEAR(*(PyObject **)&m->py_hooks);
    Py_CLEAR(*(PyObject **)&m->py_post_acc_hooks);
    PyGILState_Release(g);
}

/* ---- saved-tensor hooks ------------------------------------------------------------------ */

/* Depth of torch.autograd.graph.saved_tensors_hooks contexts in this thread: the Python
 * stack (_surface/autograd.py) keeps it, so saving costs nothing while no hooks are on. */
static _Thread_local int saved_hooks_depth;
static PyObject *pack_fn; /* torchnative._surface.autograd._tn_pack_saved */

static tn_status cb_pack_saved(tn_tensor *t, void **packed) {
    *packed = NULL;
    if (saved_hooks_depth <= 0 || !pack_fn) return TN_OK;
    /* The door may run with the GIL released (large operators). */
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *a = wrap_grad(t);
    PyObject *r = a ? call1(pack_fn, a) : NULL;
    Py_XDECREF(a);
    tn_status st = TN_OK;
    if (!r) st = TN_ERR_PYTHON;
    else if (r == Py_None) Py_DECREF(r);
    else *packed = r; /* (unpack, packed value) */
    PyGILState_Release(g);
    return st;
}

static tn_status cb_unpack_saved(void *packed, tn_tensor **out) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *p = packed;
    tn_status st = TN_OK;
    PyObject *r = PyObject_CallFunctionObjArgs(PyTuple_GetItem(p, 0), PyTuple_GetItem(p, 1), NULL);
    if (!r) {
        st = TN_ERR_PYTHON;
    } else if (!tn_py_is_tensor(r)) {
        PyErr_SetString(PyExc_TypeError, "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                                         "type object");
        st = TN_ERR_PYTHON;
    } else {
        tn_tensor *t = tn_py_tensor_get(r);
        tn_tensor_retain(t);
        *out = t;
    }
    Py_XDECREF(r);
    PyGILState_Release(g);
    return st;
}

static void cb_free_packed(void *packed) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)packed);
    PyGILState_Release(g);
}

/* _tn_saved_hooks_depth(delta) -> new depth */
static PyObject *f_saved_hooks_depth(PyObject *m, PyObject *arg) {
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) return NULL;
    saved_hooks_depth += (int)d;
    if (!pack_fn) {
        PyObject *mod = PyImport_ImportModule("torchnative._surface.autograd");
        pack_fn = mod ? PyObject_GetAttrString(mod, "_tn_pack_saved") : NULL;
        Py_XDECREF(mod);
        if (!pack_fn) return NULL;
    }
    return PyLong_FromLong(saved_hooks_depth);
}

/* ---- the engine entry point ------------------------------------------------------------- */

static int tensors_of(PyObject *seq, tn_tensor ***out, Py_ssize_t *n, bool allow_none, const char *what) {
    PyObject *t = PySequence_Tuple(seq);
    if (!t) return -1;
    *n = PyTuple_Size(t);
    *out = PyMem_Calloc((size_t)*n + 1, sizeof(tn_tensor *));
    if (!*out) { Py_DECREF(t); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject *o = PyTuple_GetItem(t, i);
        if (o == Py_None && allow_none) continue;
        if (!tn_py_is_tensor(o)) {
            PyErr_Format(PyExc_TypeError, "%s must be a sequence of Tensors", what);
            Py_DECREF(t);
            return -1;
        }
        (*out)[i] = tn_py_tensor_get(o);
    }
    Py_DECREF(t);
    return 0;
}

/* _tn_run_backward(tensors, grad_tensors, keep_graph, create_graph, inputs,
 * allow_unreachable, accumulate_grad) -> tuple of gradients of inputs (empty when
 * accumulating): upstream's Engine.run_backward. */
static PyObject *f_run_backward(PyObject *m, PyObject *args) {
    PyObject *tensors, *grads, *inputs;
    int keep, create, allow_unreachable, accumulate;
    if (!PyArg_ParseTuple(args, "OOppOpp:run_backward", &tensors, &grads, &keep, &create, &inputs,
                          &allow_unreachable, &accumulate))
        return NULL;
    tn_tensor **roots = NULL, **groots = NULL, **ins = NULL, **res = NULL;
    Py_ssize_t nr = 0, ng = 0, ni = 0;
    PyObject *out = NULL;
    if (tensors_of(tensors, &roots, &nr, false, "tensors") < 0) goto done;
    if (tensors_of(grads, &groots, &ng, true, "grad_tensors") < 0) goto done;
    if (ng != nr) {
        PyErr_Format(PyExc_RuntimeError, "got %zd tensors and %zd gradients", nr, ng);
        goto done;
    }
    if (inputs != Py_None && tensors_of(inputs, &ins, &ni, false, "inputs") < 0) goto done;
    if (!accumulate && ni == 0) {
        PyErr_SetString(PyExc_RuntimeError, "grad requires non-empty inputs.");
        goto done;
    }
    res = PyMem_Calloc((size_t)ni + 1, sizeof(tn_tensor *));
    if (!res) { PyErr_NoMemory(); goto done; }
    tn_backward_args a = {.nroots = (int)nr, .roots = roots, .grad_roots = groots, .keep_graph = keep,
                          .create_graph = create, .ninputs = (int)ni, .inputs = ins, .accumulate = accumulate,
                          .allow_unused = allow_unreachable, .results = accumulate ? NULL : res};
    tn_status st = tn_autograd_backward(&a);
    if (st != TN_OK) {
        if (st == TN_ERR_PYTHON) goto done;
        tn_py_raise(st);
        goto done;
    }
    if (accumulate) {
        out = PyTuple_New(0);
        goto done;
    }
    out = PyTuple_New(ni);
    for (Py_ssize_t i = 0; out && i < ni; i++) {
        PyObject *o = res[i] ? tn_py_tensor_wrap(res[i]) : (Py_INCREF(Py_None), Py_None);
        res[i] = NULL;
        if (!o) { Py_CLEAR(out); break; }
        PyTuple_SetItem(out, i, o);
    }
done:
    for (Py_ssize_t i = 0; res && i < ni; i++) tn_tensor_release(res[i]);
    PyMem_Free(roots);
    PyMem_Free(groots);
    PyMem_Free(ins);
    PyMem_Free(res);
    return out;
}

/* _tn_function_node(ctx, name, inputs, outputs) -> None: the graph node of a
 * torch.autograd.Function call. inputs: the call's arguments (edges for the tensors
 * among them, in order); outputs: the tensors to get this node as grad_fn (None entries
 * are skipped; their position is still an output number). The node owns ctx. */
static PyObject *f_function_node(PyObject *m, PyObject *args) {
    PyObject *ctx, *inputs, *outputs;
    const char *name;
    if (!PyArg_ParseTuple(args, "OsOO:_tn_function_node", &ctx, &name, &inputs, &outputs)) return NULL;
    if (!PyTuple_Check(inputs) || !PyTuple_Check(outputs)) {
        PyErr_SetString(PyExc_TypeError, "_tn_function_node expects tuples");
        return NULL;
    }
    Py_ssize_t nin = PyTuple_Size(inputs), nout = PyTuple_Size(outputs), ne = 0;
    for (Py_ssize_t i = 0; i < nin; i++) ne += tn_py_is_tensor(PyTuple_GetItem(inputs, i));
    /* The name string must outlive the node: keep it interned on the class cache. */
    PyObject *cls = node_class_for(name);
    if (!cls) return NULL;
    PyObject *key = PyUnicode_InternFromString(name);
    if (!key) return NULL;
    const char *kept = PyUnicode_AsUTF8AndSize(key, NULL); /* immortal-enough: interned and cached */
    Py_INCREF(key); /* never released: a name per Function class */
    Py_DECREF(key);
    tn_node *n = tn_node_new(TN_NODE_PYTHON, kept, (int)nout, (int)ne);
    if (!n) return PyErr_NoMemory();
    tn_node_retain(n);
    int e = 0;
    for (Py_ssize_t i = 0; i < nin; i++) {
        PyObject *o = PyTuple_GetItem(inputs, i);
        if (!tn_py_is_tensor(o)) continue;
        tn_status st = tn_autograd_edge(tn_py_tensor_get(o), &n->next[e]);
        if (st != TN_OK) { tn_node_release(n); return tn_py_raise(st); }
        if (n->next[e].fn) tn_node_retain(n->next[e].fn);
        e++;
    }
    Py_INCREF(ctx);
    n->py = ctx;
    n->py_hooks = NULL;
    PyObject *cap = PyCapsule_New(n, "torchnative.node", NULL);
    if (!cap || PyObject_SetAttrString(ctx, "_tn_node", cap) < 0) {
        Py_XDECREF(cap);
        tn_node_release(n);
        return NULL;
    }
    Py_DECREF(cap);
    for (Py_ssize_t k = 0; k < nout; k++) {
        PyObject *o = PyTuple_GetItem(outputs, k);
        if (!tn_py_is_tensor(o)) { n->in_meta[k].ndim = -1; continue; }
        tn_tensor *t = tn_py_tensor_get(o);
        tn_geom_of(t, &n->in_meta[k]);
        tn_autograd_set_history(t, n, (int)k);
        tn_autograd_meta *am = tn_autograd_meta_peek(t);
        if (am) am->hist_version = atomic_load(&t->storage->version);
    }
    tn_node_release(n);
    Py_RETURN_NONE;
}

/* _tn_node_of(ctx) -> the Python object of a Function node's graph functions. */
static tn_node *ctx_node(PyObject *ctx) {
    PyObject *cap = PyObject_GetAttrString(ctx, "_tn_node");
    if (!cap) { PyErr_Clear(); return NULL; }
    tn_node *n = cap == Py_None ? NULL : PyCapsule_GetPointer(cap, "torchnative.node");
    Py_DECREF(cap);
    if (!n) PyErr_Clear();
    return n;
}

/* _tn_function_next(ctx) -> next_functions of a Function node. */
static PyObject *f_function_next(PyObject *m, PyObject *ctx) {
    tn_node *n = ctx_node(ctx);
    return n ? next_functions_of(n) : PyTuple_New(0);
}

/* _tn_function_hooks(ctx) -> the hook-state dict of a Function node (hooks on ctx). */
static PyObject *f_function_hooks(PyObject *m, PyObject *ctx) {
    tn_node *n = ctx_node(ctx);
    if (!n) {
        PyErr_SetString(PyExc_RuntimeError, "this Function has no graph node (no input required grad)");
        return NULL;
    }
    PyObject *st = hook_state(n);
    Py_XINCREF(st);
    return st;
}

/* _tn_needs_input_grad(ctx) -> tuple of bools per tensor edge. */
static PyObject *f_function_needs(PyObject *m, PyObject *ctx) {
    tn_node *n = ctx_node(ctx);
    if (!n) return PyTuple_New(0);
    PyObject *t = PyTuple_New(n->num_next);
    for (int i = 0; t && i < n->num_next; i++) PyTuple_SetItem(t, i, PyBool_FromLong(n->next[i].fn != NULL));
    return t;
}

/* _tn_current_node() -> grad_fn running in this thread's backward, or None. */
static PyObject *f_current_node(PyObject *m, PyObject *u) {
    tn_node *n = tn_autograd_current_node();
    if (!n) Py_RETURN_NONE;
    if (n->kind == TN_NODE_PYTHON && n->py) { Py_INCREF((PyObject *)n->py); return n->py; }
    return tn_py_node_wrap(n);
}

/* _tn_current_graph_task_id() -> id of this thread's running backward pass, or -1. */
static PyObject *f_current_graph_task_id(PyObject *m, PyObject *u) {
    return PyLong_FromLongLong(tn_autograd_current_task_id());
}

/* _tn_queue_callback(fn): Engine.queue_callback — fn() runs when the current backward
 * pass has run every node. */
static tn_status run_py_callback(void *ctx) {
    PyObject *r = PyObject_CallNoArgs((PyObject *)ctx);
    if (!r) return TN_ERR_PYTHON;
    Py_DECREF(r);
    return TN_OK;
}

static void free_py_callback(void *ctx) { Py_DECREF((PyObject *)ctx); }

static PyObject *f_queue_callback(PyObject *m, PyObject *fn) {
    if (!PyCallable_Check(fn)) return PyErr_Format(PyExc_TypeError, "queue_callback expects a callable");
    Py_INCREF(fn);
    tn_status st = tn_autograd_queue_callback(run_py_callback, fn, free_py_callback);
    if (st != TN_OK) return tn_py_raise(st);
    Py_RETURN_NONE;
}

/* _tn_set_version(tensor, version): torch._C._autograd._unsafe_set_version_counter for
 * one tensor (the counter lives on the storage, shared by its views, as upstream's). */
static PyObject *f_set_version(PyObject *m, PyObject *args) {
    PyObject *t;
    long long v;
    if (!PyArg_ParseTuple(args, "OL", &t, &v)) return NULL;
    if (!tn_py_is_tensor(t)) return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    atomic_store(&tn_py_tensor_get(t)->storage->version, (long)v);
    Py_RETURN_NONE;
}

static PyMethodDef autograd_functions[] = {
    {"_tn_set_version", f_set_version, METH_VARARGS, NULL},
    {"_tn_queue_callback", f_queue_callback, METH_O, NULL},
    {"_tn_run_backward", f_run_backward, METH_VARARGS, NULL},
    {"_tn_function_node", f_function_node, METH_VARARGS, NULL},
    {"_tn_function_next", f_function_next, METH_O, NULL},
    {"_tn_function_hooks", f_function_hooks, METH_O, NULL},
    {"_tn_needs_input_grad", f_function_needs, METH_O, NULL},
    {"_tn_current_node", f_current_node, METH_NOARGS, NULL},
    {"_tn_current_graph_task_id", f_current_graph_task_id, METH_NOARGS, NULL},
    {"_tn_saved_hooks_depth", f_saved_hooks_depth, METH_O, NULL},
    {NULL},
};

int tn_py_init_autograd(PyObject *m) {
    tn_autograd_init();
    tn_autograd_cb = (tn_autograd_callbacks){
        .pre_hooks = cb_pre_hooks, .post_hooks = cb_post_hooks, .leaf_hooks = cb_leaf_hooks,
        .post_acc_hooks = cb_post_acc_hooks, .apply_python = cb_apply_python,
        .free_node_py = cb_free_node_py, .free_meta_py = cb_free_meta_py,
        .pack_saved = cb_pack_saved, .unpack_saved = cb_unpack_saved, .free_packed = cb_free_packed,
    };
    if (PyModule_AddFunctions(m, autograd_functions) < 0) return -1;
    PyType_Spec spec = {"torch._C._functions._TNNode", sizeof(NodeObject), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, node_slots};
    node_base = PyType_FromSpec(&spec);
    if (!node_base) return -1;
    node_classes = PyDict_New();
    if (!node_classes) return -1;
    functions_mod = PyModule_New("torch._C._functions");
    if (!functions_mod) return -1;
    if (PyModule_AddObjectRef(functions_mod, "_TNNode", node_base) < 0) return -1;
    return PyModule_AddObjectRef(m, "_functions", functions_mod);
}
