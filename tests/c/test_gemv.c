/* test_gemv.c — the GEMV kernels (src/kernels/gemv*.c) against a double-precision dot
 * product on every variant the host can run, with k and the row count crossing every
 * vector width, m = 1..4 x vectors, padded leading dimensions and a guard page right after
 * every operand (a kernel reading past its last element faults). Then tn_gemv through the
 * GEMM descriptor against tn_gemm_ref on every ISA tier: both orientations (m <= 4, and
 * n <= 4 with W = A), alpha/beta, strided C, beta == 0 over NaN, bfloat16/float16 single
 * rounding, and results identical at 1 and 2 threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm.h"
#include "kernels/gemv.h"
#include "tn_test.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double urand(void) { /* xorshift64*, uniform in [-1, 1) */
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (double)((rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2 - 1;
}

static double load(tn_dtype d, const void *p, int64_t i) {
    if (d == TN_DTYPE_FLOAT32) return ((const float *)p)[i];
    if (d == TN_DTYPE_BFLOAT16) return tn_bf16_to_f32(((const uint16_t *)p)[i]);
    return tn_half_to_f32(((const uint16_t *)p)[i]);
}
static void store(tn_dtype d, void *p, int64_t i, double v) {
    if (d == TN_DTYPE_FLOAT32) ((float *)p)[i] = (float)v;
    else if (d == TN_DTYPE_BFLOAT16) ((uint16_t *)p)[i] = tn_f32_to_bf16((float)v);
    else ((uint16_t *)p)[i] = tn_f32_to_half((float)v);
}

/* `bytes` ending exactly at an inaccessible page. */
typedef struct guarded { void *map; size_t len; void *p; } guarded;
static guarded guarded_alloc(size_t bytes) {
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (bytes + pg - 1) / pg * pg;
    guarded g = {0};
    g.len = body + pg;
    g.map = mmap(NULL, g.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g.map == MAP_FAILED) { g.map = NULL; return g; }
    mprotect((char *)g.map + body, pg, PROT_NONE);
    g.p = (char *)g.map + body - bytes;
    return g;
}
static void guarded_free(guarded g) { if (g.map) munmap(g.map, g.len); }

typedef struct variant { const char *name; tn_gemv_kernel fn; tn_dtype dtype; int usable; } variant;

static int failures;

static void check_kernel(const variant *v, int m, int64_t k, int64_t n, int64_t pad) {
    int esz = tn_dtype_itemsize(v->dtype);
    int64_t ldx = k + pad, ldw = k + pad;
    size_t xb = (size_t)(((m - 1) * ldx + k) * esz), wb = (size_t)(((n - 1) * ldw + k) * esz);
    guarded gx = guarded_alloc(xb), gw = guarded_alloc(wb);
    float *out = malloc(sizeof(float) * (size_t)(m * n));
    if (!gx.map || !gw.map || !out) { TN_CHECK(0, "allocation"); return; }
    memset(gx.p, 0x7F, xb), memset(gw.p, 0x7F, wb); /* padding holds huge values: must not be read */
    for (int i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++) store(v->dtype, gx.p, i * ldx + p, urand());
    for (int64_t r = 0; r < n; r++)
        for (int64_t p = 0; p < k; p++) store(v->dtype, gw.p, r * ldw + p, urand());
    v->fn(k, m, gx.p, ldx, gw.p, ldw, n, out, n);
    int ok = 1;
    double worst = 0;
    for (int i = 0; i < m; i++)
        for (int64_t r = 0; r < n; r++) {
            double s = 0, mag = 0;
            for (int64_t p = 0; p < k; p++) {
                double t = load(v->dtype, gx.p, i * ldx + p) * load(v->dtype, gw.p, r * ldw + p);
                s += t, mag += fabs(t);
            }
            double err = fabs(out[i * n + r] - s), tol = 2.0 * (double)k * 0x1p-24 * mag + 1e-30;
            if (!(err <= tol)) { ok = 0; if (err > worst || err != err) worst = err; }
        }
    TN_CHECK(ok, "%s m=%d k=%lld n=%lld pad=%lld: worst error %g", v->name, m, (long long)k, (long long)n,
             (long long)pad, worst);
    if (!ok) failures++;
    free(out);
    guarded_free(gx), guarded_free(gw);
}

/* One GEMV-shaped product through tn_gemv against tn_gemm_ref. `small_m`: m <= 4 (W = Bᵀ),
 * else n <= 4 (W = A). C is strided (every other element) when `cstep` is 2. */
static void check_desc(tn_dtype d, int64_t m, int64_t n, int64_t k, int cstep, double alpha, double beta, int nan_c) {
    int esz = tn_dtype_itemsize(d);
    tn_gemm_desc g = tn_gemm_desc_init(d);
    g.m = m, g.n = n, g.k = k, g.alpha = alpha, g.beta = beta;
    g.a_rs = k + 3, g.a_cs = 1; /* A row-major, padded */
    g.b_rs = 1, g.b_cs = k + 5; /* B = Wᵀ of a row-major [n, k] weight, padded */
    g.c_rs = n * cstep + 1, g.c_cs = cstep;
    int64_t ea = (m - 1) * g.a_rs + k, eb = (n - 1) * g.b_cs + k, ec = (m - 1) * g.c_rs + (n - 1) * g.c_cs + 2;
    void *a = malloc((size_t)(ea * esz)), *b = malloc((size_t)(eb * esz));
    void *c = malloc((size_t)(ec * esz)), *cr = malloc((size_t)(ec * esz));
    for (int64_t i = 0; i < ea; i++) store(d, a, i, urand());
    for (int64_t i = 0; i < eb; i++) store(d, b, i, urand());
    for (int64_t i = 0; i < ec; i++) store(d, c, i, nan_c ? NAN : urand());
    memcpy(cr, c, (size_t)(ec * esz));
    g.a = a, g.b = b;
    TN_CHECK(tn_gemv_shaped(&g), "shaped m=%lld n=%lld", (long long)m, (long long)n);
    g.c = c;
    tn_gemv(&g);
    tn_gemm_desc r = g;
    r.c = cr;
    tn_gemm_ref(&r);
    double u = d == TN_DTYPE_FLOAT32 ? 0x1p-24 : d == TN_DTYPE_BFLOAT16 ? 0x1p-8 : 0x1p-11;
    int ok = 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t o = i * g.c_rs + j * g.c_cs;
            double got = load(d, c, o), want = load(d, cr, o);
            /* Summation order differs from the reference's: float32 accumulation error plus
             * one rounding of the output type. */
            double tol = (2.0 * (double)k * 0x1p-24 + 2 * u) * ((double)k * fabs(alpha) + fabs(beta) + 1);
            if (!(fabs(got - want) <= tol)) ok = 0;
        }
    /* The elements between C's strided outputs are untouched. */
    if (cstep == 2)
        for (int64_t i = 0; i < m; i++) ok &= memcmp((char *)c + (i * g.c_rs + 1) * esz, (char *)cr + (i * g.c_rs + 1) * esz, (size_t)esz) == 0;
    TN_CHECK(ok, "%s %s m=%lld n=%lld k=%lld cstep=%d alpha=%g beta=%g nan=%d", tn_isa_name(tn_cpu_isa()),
             tn_dtype_infos[d].c10_name, (long long)m, (long long)n, (long long)k, cstep, alpha, beta, nan_c);
    free(a), free(b), free(c), free(cr);
}

