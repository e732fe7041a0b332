/* nn_backward.c — upstream's dedicated backward operators (the ones derivatives.yaml
 * calls: convolution_backward, max_pool2d_with_indices_backward, native_batch_norm_backward,
 * nll_loss_backward, gelu_backward, ...) as ordinary operators: shape and argument checks,
 * output allocation, then the loops of kernels/nn_backward.h (gathered into the opmath
 * dtype as the forward nn ops do) or kernels/elementwise_backward.h (pointwise ones, over
 * the elementwise iterator with broadcasting and type promotion). Plain C11; no Python. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cast.h"
#include "kernels/elementwise_backward.h"
#include "kernels/nn.h"
#include "kernels/nn_backward.h"
#include "ops/iter.h"
#include "ops/nn_internal.h"

#define NN_KERNEL(acc, name, ...) \
    ((acc) == TN_DTYPE_FLOAT32 ? f32_##name##__scalar(__VA_ARGS__) : f64_##name##__scalar(__VA_ARGS__))

static const char *dname(tn_dtype d) { return tn_dtype_infos[d].c10_name; }
static tn_value vnone(void) { tn_value v = {.tag = TN_V_NONE}; return v; }

/* output_mask entry i (a bool[N] argument; absent entries read as true). */
static bool mask_at(const tn_value *v, int i) {
    if (v->tag == TN_V_BOOLLIST) return i < v->u.blist.n ? v->u.blist.data[i] : false;
    return true;
}

/* An acc scratch buffer of n elements, zeroed or not. */
static tn_status acc_alloc(tn_dtype acc, int64_t n, bool zero, void **out) {
    size_t bytes = (size_t)(n > 0 ? n : 1) * (size_t)tn_dtype_itemsize(acc);
    *out = zero ? calloc(1, bytes) : malloc(bytes);
    if (!*out) return tn_error(TN_ERR_NO_MEMORY, "out of memory allocating %lld elements", (long long)n);
    return TN_OK;
}

/* tn_nn_out_begin, then zero the acc buffer when the kernel accumulates into it. */
static tn_status out_begin(tn_tensor *out, tn_dtype acc, bool zero, tn_nn_buf *b) {
    TN_TRY(tn_nn_out_begin(out, acc, b));
    if (zero && b->data) memset(b->data, 0, (size_t)tn_tensor_numel(out) * (size_t)tn_dtype_itemsize(acc));
    return TN_OK;
}

/* NotImplementedError "\"<kernel>\" not implemented for '<dtype>'" (upstream's dispatch
 * macros) unless t is Half, BFloat16, Float or Double. */
static tn_status check_float(const tn_tensor *t, const char *kernel) {
    if (tn_nn_is_float(t->dtype)) return TN_OK;
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, dname(t->dtype));
}

static bool same_sizes(const tn_tensor *a, const tn_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i]) return false;
    return true;
}

static bool any_meta(int n, tn_tensor *const *ts) {
    for (int i = 0; i < n; i++)
        if (ts[i] && tn_tensor_is_meta(ts[i])) return true;
    return false;
}

/* ================================ convolution ========================================= */

typedef struct conv_geom {
    int nsp;
    int64_t N, C, H, W, O, Cg, G, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw;
} conv_geom;

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

/* A contiguous acc-dtype CPU tensor holding the values of t (shape of t). */
static tn_status acc_tensor(const tn_tensor *t, tn_dtype acc, tn_tensor **out) {
    tn_tensor *r;
    TN_TRY(tn_tensor_empty(t->ndim, t->sizes, acc, tn_device_cpu(), &r));
    tn_nn_buf b;
    tn_status st = tn_nn_load(t, acc, &b);
    if (st != TN_OK) { tn_tensor_release(r); return st; }
    memcpy(tn_tensor_data(r), b.data, (size_t)tn_tensor_numel(t) * (size_t)tn_dtype_itemsize(acc));
    tn_nn_buf_free(&b);
    *out = r;
    return TN_OK;
}

/* r = a · b through the door, with a and b 2-d views (any strides) of acc tensors. */
static tn_status mm_views(tn_tensor *as, int64_t aoff, int64_t ar, int64_t ac, int64_t ars, int64_t acs,
                          tn_tensor *bs, int64_t boff, int64_t br, int64_t bc, int64_t brs, int64_t bcs, tn_tensor **r) {
    int64_t asz[2] = {ar, ac}, ast[2] = {ars, acs}, bsz[2] = {br, bc}, bst[2] = {brs, bcs};
    tn_tensor *a = tn_tensor_new_view(as->storage, as->offset + aoff, 2, asz, ast, as->dtype);
    tn_tensor *b = tn_tensor_new_view(bs->storage, bs->offset + boff, 2, bsz, bst, bs->dtype);
    tn_status st = (a && b) ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "out of memory creating a view");
    if (st == TN_OK) {
        tn_value args[2] = {tn_value_tensor(a), tn_value_tensor(b)};
        st = tn_nn_call1(TN_OP_mm, args, r);
    }
    if (a) tn_tensor_release(a);
    if (b) tn_tensor_release(b);
    return st;
}

/* dst += src (n acc elements of a contiguous result tensor). */
static tn_status add_result(tn_dtype acc, void *dst, tn_tensor *r, int64_t n) {
    tn_nn_buf b;
    TN_TRY(tn_nn_load(r, acc, &b));
    if (acc == TN_DTYPE_FLOAT32) {
        float *d = dst;
        const float *s = b.data;
        for (int64_t i = 0; i < n; i++) d[i] += s[i];
    } else {
        double *d = dst;
        const double *s = b.data;
        for (int64_t i = 0; i < n; i++) d[i] += s[i];
    }
    tn_nn_buf_free(&b);
    return TN_OK;
}

/* Gradient of a non-transposed convolution w.r.t. input (col2im of Wᵀ·g), weight (g·colᵀ
 * summed over the batch) and bias (g summed over batch and space), in the acc dtype. */
