/* quant.h — y = x · Wᵀ with W in GGUF block formats (Q4_0, Q4_1, Q8_0; the k-quants Q4_K,
 * Q6_K in the second section) read in place, in
 * 8da4w groups (int4 weights, int8 per-token activations) or int8 weight-only, for
 * decode (m = 1) and prefill (m up to a few hundred) shapes.
 *
 * A quantised weight is n rows of k elements; each row is k/32 blocks of 32 elements
 * stored one after another (row stride ldw bytes, normally k/32 * block bytes). The block
 * layouts are ggml's (llama.cpp's ggml-common.h), little-endian, with an IEEE binary16
 * scale d (and minimum m):
 *   Q4_0  18 bytes: d, 16 bytes of nibbles      w[j] = d * ((q[j] & 15) - 8),  w[j+16] = d * ((q[j] >> 4) - 8)
 *   Q4_1  20 bytes: d, m, 16 bytes of nibbles   w[j] = d * (q[j] & 15) + m,    w[j+16] = d * (q[j] >> 4) + m
 *   Q8_0  34 bytes: d, 32 signed bytes          w[j] = d * q[j]                 (j < 16 for the nibbles)
 *
 * How the product is computed (the "fast path", the only path): each row of x is first
 * quantised to 8 bits per 32-block (tn_q8x_block: d ≈ max|x|/127, q = round(x/d), as
 * llama.cpp's q8_0/q8_1 do for activations), then every (weight block, activation block)
 * pair is one exact integer dot product of 32 int8 × int4/int8 pairs, scaled in float32:
 *   Q4_0, Q8_0:  y += (d_w * d_x) * Σ q_w q_x
 *   Q4_1:        y += (d_w * d_x) * Σ q_w q_x + m_w * s_x        (s_x ≈ d_x * Σ q_x)
 * Why the float result differs from dequantise-then-multiply: x is rounded to 8 bits per
 * block, an absolute error of at most d_x/2 = max|x_block|/254 per element, so each block's
 * contribution carries a relative error of about 1/254/sqrt(3) (uniform rounding error)
 * before the sums. tests/c/test_quant.c measures it against a float dequantise-then-
 * multiply: the worst |difference| / (Σ_p |x_p w_p|) over its random rows is 6.2e-4
 * (bounded there at 2e-3; the test prints the measured value). The integer sums are exact, so the ISA variants differ from the
 * reference kernel (quant_ref.c) only by the order of the float32 accumulation.
 *
 * Kernels live one file per ISA (quant_ref.c, quant_avx2.c, quant_avx512.c,
 * quant_neon.c, quant_i8mm.c) and are chosen at run time (cpu_features.h; TN_FORCE_ISA lowers the tier).
 * Plain C11; no Python; no allocation (the caller passes the scratch for the quantised x). */
#ifndef TN_QUANT_H
#define TN_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ggml's type numbers, so a GGUF tensor's type field maps straight onto them. */
typedef enum tn_qtype {
    TN_QTYPE_Q4_0 = 2,
    TN_QTYPE_Q4_1 = 3,
    TN_QTYPE_Q8_0 = 8,
    TN_QTYPE_Q4_K = 12,
    TN_QTYPE_Q6_K = 14,
} tn_qtype;

/* Elements per block of Q4_0 / Q4_1 / Q8_0, and per super-block of the k-quants. */
#define TN_QK 32
#define TN_QKK 256

/* Bytes of one block of `qtype`, or 0 when the type is not supported. */
int tn_qtype_block_bytes(int qtype);
/* Elements of one block of `qtype` (TN_QK or TN_QKK), or 0 when the type is not supported. */
int tn_qtype_block_elems(int qtype);
/* "q4_0" / "q4_1" / "q8_0" / "q4_k" / "q6_k", or NULL when the type is not supported. */
const char *tn_qtype_name(int qtype);

