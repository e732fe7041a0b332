/* composite_shape.c — products, indexing and integration operators upstream composes from
 * others: tensordot, inner, kron, block_diag, cartesian_prod, combinations, argwhere,
 * nanmean, addr, bilinear, instance_norm, index_add / index_copy / index_fill / put (as
 * index_put with a full-slice prefix), trapezoid / trapz / cumulative_trapezoid. The chains
 * are upstream's; decompose.c runs them as their parts under autograd. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "autograd/autograd.h"
#include "core/scalar.h"
#include "core/threadpool.h"
#include "kernels/elementwise.h"
#include "ops/composite_internal.h"
#include "ops/iter.h"
#include "ops/promote.h"
#include "ops/shape.h"

static tn_value dtype_v(tn_dtype d) { tn_value v = {.tag = TN_V_DTYPE}; v.u.dtype = d; return v; }
static tn_value device_v(const tn_tensor *t) { tn_value v = {.tag = TN_V_DEVICE}; v.u.device = t->storage->device; return v; }
static tn_value ilist(const int64_t *p, int64_t n) { return tn_value_intlist(p, n); }


static tn_tensor *to_dtype(tn_cx *c, tn_tensor *t, tn_dtype d) {
    if (!t || t->dtype == d) return t;
    return tn_cx_call(c, TN_OP__to_copy, TN_ARGS(TN_T(t), dtype_v(d), TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE));
}
static tn_tensor *reshape(tn_cx *c, tn_tensor *t, const int64_t *s, int n) { return tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(t), ilist(s, n))); }
static tn_tensor *slice(tn_cx *c, tn_tensor *t, int64_t dim, int64_t start, int64_t end) {
    return tn_cx_call(c, TN_OP_slice_Tensor, TN_ARGS(TN_T(t), TN_I(dim), TN_I(start), TN_I(end), TN_I(1)));
}
static tn_tensor *sum_dim(tn_cx *c, tn_tensor *t, int64_t dim, bool keepdim) {
    return tn_cx_call(c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(t), ilist(&dim, 1), TN_B(keepdim), TN_NONE));
}
static tn_tensor *binop(tn_cx *c, tn_op_id op, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, op, TN_ARGS(TN_T(a), TN_T(b))); }
static tn_tensor *add(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_add_Tensor, TN_ARGS(TN_T(a), TN_T(b), TN_I(1))); }
static tn_tensor *sub(tn_cx *c, tn_tensor *a, tn_tensor *b) { return tn_cx_call(c, TN_OP_sub_Tensor, TN_ARGS(TN_T(a), TN_T(b), TN_I(1))); }

/* ---- products ----------------------------------------------------------------------- */

/* upstream's tensordot: size-1 contracted dims summed away first, then the free dims of a,
 * the contracted dims, the free dims of b, one mm and a reshape */
static tn_tensor *tensordot(tn_cx *c, tn_tensor *a, tn_tensor *b, const int64_t *da_in, const int64_t *db_in, int64_t nd) {
    if (c->st != TN_OK) return NULL;
    if (a->dtype != b->dtype) {
        tn_cx_fail(c, tn_error(TN_ERR_RUNTIME, "both inputs should have same dtype"));
        return NULL;
    }
    bool ca[TN_MAX_DIMS] = {0}, cb[TN_MAX_DIMS] = {0};
    int64_t da[TN_MAX_DIMS], db[TN_MAX_DIMS], csize = 1;
    tn_tensor *t1 = a, *t2 = b;
    for (int64_t i = 0; i < nd; i++) {
        tn_status st = tn_cx_check_dim(da_in[i], a->ndim);
        if (st == TN_OK) st = tn_cx_check_dim(db_in[i], b->ndim);
        if (st != TN_OK) { tn_cx_fail(c, st); return NULL; }
        da[i] = tn_cx_wrap_dim(da_in[i], a->ndim);
        db[i] = tn_cx_wrap_dim(db_in[i], b->ndim);
        if (ca[da[i]] || cb[db[i]]) {
            tn_cx_fail(c, tn_error(TN_ERR_RUNTIME, "dim %lld appears multiple times in the list of dims",
                                   (long long)(ca[da[i]] ? da[i] : db[i])));
            return NULL;
        }
        ca[da[i]] = cb[db[i]] = true;
        int64_t s1 = a->sizes[da[i]], s2 = b->sizes[db[i]];
        if (s2 == 1) t1 = tn_cx_call(c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(t1), ilist(&da[i], 1), TN_B(true), dtype_v(a->dtype)));
        else if (s1 == 1) t2 = tn_cx_call(c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(t2), ilist(&db[i], 1), TN_B(true), dtype_v(b->dtype)));
        else if (s1 != s2) {
            tn_cx_fail(c, tn_error(TN_ERR_RUNTIME, "contracted dimensions need to match, but first has size %lld in dim %lld and second has size %lld in dim %lld",
                                   (long long)s1, (long long)da_in[i], (long long)s2, (long long)db_in[i]));
            return NULL;
        } else csize *= s1;
    }
    if (c->st != TN_OK) return NULL;
    int64_t p1[TN_MAX_DIMS], p2[TN_MAX_DIMS], rs[2 * TN_MAX_DIMS], size1 = 1, size2 = 1;
    int n1 = 0, n2 = 0, nr = 0;
    for (int i = 0; i < a->ndim; i++)
        if (!ca[i]) { p1[n1++] = i; size1 *= t1->sizes[i]; rs[nr++] = t1->sizes[i]; }
    for (int64_t i = 0; i < nd; i++) p1[n1++] = da[i];
    for (int64_t i = 0; i < nd; i++) p2[n2++] = db[i];
    for (int i = 0; i < b->ndim; i++)
        if (!cb[i]) { p2[n2++] = i; size2 *= t2->sizes[i]; rs[nr++] = t2->sizes[i]; }
    int64_t m1[2] = {size1, csize}, m2[2] = {csize, size2};
    t1 = reshape(c, tn_cx_call(c, TN_OP_permute, TN_ARGS(TN_T(t1), ilist(p1, n1))), m1, 2);
    t2 = reshape(c, tn_cx_call(c, TN_OP_permute, TN_ARGS(TN_T(t2), ilist(p2, n2))), m2, 2);
    return reshape(c, binop(c, TN_OP_mm, t1, t2), rs, nr);
}

/* aten::tensordot(self, other, dims_self, dims_other) */
tn_status tn_op_tensordot(const tn_value *args, tn_value *rets) {
    if (args[2].u.ilist.n != args[3].u.ilist.n) return tn_error(TN_ERR_RUNTIME, "both dimension lists should have same length");
    tn_cx c = {0};
    return tn_cx_finish(&c, tensordot(&c, args[0].u.t, args[1].u.t, args[2].u.ilist.data, args[3].u.ilist.data, args[2].u.ilist.n), rets);
}

/* aten::inner(self, other): a product with a 0-dim operand, else tensordot over the last dims */
tn_status tn_op_inner(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t, *b = args[1].u.t;
    if (a->ndim == 0 || b->ndim == 0) return tn_dispatch(TN_OP_mul_Tensor, args, rets);
    if (a->sizes[a->ndim - 1] != b->sizes[b->ndim - 1])
        return tn_error(TN_ERR_RUNTIME, "inner() the last dimension must match on both input tensors but got shapes and");
    tn_cx c = {0};
    int64_t d = -1;
    return tn_cx_finish(&c, tensordot(&c, a, b, &d, &d, 1), rets);
}

/* aten::kron(self, other): both padded to the same rank, interleaved as (a0, 1, a1, 1, ...)
 * and (1, b0, 1, b1, ...), multiplied, and merged pairwise */
tn_status tn_op_kron(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t, *b = args[1].u.t;
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    int64_t sa[2 * TN_MAX_DIMS], sb[2 * TN_MAX_DIMS], so[TN_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
        int64_t x = ia >= 0 ? a->sizes[ia] : 1, y = ib >= 0 ? b->sizes[ib] : 1;
        sa[2 * i] = x, sa[2 * i + 1] = 1;
        sb[2 * i] = 1, sb[2 * i + 1] = y;
        so[i] = x * y;
    }
    tn_cx c = {0};
    tn_tensor *p = binop(&c, TN_OP_mul_Tensor, reshape(&c, a, sa, 2 * nd), reshape(&c, b, sb, 2 * nd));
    return tn_cx_finish(&c, reshape(&c, p, so, nd), rets);
}

/* aten::block_diag(tensors): each (at most 2-d, as a 2-d block) padded with zeros to the full
 * width and the rows concatenated, in the tensors' common dtype */
