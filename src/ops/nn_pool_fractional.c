/* nn_pool_fractional.c — fractional max pooling over 2 or 3 spatial dims and its backward
 * operators. Each plane's window starts come from its entries of _random_samples by
 * upstream's generate_intervals, computed in the input's dtype (BFloat16 / Half arithmetic
 * rounded at each step, as upstream's scalar_t); the windowed maximum is
 * kernels/nn_pool3d.h's, the gradient its index scatter-add. */
#include <stdlib.h>
#include <string.h>

#include "kernels/nn_pool3d.h"
#include "ops/nn_backward_internal.h"
#include "ops/reduce.h"

/* v rounded to a floating dtype */
static double rnd(tn_dtype dt, double v) {
    if (dt == TN_DTYPE_FLOAT64) return v;
    if (dt == TN_DTYPE_FLOAT32) return (double)(float)v;
    char buf[8] = {0};
    tn_rd_set(buf, dt, v);
    return tn_rd_get(buf, dt);
}

/* upstream's generate_intervals: out window starts for one dim */
static void intervals(tn_dtype dt, double sample, int64_t in, int64_t out, int64_t k, int64_t *seq) {
    if (out > 1) {
        double alpha = rnd(dt, rnd(dt, (double)(in - k)) / rnd(dt, (double)(out - 1)));
        int64_t base = (int64_t)(int)rnd(dt, sample * alpha);
        for (int64_t i = 0; i < out - 1; i++)
            seq[i] = (int64_t)(int)rnd(dt, rnd(dt, (double)i + sample) * alpha) - base;
    }
    if (out > 0) seq[out - 1] = in - k;
}

/* kernel_size at args[at], output_size at args[at + 1] */
static tn_status read_args(const tn_value *args, int at, int nsp, int64_t *k, int64_t *o) {
    const char *nm = nsp == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
    if (!tn_nn_int_list(&args[at], nsp, k))
        return tn_error(TN_ERR_RUNTIME, "%s: kernel_size must either be a single Int or tuple of %s Ints", nm,
                        nsp == 2 ? "two" : "three");
    if (!tn_nn_int_list(&args[at + 1], nsp, o))
        return tn_error(TN_ERR_RUNTIME, "%s: output_size must either be a single Int or tuple of %s Ints", nm,
                        nsp == 2 ? "two" : "three");
    return TN_OK;
}

