/* nn_fold.c — aten::col2im (torch.nn.functional.fold): upstream's argument and shape checks
 * in its order, then the planes of kernels/fold.h on the pool; aten::im2col
 * (torch.nn.functional.unfold) as one copy of the input's windows. Each is the other's
 * gradient (the rows generated from derivatives.yaml). */
#include <stdio.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/fold.h"
#include "ops/dispatch.h"
#include "ops/nn_internal.h"
#include "ops/shape.h"

/* floor division (upstream's div_rtn) */
static int64_t div_rtn(int64_t a, int64_t b) {
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

typedef struct fold_job {
    tn_dtype dt;
    void *im;
    const void *col;
    tn_fold_geom g;
} fold_job;

static void fold_run(void *ctx, int64_t p0, int64_t p1) {
    fold_job *j = ctx;
    tn_fold_planes(j->dt, j->im, j->col, &j->g, p0, p1);
}

/* aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation,
 * int[2] padding, int[2] stride) -> Tensor */
tn_status tn_op_col2im(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    const char *names[5] = {"output_size", "kernel_size", "dilation", "padding", "stride"};
    for (int a = 0; a < 5; a++)
        if (args[1 + a].u.ilist.n != 2)
            return tn_error(TN_ERR_RUNTIME, "It is expected %s equals to 2, but got size %lld", names[a],
                            (long long)args[1 + a].u.ilist.n);
    const int64_t *os = args[1].u.ilist.data, *k = args[2].u.ilist.data, *d = args[3].u.ilist.data,
                  *p = args[4].u.ilist.data, *s = args[5].u.ilist.data;
    const int64_t H = os[0], W = os[1], kh = k[0], kw = k[1], dh = d[0], dw = d[1], ph = p[0], pw = p[1], sh = s[0], sw = s[1];
    char b[256];
    if (!(kw > 0 && kh > 0))
        return tn_error(TN_ERR_RUNTIME, "kernel size should be greater than zero, but got kernel_height: %lld kernel_width: %lld", (long long)kh, (long long)kw);
    if (!(sw > 0 && sh > 0))
        return tn_error(TN_ERR_RUNTIME, "stride should be greater than zero, but got stride_height: %lld stride_width: %lld", (long long)sh, (long long)sw);
    if (!(dw > 0 && dh > 0))
        return tn_error(TN_ERR_RUNTIME, "dilation should be greater than zero, but got dilation_height: %lld dilation_width: %lld", (long long)dh, (long long)dw);
    if (!(pw >= 0 && ph >= 0))
        return tn_error(TN_ERR_RUNTIME, "padding should be non-negative, but got pad_height: %lld pad_width: %lld", (long long)ph, (long long)pw);
    if (!((x->ndim == 2 && x->sizes[0] != 0 && x->sizes[1] != 0) || (x->ndim == 3 && x->sizes[1] != 0 && x->sizes[2] != 0)))
        return tn_error(TN_ERR_RUNTIME, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: %s", TN_NN_FMT(x, b));
    const int bd = x->ndim == 3;
    const int64_t planes_in = x->sizes[bd], L = x->sizes[bd + 1];
    int64_t K;
    if (__builtin_mul_overflow((uint64_t)kw, (uint64_t)kh, (uint64_t *)&K) || K < 0)
        return tn_error(TN_ERR_RUNTIME, "Given kernel_width = %lld and kernel_height = %lld the product of kernel_width and kernel_height overflowed.", (long long)kw, (long long)kh);
    if (planes_in % K != 0)
        return tn_error(TN_ERR_RUNTIME, "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=%lld and kernel_size=(%lld, %lld).", (long long)planes_in, (long long)kh, (long long)kw);
    /* upstream's int64 arithmetic, wrapping */
    const int64_t bh = tn_add_wrap(div_rtn(tn_sub_wrap(tn_add_wrap(H, tn_mul_wrap(2, ph)), tn_add_wrap(tn_mul_wrap(dh, kh - 1), 1)), sh), 1);
    const int64_t bw = tn_add_wrap(div_rtn(tn_sub_wrap(tn_add_wrap(W, tn_mul_wrap(2, pw)), tn_add_wrap(tn_mul_wrap(dw, kw - 1), 1)), sw), 1);
    if (L != tn_mul_wrap(bh, bw))
        return tn_error(TN_ERR_RUNTIME, "Given output_size=(%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, %lld), padding=(%lld, %lld), stride=(%lld, %lld), expected size of input's dimension 2 to match the calculated number of sliding blocks %lld * %lld = %lld, but got input.size(2)=%lld.",
                        (long long)H, (long long)W, (long long)kh, (long long)kw, (long long)dh, (long long)dw, (long long)ph, (long long)pw, (long long)sh, (long long)sw, (long long)bh, (long long)bw, (long long)tn_mul_wrap(bh, bw), (long long)L);
    if (!(bh >= 1 && bw >= 1))
        return tn_error(TN_ERR_RUNTIME, "Given output_size=(%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, %lld), padding=(%lld, %lld), stride=(%lld, %lld), calculated shape of the array of sliding blocks as (%lld, %lld), which is too small (non-positive)",
                        (long long)H, (long long)W, (long long)kh, (long long)kw, (long long)dh, (long long)dw, (long long)ph, (long long)pw, (long long)sh, (long long)sw, (long long)bh, (long long)bw);
    if (W < 1 || H < 1)
        return tn_error(TN_ERR_RUNTIME, "Expected output spatial size to be positive, but got: output_size=(%lld, %lld).", (long long)H, (long long)W);
    if (!tn_dtype_is_floating(x->dtype) && x->dtype != TN_DTYPE_COMPLEX64 && x->dtype != TN_DTYPE_COMPLEX128)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"col2im_out_cpu\" not implemented for '%s'", tn_dtype_infos[x->dtype].c10_name);
    const int64_t N = bd ? x->sizes[0] : 1, C = planes_in / K;
    int64_t sizes[4] = {N, C, H, W};
    tn_tensor *y, *xc = NULL;
    TN_TRY(tn_nn_empty(bd ? 4 : 3, bd ? sizes : sizes + 1, x->dtype, x, &y));
    if (tn_tensor_is_meta(x) || tn_tensor_numel(y) == 0) {
        rets[0] = tn_value_tensor(y);
        return TN_OK;
    }
    tn_status st = tn_tensor_contiguous(x, &xc);
    if (st != TN_OK) { tn_tensor_release(y); return st; }
    fold_job j = {x->dtype, tn_tensor_data(y), tn_tensor_data(xc), {C, H, W, bh, bw, kh, kw, ph, pw, sh, sw, dh, dw}};
    tn_parallel_for(N * C, 32768 / (K * L > 0 ? K * L : 1) + 1, fold_run, &j);
    tn_tensor_release(xc);
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* aten::im2col(self, kernel_size, dilation, padding, stride): (N, C, H, W) -> (N, C*kh*kw, L)
 * sliding blocks. The (padded) input viewed as [N, C, kh, kw, oh, ow] with the window strides
 * and copied by copy_ into the result (every dtype copy_ moves; the pool); its gradient is
 * col2im (the row generated from derivatives.yaml, Im2ColBackward0 as upstream). Before
 * session 49 a composition of kh * kw strided slices, stacked, refused above 44 kernel
 * positions (F.unfold with a 7 x 7 kernel). */
tn_status tn_op_im2col(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    const tn_value *k = &args[1], *d = &args[2], *p = &args[3], *s = &args[4];
    const char *names[4] = {"kernel_size", "dilation", "padding", "stride"};
    for (int a = 0; a < 4; a++)
        if (args[1 + a].u.ilist.n != 2)
            return tn_error(TN_ERR_RUNTIME, "It is expected %s equals to 2, but got size %lld", names[a], (long long)args[1 + a].u.ilist.n);
    int64_t kh = k->u.ilist.data[0], kw = k->u.ilist.data[1], dh = d->u.ilist.data[0], dw = d->u.ilist.data[1];
    int64_t ph = p->u.ilist.data[0], pw = p->u.ilist.data[1], sh = s->u.ilist.data[0], sw = s->u.ilist.data[1];
    if (kh <= 0 || kw <= 0) return tn_error(TN_ERR_RUNTIME, "kernel size should be greater than zero, but got kernel_height: %lld kernel_width: %lld", (long long)kh, (long long)kw);
    if (dh <= 0 || dw <= 0) return tn_error(TN_ERR_RUNTIME, "dilation should be greater than zero, but got dilation_height: %lld dilation_width: %lld", (long long)dh, (long long)dw);
    if (ph < 0 || pw < 0) return tn_error(TN_ERR_RUNTIME, "padding should be non-negative, but got pad_height: %lld pad_width: %lld", (long long)ph, (long long)pw);
    if (sh <= 0 || sw <= 0) return tn_error(TN_ERR_RUNTIME, "stride should be greater than zero, but got stride_height: %lld stride_width: %lld", (long long)sh, (long long)sw);
    if (!((x->ndim == 3 && x->sizes[0] != 0 && x->sizes[1] != 0 && x->sizes[2] != 0) || (x->ndim == 4 && x->sizes[1] != 0 && x->sizes[2] != 0 && x->sizes[3] != 0)))
        return tn_error(TN_ERR_RUNTIME, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input");
    if (!tn_dtype_is_floating(x->dtype) && !tn_dtype_is_complex(x->dtype) && x->dtype != TN_DTYPE_BOOL)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"im2col_out_cpu\" not implemented for '%s'", tn_dtype_infos[x->dtype].c10_name);
    const int b = x->ndim == 4;
    const int64_t N = b ? x->sizes[0] : 1, C = x->sizes[b], H = x->sizes[b + 1], W = x->sizes[b + 2];
    /* in + 2 pad - (dilation (kernel - 1) + 1), wrapping as upstream's int64 arithmetic (a
     * kernel of 2**63 - 1, the seed-34 fuzz run's UBSan report) */
    const int64_t spanh = tn_sub_wrap(tn_add_wrap(H, tn_mul_wrap(2, ph)), tn_add_wrap(tn_mul_wrap(dh, kh - 1), 1));
    const int64_t spanw = tn_sub_wrap(tn_add_wrap(W, tn_mul_wrap(2, pw)), tn_add_wrap(tn_mul_wrap(dw, kw - 1), 1));
    const int64_t oh = tn_add_wrap(spanh / sh, 1), ow = tn_add_wrap(spanw / sw, 1);
    if (oh < 1 || ow < 1 || spanh < 0 || spanw < 0)
        return tn_error(TN_ERR_RUNTIME, "Given input with spatial size (%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, %lld), padding=(%lld, %lld), calculated shape of the array of sliding blocks as (%lld, %lld), but its components must be at least one.",
                        (long long)H, (long long)W, (long long)kh, (long long)kw, (long long)dh, (long long)dw, (long long)ph, (long long)pw, (long long)oh, (long long)ow);
    int64_t K, L, shape[3];
    if (__builtin_mul_overflow(C, kh * kw, &K) || __builtin_mul_overflow(oh, ow, &L))
        return tn_error(TN_ERR_RUNTIME, "im2col: the result's size overflows");
    shape[0] = N, shape[1] = K, shape[2] = L;
    tn_tensor *y, *xp = x;
    TN_TRY(tn_nn_empty(b ? 3 : 2, b ? shape : shape + 1, x->dtype, x, &y));
    if (tn_tensor_is_meta(x) || tn_tensor_numel(y) == 0) {
        rets[0] = tn_value_tensor(y);
        return TN_OK;
    }
    tn_status st = TN_OK;
    if (ph || pw) {
        const int64_t pad[4] = {pw, pw, ph, ph};
        st = tn_dispatch_one(TN_OP_constant_pad_nd, (tn_value[]){tn_value_tensor(x), tn_value_intlist(pad, 4), tn_value_int(0)}, &xp);
    }
    if (st != TN_OK) {
        tn_tensor_release(y);
        return st;
    }
    /* [N, C, kh, kw, oh, ow]: window (i, j) of block (r, c) at padded row r sh + i dh, column
     * c sw + j dw */
    const int64_t *xs = xp->strides, sN = b ? xs[0] : 0, sC = xs[b], sH = xs[b + 1], sW = xs[b + 2];
    const int64_t vs[6] = {N, C, kh, kw, oh, ow}, vst[6] = {sN, sC, dh * sH, dw * sW, sh * sH, sw * sW};
    int64_t ys[6];
    tn_contiguous_strides(6, vs, ys);
    st = tn_shape_copy_view(y, ys, xp, vst, 6, vs);
    if (xp != x) tn_tensor_release(xp);
    if (st != TN_OK) {
        tn_tensor_release(y);
        return st;
    }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}
