/* scalar_convert.h — a Scalar argument to one element of a dtype, checked as upstream's
 * Scalar::to<T>. */
#ifndef TN_OPS_SCALAR_CONVERT_H
#define TN_OPS_SCALAR_CONVERT_H

#include "ops/value.h"

/* Converts a Scalar (bool, int, uint, double or complex value) to one element of `dtype` at
 * out (any alignment; the dtype's itemsize bytes written) with upstream's checks and error
 * text ("value cannot be converted to type int without overflow"): NaN, infinities and
 * values outside [lowest, max] refuse for the integers, finite values beyond the type's
 * max for float, Half and BFloat16, a nonzero imaginary part for every real type but Bool. */
tn_status tn_scalar_to_bytes(const tn_value *v, tn_dtype dtype, void *out);

#endif
