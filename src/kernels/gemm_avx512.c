/* gemm_avx512.c — AVX-512 variants of the GEMM family: the 12×32 float32 micro-kernel, the
 * 12×32 bfloat16 pair micro-kernel built on VDPBF16PS (AVX512-BF16), and float32-
 * accumulating dot products. Per-function target attributes; only called after
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

static TGT __m512 ld_bf16(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}
static TGT __m512 ld_f16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }

#define DOT_BODY(LD, T, TAIL)                                                           \
    const T *a = x, *b = y;                                                             \
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;                         \
    int64_t i = 0;                                                                      \
    for (; i + 64 <= n; i += 64) {                                                      \
        s0 = _mm512_fmadd_ps(LD(a + i), LD(b + i), s0);                                 \
        s1 = _mm512_fmadd_ps(LD(a + i + 16), LD(b + i + 16), s1);                       \
        s2 = _mm512_fmadd_ps(LD(a + i + 32), LD(b + i + 32), s2);                       \
        s3 = _mm512_fmadd_ps(LD(a + i + 48), LD(b + i + 48), s3);                       \
    }                                                                                   \
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(LD(a + i), LD(b + i), s0);        \
    float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3))); \
    return s + TAIL(a + i, b + i, n - i);

TGT float f32_dot__avx512(const void *x, const void *y, int64_t n) { DOT_BODY(_mm512_loadu_ps, float, f32_dot__scalar) }
TGT float bf16_dot__avx512(const void *x, const void *y, int64_t n) { DOT_BODY(ld_bf16, uint16_t, bf16_dot__scalar) }
TGT float f16_dot__avx512(const void *x, const void *y, int64_t n) { DOT_BODY(ld_f16, uint16_t, f16_dot__scalar) }

TGT_BF16 float bf16_dot__avx512bf16(const void *x, const void *y, int64_t n) {
    const uint16_t *a = x, *b = y;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_dpbf16_ps(s0, (__m512bh)_mm512_loadu_si512(a + i), (__m512bh)_mm512_loadu_si512(b + i));
        s1 = _mm512_dpbf16_ps(s1, (__m512bh)_mm512_loadu_si512(a + i + 32), (__m512bh)_mm512_loadu_si512(b + i + 32));
    }
    for (; i + 32 <= n; i += 32)
        s0 = _mm512_dpbf16_ps(s0, (__m512bh)_mm512_loadu_si512(a + i), (__m512bh)_mm512_loadu_si512(b + i));
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) + bf16_dot__scalar(a + i, b + i, n - i);
}

#else
void f32_gemm_12x32__avx512(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc) {
    (void)kc; (void)ap; (void)bp; (void)c; (void)ldc; (void)acc;
}
void bf16_gemm_dp_12x32__avx512bf16(int64_t kq, const uint16_t *ap, const uint16_t *bp, float *c,
                                    int64_t ldc, int acc) {
    (void)kq; (void)ap; (void)bp; (void)c; (void)ldc; (void)acc;
}
float f32_dot__avx512(const void *x, const void *y, int64_t n) { return f32_dot__scalar(x, y, n); }
float bf16_dot__avx512(const void *x, const void *y, int64_t n) { return bf16_dot__scalar(x, y, n); }
float f16_dot__avx512(const void *x, const void *y, int64_t n) { return f16_dot__scalar(x, y, n); }
float bf16_dot__avx512bf16(const void *x, const void *y, int64_t n) { return bf16_dot__scalar(x, y, n); }
#endif
