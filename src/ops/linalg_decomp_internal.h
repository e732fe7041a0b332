/* linalg_decomp_internal.h — helpers shared by the linear-algebra operator files
 * (linalg_decomp.c, linalg_decomp_qr.c, linalg_compose.c): argument checks with upstream's
 * wording, and the float64 gather / write-back every decomposition operator uses. */
#ifndef TN_OPS_LINALG_DECOMP_INTERNAL_H
#define TN_OPS_LINALG_DECOMP_INTERNAL_H

#include "ops/dispatch.h"

/* float32/float64 pass; integers raise upstream's RuntimeError ("<api>: Expected a floating
 * point or complex tensor as input. Got Long"), float16/bfloat16 its NotImplementedError (the
 * LAPACK kernel has no such dtype), complex refuses by name. */
tn_status tn_la_need_float(const char *api, const tn_tensor *t);
/* tn_la_need_float, and complex64 / complex128 pass (the operators with complex kernels);
 * ComplexHalf is refused as float16 is */
tn_status tn_la_need_float_or_complex(const char *api, const tn_tensor *t);
/* tn_la_need_float_kernel, and complex64 / complex128 pass */
tn_status tn_la_need_float_kernel_or_complex(const char *kernel, const tn_tensor *t);
/* tn_la_need_float, but float16/bfloat16/ComplexHalf raise upstream's RuntimeError "<api>: Low precision
 * dtypes not supported. Got Half" (the front-ends that check it: inv, slogdet, ...). */
tn_status tn_la_need_float_lp(const char *api, const tn_tensor *t);
/* The same for the operators upstream dispatches without a dtype check of their own
 * (geqrf, cholesky, cholesky_solve, ...): every other dtype is NotImplementedError
 * "\"<kernel>\" not implemented for 'Long'". */
tn_status tn_la_need_float_kernel(const char *kernel, const tn_tensor *t);
/* "<api>: The input tensor <name> must have at least 2 dimensions." */
tn_status tn_la_need_matrix(const char *api, const tn_tensor *t, const char *name);
/* the above, and "<api>: <name> must be batches of square matrices, but they are m by n matrices" */
tn_status tn_la_need_square(const char *api, const tn_tensor *t, const char *name);
/* The number of matrices in a tensor of these sizes (product of all but the last two). */
/* The product of the batch dims (all but the last two): 0 if one is 0, INT64_MAX when it
 * does not fit int64 (a huge expanded batch; tn_la_check_numel refuses that). */
int64_t tn_la_batch(int ndim, const int64_t *sizes);
/* Doubles per element in the scratch buffers: 2 for complex (re, im), else 1. */
static inline int tn_la_w(tn_dtype d) { return tn_dtype_is_complex(d) ? 2 : 1; }
/* Every element of t (float32 or float64, any strides) in row-major order into dst, as
 * float64; complex64 / complex128 as (re, im) pairs of doubles (dst holds 2 doubles an
 * element: layout-compatible with double _Complex). No-op for meta tensors. */
void tn_la_gather(const tn_tensor *t, double *dst);
/* t expanded to `sizes` (broadcast), gathered into a new calloc'd buffer *dst (caller frees). */
tn_status tn_la_gather_expanded(tn_tensor *t, int ndim, const int64_t *sizes, double **dst);
/* A new contiguous tensor of dtype dt (float32/float64/int32/int64/bool, or complex64 /
 * complex128 from (re, im) pairs) holding src (row-major; NULL leaves it uninitialised). */
tn_status tn_la_new(tn_dtype dt, tn_device dev, int ndim, const int64_t *sizes, const double *src, tn_tensor **out);
tn_status tn_la_new_i32(tn_device dev, int ndim, const int64_t *sizes, const int32_t *src, tn_tensor **out);
/* calloc of n elements of `size` bytes (at least one element, so 0 is not a failure). */
void *tn_la_alloc(int64_t n, size_t size);
/* RuntimeError "Storage size calculation overflowed" (upstream's, from the result's
 * shape) unless batch x rows x cols elements of w doubles each count within int64: the
 * check before a buffer size is multiplied out. */
tn_status tn_la_check_numel(int64_t batch, int64_t rows, int64_t cols, int64_t w);

#endif
