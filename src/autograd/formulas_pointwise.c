/* formulas_pointwise.c — derivatives of elementwise operators (rows in formulas.def). The
 * engine sums broadcast gradients back to each input's shape and casts their dtype. */
#include <math.h>
#include <string.h>

#include "autograd/formulas.h"

#define F(name) void name(tn_grad_ctx *c)

static tn_tensor *alpha_times(tn_grad_ctx *c, tn_tensor *g, const tn_value *alpha) {
    double a = ag_scalar(alpha);
    return a == 1.0 ? g : ag_mul_s(c, g, a);
}

F(g_pass0) { if (NEED(0)) SET(0, GRAD(0)); }
F(g_zero0) { if (NEED(0)) SET(0, ag_zeros(c, GEOM(0))); }

F(g_add) {
    if (NEED(0)) SET(0, GRAD(0));
    if (NEED(1)) SET(1, alpha_times(c, GRAD(0), &ARGV(2)));
}

F(g_sub) {
    if (NEED(0)) SET(0, GRAD(0));
    if (NEED(1)) SET(1, ag_neg(c, alpha_times(c, GRAD(0), &ARGV(2))));
}

/* rsub(self, other, alpha) = other - alpha * self */
F(g_rsub) {
    if (NEED(0)) SET(0, ag_neg(c, alpha_times(c, GRAD(0), &ARGV(2))));
    if (ARGV(1).tag == TN_V_TENSOR && NEED(1)) SET(1, GRAD(0));
}

/* complex operands: the gradient is grad times the conjugate derivative (upstream's
 * convention), ag_conj is the identity for real ones */
F(g_mul) {
    if (NEED(0)) SET(0, ag_mul(c, GRAD(0), ag_conj(c, ARG(1))));
    if (NEED(1)) SET(1, ag_mul(c, GRAD(0), ag_conj(c, ARG(0))));
}

F(g_mul_scalar) { if (NEED(0)) SET(0, ag_mul_s(c, GRAD(0), ag_scalar(&ARGV(1)))); }

F(g_div) {
    if (NEED(0)) SET(0, ag_div(c, GRAD(0), ag_conj(c, ARG(1))));
    if (NEED(1)) SET(1, ag_neg(c, ag_mul(c, GRAD(0), ag_conj(c, ag_div(c, ag_div(c, ARG(0), ARG(1)), ARG(1))))));
}

F(g_div_scalar) { if (NEED(0)) SET(0, ag_div(c, GRAD(0), ag_scalar_like(c, GRAD(0), ag_scalar(&ARGV(1))))); }

F(g_neg) { if (NEED(0)) SET(0, ag_neg(c, GRAD(0))); }

/* pow(self, e): e == 0 -> 0, else grad * e * self^(e-1) (upstream's pow_backward). */
F(g_pow_scalar) {
    if (!NEED(0)) return;
    if (ARGV(1).tag == TN_V_COMPLEX && ARGV(1).u.c.im != 0) { /* grad * conj(e * self^(e-1)) */
        tn_value e1 = ARGV(1);
        e1.u.c.re -= 1.0;
        tn_tensor *p = AG(c, pow_Tensor_Scalar, VT(ARG(0)), e1);
        SET(0, ag_mul(c, GRAD(0), ag_conj(c, AG(c, mul_Scalar, VT(p), ARGV(1)))));
        return;
    }
    double e = ag_scalar(&ARGV(1));
    if (e == 0.0) { SET(0, ag_zeros(c, GEOM(0))); return; }
    tn_tensor *p = e == 2.0 ? ARG(0) : AG(c, pow_Tensor_Scalar, VT(ARG(0)), VD(e - 1.0));
    SET(0, ag_mul(c, GRAD(0), ag_conj(c, ag_mul_s(c, p, e))));
}

F(g_square) { if (NEED(0)) SET(0, ag_mul(c, GRAD(0), ag_mul_s(c, ag_conj(c, ARG(0)), 2.0))); }

