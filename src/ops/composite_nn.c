/* composite_nn.c — the nn functions upstream composes from other operators
 * (CompositeImplicitAutograd or written as op chains in ATen): the embedding, margin,
 * hinge, triplet, KL, Poisson and soft-margin losses, pairwise distance and cosine
 * similarity, prelu, rrelu in evaluation, the feature / alpha dropouts, one_hot, pixel
 * (un)shuffle and channel shuffle. Each is the same chain of door calls upstream makes, so
 * values (and, as decompose.c runs them as their parts, gradients) follow upstream's. */
#include <math.h>
#include <string.h>

#include "core/scalar.h"
#include "ops/composite_internal.h"
#include "ops/iter.h"
#include "ops/promote.h"


/* zeros_like(t) with the contiguous (legacy) memory format */
static tn_tensor *zeros_like(tn_cx *c, tn_tensor *t) {
    return tn_cx_call(c, TN_OP_zeros_like, TN_ARGS(TN_T(t), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_MF(0)));
}

/* upstream's apply_loss_reduction: 0 none, 1 mean, 2 sum */
static tn_tensor *reduce_loss(tn_cx *c, tn_tensor *t, int64_t reduction) {
    if (reduction == 1) return tn_cx_call(c, TN_OP_mean, TN_ARGS(TN_T(t), TN_NONE));
    if (reduction == 2) return tn_cx_call(c, TN_OP_sum, TN_ARGS(TN_T(t), TN_NONE));
    return t;
}

static tn_tensor *add(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_add_Tensor, TN_ARGS(TN_T(a), TN_T(b), TN_I(1))); }
static tn_tensor *sub(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_sub_Tensor, TN_ARGS(TN_T(a), TN_T(b), TN_I(1))); }
static tn_tensor *mul(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_mul_Tensor, TN_ARGS(TN_T(a), TN_T(b))); }
static tn_tensor *divt(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_div_Tensor, TN_ARGS(TN_T(a), TN_T(b))); }
static tn_tensor *adds(tn_cx *c, tn_tensor *a, tn_value s) { return tn_cx_call(c, TN_OP_add_Scalar, TN_ARGS(TN_T(a), s, TN_I(1))); }
static tn_tensor *muls(tn_cx *c, tn_tensor *a, tn_value s) { return tn_cx_call(c, TN_OP_mul_Scalar, TN_ARGS(TN_T(a), s)); }
/* s - a */
static tn_tensor *rsubs(tn_cx *c, tn_tensor *a, tn_value s) { return tn_cx_call(c, TN_OP_rsub_Scalar, TN_ARGS(TN_T(a), s, TN_I(1))); }
static tn_tensor *unary(tn_cx *c, tn_op_id op, tn_tensor *a) { return tn_cx_call(c, op, TN_ARGS(TN_T(a))); }
static tn_tensor *clamp_min0(tn_cx *c, tn_tensor *a) { return tn_cx_call(c, TN_OP_clamp_min, TN_ARGS(TN_T(a), TN_I(0))); }
static tn_tensor *where(tn_cx *c, tn_tensor *m, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_where_self, TN_ARGS(TN_T(m), TN_T(a), TN_T(b))); }
static tn_tensor *cmps(tn_cx *c, tn_op_id op, tn_tensor *a, tn_value s) { return tn_cx_call(c, op, TN_ARGS(TN_T(a), s)); }
static tn_tensor *sum_dim(tn_cx *c, tn_tensor *a, int64_t dim, bool keepdim) {
    return tn_cx_call(c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(a), tn_value_intlist(&dim, 1), TN_B(keepdim), TN_NONE));
}

/* aten::margin_ranking_loss(input1, input2, target, margin, reduction):
 * max(0, -target * (input1 - input2) + margin) */
tn_status tn_op_margin_ranking_loss(const tn_value *args, tn_value *rets) {
    tn_tensor *x1 = args[0].u.t, *x2 = args[1].u.t, *y = args[2].u.t;
    tn_cx c = {0};
    tn_tensor *d = sub(&c, x1, x2), *ny = unary(&c, TN_OP_neg, y);
    tn_tensor *o = clamp_min0(&c, adds(&c, mul(&c, ny, d), TN_D(args[3].u.d)));
    return tn_cx_finish(&c, reduce_loss(&c, o, args[4].u.i), rets);
}

/* aten::hinge_embedding_loss(self, target, margin, reduction) */
tn_status tn_op_hinge_embedding_loss(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *y = args[1].u.t;
    tn_cx c = {0};
    tn_tensor *zeros = zeros_like(&c, x);
    /* upstream's `margin - self` is ATen's Scalar-minus-Tensor: a tensor like self filled
     * with the margin, then self subtracted: in self's dtype (an integral self stays
     * integral, the margin truncated) */
    tn_tensor *mfull = tn_cx_call(&c, TN_OP_full_like, TN_ARGS(TN_T(x), TN_D(args[2].u.d), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_NONE));
    tn_tensor *margin_clamp = clamp_min0(&c, tn_cx_call(&c, TN_OP_sub__Tensor, TN_ARGS(TN_T(mfull), TN_T(x), TN_I(1))));
    tn_tensor *out_margin = where(&c, cmps(&c, TN_OP_ne_Scalar, y, TN_I(1)), margin_clamp, zeros);
    tn_tensor *out_self = where(&c, cmps(&c, TN_OP_ne_Scalar, y, TN_I(-1)), x, zeros);
    return tn_cx_finish(&c, reduce_loss(&c, add(&c, out_margin, out_self), args[3].u.i), rets);
}

