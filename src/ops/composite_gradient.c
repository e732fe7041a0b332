/* composite_gradient.c — torch.gradient (its seven aten overloads) as door calls in
 * upstream's arithmetic: per dim, central differences inside and one-sided differences of
 * order edge_order at the two ends, for a uniform spacing (a Scalar) or for coordinates (a
 * 1-d Tensor per dim), the three pieces concatenated along the dim. */
#include <stdlib.h>

#include "ops/composite_internal.h"

static tn_tensor *sl(tn_cx *c, tn_tensor *t, int64_t dim, int64_t a, int64_t b) {
    return tn_cx_call(c, TN_OP_slice_Tensor, TN_ARGS(TN_T(t), TN_I(dim), TN_I(a), TN_I(b), TN_I(1)));
}
#define END INT64_MAX
static tn_tensor *sub(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_sub_Tensor, TN_ARGS(TN_T(a), TN_T(b), TN_I(1))); }
static tn_tensor *add(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_add_Tensor, TN_ARGS(TN_T(a), TN_T(b), TN_I(1))); }
static tn_tensor *mul(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_mul_Tensor, TN_ARGS(TN_T(a), TN_T(b))); }
static tn_tensor *divt(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_div_Tensor, TN_ARGS(TN_T(a), TN_T(b))); }
static tn_tensor *muls(tn_cx *c, tn_tensor *a, tn_value s) { return tn_cx_call(c, TN_OP_mul_Scalar, TN_ARGS(TN_T(a), s)); }
static tn_tensor *divs(tn_cx *c, tn_tensor *a, tn_value s) { return tn_cx_call(c, TN_OP_div_Scalar, TN_ARGS(TN_T(a), s)); }
static tn_tensor *neg(tn_cx *c, tn_tensor *a) { return tn_cx_call(c, TN_OP_neg, TN_ARGS(TN_T(a))); }
static tn_tensor *sel(tn_cx *c, tn_tensor *t, int64_t i) { return tn_cx_call(c, TN_OP_select_int, TN_ARGS(TN_T(t), TN_I(0), TN_I(i))); }

/* [prepend, center, append] along dim */
static tn_tensor *join(tn_cx *c, tn_tensor *p, tn_tensor *m, tn_tensor *a, int64_t dim) {
    tn_tensor *l[3] = {p, m, a};
    return tn_cx_call(c, TN_OP_cat, TN_ARGS(tn_value_tensorlist(l, 3), TN_I(dim)));
}

/* uniform spacing h along dim */
static tn_tensor *grad_uniform(tn_cx *c, tn_tensor *x, int64_t d, tn_value h, int64_t order) {
    tn_tensor *center = divs(c, divs(c, sub(c, sl(c, x, d, 2, END), sl(c, x, d, 0, -2)), h), TN_I(2)), *pre, *app;
    if (order == 1) {
        pre = divs(c, sub(c, sl(c, x, d, 1, 2), sl(c, x, d, 0, 1)), h);
        app = divs(c, sub(c, sl(c, x, d, -1, END), sl(c, x, d, -2, -1)), h);
    } else {
        pre = add(c, muls(c, sl(c, x, d, 0, 1), TN_D(-1.5)), muls(c, sl(c, x, d, 1, 2), TN_I(2)));
        pre = divs(c, sub(c, pre, muls(c, sl(c, x, d, 2, 3), TN_D(0.5))), h);
        app = add(c, muls(c, sl(c, x, d, -3, -2), TN_D(0.5)), muls(c, sl(c, x, d, -2, -1), TN_I(-2)));
        app = divs(c, add(c, app, muls(c, sl(c, x, d, -1, END), TN_D(1.5))), h);
    }
    return join(c, pre, center, app, d);
}

