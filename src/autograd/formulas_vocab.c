/* formulas_vocab.c — the vocabulary of the formulas generated from derivatives.yaml
 * (formulas_vocab.h): builders, geometry queries and the counterparts of upstream's
 * FunctionsManual helpers, each a composition of door calls so that double backward works. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/formulas_vocab.h"

void ag_refuse(tn_grad_ctx *c, const char *msg) { ag_fail(c, tn_error(TN_ERR_NOT_IMPLEMENTED, "%s", msg)); }

/* Scope-owned scratch memory: a byte tensor kept in the formula's scope. */
static void *scratch(tn_grad_ctx *c, size_t bytes) {
    if (c->st != TN_OK) return NULL;
    int64_t n = (int64_t)(bytes ? bytes : 1);
    tn_tensor *t;
    tn_status st = tn_tensor_empty(1, &n, TN_DTYPE_UINT8, tn_device_cpu(), &t);
    if (st != TN_OK) { ag_fail(c, st); return NULL; }
    return ag_keep(c, t) ? tn_tensor_data(t) : NULL;
}

const tn_geom *ag_geom_of(tn_grad_ctx *c, const tn_tensor *t) {
    /* after an error (t NULL) a formula still reads the fields; it stops at its next call */
    static const tn_geom none = {.ndim = 0, .dtype = TN_DTYPE_FLOAT32};
    tn_geom *g = t ? scratch(c, sizeof(tn_geom)) : NULL;
    if (!g) return &none;
    tn_geom_of(t, g);
    return g;
}

int64_t ag_size(const tn_geom *g, int64_t k) {
    if (!g) return 0;
    int nd = g->ndim > 0 ? g->ndim : 1;
    if (k < 0) k += nd;
    return (k >= 0 && k < g->ndim) ? g->sizes[k] : 1;
}

int64_t ag_numel(const tn_geom *g) {
    int64_t n = 1;
    for (int i = 0; g && i < g->ndim; i++) n *= g->sizes[i];
    return n;
}

static tn_value list_copy(tn_grad_ctx *c, tn_value l, bool reverse, bool negate) {
    tn_value v = {.tag = TN_V_INTLIST};
    int64_t n = l.tag == TN_V_INTLIST ? l.u.ilist.n : 0;
    int64_t *p = scratch(c, sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!p) n = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = l.u.ilist.data[reverse ? n - 1 - i : i];
        p[i] = negate ? -x : x;
    }
    v.u.ilist.data = p;
    v.u.ilist.n = n;
    return v;
}
tn_value ag_list_reverse(tn_grad_ctx *c, tn_value l) { return list_copy(c, l, true, false); }
tn_value ag_list_neg(tn_grad_ctx *c, tn_value l) { return list_copy(c, l, false, true); }

tn_tensor *ag_scalar_tensor(tn_grad_ctx *c, double v, tn_dtype dt) {
    return AG(c, full, VIL(NULL, 0), VD(v), VDT(dt), VN(), VN(), VN());
}

tn_tensor *ag_zeros_sized(tn_grad_ctx *c, tn_value sizes, tn_dtype dt) {
    if (c->st != TN_OK) return NULL;
    tn_geom g = {.ndim = (int32_t)sizes.u.ilist.n, .dtype = dt, .device = tn_device_cpu()};
    if (sizes.tag != TN_V_INTLIST || g.ndim > TN_MAX_DIMS) {
        ag_fail(c, tn_error(TN_ERR_RUNTIME, "internal: zeros of a non-list size in %s", c->node->name));
        return NULL;
    }
    memcpy(g.sizes, sizes.u.ilist.data, sizeof(int64_t) * (size_t)g.ndim);
    return ag_zeros(c, &g);
}

tn_tensor *ag_op_item(tn_grad_ctx *c, tn_op_id op, int k, int n, tn_value *args) {
    tn_tensor *o[8];
    ag_op_n(c, op, n, args, o, 8);
    return k < 8 ? o[k] : NULL;
}

tn_tensor *ag_rdiv(tn_grad_ctx *c, double s, tn_tensor *t) {
    return t ? ag_div(c, ag_scalar_tensor(c, s, t->dtype), t) : NULL;
}

tn_tensor *ag_maybe_multiply(tn_grad_ctx *c, tn_tensor *t, double s) { return s == 1.0 ? t : ag_mul_s(c, t, s); }

/* ---- small compositions used below ------------------------------------------------------ */
static tn_tensor *zero_like_dtype(tn_grad_ctx *c, tn_tensor *like) {
    return like ? ag_scalar_tensor(c, 0.0, like->dtype) : NULL;
}

static int64_t wrap_dim(int64_t d, int ndim) {
    int n = ndim > 0 ? ndim : 1;
    return d < 0 ? d + n : d;
}

static tn_value tensor_list(tn_tensor **ts, int64_t n) {
    tn_value v = {.tag = TN_V_TENSORLIST};
    v.u.tlist.data = ts;
    v.u.tlist.n = n;
    return v;
}

static bool read_bool(tn_grad_ctx *c, tn_tensor *t) {
    if (!t || c->st != TN_OK) return false;
    return *(const bool *)tn_tensor_data(t);
}

/* Upstream's unsqueeze_multiple: the reduced dims (wrapped, ascending) put back as size 1. */
static tn_tensor *unsqueeze_dims(tn_grad_ctx *c, tn_tensor *t, const tn_value *dim, int ndim) {
    bool mark[TN_MAX_DIMS] = {0};
    if (!dim || dim->tag != TN_V_INTLIST) return t;
    for (int64_t k = 0; k < dim->u.ilist.n; k++) {
        int64_t d = wrap_dim(dim->u.ilist.data[k], ndim);
        if (d >= 0 && d < ndim) mark[d] = true;
    }
    for (int i = 0; i < ndim; i++)
        if (mark[i]) t = ag_unsqueeze(c, t, i);
    return t;
}

/* ---- FunctionsManual counterparts ---------------------------------------------------------- */
void ag_atan2_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *self, tn_tensor *other, const bool *mask,
                       tn_tensor **out) {
    tn_tensor *recip = AG(c, reciprocal, VT(ag_add(c, ag_mul(c, self, self), ag_mul(c, other, other))));
    out[0] = mask[0] ? ag_mul(c, ag_mul(c, g, other), recip) : NULL;
    out[1] = mask[1] ? ag_mul(c, ag_mul(c, g, ag_neg(c, self)), recip) : NULL;
}

tn_tensor *ag_copysign_tensor_self_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *self, tn_tensor *result) {
    tn_tensor *ratio = ag_div(c, result, self);
    ratio = AG(c, masked_fill_Scalar, VT(ratio), VT(AG(c, eq_Scalar, VT(self), VI(0))), VI(0));
    return ag_mul(c, g, ratio);
}

/* Products of the elements before each position along dim (the first gets 1). */
static tn_tensor *exclusive_cumprod(tn_grad_ctx *c, tn_tensor *x, int64_t d) {
    if (!x) return NULL;
    int64_t n = x->sizes[d];
    int64_t sz[TN_MAX_DIMS];
    memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    sz[d] = 1;
    tn_tensor *ones = AG(c, full, VIL(sz, x->ndim), VD(1.0), VDT(x->dtype), VN(), VN(), VN());
    if (n <= 1) return n == 1 ? ones : x;
    tn_tensor *cp = AG(c, cumprod, VT(x), VI(d), VN());
    tn_tensor *parts[2] = {ones, AG(c, narrow, VT(cp), VI(d), VI(0), VI(n - 1))};
    if (!parts[1]) return NULL;
    return AG(c, cat, tensor_list(parts, 2), VI(d));
}