static tn_status conv_backward_run(tn_tensor *gy, tn_tensor *x, tn_tensor *w, const conv_geom *q, tn_tensor *gx,
                                   tn_tensor *gw, tn_tensor *gb) {
    tn_dtype acc = tn_nn_acc(x->dtype);
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    int64_t N = q->N, C = q->C, G = q->G, Cg = q->Cg, O = q->O, Og = O / G;
    int64_t K = Cg * q->kh * q->kw, P = q->oh * q->ow, HW = q->H * q->W;
    tn_tensor *gyt = NULL, *wt = NULL, *col = NULL, *xt = NULL;
    tn_nn_buf bgx = {0}, bgw = {0}, bgb = {0};
    tn_status st = acc_tensor(gy, acc, &gyt);
    if (st == TN_OK && gx) st = acc_tensor(w, acc, &wt);
    if (st == TN_OK && gw) {
        int64_t csz[2] = {K, P};
        st = acc_tensor(x, acc, &xt);
        if (st == TN_OK) st = tn_tensor_empty(2, csz, acc, tn_device_cpu(), &col);
    }
    if (st == TN_OK && gx) st = out_begin(gx, acc, true, &bgx);
    if (st == TN_OK && gw) st = out_begin(gw, acc, true, &bgw);
    if (st == TN_OK && gb) st = out_begin(gb, acc, true, &bgb);
    if (st != TN_OK) goto done;
    for (int64_t n = 0; n < N && st == TN_OK; n++)
        for (int64_t g = 0; g < G && st == TN_OK; g++) {
            int64_t gyoff = (n * O + g * Og) * P;
            if (gx) {
                /* col = W_gᵀ [K, Og] · gy_ng [Og, P], scattered back into the image. */
                tn_tensor *r = NULL;
                st = mm_views(wt, g * Og * K, K, Og, 1, K, gyt, gyoff, Og, P, P, 1, &r);
                if (st != TN_OK) break;
                tn_nn_buf br;
                st = tn_nn_load(r, acc, &br);
                if (st == TN_OK) {
                    char *dst = (char *)bgx.data + (size_t)((n * C + g * Cg) * HW) * isz;
                    NN_KERNEL(acc, col2im, (void *)dst, (const void *)br.data, Cg, q->H, q->W, q->kh, q->kw, q->oh,
                              q->ow, q->sh, q->sw, q->ph, q->pw, q->dh, q->dw);
                    tn_nn_buf_free(&br);
                }
                tn_tensor_release(r);
                if (st != TN_OK) break;
            }
            if (gw) {
                /* gw_g [Og, K] += gy_ng [Og, P] · col_ngᵀ [P, K] */
                const char *xg = (const char *)tn_tensor_data(xt) + (size_t)((n * C + g * Cg) * HW) * isz;
                NN_KERNEL(acc, im2col, tn_tensor_data(col), (const void *)xg, Cg, q->H, q->W, q->kh, q->kw, q->oh,
                          q->ow, q->sh, q->sw, q->ph, q->pw, q->dh, q->dw);
                tn_tensor *r = NULL;
                st = mm_views(gyt, gyoff, Og, P, P, 1, col, 0, P, K, 1, P, &r);
                if (st != TN_OK) break;
                st = add_result(acc, (char *)bgw.data + (size_t)(g * Og * K) * isz, r, Og * K);
                tn_tensor_release(r);
            }
        }
    if (st == TN_OK && gb) {
        const char *gd = tn_tensor_data(gyt);
        for (int64_t o = 0; o < O; o++) {
            double s = 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t j = 0; j < P; j++) {
                    int64_t k = (n * O + o) * P + j;
                    s += acc == TN_DTYPE_FLOAT32 ? ((const float *)(const void *)gd)[k] : ((const double *)(const void *)gd)[k];
                }
            if (acc == TN_DTYPE_FLOAT32) ((float *)bgb.data)[o] = (float)s;
            else ((double *)bgb.data)[o] = s;
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
    tn_status st = acc_tensor(gy, acc, &gyt);
    if (st == TN_OK && gx) st = acc_tensor(w, acc, &wt);
    if (st == TN_OK && gw) st = acc_tensor(x, acc, &xt);
    if (st == TN_OK && (gx || gw)) st = tn_tensor_empty(2, csz, acc, tn_device_cpu(), &col);
    if (st == TN_OK && gx) st = out_begin(gx, acc, true, &bgx);
    if (st == TN_OK && gw) st = out_begin(gw, acc, true, &bgw);
    if (st == TN_OK && gb) st = out_begin(gb, acc, true, &bgb);
    if (st != TN_OK) goto done;
    for (int64_t n = 0; n < N && st == TN_OK && (gx || gw); n++)
        for (int64_t g = 0; g < G && st == TN_OK; g++) {
            const char *gimg = (const char *)tn_tensor_data(gyt) + (size_t)((n * Cout + g * Cog) * OHW) * isz;
            NN_KERNEL(acc, im2col, tn_tensor_data(col), (const void *)gimg, Cog, OH, OW, q->kh, q->kw, q->H, q->W, q->sh,
                      q->sw, q->ph, q->pw, q->dh, q->dw);
            int64_t xoff = (n * Cin + g * Cig) * HW;
            if (gx) {
                tn_tensor *r = NULL;
                st = mm_views(wt, g * Cig * K, Cig, K, K, 1, col, 0, K, HW, HW, 1, &r);
                if (st != TN_OK) break;
                st = add_result(acc, (char *)bgx.data + (size_t)xoff * isz, r, Cig * HW);
                tn_tensor_release(r);
                if (st != TN_OK) break;
            }
            if (gw) {
                tn_tensor *r = NULL;
                st = mm_views(xt, xoff, Cig, HW, HW, 1, col, 0, HW, K, 1, HW, &r);
                if (st != TN_OK) break;
                st = add_result(acc, (char *)bgw.data + (size_t)(g * Cig * K) * isz, r, Cig * K);
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
                        dname(x->dtype), dname(w->dtype));
    TN_TRY(check_float(x, "convolution_backward"));
    int64_t esz[4] = {q.N, q.O, nsp == 2 ? q.oh : q.ow, q.ow};
    bool ok = gy->ndim == nsp + 2 && q.oh > 0 && q.ow > 0;
    for (int i = 0; ok && i < nsp + 2; i++) ok = gy->sizes[i] == esz[i];
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "Expected grad_output of size %s for input %s and weight %s, but got %s",
                        tn_format_sizes(nsp + 2, esz, (char[256]){0}, 256), TN_NN_FMT(x, b1), TN_NN_FMT(w, b2),
                        TN_NN_FMT(gy, (char[256]){0}));
    tn_tensor *gx = NULL, *gw = NULL, *gb = NULL;
    tn_status st = TN_OK;
    if (mask_at(&args[10], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && mask_at(&args[10], 1)) st = tn_nn_empty(w->ndim, w->sizes, w->dtype, w, &gw);
    if (st == TN_OK && mask_at(&args[10], 2)) st = tn_nn_empty(1, &q.O, gy->dtype, gy, &gb);
    tn_tensor *all[3] = {gy, x, w};
    if (st == TN_OK && !any_meta(3, all) && (gx || gw || gb)) {
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
    rets[0] = gx ? tn_value_tensor(gx) : vnone();
    rets[1] = gw ? tn_value_tensor(gw) : vnone();
    rets[2] = gb ? tn_value_tensor(gb) : vnone();
    return TN_OK;
}

/* ---- transposed convolution forward: the input gradient of a convolution ------------- */

/* y [N, Cout, OH, OW] for input x [N, Cin, H, W], weight [Cin, Cout/G, kh, kw]: per
 * (n, g) col = W_gᵀ · x_ng, scattered by col2im into the output image, plus the bias. */
static tn_status conv_transposed_run(tn_tensor *x, tn_tensor *w, tn_tensor *bias, const conv_geom *q, int64_t OH,
                                     int64_t OW, tn_tensor *y) {
    tn_dtype acc = tn_nn_acc(x->dtype);
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    int64_t N = q->N, G = q->G, Cin = q->C, Cig = Cin / G, Cog = w->sizes[1], Cout = Cog * G;
    int64_t K = Cog * q->kh * q->kw, HW = q->H * q->W, OHW = OH * OW;
    tn_tensor *xt = NULL, *wt = NULL;
    tn_nn_buf bb = {0}, by = {0};
    tn_status st = acc_tensor(x, acc, &xt);
    if (st == TN_OK) st = acc_tensor(w, acc, &wt);
    if (st == TN_OK && bias) st = tn_nn_load(bias, acc, &bb);
    if (st == TN_OK) st = out_begin(y, acc, true, &by);
    for (int64_t n = 0; n < N && st == TN_OK; n++)
        for (int64_t g = 0; g < G && st == TN_OK; g++) {
            tn_tensor *r = NULL;
            st = mm_views(wt, g * Cig * K, K, Cig, 1, K, xt, (n * Cin + g * Cig) * HW, Cig, HW, HW, 1, &r);
            if (st != TN_OK) break;
            tn_nn_buf br;
            st = tn_nn_load(r, acc, &br);
            if (st == TN_OK) {
                char *dst = (char *)by.data + (size_t)((n * Cout + g * Cog) * OHW) * isz;
                NN_KERNEL(acc, col2im, (void *)dst, (const void *)br.data, Cog, OH, OW, q->kh, q->kw, q->H, q->W, q->sh,
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
    if (x->dtype != w->dtype || (bias && bias->dtype != x->dtype))
        return tn_error(TN_ERR_RUNTIME, "Input type (%s) and weight type (%s) should be the same", dname(x->dtype),
                        dname(w->dtype));
    TN_TRY(check_float(x, "conv_transpose"));
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
    if (!any_meta(3, all) && tn_tensor_numel(y) > 0) {
        tn_status st = conv_transposed_run(x, w, bias, &q, OH, OW, y);
        if (st != TN_OK) { tn_tensor_release(y); return st; }
    }
    *out = y;
    return TN_OK;
}

/* conv_transpose1d / conv_transpose2d.input(input, weight, bias?, stride, padding,
 * output_padding, groups, dilation): an unbatched input [Cin, ...] is run as a batch of one. */
static tn_status conv_transpose_nd(const tn_value *args, tn_value *rets, int nsp) {
    tn_tensor *x = args[0].u.t, *w = args[1].u.t, *in = x, *tmp = NULL;
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
    tn_status st = tn_nn_conv_transposed(in, w, tn_nn_opt_tensor(&args[2]), &args[3], &args[4], &args[5], &args[7],
                                         args[6].u.i, &y);
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

/* ================================ pooling ============================================== */

/* Upstream's pooling_output_shape (as nn_pool.c). */
static int64_t pool_out(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
    int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    int64_t o = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
    if (ceil_mode && (o - 1) * stride >= in + pad) o--;
    return o;
}

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
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `gradOutput` but got dtype %s", dname(x->dtype),
                        dname(gy->dtype));
    return check_float(x, what);
}

/* The plane form of a pooling gradient: gx zeros like x, kernel scatters gy into it. */
typedef void (*plane_bwd_fn)(tn_dtype acc, void *gx, const void *gy, int64_t P, int64_t H, int64_t W, int64_t oh,
                             int64_t ow, void *ctx);

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
        if (st == TN_OK) st = out_begin(gx, acc, true, &bx);
        if (st != TN_OK) { tn_nn_buf_free(&bg); tn_tensor_release(gx); return st; }
        fn(acc, bx.data, bg.data, P, H, W, oh, ow, ctx);
        tn_nn_out_finish(gx, acc, &bx);
        tn_nn_buf_free(&bg);
    }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

typedef struct max_ctx { const int64_t *idx; } max_ctx;

static void run_max_bwd(tn_dtype acc, void *gx, const void *gy, int64_t P, int64_t H, int64_t W, int64_t oh,
                        int64_t ow, void *vctx) {
    max_ctx *c = vctx;
    NN_KERNEL(acc, max_pool2d_backward, gx, gy, c->idx, P, H * W, oh * ow);
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
    int64_t oh = pool_out(H, a.kh, a.ph, a.sh, a.dh, ceil_mode), ow = pool_out(W, a.kw, a.pw, a.sw, a.dw, ceil_mode);
    TN_TRY(check_grad_planes(gy, x, oh, ow, "max_pool2d_with_indices_backward"));
    if (!same_sizes(idx, gy)) {
        char b1[256], b2[256];
        return tn_error(TN_ERR_RUNTIME, "Expected indices of size %s but got %s", TN_NN_FMT(gy, b1), TN_NN_FMT(idx, b2));
    }
    if (idx->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type Long but found %s", dname(idx->dtype));
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

static void run_avg_bwd(tn_dtype acc, void *gx, const void *gy, int64_t P, int64_t H, int64_t W, int64_t oh,
                        int64_t ow, void *vctx) {
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
    int64_t oh = pool_out(H, c.a.kh, c.a.ph, c.a.sh, 1, ceil_mode), ow = pool_out(W, c.a.kw, c.a.pw, c.a.sw, 1, ceil_mode);
    TN_TRY(check_grad_planes(gy, x, oh, ow, "avg_pool2d_backward"));
    return plane_backward(gy, x->ndim, x->sizes, x->dtype, run_avg_bwd, &c, rets);
}

static void run_adaptive_bwd(tn_dtype acc, void *gx, const void *gy, int64_t P, int64_t H, int64_t W, int64_t oh,
                             int64_t ow, void *vctx) {
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
    if (gy->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `grad_output` but got dtype %s", dname(x->dtype),
                        dname(gy->dtype));
    TN_TRY(check_float(x, "adaptive_avg_pool2d_backward_cpu"));
    return plane_backward(gy, x->ndim, x->sizes, x->dtype, run_adaptive_bwd, NULL, rets);
}

/* ================================ upsampling =========================================== */

/* Upstream's compute_scales_value: 1/scale when a positive scale is given, else in/out. */
static double scales_value(const tn_value *s, int64_t in, int64_t out, bool as_float) {
    double r = (s && s->tag == TN_V_DOUBLE && s->u.d > 0) ? 1.0 / s->u.d : (double)in / (double)out;
    return as_float ? (double)(float)r : r;
}

typedef struct up_ctx { double rh, rw; int mode; bool align; } up_ctx;

static void run_up_bwd(tn_dtype acc, void *gx, const void *gy, int64_t P, int64_t H, int64_t W, int64_t oh, int64_t ow,
                       void *vctx) {
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
    TN_TRY(check_float(gy, mode == 0 ? "upsample_nearest2d_backward" : "upsample_bilinear2d_backward"));
    bool f = gy->dtype != TN_DTYPE_FLOAT64;
    up_ctx c = {0, 0, mode, align};
    if (mode == 0) {
        c.rh = scales_value(sh, is[2], oh, true);
        c.rw = scales_value(sw, is[3], ow, true);
    } else if (align) {
        c.rh = oh > 1 ? (f ? (double)((float)(is[2] - 1) / (float)(oh - 1)) : (double)(is[2] - 1) / (double)(oh - 1)) : 0;
        c.rw = ow > 1 ? (f ? (double)((float)(is[3] - 1) / (float)(ow - 1)) : (double)(is[3] - 1) / (double)(ow - 1)) : 0;
    } else {
        c.rh = scales_value(sh, is[2], oh, f);
        c.rw = scales_value(sw, is[3], ow, f);
    }
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

/* Loads an optional float tensor into acc (data NULL when absent). */
static tn_status load_opt(const tn_tensor *t, tn_dtype acc, tn_nn_buf *b) {
    b->data = NULL;
    b->owned = false;
    return t ? tn_nn_load(t, acc, b) : TN_OK;
}

/* Releases a partially built result triple on failure. */
static void release3(tn_tensor *a, tn_tensor *b, tn_tensor *c) {
    if (a) tn_tensor_release(a);
    if (b) tn_tensor_release(b);
    if (c) tn_tensor_release(c);
}

static tn_status check_same_shape(const tn_tensor *gy, const tn_tensor *x, const char *what) {
    if (same_sizes(gy, x)) return TN_OK;
    char b1[256], b2[256];
    return tn_error(TN_ERR_RUNTIME, "%s: expected grad_out of size %s but got %s", what, TN_NN_FMT(x, b1),
                    TN_NN_FMT(gy, b2));
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
    TN_TRY(check_same_shape(gy, x, "batch_norm_backward"));
    TN_TRY(check_float(x, "batch_norm_backward_cpu"));
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
    if (mask_at(&args[9], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && mask_at(&args[9], 1)) st = tn_nn_empty(1, &C, pdt, x, &gw);
    if (st == TN_OK && mask_at(&args[9], 2)) st = tn_nn_empty(1, &C, pdt, x, &gb);
    tn_tensor *all[5] = {gy, x, w, mean_t, var_t};
    if (st == TN_OK && !any_meta(5, all) && tn_tensor_numel(x) > 0) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bx = {0}, bw = {0}, bm = {0}, bv = {0}, ogx = {0}, ogw = {0}, ogb = {0};
        void *invstd = NULL;
        st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = load_opt(w, acc, &bw);
        if (st == TN_OK) st = tn_nn_load(mean_t, acc, &bm);
        if (st == TN_OK) st = tn_nn_load(var_t, acc, &bv);
        if (st == TN_OK) st = acc_alloc(acc, C, false, &invstd);
        if (st == TN_OK && gx) st = out_begin(gx, acc, false, &ogx);
        if (st == TN_OK && gw) st = out_begin(gw, acc, false, &ogw);
        if (st == TN_OK && gb) st = out_begin(gb, acc, false, &ogb);
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
            NN_KERNEL(acc, batch_norm_backward, ogx.data, ogw.data, ogb.data, bg.data, bx.data, bw.data, bm.data, invstd,
                      N, C, S, train);
            if (gx) tn_nn_out_finish(gx, acc, &ogx);
            if (gw) tn_nn_out_finish(gw, acc, &ogw);
            if (gb) tn_nn_out_finish(gb, acc, &ogb);
        }
        free(invstd);
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&bm); tn_nn_buf_free(&bv);
        tn_nn_buf_free(&ogx); tn_nn_buf_free(&ogw); tn_nn_buf_free(&ogb);
    } else if (st == TN_OK && !any_meta(5, all)) {
        if (gw) memset(tn_tensor_data(gw), 0, (size_t)C * (size_t)tn_dtype_itemsize(gw->dtype));
        if (gb) memset(tn_tensor_data(gb), 0, (size_t)C * (size_t)tn_dtype_itemsize(gb->dtype));
    }
    if (st != TN_OK) { release3(gx, gw, gb); return st; }
    rets[0] = gx ? tn_value_tensor(gx) : vnone();
    rets[1] = gw ? tn_value_tensor(gw) : vnone();
    rets[2] = gb ? tn_value_tensor(gb) : vnone();
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

/* Zeroes a result (a sum over no rows). */
static void zero_tensor(tn_tensor *t) {
    if (t && !tn_tensor_is_meta(t)) memset(tn_tensor_data(t), 0, (size_t)tn_tensor_numel(t) * (size_t)tn_dtype_itemsize(t->dtype));
}

/* aten::native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight?,
 * bias?, output_mask[3]) -> (grad_input, grad_weight, grad_bias) */
tn_status tn_op_native_layer_norm_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *mean = args[3].u.t, *rstd = args[4].u.t;
    tn_tensor *w = tn_nn_opt_tensor(&args[5]), *bias = tn_nn_opt_tensor(&args[6]);
    int64_t M, N;
    int axis;
    TN_TRY(norm_rows(x, &args[2], &M, &N, &axis));
    TN_TRY(check_same_shape(gy, x, "layer_norm_backward"));
    TN_TRY(check_float(x, "LayerNormBackwardKernelImpl"));
    if (tn_tensor_numel(mean) != M || tn_tensor_numel(rstd) != M)
        return tn_error(TN_ERR_RUNTIME, "layer_norm_backward: expected mean and rstd of %lld elements", (long long)M);
    if ((w && tn_tensor_numel(w) != N) || (bias && tn_tensor_numel(bias) != N))
        return tn_error(TN_ERR_RUNTIME, "layer_norm_backward: expected weight and bias of %lld elements", (long long)N);
    const int64_t *nsz = x->sizes + axis;
    int nk = x->ndim - axis;
    tn_tensor *gx = NULL, *gw = NULL, *gb = NULL;
    tn_status st = TN_OK;
    if (mask_at(&args[7], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && mask_at(&args[7], 1) && w) st = tn_nn_empty(nk, nsz, w->dtype, x, &gw);
    if (st == TN_OK && mask_at(&args[7], 2) && bias) st = tn_nn_empty(nk, nsz, bias->dtype, x, &gb);
    tn_tensor *all[5] = {gy, x, mean, rstd, w};
    if (st == TN_OK && !any_meta(5, all) && (gx || gw || gb)) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bx = {0}, bw = {0}, bm = {0}, br = {0}, ogx = {0}, ogw = {0}, ogb = {0};
        double *scratch = malloc((size_t)(2 * N > 0 ? 2 * N : 1) * sizeof(double));
        if (!scratch) st = tn_error(TN_ERR_NO_MEMORY, "out of memory for layer_norm_backward");
        if (st == TN_OK) st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = load_opt(w, acc, &bw);
        if (st == TN_OK) st = tn_nn_load(mean, acc, &bm);
        if (st == TN_OK) st = tn_nn_load(rstd, acc, &br);
        if (st == TN_OK && gx) st = out_begin(gx, acc, false, &ogx);
        if (st == TN_OK && gw) st = out_begin(gw, acc, false, &ogw);
        if (st == TN_OK && gb) st = out_begin(gb, acc, false, &ogb);
        if (st == TN_OK) {
            NN_KERNEL(acc, layer_norm_backward, ogx.data, ogw.data, ogb.data, bg.data, bx.data, bm.data, br.data, bw.data,
                      M, N, scratch);
            if (gx) tn_nn_out_finish(gx, acc, &ogx);
            if (gw) tn_nn_out_finish(gw, acc, &ogw);
            if (gb) tn_nn_out_finish(gb, acc, &ogb);
        }
        free(scratch);
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&bm); tn_nn_buf_free(&br);
        tn_nn_buf_free(&ogx); tn_nn_buf_free(&ogw); tn_nn_buf_free(&ogb);
    }
    if (st != TN_OK) { release3(gx, gw, gb); return st; }
    rets[0] = gx ? tn_value_tensor(gx) : vnone();
    rets[1] = gw ? tn_value_tensor(gw) : vnone();
    rets[2] = gb ? tn_value_tensor(gb) : vnone();
    return TN_OK;
}

/* aten::native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C, HxW, group,
 * output_mask[3]) -> (grad_input, grad_weight, grad_bias) */
tn_status tn_op_native_group_norm_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *mean = args[2].u.t, *rstd = args[3].u.t;
    tn_tensor *w = tn_nn_opt_tensor(&args[4]);
    int64_t N = args[5].u.i, C = args[6].u.i, HxW = args[7].u.i, G = args[8].u.i;
    TN_TRY(check_same_shape(gy, x, "native_group_norm_backward"));
    TN_TRY(check_float(x, "GroupNormBackwardKernelImpl"));
    if (G <= 0 || C % G != 0)
        return tn_error(TN_ERR_RUNTIME, "Expected number of channels in input to be divisible by num_groups, but got "
                                        "input of shape with %lld channels and num_groups=%lld", (long long)C, (long long)G);
    if (N * C * HxW != tn_tensor_numel(x))
        return tn_error(TN_ERR_RUNTIME, "Expected input to have N * C * HxW = %lld elements, but got %lld",
                        (long long)(N * C * HxW), (long long)tn_tensor_numel(x));
    if (tn_tensor_numel(mean) != N * G || tn_tensor_numel(rstd) != N * G)
        return tn_error(TN_ERR_RUNTIME, "Expected mean and rstd to have N * group = %lld elements", (long long)(N * G));
    if (w && tn_tensor_numel(w) != C)
        return tn_error(TN_ERR_RUNTIME, "Expected weight to be a vector of size equal to the number of channels in "
                                        "input, but got weight of shape [%lld] and input of shape with %lld channels",
                        (long long)tn_tensor_numel(w), (long long)C);
    tn_dtype pdt = w ? w->dtype : x->dtype;
    tn_tensor *gx = NULL, *gw = NULL, *gb = NULL;
    tn_status st = TN_OK;
    if (mask_at(&args[9], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && mask_at(&args[9], 1)) st = tn_nn_empty(1, &C, pdt, x, &gw);
    if (st == TN_OK && mask_at(&args[9], 2)) st = tn_nn_empty(1, &C, pdt, x, &gb);
    tn_tensor *all[5] = {gy, x, mean, rstd, w};
    if (st == TN_OK && !any_meta(5, all) && N * C * HxW == 0) {
        zero_tensor(gw);
        zero_tensor(gb);
    } else if (st == TN_OK && !any_meta(5, all) && (gx || gw || gb)) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bx = {0}, bw = {0}, bm = {0}, br = {0}, ogx = {0}, ogw = {0}, ogb = {0};
        double *scratch = malloc((size_t)(2 * N * C) * sizeof(double));
        if (!scratch) st = tn_error(TN_ERR_NO_MEMORY, "out of memory for native_group_norm_backward");
        if (st == TN_OK) st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = load_opt(w, acc, &bw);
        if (st == TN_OK) st = tn_nn_load(mean, acc, &bm);
        if (st == TN_OK) st = tn_nn_load(rstd, acc, &br);
        if (st == TN_OK && gx) st = out_begin(gx, acc, false, &ogx);
        if (st == TN_OK && gw) st = out_begin(gw, acc, false, &ogw);
        if (st == TN_OK && gb) st = out_begin(gb, acc, false, &ogb);
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
    if (st != TN_OK) { release3(gx, gw, gb); return st; }
    rets[0] = gx ? tn_value_tensor(gx) : vnone();
    rets[1] = gw ? tn_value_tensor(gw) : vnone();
    rets[2] = gb ? tn_value_tensor(gb) : vnone();
    return TN_OK;
}

/* aten::_fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight?,
 * output_mask[2]) -> (grad_input, grad_weight) */
tn_status tn_op__fused_rms_norm_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *rstd = args[3].u.t, *w = tn_nn_opt_tensor(&args[4]);
    int64_t M, N;
    int axis;
    TN_TRY(norm_rows(x, &args[2], &M, &N, &axis));
    TN_TRY(check_same_shape(gy, x, "_fused_rms_norm_backward"));
    TN_TRY(check_float(x, "_fused_rms_norm_backward"));
    if (tn_tensor_numel(rstd) != M)
        return tn_error(TN_ERR_RUNTIME, "_fused_rms_norm_backward: expected rstd of %lld elements", (long long)M);
    if (w && tn_tensor_numel(w) != N)
        return tn_error(TN_ERR_RUNTIME, "_fused_rms_norm_backward: expected weight of %lld elements", (long long)N);
    tn_tensor *gx = NULL, *gw = NULL;
    tn_status st = TN_OK;
    if (mask_at(&args[5], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK && mask_at(&args[5], 1) && w) st = tn_nn_empty(x->ndim - axis, x->sizes + axis, w->dtype, x, &gw);
    tn_tensor *all[4] = {gy, x, rstd, w};
    if (st == TN_OK && !any_meta(4, all) && (gx || gw)) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bx = {0}, bw = {0}, br = {0}, ogx = {0}, ogw = {0};
        double *scratch = malloc((size_t)(N > 0 ? N : 1) * sizeof(double));
        if (!scratch) st = tn_error(TN_ERR_NO_MEMORY, "out of memory for _fused_rms_norm_backward");
        if (st == TN_OK) st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = load_opt(w, acc, &bw);
        if (st == TN_OK) st = tn_nn_load(rstd, acc, &br);
        if (st == TN_OK && gx) st = out_begin(gx, acc, false, &ogx);
        if (st == TN_OK && gw) st = out_begin(gw, acc, false, &ogw);
        if (st == TN_OK) {
            NN_KERNEL(acc, rms_norm_backward, ogx.data, ogw.data, bg.data, bx.data, br.data, bw.data, M, N, scratch);
            if (gx) tn_nn_out_finish(gx, acc, &ogx);
            if (gw) tn_nn_out_finish(gw, acc, &ogw);
        }
        free(scratch);
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&br);
        tn_nn_buf_free(&ogx); tn_nn_buf_free(&ogw);
    }
    if (st != TN_OK) { release3(gx, gw, NULL); return st; }
    rets[0] = gx ? tn_value_tensor(gx) : vnone();
    rets[1] = gw ? tn_value_tensor(gw) : vnone();
    return TN_OK;
}

/* ================================ softmax ============================================== */

static tn_status softmax_backward(const tn_value *args, tn_value *rets, bool log) {
    tn_tensor *gy = args[0].u.t, *y = args[1].u.t;
    tn_dtype in_dt = args[3].u.dtype;
    int dim;
    TN_TRY(tn_wrap_dim(args[2].u.i, y->ndim, &dim));
    if (!same_sizes(gy, y)) {
        char b1[256], b2[256];
        return tn_error(TN_ERR_RUNTIME, "grad_output %s and output %s must have the same shape", TN_NN_FMT(gy, b1),
                        TN_NN_FMT(y, b2));
    }
    if (gy->dtype != in_dt)
        return tn_error(TN_ERR_RUNTIME, "%s backward with half to float conversion is not supported on CPU",
                        log ? "log_softmax" : "softmax");
    if (y->dtype != gy->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected output and grad_output to have the same dtype, but got %s and %s",
                        dname(y->dtype), dname(gy->dtype));
    TN_TRY(check_float(gy, log ? "log_softmax_backward_lastdim" : "softmax_backward_lastdim"));
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
        if (st == TN_OK) st = out_begin(gx, acc, false, &ob);
        if (st == TN_OK) {
            NN_KERNEL(acc, softmax_backward, ob.data, bg.data, by.data, outer, D, inner, log);
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
        bool ok = two_d ? same_sizes(gy, target) : (gy->ndim == 1 && gy->sizes[0] == N);
        if (!ok)
            return tn_error(TN_ERR_RUNTIME, "Expected a tensor of size %s but got %s", TN_NN_FMT(target, b1),
                            TN_NN_FMT(gy, b2));
    } else if (tn_tensor_numel(gy) != 1 || gy->ndim > 1) {
        return tn_error(TN_ERR_RUNTIME, "Expected a single element grad_output tensor, but got: %s", TN_NN_FMT(gy, b1));
    }
    if (target->dtype != TN_DTYPE_INT64 && target->dtype != TN_DTYPE_UINT8)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type Long but found %s", dname(target->dtype));
    TN_TRY(check_float(x, two_d ? "nll_loss2d_backward_out_frame" : "nll_loss_backward_out_frame"));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx));
    tn_tensor *all[5] = {gy, x, target, w, tw};
    if (!any_meta(5, all) && tn_tensor_numel(gx) > 0) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bt = {0}, bw = {0}, btw = {0}, ob = {0};
        tn_status st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load_index(target, &bt);
        if (st == TN_OK) st = load_opt(w, acc, &bw);
        if (st == TN_OK) st = tn_nn_load(tw, acc, &btw);
        if (st == TN_OK) {
            const int64_t *tv = bt.data;
            for (int64_t i = 0; i < N * S; i++)
                if (tv[i] != ignore && (tv[i] < 0 || tv[i] >= C)) {
                    st = tn_error(TN_ERR_INDEX, "Target %lld is out of bounds.", (long long)tv[i]);
                    break;
                }
        }
        if (st == TN_OK) st = out_begin(gx, acc, false, &ob);
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
                                        "types: Long, Int; but got %s instead", dname(idx->dtype));
    int64_t n = tn_tensor_numel(idx), D = gy->ndim ? gy->sizes[gy->ndim - 1] : 1;
    bool ok = gy->ndim == idx->ndim + 1;
    for (int i = 0; ok && i < idx->ndim; i++) ok = gy->sizes[i] == idx->sizes[i];
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "embedding_dense_backward: grad_output %s does not match indices %s plus the "
                                        "embedding dimension", TN_NN_FMT(gy, b1), TN_NN_FMT(idx, b2));
    if (nw < 0) return tn_error(TN_ERR_RUNTIME, "embedding_dense_backward: num_weights must be non-negative");
    TN_TRY(check_float(gy, "embedding_dense_backward_cpu"));
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
        if (st == TN_OK) st = out_begin(gw, acc, true, &ob);
        if (st == TN_OK) {
            NN_KERNEL(acc, embedding_backward, ob.data, bg.data, bi.data, n, D, pad, counts);
            tn_nn_out_finish(gw, acc, &ob);
        }
        free(counts);
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bi); tn_nn_buf_free(&ob);
        if (st != TN_OK) { tn_tensor_release(gw); return st; }
    } else if (!tn_tensor_is_meta(gy)) {
        zero_tensor(gw);
    }
    rets[0] = tn_value_tensor(gw);
    return TN_OK;
}

