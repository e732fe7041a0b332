/* test_ew_math.c — the vector float32 transcendental loops (src/kernels/ew_vec_dmath.inc)
 * against the float64 libm value rounded to float32: a sweep of the float32 bit patterns
 * (every 431st by default, about 1e7 per function; `--stride N [op...]` sweeps every Nth,
 * 1 = all 2^32, of the ops named (all by default) and prints each maximum ulp error, the numbers quoted in docs/PERFORMANCE.md), special values (NaN, +-inf,
 * +-0, domain ends, huge trig arguments), every bfloat16/float16 pattern against the scalar
 * loop, gelu/elu/ndtr built from the vector erf/expm1 in the scalar formula's order, and atan2 over
 * random pairs of patterns and the special values' pairs (`--stride N atan2`: 2e8 pairs), pow
 * likewise with ordinary pairs beside (`--stride N pow`). Each
 * vector ISA tier the host has is checked. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cast.h"
#include "kernels/cpu_features.h"
#include "kernels/elementwise.h"
#include "tn_test.h"

typedef struct {
    tn_ew_op op;
    double (*ref)(double); /* NULL: the scalar float64 loop of the op */
    int max_ulp;           /* the bound asserted (measured over all of float32: see docs) */
    double neg_abs;        /* > 0: for negative x an absolute error up to this passes too (the
                              bound near the zeros of lgamma's reflection, as SLEEF's) */
    int wrong_ppm;         /* > 0: at most this many per million swept patterns may differ from
                              the reference at all (exp: upstream's MKL rounds correctly but on
                              about 1 %, ours must not round worse) */
} math_case;

static const math_case cases[] = {
    {TN_EW_expm1, expm1, 1}, {TN_EW_log1p, log1p, 1}, {TN_EW_sin, sin, 1},   {TN_EW_cos, cos, 1},
    {TN_EW_tan, tan, 1},     {TN_EW_asin, asin, 1},   {TN_EW_acos, acos, 1}, {TN_EW_atan, atan, 1},
    {TN_EW_sinh, sinh, 1},   {TN_EW_cosh, cosh, 1},   {TN_EW_atanh, atanh, 1}, {TN_EW_erf, erf, 1},
    {TN_EW_erfc, erfc, 1},   {TN_EW_erfinv, NULL, 1}, {TN_EW_i0, NULL, 1},  {TN_EW_i0e, NULL, 1},
    {TN_EW_i1, NULL, 1},     {TN_EW_i1e, NULL, 1},   {TN_EW_log, log, 1},   {TN_EW_log2, log2, 1},
    {TN_EW_log10, log10, 1}, {TN_EW_exp2, exp2, 1},  {TN_EW_tanh, tanh, 1},  {TN_EW_lgamma, lgamma, 1, 1e-10},
    {TN_EW_exp, exp, 1, 0, 1000},
};

/* float bits as a monotone integer, so the difference counts representable floats */
static int64_t ordered(float f) {
    int32_t b;
    memcpy(&b, &f, 4);
    return b < 0 ? (int64_t)INT32_MIN - b : b;
}
static int64_t ulp_dist(float got, float want) {
    if (want != want || got != got) return (want != want) == (got != got) ? 0 : INT32_MAX;
    if (got == 0 && want == 0) return signbit(got) == signbit(want) ? 0 : INT32_MAX;
    int64_t d = ordered(got) - ordered(want);
    return d < 0 ? -d : d;
}

static void run_f32(tn_ew_op op, const float *x, float *y, int64_t n) {
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char *data[2] = {(char *)y, (char *)x};
    int64_t st[2] = {4, 4};
    tn_ew_loop(op, TN_DTYPE_FLOAT32)(data, st, n, &ctx);
}

