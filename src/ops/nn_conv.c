/* nn_conv.c — the convolution forward (1-d and 2-d, groups, stride, padding incl.
 * 'same'/'valid', dilation, bias): argument checks and shapes, then im2col of a chunk of
 * images and one GEMM per group, in the opmath dtype. The image batching is shared with
 * the gradients (tn_nnb_conv_images; convolution_backward is in nn_backward_conv.c).
 * Transposed convolution (transposed=True) runs the col2im machinery of the gradients
 * (nn_backward_conv.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/nn.h"
#include "kernels/nn_backward.h"
#include "ops/complex_parts.h"
#include "ops/nn_backward_internal.h"

/* One chunk's images are independent: im2col (to_image false) or col2im (true) of image j
 * between img + j*img_stride and column block j (col + j*P, rows L apart), on the pool. */
typedef struct img_job {
    tn_dtype acc;
    size_t isz;
    const conv_geom *q;
    int64_t ld, img_stride;
    char *img;
    void *col;
    bool to_image;
    int64_t cs; /* channels per item: Cg (whole images) or 1 */
    int64_t ks; /* kernel rows per item (im2col): kh or 1 */
} img_job;

/* Items are whole images, or (image, channel) pairs (cs = 1) when the images are fewer
 * than the threads, and for im2col (image, channel, kernel row) triples (ks = 1): a
 * channel's rows of col and its plane of the image are its own, and so are a kernel row's
 * rows of col (im2col of one kernel row is im2col with kh = 1 and the padding moved by
 * a dh; col2im's kernel rows add into the same image rows, so they stay together). */
static void img_chunk(void *vj, int64_t j0, int64_t j1) {
    const img_job *b = vj;
    const conv_geom *q = b->q;
    const int64_t P = q->oh * q->ow, cs = b->cs, ks = b->ks, rows = q->kh / ks, per = (q->Cg / cs) * rows;
    for (int64_t t = j0; t < j1; t++) {
        const int64_t j = t / per, c0 = (t % per) / rows * cs, a0 = (t % rows) * ks;
        char *img = b->img + (size_t)(j * b->img_stride + c0 * q->H * q->W) * b->isz;
        char *col = (char *)b->col + (size_t)(j * P + (c0 * q->kh + a0) * q->kw * b->ld) * b->isz;
        if (b->to_image)
            NN_KERNEL_VEC(b->acc, col2im, (void *)img, (const void *)col, b->ld, cs, q->H, q->W, q->kh, q->kw, q->oh,
                          q->ow, q->sh, q->sw, q->ph, q->pw, q->dh, q->dw);
        else
            NN_KERNEL_VEC(b->acc, im2col_ld, (void *)col, b->ld, (const void *)img, cs, q->H, q->W, ks, q->kw, q->oh,
                          q->ow, q->sh, q->sw, q->ph - a0 * q->dh, q->pw, q->dh, q->dw);
    }
}

void tn_nnb_conv_images(tn_dtype acc, const conv_geom *q, int64_t ld, int64_t img_stride, void *img, void *col, int64_t n,
                        bool to_image) {
    img_job jb = {acc, (size_t)tn_dtype_itemsize(acc), q, ld, img_stride, img, col, to_image, q->Cg, q->kh};
    /* one image per thread or fewer (a single 224 x 224 image took one thread): by channel,
     * and by kernel row for im2col, when an item's columns are worth a hand-off */
    if (n < tn_get_num_threads() && q->kh * q->kw * q->oh * q->ow >= 4096) {
        jb.cs = 1;
        if (!to_image && q->kw * q->oh * q->ow >= 4096) jb.ks = 1;
    }
    tn_parallel_for(n * (q->Cg / jb.cs) * (q->kh / jb.ks), 1, img_chunk, &jb);
}

/* One group's GEMM result out [Og, L] (rows ld apart) into y's images n0 + [j0, j1), bias added. */
typedef struct scatter_job {
    bool f;
    size_t isz;
    void *y;
    const void *out, *bias;
    int64_t n0, g, O, Og, P, ld;
} scatter_job;

