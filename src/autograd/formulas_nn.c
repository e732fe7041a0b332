/* formulas_nn.c — derivatives of neural-network operators (rows in formulas.def):
 * softmax family, losses, dropout, normalisations, pooling, convolution. */
#include <math.h>
#include <string.h>

#include "autograd/formulas.h"

#define F(name) void name(tn_grad_ctx *c)
/* First order runs upstream's fused backward operators; create_graph the composites. */
#define FIRST_ORDER() (!tn_grad_mode_enabled())

static int64_t wrap(int64_t d, int nd) { return d < 0 ? d + (nd > 0 ? nd : 1) : d; }

/* _softmax(self, dim, half_to_float): y * (g - sum(g * y, dim)) */
F(g_softmax) {
    if (!NEED(0)) return;
    tn_tensor *y = RES(0), *g = GRAD(0);
    if (FIRST_ORDER()) { SET(0, AG(c, _softmax_backward_data, VT(g), VT(y), ARGV(1), VDT(GEOM(0)->dtype))); return; }
    int64_t d = wrap(IARG(1), y->ndim);
    tn_tensor *s = ag_sum_dims(c, ag_mul(c, g, y), y->ndim ? 1 : 0, &d, true);
    SET(0, ag_mul(c, y, ag_sub(c, g, s)));
}

/* _log_softmax(self, dim, half_to_float): g - exp(y) * sum(g, dim) */
F(g_log_softmax) {
    if (!NEED(0)) return;
    tn_tensor *y = RES(0), *g = GRAD(0);
    if (FIRST_ORDER()) {
        SET(0, AG(c, _log_softmax_backward_data, VT(g), VT(y), ARGV(1), VDT(GEOM(0)->dtype)));
        return;
    }
    int64_t d = wrap(IARG(1), y->ndim);
    tn_tensor *s = ag_sum_dims(c, g, y->ndim ? 1 : 0, &d, true);
    SET(0, ag_sub(c, g, ag_mul(c, ag_unary(c, TN_OP_exp, y), s)));
}

/* nll_loss_forward(self, target, weight, reduction, ignore_index) -> (output, total_weight).
 * d self[n, target[n]] = -w[target[n]] * g (/ total_weight for 'mean'), 0 where ignored. */
F(g_nll_loss) {
    if (!NEED(0)) return;
    const tn_geom *x = GEOM(0);
    if (FIRST_ORDER()) {
        tn_op_id bop = x->ndim == 4 ? TN_OP_nll_loss2d_backward : TN_OP_nll_loss_backward;
        tn_value a[7] = {VT(GRAD(0)), VT(ARG(0)), VT(ARG(1)), ARGV(2).tag == TN_V_TENSOR ? VT(ARG(2)) : VN(), ARGV(3),
                         ARGV(4), VT(RES(1))};
        SET(0, ag_op(c, bop, 7, a));
        return;
    }
    tn_tensor *t = ARG(1), *w = ARGV(2).tag == TN_V_TENSOR ? ARG(2) : NULL, *g = GRAD(0);
    int64_t red = IARG(3), ignore = IARG(4);
    int cdim = x->ndim == 1 ? 0 : 1;
    tn_tensor *valid = AG(c, ne_Scalar, VT(t), VI(ignore));
    tn_tensor *tsafe = AG(c, masked_fill_Scalar, VT(t), VT(AG(c, logical_not, VT(valid))), VI(0));
    tn_tensor *wt;
    if (w) {
        int64_t flat = -1;
        tn_tensor *tf = ag_reshape(c, ag_contiguous(c, tsafe), 1, &flat);
        wt = ag_reshape(c, AG(c, index_select, VT(w), VI(0), VT(tf)), tsafe ? tsafe->ndim : 0, tsafe ? tsafe->sizes : NULL);
        wt = ag_mul(c, wt, valid);
    } else {
        wt = ag_cast(c, valid, g->dtype);
    }
    tn_tensor *coef = ag_neg(c, wt);
    if (red == 1) coef = ag_div(c, coef, RES(1));     /* mean: / total_weight */
    coef = ag_mul(c, coef, g);                       /* 'none': g has the target's shape */
    tn_tensor *z = ag_zeros(c, x);
    if (x->ndim == 1) {
        tn_tensor *ti = ag_reshape(c, tsafe, 1, (int64_t[]){1});
        tn_tensor *cv = ag_reshape(c, coef, 1, (int64_t[]){1});
        SET(0, AG(c, scatter_src, VT(z), VI(0), VT(ti), VT(cv)));
        return;
    }
    SET(0, AG(c, scatter_src, VT(z), VI(cdim), VT(ag_unsqueeze(c, tsafe, 1)), VT(ag_unsqueeze(c, coef, 1))));
}