static void reference(const math_case *c, const float *x, float *want, double *scratch, int64_t n) {
    if (c->ref) {
        for (int64_t i = 0; i < n; i++) want[i] = (float)c->ref((double)x[i]);
        return;
    }
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    for (int64_t i = 0; i < n; i++) scratch[i] = x[i];
    char *data[2] = {(char *)scratch, (char *)scratch};
    int64_t st[2] = {8, 8};
    tn_ew_loop_scalar(c->op, TN_DTYPE_FLOAT64)(data, st, n, &ctx);
    for (int64_t i = 0; i < n; i++) want[i] = (float)scratch[i];
}

#define CHUNK 65536

/* Every `stride`-th float32 bit pattern (stride 1: all); returns the max ulp error. */
static int64_t sweep(const math_case *c, uint64_t stride, float *worst_x, int64_t *wrong, int64_t *total) {
    float *x = malloc(CHUNK * 4), *got = malloc(CHUNK * 4), *want = malloc(CHUNK * 4);
    double *scratch = malloc(CHUNK * 8);
    int64_t maxd = 0;
    *wrong = *total = 0;
    for (uint64_t b = 0; b < (1ull << 32);) {
        int64_t n = 0;
        for (; n < CHUNK && b < (1ull << 32); n++, b += stride) {
            uint32_t u = (uint32_t)b;
            memcpy(&x[n], &u, 4);
        }
        run_f32(c->op, x, got, n);
        reference(c, x, want, scratch, n);
        for (int64_t i = 0; i < n; i++) {
            int64_t d = ulp_dist(got[i], want[i]);
            if (c->neg_abs > 0 && x[i] < 0 && fabs((double)got[i] - (double)want[i]) <= c->neg_abs) continue;
            *total += 1;
            *wrong += d != 0;
            if (d > maxd) { maxd = d; *worst_x = x[i]; }
        }
    }
    free(x); free(got); free(want); free(scratch);
    return maxd;
}

static void test_specials(const math_case *c) {
    static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f, 0.5f, -0.5f, 0.75f,
                               -0.75f, 2.0f, 3.0f, 3.9f, 10.0f, 10.1f, 10.2f, 20.0f, -20.0f, 88.7f, 89.5f, -88.0f,
                               -104.0f, -110.0f, 1e-30f, -1e-30f, 1e-45f, -1e-45f, FLT_MIN, FLT_MAX, -FLT_MAX,
                               1.5707964f, 3.1415927f, 131071.9f, 131072.0f, 131073.0f, 1e6f, -1e6f, 16777215.0f, 16777216.0f, 16777218.0f, -16777216.0f, 1e30f, 3e38f,
                               0.99999994f, -0.99999994f, 1.0000001f, 0.41421357f, 0.41421354f};
    const int64_t n = (int64_t)(sizeof sp / sizeof sp[0]);
    float got[64], want[64];
    double scratch[64];
    run_f32(c->op, sp, got, n);
    reference(c, sp, want, scratch, n);
    for (int64_t i = 0; i < n; i++)
        TN_CHECK(ulp_dist(got[i], want[i]) <= c->max_ulp, "%s(%a) = %a, libm %a (isa %s)", tn_ew_name(c->op),
                 (double)sp[i], (double)got[i], (double)want[i], tn_isa_name(tn_cpu_isa()));
}

/* bfloat16 / float16: every pattern, within one unit of the dtype of the scalar loop (both
 * round a float32 result that may differ by 1 ulp) */
