/* reduce_prod.c — upstream-ordered product of a contiguous run (float32, float64): the
 * accumulator layout of its vectorised inner reduction with plain arrays standing in for
 * the vector registers (the compiler vectorises the block loop), so the same bits. */
#include <stdint.h>

#include "kernels/reduce.h"

#include "kernels/cpu_features.h"

#pragma GCC push_options
#pragma GCC optimize("O3")
/* acc[k] for k < 4 * L is lane k % L of vector k / L: a block's element k multiplies
 * acc[k], as upstream's four loads of one block feed its four vectors. L is a constant
 * (the usual widths: 8 and 16 floats, 4 and 8 doubles) so the block loop and the lane
 * combination unroll, and nothing is zeroed (a generic form zeroed 4 * 16 accumulators and
 * looped over a run-time lane count per row: rows of 100 took 2.4-2.7x upstream's time). */
#define PROD_RUN_L(T, NAME, L)                                                               \
    static inline T NAME(T init, const T *x, int64_t n) {                                    \
        const int64_t count = n / (4 * L);                                                   \
        T r = init;                                                                          \
        if (count > 0) {                                                                     \
            T acc[4 * L];                                                                    \
            for (int k = 0; k < 4 * L; k++) acc[k] = x[k];                                   \
            for (int64_t i = 1; i < count; i++)                                              \
                for (int k = 0; k < 4 * L; k++) acc[k] *= x[i * (4 * L) + k];                \
            /* lane l of (v0 * v1) * (v2 * v3), the lanes multiplied in order */             \
            T b = (acc[0] * acc[L]) * (acc[2 * L] * acc[3 * L]);                             \
            for (int l = 1; l < L; l++) b *= (acc[l] * acc[L + l]) * (acc[2 * L + l] * acc[3 * L + l]); \
            r = r * b;                                                                       \
        }                                                                                    \
        for (int64_t k = count * (4 * L); k < n; k++) r = r * x[k];                          \
        return r;                                                                            \
    }
PROD_RUN_L(float, f32_run8, 8)
PROD_RUN_L(float, f32_run16, 16)
PROD_RUN_L(double, f64_run4, 4)
PROD_RUN_L(double, f64_run8, 8)
/* lanes is upstream's vector width in elements: 32 or 64 bytes (tn_reduce_vec_bytes) */
#define PROD_RUN(T, NAME, RA, LA, RB)                                                        \
    T NAME(T init, const T *x, int64_t n, int lanes) { return lanes == LA ? RA(init, x, n) : RB(init, x, n); } \
    static void NAME##s_each(char *out, int64_t os, const T *x, int64_t ld, int64_t rows, int64_t n, int lanes) { \
        if (lanes == LA)                                                                     \
            for (int64_t j = 0; j < rows; j++) *(T *)(out + j * os) = RA(*(T *)(out + j * os), x + j * ld, n); \
        else                                                                                 \
            for (int64_t j = 0; j < rows; j++) *(T *)(out + j * os) = RB(*(T *)(out + j * os), x + j * ld, n); \
    }
PROD_RUN(float, f32_prod_run, f32_run8, 8, f32_run16)
PROD_RUN(double, f64_prod_run, f64_run4, 4, f64_run8)
#pragma GCC pop_options

/* Eight float32 rows of upstream's 8-lane products at once (AVX2): each row's four block
 * vectors as in f32_run8, its lane products (v0 v1)(v2 v3) as one vector; the eight rows' lane
 * vectors transposed so that one vector holds lane l of every row, multiplied in lane order, then
 * the init and the tail a column of the eight rows at a time: the same products in the same
 * order per row, so the same bits, with the rows' dependent chains (about 46 cycles a row of
 * 100) in one vector chain instead of eight. */
