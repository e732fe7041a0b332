/* nn_conv3d.c — 3-d convolution (forward, transposed forward, convolution_backward) and
 * the integer transposed convolution of 1 to 3 spatial dims: argument checks and shapes as
 * upstream's, then per image and group an im2col / col2im of kernels/nn_conv3d.h around
 * one GEMM (tn_nnb_gemm), in the opmath dtype; integer inputs take the direct loop, as
 * upstream's slow paths. The 1-d and 2-d float paths stay in nn_conv.c and
 * nn_backward_conv.c, which hand 3-d (and integer transposed) work here. */
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/nn_conv3d.h"
#include "ops/complex_parts.h"
#include "ops/nn_backward_internal.h"

/* A convolution's geometry with every spatial array in 3-d form (leading 1s for 1-d/2-d). */
typedef struct conv3 {
    int nsp;
    bool transposed;
    int64_t N, C, O, G;     /* input channels C, output channels O */
    int64_t in[3], out[3];  /* input and output spatial extents */
    int64_t k[3], s[3], p[3], d[3], op[3];
    float (*rd)(float);     /* transposed Half / BFloat16 on upstream's slow path: rounds its columns,
                             * its col2vol sums and the bias sum to the dtype (NULL: one rounding;
                             * tn_nn_convt_rounding) */
} conv3;

static int64_t vol(const int64_t v[3]) { return v[0] * v[1] * v[2]; }

/* An int[] argument of nsp entries (one value broadcasts) into 3-d form. */
static tn_status arg3(const tn_value *v, int nsp, const char *what, int64_t dflt, int64_t out[3]) {
    int64_t tmp[3] = {dflt, dflt, dflt};
    if (!tn_nn_int_list(v, nsp, tmp))
        return tn_error(TN_ERR_RUNTIME, "expected %s to be a single integer value or a list of %d values to match "
                                        "the convolution dimensions, but got %s=[%lld...]", what, nsp, what,
                        v->tag == TN_V_INTLIST && v->u.ilist.n ? (long long)v->u.ilist.data[0] : 0LL);
    for (int i = 0; i < 3; i++) out[i] = i < 3 - nsp ? dflt : tmp[i - (3 - nsp)];
    return TN_OK;
}

static void spatial3(const tn_tensor *t, int nsp, int64_t out[3]) {
    for (int i = 0; i < 3; i++) out[i] = i < 3 - nsp ? 1 : t->sizes[2 + i - (3 - nsp)];
}

static tn_status check_params(const conv3 *q) {
    for (int i = 0; i < 3; i++) {
        if (q->s[i] <= 0) return tn_error(TN_ERR_RUNTIME, "non-positive stride is not supported");
        if (q->p[i] < 0) return tn_error(TN_ERR_RUNTIME, "negative padding is not supported");
        if (q->transposed && q->op[i] < 0) return tn_error(TN_ERR_RUNTIME, "negative output_padding is not supported");
        if (q->d[i] <= 0) return tn_error(TN_ERR_RUNTIME, "dilation should be greater than zero");
    }
    if (q->G <= 0) return tn_error(TN_ERR_RUNTIME, "non-positive groups is not supported");
    return TN_OK;
}

/* ---- the column machinery, threaded over channels ----------------------------------------- */

typedef struct col_job {
    tn_dtype acc;
    bool to_image;
    float (*rd)(float); /* col2im's sums rounded by it (float only), or NULL */
    void *img, *col;
    int64_t ld;
    const tn_conv3d_geom *g;
} col_job;

static void col_chunk(void *vj, int64_t c0, int64_t c1) {
    const col_job *j = vj;
    if (j->to_image) {
        if (j->rd) f32_col2im3d_rounded__scalar(j->img, j->col, j->ld, j->g, c0, c1, j->rd);
        else if (j->acc == TN_DTYPE_FLOAT32) f32_col2im3d__scalar(j->img, j->col, j->ld, j->g, c0, c1);
        else f64_col2im3d__scalar(j->img, j->col, j->ld, j->g, c0, c1);
    } else {
        if (j->acc == TN_DTYPE_FLOAT32) f32_im2col3d__scalar(j->col, j->ld, j->img, j->g, c0, c1);
        else f64_im2col3d__scalar(j->col, j->ld, j->img, j->g, c0, c1);
    }
}

