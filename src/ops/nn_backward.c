/* nn_backward.c — upstream's dedicated backward operators of pooling, upsampling, padding,
 * normalisation, softmax, NLL, embedding and GLU (the ones derivatives.yaml calls) as
 * ordinary operators: shape and argument checks, output allocation, then the loops of
 * kernels/nn_backward.h on inputs gathered into the opmath dtype as the forward nn ops do.
 * Convolution: nn_backward_conv.c; pointwise gradients: nn_backward_pointwise.c; attention:
 * nn_backward_attention.c. Plain C11; no Python. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/nn_backward.h"
#include "ops/composite_internal.h"
#include "ops/nn_backward_internal.h"
#include "ops/shape.h"

/* ================================ pooling ============================================== */

typedef struct pool2 {
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
} pool2;

static tn_status read_pool2(const tn_value *args, int k, int s, int p, int d, pool2 *a) {
    int64_t kk[2], ss[2], pp[2], dd[2] = {1, 1};
    if (!tn_nn_int_list(&args[k], 2, kk))
        return tn_error(TN_ERR_RUNTIME, "kernel_size must either be a single int, or a tuple of two ints");
    if (args[s].tag == TN_V_NONE || (args[s].tag == TN_V_INTLIST && args[s].u.ilist.n == 0)) { ss[0] = kk[0]; ss[1] = kk[1]; }
    else if (!tn_nn_int_list(&args[s], 2, ss))
        return tn_error(TN_ERR_RUNTIME, "stride must either be omitted, a single int, or a tuple of two ints");
    if (!tn_nn_int_list(&args[p], 2, pp))
        return tn_error(TN_ERR_RUNTIME, "padding must either be a single int, or a tuple of two ints");
    if (d >= 0 && !tn_nn_int_list(&args[d], 2, dd))
        return tn_error(TN_ERR_RUNTIME, "dilation must be either a single int, or a tuple of two ints");
    *a = (pool2){kk[0], kk[1], ss[0], ss[1], pp[0], pp[1], dd[0], dd[1]};
    for (int i = 0; i < 2; i++) /* upstream narrows each to int first */
        if (kk[i] != (int32_t)kk[i] || ss[i] != (int32_t)ss[i] || pp[i] != (int32_t)pp[i] || dd[i] != (int32_t)dd[i])
            return tn_error(TN_ERR_RUNTIME, "value cannot be converted to type int without overflow");
    if (kk[0] <= 0 || kk[1] <= 0)
        return tn_error(TN_ERR_RUNTIME, "kernel size should be greater than zero, but got kH: %lld kW: %lld",
                        (long long)kk[0], (long long)kk[1]);
    if (ss[0] <= 0 || ss[1] <= 0)
        return tn_error(TN_ERR_RUNTIME, "stride should be greater than zero, but got dH: %lld dW: %lld",
                        (long long)ss[0], (long long)ss[1]);
    if (dd[0] <= 0 || dd[1] <= 0)
        return tn_error(TN_ERR_RUNTIME, "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                        (long long)dd[0], (long long)dd[1]);
    return TN_OK;
}

/* Checks that grad_output is [lead..., oh, ow] for an input [lead..., H, W] (3-d or 4-d). */
static tn_status check_grad_planes(const tn_tensor *gy, const tn_tensor *x, int64_t oh, int64_t ow, const char *what) {
    char b1[256], b2[256];
    if (x->ndim != 3 && x->ndim != 4)
        return tn_error(TN_ERR_RUNTIME, "%s: Expected 3D or 4D (batch mode) tensor for input, but got: %s", what,
                        TN_NN_FMT(x, b1));
    bool ok = gy->ndim == x->ndim && gy->sizes[x->ndim - 2] == oh && gy->sizes[x->ndim - 1] == ow;
    for (int i = 0; ok && i < x->ndim - 2; i++) ok = gy->sizes[i] == x->sizes[i];
    if (!ok) {
        int64_t e[4];
        for (int i = 0; i < x->ndim - 2; i++) e[i] = x->sizes[i];
        e[x->ndim - 2] = oh;
        e[x->ndim - 1] = ow;
        return tn_error(TN_ERR_RUNTIME, "%s: Need grad_output of size %s but got %s", what,
                        tn_format_sizes(x->ndim, e, b1, 256), TN_NN_FMT(gy, b2));
    }
    if (gy->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `gradOutput` but got dtype %s", tn_nnb_dname(x->dtype),
                        tn_nnb_dname(gy->dtype));
    return tn_nnb_check_float(x, what);
}

/* The plane form of a pooling gradient: gx zeros like x, the kernel scatters gy into it.
 * Planes are independent, so they are split across the thread pool; fn gets the index p0
 * of its first plane and P planes from there (gx, gy already offset). */
typedef void (*plane_bwd_fn)(tn_dtype acc, void *gx, const void *gy, int64_t p0, int64_t P, int64_t H, int64_t W,
                             int64_t oh, int64_t ow, void *ctx);

typedef struct plane_job {
    plane_bwd_fn fn;
    tn_dtype acc;
    size_t isz;
    char *gx;
    const char *gy;
    int64_t H, W, oh, ow;
    void *ctx;
} plane_job;

static void plane_chunk(void *vj, int64_t p0, int64_t p1) {
    const plane_job *j = vj;
    j->fn(j->acc, j->gx + (size_t)(p0 * j->H * j->W) * j->isz, j->gy + (size_t)(p0 * j->oh * j->ow) * j->isz, p0,
          p1 - p0, j->H, j->W, j->oh, j->ow, j->ctx);
}

static tn_status plane_backward(tn_tensor *gy, int nd, const int64_t *xs, tn_dtype dt, plane_bwd_fn fn, void *ctx,
                                tn_value *rets) {
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(nd, xs, dt, gy, &gx));
    int64_t H = xs[nd - 2], W = xs[nd - 1], oh = gy->sizes[gy->ndim - 2], ow = gy->sizes[gy->ndim - 1];
    int64_t P = 1;
    for (int i = 0; i < nd - 2; i++) P *= xs[i];
    if (!tn_tensor_is_meta(gy) && tn_tensor_numel(gx) > 0) {
        tn_dtype acc = tn_nn_acc(dt);
        tn_nn_buf bg, bx;
        tn_status st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nnb_out_begin(gx, acc, true, &bx);
        if (st != TN_OK) { tn_nn_buf_free(&bg); tn_tensor_release(gx); return st; }
        plane_job j = {fn, acc, (size_t)tn_dtype_itemsize(acc), bx.data, bg.data, H, W, oh, ow, ctx};
        int64_t per = H * W + oh * ow;
        tn_parallel_for(P, TN_NNB_GRAIN / (per > 0 ? per : 1) + 1, plane_chunk, &j);
        tn_nn_out_finish(gx, acc, &bx);
        tn_nn_buf_free(&bg);
    }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

typedef struct max_ctx { const int64_t *idx; } max_ctx;

static void run_max_bwd(tn_dtype acc, void *gx, const void *gy, int64_t p0, int64_t P, int64_t H, int64_t W,
                        int64_t oh, int64_t ow, void *vctx) {
    max_ctx *c = vctx;
    NN_KERNEL(acc, max_pool2d_backward, gx, gy, c->idx + p0 * oh * ow, P, H * W, oh * ow);
}

/* aten::max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding,
 * dilation, ceil_mode, indices) -> Tensor. Indices are upstream's: the flat position
 * h * W + w of the maximum inside its (n, c) plane. */
tn_status tn_op_max_pool2d_with_indices_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *idx = args[7].u.t;
    pool2 a;
    TN_TRY(read_pool2(args, 2, 3, 4, 5, &a));
    if (x->ndim != 3 && x->ndim != 4) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "non-empty 3D or 4D (batch mode) tensor expected for input, but got: %s", TN_NN_FMT(x, b));
    }
    int64_t H = x->sizes[x->ndim - 2], W = x->sizes[x->ndim - 1];
    bool ceil_mode = args[6].u.b;
    int64_t oh = tn_nn_pool_out(H, a.kh, a.ph, a.sh, a.dh, ceil_mode);
    int64_t ow = tn_nn_pool_out(W, a.kw, a.pw, a.sw, a.dw, ceil_mode);
    TN_TRY(check_grad_planes(gy, x, oh, ow, "max_pool2d_with_indices_backward"));
    if (!tn_nnb_same_sizes(idx, gy)) {
        char b1[256], b2[256];
        return tn_error(TN_ERR_RUNTIME, "Expected indices of size %s but got %s", TN_NN_FMT(gy, b1), TN_NN_FMT(idx, b2));
    }
    if (idx->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type Long but found %s", tn_nnb_dname(idx->dtype));
    tn_nn_buf bi = {0};
    if (!tn_tensor_is_meta(idx)) {
        TN_TRY(tn_nn_load_index(idx, &bi));
        const int64_t *iv = bi.data;
        for (int64_t i = 0, n = tn_tensor_numel(idx); i < n; i++)
            if (iv[i] < 0 || iv[i] >= H * W) {
                long long bad = (long long)iv[i];
                tn_nn_buf_free(&bi);
                return tn_error(TN_ERR_RUNTIME, "max_pool2d_with_indices_backward: index %lld is out of bounds for a "
                                                "plane of %lld elements", bad, (long long)(H * W));
            }
    }
    max_ctx c = {bi.data};
    tn_status st = plane_backward(gy, x->ndim, x->sizes, x->dtype, run_max_bwd, &c, rets);
    tn_nn_buf_free(&bi);
    return st;
}

