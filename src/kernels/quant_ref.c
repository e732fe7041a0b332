/* quant_ref.c — the plain C reference of the quantised products (quant.h): block sizes,
 * the activation quantiser, dequantisation, and the per-format dot kernels every ISA
 * variant is tested against (tests/c/test_quant.c). */
#include "kernels/quant.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/cpu_features.h"

int tn_qtype_block_bytes(int qtype) {
    if (qtype == TN_QTYPE_Q4_0_X8 || qtype == TN_QTYPE_Q4_1_X8 || qtype == TN_QTYPE_Q8_0_X8)
        qtype &= ~TN_QTYPE_X8; /* the same bytes per row, permuted within groups of 8 rows */
    switch (qtype) {
    case TN_QTYPE_Q4_0: return 2 + TN_QK / 2;
    case TN_QTYPE_Q4_1: return 4 + TN_QK / 2;
    case TN_QTYPE_Q8_0: return 2 + TN_QK;
    case TN_QTYPE_Q4_K: return 4 + 12 + TN_QKK / 2;
    case TN_QTYPE_Q6_K: return TN_QKK / 2 + TN_QKK / 4 + TN_QKK / 16 + 2;
    default: return 0;
    }
}

int tn_qtype_block_elems(int qtype) {
    if (qtype == TN_QTYPE_Q4_K || qtype == TN_QTYPE_Q6_K) return TN_QKK;
    return tn_qtype_block_bytes(qtype) ? TN_QK : 0;
}

const char *tn_qtype_name(int qtype) {
    switch (qtype) {
    case TN_QTYPE_Q4_0: return "q4_0";
    case TN_QTYPE_Q4_1: return "q4_1";
    case TN_QTYPE_Q8_0: return "q8_0";
    case TN_QTYPE_Q4_K: return "q4_k";
    case TN_QTYPE_Q6_K: return "q6_k";
    case TN_QTYPE_Q4_0_X8: return "q4_0x8";
    case TN_QTYPE_Q4_1_X8: return "q4_1x8";
    case TN_QTYPE_Q8_0_X8: return "q8_0x8";
    default: return NULL;
    }
}

static float half_at(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return tn_half_to_f32(h);
}


void tn_quant_q8x_row__ref(const float *x, int64_t k, tn_q8x_block *out) {
    for (int64_t b = 0; b < k / TN_QK; b++) {
        const float *xb = x + b * TN_QK;
        float amax = 0;
        for (int j = 0; j < TN_QK; j++) amax = fmaxf(amax, fabsf(xb[j]));
        float d = amax / 127.0f, id = amax != 0 ? 127.0f / amax : 0.0f;
        int32_t sum = 0;
        for (int j = 0; j < TN_QK; j++) {
            int v = (int)nearbyintf(xb[j] * id); /* ties to even, as x86 vector rounding does */
            out[b].q[j] = (int8_t)v;
            sum += v;
        }
        /* the scales at binary16 precision, as llama.cpp's q8_0 / q8_1 blocks keep them */
        out[b].d = tn_round_half_f32(d);
        out[b].s = tn_round_half_f32(d * (float)sum);
    }
}

/* One block of Q4_0 / Q4_1 / Q8_0 (`bb` bytes at blk) to 32 floats. */
static void dequantize_block(int qtype, const uint8_t *blk, float *ob) {
    float d = half_at(blk);
    switch (qtype) {
    case TN_QTYPE_Q4_0:
        for (int j = 0; j < 16; j++) {
            ob[j] = d * (float)((blk[2 + j] & 15) - 8);
            ob[j + 16] = d * (float)((blk[2 + j] >> 4) - 8);
        }
        break;
    case TN_QTYPE_Q4_1: {
        float mn = half_at(blk + 2);
        for (int j = 0; j < 16; j++) {
            ob[j] = d * (float)(blk[4 + j] & 15) + mn;
            ob[j + 16] = d * (float)(blk[4 + j] >> 4) + mn;
        }
        break;
    }
    default:
        for (int j = 0; j < TN_QK; j++) ob[j] = d * (float)(int8_t)blk[2 + j];
        break;
    }
}

