/* nn_norm.c — normalisation ops: layer_norm / native_layer_norm, rms_norm /
 * _fused_rms_norm, group_norm / native_group_norm, batch_norm / native_batch_norm and the
 * _native_batch_norm_legit family. Shape and dtype logic here; loops in kernels/nn.h. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/nn.h"
#include "ops/composite_internal.h"
#include "ops/nn_backward_internal.h"
#include "ops/nn_internal.h"

/* Calls the f32 or f64 instance of a kernel; buffers are passed as void pointers. */
#define NN_KERNEL(acc, name, ...) \
    ((acc) == TN_DTYPE_FLOAT32 ? f32_##name##__scalar(__VA_ARGS__) : f64_##name##__scalar(__VA_ARGS__))

static bool is_reduced(tn_dtype d) { return d == TN_DTYPE_BFLOAT16 || d == TN_DTYPE_FLOAT16; }

/* Upstream's CPU mixed-type rule: a Half/BFloat16 input may take Float parameters (stats
 * are then Float); any other dtype mismatch is refused. Sets *param_dtype. */
static tn_status check_params(const tn_tensor *input, const tn_tensor *const *params, int n, tn_dtype *param_dtype) {
    bool mixed = false;
    for (int i = 0; i < n; i++)
        if (params[i] && params[i]->dtype != input->dtype && is_reduced(input->dtype) &&
            params[i]->dtype == TN_DTYPE_FLOAT32)
            mixed = true;
    for (int i = 0; i < n; i++) {
        if (!params[i]) continue;
        tn_dtype want = mixed ? TN_DTYPE_FLOAT32 : input->dtype;
        if (params[i]->dtype != want) {
            if (mixed) return tn_error(TN_ERR_RUNTIME, "mixed dtype (CPU): expect parameter to have scalar type of Float");
            return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[input->dtype].c10_name,
                            tn_dtype_infos[params[i]->dtype].c10_name);
        }
    }
    *param_dtype = mixed ? TN_DTYPE_FLOAT32 : input->dtype;
    return TN_OK;
}

static bool sizes_equal(const tn_tensor *t, const tn_value *shape) {
    if (t->ndim != shape->u.ilist.n) return false;
    for (int i = 0; i < t->ndim; i++)
        if (t->sizes[i] != shape->u.ilist.data[i]) return false;
    return true;
}

/* _check_layer_norm_inputs / _check_rms_norm_inputs: returns M (rows) and N (row length). */
static tn_status check_norm_inputs(const tn_tensor *input, const tn_value *shape, const tn_tensor *weight,
                                   const tn_tensor *bias, int64_t *M, int64_t *N) {
    char b1[256], b2[256];
    int nd = (int)shape->u.ilist.n;
    const int64_t *ns = shape->u.ilist.data;
    tn_format_sizes(nd, ns, b2, sizeof b2);
    if (nd < 1)
        return tn_error(TN_ERR_RUNTIME, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                                        "least one element, but got normalized_shape = %s", b2);
    if (weight && !sizes_equal(weight, shape))
        return tn_error(TN_ERR_RUNTIME, "Expected weight to be of same shape as normalized_shape, but got weight of "
                                        "shape %s and normalized_shape = %s", TN_NN_FMT(weight, b1), b2);
    if (bias && !sizes_equal(bias, shape))
        return tn_error(TN_ERR_RUNTIME, "Expected bias to be of same shape as normalized_shape, but got bias of "
                                        "shape %s and normalized_shape = %s", TN_NN_FMT(bias, b1), b2);
    bool ok = input->ndim >= nd;
    for (int i = 0; ok && i < nd; i++) ok = input->sizes[input->ndim - nd + i] == ns[i];
    if (!ok) {
        char star[256];
        int pos = snprintf(star, sizeof star, "[*");
        for (int i = 0; i < nd && pos < (int)sizeof star - 24; i++) pos += snprintf(star + pos, sizeof star - (size_t)pos, ", %lld", (long long)ns[i]);
        snprintf(star + pos, sizeof star - (size_t)pos, "]");
        return tn_error(TN_ERR_RUNTIME, "Given normalized_shape=%s, expected input with shape %s, but got input of size%s",
                        b2, star, TN_NN_FMT(input, b1));
    }
    *M = 1;
    *N = 1;
    for (int i = 0; i < input->ndim - nd; i++) *M *= input->sizes[i];
    for (int i = input->ndim - nd; i < input->ndim; i++) *N *= input->sizes[i];
    return TN_OK;
}

