/* reduce_select.c — order-statistic reductions along one dim: kthvalue, median / nanmedian
 * (whole tensor and per dim), mode, quantile / nanquantile. Each lane is gathered, ordered
 * the way upstream orders it (ATen Sorting.cpp: its quickselect for kthvalue, (value, index)
 * order for median, value-sorted runs for mode, sort + rank + lerp for quantile), so ties
 * and NaNs pick the same element and index as upstream. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "ops/dispatch.h"
#include "ops/reduce.h"
#include "ops/quantile.h"
#include "ops/shape.h"

/* one lane element: its value (as double for floats, int64 for integers) and position */
typedef struct sel_elem {
    double d;
    int64_t i;
    int64_t idx;
} sel_elem;

typedef struct sel_lanes {
    tn_tensor *in;  /* contiguous input (owned) */
    int64_t outer, n, inner;
    bool fl;
    int es;
} sel_lanes;

static tn_status lanes_open(tn_tensor *self, int dim, sel_lanes *L) {
    TN_TRY(tn_tensor_contiguous(self, &L->in));
    L->n = self->ndim ? self->sizes[dim] : 1;
    L->outer = L->inner = 1;
    for (int d = 0; d < self->ndim; d++) {
        if (d < dim) L->outer *= self->sizes[d];
        else if (d > dim) L->inner *= self->sizes[d];
    }
    L->fl = tn_dtype_is_floating(self->dtype);
    L->es = tn_dtype_itemsize(self->dtype);
    return TN_OK;
}

/* lane number k (outer-major) into e[0..n) */
static void lane_get(const sel_lanes *L, int64_t k, sel_elem *e) {
    int64_t o = k / L->inner, in = k % L->inner;
    const char *base = (const char *)tn_tensor_data(L->in) + ((o * L->n) * L->inner + in) * L->es;
    tn_dtype dt = L->in->dtype;
    if (dt == TN_DTYPE_FLOAT32) { /* the common case read directly (exact in double) */
        const float *f = (const float *)base;
        for (int64_t j = 0; j < L->n; j++) e[j].idx = j, e[j].d = f[j * L->inner], e[j].i = 0;
        return;
    }
    for (int64_t j = 0; j < L->n; j++) {
        const char *p = base + j * L->inner * L->es;
        e[j].idx = j;
        if (L->fl) e[j].d = tn_rd_get(p, dt), e[j].i = 0;
        else e[j].i = tn_rd_get_i(p, dt), e[j].d = (double)e[j].i;
    }
}

static bool isnan_e(const sel_elem *a, bool fl) { return fl && isnan(a->d); }
static bool lt_e(const sel_elem *a, const sel_elem *b, bool fl) { return fl ? a->d < b->d : a->i < b->i; }
static bool eq_e(const sel_elem *a, const sel_elem *b, bool fl) { return fl ? a->d == b->d : a->i == b->i; }

/* Stores element e of dtype dt at p (values exact: ints from i, floats from d). */
static void put_val(char *p, tn_dtype dt, const sel_elem *e, bool fl) {
    if (fl) tn_rd_set(p, dt, e->d);
    else tn_rd_set_i(p, dt, e->i);
}

/* (values, indices) outputs of a dim reduction, shaped like upstream's (keepdim or not). */
static tn_status alloc_vi(tn_tensor *self, int dim, bool keepdim, bool with_idx, tn_tensor **v, tn_tensor **ix) {
    int64_t shape[TN_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (d == dim) {
            if (keepdim) shape[nd++] = 1;
        } else shape[nd++] = self->sizes[d];
    }
    *ix = NULL;
    TN_TRY(tn_tensor_empty(nd, shape, self->dtype, tn_tensor_device(self), v));
    if (!with_idx) return TN_OK;
    tn_status st = tn_tensor_empty(nd, shape, TN_DTYPE_INT64, tn_tensor_device(self), ix);
    if (st != TN_OK) tn_tensor_release(*v);
    return st;
}