/* One block of quantised activations, llama.cpp's q8_1 in meaning (q8_0 plus s): with
 * a = max|x_j|, q[j] = round-half-even(x[j] * 127/a), d = binary16(a/127) and
 * s = binary16(a/127 * Σ q[j]) (the Q4_1 minimum term), both kept as float so kernels
 * need no conversion. Matching llama.cpp's roundings makes the integer sums identical to
 * its own, so the two differ only by float summation order (tests/test_quant.py). */
typedef struct tn_q8x_block {
    float d, s;
    int8_t q[TN_QK];
} tn_q8x_block;

/* Quantises one row of k (a multiple of TN_QK) floats into k/TN_QK blocks, with this
 * host's variant: the reference loop (quant_ref.c) or AVX2 (quant_avx2.c), equal for
 * finite x (a NaN or infinite element gives some finite block in both, not the same). */
void tn_quant_q8x_row(const float *x, int64_t k, tn_q8x_block *out);
void tn_quant_q8x_row__ref(const float *x, int64_t k, tn_q8x_block *out);
void tn_quant_q8x_row__avx2(const float *x, int64_t k, tn_q8x_block *out);
/* Dequantises `nrows` weight rows of k elements (row stride ldw bytes) into float32 rows of
 * stride ldo. qtype must be supported (any of the five; k a multiple of its block). */
void tn_quant_dequantize(int qtype, const uint8_t *w, int64_t ldw, int64_t nrows, int64_t k, float *out, int64_t ldo);

/* ---- kernels (shared with the per-ISA files) ----------------------------------------
 * y[i*ldy + r] = Σ_b dot(W row r block b, x row i block b) for i < m, r < nrows, over the
 * nb blocks of a row: W rows at w + r*ldw (bytes), x rows at x + i*ldx (blocks). Any m and
 * nrows >= 0; each kernel tiles them in its own register blocks. */
typedef void (*tn_qdot_kernel)(int64_t nb, const uint8_t *w, int64_t ldw, int64_t nrows, const tn_q8x_block *x,
                               int64_t ldx, int64_t m, float *y, int64_t ldy);

#define TN_QDOT_DECLARE(name)                                                                       \
    void name(int64_t nb, const uint8_t *w, int64_t ldw, int64_t nrows, const tn_q8x_block *x, int64_t ldx, \
              int64_t m, float *y, int64_t ldy)
TN_QDOT_DECLARE(q4_0_qdot__ref);
TN_QDOT_DECLARE(q4_1_qdot__ref);
TN_QDOT_DECLARE(q8_0_qdot__ref);
/* x86-64: AVX2 (maddubs) and AVX-512 VL + VNNI (vpdpbusd); absent elsewhere. */
TN_QDOT_DECLARE(q4_0_qdot__avx2);
TN_QDOT_DECLARE(q4_1_qdot__avx2);
TN_QDOT_DECLARE(q8_0_qdot__avx2);
TN_QDOT_DECLARE(q4_0_qdot__avx512vnni);
TN_QDOT_DECLARE(q4_1_qdot__avx512vnni);
TN_QDOT_DECLARE(q8_0_qdot__avx512vnni);
/* aarch64 with the dot-product extension (sdot); absent elsewhere. */
TN_QDOT_DECLARE(q4_0_qdot__neon);
TN_QDOT_DECLARE(q4_1_qdot__neon);
TN_QDOT_DECLARE(q8_0_qdot__neon);
/* aarch64 with the int8 matrix multiply (smmla, quant_i8mm.c): bit-identical to the
 * reference; absent elsewhere. */
TN_QDOT_DECLARE(q4_0_qdot__i8mm);
TN_QDOT_DECLARE(q4_1_qdot__i8mm);
TN_QDOT_DECLARE(q8_0_qdot__i8mm);

/* The kernel the driver uses for `qtype` on this host right now (NULL: unsupported type),
 * and its name, e.g. "q4_1_qdot__avx512vnni". */
tn_qdot_kernel tn_qdot_pick(int qtype);
const char *tn_qdot_variant(int qtype);