tn_status tn_op_block_diag(const tn_value *args, tn_value *rets) {
    int64_t n = args[0].u.tlist.n;
    tn_tensor *const *ts = args[0].u.tlist.data;
    tn_result_type_state rs = tn_result_type_state_init();
    int64_t width = 0;
    for (int64_t i = 0; i < n; i++) {
        if (ts[i]->ndim > 2)
            return tn_error(TN_ERR_RUNTIME, "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input %lld has %d dimensions",
                            (long long)i, ts[i]->ndim);
        TN_TRY(tn_result_type_update_tensor(&rs, ts[i]));
        width += ts[i]->ndim == 2 ? ts[i]->sizes[1] : ts[i]->ndim == 1 ? ts[i]->sizes[0] : 1;
    }
    tn_dtype dt = TN_DTYPE_FLOAT32;
    if (n > 0) TN_TRY(tn_result_type_finish(&rs, &dt));
    tn_cx c = {0};
    if (n == 0) {
        int64_t z[2] = {1, 0}; /* upstream: a 1 x 0 result for no tensors */
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_zeros, TN_ARGS(ilist(z, 2), TN_NONE, TN_NONE, TN_NONE, TN_NONE)), rets);
    }
    tn_tensor *rows[64];
    if (n > 64) return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::block_diag of more than 64 tensors is not implemented by torchnative");
    int64_t col = 0;
    for (int64_t i = 0; i < n; i++) {
        tn_tensor *t = ts[i];
        int64_t s2[2] = {t->ndim == 2 ? t->sizes[0] : 1, t->ndim == 2 ? t->sizes[1] : t->ndim == 1 ? t->sizes[0] : 1};
        tn_tensor *m = reshape(&c, to_dtype(&c, t, dt), s2, 2);
        int64_t pad[2] = {col, width - col - s2[1]};
        rows[i] = tn_cx_call(&c, TN_OP_constant_pad_nd, TN_ARGS(TN_T(m), ilist(pad, 2), TN_I(0)));
        col += s2[1];
    }
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_cat, TN_ARGS(tn_value_tensorlist(rows, n), TN_I(0))), rets);
}

/* meshgrid(tensors, indexing="ij") into grids[] (kept by the scratch) */
static bool meshgrid_ij(tn_cx *c, tn_tensor **ts, int64_t n, tn_tensor **grids) {
    if (c->st != TN_OK) return false;
    tn_value s = {.tag = TN_V_STRING};
    s.u.s.data = "ij";
    s.u.s.n = 2;
    tn_value r[1];
    c->st = tn_dispatch(TN_OP_meshgrid_indexing, TN_ARGS(tn_value_tensorlist(ts, n), s), r);
    if (c->st != TN_OK) return false;
    for (int64_t k = 0; k < n; k++) grids[k] = tn_cx_keep(c, r[0].u.tlist.data[k]);
    tn_value_release(&r[0]);
    return c->st == TN_OK;
}

/* aten::cartesian_prod(tensors): the ij meshgrid, each grid flattened, stacked as columns */
tn_status tn_op_cartesian_prod(const tn_value *args, tn_value *rets) {
    int64_t n = args[0].u.tlist.n;
    tn_tensor *ts[TN_MAX_DIMS], *g[TN_MAX_DIMS];
    if (n > TN_MAX_DIMS) return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::cartesian_prod of more than %d tensors is not implemented by torchnative", TN_MAX_DIMS);
    for (int64_t i = 0; i < n; i++) {
        ts[i] = args[0].u.tlist.data[i];
        if (ts[i]->ndim != 1)
            return tn_error(TN_ERR_RUNTIME, "Expect a 1D vector, but got shape [%s]", ts[i]->ndim == 0 ? "" : "...");
    }
    if (n == 1) {
        tn_tensor_retain(ts[0]);
        rets[0] = tn_value_tensor(ts[0]);
        return TN_OK;
    }
    tn_cx c = {0};
    if (meshgrid_ij(&c, ts, n, g))
        for (int64_t i = 0; i < n; i++) g[i] = tn_cx_call(&c, TN_OP_flatten_using_ints, TN_ARGS(TN_T(g[i]), TN_I(0), TN_I(-1)));
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_stack, TN_ARGS(tn_value_tensorlist(g, n), TN_I(1))), rets);
}

/* aten::combinations(self, r, with_replacement): the r-fold ij meshgrid of self, each grid
 * masked by i < j < ... (<= with replacement) over the same grid of indices, stacked */
tn_status tn_op_combinations(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    int64_t r = args[1].u.i;
    bool rep = args[2].u.b;
    if (x->ndim != 1) return tn_error(TN_ERR_RUNTIME, "Expect a 1D vector, but got shape");
    if (r < 0) return tn_error(TN_ERR_RUNTIME, "Expect a non-negative number, but got %lld", (long long)r);
    tn_cx c = {0};
    if (r == 0) {
        int64_t z = 0;
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_empty_memory_format, TN_ARGS(ilist(&z, 1), dtype_v(x->dtype), TN_NONE, device_v(x), TN_NONE, TN_NONE)), rets);
    }
    if (r > TN_MAX_DIMS) return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::combinations with r > %d is not implemented by torchnative", TN_MAX_DIMS);
    tn_tensor *xs[TN_MAX_DIMS], *g[TN_MAX_DIMS], *ig[TN_MAX_DIMS];
    for (int64_t i = 0; i < r; i++) xs[i] = x;
    tn_tensor *range = tn_cx_call(&c, TN_OP_arange, TN_ARGS(TN_I(x->sizes[0]), dtype_v(TN_DTYPE_INT64), TN_NONE, device_v(x), TN_NONE));
    tn_tensor *rs[TN_MAX_DIMS];
    for (int64_t i = 0; i < r; i++) rs[i] = range;
    if (meshgrid_ij(&c, xs, r, g) && meshgrid_ij(&c, rs, r, ig)) {
        tn_tensor *mask = NULL;
        for (int64_t i = 0; i + 1 < r; i++) {
            tn_tensor *m = binop(&c, rep ? TN_OP_le_Tensor : TN_OP_lt_Tensor, ig[i], ig[i + 1]);
            mask = mask ? binop(&c, TN_OP_logical_and, mask, m) : m;
        }
        if (!mask) mask = tn_cx_call(&c, TN_OP_ones_like, TN_ARGS(TN_T(ig[0]), dtype_v(TN_DTYPE_BOOL), TN_NONE, TN_NONE, TN_NONE, TN_NONE));
        for (int64_t i = 0; i < r; i++) g[i] = binop(&c, TN_OP_masked_select, g[i], mask);
    }
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_stack, TN_ARGS(tn_value_tensorlist(g, r), TN_I(1))), rets);
}

/* aten::argwhere(self) = nonzero(self) */
tn_status tn_op_argwhere(const tn_value *args, tn_value *rets) { return tn_dispatch(TN_OP_nonzero, args, rets); }

/* aten::nanmean(self, dim, keepdim, dtype) = nansum / the count of non-NaN elements */
tn_status tn_op_nanmean(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    if (!tn_dtype_is_floating(x->dtype) && !tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "nanmean(): expected input to have floating point or complex dtype but got %s",
                        tn_dtype_infos[x->dtype].c10_name);
    if (args[3].tag == TN_V_DTYPE && !tn_dtype_is_floating(args[3].u.dtype) && !tn_dtype_is_complex(args[3].u.dtype))
        return tn_error(TN_ERR_RUNTIME, "nanmean(): could not infer output dtype. Optional dtype must be either a "
                                        "floating point or complex dtype. Got: %s", tn_dtype_infos[args[3].u.dtype].c10_name);
    tn_cx c = {0};
    tn_tensor *ok = tn_cx_call(&c, TN_OP_logical_not, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_isnan, TN_ARGS(args[0])))));
    tn_tensor *cnt = tn_cx_call(&c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(ok), args[1], args[2], TN_NONE));
    tn_tensor *s = tn_cx_call(&c, TN_OP_nansum, TN_ARGS(args[0], args[1], args[2], args[3]));
    return tn_cx_finish(&c, binop(&c, TN_OP_div_Tensor, s, cnt), rets);
}

/* aten::addr(self, vec1, vec2, beta, alpha) = beta * self + alpha * outer(vec1, vec2);
 * with beta == 0 self is not read (its NaNs do not propagate), as upstream */
tn_status tn_op_addr(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *v1 = args[1].u.t, *v2 = args[2].u.t;
    if (v1->ndim != 1) return tn_error(TN_ERR_RUNTIME, "addr: Expected 1-D argument vec1, but got %d-D", v1->ndim);
    if (v2->ndim != 1) return tn_error(TN_ERR_RUNTIME, "addr: Expected 1-D argument vec2, but got %d-D", v2->ndim);
    tn_dtype dt;
    TN_TRY(tn_result_type(3, args, &dt));
    const tn_value *beta = &args[3], *alpha = &args[4];
    if (dt != TN_DTYPE_BOOL && (beta->tag == TN_V_BOOL || alpha->tag == TN_V_BOOL))
        return tn_error(TN_ERR_RUNTIME, "Boolean %s only supported for Boolean results.", beta->tag == TN_V_BOOL ? "beta" : "alpha");
    if (tn_dtype_is_integral(dt, true)) {
        if (beta->tag == TN_V_DOUBLE) return tn_error(TN_ERR_RUNTIME, "For integral input tensors, argument beta must not be a floating point number.");
        if (alpha->tag == TN_V_DOUBLE) return tn_error(TN_ERR_RUNTIME, "For integral input tensors, argument alpha must not be a floating point number.");
    }
    bool beta0 = (beta->tag == TN_V_BOOL && !beta->u.b) || (beta->tag == TN_V_INT && beta->u.i == 0) ||
                 (beta->tag == TN_V_DOUBLE && beta->u.d == 0);
    tn_cx c = {0};
    int64_t shape[2] = {v1->sizes[0], v2->sizes[0]};
    /* upstream's kernel: beta * self + (alpha * vec1) * vec2 per element, beta and alpha
     * first converted to the result dtype (0-dim tensors of it here) */
    tn_tensor *av = tn_cx_call(&c, TN_OP_scalar_tensor, TN_ARGS(*alpha, dtype_v(dt), TN_NONE, device_v(self), TN_NONE));
    tn_tensor *a1 = binop(&c, TN_OP_mul_Tensor, to_dtype(&c, v1, dt), av);
    tn_tensor *outer = binop(&c, TN_OP_mul_Tensor, tn_cx_call(&c, TN_OP_unsqueeze, TN_ARGS(TN_T(a1), TN_I(1))),
                             tn_cx_call(&c, TN_OP_unsqueeze, TN_ARGS(TN_T(to_dtype(&c, v2, dt)), TN_I(0))));
    tn_tensor *out;
    if (beta0) {
        /* self only decides the shape it broadcasts to (an error if it cannot) */
        tn_cx_call(&c, TN_OP_expand, TN_ARGS(TN_T(self), ilist(shape, 2), TN_B(false)));
        out = tn_cx_call(&c, TN_OP_clone, TN_ARGS(TN_T(outer), TN_NONE));
    } else {
        tn_tensor *bv = tn_cx_call(&c, TN_OP_scalar_tensor, TN_ARGS(*beta, dtype_v(dt), TN_NONE, device_v(self), TN_NONE));
        tn_tensor *bs = binop(&c, TN_OP_mul_Tensor, to_dtype(&c, self, dt), bv);
        out = add(&c, tn_cx_call(&c, TN_OP_expand, TN_ARGS(TN_T(bs), ilist(shape, 2), TN_B(false))), outer);
    }
    return tn_cx_finish(&c, out, rets);
}

