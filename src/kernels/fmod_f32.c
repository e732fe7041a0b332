/* fmod_f32.c — float32 fmod, remainder and floor division without a libm call per element,
 * the AVX2 tier's loops (kernels/fmod_f32.h).
 *
 * In double, q = trunc(x / y) and r = x - q * y are exact while |q| < 2^29 (q * y needs at
 * most 29 + 24 bits; r is a multiple of y's last place below 2|y|). The double quotient
 * can only round up across an integer, never down, so q is at most one too large in
 * magnitude: then r has the wrong sign and r + copysign(|y|, x) is exact and right. A zero
 * takes x's sign, as fmodf's. Elements outside that (|x / y| >= 2^29, a zero divisor, an
 * infinity or a NaN) are redone by fmodf in a second pass over the block, so every
 * element is fmodf's exact result (the scalar reference, glibc's fmodf: 20-40 ns an
 * element, 27-40x upstream's vectorised fmod in bench/opspeed.py). Floor division is c10's
 * div_floor_floating built on that fmod, step by step as the scalar row (the same bits;
 * before, 9.7x upstream at 1e6 elements). */
#include "kernels/fmod_f32.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)

enum { BLOCK = 256 };

#pragma GCC push_options
#pragma GCC optimize("O3", "no-trapping-math")
/* fast result of one element; OK = 0 when it needs fmodf. Only the quotient and r are in
 * double; r is a float (below |y| in magnitude, on y's grid), so the sign fix and the
 * checks run on float lanes. |x| < 2^28 |y| (rounded in float) keeps |q| < 2^29. */
#define FMOD_FAST(xv, yv, OUT, OK)                                                    \
    do {                                                                              \
        const float xf = (xv), yf = (yv);                                             \
        const double xd = xf, yd = yf;                                                \
        float r = (float)(xd - trunc(xd / yd) * yd);                                  \
        r = (r != 0 && ((r < 0) != (xf < 0))) ? r + copysignf(fabsf(yf), xf) : r;    \
        OUT = r == 0 ? copysignf(0.0f, xf) : r;                                       \
        OK = fabsf(yf) < INFINITY && fabsf(xf) < 268435456.0f * fabsf(yf);            \
    } while (0)

/* c10's div_floor_floating from a's and b's fmod m: the scalar row's steps */
static inline float floor_div_from_mod(float a, float b, float m) {
    float div = (a - m) / b;
    div = (m != 0 && ((b < 0) != (m < 0))) ? div - 1 : div;
    float fl = floorf(div);
    fl = div - fl > 0.5f ? fl + 1 : fl;
    fl = div == 0 ? copysignf(0.0f, a / b) : fl;
    return b == 0 ? a / b : fl;
}

/* Per block: the fast results into t (reads only), then one pass that reads x and y and
 * writes o element by element, so o may be x or y (in place). mode: 0 fmod, 1 remainder
 * (the Python-style sign), 2 floor division. */
#define FMOD_BLOCK(NAME, ATTR, XI, YI)                                                \
    ATTR static void NAME(float *o, const float *x, const float *y, int64_t n, int mode) { \
        float t[BLOCK];                                                               \
        int okv[BLOCK];                                                               \
        for (int64_t b = 0; b < n; b += BLOCK) {                                      \
            const int64_t e = b + BLOCK < n ? b + BLOCK : n;                          \
            int bad = 0;                                                              \
            for (int64_t k = b; k < e; k++) {                                         \
                FMOD_FAST(x[XI], y[YI], t[k - b], okv[k - b]);                        \
                bad |= !okv[k - b];                                                   \
            }                                                                         \
            if (bad)                                                                  \
                for (int64_t k = b; k < e; k++)                                       \
                    if (!okv[k - b]) t[k - b] = fmodf(x[XI], y[YI]);                  \
            if (mode == 1) { /* into t first: o may alias y, which kept this scalar */  \
                for (int64_t k = b; k < e; k++) {                                     \
                    const float m = t[k - b], d = y[YI];                              \
                    t[k - b] = (m != 0 && ((d < 0) != (m < 0))) ? m + d : m;          \
                }                                                                     \
                memcpy(o + b, t, (size_t)(e - b) * sizeof(float));                    \
            } else if (mode == 2) {                                                   \
                for (int64_t k = b; k < e; k++) o[k] = floor_div_from_mod(x[XI], y[YI], t[k - b]); \
            } else {                                                                  \
                for (int64_t k = b; k < e; k++) o[k] = t[k - b];                      \
            }                                                                         \
        }                                                                             \
    }
#define AVX2 __attribute__((target("avx2")))
FMOD_BLOCK(fmod_vv, AVX2, k, k)
FMOD_BLOCK(fmod_vs, AVX2, k, 0)
FMOD_BLOCK(fmod_sv, AVX2, 0, k)
#pragma GCC pop_options

static tn_loop_fn (*fmod_ref)[TN_DTYPE_COUNT];

/* a run of float32 operands: contiguous or broadcast (stride 0), element-aligned; else the
 * reference (both broadcast: one value, nothing to vectorise) */
static void fmod_loop(char **d, const int64_t *s, int64_t n, void *ctx, int mode) {
    const bool aligned = ((((uintptr_t)d[0]) | ((uintptr_t)d[1]) | ((uintptr_t)d[2])) & 3) == 0;
    const int sa = s[1] == 4 ? 1 : s[1] == 0 ? 0 : -1, sb = s[2] == 4 ? 1 : s[2] == 0 ? 0 : -1;
    if (s[0] != 4 || !aligned || sa < 0 || sb < 0 || (sa | sb) == 0) {
        fmod_ref[mode == 2 ? TN_EW_div_floor : mode == 1 ? TN_EW_remainder : TN_EW_fmod][TN_DTYPE_FLOAT32](d, s, n, ctx);
        return;
    }
    float *o = (float *)d[0];
    const float *x = (const float *)d[1], *y = (const float *)d[2];
    if (sa && sb) fmod_vv(o, x, y, n, mode);
    else if (sa) fmod_vs(o, x, y, n, mode);
    else fmod_sv(o, x, y, n, mode);
}
static void f32_fmod__avx2(char **d, const int64_t *s, int64_t n, void *ctx) { fmod_loop(d, s, n, ctx, 0); }
static void f32_remainder__avx2(char **d, const int64_t *s, int64_t n, void *ctx) { fmod_loop(d, s, n, ctx, 1); }
static void f32_div_floor__avx2(char **d, const int64_t *s, int64_t n, void *ctx) { fmod_loop(d, s, n, ctx, 2); }

void tn_ew_register_fmod_avx2(tn_loop_fn (*t)[TN_DTYPE_COUNT], tn_loop_fn (*ref)[TN_DTYPE_COUNT]) {
    fmod_ref = ref;
    t[TN_EW_fmod][TN_DTYPE_FLOAT32] = f32_fmod__avx2;
    t[TN_EW_remainder][TN_DTYPE_FLOAT32] = f32_remainder__avx2;
    t[TN_EW_div_floor][TN_DTYPE_FLOAT32] = f32_div_floor__avx2;
}
#else
void tn_ew_register_fmod_avx2(tn_loop_fn (*t)[TN_DTYPE_COUNT], tn_loop_fn (*ref)[TN_DTYPE_COUNT]) { (void)t; (void)ref; }
#endif
