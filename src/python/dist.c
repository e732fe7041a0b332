/* dist.c — the binding of src/dist (stores, process group, collectives) as the private
 * module torch._C._tn_dist. torchnative/_surface/distributed.py builds upstream's
 * classes (TCPStore, FileStore, ProcessGroupGloo, Work) on these handles. Every blocking
 * call releases the GIL; failures raise upstream's torch.distributed exception classes. */
#include "binding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/net.h"
#include "dist/pg.h"
#include "dist/reducer.h"
#include "dist/store.h"

/* ---- errors ------------------------------------------------------------------------- */
static PyObject *dist_raise(tn_status st) {
    const char *cls_name = NULL;
    switch (tn_dist_error_kind()) {
    case TN_DIST_ERR_GENERIC: cls_name = "_DistError"; break;
    case TN_DIST_ERR_STORE: cls_name = "_DistStoreError"; break;
    case TN_DIST_ERR_NETWORK: cls_name = "_DistNetworkError"; break;
    case TN_DIST_ERR_BACKEND: cls_name = "_DistBackendError"; break;
    case TN_DIST_ERR_QUEUE_EMPTY: cls_name = "_DistQueueEmptyError"; break;
    default: break;
    }
    tn_dist_clear();
    if (!cls_name) return tn_py_raise(st);
    PyObject *cls = PyObject_GetAttrString(tn_py_module(), cls_name);
    if (!cls) return NULL;
    PyErr_SetString(cls, tn_error_message());
    Py_DECREF(cls);
    return NULL;
}

/* ---- handles ------------------------------------------------------------------------ */
#define CAP_SERVER "torchnative.dist.server"
#define CAP_TCP "torchnative.dist.tcpstore"
#define CAP_FILE "torchnative.dist.filestore"
#define CAP_PG "torchnative.dist.pg"
#define CAP_WORK "torchnative.dist.work"

static void server_del(PyObject *c) { tn_store_server_release(PyCapsule_GetPointer(c, CAP_SERVER)); }
static void tcp_del(PyObject *c) { tn_store_client_free(PyCapsule_GetPointer(c, CAP_TCP)); }
static void file_del(PyObject *c) { tn_file_store_free(PyCapsule_GetPointer(c, CAP_FILE)); }
static void pg_del(PyObject *c) {
    tn_pg *pg = PyCapsule_GetPointer(c, CAP_PG);
    Py_BEGIN_ALLOW_THREADS
    tn_pg_free(pg);
    Py_END_ALLOW_THREADS
}

/* A store handle is either a TCPStore client or a FileStore. */
typedef struct {
    tn_store_client *tcp;
    tn_file_store *file;
} store_ref;

static int get_store(PyObject *o, store_ref *s) {
    s->tcp = NULL;
    s->file = NULL;
    if (PyCapsule_IsValid(o, CAP_TCP)) s->tcp = PyCapsule_GetPointer(o, CAP_TCP);
    else if (PyCapsule_IsValid(o, CAP_FILE)) s->file = PyCapsule_GetPointer(o, CAP_FILE);
    else {
        PyErr_SetString(PyExc_TypeError, "expected a torchnative store handle");
        return -1;
    }
    return 0;
}

/* ---- store functions ---------------------------------------------------------------- */
static PyObject *f_server_start(PyObject *m, PyObject *args) {
    int port, multi;
    if (!PyArg_ParseTuple(args, "ip", &port, &multi)) return NULL;
    tn_store_server *s = NULL;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = tn_store_server_acquire(port, multi, &s);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return dist_raise(st);
    PyObject *cap = PyCapsule_New(s, CAP_SERVER, server_del);
    if (!cap) {
        tn_store_server_release(s);
        return NULL;
    }
    return Py_BuildValue("(Ni)", cap, tn_store_server_port(s));
}

static PyObject *f_client_connect(PyObject *m, PyObject *args) {
    const char *host;
    int port;
    long long timeout;
    if (!PyArg_ParseTuple(args, "siL", &host, &port, &timeout)) return NULL;
    tn_store_client *c = NULL;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = tn_store_client_connect(host, port, timeout, &c);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return dist_raise(st);
    PyObject *cap = PyCapsule_New(c, CAP_TCP, tcp_del);
    if (!cap) tn_store_client_free(c);
    return cap;
}

static PyObject *f_wait_workers(PyObject *m, PyObject *args) {
    PyObject *h;
    long long ws;
    int is_server;
    if (!PyArg_ParseTuple(args, "OLp", &h, &ws, &is_server)) return NULL;
    store_ref s;
    if (get_store(h, &s) < 0) return NULL;
    if (!s.tcp) return PyErr_Format(PyExc_TypeError, "wait_workers needs a TCPStore handle");
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = tn_store_client_wait_workers(s.tcp, ws, is_server);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return dist_raise(st);
    Py_RETURN_NONE;
}

static PyObject *f_file_open(PyObject *m, PyObject *args) {
    const char *path;
    int nw;
    long long timeout;
    if (!PyArg_ParseTuple(args, "siL", &path, &nw, &timeout)) return NULL;
    tn_file_store *f = NULL;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = tn_file_store_open(path, nw, timeout, &f);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return dist_raise(st);
    PyObject *cap = PyCapsule_New(f, CAP_FILE, file_del);
    if (!cap) tn_file_store_free(f);
    return cap;
}

static PyObject *f_store_set_timeout(PyObject *m, PyObject *args) {
    PyObject *h;
    long long ms;
    store_ref s;
    if (!PyArg_ParseTuple(args, "OL", &h, &ms) || get_store(h, &s) < 0) return NULL;
    if (s.tcp) tn_store_client_set_timeout(s.tcp, ms);
    else tn_file_store_set_timeout(s.file, ms);
    Py_RETURN_NONE;
}

/* set / append / queue_push: (handle, key: str, value: bytes) */
static PyObject *store_write(PyObject *args, int which) {
    PyObject *h;
    const char *k, *v;
    Py_ssize_t kl, vl;
    store_ref s;
    if (!PyArg_ParseTuple(args, "Os#y#", &h, &k, &kl, &v, &vl) || get_store(h, &s) < 0) return NULL;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    if (s.tcp)
        st = which == 0   ? tn_store_client_set(s.tcp, k, (size_t)kl, (const uint8_t *)v, (size_t)vl)
             : which == 1 ? tn_store_client_append(s.tcp, k, (size_t)kl, (const uint8_t *)v, (size_t)vl)
                          : tn_store_client_queue_push(s.tcp, k, (size_t)kl, (const uint8_t *)v, (size_t)vl);
    else if (which == 2)
        st = tn_error(TN_ERR_NOT_IMPLEMENTED, "FileStore.queue_push is not implemented (upstream neither)");
    else
        st = which == 0 ? tn_file_store_set(s.file, k, (size_t)kl, (const uint8_t *)v, (size_t)vl)
                        : tn_file_store_append(s.file, k, (size_t)kl, (const uint8_t *)v, (size_t)vl);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return dist_raise(st);
    Py_RETURN_NONE;
}
static PyObject *f_store_set(PyObject *m, PyObject *a) { return store_write(a, 0); }
static PyObject *f_store_append(PyObject *m, PyObject *a) { return store_write(a, 1); }
static PyObject *f_store_queue_push(PyObject *m, PyObject *a) { return store_write(a, 2); }