/* aten::cosine_embedding_loss(input1, input2, target, margin, reduction) */
tn_status tn_op_cosine_embedding_loss(const tn_value *args, tn_value *rets) {
    tn_tensor *x1 = args[0].u.t, *x2 = args[1].u.t, *y = args[2].u.t;
    tn_cx c = {0};
    int64_t td = y->ndim;
    if (td != 0 && td != 1)
        tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "0D or 1D target tensor expected, multi-target not supported"));
    else if (td == 1 && x1->ndim != 2)
        tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "1D target tensor expects 2D input tensors, but found inputs with sizes"));
    else if (td == 0 && x1->ndim != 1)
        tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "0D target tensor expects 1D input tensors, but found inputs with sizes"));
    const double eps = (double)1e-12f; /* upstream's float EPSILON */
    tn_tensor *prod_sum = sum_dim(&c, mul(&c, x1, x2), td, false);
    tn_tensor *mag1 = adds(&c, sum_dim(&c, mul(&c, x1, x1), td, false), TN_D(eps));
    tn_tensor *mag2 = adds(&c, sum_dim(&c, mul(&c, x2, x2), td, false), TN_D(eps));
    tn_tensor *cosv = divt(&c, prod_sum, unary(&c, TN_OP_sqrt, mul(&c, mag1, mag2)));
    tn_tensor *zeros = zeros_like(&c, cosv);
    tn_tensor *pos = rsubs(&c, cosv, TN_I(1));
    tn_tensor *neg = clamp_min0(&c, tn_cx_call(&c, TN_OP_sub_Scalar, TN_ARGS(TN_T(cosv), TN_D(args[3].u.d), TN_I(1))));
    tn_tensor *op = where(&c, cmps(&c, TN_OP_eq_Scalar, y, TN_I(1)), pos, zeros);
    tn_tensor *on = where(&c, cmps(&c, TN_OP_eq_Scalar, y, TN_I(-1)), neg, zeros);
    return tn_cx_finish(&c, reduce_loss(&c, add(&c, op, on), args[4].u.i), rets);
}

/* aten::pairwise_distance(x1, x2, p, eps, keepdim) = norm(x1 - x2 + eps, p, last dim) */
static tn_tensor *pairwise(tn_cx *c, tn_tensor *x1, tn_tensor *x2, double p, double eps, bool keepdim) {
    int64_t dim = (x1->ndim > x2->ndim ? x1->ndim : x2->ndim) - 1;
    tn_tensor *d = adds(c, sub(c, x1, x2), TN_D(eps));
    return tn_cx_call(c, TN_OP_linalg_vector_norm, TN_ARGS(TN_T(d), TN_D(p), tn_value_intlist(&dim, 1), TN_B(keepdim), TN_NONE));
}
tn_status tn_op_pairwise_distance(const tn_value *args, tn_value *rets) {
    tn_cx c = {0};
    return tn_cx_finish(&c, pairwise(&c, args[0].u.t, args[1].u.t, args[2].u.d, args[3].u.d, args[4].u.b), rets);
}

/* aten::triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction) */
tn_status tn_op_triplet_margin_loss(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t, *p = args[1].u.t, *n = args[2].u.t;
    tn_cx c = {0};
    if (a->ndim != p->ndim || p->ndim != n->ndim)
        tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "All inputs should have same dimension but got %dD, %dD and %dD inputs.", a->ndim,
                                p->ndim, n->ndim));
    double pn = args[4].u.d, eps = args[5].u.d;
    tn_tensor *dpos = pairwise(&c, a, p, pn, eps, false), *dneg = pairwise(&c, a, n, pn, eps, false);
    if (args[6].u.b) dneg = tn_cx_call(&c, TN_OP_min_other, TN_ARGS(TN_T(dneg), TN_T(pairwise(&c, p, n, pn, eps, false))));
    tn_tensor *o = clamp_min0(&c, sub(&c, adds(&c, dpos, TN_D(args[3].u.d)), dneg));
    return tn_cx_finish(&c, reduce_loss(&c, o, args[7].u.i), rets);
}

/* aten::kl_div(self, target, reduction, log_target) */
tn_status tn_op_kl_div(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *t = args[1].u.t, *o;
    /* upstream's checks, complex first, then integral (bool included), before any shape or
     * value is looked at */
    if (tn_dtype_is_complex(x->dtype) || tn_dtype_is_complex(t->dtype))
        return tn_error(TN_ERR_RUNTIME, "kl_div: Complex inputs not supported.");
    for (int k = 0; k < 2; k++) {
        tn_dtype d = (k ? t : x)->dtype;
        if (!tn_dtype_is_floating(d) && !tn_dtype_is_complex(d))
            return tn_error(TN_ERR_RUNTIME, "kl_div: Integral inputs not supported.");
    }
    tn_cx c = {0};
    if (args[3].u.b) {
        o = mul(&c, unary(&c, TN_OP_exp, t), sub(&c, t, x));
    } else {
        /* upstream's xlogy(target, target) - target * input: 0 only where the target is 0
         * (a negative or NaN target gives NaN, a zero target times an infinite input NaN) */
        o = sub(&c, tn_cx_call(&c, TN_OP_xlogy_Tensor, TN_ARGS(TN_T(t), TN_T(t))), mul(&c, t, x));
    }
    return tn_cx_finish(&c, reduce_loss(&c, o, args[2].u.i), rets);
}

/* aten::poisson_nll_loss(input, target, log_input, full, eps, reduction) */
tn_status tn_op_poisson_nll_loss(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *t = args[1].u.t, *loss;
    tn_cx c = {0};
    if (args[2].u.b) loss = sub(&c, unary(&c, TN_OP_exp, x), mul(&c, t, x));
    else loss = sub(&c, x, mul(&c, t, unary(&c, TN_OP_log, adds(&c, x, TN_D(args[4].u.d)))));
    if (args[3].u.b) {
        /* Stirling term t log t - t + 0.5 log(2 pi t), zero where t <= 1 */
        tn_tensor *st = sub(&c, mul(&c, t, unary(&c, TN_OP_log, t)), t);
        tn_tensor *lg = unary(&c, TN_OP_log, muls(&c, t, TN_D(2 * M_PI)));
        st = add(&c, st, muls(&c, lg, TN_D(0.5)));
        st = tn_cx_call(&c, TN_OP_masked_fill_Scalar, TN_ARGS(TN_T(st), TN_T(cmps(&c, TN_OP_le_Scalar, t, TN_I(1))), TN_I(0)));
        loss = tn_cx_call(&c, TN_OP_add__Tensor, TN_ARGS(TN_T(loss), TN_T(st), TN_I(1))); /* upstream's `loss +=`: loss's dtype */
    }
    return tn_cx_finish(&c, reduce_loss(&c, loss, args[5].u.i), rets);
}