tn_tensor *ag_prod_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, tn_tensor *result, int64_t dim, bool keepdim) {
    if (!g || !x) return NULL;
    if (x->ndim == 0) return g;
    tn_tensor *xx = x;
    int64_t d;
    if (dim == INT64_MIN) {
        int64_t n = tn_tensor_numel(x);
        xx = ag_reshape(c, ag_contiguous(c, x), 1, &n);
        d = 0;
    } else {
        d = wrap_dim(dim, x->ndim);
        if (!keepdim) g = ag_unsqueeze(c, g, d);
    }
    if (!xx) return NULL;
    /* d/dx_i prod = (product before i) * (product after i): correct with zeros, and a
     * composition of differentiable operators. */
    int64_t flipd[1] = {d};
    tn_tensor *left = exclusive_cumprod(c, xx, d);
    tn_tensor *right = AG(c, flip, VT(exclusive_cumprod(c, AG(c, flip, VT(xx), VIL(flipd, 1)), d)), VIL(flipd, 1));
    tn_tensor *others = ag_mul(c, left, right);
    if (dim == INT64_MIN) others = ag_reshape(c, others, x->ndim, x->sizes);
    (void)result;
    return ag_mul(c, g, ag_conj(c, others)); /* complex: grad times the conjugate derivative */
}

tn_tensor *ag_cumprod_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, int64_t dim, tn_tensor *result) {
    if (!g || !x) return NULL;
    if (x->ndim == 0 || tn_tensor_numel(x) == 0) return g;
    int64_t d = wrap_dim(dim, x->ndim), n = x->sizes[d];
    int64_t dl[1] = {d};
    bool zeros = read_bool(c, AG(c, any, VT(AG(c, eq_Scalar, VT(x), VI(0)))));
    if (!zeros) {
        /* sum_{j >= i} g_j result_j / x_i: a reversed cumulative sum (complex: of the
         * conjugates of result and x) */
        tn_tensor *gr = AG(c, flip, VT(ag_mul(c, g, ag_conj(c, result))), VIL(dl, 1));
        tn_tensor *rc = AG(c, flip, VT(AG(c, cumsum, VT(gr), VI(d), VN())), VIL(dl, 1));
        return ag_div(c, rc, ag_conj(c, x));
    }
    /* With zeros: position by position, the cumulative product with x_i replaced by 1. */
    int64_t sz[TN_MAX_DIMS];
    memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    sz[d] = 1;
    tn_tensor *one = AG(c, full, VIL(sz, x->ndim), VD(1.0), VDT(x->dtype), VN(), VN(), VN());
    tn_tensor **cols = scratch(c, sizeof(tn_tensor *) * (size_t)n);
    if (!cols) return NULL;
    for (int64_t i = 0; i < n; i++) {
        tn_tensor *parts[3];
        int np = 0;
        if (i > 0) parts[np++] = AG(c, narrow, VT(x), VI(d), VI(0), VI(i));
        parts[np++] = one;
        if (i < n - 1) parts[np++] = AG(c, narrow, VT(x), VI(d), VI(i + 1), VI(n - 1 - i));
        for (int k = 0; k < np; k++)
            if (!parts[k]) return NULL;
        tn_tensor *xm = AG(c, cat, tensor_list(parts, np), VI(d));
        tn_tensor *y = ag_mul(c, g, ag_conj(c, AG(c, cumprod, VT(xm), VI(d), VN())));
        cols[i] = AG(c, sum_dim_IntList, VT(AG(c, narrow, VT(y), VI(d), VI(i), VI(n - i))), VIL(dl, 1), VB(true), VN());
        if (!cols[i]) return NULL;
    }
    return AG(c, cat, tensor_list(cols, n), VI(d));
}

tn_tensor *ag_evenly_distribute_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, tn_tensor *value) {
    tn_tensor *m = ag_where(c, AG(c, isnan, VT(value)), AG(c, isnan, VT(x)), AG(c, eq_Tensor, VT(x), VT(value)));
    tn_tensor *mf = g ? ag_cast(c, m, g->dtype) : NULL;
    return ag_mul(c, mf, ag_div(c, g, AG(c, sum, VT(mf), VN())));
}

tn_tensor *ag_value_selecting_reduction_backward(tn_grad_ctx *c, tn_tensor *g, int64_t dim, tn_tensor *indices,
                                                 tn_value sizes, bool keepdim) {
    if (!g || !indices) return NULL;
    int nd = (int)sizes.u.ilist.n;
    int64_t d = wrap_dim(dim, nd);
    if (!keepdim && nd > 0) {
        g = ag_unsqueeze(c, g, d);
        indices = ag_unsqueeze(c, indices, d);
    }
    if (nd == 0 || !g) return g;
    return AG(c, scatter_src, VT(ag_zeros_sized(c, sizes, g->dtype)), VI(d), VT(indices), VT(g));
}

tn_tensor *ag_masked_select_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, tn_tensor *mask) {
    if (!g || !x || !mask) return NULL;
    int nd = x->ndim > mask->ndim ? x->ndim : mask->ndim;
    int64_t sz[TN_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        int ix = i - (nd - x->ndim), im = i - (nd - mask->ndim);
        int64_t a = ix >= 0 ? x->sizes[ix] : 1, b = im >= 0 ? mask->sizes[im] : 1;
        sz[i] = a == 1 ? b : a;
    }
    tn_tensor *z = AG(c, zeros, VIL(sz, nd), VDT(g->dtype), VN(), VN(), VN());
    return AG(c, masked_scatter, VT(z), VT(mask), VT(g));
}

tn_tensor *ag_masked_scatter_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *mask, tn_value sizes) {
    int64_t numel = 1;
    for (int64_t i = 0; i < sizes.u.ilist.n; i++) numel *= sizes.u.ilist.data[i];
    tn_tensor *sel = AG(c, masked_select, VT(g), VT(mask));
    if (!sel) return NULL;
    int64_t k = sel->sizes[0];
    if (k < numel) {
        int64_t rest = numel - k;
        tn_tensor *parts[2] = {sel, AG(c, zeros, VIL(&rest, 1), VDT(sel->dtype), VN(), VN(), VN())};
        if (!parts[1]) return NULL;
        sel = AG(c, cat, tensor_list(parts, 2), VI(0));
    } else if (k > numel) {
        sel = AG(c, narrow, VT(sel), VI(0), VI(0), VI(numel));
    }
    return AG(c, reshape, VT(sel), sizes);
}