static PyObject *bytes_take(tn_status st, uint8_t *v, size_t vl) {
    if (st != TN_OK) return dist_raise(st);
    PyObject *b = PyBytes_FromStringAndSize((const char *)v, (Py_ssize_t)vl);
    free(v);
    return b;
}

static PyObject *f_store_get(PyObject *m, PyObject *args) {
    PyObject *h;
    const char *k;
    Py_ssize_t kl;
    store_ref s;
    if (!PyArg_ParseTuple(args, "Os#", &h, &k, &kl) || get_store(h, &s) < 0) return NULL;
    uint8_t *v = NULL;
    size_t vl = 0;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = s.tcp ? tn_store_client_get(s.tcp, k, (size_t)kl, &v, &vl) : tn_file_store_get(s.file, k, (size_t)kl, &v, &vl);
    Py_END_ALLOW_THREADS
    return bytes_take(st, v, vl);
}

static PyObject *f_store_queue_pop(PyObject *m, PyObject *args) {
    PyObject *h;
    const char *k;
    Py_ssize_t kl;
    int block;
    store_ref s;
    if (!PyArg_ParseTuple(args, "Os#p", &h, &k, &kl, &block) || get_store(h, &s) < 0) return NULL;
    if (!s.tcp) return PyErr_Format(PyExc_NotImplementedError, "FileStore.queue_pop is not implemented");
    uint8_t *v = NULL;
    size_t vl = 0;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = tn_store_client_queue_pop(s.tcp, k, (size_t)kl, block, &v, &vl);
    Py_END_ALLOW_THREADS
    return bytes_take(st, v, vl);
}

static PyObject *f_store_add(PyObject *m, PyObject *args) {
    PyObject *h;
    const char *k;
    Py_ssize_t kl;
    long long d;
    store_ref s;
    if (!PyArg_ParseTuple(args, "Os#L", &h, &k, &kl, &d) || get_store(h, &s) < 0) return NULL;
    int64_t out = 0;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = s.tcp ? tn_store_client_add(s.tcp, k, (size_t)kl, d, &out) : tn_file_store_add(s.file, k, (size_t)kl, d, &out);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return dist_raise(st);
    return PyLong_FromLongLong(out);
}

static PyObject *f_store_queue_len(PyObject *m, PyObject *args) {
    PyObject *h;
    const char *k;
    Py_ssize_t kl;
    store_ref s;
    if (!PyArg_ParseTuple(args, "Os#", &h, &k, &kl) || get_store(h, &s) < 0) return NULL;
    if (!s.tcp) return PyErr_Format(PyExc_NotImplementedError, "FileStore.queue_len is not implemented");
    int64_t out = 0;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = tn_store_client_queue_len(s.tcp, k, (size_t)kl, &out);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return dist_raise(st);
    return PyLong_FromLongLong(out);
}

/* store_list_keys(handle) -> list of the raw keys (bytes) on the server */
static PyObject *f_store_list_keys(PyObject *m, PyObject *args) {
    PyObject *h;
    store_ref s;
    if (!PyArg_ParseTuple(args, "O", &h) || get_store(h, &s) < 0) return NULL;
    if (!s.tcp) return PyErr_Format(PyExc_NotImplementedError, "FileStore.list_keys is not implemented");
    char **keys = NULL;
    size_t *lens = NULL, n = 0;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = tn_store_client_list_keys(s.tcp, &keys, &lens, &n);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return dist_raise(st);
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; i < n; i++) {
        if (l) {
            PyObject *b = PyBytes_FromStringAndSize(keys[i], (Py_ssize_t)lens[i]);
            if (!b) Py_CLEAR(l);
            else PyList_SetItem(l, (Py_ssize_t)i, b);
        }
        free(keys[i]);
    }
    free(keys);
    free(lens);
    return l;
}

static PyObject *f_store_compare_set(PyObject *m, PyObject *args) {
    PyObject *h;
    const char *k, *e, *d;
    Py_ssize_t kl, el, dl;
    store_ref s;
    if (!PyArg_ParseTuple(args, "Os#y#y#", &h, &k, &kl, &e, &el, &d, &dl) || get_store(h, &s) < 0) return NULL;
    uint8_t *v = NULL;
    size_t vl = 0;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = s.tcp ? tn_store_client_compare_set(s.tcp, k, (size_t)kl, (const uint8_t *)e, (size_t)el, (const uint8_t *)d,
                                             (size_t)dl, &v, &vl)
               : tn_file_store_compare_set(s.file, k, (size_t)kl, (const uint8_t *)e, (size_t)el, (const uint8_t *)d,
                                           (size_t)dl, &v, &vl);
    Py_END_ALLOW_THREADS
    return bytes_take(st, v, vl);
}

static PyObject *f_store_delete(PyObject *m, PyObject *args) {
    PyObject *h;
    const char *k;
    Py_ssize_t kl;
    store_ref s;
    if (!PyArg_ParseTuple(args, "Os#", &h, &k, &kl) || get_store(h, &s) < 0) return NULL;
    int deleted = 0;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = s.tcp ? tn_store_client_delete(s.tcp, k, (size_t)kl, &deleted) : tn_file_store_delete(s.file, k, (size_t)kl, &deleted);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return dist_raise(st);
    return PyBool_FromLong(deleted);
}

static PyObject *f_store_num_keys(PyObject *m, PyObject *args) {
    PyObject *h;
    store_ref s;
    if (!PyArg_ParseTuple(args, "O", &h) || get_store(h, &s) < 0) return NULL;
    int64_t n = 0;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = s.tcp ? tn_store_client_num_keys(s.tcp, &n) : tn_file_store_num_keys(s.file, &n);
    Py_END_ALLOW_THREADS
    if (st != TN_OK) return dist_raise(st);
    return PyLong_FromLongLong(n);
}