/* aten::soft_margin_loss(self, target, reduction) = log1p(exp(-self * target)), in self's
 * dtype (upstream's kernel writes into an output of self's dtype from the product on, so
 * what cannot be written there refuses as its in-place steps do: the product's promoted
 * dtype, then exp's floating result for an integral self) */
tn_status tn_op_soft_margin_loss(const tn_value *args, tn_value *rets) {
    tn_dtype self_dt = args[0].u.t->dtype, res;
    if (self_dt != TN_DTYPE_BOOL) { /* bool: neg refuses below, as upstream's */
        TN_TRY(tn_result_type(2, args, &res));
        if (tn_dtype_can_cast(res, self_dt) && !tn_dtype_is_floating(self_dt) && !tn_dtype_is_complex(self_dt))
            res = tn_default_dtype(); /* the product fits an integral self; exp's result does not */
        if (!tn_dtype_can_cast(res, self_dt))
            return tn_error(TN_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                            tn_dtype_infos[res].c10_name, tn_dtype_infos[self_dt].c10_name);
    }
    tn_cx c = {0};
    tn_tensor *z = mul(&c, unary(&c, TN_OP_neg, args[0].u.t), args[1].u.t);
    if (z && z->dtype != args[0].u.t->dtype) {
        tn_value d = {.tag = TN_V_DTYPE};
        d.u.dtype = args[0].u.t->dtype;
        z = tn_cx_call(&c, TN_OP__to_copy, TN_ARGS(TN_T(z), d, TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE));
    }
    z = unary(&c, TN_OP_log1p, unary(&c, TN_OP_exp, z));
    return tn_cx_finish(&c, reduce_loss(&c, z, args[2].u.i), rets);
}

/* aten::cosine_similarity(x1, x2, dim, eps): each operand divided by its norm (clamped to
 * eps) first, then the sum of the products, as upstream. Integer operands are converted
 * to the (floating) common dtype first. */
tn_status tn_op_cosine_similarity(const tn_value *args, tn_value *rets) {
    tn_tensor *x[2] = {args[0].u.t, args[1].u.t};
    int64_t dim = args[2].u.i;
    /* upstream checks eps before anything else (NaN included) */
    if (!(args[3].u.d >= 0)) return tn_error(TN_ERR_RUNTIME, "eps must be non-negative, got: %g", args[3].u.d);
    tn_cx c = {0};
    tn_dtype common;
    tn_status st = tn_result_type(2, args, &common);
    if (st != TN_OK) return st;
    if (!tn_dtype_is_floating(common))
        return tn_error(TN_ERR_RUNTIME, "expected common dtype to be floating point, yet common dtype is %s",
                        tn_dtype_infos[common].c10_name);
    int nd;
    int64_t shape[TN_MAX_DIMS];
    st = tn_broadcast_shapes(x[0]->ndim, x[0]->sizes, x[1]->ndim, x[1]->sizes, &nd, shape);
    if (st != TN_OK) return st;
    tn_tensor *q[2];
    for (int k = 0; k < 2; k++) {
        tn_tensor *v = x[k];
        if (!tn_dtype_is_floating(v->dtype)) {
            tn_value d = {.tag = TN_V_DTYPE};
            d.u.dtype = common;
            v = tn_cx_call(&c, TN_OP__to_copy, TN_ARGS(TN_T(v), d, TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE));
        }
        v = tn_cx_call(&c, TN_OP_expand, TN_ARGS(TN_T(v), tn_value_intlist(shape, nd), TN_B(false)));
        tn_tensor *nrm = tn_cx_call(&c, TN_OP_linalg_vector_norm, TN_ARGS(TN_T(v), TN_I(2), tn_value_intlist(&dim, 1), TN_B(true), TN_NONE));
        nrm = tn_cx_call(&c, TN_OP_clamp_min, TN_ARGS(TN_T(nrm), TN_D(args[3].u.d)));
        q[k] = divt(&c, v, nrm);
    }
    return tn_cx_finish(&c, sum_dim(&c, mul(&c, q[0], q[1]), dim, false), rets);
}

/* aten::prelu(self, weight): upstream's checks, then _prelu_kernel with the weight laid along
 * dim 1 (a single weight as it is: it broadcasts, and the result keeps self's shape) */
tn_status tn_op_prelu(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *w = args[1].u.t;
    int64_t wn = tn_tensor_numel(w);
    if (x->dtype != w->dtype)
        return tn_error(TN_ERR_RUNTIME, "prelu: Type promoting not supported. Got %s and %s", tn_dtype_infos[x->dtype].c10_name,
                        tn_dtype_infos[w->dtype].c10_name);
    if (wn != 1 && x->ndim == 0) return tn_error(TN_ERR_RUNTIME, "Not allow zero-dim input tensor.");
    if (wn != 1 && (x->ndim < 2 ? 1 : x->sizes[1]) != wn)
        return tn_error(TN_ERR_RUNTIME, "Mismatch of parameter numbers and input channel size. Found parameter numbers = %lld and channel size = %lld.",
                        (long long)wn, (long long)(x->ndim >= 2 ? x->sizes[1] : 1));
    if (w->ndim > 1) return tn_error(TN_ERR_RUNTIME, "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = %d", w->ndim);
    tn_cx c = {0};
    tn_tensor *wb = w;
    if (x->ndim != w->ndim) {
        int64_t shape[TN_MAX_DIMS];
        for (int k = 0; k < x->ndim; k++) shape[k] = k == 1 ? wn : 1;
        wb = tn_cx_call(&c, TN_OP_reshape, TN_ARGS(TN_T(w), tn_value_intlist(shape, x->ndim)));
    }
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP__prelu_kernel, TN_ARGS(TN_T(x), TN_T(wb))), rets);
}

