/* reduce_sort.c — sort, argsort and topk along one dim. NaN sorts above every number
 * (last ascending, first descending), as upstream. A stable sort keeps equal keys in index
 * order (a merge sort); an unstable one (stable=False, the default) leaves them where
 * libstdc++'s std::sort, which upstream calls, leaves them (tn_std_sort_perm). */
#include "ops/reduce.h"

#include <stdlib.h>

typedef struct sort_keys {
    const double *f; /* float keys, or NULL */
    const int64_t *i; /* integer keys */
    bool desc, u64;
} sort_keys;

/* Whether key a must come strictly before key b. */
static inline bool before(const sort_keys *k, int64_t a, int64_t b) {
    if (k->f) {
        double x = k->f[a], y = k->f[b];
        if (k->desc) return (isnan(x) && !isnan(y)) || x > y;
        return (!isnan(x) && isnan(y)) || x < y;
    }
    int64_t x = k->i[a], y = k->i[b];
    if (k->u64) return k->desc ? (uint64_t)x > (uint64_t)y : (uint64_t)x < (uint64_t)y;
    return k->desc ? x > y : x < y;
}

static bool perm_before(const void *ctx, int64_t a, int64_t b) { return before(ctx, a, b); }

/* Stable bottom-up merge sort of the permutation idx[0..n) (tmp has n slots). */
static void merge_sort(const sort_keys *k, int64_t *idx, int64_t *tmp, int64_t n) {
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) tmp[o++] = before(k, idx[j], idx[i]) ? idx[j++] : idx[i++];
            while (i < mid) tmp[o++] = idx[i++];
            while (j < hi) tmp[o++] = idx[j++];
        }
        memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
    }
}

static int64_t lane_off(const tn_tensor *t, int dim, int64_t k) {
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (d == dim) continue;
        off += (k % t->sizes[d]) * t->strides[d];
        k /= t->sizes[d];
    }
    return off * tn_dtype_itemsize(t->dtype);
}

/* How a lane is ordered: stably, as std::sort, or as upstream's topk (sorted or not). */
enum { ORDER_STABLE, ORDER_STD_SORT, ORDER_TOPK_SORTED, ORDER_TOPK };

/* Sorts every lane of self along dim and writes the first k of each into new tensors
 * (values may be NULL when only indices are wanted). */
