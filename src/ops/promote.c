/* promote.c — c10::promoteTypes and at::result_type, rule for rule. The rules are written
 * as category logic rather than a 13x13 table; tests/c/test_elementwise.c checks them
 * against values dumped from upstream torch 2.13.0. */
#include "ops/promote.h"

static bool is_quantized(tn_dtype d) { return tn_dtype_infos[d].kind == 'q'; }
static bool is_bits(tn_dtype d) { return tn_dtype_infos[d].kind == 'x'; }
static bool is_float8(tn_dtype d) {
    return d == TN_DTYPE_FLOAT8_E5M2 || d == TN_DTYPE_FLOAT8_E4M3FN || d == TN_DTYPE_FLOAT8_E5M2FNUZ ||
           d == TN_DTYPE_FLOAT8_E4M3FNUZ || d == TN_DTYPE_FLOAT8_E8M0FNU;
}
/* uint1..uint7 and uint16/32/64: upstream's "barebones" unsigned types. */
static bool is_barebones_unsigned(tn_dtype d) { return tn_dtype_infos[d].kind == 'u' && d != TN_DTYPE_UINT8; }
static bool is_sub_byte_int(tn_dtype d) { return d >= TN_DTYPE_INT1 && d <= TN_DTYPE_INT7; }
/* The four "ordinary" floating dtypes upstream's isFloatingType() names. */
static bool is_plain_float(tn_dtype d) {
    return d == TN_DTYPE_FLOAT16 || d == TN_DTYPE_FLOAT32 || d == TN_DTYPE_FLOAT64 || d == TN_DTYPE_BFLOAT16;
}
static const char *name(tn_dtype d) { return tn_dtype_infos[d].c10_name; }

tn_dtype tn_dtype_to_complex(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_FLOAT16: return TN_DTYPE_COMPLEX32;
    case TN_DTYPE_FLOAT32: return TN_DTYPE_COMPLEX64;
    case TN_DTYPE_BFLOAT16: return TN_DTYPE_COMPLEX64; /* same range as Float (c10's choice) */
    case TN_DTYPE_FLOAT64: return TN_DTYPE_COMPLEX128;
    case TN_DTYPE_COMPLEX32: case TN_DTYPE_COMPLEX64: case TN_DTYPE_COMPLEX128: return d;
    default: return TN_DTYPE_UNDEFINED;
    }
}

tn_dtype tn_dtype_to_real(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_COMPLEX32: return TN_DTYPE_FLOAT16;
    case TN_DTYPE_COMPLEX64: return TN_DTYPE_FLOAT32;
    case TN_DTYPE_COMPLEX128: return TN_DTYPE_FLOAT64;
    default: return d;
    }
}

/* Promotion among bool, uint8, int8..int64, the plain floats and the complexes. */
static tn_dtype promote_basic(tn_dtype a, tn_dtype b) {
    if (a == b) return a;
    if (a == TN_DTYPE_BOOL) return b;
    if (b == TN_DTYPE_BOOL) return a;
    if (tn_dtype_is_complex(a) || tn_dtype_is_complex(b)) {
        /* Complex wins; its component width is the promotion of the two components,
         * where an integer side contributes nothing. */
        tn_dtype ra = tn_dtype_to_real(a), rb = tn_dtype_to_real(b);
        tn_dtype r;
        if (!tn_dtype_is_floating(ra)) r = rb;
        else if (!tn_dtype_is_floating(rb)) r = ra;
        else r = promote_basic(ra, rb);
        return tn_dtype_to_complex(r);
    }
    bool fa = tn_dtype_is_floating(a), fb = tn_dtype_is_floating(b);
    if (fa && fb) {
        /* Half and BFloat16 have no common 16-bit type: both fit in Float. */
        if ((a == TN_DTYPE_FLOAT16 && b == TN_DTYPE_BFLOAT16) || (a == TN_DTYPE_BFLOAT16 && b == TN_DTYPE_FLOAT16))
            return TN_DTYPE_FLOAT32;
        return tn_dtype_itemsize(a) >= tn_dtype_itemsize(b) ? a : b;
    }
    if (fa) return a;
    if (fb) return b;
    /* Integers: uint8 with a signed type needs at least int16. */
    if (a == TN_DTYPE_UINT8 || b == TN_DTYPE_UINT8) {
        tn_dtype s = a == TN_DTYPE_UINT8 ? b : a;
        return tn_dtype_itemsize(s) >= 2 ? s : TN_DTYPE_INT16;
    }
    return tn_dtype_itemsize(a) >= tn_dtype_itemsize(b) ? a : b;
}

