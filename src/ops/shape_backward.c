/* shape_backward.c — the gradient operators of views and selections that upstream's
 * derivative formulas call (select_backward, slice_backward, diagonal_backward,
 * unfold_backward, index_select_backward, value_selecting_reduction_backward,
 * embedding_backward): a zero tensor of the input's size with the gradient written or
 * added into the selected part, through copy_ / scatter ops at the door. Plain C11. */
#include <stdlib.h>
#include <string.h>

#include "kernels/nn_backward.h"
#include "ops/composite_internal.h"
#include "ops/nn_internal.h"

/* zeros(input_sizes) like grad (dtype, device). */
static tn_status zeros_like_sizes(const tn_value *sizes, const tn_tensor *grad, tn_tensor **out) {
    if (sizes->tag != TN_V_INTLIST) return tn_error(TN_ERR_TYPE, "expected input sizes as a list of ints");
    if (sizes->u.ilist.n > TN_MAX_DIMS)
        return tn_error(TN_ERR_RUNTIME, "input sizes have %lld dimensions, more than %d", (long long)sizes->u.ilist.n,
                        TN_MAX_DIMS);
    for (int64_t i = 0; i < sizes->u.ilist.n; i++)
        if (sizes->u.ilist.data[i] < 0) return tn_error(TN_ERR_RUNTIME, "zeros: Dimension size must be non-negative.");
    return tn_tensor_zeros((int)sizes->u.ilist.n, sizes->u.ilist.data, grad->dtype, tn_tensor_device(grad), out);
}

/* upstream's zeros(input_sizes) refuses a size whose bytes pass int64 before anything else
 * of the backward is checked (core's byte count, its message) */
static tn_status sizes_fit(const tn_value *sizes, const tn_tensor *grad) {
    int64_t nbytes;
    return tn_storage_nbytes_for((int)sizes->u.ilist.n, sizes->u.ilist.data, NULL, tn_dtype_itemsize(grad->dtype), &nbytes);
}

/* view.copy_(src) at the door; the view is released. */
static tn_status copy_into(tn_tensor *view, tn_tensor *src) {
    tn_value a[3] = {tn_value_tensor(view), tn_value_tensor(src), tn_value_bool(false)}, r[1];
    tn_status st = tn_dispatch(TN_OP_copy_, a, r);
    if (st == TN_OK) tn_value_release(&r[0]);
    tn_tensor_release(view);
    return st;
}

/* Gradient = zeros(sizes) with grad copied into the view (sizes vs, strides vst, offset).
 * The callers compute the view's geometry before the zeros refuse impossible sizes, so
 * they do it in wrapping arithmetic (tn_mul_wrap ...): once zeros(sizes) exists with an
 * element, every product is a real element offset, and a view of no element is never read. */
static tn_status scatter_view(const tn_value *sizes, tn_tensor *grad, int nd, const int64_t *vs, const int64_t *vst,
                              int64_t off, tn_value *rets) {
    tn_tensor *z;
    TN_TRY(zeros_like_sizes(sizes, grad, &z));
    tn_tensor *v = tn_tensor_new_view(z->storage, z->offset + off, nd, vs, vst, z->dtype);
    tn_status st = v ? copy_into(v, grad) : tn_error(TN_ERR_NO_MEMORY, "out of memory creating a view");
    if (st != TN_OK) { tn_tensor_release(z); return st; }
    rets[0] = tn_value_tensor(z);
    return TN_OK;
}

