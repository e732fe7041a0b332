/* view_functional.c — the functional forms of the view operators: X_copy (the view X, then
 * a contiguous copy of it) and the view scatters (slice_scatter & co.: a copy of self with
 * the view's window replaced by src). Compositions through the door, as upstream composes
 * them, so meta, autograd and refusals attach at the operators that do the work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/dispatch.h"
#include "ops/shape.h"

/* rets[0] (a tensor or a tensor list) replaced by contiguous copies of itself. */
static tn_status contiguous_copies(tn_value *rets) {
    tn_value fmt = {.tag = TN_V_MEMFMT};
    fmt.u.memfmt = 0; /* contiguous, as upstream's *_copy kernels allocate */
    if (rets[0].tag == TN_V_TENSOR) {
        tn_value a[2] = {rets[0], fmt}, r[1];
        tn_status st = tn_dispatch(TN_OP_clone, a, r);
        tn_value_release(&rets[0]);
        if (st != TN_OK) return st;
        rets[0] = r[0];
        return TN_OK;
    }
    tn_tensor **ts = (tn_tensor **)rets[0].u.tlist.data; /* the list's malloc'd array is ours */
    for (int64_t i = 0; i < rets[0].u.tlist.n; i++) {
        tn_value a[2] = {tn_value_tensor(ts[i]), fmt}, r[1];
        tn_status st = tn_dispatch(TN_OP_clone, a, r);
        if (st != TN_OK) { tn_value_release(&rets[0]); return st; }
        tn_tensor_release(ts[i]);
        ts[i] = r[0].u.t;
    }
    return TN_OK;
}

static tn_status view_copy(tn_op_id view, const tn_value *args, tn_value *rets) {
    TN_TRY(tn_dispatch(view, args, rets));
    return contiguous_copies(rets);
}

/* aten::<view>_copy(same arguments as <view>) -> the view's result, copied contiguous. */
#define TN_VIEW_COPY(copy_op, view_op) \
    tn_status tn_op_##copy_op(const tn_value *args, tn_value *rets) { return view_copy(TN_OP_##view_op, args, rets); }
TN_VIEW_COPY(alias_copy, alias)
TN_VIEW_COPY(as_strided_copy, as_strided)
TN_VIEW_COPY(detach_copy, detach)
TN_VIEW_COPY(diagonal_copy, diagonal)
TN_VIEW_COPY(expand_copy, expand)
TN_VIEW_COPY(permute_copy, permute)
TN_VIEW_COPY(select_copy_int, select_int)
TN_VIEW_COPY(slice_copy_Tensor, slice_Tensor)
TN_VIEW_COPY(split_copy_Tensor, split_Tensor)
TN_VIEW_COPY(split_with_sizes_copy, split_with_sizes)
TN_VIEW_COPY(squeeze_copy, squeeze)
TN_VIEW_COPY(squeeze_copy_dim, squeeze_dim)
TN_VIEW_COPY(squeeze_copy_dims, squeeze_dims)
TN_VIEW_COPY(t_copy, t)
TN_VIEW_COPY(transpose_copy_int, transpose_int)
TN_VIEW_COPY(unbind_copy_int, unbind_int)
TN_VIEW_COPY(unfold_copy, unfold)
TN_VIEW_COPY(unsqueeze_copy, unsqueeze)
/* upstream copies what view cannot express (functionalization): reshape, not view */
TN_VIEW_COPY(view_copy, reshape)
TN_VIEW_COPY(view_copy_dtype, view_dtype)
TN_VIEW_COPY(_reshape_alias_copy, _reshape_alias)

/* upstream's clone_preserve_strides: self's whole storage cloned, then viewed with self's
 * sizes, strides and offset, so a window given in storage terms (as_strided's offset and
 * strides) addresses the clone as it addresses self; a self whose elements overlap (an
 * expanded view) and a meta self are cloned plainly. */
