/* test_gemm.c — the GEMM family against its scalar reference on every ISA tier the host
 * has (and OpenBLAS when TN_BLAS_PATH names it): shapes across tile edges, transposed and
 * strided operands, alpha/beta, beta == 0 over NaN, float32 accumulation of bfloat16.
 * `test_gemm --bench` times every variant instead (GFLOP/s; see docs/GEMM.md). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/blas.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm.h"
#include "tn_test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) { /* xorshift64*, uniform in [-1, 1) */
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (double)((rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2 - 1;
}

static double load(tn_dtype d, const void *p, int64_t i) {
    switch (d) {
    case TN_DTYPE_FLOAT32: return ((const float *)p)[i];
    case TN_DTYPE_FLOAT64: return ((const double *)p)[i];
    case TN_DTYPE_BFLOAT16: return tn_bf16_to_f32(((const uint16_t *)p)[i]);
    case TN_DTYPE_FLOAT16: return tn_half_to_f32(((const uint16_t *)p)[i]);
    case TN_DTYPE_INT8: return ((const int8_t *)p)[i];
    case TN_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case TN_DTYPE_INT16: return ((const int16_t *)p)[i];
    case TN_DTYPE_INT32: return ((const int32_t *)p)[i];
    case TN_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    default: return 0;
    }
}
static void store(tn_dtype d, void *p, int64_t i, double v) {
    switch (d) {
    case TN_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
    case TN_DTYPE_FLOAT64: ((double *)p)[i] = v; break;
    case TN_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = tn_f32_to_bf16((float)v); break;
    case TN_DTYPE_FLOAT16: ((uint16_t *)p)[i] = tn_f32_to_half((float)v); break;
    case TN_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case TN_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case TN_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case TN_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case TN_DTYPE_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: break;
    }
}
static double unit_roundoff(tn_dtype d) {
    return d == TN_DTYPE_FLOAT64 ? 0x1p-53 : d == TN_DTYPE_BFLOAT16 ? 0x1p-8 : d == TN_DTYPE_FLOAT16 ? 0x1p-11 : 0x1p-24;
}

/* Layout of one operand inside its buffer: transposed or not, leading-dimension padding,
 * and an element step (2 = every other element: neither stride is unit). */
typedef struct layout { int trans, pad, step; } layout;

static void geometry(int64_t rows, int64_t cols, layout l, int64_t *rs, int64_t *cs, int64_t *extent) {
    if (!l.trans) *cs = l.step, *rs = (cols * l.step + l.pad);
    else *rs = l.step, *cs = (rows * l.step + l.pad);
    *extent = (rows - 1) * *rs + (cols - 1) * *cs + 1;
}

static int failures_reported;

/* Runs tn_gemm and the reference on the same random problem; checks the two agree within
 * a bound derived from the accumulation length and the output type's rounding. */
static void check_case(tn_dtype d, int64_t m, int64_t n, int64_t k, layout la, layout lb, layout lc, double alpha,
                       double beta, const char *tag) {
    int isz = tn_dtype_itemsize(d);
    int integral = tn_dtype_is_integral(d, false);
    tn_gemm_desc g = tn_gemm_desc_init(d), r;
    int64_t ea, eb, ec;
    g.m = m, g.n = n, g.k = k;
    geometry(m, k, la, &g.a_rs, &g.a_cs, &ea);
    geometry(k, n, lb, &g.b_rs, &g.b_cs, &eb);
    geometry(m, n, lc, &g.c_rs, &g.c_cs, &ec);
    void *a = malloc((size_t)(ea * isz)), *b = malloc((size_t)(eb * isz));
    void *c = malloc((size_t)(ec * isz)), *cr = malloc((size_t)(ec * isz));
    for (int64_t i = 0; i < ea; i++) store(d, a, i, integral ? (double)(int)(urand() * 9) : urand());
    for (int64_t i = 0; i < eb; i++) store(d, b, i, integral ? (double)(int)(urand() * 9) : urand());
    for (int64_t i = 0; i < ec; i++) {
        if (beta == 0 && !integral) store(d, c, i, NAN); /* must never reach the result */
        else store(d, c, i, integral ? (double)(int)(urand() * 9) : urand());
    }
    memcpy(cr, c, (size_t)(ec * isz));
    g.a = a, g.b = b, g.c = c, g.alpha = alpha, g.beta = beta, g.ialpha = (int64_t)alpha, g.ibeta = (int64_t)beta;
    r = g;
    r.c = cr;
    size_t sb = tn_gemm_scratch_bytes(&g);
    void *scratch = sb ? malloc(sb) : NULL;
    tn_status st = tn_gemm(&g, scratch, sb);
    TN_CHECK(st == TN_OK, "%s: tn_gemm failed: %s", tag, tn_error_message());
    tn_gemm_ref(&r);
    double u = unit_roundoff(d);
    int64_t bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < m && st == TN_OK; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t ci = i * g.c_rs + j * g.c_cs;
            double got = load(d, c, ci), want = load(d, cr, ci);
            double tol = 0;
            if (!integral) {
                /* sum |a||b| bounds the float32 accumulation error of any summation order. */
                double sabs = 0;
                for (int64_t p = 0; p < k; p++)
                    sabs += fabs(load(d, a, i * g.a_rs + p * g.a_cs) * load(d, b, p * g.b_rs + j * g.b_cs));
                double acc_u = d == TN_DTYPE_FLOAT64 ? 0x1p-53 : 0x1p-24;
                tol = 2.0 * k * acc_u * fabs(alpha) * sabs + 2 * u * fabs(want) + 1e-30;
                if (beta != 0) tol += 2 * u * fabs(beta * load(d, cr, ci));
            }
            double err = fabs(got - want);
            if (!(err <= tol)) { /* NaN fails too */
                bad++;
                if (!(err <= worst)) worst = err;
            }
        }
    TN_CHECK(bad == 0, "%s %s m=%lld n=%lld k=%lld ta=%d tb=%d c(step=%d) alpha=%g beta=%g: %lld bad, worst %g",
             tag, tn_dtype_infos[d].c10_name, (long long)m, (long long)n, (long long)k, la.trans, lb.trans, lc.step,
             alpha, beta, (long long)bad, worst);
    if (bad && ++failures_reported > 20) exit(1);
    free(a), free(b), free(c), free(cr), free(scratch);
}

