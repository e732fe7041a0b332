/* functions.c — the generated operator callables: torch._C._VariableFunctions (torch.*),
 * Tensor methods, torch._C._nn/_fft/_linalg/_special/_nested/_sparse, named-tuple return
 * types (torch._C._return_types) and the torch.ops entry points. Each call: match the
 * overload -> __torch_function__ if needed -> convert -> tn_dispatch -> wrap results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "argparse.h"
#include "autograd/autograd.h"
#include "functions.h"
#include "ops/dispatch.h"

static PyObject *structseq_types[TN_STRUCTSEQ_COUNT];
static PyObject *ns_objects[TN_NS_COUNT]; /* _VariableFunctions instance / submodules */
static const char *const ns_public_module[TN_NS_COUNT] = {
    [TN_NS_TORCH] = "torch", [TN_NS_TENSOR] = "torch.Tensor", [TN_NS_NN] = "torch.nn",
    [TN_NS_FFT] = "torch.fft", [TN_NS_LINALG] = "torch.linalg", [TN_NS_SPECIAL] = "torch.special",
    [TN_NS_NESTED] = "torch.nested", [TN_NS_SPARSE] = "torch.sparse",
};

/* ---- results ------------------------------------------------------------------------- */

/* Converts one result value to Python, consuming what it owns. A Tensor[] result is a
 * tuple when `tuples` (upstream's generated bindings: torch.where(c), torch.split, unbind
 * return tuples, and code indexes with them: x[torch.where(c)]) and a list otherwise
 * (upstream's torch.ops entry points return lists). */
static PyObject *wrap_value(tn_value *v, int tuples) {
    switch (v->tag) {
    case TN_V_TENSOR: return tn_py_tensor_wrap(v->u.t);
    case TN_V_TENSORLIST: {
        PyObject *l = tuples ? PyTuple_New(v->u.tlist.n) : PyList_New(v->u.tlist.n);
        for (int64_t i = 0; i < v->u.tlist.n; i++) {
            tn_tensor *t = v->u.tlist.data[i];
            PyObject *o = l ? tn_py_tensor_wrap(t) : NULL;
            if (!l) tn_tensor_release(t);
            else if (!o) { Py_DECREF(l); l = NULL; }
            else if (tuples) PyTuple_SetItem(l, i, o);
            else PyList_SetItem(l, i, o);
        }
        free((void *)v->u.tlist.data);
        return l;
    }
    case TN_V_INT: return PyLong_FromLongLong(v->u.i);
    case TN_V_UINT: return PyLong_FromUnsignedLongLong(v->u.u);
    case TN_V_DOUBLE: return PyFloat_FromDouble(v->u.d);
    case TN_V_BOOL: return PyBool_FromLong(v->u.b);
    case TN_V_COMPLEX: return PyComplex_FromDoubles(v->u.c.re, v->u.c.im);
    case TN_V_DTYPE: { PyObject *o = tn_py_dtype_object(v->u.dtype); Py_XINCREF(o); return o; }
    case TN_V_STRING: return PyUnicode_FromStringAndSize(v->u.s.data, (Py_ssize_t)v->u.s.n);
    case TN_V_INTLIST: {
        PyObject *l = PyList_New(v->u.ilist.n);
        for (int64_t i = 0; l && i < v->u.ilist.n; i++) PyList_SetItem(l, i, PyLong_FromLongLong(v->u.ilist.data[i]));
        return l;
    }
    case TN_V_NONE: Py_RETURN_NONE;
    default:
        PyErr_SetString(PyExc_NotImplementedError, "torchnative cannot return this value type to Python yet");
        return NULL;
    }
}

static void release_from(tn_value *r, int from, int n) {
    for (int i = from; i < n; i++) tn_value_release(&r[i]);
}

/* Wraps the door's results for op: one value, a named tuple, or a plain tuple; Tensor[]
 * values as tuples when `tuples` (see wrap_value). */
