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

/* ---- the x8 layouts (quant.h): 8 weight rows per 32-bit lane group ------------------
 * A tile is M activation rows (1..4) x one group of 8 weight rows. Per block: the 8 rows'
 * scales are one vector (vcvtph2ps), each 32-byte load of quants is one 4-byte piece of
 * all 8 rows, and the activation's matching 4 bytes are broadcast to every lane, so
 * lane r sums row r. Q4_0 / Q4_1: nibbles (0..15) times int8 activations through
 * vpmaddubsw; the 8 pieces of a block add up in int16 (|sum| <= 8 * 2 * 15 * 127 < 2^15),
 * then vpmaddwd to int32; Q4_0's -8 is -8 * Σ q_x, the activation block's quant sum.
 * Q8_0: the sign trick as above (|w| <= 128, |x| <= 127), each piece to int32 at once.
 * The float terms are the reference's, (d_w * d_x) * isum (+ m_w * s_x), added to the
 * row's sum block by block with separate multiplies and adds: bit for bit the reference
 * (this file is ISO C11, so GCC does not contract them). */
INL TGT __m256i x8_piece(const tn_q8x_block *xb, int c) {
    int32_t v;
    memcpy(&v, xb->q + 4 * c, 4);
    return _mm256_set1_epi32(v);
}

/* Σ q_x of an activation block, in every lane. */
INL TGT __m256i x8_qsum(const tn_q8x_block *xb) {
    __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), _mm256_loadu_si256((const __m256i *)xb->q)),
                                  _mm256_set1_epi16(1));
    s = _mm256_add_epi32(s, _mm256_shuffle_epi32(s, 0x4e));
    s = _mm256_add_epi32(s, _mm256_shuffle_epi32(s, 0xb1));
    return _mm256_add_epi32(s, _mm256_permute2x128_si256(s, s, 1));
}

/* Bytes ahead of the block being read that a decode tile prefetches: a model's decode
 * reads each weight once from memory, and the hardware prefetchers alone kept 2 threads at
 * about 12 GB/s over SmolLM2's 211 products against 18 with this (bench/quant.py, docs/
 * INFERENCE.md "The x8 layouts"; 1, 4 and 8 KiB measured within noise of 2 KiB). */
#define X8_AHEAD 2048
/* BASE: TN_QTYPE_Q4_0 / Q4_1 / Q8_0; BB its block bytes. */
INL TGT void x8_tile(int base, int bb, int64_t nb, const int M, const uint8_t *g, const tn_q8x_block *x, int64_t ldx,
                     float *y, int64_t ldy) {
    const int hb = base == TN_QTYPE_Q4_1 ? 4 : 2;
    const __m256i m4 = _mm256_set1_epi8(15), one16 = _mm256_set1_epi16(1);
    __m256 acc[4];
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) acc[i] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *t = g + b * 8 * bb, *q = t + 8 * hb;
        if (M == 1) /* decode streams the weights once: ask for them ahead of the loads */
            PRAGMA(GCC unroll 5) for (int l = 0; l < 8 * bb; l += 64) _mm_prefetch((const char *)(t + X8_AHEAD + l), _MM_HINT_T0);
        __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)t)), mw = _mm256_setzero_ps();
        if (base == TN_QTYPE_Q4_1) mw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(t + 16)));
        if (base == TN_QTYPE_Q8_0) {
            __m256i u[8], sg[8];
            PRAGMA(GCC unroll 8) for (int c = 0; c < 8; c++) {
                sg[c] = _mm256_loadu_si256((const __m256i *)(q + 32 * c));
                u[c] = _mm256_sign_epi8(sg[c], sg[c]);
            }
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
                const tn_q8x_block *xb = x + i * ldx + b;
                __m256i isum = _mm256_setzero_si256();
                PRAGMA(GCC unroll 8) for (int c = 0; c < 8; c++)
                    isum = _mm256_add_epi32(isum, DOT(u[c], _mm256_sign_epi8(x8_piece(xb, c), sg[c])));
                __m256 tm = _mm256_mul_ps(_mm256_mul_ps(dw, _mm256_set1_ps(xb->d)), _mm256_cvtepi32_ps(isum));
                acc[i] = _mm256_add_ps(acc[i], tm);
            }
            continue;
        }
        __m256i lo[4], hi[4];
        PRAGMA(GCC unroll 4) for (int c = 0; c < 4; c++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(q + 32 * c));
            lo[c] = _mm256_and_si256(v, m4);
            hi[c] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        }
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
            const tn_q8x_block *xb = x + i * ldx + b;
            __m256i s16 = _mm256_maddubs_epi16(lo[0], x8_piece(xb, 0));
            s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(hi[0], x8_piece(xb, 4)));
            PRAGMA(GCC unroll 3) for (int c = 1; c < 4; c++) {
                s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(lo[c], x8_piece(xb, c)));
                s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(hi[c], x8_piece(xb, 4 + c)));
            }
            __m256i isum = _mm256_madd_epi16(s16, one16);
            if (base == TN_QTYPE_Q4_0) isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(x8_qsum(xb), 3));
            __m256 tm = _mm256_mul_ps(_mm256_mul_ps(dw, _mm256_set1_ps(xb->d)), _mm256_cvtepi32_ps(isum));
            if (base == TN_QTYPE_Q4_1) tm = _mm256_add_ps(tm, _mm256_mul_ps(mw, _mm256_set1_ps(xb->s)));
            acc[i] = _mm256_add_ps(acc[i], tm);
        }
    }
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) _mm256_storeu_ps(y + i * ldy, acc[i]);
}

