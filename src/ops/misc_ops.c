/* misc_ops.c — small operators that belong to no larger family yet: isin, equal,
 * broadcast_tensors. */
#include <stdlib.h>
#include <string.h>

#include "core/scalar.h"
#include "ops/dispatch.h"
#include "ops/shape.h"

/* Element i of a tensor (any layout) as a tn_value, walking the index in row-major order. */
static tn_status load_at(const tn_tensor *t, int64_t linear, tn_value *out) {
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t i = linear % t->sizes[d];
        linear /= t->sizes[d];
        off += i * t->strides[d];
    }
    return tn_scalar_load(t->dtype, (const char *)tn_tensor_data(t) + off * tn_dtype_itemsize(t->dtype), out);
}

static bool value_eq(const tn_value *a, const tn_value *b) {
    if (a->tag == TN_V_COMPLEX || b->tag == TN_V_COMPLEX) {
        double ar = a->tag == TN_V_COMPLEX ? a->u.c.re : a->tag == TN_V_DOUBLE ? a->u.d : (double)(a->tag == TN_V_INT ? a->u.i : a->u.b);
        double br = b->tag == TN_V_COMPLEX ? b->u.c.re : b->tag == TN_V_DOUBLE ? b->u.d : (double)(b->tag == TN_V_INT ? b->u.i : b->u.b);
        double ai = a->tag == TN_V_COMPLEX ? a->u.c.im : 0, bi = b->tag == TN_V_COMPLEX ? b->u.c.im : 0;
        return ar == br && ai == bi;
    }
    if (a->tag != TN_V_DOUBLE && b->tag != TN_V_DOUBLE) {
        int64_t x = a->tag == TN_V_INT ? a->u.i : a->u.b, y = b->tag == TN_V_INT ? b->u.i : b->u.b;
        return x == y;
    }
    double x = a->tag == TN_V_DOUBLE ? a->u.d : (double)(a->tag == TN_V_INT ? a->u.i : a->u.b);
    double y = b->tag == TN_V_DOUBLE ? b->u.d : (double)(b->tag == TN_V_INT ? b->u.i : b->u.b);
    return x == y;
}

/* out[i] = (elements[i] in test) != invert; test given as n values. */
static tn_status isin_impl(const tn_tensor *elements, const tn_value *elem_scalar, const tn_value *test, int64_t ntest,
                           bool invert, tn_value *rets) {
    int ndim = elements ? elements->ndim : 0;
    tn_tensor *out;
    TN_TRY(tn_tensor_empty(ndim, elements ? elements->sizes : NULL, TN_DTYPE_BOOL,
                           elements ? tn_tensor_device(elements) : tn_device_cpu(), &out));
    if (!tn_tensor_is_meta(out)) {
        int64_t n = elements ? tn_tensor_numel(elements) : 1;
        uint8_t *o = tn_tensor_data(out);
        for (int64_t i = 0; i < n; i++) {
            tn_value v;
            if (elements) {
                tn_status st = load_at(elements, i, &v);
                if (st != TN_OK) { tn_tensor_release(out); return st; }
            } else {
                v = *elem_scalar;
            }
            bool found = false;
            for (int64_t j = 0; j < ntest && !found; j++) found = value_eq(&v, &test[j]);
            o[i] = found != invert;
        }
    }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

static tn_status tensor_values(const tn_tensor *t, tn_value **out, int64_t *n) {
    *n = tn_tensor_numel(t);
    *out = malloc(sizeof(tn_value) * (size_t)(*n ? *n : 1));
    if (!*out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < *n; i++) {
        tn_status st = load_at(t, i, &(*out)[i]);
        if (st != TN_OK) { free(*out); return st; }
    }
    return TN_OK;
}

/* isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) */
/* upstream's isin meta refuses Bool and complex tensors (check_for_unsupported_isin_dtype) */
static tn_status isin_check_dtype(tn_dtype dt) {
    if (dt == TN_DTYPE_BOOL || tn_dtype_is_complex(dt))
        return tn_error(TN_ERR_RUNTIME, "Unsupported input type encountered for isin(): %s", tn_dtype_infos[dt].c10_name);
    return TN_OK;
}

tn_status tn_op_isin_Tensor_Tensor(const tn_value *args, tn_value *rets) {
    tn_value *vals;
    int64_t n;
    TN_TRY(isin_check_dtype(args[0].u.t->dtype));
    TN_TRY(isin_check_dtype(args[1].u.t->dtype));
    if (tn_tensor_is_meta(args[1].u.t)) return isin_impl(args[0].u.t, NULL, NULL, 0, args[3].u.b, rets);
    TN_TRY(tensor_values(args[1].u.t, &vals, &n));
    tn_status st = isin_impl(args[0].u.t, NULL, vals, n, args[3].u.b, rets);
    free(vals);
    return st;
}

/* isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False) */
tn_status tn_op_isin_Tensor_Scalar(const tn_value *args, tn_value *rets) {
    TN_TRY(isin_check_dtype(args[0].u.t->dtype));
    return isin_impl(args[0].u.t, NULL, &args[1], 1, args[3].u.b, rets);
}

/* isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False) */
tn_status tn_op_isin_Scalar_Tensor(const tn_value *args, tn_value *rets) {
    tn_value *vals;
    int64_t n;
    TN_TRY(isin_check_dtype(args[1].u.t->dtype));
    TN_TRY(tensor_values(args[1].u.t, &vals, &n));
    tn_status st = isin_impl(NULL, &args[0], vals, n, args[3].u.b, rets);
    free(vals);
    return st;
}

/* equal(self, other) -> bool: same sizes and every element equal (NaN is never equal). */
tn_status tn_op_equal(const tn_value *args, tn_value *rets) {
    const tn_tensor *a = args[0].u.t, *b = args[1].u.t;
    if (tn_tensor_is_meta(a) || tn_tensor_is_meta(b))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::equal on meta tensors is not implemented by torchnative");
    bool eq = a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim);
    int64_t n = eq ? tn_tensor_numel(a) : 0;
    for (int64_t i = 0; eq && i < n; i++) {
        tn_value x, y;
        TN_TRY(load_at(a, i, &x));
        TN_TRY(load_at(b, i, &y));
        eq = value_eq(&x, &y);
    }
    rets[0] = tn_value_bool(eq);
    return TN_OK;
}

/* broadcast_tensors(Tensor[] tensors) -> Tensor[]: expanded views to the common shape.
 * The result list is malloc'd (see tn_value_release). */
tn_status tn_op_broadcast_tensors(const tn_value *args, tn_value *rets) {
    int64_t n = args[0].u.tlist.n;
    tn_tensor *const *ts = args[0].u.tlist.data;
    int nd = 0;
    int64_t shape[TN_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        int64_t next[TN_MAX_DIMS];
        int nn;
        TN_TRY(tn_shape_broadcast(nd, shape, ts[i]->ndim, ts[i]->sizes, &nn, next));
        nd = nn;
        memcpy(shape, next, sizeof(int64_t) * (size_t)nd);
    }
    tn_tensor **out = calloc(n > 0 ? (size_t)n : 1, sizeof *out);
    if (!out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        tn_status st = tn_shape_expand_view(ts[i], nd, shape, &out[i]);
        if (st != TN_OK) {
            for (int64_t j = 0; j < i; j++) tn_tensor_release(out[j]);
            free(out);
            return st;
        }
    }
    rets[0].tag = TN_V_TENSORLIST;
    rets[0].u.tlist.data = out;
    rets[0].u.tlist.n = n;
    return TN_OK;
}