/* The same problem at 1 and at 2 threads gives identical bits. */
static void check_threads(tn_dtype d, int64_t n, int64_t k) {
    int esz = tn_dtype_itemsize(d);
    tn_gemm_desc g = tn_gemm_desc_init(d);
    g.m = 1, g.n = n, g.k = k, g.a_rs = k, g.a_cs = 1, g.b_rs = 1, g.b_cs = k, g.c_rs = n, g.c_cs = 1;
    void *a = malloc((size_t)(k * esz)), *b = malloc((size_t)(n * k * esz));
    void *c1 = malloc((size_t)(n * esz)), *c2 = malloc((size_t)(n * esz));
    for (int64_t i = 0; i < k; i++) store(d, a, i, urand());
    for (int64_t i = 0; i < n * k; i++) store(d, b, i, urand());
    g.a = a, g.b = b;
    int saved = tn_get_num_threads();
    tn_set_num_threads(1);
    g.c = c1, tn_gemv(&g);
    tn_set_num_threads(2);
    g.c = c2, tn_gemv(&g);
    tn_set_num_threads(saved);
    TN_CHECK(memcmp(c1, c2, (size_t)(n * esz)) == 0, "%s n=%lld k=%lld: 1 vs 2 threads differ",
             tn_dtype_infos[d].c10_name, (long long)n, (long long)k);
    free(a), free(b), free(c1), free(c2);
}

