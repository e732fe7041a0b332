/* reduce.h — shared machinery of the reduction family (src/ops/reduce*.c): dim-list
 * parsing with upstream's errors, output shapes, upstream TensorIterator's dimension
 * order for reductions, and per-element load/store by dtype.
 *
 * Internal to the reduction family; plain C11, no Python. */
#ifndef TN_OPS_REDUCE_H
#define TN_OPS_REDUCE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ops/dispatch.h"

/* Which dims of an input are reduced; bit d set = dim d reduced. */
typedef uint32_t tn_dim_mask;

/* Parses an `int[]? dim` (or `int? dim`) value into a mask for an ndim input. None (and,
 * when empty_is_all, an empty list) reduces every dim. Errors as upstream: IndexError for
 * out of range, RuntimeError for a repeated dim. */
tn_status tn_reduce_dim_mask(const tn_value *dim, int ndim, bool empty_is_all, tn_dim_mask *out);

/* Output sizes of reducing `t` over `mask` (kept as 1 with keepdim). Returns ndim. */
int tn_reduce_out_sizes(const tn_tensor *t, tn_dim_mask mask, bool keepdim, int64_t *sizes);

/* Iteration geometry in upstream TensorIterator order: dims reordered (reduced dims
 * first, then by stride) and coalesced. Strides in bytes; op 0 = output, op 1 = input. */
typedef struct tn_reduce_geom {
    int ndim;
    int nred;                  /* the first nred dims are the reduced ones */
    int64_t sizes[TN_MAX_DIMS];
    int64_t st[2][TN_MAX_DIMS];
} tn_reduce_geom;

/* Builds the geometry for reducing `in` over `mask` into `out` (out has the reduced
 * dims removed unless keepdim; its reduced dims get stride 0). */
void tn_reduce_geom_build(const tn_tensor *out, const tn_tensor *in, tn_dim_mask mask,
                          bool keepdim, tn_reduce_geom *g);

/* Calls fn(out, in, st = {os0, is0, os1, is1}, size0, size1, ctx) once per 2-D slice, as
 * upstream's serial_for_each does. */
typedef void (*tn_reduce_loop2d)(char *out, const char *in, const int64_t st[4], int64_t size0,
                                 int64_t size1, void *ctx);
void tn_reduce_for_each(const tn_reduce_geom *g, char *out, const char *in, tn_reduce_loop2d fn, void *ctx);
/* The same, the outermost dim (a kept one) cut among the pool's threads from 32,768
 * elements on, as upstream's parallel_dim_reduction cuts it (one part a thread, the cuts
 * rounded down to whole 128-byte lines when that dim's input elements, of in_esize bytes,
 * are adjacent): for loops whose outputs along that dim are independent. Each output sees
 * its elements in the serial order; a loop whose order depends on where a slice's columns
 * start (the float sums' column groups) sees upstream's slices. */
void tn_reduce_for_each_par(const tn_reduce_geom *g, char *out, const char *in, int64_t in_esize, tn_reduce_loop2d fn,
                            void *ctx);
/* The same walk over the elements [begin, end) of the iteration space only (linear order,
 * dim 0 fastest), one row of dim 0 per call (size1 = 1): a chunk of upstream's
 * parallel_for over one reduction. g has at least one element. */
void tn_reduce_for_range(const tn_reduce_geom *g, char *out, const char *in, int64_t begin, int64_t end,
                         tn_reduce_loop2d fn, void *ctx);

/* A copy of t converted to dtype, keeping t's strides when t is dense (upstream's
 * .to(dtype) with preserve_format), else contiguous. Returns t retained when the dtype
 * already matches. */
tn_status tn_reduce_to_dtype(tn_tensor *t, tn_dtype dtype, tn_tensor **out);

/* Refuses dtypes this family does not compute (complex, quantized, bits, float8). */
tn_status tn_reduce_check_dtype(const char *op, tn_dtype dt);

/* ---- element access ------------------------------------------------------------------ */

static inline double tn_rd_get(const char *p, tn_dtype dt) {
    switch (dt) {
    case TN_DTYPE_FLOAT32: { float v; memcpy(&v, p, 4); return v; }
    case TN_DTYPE_FLOAT64: { double v; memcpy(&v, p, 8); return v; }
    case TN_DTYPE_FLOAT16: { tn_half v; memcpy(&v, p, 2); return tn_half_to_f32(v); }
    case TN_DTYPE_BFLOAT16: { tn_bfloat16 v; memcpy(&v, p, 2); return tn_bf16_to_f32(v); }
    case TN_DTYPE_BOOL: return *(const uint8_t *)p != 0;
    case TN_DTYPE_UINT8: return *(const uint8_t *)p;
    case TN_DTYPE_INT8: return *(const int8_t *)p;
    case TN_DTYPE_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case TN_DTYPE_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case TN_DTYPE_INT64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case TN_DTYPE_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case TN_DTYPE_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case TN_DTYPE_UINT64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    default: return 0;
    }
}