typedef struct avg_ctx { pool2 a; bool count_include_pad; int64_t divisor; } avg_ctx;

static void run_avg_bwd(tn_dtype acc, void *gx, const void *gy, int64_t p0, int64_t P, int64_t H, int64_t W, int64_t oh,
                        int64_t ow, void *vctx) {
    (void)p0;
    avg_ctx *c = vctx;
    NN_KERNEL(acc, avg_pool2d_backward, gx, gy, P, H, W, oh, ow, c->a.kh, c->a.kw, c->a.sh, c->a.sw, c->a.ph, c->a.pw,
              c->count_include_pad, c->divisor);
}

/* aten::avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
 * count_include_pad, divisor_override?) -> Tensor */
tn_status tn_op_avg_pool2d_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t;
    avg_ctx c = {.count_include_pad = args[6].u.b};
    TN_TRY(read_pool2(args, 2, 3, 4, -1, &c.a));
    if (args[7].tag == TN_V_INT) {
        if (args[7].u.i == 0) return tn_error(TN_ERR_RUNTIME, "divisor must be not zero");
        c.divisor = args[7].u.i;
    }
    if (c.a.ph > c.a.kh / 2 || c.a.pw > c.a.kw / 2)
        return tn_error(TN_ERR_RUNTIME, "pad should be smaller than or equal to half of kernel size, but got padW = "
                                        "%lld, padH = %lld, kW = %lld, kH = %lld",
                        (long long)c.a.pw, (long long)c.a.ph, (long long)c.a.kw, (long long)c.a.kh);
    if (x->ndim != 3 && x->ndim != 4) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "non-empty 3D or 4D (batch mode) tensor expected for input, but got: %s", TN_NN_FMT(x, b));
    }
    int64_t H = x->sizes[x->ndim - 2], W = x->sizes[x->ndim - 1];
    bool ceil_mode = args[5].u.b;
    int64_t oh = tn_nn_pool_out(H, c.a.kh, c.a.ph, c.a.sh, 1, ceil_mode);
    int64_t ow = tn_nn_pool_out(W, c.a.kw, c.a.pw, c.a.sw, 1, ceil_mode);
    TN_TRY(check_grad_planes(gy, x, oh, ow, "avg_pool2d_backward"));
    return plane_backward(gy, x->ndim, x->sizes, x->dtype, run_avg_bwd, &c, rets);
}

static void run_adaptive_bwd(tn_dtype acc, void *gx, const void *gy, int64_t p0, int64_t P, int64_t H, int64_t W, int64_t oh,
                             int64_t ow, void *vctx) {
    (void)p0;
    NN_KERNEL(acc, adaptive_avg_pool2d_backward, gx, gy, P, H, W, oh, ow);
}

/* aten::_adaptive_avg_pool2d_backward(grad_output, self) -> Tensor */
tn_status tn_op__adaptive_avg_pool2d_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t;
    char b1[256], b2[256];
    if (x->ndim != 3 && x->ndim != 4)
        return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got %s",
                        TN_NN_FMT(x, b1));
    if (gy->ndim != x->ndim)
        return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool2d_backward(): Expected grad_output of %d dimensions, but got "
                                        "%s", x->ndim, TN_NN_FMT(gy, b2));
    for (int i = 0; i < x->ndim - 2; i++)
        if (gy->sizes[i] != x->sizes[i])
            return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool2d_backward(): grad_output %s does not match input %s",
                            TN_NN_FMT(gy, b1), TN_NN_FMT(x, b2));
    for (int d = 1; d < gy->ndim; d++) /* upstream's check of the non-batch dims (dim 0 may be a batch) */
        if (gy->sizes[d] == 0)
            return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for "
                            "non-batch dimensions, but grad_output has sizes %s with dimension %d being empty",
                            TN_NN_FMT(gy, b1), d);
    if (gy->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `grad_output` but got dtype %s", tn_nnb_dname(x->dtype),
                        tn_nnb_dname(gy->dtype));
    TN_TRY(tn_nnb_check_float(x, "adaptive_avg_pool2d_backward_cpu"));
    return plane_backward(gy, x->ndim, x->sizes, x->dtype, run_adaptive_bwd, NULL, rets);
}

/* ================================ upsampling =========================================== */

typedef struct up_ctx { double rh, rw; int mode; bool align; } up_ctx;

static void run_up_bwd(tn_dtype acc, void *gx, const void *gy, int64_t p0, int64_t P, int64_t H, int64_t W, int64_t oh, int64_t ow,
                       void *vctx) {
    (void)p0;
    up_ctx *c = vctx;
    NN_KERNEL(acc, upsample2d_backward, gx, gy, P, H, W, oh, ow, c->rh, c->rw, c->mode, c->align);
}

