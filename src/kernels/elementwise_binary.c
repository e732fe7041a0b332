/* elementwise_binary.c — scalar reference loops of the two- and three-input elementwise
 * ops (arithmetic, comparisons, bitwise, lerp/addcmul/addcdiv/clamp) with upstream's CPU
 * formulas, including its integer division rules (ZeroDivisionError via ctx->status,
 * floor semantics) and complex arithmetic (c10::complex's formulas: elementwise_access.h). */
#include <tgmath.h>

#include "kernels/elementwise_access.h"

/* Generic integer formulas compare unsigned values with 0 on purpose. */
#pragma GCC diagnostic ignored "-Wtype-limits"

#define TN_MAXS(a, b) ((a) < (b) ? (b) : (a))
#define TN_MINS(a, b) ((b) < (a) ? (b) : (a))
#define TN_WRAP(expr) ((T)(uint64_t)(expr))
/* y is -1 of a signed type: the one divisor whose quotient can overflow. */
#define TN_IS_NEG1(y) ((T)-1 < (T)0 && (y) == (T)-1)
#define TN_ZERO_DIV(y) ((y) == 0 ? (ctx->status = TN_EW_STATUS_ZERO_DIVISION, 1) : 0)

/* ---- floating helpers (c10::div_floor_floating and remainder) ----------------------- */
#define TN_DEF_FLOOR_DIV(name, T)                                                   \
    static inline T name(T a, T b) {                                                \
        if (b == 0) return a / b;                                                   \
        T mod = fmod(a, b);                                                         \
        T div = (a - mod) / b;                                                      \
        if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                           \
        if (div == 0) return copysign((T)0, a / b);                                 \
        T fl = floor(div);                                                          \
        if (div - fl > (T)0.5) fl += 1;                                             \
        return fl;                                                                  \
    }
TN_DEF_FLOOR_DIV(floor_div_f, float)
TN_DEF_FLOOR_DIV(floor_div_d, double)
#define TN_DEF_REM(name, T)                                                         \
    static inline T name(T a, T b) {                                                \
        T mod = fmod(a, b);                                                         \
        if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;                           \
        return mod;                                                                 \
    }
TN_DEF_REM(rem_f, float)
TN_DEF_REM(rem_d, double)
#define TN_FLOOR_DIV(x, y) _Generic((x), float: floor_div_f, double: floor_div_d)(x, y)
#define TN_REM(x, y) _Generic((x), float: rem_f, double: rem_d)(x, y)
/* upstream's lerp_vec: fmadd(coeff, end - self, base), coeff/base picked by |w| < 0.5
 * (its scalar tail contracts to the same fma; measured on the 2.13.0 wheel) */
#define TN_LERP(x, y, w) (fabs(w) < (T)0.5 ? fma((w), (y) - (x), (x)) : fma((w) - (T)1, (y) - (x), (y)))

/* ---- integer helpers: floor division / remainder on int64 ------------------------- */
static inline int64_t floor_div_i64(int64_t a, int64_t b) {
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) q--;
    return q;
}
static inline int64_t rem_i64(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static inline uint64_t powi_u64(uint64_t b, uint64_t e) {
    uint64_t r = 1;
    while (e) { if (e & 1) r *= b; b *= b; e >>= 1; }
    return r;
}
/* Negative integer exponents: upstream's powi_impl (only +-1 survive). */
#define TN_POWI(x, y) ((y) < 0 ? ((x) == 1 ? (T)1 : TN_IS_NEG1(x) ? (((0 - (int64_t)(y)) & 1) ? (T)-1 : (T)1) : (T)0) \
                               : (T)powi_u64((uint64_t)(x), (uint64_t)(y)))

#define TN_CALPHA (_Generic((T)0, float _Complex: CMPLXF((float)ctx->c[0][0], (float)ctx->c[0][1]), \
                                  double _Complex: CMPLX(ctx->c[0][0], ctx->c[0][1])))

/* ---- floating ---------------------------------------------------------------------- */
#define TN_FB(op, ...) TN_EW_FLOATS(TN_EW_B_SAME, op, __VA_ARGS__)
/* mode 1: alpha != 1, fused as upstream's vectorised fmadd(other, alpha, self). */
TN_FB(add, ctx->mode ? fma(y, (T)ctx->d[0], x) : x + y)
TN_FB(mul, x * y)
TN_FB(div, x / y)
/* upstream truncates a quotient already rounded to the storage type (scalar_t a / b in
 * c10::Half/BFloat16 arithmetic), so reduced types round before trunc */
