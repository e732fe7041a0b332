/* nn_pool.c — 2-d pooling (max with indices, average, adaptive average), reflection and
 * replication padding (1-d, 2-d) and nearest / bilinear 2-d upsampling. All work on
 * planes: [N, C, H, W] or unbatched [C, H, W] inputs, computed in the opmath dtype. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/nn.h"
#include "ops/composite_internal.h"
#include "ops/nn_internal.h"

#define NN_KERNEL(acc, name, ...) \
    ((acc) == TN_DTYPE_FLOAT32 ? f32_##name##__scalar(__VA_ARGS__) : f64_##name##__scalar(__VA_ARGS__))
/* The kernels upstream also runs on integer dtypes (widened to int64 by the op layer). */
#define NN_KERNEL_ANY(acc, name, ...)                                                         \
    ((acc) == TN_DTYPE_INT64 ? i64_##name##__scalar(__VA_ARGS__) : NN_KERNEL(acc, name, __VA_ARGS__))
/* The same for a kernel with a vector float32 instance (kernels/nn_vec.h). */
#define NN_KERNEL_ANY_VEC(acc, name, ...)                                                     \
    ((acc) == TN_DTYPE_INT64 ? i64_##name##__scalar(__VA_ARGS__) : NN_KERNEL_VEC(acc, name, __VA_ARGS__))

typedef struct plane_geom {
    int64_t P, H, W; /* planes and plane size */
    int nd;          /* 3 or 4 */
    int64_t lead[2]; /* leading sizes */
} plane_geom;

static tn_status planes_of(const tn_tensor *x, plane_geom *g, const char *what) {
    if (x->ndim != 3 && x->ndim != 4) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "%s: Expected 3D or 4D (batch mode) tensor for input, but got: %s", what, TN_NN_FMT(x, b));
    }
    g->nd = x->ndim;
    g->H = x->sizes[x->ndim - 2];
    g->W = x->sizes[x->ndim - 1];
    g->P = 1;
    for (int i = 0; i < x->ndim - 2; i++) { g->lead[i] = x->sizes[i]; g->P *= x->sizes[i]; }
    return TN_OK;
}

/* max_pool2d / avg_pool2d: only the batch dim of a 4-d input may be 0 (upstream's
 * pool2d_shape_check, after the padding checks, before the output size's) */
static tn_status pool2d_nonempty(const tn_tensor *x) {
    for (int i = 1; i < x->ndim; i++)
        if (x->sizes[i] == 0 || (x->ndim == 3 && x->sizes[0] == 0)) {
            char b[256];
            return tn_error(TN_ERR_RUNTIME, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                                            "input, but got:%s", TN_NN_FMT(x, b));
        }
    return TN_OK;
}

/* Allocates the [.., oh, ow] output and runs a plane kernel through `run`. */
typedef void (*plane_fn)(tn_dtype acc, void *y, const void *x, const plane_geom *g, int64_t oh, int64_t ow, void *ctx);

static tn_status plane_op_in(tn_dtype acc, tn_tensor *x, const plane_geom *g, int64_t oh, int64_t ow, plane_fn fn,
                             void *ctx, tn_tensor **out) {
    int64_t sz[4];
    for (int i = 0; i < g->nd - 2; i++) sz[i] = g->lead[i];
    sz[g->nd - 2] = oh;
    sz[g->nd - 1] = ow;
    tn_tensor *y;
    TN_TRY(tn_nn_empty(g->nd, sz, x->dtype, x, &y));
    if (tn_tensor_is_meta(x) || tn_tensor_numel(y) == 0) { *out = y; return TN_OK; }
    tn_nn_buf bx, by;
    tn_status st = tn_nn_load(x, acc, &bx);
    if (st == TN_OK) st = tn_nn_out_begin(y, acc, &by);
    if (st != TN_OK) { tn_nn_buf_free(&bx); tn_tensor_release(y); return st; }
    fn(acc, by.data, bx.data, g, oh, ow, ctx);
    tn_nn_out_finish(y, acc, &by);
    tn_nn_buf_free(&bx);
    *out = y;
    return TN_OK;
}
/* ... in the op's own compute type (integers in int64) */
static tn_status plane_op(tn_tensor *x, const plane_geom *g, int64_t oh, int64_t ow, plane_fn fn, void *ctx,
                          tn_tensor **out) {
    return plane_op_in(tn_nn_acc_any(x->dtype), x, g, oh, ow, fn, ctx, out);
}