static tn_status upsample_backward(const tn_value *args, int mode, bool align, const tn_value *sh, const tn_value *sw,
                                   tn_value *rets) {
    tn_tensor *gy = args[0].u.t;
    const tn_value *osv = &args[1], *isv = &args[2];
    char b[256];
    if (osv->tag != TN_V_INTLIST || osv->u.ilist.n != 2)
        return tn_error(TN_ERR_RUNTIME, "It is expected output_size equals to 2, but got size %lld",
                        (long long)(osv->tag == TN_V_INTLIST ? osv->u.ilist.n : 0));
    if (isv->tag != TN_V_INTLIST || isv->u.ilist.n != 4)
        return tn_error(TN_ERR_RUNTIME, "It is expected input_size equals to 4, but got size %lld",
                        (long long)(isv->tag == TN_V_INTLIST ? isv->u.ilist.n : 0));
    const int64_t *is = isv->u.ilist.data;
    int64_t oh = osv->u.ilist.data[0], ow = osv->u.ilist.data[1];
    if (oh <= 0 || ow <= 0 || is[2] <= 0 || is[3] <= 0)
        return tn_error(TN_ERR_RUNTIME, "Input and output sizes should be greater than 0, but got input (H: %lld, W: "
                                        "%lld) output (H: %lld, W: %lld)", (long long)is[2], (long long)is[3],
                        (long long)oh, (long long)ow);
    int64_t esz[4] = {is[0], is[1], oh, ow};
    bool ok = gy->ndim == 4;
    for (int i = 0; ok && i < 4; i++) ok = gy->sizes[i] == esz[i];
    if (!ok) {
        char e[256];
        return tn_error(TN_ERR_RUNTIME, "Expected grad_output to have the same shape as output; output.size(%d) = %lld "
                                        "but got grad_output of size %s (expected %s)", 2, (long long)oh,
                        TN_NN_FMT(gy, b), tn_format_sizes(4, esz, e, 256));
    }
    TN_TRY(tn_nnb_check_float(gy, mode == 0 ? "upsample_nearest2d_backward" : "upsample_bilinear2d_backward"));
    bool f = gy->dtype != TN_DTYPE_FLOAT64;
    up_ctx c = {tn_nn_up_scale(mode, align, f, sh, is[2], oh), tn_nn_up_scale(mode, align, f, sw, is[3], ow), mode, align};
    return plane_backward(gy, 4, is, gy->dtype, run_up_bwd, &c, rets);
}

/* aten::upsample_nearest2d_backward(grad_output, output_size[2], input_size[4], scales_h?,
 * scales_w?) -> Tensor */
tn_status tn_op_upsample_nearest2d_backward(const tn_value *args, tn_value *rets) {
    return upsample_backward(args, 0, false, &args[3], &args[4], rets);
}

/* aten::upsample_bilinear2d_backward(grad_output, output_size[2], input_size[4],
 * align_corners, scales_h?, scales_w?) -> Tensor */
tn_status tn_op_upsample_bilinear2d_backward(const tn_value *args, tn_value *rets) {
    return upsample_backward(args, 1, args[3].u.b, &args[4], &args[5], rets);
}

/* ================================ normalisation ======================================== */

/* A normalisation gradient on the thread pool. Layer / RMS norm: rows of grad_input are
 * split for the input part, columns for the parameter sums over rows (each column summed
 * in row order, so the result does not depend on the split). Batch norm: channels. */
typedef struct norm_job {
    tn_dtype acc;
    size_t isz;
    void *gx, *gw, *gb;
    const void *gy, *x, *mean, *rstd, *w; /* rstd: invstd for batch norm */
    int64_t M, N;                          /* rows, row length (layer / RMS norm) */
    bool rms;
    double *scratch;                       /* 2*N doubles (layer norm) or N (RMS norm) */
    int64_t BN, C, S;                      /* batch norm: batch, channels, spatial size */
    bool train;
} norm_job;

static const void *at_(const void *p, int64_t k, size_t isz) { return p ? (const char *)p + (size_t)k * isz : NULL; }

static void norm_rows_chunk(void *vj, int64_t m0, int64_t m1) {
    const norm_job *j = vj;
    size_t o = (size_t)(m0 * j->N) * j->isz;
    void *gx = (char *)j->gx + o;
    const void *gy = (const char *)j->gy + o, *x = (const char *)j->x + o;
    if (j->rms)
        NN_KERNEL(j->acc, rms_norm_backward_input, gx, gy, x, at_(j->rstd, m0, j->isz), j->w, m1 - m0, j->N);
    else
        NN_KERNEL(j->acc, layer_norm_backward_input, gx, gy, x, at_(j->mean, m0, j->isz), at_(j->rstd, m0, j->isz), j->w,
                  m1 - m0, j->N);
}

static void norm_cols_chunk(void *vj, int64_t j0, int64_t j1) {
    const norm_job *j = vj;
    if (j->rms)
        NN_KERNEL(j->acc, rms_norm_backward_params, j->gw, j->gy, j->x, j->rstd, j->M, j->N, j0, j1, j->scratch + j0);
    else
        NN_KERNEL(j->acc, layer_norm_backward_params, j->gw, j->gb, j->gy, j->x, j->mean, j->rstd, j->M, j->N, j0, j1,
                  j->scratch + 2 * j0);
}

static void norm_run(const norm_job *j) {
    int64_t N = j->N > 0 ? j->N : 1, M = j->M > 0 ? j->M : 1;
    if (j->gx) tn_parallel_for(j->M, TN_NNB_GRAIN / N + 1, norm_rows_chunk, (void *)j);
    if (j->gw || j->gb) tn_parallel_for(j->N, TN_NNB_GRAIN / M + 1, norm_cols_chunk, (void *)j);
}

static void bn_chunk(void *vj, int64_t c0, int64_t c1) {
    const norm_job *j = vj;
    NN_KERNEL_VEC(j->acc, batch_norm_backward, j->gx, j->gw, j->gb, j->gy, j->x, j->w, j->mean, j->rstd, j->BN, j->C, j->S,
              j->train, c0, c1);
}

/* aten::native_batch_norm_backward(grad_out, input, weight?, running_mean?, running_var?,
 * save_mean?, save_invstd?, train, eps, output_mask[3]) -> (grad_input, grad_weight,
 * grad_bias). Training uses the saved batch statistics, evaluation the running ones. */
