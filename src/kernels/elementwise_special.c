/* elementwise_special.c — scalar loops of the special functions (gamma family, error-function
 * relatives, Bessel functions, orthogonal polynomials, incomplete gamma, nextafter, frexp).
 *
 * Each function is computed in double from its defining series, recurrence or integral, to
 * near double precision, so float32/float64 results land within upstream's tolerances of
 * upstream's own approximations (Cephes-style rational fits in ATen's Math.h). Where
 * upstream's *semantics* matter beyond accuracy — special values, domains, the branch a
 * polynomial takes for large degree — the branches below follow upstream's. Plain C11. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/elementwise_access.h"

#define TN_EULER_GAMMA 0.57721566490153286061
#define TN_SQRT_PI 1.77245385090851797885
#define TN_LOG_PI 1.14472988584940017414
/* the special functions inlined into their loops (the FMA clones among them: TN_FMA_CLONES) */
#define TN_SF_INLINE static inline __attribute__((always_inline))

/* ---- gamma family -------------------------------------------------------------------- */

static double sf_lgamma(double x) { int s; return lgamma_r(x, &s); }
/* float, float16 and bfloat16 take libm's float lgamma, as upstream's std::lgamma(float) */
static float sf_lgammaf(float x) { int s; return lgammaf_r(x, &s); }

/* digamma as upstream's calc_digamma (Cephes' psi), in the tensor's type (float arithmetic
 * for float32, float16 and bfloat16, whose kernels call the float function): reflection below
 * 0 with tan of the fraction in double (NaN at the poles, -+inf at +-0), recurrence up to
 * x >= 10, psi(10) exact, then log x - 1/2x - z P(z) with z = 1/x^2 and P Cephes' published
 * coefficients, the polynomial one fused multiply-add per step as upstream's build contracts
 * its polevl (horner_fma_*, below). */
static const double DIGAMMA_A[7] = {8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                                    -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                                    8.33333333333333333333E-2};
#define DIGAMMA_PSI_10 2.25175258906672110764
/* trigamma: reflection below 1/2, six recurrence steps, then its asymptotic series. */
static double sf_trigamma(double x) {
    double sign = 1, acc = 0;
    if (x < 0.5) {
        double s = sin(M_PI * x);
        sign = -1;
        acc -= M_PI * M_PI / (s * s);
        x = 1 - x;
    }
    for (int i = 0; i < 6; i++) { acc += 1 / (x * x); x += 1; }
    double ixx = 1 / (x * x);
    acc += (1 + 1 / (2 * x) + ixx * (1. / 6 - ixx * (1. / 30 - ixx * (1. / 42)))) / x;
    return sign * acc;
}

/* trigamma in float arithmetic, as upstream computes it for float inputs: its sin(pi x) in
 * float is far from the exact one for large negative x (and finite at the poles), more
 * than float32's tolerance. */
static float sf_trigammaf(float x) {
    const float pi = (float)M_PI;
    float sign = 1, acc = 0;
    if (x < 0.5f) {
        float s = sinf(pi * x);
        sign = -1;
        acc -= pi * pi / (s * s);
        x = 1 - x;
    }
    for (int i = 0; i < 6; i++) { acc += 1 / (x * x); x += 1; }
    float ixx = 1 / (x * x);
    acc += (1 + 1 / (2 * x) + ixx * (1.f / 6 - ixx * (1.f / 30 - ixx * (1.f / 42)))) / x;
    return sign * acc;
}

/* Hurwitz zeta(s, q) = sum_k (k + q)^-s: direct terms, then the Euler-Maclaurin tail with
 * the Bernoulli factors 2k! / B_2k (the classic Cephes scheme; upstream's domain rules). */
static double sf_zeta(double s, double q) {
    static const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                                 7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                                 -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18};
    const double eps = 1.11022302462515654042e-16;
    if (s == 1) return INFINITY;
    if (s < 1) return NAN;
    if (q <= 0) {
        if (q == floor(q)) return INFINITY;
        if (s != floor(s)) return NAN;
    }
    double sum = pow(q, -s), a = q, b = 0;
    int i = 0;
    while (i < 9 || a <= 9) {
        i++;
        a += 1;
        b = pow(a, -s);
        sum += b;
        if (-eps * sum < b && b < eps * sum) return sum;
    }
    double w = a, k = 0, fac = 1;
    sum += b * w / (s - 1);
    sum -= 0.5 * b;
    for (int j = 0; j < 12; j++) {
        fac *= s + k;
        b /= w;
        double t = fac * b / A[j];
        sum += t;
        if (fabs(t / sum) < eps) return sum;
        k += 1;
        fac *= s + k;
        b /= w;
        k += 1;
    }
    return sum;
}

/* polygamma(n, x) for n >= 0 (the op checks n): digamma, trigamma, else
 * (-1)^(n+1) n! zeta(n + 1, x). */
static double sf_digamma(double x);
static double sf_polygamma(int64_t n, double x) {
    if (n == 0) return sf_digamma(x);
    if (n == 1) return sf_trigamma(x);
    return ((n % 2) ? 1.0 : -1.0) * exp(sf_lgamma((double)n + 1.0)) * sf_zeta((double)n + 1, x);
}

/* multivariate log-gamma of dimension p as upstream's composition in the tensor's dtype:
 * lgamma(a_k + x) for the arange a_k = -(p-1)/2, ..., -1/2, 0, summed in that order (a
 * reduced type sums in float and rounds once), plus p(p-1)/4 log(pi) (a double scalar, added
 * in the compute type); rnd rounds a step to float16 / bfloat16, or is the identity. */
static float rnd_none(float v) { return v; }
static float sf_mvlgammaf(float x, int64_t p, float (*rnd)(float)) {
    float acc = 0;
    for (int64_t k = 0; k < p; k++) acc += rnd(sf_lgammaf(rnd(rnd((float)(0.5 * (double)(k - p + 1))) + x)));
    return rnd(rnd(acc) + (float)((double)(p * (p - 1)) * log(M_PI) * 0.25));
}
static double sf_mvlgamma(double x, int64_t p) {
    double acc = 0;
    for (int64_t k = 0; k < p; k++) acc += sf_lgamma(0.5 * (double)(k - p + 1) + x);
    return acc + (double)(p * (p - 1)) * log(M_PI) * 0.25;
}

/* Regularised incomplete gamma P(a, x) / Q(a, x): the power series when x < a + 1, the
 * continued fraction otherwise; upstream's special values first. eps is the relative size
 * of the last term kept: 1e-17 for float64 results, 2^-32 for the float types (their
 * results then 1 ulp from the correctly rounded value on 0.01-0.14 % of arguments, against
 * 2-70 % for upstream's float kernel; before session 42 they took the float64 stops, 1.55x
 * upstream's time at 1e6 elements). */
TN_SF_INLINE double igamma_prefix(double a, double x) { return exp(a * log(x) - x - sf_lgamma(a)); }
TN_SF_INLINE double igamma_series(double a, double x, double eps) {
    /* two terms per division: x / (a + k) and x / (a + k + 1) from one x / ((a + k)(a + k + 1)) */
    double ap = a, del = 1 / a, sum = del;
    for (int n = 0; n < 5000; n++) {
        double ap1 = ap + 1, ap2 = ap + 2, r = x / (ap1 * ap2);
        double t1 = del * ap2 * r, t2 = del * x * r;
        sum += t1;
        sum += t2;
        del = t2;
        ap = ap2;
        if (fabs(t2) < fabs(sum) * eps) break;
    }
    return sum * igamma_prefix(a, x);
}
/* Q(a, x) = prefix / (b_1 + a_2 / (b_2 + a_3 / ...)), b_k = x + 2k - 1 - a, a_k = -(k - 1)(k
 * - 1 - a), through the convergents A_k / B_k of the three-term recurrences: no division on
 * the chain from step to step (the Lentz form had two, 30 cycles a step); both scaled by 2^-512
 * when large (exact), the quotient tested every fourth step. Here x >= a + 1, so every b_k > 0. */
