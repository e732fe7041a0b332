/* scalar.h — a Scalar (a number tn_value: int64, uint64, double, bool, complex) read as a
 * number, and one element of any computation dtype read and written as one, with
 * upstream's conversion rules. Used where Scalars reach kernels and where single elements
 * cross the Python boundary (item(), tolist(), torch.tensor(data)).
 *
 * The unsigned kind (TN_V_UINT) is upstream's Scalar Tag::UInt: the binding makes it for a
 * Python int in [2**63, 2**64) only, so every TN_V_UINT value exceeds INT64_MAX. It is a
 * uint64 number wherever it is read as one (positive as a double, a UInt64 wrapped-number
 * tensor in promotion) and wraps only where upstream's kernels cast it unchecked into an
 * int64 computation. */
#ifndef TN_SCALAR_H
#define TN_SCALAR_H

#include "core/tensor.h"
#include "ops/value.h"

/* The Scalar as a double: the real part of a complex, 0 for a tag that is not a number. */
static inline double tn_scalar_as_double(const tn_value *v) {
    switch (v->tag) {
    case TN_V_INT: return (double)v->u.i;
    case TN_V_UINT: return (double)v->u.u;
    case TN_V_BOOL: return v->u.b ? 1.0 : 0.0;
    case TN_V_DOUBLE: return v->u.d;
    case TN_V_COMPLEX: return v->u.c.re;
    default: return 0.0;
    }
}

/* (a + b) / 2 as upstream computes it on two Scalars (rrelu's evaluation slope): two bools
 * add as a bool (True + True is True), anything else as doubles. */
static inline double tn_scalar_midpoint(const tn_value *a, const tn_value *b) {
    if (a->tag == TN_V_BOOL && b->tag == TN_V_BOOL) return (a->u.b || b->u.b) ? 0.5 : 0.0;
    return (tn_scalar_as_double(a) + tn_scalar_as_double(b)) / 2;
}

/* The Scalar as an int64 by C conversion (upstream's unchecked cast of a Scalar into an
 * int64 computation: a uint wraps, a double truncates, a complex keeps its real part). */
static inline int64_t tn_scalar_as_int64(const tn_value *v) {
    switch (v->tag) {
    case TN_V_INT: return v->u.i;
    case TN_V_UINT: return (int64_t)v->u.u;
    case TN_V_BOOL: return v->u.b;
    case TN_V_DOUBLE: return (int64_t)v->u.d;
    case TN_V_COMPLEX: return (int64_t)v->u.c.re;
    default: return 0;
    }
}

/* Whether v is an integral Scalar: an int or a uint, and a bool when include_bool
 * (upstream's Scalar::isIntegral(includeBool)). */
static inline bool tn_scalar_is_integral(const tn_value *v, bool include_bool) {
    return v->tag == TN_V_INT || v->tag == TN_V_UINT || (include_bool && v->tag == TN_V_BOOL);
}

/* Whether v is a number Scalar at all (int, uint, double, bool, complex). */
static inline bool tn_scalar_is_number(const tn_value *v) {
    return v->tag == TN_V_INT || v->tag == TN_V_UINT || v->tag == TN_V_DOUBLE || v->tag == TN_V_BOOL ||
           v->tag == TN_V_COMPLEX;
}

/* Loads the element at p as TN_V_INT (integral; TN_V_UINT for a UInt64 element above
 * INT64_MAX, as upstream's item()), TN_V_DOUBLE (floating), TN_V_BOOL or
 * TN_V_COMPLEX. Fails (NotImplementedError) for dtypes without element semantics. */
tn_status tn_scalar_load(tn_dtype dtype, const void *p, tn_value *out);
/* Stores v (TN_V_INT/UINT/DOUBLE/BOOL/COMPLEX) at p converted to dtype (C casts with
 * float->int truncation, bf16/f16 round to nearest even). */
tn_status tn_scalar_store(tn_dtype dtype, void *p, const tn_value *v);

#endif
