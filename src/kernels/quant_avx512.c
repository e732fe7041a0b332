/* quant_avx512.c — AVX-512 VNNI quantised dot kernels (quant.h): the 32 int8 pairs of a
 * block in one vpdpbusd (unsigned × signed bytes summed into int32 lanes, exact), on ymm
 * registers (AVX512-VL), with the 32 registers of the AVX-512 tier holding tiles of 4
 * activation rows × 4 weight rows (the k-quants, quant_k_x86.inc: 4 × 2), and the x8
 * layouts' kernels (quant_x8_x86.inc) with vpdpbusd. Called only
 * when the tier is avx512 or higher and the
 * host has AVX512-VNNI. */
#include "kernels/quant.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#define TGT __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#define SUFFIX(name) name##__avx512vnni
#define DOT(u, s) _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s)
#define DOT_ACC(a, u, s) _mm256_dpbusd_epi32(a, u, s)

#include "kernels/quant_x86.inc"

DEFINE_KERNEL(q4_0, 18, 1, 4, 4, 4)
DEFINE_KERNEL(q4_1, 20, 0, 4, 4, 4)
DEFINE_KERNEL(q8_0, 34, 1, 4, 4, 4)
DEFINE_I4_W8_KERNELS(4, 2, 4, 4)

/* k-quants: vpdpbusd sums times int32 scales (vpmulld). */
#define SCV(a, b) _mm256_set_m128i(_mm_set1_epi32(b), _mm_set1_epi32(a))
#define DOT_SC(u, s, v) _mm256_mullo_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s), v)
#include "kernels/quant_k_x86.inc"

DEFINE_K_KERNEL(q4_k, 4, 2, 4)
DEFINE_K_KERNEL(q6_k, 4, 2, 4)

/* The x8 layouts (quant_x8_x86.inc): each piece's products summed into int32 lanes by
 * vpdpbusd, one instruction where AVX2 takes vpmaddubsw and an int16 add (session 39,
 * docs/INFERENCE.md "The x8 layouts on AVX-512 VNNI hosts"). */
#define X8_PIECE(acc, lo, hi, a, b) _mm256_dpbusd_epi32(_mm256_dpbusd_epi32((acc), (lo), (a)), (hi), (b))
#define X8_FINISH(acc) (acc)
#include "kernels/quant_x8_x86.inc"

#else
/* ISO C forbids an empty translation unit. */
typedef int tn_quant_avx512_unused;
#endif