/* ---- the 8-row interleaved layouts: a one-time repack at load ------------------------
 * TN_QTYPE_X8 | t (t = Q4_0, Q4_1 or Q8_0) holds the bytes of t's block rows permuted
 * within each group of 8 consecutive rows (n a multiple of 8), so an (n, row bytes) uint8
 * tensor keeps its shape and size; a row of it is no longer one matrix row (gather rows
 * from t's own layout). Group g (rows 8g..8g+7) starts at byte 8g*ldw; its block b is a
 * tile of 8 * (t's block bytes) at byte b * 8 * (block bytes) of the group:
 *   the 8 rows' binary16 scales d (16 bytes), for Q4_1 then their minimums m (16 bytes),
 *   then the quants in 4-byte pieces, piece c of row r at byte 32c + 4r of the quants:
 *     Q4_0 / Q4_1: c = 0..3, the row's nibble bytes 4c..4c+3 (low nibbles: elements
 *                  4c..4c+3, high: 16+4c..16+4c+3);
 *     Q8_0:        c = 0..7, the row's quants 4c..4c+3.
 * A 32-byte load is piece c of all eight rows, one row per 32-bit lane, so a product with
 * the activation's 4 matching bytes broadcast to every lane sums each row in its own lane,
 * and the 8 scales are one vector: no horizontal sum and no per-row scalar work is left
 * (about half the instructions per weight of t's own kernels, docs/INFERENCE.md). The x8
 * kernels compute each row's terms as t's reference kernel writes them, in its order and
 * with its roundings (no fused multiply-add), so they equal it bit for bit
 * (tests/c/test_quant.c compares with memcmp). Of the GGUF formats only Q4_0 / Q4_1 / Q8_0
 * have the layout; 8da4w has its own (below, "8da4w in the x8 layout"). */
#define TN_QTYPE_X8 256
enum { TN_QTYPE_Q4_0_X8 = TN_QTYPE_X8 | TN_QTYPE_Q4_0, TN_QTYPE_Q4_1_X8 = TN_QTYPE_X8 | TN_QTYPE_Q4_1,
       TN_QTYPE_Q8_0_X8 = TN_QTYPE_X8 | TN_QTYPE_Q8_0 };

/* Rewrites n rows (n % 8 == 0) of `qtype` (Q4_0 / Q4_1 / Q8_0) blocks, nb blocks a row at
 * row stride ldw bytes, into the x8 layout at out (row stride nb * block bytes). */
void tn_quant_repack_x8(int qtype, const uint8_t *w, int64_t ldw, int64_t n, int64_t nb, uint8_t *out);
/* Copies row r's block b (t's own layout, block-bytes long) out of x8 group data g (the
 * group's first byte). */
void tn_quant_x8_block(int qtype, const uint8_t *g, int r, int64_t b, uint8_t *blk);
/* The layout the products of `qtype` run fastest from on this host: TN_QTYPE_X8 | qtype
 * where this host has an x8 kernel measured faster than qtype's own (AVX2 and AVX-512
 * VNNI; the aarch64 tiers keep their kernels: not measured), else qtype itself. */
int tn_quant_fast_layout(int qtype);
/* (TN_QTYPE_I4 asks the same of 8da4w: TN_QTYPE_I4X8 where i4x8_qdot__avx2 was measured faster.) */

TN_QDOT_DECLARE(q4_0x8_qdot__ref);
TN_QDOT_DECLARE(q4_1x8_qdot__ref);
TN_QDOT_DECLARE(q8_0x8_qdot__ref);
TN_QDOT_DECLARE(q4_0x8_qdot__avx2);
TN_QDOT_DECLARE(q4_1x8_qdot__avx2);
TN_QDOT_DECLARE(q8_0x8_qdot__avx2);
TN_QDOT_DECLARE(q4_0x8_qdot__avx512vnni);
TN_QDOT_DECLARE(q4_1x8_qdot__avx512vnni);
TN_QDOT_DECLARE(q8_0x8_qdot__avx512vnni);

