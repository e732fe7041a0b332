/* linalg_syevd.c — the symmetric eigenproblem the way LAPACK's syevd solves a small matrix:
 * Householder tridiagonalization (sytd2, either triangle), implicit QL/QR iteration on the
 * tridiagonal matrix (steqr, eigenvectors from the identity) and the back-transformation by
 * the reflectors (ormtr), float64, and the Hermitian one as heevd does (hetd2: a complex
 * reflector per column, a real tridiagonal matrix, the same real steqr, unmtr), complex128;
 * the two share one body (linalg_syevd.inc). Following the same steps gives the same eigenvector
 * signs as upstream's LAPACK, which no convention fixes otherwise. Contract in
 * linalg_decomp.h. Indices below are 1-based, as in the algorithms' descriptions. */
/* The bodies' loops at -O3, where GCC vectorises the row and column updates (at -O2 they
 * stayed scalar: linalg.inv / solve of 256 x 256 took 20x upstream's time, session 47). Each
 * element's arithmetic is unchanged (ISO C11 contracts nothing, and GCC reorders no
 * floating-point sum without -fassociative-math), so the same bits. */
#pragma GCC optimize("O3")
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/complex_math.h"
#include "kernels/linalg_decomp.h"

/* dlaev2: eigenvalues rt1 (larger |.|), rt2 of [[a, b], [b, c]] and (cs1, sn1) the unit
 * eigenvector of rt1 */
static void laev2(double a, double b, double c, double *rt1, double *rt2, double *cs1, double *sn1) {
    double sm = a + c, df = a - c, adf = fabs(df), tb = b + b, ab = fabs(tb);
    double acmx = fabs(a) > fabs(c) ? a : c, acmn = fabs(a) > fabs(c) ? c : a, rt;
    int sgn1, sgn2;
    if (adf > ab) rt = adf * sqrt(1 + (ab / adf) * (ab / adf));
    else if (adf < ab) rt = ab * sqrt(1 + (adf / ab) * (adf / ab));
    else rt = ab * sqrt(2.0);
    if (sm < 0) *rt1 = 0.5 * (sm - rt), sgn1 = -1, *rt2 = (acmx / *rt1) * acmn - (b / *rt1) * b;
    else if (sm > 0) *rt1 = 0.5 * (sm + rt), sgn1 = 1, *rt2 = (acmx / *rt1) * acmn - (b / *rt1) * b;
    else *rt1 = 0.5 * rt, *rt2 = -0.5 * rt, sgn1 = 1;
    double cs;
    if (df >= 0) cs = df + rt, sgn2 = 1;
    else cs = df - rt, sgn2 = -1;
    if (fabs(cs) > ab) {
        double ct = -tb / cs;
        *sn1 = 1 / sqrt(1 + ct * ct), *cs1 = ct * *sn1;
    } else if (ab == 0) {
        *cs1 = 1, *sn1 = 0;
    } else {
        double tn = -cs / tb;
        *cs1 = 1 / sqrt(1 + tn * tn), *sn1 = tn * *cs1;
    }
    if (sgn1 == sgn2) {
        double tn = *cs1;
        *cs1 = -*sn1, *sn1 = tn;
    }
}

/* dlartg (LAPACK 3.10+): c >= 0, r carries f's sign */
static void lartg(double f, double g, double *c, double *s, double *r) {
    if (g == 0) { *c = 1, *s = 0, *r = f; return; }
    if (f == 0) { *c = 0, *s = 1, *r = g; return; }
    double d = hypot(f, g);
    *c = f / d, *s = g / d, *r = d;
    if (fabs(f) > fabs(g) && *c < 0) *c = -*c, *s = -*s, *r = -*r;
}

/* dlasr('R', 'V', dir): rotations in planes (j, j+1), j = 1..mm-1, applied from the right
 * to columns j0..j0+mm-1 of the n×n matrix z, held transposed (zt: row j is z's column j),
 * so each rotation runs along two contiguous rows; each element's arithmetic is the same.
 * (Not split among threads: on this project's 2-vCPU hosts the two threads share a core,
 * and 256 x 256 took 2.4x as long on two as on one, session 48.) */
