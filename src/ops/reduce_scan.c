/* reduce_scan.c — scans and normalisations along one dim: cumsum, cumprod, softmax,
 * log_softmax (and the _softmax / _log_softmax primitives), cummax / cummin, logcumsumexp. Upstream scans accumulate in
 * double for floats (acc_type on CPU) and store rounded; softmax follows the vectorised
 * max / exp-sum / scale pattern of ATen cpu/SoftMaxKernel.cpp. */
#include "ops/reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/cast.h"
#include "kernels/complex_math.h"
#include "kernels/reduce.h"
#include "ops/graph.h"
#include "ops/iter.h"

/* Byte offset of lane k (row-major over every dim but `dim`) in t. */
static int64_t lane_off(const tn_tensor *t, int dim, int64_t k) {
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (d == dim) continue;
        off += (k % t->sizes[d]) * t->strides[d];
        k /= t->sizes[d];
    }
    return off * tn_dtype_itemsize(t->dtype);
}

/* ---- cumsum / cumprod --------------------------------------------------------------- */

/* complex64 / complex128, which the scans accumulate in complex<double> */
static bool scan_complex(tn_dtype d) { return d == TN_DTYPE_COMPLEX64 || d == TN_DTYPE_COMPLEX128; }

/* One complex lane of cumsum / cumprod: upstream's acc_type complex<double>, its naive
 * product (c10::complex operator*=), each prefix stored rounded to the element type. */
static void cum_complex_lane(const char *p, int64_t is, char *q, int64_t os, int64_t n, bool prod, bool c64) {
    double ar = prod ? 1.0 : 0.0, ai = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double c, d;
        if (c64) { float v[2]; memcpy(v, p + i * is, 8); c = v[0]; d = v[1]; }
        else { double v[2]; memcpy(v, p + i * is, 16); c = v[0]; d = v[1]; }
        if (prod) {
            double re = ar * c - ai * d, im = ar * d + ai * c;
            ar = re;
            ai = im;
        } else {
            ar += c;
            ai += d;
        }
        if (c64) { float v[2] = {(float)ar, (float)ai}; memcpy(q + i * os, v, 8); }
        else { double v[2] = {ar, ai}; memcpy(q + i * os, v, 16); }
    }
}

/* cumsum / cumprod of a contiguous float32 / float64 tensor, accumulated in double (upstream's
 * acc_type) and each prefix rounded to the element type, on the pool: task t is one lane
 * (the innermost dim) or one block of up to 256 columns of an outer block (another dim),
 * whose prefixes run down the rows side by side. Before: every element through double
 * loads and stores on one thread, 2-3.6x upstream's time. */
typedef struct cum_job {
    const char *in;
    char *out;
    int64_t n, inner; /* the scanned dim's size; the elements after it (1: innermost) */
    int64_t rows;     /* lanes, when innermost */
    bool prod, f64;
} cum_job;

/* lanes [l0, l1) of the innermost dim (at most 8): their prefixes side by side, so the
 * dependent adds of one lane overlap another's (one lane at a time waits on each add) */
#define CUM_ROWS(NAME, T, OP, ID)                                                              \
    static void NAME(const cum_job *c, int64_t l0, int64_t w) {                                \
        double acc[8];                                                                         \
        const T *x = (const T *)c->in + l0 * c->n;                                             \
        T *y = (T *)c->out + l0 * c->n;                                                        \
        for (int64_t k = 0; k < w; k++) acc[k] = ID;                                           \
        if (w == 8) /* a constant trip count: the eight chains unrolled */                    \
            for (int64_t i = 0; i < c->n; i++)                                                 \
                for (int k = 0; k < 8; k++) y[k * c->n + i] = (T)(acc[k] OP (double)x[k * c->n + i]); \
        else if (w == 1) { /* one lane (a 1-d scan): its sum in a register, not acc[] in memory \
                            * (a store and reload per element: 3.7x upstream's time for 1e6) */ \
            double a1 = ID;                                                                    \
            for (int64_t i = 0; i < c->n; i++) y[i] = (T)(a1 OP (double)x[i]);                 \
        } else                                                                                 \
            for (int64_t i = 0; i < c->n; i++)                                                 \
                for (int64_t k = 0; k < w; k++) y[k * c->n + i] = (T)(acc[k] OP (double)x[k * c->n + i]); \
    }