static tn_status fractional(const tn_value *args, tn_value *rets, int nsp) {
    tn_tensor *x = args[0].u.t, *rs = args[3].u.t;
    char b[256];
    const char *nm = nsp == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
    int64_t k[3], o[3];
    TN_TRY(read_args(args, 1, nsp, k, o));
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "%s(): Expected %dD or %dD tensor, but got: %s", nm, nsp + 1, nsp + 2, TN_NN_FMT(x, b));
    /* every dim but the first, whether the input is batched or not (upstream's loop) */
    for (int i = 1; i < x->ndim; i++)
        if (x->sizes[i] <= 0)
            return tn_error(TN_ERR_RUNTIME, "%s(): Expected input to have non-zero size for non-batch dimensions, but got "
                                            "%s with dimension %d being empty.", nm, TN_NN_FMT(x, b), i);
    static const char *what[3] = {"time", "height", "width"};
    for (int d = 0; d < nsp; d++) {
        int64_t in = x->sizes[x->ndim - nsp + d];
        /* upstream's 3-d check is strict (a window that just fits refuses), its 2-d one not */
        int64_t span = tn_add_wrap(tn_add_wrap(o[d], k[d]), -1); /* upstream's int64 wrap */
        if (nsp == 3 ? span >= in : span > in)
            return tn_error(TN_ERR_RUNTIME, "%s(): pool %s %lld too large relative to input %s %lld",
                            nsp == 3 ? "fractional_max_pool3d_out" : nm,
                            what[d + 3 - nsp], (long long)k[d], what[d + 3 - nsp], (long long)in);
    }
    if (rs->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "Expect _random_samples to have the same dtype as input");
    int64_t N = x->ndim == nsp + 2 ? x->sizes[0] : 1, C = x->sizes[x->ndim - nsp - 1];
    if (rs->ndim != 3) return tn_error(TN_ERR_RUNTIME, "Expect _random_samples to have 3 dimensions, got %d", rs->ndim);
    if (rs->sizes[0] < N || rs->sizes[1] != C || rs->sizes[2] != nsp)
        return tn_error(TN_ERR_RUNTIME, "Expect _random_samples of size at least [%lld, %lld, %d], got %s", (long long)N,
                        (long long)C, nsp, TN_NN_FMT(rs, b));
    TN_TRY(tn_nnb_check_float(x, nsp == 2 ? "fractional_max_pool2d_out_frame" : "fractional_max_pool3d_out_frame"));
    tn_pool3d_geom g = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, false, 0};
    int64_t sz[5];
    memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    for (int d = 0; d < nsp; d++) {
        g.in[3 - nsp + d] = x->sizes[x->ndim - nsp + d];
        g.out[3 - nsp + d] = o[d];
        g.k[3 - nsp + d] = k[d];
        sz[x->ndim - nsp + d] = o[d];
    }
    tn_tensor *y = NULL, *ix = NULL;
    TN_TRY(tn_nn_empty(x->ndim, sz, x->dtype, x, &y));
    tn_status st = tn_nn_empty(x->ndim, sz, TN_DTYPE_INT64, x, &ix);
    if (st == TN_OK && !tn_tensor_is_meta(x) && tn_tensor_numel(y) > 0) {
        int64_t P = N * C, per = g.out[0] + g.out[1] + g.out[2];
        int64_t *starts = malloc(sizeof(int64_t) * (size_t)(P * per));
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bx = {0}, by = {0};
        if (!starts) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        for (int64_t p = 0; st == TN_OK && p < P; p++) {
            int64_t *sp = starts + p * per, at = 0;
            for (int d = 0; d < 3; d++) {
                int sd = d - (3 - nsp);
                /* 2-d samples are (width, height); 3-d ones (time, height, width) */
                int si = nsp == 2 ? 1 - sd : sd;
                if (sd < 0) sp[at] = 0;
                else intervals(x->dtype, tn_nn_read(rs, p * nsp + si), g.in[d], g.out[d], g.k[d], sp + at);
                at += g.out[d];
            }
        }
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = tn_nn_out_begin(y, acc, &by);
        if (st == TN_OK) {
            if (acc == TN_DTYPE_FLOAT32) f32_max_pool3d_starts__scalar(by.data, tn_tensor_data(ix), bx.data, P, &g, starts);
            else f64_max_pool3d_starts__scalar(by.data, tn_tensor_data(ix), bx.data, P, &g, starts);
            tn_nn_out_finish(y, acc, &by);
        } else {
            tn_nn_buf_free(&by);
        }
        tn_nn_buf_free(&bx);
        free(starts);
    }
    if (st != TN_OK) { tn_tensor_release(y); tn_tensor_release(ix); return st; }
    rets[0] = tn_value_tensor(y);
    rets[1] = tn_value_tensor(ix);
    return TN_OK;
}

