/* quant_k_neon.c — aarch64 k-quant dot kernels (quant.h, "k-quants") on the dot-product
 * extension: weights unpacked to int8 (Q4_K nibbles 0..15; Q6_K q - 32, signed, so no
 * bias term), 16 pairs per sdot into int32 lanes, scaled by the sub-block's scale in int32
 * (exact), one float FMA per super-block (Q4_K: two, the minimum term from bsums). Tiles
 * of 2 activation rows × 2 weight rows; decode runs 1 × 4. Compiled only on aarch64;
 * chosen when the host reports ASIMDDP (cpu_features.c). */
#if defined(__aarch64__)
#pragma GCC target("arch=armv8.2-a+dotprod")
#include <arm_neon.h>

#include "kernels/quant.h"
#include "kernels/quant_neon_blocks.h"

#define K_TILE_BEGIN(BB)                                                                              \
    float32x4_t acc[4][4];                                                                            \
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                                  \
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) acc[i][r] = vdupq_n_f32(0);                  \
    for (int64_t b = 0; b < nb; b++) {                                                                \
        const uint8_t *blk[4];                                                                        \
        int32x4_t isum[4][4];                                                                         \
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {                                            \
            blk[r] = w + r * ldw + b * (BB);                                                          \
            __builtin_prefetch(blk[r] + R * ldw);                                                     \
            __builtin_prefetch(blk[r] + R * ldw + 64);                                                \
            __builtin_prefetch(blk[r] + R * ldw + 128);                                               \
        }                                                                                             \
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                              \
            PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) isum[i][r] = vdupq_n_s32(0);

#define K_TILE_END                                                                                    \
    }                                                                                                 \
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                                  \
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) y[i * ldy + r] = vaddvq_f32(acc[i][r]);

INL void ktile_q4_k(int64_t nb, const int M, const int R, const uint8_t *w, int64_t ldw, const tn_q8k_block *x,
                    int64_t ldx, float *y, int64_t ldy) {
    K_TILE_BEGIN(144)
    uint8_t sc[4][8], mn[4][8];
    PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) tn_q4k_scale_min(blk[r] + 4, sc[r], mn[r]);
    for (int s = 0; s < 8; s++) {
        int8x16_t lo[4], hi[4];
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {
            const uint8_t *q = blk[r] + 16 + 32 * (s >> 1);
            uint8x16_t a = vld1q_u8(q), c = vld1q_u8(q + 16);
            if (s & 1) a = vshrq_n_u8(a, 4), c = vshrq_n_u8(c, 4);
            else a = vandq_u8(a, vdupq_n_u8(15)), c = vandq_u8(c, vdupq_n_u8(15));
            lo[r] = vreinterpretq_s8_u8(a), hi[r] = vreinterpretq_s8_u8(c);
        }
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
            const int8_t *xq = x[i * ldx + b].q + 32 * s;
            int8x16_t x0 = vld1q_s8(xq), x1 = vld1q_s8(xq + 16);
            PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {
                int32x4_t p = vdotq_s32(vdotq_s32(vdupq_n_s32(0), lo[r], x0), hi[r], x1);
                isum[i][r] = vmlaq_n_s32(isum[i][r], p, sc[r][s]);
            }
        }
    }
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
        const tn_q8k_block *xb = x + i * ldx + b;
        int16x8_t pairs = vpaddq_s16(vld1q_s16(xb->bsums), vld1q_s16(xb->bsums + 8)); /* bsums[2s] + bsums[2s+1] */
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {
            int16x8_t m16 = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(mn[r])));
            int32x4_t msum = vmlal_s16(vmull_s16(vget_low_s16(pairs), vget_low_s16(m16)), vget_high_s16(pairs),
                                       vget_high_s16(m16));
            acc[i][r] = vfmaq_f32(acc[i][r], vcvtq_f32_s32(isum[i][r]), vdupq_n_f32(h2f(blk[r]) * xb->d));
            acc[i][r] = vfmaq_f32(acc[i][r], vcvtq_f32_s32(msum), vdupq_n_f32(-(h2f(blk[r] + 2) * xb->d)));
        }
    }
    K_TILE_END
}

