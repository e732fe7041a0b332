/* complex_parts.h — what complex_parts.c offers other op families. */
#ifndef TN_OPS_COMPLEX_PARTS_H
#define TN_OPS_COMPLEX_PARTS_H

#include "ops/value.h"

/* |z| of complex tensor x into rets[0] (a real tensor of the parts' dtype). */
tn_status tn_complex_abs(tn_tensor *x, tn_value *rets);

/* A real bilinear operation applied to complex operands by three real ones over the parts
 * (Gauss's product, upstream's complex convolution): with x = xr + i xi, w = wr + i wi,
 * b = br + i bi (b may be NULL), p1 = f(xr, wr, br), p2 = f(xi, wi, -),
 * p3 = f(xr + xi, wr + wi, br + bi), the result is (p1 - p2) + i ((p3 - p1) - p2), rounded in
 * that order, so it is bit-identical to upstream's wherever f is. `f` computes the real
 * operation (its own checks apply to the parts) with `ctx` its further arguments; *out is a
 * new contiguous complex tensor. */
typedef tn_status (*tn_real_bilinear_fn)(tn_tensor *x, tn_tensor *w, tn_tensor *b, void *ctx, tn_tensor **out);
tn_status tn_complex_bilinear(tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_real_bilinear_fn f, void *ctx, tn_tensor **out);

#endif