/* Key lists: a Python list of str -> arrays (borrowed UTF-8 pointers valid while `list` lives). */
static int key_arrays(PyObject *list, Py_ssize_t *n, const char ***keys, size_t **lens) {
    PyObject *seq = PySequence_Fast(list, "keys must be a list of str");
    if (!seq) return -1;
    *n = PySequence_Size(seq);
    *keys = calloc((size_t)(*n ? *n : 1), sizeof **keys);
    *lens = calloc((size_t)(*n ? *n : 1), sizeof **lens);
    for (Py_ssize_t i = 0; i < *n && *keys && *lens; i++) {
        PyObject *o = PySequence_GetItem(seq, i);
        Py_ssize_t l;
        const char *u = o ? PyUnicode_AsUTF8AndSize(o, &l) : NULL;
        Py_XDECREF(o); /* the str stays alive inside `list` */
        if (!u) {
            Py_DECREF(seq);
            free(*keys);
            free(*lens);
            return -1;
        }
        (*keys)[i] = u;
        (*lens)[i] = (size_t)l;
    }
    Py_DECREF(seq);
    if (!*keys || !*lens) {
        free(*keys);
        free(*lens);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static PyObject *f_store_check_wait(PyObject *args, int is_wait) {
    PyObject *h, *list;
    long long timeout = -1;
    store_ref s;
    if (!PyArg_ParseTuple(args, "OO|L", &h, &list, &timeout) || get_store(h, &s) < 0) return NULL;
    Py_ssize_t n;
    const char **keys;
    size_t *lens;
    if (key_arrays(list, &n, &keys, &lens) < 0) return NULL;
    int ready = 0;
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    if (is_wait)
        st = s.tcp ? tn_store_client_wait(s.tcp, (size_t)n, keys, lens, timeout)
                   : tn_file_store_wait(s.file, (size_t)n, keys, lens, timeout);
    else
        st = s.tcp ? tn_store_client_check(s.tcp, (size_t)n, keys, lens, &ready)
                   : tn_file_store_check(s.file, (size_t)n, keys, lens, &ready);
    Py_END_ALLOW_THREADS
    free(keys);
    free(lens);
    if (st != TN_OK) return dist_raise(st);
    if (is_wait) Py_RETURN_NONE;
    return PyBool_FromLong(ready);
}
static PyObject *f_store_check(PyObject *m, PyObject *a) { return f_store_check_wait(a, 0); }
static PyObject *f_store_wait(PyObject *m, PyObject *a) { return f_store_check_wait(a, 1); }

static PyObject *f_store_multi_get(PyObject *m, PyObject *args) {
    PyObject *h, *list;
    store_ref s;
    if (!PyArg_ParseTuple(args, "OO", &h, &list) || get_store(h, &s) < 0) return NULL;
    if (!s.tcp) return PyErr_Format(PyExc_TypeError, "multi_get needs a TCPStore handle");
    Py_ssize_t n;
    const char **keys;
    size_t *lens;
    if (key_arrays(list, &n, &keys, &lens) < 0) return NULL;
    uint8_t **vals = calloc((size_t)(n ? n : 1), sizeof *vals);
    size_t *vl = calloc((size_t)(n ? n : 1), sizeof *vl);
    tn_status st = TN_ERR_NO_MEMORY;
    tn_dist_clear();
    if (vals && vl) {
        Py_BEGIN_ALLOW_THREADS
        st = tn_store_client_multi_get(s.tcp, (size_t)n, keys, lens, vals, vl);
        Py_END_ALLOW_THREADS
    } else {
        tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    free(keys);
    free(lens);
    PyObject *out = NULL;
    if (st == TN_OK) {
        out = PyList_New(n);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (out) {
                PyObject *b = PyBytes_FromStringAndSize((const char *)vals[i], (Py_ssize_t)vl[i]);
                if (!b) Py_CLEAR(out);
                else PyList_SetItem(out, i, b);
            }
            free(vals[i]);
        }
    }
    free(vals);
    free(vl);
    if (st != TN_OK) return dist_raise(st);
    return out;
}

static PyObject *f_store_multi_set(PyObject *m, PyObject *args) {
    PyObject *h, *list, *values;
    store_ref s;
    if (!PyArg_ParseTuple(args, "OOO", &h, &list, &values) || get_store(h, &s) < 0) return NULL;
    if (!s.tcp) return PyErr_Format(PyExc_TypeError, "multi_set needs a TCPStore handle");
    Py_ssize_t n;
    const char **keys;
    size_t *lens;
    if (key_arrays(list, &n, &keys, &lens) < 0) return NULL;
    PyObject *vseq = PySequence_Fast(values, "values must be a list of bytes");
    if (!vseq || PySequence_Size(vseq) != n) {
        if (vseq) PyErr_SetString(PyExc_ValueError, "multi_set: keys and values must have the same length");
        Py_XDECREF(vseq);
        free(keys);
        free(lens);
        return NULL;
    }
    const uint8_t **vals = calloc((size_t)(n ? n : 1), sizeof *vals);
    size_t *vl = calloc((size_t)(n ? n : 1), sizeof *vl);
    PyObject **held = calloc((size_t)(n ? n : 1), sizeof *held);
    int ok = vals && vl && held;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        held[i] = PySequence_GetItem(vseq, i);
        char *p;
        Py_ssize_t l;
        if (!held[i] || PyBytes_AsStringAndSize(held[i], &p, &l) < 0) ok = 0;
        else {
            vals[i] = (const uint8_t *)p;
            vl[i] = (size_t)l;
        }
    }
    tn_status st = TN_OK;
    if (ok) {
        tn_dist_clear();
        Py_BEGIN_ALLOW_THREADS
        st = tn_store_client_multi_set(s.tcp, (size_t)n, keys, lens, vals, vl);
        Py_END_ALLOW_THREADS
    }
    for (Py_ssize_t i = 0; held && i < n; i++) Py_XDECREF(held[i]);
    free(held);
    free(vals);
    free(vl);
    free(keys);
    free(lens);
    Py_DECREF(vseq);
    if (!ok) return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    if (st != TN_OK) return dist_raise(st);
    Py_RETURN_NONE;
}

/* ---- process group ------------------------------------------------------------------ */
static tn_pg *get_pg(PyObject *o) { return PyCapsule_GetPointer(o, CAP_PG); }

static PyObject *f_pg_new(PyObject *m, PyObject *args) {
    int rank, size;
    long long timeout;
    if (!PyArg_ParseTuple(args, "iiL", &rank, &size, &timeout)) return NULL;
    tn_pg *pg;
    tn_status st = tn_pg_new(rank, size, timeout, &pg);
    if (st != TN_OK) return dist_raise(st);
    int port = 0;
    tn_dist_clear();
    if (size > 1 && (st = tn_pg_tcp_listen(pg, &port)) != TN_OK) {
        tn_pg_free(pg);
        return dist_raise(st);
    }
    PyObject *cap = PyCapsule_New(pg, CAP_PG, pg_del);
    if (!cap) {
        tn_pg_free(pg);
        return NULL;
    }
    return Py_BuildValue("(Ni)", cap, port);
}

static PyObject *f_pg_connect(PyObject *m, PyObject *args) {
    PyObject *cap, *hosts, *ports;
    unsigned long long nonce;
    if (!PyArg_ParseTuple(args, "OOOK", &cap, &hosts, &ports, &nonce)) return NULL;
    tn_pg *pg = get_pg(cap);
    if (!pg) return NULL;
    int n = tn_pg_size(pg);
    if (n == 1) {
        tn_status st = tn_pg_start(pg);
        if (st != TN_OK) return dist_raise(st);
        Py_RETURN_NONE;
    }
    Py_ssize_t hn;
    const char **h;
    size_t *hl;
    if (key_arrays(hosts, &hn, &h, &hl) < 0) return NULL;
    int *p = calloc((size_t)n, sizeof *p);
    if (hn != n || !p || PySequence_Size(ports) != n) {
        free(h);
        free(hl);
        free(p);
        return PyErr_Format(PyExc_ValueError, "need %d hosts and ports", n);
    }
    for (int i = 0; i < n; i++) {
        PyObject *o = PySequence_GetItem(ports, i);
        p[i] = o ? (int)PyLong_AsLong(o) : -1;
        Py_XDECREF(o);
    }
    if (PyErr_Occurred()) {
        free(h);
        free(hl);
        free(p);
        return NULL;
    }
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = tn_pg_tcp_connect(pg, h, p, nonce);
    Py_END_ALLOW_THREADS
    free(h);
    free(hl);
    free(p);
    if (st != TN_OK) return dist_raise(st);
    Py_RETURN_NONE;
}

static PyObject *f_pg_set_timeout(PyObject *m, PyObject *args) {
    PyObject *cap;
    long long ms;
    if (!PyArg_ParseTuple(args, "OL", &cap, &ms)) return NULL;
    tn_pg *pg = get_pg(cap);
    if (!pg) return NULL;
    tn_pg_set_timeout(pg, ms);
    Py_RETURN_NONE;
}

/* ---- collectives: contexts executed on the worker thread ---------------------------- */
enum { OP_BROADCAST, OP_ALLREDUCE, OP_REDUCE, OP_ALLGATHER, OP_GATHER, OP_SCATTER, OP_ALLTOALL,
       OP_REDUCE_SCATTER, OP_BARRIER, OP_MONITORED_BARRIER };

typedef struct {
    int op, root, redop, wait_all; /* wait_all doubles as reduce_scatter's `flat` */
    uint64_t seq;
    int64_t timeout;
    int nin, nout;
    tn_tensor **in, **out;
} coll_ctx;

static void ctx_free(void *p) {
    coll_ctx *c = p;
    if (!c) return;
    for (int i = 0; i < c->nin; i++) tn_tensor_release(c->in[i]);
    for (int i = 0; i < c->nout; i++) tn_tensor_release(c->out[i]);
    free(c->in);
    free(c->out);
    free(c);
}

static size_t nbytes(const tn_tensor *t) { return (size_t)tn_tensor_numel(t) * (size_t)tn_dtype_itemsize(t->dtype); }

static tn_status run_coll(tn_pg *pg, void *p) {
    coll_ctx *c = p;
    int n = tn_pg_size(pg);
    void **ptrs = NULL;
    size_t *sz = NULL;
    const void **cptrs = NULL;
    size_t *csz = NULL;
    tn_status st = TN_OK;
    switch (c->op) {
    case OP_BROADCAST:
        return tn_pg_broadcast(pg, c->seq, tn_tensor_data(c->in[0]), nbytes(c->in[0]), c->root);
    case OP_ALLREDUCE:
        return tn_pg_allreduce(pg, c->seq, tn_tensor_data(c->in[0]), (size_t)tn_tensor_numel(c->in[0]), c->in[0]->dtype,
                               (tn_redop)c->redop);
    case OP_REDUCE:
        return tn_pg_reduce(pg, c->seq, tn_tensor_data(c->in[0]), (size_t)tn_tensor_numel(c->in[0]), c->in[0]->dtype,
                            (tn_redop)c->redop, c->root);
    case OP_BARRIER:
        return tn_pg_barrier(pg, c->seq);
    case OP_MONITORED_BARRIER:
        return tn_pg_monitored_barrier(pg, c->seq, c->timeout, c->wait_all);
    default:
        break;
    }
    ptrs = calloc((size_t)n, sizeof *ptrs);
    sz = calloc((size_t)n, sizeof *sz);
    cptrs = calloc((size_t)n, sizeof *cptrs);
    csz = calloc((size_t)n, sizeof *csz);
    if (!ptrs || !sz || !cptrs || !csz) {
        st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (int i = 0; i < c->nout && i < n; i++) {
        ptrs[i] = tn_tensor_data(c->out[i]);
        sz[i] = nbytes(c->out[i]);
    }
    for (int i = 0; i < c->nin && i < n; i++) {
        cptrs[i] = tn_tensor_data(c->in[i]);
        csz[i] = nbytes(c->in[i]);
    }
    switch (c->op) {
    case OP_ALLGATHER:
        st = tn_pg_allgather(pg, c->seq, tn_tensor_data(c->in[0]), nbytes(c->in[0]), ptrs, sz);
        break;
    case OP_GATHER:
        st = tn_pg_gather(pg, c->seq, tn_tensor_data(c->in[0]), nbytes(c->in[0]), ptrs, sz, c->root);
        break;
    case OP_SCATTER:
        st = tn_pg_scatter(pg, c->seq, cptrs, csz, tn_tensor_data(c->out[0]), nbytes(c->out[0]), c->root);
        break;
    case OP_ALLTOALL:
        st = tn_pg_alltoall(pg, c->seq, cptrs, csz, ptrs, sz);
        break;
    case OP_REDUCE_SCATTER:
        for (int i = 0; i < n; i++) csz[i] = (size_t)tn_tensor_numel(c->in[i]);
        st = tn_pg_reduce_scatter(pg, c->seq, cptrs, csz, tn_tensor_data(c->out[0]), c->out[0]->dtype,
                                  (tn_redop)c->redop, c->wait_all /* flat */);
        break;
    }
done:
    free(ptrs);
    free(sz);
    free(cptrs);
    free(csz);
    return st;
}

static int gloo_dtype_ok(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_FLOAT32: case TN_DTYPE_FLOAT64: case TN_DTYPE_FLOAT16: case TN_DTYPE_BFLOAT16:
    case TN_DTYPE_INT8: case TN_DTYPE_UINT8: case TN_DTYPE_BOOL: case TN_DTYPE_INT32: case TN_DTYPE_INT64:
        return 1;
    default:
        return 0;
    }
}

/* Tensors of a list (or a single tensor) -> retained array. All must be contiguous CPU
 * tensors of a dtype gloo handles (the Python side makes contiguous copies). */
static int take_tensors(PyObject *o, tn_tensor ***out, int *n) {
    *out = NULL;
    *n = 0;
    if (o == Py_None) return 0;
    PyObject *seq;
    if (tn_py_is_tensor(o)) seq = PyTuple_Pack(1, o);
    else seq = PySequence_Fast(o, "expected a tensor or a list of tensors");
    if (!seq) return -1;
    Py_ssize_t k = PySequence_Size(seq);
    *out = calloc((size_t)(k ? k : 1), sizeof **out);
    if (!*out) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *t = PySequence_GetItem(seq, i);
        if (!t || !tn_py_is_tensor(t)) {
            Py_XDECREF(t);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "expected tensors");
            goto error;
        }
        tn_tensor *tt = tn_py_tensor_get(t);
        Py_DECREF(t);
        if (tn_tensor_device(tt).type != TN_DEVICE_CPU) {
            PyErr_SetString(PyExc_RuntimeError, "ProcessGroupGloo: only CPU tensors are supported");
            goto error;
        }
        if (!tn_tensor_is_contiguous(tt)) {
            PyErr_SetString(PyExc_RuntimeError, "Tensors must be contiguous");
            goto error;
        }
        if (!gloo_dtype_ok(tt->dtype)) {
            PyErr_SetString(PyExc_RuntimeError, "Invalid scalar type");
            goto error;
        }
        tn_tensor_retain(tt);
        (*out)[(*n)++] = tt;
    }
    Py_DECREF(seq);
    return 0;
