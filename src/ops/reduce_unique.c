/* reduce_unique.c — unique elements or slices: _unique2 (torch.unique without dim),
 * unique_dim, unique_consecutive. The tensor is viewed as rows (the slices along `dim`, or
 * single elements), sorted stably (NaN after every number, as upstream's sort) unless only
 * consecutive runs are merged, and grouped by element-wise ==, so each NaN stays its own
 * group and -0.0 joins 0.0 under the first one met. Inverse indices and counts are returned
 * when asked for, else empty Long tensors (upstream's placeholders). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/dispatch.h"
#include "ops/reduce.h"
#include "ops/shape.h"

typedef struct uq_rows {
    const char *base;
    int64_t n, len; /* rows and elements per row (contiguous) */
    tn_dtype dt;
    int es;
    bool fl;
} uq_rows;

static int uq_cmp_elem(const uq_rows *R, const char *a, const char *b) {
    if (R->fl) {
        double x = tn_rd_get(a, R->dt), y = tn_rd_get(b, R->dt);
        bool xn = isnan(x), yn = isnan(y);
        if (xn || yn) return xn - yn; /* NaN last; NaNs tie (the index decides) */
        return x < y ? -1 : x > y;
    }
    int64_t x = tn_rd_get_i(a, R->dt), y = tn_rd_get_i(b, R->dt);
    return x < y ? -1 : x > y;
}
static int uq_cmp(const void *pa, const void *pb, void *ctx) {
    const uq_rows *R = ctx;
    int64_t i = *(const int64_t *)pa, j = *(const int64_t *)pb;
    for (int64_t k = 0; k < R->len; k++) {
        int c = uq_cmp_elem(R, R->base + (i * R->len + k) * R->es, R->base + (j * R->len + k) * R->es);
        if (c) return c;
    }
    return i < j ? -1 : i > j;
}
/* single elements (rows of one): the same total order on (value, index) pairs, sorted by
 * libstdc++'s introsort with the comparison inlined (reduce_stdsort.inc); any sort gives
 * the one order a total order allows (before: qsort_r through a generic comparison, 8.7x
 * upstream's time for 1e5 int64) */
typedef struct { double v; int64_t i; } uq_fe;
typedef struct { int64_t v; int64_t i; } uq_ie;
#define SS_ELEM uq_fe
#define SS_LESS(a, b) (isnan((a).v) != isnan((b).v) ? isnan((b).v) : (!isnan((a).v) && (a).v != (b).v) ? (a).v < (b).v : (a).i < (b).i)
#define SS_NAME(x) uq_f_##x
#include "ops/reduce_stdsort.inc"
#define SS_ELEM uq_ie
#define SS_LESS(a, b) ((a).v != (b).v ? (a).v < (b).v : (a).i < (b).i)
#define SS_NAME(x) uq_i_##x
#include "ops/reduce_stdsort.inc"

/* order[] of the n single elements of R sorted as uq_cmp sorts them; false without memory */
static bool uq_sort_elems(const uq_rows *R, int64_t *order) {
    if (R->fl) {
        uq_fe *e = malloc(sizeof(uq_fe) * (size_t)(R->n + 1));
        if (!e) return false;
        for (int64_t i = 0; i < R->n; i++) e[i].v = tn_rd_get(R->base + i * R->es, R->dt), e[i].i = i;
        uq_f_sort(e, R->n);
        for (int64_t i = 0; i < R->n; i++) order[i] = e[i].i;
        free(e);
    } else {
        uq_ie *e = malloc(sizeof(uq_ie) * (size_t)(R->n + 1));
        if (!e) return false;
        for (int64_t i = 0; i < R->n; i++) e[i].v = tn_rd_get_i(R->base + i * R->es, R->dt), e[i].i = i;
        uq_i_sort(e, R->n);
        for (int64_t i = 0; i < R->n; i++) order[i] = e[i].i;
        free(e);
    }
    return true;
}

static bool uq_equal(const uq_rows *R, int64_t i, int64_t j) {
    for (int64_t k = 0; k < R->len; k++) {
        const char *a = R->base + (i * R->len + k) * R->es, *b = R->base + (j * R->len + k) * R->es;
        if (R->fl ? !(tn_rd_get(a, R->dt) == tn_rd_get(b, R->dt)) : tn_rd_get_i(a, R->dt) != tn_rd_get_i(b, R->dt)) return false;
    }
    return true;
}

