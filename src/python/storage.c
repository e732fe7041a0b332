/* storage.c — torch._C.StorageBase (torch.UntypedStorage's C base): byte storage objects
 * over tn_storage. Slicing aliases (safetensors and torch.load rely on it), from_file maps
 * a file, and Tensor.untyped_storage() / Tensor.set_() connect storages to tensors. */
#include "binding.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    PyObject_HEAD
    tn_storage *s;
} TNStorageObject;

static PyTypeObject *tn_storage_base;
#define S(self) (((TNStorageObject *)(self))->s)

int tn_py_is_storage(PyObject *o) { return PyObject_TypeCheck(o, tn_storage_base); }
tn_storage *tn_py_storage_get(PyObject *o) { return S(o); }

/* The torch.UntypedStorage class (looked up once torch.storage is importable). */
static PyObject *untyped_class(void) {
    PyObject *mod = PyImport_ImportModule("torch.storage");
    if (!mod) { PyErr_Clear(); Py_INCREF((PyObject *)tn_storage_base); return (PyObject *)tn_storage_base; }
    PyObject *c = PyObject_GetAttrString(mod, "UntypedStorage");
    Py_DECREF(mod);
    if (!c) { PyErr_Clear(); Py_INCREF((PyObject *)tn_storage_base); return (PyObject *)tn_storage_base; }
    return c;
}

static PyObject *storage_alloc(PyTypeObject *cls, tn_storage *s) {
    allocfunc alloc = (allocfunc)PyType_GetSlot(cls, Py_tp_alloc);
    PyObject *o = alloc(cls, 0);
    if (!o) { tn_storage_release(s); return NULL; }
    S(o) = s;
    if (!s->pyobj) s->pyobj = o;
    return o;
}

/* New reference to the Python storage object of s (reference to s stolen). */
PyObject *tn_py_storage_wrap(tn_storage *s) {
    if (s->pyobj) {
        Py_INCREF((PyObject *)s->pyobj);
        tn_storage_release(s);
        return s->pyobj;
    }
    PyObject *cls = untyped_class();
    PyObject *o = storage_alloc((PyTypeObject *)cls, s);
    Py_DECREF(cls);
    return o;
}

static void storage_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    tn_storage *s = S(self);
    if (s) {
        if (s->pyobj == self) s->pyobj = NULL;
        tn_storage_release(s);
    }
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
    Py_DECREF(tp);
}

static PyObject *storage_new(PyTypeObject *cls, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"", "device", NULL};
    PyObject *arg = NULL, *device = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$O:UntypedStorage", kwlist, &arg, &device)) return NULL;
    tn_device dev = tn_device_cpu();
    if (device != Py_None && tn_py_parse_device(device, &dev) < 0) return NULL;
    if (dev.type != TN_DEVICE_CPU && dev.type != TN_DEVICE_META) {
        PyErr_SetString(PyExc_RuntimeError, "torchnative storages live on cpu or meta");
        return NULL;
    }
    tn_storage *s;
    tn_status st;
    if (!arg) {
        st = tn_storage_new(0, dev, false, &s);
    } else if (PyLong_Check(arg)) {
        long long n = PyLong_AsLongLong(arg);
        if (n == -1 && PyErr_Occurred()) return NULL;
        st = tn_storage_new(n, dev, false, &s);
    } else {
        /* sequence of byte values */
        PyObject *seq = PySequence_Fast(arg, "UntypedStorage(): expected an int or a sequence");
        if (!seq) return NULL;
        Py_ssize_t n = PySequence_Size(seq);
        st = tn_storage_new(n, dev, false, &s);
        for (Py_ssize_t i = 0; st == TN_OK && i < n; i++) {
            long v = PyLong_AsLong(PySequence_GetItem(seq, i));
            ((uint8_t *)s->data)[i] = (uint8_t)v;
        }
        Py_DECREF(seq);
        if (PyErr_Occurred()) return NULL;
    }
    if (st != TN_OK) return tn_py_raise(st);
    return storage_alloc(cls, s);
}