error:
    Py_DECREF(seq);
    for (int i = 0; i < *n; i++) tn_tensor_release((*out)[i]);
    free(*out);
    *out = NULL;
    *n = 0;
    return -1;
}

static void work_capsule_del(PyObject *c);

/* Binding-side work: a queued collective, or a posted receive, or a finished send. */
typedef struct {
    tn_pg_work *w;     /* queued or completed work */
    tn_pg_req *req;    /* posted receive (waited by the caller, not the worker) */
    tn_pg *pg;
    tn_tensor *recv_tensor;
    int src;           /* source rank of a finished receive */
    int finished;      /* req already waited */
    tn_status st;
    tn_dist_err kind;
    char msg[1024];
} dwork;

static PyObject *wrap_work(dwork *d) {
    PyObject *cap = PyCapsule_New(d, CAP_WORK, work_capsule_del);
    if (!cap) {
        tn_pg_work_release(d->w);
        free(d);
    }
    return cap;
}

static PyObject *f_pg_collective(PyObject *m, PyObject *args) {
    PyObject *cap, *ins, *outs;
    int op, root, redop, wait_all = 0, inline_ = 0;
    long long timeout = 0;
    if (!PyArg_ParseTuple(args, "OiOOii|Lpp", &cap, &op, &ins, &outs, &root, &redop, &timeout, &wait_all, &inline_))
        return NULL;
    tn_pg *pg = get_pg(cap);
    if (!pg) return NULL;
    coll_ctx *c = calloc(1, sizeof *c);
    if (!c) return PyErr_NoMemory();
    c->op = op;
    c->root = root;
    c->redop = redop;
    c->timeout = timeout;
    c->wait_all = wait_all;
    if (take_tensors(ins, &c->in, &c->nin) < 0 || take_tensors(outs, &c->out, &c->nout) < 0) {
        ctx_free(c);
        return NULL;
    }
    int n = tn_pg_size(pg);
    const char *bad = NULL;
    switch (op) {
    case OP_BROADCAST: case OP_ALLREDUCE: case OP_REDUCE:
        if (c->nin != 1) bad = "expected exactly one tensor";
        break;
    case OP_ALLGATHER:
        if (c->nin != 1 || c->nout != n) bad = "allgather: expected one input and world_size outputs";
        break;
    case OP_GATHER:
        if (c->nin != 1 || (tn_pg_rank(pg) == root && c->nout != n)) bad = "gather: wrong number of tensors";
        break;
    case OP_SCATTER:
        if (c->nout != 1 || (tn_pg_rank(pg) == root && c->nin != n)) bad = "scatter: wrong number of tensors";
        break;
    case OP_ALLTOALL:
        if (c->nin != n || c->nout != n) bad = "alltoall: expected world_size inputs and outputs";
        break;
    case OP_REDUCE_SCATTER:
        if (c->nin != n || c->nout != 1) bad = "reduce_scatter: expected world_size inputs and one output";
        for (int i = 0; !bad && i < n; i++)
            if (c->in[i]->dtype != c->out[0]->dtype) bad = "reduce_scatter: dtypes differ";
        break;
    case OP_BARRIER: case OP_MONITORED_BARRIER:
        break;
    default:
        bad = "unknown collective";
    }
    if (bad) {
        ctx_free(c);
        PyErr_SetString(PyExc_RuntimeError, bad);
        return NULL;
    }
    if ((op == OP_ALLREDUCE || op == OP_REDUCE || op == OP_REDUCE_SCATTER)) {
        tn_status st = tn_dist_check_reduce(op == OP_REDUCE_SCATTER ? c->out[0]->dtype : c->in[0]->dtype,
                                            redop == TN_REDOP_AVG || redop == TN_REDOP_PREMUL_SUM ? TN_REDOP_SUM
                                                                                                 : (tn_redop)redop);
        if (st != TN_OK) {
            ctx_free(c);
            tn_dist_clear();
            return tn_py_raise(st);
        }
    }
    c->seq = tn_pg_next_seq(pg);
    dwork *d = calloc(1, sizeof *d);
    if (!d) {
        ctx_free(c);
        return PyErr_NoMemory();
    }
    d->pg = pg;
    if (inline_) {
        /* a blocking call (async_op=False): run it on this thread, without the GIL, and
         * skip two thread hand-offs; sequence numbers keep it apart from queued work */
        tn_status st;
        tn_dist_clear();
        Py_BEGIN_ALLOW_THREADS
        st = run_coll(pg, c);
        Py_END_ALLOW_THREADS
        d->w = tn_pg_work_completed(st, c, ctx_free);
        tn_dist_clear();
        if (!d->w) {
            free(d);
            return PyErr_NoMemory();
        }
        return wrap_work(d);
    }
    tn_status st = tn_pg_enqueue(pg, run_coll, c, ctx_free, &d->w);
    if (st != TN_OK) {
        free(d);
        return dist_raise(st);
    }
    return wrap_work(d);
}

