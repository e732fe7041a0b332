/* linalg_ldl.c — the symmetric indefinite factorization A = L D Lᵀ with Bunch-Kaufman
 * diagonal pivoting (LAPACK's sytf2 conventions, lower triangle) and the solve with it
 * (sytrs), float64, one matrix per call (contracts in linalg_decomp.h). */
#include <math.h>

#include "kernels/linalg_decomp.h"

/* index of the first entry of largest magnitude among x[0], x[st], ..., x[(n-1)st], as
 * BLAS idamax compares (a nan first entry wins) */
static int64_t iamax(int64_t n, const double *x, int64_t st) {
    int64_t best = 0;
    double bv = fabs(x[0]);
    for (int64_t i = 1; i < n; i++) {
        double v = fabs(x[i * st]);
        if (v > bv) bv = v, best = i;
    }
    return best;
}

static void swap(double *a, double *b) {
    double t = *a;
    *a = *b, *b = t;
}

/* x rounded to float32 when the factorization runs in float32's arithmetic (each operation
 * computed in float64 and rounded once is float32's correctly rounded operation) */
static inline double rnd(bool single, double x) { return single ? (double)(float)x : x; }

int64_t tn_linalg_ldl(int64_t n, double *a, int64_t ld, int32_t *piv, bool single) {
#define R(x) rnd(single, (x))
    const double alpha = R(R(1 + R(sqrt(17.0))) / 8);
#define A(i, j) a[(i) * ld + (j)]
    int64_t info = 0, k = 0;
    while (k < n) {
        int64_t kstep = 1, kp = k, imax = k;
        double absakk = fabs(A(k, k)), colmax = 0;
        if (k < n - 1) {
            imax = k + 1 + iamax(n - k - 1, &A(k + 1, k), ld);
            colmax = fabs(A(imax, k));
        }
        /* Fortran's MAX(absakk, colmax) as LAPACK's compiled code evaluates it (a nan
         * absakk gives colmax), so nan input pivots as upstream's does */
        if ((absakk > colmax ? absakk : colmax) == 0) {
            if (info == 0) info = k + 1; /* a zero column: D(k) = 0, nothing to eliminate */
            kp = k;
        } else {
            if (absakk >= R(alpha * colmax)) {
                kp = k;
            } else {
                /* the largest off-diagonal entry of row/column imax */
                int64_t jmax = k + iamax(imax - k, &A(imax, k), 1);
                double rowmax = fabs(A(imax, jmax));
                if (imax < n - 1) {
                    jmax = imax + 1 + iamax(n - imax - 1, &A(imax + 1, imax), ld);
                    rowmax = fmax(rowmax, fabs(A(jmax, imax)));
                }
                if (absakk >= R(R(alpha * colmax) * R(colmax / rowmax))) kp = k;
                else if (fabs(A(imax, imax)) >= R(alpha * rowmax)) kp = imax;
                else kp = imax, kstep = 2;
            }
            int64_t kk = k + kstep - 1;
            if (kp != kk) { /* symmetric interchange of kk and kp in the trailing lower triangle */
                for (int64_t i = kp + 1; i < n; i++) swap(&A(i, kk), &A(i, kp));
                for (int64_t j = kk + 1; j < kp; j++) swap(&A(j, kk), &A(kp, j));
                swap(&A(kk, kk), &A(kp, kp));
                if (kstep == 2) swap(&A(k + 1, k), &A(kp, k));
            }
            if (kstep == 1) { /* A(k+1:, k+1:) -= x xᵀ / d (syr), x /= d */
                double r1 = R(1 / A(k, k));
                for (int64_t j = k + 1; j < n; j++) {
                    double xj = A(j, k);
                    if (xj == 0) continue;
                    double temp = R(-r1 * xj);
                    for (int64_t i = j; i < n; i++) A(i, j) = R(A(i, j) + R(A(i, k) * temp));
                }
                for (int64_t i = k + 1; i < n; i++) A(i, k) = R(A(i, k) * r1);
            } else if (k < n - 2) { /* the 2×2 block D = [[A(k,k), .], [A(k+1,k), A(k+1,k+1)]] */
                double d21 = A(k + 1, k), d11 = R(A(k + 1, k + 1) / d21), d22 = R(A(k, k) / d21);
                double t = R(1 / R(R(d11 * d22) - 1));
                d21 = R(t / d21);
                for (int64_t j = k + 2; j < n; j++) {
                    double wk = R(d21 * R(R(d11 * A(j, k)) - A(j, k + 1)));
                    double wkp1 = R(d21 * R(R(d22 * A(j, k + 1)) - A(j, k)));
                    for (int64_t i = j; i < n; i++) A(i, j) = R(R(A(i, j) - R(A(i, k) * wk)) - R(A(i, k + 1) * wkp1));
                    A(j, k) = wk, A(j, k + 1) = wkp1;
                }
            }
        }
        if (kstep == 1) piv[k] = (int32_t)(kp + 1);
        else piv[k] = piv[k + 1] = (int32_t)(-(kp + 1));
        k += kstep;
    }
    for (int64_t i = 0; i < n; i++) /* the strict upper triangle is not part of the result */
        for (int64_t j = i + 1; j < n; j++) A(i, j) = 0;
    return info;
#undef A
#undef R
}

