/* cast.h — element conversion between every pair of computation dtypes with upstream's
 * semantics (c10::convert): float->int truncates toward zero, out-of-range values follow
 * the x86 conversion instructions upstream's CPU build uses, ->bool is `!= 0`, double->
 * half/bfloat16 rounds through float (as c10 does), complex->real keeps the real part.
 *
 * Computation dtypes: Bool, Byte, Char, Short, Int, Long, UInt16/32/64, Half, BFloat16,
 * Float, Double, ComplexFloat, ComplexDouble. Plain C11. */
#ifndef TN_KERNELS_CAST_H
#define TN_KERNELS_CAST_H

#include "kernels/elementwise.h"

/* Loop converting data[1] (dtype `from`) into data[0] (dtype `to`); NULL when either
 * dtype is not a computation dtype. Same-dtype pairs copy bytes. */
tn_loop_fn tn_cast_loop(tn_dtype from, tn_dtype to);

/* The scalar reference loop for the same pair (no vector variant); tests compare with it. */
tn_loop_fn tn_cast_loop_scalar(tn_dtype from, tn_dtype to);

/* Whether `d` is one of the computation dtypes above. */
bool tn_cast_supported(tn_dtype d);
/* Registers the same-dtype copy loops' rows forms (kernels/elementwise.h; called once by the
 * elementwise tables' init). */
void tn_cast_register_rows(void);

/* Reads one element of dtype `d` at p as double / int64 / complex (for scalar values
 * such as .item() and original scalar operands). */
double tn_cast_load_double(const void *p, tn_dtype d);
int64_t tn_cast_load_int64(const void *p, tn_dtype d);
void tn_cast_load_complex(const void *p, tn_dtype d, double *re, double *im);

/* Writes one scalar into an element of dtype `d` with the conversion rules above; the
 * scalar is given as exactly one of int64 (kind 'i'), uint64 (kind 'u', its bits passed in i),
 * bool ('b'), double ('f'), complex ('c'). */
void tn_cast_store_scalar(void *p, tn_dtype d, char kind, int64_t i, double re, double im);

#endif