static tn_status nonempty_dim(const char *name, tn_tensor *self, int dim) {
    if (self->ndim > 0 && self->sizes[dim] == 0)
        return tn_error(TN_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", name, dim);
    return TN_OK;
}

static tn_status refuse(const char *kname, tn_dtype dt) {
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kname, tn_dtype_infos[dt].c10_name);
}
static bool all_types(tn_dtype dt) { /* upstream's AT_DISPATCH_ALL_TYPES (+ Half/BFloat16 where added) */
    return dt != TN_DTYPE_BOOL && !tn_dtype_is_complex(dt) && (tn_dtype_is_floating(dt) || tn_dtype_is_integral(dt, false));
}

/* Runs pick(lane) -> chosen element for every lane into (values, indices): lanes on the
 * pool (pick and its ctx only read), each worker with its own lane buffer. */
typedef bool (*sel_pick)(sel_elem *e, int64_t n, bool fl, void *ctx, sel_elem *out);
typedef struct sel_job {
    const sel_lanes *L;
    tn_tensor *self, *v, *ix;
    sel_pick pick;
    void *ctx;
    int failed; /* a worker without memory for its buffer */
} sel_job;

static void sel_worker(void *p, int64_t b, int64_t e_) {
    sel_job *j = p;
    const sel_lanes *L = j->L;
    sel_elem *e = malloc(sizeof(sel_elem) * (size_t)L->n);
    if (!e) { __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED); return; }
    for (int64_t k = b; k < e_; k++) {
        lane_get(L, k, e);
        sel_elem r;
        j->pick(e, L->n, L->fl, j->ctx, &r);
        /* outputs are contiguous in (outer, inner) order, which is lane order */
        put_val((char *)tn_tensor_data(j->v) + k * L->es, j->self->dtype, &r, L->fl);
        if (j->ix) ((int64_t *)tn_tensor_data(j->ix))[k] = r.idx;
    }
    free(e);
}

static tn_status run_dim(tn_tensor *self, int dim, bool keepdim, bool with_idx, sel_pick pick, void *ctx, tn_value *rets) {
    tn_tensor *v, *ix;
    TN_TRY(alloc_vi(self, dim, keepdim, with_idx, &v, &ix));
    sel_lanes L = {0};
    tn_status st = lanes_open(self, dim, &L);
    if (st == TN_OK && !tn_tensor_is_meta(self) && tn_tensor_numel(self) > 0) {
        sel_job j = {&L, self, v, ix, pick, ctx, 0};
        /* a part: at least 8,192 elements of lanes (selection costs several passes over each) */
        tn_parallel_for(L.outer * L.inner, 8192 / L.n + 1, sel_worker, &j);
        if (j.failed) st = tn_error(TN_ERR_RUNTIME, "out of memory");
    }
    tn_tensor_release(L.in);
    if (st != TN_OK) {
        tn_tensor_release(v);
        tn_tensor_release(ix);
        return st;
    }
    rets[0] = tn_value_tensor(v);
    if (with_idx) rets[1] = tn_value_tensor(ix);
    return TN_OK;
}

/* ---- kthvalue: upstream's quickselect (median-of-three pivot, Sedgewick partition) ---- */

static bool gt_or_nan(const sel_elem *x, const sel_elem *y, bool fl) {
    return (isnan_e(x, fl) && !isnan_e(y, fl)) || lt_e(y, x, fl);
}
static void swap_e(sel_elem *e, int64_t a, int64_t b) { sel_elem t = e[a]; e[a] = e[b]; e[b] = t; }