static PyObject *f_pg_send(PyObject *m, PyObject *args) {
    PyObject *cap, *t;
    int dst;
    long long tag;
    if (!PyArg_ParseTuple(args, "OOiL", &cap, &t, &dst, &tag)) return NULL;
    tn_pg *pg = get_pg(cap);
    tn_tensor **ts;
    int nt;
    if (!pg || take_tensors(t, &ts, &nt) < 0) return NULL;
    if (nt != 1) {
        for (int i = 0; i < nt; i++) tn_tensor_release(ts[i]);
        free(ts);
        return PyErr_Format(PyExc_RuntimeError, "send: expected a single tensor");
    }
    tn_status st;
    tn_dist_clear();
    Py_BEGIN_ALLOW_THREADS
    st = tn_pg_send(pg, dst, TN_PG_KIND_P2P, (uint64_t)tag, 0, (uint16_t)ts[0]->dtype, tn_tensor_data(ts[0]),
                    nbytes(ts[0]));
    Py_END_ALLOW_THREADS
    tn_tensor_release(ts[0]);
    free(ts);
    dwork *d = calloc(1, sizeof *d);
    if (!d) return PyErr_NoMemory();
    d->pg = pg;
    d->w = tn_pg_work_completed(st, NULL, NULL);
    if (!d->w) {
        free(d);
        return PyErr_NoMemory();
    }
    tn_dist_clear();
    return wrap_work(d);
}

static PyObject *f_pg_recv(PyObject *m, PyObject *args) {
    PyObject *cap, *t;
    int src;
    long long tag;
    if (!PyArg_ParseTuple(args, "OOiL", &cap, &t, &src, &tag)) return NULL;
    tn_pg *pg = get_pg(cap);
    tn_tensor **ts;
    int nt;
    if (!pg || take_tensors(t, &ts, &nt) < 0) return NULL;
    if (nt != 1) {
        for (int i = 0; i < nt; i++) tn_tensor_release(ts[i]);
        free(ts);
        return PyErr_Format(PyExc_RuntimeError, "recv: expected a single tensor");
    }
    dwork *d = calloc(1, sizeof *d);
    if (!d) {
        tn_tensor_release(ts[0]);
        free(ts);
        return PyErr_NoMemory();
    }
    d->pg = pg;
    d->recv_tensor = ts[0];
    free(ts);
    tn_dist_clear();
    tn_status st = tn_pg_post_recv(pg, src, TN_PG_KIND_P2P, (uint64_t)tag, 0, (uint16_t)d->recv_tensor->dtype,
                                   tn_tensor_data(d->recv_tensor), nbytes(d->recv_tensor), &d->req);
    if (st != TN_OK) {
        tn_tensor_release(d->recv_tensor);
        free(d);
        return dist_raise(st);
    }
    return wrap_work(d);
}