/* aten::glu_backward(grad_output, self, dim) -> Tensor */
tn_status tn_op_glu_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t;
    char b1[256], b2[256];
    if (x->ndim == 0) return tn_error(TN_ERR_RUNTIME, "glu does not support scalars because halving size must be even");
    int dim;
    TN_TRY(tn_wrap_dim(args[2].u.i, x->ndim, &dim));
    if (x->sizes[dim] % 2 != 0)
        return tn_error(TN_ERR_RUNTIME, "Halving dimension must be even, but dimension %d is size %lld", dim,
                        (long long)x->sizes[dim]);
    bool ok = gy->ndim == x->ndim;
    for (int i = 0; ok && i < x->ndim; i++) ok = gy->sizes[i] == (i == dim ? x->sizes[i] / 2 : x->sizes[i]);
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "glu_backward: grad_output %s does not match input %s halved at dimension %d",
                        TN_NN_FMT(gy, b1), TN_NN_FMT(x, b2), dim);
    TN_TRY(check_float(x, "glu_backward_cpu"));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx));
    if (!tn_tensor_is_meta(gy) && !tn_tensor_is_meta(x) && tn_tensor_numel(gx) > 0) {
        int64_t outer = 1, half = x->sizes[dim] / 2, inner = 1;
        for (int i = 0; i < dim; i++) outer *= x->sizes[i];
        for (int i = dim + 1; i < x->ndim; i++) inner *= x->sizes[i];
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, bx = {0}, ob = {0};
        tn_status st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = out_begin(gx, acc, false, &ob);
        if (st == TN_OK) {
            NN_KERNEL(acc, glu_backward, ob.data, bg.data, bx.data, outer, half, inner);
            tn_nn_out_finish(gx, acc, &ob);
        }
        tn_nn_buf_free(&bg); tn_nn_buf_free(&bx); tn_nn_buf_free(&ob);
        if (st != TN_OK) { tn_tensor_release(gx); return st; }
    }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* ================================ pointwise gradients ================================== */

