/* formulas_reduce.c — derivatives of reductions and of matrix products (rows in
 * formulas.def). */
#include <math.h>
#include <string.h>

#include "autograd/formulas.h"

#define F(name) void name(tn_grad_ctx *c)

/* The reduced dims of a `int[1]? dim` argument, wrapped and sorted; all when None/empty. */
static int reduced_dims(const tn_value *v, int ndim, int64_t *dims) {
    bool mark[TN_MAX_DIMS] = {0};
    if (v->tag != TN_V_INTLIST || v->u.ilist.n == 0) {
        for (int i = 0; i < ndim; i++) dims[i] = i;
        return ndim;
    }
    for (int64_t k = 0; k < v->u.ilist.n; k++) {
        int64_t d = v->u.ilist.data[k];
        if (d < 0) d += ndim;
        if (d >= 0 && d < ndim) mark[d] = true;
        if (ndim == 0) mark[0] = false;
    }
    int n = 0;
    for (int i = 0; i < ndim; i++)
        if (mark[i]) dims[n++] = i;
    return n;
}

/* The gradient of a reduction over dims (keepdim or not) broadcast back to geom's shape. */
static tn_tensor *unreduce(tn_grad_ctx *c, tn_tensor *g, const tn_geom *geom, int n, const int64_t *dims, bool keepdim) {
    if (!keepdim && geom->ndim > 0)
        for (int k = 0; k < n; k++) g = ag_unsqueeze(c, g, dims[k]);
    return ag_expand(c, g, geom->ndim, geom->sizes);
}

static int64_t count_of(const tn_geom *g, int n, const int64_t *dims) {
    int64_t m = 1;
    for (int k = 0; k < n; k++) m *= g->sizes[dims[k]];
    return m;
}

F(g_sum) { if (NEED(0)) SET(0, ag_expand(c, GRAD(0), GEOM(0)->ndim, GEOM(0)->sizes)); }

F(g_sum_dim) {
    if (!NEED(0)) return;
    int64_t dims[TN_MAX_DIMS];
    int n = reduced_dims(&ARGV(1), GEOM(0)->ndim, dims);
    SET(0, unreduce(c, GRAD(0), GEOM(0), n, dims, BARG(2)));
}

F(g_mean) {
    if (!NEED(0)) return;
    int64_t numel = 1;
    for (int i = 0; i < GEOM(0)->ndim; i++) numel *= GEOM(0)->sizes[i];
    tn_tensor *e = ag_expand(c, GRAD(0), GEOM(0)->ndim, GEOM(0)->sizes);
    SET(0, ag_div(c, e, ag_scalar_like(c, e, (double)numel)));
}

F(g_mean_dim) {
    if (!NEED(0)) return;
    int64_t dims[TN_MAX_DIMS];
    int n = reduced_dims(&ARGV(1), GEOM(0)->ndim, dims);
    tn_tensor *e = unreduce(c, GRAD(0), GEOM(0), n, dims, BARG(2));
    SET(0, ag_div(c, e, ag_scalar_like(c, e, (double)count_of(GEOM(0), n, dims))));
}

/* amax/amin: the gradient is shared evenly between the tied extremes. */
F(g_amax) {
    if (!NEED(0)) return;
    int64_t dims[TN_MAX_DIMS];
    int n = reduced_dims(&ARGV(1), GEOM(0)->ndim, dims);
    bool keep = BARG(2);
    tn_tensor *r = unreduce(c, RES(0), GEOM(0), n, dims, keep);
    tn_tensor *mask = ag_cast(c, AG(c, eq_Tensor, VT(ARG(0)), VT(r)), GRAD(0)->dtype);
    tn_tensor *cnt = ag_sum_dims(c, mask, n, dims, true);
    tn_tensor *g = unreduce(c, GRAD(0), GEOM(0), n, dims, keep);
    SET(0, ag_div(c, ag_mul(c, g, mask), cnt));
}

/* max.dim / min.dim: the gradient goes to the selected index. */
F(g_max_dim) {
    if (!NEED(0)) return;
    int nd = GEOM(0)->ndim;
    int64_t d = IARG(1);
    if (d < 0) d += nd > 0 ? nd : 1;
    tn_tensor *g = GRAD(0), *idx = RES(1);
    if (nd == 0) { SET(0, g); return; }
    if (!BARG(2)) { g = ag_unsqueeze(c, g, d); idx = ag_unsqueeze(c, idx, d); }
    SET(0, AG(c, scatter_src, VT(ag_zeros(c, GEOM(0))), VI(d), VT(idx), VT(g)));
}