static tn_status clone_preserve_strides(const tn_value *self_v, tn_value *out) {
    tn_tensor *self = self_v->u.t;
    bool overlap = false;
    for (int d = 0; d < self->ndim; d++) overlap |= self->sizes[d] > 1 && self->strides[d] == 0;
    int64_t isz = tn_dtype_itemsize(self->dtype);
    if (overlap || tn_tensor_is_meta(self) || !self->storage || self->storage->nbytes % isz) {
        tn_value ca[2] = {*self_v, {.tag = TN_V_NONE}};
        return tn_dispatch(TN_OP_clone, ca, out);
    }
    tn_tensor *full = tn_tensor_alias(self), *v;
    if (!full) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    full->ndim = 1;
    full->offset = 0;
    full->sizes[0] = self->storage->nbytes / isz;
    full->strides[0] = 1;
    tn_value ca[2] = {tn_value_tensor(full), {.tag = TN_V_NONE}}, c[1];
    tn_status st = tn_dispatch(TN_OP_clone, ca, c);
    tn_tensor_release(full);
    if (st != TN_OK) return st;
    v = tn_tensor_alias(c[0].u.t);
    tn_value_release(&c[0]);
    if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    v->ndim = self->ndim;
    v->offset = self->offset;
    memcpy(v->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    memcpy(v->strides, self->strides, sizeof(int64_t) * (size_t)self->ndim);
    *out = tn_value_tensor(v);
    return TN_OK;
}

/* out = clone_preserve_strides(self); the view of out given by (view, the view's arguments
 * after self) receives src, which must have exactly the view's shape. */
static tn_status view_scatter(tn_op_id view, const tn_value *args, int nview_args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *src = args[1].u.t;
    tn_value out[1];
    /* under autograd slice/select/diagonal_scatter are recorded part by part (no formula of
     * their own), so their clone goes through the door; the values are the same (their
     * windows are relative to self), only the result's strides are the plain clone's */
    bool recorded = view != TN_OP_as_strided && ((self->flags | src->flags) & TN_TENSOR_REQUIRES_GRAD);
    if (recorded) {
        tn_value ca[2] = {args[0], {.tag = TN_V_NONE}};
        TN_TRY(tn_dispatch(TN_OP_clone, ca, out));
    } else {
        TN_TRY(clone_preserve_strides(&args[0], out));
    }
    tn_value va[8], win[1];
    va[0] = out[0];
    for (int i = 0; i < nview_args; i++) va[1 + i] = args[2 + i];
    tn_status st = tn_dispatch(view, va, win);
    if (st != TN_OK) { tn_value_release(&out[0]); return st; }
    tn_tensor *w = win[0].u.t;
    bool same = w->ndim == src->ndim;
    for (int i = 0; same && i < w->ndim; i++) same = w->sizes[i] == src->sizes[i];
    if (!same) {
        char b1[256], b2[256];
        tn_format_sizes(src->ndim, src->sizes, b1, sizeof b1);
        tn_format_sizes(w->ndim, w->sizes, b2, sizeof b2);
        st = tn_error(TN_ERR_RUNTIME, "expected src to have a size equal to the slice of self. src size = %s, slice "
                                      "size = %s", b1, b2);
    } else {
        tn_value cp[3] = {win[0], args[1], tn_value_bool(false)}, r[1];
        st = tn_dispatch(TN_OP_copy_, cp, r);
        if (st == TN_OK) tn_value_release(&r[0]);
    }
    tn_value_release(&win[0]);
    if (st != TN_OK) { tn_value_release(&out[0]); return st; }
    (void)self;
    rets[0] = out[0];
    return TN_OK;
}

/* aten::slice_scatter(self, src, dim=0, start=None, end=None, step=1) -> Tensor */
tn_status tn_op_slice_scatter(const tn_value *args, tn_value *rets) { return view_scatter(TN_OP_slice_Tensor, args, 4, rets); }
/* aten::select_scatter(self, src, dim, index) -> Tensor */
tn_status tn_op_select_scatter(const tn_value *args, tn_value *rets) { return view_scatter(TN_OP_select_int, args, 2, rets); }
/* aten::diagonal_scatter(self, src, offset=0, dim1=0, dim2=1) -> Tensor */
tn_status tn_op_diagonal_scatter(const tn_value *args, tn_value *rets) { return view_scatter(TN_OP_diagonal, args, 3, rets); }
/* aten::as_strided_scatter(self, src, size, stride, storage_offset=None) -> Tensor */
tn_status tn_op_as_strided_scatter(const tn_value *args, tn_value *rets) { return view_scatter(TN_OP_as_strided, args, 3, rets); }