/* aten::_prelu_kernel_backward(grad_output, self, weight) -> (grad_self, grad_weight), both
 * of the three operands' broadcast shape (autograd sums the weight's to its shape):
 *   grad_self = self > 0 ? grad : weight * grad,  grad_weight = self > 0 ? 0 : self * grad */
tn_status tn_op__prelu_kernel_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *g = args[0].u.t, *x = args[1].u.t, *w = args[2].u.t;
    int nd0 = 0, nd1 = 0;
    int64_t s0[TN_MAX_DIMS], s1[TN_MAX_DIMS];
    /* upstream's iterator broadcasts (self, weight, grad) before its dtype dispatch */
    TN_TRY(tn_broadcast_shapes(x->ndim, x->sizes, w->ndim, w->sizes, &nd0, s0));
    TN_TRY(tn_broadcast_shapes(nd0, s0, g->ndim, g->sizes, &nd1, s1));
    if (!tn_dtype_is_floating(x->dtype) || tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"prelu_backward_cpu\" not implemented for '%s'", tn_dtype_infos[x->dtype].c10_name);
    if (g->dtype != x->dtype || w->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "Found dtype %s but expected %s",
                        tn_dtype_infos[g->dtype != x->dtype ? g->dtype : w->dtype].c10_name, tn_dtype_infos[x->dtype].c10_name);
    tn_cx c = {0};
    tn_tensor *pos = cmps(&c, TN_OP_gt_Scalar, x, TN_I(0));
    tn_tensor *gs = where(&c, pos, g, mul(&c, w, g));
    tn_tensor *gw = tn_cx_call(&c, TN_OP_where_ScalarSelf, TN_ARGS(TN_T(pos), TN_I(0), TN_T(mul(&c, x, g))));
    /* both of the three operands' broadcast shape, as upstream's iterator outputs (gw lacks
     * the weight's dims, gs the grad's where they broadcast beyond self) */
    int nd = 0, n2 = 0;
    int64_t sz[TN_MAX_DIMS], s2[TN_MAX_DIMS];
    if (c.st == TN_OK) c.st = tn_broadcast_shapes(gs->ndim, gs->sizes, gw->ndim, gw->sizes, &nd, sz);
    if (c.st == TN_OK && (c.st = tn_broadcast_shapes(nd, sz, w->ndim, w->sizes, &n2, s2)) == TN_OK) {
        if (n2 != gs->ndim || memcmp(s2, gs->sizes, (size_t)n2 * sizeof *s2))
            gs = tn_cx_call(&c, TN_OP_expand, TN_ARGS(TN_T(gs), tn_value_intlist(s2, n2), TN_B(false)));
        if (n2 != gw->ndim || memcmp(s2, gw->sizes, (size_t)n2 * sizeof *s2))
            gw = tn_cx_call(&c, TN_OP_expand, TN_ARGS(TN_T(gw), tn_value_intlist(s2, n2), TN_B(false)));
    }
    tn_tensor *outs[2] = {gs, gw};
    return tn_cx_finish_n(&c, 2, outs, rets);
}

/* aten::rrelu(self, lower, upper, training, generator): in evaluation a leaky relu with the
 * mean slope; in training rrelu_with_noise's random slopes (random.c). */
tn_status tn_op_rrelu(const tn_value *args, tn_value *rets) {
    double lo = tn_scalar_as_double(&args[1]), hi = tn_scalar_as_double(&args[2]);
    /* upstream's bounds checks, in its order, in either mode and for any input */
    if (!isfinite(lo)) return tn_error(TN_ERR_RUNTIME, "rrelu: lower bound must be finite, got %g", lo);
    if (!(lo <= hi)) return tn_error(TN_ERR_RUNTIME, "Lower bound should be less than or equal to the upper bound");
    if (!isfinite(hi)) return tn_error(TN_ERR_RUNTIME, "rrelu: upper bound must be finite, got %g", hi);
    if (args[3].u.b) { /* upstream's: rrelu_with_noise with a fresh noise tensor (random slopes) */
        tn_cx c = {0};
        tn_tensor *noise = tn_cx_call(&c, TN_OP_empty_like, TN_ARGS(args[0], TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_NONE));
        tn_tensor *y = tn_cx_call(&c, TN_OP_rrelu_with_noise, TN_ARGS(args[0], TN_T(noise), args[1], args[2], TN_B(true), args[4]));
        return tn_cx_finish(&c, y, rets);
    }
    return tn_dispatch(TN_OP_leaky_relu, TN_ARGS(args[0], TN_D(tn_scalar_midpoint(&args[1], &args[2]))), rets);
}

/* aten::rrelu_with_noise_backward(grad_output, self, noise, lower, upper, training,
 * self_is_result): the recorded slopes times grad in training (equal bounds included, as
 * upstream 2.13), else leaky_relu_backward with the mean slope */
tn_status tn_op_rrelu_with_noise_backward(const tn_value *args, tn_value *rets) {
    double lo = tn_scalar_as_double(&args[3]), hi = tn_scalar_as_double(&args[4]);
    if (args[5].u.b) return tn_dispatch(TN_OP_mul_Tensor, TN_ARGS(args[2], args[0]), rets);
    return tn_dispatch(TN_OP_leaky_relu_backward, TN_ARGS(args[0], args[1], TN_D((lo + hi) / 2), args[6]), rets);
}

/* upstream's _dropout_impl for the feature and alpha variants: identity when p == 0, not
 * training or empty; zeros when p == 1; else a Bernoulli(1 - p) mask (one value per
 * (batch, channel) for the feature forms) scaled to keep the mean (alpha: the SELU-preserving
 * affine map). */