tn_tensor *ag_norm_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *p, tn_tensor *result,
                            const tn_value *dim, bool keepdim) {
    if (!g || !x || !result) return NULL;
    double pv = (!p || p->tag == TN_V_NONE) ? 2.0 : ag_scalar(p);
    if (pv == 0.0) return ag_zeros_like(c, x);
    bool all = !dim || dim->tag != TN_V_INTLIST || dim->u.ilist.n == 0;
    if (!keepdim && x->ndim != 0 && !all) {
        g = unsqueeze_dims(c, g, dim, x->ndim);
        result = unsqueeze_dims(c, result, dim, x->ndim);
    }
    tn_tensor *zero_norm = AG(c, eq_Scalar, VT(result), VI(0));
    if (pv == 1.0) return ag_mul(c, AG(c, sgn, VT(x)), g);
    if (pv == 2.0)
        return ag_mul(c, x, AG(c, masked_fill_Scalar, VT(ag_div(c, g, result)), VT(zero_norm), VI(0)));
    if (isinf(pv)) {
        tn_tensor *m = ag_cast(c, AG(c, eq_Tensor, VT(AG(c, abs, VT(x))), VT(result)), x->dtype);
        tn_tensor *cnt;
        if (all) cnt = AG(c, sum, VT(m), VN());
        else cnt = AG(c, sum_dim_IntList, VT(m), *dim, VB(true), VN());
        return ag_mul(c, ag_mul(c, AG(c, sgn, VT(x)), ag_div(c, g, cnt)), m);
    }
    if (pv < 1.0) {
        tn_tensor *scaled = ag_mul(c, AG(c, sgn, VT(x)), AG(c, pow_Tensor_Scalar, VT(AG(c, abs, VT(x))), VD(pv - 1.0)));
        scaled = AG(c, masked_fill_Scalar, VT(scaled), VT(AG(c, eq_Scalar, VT(x), VI(0))), VI(0));
        return ag_mul(c, ag_mul(c, scaled, g), AG(c, pow_Tensor_Scalar, VT(result), VD(1.0 - pv)));
    }
    if (pv < 2.0) {
        tn_tensor *scaled = ag_mul(c, AG(c, sgn, VT(x)), AG(c, pow_Tensor_Scalar, VT(AG(c, abs, VT(x))), VD(pv - 1.0)));
        tn_tensor *s = ag_div(c, g, AG(c, pow_Tensor_Scalar, VT(result), VD(pv - 1.0)));
        s = AG(c, masked_fill_Scalar, VT(s), VT(zero_norm), VI(0));
        return ag_mul(c, scaled, s);
    }
    tn_tensor *scaled = ag_mul(c, x, AG(c, pow_Tensor_Scalar, VT(AG(c, abs, VT(x))), VD(pv - 2.0)));
    tn_tensor *s = ag_div(c, g, AG(c, pow_Tensor_Scalar, VT(result), VD(pv - 1.0)));
    s = AG(c, masked_fill_Scalar, VT(s), VT(zero_norm), VI(0));
    return ag_mul(c, scaled, s);
}

tn_tensor *ag_logit_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *eps) {
    if (!g || !x) return NULL;
    bool has_eps = eps && eps->tag != TN_V_NONE;
    double lo = has_eps ? ag_scalar(eps) : 0.0, hi = 1.0 - lo;
    tn_tensor *in = AG(c, logical_and, VT(AG(c, ge_Scalar, VT(x), VD(lo))), VT(AG(c, le_Scalar, VT(x), VD(hi))));
    tn_tensor *d = ag_div(c, g, ag_mul(c, x, AG(c, rsub_Scalar, VT(x), VD(1.0), VI(1))));
    return ag_where(c, in, d, ag_scalar_tensor(c, has_eps ? 0.0 : NAN, x->dtype));
}

tn_tensor *ag_mish_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x) {
    tn_tensor *sig = ag_unary(c, TN_OP_sigmoid, x);
    tn_tensor *tsp = ag_unary(c, TN_OP_tanh, AG(c, softplus, VT(x), VI(1), VI(20)));
    tn_tensor *one_minus = AG(c, rsub_Scalar, VT(AG(c, pow_Tensor_Scalar, VT(tsp), VI(2))), VI(1), VI(1));
    return ag_mul(c, g, ag_add(c, tsp, ag_mul(c, ag_mul(c, x, sig), one_minus)));
}

tn_tensor *ag_bce_target_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, tn_tensor *target, const tn_value *weight,
                                  int64_t reduction) {
    tn_tensor *gt = ag_mul(c, ag_neg(c, AG(c, logit, VT(x), VN())), g);
    if (weight && weight->tag == TN_V_TENSOR) gt = ag_mul(c, gt, weight->u.t);
    if (reduction == 1 && target && gt) gt = ag_div(c, gt, ag_scalar_tensor(c, (double)tn_tensor_numel(target), gt->dtype));
    return gt;
}

tn_tensor *ag_div_tensor_self_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *other, tn_dtype self_dtype,
                                       const tn_value *rounding_mode) {
    if (rounding_mode && rounding_mode->tag != TN_V_NONE) return g ? ag_zeros_like(c, ag_cast(c, g, self_dtype)) : NULL;
    return ag_div(c, g, other);
}

tn_tensor *ag_div_tensor_other_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *self, tn_tensor *other,
                                        const tn_value *rounding_mode) {
    if (rounding_mode && rounding_mode->tag != TN_V_NONE) return g && other ? ag_zeros_like(c, ag_cast(c, g, other->dtype)) : NULL;
    return ag_mul(c, ag_neg(c, g), ag_div(c, ag_div(c, self, other), other));
}

tn_tensor *ag_sgn_backward(tn_grad_ctx *c, tn_tensor *x, tn_tensor *g, tn_tensor *result) {
    (void)result;
    if (x && tn_dtype_is_complex(x->dtype)) {
        ag_refuse(c, "the derivative of aten::sgn for complex inputs is not implemented by torchnative");
        return NULL;
    }
    return ag_zeros_like(c, g);
}

/* grad * conj(result * log(base)) for a Scalar base (complex: its principal logarithm) */
tn_tensor *ag_pow_backward_exponent(tn_grad_ctx *c, tn_tensor *g, const tn_value *base_v, tn_tensor *exponent, tn_tensor *result) {
    if (base_v->tag == TN_V_COMPLEX && base_v->u.c.im != 0) {
        double re = base_v->u.c.re, im = base_v->u.c.im;
        tn_value lb = {.tag = TN_V_COMPLEX};
        lb.u.c.re = log(hypot(re, im));
        lb.u.c.im = atan2(im, re);
        return ag_mul(c, g, ag_conj(c, AG(c, mul_Scalar, VT(result), lb)));
    }
    double base = ag_scalar(base_v);
    tn_tensor *d = ag_mul_s(c, result, log(base));
    if (base == 0.0) d = ag_where(c, AG(c, ge_Scalar, VT(exponent), VI(0)), zero_like_dtype(c, d), d);
    return ag_mul(c, g, ag_conj(c, d));
}

static tn_tensor *opt_tensor(const tn_value *v) { return v && v->tag == TN_V_TENSOR ? v->u.t : NULL; }

tn_tensor *ag_clamp_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *min, const tn_value *max) {
    tn_tensor *lo = opt_tensor(min), *hi = opt_tensor(max), *pred = NULL;
    if (lo && hi)
        pred = AG(c, logical_and, VT(AG(c, ge_Tensor, VT(x), VT(lo))), VT(AG(c, le_Tensor, VT(x), VT(hi))));
    else if (lo) pred = AG(c, ge_Tensor, VT(x), VT(lo));
    else if (hi) pred = AG(c, le_Tensor, VT(x), VT(hi));
    else return g;
    return ag_where(c, pred, g, zero_like_dtype(c, g));
}

