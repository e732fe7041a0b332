/* linalg_eig.c — the symmetric eigenproblem (cyclic Jacobi) and the SVD (one-sided Jacobi)
 * in float64, one matrix per call (contracts in linalg_decomp.h). Jacobi methods are chosen
 * for their accuracy on the small matrices these operators mostly see: every eigenvalue
 * and singular value to high relative accuracy, orthogonality to rounding. */
#include <math.h>
#include <string.h>

#include "kernels/linalg_decomp.h"

#define MAX_SWEEPS 100

/* Flips the sign of column j of the n×n matrix v (leading dimension ld) so that its entry
 * of largest magnitude (the first on ties) is positive. */
static void sign_column(int64_t rows, double *v, int64_t ld, int64_t j) {
    int64_t p = 0;
    for (int64_t i = 1; i < rows; i++)
        if (fabs(v[i * ld + j]) > fabs(v[p * ld + j])) p = i;
    if (v[p * ld + j] < 0)
        for (int64_t i = 0; i < rows; i++) v[i * ld + j] = -v[i * ld + j];
}

int tn_linalg_syev(int64_t n, double *a, int64_t ld, double *w, double *v) {
    if (v)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) v[i * n + j] = i == j;
    int status = 1;
    for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        double off = 0, diag = 0;
        for (int64_t i = 0; i < n; i++) {
            diag += a[i * ld + i] * a[i * ld + i];
            for (int64_t j = i + 1; j < n; j++) off += a[i * ld + j] * a[i * ld + j];
        }
        if (off == 0 || off <= 1e-34 * diag) { status = 0; break; }
        for (int64_t p = 0; p < n; p++)
            for (int64_t q = p + 1; q < n; q++) {
                double apq = a[p * ld + q];
                if (apq == 0) continue;
                double app = a[p * ld + p], aqq = a[q * ld + q];
                /* the rotation that zeroes a[p][q] (Rutishauser's formulas) */
                double theta = (aqq - app) / (2 * apq);
                double t = copysign(1.0, theta) / (fabs(theta) + sqrt(theta * theta + 1));
                if (isinf(theta)) t = 0.5 / theta;
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int64_t k = 0; k < n; k++) { /* columns p, q */
                    double akp = a[k * ld + p], akq = a[k * ld + q];
                    a[k * ld + p] = c * akp - s * akq;
                    a[k * ld + q] = s * akp + c * akq;
                }
                for (int64_t k = 0; k < n; k++) { /* rows p, q */
                    double apk = a[p * ld + k], aqk = a[q * ld + k];
                    a[p * ld + k] = c * apk - s * aqk;
                    a[q * ld + k] = s * apk + c * aqk;
                }
                a[p * ld + q] = a[q * ld + p] = 0;
                if (v)
                    for (int64_t k = 0; k < n; k++) {
                        double vkp = v[k * n + p], vkq = v[k * n + q];
                        v[k * n + p] = c * vkp - s * vkq;
                        v[k * n + q] = s * vkp + c * vkq;
                    }
            }
    }
    for (int64_t i = 0; i < n; i++) w[i] = a[i * ld + i];
    /* ascending order (selection sort: n is small and the columns move with it) */
    for (int64_t i = 0; i < n; i++) {
        int64_t b = i;
        for (int64_t j = i + 1; j < n; j++)
            if (w[j] < w[b]) b = j;
        if (b == i) continue;
        double t = w[i];
        w[i] = w[b], w[b] = t;
        if (v)
            for (int64_t k = 0; k < n; k++) {
                double x = v[k * n + i];
                v[k * n + i] = v[k * n + b], v[k * n + b] = x;
            }
    }
    if (v)
        for (int64_t j = 0; j < n; j++) sign_column(n, v, n, j);
    return status;
}

void tn_linalg_complete_basis(int64_t m, int64_t ncols, int64_t r, double *q, int64_t ld) {
    int64_t e = 0; /* next unit vector to try */
    for (int64_t j = r; j < ncols; j++) {
        for (; e < m; e++) {
            for (int64_t i = 0; i < m; i++) q[i * ld + j] = i == e;
            for (int pass = 0; pass < 2; pass++)
                for (int64_t c = 0; c < j; c++) {
                    double d = 0;
                    for (int64_t i = 0; i < m; i++) d += q[i * ld + c] * q[i * ld + j];
                    for (int64_t i = 0; i < m; i++) q[i * ld + j] -= d * q[i * ld + c];
                }
            double nrm = 0;
            for (int64_t i = 0; i < m; i++) nrm += q[i * ld + j] * q[i * ld + j];
            nrm = sqrt(nrm);
            if (nrm > 0.5) { /* a unit vector well outside the span so far */
                for (int64_t i = 0; i < m; i++) q[i * ld + j] /= nrm;
                e++;
                break;
            }
        }
    }
}