/* Stats shape of layer/rms norm: the leading dims, then 1 per normalised dim. */
static void stat_shape(const tn_tensor *input, int nd, int64_t *out) {
    for (int i = 0; i < input->ndim; i++) out[i] = i < input->ndim - nd ? input->sizes[i] : 1;
}

/* ---- layer norm ----------------------------------------------------------------------- */

static tn_status layer_norm_impl(const tn_value *args, tn_value *rets, bool stats) {
    tn_tensor *input = args[0].u.t, *weight = tn_nn_opt_tensor(&args[2]), *bias = tn_nn_opt_tensor(&args[3]);
    double eps = args[4].u.d;
    int64_t M, N;
    TN_TRY(tn_nn_check_float(input, "LayerNormKernelImpl"));
    TN_TRY(check_norm_inputs(input, &args[1], weight, bias, &M, &N));
    const tn_tensor *params[2] = {weight, bias};
    tn_dtype pdt;
    TN_TRY(check_params(input, params, 2, &pdt));
    tn_dtype acc = tn_nn_acc(input->dtype);
    int64_t ss[TN_MAX_DIMS];
    stat_shape(input, (int)args[1].u.ilist.n, ss);
    tn_tensor *y = NULL, *mean = NULL, *rstd = NULL;
    tn_nn_buf bx = {0}, bw = {0}, bb = {0}, by = {0}, bm = {0}, br = {0};
    tn_status st = tn_nn_empty(input->ndim, input->sizes, input->dtype, input, &y);
    if (st == TN_OK && stats) st = tn_nn_empty(input->ndim, ss, pdt, input, &mean);
    if (st == TN_OK && stats) st = tn_nn_empty(input->ndim, ss, pdt, input, &rstd);
    if (st != TN_OK || tn_tensor_is_meta(input)) goto done;
    if ((st = tn_nn_load(input, acc, &bx)) != TN_OK) goto done;
    if (weight && (st = tn_nn_load(weight, acc, &bw)) != TN_OK) goto done;
    if (bias && (st = tn_nn_load(bias, acc, &bb)) != TN_OK) goto done;
    if ((st = tn_nn_out_begin(y, acc, &by)) != TN_OK) goto done;
    if (stats && (st = tn_nn_out_begin(mean, acc, &bm)) != TN_OK) goto done;
    if (stats && (st = tn_nn_out_begin(rstd, acc, &br)) != TN_OK) goto done;
    if (acc == TN_DTYPE_FLOAT32)
        f32_layer_norm_rows(by.data, bm.data, br.data, bx.data, bw.data, bb.data, M, N, eps);
    else
        f64_layer_norm__scalar(by.data, bm.data, br.data, bx.data, bw.data, bb.data, M, N, eps);
    tn_nn_out_finish(y, acc, &by);
    if (stats) { tn_nn_out_finish(mean, acc, &bm); tn_nn_out_finish(rstd, acc, &br); }
done:
    tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&bb);
    tn_nn_buf_free(&by); tn_nn_buf_free(&bm); tn_nn_buf_free(&br);
    if (st != TN_OK) {
        if (y) tn_tensor_release(y);
        if (mean) tn_tensor_release(mean);
        if (rstd) tn_tensor_release(rstd);
        return st;
    }
    rets[0] = tn_value_tensor(y);
    if (stats) { rets[1] = tn_value_tensor(mean); rets[2] = tn_value_tensor(rstd); }
    return TN_OK;
}

/* aten::native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd) */
tn_status tn_op_native_layer_norm(const tn_value *args, tn_value *rets) { return layer_norm_impl(args, rets, true); }
/* aten::layer_norm(input, normalized_shape, weight?, bias?, eps, cudnn_enable) -> out */
tn_status tn_op_layer_norm(const tn_value *args, tn_value *rets) { return layer_norm_impl(args, rets, false); }

/* ---- rms norm ------------------------------------------------------------------------- */

/* A complex input: upstream's composite in complex arithmetic, x * rsqrt(mean(x^2) + eps)
 * (the square, not |x|^2; eps None is the real part type's machine epsilon), times the
 * weight; rstd is complex. */
