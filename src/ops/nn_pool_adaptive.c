/* nn_pool_adaptive.c — adaptive max pooling over 1 to 3 spatial dims (with the flat index
 * of each maximum in its input plane) and adaptive average pooling over 3: output cell o
 * covers input [floor(o I / O), ceil((o + 1) I / O)) per dim, as upstream's
 * AdaptivePooling.h; NaN wins a max (and keeps its index) as in upstream's kernels. */
#include <math.h>
#include <string.h>

#include "ops/dispatch.h"
#include "ops/reduce.h"
#include "ops/shape.h"

/* v rounded to dtype dt and back (a floating dtype) */
static double tn_rd_round(tn_dtype dt, double v) {
    char buf[8] = {0};
    tn_rd_set(buf, dt, v);
    return tn_rd_get(buf, dt);
}

static int64_t start_index(int64_t o, int64_t I, int64_t O) { return (o * I) / O; }
static int64_t end_index(int64_t o, int64_t I, int64_t O) { return ((o + 1) * I + O - 1) / O; }

/* nsp spatial dims; max: values + int64 indices, else the mean */
static tn_status adaptive_pool(const tn_value *args, tn_value *rets, int nsp, bool is_max, const char *name) {
    tn_tensor *x = args[0].u.t;
    const tn_value *os = &args[1];
    if (os->u.ilist.n != nsp)
        return tn_error(TN_ERR_RUNTIME, "%s(): internal error: output_size.size() must be %d", name, nsp);
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "%s(): Expected %dD or %dD tensor, but got %dD", name, nsp + 1, nsp + 2, x->ndim);
    int b = x->ndim == nsp + 2;
    for (int d = b; d < x->ndim; d++)
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
    if (st == TN_OK && !tn_tensor_is_meta(x)) {
        tn_dtype dt = x->dtype;
        int es = tn_dtype_itemsize(dt);
        int64_t plane_in = in[0] * in[1] * in[2], plane_out = out[0] * out[1] * out[2];
        const char *src = tn_tensor_data(xc);
        char *dv = tn_tensor_data(v);
        int64_t *di = ix ? tn_tensor_data(ix) : NULL;
        /* upstream's 3-d average kernel sums and divides in the tensor's own type (each step
         * rounded to it, Half/BFloat16 included), dividing by the three extents in turn */
        for (int64_t p = 0; p < planes; p++)
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
                                        sum = tn_rd_round(dt, sum + val);
                                    }
                                }
                        int64_t oat = p * plane_out + (od * out[1] + oh) * out[2] + ow;
                        if (is_max) {
                            tn_rd_set(dv + oat * es, dt, best);
                            di[oat] = bi;
                        } else {
                            double m = tn_rd_round(dt, tn_rd_round(dt, tn_rd_round(dt, sum / (double)(d1 - d0)) / (double)(h1 - h0)) / (double)(w1 - w0));
                            tn_rd_set(dv + oat * es, dt, m);
                        }
                    }
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
/* aten::adaptive_avg_pool3d / _adaptive_avg_pool3d(self, output_size) */
tn_status tn_op_adaptive_avg_pool3d(const tn_value *a, tn_value *r) { return adaptive_pool(a, r, 3, false, "adaptive_avg_pool3d"); }
tn_status tn_op__adaptive_avg_pool3d(const tn_value *a, tn_value *r) { return adaptive_pool(a, r, 3, false, "adaptive_avg_pool3d"); }