TN_EW_B_SAME(f32, FLOAT32, float, float, div_trunc, trunc(x / y))
TN_EW_B_SAME(f64, FLOAT64, double, double, div_trunc, trunc(x / y))
TN_EW_B_SAME(f16, FLOAT16, uint16_t, float, div_trunc, trunc(tn_round_half_f32(x / y)))
TN_EW_B_SAME(bf16, BFLOAT16, uint16_t, float, div_trunc, trunc(tn_round_bf16_f32(x / y)))
TN_FB(div_floor, TN_FLOOR_DIV(x, y))
TN_FB(remainder, TN_REM(x, y))
TN_FB(fmod, fmod(x, y))
TN_FB(maximum, (x != x || y != y) ? x + y : (x > y ? x : y))
TN_FB(minimum, (x != x || y != y) ? x + y : (x < y ? x : y))
TN_FB(fmax, fmax(x, y))
TN_FB(fmin, fmin(x, y))
TN_FB(pow, pow(x, y))
TN_FB(atan2, atan2(x, y))
TN_FB(hypot, hypot(x, y))
TN_FB(copysign, copysign(x, y))
/* log(y) rounded to a reduced type before the product, as upstream's Half / BFloat16 xlogy */
#define TN_XLOGY(R) (y != y ? y : (x == 0 ? (T)0 : x * R(log(y))))
TN_EW_FLOATS(TN_EW_B_SAME_RND, xlogy, TN_XLOGY)
TN_FB(lerp_scalar, TN_LERP(x, y, (T)ctx->d[0]))
/* upstream's logaddexp: equal infinities pass through, else max + log1p(exp(-|x - y|)) */
TN_FB(logaddexp, (isinf(x) && x == y) ? x : TN_MAXS(x, y) + log1p(exp(-fabs(x - y))))
TN_FB(logaddexp2, (isinf(x) && x == y) ? x : TN_MAXS(x, y) + log1p(exp2(-fabs(x - y))) * (T)(1.0 / M_LN2))
TN_FB(heaviside, x == 0 ? y : (T)(x > 0))
/* upstream's _prelu_kernel: y is the weight broadcast over the input */
TN_FB(prelu, x > 0 ? x : y * x)
/* The comparisons, one row each: a Bool result (op) and the same test as 0 / 1 in the
 * operands' type (op_num), for floats and integers (bool operands: their own rows below) */
#define TN_EW_CMP_ROWS(X)                                                                   \
    X(eq, x == y) X(ne, x != y) X(lt, x < y) X(le, x <= y) X(gt, x > y) X(ge, x >= y)       \
    X(logical_and, x != 0 && y != 0) X(logical_or, x != 0 || y != 0)                      \
    X(logical_xor, (x != 0) != (y != 0))
#define TN_FBB(op, ...) TN_EW_FLOATS(TN_EW_B_BOOL, op, __VA_ARGS__)
#define TN_CMP_F(op, e) TN_FBB(op, e) TN_FB(op##_num, (T)(e))
TN_EW_CMP_ROWS(TN_CMP_F)
#define TN_FT(op, ...) TN_EW_FLOATS(TN_EW_T_SAME, op, __VA_ARGS__)
/* self + value * t1 * t2 as upstream's compiled loops contract it: fma(value * t1, t2, self) */
TN_FT(addcmul, fma((T)ctx->d[0] * y, z, x))
TN_FT(addcdiv, x + (T)ctx->d[0] * y / z)
TN_FT(lerp, TN_LERP(x, y, z))
TN_FT(clamp_tensor, (y != y || z != z) ? y + z : TN_MINS(TN_MAXS(x, y), z))