static void work_capsule_del(PyObject *cap) {
    dwork *d = PyCapsule_GetPointer(cap, CAP_WORK);
    if (!d) return;
    if (d->req && !d->finished) {
        /* an unwaited receive still owns its buffer: withdraw it so the receiver thread
         * never writes into freed memory (a message arriving later is parked) */
        Py_BEGIN_ALLOW_THREADS
        tn_pg_req_cancel(d->pg, d->req);
        Py_END_ALLOW_THREADS
    }
    if (d->recv_tensor) tn_tensor_release(d->recv_tensor);
    tn_pg_work_release(d->w);
    free(d);
}

static dwork *get_work(PyObject *o) { return PyCapsule_GetPointer(o, CAP_WORK); }

/* work_wait(work, timeout_ms): True, or raises the work's error. */
static PyObject *f_work_wait(PyObject *m, PyObject *args) {
    PyObject *cap;
    long long timeout = 0;
    if (!PyArg_ParseTuple(args, "O|L", &cap, &timeout)) return NULL;
    dwork *d = get_work(cap);
    if (!d) return NULL;
    tn_status st;
    tn_dist_clear();
    if (d->req) {
        if (!d->finished) {
            int src = -1;
            Py_BEGIN_ALLOW_THREADS
            st = tn_pg_req_wait(d->pg, d->req, timeout > 0 ? tn_net_deadline(timeout) : -1, &src);
            Py_END_ALLOW_THREADS
            d->finished = 1;
            d->src = src;
            d->st = st;
            d->kind = tn_dist_error_kind();
            snprintf(d->msg, sizeof d->msg, "%s", st == TN_OK ? "" : tn_error_message());
        }
        st = d->st;
        if (st != TN_OK) {
            tn_error(st, "%s", d->msg);
            tn_dist_set_kind(d->kind);
        }
    } else {
        Py_BEGIN_ALLOW_THREADS
        st = tn_pg_work_wait(d->w, timeout);
        Py_END_ALLOW_THREADS
    }
    if (st != TN_OK) return dist_raise(st);
    Py_RETURN_TRUE;
}

static PyObject *f_work_done(PyObject *m, PyObject *args) {
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O", &cap)) return NULL;
    dwork *d = get_work(cap);
    if (!d) return NULL;
    if (d->req) return PyBool_FromLong(d->finished || tn_pg_req_test(d->pg, d->req));
    return PyBool_FromLong(tn_pg_work_done(d->w));
}

static PyObject *f_work_source(PyObject *m, PyObject *args) {
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O", &cap)) return NULL;
    dwork *d = get_work(cap);
    if (!d) return NULL;
    return PyLong_FromLong(d->req ? d->src : -1);
}

/* ---- DDP's reducer (src/dist/reducer.c) ---------------------------------------------- */
#define CAP_REDUCER "torchnative.dist.reducer"

/* The binding's side of a reducer: the group capsule it borrows (kept alive here) and
 * the Python communication hook, a pair (launch(bucket) -> handle, wait(handle) ->
 * tensor) of functions that hold the Python Reducer weakly (no cycle through the
 * capsule). */
typedef struct {
    tn_reducer *r;
    PyObject *pg_cap;
    PyObject *launch, *wait;
} preducer;

static void *gil_unlock(void) { return PyEval_SaveThread(); }
static void gil_relock(void *t) { PyEval_RestoreThread(t); }

static void reducer_del(PyObject *c) {
    preducer *pr = PyCapsule_GetPointer(c, CAP_REDUCER);
    if (!pr) return;
    tn_reducer_free(pr->r);
    Py_XDECREF(pr->pg_cap);
    Py_XDECREF(pr->launch);
    Py_XDECREF(pr->wait);
    free(pr);
}

static preducer *get_reducer(PyObject *o) { return PyCapsule_GetPointer(o, CAP_REDUCER); }

/* Python list of ints -> malloc'd int array (*n its length). */
static int *int_list(PyObject *o, Py_ssize_t *n) {
    PyObject *seq = PySequence_Tuple(o);
    if (!seq) return NULL;
    *n = PyTuple_Size(seq);
    int *a = malloc(sizeof(int) * ((size_t)*n + 1));
    if (!a) { Py_DECREF(seq); PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < *n; i++) {
        long v = PyLong_AsLong(PyTuple_GetItem(seq, i));
        if (v == -1 && PyErr_Occurred()) { free(a); Py_DECREF(seq); return NULL; }
        a[i] = (int)v;
    }
    Py_DECREF(seq);
    return a;
}

/* reducer_new(pg_cap, params, bucket_indices, find_unused, gradient_as_bucket_view) */
static PyObject *f_reducer_new(PyObject *m, PyObject *args) {
    PyObject *pgc, *params, *buckets;
    int find_unused, as_view;
    if (!PyArg_ParseTuple(args, "OOOpp", &pgc, &params, &buckets, &find_unused, &as_view)) return NULL;
    tn_pg *pg = get_pg(pgc);
    if (!pg) return NULL;
    PyObject *ps = PySequence_Tuple(params);
    PyObject *bs = ps ? PySequence_Tuple(buckets) : NULL;
    if (!bs) { Py_XDECREF(ps); return NULL; }
    Py_ssize_t np = PyTuple_Size(ps), nb = PyTuple_Size(bs);
    tn_tensor **pt = calloc((size_t)np + 1, sizeof *pt);
    int *start = calloc((size_t)nb + 1, sizeof(int)), *idx = calloc((size_t)np + 1, sizeof(int));
    PyObject *ret = NULL;
    if (!pt || !start || !idx) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < np; i++) {
        PyObject *o = PyTuple_GetItem(ps, i);
        if (!tn_py_is_tensor(o)) { PyErr_SetString(PyExc_TypeError, "params must be tensors"); goto done; }
        pt[i] = tn_py_tensor_get(o);
    }
    Py_ssize_t w = 0;
    for (Py_ssize_t b = 0; b < nb; b++) {
        Py_ssize_t k;
        int *one = int_list(PyTuple_GetItem(bs, b), &k);
        if (!one) goto done;
        start[b] = (int)w;
        for (Py_ssize_t j = 0; j < k; j++) {
            if (w >= np) { free(one); PyErr_SetString(PyExc_RuntimeError, "bucket_indices name more parameters than given"); goto done; }
            idx[w++] = one[j];
        }
        free(one);
    }
    start[nb] = (int)w;
    if (w != np) { PyErr_SetString(PyExc_RuntimeError, "bucket_indices must name every parameter exactly once"); goto done; }
    preducer *pr = calloc(1, sizeof *pr);
    if (!pr) { PyErr_NoMemory(); goto done; }
    /* finalize runs as a plain engine callback: a failed bucket all-reduce surfaces as
     * RuntimeError, the class upstream's reducer raises from gloo's failed future */
    tn_reducer_host host = {gil_unlock, gil_relock, NULL};
    tn_dist_clear();
    tn_status st = tn_reducer_new(pg, (int)np, pt, (int)nb, start, idx, find_unused, as_view, &host, &pr->r);
    if (st != TN_OK) { free(pr); dist_raise(st); goto done; }
    Py_INCREF(pgc);
    pr->pg_cap = pgc;
    ret = PyCapsule_New(pr, CAP_REDUCER, reducer_del);
    if (!ret) { tn_reducer_free(pr->r); Py_DECREF(pgc); free(pr); }