void ag_clamp_backward_min_max(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *min, const tn_value *max,
                               const bool *mask, tn_tensor **out) {
    tn_tensor *lo = opt_tensor(min), *hi = opt_tensor(max), *zero = zero_like_dtype(c, g);
    out[0] = out[1] = NULL;
    if (lo && hi) {
        if (mask[0])
            out[0] = ag_where(c, AG(c, logical_and, VT(AG(c, lt_Tensor, VT(x), VT(lo))), VT(AG(c, lt_Tensor, VT(lo), VT(hi)))),
                              g, zero);
        if (mask[1])
            out[1] = ag_where(c, AG(c, logical_or, VT(AG(c, gt_Tensor, VT(x), VT(hi))), VT(AG(c, lt_Tensor, VT(hi), VT(lo)))),
                              g, zero);
    } else if (lo && mask[0]) {
        out[0] = ag_where(c, AG(c, lt_Tensor, VT(x), VT(lo)), g, zero);
    } else if (hi && mask[1]) {
        out[1] = ag_where(c, AG(c, gt_Tensor, VT(x), VT(hi)), g, zero);
    }
}

/* ---- reductions ------------------------------------------------------------------------------ */
/* The reduced dims of an `int[1]? dim` value over ndim dims (all when None or empty). */
static int reduced_dims_of(const tn_value *dim, int ndim, int64_t *dims) {
    bool mark[TN_MAX_DIMS] = {0};
    if (!dim || dim->tag == TN_V_NONE || (dim->tag == TN_V_INTLIST && dim->u.ilist.n == 0)) {
        for (int i = 0; i < ndim; i++) dims[i] = i;
        return ndim;
    }
    if (dim->tag == TN_V_INT) {
        int64_t d = wrap_dim(dim->u.i, ndim);
        if (d >= 0 && d < ndim) mark[d] = true;
    } else if (dim->tag == TN_V_INTLIST) {
        for (int64_t k = 0; k < dim->u.ilist.n; k++) {
            int64_t d = wrap_dim(dim->u.ilist.data[k], ndim);
            if (d >= 0 && d < ndim) mark[d] = true;
        }
    }
    int n = 0;
    for (int i = 0; i < ndim; i++)
        if (mark[i]) dims[n++] = i;
    return n;
}

/* g (the result of a reduction over dims of x) put back to x's shape. */
static tn_tensor *unreduce_to(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, int n, const int64_t *dims, bool keepdim) {
    if (!g || !x) return NULL;
    if (!keepdim && x->ndim > 0)
        for (int k = 0; k < n; k++) g = ag_unsqueeze(c, g, dims[k]);
    return ag_expand(c, g, x->ndim, x->sizes);
}

static int64_t count_over(const tn_tensor *x, int n, const int64_t *dims) {
    int64_t m = 1;
    for (int k = 0; k < n && x; k++) m *= x->sizes[dims[k]];
    return m;
}

tn_tensor *ag_nansum_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *dim, bool keepdim) {
    if (!x) return NULL;
    int64_t dims[TN_MAX_DIMS];
    int n = reduced_dims_of(dim, x->ndim, dims);
    tn_tensor *e = unreduce_to(c, g, x, n, dims, keepdim);
    return ag_mul(c, e, AG(c, logical_not, VT(AG(c, isnan, VT(x)))));
}

/* var over dims with a correction (None: 1): 2 (x - mean) / (N - correction) * g */
static tn_tensor *var_bw(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *dim, const tn_value *corr,
                         bool keepdim) {
    if (!x) return NULL;
    int64_t dims[TN_MAX_DIMS];
    int n = reduced_dims_of(dim, x->ndim, dims);
    double N = (double)count_over(x, n, dims), k = (!corr || corr->tag == TN_V_NONE) ? 1.0 : ag_scalar(corr);
    tn_tensor *mean = AG(c, mean_dim, VT(x), VIL(dims, n), VB(true), VN());
    tn_tensor *ge = unreduce_to(c, g, x, n, dims, keepdim);
    return ag_mul(c, ag_mul_s(c, ag_sub(c, x, mean), 2.0 / (N - k)), ge);
}

static tn_tensor *mean_bw(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *dim, bool keepdim) {
    if (!x) return NULL;
    int64_t dims[TN_MAX_DIMS];
    int n = reduced_dims_of(dim, x->ndim, dims);
    tn_tensor *e = unreduce_to(c, g, x, n, dims, keepdim);
    return ag_div(c, e, ag_scalar_tensor(c, (double)count_over(x, n, dims), e ? e->dtype : x->dtype));
}

tn_tensor *ag_var_mean_backward(tn_grad_ctx *c, tn_tensor *gvar, tn_tensor *gmean, tn_tensor *x, const tn_value *dim,
                                const tn_value *corr, bool keepdim) {
    return ag_add(c, var_bw(c, gvar, x, dim, corr, keepdim), mean_bw(c, gmean, x, dim, keepdim));
}

tn_tensor *ag_std_mean_backward(tn_grad_ctx *c, tn_tensor *gstd, tn_tensor *gmean, tn_tensor *x, tn_tensor *std,
                                const tn_value *dim, const tn_value *corr, bool keepdim) {
    /* std = sqrt(var): the variance's gradient is g / (2 std), 0 where std == 0 */
    tn_tensor *gv = ag_div(c, gstd, ag_mul_s(c, std, 2.0));
    gv = AG(c, masked_fill_Scalar, VT(gv), VT(AG(c, eq_Scalar, VT(std), VI(0))), VI(0));
    return ag_add(c, var_bw(c, gv, x, dim, corr, keepdim), mean_bw(c, gmean, x, dim, keepdim));
}

/* amin/amax-like: g shared evenly among the elements equal to the extreme. */
static tn_tensor *extreme_bw(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, tn_tensor *r, int n, const int64_t *dims,
                             bool keepdim) {
    if (!g || !x) return NULL;
    tn_tensor *mask = ag_cast(c, AG(c, eq_Tensor, VT(x), VT(unreduce_to(c, r, x, n, dims, keepdim))), g->dtype);
    tn_tensor *cnt = ag_sum_dims(c, mask, n, dims, true);
    return ag_div(c, ag_mul(c, unreduce_to(c, g, x, n, dims, keepdim), mask), cnt);
}

tn_tensor *ag_aminmax_backward(tn_grad_ctx *c, tn_tensor *x, const tn_value *dim, bool keepdim, tn_tensor *gmin,
                               tn_tensor *gmax, tn_tensor *min, tn_tensor *max) {
    if (!x) return NULL;
    int64_t dims[TN_MAX_DIMS];
    int n = reduced_dims_of(dim, x->ndim, dims);
    return ag_add(c, extreme_bw(c, gmin, x, min, n, dims, keepdim), extreme_bw(c, gmax, x, max, n, dims, keepdim));
}

/* ---- double backward of upstream's backward operators (second derivatives) ------------------ */
static tn_tensor *reduce_scale(tn_grad_ctx *c, tn_tensor *t, tn_tensor *x, int64_t reduction) {
    return reduction == 1 && x ? ag_div(c, t, ag_scalar_tensor(c, (double)tn_tensor_numel(x), t ? t->dtype : x->dtype))
                               : t;
}

/* glu(x) = a sigmoid(b), x = [a, b] along dim. */
static void glu_halves(tn_grad_ctx *c, tn_tensor *t, int64_t dim, tn_tensor **a, tn_tensor **b) {
    *a = *b = NULL;
    if (!t) return;
    int64_t d = wrap_dim(dim, t->ndim), h = t->sizes[d] / 2;
    *a = AG(c, narrow, VT(t), VI(d), VI(0), VI(h));
    *b = AG(c, narrow, VT(t), VI(d), VI(h), VI(h));
}