static inline int64_t tn_rd_get_i(const char *p, tn_dtype dt) {
    switch (dt) {
    case TN_DTYPE_BOOL: return *(const uint8_t *)p != 0;
    case TN_DTYPE_UINT8: return *(const uint8_t *)p;
    case TN_DTYPE_INT8: return *(const int8_t *)p;
    case TN_DTYPE_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case TN_DTYPE_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case TN_DTYPE_INT64: { int64_t v; memcpy(&v, p, 8); return v; }
    case TN_DTYPE_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case TN_DTYPE_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case TN_DTYPE_UINT64: { uint64_t v; memcpy(&v, p, 8); return (int64_t)v; }
    default: { double d = tn_rd_get(p, dt); return (int64_t)d; }
    }
}

/* Stores v (float family: rounded once from double through float for reduced floats). */
static inline void tn_rd_set(char *p, tn_dtype dt, double v) {
    switch (dt) {
    case TN_DTYPE_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); return; }
    case TN_DTYPE_FLOAT64: memcpy(p, &v, 8); return;
    case TN_DTYPE_FLOAT16: { tn_half h = tn_f32_to_half((float)v); memcpy(p, &h, 2); return; }
    case TN_DTYPE_BFLOAT16: { tn_bfloat16 h = tn_f32_to_bf16((float)v); memcpy(p, &h, 2); return; }
    case TN_DTYPE_BOOL: *(uint8_t *)p = v != 0; return;
    default: break;
    }
    int64_t i = isnan(v) ? INT64_MIN : (v >= 9.2233720368547758e18 ? INT64_MIN : (v < -9.2233720368547758e18 ? INT64_MIN : (int64_t)v));
    switch (dt) {
    case TN_DTYPE_UINT8: *(uint8_t *)p = (uint8_t)i; return;
    case TN_DTYPE_INT8: *(int8_t *)p = (int8_t)i; return;
    case TN_DTYPE_INT16: { int16_t x = (int16_t)i; memcpy(p, &x, 2); return; }
    case TN_DTYPE_INT32: { int32_t x = (int32_t)i; memcpy(p, &x, 4); return; }
    case TN_DTYPE_INT64: memcpy(p, &i, 8); return;
    case TN_DTYPE_UINT16: { uint16_t x = (uint16_t)i; memcpy(p, &x, 2); return; }
    case TN_DTYPE_UINT32: { uint32_t x = (uint32_t)i; memcpy(p, &x, 4); return; }
    case TN_DTYPE_UINT64: memcpy(p, &i, 8); return;
    default: return;
    }
}

/* Stores an integer exactly (wrapping) or converted once for float targets. */
static inline void tn_rd_set_i(char *p, tn_dtype dt, int64_t i) {
    switch (dt) {
    case TN_DTYPE_FLOAT32: { float f = (float)i; memcpy(p, &f, 4); return; }
    case TN_DTYPE_FLOAT64: { double d = (double)i; memcpy(p, &d, 8); return; }
    case TN_DTYPE_FLOAT16: case TN_DTYPE_BFLOAT16: tn_rd_set(p, dt, (double)(float)i); return;
    case TN_DTYPE_BOOL: *(uint8_t *)p = i != 0; return;
    case TN_DTYPE_UINT8: *(uint8_t *)p = (uint8_t)i; return;
    case TN_DTYPE_INT8: *(int8_t *)p = (int8_t)i; return;
    case TN_DTYPE_INT16: { int16_t x = (int16_t)i; memcpy(p, &x, 2); return; }
    case TN_DTYPE_INT32: { int32_t x = (int32_t)i; memcpy(p, &x, 4); return; }
    case TN_DTYPE_INT64: memcpy(p, &i, 8); return;
    case TN_DTYPE_UINT16: { uint16_t x = (uint16_t)i; memcpy(p, &x, 2); return; }
    case TN_DTYPE_UINT32: { uint32_t x = (uint32_t)i; memcpy(p, &x, 4); return; }
    case TN_DTYPE_UINT64: memcpy(p, &i, 8); return;
    default: return;
    }
}

/* Byte address of the element at linear (row-major) index `lin` of t. */
static inline char *tn_rd_addr(const tn_tensor *t, int64_t lin) {
    char *p = (char *)tn_tensor_data(t);
    int64_t es = tn_dtype_itemsize(t->dtype);
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t s = t->sizes[d];
        p += (lin % s) * t->strides[d] * es;
        lin /= s;
    }
    return p;
}

#endif
