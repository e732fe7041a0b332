/* gemv_avx512.c — AVX-512 GEMV kernels (see gemv.h): R weight rows (8 for one x vector,
 * 4 for two to four) stream in lockstep along k, each x vector is loaded once per k-step
 * and reused from a register for all R rows, one zmm accumulator per output; the k tail is
 * a masked load (zeros contribute nothing), so no scalar loop. The next block's rows are
 * prefetched one block ahead. bfloat16 is widened by bit shifts (even/odd lanes, no
 * permute) or, with AVX512-BF16, fed to VDPBF16PS directly; float16 via VCVTPH2PS.
 * Per-function target attributes; called only after tn_cpu_isa() allows. */
#include "kernels/gemv.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define TGT_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma,f16c")))
#define INL static inline __attribute__((always_inline))
#define PRAGMA(x) _Pragma(#x)

/* Loaders: one k-step of STEP elements into NV float32 vectors (LDM: only `rem` < STEP
 * elements, the rest zero). */
INL TGT void ld_f32(const float *p, __m512 *v) { v[0] = _mm512_loadu_ps(p); }
INL TGT void ldm_f32(const float *p, int64_t rem, __m512 *v) {
    v[0] = _mm512_maskz_loadu_ps((__mmask16)((1u << rem) - 1), p);
}
INL TGT void split_bf16(__m512i t, __m512 *v) {
    v[0] = _mm512_castsi512_ps(_mm512_slli_epi32(t, 16));
    v[1] = _mm512_castsi512_ps(_mm512_and_si512(t, _mm512_set1_epi32((int)0xFFFF0000u)));
}
INL TGT void ld_bf16(const uint16_t *p, __m512 *v) { split_bf16(_mm512_loadu_si512(p), v); }
INL TGT void ldm_bf16(const uint16_t *p, int64_t rem, __m512 *v) {
    split_bf16(_mm512_maskz_loadu_epi16((__mmask32)((1ull << rem) - 1), p), v);
}
INL TGT void ld_f16(const uint16_t *p, __m512 *v) { v[0] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
INL TGT void ldm_f16(const uint16_t *p, int64_t rem, __m512 *v) {
    v[0] = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16((__mmask16)((1u << rem) - 1), p));
}

/* Bytes ahead of the current row position that are prefetched: the same position in the
 * next block of R rows. */
#ifndef TN_GEMV_NO_PREFETCH
#define PREFETCH(ptr) _mm_prefetch((const char *)(ptr), _MM_HINT_T0)
#else
#define PREFETCH(ptr) ((void)0)
#endif

#define DEFINE_BLOCK(NAME, T, STEP, NV, LD, LDM)                                              \
    INL TGT void NAME(int64_t k, const int M, const int R, const int PF, const T *x, int64_t ldx, const T *w, \
                      int64_t ldw, float *out, int64_t ldo) {                                 \
        __m512 acc[TN_GEMV_MAX_M][8], xv[TN_GEMV_MAX_M][NV], wv[NV];                          \
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                      \
            PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) acc[i][r] = _mm512_setzero_ps(); \
        int64_t p = 0;                                                                        \
        const T *pf = w + R * ldw;                                                            \
        for (; p + STEP <= k; p += STEP) {                                                    \
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) LD(x + i * ldx + p, xv[i]);      \
            PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) {                                \
                if (PF) PREFETCH(pf + r * ldw + p);                                           \
                LD(w + r * ldw + p, wv);                                                      \
                PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                              \
                    PRAGMA(GCC unroll 2) for (int v = 0; v < NV; v++)                         \
                        acc[i][r] = _mm512_fmadd_ps(xv[i][v], wv[v], acc[i][r]);              \
            }                                                                                 \
        }                                                                                     \
        if (p < k) {                                                                          \
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) LDM(x + i * ldx + p, k - p, xv[i]); \
            PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) {                                \
                LDM(w + r * ldw + p, k - p, wv);                                              \
                PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                              \
                    PRAGMA(GCC unroll 2) for (int v = 0; v < NV; v++)                         \
                        acc[i][r] = _mm512_fmadd_ps(xv[i][v], wv[v], acc[i][r]);              \
            }                                                                                 \
        }                                                                                     \
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                      \
            PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) out[i * ldo + r] = _mm512_reduce_add_ps(acc[i][r]); \
    }

DEFINE_BLOCK(block_f32, float, 16, 1, ld_f32, ldm_f32)
DEFINE_BLOCK(block_bf16, uint16_t, 32, 2, ld_bf16, ldm_bf16)
DEFINE_BLOCK(block_f16, uint16_t, 16, 1, ld_f16, ldm_f16)