tn_status tn_op_native_batch_norm_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *w = tn_nn_opt_tensor(&args[2]);
    tn_tensor *rm = tn_nn_opt_tensor(&args[3]), *rv = tn_nn_opt_tensor(&args[4]);
    tn_tensor *sm = tn_nn_opt_tensor(&args[5]), *si = tn_nn_opt_tensor(&args[6]);
    bool train = args[7].u.b;
    double eps = args[8].u.d;
    if (x->ndim < 2) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "batch_norm_backward: expected input with at least 2 dimensions, but got %s",
                        TN_NN_FMT(x, b));
    }
    TN_TRY(tn_nnb_check_same_shape(gy, x, "batch_norm_backward"));
    TN_TRY(tn_nnb_check_float(x, "batch_norm_backward_cpu"));
    tn_tensor *mean_t = train ? sm : rm, *var_t = train ? si : rv;
    if (!mean_t || !var_t)
        return tn_error(TN_ERR_RUNTIME, train ? "batch_norm_backward: save_mean and save_invstd must be defined in "
                                                "training mode"
                                              : "batch_norm_backward: running_mean and running_var must be defined in "
                                                "evaluation mode");
    int64_t N = x->sizes[0], C = x->sizes[1], S = 1;
    for (int i = 2; i < x->ndim; i++) S *= x->sizes[i];
    if (tn_tensor_numel(mean_t) != C || tn_tensor_numel(var_t) != C || (w && tn_tensor_numel(w) != C))
        return tn_error(TN_ERR_RUNTIME, "batch_norm_backward: expected weight and statistics of %lld elements",
                        (long long)C);
    tn_tensor *gx = NULL, *gw = NULL, *gb = NULL;
    tn_dtype pdt = w ? w->dtype : x->dtype;
    tn_status st = TN_OK;
    if (tn_nnb_mask_at(&args[9], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && tn_nnb_mask_at(&args[9], 1)) st = tn_nn_empty(1, &C, pdt, x, &gw);
    if (st == TN_OK && tn_nnb_mask_at(&args[9], 2)) st = tn_nn_empty(1, &C, pdt, x, &gb);
    tn_tensor *all[5] = {gy, x, w, mean_t, var_t};
    if (st == TN_OK && !tn_nnb_any_meta(5, all) && tn_tensor_numel(x) > 0) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bx = {0}, bw = {0}, bm = {0}, bv = {0}, ogx = {0}, ogw = {0}, ogb = {0};
        void *invstd = NULL;
        st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = tn_nnb_load_opt(w, acc, &bw);
        if (st == TN_OK) st = tn_nn_load(mean_t, acc, &bm);
        if (st == TN_OK) st = tn_nn_load(var_t, acc, &bv);
        if (st == TN_OK) st = tn_nnb_acc_alloc(acc, C, false, &invstd);
        if (st == TN_OK && gx) st = tn_nnb_out_begin(gx, acc, false, &ogx);
        if (st == TN_OK && gw) st = tn_nnb_out_begin(gw, acc, false, &ogw);
        if (st == TN_OK && gb) st = tn_nnb_out_begin(gb, acc, false, &ogb);
        if (st == TN_OK) {
            /* evaluation: invstd = 1 / sqrt(running_var + eps) in the opmath type */
            for (int64_t c = 0; c < C; c++) {
                if (acc == TN_DTYPE_FLOAT32) {
                    float v = ((const float *)bv.data)[c];
                    ((float *)invstd)[c] = train ? v : 1.0f / sqrtf(v + (float)eps);
                } else {
                    double v = ((const double *)bv.data)[c];
                    ((double *)invstd)[c] = train ? v : 1.0 / sqrt(v + eps);
                }
            }
            norm_job j = {acc, (size_t)tn_dtype_itemsize(acc), ogx.data, ogw.data, ogb.data, bg.data, bx.data, bm.data,
                          invstd, bw.data, 0, 0, false, NULL, N, C, S, train};
            tn_parallel_for(C, TN_NNB_GRAIN / (N * S > 0 ? N * S : 1) + 1, bn_chunk, &j);
            if (gx) tn_nn_out_finish(gx, acc, &ogx);
            if (gw) tn_nn_out_finish(gw, acc, &ogw);
            if (gb) tn_nn_out_finish(gb, acc, &ogb);
        }
        free(invstd);
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&bm); tn_nn_buf_free(&bv);
        tn_nn_buf_free(&ogx); tn_nn_buf_free(&ogw); tn_nn_buf_free(&ogb);
    } else if (st == TN_OK && !tn_nnb_any_meta(5, all)) {
        if (gw) memset(tn_tensor_data(gw), 0, (size_t)C * (size_t)tn_dtype_itemsize(gw->dtype));
        if (gb) memset(tn_tensor_data(gb), 0, (size_t)C * (size_t)tn_dtype_itemsize(gb->dtype));
    }
    if (st != TN_OK) { tn_nnb_release3(gx, gw, gb); return st; }
    rets[0] = gx ? tn_value_tensor(gx) : tn_nnb_vnone();
    rets[1] = gw ? tn_value_tensor(gw) : tn_nnb_vnone();
    rets[2] = gb ? tn_value_tensor(gb) : tn_nnb_vnone();
    return TN_OK;
}

/* Splits input into rows [M, N] over the trailing normalized_shape. */
static tn_status norm_rows(const tn_tensor *x, const tn_value *ns, int64_t *M, int64_t *N, int *axis) {
    char b[256];
    if (ns->tag != TN_V_INTLIST || ns->u.ilist.n < 1 || ns->u.ilist.n > x->ndim)
        return tn_error(TN_ERR_RUNTIME, "Expected normalized_shape to be at least 1-dimensional and to match the "
                                        "trailing dimensions of input %s", TN_NN_FMT(x, b));
    int k = (int)ns->u.ilist.n;
    *axis = x->ndim - k;
    for (int i = 0; i < k; i++)
        if (ns->u.ilist.data[i] != x->sizes[*axis + i])
            return tn_error(TN_ERR_RUNTIME, "Given normalized_shape=[%lld...], expected input with shape [*, ...] "
                                            "matching it, but got input of size%s",
                            (long long)ns->u.ilist.data[0], TN_NN_FMT(x, b));
    *M = 1;
    *N = 1;
    for (int i = 0; i < *axis; i++) *M *= x->sizes[i];
    for (int i = *axis; i < x->ndim; i++) *N *= x->sizes[i];
    return TN_OK;
}

/* aten::native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight?,
 * bias?, output_mask[3]) -> (grad_input, grad_weight, grad_bias) */
tn_status tn_op_native_layer_norm_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *mean = args[3].u.t, *rstd = args[4].u.t;
    tn_tensor *w = tn_nn_opt_tensor(&args[5]), *bias = tn_nn_opt_tensor(&args[6]);
    int64_t M, N;
    int axis;
    TN_TRY(norm_rows(x, &args[2], &M, &N, &axis));
    TN_TRY(tn_nnb_check_same_shape(gy, x, "layer_norm_backward"));
    TN_TRY(tn_nnb_check_float(x, "LayerNormBackwardKernelImpl"));
    if (tn_tensor_numel(mean) != M || tn_tensor_numel(rstd) != M)
        return tn_error(TN_ERR_RUNTIME, "layer_norm_backward: expected mean and rstd of %lld elements", (long long)M);
    if ((w && tn_tensor_numel(w) != N) || (bias && tn_tensor_numel(bias) != N))
        return tn_error(TN_ERR_RUNTIME, "layer_norm_backward: expected weight and bias of %lld elements", (long long)N);
    const int64_t *nsz = x->sizes + axis;
    int nk = x->ndim - axis;
    tn_tensor *gx = NULL, *gw = NULL, *gb = NULL;
    tn_status st = TN_OK;
    if (tn_nnb_mask_at(&args[7], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && tn_nnb_mask_at(&args[7], 1) && w) st = tn_nn_empty(nk, nsz, w->dtype, x, &gw);
    if (st == TN_OK && tn_nnb_mask_at(&args[7], 2) && bias) st = tn_nn_empty(nk, nsz, bias->dtype, x, &gb);
    tn_tensor *all[5] = {gy, x, mean, rstd, w};
    if (st == TN_OK && !tn_nnb_any_meta(5, all) && (gx || gw || gb)) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bx = {0}, bw = {0}, bm = {0}, br = {0}, ogx = {0}, ogw = {0}, ogb = {0};
        double *scratch = malloc((size_t)(2 * N > 0 ? 2 * N : 1) * sizeof(double));
        if (!scratch) st = tn_error(TN_ERR_NO_MEMORY, "out of memory for layer_norm_backward");
        if (st == TN_OK) st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = tn_nnb_load_opt(w, acc, &bw);
        if (st == TN_OK) st = tn_nn_load(mean, acc, &bm);
        if (st == TN_OK) st = tn_nn_load(rstd, acc, &br);
        if (st == TN_OK && gx) st = tn_nnb_out_begin(gx, acc, false, &ogx);
        if (st == TN_OK && gw) st = tn_nnb_out_begin(gw, acc, false, &ogw);
        if (st == TN_OK && gb) st = tn_nnb_out_begin(gb, acc, false, &ogb);
        if (st == TN_OK) {
            norm_job j = {acc, (size_t)tn_dtype_itemsize(acc), ogx.data, ogw.data, ogb.data, bg.data, bx.data, bm.data,
                          br.data, bw.data, M, N, false, scratch, 0, 0, 0, false};
            norm_run(&j);
            if (gx) tn_nn_out_finish(gx, acc, &ogx);
            if (gw) tn_nn_out_finish(gw, acc, &ogw);
            if (gb) tn_nn_out_finish(gb, acc, &ogb);
        }
        free(scratch);
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&bm); tn_nn_buf_free(&br);
        tn_nn_buf_free(&ogx); tn_nn_buf_free(&ogw); tn_nn_buf_free(&ogb);
    }
    if (st != TN_OK) { tn_nnb_release3(gx, gw, gb); return st; }
    rets[0] = gx ? tn_value_tensor(gx) : tn_nnb_vnone();
    rets[1] = gw ? tn_value_tensor(gw) : tn_nnb_vnone();
    rets[2] = gb ? tn_value_tensor(gb) : tn_nnb_vnone();
    return TN_OK;
}

