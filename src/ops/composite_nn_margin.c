/* composite_nn_margin.c — the multi-class margin losses, multi_margin_loss and
 * multilabel_margin_loss(_forward), and their backward operators, as chains of door calls
 * over the batch laid out as (nframe, dim). Upstream has kernels for all four; the values
 * are the same sums (within tolerance: the order of the additions differs), the shape and
 * argument checks are upstream's, and the backward operators exist so that the rows
 * generated from derivatives.yaml (MultiMarginLossBackward0,
 * MultilabelMarginLossForwardBackward0) apply. */
#include <math.h>
#include <string.h>

#include "ops/composite_internal.h"

static tn_value dtype_v(tn_dtype d) { tn_value v = {.tag = TN_V_DTYPE}; v.u.dtype = d; return v; }

static double scalar_of(const tn_value *v) {
    return v->tag == TN_V_INT ? (double)v->u.i : v->tag == TN_V_BOOL ? (double)v->u.b : v->u.d;
}
static tn_tensor *reshape2(tn_cx *c, tn_tensor *t, int64_t a, int64_t b) {
    int64_t s[2] = {a, b};
    return tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(t), tn_value_intlist(s, 2)));
}
static tn_tensor *reshape_as(tn_cx *c, tn_tensor *t, const tn_tensor *like) {
    return tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(t), tn_value_intlist(like->sizes, like->ndim)));
}
static tn_tensor *arange(tn_cx *c, int64_t n) {
    return tn_cx_call(c, TN_OP_arange, TN_ARGS(TN_I(n), dtype_v(TN_DTYPE_INT64), TN_NONE, TN_NONE, TN_NONE));
}
static tn_tensor *unsq(tn_cx *c, tn_tensor *t, int64_t d) { return tn_cx_call(c, TN_OP_unsqueeze, TN_ARGS(TN_T(t), TN_I(d))); }
static tn_tensor *bin(tn_cx *c, tn_op_id op, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, op, TN_ARGS(TN_T(a), TN_T(b))); }
static tn_tensor *add(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_add_Tensor, TN_ARGS(TN_T(a), TN_T(b), TN_I(1))); }
static tn_tensor *muls(tn_cx *c, tn_tensor *a, double s) { return tn_cx_call(c, TN_OP_mul_Scalar, TN_ARGS(TN_T(a), TN_D(s))); }
static tn_tensor *sum_dims(tn_cx *c, tn_tensor *t, const int64_t *dims, int n, bool keepdim) {
    return tn_cx_call(c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(t), tn_value_intlist(dims, n), TN_B(keepdim), TN_NONE));
}
static tn_tensor *where0(tn_cx *c, tn_tensor *m, tn_tensor *a) {
    return tn_cx_call(c, TN_OP_where_ScalarOther, TN_ARGS(TN_T(m), TN_T(a), TN_I(0)));
}
/* the int64 value of a 0-dim reduction of t (amin or amax), for the range checks */
static int64_t reduce_item(tn_cx *c, tn_op_id op, tn_tensor *t) {
    tn_tensor *r = tn_cx_call(c, op, TN_ARGS(TN_T(t), tn_value_intlist(NULL, 0), TN_B(false)));
    return r ? *(const int64_t *)tn_tensor_data(r) : 0;
}