static const int64_t SIZES[] = {1, 7, 31, 33, 64, 65, 127};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

static void sweep(tn_dtype d, const char *tag) {
    layout rowm = {0, 0, 1}, colm = {1, 0, 1}, padded = {0, 5, 1}, strided = {0, 3, 2};
    /* Every (m, n) pair with k cycling through the sizes, all four transpose combinations. */
    for (int im = 0; im < NSIZES; im++)
        for (int in = 0; in < NSIZES; in++) {
            int64_t k = SIZES[(im + 2 * in) % NSIZES];
            layout las[2] = {rowm, colm}, lbs[2] = {rowm, colm};
            for (int t = 0; t < 4; t++)
                check_case(d, SIZES[im], SIZES[in], k, las[t & 1], lbs[t >> 1], rowm, 1.0, 0.0, tag);
        }
    /* Strided / padded operands and C, alpha and beta, beta == 0 over NaN. */
    check_case(d, 33, 65, 31, padded, strided, strided, 2.0, 0.5, tag);
    check_case(d, 65, 33, 127, strided, padded, colm, -1.5, 1.0, tag);
    check_case(d, 7, 127, 64, colm, strided, padded, 1.0, 0.0, tag);
    /* Blocking edges: k > KC (256), m > MC (96), n > NC (256); GEMV-shaped products. */
    check_case(d, 130, 300, 600, rowm, colm, rowm, 1.0, 1.0, tag);
    check_case(d, 200, 270, 257, colm, rowm, rowm, 0.5, 0.0, tag);
    check_case(d, 1, 1030, 1000, rowm, colm, rowm, 1.0, 0.0, tag);
    check_case(d, 3, 70, 1000, rowm, colm, rowm, 1.0, 2.0, tag);
    check_case(d, 1000, 1, 513, rowm, colm, rowm, 1.0, 0.0, tag);
    check_case(d, 1, 1000, 300, rowm, rowm, rowm, 1.0, 0.0, tag);
    check_case(d, 0, 5, 5, rowm, rowm, rowm, 1.0, 0.0, tag);
    check_case(d, 5, 5, 0, rowm, rowm, rowm, 1.0, 0.0, tag); /* k == 0: zeros over NaN */
    check_case(d, 5, 5, 0, rowm, rowm, rowm, 1.0, 0.5, tag);
}

