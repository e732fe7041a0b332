/* nn_pool_adaptive.c — adaptive max pooling over 1 to 3 spatial dims (with the flat index
 * of each maximum in its input plane) and adaptive average pooling over 3: output cell o
 * covers input [floor(o I / O), ceil((o + 1) I / O)) per dim, as upstream's
 * AdaptivePooling.h; NaN wins a max (and keeps its index) as in upstream's kernels. Also
 * their backward operators (adaptive_max_pool{2,3}d_backward: the index scatter-add;
 * _adaptive_avg_pool3d_backward: each cell's gradient spread over it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/nn_pool3d.h"
#include "ops/dispatch.h"
#include "ops/nn_backward_internal.h"
#include "ops/reduce.h"
#include "ops/shape.h"

static int64_t start_index(int64_t o, int64_t I, int64_t O) { return (o * I) / O; }
static int64_t end_index(int64_t o, int64_t I, int64_t O) { return ((o + 1) * I + O - 1) / O; }

typedef struct pool_job {
    tn_dtype dt;
    bool is_max;
    int64_t in[3], out[3];
    const char *src;
    char *dv;
    int64_t *di;
} pool_job;

/* float32 / float64 planes read in their own type. Average: the sum, then the division by
 * the three extents in turn, each step rounded to the type as upstream's kernel computes it
 * (what the generic loop below gets through double and rounding). Max: the value and its
 * plane index by the generic loop's scan, comparisons and NaN rule (its conversion call per
 * element: 1.7x upstream's time for 8 x 32 x 64 x 64 to 7 x 7). */