tn_status tn_promote_types(tn_dtype a, tn_dtype b, tn_dtype *out) {
    if (a == b) { *out = a; return TN_OK; }
    if (is_quantized(a) || is_quantized(b))
        return tn_error(TN_ERR_RUNTIME,
                        "promoteTypes with quantized numbers is not handled yet; figure out what the correct "
                        "rules should be, offending types: %s %s", name(a), name(b));
    if (is_bits(a) || is_bits(b) || is_sub_byte_int(a) || is_sub_byte_int(b))
        return tn_error(TN_ERR_RUNTIME, "Promotion from %s and %s is unsupported.", name(a), name(b));
    if (is_float8(a) || is_float8(b))
        return tn_error(TN_ERR_RUNTIME, "Promotion for Float8 Types is not supported, attempted to promote %s and %s",
                        name(a), name(b));
    if (is_barebones_unsigned(a) || is_barebones_unsigned(b)) {
        /* Only the plain floats absorb them; everything else is refused upstream. */
        if (is_plain_float(a)) { *out = a; return TN_OK; }
        if (is_plain_float(b)) { *out = b; return TN_OK; }
        return tn_error(TN_ERR_RUNTIME,
                        "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote %s and %s",
                        name(a), name(b));
    }
    *out = promote_basic(a, b);
    return TN_OK;
}

tn_dtype tn_promote_types_or_undefined(tn_dtype a, tn_dtype b) {
    tn_dtype d;
    /* Save nothing: callers of this variant do not read the message. */
    return tn_promote_types(a, b, &d) == TN_OK ? d : TN_DTYPE_UNDEFINED;
}

tn_dtype tn_scalar_value_dtype(const tn_value *v) {
    switch (v->tag) {
    case TN_V_INT: return TN_DTYPE_INT64;
    case TN_V_UINT: return TN_DTYPE_UINT64;
    case TN_V_DOUBLE: return TN_DTYPE_FLOAT64;
    case TN_V_BOOL: return TN_DTYPE_BOOL;
    case TN_V_COMPLEX: return TN_DTYPE_COMPLEX128;
    default: return TN_DTYPE_UNDEFINED;
    }
}

static tn_status promote_skip_undefined(tn_dtype a, tn_dtype b, tn_dtype *out) {
    if (a == TN_DTYPE_UNDEFINED) { *out = b; return TN_OK; }
    if (b == TN_DTYPE_UNDEFINED) { *out = a; return TN_OK; }
    return tn_promote_types(a, b, out);
}

/* Python floats/complexes take the default (complex) dtype, not double. */
static tn_dtype wrapped_dtype(tn_dtype d) {
    if (tn_dtype_is_complex(d)) return tn_dtype_to_complex(tn_default_dtype());
    if (tn_dtype_is_floating(d)) return tn_default_dtype();
    return d;
}

static tn_status update(tn_result_type_state *st, tn_dtype d, int cls) {
    tn_dtype *slot = cls == 0 ? &st->dim_result : cls == 1 ? &st->zero_result : &st->wrapped_result;
    return promote_skip_undefined(*slot, d, slot);
}

tn_status tn_result_type_update_tensor(tn_result_type_state *st, const tn_tensor *t) {
    if (!t) return TN_OK;
    bool wrapped = (t->flags & TN_TENSOR_WRAPPED_NUMBER) != 0;
    tn_dtype d = wrapped ? wrapped_dtype(t->dtype) : t->dtype;
    return update(st, d, t->ndim > 0 ? 0 : wrapped ? 2 : 1);
}

tn_status tn_result_type_update_value(tn_result_type_state *st, const tn_value *v) {
    if (v->tag == TN_V_NONE) return TN_OK;
    if (v->tag == TN_V_TENSOR) return tn_result_type_update_tensor(st, v->u.t);
    tn_dtype d = tn_scalar_value_dtype(v);
    if (d == TN_DTYPE_UNDEFINED) return tn_error(TN_ERR_TYPE, "result_type: expected a Tensor or a Scalar");
    return update(st, wrapped_dtype(d), 2);
}

/* A lower-priority class only matters when it is of a higher category; a complex
 * scalar keeps a floating tensor's precision (Half + 1j -> ComplexHalf). */
static tn_status combine_categories(tn_dtype higher, tn_dtype lower, tn_dtype *out) {
    bool h_def = higher != TN_DTYPE_UNDEFINED, l_def = lower != TN_DTYPE_UNDEFINED;
    if (h_def && tn_dtype_is_complex(higher)) { *out = higher; return TN_OK; }
    if (l_def && tn_dtype_is_complex(lower)) {
        *out = h_def && tn_dtype_is_floating(higher) ? tn_dtype_to_complex(higher) : lower;
        return TN_OK;
    }
    if (h_def && tn_dtype_is_floating(higher)) { *out = higher; return TN_OK; }
    if (higher == TN_DTYPE_BOOL || (l_def && tn_dtype_is_floating(lower))) return promote_skip_undefined(higher, lower, out);
    *out = h_def ? higher : lower;
    return TN_OK;
}

tn_status tn_result_type_finish(const tn_result_type_state *st, tn_dtype *out) {
    tn_dtype low;
    TN_TRY(combine_categories(st->zero_result, st->wrapped_result, &low));
    return combine_categories(st->dim_result, low, out);
}

tn_status tn_result_type(int n, const tn_value *operands, tn_dtype *out) {
    tn_result_type_state st = tn_result_type_state_init();
    for (int i = 0; i < n; i++) TN_TRY(tn_result_type_update_value(&st, &operands[i]));
    return tn_result_type_finish(&st, out);
}
