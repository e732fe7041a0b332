/* nn_backward_conv.c — convolution_backward (1-d and 2-d, groups, stride, padding,
 * dilation, transposed) and the transposed convolution forward (convolution with
 * transposed=True, conv_transpose1d, conv_transpose2d): im2col / col2im around matrix
 * products (the GEMM kernel for the batched non-transposed gradient, with the forward's
 * image batching from nn_conv.c; aten::mm through the door per image for the transposed
 * forms), in the opmath dtype. Plain C11; no Python. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/nn.h"
#include "kernels/nn_backward.h"
#include "kernels/nn_conv3d.h"
#include "core/threadpool.h"
#include "ops/complex_parts.h"
#include "ops/nn_backward_internal.h"

/* ================================ convolution ========================================= */

/* Reads an int[] argument of nsp entries (one value broadcasts) into 2-d form. */
static tn_status conv_arg(const tn_value *v, int nsp, const char *what, int64_t dflt, int64_t out[2]) {
    int64_t tmp[2] = {dflt, dflt};
    if (!tn_nn_int_list(v, nsp, tmp))
        return tn_error(TN_ERR_RUNTIME, "expected %s to be a single integer value or a list of %d values to match "
                                        "the convolution dimensions", what, nsp);
    out[0] = nsp == 2 ? tmp[0] : dflt;
    out[1] = tmp[nsp - 1];
    return TN_OK;
}

/* grad_output [N, O, P] regrouped as [O, N*P]: images [n0, n1). */
typedef struct regroup_job {
    void *gyr;
    const void *gy;
    int64_t O, P, NPld;
    size_t isz;
} regroup_job;

static void regroup_chunk(void *vj, int64_t n0, int64_t n1) {
    const regroup_job *j = vj;
    for (int64_t n = n0; n < n1; n++)
        for (int64_t o = 0; o < j->O; o++)
            memcpy((char *)j->gyr + (size_t)(o * j->NPld + n * j->P) * j->isz,
                   (const char *)j->gy + (size_t)((n * j->O + o) * j->P) * j->isz, (size_t)j->P * j->isz);
}

/* Gradient of a non-transposed convolution w.r.t. input (col2im of Wᵀ·g), weight (g·colᵀ)
 * and bias (g summed over batch and space), in the acc dtype. The batch is processed in
 * chunks of nb images: grad_output regrouped as [O, N*P] makes each chunk's products one
 * GEMM per group ([K, Og]·[Og, nb*P] and [Og, nb*P]·[nb*P, K], the latter accumulating
 * into grad_weight in place) instead of one per image. */