/* aten::native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C, HxW, group,
 * output_mask[3]) -> (grad_input, grad_weight, grad_bias) */
tn_status tn_op_native_group_norm_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *mean = args[2].u.t, *rstd = args[3].u.t;
    tn_tensor *w = tn_nn_opt_tensor(&args[4]);
    int64_t N = args[5].u.i, C = args[6].u.i, HxW = args[7].u.i, G = args[8].u.i;
    TN_TRY(tn_nnb_check_same_shape(gy, x, "native_group_norm_backward"));
    TN_TRY(tn_nnb_check_float(x, "GroupNormBackwardKernelImpl"));
    if (G <= 0 || C % G != 0)
        return tn_error(TN_ERR_RUNTIME, "Expected number of channels in input to be divisible by num_groups, but got "
                                        "input of shape with %lld channels and num_groups=%lld", (long long)C, (long long)G);
    const int64_t NCHW = tn_mul_wrap(tn_mul_wrap(N, C), HxW), NG = tn_mul_wrap(N, G);
    if (NCHW != tn_tensor_numel(x))
        return tn_error(TN_ERR_RUNTIME, "Expected input to have N * C * HxW = %lld elements, but got %lld",
                        (long long)NCHW, (long long)tn_tensor_numel(x));
    if (tn_tensor_numel(mean) != NG || tn_tensor_numel(rstd) != NG)
        return tn_error(TN_ERR_RUNTIME, "Expected mean and rstd to have N * group = %lld elements", (long long)NG);
    if (w && tn_tensor_numel(w) != C)
        return tn_error(TN_ERR_RUNTIME, "Expected weight to be a vector of size equal to the number of channels in "
                                        "input, but got weight of shape [%lld] and input of shape with %lld channels",
                        (long long)tn_tensor_numel(w), (long long)C);
    tn_dtype pdt = w ? w->dtype : x->dtype;
    tn_tensor *gx = NULL, *gw = NULL, *gb = NULL;
    tn_status st = TN_OK;
    if (tn_nnb_mask_at(&args[9], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && tn_nnb_mask_at(&args[9], 1)) st = tn_nn_empty(1, &C, pdt, x, &gw);
    if (st == TN_OK && tn_nnb_mask_at(&args[9], 2)) st = tn_nn_empty(1, &C, pdt, x, &gb);
    tn_tensor *all[5] = {gy, x, mean, rstd, w};
    if (st == TN_OK && !tn_nnb_any_meta(5, all) && NCHW == 0) {
        tn_nnb_zero_tensor(gw);
        tn_nnb_zero_tensor(gb);
    } else if (st == TN_OK && !tn_nnb_any_meta(5, all) && (gx || gw || gb)) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bx = {0}, bw = {0}, bm = {0}, br = {0}, ogx = {0}, ogw = {0}, ogb = {0};
        double *scratch = malloc((size_t)(2 * N * C) * sizeof(double));
        if (!scratch) st = tn_error(TN_ERR_NO_MEMORY, "out of memory for native_group_norm_backward");
        if (st == TN_OK) st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = tn_nnb_load_opt(w, acc, &bw);
        if (st == TN_OK) st = tn_nn_load(mean, acc, &bm);
        if (st == TN_OK) st = tn_nn_load(rstd, acc, &br);
        if (st == TN_OK && gx) st = tn_nnb_out_begin(gx, acc, false, &ogx);
        if (st == TN_OK && gw) st = tn_nnb_out_begin(gw, acc, false, &ogw);
        if (st == TN_OK && gb) st = tn_nnb_out_begin(gb, acc, false, &ogb);
        if (st == TN_OK) {
            NN_KERNEL(acc, group_norm_backward, ogx.data, ogw.data, ogb.data, bg.data, bx.data, bm.data, br.data, bw.data,
                      N, C, HxW, G, scratch);
            if (gx) tn_nn_out_finish(gx, acc, &ogx);
            if (gw) tn_nn_out_finish(gw, acc, &ogw);
            if (gb) tn_nn_out_finish(gb, acc, &ogb);
        }
        free(scratch);
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&bm); tn_nn_buf_free(&br);
        tn_nn_buf_free(&ogx); tn_nn_buf_free(&ogw); tn_nn_buf_free(&ogb);
    }
    if (st != TN_OK) { tn_nnb_release3(gx, gw, gb); return st; }
    rets[0] = gx ? tn_value_tensor(gx) : tn_nnb_vnone();
    rets[1] = gw ? tn_value_tensor(gw) : tn_nnb_vnone();
    rets[2] = gb ? tn_value_tensor(gb) : tn_nnb_vnone();
    return TN_OK;
}

/* aten::_fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight?,
 * output_mask[2]) -> (grad_input, grad_weight) */
tn_status tn_op__fused_rms_norm_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *rstd = args[3].u.t, *w = tn_nn_opt_tensor(&args[4]);
    int64_t M, N;
    int axis;
    TN_TRY(norm_rows(x, &args[2], &M, &N, &axis));
    TN_TRY(tn_nnb_check_same_shape(gy, x, "_fused_rms_norm_backward"));
    TN_TRY(tn_nnb_check_float(x, "_fused_rms_norm_backward"));
    if (tn_tensor_numel(rstd) != M)
        return tn_error(TN_ERR_RUNTIME, "_fused_rms_norm_backward: expected rstd of %lld elements", (long long)M);
    if (w && tn_tensor_numel(w) != N)
        return tn_error(TN_ERR_RUNTIME, "_fused_rms_norm_backward: expected weight of %lld elements", (long long)N);
    tn_tensor *gx = NULL, *gw = NULL;
    tn_status st = TN_OK;
    if (tn_nnb_mask_at(&args[5], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && tn_nnb_mask_at(&args[5], 1) && w) st = tn_nn_empty(x->ndim - axis, x->sizes + axis, w->dtype, x, &gw);
    tn_tensor *all[4] = {gy, x, rstd, w};
    if (st == TN_OK && !tn_nnb_any_meta(4, all) && (gx || gw)) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bx = {0}, bw = {0}, br = {0}, ogx = {0}, ogw = {0};
        double *scratch = malloc((size_t)(N > 0 ? N : 1) * sizeof(double));
        if (!scratch) st = tn_error(TN_ERR_NO_MEMORY, "out of memory for _fused_rms_norm_backward");
        if (st == TN_OK) st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = tn_nnb_load_opt(w, acc, &bw);
        if (st == TN_OK) st = tn_nn_load(rstd, acc, &br);
        if (st == TN_OK && gx) st = tn_nnb_out_begin(gx, acc, false, &ogx);
        if (st == TN_OK && gw) st = tn_nnb_out_begin(gw, acc, false, &ogw);
        if (st == TN_OK) {
            norm_job j = {acc, (size_t)tn_dtype_itemsize(acc), ogx.data, ogw.data, NULL, bg.data, bx.data, NULL, br.data,
                          bw.data, M, N, true, scratch, 0, 0, 0, false};
            norm_run(&j);
            if (gx) tn_nn_out_finish(gx, acc, &ogx);
            if (gw) tn_nn_out_finish(gw, acc, &ogw);
        }
        free(scratch);
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&br);
        tn_nn_buf_free(&ogx); tn_nn_buf_free(&ogw);
    }
    if (st != TN_OK) { tn_nnb_release3(gx, gw, NULL); return st; }
    rets[0] = gx ? tn_value_tensor(gx) : tn_nnb_vnone();
    rets[1] = gw ? tn_value_tensor(gw) : tn_nnb_vnone();
    return TN_OK;
}

/* ================================ softmax ============================================== */