F(g_pow_tensor) {
    tn_tensor *g = GRAD(0), *x = ARG(0), *e = ARG(1);
    if (NEED(0)) {
        tn_tensor *d = ag_mul(c, g, ag_conj(c, ag_mul(c, e, AG(c, pow_Tensor_Tensor, VT(x), VT(ag_add_s(c, e, -1.0))))));
        tn_tensor *zero_e = AG(c, eq_Scalar, VT(e), VD(0.0));
        SET(0, AG(c, masked_fill_Scalar, VT(d), VT(zero_e), VD(0.0)));
    }
    if (NEED(1)) {
        tn_tensor *lx = ag_unary(c, TN_OP_log, c->st == TN_OK && x->dtype != RES(0)->dtype ? ag_cast(c, x, RES(0)->dtype) : x);
        tn_tensor *d = ag_mul(c, g, ag_conj(c, ag_mul(c, RES(0), lx)));
        /* self == 0 and exponent >= 0 (a complex one: real and >= 0): the derivative is 0,
         * not NaN (upstream's mask). */
        tn_tensor *real_e = c->st == TN_OK && tn_dtype_is_complex(e->dtype)
            ? AG(c, logical_and, VT(AG(c, eq_Scalar, VT(ag_unary(c, TN_OP_imag, e)), VD(0.0))),
                 VT(AG(c, ge_Scalar, VT(ag_unary(c, TN_OP_real, e)), VD(0.0))))
            : AG(c, ge_Scalar, VT(e), VD(0.0));
        tn_tensor *m = AG(c, logical_and, VT(AG(c, eq_Scalar, VT(x), VD(0.0))), VT(real_e));
        SET(1, AG(c, masked_fill_Scalar, VT(d), VT(m), VD(0.0)));
    }
}

F(g_sqrt) { if (NEED(0)) SET(0, ag_div(c, GRAD(0), ag_mul_s(c, ag_conj(c, RES(0)), 2.0))); }

F(g_rsqrt) {
    if (NEED(0)) SET(0, ag_mul_s(c, ag_mul(c, GRAD(0), ag_conj(c, AG(c, pow_Tensor_Scalar, VT(RES(0)), VD(3.0)))), -0.5));
}

F(g_reciprocal) { if (NEED(0)) SET(0, ag_neg(c, ag_mul(c, GRAD(0), ag_conj(c, ag_mul(c, RES(0), RES(0)))))); }

F(g_exp) { if (NEED(0)) SET(0, ag_mul(c, GRAD(0), ag_conj(c, RES(0)))); }

F(g_log) { if (NEED(0)) SET(0, ag_div(c, GRAD(0), ag_conj(c, ARG(0)))); }

F(g_log1p) { if (NEED(0)) SET(0, ag_div(c, GRAD(0), ag_conj(c, ag_add_s(c, ARG(0), 1.0)))); }

/* First-order backward runs upstream's fused backward operators (one kernel); under
 * create_graph (grad mode on in the formula) the composite form, whose operators are
 * themselves differentiable. */
#define FIRST_ORDER() (!tn_grad_mode_enabled())

/* tanh_backward: grad * conj(1 - y^2) */
F(g_tanh) {
    if (!NEED(0)) return;
    if (FIRST_ORDER()) { SET(0, AG(c, tanh_backward, VT(GRAD(0)), VT(RES(0)))); return; }
    SET(0, ag_mul(c, GRAD(0), ag_conj(c, AG(c, rsub_Scalar, VT(ag_mul(c, RES(0), RES(0))), VD(1.0), VI(1)))));
}

/* sigmoid_backward: grad * conj(y * (1 - y)) */
F(g_sigmoid) {
    if (!NEED(0)) return;
    if (FIRST_ORDER()) { SET(0, AG(c, sigmoid_backward, VT(GRAD(0)), VT(RES(0)))); return; }
    SET(0, ag_mul(c, GRAD(0), ag_conj(c, ag_mul(c, RES(0), AG(c, rsub_Scalar, VT(RES(0)), VD(1.0), VI(1))))));
}

/* threshold_backward(grad, result, 0): grad where result > 0. */
F(g_relu) {
    if (!NEED(0)) return;
    if (FIRST_ORDER()) { SET(0, AG(c, threshold_backward, VT(GRAD(0)), VT(RES(0)), VD(0.0))); return; }
    SET(0, AG(c, masked_fill_Scalar, VT(GRAD(0)), VT(AG(c, le_Scalar, VT(RES(0)), VD(0.0))), VD(0.0)));
}