static tn_status dropout_impl(const tn_value *args, tn_value *rets, bool feature, bool alpha) {
    tn_tensor *x = args[0].u.t;
    double p = args[1].u.d;
    bool train = args[2].u.b;
    if (!(p >= 0 && p <= 1)) /* NaN too, in either mode */
        return tn_error(TN_ERR_RUNTIME, "dropout probability has to be between 0 and 1, but got %g", p);
    if (p == 0 || !train || tn_tensor_numel(x) == 0) {
        tn_tensor_retain(x);
        rets[0] = tn_value_tensor(x);
        return TN_OK;
    }
    tn_cx c = {0};
    if (p == 1) {
        tn_value dt = {.tag = TN_V_DTYPE}, dev = {.tag = TN_V_DEVICE};
        dt.u.dtype = x->dtype;
        dev.u.device = x->storage->device;
        tn_tensor *z0 = tn_cx_call(&c, TN_OP_zeros, TN_ARGS(tn_value_intlist(NULL, 0), dt, TN_NONE, dev, TN_NONE));
        return tn_cx_finish(&c, mul(&c, x, z0), rets);
    }
    tn_tensor *noise;
    if (feature) {
        if (x->ndim < 2) return tn_error(TN_ERR_RUNTIME, "Feature dropout requires at least 2 dimensions in the input");
        int64_t shape[TN_MAX_DIMS];
        shape[0] = x->sizes[0];
        shape[1] = x->sizes[1];
        for (int k = 2; k < x->ndim; k++) shape[k] = 1;
        noise = tn_cx_call(&c, TN_OP_new_empty, TN_ARGS(TN_T(x), tn_value_intlist(shape, x->ndim), TN_NONE, TN_NONE, TN_NONE, TN_NONE));
    } else {
        noise = tn_cx_call(&c, TN_OP_empty_like, TN_ARGS(TN_T(x), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_NONE));
    }
    if (noise) {
        tn_value r[1];
        tn_status st = tn_dispatch(TN_OP_bernoulli__float, TN_ARGS(TN_T(noise), TN_D(1 - p), TN_NONE), r);
        if (st == TN_OK) tn_value_release(&r[0]);
        tn_cx_fail(&c, st);
    }
    if (!alpha) return tn_cx_finish(&c, mul(&c, x, tn_cx_call(&c, TN_OP_div_Scalar, TN_ARGS(TN_T(noise), TN_D(1 - p)))), rets);
    const double al = 1.7580993408473766; /* SELU's -alpha * scale */
    double a = 1. / sqrt((al * al * p + 1) * (1 - p));
    tn_tensor *b = adds(&c, muls(&c, adds(&c, noise, TN_I(-1)), TN_D(al * a)), TN_D(al * a * p));
    tn_tensor *o = add(&c, mul(&c, x, muls(&c, noise, TN_D(a))), b);
    return tn_cx_finish(&c, o, rets);
}
/* aten::feature_dropout / alpha_dropout / feature_alpha_dropout(input, p, train) */
tn_status tn_op_feature_dropout(const tn_value *a, tn_value *r) { return dropout_impl(a, r, true, false); }
tn_status tn_op_alpha_dropout(const tn_value *a, tn_value *r) { return dropout_impl(a, r, false, true); }
tn_status tn_op_feature_alpha_dropout(const tn_value *a, tn_value *r) { return dropout_impl(a, r, true, true); }

/* aten::one_hot(self, num_classes=-1): Long indices to a Long one-hot along a new last dim */
tn_status tn_op_one_hot(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    int64_t nc = args[1].u.i;
    if (x->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "one_hot is only applicable to index tensor of type LongTensor.");
    tn_cx c = {0};
    int64_t n = tn_tensor_numel(x);
    if (n == 0 && nc <= 0) return tn_error(TN_ERR_RUNTIME, "Can not infer total number of classes from empty tensor.");
    if (tn_tensor_is_meta(x) && nc < 0)
        return tn_error(TN_ERR_RUNTIME, "Tensor.item() cannot be called on meta tensors"); /* upstream reads the max */
    if (n > 0 && !tn_tensor_is_meta(x)) {
        tn_tensor *mn = tn_cx_call(&c, TN_OP_min, TN_ARGS(TN_T(x)));
        tn_tensor *mx = tn_cx_call(&c, TN_OP_max, TN_ARGS(TN_T(x)));
        if (c.st == TN_OK) {
            int64_t lo = *(const int64_t *)tn_tensor_data(mn), hi = *(const int64_t *)tn_tensor_data(mx);
            if (lo < 0) tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "Class values must be non-negative."));
            else if (nc == -1) nc = hi + 1;
            else if (hi >= nc) tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "Class values must be smaller than num_classes."));
        }
    }
    int64_t shape[TN_MAX_DIMS + 1];
    memcpy(shape, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    shape[x->ndim] = nc;
    tn_value dl = {.tag = TN_V_DTYPE};
    dl.u.dtype = TN_DTYPE_INT64;
    tn_value dev = {.tag = TN_V_DEVICE};
    dev.u.device = x->storage->device;
    tn_tensor *z = c.st == TN_OK ? tn_cx_call(&c, TN_OP_zeros, TN_ARGS(tn_value_intlist(shape, x->ndim + 1), dl, TN_NONE, dev, TN_NONE)) : NULL;
    tn_tensor *idx = tn_cx_call(&c, TN_OP_unsqueeze, TN_ARGS(TN_T(x), TN_I(-1)));
    tn_tensor *o = tn_cx_call(&c, TN_OP_scatter_value, TN_ARGS(TN_T(z), TN_I(-1), TN_T(idx), TN_I(1)));
    return tn_cx_finish(&c, o, rets);
}

/* pixel_shuffle / pixel_unshuffle: (*, C r^2, H, W) <-> (*, C, H r, W r) by a reshape, a
 * permute and a reshape (upstream's math fallback; the result is a fresh contiguous copy) */
