/* shape_view.c — operators whose results alias their input's storage (views): view,
 * reshape (a view when the geometry allows), transpose, permute, expand, squeeze,
 * slicing, splitting, diagonal, unfold and friends. Each result is a tn_tensor_new_view
 * on the input's storage, exactly where upstream returns a view. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ops/dispatch.h"
#include "ops/promote.h"
#include "ops/shape.h"

#define SIZES_BUF 512

/* Result 0 = a view of self's storage with the given geometry. */
static tn_status ret_view(tn_tensor *self, int64_t offset, int ndim, const int64_t *sizes,
                          const int64_t *strides, tn_dtype dtype, tn_value *rets) {
    TN_TRY(tn_check_view_numel(ndim, sizes));
    tn_tensor *v = tn_tensor_new_view(self->storage, offset, ndim, sizes, strides, dtype);
    if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    rets[0] = tn_value_tensor(v);
    return TN_OK;
}

static tn_status ret_alias(tn_tensor *self, tn_value *rets) {
    return ret_view(self, self->offset, self->ndim, self->sizes, self->strides, self->dtype, rets);
}

static tn_status ret_self(tn_tensor *self, tn_value *rets) {
    tn_tensor_retain(self);
    rets[0] = tn_value_tensor(self);
    return TN_OK;
}

/* An int[] argument; a bare int (int[1] spelled as a scalar) counts as a list of one. */
static void int_list(const tn_value *v, const int64_t **data, int64_t *n) {
    if (v->tag == TN_V_INT) { *data = &v->u.i; *n = 1; }
    else if (v->tag == TN_V_INTLIST) { *data = v->u.ilist.data; *n = v->u.ilist.n; }
    else { *data = NULL; *n = 0; }
}

/* "torch.FloatTensor" as upstream's toString() prints it in expand()'s message. */
static const char *type_string(const tn_tensor *t, char *buf, int n) {
    snprintf(buf, (size_t)n, "torch.%s%sTensor", tn_tensor_is_meta(t) ? "meta." : "",
             tn_dtype_infos[t->dtype].c10_name);
    return buf;
}

/* ---- view / reshape ----------------------------------------------------------------- */

/* view(self, size) geometry: the inferred sizes and view strides, or the upstream error. */
static tn_status view_geometry(const tn_tensor *self, int n, const int64_t *shape, int64_t *sizes,
                               int64_t *strides) {
    TN_TRY(tn_view_sizes(tn_tensor_numel(self), n, shape, sizes));
    if (!tn_view_strides(self->ndim, self->sizes, self->strides, n, sizes, strides))
        return tn_error(TN_ERR_RUNTIME,
                        "view size is not compatible with input tensor's size and stride (at least one "
                        "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
    return TN_OK;
}

static tn_status view_to(tn_tensor *self, int n, const int64_t *shape, tn_value *rets) {
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    TN_TRY(view_geometry(self, n, shape, sizes, strides));
    return ret_view(self, self->offset, n, sizes, strides, self->dtype, rets);
}

/* aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a) */
tn_status tn_op_view(const tn_value *args, tn_value *rets) {
    return view_to(args[0].u.t, (int)args[1].u.ilist.n, args[1].u.ilist.data, rets);
}

/* aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor */
tn_status tn_op_unsafe_view(const tn_value *args, tn_value *rets) { return tn_op_view(args, rets); }

/* aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a) */
tn_status tn_op_view_as(const tn_value *args, tn_value *rets) {
    return view_to(args[0].u.t, args[1].u.t->ndim, args[1].u.t->sizes, rets);
}

/* aten::view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a): reinterprets the bytes;
 * a change of element size rescales the last dimension (which must be dense). */
tn_status tn_op_view_dtype(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    tn_dtype dt = args[1].u.dtype;
    int64_t os = tn_dtype_itemsize(self->dtype), ns = tn_dtype_itemsize(dt);
    const char *on = tn_dtype_infos[self->dtype].c10_name, *nn = tn_dtype_infos[dt].c10_name;
    int nd = self->ndim;
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    if (os == ns) return ret_view(self, self->offset, nd, self->sizes, self->strides, dt, rets);
    if (nd == 0)
        return tn_error(TN_ERR_RUNTIME, "self.dim() cannot be 0 to view %s as %s (different element sizes)", on, nn);
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)nd);
    int64_t offset;
    if (os > ns) {
        int64_t r = os / ns;
        if (self->strides[nd - 1] != 1)
            return tn_error(TN_ERR_RUNTIME, "self.stride(-1) must be 1 to view %s as %s (different element sizes), but got %lld",
                            on, nn, (long long)self->strides[nd - 1]);
        for (int i = 0; i < nd - 1; i++) strides[i] = self->strides[i] * r;
        strides[nd - 1] = 1;
        sizes[nd - 1] *= r;
        offset = self->offset * r;
    } else {
        int64_t r = ns / os;
        if (self->sizes[nd - 1] % r)
            return tn_error(TN_ERR_RUNTIME, "self.size(-1) must be divisible by %lld to view %s as %s (different element sizes), but got %lld",
                            (long long)r, on, nn, (long long)self->sizes[nd - 1]);
        if (self->offset % r)
            return tn_error(TN_ERR_RUNTIME, "self.storage_offset() must be divisible by %lld to view %s as %s (different element sizes), but got %lld",
                            (long long)r, on, nn, (long long)self->offset);
        if (self->strides[nd - 1] != 1)
            return tn_error(TN_ERR_RUNTIME, "self.stride(-1) must be 1 to view %s as %s (different element sizes), but got %lld",
                            on, nn, (long long)self->strides[nd - 1]);
        for (int i = 0; i < nd - 1; i++) {
            if (self->strides[i] % r)
                return tn_error(TN_ERR_RUNTIME, "self.stride(%d) must be divisible by %lld to view %s as %s (different element sizes), but got %lld",
                                i, (long long)r, on, nn, (long long)self->strides[i]);
            strides[i] = self->strides[i] / r;
        }
        strides[nd - 1] = 1;
        sizes[nd - 1] /= r;
        offset = self->offset / r;
    }
    return ret_view(self, offset, nd, sizes, strides, dt, rets);
}

