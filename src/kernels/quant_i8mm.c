/* quant_i8mm.c — aarch64 quantised dot kernels (quant.h) on the int8 matrix-multiply
 * extension: SMMLA multiplies a 2×8 int8 block of two activation rows by a 2×8 block of
 * two weight rows into a 2×2 tile of int32 sums (32 multiply-adds per instruction, twice
 * SDOT's 16), so a 32-element block of a (2 activation rows, 2 weight rows) pair is four
 * SMMLA. Rows are paired by interleaving their 8-byte groups (zip of the 64-bit lanes).
 * The integer sums are exact; each block's term is scaled and added in float32 in the
 * reference kernel's order and operations (quant_ref.c: (d_w·d_x)·Σ, plus m_w·s_x for
 * Q4_1; 8da4w: s·Σ per group, then ·d_x), so the results are bit-identical to it
 * (tests/c/test_quant.c checks equality). Odd row counts repeat a row to fill a pair and
 * store only the real outputs. Q4_0 / Q4_1 / Q8_0 and 8da4w; the k-quants and the int8
 * weight-only product (float activations) stay on the dotprod kernels. Compiled only on
 * aarch64; chosen when the host reports HWCAP2_I8MM (cpu_features.c). */
#if defined(__aarch64__)
#pragma GCC target("arch=armv8.2-a+dotprod+i8mm")
#include <arm_neon.h>

#include "kernels/quant.h"
#include "kernels/quant_neon_blocks.h"

/* Two rows' 32 elements (a0|a1 and b0|b1 as halves) as the four SMMLA operands: group g
 * holds elements 8g..8g+7 of row a, then the same of row b. */
INL void pair_groups(int8x16_t a0, int8x16_t a1, int8x16_t b0, int8x16_t b1, int8x16_t g[4]) {
    int64x2_t A0 = vreinterpretq_s64_s8(a0), A1 = vreinterpretq_s64_s8(a1);
    int64x2_t B0 = vreinterpretq_s64_s8(b0), B1 = vreinterpretq_s64_s8(b1);
    g[0] = vreinterpretq_s8_s64(vzip1q_s64(A0, B0));
    g[1] = vreinterpretq_s8_s64(vzip2q_s64(A0, B0));
    g[2] = vreinterpretq_s8_s64(vzip1q_s64(A1, B1));
    g[3] = vreinterpretq_s8_s64(vzip2q_s64(A1, B1));
}

/* The 2×2 tile [xa·wa, xa·wb, xb·wa, xb·wb] of one 32-element block, exact. */
INL int32x4_t tile_sum(int32x4_t acc, const int8x16_t xg[4], const int8x16_t wg[4]) {
    acc = vmmlaq_s32(acc, xg[0], wg[0]);
    acc = vmmlaq_s32(acc, xg[1], wg[1]);
    acc = vmmlaq_s32(acc, xg[2], wg[2]);
    return vmmlaq_s32(acc, xg[3], wg[3]);
}

/* Lanes [p, q, p, q] and [p, p, q, q] of two floats: a tile's weight-row and activation-row
 * factors. */
INL float32x4_t by_w(float p, float q) {
    float32x2_t t = vset_lane_f32(q, vdup_n_f32(p), 1);
    return vcombine_f32(t, t);
}
INL float32x4_t by_x(float p, float q) { return vcombine_f32(vdup_n_f32(p), vdup_n_f32(q)); }

/* Stores the real outputs of a tile for activation-row pair (i, i+1) and weight-row pair
 * (r, r+1) of a tile with mi activation rows and nr weight rows. */
INL void store_tile(float32x4_t v, int i, int r, int mi, int nr, float *y, int64_t ldy) {
    float t[4];
    vst1q_f32(t, v);
    if (i < mi && r < nr) y[i * ldy + r] = t[0];
    if (i < mi && r + 1 < nr) y[i * ldy + r + 1] = t[1];
    if (i + 1 < mi && r < nr) y[(i + 1) * ldy + r] = t[2];
    if (i + 1 < mi && r + 1 < nr) y[(i + 1) * ldy + r + 1] = t[3];
}

/* MP activation-row pairs × RP weight-row pairs (xr[2·MP], wr[2·RP] may repeat a row);
 * mi / nr of them are real. HASMIN: Q4_1's minimum term. */