/* aten::bilinear(input1, input2, weight, bias): out[.., o] = sum_ij x1[.., i] W[o, i, j]
 * x2[.., j] (+ bias): x1 @ W (i, o*j), then a batched product with x2 */
tn_status tn_op_bilinear(const tn_value *args, tn_value *rets) {
    tn_tensor *x1 = args[0].u.t, *x2 = args[1].u.t, *w = args[2].u.t;
    tn_tensor *bias = args[3].tag == TN_V_TENSOR ? args[3].u.t : NULL;
    if (x1->ndim != x2->ndim)
        return tn_error(TN_ERR_RUNTIME, "bilinear(): input dimensions do not match: got %d and %d", x1->ndim, x2->ndim);
    if (x1->ndim < 1) return tn_error(TN_ERR_RUNTIME, "bilinear(): input dimensions must be at least 1");
    /* upstream reads weight.size(1) and weight.size(2) unchecked: a weight of fewer dims
     * fails there with size()'s IndexError */
    if (w->ndim < 3) {
        int d = w->ndim < 2 ? 1 : 2;
        if (w->ndim == 0) return tn_error(TN_ERR_INDEX, "Dimension specified as %d but tensor has no dimensions", d);
        return tn_error(TN_ERR_INDEX, "Dimension out of range (expected to be in range of [%d, %d], but got %d)", -w->ndim,
                        w->ndim - 1, d);
    }
    for (int k = 0; k + 1 < x1->ndim; k++)
        if (x1->sizes[k] != x2->sizes[k]) return tn_error(TN_ERR_RUNTIME, "bilinear(): input batch dimensions do not match");
    int64_t i1 = x1->sizes[x1->ndim - 1], i2 = x2->sizes[x2->ndim - 1], O = w->sizes[0];
    if (i1 != w->sizes[1])
        return tn_error(TN_ERR_RUNTIME, "bilinear(): input1 size does not match weight size: got %lld but expected %lld", (long long)i1, (long long)w->sizes[1]);
    if (i2 != w->sizes[2])
        return tn_error(TN_ERR_RUNTIME, "bilinear(): input2 size does not match weight size: got %lld but expected %lld", (long long)i2, (long long)w->sizes[2]);
    if (bias && (bias->ndim != 1 || bias->sizes[0] != O))
        return tn_error(TN_ERR_RUNTIME, "bilinear(): bias size does not match weight size");
    tn_cx c = {0};
    if (w->ndim > 3) {
        /* upstream's _trilinear returns zeros for an empty operand before it compares the
         * operands' dims; otherwise those dims differ */
        if (tn_tensor_numel(x1) && tn_tensor_numel(x2) && tn_tensor_numel(w))
            return tn_error(TN_ERR_RUNTIME, "number of dimensions must match");
        int64_t zs[TN_MAX_DIMS];
        memcpy(zs, x1->sizes, sizeof(int64_t) * (size_t)x1->ndim);
        zs[x1->ndim - 1] = O;
        tn_value dt = {.tag = TN_V_DTYPE};
        dt.u.dtype = x1->dtype;
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_zeros, TN_ARGS(ilist(zs, x1->ndim), dt, TN_NONE, device_v(x1), TN_NONE)), rets);
    }
    int64_t B = 1;
    for (int k = 0; k + 1 < x1->ndim; k++) B *= x1->sizes[k];
    int64_t s1[2] = {B, i1}, s2[3] = {B, i2, 1}, sw[2] = {i1, O * i2}, sp[3] = {B, O, i2}, sb[2] = {B, O}, so[TN_MAX_DIMS],
            perm[3] = {1, 0, 2};
    memcpy(so, x1->sizes, sizeof(int64_t) * (size_t)x1->ndim);
    so[x1->ndim - 1] = O;
    /* two contractions, each one product (as upstream's _trilinear: over i, then over j) */
    tn_tensor *wt = reshape(&c, tn_cx_call(&c, TN_OP_permute, TN_ARGS(TN_T(w), ilist(perm, 3))), sw, 2);
    tn_tensor *t = reshape(&c, binop(&c, TN_OP_mm, reshape(&c, x1, s1, 2), wt), sp, 3);
    tn_tensor *o = reshape(&c, binop(&c, TN_OP_bmm, t, reshape(&c, x2, s2, 3)), sb, 2);
    if (bias) o = add(&c, o, bias);
    return tn_cx_finish(&c, reshape(&c, o, so, x1->ndim), rets);
}

/* aten::instance_norm: batch_norm over the input viewed as (1, N*C, *), the affine and
 * running tensors repeated N times; the running statistics written back as their mean
 * over the batch (upstream's composition) */
tn_status tn_op_instance_norm(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    bool use_stats = args[5].u.b;
    tn_tensor *rm = args[3].tag == TN_V_TENSOR ? args[3].u.t : NULL, *rv = args[4].tag == TN_V_TENSOR ? args[4].u.t : NULL;
    if (!use_stats && (!rm || !rv))
        return tn_error(TN_ERR_RUNTIME, "Expected running_mean and running_var to be defined when use_input_stats is false");
    if (x->ndim < 2) return tn_error(TN_ERR_RUNTIME, "instance_norm: expected an input with at least 2 dimensions");
    int64_t b = x->sizes[0], ch = x->sizes[1], shape[TN_MAX_DIMS];
    memcpy(shape, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    shape[1] = b * ch;
    shape[0] = 1;
    tn_cx c = {0};
    tn_value rep[4];
    for (int k = 0; k < 4; k++) {
        rep[k] = args[1 + k];
        if (rep[k].tag == TN_V_TENSOR) rep[k] = TN_T(tn_cx_call(&c, TN_OP_repeat, TN_ARGS(rep[k], ilist(&b, 1))));
    }
    tn_tensor *xr = tn_cx_call(&c, TN_OP_view, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_contiguous, TN_ARGS(args[0], (tn_value){.tag = TN_V_MEMFMT}))), ilist(shape, x->ndim)));
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    tn_tensor *out = tn_cx_call(&c, TN_OP_batch_norm, TN_ARGS(TN_T(xr), rep[0], rep[1], rep[2], rep[3], args[5], args[6], args[7], args[8]));
    int64_t bc[2] = {b, ch}, zero = 0;
    for (int k = 0; k < 2; k++) {
        tn_tensor *run = k == 0 ? rm : rv;
        if (!run || c.st != TN_OK) continue;
        tn_tensor *m = tn_cx_call(&c, TN_OP_mean_dim, TN_ARGS(TN_T(reshape(&c, rep[2 + k].u.t, bc, 2)), ilist(&zero, 1), TN_B(false), TN_NONE));
        if (c.st != TN_OK) break;
        tn_value r[1];
        tn_status st = tn_dispatch(TN_OP_copy_, TN_ARGS(TN_T(run), TN_T(m), TN_B(false)), r);
        if (st == TN_OK) tn_value_release(&r[0]);
        tn_cx_fail(&c, st);
    }
    return tn_cx_finish(&c, reshape(&c, out, x->sizes, x->ndim), rets);
}

/* ---- index_add / index_copy / index_fill / put: index_put with `dim` leading full slices -- */

static tn_status index_checks(const char *name, tn_tensor *self, int64_t *dim, tn_tensor *index, tn_tensor *source) {
    TN_TRY(tn_cx_check_dim(*dim, self->ndim));
    *dim = tn_cx_wrap_dim(*dim, self->ndim);
    if (index->ndim > 1) return tn_error(TN_ERR_INDEX, "%s(): Index is supposed to be a vector", name);
    if (index->dtype != TN_DTYPE_INT64 && index->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_RUNTIME, "%s(): Expected dtype int32/int64 for index", name);
    if (source && source->dtype != self->dtype)
        return tn_error(TN_ERR_RUNTIME, "%s(): self (%s) and source (%s) must have the same scalar type", name,
                        tn_dtype_infos[self->dtype].c10_name, tn_dtype_infos[source->dtype].c10_name);
    return TN_OK;
}

/* upstream's index_add_/index_copy_ CPU kernels take indices in [0, size) only (no
 * negative index from the end, unlike index_put and index_fill); copy_msg: index_copy_'s
 * own words, else index_add_'s: IndexError, but RuntimeError from the path it takes for an
 * int64 index into a self of 2+ dims, which returns first when there is nothing to add */