static void quickselect(sel_elem *arr, int64_t n, int64_t k, bool fl) {
    int64_t L = 0, R = n - 1;
    for (;;) {
        if (R <= L) return;
        if (R == L + 1) {
            if (gt_or_nan(&arr[L], &arr[R], fl)) swap_e(arr, L, R);
            return;
        }
        int64_t P = (L + R) >> 1;
        swap_e(arr, P, L + 1);
        if (gt_or_nan(&arr[L + 1], &arr[R], fl)) swap_e(arr, L + 1, R);
        if (gt_or_nan(&arr[L], &arr[R], fl)) swap_e(arr, L, R);
        if (gt_or_nan(&arr[L + 1], &arr[L], fl)) swap_e(arr, L + 1, L);
        int64_t i = L + 1, j = R;
        sel_elem piv = arr[L];
        for (;;) {
            do i++; while (gt_or_nan(&piv, &arr[i], fl));
            do j--; while (gt_or_nan(&arr[j], &piv, fl));
            if (j < i) break;
            swap_e(arr, i, j);
        }
        swap_e(arr, L, j);
        if (j <= k) L = i;
        if (j >= k) R = j - 1;
    }
}

static bool pick_kth(sel_elem *e, int64_t n, bool fl, void *ctx, sel_elem *out) {
    int64_t k = *(int64_t *)ctx;
    quickselect(e, n, k - 1, fl);
    *out = e[k - 1];
    return true;
}

/* aten::kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) */
tn_status tn_op_kthvalue(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t;
    int dim;
    TN_TRY(tn_wrap_dim(a[2].u.i, self->ndim, &dim));
    TN_TRY(nonempty_dim("kthvalue", self, dim));
    int64_t k = a[1].u.i, n = self->ndim ? self->sizes[dim] : 1;
    if (k < 1 || k > n) return tn_error(TN_ERR_RUNTIME, "kthvalue(): selected number k out of range for dimension %d", dim);
    if (!all_types(self->dtype)) return refuse("kthvalue_cpu", self->dtype);
    return run_dim(self, dim, a[3].u.b, true, pick_kth, &k, r);
}

/* ---- median / nanmedian --------------------------------------------------------------- */

/* (value, index) order, NaN last when ignoring NaN; the first NaN when not */
static bool med_before(const sel_elem *x, const sel_elem *y, bool fl) {
    bool xn = isnan_e(x, fl), yn = isnan_e(y, fl);
    if (xn != yn) return yn;
    if (!xn && !eq_e(x, y, fl)) return lt_e(x, y, fl);
    return x->idx < y->idx;
}
static int med_cmp(const void *pa, const void *pb, void *fl) {
    const sel_elem *a = pa, *b = pb;
    bool f = *(bool *)fl;
    return med_before(a, b, f) ? -1 : med_before(b, a, f) ? 1 : 0;
}
#define BEFORE_D(x, y) ((x)->d < (y)->d || ((x)->d == (y)->d && (x)->idx < (y)->idx))
#define BEFORE_I(x, y) ((x)->i < (y)->i || ((x)->i == (y)->i && (x)->idx < (y)->idx))
#define BEFORE_ANY(x, y) med_before((x), (y), fl)
/* e[m] becomes the element at position m of the order BEFORE over e[0..n): median of three,
 * Hoare partitions narrowing to m; a pathological run of pivots sorts what is left */
#define SELECT_NTH(e, n, m, BEFORE)                                                           \
    do {                                                                                      \
        int64_t lo_ = 0, hi_ = (n) - 1, rounds_ = 0;                                          \
        while (lo_ < hi_) {                                                                   \
            if (++rounds_ > 64) {                                                             \
                qsort_r((e) + lo_, (size_t)(hi_ - lo_ + 1), sizeof(sel_elem), med_cmp, &fl);  \
                break;                                                                        \
            }                                                                                 \
            int64_t mid_ = lo_ + (hi_ - lo_) / 2;                                             \
            if (BEFORE(&(e)[mid_], &(e)[lo_])) swap_e((e), mid_, lo_);                        \
            if (BEFORE(&(e)[hi_], &(e)[lo_])) swap_e((e), hi_, lo_);                          \
            if (BEFORE(&(e)[hi_], &(e)[mid_])) swap_e((e), hi_, mid_);                        \
            sel_elem piv_ = (e)[mid_];                                                        \
            int64_t i_ = lo_, j_ = hi_;                                                       \
            while (i_ <= j_) {                                                                \
                while (BEFORE(&(e)[i_], &piv_)) i_++;                                         \
                while (BEFORE(&piv_, &(e)[j_])) j_--;                                         \
                if (i_ <= j_) { swap_e((e), i_, j_); i_++; j_--; }                            \
            }                                                                                 \
            if ((m) <= j_) hi_ = j_;                                                          \
            else if ((m) >= i_) lo_ = i_;                                                     \
            else break; /* j < m < i: e[m] is the pivot itself */                             \
        }                                                                                     \
    } while (0)
