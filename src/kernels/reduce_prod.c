/* reduce_prod.c — upstream-ordered product of a contiguous run (float32, float64): the
 * accumulator layout of its vectorised inner reduction with plain arrays standing in for
 * the vector registers (the compiler vectorises the block loop), so the same bits. */
#include <stdint.h>

#include "kernels/reduce.h"

#include "kernels/cpu_features.h"

#pragma GCC push_options
#pragma GCC optimize("O3")
/* acc[k] for k < 4 * lanes is lane k % lanes of vector k / lanes: a block's element k
 * multiplies acc[k], as upstream's four loads of one block feed its four vectors. */
#define PROD_RUN(T, NAME, MAXL)                                                              \
    T NAME(T init, const T *x, int64_t n, int lanes) {                                       \
        const int64_t blk = 4 * (int64_t)lanes, count = n / blk;                             \
        T r = init;                                                                          \
        if (count > 0) {                                                                     \
            T acc[4 * MAXL] = {0};                                                               \
            for (int64_t k = 0; k < blk; k++) acc[k] = x[k];                                 \
            if (blk == 4 * MAXL / 2) { /* the usual width: a constant trip count */          \
                for (int64_t i = 1; i < count; i++)                                          \
                    for (int k = 0; k < 4 * MAXL / 2; k++) acc[k] *= x[i * (4 * MAXL / 2) + k]; \
            } else {                                                                         \
                for (int64_t i = 1; i < count; i++)                                          \
                    for (int64_t k = 0; k < blk; k++) acc[k] *= x[i * blk + k];              \
            }                                                                                \
            /* lane l of (v0 * v1) * (v2 * v3), the lanes multiplied in order */             \
            T b = (acc[0] * acc[lanes]) * (acc[2 * lanes] * acc[3 * lanes]);                 \
            for (int l = 1; l < lanes; l++)                                                  \
                b *= (acc[l] * acc[lanes + l]) * (acc[2 * lanes + l] * acc[3 * lanes + l]);  \
            r = r * b;                                                                       \
        }                                                                                    \
        for (int64_t k = count * blk; k < n; k++) r = r * x[k];                              \
        return r;                                                                            \
    }
PROD_RUN(float, f32_prod_run, 16)
PROD_RUN(double, f64_prod_run, 8)
#pragma GCC pop_options

/* Products down columns: out[j] *= x[r * ld + j] for r = 0, 1, ..., rows - 1 in order, as
 * upstream's outer reduction multiplies each output lane by one row after another (the
 * same products in the same order per element; vectorised across the columns). */
#pragma GCC push_options
#pragma GCC optimize("O3")
#define PROD_COLS(T, NAME, ATTR)                                                             \
    ATTR static void NAME(T *out, const T *x, int64_t ld, int64_t rows, int64_t cols) {      \
        for (int64_t j0 = 0; j0 < cols; j0 += 256) { /* a block of outputs stays in cache */ \
            const int64_t j1 = j0 + 256 < cols ? j0 + 256 : cols;                            \
            for (int64_t r = 0; r < rows; r++) {                                             \
                const T *xr = x + r * ld;                                                    \
                for (int64_t j = j0; j < j1; j++) out[j] *= xr[j];                           \
            }                                                                                \
        }                                                                                    \
    }
PROD_COLS(float, f32_prod_cols_base, )
PROD_COLS(double, f64_prod_cols_base, )
#if defined(__x86_64__)
PROD_COLS(float, f32_prod_cols_avx2, __attribute__((target("avx2"))))
PROD_COLS(double, f64_prod_cols_avx2, __attribute__((target("avx2"))))
PROD_COLS(float, f32_prod_cols_avx512, __attribute__((target("avx512f"))))
PROD_COLS(double, f64_prod_cols_avx512, __attribute__((target("avx512f"))))
#endif
#pragma GCC pop_options

/* (each element's products are the same whatever the vector width, so every tier gives the
 * same bits) */
void f32_prod_cols(float *out, const float *x, int64_t ld, int64_t rows, int64_t cols) {
#if defined(__x86_64__)
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) { f32_prod_cols_avx512(out, x, ld, rows, cols); return; }
    if (isa >= TN_ISA_AVX2) { f32_prod_cols_avx2(out, x, ld, rows, cols); return; }
#endif
    f32_prod_cols_base(out, x, ld, rows, cols);
}
void f64_prod_cols(double *out, const double *x, int64_t ld, int64_t rows, int64_t cols) {
#if defined(__x86_64__)
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) { f64_prod_cols_avx512(out, x, ld, rows, cols); return; }
    if (isa >= TN_ISA_AVX2) { f64_prod_cols_avx2(out, x, ld, rows, cols); return; }
#endif
    f64_prod_cols_base(out, x, ld, rows, cols);
}