/* Rows of a softmax gradient are independent: split the outer dimension over the pool. */
typedef struct softmax_job {
    tn_dtype acc;
    size_t isz;
    char *gx;
    const char *gy, *y;
    int64_t D, inner;
    bool log;
} softmax_job;

static void softmax_chunk(void *vj, int64_t o0, int64_t o1) {
    const softmax_job *j = vj;
    size_t off = (size_t)(o0 * j->D * j->inner) * j->isz;
    if (j->acc == TN_DTYPE_FLOAT32 && j->inner == 1)
        tn_softmax_backward_rows_f32((float *)(void *)(j->gx + off), (const float *)(const void *)(j->gy + off),
                                     (const float *)(const void *)(j->y + off), o1 - o0, j->D, j->log);
    else
        NN_KERNEL(j->acc, softmax_backward, (void *)(j->gx + off), (const void *)(j->gy + off),
                  (const void *)(j->y + off), o1 - o0, j->D, j->inner, j->log);
}

static tn_status softmax_backward(const tn_value *args, tn_value *rets, bool log) {
    tn_tensor *gy = args[0].u.t, *y = args[1].u.t;
    tn_dtype in_dt = args[3].u.dtype;
    int dim;
    TN_TRY(tn_wrap_dim(args[2].u.i, y->ndim, &dim));
    if (!tn_nnb_same_sizes(gy, y)) {
        char b1[256], b2[256];
        return tn_error(TN_ERR_RUNTIME, "grad_output %s and output %s must have the same shape", TN_NN_FMT(gy, b1),
                        TN_NN_FMT(y, b2));
    }
    /* upstream's CPU meta function: a grad dtype other than input_dtype is accepted and the
     * result takes the grad's dtype, except float grad with a Half input_dtype, whose Half
     * result the kernel then refuses */
    if (gy->dtype != in_dt && gy->dtype == TN_DTYPE_FLOAT32 && in_dt == TN_DTYPE_FLOAT16)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type Float but found Half");
    if (y->dtype != gy->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected output and grad_output to have the same dtype, but got %s and %s",
                        tn_nnb_dname(y->dtype), tn_nnb_dname(gy->dtype));
    TN_TRY(tn_nnb_check_float(gy, log ? "log_softmax_backward_lastdim" : "softmax_backward_lastdim"));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(gy->ndim, gy->sizes, gy->dtype, gy, &gx));
    if (!tn_tensor_is_meta(gy) && !tn_tensor_is_meta(y) && tn_tensor_numel(gx) > 0) {
        int64_t outer = 1, D = y->ndim ? y->sizes[dim] : 1, inner = 1;
        for (int i = 0; i < dim; i++) outer *= y->sizes[i];
        for (int i = dim + 1; i < y->ndim; i++) inner *= y->sizes[i];
        tn_dtype acc = tn_nn_acc(gy->dtype);
        tn_nn_buf bg = {0}, by = {0}, ob = {0};
        tn_status st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(y, acc, &by);
        if (st == TN_OK) st = tn_nnb_out_begin(gx, acc, false, &ob);
        if (st == TN_OK) {
            softmax_job j = {acc, (size_t)tn_dtype_itemsize(acc), ob.data, bg.data, by.data, D, inner, log};
            tn_parallel_for(outer, TN_NNB_GRAIN / (D * inner > 0 ? D * inner : 1) + 1, softmax_chunk, &j);
            tn_nn_out_finish(gx, acc, &ob);
        }
        tn_nn_buf_free(&bg); tn_nn_buf_free(&by); tn_nn_buf_free(&ob);
        if (st != TN_OK) { tn_tensor_release(gx); return st; }
    }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* aten::_softmax_backward_data(grad_output, output, dim, input_dtype) -> Tensor */
tn_status tn_op__softmax_backward_data(const tn_value *args, tn_value *rets) { return softmax_backward(args, rets, false); }
/* aten::_log_softmax_backward_data(grad_output, output, dim, input_dtype) -> Tensor */
tn_status tn_op__log_softmax_backward_data(const tn_value *args, tn_value *rets) { return softmax_backward(args, rets, true); }

/* ================================ NLL loss ============================================= */

/* Shared body of nll_loss_backward (input [N, C] or [C], S = 1) and nll_loss2d_backward
 * (input [N, C, H, W], S = H*W). */
static tn_status nll_backward(const tn_value *args, tn_value *rets, bool two_d) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *target = args[2].u.t, *w = tn_nn_opt_tensor(&args[3]);
    int64_t reduction = args[4].u.i, ignore = args[5].u.i;
    tn_tensor *tw = args[6].u.t;
    char b1[256], b2[256];
    int64_t N, C, S;
    if (!two_d) {
        if (x->ndim < 1 || x->ndim > 2) return tn_error(TN_ERR_RUNTIME, "input tensor should be 1D or 2D");
        if (target->ndim > 1)
            return tn_error(TN_ERR_RUNTIME, "0D or 1D target tensor expected, multi-target not supported");
        N = x->ndim == 2 ? x->sizes[0] : 1;
        C = x->sizes[x->ndim - 1];
        S = 1;
        if ((x->ndim == 2 && (target->ndim != 1 || target->sizes[0] != N)) || (x->ndim == 1 && tn_tensor_numel(target) != 1))
            return tn_error(TN_ERR_RUNTIME, "size mismatch (got input: %s, target: %s)", TN_NN_FMT(x, b1),
                            TN_NN_FMT(target, b2));
    } else {
        if (target->ndim != 3)
            return tn_error(TN_ERR_RUNTIME, "only batches of spatial targets supported (3D tensors) but got targets of "
                                            "size: : %s", TN_NN_FMT(target, b1));
        if (x->ndim != 4)
            return tn_error(TN_ERR_RUNTIME, "only batches of spatial inputs supported (4D tensors), but got input of "
                                            "size: %s", TN_NN_FMT(x, b1));
        if (x->sizes[0] != target->sizes[0] || x->sizes[2] != target->sizes[1] || x->sizes[3] != target->sizes[2])
            return tn_error(TN_ERR_RUNTIME, "size mismatch (got input: %s , target: %s", TN_NN_FMT(x, b1),
                            TN_NN_FMT(target, b2));
        N = x->sizes[0];
        C = x->sizes[1];
        S = x->sizes[2] * x->sizes[3];
    }
    if (reduction < 0 || reduction > 2) return tn_error(TN_ERR_VALUE, "%lld is not a valid value for reduction", (long long)reduction);
    if (tn_tensor_numel(tw) != 1)
        return tn_error(TN_ERR_RUNTIME, "expected total_weight to be a single element tensor, got: %s (%lld elements)",
                        TN_NN_FMT(tw, b1), (long long)tn_tensor_numel(tw));
    if (w && tn_tensor_numel(w) != C)
        return tn_error(TN_ERR_RUNTIME, "weight tensor should be defined either for all %lld classes or no classes but "
                                        "got weight tensor of shape: %s", (long long)C, TN_NN_FMT(w, b1));
    bool per_sample = reduction == 0 && (two_d || x->ndim == 2);
    if (per_sample) {
        bool ok = two_d ? tn_nnb_same_sizes(gy, target) : (gy->ndim == 1 && gy->sizes[0] == N);
        if (!ok)
            return tn_error(TN_ERR_RUNTIME, "Expected a tensor of size %s but got %s", TN_NN_FMT(target, b1),
                            TN_NN_FMT(gy, b2));
    } else if (tn_tensor_numel(gy) != 1 || gy->ndim > 1) {
        return tn_error(TN_ERR_RUNTIME, "Expected a single element grad_output tensor, but got: %s", TN_NN_FMT(gy, b1));
    }
    if (target->dtype != TN_DTYPE_INT64 && target->dtype != TN_DTYPE_UINT8)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type Long but found %s", tn_nnb_dname(target->dtype));
    TN_TRY(tn_nnb_check_float(x, two_d ? "nll_loss2d_backward_out_frame" : "nll_loss_backward_out_frame"));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx));
    tn_tensor *all[5] = {gy, x, target, w, tw};
    if (!tn_nnb_any_meta(5, all) && tn_tensor_numel(gx) > 0) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bt = {0}, bw = {0}, btw = {0}, ob = {0};
        tn_status st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load_index(target, &bt);
        if (st == TN_OK) st = tn_nnb_load_opt(w, acc, &bw);
        if (st == TN_OK) st = tn_nn_load(tw, acc, &btw);
        if (st == TN_OK) {
            const int64_t *tv = bt.data;
            for (int64_t i = 0; i < N * S; i++)
                if (tv[i] != ignore && (tv[i] < 0 || tv[i] >= C)) {
                    st = tn_error(TN_ERR_INDEX, "Target %lld is out of bounds.", (long long)tv[i]);
                    break;
                }
        }
        if (st == TN_OK) st = tn_nnb_out_begin(gx, acc, false, &ob);
        if (st == TN_OK) {
            if (acc == TN_DTYPE_FLOAT32)
                f32_nll_loss_backward__scalar(ob.data, bg.data, per_sample, bt.data, bw.data, N, C, S, ignore,
                                              reduction == 1, ((const float *)btw.data)[0]);
            else
                f64_nll_loss_backward__scalar(ob.data, bg.data, per_sample, bt.data, bw.data, N, C, S, ignore,
                                              reduction == 1, ((const double *)btw.data)[0]);
            tn_nn_out_finish(gx, acc, &ob);
        }
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bt); tn_nn_buf_free(&bw); tn_nn_buf_free(&btw); tn_nn_buf_free(&ob);
        if (st != TN_OK) { tn_tensor_release(gx); return st; }
    }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* aten::nll_loss_backward(grad_output, self, target, weight?, reduction, ignore_index,
 * total_weight) -> Tensor */