#define DEFINE_TILE(FMT, BB, HASMIN)                                                                   \
    INL void tile_##FMT(int64_t nb, const int MP, const int RP, const tn_q8x_block *const *xr,           \
                        const uint8_t *const *wr, int mi, int nr, float *y, int64_t ldy) {             \
        float32x4_t acc[2][2];                                                                         \
        PRAGMA(GCC unroll 2) for (int p = 0; p < MP; p++)                                              \
            PRAGMA(GCC unroll 2) for (int q = 0; q < RP; q++) acc[p][q] = vdupq_n_f32(0);              \
        for (int64_t b = 0; b < nb; b++) {                                                             \
            int8x16_t wg[2][4];                                                                        \
            float32x4_t dw[2], mw[2];                                                                  \
            PRAGMA(GCC unroll 2) for (int q = 0; q < RP; q++) {                                        \
                int8x16_t lo0, hi0, lo1, hi1;                                                          \
                float d0, m0, d1, m1;                                                                  \
                const uint8_t *b0 = wr[2 * q] + b * (BB), *b1 = wr[2 * q + 1] + b * (BB);              \
                __builtin_prefetch(b0 + 4 * (BB));                                                     \
                __builtin_prefetch(b1 + 4 * (BB));                                                     \
                load_##FMT(b0, &lo0, &hi0, &d0, &m0);                                                  \
                load_##FMT(b1, &lo1, &hi1, &d1, &m1);                                                  \
                pair_groups(lo0, hi0, lo1, hi1, wg[q]);                                                \
                dw[q] = by_w(d0, d1);                                                                  \
                mw[q] = by_w(m0, m1);                                                                  \
            }                                                                                          \
            PRAGMA(GCC unroll 2) for (int p = 0; p < MP; p++) {                                        \
                const tn_q8x_block *xa = xr[2 * p] + b, *xb = xr[2 * p + 1] + b;                       \
                int8x16_t xg[4];                                                                       \
                pair_groups(vld1q_s8(xa->q), vld1q_s8(xa->q + 16), vld1q_s8(xb->q), vld1q_s8(xb->q + 16), xg); \
                float32x4_t dx = by_x(xa->d, xb->d), sx = by_x(xa->s, xb->s);                          \
                PRAGMA(GCC unroll 2) for (int q = 0; q < RP; q++) {                                    \
                    float32x4_t t = vmulq_f32(vmulq_f32(dw[q], dx), vcvtq_f32_s32(tile_sum(vdupq_n_s32(0), xg, wg[q]))); \
                    if (HASMIN) t = vaddq_f32(t, vmulq_f32(mw[q], sx));                                \
                    acc[p][q] = vaddq_f32(acc[p][q], t);                                               \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
        PRAGMA(GCC unroll 2) for (int p = 0; p < MP; p++)                                              \
            PRAGMA(GCC unroll 2) for (int q = 0; q < RP; q++) store_tile(acc[p][q], 2 * p, 2 * q, mi, nr, y, ldy); \
    }

/* Tiles of up to 4 activation rows × 4 weight rows; a partial tile repeats its last row. */
#define DRIVE(CALL)                                                                                    \
    for (int64_t i = 0; i < m; i += 4) {                                                               \
        int mi = m - i < 4 ? (int)(m - i) : 4;                                                         \
        for (int64_t r = 0; r < nrows; r += 4) {                                                       \
            int nr = nrows - r < 4 ? (int)(nrows - r) : 4;                                             \
            if (mi > 2 && nr > 2) CALL(2, 2);                                                          \
            else if (mi > 2) CALL(2, 1);                                                               \
            else if (nr > 2) CALL(1, 2);                                                               \
            else CALL(1, 1);                                                                           \
        }                                                                                              \
    }

#define DEFINE_KERNEL(FMT, BB, HASMIN)                                                                 \
    DEFINE_TILE(FMT, BB, HASMIN)                                                                       \
    TN_QDOT_DECLARE(FMT##_qdot__i8mm) {                                                                \
        DRIVE(FMT##_CALL)                                                                              \
    }

#define ROWS_SETUP                                                                                     \
    const tn_q8x_block *xr[4];                                                                         \
    const uint8_t *wr[4];                                                                              \
    for (int t = 0; t < 4; t++) {                                                                      \
        xr[t] = x + (i + (t < mi ? t : mi - 1)) * ldx;                                                 \
        wr[t] = w + (r + (t < nr ? t : nr - 1)) * ldw;                                                 \
    }
#define q4_0_CALL(MP, RP) do { ROWS_SETUP tile_q4_0(nb, MP, RP, xr, wr, mi, nr, y + i * ldy + r, ldy); } while (0)
#define q4_1_CALL(MP, RP) do { ROWS_SETUP tile_q4_1(nb, MP, RP, xr, wr, mi, nr, y + i * ldy + r, ldy); } while (0)
#define q8_0_CALL(MP, RP) do { ROWS_SETUP tile_q8_0(nb, MP, RP, xr, wr, mi, nr, y + i * ldy + r, ldy); } while (0)

DEFINE_KERNEL(q4_0, 18, 0)
DEFINE_KERNEL(q4_1, 20, 1)
DEFINE_KERNEL(q8_0, 34, 0)

/* ---- 8da4w (quant.h) ---------------------------------------------------------------------
 * Per group of g elements the integer tile is summed over its 32-element chunks, then
 * acc += s_w · Σ, and y = d_x · acc, as the reference. */
INL void i4_tile(int64_t k, int64_t g, const int MP, const int RP, const int8_t *const *xr, const uint8_t *const *wr,
                 const float *const *sr, int mi, int nr, const float *xd, float *y, int64_t ldy) {
    float32x4_t acc[2][2];
    PRAGMA(GCC unroll 2) for (int p = 0; p < MP; p++)
        PRAGMA(GCC unroll 2) for (int q = 0; q < RP; q++) acc[p][q] = vdupq_n_f32(0);
    for (int64_t g0 = 0; g0 < k; g0 += g) {
        int32x4_t isum[2][2];
        PRAGMA(GCC unroll 2) for (int p = 0; p < MP; p++)
            PRAGMA(GCC unroll 2) for (int q = 0; q < RP; q++) isum[p][q] = vdupq_n_s32(0);
        for (int64_t c = g0; c < g0 + g; c += TN_QK) {
            int8x16_t wg[2][4];
            PRAGMA(GCC unroll 2) for (int q = 0; q < RP; q++) {
                uint8x16_t t0 = vld1q_u8(wr[2 * q] + c / 2), t1 = vld1q_u8(wr[2 * q + 1] + c / 2);
                __builtin_prefetch(wr[2 * q] + c / 2 + 64);
                __builtin_prefetch(wr[2 * q + 1] + c / 2 + 64);
                int8x16_t l0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(t0, vdupq_n_u8(15))), vdupq_n_s8(8));
                int8x16_t h0 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(t0, 4)), vdupq_n_s8(8));
                int8x16_t l1 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(t1, vdupq_n_u8(15))), vdupq_n_s8(8));
                int8x16_t h1 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(t1, 4)), vdupq_n_s8(8));
                pair_groups(l0, h0, l1, h1, wg[q]);
            }
            PRAGMA(GCC unroll 2) for (int p = 0; p < MP; p++) {
                const int8_t *xa = xr[2 * p] + c, *xb = xr[2 * p + 1] + c;
                int8x16_t xg[4];
                pair_groups(vld1q_s8(xa), vld1q_s8(xa + 16), vld1q_s8(xb), vld1q_s8(xb + 16), xg);
                PRAGMA(GCC unroll 2) for (int q = 0; q < RP; q++) isum[p][q] = tile_sum(isum[p][q], xg, wg[q]);
            }
        }
        PRAGMA(GCC unroll 2) for (int q = 0; q < RP; q++) {
            float32x4_t s = by_w(sr[2 * q][g0 / g], sr[2 * q + 1][g0 / g]);
            PRAGMA(GCC unroll 2) for (int p = 0; p < MP; p++)
                acc[p][q] = vaddq_f32(acc[p][q], vmulq_f32(s, vcvtq_f32_s32(isum[p][q])));
        }
    }
    PRAGMA(GCC unroll 2) for (int p = 0; p < MP; p++) {
        float32x4_t d = by_x(xd[2 * p < mi ? 2 * p : mi - 1], xd[2 * p + 1 < mi ? 2 * p + 1 : mi - 1]);
        PRAGMA(GCC unroll 2) for (int q = 0; q < RP; q++) store_tile(vmulq_f32(d, acc[p][q]), 2 * p, 2 * q, mi, nr, y, ldy);
    }
}

#define I4_CALL(MP, RP)                                                                                \
    do {                                                                                               \
        const int8_t *xr[4];                                                                           \
        const uint8_t *wr[4];                                                                          \
        const float *sr[4];                                                                            \
        for (int t = 0; t < 4; t++) {                                                                  \
            int64_t ri = r + (t < nr ? t : nr - 1);                                                    \
            xr[t] = xq + (i + (t < mi ? t : mi - 1)) * ldx;                                            \
            wr[t] = w + ri * ldw;                                                                      \
            sr[t] = s + ri * lds;                                                                      \
        }                                                                                              \
        i4_tile(k, g, MP, RP, xr, wr, sr, mi, nr, xd + i, y + i * ldy + r, ldy);                       \
    } while (0)

TN_I4DOT_DECLARE(i4_qdot__i8mm) { DRIVE(I4_CALL) }

#else
/* ISO C forbids an empty translation unit. */
typedef int tn_quant_i8mm_unused;
#endif
