/* ew_simd.h — entry points of the vectorised elementwise loops (ew_avx2.c, ew_avx512.c,
 * both generated from ew_vec.inc). Private to src/kernels/elementwise.c and cast.c. */
#ifndef TN_KERNELS_EW_SIMD_H
#define TN_KERNELS_EW_SIMD_H

#include "kernels/cast.h"
#include "kernels/elementwise.h"

/* Overwrites the entries of `t` that have a vector loop for this ISA; `ref` is the
 * scalar reference table the vector loops fall back to (kept alive by the caller). */
void tn_ew_register_avx2(tn_loop_fn (*t)[TN_DTYPE_COUNT], tn_loop_fn (*ref)[TN_DTYPE_COUNT]);
void tn_ew_register_avx512(tn_loop_fn (*t)[TN_DTYPE_COUNT], tn_loop_fn (*ref)[TN_DTYPE_COUNT]);

/* Vector conversion loop for (from, to), or NULL (float32 <-> bfloat16 / float16). */
tn_loop_fn tn_cast_vec_avx2(tn_dtype from, tn_dtype to);
tn_loop_fn tn_cast_vec_avx512(tn_dtype from, tn_dtype to);

/* Contiguous where / masked_fill / fill loops by element size (1, 2, 4, 8; NULL otherwise),
 * in that order; they fall back to the byte loops below for other layouts. */
void tn_ew_byte_loops_avx2(int itemsize, tn_loop_fn out[3]);
void tn_ew_byte_loops_avx512(int itemsize, tn_loop_fn out[3]);

/* The reference byte loops (elementwise.c), whatever the tier. */
tn_loop_fn tn_ew_where_loop_scalar(int itemsize);
tn_loop_fn tn_ew_masked_fill_loop_scalar(int itemsize);
tn_loop_fn tn_ew_fill_loop_scalar(int itemsize);

#endif
