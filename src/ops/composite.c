/* composite.c — operators upstream defines as compositions of others (divide, positive,
 * fliplr/flipud, deg2rad/rad2deg, ldexp, diag, diag_embed, meshgrid), composed the same way
 * through the door. Under autograd they run as their parts (src/autograd/decompose.c), as
 * upstream's CompositeImplicitAutograd kernels do; ldexp alone uses its generated formula row
 * (upstream's, which differs from its parts' gradient for negative exponents). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/dispatch.h"
#include "ops/promote.h"
#include "ops/shape.h"

/* One door call whose single tensor result is returned through *out. */
static tn_status call1(tn_op_id op, tn_value *args, tn_tensor **out) {
    tn_value r[4];
    TN_TRY(tn_dispatch(op, args, r));
    *out = r[0].u.t;
    return TN_OK;
}

static tn_value intlist(const int64_t *p, int64_t n) {
    tn_value v = {.tag = TN_V_INTLIST};
    v.u.ilist.data = p;
    v.u.ilist.n = n;
    return v;
}

/* aten::divide.* are div.* under another name. */
tn_status tn_op_divide_Tensor(const tn_value *a, tn_value *r) { return tn_dispatch(TN_OP_div_Tensor, a, r); }
tn_status tn_op_divide_Scalar(const tn_value *a, tn_value *r) { return tn_dispatch(TN_OP_div_Scalar, a, r); }
tn_status tn_op_divide_Tensor_mode(const tn_value *a, tn_value *r) { return tn_dispatch(TN_OP_div_Tensor_mode, a, r); }
tn_status tn_op_divide_Scalar_mode(const tn_value *a, tn_value *r) { return tn_dispatch(TN_OP_div_Scalar_mode, a, r); }

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
    tn_value a[2] = {args[0], intlist(&dim, 1)};
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
    tn_dtype target;
    TN_TRY(tn_promote_types(args[0].u.t->dtype, args[1].u.t->dtype, &target));
    if (!tn_dtype_is_floating(target) && !tn_dtype_is_complex(target)) target = tn_default_dtype();
    tn_tensor *p, *m;
    tn_value pa[2] = {tn_value_double(2.0), args[1]};
    TN_TRY(call1(TN_OP_pow_Scalar, pa, &p));
    tn_value ma[2] = {args[0], tn_value_tensor(p)};
    tn_status st = call1(TN_OP_mul_Tensor, ma, &m);
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
    int64_t m = n + (off < 0 ? -off : off), sz[TN_MAX_DIMS];
    for (int i = 0, k = 0; i < nd; i++) sz[i] = (i == d1 || i == d2) ? m : self->sizes[k++];
    tn_tensor *z, *dg;
    tn_value za[6] = {args[0], intlist(sz, nd), {.tag = TN_V_NONE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE},
                      {.tag = TN_V_NONE}};
    TN_TRY(call1(TN_OP_new_zeros, za, &z));
    tn_value da[4] = {tn_value_tensor(z), tn_value_int(off), tn_value_int(d1), tn_value_int(d2)};
    tn_status st = call1(TN_OP_diagonal, da, &dg);
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
        tn_value va[2] = {tn_value_tensor(ts[i]), intlist(vs, n)};
        st = call1(TN_OP_reshape, va, &v);
        if (st != TN_OK) break;
        tn_value ea[3] = {tn_value_tensor(v), intlist(shape, n), tn_value_bool(false)};
        st = call1(TN_OP_expand, ea, &out[i]);
        tn_tensor_release(v);
    }
    if (st != TN_OK) {
        for (int64_t i = 0; i < n; i++) if (out[i]) tn_tensor_release(out[i]);
        free(out);
        return st;
    }
    rets[0].tag = TN_V_TENSORLIST;
    rets[0].u.tlist.data = out;
    rets[0].u.tlist.n = n;
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