/* A Scalar argument as double. */
static double scalar_of(const tn_value *v) {
    switch (v->tag) {
    case TN_V_INT: return (double)v->u.i;
    case TN_V_BOOL: return v->u.b ? 1.0 : 0.0;
    case TN_V_DOUBLE: return v->u.d;
    default: return 0.0;
    }
}

/* A Scalar rounded into dtype and read back (upstream's `scalar.to<scalar_t>()`). */
static double scalar_in(const tn_value *v, tn_dtype dt) {
    unsigned char buf[16];
    if (v->tag == TN_V_INT) tn_cast_store_scalar(buf, dt, 'i', v->u.i, 0, 0);
    else tn_cast_store_scalar(buf, dt, 'f', 0, scalar_of(v), 0);
    return tn_cast_load_double(buf, dt);
}

/* The scalars of one pointwise run: `round` entries are rounded into the computation
 * dtype before the loop reads them. */
typedef struct ewb_scalars {
    int n;
    const tn_value *v[3];
    bool round[3];
} ewb_scalars;

/* Runs a pointwise backward loop over the broadcast, type-promoted inputs. */
static tn_status ewb_run(tn_ewb_op op, const char *kname, int nin, tn_tensor **ins, const ewb_scalars *sc,
                         tn_loop_ctx *ctx, tn_value *rets) {
    tn_iter_config c = tn_iter_config_init(1, nin);
    for (int i = 0; i < nin; i++) c.inputs[i] = ins[i];
    c.promote_inputs_to_common_dtype = true;
    tn_iter it;
    TN_TRY(tn_iter_build(&it, &c));
    tn_loop_fn loop = tn_ewb_loop(op, it.common_dtype);
    if (!loop) {
        tn_dtype d = it.common_dtype;
        tn_iter_release(&it);
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kname, dname(d));
    }
    for (int i = 0; sc && i < sc->n; i++)
        ctx->d[i] = sc->round[i] ? scalar_in(sc->v[i], it.common_dtype) : scalar_of(sc->v[i]);
    tn_iter_for_each(&it, loop, ctx);
    rets[0] = tn_value_tensor(tn_iter_take_output(&it, 0));
    tn_iter_release(&it);
    return TN_OK;
}

