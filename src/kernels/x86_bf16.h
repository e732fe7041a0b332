/* x86_bf16.h — float32 → bfloat16 rounding of 16 lanes, shared by the x86 GEMM files
 * (gemm_amx.c, gemv_rows_avx512.c). Round to nearest even, NaN → 0x7FC0: bit-identical
 * to tn_f32_to_bf16. Each includer compiles it for its own target; call it only after
 * tn_cpu_isa() says avx512. */
#ifndef TN_X86_BF16_H
#define TN_X86_BF16_H

#if defined(__x86_64__)
#include <immintrin.h>

/* The bfloat16 bits in the low half of each 32-bit lane. */
static inline __attribute__((target("avx512f"), always_inline)) __m512i tn_round_bf16_lanes(__m512 v) {
    __m512i u = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF))), 16);
    return _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7FC0));
}

/* The 16 bfloat16 values, narrowed. */
static inline __attribute__((target("avx512f"), always_inline)) __m256i tn_round_bf16(__m512 v) {
    return _mm512_cvtepi32_epi16(tn_round_bf16_lanes(v));
}
#endif

#endif
