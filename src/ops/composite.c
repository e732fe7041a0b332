/* composite.c — operators upstream defines as compositions of others (divide, positive,
 * type_as, broadcast_to, fliplr/flipud, deg2rad/rad2deg, ldexp, diag, diag_embed, meshgrid), composed the same way
 * through the door. Under autograd they run as their parts (src/autograd/decompose.c), as
 * upstream's CompositeImplicitAutograd kernels do; ldexp alone uses its generated formula row
 * (upstream's, which differs from its parts' gradient for negative exponents). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/scalar.h"
#include "ops/dispatch.h"
#include "ops/promote.h"
#include "ops/shape.h"
#include "ops/scalar_convert.h"

/* aten::positive(Tensor(a) self) -> Tensor(a): self itself; a bool tensor is refused. */
tn_status tn_op_positive(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (self->dtype == TN_DTYPE_BOOL)
        return tn_error(TN_ERR_RUNTIME, "The `+` operator, on a bool tensor is not supported.");
    tn_tensor_retain(self);
    rets[0] = tn_value_tensor(self);
    return TN_OK;
}

static tn_status flip_dim(const tn_value *args, tn_value *rets, int64_t dim, int min_dims) {
    if (args[0].u.t->ndim < min_dims) return tn_error(TN_ERR_RUNTIME, "Input must be >= %d-d.", min_dims);
    tn_value a[2] = {args[0], tn_value_intlist(&dim, 1)};
    return tn_dispatch(TN_OP_flip, a, rets);
}
/* aten::fliplr(self) = flip(self, [1]); aten::flipud(self) = flip(self, [0]) */
tn_status tn_op_fliplr(const tn_value *args, tn_value *rets) { return flip_dim(args, rets, 1, 2); }
tn_status tn_op_flipud(const tn_value *args, tn_value *rets) { return flip_dim(args, rets, 0, 1); }

/* self * factor as upstream's mul by a wrapped double (integers and bool become the
 * default float dtype); complex is refused with upstream's message. */
static tn_status scale_angle(const tn_value *args, tn_value *rets, double factor, const char *name) {
    if (tn_dtype_is_complex(args[0].u.t->dtype))
        return tn_error(TN_ERR_RUNTIME, "%s is not supported for complex tensors.", name);
    tn_value a[2] = {args[0], tn_value_double(factor)};
    return tn_dispatch(TN_OP_mul_Scalar, a, rets);
}
/* aten::deg2rad(self), aten::rad2deg(self) */
tn_status tn_op_deg2rad(const tn_value *args, tn_value *rets) { return scale_angle(args, rets, M_PI / 180.0, "deg2rad"); }
tn_status tn_op_rad2deg(const tn_value *args, tn_value *rets) { return scale_angle(args, rets, 180.0 / M_PI, "rad2deg"); }

/* aten::ldexp.Tensor(self, other) = self * 2^other in the promoted floating dtype of the two. */
tn_status tn_op_ldexp_Tensor(const tn_value *args, tn_value *rets) {
    /* upstream's kernel for a real floating self takes the exponent's integral types only */
    if (tn_dtype_is_floating(args[0].u.t->dtype) && args[1].u.t->dtype == TN_DTYPE_BOOL)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"ldexp_cpu_exp\" not implemented for 'Bool'");
    tn_dtype target;
    TN_TRY(tn_promote_types(args[0].u.t->dtype, args[1].u.t->dtype, &target));
    if (!tn_dtype_is_floating(target) && !tn_dtype_is_complex(target)) target = tn_default_dtype();
    tn_tensor *p, *m;
    tn_value pa[2] = {tn_value_double(2.0), args[1]};
    TN_TRY(tn_dispatch_one(TN_OP_pow_Scalar, pa, &p));
    tn_value ma[2] = {args[0], tn_value_tensor(p)};
    tn_dtype md;
    tn_status st = tn_promote_types(args[0].u.t->dtype, p->dtype, &md);
    if (st == TN_OK && md == target) {
        /* the product is the result: into rets, so a derived out= / in-place form's tensor
         * (tn_iter_offer) receives it directly, as upstream's mul_out / mul_ */
        st = tn_dispatch(TN_OP_mul_Tensor, ma, rets);
        tn_tensor_release(p);
        return st;
    }
    if (st == TN_OK) st = tn_dispatch_one(TN_OP_mul_Tensor, ma, &m);
    tn_tensor_release(p);
    TN_TRY(st);
    if (m->dtype == target) { rets[0] = tn_value_tensor(m); return TN_OK; }
    tn_value ta[7] = {tn_value_tensor(m), {.tag = TN_V_DTYPE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE},
                      {.tag = TN_V_NONE}, tn_value_bool(false), {.tag = TN_V_NONE}};
    ta[1].u.dtype = target;
    st = tn_dispatch(TN_OP__to_copy, ta, rets);
    tn_tensor_release(m);
    return st;
}