/* im2col (to_image false) or col2im (true, accumulating) of C channels of one image */
static void columns(tn_dtype acc, const tn_conv3d_geom *g, int64_t C, void *img, void *col, bool to_image,
                    float (*rd)(float)) {
    col_job j = {acc, to_image, rd, img, col, vol(g->cols), g};
    int64_t per = vol(g->k) * vol(g->cols);
    tn_parallel_for(C, per > 0 && per < TN_NNB_GRAIN ? TN_NNB_GRAIN / per : 1, col_chunk, &j);
}

/* The im2col geometry: the image is the input (or, transposed, the output) */
static tn_conv3d_geom geom_of(const conv3 *q) {
    tn_conv3d_geom g;
    for (int i = 0; i < 3; i++) {
        g.img[i] = q->transposed ? q->out[i] : q->in[i];
        g.cols[i] = q->transposed ? q->in[i] : q->out[i];
        g.k[i] = q->k[i]; g.s[i] = q->s[i]; g.p[i] = q->p[i]; g.d[i] = q->d[i];
    }
    return g;
}

static void add_bias(tn_dtype acc, void *y, const void *bias, int64_t N, int64_t O, int64_t P, float (*rd)(float)) {
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++) {
            if (acc == TN_DTYPE_FLOAT32) {
                float b = ((const float *)bias)[o], *d = (float *)y + (n * O + o) * P;
                if (rd)
                    for (int64_t j = 0; j < P; j++) d[j] = rd(d[j] + b);
                else
                    for (int64_t j = 0; j < P; j++) d[j] += b;
            } else {
                double b = ((const double *)bias)[o], *d = (double *)y + (n * O + o) * P;
                for (int64_t j = 0; j < P; j++) d[j] += b;
            }
        }
}

/* Forward on acc buffers: x [N, C, in], w, bias or NULL, y [N, O, out] (written). */
static tn_status forward_acc(tn_dtype acc, const conv3 *q, void *x, const void *w, const void *bias, void *y) {
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    tn_conv3d_geom g = geom_of(q);
    int64_t G = q->G, kv = vol(q->k), IN = vol(q->in), OUT = vol(q->out);
    int64_t Cg = q->C / G, Og = q->O / G;
    /* not transposed: col [Cg kv, OUT], y_g = W_g [Og, Cg kv] col; transposed: col
     * [Og kv, IN] = W_gᵀ x_g, scattered into y_g by col2im */
    int64_t K = q->transposed ? Og * kv : Cg * kv, L = q->transposed ? IN : OUT;
    void *col = NULL;
    bool own = false;
    TN_TRY(tn_nnb_conv_buf(acc, K * L, TN_SCRATCH_CONV_COL, &col, &own));
    if (q->transposed) memset(y, 0, (size_t)(q->N * q->O * OUT) * isz);
    tn_status st = TN_OK;
    for (int64_t n = 0; n < q->N && st == TN_OK; n++)
        for (int64_t gi = 0; gi < G && st == TN_OK; gi++) {
            char *xg = (char *)x + (size_t)((n * q->C + gi * Cg) * IN) * isz;
            char *yg = (char *)y + (size_t)((n * q->O + gi * Og) * OUT) * isz;
            if (!q->transposed) {
                columns(acc, &g, Cg, xg, col, false, NULL);
                st = tn_nnb_gemm(acc, Og, OUT, K, (const char *)w + (size_t)(gi * Og * K) * isz, K, 1, col, OUT, 1, yg, OUT,
                                 1, 0.0);
            } else {
                st = tn_nnb_gemm(acc, K, IN, Cg, (const char *)w + (size_t)(gi * Cg * K) * isz, 1, K, xg, IN, 1, col, IN, 1,
                                 0.0);
                if (st == TN_OK && q->rd)
                    for (int64_t i = 0; i < K * L; i++) ((float *)col)[i] = q->rd(((float *)col)[i]);
                if (st == TN_OK) columns(acc, &g, Og, yg, col, true, q->rd);
            }
        }
    if (st == TN_OK && bias) add_bias(acc, y, bias, q->N, q->O, OUT, q->rd);
    if (own) free(col);
    return st;
}

