/* angle_real.h — torch.angle of real float32 / float64 runs in one pass: pi where x < 0,
 * else 0, a NaN passed through (upstream's angle_impl; its vector form gives the same
 * values, with the canonical NaN where this keeps the input's). */
#ifndef TN_KERNELS_ANGLE_REAL_H
#define TN_KERNELS_ANGLE_REAL_H

#include <stdint.h>

/* out[k] = angle(x[k]) for k < n, contiguous; pi rounded to the dtype (M_PI as float) */
void tn_angle_real_f32(float *out, const float *x, int64_t n);
void tn_angle_real_f64(double *out, const double *x, int64_t n);

#endif