static tn_status rms_norm_complex(tn_tensor *input, tn_tensor *weight, const tn_value *eps_arg, int nnorm,
                                  tn_value *rets, bool with_rstd) {
    double eps = tn_nn_opt_double(eps_arg, input->dtype == TN_DTYPE_COMPLEX64 ? (double)FLT_EPSILON : DBL_EPSILON);
    int64_t dims[TN_MAX_DIMS];
    for (int k = 0; k < nnorm; k++) dims[k] = input->ndim - nnorm + k;
    tn_cx c = {0};
    tn_tensor *sq = tn_cx_call(&c, TN_OP_mul_Tensor, TN_ARGS(TN_T(input), TN_T(input)));
    tn_tensor *ms = tn_cx_call(&c, TN_OP_mean_dim, TN_ARGS(TN_T(sq), tn_value_intlist(dims, nnorm), TN_B(true), TN_NONE));
    tn_tensor *r = tn_cx_call(&c, TN_OP_rsqrt, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_add_Scalar, TN_ARGS(TN_T(ms), TN_D(eps), TN_I(1))))));
    tn_tensor *y = tn_cx_call(&c, TN_OP_mul_Tensor, TN_ARGS(TN_T(input), TN_T(r)));
    if (weight) y = tn_cx_call(&c, TN_OP_mul_Tensor, TN_ARGS(TN_T(y), TN_T(weight)));
    if (c.st == TN_OK && with_rstd) { tn_tensor_retain(r); rets[1] = tn_value_tensor(r); }
    return tn_cx_finish(&c, y, rets);
}

static tn_status rms_norm_impl(const tn_value *args, tn_value *rets, bool with_rstd) {
    tn_tensor *input = args[0].u.t, *weight = tn_nn_opt_tensor(&args[2]);
    int64_t M, N;
    if (tn_dtype_is_complex(input->dtype) && (!weight || weight->dtype == input->dtype)) {
        TN_TRY(check_norm_inputs(input, &args[1], weight, NULL, &M, &N));
        return rms_norm_complex(input, weight, &args[3], (int)args[1].u.ilist.n, rets, with_rstd);
    }
    TN_TRY(tn_nn_check_float(input, "rms_norm"));
    TN_TRY(check_norm_inputs(input, &args[1], weight, NULL, &M, &N));
    if (weight && !tn_nn_is_float(weight->dtype)) return tn_nn_check_float(weight, "rms_norm");
    tn_dtype acc = tn_nn_acc(input->dtype);
    /* eps None: the machine epsilon of the opmath type (float or double). */
    double eps = tn_nn_opt_double(&args[3], acc == TN_DTYPE_FLOAT32 ? (double)FLT_EPSILON : DBL_EPSILON);
    int64_t ss[TN_MAX_DIMS];
    stat_shape(input, (int)args[1].u.ilist.n, ss);
    tn_tensor *y = NULL, *rstd = NULL;
    tn_nn_buf bx = {0}, bw = {0}, by = {0}, br = {0};
    tn_status st = tn_nn_empty(input->ndim, input->sizes, input->dtype, input, &y);
    if (st == TN_OK) st = tn_nn_empty(input->ndim, ss, acc, input, &rstd);
    if (st != TN_OK || tn_tensor_is_meta(input)) goto done;
    if ((st = tn_nn_load(input, acc, &bx)) != TN_OK) goto done;
    if (weight && (st = tn_nn_load(weight, acc, &bw)) != TN_OK) goto done;
    if ((st = tn_nn_out_begin(y, acc, &by)) != TN_OK) goto done;
    if ((st = tn_nn_out_begin(rstd, acc, &br)) != TN_OK) goto done;
    if (acc == TN_DTYPE_FLOAT32)
        f32_rms_norm_rows(by.data, br.data, bx.data, bw.data, M, N, eps);
    else
        f64_rms_norm__scalar(by.data, br.data, bx.data, bw.data, M, N, eps);
    tn_nn_out_finish(y, acc, &by);
done:
    tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&by); tn_nn_buf_free(&br);
    if (st != TN_OK) {
        if (y) tn_tensor_release(y);
        if (rstd) tn_tensor_release(rstd);
        return st;
    }
    rets[0] = tn_value_tensor(y);
    if (with_rstd) rets[1] = tn_value_tensor(rstd);
    else tn_tensor_release(rstd);
    return TN_OK;
}

/* aten::_fused_rms_norm(input, normalized_shape, weight?, eps?) -> (out, rstd): on CPU
 * upstream's composite (upcast, mean of squares, rsqrt, scale, cast back). */
tn_status tn_op__fused_rms_norm(const tn_value *args, tn_value *rets) { return rms_norm_impl(args, rets, true); }
/* aten::rms_norm(input, normalized_shape, weight?, eps?) -> out (reaches _fused_rms_norm on CPU). */
tn_status tn_op_rms_norm(const tn_value *args, tn_value *rets) { return rms_norm_impl(args, rets, false); }

/* ---- group norm ----------------------------------------------------------------------- */

