/* test_quant.c — the quantised products (kernels/quant.h): block decoding against the
 * format's definition, every ISA kernel the host can run against the reference kernel
 * (integer sums are exact, so only float32 summation order differs: relative 1e-5 of the
 * output's scale), the driver against the reference on every tier and thread count (bit
 * for bit: the split never changes a sum), and the reference against a double-precision
 * dequantise-then-multiply within the activation-rounding bound quant.h derives. Shapes
 * cover the register tiles' tails (m, n around 4 and the 64-row chunks). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/quant.h"
#include "tn_test.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd_u64(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static float rnd(void) { return (float)((double)(rnd_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0); }

static const int QTYPES[] = {TN_QTYPE_Q4_0, TN_QTYPE_Q4_1, TN_QTYPE_Q8_0};

/* n rows of k random elements of `qtype`: random quants, scales ~1e-2 as real weights. */
static uint8_t *random_weight(int qtype, int64_t n, int64_t k) {
    int bb = tn_qtype_block_bytes(qtype);
    int64_t bytes = n * (k / TN_QK) * bb;
    uint8_t *w = malloc((size_t)(bytes > 0 ? bytes : 1));
    for (int64_t i = 0; i < bytes; i++) w[i] = (uint8_t)rnd_u64();
    for (int64_t b = 0; b < bytes / bb; b++) {
        uint16_t d = tn_f32_to_half(0.02f * (rnd() + 1.5f)), mn = tn_f32_to_half(-0.1f * (rnd() + 1.0f));
        memcpy(w + b * bb, &d, 2);
        if (qtype == TN_QTYPE_Q4_1) memcpy(w + b * bb + 2, &mn, 2);
    }
    return w;
}

static float *random_x(int64_t n) {
    float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++) x[i] = 3 * rnd();
    if (n >= 64) memset(x + 32, 0, 32 * sizeof(float)); /* an all-zero block: d = 0 */
    return x;
}

static void test_decode_blocks(void) {
    uint8_t q40[18] = {0x00, 0x3C}, q41[20] = {0x00, 0x40, 0x00, 0xBC}, q80[34] = {0x00, 0x38};
    for (int j = 0; j < 16; j++) q40[2 + j] = (uint8_t)(j | ((15 - j) << 4)), q41[4 + j] = q40[2 + j];
    for (int j = 0; j < 32; j++) q80[2 + j] = (uint8_t)(int8_t)(j - 16);
    float o[32];
    bool ok = true;
    tn_quant_dequantize(TN_QTYPE_Q4_0, q40, 18, 1, 32, o, 32); /* d = 1 */
    for (int j = 0; j < 16; j++) ok &= o[j] == (float)(j - 8) && o[j + 16] == (float)(7 - j);
    TN_CHECK(ok, "q4_0 block decodes as d * (nibble - 8), low nibbles first");
    ok = true;
    tn_quant_dequantize(TN_QTYPE_Q4_1, q41, 20, 1, 32, o, 32); /* d = 2, m = -1 */
    for (int j = 0; j < 16; j++) ok &= o[j] == 2.0f * j - 1 && o[j + 16] == 2.0f * (15 - j) - 1;
    TN_CHECK(ok, "q4_1 block decodes as d * nibble + m");
    ok = true;
    tn_quant_dequantize(TN_QTYPE_Q8_0, q80, 34, 1, 32, o, 32); /* d = 0.5 */
    for (int j = 0; j < 32; j++) ok &= o[j] == 0.5f * (j - 16);
    TN_CHECK(ok, "q8_0 block decodes as d * q");
    TN_CHECK(tn_qtype_block_bytes(TN_QTYPE_Q4_0) == 18 && tn_qtype_block_bytes(TN_QTYPE_Q4_1) == 20 &&
                 tn_qtype_block_bytes(TN_QTYPE_Q8_0) == 34 && tn_qtype_block_bytes(TN_QTYPE_Q4_K) == 144 &&
                 tn_qtype_block_bytes(TN_QTYPE_Q6_K) == 210 && tn_qtype_block_elems(TN_QTYPE_Q6_K) == 256 &&
                 tn_qtype_block_bytes(13) == 0 && !tn_qtype_name(13) && tn_qtype_block_elems(13) == 0,
             "block sizes; Q5_K (13) is not supported");
}

static void test_quantize_activations(void) {
    float x[64];
    for (int j = 0; j < 64; j++) x[j] = j < 32 ? rnd() * 5 : 0;
    tn_q8x_block b[2];
    tn_quant_q8x_row(x, 64, b);
    float amax = 0;
    int32_t sum = 0;
    bool ok = true;
    for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
    for (int j = 0; j < 32; j++) {
        sum += b[0].q[j];
        /* the quants round x * 127/amax; d is that scale's binary16 neighbour (rel 2^-11) */
        ok &= fabsf(amax / 127 * b[0].q[j] - x[j]) <= amax / 127 * 0.5f * 1.0001f && abs(b[0].q[j]) <= 127;
    }
    float d16 = tn_half_to_f32(tn_f32_to_half(amax / 127)), s16 = tn_half_to_f32(tn_f32_to_half(amax / 127 * (float)sum));
    TN_CHECK(ok && b[0].d == d16 && b[0].s == s16, "q8x: d = binary16(amax/127), |x - amax/127 q| <= amax/254, s = binary16(d Σq)");
    ok = b[1].d == 0 && b[1].s == 0;
    for (int j = 0; j < 32; j++) ok &= b[1].q[j] == 0;
    TN_CHECK(ok, "q8x: a zero block has d = 0 and zero quants");
#if defined(__x86_64__)
    /* the AVX2 row quantiser against the reference loop, byte for byte: random rows of
     * several magnitudes, ties (x * 127/amax exactly k + 1/2), signed zeros, a zero block */
    if (tn_cpu_host_isa() >= TN_ISA_AVX2) {
        enum { K = 32 * 40 };
        static float xr[K];
        static tn_q8x_block b0[K / 32], b1[K / 32];
        bool same = true;
        uint64_t saved = rng_state; /* the later cases keep their inputs */
        for (int round = 0; round < 200; round++) {
            float scale = ldexpf(1.0f, round % 40 - 20);
            for (int j = 0; j < K; j++) xr[j] = rnd() * scale;
            for (int j = 0; j < 32; j++) xr[j] = (float)(j - 16) * 0.5f + (j == 0 ? -127.0f : 0.0f); /* amax 127: ties at .5 */
            for (int j = 64; j < 96; j++) xr[j] = j % 2 ? -0.0f : 0.0f;
            tn_quant_q8x_row__ref(xr, K, b0);
            tn_quant_q8x_row__avx2(xr, K, b1);
            same &= !memcmp(b0, b1, sizeof b0);
        }
        rng_state = saved;
        TN_CHECK(same, "q8x: the AVX2 row quantiser equals the reference loop byte for byte");
    }
#endif
}

