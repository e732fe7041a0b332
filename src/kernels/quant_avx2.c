/* quant_avx2.c — AVX2 quantised dot kernels (quant.h): 32 int8 pairs per block through
 * vpmaddubsw (unsigned × signed -> int16 pairs; |w| <= 128 and |x| <= 127 keep each pair
 * sum below 2^15) and vpmaddwd against ones (-> int32). Tiles of 4 activation rows × 2
 * weight rows fit the 16 ymm registers; decode runs 1 × 4. The k-quants (quant_k_x86.inc)
 * put their scales in the vpmaddwd operand and tile 8 × 1: a weight sub-block's unpacking
 * (nibbles or 6-bit pieces, the scale broadcast) costs more than its products, so it is
 * shared by 8 activation rows, and the 8 int32 sums plus the operands stay in registers
 * (2 × 2, session 16, spilled and unpacked each sub-block for two rows: prefill 0.7× Q4_1's,
 * now 1.1-1.8×, docs/INFERENCE.md). Called only after tn_cpu_isa() allows AVX2. */
#include "kernels/quant.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#include "core/dtype.h"

#define TGT __attribute__((target("avx2,fma,f16c")))
#define SUFFIX(name) name##__avx2

static inline __attribute__((always_inline)) TGT __m256i dot_maddubs(__m256i u, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}
#define DOT(u, s) dot_maddubs(u, s)

#include "kernels/quant_x86.inc"

DEFINE_KERNEL(q4_0, 18, 1, 4, 2, 4)
DEFINE_KERNEL(q4_1, 20, 0, 4, 2, 4)
DEFINE_KERNEL(q8_0, 34, 1, 4, 2, 4)
DEFINE_I4_W8_KERNELS(2, 2, 4, 2)

/* k-quants: vpmaddubsw pairs times int16 scales through vpmaddwd. */
#define SCV(a, b) _mm256_set_m128i(_mm_set1_epi16((short)(b)), _mm_set1_epi16((short)(a)))
#define DOT_SC(u, s, v) _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), v)
#include "kernels/quant_k_x86.inc"

DEFINE_K_KERNEL(q4_k, 8, 1, 4)
DEFINE_K_KERNEL(q6_k, 8, 1, 4)

/* The activation rows' blocks (quant.h tn_q8x_block), as the reference loop computes them:
 * max |x| (maxps returns its second operand, the running maximum, for a NaN element, as
 * fmaxf skips it), then x * (127 / max) rounded half to even by vcvtps2dq (the default
 * rounding mode, nearbyintf's), packed to bytes (no value saturates: |q| <= 127), the
 * exact int32 sum, the binary16-rounded scales. Session 39: the scalar loop, calling libm's
 * fmaxf and nearbyintf per element, was 2.5 % of a decode run (perf). */
TGT void tn_quant_q8x_row__avx2(const float *x, int64_t k, tn_q8x_block *out) {
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int64_t b = 0; b < k / TN_QK; b++) {
        const float *xb = x + b * TN_QK;
        __m256 v[4], m = _mm256_setzero_ps();
        for (int j = 0; j < 4; j++) {
            v[j] = _mm256_loadu_ps(xb + 8 * j);
            m = _mm256_max_ps(_mm256_and_ps(v[j], absmask), m);
        }
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        float amax = _mm_cvtss_f32(h);
        float d = amax / 127.0f, id = amax != 0 ? 127.0f / amax : 0.0f;
        __m256i q[4];
        for (int j = 0; j < 4; j++) q[j] = _mm256_cvtps_epi32(_mm256_mul_ps(v[j], _mm256_set1_ps(id)));
        __m256i s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
        __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        _mm256_storeu_si256((__m256i *)out[b].q, _mm256_permutevar8x32_epi32(p, order));
        out[b].d = tn_round_half_f32(d);
        out[b].s = tn_round_half_f32(d * (float)_mm_cvtsi128_si32(s4));
    }
}

/* The x8 layouts (quant_x8_x86.inc): int16 pair sums, widened once per block or chunk. */
#define X8_PIECE(acc, lo, hi, a, b) \
    _mm256_add_epi16((acc), _mm256_add_epi16(_mm256_maddubs_epi16((lo), (a)), _mm256_maddubs_epi16((hi), (b))))
#define X8_FINISH(acc) _mm256_madd_epi16((acc), _mm256_set1_epi16(1))
#include "kernels/quant_x8_x86.inc"

#else
/* ISO C forbids an empty translation unit. */
typedef int tn_quant_avx2_unused;
#endif