/* reshape: a view when upstream's stride rule allows one, else a contiguous copy. */
static tn_status reshape_to(tn_tensor *self, int n, const int64_t *shape, tn_value *rets) {
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    TN_TRY(tn_view_sizes(tn_tensor_numel(self), n, shape, sizes));
    if (tn_view_strides(self->ndim, self->sizes, self->strides, n, sizes, strides))
        return ret_view(self, self->offset, n, sizes, strides, self->dtype, rets);
    tn_tensor *copy;
    TN_TRY(tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), &copy));
    tn_shape_copy_same_dtype(copy, self);
    tn_contiguous_strides(n, sizes, strides);
    tn_status st = ret_view(copy, 0, n, sizes, strides, self->dtype, rets);
    tn_tensor_release(copy);
    return st;
}

/* aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a) */
tn_status tn_op_reshape(const tn_value *args, tn_value *rets) {
    return reshape_to(args[0].u.t, (int)args[1].u.ilist.n, args[1].u.ilist.data, rets);
}

/* aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a) */
tn_status tn_op_reshape_as(const tn_value *args, tn_value *rets) {
    return reshape_to(args[0].u.t, args[1].u.t->ndim, args[1].u.t->sizes, rets);
}

/* aten::_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a):
 * upstream trusts the caller's geometry and so reads outside the storage when it is wrong
 * (docs/RELIABILITY.md); ours checks it against the storage as as_strided does. */
tn_status tn_op_reshape_alias(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int n = (int)args[1].u.ilist.n;
    if (n != args[2].u.ilist.n) return tn_error(TN_ERR_RUNTIME, "mismatch in length of strides and shape");
    if (n > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions, got %d", TN_MAX_DIMS, n);
    for (int i = 0; i < n; i++)
        if (args[1].u.ilist.data[i] < 0)
            return tn_error(TN_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld",
                            (long long)args[1].u.ilist.data[i]);
    TN_TRY(tn_check_storage_bounds(n, args[1].u.ilist.data, args[2].u.ilist.data, self->offset,
                                   tn_dtype_itemsize(self->dtype), self->storage->nbytes));
    return ret_view(self, self->offset, n, args[1].u.ilist.data, args[2].u.ilist.data, self->dtype, rets);
}

/* aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) */
tn_status tn_op_as_strided(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    const int64_t *sz = args[1].u.ilist.data, *st = args[2].u.ilist.data;
    int n = (int)args[1].u.ilist.n;
    int64_t off = tn_value_is_none(&args[3]) ? self->offset : args[3].u.i;
    char b1[SIZES_BUF], b2[SIZES_BUF];
    if (n != args[2].u.ilist.n) return tn_error(TN_ERR_RUNTIME, "mismatch in length of strides and shape");
    if (n > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions, got %d", TN_MAX_DIMS, n);
    for (int i = 0; i < n; i++)
        if (st[i] < 0)
            return tn_error(TN_ERR_RUNTIME, "as_strided: Negative strides are not supported at the moment, got strides: %s",
                            tn_format_sizes(n, st, b1, sizeof b1));
    for (int i = 0; i < n; i++)
        if (sz[i] < 0)
            return tn_error(TN_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                            (long long)sz[i], tn_format_sizes(n, sz, b1, sizeof b1));
    /* Bytes the geometry spans (0 when any size is 0: such a view fits any storage); the
     * sum with the offset is checked too, or a wrapped product would pass the bounds check */
    int64_t span, need, w = tn_dtype_itemsize(self->dtype);
    TN_TRY(tn_storage_nbytes_for(n, sz, st, (int)w, &span));
    if (span && (__builtin_mul_overflow(off, w, &need) || __builtin_add_overflow(need, span, &need)))
        return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed with storage offset %lld",
                        (long long)off);
    if (span && need > self->storage->nbytes)
        return tn_error(TN_ERR_RUNTIME,
                        "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %lld requiring a "
                        "storage size of %lld are out of bounds for storage of size %lld",
                        tn_format_sizes(n, sz, b1, sizeof b1), tn_format_sizes(n, st, b2, sizeof b2),
                        (long long)off, (long long)w, (long long)need, (long long)self->storage->nbytes);
    if (off < 0) return tn_error(TN_ERR_RUNTIME, "Tensor: invalid storage offset %lld", (long long)off);
    return ret_view(self, off, n, sz, st, self->dtype, rets);
}

/* ---- dimension shuffles ------------------------------------------------------------- */

static tn_status transpose_of(tn_tensor *self, int64_t d0, int64_t d1, tn_value *rets) {
    int a, b;
    TN_TRY(tn_wrap_dim(d0, self->ndim, &a));
    TN_TRY(tn_wrap_dim(d1, self->ndim, &b));
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof sizes);
    memcpy(strides, self->strides, sizeof strides);
    if (self->ndim > 0) {
        sizes[a] = self->sizes[b]; sizes[b] = self->sizes[a];
        strides[a] = self->strides[b]; strides[b] = self->strides[a];
    }
    return ret_view(self, self->offset, self->ndim, sizes, strides, self->dtype, rets);
}

/* aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a) */
tn_status tn_op_transpose(const tn_value *args, tn_value *rets) {
    return transpose_of(args[0].u.t, args[1].u.i, args[2].u.i, rets);
}

/* aten::swapaxes / aten::swapdims: transpose under NumPy's names. */
tn_status tn_op_swapaxes(const tn_value *args, tn_value *rets) { return tn_op_transpose(args, rets); }

/* aten::t(Tensor(a) self) -> Tensor(a): transpose of a matrix; 0-D and 1-D unchanged. */
tn_status tn_op_t(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (self->ndim > 2)
        return tn_error(TN_ERR_RUNTIME, "t() expects a tensor with <= 2 dimensions, but self is %dD", self->ndim);
    return transpose_of(self, 0, self->ndim < 2 ? 0 : 1, rets);
}

/* Shared check of mT/mH/adjoint: at least two dims, or none (upstream returns a 0-D
 * tensor as it is; only 1-D is refused). */
static tn_status matrix_transpose(tn_tensor *self, const char *what, tn_value *rets) {
    if (self->ndim == 0) return transpose_of(self, 0, 0, rets);
    if (self->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "tensor.%s is only supported on matrices or batches of matrices. Got %d-D tensor.",
                        what, self->ndim);
    return transpose_of(self, -2, -1, rets);
}

/* aten::mT(Tensor(a) self) -> Tensor(a) */
tn_status tn_op_mT(const tn_value *args, tn_value *rets) { return matrix_transpose(args[0].u.t, "mT", rets); }