typedef struct { const char *name; tn_qdot_kernel fn[3]; bool available; } isa_kernels;

static int qindex(int qtype) { return qtype == TN_QTYPE_Q4_0 ? 0 : qtype == TN_QTYPE_Q4_1 ? 1 : 2; }

static double worst_kernel_rel = 0, worst_deq_rel = 0;

/* Every available ISA kernel vs the reference kernel on one shape. */
static void kernel_case(const isa_kernels *ik, int qtype, int64_t m, int64_t n, int64_t k) {
    int64_t nb = k / TN_QK, ldw = nb * tn_qtype_block_bytes(qtype);
    uint8_t *w = random_weight(qtype, n, k);
    float *x = random_x(m * k), *y0 = calloc((size_t)(m * n + 1), sizeof(float)), *y1 = calloc((size_t)(m * n + 1), sizeof(float));
    tn_q8x_block *xq = malloc(sizeof(tn_q8x_block) * (size_t)(m * nb + 1));
    for (int64_t i = 0; i < m; i++) tn_quant_q8x_row(x + i * k, k, xq + i * nb);
    ik[0].fn[qindex(qtype)](nb, w, ldw, n, xq, nb, m, y0, n);
    float scale = 0;
    for (int64_t i = 0; i < m * n; i++) scale = fmaxf(scale, fabsf(y0[i]));
    for (int t = 1; ik[t].name; t++) {
        if (!ik[t].available) continue;
        for (int64_t i = 0; i < m * n; i++) y1[i] = NAN;
        ik[t].fn[qindex(qtype)](nb, w, ldw, n, xq, nb, m, y1, n);
        double worst = 0;
        for (int64_t i = 0; i < m * n; i++) {
            double e = fabs((double)y1[i] - y0[i]) / (scale + 1e-30);
            worst = e > worst || isnan(e) ? (isnan(e) ? INFINITY : e) : worst;
        }
        if (worst > worst_kernel_rel) worst_kernel_rel = worst;
        TN_CHECK(worst <= 1e-5, "%s %s m=%lld n=%lld k=%lld: worst |diff|/max|y| %.3g vs the reference", ik[t].name,
                 tn_qtype_name(qtype), (long long)m, (long long)n, (long long)k, worst);
        if (!strcmp(ik[t].name, "i8mm")) /* quant_i8mm.c adds in the reference's order */
            TN_CHECK(memcmp(y0, y1, sizeof(float) * (size_t)(m * n)) == 0, "i8mm %s m=%lld n=%lld k=%lld: not bit-identical "
                     "to the reference", tn_qtype_name(qtype), (long long)m, (long long)n, (long long)k);
    }
    free(w), free(x), free(y0), free(y1), free(xq);
}

/* The reference (through the driver) against a double dequantise-then-multiply: the error
 * of 8-bit activations, relative to Σ_p |x_p w_p| of each output. */
static void dequant_case(int qtype, int64_t m, int64_t n, int64_t k) {
    int64_t nb = k / TN_QK, ldw = nb * tn_qtype_block_bytes(qtype);
    uint8_t *w = random_weight(qtype, n, k);
    float *x = random_x(m * k), *y = malloc(sizeof(float) * (size_t)(m * n)), *wf = malloc(sizeof(float) * (size_t)(n * k));
    tn_q8x_block *xq = malloc(sizeof(tn_q8x_block) * (size_t)(m * nb));
    tn_quant_dequantize(qtype, w, ldw, n, k, wf, k);
    tn_qmatmul_desc d = {qtype, m, n, k, x, k, w, ldw, y, n, xq};
    tn_qmatmul(&d);
    double worst = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t r = 0; r < n; r++) {
            double s = 0, a = 0;
            for (int64_t p = 0; p < k; p++) s += (double)x[i * k + p] * wf[r * k + p], a += fabs((double)x[i * k + p] * wf[r * k + p]);
            double e = fabs(y[i * n + r] - s) / (a + 1e-30);
            if (e > worst) worst = e;
        }
    if (worst > worst_deq_rel) worst_deq_rel = worst;
    TN_CHECK(worst <= 2e-3, "%s m=%lld n=%lld k=%lld (%s): worst |y - x·deq(W)ᵀ| / Σ|x w| = %.3g", tn_qtype_name(qtype),
             (long long)m, (long long)n, (long long)k, tn_qdot_variant(qtype), worst);
    free(w), free(x), free(y), free(wf), free(xq);
}

