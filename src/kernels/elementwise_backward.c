/* elementwise_backward.c — scalar reference loops of the pointwise backward operators
 * (kernels/elementwise_backward.h), written with upstream's CPU formulas and operation
 * order (Activation.cpp / PointwiseOps / Loss kernels) in the compute type T. */
#include <tgmath.h>

#include "kernels/cpu_features.h"
#include "kernels/elementwise_access.h"
#include "kernels/elementwise_backward.h"

/* Formulas with temporaries, written once per compute type and picked by _Generic. The
 * loop bodies below see x = grad_output, y = self (or the forward result), z = target. */
#define TN_EWB_HELPERS(T, S)                                                                       \
    /* tanh approximation: 0.5·(1 + tanh u) + 0.5·x·(1 - tanh² u)·u'. */                           \
    static inline T gelu_tanh_grad_##S(T g, T v) {                                                 \
        const T kb = (T)(M_SQRT2 * M_2_SQRTPI * 0.5), kk = (T)0.044715;                            \
        T xs = v * v, th = tanh(kb * (v + kk * (xs * v)));                                         \
        return g * ((T)0.5 * ((T)1 + th) + (T)0.5 * v * (((T)1 - th * th) * (kb * ((T)1 + (T)3 * kk * xs)))); \
    }                                                                                              \
    static inline T silu_grad_##S(T g, T v) {                                                      \
        T s = (T)1 / ((T)1 + exp(-v));                                                             \
        return g * s * ((T)1 + v * ((T)1 - s));                                                    \
    }                                                                                              \
    static inline T softplus_grad_##S(T g, T v, T beta, T threshold) {                             \
        T z = exp(v * beta);                                                                       \
        return (v * beta) > threshold ? g : g * z / (z + (T)1);                                    \
    }                                                                                              \
    static inline T smooth_l1_grad_##S(T g, T a, T b, T norm, T beta) {                            \
        T d = a - b;                                                                               \
        return d <= -beta ? -norm * g : d >= beta ? norm * g : norm * d * g / beta;                \
    }                                                                                              \
    static inline T huber_grad_##S(T g, T a, T b, T norm, T delta) {                               \
        T d = a - b;                                                                               \
        return d <= -delta ? -norm * g * delta : d >= delta ? norm * g * delta : norm * d * g;     \
    }                                                                                              \
    static inline T mish_grad_##S(T g, T v) {                                                     \
        T sg = (T)1 / ((T)1 + exp(-v)), ts = tanh(log1p(exp(v)));                                  \
        return g * (ts + v * sg * ((T)1 - ts * ts));                                               \
    }                                                                                              \
    /* upstream's CPU kernel: with an eps (>= 0; lo = eps and hi = 1 - eps in the dtype)    \
     * 0 outside [lo, hi]; without one NaN outside [0, 1]; at 0 and 1 g * inf; a NaN input   \
     * gives NaN either way */                                                                     \
    static inline T logit_grad_##S(T g, T v, int has_eps, T lo, T hi) {                            \
        if (has_eps ? (v < lo || v > hi) : !(v >= (T)0 && v <= (T)1)) return has_eps ? (T)0 : (T)NAN; \
        return (v == (T)0 || v == (T)1) ? g * (T)INFINITY : g / (v * ((T)1 - v));                  \
    }                                                                                              \
    /* (x - t) / max((1 - x)·x, eps): the clamp keeps the gradient finite at 0 and 1; eps is  \
     * upstream's float 1e-12, also for double. */                                                 \
    static inline T bce_grad_##S(T g, T a, T b) {                                                  \
        T den = ((T)1 - a) * a, eps = (T)1e-12f;                                                   \
        return g * (a - b) / (den < eps ? eps : den);                                              \
    }
TN_EWB_HELPERS(float, f)
TN_EWB_HELPERS(double, d)
#define TN_EWB_PICK(name, v) _Generic((v), float: name##_f, double: name##_d)