/* bfloat16 products must be summed in float32 and rounded once: 1 + 2^-8 + 2^-8 is exactly
 * 1 + 2^-7 in bfloat16; summing in bfloat16 would round each 1 + 2^-8 tie down to 1. */
static void check_bf16_rounding(const char *tag) {
    for (int k = 3; k <= 35; k += 32) {
        uint16_t a[35], b[35], c[1] = {0x7FC0};
        for (int p = 0; p < k; p++) a[p] = tn_f32_to_bf16(1.0f), b[p] = 0;
        b[0] = tn_f32_to_bf16(1.0f), b[1] = tn_f32_to_bf16(0x1p-8f), b[2] = tn_f32_to_bf16(0x1p-8f);
        for (int layout_ = 0; layout_ < 2; layout_++) {
            tn_gemm_desc g = tn_gemm_desc_init(TN_DTYPE_BFLOAT16);
            g.m = g.n = 1, g.k = k, g.a = a, g.b = b, g.c = c;
            g.a_cs = 1, g.a_rs = k, g.b_rs = layout_ ? 1 : 1, g.b_cs = layout_ ? k : 1, g.c_rs = g.c_cs = 1;
            char scratch[1 << 16];
            c[0] = 0x7FC0;
            /* layout 1 forces the packed engine via an 1x1 problem with m padded by a second row. */
            TN_CHECK(tn_gemm(&g, scratch, sizeof scratch) == TN_OK, "bf16 rounding: %s", tn_error_message());
            TN_CHECK(c[0] == tn_f32_to_bf16(1.0f + 0x1p-7f), "%s bf16 k=%d rounded more than once: got %#x", tag,
                     k, c[0]);
        }
    }
    /* The same through the packed engine (m = n = 8, every output row identical). */
    enum { K = 35, M = 8, N = 8 };
    uint16_t A[M * K], B[K * N], C[M * N];
    for (int i = 0; i < M * K; i++) A[i] = tn_f32_to_bf16(1.0f);
    for (int p = 0; p < K; p++)
        for (int j = 0; j < N; j++) B[p * N + j] = p == 0 ? 0x3F80 : p < 3 ? tn_f32_to_bf16(0x1p-8f) : 0;
    tn_gemm_desc g = tn_gemm_desc_init(TN_DTYPE_BFLOAT16);
    g.m = M, g.n = N, g.k = K, g.a = A, g.b = B, g.c = C, g.a_rs = K, g.a_cs = 1, g.b_rs = N, g.b_cs = 1, g.c_rs = N,
    g.c_cs = 1;
    size_t sb = tn_gemm_scratch_bytes(&g);
    void *s = malloc(sb);
    TN_CHECK(tn_gemm(&g, s, sb) == TN_OK, "engine bf16");
    int ok = 1;
    for (int i = 0; i < M * N; i++) ok &= C[i] == tn_f32_to_bf16(1.0f + 0x1p-7f);
    TN_CHECK(ok, "%s bf16 engine rounded more than once", tag);
    free(s);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* GFLOP/s of tn_gemm for C = A·B (A row-major m×k, B stored n×k as a linear layer's
 * weight, C row-major), best of several runs after a warm-up. */
static double bench(tn_dtype d, int64_t m, int64_t n, int64_t k) {
    int isz = tn_dtype_itemsize(d);
    void *a = malloc((size_t)(m * k * isz)), *b = malloc((size_t)(k * n * isz)), *c = malloc((size_t)(m * n * isz));
    for (int64_t i = 0; i < m * k; i++) store(d, a, i, urand());
    for (int64_t i = 0; i < k * n; i++) store(d, b, i, urand());
    tn_gemm_desc g = tn_gemm_desc_init(d);
    g.m = m, g.n = n, g.k = k, g.a = a, g.b = b, g.c = c;
    g.a_rs = k, g.a_cs = 1, g.b_rs = 1, g.b_cs = k, g.c_rs = n, g.c_cs = 1;
    size_t sb = tn_gemm_scratch_bytes(&g);
    void *s = sb ? aligned_alloc(64, (sb + 63) / 64 * 64) : NULL;
    tn_gemm(&g, s, sb);
    double best = 1e30, flops = 2.0 * m * n * k;
    int reps = (int)(2e9 / flops) + 1;
    if (reps > 50) reps = 50;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        for (int i = 0; i < reps; i++) tn_gemm(&g, s, sb);
        double t = (now() - t0) / reps;
        if (t < best) best = t;
    }
    free(a), free(b), free(c), free(s);
    return flops / best * 1e-9;
}