static PyObject *wrap_results(int op, tn_value *rets, int structseq, int tuples) {
    int n = tn_op_schemas[op].nrets;
    if (n == 0) Py_RETURN_NONE;
    if (n == 1) return wrap_value(&rets[0], tuples);
    PyObject *tup = structseq >= 0 && structseq_types[structseq]
                        ? PyStructSequence_New((PyTypeObject *)structseq_types[structseq])
                        : PyTuple_New(n);
    if (!tup) { release_from(rets, 0, n); return NULL; }
    for (int i = 0; i < n; i++) {
        PyObject *o = wrap_value(&rets[i], tuples);
        if (!o) { release_from(rets, i + 1, n); Py_DECREF(tup); return NULL; }
        if (structseq >= 0 && structseq_types[structseq]) PyStructSequence_SetItem(tup, i, o);
        else PyTuple_SetItem(tup, i, o);
    }
    return tup;
}

static void set_requires_grad(PyObject *res) {
    if (res && tn_py_is_tensor(res)) tn_py_tensor_get(res)->flags |= TN_TENSOR_REQUIRES_GRAD;
}

/* ---- torch function ------------------------------------------------------------------ */

static PyObject *public_function(const tn_pyfunc *f) {
    PyObject *holder = f->ns == TN_NS_TENSOR ? tn_py_tensor_class() : ns_objects[f->ns];
    if (!holder) {
        PyErr_SetString(PyExc_RuntimeError, "torch function namespace not initialised");
        return NULL;
    }
    return PyObject_GetAttrString(holder, f->name);
}

static PyObject *handle_torch_function(const tn_pyfunc *f, const tn_match *m, PyObject *self, PyObject *const *args,
                                       Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *fn = public_function(f), *tup = NULL, *kw = NULL, *r = NULL;
    if (!fn) return NULL;
    Py_ssize_t off = self ? 1 : 0, nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    if (!(tup = PyTuple_New(nargs + off))) goto done;
    if (self) { Py_INCREF(self); PyTuple_SetItem(tup, 0, self); }
    for (Py_ssize_t i = 0; i < nargs; i++) { Py_INCREF(args[i]); PyTuple_SetItem(tup, i + off, args[i]); }
    if (!(kw = PyDict_New())) goto done;
    for (Py_ssize_t k = 0; k < nkw; k++)
        if (PyDict_SetItem(kw, PyTuple_GetItem(kwnames, k), args[nargs + k]) < 0) goto done;
    r = tn_tf_dispatch((const PyObject *const *)m->overloaded.items, m->overloaded.n, fn, tup, kw,
                       ns_public_module[f->ns], f->name);
done:
    Py_XDECREF(kw);
    Py_XDECREF(tup);
    Py_DECREF(fn);
    return r;
}

/* ---- the GIL and the profile ---------------------------------------------------------- */

/* Work big enough to be worth releasing the GIL for (a release/reacquire pair costs about
 * as much as a one-element add): upstream releases it around every kernel; we do it where
 * another Python thread can actually gain. */
#define TN_GIL_RELEASE_ELEMENTS 32768

/* Ops that touch process-wide state other than tensors keep the GIL: everything that may
 * draw from a generator (the default one included), and ops handed Python-side objects. */
static bool op_keeps_gil(int op) {
    static signed char memo[TN_OP_COUNT]; /* 0 unknown, 1 keeps, 2 may release */
    if (!memo[op]) {
        const tn_op_schema *s = &tn_op_schemas[op];
        bool keeps = strstr(s->schema, "Generator") || strstr(s->name, "dropout") ||
                     strstr(s->name, "rand") || strstr(s->name, "bernoulli") || strstr(s->name, "multinomial") ||
                     strstr(s->name, "normal") || strstr(s->name, "uniform") || strstr(s->name, "poisson");
        memo[op] = keeps ? 1 : 2;
    }
    return memo[op] == 1;
}