static tn_status float_only(const char *kernel, tn_dtype d) {
    if (d != TN_DTYPE_FLOAT32 && d != TN_DTYPE_FLOAT64)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tn_dtype_infos[d].c10_name);
    return TN_OK;
}
static tn_status long_target(const tn_tensor *t) {
    if (t->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type Long but found %s", tn_dtype_infos[t->dtype].c10_name);
    return TN_OK;
}

/* ---- multi_margin_loss ----------------------------------------------------------------- */

typedef struct { int64_t nframe, dim; } margin_geom;

/* upstream's multi_margin_loss_shape_check */
static tn_status multi_margin_check(const tn_tensor *x, const tn_tensor *target, const tn_tensor *w, margin_geom *g) {
    char b1[128], b2[128];
    int nd = x->ndim;
    if (!((nd == 2 && x->sizes[1] != 0) || (nd == 1 && x->sizes[0] != 0) || nd == 0))
        return tn_error(TN_ERR_RUNTIME, "Expected non-empty vector or matrix with optional 0-dim batch size, but got: %s",
                        tn_format_sizes(x->ndim, x->sizes, b1, sizeof b1));
    g->nframe = nd <= 1 ? 1 : x->sizes[0];
    g->dim = nd == 0 ? 1 : x->sizes[nd - 1];
    if (!(target->ndim <= 1 && tn_tensor_numel(target) == g->nframe))
        return tn_error(TN_ERR_RUNTIME, "inconsistent target size, expected %lld but got %s", (long long)g->nframe,
                        tn_format_sizes(target->ndim, target->sizes, b2, sizeof b2));
    if (w && !(w->ndim <= 1 && tn_tensor_numel(w) == g->dim))
        return tn_error(TN_ERR_RUNTIME, "inconsistent weight size, expected %lld but got %s", (long long)g->dim,
                        tn_format_sizes(w->ndim, w->sizes, b2, sizeof b2));
    return TN_OK;
}

/* The common part of forward and backward: x as (nframe, dim), the target column t (nframe,
 * 1), z = margin - x[t] + x and the mask of the non-target classes. */
typedef struct { tn_tensor *x2, *t, *z, *other, *wt; } margin_parts;

static void multi_margin_parts(tn_cx *c, tn_tensor *x, tn_tensor *target, double margin, tn_tensor *w, margin_geom g,
                               margin_parts *p) {
    p->x2 = reshape2(c, x, g.nframe, g.dim);
    p->t = reshape2(c, target, g.nframe, 1);
    if (c->st == TN_OK && g.nframe > 0) {
        int64_t lo = reduce_item(c, TN_OP_amin, p->t), hi = reduce_item(c, TN_OP_amax, p->t);
        if (c->st == TN_OK && (lo < 0 || hi >= g.dim)) tn_cx_fail(c, tn_error(TN_ERR_RUNTIME, "target out of range"));
    }
    tn_tensor *u = tn_cx_call(c, TN_OP_gather, TN_ARGS(TN_T(p->x2), TN_I(1), TN_T(p->t), TN_B(false)));
    p->z = add(c, tn_cx_call(c, TN_OP_rsub_Scalar, TN_ARGS(TN_T(u), TN_D(margin), TN_I(1))), p->x2);
    p->other = bin(c, TN_OP_ne_Tensor, arange(c, g.dim), p->t);
    p->wt = NULL;
    if (w) {
        int64_t m1 = -1;
        tn_tensor *w1 = tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(w), tn_value_intlist(&m1, 1)));
        tn_tensor *tf = tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(p->t), tn_value_intlist(&m1, 1)));
        p->wt = reshape2(c, tn_cx_call(c, TN_OP_index_select, TN_ARGS(TN_T(w1), TN_I(0), TN_T(tf))), g.nframe, 1);
    }
}

static tn_status multi_margin_args(const tn_value *a, int off, double *p, tn_tensor **w) {
    *p = scalar_of(&a[off]);
    *w = a[off + 2].tag == TN_V_TENSOR ? a[off + 2].u.t : NULL;
    if (*p != 1 && *p != 2) return tn_error(TN_ERR_RUNTIME, "only p == 1 and p == 2 supported");
    return TN_OK;
}

/* aten::multi_margin_loss(self, target, p, margin, weight?, reduction): per sample,
 * sum over the classes d != y of w[y] max(0, margin - x[y] + x[d])^p, divided by dim. */
tn_status tn_op_multi_margin_loss(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *target = args[1].u.t, *w;
    double p;
    int64_t red = args[5].u.i;
    TN_TRY(multi_margin_args(args, 2, &p, &w));
    margin_geom g;
    TN_TRY(multi_margin_check(x, target, w, &g));
    TN_TRY(float_only("multi_margin_loss_cpu_kernel", x->dtype));
    TN_TRY(long_target(target));
    tn_cx c = {0};
    margin_parts m;
    multi_margin_parts(&c, x, target, scalar_of(&args[3]), w, g, &m);
    tn_tensor *z = tn_cx_call(&c, TN_OP_clamp_min, TN_ARGS(TN_T(m.z), TN_I(0)));
    if (p == 2) z = bin(&c, TN_OP_mul_Tensor, z, z);
    if (m.wt) z = bin(&c, TN_OP_mul_Tensor, z, m.wt);
    z = where0(&c, m.other, z);
    int64_t one = 1;
    tn_tensor *per = tn_cx_call(&c, TN_OP_div_Scalar, TN_ARGS(TN_T(sum_dims(&c, z, &one, 1, false)), TN_I(g.dim)));
    tn_tensor *o;
    /* an empty batch reduces to 0 (upstream leaves the output uninitialised there) */
    if (red == 1 && g.nframe > 0) o = tn_cx_call(&c, TN_OP_mean, TN_ARGS(TN_T(per), TN_NONE));
    else if (red != 0) o = tn_cx_call(&c, TN_OP_sum, TN_ARGS(TN_T(per), TN_NONE));
    else o = target->ndim > 0 ? per : reshape_as(&c, per, target);
    return tn_cx_finish(&c, o, rets);
}

