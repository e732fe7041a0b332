/* composite_internal.h — private to the composite op files (src/ops/composite*.c): a
 * composition's scratch, so an operator written as a chain of door calls reads as the chain.
 *
 * Every call goes through the door (so autograd, when the operator is listed in
 * src/autograd/decompose.c, records the parts). Temporaries are owned by the scratch and
 * released together by tn_cx_finish; the first failure sticks and later calls are skipped
 * (they return NULL), so a chain needs one status check at its end. */
#ifndef TN_OPS_COMPOSITE_INTERNAL_H
#define TN_OPS_COMPOSITE_INTERNAL_H

#include "ops/dispatch.h"

#define TN_CX_MAX 96

typedef struct tn_cx {
    tn_tensor *tmp[TN_CX_MAX];
    int n;
    tn_status st;
} tn_cx;

/* Runs op(args) and returns its first result, owned by the scratch; NULL once any call has
 * failed (then nothing runs). Further results of a multi-result op are released. */
static inline tn_tensor *tn_cx_call(tn_cx *c, tn_op_id op, const tn_value *args) {
    if (c->st != TN_OK) return NULL;
    if (c->n == TN_CX_MAX) {
        c->st = tn_error(TN_ERR_RUNTIME, "composition scratch exhausted (internal)");
        return NULL;
    }
    tn_value r[8];
    c->st = tn_dispatch(op, args, r);
    if (c->st != TN_OK) return NULL;
    for (int k = 1; k < tn_op_schemas[op].nrets; k++) tn_value_release(&r[k]);
    return c->tmp[c->n++] = r[0].u.t;
}

/* Keeps a tensor the scratch did not create alive until the finish (retained here). */
static inline tn_tensor *tn_cx_keep(tn_cx *c, tn_tensor *t) {
    if (c->st != TN_OK || !t) return t;
    if (c->n == TN_CX_MAX) {
        c->st = tn_error(TN_ERR_RUNTIME, "composition scratch exhausted (internal)");
        return NULL;
    }
    tn_tensor_retain(t);
    return c->tmp[c->n++] = t;
}

/* Records an error found by the composition itself (argument checks between calls). */
static inline void tn_cx_fail(tn_cx *c, tn_status st) {
    if (c->st == TN_OK) c->st = st;
}

/* Ends the composition: on success rets[0..n-1] are new references to results[0..n-1];
 * every temporary is released either way. Returns the sticky status. */
static inline tn_status tn_cx_finish_n(tn_cx *c, int n, tn_tensor *const *results, tn_value *rets) {
    if (c->st == TN_OK)
        for (int k = 0; k < n; k++) {
            tn_tensor_retain(results[k]);
            rets[k] = tn_value_tensor(results[k]);
        }
    for (int k = 0; k < c->n; k++) tn_tensor_release(c->tmp[k]);
    c->n = 0;
    return c->st;
}
static inline tn_status tn_cx_finish(tn_cx *c, tn_tensor *result, tn_value *rets) {
    return tn_cx_finish_n(c, 1, &result, rets);
}

/* A dimension argument of a composition: checked by the core's tn_wrap_dim (upstream's
 * IndexError text), then wrapped; ndim 0 behaves as 1. */
static inline tn_status tn_cx_check_dim(int64_t d, int nd) {
    int w;
    return tn_wrap_dim(d, nd, &w);
}
static inline int64_t tn_cx_wrap_dim(int64_t d, int nd) { return d < 0 ? d + (nd > 0 ? nd : 1) : d; }

/* Releases the temporaries without producing a result (a composition that hands its
 * result over some other way). */
static inline void tn_cx_release(tn_cx *c) {
    for (int k = 0; k < c->n; k++) tn_tensor_release(c->tmp[k]);
    c->n = 0;
}

/* Argument shorthands for the door's positional arrays. */
#define TN_T(x) tn_value_tensor(x)
#define TN_I(x) tn_value_int(x)
#define TN_D(x) tn_value_double(x)
#define TN_B(x) tn_value_bool(x)
#define TN_NONE ((tn_value){.tag = TN_V_NONE})
#define TN_DT(d) ((tn_value){.tag = TN_V_DTYPE, .u.dtype = (d)})
#define TN_MF(m) ((tn_value){.tag = TN_V_MEMFMT, .u.memfmt = (m)}) /* 0: contiguous_format */
#define TN_ARGS(...) ((const tn_value[]){__VA_ARGS__})

#endif