static bool worth_releasing(int op, const tn_value *vals) {
    int n = tn_op_schemas[op].nargs;
    /* elements counted up to the threshold only: the numels of expanded views (2**62 each)
     * would overflow a sum */
    int64_t elements = 0;
    for (int i = 0; i < n; i++) {
        const tn_value *v = &vals[i];
        if (v->tag == TN_V_TENSOR && v->u.t) {
            int64_t m = tn_tensor_numel(v->u.t);
            elements += m < TN_GIL_RELEASE_ELEMENTS ? m : TN_GIL_RELEASE_ELEMENTS;
        } else if (v->tag == TN_V_TENSORLIST) {
            for (int64_t k = 0; k < v->u.tlist.n && elements < TN_GIL_RELEASE_ELEMENTS; k++) {
                int64_t m = v->u.tlist.data[k] ? tn_tensor_numel(v->u.tlist.data[k]) : 0;
                elements += m < TN_GIL_RELEASE_ELEMENTS ? m : TN_GIL_RELEASE_ELEMENTS;
            }
        } else if (v->tag == TN_V_OPAQUE || v->tag == TN_V_GENERATOR) {
            return false;
        }
    }
    return elements >= TN_GIL_RELEASE_ELEMENTS && !op_keeps_gil(op);
}

/* TN_PROFILE=1 (or torch._C._tn_profile(True)): per-op call counts and time inside the
 * door (op implementation + kernels) and inside the whole binding call, so a decode step
 * can be split into kernels, binding and Python (bench/). */
static bool profile_on = false;
static struct { int64_t calls, door_ns, call_ns; } profile[TN_OP_COUNT];

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Runs the door with the GIL released when the work is worth it; releases the arena. */
static tn_status dispatch_maybe_unlocked(int op, tn_value *vals, tn_value *rets, tn_arena *arena) {
    int64_t t0 = profile_on ? mono_ns() : 0;
    tn_status st;
    if (worth_releasing(op, vals)) {
        PyThreadState *ts = PyEval_SaveThread();
        st = tn_dispatch((tn_op_id)op, vals, rets);
        PyEval_RestoreThread(ts);
    } else {
        st = tn_dispatch((tn_op_id)op, vals, rets);
    }
    tn_arena_release(arena);
    if (profile_on) {
        profile[op].calls++;
        profile[op].door_ns += mono_ns() - t0;
    }
    return st;
}

static PyObject *profile_set(PyObject *mod, PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    bool was = profile_on;
    profile_on = on;
    tn_autograd_profile_enable(on);
    return PyBool_FromLong(was);
}

static PyObject *profile_reset(PyObject *mod, PyObject *unused) {
    memset(profile, 0, sizeof profile);
    tn_autograd_profile_reset();
    Py_RETURN_NONE;
}

/* {"add.Tensor": (calls, seconds in the door, seconds in the whole binding call)}, and
 * {"backward:MulBackward0": (applications, seconds, seconds)} for the autograd engine's
 * nodes (formula plus the operators it dispatches, which the door rows do not count). */
static PyObject *profile_snapshot(PyObject *mod, PyObject *unused) {
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < TN_OP_COUNT; i++) {
        if (!profile[i].calls) continue;
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", tn_op_schemas[i].name, tn_op_schemas[i].overload[0] ? "." : "",
                 tn_op_schemas[i].overload);
        PyObject *v = Py_BuildValue("(Ldd)", (long long)profile[i].calls, profile[i].door_ns * 1e-9, profile[i].call_ns * 1e-9);
        if (!v || PyDict_SetItemString(d, key, v) < 0) { Py_XDECREF(v); Py_DECREF(d); return NULL; }
        Py_DECREF(v);
    }
    static tn_autograd_profile_row rows[512];
    int nr = d ? tn_autograd_profile_get(512, rows) : 0;
    for (int i = 0; d && i < nr; i++) {
        char key[80];
        snprintf(key, sizeof key, "backward:%.63s", rows[i].name);
        PyObject *v = Py_BuildValue("(Ldd)", (long long)rows[i].calls, rows[i].ns * 1e-9, rows[i].ns * 1e-9);
        if (!v || PyDict_SetItemString(d, key, v) < 0) { Py_XDECREF(v); Py_DECREF(d); return NULL; }
        Py_DECREF(v);
    }
    return d;
}

