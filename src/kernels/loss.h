/* loss.h — the elementwise terms of the pointwise losses (mse, l1, smooth_l1, huber) over
 * contiguous float32 / float64 runs, in the dtype's own arithmetic, one rounding per
 * operation as upstream's kernels compute them; the op (src/ops/nn_loss.c) reduces them. */
#ifndef TN_KERNELS_LOSS_H
#define TN_KERNELS_LOSS_H

#include <stdint.h>

typedef enum tn_loss_kind {
    TN_LOSS_MSE,       /* d = a - b; d * d */
    TN_LOSS_L1,        /* |a - b| */
    TN_LOSS_SMOOTH_L1, /* z = |a - b|; z < p ? 0.5 * z * z / p : z - 0.5 * p   (p = beta > 0) */
    TN_LOSS_HUBER,     /* z = |a - b|; z < p ? 0.5 * z * z : p * (z - 0.5 * p)  (p = delta > 0) */
} tn_loss_kind;

/* out[i] = term(a[i], b[i]) for i < n; p already rounded to the dtype by the caller. The
 * result of an element never depends on n or on where the run starts (threads split runs
 * anywhere). Vectorised for AVX2 when tn_cpu_isa() allows it; the same bits either way. */
void tn_loss_terms_f32(tn_loss_kind kind, float *out, const float *a, const float *b, int64_t n, float p);
void tn_loss_terms_f64(tn_loss_kind kind, double *out, const double *a, const double *b, int64_t n, double p);

/* Binary cross entropy's term as upstream's scalar kernel computes it, in the dtype with
 * libm's own logs: out[i] = (t - 1) max(log1p(-x), -100) - t max(log x, -100), then
 * out[i] *= w[i] when w is not NULL (upstream's in-place mul_ by the weight). Checks
 * 0 <= x <= 1, then 0 <= t <= 1, element by element: returns the index of the first element
 * failing either (its output unwritten), or n when all pass. */
int64_t tn_loss_bce_f32(float *out, const float *x, const float *t, const float *w, int64_t n);
int64_t tn_loss_bce_f64(double *out, const double *x, const double *t, const double *w, int64_t n);

#endif