/* aten::select_backward(grad_output, input_sizes, dim, index) -> Tensor */
tn_status tn_op_select_backward(const tn_value *args, tn_value *rets) {
    const tn_value *is = &args[1];
    if (is->tag != TN_V_INTLIST || is->u.ilist.n < 1 || is->u.ilist.n > TN_MAX_DIMS)
        return tn_error(TN_ERR_INDEX, "select() cannot be applied to a 0-dim tensor.");
    int nd = (int)is->u.ilist.n, dim;
    TN_TRY(tn_check_sizes_nonnegative(nd, is->u.ilist.data)); /* upstream allocates the gradient first */
    TN_TRY(sizes_fit(is, args[0].u.t));
    TN_TRY(tn_wrap_dim(args[2].u.i, nd, &dim));
    int64_t size = is->u.ilist.data[dim], index = args[3].u.i;
    if (index >= size || (index < 0 && (size <= 0 || index < -size))) /* (no -size of INT64_MIN) */
        return tn_error(TN_ERR_INDEX, "select(): index %lld out of range for tensor of size [...] at dimension %d",
                        (long long)index, dim);
    if (index < 0) index += size;
    int64_t st[TN_MAX_DIMS], vs[TN_MAX_DIMS], vst[TN_MAX_DIMS];
    tn_contiguous_strides(nd, is->u.ilist.data, st);
    for (int i = 0, j = 0; i < nd; i++)
        if (i != dim) { vs[j] = is->u.ilist.data[i]; vst[j] = st[i]; j++; }
    return scatter_view(is, args[0].u.t, nd - 1, vs, vst, tn_mul_wrap(index, st[dim]), rets);
}

/* aten::slice_backward(grad_output, input_sizes, dim, start, end, step) -> Tensor */
tn_status tn_op_slice_backward(const tn_value *args, tn_value *rets) {
    const tn_value *is = &args[1];
    if (is->tag != TN_V_INTLIST || is->u.ilist.n < 1 || is->u.ilist.n > TN_MAX_DIMS)
        return tn_error(TN_ERR_INDEX, "slice() cannot be applied to a 0-dim tensor.");
    int nd = (int)is->u.ilist.n, dim;
    TN_TRY(tn_check_sizes_nonnegative(nd, is->u.ilist.data)); /* upstream allocates the gradient first */
    TN_TRY(sizes_fit(is, args[0].u.t));
    TN_TRY(tn_wrap_dim(args[2].u.i, nd, &dim));
    int64_t size = is->u.ilist.data[dim], start = args[3].u.i, end = args[4].u.i, step = args[5].u.i;
    if (step <= 0) return tn_error(TN_ERR_RUNTIME, "slice step must be positive");
    if (start < 0) start += size;
    if (end < 0) end += size;
    if (start < 0) start = 0;
    if (start > size) start = size;
    if (end < start) end = start;
    if (end > size) end = size;
    int64_t st[TN_MAX_DIMS], vs[TN_MAX_DIMS], vst[TN_MAX_DIMS];
    tn_contiguous_strides(nd, is->u.ilist.data, st);
    for (int i = 0; i < nd; i++) { vs[i] = is->u.ilist.data[i]; vst[i] = st[i]; }
    vs[dim] = end > start ? (end - start - 1) / step + 1 : 0;
    vst[dim] = tn_mul_wrap(st[dim], step);
    return scatter_view(is, args[0].u.t, nd, vs, vst, tn_mul_wrap(start, st[dim]), rets);
}

