/* composite_private.c — underscore (private) aten operators upstream composes from public
 * ones: _safe_softmax, _chunk_cat, _unsafe_masked_index(_put_accumulate) and
 * _batch_norm_with_update. Each is the chain of door calls upstream's kernel makes, so
 * values follow upstream's, and decompose.c runs them as their parts under autograd. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/composite_internal.h"

static tn_value dtype_v(tn_dtype d) { tn_value v = {.tag = TN_V_DTYPE}; v.u.dtype = d; return v; }

/* aten::_safe_softmax(self, dim, dtype?): softmax, with rows that are entirely -inf giving
 * zeros instead of NaN (upstream: where(all(self == -inf, dim, keepdim), 0, softmax)). */
tn_status tn_op__safe_softmax(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    int64_t dim = args[1].u.i;
    TN_TRY(tn_cx_check_dim(dim, x->ndim));
    tn_cx c = {0};
    tn_tensor *out = tn_cx_call(&c, TN_OP_softmax_int, TN_ARGS(TN_T(x), TN_I(dim), args[2]));
    if (c.st == TN_OK && tn_dtype_is_complex(x->dtype)) /* upstream finds the -inf rows with isneginf */
        tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "isneginf does not support complex inputs."));
    tn_tensor *masked = tn_cx_call(&c, TN_OP_eq_Scalar, TN_ARGS(TN_T(x), TN_D(-INFINITY)));
    tn_tensor *rows = tn_cx_call(&c, TN_OP_all_dim, TN_ARGS(TN_T(masked), TN_I(dim), TN_B(true)));
    tn_tensor *zeros = tn_cx_call(&c, TN_OP_zeros_like, TN_ARGS(TN_T(out), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_MF(0)));
    return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_where_self, TN_ARGS(TN_T(rows), TN_T(zeros), TN_T(out))), rets);
}

/* aten::_chunk_cat(tensors, dim, num_chunks): each tensor zero-padded along dim to a
 * multiple of num_chunks and viewed as [sizes before dim, num_chunks, -1]; the views
 * concatenated along dim + 1. */
tn_status tn_op__chunk_cat(const tn_value *args, tn_value *rets) {
    tn_tensor *const *ts = args[0].u.tlist.data;
    int64_t n = args[0].u.tlist.n, dim = args[1].u.i, chunks = args[2].u.i;
    if (chunks < 1) return tn_error(TN_ERR_RUNTIME, "_chunk_cat expects positive num_chunks");
    if (n < 1) return tn_error(TN_ERR_RUNTIME, "_chunk_cat expects a non-empty input tensor list");
    bool same_ndim = true;
    for (int64_t k = 0; k < n; k++) {
        if (tn_tensor_numel(ts[k]) == 0) return tn_error(TN_ERR_RUNTIME, "_chunk_cat expects non-empty tensor");
        if (ts[k]->dtype != ts[0]->dtype)
            return tn_error(TN_ERR_RUNTIME, "_chunk_cat expects all input tensors with the same dtype");
        if (ts[k]->ndim != ts[0]->ndim) same_ndim = false;
    }
    if (same_ndim) {
        TN_TRY(tn_cx_check_dim(dim, ts[0]->ndim));
        dim = tn_cx_wrap_dim(dim, ts[0]->ndim);
    } else {
        if (dim < 0) return tn_error(TN_ERR_RUNTIME, "_chunk_cat expects non-negative dim when input tensors have different ndims");
        for (int64_t k = 0; k < n; k++)
            if (dim >= ts[k]->ndim) return tn_error(TN_ERR_RUNTIME, "_chunk_cat expects dim < ndim for all input tensors");
    }
    for (int64_t k = 0; k < n; k++)
        for (int64_t d = 0; d < dim; d++)
            if (ts[k]->sizes[d] != ts[0]->sizes[d])
                return tn_error(TN_ERR_RUNTIME, "_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors");
    tn_tensor **parts = calloc((size_t)n, sizeof *parts);
    if (!parts) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_cx c = {0};
    for (int64_t k = 0; k < n && c.st == TN_OK; k++) {
        tn_tensor *t = ts[k];
        int64_t size = t->sizes[dim], padded = tn_mul_wrap(tn_add_wrap(size, chunks - 1) / chunks, chunks); /* upstream's wrap */
        if (padded < size) { /* wrapped: upstream's narrow of the zero-padded copy refuses */
            tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "start (0) + length (%lld) exceeds dimension size (%lld).",
                                    (long long)size, (long long)padded));
            break;
        }
        if (padded != size) {
            /* constant_pad_nd's pad list runs from the last dim: zeros up to dim, then (0, extra) */
            int64_t pad[2 * TN_MAX_DIMS] = {0};
            int64_t np = 2 * (t->ndim - dim);
            pad[np - 1] = padded - size;
            t = tn_cx_call(&c, TN_OP_constant_pad_nd, TN_ARGS(TN_T(t), tn_value_intlist(pad, np), TN_I(0)));
        }
        int64_t view[TN_MAX_DIMS + 1];
        for (int64_t d = 0; d < dim; d++) view[d] = ts[k]->sizes[d];
        view[dim] = chunks;
        view[dim + 1] = -1;
        parts[k] = t ? tn_cx_call(&c, TN_OP_reshape, TN_ARGS(TN_T(t), tn_value_intlist(view, dim + 2))) : NULL;
    }
    tn_tensor *o = tn_cx_call(&c, TN_OP_cat, TN_ARGS(tn_value_tensorlist(parts, n), TN_I(dim + 1)));
    free(parts);
    return tn_cx_finish(&c, o, rets);
}