TN_SF_INLINE double igammac_cf(double a, double x, double eps) {
    double am2 = 1, bm2 = 0, am1 = 0, bm1 = 1, prev = 0; /* A_-1, B_-1, A_0, B_0 */
    for (int k = 1; k < 10000; k++) {
        double ak = k == 1 ? 1.0 : -(double)(k - 1) * ((double)(k - 1) - a), bk = x + (double)(2 * k - 1) - a;
        double an = fma(bk, am1, ak * am2), bn = fma(bk, bm1, ak * bm2);
        am2 = am1, bm2 = bm1, am1 = an, bm1 = bn;
        if (fabs(bn) > 0x1p512 || fabs(an) > 0x1p512) {
            am2 *= 0x1p-512, bm2 *= 0x1p-512, am1 *= 0x1p-512, bm1 *= 0x1p-512;
        }
        if ((k & 3) == 0 && bn != 0) {
            double f = an / bn;
            if (fabs(f - prev) <= fabs(f) * eps) break;
            prev = f;
        }
    }
    return igamma_prefix(a, x) * (am1 / bm1);
}
TN_SF_INLINE double sf_igamma(double a, double x, bool upper, double eps) {
    /* no NaN test first: upstream's special values decide before a NaN propagates, so
     * x == 0 gives 0 / 1 for a NaN a, and an infinite a gives 0 / 1 for a NaN x */
    if (x < 0 || a < 0) return NAN;
    if (a == 0) return x > 0 ? (upper ? 0.0 : 1.0) : NAN;
    if (x == 0) return upper ? 1.0 : 0.0;
    if (isinf(a)) return isinf(x) ? NAN : (upper ? 1.0 : 0.0);
    if (isinf(x)) return upper ? 0.0 : 1.0;
    if (x < a + 1) {
        double p = igamma_series(a, x, eps);
        return upper ? 1 - p : p;
    }
    double q = igammac_cf(a, x, eps);
    return upper ? q : 1 - q;
}

/* ---- error-function relatives ---------------------------------------------------------- */

/* erfinv: Winitzki's closed-form start, then Halley steps on erf (or on erfc near +-1,
 * where 1 - |y| is exact and erf would have lost the digits). */
static double sf_erfinv(double y) {
    if (isnan(y) || y < -1 || y > 1) return NAN;
    if (y == 1) return INFINITY;
    if (y == -1) return -INFINITY;
    if (y == 0) return y;
    double ay = fabs(y), l = log((1 - ay) * (1 + ay)), a = 0.147, t = 2 / (M_PI * a) + 0.5 * l;
    double x = sqrt(sqrt(t * t - l / a) - t);
    for (int it = 0; it < 3; it++) {
        double f = ay < 0.5 ? erf(x) - ay : (1 - ay) - erfc(x); /* both increase with x */
        double d = f / (2 / TN_SQRT_PI * exp(-x * x));
        x -= d / (1 + x * d);
    }
    return copysign(x, y);
}

/* erfcx(x) = exp(x^2) erfc(x): directly for |x| < 20 (the exponent's rounding costs at most
 * x^2 ulps), the asymptotic series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k beyond,
 * and 2 exp(x^2) - erfcx(-x) for negative x, where x^2 is rounded to float for float
 * inputs (`single`) as upstream's float kernel does (it moves the result by up to x^2 float
 * ulps, beyond float32's tolerance). */
static double sf_erfcx_t(double x, bool single) {
    if (isnan(x)) return x;
    if (x < 0) {
        if (x < -26.7) return INFINITY;
        double xx = single ? (double)((float)x * (float)x) : x * x;
        return 2 * exp(xx) - (x > -20 ? exp(x * x) * erfc(-x) : 0);
    }
    if (x < 20) return exp(x * x) * erfc(x);
    if (isinf(x)) return 0;
    double inv = 1 / (2 * x * x), term = 1, sum = 1;
    for (int k = 1; k < 12; k++) { term *= -(2 * k - 1) * inv; sum += term; }
    return sum / (x * TN_SQRT_PI);
}

static double sf_erfcx(double x) { return sf_erfcx_t(x, false); }

/* log of the normal CDF: log(erfc(-t) / 2) in the lower tail while erfc is far from
 * underflow (t > -20: erfcx there is exp(t^2) erfc(-t), whose exp the log would undo; a
 * libm call fewer than before session 42, when log_ndtr took 1.3x upstream's time),
 * log(erfcx / 2) - t^2 in the far lower tail, log1p otherwise. */
static double sf_log_ndtr(double x) {
    double t = x * M_SQRT1_2;
    if (x < -1) return t > -20 ? log(erfc(-t) / 2) : log(sf_erfcx(-t) / 2) - t * t;
    return log1p(-erfc(t) / 2);
}
/* float: from x = -1 up in float as upstream's calc_log_ndtr<float> (t = x sqrt(1/2) rounded,
 * log1pf and erfcf: its bits there); the lower tail through the double form above, since
 * upstream's float erfcx (its own Chebyshev tables) is not reproduced */
static float sf_log_ndtr_f(float x) {
    if (x < -1.0f) return (float)sf_log_ndtr((double)x);
    return log1pf(-erfcf(x * (float)M_SQRT1_2) / 2);
}

/* c[0] x^(n-1) + ... + c[n-1] by Horner in the type T, the coefficients rounded to T (the
 * Cephes fits below, evaluated as upstream does in the tensor's type) */
#define TN_HORNER_T(name, T)                                     \
    static T name(T x, const double *c, int n) {                 \
        T r = 0;                                                 \
        for (int i = 0; i < n; i++) r = r * x + (T)c[i];         \
        return r;                                                \
    }
TN_HORNER_T(horner_f, float)
TN_HORNER_T(horner_d, double)
/* the same with each step one fused multiply-add, as upstream's build contracts its polevl
 * (ndtri: bit-identical to upstream's float32 results with it, 21 % of them one ulp or more
 * apart without); inlined into the FMA clones of their loops, unrolled so the coefficients
 * fold into float constants (a loop over the table, converting each, was 1.38x upstream's
 * ndtri time) */
#define TN_HORNER_FMA_T(name, T, FMA)                            \
    TN_SF_INLINE T name(T x, const double *c, int n) { \
        T r = 0;                                                 \
        _Pragma("GCC unroll 16")                                 \
        for (int i = 0; i < n; i++) r = FMA(r, x, (T)c[i]);      \
        return r;                                                \
    }
TN_HORNER_FMA_T(horner_fma_f, float, fmaf)
TN_HORNER_FMA_T(horner_fma_d, double, fma)

/* (see DIGAMMA_A above) */
/* the positive side, and the reflection once (1 - x > 1): not recursive, so the whole function
 * inlines into its loop's FMA clone (recursive, it stayed a call whose fmaf went to libm) */
#define TN_DIGAMMA(name, T, LOG, TRUNC, HORNER)                                                     \
    TN_SF_INLINE T name##_pos(T x) {                                                                \
        T acc = 0;                                                                                  \
        while (x < 10) {                                                                            \
            acc -= 1 / x;                                                                           \
            x += 1;                                                                                 \
        }                                                                                           \
        if (x == 10) return acc + (T)DIGAMMA_PSI_10;                                                \
        T y = 0;                                                                                    \
        if (x < (T)1.0e17) {                                                                        \
            T z = 1 / (x * x);                                                                      \
            y = z * HORNER(z, DIGAMMA_A, 7);                                                        \
        }                                                                                           \
        return acc + LOG(x) - ((T)0.5 / x) - y;                                                     \
    }                                                                                               \
    TN_SF_INLINE T name(T x) {                                                                      \
        if (x == 0) return copysign(INFINITY, -(double)x);                                          \
        if (x < 0) {                                                                                \
            if (x == TRUNC(x)) return NAN;                                                          \
            double r = (double)x - trunc((double)x); /* modf's fraction, exact (|x| < 2^52 here) */ \
            T pt = (T)(M_PI / tan(M_PI * r));                                                       \
            return name##_pos(1 - x) - pt;                                                          \
        }                                                                                           \
        return name##_pos(x);                                                                       \
    }
TN_DIGAMMA(sf_digamma_f, float, logf, truncf, horner_fma_f)
TN_DIGAMMA(sf_digamma, double, log, trunc, horner_fma_d)

/* inverse normal CDF as upstream's calc_ndtri, in the tensor's type (float arithmetic for
 * float32): Cephes' rational fits, one about 1/2 (|y - 1/2| <= 3/8 as exp(-2) < y <
 * 1 - exp(-2)), two in z = 1/sqrt(-2 log y) for the tails, below and above sqrt(-2 log y) =
 * 8. Their coefficients are published numbers (Moshier's Cephes ndtri), highest degree
 * first; the denominators' leading 1 is explicit. */
static const double NDTRI_P0[5] = {-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
                                   1.39312609387279679503E1, -1.23916583867381258016E0};
static const double NDTRI_Q0[9] = {1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
                                   -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
                                   1.59056225126211695515E1, -1.18331621121330003142E0};
static const double NDTRI_P1[9] = {4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
                                   4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
                                   -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4};
static const double NDTRI_Q1[9] = {1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
                                   1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
                                   -3.80806407691578277194E-2, -9.33259480895457427372E-4};
static const double NDTRI_P2[9] = {3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
                                   1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
                                   3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9};
static const double NDTRI_Q2[9] = {1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
                                   2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
                                   2.89247864745380683936E-6, 6.79019408009981274425E-9};
