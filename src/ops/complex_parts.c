/* complex_parts.c — the parts of complex tensors composed through the door: .real/.imag as
 * views of view_as_real, abs as hypot of the parts, angle, conj_physical, isreal, and real
 * bilinear operations (convolutions) applied to complex operands part by part.
 *
 * The core keeps no lazy conjugate or negative bit: every complex tensor is resolved, so
 * conj_physical materialises and resolve_conj is the tensor itself (tensor_queries.c). */
#include <math.h>

#include "core/threadpool.h"
#include "ops/complex_parts.h"
#include "ops/elementwise_common.h"
#include "ops/composite_internal.h"

/* Part k (0 real, 1 imaginary) of a complex tensor: a view of its storage. */
static tn_tensor *part_of(tn_cx *c, tn_tensor *x, int64_t k) {
    tn_tensor *vr = tn_cx_call(c, TN_OP_view_as_real, TN_ARGS(TN_T(x)));
    return tn_cx_call(c, TN_OP_select_int, TN_ARGS(TN_T(vr), TN_I(-1), TN_I(k)));
}

/* aten::real(Tensor(a) self) -> Tensor(a): the real parts' view; a real tensor is itself. */
tn_status tn_op_real(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    if (!tn_dtype_is_complex(x->dtype)) {
        tn_tensor_retain(x);
        rets[0] = tn_value_tensor(x);
        return TN_OK;
    }
    tn_cx c = {0};
    return tn_cx_finish(&c, part_of(&c, x, 0), rets);
}

/* aten::imag(Tensor(a) self) -> Tensor(a): the imaginary parts' view; complex only. */
tn_status tn_op_imag(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    if (!tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "imag is not implemented for tensors with non-complex dtypes.");
    tn_cx c = {0};
    return tn_cx_finish(&c, part_of(&c, x, 1), rets);
}

/* aten::isreal(self): imag == 0 for complex tensors, all true otherwise. */
tn_status tn_op_isreal(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    if (tn_dtype_is_complex(x->dtype)) {
        tn_cx c = {0};
        tn_tensor *im = part_of(&c, x, 1);
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_eq_Scalar, TN_ARGS(TN_T(im), TN_I(0))), rets);
    }
    tn_value oa[6] = {args[0], {.tag = TN_V_DTYPE}, TN_NONE, TN_NONE, TN_NONE, TN_NONE};
    oa[1].u.dtype = TN_DTYPE_BOOL;
    return tn_dispatch(TN_OP_ones_like, oa, rets);
}

/* |z| of a complex tensor: hypot of its parts in the parts' dtype (upstream's std::abs is
 * hypot too). Called by aten::abs (elementwise_math.c) for complex inputs. */
tn_status tn_complex_abs(tn_tensor *x, tn_value *rets) {
    tn_cx c = {0};
    tn_tensor *re = part_of(&c, x, 0), *im = part_of(&c, x, 1);
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_hypot, TN_ARGS(TN_T(re), TN_T(im))), rets);
}

/* aten::angle(self): atan2(imag, real) for complex; for real inputs pi where x < 0, else 0,
 * NaN kept (so -0.0 gives 0, unlike atan2); integers and bool first become the default float
 * dtype, as upstream's angle promotes them. */
tn_status tn_op_angle(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    tn_cx c = {0};
    if (tn_dtype_is_complex(x->dtype)) {
        tn_tensor *re = part_of(&c, x, 0), *im = part_of(&c, x, 1);
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_atan2, TN_ARGS(TN_T(im), TN_T(re))), rets);
    }
    /* one elementwise row (integers and bool computed in the default float dtype) */
    tn_ew_run r = {TN_EW_angle, "angle_cpu", true, false, TN_DTYPE_UNDEFINED};
    return tn_ew_execute(&r, 1, &x, NULL, rets);
}

/* aten::conj_physical(self): a new tensor with the imaginary parts negated; a real tensor is
 * returned itself, as upstream. */
tn_status tn_op_conj_physical(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    if (!tn_dtype_is_complex(x->dtype)) {
        tn_tensor_retain(x);
        rets[0] = tn_value_tensor(x);
        return TN_OK;
    }
    tn_cx c = {0};
    tn_value ca[2] = {args[0], {.tag = TN_V_MEMFMT}};
    ca[1].u.memfmt = 0;
    tn_tensor *out = tn_cx_call(&c, TN_OP_clone, ca);
    tn_tensor *im = out ? part_of(&c, out, 1) : NULL;
    tn_cx_call(&c, TN_OP_neg_, TN_ARGS(TN_T(im)));
    return tn_cx_finish(&c, out, rets);
}

/* aten::chalf(self, *, memory_format): a ComplexHalf copy (upstream's _to_copy to kComplexHalf). */
tn_status tn_op_chalf(const tn_value *args, tn_value *rets) {
    tn_value ta[7] = {args[0], {.tag = TN_V_DTYPE}, TN_NONE, TN_NONE, TN_NONE, TN_B(false), args[1]};
    ta[1].u.dtype = TN_DTYPE_COMPLEX32;
    return tn_dispatch(TN_OP__to_copy, ta, rets);
}

/* One real operation over parts, its result owned by the scratch. */
static tn_tensor *bilinear_part(tn_cx *c, tn_real_bilinear_fn f, tn_tensor *x, tn_tensor *w, tn_tensor *b, void *ctx) {
    if (c->st != TN_OK) return NULL;
    tn_tensor *y = NULL;
    c->st = f(x, w, b, ctx, &y);
    if (c->st != TN_OK) return NULL;
    tn_tensor_release(tn_cx_keep(c, y)); /* the scratch now holds the only reference */
    return y;
}

tn_status tn_complex_bilinear(tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_real_bilinear_fn f, void *ctx, tn_tensor **out) {
    tn_cx c = {0};
    tn_tensor *xr = part_of(&c, x, 0), *xi = part_of(&c, x, 1), *wr = part_of(&c, w, 0), *wi = part_of(&c, w, 1);
    tn_tensor *br = b ? part_of(&c, b, 0) : NULL, *bi = b ? part_of(&c, b, 1) : NULL;
    tn_tensor *xs = tn_cx_call(&c, TN_OP_add_Tensor, TN_ARGS(TN_T(xr), TN_T(xi), TN_I(1)));
    tn_tensor *ws = tn_cx_call(&c, TN_OP_add_Tensor, TN_ARGS(TN_T(wr), TN_T(wi), TN_I(1)));
    tn_tensor *bs = b ? tn_cx_call(&c, TN_OP_add_Tensor, TN_ARGS(TN_T(br), TN_T(bi), TN_I(1))) : NULL;
    tn_tensor *p1 = bilinear_part(&c, f, xr, wr, br, ctx), *p2 = bilinear_part(&c, f, xi, wi, NULL, ctx);
    tn_tensor *p3 = bilinear_part(&c, f, xs, ws, bs, ctx);
    tn_tensor *re = tn_cx_call(&c, TN_OP_sub_Tensor, TN_ARGS(TN_T(p1), TN_T(p2), TN_I(1)));
    tn_tensor *im = tn_cx_call(&c, TN_OP_sub_Tensor, TN_ARGS(TN_T(p3), TN_T(p1), TN_I(1)));
    im = tn_cx_call(&c, TN_OP_sub_Tensor, TN_ARGS(TN_T(im), TN_T(p2), TN_I(1)));
    tn_tensor *y = tn_cx_call(&c, TN_OP_complex, TN_ARGS(TN_T(re), TN_T(im)));
    tn_value r = {0};
    TN_TRY(tn_cx_finish(&c, y, &r));
    *out = r.u.t;
    return TN_OK;
}
