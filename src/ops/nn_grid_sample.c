/* nn_grid_sample.c — grid_sampler_2d / grid_sampler_3d and their dispatcher grid_sampler:
 * upstream's argument checks (same dtype, 4-d or 5-d input and grid, batch sizes, the grid's
 * last dim, non-empty spatial dims, bicubic only in 2-d), then kernels/nn_grid_sample.h over
 * batch elements on the pool, in the opmath dtype; the backward operators (input and grid
 * gradients) the same way. */
#include <string.h>

#include "core/threadpool.h"
#include "kernels/nn_grid_sample.h"
#include "ops/nn_backward_internal.h"

static tn_status check_grid(const tn_tensor *x, const tn_tensor *grid, int64_t interp, int64_t padding, int nsp) {
    char b1[256], b2[256];
    if (x->dtype != grid->dtype)
        return tn_error(TN_ERR_RUNTIME, "grid_sampler(): expected input and grid to have same dtype, but input has %s "
                                        "and grid has %s", tn_nnb_dname(x->dtype), tn_nnb_dname(grid->dtype));
    if (x->ndim != grid->ndim || (nsp && x->ndim != nsp + 2) || (x->ndim != 4 && x->ndim != 5))
        return tn_error(TN_ERR_RUNTIME, "grid_sampler(): expected %s input and grid with same number of dimensions, "
                                        "but got input with sizes %s and grid with sizes %s",
                        nsp == 2 ? "4D" : nsp == 3 ? "5D" : "4D or 5D", TN_NN_FMT(x, b1), TN_NN_FMT(grid, b2));
    if (x->sizes[0] != grid->sizes[0])
        return tn_error(TN_ERR_RUNTIME, "grid_sampler(): expected grid and input to have same batch size, but got input "
                                        "with sizes %s and grid with sizes %s", TN_NN_FMT(x, b1), TN_NN_FMT(grid, b2));
    if (grid->sizes[grid->ndim - 1] != x->ndim - 2)
        return tn_error(TN_ERR_RUNTIME, "grid_sampler(): expected grid to have size %d in last dimension, but got grid "
                                        "with sizes %s", x->ndim - 2, TN_NN_FMT(grid, b2));
    for (int i = 2; i < x->ndim; i++)
        if (x->sizes[i] <= 0)
            return tn_error(TN_ERR_RUNTIME, "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                                            "input has sizes %s with dimension %d being empty", TN_NN_FMT(x, b1), i);
    if (interp == TN_GRID_BICUBIC && x->ndim != 4)
        return tn_error(TN_ERR_RUNTIME, "grid_sampler(): bicubic interpolation only supports 4D input");
    if (interp < 0 || interp > 2) return tn_error(TN_ERR_RUNTIME, "grid_sampler(): unknown interpolation mode %lld", (long long)interp);
    if (padding < 0 || padding > 2) return tn_error(TN_ERR_RUNTIME, "grid_sampler(): unknown padding mode %lld", (long long)padding);
    return tn_nnb_check_float(x, x->ndim == 4 ? "grid_sampler_2d_cpu_kernel_impl" : "grid_sampler3d_cpu");
}

typedef struct grid_job {
    tn_dtype acc;
    tn_dtype dtype; /* the input's: BFloat16 and Half take the per-operation rounding instances */
    void *y;
    const void *x, *grid;
    const tn_grid_geom *g;
} grid_job;

static void grid_batch(void *vj, int64_t n0, int64_t n1) {
    const grid_job *j = vj;
    if (j->dtype == TN_DTYPE_BFLOAT16) bf16_grid_sample__scalar(j->y, j->x, j->grid, j->g, n0, n1);
    else if (j->dtype == TN_DTYPE_FLOAT16) f16_grid_sample__scalar(j->y, j->x, j->grid, j->g, n0, n1);
    else if (j->acc == TN_DTYPE_FLOAT32) f32_grid_sample__scalar(j->y, j->x, j->grid, j->g, n0, n1);
    else f64_grid_sample__scalar(j->y, j->x, j->grid, j->g, n0, n1);
}

static tn_status grid_sample(const tn_value *args, tn_value *rets, int nsp) {
    tn_tensor *x = args[0].u.t, *grid = args[1].u.t;
    int64_t interp = args[2].u.i, padding = args[3].u.i;
    TN_TRY(check_grid(x, grid, interp, padding, nsp));
    nsp = x->ndim - 2;
    tn_grid_geom g = {.nsp = nsp, .N = x->sizes[0], .C = x->sizes[1], .interp = (int)interp, .padding = (int)padding,
                      .align_corners = args[4].u.b};
    int64_t ysz[5] = {x->sizes[0], x->sizes[1]};
    for (int d = 0; d < 3; d++) {
        int s = d - (3 - nsp);
        g.in[d] = s < 0 ? 1 : x->sizes[2 + s];
        g.out[d] = s < 0 ? 1 : grid->sizes[1 + s];
        if (s >= 0) ysz[2 + s] = grid->sizes[1 + s];
    }
    tn_tensor *y;
    TN_TRY(tn_nn_empty(x->ndim, ysz, x->dtype, x, &y));
    if (!tn_tensor_is_meta(x) && tn_tensor_numel(y) > 0) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf bx = {0}, bg = {0}, by = {0};
        tn_status st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = tn_nn_load(grid, acc, &bg);
        if (st == TN_OK) st = tn_nn_out_begin(y, acc, &by);
        if (st == TN_OK) {
            grid_job j = {acc, x->dtype, by.data, bx.data, bg.data, &g};
            tn_parallel_for(g.N, 1, grid_batch, &j);
            tn_nn_out_finish(y, acc, &by);
        } else {
            tn_nn_buf_free(&by);
        }
        tn_nn_buf_free(&bx);
        tn_nn_buf_free(&bg);
        if (st != TN_OK) { tn_tensor_release(y); return st; }
    }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

typedef struct grid_bwd_job {
    tn_dtype acc;
    void *gx, *ggrid;
    const void *gy, *x, *grid;
    const tn_grid_geom *g;
} grid_bwd_job;

static void grid_bwd_batch(void *vj, int64_t n0, int64_t n1) {
    const grid_bwd_job *j = vj;
    if (j->acc == TN_DTYPE_FLOAT32) f32_grid_sample_backward__scalar(j->gx, j->ggrid, j->gy, j->x, j->grid, j->g, n0, n1);
    else f64_grid_sample_backward__scalar(j->gx, j->ggrid, j->gy, j->x, j->grid, j->g, n0, n1);
}

/* (grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask)
 * -> (grad_input or None when output_mask[0] is false, grad_grid) */
static tn_status grid_sample_backward(const tn_value *args, tn_value *rets, int nsp) {
    tn_tensor *gy = args[0].u.t, *x = args[1].u.t, *grid = args[2].u.t;
    int64_t interp = args[3].u.i, padding = args[4].u.i;
    TN_TRY(check_grid(x, grid, interp, padding, nsp));
    char b1[256];
    bool ok = gy->ndim == x->ndim && gy->sizes[0] == x->sizes[0] && gy->sizes[1] == x->sizes[1];
    for (int i = 2; ok && i < x->ndim; i++) ok = gy->sizes[i] == grid->sizes[i - 1];
    if (!ok || gy->dtype != x->dtype)
        return tn_error(TN_ERR_RUNTIME, "grid_sampler_%dd_backward: grad_output %s does not match the output", nsp,
                        TN_NN_FMT(gy, b1));
    tn_grid_geom g = {.nsp = nsp, .N = x->sizes[0], .C = x->sizes[1], .interp = (int)interp, .padding = (int)padding,
                      .align_corners = args[5].u.b};
    for (int d = 0; d < 3; d++) {
        int s = d - (3 - nsp);
        g.in[d] = s < 0 ? 1 : x->sizes[2 + s];
        g.out[d] = s < 0 ? 1 : grid->sizes[1 + s];
    }
    tn_tensor *gx = NULL, *gg = NULL;
    tn_status st = TN_OK;
    if (tn_nnb_mask_at(&args[6], 0)) st = tn_nn_empty(x->ndim, x->sizes, x->dtype, x, &gx);
    if (st == TN_OK) st = tn_nn_empty(grid->ndim, grid->sizes, grid->dtype, grid, &gg);
    tn_tensor *all[3] = {gy, x, grid};
    if (st == TN_OK && !tn_nnb_any_meta(3, all)) {
        tn_dtype acc = tn_nn_acc(x->dtype);
        tn_nn_buf by = {0}, bx = {0}, bg = {0}, bgx = {0}, bgg = {0};
        st = tn_nn_load(gy, acc, &by);
        if (st == TN_OK) st = tn_nn_load(x, acc, &bx);
        if (st == TN_OK) st = tn_nn_load(grid, acc, &bg);
        if (st == TN_OK && gx) st = tn_nnb_out_begin(gx, acc, true, &bgx);
        if (st == TN_OK) st = tn_nnb_out_begin(gg, acc, true, &bgg);
        if (st == TN_OK) {
            grid_bwd_job j = {acc, gx ? bgx.data : NULL, bgg.data, by.data, bx.data, bg.data, &g};
            tn_parallel_for(g.N, 1, grid_bwd_batch, &j);
            if (gx) tn_nn_out_finish(gx, acc, &bgx);
            tn_nn_out_finish(gg, acc, &bgg);
        } else {
            tn_nn_buf_free(&bgx);
            tn_nn_buf_free(&bgg);
        }
        tn_nn_buf_free(&by); tn_nn_buf_free(&bx); tn_nn_buf_free(&bg);
    }
    if (st != TN_OK) { tn_tensor_release(gx); tn_tensor_release(gg); return st; }
    rets[0] = gx ? tn_value_tensor(gx) : tn_nnb_vnone();
    rets[1] = tn_value_tensor(gg);
    return TN_OK;
}

/* aten::grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode,
 * align_corners, output_mask[2]) -> (Tensor, Tensor) */
tn_status tn_op_grid_sampler_2d_backward(const tn_value *a, tn_value *r) { return grid_sample_backward(a, r, 2); }
/* aten::grid_sampler_3d_backward(...), the same */
tn_status tn_op_grid_sampler_3d_backward(const tn_value *a, tn_value *r) { return grid_sample_backward(a, r, 3); }

/* aten::grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners) */
tn_status tn_op_grid_sampler_2d(const tn_value *args, tn_value *rets) { return grid_sample(args, rets, 2); }
/* aten::grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners) */
tn_status tn_op_grid_sampler_3d(const tn_value *args, tn_value *rets) { return grid_sample(args, rets, 3); }
/* aten::grid_sampler(...): upstream's composite picks the 2-d or 3-d operator by the input's
 * rank (run as that operator under autograd, decompose.c). */
tn_status tn_op_grid_sampler(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    if (x->ndim == 5) return tn_dispatch(TN_OP_grid_sampler_3d, args, rets);
    if (x->ndim == 4) return tn_dispatch(TN_OP_grid_sampler_2d, args, rets);
    return grid_sample(args, rets, 0); /* for the checks' message */
}
