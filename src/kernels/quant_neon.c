/* quant_neon.c — aarch64 quantised dot kernels (quant.h) on the dot-product extension:
 * each 32-pair block is two sdot instructions (16 signed int8 pairs into 4 int32 lanes,
 * exact), scaled per block in float32. Nibbles are unpacked to int8 (Q4_0 minus 8; Q4_1
 * unsigned 0..15, which int8 holds). Tiles of 4 activation rows × 2 weight rows; decode
 * runs 1 × 4. Compiled only on aarch64; chosen when the host reports ASIMDDP
 * (cpu_features.c). */
#if defined(__aarch64__)
#pragma GCC target("arch=armv8.2-a+dotprod")
#include <arm_neon.h>

#include "kernels/quant.h"
#include "kernels/quant_neon_blocks.h"

/* HASMIN: Q4_1's minimum term. */
#define DEFINE_TILE(FMT, BB, HASMIN)                                                                  \
    INL void tile_##FMT(int64_t nb, const int M, const int R, const uint8_t *w, int64_t ldw,            \
                        const tn_q8x_block *x, int64_t ldx, float *y, int64_t ldy) {                   \
        float32x4_t acc[4][4];                                                                        \
        float macc[4][4];                                                                             \
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                              \
            PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) acc[i][r] = vdupq_n_f32(0), macc[i][r] = 0; \
        for (int64_t b = 0; b < nb; b++) {                                                            \
            int8x16_t lo[4], hi[4];                                                                   \
            float dw[4], mw[4];                                                                       \
            PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {                                        \
                const uint8_t *blk = w + r * ldw + b * (BB);                                          \
                __builtin_prefetch(blk + R * ldw);                                                    \
                load_##FMT(blk, &lo[r], &hi[r], &dw[r], &mw[r]);                                      \
            }                                                                                         \
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {                                        \
                const tn_q8x_block *xb = x + i * ldx + b;                                             \
                int8x16_t x0 = vld1q_s8(xb->q), x1 = vld1q_s8(xb->q + 16);                            \
                float dx = xb->d;                                                                     \
                PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {                                    \
                    int32x4_t p = vdotq_s32(vdotq_s32(vdupq_n_s32(0), lo[r], x0), hi[r], x1);         \
                    acc[i][r] = vfmaq_f32(acc[i][r], vcvtq_f32_s32(p), vdupq_n_f32(dw[r] * dx));      \
                    if (HASMIN) macc[i][r] += mw[r] * xb->s;                          \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)                                              \
            PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) y[i * ldy + r] = vaddvq_f32(acc[i][r]) + macc[i][r]; \
    }

#define DEFINE_KERNEL(FMT, BB, HASMIN)                                                                \
    DEFINE_TILE(FMT, BB, HASMIN)                                                                      \
    TN_QDOT_DECLARE(FMT##_qdot__neon) {                                                               \
        if (m == 1) {                                                                                 \
            int64_t r = 0;                                                                            \
            for (; r + 4 <= nrows; r += 4) tile_##FMT(nb, 1, 4, w + r * ldw, ldw, x, ldx, y + r, ldy); \
            for (; r < nrows; r++) tile_##FMT(nb, 1, 1, w + r * ldw, ldw, x, ldx, y + r, ldy);        \
            return;                                                                                   \
        }                                                                                             \
        for (int64_t i = 0; i < m; i += 4) {                                                          \
            int mt = m - i < 4 ? (int)(m - i) : 4;                                                    \
            const tn_q8x_block *xi = x + i * ldx;                                                     \
            float *yi = y + i * ldy;                                                                  \
            int64_t r = 0;                                                                            \
            for (; r + 2 <= nrows; r += 2) {                                                          \
                switch (mt) {                                                                         \
                case 1: tile_##FMT(nb, 1, 2, w + r * ldw, ldw, xi, ldx, yi + r, ldy); break;         \
                case 2: tile_##FMT(nb, 2, 2, w + r * ldw, ldw, xi, ldx, yi + r, ldy); break;         \
                case 3: tile_##FMT(nb, 3, 2, w + r * ldw, ldw, xi, ldx, yi + r, ldy); break;         \
                default: tile_##FMT(nb, 4, 2, w + r * ldw, ldw, xi, ldx, yi + r, ldy); break;        \
                }                                                                                     \
            }                                                                                         \
            for (; r < nrows; r++) {                                                                  \
                switch (mt) {                                                                         \
                case 1: tile_##FMT(nb, 1, 1, w + r * ldw, ldw, xi, ldx, yi + r, ldy); break;         \
                case 2: tile_##FMT(nb, 2, 1, w + r * ldw, ldw, xi, ldx, yi + r, ldy); break;         \
                case 3: tile_##FMT(nb, 3, 1, w + r * ldw, ldw, xi, ldx, yi + r, ldy); break;         \
                default: tile_##FMT(nb, 4, 1, w + r * ldw, ldw, xi, ldx, yi + r, ldy); break;        \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
    }

DEFINE_KERNEL(q4_0, 18, 0)
DEFINE_KERNEL(q4_1, 20, 1)
DEFINE_KERNEL(q8_0, 34, 0)

/* ---- 8da4w and int8 weight-only (quant.h) ---------------------------------------------- */
INL void i4_tile(int64_t k, int64_t g, const int M, const int R, const uint8_t *w, int64_t ldw, const float *s,
                 int64_t lds, const int8_t *xq, const float *xd, int64_t ldx, float *y, int64_t ldy) {
    float32x4_t acc[4][4];
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) acc[i][r] = vdupq_n_f32(0);
    for (int64_t g0 = 0; g0 < k; g0 += g) {
        int32x4_t isum[4][4];
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)
            PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) isum[i][r] = vdupq_n_s32(0);
        for (int64_t c = g0; c < g0 + g; c += TN_QK) {
            int8x16_t lo[4], hi[4];
            PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {
                const uint8_t *blk = w + r * ldw + c / 2;
                __builtin_prefetch(blk + R * ldw);
                uint8x16_t t = vld1q_u8(blk);
                lo[r] = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(t, vdupq_n_u8(15))), vdupq_n_s8(8));
                hi[r] = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(t, 4)), vdupq_n_s8(8));
            }
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
                int8x16_t x0 = vld1q_s8(xq + i * ldx + c), x1 = vld1q_s8(xq + i * ldx + c + 16);
                PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++)
                    isum[i][r] = vdotq_s32(vdotq_s32(isum[i][r], lo[r], x0), hi[r], x1);
            }
        }
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {
            float32x4_t sc = vdupq_n_f32(s[r * lds + g0 / g]);
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) acc[i][r] = vfmaq_f32(acc[i][r], vcvtq_f32_s32(isum[i][r]), sc);
        }
    }
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) y[i * ldy + r] = vaddvq_f32(acc[i][r]) * xd[i];
}