/* ---- the driver (quant.c) ----------------------------------------------------------- */
typedef struct tn_qmatmul_desc {
    int qtype;
    int64_t m, n, k;    /* x: m × k, W: n × k (k a multiple of TN_QK), y: m × n */
    const float *x;     /* row stride ldx elements */
    int64_t ldx;
    const uint8_t *w;   /* row stride ldw bytes */
    int64_t ldw;
    float *y;           /* row stride ldy elements; overwritten */
    int64_t ldy;
    void *scratch;      /* tn_qmatmul_scratch_bytes(qtype, m, k) bytes, written: the
                           quantised x (tn_q8x_block or, for the k-quants, tn_q8k_block) */
} tn_qmatmul_desc;

/* Bytes of scratch tn_qmatmul needs for the quantised x. */
size_t tn_qmatmul_scratch_bytes(int qtype, int64_t m, int64_t k);
/* Runs the product on the thread pool (quantise x, then weight rows split across threads).
 * Preconditions (the ops layer checks them): supported qtype, k a multiple of
 * tn_qtype_block_elems(qtype), m, n >= 0. No result depends on the thread count. */
void tn_qmatmul(const tn_qmatmul_desc *d);

/* ---- k-quants: Q4_K and Q6_K super-blocks of 256 (quant_k_ref.c) ----------------------
 * ggml's layouts (ggml-common.h), little-endian, binary16 d / dmin:
 *   Q4_K 144 bytes: d, dmin, 12 bytes of packed 6-bit scales sc[8] and mins mn[8]
 *        (tn_q4k_scale_min), 128 bytes of nibbles. Sub-block s (32 elements) = 64-chunk
 *        s/2's bytes qs[32(s/2) + l], low nibbles for even s, high for odd:
 *        w = (d * sc[s]) * q - (dmin * mn[s]),  q in 0..15.
 *   Q6_K 210 bytes: ql[128] (low 4 bits), qh[64] (high 2 bits), int8 scales[16], d.
 *        Half h (128 elements) uses ql[64h..], qh[32h..], scales[8h..]; element 32t + l
 *        (t < 4, l < 32) of the half is q = (ql[l + 32(t&1)] >> 4(t>>1) & 15)
 *        | ((qh[l] >> 2t & 3) << 4), minus 32, and w = (d * scales[8h + (32t + l)/16]) * q.
 * The activations are llama.cpp's Q8_K blocks (quantize_row_q8_K_ref's meaning): per 256
 * elements, max = the element of largest |x| (the first one), iscale = -127/max,
 * q = min(127, round-half-even(iscale * x)), d = 1/iscale (float32, not binary16), and
 * bsums[j] = Σ of q over elements 16j..16j+15 (all zero, d = 0, for an all-zero block).
 * Each (weight super-block, activation block) pair is then exact integer sums scaled in
 * float32:
 *   Q4_K:  (d_w * d_x) * Σ_s sc[s] Σ_{l in s} q_l xq_l  -  (dmin_w * d_x) * Σ_s mn[s] (bsums[2s] + bsums[2s+1])
 *   Q6_K:  (d_w * d_x) * Σ_j scales[j] Σ_{l in 16-group j} q_l xq_l
 * (|sums| < 2^28: int32 is exact), the products llama.cpp's ggml_vec_dot_q4_K_q8_K /
 * q6_K_q8_K compute, so the kernels differ from it, and from each other, only in the
 * order of float32 sums. The activation rounding error per element is at most
 * max|x_block|/254 as for the 32-blocks, but over 256 elements. */
typedef struct tn_q8k_block {
    float d;
    int8_t q[TN_QKK];
    int16_t bsums[TN_QKK / 16];
} tn_q8k_block;

/* The 6-bit scale and min of each Q4_K sub-block from its 12 packed bytes: sub-blocks
 * 0..3 in the low 6 bits of bytes 0..3 (scales) and 4..7 (mins); 4..7 from the nibbles of
 * bytes 8..11 (low: scale, high: min) with their top 2 bits in the high bits of bytes
 * 0..3 (scales) and 4..7 (mins). Four bytes at a time in 32-bit words (little-endian:
 * byte j of a word is packed byte j); a shift moves bits within each byte and the masks
 * drop what crossed from the neighbouring byte. */
