/* elementwise_math.c — the arithmetic, transcendental, activation, comparison, logical
 * and bitwise ops: argument checks and dtype rules as upstream's BinaryOps.cpp /
 * UnaryOps.cpp / Activation.cpp, then one elementwise run (elementwise_common.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/scalar.h"
#include "kernels/cast.h"
#include "ops/complex_parts.h"
#include "ops/dispatch.h"
#include "ops/elementwise_common.h"
#include "ops/promote.h"
#include "ops/shape.h"
#include "ops/scalar_convert.h"

static const char *dname(tn_dtype d) { return tn_dtype_infos[d].c10_name; }

static tn_status run1(tn_ew_op op, const char *kname, bool int_to_float, bool bool_out, tn_tensor *a,
                      tn_loop_ctx *ctx, tn_value *rets) {
    tn_ew_run r = {op, kname, int_to_float, bool_out, TN_DTYPE_UNDEFINED};
    return tn_ew_execute(&r, 1, &a, ctx, rets);
}

/* Binary run where either operand may be a Python scalar (wrapped as upstream does). */
static tn_status run2v(tn_ew_op op, const char *kname, bool int_to_float, bool bool_out, const tn_value *a,
                       const tn_value *b, tn_loop_ctx *ctx, tn_value *rets) {
    tn_tensor *ins[2] = {NULL, NULL};
    tn_status st = tn_ew_scalar_tensor(a, &ins[0]);
    if (st == TN_OK) st = tn_ew_scalar_tensor(b, &ins[1]);
    if (st == TN_OK) {
        tn_ew_run r = {op, kname, int_to_float, bool_out, TN_DTYPE_UNDEFINED};
        st = tn_ew_execute(&r, 2, ins, ctx, rets);
    }
    tn_tensor_release(ins[0]);
    tn_tensor_release(ins[1]);
    return st;
}

/* The common dtype of two operands (tensors or scalars). */
static tn_status common2(const tn_value *a, const tn_value *b, tn_dtype *out) {
    tn_value v[2] = {*a, *b};
    return tn_result_type(2, v, out);
}

/* ---- unary ops: floating results (integers promote to the default dtype) ---------- */
#define TN_UNARY_FLOAT(ident, ewop, kname)                                                \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets) {                      \
        return run1(TN_EW_##ewop, kname, true, false, args[0].u.t, NULL, rets);          \
    }
TN_UNARY_FLOAT(exp, exp, "exp_vml_cpu")
TN_UNARY_FLOAT(sinc, sinc, "sinc_cpu")
TN_UNARY_FLOAT(exp2, exp2, "exp2_vml_cpu")
TN_UNARY_FLOAT(expm1, expm1, "expm1_vml_cpu")
TN_UNARY_FLOAT(log, log, "log_vml_cpu")
TN_UNARY_FLOAT(log2, log2, "log2_vml_cpu")
TN_UNARY_FLOAT(log10, log10, "log10_vml_cpu")
TN_UNARY_FLOAT(log1p, log1p, "log1p_vml_cpu")
TN_UNARY_FLOAT(sqrt, sqrt, "sqrt_vml_cpu")
TN_UNARY_FLOAT(rsqrt, rsqrt, "rsqrt_cpu")
TN_UNARY_FLOAT(sin, sin, "sin_vml_cpu")
TN_UNARY_FLOAT(cos, cos, "cos_vml_cpu")
TN_UNARY_FLOAT(tan, tan, "tan_vml_cpu")
TN_UNARY_FLOAT(tanh, tanh, "tanh_vml_cpu")
TN_UNARY_FLOAT(sinh, sinh, "sinh_cpu")
TN_UNARY_FLOAT(cosh, cosh, "cosh_cpu")
TN_UNARY_FLOAT(asin, asin, "asin_vml_cpu")
TN_UNARY_FLOAT(acos, acos, "acos_vml_cpu")
TN_UNARY_FLOAT(atan, atan, "atan_vml_cpu")
TN_UNARY_FLOAT(asinh, asinh, "asinh_cpu")
TN_UNARY_FLOAT(acosh, acosh, "acosh_cpu")
TN_UNARY_FLOAT(atanh, atanh, "atanh_cpu")
TN_UNARY_FLOAT(sigmoid, sigmoid, "sigmoid_cpu")
TN_UNARY_FLOAT(erf, erf, "erf_vml_cpu")
TN_UNARY_FLOAT(erfc, erfc, "erfc_vml_cpu")
TN_UNARY_FLOAT(reciprocal, reciprocal, "reciprocal_cpu")

/* Activations keep the input dtype and refuse integers (no promotion). */
#define TN_UNARY_SAME(ident, ewop, kname)                                                 \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets) {                      \
        return run1(TN_EW_##ewop, kname, false, false, args[0].u.t, NULL, rets);         \
    }
TN_UNARY_SAME(silu, silu, "silu_cpu")
TN_UNARY_SAME(mish, mish, "mish_cpu")
TN_UNARY_SAME(hardsigmoid, hardsigmoid, "hardsigmoid_cpu")
TN_UNARY_SAME(hardswish, hardswish, "hardswish_cpu")
TN_UNARY_SAME(frac, frac, "frac_cpu")
/* floor, ceil, trunc: upstream's meta function refuses complex before the kernel (so before
 * an out='s resize), in its own words */
#define TN_UNARY_SAME_REAL(ident, ewop, kname)                                                  \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets) {                           \
        if (tn_dtype_is_complex(args[0].u.t->dtype))                                          \
            return tn_error(TN_ERR_NOT_IMPLEMENTED, #ident " is not supported for complex inputs"); \
        return run1(TN_EW_##ewop, kname, false, false, args[0].u.t, NULL, rets);              \
    }
TN_UNARY_SAME_REAL(floor, floor, "floor_cpu")
TN_UNARY_SAME_REAL(ceil, ceil, "ceil_cpu")
TN_UNARY_SAME(round, round, "round_cpu")
TN_UNARY_SAME_REAL(trunc, trunc, "trunc_cpu")
TN_UNARY_SAME(bitwise_not, bitwise_not, "bitwise_not_cpu")

static double sv(const tn_value *v) { return tn_scalar_as_double(v); }
/* a Scalar as the complex constant c[k] of a loop (complex loops read it; real ones d[k]) */
static void ctx_complex(tn_loop_ctx *ctx, int k, const tn_value *v) {
    ctx->c[k][0] = v->tag == TN_V_COMPLEX ? v->u.c.re : sv(v);
    ctx->c[k][1] = v->tag == TN_V_COMPLEX ? v->u.c.im : 0.0;
}

/* aten::abs: Bool refused; complex inputs give their modulus (complex_parts.c). */
tn_status tn_op_abs(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t;
    if (tn_dtype_is_complex(a->dtype)) return tn_complex_abs(a, rets);
    return run1(TN_EW_abs, "abs_cpu", false, false, a, NULL, rets);
}

/* aten::neg */
tn_status tn_op_neg(const tn_value *args, tn_value *rets) {
    if (args[0].u.t->dtype == TN_DTYPE_BOOL)
        return tn_error(TN_ERR_RUNTIME,
                        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                        "mask, use the `~` or `logical_not()` operator instead.");
    return run1(TN_EW_neg, "neg_cpu", false, false, args[0].u.t, NULL, rets);
}

/* aten::sign / aten::sgn (complex: z / |z|, the complex row of the sign slot) */
tn_status tn_op_sign(const tn_value *args, tn_value *rets) {
    if (tn_dtype_is_complex(args[0].u.t->dtype))
        /* upstream's TORCH_CHECK_NOT_IMPLEMENTED */
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.");
    return run1(TN_EW_sign, "sign_cpu", false, false, args[0].u.t, NULL, rets);
}
tn_status tn_op_sgn(const tn_value *args, tn_value *rets) {
    return run1(TN_EW_sign, "sign_cpu", false, false, args[0].u.t, NULL, rets);
}

/* aten::relu */
tn_status tn_op_relu(const tn_value *args, tn_value *rets) {
    if (args[0].u.t->dtype == TN_DTYPE_BOOL) return tn_error(TN_ERR_RUNTIME, "Boolean inputs not supported for relu");
    return run1(TN_EW_relu, "clamp_min_scalar_cpu", false, false, args[0].u.t, NULL, rets);
}

/* aten::gelu(Tensor self, *, str approximate='none') */
tn_status tn_op_gelu(const tn_value *args, tn_value *rets) {
    const char *approx = args[1].tag == TN_V_STRING ? args[1].u.s.data : "none";
    bool tanh_mode;
    if (strcmp(approx, "none") == 0) tanh_mode = false;
    else if (strcmp(approx, "tanh") == 0) tanh_mode = true;
    else return tn_error(TN_ERR_RUNTIME, "approximate argument must be either none or tanh.");
    return run1(tanh_mode ? TN_EW_gelu_tanh : TN_EW_gelu, "GeluKernelImpl", false, false, args[0].u.t, NULL, rets);
}

/* aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) */
tn_status tn_op_leaky_relu(const tn_value *args, tn_value *rets) {
    tn_loop_ctx ctx = {0};
    tn_dtype d = args[0].u.t->dtype;
    if (d == TN_DTYPE_FLOAT32 || d == TN_DTYPE_FLOAT16 || d == TN_DTYPE_BFLOAT16) {
        /* upstream's kernel takes the slope as float (the half types' opmath), checked */
        float slope;
        TN_TRY(tn_scalar_to_bytes(&args[1], TN_DTYPE_FLOAT32, &slope));
    }
    ctx.d[0] = sv(&args[1]);
    return run1(TN_EW_leaky_relu, "leaky_relu_cpu", false, false, args[0].u.t, &ctx, rets);
}

/* aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) */
tn_status tn_op_elu(const tn_value *args, tn_value *rets) {
    tn_loop_ctx ctx = {0};
    ctx.d[0] = sv(&args[1]);
    ctx.d[1] = sv(&args[2]);
    ctx.d[2] = sv(&args[3]);
    return run1(TN_EW_elu, "elu_cpu", false, false, args[0].u.t, &ctx, rets);
}

/* aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) */
tn_status tn_op_softplus(const tn_value *args, tn_value *rets) {
    tn_loop_ctx ctx = {0};
    ctx.d[0] = sv(&args[1]);
    ctx.d[1] = sv(&args[2]);
    return run1(TN_EW_softplus, "softplus_cpu", false, false, args[0].u.t, &ctx, rets);
}

/* The largest finite value of a floating dtype (float64's for the others). */
static double float_max(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_FLOAT16: return 65504.0;
    case TN_DTYPE_BFLOAT16: return 3.3895313892515355e38;
    case TN_DTYPE_FLOAT32: return 3.4028234663852886e38;
    default: return 1.7976931348623157e308;
    }
}