void tn_quant_dequantize(int qtype, const uint8_t *w, int64_t ldw, int64_t nrows, int64_t k, float *out, int64_t ldo) {
    int bb = tn_qtype_block_bytes(qtype);
    if (tn_qtype_block_elems(qtype) == TN_QKK) {
        for (int64_t r = 0; r < nrows; r++) tn_quant_k_dequantize_row(qtype, w + r * ldw, k, out + r * ldo);
        return;
    }
    bool x8 = qtype & TN_QTYPE_X8;
    int base = qtype & ~TN_QTYPE_X8;
    uint8_t tmp[TN_QK + 4];
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t b = 0; b < k / TN_QK; b++) {
            const uint8_t *blk = w + r * ldw + b * bb;
            if (x8) {
                tn_quant_x8_block(base, w + (r & ~(int64_t)7) * ldw, (int)(r & 7), b, tmp);
                blk = tmp;
            }
            dequantize_block(base, blk, out + r * ldo + b * TN_QK);
        }
    }
}

/* ---- the x8 layouts (quant.h) ----------------------------------------------------------- */
/* Bytes of a block's header (scales) and quants for Q4_0 / Q4_1 / Q8_0. */
static int hdr_bytes(int qtype) { return qtype == TN_QTYPE_Q4_1 ? 4 : 2; }

void tn_quant_repack_x8(int qtype, const uint8_t *w, int64_t ldw, int64_t n, int64_t nb, uint8_t *out) {
    int bb = tn_qtype_block_bytes(qtype), hb = hdr_bytes(qtype), nq = bb - hb;
    int64_t rb = nb * bb;
    for (int64_t g = 0; g < n / 8; g++)
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *t = out + 8 * g * rb + b * 8 * bb;
            for (int r = 0; r < 8; r++) {
                const uint8_t *blk = w + (8 * g + r) * ldw + b * bb;
                memcpy(t + 2 * r, blk, 2);
                if (hb == 4) memcpy(t + 16 + 2 * r, blk + 2, 2);
                for (int c = 0; c < nq / 4; c++) memcpy(t + 8 * hb + 32 * c + 4 * r, blk + hb + 4 * c, 4);
            }
        }
}

void tn_quant_x8_block(int qtype, const uint8_t *g, int r, int64_t b, uint8_t *blk) {
    int bb = tn_qtype_block_bytes(qtype), hb = hdr_bytes(qtype), nq = bb - hb;
    const uint8_t *t = g + b * 8 * bb;
    memcpy(blk, t + 2 * r, 2);
    if (hb == 4) memcpy(blk + 2, t + 16 + 2 * r, 2);
    for (int c = 0; c < nq / 4; c++) memcpy(blk + hb + 4 * c, t + 8 * hb + 32 * c + 4 * r, 4);
}

/* One (weight block, activation block) term, as quant.h writes it. */
static float term_q4_0(const uint8_t *blk, const tn_q8x_block *x) {
    int32_t s = 0;
    for (int j = 0; j < 16; j++) s += ((blk[2 + j] & 15) - 8) * x->q[j] + ((blk[2 + j] >> 4) - 8) * x->q[j + 16];
    return half_at(blk) * x->d * (float)s;
}
static float term_q4_1(const uint8_t *blk, const tn_q8x_block *x) {
    int32_t s = 0;
    for (int j = 0; j < 16; j++) s += (blk[4 + j] & 15) * x->q[j] + (blk[4 + j] >> 4) * x->q[j + 16];
    return half_at(blk) * x->d * (float)s + half_at(blk + 2) * x->s;
}
static float term_q8_0(const uint8_t *blk, const tn_q8x_block *x) {
    int32_t s = 0;
    for (int j = 0; j < TN_QK; j++) s += (int8_t)blk[2 + j] * x->q[j];
    return half_at(blk) * x->d * (float)s;
}