/* the gradient scale: grad_output itself when it is 0-dim (reduced, or a 0-dim target),
 * else one value per sample, as a column */
static tn_tensor *grad_scale(tn_cx *c, tn_tensor *go, int64_t nframe) {
    return go->ndim == 0 ? go : reshape2(c, go, nframe, 1);
}

/* aten::multi_margin_loss_backward(grad_output, self, target, p, margin, weight?, reduction):
 * each active class d (z > 0) gets h = g (p = 1) or 2 g z (p = 2), times w[y]; the target
 * class gets minus their sum. g = 1 / dim, or 1 / (nframe dim) for the mean. */
tn_status tn_op_multi_margin_loss_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *go = args[0].u.t, *x = args[1].u.t, *target = args[2].u.t, *w;
    double p;
    int64_t red = args[6].u.i;
    TN_TRY(multi_margin_args(args, 3, &p, &w));
    margin_geom g;
    TN_TRY(multi_margin_check(x, target, w, &g));
    TN_TRY(float_only("multi_margin_loss_backward_cpu_kernel", x->dtype));
    TN_TRY(long_target(target));
    tn_cx c = {0};
    margin_parts m;
    multi_margin_parts(&c, x, target, scalar_of(&args[4]), w, g, &m);
    double gs = red == 1 ? 1.0 / (double)(g.nframe * g.dim) : 1.0 / (double)g.dim;
    if (x->dtype == TN_DTYPE_FLOAT32) gs = (float)gs;
    tn_tensor *active = tn_cx_call(&c, TN_OP_logical_and, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_gt_Scalar, TN_ARGS(TN_T(m.z), TN_I(0)))), TN_T(m.other)));
    tn_tensor *h = p == 1 ? tn_cx_call(&c, TN_OP_full_like, TN_ARGS(TN_T(m.x2), TN_D(gs), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_NONE))
                          : muls(&c, m.z, 2 * gs);
    h = where0(&c, active, h);
    if (m.wt) h = bin(&c, TN_OP_mul_Tensor, h, m.wt);
    int64_t one = 1;
    tn_tensor *neg = tn_cx_call(&c, TN_OP_neg, TN_ARGS(TN_T(sum_dims(&c, h, &one, 1, true))));
    tn_tensor *gx = tn_cx_call(&c, TN_OP_scatter_add, TN_ARGS(TN_T(h), TN_I(1), TN_T(m.t), TN_T(neg)));
    gx = bin(&c, TN_OP_mul_Tensor, gx, grad_scale(&c, go, g.nframe));
    return tn_cx_finish(&c, reshape_as(&c, gx, x), rets);
}

/* ---- multilabel_margin_loss ------------------------------------------------------------- */

/* upstream's multilabel_margin_loss_shape_check */
static tn_status multilabel_check(const tn_tensor *x, const tn_tensor *target, margin_geom *g) {
    char b1[128], b2[128];
    int nd = x->ndim;
    if (!((nd == 2 && x->sizes[1] != 0) || (nd == 1 && x->sizes[0] != 0) || nd == 0))
        return tn_error(TN_ERR_RUNTIME, "Expected non-empty vector or matrix with optional 0-dim batch size, but got: %s",
                        tn_format_sizes(x->ndim, x->sizes, b1, sizeof b1));
    bool ok;
    if (nd <= 1) {
        g->nframe = 1;
        g->dim = nd == 0 ? 1 : x->sizes[0];
        ok = target->ndim <= 1 && tn_tensor_numel(target) == g->dim;
    } else {
        g->nframe = x->sizes[0];
        g->dim = x->sizes[1];
        ok = target->ndim == 2 && target->sizes[0] == g->nframe && target->sizes[1] == g->dim;
    }
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "inconsistent target size: %s for input of size: %s",
                        tn_format_sizes(target->ndim, target->sizes, b2, sizeof b2), tn_format_sizes(x->ndim, x->sizes, b1, sizeof b1));
    return TN_OK;
}