static tn_status ewb2(tn_ewb_op op, const char *kname, const tn_value *args, const ewb_scalars *sc, tn_loop_ctx *ctx,
                      tn_value *rets) {
    tn_tensor *ins[2] = {args[0].u.t, args[1].u.t};
    tn_loop_ctx local = {0};
    return ewb_run(op, kname, 2, ins, sc, ctx ? ctx : &local, rets);
}

/* aten::threshold_backward(grad_output, self, threshold) -> Tensor */
tn_status tn_op_threshold_backward(const tn_value *args, tn_value *rets) {
    ewb_scalars sc = {1, {&args[2]}, {true}};
    return ewb2(TN_EWB_threshold, "threshold_cpu", args, &sc, NULL, rets);
}

/* aten::gelu_backward(grad_output, self, *, approximate='none') -> Tensor */
tn_status tn_op_gelu_backward(const tn_value *args, tn_value *rets) {
    bool tanh_mode = false;
    if (args[2].tag == TN_V_STRING) {
        if (strcmp(args[2].u.s.data, "tanh") == 0) tanh_mode = true;
        else if (strcmp(args[2].u.s.data, "none") != 0)
            return tn_error(TN_ERR_RUNTIME, "approximate argument must be either none or tanh.");
    }
    return ewb2(tanh_mode ? TN_EWB_gelu_tanh : TN_EWB_gelu, "GeluBackwardKernelImpl", args, NULL, NULL, rets);
}

