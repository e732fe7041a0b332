/* test_optim_fused.c — the fused optimizer kernels: closed-form single steps, the
 * vector/scalar boundary, and independence from how a parameter is split into ranges
 * (threads call the kernels on sub-ranges). Upstream agreement is tested in
 * tests/test_optim.py and the op harness. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/optim_fused.h"
#include "tn_test.h"

#define N 231 /* 28 float vectors of 8 and a 7-element scalar tail */

static float frand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return ((float)((*s >> 8) & 0xffff) / 32768.0f) - 1.0f;
}

static void fill(float *x, int n, unsigned seed, float scale, int positive) {
    for (int i = 0; i < n; i++) {
        float v = frand(&seed) * scale;
        x[i] = positive ? fabsf(v) : v;
    }
}

static tn_adam_consts adam_consts(double step, int adamw, int amsgrad) {
    tn_adam_consts c = {0};
    c.lr = 1e-2, c.beta1 = 0.9, c.beta2 = 0.999, c.weight_decay = 0.05, c.eps = 1e-8;
    c.bias_correction1 = 1 - pow(c.beta1, step);
    c.bias_correction2_sqrt = sqrt(1 - pow(c.beta2, step));
    c.amsgrad = amsgrad, c.adamw = adamw;
    return c;
}

/* One range or many: identical bits (the body/tail split is by global index). */
static void test_split_independence(void) {
    float p0[N], g0[N], m0[N], v0[N], x0[N];
    fill(p0, N, 1, 1, 0), fill(g0, N, 2, 1, 0), fill(m0, N, 3, 0.1f, 0), fill(v0, N, 4, 0.01f, 1), fill(x0, N, 5, 0.01f, 1);
    int64_t vec_end = N - N % tn_optim_upstream_lanes(TN_DTYPE_FLOAT32);
    for (int amsgrad = 0; amsgrad < 2; amsgrad++) {
        tn_adam_consts c = adam_consts(3, 0, amsgrad);
        float a[5][N], b[5][N];
        memcpy(a[0], p0, sizeof p0), memcpy(a[1], g0, sizeof g0), memcpy(a[2], m0, sizeof m0);
        memcpy(a[3], v0, sizeof v0), memcpy(a[4], x0, sizeof x0);
        memcpy(b, a, sizeof a);
        tn_adam_f32(&c, a[0], a[1], a[2], a[3], a[4], 0, N, vec_end);
        for (int64_t s = 0; s < N; s += 16) {
            int64_t e = s + 16 < N ? s + 16 : N;
            tn_adam_f32(&c, b[0], b[1], b[2], b[3], b[4], s, e, vec_end);
        }
        TN_CHECK(memcmp(a, b, sizeof a) == 0, "adam amsgrad=%d differs when split", amsgrad);
    }
}

/* SGD without momentum or decay is p - lr * g with one rounding (fma(g, -lr, p)). */
static void test_sgd_plain(void) {
    double p[9], g[9];
    for (int i = 0; i < 9; i++) p[i] = 1.0 + i, g[i] = 0.5 - i;
    tn_sgd_consts c = {0};
    c.lr = 0.1;
    tn_sgd_f64(&c, p, g, NULL, 0, 9, 8);
    for (int i = 0; i < 9; i++) TN_CHECK(p[i] == fma(0.5 - i, -0.1, 1.0 + i), "sgd p[%d] = %g", i, p[i]);
}

/* Adam's first step moves each parameter by about lr against its gradient's sign. */
static void test_adam_first_step(void) {
    float p[N], g[N], m[N], v[N];
    fill(p, N, 7, 1, 0), fill(g, N, 8, 1, 0);
    memset(m, 0, sizeof m), memset(v, 0, sizeof v);
    float p_before[N];
    memcpy(p_before, p, sizeof p);
    tn_adam_consts c = adam_consts(1, 1, 0);
    c.weight_decay = 0;
    tn_adam_f32(&c, p, g, m, v, NULL, 0, N, N - N % 8);
    int ok = 1;
    for (int i = 0; i < N; i++) {
        if (fabsf(g[i]) < 1e-3f) continue;
        float step = p_before[i] - p[i];
        if (fabsf(step - (g[i] > 0 ? 1e-2f : -1e-2f)) > 1e-5f) ok = 0;
    }
    TN_CHECK(ok, "first Adam step is not lr * sign(grad)");
}

/* Adagrad with zero state: sum = g^2, p -= clr * g / (|g| + eps). */
static void test_adagrad_first_step(void) {
    float p[3] = {1, 2, 3}, g[3] = {0.5f, -2, 4}, s[3] = {0, 0, 0};
    tn_adagrad_consts c = {0};
    c.clr = 0.1, c.eps = 0;
    tn_adagrad_f32(&c, p, g, s, 0, 3, 0);
    TN_CHECK(p[0] == 0.9f && p[1] == 2.1f && p[2] == 2.9f, "adagrad p = %g %g %g", p[0], p[1], p[2]);
    TN_CHECK(s[0] == 0.25f && s[1] == 4 && s[2] == 16, "adagrad sums");
}

/* bfloat16 rounds once per stored value: a grad_scale division is stored back. */
static void test_bf16_grad_scale(void) {
    tn_bfloat16 p[4], g[4], m[4], v[4];
    for (int i = 0; i < 4; i++) {
        p[i] = tn_f32_to_bf16(1.0f + i), g[i] = tn_f32_to_bf16(3.0f), m[i] = 0, v[i] = 0;
    }
    float scale = 2.0f;
    tn_adam_consts c = adam_consts(1, 0, 0);
    c.grad_scale = &scale;
    tn_adam_bf16(&c, p, g, m, v, NULL, 0, 4, 0);
    TN_CHECK(tn_bf16_to_f32(g[0]) == 1.5f, "grad unscaled in place: %g", tn_bf16_to_f32(g[0]));
}

int main(void) {
    test_split_independence();
    test_sgd_plain();
    test_adam_first_step();
    test_adagrad_first_step();
    test_bf16_grad_scale();
    return tn_test_summary();
}
