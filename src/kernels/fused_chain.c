/* fused_chain.c — RMSNorm, rotary-embedding and SwiGLU chains as one loop each, bit for bit
 * the chains' operators (see fused_chain.h). */
#include "kernels/fused_chain.h"

#include <math.h>

#include "kernels/elementwise.h"
#include "kernels/reduce.h"

void tn_chain_rmsnorm_f32(float *y, const float *x, const float *w, float eps, int64_t rows, int64_t n, float *sq,
                          float *sums) {
    const int64_t total = rows * n;
    for (int64_t i = 0; i < total; i++) sq[i] = x[i] * x[i];     /* pow(x, 2): x * x */
    f32_sum_rows_contig(sums, sq, rows, n);                      /* mean's cascade sum */
    const float dn = (float)n;
    for (int64_t r = 0; r < rows; r++) {
        const float v = sums[r] / dn + eps;                      /* mean, then add */
        const float rs = 1.0f / sqrtf(v);                        /* rsqrt */
        const float *xr = x + r * n;
        float *yr = y + r * n;
        for (int64_t j = 0; j < n; j++) yr[j] = w[j] * (xr[j] * rs);
    }
}

void tn_chain_rotary_row_f32(float *y, const float *x, const float *c, const float *s, int64_t n) {
    const int64_t h = n / 2;
    for (int64_t j = 0; j < h; j++) {
        const float t1 = x[j] * c[j], t2 = (-x[j + h]) * s[j];
        y[j] = t1 + t2;
    }
    for (int64_t j = h; j < n; j++) {
        const float t1 = x[j] * c[j], t2 = x[j - h] * s[j];
        y[j] = t1 + t2;
    }
}

void tn_chain_swiglu_f32(float *y, const float *g, const float *u, int64_t n) {
    tn_loop_ctx ctx = {0};
    char *data[2] = {(char *)y, (char *)g};
    const int64_t strides[2] = {sizeof(float), sizeof(float)};
    tn_ew_loop(TN_EW_silu, TN_DTYPE_FLOAT32)(data, strides, n, &ctx); /* silu(g), into y */
    for (int64_t i = 0; i < n; i++) y[i] = y[i] * u[i];                   /* mul */
}
