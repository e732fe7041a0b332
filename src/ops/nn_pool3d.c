/* nn_pool3d.c — 3-d max pooling (with indices) and average pooling with their gradients,
 * and max unpooling over 2 or 3 spatial dims: argument checks and shapes as upstream's
 * pool3d_shape_check / max_unpooling checks, then the plane kernels of
 * kernels/nn_pool3d.h threaded over planes, in the opmath dtype. Inputs are [N, C, D, H, W]
 * or unbatched [C, D, H, W] (unpooling: [N, C, (D,) H, W] or one dim less). */
#include <string.h>

#include "core/threadpool.h"
#include "kernels/nn_pool3d.h"
#include "ops/nn_backward_internal.h"
#include "ops/shape.h"

/* kernel_size, stride ([] or None: the kernel), padding, dilation (dil_arg < 0: none) */
static tn_status read_pool3d(const tn_value *args, int k_arg, int s_arg, int p_arg, int dil_arg, const char *name,
                             tn_pool3d_geom *g) {
    memset(g, 0, sizeof *g);
    g->dil[0] = g->dil[1] = g->dil[2] = 1;
    if (!tn_nn_int_list(&args[k_arg], 3, g->k))
        return tn_error(TN_ERR_RUNTIME, "%s: kernel_size must either be a single int, or a tuple of three ints", name);
    const tn_value *s = &args[s_arg];
    if (s->tag == TN_V_NONE || (s->tag == TN_V_INTLIST && s->u.ilist.n == 0)) memcpy(g->s, g->k, sizeof g->k);
    else if (!tn_nn_int_list(s, 3, g->s))
        return tn_error(TN_ERR_RUNTIME, "%s: stride must either be omitted, a single int, or a tuple of three ints", name);
    if (!tn_nn_int_list(&args[p_arg], 3, g->pad))
        return tn_error(TN_ERR_RUNTIME, "%s: padding must either be a single int, or a tuple of three ints", name);
    if (dil_arg >= 0 && !tn_nn_int_list(&args[dil_arg], 3, g->dil))
        return tn_error(TN_ERR_RUNTIME, "%s: dilation must be either a single int, or a tuple of three ints", name);
    if (g->s[0] == 0 || g->s[1] == 0 || g->s[2] == 0) return tn_error(TN_ERR_RUNTIME, "stride should not be zero");
    return TN_OK;
}