static void scatter_chunk(void *vj, int64_t j0, int64_t j1) {
    const scatter_job *s = vj;
    int64_t P = s->P, Og = s->Og, g = s->g;
    size_t isz = s->isz;
    for (int64_t j = j0; j < j1; j++)
        for (int64_t o = 0; o < Og; o++) {
            char *dst = (char *)s->y + (size_t)(((s->n0 + j) * s->O + g * Og + o) * P) * isz;
            const char *src = (const char *)s->out + (size_t)(o * s->ld + j * P) * isz;
            if (!s->bias) {
                memcpy(dst, src, (size_t)P * isz);
            } else if (s->f) {
                float bv = ((const float *)s->bias)[g * Og + o];
                for (int64_t k = 0; k < P; k++) ((float *)(void *)dst)[k] = ((const float *)(const void *)src)[k] + bv;
            } else {
                double bv = ((const double *)s->bias)[g * Og + o];
                for (int64_t k = 0; k < P; k++) ((double *)(void *)dst)[k] = ((const double *)(const void *)src)[k] + bv;
            }
        }
}

/* rows [o0, o1) of y (P apart) += bias[o] */
static void bias_rows(void *vj, int64_t o0, int64_t o1) {
    const scatter_job *s = vj;
    for (int64_t o = o0; o < o1; o++) {
        char *dst = (char *)s->y + (size_t)(o * s->P) * s->isz;
        if (s->f) {
            const float bv = ((const float *)s->bias)[o];
            for (int64_t k = 0; k < s->P; k++) ((float *)(void *)dst)[k] += bv;
        } else {
            const double bv = ((const double *)s->bias)[o];
            for (int64_t k = 0; k < s->P; k++) ((double *)(void *)dst)[k] += bv;
        }
    }
}

/* The non-transposed convolution on acc-dtype buffers: x [N, C, H, W], w [O, Cg, kh, kw],
 * bias [O] or NULL, into y [N, O, oh, ow]. The batch runs in chunks of images, one GEMM
 * per group and chunk over the chunk's columns (im2col on the pool), as the gradients do. */
static tn_status conv_forward(tn_dtype acc, const conv_geom *q, const void *x, const void *w, const void *bias,
                              void *y) {
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    bool f = acc == TN_DTYPE_FLOAT32;
    int64_t N = q->N, C = q->C, G = q->G, Cg = q->Cg, O = q->O, Og = O / G;
    int64_t K = Cg * q->kh * q->kw, P = q->oh * q->ow, HW = q->H * q->W;
    int64_t nb = TN_CONV_CHUNK_ELEMS / (K * P > 0 ? K * P : 1);
    if (nb < 1) nb = 1;
    if (nb > N) nb = N;
    void *col = NULL, *out = NULL;
    bool own_col = false, own_out = false;
    int64_t ldmax = tn_nnb_col_ld(nb * P, isz);
    tn_status st = tn_nnb_conv_buf(acc, K * ldmax, TN_SCRATCH_CONV_COL, &col, &own_col);
    if (st == TN_OK) st = tn_nnb_conv_buf(acc, Og * ldmax, TN_SCRATCH_CONV_AUX, &out, &own_out);
    for (int64_t n0 = 0; n0 < N && st == TN_OK; n0 += nb) {
        int64_t nbc = N - n0 < nb ? N - n0 : nb, L = nbc * P, ld = tn_nnb_col_ld(L, isz);
        for (int64_t g = 0; g < G && st == TN_OK; g++) {
            if (nbc == 1 && K * P > TN_CONV_CHUNK_ELEMS && q->oh > 1) {
                /* one image whose column matrix outgrows the chunk (a 224 x 224 image under a
                 * 7 x 7 kernel: 7.4 MB): bands of output rows, each band's columns written and
                 * multiplied while they are in L2 (im2col of rows [i0, i1) is im2col with oh
                 * rows and the padding moved by i0 sh), the products into y's band directly
                 * (the same sums per element; before: the whole matrix through memory, 1.4x
                 * upstream's time) */
                int64_t rb = TN_CONV_CHUNK_ELEMS / (K * q->ow);
                if (rb < 1) rb = 1;
                char *yg = (char *)y + (size_t)((n0 * O + g * Og) * P) * isz;
                const char *xg = (const char *)x + (size_t)((n0 * C + g * Cg) * HW) * isz;
                for (int64_t i0 = 0; i0 < q->oh && st == TN_OK; i0 += rb) {
                    conv_geom band = *q;
                    band.oh = q->oh - i0 < rb ? q->oh - i0 : rb;
                    band.ph = q->ph - i0 * q->sh;
                    const int64_t Pb = band.oh * q->ow, ldb = tn_nnb_col_ld(Pb, isz);
                    tn_nnb_conv_images(acc, &band, ldb, C * HW, (void *)xg, col, 1, false);
                    st = tn_nnb_gemm(acc, Og, Pb, K, (const char *)w + (size_t)(g * Og * K) * isz, K, 1, col, ldb, 1,
                                     yg + (size_t)(i0 * q->ow) * isz, P, 1, 0.0);
                }
                if (st == TN_OK && bias) {
                    scatter_job sj = {f, isz, yg, NULL, (const char *)bias + (size_t)(g * Og) * isz, 0, 0, 0, Og, P, P};
                    tn_parallel_for(Og, TN_NNB_GRAIN / (P > 0 ? P : 1) + 1, bias_rows, &sj);
                }
                continue;
            }
            /* cols [K, L] (rows ld apart): image j of the chunk in columns j*P.. */
            tn_nnb_conv_images(acc, q, ld, C * HW, (char *)x + (size_t)((n0 * C + g * Cg) * HW) * isz, col, nbc, false);
            if (nbc == 1) {
                /* one image: its [Og, P] block of y is the product's result (rows P apart),
                 * the bias added there after, the same sums (the copy out of a buffer
                 * cost a pass over y) */
                char *yg = (char *)y + (size_t)((n0 * O + g * Og) * P) * isz;
                st = tn_nnb_gemm(acc, Og, P, K, (const char *)w + (size_t)(g * Og * K) * isz, K, 1, col, ld, 1, yg, P, 1,
                                 0.0);
                if (st != TN_OK) break;
                if (bias) {
                    scatter_job sj = {f, isz, yg, NULL, (const char *)bias + (size_t)(g * Og) * isz, 0, 0, 0, Og, P, P};
                    tn_parallel_for(Og, TN_NNB_GRAIN / (P > 0 ? P : 1) + 1, bias_rows, &sj);
                }
                continue;
            }
            /* out [Og, L] = W_g [Og, K] · cols [K, L] */
            st = tn_nnb_gemm(acc, Og, L, K, (const char *)w + (size_t)(g * Og * K) * isz, K, 1, col, ld, 1, out, ld, 1,
                             0.0);
            if (st != TN_OK) break;
            /* y[n0+j][g*Og+o][:] = out[o][j*P..] (+ bias[g*Og+o]), images split over the pool */
            scatter_job sj = {f, isz, y, out, bias, n0, g, O, Og, P, ld};
            tn_parallel_for(nbc, TN_NNB_GRAIN / (Og * P > 0 ? Og * P : 1) + 1, scatter_chunk, &sj);
        }
    }
    if (own_col) free(col);
    if (own_out) free(out);
    return st;
}

