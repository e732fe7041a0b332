/* linalg_eig.c — the symmetric eigenproblem (cyclic Jacobi) and the SVD (one-sided Jacobi)
 * in float64, and the SVD in complex128 from the same body (linalg_svd.inc), one matrix per
 * call (contracts in linalg_decomp.h). Jacobi methods are chosen
 * for their accuracy on the small matrices these operators mostly see: every eigenvalue
 * and singular value to high relative accuracy, orthogonality to rounding. */
/* The bodies' loops at -O3, where GCC vectorises the row and column updates (at -O2 they
 * stayed scalar: linalg.inv / solve of 256 x 256 took 20x upstream's time, session 47). Each
 * element's arithmetic is unchanged (ISO C11 contracts nothing, and GCC reorders no
 * floating-point sum without -fassociative-math), so the same bits. */
#pragma GCC optimize("O3")
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/complex_math.h"
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

/* ---- the SVD and its basis completion, once per scalar type (linalg_svd.inc) ---- */
#define LA_COMPLEX 0
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_##x
#define MAGN(g) (g)
#define ROT_PHASE(g) 1.0
#define UNIT_PHASE(x) ((x) < 0 ? -1.0 : 1.0)
#include "kernels/linalg_svd.inc"
#undef LA
#undef MAGN
#undef ROT_PHASE
#undef UNIT_PHASE
#include "kernels/linalg_scalar_end.h"

#define LA_COMPLEX 1
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_z##x
#define MAGN(g) cabs(g)
#define ROT_PHASE(g) (conj(g) / cabs(g))
#define UNIT_PHASE(x) (cabs(x) > 0 ? conj(x) / cabs(x) : 1.0)
#include "kernels/linalg_svd.inc"
#include "kernels/linalg_scalar_end.h"