static tn_status index_in_range(const tn_tensor *self, int64_t dim, const tn_tensor *index, const tn_tensor *src, bool copy_msg) {
    if (tn_tensor_is_meta(index) || tn_tensor_numel(index) == 0) return TN_OK;
    bool slices = !copy_msg && self->ndim > 1;
    if (slices && (tn_tensor_numel(src) == 0 || tn_tensor_numel(self) == 0)) return TN_OK;
    int64_t size = self->ndim ? self->sizes[dim] : 1, n = tn_tensor_numel(index);
    int64_t step = index->ndim ? index->strides[0] : 0;
    const char *base = tn_tensor_data(index);
    for (int64_t k = 0; k < n; k++) {
        int64_t v = index->dtype == TN_DTYPE_INT64 ? ((const int64_t *)base)[k * step] : ((const int32_t *)base)[k * step];
        if (v < 0 || v >= size) {
            if (copy_msg)
                return tn_error(TN_ERR_INDEX, "index_copy_(): index %lld is out of bounds for dimension %lld with size %lld",
                                (long long)v, (long long)dim, (long long)size);
            if (slices && index->dtype == TN_DTYPE_INT64)
                return tn_error(TN_ERR_RUNTIME, "index %lld is out of bounds for dimension %lld with size %lld",
                                (long long)v, (long long)dim, (long long)size);
            return tn_error(TN_ERR_INDEX, "index out of range in self");
        }
    }
    return TN_OK;
}

/* index_put(self, [None] * dim + [index], values, accumulate), a 0-dim self indexed as 1-d;
 * with `in_place`, index_put_ into self itself (the result is self) */
static tn_status index_put_dim(tn_tensor *self, int64_t dim, tn_tensor *index, tn_tensor *values, bool acc, bool in_place,
                               tn_value *rets) {
    tn_cx c = {0};
    tn_tensor *base = self, *idx = index;
    int64_t one = 1;
    if (self->ndim == 0) base = reshape(&c, self, &one, 1);
    if (index->ndim == 0) idx = reshape(&c, index, &one, 1);
    tn_tensor *list[TN_MAX_DIMS] = {0};
    list[dim] = idx;
    tn_tensor *o = tn_cx_call(&c, in_place ? TN_OP_index_put_ : TN_OP_index_put,
                              TN_ARGS(TN_T(base), tn_value_tensorlist(list, dim + 1), TN_T(values), TN_B(acc)));
    if (in_place) o = self; /* finish retains it (unused on failure) */
    else if (self->ndim == 0) o = reshape(&c, o, NULL, 0);
    return tn_cx_finish(&c, o, rets);
}

/* aten::index_add(self, dim, index, source, alpha) */
/* index_add of contiguous float32 with alpha 1: out.select(dim, index[k]) += src.select(dim, k)
 * for k in order (upstream's CPU kernel adds slice after slice, so an element indexed twice
 * sums in that order), written into a dense self when the door offers it (index_add_), else
 * into a copy of self. Before: index_put with accumulate through a copy, 17x upstream's
 * time for 1,000 rows into 1000 x 1000. */
typedef struct iadd_job {
    const char *ip;
    int64_t step;
    bool i64;
    float *o;
    const float *x;
    int64_t n, size, outer, inner;
    tn_loop_fn add;
} iadd_job;
/* columns [j0, j1) of every slice, the slices in index order */
static void iadd_part(const iadd_job *J, int64_t j0, int64_t j1) {
    tn_loop_ctx ctx = {0};
    const int64_t st[3] = {4, 4, 4};
    for (int64_t a = 0; a < J->outer; a++)
        for (int64_t k = 0; k < J->n; k++) {
            const int64_t v = J->i64 ? ((const int64_t *)J->ip)[k * J->step] : ((const int32_t *)J->ip)[k * J->step];
            float *d = J->o + (a * J->size + v) * J->inner;
            const float *s = J->x + (a * J->n + k) * J->inner;
            if (J->add && j1 - j0 >= 16) {
                char *p[3] = {(char *)(d + j0), (char *)(d + j0), (char *)(s + j0)};
                J->add(p, st, j1 - j0, &ctx);
            } else {
                for (int64_t j = j0; j < j1; j++) d[j] += s[j];
            }
        }
}
static void iadd_cols(void *ctx, int64_t c0, int64_t c1) {
    const iadd_job *J = ctx;
    iadd_part(J, c0 * 64, c1 * 64 < J->inner ? c1 * 64 : J->inner);
}

static tn_status index_add_rows(tn_tensor *self, tn_tensor *into, int64_t dim, tn_tensor *index, tn_tensor *src,
                                tn_value *rets) {
    tn_tensor *out;
    TN_TRY(tn_shape_self_or_copy(self, into == self, index, src, &out));
    int64_t n = tn_tensor_numel(index), size = self->sizes[dim], outer = 1, inner = 1;
    for (int i = 0; i < dim; i++) outer *= self->sizes[i];
    for (int i = (int)dim + 1; i < self->ndim; i++) inner *= self->sizes[i];
    iadd_job J = {tn_tensor_data(index), index->ndim ? index->strides[0] : 0, index->dtype == TN_DTYPE_INT64,
                  tn_tensor_data(out), tn_tensor_data(src), n, size, outer, inner, tn_ew_loop(TN_EW_add, TN_DTYPE_FLOAT32)};
    /* wide slices: their columns cut among the threads (each column's sums keep the index
     * order, whichever thread has it), a slice's part added by the vector add loop (plain
     * scalar adds on one thread before: 2.8x upstream's time for 1,000 rows of 1,000) */
    if (inner >= 64 && J.add) tn_parallel_for((inner + 63) / 64, (4096 + n * 64 - 1) / (n * 64 > 0 ? n * 64 : 1), iadd_cols, &J);
    else iadd_part(&J, 0, inner);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

tn_status tn_op_index_add(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *index = args[2].u.t, *src = args[3].u.t, *into = tn_iter_offer_take(rets);
    int64_t dim = args[1].u.i;
    TN_TRY(index_checks("index_add_", self, &dim, index, src));
    /* upstream's meta checks of the source's dims and the index count, before any early
     * return */
    if (src->ndim > 0 && dim >= src->ndim)
        return tn_error(TN_ERR_RUNTIME, "index_add_(): Indexing dim %lld is out of bounds of the source tensor with dim %d",
                        (long long)dim, src->ndim);
    {
        int64_t ssz = src->ndim ? src->sizes[dim] : 1;
        if (tn_tensor_numel(index) != ssz)
            return tn_error(TN_ERR_RUNTIME, "index_add_(): Number of indices (%lld) should be equal to source.size(dim): "
                            "(%lld), for dim: %lld", (long long)tn_tensor_numel(index), (long long)ssz, (long long)dim);
    }
    {
        /* self's and source's shapes without dim (both whole when either is 0-dim) must match */
        int sd = self->ndim && src->ndim ? (int)dim : -1, ns = self->ndim - (sd >= 0), nr = src->ndim - (sd >= 0);
        bool same = ns == nr;
        for (int i = 0, j = 0; same && i < self->ndim; i++) {
            if (i == sd) continue;
            if (j == sd) j++;
            same = self->sizes[i] == src->sizes[j++];
        }
        if (!same) {
            char b1[256], b2[256];
            return tn_error(TN_ERR_RUNTIME, "source tensor shape must match self tensor shape, excluding the specified "
                            "dimension. Got self.shape = %s source.shape = %s",
                            tn_format_sizes(self->ndim, self->sizes, b1, sizeof b1), tn_format_sizes(src->ndim, src->sizes, b2, sizeof b2));
        }
    }
    TN_TRY(index_in_range(self, dim, index, src, false));
    if (self->ndim > 1 && (tn_tensor_numel(src) == 0 || tn_tensor_numel(self) == 0)) {
        /* upstream's CPU kernel returns before reading the index: a copy of self */
        tn_cx c = {0};
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_clone, TN_ARGS(TN_T(self), TN_NONE)), rets);
    }
    const tn_value *alpha = &args[4];
    bool unit = (alpha->tag == TN_V_INT && alpha->u.i == 1) || (alpha->tag == TN_V_DOUBLE && alpha->u.d == 1) ||
                (alpha->tag == TN_V_BOOL && alpha->u.b);
    /* (not while autograd records: this composite then runs as its parts, which record) */
    bool recording = (tn_grad_mode_enabled() && (tn_requires_grad(self) || tn_requires_grad(src))) ||
                     tn_fw_has_tangent(self) || tn_fw_has_tangent(src);
    if (unit && !recording && self->dtype == TN_DTYPE_FLOAT32 && self->ndim >= 1 && src->ndim == self->ndim && !tn_tensor_is_meta(self) &&
        !tn_tensor_is_meta(src) && !tn_tensor_is_meta(index) && tn_tensor_is_contiguous(self) && tn_tensor_is_contiguous(src) &&
        tn_tensor_numel(self) > 0)
        return index_add_rows(self, into, dim, index, src, rets);
    tn_cx c = {0};
    tn_tensor *v = unit ? src : tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(src), *alpha));
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    tn_status st = index_put_dim(self, dim, index, v, true, false, rets);
    tn_cx_release(&c);
    return st;
}

/* upstream's index_copy meta checks, in its order: the index's rank, a scalar source with
 * one index, the ranks of source and self, the index dtype, the slice shapes (self's and
 * source's sizes without `dim`), then the index count against source.size(dim). */