/* one instance per type T (HORNER: horner_f or horner_d) */
#define TN_NDTRI(name, T, LOG, SQRT, HORNER, FMA)                                                        \
    TN_SF_INLINE T name(T y0) {                                         \
        if (y0 == 0) return -(T)INFINITY;                                                             \
        if (y0 == 1) return (T)INFINITY;                                                              \
        if (!(y0 >= 0 && y0 <= 1)) return (T)NAN;                                                     \
        const T e2 = (T)0.13533528323661269189; /* exp(-2) */                                         \
        bool lower = true;                                                                            \
        T y = y0;                                                                                     \
        if (y > 1 - e2) { y = 1 - y; lower = false; }                                                 \
        if (y > e2) {                                                                                 \
            y = y - (T)0.5;                                                                           \
            T y2 = y * y;                                                                             \
            T x = FMA(y, y2 * HORNER(y2, NDTRI_P0, 5) / HORNER(y2, NDTRI_Q0, 9), y);        \
            return x * (T)2.50662827463100050242; /* sqrt(2 pi) */                                    \
        }                                                                                             \
        T x = SQRT((T)-2.0 * LOG(y));                                                                 \
        T x0 = x - LOG(x) / x, z = 1 / x;                                                             \
        T x1 = x < 8 ? z * HORNER(z, NDTRI_P1, 9) / HORNER(z, NDTRI_Q1, 9)                  \
                     : z * HORNER(z, NDTRI_P2, 9) / HORNER(z, NDTRI_Q2, 9);                 \
        x = x0 - x1;                                                                                  \
        return lower ? -x : x;                                                                        \
    }
/* the tails' log and sqrt are the double functions for float too: upstream calls ::log and
 * ::sqrt, the C library's double ones, so x and x0 are double expressions rounded to float */
TN_NDTRI(sf_ndtri_f, float, log, sqrt, horner_fma_f, fmaf)
TN_NDTRI(sf_ndtri, double, log, sqrt, horner_fma_d, fma)

static double sf_entr(double x) {
    if (isnan(x)) return x;
    if (x > 0) return -x * log(x);
    if (x == 0) return 0;
    return -INFINITY;
}

/* ---- Bessel functions ------------------------------------------------------------------ */

/* exp(-|x|) I_nu(|x|) for nu = 0, 1: the power series sum (x^2/4)^k / (k! (k+nu)!) up to
 * |x| = 17, the asymptotic series sum (-1)^k prod_j (4nu^2 - (2j-1)^2) / (k! (8x)^k) above
 * (its smallest term there is about exp(-2x) < 2e-15). */
static double bessel_ie(int nu, double x) {
    double ax = fabs(x);
    if (isinf(ax)) return 0;
    if (ax <= 17) {
        double q = 0.25 * ax * ax, term = nu ? 0.5 * ax : 1, sum = term;
        for (int k = 1; k < 200; k++) {
            term *= q / ((double)k * (double)(k + nu));
            sum += term;
            if (term < sum * 1e-17) break;
        }
        return sum * exp(-ax);
    }
    double mu = 4.0 * nu * nu, term = 1, sum = 1, prev = INFINITY;
    for (int k = 1; k < 60; k++) {
        double nt = -term * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * ax);
        if (fabs(nt) >= prev) break;
        prev = fabs(nt);
        term = nt;
        sum += term;
        if (fabs(term) < 1e-17 * fabs(sum)) break;
    }
    return sum / sqrt(2 * M_PI * ax);
}
/* (upstream's I0/I1 of +-inf are NaN: its Chebyshev form meets 0 * inf) */
/* (a finite x beyond exp's range gives inf, as upstream's, not inf * 0) */
static double sf_i0(double x) { return isinf(x) ? NAN : fabs(x) > 800 ? INFINITY : bessel_ie(0, x) * exp(fabs(x)); }
static double sf_i0e(double x) { return bessel_ie(0, x); }
static double sf_i1(double x) { return isinf(x) ? NAN : copysign(fabs(x) > 800 ? INFINITY : bessel_ie(1, x) * exp(fabs(x)), x); }
static double sf_i1e(double x) { return copysign(bessel_ie(1, x), x); }

/* exp(x) K_nu(x), nu = 0, 1, x > 0. Up to x = 2 the series (A&S 9.6.13, 9.6.11) with
 * psi(k+1) = H_k - gamma; above, the trapezoidal rule on
 * exp(x) K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt, whose error falls like
 * exp(-pi^2 / h) for this integrand (step h <= 0.6 / sqrt(x) keeps it below 1e-15). */
/* Chebyshev coefficients of exp(x) sqrt(x) K_0(x) and K_1(x) on x > 2 in t = 8/x - 2, as
 * published with Cephes (k0.c, k1.c), highest order first */
static const double BESSEL_K0_B[25] = {
    5.30043377268626276149e-18,  -1.64758043015242134646e-17, 5.21039150503902756861e-17,  -1.67823109680541210385e-16,
    5.51205597852431940784e-16,  -1.84859337734377901440e-15, 6.34007647740507060557e-15,  -2.22751332699166985548e-14,
    8.03289077536357521100e-14,  -2.98009692317273043925e-13, 1.14034058820847496303e-12,  -4.51459788337394416547e-12,
    1.85594911495471785253e-11,  -7.95748924447710747776e-11, 3.57739728140030116597e-10,  -1.69753450938905987466e-09,
    8.57403401741422608519e-09,  -4.66048989768794782956e-08, 2.76681363944501510342e-07,  -1.83175552271911948767e-06,
    1.39498137188764993662e-05,  -1.28495495816278026384e-04, 1.56988388573005337491e-03,  -3.14481013119645005427e-02,
    2.44030308206595545468e+00};
static const double BESSEL_K1_B[25] = {
    -5.75674448366501715755e-18, 1.79405087314755922667e-17,  -5.68946255844285935196e-17, 1.83809354436663880070e-16,
    -6.05704724837331885336e-16, 2.03870316562433424052e-15,  -7.01983709041831346144e-15, 2.47715442448130437068e-14,
    -8.97670518232499435011e-14, 3.34841966607842919884e-13,  -1.28917396095102890680e-12, 5.13963967348173025100e-12,
    -2.12996783842756842877e-11, 9.21831518760500529508e-11,  -4.19035475934189648750e-10, 2.01504975519703286596e-09,
    -1.03457624656780970260e-08, 5.74108412545004946722e-08,  -3.50196060308781257119e-07, 2.40648494783721712015e-06,
    -1.93619797416608296024e-05, 1.95215518471351631108e-04,  -2.85781685962277938680e-03, 1.03923736576817238437e-01,
    2.72062619048444266945e+00};
/* K_0 + log(x/2) I_0 and x K_1 - x log(x/2) I_1 on [0, 2] in t = x^2 - 2 (Cephes' k0.c A,
 * k1.c A), highest order first */
static const double BESSEL_K0_A[10] = {1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
                                       1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
                                       1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
                                       -5.35327393233902768720e-01};
static const double BESSEL_K1_A[11] = {-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
                                       -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
                                       -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
                                       -3.53155960776544875667e-01, 1.52530022733894777053e+00};

/* exp(-x) I_0(x) and exp(-x) I_1(x) / x on [0, 8] in t = x/2 - 2 (Cephes' i0.c and i1.c A),
 * highest order first: upstream's modified_bessel_i0 / i1 forms, here for K_nu below 2 */
static const double BESSEL_I0_A[30] = {
    -4.41534164647933937950e-18, 3.33079451882223809783e-17,  -2.43127984654795469359e-16, 1.71539128555513303061e-15,
    -1.16853328779934516808e-14, 7.67618549860493561688e-14,  -4.85644678311192946090e-13, 2.95505266312963983461e-12,
    -1.72682629144155570723e-11, 9.67580903537323691224e-11,  -5.18979560163526290666e-10, 2.65982372468238665035e-09,
    -1.30002500998624804212e-08, 6.04699502254191894932e-08,  -2.67079385394061173391e-07, 1.11738753912010371815e-06,
    -4.41673835845875056359e-06, 1.64484480707288970893e-05,  -5.75419501008210370398e-05, 1.88502885095841655729e-04,
    -5.76375574538582365885e-04, 1.63947561694133579842e-03,  -4.32430999505057594430e-03, 1.05464603945949983183e-02,
    -2.37374148058994688156e-02, 4.93052842396707084878e-02,  -9.49010970480476444210e-02, 1.71620901522208775349e-01,
    -3.04682672343198398683e-01, 6.76795274409476084995e-01};
static const double BESSEL_I1_A[29] = {
    2.77791411276104639959e-18,  -2.11142121435816608115e-17, 1.55363195773620046921e-16,  -1.10559694773538630805e-15,
    7.60068429473540693410e-15,  -5.04218550472791168711e-14, 3.22379336594557470981e-13,  -1.98397439776494371520e-12,
    1.17361862988909016308e-11,  -6.66348972350202774223e-11, 3.62559028155211703701e-10,  -1.88724975172282928790e-09,
    9.38153738649577178388e-09,  -4.44505912879632808065e-08, 2.00329475355213526229e-07,  -8.56872026469545474066e-07,
    3.47025130813767847674e-06,  -1.32731636560394358279e-05, 4.78156510755005422638e-05,  -1.61760815825896745588e-04,
    5.12285956168575772895e-04,  -1.51357245063125314899e-03, 4.15642294431288815669e-03,  -1.05640848946261981558e-02,
    2.47264490306265168283e-02,  -5.29459812080949914269e-02, 1.02643658689847095384e-01,  -1.76416518357834055153e-01,
    2.52587186443633654823e-01};

