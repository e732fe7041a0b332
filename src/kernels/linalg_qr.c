/* linalg_qr.c — Householder QR in float64 with LAPACK's reflector conventions: geqrf,
 * orgqr (forming Q) and ormqr (applying Q), one matrix per call (linalg_decomp.h). */
#include <math.h>

#include "kernels/linalg_decomp.h"

/* dlarfg's reflector for the column x[0..len) at stride `st`: x[0] becomes beta, the rest
 * the vector v (v[0] = 1 implied); returns tau (0 when the column is already e0·alpha). */
static double reflector(int64_t len, double *x, int64_t st) {
    if (len <= 1) return 0;
    double alpha = x[0], xnorm = 0, scale = 0, ssq = 1;
    for (int64_t i = 1; i < len; i++) { /* scaled sum of squares, as dnrm2 */
        double v = fabs(x[i * st]);
        if (v == 0) continue;
        if (scale < v) ssq = 1 + ssq * (scale / v) * (scale / v), scale = v;
        else ssq += (v / scale) * (v / scale);
    }
    xnorm = scale * sqrt(ssq);
    if (xnorm == 0) return 0;
    double beta = -copysign(hypot(alpha, xnorm), alpha);
    double tau = (beta - alpha) / beta, r = 1.0 / (alpha - beta);
    for (int64_t i = 1; i < len; i++) x[i * st] *= r;
    x[0] = beta;
    return tau;
}

/* Applies H = I - tau v vᵀ from the left to the rows r0.. of columns c0..c1 of a, v read
 * at v[(i - r0) * vst] for rows i = r0..m-1, v[0] taken as 1. */
static void apply_left(int64_t m, int64_t r0, int64_t c0, int64_t c1, double tau, const double *v, int64_t vst,
                       double *a, int64_t ld) {
    if (tau == 0) return;
    for (int64_t c = c0; c < c1; c++) {
        double w = a[r0 * ld + c];
        for (int64_t i = r0 + 1; i < m; i++) w += v[(i - r0) * vst] * a[i * ld + c];
        w *= tau;
        a[r0 * ld + c] -= w;
        for (int64_t i = r0 + 1; i < m; i++) a[i * ld + c] -= w * v[(i - r0) * vst];
    }
}

void tn_linalg_geqrf(int64_t m, int64_t n, double *a, int64_t ld, double *tau) {
    int64_t k = m < n ? m : n;
    for (int64_t j = 0; j < k; j++) {
        tau[j] = reflector(m - j, a + j * ld + j, ld);
        if (j + 1 < n && tau[j] != 0) {
            double d = a[j * ld + j];
            a[j * ld + j] = 1;
            apply_left(m, j, j + 1, n, tau[j], a + j * ld + j, ld, a, ld);
            a[j * ld + j] = d;
        }
    }
}

void tn_linalg_orgqr(int64_t m, int64_t n, int64_t k, double *a, int64_t ld, const double *tau) {
    for (int64_t j = k; j < n; j++) { /* columns beyond the reflectors start as unit vectors */
        for (int64_t i = 0; i < m; i++) a[i * ld + j] = 0;
        if (j < m) a[j * ld + j] = 1;
    }
    for (int64_t i = k - 1; i >= 0; i--) {
        if (i + 1 < n) {
            a[i * ld + i] = 1;
            apply_left(m, i, i + 1, n, tau[i], a + i * ld + i, ld, a, ld);
        }
        for (int64_t r = i + 1; r < m; r++) a[r * ld + i] *= -tau[i];
        a[i * ld + i] = 1 - tau[i];
        for (int64_t r = 0; r < i; r++) a[r * ld + i] = 0;
    }
}

void tn_linalg_ormqr(bool left, bool transpose, int64_t m, int64_t n, int64_t k, const double *v, int64_t ld_v,
                     const double *tau, double *c, int64_t ld, double *work) {
    int64_t nq = left ? m : n;
    /* Q = H(0)···H(k-1): Q·C and C·Qᵀ apply the last reflector first */
    bool backward = left != transpose;
    for (int64_t s = 0; s < k; s++) {
        int64_t i = backward ? k - 1 - s : s;
        double t = tau[i];
        if (t == 0) continue;
        /* the reflector's vector, v[i] = 1 */
        for (int64_t r = i; r < nq; r++) work[r] = r == i ? 1.0 : v[r * ld_v + i];
        if (left) { /* rows i..m-1 of every column */
            for (int64_t col = 0; col < n; col++) {
                double w = 0;
                for (int64_t r = i; r < m; r++) w += work[r] * c[r * ld + col];
                w *= t;
                for (int64_t r = i; r < m; r++) c[r * ld + col] -= w * work[r];
            }
        } else { /* columns i..n-1 of every row */
            for (int64_t row = 0; row < m; row++) {
                double *cr = c + row * ld, w = 0;
                for (int64_t q = i; q < n; q++) w += cr[q] * work[q];
                w *= t;
                for (int64_t q = i; q < n; q++) cr[q] -= w * work[q];
            }
        }
    }
}