static tn_status index_copy_checks(const tn_tensor *self, int64_t dim, const tn_tensor *index, const tn_tensor *src) {
    TN_TRY(tn_cx_check_dim(dim, self->ndim));
    dim = tn_cx_wrap_dim(dim, self->ndim);
    if (index->ndim >= 2)
        return tn_error(TN_ERR_INDEX, "index_copy_(): Index should have dimension 1 or 0 (got %d)", index->ndim);
    int64_t n = tn_tensor_numel(index);
    if (src->ndim == 0 && n != 1)
        return tn_error(TN_ERR_INDEX, "index_copy_(): When source is scalar, index should have one element (got %lld)",
                        (long long)n);
    if (src->ndim != self->ndim && src->ndim != 0 && self->ndim != 0)
        return tn_error(TN_ERR_INDEX, "index_copy_(): When source and destination are not scalars, their dimensionality "
                        "must match. Source dimensionality (%d), destination dimensionality (%d)", src->ndim, self->ndim);
    if (index->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "index_copy_(): Expected a long tensor for index, but got %s",
                        tn_dtype_infos[index->dtype].c10_name);
    if (self->dtype != src->dtype)
        return tn_error(TN_ERR_RUNTIME, "index_copy_(): self and source expected to have the same dtype, but got (self) "
                        "%s and (source) %s", tn_dtype_infos[self->dtype].c10_name, tn_dtype_infos[src->dtype].c10_name);
    bool same = self->ndim == src->ndim || (self->ndim <= 1 && src->ndim <= 1);
    for (int d = 0; same && d < self->ndim && d < src->ndim; d++) same = d == dim || self->sizes[d] == src->sizes[d];
    if (!same) { /* upstream prints each slice shape as its sizes separated by spaces */
        char a[TN_MAX_DIMS * 21 + 1] = "", b[TN_MAX_DIMS * 21 + 1] = "";
        for (int d = 0, k = 0; d < self->ndim; d++)
            if (d != dim) k += snprintf(a + k, sizeof a - (size_t)k, "%s%lld", k ? " " : "", (long long)self->sizes[d]);
        for (int d = 0, k = 0; d < src->ndim; d++)
            if (d != dim) k += snprintf(b + k, sizeof b - (size_t)k, "%s%lld", k ? " " : "", (long long)src->sizes[d]);
        return tn_error(TN_ERR_RUNTIME, "index_copy_(): Source/destination tensor must have same slice shapes. "
                        "Destination slice shape: %s at dimension %lld and source slice shape: %s at dimension 0.", a,
                        (long long)dim, b);
    }
    if (src->ndim != 0 && n != src->sizes[dim])
        return tn_error(TN_ERR_INDEX, "index_copy_(): Number of indices (%lld) should be equal to source.size(dim) (%lld)",
                        (long long)n, (long long)src->sizes[dim]);
    return TN_OK;
}

/* aten::index_copy(self, dim, index, source). Called for index_copy_, the door offers self
 * (dispatch.c): a dense self is then written in place, after upstream's checks of self
 * against index and source (the door's own come after the functional, too late for a
 * kernel that writes self); otherwise the result is a copy of self that the door copies back.
 * A static KV cache's update, eager: 4.2 -> 0.87 us a call (docs/INFERENCE.md, "The x8 layouts
 * on AVX-512 VNNI hosts"). */
tn_status tn_op_index_copy(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *into = tn_iter_offer_take(rets);
    int64_t dim = args[1].u.i;
    TN_TRY(index_copy_checks(self, dim, args[2].u.t, args[3].u.t));
    TN_TRY(index_checks("index_copy_", self, &dim, args[2].u.t, args[3].u.t));
    TN_TRY(index_in_range(self, dim, args[2].u.t, args[3].u.t, true));
    bool in_place = into == self && !tn_tensor_is_meta(self) && tn_tensor_is_non_overlapping_and_dense(self);
    if (in_place) {
        TN_TRY(tn_check_no_overlap(self, args[2].u.t));
        TN_TRY(tn_check_no_overlap(self, args[3].u.t));
    }
    return index_put_dim(self, dim, args[2].u.t, args[3].u.t, false, in_place, rets);
}

/* aten::index_fill.int_Scalar / int_Tensor(self, dim, index, value) */
static tn_status index_fill(const tn_value *args, tn_value *rets, bool tensor_value) {
    tn_tensor *self = args[0].u.t, *index = args[2].u.t, *into = tn_iter_offer_take(rets);
    int64_t dim = args[1].u.i;
    /* upstream's index_fill_ checks, in its order (its own, not index_checks') */
    if (tensor_value && args[3].u.t->ndim != 0)
        return tn_error(TN_ERR_RUNTIME, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).", args[3].u.t->ndim);
    if (index->dtype != TN_DTYPE_INT64) return tn_error(TN_ERR_INDEX, "index_fill_(): Expected dtype int64 for index.");
    bool cx_value = tensor_value ? tn_dtype_is_complex(args[3].u.t->dtype) : args[3].tag == TN_V_COMPLEX;
    if (cx_value && !tn_dtype_is_complex(self->dtype))
        return tn_error(TN_ERR_RUNTIME, "index_fill_(): Converting complex Scalar to non-complex type is not supported");
    TN_TRY(tn_cx_check_dim(dim, self->ndim));
    dim = tn_cx_wrap_dim(dim, self->ndim);
    if (index->ndim > 1) return tn_error(TN_ERR_RUNTIME, "Index has to be a vector/scalar");
    tn_cx c = {0};
    tn_tensor *v = tensor_value ? to_dtype(&c, args[3].u.t, self->dtype)
                                : tn_cx_call(&c, TN_OP_scalar_tensor, TN_ARGS(args[3], dtype_v(self->dtype), TN_NONE, device_v(self), TN_NONE));
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    /* index_fill_: the door offers self; a dense one is filled in place (a copy of self filled
     * and copied back before: 3.1x upstream's time for 500 rows of 1000 x 1000) */
    bool in_place = into == self && !tn_tensor_is_meta(self) && tn_tensor_is_non_overlapping_and_dense(self);
    tn_status st = in_place ? tn_check_no_overlap(self, index) : TN_OK;
    if (st == TN_OK) st = index_put_dim(self, dim, args[2].u.t, v, false, in_place, rets);
    tn_cx_release(&c);
    return st;
}
tn_status tn_op_index_fill_int_Scalar(const tn_value *a, tn_value *r) { return index_fill(a, r, false); }
tn_status tn_op_index_fill_int_Tensor(const tn_value *a, tn_value *r) { return index_fill(a, r, true); }

/* aten::put(self, index, source, accumulate): index_put on the flattened self */
tn_status tn_op_put(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *index = args[1].u.t, *src = args[2].u.t;
    if (index->dtype != TN_DTYPE_INT64) return tn_error(TN_ERR_RUNTIME, "put_(): Expected a long tensor for index, but got %s", tn_dtype_infos[index->dtype].c10_name);
    if (src->dtype != self->dtype)
        return tn_error(TN_ERR_RUNTIME, "put_(): self and source expected to have the same dtype, but got self.dtype = %s and source.dtype = %s",
                        tn_dtype_infos[self->dtype].c10_name, tn_dtype_infos[src->dtype].c10_name);
    if (tn_tensor_numel(index) != tn_tensor_numel(src))
        return tn_error(TN_ERR_INDEX, "put_(): Expected source and index to have the same number of elements, but got source.numel() = %lld, index.numel() = %lld",
                        (long long)tn_tensor_numel(src), (long long)tn_tensor_numel(index));
    int64_t n = tn_tensor_numel(self);
    if (n == 0 && tn_tensor_numel(index) > 0)
        return tn_error(TN_ERR_INDEX, "put_(): Tried to put elements into an empty tensor");
    tn_cx c = {0};
    int64_t m1 = -1;
    tn_tensor *flat = reshape(&c, self, &n, 1), *idx = reshape(&c, index, &m1, 1), *vals = reshape(&c, src, &m1, 1);
    tn_tensor *list[1] = {idx};
    tn_tensor *o = tn_cx_call(&c, TN_OP_index_put, TN_ARGS(TN_T(flat), tn_value_tensorlist(list, 1), TN_T(vals), args[3]));
    return tn_cx_finish(&c, reshape(&c, o, self->sizes, self->ndim), rets);
}

/* ---- trapezoid ------------------------------------------------------------------------ */

/* y's shape without `dim`, zeros (the integral over no samples) */
static tn_tensor *zeros_except(tn_cx *c, tn_tensor *y, int64_t dim) {
    int64_t s[TN_MAX_DIMS];
    int n = 0;
    for (int k = 0; k < y->ndim; k++)
        if (k != dim) s[n++] = y->sizes[k];
    return tn_cx_call(c, TN_OP_zeros, TN_ARGS(ilist(s, n), dtype_v(y->dtype), TN_NONE, device_v(y), TN_NONE));
}

