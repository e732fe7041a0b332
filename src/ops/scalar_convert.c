/* scalar_convert.c — a Scalar argument to one element of a dtype, checked as upstream's
 * Scalar::to<T> (c10's checked_convert): the one conversion every operator that stores a
 * Scalar into a tensor uses (fill, full, masked_fill, index_fill, scatter's value, where,
 * padding, threshold, ...). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/cast.h"
#include "ops/scalar_convert.h"

static tn_status overflow(const char *name) {
    return tn_error(TN_ERR_RUNTIME, "value cannot be converted to type %s without overflow", name);
}

/* c10's overflows<T, double>: NaN and inf overflow integers, and so does anything outside
 * [lowest, max] (127.5 overflows int8, -0.5 uint8). For the 64-bit targets c10 compares with
 * max converted to double, 2^63 (2^64), so that value itself passes and converts as x86-64
 * converts it upstream: to INT64_MIN (0 for uint64; aarch64 would saturate). */
static bool int_overflows_double(double f, tn_dtype d) {
    if (isnan(f) || isinf(f)) return true;
    switch (d) {
    case TN_DTYPE_UINT8: return f < 0 || f > 255;
    case TN_DTYPE_INT8: return f < -128 || f > 127;
    case TN_DTYPE_INT16: return f < INT16_MIN || f > INT16_MAX;
    case TN_DTYPE_INT32: return f < INT32_MIN || f > INT32_MAX;
    case TN_DTYPE_INT64: return f < -0x1p63 || f > 0x1p63;
    case TN_DTYPE_UINT16: return f < 0 || f > UINT16_MAX;
    case TN_DTYPE_UINT32: return f < 0 || f > UINT32_MAX;
    case TN_DTYPE_UINT64: return f < 0 || f > 0x1p64;
    default: return false;
    }
}

/* c10's overflows<T, int64_t>: unsigned targets accept negatives down to -max (two's
 * complement wrap, so uint8 takes -255 but not -256). */
static bool int_overflows_int(int64_t f, tn_dtype d) {
    int64_t lo, hi;
    switch (d) {
    case TN_DTYPE_UINT8: return f > 255 || f < -255;
    case TN_DTYPE_UINT16: return f > 65535 || f < -65535;
    case TN_DTYPE_UINT32: return f > 4294967295LL || f < -4294967295LL;
    case TN_DTYPE_UINT64: return false;
    case TN_DTYPE_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case TN_DTYPE_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case TN_DTYPE_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    default: return false;
    }
    return f < lo || f > hi;
}

static const char *int_name(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_UINT8: return "uint8_t";
    case TN_DTYPE_INT8: return "int8_t";
    case TN_DTYPE_INT16: return "int16_t";
    case TN_DTYPE_INT32: return "int";
    case TN_DTYPE_INT64: return "int64_t";
    case TN_DTYPE_UINT16: return "uint16_t";
    case TN_DTYPE_UINT32: return "uint32_t";
    case TN_DTYPE_UINT64: return "uint64_t";
    default: return "?";
    }
}

/* float's overflows<float, double>: inf and NaN pass, finite values beyond FLT_MAX fail. */
static bool f32_overflows(double f) { return !isinf(f) && !isnan(f) && (f < -FLT_MAX || f > FLT_MAX); }

static tn_status scalar_bytes_aligned(const tn_value *v, tn_dtype dtype, void *out);

/* `out` may have any alignment (a loop context's byte array): the element is made in an
 * aligned buffer and copied, itemsize bytes. */
tn_status tn_scalar_to_bytes(const tn_value *v, tn_dtype dtype, void *out) {
    _Alignas(16) unsigned char buf[16];
    tn_status st = scalar_bytes_aligned(v, dtype, buf);
    if (st == TN_OK) memcpy(out, buf, (size_t)tn_dtype_itemsize(dtype));
    return st;
}