static void test_half_types(const math_case *c) {
    const tn_dtype dts[2] = {TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT16};
    uint16_t *x = malloc(65536 * 2), *y1 = malloc(65536 * 2), *y2 = malloc(65536 * 2);
    for (int k = 0; k < 65536; k++) x[k] = (uint16_t)k;
    for (int t = 0; t < 2; t++) {
        tn_loop_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        char *d1[2] = {(char *)y1, (char *)x}, *d2[2] = {(char *)y2, (char *)x};
        int64_t st[2] = {2, 2};
        tn_ew_loop_scalar(c->op, dts[t])(d1, st, 65536, &ctx);
        tn_ew_loop(c->op, dts[t])(d2, st, 65536, &ctx);
        int bad = 0;
        for (int k = 0; k < 65536; k++) {
            float a = t ? tn_half_to_f32(y1[k]) : tn_bf16_to_f32(y1[k]);
            float b = t ? tn_half_to_f32(y2[k]) : tn_bf16_to_f32(y2[k]);
            if (a != a && b != b) continue;
            int o1 = y1[k] & 0x8000 ? -(y1[k] & 0x7FFF) : y1[k], o2 = y2[k] & 0x8000 ? -(y2[k] & 0x7FFF) : y2[k];
            int dist = abs(o1 - o2);
            if (a == b || (signbit(a) == signbit(b) && dist <= 1)) continue;
            if (bad++ < 3)
                fprintf(stderr, "  %s %s x=0x%04x: vec %a ref %a\n", tn_ew_name(c->op), t ? "f16" : "bf16", x[k],
                        (double)b, (double)a);
        }
        TN_CHECK(bad == 0, "%s %s: %d patterns off (isa %s)", tn_ew_name(c->op), t ? "float16" : "bfloat16", bad,
                 tn_isa_name(tn_cpu_isa()));
    }
    free(x); free(y1); free(y2);
}

/* gelu = x * 0.5 * (1 + erf(x sqrt(1/2))) and elu = expm1(x s) (a s) in float, with the vector
 * erf/expm1: the same bits as that formula (the scalar loop differs where erf/expm1 differ
 * from libm by their 1 ulp, amplified by 1 + erf near -1) */
static void test_composed(void) {
    enum { N = 4099 };
    float x[N], g[N], e[N], h[N], el[N], em[N], xs[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i - N / 2) / 157.0f;
    x[0] = NAN; x[1] = INFINITY; x[2] = -INFINITY; x[3] = -0.0f;
    for (int i = 0; i < N; i++) h[i] = x[i] * (float)M_SQRT1_2;
    run_f32(TN_EW_gelu, x, g, N);
    run_f32(TN_EW_erf, h, e, N);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        float want = x[i] * 0.5f * (1.0f + e[i]);
        if (memcmp(&want, &g[i], 4) != 0 && !(want != want && g[i] != g[i])) bad++;
    }
    TN_CHECK(bad == 0, "gelu differs from its formula over the vector erf at %d points", bad);
    run_f32(TN_EW_ndtr, h, g, N); /* special_ndtr of x sqrt(1/2): (1 + erf(x / 2)) * 0.5 */
    for (int i = 0; i < N; i++) h[i] = h[i] * (float)M_SQRT1_2;
    run_f32(TN_EW_erf, h, e, N);
    bad = 0;
    for (int i = 0; i < N; i++) {
        float want = (1.0f + e[i]) * 0.5f;
        if (memcmp(&want, &g[i], 4) != 0 && !(want != want && g[i] != g[i])) bad++;
    }
    TN_CHECK(bad == 0, "ndtr differs from its formula over the vector erf at %d points", bad);
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.d[0] = 1.6732632423543772; /* selu's alpha, scale, input scale 1.3 */
    ctx.d[1] = 1.0507009873554805;
    ctx.d[2] = 1.3;
    char *data[2] = {(char *)el, (char *)x};
    int64_t st[2] = {4, 4};
    tn_ew_loop(TN_EW_elu, TN_DTYPE_FLOAT32)(data, st, N, &ctx);
    for (int i = 0; i < N; i++) xs[i] = x[i] * (float)ctx.d[2];
    run_f32(TN_EW_expm1, xs, em, N);
    bad = 0;
    for (int i = 0; i < N; i++) {
        float want = x[i] < 0 ? em[i] * ((float)ctx.d[0] * (float)ctx.d[1]) : x[i] * (float)ctx.d[1];
        if (memcmp(&want, &el[i], 4) != 0 && !(want != want && el[i] != el[i])) bad++;
    }
    TN_CHECK(bad == 0, "elu differs from its formula over the vector expm1 at %d points", bad);
}

/* erf saturates exactly: from |x| = 3.92 on (erf rounds to 1 from 3.9187) the vector erf is
 * +-1, not the float next to it (its 1-ulp bound would allow that, and gelu / ndtr of large
 * negative x would then be x * 2^-25 instead of -0, their 1 + erf cancelling); every float
 * from 3.92 to 4.5, then with a stride, and the largest finite ones */