static void run_bench(void) {
    static const int64_t shapes[][3] = {{512, 512, 512}, {1024, 1024, 1024}, {128, 2048, 2048}, {1, 4096, 4096},
                                        {16, 4096, 4096}};
    static const tn_dtype dts[] = {TN_DTYPE_FLOAT32, TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT16, TN_DTYPE_FLOAT64};
    tn_isa host = tn_cpu_isa();
    printf("BLAS: %s\n", tn_blas_config() ? tn_blas_config() : "(none)");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
            for (int blas = 1; blas >= 0; blas--)
                for (int isa = (int)host; isa >= 0; isa--) {
                    tn_dtype d = dts[di];
                    tn_blas_enable(blas);
                    tn_cpu_isa_set((tn_isa)isa);
                    int uses_blas = !strcmp(tn_gemm_variant(d), "openblas");
                    if (blas && !uses_blas && tn_blas_get()) continue; /* printed in the blas=0 pass */
                    if (uses_blas && isa != (int)host) continue;      /* ISA does not apply to BLAS */
                    if (!blas && tn_blas_get() == NULL && !strcmp(tn_gemm_variant(d), "ref") && isa != (int)host)
                        continue;
                    if (!strcmp(tn_gemm_variant(d), "ref") && shapes[s][0] * shapes[s][1] * shapes[s][2] > (1 << 28))
                        continue;
                    const char *engine_name = tn_gemm_variant(d);
                    printf("%-9s m=%-5lld n=%-5lld k=%-5lld %-8s isa=%-10s %-32s %8.2f GFLOP/s\n",
                           tn_dtype_infos[d].c10_name, (long long)shapes[s][0], (long long)shapes[s][1],
                           (long long)shapes[s][2], uses_blas ? "blas" : "own", tn_isa_name((tn_isa)isa), engine_name,
                           bench(d, shapes[s][0], shapes[s][1], shapes[s][2]));
                    fflush(stdout);
                }
    tn_blas_enable(true);
    tn_cpu_isa_set(host);
}

int main(int argc, char **argv) {
    int have_blas = tn_blas_load(NULL) == TN_OK;
    if (argc > 1 && !strcmp(argv[1], "--bench")) {
        run_bench();
        return 0;
    }
    printf("host tier %s, BLAS %s\n", tn_isa_name(tn_cpu_isa()), have_blas ? "loaded" : "absent (set TN_BLAS_PATH)");
    static const tn_dtype own[] = {TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT16, TN_DTYPE_FLOAT32};
    tn_isa host = tn_cpu_isa();
    /* Our kernels on every tier, with BLAS off so float32 runs them too. */
    tn_blas_enable(false);
    for (int isa = (int)host; isa >= 0; isa--) {
        tn_cpu_isa_set((tn_isa)isa);
        for (int i = 0; i < 3; i++) sweep(own[i], tn_isa_name((tn_isa)isa));
        check_bf16_rounding(tn_isa_name((tn_isa)isa));
        printf("tier %-10s done: %d passed, %d failed so far\n", tn_isa_name((tn_isa)isa), tn_test_passed,
               tn_test_failed);
    }
    tn_cpu_isa_set(host);
    /* The reference-only dtypes, and float64 without BLAS. */
    static const tn_dtype refd[] = {TN_DTYPE_FLOAT64, TN_DTYPE_INT8, TN_DTYPE_UINT8, TN_DTYPE_INT32, TN_DTYPE_INT64};
    for (int i = 0; i < 5; i++) sweep(refd[i], "ref");
    tn_blas_enable(true);
    if (have_blas) {
        sweep(TN_DTYPE_FLOAT32, "openblas");
        sweep(TN_DTYPE_FLOAT64, "openblas");
    }
    return tn_test_summary();
}