static tn_status empty_long(int64_t n, tn_tensor *like, tn_tensor **out) {
    return tn_tensor_empty(1, &n, TN_DTYPE_INT64, tn_tensor_device(like), out);
}

/* torch.unique of integers (bool included) whose values span a range under about twice
 * their number: a count per value of the range, then the values present in order, their
 * counts and each element's group (the one answer any sort gives for integers). True when it
 * answered (rets set) or failed (*st set); false to take the sort. Before: the sort, 1.5x
 * upstream's time for 1e5 int64 in [0, 1000) at 2 threads. */
static bool unique_dense_range(tn_tensor *self, const uq_rows *R, bool want_inv, bool want_cnt, tn_value *rets,
                               tn_status *st) {
    const int64_t n = R->n;
    if (R->fl || n < 1024) return false;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
/* BODY sees element i_ as the int64 v */
#define UD_TYPED(T, BODY)                                                                    \
    {                                                                                        \
        const T *x_ = (const T *)(const void *)R->base;                                      \
        for (int64_t i_ = 0; i_ < n; i_++) { const int64_t v = (int64_t)x_[i_]; BODY; }          \
    }
#define UD_EACH(BODY)                                                                        \
    switch (R->dt) {                                                                         \
    case TN_DTYPE_INT64: UD_TYPED(int64_t, BODY) break;                                      \
    case TN_DTYPE_INT32: UD_TYPED(int32_t, BODY) break;                                      \
    case TN_DTYPE_INT16: UD_TYPED(int16_t, BODY) break;                                      \
    case TN_DTYPE_INT8: UD_TYPED(int8_t, BODY) break;                                        \
    case TN_DTYPE_UINT8: case TN_DTYPE_BOOL: UD_TYPED(uint8_t, BODY) break;                  \
    default: return false;                                                                   \
    }
    UD_EACH(lo = v < lo ? v : lo; hi = v > hi ? v : hi)
    const uint64_t span = (uint64_t)hi - (uint64_t)lo;
    if (span >= 2 * (uint64_t)n + 1024) return false;
    int64_t *cnt = calloc(span + 1, sizeof(int64_t)), *rank = malloc((span + 1) * sizeof(int64_t));
    if (!cnt || !rank) {
        free(cnt);
        free(rank);
        return false;
    }
    UD_EACH(cnt[v - lo]++)
    int64_t ng = 0;
    for (uint64_t k = 0; k <= span; k++) rank[k] = cnt[k] ? ng++ : -1;
    tn_tensor *vals = NULL, *inv = NULL, *cn = NULL;
    *st = tn_tensor_empty(1, &ng, self->dtype, tn_tensor_device(self), &vals);
    if (*st == TN_OK) {
        char *o = tn_tensor_data(vals);
        for (uint64_t k = 0; k <= span; k++)
            if (cnt[k]) tn_rd_set_i(o + rank[k] * R->es, R->dt, lo + (int64_t)k);
        *st = want_inv ? tn_tensor_empty(self->ndim, self->sizes, TN_DTYPE_INT64, tn_tensor_device(self), &inv)
                       : empty_long(0, self, &inv);
    }
    if (*st == TN_OK && want_inv) {
        int64_t *g = tn_tensor_data(inv);
        UD_EACH(g[i_] = rank[v - lo])
    }
    if (*st == TN_OK) *st = empty_long(want_cnt ? ng : 0, self, &cn);
    if (*st == TN_OK && want_cnt) {
        int64_t *c = tn_tensor_data(cn);
        for (uint64_t k = 0; k <= span; k++)
            if (cnt[k]) c[rank[k]] = cnt[k];
    }
#undef UD_EACH
#undef UD_TYPED
    free(cnt);
    free(rank);
    if (*st != TN_OK) {
        tn_tensor_release(vals);
        tn_tensor_release(inv);
        tn_tensor_release(cn);
        return true;
    }
    rets[0] = tn_value_tensor(vals);
    rets[1] = tn_value_tensor(inv);
    rets[2] = tn_value_tensor(cn);
    return true;
}

