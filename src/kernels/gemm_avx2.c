/* gemm_avx2.c — AVX2+FMA(+F16C) variant of the GEMM family: the 6×16 float32 micro-kernel
 * of the packed engine (GEMV shapes have their own kernels, gemv_avx2.c). Compiled
 * with per-function target attributes; only called after tn_cpu_isa() says avx2 or above. */
#include "kernels/gemm_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TGT __attribute__((target("avx2,fma,f16c")))

TGT void f32_gemm_6x16__avx2(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int64_t p = 0; p < kc; p++, ap += 6, bp += 16) {
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8), a;
        a = _mm256_broadcast_ss(ap + 0); c00 = _mm256_fmadd_ps(a, b0, c00); c01 = _mm256_fmadd_ps(a, b1, c01);
        a = _mm256_broadcast_ss(ap + 1); c10 = _mm256_fmadd_ps(a, b0, c10); c11 = _mm256_fmadd_ps(a, b1, c11);
        a = _mm256_broadcast_ss(ap + 2); c20 = _mm256_fmadd_ps(a, b0, c20); c21 = _mm256_fmadd_ps(a, b1, c21);
        a = _mm256_broadcast_ss(ap + 3); c30 = _mm256_fmadd_ps(a, b0, c30); c31 = _mm256_fmadd_ps(a, b1, c31);
        a = _mm256_broadcast_ss(ap + 4); c40 = _mm256_fmadd_ps(a, b0, c40); c41 = _mm256_fmadd_ps(a, b1, c41);
        a = _mm256_broadcast_ss(ap + 5); c50 = _mm256_fmadd_ps(a, b0, c50); c51 = _mm256_fmadd_ps(a, b1, c51);
    }
    __m256 r[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    for (int i = 0; i < 6; i++)
        for (int h = 0; h < 2; h++) {
            float *d = c + i * ldc + 8 * h;
            _mm256_storeu_ps(d, acc ? _mm256_add_ps(_mm256_loadu_ps(d), r[i][h]) : r[i][h]);
        }
}

#else
/* Not x86-64: the driver never selects these; keep the symbols so the tables link. */
void f32_gemm_6x16__avx2(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc) {
    (void)kc; (void)ap; (void)bp; (void)c; (void)ldc; (void)acc;
}
#endif
