/* quant_neon_blocks.h — the aarch64 quantised kernels' shared pieces (quant_neon.c,
 * quant_k_neon.c, quant_i8mm.c): the binary16 scale read, and the Q4_0 / Q4_1 / Q8_0
 * weight blocks (quant.h's layouts) as two int8x16 halves, elements 0..15 and 16..31,
 * with their scale and minimum (Q4_0 minus 8; Q4_1's unsigned 0..15 fit int8). Include
 * after the file's target pragma and <arm_neon.h>. aarch64 only. */
#ifndef TN_QUANT_NEON_BLOCKS_H
#define TN_QUANT_NEON_BLOCKS_H

#include <string.h>

#include "kernels/quant.h"

#define INL static inline __attribute__((always_inline))
#define PRAGMA(x) _Pragma(#x)

INL float h2f(const uint8_t *p) {
    __fp16 h;
    memcpy(&h, p, 2);
    return (float)h;
}

INL void load_q4_0(const uint8_t *blk, int8x16_t *lo, int8x16_t *hi, float *d, float *mn) {
    uint8x16_t t = vld1q_u8(blk + 2);
    *lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(t, vdupq_n_u8(15))), vdupq_n_s8(8));
    *hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(t, 4)), vdupq_n_s8(8));
    *d = h2f(blk);
    *mn = 0;
}
INL void load_q4_1(const uint8_t *blk, int8x16_t *lo, int8x16_t *hi, float *d, float *mn) {
    uint8x16_t t = vld1q_u8(blk + 4);
    *lo = vreinterpretq_s8_u8(vandq_u8(t, vdupq_n_u8(15)));
    *hi = vreinterpretq_s8_u8(vshrq_n_u8(t, 4));
    *d = h2f(blk);
    *mn = h2f(blk + 2);
}
INL void load_q8_0(const uint8_t *blk, int8x16_t *lo, int8x16_t *hi, float *d, float *mn) {
    *lo = vld1q_s8((const int8_t *)blk + 2);
    *hi = vld1q_s8((const int8_t *)blk + 18);
    *d = h2f(blk);
    *mn = 0;
}

#endif