static tn_tensor *reduce_grad(tn_grad_ctx *c, tn_tensor *d, tn_tensor *g, int64_t red) {
    if (red == 0) return ag_mul(c, d, g);
    tn_tensor *r = ag_mul(c, d, g);
    if (red == 1 && d) {
        int64_t n = 1;
        for (int i = 0; i < d->ndim; i++) n *= d->sizes[i];
        r = ag_div(c, r, ag_scalar_like(c, r, (double)n));
    }
    return r;
}

/* mse_loss(self, target, reduction): 2 (x - y) g [/ N] */
F(g_mse_loss) {
    tn_tensor *d = ag_mul_s(c, ag_sub(c, ARG(0), ARG(1)), 2.0);
    tn_tensor *r = reduce_grad(c, d, GRAD(0), IARG(2));
    if (NEED(0)) SET(0, r);
    if (NEED(1)) SET(1, ag_neg(c, r));
}

F(g_l1_loss) {
    tn_tensor *d = ag_unary(c, TN_OP_sgn, ag_sub(c, ARG(0), ARG(1)));
    tn_tensor *r = reduce_grad(c, d, GRAD(0), IARG(2));
    if (NEED(0)) SET(0, r);
    if (NEED(1)) SET(1, ag_neg(c, r));
}

F(g_smooth_l1_loss) {
    double beta = ARGV(3).u.d;
    tn_tensor *diff = ag_sub(c, ARG(0), ARG(1)), *d;
    if (beta == 0.0) {
        d = ag_unary(c, TN_OP_sgn, diff);
    } else {
        tn_tensor *small = AG(c, lt_Scalar, VT(ag_unary(c, TN_OP_abs, diff)), VD(beta));
        d = ag_where(c, small, ag_mul_s(c, diff, 1.0 / beta), ag_unary(c, TN_OP_sgn, diff));
    }
    tn_tensor *r = reduce_grad(c, d, GRAD(0), IARG(2));
    if (NEED(0)) SET(0, r);
    if (NEED(1)) SET(1, ag_neg(c, r));
}

/* binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction) */
F(g_bce_logits) {
    tn_tensor *x = ARG(0), *y = ARG(1);
    tn_tensor *w = ARGV(2).tag == TN_V_TENSOR ? ARG(2) : NULL, *pw = ARGV(3).tag == TN_V_TENSOR ? ARG(3) : NULL;
    tn_tensor *s = ag_unary(c, TN_OP_sigmoid, x), *d;
    if (pw) {
        tn_tensor *py = ag_mul(c, pw, y);
        /* ((pw y + 1 - y) sigmoid(x) - pw y) */
        d = ag_sub(c, ag_mul(c, ag_add(c, AG(c, rsub_Scalar, VT(y), VD(1.0), VI(1)), py), s), py);
    } else {
        d = ag_sub(c, s, y);
    }
    if (w) d = ag_mul(c, d, w);
    tn_tensor *r = reduce_grad(c, d, GRAD(0), IARG(4));
    if (NEED(0)) SET(0, r);
    if (NEED(1)) {
        tn_tensor *dt = pw ? ag_neg(c, ag_mul(c, ag_mul(c, pw, x), AG(c, rsub_Scalar, VT(s), VD(1.0), VI(1)))) : ag_neg(c, x);
        /* d/dy of (1-y) x + (1 + (pw-1) y) log(1+exp(-x)) ... = -x - (pw - 1) * log_sigmoid(-x)... */
        if (pw) {
            ag_fail(c, tn_error(TN_ERR_NOT_IMPLEMENTED, "the derivative of binary_cross_entropy_with_logits with respect "
                                                        "to target with pos_weight is not implemented by torchnative"));
            return;
        }
        if (w) dt = ag_mul(c, dt, w);
        SET(1, reduce_grad(c, dt, GRAD(0), IARG(4)));
    }
}