#define REF_KERNEL(NAME, TERM, BB) TN_QREF_KERNEL(TN_QDOT_DECLARE, NAME, TERM, BB)

REF_KERNEL(q4_0_qdot__ref, term_q4_0, 18)
REF_KERNEL(q4_1_qdot__ref, term_q4_1, 20)
REF_KERNEL(q8_0_qdot__ref, term_q8_0, 34)

/* The x8 references: each row's blocks copied back out of its group's tiles, then the
 * terms above in their order: bit for bit the kernels of the base formats. */
#define X8_REF_KERNEL(NAME, BASE, TERM)                                                        \
    TN_QDOT_DECLARE(NAME) {                                                                    \
        uint8_t blk[TN_QK + 4];                                                                \
        for (int64_t i = 0; i < m; i++)                                                        \
            for (int64_t r = 0; r < nrows; r++) {                                              \
                float acc = 0;                                                                 \
                for (int64_t b = 0; b < nb; b++) {                                             \
                    tn_quant_x8_block(BASE, w + (r & ~(int64_t)7) * ldw, (int)(r & 7), b, blk); \
                    acc += TERM(blk, x + i * ldx + b);                                         \
                }                                                                              \
                y[i * ldy + r] = acc;                                                          \
            }                                                                                  \
    }
X8_REF_KERNEL(q4_0x8_qdot__ref, TN_QTYPE_Q4_0, term_q4_0)
X8_REF_KERNEL(q4_1x8_qdot__ref, TN_QTYPE_Q4_1, term_q4_1)
X8_REF_KERNEL(q8_0x8_qdot__ref, TN_QTYPE_Q8_0, term_q8_0)

/* ---- 8da4w and int8 weight-only (quant.h) ---------------------------------------------- */
void tn_quant_i8_row(const float *x, int64_t k, int8_t *q, float *d) {
    float amax = 0;
    for (int64_t j = 0; j < k; j++) amax = fmaxf(amax, fabsf(x[j]));
    float id = amax != 0 ? 127.0f / amax : 0.0f;
    for (int64_t j = 0; j < k; j++) q[j] = (int8_t)(int)nearbyintf(x[j] * id);
    *d = amax / 127.0f;
}

/* Element j of an int4 row (quant.h's chunk layout), as q in [-8, 7]. */
static inline int i4_at(const uint8_t *row, int64_t j) {
    uint8_t b = row[j / TN_QK * 16 + j % 16];
    return (j % TN_QK < 16 ? b & 15 : b >> 4) - 8;
}

void tn_quant_i4_dequantize(const uint8_t *w, int64_t ldw, const float *s, int64_t lds, int64_t n, int64_t k,
                            int64_t g, float *out, int64_t ldo) {
    for (int64_t r = 0; r < n; r++)
        for (int64_t j = 0; j < k; j++) out[r * ldo + j] = s[r * lds + j / g] * (float)i4_at(w + r * ldw, j);
}

TN_I4DOT_DECLARE(i4_qdot__ref) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t r = 0; r < nrows; r++) {
            const uint8_t *row = w + r * ldw;
            const int8_t *xi = xq + i * ldx;
            float acc = 0;
            for (int64_t g0 = 0; g0 < k; g0 += g) {
                int32_t isum = 0;
                for (int64_t j = g0; j < g0 + g; j++) isum += i4_at(row, j) * xi[j];
                acc += s[r * lds + g0 / g] * (float)isum;
            }
            y[i * ldy + r] = xd[i] * acc;
        }
}

/* ---- 8da4w in the x8 layout (quant.h) ----------------------------------------------------
 * Byte offsets inside a packed row group of R rows: tile h, then the scale of row r or the
 * byte of row r holding the chunk-relative byte b (0..15) of chunk ch. */