F(g_logsumexp) {
    if (!NEED(0)) return;
    int64_t dims[TN_MAX_DIMS];
    int n = reduced_dims(&ARGV(1), GEOM(0)->ndim, dims);
    bool keep = BARG(2);
    tn_tensor *r = unreduce(c, RES(0), GEOM(0), n, dims, keep);
    tn_tensor *g = unreduce(c, GRAD(0), GEOM(0), n, dims, keep);
    SET(0, ag_mul(c, g, ag_conj(c, ag_unary(c, TN_OP_exp, ag_sub(c, ARG(0), r))))); /* complex: the conjugate */
}

static double correction_of(const tn_value *v) { return v->tag == TN_V_NONE ? 1.0 : ag_scalar(v); }

/* var over dims with a correction: 2 (x - mean) / (N - correction) * grad */
static tn_tensor *var_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *dim, double corr, bool keep) {
    int64_t dims[TN_MAX_DIMS];
    int n = reduced_dims(dim, GEOM(0)->ndim, dims);
    double N = (double)count_of(GEOM(0), n, dims);
    tn_tensor *mean = AG(c, mean_dim, VT(x), VIL(dims, n), VB(true), VN());
    tn_tensor *ge = unreduce(c, g, GEOM(0), n, dims, keep);
    return ag_mul(c, ag_mul_s(c, ag_sub(c, x, mean), 2.0 / (N - corr)), ge);
}

/* var.correction(self, dim, correction, keepdim) / std.correction */
F(g_var) {
    if (NEED(0)) SET(0, var_backward(c, GRAD(0), ARG(0), &ARGV(1), correction_of(&ARGV(2)), BARG(3)));
}
F(g_std) {
    if (NEED(0))
        SET(0, var_backward(c, ag_div(c, GRAD(0), ag_mul_s(c, RES(0), 2.0)), ARG(0), &ARGV(1), correction_of(&ARGV(2)), BARG(3)));
}
/* var.dim(self, dim, unbiased, keepdim) / std.dim */
F(g_var_dim) {
    if (NEED(0)) SET(0, var_backward(c, GRAD(0), ARG(0), &ARGV(1), BARG(2) ? 1.0 : 0.0, BARG(3)));
}
F(g_std_dim) {
    if (NEED(0))
        SET(0, var_backward(c, ag_div(c, GRAD(0), ag_mul_s(c, RES(0), 2.0)), ARG(0), &ARGV(1), BARG(2) ? 1.0 : 0.0, BARG(3)));
}
/* var(self, unbiased) / std(self, unbiased): over every element */
F(g_var_all) {
    tn_value none = VN();
    if (NEED(0)) SET(0, var_backward(c, GRAD(0), ARG(0), &none, BARG(1) ? 1.0 : 0.0, false));
}
F(g_std_all) {
    tn_value none = VN();
    if (NEED(0))
        SET(0, var_backward(c, ag_div(c, GRAD(0), ag_mul_s(c, RES(0), 2.0)), ARG(0), &none, BARG(1) ? 1.0 : 0.0, false));
}

/* linalg_vector_norm(self, ord, dim, keepdim, dtype) for ord 2 (and 1, inf by masks). */
F(g_vector_norm) {
    if (!NEED(0)) return;
    double ord = ag_scalar(&ARGV(1));
    int64_t dims[TN_MAX_DIMS];
    int n = reduced_dims(&ARGV(2), GEOM(0)->ndim, dims);
    bool keep = BARG(3);
    tn_tensor *x = ARG(0), *g = unreduce(c, GRAD(0), GEOM(0), n, dims, keep);
    tn_tensor *r = unreduce(c, RES(0), GEOM(0), n, dims, keep);
    if (ord == 2.0) {
        /* x / norm, with 0 where the norm is 0 (upstream masks it). */
        tn_tensor *q = ag_div(c, x, r);
        q = AG(c, masked_fill_Scalar, VT(q), VT(AG(c, eq_Scalar, VT(r), VD(0.0))), VD(0.0));
        SET(0, ag_mul(c, g, q));
    } else if (ord == 1.0) {
        SET(0, ag_mul(c, g, ag_unary(c, TN_OP_sgn, x)));
    } else {
        ag_fail(c, tn_error(TN_ERR_NOT_IMPLEMENTED,
                            "the derivative of linalg_vector_norm with ord=%g is not implemented by torchnative", ord));
    }
}