static tn_status conv_backward_run(tn_tensor *gy, tn_tensor *x, tn_tensor *w, const conv_geom *q, tn_tensor *gx,
                                   tn_tensor *gw, tn_tensor *gb) {
    tn_dtype acc = tn_nn_acc(x->dtype);
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    bool f = acc == TN_DTYPE_FLOAT32;
    int64_t N = q->N, C = q->C, G = q->G, Cg = q->Cg, O = q->O, Og = O / G;
    int64_t K = Cg * q->kh * q->kw, P = q->oh * q->ow, HW = q->H * q->W, NP = N * P;
    int64_t NPld = tn_nnb_col_ld(NP, isz); /* gyr's row stride */
    int64_t nb = TN_CONV_CHUNK_ELEMS / (K * P > 0 ? K * P : 1);
    if (nb < 1) nb = 1;
    if (nb > N) nb = N;
    void *gyr = NULL, *col = NULL;
    bool own_gyr = false, own_col = false;
    tn_nn_buf bgy = {0}, bw = {0}, bx = {0}, bgx = {0}, bgw = {0}, bgb = {0};
    tn_status st = tn_nn_load(gy, acc, &bgy);
    if (st == TN_OK) st = tn_nnb_conv_buf(acc, O * NPld, TN_SCRATCH_CONV_AUX, &gyr, &own_gyr);
    if (st == TN_OK && (gx || gw))
        st = tn_nnb_conv_buf(acc, K * tn_nnb_col_ld(nb * P, isz), TN_SCRATCH_CONV_COL, &col, &own_col);
    if (st == TN_OK && gx) st = tn_nn_load(w, acc, &bw);
    if (st == TN_OK && gw) st = tn_nn_load(x, acc, &bx);
    if (st == TN_OK && gx) st = tn_nnb_out_begin(gx, acc, true, &bgx);
    if (st == TN_OK && gw) st = tn_nnb_out_begin(gw, acc, true, &bgw);
    if (st == TN_OK && gb) st = tn_nnb_out_begin(gb, acc, true, &bgb);
    if (st != TN_OK) goto done;
    /* gyr[o][n*P + p] = gy[n][o][p] (rows NPld apart), images split over the pool */
    regroup_job rj = {gyr, bgy.data, O, P, NPld, isz};
    tn_parallel_for(N, TN_NNB_GRAIN / (O * P > 0 ? O * P : 1) + 1, regroup_chunk, &rj);
    for (int64_t n0 = 0; n0 < N && st == TN_OK && (gx || gw); n0 += nb) {
        int64_t nbc = N - n0 < nb ? N - n0 : nb, L = nbc * P, ld = tn_nnb_col_ld(L, isz);
        for (int64_t g = 0; g < G && st == TN_OK; g++) {
            const char *gyg = (const char *)gyr + (size_t)(g * Og * NPld + n0 * P) * isz;
            if (gx) {
                /* cols [K, L] = W_gᵀ [K, Og] · gy_g [Og, L], each image's block scattered back. */
                st = tn_nnb_gemm(acc, K, L, Og, (const char *)bw.data + (size_t)(g * Og * K) * isz, 1, K, gyg, NPld, 1, col,
                                 ld, 1, 0.0);
                if (st != TN_OK) break;
                tn_nnb_conv_images(acc, q, ld, C * HW, (char *)bgx.data + (size_t)((n0 * C + g * Cg) * HW) * isz, col,
                                   nbc, true);
            }
            if (gw) {
                /* gw_g [Og, K] += gy_g [Og, L] · colsᵀ [L, K] */
                tn_nnb_conv_images(acc, q, ld, C * HW, (char *)bx.data + (size_t)((n0 * C + g * Cg) * HW) * isz, col,
                                   nbc, false);
                st = tn_nnb_gemm(acc, Og, K, L, gyg, NPld, 1, col, 1, ld, (char *)bgw.data + (size_t)(g * Og * K) * isz, K,
                                 1, 1.0);
            }
        }
    }
    if (st == TN_OK && gb) {
        for (int64_t o = 0; o < O; o++) {
            double sum = 0;
            for (int64_t k = o * NPld; k < o * NPld + NP; k++) sum += f ? ((const float *)gyr)[k] : ((const double *)gyr)[k];
            if (f) ((float *)bgb.data)[o] = (float)sum;
            else ((double *)bgb.data)[o] = sum;
        }
    }
    if (st == TN_OK) {
        if (gx) tn_nn_out_finish(gx, acc, &bgx);
        if (gw) tn_nn_out_finish(gw, acc, &bgw);
        if (gb) tn_nn_out_finish(gb, acc, &bgb);
    }
done:
    if (own_gyr) free(gyr);
    if (own_col) free(col);
    tn_nn_buf_free(&bgy); tn_nn_buf_free(&bw); tn_nn_buf_free(&bx);
    tn_nn_buf_free(&bgx); tn_nn_buf_free(&bgw); tn_nn_buf_free(&bgb);
    return st;
}

/* Gradient of a transposed convolution (input x [N, Cin, H, W], weight [Cin, Cout/G, kh, kw],
 * grad_output [N, Cout, OH, OW]): with col = im2col(gy_ng) [K, H*W], the input gradient is
 * W_g · col and the weight gradient x_ng · colᵀ summed over the batch; bias: gy summed. */