static bool pick_median(sel_elem *e, int64_t n, bool fl, void *ctx, sel_elem *out) {
    bool ignore_nan = *(bool *)ctx;
    int64_t nnan = 0;
    for (int64_t j = 0; j < n; j++)
        if (isnan_e(&e[j], fl)) {
            if (!ignore_nan) { *out = e[j]; return true; }
            nnan++;
        }
    int64_t m = (n - nnan - 1) / 2;
    if (m < 0) m = 0;
    /* the element at position m of the (value, index) order: a strict total order, so any
     * selection finds the one a full sort puts there (before: qsort_r of the lane, 10-26x
     * upstream's time); without NaNs the order is a plain (value, index) compare */
    if (fl && nnan == 0) SELECT_NTH(e, n, m, BEFORE_D);
    else if (!fl) SELECT_NTH(e, n, m, BEFORE_I);
    else SELECT_NTH(e, n, m, BEFORE_ANY);
    *out = e[m];
    return true;
}

static tn_status median_dim(const tn_value *a, tn_value *r, bool ignore_nan) {
    tn_tensor *self = a[0].u.t;
    int dim;
    TN_TRY(tn_wrap_dim(a[1].u.i, self->ndim, &dim));
    TN_TRY(nonempty_dim("median", self, dim));
    if (!all_types(self->dtype)) return refuse("median_out", self->dtype);
    return run_dim(self, dim, a[2].u.b, true, pick_median, &ignore_nan, r);
}
/* aten::median.dim / nanmedian.dim(Tensor self, int dim, bool keepdim=False) */
tn_status tn_op_median_dim(const tn_value *a, tn_value *r) { return median_dim(a, r, false); }
tn_status tn_op_nanmedian_dim(const tn_value *a, tn_value *r) { return median_dim(a, r, true); }

/* aten::median / nanmedian(Tensor self): the lower median of all elements (NaN for an
 * empty tensor; median: NaN if any element is) */
static tn_status median_all(const tn_value *a, tn_value *r, bool ignore_nan) {
    tn_tensor *self = a[0].u.t, *flat = NULL;
    if (!all_types(self->dtype)) return refuse("median_cpu", self->dtype);
    int64_t n = tn_tensor_numel(self);
    if (n == 0) {
        tn_tensor *o;
        TN_TRY(tn_tensor_empty(0, NULL, self->dtype, tn_tensor_device(self), &o));
        if (!tn_tensor_is_meta(o)) tn_rd_set(tn_tensor_data(o), self->dtype, NAN);
        r[0] = tn_value_tensor(o);
        return TN_OK;
    }
    TN_TRY(tn_tensor_contiguous(self, &flat));
    tn_tensor *view = tn_tensor_new_view(flat->storage, flat->offset, 1, &n, (int64_t[]){1}, flat->dtype);
    tn_tensor_release(flat);
    if (!view) return tn_error(TN_ERR_RUNTIME, "out of memory");
    tn_value rr[2];
    tn_status st = run_dim(view, 0, false, false, pick_median, &ignore_nan, rr);
    tn_tensor_release(view);
    if (st != TN_OK) return st;
    r[0] = rr[0];
    return TN_OK;
}
tn_status tn_op_median(const tn_value *a, tn_value *r) { return median_all(a, r, false); }
tn_status tn_op_nanmedian(const tn_value *a, tn_value *r) { return median_all(a, r, true); }

