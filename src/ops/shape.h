/* shape.h — geometry helpers of the shape family that other op families may call:
 * view-size inference, upstream's view-stride rule, broadcasting of shapes, a
 * same-dtype strided copy, contiguous(), and tensor-list results.
 *
 * Plain C11; no Python. */
#ifndef TN_OPS_SHAPE_H
#define TN_OPS_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"
#include "ops/value.h"

/* Resolves a view/reshape shape request for a tensor of `numel` elements: at most one
 * -1 entry is inferred, other entries must be >= 0 and multiply to numel. Writes n
 * sizes to `out` (RuntimeError with upstream's messages otherwise). */
tn_status tn_view_sizes(int64_t numel, int n, const int64_t *shape, int64_t *out);

/* Upstream's computeStride: strides letting `new_sizes` view a tensor of geometry
 * (old_sizes, old_strides) without copying. Returns false when no such strides exist
 * (the data would have to be copied: reshape copies, view refuses). */
bool tn_view_strides(int old_ndim, const int64_t *old_sizes, const int64_t *old_strides,
                     int new_ndim, const int64_t *new_sizes, int64_t *new_strides);

/* Broadcast shape of a (na dims) and b (nb dims) into out (max(na, nb) dims), with
 * upstream's "The size of tensor a (..) must match ..." RuntimeError. */
tn_status tn_shape_broadcast(int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                             int64_t *out);

/* A view of t expanded (stride 0) to `ndim` sizes; t's shape must broadcast to it.
 * Returns a new reference in *out. */
tn_status tn_shape_expand_view(tn_tensor *t, int ndim, const int64_t *sizes, tn_tensor **out);
/* The inverse for reading or writing each distinct element once: a view of t (the same
 * elements, the same conjugate / negative bits) with every dim of stride 0 and size > 1 cut
 * to size 1; *out = NULL when t has none (the caller keeps t). */
tn_status tn_shape_unexpanded_view(const tn_tensor *t, tn_tensor **out);

#define TN_STRIDED_MAX_DIMS (2 * TN_MAX_DIMS)

/* Copies a strided block of ndim (<= TN_STRIDED_MAX_DIMS) sizes from s to d, strides in
 * elements of `itemsize` bytes (negative and zero source strides allowed). No-op when
 * either pointer is NULL (meta tensors). */
void tn_strided_copy_bytes(char *d, const int64_t *dst_strides, const char *s, const int64_t *src_strides,
                           int ndim, const int64_t *sizes, int itemsize);

/* Copies the view of src's storage at src's offset with `sizes` and src_strides into the view
 * of dst's storage at dst's offset with dst_strides (strides in elements, ndim <=
 * TN_MAX_DIMS, the same dtype): through copy_'s iterator (its vector loops, the pool) for the
 * dtypes copy_ moves, else tn_strided_copy_bytes. Neither tensor's own sizes matter. */
tn_status tn_shape_copy_view(tn_tensor *dst, const int64_t *dst_strides, tn_tensor *src, const int64_t *src_strides,
                             int ndim, const int64_t *sizes);

/* Copies src into dst element by element: same dtype, same shape, any strides. Meta
 * tensors are skipped (they have no data). Overlapping dst/src is not supported. */
void tn_shape_copy_same_dtype(tn_tensor *dst, const tn_tensor *src);

/* The tensor an operator whose result starts as a copy of self writes (the scatters,
 * index_add): self itself (retained) when `in_place` (the door offered it: the derived
 * in-place form), after checking that index and src (either may be NULL) share no memory with
 * it, as upstream does before writing; else a new contiguous copy of self. */
tn_status tn_shape_self_or_copy(tn_tensor *self, bool in_place, const tn_tensor *index, const tn_tensor *src, tn_tensor **out);

/* Copies src into dst (same shape): same dtype by the strided copy above, different
 * dtypes through aten::copy_ at the door. */
tn_status tn_shape_copy(tn_tensor *dst, tn_tensor *src);

/* contiguous(): a new reference to t itself when already contiguous, else a contiguous
 * copy (same dtype and device). */
tn_status tn_tensor_contiguous(tn_tensor *t, tn_tensor **out);

/* empty_like(t) with upstream's preserve rule: t's strides when t is non-overlapping and
 * dense, else contiguous. */
tn_status tn_shape_empty_like(const tn_tensor *t, tn_tensor **out);


/* Sets every element of t to the element at `elem` (itemsize bytes). */
void tn_shape_fill_bytes(tn_tensor *t, const void *elem);

/* Builds a TN_V_TENSORLIST result of n tensors. The array is malloc'd and, with one
 * reference per tensor, owned by the receiver (release with tn_value_release). On
 * failure the tensors are released. */
tn_status tn_value_tensorlist_result(tn_tensor **tensors, int64_t n, tn_value *ret);

#endif