static tn_status conv_transposed_backward_run(tn_tensor *gy, tn_tensor *x, tn_tensor *w, const conv_geom *q, int64_t OH,
                                              int64_t OW, tn_tensor *gx, tn_tensor *gw, tn_tensor *gb) {
    tn_dtype acc = tn_nn_acc(x->dtype);
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    int64_t N = q->N, G = q->G, Cin = q->C, Cig = Cin / G, Cog = w->sizes[1], Cout = Cog * G;
    int64_t K = Cog * q->kh * q->kw, HW = q->H * q->W, OHW = OH * OW;
    tn_tensor *gyt = NULL, *wt = NULL, *xt = NULL, *col = NULL;
    tn_nn_buf bgx = {0}, bgw = {0}, bgb = {0};
    int64_t csz[2] = {K, HW};
    tn_status st = tn_nnb_acc_tensor(gy, acc, &gyt);
    if (st == TN_OK && gx) st = tn_nnb_acc_tensor(w, acc, &wt);
    if (st == TN_OK && gw) st = tn_nnb_acc_tensor(x, acc, &xt);
    if (st == TN_OK && (gx || gw)) st = tn_tensor_empty(2, csz, acc, tn_device_cpu(), &col);
    if (st == TN_OK && gx) st = tn_nnb_out_begin(gx, acc, true, &bgx);
    if (st == TN_OK && gw) st = tn_nnb_out_begin(gw, acc, true, &bgw);
    if (st == TN_OK && gb) st = tn_nnb_out_begin(gb, acc, true, &bgb);
    if (st != TN_OK) goto done;
    for (int64_t n = 0; n < N && st == TN_OK && (gx || gw); n++)
        for (int64_t g = 0; g < G && st == TN_OK; g++) {
            const char *gimg = (const char *)tn_tensor_data(gyt) + (size_t)((n * Cout + g * Cog) * OHW) * isz;
            NN_KERNEL_VEC(acc, im2col_ld, tn_tensor_data(col), HW, (const void *)gimg, Cog, OH, OW, q->kh, q->kw, q->H, q->W,
                      q->sh, q->sw, q->ph, q->pw, q->dh, q->dw);
            int64_t xoff = (n * Cin + g * Cig) * HW;
            if (gx) {
                tn_tensor *r = NULL;
                st = tn_nnb_mm_views(wt, g * Cig * K, Cig, K, K, 1, col, 0, K, HW, HW, 1, &r);
                if (st != TN_OK) break;
                st = tn_nnb_add_result(acc, (char *)bgx.data + (size_t)xoff * isz, r, Cig * HW);
                tn_tensor_release(r);
                if (st != TN_OK) break;
            }
            if (gw) {
                tn_tensor *r = NULL;
                st = tn_nnb_mm_views(xt, xoff, Cig, HW, HW, 1, col, 0, HW, K, 1, HW, &r);
                if (st != TN_OK) break;
                st = tn_nnb_add_result(acc, (char *)bgw.data + (size_t)(g * Cig * K) * isz, r, Cig * K);
                tn_tensor_release(r);
            }
        }
    if (st == TN_OK && gb) {
        const char *gd = tn_tensor_data(gyt);
        for (int64_t o = 0; o < Cout; o++) {
            double sum = 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t j = 0; j < OHW; j++) {
                    int64_t k = (n * Cout + o) * OHW + j;
                    sum += acc == TN_DTYPE_FLOAT32 ? ((const float *)(const void *)gd)[k] : ((const double *)(const void *)gd)[k];
                }
            if (acc == TN_DTYPE_FLOAT32) ((float *)bgb.data)[o] = (float)sum;
            else ((double *)bgb.data)[o] = sum;
        }
    }
    if (st == TN_OK) {
        if (gx) tn_nn_out_finish(gx, acc, &bgx);
        if (gw) tn_nn_out_finish(gw, acc, &bgw);
        if (gb) tn_nn_out_finish(gb, acc, &bgb);
    }
done:
    tn_nn_buf_free(&bgx); tn_nn_buf_free(&bgw); tn_nn_buf_free(&bgb);
    if (gyt) tn_tensor_release(gyt);
    if (wt) tn_tensor_release(wt);
    if (xt) tn_tensor_release(xt);
    if (col) tn_tensor_release(col);
    return st;
}