/* ---- complex ----------------------------------------------------------------------- */
#define TN_CB(op, ...) TN_EW_COMPLEX(TN_EW_B_SAME, op, __VA_ARGS__)
TN_CB(add, ctx->mode ? x + TN_CMUL(TN_CALPHA, y) : x + y)
TN_CB(mul, TN_CMUL(x, y))
TN_CB(div, TN_CDIV(x, y))
/* std::pow of two c10::complex values: libstdc++'s cpow (exp(y log x)), as glibc computes it */
TN_CB(pow, pow(x, y))
TN_CB(logaddexp, TN_CLOGADDEXP(x, y))
/* upstream's lerp of complex values: from the nearer end, |w| < 1/2 deciding (no fma);
 * the scalar form's c[0] = the weight, mode = whether |w| < 1/2 (decided once by the op) */
#define TN_CLERP_BY(small, x, y, w) ((small) ? (x) + TN_CMUL((w), (y) - (x)) : (y) - TN_CMUL((y) - (x), (T)1 - (w)))
#define TN_CLERP(x, y, w) TN_CLERP_BY(fabs(w) < 0.5, x, y, w)
TN_CB(lerp_scalar, TN_CLERP_BY(ctx->mode, x, y, TN_CALPHA))
#define TN_CBB(op, ...) TN_EW_COMPLEX(TN_EW_B_BOOL, op, __VA_ARGS__)
TN_CBB(eq, x == y) TN_CBB(ne, x != y)
#define TN_CT(op, ...) TN_EW_COMPLEX(TN_EW_T_SAME, op, __VA_ARGS__)
/* self + value * t1 * t2 and self + value * t1 / t2, left to right in c10::complex
 * arithmetic; c[0] = value */
TN_CT(addcmul, x + TN_CMUL(TN_CMUL(TN_CALPHA, y), z))
TN_CT(addcdiv, x + TN_CDIV(TN_CMUL(TN_CALPHA, y), z))
TN_CT(lerp, TN_CLERP(x, y, z))
TN_CBB(logical_and, x != 0 && y != 0) TN_CBB(logical_or, x != 0 || y != 0) TN_CBB(logical_xor, (x != 0) != (y != 0))

/* ---- integers (uint8, int8..int64) ------------------------------------------------- */
#define TN_IB(op, ...) TN_EW_INTS(TN_EW_B_SAME, op, __VA_ARGS__)
TN_IB(add, TN_WRAP((uint64_t)x + (uint64_t)(T)ctx->i[0] * (uint64_t)y))
TN_IB(mul, TN_WRAP((uint64_t)x * (uint64_t)y))
TN_IB(div_trunc, TN_ZERO_DIV(y) ? (T)0 : TN_IS_NEG1(y) ? TN_WRAP(0 - (uint64_t)x) : (T)(x / y))
TN_IB(div_floor, TN_ZERO_DIV(y) ? (T)0 : (T)floor_div_i64((int64_t)x, (int64_t)y))
TN_IB(remainder, TN_ZERO_DIV(y) ? (T)0 : (T)rem_i64((int64_t)x, (int64_t)y))
TN_IB(fmod, TN_ZERO_DIV(y) ? (T)0 : TN_IS_NEG1(y) ? (T)0 : (T)(x % y))
TN_IB(maximum, x > y ? x : y)
TN_IB(minimum, x < y ? x : y)
TN_IB(fmax, x > y ? x : y)
TN_IB(fmin, x < y ? x : y)
TN_IB(pow, TN_POWI(x, y))
TN_IB(bitwise_and, (T)(x & y))
TN_IB(bitwise_or, (T)(x | y))
TN_IB(bitwise_xor, (T)(x ^ y))
TN_IB(lshift, ((int64_t)y < 0 || (int64_t)y >= (int64_t)(8 * sizeof(T))) ? (T)0 : TN_WRAP((uint64_t)x << y))
TN_IB(rshift, ((int64_t)y < 0 || (int64_t)y >= (int64_t)(8 * sizeof(T) - ((T)-1 < 0)))
                  ? (T)(x >> (8 * sizeof(T) - ((T)-1 < 0))) : (T)(x >> y))
TN_IB(heaviside, x == 0 ? y : (T)(x > 0))
/* upstream's calc_gcd / calc_lcm. A signed type takes its magnitudes in its own width
 * (abs of the lowest value stays negative: gcd(7, INT64_MIN) = -1 there) and runs Euclid
 * with C's signed remainder; lcm = abs(x / gcd * y) with the product and its abs wrapping
 * in int (the narrow types promote to int) or int64. An unsigned type: plain Euclid. */