/* Each index of `indices` clamped to [-size, size - 1] of the dim it indexes (upstream's
 * clamp, so an out-of-range index where the mask is false reads a valid element). */
static tn_status clamp_indices(tn_cx *c, tn_tensor *self, const tn_value *ind, tn_tensor **out) {
    int64_t n = ind->u.tlist.n;
    if (n > self->ndim)
        return tn_error(TN_ERR_INDEX, "too many indices for tensor of dimension %d (got %lld)", self->ndim, (long long)n);
    for (int64_t i = 0; i < n; i++) {
        tn_tensor *t = ind->u.tlist.data[i];
        out[i] = NULL;
        if (!t) continue;
        if (t->dtype != TN_DTYPE_INT64 && t->dtype != TN_DTYPE_INT32)
            return tn_error(TN_ERR_RUNTIME, "_unsafe_masked_index found unexpected index type %s", tn_dtype_infos[t->dtype].c10_name);
        int64_t s = self->sizes[i];
        out[i] = tn_cx_call(c, TN_OP_clamp, TN_ARGS(TN_T(t), TN_I(-s), TN_I(s - 1)));
    }
    return c->st;
}

/* aten::_unsafe_masked_index(self, mask, indices, fill) = where(mask, self[indices], fill),
 * the indices clamped first. An empty self gives new_full(sizes, fill)[indices], where
 * upstream's sizes are 1 for an indexed empty dim, the dim's size for the other listed dims
 * and 0 for the dims past the list (its size vector starts zeroed). */
tn_status tn_op__unsafe_masked_index(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *mask = args[1].u.t;
    tn_cx c = {0};
    tn_tensor *idx[TN_MAX_DIMS];
    int64_t n = args[2].u.tlist.n;
    tn_status st = clamp_indices(&c, self, &args[2], idx);
    if (st != TN_OK) {
        tn_cx_fail(&c, st);
        return tn_cx_finish(&c, NULL, rets);
    }
    tn_tensor *o;
    if (tn_tensor_numel(self) == 0) {
        int64_t sizes[TN_MAX_DIMS] = {0};
        for (int64_t i = 0; i < n; i++) sizes[i] = (idx[i] && self->sizes[i] == 0) ? 1 : self->sizes[i];
        tn_tensor *full = tn_cx_call(&c, TN_OP_new_full, TN_ARGS(TN_T(self), tn_value_intlist(sizes, self->ndim), args[3],
                                                                 TN_NONE, TN_NONE, TN_NONE, TN_NONE));
        o = tn_cx_call(&c, TN_OP_index_Tensor, TN_ARGS(TN_T(full), tn_value_tensorlist(idx, n)));
    } else {
        o = tn_cx_call(&c, TN_OP_index_Tensor, TN_ARGS(TN_T(self), tn_value_tensorlist(idx, n)));
        tn_tensor *keep = tn_cx_call(&c, TN_OP_logical_not, TN_ARGS(TN_T(mask)));
        o = tn_cx_call(&c, TN_OP_masked_fill_Scalar, TN_ARGS(TN_T(o), TN_T(keep), args[3]));
    }
    return tn_cx_finish(&c, o, rets);
}

/* aten::_unsafe_masked_index_put_accumulate(self, mask, indices, values): the backward of
 * _unsafe_masked_index, index_put(self, clamped indices, values masked to 0, accumulate). */
tn_status tn_op__unsafe_masked_index_put_accumulate(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *mask = args[1].u.t, *values = args[3].u.t;
    tn_cx c = {0};
    if (tn_tensor_numel(self) == 0)
        return tn_cx_finish(&c, tn_cx_call(&c, TN_OP_clone, TN_ARGS(TN_T(self), TN_NONE)), rets);
    tn_tensor *idx[TN_MAX_DIMS];
    tn_status st = clamp_indices(&c, self, &args[2], idx);
    if (st != TN_OK) {
        tn_cx_fail(&c, st);
        return tn_cx_finish(&c, NULL, rets);
    }
    tn_tensor *keep = tn_cx_call(&c, TN_OP_logical_not, TN_ARGS(TN_T(mask)));
    tn_tensor *v = tn_cx_call(&c, TN_OP_masked_fill_Scalar, TN_ARGS(TN_T(values), TN_T(keep), TN_I(0)));
    tn_tensor *o = tn_cx_call(&c, TN_OP_index_put, TN_ARGS(TN_T(self), tn_value_tensorlist(idx, args[2].u.tlist.n), TN_T(v), TN_B(true)));
    return tn_cx_finish(&c, o, rets);
}

/* aten::_batch_norm_with_update(input, weight?, bias?, running_mean!, running_var!,
 * momentum, eps) -> (out, save_mean, save_invstd, reserve): native_batch_norm in training
 * mode (which updates the running statistics) and upstream's CPU reserve, an empty uint8
 * tensor (only cuDNN fills one). */
tn_status tn_op__batch_norm_with_update(const tn_value *args, tn_value *rets) {
    tn_value a[8] = {args[0], args[1], args[2], args[3], args[4], TN_B(true), args[5], args[6]};
    TN_TRY(tn_dispatch(TN_OP_native_batch_norm, a, rets));
    int64_t zero = 0;
    tn_value e[6] = {tn_value_intlist(&zero, 1), dtype_v(TN_DTYPE_UINT8), TN_NONE, TN_NONE, TN_NONE, TN_NONE};
    tn_status st = tn_dispatch(TN_OP_empty_memory_format, e, &rets[3]);
    if (st != TN_OK)
        for (int k = 0; k < 3; k++) tn_value_release(&rets[k]);
    return st;
}