static tn_status scalar_bytes_aligned(const tn_value *v, tn_dtype dtype, void *out) {
    bool is_int = false, is_cplx = false;
    int64_t iv = 0;
    double re = 0, im = 0;
    switch (v->tag) {
    case TN_V_INT: iv = v->u.i; re = (double)iv; is_int = true; break;
    case TN_V_BOOL: iv = v->u.b; re = (double)iv; is_int = true; break;
    case TN_V_DOUBLE: re = v->u.d; break;
    case TN_V_COMPLEX: re = v->u.c.re; im = v->u.c.im; is_cplx = true; break;
    case TN_V_UINT: /* an int in [2^63, 2^64): only UInt64 holds it among the integers */
        if (dtype == TN_DTYPE_BOOL) { *(uint8_t *)out = 1; return TN_OK; }
        if (tn_dtype_is_integral(dtype, false) && dtype != TN_DTYPE_UINT64) return overflow(int_name(dtype));
        if (dtype == TN_DTYPE_FLOAT16) return overflow("c10::Half"); /* beyond 65504 */
        if (!tn_cast_supported(dtype)) break;
        tn_cast_store_scalar(out, dtype, 'u', (int64_t)v->u.u, 0, 0);
        return TN_OK;
    default: return tn_error(TN_ERR_TYPE, "expected a Scalar (bool, int, float or complex)");
    }
    if (dtype == TN_DTYPE_BOOL) { /* Scalar::toBool never overflows */
        *(uint8_t *)out = is_int ? iv != 0 : (re != 0 || im != 0);
        return TN_OK;
    }
    if (tn_dtype_is_integral(dtype, false)) {
        if (is_cplx && im != 0) return overflow(int_name(dtype));
        if (is_int) {
            if (v->tag == TN_V_INT && int_overflows_int(iv, dtype)) return overflow(int_name(dtype));
            tn_cast_store_scalar(out, dtype, 'i', iv, 0, 0);
        } else {
            if (int_overflows_double(re, dtype)) return overflow(int_name(dtype));
            if (dtype == TN_DTYPE_INT64 && re == 0x1p63) /* what x86-64's conversion gives upstream */
                *(int64_t *)out = INT64_MIN;
            else if (dtype == TN_DTYPE_UINT64 && re == 0x1p64)
                *(uint64_t *)out = 0;
            else
                tn_cast_store_scalar(out, dtype, 'f', 0, re, 0);
        }
        return TN_OK;
    }
    switch (dtype) {
    case TN_DTYPE_FLOAT16:
    case TN_DTYPE_BFLOAT16: { /* checked as float is: a finite value beyond the type's max */
        const char *name = dtype == TN_DTYPE_FLOAT16 ? "c10::Half" : "c10::BFloat16";
        double max = dtype == TN_DTYPE_FLOAT16 ? 65504.0 : 0x1.fep127;
        if ((is_cplx && im != 0) || (!isinf(re) && (re < -max || re > max))) return overflow(name);
        tn_cast_store_scalar(out, dtype, 'f', 0, re, 0);
        return TN_OK;
    }
    case TN_DTYPE_FLOAT32:
        if ((is_cplx && im != 0) || (!is_int && f32_overflows(re))) return overflow("float");
        if (is_int) tn_cast_store_scalar(out, dtype, 'i', iv, 0, 0);
        else *(float *)out = (float)re;
        return TN_OK;
    case TN_DTYPE_FLOAT64:
        if (is_cplx && im != 0) return overflow("double");
        if (is_int) tn_cast_store_scalar(out, dtype, 'i', iv, 0, 0);
        else *(double *)out = re;
        return TN_OK;
    case TN_DTYPE_COMPLEX64:
        if (!is_int && (f32_overflows(re) || f32_overflows(im))) return overflow("c10::complex<float>");
        ((float *)out)[0] = is_int ? (float)iv : (float)re;
        ((float *)out)[1] = (float)im;
        return TN_OK;
    case TN_DTYPE_COMPLEX128:
        ((double *)out)[0] = re;
        ((double *)out)[1] = im;
        return TN_OK;
    default:
        if (tn_cast_supported(dtype)) { /* float8, complex32: converted as the casts convert */
            tn_cast_store_scalar(out, dtype, is_int ? 'i' : is_cplx ? 'c' : 'f', iv, re, im);
            return TN_OK;
        }
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "filling a %s tensor with a Scalar is not implemented by torchnative",
                        tn_dtype_infos[dtype].c10_name);
    }
}