/* Upstream's pool3d_shape_check for input x, after the output sizes are computed. */
static tn_status check_pool3d(const tn_tensor *x, tn_pool3d_geom *g, bool ceil_mode, bool avg, const char *fn) {
    char b[256];
    if (g->k[0] <= 0 || g->k[1] <= 0 || g->k[2] <= 0)
        return tn_error(TN_ERR_RUNTIME, "kernel size should be greater than zero, but got kT: %lld kH: %lld kW: %lld",
                        (long long)g->k[0], (long long)g->k[1], (long long)g->k[2]);
    if (g->s[0] <= 0 || g->s[1] <= 0 || g->s[2] <= 0)
        return tn_error(TN_ERR_RUNTIME, "stride should be greater than zero, but got dT: %lld dH: %lld dW: %lld",
                        (long long)g->s[0], (long long)g->s[1], (long long)g->s[2]);
    if (g->dil[0] <= 0 || g->dil[1] <= 0 || g->dil[2] <= 0)
        return tn_error(TN_ERR_RUNTIME, "dilation should be greater than zero, but got dilationT: %lld dilationH: %lld "
                                        "dilationW: %lld", (long long)g->dil[0], (long long)g->dil[1], (long long)g->dil[2]);
    if (x->ndim != 4 && x->ndim != 5)
        return tn_error(TN_ERR_RUNTIME, "non-empty 4D or 5D (batch mode) tensor expected for input");
    for (int i = x->ndim == 5; i < x->ndim; i++)
        if (x->sizes[i] <= 0)
            return tn_error(TN_ERR_RUNTIME, "%s: Expected input's non-batch dimensions to have positive length, but "
                                            "input has a shape of %s and non-batch dimension %lld has length zero!",
                            fn, TN_NN_FMT(x, b), (long long)x->sizes[i]);
    for (int d = 0; d < 3; d++) {
        g->in[d] = x->sizes[x->ndim - 3 + d];
        g->out[d] = tn_nn_pool_out(g->in[d], g->k[d], g->pad[d], g->s[d], g->dil[d], ceil_mode);
    }
    if (avg && (g->in[0] < g->k[0] || g->in[1] < g->k[1] || g->in[2] < g->k[2]))
        return tn_error(TN_ERR_RUNTIME, "input image (T: %lld H: %lld W: %lld) smaller than kernel size (kT: %lld kH: "
                                        "%lld kW: %lld)", (long long)g->in[0], (long long)g->in[1], (long long)g->in[2],
                        (long long)g->k[0], (long long)g->k[1], (long long)g->k[2]);
    for (int d = 0; d < 3; d++)
        if (g->pad[d] > ((g->k[d] - 1) * g->dil[d] + 1) / 2)
            return tn_error(TN_ERR_RUNTIME, "pad should be at most half of effective kernel size, but got pad=%lld, "
                                            "kernel_size=%lld and dilation=%lld",
                            (long long)g->pad[d], (long long)g->k[d], (long long)g->dil[d]);
    if (avg && (g->k[0] / 2 < g->pad[0] || g->k[2] / 2 < g->pad[2] || g->k[1] / 2 < g->pad[1]))
        return tn_error(TN_ERR_RUNTIME, "pad should be smaller than or equal to half of kernel size, but got kT: %lld "
                                        "kW: %lld kH: %lld padT: %lld padW: %lld padH: %lld",
                        (long long)g->k[0], (long long)g->k[2], (long long)g->k[1], (long long)g->pad[0],
                        (long long)g->pad[2], (long long)g->pad[1]);
    if (g->out[0] < 1 || g->out[1] < 1 || g->out[2] < 1) {
        long long C = (long long)x->sizes[x->ndim - 4];
        return tn_error(TN_ERR_RUNTIME, "Given input size: (%lldx%lldx%lldx%lld). Calculated output size: "
                                        "(%lldx%lldx%lldx%lld). Output size is too small",
                        C, (long long)g->in[0], (long long)g->in[1], (long long)g->in[2], C, (long long)g->out[0],
                        (long long)g->out[1], (long long)g->out[2]);
    }
    return TN_OK;
}

static int64_t planes_before(const tn_tensor *t, int nsp) {
    int64_t P = 1;
    for (int i = 0; i < t->ndim - nsp; i++) P *= t->sizes[i];
    return P;
}

/* x's sizes with the last three replaced by g->out */
static void pooled_sizes(const tn_tensor *x, const tn_pool3d_geom *g, int64_t *sz) {
    memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    for (int d = 0; d < 3; d++) sz[x->ndim - 3 + d] = g->out[d];
}

/* Planes are independent: forward pooling runs over ranges of them on the pool. */
typedef struct pool3d_job {
    tn_dtype acc;
    bool is_max;
    size_t isz;
    char *y;
    int64_t *idx;
    const char *x;
    const tn_pool3d_geom *g;
} pool3d_job;