/* The same weight twice in a row (the second call takes the kernel without prefetch, the
 * weight being in cache), then after another product: identical bits every time, and
 * equal to the kernel without prefetch called directly when the weight is small. */
static void check_repeat(tn_dtype d, int64_t n, int64_t k) {
    int esz = tn_dtype_itemsize(d);
    tn_gemm_desc g = tn_gemm_desc_init(d);
    g.m = 1, g.n = n, g.k = k, g.a_rs = k, g.a_cs = 1, g.b_rs = 1, g.b_cs = k, g.c_rs = n, g.c_cs = 1;
    void *a = malloc((size_t)(k * esz)), *b = malloc((size_t)(n * k * esz)), *b2 = malloc((size_t)(n * k * esz));
    void *c[3] = {malloc((size_t)(n * esz)), malloc((size_t)(n * esz)), malloc((size_t)(n * esz))};
    for (int64_t i = 0; i < k; i++) store(d, a, i, urand());
    for (int64_t i = 0; i < n * k; i++) store(d, b, i, urand()), store(d, b2, i, urand());
    g.a = a;
    for (int t = 0; t < 3; t++) {
        if (t == 2) { /* another weight in between */
            g.b = b2, g.c = c[2], tn_gemv(&g);
        }
        g.b = b, g.c = c[t], tn_gemv(&g);
    }
    TN_CHECK(memcmp(c[0], c[1], (size_t)(n * esz)) == 0 && memcmp(c[0], c[2], (size_t)(n * esz)) == 0,
             "%s %s n=%lld k=%lld: the same product repeated gives other bits", tn_isa_name(tn_cpu_isa()),
             tn_dtype_infos[d].c10_name, (long long)n, (long long)k);
    free(a), free(b), free(b2), free(c[0]), free(c[1]), free(c[2]);
}