/* K_nu(x), nu = 0, 1 (scaled: e^x K_nu(x)), in the tensor's own type T as upstream's
 * modified_bessel_k0/k1_forward and scaled_* compute them, with its build's contractions:
 * each Clenshaw step a = (t q - p) + c[i] one fused multiply-add then an add, t = x^2 - 2 one
 * fused step; below 2 the log term (for K_0 of float the log of the double 0.5 x, upstream's
 * `0.5 * x`) fused with I_nu from the [0, 8] Chebyshev form; above 2 the series in 8/x - 2.
 * Equal to upstream bit for bit on 6e5 float and 6e5 double arguments over (0, 32] (before:
 * a power series of I_nu and the double form for float, 1.5x upstream's time at 1e6).
 * Inlined into the loops' FMA clones (TN_FMA_CLONES below), so each step is the instruction. */
#define TN_BESSEL_K(SFX, T, FMA, EXP, LOG, SQRT)                                                        \
    TN_SF_INLINE T bessel_cheb_##SFX(T t, const double *c, int n, T *pout) {                                 \
        T a = (T)c[0], p = 0, q = 0;                                                                   \
        _Pragma("GCC unroll 32") for (int i = 1; i < n; i++) {                                         \
            p = q;                                                                                     \
            q = a;                                                                                     \
            a = FMA(t, q, -p) + (T)c[i];                                                               \
        }                                                                                              \
        *pout = p;                                                                                     \
        return a;                                                                                      \
    }                                                                                                  \
    TN_SF_INLINE T bessel_k_##SFX(int nu, bool scaled, T x) {                                                \
        if (x == 0) return INFINITY;                                                                   \
        if (x < 0) return NAN;                                                                         \
        T p;                                                                                           \
        if (x <= (T)2) {                                                                               \
            T a = bessel_cheb_##SFX(FMA(x, x, (T)-2), nu ? BESSEL_K1_A : BESSEL_K0_A, nu ? 11 : 10, &p); \
            T h = (T)0.5 * (a - p), ip, ia = bessel_cheb_##SFX(x / (T)2 - (T)2, nu ? BESSEL_I1_A : BESSEL_I0_A, nu ? 29 : 30, &ip); \
            if (nu) {                                                                                  \
                T i1 = (T)0.5 * (ia - ip) * x * EXP(x);                                                \
                T k = FMA(LOG((T)0.5 * x), i1, h / x);                                                 \
                return scaled ? k * EXP(x) : k;                                                        \
            }                                                                                          \
            T i0 = EXP(x) * ((T)0.5 * (ia - ip));                                                      \
            if (scaled) return FMA(-LOG((T)0.5 * x), i0, h) * EXP(x);                                  \
            return (T)fma(-log(0.5 * (double)x), (double)i0, (double)h);                               \
        }                                                                                              \
        T b = bessel_cheb_##SFX((T)8 / x - (T)2, nu ? BESSEL_K1_B : BESSEL_K0_B, 25, &p);               \
        T h = (T)0.5 * (b - p);                                                                        \
        return scaled ? h / SQRT(x) : EXP(-x) * h / SQRT(x);                                           \
    }
TN_BESSEL_K(f, float, fmaf, expf, logf, sqrtf)
TN_BESSEL_K(d, double, fma, exp, log, sqrt)

/* Bessel functions of the first and second kind. libm's j0/j1/y0/y1 are more accurate, but
 * upstream's values beyond |x| = 5 differ from them by up to ~1e-6 (relative), more than
 * float64's tolerance, so these evaluate the Cephes rational approximations upstream does:
 * a rational function of x^2 up to 5 (with the zeros of J0/J1 factored out), above it the
 * Hankel-type form with P, Q rational in 25/x^2 (J1 / Y1: (5/x)^2) and the phases x - pi/4,
 * x - 3pi/4. Upstream's Horner sums start at 0 (no implicit leading 1, where it departs from
 * Cephes and libm).
 */
static const double BJ0_PP[7] = {7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
                                 5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
                                 9.99999999999999997821e-01};
static const double BJ0_PQ[7] = {9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
                                 5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
                                 1.00000000000000000218e+00};
static const double BJ0_QP[8] = {-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
                                 -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
                                 -5.14105326766599330220e+01, -6.05014350600728481186e+00};
static const double BJ0_QQ[7] = {6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
                                 7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
                                 2.42005740240291393179e+02};
static const double BJ0_RP[4] = {-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
                                 9.70862251047306323952e+15};
static const double BJ0_RQ[8] = {4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
                                 1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
                                 3.18121955943204943306e+16, 1.71086294081043136091e+18};
static const double BY0_YP[8] = {1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
                                 -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
                                 4.42733268572569800351e+16, -1.84950800436986690637e+16};
static const double BY0_YQ[7] = {1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
                                 8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
                                 2.50596256172653059228e+17};
static const double BJ1_PP[7] = {7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
                                 5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
                                 1.00000000000000000254e+00};
static const double BJ1_PQ[7] = {5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
                                 5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
                                 9.99999999999999997461e-01};
static const double BJ1_QP[8] = {5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
                                 3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
                                 2.11688757100572135698e+02, 2.52070205858023719784e+01};
static const double BJ1_QQ[7] = {7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
                                 9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
                                 3.36093607810698293419e+02};
static const double BJ1_RP[4] = {-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
                                 3.68295732863852883286e+15};
static const double BJ1_RQ[8] = {6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
                                 2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
                                 8.95222336184627338078e+16, 5.32278620332680085395e+18};
static const double BY1_YP[6] = {1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
                                 -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17};
static const double BY1_YQ[8] = {5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
                                 1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
                                 6.87141087355300489866e+16, 3.97270608116560655612e+18};
/* One body per type T, as upstream's bessel_{j,y}{0,1}_forward<T> computes it with its
 * build's contractions: each Horner step one fused multiply-add, the far form's
 * P cos - (5/x) Q sin with its first product fused, Y0's log term fused onto the ratio, Y1's
 * x * ratio fused onto its log term (the factors x^2 - zero stay separate: x^2 is shared with
 * the Horner steps). Equal to upstream bit for bit on 1e6 float32 and 1e6 float64 arguments
 * (N(0, 25)); before: 75-80 % of them. Inlined into the loops' FMA clones (TN_FMA_CLONES). */
#define TN_BESSEL_JY(T, S, FMA, COS, SIN, SQRT, LOG)                                                      \
    TN_SF_INLINE T bessel_horner##S(T z, const double *c, int n) {      \
        T r = 0;                                                                                         \
        _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) r = FMA(r, z, (T)c[i]);                      \
        return r;                                                                                        \
    }                                                                                                    \
    TN_SF_INLINE T bessel_far##S(T x, bool one, bool second) {          \
        T z = one ? (T)5 / x * ((T)5 / x) : (T)25 / (x * x);                                             \
        T ph = x - (one ? (T)2.356194490192344928846982537459627163 : (T)0.785398163397448309615660845819875721); \
        T pp = bessel_horner##S(z, one ? BJ1_PP : BJ0_PP, 7), pq = bessel_horner##S(z, one ? BJ1_PQ : BJ0_PQ, 7); \
        T qp = bessel_horner##S(z, one ? BJ1_QP : BJ0_QP, 8), qq = bessel_horner##S(z, one ? BJ1_QQ : BJ0_QQ, 7); \
        T b = (T)5 / x * (qp / qq) * (second ? COS(ph) : SIN(ph));                                       \
        T v = second ? FMA(pp / pq, SIN(ph), b) : FMA(pp / pq, COS(ph), -b);                              \
        return v * (T)0.797884560802865355879892119868763737 / SQRT(x);                                  \
    }                                                                                                    \
    TN_SF_INLINE T sf_j0##S(T x) {                                      \
        if (x < 0) x = -x;                                                                               \
        if (x <= (T)5) {                                                                                 \
            if (x < (T)0.00001) return (T)1 - x * x / (T)4;                                              \
            T z = x * x, rp = bessel_horner##S(z, BJ0_RP, 4), rq = bessel_horner##S(z, BJ0_RQ, 8);      \
            return (z - (T)5.78318596294678452118e+00) * (z - (T)3.04712623436620863991e+01) * rp / rq;   \
        }                                                                                                \
        return bessel_far##S(x, false, false);                                                           \
    }                                                                                                    \
    TN_SF_INLINE T sf_j1##S(T x) {                                      \
        T sign = 1;                                                                                      \
        if (x < 0) x = -x, sign = -1;                                                                    \
        if (x <= (T)5) {                                                                                 \
            T z = x * x, rp = bessel_horner##S(z, BJ1_RP, 4), rq = bessel_horner##S(z, BJ1_RQ, 8);      \
            return sign * (rp / rq * x * (z - (T)1.46819706421238932572e+01) * (z - (T)4.92184563216946036703e+01)); \
        }                                                                                                \
        return sign * bessel_far##S(x, true, false);                                                     \
    }                                                                                                    \
    TN_SF_INLINE T sf_y0##S(T x) {                                      \
        if (x <= (T)5) {                                                                                 \
            if (x == 0) return -INFINITY;                                                                \
            if (x < 0) return NAN;                                                                       \
            T z = x * x, yp = bessel_horner##S(z, BY0_YP, 8), yq = bessel_horner##S(z, BY0_YQ, 7);      \
            return FMA((T)0.636619772367581343075535053490057448 * LOG(x), sf_j0##S(x), yp / yq);        \
        }                                                                                                \
        return bessel_far##S(x, false, true);                                                            \
    }                                                                                                    \
    TN_SF_INLINE T sf_y1##S(T x) {                                      \
        if (x <= (T)5) {                                                                                 \
            if (x == 0) return -INFINITY;                                                                \
            if (x < 0) return NAN;                                                                       \
            T z = x * x, yp = bessel_horner##S(z, BY1_YP, 6), yq = bessel_horner##S(z, BY1_YQ, 8);      \
            T inner = FMA(sf_j1##S(x), LOG(x), -((T)1 / x));                                             \
            return FMA(x, yp / yq, (T)0.636619772367581343075535053490057448 * inner);                   \
        }                                                                                                \
        return bessel_far##S(x, true, true);                                                             \
    }
