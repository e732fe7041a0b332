/* loss.c — the pointwise losses' elementwise terms (kernels/loss.h): plain loops written as
 * selects between two already-computed values so the compiler vectorises them, compiled
 * twice (baseline ISA and AVX2), the tier chosen by tn_cpu_isa(). Only exact IEEE
 * operations (sub, abs, mul, div, compare), so every tier gives the same bits. Binary cross
 * entropy's term calls libm's logs per element, as upstream's scalar kernel does. */
#include "kernels/loss.h"

#include <math.h>

#include "kernels/cpu_features.h"

/* One loop per (kind, type). The branch-free select keeps NaN: a NaN z fails `z < p`, takes
 * the second arm, which is NaN too (upstream's blend takes the first; both are NaN). */
#define LOSS_LOOPS(T, ABS, SFX, ATTR)                                                                          \
    ATTR static void loss_mse_##SFX(T *restrict o, const T *restrict a, const T *restrict b, int64_t n) {     \
        for (int64_t i = 0; i < n; i++) { T d = a[i] - b[i]; o[i] = d * d; }                                  \
    }                                                                                                          \
    ATTR static void loss_l1_##SFX(T *restrict o, const T *restrict a, const T *restrict b, int64_t n) {      \
        for (int64_t i = 0; i < n; i++) o[i] = ABS(a[i] - b[i]);                                              \
    }                                                                                                          \
    ATTR static void loss_smooth_l1_##SFX(T *restrict o, const T *restrict a, const T *restrict b, int64_t n,  \
                                          T p) {                                                               \
        const T half = (T)0.5, hp = half * p;                                                                  \
        for (int64_t i = 0; i < n; i++) {                                                                      \
            T z = ABS(a[i] - b[i]);                                                                            \
            T q = half * z * z / p, l = z - hp;                                                                \
            o[i] = z < p ? q : l;                                                                              \
        }                                                                                                      \
    }                                                                                                          \
    ATTR static void loss_huber_##SFX(T *restrict o, const T *restrict a, const T *restrict b, int64_t n, T p) { \
        const T half = (T)0.5, hp = half * p;                                                                  \
        for (int64_t i = 0; i < n; i++) {                                                                      \
            T z = ABS(a[i] - b[i]);                                                                            \
            T q = half * z * z, l = p * (z - hp);                                                              \
            o[i] = z < p ? q : l;                                                                              \
        }                                                                                                      \
    }                                                                                                          \
    ATTR static void loss_terms_##SFX(tn_loss_kind k, T *o, const T *a, const T *b, int64_t n, T p) {          \
        switch (k) {                                                                                           \
        case TN_LOSS_MSE: loss_mse_##SFX(o, a, b, n); break;                                                   \
        case TN_LOSS_L1: loss_l1_##SFX(o, a, b, n); break;                                                     \
        case TN_LOSS_SMOOTH_L1: loss_smooth_l1_##SFX(o, a, b, n, p); break;                                    \
        case TN_LOSS_HUBER: loss_huber_##SFX(o, a, b, n, p); break;                                            \
        }                                                                                                      \
    }

/* no-trapping-math: lets the compiler compute both arms and select (with trapping math on
 * it branches per element, mispredicted on random signs: 8 ms for 1e6 floats); it changes
 * no result, only what may be assumed about floating-point exception flags */
#pragma GCC push_options
#pragma GCC optimize("O3", "no-trapping-math")
LOSS_LOOPS(float, fabsf, f32_base, )
LOSS_LOOPS(double, fabs, f64_base, )
#if defined(__x86_64__)
/* no fma in the target: ISO C mode (-std=c11) keeps contraction off anyway, and the
 * expressions above have no multiply-add to fuse that upstream fuses */
#define AVX2 __attribute__((target("avx2")))
LOSS_LOOPS(float, fabsf, f32_avx2, AVX2)
LOSS_LOOPS(double, fabs, f64_avx2, AVX2)
#endif
#pragma GCC pop_options

void tn_loss_terms_f32(tn_loss_kind kind, float *out, const float *a, const float *b, int64_t n, float p) {
#if defined(__x86_64__)
    if (tn_cpu_isa() >= TN_ISA_AVX2) { loss_terms_f32_avx2(kind, out, a, b, n, p); return; }
#endif
    loss_terms_f32_base(kind, out, a, b, n, p);
}

void tn_loss_terms_f64(tn_loss_kind kind, double *out, const double *a, const double *b, int64_t n, double p) {
#if defined(__x86_64__)
    if (tn_cpu_isa() >= TN_ISA_AVX2) { loss_terms_f64_avx2(kind, out, a, b, n, p); return; }
#endif
    loss_terms_f64_base(kind, out, a, b, n, p);
}

/* Not vectorised: upstream's kernel is scalar and calls libm, so these give its bits. The
 * comparisons are written so that NaN fails them, as upstream's TORCH_CHECKs do. */
#define BCE_LOOP(T, LOG, LOG1P, SFX)                                                                           \
    int64_t tn_loss_bce_##SFX(T *out, const T *x, const T *t, const T *w, int64_t n) {                        \
        const T lo = (T)-100, one = (T)1;                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                                      \
            T xi = x[i], ti = t[i];                                                                            \
            if (!(xi >= 0 && xi <= one) || !(ti >= 0 && ti <= one)) return i;                                 \
            T l1 = LOG1P(-xi), l = LOG(xi);                                                                    \
            if (l1 < lo) l1 = lo;                                                                              \
            if (l < lo) l = lo;                                                                                \
            T v = (ti - one) * l1 - ti * l;                                                                    \
            out[i] = w ? v * w[i] : v;                                                                         \
        }                                                                                                      \
        return n;                                                                                              \
    }
BCE_LOOP(float, logf, log1pf, f32)
BCE_LOOP(double, log, log1p, f64)