int main(void) {
    const tn_cpu_features *f = tn_cpu_features_get();
    int x86 = 0, arm = 0, avx2 = 0, avx512 = 0, bf16 = 0;
#if defined(__x86_64__)
    x86 = 1;
    avx2 = f->avx2 && f->fma && f->f16c;
    avx512 = avx2 && f->avx512f && f->avx512bw && f->avx512vl;
    bf16 = avx512 && f->avx512_bf16;
#elif defined(__aarch64__)
    arm = 1;
#endif
    (void)f, (void)x86;
    variant vs[] = {
        {"f32_gemv__scalar", f32_gemv__scalar, TN_DTYPE_FLOAT32, 1},
        {"bf16_gemv__scalar", bf16_gemv__scalar, TN_DTYPE_BFLOAT16, 1},
        {"f16_gemv__scalar", f16_gemv__scalar, TN_DTYPE_FLOAT16, 1},
        {"f32_gemv__avx2", f32_gemv__avx2, TN_DTYPE_FLOAT32, avx2},
        {"bf16_gemv__avx2", bf16_gemv__avx2, TN_DTYPE_BFLOAT16, avx2},
        {"f16_gemv__avx2", f16_gemv__avx2, TN_DTYPE_FLOAT16, avx2},
        {"f32_gemv__avx512", f32_gemv__avx512, TN_DTYPE_FLOAT32, avx512},
        {"bf16_gemv__avx512", bf16_gemv__avx512, TN_DTYPE_BFLOAT16, avx512},
        {"f16_gemv__avx512", f16_gemv__avx512, TN_DTYPE_FLOAT16, avx512},
        {"bf16_gemv__avx512bf16", bf16_gemv__avx512bf16, TN_DTYPE_BFLOAT16, bf16},
        {"f32_gemv__avx2_hot", f32_gemv__avx2_hot, TN_DTYPE_FLOAT32, avx2},
        {"bf16_gemv__avx2_hot", bf16_gemv__avx2_hot, TN_DTYPE_BFLOAT16, avx2},
        {"f16_gemv__avx2_hot", f16_gemv__avx2_hot, TN_DTYPE_FLOAT16, avx2},
        {"f32_gemv__avx512_hot", f32_gemv__avx512_hot, TN_DTYPE_FLOAT32, avx512},
        {"bf16_gemv__avx512_hot", bf16_gemv__avx512_hot, TN_DTYPE_BFLOAT16, avx512},
        {"f16_gemv__avx512_hot", f16_gemv__avx512_hot, TN_DTYPE_FLOAT16, avx512},
        {"bf16_gemv__avx512bf16_hot", bf16_gemv__avx512bf16_hot, TN_DTYPE_BFLOAT16, bf16},
#if defined(__aarch64__)
        {"f32_gemv__neon", f32_gemv__neon, TN_DTYPE_FLOAT32, 1},
        {"bf16_gemv__neon", bf16_gemv__neon, TN_DTYPE_BFLOAT16, 1},
        {"f16_gemv__neon", f16_gemv__neon, TN_DTYPE_FLOAT16, 1},
#endif
    };
    (void)arm;
    static const int64_t sizes[] = {1, 7, 15, 16, 17, 31, 33, 63, 64, 65, 576, 1536};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    for (size_t vi = 0; vi < sizeof vs / sizeof vs[0]; vi++) {
        if (!vs[vi].usable) { printf("skip %s (not supported here)\n", vs[vi].name); continue; }
        int before = failures;
        for (int m = 1; m <= 4; m++)
            for (int ki = 0; ki < ns; ki++)
                for (int ni = 0; ni < ns; ni++) {
                    if (sizes[ki] * sizes[ni] > 100000 && m > 1 && (ki + ni + m) % 3) continue; /* keep big cases sparse */
                    check_kernel(&vs[vi], m, sizes[ki], sizes[ni], (ki + ni) % 3 == 0 ? 0 : 3);
                }
        printf("%-24s %s\n", vs[vi].name, failures == before ? "ok" : "FAILED");
    }

    /* Through the descriptor on every tier. */
    static const tn_dtype dts[] = {TN_DTYPE_FLOAT32, TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT16};
    tn_isa top = tn_cpu_isa();
    for (int isa = TN_ISA_SCALAR; isa <= (int)top; isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        for (int di = 0; di < 3; di++) {
            tn_dtype d = dts[di];
            for (int64_t m = 1; m <= 4; m++) {
                check_desc(d, m, 65, 33, 1, 1.0, 0.0, 0);
                check_desc(d, m, 576, 576, 1, 1.0, 0.0, 0);
                check_desc(d, m, 31, 1, 1, 1.0, 0.0, 0);
                check_desc(d, m, 17, 64, 2, 0.5, 2.0, 0);
                check_desc(d, m, 17, 15, 1, -1.5, 0.0, 1);
            }
            for (int64_t n = 1; n <= 4; n++) { /* W = A */
                check_desc(d, 67, n, 129, 1, 1.0, 0.0, 0);
                check_desc(d, 7, n, 1, 2, 2.0, -1.0, 0);
                check_desc(d, 33, n, 17, 2, 1.0, 0.0, 1);
            }
            check_threads(d, 1536, 576);
            check_threads(d, 577, 1536);
            check_repeat(d, 576, 576);
            check_repeat(d, 1536, 576);
        }
        printf("tier %-10s variants f32=%s bf16=%s f16=%s\n", tn_isa_name((tn_isa)isa), tn_gemv_variant(TN_DTYPE_FLOAT32),
               tn_gemv_variant(TN_DTYPE_BFLOAT16), tn_gemv_variant(TN_DTYPE_FLOAT16));
    }
    tn_cpu_isa_set(top);

    /* bfloat16 rounds once: 1 + 2^-8 + 2^-8 is 1 + 2^-7 only when summed before rounding. */
    {
        uint16_t x[3] = {tn_f32_to_bf16(1.0f), tn_f32_to_bf16(0x1p-8f), tn_f32_to_bf16(0x1p-8f)};
        uint16_t w[3] = {tn_f32_to_bf16(1.0f), tn_f32_to_bf16(1.0f), tn_f32_to_bf16(1.0f)}, c = 0;
        tn_gemm_desc g = tn_gemm_desc_init(TN_DTYPE_BFLOAT16);
        g.m = 1, g.n = 1, g.k = 3, g.a = x, g.a_rs = 3, g.a_cs = 1, g.b = w, g.b_rs = 1, g.b_cs = 3, g.c = &c, g.c_rs = 1, g.c_cs = 1;
        for (int isa = TN_ISA_SCALAR; isa <= (int)top; isa++) {
            tn_cpu_isa_set((tn_isa)isa);
            tn_gemv(&g);
            TN_CHECK(tn_bf16_to_f32(c) == 1.0f + 0x1p-7f, "%s: bf16 single rounding gave %g", tn_isa_name((tn_isa)isa),
                     (double)tn_bf16_to_f32(c));
        }
        tn_cpu_isa_set(top);
    }
    return tn_test_summary();
}