/* Runs a checked convolution: y allocated [N, O, out] (nsp spatial dims). */
static tn_status run_forward(tn_tensor *x, tn_tensor *w, tn_tensor *bias, const conv3 *q, tn_tensor **out) {
    int64_t osz[5] = {q->N, q->O};
    for (int i = 0; i < q->nsp; i++) osz[2 + i] = q->out[3 - q->nsp + i];
    tn_tensor *y;
    TN_TRY(tn_nn_empty(q->nsp + 2, osz, x->dtype, x, &y));
    tn_tensor *all[3] = {x, w, bias};
    if (tn_nnb_any_meta(3, all) || tn_tensor_numel(y) == 0) { *out = y; return TN_OK; }
    tn_dtype acc = tn_nn_acc_any(x->dtype);
    conv3 qr = *q;
    if (q->transposed) qr.rd = tn_nn_convt_rounding(x->dtype, 3, q->op, q->s);
    q = &qr;
    tn_nn_buf bx = {0}, bw = {0}, bb = {0}, by = {0};
    tn_status st = tn_nn_load(x, acc, &bx);
    if (st == TN_OK) st = tn_nn_load(w, acc, &bw);
    if (st == TN_OK && bias) st = tn_nn_load(bias, acc, &bb);
    if (st == TN_OK) st = tn_nn_out_begin(y, acc, &by);
    if (st == TN_OK && acc == TN_DTYPE_INT64) {
        conv3 t = *q;
        tn_conv3d_geom g;
        for (int i = 0; i < 3; i++) {
            g.img[i] = t.in[i]; g.cols[i] = t.out[i]; g.k[i] = t.k[i]; g.s[i] = t.s[i]; g.p[i] = t.p[i]; g.d[i] = t.d[i];
        }
        i64_conv3d_direct__scalar(by.data, bx.data, bw.data, bias ? bb.data : NULL, q->N, q->C, q->O, q->G, &g,
                                  q->transposed);
    } else if (st == TN_OK) {
        st = forward_acc(acc, q, bx.data, bw.data, bias ? bb.data : NULL, by.data);
    }
    if (st == TN_OK) tn_nn_out_finish(y, acc, &by);
    else tn_nn_buf_free(&by);
    tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&bb);
    if (st != TN_OK) { tn_tensor_release(y); return st; }
    *out = y;
    return TN_OK;
}

/* ---- non-transposed 3-d convolution ------------------------------------------------------- */

/* conv3d's further arguments, for the complex path's calls on the parts */
typedef struct conv3_args {
    const int64_t *s, *p, *extra, *d;
    int64_t G;
} conv3_args;

static tn_status conv3d_real_part(tn_tensor *x, tn_tensor *w, tn_tensor *b, void *ctx, tn_tensor **out) {
    const conv3_args *a = ctx;
    return tn_nn_conv3d(x, w, b, a->s, a->p, a->extra, a->d, a->G, out);
}