/* ---- mode: the most frequent value (smallest among equally frequent ones) and the index
 * of the last of its run once the lane is sorted by value only. Upstream sorts with
 * std::sort, which is not stable: the run's order is that of libstdc++'s introsort,
 * reproduced (reduce_stdsort.inc) so the index agrees. ------------------------------------ */

/* upstream's comparator is a plain `<` on the value (NaN compares false both ways) */
#define SS_ELEM sel_elem
#define SS_LESS(a, b) ((a).d < (b).d)
#define SS_NAME(x) mode_f_##x
#include "ops/reduce_stdsort.inc"

#define SS_ELEM sel_elem
#define SS_LESS(a, b) ((a).i < (b).i)
#define SS_NAME(x) mode_i_##x
#include "ops/reduce_stdsort.inc"

static bool pick_mode(sel_elem *e, int64_t n, bool fl, void *ctx, sel_elem *out) {
    (void)ctx;
    if (fl) mode_f_sort(e, n);
    else mode_i_sort(e, n);
    int64_t freq = 0, best = 0;
    *out = e[0];
    for (int64_t i = 0; i < n; i++) {
        freq++;
        if (i == n - 1 || !eq_e(&e[i], &e[i + 1], fl)) {
            if (freq > best) { *out = e[i]; best = freq; }
            freq = 0;
        }
    }
    return true;
}

/* aten::mode(Tensor self, int dim=-1, bool keepdim=False) */
tn_status tn_op_mode(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t;
    int dim;
    TN_TRY(tn_wrap_dim(a[1].u.i, self->ndim, &dim));
    TN_TRY(nonempty_dim("mode", self, dim)); /* only the reduced dim: other empty dims give empty results */
    if (tn_dtype_is_complex(self->dtype)) return refuse("mode_cpu", self->dtype);
    return run_dim(self, dim, a[2].u.b, true, pick_mode, NULL, r);
}

/* ---- quantile / nanquantile ----------------------------------------------------------- */


/* v rounded to the compute dtype (float32 steps for float inputs, as upstream's tensors) */
static double rq(double v, tn_dtype dt) { return dt == TN_DTYPE_FLOAT32 ? (double)(float)v : v; }

static int quantile_cmp(const void *pa, const void *pb, void *unused) {
    (void)unused;
    double a = *(const double *)pa, b = *(const double *)pb;
    bool an = isnan(a), bn = isnan(b);
    if (an || bn) return an - bn;
    return a < b ? -1 : a > b;
}

/* quantile of one sorted lane s[0..n) at q */
static double quantile_lane(const double *s, int64_t n, double q, int mode, bool ignore_nan, tn_dtype dt) {
    int64_t nn = 0;
    bool anynan = false;
    for (int64_t j = 0; j < n; j++) {
        if (isnan(s[j])) anynan = true;
        else nn++;
    }
    double rank;
    if (ignore_nan) {
        rank = rq(q * (double)(nn - 1), dt);
        if (rank < 0) rank = 0;
    } else {
        rank = anynan ? (double)(n - 1) : rq(q * (double)(n - 1), dt);
    }
    if (mode == TN_Q_LOWER) rank = floor(rank);
    else if (mode == TN_Q_HIGHER) rank = ceil(rank);
    else if (mode == TN_Q_NEAREST) rank = nearbyint(rank);
    int64_t below = (int64_t)rank;
    double vb = s[below];
    if (mode != TN_Q_LINEAR && mode != TN_Q_MIDPOINT) return vb;
    double w = mode == TN_Q_MIDPOINT ? 0.5 : rq(rank - (double)below, dt);
    double va = s[(int64_t)ceil(rank)];
    /* upstream's lerp: from the nearer end */
    return w < 0.5 ? rq(vb + rq(w * rq(va - vb, dt), dt), dt) : rq(va - rq(rq(va - vb, dt) * rq(1 - w, dt), dt), dt);
}

