/* value.h — an operator argument or result as the door sees it: a tagged union with one
 * case per schema type family. The binding's argument parser fills these from Python
 * objects (following the operator's schema); op implementations read them by position.
 *
 * Ownership: values are borrowed views of the caller's objects for the duration of one
 * call. Result tensors (TN_V_TENSOR in a result array) carry one reference owned by the
 * receiver. Plain C11; no Python. */
#ifndef TN_VALUE_H
#define TN_VALUE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "core/tensor.h"

typedef enum tn_value_tag {
    TN_V_NONE = 0,   /* absent optional */
    TN_V_TENSOR,     /* Tensor; also Tensor? when present */
    TN_V_INT,        /* int, SymInt, Scalar holding an int */
    TN_V_UINT,       /* Scalar holding an int in [2**63, 2**64) (u.u): upstream's Scalar Tag::UInt */
    TN_V_DOUBLE,     /* float, Scalar holding a float */
    TN_V_BOOL,       /* bool, Scalar holding a bool */
    TN_V_COMPLEX,    /* Scalar holding a complex */
    TN_V_INTLIST,    /* int[], SymInt[] */
    TN_V_DOUBLELIST, /* float[] */
    TN_V_BOOLLIST,   /* bool[] */
    TN_V_TENSORLIST, /* Tensor[] and Tensor?[] (NULL entries are None) */
    TN_V_SCALARLIST, /* Scalar[]: list of tn_value */
    TN_V_STRING,     /* str */
    TN_V_DTYPE,      /* ScalarType */
    TN_V_LAYOUT,     /* Layout: 0 strided, see layout enum in the binding */
    TN_V_DEVICE,     /* Device */
    TN_V_MEMFMT,     /* MemoryFormat: 0 contiguous, 1 preserve, 2 channels_last, 3 channels_last_3d */
    TN_V_GENERATOR,  /* Generator (a struct tn_generator *) */
    TN_V_OPAQUE,     /* anything else the op is handed untouched (Dimname, Storage, ...) */
} tn_value_tag;

typedef struct tn_value tn_value;
struct tn_value {
    tn_value_tag tag;
    union {
        tn_tensor *t;
        int64_t i;
        uint64_t u;
        double d;
        bool b;
        struct { double re, im; } c;
        struct { const int64_t *data; int64_t n; } ilist;
        struct { const double *data; int64_t n; } dlist;
        struct { const bool *data; int64_t n; } blist;
        struct { tn_tensor *const *data; int64_t n; } tlist;
        struct { const tn_value *data; int64_t n; } slist;
        struct { const char *data; int64_t n; } s;
        tn_dtype dtype;
        int layout;
        tn_device device;
        int memfmt;
        void *ptr; /* generator or opaque */
    } u;
};

static inline tn_value tn_value_tensor(tn_tensor *t) { tn_value v = {.tag = TN_V_TENSOR}; v.u.t = t; return v; }
static inline tn_value tn_value_int(int64_t i) { tn_value v = {.tag = TN_V_INT}; v.u.i = i; return v; }
static inline tn_value tn_value_uint(uint64_t u) { tn_value v = {.tag = TN_V_UINT}; v.u.u = u; return v; }
static inline tn_value tn_value_double(double d) { tn_value v = {.tag = TN_V_DOUBLE}; v.u.d = d; return v; }
static inline tn_value tn_value_bool(bool b) { tn_value v = {.tag = TN_V_BOOL}; v.u.b = b; return v; }
/* Borrows p: the list must outlive every use of the value. */
/* A tensor list result: takes ownership of p (calloc'd) and of its n references. */
static inline tn_value tn_value_tensorlist(tn_tensor **p, int64_t n) {
    tn_value v = {.tag = TN_V_TENSORLIST};
    v.u.tlist.data = p;
    v.u.tlist.n = n;
    return v;
}
/* Releases the non-NULL tensors of p[0..n) and frees p: a list result abandoned on error. */
static inline void tn_tensorlist_discard(tn_tensor **p, int64_t n) {
    for (int64_t k = 0; p && k < n; k++)
        if (p[k]) tn_tensor_release(p[k]);
    free(p);
}
static inline tn_value tn_value_intlist(const int64_t *p, int64_t n) {
    tn_value v = {.tag = TN_V_INTLIST};
    v.u.ilist.data = p;
    v.u.ilist.n = n;
    return v;
}
static inline bool tn_value_is_none(const tn_value *v) { return v->tag == TN_V_NONE; }

/* Releases what a result value owns: a tensor's reference, or for a TN_V_TENSORLIST
 * result (e.g. split, unbind) each tensor's reference and the malloc'd array itself. */
void tn_value_release(tn_value *v);

#endif
