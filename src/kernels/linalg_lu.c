/* linalg_lu.c — LU with partial pivoting, row interchanges, triangular solves and the
 * Cholesky factorization, float64, one matrix per call (contracts in linalg_decomp.h). */
#include <math.h>

#include "kernels/linalg_decomp.h"

int64_t tn_linalg_lu(int64_t m, int64_t n, double *a, int64_t ld, int32_t *piv) {
    int64_t k = m < n ? m : n, info = 0;
    for (int64_t j = 0; j < k; j++) {
        /* the pivot: the first entry of largest magnitude on or below the diagonal (idamax) */
        int64_t p = j;
        double best = fabs(a[j * ld + j]);
        for (int64_t i = j + 1; i < m; i++) {
            double v = fabs(a[i * ld + j]);
            if (v > best || (best != best && v == v)) p = i, best = v;
        }
        piv[j] = (int32_t)(p + 1);
        if (a[p * ld + j] != 0) {
            if (p != j)
                for (int64_t c = 0; c < n; c++) {
                    double t = a[j * ld + c];
                    a[j * ld + c] = a[p * ld + c], a[p * ld + c] = t;
                }
            /* scaled by the reciprocal as getf2 does when the pivot is not tiny */
            double d = a[j * ld + j];
            if (fabs(d) >= 2.2250738585072014e-308) {
                double r = 1.0 / d;
                for (int64_t i = j + 1; i < m; i++) a[i * ld + j] *= r;
            } else {
                for (int64_t i = j + 1; i < m; i++) a[i * ld + j] /= d;
            }
        } else if (info == 0) {
            info = j + 1;
        }
        const double *rj = a + j * ld;
        for (int64_t i = j + 1; i < m; i++) {
            double l = a[i * ld + j];
            if (l == 0) continue;
            double *ri = a + i * ld;
            for (int64_t c = j + 1; c < n; c++) ri[c] -= l * rj[c];
        }
    }
    return info;
}

void tn_linalg_swap_rows(int64_t k, const int32_t *piv, bool inverse, int64_t nrhs, double *b, int64_t ld) {
    for (int64_t s = 0; s < k; s++) {
        int64_t i = inverse ? k - 1 - s : s, p = piv[i] - 1;
        if (p == i) continue;
        for (int64_t c = 0; c < nrhs; c++) {
            double t = b[i * ld + c];
            b[i * ld + c] = b[p * ld + c], b[p * ld + c] = t;
        }
    }
}

void tn_linalg_trsm(int64_t n, int64_t nrhs, const double *t, int64_t trs, int64_t tcs, bool upper, bool unit,
                    double *b, int64_t ld) {
    for (int64_t s = 0; s < n; s++) {
        int64_t i = upper ? n - 1 - s : s;
        double *bi = b + i * ld;
        /* subtract the already solved rows, then divide by the diagonal */
        if (upper) {
            for (int64_t j = i + 1; j < n; j++) {
                double tij = t[i * trs + j * tcs];
                if (tij == 0) continue;
                const double *bj = b + j * ld;
                for (int64_t c = 0; c < nrhs; c++) bi[c] -= tij * bj[c];
            }
        } else {
            for (int64_t j = 0; j < i; j++) {
                double tij = t[i * trs + j * tcs];
                if (tij == 0) continue;
                const double *bj = b + j * ld;
                for (int64_t c = 0; c < nrhs; c++) bi[c] -= tij * bj[c];
            }
        }
        if (!unit) {
            double d = t[i * trs + i * tcs];
            for (int64_t c = 0; c < nrhs; c++) bi[c] /= d;
        }
    }
}

void tn_linalg_lu_solve(int64_t n, const double *lu, int64_t ldlu, const int32_t *piv, bool transpose, int64_t nrhs,
                        double *b, int64_t ld) {
    if (!transpose) { /* P L U x = b: permute, then L (unit lower), then U */
        tn_linalg_swap_rows(n, piv, false, nrhs, b, ld);
        tn_linalg_trsm(n, nrhs, lu, ldlu, 1, false, true, b, ld);
        tn_linalg_trsm(n, nrhs, lu, ldlu, 1, true, false, b, ld);
    } else { /* Uᵀ Lᵀ Pᵀ x = b: Uᵀ is lower, Lᵀ unit upper, then undo the permutation */
        tn_linalg_trsm(n, nrhs, lu, 1, ldlu, false, false, b, ld);
        tn_linalg_trsm(n, nrhs, lu, 1, ldlu, true, true, b, ld);
        tn_linalg_swap_rows(n, piv, true, nrhs, b, ld);
    }
}

int64_t tn_linalg_cholesky(int64_t n, double *a, int64_t ld) {
    for (int64_t j = 0; j < n; j++) {
        double *rj = a + j * ld;
        double d = rj[j];
        for (int64_t c = 0; c < j; c++) d -= rj[c] * rj[c];
        if (!(d > 0)) { /* also catches nan, as potrf's disnan check */
            rj[j] = d;
            return j + 1;
        }
        d = sqrt(d);
        rj[j] = d;
        for (int64_t i = j + 1; i < n; i++) {
            double *ri = a + i * ld;
            double s = ri[j];
            for (int64_t c = 0; c < j; c++) s -= ri[c] * rj[c];
            ri[j] = s / d;
        }
        for (int64_t c = j + 1; c < n; c++) rj[c] = 0;
    }
    return 0;
}
