/* tensor_queries.c — operators about tensors rather than on their values: predicates
 * (is_floating_point, is_conj, _is_zerotensor ...), the conjugate/negative view bits
 * (conj, _conj, _neg_view, resolve_conj, resolve_neg: ops/mathbits.h; conj of a real
 * tensor is itself), dtype queries (result_type, can_cast, promote_types) and
 * _local_scalar_dense. */
#include <string.h>

#include "core/scalar.h"
#include "ops/dispatch.h"
#include "ops/mathbits.h"
#include "ops/promote.h"

#define SELF (args[0].u.t)

static tn_status ret_bool(tn_value *rets, bool b) { rets[0] = tn_value_bool(b); return TN_OK; }

tn_status tn_op_is_floating_point(const tn_value *args, tn_value *rets) { return ret_bool(rets, tn_dtype_is_floating(SELF->dtype)); }
tn_status tn_op_is_complex(const tn_value *args, tn_value *rets) { return ret_bool(rets, tn_dtype_is_complex(SELF->dtype)); }
tn_status tn_op_is_signed(const tn_value *args, tn_value *rets) {
    char k = tn_dtype_infos[SELF->dtype].kind;
    return ret_bool(rets, k == 'i' || k == 'f' || k == 'c');
}
/* The conjugate / negative bits (no zero-tensor bit exists in torchnative tensors). */
tn_status tn_op_is_conj(const tn_value *args, tn_value *rets) { return ret_bool(rets, (SELF->flags & TN_TENSOR_CONJ) != 0); }
tn_status tn_op_is_neg(const tn_value *args, tn_value *rets) { return ret_bool(rets, (SELF->flags & TN_TENSOR_NEG) != 0); }
tn_status tn_op__is_zerotensor(const tn_value *args, tn_value *rets) { return ret_bool(rets, false); }
tn_status tn_op_is_inference(const tn_value *args, tn_value *rets) { return ret_bool(rets, false); }
tn_status tn_op_is_distributed(const tn_value *args, tn_value *rets) { return ret_bool(rets, false); }
tn_status tn_op_is_pinned(const tn_value *args, tn_value *rets) { return ret_bool(rets, false); }
tn_status tn_op_is_same_size(const tn_value *args, tn_value *rets) {
    const tn_tensor *a = SELF, *b = args[1].u.t;
    return ret_bool(rets, a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim));
}
tn_status tn_op_is_set_to(const tn_value *args, tn_value *rets) {
    const tn_tensor *a = SELF, *b = args[1].u.t;
    bool same = a->storage == b->storage && a->offset == b->offset && a->ndim == b->ndim &&
                !memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) &&
                !memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->ndim);
    return ret_bool(rets, same);
}
tn_status tn_op__has_compatible_shallow_copy_type(const tn_value *args, tn_value *rets) {
    return ret_bool(rets, tn_tensor_device(SELF).type == tn_tensor_device(args[1].u.t).type);
}

/* aten::_local_scalar_dense: the element at self's offset. Upstream refuses only an empty
 * tensor and reads the first element of a larger one (item() checks the count first). */
tn_status tn_op__local_scalar_dense(const tn_value *args, tn_value *rets) {
    if (tn_tensor_numel(SELF) == 0) return tn_error(TN_ERR_RUNTIME, "_local_scalar_dense: Empty tensor not supported");
    if (tn_tensor_is_meta(SELF))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "Tensor.item() cannot be called on meta tensors");
    return tn_scalar_load(SELF->dtype, tn_tensor_data(SELF), &rets[0]);
}