static inline void tn_q4k_scale_min(const uint8_t *p, uint8_t sc[8], uint8_t mn[8]) {
    uint32_t a[3], v[4];
    memcpy(a, p, sizeof a);
    v[0] = a[0] & 0x3f3f3f3fu;                                      /* sc[0..3] */
    v[1] = (a[2] & 0x0f0f0f0fu) | ((a[0] >> 2) & 0x30303030u);      /* sc[4..7] */
    v[2] = a[1] & 0x3f3f3f3fu;                                      /* mn[0..3] */
    v[3] = ((a[2] >> 4) & 0x0f0f0f0fu) | ((a[1] >> 2) & 0x30303030u); /* mn[4..7] */
    memcpy(sc, v, 8);
    memcpy(mn, v + 2, 8);
}

/* One Q4_K / Q6_K row of k elements to float32 (tn_quant_dequantize's k-quant half). */
void tn_quant_k_dequantize_row(int qtype, const uint8_t *row, int64_t k, float *out);
/* Quantises one row of k (a multiple of TN_QKK) floats into k/TN_QKK Q8_K blocks. */
void tn_quant_q8k_row(const float *x, int64_t k, tn_q8k_block *out);

/* Kernels as tn_qdot_kernel, over super-blocks: nb = k / TN_QKK. */
typedef void (*tn_qkdot_kernel)(int64_t nb, const uint8_t *w, int64_t ldw, int64_t nrows, const tn_q8k_block *x,
                                int64_t ldx, int64_t m, float *y, int64_t ldy);
#define TN_QKDOT_DECLARE(name)                                                                      \
    void name(int64_t nb, const uint8_t *w, int64_t ldw, int64_t nrows, const tn_q8k_block *x, int64_t ldx, \
              int64_t m, float *y, int64_t ldy)
TN_QKDOT_DECLARE(q4_k_qdot__ref);
TN_QKDOT_DECLARE(q6_k_qdot__ref);
TN_QKDOT_DECLARE(q4_k_qdot__avx2);
TN_QKDOT_DECLARE(q6_k_qdot__avx2);
TN_QKDOT_DECLARE(q4_k_qdot__avx512vnni);
TN_QKDOT_DECLARE(q6_k_qdot__avx512vnni);
TN_QKDOT_DECLARE(q4_k_qdot__neon);
TN_QKDOT_DECLARE(q6_k_qdot__neon);
/* This host's k-quant kernel for `qtype` (NULL: not a k-quant). tn_qdot_variant names
 * either family's kernel. */
tn_qkdot_kernel tn_qkdot_pick(int qtype);

/* ---- 8da4w: int4 weights in groups, 8-bit per-token dynamic activations --------------
 * The layout torchnative.quantize(model, "8da4w", group_size=G) stores (and the int4
 * upstream operators unpack into): W is n rows of k elements (k a multiple of G, G a
 * multiple of TN_QK: 32, 64, 128 or 256 in practice), each element a symmetric int4
 * q ∈ [-8, 7] with one float32 scale per group of G consecutive elements of a row:
 *   w[r][j] = s[r][j / G] * q[r][j]
 * Row r's quants are k/2 bytes at w + r*ldw, in chunks of 32 elements laid out as a GGUF
 * Q4_0 block's nibbles without its scale: byte c*16 + j holds element 32c + j in its low
 * nibble and 32c + 16 + j in its high nibble, each stored as q + 8. Scales: s[r*lds + g].
 * Activations: each row of x is quantised as a whole (per token) to int8,
 *   a = max|x_j|, d = a/127, xq_j = round-half-even(x_j * 127/a)   (a = 0: d = 0, xq = 0)
 * and y[i][r] = d_i * Σ_g s[r][g] * (Σ_{j in g} q[r][j] * xq[i][j]), the inner sums exact in
 * int32 (|q xq| <= 8 * 127, G <= 2^20). As with the GGUF blocks, the ISA variants differ
 * from the reference only by the order of the float32 sums over groups. */
