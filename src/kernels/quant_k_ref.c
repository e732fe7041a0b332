/* quant_k_ref.c — the plain C reference of the k-quant products (quant.h, "k-quants"):
 * Q4_K / Q6_K dequantisation, the Q8_K activation quantiser, and the dot kernels every
 * ISA variant is tested against (tests/c/test_quant.c). */
#include "kernels/quant.h"

#include <math.h>
#include <string.h>

#include "core/dtype.h"

static float half_at(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return tn_half_to_f32(h);
}

/* Element e (0..255) of a Q6_K super-block as q - 32 in -32..31 (quant.h's formula). */
static inline int q6k_at(const uint8_t *blk, int e) {
    int h = e / 128, t = e % 128 / 32, l = e % 32;
    int lo = (blk[64 * h + l + 32 * (t & 1)] >> (4 * (t >> 1))) & 15;
    int hi = (blk[128 + 32 * h + l] >> (2 * t)) & 3;
    return (lo | (hi << 4)) - 32;
}

/* Element e of a Q4_K super-block's nibbles (0..15). */
static inline int q4k_at(const uint8_t *blk, int e) {
    int s = e / 32, l = e % 32;
    uint8_t b = blk[16 + 32 * (s / 2) + l];
    return s & 1 ? b >> 4 : b & 15;
}

void tn_quant_k_dequantize_row(int qtype, const uint8_t *row, int64_t k, float *out) {
    int bb = tn_qtype_block_bytes(qtype);
    for (int64_t b = 0; b < k / TN_QKK; b++) {
        const uint8_t *blk = row + b * bb;
        float *o = out + b * TN_QKK;
        if (qtype == TN_QTYPE_Q4_K) {
            uint8_t sc[8], mn[8];
            tn_q4k_scale_min(blk + 4, sc, mn);
            float d = half_at(blk), dmin = half_at(blk + 2);
            for (int s = 0; s < 8; s++) {
                float ds = d * (float)sc[s], dm = dmin * (float)mn[s];
                for (int l = 0; l < 32; l++) o[32 * s + l] = ds * (float)q4k_at(blk, 32 * s + l) - dm;
            }
        } else {
            float d = half_at(blk + 208);
            const int8_t *scales = (const int8_t *)(blk + 192);
            for (int e = 0; e < TN_QKK; e++) o[e] = (d * (float)scales[e / 16]) * (float)q6k_at(blk, e);
        }
    }
}

void tn_quant_q8k_row(const float *x, int64_t k, tn_q8k_block *out) {
    for (int64_t b = 0; b < k / TN_QKK; b++) {
        const float *xb = x + b * TN_QKK;
        tn_q8k_block *o = out + b;
        float amax = 0, max = 0;
        for (int j = 0; j < TN_QKK; j++)
            if (fabsf(xb[j]) > amax) amax = fabsf(xb[j]), max = xb[j];
        if (amax == 0) { /* an all-zero block: d = 0, q and bsums 0 */
            memset(o, 0, sizeof *o);
            continue;
        }
        float iscale = -127.0f / max;
        for (int j = 0; j < TN_QKK; j++) {
            int v = (int)nearbyintf(iscale * xb[j]); /* ties to even, as ggml's nearest_int */
            o->q[j] = (int8_t)(v < 127 ? v : 127);
        }
        for (int g = 0; g < TN_QKK / 16; g++) {
            int s = 0;
            for (int l = 0; l < 16; l++) s += o->q[16 * g + l];
            o->bsums[g] = (int16_t)s;
        }
        o->d = 1.0f / iscale;
    }
}

/* One (super-block, activation block) term, as quant.h writes it. */
static float term_q4_k(const uint8_t *blk, const tn_q8k_block *x) {
    uint8_t sc[8], mn[8];
    tn_q4k_scale_min(blk + 4, sc, mn);
    int32_t isum = 0, imin = 0;
    for (int s = 0; s < 8; s++) {
        int32_t dot = 0;
        for (int l = 0; l < 32; l++) dot += q4k_at(blk, 32 * s + l) * x->q[32 * s + l];
        isum += sc[s] * dot;
        imin += mn[s] * (x->bsums[2 * s] + x->bsums[2 * s + 1]);
    }
    return half_at(blk) * x->d * (float)isum - half_at(blk + 2) * x->d * (float)imin;
}

static float term_q6_k(const uint8_t *blk, const tn_q8k_block *x) {
    const int8_t *scales = (const int8_t *)(blk + 192);
    int32_t isum = 0;
    for (int g = 0; g < 16; g++) {
        int32_t dot = 0;
        for (int l = 0; l < 16; l++) dot += q6k_at(blk, 16 * g + l) * x->q[16 * g + l];
        isum += scales[g] * dot;
    }
    return half_at(blk + 208) * x->d * (float)isum;
}

#define REF_KERNEL(NAME, TERM, BB) TN_QREF_KERNEL(TN_QKDOT_DECLARE, NAME, TERM, BB)

REF_KERNEL(q4_k_qdot__ref, term_q4_k, 144)
REF_KERNEL(q6_k_qdot__ref, term_q6_k, 210)
