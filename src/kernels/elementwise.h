/* elementwise.h — the loop contract shared by every elementwise kernel, and the kernel
 * tables the elementwise ops choose from.
 *
 * A loop processes n elements of a 1-D slice: data[0..nout-1] are outputs, then the
 * inputs, each advanced by its own byte stride (0 = broadcast). ctx carries op constants
 * (alpha, scalar operands, ...). Loops never allocate and never see a tensor; the
 * iterator (src/ops/iter.h) hands them coalesced slices. Plain C11. */
#ifndef TN_KERNELS_ELEMENTWISE_H
#define TN_KERNELS_ELEMENTWISE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

typedef void (*tn_loop_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);
/* The same loop over `rows` slices of n elements: slice r's operand k starts at
 * data[k] + r * outer[k]. Equal, element for element, to calling the 1-D loop once per slice
 * (what it is for: one call instead of one per short row of a broadcast). */
typedef void (*tn_loop_rows_fn)(char **data, const int64_t *strides, int64_t n, int64_t rows, const int64_t *outer,
                                void *ctx);

/* Constants handed to a loop through ctx. Scalars are stored at the widest precision
 * the op's math type needs: integers as int64, reals as double, complexes as (re, im). */
typedef struct tn_loop_ctx {
    int64_t i[4];
    double d[4];
    double c[4][2];
    bool has_min, has_max; /* clamp's optional bounds */
    int mode;              /* op-specific variant (rounding mode, approximate, ...) */
    int status;            /* set by a loop that hit an error (TN_EW_STATUS_*); checked after */
    unsigned char bytes[16]; /* a fill value already converted to the output dtype */
} tn_loop_ctx;

enum { TN_EW_STATUS_OK = 0, TN_EW_STATUS_ZERO_DIVISION = 1 };

/* Every elementwise kernel slot. Each is a per-dtype table filled with the scalar
 * reference loops first; SIMD variants may overwrite entries at init. */
#define TN_EW_OPS(X)                                                                        \
    /* unary, floating (integers are promoted by the op) */                                \
    X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p) X(sqrt) X(rsqrt) X(sin) X(cos) \
    X(tan) X(tanh) X(sinh) X(cosh) X(asin) X(acos) X(atan) X(asinh) X(acosh) X(atanh)       \
    X(sigmoid) X(erf) X(erfc) X(reciprocal) X(silu) X(gelu) X(gelu_tanh) X(frac)  \
    X(logit) X(mish) X(softplus) X(elu) X(hardsigmoid) X(hardswish) X(softshrink) X(hardshrink)\
    X(sinc) X(angle) X(log_sigmoid)                                                         \
    X(leaky_relu) X(round_decimals) X(pow_scalar) X(mul_scalar) X(div_scalar) X(lerp_scalar) \
    /* unary, numeric */                                                                   \
    X(abs) X(neg) X(floor) X(ceil) X(round) X(trunc) X(sign) X(relu) X(square) X(clamp) X(threshold) \
    X(bitwise_not) X(nan_to_num) X(pow_int_scalar)                                          \
    /* unary, Bool result */                                                               \
    X(isnan) X(isinf) X(isfinite) X(isposinf) X(isneginf) X(logical_not) X(signbit)         \
    /* binary */                                                                           \
    X(add) X(mul) X(div) X(div_trunc) X(div_floor) X(remainder) X(fmod) X(maximum)          \
    X(minimum) X(fmax) X(fmin) X(pow) X(atan2) X(hypot) X(copysign) X(xlogy)                \
    X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(lshift) X(rshift)                         \
    X(logaddexp) X(logaddexp2) X(heaviside) X(gcd) X(lcm) X(prelu)                          \
    /* binary, Bool result */                                                              \
    X(eq) X(ne) X(lt) X(le) X(gt) X(ge) X(logical_and) X(logical_or) X(logical_xor)         \
    /* the same comparisons' 0 / 1 in the operands' dtype: a derived in-place / out= comparison \
       into a tensor of that dtype (tn_ew_cmp_num; same order as above) */                  \
    X(eq_num) X(ne_num) X(lt_num) X(le_num) X(gt_num) X(ge_num) X(logical_and_num)          \
    X(logical_or_num) X(logical_xor_num)                                                    \
    /* ternary */                                                                          \
    X(lerp) X(addcmul) X(addcdiv) X(clamp_tensor)                                           \
    /* special functions (elementwise_special.c): unary, floating */                      \
    X(lgamma) X(digamma) X(polygamma) X(mvlgamma) X(erfinv) X(i0) X(i0e) X(i1) X(i1e)       \
    X(erfcx) X(ndtr) X(ndtri) X(log_ndtr) X(entr) X(bessel_j0) X(bessel_j1) X(bessel_y0)    \
    X(bessel_y1) X(modified_bessel_k0) X(modified_bessel_k1) X(scaled_modified_bessel_k0)   \
    X(scaled_modified_bessel_k1) X(spherical_bessel_j0) X(airy_ai)                               \
    /* special functions: binary */                                                        \
    X(xlog1py) X(zeta) X(igamma) X(igammac) X(nextafter) X(chebyshev_t) X(chebyshev_u)      \
    X(chebyshev_v) X(chebyshev_w) X(shifted_chebyshev_t) X(shifted_chebyshev_u)             \
    X(shifted_chebyshev_v) X(shifted_chebyshev_w) X(hermite_h) X(hermite_he) X(laguerre_l)  \
    X(legendre_p)

