/* nn_vec.h — the float32 kernels of a small CNN's training step (2x2 max pool, batch-norm
 * statistics, apply and backward, im2col / col2im of small images) on vectors, one
 * instance per ISA tier (nn_vec.inc, compiled by nn_vec_generic.c, nn_vec_avx2.c,
 * nn_vec_avx512.c) collected in a table of the same shape for every tier. Each entry has the contract of the f32_*__scalar kernel
 * of the same name (kernels/nn.h, kernels/nn_backward.h), which stays the reference. */
#ifndef TN_KERNELS_NN_VEC_H
#define TN_KERNELS_NN_VEC_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu_features.h"
#include "kernels/nn.h"
#include "kernels/nn_backward.h"

typedef struct tn_nn_vec {
    void (*im2col_ld)(float *col, int64_t ld, const float *x, int64_t C, int64_t H, int64_t W, int64_t kh, int64_t kw,
                      int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw);
    void (*col2im)(float *x, const float *col, int64_t ld, int64_t C, int64_t H, int64_t W, int64_t kh, int64_t kw,
                   int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw);
    void (*max_pool2d)(float *y, int64_t *idx, const float *x, int64_t P, int64_t H, int64_t W, int64_t oh, int64_t ow,
                       int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw);
    void (*batch_stats)(float *mean, float *var, const float *x, int64_t N, int64_t C, int64_t S, int64_t c0, int64_t c1);
    void (*channel_affine)(float *y, const float *x, const float *alpha, const float *beta, int64_t N, int64_t C,
                           int64_t S);
    void (*batch_norm_backward)(float *gx, float *gw, float *gb, const float *gy, const float *x, const float *w,
                                const float *mean, const float *invstd, int64_t N, int64_t C, int64_t S, bool train,
                                int64_t c0, int64_t c1);
} tn_nn_vec;

/* The instances: baseline ISA (SSE2 on x86-64, NEON on aarch64), AVX2+FMA, AVX-512. The
 * x86 ones exist only on x86-64. */
extern const tn_nn_vec tn_nn_vec__generic;
#if defined(__x86_64__)
extern const tn_nn_vec tn_nn_vec__avx2;
extern const tn_nn_vec tn_nn_vec__avx512;
#endif

/* The instance for a tier: scalar gets the baseline one (the f32_*__scalar references
 * are the C tests' yardstick, not a tier). */
const tn_nn_vec *tn_nn_vec_for(tn_isa isa);
/* The instance for tn_cpu_isa(). */
static inline const tn_nn_vec *tn_nn_vec_f32(void) { return tn_nn_vec_for(tn_cpu_isa()); }

#endif