static tn_status group_norm_run(tn_tensor *input, tn_tensor *weight, tn_tensor *bias, int64_t N, int64_t C,
                                int64_t HxW, int64_t G, double eps, tn_tensor **yo, tn_tensor **mo, tn_tensor **ro) {
    const tn_tensor *params[2] = {weight, bias};
    tn_dtype pdt;
    TN_TRY(tn_nn_check_float(input, "GroupNormKernelImpl"));
    TN_TRY(check_params(input, params, 2, &pdt));
    tn_dtype acc = tn_nn_acc(input->dtype);
    int64_t ss[2] = {N, G};
    tn_tensor *y = NULL, *mean = NULL, *rstd = NULL;
    tn_nn_buf bx = {0}, bw = {0}, bb = {0}, by = {0}, bm = {0}, br = {0};
    tn_status st = tn_nn_empty(input->ndim, input->sizes, input->dtype, input, &y);
    if (st == TN_OK) st = tn_nn_empty(2, ss, pdt, input, &mean);
    if (st == TN_OK) st = tn_nn_empty(2, ss, pdt, input, &rstd);
    if (st != TN_OK || tn_tensor_is_meta(input)) goto done;
    if ((st = tn_nn_load(input, acc, &bx)) != TN_OK) goto done;
    if (weight && (st = tn_nn_load(weight, acc, &bw)) != TN_OK) goto done;
    if (bias && (st = tn_nn_load(bias, acc, &bb)) != TN_OK) goto done;
    if ((st = tn_nn_out_begin(y, acc, &by)) != TN_OK) goto done;
    if ((st = tn_nn_out_begin(mean, acc, &bm)) != TN_OK) goto done;
    if ((st = tn_nn_out_begin(rstd, acc, &br)) != TN_OK) goto done;
    if (acc == TN_DTYPE_FLOAT32)
        f32_group_norm_rows(by.data, bm.data, br.data, bx.data, bw.data, bb.data, N, C, HxW, G, eps);
    else
        f64_group_norm__scalar(by.data, bm.data, br.data, bx.data, bw.data, bb.data, N, C, HxW, G, eps);
    tn_nn_out_finish(y, acc, &by);
    tn_nn_out_finish(mean, acc, &bm);
    tn_nn_out_finish(rstd, acc, &br);
done:
    tn_nn_buf_free(&bx); tn_nn_buf_free(&bw); tn_nn_buf_free(&bb);
    tn_nn_buf_free(&by); tn_nn_buf_free(&bm); tn_nn_buf_free(&br);
    if (st != TN_OK) {
        if (y) tn_tensor_release(y);
        if (mean) tn_tensor_release(mean);
        if (rstd) tn_tensor_release(rstd);
        return st;
    }
    *yo = y;
    if (mo) *mo = mean; else tn_tensor_release(mean);
    if (ro) *ro = rstd; else tn_tensor_release(rstd);
    return TN_OK;
}

/* aten::native_group_norm(input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean, rstd) */
tn_status tn_op_native_group_norm(const tn_value *args, tn_value *rets) {
    tn_tensor *input = args[0].u.t, *weight = tn_nn_opt_tensor(&args[1]), *bias = tn_nn_opt_tensor(&args[2]);
    int64_t N = args[3].u.i, C = args[4].u.i, HxW = args[5].u.i, G = args[6].u.i;
    char b1[256], b2[256];
    if (G <= 0 || C % G != 0)
        return tn_error(TN_ERR_RUNTIME, "Expected number of channels in input to be divisible by num_groups, but got "
                                        "input of shape %s and num_groups=%lld", TN_NN_FMT(input, b1), (long long)G);
    if (tn_mul_wrap(tn_mul_wrap(N, C), HxW) != tn_tensor_numel(input))
        return tn_error(TN_ERR_RUNTIME, "Expected the input of %s to have N * C * HxW = %lld elements",
                        TN_NN_FMT(input, b1), (long long)tn_mul_wrap(tn_mul_wrap(N, C), HxW));
    if (weight && (weight->ndim != 1 || weight->sizes[0] != C))
        return tn_error(TN_ERR_RUNTIME, "Expected weight to be a vector of size equal to the number of channels in "
                                        "input, but got weight of shape %s and input of shape %s",
                        TN_NN_FMT(weight, b1), TN_NN_FMT(input, b2));
    if (bias && (bias->ndim != 1 || bias->sizes[0] != C))
        return tn_error(TN_ERR_RUNTIME, "Expected bias to be a vector of size equal to the number of channels in "
                                        "input, but got bias of shape %s and input of shape %s",
                        TN_NN_FMT(bias, b1), TN_NN_FMT(input, b2));
    tn_tensor *y, *m, *r;
    TN_TRY(group_norm_run(input, weight, bias, N, C, HxW, G, args[7].u.d, &y, &m, &r));
    rets[0] = tn_value_tensor(y);
    rets[1] = tn_value_tensor(m);
    rets[2] = tn_value_tensor(r);
    return TN_OK;
}