/* (grad_output, self, kernel_size, output_size, indices): grad_output added at the indices */
static tn_status fractional_backward(const tn_value *args, tn_value *rets, int nsp) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *idx = args[4].u.t;
    char b1[256], b2[256];
    int64_t k[3], o[3];
    TN_TRY(read_args(args, 2, nsp, k, o));
    /* upstream's order: the input's plane and spatial sizes are read first (an IndexError
     * for too few dims), then the 2-d form checks grad_output's rank and both forms its
     * spatial sizes (3-d: read by index, IndexError again) */
    int lead = x->ndim == nsp + 2, w;
    for (int i = 0; i <= nsp; i++) TN_TRY(tn_wrap_dim_strict(lead + i, x->ndim, &w));
    if (nsp == 2 && gy->ndim != x->ndim)
        return tn_error(TN_ERR_RUNTIME, "fractional_max_pool2d_backward(): gradOutput sizes unexpected");
    for (int i = 0; i < nsp; i++) {
        TN_TRY(tn_wrap_dim_strict(lead + 1 + i, gy->ndim, &w));
        if (gy->sizes[w] != o[i])
            return tn_error(TN_ERR_RUNTIME, "fractional_max_pool%dd_backward(): gradOutput %s and indices %s do not "
                                            "match the output size", nsp, TN_NN_FMT(gy, b1), TN_NN_FMT(idx, b2));
    }
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "fractional_max_pool%dd_backward(): Expected %dD or %dD tensor, but got: %s", nsp,
                        nsp + 1, nsp + 2, TN_NN_FMT(x, b1));
    bool ok = gy->ndim == x->ndim && tn_nnb_same_sizes(idx, gy);
    for (int i = 0; ok && i < x->ndim; i++)
        ok = gy->sizes[i] == (i < x->ndim - nsp ? x->sizes[i] : o[i - (x->ndim - nsp)]);
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "fractional_max_pool%dd_backward(): gradOutput %s and indices %s do not match "
                                        "the output size", nsp, TN_NN_FMT(gy, b1), TN_NN_FMT(idx, b2));
    if (idx->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type Long but found %s", tn_nnb_dname(idx->dtype));
    TN_TRY(tn_nnb_check_float(gy, nsp == 2 ? "fractional_max_pool2d_backward_out_frame"
                                           : "fractional_max_pool3d_backward_out_frame"));
    tn_tensor *gx;
    TN_TRY(tn_nn_empty(x->ndim, x->sizes, gy->dtype, gy, &gx));
    if (tn_tensor_is_meta(gy) || tn_tensor_numel(gx) == 0) { rets[0] = tn_value_tensor(gx); return TN_OK; }
    int64_t in_plane = 1, out_plane = 1, P = 1;
    for (int i = 0; i < x->ndim; i++) {
        if (i < x->ndim - nsp) P *= x->sizes[i];
        else { in_plane *= x->sizes[i]; out_plane *= gy->sizes[i]; }
    }
    tn_dtype acc = tn_nn_acc(gy->dtype);
    tn_nn_buf bg = {0}, bi = {0}, bx = {0};
    tn_status st = tn_nn_load(gy, acc, &bg);
    if (st == TN_OK) st = tn_nn_load_index(idx, &bi);
    if (st == TN_OK) st = tn_nnb_out_begin(gx, acc, true, &bx);
    if (st == TN_OK) {
        int64_t bad = 0;
        bool fine = acc == TN_DTYPE_FLOAT32
                        ? f32_plane_scatter_add__scalar(bx.data, bg.data, bi.data, P, in_plane, out_plane, &bad)
                        : f64_plane_scatter_add__scalar(bx.data, bg.data, bi.data, P, in_plane, out_plane, &bad);
        if (fine) tn_nn_out_finish(gx, acc, &bx);
        else {
            tn_nn_buf_free(&bx);
            st = tn_error(TN_ERR_RUNTIME, "fractional_max_pool%dd_backward: index %lld is out of bounds for a plane of "
                                          "%lld elements", nsp, (long long)bad, (long long)in_plane);
        }
    }
    tn_nn_buf_free(&bg);
    tn_nn_buf_free(&bi);
    if (st != TN_OK) { tn_tensor_release(gx); return st; }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* aten::fractional_max_pool2d(self, kernel_size[2], output_size[2], random_samples) -> (out, indices) */
tn_status tn_op_fractional_max_pool2d(const tn_value *a, tn_value *r) { return fractional(a, r, 2); }
/* aten::fractional_max_pool3d(self, kernel_size[3], output_size[3], random_samples) -> (out, indices) */
tn_status tn_op_fractional_max_pool3d(const tn_value *a, tn_value *r) { return fractional(a, r, 3); }
/* aten::fractional_max_pool2d_backward(grad_output, self, kernel_size, output_size, indices) */
tn_status tn_op_fractional_max_pool2d_backward(const tn_value *a, tn_value *r) { return fractional_backward(a, r, 2); }
/* aten::fractional_max_pool3d_backward(grad_output, self, kernel_size, output_size, indices) */
tn_status tn_op_fractional_max_pool3d_backward(const tn_value *a, tn_value *r) { return fractional_backward(a, r, 3); }
