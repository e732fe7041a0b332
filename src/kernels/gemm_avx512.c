/* gemm_avx512.c — AVX-512 variants of the GEMM family: the 12×32 float32 micro-kernel and the
 * 12×32 bfloat16 pair micro-kernel built on VDPBF16PS (AVX512-BF16); GEMV shapes have their
 * own kernels (gemv_avx512.c). Per-function target attributes; only called after
 * tn_cpu_isa() says avx512 (and, for the BF16 ones, the host has AVX512-BF16). */
#include "kernels/gemm_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define TGT_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma,f16c")))

/* 24 accumulators + 2 B vectors + 1 broadcast fit in the 32 zmm registers. */
#define ROW(r)                                                                  \
    a = _mm512_set1_ps(ap[r]);                                                  \
    c##r##0 = _mm512_fmadd_ps(a, b0, c##r##0);                                  \
    c##r##1 = _mm512_fmadd_ps(a, b1, c##r##1);
#define DECL(r) __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = _mm512_setzero_ps();
#define STORE(r)                                                                \
    {                                                                           \
        float *d = c + (r) * ldc;                                               \
        if (acc) {                                                              \
            c##r##0 = _mm512_add_ps(_mm512_loadu_ps(d), c##r##0);               \
            c##r##1 = _mm512_add_ps(_mm512_loadu_ps(d + 16), c##r##1);          \
        }                                                                       \
        _mm512_storeu_ps(d, c##r##0);                                           \
        _mm512_storeu_ps(d + 16, c##r##1);                                      \
    }
#define ALL12(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11)

TGT void f32_gemm_12x32__avx512(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc) {
    ALL12(DECL)
    for (int64_t p = 0; p < kc; p++, ap += 12, bp += 32) {
        __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16), a;
        ALL12(ROW)
    }
    ALL12(STORE)
}

#undef ROW
/* One VDPBF16PS multiplies 16 pairs of bf16 and adds both products into 16 floats: the
 * broadcast A operand is the row's (k, k+1) pair as one 32-bit lane. */
#define ROW(r)                                                                          \
    a = (__m512bh)_mm512_set1_epi32(((const int32_t *)ap)[r]);                          \
    c##r##0 = _mm512_dpbf16_ps(c##r##0, a, b0);                                         \
    c##r##1 = _mm512_dpbf16_ps(c##r##1, a, b1);

TGT_BF16 void bf16_gemm_dp_12x32__avx512bf16(int64_t kq, const uint16_t *ap, const uint16_t *bp, float *c,
                                             int64_t ldc, int acc) {
    ALL12(DECL)
    for (int64_t q = 0; q < kq; q++, ap += 24, bp += 64) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(bp), b1 = (__m512bh)_mm512_loadu_si512(bp + 32), a;
        ALL12(ROW)
    }
    ALL12(STORE)
}

#else
void f32_gemm_12x32__avx512(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc) {
    (void)kc; (void)ap; (void)bp; (void)c; (void)ldc; (void)acc;
}
void bf16_gemm_dp_12x32__avx512bf16(int64_t kq, const uint16_t *ap, const uint16_t *bp, float *c,
                                    int64_t ldc, int acc) {
    (void)kq; (void)ap; (void)bp; (void)c; (void)ldc; (void)acc;
}
#endif