/* Conjugate transposes are plain transposes for real dtypes; of a complex tensor the
 * transpose with the conjugate bit flipped (ops/mathbits.h). */
static tn_status conj_transpose(tn_tensor *self, const char *what, const char *op, tn_value *rets) {
    (void)op;
    TN_TRY(matrix_transpose(self, what, rets));
    if (tn_dtype_is_complex(self->dtype)) rets[0].u.t->flags ^= TN_TENSOR_CONJ;
    return TN_OK;
}

/* aten::mH(Tensor(a) self) -> Tensor(a) */
tn_status tn_op_mH(const tn_value *args, tn_value *rets) { return conj_transpose(args[0].u.t, "mH", "mH", rets); }

/* aten::adjoint(Tensor(a) self) -> Tensor(a) */
tn_status tn_op_adjoint(const tn_value *args, tn_value *rets) {
    return conj_transpose(args[0].u.t, "adjoint()", "adjoint", rets);
}

/* aten::matrix_H(Tensor(a) self) -> Tensor(a): exactly a matrix, or a 0-D tensor (Tensor.H's rule). */
tn_status tn_op_matrix_H(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (self->ndim != 2 && self->ndim != 0)
        return tn_error(TN_ERR_RUNTIME, "tensor.H is only supported on matrices (2-D tensors). Got %d-D tensor.",
                        self->ndim);
    return conj_transpose(self, "matrix_H", "matrix_H", rets);
}

/* aten::numpy_T(Tensor(a) self) -> Tensor(a): all dimensions reversed. (Upstream's
 * deprecation warning for ndim not in {0, 2} is the binding's business.) */
tn_status tn_op_numpy_T(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int n = self->ndim;
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    for (int i = 0; i < n; i++) { sizes[i] = self->sizes[n - 1 - i]; strides[i] = self->strides[n - 1 - i]; }
    return ret_view(self, self->offset, n, sizes, strides, self->dtype, rets);
}

/* aten::permute(Tensor(a) self, int[] dims) -> Tensor(a) */
tn_status tn_op_permute(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    const int64_t *dims = args[1].u.ilist.data;
    int64_t n = args[1].u.ilist.n;
    if (n != self->ndim)
        return tn_error(TN_ERR_RUNTIME,
                        "permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                        "of the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %lld",
                        self->ndim, (long long)n);
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    bool seen[TN_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++) {
        int d;
        TN_TRY(tn_wrap_dim(dims[i], self->ndim, &d));
        if (seen[d]) return tn_error(TN_ERR_RUNTIME, "permute(): duplicate dims are not allowed.");
        seen[d] = true;
        sizes[i] = self->sizes[d];
        strides[i] = self->strides[d];
    }
    return ret_view(self, self->offset, (int)n, sizes, strides, self->dtype, rets);
}

/* Wraps a list of dims into `out` and rejects repeats ("dim 0 appears multiple times ..."). */
static tn_status wrap_dim_set(const int64_t *dims, int64_t n, int ndim, int *out, bool *mask) {
    for (int i = 0; i < TN_MAX_DIMS; i++) mask[i] = false;
    for (int64_t i = 0; i < n; i++) {
        TN_TRY(tn_wrap_dim(dims[i], ndim, &out[i]));
        if (mask[out[i]])
            return tn_error(TN_ERR_RUNTIME, "dim %d appears multiple times in the list of dims", out[i]);
        mask[out[i]] = true;
    }
    return TN_OK;
}

/* movedim: source dims go to destination slots; the rest keep their order. */
static tn_status movedim_of(tn_tensor *self, const int64_t *src, int64_t ns, const int64_t *dst, int64_t nd,
                            tn_value *rets) {
    char b1[SIZES_BUF], b2[SIZES_BUF];
    int n = self->ndim;
    if (ns != nd)
        return tn_error(TN_ERR_RUNTIME,
                        "movedim: Invalid source or destination dims: source (%s dims) should contain the same "
                        "number of dims as destination (%s dims)",
                        tn_format_sizes((int)ns, src, b1, sizeof b1), tn_format_sizes((int)nd, dst, b2, sizeof b2));
    int s[TN_MAX_DIMS], d[TN_MAX_DIMS];
    bool used_s[TN_MAX_DIMS] = {false}, used_d[TN_MAX_DIMS] = {false};
    if (ns > TN_MAX_DIMS) return tn_error(TN_ERR_INDEX, "movedim: too many dims");
    for (int64_t i = 0; i < ns; i++) {
        TN_TRY(tn_wrap_dim(src[i], n, &s[i]));
        TN_TRY(tn_wrap_dim(dst[i], n, &d[i]));
    }
    for (int64_t i = 0; i < ns; i++) {
        if (used_s[s[i]])
            return tn_error(TN_ERR_RUNTIME, "movedim: repeated dim in `source` (%s)", tn_format_sizes((int)ns, src, b1, sizeof b1));
        used_s[s[i]] = true;
    }
    for (int64_t i = 0; i < nd; i++) {
        if (used_d[d[i]])
            return tn_error(TN_ERR_RUNTIME, "movedim: repeated dim in `destination` (%s)", tn_format_sizes((int)nd, dst, b1, sizeof b1));
        used_d[d[i]] = true;
    }
    if (n == 0) return ret_alias(self, rets);
    int order[TN_MAX_DIMS];
    for (int i = 0; i < n; i++) order[i] = -1;
    for (int64_t i = 0; i < ns; i++) order[d[i]] = s[i];
    int next = 0;
    for (int i = 0; i < n; i++) {
        if (order[i] >= 0) continue;
        while (used_s[next]) next++;
        order[i] = next++;
    }
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    for (int i = 0; i < n; i++) { sizes[i] = self->sizes[order[i]]; strides[i] = self->strides[order[i]]; }
    return ret_view(self, self->offset, n, sizes, strides, self->dtype, rets);
}

/* aten::movedim.intlist / moveaxis.intlist */
tn_status tn_op_movedim_intlist(const tn_value *args, tn_value *rets) {
    const int64_t *s, *d;
    int64_t ns, nd;
    int_list(&args[1], &s, &ns);
    int_list(&args[2], &d, &nd);
    return movedim_of(args[0].u.t, s, ns, d, nd, rets);
}

/* aten::movedim.int / moveaxis.int */
tn_status tn_op_movedim_int(const tn_value *args, tn_value *rets) {
    return movedim_of(args[0].u.t, &args[1].u.i, 1, &args[2].u.i, 1, rets);
}