TN_BESSEL_JY(double, , fma, cos, sin, sqrt, log)
TN_BESSEL_JY(float, _f, fmaf, cosf, sinf, sqrtf, logf)

/* Airy Ai (Cephes' airy, as upstream's airy_ai_forward): for x < -2.09 the oscillating
 * asymptotic form with rational corrections in z = 1/zeta; for x >= 2.09 the decaying form
 * exp(-zeta) with a rational factor in 1/zeta (zeta = 2/3 x^(3/2)), exact enough past 8.32;
 * in between the Maclaurin series c1 f(x) - c2 g(x). Zero past 103.892 (underflow), NaN at
 * +-inf. Written once per type: float32 tensors compute in float as upstream's kernel does. */
static const double AIRY_AN[8] = {3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
                                  1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
                                  1.40264691163389668864e+01, 9.99999999999999995305e-01};
static const double AIRY_AD[8] = {5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
                                  1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
                                  1.40959135607834029598e+01, 1.00000000000000000470e+00};
static const double AIRY_AFN[9] = {-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
                                   -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
                                   -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08};
static const double AIRY_AFD[9] = {1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
                                   9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
                                   4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07};
static const double AIRY_AGN[11] = {1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
                                    9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
                                    5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
                                    8.11789239554389293311e-08, 3.41551784765923618484e-10};
static const double AIRY_AGD[10] = {9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
                                    5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
                                    4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
                                    4.91834570062930015649e-09};
#define TN_AIRY_AI(NAME, T, SQRT, SIN, COS, EXP, FABS, HORNER)                                          \
    static T NAME(T x) {                                                                            \
        const T inv_sqrt_pi = (T)5.64189583547756286948e-01;                                        \
        if (isinf(x)) return (T)NAN;                                                                \
        if (x > (T)103.892) return 0;                                                               \
        if (x < (T)-2.09) {                                                                         \
            T z = (T)1.0 / ((T)-2.0 * x * SQRT(-x) / (T)3.0), zz = z * z;                           \
            T afn = HORNER(zz, AIRY_AFN, 9), afd = HORNER(zz, AIRY_AFD, 9);               \
            T agn = HORNER(zz, AIRY_AGN, 11), agd = HORNER(zz, AIRY_AGD, 10);             \
            T t = (T)-2.0 * x * SQRT(-x) / (T)3.0 + (T)0.25 * (T)3.14159265358979323846;           \
            return inv_sqrt_pi / SQRT(SQRT(-x)) * (SIN(t) * ((T)1.0 + z * z * afn / afd) - COS(t) * (z * agn / agd)); \
        }                                                                                           \
        if (x >= (T)2.09) {                                                                         \
            T zeta = (T)2.0 * x * SQRT(x) / (T)3.0;                                                 \
            T an = HORNER((T)1.0 / zeta, AIRY_AN, 8), ad = HORNER((T)1.0 / zeta, AIRY_AD, 8); \
            return inv_sqrt_pi * (an / ad) / ((T)2.0 * SQRT(SQRT(x)) * EXP(zeta));                  \
        }                                                                                           \
        T f = 1, g = x, k = 1, m = 1, n = x, t = 1, z = x * x * x;                                  \
        while (t > (T)1.11022302462515654042e-16) {                                                 \
            m *= z;                                                                                 \
            k += (T)1.0;                                                                            \
            m /= k;                                                                                 \
            n *= z;                                                                                 \
            k += (T)1.0;                                                                            \
            n /= k;                                                                                 \
            m /= k;                                                                                 \
            f += m;                                                                                 \
            k += (T)1.0;                                                                            \
            n /= k;                                                                                 \
            g += n;                                                                                 \
            t = FABS(m / f);                                                                        \
        }                                                                                           \
        return (T)0.355028053887817239260 * f - (T)0.258819403792806798405 * g;                     \
    }
TN_AIRY_AI(sf_airy_ai_f, float, sqrtf, sinf, cosf, expf, fabsf, horner_f)
TN_AIRY_AI(sf_airy_ai, double, sqrt, sin, cos, exp, fabs, horner_d)

/* spherical j0 = sin(x)/x, its Taylor series near 0 (as upstream, below |x| = 1/2); float32
 * in float, as upstream's kernel computes it (sinf and one division: a float64 sin per
 * element was 1.9x upstream's time) */
static float sf_sj0f(float x) {
    if (isinf(x)) return 0;
    if (fabsf(x) < 0.5f) {
        float z = x * x, p = fmaf(z, 1.f / 6227020800.f, -1.f / 39916800);
        p = fmaf(z, p, 1.f / 362880);
        p = fmaf(z, p, -1.f / 5040);
        p = fmaf(z, p, 1.f / 120);
        p = fmaf(z, p, -1.f / 6);
        return fmaf(z, p, 1);
    }
    return sinf(x) / x;
}
static double sf_sj0(double x) {
    if (isinf(x)) return 0;
    if (fabs(x) < 0.5) {
        double z = x * x;
        return 1 + z * (-1. / 6 + z * (1. / 120 + z * (-1. / 5040 + z * (1. / 362880 + z * (-1. / 39916800 + z * (1. / 6227020800.))))));
    }
    return sin(x) / x;
}

/* ---- orthogonal polynomials (x, n): upstream's special values and, for large n inside
 * the interval, its trigonometric forms; the three-term recurrences otherwise ------------- */

/* Upstream runs the recurrences in the input's type: float inputs round every step to float
 * (`single`), which matters where the recurrence cancels. One float operation done in double
 * and rounded once is the float result exactly. Upstream's build contracts each step's
 * a * b - c into one fused multiply-add, which the sums below reproduce with fma(). */
#define RS(v) (single ? (double)(float)(v) : (v))

/* The recurrences' fused multiply-adds: libm's fma / fmaf are exact roundings on any host,
 * so a clone of each polynomial's loop built for the FMA instruction (chosen at load time
 * where the CPU has it; the polynomial's function inlined into it, its float32 path
 * specialised) gives the same bits without a library call per step (before: 2.3-3.3x
 * upstream's contracted loops at 1e6 elements). */
/* (not in the sanitizer builds: their load-time resolvers run before the runtime is up) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define TN_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define TN_FMA_CLONES
#endif

/* upstream's static_cast<int64_t>(n): NaN, infinities and out-of-range values become
 * INT64_MIN on x86 (a negative degree, so the polynomial is 0) */
static int64_t poly_degree(double n) {
    if (!(n >= -9.2e18 && n <= 9.2e18)) return INT64_MIN;
    return (int64_t)n;
}

/* Chebyshev-type recurrence r_k = 2y r_{k-1} - r_{k-2} from r_0 = 1, r_1 = q1, stopping at NaN */
/* float32 steps in float arithmetic, one fused rounding each, as upstream's float kernel's
 * contracted (y + y) * q - p: its bits, and its time per step (a degree near 2**31 is 2**31
 * steps per element on either side; through double with a rounding per step it took 4x
 * upstream's, a fuzzer "hang" of seed 44) */
TN_SF_INLINE float cheb_rec_f(float y, float q1, int64_t n) {
    float p = 1, q = q1, r = q1;
    for (int64_t k = 2; k <= n && !isnan(q); k++) {
        r = fmaf(y + y, q, -p);
        p = q;
        q = r;
    }
    return r;
}

TN_SF_INLINE double cheb_rec(double y, double q1, int64_t n, bool single) {
    if (n == 0) return 1;
    if (n == 1) return q1;
    if (single) return cheb_rec_f((float)y, (float)q1, n);
    double p = 1, q = q1, r = q1;
    for (int64_t k = 2; k <= n && !isnan(q); k++) {
        r = RS(fma(RS(y + y), q, -p));
        p = q;
        q = r;
    }
    return r;
}