static void pool3d_planes(void *vj, int64_t p0, int64_t p1) {
    const pool3d_job *j = vj;
    const tn_pool3d_geom *g = j->g;
    int64_t in_plane = g->in[0] * g->in[1] * g->in[2], out_plane = g->out[0] * g->out[1] * g->out[2];
    void *y = j->y + (size_t)(p0 * out_plane) * j->isz;
    const void *x = j->x + (size_t)(p0 * in_plane) * j->isz;
    int64_t *idx = j->idx ? j->idx + p0 * out_plane : NULL;
    int64_t n = p1 - p0;
    if (j->is_max) {
        if (j->acc == TN_DTYPE_FLOAT32) f32_max_pool3d__scalar(y, idx, x, n, g);
        else if (j->acc == TN_DTYPE_FLOAT64) f64_max_pool3d__scalar(y, idx, x, n, g);
        else i64_max_pool3d__scalar(y, idx, x, n, g);
    } else {
        if (j->acc == TN_DTYPE_FLOAT32) f32_avg_pool3d__scalar(y, x, n, g);
        else if (j->acc == TN_DTYPE_FLOAT64) f64_avg_pool3d__scalar(y, x, n, g);
        else i64_avg_pool3d__scalar(y, x, n, g);
    }
}

/* Runs forward pooling of x into a fresh y (and idx for max). */
static tn_status pool3d_forward(tn_tensor *x, const tn_pool3d_geom *g, bool is_max, tn_tensor **out, tn_tensor **out_idx) {
    int64_t sz[5];
    pooled_sizes(x, g, sz);
    tn_tensor *y = NULL, *ix = NULL;
    TN_TRY(tn_nn_empty(x->ndim, sz, x->dtype, x, &y));
    tn_status st = is_max ? tn_nn_empty(x->ndim, sz, TN_DTYPE_INT64, x, &ix) : TN_OK;
    if (st == TN_OK && !tn_tensor_is_meta(x) && tn_tensor_numel(y) > 0) {
        tn_dtype acc = tn_nn_acc_any(x->dtype);
        tn_nn_buf bx = {0}, by = {0};
        st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = tn_nn_out_begin(y, acc, &by);
        if (st == TN_OK) {
            pool3d_job j = {acc, is_max, (size_t)tn_dtype_itemsize(acc), by.data, ix ? tn_tensor_data(ix) : NULL, bx.data, g};
            int64_t per = g->out[0] * g->out[1] * g->out[2] * g->k[0] * g->k[1] * g->k[2];
            tn_parallel_for(planes_before(x, 3), per > 0 && per < TN_NNB_GRAIN ? TN_NNB_GRAIN / per : 1, pool3d_planes, &j);
            tn_nn_out_finish(y, acc, &by);
        } else {
            tn_nn_buf_free(&by);
        }
        tn_nn_buf_free(&bx);
    }
    if (st != TN_OK) {
        tn_tensor_release(y);
        tn_tensor_release(ix);
        return st;
    }
    *out = y;
    if (out_idx) *out_idx = ix;
    return TN_OK;
}

/* aten::max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)
 * -> (out, indices): indices are flat positions (d * H + h) * W + w inside each plane. */
tn_status tn_op_max_pool3d_with_indices(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    tn_pool3d_geom g;
    TN_TRY(read_pool3d(args, 1, 2, 3, 4, "max_pool3d", &g));
    TN_TRY(check_pool3d(x, &g, args[5].u.b, false, "max_pool3d_with_indices_out_cpu_template()"));
    TN_TRY(tn_nn_check_float_or_int(x, "max_pool3d", false));
    tn_tensor *y, *ix;
    TN_TRY(pool3d_forward(x, &g, true, &y, &ix));
    rets[0] = tn_value_tensor(y);
    rets[1] = tn_value_tensor(ix);
    return TN_OK;
}

/* aten::max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode) -> out
 * (composite upstream: the values of max_pool3d_with_indices) */
tn_status tn_op_max_pool3d(const tn_value *args, tn_value *rets) {
    tn_value r[2];
    TN_TRY(tn_op_max_pool3d_with_indices(args, r));
    tn_tensor_release(r[1].u.t);
    rets[0] = r[0];
    return TN_OK;
}

/* aten::avg_pool3d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
 * divisor_override?) -> Tensor */