static int64_t i4x8_tile(int64_t R, int64_t g, int64_t h) { return h * R * (4 + g / 2); }
static int64_t i4x8_quant(int64_t R, int64_t ch, int64_t r, int b) { return 4 * R + ch * 16 * R + 4 * R * (b / 4) + 4 * r + b % 4; }

/* The group of rows holding row r: its first byte and its row count. */
static const uint8_t *i4x8_group(const uint8_t *p, int64_t n, int64_t k, int64_t g, int64_t r, int64_t *R) {
    int64_t q0 = r & ~(int64_t)7;
    *R = n - q0 < 8 ? n - q0 : 8;
    return p + q0 * tn_quant_i4x8_row_bytes(k, g);
}

void tn_quant_i4_repack_x8(const uint8_t *w, int64_t ldw, const float *s, int64_t lds, int64_t n, int64_t k, int64_t g,
                           uint8_t *out) {
    for (int64_t q0 = 0; q0 < n; q0 += 8) {
        int64_t R;
        uint8_t *grp = (uint8_t *)i4x8_group(out, n, k, g, q0, &R);
        for (int64_t r = 0; r < R; r++)
            for (int64_t h = 0; h < k / g; h++) {
                uint8_t *t = grp + i4x8_tile(R, g, h);
                memcpy(t + 4 * r, s + (q0 + r) * lds + h, 4);
                for (int64_t ch = 0; ch < g / TN_QK; ch++)
                    for (int c = 0; c < 4; c++)
                        memcpy(t + i4x8_quant(R, ch, r, 4 * c), w + (q0 + r) * ldw + (h * g / TN_QK + ch) * 16 + 4 * c, 4);
            }
    }
}

void tn_quant_i4x8_row(const uint8_t *p, int64_t n, int64_t k, int64_t g, int64_t r, uint8_t *wrow, float *srow) {
    int64_t R, rr = r & 7;
    const uint8_t *grp = i4x8_group(p, n, k, g, r, &R);
    for (int64_t h = 0; h < k / g; h++) {
        const uint8_t *t = grp + i4x8_tile(R, g, h);
        memcpy(srow + h, t + 4 * rr, 4);
        for (int64_t ch = 0; ch < g / TN_QK; ch++)
            for (int c = 0; c < 4; c++) memcpy(wrow + (h * g / TN_QK + ch) * 16 + 4 * c, t + i4x8_quant(R, ch, rr, 4 * c), 4);
    }
}

/* i4_qdot__ref's sums with each element read where the layout keeps it. */
TN_I4X8DOT_DECLARE(i4x8_qdot__ref) {
    (void)xs, (void)ldxs;
    for (int64_t i = 0; i < m; i++)
        for (int64_t r = 0; r < nrows; r++) {
            int64_t R, rr = r & 7;
            const uint8_t *grp = i4x8_group(w, nrows, k, g, r, &R);
            const int8_t *xi = xq + i * ldx;
            float acc = 0;
            for (int64_t h = 0; h < k / g; h++) {
                const uint8_t *t = grp + i4x8_tile(R, g, h);
                float sc;
                memcpy(&sc, t + 4 * rr, 4);
                int32_t isum = 0;
                for (int64_t j = 0; j < g; j++) {
                    int jj = (int)(j % TN_QK);
                    uint8_t b = t[i4x8_quant(R, j / TN_QK, rr, jj % 16)];
                    isum += ((jj < 16 ? b & 15 : b >> 4) - 8) * xi[h * g + j];
                }
                acc += sc * (float)isum;
            }
            y[i * ldy + r] = xd[i] * acc;
        }
}

TN_W8DOT_DECLARE(w8_dot__ref) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t r = 0; r < nrows; r++) {
            float acc = 0;
            for (int64_t j = 0; j < k; j++) acc += x[i * ldx + j] * (float)w[r * ldw + j];
            y[i * ldy + r] = s[r] * acc;
        }
}