/* kind 0..3 = T, U, V, W strictly inside (-1, 1), for degrees above upstream's threshold;
 * float32 (`single`) in float arithmetic as upstream's float kernel: at degrees near 2**31
 * the angle (n + 1) acos(y) rounded to float is off by radians, so only the same rounding
 * gives upstream's value */
TN_SF_INLINE double cheb_trig_f(int kind, float y, int64_t n) {
    float theta = acosf(y), nd = (float)n;
    switch (kind) {
    case 0: return cosf(nd * theta);
    case 1:
        if (sinf(theta) != 0) return sinf((nd + 1) * theta) / sinf(theta);
        return (nd + 1) * cosf((nd + 1) * theta) / y;
    case 2:
        if (sinf(theta / 2) != 1) return cosf((nd + 0.5f) * theta) / cosf(theta / 2);
        return n % 2 == 0 ? 2 * nd + 1 : -(2 * nd + 1);
    default:
        if (cosf(theta / 2) != 1) return sinf((nd + 0.5f) * theta) / sinf(theta / 2);
        return y > 0 ? 2 * nd + 1 : (n % 2 == 0 ? 1 : -1);
    }
}
TN_SF_INLINE double cheb_trig(int kind, double y, int64_t n, bool single) {
    if (single) return cheb_trig_f(kind, (float)y, n);
    double theta = acos(y), nd = (double)n;
    switch (kind) {
    case 0: return cos(nd * theta);
    case 1:
        if (sin(theta) != 0) return sin((nd + 1) * theta) / sin(theta);
        return (nd + 1) * cos((nd + 1) * theta) / y;
    case 2:
        if (sin(theta / 2) != 1) return cos((nd + 0.5) * theta) / cos(theta / 2);
        return n % 2 == 0 ? 2 * nd + 1 : -(2 * nd + 1);
    default:
        if (cos(theta / 2) != 1) return sin((nd + 0.5) * theta) / sin(theta / 2);
        return y > 0 ? 2 * nd + 1 : (n % 2 == 0 ? 1 : -1);
    }
}

TN_SF_INLINE double sf_cheb(int kind, double x, double nf, bool single) {
    int64_t n = poly_degree(nf);
    if (n < 0) return 0;
    double nd = (double)n;
    if (fabs(x) == 1) {
        bool odd_neg = x < 0 && n % 2 != 0;
        switch (kind) {
        case 0: return odd_neg ? -1 : 1;
        case 1: return odd_neg ? -(nd + 1) : nd + 1;
        case 2: return x > 0 ? 1 : (n % 2 == 0 ? 2 * nd + 1 : -(2 * nd + 1));
        default: return x > 0 ? 2 * nd + 1 : (n % 2 == 0 ? 1 : -1);
        }
    }
    if (n > (kind == 0 ? 6 : 8) && fabs(x) < 1) return cheb_trig(kind, x, n, single);
    double q1 = kind == 0 ? x : kind == 1 ? RS(x + x) : kind == 2 ? RS(RS(x + x) - 1) : RS(RS(x + x) + 1);
    return cheb_rec(x, q1, n, single);
}

/* the shifted polynomials T*_n(x) = T_n(2x - 1), ...: special values at x = 1 and x = 0 */
TN_SF_INLINE double sf_scheb(int kind, double x, double nf, bool single) {
    int64_t n = poly_degree(nf);
    if (n < 0) return 0;
    double nd = (double)n, y = RS(RS(x + x) - 1);
    if (x == 1) return kind == 0 ? 1 : kind == 1 ? nd + 1 : kind == 2 ? 1 : 2 * nd + 1;
    if (x == 0) {
        bool even = n % 2 == 0;
        switch (kind) {
        case 0: return even ? 1 : -1;
        case 1: return even ? nd + 1 : -(nd + 1);
        case 2: return even ? 2 * nd + 1 : -(2 * nd + 1);
        default: return even ? 1 : -1;
        }
    }
    /* (upstream's W branch answers +-1 where the unshifted one answers 2n + 1 at y -> 1) */
    if (n > (kind == 3 ? 4 : 6) && fabs(y) < 1) {
        if (kind == 3 && cos(acos(y) / 2) == 1) return n % 2 == 0 ? 1 : -1;
        return cheb_trig(kind, y, n, single);
    }
    double q1 = kind == 0 ? y : kind == 1 ? RS(y + y) : kind == 2 ? RS(RS(y + y) - 1) : RS(RS(y + y) + 1);
    return cheb_rec(y, q1, n, single);
}

/* physicists' Hermite H_n; NaN above upstream's degree limit for the dtype (`limit`) */
TN_SF_INLINE double sf_hermite_h(double x, double nf, int64_t limit, bool single) {
    int64_t n = poly_degree(nf);
    if (n < 0) return 0;
    if (n == 0) return 1;
    if (n == 1) return x + x;
    if (n > limit) return NAN;
    if (single) { /* in float, one fused rounding per step as upstream's contracted loop */
        float xf = (float)x, pf = 1, qf = xf + xf, rf = 0;
        for (int64_t k = 2; k < n + n; k += 2) {
            rf = fmaf(xf + xf, qf, -((float)k * pf));
            pf = qf;
            qf = rf;
        }
        return rf;
    }
    double p = 1, q = x + x, r = 0;
    for (int64_t k = 2; k < n + n; k += 2) {
        r = RS(fma(RS(x + x), q, -RS((double)k * p)));
        p = q;
        q = r;
    }
    return r;
}

/* probabilists' Hermite He_n */
TN_SF_INLINE double sf_hermite_he(double x, double nf, int64_t limit, bool single) {
    int64_t n = poly_degree(nf);
    if (n < 0) return 0;
    if (n == 0) return 1;
    if (n == 1) return x;
    if (n > limit) return NAN;
    if (single) {
        float xf = (float)x, pf = 1, qf = xf, rf = 0;
        for (int64_t k = 1; k < n; k++) {
            rf = fmaf(xf, qf, -((float)k * pf));
            pf = qf;
            qf = rf;
        }
        return rf;
    }
    double p = 1, q = x, r = 0;
    for (int64_t k = 1; k < n; k++) {
        r = RS(fma(x, q, -RS((double)k * p)));
        p = q;
        q = r;
    }
    return r;
}

/* Laguerre and Legendre step with the degree k: upstream's int64 k meets the float x as a
 * float conversion (float(2k), float(2k + 1), float(k), float(k + 1), each rounded once k
 * passes 2**24), so the float32 rows run in float arithmetic, step for step as upstream's:
 * both the bits at large degrees and the time per step (a degree near 2**31 takes 2**31
 * steps per element on either side) follow. One recurrence per (name, compute type T, its
 * fused multiply-add FMA), from p = 1 and q = Q1, stopping at NaN as upstream's loops. */
#define TN_POLY_K_REC(name, T, FMA, Q1, STEP_A)                                   \
    TN_SF_INLINE T name(T x, int64_t n) {                                       \
        T p = 1, q = Q1, r = q;                                                   \
        for (int64_t k = 1; k < n && !isnan(q); k++) {                            \
            r = FMA(STEP_A, q, -((T)k * p)) / (T)(k + 1);                         \
            p = q;                                                                \
            q = r;                                                                \
        }                                                                         \
        return r;                                                                 \
    }
TN_POLY_K_REC(laguerre_f, float, fmaf, 1 - x, (float)(k + k) + (1 - x))
TN_POLY_K_REC(laguerre_d, double, fma, 1 - x, (double)(k + k) + (1 - x))
TN_POLY_K_REC(legendre_f, float, fmaf, x, (float)(k + k + 1) * x)
TN_POLY_K_REC(legendre_d, double, fma, x, (double)(k + k + 1) * x)

TN_SF_INLINE double sf_laguerre(double x, double nf, bool single) {
    int64_t n = poly_degree(nf);
    if (n < 0) return 0;
    if (fabs(x) == 0 || n == 0) return 1;
    if (n == 1) return 1 - x;
    return single ? laguerre_f((float)x, n) : laguerre_d(x, n);
}