/* aten::softshrink(Tensor self, Scalar lambd=0.5) */
tn_status tn_op_softshrink(const tn_value *args, tn_value *rets) {
    tn_loop_ctx ctx = {0};
    ctx.d[0] = sv(&args[1]);
    tn_dtype dt = args[0].u.t->dtype;
    /* upstream's check: lambda within [0, the dtype's largest finite value] (NaN fails) */
    if (tn_dtype_is_floating(dt) && !(ctx.d[0] >= 0 && ctx.d[0] <= float_max(dt)))
        return tn_error(TN_ERR_RUNTIME, "lambda must be in range [0, %g] for input dtype %s, but found %g", float_max(dt),
                        tn_dtype_infos[dt].c10_name, ctx.d[0]);
    return run1(TN_EW_softshrink, "softshrink_cpu", false, false, args[0].u.t, &ctx, rets);
}

/* aten::threshold(self, threshold, value): value where self <= threshold (NaN stays), in self's
 * dtype, one elementwise row. Upstream's kernel reads both Scalars in its opmath type first
 * (checked: float for Half and BFloat16, whose elements it compares as float, else self's
 * dtype), and has no Bool or complex instance. (Before: le and masked_fill, 2x upstream's
 * time, 6x in place.) */
tn_status tn_op_threshold(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    tn_dtype dt = self->dtype;
    if (dt == TN_DTYPE_BOOL || tn_dtype_is_complex(dt))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"threshold_cpu\" not implemented for '%s'", dname(dt));
    tn_dtype op = dt == TN_DTYPE_FLOAT16 || dt == TN_DTYPE_BFLOAT16 ? TN_DTYPE_FLOAT32 : dt;
    _Alignas(16) unsigned char b[16];
    tn_loop_ctx ctx = {0};
    for (int k = 0; k < 2; k++) {
        tn_value v;
        TN_TRY(tn_scalar_to_bytes(&args[1 + k], op, b));
        TN_TRY(tn_scalar_load(op, b, &v));
        TN_TRY(tn_ew_scalar_in_dtype(&v, op, &ctx.d[k], &ctx.i[k]));
    }
    return run1(TN_EW_threshold, "threshold_cpu", false, false, self, &ctx, rets);
}

/* aten::hardshrink(Tensor self, Scalar lambd=0.5): 0 inside [-lambd, lambd], lambd taken in
 * the dtype first (upstream's lambd.to<scalar_t>()), NaN passes; floating dtypes only */
tn_status tn_op_hardshrink(const tn_value *args, tn_value *rets) {
    tn_loop_ctx ctx = {0};
    tn_dtype dt = args[0].u.t->dtype;
    ctx.d[0] = tn_dtype_is_floating(dt) ? tn_round_to_dtype(dt, sv(&args[1])) : 0;
    return run1(TN_EW_hardshrink, "hardshrink_cpu", false, false, args[0].u.t, &ctx, rets);
}

/* aten::logit(Tensor self, float? eps=None): with eps >= 0 the input is clamped to
 * [eps, 1 - eps] first, both bounds in the result dtype and x < lo tested first, as
 * upstream's kernel (so eps > 0.5, where lo > hi, sends x < lo to lo); a negative eps is
 * no eps. */
tn_status tn_op_logit(const tn_value *args, tn_value *rets) {
    tn_loop_ctx ctx = {0};
    if (args[1].tag != TN_V_NONE && sv(&args[1]) >= 0) {
        tn_tensor *self = args[0].u.t;
        tn_dtype dt = tn_dtype_is_floating(self->dtype) ? self->dtype : tn_default_dtype();
        ctx.mode = 1;
        TN_TRY(tn_ew_scalar_in_dtype(&args[1], dt, &ctx.d[0], NULL));
        TN_TRY(tn_ew_scalar_in_dtype(&(tn_value){.tag = TN_V_DOUBLE, .u.d = 1.0 - ctx.d[0]}, dt, &ctx.d[1], NULL));
    }
    return run1(TN_EW_logit, "logit_cpu", true, false, args[0].u.t, &ctx, rets);
}

/* aten::round.decimals(Tensor self, *, int decimals) */
tn_status tn_op_round_decimals(const tn_value *args, tn_value *rets) {
    tn_loop_ctx ctx = {0};
    ctx.i[0] = args[1].u.i;
    ctx.d[0] = pow(10.0, fabs((double)ctx.i[0])); /* llabs(INT64_MIN) overflows */
    if (ctx.i[0] == 0) {
        /* upstream's decimals form sends integers to its float-only kernel even for 0 */
        tn_dtype dt = args[0].u.t->dtype;
        if (tn_dtype_is_integral(dt, true))
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"round_vml_cpu\" not implemented for '%s'", tn_dtype_infos[dt].c10_name);
        return tn_op_round(args, rets);
    }
    return run1(TN_EW_round_decimals, "round_cpu", false, false, args[0].u.t, &ctx, rets);
}