/* coordinates t (1-d) along dim */
static tn_tensor *grad_coords(tn_cx *c, tn_tensor *x, int64_t d, tn_tensor *t, int64_t order) {
    int64_t shape[TN_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) shape[i] = 1;
    shape[d] = -1;
    tn_tensor *dx = tn_cx_call(c, TN_OP_diff, TN_ARGS(TN_T(t), TN_I(1), TN_I(0), TN_NONE, TN_NONE));
    tn_tensor *dx1 = sl(c, dx, 0, 0, -1), *dx2 = sl(c, dx, 0, 1, END);
    tn_tensor *s12 = add(c, dx1, dx2);
    tn_value sv = tn_value_intlist(shape, x->ndim);
    tn_tensor *a = tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(divt(c, neg(c, dx2), mul(c, dx1, s12))), sv));
    tn_tensor *b = tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(divt(c, sub(c, dx2, dx1), mul(c, dx1, dx2))), sv));
    tn_tensor *cc = tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(divt(c, dx1, mul(c, dx2, s12))), sv));
    tn_tensor *center = add(c, add(c, mul(c, a, sl(c, x, d, 0, -2)), mul(c, b, sl(c, x, d, 1, -1))), mul(c, cc, sl(c, x, d, 2, END)));
    tn_tensor *pre, *app, *d0 = sel(c, dx, 0), *dl = sel(c, dx, -1);
    if (order == 1) {
        pre = divt(c, sub(c, sl(c, x, d, 1, 2), sl(c, x, d, 0, 1)), d0);
        app = divt(c, sub(c, sl(c, x, d, -1, END), sl(c, x, d, -2, -1)), dl);
    } else {
        tn_tensor *d1 = sel(c, dx, 1), *s01 = add(c, d0, d1);
        tn_tensor *pa = neg(c, divt(c, add(c, muls(c, d0, TN_D(2.0)), d1), mul(c, d0, s01)));
        tn_tensor *pb = divt(c, s01, mul(c, d0, d1));
        tn_tensor *pc = divt(c, neg(c, d0), mul(c, d1, s01));
        pre = add(c, add(c, mul(c, pa, sl(c, x, d, 0, 1)), mul(c, pb, sl(c, x, d, 1, 2))), mul(c, pc, sl(c, x, d, 2, 3)));
        tn_tensor *dm = sel(c, dx, -2), *sm = add(c, dl, dm);
        tn_tensor *aa = divt(c, dl, mul(c, dm, sm));
        tn_tensor *ab = neg(c, divt(c, sm, mul(c, dl, dm)));
        tn_tensor *ac = divt(c, add(c, muls(c, dl, TN_I(2)), dm), mul(c, dl, sm));
        app = add(c, add(c, mul(c, aa, sl(c, x, d, -3, -2)), mul(c, ab, sl(c, x, d, -2, -1))), mul(c, ac, sl(c, x, d, -1, END)));
    }
    return join(c, pre, center, app, d);
}

/* The dims (`dims` NULL: all of them), the spacing (none, one Scalar for all, one Scalar
 * per dim, or one coordinate Tensor per dim) and the checks upstream makes first. */
static tn_status gradient(tn_tensor *x, const tn_value *spacing, int nsp, bool tensors, const int64_t *dims, int64_t ndims,
                          int64_t order, tn_value *rets) {
    int64_t all[TN_MAX_DIMS], nd = dims ? ndims : x->ndim;
    if (!dims) for (int i = 0; i < x->ndim; i++) all[i] = i;
    const int64_t *dl = dims ? dims : all;
    if (x->dtype == TN_DTYPE_UINT8) return tn_error(TN_ERR_RUNTIME, "torch.gradient does not support uint8 input.");
    bool list = spacing && (tensors || spacing->tag == TN_V_SCALARLIST);
    if (list ? nsp != nd : nsp > 1)
        return tn_error(TN_ERR_RUNTIME, "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have the same length, but got a spacing argument of length %d and a dim argument of length %lld.",
                        nsp, (long long)nd);
    if (order != 1 && order != 2) return tn_error(TN_ERR_RUNTIME, "torch.gradient only supports edge_order=1 and edge_order=2.");
    int64_t w[TN_MAX_DIMS];
    /* upstream's order: the whole dim list is wrapped (a 0-dim input as 1-d) and checked
     * for repeats, then each size is read (a 0-dim input has none: IndexError) */
    bool seen[TN_MAX_DIMS] = {false};
    for (int64_t i = 0; dims && i < nd; i++) {
        int d;
        TN_TRY(tn_wrap_dim(dl[i], x->ndim, &d));
        if (seen[d]) return tn_error(TN_ERR_RUNTIME, "dim %d appears multiple times in the list of dims", d);
        seen[d] = true;
    }
    for (int64_t i = 0; i < nd; i++) {
        int d;
        TN_TRY(tn_wrap_dim_strict(dl[i], x->ndim, &d));
        w[i] = d;
        if (x->sizes[d] < order + 1)
            return tn_error(TN_ERR_RUNTIME, "torch.gradient expected each dimension size to be at least edge_order+1");
    }
    for (int64_t i = 0; i < nd; i++) {
        if (tensors) {
            tn_tensor *t = spacing->u.tlist.data[i];
            if (t->ndim != 1 || t->sizes[0] != x->sizes[w[i]])
                return tn_error(TN_ERR_RUNTIME, "torch.gradient expected each tensor to be on the same device as the input and its size to match the dimension it is spacing");
        }
    }
    tn_tensor **res = calloc((size_t)(nd > 0 ? nd : 1), sizeof *res);
    if (!res) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_status st = TN_OK;
    for (int64_t i = 0; i < nd && st == TN_OK; i++) {
        tn_cx c = {0}; /* one scratch per dim: its temporaries go before the next */
        tn_tensor *r;
        if (tensors) r = grad_coords(&c, x, w[i], spacing->u.tlist.data[i], order);
        else {
            tn_value h = nsp == 0 ? TN_D(1.0) : !list ? *spacing : spacing->u.slist.data[i];
            r = grad_uniform(&c, x, w[i], h, order);
        }
        st = c.st;
        if (st == TN_OK) { tn_tensor_retain(r); res[i] = r; }
        tn_cx_release(&c);
    }
    if (st != TN_OK) { tn_tensorlist_discard(res, nd); return st; }
    rets[0] = tn_value_tensorlist(res, nd);
    return TN_OK;
}