TN_SF_INLINE double sf_legendre(double x, double nf, bool single) {
    int64_t n = poly_degree(nf);
    if (n < 0) return 0;
    if (fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1 : -1;
    if (n == 0) return 1;
    if (n == 1) return x;
    return single ? legendre_f((float)x, n) : legendre_d(x, n);
}

/* ---- loops ------------------------------------------------------------------------------- */

/* float32/float64 only (upstream's AT_DISPATCH_FLOATING_TYPES kernels) */
#define TN_EW_F2(X, ...) X(f32, FLOAT32, float, float, __VA_ARGS__) X(f64, FLOAT64, double, double, __VA_ARGS__)
/* degree limit of the Hermite polynomials per compute type (upstream's getHermitianLimit) */
#define TN_SINGLE (sizeof(T) == sizeof(float))
#define TN_HERMITE_LIMIT ((int64_t)(sizeof(T) == sizeof(float) ? 128 : 512))

#define TN_SF1(op, fn) TN_EW_FLOATS(TN_EW_U_SAME, op, (T)fn((double)x))
#define TN_SF1_F2(op, fn) TN_EW_F2(TN_EW_U_SAME, op, (T)fn((double)x))
TN_EW_FLOATS(TN_EW_U_SAME, lgamma, TN_SINGLE ? (T)sf_lgammaf((float)x) : (T)sf_lgamma((double)x))
TN_SF1(erfinv, sf_erfinv)
TN_SF1(i0, sf_i0)
TN_SF1(i0e, sf_i0e)
TN_SF1(i1, sf_i1)
TN_SF1(i1e, sf_i1e)
/* special_ndtr is upstream's composition (1 + erf(x * sqrt(1/2))) * 0.5, each step rounded
 * to the tensor's dtype (so it cancels in the lower tail just as upstream's does). */
#define TN_NDTR(R) R(R(1 + R(erf(R(x * (T)M_SQRT1_2)))) * (T)0.5)
TN_EW_LOOP1(f32_ndtr__scalar, float, float, ld_f32, float, st_f32, TN_NDTR(TN_EW_RND_f32))
TN_EW_LOOP1(f64_ndtr__scalar, double, double, ld_f64, double, st_f64, TN_NDTR(TN_EW_RND_f64))
TN_EW_LOOP1(f16_ndtr__scalar, uint16_t, float, ld_f16, uint16_t, st_f16, TN_NDTR(TN_EW_RND_f16))
TN_EW_LOOP1(bf16_ndtr__scalar, uint16_t, float, ld_bf16, uint16_t, st_bf16, TN_NDTR(TN_EW_RND_bf16))
TN_SF1(entr, sf_entr)
TN_EW_F2(TN_EW_U_SAME, erfcx, (T)sf_erfcx_t((double)x, sizeof(T) == sizeof(float)))
#define TN_EW_U_SAME_FMA(sfx, E, ST, NT, op, ...) \
    TN_EW_LOOP1_ATTR(TN_FMA_CLONES, sfx##_##op##__scalar, ST, NT, ld_##sfx, ST, st_##sfx, __VA_ARGS__)
/* i[0] = n; polygamma(0, x) is digamma, whose polynomial is contracted (the FMA clones) */
TN_EW_FLOATS(TN_EW_U_SAME_FMA, polygamma, (sizeof(T) == sizeof(float) && ctx->i[0] == 1) ? (T)sf_trigammaf((float)x)
                                      : (sizeof(T) == sizeof(float) && ctx->i[0] == 0) ? (T)sf_digamma_f((float)x)
                                                                                      : (T)sf_polygamma(ctx->i[0], (double)x))
TN_EW_FLOATS(TN_EW_U_SAME_FMA, digamma, TN_SINGLE ? (T)sf_digamma_f((float)x) : (T)sf_digamma((double)x))
TN_EW_F2(TN_EW_U_SAME_FMA, ndtri, TN_SINGLE ? (T)sf_ndtri_f((float)x) : (T)sf_ndtri((double)x))
TN_EW_F2(TN_EW_U_SAME, log_ndtr, TN_SINGLE ? (T)sf_log_ndtr_f((float)x) : (T)sf_log_ndtr((double)x))
TN_EW_F2(TN_EW_U_SAME_FMA, bessel_j0, TN_SINGLE ? (T)sf_j0_f((float)x) : (T)sf_j0((double)x))
TN_EW_F2(TN_EW_U_SAME_FMA, bessel_j1, TN_SINGLE ? (T)sf_j1_f((float)x) : (T)sf_j1((double)x))
TN_EW_F2(TN_EW_U_SAME_FMA, bessel_y0, TN_SINGLE ? (T)sf_y0_f((float)x) : (T)sf_y0((double)x))
TN_EW_F2(TN_EW_U_SAME_FMA, bessel_y1, TN_SINGLE ? (T)sf_y1_f((float)x) : (T)sf_y1((double)x))
#define TN_BESSEL_K_F2(op, nu, scaled) \
    TN_EW_F2(TN_EW_U_SAME_FMA, op, TN_SINGLE ? (T)bessel_k_f(nu, scaled, (float)x) : (T)bessel_k_d(nu, scaled, (double)x))
TN_BESSEL_K_F2(modified_bessel_k0, 0, false)
TN_BESSEL_K_F2(modified_bessel_k1, 1, false)
TN_BESSEL_K_F2(scaled_modified_bessel_k0, 0, true)
TN_BESSEL_K_F2(scaled_modified_bessel_k1, 1, true)
TN_EW_F2(TN_EW_U_SAME, spherical_bessel_j0, TN_SINGLE ? (T)sf_sj0f((float)x) : (T)sf_sj0((double)x))
TN_EW_F2(TN_EW_U_SAME, airy_ai, TN_SINGLE ? (T)sf_airy_ai_f((float)x) : (T)sf_airy_ai((double)x))
/* i[0] = p (mvlgamma) */
TN_EW_LOOP1(f32_mvlgamma__scalar, float, float, ld_f32, float, st_f32, sf_mvlgammaf(x, ctx->i[0], rnd_none))
TN_EW_LOOP1(f64_mvlgamma__scalar, double, double, ld_f64, double, st_f64, sf_mvlgamma(x, ctx->i[0]))
TN_EW_LOOP1(f16_mvlgamma__scalar, uint16_t, float, ld_f16, uint16_t, st_f16, sf_mvlgammaf(x, ctx->i[0], tn_round_half_f32))
TN_EW_LOOP1(bf16_mvlgamma__scalar, uint16_t, float, ld_bf16, uint16_t, st_bf16, sf_mvlgammaf(x, ctx->i[0], tn_round_bf16_f32))

#define TN_SF2(op, expr) TN_EW_FLOATS(TN_EW_B_SAME, op, (T)(expr))
#define TN_SF2_F2(op, expr) TN_EW_F2(TN_EW_B_SAME, op, (T)(expr))
/* the polynomials' loops as FMA clones, their recurrences inlined (TN_FMA_CLONES) */
#define TN_EW_B_SAME_FMA(sfx, E, ST, NT, op, ...) \
    TN_EW_LOOP2_ATTR(TN_FMA_CLONES, sfx##_##op##__scalar, ST, NT, ld_##sfx, ST, st_##sfx, __VA_ARGS__)
#define TN_POLY_F2(op, expr) TN_EW_F2(TN_EW_B_SAME_FMA, op, (T)(expr))
/* upstream's x * log1p(y) in the row's arithmetic: log1pf for float and, rounded to the type
 * before the product, for float16 / bfloat16 */
#define TN_XLOG1PY(R) (y != y ? (T)NAN : x == 0 ? (T)0 : x * R(TN_SINGLE ? (T)log1pf((float)y) : (T)log1p((double)y)))
TN_EW_FLOATS(TN_EW_B_SAME_RND, xlog1py, TN_XLOG1PY)
#define TN_IGAMMA_EPS (sizeof(T) == sizeof(double) ? 1e-17 : 0x1p-32)
/* (inlined into FMA clones of their loops: the continued fraction's steps are fused) */
TN_EW_FLOATS(TN_EW_B_SAME_FMA, igamma, (T)sf_igamma((double)x, (double)y, false, TN_IGAMMA_EPS))
TN_EW_FLOATS(TN_EW_B_SAME_FMA, igammac, (T)sf_igamma((double)x, (double)y, true, TN_IGAMMA_EPS))
TN_SF2_F2(zeta, sf_zeta((double)x, (double)y))
TN_POLY_F2(chebyshev_t, sf_cheb(0, (double)x, (double)y, TN_SINGLE))
TN_POLY_F2(chebyshev_u, sf_cheb(1, (double)x, (double)y, TN_SINGLE))
TN_POLY_F2(chebyshev_v, sf_cheb(2, (double)x, (double)y, TN_SINGLE))
TN_POLY_F2(chebyshev_w, sf_cheb(3, (double)x, (double)y, TN_SINGLE))
TN_POLY_F2(shifted_chebyshev_t, sf_scheb(0, (double)x, (double)y, TN_SINGLE))
TN_POLY_F2(shifted_chebyshev_u, sf_scheb(1, (double)x, (double)y, TN_SINGLE))
TN_POLY_F2(shifted_chebyshev_v, sf_scheb(2, (double)x, (double)y, TN_SINGLE))
TN_POLY_F2(shifted_chebyshev_w, sf_scheb(3, (double)x, (double)y, TN_SINGLE))
TN_POLY_F2(hermite_h, sf_hermite_h((double)x, (double)y, TN_HERMITE_LIMIT, TN_SINGLE))
TN_POLY_F2(hermite_he, sf_hermite_he((double)x, (double)y, TN_HERMITE_LIMIT, TN_SINGLE))
TN_POLY_F2(laguerre_l, sf_laguerre((double)x, (double)y, TN_SINGLE))
TN_POLY_F2(legendre_p, sf_legendre((double)x, (double)y, TN_SINGLE))

/* nextafter in the storage type itself (not the double one for float: its neighbour of
 * FLT_MAX or of 0 rounds back to inf or 0): libm's nextafter for double; for float32 the bit
 * neighbour inline, libm's nextafterf's values without a call per element; the same for the
 * 16-bit floats (all are sign-magnitude, so the next value is bits +- 1; from 0 the smallest
 * subnormal with the sign of `to`, as upstream's c10 helpers). */
#pragma GCC push_options
#pragma GCC optimize("O3") /* branch-free selects, so the contiguous loop vectorises */
static inline float next32(float f, float t) {
    uint32_t u, v, w;
    memcpy(&u, &f, 4);
    memcpy(&v, &t, 4);
    float s = f + t;
    memcpy(&w, &s, 4);
    uint32_t r = ((f < t) == (f > 0)) ? u + 1 : u - 1;
    r = f == 0 ? (v & 0x80000000u) | 1 : r;
    r = f == t ? v : r;
    r = (f != f || t != t) ? w : r;
    memcpy(&f, &r, 4);
    return f;
}
TN_EW_LOOP2(f32_nextafter__scalar, float, float, ld_f32, float, st_f32, next32(x, y))
#pragma GCC pop_options
TN_EW_LOOP2(f64_nextafter__scalar, double, double, ld_f64, double, st_f64, nextafter(x, y))
static uint16_t next16(uint16_t from, uint16_t to, float f, float t) {
    if (f == t) return to;
    if (f == 0) return (uint16_t)((to & 0x8000) | 1);
    return ((f < t) == (f > 0)) ? (uint16_t)(from + 1) : (uint16_t)(from - 1);
}
#define TN_NEXT16(sfx, LD, NANBITS)                                                                    \
    static void sfx##_nextafter__scalar(char **data, const int64_t *strides, int64_t n, void *ctx) {  \
        (void)ctx;                                                                                     \
        for (int64_t k = 0; k < n; k++) {                                                              \
            uint16_t a, b, r;                                                                          \
            memcpy(&a, data[1] + k * strides[1], 2);                                                   \
            memcpy(&b, data[2] + k * strides[2], 2);                                                   \
            float f = LD(data[1] + k * strides[1]), t = LD(data[2] + k * strides[2]);                  \
            r = (f != f || t != t) ? (uint16_t)(NANBITS) : next16(a, b, f, t);                         \
            memcpy(data[0] + k * strides[0], &r, 2);                                                   \
        }                                                                                              \
    }
TN_NEXT16(f16, ld_f16, 0x7e00)
TN_NEXT16(bf16, ld_bf16, 0x7fc0)

void tn_ew_register_special(tn_loop_fn (*t)[TN_DTYPE_COUNT]) {
#define TN_REG_F(op) TN_EW_FLOATS(TN_EW_REG, op)
#define TN_REG_F2(op) TN_EW_F2(TN_EW_REG, op)
    TN_REG_F(lgamma) TN_REG_F(digamma) TN_REG_F(erfinv) TN_REG_F(i0) TN_REG_F(i0e) TN_REG_F(i1) TN_REG_F(i1e)
    TN_REG_F(ndtr) TN_REG_F(entr) TN_REG_F(polygamma) TN_REG_F(mvlgamma) TN_REG_F(xlog1py) TN_REG_F(igamma)
    TN_REG_F(igammac)
    TN_REG_F2(erfcx) TN_REG_F2(ndtri) TN_REG_F2(log_ndtr) TN_REG_F2(bessel_j0) TN_REG_F2(bessel_j1)
    TN_REG_F2(bessel_y0) TN_REG_F2(bessel_y1) TN_REG_F2(modified_bessel_k0) TN_REG_F2(modified_bessel_k1)
    TN_REG_F2(scaled_modified_bessel_k0) TN_REG_F2(scaled_modified_bessel_k1) TN_REG_F2(spherical_bessel_j0) TN_REG_F2(airy_ai)
    TN_REG_F2(zeta) TN_REG_F2(chebyshev_t) TN_REG_F2(chebyshev_u) TN_REG_F2(chebyshev_v) TN_REG_F2(chebyshev_w)
    TN_REG_F2(shifted_chebyshev_t) TN_REG_F2(shifted_chebyshev_u) TN_REG_F2(shifted_chebyshev_v)
    TN_REG_F2(shifted_chebyshev_w) TN_REG_F2(hermite_h) TN_REG_F2(hermite_he) TN_REG_F2(laguerre_l)
    TN_REG_F2(legendre_p) TN_REG_F2(nextafter)
    t[TN_EW_nextafter][TN_DTYPE_FLOAT16] = f16_nextafter__scalar;
    t[TN_EW_nextafter][TN_DTYPE_BFLOAT16] = bf16_nextafter__scalar;
}

/* frexp by the bits, as glibc's frexp / frexpf answer (upstream calls std::frexp): zero,
 * infinities and NaN come back (NaN quieted) with exponent 0, a subnormal is scaled into the
 * normal range first; otherwise the exponent field becomes that of [0.5, 1). Checked
 * against libm on every float32 (tests/c/test_ew_math.c) and on float64 samples. */
#define TN_FREXP_BITS(name, T, U, MB) /* MB: the stored mantissa bits */                  \
    static inline T name(T x, int *e) {                                                     \
        const int emax = (int)(((U)1 << (sizeof(T) * 8 - 1 - (MB))) - 1), half = emax / 2 - 1; \
        U u;                                                                                \
        memcpy(&u, &x, sizeof u);                                                           \
        int ex = (int)(u >> (MB) & (U)emax), adj = 0;                                       \
        if (ex == emax) { *e = 0; return x + x; } /* a signalling NaN comes back quiet */  \
        if (!(u << 1)) { *e = 0; return x; }                                                \
        if (ex == 0) { /* subnormal: scaled into the normal range first */                  \
            x *= (T)((uint64_t)1 << ((MB) + 2));                                            \
            memcpy(&u, &x, sizeof u);                                                       \
            ex = (int)(u >> (MB) & (U)emax);                                                \
            adj = (MB) + 2;                                                                 \
        }                                                                                   \
        *e = ex - half - adj;                                                               \
        u = (u & ~((U)emax << (MB))) | ((U)half << (MB));                                   \
        memcpy(&x, &u, sizeof u);                                                           \
        return x;                                                                           \
    }
TN_FREXP_BITS(frexp_bits_f32, float, uint32_t, 23)
TN_FREXP_BITS(frexp_bits_f64, double, uint64_t, 52)
float tn_frexp_f32(float x, int *e) { return frexp_bits_f32(x, e); }
double tn_frexp_f64(double x, int *e) { return frexp_bits_f64(x, e); }

typedef struct { tn_dtype dtype; const char *in; char *mant; int32_t *expo; } frexp_job;

static void frexp_range(void *ctx, int64_t k0, int64_t k1) {
    const frexp_job *j = ctx;
    int e;
    /* one loop per dtype: LD / ST read and write element k of the input and the mantissa */
#define FREXP_LOOP(LD, ST, FN)                  \
    for (int64_t k = k0; k < k1; k++) {         \
        ST(FN(LD(k), &e));                      \
        j->expo[k] = e;                         \
    }                                           \
    break;
#define LD32(k) ((const float *)j->in)[k]
#define ST32(v) ((float *)j->mant)[k] = (v)
#define LD64(k) ((const double *)j->in)[k]
#define ST64(v) ((double *)j->mant)[k] = (v)
#define LDH(k) ld_f16(j->in + 2 * (k))
#define STH(v) st_f16(j->mant + 2 * k, (v))
#define LDB(k) ld_bf16(j->in + 2 * (k))
#define STB(v) st_bf16(j->mant + 2 * k, (v))
    switch (j->dtype) {
    case TN_DTYPE_FLOAT32: FREXP_LOOP(LD32, ST32, frexp_bits_f32)
    case TN_DTYPE_FLOAT64: FREXP_LOOP(LD64, ST64, frexp_bits_f64)
    case TN_DTYPE_FLOAT16: FREXP_LOOP(LDH, STH, frexp_bits_f32)
    default: FREXP_LOOP(LDB, STB, frexp_bits_f32)
    }
#undef FREXP_LOOP
#undef LD32
#undef ST32
#undef LD64
#undef ST64
#undef LDH
#undef STH
#undef LDB
#undef STB
}

/* frexp over n contiguous elements of a floating dtype: mantissa in the same dtype (in
 * [0.5, 1) in magnitude), exponent as int32, on the pool. */
void tn_ew_frexp(tn_dtype dtype, const char *in, char *mant, int32_t *expo, int64_t n) {
    frexp_job j = {dtype, in, mant, expo};
    tn_parallel_for(n, 32768, frexp_range, &j);
}