/* ---- expand / squeeze / unsqueeze / flatten ----------------------------------------- */

static tn_status expand_to(tn_tensor *self, int n, const int64_t *target, tn_value *rets) {
    char b1[SIZES_BUF], b2[SIZES_BUF], b3[64];
    if (n < self->ndim)
        return tn_error(TN_ERR_RUNTIME,
                        "expand(%s{%s}, size=%s): the number of sizes provided (%d) must be greater or equal to "
                        "the number of dimensions in the tensor (%d)",
                        type_string(self, b3, sizeof b3), tn_format_sizes(self->ndim, self->sizes, b1, sizeof b1),
                        tn_format_sizes(n, target, b2, sizeof b2), n, self->ndim);
    if (n > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions, got %d", TN_MAX_DIMS, n);
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    for (int i = n - 1; i >= 0; i--) {
        int d = i - (n - self->ndim);
        int64_t size = d >= 0 ? self->sizes[d] : 1;
        /* A new leading dim gets the stride a contiguous layout would give it (upstream). */
        int64_t stride = d >= 0 ? self->strides[d] : (i + 1 < n ? sizes[i + 1] * strides[i + 1] : 1);
        int64_t want = target[i];
        if (want == -1) {
            if (d < 0)
                return tn_error(TN_ERR_RUNTIME,
                                "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension %d", i);
            want = size;
        }
        if (size != want) {
            if (size != 1)
                return tn_error(TN_ERR_RUNTIME,
                                "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                                "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                                (long long)want, (long long)size, i, tn_format_sizes(n, target, b1, sizeof b1),
                                tn_format_sizes(self->ndim, self->sizes, b2, sizeof b2));
            if (want < 0) return tn_error(TN_ERR_RUNTIME, "numel: integer multiplication overflow");
            size = want;
            stride = 0;
        }
        sizes[i] = size;
        strides[i] = stride;
    }
    return ret_view(self, self->offset, n, sizes, strides, self->dtype, rets);
}

/* aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a) */
tn_status tn_op_expand(const tn_value *args, tn_value *rets) {
    return expand_to(args[0].u.t, (int)args[1].u.ilist.n, args[1].u.ilist.data, rets);
}

/* aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a) */
tn_status tn_op_expand_as(const tn_value *args, tn_value *rets) {
    return expand_to(args[0].u.t, args[1].u.t->ndim, args[1].u.t->sizes, rets);
}

/* Drops the dims in `mask` that have size 1. */
static tn_status squeeze_mask(tn_tensor *self, const bool *mask, tn_value *rets) {
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < self->ndim; i++) {
        if (mask[i] && self->sizes[i] == 1) continue;
        sizes[n] = self->sizes[i];
        strides[n] = self->strides[i];
        n++;
    }
    return ret_view(self, self->offset, n, sizes, strides, self->dtype, rets);
}

/* aten::squeeze(Tensor(a) self) -> Tensor(a) */
tn_status tn_op_squeeze(const tn_value *args, tn_value *rets) {
    bool all[TN_MAX_DIMS];
    for (int i = 0; i < TN_MAX_DIMS; i++) all[i] = true;
    return squeeze_mask(args[0].u.t, all, rets);
}

/* aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a) */
tn_status tn_op_squeeze_dim(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int d;
    bool mask[TN_MAX_DIMS] = {false};
    TN_TRY(tn_wrap_dim(args[1].u.i, self->ndim, &d));
    mask[d] = self->ndim > 0;
    return squeeze_mask(self, mask, rets);
}

/* aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a) */
tn_status tn_op_squeeze_dims(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    const int64_t *dims;
    int64_t n;
    int_list(&args[1], &dims, &n);
    int wrapped[TN_MAX_DIMS];
    bool mask[TN_MAX_DIMS];
    if (n > TN_MAX_DIMS) return tn_error(TN_ERR_INDEX, "squeeze: too many dims");
    TN_TRY(wrap_dim_set(dims, n, self->ndim, wrapped, mask));
    if (self->ndim == 0) mask[0] = false;
    return squeeze_mask(self, mask, rets);
}

/* aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a) */
tn_status tn_op_unsqueeze(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int d, n = self->ndim;
    TN_TRY(tn_wrap_dim(args[1].u.i, n + 1, &d));
    if (n + 1 > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions, got %d", TN_MAX_DIMS, n + 1);
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    for (int i = 0, j = 0; i <= n; i++) {
        if (i == d) {
            sizes[i] = 1;
            strides[i] = d >= n ? 1 : self->sizes[d] * self->strides[d];
        } else {
            sizes[i] = self->sizes[j];
            strides[i] = self->strides[j];
            j++;
        }
    }
    return ret_view(self, self->offset, n + 1, sizes, strides, self->dtype, rets);
}

/* aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a) */
tn_status tn_op_flatten(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int s, e;
    TN_TRY(tn_wrap_dim(args[1].u.i, self->ndim, &s));
    TN_TRY(tn_wrap_dim(args[2].u.i, self->ndim, &e));
    if (s > e) return tn_error(TN_ERR_RUNTIME, "flatten() has invalid args: start_dim cannot come after end_dim");
    if (self->ndim == 0) {
        int64_t one = 1;
        return reshape_to(self, 1, &one, rets);
    }
    if (s == e) return ret_self(self, rets);
    int64_t shape[TN_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < s; i++) shape[n++] = self->sizes[i];
    int64_t m = 1;
    for (int i = s; i <= e; i++) m *= self->sizes[i];
    shape[n++] = m;
    for (int i = e + 1; i < self->ndim; i++) shape[n++] = self->sizes[i];
    return reshape_to(self, n, shape, rets);
}

/* aten::unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a) */
tn_status tn_op_unflatten(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    const int64_t *want = args[2].u.ilist.data;
    int64_t nw = args[2].u.ilist.n;
    char b1[SIZES_BUF];
    int d;
    TN_TRY(tn_wrap_dim(args[1].u.i, self->ndim, &d));
    if (nw == 0) return tn_error(TN_ERR_RUNTIME, "unflatten: sizes must be non-empty");
    if (self->ndim - 1 + nw > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions", TN_MAX_DIMS);
    int64_t dsize = self->ndim ? self->sizes[d] : 1, inferred[TN_MAX_DIMS];
    if (tn_view_sizes(dsize, (int)nw, want, inferred) != TN_OK) {
        const char *msg = tn_error_message();
        if (strstr(msg, "is invalid for input of size"))
            return tn_error(TN_ERR_RUNTIME,
                            "unflatten: Provided sizes %s don't multiply up to the size of dim %d (%lld) in the input tensor",
                            tn_format_sizes((int)nw, want, b1, sizeof b1), d, (long long)dsize);
        char inner[SIZES_BUF];
        snprintf(inner, sizeof inner, "%s", msg);
        return tn_error(TN_ERR_RUNTIME, "unflatten got an unexpected error:\n%s", inner);
    }
    int64_t shape[TN_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < d; i++) shape[n++] = self->sizes[i];
    for (int64_t i = 0; i < nw; i++) shape[n++] = inferred[i];
    for (int i = d + 1; i < self->ndim; i++) shape[n++] = self->sizes[i];
    return view_to(self, n, shape, rets);
}

/* aten::alias(Tensor(a) self) -> Tensor(a) */
tn_status tn_op_alias(const tn_value *args, tn_value *rets) { return ret_alias(args[0].u.t, rets); }

/* aten::detach(Tensor(a) self) -> Tensor(a): shares storage; dropping the autograd
 * record is the autograd layer's job. */
tn_status tn_op_detach(const tn_value *args, tn_value *rets) { return ret_alias(args[0].u.t, rets); }

/* ---- slicing ------------------------------------------------------------------------ */

/* slice geometry on a wrapped dim: start/end clamped into [0, size], step > 0. */
static tn_tensor *slice_view(tn_tensor *self, int d, int64_t start, int64_t end, int64_t step) {
    int64_t size = self->sizes[d];
    if (start < 0) start += size;
    if (end < 0) end += size;
    if (start < 0) start = 0;
    else if (start >= size) start = size;
    if (end < start) end = start;
    else if (end >= size) end = size;
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof sizes);
    memcpy(strides, self->strides, sizeof strides);
    sizes[d] = tn_add_wrap(end - start, step - 1) / step; /* wraps as upstream's: a step of 2**63 - 1 gives 0 */
    strides[d] = tn_mul_wrap(self->strides[d], step); /* wraps as upstream's (a step of 2**62) */
    return tn_tensor_new_view(self->storage, self->offset + start * self->strides[d], self->ndim, sizes, strides,
                              self->dtype);
}

/* aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) */
tn_status tn_op_slice(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (self->ndim == 0) return tn_error(TN_ERR_INDEX, "slice() cannot be applied to a 0-dim tensor.");
    int d;
    TN_TRY(tn_wrap_dim(args[1].u.i, self->ndim, &d));
    int64_t step = args[4].u.i;
    if (step <= 0) return tn_error(TN_ERR_RUNTIME, "slice step must be positive");
    int64_t start = tn_value_is_none(&args[2]) ? 0 : args[2].u.i;
    int64_t end = tn_value_is_none(&args[3]) ? INT64_MAX : args[3].u.i;
    tn_tensor *v = slice_view(self, d, start, end, step);
    if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    rets[0] = tn_value_tensor(v);
    return TN_OK;
}

/* narrow's checks; on success *d and *start are wrapped. */
static tn_status narrow_check(tn_tensor *self, int64_t dim, int64_t *start, int64_t length, int *d) {
    if (self->ndim == 0) return tn_error(TN_ERR_RUNTIME, "narrow() cannot be applied to a 0-dim tensor.");
    if (length < 0) return tn_error(TN_ERR_RUNTIME, "narrow(): length must be non-negative.");
    TN_TRY(tn_wrap_dim(dim, self->ndim, d));
    int64_t cur = self->sizes[*d];
    if (*start < -cur || *start > cur)
        return tn_error(TN_ERR_INDEX, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                        (long long)-cur, (long long)cur, (long long)*start);
    if (*start < 0) *start += cur;
    if (*start > cur - length)
        return tn_error(TN_ERR_RUNTIME, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                        (long long)*start, (long long)length, (long long)cur);
    return TN_OK;
}

static tn_status narrow_of(tn_tensor *self, int64_t dim, int64_t start, int64_t length, tn_value *rets) {
    int d;
    TN_TRY(narrow_check(self, dim, &start, length, &d));
    tn_tensor *v = slice_view(self, d, start, start + length, 1);
    if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    rets[0] = tn_value_tensor(v);
    return TN_OK;
}

/* aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a) */
tn_status tn_op_narrow(const tn_value *args, tn_value *rets) {
    return narrow_of(args[0].u.t, args[1].u.i, args[2].u.i, args[3].u.i, rets);
}

/* Reads an integral 0-dim tensor as int64 (narrow.Tensor's start). */
static bool scalar_int_of(const tn_tensor *t, int64_t *out) {
    if (t->ndim != 0 || !tn_dtype_is_integral(t->dtype, false) || tn_tensor_is_meta(t)) return false;
    const void *p = tn_tensor_data(t);
    switch (t->dtype) {
    case TN_DTYPE_UINT8: *out = *(const uint8_t *)p; return true;
    case TN_DTYPE_INT8: *out = *(const int8_t *)p; return true;
    case TN_DTYPE_INT16: *out = *(const int16_t *)p; return true;
    case TN_DTYPE_INT32: *out = *(const int32_t *)p; return true;
    case TN_DTYPE_INT64: *out = *(const int64_t *)p; return true;
    default: return false;
    }
}

/* aten::narrow.Tensor(Tensor(a) self, int dim, Tensor start, SymInt length) -> Tensor(a) */
tn_status tn_op_narrow_tensor(const tn_value *args, tn_value *rets) {
    int64_t start;
    if (!scalar_int_of(args[2].u.t, &start)) return tn_error(TN_ERR_RUNTIME, "start must be an 0-dim integral Tensor.");
    return narrow_of(args[0].u.t, args[1].u.i, start, args[3].u.i, rets);
}

/* aten::narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor: narrow,
 * always into fresh contiguous memory. */
tn_status tn_op_narrow_copy(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int64_t start = args[2].u.i;
    int d;
    TN_TRY(narrow_check(self, args[1].u.i, &start, args[3].u.i, &d));
    tn_tensor *v = slice_view(self, d, start, start + args[3].u.i, 1), *out;
    if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_status st = tn_tensor_empty(v->ndim, v->sizes, v->dtype, tn_tensor_device(v), &out);
    if (st == TN_OK) {
        tn_shape_copy_same_dtype(out, v);
        rets[0] = tn_value_tensor(out);
    }
    tn_tensor_release(v);
    return st;
}

static tn_tensor *select_view(tn_tensor *self, int d, int64_t index) {
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    for (int i = 0, j = 0; i < self->ndim; i++) {
        if (i == d) continue;
        sizes[j] = self->sizes[i];
        strides[j] = self->strides[i];
        j++;
    }
    return tn_tensor_new_view(self->storage, self->offset + index * self->strides[d], self->ndim - 1, sizes, strides,
                              self->dtype);
}

/* aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a) */
tn_status tn_op_select(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    char b1[SIZES_BUF];
    if (self->ndim == 0) return tn_error(TN_ERR_INDEX, "select() cannot be applied to a 0-dim tensor.");
    int d;
    TN_TRY(tn_wrap_dim(args[1].u.i, self->ndim, &d));
    int64_t size = self->sizes[d], index = args[2].u.i;
    if (index < -size || index >= size)
        return tn_error(TN_ERR_INDEX, "select(): index %lld out of range for tensor of size %s at dimension %lld",
                        (long long)index, tn_format_sizes(self->ndim, self->sizes, b1, sizeof b1),
                        (long long)args[1].u.i);
    if (index < 0) index += size;
    tn_tensor *v = select_view(self, d, index);
    if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    rets[0] = tn_value_tensor(v);
    return TN_OK;
}

/* ---- splitting into lists ----------------------------------------------------------- */

/* Result list of slices [bounds[i], bounds[i+1]) along d (n pieces, clamped by slice). */
static tn_status slices_result(tn_tensor *self, int d, int64_t n, const int64_t *starts, const int64_t *ends,
                               tn_value *rets) {
    tn_tensor **parts = malloc(sizeof(tn_tensor *) * (size_t)(n > 0 ? n : 1));
    if (!parts) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        parts[i] = slice_view(self, d, starts[i], ends[i], 1);
        if (!parts[i]) {
            for (int64_t k = 0; k < i; k++) tn_tensor_release(parts[k]);
            free(parts);
            return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        }
    }
    tn_status st = tn_value_tensorlist_result(parts, n, &rets[0]);
    free(parts);
    return st;
}

