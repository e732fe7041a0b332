/* gemm_neon.c — aarch64 Advanced SIMD variant of the GEMM family: the 12×8 float32
 * micro-kernel of the packed engine (GEMV shapes have their own kernels, gemv_neon.c).
 * 24 accumulators of 4 lanes (12 rows × 2 vectors), A's 12 values in three registers
 * and B's 8 in two: 24 fused multiply-adds by lane per 5 loads, 29 of the 32 vector
 * registers. Only called when tn_cpu_arm_isa() says neon or above. */
#include "kernels/gemm_internal.h"

#if defined(__aarch64__)
#include <arm_neon.h>

/* Named accumulators: GCC 12 keeps an array of vectors in memory and stores it back on
 * every iteration of the k loop (44 instructions per 24 fmla against 34). */
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
void f32_gemm_12x8__neon(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc) {
#define DECL(i) float32x4_t c##i##0 = vdupq_n_f32(0), c##i##1 = c##i##0;
    ROWS(DECL)
#undef DECL
    for (int64_t p = 0; p < kc; p++, ap += 12, bp += 8) {
        float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4);
        float32x4_t a0 = vld1q_f32(ap), a1 = vld1q_f32(ap + 4), a2 = vld1q_f32(ap + 8);
#define FMA(i, a, l)                                      \
        c##i##0 = vfmaq_laneq_f32(c##i##0, b0, a, l);     \
        c##i##1 = vfmaq_laneq_f32(c##i##1, b1, a, l);
        FMA(0, a0, 0) FMA(1, a0, 1) FMA(2, a0, 2) FMA(3, a0, 3)
        FMA(4, a1, 0) FMA(5, a1, 1) FMA(6, a1, 2) FMA(7, a1, 3)
        FMA(8, a2, 0) FMA(9, a2, 1) FMA(10, a2, 2) FMA(11, a2, 3)
#undef FMA
    }
#define STORE(i)                                                                     \
    {                                                                                \
        float *d = c + (i) * ldc;                                                    \
        vst1q_f32(d, acc ? vaddq_f32(vld1q_f32(d), c##i##0) : c##i##0);              \
        vst1q_f32(d + 4, acc ? vaddq_f32(vld1q_f32(d + 4), c##i##1) : c##i##1);      \
    }
    ROWS(STORE)
#undef STORE
}
#undef ROWS

#else
/* Not aarch64: the driver never selects this; keep the symbol so the tables link. */
void f32_gemm_12x8__neon(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc) {
    (void)kc; (void)ap; (void)bp; (void)c; (void)ldc; (void)acc;
}
#endif
