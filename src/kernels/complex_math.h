/* complex_math.h — the complex functions upstream defines itself rather than taking from
 * the C library (c10's accuracy-preserving log1p and expm1, ATen's log-add-exp of two
 * complex values with its NaN / infinity cases), for float _Complex and double _Complex;
 * shared by the elementwise loops and the logcumsumexp scan. Plain C11, header-only. */
#ifndef TN_KERNELS_COMPLEX_MATH_H
#define TN_KERNELS_COMPLEX_MATH_H

#include <complex.h>
#include <math.h>

/* sfx: the type suffix; C / R: the complex and real types; MK: the constructor; F: the
 * real libm function suffix (f for float, none for double). */
#define TN_DEF_CMATH(sfx, C, R, MK, F)                                                     \
    /* log(1 + z): the angle of 1 + z, and its log-modulus through log1p near 0 (where     \
     * |z| < 1/2: 1/2 log1p(x (2 + x) + y^2), exactly x when that underflows to 0), else   \
     * through the modulus of 1 + z itself */                                              \
    static inline C tn_clog1p_##sfx(C z) {                                                 \
        R x = creal(z), y = cimag(z);                                                      \
        R theta = atan2##F(y, x + (R)1);                                                   \
        if (hypot##F(x, y) < (R)0.5) {                                                     \
            R r = x * ((R)2 + x) + y * y;                                                  \
            if (r == 0) return MK(x, theta);                                               \
            return MK((R)0.5 * log1p##F(r), theta);                                        \
        }                                                                                  \
        return MK(log##F(hypot##F(x + (R)1, y)), theta);                                   \
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
