/* optim_fused.c — scalar reference loops of the fused Adam/AdamW, SGD and Adagrad steps
 * (contract in optim_fused.h). One template per optimizer over (storage type, compute
 * type): float32, bfloat16 and float16 compute in float (16-bit types round only when
 * they store), float64 in double. Where upstream's compiled loops fuse a multiply-add
 * (vec::fmadd, or a contraction by its compiler; which one was measured against the
 * 2.13.0 wheel, element by element, on both sides of the vector/scalar boundary) the
 * loop calls fma; everything else rounds after each operation. */
#include "kernels/optim_fused.h"

#include <math.h>

#include "kernels/cpu_features.h"

static inline float ld_f32(const float *p) { return *p; }
static inline void st_f32(float *p, float v) { *p = v; }
static inline double ld_f64(const double *p) { return *p; }
static inline void st_f64(double *p, double v) { *p = v; }
static inline float ld_bf16(const tn_bfloat16 *p) { return tn_bf16_to_f32(*p); }
static inline void st_bf16(tn_bfloat16 *p, float v) { *p = tn_f32_to_bf16(v); }
static inline float ld_f16(const tn_half *p) { return tn_half_to_f32(*p); }
static inline void st_f16(tn_half *p, float v) { *p = tn_f32_to_half(v); }

/* Each kernel is compiled twice from one template: a portable reference and a clone for
 * AVX2+FMA hosts, where fma is one instruction instead of a libm call. fma rounds once
 * either way, so both give the same bits (TN_FORCE_ISA=scalar picks the reference). */
#define TN_ATTR_NONE
#if defined(__x86_64__) && defined(__GNUC__)
#define TN_ATTR_AVX2 __attribute__((target("avx2,fma")))
#define TN_HAVE_AVX2_CLONE 1
#else
#define TN_ATTR_AVX2
#define TN_HAVE_AVX2_CLONE 0
#endif

/* Upstream's Vectorized maximum propagates NaN; std::max(a, b) in its scalar loop is
 * (a < b) ? b : a. */
#define VMAX(a, b) (isnan(a) || isnan(b) ? (a) + (b) : ((a) > (b) ? (a) : (b)))
#define SMAX(a, b) ((a) < (b) ? (b) : (a))

/* A constant as upstream's reduced-precision Adagrad vector loop spells it,
 * fVec(scalar_t(x)): rounded to the storage type first. */
static inline float rc_bf16(double x) { return tn_round_bf16_f32((float)x); }
static inline float rc_f16(double x) { return tn_round_half_f32((float)x); }
#define RC_ID(x) (x)

/* ---- Adam / AdamW ----------------------------------------------------------------------
 * Vector loop: g /= scale; g = -g (maximize); g = fma(p, wd, g) (Adam) or p *= 1 - lr*wd
 * (AdamW); m = fma(coeff, g - m, base) (upstream's two-sided lerp, exact either way);
 * v = fma((1-beta2)*g, g, v*beta2); denom = sqrt(v or max) / sqrt(bc2) + eps;
 * p += (-step_size) * m / denom. Scalar loop: the same except v = fma(v, beta2,
 * (1-beta2)*g*g). */
