/* quant.h — y = x · Wᵀ with W in GGUF block formats (Q4_0, Q4_1, Q8_0) read in place, for
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
 * quant_neon.c) and are chosen at run time (cpu_features.h; TN_FORCE_ISA lowers the tier).
 * Plain C11; no Python; no allocation (the caller passes the scratch for the quantised x). */
#ifndef TN_QUANT_H
#define TN_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ggml's type numbers, so a GGUF tensor's type field maps straight onto them. */
typedef enum tn_qtype {
    TN_QTYPE_Q4_0 = 2,
    TN_QTYPE_Q4_1 = 3,
    TN_QTYPE_Q8_0 = 8,
} tn_qtype;

/* Elements per block (every supported format). */
#define TN_QK 32

/* Bytes of one block of `qtype`, or 0 when the type is not supported. */
int tn_qtype_block_bytes(int qtype);
/* "q4_0" / "q4_1" / "q8_0", or NULL when the type is not supported. */
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

/* Quantises one row of k (a multiple of TN_QK) floats into k/TN_QK blocks. */
void tn_quant_q8x_row(const float *x, int64_t k, tn_q8x_block *out);
/* Dequantises `nrows` weight rows of k elements (row stride ldw bytes) into float32 rows of
 * stride ldo. qtype must be supported. */
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

/* The kernel the driver uses for `qtype` on this host right now (NULL: unsupported type),
 * and its name, e.g. "q4_1_qdot__avx512vnni". */
tn_qdot_kernel tn_qdot_pick(int qtype);
const char *tn_qdot_variant(int qtype);

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
    tn_q8x_block *scratch; /* tn_qmatmul_scratch_blocks(m, k) blocks, written */
} tn_qmatmul_desc;

/* Blocks of scratch tn_qmatmul needs for the quantised x. */
int64_t tn_qmatmul_scratch_blocks(int64_t m, int64_t k);
/* Runs the product on the thread pool (quantise x, then weight rows split across threads).
 * Preconditions (the ops layer checks them): supported qtype, k % TN_QK == 0, m, n >= 0.
 * No result depends on the thread count. */
void tn_qmatmul(const tn_qmatmul_desc *d);

#endif