/* aten::diagonal_backward(grad_output, input_sizes, offset, dim1, dim2) -> Tensor */
tn_status tn_op_diagonal_backward(const tn_value *args, tn_value *rets) {
    const tn_value *is = &args[1];
    if (is->tag != TN_V_INTLIST || is->u.ilist.n < 2 || is->u.ilist.n > TN_MAX_DIMS)
        return tn_error(TN_ERR_RUNTIME, "diagonal dimensions requires ndim larger than 1");
    int nd = (int)is->u.ilist.n, d1, d2;
    TN_TRY(tn_check_sizes_nonnegative(nd, is->u.ilist.data)); /* upstream allocates the gradient first */
    TN_TRY(sizes_fit(is, args[0].u.t));
    TN_TRY(tn_wrap_dim(args[3].u.i, nd, &d1));
    TN_TRY(tn_wrap_dim(args[4].u.i, nd, &d2));
    if (d1 == d2) return tn_error(TN_ERR_RUNTIME, "diagonal dimensions cannot be identical %d, %d", d1, d2);
    int64_t off = args[2].u.i, s1 = is->u.ilist.data[d1], s2 = is->u.ilist.data[d2];
    int64_t st[TN_MAX_DIMS], vs[TN_MAX_DIMS], vst[TN_MAX_DIMS];
    tn_contiguous_strides(nd, is->u.ilist.data, st);
    int64_t a1 = off >= 0 ? s1 : tn_add_wrap(s1, off), a2 = off >= 0 ? tn_sub_wrap(s2, off) : s2;
    int64_t len = a1 < a2 ? a1 : a2;
    if (len < 0) len = 0;
    int64_t base = len == 0 ? 0 : off >= 0 ? tn_mul_wrap(off, st[d2]) : tn_mul_wrap(tn_sub_wrap(0, off), st[d1]);
    int j = 0;
    for (int i = 0; i < nd; i++)
        if (i != d1 && i != d2) { vs[j] = is->u.ilist.data[i]; vst[j] = st[i]; j++; }
    vs[j] = len;
    vst[j] = tn_add_wrap(st[d1], st[d2]);
    return scatter_view(is, args[0].u.t, nd - 1, vs, vst, base, rets);
}

/* A view of t with a size-1 dimension inserted at dim. */
static tn_tensor *unsqueeze_view(tn_tensor *t, int dim) {
    int64_t sz[TN_MAX_DIMS], st[TN_MAX_DIMS];
    for (int i = 0, j = 0; i <= t->ndim; i++) {
        if (i == dim) { sz[i] = 1; st[i] = dim < t->ndim ? t->sizes[dim] * t->strides[dim] : 1; continue; }
        sz[i] = t->sizes[j]; st[i] = t->strides[j]; j++;
    }
    return tn_tensor_new_view(t->storage, t->offset, t->ndim + 1, sz, st, t->dtype);
}

/* aten::value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim) -> Tensor:
 * zeros(sizes) with grad scattered to the selected positions (max.dim, median.dim, ...). */
tn_status tn_op_value_selecting_reduction_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *grad = args[0].u.t, *idx = args[2].u.t;
    bool keepdim = args[4].u.b;
    tn_tensor *z;
    TN_TRY(zeros_like_sizes(&args[3], grad, &z));
    if (z->ndim == 0) {
        /* a 0-dim input: the only position is selected, unless the index is empty (upstream's
         * scatter then writes nothing: zeros); dim is still wrapped as for one dimension */
        int d0;
        tn_status ws = tn_wrap_dim(args[1].u.i, 0, &d0);
        if (ws != TN_OK) { tn_tensor_release(z); return ws; }
        if (tn_tensor_numel(idx) == 0) {
            rets[0] = tn_value_tensor(z);
            return TN_OK;
        }
        tn_tensor *v = tn_tensor_new_view(z->storage, z->offset, 0, NULL, NULL, z->dtype);
        tn_status st = v ? copy_into(v, grad) : tn_error(TN_ERR_NO_MEMORY, "out of memory creating a view");
        if (st != TN_OK) { tn_tensor_release(z); return st; }
        rets[0] = tn_value_tensor(z);
        return TN_OK;
    }
    int dim, gd, id;
    /* upstream unsqueezes grad and indices at dim first (each wraps dim against its own
     * rank + 1), then scatters into zeros(sizes) */
    tn_status st = keepdim ? TN_OK : tn_wrap_dim(args[1].u.i, grad->ndim + 1, &gd);
    if (st == TN_OK && !keepdim) st = tn_wrap_dim(args[1].u.i, idx->ndim + 1, &id);
    if (st == TN_OK) st = tn_wrap_dim(args[1].u.i, z->ndim, &dim);
    (void)gd, (void)id;
    int add = keepdim ? 0 : 1; /* the ranks upstream's scatter then checks */
    if (st == TN_OK && idx->ndim + add != z->ndim)
        st = tn_error(TN_ERR_RUNTIME, "Index tensor must have the same number of dimensions as self tensor");
    else if (st == TN_OK && idx->ndim != grad->ndim)
        st = tn_error(TN_ERR_RUNTIME, "Index tensor must have the same number of dimensions as src tensor");
    tn_tensor *g = grad, *ix = idx;
    bool own = st == TN_OK && !keepdim; /* g and ix are new references only on this path */
    if (own) {
        g = grad->ndim < z->ndim ? unsqueeze_view(grad, dim) : (tn_tensor_retain(grad), grad);
        ix = idx->ndim < z->ndim ? unsqueeze_view(idx, dim) : (tn_tensor_retain(idx), idx);
        if (!g || !ix) st = tn_error(TN_ERR_NO_MEMORY, "out of memory creating a view");
    }
    if (st == TN_OK) {
        tn_value a[4] = {tn_value_tensor(z), tn_value_int(dim), tn_value_tensor(ix), tn_value_tensor(g)};
        tn_tensor *r = NULL;
        st = tn_nn_call1(TN_OP_scatter_src, a, &r);
        if (st == TN_OK) rets[0] = tn_value_tensor(r);
    }
    if (own) {
        if (g) tn_tensor_release(g);
        if (ix) tn_tensor_release(ix);
    }
    tn_tensor_release(z);
    return st;
}

