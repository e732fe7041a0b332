/* elementwise_common.c — shared plumbing of the elementwise ops (see the header). */
#include "ops/elementwise_common.h"

#include <string.h>

#include "kernels/cast.h"
#include "ops/shape.h"
#include "ops/scalar_convert.h"

tn_status tn_ew_scalar_tensor(const tn_value *v, tn_tensor **out) {
    tn_dtype d;
    switch (v->tag) {
    case TN_V_INT: d = TN_DTYPE_INT64; break;
    case TN_V_UINT: d = TN_DTYPE_UINT64; break;
    case TN_V_DOUBLE: d = TN_DTYPE_FLOAT64; break;
    case TN_V_BOOL: d = TN_DTYPE_BOOL; break;
    case TN_V_COMPLEX: d = TN_DTYPE_COMPLEX128; break;
    case TN_V_TENSOR: tn_tensor_retain(v->u.t); *out = v->u.t; return TN_OK;
    default: return tn_error(TN_ERR_TYPE, "expected a Scalar");
    }
    tn_tensor *t;
    TN_TRY(tn_tensor_empty(0, NULL, d, tn_device_cpu(), &t));
    void *p = tn_tensor_data(t);
    switch (v->tag) {
    case TN_V_INT: memcpy(p, &v->u.i, 8); break;
    case TN_V_UINT: memcpy(p, &v->u.u, 8); break;
    case TN_V_DOUBLE: memcpy(p, &v->u.d, 8); break;
    case TN_V_BOOL: *(uint8_t *)p = v->u.b ? 1 : 0; break;
    default: memcpy(p, &v->u.c.re, 8); memcpy((char *)p + 8, &v->u.c.im, 8); break;
    }
    t->flags |= TN_TENSOR_WRAPPED_NUMBER;
    *out = t;
    return TN_OK;
}

tn_status tn_ew_scalar_in_dtype(const tn_value *v, tn_dtype dtype, double *d, int64_t *i) {
    unsigned char buf[16];
    if (!tn_cast_supported(dtype)) /* no cast into it (complex32, the quantised types): nothing to round through */
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "a Scalar in %s is not implemented by torchnative",
                        tn_dtype_infos[dtype].c10_name);
    switch (v->tag) {
    case TN_V_INT: tn_cast_store_scalar(buf, dtype, 'i', v->u.i, 0, 0); break;
    case TN_V_UINT: TN_TRY(tn_scalar_to_bytes(v, dtype, buf)); break; /* checked: only UInt64 holds it */
    case TN_V_BOOL: tn_cast_store_scalar(buf, dtype, 'b', v->u.b, 0, 0); break;
    case TN_V_COMPLEX: tn_cast_store_scalar(buf, dtype, 'c', 0, v->u.c.re, v->u.c.im); break;
    default: tn_cast_store_scalar(buf, dtype, 'f', 0, v->u.d, 0); break;
    }
    if (d) *d = tn_cast_load_double(buf, dtype);
    if (i) *i = tn_cast_load_int64(buf, dtype);
    return TN_OK;
}

tn_status tn_ew_to_dtype(tn_tensor *t, tn_dtype dtype, tn_tensor **out) {
    if (t->dtype == dtype) { tn_tensor_retain(t); *out = t; return TN_OK; }
    tn_tensor *dst;
    TN_TRY(tn_tensor_empty_like(t, dtype, &dst));
    if (tn_tensor_is_meta(t)) { *out = dst; return TN_OK; }
    tn_loop_fn loop = tn_cast_loop(t->dtype, dtype);
    if (!loop) {
        tn_tensor_release(dst);
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "conversion from %s to %s is not implemented by torchnative",
                        tn_dtype_infos[t->dtype].c10_name, tn_dtype_infos[dtype].c10_name);
    }
    tn_iter_config c = tn_iter_config_init(1, 1);
    c.outputs[0] = dst;
    c.inputs[0] = t;
    c.check_all_same_dtype = false;
    c.check_mem_overlap = false;
    tn_iter it;
    tn_status st = tn_iter_build(&it, &c);
    if (st != TN_OK) { tn_tensor_release(dst); return st; }
    tn_iter_for_each(&it, loop, NULL);
    tn_iter_release(&it);
    *out = dst;
    return TN_OK;
}

tn_status tn_ew_refuse_dtype(const char *kname, tn_dtype dtype) {
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kname, tn_dtype_infos[dtype].c10_name);
}

/* A comparison offered a tensor of another dtype than Bool (a derived in-place / out= form
 * into a float or integer tensor, `x.lt_(y)`): when the operands' common dtype is that
 * tensor's, the comparison's _num row writes 0 / 1 straight into it, which is what the bool
 * result cast into it holds. Returns true with the iterator built when it applies. */
static bool cmp_into_dest(const tn_ew_run *run, tn_iter_config c, tn_tensor *dest, tn_iter *it, tn_loop_fn *loop) {
    int num = tn_ew_cmp_num(run->op);
    if (num < 0 || !dest || dest->dtype == TN_DTYPE_BOOL || !tn_ew_loop((tn_ew_op)num, dest->dtype)) return false;
    c.output_dtype = dest->dtype;
    c.preferred_output = dest;
    if (tn_iter_build(it, &c) != TN_OK) return false; /* the bool path reports it */
    if (it->common_dtype != dest->dtype || it->ops[0].tensor != dest) {
        tn_iter_release(it);
        return false;
    }
    *loop = tn_ew_loop((tn_ew_op)num, dest->dtype);
    return true;
}

tn_status tn_ew_execute(const tn_ew_run *run, int nin, tn_tensor **ins, tn_loop_ctx *ctx, tn_value *rets) {
    tn_iter_config c = tn_iter_config_init(1, nin);
    for (int i = 0; i < nin; i++) c.inputs[i] = ins[i];
    c.promote_inputs_to_common_dtype = true;
    c.promote_integer_inputs_to_float = run->int_to_float;
    c.static_dtype = run->static_dtype;
    if (run->bool_out) c.output_dtype = TN_DTYPE_BOOL;
    c.preferred_output = tn_iter_offer_take(rets); /* a derived in-place / out= call's tensor */
    tn_iter it;
    tn_loop_fn loop = NULL;
    if (!cmp_into_dest(run, c, c.preferred_output, &it, &loop)) {
        TN_TRY(tn_iter_build(&it, &c));
        loop = tn_ew_loop(run->op, it.common_dtype);
    }
    if (!loop) {
        tn_dtype d = it.common_dtype;
        tn_iter_release(&it);
        return tn_ew_refuse_dtype(run->kname, d);
    }
    tn_loop_ctx local;
    if (!ctx) { memset(&local, 0, sizeof local); ctx = &local; }
    ctx->status = TN_EW_STATUS_OK;
    tn_iter_for_each(&it, loop, ctx);
    if (ctx->status == TN_EW_STATUS_ZERO_DIVISION) {
        tn_iter_release(&it);
        return tn_error(TN_ERR_RUNTIME, "ZeroDivisionError");
    }
    rets[0] = tn_value_tensor(tn_iter_take_output(&it, 0));
    tn_iter_release(&it);
    return TN_OK;
}