static PyObject *m_nbytes(PyObject *self, PyObject *u) { return PyLong_FromLongLong(S(self)->nbytes); }
static Py_ssize_t m_len(PyObject *self) {
    /* -1 from sq_length means "exception set": never return it without one */
    if (S(self)->nbytes < 0) {
        PyErr_SetString(PyExc_RuntimeError, "storage has a negative size");
        return -1;
    }
    return (Py_ssize_t)S(self)->nbytes;
}
static PyObject *m_data_ptr(PyObject *self, PyObject *u) { return PyLong_FromVoidPtr(S(self)->data); }
static PyObject *m_element_size(PyObject *self, PyObject *u) { return PyLong_FromLong(1); }
static PyObject *m_resizable(PyObject *self, PyObject *u) { return PyBool_FromLong(S(self)->resizable); }
static PyObject *m_is_shared(PyObject *self, PyObject *u) { Py_RETURN_FALSE; }
static PyObject *m_cdata(PyObject *self, void *c) { return PyLong_FromVoidPtr(S(self)); }
static PyObject *m_device(PyObject *self, void *c) { return tn_py_device_new(S(self)->device); }

static void release_parent(void *ctx, void *data) { tn_storage_release((tn_storage *)ctx); }

static PyObject *m_getitem(PyObject *self, PyObject *key) {
    tn_storage *s = S(self);
    if (PySlice_Check(key)) {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
        Py_ssize_t len = PySlice_AdjustIndices((Py_ssize_t)s->nbytes, &start, &stop, step);
        if (step != 1) {
            PyErr_Format(PyExc_RuntimeError, "Trying to slice with a step of %zd, but only a step of 1 is supported", step);
            return NULL;
        }
        /* An aliasing view: new storage over the parent's bytes, keeping the parent alive. */
        tn_storage_retain(s);
        tn_storage *v = tn_storage_borrow(s->data ? (char *)s->data + start : NULL, len, s->device, release_parent, s);
        if (!v) { tn_storage_release(s); return PyErr_NoMemory(); }
        PyObject *cls = untyped_class();
        PyObject *o = storage_alloc((PyTypeObject *)cls, v);
        Py_DECREF(cls);
        return o;
    }
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0) i += s->nbytes;
    if (i < 0 || i >= s->nbytes) {
        PyErr_Format(PyExc_IndexError, "index %zd out of range for storage of size %lld", i, (long long)s->nbytes);
        return NULL;
    }
    return PyLong_FromLong(((uint8_t *)s->data)[i]);
}

static int m_setitem(PyObject *self, PyObject *key, PyObject *value) {
    tn_storage *s = S(self);
    if (!value) { PyErr_SetString(PyExc_TypeError, "storage items cannot be deleted"); return -1; }
    long v = PyLong_AsLong(value);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (PySlice_Check(key)) {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(key, &start, &stop, &step) < 0) return -1;
        PySlice_AdjustIndices((Py_ssize_t)s->nbytes, &start, &stop, step);
        for (Py_ssize_t i = start; i < stop; i += step) ((uint8_t *)s->data)[i] = (uint8_t)v;
        return 0;
    }
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return -1;
    if (i < 0) i += s->nbytes;
    if (i < 0 || i >= s->nbytes) { PyErr_SetString(PyExc_IndexError, "index out of range"); return -1; }
    ((uint8_t *)s->data)[i] = (uint8_t)v;
    return 0;
}

static PyObject *m_fill_(PyObject *self, PyObject *value) {
    long v = PyLong_AsLong(value);
    if (v == -1 && PyErr_Occurred()) return NULL;
    if (S(self)->data) memset(S(self)->data, (int)(uint8_t)v, (size_t)S(self)->nbytes);
    Py_INCREF(self);
    return self;
}