tn_tensor *ag_glu_double_backward_grad_output(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, int64_t dim) {
    tn_tensor *a, *b, *ga, *gb;
    glu_halves(c, x, dim, &a, &b);
    glu_halves(c, grad, dim, &ga, &gb);
    tn_tensor *s = ag_unary(c, TN_OP_sigmoid, b);
    tn_tensor *ds = ag_mul(c, s, AG(c, rsub_Scalar, VT(s), VI(1), VI(1)));
    return ag_add(c, ag_mul(c, ga, s), ag_mul(c, gb, ag_mul(c, a, ds)));
}

tn_tensor *ag_glu_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, tn_tensor *x, int64_t dim) {
    tn_tensor *a, *b, *ga, *gb;
    glu_halves(c, x, dim, &a, &b);
    glu_halves(c, grad, dim, &ga, &gb);
    if (!x) return NULL;
    tn_tensor *s = ag_unary(c, TN_OP_sigmoid, b);
    tn_tensor *ds = ag_mul(c, s, AG(c, rsub_Scalar, VT(s), VI(1), VI(1)));
    tn_tensor *da = ag_mul(c, ag_mul(c, gb, go), ds);
    tn_tensor *d2 = ag_mul(c, ds, AG(c, rsub_Scalar, VT(ag_mul_s(c, s, 2.0)), VI(1), VI(1))); /* s'' */
    tn_tensor *db = ag_mul(c, go, ag_add(c, ag_mul(c, ga, ds), ag_mul(c, gb, ag_mul(c, a, d2))));
    tn_tensor *parts[2] = {da, db};
    if (!da || !db) return NULL;
    return AG(c, cat, tensor_list(parts, 2), VI(wrap_dim(dim, x->ndim)));
}

tn_tensor *ag_huber_loss_double_backward_grad_output(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, tn_tensor *x,
                                                     tn_tensor *t, int64_t reduction, double delta) {
    if (reduction == 0) return AG(c, huber_loss_backward, VT(grad), VT(x), VT(t), VI(0), VD(delta));
    tn_tensor *ones = go ? AG(c, full, VIL(go->sizes, go->ndim), VD(1.0), VDT(go->dtype), VN(), VN(), VN()) : NULL;
    tn_tensor *r = AG(c, huber_loss_backward, VT(ones), VT(x), VT(t), VI(reduction), VD(delta));
    return AG(c, sum, VT(ag_mul(c, r, grad)), VN());
}

tn_tensor *ag_huber_loss_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, tn_tensor *t, int64_t reduction,
                                         double delta) {
    tn_tensor *in = AG(c, lt_Scalar, VT(AG(c, abs, VT(ag_sub(c, x, t)))), VD(delta));
    return reduce_scale(c, ag_mul(c, grad, in), x, reduction);
}

tn_tensor *ag_mse_loss_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, int64_t reduction) {
    return reduce_scale(c, ag_mul_s(c, grad, 2.0), x, reduction);
}

tn_tensor *ag_smooth_l1_loss_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, tn_tensor *t,
                                             int64_t reduction, double beta) {
    tn_tensor *in = AG(c, lt_Scalar, VT(AG(c, abs, VT(ag_sub(c, x, t)))), VD(beta));
    return reduce_scale(c, ag_div(c, ag_mul(c, grad, in), ag_scalar_tensor(c, beta, grad ? grad->dtype : TN_DTYPE_FLOAT32)),
                        x, reduction);
}

tn_tensor *ag_softplus_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, double beta, double threshold) {
    tn_tensor *bx = ag_mul_s(c, x, beta);
    tn_tensor *z = ag_unary(c, TN_OP_exp, bx);
    tn_tensor *below = AG(c, logical_not, VT(AG(c, gt_Scalar, VT(bx), VD(threshold))));
    tn_tensor *d = ag_div(c, ag_mul_s(c, ag_mul(c, grad, z), beta), AG(c, pow_Tensor_Scalar, VT(ag_add_s(c, z, 1.0)), VI(2)));
    return ag_mul(c, below, d);
}

tn_tensor *ag_elu_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, double alpha, double scale,
                                  double input_scale, bool is_result, tn_tensor *y) {
    tn_tensor *neg = ag_cast(c, AG(c, lt_Scalar, VT(y), VI(0)), grad ? grad->dtype : TN_DTYPE_FLOAT32);
    tn_tensor *gg = ag_mul_s(c, ag_mul(c, grad, go), input_scale);
    if (is_result) return ag_mul(c, gg, neg);
    return ag_mul(c, AG(c, elu_backward, VT(gg), VD(alpha), VD(scale), VD(input_scale), VB(false), VT(y)), neg);
}

/* gelu''(x) times g * go: "none": phi(x) (2 - x^2); "tanh": (1 - t^2)(u' - x t u'^2 + 3 k c x^2)
 * with u = k (x + c x^3), t = tanh(u). */
tn_tensor *ag_gelu_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, tn_tensor *x,
                                   const tn_value *approximate) {
    bool tanh_approx = approximate && approximate->tag == TN_V_STRING && approximate->u.s.n == 4 &&
                       memcmp(approximate->u.s.data, "tanh", 4) == 0;
    tn_tensor *x2 = ag_mul(c, x, x), *d2;
    if (!tanh_approx) {
        tn_tensor *phi = ag_mul_s(c, ag_unary(c, TN_OP_exp, ag_mul_s(c, x2, -0.5)), 0.5 * M_2_SQRTPI * M_SQRT1_2);
        d2 = ag_mul(c, phi, AG(c, rsub_Scalar, VT(x2), VI(2), VI(1)));
    } else {
        const double k = M_SQRT2 * M_2_SQRTPI * 0.5, cc = 0.044715;
        tn_tensor *u = ag_mul_s(c, ag_add(c, x, ag_mul_s(c, ag_mul(c, x2, x), cc)), k);
        tn_tensor *t = ag_unary(c, TN_OP_tanh, u);
        tn_tensor *du = ag_mul_s(c, ag_add_s(c, ag_mul_s(c, x2, 3.0 * cc), 1.0), k);
        tn_tensor *sech2 = AG(c, rsub_Scalar, VT(ag_mul(c, t, t)), VI(1), VI(1));
        tn_tensor *inner = ag_add(c, ag_sub(c, du, ag_mul(c, ag_mul(c, x, t), ag_mul(c, du, du))), ag_mul_s(c, x2, 3.0 * k * cc));
        d2 = ag_mul(c, sech2, inner);
    }
    return ag_mul(c, ag_mul(c, grad, go), d2);
}

tn_tensor *ag_softmax_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, int64_t dim, tn_tensor *y) {
    int64_t d[1] = {y ? wrap_dim(dim, y->ndim) : dim};
    tn_tensor *s1 = ag_sum_dims(c, ag_mul(c, y, go), 1, d, true);
    tn_tensor *s2 = ag_sum_dims(c, ag_mul(c, y, grad), 1, d, true);
    return ag_sub(c, ag_sub(c, ag_mul(c, go, grad), ag_mul(c, s1, grad)), ag_mul(c, go, s2));
}

/* d/dx of log_sigmoid's derivative 1 - sigmoid(x): grad (s - 1) s, s = sigmoid(x) */
tn_tensor *ag_log_sigmoid_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x) {
    tn_tensor *s = ag_unary(c, TN_OP_sigmoid, x);
    return ag_mul(c, ag_mul(c, grad, ag_add_s(c, s, -1.0)), s);
}