/* aten::index_select_backward(grad, self_sizes, dim, index) -> Tensor:
 * zeros(self_sizes).index_add_(dim, index, grad), as a scatter_add with the index
 * broadcast along grad's other dimensions. */
tn_status tn_op_index_select_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *grad = args[0].u.t, *idx = args[3].u.t;
    tn_tensor *z;
    TN_TRY(zeros_like_sizes(&args[1], grad, &z));
    int dim;
    tn_status st = tn_wrap_dim(args[2].u.i, z->ndim ? z->ndim : 1, &dim);
    if (st == TN_OK && (idx->ndim > 1 || grad->ndim != z->ndim || (grad->ndim && grad->sizes[dim] != tn_tensor_numel(idx))))
        st = tn_error(TN_ERR_RUNTIME, "index_select_backward: index and grad do not match the selected dimension");
    tn_tensor *ix = NULL;
    if (st == TN_OK) {
        int64_t sz[TN_MAX_DIMS], str[TN_MAX_DIMS];
        for (int i = 0; i < grad->ndim; i++) { sz[i] = grad->sizes[i]; str[i] = 0; }
        if (grad->ndim) str[dim] = idx->ndim ? idx->strides[0] : 0;
        ix = tn_tensor_new_view(idx->storage, idx->offset, grad->ndim, sz, str, idx->dtype);
        if (!ix) st = tn_error(TN_ERR_NO_MEMORY, "out of memory creating a view");
    }
    if (st == TN_OK) {
        tn_value a[4] = {tn_value_tensor(z), tn_value_int(dim), tn_value_tensor(ix), tn_value_tensor(grad)};
        tn_tensor *r = NULL;
        st = tn_nn_call1(TN_OP_scatter_add, a, &r);
        if (st == TN_OK) rets[0] = tn_value_tensor(r);
    }
    if (ix) tn_tensor_release(ix);
    tn_tensor_release(z);
    return st;
}