tn_status tn_nn_conv3d(tn_tensor *x, tn_tensor *w, tn_tensor *bias, const int64_t s[3], const int64_t p[3],
                       const int64_t extra[3], const int64_t d[3], int64_t G, tn_tensor **out) {
    char b1[256], b2[256];
    if (w->ndim != 5 || x->ndim != 5)
        return tn_error(TN_ERR_RUNTIME, "Expected %d-dimensional input for %d-dimensional weight %s, but got "
                                        "%d-dimensional input of size %s instead",
                        w->ndim, w->ndim, TN_NN_FMT(w, b1), x->ndim, TN_NN_FMT(x, b2));
    conv3 q = {.nsp = 3, .G = G, .N = x->sizes[0], .C = x->sizes[1], .O = w->sizes[0]};
    memcpy(q.s, s, sizeof q.s); memcpy(q.p, p, sizeof q.p); memcpy(q.d, d, sizeof q.d);
    TN_TRY(check_params(&q));
    int64_t Cg = w->sizes[1];
    if (q.O < G)
        return tn_error(TN_ERR_RUNTIME, "Given groups=%lld, expected weight to be at least %lld at dimension 0, but got "
                                        "weight of size %s instead", (long long)G, (long long)G, TN_NN_FMT(w, b1));
    if (q.O % G != 0)
        return tn_error(TN_ERR_RUNTIME, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but "
                                        "got weight of size %s instead", (long long)G, (long long)G, TN_NN_FMT(w, b1));
    if (q.C != Cg * G)
        return tn_error(TN_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected input%s to have %lld channels, "
                                        "but got %lld channels instead",
                        (long long)G, TN_NN_FMT(w, b1), TN_NN_FMT(x, b2), (long long)(Cg * G), (long long)q.C);
    if (bias && (bias->ndim != 1 || bias->sizes[0] != q.O))
        return tn_error(TN_ERR_RUNTIME, "Given weight of size %s, expected bias to be 1-dimensional with %lld elements, "
                                        "but got bias of size %s instead", TN_NN_FMT(w, b1), (long long)q.O, TN_NN_FMT(bias, b2));
    if (tn_tensor_numel(x) != 0 && (x->dtype != w->dtype || (bias && bias->dtype != x->dtype))) /* as nn_conv.c */
        return tn_error(TN_ERR_RUNTIME, "Input type (%s) and weight type (%s) should be the same",
                        tn_nnb_dname(x->dtype), tn_nnb_dname(w->dtype));
    TN_TRY(tn_nn_check_float_or_int(x, "slow_conv3d_cpu", false));
    if (tn_nn_is_int(x->dtype) && x->dtype != TN_DTYPE_INT64 && (d[0] > 1 || d[1] > 1 || d[2] > 1))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"slow_conv_dilated<>\" not implemented for '%s'", tn_nnb_dname(x->dtype));
    spatial3(x, 3, q.in);
    spatial3(w, 3, q.k);
    int64_t ip[3], ke[3];
    for (int i = 0; i < 3; i++) { ip[i] = q.in[i] + 2 * p[i] + extra[i]; ke[i] = d[i] * (q.k[i] - 1) + 1; }
    if (ip[0] < ke[0] || ip[1] < ke[1] || ip[2] < ke[2])
        return tn_error(TN_ERR_RUNTIME, "Calculated padded input size per channel: (%lld x %lld x %lld). Kernel size: "
                                        "(%lld x %lld x %lld). Kernel size can't be greater than actual input size",
                        (long long)ip[0], (long long)ip[1], (long long)ip[2], (long long)ke[0], (long long)ke[1],
                        (long long)ke[2]);
    for (int i = 0; i < 3; i++) q.out[i] = (ip[i] - ke[i]) / s[i] + 1;
    return run_forward(x, w, bias, &q, out);
}

/* aten::convolution's non-transposed 3-d case (args as the operator's). */
tn_status tn_nn_convolution3d(const tn_value *args, tn_tensor **out) {
    int64_t s[3], p[3], d[3], e[3] = {0, 0, 0};
    TN_TRY(arg3(&args[3], 3, "stride", 1, s));
    TN_TRY(arg3(&args[4], 3, "padding", 0, p));
    TN_TRY(arg3(&args[5], 3, "dilation", 1, d));
    return tn_nn_conv3d(args[0].u.t, args[1].u.t, tn_nn_opt_tensor(&args[2]), s, p, e, d, args[8].u.i, out);
}

/* ---- transposed convolution: 3-d, and integer of any 1 to 3 spatial dims ------------------ */