/* VDPBF16PS: each lane adds x[2l]*w[2l] + x[2l+1]*w[2l+1] to its float32 accumulator. */
INL TGT_BF16 void block_bf16dp(int64_t k, const int M, const int R, const int PF, const uint16_t *x, int64_t ldx,
                               const uint16_t *w, int64_t ldw, float *out, int64_t ldo) {
    __m512 acc[TN_GEMV_MAX_M][8];
    __m512bh xv[TN_GEMV_MAX_M], wv;
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)
        PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) acc[i][r] = _mm512_setzero_ps();
    int64_t p = 0;
    const uint16_t *pf = w + R * ldw;
    for (; p + 32 <= k; p += 32) {
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) xv[i] = (__m512bh)_mm512_loadu_si512(x + i * ldx + p);
        PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) {
            if (PF) PREFETCH(pf + r * ldw + p);
            wv = (__m512bh)_mm512_loadu_si512(w + r * ldw + p);
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], xv[i], wv);
        }
    }
    if (p < k) {
        __mmask32 mk = (__mmask32)((1ull << (k - p)) - 1);
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) xv[i] = (__m512bh)_mm512_maskz_loadu_epi16(mk, x + i * ldx + p);
        PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) {
            wv = (__m512bh)_mm512_maskz_loadu_epi16(mk, w + r * ldw + p);
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], xv[i], wv);
        }
    }
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)
        PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) out[i * ldo + r] = _mm512_reduce_add_ps(acc[i][r]);
}

/* All nrows rows: blocks of R, then the leftover rows one at a time. */
#define ROWS(BLOCK, T, M, R)                                                                  \
    {                                                                                         \
        int64_t r0 = 0;                                                                       \
        for (; r0 + (R) <= nrows; r0 += (R)) BLOCK(k, M, R, PF, x, ldx, w + r0 * ldw, ldw, out + r0, ldo); \
        for (; r0 < nrows; r0++) BLOCK(k, M, 1, PF, x, ldx, w + r0 * ldw, ldw, out + r0, ldo); \
        return;                                                                               \
    }
#define KERNEL_PF(NAME, ATTR, BLOCK, T, PF_)                                                   \
    ATTR void NAME(int64_t k, int m, const void *x_, int64_t ldx, const void *w_, int64_t ldw, int64_t nrows, \
                   float *out, int64_t ldo) {                                                 \
        const T *x = x_, *w = w_;                                                             \
        const int PF = PF_;                                                                   \
        switch (m) {                                                                          \
        case 1: ROWS(BLOCK, T, 1, 8)                                                          \
        case 2: ROWS(BLOCK, T, 2, 4)                                                          \
        case 3: ROWS(BLOCK, T, 3, 4)                                                          \
        default: ROWS(BLOCK, T, 4, 4)                                                         \
        }                                                                                     \
    }

/* Each kernel twice: prefetching the next block of rows (weights streamed from memory), and
 * without (weights already in this core's cache, where the prefetches only take load slots). */
#define KERNEL(NAME, ATTR, BLOCK, T) KERNEL_PF(NAME, ATTR, BLOCK, T, 1) KERNEL_PF(NAME##_hot, ATTR, BLOCK, T, 0)
KERNEL(f32_gemv__avx512, TGT, block_f32, float)
KERNEL(bf16_gemv__avx512, TGT, block_bf16, uint16_t)
KERNEL(f16_gemv__avx512, TGT, block_f16, uint16_t)
/* VDPBF16PS issues on one port (about one per two cycles here) where FMA issues on two: it
 * wins for one or two x vectors (84 vs 72 GB/s at m = 1, L2-resident 576x576), the widening
 * FMA path wins from three on (m = 4: 23 vs 28 us). */
INL TGT_BF16 void bf16_avx512bf16(int64_t k, int m, const void *x_, int64_t ldx, const void *w_, int64_t ldw,
                                  int64_t nrows, float *out, int64_t ldo, const int PF) {
    const uint16_t *x = x_, *w = w_;
    switch (m) {
    case 1: ROWS(block_bf16dp, uint16_t, 1, 8)
    case 2: ROWS(block_bf16dp, uint16_t, 2, 4)
    case 3: ROWS(block_bf16, uint16_t, 3, 4)
    default: ROWS(block_bf16, uint16_t, 4, 4)
    }
}
TGT_BF16 TN_GEMV_DECLARE(bf16_gemv__avx512bf16) { bf16_avx512bf16(k, m, x, ldx, w, ldw, nrows, out, ldo, 1); }
TGT_BF16 TN_GEMV_DECLARE(bf16_gemv__avx512bf16_hot) { bf16_avx512bf16(k, m, x, ldx, w, ldw, nrows, out, ldo, 0); }

#else
/* Not x86-64: never selected; the symbols keep the dispatch tables linking. */
TN_GEMV_DECLARE(f32_gemv__avx512) { f32_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(bf16_gemv__avx512) { bf16_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(f16_gemv__avx512) { f16_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(bf16_gemv__avx512bf16) { bf16_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(f32_gemv__avx512_hot) { f32_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(bf16_gemv__avx512_hot) { bf16_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(f16_gemv__avx512_hot) { f16_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
TN_GEMV_DECLARE(bf16_gemv__avx512bf16_hot) { bf16_gemv__scalar(k, m, x, ldx, w, ldw, nrows, out, ldo); }
#endif
