/* nn_backward_pointwise.c — the pointwise backward operators (activation gradients,
 * pointwise-loss gradients, dropout, shrink, mish, logit) over the elementwise iterator
 * (broadcasting, type promotion, threading) with the loops of
 * kernels/elementwise_backward.h. Plain C11; no Python. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/scalar.h"
#include "kernels/cast.h"
#include "kernels/elementwise_backward.h"
#include "ops/elementwise_common.h"
#include "ops/iter.h"
#include "ops/nn_backward_internal.h"
#include "ops/scalar_convert.h"

/* ================================ pointwise gradients ================================== */

/* A Scalar argument as double (a complex one by its real part, as upstream's conversion). */
static double scalar_of(const tn_value *v) { return tn_scalar_as_double(v); }

/* A Scalar converted into dtype with upstream's checks (`scalar.to<scalar_t>()`: a nonzero
 * imaginary part or a value beyond the type refuses) and read back. */
static tn_status scalar_in(const tn_value *v, tn_dtype dt, double *out, int64_t *iout) {
    unsigned char buf[16];
    TN_TRY(tn_scalar_to_bytes(v, dt, buf));
    *out = tn_cast_load_double(buf, dt);
    /* the integer loops read it exactly (2**63 - 1 as a double is 2**63, past int64) */
    if (tn_dtype_is_integral(dt, true)) *iout = tn_cast_load_int64(buf, dt);
    return TN_OK;
}

/* How a scalar of a pointwise run reaches the loop: as given, rounded into the
 * computation dtype, or rounded into its opmath dtype (Float for Half and BFloat16, as
 * upstream's kernels that read `scalar.to<float>()` for the reduced float types). */
enum { EWB_AS_GIVEN, EWB_ROUND, EWB_ROUND_OPMATH };
/* The scalars of one pointwise run and how each is rounded. */
typedef struct ewb_scalars {
    int n;
    const tn_value *v[3];
    unsigned char round[3];
} ewb_scalars;

/* Runs a pointwise backward loop over the broadcast, type-promoted inputs. */
static tn_status ewb_run(tn_ewb_op op, const char *kname, int nin, tn_tensor **ins, const ewb_scalars *sc,
                         tn_loop_ctx *ctx, tn_value *rets) {
    tn_iter_config c = tn_iter_config_init(1, nin);
    for (int i = 0; i < nin; i++) c.inputs[i] = ins[i];
    c.promote_inputs_to_common_dtype = true;
    tn_iter it;
    TN_TRY(tn_iter_build(&it, &c));
    tn_loop_fn loop = tn_ewb_loop(op, it.common_dtype);
    if (!loop && it.is_meta) { /* no kernel runs on meta tensors, so no dtype is refused */
        rets[0] = tn_value_tensor(tn_iter_take_output(&it, 0));
        tn_iter_release(&it);
        return TN_OK;
    }
    if (!loop) {
        tn_dtype d = it.common_dtype;
        tn_iter_release(&it);
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kname, tn_nnb_dname(d));
    }
    for (int i = 0; sc && i < sc->n; i++) {
        if (sc->round[i] == EWB_AS_GIVEN) ctx->d[i] = scalar_of(sc->v[i]);
        else {
            tn_dtype rd = it.common_dtype;
            if (sc->round[i] == EWB_ROUND_OPMATH && (rd == TN_DTYPE_FLOAT16 || rd == TN_DTYPE_BFLOAT16))
                rd = TN_DTYPE_FLOAT32;
            tn_status st = scalar_in(sc->v[i], rd, &ctx->d[i], &ctx->i[i]);
            if (st != TN_OK) {
                tn_iter_release(&it);
                return st;
            }
        }
    }
    tn_iter_for_each(&it, loop, ctx);
    rets[0] = tn_value_tensor(tn_iter_take_output(&it, 0));
    tn_iter_release(&it);
    return TN_OK;
}

static tn_status ewb2(tn_ewb_op op, const char *kname, const tn_value *args, const ewb_scalars *sc, tn_loop_ctx *ctx,
                      tn_value *rets) {
    tn_tensor *ins[2] = {args[0].u.t, args[1].u.t};
    tn_loop_ctx local = {0};
    return ewb_run(op, kname, 2, ins, sc, ctx ? ctx : &local, rets);
}

/* aten::threshold_backward(grad_output, self, threshold) -> Tensor */
tn_status tn_op_threshold_backward(const tn_value *args, tn_value *rets) {
    ewb_scalars sc = {1, {&args[2]}, {EWB_ROUND_OPMATH}};
    return ewb2(TN_EWB_threshold, "threshold_cpu", args, &sc, NULL, rets);
}