static tn_status read_transposed(tn_tensor *x, tn_tensor *w, tn_tensor *bias, const tn_value *stride,
                                 const tn_value *padding, const tn_value *output_padding, const tn_value *dilation,
                                 int64_t groups, conv3 *q) {
    char b1[256], b2[256];
    int nsp = w->ndim - 2;
    if (nsp < 1 || nsp > 3 || x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "Expected %d-dimensional input for %d-dimensional weight %s, but got "
                                        "%d-dimensional input of size %s instead",
                        w->ndim, w->ndim, TN_NN_FMT(w, b1), x->ndim, TN_NN_FMT(x, b2));
    *q = (conv3){.nsp = nsp, .transposed = true, .G = groups, .N = x->sizes[0], .C = x->sizes[1]};
    TN_TRY(arg3(stride, nsp, "stride", 1, q->s));
    TN_TRY(arg3(padding, nsp, "padding", 0, q->p));
    TN_TRY(arg3(dilation, nsp, "dilation", 1, q->d));
    TN_TRY(arg3(output_padding, nsp, "output_padding", 0, q->op));
    TN_TRY(check_params(q));
    for (int i = 0; i < 3; i++)
        if (nsp == 3 && q->op[i] >= q->s[i] && q->op[i] >= q->d[i])
            return tn_error(TN_ERR_RUNTIME, "output padding must be smaller than either stride or dilation, but got "
                                            "output_padding_depth: %lld output_padding_height: %lld output_padding_width: "
                                            "%lld stride_depth: %lld stride_height: %lld stride_width: %lld "
                                            "dilation_depth: %lld dilation_height: %lld dilation_width: %lld",
                            (long long)q->op[0], (long long)q->op[1], (long long)q->op[2], (long long)q->s[0],
                            (long long)q->s[1], (long long)q->s[2], (long long)q->d[0], (long long)q->d[1],
                            (long long)q->d[2]);
        else if (q->op[i] >= q->s[i] && q->op[i] >= q->d[i])
            return tn_error(TN_ERR_RUNTIME, "output padding must be smaller than either stride or dilation, but got "
                                            "output_padding: %lld, stride: %lld, dilation: %lld",
                            (long long)q->op[i], (long long)q->s[i], (long long)q->d[i]);
    if (w->sizes[0] != q->C || q->C % q->G != 0)
        return tn_error(TN_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected input%s to have %lld channels, "
                                        "but got %lld channels instead", TN_NN_FMT(w, b1), TN_NN_FMT(x, b2),
                        (long long)w->sizes[0], (long long)q->C);
    q->O = w->sizes[1] * q->G;
    if (bias && (bias->ndim != 1 || bias->sizes[0] != q->O))
        return tn_error(TN_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected bias to be 1-dimensional with "
                                        "%lld elements, but got bias of size %s instead", TN_NN_FMT(w, b1),
                        (long long)q->O, TN_NN_FMT(bias, b2));
    if (tn_tensor_numel(x) != 0 && (x->dtype != w->dtype || (bias && bias->dtype != x->dtype))) /* as nn_conv.c */
        return tn_error(TN_ERR_RUNTIME, "Input type (%s) and weight type (%s) should be the same", tn_nnb_dname(x->dtype),
                        tn_nnb_dname(w->dtype));
    spatial3(x, nsp, q->in);
    spatial3(w, nsp, q->k);
    for (int i = 0; i < 3; i++) q->out[i] = (q->in[i] - 1) * q->s[i] - 2 * q->p[i] + q->d[i] * (q->k[i] - 1) + q->op[i] + 1;
    if (q->out[0] <= 0 || q->out[1] <= 0 || q->out[2] <= 0)
        return tn_error(TN_ERR_RUNTIME, "Given input size per channel: (%lld x %lld x %lld). Calculated output size per "
                                        "channel: (%lld x %lld x %lld). Output size is too small",
                        (long long)q->in[0], (long long)q->in[1], (long long)q->in[2], (long long)q->out[0],
                        (long long)q->out[1], (long long)q->out[2]);
    return TN_OK;
}

tn_status tn_nn_conv_transposed3d(tn_tensor *x, tn_tensor *w, tn_tensor *bias, const tn_value *stride,
                                  const tn_value *padding, const tn_value *output_padding, const tn_value *dilation,
                                  int64_t groups, tn_tensor **out) {
    conv3 q;
    TN_TRY(read_transposed(x, w, bias, stride, padding, output_padding, dilation, groups, &q));
    /* upstream's slow transposed convolution has Long among the integers, nothing else */
    if (!tn_nn_is_float(x->dtype) && x->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"slow_conv_transpose%dd_out_cpu\" not implemented for '%s'",
                        q.nsp == 3 ? 3 : 2, tn_nnb_dname(x->dtype));
    return run_forward(x, w, bias, &q, out);
}

/* ---- convolution_backward of 3 spatial dims ------------------------------------------------ */