/* dx from the sample points x along dim (x 1-d, or padded to y's rank) */
static tn_tensor *trapezoid_dx(tn_cx *c, tn_tensor *y, tn_tensor *x, int64_t dim) {
    tn_tensor *xv = x;
    int64_t s[TN_MAX_DIMS];
    if (x->ndim == 1) {
        if (x->sizes[0] != y->sizes[dim]) {
            tn_cx_fail(c, tn_error(TN_ERR_RUNTIME, "trapezoid: There must be one `x` value for each sample point"));
            return NULL;
        }
        for (int k = 0; k < y->ndim; k++) s[k] = k == dim ? x->sizes[0] : 1;
        xv = tn_cx_call(c, TN_OP_view, TN_ARGS(TN_T(x), ilist(s, y->ndim)));
    } else if (x->ndim < y->ndim) {
        int pad = y->ndim - x->ndim;
        for (int k = 0; k < y->ndim; k++) s[k] = k < pad ? 1 : x->sizes[k - pad];
        xv = tn_cx_call(c, TN_OP_view, TN_ARGS(TN_T(x), ilist(s, y->ndim)));
    }
    if (c->st != TN_OK) return NULL;
    return sub(c, slice(c, xv, dim, 1, INT64_MAX), slice(c, xv, dim, 0, -1));
}

static tn_status trapezoid_impl(const tn_value *args, tn_value *rets, bool with_x, bool cumulative) {
    tn_tensor *y = args[0].u.t;
    int64_t dim = args[with_x ? 2 : 2].u.i;
    TN_TRY(tn_cx_check_dim(dim, y->ndim));
    dim = tn_cx_wrap_dim(dim, y->ndim);
    const char *name = cumulative ? "cumulative_trapezoid" : "trapezoid";
    tn_cx c = {0};
    /* upstream's order: trapezoid answers an empty dim (numpy's 0) before any dtype check */
    if (y->ndim > 0 && y->sizes[dim] == 0 && !cumulative) return tn_cx_finish(&c, zeros_except(&c, y, dim), rets);
    if (with_x && (y->dtype == TN_DTYPE_BOOL || args[1].u.t->dtype == TN_DTYPE_BOOL))
        return tn_error(TN_ERR_RUNTIME, "%s: received a bool input for `x` or `y`, but bool is not supported", name);
    if (!with_x && y->dtype == TN_DTYPE_BOOL)
        return tn_error(TN_ERR_RUNTIME, "%s: received a bool input for `y`, but bool is not supported", name);
    if (!with_x && (args[1].tag == TN_V_COMPLEX || args[1].tag == TN_V_BOOL))
        return tn_error(TN_ERR_RUNTIME, "%s: Currently, we only support dx as a real number.", name);
    tn_tensor *left = slice(&c, y, dim, 0, -1), *right = slice(&c, y, dim, 1, INT64_MAX), *o;
    if (with_x) {
        tn_tensor *dx = trapezoid_dx(&c, y, args[1].u.t, dim);
        if (cumulative) {
            o = tn_cx_call(&c, TN_OP_div_Scalar, TN_ARGS(TN_T(binop(&c, TN_OP_mul_Tensor, dx, add(&c, left, right))), TN_D(2.)));
            o = tn_cx_call(&c, TN_OP_cumsum, TN_ARGS(TN_T(o), TN_I(dim), TN_NONE));
        } else {
            o = tn_cx_call(&c, TN_OP_div_Scalar, TN_ARGS(TN_T(sum_dim(&c, binop(&c, TN_OP_mul_Tensor, add(&c, left, right), dx), dim, false)), TN_D(2.)));
        }
    } else {
        const tn_value *dxv = &args[1];
        double dx = dxv->tag == TN_V_INT ? (double)dxv->u.i : dxv->tag == TN_V_BOOL ? dxv->u.b : dxv->u.d;
        if (cumulative) {
            o = tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(add(&c, left, right)), TN_D(dx / 2.)));
            o = tn_cx_call(&c, TN_OP_cumsum, TN_ARGS(TN_T(o), TN_I(dim), TN_NONE));
        } else {
            /* (sum(y) - (y[0] + y[-1]) * 0.5) * dx */
            tn_tensor *ends = add(&c, tn_cx_call(&c, TN_OP_select_int, TN_ARGS(TN_T(y), TN_I(dim), TN_I(0))),
                                  tn_cx_call(&c, TN_OP_select_int, TN_ARGS(TN_T(y), TN_I(dim), TN_I(-1))));
            o = sub(&c, sum_dim(&c, y, dim, false), tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(ends), TN_D(0.5))));
            o = tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(o), TN_D(dx)));
        }
    }
    return tn_cx_finish(&c, o, rets);
}
/* aten::trapezoid.x / trapezoid.dx / trapz.x / trapz.dx / cumulative_trapezoid.x / .dx */
tn_status tn_op_trapezoid_x(const tn_value *a, tn_value *r) { return trapezoid_impl(a, r, true, false); }
tn_status tn_op_trapezoid_dx(const tn_value *a, tn_value *r) { return trapezoid_impl(a, r, false, false); }
tn_status tn_op_trapz_x(const tn_value *a, tn_value *r) { return trapezoid_impl(a, r, true, false); }
tn_status tn_op_trapz_dx(const tn_value *a, tn_value *r) { return trapezoid_impl(a, r, false, false); }
tn_status tn_op_cumulative_trapezoid_x(const tn_value *a, tn_value *r) { return trapezoid_impl(a, r, true, true); }
tn_status tn_op_cumulative_trapezoid_dx(const tn_value *a, tn_value *r) { return trapezoid_impl(a, r, false, true); }

/* aten::cummaxmin_backward(grad, input, indices, dim): grad scattered (added) to the
 * positions the running max/min came from */
tn_status tn_op_cummaxmin_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[1].u.t;
    tn_cx c = {0};
    if (tn_tensor_numel(x) == 0) return tn_cx_finish(&c, x, rets);
    tn_tensor *z = tn_cx_call(&c, TN_OP_zeros_like, TN_ARGS(TN_T(x), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_NONE));
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_scatter_add, TN_ARGS(TN_T(z), args[3], args[2], args[0])), rets);
}

/* ---- cov / corrcoef ---------------------------------------------------------------------- */

/* a 0-dim Bool result's value: 1 or 0, -1 when unknown (meta device: value checks skipped) */
static int scalar_bool(tn_cx *c, tn_tensor *t) {
    if (c->st != TN_OK || !t || tn_tensor_is_meta(t)) return -1;
    return *(const uint8_t *)tn_tensor_data(t) != 0;
}

/* aten::cov(self, correction=1, fweights=None, aweights=None): variables in rows,
 * observations in columns, weighted as upstream's Correlation.cpp */
tn_status tn_op_cov(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int64_t corr = args[1].u.i;
    tn_tensor *fw = args[2].tag == TN_V_TENSOR ? args[2].u.t : NULL, *aw = args[3].tag == TN_V_TENSOR ? args[3].u.t : NULL;
    if (self->ndim > 2)
        return tn_error(TN_ERR_RUNTIME, "cov(): expected input to have two or fewer dimensions but got an input with %d dimensions", self->ndim);
    if (self->dtype == TN_DTYPE_BOOL) return tn_error(TN_ERR_RUNTIME, "cov(): bool dtype is not supported for input");
    if (tn_tensor_is_meta(self)) /* upstream reads values (its weight checks) and refuses too */
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::cov on the meta device is not implemented by torchnative");
    tn_cx c = {0};
    int64_t m1[2] = {1, -1};
    tn_tensor *in = self->ndim < 2 ? tn_cx_call(&c, TN_OP_view, TN_ARGS(TN_T(self), ilist(m1, 2))) : self;
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    int64_t nobs = in->sizes[1];
    tn_tensor *w = NULL;
    for (int k = 0; k < 2; k++) {
        tn_tensor *x = k == 0 ? fw : aw;
        const char *name = k == 0 ? "fweights" : "aweights";
        if (!x) continue;
        if (x->ndim > 1)
            tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "cov(): expected %s to have one or fewer dimensions but got %s with %d dimensions", name, name, x->ndim));
        else if (k == 0 && !tn_dtype_is_integral(x->dtype, false))
            tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "cov(): expected fweights to have integral dtype but got fweights with %s dtype", tn_dtype_infos[x->dtype].c10_name));
        else if (k == 1 && !tn_dtype_is_floating(x->dtype))
            tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "cov(): expected aweights to have floating point dtype but got aweights with %s dtype", tn_dtype_infos[x->dtype].c10_name));
        else if (tn_tensor_numel(x) != nobs)
            tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "cov(): expected %s to have the same numel as there are observations in the input but got %lld != %lld",
                                    name, (long long)tn_tensor_numel(x), (long long)nobs));
        else if (nobs > 0 && scalar_bool(&c, tn_cx_call(&c, TN_OP_ge_Scalar, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_min, TN_ARGS(TN_T(x)))), TN_I(0)))) == 0)
            tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "cov(): %s cannot be negative", name));
        w = w ? binop(&c, TN_OP_mul_Tensor, w, x) : x;
    }
    tn_tensor *wsum = w ? tn_cx_call(&c, TN_OP_sum, TN_ARGS(TN_T(w), TN_NONE))
                        : tn_cx_call(&c, TN_OP_scalar_tensor, TN_ARGS(TN_I(nobs), dtype_v(TN_DTYPE_INT64), TN_NONE, device_v(self), TN_NONE));
    if (w && c.st == TN_OK && scalar_bool(&c, tn_cx_call(&c, TN_OP_ne_Scalar, TN_ARGS(TN_T(wsum), TN_I(0)))) == 0)
        tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "cov(): weights sum to zero, can't be normalized"));
    tn_tensor *avg = binop(&c, TN_OP_div_Tensor, sum_dim(&c, w ? binop(&c, TN_OP_mul_Tensor, in, w) : in, 1, false), wsum);
    tn_tensor *norm;
    if (w && aw && corr != 0) {
        tn_tensor *t = tn_cx_call(&c, TN_OP_sum, TN_ARGS(TN_T(binop(&c, TN_OP_mul_Tensor, w, aw)), TN_NONE));
        t = binop(&c, TN_OP_div_Tensor, tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(t), TN_I(corr))), wsum);
        norm = sub(&c, wsum, t);
    } else {
        norm = tn_cx_call(&c, TN_OP_sub_Scalar, TN_ARGS(TN_T(wsum), TN_I(corr), TN_I(1)));
    }
    if (c.st == TN_OK && scalar_bool(&c, tn_cx_call(&c, TN_OP_le_Scalar, TN_ARGS(TN_T(norm), TN_I(0)))) == 1)
        norm = tn_cx_call(&c, TN_OP_zeros_like, TN_ARGS(TN_T(norm), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_NONE));
    tn_tensor *centred = sub(&c, in, tn_cx_call(&c, TN_OP_unsqueeze, TN_ARGS(TN_T(avg), TN_I(1))));
    tn_tensor *rhs = tn_cx_call(&c, TN_OP_t, TN_ARGS(TN_T(w ? binop(&c, TN_OP_mul_Tensor, centred, w) : centred)));
    if (c.st == TN_OK && tn_dtype_is_complex(rhs->dtype)) /* upstream: .t().conj() */
        rhs = tn_cx_call(&c, TN_OP_conj_physical, TN_ARGS(TN_T(rhs)));
    tn_tensor *cm = binop(&c, TN_OP_mm, centred, rhs);
    tn_tensor *o = tn_cx_call(&c, TN_OP_true_divide_Tensor, TN_ARGS(TN_T(cm), TN_T(norm)));
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_squeeze, TN_ARGS(TN_T(o))), rets);
}

