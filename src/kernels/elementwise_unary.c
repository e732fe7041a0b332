/* elementwise_unary.c — scalar reference loops of the one-input elementwise ops, per
 * dtype, with upstream's CPU formulas (same operation order, so results agree bit for
 * bit where upstream's scalar path is exact; transcendental functions use libm, which
 * differs from upstream's SLEEF vector path by at most 1 ulp in float32/float64). */
#include <tgmath.h>

#include "kernels/elementwise_access.h"

/* Generic integer formulas compare unsigned values with 0 on purpose. */
#pragma GCC diagnostic ignored "-Wtype-limits"

/* std::max / std::min argument order: NaN in the first argument propagates. */
#define TN_MAXS(a, b) ((a) < (b) ? (b) : (a))
#define TN_MINS(a, b) ((b) < (a) ? (b) : (a))
/* Integer arithmetic modulo 2^N without signed-overflow UB. */
#define TN_WRAP(expr) ((T)(uint64_t)(expr))

/* ---- floating (float, double, half, bfloat16; half types compute in float) -------- */
#define TN_FLOAT_UNARY(op, ...) TN_EW_FLOATS(TN_EW_U_SAME, op, __VA_ARGS__)
TN_FLOAT_UNARY(exp, exp(x))
TN_FLOAT_UNARY(exp2, exp2(x))
TN_FLOAT_UNARY(expm1, expm1(x))
TN_FLOAT_UNARY(log, log(x))
TN_FLOAT_UNARY(log2, log2(x))
TN_FLOAT_UNARY(log10, log10(x))
TN_FLOAT_UNARY(log1p, log1p(x))
TN_FLOAT_UNARY(sqrt, sqrt(x))
TN_FLOAT_UNARY(rsqrt, (T)1 / sqrt(x))
TN_FLOAT_UNARY(sin, sin(x))
TN_FLOAT_UNARY(cos, cos(x))
TN_FLOAT_UNARY(tan, tan(x))
TN_FLOAT_UNARY(tanh, tanh(x))
TN_FLOAT_UNARY(sinh, sinh(x))
TN_FLOAT_UNARY(cosh, cosh(x))
TN_FLOAT_UNARY(asin, asin(x))
TN_FLOAT_UNARY(acos, acos(x))
TN_FLOAT_UNARY(atan, atan(x))
TN_FLOAT_UNARY(asinh, asinh(x))
TN_FLOAT_UNARY(acosh, acosh(x))
TN_FLOAT_UNARY(atanh, atanh(x))
TN_FLOAT_UNARY(sigmoid, (T)1 / ((T)1 + exp(-x)))
TN_FLOAT_UNARY(erf, erf(x))
TN_FLOAT_UNARY(erfc, erfc(x))
TN_FLOAT_UNARY(reciprocal, (T)1 / x)
TN_FLOAT_UNARY(silu, x / ((T)1 + exp(-x)))
TN_FLOAT_UNARY(gelu, x * (T)0.5 * ((T)1 + erf(x * (T)M_SQRT1_2)))
TN_FLOAT_UNARY(gelu_tanh, (T)0.5 * x * ((T)1 + tanh((T)(M_SQRT2 * M_2_SQRTPI * 0.5) * (x + (T)0.044715 * (x * x * x)))))
TN_FLOAT_UNARY(frac, x - trunc(x))
/* mode 1: clamp to [lo, hi] = [d[0], d[1]] first, x < lo tested first (upstream's order:
 * with lo > hi every x < lo becomes lo); NaN passes through. */
#define TN_LOGIT_CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))
/* Upstream's logit runs on Vectorized<scalar_t>, whose BFloat16 / Half arithmetic rounds
 * every operation's result to the type: 1 - x, the quotient and the log are each rounded
 * (TN_EW_RND_<sfx>; the identity for float and double). */