/* Groups of 8 rows (nrows % 8 == 0: the ops layer checks n), activation rows 4 at a time
 * over each group, the group's tiles staying in L1 meanwhile. */
#define DEFINE_X8_KERNEL(FMT, BASE, BB)                                                               \
    TGT TN_QDOT_DECLARE(FMT##x8_qdot__avx2) {                                                          \
        for (int64_t r = 0; r + 8 <= nrows; r += 8) {                                                 \
            const uint8_t *g = w + r * ldw;                                                           \
            int64_t i = 0;                                                                            \
            for (; i + 4 <= m; i += 4) x8_tile(BASE, BB, nb, 4, g, x + i * ldx, ldx, y + i * ldy + r, ldy); \
            switch (m - i) {                                                                          \
            case 3: x8_tile(BASE, BB, nb, 3, g, x + i * ldx, ldx, y + i * ldy + r, ldy); break;       \
            case 2: x8_tile(BASE, BB, nb, 2, g, x + i * ldx, ldx, y + i * ldy + r, ldy); break;       \
            case 1: x8_tile(BASE, BB, nb, 1, g, x + i * ldx, ldx, y + i * ldy + r, ldy); break;       \
            default: break;                                                                           \
            }                                                                                         \
        }                                                                                             \
    }
DEFINE_X8_KERNEL(q4_0, TN_QTYPE_Q4_0, 18)
DEFINE_X8_KERNEL(q4_1, TN_QTYPE_Q4_1, 20)
DEFINE_X8_KERNEL(q8_0, TN_QTYPE_Q8_0, 34)

/* ---- 8da4w in the x8 layout (quant.h): 8 weight rows per 32-bit lane group ------------
 * As x8_tile over Q4_0, with G-element groups: a chunk's 4 loads hold pieces 0..3 of the 8
 * rows, nibbles (0..15) times the broadcast activation bytes through vpmaddubsw, the 8
 * products of a chunk added in int16 (|sum| <= 8 * 2 * 15 * 127 < 2^15), then vpmaddwd to
 * int32 and added over the group's chunks; the stored +8 leaves 8 xs, subtracted once per
 * group, so the lane holds the reference's exact group sum. The float steps are the
 * reference's (scale times sum, then add; d_i times the row's sum at the end), not fused:
 * bit for bit i4x8_qdot__ref. A short last group (R < 8 rows) loads and stores R lanes
 * through masks. */
INL TGT __m256i i4x8_load(const uint8_t *p, const int full, __m256i mask) {
    return full ? _mm256_loadu_si256((const __m256i *)p) : _mm256_maskload_epi32((const int *)p, mask);
}