/* aten::corrcoef(self): cov normalised by the standard deviations and clipped to [-1, 1] */
tn_status tn_op_corrcoef(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (self->ndim > 2)
        return tn_error(TN_ERR_RUNTIME, "corrcoef(): expected input to have two or fewer dimensions but got an input with %d dimensions", self->ndim);
    tn_cx c = {0};
    tn_tensor *cv = tn_cx_call(&c, TN_OP_cov, TN_ARGS(args[0], TN_I(1), TN_NONE, TN_NONE));
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    if (cv->ndim == 0) return tn_cx_finish(&c, binop(&c, TN_OP_div_Tensor, cv, cv), rets);
    tn_tensor *sd = tn_cx_call(&c, TN_OP_sqrt, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_diagonal, TN_ARGS(TN_T(cv), TN_I(0), TN_I(0), TN_I(1))))));
    int64_t col[2] = {-1, 1}, row[2] = {1, -1};
    tn_tensor *o = binop(&c, TN_OP_div_Tensor, cv, tn_cx_call(&c, TN_OP_view, TN_ARGS(TN_T(sd), ilist(col, 2))));
    o = binop(&c, TN_OP_div_Tensor, o, tn_cx_call(&c, TN_OP_view, TN_ARGS(TN_T(sd), ilist(row, 2))));
    if (c.st == TN_OK && tn_dtype_is_complex(o->dtype)) { /* upstream clips both parts */
        tn_tensor *re = tn_cx_call(&c, TN_OP_clamp, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_real, TN_ARGS(TN_T(o)))), TN_I(-1), TN_I(1)));
        tn_tensor *im = tn_cx_call(&c, TN_OP_clamp, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_imag, TN_ARGS(TN_T(o)))), TN_I(-1), TN_I(1)));
        return tn_cx_finish(&c, binop(&c, TN_OP_complex, re, im), rets);
    }
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_clamp, TN_ARGS(TN_T(o), TN_I(-1), TN_I(1))), rets);
}

/* aten::index_reduce(self, dim, index, source, reduce, include_self): scatter_reduce with
 * the 1-d index laid along dim and expanded to source's shape */
tn_status tn_op_index_reduce(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *index = args[2].u.t, *src = args[3].u.t;
    int64_t dim = args[1].u.i;
    const char *red = args[4].u.s.data;
    if (strcmp(red, "prod") && strcmp(red, "mean") && strcmp(red, "amax") && strcmp(red, "amin"))
        return tn_error(TN_ERR_RUNTIME, "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got %s.", red);
    TN_TRY(index_checks("index_reduce_", self, &dim, index, src));
    int nd = src->ndim > 0 ? src->ndim : 1;
    if (src->ndim != self->ndim && !(src->ndim <= 1 && self->ndim <= 1))
        return tn_error(TN_ERR_INDEX, "index_reduce_(): Source/destination tensor must have same slice shapes.");
    if (tn_tensor_numel(index) != (src->ndim ? src->sizes[dim] : 1))
        return tn_error(TN_ERR_INDEX, "index_reduce_(): Number of indices (%lld) should be equal to source.size(dim) (%lld)",
                        (long long)tn_tensor_numel(index), (long long)(src->ndim ? src->sizes[dim] : 1));
    tn_cx c = {0};
    int64_t shape[TN_MAX_DIMS], ones[TN_MAX_DIMS], n1 = 1;
    for (int d = 0; d < nd; d++) {
        shape[d] = src->ndim ? src->sizes[d] : 1;
        ones[d] = d == dim ? tn_tensor_numel(index) : 1;
    }
    tn_tensor *s1 = self->ndim ? self : reshape(&c, self, &n1, 1), *src1 = src->ndim ? src : reshape(&c, src, &n1, 1);
    tn_tensor *idx = tn_cx_call(&c, TN_OP_expand, TN_ARGS(TN_T(reshape(&c, index, ones, nd)), ilist(shape, nd), TN_B(false)));
    tn_value rv = {.tag = TN_V_STRING};
    rv.u.s = args[4].u.s;
    tn_tensor *o = tn_cx_call(&c, TN_OP_scatter_reduce_two, TN_ARGS(TN_T(s1), TN_I(dim), TN_T(idx), TN_T(src1), rv, args[5]));
    if (!self->ndim) o = reshape(&c, o, NULL, 0);
    return tn_cx_finish(&c, o, rets);
}

/* ---- cdist / pdist ----------------------------------------------------------------------- */

/* p-norm distances of rows: x1 (*, r1, m), x2 (*, r2, m) -> (*, r1, r2). p = 2 with more
 * than 25 rows on either side (or compute_mode 1) takes upstream's matrix-product form
 * |x|^2 - 2 x.y + |y|^2, clamped at 0 before the root; else the norm of the differences. */
static tn_tensor *cdist(tn_cx *c, tn_tensor *x1, tn_tensor *x2, double p, int64_t mode) {
    if (c->st != TN_OK) return NULL;
    int64_t r1 = x1->sizes[x1->ndim - 2], r2 = x2->sizes[x2->ndim - 2];
    bool mm = p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
    if (mm) {
        int64_t last = -1;
        tn_tensor *n1 = tn_cx_call(c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(tn_cx_call(c, TN_OP_pow_Tensor_Scalar, TN_ARGS(TN_T(x1), TN_I(2)))), ilist(&last, 1), TN_B(true), TN_NONE));
        tn_tensor *n2 = tn_cx_call(c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(tn_cx_call(c, TN_OP_pow_Tensor_Scalar, TN_ARGS(TN_T(x2), TN_I(2)))), ilist(&last, 1), TN_B(true), TN_NONE));
        tn_tensor *p1 = tn_cx_call(c, TN_OP_ones_like, TN_ARGS(TN_T(n1), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_NONE));
        tn_tensor *p2 = tn_cx_call(c, TN_OP_ones_like, TN_ARGS(TN_T(n2), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_NONE));
        tn_tensor *a[3] = {tn_cx_call(c, TN_OP_mul_Scalar, TN_ARGS(TN_T(x1), TN_I(-2))), n1, p1}, *b[3] = {x2, p2, n2};
        if (c->st != TN_OK) return NULL;
        tn_tensor *x1_ = tn_cx_call(c, TN_OP_cat, TN_ARGS(tn_value_tensorlist(a, 3), TN_I(-1)));
        tn_tensor *x2_ = tn_cx_call(c, TN_OP_cat, TN_ARGS(tn_value_tensorlist(b, 3), TN_I(-1)));
        tn_tensor *r = binop(c, TN_OP_matmul, x1_, tn_cx_call(c, TN_OP_transpose_int, TN_ARGS(TN_T(x2_), TN_I(-2), TN_I(-1))));
        r = tn_cx_call(c, TN_OP_clamp_min, TN_ARGS(TN_T(r), TN_I(0)));
        return tn_cx_call(c, TN_OP_sqrt, TN_ARGS(TN_T(r)));
    }
    tn_tensor *d = sub(c, tn_cx_call(c, TN_OP_unsqueeze, TN_ARGS(TN_T(x1), TN_I(-2))), tn_cx_call(c, TN_OP_unsqueeze, TN_ARGS(TN_T(x2), TN_I(-3))));
    int64_t last = -1;
    return tn_cx_call(c, TN_OP_linalg_vector_norm, TN_ARGS(TN_T(d), TN_D(p), ilist(&last, 1), TN_B(false), TN_NONE));
}