static tn_status pixel_shuffle_impl(const tn_value *args, tn_value *rets, bool un) {
    tn_tensor *x = args[0].u.t;
    int64_t r = args[1].u.i;
    const char *name = un ? "pixel_unshuffle" : "pixel_shuffle";
    if (x->ndim < 3)
        return tn_error(TN_ERR_RUNTIME, "%s expects input to have at least 3 dimensions, but got input with %d dimension(s)", name, x->ndim);
    if (r <= 0)
        return tn_error(TN_ERR_RUNTIME, "%s expects a positive %s, but got %lld", name, un ? "downscale_factor" : "upscale_factor", (long long)r);
    int nb = x->ndim - 3;
    int64_t C = x->sizes[nb], H = x->sizes[nb + 1], W = x->sizes[nb + 2], rr;
    if (!un && __builtin_mul_overflow(r, r, &rr)) /* upstream's check; before, r * r wrapped to 0 and C % 0 trapped */
        return tn_error(TN_ERR_VALUE, "upscale factor is too large, (upscale_factor)^2 overflowed: upscale_factor=%lld",
                        (long long)r);
    if (!un && C % (r * r) != 0)
        return tn_error(TN_ERR_RUNTIME, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=%lld is not divisible by %lld",
                        (long long)C, (long long)(r * r));
    if (un && (H % r != 0 || W % r != 0))
        return tn_error(TN_ERR_RUNTIME, "pixel_unshuffle expects %s to be divisible by downscale_factor, but input.size(%d)=%lld is not divisible by %lld",
                        H % r ? "height" : "width", H % r ? -2 : -1, (long long)(H % r ? H : W), (long long)r);
    if (un && tn_tensor_numel(x) == 0) { /* upstream returns an empty input's clone, its shape unchanged */
        tn_value ca[2] = {args[0], TN_MF(0)};
        tn_tensor *y;
        TN_TRY(tn_dispatch_one(TN_OP_clone, ca, &y));
        rets[0] = tn_value_tensor(y);
        return TN_OK;
    }
    int64_t s1[TN_MAX_DIMS + 2], s2[TN_MAX_DIMS], perm[TN_MAX_DIMS + 2];
    for (int k = 0; k < nb; k++) s1[k] = s2[k] = x->sizes[k], perm[k] = k;
    if (!un) { /* (C', r, r, H, W) -> (C', H, r, W, r) */
        int64_t oc = C / (r * r);
        int64_t a[5] = {oc, r, r, H, W}, p[5] = {0, 3, 1, 4, 2}, b[3] = {oc, H * r, W * r};
        memcpy(s1 + nb, a, sizeof a);
        for (int k = 0; k < 5; k++) perm[nb + k] = nb + p[k];
        memcpy(s2 + nb, b, sizeof b);
    } else { /* (C, H', r, W', r) -> (C, r, r, H', W') */
        int64_t oh = H / r, ow = W / r;
        int64_t a[5] = {C, oh, r, ow, r}, p[5] = {0, 2, 4, 1, 3}, b[3] = {C * r * r, oh, ow};
        memcpy(s1 + nb, a, sizeof a);
        for (int k = 0; k < 5; k++) perm[nb + k] = nb + p[k];
        memcpy(s2 + nb, b, sizeof b);
    }
    tn_cx c = {0};
    tn_tensor *v = tn_cx_call(&c, TN_OP_reshape, TN_ARGS(TN_T(x), tn_value_intlist(s1, nb + 5)));
    v = tn_cx_call(&c, TN_OP_permute, TN_ARGS(TN_T(v), tn_value_intlist(perm, nb + 5)));
    v = tn_cx_call(&c, TN_OP_clone, TN_ARGS(TN_T(v), TN_MF(0)));
    v = tn_cx_call(&c, TN_OP_view, TN_ARGS(TN_T(v), tn_value_intlist(s2, nb + 3)));
    return tn_cx_finish(&c, v, rets);
}
tn_status tn_op_pixel_shuffle(const tn_value *a, tn_value *r) { return pixel_shuffle_impl(a, r, false); }
tn_status tn_op_pixel_unshuffle(const tn_value *a, tn_value *r) { return pixel_shuffle_impl(a, r, true); }

/* aten::channel_shuffle(self, groups): (N, g, C/g, *) -> (N, C/g, g, *) */
tn_status tn_op_channel_shuffle(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    int64_t g = args[1].u.i;
    if (x->ndim <= 2)
        return tn_error(TN_ERR_RUNTIME, "channel_shuffle expects input to have at least 3 dimensions, but got input with %d dimension(s)", x->ndim);
    if (g <= 0) return tn_error(TN_ERR_RUNTIME, "Number of groups to divide channels in must be positive. Value of groups:%lld", (long long)g);
    if (x->sizes[1] % g != 0)
        return tn_error(TN_ERR_RUNTIME, "Number of channels must be divisible by groups. Got %lld channels and %lld groups.", (long long)x->sizes[1], (long long)g);
    int64_t s1[TN_MAX_DIMS + 1], perm[TN_MAX_DIMS + 1];
    s1[0] = x->sizes[0];
    s1[1] = g;
    s1[2] = x->sizes[1] / g;
    for (int k = 2; k < x->ndim; k++) s1[k + 1] = x->sizes[k];
    for (int k = 0; k <= x->ndim; k++) perm[k] = k;
    perm[1] = 2;
    perm[2] = 1;
    tn_cx c = {0};
    tn_tensor *v = tn_cx_call(&c, TN_OP_reshape, TN_ARGS(TN_T(x), tn_value_intlist(s1, x->ndim + 1)));
    v = tn_cx_call(&c, TN_OP_permute, TN_ARGS(TN_T(v), tn_value_intlist(perm, x->ndim + 1)));
    v = tn_cx_call(&c, TN_OP_clone, TN_ARGS(TN_T(v), TN_MF(0)));
    v = tn_cx_call(&c, TN_OP_reshape, TN_ARGS(TN_T(v), tn_value_intlist(x->sizes, x->ndim)));
    return tn_cx_finish(&c, v, rets);
}

/* ---- 1-d pooling and resampling as their 2-d forms over a height-1 image ---------------
 * upstream's own 1-d entry points (avg_pool1d, adaptive_avg_pool1d, max_pool1d) do the same
 * unsqueeze / 2-d op / squeeze; the 1-d upsampling kernels index the width exactly as the
 * 2-d ones do with a height of 1 at scale 1. */