/* cumsum backward: reversed cumulative sum of the gradient. */
F(g_cumsum) {
    if (!NEED(0)) return;
    int64_t d = IARG(1);
    if (GEOM(0)->ndim == 0) { SET(0, GRAD(0)); return; }
    if (d < 0) d += GEOM(0)->ndim;
    tn_tensor *f = AG(c, flip, VT(GRAD(0)), VIL(&d, 1));
    SET(0, AG(c, flip, VT(AG(c, cumsum, VT(f), VI(d), VN())), VIL(&d, 1)));
}

/* logcumsumexp backward (upstream's form): with rlcse the logcumsumexp along dim taken from
 * the end, real gradients split into their positive and negative parts, each
 * exp(rlcse(log|g| - result) + self) (log|g| replaced by the dtype's lowest value where g
 * has the other sign), subtracted; complex ones in one piece,
 * conj(exp(rlcse(log(conj g) - result) + self)). */
static tn_tensor *reverse_logcumsumexp(tn_grad_ctx *c, tn_tensor *x, int64_t d) {
    tn_tensor *f = AG(c, flip, VT(x), VIL(&d, 1));
    return AG(c, flip, VT(AG(c, logcumsumexp, VT(f), VI(d))), VIL(&d, 1));
}
F(g_logcumsumexp) {
    if (!NEED(0)) return;
    tn_tensor *g = GRAD(0), *self = ARG(0), *res = RES(0);
    if (GEOM(0)->ndim == 0 || tn_tensor_numel(g) == 0) { SET(0, g); return; }
    int64_t d = IARG(1);
    if (d < 0) d += GEOM(0)->ndim;
    if (tn_dtype_is_complex(g->dtype)) {
        tn_tensor *lg = ag_unary(c, TN_OP_log, ag_conj(c, g));
        SET(0, ag_conj(c, ag_unary(c, TN_OP_exp, ag_add(c, reverse_logcumsumexp(c, ag_sub(c, lg, res), d), self))));
        return;
    }
    double lowest = g->dtype == TN_DTYPE_FLOAT32 ? -3.4028234663852886e38 : g->dtype == TN_DTYPE_FLOAT16 ? -65504.0
                  : g->dtype == TN_DTYPE_BFLOAT16 ? -3.3895313892515355e38 : -1.7976931348623157e308;
    tn_tensor *lo = ag_scalar_like(c, g, lowest), *zero = ag_scalar_like(c, g, 0.0);
    tn_tensor *la = ag_unary(c, TN_OP_log, ag_unary(c, TN_OP_abs, g));
    tn_tensor *pos = ag_where(c, AG(c, gt_Tensor, VT(g), VT(zero)), la, lo);
    tn_tensor *neg = ag_where(c, AG(c, lt_Tensor, VT(g), VT(zero)), la, lo);
    tn_tensor *op = ag_unary(c, TN_OP_exp, ag_add(c, reverse_logcumsumexp(c, ag_sub(c, pos, res), d), self));
    tn_tensor *on = ag_unary(c, TN_OP_exp, ag_add(c, reverse_logcumsumexp(c, ag_sub(c, neg, res), d), self));
    SET(0, ag_sub(c, op, on));
}

/* ---- matrix products ------------------------------------------------------------------- */

/* The products' rows take the other operand's conjugate for complex operands (the
 * adjoint where a real operand's transpose stands); ag_conj is the identity for real ones. */
F(g_mm) {
    if (NEED(0)) SET(0, ag_mm(c, GRAD(0), ag_t(c, ag_conj(c, ARG(1)))));
    if (NEED(1)) SET(1, ag_mm(c, ag_t(c, ag_conj(c, ARG(0))), GRAD(0)));
}

F(g_addmm) {
    double beta = ag_scalar(&ARGV(3)), alpha = ag_scalar(&ARGV(4));
    if (NEED(0)) SET(0, beta == 1.0 ? GRAD(0) : ag_mul_s(c, GRAD(0), beta));
    if (NEED(1)) {
        tn_tensor *r = ag_mm(c, GRAD(0), ag_t(c, ag_conj(c, ARG(2))));
        SET(1, alpha == 1.0 ? r : ag_mul_s(c, r, alpha));
    }
    if (NEED(2)) {
        tn_tensor *r = ag_mm(c, ag_t(c, ag_conj(c, ARG(1))), GRAD(0));
        SET(2, alpha == 1.0 ? r : ag_mul_s(c, r, alpha));
    }
}

/* torchnative's quantised linear (ops/quant_linear.c): the input's gradient is
 * grad @ dequantize(W), so adapters train on a quantised base; the uint8 blocks have none. */
F(g_tn_quant_linear) {
    if (NEED(0)) SET(0, ag_matmul(c, GRAD(0), AG(c, _tn_quant_dequantize, VT(ARG(1)), VI(IARG(2)))));
}