static inline uint64_t gcd_u64(uint64_t a, uint64_t b) {
    while (a != 0) { uint64_t c = a; a = b % a; b = c; }
    return b;
}
static inline int64_t gcd_s64(int64_t a, int64_t b) {
    while (a != 0) { int64_t c = a; a = a == -1 ? 0 : b % a; b = c; }
    return b;
}
#define TN_ABS_U64(v) ((int64_t)(v) < 0 ? 0 - (uint64_t)(int64_t)(v) : (uint64_t)(v))
/* |v| wrapped into the element type T, read back as int64 */
#define TN_ABS_IN_T(v) ((int64_t)(T)TN_ABS_U64(v))
#define TN_SIGNED_T ((T)-1 < (T)0)
TN_IB(gcd, TN_SIGNED_T ? (T)gcd_s64(TN_ABS_IN_T(x), TN_ABS_IN_T(y)) : (T)gcd_u64((uint64_t)x, (uint64_t)y))
static inline int64_t lcm_s64(int64_t a, int64_t b, int64_t g, bool wide) {
    if (g == 0) return 0;
    int64_t q = g == -1 ? (int64_t)(0 - (uint64_t)a) : a / g;
    uint64_t p = (uint64_t)q * (uint64_t)b;
    if (wide) return (int64_t)TN_ABS_U64(p);
    int32_t v = (int32_t)(uint32_t)p;
    return v < 0 ? (int32_t)(0u - (uint32_t)v) : v;
}
static inline int64_t lcm_u(int64_t a, int64_t b) {
    uint64_t g = gcd_u64(TN_ABS_U64(a), TN_ABS_U64(b));
    if (g == 0) return 0;
    return (int64_t)((uint64_t)(a / (int64_t)g) * (uint64_t)b);
}
TN_IB(lcm, TN_SIGNED_T ? TN_WRAP(lcm_s64((int64_t)x, (int64_t)y, gcd_s64(TN_ABS_IN_T(x), TN_ABS_IN_T(y)), sizeof(T) == 8))
                       : TN_WRAP(lcm_u((int64_t)x, (int64_t)y)))
#define TN_IBB(op, ...) TN_EW_INTS(TN_EW_B_BOOL, op, __VA_ARGS__)
#define TN_CMP_I(op, e) TN_IBB(op, e) TN_IB(op##_num, (T)(e))
TN_EW_CMP_ROWS(TN_CMP_I)
#define TN_IT(op, ...) TN_EW_INTS(TN_EW_T_SAME, op, __VA_ARGS__)
TN_IT(addcmul, TN_WRAP((uint64_t)x + (uint64_t)(T)ctx->i[0] * (uint64_t)y * (uint64_t)z))
TN_IT(clamp_tensor, TN_MINS(TN_MAXS(x, y), z))

/* ---- uint16/32/64: the few ops upstream dispatches for them ------------------------- */
TN_EW_UINTS_EXT(TN_EW_B_SAME, mul, TN_WRAP((uint64_t)x * (uint64_t)y))
TN_EW_UINTS_EXT(TN_EW_B_SAME, bitwise_and, (T)(x & y))
TN_EW_UINTS_EXT(TN_EW_B_SAME, bitwise_or, (T)(x | y))
TN_EW_UINTS_EXT(TN_EW_B_SAME, bitwise_xor, (T)(x ^ y))
TN_EW_UINTS_EXT(TN_EW_B_BOOL, eq, x == y)
TN_EW_UINTS_EXT(TN_EW_B_BOOL, ne, x != y)

/* ---- bool --------------------------------------------------------------------------- */
#define TN_BB(op, ...) TN_EW_BOOL(TN_EW_B_SAME, op, __VA_ARGS__)
TN_BB(add, x || (ctx->i[0] != 0 && y))
TN_BB(mul, x && y)
TN_BB(maximum, x || y) TN_BB(minimum, x && y) TN_BB(fmax, x || y) TN_BB(fmin, x && y)
TN_BB(bitwise_and, x && y) TN_BB(bitwise_or, x || y) TN_BB(bitwise_xor, x != y)
TN_BB(heaviside, x || y)
/* bool rows at O3 with branch-free operators (x and y are 0/1 after the load), so the
 * contiguous loops vectorise: logical_and of 1e6 bools took 12x upstream's time */