tn_tensor *ag_max_pool_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *indices, int64_t dim) {
    if (!grad || !indices || grad->ndim < dim || indices->ndim < dim) return NULL;
    int64_t gs[TN_MAX_DIMS], is[TN_MAX_DIMS];
    int lead = grad->ndim - (int)dim;
    for (int i = 0; i < lead; i++) gs[i] = is[i] = grad->sizes[i];
    gs[lead] = -1;
    is[lead] = -1;
    tn_tensor *g = ag_reshape(c, ag_contiguous(c, grad), lead + 1, gs);
    tn_tensor *ix = ag_reshape(c, ag_contiguous(c, indices), lead + 1, is);
    tn_tensor *r = AG(c, gather, VT(g), VI(lead), VT(ix), VB(false));
    return ag_reshape(c, r, indices->ndim, indices->sizes);
}

tn_tensor *ag_embedding_dense_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *indices, int64_t padding_idx) {
    if (!grad || !indices) return NULL;
    int64_t flat = -1;
    tn_tensor *ix = ag_reshape(c, ag_contiguous(c, indices), 1, &flat);
    tn_tensor *r = AG(c, index_select, VT(grad), VI(0), VT(ix));
    if (padding_idx >= 0) {
        int64_t col[2] = {-1, 1};
        tn_tensor *m = ag_reshape(c, AG(c, eq_Scalar, VT(ix), VI(padding_idx)), 2, col);
        r = AG(c, masked_fill_Scalar, VT(r), VT(m), VI(0));
    }
    int64_t sz[TN_MAX_DIMS];
    int nd = indices->ndim;
    memcpy(sz, indices->sizes, sizeof(int64_t) * (size_t)nd);
    sz[nd] = grad->ndim > 1 ? grad->sizes[1] : 1;
    return ag_reshape(c, r, nd + 1, sz);
}

tn_tensor *ag_native_dropout_double_backward(tn_grad_ctx *c, tn_tensor *ggi, tn_tensor *grad, tn_tensor *mask,
                                             double scale) {
    if (!grad) return NULL;
    return ag_mul(c, ag_cast(c, ggi, grad->dtype), ag_mul_s(c, ag_cast(c, mask, grad->dtype), scale));
}

/* binary_cross_entropy_backward(go, x, t, w) = go w (x - t) / (x (1 - x)) [/ N]: its
 * derivatives with respect to go, x and t. The denominators are clamped at 1e-12. */
static tn_tensor *bce_denom(tn_grad_ctx *c, tn_tensor *x, int power) {
    tn_tensor *d = ag_mul(c, x, AG(c, rsub_Scalar, VT(x), VI(1), VI(1)));
    if (power == 2) d = AG(c, pow_Tensor_Scalar, VT(d), VI(2));
    return AG(c, clamp_min, VT(d), VD(1e-12));
}

static tn_tensor *bce_weighted(tn_grad_ctx *c, tn_tensor *t, const tn_value *w, tn_tensor *x, int64_t reduction) {
    if (w && w->tag == TN_V_TENSOR) t = ag_mul(c, t, w->u.t);
    return reduce_scale(c, t, x, reduction);
}

tn_tensor *ag_bce_double_backward_grad_output(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, tn_tensor *t,
                                              const tn_value *w, int64_t reduction) {
    tn_tensor *r = bce_weighted(c, ag_div(c, ag_mul(c, grad, ag_sub(c, x, t)), bce_denom(c, x, 1)), w, x, reduction);
    return reduction == 0 ? r : AG(c, sum, VT(r), VN());
}

tn_tensor *ag_bce_double_backward(tn_grad_ctx *c, tn_tensor *go, tn_tensor *grad, tn_tensor *x, tn_tensor *t,
                                  const tn_value *w, int64_t reduction) {
    /* d/dx (x - t) / (x (1 - x)) = (x^2 - 2 t x + t) / (x (1 - x))^2 */
    tn_tensor *num = ag_add(c, ag_sub(c, ag_mul(c, x, x), ag_mul_s(c, ag_mul(c, x, t), 2.0)), t);
    tn_tensor *r = ag_mul(c, ag_mul(c, grad, go), ag_div(c, num, bce_denom(c, x, 2)));
    return bce_weighted(c, r, w, x, reduction);
}

tn_tensor *ag_bce_double_backward_target(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, tn_tensor *x, tn_tensor *t,
                                         const tn_value *w, int64_t reduction) {
    (void)t;
    tn_tensor *r = ag_neg(c, ag_div(c, ag_mul(c, grad, go), bce_denom(c, x, 1)));
    return bce_weighted(c, r, w, x, reduction);
}

/* native_group_norm(x, w, b, N, C, HxW, G, eps) -> (y, mean, rstd), with x viewed as
 * (N, G, D), D = C / G * HxW, xhat = (x - mean) rstd:
 *   dx = rstd (gy - mean_D(gy) - xhat mean_D(gy xhat)) + dmean / D - drstd rstd^3 (x - mean) / D
 *   dw = sum_{N, HxW} dy xhat,  db = sum_{N, HxW} dy,  gy = dy w (per channel).
 * Every step is a door call, so the result is differentiable again. */
void ag_group_norm_backward(tn_grad_ctx *c, tn_tensor *dy, tn_tensor *dmean, tn_tensor *drstd, tn_tensor *x,
                            tn_tensor *mean, tn_tensor *rstd, const tn_value *gamma, int64_t N, int64_t C,
                            int64_t HxW, int64_t G, double eps, const bool *mask, tn_tensor **out) {
    (void)eps;
    out[0] = out[1] = out[2] = NULL;
    if (!dy || !x || G <= 0) return;
    int64_t D = C / G * HxW;
    int64_t s3[3] = {N, G, D}, sc[3] = {N, C, HxW}, sg[3] = {N, G, 1}, wc[3] = {1, C, 1}, d2[1] = {2};
    int64_t d02[2] = {0, 2};
    tn_tensor *xr = ag_reshape(c, ag_contiguous(c, x), 3, s3);
    tn_tensor *mean3 = ag_reshape(c, mean, 3, sg), *rstd3 = ag_reshape(c, rstd, 3, sg);
    tn_tensor *xc = ag_sub(c, xr, mean3);
    tn_tensor *xhat = ag_mul(c, xc, rstd3);
    tn_tensor *dyc = ag_reshape(c, ag_contiguous(c, dy), 3, sc);
    tn_tensor *w = gamma && gamma->tag == TN_V_TENSOR ? gamma->u.t : NULL;
    if (mask[0]) {
        tn_tensor *gy = w ? ag_mul(c, dyc, ag_reshape(c, w, 3, wc)) : dyc;
        gy = ag_reshape(c, ag_contiguous(c, gy), 3, s3);
        tn_tensor *m1 = AG(c, mean_dim, VT(gy), VIL(d2, 1), VB(true), VN());
        tn_tensor *m2 = AG(c, mean_dim, VT(ag_mul(c, gy, xhat)), VIL(d2, 1), VB(true), VN());
        tn_tensor *dx = ag_mul(c, rstd3, ag_sub(c, ag_sub(c, gy, m1), ag_mul(c, xhat, m2)));
        double invD = 1.0 / (double)D;
        if (dmean) dx = ag_add(c, dx, ag_mul_s(c, ag_reshape(c, dmean, 3, sg), invD));
        if (drstd) {
            tn_tensor *r3 = AG(c, pow_Tensor_Scalar, VT(rstd3), VI(3));
            dx = ag_sub(c, dx, ag_mul_s(c, ag_mul(c, ag_mul(c, ag_reshape(c, drstd, 3, sg), r3), xc), invD));
        }
        out[0] = ag_reshape(c, dx, x->ndim, x->sizes);
    }
    if (mask[1]) {
        tn_tensor *xh = ag_reshape(c, ag_contiguous(c, xhat), 3, sc);
        out[1] = AG(c, sum_dim_IntList, VT(ag_mul(c, dyc, xh)), VIL(d02, 2), VB(false), VN());
    }
    if (mask[2]) out[2] = AG(c, sum_dim_IntList, VT(dyc), VIL(d02, 2), VB(false), VN());
}

