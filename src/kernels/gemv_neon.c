/* gemv_neon.c — aarch64 NEON GEMV kernels (see gemv.h): R weight rows in lockstep against
 * x vectors held in registers, one float32x4 accumulator per output, vfmaq_f32. bfloat16
 * widens by a 16-bit left shift (vshll), float16 by vcvt; the k tail (< one step) is copied
 * into a zero-padded buffer and runs through the same step. Compiled only on aarch64
 * (NEON is part of the base ISA there). */
#if defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#include "kernels/gemv.h"

#define INL static inline __attribute__((always_inline))
#define PRAGMA(x) _Pragma(#x)

/* One k-step: STEP elements into NV float32x4 vectors. */
INL void ld_f32(const float *p, float32x4_t *v) { v[0] = vld1q_f32(p); }
INL void ld_bf16(const uint16_t *p, float32x4_t *v) {
    uint16x8_t t = vld1q_u16(p);
    v[0] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(t), 16));
    v[1] = vreinterpretq_f32_u32(vshll_high_n_u16(t, 16));
}
INL void ld_f16(const uint16_t *p, float32x4_t *v) {
    float16x8_t t = vreinterpretq_f16_u16(vld1q_u16(p));
    v[0] = vcvt_f32_f16(vget_low_f16(t));
    v[1] = vcvt_high_f32_f16(t);
}

#define DEFINE_BLOCK(NAME, T, STEP, NV, LD)                                                   \
    INL void NAME(int64_t k, const int M, const int R, const T *x, int64_t ldx, const T *w, int64_t ldw, \
                  float *out, int64_t ldo) {                                                  \
        float32x4_t acc[TN_GEMV_MAX_M][8], xv[TN_GEMV_MAX_M][NV], wv[NV];                     \
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                      \
            PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) acc[i][r] = vdupq_n_f32(0);      \
        int64_t p = 0;                                                                        \
        const T *pf = w + R * ldw;                                                            \
        for (; p + STEP <= k; p += STEP) {                                                    \
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) LD(x + i * ldx + p, xv[i]);      \
            PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) {                                \
                __builtin_prefetch(pf + r * ldw + p);                                         \
                LD(w + r * ldw + p, wv);                                                      \
                PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                              \
                    PRAGMA(GCC unroll 2) for (int v = 0; v < NV; v++)                         \
                        acc[i][r] = vfmaq_f32(acc[i][r], xv[i][v], wv[v]);                    \
            }                                                                                 \
        }                                                                                     \
        if (p < k) {                                                                          \
            T tx[STEP], tw[STEP];                                                             \
            size_t rem = (size_t)(k - p) * sizeof(T);                                         \
            for (int i = 0; i < M; i++) {                                                     \
                memset(tx, 0, sizeof tx);                                                     \
                memcpy(tx, x + i * ldx + p, rem);                                             \
                LD(tx, xv[i]);                                                                \
            }                                                                                 \
            for (int r = 0; r < R; r++) {                                                     \
                memset(tw, 0, sizeof tw);                                                     \
                memcpy(tw, w + r * ldw + p, rem);                                             \
                LD(tw, wv);                                                                   \
                for (int i = 0; i < M; i++)                                                   \
                    for (int v = 0; v < NV; v++) acc[i][r] = vfmaq_f32(acc[i][r], xv[i][v], wv[v]); \
            }                                                                                 \
        }                                                                                     \
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                      \
            PRAGMA(GCC unroll 8) for (int r = 0; r < R; r++) out[i * ldo + r] = vaddvq_f32(acc[i][r]); \
    }

DEFINE_BLOCK(block_f32, float, 4, 1, ld_f32)
DEFINE_BLOCK(block_bf16, uint16_t, 8, 2, ld_bf16)
DEFINE_BLOCK(block_f16, uint16_t, 8, 2, ld_f16)

#define ROWS(BLOCK, M, R)                                                                     \
    {                                                                                         \
        int64_t r0 = 0;                                                                       \
        for (; r0 + (R) <= nrows; r0 += (R)) BLOCK(k, M, R, x, ldx, w + r0 * ldw, ldw, out + r0, ldo); \
        for (; r0 < nrows; r0++) BLOCK(k, M, 1, x, ldx, w + r0 * ldw, ldw, out + r0, ldo);    \
        return;                                                                               \
    }
#define KERNEL(NAME, BLOCK, T)                                                                \
    void NAME(int64_t k, int m, const void *x_, int64_t ldx, const void *w_, int64_t ldw, int64_t nrows, \
              float *out, int64_t ldo) {                                                      \
        const T *x = x_, *w = w_;                                                             \
        switch (m) {                                                                          \
        case 1: ROWS(BLOCK, 1, 8)                                                             \
        case 2: ROWS(BLOCK, 2, 4)                                                             \
        case 3: ROWS(BLOCK, 3, 4)                                                             \
        default: ROWS(BLOCK, 4, 4)                                                            \
        }                                                                                     \
    }

KERNEL(f32_gemv__neon, block_f32, float)
KERNEL(bf16_gemv__neon, block_bf16, uint16_t)
KERNEL(f16_gemv__neon, block_f16, uint16_t)

#else
/* ISO C forbids an empty translation unit. */
typedef int tn_gemv_neon_unused;
#endif