#define TN_EWB2(op, ...) TN_EW_FLOATS(TN_EW_B_SAME, ewb_##op, __VA_ARGS__)
#define TN_EWB3(op, ...) TN_EW_FLOATS(TN_EW_T_SAME, ewb_##op, __VA_ARGS__)

TN_EWB2(threshold, y <= (T)ctx->d[0] ? (T)0 : x)
/* threshold_backward also runs on integers (upstream's relu backward of an int tensor). */
TN_EW_INTS(TN_EW_B_SAME, ewb_threshold, y <= (T)ctx->i[0] ? (T)0 : x) /* i[0]: the exact threshold */
/* d/dx x·Φ(x) = Φ(x) + x·φ(x). */
TN_EWB2(gelu, x * ((T)0.5 * ((T)1 + erf(y * (T)M_SQRT1_2)) +
                   y * ((T)(M_2_SQRTPI * M_SQRT1_2 * 0.5) * exp(y * y * (T)-0.5))))
TN_EWB2(gelu_tanh, TN_EWB_PICK(gelu_tanh_grad, y)(x, y))
TN_EWB2(silu, TN_EWB_PICK(silu_grad, y)(x, y))
TN_EWB2(sigmoid, x * ((T)1 - y) * y)
TN_EWB2(tanh, x * ((T)1 - y * y))
/* complex: grad times the conjugate derivative, in c10::complex products */
TN_EW_COMPLEX(TN_EW_B_SAME, ewb_sigmoid, TN_CMUL(x, conj(TN_CMUL((T)1 - y, y))))
TN_EW_COMPLEX(TN_EW_B_SAME, ewb_tanh, TN_CMUL(x, conj((T)1 - TN_CMUL(y, y))))
/* silu's complex backward as upstream's kernel computes it: dy * s * (1 + x (1 - s)),
 * s = 1 / (1 + exp(-x)), without a conjugate */
static inline float _Complex silu_cgrad_c64(float _Complex g, float _Complex v) {
    float _Complex sg = cdiv_c64(1.0f, 1.0f + cexpf(-v));
    return cmul_c64(cmul_c64(g, sg), 1.0f + cmul_c64(v, 1.0f - sg));
}
static inline double _Complex silu_cgrad_c128(double _Complex g, double _Complex v) {
    double _Complex sg = cdiv_c128(1.0, 1.0 + cexp(-v));
    return cmul_c128(cmul_c128(g, sg), 1.0 + cmul_c128(v, 1.0 - sg));
}
TN_EW_COMPLEX(TN_EW_B_SAME, ewb_silu, _Generic((x), float _Complex: silu_cgrad_c64, double _Complex: silu_cgrad_c128)(x, y))
/* NaN inputs get a zero gradient (the in-range test fails), as upstream. */
TN_EWB2(hardtanh, (y > (T)ctx->d[0] && y < (T)ctx->d[1]) ? x : (T)0)
TN_EWB2(leaky_relu, y > (T)0 ? x : x * (T)ctx->d[0])
TN_EWB2(elu, y <= (T)0 ? (ctx->mode ? x * (T)ctx->d[2] * (y + (T)ctx->d[0])
                                    : x * (T)ctx->d[2] * (T)ctx->d[0] * exp(y * (T)ctx->d[2]))
                       : x * (T)ctx->d[1])
TN_EWB2(softplus, TN_EWB_PICK(softplus_grad, y)(x, y, (T)ctx->d[0], (T)ctx->d[1]))
/* Upstream's vectorised form (what all but the tail elements get): NaN takes the middle
 * branch and stays NaN, 3 itself passes the gradient through, -3 gives 0. */