tn_status tn_op_is_nonzero(const tn_value *args, tn_value *rets) {
    int64_t n = tn_tensor_numel(SELF);
    if (n == 0) return tn_error(TN_ERR_RUNTIME, "Boolean value of Tensor with no values is ambiguous");
    if (n > 1) return tn_error(TN_ERR_RUNTIME, "Boolean value of Tensor with more than one value is ambiguous");
    tn_value v;
    TN_TRY(tn_op__local_scalar_dense(args, &v));
    bool b = v.tag == TN_V_BOOL ? v.u.b : v.tag == TN_V_INT ? v.u.i != 0
           : v.tag == TN_V_DOUBLE ? v.u.d != 0 : (v.u.c.re != 0 || v.u.c.im != 0);
    return ret_bool(rets, b);
}

/* conj: of a real tensor the tensor itself (as upstream returns self), of a complex one a
 * view with the conjugate bit flipped (_conj, which upstream allows for complex only). */
static tn_status alias_self(const tn_value *args, tn_value *rets) {
    tn_tensor_retain(SELF);
    rets[0] = tn_value_tensor(SELF);
    return TN_OK;
}
static tn_status flip_bits(const tn_value *args, tn_value *rets, uint32_t bit) {
    tn_tensor *v;
    TN_TRY(tn_mathbits_view(SELF, bit, &v));
    rets[0] = tn_value_tensor(v);
    return TN_OK;
}
tn_status tn_op_conj(const tn_value *args, tn_value *rets) {
    return tn_dtype_is_complex(SELF->dtype) ? flip_bits(args, rets, TN_TENSOR_CONJ) : alias_self(args, rets);
}
tn_status tn_op__conj(const tn_value *args, tn_value *rets) {
    if (!tn_dtype_is_complex(SELF->dtype)) return tn_error(TN_ERR_RUNTIME, "Expected a complex tensor for aten::_conj");
    return flip_bits(args, rets, TN_TENSOR_CONJ);
}
/* aten::_neg_view: a view with the negative bit flipped */
tn_status tn_op__neg_view(const tn_value *args, tn_value *rets) { return flip_bits(args, rets, TN_TENSOR_NEG); }
/* resolve_conj / resolve_neg: the tensor itself without that bit, else a copy with every
 * bit applied (upstream copies into an empty_like, which has none) */
static tn_status resolve(const tn_value *args, tn_value *rets, uint32_t bit) {
    tn_tensor *r;
    TN_TRY(tn_mathbits_resolve(SELF, (SELF->flags & bit) ? TN_MATHBITS : 0, &r));
    rets[0] = tn_value_tensor(r);
    return TN_OK;
}
tn_status tn_op_resolve_conj(const tn_value *args, tn_value *rets) { return resolve(args, rets, TN_TENSOR_CONJ); }
tn_status tn_op_resolve_neg(const tn_value *args, tn_value *rets) { return resolve(args, rets, TN_TENSOR_NEG); }

static tn_status ret_dtype(tn_value *rets, tn_dtype d) {
    rets[0].tag = TN_V_DTYPE;
    rets[0].u.dtype = d;
    return TN_OK;
}
static tn_status result_type2(const tn_value *args, tn_value *rets) {
    tn_dtype d;
    TN_TRY(tn_result_type(2, args, &d));
    return ret_dtype(rets, d);
}
tn_status tn_op_result_type_Tensor(const tn_value *args, tn_value *rets) { return result_type2(args, rets); }
tn_status tn_op_result_type_Scalar(const tn_value *args, tn_value *rets) { return result_type2(args, rets); }
tn_status tn_op_result_type_Scalar_Tensor(const tn_value *args, tn_value *rets) { return result_type2(args, rets); }
tn_status tn_op_result_type_Scalar_Scalar(const tn_value *args, tn_value *rets) { return result_type2(args, rets); }
tn_status tn_op_can_cast(const tn_value *args, tn_value *rets) {
    return ret_bool(rets, tn_dtype_can_cast(args[0].u.dtype, args[1].u.dtype));
}
tn_status tn_op_promote_types(const tn_value *args, tn_value *rets) {
    tn_dtype d;
    TN_TRY(tn_promote_types(args[0].u.dtype, args[1].u.dtype, &d));
    return ret_dtype(rets, d);
}