typedef void (*tn_i4dot_kernel)(int64_t k, int64_t g, const uint8_t *w, int64_t ldw, const float *s, int64_t lds,
                                int64_t nrows, const int8_t *xq, const float *xd, int64_t ldx, int64_t m, float *y,
                                int64_t ldy);
#define TN_I4DOT_DECLARE(name)                                                                              \
    void name(int64_t k, int64_t g, const uint8_t *w, int64_t ldw, const float *s, int64_t lds, int64_t nrows, \
              const int8_t *xq, const float *xd, int64_t ldx, int64_t m, float *y, int64_t ldy)
TN_I4DOT_DECLARE(i4_qdot__ref);
TN_I4DOT_DECLARE(i4_qdot__avx2);
TN_I4DOT_DECLARE(i4_qdot__avx512vnni);
TN_I4DOT_DECLARE(i4_qdot__neon);
TN_I4DOT_DECLARE(i4_qdot__i8mm);

/* Quantises one row of k floats per token as above: k int8 quants and their scale. */
void tn_quant_i8_row(const float *x, int64_t k, int8_t *q, float *d);
/* Dequantises n int4 rows (the layout above) into float32 rows of stride ldo. */
void tn_quant_i4_dequantize(const uint8_t *w, int64_t ldw, const float *s, int64_t lds, int64_t n, int64_t k,
                            int64_t g, float *out, int64_t ldo);

/* ---- 8da4w in the x8 layout: a one-time repack of weight and scales -------------------
 * The int4 rows above with their scales, rewritten 8 rows at a time (TN_QTYPE_I4X8) so one
 * 32-byte load holds 4 quant bytes of each of 8 rows, as the GGUF x8 layouts do. A packed
 * weight is (n, tn_quant_i4x8_row_bytes(k, G)) uint8 = k/2 + 4k/G bytes a row, the same
 * bytes as the quants plus float32 scales; row group q (rows 8q .. 8q+R-1, R = 8 except
 * for the last group when n % 8 != 0: R = n % 8) starts at byte 8q * row bytes and holds,
 * for each weight group h (elements hG .. hG+G-1) one after another, a tile of R(4 + G/2)
 * bytes:
 *   the R rows' scales s[r][h] as float32 (4R bytes), then the group's G/32 chunks of
 *   32 elements, each 16R bytes: piece c (c = 0..3) of row r at byte 4Rc + 4r of the
 *   chunk, the row's chunk bytes 4c .. 4c+3 (low nibbles: elements 4c..4c+3 of the chunk,
 *   high: 16+4c..16+4c+3, stored q + 8 as above).
 * The kernels compute each row's terms as i4_qdot__ref writes them: the exact int32 sum of
 * a group, times the group's scale, added to the row's float sum group by group (separate
 * multiplies and adds), times d_i at the end: the results are i4_qdot__ref's bit for bit
 * (tests/c/test_quant.c compares with memcmp). The activation side also gives, per row of
 * x and group, xs = Σ xq over the group, so a kernel multiplying the stored nibbles (q + 8)
 * subtracts 8 xs once per group. */
#define TN_QTYPE_I4 512 /* 8da4w's int4 groups; not a ggml type: only tn_quant_fast_layout's question */
enum { TN_QTYPE_I4X8 = TN_QTYPE_X8 | TN_QTYPE_I4 };

/* Bytes of one packed row: k/2 quant bytes and k/g float32 scales. */
static inline int64_t tn_quant_i4x8_row_bytes(int64_t k, int64_t g) { return k / 2 + 4 * (k / g); }
/* Packs n int4 rows (row stride ldw bytes) and their scales (row stride lds) into the layout
 * above at out (n * tn_quant_i4x8_row_bytes(k, g) bytes). */
void tn_quant_i4_repack_x8(const uint8_t *w, int64_t ldw, const float *s, int64_t lds, int64_t n, int64_t k, int64_t g,
                           uint8_t *out);
