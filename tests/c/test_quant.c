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
                 tn_qtype_block_bytes(TN_QTYPE_Q8_0) == 34 && tn_qtype_block_bytes(12) == 0 && !tn_qtype_name(12),
             "block sizes; Q4_K (12) is not supported");
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
    printf("worst kernel-vs-reference |diff|/max|y|: %.3g; worst reference-vs-dequantised |diff|/Σ|xw|: %.3g\n",
           worst_kernel_rel, worst_deq_rel);
    return tn_test_summary();
}
