/* complex_math.h — the complex arithmetic and functions upstream defines itself rather
 * than taking from the C library (c10::complex's product and quotient, c10's log1p and
 * expm1, ATen's log-add-exp of two complex values with its NaN / infinity cases), for
 * float _Complex and double _Complex; shared by the elementwise loops and the
 * logcumsumexp scan. Plain C11, header-only. */
#ifndef TN_KERNELS_COMPLEX_MATH_H
#define TN_KERNELS_COMPLEX_MATH_H

#include <complex.h>
#include <math.h>

/* ---- complex arithmetic as c10::complex does it ------------------------------------ */
#define TN_DEF_CPLX(sfx, C, R, MK)                                                       \
    static inline C cmul_##sfx(C x, C y) {                                               \
        R a = creal(x), b = cimag(x), c = creal(y), d = cimag(y);                        \
        return MK(a * c - b * d, a * d + b * c);                                         \
    }                                                                                    \
    static inline C cdiv_##sfx(C x, C y) {                                               \
        R a = creal(x), b = cimag(x), c = creal(y), d = cimag(y);                        \
        R ac = fabs(c), ad = fabs(d);                                                    \
        if (ac >= ad) {                                                                  \
            if (ac == 0 && ad == 0) return MK(a / ac, b / ad);                           \
            R rat = d / c, scl = (R)1 / (c + d * rat);                                   \
            return MK((a + b * rat) * scl, (b - a * rat) * scl);                         \
        }                                                                                \
        R rat = c / d, scl = (R)1 / (d + c * rat);                                       \
        return MK((a * rat + b) * scl, (b * rat - a) * scl);                             \
    }
TN_DEF_CPLX(c64, float _Complex, float, CMPLXF)
TN_DEF_CPLX(c128, double _Complex, double, CMPLX)
#define TN_CMUL(x, y) _Generic((x), float _Complex: cmul_c64, double _Complex: cmul_c128)(x, y)
#define TN_CDIV(x, y) _Generic((x), float _Complex: cdiv_c64, double _Complex: cdiv_c128)(x, y)

/* sfx: the type suffix; C / R: the complex and real types; MK: the constructor; F: the
 * real libm function suffix (f for float, none for double). */
#define TN_DEF_CMATH(sfx, C, R, MK, F)                                                     \
    /* log(1 + z) as upstream's CPU path computes it (Kahan's correction): u = 1 + z; z    \
     * itself when u rounds to 1, log(u) when u - 1 recovers z exactly, else               \
     * log(u) * (z / (u - 1)) in c10::complex arithmetic (naive product, scaled quotient)  \
     * (NaN for some subnormal z, as upstream's) */                                        \
    static inline C tn_clog1p_##sfx(C z) {                                                 \
        C u = z + (R)1;                                                                    \
        if (u == (R)1) return z;                                                           \
        C lu = clog##F(u);                                                                 \
        if (u - (R)1 == z) return lu;                                                      \
        return cmul_##sfx(lu, cdiv_##sfx(z, u - (R)1));                                    \
    }                                                                                      \
    /* exp(z) - 1 with the real part as expm1(x) cos(y) - 2 sin(y/2)^2 (no cancellation   \
     * near 0) and the imaginary part exp(x) sin(y) */                                     \
    static inline C tn_cexpm1_##sfx(C z) {                                                 \
        R x = creal(z), y = cimag(z);                                                      \
        R h = sin##F(y / (R)2);                                                            \
        R re = expm1##F(x) * cos##F(y) - (R)2 * h * h;                                     \
        return MK(re, exp##F(x) * sin##F(y));                                              \
    }                                                                                      \
    static inline int tn_cisnan_##sfx(C z) { return isnan(creal(z)) || isnan(cimag(z)); } \
    /* log(exp(a) + exp(b)): the operand of the smaller real part is "min" (a NaN operand, \
     * b first, is both); a NaN gives NaN in both parts; equal infinite real parts give    \
     * min when -inf, else log(exp(min) + exp(max)); otherwise log1p(exp(min - max)) + max \
     * with the log1p above */                                                             \
    static inline C tn_clogaddexp_##sfx(C a, C b) {                                        \
        C lo, hi;                                                                          \
        if (tn_cisnan_##sfx(b)) lo = hi = b;                                               \
        else if (tn_cisnan_##sfx(a)) lo = hi = a;                                          \
        else if (creal(a) < creal(b)) { lo = a; hi = b; }                                  \
        else { lo = b; hi = a; }                                                           \
        if (tn_cisnan_##sfx(lo)) return MK(NAN, NAN);                                      \
        if (!isfinite(creal(lo)) && creal(lo) == creal(hi))                                \
            return creal(lo) < 0 ? lo : clog##F(cexp##F(lo) + cexp##F(hi));                \
        return tn_clog1p_##sfx(cexp##F(lo - hi)) + hi;                                     \
    }
TN_DEF_CMATH(c64, float _Complex, float, CMPLXF, f)
TN_DEF_CMATH(c128, double _Complex, double, CMPLX, )
#undef TN_DEF_CMATH

#define TN_CLOG1P(z) _Generic((z), float _Complex: tn_clog1p_c64, double _Complex: tn_clog1p_c128)(z)
#define TN_CEXPM1(z) _Generic((z), float _Complex: tn_cexpm1_c64, double _Complex: tn_cexpm1_c128)(z)
#define TN_CLOGADDEXP(a, b) _Generic((a), float _Complex: tn_clogaddexp_c64, double _Complex: tn_clogaddexp_c128)(a, b)

#endif
