/* norm_rows.c — float32 layer norm and RMS norm over contiguous rows, vectorised (the
 * row sums in double on 4-wide double vectors, the affine pass on 8-float vectors) and
 * threaded over rows. Same formulas and roundings as the reference kernels (nn_ref.inc);
 * only the order of the double-precision sums differs. */
#include <math.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/nn.h"

#pragma GCC diagnostic ignored "-Wpsabi"
typedef double nr_v4d __attribute__((vector_size(32)));
typedef float nr_v4f __attribute__((vector_size(16)));
typedef float nr_v4fu __attribute__((vector_size(16), aligned(4)));

/* 4 floats widened to doubles: the portable form for the baseline instance; the AVX2 one
 * uses the one-instruction conversion (GCC 12 lowered the portable form there too to two
 * 2-float conversions and a lane insert: layer / group norm's statistics 1.6x slower) */
#define ld4d_base(p) __builtin_convertvector(*(const nr_v4fu *)(p), nr_v4d)
#if defined(__x86_64__)
#include <immintrin.h>
#define ld4d_avx2(p) ((nr_v4d)_mm256_cvtps_pd(_mm_loadu_ps(p)))
#endif
#define hsum4(v) ((v)[0] + (v)[1] + ((v)[2] + (v)[3]))

typedef struct norm_job {
    float *y, *mean, *rstd;
    const float *x, *g, *b;
    int64_t N;
    double eps;
    int64_t C, HxW, G; /* group norm */
} norm_job;

/* The row kernels, instantiated for the baseline ISA and for AVX2 (one 4-double register
 * instead of two halves): the same operations in the same order, so the same bits on
 * every tier (-ffp-contract=off under -std=c11: no fused multiply-adds). Before session 46
 * only the baseline instance existed: layer_norm of 1000 x 1000 at 2.5x upstream's time. */
#define NORM_ROWS(SFX, ATTR) \
/* Mean and biased variance of n floats, summed in double (the reference's formulas). */                              \
ATTR static void row_stats##SFX(const float *xr, int64_t N, double *mu_o, double *var_o) {                            \
    /* four accumulators: with two, each pass waited on the adds' latency (group norm 1.5x \
     * upstream's time) */                                                                                            \
    nr_v4d a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                                                                    \
    int64_t j = 0;                                                                                                    \
    for (; j + 16 <= N; j += 16) {                                                                                    \
        a0 += ld4d##SFX(xr + j); a1 += ld4d##SFX(xr + j + 4); a2 += ld4d##SFX(xr + j + 8); a3 += ld4d##SFX(xr + j + 12);                  \
    }                                                                                                                 \
    for (; j + 8 <= N; j += 8) { a0 += ld4d##SFX(xr + j); a1 += ld4d##SFX(xr + j + 4); }                                        \
    nr_v4d a = (a0 + a2) + (a1 + a3);                                                                                 \
    double s = hsum4(a);                                                                                              \
    for (; j < N; j++) s += xr[j];                                                                                    \
    double mu = N > 0 ? s / (double)N : 0.0;                                                                          \
    nr_v4d v0 = {0}, v1 = {0}, v2 = {0}, v3 = {0};                                                                    \
    j = 0;                                                                                                            \
    for (; j + 16 <= N; j += 16) {                                                                                    \
        nr_v4d d0 = ld4d##SFX(xr + j) - mu, d1 = ld4d##SFX(xr + j + 4) - mu, d2 = ld4d##SFX(xr + j + 8) - mu,                        \
               d3 = ld4d##SFX(xr + j + 12) - mu;                                                                           \
        v0 += d0 * d0;                                                                                                \
        v1 += d1 * d1;                                                                                                \
        v2 += d2 * d2;                                                                                                \
        v3 += d3 * d3;                                                                                                \
    }                                                                                                                 \
    for (; j + 8 <= N; j += 8) {                                                                                      \
        nr_v4d d0 = ld4d##SFX(xr + j) - mu, d1 = ld4d##SFX(xr + j + 4) - mu;                                                    \
        v0 += d0 * d0;                                                                                                \
        v1 += d1 * d1;                                                                                                \
    }                                                                                                                 \
    nr_v4d vv = (v0 + v2) + (v1 + v3);                                                                                \
    double v = hsum4(vv);                                                                                             \
    for (; j < N; j++) { double d = xr[j] - mu; v += d * d; }                                                         \
    *mu_o = mu;                                                                                                       \
    *var_o = N > 0 ? v / (double)N : 0.0;                                                                             \
}                                                                                                                     \
                                                                                                                      \