/* ---- the call ------------------------------------------------------------------------ */

static PyObject *tn_py_call_inner(int fidx, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                                  int *op_out);

static PyObject *tn_py_call(int fidx, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    if (!profile_on) return tn_py_call_inner(fidx, self, args, nargs, kwnames, NULL);
    int op = -1;
    int64_t t0 = mono_ns();
    PyObject *r = tn_py_call_inner(fidx, self, args, nargs, kwnames, &op);
    if (op >= 0) profile[op].call_ns += mono_ns() - t0;
    return r;
}

static PyObject *tn_py_call_inner(int fidx, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                                  int *op_out) {
    const tn_pyfunc *f = &tn_pyfuncs[fidx];
    if (f->ns != TN_NS_TENSOR) self = NULL;
    tn_match m;
    if (tn_argparse_match(f, self, args, nargs, kwnames, &m) < 0) return NULL;
    if (m.overloaded.n > 0 || tn_tf_mode_enabled()) return handle_torch_function(f, &m, self, args, nargs, kwnames);

    const tn_pysig *s = &tn_pysigs[m.sig];
    int use_out = s->op_out >= 0 && s->out_param >= 0 && m.dst[s->out_param] != NULL;
    tn_value vals[TN_ARG_MAX], rets[16];
    tn_arena arena;
    tn_arena_init(&arena);
    int op = tn_argparse_convert(&m, use_out, self, vals, &arena);
    if (op < 0) { tn_arena_release(&arena); return NULL; }
    if (op_out) *op_out = op;
    tn_status st = dispatch_maybe_unlocked(op, vals, rets, &arena);
    if (st != TN_OK) return tn_py_raise(st);
    if (tn_op_schemas[op].nrets == 0 && !strncmp(tn_op_schemas[op].name, "_foreach_", 9) && m.dst[0] &&
        PySequence_Check(m.dst[0]))
        return PySequence_List(m.dst[0]); /* upstream's binding hands in-place foreach ops' self back */
    PyObject *res = wrap_results(op, rets, use_out ? s->structseq_out : s->structseq, 1);
    if (res && s->requires_grad_param >= 0 && m.dst[s->requires_grad_param] == Py_True) set_requires_grad(res);
    return res;
}

/* Binary dunders turn TypeError into NotImplemented so Python tries the reflected op. */
static PyObject *not_implemented_on_type_error(PyObject *r) {
    if (!r && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    return r;
}

typedef PyObject *(*fastcall_kw)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);

#define TN_PY_FN(idx, ns, name)                                                                          \
    static PyObject *tn_pyfn_##idx(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) { \
        if (tn_pyfuncs[idx].flags & TN_FN_DUNDER)                                                        \
            return not_implemented_on_type_error(tn_py_call(idx, self, args, nargs, kw));                \
        return tn_py_call(idx, self, args, nargs, kw);                                                   \
    }
#include "pysig_generated.def"
#undef TN_PY_FN

static const fastcall_kw tn_trampolines[TN_PYFUNC_COUNT] = {
#define TN_PY_FN(idx, ns, name) [idx] = tn_pyfn_##idx,
#include "pysig_generated.def"
#undef TN_PY_FN
};

/* Upstream's hand-bound Tensor dunders that reuse a generated method's parser
 * (python_variable_methods.cpp): (dunder, method, TypeError -> NotImplemented). */