TN_LA_CLONES static void lasr(bool forward, int64_t n, int64_t mm, const double *c, const double *s, double *zt,
                              int64_t j0) {
    for (int64_t t = 0; t < mm - 1; t++) {
        int64_t j = forward ? t : mm - 2 - t;
        double ct = c[j], st = s[j];
        if (ct == 1 && st == 0) continue;
        double *restrict z0 = zt + (j0 - 1 + j) * n, *restrict z1 = z0 + n;
        for (int64_t i = 0; i < n; i++) {
            double temp = z1[i];
            z1[i] = ct * temp - st * z0[i];
            z0[i] = st * temp + ct * z0[i];
        }
    }
}

/* the n×n matrix z transposed in place */
static void transpose_sq(int64_t n, double *z) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            double t = z[i * n + j];
            z[i * n + j] = z[j * n + i], z[j * n + i] = t;
        }
}

#define SIGN(a, b) copysign(fabs(a), (b))

/* dsteqr(compz='I'): d[1..n], e[1..n-1] (1-based), z n×n row-major (built transposed, then
 * transposed in place); work 2n */
static int steqr(int64_t n, double *d, double *e, double *z, double *work, bool single) {
    /* the deflation thresholds of the precision upstream computes in: they decide how many
     * sweeps run, and with them the eigenvectors' signs */
    const double eps = single ? FLT_EPSILON / 2 : DBL_EPSILON / 2, eps2 = eps * eps;
    const double safmin = single ? FLT_MIN : DBL_MIN, safmax = 1 / safmin;
    const double ssfmax = sqrt(safmax) / 3, ssfmin = sqrt(safmin) / eps2;
    for (int64_t i = 0; i < n * n; i++) z[i] = 0;
    for (int64_t i = 0; i < n; i++) z[i * n + i] = 1;
    if (n <= 1) return 0;
    int64_t nmaxit = n * 30, jtot = 0, l1 = 1, nm1 = n - 1;
    double *wc = work - 1, *ws = work + n - 2; /* work(l) and work(n-1+l), 1-based */
    for (;;) {
        if (l1 > n) break;
        if (l1 > 1) e[l1 - 1] = 0;
        int64_t m = n;
        for (int64_t mm = l1; mm <= nm1; mm++) {
            double tst = fabs(e[mm]);
            if (tst == 0) { m = mm; break; }
            if (tst <= sqrt(fabs(d[mm])) * sqrt(fabs(d[mm + 1])) * eps) { e[mm] = 0; m = mm; break; }
        }
        int64_t l = l1, lsv = l, lend = m, lendsv = lend;
        l1 = m + 1;
        if (lend == l) continue;
        double anorm = 0; /* dlanst('M'): a nan propagates (and then never converges) */
        for (int64_t i = l; i <= lend; i++) anorm = fabs(d[i]) > anorm || d[i] != d[i] ? fabs(d[i]) : anorm;
        for (int64_t i = l; i < lend; i++) anorm = fabs(e[i]) > anorm || e[i] != e[i] ? fabs(e[i]) : anorm;
        int iscale = 0;
        if (anorm == 0) continue;
        double sc = 1;
        if (anorm > ssfmax) iscale = 1, sc = ssfmax / anorm;
        if (anorm < ssfmin) iscale = 2, sc = ssfmin / anorm;
        if (iscale) {
            for (int64_t i = l; i <= lend; i++) d[i] *= sc;
            for (int64_t i = l; i < lend; i++) e[i] *= sc;
        }
        if (fabs(d[lend]) < fabs(d[l])) lend = lsv, l = lendsv;
        if (lend > l) { /* QL iteration */
            for (;;) {
                int64_t mm = lend;
                if (l != lend)
                    for (int64_t t = l; t <= lend - 1; t++) {
                        double tst = fabs(e[t]) * fabs(e[t]);
                        if (tst <= (eps2 * fabs(d[t])) * fabs(d[t + 1]) + safmin) { mm = t; break; }
                    }
                m = mm;
                if (m < lend) e[m] = 0;
                double p = d[l];
                if (m == l) { /* eigenvalue found */
                    d[l] = p;
                    l++;
                    if (l <= lend) continue;
                    break;
                }
                if (m == l + 1) {
                    double rt1, rt2, c, s;
                    laev2(d[l], e[l], d[l + 1], &rt1, &rt2, &c, &s);
                    wc[l] = c, ws[l] = s;
                    lasr(false, n, 2, &wc[l], &ws[l], z, l);
                    d[l] = rt1, d[l + 1] = rt2, e[l] = 0;
                    l += 2;
                    if (l <= lend) continue;
                    break;
                }
                if (jtot == nmaxit) break;
                jtot++;
                double g = (d[l + 1] - p) / (2 * e[l]), r = hypot(g, 1.0);
                g = d[m] - p + (e[l] / (g + SIGN(r, g)));
                double s = 1, c = 1;
                p = 0;
                for (int64_t i = m - 1; i >= l; i--) {
                    double f = s * e[i], b = c * e[i];
                    lartg(g, f, &c, &s, &r);
                    if (i != m - 1) e[i + 1] = r;
                    g = d[i + 1] - p;
                    r = (d[i] - g) * s + 2 * c * b;
                    p = s * r;
                    d[i + 1] = g + p;
                    g = c * r - b;
                    wc[i] = c, ws[i] = -s;
                }
                lasr(false, n, m - l + 1, &wc[l], &ws[l], z, l);
                d[l] = d[l] - p, e[l] = g;
            }
        } else { /* QR iteration */
            for (;;) {
                int64_t mm = lend;
                if (l != lend)
                    for (int64_t t = l; t >= lend + 1; t--) {
                        double tst = fabs(e[t - 1]) * fabs(e[t - 1]);
                        if (tst <= (eps2 * fabs(d[t])) * fabs(d[t - 1]) + safmin) { mm = t; break; }
                    }
                m = mm;
                if (m > lend) e[m - 1] = 0;
                double p = d[l];
                if (m == l) {
                    d[l] = p;
                    l--;
                    if (l >= lend) continue;
                    break;
                }
                if (m == l - 1) {
                    double rt1, rt2, c, s;
                    laev2(d[l - 1], e[l - 1], d[l], &rt1, &rt2, &c, &s);
                    wc[m] = c, ws[m] = s;
                    lasr(true, n, 2, &wc[m], &ws[m], z, l - 1);
                    d[l - 1] = rt1, d[l] = rt2, e[l - 1] = 0;
                    l -= 2;
                    if (l >= lend) continue;
                    break;
                }
                if (jtot == nmaxit) break;
                jtot++;
                double g = (d[l - 1] - p) / (2 * e[l - 1]), r = hypot(g, 1.0);
                g = d[m] - p + (e[l - 1] / (g + SIGN(r, g)));
                double s = 1, c = 1;
                p = 0;
                for (int64_t i = m; i <= l - 1; i++) {
                    double f = s * e[i], b = c * e[i];
                    lartg(g, f, &c, &s, &r);
                    if (i != m) e[i - 1] = r;
                    g = d[i] - p;
                    r = (d[i + 1] - g) * s + 2 * c * b;
                    p = s * r;
                    d[i] = g + p;
                    g = c * r - b;
                    wc[i] = c, ws[i] = s;
                }
                lasr(true, n, l - m + 1, &wc[m], &ws[m], z, m);
                d[l] = d[l] - p, e[l - 1] = g;
            }
        }
        if (iscale) {
            for (int64_t i = lsv; i <= lendsv; i++) d[i] /= sc;
            for (int64_t i = lsv; i < lendsv; i++) e[i] /= sc;
        }
        if (jtot >= nmaxit) {
            int bad = 0;
            for (int64_t i = 1; i < n; i++) bad += e[i] != 0;
            if (bad) {
                transpose_sq(n, z); /* zt -> z */
                return bad;
            }
        }
    }
    /* selection sort, ascending, eigenvectors along */
    for (int64_t ii = 2; ii <= n; ii++) {
        int64_t i = ii - 1, k = i;
        double p = d[i];
        for (int64_t j = ii; j <= n; j++)
            if (d[j] < p) k = j, p = d[j];
        if (k != i) {
            d[k] = d[i], d[i] = p;
            for (int64_t r = 0; r < n; r++) {
                double t = z[(i - 1) * n + r];
                z[(i - 1) * n + r] = z[(k - 1) * n + r], z[(k - 1) * n + r] = t;
            }
        }
    }
    transpose_sq(n, z); /* zt -> z */
    return 0;
}

/* ---- the tridiagonalization and back-transformation, once per scalar type ---- */
#define LA_COMPLEX 0
#include "kernels/linalg_scalar.h"
#define LA(x) x##_d
#define EVD_NAME tn_linalg_syevd
#include "kernels/linalg_syevd.inc"
#undef LA
#undef EVD_NAME
#include "kernels/linalg_scalar_end.h"

#define LA_COMPLEX 1
#include "kernels/linalg_scalar.h"
#define LA(x) x##_z
#define EVD_NAME tn_linalg_zheevd
#include "kernels/linalg_syevd.inc"
#include "kernels/linalg_scalar_end.h"