ATTR static void gn_worker##SFX(void *ctx, int64_t i0, int64_t i1) {                                                  \
    const norm_job *J = ctx;                                                                                          \
    int64_t D = J->C / J->G, len = D * J->HxW;                                                                        \
    for (int64_t i = i0; i < i1; i++) {                                                                               \
        int64_t n = i / J->G, g = i % J->G;                                                                           \
        const float *xg = J->x + (n * J->C + g * D) * J->HxW;                                                         \
        float *yg = J->y + (n * J->C + g * D) * J->HxW;                                                               \
        double mu, var;                                                                                               \
        row_stats##SFX(xg, len, &mu, &var);                                                                           \
        float var_t = (float)var, mu_t = (float)mu;                                                                   \
        /* an empty group (len 0): upstream's variance is 0 / 0, its rstd NaN */                                      \
        float rs = len > 0 ? (float)(1.0 / sqrt((double)(var_t < 0 ? 0.0f : var_t) + J->eps)) : NAN; /* NaN stays */  \
        for (int64_t d = 0; d < D; d++) {                                                                             \
            int64_t c = g * D + d;                                                                                    \
            float scale = J->g ? rs * J->g[c] : rs;                                                                   \
            float bias = -scale * mu_t + (J->b ? J->b[c] : 0.0f);                                                     \
            const float *xs = xg + d * J->HxW;                                                                        \
            float *ys = yg + d * J->HxW;                                                                              \
            const int64_t hw = J->HxW;                                                                                \
            for (int64_t j = 0; j < hw; j++) ys[j] = xs[j] * scale + bias;                                            \
        }                                                                                                             \
        J->mean[i] = mu_t;                                                                                            \
        J->rstd[i] = rs;                                                                                              \
    }                                                                                                                 \
}                                                                                                                     \
                                                                                                                      \
ATTR static void ln_worker##SFX(void *ctx, int64_t m0, int64_t m1) {                                                  \
    const norm_job *J = ctx;                                                                                          \
    const int64_t N = J->N;                                                                                           \
    for (int64_t m = m0; m < m1; m++) {                                                                               \
        const float *xr = J->x + m * N;                                                                               \
        float *yr = J->y + m * N;                                                                                     \
        double mu, v;                                                                                                 \
        row_stats##SFX(xr, N, &mu, &v);                                                                               \
        float var = (float)v;                                                                                         \
        float mu_t = (float)mu;                                                                                       \
        float rs = (float)(1.0 / sqrt((double)(var < 0 ? 0.0f : var) + J->eps)); /* std::max: NaN stays */            \
        float bias = -rs * mu_t;                                                                                      \
        /* the affine pass per weight / bias case with the pointers in locals, so it runs on                          \
         * vectors (one load of J->g per element, a store possibly aliasing J, kept it scalar);                       \
         * the same expression in each: (x rs + bias) g + b, g = 1 and b = 0 when absent */                           \
        const float *gp = J->g, *bp = J->b;                                                                           \
        if (gp && bp) for (int64_t j = 0; j < N; j++) yr[j] = (xr[j] * rs + bias) * gp[j] + bp[j];                    \
        else if (gp) for (int64_t j = 0; j < N; j++) yr[j] = (xr[j] * rs + bias) * gp[j] + 0.0f;                      \
        else if (bp) for (int64_t j = 0; j < N; j++) yr[j] = (xr[j] * rs + bias) * 1.0f + bp[j];                      \
        else for (int64_t j = 0; j < N; j++) yr[j] = (xr[j] * rs + bias) * 1.0f + 0.0f;                               \
        if (J->mean) J->mean[m] = mu_t;                                                                               \
        if (J->rstd) J->rstd[m] = rs;                                                                                 \
    }                                                                                                                 \
}                                                                                                                     \
                                                                                                                      \
