/* test_nn_backward.c — the scatter kernels of kernels/nn_backward.h are the adjoints of
 * their forward gathers: <forward(x), g> == <x, backward(g)> for random x and g, over
 * strides, paddings, dilations, ceil-mode tails and both element types (im2col/col2im,
 * pooling, padding, upsampling, unfold); the vectorised float loops (softmax gradient rows,
 * silu_backward, threshold_backward) agree with the scalar references. Values against upstream are compared by the
 * Python operator harness (tests/optest/cases.py, bwd_* cases). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_features.h"
#include "kernels/elementwise_backward.h"
#include "kernels/nn.h"
#include "kernels/nn_backward.h"
#include "tn_test.h"

static uint64_t rng_state = 88172645463325252ull;
static double rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

#define DEFINE_HELPERS(T, S)                                                             \
    static T *S##_rand(int64_t n) {                                                      \
        T *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(T));                              \
        for (int64_t i = 0; i < n; i++) p[i] = (T)rnd();                                 \
        return p;                                                                        \
    }                                                                                    \
    static T *S##_zeros(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(T)); } \
    static double S##_dot(const T *a, const T *b, int64_t n) {                           \
        double s = 0;                                                                    \
        for (int64_t i = 0; i < n; i++) s += (double)a[i] * (double)b[i];                \
        return s;                                                                        \
    }
DEFINE_HELPERS(float, f32)
DEFINE_HELPERS(double, f64)

static void check_adjoint(const char *what, double lhs, double rhs, double tol) {
    double scale = fabs(lhs) + fabs(rhs) + 1.0;
    TN_CHECK(fabs(lhs - rhs) <= tol * scale, "%s: <Ax, g> = %.12g but <x, A'g> = %.12g", what, lhs, rhs);
}

/* One geometry of each family for element type T (prefix S, tolerance tol). */
#define DEFINE_ADJOINT_TESTS(T, S, tol)                                                                          \
    static void S##_conv(int64_t C, int64_t H, int64_t W, int64_t kh, int64_t kw, int64_t sh, int64_t sw,         \
                         int64_t ph, int64_t pw, int64_t dh, int64_t dw) {                                       \
        int64_t oh = (H + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (W + 2 * pw - dw * (kw - 1) - 1) / sw + 1;  \
        int64_t nc = C * kh * kw * oh * ow;                                                                      \
        T *x = S##_rand(C * H * W), *g = S##_rand(nc), *col = S##_zeros(nc), *gx = S##_zeros(C * H * W);         \
        S##_im2col_ld__scalar(col, oh * ow, x, C, H, W, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw);                 \
        S##_col2im__scalar(gx, g, oh * ow, C, H, W, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw);                     \
        check_adjoint(#S " col2im", S##_dot(col, g, nc), S##_dot(x, gx, C * H * W), tol);                        \
        /* the strided forms: image block 1 of a [K, 3*oh*ow] batch matches the plain ones */                   \
        int64_t K = C * kh * kw, P = oh * ow;                                                                    \
        T *big = S##_zeros(3 * nc), *gx2 = S##_zeros(C * H * W);                                                 \
        S##_im2col_ld__scalar(big + P, 3 * P, x, C, H, W, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw);               \
        bool same = true;                                                                                        \
        for (int64_t r = 0; r < K; r++)                                                                          \
            for (int64_t j = 0; j < P; j++) same &= big[r * 3 * P + P + j] == col[r * P + j];                    \
        TN_CHECK(same, #S " im2col_ld block of a batch differs from the dense one");                             \
        for (int64_t r = 0; r < K; r++) memcpy(big + r * 3 * P + P, g + r * P, (size_t)P * sizeof(T));          \
        S##_col2im__scalar(gx2, big + P, 3 * P, C, H, W, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw);                \
        TN_CHECK(memcmp(gx, gx2, (size_t)(C * H * W) * sizeof(T)) == 0, #S " strided col2im differs");          \
        free(x); free(g); free(col); free(gx); free(big); free(gx2);                                             \
    }                                                                                                            \
    static void S##_pools(int64_t P, int64_t H, int64_t W, int64_t k, int64_t s, int64_t p, int64_t oh,           \
                          int64_t ow) {                                                                          \
        int64_t n = P * H * W, m = P * oh * ow;                                                                  \
        T *x = S##_rand(n), *g = S##_rand(m), *y = S##_zeros(m), *gx = S##_zeros(n);                             \
        for (int cip = 0; cip < 2; cip++)                                                                        \
            for (int64_t div = 0; div < 3; div += 2) {                                                           \
                S##_avg_pool2d__scalar(y, x, P, H, W, oh, ow, k, k, s, s, p, p, cip, div);                       \
                memset(gx, 0, (size_t)n * sizeof(T));                                                            \
                S##_avg_pool2d_backward__scalar(gx, g, P, H, W, oh, ow, k, k, s, s, p, p, cip, div);             \
                check_adjoint(#S " avg_pool2d", S##_dot(y, g, m), S##_dot(x, gx, n), tol);                       \
            }                                                                                                    \
        int64_t *idx = malloc((size_t)m * sizeof(int64_t));                                                      \
        S##_max_pool2d__scalar(y, idx, x, P, H, W, oh, ow, k, k, s, s, p, p, 1, 1);                              \
        memset(gx, 0, (size_t)n * sizeof(T));                                                                    \
        S##_max_pool2d_backward__scalar(gx, g, idx, P, H * W, oh * ow);                                          \
        check_adjoint(#S " max_pool2d", S##_dot(y, g, m), S##_dot(x, gx, n), tol);                               \
        S##_adaptive_avg_pool2d__scalar(y, x, P, H, W, oh, ow);                                                  \
        memset(gx, 0, (size_t)n * sizeof(T));                                                                    \
        S##_adaptive_avg_pool2d_backward__scalar(gx, g, P, H, W, oh, ow);                                        \
        check_adjoint(#S " adaptive_avg_pool2d", S##_dot(y, g, m), S##_dot(x, gx, n), tol);                      \
        for (int mode = 0; mode < 2; mode++)                                                                     \
            for (int align = 0; align < 2; align++) {                                                            \
                double rh = align && oh > 1 ? (double)(H - 1) / (double)(oh - 1) : (double)H / (double)oh;       \
                double rw = align && ow > 1 ? (double)(W - 1) / (double)(ow - 1) : (double)W / (double)ow;       \
                if (mode == 0 || sizeof(T) == 4) { rh = (float)rh; rw = (float)rw; }                             \
                S##_upsample2d__scalar(y, x, P, H, W, oh, ow, rh, rw, mode, align);                              \
                memset(gx, 0, (size_t)n * sizeof(T));                                                            \
                S##_upsample2d_backward__scalar(gx, g, P, H, W, oh, ow, rh, rw, mode, align);                    \
                check_adjoint(#S " upsample2d", S##_dot(y, g, m), S##_dot(x, gx, n), tol);                       \
            }                                                                                                    \
        free(x); free(g); free(y); free(gx); free(idx);                                                          \
    }                                                                                                            \
    static void S##_pads(int64_t P, int64_t H, int64_t W, int64_t pt, int64_t pb, int64_t pl, int64_t pr) {       \
        int64_t n = P * H * W, m = P * (H + pt + pb) * (W + pl + pr);                                            \
        T *x = S##_rand(n), *g = S##_rand(m), *y = S##_zeros(m), *gx = S##_zeros(n);                             \
        for (int reflect = 0; reflect < 2; reflect++) {                                                          \
            S##_pad2d__scalar(y, x, P, H, W, pt, pb, pl, pr, reflect);                                           \
            memset(gx, 0, (size_t)n * sizeof(T));                                                                \
            S##_pad2d_backward__scalar(gx, g, P, H, W, pt, pb, pl, pr, reflect);                                 \
            check_adjoint(#S " pad2d", S##_dot(y, g, m), S##_dot(x, gx, n), tol);                                \
        }                                                                                                        \
        free(x); free(g); free(y); free(gx);                                                                     \
    }                                                                                                            \
    static void S##_unfold(int64_t outer, int64_t D, int64_t inner, int64_t size, int64_t step) {                \
        int64_t nw = (D - size) / step + 1, n = outer * D * inner, m = outer * nw * inner * size;                \
        T *x = S##_rand(n), *g = S##_rand(m), *y = S##_zeros(m), *gx = S##_zeros(n);                             \
        for (int64_t o = 0; o < outer; o++)                                                                      \
            for (int64_t w = 0; w < nw; w++)                                                                     \
                for (int64_t i = 0; i < inner; i++)                                                              \
                    for (int64_t k = 0; k < size; k++)                                                           \
                        y[((o * nw + w) * inner + i) * size + k] = x[(o * D + w * step + k) * inner + i];        \
        S##_unfold_backward__scalar(gx, g, outer, D, inner, nw, size, step);                                     \
        check_adjoint(#S " unfold", S##_dot(y, g, m), S##_dot(x, gx, n), tol);                                   \
        free(x); free(g); free(y); free(gx);                                                                     \
    }
DEFINE_ADJOINT_TESTS(float, f32, 1e-5)
DEFINE_ADJOINT_TESTS(double, f64, 1e-12)

/* The vectorised float softmax gradient rows against the scalar reference, every ISA
 * instance, lengths around the 16-lane vector (tails) and long rows. */
static void softmax_rows_match_reference(void) {
    static const int64_t lens[] = {1, 7, 15, 16, 17, 33, 1000};
    void (*const variants[])(float *, const float *, const float *, int64_t, int64_t, bool) = {
        tn_softmax_backward_rows__generic, tn_softmax_backward_rows__avx2, tn_softmax_backward_rows__avx512};
    const tn_cpu_features *f = tn_cpu_features_get();
    bool have[3] = {true, f->avx2 && f->fma && f->f16c, f->avx512f && f->avx512bw && f->avx512vl};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (int is_log = 0; is_log < 2; is_log++) {
            int64_t rows = 3, n = lens[li];
            float *g = f32_rand(rows * n), *y = f32_rand(rows * n), *ref = f32_zeros(rows * n), *got = f32_zeros(rows * n);
            if (is_log)
                for (int64_t i = 0; i < rows * n; i++) y[i] = y[i] * 4.0f - 4.0f; /* log-probabilities */
            f32_softmax_backward__scalar(ref, g, y, rows, n, 1, is_log);
            for (int v = 0; v < 3; v++) {
                if (!have[v]) continue;
                variants[v](got, g, y, rows, n, is_log);
                double err = 0;
                for (int64_t i = 0; i < rows * n; i++) {
                    double d = fabs((double)got[i] - (double)ref[i]) / (1.0 + fabs((double)ref[i]));
                    err = d > err ? d : err;
                }
                TN_CHECK(err < 2e-5, "softmax_backward rows variant %d n=%lld log=%d: err %g", v, (long long)n, is_log, err);
            }
            free(g); free(y); free(ref); free(got);
        }
}

/* The vector silu_backward loops against the scalar reference: contiguous runs with tails,
 * strided operands (which take the scalar path), and the IEEE ends (inf, NaN, |x| near 88). */
static void silu_vector_matches_reference(void) {
    const tn_cpu_features *f = tn_cpu_features_get();
    tn_loop_fn variants[2] = {tn_ewb_silu_f32__avx2, tn_ewb_silu_f32__avx512};
    bool have[2] = {f->avx2 && f->fma && f->f16c, f->avx512f && f->avx512bw && f->avx512vl};
    tn_loop_fn ref = tn_ewb_loop_scalar(TN_EWB_silu, TN_DTYPE_FLOAT32);
    static const float specials[] = {INFINITY, -INFINITY, NAN, 88.0f, -88.0f, 89.0f, -89.0f, 87.5f, -87.5f, 0.0f, -0.0f, 20.0f};
    for (int64_t n = 1; n <= 70; n += 23) {
        float *x = f32_rand(2 * n), *g = f32_rand(2 * n), *want = f32_zeros(2 * n), *got = f32_zeros(2 * n);
        for (int64_t i = 0; i < 2 * n; i++) x[i] *= 6.0f;
        for (size_t i = 0; i < sizeof specials / sizeof specials[0] && (int64_t)i < n; i++) x[i] = specials[i];
        for (int stride = 1; stride <= 2; stride++) {
            int64_t st[3] = {4 * stride, 4 * stride, 4 * stride};
            char *dw[3] = {(char *)want, (char *)g, (char *)x};
            ref(dw, st, n, NULL);
            for (int v = 0; v < 2; v++) {
                if (!have[v]) continue;
                char *dg[3] = {(char *)got, (char *)g, (char *)x};
                variants[v](dg, st, n, NULL);
                bool ok = true;
                for (int64_t i = 0; i < n; i++) {
                    float a = got[i * stride], b = want[i * stride];
                    ok &= (a != a && b != b) || fabsf(a - b) <= 1e-6f * (1.0f + fabsf(b));
                }
                TN_CHECK(ok, "silu_backward vector variant %d n=%lld stride %d differs from the reference", v,
                         (long long)n, stride);
            }
        }
        free(x); free(g); free(want); free(got);
    }
}

/* threshold_backward (relu's gradient): the vector loops give the reference's bits, NaN
 * and signed-zero inputs and the threshold itself included, for tails and strided slices. */
static void threshold_vector_matches_reference(void) {
    const tn_cpu_features *f = tn_cpu_features_get();
    tn_loop_fn variants[2] = {tn_ewb_threshold_f32__avx2, tn_ewb_threshold_f32__avx512};
    bool have[2] = {f->avx2 && f->fma && f->f16c, f->avx512f && f->avx512bw && f->avx512vl};
    tn_loop_fn ref = tn_ewb_loop_scalar(TN_EWB_threshold, TN_DTYPE_FLOAT32);
    static const float specials[] = {NAN, 0.0f, -0.0f, 0.25f, INFINITY, -INFINITY, 0.2500001f};
    tn_loop_ctx ctx = {.d = {0.25}};
    for (int64_t n = 1; n <= 70; n += 23) {
        float *x = f32_rand(2 * n), *g = f32_rand(2 * n), *want = f32_zeros(2 * n), *got = f32_zeros(2 * n);
        for (size_t i = 0; i < sizeof specials / sizeof specials[0] && (int64_t)i < 2 * n; i++) x[i] = specials[i];
        for (int stride = 1; stride <= 2; stride++) {
            int64_t st[3] = {4 * stride, 4 * stride, 4 * stride};
            char *dw[3] = {(char *)want, (char *)g, (char *)x};
            ref(dw, st, n, &ctx);
            for (int v = 0; v < 2; v++) {
                if (!have[v]) continue;
                memset(got, 0xFF, sizeof(float) * (size_t)(2 * n));
                char *dg[3] = {(char *)got, (char *)g, (char *)x};
                variants[v](dg, st, n, &ctx);
                bool ok = true;
                for (int64_t i = 0; i < n; i++) ok &= memcmp(&got[i * stride], &want[i * stride], sizeof(float)) == 0;
                TN_CHECK(ok, "threshold_backward vector variant %d n=%lld stride %d differs from the reference", v,
                         (long long)n, stride);
            }
        }
        free(x); free(g); free(want); free(got);
    }
}

int main(void) {
    softmax_rows_match_reference();
    silu_vector_matches_reference();
    threshold_vector_matches_reference();
    /* C, H, W, kh, kw, stride, padding, dilation: plain, strided, padded, dilated, 1-d */
    static const int64_t convs[][11] = {
        {3, 7, 9, 3, 3, 1, 1, 0, 0, 1, 1}, {2, 9, 11, 3, 3, 2, 1, 1, 1, 1, 2}, {4, 8, 8, 2, 3, 2, 3, 1, 2, 2, 1},
        {1, 1, 33, 1, 4, 1, 2, 0, 3, 1, 1}, {3, 12, 13, 3, 3, 2, 2, 2, 2, 2, 2},
    };
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
        const int64_t *c = convs[i];
        f32_conv(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10]);
        f64_conv(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10]);
    }
    /* planes, H, W, kernel, stride, pad, oh, ow (ceil-mode sized outputs included) */
    f32_pools(3, 9, 11, 3, 2, 1, 5, 6); f64_pools(3, 9, 11, 3, 2, 1, 5, 6);
    f32_pools(2, 8, 8, 2, 2, 0, 4, 4); f64_pools(2, 8, 8, 2, 2, 0, 4, 4);
    f32_pools(2, 7, 5, 3, 1, 1, 7, 5); f64_pools(2, 7, 5, 3, 1, 1, 7, 5);
    f32_pads(3, 5, 7, 1, 4, 2, 3); f64_pads(3, 5, 7, 1, 4, 2, 3);
    f32_pads(2, 1, 12, 0, 0, 3, 2); f64_pads(2, 1, 12, 0, 0, 3, 2);
    f32_unfold(3, 33, 5, 5, 3); f64_unfold(3, 33, 5, 5, 3);
    f32_unfold(1, 8, 1, 2, 2); f64_unfold(1, 8, 1, 2, 2);
    return tn_test_summary();
}