/* Pieces of the given lengths along d, laid end to end from 0. */
static tn_status pieces_result(tn_tensor *self, int d, int64_t n, const int64_t *lengths, tn_value *rets) {
    int64_t *se = malloc(sizeof(int64_t) * 2 * (size_t)(n > 0 ? n : 1));
    if (!se) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    int64_t pos = 0;
    for (int64_t i = 0; i < n; i++) { se[i] = pos; pos += lengths[i]; se[n + i] = pos; }
    tn_status st = slices_result(self, d, n, se, se + n, rets);
    free(se);
    return st;
}

/* aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[] */
tn_status tn_op_unbind(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int d;
    TN_TRY(tn_wrap_dim_strict(args[1].u.i, self->ndim, &d));
    int64_t n = self->sizes[d];
    tn_tensor **parts = malloc(sizeof(tn_tensor *) * (size_t)(n > 0 ? n : 1));
    if (!parts) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        parts[i] = select_view(self, d, i);
        if (!parts[i]) {
            for (int64_t k = 0; k < i; k++) tn_tensor_release(parts[k]);
            free(parts);
            return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        }
    }
    tn_status st = tn_value_tensorlist_result(parts, n, &rets[0]);
    free(parts);
    return st;
}

/* Upstream builds a std::vector of the pieces (8 bytes each): more than its max_size refuses
 * before anything is allocated (split, chunk, tensor_split). */
static tn_status check_piece_count(int64_t n) {
    if ((uint64_t)n > (uint64_t)PTRDIFF_MAX / 8) return tn_error(TN_ERR_RUNTIME, "cannot create std::vector larger than max_size()");
    return TN_OK;
}

static tn_status split_of(tn_tensor *self, int64_t split_size, int64_t dim, tn_value *rets) {
    if (self->ndim == 0) return tn_error(TN_ERR_RUNTIME, "split expects at least a 1-dimensional tensor");
    int d;
    TN_TRY(tn_wrap_dim(dim, self->ndim, &d));
    if (split_size < 0)
        return tn_error(TN_ERR_RUNTIME, "split expects split_size be non-negative, but got split_size=%lld",
                        (long long)split_size);
    int64_t dsize = self->sizes[d];
    if (split_size == 0 && dsize != 0)
        return tn_error(TN_ERR_RUNTIME, "split_size can only be 0 if dimension size is 0, but got dimension size of %lld",
                        (long long)dsize);
    int64_t n = split_size ? tn_add_wrap(dsize, split_size - 1) / split_size : 1; /* upstream's int64 wrap */
    if (n < 1) n = 1;
    TN_TRY(check_piece_count(n));
    int64_t *lens = malloc(sizeof(int64_t) * (size_t)n);
    if (!lens) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) lens[i] = split_size;
    lens[n - 1] = tn_sub_wrap(split_size, tn_sub_wrap(tn_mul_wrap(split_size, n), dsize));
    tn_status st = pieces_result(self, d, n, lens, rets);
    free(lens);
    return st;
}

/* aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[] */
tn_status tn_op_split(const tn_value *args, tn_value *rets) {
    return split_of(args[0].u.t, args[1].u.i, args[2].u.i, rets);
}

static tn_status split_with_sizes_of(tn_tensor *self, const int64_t *sizes, int64_t n, int64_t dim, tn_value *rets) {
    char b1[SIZES_BUF];
    if (self->ndim == 0) return tn_error(TN_ERR_RUNTIME, "split expects at least a 1-dimensional tensor");
    int d;
    TN_TRY(tn_wrap_dim(dim, self->ndim, &d));
    int64_t sum = 0;
    for (int64_t i = 0; i < n; i++) {
        if (sizes[i] < 0)
            return tn_error(TN_ERR_RUNTIME,
                            "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=%s",
                            tn_format_sizes((int)n, sizes, b1, sizeof b1));
        sum = tn_add_wrap(sum, sizes[i]); /* upstream's int64 sum */
    }
    if (sum != self->sizes[d])
        return tn_error(TN_ERR_RUNTIME,
                        "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at "
                        "dimension %d), but got split_sizes=%s",
                        (long long)self->sizes[d], d, tn_format_sizes((int)n, sizes, b1, sizeof b1));
    return pieces_result(self, d, n, sizes, rets);
}

/* aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]
 * (also split.sizes) */
tn_status tn_op_split_with_sizes(const tn_value *args, tn_value *rets) {
    const int64_t *s;
    int64_t n;
    int_list(&args[1], &s, &n);
    return split_with_sizes_of(args[0].u.t, s, n, args[2].u.i, rets);
}

/* aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[] */
tn_status tn_op_chunk(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int64_t chunks = args[1].u.i;
    if (self->ndim == 0) return tn_error(TN_ERR_RUNTIME, "chunk expects at least a 1-dimensional tensor");
    if (chunks <= 0)
        return tn_error(TN_ERR_RUNTIME, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks);
    int d;
    TN_TRY(tn_wrap_dim(args[2].u.i, self->ndim, &d));
    int64_t dsize = self->sizes[d], split_size = tn_add_wrap(dsize, chunks - 1) / chunks; /* upstream's int64 wrap */
    if (split_size == 0 && dsize == 0) {
        /* split() would collapse to one piece; chunk keeps the number of empty chunks. */
        TN_TRY(check_piece_count(chunks));
        int64_t *lens = calloc((size_t)chunks, sizeof(int64_t));
        if (!lens) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        tn_status st = pieces_result(self, d, chunks, lens, rets);
        free(lens);
        return st;
    }
    return split_of(self, split_size, d, rets);
}

static tn_status tensor_split_sections(tn_tensor *self, int64_t sections, int64_t dim, tn_value *rets) {
    if (self->ndim == 0)
        return tn_error(TN_ERR_RUNTIME, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
    if (sections <= 0)
        return tn_error(TN_ERR_RUNTIME, "number of sections must be larger than 0, got %lld", (long long)sections);
    int d;
    TN_TRY(tn_wrap_dim(dim, self->ndim, &d));
    int64_t dsize = self->sizes[d], base = dsize / sections, extra = dsize % sections;
    TN_TRY(check_piece_count(sections));
    int64_t *lens = calloc((size_t)sections, sizeof(int64_t));
    if (!lens) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < sections; i++) lens[i] = i < extra ? base + 1 : base;
    tn_status st = pieces_result(self, d, sections, lens, rets);
    free(lens);
    return st;
}

static tn_status tensor_split_indices(tn_tensor *self, const int64_t *idx, int64_t n, int64_t dim, tn_value *rets) {
    if (self->ndim == 0)
        return tn_error(TN_ERR_RUNTIME, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
    int d;
    TN_TRY(tn_wrap_dim(dim, self->ndim, &d));
    int64_t *se = malloc(sizeof(int64_t) * 2 * (size_t)(n + 1));
    if (!se) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    int64_t start = 0;
    for (int64_t i = 0; i < n; i++) { se[i] = start; se[n + 1 + i] = idx[i]; start = idx[i]; }
    se[n] = start;
    se[2 * n + 1] = self->sizes[d];
    tn_status st = slices_result(self, d, n + 1, se, se + n + 1, rets);
    free(se);
    return st;
}

/* aten::tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[] */
tn_status tn_op_tensor_split_sections(const tn_value *args, tn_value *rets) {
    return tensor_split_sections(args[0].u.t, args[1].u.i, args[2].u.i, rets);
}

/* aten::tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[] */
tn_status tn_op_tensor_split_indices(const tn_value *args, tn_value *rets) {
    const int64_t *s;
    int64_t n;
    int_list(&args[1], &s, &n);
    return tensor_split_indices(args[0].u.t, s, n, args[2].u.i, rets);
}

/* aten::tensor_split.tensor_indices_or_sections(Tensor(a -> *) self, Tensor t, int dim=0) */
tn_status tn_op_tensor_split_tensor(const tn_value *args, tn_value *rets) {
    tn_tensor *t = args[1].u.t;
    if (t->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "tensor_split expected tensor_indices_or_sections to have dtype of long, but got %s",
                        tn_dtype_infos[t->dtype].c10_name);
    if (t->ndim > 1)
        return tn_error(TN_ERR_RUNTIME,
                        "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional "
                        "tensor, but got a tensor with %d dims", t->ndim);
    if (tn_tensor_is_meta(t))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::tensor_split with a meta index tensor is not implemented by torchnative");
    const int64_t *p = tn_tensor_data(t);
    if (t->ndim == 0) return tensor_split_sections(args[0].u.t, p ? p[0] : 0, args[2].u.i, rets);
    int64_t n = t->sizes[0], *idx = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!idx) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) idx[i] = p[i * t->strides[0]];
    tn_status st = tensor_split_indices(args[0].u.t, idx, n, args[2].u.i, rets);
    free(idx);
    return st;
}

/* ---- diagonal / unfold -------------------------------------------------------------- */

/* aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a) */
tn_status tn_op_diagonal(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int64_t off = args[1].u.i;
    int d1, d2;
    TN_TRY(tn_wrap_dim(args[2].u.i, self->ndim, &d1));
    TN_TRY(tn_wrap_dim(args[3].u.i, self->ndim, &d2));
    if (d1 == d2) return tn_error(TN_ERR_RUNTIME, "diagonal dimensions cannot be identical %lld, %lld",
                                  (long long)args[2].u.i, (long long)args[3].u.i);
    int64_t s1 = self->sizes[d1], s2 = self->sizes[d2], n;
    int64_t offset = self->offset;
    if (off >= 0) n = s1 < s2 - off ? s1 : s2 - off;
    else n = s1 + off < s2 ? s1 + off : s2;
    if (n < 0) n = 0;
    if (n > 0) offset += off >= 0 ? off * self->strides[d2] : -off * self->strides[d1];
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < self->ndim; i++) {
        if (i == d1 || i == d2) continue;
        sizes[k] = self->sizes[i];
        strides[k] = self->strides[i];
        k++;
    }
    sizes[k] = n;
    strides[k] = self->strides[d1] + self->strides[d2];
    return ret_view(self, offset, k + 1, sizes, strides, self->dtype, rets);
}

/* aten::unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a): windows of
 * `size` every `step` along a dim, as a new trailing dim. */
