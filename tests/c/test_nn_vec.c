/* test_nn_vec.c — the vectorised float32 CNN kernels (kernels/nn_vec.h) against their
 * scalar references, on every ISA tier the host can run: max pool (values and indices,
 * bit for bit, NaNs and ties included, the 2x2 fast shapes and the general fallback),
 * im2col / col2im (bit for bit, padded, strided, dilated, asymmetric 'same' padding,
 * staged and unstaged planes), batch-norm apply and input gradient (bit for bit given the
 * same statistics), statistics and parameter gradients (double sums in another order:
 * relative 1e-6). Tails: sizes around the 8-lane vector and the 4-float rows. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_features.h"
#include "kernels/nn.h"
#include "kernels/nn_backward.h"
#include "kernels/nn_vec.h"
#include "tn_test.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static float *frand(int64_t n) {
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++) p[i] = rnd();
    return p;
}

static bool same_bits(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

static bool close_rel(const float *a, const float *b, int64_t n, double rel) {
    for (int64_t i = 0; i < n; i++)
        if (fabs((double)a[i] - (double)b[i]) > rel * (fabs((double)b[i]) + 1e-30) + 1e-12) return false;
    return true;
}

static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
    int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = num / s + 1;
    if (ceil_mode && (o - 1) * s >= in + p) o--;
    return o;
}

static void max_pool_case(const tn_nn_vec *v, const char *tier, int64_t P, int64_t H, int64_t W, int64_t k, int64_t s,
                          int64_t p, bool ceil_mode) {
    int64_t oh = pool_out(H, k, s, p, 1, ceil_mode), ow = pool_out(W, k, s, p, 1, ceil_mode), n = P * oh * ow;
    float *x = frand(P * H * W), *y0 = malloc(sizeof(float) * (size_t)n), *y1 = malloc(sizeof(float) * (size_t)n);
    int64_t *i0 = malloc(sizeof(int64_t) * (size_t)n), *i1 = malloc(sizeof(int64_t) * (size_t)n);
    /* ties, NaNs (one window with two: the last wins) and infinities */
    for (int64_t i = 0; i + 1 < P * H * W; i += 7) x[i + 1] = x[i];
    if (P * H * W > 10) { x[3] = NAN; x[4] = NAN; x[9] = -INFINITY; x[P * H * W - 1] = INFINITY; }
    f32_max_pool2d__scalar(y0, i0, x, P, H, W, oh, ow, k, k, s, s, p, p, 1, 1);
    v->max_pool2d(y1, i1, x, P, H, W, oh, ow, k, k, s, s, p, p, 1, 1);
    TN_CHECK(same_bits(y0, y1, sizeof(float) * (size_t)n) && same_bits(i0, i1, sizeof(int64_t) * (size_t)n),
             "max_pool2d %s P=%lld H=%lld W=%lld k=%lld s=%lld p=%lld ceil=%d differs from the reference", tier,
             (long long)P, (long long)H, (long long)W, (long long)k, (long long)s, (long long)p, ceil_mode);
    v->max_pool2d(y1, NULL, x, P, H, W, oh, ow, k, k, s, s, p, p, 1, 1);
    TN_CHECK(same_bits(y0, y1, sizeof(float) * (size_t)n), "max_pool2d %s without indices differs", tier);
    free(x); free(y0); free(y1); free(i0); free(i1);
}

/* im2col into a batch block (ld > oh*ow, the neighbours must stay untouched) and col2im
 * onto nonzero images, against the references. */