/* scatter_reduce(self, dim, index, src, reduce, include_self) -> result, for reduce "sum",
 * "mean", "amax" and "amin" ("prod" refuses by name). Positions no index hits keep self. */
void ag_scatter_reduce_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *self, int64_t dim, tn_tensor *index,
                                tn_tensor *src, const tn_value *reduce, bool include_self, tn_tensor *result,
                                tn_tensor **out) {
    out[0] = out[1] = NULL;
    if (!g || !self || !src || !index) return;
    const char *r = reduce && reduce->tag == TN_V_STRING ? reduce->u.s.data : "";
    int64_t rn = reduce && reduce->tag == TN_V_STRING ? reduce->u.s.n : 0;
    int64_t d = wrap_dim(dim, self->ndim);
#define IS(name) (rn == (int64_t)strlen(name) && memcmp(r, name, (size_t)rn) == 0)
    tn_tensor *gs = NULL, *gsrc = NULL;
    if (IS("sum")) {
        gs = g;
        gsrc = AG(c, gather, VT(g), VI(d), VT(index), VB(false));
    } else if (IS("mean")) {
        tn_tensor *n = include_self ? AG(c, full, VIL(g->sizes, g->ndim), VD(1.0), VDT(g->dtype), VN(), VN(), VN())
                                    : ag_zeros_like(c, g);
        tn_tensor *ones = AG(c, full, VIL(src->sizes, src->ndim), VD(1.0), VDT(g->dtype), VN(), VN(), VN());
        n = AG(c, scatter_add, VT(n), VI(d), VT(index), VT(ones));
        n = AG(c, masked_fill_Scalar, VT(n), VT(AG(c, eq_Scalar, VT(n), VI(0))), VI(1));
        gs = ag_div(c, g, n);
        gsrc = AG(c, gather, VT(gs), VI(d), VT(index), VB(false));
    } else if (IS("amax") || IS("amin")) {
        tn_tensor *value = AG(c, gather, VT(result), VI(d), VT(index), VB(false));
        tn_tensor *self_is = ag_cast(c, AG(c, eq_Tensor, VT(self), VT(result)), g->dtype);
        tn_tensor *src_is = ag_cast(c, AG(c, eq_Tensor, VT(src), VT(value)), g->dtype);
        /* self counts wherever it equals the result; where it was excluded the mask below
         * drops its share (upstream's convention) */
        tn_tensor *n = AG(c, scatter_add, VT(self_is), VI(d), VT(index), VT(src_is));
        tn_tensor *dist = ag_div(c, g, n);
        gs = ag_mul(c, self_is, dist);
        gsrc = ag_mul(c, src_is, AG(c, gather, VT(dist), VI(d), VT(index), VB(false)));
    } else {
        ag_refuse(c, "the derivative of aten::scatter_reduce.two with reduce='prod' is not implemented by torchnative");
        return;
    }
#undef IS
    if (!include_self && gs) {
        tn_tensor *hit = AG(c, scatter_value, VT(ag_zeros_like(c, self)), VI(d), VT(index), VI(1));
        gs = AG(c, masked_fill_Scalar, VT(gs), VT(AG(c, ne_Scalar, VT(hit), VI(0))), VI(0));
    }
    out[0] = gs;
    out[1] = gsrc;
}

/* ---- double backward of the normalisations --------------------------------------------------
 * With xhat = (x - mean) r normalised over the statistics dims S (n elements), the first
 * backward is gx = J gy, gy = go w, gw = sum_W go xhat, gb = sum_W go, where
 * J u = r (u - mean_S u - xhat mean_S(xhat u)) is the (symmetric) Jacobian of xhat and W the
 * dims w is broadcast over. Differentiating L = <ggx, gx> + <ggw, gw> + <ggb, gb>:
 *   d/dgo = (J ggx) w + ggw xhat + ggb,   d/dw = sum_W (J ggx) go,
 *   d/dx  = -r^2 [xhat (p - c a - 3 q b) + b (u - c) + q (v - a)] + J (go ggw)
 * with u = ggx, v = gy, a = mean v, b = mean(xhat v), c = mean u, p = mean(u v),
 * q = mean(u xhat) (means over S, per statistics group). */
typedef struct norm_dims {
    int ns, nw;
    int64_t s[TN_MAX_DIMS], w[TN_MAX_DIMS];
    int wnd;                 /* w viewed with wnd dims of wsz to broadcast against x */
    int64_t wsz[TN_MAX_DIMS];
} norm_dims;

static tn_tensor *mean_s(tn_grad_ctx *c, tn_tensor *t, const norm_dims *nd) {
    return AG(c, mean_dim, VT(t), VIL(nd->s, nd->ns), VB(true), VN());
}

static tn_tensor *view_w(tn_grad_ctx *c, tn_tensor *t, const norm_dims *nd) {
    return t ? ag_reshape(c, ag_contiguous(c, t), nd->wnd, nd->wsz) : NULL;
}

static void norm_double_backward(tn_grad_ctx *c, tn_tensor *x, tn_tensor *w, tn_tensor *ggx, tn_tensor *ggw,
                                 tn_tensor *ggb, tn_tensor *go, tn_tensor *mean, tn_tensor *r, const norm_dims *nd,
                                 const bool *mask, tn_tensor **out) {
    out[0] = out[1] = out[2] = NULL;
    if (!x || !go || !mean || !r) return;
    tn_tensor *wv = view_w(c, w, nd);
    tn_tensor *xhat = ag_mul(c, ag_sub(c, x, mean), r);
    tn_tensor *u = ggx, *v = wv ? ag_mul(c, go, wv) : go;
    tn_tensor *cm = mean_s(c, u, nd), *q = mean_s(c, ag_mul(c, u, xhat), nd);
    tn_tensor *Ju = ag_mul(c, r, ag_sub(c, ag_sub(c, u, cm), ag_mul(c, xhat, q)));
    if (mask[0]) {
        tn_tensor *a = mean_s(c, v, nd), *b = mean_s(c, ag_mul(c, xhat, v), nd), *p = mean_s(c, ag_mul(c, u, v), nd);
        tn_tensor *k = ag_sub(c, ag_sub(c, p, ag_mul(c, cm, a)), ag_mul_s(c, ag_mul(c, q, b), 3.0));
        tn_tensor *s = ag_add(c, ag_add(c, ag_mul(c, xhat, k), ag_mul(c, b, ag_sub(c, u, cm))), ag_mul(c, q, ag_sub(c, v, a)));
        tn_tensor *gx = ag_neg(c, ag_mul(c, ag_mul(c, r, r), s));
        if (ggw) {
            tn_tensor *t = ag_mul(c, go, view_w(c, ggw, nd));
            tn_tensor *Jt = ag_mul(c, r, ag_sub(c, ag_sub(c, t, mean_s(c, t, nd)), ag_mul(c, xhat, mean_s(c, ag_mul(c, xhat, t), nd))));
            gx = ag_add(c, gx, Jt);
        }
        out[0] = gx;
    }
    if (mask[1] && w) {
        tn_tensor *gw = AG(c, sum_dim_IntList, VT(ag_mul(c, Ju, go)), VIL(nd->w, nd->nw), VB(false), VN());
        out[1] = ag_reshape(c, gw, w->ndim, w->sizes);
    }
    if (mask[2]) {
        tn_tensor *ggo = wv ? ag_mul(c, Ju, wv) : Ju;
        if (ggw) ggo = ag_add(c, ggo, ag_mul(c, view_w(c, ggw, nd), xhat));
        if (ggb) ggo = ag_add(c, ggo, view_w(c, ggb, nd));
        out[2] = ggo;
    }
}

