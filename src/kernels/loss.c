/* loss.c — the pointwise losses' elementwise terms (kernels/loss.h): plain loops written as
 * selects between two already-computed values so the compiler vectorises them, compiled
 * twice (baseline ISA and AVX2), the tier chosen by tn_cpu_isa(). Only exact IEEE
 * operations (sub, abs, mul, div, compare), so every tier gives the same bits. */
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