static void columns_case(const tn_nn_vec *v, const char *tier, int64_t C, int64_t H, int64_t W, int64_t kh, int64_t kw,
                         int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t extra_w) {
    /* extra_w widens the output as an asymmetric right padding would (conv's 'same') */
    int64_t oh = (H + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (W + 2 * pw - dw * (kw - 1) - 1 + extra_w) / sw + 1;
    int64_t P = oh * ow, ld = 3 * P + 5, K = C * kh * kw, n = K * ld;
    float *x = frand(C * H * W), *c0 = frand(n), *c1 = malloc(sizeof(float) * (size_t)n);
    memcpy(c1, c0, sizeof(float) * (size_t)n);
    f32_im2col_ld__scalar(c0 + P, ld, x, C, H, W, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw);
    v->im2col_ld(c1 + P, ld, x, C, H, W, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw);
    TN_CHECK(same_bits(c0, c1, sizeof(float) * (size_t)n), "im2col_ld %s C=%lld H=%lld W=%lld k=%lldx%lld differs", tier,
             (long long)C, (long long)H, (long long)W, (long long)kh, (long long)kw);
    float *g0 = frand(C * H * W), *g1 = malloc(sizeof(float) * (size_t)(C * H * W));
    memcpy(g1, g0, sizeof(float) * (size_t)(C * H * W));
    f32_col2im__scalar(g0, c0 + P, ld, C, H, W, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw);
    v->col2im(g1, c0 + P, ld, C, H, W, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw);
    TN_CHECK(same_bits(g0, g1, sizeof(float) * (size_t)(C * H * W)), "col2im %s C=%lld H=%lld W=%lld k=%lldx%lld differs",
             tier, (long long)C, (long long)H, (long long)W, (long long)kh, (long long)kw);
    free(x); free(c0); free(c1); free(g0); free(g1);
}

static void batch_norm_case(const tn_nn_vec *v, const char *tier, int64_t N, int64_t C, int64_t S) {
    int64_t n = N * C * S;
    float *x = frand(n), *gy = frand(n), *w = frand(C), *beta = frand(C);
    for (int64_t i = 0; i < n; i++) x[i] = x[i] * 3.0f + 0.5f; /* a mean away from 0 */
    float m0[64], v0[64], m1[64], v1[64], alpha[64];
    f32_batch_stats__scalar(m0, v0, x, N, C, S, 0, C);
    v->batch_stats(m1, v1, x, N, C, S, 0, C);
    TN_CHECK(close_rel(m1, m0, C, 1e-6) && close_rel(v1, v0, C, 1e-6), "batch_stats %s N=%lld C=%lld S=%lld", tier,
             (long long)N, (long long)C, (long long)S);
    for (int64_t c = 0; c < C; c++) { v0[c] = 1.0f / sqrtf(v0[c] + 1e-5f); alpha[c] = v0[c] * w[c]; }
    float *y0 = malloc(sizeof(float) * (size_t)n), *y1 = malloc(sizeof(float) * (size_t)n);
    f32_channel_affine__scalar(y0, x, alpha, beta, N, C, S);
    v->channel_affine(y1, x, alpha, beta, N, C, S);
    TN_CHECK(same_bits(y0, y1, sizeof(float) * (size_t)n), "channel_affine %s differs", tier);
    for (int train = 0; train < 2; train++) {
        float gw0[64], gb0[64], gw1[64], gb1[64];
        f32_batch_norm_backward__scalar(y0, gw0, gb0, gy, x, w, m0, v0, N, C, S, train, 0, C);
        /* a channel range, as the op layer's pool chunks call it */
        v->batch_norm_backward(y1, gw1, gb1, gy, x, w, m0, v0, N, C, S, train, 0, C / 2);
        v->batch_norm_backward(y1, gw1, gb1, gy, x, w, m0, v0, N, C, S, train, C / 2, C);
        TN_CHECK(close_rel(gw1, gw0, C, 1e-6) && close_rel(gb1, gb0, C, 1e-6), "batch_norm_backward %s params", tier);
        /* gx reads the sums, so it is compared with a tolerance too; eval mode is exact */
        TN_CHECK(train ? close_rel(y1, y0, n, 1e-5) : same_bits(y0, y1, sizeof(float) * (size_t)n),
                 "batch_norm_backward %s gx (train %d)", tier, train);
    }
    free(x); free(gy); free(w); free(beta); free(y0); free(y1);
}

int main(void) {
    tn_isa top = tn_cpu_isa();
    for (int isa = 0; isa <= (int)top; isa++) {
        const tn_nn_vec *v = tn_nn_vec_for((tn_isa)isa);
        const char *tier = tn_isa_name((tn_isa)isa);
        /* 2x2 stride 2: the flat shapes (W = 2, 4, 8 with even H), wide rows with tails,
         * odd sizes (a row and a column left out), ceil-mode partial windows (fallback) */
        static const int64_t pools[][3] = {{64, 8, 8}, {64, 4, 4}, {5, 2, 2}, {3, 6, 4}, {7, 2, 8}, {3, 28, 28},
                                           {2, 14, 14}, {2, 9, 7}, {1, 4, 40}, {2, 5, 33}, {1, 1, 1}, {3, 2, 18}};
        for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++)
            for (int ceil_mode = 0; ceil_mode < 2; ceil_mode++)
                max_pool_case(v, tier, pools[i][0], pools[i][1], pools[i][2], 2, 2, 0, ceil_mode);
        max_pool_case(v, tier, 3, 9, 11, 3, 2, 1, false); /* the general path */
        /* C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, extra right padding */
        static const int64_t cols[][12] = {
            {1, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 0}, {8, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 0}, {3, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 0},
            {2, 7, 9, 3, 3, 1, 1, 0, 0, 1, 1, 0}, {2, 9, 11, 3, 3, 2, 1, 1, 1, 1, 2, 0}, {4, 8, 8, 2, 3, 2, 3, 1, 2, 2, 1, 0},
            {1, 1, 33, 1, 4, 1, 1, 0, 1, 1, 1, 1}, {3, 12, 13, 3, 3, 2, 2, 2, 2, 2, 2, 0}, {2, 5, 6, 1, 1, 1, 1, 0, 0, 1, 1, 0},
            {1, 70, 70, 3, 3, 1, 1, 1, 1, 1, 1, 0}, /* too large to stage: the reference */
        };
        for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
            const int64_t *c = cols[i];
            columns_case(v, tier, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]);
        }
        static const int64_t bns[][3] = {{64, 8, 64}, {5, 3, 21}, {4, 6, 1}, {3, 2, 8}, {2, 5, 7}};
        for (size_t i = 0; i < sizeof bns / sizeof bns[0]; i++) batch_norm_case(v, tier, bns[i][0], bns[i][1], bns[i][2]);
    }
    return tn_test_summary();
}