#pragma GCC push_options
#pragma GCC optimize("O3")
#define TN_BBB(op, ...) TN_EW_BOOL(TN_EW_B_BOOL, op, __VA_ARGS__)
TN_BBB(eq, x == y) TN_BBB(ne, x != y) TN_BBB(lt, x < y) TN_BBB(le, x <= y) TN_BBB(gt, x > y) TN_BBB(ge, x >= y)
TN_BBB(logical_and, x & y) TN_BBB(logical_or, x | y) TN_BBB(logical_xor, x != y)
#pragma GCC pop_options

void tn_ew_register_binary(tn_loop_fn (*t)[TN_DTYPE_COUNT]) {
#define TN_REG_F(op) TN_EW_FLOATS(TN_EW_REG, op)
    TN_REG_F(add) TN_REG_F(mul) TN_REG_F(div) TN_REG_F(div_trunc) TN_REG_F(div_floor) TN_REG_F(remainder)
    TN_REG_F(fmod) TN_REG_F(maximum) TN_REG_F(minimum) TN_REG_F(fmax) TN_REG_F(fmin) TN_REG_F(pow)
    TN_REG_F(atan2) TN_REG_F(hypot) TN_REG_F(copysign) TN_REG_F(xlogy) TN_REG_F(lerp_scalar)
    TN_REG_F(logaddexp) TN_REG_F(logaddexp2) TN_REG_F(heaviside) TN_REG_F(prelu)
    TN_REG_F(addcmul) TN_REG_F(addcdiv) TN_REG_F(lerp) TN_REG_F(clamp_tensor)
#define TN_REG_C(op) TN_EW_COMPLEX(TN_EW_REG, op)
    TN_REG_C(add) TN_REG_C(mul) TN_REG_C(div) TN_REG_C(pow) TN_REG_C(eq) TN_REG_C(ne)
    TN_REG_C(logical_and) TN_REG_C(logical_or) TN_REG_C(logical_xor)
    TN_REG_C(logaddexp) TN_REG_C(lerp_scalar) TN_REG_C(addcmul) TN_REG_C(addcdiv) TN_REG_C(lerp)
#define TN_REG_I(op) TN_EW_INTS(TN_EW_REG, op)
    TN_REG_I(add) TN_REG_I(mul) TN_REG_I(div_trunc) TN_REG_I(div_floor) TN_REG_I(remainder) TN_REG_I(fmod)
    TN_REG_I(maximum) TN_REG_I(minimum) TN_REG_I(fmax) TN_REG_I(fmin) TN_REG_I(pow)
    TN_REG_I(bitwise_and) TN_REG_I(bitwise_or) TN_REG_I(bitwise_xor) TN_REG_I(lshift) TN_REG_I(rshift)
    TN_REG_I(addcmul) TN_REG_I(clamp_tensor)
#define TN_REG_CMP(op, e) TN_REG_F(op) TN_REG_F(op##_num) TN_REG_I(op) TN_REG_I(op##_num)
    TN_EW_CMP_ROWS(TN_REG_CMP)
    TN_REG_I(heaviside) TN_REG_I(gcd) TN_REG_I(lcm)
#define TN_REG_U(op) TN_EW_UINTS_EXT(TN_EW_REG, op)
    TN_REG_U(mul) TN_REG_U(bitwise_and) TN_REG_U(bitwise_or) TN_REG_U(bitwise_xor) TN_REG_U(eq) TN_REG_U(ne)
#define TN_REG_B(op) TN_EW_BOOL(TN_EW_REG, op)
    TN_REG_B(add) TN_REG_B(mul) TN_REG_B(maximum) TN_REG_B(minimum) TN_REG_B(fmax) TN_REG_B(fmin)
    TN_REG_B(bitwise_and) TN_REG_B(bitwise_or) TN_REG_B(bitwise_xor)
    TN_REG_B(eq) TN_REG_B(ne) TN_REG_B(lt) TN_REG_B(le) TN_REG_B(gt) TN_REG_B(ge)
    TN_REG_B(logical_and) TN_REG_B(logical_or) TN_REG_B(logical_xor) TN_REG_B(heaviside)
}