/* aten::silu_backward(grad_output, self) -> Tensor */
tn_status tn_op_silu_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_silu, "silu_backward_cpu", args, NULL, NULL, rets);
}
/* aten::sigmoid_backward(grad_output, output) -> Tensor */
tn_status tn_op_sigmoid_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_sigmoid, "sigmoid_backward_cpu", args, NULL, NULL, rets);
}
/* aten::tanh_backward(grad_output, output) -> Tensor */
tn_status tn_op_tanh_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_tanh, "tanh_backward_cpu", args, NULL, NULL, rets);
}

/* aten::hardtanh_backward(grad_output, self, min_val, max_val) -> Tensor */
tn_status tn_op_hardtanh_backward(const tn_value *args, tn_value *rets) {
    ewb_scalars sc = {2, {&args[2], &args[3]}, {true, true}};
    return ewb2(TN_EWB_hardtanh, "hardtanh_backward_cpu", args, &sc, NULL, rets);
}

/* aten::leaky_relu_backward(grad_output, self, negative_slope, self_is_result) -> Tensor */
tn_status tn_op_leaky_relu_backward(const tn_value *args, tn_value *rets) {
    if (args[3].u.b && scalar_of(&args[2]) < 0)
        return tn_error(TN_ERR_RUNTIME, "In-place leakyReLu backward calculation is triggered with a negative slope "
                                        "which is not supported. This is caused by calling in-place forward function "
                                        "with a negative slope, please call out-of-place version instead. File an "
                                        "issue at https://github.com/pytorch/pytorch if you do require supporting "
                                        "in-place leakRelu backward calculation with negative slope");
    ewb_scalars sc = {1, {&args[2]}, {false}};
    return ewb2(TN_EWB_leaky_relu, "leaky_relu_backward_cpu", args, &sc, NULL, rets);
}

/* aten::elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result) -> Tensor */
tn_status tn_op_elu_backward(const tn_value *args, tn_value *rets) {
    double alpha = scalar_of(&args[1]), scale = scalar_of(&args[2]), input_scale = scalar_of(&args[3]);
    bool is_result = args[4].u.b;
    if (is_result && alpha < 0)
        return tn_error(TN_ERR_RUNTIME, "In-place elu backward calculation is triggered with a negative slope which is "
                                        "not supported. This is caused by calling in-place forward function with a "
                                        "negative slope, please call out-of-place version instead.");
    tn_tensor *ins[2] = {args[0].u.t, args[5].u.t};
    tn_loop_ctx ctx = {0};
    ctx.mode = is_result;
    /* negcoef = alpha·scale, poscoef = scale, negiptcoef = input_scale (in the opmath type) */
    tn_value va = tn_value_double(alpha * scale), vs = tn_value_double(scale), vi = tn_value_double(input_scale);
    ewb_scalars sc = {3, {&va, &vs, &vi}, {false, false, false}};
    return ewb_run(TN_EWB_elu, "elu_backward_cpu", 2, ins, &sc, &ctx, rets);
}

/* aten::softplus_backward(grad_output, self, beta, threshold) -> Tensor */
tn_status tn_op_softplus_backward(const tn_value *args, tn_value *rets) {
    ewb_scalars sc = {2, {&args[2], &args[3]}, {false, false}};
    return ewb2(TN_EWB_softplus, "softplus_backward_cpu", args, &sc, NULL, rets);
}
/* aten::hardswish_backward(grad_output, self) -> Tensor */
tn_status tn_op_hardswish_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_hardswish, "hardswish_backward_cpu", args, NULL, NULL, rets);
}
/* aten::hardsigmoid_backward(grad_output, self) -> Tensor */
tn_status tn_op_hardsigmoid_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_hardsigmoid, "hardsigmoid_backward_cpu", args, NULL, NULL, rets);
}

/* ================================ pointwise losses ===================================== */

static tn_status check_reduction(int64_t r) {
    if (r < 0 || r > 2) return tn_error(TN_ERR_VALUE, "%lld is not a valid value for reduction", (long long)r);
    return TN_OK;
}

/* r converted to dtype (a new tensor with r's layout; r released), as upstream writes loss
 * gradients into a grad_input shaped and typed like self. */
static tn_status cast_result(tn_tensor **r, tn_dtype dtype) {
    tn_tensor *src = *r, *dst;
    if (src->dtype == dtype) return TN_OK;
    TN_TRY(tn_tensor_empty_like(src, dtype, &dst));
    if (!tn_tensor_is_meta(src)) {
        tn_loop_fn loop = tn_cast_loop(src->dtype, dtype);
        tn_iter_config c = tn_iter_config_init(1, 1);
        c.outputs[0] = dst;
        c.inputs[0] = src;
        c.check_all_same_dtype = false;
        c.check_mem_overlap = false;
        tn_iter it;
        tn_status st = loop ? tn_iter_build(&it, &c)
                            : tn_error(TN_ERR_NOT_IMPLEMENTED, "conversion from %s to %s is not implemented by torchnative",
                                       dname(src->dtype), dname(dtype));
        if (st != TN_OK) { tn_tensor_release(dst); return st; }
        tn_iter_for_each(&it, loop, NULL);
        tn_iter_release(&it);
    }
    tn_tensor_release(src);
    *r = dst;
    return TN_OK;
}

/* Loss gradient grad_output × f(self, target) with norm = base / numel under 'mean'. */
static tn_status loss_backward(tn_ewb_op op, const char *kname, const tn_value *args, double base, const tn_value *param,
                               tn_value *rets) {
    tn_tensor *ins[3] = {args[0].u.t, args[1].u.t, args[2].u.t};
    int64_t r = args[3].u.i;
    TN_TRY(check_reduction(r));
    int64_t n = tn_tensor_numel(args[1].u.t);
    tn_value vn = tn_value_double(r == 1 ? base / (double)n : base);
    ewb_scalars sc = {param ? 2 : 1, {&vn, param}, {false, false}};
    tn_loop_ctx ctx = {0};
    TN_TRY(ewb_run(op, kname, 3, ins, &sc, &ctx, rets));
    tn_status st = cast_result(&rets[0].u.t, args[1].u.t->dtype);
    if (st != TN_OK) tn_tensor_release(rets[0].u.t);
    return st;
}

/* aten::mse_loss_backward(grad_output, self, target, reduction) -> Tensor */
tn_status tn_op_mse_loss_backward(const tn_value *args, tn_value *rets) {
    return loss_backward(TN_EWB_mse, "mse_backward_cpu", args, 2.0, NULL, rets);
}

/* aten::smooth_l1_loss_backward(grad_output, self, target, reduction, beta) -> Tensor */
tn_status tn_op_smooth_l1_loss_backward(const tn_value *args, tn_value *rets) {
    if (args[4].u.d < 0) return tn_error(TN_ERR_RUNTIME, "smooth_l1_loss does not support negative values for beta.");
    return loss_backward(TN_EWB_smooth_l1, "smooth_l1_backward_cpu_out", args, 1.0, &args[4], rets);
}

/* aten::huber_loss_backward(grad_output, self, target, reduction, delta) -> Tensor */
tn_status tn_op_huber_loss_backward(const tn_value *args, tn_value *rets) {
    if (args[4].u.d <= 0) return tn_error(TN_ERR_RUNTIME, "huber_loss does not support non-positive values for delta.");
    return loss_backward(TN_EWB_huber, "huber_backward_cpu_out", args, 1.0, &args[4], rets);
}

/* aten::binary_cross_entropy_backward(grad_output, self, target, weight?, reduction) -> Tensor:
 * grad·(x - t) / max((1 - x)·x, 1e-12), then times weight, then / numel under 'mean'
 * (three steps, each rounded, as upstream). */