static tn_status sort_core(tn_tensor *self, int dim, bool desc, int order, int64_t k, tn_tensor **vals, tn_tensor **idxs) {
    TN_TRY(tn_reduce_check_dtype("sort", self->dtype));
    int64_t sizes[TN_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    if (self->ndim) sizes[dim] = k;
    tn_tensor *v = NULL, *ix;
    if (vals) TN_TRY(tn_tensor_empty(self->ndim, sizes, self->dtype, tn_tensor_device(self), &v));
    tn_status st = tn_tensor_empty(self->ndim, sizes, TN_DTYPE_INT64, tn_tensor_device(self), &ix);
    if (st != TN_OK) { tn_tensor_release(v); return st; }
    int64_t numel = tn_tensor_numel(self);
    int64_t n = self->ndim ? self->sizes[dim] : 1;
    if (!tn_tensor_is_meta(self) && numel > 0 && k > 0) {
        int64_t lanes = numel / n;
        int es = tn_dtype_itemsize(self->dtype);
        int64_t is = (self->ndim ? self->strides[dim] : 0) * es;
        int64_t vs = v ? (self->ndim ? v->strides[dim] : 0) * es : 0, xs = (self->ndim ? ix->strides[dim] : 0) * 8;
        bool fl = tn_dtype_is_floating(self->dtype);
        char *scratch = malloc((size_t)n * 24);
        if (!scratch) { tn_tensor_release(v); tn_tensor_release(ix); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
        int64_t *perm = (int64_t *)scratch, *tmp = perm + n;
        void *keys = perm + 2 * n;
        sort_keys sk = {fl ? keys : NULL, fl ? NULL : keys, desc, self->dtype == TN_DTYPE_UINT64};
        for (int64_t l = 0; l < lanes; l++) {
            const char *p = (const char *)tn_tensor_data(self) + (self->ndim ? lane_off(self, dim, l) : 0);
            for (int64_t i = 0; i < n; i++) {
                perm[i] = i;
                if (fl) ((double *)keys)[i] = tn_rd_get(p + i * is, self->dtype);
                else ((int64_t *)keys)[i] = tn_rd_get_i(p + i * is, self->dtype);
            }
            /* upstream returns the identity order for a lane of stride 0 (an expanded dim) */
            if (order >= ORDER_TOPK_SORTED) tn_std_topk_perm(perm, n, k, order == ORDER_TOPK_SORTED, perm_before, &sk);
            else if (self->ndim && self->strides[dim] == 0) (void)0;
            else if (order == ORDER_STABLE) merge_sort(&sk, perm, tmp, n);
            else tn_std_sort_perm(perm, n, perm_before, &sk);
            char *q = (char *)tn_tensor_data(ix) + (self->ndim ? lane_off(ix, dim, l) : 0);
            char *w = v ? (char *)tn_tensor_data(v) + (self->ndim ? lane_off(v, dim, l) : 0) : NULL;
            for (int64_t i = 0; i < k; i++) {
                memcpy(q + i * xs, &perm[i], 8);
                if (w) memcpy(w + i * vs, p + perm[i] * is, (size_t)es);
            }
        }
        free(scratch);
    }
    if (vals) *vals = v;
    *idxs = ix;
    return TN_OK;
}

static tn_status sort_op(tn_tensor *self, int64_t dim_arg, bool desc, bool stable, tn_value *r, bool values) {
    int dim;
    TN_TRY(tn_wrap_dim(dim_arg, self->ndim, &dim));
    tn_tensor *v = NULL, *ix;
    TN_TRY(sort_core(self, dim, desc, stable ? ORDER_STABLE : ORDER_STD_SORT, self->ndim ? self->sizes[dim] : 1, values ? &v : NULL, &ix));
    if (values) { r[0] = tn_value_tensor(v); r[1] = tn_value_tensor(ix); }
    else r[0] = tn_value_tensor(ix);
    return TN_OK;
}

static bool b_arg(const tn_value *v, bool d) { return v->tag == TN_V_BOOL ? v->u.b : d; }

/* aten::sort(Tensor self, int dim=-1, bool descending=False) -> (values, indices) */
tn_status tn_op_sort(const tn_value *a, tn_value *r) { return sort_op(a[0].u.t, a[1].u.i, b_arg(&a[2], false), false, r, true); }
/* aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) */
tn_status tn_op_sort_stable(const tn_value *a, tn_value *r) { return sort_op(a[0].u.t, a[2].u.i, b_arg(&a[3], false), b_arg(&a[1], false), r, true); }
/* aten::argsort(Tensor self, int dim=-1, bool descending=False) */
tn_status tn_op_argsort(const tn_value *a, tn_value *r) { return sort_op(a[0].u.t, a[1].u.i, b_arg(&a[2], false), false, r, false); }
/* aten::argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) */
tn_status tn_op_argsort_stable(const tn_value *a, tn_value *r) { return sort_op(a[0].u.t, a[2].u.i, b_arg(&a[3], false), b_arg(&a[1], false), r, false); }

/* aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) */
tn_status tn_op_topk(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t, *v, *ix;
    int dim;
    TN_TRY(tn_wrap_dim(a[2].u.i, self->ndim, &dim));
    int64_t k = a[1].u.i, n = self->ndim ? self->sizes[dim] : 1;
    if (k < 0 || k > n) return tn_error(TN_ERR_RUNTIME, "selected index k out of range");
    if (self->dtype == TN_DTYPE_BOOL) return tn_error(TN_ERR_RUNTIME, "topk does not support bool dtypes on CPU");
    TN_TRY(sort_core(self, dim, b_arg(&a[3], true), b_arg(&a[4], true) ? ORDER_TOPK_SORTED : ORDER_TOPK, k, &v, &ix));
    r[0] = tn_value_tensor(v);
    r[1] = tn_value_tensor(ix);
    return TN_OK;
}