static tn_status backward_acc(tn_dtype acc, const conv3 *q, const void *gy, void *x, const void *w, void *gx, void *gw,
                              void *gb) {
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    tn_conv3d_geom g = geom_of(q);
    int64_t G = q->G, kv = vol(q->k), IN = vol(q->in), OUT = vol(q->out);
    int64_t Cg = q->C / G, Og = q->O / G;
    int64_t K = q->transposed ? Og * kv : Cg * kv, L = q->transposed ? IN : OUT;
    void *col = NULL;
    bool own = false;
    tn_status st = (gx || gw) ? tn_nnb_conv_buf(acc, K * L, TN_SCRATCH_CONV_COL, &col, &own) : TN_OK;
    for (int64_t n = 0; n < q->N && st == TN_OK && (gx || gw); n++)
        for (int64_t gi = 0; gi < G && st == TN_OK; gi++) {
            size_t xo = (size_t)((n * q->C + gi * Cg) * IN) * isz, yo = (size_t)((n * q->O + gi * Og) * OUT) * isz;
            const char *wg = (const char *)w + (size_t)(gi * (q->transposed ? Cg : Og) * K) * isz;
            char *gwg = gw ? (char *)gw + (size_t)(gi * (q->transposed ? Cg : Og) * K) * isz : NULL;
            if (!q->transposed) {
                if (gx) { /* col [K, OUT] = W_gᵀ gy_g, scattered into gx_g */
                    st = tn_nnb_gemm(acc, K, OUT, Og, wg, 1, K, (const char *)gy + yo, OUT, 1, col, OUT, 1, 0.0);
                    if (st != TN_OK) break;
                    columns(acc, &g, Cg, (char *)gx + xo, col, true, NULL);
                }
                if (gw) { /* gw_g [Og, K] += gy_g [Og, OUT] colᵀ */
                    columns(acc, &g, Cg, (char *)x + xo, col, false, NULL);
                    st = tn_nnb_gemm(acc, Og, K, OUT, (const char *)gy + yo, OUT, 1, col, 1, OUT, gwg, K, 1, 1.0);
                }
            } else { /* col [K, IN] = im2col of gy_g (the output image) */
                columns(acc, &g, Og, (char *)gy + yo, col, false, NULL);
                if (gx) st = tn_nnb_gemm(acc, Cg, IN, K, wg, K, 1, col, IN, 1, (char *)gx + xo, IN, 1, 0.0);
                if (st == TN_OK && gw)
                    st = tn_nnb_gemm(acc, Cg, K, IN, (const char *)x + xo, IN, 1, col, 1, IN, gwg, K, 1, 1.0);
            }
        }
    if (st == TN_OK && gb)
        for (int64_t o = 0; o < q->O; o++) {
            double sum = 0;
            for (int64_t n = 0; n < q->N; n++)
                for (int64_t j = 0; j < OUT; j++) {
                    int64_t k = (n * q->O + o) * OUT + j;
                    sum += acc == TN_DTYPE_FLOAT32 ? ((const float *)gy)[k] : ((const double *)gy)[k];
                }
            if (acc == TN_DTYPE_FLOAT32) ((float *)gb)[o] = (float)sum;
            else ((double *)gb)[o] = sum;
        }
    if (own) free(col);
    return st;
}