/* ---- upstream's CPU int4 packing (quant.h) ---------------------------------------------- */
/* Rows per interleaved block: upstream packs for its CPU capability (4 float vectors of
 * rows), 64 on an AVX-512 host and 32 on an AVX2 one; the host decides, not TN_FORCE_ISA,
 * since the bytes are a format (upstream on the same host is the reference). aarch64 keeps
 * the 64-row layout its reference values were computed with. */
static int64_t int4pack_block(void) {
#if defined(__x86_64__) || defined(__i386__)
    return tn_cpu_host_isa() >= TN_ISA_AVX512 ? 64 : 32;
#else
    return 64;
#endif
}

/* Nibble index (2 * byte + high) of row r, column c, blocks of B rows. */
static int64_t int4pack_nibble(int64_t B, int64_t n, int64_t k, int64_t r, int64_t c) {
    int64_t full = n / B * B, H = B / 2;
    if (r < full) {
        int64_t b = r / B, rr = r % B;
        return 2 * (b * H * k + c * H + rr % H) + (rr >= H);
    }
    return full * k + c * (n - full) + (r - full);
}

void tn_quant_int4pack(const int32_t *q, int64_t n, int64_t k, uint8_t *out) {
    int64_t B = int4pack_block(), full = n / B * B;
    for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < k; c++) {
            int64_t p = int4pack_nibble(B, n, k, r, c);
            if (p & 1) continue; /* written with its low partner */
            int64_t r2 = r, c2 = c;
            /* the row / column whose value goes in the high nibble of this byte */
            if (r < full) r2 = r + B / 2;
            else {
                int64_t R = n - full, j = (p - full * k) + 1;
                c2 = j / R, r2 = full + j % R;
            }
            out[p / 2] = (uint8_t)((uint32_t)q[r * k + c] | ((uint32_t)q[r2 * k + c2] << 4));
        }
}

int tn_quant_int4pack_at(const uint8_t *p, int64_t n, int64_t k, int64_t r, int64_t c) {
    int64_t i = int4pack_nibble(int4pack_block(), n, k, r, c);
    return i & 1 ? p[i / 2] >> 4 : p[i / 2] & 15;
}

void tn_quant_int4pack_dequantize(const uint8_t *p, int64_t n, int64_t k, int64_t g, const float *sz, float *out) {
    for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < k; c++) {
            const float *e = sz + (c / g) * n * 2 + r * 2;
            out[r * k + c] = (float)(tn_quant_int4pack_at(p, n, k, r, c) - 8) * e[0] + e[1];
        }
}

/* ---- upstream's _dyn_quant_matmul_4bit fallback (quant.h) ------------------------------- */
void tn_quant_dyn4_activation_row(const float *x, int64_t k, float *out) {
    float lo = 0, hi = 0;
    for (int64_t j = 0; j < k; j++) lo = fminf(lo, x[j]), hi = fmaxf(hi, x[j]);
    float s = lo == hi ? 1.0f : 255.0f / (hi - lo), rs = 1.0f / s;
    float dlo = lo * s, dhi = hi * s;
    float z = (-128.0f + dlo) + (127.0f + dhi) > 0 ? -128.0f - dlo : 127.0f - dhi;
    z = nearbyintf(fminf(fmaxf(z, -128.0f), 127.0f));
    for (int64_t j = 0; j < k; j++) {
        float q = fminf(fmaxf(nearbyintf(x[j] * s) + z, -128.0f), 127.0f);
        out[j] = (q - z) * rs;
    }
}

void tn_quant_dyn4_dequantize(const float *wbytes, const float *scales, int64_t n, int64_t k, int64_t g, float *out) {
    for (int64_t r = 0; r < n; r++)
        for (int64_t j = 0; j < k; j++) {
            float v = wbytes[r * (k / 2) + j / 2]; /* a byte stored as float; anything else reads as 0 */
            int b = v >= 0 && v < 256 ? (int)v : 0;
            out[r * k + j] = (float)(((j & 1) ? b >> 4 : b & 15) - 8) * scales[r * (k / g) + j / g];
        }
}