/* gelu_backward for approximate = "none" and "tanh". */
F(g_gelu) {
    if (!NEED(0)) return;
    if (FIRST_ORDER()) { SET(0, AG(c, gelu_backward, VT(GRAD(0)), VT(ARG(0)), ARGV(1))); return; }
    tn_tensor *x = ARG(0), *g = GRAD(0), *d;
    bool tanh_approx = ARGV(1).tag == TN_V_STRING && ARGV(1).u.s.n == 4 && memcmp(ARGV(1).u.s.data, "tanh", 4) == 0;
    if (!tanh_approx) {
        /* 0.5 * (1 + erf(x / sqrt 2)) + x * exp(-x^2 / 2) / sqrt(2 pi) */
        tn_tensor *cdf = ag_mul_s(c, ag_add_s(c, ag_unary(c, TN_OP_erf, ag_mul_s(c, x, M_SQRT1_2)), 1.0), 0.5);
        tn_tensor *pdf = ag_mul_s(c, ag_unary(c, TN_OP_exp, ag_mul_s(c, ag_mul(c, x, x), -0.5)), 0.5 * M_2_SQRTPI * M_SQRT1_2);
        d = ag_add(c, cdf, ag_mul(c, x, pdf));
    } else {
        const double k_beta = M_SQRT2 * M_2_SQRTPI * 0.5, k_kappa = 0.044715;
        tn_tensor *x2 = ag_mul(c, x, x), *x3 = ag_mul(c, x2, x);
        tn_tensor *inner = ag_mul_s(c, ag_add(c, x, ag_mul_s(c, x3, k_kappa)), k_beta);
        tn_tensor *th = ag_unary(c, TN_OP_tanh, inner);
        tn_tensor *left = ag_mul_s(c, x, 0.5), *right = ag_add_s(c, th, 1.0);
        tn_tensor *left_d = ag_mul_s(c, right, 0.5);
        tn_tensor *th2 = AG(c, rsub_Scalar, VT(ag_mul(c, th, th)), VD(1.0), VI(1));
        tn_tensor *inner_d = ag_mul_s(c, ag_add_s(c, ag_mul_s(c, x2, 3.0 * k_kappa), 1.0), k_beta);
        d = ag_add(c, left_d, ag_mul(c, left, ag_mul(c, th2, inner_d)));
    }
    SET(0, ag_mul(c, g, d));
}

/* silu: grad * s * (1 + x * (1 - s)), s = sigmoid(x) */
F(g_silu) {
    if (!NEED(0)) return;
    if (FIRST_ORDER()) { SET(0, AG(c, silu_backward, VT(GRAD(0)), VT(ARG(0)))); return; }
    tn_tensor *s = ag_unary(c, TN_OP_sigmoid, ARG(0));
    tn_tensor *one_minus = AG(c, rsub_Scalar, VT(s), VD(1.0), VI(1));
    SET(0, ag_mul(c, GRAD(0), ag_mul(c, s, ag_add_s(c, ag_mul(c, ARG(0), one_minus), 1.0))));
}

F(g_sin) { if (NEED(0)) SET(0, ag_mul(c, GRAD(0), ag_conj(c, ag_unary(c, TN_OP_cos, ARG(0))))); }
F(g_cos) { if (NEED(0)) SET(0, ag_neg(c, ag_mul(c, GRAD(0), ag_conj(c, ag_unary(c, TN_OP_sin, ARG(0)))))); }

F(g_erf) {
    if (NEED(0))
        SET(0, ag_mul(c, GRAD(0), ag_mul_s(c, ag_unary(c, TN_OP_exp, ag_neg(c, ag_mul(c, ARG(0), ARG(0)))), M_2_SQRTPI)));
}

F(g_abs) { if (NEED(0)) SET(0, ag_mul(c, GRAD(0), ag_unary(c, TN_OP_sgn, ARG(0)))); }

/* clamp(self, min, max): grad where min <= self <= max (NaN bounds never mask). */
static tn_tensor *clamp_mask(tn_grad_ctx *c, tn_tensor *x, const tn_value *lo, const tn_value *hi) {
    tn_tensor *m = NULL;
    if (lo->tag != TN_V_NONE) m = AG(c, ge_Scalar, VT(x), *lo);
    if (hi->tag != TN_V_NONE) {
        tn_tensor *h = AG(c, le_Scalar, VT(x), *hi);
        m = m ? AG(c, logical_and, VT(m), VT(h)) : h;
    }
    return m;
}

