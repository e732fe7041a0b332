/* complex_parts.h — what complex_parts.c offers other op families. */
#ifndef TN_OPS_COMPLEX_PARTS_H
#define TN_OPS_COMPLEX_PARTS_H

#include "ops/value.h"

/* |z| of complex tensor x into rets[0] (a real tensor of the parts' dtype). */
tn_status tn_complex_abs(tn_tensor *x, tn_value *rets);

#endif