INL void ktile_q6_k(int64_t nb, const int M, const int R, const uint8_t *w, int64_t ldw, const tn_q8k_block *x,
                    int64_t ldx, float *y, int64_t ldy) {
    K_TILE_BEGIN(210)
    for (int h = 0; h < 2; h++)
        for (int t = 0; t < 4; t++) {
            int8x16_t lo[4], hi[4];
            int sa[4], sb[4];
            PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {
                const uint8_t *ql = blk[r] + 64 * h + 32 * (t & 1), *qh = blk[r] + 128 + 32 * h;
                int8x16_t sh4 = vdupq_n_s8((int8_t)(-4 * (t >> 1))), sh2 = vdupq_n_s8((int8_t)(-2 * t));
                uint8x16_t l0 = vandq_u8(vshlq_u8(vld1q_u8(ql), sh4), vdupq_n_u8(15));
                uint8x16_t l1 = vandq_u8(vshlq_u8(vld1q_u8(ql + 16), sh4), vdupq_n_u8(15));
                uint8x16_t h0 = vandq_u8(vshlq_u8(vld1q_u8(qh), sh2), vdupq_n_u8(3));
                uint8x16_t h1 = vandq_u8(vshlq_u8(vld1q_u8(qh + 16), sh2), vdupq_n_u8(3));
                lo[r] = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(l0, vshlq_n_u8(h0, 4))), vdupq_n_s8(32));
                hi[r] = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(l1, vshlq_n_u8(h1, 4))), vdupq_n_s8(32));
                const int8_t *scl = (const int8_t *)(blk[r] + 192) + 8 * h + 2 * t;
                sa[r] = scl[0], sb[r] = scl[1];
            }
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
                const int8_t *xq = x[i * ldx + b].q + 128 * h + 32 * t;
                int8x16_t x0 = vld1q_s8(xq), x1 = vld1q_s8(xq + 16);
                PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {
                    isum[i][r] = vmlaq_n_s32(isum[i][r], vdotq_s32(vdupq_n_s32(0), lo[r], x0), sa[r]);
                    isum[i][r] = vmlaq_n_s32(isum[i][r], vdotq_s32(vdupq_n_s32(0), hi[r], x1), sb[r]);
                }
            }
        }
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
        const tn_q8k_block *xb = x + i * ldx + b;
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++)
            acc[i][r] = vfmaq_f32(acc[i][r], vcvtq_f32_s32(isum[i][r]), vdupq_n_f32(h2f(blk[r] + 208) * xb->d));
    }
    K_TILE_END
}

#define K_CALL(FMT, M, R) ktile_##FMT(nb, M, R, w + r * ldw, ldw, x + i * ldx, ldx, y + i * ldy + r, ldy)
#define DEFINE_K_KERNEL(FMT)                                                                          \
    TN_QKDOT_DECLARE(FMT##_qdot__neon) {                                                              \
        if (m == 1) {                                                                                 \
            int64_t r = 0, i = 0;                                                                     \
            for (; r + 4 <= nrows; r += 4) K_CALL(FMT, 1, 4);                                         \
            for (; r < nrows; r++) K_CALL(FMT, 1, 1);                                                 \
            return;                                                                                   \
        }                                                                                             \
        for (int64_t i = 0; i < m; i += 2) {                                                          \
            int64_t r = 0;                                                                            \
            if (m - i >= 2) {                                                                         \
                for (; r + 2 <= nrows; r += 2) K_CALL(FMT, 2, 2);                                     \
                for (; r < nrows; r++) K_CALL(FMT, 2, 1);                                             \
            } else {                                                                                  \
                for (; r + 2 <= nrows; r += 2) K_CALL(FMT, 1, 2);                                     \
                for (; r < nrows; r++) K_CALL(FMT, 1, 1);                                             \
            }                                                                                         \
        }                                                                                             \
    }

DEFINE_K_KERNEL(q4_k)
DEFINE_K_KERNEL(q6_k)

#else
/* ISO C forbids an empty translation unit. */
typedef int tn_quant_k_neon_unused;
#endif