#define TN_ADAM_TEMPLATE(NAME, ATTR, S, T, LD, ST, FMA, SQRT, FABS)                                          \
    static ATTR void NAME(const tn_adam_consts *c, S *param, S *grad, S *exp_avg, S *exp_avg_sq,          \
                          S *max_exp_avg_sq,                                                           \
              int64_t begin, int64_t end, int64_t vec_end) {                                            \
        const double step_size = c->lr / c->bias_correction1;                                           \
        const T wd = (T)c->weight_decay, decay = (T)(1 - c->lr * c->weight_decay);                      \
        const T w = (T)(1 - c->beta1), b2 = (T)c->beta2, c2 = (T)(1 - c->beta2);                        \
        const T bc2s = (T)c->bias_correction2_sqrt, eps = (T)c->eps, nss = (T)(-step_size);             \
        const bool small = FABS(w) < (T)0.5, has_wd = c->weight_decay != 0;                             \
        const T coeff = small ? w : w - (T)1;                                                           \
        const T scale = c->grad_scale ? (T)*c->grad_scale : (T)1;                                       \
        for (int64_t i = begin; i < end; i++) {                                                         \
            const bool vec = i < vec_end;                                                               \
            T p = LD(&param[i]), g = LD(&grad[i]);                                                      \
            if (c->grad_scale) {                                                                        \
                g = g / scale;                                                                          \
                ST(&grad[i], g);                                                                        \
            }                                                                                           \
            if (c->maximize) g = -g;                                                                    \
            if (has_wd) {                                                                               \
                if (c->adamw) p = p * decay;                                                            \
                else g = FMA(p, wd, g);                                                                 \
            }                                                                                           \
            T m = LD(&exp_avg[i]), v = LD(&exp_avg_sq[i]);                                              \
            m = FMA(coeff, g - m, small ? m : g);                                                       \
            v = vec ? FMA(c2 * g, g, v * b2) : FMA(v, b2, c2 * g * g);                                  \
            ST(&exp_avg[i], m);                                                                         \
            ST(&exp_avg_sq[i], v);                                                                      \
            T s = v;                                                                                    \
            if (c->amsgrad) {                                                                           \
                T mx = LD(&max_exp_avg_sq[i]);                                                          \
                s = vec ? VMAX(mx, v) : SMAX(mx, v);                                                    \
                ST(&max_exp_avg_sq[i], s);                                                              \
            }                                                                                           \
            const T denom = SQRT(s) / bc2s + eps;                                                       \
            ST(&param[i], p + nss * m / denom);                                                         \
        }                                                                                               \
    }
TN_ADAM_TEMPLATE(tn_adam_f32__scalar, TN_ATTR_NONE, float, float, ld_f32, st_f32, fmaf, sqrtf, fabsf)
TN_ADAM_TEMPLATE(tn_adam_f32__avx2, TN_ATTR_AVX2, float, float, ld_f32, st_f32, fmaf, sqrtf, fabsf)
TN_ADAM_TEMPLATE(tn_adam_f64__scalar, TN_ATTR_NONE, double, double, ld_f64, st_f64, fma, sqrt, fabs)
TN_ADAM_TEMPLATE(tn_adam_f64__avx2, TN_ATTR_AVX2, double, double, ld_f64, st_f64, fma, sqrt, fabs)
TN_ADAM_TEMPLATE(tn_adam_bf16__scalar, TN_ATTR_NONE, tn_bfloat16, float, ld_bf16, st_bf16, fmaf, sqrtf, fabsf)
TN_ADAM_TEMPLATE(tn_adam_bf16__avx2, TN_ATTR_AVX2, tn_bfloat16, float, ld_bf16, st_bf16, fmaf, sqrtf, fabsf)
TN_ADAM_TEMPLATE(tn_adam_f16__scalar, TN_ATTR_NONE, tn_half, float, ld_f16, st_f16, fmaf, sqrtf, fabsf)
TN_ADAM_TEMPLATE(tn_adam_f16__avx2, TN_ATTR_AVX2, tn_half, float, ld_f16, st_f16, fmaf, sqrtf, fabsf)

/* ---- SGD -------------------------------------------------------------------------------
 * Vector loop: g = fma(p, wd, g); buf = fma(1 - dampening, g, buf * momentum) (or g on the
 * first step); g = fma(buf, momentum, g) (nesterov) or buf; p = fma(g, -lr, p). Scalar
 * loop: the same except buf = fma(buf, momentum, g * (1 - dampening)).
 * bfloat16 / float16 run the scalar loop's arithmetic on every element (VEC_OK 0):
 * upstream 2.13's reduced-precision vector loop never stores the parameter and reads the
 * momentum buffer's 16-bit elements as float (measured on the wheel), a defect we do not
 * reproduce. */