/* aten::group_norm(input, num_groups, weight?, bias?, eps, cudnn_enabled) -> out */
tn_status tn_op_group_norm(const tn_value *args, tn_value *rets) {
    tn_tensor *input = args[0].u.t, *weight = tn_nn_opt_tensor(&args[2]), *bias = tn_nn_opt_tensor(&args[3]);
    int64_t G = args[1].u.i;
    char b1[256], b2[256];
    if (input->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "Expected at least 2 dimensions for input tensor but received %d", input->ndim);
    int64_t N = input->sizes[0], C = input->sizes[1], HxW = 1;
    for (int i = 2; i < input->ndim; i++) HxW *= input->sizes[i];
    if (G <= 0 || C % G != 0)
        return tn_error(TN_ERR_RUNTIME, "Expected number of channels in input to be divisible by num_groups, but got "
                                        "input of shape %s and num_groups=%lld", TN_NN_FMT(input, b1), (long long)G);
    if (weight && (weight->ndim != 1 || weight->sizes[0] != C))
        return tn_error(TN_ERR_RUNTIME, "Expected weight to be a vector of size equal to the number of channels in "
                                        "input, but got weight of shape %s and input of shape %s",
                        TN_NN_FMT(weight, b1), TN_NN_FMT(input, b2));
    if (bias && (bias->ndim != 1 || bias->sizes[0] != C))
        return tn_error(TN_ERR_RUNTIME, "Expected bias to be a vector of size equal to the number of channels in "
                                        "input, but got bias of shape %s and input of shape %s",
                        TN_NN_FMT(bias, b1), TN_NN_FMT(input, b2));
    tn_tensor *y;
    TN_TRY(group_norm_run(input, weight, bias, N, C, HxW, G, args[4].u.d, &y, NULL, NULL));
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* ---- batch norm ----------------------------------------------------------------------- */

/* Writes acc values into a (possibly strided) float tensor, element by element: used for
 * the in-place running-stat update, which must keep the caller's tensor. */
static void store_into(tn_tensor *t, const double *vals) {
    int64_t n = tn_tensor_numel(t);
    char *base = tn_tensor_data(t);
    int isz = tn_dtype_itemsize(t->dtype);
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0, r = i;
        for (int d = t->ndim - 1; d >= 0; d--) { off += (r % t->sizes[d]) * t->strides[d]; r /= t->sizes[d]; }
        char *p = base + off * isz;
        switch (t->dtype) {
        case TN_DTYPE_FLOAT32: { float f = (float)vals[i]; memcpy(p, &f, 4); break; }
        case TN_DTYPE_FLOAT64: memcpy(p, &vals[i], 8); break;
        case TN_DTYPE_FLOAT16: { tn_half h = tn_f32_to_half((float)vals[i]); memcpy(p, &h, 2); break; }
        case TN_DTYPE_BFLOAT16: { tn_bfloat16 h = tn_f32_to_bf16((float)vals[i]); memcpy(p, &h, 2); break; }
        default: break;
        }
    }
}

/* The CPU batch norm: training uses batch statistics (and updates running stats in place
 * with momentum and the unbiased variance); eval uses the running statistics and returns
 * empty save_mean / save_invstd. The running statistics are written without advancing
 * their version counters: upstream 2.13 advances them for none of the overloads
 * (measured: running_mean._version unchanged after native_batch_norm,
 * _native_batch_norm_legit, torch.batch_norm and F.batch_norm in training), and autograd
 * depends on it: the backward saves the running stats, so two training forwards through
 * one BatchNorm before one backward (TTT's two heads, SAM's two passes) would otherwise be
 * refused as modified in place. */
/* The batch statistics (channels) and the affine apply (images) split over the pool; each
 * channel's sums and each element's value are the serial kernel's. */
typedef struct bn_fwd_job {
    tn_dtype acc;
    void *y, *mean, *var;
    const void *x, *alpha, *beta;
    int64_t N, C, S;
} bn_fwd_job;