#define TN_TENSOR_ALIASES(X)                                                                              \
    X(0, "__add__", "add", 1) X(1, "__radd__", "add", 1) X(2, "__iadd__", "add_", 1)                       \
    X(3, "__sub__", "sub", 1) X(4, "__isub__", "sub_", 1) X(5, "__mul__", "mul", 1)                         \
    X(6, "__rmul__", "mul", 1) X(7, "__imul__", "mul_", 1) X(8, "__div__", "div", 1)                        \
    X(9, "__truediv__", "div", 1) X(10, "__idiv__", "div_", 1) X(11, "__floordiv__", "floor_divide", 1)     \
    X(12, "__ifloordiv__", "floor_divide_", 1) X(13, "__mod__", "remainder", 1)                            \
    X(14, "__imod__", "remainder_", 1) X(15, "__matmul__", "matmul", 1) X(16, "__eq__", "eq", 1)            \
    X(17, "__ne__", "ne", 1) X(18, "__lt__", "lt", 1) X(19, "__le__", "le", 1) X(20, "__gt__", "gt", 1)     \
    X(21, "__ge__", "ge", 1) X(22, "__rand__", "__and__", 1) X(23, "__ror__", "__or__", 1)                  \
    X(24, "__rxor__", "__xor__", 1) X(25, "__invert__", "bitwise_not", 0)
enum { TN_ALIAS_COUNT = 26 };
static int alias_target[TN_ALIAS_COUNT];

#define TN_X(k, dunder, target, notimpl)                                                                   \
    static PyObject *tn_alias_##k(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {  \
        PyObject *r = tn_py_call(alias_target[k], self, args, nargs, kw);                                   \
        return (notimpl) ? not_implemented_on_type_error(r) : r;                                            \
    }
TN_TENSOR_ALIASES(TN_X)
#undef TN_X
static const struct { const char *dunder, *target; fastcall_kw fn; } tn_aliases[TN_ALIAS_COUNT] = {
#define TN_X(k, dunder, target, notimpl) {dunder, target, tn_alias_##k},
    TN_TENSOR_ALIASES(TN_X)
#undef TN_X
};

static int find_func(int ns, const char *name) {
    const tn_py_namespace *n = &tn_py_namespaces[ns];
    for (int i = 0; i < n->nfuncs; i++)
        if (!strcmp(tn_pyfuncs[n->func0 + i].name, name)) return n->func0 + i;
    return -1;
}

/* PyMethodDef array for one namespace (NULL-terminated; lives for the process). Kept in
 * ns_defs: function objects point into it, so it must outlive them, and a second module
 * initialisation reuses it instead of leaking another (LeakSanitizer found the arrays
 * unreachable once the interpreter had finalised; docs/RELIABILITY.md). */
static PyMethodDef *ns_defs[TN_NS_COUNT];

static PyMethodDef *method_defs(int ns, int flags_extra, int with_aliases) {
    if (ns_defs[ns]) return ns_defs[ns];
    const tn_py_namespace *n = &tn_py_namespaces[ns];
    int extra = with_aliases ? TN_ALIAS_COUNT : 0;
    PyMethodDef *defs = PyMem_Calloc((size_t)(n->nfuncs + extra + 1), sizeof(PyMethodDef));
    if (!defs) return (PyMethodDef *)PyErr_NoMemory();
    int k = 0;
    for (int i = 0; i < n->nfuncs; i++) {
        defs[k].ml_name = tn_pyfuncs[n->func0 + i].name;
        defs[k].ml_meth = (PyCFunction)(void (*)(void))tn_trampolines[n->func0 + i];
        defs[k].ml_flags = METH_FASTCALL | METH_KEYWORDS | flags_extra;
        k++;
    }
    for (int a = 0; a < extra; a++) {
        int t = find_func(ns, tn_aliases[a].target);
        if (t < 0) continue;
        alias_target[a] = t;
        defs[k].ml_name = tn_aliases[a].dunder;
        defs[k].ml_meth = (PyCFunction)(void (*)(void))tn_aliases[a].fn;
        defs[k].ml_flags = METH_FASTCALL | METH_KEYWORDS;
        k++;
    }
    ns_defs[ns] = defs;
    return defs;
}