void tn_linalg_ldl_solve(int64_t n, const double *a, int64_t ld, const int32_t *piv, int64_t nrhs, double *b,
                         int64_t ldb) {
#define A(i, j) a[(i) * ld + (j)]
#define B(i, j) b[(i) * ldb + (j)]
    /* L D y = b */
    for (int64_t k = 0; k < n;) {
        if (piv[k] > 0) {
            int64_t kp = piv[k] - 1;
            if (kp != k)
                for (int64_t j = 0; j < nrhs; j++) swap(&B(k, j), &B(kp, j));
            for (int64_t i = k + 1; i < n; i++)
                for (int64_t j = 0; j < nrhs; j++) B(i, j) -= A(i, k) * B(k, j);
            for (int64_t j = 0; j < nrhs; j++) B(k, j) /= A(k, k);
            k += 1;
        } else {
            int64_t kp = -piv[k] - 1;
            if (kp != k + 1)
                for (int64_t j = 0; j < nrhs; j++) swap(&B(k + 1, j), &B(kp, j));
            for (int64_t i = k + 2; i < n; i++)
                for (int64_t j = 0; j < nrhs; j++) B(i, j) -= A(i, k) * B(k, j) + A(i, k + 1) * B(k + 1, j);
            double akm1k = A(k + 1, k), akm1 = A(k, k) / akm1k, ak = A(k + 1, k + 1) / akm1k;
            double denom = akm1 * ak - 1;
            for (int64_t j = 0; j < nrhs; j++) {
                double bkm1 = B(k, j) / akm1k, bk = B(k + 1, j) / akm1k;
                B(k, j) = (ak * bkm1 - bk) / denom;
                B(k + 1, j) = (akm1 * bk - bkm1) / denom;
            }
            k += 2;
        }
    }
    /* Lᵀ x = y, undoing the interchanges */
    for (int64_t k = n - 1; k >= 0;) {
        if (piv[k] > 0) {
            for (int64_t i = k + 1; i < n; i++)
                for (int64_t j = 0; j < nrhs; j++) B(k, j) -= A(i, k) * B(i, j);
            int64_t kp = piv[k] - 1;
            if (kp != k)
                for (int64_t j = 0; j < nrhs; j++) swap(&B(k, j), &B(kp, j));
            k -= 1;
        } else {
            for (int64_t i = k + 1; i < n; i++)
                for (int64_t j = 0; j < nrhs; j++) {
                    B(k, j) -= A(i, k) * B(i, j);
                    B(k - 1, j) -= A(i, k - 1) * B(i, j);
                }
            int64_t kp = -piv[k] - 1;
            if (kp != k)
                for (int64_t j = 0; j < nrhs; j++) swap(&B(k, j), &B(kp, j));
            k -= 2;
        }
    }
#undef A
#undef B
}
