/* scalar.h — reading and writing one element of any computation dtype as a tn_value
 * (int64 / double / bool / complex), with upstream's conversion rules. Used where single
 * elements cross the Python boundary (item(), tolist(), torch.tensor(data)). */
#ifndef TN_SCALAR_H
#define TN_SCALAR_H

#include "core/tensor.h"
#include "ops/value.h"

/* Loads the element at p as TN_V_INT (integral), TN_V_DOUBLE (floating), TN_V_BOOL or
 * TN_V_COMPLEX. Fails (NotImplementedError) for dtypes without element semantics. */
tn_status tn_scalar_load(tn_dtype dtype, const void *p, tn_value *out);
/* Stores v (TN_V_INT/DOUBLE/BOOL/COMPLEX) at p converted to dtype (C casts with
 * float->int truncation, bf16/f16 round to nearest even). */
tn_status tn_scalar_store(tn_dtype dtype, void *p, const tn_value *v);

#endif