PyMethodDef *tn_py_tensor_method_defs(void) {
    static PyMethodDef *defs;
    if (!defs) defs = method_defs(TN_NS_TENSOR, 0, 1);
    return defs;
}

/* ---- torch.ops ----------------------------------------------------------------------- */

/* _tn_op_lookup(qualified_name, overload) -> op index or -1. "aten::add", "Tensor";
 * "default" and "" both name the default overload. */
static PyObject *op_lookup(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_tn_op_lookup(qualified_name, overload_name)");
        return NULL;
    }
    const char *q = PyUnicode_AsUTF8AndSize(args[0], NULL);
    const char *ov = PyUnicode_AsUTF8AndSize(args[1], NULL);
    if (!q || !ov) return NULL;
    if (!strncmp(q, "aten::", 6)) q += 6;
    else return PyLong_FromLong(-1);
    if (!strcmp(ov, "default")) ov = "";
    for (int i = 0; i < TN_OP_COUNT; i++)
        if (!strcmp(tn_op_schemas[i].name, q) && !strcmp(tn_op_schemas[i].overload, ov)) return PyLong_FromLong(i);
    return PyLong_FromLong(-1);
}

static PyObject *op_public_object(int op) {
    /* torch.ops.aten.<name>.<overload>, the object upstream hands to __torch_function__ */
    const tn_op_schema *s = &tn_op_schemas[op];
    PyObject *torch = PyImport_ImportModule("torch");
    if (!torch) return NULL;
    PyObject *ops = PyObject_GetAttrString(torch, "ops");
    Py_DECREF(torch);
    if (!ops) return NULL;
    PyObject *aten = PyObject_GetAttrString(ops, "aten");
    Py_DECREF(ops);
    if (!aten) return NULL;
    PyObject *pkt = PyObject_GetAttrString(aten, s->name);
    Py_DECREF(aten);
    if (!pkt) return NULL;
    PyObject *r = PyObject_GetAttrString(pkt, s->overload[0] ? s->overload : "default");
    Py_DECREF(pkt);
    return r;
}

/* _tn_call_op(op_index, *args, **kwargs): schema-based call of one aten overload. */
static PyObject *call_op(PyObject *mod, PyObject *const *args, Py_ssize_t nargs_f, PyObject *kwnames) {
    Py_ssize_t nargs = nargs_f; /* METH_FASTCALL: a plain count, no offset flag */
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "_tn_call_op(op_index, *args, **kwargs)");
        return NULL;
    }
    long op = PyLong_AsLong(args[0]);
    if (op == -1 && PyErr_Occurred()) return NULL;
    if (op < 0 || op >= TN_OP_COUNT) {
        PyErr_SetString(PyExc_IndexError, "operator index out of range");
        return NULL;
    }
    tn_value vals[TN_ARG_MAX], rets[16];
    tn_arena arena;
    tn_overloaded ov;
    tn_arena_init(&arena);
    if (tn_op_schemas[op].nargs > TN_ARG_MAX || tn_op_schemas[op].nrets > 16) {
        PyErr_Format(PyExc_NotImplementedError, "aten::%s has too many arguments for torchnative's binding",
                     tn_op_schemas[op].name);
        return NULL;
    }
    if (tn_argparse_schema((int)op, args + 1, nargs - 1, kwnames, vals, &arena, &ov) < 0) {
        tn_arena_release(&arena);
        return NULL;
    }
    if (ov.n > 0 || tn_tf_mode_enabled()) {
        tn_arena_release(&arena);
        PyObject *fn = op_public_object((int)op), *tup = NULL, *kw = NULL, *r = NULL;
        Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
        if (!fn) return NULL;
        if ((tup = PyTuple_New(nargs - 1)) && (kw = PyDict_New())) {
            for (Py_ssize_t i = 1; i < nargs; i++) { Py_INCREF(args[i]); PyTuple_SetItem(tup, i - 1, args[i]); }
            int ok = 1;
            for (Py_ssize_t k = 0; k < nkw && ok; k++) ok = PyDict_SetItem(kw, PyTuple_GetItem(kwnames, k), args[nargs + k]) == 0;
            if (ok) r = tn_tf_dispatch((const PyObject *const *)ov.items, ov.n, fn, tup, kw, "torch.ops.aten", tn_op_schemas[op].name);
        }
        Py_XDECREF(tup);
        Py_XDECREF(kw);
        Py_DECREF(fn);
        return r;
    }
    tn_status st = dispatch_maybe_unlocked((int)op, vals, rets, &arena);
    if (st != TN_OK) return tn_py_raise(st);
    /* A wrapped number comes back as a Python number, as upstream's toPyObject: an in-place
     * operator given a number for self (torch.ops.aten.div_(1j, 2)) returns it */
    bool wrapped = tn_op_schemas[op].nrets == 1 && rets[0].tag == TN_V_TENSOR &&
                   (rets[0].u.t->flags & TN_TENSOR_WRAPPED_NUMBER);
    PyObject *r = wrap_results((int)op, rets, -1, 0);
    if (!r || !wrapped) return r;
    PyObject *n = PyObject_CallMethod(r, "item", NULL);
    Py_DECREF(r);
    return n;
}

