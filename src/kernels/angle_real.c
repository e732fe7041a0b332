/* angle_real.c — one-pass real angle (kernels/angle_real.h): selects only, so the compiler
 * vectorises it for the baseline ISA and every tier gives the same bits. */
#include "kernels/angle_real.h"

#include <math.h>

#pragma GCC push_options
#pragma GCC optimize("O3", "no-trapping-math")
void tn_angle_real_f32(float *out, const float *x, int64_t n) {
    const float pi = (float)M_PI;
    for (int64_t k = 0; k < n; k++) {
        const float v = x[k];
        out[k] = v != v ? v : (v < 0 ? pi : 0.0f);
    }
}
void tn_angle_real_f64(double *out, const double *x, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        const double v = x[k];
        out[k] = v != v ? v : (v < 0 ? M_PI : 0.0);
    }
}
#pragma GCC pop_options