/* aten::unfold_backward(grad_in, input_sizes, dim, size, step) -> Tensor */
tn_status tn_op_unfold_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gi = args[0].u.t;
    const tn_value *is = &args[1];
    int64_t size = args[3].u.i, step = args[4].u.i;
    if (is->tag != TN_V_INTLIST || is->u.ilist.n > TN_MAX_DIMS - 1)
        return tn_error(TN_ERR_RUNTIME, "unfold_backward: bad input sizes");
    int nd = (int)is->u.ilist.n, dim;
    TN_TRY(tn_wrap_dim(args[2].u.i, nd ? nd : 1, &dim));
    if (step <= 0) return tn_error(TN_ERR_RUNTIME, "step is %lld but must be > 0", (long long)step);
    int64_t D = nd ? is->u.ilist.data[dim] : 1, outer = 1, inner = 1;
    /* wrapping products (see scatter_view): zeros(input_sizes) refuses what is not a size */
    for (int i = 0; i < dim && i < nd; i++) outer = tn_mul_wrap(outer, is->u.ilist.data[i]);
    for (int i = dim + 1; i < nd; i++) inner = tn_mul_wrap(inner, is->u.ilist.data[i]);
    int64_t nw = D >= size ? (int64_t)((uint64_t)tn_sub_wrap(D, size) / (uint64_t)step) + 1 : 0;
    bool ok = gi->ndim == (nd ? nd : 1) + 1 && gi->sizes[gi->ndim - 1] == size;
    for (int i = 0; ok && i < nd; i++) ok = gi->sizes[i] == (i == dim ? nw : is->u.ilist.data[i]);
    if (!ok) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "unfold_backward: grad_in %s does not match the windows of the input",
                        TN_NN_FMT(gi, b));
    }
    if (tn_dtype_is_complex(gi->dtype)) { /* sums of copies: the real and imaginary parts alike */
        tn_cx c = {0};
        tn_tensor *re = tn_cx_call(&c, TN_OP_unfold_backward, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_real, TN_ARGS(TN_T(gi)))), args[1], args[2], args[3], args[4]));
        tn_tensor *im = tn_cx_call(&c, TN_OP_unfold_backward, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_imag, TN_ARGS(TN_T(gi)))), args[1], args[2], args[3], args[4]));
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_complex, TN_ARGS(TN_T(re), TN_T(im))), rets);
    }
    if (!tn_nn_is_float(gi->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"unfold_backward_cpu\" not implemented for '%s'",
                        tn_dtype_infos[gi->dtype].c10_name);
    tn_tensor *gx;
    TN_TRY(zeros_like_sizes(is, gi, &gx));
    if (!tn_tensor_is_meta(gi) && tn_tensor_numel(gx) > 0 && tn_tensor_numel(gi) > 0) {
        tn_dtype acc = tn_nn_acc(gi->dtype);
        tn_nn_buf bg = {0}, ob = {0};
        tn_status st = tn_nn_load(gi, acc, &bg);
        if (st == TN_OK) st = tn_nn_out_begin(gx, acc, &ob);
        if (st == TN_OK) {
            if (ob.owned) memset(ob.data, 0, (size_t)tn_tensor_numel(gx) * (size_t)tn_dtype_itemsize(acc));
            if (acc == TN_DTYPE_FLOAT32) f32_unfold_backward__scalar(ob.data, bg.data, outer, D, inner, nw, size, step);
            else f64_unfold_backward__scalar(ob.data, bg.data, outer, D, inner, nw, size, step);
            tn_nn_out_finish(gx, acc, &ob);
        }
        tn_nn_buf_free(&bg);
        tn_nn_buf_free(&ob);
        if (st != TN_OK) { tn_tensor_release(gx); return st; }
    }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* aten::embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq,
 * sparse) -> Tensor: the dense gradient (sparse gradients are refused by name). */
tn_status tn_op_embedding_backward(const tn_value *args, tn_value *rets) {
    if (args[5].u.b)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::embedding_backward with sparse=True is not implemented by "
                                                "torchnative");
    tn_value a[5] = {args[0], args[1], args[2], args[3], args[4]};
    tn_tensor *r;
    TN_TRY(tn_nn_call1(TN_OP_embedding_dense_backward, a, &r));
    rets[0] = tn_value_tensor(r);
    return TN_OK;
}