/* ops/quantile.h */
tn_status tn_quantile_check(const tn_value *a, bool q_scalar, int *mode, int *dim) {
    tn_tensor *self = a[0].u.t;
    const char *interp = a[4].u.s.data;
    if (!strcmp(interp, "linear")) *mode = TN_Q_LINEAR;
    else if (!strcmp(interp, "lower")) *mode = TN_Q_LOWER;
    else if (!strcmp(interp, "higher")) *mode = TN_Q_HIGHER;
    else if (!strcmp(interp, "midpoint")) *mode = TN_Q_MIDPOINT;
    else if (!strcmp(interp, "nearest")) *mode = TN_Q_NEAREST;
    else return tn_error(TN_ERR_RUNTIME, "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got %s", interp);
    if (q_scalar && !(a[1].u.d >= 0 && a[1].u.d <= 1))
        return tn_error(TN_ERR_RUNTIME, "quantile() q must be in the range [0, 1] but got %g", a[1].u.d);
    if (tn_tensor_numel(self) == 0) return tn_error(TN_ERR_RUNTIME, "quantile() input tensor must be non-empty");
    tn_tensor *qt = q_scalar ? NULL : a[1].u.t;
    if (qt && qt->ndim > 1) return tn_error(TN_ERR_RUNTIME, "quantile() q must be a scalar or 1D tensor");
    tn_dtype dt = self->dtype;
    if (dt != TN_DTYPE_FLOAT32 && dt != TN_DTYPE_FLOAT64)
        return tn_error(TN_ERR_RUNTIME, "quantile() input tensor must be either float or double dtype");
    if (qt && qt->dtype != dt) return tn_error(TN_ERR_RUNTIME, "quantile() q tensor must be same dtype as the input tensor");
    if (qt && !tn_tensor_is_meta(qt)) {
        tn_tensor *qc;
        TN_TRY(tn_tensor_contiguous(qt, &qc));
        bool ok = true;
        for (int64_t j = 0, nq = tn_tensor_numel(qt); ok && j < nq; j++) {
            double v = tn_rd_get((const char *)tn_tensor_data(qc) + j * tn_dtype_itemsize(dt), dt);
            ok = v >= 0 && v <= 1;
        }
        tn_tensor_release(qc);
        if (!ok) return tn_error(TN_ERR_RUNTIME, "quantile() q values must be in the range [0, 1]");
    }
    *dim = 0;
    if (a[2].tag != TN_V_NONE) return tn_wrap_dim(a[2].u.i, self->ndim, dim);
    return TN_OK;
}

