/* quantile.h — the argument checks of quantile / nanquantile and the interpolation modes,
 * shared by their kernel (reduce_select.c) and their autograd decomposition
 * (autograd/decompose.c, upstream's sort / gather / lerp steps). Plain C11. */
#ifndef TN_OPS_QUANTILE_H
#define TN_OPS_QUANTILE_H

#include <stdbool.h>

#include "ops/dispatch.h"

enum { TN_Q_LINEAR, TN_Q_LOWER, TN_Q_HIGHER, TN_Q_MIDPOINT, TN_Q_NEAREST };

/* Checks quantile's arguments a = (self, q, dim, keepdim, interpolation), q a double when
 * q_scalar, else a tensor; upstream's order and errors. *mode = the interpolation
 * (TN_Q_*), *dim = the wrapped dim (0 without one). Tensor q values are range-checked
 * unless q is a meta tensor. */
tn_status tn_quantile_check(const tn_value *a, bool q_scalar, int *mode, int *dim);

#endif