/* Forward and backward share: x2 (nframe, dim); tmask, the target slots before the first -1;
 * tidx, those targets (0 elsewhere); is_target (nframe, dim) bool; the pair mask of (slot j,
 * class d) with slot j a target, d not a target and z = 1 - x[t_j] + x[d] > 0, and z. */
typedef struct { tn_tensor *x2, *tmask, *tidx, *is_target, *pairs, *z; } label_parts;

static void multilabel_parts(tn_cx *c, tn_tensor *x, tn_tensor *target, tn_tensor *is_target_in, margin_geom g,
                             label_parts *p) {
    p->x2 = reshape2(c, x, g.nframe, g.dim);
    tn_tensor *t2 = reshape2(c, target, g.nframe, g.dim);
    if (c->st == TN_OK && tn_tensor_numel(t2) > 0) {
        int64_t lo = reduce_item(c, TN_OP_amin, t2), hi = reduce_item(c, TN_OP_amax, t2);
        if (c->st == TN_OK && (lo < -1 || hi >= g.dim)) tn_cx_fail(c, tn_error(TN_ERR_RUNTIME, "argument #2 'target' is out of range"));
    }
    tn_tensor *idx = arange(c, g.dim);
    tn_tensor *end_at = tn_cx_call(c, TN_OP_where_ScalarOther, TN_ARGS(TN_T(tn_cx_call(c, TN_OP_eq_Scalar, TN_ARGS(TN_T(t2), TN_I(-1)))),
                                                                       TN_T(idx), TN_I(g.dim)));
    int64_t one = 1;
    tn_tensor *end = tn_cx_call(c, TN_OP_amin, TN_ARGS(TN_T(end_at), tn_value_intlist(&one, 1), TN_B(true)));
    p->tmask = bin(c, TN_OP_lt_Tensor, idx, end);
    p->tidx = where0(c, p->tmask, t2);
    if (is_target_in) {
        p->is_target = tn_cx_call(c, TN_OP_ne_Scalar, TN_ARGS(TN_T(reshape2(c, is_target_in, g.nframe, g.dim)), TN_I(0)));
    } else {
        tn_tensor *tid1 = tn_cx_call(c, TN_OP_where_ScalarOther, TN_ARGS(TN_T(p->tmask), TN_T(t2), TN_I(-1)));
        p->is_target = tn_cx_call(c, TN_OP_any_dim, TN_ARGS(TN_T(bin(c, TN_OP_eq_Tensor, unsq(c, tid1, 2), idx)), TN_I(1), TN_B(false)));
    }
    tn_tensor *u = tn_cx_call(c, TN_OP_gather, TN_ARGS(TN_T(p->x2), TN_I(1), TN_T(p->tidx), TN_B(false)));
    /* z[n, j, d] = 1 - x[n, t_j] + x[n, d] */
    p->z = add(c, tn_cx_call(c, TN_OP_rsub_Scalar, TN_ARGS(TN_T(unsq(c, u, 2)), TN_I(1), TN_I(1))), unsq(c, p->x2, 1));
    tn_tensor *not_t = unsq(c, tn_cx_call(c, TN_OP_logical_not, TN_ARGS(TN_T(p->is_target))), 1);
    tn_tensor *pairs = tn_cx_call(c, TN_OP_logical_and, TN_ARGS(TN_T(unsq(c, p->tmask, 2)), TN_T(not_t)));
    p->pairs = tn_cx_call(c, TN_OP_logical_and, TN_ARGS(TN_T(pairs), TN_T(tn_cx_call(c, TN_OP_gt_Scalar, TN_ARGS(TN_T(p->z), TN_I(0))))));
}

/* aten::multilabel_margin_loss_forward(self, target, reduction) -> (output, is_target): per
 * sample, the sum over target classes j and non-target classes d of max(0, 1 - x[j] + x[d]),
 * divided by dim; is_target marks the target classes in the input's dtype. */
