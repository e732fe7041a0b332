/* scalar.c — single-element load/store for every computation dtype. */
#include "core/scalar.h"


tn_status tn_scalar_load(tn_dtype dtype, const void *p, tn_value *out) {
    switch (dtype) {
    case TN_DTYPE_BOOL: *out = tn_value_bool(*(const uint8_t *)p != 0); return TN_OK;
    case TN_DTYPE_UINT8: *out = tn_value_int(*(const uint8_t *)p); return TN_OK;
    case TN_DTYPE_INT8: *out = tn_value_int(*(const int8_t *)p); return TN_OK;
    case TN_DTYPE_INT16: *out = tn_value_int(*(const int16_t *)p); return TN_OK;
    case TN_DTYPE_INT32: *out = tn_value_int(*(const int32_t *)p); return TN_OK;
    case TN_DTYPE_INT64: *out = tn_value_int(*(const int64_t *)p); return TN_OK;
    case TN_DTYPE_UINT16: *out = tn_value_int(*(const uint16_t *)p); return TN_OK;
    case TN_DTYPE_UINT32: *out = tn_value_int(*(const uint32_t *)p); return TN_OK;
    case TN_DTYPE_UINT64: {
        uint64_t u = *(const uint64_t *)p;
        *out = u > (uint64_t)INT64_MAX ? tn_value_uint(u) : tn_value_int((int64_t)u);
        return TN_OK;
    }
    case TN_DTYPE_FLOAT16: *out = tn_value_double(tn_half_to_f32(*(const tn_half *)p)); return TN_OK;
    case TN_DTYPE_BFLOAT16: *out = tn_value_double(tn_bf16_to_f32(*(const tn_bfloat16 *)p)); return TN_OK;
    case TN_DTYPE_FLOAT32: *out = tn_value_double(*(const float *)p); return TN_OK;
    case TN_DTYPE_FLOAT64: *out = tn_value_double(*(const double *)p); return TN_OK;
    case TN_DTYPE_COMPLEX64:
        out->tag = TN_V_COMPLEX;
        out->u.c.re = ((const float *)p)[0];
        out->u.c.im = ((const float *)p)[1];
        return TN_OK;
    case TN_DTYPE_COMPLEX128:
        out->tag = TN_V_COMPLEX;
        out->u.c.re = ((const double *)p)[0];
        out->u.c.im = ((const double *)p)[1];
        return TN_OK;
    default:
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "reading elements of dtype %s is not implemented by torchnative",
                        tn_dtype_infos[dtype].c10_name);
    }
}

/* An integral value as float, rounded once from the integer (an unsigned one stays positive). */
static float int_as_float(const tn_value *v, int64_t i) { return v->tag == TN_V_UINT ? (float)v->u.u : (float)i; }

tn_status tn_scalar_store(tn_dtype dtype, void *p, const tn_value *v) {
    double re = 0, im = 0;
    int64_t i = 0;
    bool is_int = false;
    switch (v->tag) {
    case TN_V_INT: i = v->u.i; re = (double)i; is_int = true; break;
    case TN_V_UINT: i = (int64_t)v->u.u; re = (double)v->u.u; is_int = true; break;
    case TN_V_BOOL: i = v->u.b; re = v->u.b; is_int = true; break;
    case TN_V_DOUBLE: re = v->u.d; break;
    case TN_V_COMPLEX: re = v->u.c.re; im = v->u.c.im; break;
    default: return tn_error(TN_ERR_TYPE, "expected a number");
    }
    if (!is_int) i = (int64_t)re;
    switch (dtype) {
    case TN_DTYPE_BOOL: *(uint8_t *)p = (re != 0 || im != 0); return TN_OK;
    case TN_DTYPE_UINT8: *(uint8_t *)p = (uint8_t)i; return TN_OK;
    case TN_DTYPE_INT8: *(int8_t *)p = (int8_t)i; return TN_OK;
    case TN_DTYPE_INT16: *(int16_t *)p = (int16_t)i; return TN_OK;
    case TN_DTYPE_INT32: *(int32_t *)p = (int32_t)i; return TN_OK;
    case TN_DTYPE_INT64: *(int64_t *)p = i; return TN_OK;
    case TN_DTYPE_UINT16: *(uint16_t *)p = (uint16_t)i; return TN_OK;
    case TN_DTYPE_UINT32: *(uint32_t *)p = (uint32_t)i; return TN_OK;
    case TN_DTYPE_UINT64: *(uint64_t *)p = (uint64_t)i; return TN_OK;
    case TN_DTYPE_FLOAT16: *(tn_half *)p = tn_f32_to_half(is_int ? int_as_float(v, i) : (float)re); return TN_OK;
    case TN_DTYPE_BFLOAT16: *(tn_bfloat16 *)p = tn_f32_to_bf16(is_int ? int_as_float(v, i) : (float)re); return TN_OK;
    case TN_DTYPE_FLOAT32: *(float *)p = is_int ? int_as_float(v, i) : (float)re; return TN_OK;
    case TN_DTYPE_FLOAT64: *(double *)p = is_int ? (v->tag == TN_V_UINT ? (double)v->u.u : (double)i) : re; return TN_OK;
    case TN_DTYPE_COMPLEX64: ((float *)p)[0] = (float)re; ((float *)p)[1] = (float)im; return TN_OK;
    case TN_DTYPE_COMPLEX128: ((double *)p)[0] = re; ((double *)p)[1] = im; return TN_OK;
    default:
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "writing elements of dtype %s is not implemented by torchnative",
                        tn_dtype_infos[dtype].c10_name);
    }
}