CUM_ROWS(cum_rows_f32_sum, float, +=, 0.0)
CUM_ROWS(cum_rows_f32_prod, float, *=, 1.0)
CUM_ROWS(cum_rows_f64_sum, double, +=, 0.0)
CUM_ROWS(cum_rows_f64_prod, double, *=, 1.0)
#undef CUM_ROWS
static void cum_rows(const cum_job *c, int64_t l0, int64_t l1) {
    if (l1 - l0 == 8 && !c->f64 && !c->prod &&
        tn_cumsum8_f32((float *)c->out + l0 * c->n, (const float *)c->in + l0 * c->n, c->n, c->n))
        return;
    (c->f64 ? (c->prod ? cum_rows_f64_prod : cum_rows_f64_sum) : (c->prod ? cum_rows_f32_prod : cum_rows_f32_sum))(c, l0, l1 - l0);
}

static void cum_worker(void *ctx, int64_t b, int64_t e) {
    const cum_job *c = ctx;
    if (c->inner == 1) { /* tasks are groups of 8 lanes */
        const int64_t lanes = c->rows;
        for (int64_t t = b; t < e; t++) cum_rows(c, t * 8, t * 8 + 8 < lanes ? t * 8 + 8 : lanes);
        return;
    }
    const int64_t nb = (c->inner + 255) / 256;
    for (int64_t t = b; t < e; t++) {
        int64_t o = t / nb, j0 = t % nb * 256, w = c->inner - j0 < 256 ? c->inner - j0 : 256;
        int64_t base = o * c->n * c->inner + j0;
        double acc[256];
        for (int64_t j = 0; j < w; j++) acc[j] = c->prod ? 1.0 : 0.0;
        for (int64_t i = 0; i < c->n; i++) {
            int64_t at = base + i * c->inner;
            if (c->f64) {
                const double *x = (const double *)c->in + at;
                double *y = (double *)c->out + at;
                if (c->prod) for (int64_t j = 0; j < w; j++) y[j] = acc[j] *= x[j];
                else for (int64_t j = 0; j < w; j++) y[j] = acc[j] += x[j];
            } else {
                const float *x = (const float *)c->in + at;
                float *y = (float *)c->out + at;
                if (c->prod) for (int64_t j = 0; j < w; j++) y[j] = (float)(acc[j] *= (double)x[j]);
                else for (int64_t j = 0; j < w; j++) y[j] = (float)(acc[j] += (double)x[j]);
            }
        }
    }
}