static tn_status check_1d_input(const char *name, const tn_tensor *x) {
    if (x->ndim != 2 && x->ndim != 3)
        return tn_error(TN_ERR_RUNTIME, "%s: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got: %dD", name, x->ndim);
    return TN_OK;
}

/* a 1-element int[1] list as the 2-d pair (fill, v); an empty list stays empty */
static tn_value pair_of(const tn_value *v, int64_t fill, int64_t *buf) {
    if (v->tag != TN_V_INTLIST || v->u.ilist.n == 0) return v->tag == TN_V_INTLIST ? tn_value_intlist(buf, 0) : *v;
    buf[0] = fill;
    buf[1] = v->u.ilist.data[0];
    return tn_value_intlist(buf, 2);
}

static tn_tensor *unsq(tn_cx *c, tn_tensor *x) { return tn_cx_call(c, TN_OP_unsqueeze, TN_ARGS(TN_T(x), TN_I(-2))); }
static tn_tensor *sq(tn_cx *c, tn_tensor *x) { return tn_cx_call(c, TN_OP_squeeze_dim, TN_ARGS(TN_T(x), TN_I(-2))); }

/* upstream's check1d: a 1-d pooling's int[1] argument holds one int (stride may be empty) */
static tn_status check_1d_list(const char *op, const char *arg, const tn_value *v, bool may_be_empty, bool max_pool) {
    if (v->tag != TN_V_INTLIST || v->u.ilist.n == 1 || (may_be_empty && v->u.ilist.n == 0)) return TN_OK;
    if (!max_pool)
        return tn_error(TN_ERR_RUNTIME, "%s() argument '%s' should contain one int (got %lld)", op, arg,
                        (long long)v->u.ilist.n);
    return tn_error(TN_ERR_RUNTIME, "%s() %s must be %san int, list of ints, or tuple of ints of size 1 but got size %lld",
                    op, arg, may_be_empty ? "None, " : "", (long long)v->u.ilist.n);
}

/* aten::avg_pool1d(self, kernel_size, stride, padding, ceil_mode, count_include_pad) */
tn_status tn_op_avg_pool1d(const tn_value *args, tn_value *rets) {
    TN_TRY(check_1d_input("avg_pool1d", args[0].u.t));
    TN_TRY(check_1d_list("avg_pool1d", "kernel_size", &args[1], false, false));
    TN_TRY(check_1d_list("avg_pool1d", "stride", &args[2], true, false));
    TN_TRY(check_1d_list("avg_pool1d", "padding", &args[3], false, false));
    int64_t k[2], s[2], p[2];
    tn_cx c = {0};
    tn_tensor *o = tn_cx_call(&c, TN_OP_avg_pool2d, TN_ARGS(TN_T(unsq(&c, args[0].u.t)), pair_of(&args[1], 1, k), pair_of(&args[2], 1, s),
                                                           pair_of(&args[3], 0, p), args[4], args[5], TN_NONE));
    return tn_cx_finish(&c, sq(&c, o), rets);
}

/* aten::max_pool1d_with_indices / max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode) */
static tn_status max_pool1d_impl(const tn_value *args, tn_value *rets, bool with_indices) {
    TN_TRY(check_1d_input("max_pool1d", args[0].u.t));
    TN_TRY(check_1d_list("max_pool1d", "kernel_size", &args[1], false, true));
    TN_TRY(check_1d_list("max_pool1d", "stride", &args[2], true, true));
    TN_TRY(check_1d_list("max_pool1d", "padding", &args[3], false, true));
    TN_TRY(check_1d_list("max_pool1d", "dilation", &args[4], false, true));
    int64_t k[2], s[2], p[2], d[2];
    tn_cx c = {0};
    tn_value r[2];
    tn_tensor *u = unsq(&c, args[0].u.t);
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    if (!with_indices) /* values only: max_pool2d's own kernel, no indices to find and keep (with
                        * them: 8.7x upstream's time for 16 x 64 x 1024) */
        return tn_cx_finish(&c, sq(&c, tn_cx_call(&c, TN_OP_max_pool2d, TN_ARGS(TN_T(u), pair_of(&args[1], 1, k), pair_of(&args[2], 1, s),
                                                                                pair_of(&args[3], 0, p), pair_of(&args[4], 1, d), args[5]))), rets);
    tn_status st = tn_dispatch(TN_OP_max_pool2d_with_indices, TN_ARGS(TN_T(u), pair_of(&args[1], 1, k), pair_of(&args[2], 1, s),
                                                                     pair_of(&args[3], 0, p), pair_of(&args[4], 1, d), args[5]), r);
    if (st != TN_OK) { tn_cx_fail(&c, st); return tn_cx_finish(&c, NULL, rets); }
    tn_cx_keep(&c, r[0].u.t);
    tn_cx_keep(&c, r[1].u.t);
    tn_value_release(&r[0]);
    tn_value_release(&r[1]);
    tn_tensor *v = sq(&c, r[0].u.t), *i = with_indices ? sq(&c, r[1].u.t) : NULL;
    if (with_indices && c.st == TN_OK) {
        tn_tensor_retain(i);
        rets[1] = tn_value_tensor(i);
    }
    st = tn_cx_finish(&c, v, rets);
    if (st != TN_OK && with_indices && i) tn_tensor_release(i);
    return st;
}
tn_status tn_op_max_pool1d_with_indices(const tn_value *a, tn_value *r) { return max_pool1d_impl(a, r, true); }
tn_status tn_op_max_pool1d(const tn_value *a, tn_value *r) { return max_pool1d_impl(a, r, false); }

/* aten::adaptive_avg_pool1d(self, output_size) */
tn_status tn_op_adaptive_avg_pool1d(const tn_value *args, tn_value *rets) {
    TN_TRY(check_1d_input("adaptive_avg_pool1d", args[0].u.t));
    if (args[1].u.ilist.n != 1) return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool1d: output_size must be 1");
    int64_t o[2];
    tn_cx c = {0};
    tn_tensor *y = tn_cx_call(&c, TN_OP_adaptive_avg_pool2d, TN_ARGS(TN_T(unsq(&c, args[0].u.t)), pair_of(&args[1], 1, o)));
    return tn_cx_finish(&c, sq(&c, y), rets);
}