/* The driver on every tier and 1 / 2 threads: the same bits as its kernel run serially. */
static void driver_case(int qtype, int64_t m, int64_t n, int64_t k) {
    int64_t nb = k / TN_QK, ldw = nb * tn_qtype_block_bytes(qtype);
    uint8_t *w = random_weight(qtype, n, k);
    float *x = random_x(m * k), *y0 = malloc(sizeof(float) * (size_t)(m * n)), *y1 = malloc(sizeof(float) * (size_t)(m * n));
    tn_q8x_block *xq = malloc(sizeof(tn_q8x_block) * (size_t)(m * nb)), *xq1 = malloc(sizeof(tn_q8x_block) * (size_t)(m * nb));
    tn_isa host = tn_cpu_host_isa();
    for (int isa = TN_ISA_SCALAR; isa <= (int)host; isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        for (int64_t i = 0; i < m; i++) tn_quant_q8x_row(x + i * k, k, xq1 + i * nb);
        tn_qdot_pick(qtype)(nb, w, ldw, n, xq1, nb, m, y0, n);
        for (int threads = 1; threads <= 2; threads++) {
            tn_set_num_threads(threads);
            tn_qmatmul_desc d = {qtype, m, n, k, x, k, w, ldw, y1, n, xq};
            tn_qmatmul(&d);
            TN_CHECK(!memcmp(y0, y1, sizeof(float) * (size_t)(m * n)), "driver %s (%s) m=%lld n=%lld k=%lld threads=%d differs",
                     tn_qtype_name(qtype), tn_qdot_variant(qtype), (long long)m, (long long)n, (long long)k, threads);
        }
    }
    tn_cpu_isa_set(host);
    free(w), free(x), free(y0), free(y1), free(xq), free(xq1);
}

static double worst_rel(const float *a, const float *b, int64_t count);

/* ---- the x8 layouts (quant.h): repack, block round trip, dequantise, every kernel ------
 * The x8 kernels (reference and ISA) must equal the base format's reference bit for bit,
 * the repacked weight must dequantise to the same floats, and the driver (every tier, 1 and
 * 2 threads) must give its kernel's bits. */
static void x8_case(int qtype, int64_t m, int64_t n, int64_t k) {
    int x8 = TN_QTYPE_X8 | qtype, bb = tn_qtype_block_bytes(qtype);
    int64_t nb = k / TN_QK, ldw = nb * bb;
    uint8_t *w = random_weight(qtype, n, k), *wx = malloc((size_t)(n * ldw)), blk[TN_QK + 4];
    float *x = random_x(m * k), *y0 = malloc(sizeof(float) * (size_t)(m * n)), *y1 = malloc(sizeof(float) * (size_t)(m * n));
    float *d0 = malloc(sizeof(float) * (size_t)(n * k)), *d1 = malloc(sizeof(float) * (size_t)(n * k));
    tn_q8x_block *xq = malloc(sizeof(tn_q8x_block) * (size_t)(m * nb));
    TN_CHECK(tn_qtype_block_bytes(x8) == bb && tn_qtype_block_elems(x8) == TN_QK, "%s: same bytes per block as %s",
             tn_qtype_name(x8), tn_qtype_name(qtype));
    tn_quant_repack_x8(qtype, w, ldw, n, nb, wx);
    bool same = true;
    for (int64_t r = 0; r < n && same; r++)
        for (int64_t b = 0; b < nb && same; b++) {
            tn_quant_x8_block(qtype, wx + (r & ~(int64_t)7) * ldw, (int)(r & 7), b, blk);
            same = !memcmp(blk, w + r * ldw + b * bb, (size_t)bb);
        }
    TN_CHECK(same, "%s n=%lld k=%lld: a block read back from the x8 layout differs from the original", tn_qtype_name(qtype),
             (long long)n, (long long)k);
    tn_quant_dequantize(qtype, w, ldw, n, k, d0, k);
    tn_quant_dequantize(x8, wx, ldw, n, k, d1, k);
    TN_CHECK(!memcmp(d0, d1, sizeof(float) * (size_t)(n * k)), "%s n=%lld k=%lld: dequantises differently from %s",
             tn_qtype_name(x8), (long long)n, (long long)k, tn_qtype_name(qtype));
    for (int64_t i = 0; i < m; i++) tn_quant_q8x_row(x + i * k, k, xq + i * nb);
    tn_qdot_kernel base = qtype == TN_QTYPE_Q4_0 ? q4_0_qdot__ref : qtype == TN_QTYPE_Q4_1 ? q4_1_qdot__ref : q8_0_qdot__ref;
    base(nb, w, ldw, n, xq, nb, m, y0, n);
    struct { const char *name; tn_qdot_kernel fn; bool ok; } ks[] = {
        {"ref", qtype == TN_QTYPE_Q4_0 ? q4_0x8_qdot__ref : qtype == TN_QTYPE_Q4_1 ? q4_1x8_qdot__ref : q8_0x8_qdot__ref, true},
#if defined(__x86_64__)
        {"avx2", qtype == TN_QTYPE_Q4_0 ? q4_0x8_qdot__avx2 : qtype == TN_QTYPE_Q4_1 ? q4_1x8_qdot__avx2 : q8_0x8_qdot__avx2,
         tn_cpu_host_isa() >= TN_ISA_AVX2},
        {"avx512vnni",
         qtype == TN_QTYPE_Q4_0 ? q4_0x8_qdot__avx512vnni : qtype == TN_QTYPE_Q4_1 ? q4_1x8_qdot__avx512vnni : q8_0x8_qdot__avx512vnni,
         tn_cpu_host_isa() >= TN_ISA_AVX512 && tn_cpu_features_get()->avx512_vnni},
#endif
    };
    for (size_t t = 0; t < sizeof ks / sizeof *ks; t++) {
        if (!ks[t].ok) continue;
        for (int64_t i = 0; i < m * n; i++) y1[i] = NAN;
        ks[t].fn(nb, wx, ldw, n, xq, nb, m, y1, n);
        TN_CHECK(!memcmp(y0, y1, sizeof(float) * (size_t)(m * n)), "%s x8 %s m=%lld n=%lld k=%lld: not bit-identical to the "
                 "%s reference", ks[t].name, tn_qtype_name(qtype), (long long)m, (long long)n, (long long)k, tn_qtype_name(qtype));
    }
    tn_isa host = tn_cpu_host_isa();
    for (int isa = TN_ISA_SCALAR; isa <= (int)host; isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        for (int threads = 1; threads <= 2; threads++) {
            tn_set_num_threads(threads);
            for (int64_t i = 0; i < m * n; i++) y1[i] = NAN;
            tn_qmatmul_desc d = {x8, m, n, k, x, k, wx, ldw, y1, n, xq};
            tn_qmatmul(&d);
            TN_CHECK(!memcmp(y0, y1, sizeof(float) * (size_t)(m * n)), "driver %s (%s) m=%lld n=%lld k=%lld threads=%d: not "
                     "the reference's bits", tn_qtype_name(x8), tn_qdot_variant(x8), (long long)m, (long long)n, (long long)k,
                     threads);
        }
    }
    tn_cpu_isa_set(host);
    free(w), free(wx), free(x), free(y0), free(y1), free(d0), free(d1), free(xq);
}