static void test_erf_saturates(void) {
    enum { N = 4096 };
    float x[N], y[N];
    int n = 0, bad = 0;
    for (uint64_t b = 0x407ae148u; b <= 0x7f7fffffu; b += (b < 0x40900000u ? 1 : 7919)) {
        float v;
        uint32_t u = (uint32_t)b;
        memcpy(&v, &u, 4);
        if ((float)erf((double)v) != 1.0f) continue;
        x[n] = (n & 1) ? -v : v;
        n++;
        if (n == N || b + 7919 > 0x7f7fffffu) {
            run_f32(TN_EW_erf, x, y, n);
            for (int i = 0; i < n; i++) bad += y[i] != (x[i] < 0 ? -1.0f : 1.0f);
            n = 0;
        }
    }
    x[0] = FLT_MAX, x[1] = -FLT_MAX, x[2] = INFINITY, x[3] = -INFINITY;
    run_f32(TN_EW_erf, x, y, 4);
    for (int i = 0; i < 4; i++) bad += y[i] != (x[i] < 0 ? -1.0f : 1.0f);
    TN_CHECK(bad == 0, "erf is not +-1 at %d arguments where it rounds to +-1", bad);
}

/* atan2 (two inputs): pairs of float32 bit patterns from a fixed generator (a million per
 * call) and every pair of the special values, against the float64 libm atan2 rounded:
 * max 1 ulp; the half types as the unary ones, on a grid of pairs */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rng32(void) {
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}
/* The binary op's float32 loop over `pairs` operand pairs (a, b) against ref(a, b) rounded
 * to float32: every pair of the special values first, then gen's pairs. Returns the max ulp
 * distance and sets the pair where it occurred. */
static const float pair_specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 1e-45f, -1e-45f, FLT_MIN,
                                      FLT_MAX, -FLT_MAX, 3.0f, -0.5f, 2.0f, -3.0f, 0.5f, 1e30f, -1e-30f, 1e10f};
static int64_t pair_sweep(tn_ew_op op, double (*ref)(double, double), void (*gen)(float *a, float *b, int64_t k),
                          int64_t pairs, float *wa, float *wb) {
    const int ns = (int)(sizeof pair_specials / sizeof pair_specials[0]);
    float *a = malloc(CHUNK * 4), *b = malloc(CHUNK * 4), *got = malloc(CHUNK * 4);
    int64_t maxd = 0;
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    for (int64_t done = 0; done < pairs;) {
        int64_t n = 0;
        if (done == 0)
            for (int i = 0; i < ns; i++)
                for (int j = 0; j < ns; j++, n++) a[n] = pair_specials[i], b[n] = pair_specials[j];
        for (; n < CHUNK && done + n < pairs; n++) gen(&a[n], &b[n], n);
        char *data[3] = {(char *)got, (char *)a, (char *)b};
        int64_t st[3] = {4, 4, 4};
        tn_ew_loop(op, TN_DTYPE_FLOAT32)(data, st, n, &ctx);
        for (int64_t i = 0; i < n; i++) {
            int64_t d = ulp_dist(got[i], (float)ref((double)a[i], (double)b[i]));
            if (d > maxd) maxd = d, *wa = a[i], *wb = b[i];
        }
        done += n;
    }
    free(a); free(b); free(got);
    return maxd;
}

/* atan2's pairs: random patterns, half of them with nearby exponents (a quotient near 1) */
static void gen_atan2(float *y, float *x, int64_t k) {
    uint32_t a = rng32(), b = rng32();
    if (k & 1) b = (b & 0x807FFFFFu) | (a & 0x7F800000u);
    memcpy(y, &a, 4);
    memcpy(x, &b, 4);
}