TN_EWB2(hardswish, y <= (T)-3 ? (T)0 : y >= (T)3 ? x : x * ((y / (T)3) + (T)0.5))
/* 1/6 is a float constant upstream, also for double. */
TN_EWB2(hardsigmoid, (y > (T)-3 && y < (T)3) ? x * (T)(1.0f / 6.0f) : (T)0)
TN_EWB3(mse, (T)ctx->d[0] * (y - z) * x)
TN_EWB3(smooth_l1, TN_EWB_PICK(smooth_l1_grad, y)(x, y, z, (T)ctx->d[0], (T)ctx->d[1]))
TN_EWB3(huber, TN_EWB_PICK(huber_grad, y)(x, y, z, (T)ctx->d[0], (T)ctx->d[1]))
TN_EWB3(bce, TN_EWB_PICK(bce_grad, y)(x, y, z))
/* y is the keep mask (converted to 0 / 1 by the iterator). */
TN_EWB2(dropout, y * x * (T)ctx->d[0])
/* softshrink and hardshrink share it: zero inside [-lambda, lambda]. */
TN_EWB2(shrink, (y >= -(T)ctx->d[0] && y <= (T)ctx->d[0]) ? (T)0 : x)
TN_EWB2(mish, TN_EWB_PICK(mish_grad, y)(x, y))
TN_EWB2(logit, TN_EWB_PICK(logit_grad, y)(x, y, ctx->mode, (T)ctx->d[0], (T)ctx->d[1]))
/* z = the forward's buffer exp(-|y|): (y < 0 ? 1 - z / (1 + z) : z / (1 + z)) times grad,
 * upstream's (max_deriv - sign * (z / (1 + z))) * grad with its exact 0 - (-t) = t */
TN_EWB3(log_sigmoid, (y < (T)0 ? (T)1 - z / ((T)1 + z) : z / ((T)1 + z)) * x)

static tn_loop_fn ewb_table[TN_EWB_COUNT][TN_DTYPE_COUNT];
static int ewb_ready;

static void ewb_init(void) {
    tn_loop_fn(*t)[TN_DTYPE_COUNT] = ewb_table;
#define TN_EWB_REG(sfx, E, ST, NT, op, ...) t[TN_EWB_##op][TN_DTYPE_##E] = sfx##_ewb_##op##__scalar;
#define TN_X(op, n) TN_EW_FLOATS(TN_EWB_REG, op)
    TN_EWB_OPS(TN_X)
#undef TN_X
    TN_EW_INTS(TN_EWB_REG, threshold)
    TN_EW_COMPLEX(TN_EWB_REG, sigmoid) TN_EW_COMPLEX(TN_EWB_REG, tanh) TN_EW_COMPLEX(TN_EWB_REG, silu)
#undef TN_EWB_REG
}

tn_loop_fn tn_ewb_loop_scalar(tn_ewb_op op, tn_dtype dtype) {
    /* Filling the table twice from two threads writes the same values: benign. */
    if (!__atomic_load_n(&ewb_ready, __ATOMIC_ACQUIRE)) {
        ewb_init();
        __atomic_store_n(&ewb_ready, 1, __ATOMIC_RELEASE);
    }
    if ((unsigned)op >= TN_EWB_COUNT || (unsigned)dtype >= TN_DTYPE_COUNT) return NULL;
    return ewb_table[op][dtype];
}

tn_loop_fn tn_ewb_loop(tn_ewb_op op, tn_dtype dtype) {
    if (op == TN_EWB_silu && dtype == TN_DTYPE_FLOAT32) {
        tn_isa isa = tn_cpu_isa();
        if (isa >= TN_ISA_AVX512) return tn_ewb_silu_f32__avx512;
        if (isa >= TN_ISA_AVX2) return tn_ewb_silu_f32__avx2;
    }
    if (op == TN_EWB_threshold && dtype == TN_DTYPE_FLOAT32) {
        tn_isa isa = tn_cpu_isa();
        if (isa >= TN_ISA_AVX512) return tn_ewb_threshold_f32__avx512;
        if (isa >= TN_ISA_AVX2) return tn_ewb_threshold_f32__avx2;
    }
    return tn_ewb_loop_scalar(op, dtype);
}