#if defined(__x86_64__)
#include "kernels/x86_transpose.h"
__attribute__((target("avx2"), optimize("O3"))) static void f32_prod8_rows_avx2(char *out, int64_t os, const float *x,
                                                                              int64_t ld, int64_t n) {
    const int64_t count = n / 32;
    float r0[8];
    for (int q = 0; q < 8; q++) r0[q] = *(const float *)(out + q * os);
    __m256 r = _mm256_loadu_ps(r0);
    if (count > 0) {
        __m256 p[8];
        for (int q = 0; q < 8; q++) {
            const float *xq = x + q * ld;
            __m256 v0 = _mm256_loadu_ps(xq), v1 = _mm256_loadu_ps(xq + 8), v2 = _mm256_loadu_ps(xq + 16),
                   v3 = _mm256_loadu_ps(xq + 24);
            for (int64_t i = 1; i < count; i++) {
                v0 = _mm256_mul_ps(v0, _mm256_loadu_ps(xq + i * 32));
                v1 = _mm256_mul_ps(v1, _mm256_loadu_ps(xq + i * 32 + 8));
                v2 = _mm256_mul_ps(v2, _mm256_loadu_ps(xq + i * 32 + 16));
                v3 = _mm256_mul_ps(v3, _mm256_loadu_ps(xq + i * 32 + 24));
            }
            p[q] = _mm256_mul_ps(_mm256_mul_ps(v0, v1), _mm256_mul_ps(v2, v3));
        }
        tn_transpose8x8_ps(p); /* p[l]: lane l of the eight rows */
        __m256 b = p[0];
        for (int l = 1; l < 8; l++) b = _mm256_mul_ps(b, p[l]);
        r = _mm256_mul_ps(r, b);
    }
    for (int64_t k = count * 32; k < n; k++)
        r = _mm256_mul_ps(r, _mm256_setr_ps(x[k], x[ld + k], x[2 * ld + k], x[3 * ld + k], x[4 * ld + k],
                                            x[5 * ld + k], x[6 * ld + k], x[7 * ld + k]));
    _mm256_storeu_ps(r0, r);
    for (int q = 0; q < 8; q++) *(float *)(out + q * os) = r0[q];
}
#endif

/* Products down columns: out[j] *= x[r * ld + j] for r = 0, 1, ..., rows - 1 in order, as
 * upstream's outer reduction multiplies each output lane by one row after another (the
 * same products in the same order per element; vectorised across the columns). */
#pragma GCC push_options
#pragma GCC optimize("O3")
#define PROD_COLS(T, NAME, ATTR)                                                             \
    ATTR static void NAME(T *out, const T *x, int64_t ld, int64_t rows, int64_t cols) {      \
        for (int64_t j0 = 0; j0 < cols; j0 += 256) { /* a block of outputs stays in cache */ \
            const int64_t j1 = j0 + 256 < cols ? j0 + 256 : cols;                            \
            int64_t r = 0;                                                                   \
            for (; r + 4 <= rows; r += 4) { /* four rows a pass, each element's in order */  \
                const T *x0 = x + r * ld, *x1 = x0 + ld, *x2 = x1 + ld, *x3 = x2 + ld;       \
                for (int64_t j = j0; j < j1; j++) out[j] = out[j] * x0[j] * x1[j] * x2[j] * x3[j]; \
            }                                                                                \
            for (; r < rows; r++) {                                                          \
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

/* out[j * os bytes] = prod_run(out[...], x + j * ld, n, lanes) for j < rows */
void f32_prod_runs(char *out, int64_t os, const float *x, int64_t ld, int64_t rows, int64_t n, int lanes) {
    int64_t j = 0;
#if defined(__x86_64__)
    if (lanes == 8 && tn_cpu_isa() >= TN_ISA_AVX2)
        for (; j + 8 <= rows; j += 8) f32_prod8_rows_avx2(out + j * os, os, x + j * ld, ld, n);
#endif
    f32_prod_runs_each(out + j * os, os, x + j * ld, ld, rows - j, n, lanes);
}
void f64_prod_runs(char *out, int64_t os, const double *x, int64_t ld, int64_t rows, int64_t n, int lanes) {
    f64_prod_runs_each(out, os, x, ld, rows, n, lanes);
}
