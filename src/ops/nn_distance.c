/* nn_distance.c — aten::_pdist_forward and aten::_pdist_backward, upstream's pdist kernels
 * (kernels/distance.h) behind upstream's checks. pdist itself (composite_shape.c) is
 * _pdist_forward of the contiguous input, as upstream's, so its gradient is the row
 * generated from derivatives.yaml (_pdist_backward; no double backward, as upstream).
 * Float32 and float64 only, as upstream. */
#include <string.h>

#include "kernels/distance.h"
#include "kernels/reduce.h"
#include "ops/dispatch.h"
#include "ops/nn_internal.h"

/* upstream's kernels read self as size(0) rows of size(1) (its first n m elements whatever
 * its rank): size(0) of a 0-dim self, and size(1) of a 1-d one (the forward asks only past
 * one row), raise IndexError there */
static tn_status rows_of(const tn_tensor *x, bool forward, int64_t *n, int64_t *m) {
    if (x->ndim == 0) return tn_error(TN_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions");
    *n = x->sizes[0];
    *m = 0;
    if (forward && *n <= 1) return TN_OK;
    if (x->ndim == 1) return tn_error(TN_ERR_INDEX, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
    *m = x->sizes[1];
    return TN_OK;
}

/* aten::_pdist_forward(Tensor self, float p=2) -> Tensor */
tn_status tn_op__pdist_forward(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *out;
    double p = args[1].u.d;
    if (!tn_tensor_is_contiguous(x)) return tn_error(TN_ERR_RUNTIME, "_pdist_forward requires contiguous input");
    int64_t n = 0, m = 0, c;
    TN_TRY(rows_of(x, true, &n, &m));
    c = n > 1 ? n * (n - 1) / 2 : 0;
    if (c > 0 && m > 0) TN_TRY(tn_nn_check_f32_f64(x->dtype, "pdist"));
    TN_TRY(tn_tensor_empty(1, &c, x->dtype, tn_tensor_device(x), &out));
    if (!tn_tensor_is_meta(out) && c > 0) {
        if (m == 0) {
            memset(tn_tensor_data(out), 0, (size_t)(c * tn_dtype_itemsize(x->dtype)));
        } else {
            /* upstream registers its pdist kernel up to AVX2 (an AVX-512 host runs that
             * build): 32-byte vectors, the float lanes folded by its SIMD butterfly; every
             * tier here gives those bits, as the softmax rows do */
            int bytes = tn_reduce_vec_bytes(false);
            bool bfly = true;
            if (x->dtype == TN_DTYPE_FLOAT32) tn_pdist_f32(tn_tensor_data(out), tn_tensor_data(x), n, m, p, bytes / 4, bfly);
            else tn_pdist_f64(tn_tensor_data(out), tn_tensor_data(x), n, m, p, bytes / 8, false);
        }
    }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor */
tn_status tn_op__pdist_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *g = args[0].u.t, *x = args[1].u.t, *dist = args[3].u.t, *res;
    double p = args[2].u.d;
    if (!tn_tensor_is_contiguous(x)) return tn_error(TN_ERR_RUNTIME, "_pdist_backward requires self to be contiguous");
    if (!tn_tensor_is_contiguous(dist)) return tn_error(TN_ERR_RUNTIME, "_pdist_backward requires pdist to be contiguous");
    TN_TRY(tn_tensor_empty(x->ndim, x->sizes, x->dtype, tn_tensor_device(x), &res));
    int64_t nbytes = tn_tensor_numel(x) * tn_dtype_itemsize(x->dtype);
    /* upstream's kernel: zeros, before its dtype dispatch, for p = 0 or nothing to read */
    if (p == 0 || tn_tensor_numel(g) == 0 || tn_tensor_numel(x) == 0) {
        if (!tn_tensor_is_meta(res) && nbytes > 0) memset(tn_tensor_data(res), 0, (size_t)nbytes);
        rets[0] = tn_value_tensor(res);
        return TN_OK;
    }
    int64_t n = 0, m = 0;
    tn_status st = tn_nn_check_f32_f64(x->dtype, "pdist_backward");
    if (st == TN_OK) st = rows_of(x, false, &n, &m);
    if (st == TN_OK && g->ndim == 0) /* upstream's grad.stride(0) */
        st = tn_error(TN_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions");
    int64_t c = n > 1 ? n * (n - 1) / 2 : 0;
    /* upstream reads grad (at its first stride) and pdist as self's type, one value per
     * pair, unchecked; here a short or mistyped one is refused rather than read past */
    if (st == TN_OK && (g->dtype != x->dtype || dist->dtype != x->dtype))
        st = tn_error(TN_ERR_RUNTIME, "_pdist_backward: expected grad and pdist of dtype %s, got %s and %s",
                      tn_dtype_infos[x->dtype].c10_name, tn_dtype_infos[g->dtype].c10_name, tn_dtype_infos[dist->dtype].c10_name);
    if (st == TN_OK && c > 0 && (g->ndim != 1 || g->sizes[0] < c || tn_tensor_numel(dist) < c))
        st = tn_error(TN_ERR_RUNTIME, "_pdist_backward: expected grad and pdist of %lld elements (one per pair of the "
                      "%lld rows), got %lld and %lld", (long long)c, (long long)n, (long long)tn_tensor_numel(g),
                      (long long)tn_tensor_numel(dist));
    if (st != TN_OK) {
        tn_tensor_release(res);
        return st;
    }
    if (!tn_tensor_is_meta(res)) {
        memset(tn_tensor_data(res), 0, (size_t)nbytes); /* beyond the n x m the kernel writes (a 3-d self) */
        int64_t gs = g->strides[0];
        if (x->dtype == TN_DTYPE_FLOAT32)
            tn_pdist_backward_f32(tn_tensor_data(res), tn_tensor_data(g), gs, tn_tensor_data(x), tn_tensor_data(dist), n, m, p);
        else
            tn_pdist_backward_f64(tn_tensor_data(res), tn_tensor_data(g), gs, tn_tensor_data(x), tn_tensor_data(dist), n, m, p);
    }
    rets[0] = tn_value_tensor(res);
    return TN_OK;
}