/* pair_sweep's maximum checked: at most 1 ulp */
static void check_pairs(tn_ew_op op, double (*ref)(double, double), void (*gen)(float *, float *, int64_t),
                        int64_t pairs) {
    float wa = 0, wb = 0;
    int64_t maxd = pair_sweep(op, ref, gen, pairs, &wa, &wb);
    TN_CHECK(maxd <= 1, "%s: %lld ulp at (%a, %a) (isa %s)", tn_ew_name(op), (long long)maxd, (double)wa, (double)wb,
             tn_isa_name(tn_cpu_isa()));
}

static void test_atan2(int64_t pairs) {
    check_pairs(TN_EW_atan2, atan2, gen_atan2, pairs);
    /* bfloat16 / float16 on a 256 x 256 grid of patterns: within one unit of the scalar loop */
    const tn_dtype dts[2] = {TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT16};
    uint16_t *a = malloc(65536 * 2), *b = malloc(65536 * 2), *o1 = malloc(65536 * 2), *o2 = malloc(65536 * 2);
    for (int k = 0; k < 65536; k++) a[k] = (uint16_t)((k >> 8) * 257), b[k] = (uint16_t)((k & 255) * 257 + 3);
    for (int t = 0; t < 2; t++) {
        tn_loop_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        char *d1[3] = {(char *)o1, (char *)a, (char *)b}, *d2[3] = {(char *)o2, (char *)a, (char *)b};
        int64_t st[3] = {2, 2, 2};
        tn_ew_loop_scalar(TN_EW_atan2, dts[t])(d1, st, 65536, &ctx);
        tn_ew_loop(TN_EW_atan2, dts[t])(d2, st, 65536, &ctx);
        int bad = 0;
        for (int k = 0; k < 65536; k++) {
            float p = t ? tn_half_to_f32(o1[k]) : tn_bf16_to_f32(o1[k]);
            float q = t ? tn_half_to_f32(o2[k]) : tn_bf16_to_f32(o2[k]);
            if ((p != p && q != q) || p == q) continue;
            int i1 = o1[k] & 0x8000 ? -(o1[k] & 0x7FFF) : o1[k], i2 = o2[k] & 0x8000 ? -(o2[k] & 0x7FFF) : o2[k];
            bad += !(signbit(p) == signbit(q) && abs(i1 - i2) <= 1);
        }
        TN_CHECK(bad == 0, "atan2 %s: %d pairs off (isa %s)", t ? "float16" : "bfloat16", bad, tn_isa_name(tn_cpu_isa()));
    }
    free(a); free(b); free(o1); free(o2);
}

/* pow (two inputs, and the scalar-exponent row's general mode) against the scalar row's
 * expression (libm's pow in double, rounded): max 1 ulp. Its pairs: a third random patterns, the rest ordinary (|x| in [2^-20, 2^20] of either
 * sign, y in [-30, 30] or an integer in [-40, 40]) */
static void gen_pow(float *x, float *y, int64_t k) {
    uint32_t a = rng32(), b = rng32();
    if (k % 3) {
        a = (a & 0x807FFFFFu) | ((107u + (a >> 8) % 41u) << 23);
        float yv = k % 3 == 2 ? (float)((int32_t)(b % 81u) - 40) : (float)((int32_t)(b % 60001u) - 30000) / 1000.0f;
        memcpy(&b, &yv, 4);
    }
    memcpy(x, &a, 4);
    memcpy(y, &b, 4);
}