/* aten::cdist(x1, x2, p=2, compute_mode=None) */
tn_status tn_op_cdist(const tn_value *args, tn_value *rets) {
    tn_tensor *x1 = args[0].u.t, *x2 = args[1].u.t;
    double p = args[2].u.d;
    int64_t mode = args[3].tag == TN_V_NONE ? 0 : args[3].u.i;
    if (x1->ndim < 2) return tn_error(TN_ERR_RUNTIME, "cdist only supports at least 2D tensors, X1 got: %dD", x1->ndim);
    if (x2->ndim < 2) return tn_error(TN_ERR_RUNTIME, "cdist only supports at least 2D tensors, X2 got: %dD", x2->ndim);
    if (x1->sizes[x1->ndim - 1] != x2->sizes[x2->ndim - 1])
        return tn_error(TN_ERR_RUNTIME, "X1 and X2 must have the same number of columns. X1: %lld X2: %lld",
                        (long long)x1->sizes[x1->ndim - 1], (long long)x2->sizes[x2->ndim - 1]);
    if (!tn_dtype_is_floating(x1->dtype) || !tn_dtype_is_floating(x2->dtype))
        return tn_error(TN_ERR_RUNTIME, "cdist only supports floating-point dtypes, X1 got: %s", tn_dtype_infos[x1->dtype].c10_name);
    if (!(p >= 0)) return tn_error(TN_ERR_RUNTIME, "cdist only supports non-negative p values");
    if (mode < 0 || mode > 2) return tn_error(TN_ERR_RUNTIME, "possible modes: None, 1, 2, but was: %lld", (long long)mode);
    tn_cx c = {0};
    return tn_cx_finish(&c, cdist(&c, x1, x2, p, mode), rets);
}

/* aten::pdist(self, p=2): upstream's checks, then _pdist_forward of the contiguous input
 * (nn_distance.c), as upstream composes it, so autograd records _pdist_forward */
tn_status tn_op_pdist(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    double p = args[1].u.d;
    if (x->ndim != 2) return tn_error(TN_ERR_RUNTIME, "pdist only supports 2D tensors, got: %dD", x->ndim);
    if (!tn_dtype_is_floating(x->dtype)) return tn_error(TN_ERR_RUNTIME, "pdist only supports floating-point dtypes");
    if (!(p >= 0)) return tn_error(TN_ERR_RUNTIME, "pdist only supports non-negative p values");
    tn_cx c = {0};
    tn_tensor *xc = tn_tensor_is_contiguous(x) ? x : tn_cx_call(&c, TN_OP_contiguous, TN_ARGS(TN_T(x), TN_MF(0)));
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP__pdist_forward, TN_ARGS(TN_T(xc), TN_D(p))), rets);
}

/* ---- small shape compositions ------------------------------------------------------------ */

/* aten::sum_to_size(self, size): self summed down to a shape it expands from (self itself
 * when the shapes agree, a full sum for size (), as upstream's sum_to) */
tn_status tn_op_sum_to_size(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    const int64_t *sz = args[1].u.ilist.data;
    int64_t n = args[1].u.ilist.n, lead = x->ndim - n;
    bool ok = lead >= 0;
    for (int64_t k = 0; ok && k < n; k++) ok = sz[k] == x->sizes[lead + k] || sz[k] == 1;
    if (!ok) return tn_error(TN_ERR_RUNTIME, "size {...} is not expandable to size {...}.");
    int64_t dims[TN_MAX_DIMS];
    int nd = 0;
    for (int64_t k = 0; k < lead; k++) dims[nd++] = k;
    for (int64_t k = 0; k < n; k++)
        if (sz[k] == 1 && x->sizes[lead + k] != 1) dims[nd++] = lead + k;
    tn_cx c = {0};
    if (n == 0) return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_sum, TN_ARGS(TN_T(x), TN_NONE)), rets); /* a full sum, as upstream */
    if (nd == 0) return tn_cx_finish(&c, x, rets);
    tn_tensor *s = tn_cx_call(&c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(x), ilist(dims, nd), TN_B(true), TN_NONE));
    return tn_cx_finish(&c, reshape(&c, s, sz, (int)n), rets);
}

/* aten::nonzero_static(self, *, size, fill_value=-1): nonzero's rows cut or padded to size */
tn_status tn_op_nonzero_static(const tn_value *args, tn_value *rets) {
    int64_t size = args[1].u.i;
    if (size < 0) return tn_error(TN_ERR_RUNTIME, "nonzero_static: 'size' must be an non-negative integer, but got size: %lld", (long long)size);
    tn_cx c = {0};
    tn_tensor *nz = tn_cx_call(&c, TN_OP_nonzero, TN_ARGS(args[0]));
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    int64_t n = nz->sizes[0], nd = args[0].u.t->ndim;
    if (n >= size) return tn_cx_finish(&c, slice(&c, nz, 0, 0, size), rets);
    int64_t fs[2] = {size - n, nd};
    tn_tensor *fill = tn_cx_call(&c, TN_OP_full, TN_ARGS(ilist(fs, 2), args[2], dtype_v(TN_DTYPE_INT64), TN_NONE, device_v(args[0].u.t), TN_NONE));
    tn_tensor *parts[2] = {nz, fill};
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, rets);
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_cat, TN_ARGS(tn_value_tensorlist(parts, 2), TN_I(0))), rets);
}

/* aten::empty_permuted(size, physical_layout, ...): an uninitialised tensor whose memory
 * holds its dims in physical_layout order */
tn_status tn_op_empty_permuted(const tn_value *args, tn_value *rets) {
    const int64_t *sz = args[0].u.ilist.data, *pl = args[1].u.ilist.data;
    int64_t n = args[0].u.ilist.n;
    if (args[1].u.ilist.n != n)
        return tn_error(TN_ERR_RUNTIME, "Number of dimensions in size does not match the length of the physical_layout; i.e. len(size) = %lld is not equal to len(physical_layout) = %lld",
                        (long long)n, (long long)args[1].u.ilist.n);
    if (n > TN_MAX_DIMS) return tn_error(TN_ERR_RUNTIME, "empty_permuted: too many dimensions");
    int64_t strides[TN_MAX_DIMS], acc = 1;
    bool seen[TN_MAX_DIMS] = {0};
    for (int64_t k = n - 1; k >= 0; k--) {
        if (pl[k] < 0 || pl[k] >= n || seen[pl[k]]) return tn_error(TN_ERR_RUNTIME, "Dimension out of range or repeated in physical_layout");
        seen[pl[k]] = true;
        strides[pl[k]] = acc;
        acc *= sz[pl[k]] > 1 ? sz[pl[k]] : 1;
    }
    return tn_dispatch(TN_OP_empty_strided, TN_ARGS(args[0], ilist(strides, n), args[2], args[3], args[4], args[5]), rets);
}

/* aten::renorm(self, p, dim, maxnorm): each slice along dim scaled by
 * maxnorm / (norm + 1e-7) where its p-norm exceeds maxnorm (norms in the accumulate type,
 * the factor in self's dtype, as upstream; a complex self's norms are real, in its own
 * precision) */
tn_status tn_op_renorm(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    double p = tn_scalar_as_double(&args[1]), maxnorm = tn_scalar_as_double(&args[3]); /* a bool is 0 or 1 */
    if (args[1].tag == TN_V_COMPLEX) return tn_error(TN_ERR_RUNTIME, "renorm: p must be real-valued");
    if (!(p > 0)) return tn_error(TN_ERR_RUNTIME, "renorm: non-positive-norm not supported");
    if (args[3].tag == TN_V_COMPLEX) return tn_error(TN_ERR_RUNTIME, "renorm: maxnorm must be real-valued");
    if (!tn_dtype_is_floating(x->dtype) && !tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "renorm: input needs to be floating point or complex, got %s", tn_dtype_infos[x->dtype].c10_name);
    if (!(maxnorm >= 0)) return tn_error(TN_ERR_RUNTIME, "renorm: expected maxnorm to be >= 0 but got %g", maxnorm);
    if (x->ndim <= 1) return tn_error(TN_ERR_RUNTIME, "renorm: input needs at least 2 dimensions, got %d dimensions", x->ndim);
    TN_TRY(tn_cx_check_dim(args[2].u.i, x->ndim));
    int64_t dim = tn_cx_wrap_dim(args[2].u.i, x->ndim), dims[TN_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < x->ndim; d++)
        if (d != dim) dims[nd++] = d;
    tn_dtype acc = (x->dtype == TN_DTYPE_BFLOAT16 || x->dtype == TN_DTYPE_FLOAT16) ? TN_DTYPE_FLOAT32 : x->dtype;
    tn_cx c = {0};
    tn_value norm_dtype = tn_dtype_is_complex(x->dtype) ? TN_NONE : dtype_v(acc);
    tn_tensor *norm = tn_cx_call(&c, TN_OP_linalg_vector_norm, TN_ARGS(TN_T(x), TN_D(p), ilist(dims, nd), TN_B(true), norm_dtype));
    tn_tensor *big = tn_cx_call(&c, TN_OP_gt_Scalar, TN_ARGS(TN_T(norm), TN_D(maxnorm)));
    tn_tensor *scale = tn_cx_call(&c, TN_OP_reciprocal, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_add_Scalar, TN_ARGS(TN_T(norm), TN_D(1e-7), TN_I(1))))));
    scale = tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(scale), TN_D(maxnorm)));
    tn_tensor *f = tn_cx_call(&c, TN_OP_where_ScalarOther, TN_ARGS(TN_T(big), TN_T(scale), TN_D(1.0)));
    /* a complex self multiplies by the real factor directly (no cast whose backward would
     * drop an imaginary part) */
    if (tn_dtype_is_complex(x->dtype)) return tn_cx_finish(&c, binop(&c, TN_OP_mul_Tensor, x, f), rets);
    return tn_cx_finish(&c, binop(&c, TN_OP_mul_Tensor, x, to_dtype(&c, f, x->dtype)), rets);
}