static tn_status cum_op(const tn_value *a, tn_value *r, bool prod) {
    tn_tensor *self = a[0].u.t;
    if (!scan_complex(self->dtype)) TN_TRY(tn_reduce_check_dtype(prod ? "cumprod" : "cumsum", self->dtype));
    int dim;
    TN_TRY(tn_wrap_dim(a[1].u.i, self->ndim, &dim));
    tn_dtype odt = a[2].tag == TN_V_DTYPE ? a[2].u.dtype
                 : (tn_dtype_is_integral(self->dtype, true) ? TN_DTYPE_INT64 : self->dtype);
    if (!scan_complex(odt)) TN_TRY(tn_reduce_check_dtype(prod ? "cumprod" : "cumsum", odt));
    /* upstream's scan kernels dispatch over neither Bool nor the wide unsigned types; an empty
     * input never reaches the kernel */
    bool no_kernel = odt == TN_DTYPE_BOOL || odt == TN_DTYPE_UINT16 || odt == TN_DTYPE_UINT32 || odt == TN_DTYPE_UINT64;
    if (no_kernel && tn_tensor_numel(self))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s_out_cpu\" not implemented for '%s'", prod ? "cumprod" : "cumsum",
                        tn_dtype_infos[odt].c10_name);
    tn_tensor *in, *out;
    TN_TRY(tn_reduce_to_dtype(self, odt, &in));
    tn_status st = tn_tensor_empty(self->ndim, self->sizes, odt, tn_tensor_device(self), &out);
    if (st != TN_OK) { tn_tensor_release(in); return st; }
    int64_t numel = tn_tensor_numel(in);
    if (!tn_tensor_is_meta(in) && numel > 0) {
        int64_t n = in->ndim ? in->sizes[dim] : 1;
        int64_t lanes = numel / n;
        int es = tn_dtype_itemsize(odt);
        int64_t is = (in->ndim ? in->strides[dim] : 0) * es, os = (out->ndim ? out->strides[dim] : 0) * es;
        bool fl = tn_dtype_is_floating(odt);
        if ((odt == TN_DTYPE_FLOAT32 || odt == TN_DTYPE_FLOAT64) && tn_tensor_is_contiguous(in) && tn_tensor_is_contiguous(out)) {
            cum_job c = {tn_tensor_data(in), tn_tensor_data(out), n, 1, lanes, prod, odt == TN_DTYPE_FLOAT64};
            for (int d = dim + 1; d < in->ndim; d++) c.inner *= in->sizes[d];
            int64_t tasks = c.inner == 1 ? (lanes + 7) / 8 : numel / (n * c.inner) * ((c.inner + 255) / 256);
            int64_t per = n * (c.inner == 1 ? 8 : c.inner < 256 ? c.inner : 256);
            tn_parallel_for(tasks, 32768 / per + 1, cum_worker, &c);
            lanes = 0;
        }
        for (int64_t k = 0; k < lanes; k++) {
            const char *p = (const char *)tn_tensor_data(in) + (in->ndim ? lane_off(in, dim, k) : 0);
            char *q = (char *)tn_tensor_data(out) + (out->ndim ? lane_off(out, dim, k) : 0);
            if (scan_complex(odt)) {
                cum_complex_lane(p, is, q, os, n, prod, odt == TN_DTYPE_COMPLEX64);
            } else if (fl) {
                double acc = prod ? 1.0 : 0.0;
                for (int64_t i = 0; i < n; i++) {
                    double x = tn_rd_get(p + i * is, odt);
                    acc = prod ? acc * x : acc + x;
                    tn_rd_set(q + i * os, odt, acc);
                }
            } else {
                uint64_t acc = prod ? 1 : 0;
                for (int64_t i = 0; i < n; i++) {
                    uint64_t x = (uint64_t)tn_rd_get_i(p + i * is, odt);
                    acc = prod ? acc * x : acc + x;
                    tn_rd_set_i(q + i * os, odt, (int64_t)acc);
                }
            }
        }
    }
    tn_tensor_release(in);
    r[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) */
tn_status tn_op_cumsum(const tn_value *a, tn_value *r) { return cum_op(a, r, false); }
/* aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) */
tn_status tn_op_cumprod(const tn_value *a, tn_value *r) { return cum_op(a, r, true); }

/* ---- cummax / cummin ------------------------------------------------------------------ */

/* Running max (min) and its index along dim, as upstream's cummax_cummin_helper: an element
 * replaces the running value when it is NaN, or when neither is NaN and it is >= (<=) it,
 * so ties and repeated NaNs take the later index. */
static tn_status cum_ext(const tn_value *a, tn_value *r, bool is_max) {
    tn_tensor *self = a[0].u.t;
    TN_TRY(tn_reduce_check_dtype(is_max ? "cummax" : "cummin", self->dtype));
    int dim;
    TN_TRY(tn_wrap_dim(a[1].u.i, self->ndim, &dim));
    tn_tensor *vals = NULL, *idx = NULL;
    tn_status st = tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), &vals);
    if (st == TN_OK) st = tn_tensor_empty(self->ndim, self->sizes, TN_DTYPE_INT64, tn_tensor_device(self), &idx);
    if (st != TN_OK) { tn_tensor_release(vals); return st; }
    int64_t numel = tn_tensor_numel(self);
    if (!tn_tensor_is_meta(self) && numel > 0) {
        tn_dtype dt = self->dtype;
        int64_t n = self->ndim ? self->sizes[dim] : 1, lanes = numel / n;
        int es = tn_dtype_itemsize(dt);
        int64_t is = (self->ndim ? self->strides[dim] : 0) * es, vs = (vals->ndim ? vals->strides[dim] : 0) * es;
        int64_t xs = (idx->ndim ? idx->strides[dim] : 0) * 8;
        bool fl = tn_dtype_is_floating(dt);
        for (int64_t k = 0; k < lanes; k++) {
            const char *p = (const char *)tn_tensor_data(self) + (self->ndim ? lane_off(self, dim, k) : 0);
            char *q = (char *)tn_tensor_data(vals) + (vals->ndim ? lane_off(vals, dim, k) : 0);
            char *ix = (char *)tn_tensor_data(idx) + (idx->ndim ? lane_off(idx, dim, k) : 0);
            int64_t best = 0;
            for (int64_t i = 0; i < n; i++) {
                bool take;
                if (fl) {
                    double x = tn_rd_get(p + i * is, dt), o = tn_rd_get(p + best * is, dt);
                    take = isnan(x) || (!isnan(o) && (is_max ? x >= o : x <= o));
                } else {
                    int64_t x = tn_rd_get_i(p + i * is, dt), o = tn_rd_get_i(p + best * is, dt);
                    take = is_max ? x >= o : x <= o;
                }
                if (take) best = i;
                memcpy(q + i * vs, p + best * is, (size_t)es);
                memcpy(ix + i * xs, &best, 8);
            }
        }
    }
    r[0] = tn_value_tensor(vals);
    r[1] = tn_value_tensor(idx);
    return TN_OK;
}
/* aten::cummax(Tensor self, int dim) -> (values, indices) */
tn_status tn_op_cummax(const tn_value *a, tn_value *r) { return cum_ext(a, r, true); }
/* aten::cummin(Tensor self, int dim) -> (values, indices) */
tn_status tn_op_cummin(const tn_value *a, tn_value *r) { return cum_ext(a, r, false); }

