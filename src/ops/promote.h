/* promote.h — upstream's type promotion: c10::promoteTypes for dtype pairs and
 * at::result_type over tensors and scalars with its category rules (dimensioned tensors
 * outrank 0-dim tensors, which outrank Python scalars, except when a lower-priority
 * operand belongs to a higher category: bool < integer < floating < complex).
 *
 * Used by every op family that mixes dtypes. Plain C11; no Python. */
#ifndef TN_PROMOTE_H
#define TN_PROMOTE_H

#include "core/tensor.h"
#include "ops/value.h"

/* c10::promoteTypes. On success writes the promoted dtype; on failure returns
 * TN_ERR_RUNTIME with upstream's message (quantized, float8, bits, uint16/32/64 mixes). */
tn_status tn_promote_types(tn_dtype a, tn_dtype b, tn_dtype *out);

/* Same, but TN_DTYPE_UNDEFINED instead of an error (for tables and quick checks). */
tn_dtype tn_promote_types_or_undefined(tn_dtype a, tn_dtype b);

/* The dtype a Python scalar value has as a tensor: int -> Long, float -> Double,
 * bool -> Bool, complex -> ComplexDouble. Undefined for non-scalar tags. */
tn_dtype tn_scalar_value_dtype(const tn_value *v);

/* The complex dtype whose components are `d` (Half -> ComplexHalf, Float -> ComplexFloat,
 * Double -> ComplexDouble, BFloat16 -> ComplexFloat); complex dtypes map to themselves;
 * others Undefined. */
tn_dtype tn_dtype_to_complex(tn_dtype d);
/* The component dtype of a complex dtype; non-complex dtypes map to themselves. */
tn_dtype tn_dtype_to_real(tn_dtype d);

/* at::native::ResultTypeState: the running promotion of each priority class.
 * Start from tn_result_type_state_init(), feed operands, then finish. */
typedef struct tn_result_type_state {
    tn_dtype dim_result;     /* tensors with dim > 0 */
    tn_dtype zero_result;    /* 0-dim tensors that are not wrapped numbers */
    tn_dtype wrapped_result; /* Python scalars and wrapped-number tensors */
} tn_result_type_state;

static inline tn_result_type_state tn_result_type_state_init(void) {
    return (tn_result_type_state){TN_DTYPE_UNDEFINED, TN_DTYPE_UNDEFINED, TN_DTYPE_UNDEFINED};
}
/* Adds a tensor (NULL = undefined, ignored). Honors TN_TENSOR_WRAPPED_NUMBER. */
tn_status tn_result_type_update_tensor(tn_result_type_state *st, const tn_tensor *t);
/* Adds a Python scalar (TN_V_INT/DOUBLE/BOOL/COMPLEX); TN_V_NONE is ignored, a
 * TN_V_TENSOR value is treated as tn_result_type_update_tensor. */
tn_status tn_result_type_update_value(tn_result_type_state *st, const tn_value *v);
/* Combines the classes; Undefined if nothing was added. */
tn_status tn_result_type_finish(const tn_result_type_state *st, tn_dtype *out);

/* torch.result_type over a list of operands (tensors and scalars, as tn_values). */
tn_status tn_result_type(int n, const tn_value *operands, tn_dtype *out);

#endif