/* aten::diag_embed(self, offset=0, dim1=-2, dim2=-1): zeros of the batch shape with two new
 * dims (dim1, dim2) of size n + |offset|, whose offset diagonal receives self's last dim. */
tn_status tn_op_diag_embed(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int nd = self->ndim + 1;
    int d1, d2;
    TN_TRY(tn_wrap_dim(args[2].u.i, nd, &d1));
    TN_TRY(tn_wrap_dim(args[3].u.i, nd, &d2));
    if (d1 == d2)
        return tn_error(TN_ERR_RUNTIME, "diagonal dimensions cannot be identical %lld, %lld", (long long)args[2].u.i,
                        (long long)args[3].u.i);
    int64_t off = args[1].u.i, n = self->ndim ? self->sizes[self->ndim - 1] : 1;
    int64_t m = tn_add_wrap(n, off < 0 ? tn_mul_wrap(off, -1) : off), sz[TN_MAX_DIMS]; /* wraps as upstream's */
    for (int i = 0, k = 0; i < nd; i++) sz[i] = (i == d1 || i == d2) ? m : self->sizes[k++];
    tn_tensor *z, *dg;
    tn_value za[6] = {args[0], tn_value_intlist(sz, nd), {.tag = TN_V_NONE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE},
                      {.tag = TN_V_NONE}};
    TN_TRY(tn_dispatch_one(TN_OP_new_zeros, za, &z));
    tn_value da[4] = {tn_value_tensor(z), tn_value_int(off), tn_value_int(d1), tn_value_int(d2)};
    tn_status st = tn_dispatch_one(TN_OP_diagonal, da, &dg);
    if (st == TN_OK) {
        tn_value ca[3] = {tn_value_tensor(dg), args[0], tn_value_bool(false)}, r[1];
        st = tn_dispatch(TN_OP_copy_, ca, r);
        if (st == TN_OK) tn_value_release(&r[0]);
        tn_tensor_release(dg);
    }
    if (st != TN_OK) { tn_tensor_release(z); return st; }
    rets[0] = tn_value_tensor(z);
    return TN_OK;
}

/* aten::diag(self, diagonal=0): a vector becomes a matrix with it on that diagonal, a
 * matrix gives a copy of that diagonal. */
tn_status tn_op_diag(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (self->ndim == 1) {
        tn_value a[4] = {args[0], args[1], tn_value_int(0), tn_value_int(1)};
        return tn_dispatch(TN_OP_diag_embed, a, rets);
    }
    if (self->ndim == 2) {
        tn_value a[4] = {args[0], args[1], tn_value_int(0), tn_value_int(1)};
        return tn_dispatch(TN_OP_diagonal_copy, a, rets);
    }
    return tn_error(TN_ERR_RUNTIME, "diag(): Supports 1D or 2D tensors. Got %dD", self->ndim);
}

/* meshgrid: every (0- or 1-d) input viewed along its own output dim and expanded to the
 * grid; "xy" swaps the roles of the first two inputs' dims. */