static PyObject *m_copy_(PyObject *self, PyObject *args) {
    PyObject *src;
    int nb = 0;
    if (!PyArg_ParseTuple(args, "O|p:copy_", &src, &nb)) return NULL;
    if (!tn_py_is_storage(src)) { PyErr_SetString(PyExc_TypeError, "copy_(): expected a storage"); return NULL; }
    tn_storage *d = S(self), *s = S(src);
    if (d->nbytes != s->nbytes) {
        PyErr_SetString(PyExc_RuntimeError, "size does not match");
        return NULL;
    }
    if (d->data && s->data) memmove(d->data, s->data, (size_t)d->nbytes);
    Py_INCREF(self);
    return self;
}

/* Upstream's THPUtils_checkLong: an int that is not a bool, or a numpy integer. */
static int is_long_arg(PyObject *n) {
    if (PyBool_Check(n)) return 0;
    if (PyLong_Check(n)) return 1;
    if (!PyIndex_Check(n)) return 0;
    PyObject *mod = PyObject_GetAttrString((PyObject *)Py_TYPE(n), "__module__");
    int np = mod && PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "numpy") == 0;
    Py_XDECREF(mod);
    PyErr_Clear();
    return np;
}

static PyObject *m_resize_(PyObject *self, PyObject *n) {
    /* upstream's argument errors: RuntimeError for a non-int, ValueError on overflow */
    if (!is_long_arg(n)) {
        PyObject *tn = PyObject_GetAttrString((PyObject *)Py_TYPE(n), "__name__");
        if (tn) PyErr_Format(PyExc_RuntimeError, "resize_ expects an int, but got %U", tn);
        Py_XDECREF(tn);
        return NULL;
    }
    PyObject *idx = PyNumber_Index(n);
    if (!idx) return NULL;
    int overflow = 0;
    long long nb = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (overflow) {
        PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
        return NULL;
    }
    if (nb == -1 && PyErr_Occurred()) return NULL;
    tn_status st = tn_storage_resize(S(self), nb);
    if (st != TN_OK) return tn_py_raise(st);
    S(self)->nbytes = nb;
    Py_INCREF(self);
    return self;
}

typedef struct { void *base; size_t len; } tn_mapping;
static void release_mapping(void *ctx, void *data) {
    tn_mapping *m = ctx;
    munmap(m->base, m->len);
    free(m);
}

/* from_file(filename, shared=False, nbytes=0): the file's bytes, memory-mapped (copy-on-write
 * when not shared), so checkpoints are read lazily and never copied. */
static PyObject *m_from_file(PyObject *cls, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"filename", "shared", "nbytes", "size", NULL};
    PyObject *fname;
    int shared = 0;
    long long nbytes = 0, size = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|pLL:from_file", kwlist, &fname, &shared, &nbytes, &size)) return NULL;
    PyObject *b = NULL;
    if (!PyUnicode_FSConverter(fname, &b)) return NULL;
    const char *path = PyBytes_AsString(b);
    if (size >= 0 && nbytes == 0) nbytes = size;
    int fd = open(path, shared ? O_RDWR | O_CREAT : O_RDONLY, 0644);
    if (fd < 0) {
        PyErr_SetFromErrnoWithFilenameObject(PyExc_RuntimeError, fname);
        Py_DECREF(b);
        return NULL;
    }
    struct stat stt;
    fstat(fd, &stt);
    if (nbytes == 0) nbytes = stt.st_size;
    if (shared && stt.st_size < nbytes && ftruncate(fd, nbytes) < 0) {
        close(fd);
        Py_DECREF(b);
        return PyErr_SetFromErrno(PyExc_RuntimeError);
    }
    if (!shared && stt.st_size < nbytes) {
        close(fd);
        PyErr_Format(PyExc_RuntimeError, "unable to mmap %lld bytes from file <%s>: Cannot allocate memory (12)", nbytes, path);
        Py_DECREF(b);
        return NULL;
    }
    Py_DECREF(b);
    void *p = NULL;
    tn_mapping *mp = NULL;
    if (nbytes > 0) {
        p = mmap(NULL, (size_t)nbytes, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) { close(fd); return PyErr_SetFromErrno(PyExc_RuntimeError); }
        mp = malloc(sizeof *mp);
        mp->base = p;
        mp->len = (size_t)nbytes;
    }
    close(fd);
    tn_storage *s = tn_storage_borrow(p, nbytes, tn_device_cpu(), mp ? release_mapping : NULL, mp);
    if (!s) return PyErr_NoMemory();
    return storage_alloc((PyTypeObject *)cls, s);
}