ATTR static void rms_worker##SFX(void *ctx, int64_t m0, int64_t m1) {                                                 \
    const norm_job *J = ctx;                                                                                          \
    const int64_t N = J->N;                                                                                           \
    for (int64_t m = m0; m < m1; m++) {                                                                               \
        const float *xr = J->x + m * N;                                                                               \
        float *yr = J->y + m * N;                                                                                     \
        nr_v4d a0 = {0}, a1 = {0};                                                                                    \
        int64_t j = 0;                                                                                                \
        for (; j + 8 <= N; j += 8) {                                                                                  \
            nr_v4f x0 = *(const nr_v4fu *)(xr + j), x1 = *(const nr_v4fu *)(xr + j + 4);                              \
            a0 += __builtin_convertvector(x0 * x0, nr_v4d);                                                           \
            a1 += __builtin_convertvector(x1 * x1, nr_v4d);                                                           \
        }                                                                                                             \
        nr_v4d a = a0 + a1;                                                                                           \
        double s = hsum4(a);                                                                                          \
        for (; j < N; j++) s += (double)(xr[j] * xr[j]);                                                              \
        float ms = (float)(s / (double)N);                                                                            \
        float r = 1.0f / (float)sqrt((double)(ms + (float)J->eps));                                                   \
        const float *gp = J->g;                                                                                       \
        if (gp) for (j = 0; j < N; j++) yr[j] = xr[j] * r * gp[j];                                                    \
        else for (j = 0; j < N; j++) yr[j] = xr[j] * r;                                                               \
        J->rstd[m] = r;                                                                                               \
    }                                                                                                                 \
}                                                                                                                     \

#pragma GCC push_options
#pragma GCC optimize("O3")
NORM_ROWS(_base, )
#if defined(__x86_64__)
NORM_ROWS(_avx2, __attribute__((target("avx2"))))
#endif
#pragma GCC pop_options
#undef NORM_ROWS

static void run_rows(tn_parallel_fn fn, norm_job *j, int64_t M) {
    int64_t grain = 16384 / (j->N > 0 ? j->N : 1);
    tn_parallel_for(M, grain < 1 ? 1 : grain, fn, j);
}

#if defined(__x86_64__)
#define NORM_PICK(name) (tn_cpu_isa() >= TN_ISA_AVX2 ? name##_avx2 : name##_base)
#else
#define NORM_PICK(name) name##_base
#endif

void f32_layer_norm_rows(float *y, float *mean, float *rstd, const float *x, const float *gamma, const float *beta,
                         int64_t M, int64_t N, double eps) {
    norm_job j = {y, mean, rstd, x, gamma, beta, N, eps};
    run_rows(NORM_PICK(ln_worker), &j, M);
}

void f32_rms_norm_rows(float *y, float *rstd, const float *x, const float *w, int64_t M, int64_t N, double eps) {
    norm_job j = {y, NULL, rstd, x, w, NULL, N, eps};
    run_rows(NORM_PICK(rms_worker), &j, M);
}

void f32_group_norm_rows(float *y, float *mean, float *rstd, const float *x, const float *gamma, const float *beta,
                         int64_t N, int64_t C, int64_t HxW, int64_t G, double eps) {
    norm_job j = {y, mean, rstd, x, gamma, beta, C / G * HxW, eps, C, HxW, G};
    run_rows(NORM_PICK(gn_worker), &j, N * G);
}