typedef enum tn_ew_op {
#define TN_X(op) TN_EW_##op,
    TN_EW_OPS(TN_X)
#undef TN_X
    TN_EW_COUNT
} tn_ew_op;

/* A comparison's sibling writing 0 / 1 in the operands' dtype (eq -> eq_num), or -1 for
 * any other op. */
static inline int tn_ew_cmp_num(tn_ew_op op) {
    _Static_assert(TN_EW_logical_xor_num - TN_EW_eq_num == TN_EW_logical_xor - TN_EW_eq, "the _num rows follow the comparisons' order");
    return op >= TN_EW_eq && op <= TN_EW_logical_xor ? (int)(op - TN_EW_eq + TN_EW_eq_num) : -1;
}

/* The loop for (op, dtype), or NULL when upstream refuses that dtype. For Bool-result
 * ops `dtype` is the input (computation) dtype. */
tn_loop_fn tn_ew_loop(tn_ew_op op, tn_dtype dtype);
/* The scalar reference loop for (op, dtype), whatever the ISA tier (tests compare the
 * vector loops against it). */
tn_loop_fn tn_ew_loop_scalar(tn_ew_op op, tn_dtype dtype);
/* The rows form of a loop returned by tn_ew_loop, or NULL when it has none. */
tn_loop_rows_fn tn_ew_loop_rows(tn_loop_fn loop);
/* Registers `rows` as the rows form of `loop` (by the ISA files, at the tables' init). */
void tn_ew_register_rows(tn_loop_fn loop, tn_loop_rows_fn rows);
/* The op's name as a string ("exp"). */
const char *tn_ew_name(tn_ew_op op);

/* Dtype-agnostic byte loops: where (data: out, cond(bool), a, b), masked fill (out, self,
 * mask(bool); value bytes in ctx->bytes) and fill (out; ctx->bytes), by element size
 * 1, 2, 4, 8 or 16; NULL for other sizes. */
tn_loop_fn tn_ew_where_loop(int itemsize);
tn_loop_fn tn_ew_masked_fill_loop(int itemsize);
tn_loop_fn tn_ew_fill_loop(int itemsize);

/* Filled by each kernel file for its ops (called once, in order, by tn_ew_loop). */
void tn_ew_register_unary(tn_loop_fn (*t)[TN_DTYPE_COUNT]);
void tn_ew_register_binary(tn_loop_fn (*t)[TN_DTYPE_COUNT]);
void tn_ew_register_special(tn_loop_fn (*t)[TN_DTYPE_COUNT]);

/* frexp over n contiguous elements of a floating dtype: mantissa (same dtype) and int32
 * exponent, both contiguous (elementwise_special.c). */
void tn_ew_frexp(tn_dtype dtype, const char *in, char *mant, int32_t *expo, int64_t n);
/* One element of it, float32 / float64 (by the bits; equal to libm's frexpf / frexp). */
float tn_frexp_f32(float x, int *e);
double tn_frexp_f64(double x, int *e);

#endif