/* aten::convolution_backward(grad_output, input, weight, bias_sizes?, stride, padding,
 * dilation, transposed, output_padding, groups, output_mask[3]) -> (grad_input,
 * grad_weight, grad_bias); an output not asked for by output_mask is None. */
tn_status tn_op_convolution_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *w = args[2].u.t;
    char b1[256], b2[256];
    bool transposed = args[7].u.b;
    int nsp = w->ndim - 2;
    if (nsp == 3) return tn_nn_conv3d_backward(args, rets);
    if (nsp != 1 && nsp != 2)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::convolution_backward with %d spatial dimensions is not implemented "
                                                "by torchnative", nsp < 0 ? 0 : nsp);
    if (x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "Expected %d-dimensional input for %d-dimensional weight %s, but got "
                                        "%d-dimensional input of size %s instead",
                        w->ndim, w->ndim, TN_NN_FMT(w, b1), x->ndim, TN_NN_FMT(x, b2));
    conv_geom q = {.nsp = nsp, .G = args[9].u.i};
    int64_t s[2] = {1, 1}, p[2] = {0, 0}, d[2] = {1, 1}, op[2] = {0, 0};
    TN_TRY(conv_arg(&args[4], nsp, "stride", 1, s));
    TN_TRY(conv_arg(&args[5], nsp, "padding", 0, p));
    TN_TRY(conv_arg(&args[6], nsp, "dilation", 1, d));
    if (transposed) TN_TRY(conv_arg(&args[8], nsp, "output_padding", 0, op));
    if (s[0] <= 0 || s[1] <= 0) return tn_error(TN_ERR_RUNTIME, "non-positive stride is not supported");
    if (p[0] < 0 || p[1] < 0) return tn_error(TN_ERR_RUNTIME, "negative padding is not supported");
    if (d[0] <= 0 || d[1] <= 0) return tn_error(TN_ERR_RUNTIME, "dilation should be greater than zero");
    if (q.G <= 0) return tn_error(TN_ERR_RUNTIME, "non-positive groups is not supported");
    q.N = x->sizes[0]; q.C = x->sizes[1]; q.O = w->sizes[0]; q.Cg = w->sizes[1];
    q.H = nsp == 2 ? x->sizes[2] : 1; q.W = x->sizes[nsp + 1];
    q.kh = nsp == 2 ? w->sizes[2] : 1; q.kw = w->sizes[nsp + 1];
    q.sh = s[0]; q.sw = s[1]; q.ph = p[0]; q.pw = p[1]; q.dh = d[0]; q.dw = d[1];
    if (transposed) {
        /* weight [Cin, Cout/G, ...]: O is the output channel count, the batch sums run over
         * the transposed geometry (q.oh, q.ow = the output image). */
        if (w->sizes[0] != q.C || q.C % q.G != 0)
            return tn_error(TN_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected input%s to have %lld "
                                            "channels, but got %lld channels instead", TN_NN_FMT(w, b1), TN_NN_FMT(x, b2),
                            (long long)w->sizes[0], (long long)q.C);
        q.O = w->sizes[1] * q.G;
        q.oh = (q.H - 1) * q.sh - 2 * q.ph + q.dh * (q.kh - 1) + (nsp == 2 ? op[0] : 0) + 1;
        q.ow = (q.W - 1) * q.sw - 2 * q.pw + q.dw * (q.kw - 1) + op[1] + 1;
    } else {
        if (q.O % q.G != 0 || q.C != q.Cg * q.G)
            return tn_error(TN_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected input%s to have %lld "
                                            "channels, but got %lld channels instead", (long long)q.G, TN_NN_FMT(w, b1),
                            TN_NN_FMT(x, b2), (long long)(q.Cg * q.G), (long long)q.C);
        q.oh = (q.H + 2 * q.ph - q.dh * (q.kh - 1) - 1) / q.sh + 1;
        q.ow = (q.W + 2 * q.pw - q.dw * (q.kw - 1) - 1) / q.sw + 1;
    }
    if (x->dtype != w->dtype || gy->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "Input type (%s) and weight type (%s) should be the same",
                        tn_nnb_dname(x->dtype), tn_nnb_dname(w->dtype));
    TN_TRY(tn_nnb_check_float(x, "convolution_backward"));
    int64_t esz[4] = {q.N, q.O, nsp == 2 ? q.oh : q.ow, q.ow};
    bool ok = gy->ndim == nsp + 2 && q.oh > 0 && q.ow > 0;
    for (int i = 0; ok && i < nsp + 2; i++) ok = gy->sizes[i] == esz[i];
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "Expected grad_output of size %s for input %s and weight %s, but got %s",
                        tn_format_sizes(nsp + 2, esz, (char[256]){0}, 256), TN_NN_FMT(x, b1), TN_NN_FMT(w, b2),
                        TN_NN_FMT(gy, (char[256]){0}));
    tn_tensor *gx = NULL, *gw = NULL, *gb = NULL;
    tn_status st = TN_OK;
    if (tn_nnb_mask_at(&args[10], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && tn_nnb_mask_at(&args[10], 1)) st = tn_nn_empty(w->ndim, w->sizes, w->dtype, w, &gw);
    if (st == TN_OK && tn_nnb_mask_at(&args[10], 2)) st = tn_nn_empty(1, &q.O, gy->dtype, gy, &gb);
    tn_tensor *all[3] = {gy, x, w};
    if (st == TN_OK && !tn_nnb_any_meta(3, all) && (gx || gw || gb)) {
        if (q.N * q.C * q.H * q.W == 0 || q.O * q.oh * q.ow == 0) {
            /* Empty batch or channels: the gradients are zeros (sums over nothing). */
            tn_tensor *outs[3] = {gx, gw, gb};
            for (int i = 0; i < 3; i++)
                if (outs[i]) memset(tn_tensor_data(outs[i]), 0, (size_t)tn_tensor_numel(outs[i]) * (size_t)tn_dtype_itemsize(outs[i]->dtype));
        } else if (transposed) {
            st = conv_transposed_backward_run(gy, x, w, &q, q.oh, q.ow, gx, gw, gb);
        } else {
            st = conv_backward_run(gy, x, w, &q, gx, gw, gb);
        }
    }
    if (st != TN_OK) {
        if (gx) tn_tensor_release(gx);
        if (gw) tn_tensor_release(gw);
        if (gb) tn_tensor_release(gb);
        return st;
    }
    rets[0] = gx ? tn_value_tensor(gx) : tn_nnb_vnone();
    rets[1] = gw ? tn_value_tensor(gw) : tn_nnb_vnone();
    rets[2] = gb ? tn_value_tensor(gb) : tn_nnb_vnone();
    return TN_OK;
}