static void test_pow(int64_t pairs) {
    check_pairs(TN_EW_pow, pow, gen_pow, pairs);
    float wx = 0;
    int64_t n = CHUNK < pairs ? CHUNK : pairs;
    float *x = malloc(CHUNK * 4), *y = malloc(CHUNK * 4), *got = malloc(CHUNK * 4);
    for (int64_t k = 0; k < n; k++) gen_pow(&x[k], &y[k], k);
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    /* the scalar exponent's general mode over pow's x, one exponent per call */
    static const float ys[] = {0.0f, 1.0f, -3.0f, 2.5f, -0.75f, 7.0f, 1e-3f, 33.3f, -41.0f, INFINITY, NAN};
    for (size_t k = 0; k < sizeof ys / sizeof ys[0]; k++) {
        ctx.mode = 0;
        ctx.d[0] = ys[k];
        char *data[2] = {(char *)got, (char *)x};
        int64_t st[2] = {4, 4};
        tn_ew_loop(TN_EW_pow_scalar, TN_DTYPE_FLOAT32)(data, st, n, &ctx);
        int64_t md = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t d = ulp_dist(got[i], (float)pow((double)x[i], (double)ys[k]));
            if (d > md) md = d, wx = x[i];
        }
        TN_CHECK(md <= 1, "pow(x, %a): %lld ulp at %a (isa %s)", (double)ys[k], (long long)md, (double)wx,
                 tn_isa_name(tn_cpu_isa()));
    }
    free(x); free(y); free(got);
}

/* ---- float64 tensors' exp, log, pow (ew_vec_f64.inc) ---------------------------------- */

static uint64_t rng64(void) { return ((uint64_t)rng32() << 32) ^ rng32() ^ ((uint64_t)rng32() << 16); }
static double uniform(double lo, double hi) { return lo + (hi - lo) * ((double)(rng64() >> 11) * 0x1p-53); }
static double bits_f64(uint64_t b) { double v; memcpy(&v, &b, 8); return v; }

/* |got - want| in ulps of the double nearest want (long double's 11 more bits make it the
 * exact value to 1/2048 ulp); special values must be libm's exactly (0 or 1e9) */
static double ulp_err64(double got, long double want, double libm) {
    double w = (double)want;
    if (!isfinite(w) || w == 0.0 || fabs(w) < DBL_MIN || !isfinite(libm) || libm == 0.0)
        return (got == libm || (got != got && libm != libm)) && signbit(got) == signbit(libm) ? 0.0 : 1e9;
    if (!isfinite(got)) return 1e9;
    return (double)(fabsl((long double)got - want) / ldexp(1.0, ilogb(w) - 52));
}

#define F64N 4096
static void run_f64(tn_ew_op op, double *out, const double *x, const double *y, int64_t n, int ystride, double scalar) {
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    if (op == TN_EW_pow_scalar) ctx.d[0] = scalar; /* mode 0: the general exponent */
    char *data[3] = {(char *)out, (char *)x, (char *)y};
    int64_t st[3] = {8, 8, ystride};
    tn_ew_loop(op, TN_DTYPE_FLOAT64)(data, st, n, &ctx);
}

/* the max error over n arguments against long double; *wx, *wy: where */
static double check64(tn_ew_op op, const double *x, const double *y, int64_t n, int ystride, double *wx, double *wy) {
    double *got = malloc(F64N * 8), m = 0;
    run_f64(op, got, x, y, n, ystride, y[0]);
    for (int64_t i = 0; i < n; i++) {
        double yi = ystride ? y[i] : y[0], e;
        if (op == TN_EW_exp) e = ulp_err64(got[i], expl((long double)x[i]), exp(x[i]));
        else if (op == TN_EW_log) e = ulp_err64(got[i], logl((long double)x[i]), log(x[i]));
        else e = ulp_err64(got[i], powl((long double)x[i], (long double)yi), pow(x[i], yi));
        if (e > m) m = e, *wx = x[i], *wy = yi;
    }
    free(got);
    return m;
}