typedef struct conv_params {
    int nsp;                       /* spatial dims: 1 or 2 */
    int64_t stride[2], pad[2], pad_extra[2], dil[2], groups;
    bool complex_parts;            /* conv1d/conv2d: complex operands by real convolutions of their
                                    * parts (upstream's entries; aten::convolution refuses complex) */
} conv_params;

/* Runs a batched convolution: input [N, C, (H,) W], weight [O, C/G, (kh,) kw]. */
static tn_status conv_run(tn_tensor *input, tn_tensor *weight, tn_tensor *bias, const conv_params *p, tn_tensor **out);

static tn_status conv_real_part(tn_tensor *x, tn_tensor *w, tn_tensor *b, void *ctx, tn_tensor **out) {
    return conv_run(x, w, b, (const conv_params *)ctx, out);
}

static tn_status conv_run(tn_tensor *input, tn_tensor *weight, tn_tensor *bias, const conv_params *p, tn_tensor **out) {
    char b1[256], b2[256];
    int nsp = p->nsp, nd = nsp + 2;
    if (weight->ndim != nd || input->ndim != nd)
        return tn_error(TN_ERR_RUNTIME, "Expected %d-dimensional input for %d-dimensional weight %s, but got "
                                        "%d-dimensional input of size %s instead",
                        weight->ndim, weight->ndim, TN_NN_FMT(weight, b1), input->ndim, TN_NN_FMT(input, b2));
    for (int i = 0; i < nsp; i++) {
        if (p->stride[i] <= 0) return tn_error(TN_ERR_RUNTIME, "non-positive stride is not supported");
        if (p->pad[i] < 0) return tn_error(TN_ERR_RUNTIME, "negative padding is not supported");
        if (p->dil[i] <= 0) return tn_error(TN_ERR_RUNTIME, "dilation should be greater than zero");
    }
    int64_t G = p->groups;
    if (G <= 0) return tn_error(TN_ERR_RUNTIME, "non-positive groups is not supported");
    int64_t N = input->sizes[0], C = input->sizes[1], O = weight->sizes[0], Cg = weight->sizes[1];
    if (O < G)
        return tn_error(TN_ERR_RUNTIME, "Given groups=%lld, expected weight to be at least %lld at dimension 0, but got "
                                        "weight of size %s instead", (long long)G, (long long)G, TN_NN_FMT(weight, b1));
    if (O % G != 0)
        return tn_error(TN_ERR_RUNTIME, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but "
                                        "got weight of size %s instead", (long long)G, (long long)G, TN_NN_FMT(weight, b1));
    if (C != Cg * G)
        return tn_error(TN_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected input%s to have %lld channels, "
                                        "but got %lld channels instead",
                        (long long)G, TN_NN_FMT(weight, b1), TN_NN_FMT(input, b2), (long long)(Cg * G), (long long)C);
    if (bias && (bias->ndim != 1 || bias->sizes[0] != O))
        return tn_error(TN_ERR_RUNTIME, "Given weight of size %s, expected bias to be 1-dimensional with %lld elements, "
                                        "but got bias of size %s instead",
                        TN_NN_FMT(weight, b1), (long long)O, TN_NN_FMT(bias, b2));
    /* an input with no batch or no channels takes upstream's Empty backend, before the
     * backends compare the types or dispatch on the dtype: its result is input * weight[0]
     * (tn_nn_conv_empty_dtype). Any other empty input is refused by upstream's backend
     * selection, which names the input's shape as 2-d convolution sees it. */
    bool real = !tn_tensor_is_meta(input) && !tn_dtype_is_complex(input->dtype) && !tn_dtype_is_complex(weight->dtype);
    bool empty = real && (N == 0 || C == 0);
    if (real && !empty && tn_tensor_numel(input) == 0) {
        int64_t s4[4] = {N, C, nsp == 2 ? input->sizes[2] : 1, input->sizes[nd - 1]};
        return tn_error(TN_ERR_RUNTIME, "Only zero batch or zero channel inputs are supported, but got input shape: %s",
                        tn_format_sizes(4, s4, b1, sizeof b1));
    }
    if (!empty && (input->dtype != weight->dtype || (bias && bias->dtype != input->dtype)))
        return tn_error(TN_ERR_RUNTIME, "Input type (%s) and weight type (%s) should be the same",
                        tn_dtype_infos[input->dtype].c10_name, tn_dtype_infos[weight->dtype].c10_name);
    if (p->complex_parts && tn_dtype_is_complex(input->dtype) && input->dtype != TN_DTYPE_COMPLEX32) {
        conv_params real = *p;
        real.complex_parts = false;
        return tn_complex_bilinear(input, weight, bias, conv_real_part, &real, out);
    }
    if (!empty) TN_TRY(tn_nn_check_float_or_int(input, "slow_conv2d_cpu", false));
    /* a dilated convolution takes upstream's slow_conv_dilated path, which has Long but no other integer */
    if (!empty && tn_nn_is_int(input->dtype) && input->dtype != TN_DTYPE_INT64)
        for (int i = 0; i < nsp; i++)
            if (p->dil[i] > 1)
                return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"slow_conv_dilated<>\" not implemented for '%s'",
                                tn_dtype_infos[input->dtype].c10_name);
    /* Spatial sizes as 2-d: a 1-d convolution is a 2-d one of height 1. */
    int64_t H = nsp == 2 ? input->sizes[2] : 1, W = input->sizes[nd - 1];
    int64_t kh = nsp == 2 ? weight->sizes[2] : 1, kw = weight->sizes[nd - 1];
    int64_t sh = nsp == 2 ? p->stride[0] : 1, sw = p->stride[nsp - 1];
    int64_t ph = nsp == 2 ? p->pad[0] : 0, pw = p->pad[nsp - 1];
    int64_t eh = nsp == 2 ? p->pad_extra[0] : 0, ew = p->pad_extra[nsp - 1];
    int64_t dh = nsp == 2 ? p->dil[0] : 1, dw = p->dil[nsp - 1];
    if (!empty && (kh <= 0 || kw <= 0)) {
        int64_t k2[2] = {kh, kw};
        return tn_error(TN_ERR_RUNTIME, "kernel size should be greater than zero, but got %s",
                        tn_format_sizes(2, k2, b1, sizeof b1));
    }
    int64_t ih = H + 2 * ph + eh, iw = W + 2 * pw + ew, keh = dh * (kh - 1) + 1, kew = dw * (kw - 1) + 1;
    if (ih < keh || iw < kew) {
        if (nsp == 2)
            return tn_error(TN_ERR_RUNTIME, "Calculated padded input size per channel: (%lld x %lld). Kernel size: "
                                            "(%lld x %lld). Kernel size can't be greater than actual input size",
                            (long long)ih, (long long)iw, (long long)keh, (long long)kew);
        return tn_error(TN_ERR_RUNTIME, "Calculated padded input size per channel: (%lld). Kernel size: (%lld). Kernel "
                                        "size can't be greater than actual input size", (long long)iw, (long long)kew);
    }
    int64_t oh = (ih - keh) / sh + 1, ow = (iw - kew) / sw + 1;
    int64_t osz[4] = {N, O, oh, ow};
    if (nsp == 1) osz[2] = ow;
    tn_tensor *y;
    TN_TRY(tn_nn_empty(nd, osz, empty ? tn_nn_conv_empty_dtype(input->dtype, weight->dtype) : input->dtype, input, &y));
    if (tn_tensor_is_meta(input) || tn_tensor_numel(y) == 0) { *out = y; return TN_OK; }

    tn_dtype acc = tn_nn_acc_any(input->dtype);
    conv_geom q = {.nsp = nsp, .N = N, .C = C, .H = H, .W = W, .O = O, .Cg = Cg, .G = G, .kh = kh, .kw = kw,
                   .oh = nsp == 2 ? oh : 1, .ow = ow, .sh = sh, .sw = sw, .ph = ph, .pw = pw, .dh = dh, .dw = dw};
    tn_nn_buf bx = {0}, bw = {0}, bb = {0}, by = {0};
    tn_status st = tn_nn_load(input, acc, &bx);
    if (st == TN_OK) st = tn_nn_load(weight, acc, &bw);
    if (st == TN_OK && bias) st = tn_nn_load(bias, acc, &bb);
    if (st == TN_OK) st = tn_nn_out_begin(y, acc, &by);
    if (st == TN_OK && acc == TN_DTYPE_INT64) /* integer convolution: upstream's slow path, direct loop */
        i64_conv2d__scalar(by.data, bx.data, bw.data, bias ? bb.data : NULL, N, C, H, W, O, G, kh, kw, q.oh, ow, sh, sw,
                           ph, pw, dh, dw);
    else if (st == TN_OK) st = conv_forward(acc, &q, bx.data, bw.data, bias ? bb.data : NULL, by.data);
    if (st == TN_OK) tn_nn_out_finish(y, acc, &by);
    tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&bb); tn_nn_buf_free(&by);
    if (st != TN_OK) { tn_tensor_release(y); return st; }
    *out = y;
    return TN_OK;
}