/* ---- transposed convolution forward: the input gradient of a convolution ------------- */

/* y [N, Cout, OH, OW] for input x [N, Cin, H, W], weight [Cin, Cout/G, kh, kw]: per
 * (n, g) col = W_gᵀ · x_ng, scattered by col2im into the output image, plus the bias.
 * Float16 and BFloat16 round as upstream's backend on this host does (tn_nn_convt_rounding):
 * on its slow path (slow_conv_transpose2d) the columns are a tensor of the dtype, col2im
 * adds in it, the bias is added to the output in it (the OpInfo samples of
 * conv_transpose1d/2d agree bit for bit, where one final rounding disagreed); on its oneDNN
 * path everything is summed in float and rounded once. */
static tn_status conv_transposed_run(tn_tensor *x, tn_tensor *w, tn_tensor *bias, const conv_geom *q, int64_t OH,
                                     int64_t OW, float (*rd)(float), tn_tensor *y) {
    tn_dtype acc = tn_nn_acc(x->dtype);
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    int64_t N = q->N, G = q->G, Cin = q->C, Cig = Cin / G, Cog = w->sizes[1], Cout = Cog * G;
    int64_t K = Cog * q->kh * q->kw, HW = q->H * q->W, OHW = OH * OW;
    bool half = rd != NULL;
    tn_tensor *xt = NULL, *wt = NULL;
    tn_nn_buf bb = {0}, by = {0};
    tn_status st = tn_nnb_acc_tensor(x, acc, &xt);
    if (st == TN_OK) st = tn_nnb_acc_tensor(w, acc, &wt);
    if (st == TN_OK && bias) st = tn_nn_load(bias, acc, &bb);
    if (st == TN_OK) st = tn_nnb_out_begin(y, acc, true, &by);
    for (int64_t n = 0; n < N && st == TN_OK; n++)
        for (int64_t g = 0; g < G && st == TN_OK; g++) {
            tn_tensor *r = NULL;
            st = tn_nnb_mm_views(wt, g * Cig * K, K, Cig, 1, K, xt, (n * Cin + g * Cig) * HW, Cig, HW, HW, 1, &r);
            if (st != TN_OK) break;
            tn_nn_buf br;
            st = tn_nn_load(r, acc, &br);
            if (st == TN_OK && half) {
                float *c = br.data;
                for (int64_t i = 0; i < K * HW; i++) c[i] = rd(c[i]);
                /* the 3-d column kernel over a depth of 1 visits in col2im's order */
                tn_conv3d_geom g3 = {.img = {1, OH, OW}, .k = {1, q->kh, q->kw}, .cols = {1, q->H, q->W}, .s = {1, q->sh, q->sw},
                                     .p = {0, q->ph, q->pw}, .d = {1, q->dh, q->dw}};
                f32_col2im3d_rounded__scalar((float *)by.data + (n * Cout + g * Cog) * OHW, c, HW, &g3, 0, Cog, rd);
                tn_nn_buf_free(&br);
            } else if (st == TN_OK) {
                char *dst = (char *)by.data + (size_t)((n * Cout + g * Cog) * OHW) * isz;
                NN_KERNEL_VEC(acc, col2im, (void *)dst, (const void *)br.data, HW, Cog, OH, OW, q->kh, q->kw, q->H, q->W, q->sh,
                          q->sw, q->ph, q->pw, q->dh, q->dw);
                tn_nn_buf_free(&br);
            }
            tn_tensor_release(r);
        }
    if (st == TN_OK && bias)
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < Cout; c++) {
                if (acc == TN_DTYPE_FLOAT32) {
                    float b = ((const float *)bb.data)[c], *d = (float *)by.data + (n * Cout + c) * OHW;
                    if (half)
                        for (int64_t j = 0; j < OHW; j++) d[j] = rd(d[j] + b);
                    else
                        for (int64_t j = 0; j < OHW; j++) d[j] += b;
                } else {
                    double b = ((const double *)bb.data)[c], *d = (double *)by.data + (n * Cout + c) * OHW;
                    for (int64_t j = 0; j < OHW; j++) d[j] += b;
                }
            }
    if (st == TN_OK) tn_nn_out_finish(y, acc, &by);
    tn_nn_buf_free(&bb);
    tn_nn_buf_free(&by);
    if (xt) tn_tensor_release(xt);
    if (wt) tn_tensor_release(wt);
    return st;
}