static void bn_stats_chunk(void *vj, int64_t c0, int64_t c1) {
    const bn_fwd_job *j = vj;
    NN_KERNEL_VEC(j->acc, batch_stats, j->mean, j->var, j->x, j->N, j->C, j->S, c0, c1);
}

static void bn_affine_chunk(void *vj, int64_t n0, int64_t n1) {
    const bn_fwd_job *j = vj;
    size_t off = (size_t)(n0 * j->C * j->S) * (size_t)tn_dtype_itemsize(j->acc);
    NN_KERNEL_VEC(j->acc, channel_affine, (void *)((char *)j->y + off), (const void *)((const char *)j->x + off), j->alpha,
                  j->beta, n1 - n0, j->C, j->S);
}

/* 1 / sqrt(var + eps); upstream's batch statistics give a zero variance with eps = 0 an
 * invstd of 0 (its InvStd), so a constant channel normalises to 0, not 0 * inf = NaN. */
static double bn_invstd(bool batch_stats, double var, double eps) {
    return batch_stats && var == 0 && eps == 0 ? 0.0 : 1.0 / sqrt(var + eps);
}

static tn_status batch_norm_run(tn_tensor *input, tn_tensor *weight, tn_tensor *bias, tn_tensor *rmean,
                                tn_tensor *rvar, bool training, double momentum, double eps, tn_value *rets) {
    char b1[256];
    TN_TRY(tn_nn_check_float(input, "batch_norm"));
    if (input->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "Expected input to have at least 2 dimensions, but got input of size %s",
                        TN_NN_FMT(input, b1));
    if (!rmean != !rvar) /* upstream's TORCH_CHECK_VALUE in batch_norm_cpu_out */
        return tn_error(TN_ERR_VALUE, "running_mean and running_var must either both be None or neither be None");
    if (!training && (!rmean || !rvar))
        return tn_error(TN_ERR_RUNTIME, "running_mean and running_var must be defined in evaluation mode");
    int64_t N = input->sizes[0], C = input->sizes[1], S = 1;
    for (int i = 2; i < input->ndim; i++) S *= input->sizes[i];
    const tn_tensor *params[4] = {weight, bias, rmean, rvar};
    tn_dtype pdt;
    TN_TRY(check_params(input, params, 4, &pdt));
    /* upstream reads the running statistics through 1-d accessors (weight and bias by count) */
    for (int i = 2; i < 4; i++)
        if (params[i] && params[i]->ndim != 1)
            return tn_error(TN_ERR_RUNTIME, "TensorAccessor expected 1 dims but tensor has %d", params[i]->ndim);
    tn_tensor *ps[4] = {weight, bias, rmean, rvar};
    const char *names[4] = {"weight", "bias", "running_mean", "running_var"};
    for (int i = 0; i < 4; i++)
        if (ps[i] && tn_tensor_numel(ps[i]) != C)
            return tn_error(TN_ERR_RUNTIME, "%s should contain %lld elements not %lld", names[i], (long long)C,
                            (long long)tn_tensor_numel(ps[i]));
    if (training && tn_tensor_numel(input) == 0) /* upstream's batch statistics need an element */
        return tn_error(TN_ERR_RUNTIME, "input tensor must have at least one element, but got input_sizes = %s",
                        TN_NN_FMT(input, b1));
    tn_dtype acc = tn_nn_acc(input->dtype);
    int64_t cs = training ? C : 0;
    tn_tensor *y = NULL, *sm = NULL, *si = NULL;
    tn_nn_buf bx = {0}, by = {0};
    double *work = NULL;
    void *alpha = NULL, *beta = NULL, *mean = NULL, *var = NULL;
    tn_status st = tn_nn_empty(input->ndim, input->sizes, input->dtype, input, &y);
    if (st == TN_OK) st = tn_nn_empty(1, &cs, pdt, input, &sm);
    if (st == TN_OK) st = tn_nn_empty(1, &cs, pdt, input, &si);
    if (st != TN_OK || tn_tensor_is_meta(input)) goto done;
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    work = malloc((size_t)(C > 0 ? C : 1) * 8 * 2);
    alpha = malloc((size_t)(C > 0 ? C : 1) * isz * 4);
    if (!work || !alpha) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory in batch_norm"); goto done; }
    beta = (char *)alpha + (size_t)C * isz;
    mean = (char *)alpha + 2 * (size_t)C * isz;
    var = (char *)alpha + 3 * (size_t)C * isz;
    if ((st = tn_nn_load(input, acc, &bx)) != TN_OK) goto done;
#define AT(p, c) (acc == TN_DTYPE_FLOAT32 ? (double)((float *)(p))[c] : ((double *)(p))[c])
#define PUT(p, c, v) (acc == TN_DTYPE_FLOAT32 ? (void)(((float *)(p))[c] = (float)(v)) : (void)(((double *)(p))[c] = (v)))
    if (training) {
        bn_fwd_job j = {.acc = acc, .mean = mean, .var = var, .x = bx.data, .N = N, .C = C, .S = S};
        tn_parallel_for(C, TN_NNB_GRAIN / (N * S > 0 ? N * S : 1) + 1, bn_stats_chunk, &j);
    } else {
        for (int64_t c = 0; c < C; c++) {
            PUT(mean, c, tn_nn_read(rmean, c));
            PUT(var, c, tn_nn_read(rvar, c));
        }
    }
    /* Upstream keeps the batch statistics of a BFloat16 / Half input with parameters of the
     * same type in tensors of that type (batch_norm_cpu_update_stats_template): the mean is
     * rounded to it, the sum of squares is taken around the rounded mean and rounded, and
     * the variance, the unbiased variance and invstd are divided and rounded in it (c10's
     * BFloat16 / int64 arithmetic rounds the count too). */
    bool reduced = training && (input->dtype == TN_DTYPE_BFLOAT16 || input->dtype == TN_DTYPE_FLOAT16) &&
                   pdt == input->dtype;
    double cnt_all = (double)N * (double)S;
    for (int64_t c = 0; c < C; c++) {
        work[C + c] = AT(var, c); /* the biased variance, kept for the running update */
        double invstd = bn_invstd(training, AT(var, c), eps);
        if (reduced) {
            double m = AT(mean, c), mr = tn_round_to_dtype(input->dtype, m);
            double vsum = tn_round_to_dtype(input->dtype, cnt_all * AT(var, c) + cnt_all * (m - mr) * (m - mr));
            double v = tn_round_to_dtype(input->dtype, vsum / tn_round_to_dtype(input->dtype, cnt_all));
            invstd = tn_round_to_dtype(input->dtype, (float)bn_invstd(true, v, eps));
            PUT(mean, c, mr);
            /* the running update's unbiased variance, rounded as upstream divides it */
            work[C + c] = cnt_all > 1 ? tn_round_to_dtype(input->dtype, vsum / tn_round_to_dtype(input->dtype, cnt_all - 1)) * (cnt_all - 1) / cnt_all
                                      : vsum;
        }
        PUT(var, c, invstd); /* var now holds invstd */
        double w = weight ? tn_nn_read(weight, c) : 1.0, b = bias ? tn_nn_read(bias, c) : 0.0;
        /* y = x * alpha + beta with alpha = invstd * w, beta = b - mean * alpha (upstream). */
        double a = AT(var, c) * w;
        PUT(alpha, c, a);
        PUT(beta, c, b - AT(mean, c) * AT(alpha, c));
    }
    if ((st = tn_nn_out_begin(y, acc, &by)) != TN_OK) goto done;
    bn_fwd_job ja = {.acc = acc, .y = by.data, .x = bx.data, .alpha = alpha, .beta = beta, .N = N, .C = C, .S = S};
    tn_parallel_for(N, TN_NNB_GRAIN / (C * S > 0 ? C * S : 1) + 1, bn_affine_chunk, &ja);
    tn_nn_out_finish(y, acc, &by);
    if (training) {
        double cnt = (double)N * (double)S;
        for (int64_t c = 0; c < C; c++) work[c] = AT(mean, c);
        store_into(sm, work);
        for (int64_t c = 0; c < C; c++) work[c] = AT(var, c);
        store_into(si, work);
        if (rmean) {
            for (int64_t c = 0; c < C; c++)
                work[c] = momentum * AT(mean, c) + (1 - momentum) * tn_nn_read(rmean, c);
            store_into(rmean, work);
        }
        if (rvar) {
            for (int64_t c = 0; c < C; c++) {
                double bv = work[C + c];
                double unb = cnt > 1 ? bv * cnt / (cnt - 1) : INFINITY;
                work[c] = momentum * unb + (1 - momentum) * tn_nn_read(rvar, c);
            }
            store_into(rvar, work);
        }
    }
#undef AT
#undef PUT
done:
    free(work);
    free(alpha);
    tn_nn_buf_free(&bx);
    tn_nn_buf_free(&by);
    if (st != TN_OK) {
        if (y) tn_tensor_release(y);
        if (sm) tn_tensor_release(sm);
        if (si) tn_tensor_release(si);
        return st;
    }
    rets[0] = tn_value_tensor(y);
    rets[1] = tn_value_tensor(sm);
    rets[2] = tn_value_tensor(si);
    return TN_OK;
}