/* ---- k-quants (Q4_K, Q6_K with Q8_K activations) -------------------------------------- */
/* n rows of k random elements: random quants and packed scales, d (and dmin) ~1e-3 / 1e-2. */
static uint8_t *random_k_weight(int qtype, int64_t n, int64_t k) {
    int bb = tn_qtype_block_bytes(qtype);
    int64_t blocks = n * (k / TN_QKK);
    uint8_t *w = malloc((size_t)(blocks * bb + 1));
    for (int64_t i = 0; i < blocks * bb; i++) w[i] = (uint8_t)rnd_u64();
    for (int64_t b = 0; b < blocks; b++) {
        uint16_t d = tn_f32_to_half(0.002f * (rnd() + 1.5f)), dm = tn_f32_to_half(0.01f * (rnd() + 1.0f));
        if (qtype == TN_QTYPE_Q4_K) memcpy(w + b * bb, &d, 2), memcpy(w + b * bb + 2, &dm, 2);
        else memcpy(w + b * bb + 208, &d, 2);
    }
    return w;
}

static void test_quantize_q8k(void) {
    float x[512];
    for (int j = 0; j < 512; j++) x[j] = j < 256 ? 4 * rnd() : 0;
    x[77] = -9.0f; /* the largest |x|: its sign decides d's */
    tn_q8k_block b[2];
    tn_quant_q8k_row(x, 512, b);
    bool ok = b[0].q[77] == -127 && b[0].d == 1.0f / (-127.0f / -9.0f); /* the max element maps to -127 */
    for (int j = 0; j < 256; j++) ok &= fabsf(b[0].d * b[0].q[j] - x[j]) <= fabsf(b[0].d) * 0.5f * 1.0001f;
    for (int g = 0; g < 16; g++) {
        int s = 0;
        for (int l = 0; l < 16; l++) s += b[0].q[16 * g + l];
        ok &= b[0].bsums[g] == s;
    }
    TN_CHECK(ok, "q8k: iscale = -127/max (signed), d = 1/iscale, |x - d q| <= |d|/2, bsums = Σ of 16 quants");
    ok = b[1].d == 0;
    for (int j = 0; j < 256; j++) ok &= b[1].q[j] == 0;
    for (int g = 0; g < 16; g++) ok &= b[1].bsums[g] == 0;
    TN_CHECK(ok, "q8k: a zero block has d = 0, zero quants and bsums");
}

typedef struct { const char *name; tn_qkdot_kernel fn[2]; bool available; } isa_kkernels;
static double worst_k_kernel_rel = 0, worst_k_deq_rel = 0;

static void k_kernel_case(const isa_kkernels *ik, int qtype, int64_t m, int64_t n, int64_t k) {
    int64_t nb = k / TN_QKK, ldw = nb * tn_qtype_block_bytes(qtype);
    int qi = qtype == TN_QTYPE_Q6_K;
    uint8_t *w = random_k_weight(qtype, n, k);
    float *x = random_x(m * k), *y0 = calloc((size_t)(m * n + 1), sizeof(float)), *y1 = calloc((size_t)(m * n + 1), sizeof(float));
    tn_q8k_block *xq = malloc(sizeof(tn_q8k_block) * (size_t)(m * nb + 1));
    for (int64_t i = 0; i < m; i++) tn_quant_q8k_row(x + i * k, k, xq + i * nb);
    ik[0].fn[qi](nb, w, ldw, n, xq, nb, m, y0, n);
    for (int t = 1; ik[t].name; t++) {
        if (!ik[t].available) continue;
        for (int64_t i = 0; i < m * n; i++) y1[i] = NAN;
        ik[t].fn[qi](nb, w, ldw, n, xq, nb, m, y1, n);
        double e = worst_rel(y0, y1, m * n);
        if (e > worst_k_kernel_rel) worst_k_kernel_rel = e;
        TN_CHECK(e <= 1e-5, "%s %s m=%lld n=%lld k=%lld: worst |diff|/max|y| %.3g vs the reference", ik[t].name,
                 tn_qtype_name(qtype), (long long)m, (long long)n, (long long)k, e);
    }
    free(w), free(x), free(y0), free(y1), free(xq);
}

/* The driver against a double dequantise-then-multiply (relative to Σ|x w|), then the same
 * bits on every tier's kernel run serially and on 1 / 2 threads. */
