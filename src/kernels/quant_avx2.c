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

/* The x8 layouts (quant_x8_x86.inc): int16 pair sums, widened once per block or chunk. */
#define X8_PIECE(acc, lo, hi, a, b) \
    _mm256_add_epi16((acc), _mm256_add_epi16(_mm256_maddubs_epi16((lo), (a)), _mm256_maddubs_epi16((hi), (b))))
#define X8_FINISH(acc) _mm256_madd_epi16((acc), _mm256_set1_epi16(1))
#include "kernels/quant_x8_x86.inc"

#else
/* ISO C forbids an empty translation unit. */
typedef int tn_quant_avx2_unused;
#endif