/* aten::native_batch_norm(input, weight?, bias?, running_mean?, running_var?, training,
 * momentum, eps) -> (out, save_mean, save_invstd) */
tn_status tn_op_native_batch_norm(const tn_value *args, tn_value *rets) {
    return batch_norm_run(args[0].u.t, tn_nn_opt_tensor(&args[1]), tn_nn_opt_tensor(&args[2]),
                          tn_nn_opt_tensor(&args[3]), tn_nn_opt_tensor(&args[4]), args[5].u.b, args[6].u.d,
                          args[7].u.d, rets);
}

/* aten::_native_batch_norm_legit(input, weight?, bias?, running_mean!, running_var!,
 * training, momentum, eps) */
tn_status tn_op__native_batch_norm_legit(const tn_value *args, tn_value *rets) {
    return batch_norm_run(args[0].u.t, tn_nn_opt_tensor(&args[1]), tn_nn_opt_tensor(&args[2]),
                          tn_nn_opt_tensor(&args[3]), tn_nn_opt_tensor(&args[4]), args[5].u.b, args[6].u.d,
                          args[7].u.d, rets);
}

/* aten::_native_batch_norm_legit.no_stats(input, weight?, bias?, training, momentum, eps) */
tn_status tn_op__native_batch_norm_legit_no_stats(const tn_value *args, tn_value *rets) {
    return batch_norm_run(args[0].u.t, tn_nn_opt_tensor(&args[1]), tn_nn_opt_tensor(&args[2]), NULL, NULL,
                          args[3].u.b, args[4].u.d, args[5].u.d, rets);
}