/* Reads an int[] argument of nsp entries (one value broadcasts). */
static tn_status spatial_arg(const tn_value *v, int nsp, const char *what, int64_t *out) {
    if (!tn_nn_int_list(v, nsp, out))
        return tn_error(TN_ERR_RUNTIME, "expected %s to be a single integer value or a list of %d values to match "
                                        "the convolution dimensions, but got %s=[%lld...]",
                        what, nsp, what, v->tag == TN_V_INTLIST && v->u.ilist.n ? (long long)v->u.ilist.data[0] : 0LL);
    return TN_OK;
}

/* Convolution with unbatched-input support (conv1d/conv2d accept [C, ...] inputs). */
static tn_status conv_entry(tn_tensor *input, tn_tensor *weight, tn_tensor *bias, conv_params *p, bool allow_unbatched,
                            tn_value *rets) {
    int nd = p->nsp + 2;
    tn_tensor *in = input, *tmp = NULL;
    bool unbatched = allow_unbatched && input->ndim == nd - 1 && weight->ndim == nd;
    if (unbatched) {
        int64_t sz[TN_MAX_DIMS], str[TN_MAX_DIMS];
        sz[0] = 1;
        str[0] = input->ndim ? input->sizes[0] * input->strides[0] : 1;
        for (int i = 0; i < input->ndim; i++) { sz[i + 1] = input->sizes[i]; str[i + 1] = input->strides[i]; }
        tmp = in = tn_tensor_new_view(input->storage, input->offset, nd, sz, str, input->dtype);
    } else if (allow_unbatched && input->ndim != nd) {
        char b1[256];
        return tn_error(TN_ERR_RUNTIME, "Expected %dD (unbatched) or %dD (batched) input to conv%dd, but got input of size: %s",
                        nd - 1, nd, p->nsp, TN_NN_FMT(input, b1));
    }
    tn_tensor *y = NULL;
    tn_status st = conv_run(in, weight, bias, p, &y);
    if (tmp) tn_tensor_release(tmp);
    if (st != TN_OK) return st;
    if (unbatched) {
        tn_tensor *v = tn_tensor_new_view(y->storage, y->offset, y->ndim - 1, y->sizes + 1, y->strides + 1, y->dtype);
        tn_tensor_release(y);
        y = v;
    }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* aten::convolution(input, weight, bias?, stride, padding, dilation, transposed,
 * output_padding, groups) -> Tensor */
tn_status tn_op_convolution(const tn_value *args, tn_value *rets) {
    tn_tensor *input = args[0].u.t, *weight = args[1].u.t;
    if (args[6].u.b) {
        tn_tensor *y;
        TN_TRY(tn_nn_conv_transposed(input, weight, tn_nn_opt_tensor(&args[2]), &args[3], &args[4], &args[7], &args[5],
                                     args[8].u.i, &y));
        rets[0] = tn_value_tensor(y);
        return TN_OK;
    }
    int nsp = weight->ndim - 2;
    if (nsp == 3) {
        tn_tensor *y;
        TN_TRY(tn_nn_convolution3d(args, &y));
        rets[0] = tn_value_tensor(y);
        return TN_OK;
    }
    if (nsp != 1 && nsp != 2)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::convolution with %d spatial dimensions is not implemented by "
                                                "torchnative", nsp < 0 ? 0 : nsp);
    conv_params p = {.nsp = nsp, .groups = args[8].u.i};
    TN_TRY(spatial_arg(&args[3], nsp, "stride", p.stride));
    TN_TRY(spatial_arg(&args[4], nsp, "padding", p.pad));
    TN_TRY(spatial_arg(&args[5], nsp, "dilation", p.dil));
    return conv_entry(input, weight, tn_nn_opt_tensor(&args[2]), &p, false, rets);
}