done:
    free(pt);
    free(start);
    free(idx);
    Py_DECREF(ps);
    Py_DECREF(bs);
    return ret;
}

/* reducer_prepare(cap, outputs): prepare_for_backward */
static PyObject *f_reducer_prepare(PyObject *m, PyObject *args) {
    PyObject *cap, *outs;
    if (!PyArg_ParseTuple(args, "OO", &cap, &outs)) return NULL;
    preducer *pr = get_reducer(cap);
    if (!pr) return NULL;
    PyObject *seq = PySequence_Tuple(outs);
    if (!seq) return NULL;
    Py_ssize_t n = PyTuple_Size(seq);
    tn_tensor **ts = calloc((size_t)n + 1, sizeof *ts);
    int k = 0;
    if (!ts) { Py_DECREF(seq); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GetItem(seq, i);
        if (tn_py_is_tensor(o)) ts[k++] = tn_py_tensor_get(o);
    }
    tn_status st = tn_reducer_prepare_for_backward(pr->r, k, ts);
    free(ts);
    Py_DECREF(seq);
    if (st != TN_OK) return tn_py_raise(st);
    Py_RETURN_NONE;
}

static PyObject *f_reducer_check(PyObject *m, PyObject *cap) {
    preducer *pr = get_reducer(cap);
    if (!pr) return NULL;
    tn_status st = tn_reducer_check_finalized(pr->r);
    if (st != TN_OK) return tn_py_raise(st);
    Py_RETURN_NONE;
}

/* reducer_rebuild(cap, limits) -> bool: upstream's _rebuild_buckets */
static PyObject *f_reducer_rebuild(PyObject *m, PyObject *args) {
    PyObject *cap, *lims;
    if (!PyArg_ParseTuple(args, "OO", &cap, &lims)) return NULL;
    preducer *pr = get_reducer(cap);
    if (!pr) return NULL;
    PyObject *t = PySequence_Tuple(lims);
    if (!t) return NULL;
    Py_ssize_t n = PyTuple_Size(t);
    int64_t *l = malloc(sizeof(int64_t) * ((size_t)n + 1));
    if (!l) { Py_DECREF(t); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) l[i] = PyLong_AsLongLong(PyTuple_GetItem(t, i));
    Py_DECREF(t);
    if (PyErr_Occurred()) { free(l); return NULL; }
    bool done = false;
    tn_dist_clear();
    tn_status st = tn_reducer_rebuild_buckets(pr->r, (int)n, l, &done);
    free(l);
    if (st != TN_OK) return dist_raise(st);
    return PyBool_FromLong(done);
}

/* reducer_hook(cap, index): the hook of one parameter, as DDP's _autograd_hook calls it */
static PyObject *f_reducer_hook(PyObject *m, PyObject *args) {
    PyObject *cap;
    int i;
    if (!PyArg_ParseTuple(args, "Oi", &cap, &i)) return NULL;
    preducer *pr = get_reducer(cap);
    if (!pr) return NULL;
    tn_dist_clear();
    tn_status st = tn_reducer_autograd_hook(pr->r, i, true);
    if (st != TN_OK) return st == TN_ERR_PYTHON ? NULL : dist_raise(st);
    Py_RETURN_NONE;
}

static tn_status py_comm_launch(void *ctx, tn_reducer *r, int b, void **handle) {
    preducer *pr = ctx;
    PyObject *h = PyObject_CallFunction(pr->launch, "i", b);
    if (!h) return TN_ERR_PYTHON;
    *handle = h;
    return TN_OK;
}

static tn_status py_comm_wait(void *ctx, void *handle, tn_tensor **out) {
    preducer *pr = ctx;
    PyObject *h = handle;
    PyObject *t = PyObject_CallFunctionObjArgs(pr->wait, h, NULL);
    Py_DECREF(h);
    if (!t) return TN_ERR_PYTHON;
    if (!tn_py_is_tensor(t)) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_RuntimeError, "the communication hook's future must hold a tensor");
        return TN_ERR_PYTHON;
    }
    *out = tn_py_tensor_get(t);
    tn_tensor_retain(*out);
    Py_DECREF(t);
    return TN_OK;
}

static void py_comm_free(void *ctx, void *handle) { Py_XDECREF((PyObject *)handle); }

/* reducer_set_comm(cap, builtin) or reducer_set_comm(cap, 0, launch, wait) */
static PyObject *f_reducer_set_comm(PyObject *m, PyObject *args) {
    PyObject *cap, *launch = NULL, *wait = NULL;
    int builtin;
    if (!PyArg_ParseTuple(args, "Oi|OO", &cap, &builtin, &launch, &wait)) return NULL;
    preducer *pr = get_reducer(cap);
    if (!pr) return NULL;
    tn_status st;
    if (launch) {
        tn_reducer_comm c = {py_comm_launch, py_comm_wait, py_comm_free, pr};
        st = tn_reducer_set_comm(pr->r, 0, &c);
        if (st == TN_OK) {
            Py_INCREF(launch);
            Py_INCREF(wait);
            pr->launch = launch;
            pr->wait = wait;
        }
    } else {
        st = tn_reducer_set_comm(pr->r, builtin, NULL);
    }
    if (st != TN_OK) return tn_py_raise(st);
    Py_RETURN_NONE;
}

/* reducer_bucket(cap, b) -> (buffer, [views], [param indices], nbuckets) */
static PyObject *f_reducer_bucket(PyObject *m, PyObject *args) {
    PyObject *cap;
    int b;
    if (!PyArg_ParseTuple(args, "Oi", &cap, &b)) return NULL;
    preducer *pr = get_reducer(cap);
    if (!pr) return NULL;
    int nb = tn_reducer_num_buckets(pr->r);
    if (b < 0 || b >= nb) return PyErr_Format(PyExc_IndexError, "bucket %d out of range", b);
    int nv;
    const int *vars;
    tn_tensor *contents;
    tn_tensor *const *views;
    tn_reducer_bucket(pr->r, b, &nv, &vars, &contents, &views);
    PyObject *vl = PyList_New(nv), *il = PyList_New(nv);
    if (!vl || !il) { Py_XDECREF(vl); Py_XDECREF(il); return NULL; }
    for (int k = 0; k < nv; k++) {
        tn_tensor_retain(views[k]);
        PyList_SetItem(vl, k, tn_py_tensor_wrap(views[k]));
        PyList_SetItem(il, k, PyLong_FromLong(vars[k]));
    }
    tn_tensor_retain(contents);
    return Py_BuildValue("(NNNi)", tn_py_tensor_wrap(contents), vl, il, nb);
}