static void k_driver_case(int qtype, int64_t m, int64_t n, int64_t k) {
    int64_t nb = k / TN_QKK, ldw = nb * tn_qtype_block_bytes(qtype);
    uint8_t *w = random_k_weight(qtype, n, k);
    float *x = random_x(m * k), *y0 = malloc(sizeof(float) * (size_t)(m * n)), *y1 = malloc(sizeof(float) * (size_t)(m * n));
    float *wf = malloc(sizeof(float) * (size_t)(n * k));
    void *xq = malloc(tn_qmatmul_scratch_bytes(qtype, m, k));
    tn_q8k_block *xq1 = malloc(sizeof(tn_q8k_block) * (size_t)(m * nb));
    tn_quant_dequantize(qtype, w, ldw, n, k, wf, k);
    tn_qmatmul_desc d = {qtype, m, n, k, x, k, w, ldw, y0, n, xq};
    tn_qmatmul(&d);
    double worst = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t r = 0; r < n; r++) {
            double s = 0, a = 0;
            for (int64_t p = 0; p < k; p++) s += (double)x[i * k + p] * wf[r * k + p], a += fabs((double)x[i * k + p] * wf[r * k + p]);
            double e = fabs(y0[i * n + r] - s) / (a + 1e-30);
            if (e > worst) worst = e;
        }
    if (worst > worst_k_deq_rel) worst_k_deq_rel = worst;
    TN_CHECK(worst <= 2e-3, "%s m=%lld n=%lld k=%lld (%s): worst |y - x·deq(W)ᵀ| / Σ|x w| = %.3g", tn_qtype_name(qtype),
             (long long)m, (long long)n, (long long)k, tn_qdot_variant(qtype), worst);
    tn_isa host = tn_cpu_host_isa();
    for (int isa = TN_ISA_SCALAR; isa <= (int)host; isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        for (int64_t i = 0; i < m; i++) tn_quant_q8k_row(x + i * k, k, xq1 + i * nb);
        tn_qkdot_pick(qtype)(nb, w, ldw, n, xq1, nb, m, y0, n);
        for (int threads = 1; threads <= 2; threads++) {
            tn_set_num_threads(threads);
            tn_qmatmul_desc d2 = {qtype, m, n, k, x, k, w, ldw, y1, n, xq};
            tn_qmatmul(&d2);
            TN_CHECK(!memcmp(y0, y1, sizeof(float) * (size_t)(m * n)), "driver %s (%s) m=%lld n=%lld k=%lld threads=%d differs",
                     tn_qtype_name(qtype), tn_qdot_variant(qtype), (long long)m, (long long)n, (long long)k, threads);
        }
    }
    tn_cpu_isa_set(host);
    free(w), free(x), free(y0), free(y1), free(wf), free(xq), free(xq1);
}

/* ---- 8da4w and int8 weight-only ------------------------------------------------------ */
static uint8_t *random_i4(int64_t n, int64_t k) {
    uint8_t *w = malloc((size_t)(n * k / 2 + 1));
    for (int64_t i = 0; i < n * k / 2; i++) w[i] = (uint8_t)rnd_u64();
    return w;
}
static float *random_scales(int64_t n) {
    float *s = malloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) s[i] = 0.02f * (rnd() + 1.5f);
    return s;
}

typedef struct { const char *name; tn_i4dot_kernel i4; tn_w8dot_kernel w8; bool available; } isa_i4w8;

static double worst_i4_rel = 0, worst_w8_rel = 0, worst_i4_fake = 0;

static double worst_rel(const float *a, const float *b, int64_t count) {
    float scale = 0;
    for (int64_t i = 0; i < count; i++) scale = fmaxf(scale, fabsf(a[i]));
    double worst = 0;
    for (int64_t i = 0; i < count; i++) {
        double e = fabs((double)b[i] - a[i]) / (scale + 1e-30);
        if (isnan(e)) e = INFINITY;
        if (e > worst) worst = e;
    }
    return worst;
}

/* Every ISA's 8da4w and int8 kernels against the references, with padded row strides (the
 * int8 rows k - 3 long, so the 8-wide loops have tails). */
static void i4w8_kernel_case(const isa_i4w8 *ik, int64_t m, int64_t n, int64_t k, int64_t g) {
    int64_t ldw = k / 2 + 16, lds = k / g + 1, ldx = k + 3, ldy = n + 2;
    uint8_t *w = random_i4(n, ldw * 2);
    float *s = random_scales(n * lds), *x = random_x(m * ldx);
    int8_t *xq = malloc((size_t)(m * ldx + 1)), *w8 = (int8_t *)random_i4(n, ldx * 2);
    float *xd = malloc(sizeof(float) * (size_t)(m + 1));
    float *y0 = calloc((size_t)(m * ldy + 1), sizeof(float)), *y1 = calloc((size_t)(m * ldy + 1), sizeof(float));
    for (int64_t i = 0; i < m; i++) tn_quant_i8_row(x + i * ldx, k, xq + i * ldx, xd + i);
    i4_qdot__ref(k, g, w, ldw, s, lds, n, xq, xd, ldx, m, y0, ldy);
    for (int t = 1; ik[t].name; t++) {
        if (!ik[t].available) continue;
        for (int64_t i = 0; i < m * ldy; i++) y1[i] = 0;
        ik[t].i4(k, g, w, ldw, s, lds, n, xq, xd, ldx, m, y1, ldy);
        double e = worst_rel(y0, y1, m * ldy);
        if (e > worst_i4_rel) worst_i4_rel = e;
        TN_CHECK(e <= 1e-5, "i4 %s m=%lld n=%lld k=%lld g=%lld: worst |diff|/max|y| %.3g", ik[t].name, (long long)m,
                 (long long)n, (long long)k, (long long)g, e);
        if (!strcmp(ik[t].name, "i8mm"))
            TN_CHECK(memcmp(y0, y1, sizeof(float) * (size_t)(m * ldy)) == 0, "i4 i8mm m=%lld n=%lld k=%lld g=%lld: not "
                     "bit-identical to the reference", (long long)m, (long long)n, (long long)k, (long long)g);
    }
    int64_t k8 = k - 3; /* int8 rows need not be a multiple of 8: exercise the tail */
    w8_dot__ref(k8, w8, ldx, s, n, x, ldx, m, y0, ldy);
    for (int t = 1; ik[t].name; t++) {
        if (!ik[t].available) continue;
        for (int64_t i = 0; i < m * ldy; i++) y1[i] = 0;
        ik[t].w8(k8, w8, ldx, s, n, x, ldx, m, y1, ldy);
        double e = worst_rel(y0, y1, m * ldy);
        if (e > worst_w8_rel) worst_w8_rel = e;
        TN_CHECK(e <= 1e-5, "w8 %s m=%lld n=%lld k=%lld: worst |diff|/max|y| %.3g", ik[t].name, (long long)m, (long long)n,
                 (long long)k, e);
    }
    free(w), free(s), free(x), free(xq), free(w8), free(xd), free(y0), free(y1);
}