/* ---- max / avg pooling ------------------------------------------------------------------ */

typedef struct pool_args {
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    bool ceil_mode, count_include_pad;
    int64_t divisor;
    int64_t *idx; /* max pool indices (contiguous int64) */
} pool_args;

static tn_status read_pool_args(const tn_value *args, pool_args *a, bool has_dilation) {
    int64_t k[2], s[2], p[2], d[2] = {1, 1};
    if (!tn_nn_int_list(&args[1], 2, k))
        return tn_error(TN_ERR_RUNTIME, "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
    /* an omitted stride may arrive as [] or as None (torch._C._nn.avg_pool2d(stride=None)) */
    if (args[2].tag == TN_V_NONE || (args[2].tag == TN_V_INTLIST && args[2].u.ilist.n == 0)) { s[0] = k[0]; s[1] = k[1]; }
    else if (!tn_nn_int_list(&args[2], 2, s))
        return tn_error(TN_ERR_RUNTIME, "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
    if (!tn_nn_int_list(&args[3], 2, p))
        return tn_error(TN_ERR_RUNTIME, "max_pool2d: padding must either be a single int, or a tuple of two ints");
    if (has_dilation && !tn_nn_int_list(&args[4], 2, d))
        return tn_error(TN_ERR_RUNTIME, "max_pool2d: dilation must be either a single int, or a tuple of two ints");
    *a = (pool_args){k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], false, true, 0, NULL};
    /* upstream narrows each to int first (safe_downcast), before any other check */
    const int64_t all[8] = {k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1]};
    for (int i = 0; i < 8; i++)
        if (all[i] > INT32_MAX || all[i] < INT32_MIN)
            return tn_error(TN_ERR_RUNTIME, "value cannot be converted to type int without overflow");
    if (k[0] <= 0 || k[1] <= 0)
        return tn_error(TN_ERR_RUNTIME, "kernel size should be greater than zero, but got kH: %lld kW: %lld",
                        (long long)k[0], (long long)k[1]);
    if (s[0] <= 0 || s[1] <= 0)
        return tn_error(TN_ERR_RUNTIME, "stride should be greater than zero, but got dH: %lld dW: %lld",
                        (long long)s[0], (long long)s[1]);
    if (d[0] <= 0 || d[1] <= 0)
        return tn_error(TN_ERR_RUNTIME, "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                        (long long)d[0], (long long)d[1]);
    return TN_OK;
}

static tn_status pool_out_sizes(const tn_tensor *x, const plane_geom *g, const pool_args *a, int64_t *oh, int64_t *ow) {
    *oh = tn_nn_pool_out(g->H, a->kh, a->ph, a->sh, a->dh, a->ceil_mode);
    *ow = tn_nn_pool_out(g->W, a->kw, a->pw, a->sw, a->dw, a->ceil_mode);
    int64_t C = x->sizes[x->ndim - 3];
    if (*oh < 1 || *ow < 1)
        return tn_error(TN_ERR_RUNTIME, "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). "
                                        "Output size is too small", (long long)C, (long long)g->H, (long long)g->W,
                        (long long)C, (long long)*oh, (long long)*ow);
    return TN_OK;
}

/* Planes are independent: max pooling runs over ranges of them on the pool. */
typedef struct max_job {
    tn_dtype acc;
    size_t isz;
    char *y;
    const char *x;
    const plane_geom *g;
    int64_t oh, ow;
    const pool_args *a;
} max_job;

static void max_planes(void *vj, int64_t p0, int64_t p1) {
    const max_job *j = vj;
    const pool_args *a = j->a;
    const plane_geom *g = j->g;
    int64_t out = j->oh * j->ow;
    NN_KERNEL_ANY_VEC(j->acc, max_pool2d, (void *)(j->y + (size_t)(p0 * out) * j->isz), a->idx ? a->idx + p0 * out : NULL,
              (const void *)(j->x + (size_t)(p0 * g->H * g->W) * j->isz), p1 - p0, g->H, g->W, j->oh, j->ow, a->kh,
              a->kw, a->sh, a->sw, a->ph, a->pw, a->dh, a->dw);
}

static void run_max(tn_dtype acc, void *y, const void *x, const plane_geom *g, int64_t oh, int64_t ow, void *ctx) {
    max_job j = {acc, (size_t)tn_dtype_itemsize(acc), y, x, g, oh, ow, ctx};
    int64_t per = oh * ow * ((pool_args *)ctx)->kh * ((pool_args *)ctx)->kw;
    tn_parallel_for(g->P, per > 0 && per < 16384 ? 16384 / per : 1, max_planes, &j);
}

static tn_status max_pool_impl(const tn_value *args, tn_value *rets, bool with_indices) {
    tn_tensor *x = args[0].u.t;
    pool_args a;
    plane_geom g;
    TN_TRY(read_pool_args(args, &a, true));
    a.ceil_mode = args[5].u.b;
    if (x->ndim != 3 && x->ndim != 4) return tn_error(TN_ERR_RUNTIME, "non-empty 3D or 4D (batch mode) tensor expected for input");
    TN_TRY(planes_of(x, &g, "max_pool2d"));
    if (a.ph > ((a.kh - 1) * a.dh + 1) / 2 || a.pw > ((a.kw - 1) * a.dw + 1) / 2)
        return tn_error(TN_ERR_RUNTIME, "pad should be at most half of effective kernel size, but got pad=%lld, "
                                        "kernel_size=%lld and dilation=%lld",
                        (long long)(a.ph > ((a.kh - 1) * a.dh + 1) / 2 ? a.ph : a.pw),
                        (long long)(a.ph > ((a.kh - 1) * a.dh + 1) / 2 ? a.kh : a.kw),
                        (long long)(a.ph > ((a.kh - 1) * a.dh + 1) / 2 ? a.dh : a.dw));
    TN_TRY(pool2d_nonempty(x));
    TN_TRY(tn_nn_check_float_or_int(x, "max_pool2d", false));
    int64_t oh, ow;
    TN_TRY(pool_out_sizes(x, &g, &a, &oh, &ow));
    int64_t sz[4];
    for (int i = 0; i < g.nd - 2; i++) sz[i] = g.lead[i];
    sz[g.nd - 2] = oh;
    sz[g.nd - 1] = ow;
    /* indices only when asked for (the values-only kernels skip finding them) */
    tn_tensor *idx = NULL;
    if (with_indices) TN_TRY(tn_nn_empty(g.nd, sz, TN_DTYPE_INT64, x, &idx));
    a.idx = idx ? tn_tensor_data(idx) : NULL;
    tn_tensor *y;
    tn_status st = plane_op(x, &g, oh, ow, run_max, &a, &y);
    if (st != TN_OK) { if (idx) tn_tensor_release(idx); return st; }
    rets[0] = tn_value_tensor(y);
    if (with_indices) rets[1] = tn_value_tensor(idx);
    return TN_OK;
}

/* aten::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode) -> (out, indices) */
tn_status tn_op_max_pool2d_with_indices(const tn_value *args, tn_value *rets) { return max_pool_impl(args, rets, true); }
/* aten::max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode) -> out */
tn_status tn_op_max_pool2d(const tn_value *args, tn_value *rets) { return max_pool_impl(args, rets, false); }

static void run_avg(tn_dtype acc, void *y, const void *x, const plane_geom *g, int64_t oh, int64_t ow, void *ctx) {
    pool_args *a = ctx;
    NN_KERNEL_ANY(acc, avg_pool2d, y, x, g->P, g->H, g->W, oh, ow, a->kh, a->kw, a->sh, a->sw, a->ph, a->pw,
              a->count_include_pad, a->divisor);
}

/* aten::avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
 * divisor_override?) -> Tensor */
tn_status tn_op_avg_pool2d(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    pool_args a;
    plane_geom g;
    TN_TRY(read_pool_args(args, &a, false));
    a.ceil_mode = args[4].u.b;
    a.count_include_pad = args[5].u.b;
    if (args[6].tag == TN_V_INT) {
        if (args[6].u.i == 0) return tn_error(TN_ERR_RUNTIME, "divisor must be not zero");
        a.divisor = args[6].u.i;
    }
    /* upstream reads the plane count as size(-3) first */
    if (x->ndim < 3) {
        int unused;
        TN_TRY(tn_wrap_dim_strict(-3, x->ndim, &unused));
    }
    TN_TRY(planes_of(x, &g, "avg_pool2d"));
    if (a.ph > a.kh / 2 || a.pw > a.kw / 2)
        return tn_error(TN_ERR_RUNTIME, "pad should be smaller than or equal to half of kernel size, but got padW = "
                                        "%lld, padH = %lld, kW = %lld, kH = %lld",
                        (long long)a.pw, (long long)a.ph, (long long)a.kw, (long long)a.kh);
    TN_TRY(pool2d_nonempty(x));
    /* (a meta input has no kernel to refuse its dtype: upstream's meta function answers) */
    if (!tn_tensor_is_meta(x)) TN_TRY(tn_nn_check_float_or_int(x, "avg_pool2d", true));
    int64_t oh, ow;
    TN_TRY(pool_out_sizes(x, &g, &a, &oh, &ow));
    tn_tensor *y;
    TN_TRY(plane_op(x, &g, oh, ow, run_avg, &a, &y));
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

static void run_adaptive(tn_dtype acc, void *y, const void *x, const plane_geom *g, int64_t oh, int64_t ow, void *ctx) {
    NN_KERNEL(acc, adaptive_avg_pool2d, y, x, g->P, g->H, g->W, oh, ow);
}

/* aten::_adaptive_avg_pool2d(self, output_size) -> Tensor */
tn_status tn_op__adaptive_avg_pool2d(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    int64_t os[2];
    /* a list must hold exactly two sizes (upstream does not widen a one-element list) */
    if (!tn_nn_int_list(&args[1], 2, os) || (args[1].tag == TN_V_INTLIST && args[1].u.ilist.n != 2))
        return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool2d: output_size must be 2");
    plane_geom g;
    TN_TRY(planes_of(x, &g, "adaptive_avg_pool2d"));
    /* upstream checks the two spatial dims only (a 4-d input's channels may be 0) */
    for (int i = x->ndim - 2; i < x->ndim; i++)
        if (x->sizes[i] <= 0) {
            char b[256];
            return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                                            "dimensions, but input has sizes %s with dimension %d being empty",
                            TN_NN_FMT(x, b), i);
        }
    if (os[0] < 0 || os[1] < 0) return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0");
    TN_TRY(tn_nn_check_float(x, "adaptive_avg_pool2d"));
    tn_tensor *y;
    TN_TRY(plane_op(x, &g, os[0], os[1], run_adaptive, NULL, &y));
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* aten::adaptive_avg_pool2d(self, output_size) -> Tensor, composite upstream: an output of
 * 1 x 1 is the mean over the last two dims (keepdim), as upstream computes it (the
 * reduction's order, its errors and its NaN for an empty plane); any other size the
 * pooling kernel. Before: the kernel for 1 x 1 too, 11x upstream's time at 8 x 32 x 64 x 64. */
tn_status tn_op_adaptive_avg_pool2d(const tn_value *args, tn_value *rets) {
    int64_t os[2];
    if (!tn_nn_int_list(&args[1], 2, os) || (args[1].tag == TN_V_INTLIST && args[1].u.ilist.n != 2))
        return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool2d: output_size must be 2");
    if (os[0] < 0 || os[1] < 0) return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0");
    if (os[0] == 1 && os[1] == 1) {
        const int64_t dims[2] = {-1, -2};
        tn_tensor *out;
        TN_TRY(tn_dispatch_one(TN_OP_mean_dim, (tn_value[]){args[0], tn_value_intlist(dims, 2), tn_value_bool(true), (tn_value){.tag = TN_V_NONE}}, &out));
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    return tn_op__adaptive_avg_pool2d(args, rets);
}

/* ---- padding ------------------------------------------------------------------------- */

typedef struct pad_args { int64_t pt, pb, pl, pr; bool reflect; } pad_args;

static void run_pad(tn_dtype acc, void *y, const void *x, const plane_geom *g, int64_t oh, int64_t ow, void *ctx) {
    pad_args *a = ctx;
    NN_KERNEL_ANY(acc, pad2d, y, x, g->P, g->H, g->W, a->pt, a->pb, a->pl, a->pr, a->reflect);
}

/* Reflection / replication pad of the last 1 or 2 dims. */
static tn_status pad_impl(const tn_value *args, tn_value *rets, int nsp, bool reflect) {
    tn_tensor *x = args[0].u.t;
    char b[256];
    const tn_value *pv = &args[1];
    if (pv->tag != TN_V_INTLIST || pv->u.ilist.n != 2 * nsp)
        return tn_error(TN_ERR_RUNTIME, "padding size is expected to be %d", 2 * nsp);
    const int64_t *pd = pv->u.ilist.data;
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other "
                                        "non-zero dimensions for input, but got: %s", nsp + 1, nsp + 2, TN_NN_FMT(x, b));
    for (int i = x->ndim == nsp + 2 ? 1 : 0; i < x->ndim; i++) /* only a batch dim may be empty */
        if (x->sizes[i] == 0)
            return tn_error(TN_ERR_RUNTIME, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other "
                                            "non-zero dimensions for input, but got: %s", nsp + 1, nsp + 2, TN_NN_FMT(x, b));
    pad_args a = {0, 0, pd[0], pd[1], reflect};
    if (nsp == 2) { a.pt = pd[2]; a.pb = pd[3]; }
    /* negative pads crop: the kernel's source index (o - pad, reflected past either end, or
     * clamped) is upstream's for them too, for reflection and replication alike */
    if (tn_dtype_is_complex(x->dtype)) { /* a copy: the real and imaginary parts padded alike */
        tn_op_id op = reflect ? (nsp == 1 ? TN_OP_reflection_pad1d : TN_OP_reflection_pad2d)
                              : (nsp == 1 ? TN_OP_replication_pad1d : TN_OP_replication_pad2d);
        tn_cx c = {0};
        tn_tensor *re = tn_cx_call(&c, op, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_real, TN_ARGS(TN_T(x)))), *pv));
        tn_tensor *im = tn_cx_call(&c, op, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_imag, TN_ARGS(TN_T(x)))), *pv));
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_complex, TN_ARGS(TN_T(re), TN_T(im))), rets);
    }
    TN_TRY(tn_nn_check_float_or_int(x, reflect ? (nsp == 1 ? "reflection_pad1d" : "reflection_pad2d")
                                               : (nsp == 1 ? "replication_pad1d" : "replication_pad2d"), false));
    /* View as planes [P, H, W] with H = 1 for 1-d padding. */
    plane_geom g;
    g.W = x->sizes[x->ndim - 1];
    g.H = nsp == 2 ? x->sizes[x->ndim - 2] : 1;
    g.P = 1;
    for (int i = 0; i < x->ndim - nsp; i++) g.P *= x->sizes[i];
    int64_t dims[2] = {g.H, g.W};
    int64_t pads[2][2] = {{a.pt, a.pb}, {a.pl, a.pr}};
    for (int i = 2 - nsp; i < 2; i++) {
        int dim = x->ndim - 2 + i;
        if (reflect && (pads[i][0] >= dims[i] || pads[i][1] >= dims[i]))
            return tn_error(TN_ERR_RUNTIME, "Argument #4: Padding size should be less than the corresponding input "
                                            "dimension, but got: padding (%lld, %lld) at dimension %d of input %s",
                            (long long)pads[i][0], (long long)pads[i][1], dim, TN_NN_FMT(x, b));
        if (!reflect && dims[i] < 1)
            return tn_error(TN_ERR_RUNTIME, "input (W: %lld) is too small. Calculated output W: %lld",
                            (long long)dims[i], (long long)tn_add_wrap(tn_add_wrap(dims[i], pads[i][0]), pads[i][1]));
    }
    /* upstream's int64 sums wrap (a pad of INT64_MAX gives a negative size it then refuses) */
    int64_t oh = tn_add_wrap(tn_add_wrap(g.H, a.pt), a.pb), ow = tn_add_wrap(tn_add_wrap(g.W, a.pl), a.pr);
    /* 1-d needs an output width of 1 or more; replication 2-d a height or a width (upstream) */
    if (nsp == 1 && ow < 1)
        return tn_error(TN_ERR_RUNTIME, "input (W: %lld) is too small. Calculated output W: %lld", (long long)g.W,
                        (long long)ow);
    if (!reflect && nsp == 2 && ow < 1 && oh < 1)
        return tn_error(TN_ERR_RUNTIME, "input (H: %lld, W: %lld ) is too small. Calculated output H: %lld W: %lld",
                        (long long)g.H, (long long)g.W, (long long)oh, (long long)ow);
    int64_t sz[TN_MAX_DIMS];
    if (oh < 0 || ow < 0) {
        memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
        sz[x->ndim - 1] = ow;
        if (nsp == 2) sz[x->ndim - 2] = oh;
        return tn_error(TN_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                        (long long)(oh < 0 ? oh : ow), tn_format_sizes(x->ndim, sz, b, (int)sizeof b));
    }
    memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    sz[x->ndim - 1] = ow;
    if (nsp == 2) sz[x->ndim - 2] = oh;
    tn_tensor *y;
    TN_TRY(tn_nn_empty(x->ndim, sz, x->dtype, x, &y));
    if (!tn_tensor_is_meta(x) && tn_tensor_numel(y) > 0) {
        tn_dtype acc = tn_nn_acc_any(x->dtype);
        tn_nn_buf bx, by;
        tn_status st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = tn_nn_out_begin(y, acc, &by);
        if (st != TN_OK) { tn_nn_buf_free(&bx); tn_tensor_release(y); return st; }
        run_pad(acc, by.data, bx.data, &g, oh, ow, &a);
        tn_nn_out_finish(y, acc, &by);
        tn_nn_buf_free(&bx);
    }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* aten::reflection_pad1d(self, padding[2]) */