static void test_f64(int rounds) {
    double *x = malloc(F64N * 8), *y = malloc(F64N * 8), wx = 0, wy = 0, m;
    static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0x1p-1074, DBL_MIN, DBL_MAX,
                                      -DBL_MAX, 708.0, -708.0, 709.7, -745.0, -746.0, 2.0, -3.0, 0.5, 1e300};
    const int ns = (int)(sizeof specials / sizeof specials[0]);
    double mexp = 0, mlog = 0, mpow = 0;
    for (int r = 0; r < rounds; r++) {
        /* exp: ordinary arguments, then arbitrary bit patterns (most take libm's lanes) */
        for (int i = 0; i < F64N; i++) x[i] = r % 2 ? uniform(-708.5, 708.5) : uniform(-2.0, 2.0);
        if ((m = check64(TN_EW_exp, x, x, F64N, 8, &wx, &wy)) > mexp) mexp = m;
        TN_CHECK(m <= 1.0, "exp float64: %.3f ulp at %a (isa %s)", m, wx, tn_isa_name(tn_cpu_isa()));
        for (int i = 0; i < F64N; i++) x[i] = i < ns ? specials[i] : bits_f64(rng64());
        m = check64(TN_EW_exp, x, x, F64N, 8, &wx, &wy);
        TN_CHECK(m <= 1.0, "exp float64 (patterns): %.3f ulp at %a (isa %s)", m, wx, tn_isa_name(tn_cpu_isa()));
        /* log: positive patterns (any exponent), near 1, and every pattern */
        for (int i = 0; i < F64N; i++)
            x[i] = i % 3 == 0 ? bits_f64(rng64() >> 1) : i % 3 == 1 ? 1.0 + uniform(-0x1p-8, 0x1p-8) : uniform(0.5, 2.0);
        if ((m = check64(TN_EW_log, x, x, F64N, 8, &wx, &wy)) > mlog) mlog = m;
        TN_CHECK(m <= 1.0, "log float64: %.3f ulp at %a (isa %s)", m, wx, tn_isa_name(tn_cpu_isa()));
        for (int i = 0; i < F64N; i++) x[i] = i < ns ? specials[i] : bits_f64(rng64());
        m = check64(TN_EW_log, x, x, F64N, 8, &wx, &wy);
        TN_CHECK(m <= 1.0, "log float64 (patterns): %.3f ulp at %a (isa %s)", m, wx, tn_isa_name(tn_cpu_isa()));
        /* pow: x in [2^-40, 2^40] with y in [-15, 15] or an integer; x near 1 with large y
         * (results up to the ends of the range: y log x is what the double-double must keep);
         * arbitrary pairs; every pair of specials */
        for (int i = 0; i < F64N; i++) {
            if (i % 3 == 0) x[i] = ldexp(uniform(1.0, 2.0), (int)(rng32() % 81) - 40), y[i] = uniform(-15.0, 15.0);
            else if (i % 3 == 1) x[i] = ldexp(uniform(1.0, 2.0), (int)(rng32() % 81) - 40), y[i] = (double)((int)(rng32() % 41) - 20);
            else x[i] = 1.0 + uniform(-0.3, 0.3), y[i] = uniform(-700.0, 700.0) / fabs(log(x[i]));
        }
        if ((m = check64(TN_EW_pow, x, y, F64N, 8, &wx, &wy)) > mpow) mpow = m;
        TN_CHECK(m <= 1.0, "pow float64: %.3f ulp at pow(%a, %a) (isa %s)", m, wx, wy, tn_isa_name(tn_cpu_isa()));
        for (int i = 0; i < F64N; i++) {
            x[i] = i < ns * ns ? specials[i / ns] : bits_f64(rng64());
            y[i] = i < ns * ns ? specials[i % ns] : i % 2 ? bits_f64(rng64()) : uniform(-4.0, 4.0);
        }
        m = check64(TN_EW_pow, x, y, F64N, 8, &wx, &wy);
        TN_CHECK(m <= 1.0, "pow float64 (patterns): %.3f ulp at pow(%a, %a) (isa %s)", m, wx, wy, tn_isa_name(tn_cpu_isa()));
        /* one exponent for all: the scalar-exponent row's general mode, and pow's broadcast y */
        static const double ys[] = {2.5, -0.75, 1e-3, 33.3, -41.0, 0.0, NAN};
        for (int i = 0; i < F64N; i++) x[i] = i < ns ? specials[i] : uniform(0.0, 3.0);
        for (size_t k = 0; k < sizeof ys / sizeof ys[0]; k++) {
            y[0] = ys[k];
            m = check64(TN_EW_pow_scalar, x, y, F64N, 0, &wx, &wy);
            TN_CHECK(m <= 1.0, "pow_scalar float64 (y %a): %.3f ulp at %a", ys[k], m, wx);
            m = check64(TN_EW_pow, x, y, F64N, 0, &wx, &wy);
            TN_CHECK(m <= 1.0, "pow float64 broadcast y %a: %.3f ulp at %a", ys[k], m, wx);
        }
    }
    /* exactly representable results are exact */
    int64_t n = 0;
    for (int k = -60; k <= 60; k++) x[n] = 2.0, y[n++] = k;
    for (int b = 3; b <= 40; b++) x[n] = b, y[n++] = 2.0, x[n] = b, y[n++] = 3.0, x[n] = (double)(b * b), y[n++] = 0.5;
    for (int b = 1; b <= 40; b++) x[n] = b / 64.0, y[n++] = 1.0;
    for (int b = 1; b <= 33; b++) x[n] = 0.75, y[n++] = (double)b; /* 3^33 < 2^53 */
    double *got = malloc(n * 8);
    run_f64(TN_EW_pow, got, x, y, n, 8, 0);
    for (int64_t i = 0; i < n; i++)
        TN_CHECK(got[i] == pow(x[i], y[i]), "pow float64 exact case pow(%a, %a) = %a, not %a", x[i], y[i], got[i], pow(x[i], y[i]));
    free(got);
    if (rounds > 1) printf("float64 %-6s exp %.3f log %.3f pow %.3f ulp max\n", tn_isa_name(tn_cpu_isa()), mexp, mlog, mpow);
    free(x); free(y);
}