/* The driver against the definition in double: dequantised weights times the fake-quantised
 * activations (d_i * xq_ij), relative to Σ|x w|; then bit-identical across tiers and threads. */
static void i4_driver_case(int64_t m, int64_t n, int64_t k, int64_t g) {
    int64_t ldw = k / 2, lds = k / g;
    uint8_t *w = random_i4(n, k);
    float *s = random_scales(n * lds), *x = random_x(m * k), *wf = malloc(sizeof(float) * (size_t)(n * k));
    float *y0 = malloc(sizeof(float) * (size_t)(m * n)), *y1 = malloc(sizeof(float) * (size_t)(m * n));
    void *scratch = malloc(tn_i4matmul_scratch_bytes(m, k));
    int8_t *xq = malloc((size_t)(m * k));
    float *xd = malloc(sizeof(float) * (size_t)m);
    tn_quant_i4_dequantize(w, ldw, s, lds, n, k, g, wf, k);
    bool ok = true;
    for (int64_t r = 0; r < n && ok; r++) /* quant.h's chunk layout, element by element */
        for (int64_t j = 0; j < k; j++) {
            uint8_t b = w[r * ldw + j / 32 * 16 + j % 16];
            ok &= wf[r * k + j] == s[r * lds + j / g] * (float)((j % 32 < 16 ? b & 15 : b >> 4) - 8);
        }
    TN_CHECK(ok, "i4 dequantise: element 32c+j in the low nibble of byte 16c+j, 32c+16+j in its high nibble, minus 8");
    tn_i4matmul_desc d = {m, n, k, g, x, k, w, ldw, s, lds, y0, n, scratch, false};
    tn_i4matmul(&d);
    for (int64_t i = 0; i < m; i++) tn_quant_i8_row(x + i * k, k, xq + i * k, xd + i);
    double worst = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t r = 0; r < n; r++) {
            double acc = 0, a = 0;
            for (int64_t p = 0; p < k; p++) {
                acc += (double)xd[i] * xq[i * k + p] * wf[r * k + p];
                a += fabs((double)x[i * k + p] * wf[r * k + p]);
            }
            double e = fabs(y0[i * n + r] - acc) / (a + 1e-30);
            if (e > worst) worst = e;
        }
    if (worst > worst_i4_fake) worst_i4_fake = worst;
    TN_CHECK(worst <= 1e-5, "i4 driver m=%lld n=%lld k=%lld g=%lld (%s) vs fake-quantised double: %.3g", (long long)m,
             (long long)n, (long long)k, (long long)g, tn_i4dot_variant(), worst);
    tn_isa host = tn_cpu_host_isa();
    for (int isa = TN_ISA_SCALAR; isa <= (int)host; isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        tn_i4dot_pick()(k, g, w, ldw, s, lds, n, xq, xd, k, m, y0, n);
        float *xf = malloc(sizeof(float) * (size_t)(m * n));
        tn_w8matmul_desc d8 = {m, n, k, x, k, (const int8_t *)w, ldw, s, xf, n};
        float *w8ref = malloc(sizeof(float) * (size_t)(m * n));
        tn_w8dot_pick()(k / 2, (const int8_t *)w, ldw, s, n, x, k, m, w8ref, n);
        for (int threads = 1; threads <= 2; threads++) {
            tn_set_num_threads(threads);
            tn_i4matmul(&d);
            d.y = y1;
            tn_i4matmul(&d);
            d.y = y0;
            TN_CHECK(!memcmp(y0, y1, sizeof(float) * (size_t)(m * n)), "i4 driver (%s) m=%lld n=%lld threads=%d differs",
                     tn_i4dot_variant(), (long long)m, (long long)n, threads);
            d8.k = k / 2;
            tn_w8matmul(&d8);
            TN_CHECK(!memcmp(xf, w8ref, sizeof(float) * (size_t)(m * n)), "w8 driver (%s) m=%lld n=%lld threads=%d differs",
                     tn_w8dot_variant(), (long long)m, (long long)n, threads);
        }
        free(xf), free(w8ref);
    }
    tn_cpu_isa_set(host);
    free(w), free(s), free(x), free(wf), free(y0), free(y1), free(scratch), free(xq), free(xd);
}

/* ---- 8da4w in the x8 layout (quant.h): repack round trip, every kernel bit for bit ------
 * The packed weight must give back each row's quants and scales, and i4x8_qdot__ref and
 * i4x8_qdot__avx2 / __avx512vnni must equal i4_qdot__ref on the plain weight bit for bit (the layout only
 * moves bytes; the kernels keep the reference's float steps), including a last group of
 * n % 8 rows; the driver (every tier, 1 and 2 threads) must give the same bits. */