/* aten::embedding_renorm(self, indices, max_norm, norm_type), the functional form of
 * embedding_renorm_ (the door derives the in-place one): each distinct row indexed whose
 * norm_type-norm exceeds max_norm is scaled by max_norm / (norm + 1e-7). */
tn_status tn_op_embedding_renorm(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *idx = args[1].u.t;
    double max_norm = args[2].u.d, p = args[3].u.d;
    if (self->ndim != 2)
        return tn_error(TN_ERR_RUNTIME, "Expected 2-dimensional tensor, but got %d-dimensional tensor for argument #1 'self' (while checking arguments for embedding_renorm_)", self->ndim);
    if (idx->dtype != TN_DTYPE_INT64 && idx->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_RUNTIME, "Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, Int; but got %s instead (while checking arguments for embedding_renorm_)",
                        tn_dtype_infos[idx->dtype].c10_name);
    tn_cx c = {0};
    int64_t m1 = -1, one = 1;
    tn_tensor *flat = tn_cx_call(&c, TN_OP_reshape, TN_ARGS(TN_T(idx), tn_value_intlist(&m1, 1)));
    tn_tensor *u = tn_cx_call(&c, TN_OP__unique2, TN_ARGS(TN_T(flat), TN_B(true), TN_B(false), TN_B(false)));
    tn_tensor *rows = tn_cx_call(&c, TN_OP_index_select, TN_ARGS(TN_T(self), TN_I(0), TN_T(u)));
    tn_tensor *norms = tn_cx_call(&c, TN_OP_linalg_vector_norm, TN_ARGS(TN_T(rows), TN_D(p), tn_value_intlist(&one, 1), TN_B(true), TN_NONE));
    tn_tensor *scale = muls(&c, unary(&c, TN_OP_reciprocal, adds(&c, norms, TN_D(1e-7))), TN_D(max_norm));
    tn_tensor *ones = tn_cx_call(&c, TN_OP_ones_like, TN_ARGS(TN_T(scale), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_MF(0)));
    scale = where(&c, cmps(&c, TN_OP_gt_Scalar, norms, TN_D(max_norm)), scale, ones);
    if (u && u->dtype != TN_DTYPE_INT64) { /* index_copy takes int64 indices only */
        tn_value d = {.tag = TN_V_DTYPE};
        d.u.dtype = TN_DTYPE_INT64;
        u = tn_cx_call(&c, TN_OP__to_copy, TN_ARGS(TN_T(u), d, TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE));
    }
    tn_tensor *o = tn_cx_call(&c, TN_OP_index_copy, TN_ARGS(TN_T(self), TN_I(0), TN_T(u), TN_T(mul(&c, rows, scale))));
    return tn_cx_finish(&c, o, rets);
}

/* ---- circular padding -------------------------------------------------------------------
 * aten::_pad_circular(self, pad): each padded dim (pad lists the last dim first, (left,
 * right) pairs) is first cropped by its negative pads, then wrapped: out[j] = crop[(j -
 * left) mod n]. Built as narrow + cat per dim, so autograd records the parts; the values are
 * what upstream's slice copies produce. */
tn_status tn_op__pad_circular(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    const int64_t *pad = args[1].u.ilist.data;
    int64_t np = args[1].u.ilist.n, npd = np / 2, nonpad = x->ndim - npd;
    if (nonpad != 1 && nonpad != 2) /* an odd trailing entry pads nothing, as upstream's pad.size() / 2 */
        return tn_error(TN_ERR_RUNTIME, "Invalid padding size, expected 1 or 2 non-padded dimensions, which would be "
                                        "equivalent to padding of length %d or %d respectively but got %lld",
                        (x->ndim - 1) * 2, (x->ndim - 2) * 2, (long long)np);
    for (int64_t i = 0; i < npd; i++) {
        int64_t l = pad[2 * (npd - i - 1)], r = pad[2 * (npd - i - 1) + 1], n = x->sizes[nonpad + i];
        if (l > n || r > n) return tn_error(TN_ERR_RUNTIME, "Padding value causes wrapping around more than once.");
        if (n + l + r < 0) return tn_error(TN_ERR_RUNTIME, "Negative padding value is resulting in an empty dimension");
    }
    tn_cx c = {0};
    tn_tensor *v = x;
    for (int64_t i = 0; i < npd; i++) {
        int64_t dim = x->ndim - 1 - i, l = pad[2 * i], r = pad[2 * i + 1];
        int64_t lo = l < 0 ? -l : 0, hi = r < 0 ? -r : 0, n = v->sizes[dim] - lo - hi;
        if (lo || hi) v = tn_cx_call(&c, TN_OP_narrow, TN_ARGS(TN_T(v), TN_I(dim), TN_I(lo), TN_I(n)));
        if (!v) break;
        if (l > n || r > n) { /* the crop left less than a wrap needs */
            tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "Padding value causes wrapping around more than once."));
            break;
        }
        tn_tensor *parts[3];
        int k = 0;
        if (l > 0) parts[k++] = tn_cx_call(&c, TN_OP_narrow, TN_ARGS(TN_T(v), TN_I(dim), TN_I(n - l), TN_I(l)));
        parts[k++] = v;
        if (r > 0) parts[k++] = tn_cx_call(&c, TN_OP_narrow, TN_ARGS(TN_T(v), TN_I(dim), TN_I(0), TN_I(r)));
        if (k > 1) v = tn_cx_call(&c, TN_OP_cat, TN_ARGS(tn_value_tensorlist(parts, k), TN_I(dim)));
        if (!v) break;
    }
    /* a result that is only a crop is still a fresh tensor, as upstream's */
    if (v == x || (c.st == TN_OK && v && v->storage == x->storage))
        v = tn_cx_call(&c, TN_OP_clone, TN_ARGS(TN_T(v), TN_MF(0)));
    return tn_cx_finish(&c, v, rets);
}