tn_status tn_nn_conv3d_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *w = args[2].u.t;
    char b1[256], b2[256], b3[256], b4[256];
    bool transposed = args[7].u.b;
    conv3 q;
    if (transposed) {
        TN_TRY(read_transposed(x, w, NULL, &args[4], &args[5], &args[8], &args[6], args[9].u.i, &q));
    } else {
        if (x->ndim != 5)
            return tn_error(TN_ERR_RUNTIME, "Expected %d-dimensional input for %d-dimensional weight %s, but got "
                                            "%d-dimensional input of size %s instead",
                            w->ndim, w->ndim, TN_NN_FMT(w, b1), x->ndim, TN_NN_FMT(x, b2));
        q = (conv3){.nsp = 3, .G = args[9].u.i, .N = x->sizes[0], .C = x->sizes[1], .O = w->sizes[0]};
        TN_TRY(arg3(&args[4], 3, "stride", 1, q.s));
        TN_TRY(arg3(&args[5], 3, "padding", 0, q.p));
        TN_TRY(arg3(&args[6], 3, "dilation", 1, q.d));
        TN_TRY(check_params(&q));
        if (q.O % q.G != 0 || q.C != w->sizes[1] * q.G)
            return tn_error(TN_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected input%s to have %lld "
                                            "channels, but got %lld channels instead", (long long)q.G, TN_NN_FMT(w, b1),
                            TN_NN_FMT(x, b2), (long long)(w->sizes[1] * q.G), (long long)q.C);
        spatial3(x, 3, q.in);
        spatial3(w, 3, q.k);
        for (int i = 0; i < 3; i++) q.out[i] = (q.in[i] + 2 * q.p[i] - q.d[i] * (q.k[i] - 1) - 1) / q.s[i] + 1;
    }
    if (x->dtype != w->dtype || gy->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "Input type (%s) and weight type (%s) should be the same",
                        tn_nnb_dname(x->dtype), tn_nnb_dname(w->dtype));
    TN_TRY(tn_nnb_check_float(x, "convolution_backward"));
    int64_t esz[5] = {q.N, q.O, q.out[0], q.out[1], q.out[2]};
    bool ok = gy->ndim == 5 && q.out[0] > 0 && q.out[1] > 0 && q.out[2] > 0;
    for (int i = 0; ok && i < 5; i++) ok = gy->sizes[i] == esz[i];
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "Expected grad_output of size %s for input %s and weight %s, but got %s",
                        tn_format_sizes(5, esz, b3, (int)sizeof b3), TN_NN_FMT(x, b1), TN_NN_FMT(w, b2), TN_NN_FMT(gy, b4));
    tn_tensor *gx = NULL, *gw = NULL, *gb = NULL;
    tn_status st = TN_OK;
    if (tn_nnb_mask_at(&args[10], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && tn_nnb_mask_at(&args[10], 1)) st = tn_nn_empty(w->ndim, w->sizes, w->dtype, w, &gw);
    if (st == TN_OK && tn_nnb_mask_at(&args[10], 2)) st = tn_nn_empty(1, &q.O, gy->dtype, gy, &gb);
    tn_tensor *all[3] = {gy, x, w};
    if (st == TN_OK && !tn_nnb_any_meta(3, all) && (gx || gw || gb)) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bgy = {0}, bx = {0}, bw = {0}, bgx = {0}, bgw = {0}, bgb = {0};
        st = tn_nn_load(gy, acc, &bgy);
        if (st == TN_OK && gw) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK && gx) st = tn_nn_load(w, acc, &bw);
        /* the non-transposed input gradient accumulates (col2im); the others are written */
        if (st == TN_OK && gx) st = tn_nnb_out_begin(gx, acc, true, &bgx);
        if (st == TN_OK && gw) st = tn_nnb_out_begin(gw, acc, true, &bgw);
        if (st == TN_OK && gb) st = tn_nnb_out_begin(gb, acc, true, &bgb);
        if (st == TN_OK)
            st = backward_acc(acc, &q, bgy.data, bx.data, bw.data, gx ? bgx.data : NULL, gw ? bgw.data : NULL,
                              gb ? bgb.data : NULL);
        if (st == TN_OK) {
            if (gx) tn_nn_out_finish(gx, acc, &bgx);
            if (gw) tn_nn_out_finish(gw, acc, &bgw);
            if (gb) tn_nn_out_finish(gb, acc, &bgb);
        } else {
            tn_nn_buf_free(&bgx); tn_nn_buf_free(&bgw); tn_nn_buf_free(&bgb);
        }
        tn_nn_buf_free(&bgy); tn_nn_buf_free(&bx); tn_nn_buf_free(&bw);
    }
    if (st != TN_OK) {
        tn_tensor_release(gx); tn_tensor_release(gw); tn_tensor_release(gb);
        return st;
    }
    rets[0] = gx ? tn_value_tensor(gx) : tn_nnb_vnone();
    rets[1] = gw ? tn_value_tensor(gw) : tn_nnb_vnone();
    rets[2] = gb ? tn_value_tensor(gb) : tn_nnb_vnone();
    return TN_OK;
}

/* ---- the aten entry points ------------------------------------------------------------------ */

/* A batch-of-one view of an unbatched input (NULL on failure), or NULL when batched. */
static tn_tensor *batch_view(tn_tensor *x) {
    int64_t sz[TN_MAX_DIMS], str[TN_MAX_DIMS];
    sz[0] = 1;
    str[0] = x->ndim ? x->sizes[0] * x->strides[0] : 1;
    for (int i = 0; i < x->ndim; i++) { sz[i + 1] = x->sizes[i]; str[i + 1] = x->strides[i]; }
    return tn_tensor_new_view(x->storage, x->offset, x->ndim + 1, sz, str, x->dtype);
}