int main(int argc, char **argv) {
    uint64_t stride = argc > 2 && strcmp(argv[1], "--stride") == 0 ? strtoull(argv[2], NULL, 10) : 0;
    int full = stride > 0;
    tn_isa host = tn_cpu_isa();
    if (host < TN_ISA_AVX2) {
        printf("no vector tier on this host: nothing to check\n");
        return tn_test_summary();
    }
    for (int isa = TN_ISA_AVX2; isa <= (int)host && isa <= TN_ISA_AVX512; isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const math_case *c = &cases[k];
            int named = argc <= 3;
            for (int a = 3; a < argc; a++) named |= strcmp(argv[a], tn_ew_name(c->op)) == 0;
            if (!named) continue;
            float wx = 0;
            int64_t wrong, total;
            int64_t m = sweep(c, full ? stride : 431, &wx, &wrong, &total);
            if (full)
                printf("%-7s %-6s max %lld ulp (at %a), %lld of %lld patterns not the reference's\n", tn_ew_name(c->op),
                       tn_isa_name((tn_isa)isa), (long long)m, (double)wx, (long long)wrong, (long long)total);
            if (c->wrong_ppm > 0)
                TN_CHECK(wrong * 1000000 <= (int64_t)c->wrong_ppm * total, "%s: %lld of %lld patterns off the reference (isa %s)",
                         tn_ew_name(c->op), (long long)wrong, (long long)total, tn_isa_name((tn_isa)isa));
            TN_CHECK(m <= c->max_ulp, "%s: %lld ulp at %a (isa %s)", tn_ew_name(c->op), (long long)m, (double)wx,
                     tn_isa_name((tn_isa)isa));
            test_specials(c);
            test_half_types(c);
        }
        test_composed();
        test_erf_saturates();
        int atan2_named = argc <= 3;
        for (int a = 3; a < argc; a++) atan2_named |= strcmp(argv[a], "atan2") == 0;
        if (atan2_named) test_atan2(full ? 200000000 : 1000000);
        int pow_named = argc <= 3;
        for (int a = 3; a < argc; a++) pow_named |= strcmp(argv[a], "pow") == 0;
        if (pow_named) test_pow(full ? 200000000 : 1000000);
        int f64_named = argc <= 3;
        for (int a = 3; a < argc; a++) f64_named |= strcmp(argv[a], "float64") == 0;
        if (f64_named) test_f64(full ? 2000 : 8);
    }
    tn_cpu_isa_set(host);
    return tn_test_summary();
}