tn_status tn_op_multilabel_margin_loss_forward(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *target = args[1].u.t;
    int64_t red = args[2].u.i;
    margin_geom g;
    TN_TRY(multilabel_check(x, target, &g));
    TN_TRY(long_target(target));
    TN_TRY(float_only("multilabel_margin_loss_forward_out_frame", x->dtype));
    tn_cx c = {0};
    label_parts m;
    multilabel_parts(&c, x, target, NULL, g, &m);
    tn_tensor *z = where0(&c, m.pairs, m.z);
    int64_t d12[2] = {1, 2};
    tn_tensor *per = tn_cx_call(&c, TN_OP_div_Scalar, TN_ARGS(TN_T(sum_dims(&c, z, d12, 2, false)), TN_I(g.dim)));
    tn_tensor *o;
    if (red == 1 && g.nframe > 0) o = tn_cx_call(&c, TN_OP_mean, TN_ARGS(TN_T(per), TN_NONE));
    else if (red != 0 || target->ndim <= 1) o = tn_cx_call(&c, TN_OP_sum, TN_ARGS(TN_T(per), TN_NONE));
    else o = per;
    tn_tensor *ist = m.is_target ? tn_cx_call(&c, TN_OP__to_copy, TN_ARGS(TN_T(m.is_target), dtype_v(x->dtype), TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE)) : NULL;
    ist = reshape_as(&c, ist, target);
    if (c.st == TN_OK) {
        tn_tensor_retain(ist);
        rets[1] = tn_value_tensor(ist);
    }
    return tn_cx_finish(&c, o, rets);
}

/* aten::multilabel_margin_loss(self, target, reduction): the forward's output */
tn_status tn_op_multilabel_margin_loss(const tn_value *args, tn_value *rets) {
    tn_value r[2];
    TN_TRY(tn_dispatch(TN_OP_multilabel_margin_loss_forward, args, r));
    tn_value_release(&r[1]);
    rets[0] = r[0];
    return TN_OK;
}

/* aten::multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target):
 * each active (target j, class d) pair adds g to d and takes g from j; g = 1 / dim, or
 * 1 / (nframe dim) for the mean. */
tn_status tn_op_multilabel_margin_loss_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *go = args[0].u.t, *x = args[1].u.t, *target = args[2].u.t, *ist = args[4].u.t;
    int64_t red = args[3].u.i;
    margin_geom g;
    TN_TRY(multilabel_check(x, target, &g));
    if (tn_tensor_numel(ist) != g.nframe * g.dim) {
        char b1[128], b2[128];
        return tn_error(TN_ERR_RUNTIME, "inconsistent is_target size: %s for target of size: %s",
                        tn_format_sizes(ist->ndim, ist->sizes, b1, sizeof b1), tn_format_sizes(target->ndim, target->sizes, b2, sizeof b2));
    }
    tn_cx c = {0};
    if (tn_tensor_numel(x) == 0) /* upstream returns the empty grad_input before its dtype checks */
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_zeros_like, TN_ARGS(TN_T(x), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_MF(0))), rets);
    TN_TRY(float_only("multilabel_margin_loss_backward_out_frame", x->dtype));
    TN_TRY(long_target(target));
    label_parts m;
    multilabel_parts(&c, x, target, ist, g, &m);
    double gs = red == 1 ? 1.0 / (double)(g.nframe * g.dim) : 1.0 / (double)g.dim;
    if (x->dtype == TN_DTYPE_FLOAT32) gs = (float)gs;
    tn_tensor *h = tn_cx_call(&c, TN_OP__to_copy, TN_ARGS(TN_T(m.pairs), dtype_v(x->dtype), TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE));
    h = muls(&c, h, gs);
    int64_t one = 1, two = 2;
    tn_tensor *to_d = sum_dims(&c, h, &one, 1, false);                                       /* (nframe, dim) */
    tn_tensor *from_j = tn_cx_call(&c, TN_OP_neg, TN_ARGS(TN_T(sum_dims(&c, h, &two, 1, false)))); /* (nframe, slots) */
    tn_tensor *gx = tn_cx_call(&c, TN_OP_scatter_add, TN_ARGS(TN_T(to_d), TN_I(1), TN_T(m.tidx), TN_T(from_j)));
    gx = bin(&c, TN_OP_mul_Tensor, gx, grad_scale(&c, go, g.nframe));
    return tn_cx_finish(&c, reshape_as(&c, gx, x), rets);
}