/* Runs fn on x (or its batch-of-one view) and drops the batch dim again for an unbatched x. */
static tn_status with_batch(tn_tensor *x, int nd, const char *name, tn_value *rets,
                            tn_status (*fn)(tn_tensor *in, const tn_value *args, tn_tensor **y), const tn_value *args) {
    if (x->ndim != nd - 1 && x->ndim != nd) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: %s",
                        nd - 1, nd, name, TN_NN_FMT(x, b));
    }
    bool unbatched = x->ndim == nd - 1;
    tn_tensor *in = x, *tmp = NULL;
    if (unbatched && !(tmp = in = batch_view(x))) return tn_error(TN_ERR_NO_MEMORY, "out of memory creating a view");
    tn_tensor *y = NULL;
    tn_status st = fn(in, args, &y);
    tn_tensor_release(tmp);
    if (st != TN_OK) return st;
    if (unbatched) {
        tn_tensor *v = tn_tensor_new_view(y->storage, y->offset, y->ndim - 1, y->sizes + 1, y->strides + 1, y->dtype);
        tn_tensor_release(y);
        if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory creating a view");
        y = v;
    }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* conv3d / conv3d.padding(input, weight, bias?, stride, padding, dilation, groups) */
static tn_status conv3d_body(tn_tensor *in, const tn_value *args, tn_tensor **y) {
    int64_t s[3], p[3] = {0, 0, 0}, e[3] = {0, 0, 0}, d[3];
    TN_TRY(arg3(&args[3], 3, "stride", 1, s));
    TN_TRY(arg3(&args[5], 3, "dilation", 1, d));
    if (args[4].tag == TN_V_STRING) {
        const char *m = args[4].u.s.data;
        if (strcmp(m, "same") == 0) {
            for (int i = 0; i < 3; i++)
                if (s[i] != 1) return tn_error(TN_ERR_RUNTIME, "padding='same' is not supported for strided convolutions");
            tn_tensor *w = args[1].u.t;
            if (w->ndim == 5)
                for (int i = 0; i < 3; i++) { /* total d (k - 1); an odd total puts the extra element on the right */
                    int64_t total = d[i] * (w->sizes[2 + i] - 1);
                    p[i] = total / 2;
                    e[i] = total - 2 * p[i];
                }
        } else if (strcmp(m, "valid") != 0) {
            return tn_error(TN_ERR_RUNTIME, "Invalid padding string: '%s'", m);
        }
    } else {
        TN_TRY(arg3(&args[4], 3, "padding", 0, p));
    }
    tn_tensor *w = args[1].u.t, *b = tn_nn_opt_tensor(&args[2]);
    /* complex operands: real convolutions of the parts, as upstream's conv3d entry (aten::convolution refuses) */
    if (tn_dtype_is_complex(in->dtype) && in->dtype != TN_DTYPE_COMPLEX32 && w->dtype == in->dtype && (!b || b->dtype == in->dtype)) {
        conv3_args a = {s, p, e, d, args[6].u.i};
        return tn_complex_bilinear(in, w, b, conv3d_real_part, &a, y);
    }
    return tn_nn_conv3d(in, w, b, s, p, e, d, args[6].u.i, y);
}

/* aten::conv3d(input, weight, bias?, stride, padding, dilation, groups) */
tn_status tn_op_conv3d(const tn_value *args, tn_value *rets) {
    return with_batch(args[0].u.t, 5, "conv3d", rets, conv3d_body, args);
}
/* aten::conv3d.padding(input, weight, bias?, stride, str padding, dilation, groups) */
tn_status tn_op_conv3d_padding(const tn_value *args, tn_value *rets) {
    return with_batch(args[0].u.t, 5, "conv3d", rets, conv3d_body, args);
}

static tn_status conv_transpose3d_body(tn_tensor *in, const tn_value *args, tn_tensor **y) {
    return tn_nn_conv_transposed_complex(in, args, y); /* real dtypes: tn_nn_conv_transposed, then here */
}

/* aten::conv_transpose3d.input(input, weight, bias?, stride, padding, output_padding, groups, dilation) */
tn_status tn_op_conv_transpose3d_input(const tn_value *args, tn_value *rets) {
    return with_batch(args[0].u.t, 5, "conv_transpose3d", rets, conv_transpose3d_body, args);
}