static PyMethodDef op_methods[] = {
    {"_tn_op_lookup", (PyCFunction)(void (*)(void))op_lookup, METH_FASTCALL, NULL},
    {"_tn_call_op", (PyCFunction)(void (*)(void))call_op, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"_tn_profile", (PyCFunction)profile_set, METH_O, NULL},
    {"_tn_profile_reset", (PyCFunction)profile_reset, METH_NOARGS, NULL},
    {"_tn_profile_snapshot", (PyCFunction)profile_snapshot, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* ---- init ---------------------------------------------------------------------------- */

/* upstream's structseq repr (and str): "torch.return_types.topk(\nvalues=...,\nindices=...)",
 * one field per line, where CPython's own prints them on one line. Installed on each type as
 * a method descriptor (the limited API cannot set the slot directly). */
static PyObject *structseq_repr(PyObject *self, PyObject *unused) {
    PyObject *t = (PyObject *)Py_TYPE(self);
    PyObject *mod = PyObject_GetAttrString(t, "__module__"), *name = PyObject_GetAttrString(t, "__name__");
    PyObject *fields = PyObject_GetAttrString(t, "__match_args__");
    PyObject *parts = PyList_New(0), *res = NULL;
    if (!mod || !name || !fields || !parts) goto done;
    if (!PyTuple_Check(fields)) {
        PyErr_SetString(PyExc_TypeError, "structseq repr: the type has no field names");
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyTuple_Size(fields); i++) {
        PyObject *item = PySequence_GetItem(self, i);
        PyObject *r = item ? PyObject_Repr(item) : NULL;
        PyObject *line = r ? PyUnicode_FromFormat("%U=%U", PyTuple_GetItem(fields, i), r) : NULL;
        Py_XDECREF(item);
        Py_XDECREF(r);
        if (!line || PyList_Append(parts, line) < 0) { Py_XDECREF(line); goto done; }
        Py_DECREF(line);
    }
    PyObject *sep = PyUnicode_FromString(",\n");
    PyObject *body = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    if (body) res = PyUnicode_FromFormat("%U.%U(\n%U)", mod, name, body);
    Py_XDECREF(body);
done:
    Py_XDECREF(mod), Py_XDECREF(name), Py_XDECREF(fields), Py_XDECREF(parts);
    return res;
}

static PyMethodDef structseq_repr_def = {"__repr__", structseq_repr, METH_NOARGS, NULL};

static int add_return_types(PyObject *module) {
    PyObject *rt = PyModule_New("torch._C._return_types");
    if (!rt) return -1;
    for (int i = 0; i < TN_STRUCTSEQ_COUNT; i++) {
        const tn_structseq *d = &tn_structseqs[i];
        PyStructSequence_Field fields[17];
        for (int k = 0; k < d->nfields; k++) fields[k] = (PyStructSequence_Field){d->fields[k], NULL};
        fields[d->nfields] = (PyStructSequence_Field){NULL, NULL};
        char tname[160];
        snprintf(tname, sizeof tname, "torch.return_types.%s", d->name);
        PyStructSequence_Desc desc = {tname, NULL, fields, d->nfields};
        PyTypeObject *t = PyStructSequence_NewType(&desc);
        if (!t) { Py_DECREF(rt); return -1; }
        PyObject *repr = PyDescr_NewMethod(t, &structseq_repr_def);
        int bad = !repr || PyObject_SetAttrString((PyObject *)t, "__repr__", repr) < 0;
        Py_XDECREF(repr);
        if (bad) { Py_DECREF((PyObject *)t); Py_DECREF(rt); return -1; }
        structseq_types[i] = (PyObject *)t;
        if (!PyObject_HasAttrString(rt, d->name)) {
            Py_INCREF((PyObject *)t);
            if (PyModule_AddObject(rt, d->name, (PyObject *)t) < 0) { Py_DECREF((PyObject *)t); Py_DECREF(rt); return -1; }
        }
    }
    if (PyModule_AddObject(module, "_return_types", rt) < 0) { Py_DECREF(rt); return -1; }
    return 0;
}

static int add_submodule(PyObject *module, int ns) {
    const char *full = tn_py_namespaces[ns].module;   /* "torch._C._nn" */
    PyObject *sub = PyModule_New(full);
    if (!sub) return -1;
    PyMethodDef *defs = method_defs(ns, 0, 0);
    if (!defs || PyModule_AddFunctions(sub, defs) < 0) { Py_DECREF(sub); return -1; }
    ns_objects[ns] = sub;
    Py_INCREF(sub);
    if (PyModule_AddObject(module, strrchr(full, '.') + 1, sub) < 0) { Py_DECREF(sub); return -1; }
    return 0;
}

int tn_py_add_functions(PyObject *module) {
    const char *prof = getenv("TN_PROFILE");
    profile_on = prof && *prof && *prof != '0';
    tn_autograd_profile_enable(profile_on);
    if (add_return_types(module) < 0) return -1;
    /* _VariableFunctionsClass: static methods; the instance _VariableFunctions is what
     * torch/__init__.py walks with dir() to fill the torch namespace */
    PyMethodDef *defs = method_defs(TN_NS_TORCH, METH_STATIC, 0);
    if (!defs) return -1;
    PyType_Slot slots[] = {{Py_tp_methods, defs}, {0, NULL}};
    PyType_Spec spec = {"torch._C._VariableFunctionsClass", sizeof(PyObject), 0, Py_TPFLAGS_DEFAULT, slots};
    PyObject *cls = PyType_FromSpec(&spec);
    if (!cls) return -1;
    PyObject *inst = PyObject_CallNoArgs(cls);
    if (!inst) { Py_DECREF(cls); return -1; }
    ns_objects[TN_NS_TORCH] = inst;
    Py_INCREF(inst);
    if (PyModule_AddObject(module, "_VariableFunctionsClass", cls) < 0) { Py_DECREF(cls); Py_DECREF(inst); return -1; }
    if (PyModule_AddObject(module, "_VariableFunctions", inst) < 0) { Py_DECREF(inst); return -1; }
    for (int ns = TN_NS_NN; ns < TN_NS_COUNT; ns++)
        if (add_submodule(module, ns) < 0) return -1;
    PyObject *modname = PyUnicode_FromString("torch._C");
    if (!modname) return -1;
    for (PyMethodDef *d = op_methods; d->ml_name; d++) {
        PyObject *f = PyCFunction_NewEx(d, NULL, modname);
        if (!f || PyModule_AddObject(module, d->ml_name, f) < 0) { Py_XDECREF(f); Py_DECREF(modname); return -1; }
    }
    Py_DECREF(modname);
    return 0;
}