tn_status tn_op_binary_cross_entropy_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *ins[3] = {args[0].u.t, args[1].u.t, args[2].u.t}, *w = tn_nn_opt_tensor(&args[3]);
    int64_t r = args[4].u.i;
    TN_TRY(check_reduction(r));
    tn_loop_ctx ctx = {0};
    tn_value v;
    TN_TRY(ewb_run(TN_EWB_bce, "binary_cross_entropy_backward", 3, ins, NULL, &ctx, &v));
    tn_tensor *g = v.u.t;
    if (w) {
        tn_value a[2] = {tn_value_tensor(g), tn_value_tensor(w)};
        tn_tensor *m = NULL;
        tn_status st = tn_nn_call1(TN_OP_mul_Tensor, a, &m);
        tn_tensor_release(g);
        if (st != TN_OK) return st;
        g = m;
    }
    if (r == 1) {
        tn_value a[2] = {tn_value_tensor(g), tn_value_int(tn_tensor_numel(args[1].u.t))};
        tn_tensor *d = NULL;
        tn_status st = tn_nn_call1(TN_OP_div_Scalar, a, &d);
        tn_tensor_release(g);
        if (st != TN_OK) return st;
        g = d;
    }
    tn_status st = cast_result(&g, args[1].u.t->dtype);
    if (st != TN_OK) { tn_tensor_release(g); return st; }
    rets[0] = tn_value_tensor(g);
    return TN_OK;
}

/* aten::native_dropout_backward(grad_output, mask, scale) -> Tensor: grad · mask · scale
 * (any mask dtype, as upstream's CPU kernel). */
tn_status tn_op_native_dropout_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *g = args[0].u.t, *mask = args[1].u.t;
    tn_tensor *ins[2] = {g, mask};
    tn_loop_ctx ctx = {0};
    tn_value vs = tn_value_double(args[2].u.d);
    ewb_scalars sc = {1, {&vs}, {false}};
    TN_TRY(ewb_run(TN_EWB_dropout, "masked_scale", 2, ins, &sc, &ctx, rets));
    tn_status st = cast_result(&rets[0].u.t, g->dtype);
    if (st != TN_OK) tn_tensor_release(rets[0].u.t);
    return st;
}

/* aten::softshrink_backward(grad_output, self, lambd) -> Tensor */
tn_status tn_op_softshrink_backward(const tn_value *args, tn_value *rets) {
    ewb_scalars sc = {1, {&args[2]}, {false}};
    return ewb2(TN_EWB_shrink, "shrink_backward_cpu", args, &sc, NULL, rets);
}
/* aten::hardshrink_backward(grad_out, self, lambd) -> Tensor */
tn_status tn_op_hardshrink_backward(const tn_value *args, tn_value *rets) {
    ewb_scalars sc = {1, {&args[2]}, {false}};
    return ewb2(TN_EWB_shrink, "shrink_backward_cpu", args, &sc, NULL, rets);
}
/* aten::mish_backward(grad_output, self) -> Tensor */
tn_status tn_op_mish_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_mish, "mish_backward_cpu", args, NULL, NULL, rets);
}
/* aten::logit_backward(grad_output, self, eps?) -> Tensor */
tn_status tn_op_logit_backward(const tn_value *args, tn_value *rets) {
    tn_loop_ctx ctx = {0};
    bool has_eps = args[2].tag == TN_V_DOUBLE || args[2].tag == TN_V_INT;
    ctx.mode = has_eps;
    tn_value ve = tn_value_double(has_eps ? tn_nn_opt_double(&args[2], 0) : 0);
    ewb_scalars sc = {1, {&ve}, {false}};
    return ewb2(TN_EWB_logit, "logit_backward_cpu", args, &sc, &ctx, rets);
}

/* Reflection / replication padding gradient of the last 1 or 2 dims. */
static tn_status pad_backward(const tn_value *args, tn_value *rets, int nsp, bool reflect) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t;
    const tn_value *pv = &args[2];
    char b1[256], b2[256];
    if (pv->tag != TN_V_INTLIST || pv->u.ilist.n != 2 * nsp)
        return tn_error(TN_ERR_RUNTIME, "padding size is expected to be %d", 2 * nsp);
    const int64_t *pd = pv->u.ilist.data;
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other "
                                        "non-zero dimensions for input, but got: %s", nsp + 1, nsp + 2, TN_NN_FMT(x, b1));
    for (int i = 0; i < 2 * nsp; i++)
        if (pd[i] < 0)
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::%s_pad%dd_backward with negative padding is not implemented "
                                                    "by torchnative", reflect ? "reflection" : "replication", nsp);
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
        if (i == x->ndim - 1) e = W + pl + pr;
        else if (nsp == 2 && i == x->ndim - 2) e = H + pt + pb;
        ok = gy->sizes[i] == e;
    }
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "gradOutput %s does not match the padded input %s", TN_NN_FMT(gy, b1),
                        TN_NN_FMT(x, b2));
    if (gy->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `gradOutput` but got dtype %s", dname(x->dtype),
                        dname(gy->dtype));
    TN_TRY(check_float(x, reflect ? "reflection_pad2d_backward_cpu" : "replication_pad2d_backward_cpu"));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx));
    if (!tn_tensor_is_meta(gy) && !tn_tensor_is_meta(x) && tn_tensor_numel(gx) > 0) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bg = {0}, ob = {0};
        tn_status st = tn_nn_load(gy, acc, &bg);
        if (st == TN_OK) st = out_begin(gx, acc, true, &ob);
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

/* ================================ attention ============================================ */

/* Gradient of softmax(scale·Q·Kᵀ + mask)·V per (batch, query head) from the forward's
 * logsumexp: P = exp(scale·QKᵀ + mask - lse) (causal: key j > query i gets 0),
 * dV += Pᵀ·dO, dP = dO·Vᵀ, dS = P ∘ (dP - rowsum(dO ∘ O)), dQ = scale·dS·K,
 * dK += scale·dSᵀ·Q; a key head shared by several query heads (GQA) sums theirs. The four
 * products go through aten::mm at the door; the elementwise steps run here in acc. */
typedef struct sdpa_bufs {
    tn_tensor *q, *k, *v, *o, *go, *p; /* acc tensors; p is [L, S] scratch */
    void *lse, *mask;                   /* acc buffers (mask additive, or NULL) */
    int64_t ms[4];
} sdpa_bufs;

static tn_status sdpa_backward_run(const sdpa_bufs *t, int64_t B, int64_t Hq, int64_t Hk, int64_t L, int64_t S,
                                   int64_t E, int64_t Ev, double scale, bool causal, void *gq, void *gk, void *gv) {
    tn_dtype acc = t->q->dtype;
    bool f = acc == TN_DTYPE_FLOAT32;
    int64_t rep = Hq / Hk;
    tn_status st = TN_OK;
    for (int64_t b = 0; b < B && st == TN_OK; b++)
        for (int64_t h = 0; h < Hq && st == TN_OK; h++) {
            int64_t hk = h / rep, qo = (b * Hq + h) * L * E, ko = (b * Hk + hk) * S * E;
            int64_t vo = (b * Hk + hk) * S * Ev, oo = (b * Hq + h) * L * Ev, lo = (b * Hq + h) * L;
            tn_tensor *r = NULL;
            /* P */
            st = mm_views(t->q, qo, L, E, E, 1, t->k, ko, E, S, 1, E, &r);
            if (st != TN_OK) break;
            tn_nn_buf br;
            if ((st = tn_nn_load(r, acc, &br)) != TN_OK) { tn_tensor_release(r); break; }
            void *pd = tn_tensor_data(t->p);
            for (int64_t i = 0; i < L; i++)
                for (int64_t j = 0; j < S; j++) {
                    double s = f ? (double)((const float *)br.data)[i * S + j] : ((const double *)br.data)[i * S + j];
                    double m = 0, l = f ? ((const float *)t->lse)[lo + i] : ((const double *)t->lse)[lo + i];
                    if (t->mask) {
                        int64_t mi = b * t->ms[0] + h * t->ms[1] + i * t->ms[2] + j * t->ms[3];
                        m = f ? ((const float *)t->mask)[mi] : ((const double *)t->mask)[mi];
                    }
                    double pv = (causal && j > i) ? 0.0 : exp(s * scale + m - l);
                    if (pv != pv) pv = 0; /* fully masked row: -inf - lse */
                    if (f) ((float *)pd)[i * S + j] = (float)pv;
                    else ((double *)pd)[i * S + j] = pv;
                }
            tn_nn_buf_free(&br);
            tn_tensor_release(r);
            /* dV += Pᵀ · dO */
            if ((st = mm_views(t->p, 0, S, L, 1, S, t->go, oo, L, Ev, Ev, 1, &r)) != TN_OK) break;
            st = add_result(acc, (char *)gv + (size_t)vo * (size_t)tn_dtype_itemsize(acc), r, S * Ev);
            tn_tensor_release(r);
            if (st != TN_OK) break;
            /* dS = P ∘ (dO·Vᵀ - D) */
            if ((st = mm_views(t->go, oo, L, Ev, Ev, 1, t->v, vo, Ev, S, 1, Ev, &r)) != TN_OK) break;
            if ((st = tn_nn_load(r, acc, &br)) != TN_OK) { tn_tensor_release(r); break; }
            const char *god = tn_tensor_data(t->go), *od = tn_tensor_data(t->o);
            for (int64_t i = 0; i < L; i++) {
                double D = 0;
                for (int64_t e = 0; e < Ev; e++) {
                    int64_t k = oo + i * Ev + e;
                    D += f ? (double)((const float *)(const void *)god)[k] * ((const float *)(const void *)od)[k]
                           : ((const double *)(const void *)god)[k] * ((const double *)(const void *)od)[k];
                }
                for (int64_t j = 0; j < S; j++) {
                    if (f) {
                        float *pp = (float *)pd + i * S + j;
                        *pp = (float)((double)*pp * ((double)((const float *)br.data)[i * S + j] - D) * scale);
                    } else {
                        double *pp = (double *)pd + i * S + j;
                        *pp = *pp * (((const double *)br.data)[i * S + j] - D) * scale;
                    }
                }
            }
            tn_nn_buf_free(&br);
            tn_tensor_release(r);
            /* dQ = dS·K, dK += dSᵀ·Q (scale folded into dS above) */
            if ((st = mm_views(t->p, 0, L, S, S, 1, t->k, ko, S, E, E, 1, &r)) != TN_OK) break;
            st = add_result(acc, (char *)gq + (size_t)qo * (size_t)tn_dtype_itemsize(acc), r, L * E);
            tn_tensor_release(r);
            if (st != TN_OK) break;
            if ((st = mm_views(t->p, 0, S, L, 1, S, t->q, qo, L, E, E, 1, &r)) != TN_OK) break;
            st = add_result(acc, (char *)gk + (size_t)ko * (size_t)tn_dtype_itemsize(acc), r, S * E);
            tn_tensor_release(r);
        }
    return st;
}