/* dim < 0: elements of the flattened tensor; else slices along dim */
static tn_status unique_impl(tn_tensor *self, int dim, bool sorted, bool consecutive, bool want_inv, bool want_cnt,
                             tn_value *rets) {
    if (tn_tensor_is_meta(self)) /* the result's size depends on the values */
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::unique on the meta device is not implemented by torchnative");
    if (tn_dtype_is_complex(self->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::unique of complex tensors is not implemented by torchnative");
    tn_status st = TN_OK;
    tn_tensor *moved = NULL, *c = NULL, *vals = NULL, *inv = NULL, *cnt = NULL;
    int64_t *order = NULL, *group = NULL, *counts = NULL, *first = NULL;
    int nd = self->ndim;
    if (dim >= 0) {
        int64_t perm[TN_MAX_DIMS];
        perm[0] = dim;
        for (int d = 0, k = 1; d < nd; d++)
            if (d != dim) perm[k++] = d;
        st = tn_dispatch_one(TN_OP_permute, (tn_value[]){tn_value_tensor(self), tn_value_intlist(perm, nd)}, &moved);
    } else {
        moved = self;
        tn_tensor_retain(moved);
    }
    if (st == TN_OK) st = tn_tensor_contiguous(moved, &c);
    uq_rows R = {0};
    int64_t total = tn_tensor_numel(self);
    if (st == TN_OK) {
        R.base = tn_tensor_data(c);
        R.dt = self->dtype;
        R.es = tn_dtype_itemsize(self->dtype);
        R.fl = tn_dtype_is_floating(self->dtype);
        R.n = dim >= 0 ? self->sizes[dim] : total;
        R.len = dim >= 0 ? (R.n ? total / R.n : 0) : 1;
        if (dim < 0 && !consecutive && unique_dense_range(self, &R, want_inv, want_cnt, rets, &st)) {
            tn_tensor_release(moved);
            tn_tensor_release(c);
            return st;
        }
        order = malloc(sizeof(int64_t) * (size_t)(R.n + 1));
        group = malloc(sizeof(int64_t) * (size_t)(R.n + 1));
        counts = malloc(sizeof(int64_t) * (size_t)(R.n + 1));
        first = malloc(sizeof(int64_t) * (size_t)(R.n + 1));
        if (!order || !group || !counts || !first) st = tn_error(TN_ERR_RUNTIME, "out of memory");
    }
    int64_t ng = 0;
    if (st == TN_OK && !tn_tensor_is_meta(self)) {
        for (int64_t i = 0; i < R.n; i++) order[i] = i;
        (void)sorted; /* upstream's CPU kernels sort either way */
        if (!consecutive && dim < 0 && R.n > 1) {
            /* torch.unique without dim: upstream sorts the flattened tensor with its default
             * (unstable) sort and groups the run, so NaNs, each its own group, come in that
             * sort's order: the same sort here (reduce_sort.c reproduces it) */
            int64_t n1 = R.n, st1 = 1;
            tn_tensor *flat = tn_tensor_new_view(c->storage, c->offset, 1, &n1, &st1, c->dtype), *sv = NULL;
            tn_value sr[2];
            st = flat ? tn_dispatch(TN_OP_sort, (tn_value[]){tn_value_tensor(flat), tn_value_int(0), tn_value_bool(false)}, sr)
                      : tn_error(TN_ERR_RUNTIME, "out of memory");
            tn_tensor_release(flat);
            if (st == TN_OK) {
                sv = sr[1].u.t;
                const int64_t *ix = tn_tensor_data(sv);
                for (int64_t i = 0; i < R.n; i++) order[i] = ix[i * sv->strides[0]];
                tn_tensor_release(sr[0].u.t);
                tn_tensor_release(sv);
            } else { /* (a dtype the sort refuses, or no memory for it): the total order */
                st = TN_OK;
                qsort_r(order, (size_t)R.n, sizeof(int64_t), uq_cmp, &R);
            }
        } else if (!consecutive && !(R.len == 1 && uq_sort_elems(&R, order))) {
            qsort_r(order, (size_t)R.n, sizeof(int64_t), uq_cmp, &R);
        }
        for (int64_t p = 0; p < R.n; p++) {
            if (p == 0 || !uq_equal(&R, order[p - 1], order[p])) {
                first[ng] = order[p];
                counts[ng++] = 0;
            }
            counts[ng - 1]++;
            group[order[p]] = ng - 1;
        }
    }
    if (st == TN_OK) {
        /* values: the first row of each group, back in self's layout */
        int64_t shape[TN_MAX_DIMS];
        if (dim >= 0) {
            shape[0] = ng;
            for (int d = 0, k = 1; d < nd; d++)
                if (d != dim) shape[k++] = self->sizes[d];
        } else shape[0] = ng;
        tn_tensor *rows;
        st = tn_tensor_empty(dim >= 0 ? nd : 1, shape, self->dtype, tn_tensor_device(self), &rows);
        if (st == TN_OK) {
            for (int64_t g = 0; g < ng; g++)
                memcpy((char *)tn_tensor_data(rows) + g * R.len * R.es, R.base + first[g] * R.len * R.es, (size_t)(R.len * R.es));
            if (dim >= 0) {
                /* inverse permutation: dim 0 goes back to `dim` */
                int64_t inv_perm[TN_MAX_DIMS];
                for (int d = 0, k = 1; d < nd; d++) inv_perm[d] = d == dim ? 0 : k++;
                tn_tensor *p2;
                st = tn_dispatch_one(TN_OP_permute, (tn_value[]){tn_value_tensor(rows), tn_value_intlist(inv_perm, nd)}, &p2);
                if (st == TN_OK) {
                    st = tn_tensor_contiguous(p2, &vals);
                    tn_tensor_release(p2);
                }
                tn_tensor_release(rows);
            } else vals = rows;
        }
    }
    if (st == TN_OK) {
        if (want_inv) {
            const int64_t *ishape = dim >= 0 ? &R.n : self->sizes;
            st = tn_tensor_empty(dim >= 0 ? 1 : nd, ishape, TN_DTYPE_INT64, tn_tensor_device(self), &inv);
            if (st == TN_OK && R.n > 0) memcpy(tn_tensor_data(inv), group, sizeof(int64_t) * (size_t)R.n);
        } else st = empty_long(0, self, &inv);
    }
    if (st == TN_OK) {
        if (want_cnt) {
            st = empty_long(ng, self, &cnt);
            if (st == TN_OK && ng > 0) memcpy(tn_tensor_data(cnt), counts, sizeof(int64_t) * (size_t)ng);
        } else st = empty_long(0, self, &cnt);
    }
    free(order);
    free(group);
    free(counts);
    free(first);
    tn_tensor_release(moved);
    tn_tensor_release(c);
    if (st != TN_OK) {
        tn_tensor_release(vals);
        tn_tensor_release(inv);
        tn_tensor_release(cnt);
        return st;
    }
    rets[0] = tn_value_tensor(vals);
    rets[1] = tn_value_tensor(inv);
    rets[2] = tn_value_tensor(cnt);
    return TN_OK;
}

/* aten::_unique2(self, sorted=True, return_inverse=False, return_counts=False): always
 * sorted, as upstream's CPU kernel */
tn_status tn_op__unique2(const tn_value *a, tn_value *r) { return unique_impl(a[0].u.t, -1, true, false, a[2].u.b, a[3].u.b, r); }

/* upstream's rule for an empty self along a dim: exactly one zero-size dim, the selected one */
static tn_status check_empty_dim(const tn_tensor *self, int dim) {
    if (tn_tensor_numel(self) != 0) return TN_OK;
    int zeros = 0;
    for (int d = 0; d < self->ndim; d++) zeros += self->sizes[d] == 0;
    if (zeros != 1)
        return tn_error(TN_ERR_RUNTIME, "Number of zero sized dimensions is more than one, so unique cannot be applied ");
    if (self->sizes[dim] != 0)
        return tn_error(TN_ERR_RUNTIME, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
    return TN_OK;
}

/* aten::unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False).
 * Along a dim upstream computes the inverse and the counts whatever the two flags say (its
 * flags only select them for the Python wrapper), and a 0-dim self has no dim to select. */
tn_status tn_op_unique_dim(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t;
    int dim;
    TN_TRY(tn_wrap_dim_strict(a[1].u.i, self->ndim, &dim));
    TN_TRY(check_empty_dim(self, dim));
    return unique_impl(self, dim, true, false, true, true, r);
}

/* aten::unique_consecutive(self, return_inverse=False, return_counts=False, dim=None); with
 * a dim, as unique_dim: inverse and counts always, a 0-dim self refused. Upstream takes the
 * dim-less path for dim == 0 written as 0 on a 1-d self, where the flags hold (an inverse
 * or counts not asked for is empty; the seed-34 fuzz run); dim=-1 there takes the dim path. */
tn_status tn_op_unique_consecutive(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t;
    if (a[3].tag == TN_V_NONE || (a[3].u.i == 0 && self->ndim == 1))
        return unique_impl(self, -1, false, true, a[1].u.b, a[2].u.b, r);
    int dim;
    TN_TRY(tn_wrap_dim_strict(a[3].u.i, self->ndim, &dim));
    TN_TRY(check_empty_dim(self, dim));
    return unique_impl(self, dim, false, true, true, true, r);
}