tn_status tn_op_nll_loss_backward(const tn_value *args, tn_value *rets) { return nll_backward(args, rets, false); }
/* aten::nll_loss2d_backward(grad_output, self, target, weight?, reduction, ignore_index,
 * total_weight) -> Tensor */
tn_status tn_op_nll_loss2d_backward(const tn_value *args, tn_value *rets) { return nll_backward(args, rets, true); }

/* ================================ embedding, GLU ======================================= */

/* aten::embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
 * scale_grad_by_freq) -> Tensor [num_weights, D] */
tn_status tn_op_embedding_dense_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *idx = args[1].u.t;
    int64_t nw = args[2].u.i, pad = args[3].u.i;
    bool scale = args[4].u.b;
    char b1[256], b2[256];
    if (idx->dtype != TN_DTYPE_INT64 && idx->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_RUNTIME, "Expected tensor for argument #1 'indices' to have one of the following scalar "
                                        "types: Long, Int; but got %s instead", tn_nnb_dname(idx->dtype));
    int64_t n = tn_tensor_numel(idx), D = gy->ndim ? gy->sizes[gy->ndim - 1] : 1;
    bool ok = gy->ndim == idx->ndim + 1;
    for (int i = 0; ok && i < idx->ndim; i++) ok = gy->sizes[i] == idx->sizes[i];
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "embedding_dense_backward: grad_output %s does not match indices %s plus the "
                                        "embedding dimension", TN_NN_FMT(gy, b1), TN_NN_FMT(idx, b2));
    if (nw < 0) return tn_error(TN_ERR_RUNTIME, "embedding_dense_backward: num_weights must be non-negative");
    TN_TRY(tn_nnb_check_float(gy, "embedding_dense_backward_cpu"));
    int64_t sz[2] = {nw, D};
    tn_tensor *gw;
    TN_TRY(tn_nn_empty(2, sz, gy->dtype, gy, &gw));
    if (!tn_tensor_is_meta(gy) && !tn_tensor_is_meta(idx) && tn_tensor_numel(gw) > 0) {
        tn_dtype acc = tn_nn_acc(gy->dtype);
        tn_nn_buf bg = {0}, bi = {0}, ob = {0};
        int64_t *counts = NULL;
        tn_status st = tn_nn_load_index(idx, &bi);
        if (st == TN_OK) {
            /* Upstream skips indices outside [0, num_weights) without an error (its row
             * ranges never contain them); the kernel needs them gone: mark them as padding. */
            int64_t *iv = bi.data;
            bool bad = false;
            for (int64_t i = 0; i < n; i++) bad |= iv[i] < 0 || iv[i] >= nw;
            if (bad) {
                if (!bi.owned) {
                    int64_t *copy = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
                    if (!copy) st = tn_error(TN_ERR_NO_MEMORY, "out of memory for embedding_dense_backward");
                    else { memcpy(copy, iv, (size_t)n * sizeof(int64_t)); bi.data = iv = copy; bi.owned = true; }
                }
                if (st == TN_OK) {
                    if (pad >= 0 && pad < nw) {
                        for (int64_t i = 0; i < n; i++) if (iv[i] < 0 || iv[i] >= nw) iv[i] = pad;
                    } else {
                        pad = -1;
                        for (int64_t i = 0; i < n; i++) if (iv[i] < 0 || iv[i] >= nw) iv[i] = -1;
                    }
                }
            }
        }
        if (st == TN_OK && scale) {
            counts = calloc((size_t)(nw > 0 ? nw : 1), sizeof(int64_t));
            if (!counts) st = tn_error(TN_ERR_NO_MEMORY, "out of memory for embedding_dense_backward");
            else
                for (int64_t i = 0; i < n; i++) {
                    int64_t k = ((const int64_t *)bi.data)[i];
                    if (k >= 0 && k != pad) counts[k]++;
                }
        }
        if (st == TN_OK) st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nnb_out_begin(gw, acc, true, &ob);
        if (st == TN_OK) {
            NN_KERNEL(acc, embedding_backward, ob.data, bg.data, bi.data, n, D, pad, counts);
            tn_nn_out_finish(gw, acc, &ob);
        }
        free(counts);
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bi); tn_nn_buf_free(&ob);
        if (st != TN_OK) { tn_tensor_release(gw); return st; }
    } else if (!tn_tensor_is_meta(gy)) {
        tn_nnb_zero_tensor(gw);
    }
    rets[0] = tn_value_tensor(gw);
    return TN_OK;
}

/* glu_backward's argument checks in upstream's order; *egy = grad_output expanded to a half
 * of self (upstream's iterator broadcasts it), *dim_out = the halved dim. */
static tn_status glu_backward_check(tn_tensor *gy, tn_tensor *x, int64_t d, tn_tensor **egy, int *dim_out) {
    char b1[256], b2[256];
    if (x->ndim == 0) return tn_error(TN_ERR_RUNTIME, "glu does not support scalars because halving size must be even");
    int dim;
    TN_TRY(tn_wrap_dim(d, x->ndim, &dim));
    if (x->sizes[dim] % 2 != 0)
        return tn_error(TN_ERR_RUNTIME, "Halving dimension must be even, but dimension %d is size %lld", dim,
                        (long long)x->sizes[dim]);
    int64_t hs[TN_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) hs[i] = i == dim ? x->sizes[i] / 2 : x->sizes[i];
    if (tn_shape_expand_view(gy, x->ndim, hs, egy) != TN_OK)
        return tn_error(TN_ERR_RUNTIME, "glu_backward: grad_output %s does not broadcast to input %s halved at dimension %d",
                        TN_NN_FMT(gy, b1), TN_NN_FMT(x, b2), dim);
    *dim_out = dim;
    return TN_OK;
}