static tn_status meshgrid_impl(const tn_value *args, tn_value *rets, bool xy) {
    int64_t n = args[0].u.tlist.n;
    tn_tensor *const *ts = args[0].u.tlist.data;
    if (n <= 0) return tn_error(TN_ERR_RUNTIME, "torch.meshgrid: Expected at least one tensor");
    int64_t shape[TN_MAX_DIMS];
    if (n > TN_MAX_DIMS) return tn_error(TN_ERR_RUNTIME, "torch.meshgrid: too many tensors");
    for (int64_t i = 0; i < n; i++) {
        if (ts[i]->ndim > 1)
            return tn_error(TN_ERR_RUNTIME, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: %dD",
                            ts[i]->ndim);
        if (ts[i]->dtype != ts[0]->dtype)
            return tn_error(TN_ERR_RUNTIME, "torch.meshgrid: Expected all tensors in the tensor list to have the same dtype.");
    }
    bool swap = xy && n >= 2;
    for (int64_t i = 0; i < n; i++) shape[i] = tn_tensor_numel(ts[i]);
    if (swap) { int64_t t = shape[0]; shape[0] = shape[1]; shape[1] = t; }
    tn_tensor **out = calloc((size_t)n, sizeof *out);
    if (!out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_status st = TN_OK;
    for (int64_t i = 0; i < n && st == TN_OK; i++) {
        int64_t pos = swap && i < 2 ? 1 - i : i, vs[TN_MAX_DIMS];
        for (int64_t k = 0; k < n; k++) vs[k] = k == pos ? -1 : 1;
        tn_tensor *v;
        tn_value va[2] = {tn_value_tensor(ts[i]), tn_value_intlist(vs, n)};
        st = tn_dispatch_one(TN_OP_reshape, va, &v);
        if (st != TN_OK) break;
        tn_value ea[3] = {tn_value_tensor(v), tn_value_intlist(shape, n), tn_value_bool(false)};
        st = tn_dispatch_one(TN_OP_expand, ea, &out[i]);
        tn_tensor_release(v);
    }
    if (st != TN_OK) {
        tn_tensorlist_discard(out, n);
        return st;
    }
    rets[0] = tn_value_tensorlist(out, n);
    return TN_OK;
}
/* aten::meshgrid(tensors) ("ij"), aten::meshgrid.indexing(tensors, *, indexing) */
tn_status tn_op_meshgrid(const tn_value *args, tn_value *rets) { return meshgrid_impl(args, rets, false); }
tn_status tn_op_meshgrid_indexing(const tn_value *args, tn_value *rets) {
    const char *s = args[1].u.s.data;
    int64_t len = args[1].u.s.n;
    if (len == 2 && !strncmp(s, "xy", 2)) return meshgrid_impl(args, rets, true);
    if (len == 2 && !strncmp(s, "ij", 2)) return meshgrid_impl(args, rets, false);
    return tn_error(TN_ERR_RUNTIME, "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %.*s",
                    (int)len, s);
}

/* aten::unsafe_chunk / unsafe_split / unsafe_split_with_sizes: chunk / split without the
 * view bookkeeping upstream skips; the values are the same. */
tn_status tn_op_unsafe_chunk(const tn_value *a, tn_value *r) { return tn_dispatch(TN_OP_chunk, a, r); }
tn_status tn_op_unsafe_split_Tensor(const tn_value *a, tn_value *r) { return tn_dispatch(TN_OP_split_Tensor, a, r); }
tn_status tn_op_unsafe_split_with_sizes(const tn_value *a, tn_value *r) { return tn_dispatch(TN_OP_split_with_sizes, a, r); }
/* aten::linalg_diagonal(A, *, offset, dim1, dim2) = diagonal(A, offset, dim1, dim2) */
tn_status tn_op_linalg_diagonal(const tn_value *a, tn_value *r) { return tn_dispatch(TN_OP_diagonal, a, r); }

/* aten::ravel(self) = reshape(self, [-1]) */
tn_status tn_op_ravel(const tn_value *args, tn_value *rets) {
    int64_t flat = -1;
    tn_value a[2] = {args[0], tn_value_intlist(&flat, 1)};
    return tn_dispatch(TN_OP_reshape, a, rets);
}

/* aten::diagflat(self, offset=0) = diag(self flattened, offset) */
tn_status tn_op_diagflat(const tn_value *args, tn_value *rets) {
    tn_tensor *f;
    int64_t flat = -1;
    tn_value ra[2] = {args[0], tn_value_intlist(&flat, 1)};
    TN_TRY(tn_dispatch_one(TN_OP_reshape, ra, &f));
    tn_value da[2] = {tn_value_tensor(f), args[1]};
    tn_status st = tn_dispatch(TN_OP_diag, da, rets);
    tn_tensor_release(f);
    return st;
}

/* aten::msort(self) = sort(self, dim=0).values */
tn_status tn_op_msort(const tn_value *args, tn_value *rets) {
    tn_value a[3] = {args[0], tn_value_int(0), tn_value_bool(false)}, r[2];
    TN_TRY(tn_dispatch(TN_OP_sort, a, r));
    tn_value_release(&r[1]);
    rets[0] = r[0];
    return TN_OK;
}

/* aten::trace(self) = the sum of a matrix's diagonal (integers sum into Long, as sum does) */
tn_status tn_op_trace(const tn_value *args, tn_value *rets) {
    if (args[0].u.t->ndim != 2)
        return tn_error(TN_ERR_RUNTIME, "trace: expected a matrix, but got tensor with dim %d", args[0].u.t->ndim);
    tn_tensor *d;
    tn_value da[4] = {args[0], tn_value_int(0), tn_value_int(0), tn_value_int(1)};
    TN_TRY(tn_dispatch_one(TN_OP_diagonal, da, &d));
    tn_value sa[2] = {tn_value_tensor(d), {.tag = TN_V_NONE}};
    tn_status st = tn_dispatch(TN_OP_sum, sa, rets);
    tn_tensor_release(d);
    return st;
}

/* aten::relu6(self) = hardtanh(self, 0, 6); aten::selu(self) = elu with upstream's alpha and
 * scale; aten::celu(self, alpha) = elu(self, alpha, 1, 1 / alpha). */
tn_status tn_op_relu6(const tn_value *args, tn_value *rets) {
    tn_value a[3] = {args[0], tn_value_int(0), tn_value_int(6)};
    return tn_dispatch(TN_OP_hardtanh, a, rets);
}
tn_status tn_op_selu(const tn_value *args, tn_value *rets) {
    tn_value a[4] = {args[0], tn_value_double(1.6732632423543772848170429916717),
                     tn_value_double(1.0507009873554804934193349852946), tn_value_int(1)};
    return tn_dispatch(TN_OP_elu, a, rets);
}
tn_status tn_op_celu(const tn_value *args, tn_value *rets) {
    double alpha = tn_scalar_as_double(&args[1]);
    if (alpha == 0) /* upstream's check, before the dtype's */
        return tn_error(TN_ERR_RUNTIME, "ZeroDivisionError: alpha cannot be 0 for CELU");
    tn_value a[4] = {args[0], args[1], tn_value_double(1.0), tn_value_double(1.0 / alpha)};
    return tn_dispatch(TN_OP_elu, a, rets);
}

/* aten::atleast_{1,2,3}d: self when it has the dims already, else a view with leading (and
 * for 3-d of a vector or matrix, trailing) size-1 dims, as upstream's composites reshape. */
static tn_status atleast(tn_tensor *t, int nd, tn_tensor **out) {
    int64_t sz[3];
    int n = t->ndim;
    if (n >= nd) { tn_tensor_retain(t); *out = t; return TN_OK; }
    if (n == 0) { sz[0] = sz[1] = sz[2] = 1; }
    else if (n == 1) { sz[0] = 1; sz[1] = t->sizes[0]; sz[2] = 1; } /* 2-d: [1, n]; 3-d: [1, n, 1] */
    else { sz[0] = t->sizes[0]; sz[1] = t->sizes[1]; sz[2] = 1; }  /* 3-d of a matrix: [m, n, 1] */
    tn_value ra[2] = {tn_value_tensor(t), tn_value_intlist(sz, nd)};
    return tn_dispatch_one(TN_OP_reshape, ra, out);
}
static tn_status atleast_one(const tn_value *args, tn_value *rets, int nd) {
    tn_tensor *o;
    TN_TRY(atleast(args[0].u.t, nd, &o));
    rets[0] = tn_value_tensor(o);
    return TN_OK;
}
static tn_status atleast_seq(const tn_value *args, tn_value *rets, int nd) {
    int64_t n = args[0].u.tlist.n;
    tn_tensor **out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    if (!out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        tn_status st = atleast(args[0].u.tlist.data[i], nd, &out[i]);
        if (st != TN_OK) {
            tn_tensorlist_discard(out, i);
            return st;
        }
    }
    rets[0] = tn_value_tensorlist(out, n);
    return TN_OK;
}
tn_status tn_op_atleast_1d(const tn_value *a, tn_value *r) { return atleast_one(a, r, 1); }
tn_status tn_op_atleast_2d(const tn_value *a, tn_value *r) { return atleast_one(a, r, 2); }
tn_status tn_op_atleast_3d(const tn_value *a, tn_value *r) { return atleast_one(a, r, 3); }
tn_status tn_op_atleast_1d_Sequence(const tn_value *a, tn_value *r) { return atleast_seq(a, r, 1); }
tn_status tn_op_atleast_2d_Sequence(const tn_value *a, tn_value *r) { return atleast_seq(a, r, 2); }
tn_status tn_op_atleast_3d_Sequence(const tn_value *a, tn_value *r) { return atleast_seq(a, r, 3); }

/* aten::{h,v,d}split.{int,array}: tensor_split along dim 1 (0 for a vector), 0 or 2, with
 * upstream's checks on the rank and on sections dividing the dim. */
static tn_status xsplit(const tn_value *args, tn_value *rets, const char *name, int min_dims, int dim, bool sections) {
    tn_tensor *x = args[0].u.t;
    if (x->ndim < min_dims)
        return tn_error(TN_ERR_RUNTIME, "torch.%s requires a tensor with at least %d dimension, but got a tensor with "
                                        "%d dimensions!", name, min_dims, x->ndim);
    if (dim == 1 && x->ndim == 1) dim = 0;
    if (sections) {
        int64_t s = args[1].u.i;
        if (s == 0 || x->sizes[dim] % s != 0)
            return tn_error(TN_ERR_RUNTIME, "torch.%s attempted to split along dimension %d, but the size of the dimension "
                                            "%lld is not divisible by the split_size %lld!",
                            name, dim, (long long)x->sizes[dim], (long long)s);
    }
    tn_value a[3] = {args[0], args[1], tn_value_int(dim)};
    return tn_dispatch(sections ? TN_OP_tensor_split_sections : TN_OP_tensor_split_indices, a, rets);
}
tn_status tn_op_hsplit_int(const tn_value *a, tn_value *r) { return xsplit(a, r, "hsplit", 1, 1, true); }
tn_status tn_op_hsplit_array(const tn_value *a, tn_value *r) { return xsplit(a, r, "hsplit", 1, 1, false); }
tn_status tn_op_vsplit_int(const tn_value *a, tn_value *r) { return xsplit(a, r, "vsplit", 2, 0, true); }
tn_status tn_op_vsplit_array(const tn_value *a, tn_value *r) { return xsplit(a, r, "vsplit", 2, 0, false); }
tn_status tn_op_dsplit_int(const tn_value *a, tn_value *r) { return xsplit(a, r, "dsplit", 3, 2, true); }
tn_status tn_op_dsplit_array(const tn_value *a, tn_value *r) { return xsplit(a, r, "dsplit", 3, 2, false); }

/* aten::column_stack(tensors): vectors and scalars as columns [n, 1], then hstack */
tn_status tn_op_column_stack(const tn_value *args, tn_value *rets) {
    int64_t n = args[0].u.tlist.n;
    if (n <= 0) return tn_error(TN_ERR_RUNTIME, "column_stack expects a non-empty TensorList");
    tn_tensor **cols = calloc((size_t)n, sizeof *cols);
    if (!cols) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_status st = TN_OK;
    for (int64_t i = 0; i < n && st == TN_OK; i++) {
        tn_tensor *t = args[0].u.tlist.data[i];
        if (t->ndim > 1) { tn_tensor_retain(t); cols[i] = t; continue; }
        int64_t sz[2] = {tn_tensor_numel(t), 1};
        tn_value ra[2] = {tn_value_tensor(t), tn_value_intlist(sz, 2)};
        st = tn_dispatch_one(TN_OP_reshape, ra, &cols[i]);
    }
    if (st == TN_OK) {
        tn_value l = {.tag = TN_V_TENSORLIST};
        l.u.tlist.data = cols;
        l.u.tlist.n = n;
        st = tn_dispatch(TN_OP_hstack, &l, rets);
    }
    for (int64_t i = 0; i < n; i++) if (cols[i]) tn_tensor_release(cols[i]);
    free(cols);
    return st;
}

/* aten::float_power.*: pow computed in Double (ComplexDouble when an operand is complex). */
static tn_status to_dtype(const tn_value *v, tn_dtype d, tn_tensor **out) {
    tn_value ta[7] = {*v, {.tag = TN_V_DTYPE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE},
                      tn_value_bool(false), {.tag = TN_V_NONE}};
    ta[1].u.dtype = d;
    return tn_dispatch_one(TN_OP__to_copy, ta, out);
}
static tn_dtype float_power_dtype(const tn_value *a, const tn_value *b) {
    bool cplx = (a->tag == TN_V_TENSOR ? tn_dtype_is_complex(a->u.t->dtype) : a->tag == TN_V_COMPLEX) ||
                (b->tag == TN_V_TENSOR ? tn_dtype_is_complex(b->u.t->dtype) : b->tag == TN_V_COMPLEX);
    return cplx ? TN_DTYPE_COMPLEX128 : TN_DTYPE_FLOAT64;
}
tn_status tn_op_float_power_Tensor_Tensor(const tn_value *args, tn_value *rets) {
    tn_dtype d = float_power_dtype(&args[0], &args[1]);
    tn_tensor *x, *e;
    TN_TRY(to_dtype(&args[0], d, &x));
    tn_status st = to_dtype(&args[1], d, &e);
    if (st == TN_OK) {
        tn_value pa[2] = {tn_value_tensor(x), tn_value_tensor(e)};
        st = tn_dispatch(TN_OP_pow_Tensor_Tensor, pa, rets);
        tn_tensor_release(e);
    }
    tn_tensor_release(x);
    return st;
}
tn_status tn_op_float_power_Tensor_Scalar(const tn_value *args, tn_value *rets) {
    tn_tensor *x;
    TN_TRY(to_dtype(&args[0], float_power_dtype(&args[0], &args[1]), &x));
    tn_value pa[2] = {tn_value_tensor(x), args[1]};
    tn_status st = tn_dispatch(TN_OP_pow_Tensor_Scalar, pa, rets);
    tn_tensor_release(x);
    return st;
}
tn_status tn_op_float_power_Scalar(const tn_value *args, tn_value *rets) {
    tn_tensor *e;
    TN_TRY(to_dtype(&args[1], float_power_dtype(&args[0], &args[1]), &e));
    tn_value pa[2] = {args[0], tn_value_tensor(e)};
    tn_status st = tn_dispatch(TN_OP_pow_Scalar, pa, rets);
    tn_tensor_release(e);
    return st;
}

/* aten::rot90(self, k=1, dims=[0, 1]): flips and a transposition by k mod 4, with upstream's checks */
tn_status tn_op_rot90(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    const int64_t *dv = args[2].u.ilist.data;
    int64_t nd = args[2].u.ilist.n, n = x->ndim;
    if (nd != 2) return tn_error(TN_ERR_RUNTIME, "expected total rotation dims == 2, but got dims = %lld", (long long)nd);
    if (n < 2) return tn_error(TN_ERR_RUNTIME, "expected total dims >= 2, but got total dims = %lld", (long long)n);
    if (dv[0] == dv[1] || llabs(dv[0] - dv[1]) == n)
        return tn_error(TN_ERR_RUNTIME, "expected rotation dims to be different, but got dim0 = %lld and dim1 = %lld",
                        (long long)dv[0], (long long)dv[1]);
    if (dv[0] < -n || dv[0] >= n)
        return tn_error(TN_ERR_RUNTIME, "Rotation dim0 out of range, dim0 = %lld", (long long)dv[0]);
    if (dv[1] < -n || dv[1] >= n)
        return tn_error(TN_ERR_RUNTIME, "Rotation dim1 out of range, dim1 = %lld", (long long)dv[1]);
    int64_t k = ((args[1].u.i % 4) + 4) % 4;
    if (k == 0) {
        tn_value ca[2] = {args[0], {.tag = TN_V_MEMFMT}};
        ca[1].u.memfmt = 0;
        return tn_dispatch(TN_OP_clone, ca, rets);
    }
    if (k == 2) {
        tn_value fa[2] = {args[0], args[2]};
        return tn_dispatch(TN_OP_flip, fa, rets);
    }
    tn_tensor *f;
    tn_value fa[2] = {args[0], tn_value_intlist(&dv[k == 1 ? 1 : 0], 1)};
    TN_TRY(tn_dispatch_one(TN_OP_flip, fa, &f));
    tn_value ta[3] = {tn_value_tensor(f), tn_value_int(dv[0]), tn_value_int(dv[1])};
    tn_status st = tn_dispatch(TN_OP_transpose_int, ta, rets);
    tn_tensor_release(f);
    return st;
}

/* aten::fill.Scalar / fill.Tensor(self, value): empty_like(self) (its layout preserved)
 * filled with value, as upstream's; self's values are never read */
static tn_status fill_copy(const tn_value *args, tn_value *rets, tn_op_id fill_) {
    tn_tensor *c;
    tn_value none = {.tag = TN_V_NONE};
    tn_value ca[6] = {args[0], none, none, none, none, none};
    TN_TRY(tn_dispatch_one(TN_OP_empty_like, ca, &c));
    tn_value fa[2] = {tn_value_tensor(c), args[1]}, r[1];
    tn_status st = tn_dispatch(fill_, fa, r);
    if (st != TN_OK) { tn_tensor_release(c); return st; }
    tn_value_release(&r[0]);
    rets[0] = tn_value_tensor(c);
    return TN_OK;
}
tn_status tn_op_fill_Scalar(const tn_value *a, tn_value *r) { return fill_copy(a, r, TN_OP_fill__Scalar); }
tn_status tn_op_fill_Tensor(const tn_value *a, tn_value *r) { return fill_copy(a, r, TN_OP_fill__Tensor); }

/* aten::dist(self, other, p=2) = the p-norm of self - other */
tn_status tn_op_dist(const tn_value *args, tn_value *rets) {
    tn_tensor *d;
    tn_value sa[3] = {args[0], args[1], tn_value_int(1)};
    TN_TRY(tn_dispatch_one(TN_OP_sub_Tensor, sa, &d));
    tn_value na[5] = {tn_value_tensor(d), args[2], {.tag = TN_V_NONE}, tn_value_bool(false), {.tag = TN_V_NONE}};
    tn_status st = tn_dispatch(TN_OP_linalg_vector_norm, na, rets);
    tn_tensor_release(d);
    return st;
}


/* aten::type_as(Tensor self, Tensor other) -> Tensor: self.to(other.options()). Like
 * upstream's to(), it returns self itself (no copy) when dtype and device already match. */
tn_status tn_op_type_as(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *other = args[1].u.t;
    tn_device ds = tn_tensor_device(self), dother = tn_tensor_device(other);
    if (self->dtype == other->dtype && ds.type == dother.type && ds.index == dother.index) {
        tn_tensor_retain(self);
        rets[0] = tn_value_tensor(self);
        return TN_OK;
    }
    /* _to_copy(self, *, dtype, layout, device, pin_memory, non_blocking, memory_format) */
    tn_value a[7] = {args[0]};
    a[1].tag = TN_V_DTYPE;
    a[1].u.dtype = other->dtype;
    a[2].tag = TN_V_LAYOUT;
    a[2].u.layout = 0;
    a[3].tag = TN_V_DEVICE;
    a[3].u.device = dother;
    a[4] = tn_value_bool(false);
    a[5] = tn_value_bool(false);
    a[6].tag = TN_V_MEMFMT;
    a[6].u.memfmt = 1; /* preserve, as Tensor.to() */
    return tn_dispatch(TN_OP__to_copy, a, rets);
}

/* aten::broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a): expand(self, size). */
tn_status tn_op_broadcast_to(const tn_value *args, tn_value *rets) {
    tn_value a[3] = {args[0], args[1], tn_value_bool(false)};
    return tn_dispatch(TN_OP_expand, a, rets);
}

/* The aliases upstream defines as calls of another operator (CompositeImplicitAutograd):
 * the same arguments, dispatched to the target; one TN_OP_ALIAS row each in composite.def. */
#define TN_OP_IMPL(...)
#define TN_OP_ALIAS(ident, target) \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets) { return tn_dispatch(TN_OP_##target, args, rets); }
#include "ops/composite.def"
#undef TN_OP_ALIAS
#undef TN_OP_IMPL