tn_status tn_nn_conv_transposed(tn_tensor *x, tn_tensor *w, tn_tensor *bias, const tn_value *stride,
                                const tn_value *padding, const tn_value *output_padding, const tn_value *dilation,
                                int64_t groups, tn_tensor **out) {
    char b1[256], b2[256];
    int nsp = w->ndim - 2;
    /* 3-d, and integer inputs (upstream's direct slow path), are nn_conv3d.c's */
    if (nsp == 3 || (nsp >= 1 && nsp <= 2 && !tn_nn_is_float(x->dtype)))
        return tn_nn_conv_transposed3d(x, w, bias, stride, padding, output_padding, dilation, groups, out);
    if (nsp != 1 && nsp != 2)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::convolution with transposed=True and %d spatial dimensions is "
                                                "not implemented by torchnative", nsp < 0 ? 0 : nsp);
    if (x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "Expected %d-dimensional input for %d-dimensional weight %s, but got "
                                        "%d-dimensional input of size %s instead",
                        w->ndim, w->ndim, TN_NN_FMT(w, b1), x->ndim, TN_NN_FMT(x, b2));
    conv_geom q = {.nsp = nsp, .G = groups};
    int64_t s[2] = {1, 1}, p[2] = {0, 0}, d[2] = {1, 1}, op[2] = {0, 0};
    TN_TRY(conv_arg(stride, nsp, "stride", 1, s));
    TN_TRY(conv_arg(padding, nsp, "padding", 0, p));
    TN_TRY(conv_arg(dilation, nsp, "dilation", 1, d));
    TN_TRY(conv_arg(output_padding, nsp, "output_padding", 0, op));
    if (s[0] <= 0 || s[1] <= 0) return tn_error(TN_ERR_RUNTIME, "non-positive stride is not supported");
    if (p[0] < 0 || p[1] < 0) return tn_error(TN_ERR_RUNTIME, "negative padding is not supported");
    if (op[0] < 0 || op[1] < 0) return tn_error(TN_ERR_RUNTIME, "negative output_padding is not supported");
    if (d[0] <= 0 || d[1] <= 0) return tn_error(TN_ERR_RUNTIME, "dilation should be greater than zero");
    if (q.G <= 0) return tn_error(TN_ERR_RUNTIME, "non-positive groups is not supported");
    for (int i = 0; i < 2; i++)
        if (op[i] >= s[i] && op[i] >= d[i])
            return tn_error(TN_ERR_RUNTIME, "output padding must be smaller than either stride or dilation, but got "
                                            "output_padding: %lld, stride: %lld, dilation: %lld",
                            (long long)op[i], (long long)s[i], (long long)d[i]);
    q.N = x->sizes[0]; q.C = x->sizes[1];
    q.H = nsp == 2 ? x->sizes[2] : 1; q.W = x->sizes[nsp + 1];
    q.kh = nsp == 2 ? w->sizes[2] : 1; q.kw = w->sizes[nsp + 1];
    q.sh = s[0]; q.sw = s[1]; q.ph = p[0]; q.pw = p[1]; q.dh = d[0]; q.dw = d[1];
    if (w->sizes[0] != q.C || q.C % q.G != 0)
        return tn_error(TN_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected input%s to have %lld channels, "
                                        "but got %lld channels instead", TN_NN_FMT(w, b1), TN_NN_FMT(x, b2),
                        (long long)w->sizes[0], (long long)q.C);
    int64_t Cout = w->sizes[1] * q.G;
    if (bias && (bias->ndim != 1 || bias->sizes[0] != Cout))
        return tn_error(TN_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected bias to be 1-dimensional with "
                                        "%lld elements, but got bias of size %s instead", TN_NN_FMT(w, b1),
                        (long long)Cout, TN_NN_FMT(bias, b2));
    if (tn_tensor_numel(x) != 0 && (x->dtype != w->dtype || (bias && bias->dtype != x->dtype))) /* as nn_conv.c */
        return tn_error(TN_ERR_RUNTIME, "Input type (%s) and weight type (%s) should be the same", tn_nnb_dname(x->dtype),
                        tn_nnb_dname(w->dtype));
    TN_TRY(tn_nnb_check_float(x, "conv_transpose"));
    int64_t OH = (q.H - 1) * q.sh - 2 * q.ph + q.dh * (q.kh - 1) + (nsp == 2 ? op[0] : 0) + 1;
    int64_t OW = (q.W - 1) * q.sw - 2 * q.pw + q.dw * (q.kw - 1) + op[1] + 1;
    if (OH <= 0 || OW <= 0)
        return tn_error(TN_ERR_RUNTIME, "Given input size per channel: (%lld x %lld). Calculated output size per "
                                        "channel: (%lld x %lld). Output size is too small", (long long)q.H,
                        (long long)q.W, (long long)OH, (long long)OW);
    int64_t osz[4] = {q.N, Cout, nsp == 2 ? OH : OW, OW};
    tn_tensor *y;
    TN_TRY(tn_nn_empty(nsp + 2, osz, x->dtype, x, &y));
    tn_tensor *all[3] = {x, w, bias};
    if (!tn_nnb_any_meta(3, all) && tn_tensor_numel(y) > 0) {
        tn_status st = conv_transposed_run(x, w, bias, &q, OH, OW, tn_nn_convt_rounding(x->dtype, 2, op, s), y);
        if (st != TN_OK) { tn_tensor_release(y); return st; }
    }
    *out = y;
    return TN_OK;
}