/* aten::gelu_backward(grad_output, self, *, approximate='none') -> Tensor */
tn_status tn_op_gelu_backward(const tn_value *args, tn_value *rets) {
    bool tanh_mode = false;
    if (args[2].tag == TN_V_STRING) {
        if (strcmp(args[2].u.s.data, "tanh") == 0) tanh_mode = true;
        else if (strcmp(args[2].u.s.data, "none") != 0)
            return tn_error(TN_ERR_RUNTIME, "approximate argument must be either none or tanh.");
    }
    return ewb2(tanh_mode ? TN_EWB_gelu_tanh : TN_EWB_gelu, "GeluBackwardKernelImpl", args, NULL, NULL, rets);
}

/* aten::silu_backward(grad_output, self) -> Tensor */
tn_status tn_op_silu_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_silu, "silu_backward_cpu", args, NULL, NULL, rets);
}
/* aten::sigmoid_backward(grad_output, output) -> Tensor */
tn_status tn_op_sigmoid_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_sigmoid, "sigmoid_backward_cpu", args, NULL, NULL, rets);
}
/* aten::tanh_backward(grad_output, output) -> Tensor */
tn_status tn_op_tanh_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_tanh, "tanh_backward_cpu", args, NULL, NULL, rets);
}

/* aten::hardtanh_backward(grad_output, self, min_val, max_val) -> Tensor */
tn_status tn_op_hardtanh_backward(const tn_value *args, tn_value *rets) {
    ewb_scalars sc = {2, {&args[2], &args[3]}, {EWB_ROUND, EWB_ROUND}};
    return ewb2(TN_EWB_hardtanh, "hardtanh_backward_cpu", args, &sc, NULL, rets);
}

/* aten::leaky_relu_backward(grad_output, self, negative_slope, self_is_result) -> Tensor */
tn_status tn_op_leaky_relu_backward(const tn_value *args, tn_value *rets) {
    if (args[3].u.b && scalar_of(&args[2]) < 0)
        return tn_error(TN_ERR_RUNTIME, "In-place leakyReLu backward calculation is triggered with a negative slope "
                                        "which is not supported. This is caused by calling in-place forward function "
                                        "with a negative slope, please call out-of-place version instead. File an "
                                        "issue at https://github.com/pytorch/pytorch if you do require supporting "
                                        "in-place leakRelu backward calculation with negative slope");
    ewb_scalars sc = {1, {&args[2]}, {EWB_AS_GIVEN}};
    return ewb2(TN_EWB_leaky_relu, "leaky_relu_backward_cpu", args, &sc, NULL, rets);
}

/* aten::elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result) -> Tensor */
tn_status tn_op_elu_backward(const tn_value *args, tn_value *rets) {
    double alpha = scalar_of(&args[1]), scale = scalar_of(&args[2]), input_scale = scalar_of(&args[3]);
    bool is_result = args[4].u.b;
    if (is_result && !(alpha >= 0)) /* upstream's check: a NaN alpha fails it too */
        return tn_error(TN_ERR_RUNTIME, "In-place elu backward calculation is triggered with a negative slope which is "
                                        "not supported. This is caused by calling in-place forward function with a "
                                        "negative slope, please call out-of-place version instead.");
    tn_tensor *ins[2] = {args[0].u.t, args[5].u.t};
    tn_loop_ctx ctx = {0};
    ctx.mode = is_result;
    /* negcoef = alpha·scale, poscoef = scale, negiptcoef = input_scale (in the opmath type) */
    tn_value va = tn_value_double(alpha * scale), vs = tn_value_double(scale), vi = tn_value_double(input_scale);
    ewb_scalars sc = {3, {&va, &vs, &vi}, {EWB_AS_GIVEN, EWB_AS_GIVEN, EWB_AS_GIVEN}};
    return ewb_run(TN_EWB_elu, "elu_backward_cpu", 2, ins, &sc, &ctx, rets);
}

/* aten::softplus_backward(grad_output, self, beta, threshold) -> Tensor */
tn_status tn_op_softplus_backward(const tn_value *args, tn_value *rets) {
    ewb_scalars sc = {2, {&args[2], &args[3]}, {EWB_AS_GIVEN, EWB_AS_GIVEN}};
    return ewb2(TN_EWB_softplus, "softplus_backward_cpu", args, &sc, NULL, rets);
}
/* aten::hardswish_backward(grad_output, self) -> Tensor */
tn_status tn_op_hardswish_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_hardswish, "hardswish_backward_cpu", args, NULL, NULL, rets);
}
/* aten::hardsigmoid_backward(grad_output, self) -> Tensor */
tn_status tn_op_hardsigmoid_backward(const tn_value *args, tn_value *rets) {
    return ewb2(TN_EWB_hardsigmoid, "hardsigmoid_backward_cpu", args, NULL, NULL, rets);
}