/* Row r of a packed weight of n rows back in the plain layout: k/2 quant bytes at wrow, k/g
 * scales at srow. */
void tn_quant_i4x8_row(const uint8_t *p, int64_t n, int64_t k, int64_t g, int64_t r, uint8_t *wrow, float *srow);

/* y[i*ldy + r] for i < m, r < nrows: w is the packed rows' first byte (a group's first
 * row), nrows of them (the last group may be short); xq / xd as tn_i4dot_kernel, xs[i*ldxs
 * + h] = Σ xq[i][hG .. hG+G-1]. */
typedef void (*tn_i4x8dot_kernel)(int64_t k, int64_t g, const uint8_t *w, int64_t nrows, const int8_t *xq,
                                  const float *xd, int64_t ldx, const int32_t *xs, int64_t ldxs, int64_t m, float *y,
                                  int64_t ldy);
#define TN_I4X8DOT_DECLARE(name)                                                                               \
    void name(int64_t k, int64_t g, const uint8_t *w, int64_t nrows, const int8_t *xq, const float *xd, int64_t ldx, \
              const int32_t *xs, int64_t ldxs, int64_t m, float *y, int64_t ldy)
TN_I4X8DOT_DECLARE(i4x8_qdot__ref);
TN_I4X8DOT_DECLARE(i4x8_qdot__avx2);
TN_I4X8DOT_DECLARE(i4x8_qdot__avx512vnni);
/* This host's kernel over the packed layout and its name. */
tn_i4x8dot_kernel tn_i4x8dot_pick(void);
const char *tn_i4x8dot_variant(void);

/* ---- int8 weight-only: per-output-channel scale, float32 activations ------------------
 * W is n rows of k int8 (row stride ldw), s[r] one float32 scale per row:
 *   y[i][r] = s[r] * Σ_j x[i][j] * w[r][j]      (float32 products and sums)
 * This is upstream's aten::_weight_int8pack_mm. Variants differ by float summation order. */
typedef void (*tn_w8dot_kernel)(int64_t k, const int8_t *w, int64_t ldw, const float *s, int64_t nrows,
                                const float *x, int64_t ldx, int64_t m, float *y, int64_t ldy);
#define TN_W8DOT_DECLARE(name)                                                                        \
    void name(int64_t k, const int8_t *w, int64_t ldw, const float *s, int64_t nrows, const float *x, \
              int64_t ldx, int64_t m, float *y, int64_t ldy)
TN_W8DOT_DECLARE(w8_dot__ref);
TN_W8DOT_DECLARE(w8_dot__avx2);
TN_W8DOT_DECLARE(w8_dot__avx512vnni);
TN_W8DOT_DECLARE(w8_dot__neon);

/* This host's kernels and their names ("i4_qdot__avx512vnni", ...). */
tn_i4dot_kernel tn_i4dot_pick(void);
const char *tn_i4dot_variant(void);
tn_w8dot_kernel tn_w8dot_pick(void);
const char *tn_w8dot_variant(void);

typedef struct tn_i4matmul_desc {
    int64_t m, n, k, g;  /* x: m × k, W: n × k in groups of g (k % g == 0, g % TN_QK == 0) */
    const float *x;      /* row stride ldx elements */
    int64_t ldx;
    const uint8_t *w;    /* row stride ldw bytes (>= k/2) */
    int64_t ldw;
    const float *s;      /* row stride lds floats (>= k/g) */
    int64_t lds;
    float *y;            /* row stride ldy; overwritten */
    int64_t ldy;
    void *scratch;       /* tn_i4matmul_scratch_bytes(m, k) bytes, written */
    bool x8;             /* w is packed (TN_QTYPE_I4X8 above, row stride ignored) and s unused */
} tn_i4matmul_desc;
size_t tn_i4matmul_scratch_bytes(int64_t m, int64_t k);
/* The 8da4w product on the pool (quantise x per token, then weight rows across threads).
 * Preconditions checked by the ops layer. No result depends on the thread count. */