/* the transposed convolution's further arguments (conv_transpose1d/2d/3d's), for the complex
 * path's calls on the parts */
typedef struct convt_args {
    const tn_value *args; /* stride, padding, output_padding, groups, dilation at [3..7] */
} convt_args;

static tn_status convt_real_part(tn_tensor *x, tn_tensor *w, tn_tensor *b, void *ctx, tn_tensor **out) {
    const tn_value *a = ((const convt_args *)ctx)->args;
    return tn_nn_conv_transposed(x, w, b, &a[3], &a[4], &a[5], &a[7], a[6].u.i, out);
}

/* complex operands of conv_transpose1d/2d/3d: real transposed convolutions of the parts
 * (Gauss's three, upstream's entries; aten::convolution refuses complex) */
tn_status tn_nn_conv_transposed_complex(tn_tensor *x, const tn_value *args, tn_tensor **out) {
    tn_tensor *w = args[1].u.t, *b = tn_nn_opt_tensor(&args[2]);
    if (!tn_dtype_is_complex(x->dtype) || x->dtype == TN_DTYPE_COMPLEX32 || w->dtype != x->dtype || (b && b->dtype != x->dtype))
        return tn_nn_conv_transposed(x, w, b, &args[3], &args[4], &args[5], &args[7], args[6].u.i, out);
    convt_args a = {args};
    return tn_complex_bilinear(x, w, b, convt_real_part, &a, out);
}