static PyObject *m_from_buffer(PyObject *cls, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"buffer", "byte_order", "count", "offset", "dtype", NULL};
    PyObject *buffer, *bo = NULL, *dtype = NULL;
    long long count = -1, offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OLLO:from_buffer", kwlist, &buffer, &bo, &count, &offset, &dtype))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(buffer, &view, PyBUF_SIMPLE) < 0) return NULL;
    long long n = count < 0 ? (long long)view.len - offset : count;
    tn_storage *s;
    tn_status st = tn_storage_new(n, tn_device_cpu(), false, &s);
    if (st == TN_OK && n > 0) memcpy(s->data, (char *)view.buf + offset, (size_t)n);
    PyBuffer_Release(&view);
    if (st != TN_OK) return tn_py_raise(st);
    return storage_alloc((PyTypeObject *)cls, s);
}

static PyObject *m_new(PyObject *self, PyObject *u) {
    tn_storage *s;
    tn_status st = tn_storage_new(0, S(self)->device, false, &s);
    if (st != TN_OK) return tn_py_raise(st);
    return storage_alloc(Py_TYPE(self), s);
}

static PyObject *m_weak_ref(PyObject *self, PyObject *a) {
    /* weak refs to storages are used by the serialization cache; a strong id is enough */
    return PyLong_FromVoidPtr(S(self));
}

static PyObject *m_fix_weakref(PyObject *self, PyObject *u) { Py_RETURN_NONE; }

/* The legacy serialization record of a storage: [int64 element count if save_size] then
 * the raw bytes, read and written through the Python file object's methods. */