/* ================================ pointwise losses ===================================== */

static tn_status check_reduction(int64_t r) {
    if (r < 0 || r > 2) return tn_error(TN_ERR_VALUE, "%lld is not a valid value for reduction", (long long)r);
    return TN_OK;
}

/* Loss gradient grad_output × f(self, target) with norm = base / numel under 'mean'. */
static tn_status loss_backward(tn_ewb_op op, const char *kname, const tn_value *args, double base, const tn_value *param,
                               tn_value *rets) {
    tn_tensor *ins[3] = {args[0].u.t, args[1].u.t, args[2].u.t};
    int64_t r = args[3].u.i;
    TN_TRY(check_reduction(r));
    int64_t n = tn_tensor_numel(args[1].u.t);
    tn_value vn = tn_value_double(r == 1 ? base / (double)n : base);
    ewb_scalars sc = {param ? 2 : 1, {&vn, param}, {EWB_AS_GIVEN, EWB_AS_GIVEN}};
    tn_loop_ctx ctx = {0};
    TN_TRY(ewb_run(op, kname, 3, ins, &sc, &ctx, rets));
    /* upstream writes into grad_input = zeros_like(self): the computed dtype must cast to it
     * (a bool or integer self refuses instead of rounding the gradient away) */
    tn_dtype common = rets[0].u.t->dtype, want = args[1].u.t->dtype;
    if (!tn_dtype_can_cast(common, want)) {
        tn_tensor_release(rets[0].u.t);
        return tn_error(TN_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                        tn_dtype_infos[common].c10_name, tn_dtype_infos[want].c10_name);
    }
    tn_status st = tn_nnb_cast_result(&rets[0].u.t, want);
    if (st != TN_OK) tn_tensor_release(rets[0].u.t);
    return st;
}

/* aten::mse_loss_backward(grad_output, self, target, reduction) -> Tensor */
tn_status tn_op_mse_loss_backward(const tn_value *args, tn_value *rets) {
    return loss_backward(TN_EWB_mse, "mse_backward_cpu", args, 2.0, NULL, rets);
}

/* aten::smooth_l1_loss_backward(grad_output, self, target, reduction, beta) -> Tensor */
tn_status tn_op_smooth_l1_loss_backward(const tn_value *args, tn_value *rets) {
    return loss_backward(TN_EWB_smooth_l1, "smooth_l1_backward_cpu_out", args, 1.0, &args[4], rets);
}

/* aten::huber_loss_backward(grad_output, self, target, reduction, delta) -> Tensor */
tn_status tn_op_huber_loss_backward(const tn_value *args, tn_value *rets) {
    return loss_backward(TN_EWB_huber, "huber_backward_cpu_out", args, 1.0, &args[4], rets);
}

/* aten::binary_cross_entropy_backward(grad_output, self, target, weight?, reduction) -> Tensor:
 * grad·(x - t) / max((1 - x)·x, 1e-12), then times weight, then / numel under 'mean'
 * (three steps, each rounded, as upstream). */
tn_status tn_op_binary_cross_entropy_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *ins[3] = {args[0].u.t, args[1].u.t, args[2].u.t}, *w = tn_nn_opt_tensor(&args[3]);
    int64_t r = args[4].u.i;
    TN_TRY(check_reduction(r));
    tn_loop_ctx ctx = {0};
    tn_value v;
    TN_TRY(ewb_run(TN_EWB_bce, "binary_cross_entropy_backward", 3, ins, NULL, &ctx, &v));
    tn_tensor *g = v.u.t;
    if (w) {
        tn_value a[2] = {tn_value_tensor(g), tn_value_tensor(w)};
        tn_tensor *m = NULL;
        tn_status st = tn_nn_call1(TN_OP_mul_Tensor, a, &m);
        tn_tensor_release(g);
        if (st != TN_OK) return st;
        g = m;
    }
    if (r == 1) {
        tn_value a[2] = {tn_value_tensor(g), tn_value_int(tn_tensor_numel(args[1].u.t))};
        tn_tensor *d = NULL;
        tn_status st = tn_nn_call1(TN_OP_div_Scalar, a, &d);
        tn_tensor_release(g);
        if (st != TN_OK) return st;
        g = d;
    }
    tn_status st = tn_nnb_cast_result(&g, args[1].u.t->dtype);
    if (st != TN_OK) { tn_tensor_release(g); return st; }
    rets[0] = tn_value_tensor(g);
    return TN_OK;
}

