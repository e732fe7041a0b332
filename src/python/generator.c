/* generator.c — torch._C.Generator over the core tn_generator, torch._C.default_generator,
 * and _set_generator_metaclass (upstream late-binds the metaclass from Python). */
#include "binding.h"

#include "core/generator.h"

typedef struct {
    PyObject_HEAD
    tn_generator *g;
    int owned; /* 0 for the default generator */
} TNGeneratorObject;

static PyTypeObject *tn_generator_impl;
static PyObject *tn_generator_class; /* Generator (instance of a metaclass deriving from type) */
static PyObject *tn_default_generator_obj;

#define G(self) (((TNGeneratorObject *)(self))->g)

int tn_py_is_generator(PyObject *o) { return PyObject_TypeCheck(o, tn_generator_impl); }
void *tn_py_generator_get(PyObject *o) { return G(o); }
PyObject *tn_py_default_generator(void) { return tn_default_generator_obj; }

static PyObject *gen_wrap(PyTypeObject *cls, tn_generator *g, int owned) {
    allocfunc alloc = (allocfunc)PyType_GetSlot(cls, Py_tp_alloc);
    PyObject *o = alloc(cls, 0);
    if (!o) { if (owned) tn_generator_free(g); return NULL; }
    G(o) = g;
    ((TNGeneratorObject *)o)->owned = owned;
    g->pyobj = o;
    return o;
}

static PyObject *gen_new(PyTypeObject *cls, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"device", NULL};
    PyObject *device = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Generator", kwlist, &device)) return NULL;
    if (device != Py_None) {
        tn_device d;
        if (tn_py_parse_device(device, &d) < 0) return NULL;
        if (d.type != TN_DEVICE_CPU) {
            PyErr_SetString(PyExc_RuntimeError, "Device type is not supported by torchnative's Generator (only cpu)");
            return NULL;
        }
    }
    tn_generator *g;
    tn_status st = tn_generator_new(TN_GENERATOR_DEFAULT_SEED, &g);
    if (st != TN_OK) return tn_py_raise(st);
    return gen_wrap(cls, g, 1);
}

static void gen_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    TNGeneratorObject *o = (TNGeneratorObject *)self;
    if (o->g) {
        o->g->pyobj = NULL;
        if (o->owned) tn_generator_free(o->g);
    }
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

static PyObject *gen_manual_seed(PyObject *self, PyObject *seed) {
    PyObject *i = PyNumber_Index(seed);
    if (!i) return NULL;
    /* upstream accepts the int64 and uint64 ranges; negative seeds wrap to uint64 */
    unsigned long long v = PyLong_AsUnsignedLongLongMask(i);
    int neg = PyObject_RichCompareBool(i, PyLong_FromLong(0), Py_LT);
    if (!neg) {
        PyObject *mx = PyLong_FromUnsignedLongLong(0xFFFFFFFFFFFFFFFFull);
        int over = PyObject_RichCompareBool(i, mx, Py_GT);
        Py_DECREF(mx);
        if (over) {
            Py_DECREF(i);
            PyErr_SetString(PyExc_RuntimeError, "Overflow when unpacking long long");
            return NULL;
        }
    }
    Py_DECREF(i);
    if (PyErr_Occurred()) return NULL;
    tn_generator_set_seed(G(self), (uint64_t)v);
    Py_INCREF(self);
    return self;
}

static PyObject *gen_seed(PyObject *self, PyObject *u) { return PyLong_FromUnsignedLongLong(tn_generator_seed(G(self))); }
static PyObject *gen_initial_seed(PyObject *self, PyObject *u) {
    return PyLong_FromUnsignedLongLong(tn_generator_initial_seed(G(self)));
}

static PyObject *gen_get_state(PyObject *self, PyObject *u) {
    tn_tensor *t;
    tn_status st = tn_generator_get_state_tensor(G(self), &t);
    if (st != TN_OK) return tn_py_raise(st);
    return tn_py_tensor_wrap(t);
}

static PyObject *gen_set_state(PyObject *self, PyObject *state) {
    if (!tn_py_is_tensor(state)) {
        PyErr_Format(PyExc_TypeError, "expected a torch.ByteTensor, but got %s", Py_TYPE(state) == NULL ? "?" : "object");
        return NULL;
    }
    tn_status st = tn_generator_set_state_tensor(G(self), tn_py_tensor_get(state));
    if (st != TN_OK) return tn_py_raise(st);
    Py_INCREF(self);
    return self;
}

static PyObject *gen_clone_state(PyObject *self, PyObject *u) {
    tn_generator *g;
    tn_status st = tn_generator_clone(G(self), &g);
    if (st != TN_OK) return tn_py_raise(st);
    return gen_wrap(Py_TYPE(self), g, 1);
}