#define TN_LOGIT_OF(c, RD) RD(log(RD((c) / RD((T)1 - (c)))))
#define TN_LOGIT_DEF(sfx, E, ST, NT, op, ...)                                                   \
    TN_EW_U_SAME(sfx, E, ST, NT, op,                                                          \
                 ctx->mode ? TN_LOGIT_OF(TN_LOGIT_CLAMP(x, (T)ctx->d[0], (T)ctx->d[1]), TN_EW_RND_##sfx) \
                           : TN_LOGIT_OF(x, TN_EW_RND_##sfx))
TN_EW_FLOATS(TN_LOGIT_DEF, logit)
TN_FLOAT_UNARY(mish, x * tanh(log1p(exp(x))))
/* upstream's log_sigmoid: min(x, 0) - log1p(exp(-|x|)) (NaN: NaN) */
TN_FLOAT_UNARY(log_sigmoid, (x < (T)0 ? x : (T)0) - log1p(exp(-fabs(x))))
/* d[0] = beta, d[1] = threshold. */
TN_FLOAT_UNARY(softplus, (x * (T)ctx->d[0]) > (T)ctx->d[1] ? x : log1p(exp(x * (T)ctx->d[0])) / (T)ctx->d[0])
/* d[0] = alpha, d[1] = scale, d[2] = input_scale; zero takes the positive branch (upstream: elu(±0) = ±0 whatever alpha, NaN and inf included). */
TN_FLOAT_UNARY(elu, x < (T)0 ? expm1(x * (T)ctx->d[2]) * ((T)ctx->d[0] * (T)ctx->d[1]) : x * (T)ctx->d[1])
TN_FLOAT_UNARY(hardsigmoid, TN_MINS(TN_MAXS(x + (T)3, (T)0), (T)6) / (T)6)
TN_FLOAT_UNARY(hardswish, x * TN_MINS(TN_MAXS(x + (T)3, (T)0), (T)6) / (T)6)
/* upstream's sinc: 1 at 0, else sin(pi x) / (pi x) with pi in the compute type */
TN_FLOAT_UNARY(sinc, x == 0 ? (T)1 : sin((T)M_PI * x) / ((T)M_PI * x))
/* angle of a real number: pi below 0, else 0 (-0 included); NaN kept */
TN_FLOAT_UNARY(angle, x != x ? x : x < (T)0 ? (T)M_PI : (T)0)
TN_FLOAT_UNARY(softshrink, x > (T)ctx->d[0] ? x - (T)ctx->d[0] : (x < -(T)ctx->d[0] ? x + (T)ctx->d[0] : x * (T)0))
/* upstream's hardshrink_kernel: 0 inside [-lambd, lambd] (lambd already in the dtype), NaN passes */
/* upstream's threshold kernel: value where x <= threshold (both in the op's compute type: float
 * for float16 / bfloat16, compared as float), x otherwise (NaN passes) */
TN_FLOAT_UNARY(threshold, x <= (T)ctx->d[0] ? (T)ctx->d[1] : x)
TN_FLOAT_UNARY(hardshrink, (x >= -(T)ctx->d[0] && x <= (T)ctx->d[0]) ? (T)0 : x)
TN_FLOAT_UNARY(leaky_relu, x > (T)0 ? x : x * (T)ctx->d[0])
/* i[0] = decimals; d[0] = 10^|decimals| */
TN_FLOAT_UNARY(round_decimals, ctx->i[0] < 0 ? nearbyint(x / (T)ctx->d[0]) * (T)ctx->d[0]
                                             : nearbyint(x * (T)ctx->d[0]) / (T)ctx->d[0])
/* pow(x, scalar) with upstream's special exponents; mode picks the form, d[0] = exponent. */
TN_FLOAT_UNARY(pow_scalar, ctx->mode == 1 ? sqrt(x) : ctx->mode == 2 ? x * x : ctx->mode == 3 ? x * x * x
                           : ctx->mode == 4 ? (T)1 / sqrt(x) : ctx->mode == 5 ? (T)1 / x
                           : ctx->mode == 6 ? (T)1 / (x * x) : pow(x, (T)ctx->d[0]))
/* Reduced-float mul/div by a Python scalar kept in float (upstream's original_scalar_value). */
TN_FLOAT_UNARY(mul_scalar, x * (T)ctx->d[0])
TN_FLOAT_UNARY(div_scalar, x / (T)ctx->d[0])
TN_FLOAT_UNARY(round, nearbyint(x))
TN_FLOAT_UNARY(floor, floor(x))
TN_FLOAT_UNARY(ceil, ceil(x))
TN_FLOAT_UNARY(trunc, trunc(x))
TN_FLOAT_UNARY(abs, fabs(x))
TN_FLOAT_UNARY(neg, -x)
TN_FLOAT_UNARY(sign, (T)((T)0 < x) - (T)(x < (T)0))
TN_FLOAT_UNARY(relu, x < (T)0 ? (T)0 : x)
TN_FLOAT_UNARY(square, x * x)
/* a NaN bound makes every element NaN (upstream's clamp fills the result with NaN) */
TN_FLOAT_UNARY(clamp, (ctx->has_min && ctx->d[0] != ctx->d[0]) || (ctx->has_max && ctx->d[1] != ctx->d[1]) ? (T)NAN
                      : ctx->has_max ? TN_MINS(ctx->has_min ? TN_MAXS(x, (T)ctx->d[0]) : x, (T)ctx->d[1])
                                     : TN_MAXS(x, (T)ctx->d[0]))
/* d[0] = nan, d[1] = posinf, d[2] = neginf replacements (already in range of the dtype). */
TN_FLOAT_UNARY(nan_to_num, x != x ? (T)ctx->d[0] : x == (T)INFINITY ? (T)ctx->d[1] : x == -(T)INFINITY ? (T)ctx->d[2] : x)

#define TN_FLOAT_UNARY_BOOL(op, ...) TN_EW_FLOATS(TN_EW_U_BOOL, op, __VA_ARGS__)
TN_FLOAT_UNARY_BOOL(isnan, x != x)
TN_FLOAT_UNARY_BOOL(isinf, x == (T)INFINITY || x == -(T)INFINITY)
TN_FLOAT_UNARY_BOOL(isfinite, x == x && x != (T)INFINITY && x != -(T)INFINITY)
TN_FLOAT_UNARY_BOOL(isposinf, x == (T)INFINITY)
TN_FLOAT_UNARY_BOOL(isneginf, x == -(T)INFINITY)
/* the sign bit itself: -0.0 and negative NaNs count */
TN_FLOAT_UNARY_BOOL(signbit, signbit(x) != 0)
TN_FLOAT_UNARY_BOOL(logical_not, !(x != (T)0))

/* ---- complex: the functions glibc provides (upstream calls the same std:: ones) --- */
#define TN_COMPLEX_UNARY(op, ...) TN_EW_COMPLEX(TN_EW_U_SAME, op, __VA_ARGS__)
TN_COMPLEX_UNARY(exp, exp(x))
TN_COMPLEX_UNARY(log, log(x))
TN_COMPLEX_UNARY(sqrt, sqrt(x))
TN_COMPLEX_UNARY(sin, sin(x))
TN_COMPLEX_UNARY(cos, cos(x))
TN_COMPLEX_UNARY(tan, tan(x))
TN_COMPLEX_UNARY(tanh, tanh(x))
TN_COMPLEX_UNARY(sinh, sinh(x))
TN_COMPLEX_UNARY(cosh, cosh(x))
TN_COMPLEX_UNARY(asin, asin(x))
TN_COMPLEX_UNARY(acos, acos(x))
TN_COMPLEX_UNARY(atan, atan(x))
TN_COMPLEX_UNARY(asinh, asinh(x))
TN_COMPLEX_UNARY(acosh, acosh(x))
TN_COMPLEX_UNARY(atanh, atanh(x))
TN_COMPLEX_UNARY(neg, -x)
/* upstream's own complex formulas: log2 / log10 divide log(z) by the real log of the
 * base; 2^z = exp(ln 2 * z); log1p and expm1 from complex_math.h; sigmoid 1 / (1 + exp(-z)) */
#define TN_CREAL_OF(v) _Generic((T)0, float _Complex: (float)(v), double _Complex: (double)(v))
TN_COMPLEX_UNARY(log2, log(x) / TN_CREAL_OF(M_LN2))
TN_COMPLEX_UNARY(log10, log(x) / TN_CREAL_OF(M_LN10))
TN_COMPLEX_UNARY(exp2, exp(TN_CREAL_OF(M_LN2) * x))
TN_COMPLEX_UNARY(log1p, TN_CLOG1P(x))
TN_COMPLEX_UNARY(expm1, TN_CEXPM1(x))
TN_COMPLEX_UNARY(sigmoid, TN_CDIV((T)1, (T)1 + exp(-x)))
TN_COMPLEX_UNARY(silu, TN_CDIV(x, (T)1 + exp(-x)))
/* sinc: 1 at 0, else sin(p) / p with p = (pi + 0i) * z in c10::complex arithmetic */
#define TN_CPI_Z(x) TN_CMUL(_Generic((T)0, float _Complex: CMPLXF((float)M_PI, 0.0f), double _Complex: CMPLX(M_PI, 0.0)), x)
TN_COMPLEX_UNARY(sinc, x == 0 ? (T)1 : TN_CDIV(sin(TN_CPI_Z(x)), TN_CPI_Z(x)))
/* upstream's 1 / z and 1 / sqrt(z) in c10::complex division */
TN_COMPLEX_UNARY(reciprocal, TN_CDIV((T)1, x))
/* the complex row of sign is upstream's sgn: 0 at 0, else each part over |z| (hypot) */
TN_COMPLEX_UNARY(sign, x == 0 ? (T)0 : x / fabs(x))
TN_COMPLEX_UNARY(rsqrt, TN_CDIV((T)1, sqrt(x)))
/* pow(z, scalar): upstream's special exponents (modes 1-6 as the real row, 7: exponent 0
 * fills 1, 8: exponent 1 copies; products and quotients in c10::complex arithmetic), else
 * std::pow of two complex values (cpow); c[0] = the exponent */
#define TN_CEXPONENT (_Generic((T)0, float _Complex: CMPLXF((float)ctx->c[0][0], (float)ctx->c[0][1]), \
                                     double _Complex: CMPLX(ctx->c[0][0], ctx->c[0][1])))
TN_COMPLEX_UNARY(pow_scalar, ctx->mode == 1 ? sqrt(x) : ctx->mode == 2 ? TN_CMUL(x, x)
                             : ctx->mode == 3 ? TN_CMUL(TN_CMUL(x, x), x) : ctx->mode == 4 ? TN_CDIV((T)1, sqrt(x))
                             : ctx->mode == 5 ? TN_CDIV((T)1, x) : ctx->mode == 6 ? TN_CDIV((T)1, TN_CMUL(x, x))
                             : ctx->mode == 7 ? (T)1 : ctx->mode == 8 ? x : pow(x, TN_CEXPONENT))
TN_EW_COMPLEX(TN_EW_U_BOOL, isnan, creal(x) != creal(x) || cimag(x) != cimag(x))
TN_EW_COMPLEX(TN_EW_U_BOOL, logical_not, x == 0)

/* ---- integers ---------------------------------------------------------------------- */
#define TN_INT_UNARY(op, ...) TN_EW_INTS(TN_EW_U_SAME, op, __VA_ARGS__)
TN_INT_UNARY(abs, x < 0 ? TN_WRAP(0 - (uint64_t)x) : x)
TN_INT_UNARY(neg, TN_WRAP(0 - (uint64_t)x))
TN_INT_UNARY(sign, (T)((0 < x) - (x < 0)))
TN_INT_UNARY(relu, x < 0 ? (T)0 : x)
TN_INT_UNARY(square, TN_WRAP((uint64_t)x * (uint64_t)x))
TN_INT_UNARY(threshold, x <= (T)ctx->i[0] ? (T)ctx->i[1] : x)
TN_INT_UNARY(clamp, ctx->has_max ? TN_MINS(ctx->has_min ? TN_MAXS(x, (T)ctx->i[0]) : x, (T)ctx->i[1])
                                 : TN_MAXS(x, (T)ctx->i[0]))
TN_INT_UNARY(bitwise_not, (T)~x)
TN_EW_INTS(TN_EW_U_BOOL, logical_not, x == 0)
TN_EW_UINTS_EXT(TN_EW_U_BOOL, logical_not, x == 0)
TN_EW_BOOL(TN_EW_U_SAME, bitwise_not, !x)
TN_EW_BOOL(TN_EW_U_SAME, sign, x)
TN_EW_BOOL(TN_EW_U_BOOL, logical_not, !x)

/* x ** e for integer x and a non-negative integer exponent (i[0]), by squaring, mod 2^N. */
static inline uint64_t powi_u64(uint64_t b, int64_t e) {
    uint64_t r = 1;
    while (e) { if (e & 1) r *= b; b *= b; e >>= 1; }
    return r;
}
TN_INT_UNARY(pow_int_scalar, (T)powi_u64((uint64_t)x, ctx->i[0]))

/* Rounding functions are the identity on integers (upstream returns a copy). */
TN_INT_UNARY(floor, x)
TN_INT_UNARY(ceil, x)
TN_INT_UNARY(round, x)
TN_INT_UNARY(trunc, x)
TN_EW_UINTS_EXT(TN_EW_U_SAME, floor, x)
TN_EW_UINTS_EXT(TN_EW_U_SAME, ceil, x)
TN_EW_UINTS_EXT(TN_EW_U_SAME, round, x)
TN_EW_UINTS_EXT(TN_EW_U_SAME, trunc, x)

void tn_ew_register_unary(tn_loop_fn (*t)[TN_DTYPE_COUNT]) {
#define TN_REG_F(op) TN_EW_FLOATS(TN_EW_REG, op)
    TN_REG_F(exp) TN_REG_F(exp2) TN_REG_F(expm1) TN_REG_F(log) TN_REG_F(log2) TN_REG_F(log10)
    TN_REG_F(log1p) TN_REG_F(sqrt) TN_REG_F(rsqrt) TN_REG_F(sin) TN_REG_F(cos) TN_REG_F(tan)
    TN_REG_F(tanh) TN_REG_F(sinh) TN_REG_F(cosh) TN_REG_F(asin) TN_REG_F(acos) TN_REG_F(atan)
    TN_REG_F(asinh) TN_REG_F(acosh) TN_REG_F(atanh) TN_REG_F(sigmoid) TN_REG_F(erf) TN_REG_F(erfc)
    TN_REG_F(reciprocal) TN_REG_F(silu) TN_REG_F(gelu) TN_REG_F(gelu_tanh) TN_REG_F(frac)
    TN_REG_F(logit) TN_REG_F(mish) TN_REG_F(log_sigmoid) TN_REG_F(softplus) TN_REG_F(elu) TN_REG_F(hardsigmoid)
    TN_REG_F(hardswish) TN_REG_F(softshrink) TN_REG_F(hardshrink) TN_REG_F(threshold) TN_REG_F(leaky_relu) TN_REG_F(round_decimals)
    TN_REG_F(pow_scalar) TN_REG_F(mul_scalar) TN_REG_F(div_scalar) TN_REG_F(round) TN_REG_F(floor)
    TN_REG_F(ceil) TN_REG_F(trunc) TN_REG_F(abs) TN_REG_F(neg) TN_REG_F(sign) TN_REG_F(relu)
    TN_REG_F(square) TN_REG_F(clamp) TN_REG_F(nan_to_num) TN_REG_F(isnan) TN_REG_F(isinf)
    TN_REG_F(isfinite) TN_REG_F(isposinf) TN_REG_F(isneginf) TN_REG_F(logical_not) TN_REG_F(sinc) TN_REG_F(signbit) TN_REG_F(angle)
#define TN_REG_C(op) TN_EW_COMPLEX(TN_EW_REG, op)
    TN_REG_C(exp) TN_REG_C(log) TN_REG_C(sqrt) TN_REG_C(sin) TN_REG_C(cos) TN_REG_C(tan) TN_REG_C(tanh)
    TN_REG_C(sinh) TN_REG_C(cosh) TN_REG_C(asin) TN_REG_C(acos) TN_REG_C(atan) TN_REG_C(asinh)
    TN_REG_C(acosh) TN_REG_C(atanh) TN_REG_C(neg) TN_REG_C(isnan) TN_REG_C(logical_not)
    TN_REG_C(reciprocal) TN_REG_C(rsqrt) TN_REG_C(pow_scalar) TN_REG_C(sign)
    TN_REG_C(log2) TN_REG_C(log10) TN_REG_C(exp2) TN_REG_C(log1p) TN_REG_C(expm1) TN_REG_C(sigmoid) TN_REG_C(sinc) TN_REG_C(silu)
#define TN_REG_I(op) TN_EW_INTS(TN_EW_REG, op)
    TN_REG_I(threshold) TN_REG_I(abs) TN_REG_I(neg) TN_REG_I(sign) TN_REG_I(relu) TN_REG_I(square) TN_REG_I(clamp)
    TN_REG_I(bitwise_not) TN_REG_I(logical_not) TN_REG_I(pow_int_scalar) TN_REG_I(floor)
    TN_REG_I(ceil) TN_REG_I(round) TN_REG_I(trunc)
#define TN_REG_U(op) TN_EW_UINTS_EXT(TN_EW_REG, op)
    TN_REG_U(logical_not) TN_REG_U(floor) TN_REG_U(ceil) TN_REG_U(round) TN_REG_U(trunc)
    TN_EW_BOOL(TN_EW_REG, bitwise_not) TN_EW_BOOL(TN_EW_REG, sign) TN_EW_BOOL(TN_EW_REG, logical_not)
}
