/* extra_composite.c — upstream CompositeImplicitAutograd operators that are one call to
 * another operator (type_as -> _to_copy, broadcast_to -> expand), routed back through the
 * door so autograd, meta and refusals attach at the operator that does the work. */
#include "ops/dispatch.h"

/* aten::type_as(Tensor self, Tensor other) -> Tensor: self.to(other.options()). Like
 * upstream's to(), it returns self itself (no copy) when dtype and device already match. */
tn_status tn_op_type_as(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *other = args[1].u.t;
    tn_device ds = tn_tensor_device(self), dother = tn_tensor_device(other);
    if (self->dtype == other->dtype && ds.type == dother.type && ds.index == dother.index) {
        tn_tensor_retain(self);
        rets[0] = tn_value_tensor(self);
        return TN_OK;
    }
    /* _to_copy(self, *, dtype, layout, device, pin_memory, non_blocking, memory_format) */
    tn_value a[7] = {args[0]};
    a[1].tag = TN_V_DTYPE;
    a[1].u.dtype = other->dtype;
    a[2].tag = TN_V_LAYOUT;
    a[2].u.layout = 0;
    a[3].tag = TN_V_DEVICE;
    a[3].u.device = dother;
    a[4] = tn_value_bool(false);
    a[5] = tn_value_bool(false);
    a[6].tag = TN_V_MEMFMT;
    a[6].u.memfmt = 1; /* preserve, as Tensor.to() */
    return tn_dispatch(TN_OP__to_copy, a, rets);
}

/* aten::broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a): expand(self, size). */
tn_status tn_op_broadcast_to(const tn_value *args, tn_value *rets) {
    tn_value a[3] = {args[0], args[1], tn_value_bool(false)};
    return tn_dispatch(TN_OP_expand, a, rets);
}
