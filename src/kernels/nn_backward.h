/* nn_backward.h — microkernels of the neural-network backward operators: col2im (the
 * adjoint of im2col, for convolution gradients), pooling and upsampling gradients,
 * normalisation gradients, softmax / log-softmax, NLL, embedding and GLU gradients.
 * Each exists for float (f32_*, also the opmath of Half and BFloat16) and double (f64_*),
 * works on contiguous buffers from the op layer (src/ops/nn_backward*.c), never sees a
 * tensor and never allocates (scratch comes from the caller).
 *
 * Kernels that scatter ("accumulates") add into their output, which the caller zeroes.
 * Outputs first, then inputs, then dimensions. Plain C11. */
#ifndef TN_KERNELS_NN_BACKWARD_H
#define TN_KERNELS_NN_BACKWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every kernel as X(name, (argument list)) with `T` for the element type. */
#define TN_NN_BWD_KERNELS(X)                                                                     \
    /* col2im, accumulates: col [C*kh*kw, oh*ow] (rows ld elements apart, ld >= oh*ow, so one   \
     * image's block of a batched [K, n*oh*ow] matrix can be read) is added into x [C, H, W]. */ \
    X(col2im, (T * x, const T *col, int64_t ld, int64_t C, int64_t H, int64_t W, int64_t kh,      \
               int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t ph, int64_t pw,  \
               int64_t dh, int64_t dw))                                                          \
    /* im2col of one image x [C, H, W] into col [C*kh*kw, oh*ow] with rows ld elements apart     \
     * (the forward's im2col with a leading dimension: one image's block of a batch). */         \
    X(im2col_ld, (T * col, int64_t ld, const T *x, int64_t C, int64_t H, int64_t W, int64_t kh,   \
                  int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t ph, int64_t pw, \
                  int64_t dh, int64_t dw))                                                       \
    /* max pool, accumulates: gy, idx [P, OHW] (idx in [0, HW), checked by the caller) into     \
     * gx [P, HW]. */                                                                            \
    X(max_pool2d_backward, (T * gx, const T *gy, const int64_t *idx, int64_t P, int64_t HW,        \
                            int64_t OHW))                                                        \
    /* avg pool, accumulates: gy [P, oh, ow] into gx [P, H, W]; divisor 0 = none. */             \
    X(avg_pool2d_backward, (T * gx, const T *gy, int64_t P, int64_t H, int64_t W, int64_t oh,      \
                            int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, \
                            int64_t pw, bool count_include_pad, int64_t divisor))                \
    /* adaptive avg pool, accumulates: gy [P, oh, ow] into gx [P, H, W]. */                      \
    X(adaptive_avg_pool2d_backward, (T * gx, const T *gy, int64_t P, int64_t H, int64_t W,         \
                                     int64_t oh, int64_t ow))                                    \
    /* nearest (mode 0) / bilinear (mode 1) upsampling, accumulates: gy [P, oh, ow] into        \
     * gx [P, H, W]; rh, rw resolved as for the forward kernel upsample2d. */                    \
    X(upsample2d_backward, (T * gx, const T *gy, int64_t P, int64_t H, int64_t W, int64_t oh,      \
                            int64_t ow, double rh, double rw, int mode, bool align_corners))     \
    /* batch norm over x, gy [N, C, S], channels [c0, c1) only: gx [N, C, S], gw, gb [C] (each  \
     * may be NULL); w [C] or NULL (ones); mean, invstd [C] (saved batch statistics when train, \
     * else running ones). */                                                                    \
    X(batch_norm_backward, (T * gx, T *gw, T *gb, const T *gy, const T *x, const T *w,             \
                            const T *mean, const T *invstd, int64_t N, int64_t C, int64_t S,      \
                            bool train, int64_t c0, int64_t c1))                                 \
    /* layer norm over rows [M, N]: gx [M, N]; w [N] or NULL; mean, rstd [M]. */                \
    X(layer_norm_backward_input, (T * gx, const T *gy, const T *x, const T *mean, const T *rstd,   \
                                  const T *w, int64_t M, int64_t N))                             \
    /* its parameter gradients for columns [j0, j1): gw, gb [N] (each may be NULL); scratch     \
     * 2*(j1-j0) doubles. Rows are summed in order, whatever the column split. */               \
    X(layer_norm_backward_params, (T * gw, T *gb, const T *gy, const T *x, const T *mean,          \
                                   const T *rstd, int64_t M, int64_t N, int64_t j0, int64_t j1,    \
                                   double *scratch))                                             \
    /* group norm over [N, C, HxW] in G groups: gx, gw, gb [C] (each may be NULL); w [C] or     \
     * NULL; mean, rstd [N, G]; scratch 2*N*C doubles. */                                        \
    X(group_norm_backward, (T * gx, T *gw, T *gb, const T *gy, const T *x, const T *mean,          \
                            const T *rstd, const T *w, int64_t N, int64_t C, int64_t HxW,        \
                            int64_t G, double *scratch))                                         \
    /* RMS norm over rows [M, N]: gx [M, N]; w [N] or NULL; rstd [M]. */                        \
    X(rms_norm_backward_input, (T * gx, const T *gy, const T *x, const T *rstd, const T *w,        \
                                int64_t M, int64_t N))                                           \
    /* its weight gradient for columns [j0, j1): gw [N]; scratch (j1-j0) doubles. */             \
    X(rms_norm_backward_params, (T * gw, const T *gy, const T *x, const T *rstd, int64_t M,        \
                                 int64_t N, int64_t j0, int64_t j1, double *scratch))            \
    /* softmax (log = false: y is the softmax) or log-softmax gradient over [outer, D, inner]. */\
    X(softmax_backward, (T * gx, const T *gy, const T *y, int64_t outer, int64_t D, int64_t inner, \
                         bool log))                                                              \
    /* NLL: gx [N, C, S] (written whole); target [N, S] (valid or ignore_index, checked by the  \
     * caller); w [C] or NULL; gy [N, S] when per_sample, else gy[0] for all; the mean's        \
     * division by total_weight when mean. */                                                    \
    X(nll_loss_backward, (T * gx, const T *gy, bool per_sample, const int64_t *target, const T *w,  \
                          int64_t N, int64_t C, int64_t S, int64_t ignore_index, bool mean,       \
                          T total_weight))                                                       \
    /* embedding, accumulates: rows gy [n, D] into gw [num_weights, D] at idx [n] (in range,    \
     * checked by the caller), skipping padding_idx; counts [num_weights] or NULL (scale by     \
     * 1/count). */                                                                              \
    X(embedding_backward, (T * gw, const T *gy, const int64_t *idx, int64_t n, int64_t D,          \
                           int64_t padding_idx, const int64_t *counts))                          \
    /* reflection (reflect = true) / replication padding, accumulates: gy [P, H+pt+pb,         \
     * W+pl+pr] into gx [P, H, W] (H = 1 for 1-d padding). */                                   \
    X(pad2d_backward, (T * gx, const T *gy, int64_t P, int64_t H, int64_t W, int64_t pt, int64_t pb, \
                       int64_t pl, int64_t pr, bool reflect))                                    \
    /* unfold, accumulates: windows gi [outer, nw, inner, size] (window w covers positions     \
     * w*step .. w*step+size-1 of the dimension) into gx [outer, D, inner]. */                   \
    X(unfold_backward, (T * gx, const T *gi, int64_t outer, int64_t D, int64_t inner, int64_t nw,  \
                        int64_t size, int64_t step))                                             \
    /* GLU over x [outer, 2*half, inner] with gy [outer, half, inner]: gx like x. */              \
    X(glu_backward, (T * gx, const T *gy, const T *x, int64_t outer, int64_t half, int64_t inner))