INL void w8_tile(int64_t k, const int M, const int R, const int8_t *w, int64_t ldw, const float *s, const float *x,
                 int64_t ldx, float *y, int64_t ldy) {
    float32x4_t acc[4][4];
    float tail[4][4];
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) acc[i][r] = vdupq_n_f32(0), tail[i][r] = 0;
    int64_t j = 0;
    for (; j + 8 <= k; j += 8) {
        float32x4_t wl[4], wh[4];
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) {
            int16x8_t v = vmovl_s8(vld1_s8(w + r * ldw + j));
            wl[r] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(v)));
            wh[r] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(v)));
        }
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
            float32x4_t xl = vld1q_f32(x + i * ldx + j), xh = vld1q_f32(x + i * ldx + j + 4);
            PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) acc[i][r] = vfmaq_f32(vfmaq_f32(acc[i][r], xl, wl[r]), xh, wh[r]);
        }
    }
    for (; j < k; j++)
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)
            PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) tail[i][r] += x[i * ldx + j] * (float)w[r * ldw + j];
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++)
        PRAGMA(GCC unroll 4) for (int r = 0; r < R; r++) y[i * ldy + r] = s[r] * (vaddvq_f32(acc[i][r]) + tail[i][r]);
}

/* Tiles: decode 1 × 4 weight rows, otherwise 4 × 2 with tails (the GGUF kernels' shape). */
#define DRIVE_TILES(CALL)                                                                              \
    do {                                                                                               \
        if (m == 1) {                                                                                  \
            int64_t r = 0, i = 0;                                                                      \
            for (; r + 4 <= nrows; r += 4) CALL(1, 4);                                                 \
            for (; r < nrows; r++) CALL(1, 1);                                                         \
            break;                                                                                     \
        }                                                                                              \
        for (int64_t i = 0; i < m; i += 4) {                                                           \
            int mt = m - i < 4 ? (int)(m - i) : 4;                                                     \
            int64_t r = 0;                                                                             \
            for (; r + 2 <= nrows; r += 2) switch (mt) {                                               \
                case 1: CALL(1, 2); break;                                                             \
                case 2: CALL(2, 2); break;                                                             \
                case 3: CALL(3, 2); break;                                                             \
                default: CALL(4, 2); break;                                                            \
                }                                                                                      \
            for (; r < nrows; r++) switch (mt) {                                                       \
                case 1: CALL(1, 1); break;                                                             \
                case 2: CALL(2, 1); break;                                                             \
                case 3: CALL(3, 1); break;                                                             \
                default: CALL(4, 1); break;                                                            \
                }                                                                                      \
        }                                                                                              \
    } while (0)
#define I4_CALL(M, R) i4_tile(k, g, M, R, w + r * ldw, ldw, s + r * lds, lds, xq + i * ldx, xd + i, ldx, y + i * ldy + r, ldy)
#define W8_CALL(M, R) w8_tile(k, M, R, w + r * ldw, ldw, s + r, x + i * ldx, ldx, y + i * ldy + r, ldy)

TN_I4DOT_DECLARE(i4_qdot__neon) { DRIVE_TILES(I4_CALL); }
TN_W8DOT_DECLARE(w8_dot__neon) { DRIVE_TILES(W8_CALL); }

#else
/* ISO C forbids an empty translation unit. */
typedef int tn_quant_neon_unused;
#endif