/* aten::native_dropout_backward(grad_output, mask, scale) -> Tensor: grad * mask * scale, as
 * upstream's CPU kernel writes it (two products through the door, each promoting: an int
 * grad or a float64 mask gives a float result; any mask dtype). */
tn_status tn_op_native_dropout_backward(const tn_value *args, tn_value *rets) {
    tn_value a[2] = {args[0], args[1]};
    tn_tensor *gm = NULL, *r = NULL;
    TN_TRY(tn_dispatch_one(TN_OP_mul_Tensor, a, &gm));
    tn_value b[2] = {tn_value_tensor(gm), tn_value_double(args[2].u.d)};
    tn_status st = tn_dispatch_one(TN_OP_mul_Scalar, b, &r);
    tn_tensor_release(gm);
    TN_TRY(st);
    rets[0] = tn_value_tensor(r);
    return TN_OK;
}

/* aten::softshrink_backward(grad_output, self, lambd) -> Tensor */
tn_status tn_op_softshrink_backward(const tn_value *args, tn_value *rets) {
    ewb_scalars sc = {1, {&args[2]}, {EWB_AS_GIVEN}};
    return ewb2(TN_EWB_shrink, "shrink_backward_cpu", args, &sc, NULL, rets);
}
/* aten::hardshrink_backward(grad_out, self, lambd) -> Tensor */
tn_status tn_op_hardshrink_backward(const tn_value *args, tn_value *rets) {
    ewb_scalars sc = {1, {&args[2]}, {EWB_AS_GIVEN}};
    return ewb2(TN_EWB_shrink, "shrink_backward_cpu", args, &sc, NULL, rets);
}
/* aten::mish_backward(grad_output, self) -> Tensor: computed in the promoted dtype and
 * returned in self's, as upstream's kernel writes into an output made with self's options. */
tn_status tn_op_mish_backward(const tn_value *args, tn_value *rets) {
    tn_value r[1];
    TN_TRY(ewb2(TN_EWB_mish, "mish_backward_cpu", args, NULL, NULL, r));
    tn_tensor *out = NULL;
    tn_status st = tn_ew_to_dtype(r[0].u.t, args[1].u.t->dtype, &out);
    tn_tensor_release(r[0].u.t);
    TN_TRY(st);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
/* aten::log_sigmoid_backward(grad_output, self, buffer) -> Tensor: buffer = exp(-|self|)
 * from log_sigmoid_forward. Upstream's iterator (self, buffer, grad_output) promotes
 * nothing: one dtype for all, self's */
tn_status tn_op_log_sigmoid_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *ins[3] = {args[0].u.t, args[1].u.t, args[2].u.t};
    const tn_tensor *order[3] = {args[1].u.t, args[2].u.t, args[0].u.t};
    for (int k = 1; k < 3; k++)
        if (order[k]->dtype != order[0]->dtype)
            return tn_error(TN_ERR_RUNTIME, "Found dtype %s but expected %s", tn_nnb_dname(order[k]->dtype),
                            tn_nnb_dname(order[0]->dtype));
    tn_loop_ctx ctx = {0};
    return ewb_run(TN_EWB_log_sigmoid, "log_sigmoid_backward_cpu", 3, ins, NULL, &ctx, rets);
}

/* aten::logit_backward(grad_output, self, eps?) -> Tensor */
tn_status tn_op_logit_backward(const tn_value *args, tn_value *rets) {
    tn_loop_ctx ctx = {0};
    double eps = tn_nn_opt_double(&args[2], -1.0); /* upstream: eps.value_or(-1) */
    ctx.mode = eps >= 0;
    /* lo = eps and hi = 1 - eps are upstream's scalar_t values: rounded into the dtype
     * (bfloat16's hi for eps = 1e-5 is 1, so an input of 1 gets g * inf, not 0) */
    tn_value lo = tn_value_double(eps), hi = tn_value_double(1.0 - eps);
    ewb_scalars sc = {2, {&lo, &hi}, {EWB_ROUND, EWB_ROUND}};
    return ewb2(TN_EWB_logit, "logit_backward_cpu", args, &sc, &ctx, rets);
}
