/* graph.c — torch._C._tn_graph_capture_begin/_end and the _TNGraph object (replay), the
 * binding of src/ops/graph.c. torchnative.graphs builds the user-facing API on these. */
#include "binding.h"

#include "ops/graph.h"

typedef struct {
    PyObject_HEAD
    tn_graph *g;
} GraphObject;

static PyTypeObject *graph_type;

static void graph_dealloc(PyObject *self) {
    tn_graph_free(((GraphObject *)self)->g);
    PyTypeObject *tp = Py_TYPE(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* replay(profile=False): runs the recorded operator calls again, without the GIL. */
static PyObject *graph_replay(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"profile", NULL};
    int profile = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:replay", kwlist, &profile)) return NULL;
    tn_graph *g = ((GraphObject *)self)->g;
    if (!g) { PyErr_SetString(PyExc_RuntimeError, "this graph was released"); return NULL; }
    tn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tn_graph_replay(g, profile != 0);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return tn_py_raise(st);
    Py_RETURN_NONE;
}

/* counts(): (skipped views, reruns in place, functional reruns into place, of which the
 * last replay computed straight into the captured result, steps the last replay ran inside
 * chains). */
static PyObject *graph_counts(PyObject *self, PyObject *u) {
    tn_graph *g = ((GraphObject *)self)->g;
    int64_t s = 0, r = 0, i = 0, d = 0, c = 0;
    if (g) tn_graph_counts(g, &s, &r, &i), d = tn_graph_direct_steps(g), c = tn_graph_chained_steps(g);
    return Py_BuildValue("(LLLLL)", (long long)s, (long long)r, (long long)i, (long long)d, (long long)c);
}

/* steps(): [("name.overload", kind, profiled ns), ...] in recorded order. */
static PyObject *graph_steps(PyObject *self, PyObject *u) {
    tn_graph *g = ((GraphObject *)self)->g;
    int64_t n = g ? tn_graph_size(g) : 0;
    PyObject *l = PyList_New(n);
    static const char *kinds[] = {"skip", "rerun", "into"};
    for (int64_t i = 0; l && i < n; i++) {
        tn_op_id op;
        int kind;
        double ns;
        tn_graph_step_info(g, i, &op, &kind, &ns);
        const tn_op_schema *s = &tn_op_schemas[op];
        PyObject *t = Py_BuildValue("(s#sd)", "", (Py_ssize_t)0, kinds[kind], ns);
        PyObject *name = PyUnicode_FromFormat("%s.%s", s->name, s->overload[0] ? s->overload : "default");
        if (!t || !name) { Py_XDECREF(t); Py_XDECREF(name); Py_DECREF(l); return NULL; }
        PyTuple_SetItem(t, 0, name);
        PyList_SetItem(l, i, t);
    }
    return l;
}

/* release(): frees the recorded steps and the tensors they hold now. */
static PyObject *graph_release(PyObject *self, PyObject *u) {
    tn_graph_free(((GraphObject *)self)->g);
    ((GraphObject *)self)->g = NULL;
    Py_RETURN_NONE;
}

static PyObject *graph_failure(PyObject *self, void *c) {
    tn_graph *g = ((GraphObject *)self)->g;
    const char *f = g ? tn_graph_failure(g) : "this graph was released";
    if (!f) Py_RETURN_NONE;
    return PyUnicode_FromString(f);
}

static PyMethodDef graph_methods[] = {
    {"replay", (PyCFunction)(void (*)(void))graph_replay, METH_VARARGS | METH_KEYWORDS, NULL},
    {"steps", graph_steps, METH_NOARGS, NULL},
    {"counts", graph_counts, METH_NOARGS, NULL},
    {"release", graph_release, METH_NOARGS, NULL},
    {NULL},
};
static PyGetSetDef graph_getset[] = {{"failure", graph_failure, NULL, NULL, NULL}, {NULL}};
static PyType_Slot graph_slots[] = {
    {Py_tp_dealloc, graph_dealloc}, {Py_tp_methods, graph_methods}, {Py_tp_getset, graph_getset}, {0, NULL}};
static PyType_Spec graph_spec = {"torch._C._TNGraph", sizeof(GraphObject), 0, Py_TPFLAGS_DEFAULT, graph_slots};

static PyObject *f_capture_begin(PyObject *m, PyObject *u) {
    tn_status st = tn_graph_capture_begin();
    if (st != TN_OK) return tn_py_raise(st);
    Py_RETURN_NONE;
}

static PyObject *f_capture_end(PyObject *m, PyObject *u) {
    tn_graph *g = tn_graph_capture_end();
    if (!g) { PyErr_SetString(PyExc_RuntimeError, "no graph capture is active on this thread"); return NULL; }
    GraphObject *o = PyObject_New(GraphObject, graph_type);
    if (!o) { tn_graph_free(g); return NULL; }
    o->g = g;
    return (PyObject *)o;
}

static PyObject *f_capturing(PyObject *m, PyObject *u) { return PyBool_FromLong(tn_graph_capturing()); }

static PyMethodDef graph_functions[] = {
    {"_tn_graph_capture_begin", f_capture_begin, METH_NOARGS, NULL},
    {"_tn_graph_capture_end", f_capture_end, METH_NOARGS, NULL},
    {"_tn_graph_capturing", f_capturing, METH_NOARGS, NULL},
    {NULL},
};

int tn_py_init_graph(PyObject *m) {
    graph_type = (PyTypeObject *)PyType_FromSpec(&graph_spec);
    if (!graph_type) return -1;
    if (PyModule_AddObjectRef(m, "_TNGraph", (PyObject *)graph_type) < 0) return -1;
    return PyModule_AddFunctions(m, graph_functions);
}