static int i4x8_cases = 0;
static void i4x8_case(int64_t m, int64_t n, int64_t k, int64_t g) {
    int64_t ldw = k / 2, lds = k / g, rb = tn_quant_i4x8_row_bytes(k, g);
    uint8_t *w = random_i4(n, k), *p = malloc((size_t)(n * rb + 1)), *wrow = malloc((size_t)ldw + 1);
    float *s = random_scales(n * lds), *srow = malloc(sizeof(float) * (size_t)(lds + 1)), *x = random_x(m * k);
    float *y0 = malloc(sizeof(float) * (size_t)(m * n + 1)), *y1 = malloc(sizeof(float) * (size_t)(m * n + 1));
    int8_t *xq = malloc((size_t)(m * k + 1));
    float *xd = malloc(sizeof(float) * (size_t)(m + 1));
    int32_t *xs = malloc(sizeof(int32_t) * (size_t)(m * lds + 1));
    void *scratch = malloc(tn_i4matmul_scratch_bytes(m, k));
    tn_quant_i4_repack_x8(w, ldw, s, lds, n, k, g, p);
    bool same = true;
    for (int64_t r = 0; r < n && same; r++) {
        tn_quant_i4x8_row(p, n, k, g, r, wrow, srow);
        same = !memcmp(wrow, w + r * ldw, (size_t)ldw) && !memcmp(srow, s + r * lds, sizeof(float) * (size_t)lds);
    }
    TN_CHECK(same, "i4x8 n=%lld k=%lld g=%lld: a row read back from the packed layout differs", (long long)n, (long long)k,
             (long long)g);
    for (int64_t i = 0; i < m; i++) {
        tn_quant_i8_row(x + i * k, k, xq + i * k, xd + i);
        for (int64_t h = 0; h < lds; h++) {
            int32_t sum = 0;
            for (int64_t j = h * g; j < (h + 1) * g; j++) sum += xq[i * k + j];
            xs[i * lds + h] = sum;
        }
    }
    i4_qdot__ref(k, g, w, ldw, s, lds, n, xq, xd, k, m, y0, n);
    struct { const char *name; tn_i4x8dot_kernel fn; bool ok; } ks[] = {
        {"ref", i4x8_qdot__ref, true},
#if defined(__x86_64__)
        {"avx2", i4x8_qdot__avx2, tn_cpu_host_isa() >= TN_ISA_AVX2},
        {"avx512vnni", i4x8_qdot__avx512vnni, tn_cpu_host_isa() >= TN_ISA_AVX512 && tn_cpu_features_get()->avx512_vnni},
#endif
    };
    for (size_t t = 0; t < sizeof ks / sizeof *ks; t++) {
        if (!ks[t].ok) continue;
        for (int64_t i = 0; i < m * n; i++) y1[i] = NAN;
        ks[t].fn(k, g, p, n, xq, xd, k, xs, lds, m, y1, n);
        TN_CHECK(!memcmp(y0, y1, sizeof(float) * (size_t)(m * n)), "i4x8 %s m=%lld n=%lld k=%lld g=%lld: not bit-identical "
                 "to i4_qdot__ref", ks[t].name, (long long)m, (long long)n, (long long)k, (long long)g);
    }
    tn_isa host = tn_cpu_host_isa();
    for (int isa = TN_ISA_SCALAR; isa <= (int)host && (m <= 9 || n > 64); isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        for (int threads = 1; threads <= 2; threads++) {
            tn_set_num_threads(threads);
            for (int64_t i = 0; i < m * n; i++) y1[i] = NAN;
            tn_i4matmul_desc d = {m, n, k, g, x, k, p, 0, NULL, 0, y1, n, scratch, true};
            tn_i4matmul(&d);
            TN_CHECK(!memcmp(y0, y1, sizeof(float) * (size_t)(m * n)), "i4x8 driver (%s) m=%lld n=%lld k=%lld g=%lld "
                     "threads=%d: not the reference's bits", tn_i4x8dot_variant(), (long long)m, (long long)n, (long long)k,
                     (long long)g, threads);
        }
    }
    tn_cpu_isa_set(host);
    i4x8_cases++;
    free(w), free(p), free(wrow), free(s), free(srow), free(x), free(y0), free(y1), free(xq), free(xd), free(xs), free(scratch);
}

static void test_quantize_per_token(void) {
    float x[100];
    int8_t q[100];
    float d, amax = 0;
    for (int j = 0; j < 100; j++) x[j] = rnd() * 4, amax = fmaxf(amax, fabsf(x[j]));
    tn_quant_i8_row(x, 100, q, &d);
    bool ok = d == amax / 127;
    for (int j = 0; j < 100; j++) ok &= q[j] == (int8_t)nearbyintf(x[j] * (127 / amax)) && fabsf(d * q[j] - x[j]) <= d * 0.5001f;
    TN_CHECK(ok, "per-token int8: d = amax/127, q = round(x * 127/amax), |x - d q| <= d/2");
    memset(x, 0, sizeof x);
    tn_quant_i8_row(x, 100, q, &d);
    ok = d == 0;
    for (int j = 0; j < 100; j++) ok &= q[j] == 0;
    TN_CHECK(ok, "per-token int8: a zero row has d = 0 and zero quants");
}