#define TN_SGD_TEMPLATE(NAME, ATTR, S, T, LD, ST, FMA, VEC_OK)                                              \
    static ATTR void NAME(const tn_sgd_consts *c, S *param, S *grad, S *momentum_buf, int64_t begin,     \
                          int64_t end,                                                                 \
              int64_t vec_end) {                                                                       \
        const T wd = (T)c->weight_decay, mom = (T)c->momentum, damp1 = (T)(1 - c->dampening);          \
        const T nlr = (T)(-c->lr);                                                                     \
        const T scale = c->grad_scale ? (T)*c->grad_scale : (T)1;                                      \
        for (int64_t i = begin; i < end; i++) {                                                        \
            const bool vec = (VEC_OK) && i < vec_end;                                                  \
            T p = LD(&param[i]), g = LD(&grad[i]);                                                     \
            if (c->grad_scale) {                                                                       \
                g = g / scale;                                                                         \
                ST(&grad[i], g);                                                                       \
            }                                                                                          \
            if (c->maximize) g = -g;                                                                   \
            if (c->weight_decay != 0) g = FMA(p, wd, g);                                               \
            if (c->momentum != 0) {                                                                    \
                T buf = g;                                                                             \
                if (!c->is_first_step) {                                                               \
                    T b = LD(&momentum_buf[i]);                                                        \
                    buf = vec ? FMA(damp1, g, b * mom) : FMA(b, mom, g * damp1);                       \
                }                                                                                      \
                ST(&momentum_buf[i], buf);                                                             \
                g = c->nesterov ? FMA(buf, mom, g) : buf;                                              \
            }                                                                                          \
            ST(&param[i], FMA(g, nlr, p));                                                             \
        }                                                                                              \
    }
TN_SGD_TEMPLATE(tn_sgd_f32__scalar, TN_ATTR_NONE, float, float, ld_f32, st_f32, fmaf, 1)
TN_SGD_TEMPLATE(tn_sgd_f32__avx2, TN_ATTR_AVX2, float, float, ld_f32, st_f32, fmaf, 1)
TN_SGD_TEMPLATE(tn_sgd_f64__scalar, TN_ATTR_NONE, double, double, ld_f64, st_f64, fma, 1)
TN_SGD_TEMPLATE(tn_sgd_f64__avx2, TN_ATTR_AVX2, double, double, ld_f64, st_f64, fma, 1)
TN_SGD_TEMPLATE(tn_sgd_bf16__scalar, TN_ATTR_NONE, tn_bfloat16, float, ld_bf16, st_bf16, fmaf, 0)
TN_SGD_TEMPLATE(tn_sgd_bf16__avx2, TN_ATTR_AVX2, tn_bfloat16, float, ld_bf16, st_bf16, fmaf, 0)
TN_SGD_TEMPLATE(tn_sgd_f16__scalar, TN_ATTR_NONE, tn_half, float, ld_f16, st_f16, fmaf, 0)
TN_SGD_TEMPLATE(tn_sgd_f16__avx2, TN_ATTR_AVX2, tn_half, float, ld_f16, st_f16, fmaf, 0)

/* ---- Adagrad ---------------------------------------------------------------------------
 * g = fma(p, wd, g); sum = fma(g, g, sum); std = sqrt(sum) + eps; p -= clr * g / std, in
 * both loops; the reduced-precision vector loop rounds wd, eps and clr to the storage
 * type first (RC). */
#define TN_ADAGRAD_TEMPLATE(NAME, ATTR, S, T, LD, ST, FMA, SQRT, RC)                                          \
    static ATTR void NAME(const tn_adagrad_consts *c, S *param, S *grad, S *state_sum, int64_t begin,    \
                          int64_t end,                                                                 \
              int64_t vec_end) {                                                                         \
        const T wd_s = (T)c->weight_decay, eps_s = (T)c->eps, clr_s = (T)c->clr;                        \
        const T wd_v = (T)RC(c->weight_decay), eps_v = (T)RC(c->eps), clr_v = (T)RC(c->clr);            \
        const T scale = c->grad_scale ? (T)*c->grad_scale : (T)1;                                        \
        for (int64_t i = begin; i < end; i++) {                                                          \
            const bool vec = i < vec_end;                                                                \
            T p = LD(&param[i]), g = LD(&grad[i]);                                                       \
            if (c->grad_scale) {                                                                         \
                g = g / scale;                                                                           \
                ST(&grad[i], g);                                                                         \
            }                                                                                            \
            if (c->maximize) g = -g;                                                                     \
            if (c->weight_decay != 0) g = FMA(p, vec ? wd_v : wd_s, g);                                  \
            const T sum = FMA(g, g, LD(&state_sum[i]));                                                  \
            ST(&state_sum[i], sum);                                                                      \
            const T std = SQRT(sum) + (vec ? eps_v : eps_s);                                             \
            ST(&param[i], p - (vec ? clr_v : clr_s) * g / std);                                          \
        }                                                                                                \
    }