/* native_dropout(input, p, train) -> (output, mask): g * mask / (1 - p) */
F(g_native_dropout) {
    if (!NEED(0)) return;
    double p = ARGV(1).u.d;
    bool train = ARGV(2).tag != TN_V_BOOL || ARGV(2).u.b;
    if (!train) { SET(0, GRAD(0)); return; }
    double scale = p >= 1.0 ? 0.0 : 1.0 / (1.0 - p);
    SET(0, ag_mul_s(c, ag_mul(c, GRAD(0), RES(1)), scale));
}

/* Dims [k, ndim) for a normalisation over the trailing shape starting at k. */
static int trailing(int k, int nd, int64_t *dims) {
    int n = 0;
    for (int i = k; i < nd; i++) dims[n++] = i;
    return n;
}

/* native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd) */
F(g_layer_norm) {
    tn_tensor *x = ARG(0), *w = ARGV(2).tag == TN_V_TENSOR ? ARG(2) : NULL, *g = GRAD(0);
    tn_tensor *mean = RES(1), *rstd = RES(2);
    if (FIRST_ORDER()) {
        bool mask[3] = {NEED(0), w && NEED(2), ARGV(3).tag == TN_V_TENSOR && NEED(3)};
        tn_value m = {.tag = TN_V_BOOLLIST};
        m.u.blist.data = mask;
        m.u.blist.n = 3;
        tn_tensor *o[3];
        tn_value a[8] = {VT(g), VT(x), ARGV(1), VT(mean), VT(rstd), w ? VT(w) : VN(),
                         ARGV(3).tag == TN_V_TENSOR ? VT(ARG(3)) : VN(), m};
        ag_op_n(c, TN_OP_native_layer_norm_backward, 8, a, o, 3);
        if (mask[0]) SET(0, o[0]);
        if (mask[1]) SET(2, o[1]);
        if (mask[2]) SET(3, o[2]);
        return;
    }
    int nd = x->ndim, k = nd - (int)ARGV(1).u.ilist.n;
    int64_t nd_dims[TN_MAX_DIMS], lead_dims[TN_MAX_DIMS];
    int nn = trailing(k, nd, nd_dims), nl = 0;
    for (int i = 0; i < k; i++) lead_dims[nl++] = i;
    tn_tensor *xhat = ag_mul(c, ag_sub(c, x, mean), rstd);
    if (NEED(0)) {
        tn_tensor *gw = w ? ag_mul(c, g, w) : g;
        tn_tensor *m1 = AG(c, mean_dim, VT(gw), VIL(nd_dims, nn), VB(true), VN());
        tn_tensor *m2 = AG(c, mean_dim, VT(ag_mul(c, gw, xhat)), VIL(nd_dims, nn), VB(true), VN());
        SET(0, ag_mul(c, rstd, ag_sub(c, ag_sub(c, gw, m1), ag_mul(c, xhat, m2))));
    }
    if (w && NEED(2)) SET(2, nl ? ag_sum_dims(c, ag_mul(c, g, xhat), nl, lead_dims, false) : ag_mul(c, g, xhat));
    if (ARGV(3).tag == TN_V_TENSOR && NEED(3)) SET(3, nl ? ag_sum_dims(c, g, nl, lead_dims, false) : g);
}