/* bucket_assignment(nbytes, keys, sparse, limits, sort) -> ([[idx...]...], [limit...]) */
static PyObject *f_bucket_assignment(PyObject *m, PyObject *args) {
    PyObject *nbo, *ko, *so, *lo;
    int sort;
    if (!PyArg_ParseTuple(args, "OOOOp", &nbo, &ko, &so, &lo, &sort)) return NULL;
    PyObject *nbs = PySequence_Tuple(nbo), *ks = PySequence_Tuple(ko),
             *ss = PySequence_Tuple(so), *ls = PySequence_Tuple(lo);
    PyObject *ret = NULL;
    int64_t *nbytes = NULL, *limits = NULL, *blim = NULL;
    int32_t *keys = NULL;
    uint8_t *sparse = NULL;
    int *bstart = NULL, *bidx = NULL, nb = 0;
    if (!nbs || !ks || !ss || !ls) goto done;
    Py_ssize_t n = PyTuple_Size(nbs), nl = PyTuple_Size(ls);
    nbytes = malloc(sizeof *nbytes * ((size_t)n + 1));
    keys = malloc(sizeof *keys * ((size_t)n + 1));
    sparse = calloc((size_t)n + 1, 1);
    limits = malloc(sizeof *limits * ((size_t)nl + 1));
    if (!nbytes || !keys || !sparse || !limits) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < n; i++) {
        nbytes[i] = PyLong_AsLongLong(PyTuple_GetItem(nbs, i));
        keys[i] = (int32_t)PyLong_AsLong(PyTuple_GetItem(ks, i));
        sparse[i] = i < PyTuple_Size(ss) && PyObject_IsTrue(PyTuple_GetItem(ss, i)) == 1;
    }
    for (Py_ssize_t i = 0; i < nl; i++) limits[i] = PyLong_AsLongLong(PyTuple_GetItem(ls, i));
    if (PyErr_Occurred()) goto done;
    tn_status st = tn_bucket_assignment((int)n, nbytes, keys, sparse, (int)nl, limits, sort, &nb, &bstart, &bidx, &blim);
    if (st != TN_OK) { tn_py_raise(st); goto done; }
    PyObject *bl = PyList_New(nb), *ll = PyList_New(nb);
    if (!bl || !ll) { Py_XDECREF(bl); Py_XDECREF(ll); goto done; }
    for (int b = 0; b < nb; b++) {
        PyObject *one = PyList_New(bstart[b + 1] - bstart[b]);
        for (int k = bstart[b]; one && k < bstart[b + 1]; k++) PyList_SetItem(one, k - bstart[b], PyLong_FromLong(bidx[k]));
        PyList_SetItem(bl, b, one);
        PyList_SetItem(ll, b, PyLong_FromLongLong(blim[b]));
    }
    ret = Py_BuildValue("(NN)", bl, ll);
done:
    Py_XDECREF(nbs); Py_XDECREF(ks); Py_XDECREF(ss); Py_XDECREF(ls);
    free(nbytes); free(keys); free(sparse); free(limits); free(bstart); free(bidx); free(blim);
    return ret;
}

static PyMethodDef dist_methods[] = {
    {"reducer_new", f_reducer_new, METH_VARARGS, NULL},
    {"reducer_prepare", f_reducer_prepare, METH_VARARGS, NULL},
    {"reducer_check", f_reducer_check, METH_O, NULL},
    {"reducer_rebuild", f_reducer_rebuild, METH_VARARGS, NULL},
    {"reducer_hook", f_reducer_hook, METH_VARARGS, NULL},
    {"reducer_set_comm", f_reducer_set_comm, METH_VARARGS, NULL},
    {"reducer_bucket", f_reducer_bucket, METH_VARARGS, NULL},
    {"bucket_assignment", f_bucket_assignment, METH_VARARGS, NULL},
    {"server_start", f_server_start, METH_VARARGS, NULL},
    {"client_connect", f_client_connect, METH_VARARGS, NULL},
    {"wait_workers", f_wait_workers, METH_VARARGS, NULL},
    {"file_open", f_file_open, METH_VARARGS, NULL},
    {"store_set_timeout", f_store_set_timeout, METH_VARARGS, NULL},
    {"store_set", f_store_set, METH_VARARGS, NULL},
    {"store_append", f_store_append, METH_VARARGS, NULL},
    {"store_get", f_store_get, METH_VARARGS, NULL},
    {"store_add", f_store_add, METH_VARARGS, NULL},
    {"store_compare_set", f_store_compare_set, METH_VARARGS, NULL},
    {"store_delete", f_store_delete, METH_VARARGS, NULL},
    {"store_num_keys", f_store_num_keys, METH_VARARGS, NULL},
    {"store_check", f_store_check, METH_VARARGS, NULL},
    {"store_wait", f_store_wait, METH_VARARGS, NULL},
    {"store_multi_get", f_store_multi_get, METH_VARARGS, NULL},
    {"store_multi_set", f_store_multi_set, METH_VARARGS, NULL},
    {"store_queue_push", f_store_queue_push, METH_VARARGS, NULL},
    {"store_queue_pop", f_store_queue_pop, METH_VARARGS, NULL},
    {"store_queue_len", f_store_queue_len, METH_VARARGS, NULL},
    {"store_list_keys", f_store_list_keys, METH_VARARGS, NULL},
    {"pg_new", f_pg_new, METH_VARARGS, NULL},
    {"pg_connect", f_pg_connect, METH_VARARGS, NULL},
    {"pg_set_timeout", f_pg_set_timeout, METH_VARARGS, NULL},
    {"pg_collective", f_pg_collective, METH_VARARGS, NULL},
    {"pg_send", f_pg_send, METH_VARARGS, NULL},
    {"pg_recv", f_pg_recv, METH_VARARGS, NULL},
    {"work_wait", f_work_wait, METH_VARARGS, NULL},
    {"work_done", f_work_done, METH_VARARGS, NULL},
    {"work_source", f_work_source, METH_VARARGS, NULL},
    {NULL},
};

static struct PyModuleDef dist_module_def = {
    PyModuleDef_HEAD_INIT, "torch._C._tn_dist", "torchnative's distributed core (stores, gloo process group).", -1,
    dist_methods,
};

int tn_py_init_dist(PyObject *m) {
    PyObject *d = PyModule_Create(&dist_module_def);
    if (!d) return -1;
    static const char *ops[] = {"BROADCAST", "ALLREDUCE", "REDUCE", "ALLGATHER", "GATHER", "SCATTER",
                                "ALLTOALL", "REDUCE_SCATTER", "BARRIER", "MONITORED_BARRIER"};
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
        if (PyModule_AddIntConstant(d, ops[i], i) < 0) {
            Py_DECREF(d);
            return -1;
        }
    if (PyModule_AddObject(m, "_tn_dist", d) < 0) {
        Py_DECREF(d);
        return -1;
    }
    return 0;
}