tn_status tn_op_avg_pool3d(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    tn_pool3d_geom g;
    TN_TRY(read_pool3d(args, 1, 2, 3, -1, "avg_pool3d", &g));
    if (x->ndim != 4 && x->ndim != 5)
        return tn_error(TN_ERR_RUNTIME, "non-empty 4D or 5D (batch mode) tensor expected for input");
    if (args[6].tag == TN_V_INT) {
        if (args[6].u.i == 0) return tn_error(TN_ERR_RUNTIME, "divisor must be not zero");
        g.divisor = args[6].u.i;
    }
    g.count_include_pad = args[5].u.b;
    TN_TRY(check_pool3d(x, &g, args[4].u.b, true, "avg_pool3d()"));
    /* upstream's kernel has Float, Double and Long only (a meta input reaches no kernel) */
    if (!tn_tensor_is_meta(x) && x->dtype != TN_DTYPE_FLOAT32 && x->dtype != TN_DTYPE_FLOAT64 && x->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"avg_pool3d_out_frame\" not implemented for '%s'", tn_nnb_dname(x->dtype));
    tn_tensor *y;
    TN_TRY(pool3d_forward(x, &g, false, &y, NULL));
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* grad_output must have x's leading sizes and the pooled spatial sizes. */
static tn_status check_grad(const tn_tensor *gy, const tn_tensor *x, const tn_pool3d_geom *g, const char *fn) {
    int64_t sz[5];
    pooled_sizes(x, g, sz);
    bool ok = gy->ndim == x->ndim;
    for (int i = 0; ok && i < x->ndim; i++) ok = gy->sizes[i] == sz[i];
    if (!ok) {
        char b1[256], b2[256];
        return tn_error(TN_ERR_RUNTIME, "%s: Expected grad_output of size %s, but got %s", fn,
                        tn_format_sizes(x->ndim, sz, b1, (int)sizeof b1), TN_NN_FMT(gy, b2));
    }
    if (!tn_nn_is_float(gy->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", fn, tn_nnb_dname(gy->dtype));
    return TN_OK;
}

/* aten::max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding,
 * dilation, ceil_mode, indices) -> Tensor: grad_output added at the indices. */
tn_status tn_op_max_pool3d_with_indices_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *idx = args[7].u.t;
    tn_pool3d_geom g;
    TN_TRY(read_pool3d(args, 2, 3, 4, 5, "max_pool3d", &g));
    TN_TRY(check_pool3d(x, &g, args[6].u.b, false, "max_pool3d_with_indices_backward_out_cpu_template()"));
    TN_TRY(check_grad(gy, x, &g, "max_pool3d_with_indices_backward"));
    if (!tn_nnb_same_sizes(idx, gy)) {
        char b1[256], b2[256];
        return tn_error(TN_ERR_RUNTIME, "Expected indices of size %s but got %s", TN_NN_FMT(gy, b1), TN_NN_FMT(idx, b2));
    }
    if (idx->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type Long but found %s", tn_nnb_dname(idx->dtype));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(x->ndim, x->sizes, gy->dtype, gy, &gx));
    if (tn_tensor_is_meta(gy) || tn_tensor_numel(gx) == 0) { rets[0] = tn_value_tensor(gx); return TN_OK; }
    tn_dtype acc = tn_nn_acc(gy->dtype);
    tn_nn_buf bg = {0}, bi = {0}, bx = {0};
    tn_status st = tn_nn_load(gy, acc, &bg);
    if (st == TN_OK) st = tn_nn_load_index(idx, &bi);
    if (st == TN_OK) st = tn_nnb_out_begin(gx, acc, true, &bx);
    if (st == TN_OK) {
        int64_t bad = 0, P = planes_before(x, 3), in_plane = g.in[0] * g.in[1] * g.in[2];
        int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
        bool ok = acc == TN_DTYPE_FLOAT32
                      ? f32_plane_scatter_add__scalar(bx.data, bg.data, bi.data, P, in_plane, out_plane, &bad)
                      : f64_plane_scatter_add__scalar(bx.data, bg.data, bi.data, P, in_plane, out_plane, &bad);
        if (!ok)
            st = tn_error(TN_ERR_RUNTIME, "max_pool3d_with_indices_backward: index %lld is out of bounds for a plane "
                                          "of %lld elements", (long long)bad, (long long)in_plane);
        if (ok) tn_nn_out_finish(gx, acc, &bx);
        else tn_nn_buf_free(&bx);
    }
    tn_nn_buf_free(&bg);
    tn_nn_buf_free(&bi);
    if (st != TN_OK) { tn_tensor_release(gx); return st; }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* aten::avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
 * count_include_pad, divisor_override?) -> Tensor */
tn_status tn_op_avg_pool3d_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t;
    tn_pool3d_geom g;
    TN_TRY(read_pool3d(args, 2, 3, 4, -1, "avg_pool3d", &g));
    if (args[7].tag == TN_V_INT) {
        if (args[7].u.i == 0) return tn_error(TN_ERR_RUNTIME, "divisor must be not zero");
        g.divisor = args[7].u.i;
    }
    g.count_include_pad = args[6].u.b;
    TN_TRY(check_pool3d(x, &g, args[5].u.b, true, "avg_pool3d_backward_out_template()"));
    TN_TRY(check_grad(gy, x, &g, "avg_pool3d_backward_out_frame"));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(x->ndim, x->sizes, gy->dtype, gy, &gx));
    if (tn_tensor_is_meta(gy) || tn_tensor_numel(gx) == 0) { rets[0] = tn_value_tensor(gx); return TN_OK; }
    tn_dtype acc = tn_nn_acc(gy->dtype);
    tn_nn_buf bg = {0}, bx = {0};
    tn_status st = tn_nn_load(gy, acc, &bg);
    if (st == TN_OK) st = tn_nn_out_begin(gx, acc, &bx);
    if (st == TN_OK) {
        int64_t P = planes_before(x, 3);
        if (acc == TN_DTYPE_FLOAT32) f32_avg_pool3d_backward__scalar(bx.data, bg.data, P, &g);
        else f64_avg_pool3d_backward__scalar(bx.data, bg.data, P, &g);
        tn_nn_out_finish(gx, acc, &bx);
    }
    tn_nn_buf_free(&bg);
    if (st != TN_OK) { tn_tensor_release(gx); return st; }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* ---- max unpooling ---------------------------------------------------------------------- */

/* Scatters x's planes into zeroed planes of output_size at indices (same sizes as x). */
static tn_status max_unpool(const tn_value *args, tn_value *rets, int nsp) {
    tn_tensor *x = args[0].u.t, *idx = args[1].u.t;
    const tn_value *osv = &args[2];
    char b1[256], b2[256];
    const char *fn = nsp == 2 ? "max_unpooling2d" : "max_unpooling3d";
    if (idx->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "elements in indices should be type int64 but got: %s", tn_nnb_dname(idx->dtype));
    if (osv->tag != TN_V_INTLIST || osv->u.ilist.n != nsp) {
        if (nsp == 2)
            return tn_error(TN_ERR_RUNTIME, "There should be exactly two elements (height, width) in output_size, but "
                                            "got %lld elements.", (long long)(osv->tag == TN_V_INTLIST ? osv->u.ilist.n : 1));
        return tn_error(TN_ERR_RUNTIME, "There should be exactly three elements (depth, height, width) in output_size, "
                                        "but got: %lld elements.", (long long)(osv->tag == TN_V_INTLIST ? osv->u.ilist.n : 1));
    }
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "Input to %s should be a %dd or %dd Tensor, but got a tensor with %d dimensions.",
                        fn, nsp + 1, nsp + 2, x->ndim);
    if (!tn_nnb_same_sizes(x, idx))
        return tn_error(TN_ERR_RUNTIME, "Expected shape of indices to be same as that of the input tensor (%s) but got "
                                        "indices tensor with shape: %s", TN_NN_FMT(x, b1), TN_NN_FMT(idx, b2));
    for (int i = 1; i < x->ndim; i++)
        if (x->sizes[i] <= 0)
            return tn_error(TN_ERR_RUNTIME, "%s(): Expected input to have non-zero size for non-batch dimensions, but "
                                            "got %s with dimension %d being empty.",
                            nsp == 2 ? "max_unpooling2d_forward_out_cpu" : fn, TN_NN_FMT(x, b1), i);
    if (nsp == 3) {
        int64_t s[3], p[3];
        if (!tn_nn_int_list(&args[3], 3, s) || args[3].u.ilist.n != 3)
            return tn_error(TN_ERR_RUNTIME, "There should be exactly three elements (depth, height, width) in stride, "
                                            "but got: %lld elements.", (long long)(args[3].tag == TN_V_INTLIST ? args[3].u.ilist.n : 1));
        if (!tn_nn_int_list(&args[4], 3, p) || args[4].u.ilist.n != 3)
            return tn_error(TN_ERR_RUNTIME, "There should be exactly three elements (depth, height, width) in padding, "
                                            "but got: %lld elements.", (long long)(args[4].tag == TN_V_INTLIST ? args[4].u.ilist.n : 1));
        if (s[0] <= 0 || s[1] <= 0 || s[2] <= 0)
            return tn_error(TN_ERR_RUNTIME, "strides should be greater than zero, but got stride: [%lld, %lld, %lld]",
                            (long long)s[0], (long long)s[1], (long long)s[2]);
    }
    if (!tn_nn_is_float(x->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'",
                        nsp == 2 ? "max_unpool2d" : "max_unpool3d", tn_nnb_dname(x->dtype));
    int64_t sz[5], out_plane = 1;
    memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    for (int d = 0; d < nsp; d++) {
        sz[x->ndim - nsp + d] = osv->u.ilist.data[d];
        out_plane = tn_mul_wrap(out_plane, osv->u.ilist.data[d]); /* a huge size: zeros() below refuses it */
    }
    tn_tensor *y, *xc = NULL;
    TN_TRY(tn_tensor_zeros(x->ndim, sz, x->dtype, tn_tensor_device(x), &y));
    if (tn_tensor_is_meta(x) || tn_tensor_numel(x) == 0) { rets[0] = tn_value_tensor(y); return TN_OK; }
    tn_nn_buf bi = {0};
    tn_status st = tn_tensor_contiguous(x, &xc);
    if (st == TN_OK) st = tn_nn_load_index(idx, &bi);
    if (st == TN_OK) {
        int64_t bad = 0, P = planes_before(x, nsp), in_plane = tn_tensor_numel(x) / P;
        if (!tn_plane_scatter_set(tn_tensor_data(y), tn_tensor_data(xc), bi.data, (size_t)tn_dtype_itemsize(x->dtype), P,
                                  in_plane, out_plane, &bad)) {
            const int64_t *o = osv->u.ilist.data;
            st = nsp == 2 ? tn_error(TN_ERR_RUNTIME, "Found an invalid max index: %lld (output volumes are of size %lldx%lld)",
                                     (long long)bad, (long long)o[0], (long long)o[1])
                          : tn_error(TN_ERR_RUNTIME, "Found an invalid max index: %lld (output volumes are of size "
                                                     "%lldx%lldx%lld)", (long long)bad, (long long)o[0], (long long)o[1],
                                     (long long)o[2]);
        }
    }
    tn_tensor_release(xc);
    tn_nn_buf_free(&bi);
    if (st != TN_OK) { tn_tensor_release(y); return st; }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* aten::max_unpool2d(self, indices, output_size[2]) -> Tensor */
tn_status tn_op_max_unpool2d(const tn_value *args, tn_value *rets) { return max_unpool(args, rets, 2); }
/* aten::max_unpool3d(self, indices, output_size[3], stride[3], padding[3]) -> Tensor */
tn_status tn_op_max_unpool3d(const tn_value *args, tn_value *rets) { return max_unpool(args, rets, 3); }