/* ---- float32 softmax / log-softmax gradient over contiguous rows [rows, n] on 16-float
 * vectors (softmax_backward_*.c): y is the forward's output; same role as
 * f32_softmax_backward__scalar with inner = 1, float sums instead of double. Single
 * threaded (the op layer splits rows); the variant follows tn_cpu_isa(). */
void tn_softmax_backward_rows_f32(float *gx, const float *gy, const float *y, int64_t rows, int64_t n, bool is_log);
void tn_softmax_backward_rows__generic(float *gx, const float *gy, const float *y, int64_t rows, int64_t n, bool is_log);
void tn_softmax_backward_rows__avx2(float *gx, const float *gy, const float *y, int64_t rows, int64_t n, bool is_log);
void tn_softmax_backward_rows__avx512(float *gx, const float *gy, const float *y, int64_t rows, int64_t n, bool is_log);

/* ---- float32 rows of the attention backward (nn_backward_attention.c), same family and
 * dispatch: P's row from the scores and the forward's log-sum-exp, in float like upstream's
 * vectorised kernel (exp with the vector polynomial above, <= 2 ulp), and dS's row. */
#define TN_ATTN_BWD_ROW_FNS(SFX)                                                              \
    void tn_attn_bwd_prob_row##SFX(float *p, int64_t n, int64_t lim, float scale, float lse); \
    void tn_attn_bwd_ds_row##SFX(float *p, const float *dp, int64_t n, float D, float scale);
TN_ATTN_BWD_ROW_FNS(_f32)
TN_ATTN_BWD_ROW_FNS(__generic)
TN_ATTN_BWD_ROW_FNS(__avx2)
TN_ATTN_BWD_ROW_FNS(__avx512)

#define T float
#define TN_NN_BWD_DECL_F32(name, args) void f32_##name##__scalar args;
TN_NN_BWD_KERNELS(TN_NN_BWD_DECL_F32)
#undef T
#define T double
#define TN_NN_BWD_DECL_F64(name, args) void f64_##name##__scalar args;
TN_NN_BWD_KERNELS(TN_NN_BWD_DECL_F64)
#undef T

#endif