/* Bool tensor of t's shape (layout preserved) filled with `value`. */
static tn_status const_bool(tn_tensor *t, bool value, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(tn_tensor_empty_like(t, TN_DTYPE_BOOL, &out));
    if (!tn_tensor_is_meta(out) && out->storage->data) memset(out->storage->data, value ? 1 : 0, (size_t)out->storage->nbytes);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* isinf / isfinite of a complex tensor, as upstream: of its real and imaginary parts, either
 * infinite (`any`) or both finite. */
static tn_status classify_complex_parts(tn_op_id part_op, tn_op_id join, tn_tensor *a, tn_value *rets) {
    tn_value x[1] = {tn_value_tensor(a)};
    tn_tensor *re = NULL, *im = NULL, *cre = NULL, *cim = NULL;
    tn_status st = tn_dispatch_one(TN_OP_real, x, &re);
    if (st == TN_OK) st = tn_dispatch_one(TN_OP_imag, x, &im);
    tn_value r[1] = {tn_value_tensor(re)}, i[1] = {tn_value_tensor(im)};
    if (st == TN_OK) st = tn_dispatch_one(part_op, r, &cre);
    if (st == TN_OK) st = tn_dispatch_one(part_op, i, &cim);
    if (st == TN_OK) {
        tn_value b[2] = {tn_value_tensor(cre), tn_value_tensor(cim)};
        st = tn_dispatch(join, b, rets);
    }
    tn_tensor *all[4] = {re, im, cre, cim};
    for (int k = 0; k < 4; k++)
        if (all[k]) tn_tensor_release(all[k]);
    return st;
}

/* isnan / isinf / isfinite / isposinf / isneginf: integers answer without looking. */
#define TN_CLASSIFY(ident, int_answer, complex_ok)                                               \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets) {                             \
        tn_tensor *a = args[0].u.t;                                                              \
        if (tn_dtype_is_integral(a->dtype, true)) return const_bool(a, int_answer, rets);       \
        if (tn_dtype_is_complex(a->dtype) && TN_OP_##ident == TN_OP_isinf)                       \
            return classify_complex_parts(TN_OP_isinf, TN_OP_logical_or, a, rets);              \
        if (tn_dtype_is_complex(a->dtype) && TN_OP_##ident == TN_OP_isfinite)                    \
            return classify_complex_parts(TN_OP_isfinite, TN_OP_logical_and, a, rets);          \
        if (!(complex_ok) && tn_dtype_is_complex(a->dtype))                                      \
            return tn_error(TN_ERR_RUNTIME, #ident " does not support complex inputs.");         \
        tn_ew_run r = {TN_EW_##ident, #ident "_cpu", false, true, TN_DTYPE_UNDEFINED};           \
        return tn_ew_execute(&r, 1, &a, NULL, rets);                                             \
    }
TN_CLASSIFY(isnan, false, true)
TN_CLASSIFY(isinf, false, false)
TN_CLASSIFY(isfinite, true, false)
TN_CLASSIFY(isposinf, false, false)
TN_CLASSIFY(isneginf, false, false)

/* aten::signbit: the sign bit of floats; integers are negative or not; bool never is. */
tn_status tn_op_signbit(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t;
    if (tn_dtype_is_complex(a->dtype)) return tn_error(TN_ERR_RUNTIME, "signbit is not implemented for complex tensors.");
    if (a->dtype == TN_DTYPE_BOOL) return const_bool(a, false, rets);
    if (tn_dtype_is_integral(a->dtype, false)) {
        tn_value b[2] = {args[0], tn_value_int(0)};
        return tn_dispatch(TN_OP_lt_Scalar, b, rets);
    }
    tn_ew_run r = {TN_EW_signbit, "signbit_cpu", false, true, TN_DTYPE_UNDEFINED};
    return tn_ew_execute(&r, 1, &a, NULL, rets);
}

/* aten::logical_not */
tn_status tn_op_logical_not(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t;
    tn_ew_run r = {TN_EW_logical_not, "logical_not_cpu", false, true, TN_DTYPE_UNDEFINED};
    return tn_ew_execute(&r, 1, &a, NULL, rets);
}

/* aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) */
tn_status tn_op_nan_to_num(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t;
    if (tn_dtype_is_integral(a->dtype, true)) {
        tn_value v[2] = {args[0], {.tag = TN_V_NONE}};
        extern tn_status tn_op_clone(const tn_value *, tn_value *);
        return tn_op_clone(v, rets);
    }
    if (tn_dtype_is_complex(a->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::nan_to_num on complex tensors is not implemented by torchnative");
    double hi = float_max(a->dtype), lo = -hi;
    tn_loop_ctx ctx = {0};
    ctx.d[0] = args[1].tag == TN_V_NONE ? 0.0 : sv(&args[1]);
    ctx.d[1] = args[2].tag == TN_V_NONE ? hi : sv(&args[2]);
    ctx.d[2] = args[3].tag == TN_V_NONE ? lo : sv(&args[3]);
    return run1(TN_EW_nan_to_num, "nan_to_num", false, false, a, &ctx, rets);
}

/* ---- clamp family ------------------------------------------------------------------ */

/* clamp(self, min?, max?) with scalar bounds: result dtype promotes with the bounds
 * (clamp and hardtanh: only an integral self; clamp_min/clamp_max: any self). */
static tn_status clamp_scalars(tn_tensor *self, const tn_value *mn, const tn_value *mx, const char *kname, bool promote_floating,
                               tn_value *rets) {
    if (mn->tag == TN_V_NONE && mx->tag == TN_V_NONE)
        return tn_error(TN_ERR_RUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
    if (tn_dtype_is_complex(self->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "clamp is not supported for complex types");
    /* upstream's clamp promotes only an integral self with the bounds; a floating self keeps
     * its dtype and each bound is converted to it (a complex bound with a zero imaginary
     * part is a real one there). Its clamp_min/clamp_max promote every self. */
    tn_value ops[3] = {tn_value_tensor(self), *mn, *mx};
    tn_dtype common = self->dtype;
    if (promote_floating || !tn_dtype_is_floating(self->dtype)) TN_TRY(tn_result_type(3, ops, &common));
    if (tn_dtype_is_complex(common)) /* a complex bound promotes a real tensor to complex */
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "clamp is not supported for complex types");
    tn_loop_ctx ctx = {0};
    ctx.has_min = mn->tag != TN_V_NONE;
    ctx.has_max = mx->tag != TN_V_NONE;
    /* the kernel takes each bound as min.to<scalar_t>() of the result dtype: checked */
    unsigned char elem[16];
    if (ctx.has_min) TN_TRY(tn_scalar_to_bytes(mn, common, elem));
    if (ctx.has_max) TN_TRY(tn_scalar_to_bytes(mx, common, elem));
    if (ctx.has_min) TN_TRY(tn_ew_scalar_in_dtype(mn, common, &ctx.d[0], &ctx.i[0]));
    if (ctx.has_max) TN_TRY(tn_ew_scalar_in_dtype(mx, common, &ctx.d[1], &ctx.i[1]));
    tn_ew_run r = {TN_EW_clamp, kname, false, false, common};
    return tn_ew_execute(&r, 1, &self, &ctx, rets);
}

/* aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) */
tn_status tn_op_clamp(const tn_value *args, tn_value *rets) {
    /* upstream's clamp reads both bounds as doubles first (its NaN check), which refuses a
     * complex bound with an imaginary part; clamp_min/clamp_max do not */
    for (int k = 1; k <= 2; k++)
        if (args[k].tag == TN_V_COMPLEX && args[k].u.c.im != 0)
            return tn_error(TN_ERR_RUNTIME, "value cannot be converted to type double without overflow");
    const char *kname = args[2].tag == TN_V_NONE ? "clamp_min_scalar_cpu" /* upstream runs clamp_min then */
                        : args[1].tag == TN_V_NONE ? "clamp_max_scalar_cpu" : "clamp_scalar_cpu";
    return clamp_scalars(args[0].u.t, &args[1], &args[2], kname, false, rets);
}
/* aten::clamp_min(Tensor self, Scalar min) */
tn_status tn_op_clamp_min(const tn_value *args, tn_value *rets) {
    tn_value none = {.tag = TN_V_NONE};
    return clamp_scalars(args[0].u.t, &args[1], &none, "clamp_min_scalar_cpu", true, rets);
}
/* aten::clamp_max(Tensor self, Scalar max) */
tn_status tn_op_clamp_max(const tn_value *args, tn_value *rets) {
    tn_value none = {.tag = TN_V_NONE};
    return clamp_scalars(args[0].u.t, &none, &args[1], "clamp_max_scalar_cpu", true, rets);
}
/* aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) */
tn_status tn_op_hardtanh(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t;
    if (a->dtype == TN_DTYPE_BOOL) return tn_error(TN_ERR_RUNTIME, "Bool inputs not supported for hardtanh");
    if (!tn_dtype_is_integral(a->dtype, false)) return clamp_scalars(a, &args[1], &args[2], "hardtanh_cpu", false, rets);
    /* upstream keeps the legacy rule: on integer tensors the limits are truncated to
     * integers first, so they never promote the result to floating point */
    tn_value lim[2];
    for (int k = 0; k < 2; k++) {
        int64_t x;
        TN_TRY(tn_scalar_to_bytes(&args[1 + k], TN_DTYPE_INT64, &x)); /* min.to<int64_t>(), checked */
        lim[k] = tn_value_int(x);
    }
    if (a->dtype == TN_DTYPE_UINT8 && (lim[0].u.i < 0 || lim[1].u.i < 0))
        return tn_error(TN_ERR_RUNTIME, "cannot do hardtanh on an unsigned type with negative limits");
    return clamp_scalars(a, &lim[0], &lim[1], "hardtanh_cpu", false, rets);
}

/* ---- binary arithmetic ------------------------------------------------------------- */

static tn_status check_alpha(tn_dtype common, const tn_value *alpha) {
    if (alpha->tag == TN_V_BOOL && common != TN_DTYPE_BOOL)
        return tn_error(TN_ERR_RUNTIME, "Boolean alpha only supported for Boolean results.");
    if ((alpha->tag == TN_V_DOUBLE || alpha->tag == TN_V_COMPLEX) && tn_dtype_is_integral(common, true))
        return tn_error(TN_ERR_RUNTIME, "For integral input tensors, argument alpha must not be a floating point number.");
    if (alpha->tag == TN_V_COMPLEX && !tn_dtype_is_complex(common))
        return tn_error(TN_ERR_RUNTIME, "For non-complex input tensors, argument alpha must not be a complex number.");
    return TN_OK;
}

/* self + alpha * other, with alpha negated for sub. */
static tn_status add_impl(const tn_value *self, const tn_value *other, const tn_value *alpha, bool negate, tn_value *rets) {
    tn_dtype common;
    TN_TRY(common2(self, other, &common));
    /* a bool number is a bool operand too (upstream wraps it as a bool tensor): rsub(x, True) */
    if (negate && (common == TN_DTYPE_BOOL || self->tag == TN_V_BOOL || other->tag == TN_V_BOOL ||
                   (self->tag == TN_V_TENSOR && self->u.t->dtype == TN_DTYPE_BOOL) ||
                   (other->tag == TN_V_TENSOR && other->u.t->dtype == TN_DTYPE_BOOL))) {
        bool both = self->tag == TN_V_TENSOR && other->tag == TN_V_TENSOR && self->u.t->dtype == TN_DTYPE_BOOL &&
                    other->u.t->dtype == TN_DTYPE_BOOL;
        if (both)
            return tn_error(TN_ERR_RUNTIME, "Subtraction, the `-` operator, with two bool tensors is not supported. "
                                            "Use the `^` or `logical_xor()` operator instead.");
        return tn_error(TN_ERR_RUNTIME, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                                        "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    }
    TN_TRY(check_alpha(common, alpha));
    tn_loop_ctx ctx = {0};
    double re = 1, im = 0;
    int64_t ai = 1;
    if (alpha->tag == TN_V_COMPLEX) { re = alpha->u.c.re; im = alpha->u.c.im; }
    else if (alpha->tag == TN_V_DOUBLE) re = alpha->u.d;
    else { ai = tn_scalar_as_int64(alpha); re = tn_scalar_as_double(alpha); }
    if (negate) { re = -re; im = -im; ai = (int64_t)(0 - (uint64_t)ai); }
    /* upstream negates a uint Scalar through its int64 bits (Scalar::operator-), giving an
     * int: sub(x, y, alpha=2**64-1) adds y */
    if (negate && alpha->tag == TN_V_UINT) re = (double)ai;
    /* alpha is converted to the compute dtype first (upstream's alpha.to<scalar_t>(), which
     * refuses a uint alpha for the integer dtypes but UInt64). */
    tn_value av = alpha->tag == TN_V_UINT && !negate ? *alpha
                : tn_scalar_is_integral(alpha, true) ? tn_value_int(ai) : tn_value_double(re);
    if (tn_cast_supported(common) && !tn_dtype_is_complex(common)) TN_TRY(tn_ew_scalar_in_dtype(&av, common, &re, NULL));
    ctx.i[0] = ai;
    ctx.d[0] = re;
    ctx.c[0][0] = re;
    ctx.c[0][1] = im;
    ctx.mode = !(re == 1 && im == 0);
    return run2v(TN_EW_add, "add_stub", false, false, self, other, &ctx, rets);
}

/* aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) */
tn_status tn_op_add_Tensor(const tn_value *args, tn_value *rets) { return add_impl(&args[0], &args[1], &args[2], false, rets); }
/* aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) */
tn_status tn_op_add_Scalar(const tn_value *args, tn_value *rets) { return add_impl(&args[0], &args[1], &args[2], false, rets); }
/* aten::sub.Tensor / sub.Scalar */
tn_status tn_op_sub_Tensor(const tn_value *args, tn_value *rets) { return add_impl(&args[0], &args[1], &args[2], true, rets); }
tn_status tn_op_sub_Scalar(const tn_value *args, tn_value *rets) { return add_impl(&args[0], &args[1], &args[2], true, rets); }
/* aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) = other - alpha * self */
tn_status tn_op_rsub_Tensor(const tn_value *args, tn_value *rets) { return add_impl(&args[1], &args[0], &args[2], true, rets); }
tn_status tn_op_rsub_Scalar(const tn_value *args, tn_value *rets) { return add_impl(&args[1], &args[0], &args[2], true, rets); }

/* Reduced-float tensor times/over a scalar second operand (a Python number, or any 0-dim
 * tensor): the scalar stays in float (upstream's kernel reads the operand's original value,
 * not its bfloat16/half conversion: x * torch.tensor(0.3, dtype=torch.float64) too). */
static bool reduced_with_scalar(const tn_value *a, const tn_value *b, tn_dtype common) {
    if (common != TN_DTYPE_BFLOAT16 && common != TN_DTYPE_FLOAT16) return false;
    if (a->tag != TN_V_TENSOR || a->u.t->dtype != common || a->u.t->ndim == 0) return false;
    if (b->tag == TN_V_TENSOR) return b->u.t->ndim == 0 && !tn_dtype_is_complex(b->u.t->dtype);
    return tn_scalar_is_number(b) && b->tag != TN_V_COMPLEX;
}

static double scalar_of(const tn_value *b) {
    if (b->tag != TN_V_TENSOR) return sv(b);
    return tn_cast_load_double(tn_tensor_data(b->u.t), b->u.t->dtype);
}

static tn_status mul_impl(const tn_value *a, const tn_value *b, tn_value *rets) {
    tn_dtype common;
    TN_TRY(common2(a, b, &common));
    if (reduced_with_scalar(a, b, common) && !tn_tensor_is_meta(a->u.t)) {
        tn_loop_ctx ctx = {0};
        ctx.d[0] = (float)scalar_of(b);
        return run1(TN_EW_mul_scalar, "mul_cpu_reduced_float", false, false, a->u.t, &ctx, rets);
    }
    return run2v(TN_EW_mul, "mul_cpu", false, false, a, b, NULL, rets);
}
/* aten::mul.Tensor / mul.Scalar */
tn_status tn_op_mul_Tensor(const tn_value *args, tn_value *rets) { return mul_impl(&args[0], &args[1], rets); }
tn_status tn_op_mul_Scalar(const tn_value *args, tn_value *rets) { return mul_impl(&args[0], &args[1], rets); }
/* aten::mul_.Scalar: upstream runs it as mul_out(self, scalar, self), the scalar first, so
 * its kernel does not take the scalar path above: a half / bfloat16 self is multiplied by
 * the scalar rounded to its dtype (x.mul_(0.3) through the Tensor overload, and x * 0.3, keep
 * 0.3 in float; _foreach_mul_ and hann_window's composite reach this overload). */
tn_status tn_op_mul__Scalar(const tn_value *args, tn_value *rets) {
    tn_dtype d = args[0].tag == TN_V_TENSOR ? args[0].u.t->dtype : TN_DTYPE_FLOAT32;
    tn_value a[2] = {args[0], args[1]};
    if ((d == TN_DTYPE_FLOAT16 || d == TN_DTYPE_BFLOAT16) && tn_scalar_is_number(&args[1]) && args[1].tag != TN_V_COMPLEX)
        a[1] = tn_value_double(tn_round_to_dtype(d, sv(&args[1])));
    return tn_dispatch_derived(TN_OP_mul__Scalar, a, rets);
}

/* div with rounding_mode: NULL (true division), "trunc" or "floor". */
static tn_status div_impl(const tn_value *a, const tn_value *b, const tn_value *mode, tn_value *rets) {
    const char *m = mode && mode->tag == TN_V_STRING ? mode->u.s.data : NULL;
    if (!m) {
        tn_dtype common;
        TN_TRY(common2(a, b, &common));
        if (reduced_with_scalar(a, b, common) && !tn_tensor_is_meta(a->u.t)) {
            tn_loop_ctx ctx = {0};
            ctx.d[0] = (float)scalar_of(b);
            return run1(TN_EW_div_scalar, "div_cpu_reduced_float", false, false, a->u.t, &ctx, rets);
        }
        return run2v(TN_EW_div, "div_true_cpu", true, false, a, b, NULL, rets);
    }
    if (strcmp(m, "trunc") == 0) return run2v(TN_EW_div_trunc, "div_trunc_cpu", false, false, a, b, NULL, rets);
    if (strcmp(m, "floor") == 0) return run2v(TN_EW_div_floor, "div_floor_cpu", false, false, a, b, NULL, rets);
    return tn_error(TN_ERR_RUNTIME, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", m);
}
/* aten::div.Tensor / div.Scalar / div.Tensor_mode / div.Scalar_mode / true_divide */
tn_status tn_op_div_Tensor(const tn_value *args, tn_value *rets) { return div_impl(&args[0], &args[1], NULL, rets); }
tn_status tn_op_div_Scalar(const tn_value *args, tn_value *rets) { return div_impl(&args[0], &args[1], NULL, rets); }
tn_status tn_op_div_Tensor_mode(const tn_value *args, tn_value *rets) { return div_impl(&args[0], &args[1], &args[2], rets); }
tn_status tn_op_div_Scalar_mode(const tn_value *args, tn_value *rets) { return div_impl(&args[0], &args[1], &args[2], rets); }
tn_status tn_op_true_divide_Tensor(const tn_value *args, tn_value *rets) { return div_impl(&args[0], &args[1], NULL, rets); }

/* Plain binary ops over (tensor|scalar, tensor|scalar). */
#define TN_BINARY(ident, ewop, kname, int_to_float)                                             \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets) {                            \
        return run2v(TN_EW_##ewop, kname, int_to_float, false, &args[0], &args[1], NULL, rets);\
    }
TN_BINARY(floor_divide, div_floor, "div_floor_cpu", false)
TN_BINARY(floor_divide_Scalar, div_floor, "div_floor_cpu", false)
TN_BINARY(remainder_Tensor, remainder, "remainder_cpu", false)
TN_BINARY(remainder_Scalar, remainder, "remainder_cpu", false)
TN_BINARY(remainder_Scalar_Tensor, remainder, "remainder_cpu", false)
TN_BINARY(fmod_Tensor, fmod, "fmod_cpu", false)
TN_BINARY(fmod_Scalar, fmod, "fmod_cpu", false)
TN_BINARY(fmax, fmax, "fmax_cpu", false)
TN_BINARY(fmin, fmin, "fmin_cpu", false)
TN_BINARY(atan2, atan2, "atan2_cpu", true)
TN_BINARY(hypot, hypot, "hypot_cpu", false)
TN_BINARY(copysign_Tensor, copysign, "copysign_cpu", true)
TN_BINARY(copysign_Scalar, copysign, "copysign_cpu", true)
TN_BINARY(xlogy_Tensor, xlogy, "xlogy_cpu", true)
TN_BINARY(xlogy_Scalar_Self, xlogy, "xlogy_cpu", true)
TN_BINARY(xlogy_Scalar_Other, xlogy, "xlogy_cpu", true)
TN_BINARY(logaddexp, logaddexp, "logaddexp_cpu", false)
TN_BINARY(logaddexp2, logaddexp2, "logaddexp2_cpu", false)
TN_BINARY(gcd, gcd, "gcd_cpu", false)
TN_BINARY(lcm, lcm, "lcm_cpu", false)

/* aten::heaviside(Tensor self, Tensor values) -> Tensor: upstream wants one dtype for both. */
tn_status tn_op_heaviside(const tn_value *args, tn_value *rets) {
    if (args[0].u.t->dtype != args[1].u.t->dtype)
        return tn_error(TN_ERR_RUNTIME, "heaviside is not yet implemented for tensors with different dtypes.");
    return run2v(TN_EW_heaviside, "heaviside_cpu", false, false, &args[0], &args[1], NULL, rets);
}
/* aten::log_sigmoid(self): min(self, 0) - log1p(exp(-|self|)) in one pass (upstream's
 * log_sigmoid_forward without the buffer); floats only. */
tn_status tn_op_log_sigmoid(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    if (tn_tensor_is_meta(x)) { /* upstream's meta result: no kernel, so no dtype refused */
        tn_tensor *o;
        TN_TRY(tn_tensor_empty_like(x, x->dtype, &o));
        rets[0] = tn_value_tensor(o);
        return TN_OK;
    }
    if (!tn_dtype_is_floating(x->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"log_sigmoid_cpu\" not implemented for '%s'", dname(x->dtype));
    return run1(TN_EW_log_sigmoid, "log_sigmoid_cpu", false, false, x, NULL, rets);
}
/* aten::log_sigmoid_forward(self) -> (output, buffer): the buffer exp(-|self|) is what
 * log_sigmoid_backward reads (autograd runs log_sigmoid as this) */
tn_status tn_op_log_sigmoid_forward(const tn_value *args, tn_value *rets) {
    TN_TRY(tn_op_log_sigmoid(args, rets));
    if (tn_tensor_is_meta(args[0].u.t)) {
        tn_tensor *b;
        tn_status st = tn_tensor_empty_like(args[0].u.t, args[0].u.t->dtype, &b);
        if (st != TN_OK) { tn_value_release(&rets[0]); return st; }
        rets[1] = tn_value_tensor(b);
        return TN_OK;
    }
    tn_value v[2];
    tn_status st = run1(TN_EW_abs, "abs_cpu", false, false, args[0].u.t, NULL, &v[0]);
    if (st == TN_OK) { st = run1(TN_EW_neg, "neg_cpu", false, false, v[0].u.t, NULL, &v[1]); tn_value_release(&v[0]); }
    if (st == TN_OK) { st = run1(TN_EW_exp, "exp_vml_cpu", false, false, v[1].u.t, NULL, &rets[1]); tn_value_release(&v[1]); }
    if (st != TN_OK) tn_value_release(&rets[0]);
    return st;
}

/* aten::_prelu_kernel(Tensor self, Tensor weight) -> Tensor: self > 0 ? self : weight * self,
 * the weight broadcast over self (prelu lays it along dim 1 first); one dtype for both, as
 * upstream's iterator checks it */
tn_status tn_op__prelu_kernel(const tn_value *args, tn_value *rets) {
    if (args[0].u.t->dtype != args[1].u.t->dtype)
        return tn_error(TN_ERR_RUNTIME, "Found dtype %s but expected %s", dname(args[1].u.t->dtype), dname(args[0].u.t->dtype));
    return run2v(TN_EW_prelu, "prelu_cpu", false, false, &args[0], &args[1], NULL, rets);
}
TN_BINARY(bitwise_and_Tensor, bitwise_and, "bitwise_and_cpu", false)
TN_BINARY(bitwise_and_Scalar, bitwise_and, "bitwise_and_cpu", false)
TN_BINARY(bitwise_or_Tensor, bitwise_or, "bitwise_or_cpu", false)
TN_BINARY(bitwise_or_Scalar, bitwise_or, "bitwise_or_cpu", false)
TN_BINARY(bitwise_xor_Tensor, bitwise_xor, "bitwise_xor_cpu", false)
TN_BINARY(bitwise_xor_Scalar, bitwise_xor, "bitwise_xor_cpu", false)
TN_BINARY(__and___Tensor, bitwise_and, "bitwise_and_cpu", false)
TN_BINARY(__and___Scalar, bitwise_and, "bitwise_and_cpu", false)
TN_BINARY(__or___Tensor, bitwise_or, "bitwise_or_cpu", false)
TN_BINARY(__or___Scalar, bitwise_or, "bitwise_or_cpu", false)
TN_BINARY(__xor___Tensor, bitwise_xor, "bitwise_xor_cpu", false)
TN_BINARY(__xor___Scalar, bitwise_xor, "bitwise_xor_cpu", false)
TN_BINARY(__lshift___Tensor, lshift, "lshift_cpu", false)
TN_BINARY(__lshift___Scalar, lshift, "lshift_cpu", false)
TN_BINARY(__rshift___Tensor, rshift, "rshift_cpu", false)
TN_BINARY(__rshift___Scalar, rshift, "rshift_cpu", false)
TN_BINARY(bitwise_left_shift_Tensor, lshift, "lshift_cpu", false)
TN_BINARY(bitwise_left_shift_Tensor_Scalar, lshift, "lshift_cpu", false)
TN_BINARY(bitwise_right_shift_Tensor, rshift, "rshift_cpu", false)
TN_BINARY(bitwise_right_shift_Tensor_Scalar, rshift, "rshift_cpu", false)

/* maximum / minimum refuse complex with upstream's RuntimeError. */
static tn_status minmax(tn_ew_op op, const char *name, const tn_value *args, tn_value *rets) {
    if (tn_dtype_is_complex(args[0].u.t->dtype) || tn_dtype_is_complex(args[1].u.t->dtype))
        return tn_error(TN_ERR_RUNTIME, "%s not implemented for complex tensors.", name);
    return run2v(op, name, false, false, &args[0], &args[1], NULL, rets);
}
/* aten::maximum / aten::minimum */
tn_status tn_op_maximum(const tn_value *args, tn_value *rets) { return minmax(TN_EW_maximum, "maximum", args, rets); }
tn_status tn_op_minimum(const tn_value *args, tn_value *rets) { return minmax(TN_EW_minimum, "minimum", args, rets); }

/* Comparisons and logical ops: Bool results computed in the common dtype. */
#define TN_COMPARE(ident, ewop, kname)                                                          \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets) {                            \
        return run2v(TN_EW_##ewop, kname, false, true, &args[0], &args[1], NULL, rets);        \
    }
TN_COMPARE(eq_Tensor, eq, "eq_cpu") TN_COMPARE(eq_Scalar, eq, "eq_cpu")
TN_COMPARE(ne_Tensor, ne, "ne_cpu") TN_COMPARE(ne_Scalar, ne, "ne_cpu")
TN_COMPARE(lt_Tensor, lt, "lt_cpu") TN_COMPARE(lt_Scalar, lt, "lt_cpu")
TN_COMPARE(le_Tensor, le, "le_cpu") TN_COMPARE(le_Scalar, le, "le_cpu")
TN_COMPARE(gt_Tensor, gt, "gt_cpu") TN_COMPARE(gt_Scalar, gt, "gt_cpu")
TN_COMPARE(ge_Tensor, ge, "ge_cpu") TN_COMPARE(ge_Scalar, ge, "ge_cpu")
TN_COMPARE(logical_and, logical_and, "logical_and_cpu")
TN_COMPARE(logical_or, logical_or, "logical_or_cpu")
TN_COMPARE(logical_xor, logical_xor, "logical_xor_cpu")

/* ---- pow --------------------------------------------------------------------------- */

/* aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) */
tn_status tn_op_pow_Tensor_Scalar(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    const tn_value *e = &args[1];
    tn_dtype common;
    TN_TRY(common2(&args[0], e, &common));
    if (tn_dtype_is_integral(common, true)) {
        int64_t ei = e->tag == TN_V_BOOL ? e->u.b : e->u.i;
        if (ei < 0) return tn_error(TN_ERR_RUNTIME, "Integers to negative integer powers are not allowed.");
        tn_loop_ctx ctx = {0};
        ctx.i[0] = ei;
        tn_ew_run r = {TN_EW_pow_int_scalar, "pow", false, false, common == TN_DTYPE_BOOL ? TN_DTYPE_INT64 : common};
        if (common != TN_DTYPE_BOOL) return tn_ew_execute(&r, 1, &self, &ctx, rets);
        /* a bool self to a bool exponent stays bool (upstream's result type): computed in
         * int64 (the values are 0 and 1) and converted */
        tn_value t[1];
        TN_TRY(tn_ew_execute(&r, 1, &self, &ctx, t));
        tn_value d = {.tag = TN_V_DTYPE};
        d.u.dtype = TN_DTYPE_BOOL;
        tn_status st = tn_dispatch(TN_OP__to_copy, (tn_value[]){t[0], d, {.tag = TN_V_NONE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE}, tn_value_bool(false), {.tag = TN_V_NONE}}, rets);
        tn_value_release(&t[0]);
        return st;
    }
    if (tn_dtype_is_complex(common)) {
        /* the exponent as c10::complex<double>; Scalar::equal matches a special exponent only
         * with a zero imaginary part */
        double re = e->tag == TN_V_COMPLEX ? e->u.c.re : sv(e), im = e->tag == TN_V_COMPLEX ? e->u.c.im : 0.0;
        tn_loop_ctx ctx = {0};
        ctx.c[0][0] = re;
        ctx.c[0][1] = im;
        ctx.mode = im != 0 ? 0 : re == 0 ? 7 : re == 1 ? 8 : re == 0.5 ? 1 : re == 2 ? 2 : re == 3 ? 3 : re == -0.5 ? 4
                                : re == -1 ? 5 : re == -2 ? 6 : 0;
        tn_ew_run r = {TN_EW_pow_scalar, "pow", false, false, common};
        return tn_ew_execute(&r, 1, &self, &ctx, rets);
    }
    double x = sv(e);
    if (common == TN_DTYPE_FLOAT16 || common == TN_DTYPE_BFLOAT16) /* upstream's kernel: exp.to<scalar_t>() */
        TN_TRY(tn_ew_scalar_in_dtype(&(tn_value){.tag = TN_V_DOUBLE, .u.d = x}, common, &x, NULL));
    tn_loop_ctx ctx = {0};
    ctx.d[0] = x;
    ctx.mode = x == 0.5 ? 1 : x == 2 ? 2 : x == 3 ? 3 : x == -0.5 ? 4 : x == -1 ? 5 : x == -2 ? 6 : 0;
    tn_ew_run r = {TN_EW_pow_scalar, "pow", false, false, common};
    return tn_ew_execute(&r, 1, &self, &ctx, rets);
}

/* aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) */
tn_status tn_op_pow_Tensor_Tensor(const tn_value *args, tn_value *rets) {
    return run2v(TN_EW_pow, "pow", false, false, &args[0], &args[1], NULL, rets);
}

/* aten::pow.Scalar(Scalar self, Tensor exponent). A float base of 2 with a floating
 * exponent is exp2 (ldexp's 2^other): exact for integral exponents, as pow, within an ulp
 * otherwise, as upstream's vectorised pow is of the exact value; 7x faster than the general
 * pow's float64 lanes at 1e6. */
tn_status tn_op_pow_Scalar(const tn_value *args, tn_value *rets) {
    const tn_value *e = &args[1];
    if (args[0].tag == TN_V_DOUBLE && args[0].u.d == 2.0 && e->tag == TN_V_TENSOR &&
        tn_dtype_is_floating(e->u.t->dtype) && !tn_dtype_is_complex(e->u.t->dtype))
        return tn_op_exp2(e, rets);
    return run2v(TN_EW_pow, "pow", false, false, &args[0], &args[1], NULL, rets);
}

/* aten::square(Tensor self) = pow(self, 2): Bool squares as Long. */
tn_status tn_op_square(const tn_value *args, tn_value *rets) {
    tn_value a[2] = {args[0], tn_value_int(2)};
    return tn_op_pow_Tensor_Scalar(a, rets);
}

/* ---- ternary ----------------------------------------------------------------------- */

static tn_status run3(tn_ew_op op, const char *kname, tn_tensor *a, tn_tensor *b, tn_tensor *c, tn_loop_ctx *ctx,
                      tn_value *rets) {
    tn_tensor *ins[3] = {a, b, c};
    tn_ew_run r = {op, kname, false, false, TN_DTYPE_UNDEFINED};
    return tn_ew_execute(&r, 3, ins, ctx, rets);
}

/* aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) */
tn_status tn_op_addcmul(const tn_value *args, tn_value *rets) {
    tn_loop_ctx ctx = {0};
    ctx.d[0] = sv(&args[3]);
    ctx.i[0] = args[3].tag == TN_V_INT ? args[3].u.i : (int64_t)ctx.d[0];
    ctx_complex(&ctx, 0, &args[3]);
    return run3(TN_EW_addcmul, "addcmul_cpu_out", args[0].u.t, args[1].u.t, args[2].u.t, &ctx, rets);
}

/* aten::addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) */
tn_status tn_op_addcdiv(const tn_value *args, tn_value *rets) {
    if (tn_dtype_is_integral(args[1].u.t->dtype, true) && tn_dtype_is_integral(args[2].u.t->dtype, true))
        return tn_error(TN_ERR_RUNTIME,
                        "Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
                        "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                        "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
                        "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                        "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.");
    tn_loop_ctx ctx = {0};
    ctx.d[0] = sv(&args[3]);
    ctx_complex(&ctx, 0, &args[3]);
    return run3(TN_EW_addcdiv, "addcdiv_cpu_out", args[0].u.t, args[1].u.t, args[2].u.t, &ctx, rets);
}

/* aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) */
tn_status tn_op_lerp_Scalar(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t, *b = args[1].u.t;
    if (a->dtype != b->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `end` but got dtype %s", dname(a->dtype), dname(b->dtype));
    tn_loop_ctx ctx = {0};
    ctx.d[0] = sv(&args[2]);
    ctx_complex(&ctx, 0, &args[2]);
    /* the complex rows' |weight| < 1/2, in the element type's precision */
    ctx.mode = a->dtype == TN_DTYPE_COMPLEX64 ? hypotf((float)ctx.c[0][0], (float)ctx.c[0][1]) < 0.5f
                                              : hypot(ctx.c[0][0], ctx.c[0][1]) < 0.5;
    tn_tensor *ins[2] = {a, b};
    tn_ew_run r = {TN_EW_lerp_scalar, "lerp_kernel_scalar", false, false, TN_DTYPE_UNDEFINED};
    return tn_ew_execute(&r, 2, ins, &ctx, rets);
}

/* aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) */
tn_status tn_op_lerp_Tensor(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t, *b = args[1].u.t, *w = args[2].u.t;
    if (a->dtype != b->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `end` but got dtype %s", dname(a->dtype), dname(b->dtype));
    /* a 0-dim weight of another dtype is accepted and converted to self's, as upstream's
     * (a complex one for a real self still refuses) */
    bool convert = w->ndim == 0 && a->dtype != w->dtype && !(tn_dtype_is_complex(w->dtype) && !tn_dtype_is_complex(a->dtype));
    if (a->dtype != w->dtype && !convert)
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `weight` but got dtype %s", dname(a->dtype), dname(w->dtype));
    if (!convert) return run3(TN_EW_lerp, "lerp_kernel_tensor", a, b, w, NULL, rets);
    tn_tensor *wc;
    TN_TRY(tn_ew_to_dtype(w, a->dtype, &wc));
    tn_status st = run3(TN_EW_lerp, "lerp_kernel_tensor", a, b, wc, NULL, rets);
    tn_tensor_release(wc);
    return st;
}

/* aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) */
tn_status tn_op_clamp_Tensor(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    bool has_min = args[1].tag == TN_V_TENSOR, has_max = args[2].tag == TN_V_TENSOR;
    if (!has_min && !has_max)
        return tn_error(TN_ERR_RUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
    if (tn_dtype_is_complex(self->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "clamp is not supported for complex types");
    if (has_min && has_max) return run3(TN_EW_clamp_tensor, "clamp_cpu", self, args[1].u.t, args[2].u.t, NULL, rets);
    tn_value a[2] = {args[0], has_min ? args[1] : args[2]};
    return run2v(has_min ? TN_EW_maximum : TN_EW_minimum, has_min ? "clamp_min_cpu" : "clamp_max_cpu", false, false,
                 &a[0], &a[1], NULL, rets);
}
/* aten::clamp_min.Tensor / clamp_max.Tensor */
tn_status tn_op_clamp_min_Tensor(const tn_value *args, tn_value *rets) {
    return run2v(TN_EW_maximum, "clamp_min_cpu", false, false, &args[0], &args[1], NULL, rets);
}
tn_status tn_op_clamp_max_Tensor(const tn_value *args, tn_value *rets) {
    return run2v(TN_EW_minimum, "clamp_max_cpu", false, false, &args[0], &args[1], NULL, rets);
}

/* ---- special functions (loops in kernels/elementwise_special.c) ---------------------- */

/* Unary special functions: integers promote to the default float dtype. `halves` says
 * whether upstream's kernel takes Half/BFloat16 (the shared loop may; the op refuses). */
static tn_status special1(tn_ew_op op, const char *kname, bool halves, const tn_value *args, tn_loop_ctx *ctx,
                          tn_value *rets) {
    tn_dtype d = args[0].u.t->dtype;
    if (!halves && (d == TN_DTYPE_FLOAT16 || d == TN_DTYPE_BFLOAT16)) return tn_ew_refuse_dtype(kname, d);
    return run1(op, kname, true, false, args[0].u.t, ctx, rets);
}
#define TN_SPECIAL1(ident, ewop, kname, halves)                                  \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets) {             \
        return special1(TN_EW_##ewop, kname, halves, args, NULL, rets);         \
    }
TN_SPECIAL1(lgamma, lgamma, "lgamma_vml_cpu", true)
TN_SPECIAL1(digamma, digamma, "digamma", true)
TN_SPECIAL1(erfinv, erfinv, "erfinv_vml_cpu", true)
TN_SPECIAL1(i0, i0, "i0_cpu", true)
TN_SPECIAL1(special_i0e, i0e, "i0e_cpu", true)
TN_SPECIAL1(special_i1, i1, "i1_cpu", true)
TN_SPECIAL1(special_i1e, i1e, "i1e_cpu", true)
TN_SPECIAL1(special_ndtr, ndtr, "ndtr_cpu", true)
TN_SPECIAL1(special_entr, entr, "entr_cpu", true)
TN_SPECIAL1(special_erfcx, erfcx, "erfcx_cpu", false)
TN_SPECIAL1(special_ndtri, ndtri, "ndtri_cpu", false)
TN_SPECIAL1(special_log_ndtr, log_ndtr, "log_ndtr_cpu", false)
TN_SPECIAL1(special_bessel_j0, bessel_j0, "bessel_j0_cpu", false)
TN_SPECIAL1(special_bessel_j1, bessel_j1, "bessel_j1_cpu", false)
TN_SPECIAL1(special_bessel_y0, bessel_y0, "bessel_y0_cpu", false)
TN_SPECIAL1(special_bessel_y1, bessel_y1, "bessel_y1_cpu", false)
TN_SPECIAL1(special_modified_bessel_i0, i0, "modified_bessel_i0_cpu", false)
TN_SPECIAL1(special_modified_bessel_i1, i1, "modified_bessel_i1_cpu", false)
TN_SPECIAL1(special_modified_bessel_k0, modified_bessel_k0, "modified_bessel_k0_cpu", false)
TN_SPECIAL1(special_modified_bessel_k1, modified_bessel_k1, "modified_bessel_k1_cpu", false)
TN_SPECIAL1(special_scaled_modified_bessel_k0, scaled_modified_bessel_k0, "scaled_modified_bessel_k0_cpu", false)
TN_SPECIAL1(special_scaled_modified_bessel_k1, scaled_modified_bessel_k1, "scaled_modified_bessel_k1_cpu", false)
TN_SPECIAL1(special_spherical_bessel_j0, spherical_bessel_j0, "spherical_bessel_j0_cpu", false)
TN_SPECIAL1(special_airy_ai, airy_ai, "airy_ai_cpu", false)

/* aten::polygamma(int n, Tensor self) */
tn_status tn_op_polygamma(const tn_value *args, tn_value *rets) {
    if (args[0].u.i < 0) return tn_error(TN_ERR_RUNTIME, "polygamma(n, x) does not support negative n.");
    tn_loop_ctx ctx = {0};
    ctx.i[0] = args[0].u.i;
    tn_value a[1] = {args[1]};
    return special1(TN_EW_polygamma, "polygamma", true, a, &ctx, rets);
}

/* aten::abs_: abs.out into self; upstream refuses it for complex self (the result is real). */
tn_status tn_op_abs_(const tn_value *args, tn_value *rets) {
    if (tn_dtype_is_complex(args[0].u.t->dtype))
        return tn_error(TN_ERR_RUNTIME, "In-place abs is not supported for complex tensors.");
    tn_value a[2] = {args[0], args[0]};
    return tn_dispatch(TN_OP_abs_out, a, rets);
}

/* aten::polygamma_(Tensor(a!) self, int n): polygamma.out writing into self; the functional
 * takes (n, self), so the door cannot derive the in-place form from it. */
tn_status tn_op_polygamma_(const tn_value *args, tn_value *rets) {
    tn_value a[3] = {args[1], args[0], args[0]};
    return tn_dispatch(TN_OP_polygamma_out, a, rets);
}

/* aten::mvlgamma(Tensor self, int p): upstream checks p and the dtype, not the domain. */
tn_status tn_op_mvlgamma(const tn_value *args, tn_value *rets) {
    if (args[0].u.t->dtype == TN_DTYPE_BOOL) return tn_error(TN_ERR_RUNTIME, "The input tensor may not be a boolean tensor.");
    if (args[1].u.i < 1) return tn_error(TN_ERR_RUNTIME, "p has to be greater than or equal to 1");
    /* upstream builds arange(p) in the result dtype first: a p no allocation can hold fails
     * there at once (ours would sum p terms per element: a hang for p = 2**62) */
    const tn_tensor *self = args[0].u.t;
    tn_dtype dt = tn_dtype_is_integral(self->dtype, true) ? tn_default_dtype() : self->dtype;
    int64_t p = args[1].u.i;
    tn_tensor *scratch;
    TN_TRY(tn_tensor_empty(1, &p, dt, tn_device_cpu(), &scratch));
    tn_tensor_release(scratch);
    tn_loop_ctx ctx = {0};
    ctx.i[0] = args[1].u.i;
    return special1(TN_EW_mvlgamma, "mvlgamma", true, args, &ctx, rets);
}

/* Binary special functions over (tensor|scalar, tensor|scalar); `halves` as special1. */
static tn_status special2(tn_ew_op op, const char *kname, bool int_to_float, bool halves, const tn_value *args,
                          tn_value *rets) {
    if (!halves) {
        tn_dtype common;
        TN_TRY(common2(&args[0], &args[1], &common));
        if (common == TN_DTYPE_FLOAT16 || common == TN_DTYPE_BFLOAT16) return tn_ew_refuse_dtype(kname, common);
    }
    return run2v(op, kname, int_to_float, false, &args[0], &args[1], NULL, rets);
}
#define TN_SPECIAL2(ident, ewop, kname, int_to_float, halves)                          \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets) {                   \
        return special2(TN_EW_##ewop, kname, int_to_float, halves, args, rets);       \
    }
/* the Tensor, self_scalar / x_scalar and other_scalar / n_scalar overloads share one body */
#define TN_SPECIAL2_ALL(name, s1, s2, ewop, kname, halves)                  \
    TN_SPECIAL2(name, ewop, kname, true, halves)                            \
    TN_SPECIAL2(name##_##s1, ewop, kname, true, halves)                     \
    TN_SPECIAL2(name##_##s2, ewop, kname, true, halves)
TN_SPECIAL2_ALL(special_xlog1py, self_scalar, other_scalar, xlog1py, "xlog1py_cpu", true)
TN_SPECIAL2_ALL(special_zeta, self_scalar, other_scalar, zeta, "zeta_cpu", false)
TN_SPECIAL2_ALL(special_chebyshev_polynomial_t, x_scalar, n_scalar, chebyshev_t, "chebyshev_polynomial_t_cpu", false)
TN_SPECIAL2_ALL(special_chebyshev_polynomial_u, x_scalar, n_scalar, chebyshev_u, "chebyshev_polynomial_u_cpu", false)
TN_SPECIAL2_ALL(special_chebyshev_polynomial_v, x_scalar, n_scalar, chebyshev_v, "chebyshev_polynomial_v_cpu", false)
TN_SPECIAL2_ALL(special_chebyshev_polynomial_w, x_scalar, n_scalar, chebyshev_w, "chebyshev_polynomial_w_cpu", false)
TN_SPECIAL2_ALL(special_shifted_chebyshev_polynomial_t, x_scalar, n_scalar, shifted_chebyshev_t, "shifted_chebyshev_polynomial_t_cpu", false)
TN_SPECIAL2_ALL(special_shifted_chebyshev_polynomial_u, x_scalar, n_scalar, shifted_chebyshev_u, "shifted_chebyshev_polynomial_u_cpu", false)
TN_SPECIAL2_ALL(special_shifted_chebyshev_polynomial_v, x_scalar, n_scalar, shifted_chebyshev_v, "shifted_chebyshev_polynomial_v_cpu", false)
TN_SPECIAL2_ALL(special_shifted_chebyshev_polynomial_w, x_scalar, n_scalar, shifted_chebyshev_w, "shifted_chebyshev_polynomial_w_cpu", false)
TN_SPECIAL2_ALL(special_hermite_polynomial_h, x_scalar, n_scalar, hermite_h, "hermite_polynomial_h_cpu", false)
TN_SPECIAL2_ALL(special_hermite_polynomial_he, x_scalar, n_scalar, hermite_he, "hermite_polynomial_he_cpu", false)
TN_SPECIAL2_ALL(special_laguerre_polynomial_l, x_scalar, n_scalar, laguerre_l, "laguerre_polynomial_l_cpu", false)
TN_SPECIAL2_ALL(special_legendre_polynomial_p, x_scalar, n_scalar, legendre_p, "legendre_polynomial_p_cpu", false)
/* igamma / igammac / nextafter: upstream's kernels take floating dtypes only (no promotion) */
TN_SPECIAL2(igamma, igamma, "igamma_cpu", false, true)
TN_SPECIAL2(igammac, igammac, "igammac_cpu", false, true)
TN_SPECIAL2(nextafter, nextafter, "nextafter_cpu", false, true)

/* aten::frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent) */
tn_status tn_op_frexp_Tensor(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *c = NULL, *m = NULL, *e = NULL;
    if (!tn_dtype_is_floating(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "torch.frexp() only supports floating-point dtypes");
    tn_status st = tn_tensor_contiguous(x, &c);
    if (st == TN_OK) st = tn_tensor_empty(x->ndim, x->sizes, x->dtype, x->storage->device, &m);
    if (st == TN_OK) st = tn_tensor_empty(x->ndim, x->sizes, TN_DTYPE_INT32, x->storage->device, &e);
    if (st == TN_OK && !tn_tensor_is_meta(c))
        tn_ew_frexp(x->dtype, tn_tensor_data(c), tn_tensor_data(m), tn_tensor_data(e), tn_tensor_numel(c));
    tn_tensor_release(c);
    if (st != TN_OK) {
        tn_tensor_release(m);
        tn_tensor_release(e);
        return st;
    }
    rets[0] = tn_value_tensor(m);
    rets[1] = tn_value_tensor(e);
    return TN_OK;
}