/* aten::_convolution(..., benchmark, deterministic, cudnn_enabled, allow_tf32) */
tn_status tn_op__convolution(const tn_value *args, tn_value *rets) { return tn_op_convolution(args, rets); }

static tn_status conv_nd(const tn_value *args, tn_value *rets, int nsp, bool padding_str) {
    tn_tensor *input = args[0].u.t, *weight = args[1].u.t;
    conv_params p = {.nsp = nsp, .groups = args[6].u.i, .complex_parts = true};
    TN_TRY(spatial_arg(&args[3], nsp, "stride", p.stride));
    TN_TRY(spatial_arg(&args[5], nsp, "dilation", p.dil));
    if (!padding_str) {
        TN_TRY(spatial_arg(&args[4], nsp, "padding", p.pad));
    } else {
        const char *s = args[4].u.s.data;
        if (strcmp(s, "valid") == 0) {
            /* no padding */
        } else if (strcmp(s, "same") == 0) {
            for (int i = 0; i < nsp; i++)
                if (p.stride[i] != 1)
                    return tn_error(TN_ERR_RUNTIME, "padding='same' is not supported for strided convolutions");
            if (weight->ndim == nsp + 2)
                for (int i = 0; i < nsp; i++) {
                    /* Total padding d*(k-1); an odd total puts the extra element on the right. */
                    int64_t total = p.dil[i] * (weight->sizes[2 + i] - 1);
                    p.pad[i] = total / 2;
                    p.pad_extra[i] = total - 2 * (total / 2);
                }
        } else {
            return tn_error(TN_ERR_RUNTIME, "Invalid padding string: '%s'", s);
        }
    }
    return conv_entry(input, weight, tn_nn_opt_tensor(&args[2]), &p, true, rets);
}

/* aten::conv1d(input, weight, bias?, stride, padding, dilation, groups) */
tn_status tn_op_conv1d(const tn_value *args, tn_value *rets) { return conv_nd(args, rets, 1, false); }
/* aten::conv2d(input, weight, bias?, stride, padding, dilation, groups) */
tn_status tn_op_conv2d(const tn_value *args, tn_value *rets) { return conv_nd(args, rets, 2, false); }
/* aten::conv1d.padding(input, weight, bias?, stride, str padding, dilation, groups) */
tn_status tn_op_conv1d_padding(const tn_value *args, tn_value *rets) { return conv_nd(args, rets, 1, true); }
/* aten::conv2d.padding(input, weight, bias?, stride, str padding, dilation, groups) */
tn_status tn_op_conv2d_padding(const tn_value *args, tn_value *rets) { return conv_nd(args, rets, 2, true); }
