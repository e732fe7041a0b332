/* gemv_avx2.c — AVX2+FMA(+F16C) GEMV kernels (see gemv.h): the structure of the AVX-512
 * ones (R weight rows in lockstep, x reused from registers, one ymm accumulator per
 * output, next block prefetched) sized for 16 registers; the k tail (< one vector) is
 * summed in scalar code after the vector part. Called only after tn_cpu_isa() allows. */
#include "kernels/gemv.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "core/dtype.h"

#define TGT __attribute__((target("avx2,fma,f16c")))
#define INL static inline __attribute__((always_inline))
#define PRAGMA(x) _Pragma(#x)

INL TGT void ld_f32(const float *p, __m256 *v) { v[0] = _mm256_loadu_ps(p); }
INL TGT void ld_bf16(const uint16_t *p, __m256 *v) {
    __m256i t = _mm256_loadu_si256((const __m256i *)p);
    v[0] = _mm256_castsi256_ps(_mm256_slli_epi32(t, 16));
    v[1] = _mm256_castsi256_ps(_mm256_and_si256(t, _mm256_set1_epi32((int)0xFFFF0000u)));
}
INL TGT void ld_f16(const uint16_t *p, __m256 *v) { v[0] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
INL TGT float s_f32(const float *p) { return *p; }
INL TGT float s_bf16(const uint16_t *p) { return tn_bf16_to_f32(*p); }
INL TGT float s_f16(const uint16_t *p) { return _cvtsh_ss(*p); }

INL TGT float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#define PREFETCH(ptr) _mm_prefetch((const char *)(ptr), _MM_HINT_T0)

#define DEFINE_BLOCK(NAME, T, STEP, NV, LD, SLD)                                              \
    INL TGT void NAME(int64_t k, const int M, const int R, const int PF, const T *x, int64_t ldx, const T *w, \
                      int64_t ldw, float *out, int64_t ldo) {                                 \
        __m256 acc[TN_GEMV_MAX_M][8], xv[TN_GEMV_MAX_M][NV], wv[NV];                          \
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                      \
            PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) acc[i][r] = _mm256_setzero_ps(); \
        int64_t p = 0;                                                                        \
        const T *pf = w + R * ldw;                                                            \
        for (; p + STEP <= k; p += STEP) {                                                    \
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) LD(x + i * ldx + p, xv[i]);      \
            PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) {                                \
                if (PF) PREFETCH(pf + r * ldw + p);                                           \
                LD(w + r * ldw + p, wv);                                                      \
                PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                              \
                    PRAGMA(GCC unroll 2) for (int v = 0; v < NV; v++)                         \
                        acc[i][r] = _mm256_fmadd_ps(xv[i][v], wv[v], acc[i][r]);              \
            }                                                                                 \
        }                                                                                     \
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                      \
            PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) {                                \
                float s = hsum(acc[i][r]);                                                    \
                for (int64_t q = p; q < k; q++) s += SLD(x + i * ldx + q) * SLD(w + r * ldw + q); \
                out[i * ldo + r] = s;                                                         \
            }                                                                                 \
    }

DEFINE_BLOCK(block_f32, float, 8, 1, ld_f32, s_f32)
DEFINE_BLOCK(block_bf16, uint16_t, 16, 2, ld_bf16, s_bf16)
DEFINE_BLOCK(block_f16, uint16_t, 8, 1, ld_f16, s_f16)

#define ROWS(BLOCK, M, R)                                                                     \
    {                                                                                         \
        int64_t r0 = 0;                                                                       \
        for (; r0 + (R) <= nrows; r0 += (R)) BLOCK(k, M, R, PF, x, ldx, w + r0 * ldw, ldw, out + r0, ldo); \
        for (; r0 < nrows; r0++) BLOCK(k, M, 1, PF, x, ldx, w + r0 * ldw, ldw, out + r0, ldo); \
        return;                                                                               \
    }
/* Rows per block for m = 1..4, keeping accumulators + x + w within 16 ymm registers. */
#define KERNEL_PF(NAME, BLOCK, T, R1, R2, R3, R4, PF_)                                        \
    TGT void NAME(int64_t k, int m, const void *x_, int64_t ldx, const void *w_, int64_t ldw, int64_t nrows, \
                  float *out, int64_t ldo) {                                                  \
        const T *x = x_, *w = w_;                                                             \
        const int PF = PF_;                                                                   \
        switch (m) {                                                                          \
        case 1: ROWS(BLOCK, 1, R1)                                                            \
        case 2: ROWS(BLOCK, 2, R2)                                                            \
        case 3: ROWS(BLOCK, 3, R3)                                                            \
        default: ROWS(BLOCK, 4, R4)                                                           \
        }                                                                                     \
    }

/* Each kernel twice: prefetching the next block of rows, and without (see gemv.h, hot). */
#define KERNEL(NAME, BLOCK, T, R1, R2, R3, R4)                                                \
    KERNEL_PF(NAME, BLOCK, T, R1, R2, R3, R4, 1) KERNEL_PF(NAME##_hot, BLOCK, T, R1, R2, R3, R4, 0)
KERNEL(f32_gemv__avx2, block_f32, float, 8, 4, 2, 2)
KERNEL(bf16_gemv__avx2, block_bf16, uint16_t, 8, 4, 2, 1)
KERNEL(f16_gemv__avx2, block_f16, uint16_t, 8, 4, 2, 2)

#else
TN_GEMV_DECLARE(f32_gemv__avx2) { f32_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(bf16_gemv__avx2) { bf16_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(f16_gemv__avx2) { f16_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(f32_gemv__avx2_hot) { f32_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(bf16_gemv__avx2_hot) { bf16_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(f16_gemv__avx2_hot) { f16_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
#endif