static int64_t one_dim(const tn_value *v, int64_t *buf) { if (v->tag == TN_V_NONE) return -1; buf[0] = v->u.i; return 1; }

/* aten::gradient.scalarint(self, *, Scalar? spacing, int? dim, int edge_order) */
tn_status tn_op_gradient_scalarint(const tn_value *a, tn_value *r) {
    int64_t d, n = one_dim(&a[2], &d);
    return gradient(a[0].u.t, &a[1], a[1].tag == TN_V_NONE ? 0 : 1, false, n < 0 ? NULL : &d, n, a[3].u.i, r);
}
/* aten::gradient.scalararray(self, *, Scalar spacing, int[] dim, int edge_order) */
tn_status tn_op_gradient_scalararray(const tn_value *a, tn_value *r) {
    return gradient(a[0].u.t, &a[1], 1, false, a[2].u.ilist.data, a[2].u.ilist.n, a[3].u.i, r);
}
/* aten::gradient.array(self, *, int[] dim, int edge_order) */
tn_status tn_op_gradient_array(const tn_value *a, tn_value *r) {
    return gradient(a[0].u.t, NULL, 0, false, a[1].u.ilist.data, a[1].u.ilist.n, a[2].u.i, r);
}
/* aten::gradient.scalarrayint(self, *, Scalar[] spacing, int? dim, int edge_order) */
tn_status tn_op_gradient_scalarrayint(const tn_value *a, tn_value *r) {
    int64_t d, n = one_dim(&a[2], &d);
    return gradient(a[0].u.t, &a[1], (int)a[1].u.slist.n, false, n < 0 ? NULL : &d, n, a[3].u.i, r);
}
/* aten::gradient.scalarrayarray(self, *, Scalar[] spacing, int[] dim, int edge_order) */
tn_status tn_op_gradient_scalarrayarray(const tn_value *a, tn_value *r) {
    return gradient(a[0].u.t, &a[1], (int)a[1].u.slist.n, false, a[2].u.ilist.data, a[2].u.ilist.n, a[3].u.i, r);
}
/* aten::gradient.tensorarrayint(self, *, Tensor[] spacing, int? dim, int edge_order) */
tn_status tn_op_gradient_tensorarrayint(const tn_value *a, tn_value *r) {
    int64_t d, n = one_dim(&a[2], &d);
    return gradient(a[0].u.t, &a[1], (int)a[1].u.tlist.n, true, n < 0 ? NULL : &d, n, a[3].u.i, r);
}
/* aten::gradient.tensorarray(self, *, Tensor[] spacing, int[] dim, int edge_order) */
tn_status tn_op_gradient_tensorarray(const tn_value *a, tn_value *r) {
    return gradient(a[0].u.t, &a[1], (int)a[1].u.tlist.n, true, a[2].u.ilist.data, a[2].u.ilist.n, a[3].u.i, r);
}