/* conv_transpose1d / conv_transpose2d.input(input, weight, bias?, stride, padding,
 * output_padding, groups, dilation): an unbatched input [Cin, ...] is run as a batch of one. */
static tn_status conv_transpose_nd(const tn_value *args, tn_value *rets, int nsp) {
    tn_tensor *x = args[0].u.t, *in = x, *tmp = NULL;
    int nd = nsp + 2;
    if (x->ndim != nd - 1 && x->ndim != nd) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "Expected %dD (unbatched) or %dD (batched) input to conv_transpose%dd, but got "
                                        "input of size: %s", nd - 1, nd, nsp, TN_NN_FMT(x, b));
    }
    bool unbatched = x->ndim == nd - 1;
    if (unbatched) {
        int64_t sz[TN_MAX_DIMS], str[TN_MAX_DIMS];
        sz[0] = 1;
        str[0] = x->ndim ? x->sizes[0] * x->strides[0] : 1;
        for (int i = 0; i < x->ndim; i++) { sz[i + 1] = x->sizes[i]; str[i + 1] = x->strides[i]; }
        tmp = in = tn_tensor_new_view(x->storage, x->offset, nd, sz, str, x->dtype);
        if (!tmp) return tn_error(TN_ERR_NO_MEMORY, "out of memory creating a view");
    }
    tn_tensor *y = NULL;
    tn_status st = tn_nn_conv_transposed_complex(in, args, &y);
    if (tmp) tn_tensor_release(tmp);
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

/* aten::conv_transpose1d(input, weight, bias?, stride, padding, output_padding, groups, dilation) */
tn_status tn_op_conv_transpose1d(const tn_value *args, tn_value *rets) { return conv_transpose_nd(args, rets, 1); }
/* aten::conv_transpose2d.input(input, weight, bias?, stride, padding, output_padding, groups, dilation) */
tn_status tn_op_conv_transpose2d_input(const tn_value *args, tn_value *rets) { return conv_transpose_nd(args, rets, 2); }