/* _fused_rms_norm(input, normalized_shape, weight, eps) -> (out, rstd) */
F(g_rms_norm) {
    tn_tensor *x = ARG(0), *w = ARGV(2).tag == TN_V_TENSOR ? ARG(2) : NULL, *g = GRAD(0), *rstd = RES(1);
    int nd = x->ndim, k = nd - (int)ARGV(1).u.ilist.n;
    int64_t nd_dims[TN_MAX_DIMS], lead_dims[TN_MAX_DIMS];
    int nn = trailing(k, nd, nd_dims), nl = 0;
    for (int i = 0; i < k; i++) lead_dims[nl++] = i;
    /* complex inputs (complex rstd): the same form with xhat, rstd and the weight conjugated
     * (grad times the conjugate derivative); ag_conj is the identity for real ones */
    tn_tensor *xhat = ag_conj(c, ag_mul(c, x, rstd));
    if (NEED(0)) {
        tn_tensor *gw = w ? ag_mul(c, g, ag_conj(c, w)) : g;
        tn_tensor *m = AG(c, mean_dim, VT(ag_mul(c, gw, xhat)), VIL(nd_dims, nn), VB(true), VN());
        SET(0, ag_mul(c, ag_conj(c, rstd), ag_sub(c, gw, ag_mul(c, xhat, m))));
    }
    if (w && NEED(2)) SET(2, nl ? ag_sum_dims(c, ag_mul(c, g, xhat), nl, lead_dims, false) : ag_mul(c, g, xhat));
}

/* Shape [1, C, 1, ...] for per-channel vectors of an [N, C, ...] input. */
static tn_tensor *per_channel(tn_grad_ctx *c, tn_tensor *v, int nd) {
    int64_t s[TN_MAX_DIMS] = {0};
    for (int i = 0; i < nd && i < TN_MAX_DIMS; i++) s[i] = i == 1 ? -1 : 1;
    return ag_reshape(c, v, nd, s);
}

/* native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
 * eps) -> (out, save_mean, save_invstd); also _native_batch_norm_legit (same layout). */
F(g_batch_norm) {
    tn_tensor *x = ARG(0), *w = ARGV(1).tag == TN_V_TENSOR ? ARG(1) : NULL, *g = GRAD(0);
    bool training = BARG(5);
    if (FIRST_ORDER()) {
        bool mask[3] = {NEED(0), w && NEED(1), ARGV(2).tag == TN_V_TENSOR && NEED(2)};
        tn_value m = {.tag = TN_V_BOOLLIST};
        m.u.blist.data = mask;
        m.u.blist.n = 3;
        tn_tensor *o[3];
        tn_value a[10] = {VT(ag_contiguous(c, g)), VT(x), w ? VT(w) : VN(), ARGV(3).tag == TN_V_TENSOR ? VT(ARG(3)) : VN(),
                          ARGV(4).tag == TN_V_TENSOR ? VT(ARG(4)) : VN(), training ? VT(RES(1)) : VN(),
                          training ? VT(RES(2)) : VN(), VB(training), ARGV(7), m};
        ag_op_n(c, TN_OP_native_batch_norm_backward, 10, a, o, 3);
        for (int i = 0; i < 3; i++)
            if (mask[i]) SET(i, o[i]);
        return;
    }
    int nd = x->ndim;
    int64_t red[TN_MAX_DIMS];
    int nr = 0;
    for (int i = 0; i < nd; i++)
        if (i != 1) red[nr++] = i;
    tn_tensor *mean, *invstd;
    if (training) {
        mean = per_channel(c, RES(1), nd);
        invstd = per_channel(c, RES(2), nd);
    } else {
        double eps = ARGV(7).u.d;
        mean = per_channel(c, ARG(3), nd);
        invstd = per_channel(c, AG(c, rsqrt, VT(ag_add_s(c, ARG(4), eps))), nd);
    }
    tn_tensor *xhat = ag_mul(c, ag_sub(c, x, mean), invstd);
    tn_tensor *gsum = ag_sum_dims(c, g, nr, red, false);
    tn_tensor *gxsum = ag_sum_dims(c, ag_mul(c, g, xhat), nr, red, false);
    if (NEED(0)) {
        tn_tensor *scale = w ? ag_mul(c, invstd, per_channel(c, w, nd)) : invstd;
        if (training) {
            int64_t n = 1;
            for (int i = 0; i < nr; i++) n *= x->sizes[red[i]];
            tn_tensor *m1 = ag_mul_s(c, per_channel(c, gsum, nd), 1.0 / (double)n);
            tn_tensor *m2 = ag_mul_s(c, per_channel(c, gxsum, nd), 1.0 / (double)n);
            SET(0, ag_mul(c, scale, ag_sub(c, ag_sub(c, g, m1), ag_mul(c, xhat, m2))));
        } else {
            SET(0, ag_mul(c, g, scale));
        }
    }
    if (w && NEED(1)) SET(1, gxsum);
    if (ARGV(2).tag == TN_V_TENSOR && NEED(2)) SET(2, gsum);
}