F(g_clamp) {
    if (!NEED(0)) return;
    tn_tensor *m = clamp_mask(c, ARG(0), &ARGV(1), &ARGV(2));
    SET(0, m ? ag_mul(c, GRAD(0), m) : GRAD(0));
}

F(g_clamp_min) {
    tn_value none = VN();
    if (NEED(0)) SET(0, ag_mul(c, GRAD(0), clamp_mask(c, ARG(0), &ARGV(1), &none)));
}

F(g_clamp_max) {
    tn_value none = VN();
    if (NEED(0)) SET(0, ag_mul(c, GRAD(0), clamp_mask(c, ARG(0), &none, &ARGV(1))));
}

/* hardtanh_backward: grad where min < self < max. */
F(g_hardtanh) {
    if (!NEED(0)) return;
    tn_tensor *m = AG(c, logical_and, VT(AG(c, gt_Scalar, VT(ARG(0)), ARGV(1))), VT(AG(c, lt_Scalar, VT(ARG(0)), ARGV(2))));
    SET(0, ag_mul(c, GRAD(0), m));
}

F(g_leaky_relu) {
    if (!NEED(0)) return;
    tn_tensor *pos = AG(c, gt_Scalar, VT(ARG(0)), VD(0.0));
    SET(0, ag_where(c, pos, GRAD(0), ag_mul_s(c, GRAD(0), ag_scalar(&ARGV(1)))));
}

/* softplus_backward: grad * sigmoid(beta x), or grad where beta x > threshold. */
F(g_softplus) {
    if (!NEED(0)) return;
    double beta = ag_scalar(&ARGV(1)), thr = ag_scalar(&ARGV(2));
    tn_tensor *bx = ag_mul_s(c, ARG(0), beta);
    tn_tensor *lin = AG(c, gt_Scalar, VT(bx), VD(thr));
    SET(0, ag_where(c, lin, GRAD(0), ag_mul(c, GRAD(0), ag_unary(c, TN_OP_sigmoid, bx))));
}

/* elu(self, alpha, scale, input_scale), backward on the input (is_result = false). */
F(g_elu) {
    if (!NEED(0)) return;
    double alpha = ag_scalar(&ARGV(1)), scale = ag_scalar(&ARGV(2)), in_scale = ag_scalar(&ARGV(3));
    tn_tensor *neg = AG(c, le_Scalar, VT(ARG(0)), VD(0.0));
    tn_tensor *e = ag_mul_s(c, ag_unary(c, TN_OP_exp, ag_mul_s(c, ARG(0), in_scale)), in_scale * alpha * scale);
    SET(0, ag_where(c, neg, ag_mul(c, GRAD(0), e), ag_mul_s(c, GRAD(0), scale)));
}

F(g_masked_fill) {
    if (NEED(0)) SET(0, AG(c, masked_fill_Scalar, VT(GRAD(0)), VT(ARG(1)), VD(0.0)));
    if (ARGV(2).tag == TN_V_TENSOR && NEED(2))
        SET(2, AG(c, sum, VT(ag_where(c, ARG(1), GRAD(0), ag_zeros_like(c, GRAD(0)))), VN()));
}

F(g_where) {
    tn_tensor *z = ag_scalar_like(c, GRAD(0), 0.0);
    if (NEED(1)) SET(1, ag_where(c, ARG(0), GRAD(0), z));
    if (NEED(2)) SET(2, ag_where(c, ARG(0), z, GRAD(0)));
}

/* maximum/minimum: ties split the gradient in half (upstream). */
static void minmax(tn_grad_ctx *c, tn_op_id lose_op) {
    tn_tensor *g = GRAD(0), *a = ARG(0), *b = ARG(1);
    tn_tensor *tie = AG(c, eq_Tensor, VT(a), VT(b));
    tn_tensor *half = ag_mul_s(c, g, 0.5);
    if (NEED(0)) {
        tn_tensor *lose = ag_binary(c, lose_op, a, b);
        SET(0, AG(c, masked_fill_Scalar, VT(ag_where(c, tie, half, g)), VT(lose), VD(0.0)));
    }
    if (NEED(1)) {
        tn_tensor *lose = ag_binary(c, lose_op, b, a);
        SET(1, AG(c, masked_fill_Scalar, VT(ag_where(c, tie, half, g)), VT(lose), VD(0.0)));
    }
}
F(g_maximum) { minmax(c, TN_OP_lt_Tensor); }
F(g_minimum) { minmax(c, TN_OP_gt_Tensor); }