void tn_i4matmul(const tn_i4matmul_desc *d);

typedef struct tn_w8matmul_desc {
    int64_t m, n, k;
    const float *x;     /* row stride ldx */
    int64_t ldx;
    const int8_t *w;    /* row stride ldw */
    int64_t ldw;
    const float *s;     /* n scales */
    float *y;           /* row stride ldy; overwritten */
    int64_t ldy;
} tn_w8matmul_desc;
/* The int8 weight-only product on the pool. No result depends on the thread count. */
void tn_w8matmul(const tn_w8matmul_desc *d);

/* The reference row-block kernels of every block format (quant_ref.c, quant_k_ref.c): y[i][r] =
 * the sum over blocks b of TERM(weight block b of row r, activation block b of row i), BB
 * bytes per weight block; DECLARE is the format family's kernel signature. */
#define TN_QREF_KERNEL(DECLARE, NAME, TERM, BB)                                                   \
    DECLARE(NAME) {                                                                               \
        for (int64_t i = 0; i < m; i++)                                                           \
            for (int64_t r = 0; r < nrows; r++) {                                                 \
                float acc = 0;                                                                    \
                for (int64_t b = 0; b < nb; b++) acc += TERM(w + r * ldw + b * (BB), x + i * ldx + b); \
                y[i * ldy + r] = acc;                                                             \
            }                                                                                     \
    }

/* ---- upstream's CPU int4 packing (aten::_convert_weight_to_int4pack_for_cpu) ------------
 * n × k values (int32, normally 0..15) -> n × k/2 bytes (n % 16 == 0, k even). Measured on
 * upstream 2.13.0 (tests/test_quant.py compares the bytes): with B = 64 on an AVX-512 host
 * and 32 on an AVX2 one (upstream's layout follows its CPU capability), the first
 * floor(n/B)*B rows go in blocks of B rows, block b's bytes at b*(B/2)*k + kk*(B/2) + r for
 * column kk, holding row Bb + r in the low nibble and row Bb + B/2 + r in the high one
 * (r < B/2); the remaining R rows follow column by column, nibble (kk*R + r) counted from
 * there, even nibbles low.
 * A byte is lo | (hi << 4) as upstream computes it (values above 15 spill into the high
 * nibble there too). innerKTiles does not change the CPU layout. */
void tn_quant_int4pack(const int32_t *q, int64_t n, int64_t k, uint8_t *out);
/* The value (0..15) at row r, column c of a packed n × k weight. */
int tn_quant_int4pack_at(const uint8_t *p, int64_t n, int64_t k, int64_t r, int64_t c);
/* upstream's _weight_int4pack_mm_for_cpu weight as float32 n × k:
 * w[r][c] = (q - 8) * sz[(c/g)*n*2 + r*2] + sz[(c/g)*n*2 + r*2 + 1] (scale, zero). */
void tn_quant_int4pack_dequantize(const uint8_t *p, int64_t n, int64_t k, int64_t g, const float *sz, float *out);

/* ---- upstream's _dyn_quant_matmul_4bit without KleidiAI (measured on upstream 2.13.0) ----
 * Weights: n rows of k/2 bytes, element 2j in the low nibble of byte j and 2j+1 in the high,
 * value nibble - 8, one float scale per group of g. Activations: each row rounded to
 * asymmetric int8 as KleidiAI's qai8dx reference does: with lo = min(0, min x),
 * hi = max(0, max x), s = 255/(hi - lo) (1 when hi == lo), zero point z = rint of
 * (-128 - lo*s) or (127 - hi*s) (whichever end rounds less, clamped to the int8 range),
 * q = clamp(rint(x*s) + z, -128, 127), and x -> (q - z)/s. */
void tn_quant_dyn4_activation_row(const float *x, int64_t k, float *out);
/* Dequantises the weight above (bytes given as floats, as upstream's fallback stores them). */
void tn_quant_dyn4_dequantize(const float *wbytes, const float *scales, int64_t n, int64_t k, int64_t g, float *out);

#endif