void ag_layer_norm_double_backward(tn_grad_ctx *c, tn_tensor *x, const tn_value *gamma, tn_tensor *ggx, tn_tensor *ggw,
                                   tn_tensor *ggb, tn_tensor *go, tn_tensor *mean, tn_tensor *rstd,
                                   tn_value normalized_shape, const bool *mask, tn_tensor **out) {
    out[0] = out[1] = out[2] = NULL;
    if (!x) return;
    norm_dims nd = {0};
    int k = (int)normalized_shape.u.ilist.n, lead = x->ndim - k;
    for (int i = 0; i < x->ndim; i++) {
        if (i >= lead) nd.s[nd.ns++] = i;
        else nd.w[nd.nw++] = i;
    }
    nd.wnd = k;
    for (int i = 0; i < k; i++) nd.wsz[i] = x->sizes[lead + i];
    tn_tensor *w = gamma && gamma->tag == TN_V_TENSOR ? gamma->u.t : NULL;
    norm_double_backward(c, x, w, ggx, w ? ggw : NULL, ggb, go, mean, rstd, &nd, mask, out);
}

void ag_batchnorm_double_backward(tn_grad_ctx *c, tn_tensor *x, const tn_value *gamma, tn_tensor *ggx, tn_tensor *ggw,
                                  tn_tensor *ggb, tn_tensor *go, const tn_value *running_mean,
                                  const tn_value *running_var, bool train, double eps, const tn_value *save_mean,
                                  const tn_value *save_invstd, const bool *mask, tn_tensor **out) {
    out[0] = out[1] = out[2] = NULL;
    if (!x || x->ndim < 2) return;
    norm_dims nd = {0};
    for (int i = 0; i < x->ndim; i++)
        if (i != 1) nd.s[nd.ns++] = nd.w[nd.nw++] = i;
    nd.wnd = x->ndim;
    for (int i = 0; i < x->ndim; i++) nd.wsz[i] = i == 1 ? x->sizes[1] : 1;
    tn_tensor *w = gamma && gamma->tag == TN_V_TENSOR ? gamma->u.t : NULL;
    tn_tensor *m = NULL, *r = NULL;
    if (train) {
        m = view_w(c, opt_tensor(save_mean), &nd);
        r = view_w(c, opt_tensor(save_invstd), &nd);
        norm_double_backward(c, x, w, ggx, w ? ggw : NULL, ggb, go, m, r, &nd, mask, out);
        return;
    }
    /* evaluation: xhat = (x - running_mean) r is linear in x */
    tn_tensor *rm = opt_tensor(running_mean), *rv = opt_tensor(running_var);
    if (!rm || !rv) {
        ag_refuse(c, "the double derivative of aten::native_batch_norm_backward in evaluation mode without running "
                     "statistics is not implemented by torchnative");
        return;
    }
    m = view_w(c, rm, &nd);
    r = view_w(c, AG(c, rsqrt, VT(ag_add_s(c, rv, eps))), &nd);
    tn_tensor *wv = view_w(c, w, &nd), *xhat = ag_mul(c, ag_sub(c, x, m), r);
    if (mask[0] && w && ggw) out[0] = ag_mul(c, ag_mul(c, view_w(c, ggw, &nd), go), r);
    else if (mask[0]) out[0] = ag_zeros_like(c, x);
    if (mask[1] && w) {
        tn_tensor *gw = AG(c, sum_dim_IntList, VT(ag_mul(c, ag_mul(c, ggx, go), r)), VIL(nd.w, nd.nw), VB(false), VN());
        out[1] = ag_reshape(c, gw, w->ndim, w->sizes);
    }
    if (mask[2]) {
        tn_tensor *ggo = ag_mul(c, ggx, r);
        if (wv) ggo = ag_mul(c, ggo, wv);
        if (w && ggw) ggo = ag_add(c, ggo, ag_mul(c, view_w(c, ggw, &nd), xhat));
        if (ggb) ggo = ag_add(c, ggo, view_w(c, ggb, &nd));
        out[2] = ggo;
    }
}

/* convolution_backward(go, x, W, ...) -> (gx, gW, gb) is bilinear: gx is linear in (go, W),
 * gW in (x, go), gb = sum go. So, given the gradients ggx, ggW, ggb of its results:
 *   d/dgo = conv(ggx, W) + conv(x, ggW) + ggb,   d/dx = (conv backward of go with weight ggW)_input,
 *   d/dW = (conv backward of go with input ggx)_weight,
 * all through the convolution operators themselves (transposed ones too). out: go, x, W. */
void ag_convolution_double_backward(tn_grad_ctx *c, tn_tensor *ggx, tn_tensor *ggw, tn_tensor *ggb, tn_tensor *go,
                                    tn_tensor *w, tn_tensor *x, const tn_value *stride, const tn_value *padding,
                                    const tn_value *dilation, bool transposed, const tn_value *output_padding,
                                    int64_t groups, const bool *mask, tn_tensor **out) {
    out[0] = out[1] = out[2] = NULL;
    if (!go || !w || !x) return;
#define CONV(in, wt, b) AG(c, convolution, VT(in), VT(wt), b, *stride, *padding, *dilation, VB(transposed), \
                           *output_padding, VI(groups))
    if (mask[0]) {
        tn_tensor *r = ggx ? CONV(ggx, w, VN()) : NULL;
        if (ggw) {
            tn_tensor *t = CONV(x, ggw, ggb ? VT(ggb) : VN());
            r = r ? ag_add(c, r, t) : t;
        } else if (ggb && r) {
            int64_t sz[TN_MAX_DIMS];
            for (int i = 0; i < r->ndim; i++) sz[i] = i == 1 ? r->sizes[1] : 1;
            r = ag_add(c, r, ag_reshape(c, ggb, r->ndim, sz));
        }
        out[0] = r ? r : ag_zeros_like(c, go);
    }
#undef CONV
    bool only_x[3] = {true, false, false}, only_w[3] = {false, true, false};
    tn_tensor *o[3];
    if (mask[1] && ggw) {
        tn_value a[11] = {VT(go), VT(x), VT(ggw), VN(), *stride, *padding, *dilation, VB(transposed), *output_padding,
                          VI(groups), VBL(only_x, 3)};
        ag_op_n(c, TN_OP_convolution_backward, 11, a, o, 3);
        out[1] = o[0];
    } else if (mask[1]) {
        out[1] = ag_zeros_like(c, x);
    }
    if (mask[2] && ggx) {
        tn_value a[11] = {VT(go), VT(ggx), VT(w), VN(), *stride, *padding, *dilation, VB(transposed), *output_padding,
                          VI(groups), VBL(only_w, 3)};
        ag_op_n(c, TN_OP_convolution_backward, 11, a, o, 3);
        out[2] = o[1];
    } else if (mask[2]) {
        out[2] = ag_zeros_like(c, w);
    }
}