/* t * value, value a real or complex Scalar */
static tn_tensor *scaled_by_value(tn_grad_ctx *c, tn_tensor *t, const tn_value *value) {
    return value->tag == TN_V_COMPLEX ? AG(c, mul_Scalar, VT(t), *value) : ag_mul_s(c, t, ag_scalar(value));
}

/* upstream's forms: grad * conj(tensor2 * value), grad * conj(tensor1 * value) */
F(g_addcmul) {
    if (NEED(0)) SET(0, GRAD(0));
    if (NEED(1)) SET(1, ag_mul(c, GRAD(0), ag_conj(c, scaled_by_value(c, ARG(2), &ARGV(3)))));
    if (NEED(2)) SET(2, ag_mul(c, GRAD(0), ag_conj(c, scaled_by_value(c, ARG(1), &ARGV(3)))));
}

/* grad * conj(value / tensor2), -grad * conj(value * tensor1 / tensor2^2) (a complex
 * value divides as value * (1 / tensor2)) */
F(g_addcdiv) {
    if (NEED(0)) SET(0, GRAD(0));
    if (NEED(1)) {
        tn_tensor *q = ARGV(3).tag == TN_V_COMPLEX ? scaled_by_value(c, ag_unary(c, TN_OP_reciprocal, ARG(2)), &ARGV(3))
                                                   : ag_div(c, ag_scalar_like(c, ARG(2), ag_scalar(&ARGV(3))), ARG(2));
        SET(1, ag_mul(c, GRAD(0), ag_conj(c, q)));
    }
    if (NEED(2)) {
        tn_tensor *q = ag_div(c, scaled_by_value(c, ARG(1), &ARGV(3)), ag_mul(c, ARG(2), ARG(2)));
        SET(2, ag_neg(c, ag_mul(c, GRAD(0), ag_conj(c, q))));
    }
}

F(g_lerp_scalar) {
    if (ARGV(2).tag == TN_V_COMPLEX) { /* grad * conj(1 - w), grad * conj(w) */
        tn_value one_minus = {.tag = TN_V_COMPLEX}, wc = {.tag = TN_V_COMPLEX};
        one_minus.u.c.re = 1.0 - ARGV(2).u.c.re;
        one_minus.u.c.im = ARGV(2).u.c.im;
        wc.u.c.re = ARGV(2).u.c.re;
        wc.u.c.im = -ARGV(2).u.c.im;
        if (NEED(0)) SET(0, AG(c, mul_Scalar, VT(GRAD(0)), one_minus));
        if (NEED(1)) SET(1, AG(c, mul_Scalar, VT(GRAD(0)), wc));
        return;
    }
    double w = ag_scalar(&ARGV(2));
    if (NEED(0)) SET(0, ag_mul_s(c, GRAD(0), 1.0 - w));
    if (NEED(1)) SET(1, ag_mul_s(c, GRAD(0), w));
}

/* sinc: grad * conj((pi x cos(pi x) - sin(pi x)) / (pi x^2)), 0 where pi x^2 is 0 */
F(g_sinc) {
    if (!NEED(0)) return;
    tn_tensor *x = ARG(0), *sp = ag_mul_s(c, x, M_PI), *ssp = ag_mul_s(c, ag_mul(c, x, x), M_PI);
    tn_tensor *num = ag_sub(c, ag_mul(c, sp, ag_unary(c, TN_OP_cos, sp)), ag_unary(c, TN_OP_sin, sp));
    tn_tensor *out = ag_mul(c, GRAD(0), ag_conj(c, ag_div(c, num, ssp)));
    SET(0, ag_where(c, AG(c, eq_Scalar, VT(ssp), VD(0.0)), ag_scalar_like(c, out, 0.0), out));
}

/* copy_(self, src): self's old value is overwritten (no gradient); src gets grad. */
F(g_copy) {
    if (NEED(0)) SET(0, ag_zeros(c, GEOM(0)));
    if (NEED(1)) SET(1, GRAD(0));
}