/* One complex lane of logcumsumexp: upstream's accumulate type complex<double> from
 * -inf + 0i, each step its complex log-add-exp (element first, then the running value),
 * each prefix stored rounded to the element type. */
static void logcumsumexp_complex_lane(const char *p, int64_t is, char *q, int64_t os, int64_t n, bool c64) {
    double _Complex acc = CMPLX(-INFINITY, 0.0);
    for (int64_t i = 0; i < n; i++) {
        double _Complex x;
        if (c64) { float v[2]; memcpy(v, p + i * is, 8); x = CMPLX(v[0], v[1]); }
        else memcpy(&x, p + i * is, 16);
        acc = TN_CLOGADDEXP(x, acc);
        if (c64) { float v[2] = {(float)creal(acc), (float)cimag(acc)}; memcpy(q + i * os, v, 8); }
        else memcpy(q + i * os, &acc, 16);
    }
}

/* aten::logcumsumexp(Tensor self, int dim): the running log-add-exp in double (upstream's
 * accumulate type), from -inf; equal infinities pass through, NaN propagates. */
tn_status tn_op_logcumsumexp(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t;
    if (!tn_dtype_is_floating(self->dtype) && !scan_complex(self->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"logcumsumexp_out_cpu\" not implemented for '%s'", tn_dtype_infos[self->dtype].c10_name);
    int dim;
    TN_TRY(tn_wrap_dim(a[1].u.i, self->ndim, &dim));
    tn_tensor *out;
    TN_TRY(tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), &out));
    int64_t numel = tn_tensor_numel(self);
    if (!tn_tensor_is_meta(self) && numel > 0) {
        tn_dtype dt = self->dtype;
        int64_t n = self->ndim ? self->sizes[dim] : 1, lanes = numel / n;
        int es = tn_dtype_itemsize(dt);
        int64_t is = (self->ndim ? self->strides[dim] : 0) * es, os = (out->ndim ? out->strides[dim] : 0) * es;
        for (int64_t k = 0; k < lanes; k++) {
            const char *p = (const char *)tn_tensor_data(self) + (self->ndim ? lane_off(self, dim, k) : 0);
            char *q = (char *)tn_tensor_data(out) + (out->ndim ? lane_off(out, dim, k) : 0);
            if (scan_complex(dt)) {
                logcumsumexp_complex_lane(p, is, q, os, n, dt == TN_DTYPE_COMPLEX64);
                continue;
            }
            double acc = -INFINITY;
            for (int64_t i = 0; i < n; i++) {
                double x = tn_rd_get(p + i * is, dt);
                double lo = isnan(acc) ? acc : (acc < x ? acc : x), hi = isnan(acc) ? acc : (x < acc ? acc : x);
                acc = (lo != hi || isfinite(lo)) ? log1p(exp(lo - hi)) + hi : x;
                tn_rd_set(q + i * os, dt, acc);
            }
        }
    }
    r[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- softmax ------------------------------------------------------------------------- */

/* Softmax of self along dim into a tensor of self's dtype: the door's offered tensor (a
 * derived out= call's, iter.h: taken for the `rets` it was offered with) when it is
 * contiguous in self's shape and dtype and shares no storage with self, so the door copies
 * nothing; else the replayed step's captured result or a new tensor (tn_graph_empty_result). */
static tn_status softmax_core(tn_tensor *self, int64_t dim_arg, bool is_log, const tn_value *rets, tn_tensor **res) {
    int dim;
    TN_TRY(tn_wrap_dim(dim_arg, self->ndim, &dim));
    tn_dtype dt = self->dtype;
    bool last = self->ndim == 0 || dim == self->ndim - 1;
    if (!tn_dtype_is_floating(dt) || tn_reduce_check_dtype("softmax", dt) != TN_OK)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s%s_kernel_impl\" not implemented for '%s'", is_log ? "log_softmax" : "softmax",
                        last ? "_lastdim" : "", tn_dtype_infos[dt].c10_name);
    tn_tensor *out, *into = tn_iter_offer_take(rets);
    int64_t numel = tn_tensor_numel(self);
    if (into && into->dtype == dt && into->ndim == self->ndim && !tn_tensor_is_meta(into) && !tn_tensor_is_meta(self) &&
        !memcmp(into->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim) && tn_tensor_is_contiguous(into) &&
        into->storage != self->storage && (numel == 0 || into->storage->data)) {
        tn_tensor_retain(into);
        out = into;
    } else {
        TN_TRY(tn_graph_empty_result(self->ndim, self->sizes, NULL, dt, tn_tensor_device(self), &out));
    }
    if (tn_tensor_is_meta(self) || numel == 0) { *res = out; return TN_OK; }
    int64_t n = self->ndim ? self->sizes[dim] : 1;
    int64_t lanes = numel / n;
    int es = tn_dtype_itemsize(dt);
    int64_t is = (self->ndim ? self->strides[dim] : 0) * es, os = (self->ndim ? out->strides[dim] : 0) * es;
    bool dbl = dt == TN_DTYPE_FLOAT64;
    /* the last-dim log-softmax of BFloat16 / Half rounds its sum and log-sum to the type */
    int mode = !is_log ? TN_SOFTMAX_PLAIN
               : !last ? TN_SOFTMAX_LOG
               : dt == TN_DTYPE_BFLOAT16 ? TN_SOFTMAX_LOG_BF16
               : dt == TN_DTYPE_FLOAT16 ? TN_SOFTMAX_LOG_F16 : TN_SOFTMAX_LOG;
    if (last && !dbl && tn_tensor_is_contiguous(self)) {
        /* contiguous rows: the vectorised, threaded kernel (widened to float and rounded
         * once for Half / BFloat16) */
        if (dt == TN_DTYPE_FLOAT32) {
            tn_softmax_rows_f32(tn_tensor_data(out), tn_tensor_data(self), lanes, n, mode);
        } else {
            float *tmp = malloc((size_t)numel * 2 * sizeof(float));
            if (!tmp) { tn_tensor_release(out); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
            /* widened and rounded back by the cast loops (vectorised; before: a scalar
             * conversion call per element, 9x upstream's time for float16 (64, 1000)) */
            tn_loop_ctx ctx;
            memset(&ctx, 0, sizeof ctx);
            char *wide[2] = {(char *)tmp, tn_tensor_data(self)}, *narrow[2] = {tn_tensor_data(out), (char *)(tmp + numel)};
            tn_cast_loop(dt, TN_DTYPE_FLOAT32)(wide, (const int64_t[]){4, 2}, numel, &ctx);
            tn_softmax_rows_f32(tmp + numel, tmp, lanes, n, mode);
            tn_cast_loop(TN_DTYPE_FLOAT32, dt)(narrow, (const int64_t[]){2, 4}, numel, &ctx);
            free(tmp);
        }
        *res = out;
        return TN_OK;
    }
    if (tn_tensor_is_contiguous(self) && (dt == TN_DTYPE_FLOAT32 || (dbl && last))) {
        /* contiguous float32 along any dim but the last (columns), contiguous float64 rows:
         * on the pool (before: one lane at a time on one thread, 11x and 6.8x upstream at
         * 1000 x 1000) */
        if (dbl) {
            tn_softmax_rows_f64(tn_tensor_data(out), tn_tensor_data(self), lanes, n, mode);
        } else {
            int64_t inner = 1;
            for (int i = dim + 1; i < self->ndim; i++) inner *= self->sizes[i];
            tn_softmax_cols_f32(tn_tensor_data(out), tn_tensor_data(self), lanes / inner, n, inner, is_log);
        }
        *res = out;
        return TN_OK;
    }
    void *buf_in = malloc((size_t)n * 16), *buf_out = (char *)buf_in + n * 8;
    if (!buf_in) { tn_tensor_release(out); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    for (int64_t k = 0; k < lanes; k++) {
        const char *p = (const char *)tn_tensor_data(self) + (self->ndim ? lane_off(self, dim, k) : 0);
        char *q = (char *)tn_tensor_data(out) + (out->ndim ? lane_off(out, dim, k) : 0);
        if (dbl) {
            double *x = buf_in, *y = buf_out;
            for (int64_t i = 0; i < n; i++) x[i] = tn_rd_get(p + i * is, dt);
            if (last) f64_softmax_lastdim__scalar(y, x, 1, n, mode);
            else {
                /* upstream's non-last-dim loop: running max, then exp and a sequential sum */
                double mx = x[0], sum = 0;
                for (int64_t i = 1; i < n; i++) mx = (isnan(x[i]) || x[i] > mx) && !isnan(mx) ? x[i] : mx;
                for (int64_t i = 0; i < n; i++) { y[i] = is_log ? x[i] - mx : exp(x[i] - mx); sum += is_log ? exp(y[i]) : y[i]; }
                if (is_log) { double ls = log(sum); for (int64_t i = 0; i < n; i++) y[i] = y[i] - ls; }
                else for (int64_t i = 0; i < n; i++) y[i] = y[i] / sum;
            }
            for (int64_t i = 0; i < n; i++) tn_rd_set(q + i * os, dt, y[i]);
        } else {
            float *x = buf_in, *y = buf_out;
            for (int64_t i = 0; i < n; i++) x[i] = (float)tn_rd_get(p + i * is, dt);
            if (last) f32_softmax_lastdim__scalar(y, x, 1, n, mode);
            else {
                float mx = x[0], sum = 0;
                for (int64_t i = 1; i < n; i++) mx = (isnan(x[i]) || x[i] > mx) && !isnan(mx) ? x[i] : mx;
                for (int64_t i = 0; i < n; i++) { y[i] = is_log ? x[i] - mx : expf(x[i] - mx); sum += is_log ? expf(y[i]) : y[i]; }
                if (is_log) { float ls = logf(sum); for (int64_t i = 0; i < n; i++) y[i] = y[i] - ls; }
                else for (int64_t i = 0; i < n; i++) y[i] = y[i] / sum;
            }
            for (int64_t i = 0; i < n; i++) tn_rd_set(q + i * os, dt, y[i]);
        }
    }
    free(buf_in);
    *res = out;
    return TN_OK;
}

static tn_status softmax_int(const tn_value *a, tn_value *r, bool log) {
    tn_tensor *self = a[0].u.t, *in, *out;
    TN_TRY(tn_reduce_to_dtype(self, a[2].tag == TN_V_DTYPE ? a[2].u.dtype : self->dtype, &in));
    tn_status st = softmax_core(in, a[1].u.i, log, r, &out);
    tn_tensor_release(in);
    TN_TRY(st);
    r[0] = tn_value_tensor(out);
    return TN_OK;
}

static tn_status softmax_prim(const tn_value *a, tn_value *r, bool log) {
    if (a[2].tag == TN_V_BOOL && a[2].u.b)
        return tn_error(TN_ERR_RUNTIME, "%s with half to float conversion is not supported on CPU", log ? "log_softmax" : "softmax");
    tn_tensor *out;
    TN_TRY(softmax_core(a[0].u.t, a[1].u.i, log, r, &out));
    r[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) */
tn_status tn_op_softmax_int(const tn_value *a, tn_value *r) { return softmax_int(a, r, false); }
/* aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) */
tn_status tn_op_log_softmax_int(const tn_value *a, tn_value *r) { return softmax_int(a, r, true); }
/* aten::_softmax(Tensor self, int dim, bool half_to_float) */
tn_status tn_op__softmax(const tn_value *a, tn_value *r) { return softmax_prim(a, r, false); }
/* aten::_log_softmax(Tensor self, int dim, bool half_to_float) */
tn_status tn_op__log_softmax(const tn_value *a, tn_value *r) { return softmax_prim(a, r, true); }