tn_status tn_op_reflection_pad1d(const tn_value *args, tn_value *rets) { return pad_impl(args, rets, 1, true); }
/* aten::reflection_pad2d(self, padding[4]) */
tn_status tn_op_reflection_pad2d(const tn_value *args, tn_value *rets) { return pad_impl(args, rets, 2, true); }
/* aten::replication_pad1d(self, padding[2]) */
tn_status tn_op_replication_pad1d(const tn_value *args, tn_value *rets) { return pad_impl(args, rets, 1, false); }
/* aten::replication_pad2d(self, padding[4]) */
tn_status tn_op_replication_pad2d(const tn_value *args, tn_value *rets) { return pad_impl(args, rets, 2, false); }

/* ---- upsampling ------------------------------------------------------------------------ */

typedef struct up_args { double rh, rw; int mode; bool align; } up_args;

static void run_up(tn_dtype acc, void *y, const void *x, const plane_geom *g, int64_t oh, int64_t ow, void *ctx) {
    up_args *a = ctx;
    NN_KERNEL(acc, upsample2d, y, x, g->P, g->H, g->W, oh, ow, a->rh, a->rw, a->mode, a->align);
}

static tn_status upsample_impl(tn_tensor *x, int64_t oh, int64_t ow, const tn_value *sh, const tn_value *sw, int mode,
                               bool align, tn_value *rets) {
    char b[256];
    if (x->ndim != 4)
        return tn_error(TN_ERR_RUNTIME, "Non-empty 4D data tensor expected but got a tensor with sizes %s", TN_NN_FMT(x, b));
    if (oh <= 0 || ow <= 0 || x->sizes[2] <= 0 || x->sizes[3] <= 0)
        return tn_error(TN_ERR_RUNTIME, "Input and output sizes should be greater than 0, but got input (H: %lld, W: "
                                        "%lld) output (H: %lld, W: %lld)", (long long)x->sizes[2], (long long)x->sizes[3],
                        (long long)oh, (long long)ow);
    TN_TRY(tn_nn_check_upsample_nonempty(x));
    /* nearest also copies uint8 values (upstream dispatches Byte for it; float32 holds them
     * exactly) */
    bool byte_nearest = mode == 0 && x->dtype == TN_DTYPE_UINT8;
    if (!byte_nearest) TN_TRY(tn_nn_check_float(x, mode == 0 ? "upsample_nearest2d" : "upsample_bilinear2d"));
    plane_geom g;
    TN_TRY(planes_of(x, &g, "upsample"));
    /* Scales are computed in the opmath type: float for all but Double. */
    bool f = x->dtype != TN_DTYPE_FLOAT64;
    up_args a = {tn_nn_up_scale(mode, align, f, sh, g.H, oh), tn_nn_up_scale(mode, align, f, sw, g.W, ow), mode, align};
    tn_tensor *y;
    TN_TRY(plane_op_in(byte_nearest ? TN_DTYPE_FLOAT32 : tn_nn_acc_any(x->dtype), x, &g, oh, ow, run_up, &a, &y));
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* output_size of the non-vec forms: an int (the schema's int[2] repeats it) or a list of
 * exactly 2 (upstream's upsample_2d_common_check; a 1-list is not repeated, unlike pools'). */
static tn_status upsample_output_size(const tn_value *v, int64_t os[2]) {
    if (v->tag == TN_V_INTLIST && v->u.ilist.n == 2) {
        os[0] = v->u.ilist.data[0];
        os[1] = v->u.ilist.data[1];
        return TN_OK;
    }
    if (v->tag == TN_V_INT) {
        os[0] = os[1] = v->u.i;
        return TN_OK;
    }
    return tn_error(TN_ERR_RUNTIME, "It is expected output_size equals to 2, but got size %lld",
                    (long long)(v->tag == TN_V_INTLIST ? v->u.ilist.n : 1));
}

/* aten::upsample_nearest2d(self, output_size[2], scales_h?, scales_w?) */
tn_status tn_op_upsample_nearest2d(const tn_value *args, tn_value *rets) {
    int64_t os[2] = {0, 0};
    TN_TRY(upsample_output_size(&args[1], os));
    return upsample_impl(args[0].u.t, os[0], os[1], &args[2], &args[3], 0, false, rets);
}

/* aten::upsample_bilinear2d(self, output_size[2], align_corners, scales_h?, scales_w?) */
tn_status tn_op_upsample_bilinear2d(const tn_value *args, tn_value *rets) {
    int64_t os[2] = {0, 0};
    TN_TRY(upsample_output_size(&args[1], os));
    return upsample_impl(args[0].u.t, os[0], os[1], &args[3], &args[4], 1, args[2].u.b, rets);
}

/* The .vec overloads: output_size or scale_factors (exactly one given). */
static tn_status upsample_vec(tn_tensor *x, const tn_value *osv, const tn_value *sfv, int mode, bool align, tn_value *rets) {
    bool has_os = osv->tag == TN_V_INTLIST, has_sf = sfv->tag == TN_V_DOUBLELIST;
    if (has_os == has_sf)
        return tn_error(TN_ERR_RUNTIME, "Must specify exactly one of output_size and scale_factors");
    if (x->ndim != 4) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "Non-empty 4D data tensor expected but got a tensor with sizes %s", TN_NN_FMT(x, b));
    }
    int64_t oh, ow;
    tn_value sh = {.tag = TN_V_NONE}, sw = {.tag = TN_V_NONE};
    if (has_os) {
        if (osv->u.ilist.n != 2) return tn_error(TN_ERR_RUNTIME, "It is expected output_size equals to 2, but got size %lld", (long long)osv->u.ilist.n);
        oh = osv->u.ilist.data[0];
        ow = osv->u.ilist.data[1];
    } else {
        if (sfv->u.dlist.n != 2) return tn_error(TN_ERR_RUNTIME, "It is expected scale_factors equals to 2, but got size %lld", (long long)sfv->u.dlist.n);
        oh = (int64_t)floor((double)x->sizes[2] * sfv->u.dlist.data[0]);
        ow = (int64_t)floor((double)x->sizes[3] * sfv->u.dlist.data[1]);
        sh = tn_value_double(sfv->u.dlist.data[0]);
        sw = tn_value_double(sfv->u.dlist.data[1]);
    }
    return upsample_impl(x, oh, ow, &sh, &sw, mode, align, rets);
}

/* aten::upsample_nearest2d.vec(input, output_size?, scale_factors?) */
tn_status tn_op_upsample_nearest2d_vec(const tn_value *args, tn_value *rets) {
    return upsample_vec(args[0].u.t, &args[1], &args[2], 0, false, rets);
}
/* aten::upsample_bilinear2d.vec(input, output_size?, align_corners, scale_factors?) */
tn_status tn_op_upsample_bilinear2d_vec(const tn_value *args, tn_value *rets) {
    return upsample_vec(args[0].u.t, &args[1], &args[3], 1, args[2].u.b, rets);
}