static int file_write(PyObject *f, const void *data, int64_t n) {
    PyObject *mv = PyMemoryView_FromMemory((char *)data, (Py_ssize_t)n, PyBUF_READ);
    if (!mv) return -1;
    PyObject *r = PyObject_CallMethod(f, "write", "O", mv);
    Py_DECREF(mv);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static int file_read_exact(PyObject *f, void *data, int64_t n) {
    int64_t got = 0;
    while (got < n) {
        PyObject *mv = PyMemoryView_FromMemory((char *)data + got, (Py_ssize_t)(n - got), PyBUF_WRITE);
        if (!mv) return -1;
        PyObject *r = PyObject_CallMethod(f, "readinto", "O", mv);
        Py_DECREF(mv);
        if (!r) return -1;
        long long k = r == Py_None ? 0 : PyLong_AsLongLong(r);
        Py_DECREF(r);
        if (k <= 0) {
            PyErr_Format(PyExc_RuntimeError, "unexpected EOF, expected %lld more bytes. The file might be corrupted.",
                         (long long)(n - got));
            return -1;
        }
        got += k;
    }
    return 0;
}

/* _write_file(f, is_real_file, save_size, element_size) */
static PyObject *m_write_file(PyObject *self, PyObject *args) {
    PyObject *f;
    int is_real, save_size;
    long long elem;
    if (!PyArg_ParseTuple(args, "OppL:_write_file", &f, &is_real, &save_size, &elem)) return NULL;
    tn_storage *s = S(self);
    if (elem <= 0 || s->nbytes % elem) {
        PyErr_SetString(PyExc_RuntimeError, "_write_file: storage size is not a multiple of element_size");
        return NULL;
    }
    if (save_size) {
        int64_t count = s->nbytes / elem; /* little-endian int64, as upstream */
        if (file_write(f, &count, 8) < 0) return NULL;
    }
    if (s->nbytes && file_write(f, s->data, s->nbytes) < 0) return NULL;
    Py_RETURN_NONE;
}

/* _set_from_file(f, offset, is_real_file, element_size): fills this storage. */
static PyObject *m_set_from_file(PyObject *self, PyObject *args) {
    PyObject *f, *offset;
    int is_real;
    long long elem;
    if (!PyArg_ParseTuple(args, "OOpL:_set_from_file", &f, &offset, &is_real, &elem)) return NULL;
    if (offset != Py_None) {
        PyObject *r = PyObject_CallMethod(f, "seek", "O", offset);
        if (!r) return NULL;
        Py_DECREF(r);
    }
    int64_t count;
    if (file_read_exact(f, &count, 8) < 0) return NULL;
    tn_storage *s = S(self);
    if (count * elem != s->nbytes) {
        PyErr_Format(PyExc_RuntimeError, "storage has wrong byte size: expected %lld got %lld",
                     (long long)s->nbytes, (long long)(count * elem));
        return NULL;
    }
    if (s->nbytes && file_read_exact(f, s->data, s->nbytes) < 0) return NULL;
    Py_INCREF(self);
    return self;
}

/* classmethod _new_with_file(f, element_size) */
static PyObject *m_new_with_file(PyObject *cls, PyObject *args) {
    PyObject *f;
    long long elem;
    if (!PyArg_ParseTuple(args, "OL:_new_with_file", &f, &elem)) return NULL;
    int64_t count;
    if (file_read_exact(f, &count, 8) < 0) return NULL;
    tn_storage *s;
    tn_status st = tn_storage_new(count * elem, tn_device_cpu(), false, &s);
    if (st != TN_OK) return tn_py_raise(st);
    if (s->nbytes && file_read_exact(f, s->data, s->nbytes) < 0) { tn_storage_release(s); return NULL; }
    return storage_alloc((PyTypeObject *)cls, s);
}

static PyMethodDef storage_methods[] = {
    {"nbytes", m_nbytes, METH_NOARGS, NULL},
    {"data_ptr", m_data_ptr, METH_NOARGS, NULL},
    {"element_size", m_element_size, METH_NOARGS, NULL},
    {"resizable", m_resizable, METH_NOARGS, NULL},
    {"is_shared", m_is_shared, METH_NOARGS, NULL},
    {"fill_", m_fill_, METH_O, NULL},
    {"copy_", m_copy_, METH_VARARGS, NULL},
    {"resize_", m_resize_, METH_O, NULL},
    {"new", m_new, METH_NOARGS, NULL},
    {"from_file", (PyCFunction)(void (*)(void))m_from_file, METH_VARARGS | METH_KEYWORDS | METH_CLASS, NULL},
    {"from_buffer", (PyCFunction)(void (*)(void))m_from_buffer, METH_VARARGS | METH_KEYWORDS | METH_CLASS, NULL},
    {"_weak_ref", m_weak_ref, METH_VARARGS, NULL},
    {"_fix_weakref", m_fix_weakref, METH_NOARGS, NULL},
    {"_write_file", m_write_file, METH_VARARGS, NULL},
    {"_set_from_file", m_set_from_file, METH_VARARGS, NULL},
    {"_new_with_file", m_new_with_file, METH_VARARGS | METH_CLASS, NULL},
    {NULL},
};
static PyGetSetDef storage_getset[] = {
    {"_cdata", m_cdata, NULL, NULL, NULL},
    {"device", m_device, NULL, NULL, NULL},
    {NULL},
};
static PyType_Slot storage_slots[] = {
    {Py_tp_new, storage_new}, {Py_tp_dealloc, storage_dealloc}, {Py_tp_methods, storage_methods},
    {Py_tp_getset, storage_getset}, {Py_mp_subscript, m_getitem}, {Py_mp_ass_subscript, m_setitem},
    {Py_mp_length, m_len}, {Py_sq_length, m_len}, {0, NULL},
};

/* Tensor.untyped_storage() */
PyObject *tn_py_tensor_untyped_storage(PyObject *self, PyObject *u) {
    tn_storage *s = tn_py_tensor_get(self)->storage;
    tn_storage_retain(s);
    return tn_py_storage_wrap(s);
}

/* Tensor.set_(source=None, storage_offset=0, size=(), stride=()) for the storage overloads
 * torch.load and safetensors use; the tensor then aliases the storage. */
PyObject *tn_py_tensor_set_(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"source", "storage_offset", "size", "stride", NULL};
    PyObject *source = NULL, *size = NULL, *stride = NULL;
    long long offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OLOO:set_", kwlist, &source, &offset, &size, &stride)) return NULL;
    tn_tensor *t = tn_py_tensor_get(self);
    tn_storage *s;
    int ndim;
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    if (!source) {
        tn_status st = tn_storage_new(0, tn_tensor_device(t), false, &s);
        if (st != TN_OK) return tn_py_raise(st);
        ndim = 1; sizes[0] = 0; strides[0] = 1; offset = 0;
    } else if (tn_py_is_tensor(source)) {
        tn_tensor *o = tn_py_tensor_get(source);
        s = o->storage;
        tn_storage_retain(s);
        ndim = o->ndim;
        memcpy(sizes, o->sizes, sizeof sizes);
        memcpy(strides, o->strides, sizeof strides);
        offset = o->offset;
    } else {
        PyObject *base = source;
        /* TypedStorage wraps an UntypedStorage in ._untyped_storage */
        if (!tn_py_is_storage(source)) {
            base = PyObject_GetAttrString(source, "_untyped_storage");
            if (!base) return NULL;
            Py_DECREF(base);
        }
        if (!tn_py_is_storage(base)) { PyErr_SetString(PyExc_TypeError, "set_(): expected a Storage or Tensor"); return NULL; }
        s = S(base);
        tn_storage_retain(s);
        int item = tn_dtype_itemsize(t->dtype);
        if (!size) {
            ndim = 1; sizes[0] = s->nbytes / item; strides[0] = 1;
        } else {
            PyObject *sz = PySequence_Tuple(size);
            if (!sz) { tn_storage_release(s); return NULL; }
            ndim = (int)PyTuple_Size(sz);
            for (int i = 0; i < ndim; i++) sizes[i] = PyLong_AsLongLong(PyTuple_GetItem(sz, i));
            Py_DECREF(sz);
            if (stride && stride != Py_None && PySequence_Size(stride) > 0) {
                PyObject *stt = PySequence_Tuple(stride);
                if (!stt) { tn_storage_release(s); return NULL; }
                for (int i = 0; i < ndim && i < PyTuple_Size(stt); i++) strides[i] = PyLong_AsLongLong(PyTuple_GetItem(stt, i));
                Py_DECREF(stt);
            } else {
                tn_contiguous_strides(ndim, sizes, strides);
            }
            if (PyErr_Occurred()) { tn_storage_release(s); return NULL; }
        }
        tn_status st = tn_check_storage_bounds(ndim, sizes, strides, offset, item, s->nbytes);
        if (st != TN_OK) { tn_storage_release(s); return tn_py_raise(st); }
    }
    tn_storage_release(t->storage);
    t->storage = s;
    t->offset = offset;
    t->ndim = ndim;
    memcpy(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
    memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
    Py_INCREF(self);
    return self;
}

int tn_py_init_storage(PyObject *m) {
    PyType_Spec spec = {"torch._C.StorageBase", sizeof(TNStorageObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                        storage_slots};
    tn_storage_base = (PyTypeObject *)PyType_FromSpec(&spec);
    if (!tn_storage_base) return -1;
    return PyModule_AddObjectRef(m, "StorageBase", (PyObject *)tn_storage_base);
}