static PyObject *gen_device(PyObject *self, void *c) { return tn_py_device_new(tn_device_cpu()); }

static PyObject *gen_reduce(PyObject *self, PyObject *u) {
    PyObject *state = gen_get_state(self, NULL);
    if (!state) return NULL;
    PyObject *dev = tn_py_device_new(tn_device_cpu());
    return Py_BuildValue("(O(N)(KON))", (PyObject *)Py_TYPE(self), dev,
                         (unsigned long long)tn_generator_initial_seed(G(self)), Py_None, state);
}

static PyObject *gen_setstate(PyObject *self, PyObject *st) {
    PyObject *seed, *offset, *state;
    if (!PyArg_ParseTuple(st, "OOO:__setstate__", &seed, &offset, &state)) return NULL;
    PyObject *r = gen_manual_seed(self, seed);
    if (!r) return NULL;
    Py_DECREF(r);
    r = gen_set_state(self, state);
    if (!r) return NULL;
    Py_DECREF(r);
    Py_RETURN_NONE;
}

static PyObject *gen_refuse_offset(PyObject *self, PyObject *a) {
    PyErr_SetString(PyExc_RuntimeError, "Generator offsets are not supported on CPU (Philox generators only)");
    return NULL;
}

static PyObject *gen_refuse_graphsafe(PyObject *self, PyObject *a) {
    PyErr_SetString(PyExc_NotImplementedError, "torch._C.Generator.graphsafe_* is not implemented by torchnative");
    return NULL;
}

static PyMethodDef gen_methods[] = {
    {"manual_seed", gen_manual_seed, METH_O, NULL},
    {"seed", gen_seed, METH_NOARGS, NULL},
    {"initial_seed", gen_initial_seed, METH_NOARGS, NULL},
    {"get_state", gen_get_state, METH_NOARGS, NULL},
    {"set_state", gen_set_state, METH_O, NULL},
    {"clone_state", gen_clone_state, METH_NOARGS, NULL},
    {"graphsafe_get_state", gen_refuse_graphsafe, METH_NOARGS, NULL},
    {"graphsafe_set_state", gen_refuse_graphsafe, METH_O, NULL},
    {"set_offset", gen_refuse_offset, METH_O, NULL},
    {"get_offset", gen_refuse_offset, METH_NOARGS, NULL},
    {"__reduce__", gen_reduce, METH_NOARGS, NULL},
    {"__setstate__", gen_setstate, METH_O, NULL},
    {NULL},
};
static PyGetSetDef gen_getset[] = {{"device", gen_device, NULL, NULL, NULL}, {NULL}};
static PyType_Slot gen_slots[] = {
    {Py_tp_new, gen_new}, {Py_tp_dealloc, gen_dealloc}, {Py_tp_methods, gen_methods},
    {Py_tp_getset, gen_getset}, {0, NULL},
};

/* _set_generator_metaclass(meta): Generator's metaclass becomes `meta` (a type subclass). */
static PyObject *f_set_generator_metaclass(PyObject *m, PyObject *meta) {
    if (PyObject_SetAttrString(tn_generator_class, "__class__", meta) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef gen_functions[] = {
    {"_set_generator_metaclass", f_set_generator_metaclass, METH_O, NULL},
    {NULL},
};

int tn_py_init_generator(PyObject *m) {
    PyType_Spec spec = {"torch._C._GeneratorImpl", sizeof(TNGeneratorObject), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, gen_slots};
    tn_generator_impl = (PyTypeObject *)PyType_FromSpec(&spec);
    if (!tn_generator_impl) return -1;
    /* A metaclass of our own (a plain `type` subclass) so that _set_generator_metaclass can
     * later switch it by __class__ assignment, which a static metatype would forbid. */
    PyObject *meta = PyObject_CallFunction((PyObject *)&PyType_Type, "s(O){s:s}", "_GeneratorMeta",
                                           (PyObject *)&PyType_Type, "__module__", "torch._C");
    if (!meta) return -1;
    tn_generator_class = PyObject_CallFunction(meta, "s(O){s:s,s:()}", "Generator", (PyObject *)tn_generator_impl,
                                               "__module__", "torch._C", "__slots__");
    Py_DECREF(meta);
    if (!tn_generator_class) return -1;
    tn_default_generator_obj = gen_wrap((PyTypeObject *)tn_generator_class, tn_generator_default(), 0);
    if (!tn_default_generator_obj) return -1;
    if (PyModule_AddObjectRef(m, "Generator", tn_generator_class) < 0 ||
        PyModule_AddObjectRef(m, "default_generator", tn_default_generator_obj) < 0 ||
        PyModule_AddFunctions(m, gen_functions) < 0)
        return -1;
    return 0;
}