F(g_bmm) {
    if (NEED(0)) SET(0, AG(c, bmm, VT(GRAD(0)), VT(ag_transpose(c, ag_conj(c, ARG(1)), 1, 2))));
    if (NEED(1)) SET(1, AG(c, bmm, VT(ag_transpose(c, ag_conj(c, ARG(0)), 1, 2)), VT(GRAD(0))));
}

F(g_baddbmm) {
    double beta = ag_scalar(&ARGV(3)), alpha = ag_scalar(&ARGV(4));
    if (NEED(0)) SET(0, beta == 1.0 ? GRAD(0) : ag_mul_s(c, GRAD(0), beta));
    if (NEED(1)) SET(1, ag_mul_s(c, AG(c, bmm, VT(GRAD(0)), VT(ag_transpose(c, ag_conj(c, ARG(2)), 1, 2))), alpha));
    if (NEED(2)) SET(2, ag_mul_s(c, AG(c, bmm, VT(ag_transpose(c, ag_conj(c, ARG(1)), 1, 2)), VT(GRAD(0))), alpha));
}

/* matmul for every rank: 1-D operands are lifted to matrices, the products computed with
 * broadcast batches, and the engine sums broadcast batch dims back. */
F(g_matmul) {
    const tn_geom *ga = GEOM(0), *gb = GEOM(1);
    tn_tensor *g = GRAD(0);
    if (ga->ndim == 1 && gb->ndim == 1) {
        if (NEED(0)) SET(0, ag_mul(c, g, ag_conj(c, ARG(1))));
        if (NEED(1)) SET(1, ag_mul(c, g, ag_conj(c, ARG(0))));
        return;
    }
    bool a1 = ga->ndim == 1, b1 = gb->ndim == 1;
    tn_tensor *G = g;
    if (a1) G = ag_unsqueeze(c, G, -2);
    if (b1) G = ag_unsqueeze(c, G, -1);
    if (NEED(0)) { /* needs b only */
        tn_tensor *B = ag_conj(c, b1 ? ag_unsqueeze(c, ARG(1), -1) : ARG(1));
        tn_tensor *gA = ag_matmul(c, G, ag_transpose(c, B, -1, -2));
        if (a1) gA = AG(c, squeeze_dim, VT(gA), VI(-2));
        SET(0, gA);
    }
    if (NEED(1)) { /* needs a only */
        tn_tensor *A = ag_conj(c, a1 ? ag_unsqueeze(c, ARG(0), 0) : ARG(0));
        tn_tensor *gB = ag_matmul(c, ag_transpose(c, A, -1, -2), G);
        if (b1) gB = AG(c, squeeze_dim, VT(gB), VI(-1));
        SET(1, gB);
    }
}

F(g_dot) {
    if (NEED(0)) SET(0, ag_mul(c, GRAD(0), ag_conj(c, ARG(1))));
    if (NEED(1)) SET(1, ag_mul(c, GRAD(0), ag_conj(c, ARG(0))));
}

F(g_mv) {
    if (NEED(0)) SET(0, AG(c, outer, VT(GRAD(0)), VT(ag_conj(c, ARG(1)))));
    if (NEED(1)) SET(1, AG(c, mv, VT(ag_t(c, ag_conj(c, ARG(0)))), VT(GRAD(0))));
}

F(g_outer) {
    if (NEED(0)) SET(0, AG(c, mv, VT(GRAD(0)), VT(ag_conj(c, ARG(1)))));
    if (NEED(1)) SET(1, AG(c, mv, VT(ag_t(c, GRAD(0))), VT(ag_conj(c, ARG(0)))));
}

/* linear(input, weight, bias): input @ weight^T + bias over any leading dims. */
F(g_linear) {
    const tn_geom *gw = GEOM(1);
    tn_tensor *g = GRAD(0);
    if (NEED(0)) SET(0, ag_matmul(c, g, ARG(1))); /* needs weight only */
    if (NEED(1)) {                                  /* needs input only */
        int64_t go[2] = {-1, gw->sizes[0]}, xi[2] = {-1, gw->ndim > 1 ? gw->sizes[1] : 1};
        tn_tensor *g2 = ag_reshape(c, g, 2, go), *x2 = ag_reshape(c, ARG(0), 2, xi);
        tn_tensor *dw = ag_mm(c, ag_t(c, g2), x2);
        SET(1, gw->ndim == 1 ? ag_reshape(c, dw, 1, gw->sizes) : dw);
    }
    if (ARGV(2).tag == TN_V_TENSOR && NEED(2)) SET(2, g);
}