static tn_status quantile_impl(const tn_value *a, tn_value *r, bool q_scalar, bool ignore_nan) {
    tn_tensor *self = a[0].u.t;
    int mode, dim;
    TN_TRY(tn_quantile_check(a, q_scalar, &mode, &dim));
    tn_tensor *qt = q_scalar ? NULL : a[1].u.t;
    tn_dtype dt = self->dtype;
    /* the q values, in self's dtype */
    int64_t nq = qt ? tn_tensor_numel(qt) : 1;
    double *qs = malloc(sizeof(double) * (size_t)(nq ? nq : 1));
    if (!qs) return tn_error(TN_ERR_RUNTIME, "out of memory");
    bool meta = tn_tensor_is_meta(self) || (qt && tn_tensor_is_meta(qt));
    if (qt && meta) {
        for (int64_t j = 0; j < nq; j++) qs[j] = 0; /* no values on the meta device */
    } else if (qt) {
        tn_tensor *qc;
        tn_status st = tn_tensor_contiguous(qt, &qc);
        if (st != TN_OK) { free(qs); return st; }
        for (int64_t j = 0; j < nq; j++) qs[j] = tn_rd_get((const char *)tn_tensor_data(qc) + j * tn_dtype_itemsize(dt), dt);
        tn_tensor_release(qc);
    } else {
        qs[0] = rq(a[1].u.d, dt);
    }
    bool has_dim = a[2].tag != TN_V_NONE, keepdim = a[3].u.b;
    /* output shape: [nq] (q 1-d) + the reduced shape */
    int64_t shape[TN_MAX_DIMS + 1];
    int nd = 0;
    if (qt && qt->ndim == 1) shape[nd++] = nq;
    if (has_dim && self->ndim > 0) {
        for (int d = 0; d < self->ndim; d++)
            if (d != dim) shape[nd++] = self->sizes[d];
            else if (keepdim) shape[nd++] = 1;
    } else if (keepdim) {
        for (int d = 0; d < self->ndim; d++) shape[nd++] = 1;
    }
    /* with a 1-d q, upstream's result is the (reduced..., q) buffer seen with q first (its
     * strides say so): allocate that buffer and return the permuted view */
    bool qlast = qt && qt->ndim == 1;
    int64_t bshape[TN_MAX_DIMS + 1];
    for (int d = 0; d < nd; d++) bshape[d] = qlast ? shape[(d + 1) % nd] : shape[d];
    tn_tensor *out;
    tn_status st = tn_tensor_empty(nd, bshape, dt, tn_tensor_device(self), &out);
    if (st != TN_OK) { free(qs); return st; }
    sel_lanes L = {0};
    tn_tensor *src = NULL; /* owned: self retained, or a flat view of its copy */
    int64_t n = tn_tensor_numel(self);
    if (!has_dim || self->ndim == 0) {
        tn_tensor *flat;
        st = tn_tensor_contiguous(self, &flat);
        if (st == TN_OK) {
            src = tn_tensor_new_view(flat->storage, flat->offset, 1, &n, (int64_t[]){1}, dt);
            tn_tensor_release(flat);
            if (!src) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        }
        dim = 0;
    } else {
        src = self;
        tn_tensor_retain(src);
    }
    if (st == TN_OK) st = lanes_open(src, dim, &L);
    if (st == TN_OK && !meta) {
        int64_t lanes = L.outer * L.inner;
        sel_elem *e = malloc(sizeof(sel_elem) * (size_t)L.n);
        double *s = malloc(sizeof(double) * (size_t)L.n);
        if (!e || !s) st = tn_error(TN_ERR_RUNTIME, "out of memory");
        for (int64_t k = 0; st == TN_OK && k < lanes; k++) {
            lane_get(&L, k, e);
            for (int64_t j = 0; j < L.n; j++) s[j] = e[j].d;
            qsort_r(s, (size_t)L.n, sizeof(double), quantile_cmp, NULL);
            for (int64_t j = 0; j < nq; j++)
                tn_rd_set((char *)tn_tensor_data(out) + (qlast ? k * nq + j : j * lanes + k) * L.es, dt,
                          quantile_lane(s, L.n, qs[j], mode, ignore_nan, dt));
        }
        free(e);
        free(s);
    }
    tn_tensor_release(L.in);
    tn_tensor_release(src);
    free(qs);
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    if (qlast) {
        int64_t perm[TN_MAX_DIMS + 1];
        perm[0] = nd - 1;
        for (int d = 1; d < nd; d++) perm[d] = d - 1;
        st = tn_dispatch(TN_OP_permute, (tn_value[]){tn_value_tensor(out), tn_value_intlist(perm, nd)}, r);
        tn_tensor_release(out);
        return st;
    }
    r[0] = tn_value_tensor(out);
    return TN_OK;
}
/* aten::quantile / quantile.scalar / nanquantile / nanquantile.scalar(self, q, dim=None,
 * keepdim=False, *, interpolation='linear') */
tn_status tn_op_quantile(const tn_value *a, tn_value *r) { return quantile_impl(a, r, false, false); }
tn_status tn_op_quantile_scalar(const tn_value *a, tn_value *r) { return quantile_impl(a, r, true, false); }
tn_status tn_op_nanquantile(const tn_value *a, tn_value *r) { return quantile_impl(a, r, false, true); }
tn_status tn_op_nanquantile_scalar(const tn_value *a, tn_value *r) { return quantile_impl(a, r, true, true); }