TN_ADAGRAD_TEMPLATE(tn_adagrad_f32__scalar, TN_ATTR_NONE, float, float, ld_f32, st_f32, fmaf, sqrtf, RC_ID)
TN_ADAGRAD_TEMPLATE(tn_adagrad_f32__avx2, TN_ATTR_AVX2, float, float, ld_f32, st_f32, fmaf, sqrtf, RC_ID)
TN_ADAGRAD_TEMPLATE(tn_adagrad_f64__scalar, TN_ATTR_NONE, double, double, ld_f64, st_f64, fma, sqrt, RC_ID)
TN_ADAGRAD_TEMPLATE(tn_adagrad_f64__avx2, TN_ATTR_AVX2, double, double, ld_f64, st_f64, fma, sqrt, RC_ID)
TN_ADAGRAD_TEMPLATE(tn_adagrad_bf16__scalar, TN_ATTR_NONE, tn_bfloat16, float, ld_bf16, st_bf16, fmaf, sqrtf, rc_bf16)
TN_ADAGRAD_TEMPLATE(tn_adagrad_bf16__avx2, TN_ATTR_AVX2, tn_bfloat16, float, ld_bf16, st_bf16, fmaf, sqrtf, rc_bf16)
TN_ADAGRAD_TEMPLATE(tn_adagrad_f16__scalar, TN_ATTR_NONE, tn_half, float, ld_f16, st_f16, fmaf, sqrtf, rc_f16)
TN_ADAGRAD_TEMPLATE(tn_adagrad_f16__avx2, TN_ATTR_AVX2, tn_half, float, ld_f16, st_f16, fmaf, sqrtf, rc_f16)

static bool use_avx2(void) { return TN_HAVE_AVX2_CLONE && tn_cpu_isa() >= TN_ISA_AVX2; }

#define TN_DISPATCH_ADAM(NAME, S)                                                                     \
    void NAME(const tn_adam_consts *c, S *param, S *grad, S *exp_avg, S *exp_avg_sq, S *max_exp_avg_sq,  \
              int64_t begin, int64_t end, int64_t vec_end) {                                           \
        (use_avx2() ? NAME##__avx2 : NAME##__scalar)(c, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, \
                                                     begin, end, vec_end);                             \
    }
TN_DISPATCH_ADAM(tn_adam_f32, float)
TN_DISPATCH_ADAM(tn_adam_f64, double)
TN_DISPATCH_ADAM(tn_adam_bf16, tn_bfloat16)
TN_DISPATCH_ADAM(tn_adam_f16, tn_half)
#define TN_DISPATCH_3(NAME, CONSTS, S)                                                                \
    void NAME(const CONSTS *c, S *a, S *b, S *d, int64_t begin, int64_t end, int64_t vec_end) {        \
        (use_avx2() ? NAME##__avx2 : NAME##__scalar)(c, a, b, d, begin, end, vec_end);                 \
    }
TN_DISPATCH_3(tn_sgd_f32, tn_sgd_consts, float)
TN_DISPATCH_3(tn_sgd_f64, tn_sgd_consts, double)
TN_DISPATCH_3(tn_sgd_bf16, tn_sgd_consts, tn_bfloat16)
TN_DISPATCH_3(tn_sgd_f16, tn_sgd_consts, tn_half)
TN_DISPATCH_3(tn_adagrad_f32, tn_adagrad_consts, float)
TN_DISPATCH_3(tn_adagrad_f64, tn_adagrad_consts, double)
TN_DISPATCH_3(tn_adagrad_bf16, tn_adagrad_consts, tn_bfloat16)
TN_DISPATCH_3(tn_adagrad_f16, tn_adagrad_consts, tn_half)

int64_t tn_optim_upstream_lanes(tn_dtype dtype) { return 32 / tn_dtype_itemsize(dtype); }