INL TGT void i4x8_tile(int64_t k, int64_t g, const int M, const int full, int64_t R, const uint8_t *grp, const int8_t *xq,
                       const float *xd, int64_t ldx, const int32_t *xs, int64_t ldxs, float *y, int64_t ldy) {
    const __m256i m4 = _mm256_set1_epi8(15), one16 = _mm256_set1_epi16(1);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)R), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const int64_t tb = R * (4 + g / 2), cb = 16 * R;
    __m256 acc[4];
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) acc[i] = _mm256_setzero_ps();
    for (int64_t h = 0; h < k / g; h++) {
        const uint8_t *t = grp + h * tb;
        __m256i isum[4];
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) isum[i] = _mm256_setzero_si256();
        for (int64_t ch = 0; ch < g / TN_QK; ch++) {
            const uint8_t *q = t + 4 * R + ch * cb;
            if (M == 1) /* decode streams the weights once: ask for them ahead of the loads */
                PRAGMA(GCC unroll 2) for (int l = 0; l < 128; l += 64) _mm_prefetch((const char *)(q + X8_AHEAD + l), _MM_HINT_T0);
            /* piece by piece, each unpacked once and used by the M rows: M int16 sums live
             * instead of the chunk's 8 unpacked vectors (fewer spills at M = 4) */
            const int64_t j0 = h * g + ch * TN_QK;
            __m256i s16[4];
            PRAGMA(GCC unroll 4) for (int c = 0; c < 4; c++) {
                __m256i v = i4x8_load(q + 4 * R * c, full, mask);
                __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
                PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
                    const int8_t *xb = xq + i * ldx + j0;
                    int32_t a, b;
                    memcpy(&a, xb + 4 * c, 4);
                    memcpy(&b, xb + 16 + 4 * c, 4);
                    __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo, _mm256_set1_epi32(a)),
                                                 _mm256_maddubs_epi16(hi, _mm256_set1_epi32(b)));
                    s16[i] = c ? _mm256_add_epi16(s16[i], p) : p;
                }
            }
            PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(s16[i], one16));
        }
        __m256 sc = _mm256_castsi256_ps(i4x8_load(t, full, mask)); /* loaded here: one register fewer in the loop */
        PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
            __m256i is = _mm256_sub_epi32(isum[i], _mm256_set1_epi32(8 * xs[i * ldxs + h]));
            acc[i] = _mm256_add_ps(acc[i], _mm256_mul_ps(sc, _mm256_cvtepi32_ps(is)));
        }
    }
    PRAGMA(GCC unroll 4) for (int i = 0; i < M; i++) {
        __m256 yv = _mm256_mul_ps(_mm256_set1_ps(xd[i]), acc[i]);
        if (full) _mm256_storeu_ps(y + i * ldy, yv);
        else _mm256_maskstore_ps(y + i * ldy, mask, yv);
    }
}

/* Groups of 8 rows, activation rows 4 at a time over each group (its tiles stay in L1). */
#define I4X8_TILES(FULL)                                                                                    \
    do {                                                                                                     \
        int64_t i = 0;                                                                                       \
        for (; i + 4 <= m; i += 4) i4x8_tile(k, g, 4, FULL, R, grp, xq + i * ldx, xd + i, ldx, xs + i * ldxs, ldxs, y + i * ldy + r, ldy); \
        switch (m - i) {                                                                                     \
        case 3: i4x8_tile(k, g, 3, FULL, R, grp, xq + i * ldx, xd + i, ldx, xs + i * ldxs, ldxs, y + i * ldy + r, ldy); break; \
        case 2: i4x8_tile(k, g, 2, FULL, R, grp, xq + i * ldx, xd + i, ldx, xs + i * ldxs, ldxs, y + i * ldy + r, ldy); break; \
        case 1: i4x8_tile(k, g, 1, FULL, R, grp, xq + i * ldx, xd + i, ldx, xs + i * ldxs, ldxs, y + i * ldy + r, ldy); break; \
        default: break;                                                                                      \
        }                                                                                                    \
    } while (0)

TGT TN_I4X8DOT_DECLARE(i4x8_qdot__avx2) {
    const int64_t rb = tn_quant_i4x8_row_bytes(k, g);
    for (int64_t r = 0; r < nrows; r += 8) {
        const int64_t R = nrows - r < 8 ? nrows - r : 8;
        const uint8_t *grp = w + r * rb;
        if (R == 8) I4X8_TILES(1);
        else I4X8_TILES(0);
    }
}

#else
/* ISO C forbids an empty translation unit. */
typedef int tn_quant_avx2_unused;
#endif