int main(void) {
    const tn_cpu_features *f = tn_cpu_features_get();
    tn_isa host = tn_cpu_host_isa();
    (void)f, (void)host;
    isa_kernels ik[] = {
        {"ref", {q4_0_qdot__ref, q4_1_qdot__ref, q8_0_qdot__ref}, true},
#if defined(__x86_64__)
        {"avx2", {q4_0_qdot__avx2, q4_1_qdot__avx2, q8_0_qdot__avx2}, host >= TN_ISA_AVX2},
        {"avx512vnni", {q4_0_qdot__avx512vnni, q4_1_qdot__avx512vnni, q8_0_qdot__avx512vnni},
         host >= TN_ISA_AVX512 && f->avx512_vnni},
#elif defined(__aarch64__)
        {"neon", {q4_0_qdot__neon, q4_1_qdot__neon, q8_0_qdot__neon}, f->asimd_dot},
        {"i8mm", {q4_0_qdot__i8mm, q4_1_qdot__i8mm, q8_0_qdot__i8mm}, f->asimd_i8mm},
#endif
        {NULL, {NULL, NULL, NULL}, false},
    };
    for (int t = 0; ik[t].name; t++) printf("kernel %s: %s\n", ik[t].name, ik[t].available ? "tested" : "skipped (host lacks it)");
    test_decode_blocks();
    test_quantize_activations();
    const int64_t ms[] = {1, 2, 3, 4, 5, 9}, ns[] = {1, 2, 3, 4, 5, 7, 9}, ks[] = {32, 64, 96, 576};
    for (int q = 0; q < 3; q++)
        for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
            for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
                for (size_t c = 0; c < sizeof ks / sizeof *ks; c++) kernel_case(ik, QTYPES[q], ms[a], ns[b], ks[c]);
    for (int q = 0; q < 3; q++) {
        dequant_case(QTYPES[q], 1, 64, 576);
        dequant_case(QTYPES[q], 7, 33, 1536);
        driver_case(QTYPES[q], 1, 130, 576);
        driver_case(QTYPES[q], 13, 200, 256);
        driver_case(QTYPES[q], 64, 67, 64);
    }
    const int64_t x8ms[] = {1, 2, 3, 4, 5, 7, 9}, x8ns[] = {8, 16, 72, 136}, x8ks[] = {32, 96, 576};
    for (int q = 0; q < 3; q++)
        for (size_t a = 0; a < sizeof x8ms / sizeof *x8ms; a++)
            for (size_t b = 0; b < sizeof x8ns / sizeof *x8ns; b++)
                for (size_t c = 0; c < sizeof x8ks / sizeof *x8ks; c++) x8_case(QTYPES[q], x8ms[a], x8ns[b], x8ks[c]);
    isa_kkernels ikk[] = {
        {"ref", {q4_k_qdot__ref, q6_k_qdot__ref}, true},
#if defined(__x86_64__)
        {"avx2", {q4_k_qdot__avx2, q6_k_qdot__avx2}, host >= TN_ISA_AVX2},
        {"avx512vnni", {q4_k_qdot__avx512vnni, q6_k_qdot__avx512vnni}, host >= TN_ISA_AVX512 && f->avx512_vnni},
#elif defined(__aarch64__)
        {"neon", {q4_k_qdot__neon, q6_k_qdot__neon}, f->asimd_dot},
#endif
        {NULL, {NULL, NULL}, false},
    };
    test_quantize_q8k();
    const int kq[] = {TN_QTYPE_Q4_K, TN_QTYPE_Q6_K};
    const int64_t kks[] = {256, 512, 1536};
    const int64_t kms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 17}; /* every tail of the 8-row AVX2 tile */
    for (int q = 0; q < 2; q++) {
        for (size_t a = 0; a < sizeof kms / sizeof *kms; a++)
            for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
                for (size_t c = 0; c < sizeof kks / sizeof *kks; c++) k_kernel_case(ikk, kq[q], kms[a], ns[b], kks[c]);
        k_driver_case(kq[q], 1, 130, 1536);
        k_driver_case(kq[q], 13, 200, 256);
        k_driver_case(kq[q], 7, 67, 512);
    }
    printf("k-quants: worst kernel-vs-reference |diff|/max|y| %.3g; worst driver-vs-dequantised |diff|/Σ|xw| %.3g\n",
           worst_k_kernel_rel, worst_k_deq_rel);
    isa_i4w8 ik4[] = {
        {"ref", i4_qdot__ref, w8_dot__ref, true},
#if defined(__x86_64__)
        {"avx2", i4_qdot__avx2, w8_dot__avx2, host >= TN_ISA_AVX2},
        {"avx512vnni", i4_qdot__avx512vnni, w8_dot__avx512vnni, host >= TN_ISA_AVX512 && f->avx512_vnni},
#elif defined(__aarch64__)
        {"neon", i4_qdot__neon, w8_dot__neon, f->asimd_dot},
        {"i8mm", i4_qdot__i8mm, w8_dot__neon, f->asimd_i8mm},
#endif
        {NULL, NULL, NULL, false},
    };
    test_quantize_per_token();
    const int64_t i4ks[][2] = {{32, 32}, {64, 32}, {128, 64}, {256, 128}, {512, 256}, {576, 64}, {256, 256}};
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
        for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
            for (size_t c = 0; c < sizeof i4ks / sizeof *i4ks; c++) i4w8_kernel_case(ik4, ms[a], ns[b], i4ks[c][0], i4ks[c][1]);
    i4_driver_case(1, 130, 576, 64);
    i4_driver_case(13, 200, 256, 128);
    i4_driver_case(64, 67, 512, 32);
    i4_driver_case(5, 70, 1536, 256);
    /* x8: every m from 1 to 70 (the 4-row tiles and their tails) on one shape, then group
     * sizes 32..256 against n around the 8-row groups and the 64-row driver chunks */
    for (int64_t m = 1; m <= 70; m++) i4x8_case(m, 13, 192, 64);
    const int64_t x8g[] = {32, 64, 128, 256}, x8n[] = {1, 3, 7, 8, 9, 15, 16, 67, 139}, x8m[] = {1, 2, 4, 5, 70};
    for (size_t a = 0; a < sizeof x8g / sizeof *x8g; a++)
        for (size_t b = 0; b < sizeof x8n / sizeof *x8n; b++)
            for (size_t c = 0; c < sizeof x8m / sizeof *x8m; c++) {
                i4x8_case(x8m[c], x8n[b], x8g[a], x8g[a]);
                i4x8_case(x8m[c], x8n[b], 3 * x8g[a], x8g[a]);
            }
    i4x8_case(1, 1536, 576, 64); /* SmolLM2's MLP shape, decode */
    printf("8da4w x8: %d cases bit-identical to i4_qdot__ref (driver: %s)\n", i4x8_cases, tn_i4x8dot_variant());
    printf("8da4w: worst kernel-vs-reference %.3g, worst driver-vs-fake-quantised double %.3g; int8: worst kernel-vs-reference %.3g\n",
           worst_i4_rel, worst_i4_fake, worst_w8_rel);
    printf("worst kernel-vs-reference |diff|/max|y|: %.3g; worst reference-vs-dequantised |diff|/Σ|xw|: %.3g\n",
           worst_kernel_rel, worst_deq_rel);
    return tn_test_summary();
}