/* aten::_scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value,
 * out, logsumexp, dropout_p, is_causal, *, attn_mask?, scale?) -> (grad_query, grad_key,
 * grad_value). Operands [B, H, L|S, E]; a key/value head may serve several query heads. */
tn_status tn_op__scaled_dot_product_flash_attention_for_cpu_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *go = args[0].u.t, *q = args[1].u.t, *k = args[2].u.t, *v = args[3].u.t, *o = args[4].u.t;
    tn_tensor *lse = args[5].u.t, *mask = tn_nn_opt_tensor(&args[8]);
    double dropout_p = args[6].u.d;
    bool causal = args[7].u.b;
    char b1[256], b2[256], b3[256];
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4 || o->ndim != 4 || go->ndim != 4)
        return tn_error(TN_ERR_RUNTIME, "scaled_dot_product_attention_flash_attention_backward: Accept only 4 dims "
                                        "inputs shape of {B, H, T, K}");
    if (dropout_p > 0)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::_scaled_dot_product_flash_attention_for_cpu_backward with "
                                                "dropout_p > 0 is not implemented by torchnative");
    if (q->dtype != k->dtype || q->dtype != v->dtype || go->dtype != q->dtype || o->dtype != q->dtype)
        return tn_error(TN_ERR_RUNTIME, "Expected query, key, value, out and grad_out to have the same dtype");
    TN_TRY(check_float(q, "flash_attention_backward"));
    int64_t B = q->sizes[0], Hq = q->sizes[1], L = q->sizes[2], E = q->sizes[3];
    int64_t Hk = k->sizes[1], S = k->sizes[2], Ev = v->sizes[3];
    bool ok = k->sizes[0] == B && v->sizes[0] == B && k->sizes[3] == E && v->sizes[1] == Hk && v->sizes[2] == S &&
              Hk > 0 && Hq % Hk == 0;
    int64_t osz[4] = {B, Hq, L, Ev};
    for (int i = 0; ok && i < 4; i++) ok = o->sizes[i] == osz[i] && go->sizes[i] == osz[i];
    if (ok) ok = tn_tensor_numel(lse) == B * Hq * L;
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "flash_attention_backward: inconsistent shapes: query %s, key %s, value %s",
                        TN_NN_FMT(q, b1), TN_NN_FMT(k, b2), TN_NN_FMT(v, b3));
    int64_t target[4] = {B, Hq, L, S}, ms[4] = {0, 0, 0, 0};
    if (mask) {
        if (mask->ndim > 4)
            return tn_error(TN_ERR_RUNTIME, "attn_mask of shape %s does not broadcast to the attention scores",
                            TN_NN_FMT(mask, b1));
        int64_t cs[TN_MAX_DIMS];
        tn_contiguous_strides(mask->ndim, mask->sizes, cs);
        for (int i = 0; i < mask->ndim; i++) {
            int md = mask->ndim - 1 - i;
            if (mask->sizes[md] != target[3 - i] && mask->sizes[md] != 1)
                return tn_error(TN_ERR_RUNTIME, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                                                "non-singleton dimension %d",
                                (long long)mask->sizes[md], (long long)target[3 - i], md);
            ms[3 - i] = mask->sizes[md] == 1 ? 0 : cs[md];
        }
    }
    double scale = tn_nn_opt_double(&args[9], NAN);
    if (isnan(scale)) scale = 1.0 / sqrt((double)E);
    tn_tensor *gq = NULL, *gk = NULL, *gv = NULL;
    tn_status st = tn_nn_empty(4, q->sizes, q->dtype, q, &gq);
    if (st == TN_OK) st = tn_nn_empty(4, k->sizes, k->dtype, k, &gk);
    if (st == TN_OK) st = tn_nn_empty(4, v->sizes, v->dtype, v, &gv);
    tn_tensor *all[7] = {go, q, k, v, o, lse, mask};
    if (st == TN_OK && !any_meta(7, all)) {
        tn_dtype acc = tn_nn_acc(q->dtype);
        sdpa_bufs t = {0};
        tn_nn_buf bl = {0}, bm = {0}, ogq = {0}, ogk = {0}, ogv = {0};
        int64_t psz[2] = {L, S};
        st = acc_tensor(q, acc, &t.q);
        if (st == TN_OK) st = acc_tensor(k, acc, &t.k);
        if (st == TN_OK) st = acc_tensor(v, acc, &t.v);
        if (st == TN_OK) st = acc_tensor(o, acc, &t.o);
        if (st == TN_OK) st = acc_tensor(go, acc, &t.go);
        if (st == TN_OK) st = tn_tensor_empty(2, psz, acc, tn_device_cpu(), &t.p);
        if (st == TN_OK) st = tn_nn_is_float(lse->dtype) ? tn_nn_load(lse, acc, &bl)
                                                          : tn_error(TN_ERR_RUNTIME, "logsumexp must be floating point");
        if (st == TN_OK && mask) {
            if (mask->dtype == TN_DTYPE_BOOL) {
                tn_nn_buf mi;
                st = tn_nn_load_index(mask, &mi);
                int64_t n = tn_tensor_numel(mask);
                if (st == TN_OK) st = acc_alloc(acc, n, false, &bm.data);
                if (st == TN_OK) {
                    bm.owned = true;
                    for (int64_t i = 0; i < n; i++) {
                        double m = ((const int64_t *)mi.data)[i] ? 0.0 : -INFINITY;
                        if (acc == TN_DTYPE_FLOAT32) ((float *)bm.data)[i] = (float)m;
                        else ((double *)bm.data)[i] = m;
                    }
                }
                tn_nn_buf_free(&mi);
            } else {
                st = tn_nn_load(mask, acc, &bm);
            }
        }
        if (st == TN_OK) st = out_begin(gq, acc, true, &ogq);
        if (st == TN_OK) st = out_begin(gk, acc, true, &ogk);
        if (st == TN_OK) st = out_begin(gv, acc, true, &ogv);
        if (st == TN_OK && tn_tensor_numel(gq) + tn_tensor_numel(gk) + tn_tensor_numel(gv) > 0) {
            t.lse = bl.data;
            t.mask = mask ? bm.data : NULL;
            memcpy(t.ms, ms, sizeof ms);
            st = sdpa_backward_run(&t, B, Hq, Hk, L, S, E, Ev, scale, causal, ogq.data, ogk.data, ogv.data);
        }
        if (st == TN_OK) {
            tn_nn_out_finish(gq, acc, &ogq);
            tn_nn_out_finish(gk, acc, &ogk);
            tn_nn_out_finish(gv, acc, &ogv);
        }
        tn_nn_buf_free(&bl); tn_nn_buf_free(&bm); tn_nn_buf_free(&ogq); tn_nn_buf_free(&ogk); tn_nn_buf_free(&ogv);
        tn_tensor *ts[6] = {t.q, t.k, t.v, t.o, t.go, t.p};
        for (int i = 0; i < 6; i++)
            if (ts[i]) tn_tensor_release(ts[i]);
    }
    if (st != TN_OK) { release3(gq, gk, gv); return st; }
    rets[0] = tn_value_tensor(gq);
    rets[1] = tn_value_tensor(gk);
    rets[2] = tn_value_tensor(gv);
    return TN_OK;
}