/* aten::_native_batch_norm_legit_no_training(input, weight?, bias?, running_mean,
 * running_var, momentum, eps) */
tn_status tn_op__native_batch_norm_legit_no_training(const tn_value *args, tn_value *rets) {
    return batch_norm_run(args[0].u.t, tn_nn_opt_tensor(&args[1]), tn_nn_opt_tensor(&args[2]), args[3].u.t,
                          args[4].u.t, false, args[5].u.d, args[6].u.d, rets);
}

/* aten::batch_norm(input, weight?, bias?, running_mean?, running_var?, training, momentum,
 * eps, cudnn_enabled) -> out */
tn_status tn_op_batch_norm(const tn_value *args, tn_value *rets) {
    tn_value r[3];
    if (tn_tensor_numel(args[0].u.t) == 0 && !tn_tensor_is_meta(args[0].u.t)) {
        /* upstream's _batch_norm_impl_index: an empty input gives a copy of it, times
         * weight[0] and plus bias[0] when given, whatever its rank */
        tn_value cl[2] = {args[0], {.tag = TN_V_NONE}};
        TN_TRY(tn_dispatch(TN_OP_clone, cl, rets));
        for (int k = 1; k <= 2; k++) {
            tn_tensor *p = tn_nn_opt_tensor(&args[k]);
            if (!p) continue;
            tn_value sel[3] = {tn_value_tensor(p), tn_value_int(0), tn_value_int(0)}, e, o;
            tn_status st = tn_dispatch(TN_OP_select_int, sel, &e);
            if (st == TN_OK) {
                tn_value bin[3] = {rets[0], e, tn_value_int(1)};
                st = tn_dispatch(k == 1 ? TN_OP_mul_Tensor : TN_OP_add_Tensor, bin, &o);
                tn_value_release(&e);
            }
            tn_value_release(&rets[0]);
            if (st != TN_OK) return st;
            rets[0] = o;
        }
        return TN_OK;
    }
    /* _batch_norm_impl_index names a missing statistic in evaluation mode before the
     * native kernel's both-or-neither ValueError */
    for (int k = 3; k <= 4 && !args[5].u.b; k++)
        if (!tn_nn_opt_tensor(&args[k]))
            return tn_error(TN_ERR_RUNTIME, "%s must be defined in evaluation mode", k == 3 ? "running_mean" : "running_var");
    TN_TRY(batch_norm_run(args[0].u.t, tn_nn_opt_tensor(&args[1]), tn_nn_opt_tensor(&args[2]),
                          tn_nn_opt_tensor(&args[3]), tn_nn_opt_tensor(&args[4]), args[5].u.b, args[6].u.d,
                          args[7].u.d, r));
    rets[0] = r[0];
    tn_tensor_release(r[1].u.t);
    tn_tensor_release(r[2].u.t);
    return TN_OK;
}