tn_status tn_op_unfold(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int64_t size = args[2].u.i, step = args[3].u.i;
    int d;
    TN_TRY(tn_wrap_dim(args[1].u.i, self->ndim, &d));
    int64_t max_size = self->ndim ? self->sizes[d] : 1;
    if (size > max_size)
        return tn_error(TN_ERR_RUNTIME, "maximum size for tensor at dimension %d is %lld but size is %lld", d,
                        (long long)max_size, (long long)size);
    if (size < 0) return tn_error(TN_ERR_RUNTIME, "size is %lld but must be >= 0", (long long)size);
    if (step <= 0) return tn_error(TN_ERR_RUNTIME, "step is %lld but must be > 0", (long long)step);
    if (self->ndim + 1 > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions", TN_MAX_DIMS);
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    int n = self->ndim;
    memcpy(sizes, self->sizes, sizeof sizes);
    memcpy(strides, self->strides, sizeof strides);
    if (n > 0) {
        sizes[d] = (self->sizes[d] - size) / step + 1;
        /* upstream's product wraps and its as_strided then refuses the negative stride */
        strides[d] = tn_mul_wrap(step, self->strides[d]);
        sizes[n] = size;
        strides[n] = self->strides[d];
        if (strides[d] < 0) {
            char b[256];
            return tn_error(TN_ERR_RUNTIME, "as_strided: Negative strides are not supported at the moment, got strides: %s",
                            tn_format_sizes(n + 1, strides, b, sizeof b));
        }
    } else {
        sizes[0] = size;
        strides[0] = 1;
    }
    return ret_view(self, self->offset, n + 1, sizes, strides, self->dtype, rets);
}

/* ---- contiguous --------------------------------------------------------------------- */

/* Channels-last strides (N, C, spatial...) with C innermost; sizes of 0 count as 1. */
static void channels_last_strides(int n, const int64_t *sizes, int64_t *strides) {
    int order[5];
    int k = 0;
    order[k++] = 1;
    for (int i = n - 1; i >= 2; i--) order[k++] = i;
    order[k++] = 0;
    int64_t st = 1;
    for (int i = 0; i < n; i++) {
        strides[order[i]] = st;
        st *= sizes[order[i]] > 1 ? sizes[order[i]] : 1;
    }
}

/* aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a):
 * self when already laid out so, else a copy. */
tn_status tn_op_contiguous(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int fmt = args[1].tag == TN_V_MEMFMT ? args[1].u.memfmt : 0;
    if (fmt == 0 || fmt == 1) {
        tn_tensor *out;
        if (fmt == 1 && !tn_tensor_is_contiguous(self))
            return tn_error(TN_ERR_RUNTIME, "preserve memory format is unsupported by the contiguous operator");
        TN_TRY(tn_tensor_contiguous(self, &out));
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    int want = fmt == 2 ? 4 : 5;
    if (self->ndim != want)
        return tn_error(TN_ERR_RUNTIME, "required rank %d tensor to use %s format", want,
                        fmt == 2 ? "channels_last" : "channels_last_3d");
    int64_t strides[TN_MAX_DIMS];
    channels_last_strides(want, self->sizes, strides);
    bool ok = true;
    for (int i = 0; i < want; i++)
        if (self->sizes[i] != 1 && self->strides[i] != strides[i]) ok = false;
    if (ok) return ret_self(self, rets);
    int64_t numel = tn_tensor_numel(self);
    tn_tensor *flat;
    TN_TRY(tn_tensor_empty(1, &numel, self->dtype, tn_tensor_device(self), &flat));
    tn_tensor *out = tn_tensor_new_view(flat->storage, 0, want, self->sizes, strides, self->dtype);
    tn_tensor_release(flat);
    if (!out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_shape_copy_same_dtype(out, self);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::view_as_real(Tensor(a) self) -> Tensor(a): the parts of a complex tensor as a
 * trailing dimension of 2 over the same storage (strides and offset doubled). The core has
 * no lazy conjugate bit, so every complex tensor here is resolved. */
tn_status tn_op_view_as_real(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (!tn_dtype_is_complex(self->dtype))
        return tn_error(TN_ERR_RUNTIME, "view_as_real is only supported for complex tensors");
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    if (self->ndim + 1 > TN_MAX_DIMS)
        return tn_error(TN_ERR_RUNTIME, "view_as_real: more than %d dimensions are not supported", TN_MAX_DIMS);
    for (int d = 0; d < self->ndim; d++) {
        sizes[d] = self->sizes[d];
        strides[d] = self->strides[d] * 2;
    }
    sizes[self->ndim] = 2;
    strides[self->ndim] = 1;
    return ret_view(self, self->offset * 2, self->ndim + 1, sizes, strides, tn_dtype_to_real(self->dtype), rets);
}

/* aten::view_as_complex(Tensor(a) self) -> Tensor(a): a trailing dimension of 2 (stride 1)
 * read as (real, imaginary) pairs; upstream's checks in its order and words. */
tn_status tn_op_view_as_complex(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    tn_dtype d = self->dtype;
    if (d != TN_DTYPE_FLOAT16 && d != TN_DTYPE_FLOAT32 && d != TN_DTYPE_FLOAT64)
        return tn_error(TN_ERR_RUNTIME,
                        "view_as_complex is only supported for half, float and double tensors, but got a tensor of "
                        "scalar type: %s", tn_dtype_infos[d].c10_name);
    int n = self->ndim;
    if (n == 0) return tn_error(TN_ERR_RUNTIME, "Input tensor must have one or more dimensions");
    if (self->sizes[n - 1] != 2) return tn_error(TN_ERR_RUNTIME, "Tensor must have a last dimension of size 2");
    if (self->strides[n - 1] != 1) return tn_error(TN_ERR_RUNTIME, "Tensor must have a last dimension with stride 1");
    int64_t strides[TN_MAX_DIMS];
    for (int k = 0; k < n - 1; k++) { /* a dimension of size 1 never steps: its stride is not checked */
        if (self->sizes[k] != 1 && self->strides[k] % 2 != 0)
            return tn_error(TN_ERR_RUNTIME, "Tensor must have a stride divisible by 2 for all but last dimension");
        strides[k] = self->strides[k] / 2;
    }
    if (self->offset % 2 != 0) return tn_error(TN_ERR_RUNTIME, "Tensor must have a storage_offset divisible by 2");
    return ret_view(self, self->offset / 2, n - 1, self->sizes, strides, tn_dtype_to_complex(d), rets);
}