int tn_linalg_svd(int64_t m, int64_t n, double *a, int64_t ld, double *s, double *u, int64_t ucols, double *vt,
                  double *work) {
    for (int64_t i = 0; i < m; i++) /* inf or nan anywhere: everything nan, as LAPACK's gesdd gives */
        for (int64_t j = 0; j < n; j++)
            if (!isfinite(a[i * ld + j])) {
                int64_t k = m < n ? m : n;
                for (int64_t q = 0; q < k; q++) s[q] = NAN;
                if (u)
                    for (int64_t q = 0; q < m * ucols; q++) u[q] = NAN;
                if (vt)
                    for (int64_t q = 0; q < n * n; q++) vt[q] = NAN;
                return 0;
            }
    /* scaled to a largest magnitude of 1 (undone on s below), so that the column sums of
     * squares cannot overflow for entries near the float64 range */
    double amax = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) amax = fmax(amax, fabs(a[i * ld + j]));
    if (amax > 0)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) a[i * ld + j] /= amax;
    /* vt holds V (columns = right singular vectors) during the sweeps, transposed at the end */
    if (vt)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) vt[i * n + j] = i == j;
    int status = 1;
    for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        bool rotated = false;
        for (int64_t p = 0; p < n; p++)
            for (int64_t q = p + 1; q < n; q++) {
                double alpha = 0, beta = 0, gamma = 0;
                for (int64_t i = 0; i < m; i++) {
                    double x = a[i * ld + p], y = a[i * ld + q];
                    alpha += x * x, beta += y * y, gamma += x * y;
                }
                if (gamma == 0 || fabs(gamma) <= 1e-15 * sqrt(alpha * beta)) continue;
                rotated = true;
                double zeta = (beta - alpha) / (2 * gamma);
                double t = copysign(1.0, zeta) / (fabs(zeta) + sqrt(1 + zeta * zeta));
                double c = 1 / sqrt(1 + t * t), sn = c * t;
                for (int64_t i = 0; i < m; i++) {
                    double x = a[i * ld + p], y = a[i * ld + q];
                    a[i * ld + p] = c * x - sn * y;
                    a[i * ld + q] = sn * x + c * y;
                }
                if (vt)
                    for (int64_t i = 0; i < n; i++) {
                        double x = vt[i * n + p], y = vt[i * n + q];
                        vt[i * n + p] = c * x - sn * y;
                        vt[i * n + q] = sn * x + c * y;
                    }
            }
        if (!rotated) { status = 0; break; }
    }
    for (int64_t j = 0; j < n; j++) {
        double ss = 0;
        for (int64_t i = 0; i < m; i++) ss += a[i * ld + j] * a[i * ld + j];
        work[j] = sqrt(ss);
    }
    /* descending order, columns of a and V moving along */
    for (int64_t i = 0; i < n; i++) {
        int64_t b = i;
        for (int64_t j = i + 1; j < n; j++)
            if (work[j] > work[b]) b = j;
        if (b == i) continue;
        double t = work[i];
        work[i] = work[b], work[b] = t;
        for (int64_t k = 0; k < m; k++) {
            double x = a[k * ld + i];
            a[k * ld + i] = a[k * ld + b], a[k * ld + b] = x;
        }
        if (vt)
            for (int64_t k = 0; k < n; k++) {
                double x = vt[k * n + i];
                vt[k * n + i] = vt[k * n + b], vt[k * n + b] = x;
            }
    }
    for (int64_t j = 0; j < n; j++) s[j] = work[j] * (amax > 0 ? amax : 1);
    if (!u) return status;
    /* U's columns: a's columns over their norms; the ones of (numerically) zero singular
     * values, and the completion to ucols, from the orthogonal complement */
    double tiny = (n ? work[0] : 0) * 1e-15 * (double)(m > n ? m : n);
    int64_t r = 0;
    while (r < n && work[r] > tiny && work[r] > 0) r++;
    for (int64_t j = 0; j < r; j++)
        for (int64_t i = 0; i < m; i++) u[i * ucols + j] = a[i * ld + j] / work[j];
    tn_linalg_complete_basis(m, ucols, r, u, ucols);
    /* a consistent sign: each left singular vector's largest entry positive */
    for (int64_t j = 0; j < n && j < ucols; j++) {
        int64_t p = 0;
        for (int64_t i = 1; i < m; i++)
            if (fabs(u[i * ucols + j]) > fabs(u[p * ucols + j])) p = i;
        if (u[p * ucols + j] < 0) {
            for (int64_t i = 0; i < m; i++) u[i * ucols + j] = -u[i * ucols + j];
            if (vt)
                for (int64_t i = 0; i < n; i++) vt[i * n + j] = -vt[i * n + j];
        }
    }
    if (vt) /* V → Vᵀ */
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i + 1; j < n; j++) {
                double x = vt[i * n + j];
                vt[i * n + j] = vt[j * n + i], vt[j * n + i] = x;
            }
    return status;
}