/* _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var,
 * momentum, eps): eval-mode batch norm (argument 5 is momentum, 6 eps). */
F(g_batch_norm_eval) {
    tn_tensor *x = ARG(0), *w = ARGV(1).tag == TN_V_TENSOR ? ARG(1) : NULL, *g = GRAD(0);
    int nd = x->ndim;
    int64_t red[TN_MAX_DIMS];
    int nr = 0;
    for (int i = 0; i < nd; i++)
        if (i != 1) red[nr++] = i;
    double eps = ARGV(6).u.d;
    tn_tensor *mean = per_channel(c, ARG(3), nd);
    tn_tensor *invstd = per_channel(c, AG(c, rsqrt, VT(ag_add_s(c, ARG(4), eps))), nd);
    tn_tensor *xhat = ag_mul(c, ag_sub(c, x, mean), invstd);
    if (NEED(0)) SET(0, ag_mul(c, g, w ? ag_mul(c, invstd, per_channel(c, w, nd)) : invstd));
    if (w && NEED(1)) SET(1, ag_sum_dims(c, ag_mul(c, g, xhat), nr, red, false));
    if (ARGV(2).tag == TN_V_TENSOR && NEED(2)) SET(2, ag_sum_dims(c, g, nr, red, false));
}

/* max_pool2d_with_indices -> (out, indices): indices are flat positions in each (H, W)
 * plane (upstream's convention). First order runs upstream's fused backward operator
 * (its planes threaded, no scatter through zeros); under create_graph the gradient is
 * scatter-added there, which the door records. */
F(g_max_pool2d) {
    if (!NEED(0)) return;
    if (FIRST_ORDER()) {
        SET(0, AG(c, max_pool2d_with_indices_backward, VT(GRAD(0)), VT(ARG(0)), ARGV(1), ARGV(2), ARGV(3), ARGV(4),
                  ARGV(5), VT(RES(1))));
        return;
    }
    const tn_geom *x = GEOM(0);
    tn_tensor *g = ag_contiguous(c, GRAD(0)), *idx = ag_contiguous(c, RES(1));
    int nd = x->ndim;
    int64_t plane = x->sizes[nd - 1] * x->sizes[nd - 2];
    int64_t gplane = g ? g->sizes[nd - 1] * g->sizes[nd - 2] : 0;
    tn_tensor *g3 = ag_reshape(c, g, 2, (int64_t[]){-1, gplane});
    tn_tensor *i3 = ag_reshape(c, idx, 2, (int64_t[]){-1, gplane});
    int64_t rows = g3 ? g3->sizes[0] : 0;
    tn_geom zg = {.ndim = 2, .dtype = x->dtype, .device = x->device, .sizes = {rows, plane}};
    tn_tensor *z = AG(c, scatter_add, VT(ag_zeros(c, &zg)), VI(1), VT(i3), VT(g3));
    SET(0, ag_reshape(c, z, x->ndim, x->sizes));
}

/* convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
 * groups): through aten::convolution_backward. */
F(g_convolution) {
    tn_tensor *outs[3];
    bool mask[3] = {NEED(0), NEED(1), ARGV(2).tag == TN_V_TENSOR && NEED(2)};
    tn_value bias_sizes = VN();
    int64_t bs;
    if (ARGV(2).tag == TN_V_TENSOR) {
        bs = GEOM(2)->sizes[0];
        bias_sizes = VIL(&bs, 1);
    }
    tn_value m = {.tag = TN_V_BOOLLIST};
    m.u.blist.data = mask;
    m.u.blist.n = 3;
    tn_value a[11] = {VT(GRAD(0)), VT(ARG(0)), VT(ARG(1)), bias_sizes, ARGV(3), ARGV(4), ARGV(5), ARGV(6), ARGV(7), ARGV(8), m};
    ag_op_n(c, TN_OP_convolution_backward, 11, a, outs, 3);
    for (int i = 0; i < 3; i++)
        if (mask[i]) SET(i, outs[i]);
}

/* _scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p, is_causal, *, attn_mask,
 * scale) -> (out, logsumexp): through its backward operator. */
F(g_sdpa_flash) {
    tn_tensor *outs[3];
    tn_value a[10] = {VT(ag_contiguous(c, GRAD(0))), VT(ARG(0)), VT(ARG(1)), VT(ARG(2)), VT(RES(0)), VT(RES(1)),
                      ARGV(3), ARGV(4), ARGV(5).tag == TN_V_TENSOR ? VT(ARG(5)) : VN(), ARGV(6)};
    ag_op_n(c, TN_OP__scaled_dot_product_flash_attention_for_cpu_backward, 10, a, outs, 3);
    for (int i = 0; i < 3; i++)
        if (NEED(i)) SET(i, outs[i]);
}

/* _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
 * -> (neg_log_likelihood, log_alpha), and its .Tensor overload: upstream's
 * _ctc_loss_backward from the saved nll and alphas (a kernel without a derivative of its own). */
F(g_ctc_loss) {
    if (!NEED(0)) return;
    bool tl = ARGV(2).tag == TN_V_TENSOR;
    tn_value a[9] = {VT(GRAD(0)), VT(ARG(0)), VT(ARG(1)), tl ? VT(ARG(2)) : ARGV(2), tl ? VT(ARG(3)) : ARGV(3), VT(RES(0)), VT(RES(1)), ARGV(4), ARGV(5)};
    SET(0, ag_op(c, tl ? TN_OP__ctc_loss_backward_Tensor : TN_OP__ctc_loss_backward, 9, a));
}

/* _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
 * include_last_offset, padding_idx) -> (output, offset2bag, bag_size, max_indices) */
F(g_embedding_bag) {
    bool psw = ARGV(6).tag == TN_V_TENSOR;
    if (NEED(0))
        SET(0, AG(c, _embedding_bag_backward, VT(GRAD(0)), VT(ARG(1)), VT(ARG(2)), VT(RES(1)), VT(RES(2)), VT(RES(3)), VI(GEOM(0)->sizes[0]),
                  ARGV(3), ARGV(4), ARGV(5), psw ? VT(ARG(6)) : VN(), ARGV(8)));
    if (psw && NEED(6))
        SET(6, AG(c, _embedding_bag_per_sample_weights_backward, VT(GRAD(0)), VT(ARG(0)), VT(ARG(1)), VT(ARG(2)), VT(RES(1)), ARGV(4), ARGV(8)));
}
