/* nn_upsample_nd.h — separable resampling of [P, D, H, W] planes from per-dim tap tables
 * (the nearest, nearest-exact, linear and cubic modes differ only in their tables, which the
 * op layer builds: src/ops/nn_upsample_nd.c). Dims a mode lacks have one tap of weight 1. */
#ifndef TN_KERNELS_NN_UPSAMPLE_ND_H
#define TN_KERNELS_NN_UPSAMPLE_ND_H

#include <stdint.h>

typedef struct tn_up_table {
    int64_t in[3], out[3];
    int taps[3];
    const int64_t *idx[3]; /* [out[d] * taps[d]] input positions along dim d */
    const double *w[3];    /* [out[d] * taps[d]] their weights (already rounded as upstream stores them) */
} tn_up_table;

/* y [P, out] = per output, the width taps summed (x w), then the height taps (sum w), then
 * the depth taps: upstream's nesting, innermost dim first. */
void f32_upsample_nd__scalar(float *y, const float *x, int64_t P, const tn_up_table *t);
void f64_upsample_nd__scalar(double *y, const double *x, int64_t P, const tn_up_table *t);
/* gx [P, in] += the adjoint: every output's gradient times its three weights (depth, height,
 * width, left to right) added at each tap, outputs in order. gx is not cleared. */
void f32_upsample_nd_backward__scalar(float *gx, const float *gy, int64_t P, const tn_up_table *t);
void f64_upsample_nd_backward__scalar(double *gx, const double *gy, int64_t P, const tn_up_table *t);

#endif