/* aten::glu_backward.grad_input: upstream's iterator runs over grad_input's halves, self's
 * first half and grad_output with one dtype, grad_input's ("Found dtype Float but expected
 * BFloat16" names the first operand that differs); the rest is the derived out=. */
tn_status tn_op_glu_backward_grad_input(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *out = args[3].u.t, *egy = NULL;
    int dim;
    TN_TRY(glu_backward_check(gy, x, args[2].u.i, &egy, &dim));
    tn_tensor_release(egy);
    tn_dtype found = x->dtype != out->dtype ? x->dtype : gy->dtype;
    if (found != out->dtype)
        return tn_error(TN_ERR_RUNTIME, "Found dtype %s but expected %s", tn_nnb_dname(found), tn_nnb_dname(out->dtype));
    return tn_dispatch_derived(TN_OP_glu_backward_grad_input, args, rets);
}

/* aten::glu_backward(grad_output, self, dim) -> Tensor */
tn_status tn_op_glu_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *egy = NULL;
    int dim;
    TN_TRY(glu_backward_check(gy, x, args[2].u.i, &egy, &dim));
    gy = egy;
    tn_tensor *gx;
    /* one dtype, no promotion: upstream's iterator expects its output's (self's) dtype,
     * "Found dtype Double but expected Float" for a double grad_output */
    tn_status cst = gy->dtype == x->dtype ? TN_OK
                                          : tn_error(TN_ERR_RUNTIME, "Found dtype %s but expected %s",
                                                     tn_nnb_dname(gy->dtype), tn_nnb_dname(x->dtype));
    if (cst == TN_OK) cst = tn_nnb_check_float(x, "glu_backward_cpu");
    if (cst == TN_OK) cst = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (cst != TN_OK) { tn_tensor_release(egy); return cst; }
    if (!tn_tensor_is_meta(gy) && !tn_tensor_is_meta(x) && tn_tensor_numel(gx) > 0) {
        int64_t outer = 1, half = x->sizes[dim] / 2, inner = 1;
        for (int i = 0; i < dim; i++) outer *= x->sizes[i];
        for (int i = dim + 1; i < x->ndim; i++) inner *= x->sizes[i];
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bx = {0}, ob = {0};
        tn_status st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = tn_nnb_out_begin(gx, acc, false, &ob);
        if (st == TN_OK) {
            NN_KERNEL(acc, glu_backward, ob.data, bg.data, bx.data, outer, half, inner);
            tn_nn_out_finish(gx, acc, &ob);
        }
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bx); tn_nn_buf_free(&ob);
        if (st != TN_OK) { tn_tensor_release(gx); tn_tensor_release(egy); return st; }
    }
    tn_tensor_release(egy);
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* Reflection / replication padding gradient of the last 1 or 2 dims. */
static tn_status pad_backward(const tn_value *args, tn_value *rets, int nsp, bool reflect) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t;
    const tn_value *pv = &args[2];
    char b1[256], b2[256];
    /* upstream's reflection backward reads the first 2*nsp entries and ignores the rest;
     * replication's checks the count */
    if (pv->tag != TN_V_INTLIST || (reflect ? pv->u.ilist.n < 2 * nsp : pv->u.ilist.n != 2 * nsp))
        return tn_error(TN_ERR_RUNTIME, "padding size is expected to be %d", 2 * nsp);
    const int64_t *pd = pv->u.ilist.data;
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other "
                                        "non-zero dimensions for input, but got: %s", nsp + 1, nsp + 2, TN_NN_FMT(x, b1));
    /* a negative pad crops: the kernel's source index (o - pad, reflected past either end)
     * is upstream's for negative pads too, for replication and reflection alike */
    int64_t pl = pd[0], pr = pd[1], pt = nsp == 2 ? pd[2] : 0, pb = nsp == 2 ? pd[3] : 0;
    int64_t W = x->sizes[x->ndim - 1], H = nsp == 2 ? x->sizes[x->ndim - 2] : 1, P = 1;
    for (int i = 0; i < x->ndim - nsp; i++) P *= x->sizes[i];
    if (reflect && (pl >= W || pr >= W || (nsp == 2 && (pt >= H || pb >= H))))
        return tn_error(TN_ERR_RUNTIME, "Argument #4: Padding size should be less than the corresponding input "
                                        "dimension, but got: padding (%lld, %lld) at dimension %d of input %s",
                        (long long)pl, (long long)pr, x->ndim - 1, TN_NN_FMT(x, b1));
    bool ok = gy->ndim == x->ndim;
    for (int i = 0; ok && i < x->ndim; i++) {
        int64_t e = x->sizes[i];
        if (i == x->ndim - 1) e = tn_add_wrap(tn_add_wrap(W, pl), pr); /* upstream's int64 wrap */
        else if (nsp == 2 && i == x->ndim - 2) e = tn_add_wrap(tn_add_wrap(H, pt), pb);
        ok = gy->sizes[i] == e;
    }
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "gradOutput %s does not match the padded input %s", TN_NN_FMT(gy, b1),
                        TN_NN_FMT(x, b2));
    if (gy->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `gradOutput` but got dtype %s", tn_nnb_dname(x->dtype),
                        tn_nnb_dname(gy->dtype));
    if (tn_dtype_is_complex(x->dtype)) { /* the gradient's real and imaginary parts alike */
        tn_op_id op = reflect ? (nsp == 1 ? TN_OP_reflection_pad1d_backward : TN_OP_reflection_pad2d_backward)
                              : (nsp == 1 ? TN_OP_replication_pad1d_backward : TN_OP_replication_pad2d_backward);
        tn_cx c = {0};
        tn_tensor *xr = tn_cx_call(&c, TN_OP_real, TN_ARGS(TN_T(x)));
        tn_tensor *re = tn_cx_call(&c, op, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_real, TN_ARGS(TN_T(gy)))), TN_T(xr), *pv));
        tn_tensor *im = tn_cx_call(&c, op, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_imag, TN_ARGS(TN_T(gy)))), TN_T(xr), *pv));
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_complex, TN_ARGS(TN_T(re), TN_T(im))), rets);
    }
    TN_TRY(tn_nnb_check_float(x, reflect ? "reflection_pad2d_backward_cpu" : "replication_pad2d_backward_cpu"));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx));
    if (!tn_tensor_is_meta(gy) && !tn_tensor_is_meta(x) && tn_tensor_numel(gx) > 0) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, ob = {0};
        tn_status st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nnb_out_begin(gx, acc, true, &ob);
        if (st == TN_OK) {
            NN_KERNEL(acc, pad2d_backward, ob.data, bg.data, P, H, W, pt, pb, pl, pr, reflect);
            tn_nn_out_finish(gx, acc, &ob);
        }
        tn_nn_buf_free(&bg); tn_nn_buf_free(&ob);
        if (st != TN_OK) { tn_tensor_release(gx); return st; }
    }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* aten::reflection_pad1d_backward(grad_output, self, padding[2]) -> Tensor */
tn_status tn_op_reflection_pad1d_backward(const tn_value *args, tn_value *rets) { return pad_backward(args, rets, 1, true); }
/* aten::reflection_pad2d_backward(grad_output, self, padding[4]) -> Tensor */
tn_status tn_op_reflection_pad2d_backward(const tn_value *args, tn_value *rets) { return pad_backward(args, rets, 2, true); }
/* aten::replication_pad1d_backward(grad_output, self, padding[2]) -> Tensor */
tn_status tn_op_replication_pad1d_backward(const tn_value *args, tn_value *rets) { return pad_backward(args, rets, 1, false); }
/* aten::replication_pad2d_backward(grad_output, self, padding[4]) -> Tensor */
tn_status tn_op_replication_pad2d_backward(const tn_value *args, tn_value *rets) { return pad_backward(args, rets, 2, false); }