#define TYPED_PLANES(T)                                                                                \
    static void planes_##T(const pool_job *j, int64_t p0, int64_t p1) {                                \
        const int64_t *in = j->in, *out = j->out;                                                      \
        int64_t plane_in = in[0] * in[1] * in[2], plane_out = out[0] * out[1] * out[2];                \
        for (int64_t p = p0; p < p1; p++) {                                                            \
            const T *x = (const T *)j->src + p * plane_in;                                             \
            T *y = (T *)j->dv + p * plane_out;                                                         \
            int64_t *yi = j->is_max ? j->di + p * plane_out : NULL;                                    \
            for (int64_t od = 0; od < out[0]; od++) {                                                  \
                int64_t d0 = start_index(od, in[0], out[0]), d1 = end_index(od, in[0], out[0]);        \
                for (int64_t oh = 0; oh < out[1]; oh++) {                                              \
                    int64_t h0 = start_index(oh, in[1], out[1]), h1 = end_index(oh, in[1], out[1]);    \
                    for (int64_t ow = 0; ow < out[2]; ow++) {                                          \
                        int64_t w0 = start_index(ow, in[2], out[2]), w1 = end_index(ow, in[2], out[2]); \
                        T acc = yi ? (T)-INFINITY : (T)0;                                              \
                        int64_t bi = d0 * in[1] * in[2] + h0 * in[2] + w0;                             \
                        for (int64_t d = d0; d < d1; d++)                                              \
                            for (int64_t h = h0; h < h1; h++) {                                        \
                                const int64_t r = (d * in[1] + h) * in[2];                             \
                                if (!yi)                                                               \
                                    for (int64_t w = w0; w < w1; w++) acc += x[r + w];                 \
                                else                                                                   \
                                    for (int64_t w = w0; w < w1; w++)                                  \
                                        if (x[r + w] > acc || x[r + w] != x[r + w]) { acc = x[r + w]; bi = r + w; } \
                            }                                                                          \
                        if (yi) { *y++ = acc; *yi++ = bi; }                                            \
                        else *y++ = acc / (T)(d1 - d0) / (T)(h1 - h0) / (T)(w1 - w0);                  \
                    }                                                                                  \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
    }
TYPED_PLANES(float)
TYPED_PLANES(double)

/* Planes [p0, p1) of a pool_job (a chunk of the pool). */
static void pool_planes(void *ctx, int64_t p0, int64_t p1) {
    const pool_job *j = ctx;
    if (j->dt == TN_DTYPE_FLOAT32) { planes_float(j, p0, p1); return; }
    if (j->dt == TN_DTYPE_FLOAT64) { planes_double(j, p0, p1); return; }
    tn_dtype dt = j->dt;
    int es = tn_dtype_itemsize(dt);
    const int64_t *in = j->in, *out = j->out;
    int64_t plane_in = in[0] * in[1] * in[2], plane_out = out[0] * out[1] * out[2];
    const char *src = j->src;
    char *dv = j->dv;
    int64_t *di = j->di;
    bool is_max = j->is_max;
    /* upstream's 3-d average kernel sums and divides in the tensor's own type (each step
     * rounded to it, Half/BFloat16 included), dividing by the three extents in turn */
    for (int64_t p = p0; p < p1; p++)
        for (int64_t od = 0; od < out[0]; od++)
            for (int64_t oh = 0; oh < out[1]; oh++)
                for (int64_t ow = 0; ow < out[2]; ow++) {
                    int64_t d0 = start_index(od, in[0], out[0]), d1 = end_index(od, in[0], out[0]);
                    int64_t h0 = start_index(oh, in[1], out[1]), h1 = end_index(oh, in[1], out[1]);
                    int64_t w0 = start_index(ow, in[2], out[2]), w1 = end_index(ow, in[2], out[2]);
                    double best = -INFINITY, sum = 0;
                    int64_t bi = d0 * in[1] * in[2] + h0 * in[2] + w0;
                    for (int64_t d = d0; d < d1; d++)
                        for (int64_t h = h0; h < h1; h++)
                            for (int64_t w = w0; w < w1; w++) {
                                int64_t at = (d * in[1] + h) * in[2] + w;
                                double val = tn_rd_get(src + (p * plane_in + at) * es, dt);
                                if (is_max) {
                                    if (val > best || isnan(val)) { best = val; bi = at; }
                                } else {
                                    sum = tn_round_to_dtype(dt, sum + val);
                                }
                            }
                    int64_t oat = p * plane_out + (od * out[1] + oh) * out[2] + ow;
                    if (is_max) {
                        tn_rd_set(dv + oat * es, dt, best);
                        di[oat] = bi;
                    } else {
                        double m = tn_round_to_dtype(dt, tn_round_to_dtype(dt, tn_round_to_dtype(dt, sum / (double)(d1 - d0)) / (double)(h1 - h0)) / (double)(w1 - w0));
                        tn_rd_set(dv + oat * es, dt, m);
                    }
                }
}

/* nsp spatial dims; max: values + int64 indices, else the mean */
static tn_status adaptive_pool(const tn_value *args, tn_value *rets, int nsp, bool is_max, const char *name) {
    tn_tensor *x = args[0].u.t;
    const tn_value *os = &args[1];
    if (os->u.ilist.n != nsp)
        return tn_error(TN_ERR_RUNTIME, "%s(): internal error: output_size.size() must be %d", name, nsp);
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "%s(): Expected %dD or %dD tensor, but got %dD", name, nsp + 1, nsp + 2, x->ndim);
    /* every dim but the first, whether the input is batched or not (upstream's loop) */
    for (int d = 1; d < x->ndim; d++)
        if (x->sizes[d] == 0)
            return tn_error(TN_ERR_RUNTIME, "%s(): Expected input to have non-zero size for non-batch dimensions, but input has sizes with dimension %d being empty", name, d);
    for (int d = 0; d < nsp; d++)
        if (os->u.ilist.data[d] < 0) return tn_error(TN_ERR_RUNTIME, "%s(): elements of output_size must be greater than or equal to 0", name);
    if (!tn_dtype_is_floating(x->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s_cpu\" not implemented for '%s'", name, tn_dtype_infos[x->dtype].c10_name);
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, planes = 1, shape[5];
    for (int d = 0; d < x->ndim - nsp; d++) planes *= x->sizes[d], shape[d] = x->sizes[d];
    for (int d = 0; d < nsp; d++) {
        in[3 - nsp + d] = x->sizes[x->ndim - nsp + d];
        out[3 - nsp + d] = os->u.ilist.data[d];
        shape[x->ndim - nsp + d] = os->u.ilist.data[d];
    }
    tn_tensor *xc = NULL, *v = NULL, *ix = NULL;
    tn_status st = tn_tensor_contiguous(x, &xc);
    if (st == TN_OK) st = tn_tensor_empty(x->ndim, shape, x->dtype, tn_tensor_device(x), &v);
    if (st == TN_OK && is_max) st = tn_tensor_empty(x->ndim, shape, TN_DTYPE_INT64, tn_tensor_device(x), &ix);
    /* an empty result (an output size of 0 beside one of 2**32) has no cell to visit */
    if (st == TN_OK && !tn_tensor_is_meta(x) && tn_tensor_numel(v) > 0) {
        pool_job j = {x->dtype, is_max, {in[0], in[1], in[2]}, {out[0], out[1], out[2]}, tn_tensor_data(xc), tn_tensor_data(v),
                      ix ? tn_tensor_data(ix) : NULL};
        /* chunks of about 32,768 input elements read (each plane reads its whole input plane) */
        int64_t plane_in = in[0] * in[1] * in[2], grain = plane_in >= 32768 ? 1 : 32768 / plane_in;
        tn_parallel_for(planes, grain, pool_planes, &j);
    }
    tn_tensor_release(xc);
    if (st != TN_OK) {
        tn_tensor_release(v);
        tn_tensor_release(ix);
        return st;
    }
    rets[0] = tn_value_tensor(v);
    if (is_max) rets[1] = tn_value_tensor(ix);
    return TN_OK;
}

/* aten::adaptive_max_pool1d / 2d / 3d(self, output_size) -> (values, indices) */
tn_status tn_op_adaptive_max_pool1d(const tn_value *a, tn_value *r) { return adaptive_pool(a, r, 1, true, "adaptive_max_pool1d"); }
tn_status tn_op_adaptive_max_pool2d(const tn_value *a, tn_value *r) { return adaptive_pool(a, r, 2, true, "adaptive_max_pool2d"); }
tn_status tn_op_adaptive_max_pool3d(const tn_value *a, tn_value *r) { return adaptive_pool(a, r, 3, true, "adaptive_max_pool3d"); }
/* aten::adaptive_avg_pool3d(self, output_size): as upstream's, an output of 1 x 1 x 1 is the
 * mean over the last three dims (a float accumulation: not the kernel's sum in the dtype) */
tn_status tn_op_adaptive_avg_pool3d(const tn_value *a, tn_value *r) {
    const tn_value *os = &a[1];
    if (os->u.ilist.n != 3) return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool3d: output_size must be 3");
    const int64_t *o = os->u.ilist.data;
    if (o[0] < 0 || o[1] < 0 || o[2] < 0)
        return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but received {%lld, %lld,%lld}",
                        (long long)o[0], (long long)o[1], (long long)o[2]);
    if (o[0] == 1 && o[1] == 1 && o[2] == 1) {
        int64_t dims[3] = {-1, -2, -3};
        tn_value m[4] = {a[0], tn_value_intlist(dims, 3), tn_value_bool(true), {.tag = TN_V_NONE}};
        return tn_dispatch(TN_OP_mean_dim, m, r);
    }
    return adaptive_pool(a, r, 3, false, "adaptive_avg_pool3d");
}
/* aten::_adaptive_avg_pool3d(self, output_size): the kernel */
tn_status tn_op__adaptive_avg_pool3d(const tn_value *a, tn_value *r) { return adaptive_pool(a, r, 3, false, "adaptive_avg_pool3d"); }

/* ---- backward operators ------------------------------------------------------------------ */

/* Checks shared by the backward operators: grad_output gy [lead..., out...] against the
 * input x [lead..., in...] (nsp spatial dims; the leading dims must agree, which upstream
 * does not check: it reads past a smaller grad_output). */
static tn_status adaptive_grad_lead(const tn_tensor *gy, const tn_tensor *x, int nsp, const char *name) {
    char b1[256], b2[256];
    for (int d = 0; d < x->ndim - nsp; d++)
        if (gy->sizes[d] != x->sizes[d])
            return tn_error(TN_ERR_RUNTIME, "%s(): grad_output %s does not match input %s", name, TN_NN_FMT(gy, b1),
                            TN_NN_FMT(x, b2));
    return TN_OK;
}

/* aten::adaptive_max_pool2d_backward / adaptive_max_pool3d_backward(grad_output, self,
 * indices) -> Tensor: grad_output added at the indices of each input plane. */
static tn_status adaptive_max_backward(const tn_value *a, tn_value *rets, int nsp) {
    tn_tensor *gy = a[0].u.t, *x = a[1].u.t, *idx = a[2].u.t;
    const char *name = nsp == 2 ? "adaptive_max_pool2d_backward" : "adaptive_max_pool3d_backward";
    const char *gname = nsp == 2 ? "grad_output" : "gradOutput";
    char b1[256], b2[256];
    if (gy->ndim != nsp + 1 && gy->ndim != nsp + 2)
        return nsp == 2 ? tn_error(TN_ERR_RUNTIME, "adaptive_max_pooling2d_backward(): Expected 3D or 4D grad_output, but got: %s",
                                   TN_NN_FMT(gy, b1))
                        : tn_error(TN_ERR_RUNTIME, "adaptive_max_pool3d_backward(): Expected 4D or 5D gradOutput, but got: %s",
                                   TN_NN_FMT(gy, b1));
    for (int d = gy->ndim - nsp; d < gy->ndim; d++)
        if (gy->sizes[d] == 0)
            return tn_error(TN_ERR_RUNTIME, "%s(): Expected grad_output to have non-zero size for non-batch dimensions, "
                                            "but grad_output has sizes %s with dimension %d being empty",
                            name, TN_NN_FMT(gy, b1), d);
    if (gy->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `%s` but got dtype %s", tn_dtype_infos[x->dtype].cpp_name,
                        gname, tn_dtype_infos[gy->dtype].cpp_name);
    if (idx->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type Long but found %s", tn_nnb_dname(idx->dtype));
    if (!tn_nnb_same_sizes(idx, gy))
        return tn_error(TN_ERR_RUNTIME, "expected sizes %s for `%s` but got sizes %s", TN_NN_FMT(idx, b1), gname,
                        TN_NN_FMT(gy, b2));
    if (x->ndim != gy->ndim)
        return tn_error(TN_ERR_RUNTIME, "%s(): Expected input of %d dimensions, but got %s", name, gy->ndim,
                        TN_NN_FMT(x, b1));
    TN_TRY(adaptive_grad_lead(gy, x, nsp, name));
    TN_TRY(tn_nnb_check_float(x, name));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(x->ndim, x->sizes, x->dtype, gy, &gx));
    if (tn_tensor_is_meta(gy) || tn_tensor_is_meta(idx) || tn_tensor_numel(gx) == 0) {
        rets[0] = tn_value_tensor(gx);
        return TN_OK;
    }
    int64_t in_plane = 1, out_plane = 1, P = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (d < x->ndim - nsp) P *= x->sizes[d];
        else { in_plane *= x->sizes[d]; out_plane *= gy->sizes[d]; }
    }
    tn_dtype acc = tn_nn_acc(x->dtype);
    tn_nn_buf bg = {0}, bi = {0}, bx = {0};
    /* Half / BFloat16: upstream's kernels add in the tensor's dtype, each add rounded */
    bool step_round = acc != x->dtype;
    tn_status st = tn_nn_load(gy, acc, &bg);
    if (st == TN_OK) st = tn_nn_load_index(idx, &bi);
    if (st == TN_OK && step_round) {
        const float *gv = bg.data;
        const int64_t *iv = bi.data;
        double *sum = calloc((size_t)(P * in_plane), sizeof(double));
        if (!sum) st = tn_error(TN_ERR_RUNTIME, "out of memory");
        for (int64_t p = 0; st == TN_OK && p < P; p++)
            for (int64_t j = 0; j < out_plane; j++) {
                int64_t at = iv[p * out_plane + j];
                if (at < 0 || at >= in_plane) {
                    st = tn_error(TN_ERR_RUNTIME, "%s: index %lld is out of bounds for a plane of %lld elements", name,
                                  (long long)at, (long long)in_plane);
                    break;
                }
                double *d = sum + p * in_plane + at;
                *d = tn_round_to_dtype(x->dtype, *d + (double)gv[p * out_plane + j]);
            }
        if (st == TN_OK) {
            char *dst = tn_tensor_data(gx);
            int es = tn_dtype_itemsize(x->dtype);
            for (int64_t k = 0; k < P * in_plane; k++) tn_rd_set(dst + k * es, x->dtype, sum[k]);
        }
        free(sum);
    } else if (st == TN_OK) st = tn_nnb_out_begin(gx, acc, true, &bx);
    if (st == TN_OK && !step_round) {
        int64_t bad = 0;
        bool fine = acc == TN_DTYPE_FLOAT32
                        ? f32_plane_scatter_add__scalar(bx.data, bg.data, bi.data, P, in_plane, out_plane, &bad)
                        : f64_plane_scatter_add__scalar(bx.data, bg.data, bi.data, P, in_plane, out_plane, &bad);
        if (fine) tn_nn_out_finish(gx, acc, &bx);
        else {
            tn_nn_buf_free(&bx);
            st = tn_error(TN_ERR_RUNTIME, "%s: index %lld is out of bounds for a plane of %lld elements", name,
                          (long long)bad, (long long)in_plane);
        }
    }
    tn_nn_buf_free(&bg);
    tn_nn_buf_free(&bi);
    if (st != TN_OK) { tn_tensor_release(gx); return st; }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

tn_status tn_op_adaptive_max_pool2d_backward(const tn_value *a, tn_value *r) { return adaptive_max_backward(a, r, 2); }
tn_status tn_op_adaptive_max_pool3d_backward(const tn_value *a, tn_value *r) { return adaptive_max_backward(a, r, 3); }

/* aten::_adaptive_avg_pool3d_backward(grad_output, self) -> Tensor: each output cell's
 * gradient divided by the cell's three extents in turn and added to every input element of
 * the cell, each step rounded to the tensor's dtype (upstream's scalar_t loop). */
tn_status tn_op__adaptive_avg_pool3d_backward(const tn_value *a, tn_value *rets) {
    tn_tensor *gy = a[0].u.t, *x = a[1].u.t;
    char b1[256];
    for (int d = gy->ndim > 3 ? gy->ndim - 3 : 0; d < gy->ndim; d++)
        if (gy->sizes[d] == 0)
            return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool3d_backward(): Expected grad_output to have non-zero size "
                                            "for non-batch dimensions, but grad_output has sizes %s with dimension %d "
                                            "being empty", TN_NN_FMT(gy, b1), d);
    if (gy->ndim != x->ndim)
        return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool3d_backward_out_cpu_template: Expected dimensions %d for "
                                        "`gradOutput_` but got dimensions %d", x->ndim, gy->ndim);
    int w;
    TN_TRY(tn_wrap_dim_strict(-4, x->ndim, &w));
    if (x->ndim != 4 && x->ndim != 5)
        return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool3d_backward(): Expected 4D or 5D tensor, but got %s",
                        TN_NN_FMT(x, b1));
    TN_TRY(adaptive_grad_lead(gy, x, 3, "adaptive_avg_pool3d_backward"));
    if (gy->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_nnb_dname(x->dtype),
                        tn_nnb_dname(gy->dtype));
    TN_TRY(tn_nnb_check_float(x, "adaptive_avg_pool3d_backward_cpu"));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(x->ndim, x->sizes, x->dtype, gy, &gx));
    if (tn_tensor_is_meta(gy) || tn_tensor_numel(gx) == 0) {
        rets[0] = tn_value_tensor(gx);
        return TN_OK;
    }
    tn_dtype dt = x->dtype;
    int es = tn_dtype_itemsize(dt);
    int64_t in[3], out[3], P = 1;
    for (int d = 0; d < x->ndim - 3; d++) P *= x->sizes[d];
    for (int d = 0; d < 3; d++) in[d] = x->sizes[x->ndim - 3 + d], out[d] = gy->sizes[gy->ndim - 3 + d];
    int64_t plane_in = in[0] * in[1] * in[2], plane_out = out[0] * out[1] * out[2];
    tn_tensor *gc = NULL;
    double *acc = calloc((size_t)(P * plane_in), sizeof(double));
    tn_status st = acc ? tn_tensor_contiguous(gy, &gc) : tn_error(TN_ERR_RUNTIME, "out of memory");
    if (st == TN_OK) {
        const char *src = tn_tensor_data(gc);
        for (int64_t p = 0; p < P && plane_out > 0; p++) { /* an empty gradient visits no cell */
            double *g = acc + p * plane_in;
            for (int64_t od = 0; od < out[0]; od++)
                for (int64_t oh = 0; oh < out[1]; oh++)
                    for (int64_t ow = 0; ow < out[2]; ow++) {
                        int64_t d0 = start_index(od, in[0], out[0]), d1 = end_index(od, in[0], out[0]);
                        int64_t h0 = start_index(oh, in[1], out[1]), h1 = end_index(oh, in[1], out[1]);
                        int64_t w0 = start_index(ow, in[2], out[2]), w1 = end_index(ow, in[2], out[2]);
                        double v = tn_rd_get(src + (p * plane_out + (od * out[1] + oh) * out[2] + ow) * es, dt);
                        double delta = tn_round_to_dtype(dt, tn_round_to_dtype(dt, tn_round_to_dtype(dt, v / (double)(d1 - d0)) /
                                                                           (double)(h1 - h0)) / (double)(w1 - w0));
                        for (int64_t d = d0; d < d1; d++)
                            for (int64_t h = h0; h < h1; h++)
                                for (int64_t ww = w0; ww < w1; ww++) {
                                    double *at = g + (d * in[1] + h) * in[2] + ww;
                                    *at = tn_round_to_dtype(dt, *at + delta);
                                }
                    }
        }
        char *dst = tn_tensor_data(gx);
        for (int64_t k = 0; k < P * plane_in; k++) tn_rd_set(dst + k * es, dt, acc[k]);
    }
    free(acc);
    tn_tensor_release(gc);
    if (st != TN_OK) { tn_tensor_release(gx); return st; }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}
